"""Issue 32, item 4: the ``judges`` check's re-derivation of each verdict from the judge's words
(:mod:`mtboard.validate.judge_answers`) and the parser registry (:mod:`mtboard.judges.parsers`), function by function.

Fast unit tests on small hand-made verdicts and summaries (no card, no server): the whole-card tamper suite
(tests/test_validate_judged_tamper.py, ~50 s) is too slow to run for every mutant of these modules, so these pin each
branch, message and field path (``scripts/mutation.py judging``).

How the expected values were checked: the MQM answers are parsed by hand with the GEMBA-MQM weights (minor 1, major 5,
critical 25; ``docs/judges.md``), e.g. one major + one minor error = 6.0; the parse errors' reasons are the parsers'
own one-line messages (``''`` → ``empty answer``; an answer whose last line is not ``contextBehavior:`` → ``no
contextBehavior line; last line is '…'``), read in mtboard/judges/gemba_mqm.py; the attempt and answer counts of
:func:`test_consistent_counts_pass` are added up by hand in its comment.
"""

from __future__ import annotations

import pytest

from mtboard.core.schema import EntryResult, JudgeSummary, JudgeVerdict, MqmError
from mtboard.core.schema.results import MechanicalDecision
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.parsers import (CHECKPOINT_PARSERS, ENTRY_PARSERS, entry_parser, known_versions)
from mtboard.judges.rubric import parse_rubric
from mtboard.validate.judge_answers import (REJUDGE_FIX, check_answer, check_answer_counts, check_checkpoint_verdict,
                                            check_kind_extras, check_parser, compare_verdict, missing_answers)
from mtboard.validate.report import CardRun

MQM_V = "gemba-mqm-context/1 (uncapped)"
RUBRIC_V = "rubric/1"
W = "$.results[1].judgements.gemba-mqm"
MQM_6 = 'Critical:\nno-error\nMajor:\naccuracy/omission - "x"\nMinor:\nfluency/grammar - "y"\ncontextBehavior: unclear'
"""One major (5) + one minor (1) error: penalty 6.0, label ``unclear``."""
UNPARSED = "hello"
UNPARSED_WHY = "no contextBehavior line; last line is 'hello'"


def _run() -> CardRun:
    return CardRun("card.json")


def _probs(run: CardRun) -> list[tuple[str, str | None, str]]:
    return [(p.check, p.field, p.message) for p in run.problems]


def _scored_6(attempts: int = 2) -> JudgeVerdict:
    """What parsing MQM_6 gives, written out by hand."""
    return JudgeVerdict(status="scored", score=6.0, attempts=attempts, raw_answer=MQM_6, context_behavior="unclear",
                        errors=[MqmError(severity="major", category="accuracy/omission", span="x"),
                                MqmError(severity="minor", category="fluency/grammar", span="y")])


def _result(outcome: str = "no_usable_output", rule: str | None = "empty") -> EntryResult:
    return EntryResult.model_construct(checks=MechanicalDecision(outcome=outcome, rule=rule))


def _summary(kind: str = "gemba-mqm", **kw) -> JudgeSummary:
    base = dict(kind=kind, backend="openai", model="judge-model", prompt_sha256="0" * 64, family_check="ok",
                n_scored=0, n_failed=0, n_not_sent=0, parse_failure_rate=0.0, mean=None)
    return JudgeSummary(**{**base, **kw})


# --------------------------------------------------------------------------------------------------------------------
# compare_verdict


def test_compare_equal_verdicts_adds_nothing():
    run = _run()
    compare_verdict(run, _scored_6(), _scored_6(), "why", W)
    assert run.problems == [] and run.status == {}


