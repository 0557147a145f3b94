"""Neural MT metrics — COMET-22, CometKiwi, xCOMET — scored per segment by ``unbabel-comet`` in its own environment
(docs/neural_metrics.md; spec §3.7 ``plugin_metrics``: "complete per-entry plugin output"; spec §4.2 and
docs/SCORING_SPEC.md: COMET is excluded from the composite).

Why a separate environment: every ``unbabel-comet`` release (2.2.7 the latest) requires ``huggingface-hub<1.0``,
``numpy<2.0`` and ``transformers<5`` (itself ``huggingface-hub<1.0``), while mtboard requires
``huggingface_hub>=1.0`` — pip answers ``ResolutionImpossible`` for ``mtboard[comet]``. So the scoring runs in
``.venv-comet`` (``scripts/setup.sh --comet``; hashed lock ``requirements/comet.txt``), as the script
:mod:`mtboard.score.metrics.comet_worker` that mtboard starts with that environment's Python (:func:`comet_python`) and talks
to in JSON files. Nothing of torch/transformers is imported into mtboard's own process.

What a score is: the model ``repo_id`` at a pinned ``revision`` (a 40-hex commit; fetched with huggingface_hub's
``snapshot_download``, so ``HF_HUB_CACHE`` / ``HF_HUB_OFFLINE`` apply), ``comet.load_from_checkpoint`` on its
``checkpoints/model.ckpt``, ``model.predict`` with the recorded batch size on the recorded device. Each segment's
score is rounded to :data:`NEURAL_DECIMALS` decimals; the card's aggregate is the mean of those rounded values over
every entry (entries without usable output are not sent to the model and count :data:`NO_OUTPUT_SCORE`), computed
in integer units of the last decimal so the validator re-derives it exactly (:func:`aggregate`). The identity of a
value — model, revision, encoder, batch size, device, package versions — is the :func:`signature` string (in the
manner of sacrebleu's).

Where the worker runs (issue 34 item 5; docs/SECURITY.md, "A contributor-chosen COMET checkpoint"): a checkpoint is
a pickle, so loading one runs code its author chose. The worker therefore starts with an **empty environment** (no
API key, no hypothesis salt, no ``HF_TOKEN``: only ``PATH``, ``HOME``, ``LANG``, the Hugging Face cache variables
and :data:`WORKER_PASSED_ENV`) inside the **bubblewrap sandbox** model servers run in
(:mod:`mtboard.core.sandbox`: no network, a read-only view of the COMET environment, the worker script and the two
cache folders of the model and its encoder, a private ``/tmp``). It never downloads: mtboard's own process fetches
the model repository at its revision and the encoder's tokenizer and configuration files (no weights) into the
Hugging Face cache first (:func:`prepare_model`: the cache first, the Hub only when the files are missing and
``HF_HUB_OFFLINE`` is not set; ``HF_TOKEN`` stays in mtboard's process), and the worker reads them with
``HF_HUB_OFFLINE=1``. ``MTBOARD_COMET_SANDBOX=off`` (development only, refused in a job that holds secrets) runs it
unsandboxed, with the same empty environment.

Which revisions a job that holds secrets may load: only the ones in :data:`ALLOWED_REVISIONS` (the project's
reviewed allow-list, keyed by model repository). In such a job (:attr:`mtboard.core.runtime.Runtime.holds_secrets`:
``MTBOARD_SECRETS_JOB`` or ``MTBOARD_VERIFY_ENVIRONMENT`` set) :func:`score_segments` refuses any other revision before
anything is downloaded or started (:func:`check_allowed`); ``mtboard verify`` refuses a card claiming one before its
re-run starts (:func:`mtboard.verify.rerun.check_neural_revisions`), and the verify workflow sends such a card to its
job without secrets (:func:`mtboard.verify.plugins.gate`).

Scores are not recomputed by ``mtboard validate`` (gigabytes of weights, minutes of GPU): the validator checks their
shape, the signature and the aggregate arithmetic (:mod:`mtboard.validate.neural`) and the site shows them as
*claimed*; ``mtboard verify`` re-scores them when a card has them.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from mtboard.core import safejson, sandbox
from mtboard.core.errors import BackendError, ConfigError, InputError
from mtboard.core.runtime import runtime

NEURAL_DECIMALS = 4
"""Per-segment scores are rounded to this many decimals (the unit of :func:`aggregate`)."""
UNITS = 10 ** NEURAL_DECIMALS
NO_OUTPUT_SCORE = 0.0
"""Value of an entry without usable output (not sent to the model): the bottom of the 0–1 scale COMET-22, CometKiwi
and xCOMET are trained to (a raw COMET score can fall slightly outside it)."""
DEFAULT_PYTHON = Path(".venv-comet") / "bin" / "python"
"""The COMET environment's Python when none is given (what ``scripts/setup.sh --comet`` creates), looked for under
the current folder, then under the checkout mtboard is installed from."""
WORKER = Path(__file__).with_name("comet_worker.py")
"""The worker script run in the COMET environment."""
DEVICES = ("cpu", "cuda")
DEFAULT_BATCH_SIZE = 16
"""comet-score's default batch size."""


