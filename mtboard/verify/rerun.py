"""GDS verification (spec §9.4 "GDS verified", §9.2.3 / §1.3 reproducibility within ±2%; issue 6).

``mtboard verify CARD`` re-runs the card's method from its recorded configuration with the real runner
(:func:`mtboard.run.runner.run`) on the card's own corpus segment, compares every quality score with the stored one —
the re-run is compared with the card being verified, never with anything else — and writes a
:class:`mtboard.core.schema.VerificationRecord` next to the submission as ``<card stem>.verification.json``. With a secret
segment (a corpus file; ``mtboard verify`` takes its path from an environment variable; sovereign path, spec §8.2) the method is also run on that segment
and its scores are recorded beside the comparison (``secret_scores``), not compared with the card's development
scores: a different test set gives different scores, so ±2 % would test nothing there (issue 15, part 7).

Comparison: for each score in :data:`COMPARED` (quality scores; speed, latency and cost depend on hardware and
prices and are not compared), ``|rerun − stored| <= tolerance × |stored|`` (default tolerance 0.02 = ±2% relative,
spec §1.3); when ``stored`` is 0 the bound is ``tolerance × full scale`` (100 for chrF++/BLEU/TER, 1 for rates and
the composite). Missing on one side only fails.

Neural metrics (docs/neural_metrics.md): PR validation never re-runs them, so a card's COMET values are *claimed*
until here. When the card has ``neural_metrics``, the re-run's outputs are scored with the same metrics at the commits
and batch sizes the card records (device: the run-time configuration's ``neural_device``, ``MTBOARD_NEURAL_DEVICE``,
default cpu) in the COMET environment, and each aggregate is compared like a rate (``neural_metrics.<key>``, full
scale 1).

Verifiable methods: a backend registered in this harness (built-in or installed plugin) and, when the method used a
prompt, the same prompt file (its SHA-256 must equal ``method.prompt_template_sha256``) rendering the same system
prompt. Anything else raises :class:`NotVerifiable` saying why. Secrets (API keys) come only from the environment;
nothing secret is written: with a secret segment the re-run card (which holds the secret text) stays in a temporary
folder that is deleted, and the record carries only hashes and numbers.
"""

from __future__ import annotations

import getpass
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mtboard import __version__
from mtboard.core import canonical, safejson
from mtboard.run import runner
from mtboard.run.plan import IncompleteRunError, ProgressSink
from mtboard.run.settings import RunSettings
from mtboard.backends.base import Rerun, get_backend, load_backends, plugin_record
from mtboard.core.documents import atomic_write, load_card, load_corpus, write_card
from mtboard.core.errors import ConfigError, InputError, MtboardError
from mtboard.core.runtime import runtime
from mtboard.inputs.prompts import load_prompt
from mtboard.inputs.runspec import RunSpec, facts_from_card
from mtboard.core.schema import Corpus, MetricDelta, RunCard, Segment, VerificationRecord, VerificationTier
from mtboard.validate import VERIFICATION_SUFFIX, make_context
from mtboard.verify.record import COMPARED, within_tolerance

DEFAULT_TOLERANCE = 0.02
"""Spec §1.3: ±2%."""

WEIGHTS_FIELDS = ("model_slug", "method.model_file_sha256", "method.model_revision")
"""Card fields that identify the weights (issue 22): what the card's server (or the gguf backend) reported about the
model it ran. A re-run must report the same value for every one the card records — a re-run whose server reports
other weights, or nothing, is not a verification of the card."""


class NotVerifiable(MtboardError):
    """The card's method cannot be re-run by this harness (unregistered backend, unrecorded or changed prompt…)."""


@dataclass
class VerifyResult:
    record: VerificationRecord
    record_path: Path
    rerun_card_path: Path | None
    """Where the re-run card was kept (None for secret-segment re-runs: it holds secret text and is deleted)."""


