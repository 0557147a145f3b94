"""The ``judges`` check, part 2: judgements bound to the judge's words (issue 32, item 4).

A per-entry judge's verdict keeps the answer that decided it (``raw_answer``). Here each stored answer is parsed
again with the parser version the judge summary records (the versioned registry :mod:`mtboard.judges.parsers`) and
the verdict re-derived field by field (:func:`check_answer`); the answers, attempts and calls the summary counts
are checked against the verdicts (:func:`check_answer_counts`); the checkpoint judge, whose key is not in the card,
gets the checks that need no key (:func:`check_checkpoint_verdict`, :func:`check_kind_extras`).
:mod:`mtboard.validate.judging` calls these for every judge and checks what follows from the verdicts.

What stays declared, and why, is in each judge model's ``DECLARED_WHY`` (:mod:`mtboard.core.schema.judgements`):
above all the raw answer itself — what the judge said; an answer edited together with its verdict is the declared
text, unless a judge transcript is attested.
"""

from __future__ import annotations

from mtboard.core.schema import EntryResult, JudgeSummary, JudgeVerdict
from mtboard.judges.base import JudgeParseError
from mtboard.judges.calls import not_sent
from mtboard.judges.parsers import CHECKPOINT_PARSERS, EntryParser, entry_parser, known_versions
from mtboard.validate.report import CardRun

TRANSPORT_PREFIX = "judge call failed ("
"""How :func:`mtboard.judges.run._judge_entry` starts the justification of a verdict whose call got no answer."""
REJUDGE_FIX = ("re-judge the card with this mtboard (`mtboard judge WORKDIR`: the work directory's judge cache "
               "answers every request again at no cost)")


_VERDICT_FIELDS = ("status", "score", "context_behavior", "subscores", "flags", "justification", "attempts",
                   "raw_answer")
"""Verdict fields compared one by one with their re-derivation (``errors`` is compared error by error)."""


def compare_verdict(run: CardRun, got: JudgeVerdict, want: JudgeVerdict, why: str, where: str) -> None:
    """Fail each field of ``got`` that differs from its re-derivation ``want``, naming the field (an MQM error by
    its index and field); ``why`` says where ``want`` comes from."""
    for name in _VERDICT_FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        if a != b:
            run.fail("judges", f"{name} {a!r} but {why} gives {b!r}", f"{where}.{name}")
    if len(got.errors) != len(want.errors):
        run.fail("judges", f"{len(got.errors)} MQM errors but {why} gives {len(want.errors)}", f"{where}.errors")
        return
    for k, (e, f) in enumerate(zip(got.errors, want.errors)):
        for name in ("severity", "category", "span"):
            if getattr(e, name) != getattr(f, name):
                run.fail("judges", f"{name} {getattr(e, name)!r} but {why} gives {getattr(f, name)!r}",
                         f"{where}.errors[{k}].{name}")


def check_answer(run: CardRun, parse: EntryParser, worst: float, r: EntryResult, v: JudgeVerdict,
                  where: str) -> None:
    """A per-entry judge's verdict re-derived from the judge's words (issue 32, item 4).

    * ``not_sent``: exactly :func:`mtboard.judges.calls.not_sent` for the entry's outcome (worst value, no answer);
    * ``scored``: ``raw_answer`` is required and is parsed again with the recorded parser version; every field
      (errors with severities, classes and spans, context label, subscores, flags, justification, score) must equal
      the parse;
    * ``judge_failed``: the stored answer (the last one) must not parse; the justification is the one the judging
      wrote: ``answer did not parse after N attempts: <that parse's reason>``, or after a transport failure
      ``judge call failed (…)`` (the transport's message is declared); no errors, label, subscores or flags.

    A scored verdict without its answer is left to :func:`missing_answers` (refused once per judge)."""
    if v.status == "not_sent":
        compare_verdict(run, v, not_sent(worst, r), "the entry's outcome (not sent to the judge)", where)
        return
    if v.status == "scored":
        if v.raw_answer is None:
            return  # reported once per judge by missing_answers
        try:
            parsed = parse(v.raw_answer)
        except JudgeParseError as exc:
            run.fail("judges", f"the judge's stored answer does not parse ({exc.reason}), yet the verdict is scored",
                     f"{where}.status")
            return
        want = parsed.model_copy(update={"attempts": v.attempts, "raw_answer": v.raw_answer})
        compare_verdict(run, v, want, "the judge's answer parsed again", where)
        return
    reason: str | None = None
    if v.raw_answer is not None:
        try:
            parsed = parse(v.raw_answer)
        except JudgeParseError as exc:
            reason = exc.reason
        else:
            run.fail("judges", f"the judge's stored answer parses (score {parsed.score}), yet the verdict is "
                               "judge_failed", f"{where}.status")
            return
    justification = v.justification or ""
    if not justification.startswith(TRANSPORT_PREFIX):
        text = f"answer did not parse after {v.attempts} attempts: {reason}" if reason is not None else None
        if justification != text:
            run.fail("judges", "a judge_failed verdict's justification is the judging's own: 'answer did not parse "
                               "after N attempts: <the stored answer's parse error>' or 'judge call failed (…)'"
                               + ("" if reason is not None else " (no stored answer: only the latter)"),
                     f"{where}.justification")
    empty = JudgeVerdict(status="judge_failed", score=None, attempts=v.attempts, raw_answer=v.raw_answer,
                         justification=v.justification)
    compare_verdict(run, v, empty, "a failed judgement", where)


