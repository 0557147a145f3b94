"""mtboard.core.languages: BCP 47 parsing on langcodes, English names for prompts, expected scripts, tokenizer choice.

The table rows are hand-written from BCP 47 (RFC 5646), ISO 15924 and docs/SCORING_SPEC.md §2; the name rows for the
languages of the committed cards and of the override table are the names prompts rendered before this module existed
(the old rule is re-implemented in the test), because those names are inside recorded system-prompt hashes.
"""

from __future__ import annotations

import glob
import hashlib
import json

import pytest
import regex

from mtboard.core import languages as L
from mtboard.core.errors import InputError
from mtboard.inputs.prompts import load_prompt

LATIN, CYRILLIC, HAN = frozenset({"Latin"}), frozenset({"Cyrillic"}), frozenset({"Han"})
JAPANESE = frozenset({"Han", "Hiragana", "Katakana"})

# tag, primary, script, region, English name, expected scripts, BLEU tokenizer, character-level TER
TABLE = [
    ("sr-Latn", "sr", "Latn", None, "Serbian (Latin)", LATIN, "13a", False),
    ("sr-Cyrl", "sr", "Cyrl", None, "Serbian", CYRILLIC, "13a", False),  # Cyrillic is Serbian's usual script
    ("sr", "sr", None, None, "Serbian", frozenset({"Cyrillic", "Latin"}), "13a", False),
    ("uz-Cyrl", "uz", "Cyrl", None, "Uzbek (Cyrillic)", CYRILLIC, "13a", False),
    ("zh-Hant", "zh", "Hant", None, "Traditional Chinese", HAN, "zh", True),
    ("zh-Hant-TW", "zh", "Hant", "TW", "Traditional Chinese", HAN, "zh", True),
    ("zh-Hans", "zh", "Hans", None, "Simplified Chinese", HAN, "zh", True),
    ("pt-BR", "pt", None, "BR", "Brazilian Portuguese", LATIN, "13a", False),
    ("es-419", "es", None, "419", "Spanish", LATIN, "13a", False),
    ("EN_us", "en", None, "US", "English", LATIN, "13a", False),
    ("ja", "ja", None, None, "Japanese", JAPANESE, "ja-mecab", True),
    ("ja-Jpan", "ja", "Jpan", None, "Japanese", JAPANESE, "ja-mecab", True),
    ("ko-KR", "ko", None, "KR", "Korean", frozenset({"Hangul", "Han"}), "ko-mecab", False),
    ("ca", "ca", None, None, "Catalan", LATIN, "13a", False),
    ("crk", "crk", None, None, "Plains Cree", frozenset({"Latin", "Canadian_Aboriginal"}), "13a", False),
    ("gd", "gd", None, None, "Scottish Gaelic", LATIN, "13a", False),  # not in the override table: langcodes
    ("nb-NO", "nb", None, "NO", "Norwegian Bokmål", LATIN, "13a", False),
]


@pytest.mark.parametrize("tag, primary, script, region, name, scripts, tok, char_ter", TABLE)
def test_language_table(tag, primary, script, region, name, scripts, tok, char_ter):
    assert L.primary(tag) == primary
    assert L.script(tag) == script
    assert L.region(tag) == region
    assert L.language_name(tag) == name
    assert L.expected_scripts(tag) == scripts
    assert L.bleu_tokenizer(tag) == tok
    assert L.character_level_ter(tag) is char_ter


