"""Recomputation checks: ``metrics``, ``mechanical``, ``signatures`` (spec §9.2, §9.3).

Scores, totals and per-entry results are recomputed from the card's stored raw outputs with the very functions the
runner used (:func:`mtboard.score.scoring.score_run`, :func:`mtboard.inputs.prices.compute_totals`) and compared **exactly**, no
slack, for run 0 (``results``) and every replicate run (``replicate_runs``). The ``judges`` check lives in
:mod:`mtboard.validate.judging`.
"""

from __future__ import annotations

from typing import Any

from mtboard.score.card import card_records, replicate_run
from mtboard.core.errors import MtboardError
from mtboard.inputs.prices import Rates, compute_totals
from mtboard.core.schema import Entry, RunCard
from mtboard.validate.context import backend_class
from mtboard.validate.report import RECOMPUTED_CHECKS, CardRun, json_path

MAX_PROBLEMS_PER_CHECK = 20
"""Recomputation differences reported per check (scores and results together); the rest are not listed."""

# Where each recomputed field is reported. Anything not listed is "metrics".
_MECHANICAL_SCORE_KEYS = frozenset({"mechanical", "policy_version"})
_SIGNATURE_SCORE_KEYS = frozenset({"signatures"})
_MECHANICAL_ENTRY_KEYS = frozenset({"checks", "predicted"})
# Fields outside the recomputation: judge output (checked for consistency by the "judges" check) and plugin output
# (neural metrics: checked by the "neural" check, mtboard.validate.neural).
_UNRECOMPUTED_SCORE_KEYS: frozenset[str] = frozenset()
_UNRECOMPUTED_ENTRY_KEYS = frozenset({"judgements", "plugin_metrics"})

_MISSING = object()
Diff = tuple[tuple, Any, Any]
"""(path inside the value, stored, recomputed)."""


def _diff(a: Any, b: Any, path: tuple, out: list[Diff], limit: int = 50) -> None:
    """Exact structural difference of two JSON values (stored ``a`` vs recomputed ``b``)."""
    # Fast path (C-level equality). Both sides are dumps of the same strict pydantic models, so the types of equal
    # values agree (no True-vs-1 ambiguity outside JsonValue fields).
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            _diff(a.get(k, _MISSING), b.get(k, _MISSING), path + (k,), out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, path + (i,), out, limit)
    elif type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                         and not isinstance(a, bool) and not isinstance(b, bool)):
        out.append((path, a, b))
    elif a != b:
        out.append((path, a, b))


def _show(v: Any) -> str:
    """A value for a message: numbers, booleans and null as JSON; text never (only its length)."""
    if v is _MISSING:
        return "absent"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return f"a {len(v)}-character text"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    return "an object"


def _recompute(card: RunCard, entries: list[Entry]):
    """Re-run scoring exactly as the runner did (:func:`mtboard.score.card.score_and_assemble`).

    Inputs rebuilt from the card: one TranslationRecord per result and replicate result
    (:func:`mtboard.score.card.card_records`: raw output, error, attempts, latencies, usage), the corpus entries,
    ``elapsed_seconds / runs`` (the per-replicate time the runner scores with), FST on exactly when the card has an
    FST acceptance rate, morphological accuracy (Apertium analyser + tagger) on exactly when the card has one, ``strip_unknown_marks`` from the registered backend, the recorded rates, and the stored
    per-entry semantic similarities as claims (a recomputed one within one unit of the 4th decimal scores as the
    claim: BLAS kernels differ in the last bits between machines; docs/SCORING_SPEC.md §2.3).

    Returns: (Scores of run 0 with the replicate statistics, run 0's EntryResults, one list of ReplicateResults per
    replicate run, Totals over every run).
    """
    from mtboard.score import scoring  # noqa: PLC0415 - heavy import (sacrebleu, numpy) only when a card is recomputed

    runs = card_records(card)
    m = card.method
    rates = Rates.from_method(m.price_in_per_mtok, m.price_out_per_mtok, m.price_cached_in_per_mtok,
                              m.price_reasoning_per_mtok)
    cls = backend_class(m.backend)
    stored = [card.results, *(rr.results for rr in card.replicate_runs)]
    claims = [{r.entry_id: (r.semantic_score, r.source_similarity) for r in results} for results in stored]
    scored = [scoring.score_run(
        entries, records, source_language=card.dataset.source_language, target_language=card.dataset.target_language,
        elapsed_seconds=card.elapsed_seconds / max(1, m.runs), fst=card.scores.fst_acceptance_rate is not None,
        strip_unknown_marks=cls.strip_unknown_marks if cls is not None else False, rates=rates,
        semantic_claimed=claims[k] if k < len(claims) else {},
        morphology=card.scores.morphological_accuracy is not None) for k, records in enumerate(runs)]
    scores, results = scored[0]
    if len(scored) > 1:
        scores = scores.model_copy(update={"replicates": scoring.replicates([sc for sc, _ in scored])})
    replicate_results = [replicate_run(i, res).results for i, (_, res) in enumerate(scored) if i > 0]
    totals = compute_totals([r for records in runs for r in records], entries, len(runs), m.price_in_per_mtok,
                            m.price_out_per_mtok, rates=rates)
    return scores, results, replicate_results, totals


