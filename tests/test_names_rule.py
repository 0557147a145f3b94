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

import unicodedata
from types import SimpleNamespace

import pytest
import regex
from confusable_homoglyphs import confusables as homoglyph_data

from mtboard.core.errors import InputError
from mtboard.core.lookalike import LATIN_LOOKALIKE_SCRIPTS, RECOMMENDED, ascii_lookalike, shown
from mtboard.core.names import (NameRefused, _marks_problem, card_names, check_name, has_refused, name_problem,
                                validate_name)

FIX_CHAR = ("remove it: names may hold no bidirectional control, control, invisible, format or separator "
            "character")
FIX_SCRIPTS = ("write the name in one script: a name may mix Latin only with Han and kana, Han and Bopomofo, Han and "
               "Hangul, or one other recommended script that is not Cyrillic, Greek or Armenian (Unicode UTS #39 "
               "§5.2, moderately restrictive)")


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


# --------------------------------------------------------------------------------------------------------------------
# Look-alikes (mtboard.core.lookalike; the reviewer's probe /work/notes/review32_scripts/names_probe.py found them
# accepted). Code points and names checked against the Unicode charts; the NFKC forms against UAX #15's tables
# (unicodedata.normalize gives the same); the ASCII look-alikes against confusables.txt lines (0131 → 0069 'i',
# 2215 → 002F '/', 2010 → 002D '-', 0585 → 006F 'o', 30CE → 002F '/', 0E50 → 006F 'o', 00E6 → 0061 0065 'ae').

FIX_NFKC = ("names are NFKC-stable: UAX #15, so full-width, ligature, mathematical, superscript and Roman-numeral "
            "forms are refused")
FIX_COMMON = ("remove it or write it in ASCII: a non-ASCII character of script Common or Inherited is allowed only "
              "where its Script_Extensions include a script of the name's letters (U+30FC with kana), and arrows "
              "U+2190–U+21FF")
WHAT_COMMON = ("a punctuation mark, symbol or combining mark of no script the name's letters use (Script_Extensions, "
               "UTS #39 §5.1):")


