"""Issue 23: the leaderboard's statistics (mtboard.score.stats) pinned to exact values — paired bootstrap p-values, Holm,
rank-cluster boundaries, all-pairs matrices, detectable differences, item statistics and agreement edge cases —
against independent implementations (scipy, statsmodels: test dependencies only) and hand-worked examples.

The bootstrap vectors are hand-made or drawn here from a seeded numpy generator (test data, not mtboard's draws)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from scipy.stats import norm, pearsonr
from statsmodels.stats.multitest import multipletests

from mtboard.score import stats

RNG = np.random.default_rng(23)


def _p(a: np.ndarray, b: np.ndarray, diff: float) -> float:
    """Independent paired p-value: two-sided normal tail of diff over the sample SD (n − 1) of the difference."""
    se = np.sqrt(np.sum(((a - b) - np.mean(a - b)) ** 2) / (len(a) - 1))
    return float(2 * norm.sf(abs(diff) / se))


# ---------------------------------------------------------------------------------------------------- view_seed


def test_view_seed_is_the_top_63_bits_of_sha256_of_the_unit_separated_parts():
    digest = hashlib.sha256(b"mtb-en-es-dev\x1f1.0\x1fdialogue").digest()
    expected = int(digest[:8].hex(), 16) // 2
    assert stats.view_seed("mtb-en-es-dev", "1.0", "dialogue") == expected
    assert 0 <= expected < 2 ** 63
    assert stats.view_seed("a", "b") != stats.view_seed("b", "a") != stats.view_seed("ab")
    assert stats.view_seed() == int(hashlib.sha256(b"").digest()[:8].hex(), 16) // 2


# ----------------------------------------------------------------------------------------------- paired_p_value


def test_paired_p_value_uses_the_sd_of_the_difference_hand_worked():
    # differences a − b = [1, 3, 2, 2]: mean 2, sample SD sqrt(2/3); z = 1 / sqrt(2/3) = 1.224744871391589
    a = np.array([10.0, 12.0, 11.0, 13.0])
    b = np.array([9.0, 9.0, 9.0, 11.0])
    assert stats.paired_p_value(a, b, 1.0) == pytest.approx(0.22067136191984682, abs=1e-14)
    assert stats.paired_p_value(a, b, -1.0) == stats.paired_p_value(a, b, 1.0)  # two-sided
    # the SD of the *sum* (a + b = [19, 21, 20, 24]) would give another value
    assert stats.paired_p_value(a, b, 1.0) != pytest.approx(_p(a, -b, 1.0))


@pytest.mark.parametrize("diff", [0.05, 0.3, 1.7])
def test_paired_p_value_matches_scipy_normal_tail(diff):
    a = RNG.normal(50, 2, 300)
    b = a - RNG.normal(0.5, 0.4, 300)
    assert stats.paired_p_value(a, b, diff) == pytest.approx(_p(a, b, diff), rel=1e-12)


def test_paired_p_value_degenerate_cases():
    one = np.array([3.0])
    assert stats.paired_p_value(one, np.array([1.0]), 2.0) == 1.0  # one resample: no SE
    two = np.array([1.0, 2.0])
    assert stats.paired_p_value(two, two - 5, 9.0) == 1.0  # constant difference: SE 0
    assert stats.paired_p_value(two, np.array([0.0, 0.0]), 1.0) == pytest.approx(_p(two, np.zeros(2), 1.0))
    assert stats.paired_p_value(np.array([]), np.array([]), 1.0) == 1.0


# ---------------------------------------------------------------------------------------------------------- holm


@pytest.mark.parametrize("ps", [
    [0.01, 0.04, 0.03, 0.005],
    [0.2, 0.2, 0.01],          # ties
    [0.5, 0.6, 0.9, 0.04],     # capped at 1
    [0.03],
    [0.01, 0.02, 0.025, 0.5, 0.001, 0.011],
])
def test_holm_matches_statsmodels(ps):
    assert stats.holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]), abs=1e-15)


def test_holm_hand_worked_monotone_and_capped():
    # sorted 0.01 (×3 = 0.03), 0.015 (×2 = 0.03), 0.6 (×1): the running maximum keeps 0.03; 0.6 stays 0.6
    assert stats.holm([0.6, 0.015, 0.01]) == pytest.approx([0.6, 0.03, 0.03])
    assert stats.holm([0.4, 0.45]) == pytest.approx([0.8, 0.8])  # 0.45 × 1 < 0.8: monotone
    assert stats.holm([0.7, 0.9]) == [1.0, 1.0]  # 1.4 capped
    assert stats.holm([]) == []


# ----------------------------------------------------------------------------------------------- rank_clusters


def _boot(centre: float, spread: float, shared: np.ndarray) -> np.ndarray:
    return centre + spread * shared


def _rows(scores_and_boots):
    return [stats.RankRow(f"m{i}", s, b) for i, (s, b) in enumerate(scores_and_boots)]


def _independent_clusters(rows, alpha=0.05):
    """Boundary rule written out: closest pair across each boundary, Holm over the N−1 tests."""
    n = len(rows)
    raw = []
    for k in range(n - 1):
        upper = sorted(range(k + 1), key=lambda i: (rows[i].score, i))[0]
        lower = sorted(range(k + 1, n), key=lambda j: (-rows[j].score, j))[0]
        d = rows[upper].score - rows[lower].score
        raw.append(_p(rows[upper].boot, rows[lower].boot, d) if d > 0 else 1.0)
    adj = list(multipletests(raw, method="holm")[1]) if raw else []
    cuts = [k for k in range(n - 1) if adj[k] < alpha]
    labels, start = [], 0
    for c in cuts + [n - 1]:
        lab = str(start + 1) if c == start else f"{start + 1}\u2013{c + 1}"
        labels += [lab] * (c - start + 1)
        start = c + 1
    return labels, raw, adj


def test_rank_clusters_two_clusters_exact_boundaries():
    noise = [RNG.normal(0, 1, 400) for _ in range(4)]
    rows = _rows([(80.0, 80 + noise[0]), (79.9, 79.9 + noise[1]), (60.0, 60 + noise[2]), (59.8, 59.8 + noise[3])])
    res = stats.rank_clusters(rows)
    labels, raw, adj = _independent_clusters(rows)
    assert res.labels == labels == ["1\u20132", "1\u20132", "3\u20134", "3\u20134"]
    assert res.ranges == [(1, 2), (1, 2), (3, 4), (3, 4)]
    assert res.boundary_p == pytest.approx(adj, rel=1e-12)
    assert res.boundary_p[1] < 1e-12 < res.boundary_p[0]
    # mdd: (z.975 + z.80) × median SD of adjacent differences
    sds = [np.std(rows[i].boot - rows[i + 1].boot, ddof=1) for i in range(3)]
    assert res.mdd == pytest.approx((norm.ppf(0.975) + norm.ppf(0.8)) * float(np.median(sds)), rel=1e-9)


def test_rank_clusters_every_row_separate_and_single_row():
    shared = RNG.normal(0, 1, 300)
    rows = _rows([(90.0 - 10 * i, _boot(90.0 - 10 * i, 1.0, shared) + RNG.normal(0, 0.5, 300)) for i in range(3)])
    res = stats.rank_clusters(rows)
    assert res.labels == ["1", "2", "3"] and res.ranges == [(1, 1), (2, 2), (3, 3)]
    assert stats.rank_clusters(rows[:1]).labels == ["1"]
    assert stats.rank_clusters(rows[:1]).boundary_p == []
    empty = stats.rank_clusters([])
    assert (empty.labels, empty.ranges, empty.mdd) == ([], [], None)


def test_rank_clusters_boundary_at_alpha_depends_on_the_holm_adjusted_p():
    # two rows whose raw p is ~0.03: separated at α = 0.05, merged at α = 0.02 and with a third row added (Holm × 2)
    base = RNG.normal(0, 1, 2000)
    a = 50 + base
    b = 50 + base + RNG.normal(0, 1, 2000)
    diff = 2.17 * float(np.std(a - b, ddof=1))  # z = 2.17 → p ≈ 0.030
    rows = _rows([(50.0 + diff, a), (50.0, b)])
    p = _p(a, b, diff)
    assert 0.02 < p < 0.05
    assert stats.rank_clusters(rows).labels == ["1", "2"]
    assert stats.rank_clusters(rows).boundary_p == pytest.approx([p], rel=1e-12)
    assert stats.rank_clusters(rows, alpha=0.02).labels == ["1\u20132", "1\u20132"]
    assert stats.rank_clusters(rows, alpha=p).labels == ["1\u20132", "1\u20132"]  # strict: adj < α


def test_rank_clusters_closest_pair_across_the_boundary_and_ties():
    # out of score order (the order is the caller's): row 1 scores higher than row 0 → boundary 0 has diff < 0 → p 1
    # ties: the lowest-scoring row above with the lowest index, the highest below with the lowest index
    boots = [RNG.normal(0, s, 500) for s in (0.2, 3.0, 0.2, 0.2, 3.0)]
    rows = _rows([(70.0, 70 + boots[0]), (75.0, 75 + boots[1]), (70.0, 70 + boots[2]), (40.0, 40 + boots[3]),
                  (40.0, 40 + boots[4])])
    res = stats.rank_clusters(rows)
    labels, raw, adj = _independent_clusters(rows)
    assert raw[0] == 1.0 and raw[1] == 1.0  # 70 vs 75 (reversed) and 70 vs 70 (tie)
    assert res.boundary_p == pytest.approx(adj, rel=1e-12)
    assert res.labels == labels
    assert raw[2] == pytest.approx(_p(rows[0].boot, rows[3].boot, 30.0), rel=1e-12)  # row 0 (not 2), row 3 (not 4)


# ------------------------------------------------------------------------------------------------------ all_pairs


def test_all_pairs_matches_an_independent_holm_matrix():
    shared = RNG.normal(0, 1, 250)
    scores = [62.0, 61.7, 60.0, 55.0]
    rows = _rows([(s, s + shared + RNG.normal(0, 0.8 + i * 0.3, 250)) for i, s in enumerate(scores)])
    out = stats.all_pairs(rows)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    raw = [_p(rows[i].boot, rows[j].boot, scores[i] - scores[j]) for i, j in pairs]
    adj = multipletests(raw, method="holm")[1]
    expected = np.ones((4, 4))
    for (i, j), p in zip(pairs, adj):
        expected[i, j] = expected[j, i] = p
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert out.shape == (4, 4) and np.all(np.diag(out) == 1.0)


def test_all_pairs_degenerate_views():
    assert stats.all_pairs([]).shape == (0, 0)
    np.testing.assert_array_equal(stats.all_pairs(_rows([(1.0, np.array([1.0, 2.0]))])), np.ones((1, 1)))
    one_resample = _rows([(3.0, np.array([3.0])), (1.0, np.array([1.0]))])
    np.testing.assert_array_equal(stats.all_pairs(one_resample), np.ones((2, 2)))
    no_resamples = _rows([(3.0, np.array([])), (1.0, np.array([]))])
    np.testing.assert_array_equal(stats.all_pairs(no_resamples), np.ones((2, 2)))
    same = _rows([(3.0, np.array([1.0, 2.0, 4.0])), (1.0, np.array([0.0, 1.0, 3.0]))])  # SE of difference 0
    np.testing.assert_array_equal(stats.all_pairs(same), np.ones((2, 2)))
    hand = _rows([(12.0, np.array([10.0, 12.0, 11.0, 13.0])), (11.0, np.array([9.0, 9.0, 9.0, 11.0]))])
    assert stats.all_pairs(hand)[0, 1] == pytest.approx(0.22067136191984682, abs=1e-14)  # one test: no Holm factor


# ------------------------------------------------------------------------------------- min_detectable_difference


def test_min_detectable_difference_hand_worked():
    k = stats.Z_975 + stats.Z_80
    assert k == pytest.approx(norm.ppf(0.975) + norm.ppf(0.8), abs=1e-14)
    a = np.array([1.0, 3.0])  # sample SD sqrt(2)
    assert stats.min_detectable_difference([a]) == pytest.approx(k * math.sqrt(2) * math.sqrt(2))
    b = np.array([0.0, 0.0])
    c = np.array([0.0, 4.0])
    d = np.array([0.0, 10.0])
    # adjacent differences: a − b SD √2, b − c SD √8, c − d SD √18 → median √8
    assert stats.min_detectable_difference([a, b, c, d]) == pytest.approx(k * math.sqrt(8))
    # two adjacent pairs: the median of two is their mean
    assert stats.min_detectable_difference([a, b, c]) == pytest.approx(k * (math.sqrt(2) + math.sqrt(8)) / 2)
    assert stats.min_detectable_difference([]) is None
    assert stats.min_detectable_difference([np.array([1.0]), np.array([2.0])]) is None


# ------------------------------------------------------------------------------------------------ item statistics


def _o(score, failed=False, passed=False):
    return stats.ItemOutcome(failed=failed, passed=passed, score=score)


def test_item_statistics_decile_cut_ties_top_and_passes():
    # m1: 11 entries → ⌈1.1⌉ = 2 lowest: sorted scores 0 (entry 5, failed), 5, 5, 7 … → cut 5; entry 11 is tied
    # with entry 1 at the cut → both in; entry 2 (7) is above it
    m1 = {i: _o(float(10 * i)) for i in range(1, 12)}
    m1[1] = _o(5.0)
    m1[2] = _o(7.0)
    m1[11] = _o(5.0, passed=True)
    m1[5] = _o(0.0, failed=True, passed=True)  # failed: struggles, and a failed pass does not count
    # m2: everything the same score → no lowest decile; only its failure struggles
    m2 = {i: _o(50.0, passed=i == 3) for i in range(1, 12)}
    m2[4] = _o(50.0, failed=True)
    # m3: 10 entries → ⌈1.0⌉ = 1 lowest (a mutant using ⌈·⌉ without − 1 would take two)
    m3 = {i: _o(float(i)) for i in range(1, 11)}
    out = {s.entry_id: s for s in stats.item_statistics({"none": {}, "m1": m1, "m2": m2, "m3": m3})}
    assert sorted(out) == list(range(1, 12))
    assert [(out[i].n_methods, out[i].n_struggle, out[i].n_pass) for i in range(1, 12)] == [
        (3, 3 - 1, 0),  # m1 lowest, m3 lowest (score 1)
        (3, 0, 0),      # m1's 7 is above its cut 5, m3's 2 above its cut 1
        (3, 0, 1),
        (3, 1, 0),      # m2 failed
        (3, 1, 0),      # m1 failed (its pass does not count)
        (3, 0, 0), (3, 0, 0), (3, 0, 0), (3, 0, 0), (3, 0, 0),
        (2, 1, 1),      # m1: tied at the cut, passed; m3 has no entry 11
    ]
    assert out[1].struggle_share == pytest.approx(2 / 3)
    assert stats.ItemStat(1, 0, 0, 0).struggle_share == 0.0
    assert stats.item_statistics({}) == []


def test_item_analysis_uses_shared_items_only_and_counts_failures():
    scores = {"b": {1: 10.0, 2: 20.0, 3: 30.0, 9: 5.0}, "a": {1: 40.0, 2: 10.0, 3: 35.0},
              "c": {1: 70.0, 2: 0.0, 3: 20.0}}
    out = stats.item_analysis(scores, {"a": {2}, "c": {2, 3}, "zzz": {1}})
    assert [x.entry_id for x in out] == [1, 2, 3]  # entry 9 is not run by every system
    assert [x.n_systems for x in out] == [3, 3, 3]
    assert [x.difficulty for x in out] == pytest.approx([40.0, 10.0, 85 / 3])
    assert [x.fail_share for x in out] == pytest.approx([0.0, 2 / 3, 1 / 3])
    names = sorted(scores)
    for x in out:
        col = [scores[s][x.entry_id] for s in names]
        rest = [(sum(scores[s][i] for i in (1, 2, 3)) - scores[s][x.entry_id]) / 2 for s in names]
        assert x.discrimination == pytest.approx(pearsonr(col, rest).statistic, abs=1e-12)
    single = stats.item_analysis({s: {1: v} for s, v in zip("abc", (1.0, 2.0, 3.0))}, {})
    assert len(single) == 1 and single[0].discrimination is None and single[0].difficulty == 2.0
    assert stats.item_analysis({}, {}) == []
    assert stats.item_analysis({"a": {1: 1.0}, "b": {2: 1.0}}, {}) == []


# ---------------------------------------------------------------------------------------------------- agreement


def test_pearson_exact_and_none_cases():
    assert stats.pearson([1.0, 2.0, 3.0], [2.0, 4.0, 7.0]) == pytest.approx(pearsonr([1, 2, 3], [2, 4, 7]).statistic,
                                                                            abs=1e-14)
    assert stats.pearson([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    assert stats.pearson([1.0, 2.0], [1.0, 2.0]) is None  # fewer than 3 pairs
    assert stats.pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    assert stats.pearson([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) is None
    # hand-worked: x = [0, 0, 3], y = [0, 3, 3] → r = 0.5
    assert stats.pearson([0.0, 0.0, 3.0], [0.0, 3.0, 3.0]) == pytest.approx(0.5, abs=1e-15)


def test_cohen_kappa_edges_hand_worked():
    # po = 3/4; pe = (2/4·1/4) + (2/4·3/4) = 1/2 → κ = 0.5
    assert stats.cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]) == pytest.approx(0.5)
    assert stats.cohen_kappa(["x", "x"], ["x", "x"]) is None  # pe = 1
    assert stats.cohen_kappa([], []) is None
    assert stats.cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="^the two raters must label the same cells$"):
        stats.cohen_kappa(["x"], ["x", "y"])


def test_kendall_tau_b_edges_hand_worked():
    # x = [1, 2, 3], y = [1, 3, 2]: 2 concordant, 1 discordant, no ties → 1/3
    assert stats.kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    # ties in x: x = [1, 1, 2], y = [1, 2, 3]: S = 0 + 1 + 1 = 2, n0 = 3, n1 = 1, n2 = 0 → 2 / √6
    assert stats.kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert stats.kendall_tau_b([1, 2, 3], [1, 1, 2]) == pytest.approx(2 / math.sqrt(6))
    assert stats.kendall_tau_b([1], [2]) is None
    assert stats.kendall_tau_b([1, 1], [1, 2]) is None
    assert stats.kendall_tau_b([1, 2], [1, 2]) == 1.0
    with pytest.raises(ValueError, match="^x and y must pair up$"):
        stats.kendall_tau_b([1, 2], [1])


def test_all_pairs_with_two_resamples_is_a_real_test():
    # two resamples are enough for a sample SD (n − 1 = 1): differences [1, 3] → SD √2, z = 2 / √2
    rows = _rows([(5.0, np.array([4.0, 6.0])), (3.0, np.array([3.0, 3.0]))])
    assert stats.all_pairs(rows)[0, 1] == pytest.approx(math.erfc(1.0), abs=1e-15)


def test_item_statistics_lowest_decile_when_all_but_the_top_tie():
    # 11 entries: ten score 1, one scores 5 → cut 1 < top 5: the ten tied at the bottom all struggle
    m = {i: _o(1.0) for i in range(1, 11)} | {11: _o(5.0)}
    out = stats.item_statistics({"m": m})
    assert [s.n_struggle for s in out] == [1] * 10 + [0]


def test_item_analysis_with_two_items():
    # k = 2: each item's rest is the other item itself
    scores = {"a": {1: 10.0, 2: 20.0}, "b": {1: 30.0, 2: 25.0}, "c": {1: 50.0, 2: 90.0}}
    out = stats.item_analysis(scores, {})
    col1, col2 = [10.0, 30.0, 50.0], [20.0, 25.0, 90.0]
    assert out[0].discrimination == pytest.approx(pearsonr(col1, col2).statistic, abs=1e-12)
    assert out[1].discrimination == pytest.approx(pearsonr(col2, col1).statistic, abs=1e-12)


def test_pearson_of_small_variances():
    # den = sqrt(0.02 · 0.0466…) ≈ 0.03: still a correlation, not None
    x, y = [0.0, 0.1, 0.2], [0.0, 0.1, 0.3]
    assert stats.pearson(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-12)