@dataclass(frozen=True)
class NeuralModel:
    """One neural metric: its card key, Hugging Face model and pinned revision.

    ``revision``: a commit id of the model repository. The defaults were read off public code that loads these models
    from huggingface_hub snapshot folders (``models--Unbabel--…/snapshots/<commit>/checkpoints/model.ckpt``); they
    could not be checked against the Hub from where they were written down (no Hub access): a real run prints the
    commit the revision resolved to, and ``--revision`` overrides it (docs/neural_metrics.md)."""

    key: str
    repo_id: str
    revision: str
    needs_reference: bool
    label: str
    licence: str


MODELS: dict[str, NeuralModel] = {
    "comet22": NeuralModel("comet22", "Unbabel/wmt22-comet-da", "2760a223ac957f30acfb18c8aa649b01cf1d75f2", True,
                           "COMET-22", "Apache-2.0"),
    "cometkiwi": NeuralModel("cometkiwi", "Unbabel/wmt22-cometkiwi-da", "b3a8aea5a5fc22db68a554b92b3d96eb6ea75cc9",
                             False, "CometKiwi-22 (reference-free)", "CC-BY-NC-SA-4.0 (gated: accept on the Hub)"),
    "xcomet": NeuralModel("xcomet", "Unbabel/XCOMET-XL", "6a123c5e8e6dccab25e5fcffa3c8b417abadb462", True,
                          "xCOMET-XL", "CC-BY-NC-SA-4.0 (gated: accept on the Hub)"),
}
"""The metrics ``--neural-metric`` accepts. MetricX (Google) has no package on PyPI (the ``metricx`` project there is
an unrelated benchmark-data library) and is left out (docs/neural_metrics.md)."""

ALLOWED_REVISIONS: dict[str, frozenset[str]] = {
    "Unbabel/wmt22-comet-da": frozenset({"2760a223ac957f30acfb18c8aa649b01cf1d75f2"}),
    "Unbabel/wmt22-cometkiwi-da": frozenset({"b3a8aea5a5fc22db68a554b92b3d96eb6ea75cc9"}),
    "Unbabel/XCOMET-XL": frozenset({"6a123c5e8e6dccab25e5fcffa3c8b417abadb462"}),
}
"""The project's allow-list of neural-metric model revisions (issue 34 item 5): model repository → the 40-hex commits
a job that holds secrets may load (:func:`check_allowed`). A constant in the code, not a file, so that it is part of
the harness the workflows install from the default branch (``pip install --no-index ./harness``) and changes only
through a reviewed pull request; nothing a card, a sweep file, a data checkout or a variable says can extend it
(docs/SECURITY.md, "A contributor-chosen COMET checkpoint"). Add a revision only after reviewing its
``checkpoints/model.ckpt`` (a pickle) and ``hparams.yaml``; every default of :data:`MODELS` is here (a test checks)."""
WORKER_PASSED_ENV = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "OMP_NUM_THREADS",
                     "MKL_NUM_THREADS")
"""Variables copied from mtboard's environment into the worker's (device selection and thread counts; nothing
else crosses, whatever else is set)."""
HUB_INSIDE = "/hf/hub"
"""Where the sandbox shows the Hugging Face cache folders of the model and its encoder (read-only)."""
WORKER_INSIDE = "/worker/comet_worker.py"
"""Where the sandbox shows :data:`WORKER` (read-only)."""
ENCODER_FILES = ("*.json", "*.model", "*.txt")
"""The files of an encoder repository fetched for the worker: its configuration and tokenizer, never its weights
(COMET builds the encoder from its configuration and loads every weight from the checkpoint)."""
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?")


