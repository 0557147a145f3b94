"""Tokenization chosen by the target's script, TER availability and width folding (issue 32 item 2).

Fixtures are tiny hand-made sentences written for these tests (not evaluation data): a 10-word Thai sentence and the
same sentence with its last word changed (ฉัน ชอบ กิน ข้าวผัด กับ ไข่ดาว ทุก วัน ตอน เช้า/เย็น: "I like to eat fried
rice with a fried egg every day in the morning/evening"), a Khmer sentence with one verb changed (ខ្ញុំចូលចិត្ត
អាន/សរសេរ សៀវភៅ: "I like reading/writing books") and a Japanese UI string in half-width katakana. Every expected
number is a literal computed independently with sacrebleu's own functions on the same strings (``sacrebleu.
sentence_bleu(h, [r], tokenize=...)``, ``sentence_chrf(h, [r], word_order=2)``), shown next to each assertion.
"""

from __future__ import annotations

import pytest
import sacrebleu

from extras_support import requires_ja
from mtboard.score import scoring
from mtboard.score.metrics.bleu import bleu_signature, sentence_bleu_from_stats
from mtboard.score.metrics.chrf import sentence_chrf_from_stats
from mtboard.score.metrics.segments import segment_statistics
from mtboard.score.metrics.ter import ter_from_stats, ter_signature
from mtboard.core.schema import Entry, TranslationRecord

THAI_REF = "ฉันชอบกินข้าวผัดกับไข่ดาวทุกวันตอนเช้า"
THAI_HYP = "ฉันชอบกินข้าวผัดกับไข่ดาวทุกวันตอนเย็น"
KHMER_REF = "ខ្ញុំចូលចិត្តអានសៀវភៅ"
KHMER_HYP = "ខ្ញុំចូលចិត្តសរសេរសៀវភៅ"


def test_thai_one_word_difference_scores_with_the_char_tokenizer():
    # before: 13a saw one "word" per sentence; sacrebleu.sentence_bleu(h, [r]) = 0.0 and sentence_ter = 100.0
    assert sacrebleu.sentence_bleu(THAI_HYP, [THAI_REF]).score == 0.0
    chrf, bleu, ter = segment_statistics([THAI_HYP], [THAI_REF], "th")
    # sacrebleu.sentence_bleu(THAI_HYP, [THAI_REF], tokenize="char").score = 91.77275164274714
    assert sentence_bleu_from_stats(bleu[0]) == pytest.approx(91.77275164274714, abs=1e-9)
    assert "tok:char" in bleu_signature("th") and "tok:char" in bleu_signature("th-TH")
    # chrF++ is unchanged by the script (sentence_chrf(h, [r], word_order=2) = 78.45399352033586)
    assert sentence_chrf_from_stats(chrf[0]) == pytest.approx(78.45399352033586, abs=1e-9)
    assert ter == [None] and ter_from_stats(ter) is None  # no TER mode for Thai


def test_khmer_scores_with_the_char_tokenizer_and_no_ter():
    chrf, bleu, ter = segment_statistics([KHMER_HYP], [KHMER_REF], "km")
    # sacrebleu.sentence_bleu(KHMER_HYP, [KHMER_REF], tokenize="char").score = 69.07573115737009 (13a: 0.0)
    assert sentence_bleu_from_stats(bleu[0]) == pytest.approx(69.07573115737009, abs=1e-9)
    assert sentence_chrf_from_stats(chrf[0]) == pytest.approx(58.02614409693512, abs=1e-9)
    assert ter == [None]


def _score(entries, outputs, tgt):
    records = [TranslationRecord(entry_id=e.id, raw_predicted=o) for e, o in zip(entries, outputs)]
    return scoring.score_run(entries, records, source_language="en", target_language=tgt, elapsed_seconds=1.0,
                             fst=False)


def test_a_thai_card_has_no_ter_and_says_why():
    entries = [Entry(id=1, source="I like to eat fried rice with a fried egg every day in the morning.",
                     reference=THAI_REF)]
    scores, results = _score(entries, [THAI_HYP], "th")
    assert scores.ter is None and scores.ter_coverage is None and results[0].ter_score is None
    assert results[0].stats.ter is None
    assert scores.metric_availability["ter"] == ("target script Thai is written without spaces between words and "
                                                 "sacrebleu's TER has no mode for it (asian_support covers Han and "
                                                 "kana only)")
    assert scores.bleu == pytest.approx(91.77275164274714, abs=1e-9)  # corpus = sentence BLEU for one segment here
    assert "tok:char" in scores.signatures.bleu


def test_word_script_card_has_no_ter_availability_entry():
    entries = [Entry(id=1, source="Save", reference="Guardar")]
    scores, _ = _score(entries, ["Guardar"], "es")
    assert "ter" not in scores.metric_availability and scores.ter == 0.0 and scores.ter_coverage == 1.0