def rescore_neural(card: RunCard, rerun: RunCard) -> RunCard:
    """``rerun`` with every neural metric of ``card`` scored on its outputs: the same model commit and batch size
    (:func:`mtboard.score.neural_card.score_card`), on the run-time configuration's ``neural_device``
    (``MTBOARD_NEURAL_DEVICE``, default ``cpu``; :mod:`mtboard.core.runtime`). Raises what that raises (ConfigError
    without a COMET environment)."""
    from mtboard.score.neural_card import score_card

    device = runtime().neural_device
    for key, rec in card.neural_metrics.items():
        rerun = score_card(rerun, [key], revisions={key: rec.commit}, batch_size=rec.batch_size, device=device)
    return rerun


def _score_value(card: RunCard, name: str) -> float | None:
    if name.startswith("neural_metrics."):
        rec = card.neural_metrics.get(name.split(".", 1)[1])
        return None if rec is None else rec.score
    s = card.scores
    if name == "error_rate":
        return s.errors / s.total if s.total else None
    v = getattr(s, name)
    return None if v is None else float(v)


def compare(stored: RunCard, rerun: RunCard, tolerance: float) -> list[MetricDelta]:
    """Per-score deltas between a submitted card and its re-run (see the module docstring for the rule)."""
    out: list[MetricDelta] = []
    neural_scales = {f"neural_metrics.{k}": 1.0 for k in stored.neural_metrics}
    for name, scale in {**COMPARED, **neural_scales}.items():
        a, b = _score_value(stored, name), _score_value(rerun, name)
        if a is None and b is None:
            continue
        if a is None or b is None:
            out.append(MetricDelta(metric=name, stored=a, rerun=b, delta=None, relative=None, within=False))
            continue
        delta = b - a
        rel = abs(delta) / abs(a) if a != 0 else None
        out.append(MetricDelta(metric=name, stored=a, rerun=b, delta=delta, relative=rel,
                               within=within_tolerance(a, b, tolerance, scale)))
    return out


def _field(card: RunCard, name: str) -> str | None:
    obj: object = card
    for part in name.split("."):
        obj = getattr(obj, part)
    return None if obj is None else str(obj)


def weights_mismatches(stored: RunCard, rerun: RunCard) -> list[str]:
    """One line per :data:`WEIGHTS_FIELDS` entry the stored card records and the re-run does not report equal
    (``"method.model_file_sha256: card a5fd3b62230a…, re-run not reported"``); [] when the weights agree."""
    out = []
    for name in WEIGHTS_FIELDS:
        a, b = _field(stored, name), _field(rerun, name)
        if a is not None and a != b:
            out.append(f"{name}: card {_short(a)}, re-run {_short(b) if b is not None else 'not reported'}")
    return out


def _short(value: str) -> str:
    return value[:12] + "…" if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else repr(value)