def test_compare_names_each_differing_field_in_order():
    run = _run()
    got = _scored_6().model_copy(update={"score": 5.0, "flags": ["X"], "justification": "j", "status": "judge_failed",
                                         "context_behavior": "ignored", "subscores": {"a": 1.0}, "attempts": 3,
                                         "raw_answer": "r"})
    compare_verdict(run, got, _scored_6(), "the parse", W)
    assert _probs(run) == [
        ("judges", f"{W}.status", "status 'judge_failed' but the parse gives 'scored'"),
        ("judges", f"{W}.score", "score 5.0 but the parse gives 6.0"),
        ("judges", f"{W}.context_behavior", "context_behavior 'ignored' but the parse gives 'unclear'"),
        ("judges", f"{W}.subscores", "subscores {'a': 1.0} but the parse gives {}"),
        ("judges", f"{W}.flags", "flags ['X'] but the parse gives []"),
        ("judges", f"{W}.justification", "justification 'j' but the parse gives None"),
        ("judges", f"{W}.attempts", "attempts 3 but the parse gives 2"),
        ("judges", f"{W}.raw_answer", f"raw_answer 'r' but the parse gives {MQM_6!r}"),
    ]
    assert run.status == {"judges": "fail"}


def test_compare_error_count_first_then_each_error_field():
    want = _scored_6()
    run = _run()
    # one error fewer: only the count is reported (the errors are not paired up)
    compare_verdict(run, want.model_copy(update={"errors": [MqmError(severity="minor", category="c", span="s")]}),
                    want, "the parse", W)
    assert _probs(run) == [("judges", f"{W}.errors", "1 MQM errors but the parse gives 2")]
    run = _run()
    edited = [MqmError(severity="critical", category="accuracy/omission", span="x"),
              MqmError(severity="minor", category="style/awkward", span="z")]
    compare_verdict(run, want.model_copy(update={"errors": edited}), want, "the parse", W)
    assert _probs(run) == [
        ("judges", f"{W}.errors[0].severity", "severity 'critical' but the parse gives 'major'"),
        ("judges", f"{W}.errors[1].category", "category 'style/awkward' but the parse gives 'fluency/grammar'"),
        ("judges", f"{W}.errors[1].span", "span 'z' but the parse gives 'y'"),
    ]


# --------------------------------------------------------------------------------------------------------------------
# check_answer: not_sent


NOT_SENT = JudgeVerdict(status="not_sent", score=25.0, attempts=0,
                        justification="not sent: no_usable_output (empty); scored the worst value")
"""What mtboard.judges.calls.not_sent writes for an entry with no usable output (rule ``empty``), worst value 25."""


def test_not_sent_verdict_is_exactly_the_outcomes():
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result(), NOT_SENT, W)
    assert run.problems == []
    # without a rule the justification has no parenthesis
    check_answer(run, parse_mqm, 25.0, _result("source_untranslated", None), NOT_SENT.model_copy(
        update={"justification": "not sent: source_untranslated; scored the worst value"}), W)
    assert run.problems == []


def test_not_sent_verdict_with_another_score_or_an_answer_is_refused():
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result(), NOT_SENT.model_copy(update={"score": 0.0, "raw_answer": MQM_6}), W)
    assert _probs(run) == [
        ("judges", f"{W}.score", "score 0.0 but the entry's outcome (not sent to the judge) gives 25.0"),
        ("judges", f"{W}.raw_answer", f"raw_answer {MQM_6!r} but the entry's outcome (not sent to the judge) gives None"),
    ]


# --------------------------------------------------------------------------------------------------------------------
# check_answer: scored


def test_scored_verdict_equal_to_its_answer_parsed_again_passes():
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result("usable", None), _scored_6(attempts=3), W)
    assert run.problems == []


def test_scored_verdict_without_answer_is_left_to_missing_answers():
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result("usable", None), _scored_6().model_copy(update={"raw_answer": None}), W)
    assert run.problems == []


def test_scored_verdict_whose_answer_does_not_parse_is_refused_once():
    run = _run()
    v = _scored_6().model_copy(update={"raw_answer": ""})
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)
    assert _probs(run) == [("judges", f"{W}.status",
                            "the judge's stored answer does not parse (empty answer), yet the verdict is scored")]


def test_scored_verdict_edited_away_from_its_answer_is_refused_per_field():
    run = _run()
    v = _scored_6().model_copy(update={"score": 1.0, "context_behavior": "used_correctly"})
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)
    assert _probs(run) == [
        ("judges", f"{W}.score", "score 1.0 but the judge's answer parsed again gives 6.0"),
        ("judges", f"{W}.context_behavior",
         "context_behavior 'used_correctly' but the judge's answer parsed again gives 'unclear'"),
    ]


