"""sacrebleu wrappers: known values, tokenizers, signatures, normalisation, sufficient statistics, bootstrap, TER cap.

Reference values come from sacrebleu's README example (its three-segment system with the first reference stream) and
from sacrebleu's own corpus/sentence functions called directly in the test (an independent path: they re-tokenise
and re-count the text, we only sum stored integers).
"""

from __future__ import annotations

import glob
import json
import unicodedata

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

from mtboard.core.errors import ConfigError, MtboardError
from mtboard.core.languages import bleu_tokenizer
from mtboard.core.text import normalise
from mtboard.score.metrics.bleu import bleu_from_stats, bleu_signature, sentence_bleu_from_stats
from mtboard.score.metrics.bootstrap import BOOTSTRAP_SEED, chrf_ci
from mtboard.score.metrics.chrf import CHRF_STATS_LEN, chrf_from_stats, chrf_signature, sentence_chrf_from_stats
from mtboard.score.metrics.match import exact_match, length_ratio
from mtboard.score.metrics.pool import plan_chunks
from mtboard.score.metrics.segments import segment_statistics
from mtboard.score.metrics.ter import (TER_MAX_CJK_TOKENS, TER_MAX_WORDS, make_ter, sentence_ter_from_stats,
                                 ter_from_stats, ter_signature, ter_token_cap)

from extras_support import requires_ja, skip_without_ja

# sacrebleu README, "Using the Python API"
README_SYS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
README_REFS = ["The dog bit the man.", "It was not unexpected.", "The man bit him first."]


def corpus_pairs() -> list[tuple[str, str, str]]:
    """(source, reference, target language) of every committed corpus (real human translations)."""
    out = []
    for path in sorted(glob.glob("corpora/*.json")):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        tgt = doc["dataset"]["target_language"]
        out += [(e["source"], e["reference"], tgt) for e in doc["entries"]]
    return out


def test_readme_example_with_references_as_one_stream():
    chrf, bleu, _ = segment_statistics(README_SYS, README_REFS, "en")
    assert round(bleu_from_stats(bleu), 2) == 45.07
    assert round(chrf_from_stats(chrf), 2) == 51.73
    # the same numbers from sacrebleu directly, references as a list of streams [[r1, r2, r3]]
    assert round(BLEU().corpus_score(README_SYS, [README_REFS]).score, 2) == 45.07
    assert round(CHRF(word_order=2).corpus_score(README_SYS, [README_REFS]).score, 2) == 51.73


def test_references_in_the_wrong_shape_give_another_score():
    # one list per sentence is read by sacrebleu as three streams of length 1 and silently truncated to one segment
    wrong = BLEU().corpus_score(README_SYS, [[r] for r in README_REFS]).score
    assert round(wrong, 2) != 45.07
    assert round(wrong, 2) == 100.0  # only "The dog bit the man." vs itself survives the truncation


def test_unequal_streams_are_an_error():
    with pytest.raises(MtboardError, match="3 hypotheses but 2 references"):
        segment_statistics(README_SYS, README_REFS[:2], "en")