def check_verifiable(card: RunCard) -> None:
    """Raise :class:`NotVerifiable` unless this harness can re-run the card's method as recorded: its backend is
    registered here, and a prompted method's prompt file here has the recorded SHA-256 and renders the recorded
    system prompt."""
    registry = load_backends()
    cls = registry.get(card.method.backend)
    if cls is None:
        try:
            get_backend(card.method.backend)  # a registered plugin that failed to load says why
            why = ""
        except ConfigError as exc:
            why = f"; {exc.problem}" if "failed to load" in exc.problem else ""
        raise NotVerifiable(f"backend {card.method.backend!r} is not registered in this harness, so the method "
                            f"cannot be re-run (registered: {', '.join(sorted(registry))}){why}",
                            fix="submit the method as an installable backend plugin (spec §9.5)")
    if card.method.plugin is not None:  # issue 18: re-run exactly the recorded plugin release
        here = plugin_record(card.method.backend)
        if here != card.method.plugin:
            raise NotVerifiable(f"the installed plugin providing backend {card.method.backend!r} is not the release "
                                f"the card records ({card.method.plugin.distribution} {card.method.plugin.version}, "
                                f"files {card.method.plugin.files_sha256[:12]}…)",
                                fix=f"pip install {card.method.plugin.distribution}=={card.method.plugin.version}")
    spec = RunSpec.from_card(card)
    if cls.prompt_format == "raw":
        if spec.prompt_name is not None or spec.system_prompt:
            raise NotVerifiable(f"backend {cls.name!r} takes the raw source, but the card records a prompt")
        return
    if not spec.prompt_name or not spec.prompt_template_sha256:
        raise NotVerifiable("the card does not record its prompt (method.prompt_name / prompt_template_sha256)",
                            fix="re-run with a prompt file under prompts/ so the card records it")
    try:
        prompt = load_prompt(spec.prompt_name, named=True, field="method.prompt_name")
    except MtboardError as exc:
        raise NotVerifiable(f"recorded prompt {spec.prompt_name!r} is not available here: {exc.problem}",
                            fix=exc.fix) from None
    if prompt.template_sha256 != spec.prompt_template_sha256:
        why = canonical.line_end_mismatch(prompt.path.read_bytes(), spec.prompt_template_sha256, str(prompt.path))
        if why:
            raise NotVerifiable(f"prompt {spec.prompt_name!r}: {why}", fix=canonical.CHECKOUT_FIX)
        raise NotVerifiable(f"prompt {spec.prompt_name!r} here differs from the recorded one (SHA-256 "
                            f"{prompt.template_sha256[:12]}… vs {spec.prompt_template_sha256[:12]}…)",
                            fix="verify with the harness commit whose prompts/ holds the recorded file")
    if spec.coaching_text is not None:  # coaching data travels in the card (method_config.coachingPrompt)
        prompt = prompt.with_coaching(spec.coaching_text)
    system = prompt.system_prompt(spec.dataset.source_language, spec.dataset.target_language)
    if canonical.sha256_hex(system) != spec.system_prompt_sha256:
        raise NotVerifiable("the recorded prompt renders a different system prompt than the card used")


def secrets_held(secret_segment_file: str | os.PathLike[str] | None = None) -> list[str]:
    """Why this verification runs in a job that holds secrets (issue 34 item 5), as names: ``MTBOARD_SECRETS_JOB``
    / ``MTBOARD_VERIFY_ENVIRONMENT`` (the run-time configuration's ``holds_secrets``), every secret variable set
    (``visible_secrets``: ``OPENAI_API_KEY``, ``HF_TOKEN``, the hypothesis salt …) and ``--secret-segment-env`` when
    a secret segment is given. Empty: a job without secrets. Fails closed: any one reason is enough."""
    rt = runtime()
    why = ["declared: MTBOARD_SECRETS_JOB or MTBOARD_VERIFY_ENVIRONMENT"] if rt.holds_secrets else []
    why += list(rt.visible_secrets)
    if secret_segment_file is not None:
        why.append("--secret-segment-env")
    return why


def check_neural_revisions(card: RunCard, path: Path, held: list[str]) -> None:
    """Refuse, before anything is downloaded or re-run, a card whose neural metrics would load a model revision
    outside the project's allow-list (:data:`mtboard.score.metrics.neural.ALLOWED_REVISIONS`) when the job holds
    secrets (``held``: :func:`secrets_held`); nothing to check without secrets or without neural metrics. Each
    metric is re-scored with its harness repository (:data:`mtboard.score.metrics.neural.MODELS`) at the card's
    ``commit``; an unknown metric key counts as unlisted.

    Raises: NotVerifiable, one line naming the card, the field (``$.neural_metrics.<key>.commit``), the revision and
    the fix (the job without secrets, or a reviewed addition to the allow-list)."""
    from mtboard.score.metrics import neural

    if not held:
        return
    for key, rec in card.neural_metrics.items():
        model = neural.MODELS.get(key)
        repo = model.repo_id if model is not None else rec.model
        if model is not None and neural.is_allowed(repo, rec.commit):
            continue
        raise NotVerifiable(f"revision {rec.commit} of {repo} ({key}) is not in the project's allow-list of "
                            f"neural-metric revisions, and this job holds secrets ({', '.join(held)}): refused "
                            "before anything was downloaded or re-run", where=str(path),
                            field=f"$.neural_metrics.{key}.commit",
                            fix="verify the card in a job without secrets (verify.yml's gate sends it to "
                                "verify-plugin-without-secrets), or add the revision to "
                                "mtboard.score.metrics.neural.ALLOWED_REVISIONS after reviewing its checkpoint")