def missing_answers(run: CardRun, kind: str, verdicts: list[JudgeVerdict]) -> None:
    """Refuse a per-entry judge's scored verdicts that keep no answer (cards judged before answers were kept, issue
    32): one problem per judge, naming the first such verdict and the count. There is no size limit that drops an
    answer (the judge's output is capped by ``max_tokens``; the card by :data:`mtboard.core.safejson.MAX_CARD_BYTES`),
    so a missing answer is never taken as declared: re-judging answers from the work directory's cache for free."""
    lacking = [i for i, v in enumerate(verdicts) if v.status == "scored" and v.raw_answer is None]
    if lacking:
        run.fail("judges", f"{len(lacking)} scored verdict(s) of the {kind} judge keep no judge answer (raw_answer), "
                           f"so they cannot be parsed again; fix: {REJUDGE_FIX}",
                 f"$.results[{lacking[0]}].judgements.{kind}.raw_answer")


def check_checkpoint_verdict(run: CardRun, v: JudgeVerdict, where: str) -> None:
    """What a checkpoint verdict's fields must agree on without the key (which is not in the card): no MQM errors or
    context label; a scored verdict keeps no answer (the answers are document-level) and flags exactly its failed
    points (``PID:fail``, sorted), then ``ADDITION`` / ``UNTRANSLATED`` (the judge's findings, declared)."""
    if v.errors:
        run.fail("judges", "checkpoint verdicts list no MQM errors", f"{where}.errors")
    if v.context_behavior is not None:
        run.fail("judges", "checkpoint verdicts carry no context-behaviour label", f"{where}.context_behavior")
    if v.status != "scored":
        if v.flags or v.subscores:
            run.fail("judges", "only scored checkpoint verdicts carry subscores and flags", f"{where}.flags")
        return
    if v.raw_answer is not None:
        run.fail("judges", "a scored checkpoint verdict keeps no answer (the answers are document-level)",
                 f"{where}.raw_answer")
    failed = sorted(f"{pid}:fail" for pid, x in v.subscores.items() if x == 0.0)
    found = [f for f in v.flags if f in ("ADDITION", "UNTRANSLATED")]
    if v.flags != failed + found or found != sorted(set(found)):
        run.fail("judges", f"flags must be the failed points {failed} then ADDITION / UNTRANSLATED",
                 f"{where}.flags")