def _score_check(key: str) -> str | None:
    """The check owning a top-level key of ``scores`` (None: not recomputed)."""
    if key in _UNRECOMPUTED_SCORE_KEYS:
        return None
    if key in _MECHANICAL_SCORE_KEYS:
        return "mechanical"
    if key in _SIGNATURE_SCORE_KEYS:
        return "signatures"
    return "metrics"


def _entry_check(key: str) -> str | None:
    """The check owning a top-level key of a result (None: not recomputed)."""
    if key in _UNRECOMPUTED_ENTRY_KEYS:
        return None
    if key in _MECHANICAL_ENTRY_KEYS:
        return "mechanical"
    return "metrics"


def _totals_check(key: str) -> str | None:
    """Totals are "metrics", except the judge sums (the ``judges`` check owns them)."""
    return None if key.startswith("judge_") else "metrics"


def _report_diffs(run: CardRun, diffs: list[Diff], prefix: tuple, owner, reported: dict[str, int] | None) -> None:
    """One problem per difference, under the check ``owner(top-level key)`` names (None: ignored).

    ``reported`` counts problems per check across calls and caps them at :data:`MAX_PROBLEMS_PER_CHECK`; None: no cap.
    """
    for path, a, b in diffs:
        check = owner(str(path[0]))
        if check is None:
            continue
        if reported is not None:
            if reported.get(check, 0) >= MAX_PROBLEMS_PER_CHECK:
                continue
            reported[check] = reported.get(check, 0) + 1
        run.fail(check, f"stored {_show(a)}, recomputed {_show(b)}", json_path(prefix + path))


def check_recomputation(run: CardRun, card: RunCard, entries: list[Entry]) -> None:
    """``metrics``, ``mechanical``, ``signatures``: recompute and compare exactly; then the signatures' meaning."""
    for i, r in enumerate(card.results):
        if (r.error is None) != (r.error_kind is None):
            run.fail("mechanical", "error and error_kind must be set together (a failure has a message and a kind)",
                     f"$.results[{i}].error")
    if not _check_replicate_layout(run, card):
        run.done("metrics")
        run.skip_all(("mechanical", "signatures"), "replicate runs do not match method.runs")
        return
    try:
        scores, results, replicate_results, totals = _recompute(card, entries)
    except MtboardError as exc:
        for c in RECOMPUTED_CHECKS:
            run.fail(c, f"recomputation failed: {exc.problem}")
        return
    reported: dict[str, int] = {}
    diffs: list[Diff] = []
    _diff(card.scores.model_dump(mode="json"), scores.model_dump(mode="json"), (), diffs, limit=10_000)
    _report_diffs(run, diffs, ("scores",), _score_check, reported)
    diffs = []
    _diff(card.totals.model_dump(mode="json"), totals.model_dump(mode="json"), (), diffs)
    _report_diffs(run, diffs, ("totals",), _totals_check, None)
    _compare_results(run, card.results, results, ("results",), reported)
    for k, (stored, recomputed) in enumerate(zip(card.replicate_runs, replicate_results)):
        _compare_results(run, stored.results, recomputed, ("replicate_runs", k, "results"), reported)
    _check_signature_semantics(run, card)
    run.done(*RECOMPUTED_CHECKS)