@pytest.mark.parametrize(("text", "shown"), [
    ("\uff27PT-4", "a compatibility character (Unicode NFKC writes it 'G'): U+FF27 FULLWIDTH LATIN CAPITAL LETTER G at "
                   f"character 1 (fix: write 'G' instead ({FIX_NFKC}))"),
    ("\ufb01ne-tuned", "a compatibility character (Unicode NFKC writes it 'fi'): U+FB01 LATIN SMALL LIGATURE FI at "
                       f"character 1 (fix: write 'fi' instead ({FIX_NFKC}))"),
    ("\U0001d420pt", "a compatibility character (Unicode NFKC writes it 'g'): U+1D420 MATHEMATICAL BOLD SMALL G at "
                     f"character 1 (fix: write 'g' instead ({FIX_NFKC}))"),
    ("\u210apt", "a compatibility character (Unicode NFKC writes it 'g'): U+210A SCRIPT SMALL G at character 1 (fix: "
                 f"write 'g' instead ({FIX_NFKC}))"),
    ("gpt\u00b2", "a compatibility character (Unicode NFKC writes it '2'): U+00B2 SUPERSCRIPT TWO at character 4 (fix: "
                  f"write '2' instead ({FIX_NFKC}))"),
    ("gpt-\u2163", "a compatibility character (Unicode NFKC writes it 'IV'): U+2163 ROMAN NUMERAL FOUR at character 5 "
                   f"(fix: write 'IV' instead ({FIX_NFKC}))"),
    ("gpt-\uff14", "a compatibility character (Unicode NFKC writes it '4'): U+FF14 FULLWIDTH DIGIT FOUR at character 5 "
                   f"(fix: write '4' instead ({FIX_NFKC}))"),
    # a non-ASCII form is named by its code point, never echoed (half-width TE folds to full-width TE)
    ("\uff83\uff7d\uff84", "a compatibility character (Unicode NFKC writes it U+30C6 KATAKANA LETTER TE): U+FF83 "
                           "HALFWIDTH KATAKANA LETTER TE at character 1 (fix: write U+30C6 KATAKANA LETTER TE instead "
                           f"({FIX_NFKC}))"),
    ("gpt-4\u0585", "mixes the scripts Armenian and Latin, e.g. U+0585 ARMENIAN SMALL LETTER OH at character 6 (fix: "
                    f"{FIX_SCRIPTS})"),
    ("gpt\u2c9f", "mixes the scripts Coptic and Latin, e.g. U+2C9F COPTIC SMALL LETTER O at character 4 (fix: "
                  f"{FIX_SCRIPTS})"),
    ("gpt-\u0131nstruct", "a look-alike of ASCII 'i' (Unicode confusables, UTS #39 §4): U+0131 LATIN SMALL LETTER "
                          "DOTLESS I at character 5 (fix: write 'i' in ASCII, or a character that is not its "
                          "look-alike)"),
    ("F\u00e6r\u00f8ysk", "a look-alike of ASCII 'ae' (Unicode confusables, UTS #39 §4): U+00E6 LATIN SMALL LETTER AE "
                          "at character 2 (fix: write 'ae' in ASCII, or a character that is not its look-alike)"),
    ("google\u2215gemma", "a look-alike of ASCII '/' (Unicode confusables, UTS #39 §4): U+2215 DIVISION SLASH at "
                          "character 7 (fix: write '/' in ASCII, or a character that is not its look-alike)"),
    ("google\u2044gemma", "a look-alike of ASCII '/' (Unicode confusables, UTS #39 §4): U+2044 FRACTION SLASH at "
                          "character 7 (fix: write '/' in ASCII, or a character that is not its look-alike)"),
    ("gpt\u20104", "a look-alike of ASCII '-' (Unicode confusables, UTS #39 §4): U+2010 HYPHEN at character 4 (fix: "
                   "write '-' in ASCII, or a character that is not its look-alike)"),
    ("gpt\u22124", "a look-alike of ASCII '-' (Unicode confusables, UTS #39 §4): U+2212 MINUS SIGN at character 4 "
                   "(fix: write '-' in ASCII, or a character that is not its look-alike)"),
    # a Common look-alike is refused in an all-Cyrillic name too (it is not a Cyrillic letter)
    ("\u042f\u043d\u0434\u0435\u043a\u0441\u2010GPT", "mixes the scripts Cyrillic and Latin, e.g. U+042F CYRILLIC "
                                                      f"CAPITAL LETTER YA at character 1 (fix: {FIX_SCRIPTS})"),
    ("\u042f\u043d\u0434\u0435\u043a\u0441\u20107", "a look-alike of ASCII '-' (Unicode confusables, UTS #39 §4): "
                                                    "U+2010 HYPHEN at character 7 (fix: write '-' in ASCII, or a "
                                                    "character that is not its look-alike)"),
    # another script's letter in a Latin name: Thai digit zero reads 'o'; katakana NO between ASCII reads '/'
    ("gpt-\u0e50", "a look-alike of ASCII 'o' (Unicode confusables, UTS #39 §4): U+0E50 THAI DIGIT ZERO at character 5 "
                   "(fix: write the name in one script, or 'o' in ASCII)"),
    ("google\u30cegemma", "a look-alike of ASCII '/' (Unicode confusables, UTS #39 §4): U+30CE KATAKANA LETTER NO at "
                          "character 7 (fix: write the name in one script, or '/' in ASCII)"),
    ("gpt-4o\u2014mini", f"{WHAT_COMMON} U+2014 EM DASH at character 7 (fix: {FIX_COMMON})"),
    ("gpt\u2713", f"{WHAT_COMMON} U+2713 CHECK MARK at character 4 (fix: {FIX_COMMON})"),
    ("gpt\u3002", f"{WHAT_COMMON} U+3002 IDEOGRAPHIC FULL STOP at character 4 (fix: {FIX_COMMON})"),
    ("gpt\u30fc4", f"{WHAT_COMMON} U+30FC KATAKANA-HIRAGANA PROLONGED SOUND MARK at character 4 (fix: {FIX_COMMON})"),
    ("o\u0338k", f"{WHAT_COMMON} U+0338 COMBINING LONG SOLIDUS OVERLAY at character 2 (fix: {FIX_COMMON})"),
    ("\u2014", f"{WHAT_COMMON} U+2014 EM DASH at character 1 (fix: {FIX_COMMON})"),
])
def test_each_lookalike_reads_whole_with_its_fix(text, shown):
    p = name_problem(text)
    assert str(p) == shown
    with pytest.raises(InputError) as exc:
        check_name(text, "$.model_slug", where="card.json")
    assert exc.value.one_line() == f"card.json: $.model_slug: {shown}"