def test_scored_rubric_verdict_uses_the_parser_given():
    answer = "adequacy: 3\npragmatics: 4\nfluency: 2\nflags: IDIOM, NEG\njustification: Idiom rendered literally."
    v = JudgeVerdict(status="scored", score=9.0, subscores={"adequacy": 3.0, "pragmatics": 4.0, "fluency": 2.0},
                     flags=["IDIOM", "NEG"], justification="Idiom rendered literally.", attempts=1, raw_answer=answer)
    run = _run()
    check_answer(run, parse_rubric, 0.0, _result("usable", None), v, "$.results[0].judgements.rubric")
    assert run.problems == []
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)  # the MQM parser refuses a rubric answer
    assert [(f, m.split(" (")[0]) for _, f, m in _probs(run)] == [(f"{W}.status", "the judge's stored answer does not parse")]


# --------------------------------------------------------------------------------------------------------------------
# check_answer: judge_failed


def _failed(**kw) -> JudgeVerdict:
    base = dict(status="judge_failed", score=None, attempts=3, raw_answer=UNPARSED,
                justification=f"answer did not parse after 3 attempts: {UNPARSED_WHY}")
    return JudgeVerdict(**{**base, **kw})


@pytest.mark.parametrize("v", [
    _failed(),
    _failed(raw_answer="", justification="answer did not parse after 3 attempts: empty answer"),  # "" is an answer
    _failed(raw_answer=None, attempts=1, justification="judge call failed (timeout): read timed out"),
    _failed(attempts=2, justification="judge call failed (http_500): server error"),  # an unparsed answer, then none
], ids=["unparsed", "empty answer", "transport", "transport after an unparsed answer"])
def test_failed_verdict_as_judging_writes_it_passes(v):
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)
    assert run.problems == []


def test_failed_verdict_whose_answer_parses_is_refused_once():
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result("usable", None), _failed(raw_answer=MQM_6, justification="x"), W)
    assert _probs(run) == [("judges", f"{W}.status",
                            "the judge's stored answer parses (score 6.0), yet the verdict is judge_failed")]


JUSTIFICATION_RULE = ("a judge_failed verdict's justification is the judging's own: 'answer did not parse after N "
                      "attempts: <the stored answer's parse error>' or 'judge call failed (…)'")


@pytest.mark.parametrize(("v", "suffix"), [
    (_failed(justification=f"answer did not parse after 2 attempts: {UNPARSED_WHY}"), ""),  # 3 attempts, not 2
    (_failed(justification="answer did not parse after 3 attempts: empty answer"), ""),      # another reason
    (_failed(justification=None), ""),
    (_failed(raw_answer=None, justification="answer did not parse after 3 attempts: None"),
     " (no stored answer: only the latter)"),
    (_failed(raw_answer=None, justification=None), " (no stored answer: only the latter)"),
    (_failed(justification="Judge call failed (timeout)"), ""),
])
def test_failed_verdict_with_another_justification_is_refused(v, suffix):
    run = _run()
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)
    assert _probs(run) == [("judges", f"{W}.justification", JUSTIFICATION_RULE + suffix)]


def test_failed_verdict_carries_nothing_but_its_answer_and_attempts():
    run = _run()
    v = _failed(score=3.0, flags=["NEG"], subscores={"a": 1.0}, context_behavior="unclear",
                errors=[MqmError(severity="minor", category="other", span="s")])
    check_answer(run, parse_mqm, 25.0, _result("usable", None), v, W)
    assert _probs(run) == [
        ("judges", f"{W}.score", "score 3.0 but a failed judgement gives None"),
        ("judges", f"{W}.context_behavior", "context_behavior 'unclear' but a failed judgement gives None"),
        ("judges", f"{W}.subscores", "subscores {'a': 1.0} but a failed judgement gives {}"),
        ("judges", f"{W}.flags", "flags ['NEG'] but a failed judgement gives []"),
        ("judges", f"{W}.errors", "1 MQM errors but a failed judgement gives 0"),
    ]