def check_answer_counts(run: CardRun, kind: str, summary: JudgeSummary, verdicts: list[JudgeVerdict],
                         where: str) -> None:
    """Answers, attempts and calls agree with the verdicts.

    Every kind: ``n_answers``, ``n_unparsed_answers``, ``n_unanswered_calls`` and ``max_attempts`` are recorded;
    unparsed and cached answers are at most the answers; no verdict took more than ``max_attempts``. Per-entry
    judges also: a scored verdict took 1 to ``max_attempts`` answers and one that failed because nothing parsed
    exactly ``max_attempts``; each scored verdict rests on one answer that parsed, so ``n_unparsed_answers =
    n_answers − n_scored``; each ``judge call failed`` verdict is one unanswered call; the attempts of the sent
    verdicts sum to ``n_answers + n_unanswered_calls`` (every attempt is one call, answered or not)."""
    missing = [n for n in ("n_answers", "n_unparsed_answers", "n_unanswered_calls", "max_attempts")
               if getattr(summary, n) is None]
    for name in missing:
        run.fail("judges", f"{name} is not recorded (judging records it; the answers and attempts are checked "
                           f"against it); fix: {REJUDGE_FIX}", f"{where}.{name}")
    if missing:
        return
    n_answers, unparsed, top = summary.n_answers or 0, summary.n_unparsed_answers or 0, summary.max_attempts or 0
    if unparsed > n_answers:
        run.fail("judges", f"{unparsed} unparsed answers of {n_answers}", f"{where}.n_unparsed_answers")
    if (summary.n_cached_answers or 0) > n_answers:
        run.fail("judges", f"{summary.n_cached_answers} cached answers of {n_answers}", f"{where}.n_cached_answers")
    entry = kind != "checkpoints"
    for i, v in enumerate(verdicts):
        at = f"$.results[{i}].judgements.{kind}.attempts"
        transport = (v.justification or "").startswith(TRANSPORT_PREFIX)
        if v.attempts > top:
            run.fail("judges", f"attempts {v.attempts} but max_attempts is {top}", at)
        elif entry and v.status == "scored" and v.attempts < 1:
            run.fail("judges", "a scored verdict took at least one answer", at)
        elif entry and v.status == "judge_failed" and not transport and v.attempts != top:
            run.fail("judges", f"a judgement that failed because no answer parsed took max_attempts ({top}) answers, "
                               f"not {v.attempts}", at)
    if not entry:
        run0 = {v.attempts for v in verdicts if v.status != "not_sent"}
        if len(run0) > 1:  # every judged paragraph's verdict describes run 0's judging: one count of answers
            i = next(i for i, v in enumerate(verdicts) if v.status != "not_sent" and v.attempts != min(run0))
            run.fail("judges", f"checkpoint verdicts describe run 0's judging, which took one number of answers "
                               f"(found {sorted(run0)})", f"$.results[{i}].judgements.{kind}.attempts")
        return
    transports = sum(v.status == "judge_failed" and (v.justification or "").startswith(TRANSPORT_PREFIX)
                     for v in verdicts)
    if summary.n_unanswered_calls != transports:
        run.fail("judges", f"n_unanswered_calls {summary.n_unanswered_calls} but {transports} verdicts say the judge "
                           "call failed", f"{where}.n_unanswered_calls")
    if unparsed != n_answers - summary.n_scored:
        run.fail("judges", f"n_unparsed_answers {unparsed} but n_answers − n_scored = {n_answers - summary.n_scored}",
                 f"{where}.n_unparsed_answers")
    tried = sum(v.attempts for v in verdicts if v.status != "not_sent")
    if tried != n_answers + transports:
        run.fail("judges", f"the sent verdicts took {tried} attempts but n_answers + n_unanswered_calls = "
                           f"{n_answers + transports}", f"{where}.n_answers")


def check_parser(run: CardRun, kind: str, summary: JudgeSummary, where: str) -> EntryParser | None:
    """The summary's ``parser`` is a version this mtboard knows (:mod:`mtboard.judges.parsers`). Returns the
    per-entry judge's parse function of that version (None for the checkpoint judge, or when unknown: reported).

    An unknown version is refused, not shown as declared: its answers cannot be parsed again, and re-judging with
    this mtboard costs nothing (the work directory's judge cache answers every request again)."""
    known = summary.parser in CHECKPOINT_PARSERS if kind == "checkpoints" else None
    parse = None if kind == "checkpoints" else entry_parser(kind, summary.parser)
    if known is False or (kind != "checkpoints" and parse is None):
        run.fail("judges", f"parser {summary.parser!r} is not a {kind} parser version this mtboard knows "
                           f"({', '.join(known_versions(kind))}): its stored answers cannot be parsed again, so its "
                           f"verdicts are refused; fix: {REJUDGE_FIX}", f"{where}.parser")
    return parse


def check_kind_extras(run: CardRun, kind: str, summary: JudgeSummary, where: str) -> None:
    """Fields of one judge kind only: ``bench``, ``run_scores`` and ``failed_raw_answers`` are the checkpoint
    judge's (one failed raw answer per failed run); the per-entry judges leave them empty."""
    if kind != "checkpoints":
        for name in ("bench", "run_scores", "failed_raw_answers"):
            if getattr(summary, name):
                run.fail("judges", f"{name} is the checkpoint judge's; the {kind} judge leaves it empty",
                         f"{where}.{name}")
        return
    if summary.bench is None:
        run.fail("judges", "the checkpoint judge records its benchmark", f"{where}.bench")
    n_failed = summary.runs - len(summary.run_scores)
    if len(summary.failed_raw_answers) != n_failed:
        run.fail("judges", f"{len(summary.failed_raw_answers)} failed raw answers but {n_failed} runs failed "
                           f"({summary.runs} runs, {len(summary.run_scores)} scored)", f"{where}.failed_raw_answers")
