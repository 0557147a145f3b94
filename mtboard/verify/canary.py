"""Drift canaries (issue 38 item 3): ``mtboard canary run CARD`` re-runs an API model's card on its language pair's
canary entries and records the scores in the canary history.

A hosted model (an ``openai:`` method: OpenAI's API or any OpenAI-compatible endpoint) can change under the same name;
a local GGUF file is pinned by its SHA-256 and an RBMT engine by its package version, so they cannot drift under the
same name and are refused. The re-run is the card's method with the card's settings (:meth:`mtboard.backends.base.
Backend.rerun`, :func:`mtboard.verify.rerun.rerun_settings`, the runner's ``prepare`` → ``translate_all`` →
``finish``), on the entries of the card's corpus's canary set (:mod:`mtboard.inputs.canaries`) only; its outputs are
scored by the same scoring as any run (:func:`mtboard.score.scoring.score_run` through the runner) and summarised on
those entries with the board's definitions (:func:`mtboard.score.subset.composite_on`, :func:`~mtboard.score.subset.
chrf_on`).

**Drift rule** (decided in the ledger, :mod:`mtboard.ledger.canaries`; :func:`reference` here so the command can say
it too): the card's own per-entry results on the same canary entries give its composite there and a 95 % bootstrap
percentile CI (:data:`mtboard.score.metrics.bootstrap.BOOTSTRAP_RESAMPLES` resamples of the canary entries, seeded by
the dataset id, version, corpus SHA-256 and ``canary``: :func:`mtboard.score.stats.view_seed`; the board's views and
clean subsets compute theirs the same way). The model *drifted* when a canary run's composite lies outside that CI.
The CI measures how much the card's composite on these 12 entries depends on which of them are drawn: a run outside
it is further from the card than resampling the card's own entries goes 95 % of the time.

Nothing secret is written: the record (:class:`mtboard.core.schema.CanaryRun`) holds ids, hashes, numbers and what
the server reported about its model — no key, no URL, no text. The re-run's work folder is temporary and removed.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from mtboard import __version__
from mtboard.backends.base import get_backend
from mtboard.core import canonical
from mtboard.core.documents import atomic_write
from mtboard.core.errors import ConfigError
from mtboard.core.schema import RunCard, Segment
from mtboard.core.schema.canary import CanaryRun, CanarySet, ServedIdentity
from mtboard.inputs.canaries import SETS_FILE, history_path, read_sets, run_bytes, set_for
from mtboard.inputs.runspec import RunSpec, facts_from_card
from mtboard.run import runner
from mtboard.run.plan import ProgressSink
from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.score.subset import chrf_on, composite_on, composite_resamples_on
from mtboard.verify.rerun import (NotVerifiable, _find_corpus, _now, check_verifiable, load_sealed_card,
                                  rerun_settings, weights_mismatches)

API_BACKENDS = ("openai",)
"""Backends whose model can change under the same name: the ones canary runs are for."""


@dataclass(frozen=True)
class Reference:
    """The card's composite on the canary entries and its 95 % bootstrap CI (the drift rule's yardstick)."""

    composite: float
    ci: tuple[float, float] | None

    def outside(self, value: float) -> bool:
        """Whether ``value`` lies outside the CI (never, without a CI)."""
        return self.ci is not None and not (self.ci[0] <= value <= self.ci[1])


def reference(card: RunCard, ids: list[int], resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> Reference:
    """The card's composite on entries ``ids`` and its 95 % percentile CI over ``resamples`` bootstrap resamples of
    those entries, seeded by the card's dataset id, version, SHA-256 and ``canary`` (module docstring).
    Raises: KeyError when the card did not evaluate one of ``ids``."""
    d = card.dataset
    seed = stats.view_seed(d.id, d.version, d.sha256, "canary")
    counts = bootstrap.resample_counts(len(ids), resamples, seed)
    return Reference(composite_on(card, ids), bootstrap.percentile_interval(composite_resamples_on(card, ids, counts)))


@dataclass
class CanaryResult:
    run: CanaryRun
    path: Path | None
    """Where the record was written (None with ``write=False``)."""
    reference: Reference

    @property
    def outside(self) -> bool:
        return self.reference.outside(self.run.composite)


def check_canary_card(card: RunCard, where: str) -> None:
    """Refuse a card whose model cannot drift under its name: every backend but :data:`API_BACKENDS`.
    Raises: ConfigError, one line naming the card, the method and why."""
    backend = card.method.backend
    if backend not in API_BACKENDS:
        raise ConfigError(f"canary runs are for API models (openai: methods); {card.method.spec} uses backend "
                          f"{backend!r}: a local or RBMT engine is pinned by its file or package version and cannot "
                          "drift under the same name", where=where, field="method.backend",
                          fix="run canaries for an openai: card; verify a local card with `mtboard verify`")


def canary_set_of(card: RunCard, root: Path, where: str) -> CanarySet:
    """The canary set of the card's corpus (``root/canaries/sets.yaml``), checked against the card: same corpus file
    (SHA-256), the card's segment is the development segment and it evaluated every canary entry.
    Raises: InputError (the sets file), NotVerifiable (no set, other corpus file, entries not evaluated)."""
    sets = read_sets(root / SETS_FILE)
    d = card.dataset
    cset = set_for(sets, d.id, d.version)
    if cset is None:
        raise NotVerifiable(f"no canary set for {d.id} {d.version} in {SETS_FILE}", where=where,
                            fix="run `mtboard canary sets --write` and commit the file")
    if cset.sha256 != d.sha256:
        raise NotVerifiable(f"the card was run on {d.id} {d.version} with SHA-256 {d.sha256[:12]}…, the canary set "
                            f"was chosen from {cset.sha256[:12]}…", where=where, field="dataset.sha256",
                            fix="run canaries for a card of the corpus file the set names")
    if d.segment != Segment.development:
        raise NotVerifiable(f"canary sets are development entries; the card evaluated the {d.segment.value} segment",
                            where=where, field="dataset.segment", fix="run canaries for a development-segment card")
    evaluated = {r.entry_id for r in card.results}
    missing = [i for i in cset.entry_ids if i not in evaluated]
    if missing:
        raise NotVerifiable(f"the card did not evaluate {len(missing)} of the {len(cset.entry_ids)} canary entries "
                            f"({', '.join(map(str, missing[:5]))}{' …' if len(missing) > 5 else ''}), so it has no "
                            "score on them to compare with", where=where, field="results",
                            fix="run canaries for a card of the whole development segment (no --limit)")
    return cset


def outputs_sha256(card: RunCard) -> str:
    """SHA-256 of the canonical JSON ``[[entry id, raw output], …]`` of the card's run 0 (by entry id; a failed
    entry's output is null)."""
    pairs = sorted([r.entry_id, r.raw_predicted] for r in card.results)
    return canonical.sha256_hex(canonical.canonical_bytes(pairs))


