"""The one text normalisation (mtboard.core.text.normalise, issue 14 part 2) and line records (split_records).

Expected strings are written by hand from the table in mtboard/core/text.py; chrF++ values are sacrebleu's own
``sentence_chrf(..., word_order=2)`` on the texts shown.
"""

from __future__ import annotations

import itertools
import json

import pytest
import sacrebleu

from mtboard.core.text import NORMALISATION_VERSION, is_blank, normalise, normalise_for_match, split_records


@pytest.mark.parametrize("raw,expected", [
    # line separators → \n
    ("a\r\nb", "a\nb"), ("a\rb", "a\nb"), ("a\u2028b", "a\nb"), ("a\u2029b", "a\nb"), ("a\u0085b", "a\nb"),
    ("a\x0bb\x0cc", "a\nb\nc"), ("a\x1cb\x1dc\x1ed", "a\nb\nc\nd"),
    # always removed
    ("\ufeffHello", "Hello"), ("Buenos\u200b días", "Buenos días"), ("co\u00adop", "coop"), ("a\u2060b", "ab"),
    ("\u200fשלום\u200e", "שלום"), ("\u202bعربي\u202c", "عربي"), ("\u2067x\u2069", "x"), ("\u061cس", "س"),
    ("\u202a\u202d\u202e\u2066\u2068", ""),
    # ZWNJ/ZWJ: kept where the script needs them, removed elsewhere
    ("می\u200cخواهم", "می\u200cخواهم"),               # Persian: 'I want' keeps its non-joiner
    ("क्\u200cष", "क्\u200cष"),                       # Devanagari half-form control after the virama
    ("ශ්\u200dරී", "ශ්\u200dරී"),                      # Sinhala: ZWJ after the al-lakuna
    ("👩\u200d💻", "👩\u200d💻"),                      # emoji ZWJ sequence
    ("👁\ufe0f\u200d🗨\ufe0f", "👁\ufe0f\u200d🗨\ufe0f"),  # through a variation selector
    ("👍🏽\u200d", "👍🏽"),                             # nothing joined after it
    ("a\u200db", "ab"), ("日\u200c本", "日本"), ("\u200cمی", "می"), ("می\u200c", "می"), ("x\u200c\u200cy", "xy"),
    ("ب\u200b\u200cپ", "ب\u200cپ"),                  # the ZWSP goes first, then the ZWNJ sits between two letters
    # NFC, also across a removed character
    ("e\u0301", "é"), ("e\u200b\u0301", "é"), ("Å", "Å"),
    # kept: spaces, variation selectors, CGJ
    ("a\u00a0:", "a\u00a0:"), ("a\u202f!", "a\u202f!"), ("葛\U000E0100", "葛\U000E0100"), ("a\u034fb", "a\u034fb"),
    ("plain ASCII\n", "plain ASCII\n"),
    # width folding (version 2, issue 32 item 2): NFKC on half-width katakana U+FF61–U+FF9F and full-width ASCII
    # U+FF01–U+FF5E only. Expected strings written by hand from the Unicode decompositions (U+FF95 ﾕ → U+30E6 ユ,
    # U+FF70 ｰ → U+30FC ー, U+FF7B ｻ + U+FF9E ﾞ → U+30B6 ザ, U+FF21 Ａ → A, U+FF0D － → -).
    ("ﾕｰｻﾞｰｱｶｳﾝﾄ", "ユーザーアカウント"), ("ﾊﾟｽﾜｰﾄﾞ", "パスワード"), ("｢ﾃｽﾄ｣｡", "「テスト」。"),
    ("Ｗｉ－Ｆｉ　１２３！", "Wi-Fi\u3000123!"),           # the ideographic space U+3000 is kept
    ("カ\uff9e", "ガ"),                               # a half-width voiced mark composes with a full-width kana
    ("ﬁ ² ㍿ ￥ ｟", "ﬁ ² ㍿ ￥ ｟"),                   # other NFKC foldings (U+FB01, U+00B2, U+337F, U+FFE5, U+FF5F) kept
])
def test_normalise_table(raw, expected):
    assert normalise(raw) == expected


def test_normalise_is_idempotent_on_every_pair_and_triple_of_special_characters():
    specials = ["a", "ب", "क्", "👩", "\ufe0f", "\u0301", "\u200b", "\u200c", "\u200d", "\u00ad", "\ufeff", "\u200f",
                "\u2028", "\r", "\n", " ", "ｶ", "\uff9e", "カ", "Ａ", "\u3099"]
    for n in (2, 3):
        for combo in itertools.product(specials, repeat=n):
            text = "".join(combo)
            once = normalise(text)
            assert normalise(once) == once, repr(text)


def test_half_width_katakana_is_an_exact_match_after_normalisation():
    # the case: a half-width output of the full-width reference matched nothing (exact match false)
    assert normalise_for_match("ﾕｰｻﾞｰｱｶｳﾝﾄ") == normalise_for_match("ユーザーアカウント")
    assert normalise_for_match("ｶﾞｲﾄﾞ") != normalise_for_match("ガイト")  # the voiced mark is not dropped


def test_version_is_recorded_as_a_string():
    assert NORMALISATION_VERSION == "2"  # 1: issue 14; 2: width folding (issue 32 item 2)


def test_soft_hyphen_and_zero_width_space_no_longer_cost_chrf():
    chrf = lambda h, r: sacrebleu.sentence_chrf(h, [r], word_order=2).score  # noqa: E731
    cases = [("Die Zusammenarbeit ist gut.", "Die Zusammen\u00adarbeit ist gut.", 79.64546758352678),
             ("Buenos días", "Buenos\u200b días", 48.80751818460783)]
    for hyp, ref, raw_score in cases:
        assert chrf(hyp, ref) == pytest.approx(raw_score, abs=1e-9)  # what the raw reference scored
        assert chrf(normalise(hyp), normalise(ref)) == 100.0


@pytest.mark.parametrize("text,blank", [
    (" ", True), ("\u200b", True), ("\u00ad", True), ("\ufeff", True), ("\u2028\u200e", True), ("", True),
    ("\u200c", True), (".", False), ("a\u200b", False), ("👍", False),
])
def test_is_blank(text, blank):
    assert is_blank(text) is blank


def test_normalise_for_match_collapses_whitespace_after_normalising():
    assert normalise_for_match(" Hola\u2028\u200b  mundo\u00ad ") == "Hola mundo"


@pytest.mark.parametrize("text,records", [
    ("a\nb\n", ["a", "b"]), ("a\r\nb", ["a", "b"]), ("a\u2028b\nc", ["a\u2028b", "c"]),
    ("a\u0085b\x0bc\x0cd\re", ["a\u0085b\x0bc\x0cd\re"]), ("a\n\nb", ["a", "", "b"]), ("", []), ("\n", [""]),
])
def test_split_records_on_newline_only(text, records):
    assert split_records(text) == records


def test_judge_answers_log_keeps_a_line_separator_inside_a_record(tmp_path):
    from mtboard.judges.store import read_answers

    d = tmp_path / "judge"
    d.mkdir()
    recs = [{"entry_id": 1, "answer": "Critical:\u2028no-error"}, {"entry_id": 2, "answer": "x\u0085y"}]
    (d / "rubric.answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs),
                                            encoding="utf-8")
    assert read_answers(tmp_path, "rubric") == recs