def is_allowed(repo_id: str, revision: str) -> bool:
    """Whether ``repo_id@revision`` is in :data:`ALLOWED_REVISIONS` (exact strings; a branch or tag never is)."""
    return revision in ALLOWED_REVISIONS.get(repo_id, frozenset())


def check_allowed(repo_id: str, revision: str, *, where: str | None = None, field: str = "revision") -> None:
    """Raise unless ``repo_id@revision`` may be loaded in a job that holds secrets (:func:`is_allowed`).

    Raises: ConfigError, one line naming ``where`` (the card or the command), ``field``, the revision and the fix;
    nothing has been downloaded or started when it is raised."""
    if is_allowed(repo_id, revision):
        return
    listed = ", ".join(sorted(ALLOWED_REVISIONS.get(repo_id, ()))) or "none"
    raise ConfigError(f"revision {revision} of {repo_id} is not in the project's allow-list of neural-metric "
                      f"revisions (listed: {listed}); a job that holds secrets loads no other checkpoint, so nothing "
                      "was downloaded", where=where, field=field,
                      fix="re-score it in a job without secrets (verify.yml sends such a card to "
                          "verify-plugin-without-secrets), or add the revision to "
                          "mtboard.score.metrics.neural.ALLOWED_REVISIONS after reviewing its checkpoint")


def parse_revisions(specs: list[str] | None, option: str = "--neural-revision") -> dict[str, str]:
    """``KEY=COMMIT`` options → {key: commit}. Raises: ConfigError for a malformed one or an unknown key."""
    out: dict[str, str] = {}
    for spec in specs or []:
        key, sep, rev = spec.partition("=")
        key, rev = key.strip(), rev.strip()
        if not sep or key not in MODELS or not rev:
            raise ConfigError(f"bad revision {spec!r}", field=option,
                              fix=f"use KEY=COMMIT with KEY one of {', '.join(MODELS)}")
        out[key] = rev
    return out


def parse_metrics(specs: Sequence[str]) -> list[str]:
    """Metric keys from ``--neural-metric`` values (repeatable or comma-separated), in order, without repeats.

    Raises: ConfigError naming the unknown key and the known ones."""
    out: list[str] = []
    for spec in specs:
        for key in (k.strip() for k in spec.split(",")):
            if not key:
                continue
            if key not in MODELS:
                raise ConfigError(f"unknown neural metric {key!r}", field="--neural-metric",
                                  fix=f"use one of {', '.join(MODELS)}")
            if key not in out:
                out.append(key)
    return out


def units(value: float) -> int:
    """A rounded segment score as an integer number of 1/UNITS."""
    return round(value * UNITS)


def aggregate(values: Sequence[float]) -> float | None:
    """The card's aggregate of per-entry scores: the mean of the (already rounded) values, rounded to
    :data:`NEURAL_DECIMALS` decimals, computed exactly on integers with fractions (ties to even). None for no entries."""
    if not values:
        return None
    return round(Fraction(sum(units(v) for v in values), len(values))) / UNITS

def signature(key: str, *, repo_id: str, revision: str, encoder: str, batch_size: int, device: str,
              versions: dict[str, str]) -> str:
    """The identity of a neural score, sacrebleu-style: ``comet22|model:Unbabel/wmt22-comet-da|rev:<40 hex>|
    encoder:xlm-roberta-large|bs:16|device:cpu|comet:2.2.7|torch:…|transformers:…|hub:…|dp:4``."""
    v = versions
    return (f"{key}|model:{repo_id}|rev:{revision}|encoder:{encoder}|bs:{batch_size}|device:{device}"
            f"|comet:{v.get('unbabel-comet', '?')}|torch:{v.get('torch', '?')}"
            f"|transformers:{v.get('transformers', '?')}|hub:{v.get('huggingface-hub', '?')}|dp:{NEURAL_DECIMALS}")


@dataclass(frozen=True)
class NeuralRun:
    """One metric over a list of segments.

    ``scores``: per segment, rounded to :data:`NEURAL_DECIMALS` (:data:`NO_OUTPUT_SCORE` where the hypothesis was
    None); ``raw_scores``: the model's unrounded values (None where not sent); ``score``: :func:`aggregate`;
    ``system_score``: COMET's own mean over the segments it scored (unrounded, for cross-checks)."""

    key: str
    repo_id: str
    revision: str
    commit: str
    encoder: str
    batch_size: int
    device: str
    versions: dict[str, str]
    scores: list[float]
    raw_scores: list[float | None]
    score: float | None
    system_score: float | None
    sandbox: str | None = None
    """What the worker ran in (:func:`sandbox_record`); None when no segment was sent. Not part of the card."""

    @property
    def signature(self) -> str:
        return signature(self.key, repo_id=self.repo_id, revision=self.commit, encoder=self.encoder,
                         batch_size=self.batch_size, device=self.device, versions=self.versions)