def _find_corpus(card: RunCard, root: Path, corpora_dir: Path | None) -> Path:
    ctx = make_context(root, corpora_dir)
    for k in ctx.corpora():
        d = k.corpus.dataset
        if (d.id, d.version, k.sha256) == (card.dataset.id, card.dataset.version, card.dataset.sha256):
            return k.path
    raise NotVerifiable(f"no corpus file in {ctx.corpora_dir} matches dataset {card.dataset.id} "
                        f"{card.dataset.version} (sha256 {card.dataset.sha256[:12]}…)",
                        fix="pass --corpora with the published corpus the card was run on")


def _secret_segment(corpus: Corpus) -> Segment:
    segs = [e.segment for e in corpus.entries]
    for s in (Segment.gold_standard, Segment.held_out):
        if s in segs:
            return s
    return segs[0]


def _who() -> str:
    """The record's ``verified_by``: the run-time configuration's ``verified_by`` (``MTBOARD_VERIFIED_BY``), else
    ``$GITHUB_ACTOR``, else the login name."""
    for name in (runtime().verified_by, os.environ.get("GITHUB_ACTOR")):
        if name:
            return name[:200]
    try:
        return getpass.getuser()[:200] or "unknown"
    except Exception:  # noqa: BLE001 - no user database in some containers
        return "unknown"


def _where() -> str | None:
    """The record's ``environment``: in the verify workflow, its protected environment and container image (the
    run-time configuration's ``verify_environment`` and ``verify_container``: ``MTBOARD_VERIFY_ENVIRONMENT`` and
    ``MTBOARD_VERIFY_CONTAINER``, set by verify.yml) and the runner kind; None elsewhere."""
    if not os.environ.get("GITHUB_RUN_ID"):
        return None
    rt = runtime()
    parts = [f"environment {rt.verify_environment or '(none)'}"]
    if os.environ.get("RUNNER_ENVIRONMENT"):
        parts.append(f"runner {os.environ['RUNNER_ENVIRONMENT']}")
    if rt.verify_container:
        parts.append(f"container {rt.verify_container}")
    return ("github-actions " + ", ".join(parts))[:300]


def _actions_run() -> dict[str, object]:
    """Where the record was made when ``$GITHUB_RUN_ID`` is set (GitHub Actions' default variables): repository,
    run id and attempt, workflow ref and commit — the claims the attestation's certificate carries and
    :mod:`mtboard.verify.record` compares. Empty outside Actions (a hand-made record stays unattested)."""
    env = os.environ
    if not env.get("GITHUB_RUN_ID"):
        return {}
    sha = env.get("GITHUB_SHA", "")
    attempt = env.get("GITHUB_RUN_ATTEMPT", "1")
    return {"repository": env.get("GITHUB_REPOSITORY") or None, "run_id": env["GITHUB_RUN_ID"],
            "run_attempt": int(attempt) if attempt.isdigit() else None,
            "workflow_ref": env.get("GITHUB_WORKFLOW_REF") or None,
            "workflow_commit": sha if len(sha) == 40 else None}