@pytest.mark.parametrize("name", [
    "ELYZA-\u30ce\u30fc\u30c8",       # ノ (looks '/') after '-' and before ー: not between two ASCII characters
    "\u30ce\u30fc\u30c8",              # all katakana: whole script
    "gpt/\u30ce",                      # ノ at the end
    "\u65e5\u30cegemma",               # ノ after a non-ASCII character, before ASCII: not between two ASCII
    "\u30cegpt",                       # ノ at the start
    "\u0e50\u0e51",                    # all-Thai digits: whole script
    "\u042f\u043d\u0434\u0435\u043a\u0441-7\u0411",  # all Cyrillic with ASCII digits: whole script (Б is no Latin)
    "col\u00b7lecci\u00f3",            # U+00B7 MIDDLE DOT: Common with Script_Extensions Latin (Catalan l·l)
    "\u1eb8\u0301k\u1ecd\u0301",       # Yoruba: U+0301 (Inherited) with Script_Extensions Latin, no precomposed form
    "\u65e5\u672c\u8a9e\u30fc",        # U+30FC with Han + kana: its Script_Extensions hold Hira and Kana
    "EN\u2194ES", "JA\u2192EN",        # arrows: allowed in any name
    "Aina-Catal\u00e0", "\u00d1and\u00fa-mt", "Salamandra-7b", "hindi-\u0939\u093f\u0902\u0926\u0940",
])
def test_honest_names_with_lookalike_neighbours_pass(name):
    assert name_problem(name) is None


def test_ascii_lookalike_reads_the_confusables_data():
    assert ascii_lookalike("\u0131") == "i" and ascii_lookalike("\u00e6") == "ae"
    assert ascii_lookalike("\u2215") == "/" and ascii_lookalike("\u0585") == "o"
    # ASCII itself, an accented letter (e + U+0301 in the data: not ASCII) and a kana with no ASCII twin: none
    assert ascii_lookalike("i") == "" and ascii_lookalike("\u00e9") == "" and ascii_lookalike("\u30c8") == ""


def test_shown_quotes_printable_ascii_and_names_everything_else():
    assert shown("fi") == "'fi'" and shown("/") == "'/'"
    # U+3300 SQUARE APAATO's NFKC form is four katakana: each named, joined by " + "
    assert shown("\u30a2\u30d1") == "U+30A2 KATAKANA LETTER A + U+30D1 KATAKANA LETTER PA"
    assert shown("\u0007") == "U+0007 <unnamed>" and shown("\u0085") == "U+0085 <unnamed>"  # controls have no name
    p = name_problem("\u3300")
    assert p is not None and p.fix.startswith(
        "write U+30A2 KATAKANA LETTER A + U+30D1 KATAKANA LETTER PA + U+30FC KATAKANA-HIRAGANA PROLONGED SOUND MARK + "
        "U+30C8 KATAKANA LETTER TO instead")


@pytest.mark.parametrize(("text", "pos"), [
    ("a\u30ceb", 2),                  # ノ between two ASCII letters, from the second character
    ("\u65e5a\u30ceb", 3),            # the character two before ノ is not ASCII; the one before is
    ("ELYZA-\u30ce\u30fc\u30c8-\u0131nstruct", 11),  # a passing ノ does not end the search: the ı after it is found
])
def test_the_punctuation_lookalike_of_another_script_is_refused_between_ascii(text, pos):
    p = name_problem(text)
    assert p is not None and p.index == pos - 1 and p.what.startswith("a look-alike of ASCII")


def test_latin_lookalike_scripts_are_derived_from_the_data():
    """LATIN_LOOKALIKE_SCRIPTS = the Recommended scripts (not Latin) with ten or more letters that Unicode's
    confusables data lists as confusable with ASCII letters: re-derived here over every key of the data (the counts
    in the constant's docstring: Cyrillic 53 characters, Greek 38, Armenian 16 — any look-alike; letters only here)."""
    counts: dict[str, int] = {}
    for ch in homoglyph_data.confusables_data:
        if len(ch) != 1 or not unicodedata.category(ch).startswith("L"):
            continue
        if not any(c.isalpha() for c in ascii_lookalike(ch)):
            continue
        for sc in RECOMMENDED - {"Latn"}:
            if regex.match(rf"\p{{sc={sc}}}", ch):
                counts[sc] = counts.get(sc, 0) + 1
    assert {sc for sc, n in counts.items() if n >= 10} == LATIN_LOOKALIKE_SCRIPTS == {"Cyrl", "Grek", "Armn"}
    assert max(n for sc, n in counts.items() if sc not in LATIN_LOOKALIKE_SCRIPTS) <= 4
