"""mtboard.score.stats, the site's use of mtboard.score.metrics.bootstrap, and the chart helpers: values checked against sacrebleu
or worked out by hand (issue 7)."""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import CHRF

from mtboard.score import stats
from mtboard.score.metrics.bootstrap import chrf_ci, chrf_resamples, percentile_interval, resample_counts, statistics_matrix
from mtboard.score.metrics.chrf import chrf_from_stats, chrf_statistics
from mtboard.site import charts
from mtboard.core import fmt

CHRF_M = CHRF(word_order=2)
# hand-made sentence pairs (test data, not evaluation data)
HYPS = ["The cat sat on the mat.", "", "Hola mundo", "a b c", "Something else entirely here", "x"]
REFS = ["The cat is on the mat.", "Nothing", "Hello world", "a b c", "Totally different", "y"]


def _seg_stats(hyps, refs):
    return chrf_statistics(hyps, refs)


def test_chrf_from_stats_equals_sacrebleu_corpus_score():
    segs = _seg_stats(HYPS, REFS)
    assert chrf_from_stats(segs) == pytest.approx(CHRF_M.corpus_score(HYPS, [REFS]).score, abs=1e-12)
    for a, b in ((0, 1), (1, 2), (3, 4), (2, 5)):
        # a slice's score from summed statistics = sacrebleu re-reading the slice's texts
        assert chrf_from_stats(segs, list(range(a, b))) == pytest.approx(
            CHRF_M.corpus_score(HYPS[a:b], [REFS[a:b]]).score, abs=1e-12)