def verify_card(card_path: str | os.PathLike[str], *, root: str | os.PathLike[str] = ".",
                corpora_dir: str | os.PathLike[str] | None = None, tolerance: float = DEFAULT_TOLERANCE,
                secret_segment_file: str | os.PathLike[str] | None = None,
                out_dir: str | os.PathLike[str] | None = None,
                commit: str | None = None, workdir: str | os.PathLike[str] | None = None,
                model_path: str | os.PathLike[str] | None = None, base_url: str | None = None,
                progress: ProgressSink | None = None) -> VerifyResult:
    """Re-run a card's method and write a verification record.

    Args:
        card_path: the submitted card (read safely; its seal must hold).
        root: repository root (the record names the card relative to it).
        corpora_dir: published corpora (default ``<root>/corpora``).
        tolerance: relative tolerance per score, in (0, 1].
        secret_segment_file: a secret-segment corpus file to re-run on as well (its scores reported, not compared;
            ``mtboard verify --secret-segment-env NAME`` takes its path from ``$NAME``).
        out_dir: folder for the record and the re-run card (default: the record next to the card, the re-run card
            in the work folder).
        commit: git commit (40 hex) the card was read at, recorded as is.
        workdir: work folder for the re-run (default: a new temporary folder).
        model_path: a local copy of a gguf card's model file (cards name a local file only by name and hash).
        base_url: endpoint for an OpenAI-compatible re-run (default ``$OPENAI_BASE_URL``), e.g. a server the
            maintainer started with the weights the card names.
        progress: where the re-run reports its progress (:class:`mtboard.ProgressSink`).

    The re-run must also serve the same weights (:data:`WEIGHTS_FIELDS`): a server reporting other weights than the
    card records, or none, fails the verification whatever the scores.

    Phases: check the arguments, the card and the secret segment; re-run the card's segment and the secret one
    (:class:`_Reruns`); compare (:func:`_judge_rerun`); write the record and keep the re-run card.

    In a job that holds secrets (:func:`secrets_held`) a card whose neural metrics claim a revision outside the
    allow-list is refused before anything is downloaded or re-run (:func:`check_neural_revisions`).

    Returns: :class:`VerifyResult`; ``record.passed`` tells the outcome (the record is written either way).
    Raises: InputError (unreadable card, broken seal, bad arguments), NotVerifiable (see module docstring; also an
        unlisted neural revision in a job that holds secrets),
        ConfigError/BackendError from the runner when the backend cannot start here.
    """
    _check_arguments(tolerance, commit)
    path = Path(card_path)
    card = load_sealed_card(path)
    check_verifiable(card)
    check_neural_revisions(card, path, secrets_held(secret_segment_file))
    started_at = _now()
    secret_path, secret_segment, secret_sha = _secret_corpus(card, secret_segment_file)
    corpus_path = _find_corpus(card, Path(root), Path(corpora_dir) if corpora_dir else None)
    reruns = _Reruns.plan(card, workdir=workdir, secret=secret_path is not None, model_path=model_path,
                         base_url=base_url, progress=progress)
    rerun, reason = reruns.own_segment(corpus_path)
    secret_scores: dict[str, float | None] = {}
    if secret_path is not None and secret_segment is not None:
        secret_scores, reason = reruns.secret_segment(secret_path, secret_segment, reason)
    if rerun is not None:
        deltas, passed, reason = _judge_rerun(card, rerun, tolerance, reason)
    else:
        deltas, passed = [], False
    record = VerificationRecord(
        run_card_hash=card.run_card_hash, card_path=_relpath(path, Path(root)), card_commit=commit,
        card_fingerprint=card.fingerprint.hash, rerun_run_card_hash=rerun.run_card_hash if rerun else "0" * 64,
        rerun_fingerprint=rerun.fingerprint.hash if rerun else "0" * 64, rerun_harness_version=__version__,
        method_spec=card.method.spec, segment=card.dataset.segment, secret_segment_sha256=secret_sha,
        secret_segment=secret_segment, secret_scores=secret_scores, verified_by=_who(), started_at=started_at,
        verified_at=_now(), environment=_where(), **_actions_run(), tolerance=tolerance,
        deltas=deltas, passed=passed,
        tier=VerificationTier.gds_verified if passed else VerificationTier.self_benchmarked, reason=reason)
    name = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    dest_dir = Path(out_dir) if out_dir is not None else path.parent
    record_path = dest_dir / f"{name}{VERIFICATION_SUFFIX}"
    atomic_write(record_path, canonical.canonical_bytes(record.model_dump(mode="json")) + b"\n")
    kept = reruns.keep(rerun is not None, out_dir, name)
    return VerifyResult(record=record, record_path=record_path, rerun_card_path=kept)