def comet_python(explicit: str | os.PathLike[str] | None = None) -> str:
    """The COMET environment's Python: ``explicit``, else the run-time configuration's ``comet_python``
    (``MTBOARD_COMET_PYTHON`` of the running command, :mod:`mtboard.core.runtime`), else :data:`DEFAULT_PYTHON`.

    Raises: ConfigError when none exists (fix: ``scripts/setup.sh --comet``)."""
    given = explicit or runtime().comet_python
    if given:
        p = Path(given)
    else:  # the current folder, then the checkout of an editable install (mtboard/score/metrics/neural.py → repo root)
        p = next((c for c in (DEFAULT_PYTHON, Path(__file__).resolve().parents[3] / DEFAULT_PYTHON) if c.exists()),
                 DEFAULT_PYTHON)
    if not p.exists():
        raise ConfigError(f"no COMET environment at {p}",
                          fix="create it with scripts/setup.sh --comet, or set MTBOARD_COMET_PYTHON to the Python "
                              "of an environment with unbabel-comet (docs/neural_metrics.md)")
    return str(p)


def score_segments(key: str, sources: Sequence[str], hypotheses: Sequence[str | None],
                   references: Sequence[str] | None = None, *, revision: str | None = None,
                   repo_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "cpu",
                   python: str | os.PathLike[str] | None = None, timeout_s: float | None = None) -> NeuralRun:
    """Score segments with neural metric ``key`` (:data:`MODELS`) in the COMET environment.

    Args:
        key: ``comet22``, ``cometkiwi`` or ``xcomet``.
        sources, hypotheses, references: aligned lists; a None hypothesis (no usable output) is not sent and scores
            :data:`NO_OUTPUT_SCORE`; references are required unless the model is reference-free.
        revision: commit id of the model repository (default: the pinned one in :data:`MODELS`).
        repo_id: the model repository (default :data:`MODELS`' one; tests point it at a tiny local model).
        batch_size, device: passed to ``model.predict`` (``cpu`` or ``cuda``) and recorded.
        python: the COMET environment's Python (default :func:`comet_python`).
        timeout_s: wall-clock limit for the worker (None: none).

    Order (issue 34 item 5): the arguments are checked; in a job that holds secrets (the run-time configuration's
    ``holds_secrets``) a revision outside :data:`ALLOWED_REVISIONS`, or the sandbox turned off, is refused; only then
    is the COMET environment looked for, the sandbox checked, the model fetched into the cache (:func:`prepare_model`)
    and the worker started (:func:`run_worker`: empty environment, sandboxed, offline).

    Returns: :class:`NeuralRun`. Raises: ConfigError for an unknown key, a revision that is not a 40-hex commit, a
    missing reference list, a bad device or batch size, no COMET environment, or (in a job that holds secrets) an
    unlisted revision or the sandbox turned off; BackendError when the sandbox is unavailable, the model cannot be
    fetched or the worker fails (its last stderr lines in the message); InputError for a model whose
    ``hparams.yaml`` is unreadable or names an unusable encoder.
    """
    if key not in MODELS:
        raise ConfigError(f"unknown neural metric {key!r}", field="--neural-metric", fix=f"use one of {', '.join(MODELS)}")
    m = MODELS[key]
    if device not in DEVICES:
        raise ConfigError(f"unknown device {device!r}", field="--neural-device", fix="use cpu or cuda")
    if batch_size < 1:
        raise ConfigError(f"batch size {batch_size} is below 1", field="--neural-batch-size", fix="use 1 or more")
    if m.needs_reference and references is None:
        raise ConfigError(f"{key} needs references", field="references", fix="pass the corpus references")
    if len(hypotheses) != len(sources) or (references is not None and len(references) != len(sources)):
        raise ConfigError("sources, hypotheses and references differ in length", field="segments",
                          fix="pass aligned lists")
    rev = revision or m.revision
    if not re.fullmatch(r"[0-9a-f]{40}", rev):
        raise ConfigError(f"revision {rev!r} of {key} is not a commit", field="--neural-revision",
                          fix="pass the model repository's 40-hex commit id (a branch or tag can move)")
    repo = repo_id or m.repo_id
    rt = runtime()
    if rt.holds_secrets:
        check_allowed(repo, rev, where=f"neural metric {key}", field="revision")
    if rt.holds_secrets or rt.visible_secrets:
        if not rt.comet_sandbox:
            held = ", ".join(rt.visible_secrets) or "declared"
            raise ConfigError("the sandbox is turned off (MTBOARD_COMET_SANDBOX=off), and the COMET worker never runs "
                              f"outside it in a job that holds secrets ({held})", where=f"neural metric {key}",
                              fix="unset MTBOARD_COMET_SANDBOX (the sandbox is on by default)")
    sent = [i for i, h in enumerate(hypotheses) if h is not None]
    samples = []
    for i in sent:
        s = {"src": sources[i], "mt": hypotheses[i]}
        if m.needs_reference:
            s["ref"] = references[i]  # type: ignore[index]
        samples.append(s)
    raw: list[float | None] = [None] * len(sources)
    result: dict = {"versions": {}, "commit": rev, "pretrained_model": "?", "system_score": None}
    record = None
    if samples:
        exe = comet_python(python)
        record = sandbox_record()  # refuses before anything is fetched when the sandbox is unavailable
        prepared = prepare_model(repo, rev)
        result = run_worker(exe, {"repo_id": repo, "revision": rev, "samples": samples, "batch_size": batch_size,
                                  "device": device}, timeout_s, prepared=prepared)
        if len(result.get("scores", [])) != len(samples):
            raise BackendError(f"the COMET worker returned {len(result.get('scores', []))} scores for "
                               f"{len(samples)} segments", field=key, fix="report this as a bug")
        for i, v in zip(sent, result["scores"]):
            raw[i] = float(v)
    rounded = [round(v, NEURAL_DECIMALS) if v is not None else NO_OUTPUT_SCORE for v in raw]
    return NeuralRun(key=key, repo_id=repo, revision=rev, commit=str(result["commit"]),
                     encoder=str(result.get("pretrained_model")), batch_size=batch_size, device=device,
                     versions=dict(result.get("versions", {})), scores=rounded, raw_scores=raw,
                     score=aggregate(rounded), system_score=result.get("system_score"), sandbox=record)