@pytest.mark.parametrize("lang, tok", [("zh", "zh"), ("zh-Hans", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"),
                                       ("es", "13a"), ("en-GB", "13a"), ("ru", "13a")])
def test_tokenizer_by_target_language(lang, tok):
    skip_without_ja(lang)
    assert bleu_tokenizer(lang) == tok
    assert f"tok:{tok}" in bleu_signature(lang)


def test_chinese_pair_scores_differently_with_zh_than_13a():
    hyp, ref = ["猫坐在垫子上。"], ["猫坐在席子上。"]
    _, bleu, _ = segment_statistics(hyp, ref, "zh")
    zh = bleu_from_stats(bleu)
    assert zh == pytest.approx(BLEU(tokenize="zh").corpus_score(hyp, [ref]).score, abs=1e-9)
    assert zh != pytest.approx(BLEU(tokenize="13a").corpus_score(hyp, [ref]).score)
    assert BLEU(tokenize="13a").corpus_score(hyp, [ref]).score == 0.0  # one whitespace "word", no match
    assert "tok:zh" in bleu_signature("zh") and "asian:yes" in ter_signature("zh")
    assert chrf_signature() == ("nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:" + sacrebleu.__version__
                                + "|textnorm:2")


def test_missing_tokenizer_fails_loudly(monkeypatch):
    import sacrebleu.tokenizers.tokenizer_ja_mecab as ja

    monkeypatch.setattr(ja, "MeCab", None)  # what an install without sacrebleu[ja] looks like
    with pytest.raises(ConfigError, match="ja-mecab.*mtboard\\[ja\\]"):
        segment_statistics(["猫"], ["猫"], "ja")
    with pytest.raises(ConfigError):
        bleu_signature("ja")


def test_nfd_and_nfc_forms_score_100():
    text = "Él está en el café de Ñuñoa, mañana también."
    nfd = unicodedata.normalize("NFD", text)
    assert nfd != text
    # without normalisation sacrebleu sees different characters
    assert CHRF(word_order=2).corpus_score([nfd], [[text]]).score < 100
    chrf, bleu, ter = segment_statistics([nfd], [text], "es")
    assert chrf_from_stats(chrf) == 100.0
    assert bleu_from_stats(bleu) == 100.0
    assert ter_from_stats(ter) == 0.0
    assert exact_match(nfd, text)


@requires_ja
@pytest.mark.slow  # a whole-system test: 9 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_corpus_scores_from_stored_stats_equal_sacrebleu_on_real_text():
    pairs = corpus_pairs()
    if not pairs:
        pytest.skip("no committed corpora")
    # hypothesis: the reference of the next entry of the same corpus (real text, imperfect, varied lengths)
    by_lang: dict[str, list[tuple[str, str]]] = {}
    for src, ref, tgt in pairs:
        by_lang.setdefault(tgt, []).append((src, ref))
    for tgt, rows in by_lang.items():
        refs = [r for _, r in rows]
        hyps = refs[1:] + refs[:1]
        chrf, bleu, ter = segment_statistics(hyps, refs, tgt)
        nh = [normalise(h) for h in hyps]  # the one text normalisation (NFC, width folding, …) as the scorer does
        nr = [normalise(r) for r in refs]
        assert abs(chrf_from_stats(chrf) - CHRF(word_order=2).corpus_score(nh, [nr]).score) < 1e-9, tgt
        tok = bleu_tokenizer(tgt)
        assert abs(bleu_from_stats(bleu) - BLEU(tokenize=tok).corpus_score(nh, [nr]).score) < 1e-9, tgt
        # any subset, e.g. every third segment (paired significance tests work on subsets)
        sub = list(range(0, len(nh), 3))
        direct = CHRF(word_order=2).corpus_score([nh[i] for i in sub], [[nr[i] for i in sub]]).score
        assert abs(chrf_from_stats(chrf, sub) - direct) < 1e-9
        # TER over the covered segments equals sacrebleu's TER on exactly those segments
        cov = [i for i, t in enumerate(ter) if t is not None]
        assert 0 < len(cov) <= len(nh)
        ter_metric = make_ter(tgt)
        direct_ter = ter_metric.corpus_score([nh[i] for i in cov], [[nr[i] for i in cov]]).score
        assert abs(ter_from_stats(ter) - direct_ter) < 1e-9


def test_sentence_scores_from_stats_equal_sacrebleu_sentence_functions():
    pairs = [(h, r) for h, r in zip(README_SYS, README_REFS)] + [
        ("", "Something."), ("x", "x"), ("Una casa roja.", "La casa es roja."), ("...", "Una frase.")]
    chrf, bleu, ter = segment_statistics([h for h, _ in pairs], [r for _, r in pairs], "en")
    for (h, r), c, b, t in zip(pairs, chrf, bleu, ter):
        assert sentence_chrf_from_stats(c) == sacrebleu.sentence_chrf(h, [r], word_order=2).score
        assert sentence_bleu_from_stats(b) == pytest.approx(sacrebleu.sentence_bleu(h, [r]).score,
                                                                    abs=1e-9)
        assert sentence_ter_from_stats(t) == pytest.approx(sacrebleu.sentence_ter(h, [r]).score, abs=1e-9)


def test_empty_hypothesis_scores_zero_and_ter_counts_every_reference_word():
    chrf, bleu, ter = segment_statistics(["", ""], ["Una frase corta.", "Otra."], "es")
    assert chrf_from_stats(chrf) == 0.0
    assert bleu_from_stats(bleu) == 0.0
    # TER tokens without normalisation are whitespace words: "una frase corta." → 3, "otra." → 1; all deleted
    assert ter == [[3.0, 3.0], [1.0, 1.0]]
    assert ter_from_stats(ter) == 100.0


def test_ter_length_cap_and_coverage():
    short = "one two three"
    long_ref = " ".join(f"w{i}" for i in range(TER_MAX_WORDS + 1))
    edge = " ".join(f"w{i}" for i in range(TER_MAX_WORDS))
    _, _, ter = segment_statistics([short, short, long_ref, edge], [short, long_ref, short, edge], "en")
    assert ter[0] == [0.0, 3.0]
    assert ter[1] is None  # reference over the cap
    # a hypothesis over the cap is scored (issue 32: coverage is decided by the reference alone): 21 hypothesis
    # words against "one two three" — 3 substitutions + 18 deletions = 21 edits over 3 reference words
    assert ter[2] == [21.0, 3.0]
    assert ter[3] == [0.0, float(TER_MAX_WORDS)]
    assert ter_from_stats([None, None]) is None


@requires_ja
def test_ter_cap_counts_characters_for_japanese_and_chinese_targets():
    # Hand-made: character-level TER (normalized + asian_support) makes every Han character one token (a run of kana
    # stays one token), so the cap is TER_MAX_CJK_TOKENS there and TER_MAX_WORDS for word-level targets.
    assert ter_token_cap("ja") == ter_token_cap("zh-Hant") == TER_MAX_CJK_TOKENS == 60
    assert ter_token_cap("es") == ter_token_cap("ko") == TER_MAX_WORDS == 20
    han = "日月火水木金土山川田人口目耳手足力男女子天気雨雪風花草竹林森石"  # 31 distinct Han characters
    assert len(han) == len(set(han)) == 31
    edge = (han * 3)[:TER_MAX_CJK_TOKENS]
    over = (han * 3)[:TER_MAX_CJK_TOKENS + 1]
    short = han[:25]  # 25 tokens: over the word cap, within the character cap
    kana = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん" * 2
    _, _, ter = segment_statistics([edge, over, short, edge[:-1], kana], [edge, over, short, edge, kana],
                                           "ja")
    assert ter[0] == [0.0, 60.0]
    assert ter[1] is None  # a reference of 61 character tokens
    assert ter[2] == [0.0, 25.0]
    assert ter[3] == [1.0, 60.0]  # one deleted character
    assert ter[4] == [0.0, 1.0]  # 92 hiragana are a single TER token
    # the same 25 characters with spaces in a Spanish target are 25 whitespace words: over the word cap
    _, _, ter_es = segment_statistics([" ".join(short)], [" ".join(short)], "es")
    assert ter_es == [None]


def test_process_pool_split_gives_identical_statistics():
    pairs = corpus_pairs()[:400] or [(h, r, "en") for h, r in zip(README_SYS * 100, README_REFS * 100)]
    hyps = [p[1] for p in pairs][1:] + [pairs[0][1]]
    refs = [p[1] for p in pairs]
    tgt = "es"
    inline = segment_statistics(hyps, refs, tgt, workers=1)
    pooled = segment_statistics(hyps, refs, tgt, workers=2)
    assert inline == pooled


def test_bootstrap_ci_is_seeded_and_brackets_the_score():
    pairs = corpus_pairs()[:300] or [(h, r, "en") for h, r in zip(README_SYS * 50, README_REFS * 50)]
    refs = [p[1] for p in pairs]
    hyps = refs[2:] + refs[:2]
    chrf, _, _ = segment_statistics(hyps, refs, "es")
    lo, hi = chrf_ci(chrf)
    assert chrf_ci(chrf) == (lo, hi)  # deterministic
    assert lo <= chrf_from_stats(chrf) <= hi
    assert 0 < hi - lo < 20
    # same construction done by hand with numpy for one resample: sums of the drawn rows → sacrebleu's F-score
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    idx = rng.integers(0, len(chrf), size=(50, len(chrf)))[0]
    first = chrf_from_stats(chrf, list(idx))
    assert min(chrf_ci(chrf, resamples=1)) == first
    assert chrf_ci([]) is None


def test_bootstrap_ci_equals_a_plain_python_resampling():
    # Independent path: the resamples drawn exactly as documented (default_rng(seed), blocks of 50 rows of n
    # indices), each summed with Python ints row by row and scored with sacrebleu's F-score. 120 resamples cross
    # two full blocks and a partial one; the vectorised bootstrap must give the same bounds bit for bit.
    pairs = corpus_pairs()[:60] or [(h, r, "en") for h, r in zip(README_SYS * 20, README_REFS * 20)]
    refs = [p[1] for p in pairs]
    chrf, _, _ = segment_statistics(refs[1:] + refs[:1], refs, "es")
    n, resamples = len(chrf), 120
    rng = np.random.default_rng(7)
    scores = []
    for start in range(0, resamples, 50):
        for row in rng.integers(0, n, size=(min(50, resamples - start), n)).tolist():
            totals = [sum(chrf[i][k] for i in row) for k in range(CHRF_STATS_LEN)]
            scores.append(min(100.0, max(0.0, CHRF(word_order=2)._compute_f_score(totals))))
    scores.sort()
    expected = (scores[resamples // 40], scores[resamples - resamples // 40 - 1])
    assert chrf_ci(chrf, resamples=resamples, seed=7) == expected
    assert chrf_ci(np.array(chrf, dtype=np.int64), resamples=resamples, seed=7) == expected


def test_corpus_scores_from_arrays_lists_and_subsets_agree():
    pairs = corpus_pairs()[:80] or [(h, r, "en") for h, r in zip(README_SYS * 20, README_REFS * 20)]
    refs = [p[1] for p in pairs]
    hyps = refs[3:] + refs[:3]
    chrf, bleu, _ = segment_statistics(hyps, refs, "es")
    sub = list(range(0, len(chrf), 3))
    direct = CHRF(word_order=2).corpus_score([hyps[i] for i in sub], [[refs[i] for i in sub]]).score
    for stats in (chrf, np.array(chrf, dtype=np.int64), [tuple(r) for r in chrf]):
        assert abs(chrf_from_stats(stats, sub) - direct) < 1e-9
        assert chrf_from_stats(stats, sub) == chrf_from_stats([chrf[i] for i in sub])
        assert chrf_from_stats(stats, []) == 0.0
    assert bleu_from_stats(np.array(bleu, dtype=np.int64)) == bleu_from_stats(bleu)
    with pytest.raises(MtboardError, match="expected 24"):
        chrf_from_stats(np.zeros((3, 10), dtype=np.int64))
    with pytest.raises(MtboardError, match="expected 10"):
        bleu_from_stats([bleu[0], bleu[1][:4]])  # ragged


def test_plan_chunks_cover_every_segment_once():
    for n, k, share in ((5000, 2, 0.85), (5000, 4, 0.85), (10, 4, 0.85), (8, 4, 0.5), (7, 2, 1.0), (3, 2, 0.85)):
        chunks = plan_chunks(n, k, first_share=share)
        assert chunks[0][0] == 0 and chunks[-1][1] == n
        assert all(a < b and b == c for (a, b), (c, _) in zip(chunks, chunks[1:] + [(chunks[-1][1], None)]))
    assert plan_chunks(5000, 2, first_share=0.85) == [(0, 2297), (2297, 5000)]  # 0.85 / 1.85 of 5000
    assert plan_chunks(5000, 2) == [(0, 2500), (2500, 5000)]
    assert plan_chunks(3, 2) == [(0, 3)]  # not worth a pool


def test_three_way_split_keeps_segment_order():
    pairs = corpus_pairs()[:90] or [(h, r, "en") for h, r in zip(README_SYS * 30, README_REFS * 30)]
    refs = [p[1] for p in pairs]
    hyps = refs[1:] + refs[:1]
    assert segment_statistics(hyps, refs, "es", workers=3) == segment_statistics(hyps, refs, "es",
                                                                                                  workers=1)


def test_stats_width_is_checked():
    with pytest.raises(MtboardError, match="24"):
        chrf_from_stats([[1, 2, 3]])


@pytest.mark.parametrize("hyp, ref, expected", [
    ("Hola  mundo ", "Hola mundo", True),
    ("hola mundo", "Hola mundo", False),
    ("Hola\nmundo", "Hola mundo", True),
])
def test_exact_match(hyp, ref, expected):
    assert exact_match(hyp, ref) is expected


def test_length_ratio():
    assert length_ratio("abcde", "abcdefghij") == 0.5
    assert length_ratio("", "abc") == 0.0
