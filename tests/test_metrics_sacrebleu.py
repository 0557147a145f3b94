"""Pins the sacrebleu behaviour mtboard.score.metrics._sacrebleu relies on (the only module that calls sacrebleu's private
API): per-segment statistics of hand-made pairs counted by hand, the score of summed statistics equal to sacrebleu's
own ``corpus_score`` / ``sentence_score`` and to the formula worked out by hand, and TER's tokenisation. A sacrebleu
release that changes any of these must fail here, not silently change card scores.

Every input is a hand-made string (test data, not evaluation data); every expected value is counted in the comments.
"""

from __future__ import annotations

import math

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER

from mtboard.score.metrics import _sacrebleu
from mtboard.score.metrics.bleu import bleu_from_totals, sentence_bleu_from_stats
from mtboard.score.metrics.chrf import chrf_from_totals
from mtboard.score.metrics.ter import sentence_ter_from_stats, ter_from_stats


def test_sacrebleu_major_version_is_the_one_pinned():
    # pyproject pins sacrebleu>=2.4,<3: the private methods below exist with these signatures throughout 2.x
    assert sacrebleu.__version__.split(".")[0] == "2"


def test_chrf_statistics_and_f_score_by_hand():
    # "abc" vs "abd" (chrF++: char n-grams 1–6 with whitespace removed, word n-grams 1–2), (hyp, ref, match):
    #   char 1-grams a b c | a b d → (3, 3, 2); 2-grams ab bc | ab bd → (2, 2, 1); 3-grams abc | abd → (1, 1, 0);
    #   char 4–6-grams: none; word 1-grams "abc" | "abd" → (1, 1, 0); word 2-grams: none.
    metric = CHRF(word_order=2)
    stats = _sacrebleu.extract_statistics(metric, ["abc"], ["abd"])
    assert stats == [[3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]]
    # effective orders (both sides non-empty): char 1, 2, 3 and word 1 → precision = recall = (2/3 + 1/2 + 0 + 0) / 4
    # = 7/24; F(β=2) of equal precision and recall is that value: chrF++ = 100 · 7/24 = 29.1666…
    score = _sacrebleu.chrf_f_score(metric, stats[0])
    assert score == pytest.approx(100 * 7 / 24, abs=1e-12)
    assert score == metric.sentence_score("abc", ["abd"]).score == metric.corpus_score(["abc"], [["abd"]]).score
    assert chrf_from_totals(stats[0]) == score
    assert _sacrebleu.chrf_f_score(metric, [0] * 24) == 0.0  # nothing on either side: 0, not a division error


def test_chrf_sums_of_segment_statistics_give_the_corpus_score():
    metric = CHRF(word_order=2)
    hyps, refs = ["abc", "The cat sat.", ""], ["abd", "The cat sat down.", "Nothing"]
    rows = _sacrebleu.extract_statistics(metric, hyps, refs)
    totals = [sum(col) for col in zip(*rows)]
    assert _sacrebleu.chrf_f_score(metric, totals) == metric.corpus_score(hyps, [refs]).score


def test_bleu_statistics_and_corpus_score_by_hand():
    # "the cat sat on the mat" vs "the cat sat on a mat" (13a): lengths 6 and 6; clipped matches / totals:
    #   1-grams 5/6 (the ×2 in the hypothesis, ×1 in the reference), 2-grams 3/5 (the cat, cat sat, sat on),
    #   3-grams 2/4 (the cat sat, cat sat on), 4-grams 1/3 (the cat sat on).
    metric = BLEU(tokenize="13a", force=True)
    stats = _sacrebleu.extract_statistics(metric, ["the cat sat on the mat"], ["the cat sat on a mat"])
    assert stats == [[6, 6, 5, 3, 2, 1, 6, 5, 4, 3]]
    # BLEU = BP · (Π pₙ)^(1/4) = 1 · (5/6 · 3/5 · 2/4 · 1/3)^(1/4) = (1/12)^(1/4)
    expected = 100 * (1 / 12) ** 0.25
    got = bleu_from_totals(stats[0])
    assert got == pytest.approx(expected, abs=1e-12) == 53.7284965911771
    assert got == metric.corpus_score(["the cat sat on the mat"], [["the cat sat on a mat"]]).score


def test_sentence_bleu_uses_effective_order_by_hand():
    # "the cat sat" vs "the cat sat down": lengths 3 and 4; matches 3/3, 2/2, 1/1 and no 4-gram at all
    metric = BLEU(tokenize="13a", force=True)
    stats = _sacrebleu.extract_statistics(metric, ["the cat sat"], ["the cat sat down"])
    assert stats == [[3, 4, 3, 2, 1, 0, 3, 2, 1, 0]]
    # effective order 3, all precisions 1: BLEU = BP = exp(1 − 4/3)
    assert sentence_bleu_from_stats(stats[0]) == pytest.approx(100 * math.exp(-1 / 3), abs=1e-9)
    assert sentence_bleu_from_stats(stats[0]) == pytest.approx(
        sacrebleu.sentence_bleu("the cat sat", ["the cat sat down"]).score, abs=1e-12)
    assert bleu_from_totals(stats[0]) < 1e-3  # corpus BLEU has no effective order: a zero 4-gram total sinks it


def test_ter_statistics_score_and_tokens_by_hand():
    metric = TER()
    # one deletion ("c") against a 3-word reference; one shift ("sat" to the front) against 3 words
    assert _sacrebleu.extract_statistics(metric, ["a b c d", "the cat sat"], ["a b d", "sat the cat"]) == [
        [1.0, 3.0], [1.0, 3.0]]
    assert _sacrebleu.ter_score(metric, [1.0, 3.0]) == pytest.approx(100 / 3, abs=1e-12)
    assert _sacrebleu.ter_score(metric, [1.0, 3.0]) == metric.corpus_score(["a b c d"], [["a b d"]]).score
    assert _sacrebleu.ter_score(metric, [2.0, 0.0]) == 100.0  # empty reference, non-empty hypothesis
    assert _sacrebleu.ter_score(metric, [0.0, 0.0]) == 0.0
    assert ter_from_stats([[1.0, 3.0], None, [0.0, 5.0]]) == pytest.approx(100 / 8, abs=1e-12)
    assert sentence_ter_from_stats([1.0, 3.0]) == pytest.approx(sacrebleu.sentence_ter("a b c d", ["a b d"]).score)
    # tokenisation: default TER lower-cases and splits on whitespace only; asian_support splits Han characters
    # one by one and keeps a run of kana (here hiragana の + katakana テキスト) as one token
    assert _sacrebleu.ter_tokens(metric, "Hello, world!  ") == ["hello,", "world!"]
    assert _sacrebleu.ter_tokens(TER(normalized=True, asian_support=True), "日本語のテキスト") == [
        "日", "本", "語", "のテキスト"]
    assert _sacrebleu.ter_tokens(metric, "日本語のテキスト") == ["日本語のテキスト"]