def _check_arguments(tolerance: float, commit: str | None) -> None:
    """Raises: ConfigError for a tolerance outside (0, 1] or a commit that is not 40 lowercase hex digits."""
    if not 0 < tolerance <= 1:
        raise ConfigError("tolerance must be in (0, 1], e.g. 0.02", field="--tolerance")
    if commit is not None and not (len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)):
        raise ConfigError("commit must be 40 lowercase hex digits", field="--commit")


def _secret_corpus(card: RunCard, secret_segment_file: str | os.PathLike[str] | None
                   ) -> tuple[Path | None, Segment | None, str | None]:
    """The secret segment in ``secret_segment_file`` (the CLI resolves ``--secret-segment-env NAME`` to it):
    ``(corpus file, segment, SHA-256 of the file)``, or three Nones without one.

    Raises: ConfigError when the corpus's language pair differs from the card's; InputError for a corpus that does
    not load."""
    if secret_segment_file is None:
        return None, None, None
    secret_path = Path(secret_segment_file)
    secret_corpus, secret_sha = load_corpus(secret_path)
    secret_segment = _secret_segment(secret_corpus)
    if secret_corpus.dataset.target_language != card.dataset.target_language or \
            secret_corpus.dataset.source_language != card.dataset.source_language:
        raise ConfigError("the secret segment's language pair differs from the card's",
                          field="--secret-segment-env")
    return secret_path, secret_segment, secret_sha