# --------------------------------------------------------------------------------------------------------------------
# missing_answers


def test_scored_verdicts_without_answers_are_refused_once_per_judge():
    run = _run()
    verdicts = [_scored_6(), NOT_SENT, _scored_6().model_copy(update={"raw_answer": None}),
                _failed(raw_answer=None, justification="judge call failed (timeout): t"),
                _scored_6().model_copy(update={"raw_answer": None})]
    missing_answers(run, "rubric", verdicts)
    assert _probs(run) == [("judges", "$.results[2].judgements.rubric.raw_answer",
                            "2 scored verdict(s) of the rubric judge keep no judge answer (raw_answer), so they cannot "
                            f"be parsed again; fix: {REJUDGE_FIX}")]
    run = _run()
    missing_answers(run, "rubric", verdicts[:2] + verdicts[3:4])
    assert run.problems == []
    assert REJUDGE_FIX.startswith("re-judge the card with this mtboard (`mtboard judge WORKDIR`")


# --------------------------------------------------------------------------------------------------------------------
# check_checkpoint_verdict

CW = "$.results[0].judgements.checkpoints"


def _cp(**kw) -> JudgeVerdict:
    base = dict(status="scored", score=100.0 / 3, attempts=1, subscores={"B01": 1.0, "A02": 0.0, "A01": 0.0},
                flags=["A01:fail", "A02:fail", "ADDITION", "UNTRANSLATED"])
    return JudgeVerdict(**{**base, **kw})


def test_checkpoint_verdict_with_failed_points_then_findings_passes():
    run = _run()
    check_checkpoint_verdict(run, _cp(), CW)
    check_checkpoint_verdict(run, _cp(flags=["A01:fail", "A02:fail"]), CW)
    check_checkpoint_verdict(run, _cp(flags=["A01:fail", "A02:fail", "UNTRANSLATED"]), CW)
    check_checkpoint_verdict(run, _cp(subscores={"A01": 0.5}, flags=[]), CW)  # only 0.0 is a failed point
    check_checkpoint_verdict(run, JudgeVerdict(status="not_sent", score=None), CW)
    check_checkpoint_verdict(run, JudgeVerdict(status="judge_failed", raw_answer="x", attempts=2), CW)
    assert run.problems == []


@pytest.mark.parametrize("flags", [
    ["A02:fail", "A01:fail", "ADDITION"],            # failed points out of order
    ["A01:fail", "ADDITION"],                        # a failed point missing
    ["A01:fail", "A02:fail", "B01:fail"],            # a passed point flagged
    ["A01:fail", "A02:fail", "UNTRANSLATED", "ADDITION"],  # findings out of order
    ["A01:fail", "A02:fail", "ADDITION", "ADDITION"],      # a finding twice
    ["A01:fail", "A02:fail", "NAME"],                # another flag
    ["ADDITION", "A01:fail", "A02:fail"],            # findings before the failed points
])
def test_checkpoint_flags_other_than_failed_points_then_findings_are_refused(flags):
    run = _run()
    check_checkpoint_verdict(run, _cp(flags=flags), CW)
    assert _probs(run) == [("judges", f"{CW}.flags",
                            "flags must be the failed points ['A01:fail', 'A02:fail'] then ADDITION / UNTRANSLATED")]


def test_checkpoint_verdict_fields_only_the_per_entry_judges_have():
    run = _run()
    check_checkpoint_verdict(run, _cp(errors=[MqmError(severity="minor", category="other", span="s")],
                                      context_behavior="unclear", raw_answer="answer"), CW)
    assert _probs(run) == [
        ("judges", f"{CW}.errors", "checkpoint verdicts list no MQM errors"),
        ("judges", f"{CW}.context_behavior", "checkpoint verdicts carry no context-behaviour label"),
        ("judges", f"{CW}.raw_answer", "a scored checkpoint verdict keeps no answer (the answers are document-level)"),
    ]


