"""Strict, fail-closed judge parsers (issue 5). Every expected value below is written by hand.

The GEMBA-MQM cases follow the GEMBA text format (Kocmi & Federmann 2023: ``Critical:``/``Major:``/``Minor:``
sections, ``category/subcategory - "span"`` lines) and its parser's known failure cases: GEMBA's
``parse_mqm_answer`` skips any line containing "no error", counts at most 5 errors, caps the penalty at 25 and ignores
lines it does not understand. Ours counts every error, uncapped, and fails on anything off-format.
"""

from __future__ import annotations

import pytest

from mtboard.judges.base import JudgeParseError
from mtboard.judges.checkpoints import parse_checkpoints
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.rubric import parse_rubric

FAIL = "judge failure"

CANONICAL = """Critical:
no-error
Major:
accuracy/mistranslation - "involvement"
accuracy/omission - "the account holder"
Minor:
fluency/grammar - "wäre"
fluency/register - "dir"
contextBehavior: used_correctly"""

CLEAN = "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"

MQM_CASES = [
    # (name, answer, expected penalty or FAIL)
    ("canonical: 2 major + 2 minor", CANONICAL, 12.0),
    ("all no-error", CLEAN, 0.0),
    ("blank lines, CRLF and indentation are tolerated",
     "\r\n  Critical:\r\n\r\nno-error\r\nMajor:  \r\nno-error\r\n\r\nMinor:\r\n  style/awkward - \"x\"\r\n"
     "contextBehavior: used_correctly\r\n", 1.0),
    ("**Critical:** markdown-bold headings",
     "**Critical:**\nno-error\n**Major:**\nno-error\n**Minor:**\nno-error\ncontextBehavior: unclear", FAIL),
    ("inline headings", "Critical: no-error\nMajor: no-error\nMinor: no-error\ncontextBehavior: unclear", FAIL),
    ("one inline heading among proper ones",
     "Critical:\nno-error\nMajor: accuracy/omission - \"x\"\nMinor:\nno-error\ncontextBehavior: unclear", FAIL),
    ("span containing the words 'no error' still counts (GEMBA drops the line → 0)",
     "Critical:\nno-error\nMajor:\naccuracy/mistranslation - \"there is no error in the bill\"\nMinor:\nno-error\n"
     "contextBehavior: used_correctly", 5.0),
    ("six minor errors: 6 (GEMBA counts only 5)",
     "Critical:\nno-error\nMajor:\nno-error\nMinor:\n" + "\n".join(
         f'fluency/punctuation - "p{i}"' for i in range(6)) + "\ncontextBehavior: unclear", 6.0),
    ("two criticals: 50 uncapped (GEMBA caps at 25)",
     "Critical:\naccuracy/mistranslation - \"a\"\naccuracy/omission - \"b\"\nMajor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: misused_context", 50.0),
    ("one of each severity", "Critical:\nother - \"a\"\nMajor:\nstyle/awkward - \"b\"\nMinor:\n"
     "terminology/inconsistent use - \"c\"\ncontextBehavior: ignored_irrelevant_context", 31.0),
    ("non-translation weighs as critical wherever it is listed (as in GEMBA)",
     "Critical:\nno-error\nMajor:\nno-error\nMinor:\nnon-translation - \"Hola\"\ncontextBehavior: unclear", 25.0),
    ("span with inner quotes", "Critical:\nno-error\nMajor:\naccuracy/mistranslation - \"he said \"hi\" loudly\"\n"
     "Minor:\nno-error\ncontextBehavior: unclear", 5.0),
    ("trailing prose after contextBehavior", CLEAN + "\nThe translation is perfect.", FAIL),
    ("leading prose", "Here is my annotation:\n" + CLEAN, FAIL),
    ("code fence around the answer", "```\n" + CLEAN + "\n```", FAIL),
    ("empty string", "", FAIL),
    ("whitespace only", "  \n\n ", FAIL),
    ("no answer at all", None, FAIL),
    ("unknown class", "Critical:\nno-error\nMajor:\naccuracy/wrongness - \"x\"\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("class in capitals", "Critical:\nno-error\nMajor:\nAccuracy/Mistranslation - \"x\"\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("error line without quotes", "Critical:\nno-error\nMajor:\naccuracy/omission - x\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("empty span", "Critical:\nno-error\nMajor:\naccuracy/omission - \"\"\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("missing contextBehavior", "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error", FAIL),
    ("contextBehavior not final (first)", "contextBehavior: unclear\nCritical:\nno-error\nMajor:\nno-error\n"
     "Minor:\nno-error", FAIL),
    ("contextBehavior twice", "Critical:\nno-error\ncontextBehavior: unclear\nMajor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("unknown contextBehavior label", "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: great", FAIL),
    ("contextBehavior with prose after the label", "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: unclear because no context", FAIL),
    ("no-error mixed with an error", "Critical:\nno-error\naccuracy/omission - \"x\"\nMajor:\nno-error\nMinor:\n"
     "no-error\ncontextBehavior: unclear", FAIL),
    ("empty section", "Critical:\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear", FAIL),
    ("sections out of order", "Major:\nno-error\nCritical:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear",
     FAIL),
    ("missing Minor section", "Critical:\nno-error\nMajor:\nno-error\ncontextBehavior: unclear", FAIL),
    ("a section twice", "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("lower-case heading", "critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear", FAIL),
    ("'no error' spelt with a space", "Critical:\nno error\nMajor:\nno-error\nMinor:\nno-error\n"
     "contextBehavior: unclear", FAIL),
    ("echo of a translation 'Critical:\\nno-error'", "Critical:\nno-error", FAIL),
]


@pytest.mark.parametrize("name,answer,expected", MQM_CASES, ids=[c[0] for c in MQM_CASES])
def test_mqm_parser(name: str, answer: str | None, expected: float | str) -> None:
    if expected == FAIL:
        with pytest.raises(JudgeParseError):
            parse_mqm(answer)
    else:
        v = parse_mqm(answer)
        assert v.status == "scored"
        assert v.score == expected


def test_mqm_parser_records_errors_and_label() -> None:
    v = parse_mqm(CANONICAL)
    assert [(e.severity, e.category, e.span) for e in v.errors] == [
        ("major", "accuracy/mistranslation", "involvement"), ("major", "accuracy/omission", "the account holder"),
        ("minor", "fluency/grammar", "wäre"), ("minor", "fluency/register", "dir")]
    assert v.context_behavior == "used_correctly"
    v = parse_mqm("Critical:\nno-error\nMajor:\naccuracy/mistranslation - \"he said \"hi\" loudly\"\n"
                  "Minor:\nno-error\ncontextBehavior: unclear")
    assert v.errors[0].span == 'he said "hi" loudly'
    v = parse_mqm("Critical:\nno-error\nMajor:\nno-error\nMinor:\nnon-translation - \"Hola\"\ncontextBehavior: unclear")
    assert v.errors[0].severity == "critical"


def test_mqm_parse_error_reason_is_one_line() -> None:
    with pytest.raises(JudgeParseError) as exc:
        parse_mqm("**Critical:**\nno-error")
    assert "\n" not in exc.value.reason and exc.value.reason


RUBRIC_OK = "adequacy: 3\npragmatics: 4\nfluency: 2\nflags: IDIOM, NEG\njustification: Idiom rendered literally."

RUBRIC_CASES = [
    ("canonical", RUBRIC_OK, 9.0),
    ("flags none", "adequacy: 0\npragmatics: 0\nfluency: 0\nflags: none\njustification: Unrelated text.", 0.0),
    ("top marks", "adequacy: 4\npragmatics: 4\nfluency: 2\nflags: none\njustification: Faithful and natural.", 10.0),
    ("adequacy out of range", RUBRIC_OK.replace("adequacy: 3", "adequacy: 5"), FAIL),
    ("fluency out of range", RUBRIC_OK.replace("fluency: 2", "fluency: 3"), FAIL),
    ("two-digit score", RUBRIC_OK.replace("adequacy: 3", "adequacy: 10"), FAIL),
    ("fractional score", RUBRIC_OK.replace("adequacy: 3", "adequacy: 3.5"), FAIL),
    ("axes out of order", "pragmatics: 4\nadequacy: 3\nfluency: 2\nflags: none\njustification: x", FAIL),
    ("unknown flag", RUBRIC_OK.replace("IDIOM, NEG", "IDIOM, WEIRD"), FAIL),
    ("duplicate flag", RUBRIC_OK.replace("IDIOM, NEG", "NEG, NEG"), FAIL),
    ("lower-case flag", RUBRIC_OK.replace("IDIOM, NEG", "idiom"), FAIL),
    ("none mixed with flags", RUBRIC_OK.replace("IDIOM, NEG", "none, NEG"), FAIL),
    ("empty justification", RUBRIC_OK.replace("justification: Idiom rendered literally.", "justification: "), FAIL),
    ("trailing prose", RUBRIC_OK + "\nOverall a decent translation.", FAIL),
    ("markdown bold keys", RUBRIC_OK.replace("adequacy:", "**adequacy:**"), FAIL),
    ("missing line", "adequacy: 3\npragmatics: 4\nfluency: 2\njustification: x", FAIL),
    ("empty string", "", FAIL),
    ("no answer", None, FAIL),
]


@pytest.mark.parametrize("name,answer,expected", RUBRIC_CASES, ids=[c[0] for c in RUBRIC_CASES])
def test_rubric_parser(name: str, answer: str | None, expected: float | str) -> None:
    if expected == FAIL:
        with pytest.raises(JudgeParseError):
            parse_rubric(answer)
    else:
        assert parse_rubric(answer).score == expected


def test_rubric_parser_fields() -> None:
    v = parse_rubric(RUBRIC_OK)
    assert v.subscores == {"adequacy": 3.0, "pragmatics": 4.0, "fluency": 2.0}
    assert v.flags == ["IDIOM", "NEG"]
    assert v.justification == "Idiom rendered literally."


POINTS = {"A01", "A02", "B01"}
PARAS = {1, 2, 3}
CP_OK = ('[[[CHECK A01 ok]]]\n[[[CHECK A02 fail "the seller became the buyer"]]]\n[[[CHECK B01 ok]]]\n'
         '[[[ADDITION P2 "and smiled"]]]\n[[[UNTRANSLATED P3 "skylight"]]]\n[[[END]]]')

CP_FAIL_CASES = [
    ("empty", ""),
    ("no END (cut off)", CP_OK.replace("\n[[[END]]]", "")),
    ("text after END", CP_OK + "\nHope this helps!"),
    ("END twice", CP_OK.replace("[[[CHECK B01 ok]]]", "[[[END]]]")),
    ("prose line", "Here are my verdicts:\n" + CP_OK),
    ("point not asked", CP_OK.replace("B01 ok", "Z99 ok")),
    ("point twice", CP_OK.replace("B01 ok", "A01 ok")),
    ("fail without reason", CP_OK.replace('fail "the seller became the buyer"', "fail")),
    ("ok with a reason", CP_OK.replace("A01 ok", 'A01 ok "fine"')),
    ("unknown verdict word", CP_OK.replace("A01 ok", "A01 pass")),
    ("paragraph that does not exist", CP_OK.replace("P2", "P9")),
    ("markdown bold line", CP_OK.replace("[[[CHECK A01 ok]]]", "**[[[CHECK A01 ok]]]**")),
]


def test_checkpoint_parser_full_answer() -> None:
    a = parse_checkpoints(CP_OK, POINTS, PARAS)
    assert a.verdicts == {"A01": (True, None), "A02": (False, "the seller became the buyer"), "B01": (True, None)}
    assert a.additions == [(2, "and smiled")]
    assert a.untranslated == [(3, "skylight")]


def test_checkpoint_parser_missing_points_are_returned_missing() -> None:
    a = parse_checkpoints("[[[CHECK A01 ok]]]\n[[[END]]]", POINTS, PARAS)
    assert a.verdicts == {"A01": (True, None)}
    assert POINTS - set(a.verdicts) == {"A02", "B01"}


@pytest.mark.parametrize("name,answer", CP_FAIL_CASES, ids=[c[0] for c in CP_FAIL_CASES])
def test_checkpoint_parser_fails_closed(name: str, answer: str) -> None:
    with pytest.raises(JudgeParseError):
        parse_checkpoints(answer, POINTS, PARAS)