@dataclass
class _Reruns:
    """The re-runs of one verification (internal): the card, its run spec, how its backend re-runs it, and the
    folders — ``work`` for the re-run of the card's own segment (the caller's ``workdir``, else ``temp/work``) and
    ``temp``, a temporary folder (made without a ``workdir`` or with a secret segment, whose run lives in
    ``temp/secret``; None once removed)."""

    card: RunCard
    spec: RunSpec
    how: Rerun
    """What the backend's ``rerun`` hook returned (:meth:`mtboard.backends.base.Backend.rerun`)."""
    base_url: str | None
    progress: ProgressSink | None
    own_workdir: bool
    """The caller gave the work folder (``temp`` then serves the secret segment only)."""
    temp: Path | None
    work: Path

    @classmethod
    def plan(cls, card: RunCard, *, workdir: str | os.PathLike[str] | None, secret: bool,
             model_path: str | os.PathLike[str] | None, base_url: str | None,
             progress: ProgressSink | None) -> "_Reruns":
        """Ask the card's backend how to re-run it (a gguf card needs ``model_path``) and make the folders.
        Raises: what the backend's ``rerun`` hook raises (NotVerifiable, ConfigError)."""
        spec = RunSpec.from_card(card)
        how = get_backend(spec.method.backend).rerun(spec, facts_from_card(card),
                                                     model_path=Path(model_path) if model_path else None)
        temp = Path(tempfile.mkdtemp(prefix="mtboard-verify-")) if workdir is None or secret else None
        work = Path(workdir) if workdir is not None else temp / "work"
        return cls(card=card, spec=spec, how=how, base_url=base_url, progress=progress,
                   own_workdir=workdir is not None, temp=temp, work=work)

    def settings(self, corpus: Path, seg: Segment, limit: int | None, wd: Path) -> RunSettings:
        """:func:`rerun_settings` for ``seg`` of ``corpus`` in ``wd``."""
        return rerun_settings(self.card, self.spec, self.how, corpus, seg, limit, wd, self.base_url)

    def own_segment(self, corpus_path: Path) -> tuple[RunCard | None, str | None]:
        """Re-run the card's segment of ``corpus_path`` (with the card's ``limit``) in ``work``; a card with neural
        metrics gets them re-scored (:func:`rescore_neural`) into ``work/rerun-card.json``. Returns ``(re-run card,
        None)``, or ``(None, reason)`` when the re-run was incomplete."""
        reason: str | None = None
        rerun: RunCard | None = None
        try:
            rerun = runner.run(self.settings(corpus_path, self.card.dataset.segment, self.spec.dataset.limit,
                                             self.work), self.progress).card
            if rerun is not None and self.card.neural_metrics:
                rerun = rescore_neural(self.card, rerun)
                # the kept evidence is the card with its neural metrics
                write_card(rerun, self.work / "rerun-card.json")
        except IncompleteRunError as exc:
            reason = f"re-run incomplete: {exc.problem}"
        return rerun, reason

    def secret_segment(self, secret_path: Path, secret_segment: Segment, reason: str | None
                       ) -> tuple[dict[str, float | None], str | None]:
        """Run the method on the secret segment in ``temp/secret`` and return its :data:`COMPARED` scores ({} when
        incomplete) and ``reason`` with the incompleteness noted. The run's folder is removed (with ``temp`` when
        the caller gave the work folder)."""
        assert self.temp is not None
        secret_scores: dict[str, float | None] = {}
        # The secret re-run's card and translations hold secret text: only its scores leave the temporary folder.
        try:
            secret_card = runner.run(self.settings(secret_path, secret_segment, None, self.temp / "secret"),
                                     self.progress).card
            if secret_card is not None:
                secret_scores = {name: _score_value(secret_card, name) for name in COMPARED}
        except IncompleteRunError as exc:
            note = f"secret-segment run incomplete: {exc.problem}"
            reason = f"{reason}; {note}" if reason else note
        finally:
            shutil.rmtree(self.temp / "secret", ignore_errors=True)
            if self.own_workdir:
                shutil.rmtree(self.temp, ignore_errors=True)
                self.temp = None
        return secret_scores, reason

    def keep(self, rerun: bool, out_dir: str | os.PathLike[str] | None, name: str) -> Path | None:
        """Where the re-run card stays: copied to ``out_dir/<name>.rerun.json`` when ``out_dir`` is given, else
        ``work/rerun-card.json``; None without a re-run card. The temporary folder is removed unless the card stays
        in it."""
        kept: Path | None = None
        if rerun and out_dir is not None:
            kept = Path(out_dir) / f"{name}.rerun.json"
            shutil.copyfile(self.work / "rerun-card.json", kept)
            if self.temp is not None:
                shutil.rmtree(self.temp, ignore_errors=True)
        elif rerun:
            kept = self.work / "rerun-card.json"
        elif self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)
        return kept


