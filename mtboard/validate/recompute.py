"""Recomputation checks: ``metrics``, ``mechanical``, ``signatures`` and the ``judges`` consistency check
(spec §9.2, §9.3).

Scores, totals and per-entry results are recomputed from the card's stored raw outputs with the very functions the
runner used (:func:`mtboard.scoring.score_run`, :func:`mtboard.prices.compute_totals`) and compared **exactly**, no
slack. Judges cannot be re-run here: their summaries are recomputed from the per-entry verdicts.
"""

from __future__ import annotations

import statistics
from typing import Any

from mtboard.errors import MtboardError
from mtboard.prices import compute_totals
from mtboard.schema import Entry, RunCard, Scores, TranslationRecord
from mtboard.validate.context import backend_class
from mtboard.validate.report import RECOMPUTED_CHECKS, CardRun, json_path

MAX_PROBLEMS_PER_CHECK = 20
"""Recomputation differences reported per check (scores and results together); the rest are not listed."""

# Where each recomputed field is reported. Anything not listed is "metrics".
_MECHANICAL_SCORE_KEYS = frozenset({"mechanical", "policy_version"})
_SIGNATURE_SCORE_KEYS = frozenset({"signatures"})
_MECHANICAL_ENTRY_KEYS = frozenset({"checks", "predicted"})
# Fields outside the recomputation: judge output (checked for consistency by the "judges" check) and replicate
# statistics of --runs N (the card carries only run 0's outputs).
_UNRECOMPUTED_SCORE_KEYS = frozenset({"replicates"})
_UNRECOMPUTED_ENTRY_KEYS = frozenset({"judgements"})

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
    """Re-run scoring exactly as the runner did (``mtboard.runner.finish``).

    Inputs rebuilt from the card: one TranslationRecord per result (raw output, error, attempts, latency, usage), the
    corpus entries, ``elapsed_seconds / runs`` (the per-replicate time the runner scores with), FST on exactly when
    the card has an FST acceptance rate, ``strip_unknown_marks`` from the registered backend, the recorded prices.

    Returns: (Scores, list[EntryResult], Totals | None). Totals are recomputed for single-run cards only (with
    ``--runs N`` they sum all replicates, whose outputs the card does not carry).
    """
    from mtboard import scoring  # noqa: PLC0415 - heavy import (sacrebleu, numpy) only when a card is recomputed

    records = [TranslationRecord(entry_id=r.entry_id, raw_predicted=r.raw_predicted, error=r.error,
                                 error_kind=r.error_kind, attempts=r.attempts, latency_s=r.latency_s, usage=r.usage)
               for r in card.results]
    m = card.method
    runs = max(1, m.runs)
    cls = backend_class(m.backend)
    scores, results = scoring.score_run(
        entries, records, source_language=card.dataset.source_language, target_language=card.dataset.target_language,
        elapsed_seconds=card.elapsed_seconds / runs, fst=card.scores.fst_acceptance_rate is not None,
        strip_unknown_marks=cls.strip_unknown_marks if cls is not None else False,
        price_in_per_mtok=m.price_in_per_mtok, price_out_per_mtok=m.price_out_per_mtok)
    totals = None
    if runs == 1:  # the runner's own totals (mtboard.runner.finish)
        totals = compute_totals(records, entries, 1, m.price_in_per_mtok, m.price_out_per_mtok)
    return scores, results, totals


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
    try:
        scores, results, totals = _recompute(card, entries)
    except MtboardError as exc:
        for c in RECOMPUTED_CHECKS:
            run.fail(c, f"recomputation failed: {exc.problem}")
        return
    scores = _as_stored(card.scores, scores)
    reported: dict[str, int] = {}
    diffs: list[Diff] = []
    _diff(card.scores.model_dump(mode="json"), scores.model_dump(mode="json"), (), diffs, limit=10_000)
    _report_diffs(run, diffs, ("scores",), _score_check, reported)
    if totals is not None:
        diffs = []
        _diff(card.totals.model_dump(mode="json"), totals.model_dump(mode="json"), (), diffs)
        _report_diffs(run, diffs, ("totals",), _totals_check, None)
    if len(results) != len(card.results):
        run.fail("metrics", f"recomputation produced {len(results)} results for {len(card.results)} stored",
                 "$.results")
    else:
        for i, (mine, theirs) in enumerate(zip(card.results, results)):
            diffs = []
            _diff(mine.model_dump(mode="json"), theirs.model_dump(mode="json"), (), diffs)
            _report_diffs(run, diffs, ("results", i), _entry_check, reported)
    _check_signature_semantics(run, card)
    run.done(*RECOMPUTED_CHECKS)