def _compare_results(run: CardRun, stored: list, recomputed: list, prefix: tuple, reported: dict[str, int]) -> None:
    if len(recomputed) != len(stored):
        run.fail("metrics", f"recomputation produced {len(recomputed)} results for {len(stored)} stored",
                 json_path(prefix))
        return
    for i, (mine, theirs) in enumerate(zip(stored, recomputed)):
        diffs: list[Diff] = []
        _diff(mine.model_dump(mode="json"), theirs.model_dump(mode="json"), (), diffs)
        _report_diffs(run, diffs, (*prefix, i), _entry_check, reported)


def _check_replicate_layout(run: CardRun, card: RunCard) -> bool:
    """``method.runs`` = 1 + replicate runs, numbered 1 … runs − 1, each with the same entries in the same order as
    ``results`` (``metrics``). Returns False when the layout is broken (nothing is recomputed then)."""
    ok = True
    want = list(range(1, card.method.runs))
    got = [rr.run_index for rr in card.replicate_runs]
    if got != want:
        run.fail("metrics", f"method.runs is {card.method.runs} but the card holds replicate runs {got or 'none'} "
                            f"(expected {want or 'none'}: run 0 is results)", "$.replicate_runs")
        ok = False
    ids = [r.entry_id for r in card.results]
    for k, rr in enumerate(card.replicate_runs):
        if [r.entry_id for r in rr.results] != ids:
            run.fail("metrics", "a replicate run's entries differ from results' (same ids, same order)",
                     f"$.replicate_runs[{k}].results")
            ok = False
    return ok


def _sig_fields(sig: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in sig.split("|"):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k] = v
    return out


def _check_signature_semantics(run: CardRun, card: RunCard) -> None:
    """A chrF++ score must carry a chrF++ signature (nc:6, nw:2), every signature the installed sacrebleu, and the
    semantic signature the installed embedding package and weights (docs/SCORING_SPEC.md §2.3)."""
    import sacrebleu  # noqa: PLC0415 - heavy import, as in _recompute

    sig = card.scores.signatures
    chrf = _sig_fields(sig.chrf)
    if chrf.get("nw") != "2":
        run.fail("signatures", f"chrf_plus_plus needs word n-grams (nw:2); signature says nw:{chrf.get('nw', '?')}",
                 "$.scores.signatures.chrf")
    if chrf.get("nc") != "6":
        run.fail("signatures", f"chrF++ uses character 6-grams (nc:6); signature says nc:{chrf.get('nc', '?')}",
                 "$.scores.signatures.chrf")
    for name in ("chrf", "bleu", "ter"):
        fields = _sig_fields(getattr(sig, name))
        if fields.get("nrefs") not in (None, "1"):
            run.fail("signatures", f"nrefs:{fields['nrefs']} but cards score against one reference",
                     f"$.scores.signatures.{name}")
        v = fields.get("version")
        if v is not None and v != sacrebleu.__version__:
            run.fail("signatures", f"scored with sacrebleu {v}; this validator has {sacrebleu.__version__}, so "
                                   "scores cannot be recomputed bit-for-bit (re-score with the pinned version)",
                     f"$.scores.signatures.{name}")
    if sig.semantic is not None:
        from mtboard.score.metrics import semantic  # noqa: PLC0415 - loads the embedding model, as _recompute does

        stored, mine = _sig_fields(sig.semantic), _sig_fields(semantic.semantic_signature())
        for key, what in (("package", "the embedding package"), ("weights", "embedding weights")):
            if stored.get(key) != mine.get(key):
                run.fail("signatures", f"scored with {what} {stored.get(key, '?')}; this validator has "
                                       f"{mine.get(key)}, so semantic scores cannot be recomputed bit-for-bit "
                                       "(re-score with the pinned version)", "$.scores.signatures.semantic")