@pytest.mark.parametrize("extra", [{"flags": ["A01:fail"]}, {"subscores": {"A01": 0.0}}])
def test_unscored_checkpoint_verdict_carries_no_points(extra):
    run = _run()
    check_checkpoint_verdict(run, JudgeVerdict(status="judge_failed", attempts=1, **extra), CW)
    assert _probs(run) == [("judges", f"{CW}.flags", "only scored checkpoint verdicts carry subscores and flags")]


# --------------------------------------------------------------------------------------------------------------------
# check_answer_counts

SW = "$.judges.gemba-mqm"
AT = "$.results[{}].judgements.gemba-mqm.attempts"
TRANSPORT = "judge call failed (timeout): read timed out"


def _verdicts() -> list[JudgeVerdict]:
    return [_scored_6(attempts=1), _scored_6(attempts=2), _failed(attempts=3),
            _failed(raw_answer=None, attempts=1, justification=TRANSPORT), NOT_SENT]


def _counts(**kw) -> JudgeSummary:
    # _verdicts(): answers 1 + 2 + 3 = 6 (the transport attempt got none); unparsed 0 + 1 + 3 = 4 = 6 − 2 scored;
    # one unanswered call; attempts of the sent verdicts 1 + 2 + 3 + 1 = 7 = 6 answers + 1 unanswered call
    base = dict(n_scored=2, n_failed=2, n_not_sent=1, n_answers=6, n_unparsed_answers=4, n_unanswered_calls=1,
                max_attempts=3, n_cached_answers=6)
    return _summary(**{**base, **kw})


def test_consistent_counts_pass():
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(), _verdicts(), SW)
    assert run.problems == []
    run = _run()  # every answer unparsed, none cached, none scored (unparsed = answers is allowed)
    check_answer_counts(run, "gemba-mqm", _counts(n_scored=0, n_answers=3, n_unparsed_answers=3, n_unanswered_calls=0,
                                                  n_cached_answers=None), [_failed(attempts=3)], SW)
    assert run.problems == []
    run = _run()  # nothing sent: every count 0
    check_answer_counts(run, "gemba-mqm", _counts(n_scored=0, n_answers=0, n_unparsed_answers=0, n_unanswered_calls=0,
                                                  n_cached_answers=0), [NOT_SENT, NOT_SENT], SW)
    assert run.problems == []


def test_unrecorded_counts_are_refused_and_nothing_else_checked():
    run = _run()
    summary = _counts(n_answers=None, n_unparsed_answers=None, n_unanswered_calls=None, max_attempts=None)
    check_answer_counts(run, "gemba-mqm", summary, [_scored_6(attempts=9)], SW)
    tail = " is not recorded (judging records it; the answers and attempts are checked against it); fix: " + REJUDGE_FIX
    assert _probs(run) == [("judges", f"{SW}.{n}", n + tail)
                           for n in ("n_answers", "n_unparsed_answers", "n_unanswered_calls", "max_attempts")]
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(max_attempts=None), _verdicts(), SW)
    assert _probs(run) == [("judges", f"{SW}.max_attempts", "max_attempts" + tail)]


def test_more_unparsed_or_cached_answers_than_answers_are_refused():
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(n_unparsed_answers=7, n_cached_answers=7), _verdicts(), SW)
    assert _probs(run) == [
        ("judges", f"{SW}.n_unparsed_answers", "7 unparsed answers of 6"),
        ("judges", f"{SW}.n_cached_answers", "7 cached answers of 6"),
        ("judges", f"{SW}.n_unparsed_answers", "n_unparsed_answers 7 but n_answers − n_scored = 4"),
    ]


