"""Issue 15 parts 8 and 9: item statistics (difficulty, discrimination, suspect references) and agreement
statistics (Cohen's κ, Kendall's τ-b), checked against independent implementations (scipy, statsmodels — test
dependencies only) and hand-worked examples. The score tables below are hand-made test data."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr
from statsmodels.stats.inter_rater import cohens_kappa

from mtboard.score import stats

SYSTEMS = {  # system → entry → sentence score (hand-made)
    "s1": {1: 90.0, 2: 80.0, 3: 10.0, 4: 55.0, 5: 70.0},
    "s2": {1: 60.0, 2: 50.0, 3: 12.0, 4: 65.0, 5: 40.0},
    "s3": {1: 30.0, 2: 40.0, 3: 8.0, 4: 20.0, 5: 35.0},
    "s4": {1: 75.0, 2: 70.0, 3: 11.0, 4: 30.0, 5: 50.0},
}


def test_item_difficulty_and_discrimination_match_scipy():
    fails = {s: {3} for s in SYSTEMS}
    out = {a.entry_id: a for a in stats.item_analysis(SYSTEMS, fails)}
    names = sorted(SYSTEMS)
    for eid in range(1, 6):
        item = [SYSTEMS[s][eid] for s in names]
        rest = [sum(v for k, v in SYSTEMS[s].items() if k != eid) / 4 for s in names]
        assert out[eid].difficulty == pytest.approx(sum(item) / 4)
        assert out[eid].discrimination == pytest.approx(pearsonr(item, rest).statistic, abs=1e-12)
        assert out[eid].fail_share == (1.0 if eid == 3 else 0.0)
    # hand-worked: entry 3's mean = (10 + 12 + 8 + 11) / 4
    assert out[3].difficulty == 10.25


def test_discrimination_is_none_without_spread_or_systems():
    flat = {s: {1: 50.0, 2: 40.0} for s in ("a", "b", "c")}  # every system scores entry 1 the same
    out = {a.entry_id: a for a in stats.item_analysis(flat, {})}
    assert out[1].discrimination is None
    two = {"a": {1: 1.0, 2: 2.0}, "b": {1: 2.0, 2: 1.0}}
    assert all(a.discrimination is None for a in stats.item_analysis(two, {}))  # fewer than 3 systems


def test_suspect_reference_flag():
    base = dict(entry_id=1, difficulty=5.0, discrimination=None)
    flagged = stats.ItemAnalysis(n_systems=5, fail_share=1.0, output_agreement=60.0, reference_agreement=20.0, **base)
    assert flagged.suspect_reference
    # outputs agree with the reference as much as with one another: the systems, not the reference, are wrong
    assert not stats.ItemAnalysis(n_systems=5, fail_share=1.0, output_agreement=20.0, reference_agreement=20.0,
                                  **base).suspect_reference
    assert not stats.ItemAnalysis(n_systems=4, fail_share=1.0, output_agreement=60.0, reference_agreement=20.0,
                                  **base).suspect_reference  # fewer than 5 systems
    assert not stats.ItemAnalysis(n_systems=20, fail_share=0.9, output_agreement=60.0, reference_agreement=20.0,
                                  **base).suspect_reference  # 18 of 20 fail: under 95 %
    assert stats.ItemAnalysis(n_systems=20, fail_share=0.95, output_agreement=60.0, reference_agreement=20.0,
                              **base).suspect_reference


def test_suspect_reference_on_the_leaderboard():
    """Five systems agree on one output for entry 1 while the (wrong) reference says something else; the site's
    agreement uses sentence chrF++ between the outputs and against the reference."""
    from mtboard.ledger.tables import _agreement

    outs = ["The meeting starts at nine.", "The meeting starts at nine o'clock.", "The meeting begins at nine.",
            "The meeting starts at nine.", "Meeting starts at nine."]
    between, to_ref = _agreement(outs, "Bananas are yellow.")
    assert between > to_ref
    between2, to_ref2 = _agreement(outs, "The meeting starts at nine.")
    assert to_ref2 > to_ref


def test_cohen_kappa_matches_statsmodels_and_a_hand_example():
    # hand-worked: 10 cells, agreement on 7; marginals a: 5 none 3 minor 2 major; b: 4 none 4 minor 2 major
    a = ["none"] * 5 + ["minor"] * 3 + ["major"] * 2
    b = ["none", "none", "none", "none", "minor", "minor", "minor", "none", "major", "minor"]
    po = 7 / 10
    pe = (5 / 10) * (5 / 10) + (3 / 10) * (4 / 10) + (2 / 10) * (1 / 10)
    assert stats.cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))
    rng = random.Random(3)
    labels = ["none", "minor", "major", "critical"]
    x = [rng.choice(labels) for _ in range(300)]
    y = [v if rng.random() < 0.6 else rng.choice(labels) for v in x]
    table = np.zeros((4, 4))
    for u, v in zip(x, y):
        table[labels.index(u), labels.index(v)] += 1
    assert stats.cohen_kappa(x, y) == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    assert stats.cohen_kappa(["none"] * 4, ["none"] * 4) is None and stats.cohen_kappa([], []) is None


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = random.Random(5)
    x = [rng.choice([0, 1, 1, 5, 5, 6, 25]) for _ in range(200)]
    y = [v + rng.choice([-1, 0, 0, 3]) for v in x]
    assert stats.kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    assert stats.kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    assert stats.kendall_tau_b([1, 1], [1, 2]) is None