# Issue 32 item 2: the tokenizer follows the tag's script (explicit subtag, else langcodes' likely script), not a list
# of primary subtags. Hand-written from ISO 15924 / CLDR likely subtags: yue → Hant, cmn → Hans, jpn → Jpan,
# kor → Kore, th → Thai, km → Khmr, lo → Laoo, my → Mymr, bo/dz → Tibt.
SCRIPT_TABLE = [
    # tag, script, BLEU tokenizer, character-level TER, TER available
    ("yue", "Hant", "zh", True, True), ("cmn", "Hans", "zh", True, True), ("zh-Hant", "Hant", "zh", True, True),
    ("zh-TW", "Hant", "zh", True, True), ("jpn", "Jpan", "ja-mecab", True, True),
    ("ja-Hira", "Hira", "ja-mecab", True, True),
    ("kor", "Kore", "ko-mecab", False, True), ("ko-Hang", "Hang", "ko-mecab", False, True),
    ("th", "Thai", "char", False, False), ("th-TH", "Thai", "char", False, False), ("km", "Khmr", "char", False, False),
    ("lo", "Laoo", "char", False, False), ("my", "Mymr", "char", False, False), ("bo", "Tibt", "char", False, False),
    ("dz", "Tibt", "char", False, False), ("shn", "Mymr", "char", False, False),  # Shan: Myanmar script
    ("sr-Latn", "Latn", "13a", False, True), ("sr", "Cyrl", "13a", False, True),
    ("ja-Latn", "Latn", "13a", False, True),  # romanised Japanese has spaces
    ("en-GB", "Latn", "13a", False, True), ("ar", "Arab", "13a", False, True), ("hi", "Deva", "13a", False, True),
    ("qaa", "Latn", "13a", False, True),  # private use: langcodes' likely subtags fall back to und → en-Latn-US
    ("ii", "Yiii", "char", False, False), ("jv-Java", "Java", "char", False, False),  # line-break ID / AK-AS
    ("ban-Bali", "Bali", "char", False, False), ("jv", "Latn", "13a", False, True),  # Javanese today: Latin
    ("su-Sund", "Sund", "13a", False, True),  # Sundanese script: class AL, written with spaces
]


@pytest.mark.parametrize("tag, script, tok, char_ter, has_ter", SCRIPT_TABLE)
def test_tokenizer_follows_the_script(tag, script, tok, char_ter, has_ter):
    assert L.text_script(tag) == script
    assert L.bleu_tokenizer(tag) == tok
    assert L.character_level_ter(tag) is char_ter
    why = L.ter_unavailable(tag)
    assert (why is None) is has_ter
    if not has_ter:
        assert why.startswith(f"target script {script} is written without spaces")


def test_unspaced_scripts_are_the_line_break_sa_scripts_plus_tibetan():
    # UAX #14: class SA ("complex context dependent, South East Asian") marks the scripts whose words are not
    # delimited; derived here from the Unicode data the regex module ships, by script, and compared with the table.
    names = {"Thai": "Thai", "Lao": "Laoo", "Khmer": "Khmr", "Myanmar": "Mymr", "Tai_Tham": "Lana",
             "New_Tai_Lue": "Talu", "Tai_Viet": "Tavt", "Tai_Le": "Tale", "Ahom": "Ahom"}
    found = set()
    for cp in range(0x0E00, 0x11800):
        ch = chr(cp)
        if regex.match(r"\p{Line_Break=SA}", ch):
            hit = [code for name, code in names.items() if regex.match(rf"\p{{Script={name}}}", ch)]
            assert hit or regex.match(r"\p{Script=Common}|\p{Script=Inherited}", ch), hex(cp)
            found.update(hit)
    assert found == L.SA_SCRIPTS
    assert L.SA_SCRIPTS | L.AKSARA_SCRIPTS | L.SYLLABIC_ID_SCRIPTS | {"Tibt"} == L.UNSPACED_SCRIPTS


_EVERY_CHAR = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
_CANDIDATES = ("Thai Laoo Khmr Mymr Lana Talu Tavt Tale Ahom Bali Java Batk Cham Maka Kawi Brah Gran Diak Tutg Gukh "
               "Sund Bugi Lepc Rjng Limb Cakm Tibt Deva Beng Sinh Yiii Tang Nshu Kits Bopo Hani Hira Kana Hang Latn "
               "Zyyy Zinh").split()


def _letters(cls: str, sc: str | None = None) -> int:
    inner = r"\p{L}" + (f"&&\\p{{Line_Break={cls}}}" if cls else "") + (f"&&\\p{{sc={sc}}}" if sc else "")
    return len(regex.findall(f"[{inner}]", _EVERY_CHAR, flags=regex.V1))


def test_aksara_scripts_are_every_script_with_letters_of_class_ak_ap_or_as():
    # UAX #14 (Unicode 15.1+): AK/AP/AS mark Brahmic orthographic syllables in scripts written without spaces.
    # Every such letter belongs to one of the candidates (the sums agree), and the scripts that have any are the table.
    found = set()
    for cls in ("AK", "AP", "AS"):
        per = {sc: _letters(cls, sc) for sc in _CANDIDATES}
        assert sum(per.values()) == _letters(cls) > 0, cls
        found |= {sc for sc, n in per.items() if n}
    assert found == L.AKSARA_SCRIPTS