def test_each_verdicts_attempts_are_bounded():
    vs = _verdicts()
    vs[0] = _scored_6(attempts=4)
    vs[1] = _scored_6(attempts=0)
    vs[2] = _failed(attempts=2)
    run = _run()
    # answers 4 + 0 + 2 = 6 and unparsed 3 + 0 + 2 = 5 ≠ 6 − 2: only the per-verdict bounds and the unparsed count fail
    check_answer_counts(run, "gemba-mqm", _counts(n_unparsed_answers=4), vs, SW)
    assert _probs(run) == [
        ("judges", AT.format(0), "attempts 4 but max_attempts is 3"),
        ("judges", AT.format(1), "a scored verdict took at least one answer"),
        ("judges", AT.format(2), "a judgement that failed because no answer parsed took max_attempts (3) answers, "
                                 "not 2"),
    ]
    run = _run()  # a scored verdict with two answers while max_attempts is 1 (the schema's least: issue 32 item 3)
    check_answer_counts(run, "gemba-mqm", _counts(n_scored=1, n_answers=2, n_unparsed_answers=1, n_unanswered_calls=0,
                                                  max_attempts=1, n_cached_answers=0), [_scored_6(attempts=2)], SW)
    assert _probs(run) == [("judges", AT.format(0), "attempts 2 but max_attempts is 1")]


def test_unanswered_calls_unparsed_answers_and_attempts_add_up():
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(n_unanswered_calls=0), _verdicts(), SW)
    assert _probs(run) == [
        ("judges", f"{SW}.n_unanswered_calls", "n_unanswered_calls 0 but 1 verdicts say the judge call failed"),
    ]
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(n_answers=5, n_unparsed_answers=3, n_cached_answers=5),
                        _verdicts(), SW)
    assert _probs(run) == [("judges", f"{SW}.n_answers",
                            "the sent verdicts took 7 attempts but n_answers + n_unanswered_calls = 6")]
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(n_unparsed_answers=3), _verdicts(), SW)
    assert _probs(run) == [("judges", f"{SW}.n_unparsed_answers",
                            "n_unparsed_answers 3 but n_answers − n_scored = 4")]


def test_checkpoint_counts_describe_run_zero():
    cw = "$.judges.checkpoints"
    summary = _summary("checkpoints", n_scored=2, n_answers=2, n_unparsed_answers=2, n_unanswered_calls=5,
                       max_attempts=3)
    ok = [_cp(attempts=2), JudgeVerdict(status="not_sent", attempts=0), JudgeVerdict(status="judge_failed", attempts=2)]
    run = _run()  # the per-entry sums and bounds do not apply (the checkpoint answers are per document and run)
    check_answer_counts(run, "checkpoints", summary, ok, cw)
    assert run.problems == []
    run = _run()
    check_answer_counts(run, "checkpoints", summary, [_cp(attempts=1), JudgeVerdict(status="not_sent"),
                                                      _cp(attempts=2), _cp(attempts=1)], cw)
    assert _probs(run) == [("judges", "$.results[2].judgements.checkpoints.attempts",
                            "checkpoint verdicts describe run 0's judging, which took one number of answers "
                            "(found [1, 2])")]
    run = _run()
    check_answer_counts(run, "checkpoints", summary, [_cp(attempts=4), _cp(attempts=4)], cw)
    assert _probs(run) == [("judges", f"$.results[{i}].judgements.checkpoints.attempts",
                            "attempts 4 but max_attempts is 3") for i in (0, 1)]


# --------------------------------------------------------------------------------------------------------------------
# check_parser, check_kind_extras


def test_check_parser_returns_the_recorded_versions_parse_function():
    run = _run()
    assert check_parser(run, "gemba-mqm", _summary(parser=MQM_V), SW) is parse_mqm
    assert check_parser(run, "rubric", _summary("rubric", parser=RUBRIC_V), "$.judges.rubric") is parse_rubric
    assert check_parser(run, "checkpoints", _summary("checkpoints", parser="checkpoints/1"), "$.x") is None
    assert run.problems == []


@pytest.mark.parametrize(("kind", "parser", "known"), [
    ("gemba-mqm", "gemba-mqm-context/0", MQM_V),
    ("gemba-mqm", RUBRIC_V, MQM_V),          # another kind's version
    ("rubric", None, RUBRIC_V),
    ("checkpoints", "checkpoints/0", "checkpoints/1"),
    ("checkpoints", RUBRIC_V, "checkpoints/1"),
    ("checkpoints", None, "checkpoints/1"),
])
def test_check_parser_refuses_an_unknown_version_naming_the_known_ones(kind, parser, known):
    run = _run()
    assert check_parser(run, kind, _summary(kind, parser=parser), "$.judges.k") is None
    assert _probs(run) == [("judges", "$.judges.k.parser",
                            f"parser {parser!r} is not a {kind} parser version this mtboard knows ({known}): its "
                            f"stored answers cannot be parsed again, so its verdicts are refused; fix: {REJUDGE_FIX}")]