def test_bootstrap_is_seeded_and_exact():
    segs = statistics_matrix(_seg_stats(HYPS, REFS))
    a = chrf_resamples(segs, resample_counts(6, 300, seed=7))
    b = chrf_resamples(segs, resample_counts(6, 300, seed=7))
    c = chrf_resamples(segs, resample_counts(6, 300, seed=8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    counts = resample_counts(6, 300, seed=7)
    assert counts.shape == (300, 6) and (counts.sum(axis=1) == 6).all()  # every resample draws n segments
    # the shared counts are the card bootstrap's draws: default_rng(seed), blocks of 50 rows of n indices
    rng = np.random.default_rng(7)
    first_block = rng.integers(0, 6, size=(50, 6))
    assert [np.bincount(row, minlength=6).tolist() for row in first_block] == counts[:50].tolist()
    # resamples 0 and 299 recomputed independently: sacrebleu scores the drawn texts themselves
    for r in (0, 299):
        idx = [i for i, k in enumerate(counts[r]) for _ in range(k)]
        direct = CHRF_M.corpus_score([HYPS[i] for i in idx], [[REFS[i] for i in idx]]).score
        assert a[r] == pytest.approx(min(100.0, direct), abs=1e-12)
    # a view without segments: zeros, one per resample
    assert chrf_resamples(statistics_matrix([]), resample_counts(0, 5)).tolist() == [0.0] * 5


def test_site_interval_uses_the_card_convention():
    # sacrebleu's estimate_ci indices on 1,000 sorted scores: 25 and 974 (not numpy's interpolated percentiles)
    scores = np.arange(1000, dtype=float)[::-1]
    assert percentile_interval(scores) == (25.0, 974.0)
    assert percentile_interval([3.0]) == (3.0, 3.0) and percentile_interval([]) is None
    # and the card's CI is that interval over the same resample scores
    segs = _seg_stats(HYPS * 10, REFS * 10)
    assert chrf_ci(segs, resamples=200, seed=3) == percentile_interval(
        chrf_resamples(segs, resample_counts(60, 200, seed=3)))


def test_holm_hand_computed():
    # sorted p: 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → monotone 0.06)
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 0.5×2 capped at 1; monotone
    assert stats.holm([]) == []


def test_paired_p_value():
    same = np.array([50.0, 51.0, 49.0, 50.5])
    assert stats.paired_p_value(same, same, 0.0) == 1.0
    a = np.array([60.0, 61.0, 59.0, 60.0])
    b = a - 10.0 + np.array([0.1, -0.1, 0.0, 0.05])
    # SE of the paired difference is tiny → p ≈ 0
    assert stats.paired_p_value(a, b, 10.0) < 1e-6


def _rows(specs, n=40, seed=1):
    """Rows whose per-segment stats are made by repeating hand-made sentence pairs (test data)."""
    counts = resample_counts(n, 500, seed)
    rows = []
    for key, hyp in specs:
        segs = statistics_matrix(_seg_stats([hyp] * n, ["The cat is on the mat."] * n))
        # vary segments a little so the bootstrap has spread
        segs[::3] = statistics_matrix(_seg_stats(["A dog."] * len(segs[::3]), ["The cat is on the mat."]
                                                 * len(segs[::3])))
        rows.append(stats.RankRow(key, chrf_from_stats(segs), chrf_resamples(segs, counts)))
    return rows


def test_rank_clusters_separate_clear_differences_and_merge_ties():
    rows = _rows([("best", "The cat is on the mat."), ("tie-a", "The cat sat on a mat."),
                  ("tie-b", "The cat sat on a mat."), ("worst", "Nothing at all.")])
    res = stats.rank_clusters(rows)
    assert res.labels == ["1", "2\u20133", "2\u20133", "4"]
    assert res.mdd is not None and res.mdd > 0
    assert stats.rank_clusters(rows[:1]).labels == ["1"]
    assert stats.rank_clusters([]).labels == []


def test_rank_clusters_follow_order_not_chrf():
    # ordered by another score (composite) with chrF++ reversed: no significant difference in the order's direction
    rows = _rows([("low", "Nothing at all."), ("high", "The cat is on the mat.")])
    assert stats.rank_clusters(rows).labels == ["1\u20132", "1\u20132"]


def test_mdd_shrinks_with_more_segments():
    small = stats.rank_clusters(_rows([("a", "The cat sat on a mat."), ("b", "The cat is on a mat.")], n=12)).mdd
    large = stats.rank_clusters(_rows([("a", "The cat sat on a mat."), ("b", "The cat is on a mat.")], n=120)).mdd
    assert large < small


def test_item_statistics_hand_example():
    Out = stats.ItemOutcome
    per_method = {
        # method m1: entry 1 failed, entries 2..10 scored 50..90 → lowest decile cut = 1 entry (entry 1 at 0)
        "m1": {1: Out(True, False, 0.0), **{i: Out(False, i == 10, 40.0 + 5 * i) for i in range(2, 11)}},
        "m2": {1: Out(False, False, 10.0), **{i: Out(False, i == 10, 50.0 + i) for i in range(2, 11)}},
    }
    items = {it.entry_id: it for it in stats.item_statistics(per_method)}
    assert items[1].n_struggle == 2 and items[1].struggle_share == 1.0  # both methods: failure / lowest decile
    assert items[2].n_struggle == 0
    assert items[10].n_pass == 2 and items[9].n_pass == 0


def test_pareto_front():
    pts = [{"cost": 0.0, "composite": 0.5, "position": 2}, {"cost": 0.01, "composite": 0.7, "position": 1},
           {"cost": 0.02, "composite": 0.6, "position": 3}, {"cost": None, "composite": 0.9, "position": 4}]
    for p in pts:
        p.update(label=f"m<{p['position']}>", model="x")
    assert [p["position"] for p in charts.pareto_front(pts)] == [2, 1]
    svg = charts.cost_quality(pts, "t <b>")
    assert "<title>t &lt;b&gt;</title>" in svg and svg.count("<circle") == 3
    assert "m&lt;1&gt;" in svg and "m<1>" not in svg


@pytest.mark.parametrize("value,expected", [
    (None, "\u2014"), ("a|b", "a&#124;b"),
    ("[x](javascript:alert(1))", "&#91;x&#93;&#40;javascript&#58;alert&#40;1&#41;&#41;"),
    ("<script>", "&#60;script&#62;"), ("line1\n\nline2", "line1  line2"), ("é ü", "é ü"),
])
def test_md_text_escapes(value, expected):
    assert fmt.md_text(value) == expected


def test_formatting_never_turns_null_into_zero():
    assert fmt.rate(None) == fmt.num(None) == fmt.usd(None) == fmt.secs(None) == fmt.ci(None) == "\u2014"
    assert fmt.usd(0.0) == "$0" and fmt.usd(0.0021) == "$0.0021" and fmt.usd(0.25) == "$0.250"
    # a positive cost below the last shown decimal is never "$0." (issue 36 review); a negative one is no cost
    assert fmt.usd(4e-7) == "< $0.000001" and fmt.usd(5.1e-7) == "$0.000001" and fmt.usd(1.2e-6) == "$0.000001"
    assert fmt.usd(-0.5) == fmt.DASH
    assert fmt.safe_url("javascript:alert(1)") is None and fmt.safe_url("https://e.org/x") == "https://e.org/x"
    assert fmt.safe_url("http://e.org/a b") is None and fmt.safe_url("//e.org") is None
    assert "<" not in fmt.safe_title("<script>") and "&" not in fmt.safe_title("a & b")


def test_all_pairs_and_clusters_scale_without_the_pair_array():
    """Issue 35: all_pairs computes one row against the rows below it at a time and rank_clusters uses running
    extremes; both must equal the one-shot definitions (every pair's differences in one array; min/max over the
    prefix/suffix per boundary) value for value, ties and identical resamples included."""
    import math

    import numpy as np

    from mtboard.score import stats

    rng = np.random.default_rng(7)
    for trial in range(60):
        n, r = int(rng.integers(2, 14)), int(rng.integers(2, 40))
        scores = sorted(np.round(rng.random(n), 1).tolist(), reverse=True)
        rows = [stats.RankRow(str(i), s, rng.random(r)) for i, s in enumerate(scores)]
        rows[-1].boot = rows[0].boot.copy()
        boots = np.stack([x.boot for x in rows])
        iu = np.triu_indices(n, 1)
        se = np.std(boots[iu[0]] - boots[iu[1]], axis=1, ddof=1)
        obs = [rows[i].score - rows[j].score for i, j in zip(*iu)]
        raw = [math.erfc(abs(d) / s / math.sqrt(2)) if s > 0 else 1.0 for d, s in zip(obs, se)]
        want = np.ones((n, n))
        want[iu] = stats.holm(raw)
        want[(iu[1], iu[0])] = want[iu]
        assert np.array_equal(stats.all_pairs(rows), want)
        clusters = stats.rank_clusters(rows)
        expect = []
        for k in range(n - 1):
            a = min(range(k + 1), key=lambda i: (rows[i].score, i))
            b = max(range(k + 1, n), key=lambda j: (rows[j].score, -j))
            d = rows[a].score - rows[b].score
            expect.append(1.0 if d <= 0 else stats.paired_p_value(rows[a].boot, rows[b].boot, d))
        assert clusters.boundary_p == stats.holm(expect)


def test_nice_ticks_are_round_numbers_near_five():
    """issue 36 item 5 (a speed chart read "0.928 / 1.86 / 2.78"): steps of 1, 2, 2.5 or 5 × 10^k, hand-checked."""
    from mtboard.site.charts import _log_tick, nice_ticks

    assert nice_ticks(0.161, 0.612) == (0.161, 0.612, ["0.2", "0.3", "0.4", "0.5", "0.6"], [0.2, 0.3, 0.4, 0.5, 0.6])
    assert nice_ticks(0.0, 2.919, widen=True) == (0.0, 3.0, ["0", "1", "2", "3"], [0.0, 1.0, 2.0, 3.0])
    assert nice_ticks(0.0, 1.0)[2] == ["0", "0.25", "0.50", "0.75", "1.00"]
    assert nice_ticks(0.51, 0.53)[2] == ["0.510", "0.515", "0.520", "0.525", "0.530"]
    assert nice_ticks(0.5, 0.5)[:2] == (0.45, 0.55)  # an empty span gets one around it
    assert [_log_tick(10.0 ** e, True) for e in (-5, -3, 0, 2)] == ["$10⁻⁵", "$0.001", "$1", "$100"]