def test_syllabic_id_scripts_are_the_scripts_whose_letters_are_class_id():
    # Class ID (break before or after any character): besides Han and kana (their own tokenizers), the scripts all of
    # whose letters but one iteration mark are ID are the table; Hangul (146 of 11,675 letters: compatibility jamo)
    # and Latin (full-width forms) are not.
    almost_all = {sc for sc in _CANDIDATES if sc not in ("Zyyy", "Zinh")
                  and _letters("ID", sc) >= _letters("", sc) - 1 > 0}
    assert almost_all - {"Hani"} == L.SYLLABIC_ID_SCRIPTS
    assert _letters("ID", "Hang") < _letters("", "Hang") // 10


def _old_language_name(tag: str) -> str:
    """The rule prompts used before mtboard.core.languages (exact key, else the primary subtag, else the tag)."""
    if tag in L.LANGUAGE_NAMES:
        return L.LANGUAGE_NAMES[tag]
    return L.LANGUAGE_NAMES.get(tag.split("-")[0].lower(), tag)


def _committed_languages() -> set[str]:
    out = set()
    for path in glob.glob("submissions/*/*.json") + glob.glob("corpora/*.json"):
        with open(path, encoding="utf-8") as fh:
            ds = json.load(fh).get("dataset")
        if ds:
            out |= {ds["source_language"], ds["target_language"]}
    return out


def test_names_render_as_before_for_the_table_and_the_committed_languages():
    langs = _committed_languages()
    assert {"en", "es", "ca", "de", "fr", "ja"} <= langs
    tags = set(L.LANGUAGE_NAMES) | langs | {f"{t}-XX" for t in L.LANGUAGE_NAMES if "-" not in t}
    for tag in sorted(tags):
        assert L.language_name(tag) == _old_language_name(tag), tag


def test_committed_system_prompts_re_render_byte_for_byte():
    n = 0
    for path in sorted(glob.glob("submissions/*/*.json")):
        if path.endswith(".verification.json"):
            continue
        with open(path, encoding="utf-8") as fh:
            card = json.load(fh)
        if not card["method"].get("prompt_name"):
            continue
        ds = card["dataset"]
        prompt = load_prompt(card["method"]["prompt_name"])
        coaching = (card.get("method_config") or {}).get("coachingPrompt")
        if coaching is not None:  # a coached card (issue 18): the template received the coaching file's text
            prompt = prompt.with_coaching(coaching)
        text = prompt.system_prompt(ds["source_language"], ds["target_language"])
        assert text == card["system_prompt_used"], path
        assert hashlib.sha256(text.encode("utf-8")).hexdigest() == card["system_prompt_sha256"], path
        n += 1
    assert n >= 6


def test_comparisons_ignore_case_and_underscores():
    assert L.same_language("en-US", "EN_gb") and L.same_language("pt_br", "PT-BR") and L.same_language("zh", "zh-Hant")
    assert not L.same_language("pt", "es")
    assert L.is_one_of("es-MX", ["es"]) and L.is_one_of("en", ["en"]) and not L.is_one_of("fr", ["en", "es"])
    assert L.pick("ES-mx", {"es": 1, "fr": 2}) == "es" and L.pick("pt-br", {"pt-BR": 1, "pt": 2}) == "pt-BR"
    assert L.pick("de", {"es": 1}) is None


def test_tags_are_never_rewritten_to_another_language():
    # langcodes would normalise these (iw → he, sh → sr-Latn, tl → fil); mtboard looks tables up with what the tag says
    assert [L.primary(t) for t in ("iw", "sh", "tl", "eng")] == ["iw", "sh", "tl", "eng"]
    assert L.expected_scripts("sh") is None  # no table entry: no script rule (as before)


@pytest.mark.parametrize("bad", ["", "en-", "-en", "en--US", "toolongsubtag9"])
def test_malformed_tags(bad):
    with pytest.raises(InputError, match="not a BCP 47 language tag"):
        L.primary(bad)
    assert L.expected_scripts(bad) is None
    assert L.language_name(bad) == bad  # prompts show what they were given
