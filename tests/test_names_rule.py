"""Issue 32 item 5: the display-name rule (:mod:`mtboard.core.names`) — each refusal's whole message with its fix,
the script-mix report, the mark-run limit, ``card_names`` on any object and the small helpers.

tests/test_names.py covers the classes, the code points and the validator; this file pins what it leaves open (the
mutation run of ``scripts/mutation.py names`` found it): the fix texts, the list of scripts named, which character is
reported, the run of marks counted from the first character, and ``card_names`` on objects lacking fields.
Every expected value was checked by hand: code points and names against the Unicode charts (U+03B2 GREEK SMALL
LETTER BETA, U+0430 CYRILLIC SMALL LETTER A, …), positions by counting (1 = the first character), the fix texts
against the module's rule (its docstring) — each is the rule's own wording.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mtboard.core.errors import InputError
from mtboard.core.names import (NameRefused, _marks_problem, card_names, check_name, has_refused, name_problem,
                                validate_name)

FIX_CHAR = ("remove it: names may hold no bidirectional control, control, invisible, format or separator "
            "character")
FIX_SCRIPTS = ("write the name in one script: a name may mix Latin only with Han and kana, Han and Bopomofo, Han and "
               "Hangul, or one other recommended script that is not Cyrillic or Greek (Unicode UTS #39 §5.2, "
               "moderately restrictive)")


@pytest.mark.parametrize(("text", "shown"), [
    ("gpt\u202e4", f"bidirectional control U+202E RIGHT-TO-LEFT OVERRIDE at character 4 (fix: {FIX_CHAR})"),
    ("gpt ", "a space at the start or end U+0020 SPACE at character 4 (fix: remove the space)"),
    ("a\u0301\u0301", "more than 4 combining marks in a row, or one mark repeated U+0301 COMBINING ACUTE ACCENT at "
                      "character 3 (fix: remove the stacked marks (Unicode UTS #39 §5.4))"),
    ("Mode\u0301le", "not in Unicode Normalization Form C (fix: write the name in NFC (unicodedata.normalize('NFC', "
                     "name)))"),
    # three scripts: all named, the first letter outside Latin reported (the Cyrillic а at 2)
    ("a\u0430\u03b2", f"mixes the scripts Cyrillic, Greek and Latin, e.g. U+0430 CYRILLIC SMALL LETTER A at character "
                      f"2 (fix: {FIX_SCRIPTS})"),
    # no Latin letter: the first letter that shares no script with the first one (β, not а)
    ("\u0430\u03b2", f"mixes the scripts Cyrillic and Greek, e.g. U+03B2 GREEK SMALL LETTER BETA at character 2 (fix: "
                     f"{FIX_SCRIPTS})"),
    ("\u03b2\u0430", f"mixes the scripts Cyrillic and Greek, e.g. U+0430 CYRILLIC SMALL LETTER A at character 2 (fix: "
                     f"{FIX_SCRIPTS})"),
])
def test_each_problem_reads_whole_with_its_fix(text, shown):
    p = name_problem(text)
    assert str(p) == shown
    with pytest.raises(InputError) as exc:
        check_name(text, "$.model_slug", where="card.json")
    assert exc.value.one_line() == f"card.json: $.model_slug: {shown}"
    with pytest.raises(NameRefused) as refused:
        validate_name(text)
    assert str(refused.value) == shown and refused.value.problem == p


def test_only_the_space_character_is_stripped_at_the_ends():
    # 'X' at either end is a letter, not a space: honest (a strip of more than " " would call it padded)
    for name in ("XLM-R", "XGLM-X", "model-X"):
        assert name_problem(name) is None and check_name(name, "$.model_slug") == name
        assert validate_name(name) == name


def test_the_run_of_marks_counts_from_the_first_character():
    # four different marks are allowed, from the very start of the text too; the fifth is refused at index 4
    assert _marks_problem("\u0301\u0302\u0303\u0304") is None
    assert _marks_problem("x\u0301\u0302\u0303\u0304y\u0301\u0302\u0303\u0304") is None  # a letter resets the run
    p = _marks_problem("\u0301\u0302\u0303\u0304\u0305")
    assert p is not None and (p.char, p.index) == ("\u0305", 4)


def test_has_refused():
    assert has_refused("gpt\u202e4") and has_refused("a\nb") and has_refused("x\u200b")
    assert not has_refused("Qwen2.5-7B") and not has_refused("日本語モデル") and not has_refused("")


def test_card_names_reads_tools_judges_and_metrics_from_any_object():
    judge = SimpleNamespace(backend="openai", model="judge-m", effort=None, api_provider="local", parser="rubric/1")
    card = SimpleNamespace(model_slug="m/slug", condition="few-shot", method=SimpleNamespace(spec="x:y", plugin=None),
                           tools_enabled=["fst-gate", "glossary"],
                           judges={"rubric": judge, "gemba-mqm": SimpleNamespace(backend="anthropic", model="c")},
                           neural_metrics={"comet22": SimpleNamespace(model="Unbabel/wmt22-comet-da"),
                                           "bleurt": SimpleNamespace(model="b")})
    assert card_names(card) == [
        ("$.model_slug", "m/slug"), ("$.condition", "few-shot"), ("$.method.spec", "x:y"),
        ("$.tools_enabled[0]", "fst-gate"), ("$.tools_enabled[1]", "glossary"),
        ("$.judges.gemba-mqm", "gemba-mqm"), ("$.judges.gemba-mqm.backend", "anthropic"),
        ("$.judges.gemba-mqm.model", "c"),
        ("$.judges.rubric", "rubric"), ("$.judges.rubric.backend", "openai"), ("$.judges.rubric.model", "judge-m"),
        ("$.judges.rubric.api_provider", "local"), ("$.judges.rubric.parser", "rubric/1"),
        ("$.neural_metrics.bleurt", "bleurt"), ("$.neural_metrics.bleurt.model", "b"),
        ("$.neural_metrics.comet22", "comet22"), ("$.neural_metrics.comet22.model", "Unbabel/wmt22-comet-da")]
    # an object without those fields (absent attributes are left out, not errors)
    assert card_names(SimpleNamespace(model_slug="only")) == [("$.model_slug", "only")]
    assert card_names(SimpleNamespace(method=SimpleNamespace(plugin=SimpleNamespace(version="1.0")))) == [
        ("$.method.plugin.version", "1.0")]
