"""docs/SCORING_SPEC.md is the single source of truth: parse its tables and check the code mirrors them exactly.

Composite values in the table-driven tests were computed by hand from the weight tables.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mtboard.score import checks
from mtboard.core.errors import MtboardError
from mtboard.score.metrics.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from mtboard.score.metrics.composite import (COMPOSITE_DECIMALS, EXCLUDED, INVERTED, SCALE, TIER_THRESHOLDS, WEIGHTS,
                                       composite, composite_signature, cost_adjusted_score, quality_tier)
from mtboard.score.metrics.ter import TER_MAX_CJK_TOKENS, TER_MAX_WORDS
from mtboard.core.schema import QualityTier

SPEC = Path(__file__).resolve().parent.parent / "docs" / "SCORING_SPEC.md"


def section(title_regex: str) -> str:
    text = SPEC.read_text(encoding="utf-8")
    m = re.search(rf"^(#+) {title_regex}.*?$(.*?)(?=^#{{1,3}} |\Z)", text, re.M | re.S)
    assert m, f"section {title_regex!r} missing from {SPEC}"
    return m.group(2)


def table_rows(block: str) -> list[list[str]]:
    rows = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows[1:]  # drop the header


def weights_from(title: str) -> dict[str, float]:
    return {row[0].strip("`"): float(row[1]) for row in table_rows(section(title))}


@pytest.mark.parametrize("profile, title", [("A", r"4\.2 Profile A weights"), ("B", r"4\.3 Profile B weights")])
def test_weight_tables_match_the_code(profile, title):
    doc = weights_from(title)
    assert doc == WEIGHTS[profile]
    assert sum(doc.values()) == pytest.approx(1.0)


def test_profile_a_has_nine_metrics_with_structural_forty_percent_and_b_eight():
    a, b = WEIGHTS["A"], WEIGHTS["B"]
    assert len(a) == 9 and len(b) == 8 and "fst_acceptance_rate" not in b
    structural = a["fst_acceptance_rate"] + a["morphological_accuracy"] + a["equivalent_match_rate"]
    assert structural == pytest.approx(0.40)


def test_normalisation_table_matches_the_code():
    rows = {r[0].strip("`"): r[1] for r in table_rows(section(r"4\.1 Normalisation"))}
    assert rows["chrf_plus_plus"] == "÷ 100" and SCALE == {"chrf_plus_plus": 100.0}
    inverted = {k for k, v in rows.items() if v == "1 − rate"}
    assert inverted == set(INVERTED)


def test_excluded_metrics_match_the_code():
    rows = [r[0].strip("`") for r in table_rows(section(r"4\.4 Excluded from the composite"))]
    assert tuple(rows) == EXCLUDED
    for name in rows:
        assert name not in WEIGHTS["A"] and name not in WEIGHTS["B"]


def test_tier_table_matches_the_code():
    rows = table_rows(section(r"5\. Quality tiers"))
    doc = [(float(r[1]), QualityTier(r[0])) for r in rows]
    assert tuple(doc) == TIER_THRESHOLDS
    # contiguous: each tier ends where the next starts, the last ends at 1.00
    for (r, nxt) in zip(rows, rows[1:]):
        assert r[2] == nxt[1]
    assert rows[-1][2] == "1.00"


def test_constants_quoted_in_the_document_match_the_code():
    text = SPEC.read_text(encoding="utf-8")
    assert f"at most **{TER_MAX_WORDS}** TER tokens" in text
    assert f"(**{TER_MAX_CJK_TOKENS}** for Chinese/Japanese targets" in text
    assert f"default_rng({BOOTSTRAP_SEED})" in text
    assert "1,000 resamples" in text and BOOTSTRAP_RESAMPLES == 1000
    assert f"(policy `{checks.POLICY_VERSION}`)" in text
    assert "3× or under 0.33×" in text and (checks.LENGTH_LONG, checks.LENGTH_SHORT) == (3.0, 0.33)
    assert "under 10 characters count as 10" in text and checks.LENGTH_FLOOR_CHARS == 10
    assert "≥ 10% of the output's letters" in text and checks.CODE_SWITCH_WORD_SHARE == 0.10
    assert "words of ≥ 4 letters" in text and checks.CODE_SWITCH_MIN_WORD == 4
    assert "rounded to 6 decimals" in text and COMPOSITE_DECIMALS == 6
    from mtboard.score.metrics.composite import FORMAT_ATTEMPT_PENALTY
    assert "1 − 0.1 × (Σ extra attempts ÷ n)" in text and FORMAT_ATTEMPT_PENALTY == 0.1
    assert "|format_attempt:0.1" in text
    for tok in checks.EOS_TOKENS:
        assert f"`{tok}`" in text


def test_every_flag_the_code_can_raise_has_an_intended_penalty():
    rows = table_rows(section(r"3\.3 Flags"))
    documented = set()
    for r in rows:
        documented |= set(re.findall(r"`([a-z_.]+)`", r[0]))
        assert r[2], f"flag {r[0]} has no intended penalty"
    src = Path(checks.__file__).read_text(encoding="utf-8")
    raised = set(re.findall(r'rule="([a-z_.]+)"', src))
    assert raised == documented


# ---------------------------------------------------------------------------------------------------------------
# composite and tiers


@pytest.mark.parametrize("values, expected, profile", [
    # profile B today: chrF 0.50, exact 0.05, code-switching 0.05 over 0.60
    ({"chrf_plus_plus": 60.0, "exact_match_rate": 0.1, "code_switching_rate": 0.2},
     (0.50 * 0.6 + 0.05 * 0.1 + 0.05 * 0.8) / 0.60, "B"),
    # profile A today: chrF 0.45, FST 0.10, exact 0.05, code-switching 0.03 over 0.63
    ({"chrf_plus_plus": 60.0, "exact_match_rate": 0.1, "code_switching_rate": 0.2, "fst_acceptance_rate": 0.9},
     (0.45 * 0.6 + 0.05 * 0.1 + 0.03 * 0.8 + 0.10 * 0.9) / 0.63, "A"),
    # chrF++ alone: renormalised to itself
    ({"chrf_plus_plus": 42.0}, 0.42, "B"),
    # every metric present, profile A: plain weighted sum
    ({"chrf_plus_plus": 100.0, "fst_acceptance_rate": 1.0, "morphological_accuracy": 1.0,
      "equivalent_match_rate": 1.0, "exact_match_rate": 1.0, "semantic_score": 1.0, "code_switching_rate": 0.0,
      "hallucination_rate": 0.0, "terminology_adherence": 1.0}, 1.0, "A"),
    # echo/empty baselines: nothing earned, inverted rates at their worst
    ({"chrf_plus_plus": 0.0, "exact_match_rate": 0.0, "code_switching_rate": 1.0, "fst_acceptance_rate": 0.0}, 0.0,
     "A"),
    # excluded metrics and unknown keys are ignored
    ({"chrf_plus_plus": 50.0, "bleu": 99.0, "ter": 0.0, "length_ratio": 1.0, "semantic_score": None}, 0.5, "B"),
])
def test_composite(values, expected, profile):
    got, prof = composite(values)
    assert prof == profile
    assert got == round(expected, 6)


@pytest.mark.parametrize("values", [{"chrf_plus_plus": 101.0}, {"chrf_plus_plus": float("nan")},
                                    {"chrf_plus_plus": 50.0, "exact_match_rate": -0.1}, {}, {"bleu": 30.0}])
def test_composite_rejects_bad_input(values):
    with pytest.raises(MtboardError):
        composite(values)


@pytest.mark.parametrize("value, tier", [
    (0.0, "baseline"), (0.299999, "baseline"), (0.30, "emerging"), (0.4999, "emerging"), (0.50, "functional"),
    (0.6999, "functional"), (0.70, "deployable"), (0.8499, "deployable"), (0.85, "fluent"), (1.0, "fluent"),
])
def test_quality_tier(value, tier):
    assert quality_tier(value) == tier


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("inf")])
def test_quality_tier_rejects_out_of_range(bad):
    with pytest.raises(MtboardError):
        quality_tier(bad)


@pytest.mark.parametrize("composite, cost, expected", [
    (0.6, 0.0, 0.6),
    (0.6, 0.001, round(0.6 / (1 + 0.30102999566398120), 6)),  # $1 per 1,000 entries: log10(2)
    (0.6, 0.009, 0.3),                                         # $9 per 1,000 entries: log10(10) = 1
    (0.6, 0.099, 0.2),                                         # $99: log10(100) = 2
    (0.6, None, None),
])
def test_cost_adjusted_score(composite, cost, expected):
    assert cost_adjusted_score(composite, cost) == expected


def test_composite_signature_in_the_document_matches_the_code():
    block = section(r"4\.5 Signature")
    (doc,) = [line.strip() for line in block.splitlines() if line.startswith("    composite:")]
    assert doc == composite_signature("A", checks.POLICY_VERSION)
    b = composite_signature("B", checks.POLICY_VERSION)
    # every weight of the profile's table, in its order, and the other constants of §4–§6
    assert b.split("|")[:2] == ["composite:B", "weights:" + ",".join(
        f"{k}={v:g}" for k, v in weights_from(r"4\.3 Profile B weights").items())]
    assert b.split("|")[2:] == ["scale:chrf_plus_plus=100", "inverted:code_switching_rate,hallucination_rate",
                                "round:6", "tiers:0,0.3,0.5,0.7,0.85", "cost:1000", f"policy:{checks.POLICY_VERSION}"]
    with pytest.raises(MtboardError, match="unknown composite profile"):
        composite_signature("C", checks.POLICY_VERSION)