def _rel(path: Path, root: Path) -> str:
    for base in (root / "submissions", root):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


def run_canary(card_path: str | Path, *, root: str | Path = ".", corpora_dir: str | Path | None = None,
               base_url: str | None = None, progress: ProgressSink | None = None, write: bool = True,
               resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> CanaryResult:
    """Re-run the sealed card at ``card_path`` on its pair's canary entries and record the run.

    Args:
        root: the repository root (``canaries/sets.yaml``, ``canaries/history/``, ``corpora/`` by default).
        corpora_dir: the folder of corpus files (default ``root/corpora``); one must be the card's corpus file.
        base_url: the OpenAI-compatible endpoint (default ``$OPENAI_BASE_URL``, then OpenAI's), as for ``mtboard
            verify``; never written anywhere.
        write: write the record under ``root/canaries/history/`` (:func:`mtboard.inputs.canaries.history_path`; a
            name taken already gets ``-2``, ``-3`` …).
        resamples: bootstrap resamples of the reference CI (:func:`reference`).

    Returns: :class:`CanaryResult` (the record, its path, the card's composite and CI on the canary entries).
    Raises: InputError (card, seal, sets file), ConfigError (not an API method: :func:`check_canary_card`; the
        backend cannot start), NotVerifiable (:func:`mtboard.verify.rerun.check_verifiable`, :func:`canary_set_of`),
        IncompleteRunError / BackendError from the runner.
    """
    path, root = Path(card_path), Path(root)
    where = str(path)
    card = load_sealed_card(path)
    check_canary_card(card, where)
    check_verifiable(card)
    cset = canary_set_of(card, root, where)
    ids = list(cset.entry_ids)
    corpus_path = _find_corpus(card, root, Path(corpora_dir) if corpora_dir is not None else None)
    spec = RunSpec.from_card(card)
    how = get_backend(spec.method.backend).rerun(spec, facts_from_card(card))
    work = Path(tempfile.mkdtemp(prefix="mtboard-canary-"))
    try:
        settings = rerun_settings(card, spec, how, corpus_path, Segment.development, None, work / "run", base_url)
        plan = runner.prepare(settings)
        wanted = set(ids)
        plan = replace(plan, entries=[e for e in plan.entries if e.id in wanted])
        translated = asyncio.run(runner.translate_all(plan, progress))
        rerun = runner.finish(translated).card
    finally:
        shutil.rmtree(work, ignore_errors=True)
    note = "; ".join(weights_mismatches(card, rerun)) or None
    m = rerun.method
    run = CanaryRun(
        date=_now(), card_fingerprint=card.fingerprint.hash, card_run_card_hash=card.run_card_hash,
        card_path=_rel(path, root), method=card.method.spec, model_slug=card.model_slug,
        served=ServedIdentity(model_slug=rerun.model_slug, model_id=rerun.model_id, api_provider=m.api_provider,
                              engine_version=m.engine_version, model_revision=m.model_revision,
                              model_file_sha256=m.model_file_sha256),
        served_note=note, dataset_id=cset.dataset_id, version=cset.version, sha256=cset.sha256, entry_ids=ids,
        composite=composite_on(rerun, ids), chrf_plus_plus=chrf_on(rerun, ids),
        outputs_sha256=outputs_sha256(rerun), harness_version=__version__)
    dest = None
    if write:
        rel = history_path(run)
        dest = root / rel
        n = 2
        while dest.exists():
            dest = root / f"{rel[:-len('.json')]}-{n}.json"
            n += 1
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(dest, run_bytes(run))
    return CanaryResult(run=run, path=dest, reference=reference(card, ids, resamples))


def canary_cards(root: str | Path = ".") -> tuple[list[Path], list[str]]:
    """The committed cards canary runs are for, under ``root/submissions/`` (path order): sealed, an ``openai:``
    method, with a canary set of their corpus that they evaluated whole (:func:`check_canary_card`,
    :func:`canary_set_of`); and one line per ``openai:`` card left out, saying why. Reads card files only (no
    request)."""
    from mtboard.core.errors import MtboardError

    root = Path(root)
    subs = root / "submissions"
    found, skipped = [], []
    for path in sorted(subs.rglob("*.json")) if subs.is_dir() else []:
        if path.name.endswith(".verification.json") or path.name.startswith("."):
            continue
        try:
            card = load_sealed_card(path)
        except MtboardError:
            continue  # not a sealed card (the validator reports those)
        if card.method.backend not in API_BACKENDS:
            continue
        try:
            canary_set_of(card, root, str(path))
        except MtboardError as exc:
            skipped.append(exc.one_line())
            continue
        found.append(path)
    return found, skipped


__all__ = ["API_BACKENDS", "canary_cards", "CanaryResult", "Reference", "canary_set_of", "check_canary_card", "outputs_sha256",
           "reference", "run_canary"]
