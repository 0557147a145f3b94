"""Issue 32 item 5: display names that cannot spoof — the rule (:mod:`mtboard.core.names`), the validator's ``names``
check, ``mtboard run``'s settings and the site's escaping helpers.

Every expected value below was checked by hand: the code points and their Unicode names against the Unicode code
charts (U+202E RIGHT-TO-LEFT OVERRIDE, U+043E CYRILLIC SMALL LETTER O, …), the character positions by counting (1 =
the first character), the scripts against Scripts.txt/ScriptExtensions.txt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtboard.core import fmt, names
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.names import (card_names, check_name, json_visible, mark, name_problem, scripts)

ROOT = Path(__file__).resolve().parents[1]

HONEST = [
    "Qwen2.5-7B", "gemma-3-270m-q4_k_m.gguf", "apertium/eng-spa", "rinna/japanese-gpt-neox",
    "google/gemini-2.5-flash", "openai:qwen3:8b:medium", "baseline/echo", "JA→EN", "few-shot-completion",
    "ГигаЧат-Про-7Б",          # all Cyrillic (digits and '-' are Common): single script
    "Μελτέμι-7Β",              # all Greek, NFC ('έ' is U+03AD)
    "日本語モデル",             # Han + Katakana: one writing system (Jpan)
    "日本語、モデル",           # U+3001 is Common with Script_Extensions Bopo Hang Hani Hira Kana Yiii
    "Swallow-7b-日本語",       # Latin + Han: highly restrictive
    "KoAlpaca-한국어",          # Latin + Hangul (+ Han allowed)
    "中文-LLaMA",               # Latin + Han
    "Jais-عربي",               # Latin + Arabic: moderately restrictive
    "Modèle-ü",                # Latin with NFC precomposed letters
    "Salamandra-7b", "Aina-Català", "Ñandú-mt",  # accented Latin: é is e + U+0301 in the confusables data, not ASCII
    "ELYZA-日本語", "ELYZA-ノート",  # ノ resembles '/' only; after '-' and before ー it is not between ASCII
    "col·lecció",              # U+00B7 MIDDLE DOT: Common, Script_Extensions include Latin
    "한국어-모델", "中文模型", "عربي",
    "x",
]


@pytest.mark.parametrize("name", HONEST)
def test_honest_names_pass(name):
    assert name_problem(name) is None
    assert check_name(name, "$.model_slug") == name
    assert mark(name) == name


# (text, class, code point shown, 1-based position)
REFUSED = [
    ("gpt\u202e4o", "bidirectional control", "U+202E RIGHT-TO-LEFT OVERRIDE", 4),
    ("\u061cmodel", "bidirectional control", "U+061C ARABIC LETTER MARK", 1),
    ("model\u200f", "bidirectional control", "U+200F RIGHT-TO-LEFT MARK", 6),
    ("a\u2066b", "bidirectional control", "U+2066 LEFT-TO-RIGHT ISOLATE", 2),
    ("a\u0007b", "control character", "U+0007 <unnamed>", 2),
    ("a\u0085b", "control character", "U+0085 <unnamed>", 2),
    ("gpt\u200b4", "invisible character", "U+200B ZERO WIDTH SPACE", 4),
    ("gpt\u200d4", "invisible character", "U+200D ZERO WIDTH JOINER", 4),
    ("a\u2060b", "invisible character", "U+2060 WORD JOINER", 2),
    ("a\u2064b", "invisible character", "U+2064 INVISIBLE PLUS", 2),
    ("\ufeffmodel", "invisible character", "U+FEFF ZERO WIDTH NO-BREAK SPACE", 1),
    ("co\u00adde", "invisible character", "U+00AD SOFT HYPHEN", 3),
    ("a\u180eb", "invisible character", "U+180E MONGOLIAN VOWEL SEPARATOR", 2),
    ("x\ufe0f", "invisible character", "U+FE0F VARIATION SELECTOR-16", 2),
    ("tag\U000e0041", "invisible character", "U+E0041 TAG LATIN CAPITAL LETTER A", 4),
    ("\u3164x", "invisible character", "U+3164 HANGUL FILLER", 1),
    ("a\u0600", "format character", "U+0600 ARABIC NUMBER SIGN", 2),
    ("a\u2028b", "line or paragraph separator", "U+2028 LINE SEPARATOR", 2),
    ("a\u00a0b", "space other than U+0020", "U+00A0 NO-BREAK SPACE", 2),
    ("a\u3000b", "space other than U+0020", "U+3000 IDEOGRAPHIC SPACE", 2),
    ("a\ue000", "private-use character", "U+E000 <unnamed>", 2),
    ("a\u0378", "unassigned code point", "U+0378 <unnamed>", 2),
    (" gpt", "a space at the start or end", "U+0020 SPACE", 1),
    ("gpt ", "a space at the start or end", "U+0020 SPACE", 4),
    ("a\u0301\u0302\u0303\u0304\u0305", "more than 4 combining marks in a row, or one mark repeated",
     "U+0305 COMBINING OVERLINE", 6),
    ("a\u0301\u0301", "more than 4 combining marks in a row, or one mark repeated", "U+0301 COMBINING ACUTE ACCENT",
     3),
    ("gpt-4\u043e", "mixes the scripts Cyrillic and Latin, e.g.", "U+043E CYRILLIC SMALL LETTER O", 6),
    ("\u0391lpha", "mixes the scripts Greek and Latin, e.g.", "U+0391 GREEK CAPITAL LETTER ALPHA", 1),
    ("\u13aalpha", "mixes the scripts Cherokee and Latin, e.g.", "U+13AA CHEROKEE LETTER GO", 1),
    ("中文-عربي", "mixes the scripts Arabic and Han, e.g.", "U+0639 ARABIC LETTER AIN", 4),
    # look-alikes (mtboard.core.lookalike): the review's probe found each accepted before
    ("\u042f\u043d\u0434\u0435\u043a\u0441GPT", "mixes the scripts Cyrillic and Latin, e.g.",
     "U+042F CYRILLIC CAPITAL LETTER YA", 1),
    ("gpt-4\u0585", "mixes the scripts Armenian and Latin, e.g.", "U+0585 ARMENIAN SMALL LETTER OH", 6),
    ("\u017ftrong", "a compatibility character (Unicode NFKC writes it 's'):", "U+017F LATIN SMALL LETTER LONG S", 1),
    ("\u0261pt", "a look-alike of ASCII 'g' (Unicode confusables, UTS #39 §4):", "U+0261 LATIN SMALL LETTER SCRIPT G",
     1),
    ("gpt-\u0251", "a look-alike of ASCII 'a' (Unicode confusables, UTS #39 §4):", "U+0251 LATIN SMALL LETTER ALPHA",
     5),
    ("gpt\u20134", "a look-alike of ASCII '-' (Unicode confusables, UTS #39 §4):", "U+2013 EN DASH", 4),
    ("gpt-\U0001f917", "a punctuation mark, symbol or combining mark of no script the name's letters use "
     "(Script_Extensions, UTS #39 §5.1):", "U+1F917 HUGGING FACE", 5),
]


@pytest.mark.parametrize(("text", "what", "cp", "pos"), REFUSED)
def test_each_refused_class_names_the_code_point(text, what, cp, pos):
    p = name_problem(text)
    assert p is not None and p.what == what
    assert str(p).startswith(f"{what} {cp} at character {pos} (fix: ")
    with pytest.raises(InputError) as exc:
        check_name(text, "$.model_slug", where="card.json")
    line = exc.value.one_line()
    assert "\n" not in line and line.startswith(f"card.json: $.model_slug: {what} {cp} at character {pos}")


def test_not_nfc_is_refused_without_a_code_point():
    p = name_problem("Mode\u0301le")  # 'e' + COMBINING ACUTE ACCENT renders as 'é' (U+00E9), another string
    assert p is not None and p.what == "not in Unicode Normalization Form C" and p.char is None
    assert name_problem("Mod\u00e9le") is None


def test_scripts_use_script_extensions_and_augmented_sets():
    assert scripts("a") == {"Latn"} and scripts("-") == set() and scripts("7") == set()
    assert scripts("\u043e") == {"Cyrl"}
    assert scripts("日") == {"Hani", "Hanb", "Jpan", "Kore"}          # UTS #39 §5.1 augmented
    assert scripts("\u30fc") >= {"Hira", "Kana", "Jpan"}               # KATAKANA-HIRAGANA PROLONGED SOUND MARK (scx)
    # U+0301 COMBINING ACUTE ACCENT is Inherited; its Script_Extensions (Unicode 16+) include Latin, so an x with
    # an acute (no precomposed form: NFC keeps it) is one script
    assert "Latn" in scripts("\u0301") and name_problem("x\u0301-model") is None


def test_mark_makes_every_refused_character_visible():
    assert mark("gpt\u202e4") == "gpt[\u26a0U+202E]4"
    assert mark("a\u200bb\nc") == "a[\u26a0U+200B]b[\u26a0U+000A]c"
    # free text keeps what honest prose needs (ZWNJ in Persian, line breaks, RLM) and marks what reorders or hides
    assert mark("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645\u200f\n", free_text=True) == \
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645\u200f\n"
    assert mark("a\u202eb\u2067c\U000e0041", free_text=True) == "a[\u26a0U+202E]b[\u26a0U+2067]c[\u26a0U+E0041]"


def test_json_visible_keeps_the_value_and_shows_the_code_point():
    value = {"model_slug": "\u202eaps-gne/muitrepa", "tag": "x\U000e0041", "note": "a\nb"}
    text = json.dumps(value, ensure_ascii=False, indent=1)
    shown = json_visible(text)
    assert json.loads(shown) == value
    assert '"\\u202eaps-gne/muitrepa"' in shown and '"x\\udb40\\udc41"' in shown  # U+E0041 as a surrogate pair
    assert "\u202e" not in shown and shown.count("\n") == text.count("\n")


def test_mark_and_json_visible_equal_the_regex_scan_on_every_plane():
    """The per-distinct-character path (names._replace_chars) gives exactly what a plain ``regex`` scan gives: over
    the code points of every plane that has assigned ones (lone surrogates included) and a sample of the others,
    ASCII text with and without a control, and committed cards."""
    import regex

    def scan(pattern: regex.Pattern[str], text: str, repl) -> str:
        return pattern.sub(lambda m: repl(m.group()), text)

    def esc(ch: str) -> str:  # the JSON escape, independently: UTF-16 code units of the code point
        units = ch.encode("utf-16-le", "surrogatepass")
        return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'little'):04x}" for i in range(0, len(units), 2))

    # planes 0-3 and 14 whole (every assigned code point, lone surrogates included); planes 4-13, 15 and 16 (all
    # unassigned or private use) by their first and last 256 code points
    points = [*range(0x40000), *range(0xE0000, 0xF0000)]
    points += [p + k for p in range(0x40000, 0x110000, 0x10000) if p != 0xE0000 for k in (*range(256),
                                                                                     *range(0xFF00, 0x10000))]
    every = "".join(map(chr, points))
    texts = [every, every[:128], "plain ascii · text"[:11], "tab\there\nline\r", "bell\x07 and del\x7f",
             *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "submissions").rglob("*.json"))[:3])]
    for text in texts:
        assert mark(text) == scan(names.REFUSED, text, names.marker)
        assert mark(text, free_text=True) == scan(names._SPOOF, text, names.marker)
        assert json_visible(text) == scan(names._JSON_ESCAPE, text, esc)
    shown = json_visible(every)
    refused = names.REFUSED.findall(every)
    assert shown.count("\\u") == len(refused) - 3 + sum(ord(c) > 0xFFFF for c in refused)  # \t \n \r stay
    assert json_visible("bell\x07") == "bell\\u0007" and mark("bell\x07") == "bell[\u26a0U+0007]"
    from markupsafe import Markup  # a str subclass comes back a plain str (Jinja escapes it), as regex.sub gave

    for value in (Markup("<b>a</b>"), Markup("a\u202eb")):
        assert type(mark(value)) is str and type(json_visible(value)) is str
        assert type(mark(value, free_text=True)) is str and mark(value) == scan(names.REFUSED, value, names.marker)


def test_site_helpers_isolate_and_mark():
    assert str(fmt.name_html("gpt\u202e4<b>")) == (
        '<bdi class="mtb-name">gpt<span class="mtb-refused" title="U+202E RIGHT-TO-LEFT OVERRIDE">'
        '[\u26a0U+202E]</span>4&lt;b&gt;</bdi>')
    assert str(fmt.name_html("apertium/eng-spa")) == '<bdi class="mtb-name">apertium/eng-spa</bdi>'
    assert str(fmt.name_md("a\u202eb")) == '<bdi class="mtb-name">a&#91;\u26a0U&#43;202E&#93;b</bdi>'
    assert fmt.safe_title("Run gpt\u202e4") == "Run gpt[\u26a0U+202E]4"
    # issue 36 item 3: the kept ending survives the 80-character cut, and is made safe too
    long = "Run " + "x" * 100
    assert fmt.safe_title(long, keep=" (0123abcd)") == "Run " + "x" * 64 + "\u2026 (0123abcd)"
    assert len(fmt.safe_title(long, keep=" (0123abcd)")) == 80
    assert fmt.safe_title("Run a", keep=" <b>") == "Run a \u2039b\u203a"
    assert fmt.safe_title(long) == long[:79] + "\u2026"
    assert fmt.html_text("x\u202ey") == "x[\u26a0U+202E]y"
    assert "\u202e" not in fmt.md_text("a\u202eb")


def test_card_names_lists_every_shown_name():
    """The committed EN→ES Apertium card: its names, as read from the file by hand."""
    from pathlib import Path

    from mtboard.core.documents import load_card

    card = load_card(Path(__file__).resolve().parents[1] / "submissions" / "mtb-en-es-dev" /
                     "apertium-eng-spa__default__d0f5919b5569.json")
    got = dict(card_names(card))
    assert got["$.model_slug"] == "apertium/eng-spa" and got["$.condition"] == "default"
    assert got["$.method.spec"] == "apertium:eng-spa" and got["$.method.backend"] == "apertium"
    assert got["$.dataset.id"] == "mtb-en-es-dev" and got["$.dataset.language_pair"] == "EN→ES"
    assert all(name_problem(v) is None for v in got.values())


def test_run_settings_refuse_a_spoofing_name_before_anything_runs(tmp_path):
    from mtboard.run.settings import RunSettings

    with pytest.raises(ConfigError) as exc:
        RunSettings(corpus_path=tmp_path / "c.json", method="openai:gpt\u202e4o")
    assert exc.value.one_line().startswith(
        "--method: bidirectional control U+202E RIGHT-TO-LEFT OVERRIDE at character 11 (fix: remove it")
    with pytest.raises(ConfigError) as exc:
        RunSettings(corpus_path=tmp_path / "c.json", method="echo:", condition="few-sh\u043et")
    assert "--condition: mixes the scripts Cyrillic and Latin, e.g. U+043E CYRILLIC SMALL LETTER O at character 7" \
        in exc.value.one_line()
    with pytest.raises(ConfigError, match="--judge: invisible character U\\+200B ZERO WIDTH SPACE"):
        RunSettings(corpus_path=tmp_path / "c.json", method="echo:", judge=["rubric=openai:q\u200bx"])
    ok = RunSettings(corpus_path=tmp_path / "c.json", method="openai:qwen3:8b:medium", condition="few-shot")
    assert ok.condition == "few-shot"


# --------------------------------------------------------------------------------------------------------------------
# The validator's names check, on a committed card edited and re-sealed (fingerprint re-derived, seal recomputed)

EMPTY_CARD = "submissions/mtb-en-es-dev/baseline-empty__baseline__9098cb401d85.json"


def _validate(data):
    from pathlib import Path

    import validate_support as vs
    from mtboard import validate as V

    root = Path(__file__).resolve().parents[1]
    ctx = V.make_context(root, root / "corpora")
    return V.validate_bytes(vs.dump(vs.refingerprint_and_reseal(data)), "card.json", ctx)


def _card():
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parents[1] / EMPTY_CARD).read_text(encoding="utf-8"))


def test_validator_refuses_a_model_name_with_a_bidi_override():
    data = _card()
    spoof = "\u202e" + "aps-gne/muitrepa"  # shows as "apertium/eng-spa" where the override acts
    data["model_slug"] = data["method_config"]["model"] = data["method"]["model"] = spoof
    data["method"]["spec"] = "empty:" + spoof
    rep = _validate(data)
    names = [p for p in rep.problems if p.check == "names"]
    assert [p.field for p in names] == ["$.model_slug", "$.method_config.model", "$.method.spec", "$.method.model"]
    assert rep.checks["names"] == "fail"
    line = str(names[0])
    assert line.startswith("names: card.json: $.model_slug: bidirectional control U+202E RIGHT-TO-LEFT OVERRIDE "
                           "at character 1 (fix: remove it")
    assert "\n" not in line and "\u202e" not in line  # the message never echoes the name
    assert str(names[2]).startswith("names: card.json: $.method.spec: bidirectional control U+202E RIGHT-TO-LEFT "
                                    "OVERRIDE at character 7")


def test_a_spoofing_condition_is_the_one_problem_of_an_otherwise_honest_card():
    """The condition is declared (in the fingerprint and the seal, re-derived here): before the names check such a
    card validated; now exactly one problem, the names check's."""
    data = _card()
    data["condition"] = "base\u043eline"  # Cyrillic о: reads as "baseline"
    rep = _validate(data)
    assert [(p.check, p.field) for p in rep.problems] == [("names", "$.condition")]
    assert rep.problems[0].message.startswith(
        "mixes the scripts Cyrillic and Latin, e.g. U+043E CYRILLIC SMALL LETTER O at character 5 (fix: write the "
        "name in one script")
    assert _validate(_card()).problems == []  # the same card unedited passes every check