# ---------------------------------------------------------------------------------------------------------------------
# The worker: its model fetched beforehand, started with an empty environment inside the sandbox (issue 34 item 5)


def sandbox_record() -> str:
    """What the worker runs in: :meth:`mtboard.core.sandbox.SandboxStatus.record` (``"bubblewrap 0.8.0: no network,
    empty environment, …"``), or :data:`UNSANDBOXED` when the run-time configuration turned the sandbox off.

    Raises: BackendError (where ``sandbox``, bwrap's reason, the fix) when the sandbox is on but unavailable."""
    if not runtime().comet_sandbox:
        return UNSANDBOXED
    st = sandbox.status()
    if not st.available:
        raise BackendError(f"the COMET worker runs only inside the sandbox, and it is not available: {st.reason}",
                           where="sandbox", fix=SANDBOX_FIX)
    return st.record()


UNSANDBOXED = "off: the COMET worker ran without the sandbox (development only; empty environment, not isolated)"
""":attr:`NeuralRun.sandbox` when ``MTBOARD_COMET_SANDBOX=off``."""
SANDBOX_FIX = ("install bubblewrap (apt-get install bubblewrap; in a container also allow namespaces: --cap-add "
               "SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined), or, for development "
               "only and outside a job that holds secrets, set MTBOARD_COMET_SANDBOX=off")