def _judge_rerun(card: RunCard, rerun: RunCard, tolerance: float, reason: str | None
                 ) -> tuple[list[MetricDelta], bool, str | None]:
    """Compare the re-run with the card: ``(deltas, passed, reason)``. Passed when every score is within tolerance
    (:func:`compare`) and the weights agree (:func:`weights_mismatches`); the reason gains, in front, the scores out
    of tolerance and the other weights, and at the end the fingerprint components that differ (harness version,
    entry ids and dataset hash aside)."""
    deltas = compare(card, rerun, tolerance)
    bad = [d for d in deltas if not d.within]
    other_weights = weights_mismatches(card, rerun)
    passed = not bad and not other_weights
    if bad:
        bad_text = "out of tolerance: " + "; ".join(
            f"{d.metric} stored {_fmt(d.stored)} re-run {_fmt(d.rerun)} delta {_fmt(d.delta, True)}"
            + (f" ({d.relative * 100:.2f}%)" if d.relative is not None else "") for d in bad)
        reason = f"{bad_text}; {reason}" if reason else bad_text
    if other_weights:
        note = ("the re-run's server serves other weights than the card records (" + "; ".join(other_weights)
                + ")")
        reason = f"{note}; {reason}" if reason else note
    diffs = [k for k, v in card.fingerprint.components.items()
             if k not in ("harness_version", "entry_ids_sha256", "dataset_sha256")
             and rerun.fingerprint.components.get(k) != v]
    if diffs:
        note = "configuration differs from the card in: " + ", ".join(diffs)
        reason = f"{reason}; {note}" if reason else note
    return deltas, passed, reason


def rerun_settings(card: RunCard, spec: RunSpec, rerun_how, corpus: Path, seg: Segment, limit: int | None,
                   wd: Path, base_url: str | None) -> RunSettings:
    """The runner settings that re-run ``card``'s method (``spec`` = ``RunSpec.from_card(card)``, ``rerun_how`` from
    the backend's ``rerun`` hook) on ``seg`` of ``corpus``, writing into ``wd``. A coached card's coaching text is
    written back to a file, byte for byte (its SHA-256 is the card's ``coaching_data_sha256``); a pipeline card's
    tools and FST retry limit (``tools_enabled``, ``method.fst_retries``) are given again."""
    m = card.method
    coaching = None
    if spec.coaching_text is not None:
        coaching = Path(tempfile.mkdtemp(prefix="mtboard-verify-coaching-")) / (spec.coaching_file or "coaching.txt")
        coaching.write_bytes(spec.coaching_text.encode("utf-8"))
    return RunSettings(
        corpus_path=corpus, method=rerun_how.method, backend_extra=dict(rerun_how.backend_options),
        # a card whose prompt was chosen from the served model chooses again (the choice is part of what is verified)
        prompt=None if spec.prompt_choice is not None else spec.prompt_name, condition=spec.condition,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens or 512, concurrency=spec.concurrency, runs=spec.runs, segment=seg.value,
        limit=limit, work_dir=wd, out=wd / "rerun-card.json", price_in=m.price_in_per_mtok,
        price_out=m.price_out_per_mtok, stream=spec.stream, max_retries=spec.max_retries, base_url=base_url,
        early_gate=False, coaching=coaching,  # a re-run reproduces the card, also one published past the early gate
        tools=list(spec.tools), fst_retries=spec.fst_retries,  # a pipeline card re-runs with the same tools
        format_attempts=spec.format_attempts or 1,  # and a card asking again with the same limit
        arm=spec.arm, history=spec.history)  # and the same corpus view (issue 40)


def load_sealed_card(path: Path) -> RunCard:
    """The card at ``path``, whose seal must hold. Raises InputError otherwise."""
    card = load_card(path)
    data = safejson.loads(safejson.read_bytes(path), where=str(path))
    if not card.run_card_hash or canonical.run_card_hash(data) != card.run_card_hash:
        raise InputError("the card's run_card_hash does not match its content (changed after sealing); nothing to "
                         "verify", where=str(path), fix="run `mtboard validate` on it")
    return card


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fmt(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "null"
    return f"{x:+.6g}" if signed else f"{x:.6g}"


def _relpath(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        return path.name


__all__ = ["check_neural_revisions", "secrets_held", "rescore_neural", "COMPARED", "WEIGHTS_FIELDS",
           "weights_mismatches", "DEFAULT_TOLERANCE", "NotVerifiable", "VerifyResult", "check_verifiable", "compare", "load_sealed_card", "rerun_settings",
           "verify_card"]