def test_per_entry_judges_leave_the_checkpoint_fields_empty():
    run = _run()
    check_kind_extras(run, "rubric", _summary("rubric"), "$.judges.rubric")
    assert run.problems == []
    check_kind_extras(run, "rubric", _summary("rubric", bench="bk", run_scores=[1.0], failed_raw_answers=["a"]),
                      "$.judges.rubric")
    assert _probs(run) == [("judges", f"$.judges.rubric.{n}", f"{n} is the checkpoint judge's; the rubric judge leaves "
                                                              "it empty")
                           for n in ("bench", "run_scores", "failed_raw_answers")]


def test_checkpoint_judge_records_its_bench_and_one_raw_answer_per_failed_run():
    cw = "$.judges.checkpoints"
    run = _run()
    check_kind_extras(run, "checkpoints", _summary("checkpoints", bench="b", runs=3, run_scores=[50.0, 60.0],
                                                   failed_raw_answers=["no END"]), cw)
    check_kind_extras(run, "checkpoints", _summary("checkpoints", bench="b", run_scores=[50.0]), cw)
    assert run.problems == []
    check_kind_extras(run, "checkpoints", _summary("checkpoints", runs=3, run_scores=[50.0, 60.0]), cw)
    assert _probs(run) == [
        ("judges", f"{cw}.bench", "the checkpoint judge records its benchmark"),
        ("judges", f"{cw}.failed_raw_answers", "0 failed raw answers but 1 runs failed (3 runs, 2 scored)"),
    ]


# --------------------------------------------------------------------------------------------------------------------
# mtboard.judges.parsers


def test_parser_registry_lookups():
    assert ENTRY_PARSERS == {("gemba-mqm", MQM_V): parse_mqm, ("rubric", RUBRIC_V): parse_rubric}
    assert CHECKPOINT_PARSERS == frozenset({"checkpoints/1"})
    assert entry_parser("gemba-mqm", MQM_V) is parse_mqm and entry_parser("rubric", RUBRIC_V) is parse_rubric
    assert entry_parser("rubric", None) is None and entry_parser("rubric", MQM_V) is None
    assert entry_parser("checkpoints", "checkpoints/1") is None
    assert known_versions("gemba-mqm") == [MQM_V] and known_versions("rubric") == [RUBRIC_V]
    assert known_versions("checkpoints") == ["checkpoints/1"] and known_versions("other") == []


def test_not_sent_attempts_are_not_counted_as_calls():
    # a not_sent verdict's attempts are bound to 0 by check_answer (mtboard.judges.calls.not_sent); the sums here
    # count only the sent verdicts, so an edited not_sent attempts (2 ≤ max_attempts 3) is not this check's problem
    vs = _verdicts()
    vs[4] = NOT_SENT.model_copy(update={"attempts": 2})
    run = _run()
    check_answer_counts(run, "gemba-mqm", _counts(), vs, SW)
    assert run.problems == []


def test_unknown_version_names_every_known_one(monkeypatch):
    # the registry keeps each old parser version beside the current one: the message lists them all, sorted
    monkeypatch.setitem(ENTRY_PARSERS, ("rubric", "rubric/0"), parse_rubric)
    run = _run()
    assert check_parser(run, "rubric", _summary("rubric", parser="rubric/2"), "$.judges.rubric") is None
    assert _probs(run)[0][2].startswith("parser 'rubric/2' is not a rubric parser version this mtboard knows "
                                        "(rubric/0, rubric/1): ")
    assert known_versions("rubric") == ["rubric/0", "rubric/1"]
    assert check_parser(_run(), "rubric", _summary("rubric", parser="rubric/0"), "$.judges.rubric") is parse_rubric