def hub_cache() -> Path:
    """The Hugging Face cache folder huggingface_hub reads and writes, by its own rules: ``$HF_HUB_CACHE``, else
    ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (read now, not at
    import, so a command's or a test's environment applies), as an absolute path."""
    env = os.environ
    if env.get("HF_HUB_CACHE"):
        cache = Path(env["HF_HUB_CACHE"]).expanduser()
    elif env.get("HF_HOME"):
        cache = Path(env["HF_HOME"]).expanduser() / "hub"
    else:
        cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "huggingface" / "hub"
    return cache.absolute()


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` is set to a true value (``1``, ``on``, ``yes``, ``true``; huggingface_hub's own test)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def repo_folder(cache: Path, repo_id: str) -> Path:
    """A model repository's folder in the cache: ``models--OWNER--NAME``."""
    return cache / ("models--" + repo_id.replace("/", "--"))


@dataclass(frozen=True)
class PreparedModel:
    """A model ready for an offline worker: the cache, the model's snapshot folder (host path), the encoder its
    ``hparams.yaml`` names, and the read-only binds the sandbox needs: ``(host path, path inside)``, the model's and
    the encoder's cache folders under :data:`HUB_INSIDE` (a local encoder folder at its own path)."""

    cache: Path
    snapshot: Path
    encoder: str
    binds: tuple[tuple[str, str], ...]


def _snapshot(repo_id: str, revision: str | None, cache: Path, needed: Sequence[str],
              allow_patterns: Sequence[str] | None = None) -> Path:
    """The snapshot folder of ``repo_id@revision`` in ``cache``: the cached one when it holds ``needed``, else fetched
    from the Hub (unless ``HF_HUB_OFFLINE``). Raises: BackendError naming the model and the fix."""
    from huggingface_hub import snapshot_download

    name = f"{repo_id}@{revision or 'main'}"
    try:
        path = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache, local_files_only=True))
        if all((path / f).is_file() for f in needed):
            return path
    except Exception:  # noqa: BLE001 - huggingface_hub raises several kinds for "not in the cache"
        pass
    if hub_offline():
        raise BackendError(f"the COMET worker failed to get its model: {name} is not in the Hugging Face cache "
                           f"{cache} and HF_HUB_OFFLINE is set", field=name,
                           fix="fetch it once without HF_HUB_OFFLINE, or point HF_HUB_CACHE at a cache that holds it "
                               "(docs/neural_metrics.md); check the model id and revision")
    try:
        path = Path(snapshot_download(repo_id, revision=revision, cache_dir=cache,
                                      allow_patterns=list(allow_patterns) if allow_patterns else None))
    except Exception as exc:  # noqa: BLE001 - network, authentication, missing revision: one line each
        raise BackendError(f"the COMET worker failed to get its model: fetching {name} from the Hugging Face Hub "
                           f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                           field=name, fix="check the model id and revision, HF_TOKEN for gated models, and the "
                                           "network (docs/neural_metrics.md)") from None
    missing = [f for f in needed if not (path / f).is_file()]
    if missing:
        raise BackendError(f"the COMET worker failed to get its model: {name} has no {', '.join(missing)}",
                           field=name, fix="check the model id and revision (a COMET model repository)")
    return path


def prepare_model(repo_id: str, revision: str) -> PreparedModel:
    """Fetch what the worker reads into the Hugging Face cache (:func:`hub_cache`), in mtboard's own process, so the
    sandboxed worker runs offline: the model repository at ``revision`` (``hparams.yaml``,
    ``checkpoints/model.ckpt``), then the encoder its ``hparams.yaml`` names as ``pretrained_model`` — a Hub model id
    (its :data:`ENCODER_FILES` only, at its default branch, as COMET itself loads it) or an existing local folder
    (an absolute path without symbolic links, holding ``config.json``; the tests' tiny models). The cache is used
    first; the Hub only for what it lacks and never under ``HF_HUB_OFFLINE``.

    Raises: BackendError when a repository cannot be had (naming it and the fix); InputError for an
    ``hparams.yaml`` outside its repository's cache folder, unreadable, or naming no usable encoder."""
    cache = hub_cache()
    snap = _snapshot(repo_id, revision, cache, ("hparams.yaml", "checkpoints/model.ckpt"))
    folder = repo_folder(cache, repo_id)
    hparams_path = os.path.realpath(snap / "hparams.yaml")
    if not (hparams_path + os.sep).startswith(os.path.realpath(folder) + os.sep):
        raise InputError("hparams.yaml lies outside the model's cache folder", where=str(snap / "hparams.yaml"),
                         fix=f"delete {folder} and fetch the model again")
    hparams = safejson.load_yaml(hparams_path)
    encoder = hparams.get("pretrained_model") if isinstance(hparams, dict) else None
    where = f"{repo_id}@{revision}: hparams.yaml"
    binds = [(str(folder), f"{HUB_INSIDE}/{folder.name}")]
    if not isinstance(encoder, str) or not encoder:
        raise InputError("names no encoder", where=where, field="pretrained_model",
                         fix="use a COMET model repository (its hparams.yaml names the encoder)")
    if os.path.isabs(encoder):
        if os.path.realpath(encoder) != os.path.normpath(encoder) or not os.path.isfile(
                os.path.join(encoder, "config.json")) or encoder in ("/", str(Path.home())):
            raise InputError(f"the local encoder folder {encoder[:200]!r} is not a folder holding config.json (or "
                             "its path has a symbolic link)", where=where, field="pretrained_model",
                             fix="name a Hub model id, or a real local folder of the encoder's configuration")
        binds.append((encoder, encoder))
    elif _REPO_ID.fullmatch(encoder) and ".." not in encoder:
        _snapshot(encoder, None, cache, ("config.json",), ENCODER_FILES)
        enc_folder = repo_folder(cache, encoder)
        binds.append((str(enc_folder), f"{HUB_INSIDE}/{enc_folder.name}"))
    else:
        raise InputError(f"encoder {encoder[:200]!r} is neither a Hub model id nor an absolute folder", where=where,
                         field="pretrained_model", fix="use a COMET model repository")
    return PreparedModel(cache=cache, snapshot=snap, encoder=encoder, binds=tuple(binds))


def python_binds(python: str | os.PathLike[str]) -> list[str]:
    """Host folders the COMET environment's Python needs, bound read-only at their own paths: the virtual
    environment (the folder above ``bin/`` when it holds ``pyvenv.cfg``, as given and resolved), the interpreter it was
    made from (``home`` in ``pyvenv.cfg``) and the prefix of the resolved executable; never ``/``, ``$HOME`` or a
    folder above it, nor anything under ``/usr`` (bound anyway)."""
    exe = Path(os.path.abspath(python))
    found: list[str] = []
    venv = exe.parent.parent
    cfg = venv / "pyvenv.cfg"
    if cfg.is_file():
        found += [str(venv), os.path.realpath(venv)]
        for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
            k, sep, v = line.partition("=")
            if sep and k.strip() == "home" and v.strip():
                found.append(os.path.dirname(os.path.realpath(v.strip())))
    found.append(os.path.dirname(os.path.dirname(os.path.realpath(exe))))
    home = os.path.realpath(Path.home())
    out: list[str] = []
    for p in sorted({os.path.normpath(f) for f in found if f and os.path.isdir(f)}, key=len):
        if p == "/" or p == "/usr" or p.startswith("/usr/") or (home + "/").startswith(p + "/"):
            continue
        if not any(p == q or p.startswith(q + "/") for q in out):
            out.append(p)
    return out


def worker_env(cache_inside: str, home: str) -> dict[str, str]:
    """The worker's whole environment: ``PATH``, ``HOME``, ``LANG``, the Hugging Face cache (``HF_HUB_CACHE``,
    ``HF_HOME`` under ``home``) with ``HF_HUB_OFFLINE=1``, and :data:`WORKER_PASSED_ENV` that are set — never an API
    key, the hypothesis salt, ``HF_TOKEN`` or anything else of mtboard's environment."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "HF_HUB_OFFLINE": "1",
           "HF_HUB_CACHE": cache_inside, "HF_HOME": f"{home}/hf", "TOKENIZERS_PARALLELISM": "false"}
    env.update({k: os.environ[k] for k in WORKER_PASSED_ENV if os.environ.get(k)})
    return env


def run_worker(python: str, request: dict, timeout_s: float | None, *,
               prepared: PreparedModel | None = None) -> dict:
    """Run :data:`WORKER` once on ``request`` with the COMET environment's ``python`` and return its result.

    Inside the sandbox (:mod:`mtboard.core.sandbox`; unless the run-time configuration's ``comet_sandbox`` is off):
    ``bwrap`` started with :data:`mtboard.core.sandbox.BWRAP_ENV`, the worker with :func:`worker_env` only, the request
    and result in a private writable folder (``/run/mtboard``), the worker script at :data:`WORKER_INSIDE`, the
    COMET environment (:func:`python_binds`) and ``prepared``'s cache folders read-only, GPU device nodes when
    ``request["device"]`` is ``cuda``; no network. Unsandboxed: the same environment with the host's cache path.

    Returns: the result JSON object (its scores checked: one finite number per sample). Raises: BackendError when the
    sandbox is unavailable, the worker fails, runs past ``timeout_s`` or returns malformed JSON; ConfigError when the
    Python cannot be started."""
    boxed = runtime().comet_sandbox
    with tempfile.TemporaryDirectory(prefix="mtboard-comet-") as tmp:
        xchg = Path(tmp) / "exchange"
        xchg.mkdir()
        req, res = xchg / "request.json", xchg / "result.json"
        if boxed:
            inside = sandbox.SOCKET_DIR
            request = {**request, "cache_dir": HUB_INSIDE}
            box = sandbox.Sandbox(
                ro_binds=[*((p, p) for p in python_binds(python)), (str(WORKER), WORKER_INSIDE),
                          *(prepared.binds if prepared else ())],
                rw_binds=[(str(xchg), inside)], env=worker_env(HUB_INSIDE, "/tmp"),
                gpu=request.get("device") == "cuda")
            argv = box.argv([os.path.abspath(python), WORKER_INSIDE, f"{inside}/request.json",
                             f"{inside}/result.json"])
            env = dict(sandbox.BWRAP_ENV)
        else:
            cache = str(prepared.cache if prepared else hub_cache())
            request = {**request, "cache_dir": cache}
            (Path(tmp) / "home").mkdir()
            argv = [python, str(WORKER), str(req), str(res)]
            env = worker_env(cache, str(Path(tmp) / "home"))
        req.write_text(json.dumps(request), encoding="utf-8")
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
                                  check=False, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise BackendError(f"the COMET worker ran past {timeout_s} s", field=request["repo_id"],
                               fix="raise the timeout or score fewer segments") from None
        except OSError as exc:
            raise ConfigError(f"cannot start the COMET environment's Python: {exc}", where=python,
                              fix="scripts/setup.sh --comet, or set MTBOARD_COMET_PYTHON to another environment's "
                                  "Python") from None
        if proc.returncode != 0 or not res.is_file():
            tail = " | ".join(line for line in proc.stderr.strip().splitlines()[-3:])
            raise BackendError(f"the COMET worker failed (exit {proc.returncode}): {tail}",
                               field=f"{request['repo_id']}@{request['revision']}",
                               fix="check the model id and revision, the COMET environment and the Hugging Face "
                                   "cache (docs/neural_metrics.md)")
        try:
            result = safejson.loads(res.read_bytes(), where="the COMET worker's result")
        except (InputError, OSError) as exc:
            raise BackendError(f"the COMET worker's result is not valid JSON: {exc}", field=request["repo_id"],
                               fix="report this as a bug") from None
    return _checked(result, len(request.get("samples", [])), request)


def _checked(result: object, n: int, request: Mapping) -> dict:
    """The worker's result when its shape is what the protocol says: an object whose ``scores`` are ``n`` finite
    numbers and whose optional fields have their types (the worker is sandboxed, its output is still data).
    Raises: BackendError naming the field."""
    where = f"{request['repo_id']}@{request['revision']}"
    if not isinstance(result, dict):
        raise BackendError("the COMET worker's result is not a JSON object", field=where, fix="report this as a bug")
    scores = result.get("scores")
    if not isinstance(scores, list) or len(scores) != n:
        got = len(scores) if isinstance(scores, list) else 0
        raise BackendError(f"the COMET worker returned {got} scores for {n} segments", field=where,
                           fix="report this as a bug")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scores):
        raise BackendError("the COMET worker returned a score that is not a finite number", field=where,
                           fix="report this as a bug")
    ok = (isinstance(result.get("commit", ""), str)
          and isinstance(result.get("pretrained_model", ""), (str, type(None)))
          and isinstance(result.get("versions", {}), dict)
          and all(isinstance(k, str) and isinstance(v, str) for k, v in result.get("versions", {}).items())
          and (result.get("system_score") is None or (isinstance(result["system_score"], (int, float))
                                                      and math.isfinite(result["system_score"]))))
    if not ok:
        raise BackendError("the COMET worker's result has a field of the wrong type", field=where,
                           fix="report this as a bug")
    return result


__all__ = ["ALLOWED_REVISIONS", "DEFAULT_BATCH_SIZE", "ENCODER_FILES", "HUB_INSIDE", "MODELS", "NEURAL_DECIMALS",
           "NO_OUTPUT_SCORE", "NeuralModel", "NeuralRun", "PreparedModel", "UNSANDBOXED", "WORKER_INSIDE",
           "WORKER_PASSED_ENV", "aggregate", "check_allowed", "comet_python", "hub_cache", "hub_offline",
           "is_allowed", "parse_metrics", "parse_revisions", "prepare_model", "python_binds", "repo_folder",
           "run_worker", "sandbox_record", "score_segments", "signature", "units", "worker_env"]
