"""Format attempts in a card (``--format-attempts``, :mod:`mtboard.run.format_attempts`; BookTrans; issue 39),
reported under the ``method`` check.

Rules (each problem one line naming the field):

* ``method.format_attempts`` is absent (one answer per entry, every card made before) or 2–5, and equals the
  fingerprint's ``format_attempts`` component (present exactly when it is set): the limit is part of the experiment.
* Per entry (results and replicate results): 1 ≤ ``format_attempts`` ≤ the limit (1 without the setting);
  ``format_attempts`` = 1 + ``len(failed_attempts)``; every failed attempt fails the format rules again, with the
  rule it records (:func:`mtboard.score.checks.format_failure` re-run on its ``raw_predicted`` and ``error_kind``),
  and none has a transport or backend error kind (those are retried by the client, never re-asked); the kept
  answer passes the format rules unless the limit was spent (``format_attempts`` = the limit) or it ended on a
  transport failure (an answer that passed would not have been asked again, one that failed would have been).

The penalty itself (docs/SCORING_SPEC.md §3.4) is part of the composite the ``metrics`` check recomputes from the
stored outputs and these counts (:func:`mtboard.score.scoring.score_run`), so an edited count that the rules above
let through still moves the composite away from the card's.

What no rule here can see: an entry whose failed attempts were deleted along with its count (a card claiming one
answer where the model needed three) — only a re-run (``mtboard verify``, GDS verified) or the work directory's
``raw.jsonl`` (every request with its ``format_attempt``) shows it.
"""

from __future__ import annotations

from mtboard.backends.base import Backend
from mtboard.core.schema import MAX_FORMAT_ATTEMPTS, RunCard
from mtboard.score.checks import RETRIED_BY_TRANSPORT, format_failure
from mtboard.validate.report import CardRun


def check_format_attempts(run: CardRun, card: RunCard, cls: type[Backend] | None) -> None:
    """The rules of the module docstring, as ``method`` problems (``cls``: the card's registered backend, for its
    ``strip_unknown_marks``; None when unknown)."""
    limit = card.method.format_attempts
    fp = card.fingerprint.components
    if limit is not None and not 2 <= limit <= MAX_FORMAT_ATTEMPTS:
        run.fail("method", f"method.format_attempts must be 2–{MAX_FORMAT_ATTEMPTS} when present (absent: one "
                           "answer per entry)", "$.method.format_attempts")
    if fp.get("format_attempts") != limit:
        run.fail("method", "the fingerprint's format_attempts component differs from method.format_attempts (the "
                           "limit is part of the experiment's identity)", "$.fingerprint.components.format_attempts")
    allowed = limit or 1
    src, tgt = card.dataset.source_language, card.dataset.target_language
    strip = cls.strip_unknown_marks if cls is not None else False
    sources = {r.entry_id: r.source for r in card.results}
    for where, results in _all_results(card):
        for i, r in enumerate(results):
            at = f"$.{where}[{i}]"
            n, failed = r.format_attempts, r.failed_attempts
            if not 1 <= n <= allowed:
                run.fail("method", f"format_attempts {n} must be 1–{allowed} (method.format_attempts "
                                   f"{limit if limit is not None else 'absent'})", f"{at}.format_attempts")
                continue
            if n != 1 + len(failed):
                run.fail("method", f"format_attempts {n} must be 1 + the {len(failed)} kept failed attempts",
                         f"{at}.format_attempts")
                continue
            source = sources.get(r.entry_id, "")
            for k, a in enumerate(failed):
                if a.error_kind is not None and a.error_kind in RETRIED_BY_TRANSPORT:
                    run.fail("method", f"a failed attempt with error kind {a.error_kind.value} is a transport or "
                                       "configuration failure: retried by the client, never re-asked",
                             f"{at}.failed_attempts[{k}].error_kind")
                    continue
                rule = format_failure(source=source, raw_predicted=a.raw_predicted, error_kind=a.error_kind,
                                      source_language=src, target_language=tgt, strip_unknown_marks=strip)
                if rule != a.rule:
                    got = "passes the format rules" if rule is None else f"fails rule {rule}"
                    run.fail("method", f"the failed attempt records rule {a.rule} but its answer {got}",
                             f"{at}.failed_attempts[{k}].rule")
            if n < allowed and not (r.error_kind is not None and r.error_kind in RETRIED_BY_TRANSPORT):
                rule = format_failure(source=source, raw_predicted=r.raw_predicted, error_kind=r.error_kind,
                                      source_language=src, target_language=tgt, strip_unknown_marks=strip)
                if rule is not None:
                    run.fail("method", f"the kept answer fails format rule {rule} after {n} of {allowed} attempts "
                                       "(it would have been asked again)", f"{at}.format_attempts")


def _all_results(card: RunCard):
    yield "results", card.results
    for k, rr in enumerate(card.replicate_runs):
        yield f"replicate_runs[{k}].results", rr.results


__all__ = ["check_format_attempts"]