@requires_ja
def test_half_width_katakana_output_is_an_exact_match_of_the_full_width_reference():
    # the case: before, exact match false and sentence chrF++ 22.6 (sentence_chrf on the raw strings:
    # 22.46304946564493); after width folding both are the same text
    ref, hyp = "ユーザーアカウントを作成します", "ﾕｰｻﾞｰｱｶｳﾝﾄを作成します"
    assert round(sacrebleu.sentence_chrf(hyp, [ref], word_order=2).score, 1) == 22.5
    entries = [Entry(id=1, source="Create a user account", reference=ref)]
    scores, results = _score(entries, [hyp], "ja")
    r = results[0]
    assert r.exact_match is True and r.chrf_score == 100.0 and r.bleu_score == 100.0 and r.ter_score == 0.0
    assert "tok:ja-mecab" in scores.signatures.bleu and "textnorm:2" in scores.signatures.bleu
    assert r.predicted == hyp  # the card keeps the raw text


@pytest.mark.parametrize("tag, tok, ter_norm", [("yue", "zh", "norm:yes"), ("cmn", "zh", "norm:yes"),
                                                ("zh-Hant", "zh", "norm:yes"), ("jpn", "ja-mecab", "norm:yes"),
                                                ("kor", "ko-mecab", "norm:no"), ("sr-Latn", "13a", "norm:no")])
def test_three_letter_and_script_tags_get_their_scripts_tokenizer(tag, tok, ter_norm):
    if tok.endswith("mecab"):
        pytest.importorskip("MeCab")
    assert f"tok:{tok}" in bleu_signature(tag)
    assert ter_norm in ter_signature(tag)


# Scripts of line-break classes AK/AP/AS (Javanese, Balinese) and ID (Yi) are written without spaces too (issue 32
# review: they used to get 13a and word TER). Hand-made strings, not evaluation data: Javanese ꦲꦏꦸꦩꦔꦤ꧀ꦱꦼꦒ / …ꦥꦶꦱꦁ
# ("aku mangan sega / pisang": I eat rice / a banana), and Balinese and Yi syllable strings chosen for the test whose
# last syllable(s) differ.
UNSPACED_CASES = [
    # Yi: 7 characters, the last one differs. By hand, char n-gram precisions 6/7, 5/6, 4/5, 3/4, brevity penalty 1:
    # BLEU = (6/7 · 5/6 · 4/5 · 3/4)^(1/4) = (3/7)^(1/4) = 0.809106…; sacrebleu.sentence_bleu(h, [r], tokenize="char")
    # = 80.91067115702207 (13a: 0.0, one "word" each)
    ("ii", "Yiii", "ꆈꌠꉙꀕꉢꌐꆀ", "ꆈꌠꉙꀕꉢꌐꁱ", 80.91067115702207),
    # sacrebleu.sentence_bleu(h, [r], tokenize="char") = 59.00468726392806 (13a: 0.0)
    ("jv-Java", "Java", "ꦲꦏꦸꦩꦔꦤ꧀ꦱꦼꦒ", "ꦲꦏꦸꦩꦔꦤ꧀ꦥꦶꦱꦁ", 59.00468726392806),
    # sacrebleu.sentence_bleu(h, [r], tokenize="char") = 78.25422900366438 (13a: 0.0)
    ("ban-Bali", "Bali", "ᬢᬶᬬᬂᬫᬵᬄᬦᬶᬄ", "ᬢᬶᬬᬂᬫᬵᬄᬦᬲᬶ", 78.25422900366438),
]


@pytest.mark.parametrize("tag, script, ref, hyp, bleu", UNSPACED_CASES, ids=[c[0] for c in UNSPACED_CASES])
def test_yi_javanese_and_balinese_score_with_char_bleu_and_no_ter(tag, script, ref, hyp, bleu):
    assert sacrebleu.sentence_bleu(hyp, [ref]).score == 0.0  # what 13a gave before
    _chrf, stats, ter = segment_statistics([hyp], [ref], tag)
    assert sentence_bleu_from_stats(stats[0]) == pytest.approx(bleu, abs=1e-9)
    assert "tok:char" in bleu_signature(tag)
    assert ter == [None]
    entries = [Entry(id=1, source="I eat rice", reference=ref)]
    scores, results = _score(entries, [hyp], tag)
    assert scores.ter is None and scores.ter_coverage is None and results[0].ter_score is None
    assert scores.metric_availability["ter"] == (f"target script {script} is written without spaces between words "
                                                 "and sacrebleu's TER has no mode for it (asian_support covers Han "
                                                 "and kana only)")
    assert scores.bleu == pytest.approx(bleu, abs=1e-9) and "tok:char" in scores.signatures.bleu


@pytest.mark.parametrize("tag", ["jv", "ban", "su-Sund", "ko"])
def test_latin_javanese_balinese_and_spaced_scripts_keep_word_ter(tag):
    # jv and ban are written in Latin today (CLDR likely script Latn); Sundanese script (line-break class AL) and
    # Korean write spaces between words: word-level TER, no availability entry
    entries = [Entry(id=1, source="Save", reference="a b c")]
    scores, _ = _score(entries, ["a b d"], tag)
    assert "ter" not in scores.metric_availability and scores.ter == pytest.approx(100 / 3)