def _as_stored(stored: Scores, recomputed: Scores) -> Scores:
    """The recomputed scores, less the optional fields a card may lack: ``signatures.composite`` is compared only
    when the card has one (cards written before it existed are valid without it; one that has it must equal the
    recomputation)."""
    if stored.signatures.composite is None and recomputed.signatures.composite is not None:
        sig = recomputed.signatures.model_copy(update={"composite": None})
        return recomputed.model_copy(update={"signatures": sig})
    return recomputed


def _sig_fields(sig: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in sig.split("|"):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k] = v
    return out


def _check_signature_semantics(run: CardRun, card: RunCard) -> None:
    """A chrF++ score must carry a chrF++ signature (nc:6, nw:2), and every signature the installed sacrebleu."""
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


def check_judges(run: CardRun, card: RunCard) -> None:
    """Judge summaries must agree with the per-entry verdicts (the judge itself cannot be re-run here).

    Per judge: every result has a verdict; n_scored/n_failed/n_not_sent count the statuses; entry judges send exactly
    the usable outputs (others are ``not_sent``) and their mean is the mean of scores with unscored entries at
    ``worst_score`` (mtboard.judges.run); parse_failure_rate = unparsed / answers; a scored verdict has a score.
    Totals: judge token sums equal the summaries' sums. Without judges: no verdicts, judge totals zero.
    """
    t = card.totals
    if not card.judges:
        kinds = {k for r in card.results for k in r.judgements}
        if kinds:
            run.fail("judges", f"results carry verdicts of {len(kinds)} judge(s) that have no summary in $.judges",
                     "$.judges")
        if t.judge_prompt_tokens or t.judge_completion_tokens or t.judge_cost_usd is not None:
            run.fail("judges", "judge totals are set but no judge ran", "$.totals")
        if not run.failed("judges"):
            run.skip("judges", "no judges ran")
        return
    for kind, summary in card.judges.items():
        where = f"$.judges.{kind}"
        if summary.kind != kind:
            run.fail("judges", "summary kind differs from its key", f"{where}.kind")
        verdicts = [r.judgements.get(kind) for r in card.results]
        present = [v for v in verdicts if v is not None]
        if len(present) != len(card.results):
            run.fail("judges", f"{len(card.results) - len(present)} results have no verdict of this judge", where)
            continue
        counts = {s: sum(1 for v in present if v.status == s) for s in ("scored", "judge_failed", "not_sent")}
        for name, key in (("n_scored", "scored"), ("n_failed", "judge_failed"), ("n_not_sent", "not_sent")):
            if getattr(summary, name) != counts[key]:
                run.fail("judges", f"{name} {getattr(summary, name)} but {counts[key]} verdicts say {key}",
                         f"{where}.{name}")
        if summary.n_answers is not None and summary.n_unparsed_answers is not None:
            rate = summary.n_unparsed_answers / summary.n_answers if summary.n_answers else 0.0
            if summary.parse_failure_rate != rate:
                run.fail("judges", f"parse_failure_rate {summary.parse_failure_rate} but n_unparsed_answers/"
                                   f"n_answers = {rate}", f"{where}.parse_failure_rate")
        for i, (r, v) in enumerate(zip(card.results, verdicts)):
            if v.status == "scored" and v.score is None:
                run.fail("judges", "a scored verdict has no score", f"$.results[{i}].judgements.{kind}.score")
            if kind != "checkpoints" and (v.status == "not_sent") != (r.checks.outcome.value != "usable"):
                run.fail("judges", "only entries without usable output may be not_sent, and all of them must be",
                         f"$.results[{i}].judgements.{kind}.status")
        if kind != "checkpoints" and summary.worst_score is not None:
            vals = [v.score if v.score is not None else summary.worst_score for v in verdicts]
            mean = statistics.fmean(vals) if vals else None
            if summary.mean != mean:
                run.fail("judges", f"mean {summary.mean} but the verdicts give {mean}", f"{where}.mean")
    sums = {"judge_prompt_tokens": sum(j.prompt_tokens or 0 for j in card.judges.values()),
            "judge_completion_tokens": sum(j.completion_tokens or 0 for j in card.judges.values())}
    for name, value in sums.items():
        if getattr(t, name) != value:
            run.fail("judges", f"{name} {getattr(t, name)} but the judge summaries sum to {value}", f"$.totals.{name}")
    costs = [j.cost_usd for j in card.judges.values()]
    cost = sum(costs) if costs and all(c is not None for c in costs) else None  # type: ignore[arg-type]
    if t.judge_cost_usd != cost:
        run.fail("judges", f"judge_cost_usd {t.judge_cost_usd} but the judge summaries sum to {cost}",
                 "$.totals.judge_cost_usd")
    run.done("judges")
