"""Composite score, quality tiers and cost-adjusted score (mirror of docs/SCORING_SPEC.md §4–§6; the spec's tables are
checked against these constants by tests/test_scoring_spec.py), and the composite's signature string.

Like sacrebleu's signatures, :func:`composite_signature` spells out everything that determines the composite of a
card: the weight profile used and its weights, the normalisation, the rounding, the tier bounds, the cost reference
and the mechanical policy version whose decisions feed the rates. New cards record it in ``scores.signatures
.composite``; the validator's ``signatures`` check requires it to equal the recomputation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from mtboard.core.errors import MtboardError
from mtboard.core.schema import EntryResult, Outcome, QualityTier

WEIGHTS: dict[str, dict[str, float]] = {
    "A": {
        "chrf_plus_plus": 0.45,
        "fst_acceptance_rate": 0.10,
        "morphological_accuracy": 0.10,
        "equivalent_match_rate": 0.20,
        "exact_match_rate": 0.05,
        "semantic_score": 0.05,
        "code_switching_rate": 0.03,
        "hallucination_rate": 0.01,
        "terminology_adherence": 0.01,
    },
    "B": {
        "chrf_plus_plus": 0.50,
        "morphological_accuracy": 0.10,
        "equivalent_match_rate": 0.15,
        "exact_match_rate": 0.05,
        "semantic_score": 0.10,
        "code_switching_rate": 0.05,
        "hallucination_rate": 0.03,
        "terminology_adherence": 0.02,
    },
}
"""Composite weights per profile: A when FST acceptance is available, B otherwise (docs/SCORING_SPEC.md §4)."""

SCALE: dict[str, float] = {"chrf_plus_plus": 100.0}
"""Metrics divided by this before entering the composite (chrF++ is 0–100)."""
INVERTED = frozenset({"code_switching_rate", "hallucination_rate"})
"""Rates where lower is better: they enter the composite as 1 − rate."""
EXCLUDED = ("bleu", "ter", "length_ratio")
"""Reported but never in the composite (docs/SCORING_SPEC.md §4.4)."""
COMPOSITE_DECIMALS = 6
"""The composite is rounded to this many decimals (tier boundaries are then exact)."""

TIER_THRESHOLDS: tuple[tuple[float, QualityTier], ...] = (
    (0.00, QualityTier.baseline),
    (0.30, QualityTier.emerging),
    (0.50, QualityTier.functional),
    (0.70, QualityTier.deployable),
    (0.85, QualityTier.fluent),
)
"""Lower bound (inclusive) of each tier (spec §5)."""

FORMAT_ATTEMPT_PENALTY = 0.1
"""Share of an entry's part of the composite lost per extra format attempt (docs/SCORING_SPEC.md §3.4; issue 39):
the composite is multiplied by ``1 − FORMAT_ATTEMPT_PENALTY × mean extra attempts per entry`` — for each entry,
its 1/n share of the composite times ``1 − 0.1 × (format_attempts − 1)``."""
FORMAT_EXTRA = "format_extra_attempts"
"""The key of the penalty's input in a composite's values (mean over entries of ``format_attempts − 1``, 0–4) and
of its per-entry column (:func:`entry_columns`, present only when some entry was asked again)."""

COST_REFERENCE_ENTRIES = 1000
"""Cost-adjusted score works on the cost of this many entries (docs/SCORING_SPEC.md §6)."""


def profile_of(values: Mapping[str, float | None]) -> str:
    """'A' when ``fst_acceptance_rate`` is available (not None), else 'B'."""
    return "A" if values.get("fst_acceptance_rate") is not None else "B"


def composite(values: Mapping[str, float | None]) -> tuple[float, str]:
    """Weighted composite in [0, 1] over the available metrics, and the profile used ('A' or 'B').

    Args:
        values: metric name → value as stored in ``Scores`` (chrF++ on 0–100, rates in [0, 1], code-switching and
            hallucination as rates, not inverted). None or absent = unavailable. Other keys are ignored.

    Profile A applies when ``fst_acceptance_rate`` is available, else B. Composite = Σ wᵢ·mᵢ / Σ wᵢ over available
    metrics (missing metrics' weights are redistributed proportionally), times ``1 − 0.1 × values[FORMAT_EXTRA]``
    when that mean of extra format attempts is given and non-zero (:data:`FORMAT_ATTEMPT_PENALTY`), rounded to
    :data:`COMPOSITE_DECIMALS`.

    Raises: MtboardError when a value is not finite or outside its range, or when no weighted metric is available.
    """
    profile = profile_of(values)
    num = den = 0.0
    for name, weight in WEIGHTS[profile].items():
        v = values.get(name)
        if v is None:
            continue
        scale = SCALE.get(name, 1.0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 <= v <= scale:
            raise MtboardError(f"{name}={v!r} is outside 0–{scale:g}", where="composite",
                               fix="pass the value as stored in the run card's scores")
        x = v / scale
        if name in INVERTED:
            x = 1.0 - x
        num += weight * x
        den += weight
    if den == 0:
        raise MtboardError("no composite metric is available", where="composite",
                           fix="pass at least chrf_plus_plus")
    extra = values.get(FORMAT_EXTRA)
    if extra:
        if not isinstance(extra, (int, float)) or not math.isfinite(extra) or not 0 <= extra <= 4:
            raise MtboardError(f"{FORMAT_EXTRA}={extra!r} is outside 0–4", where="composite",
                               fix="pass the mean of format_attempts − 1 over the entries")
        return round(num / den * (1.0 - FORMAT_ATTEMPT_PENALTY * extra), COMPOSITE_DECIMALS), profile
    return round(num / den, COMPOSITE_DECIMALS), profile


COLUMN_METRICS = ("exact_match_rate", "equivalent_match_rate", "code_switching_rate", "fst_acceptance_rate",
                  "semantic_score", "hallucination_rate", "terminology_adherence", "morphological_accuracy")
"""The composite's rate metrics that are means of one per-entry value (:func:`entry_columns`); chrF++ is the other
ingredient, from the summed per-segment statistics."""
COLUMN_UNITS: dict[str, int] = {"semantic_score": 10_000}
"""Columns given in integer units (:func:`entry_columns`): the resampled mean is divided by this, so integer sums keep
every mean exact (``mtboard.score.metrics.semantic.mean_of`` computes the card's value the same way)."""


def entry_columns(results: Sequence[EntryResult], *, has_equiv: bool, has_fst: bool) -> dict[str, np.ndarray]:
    """Per-entry values whose means are the composite's rates (docs/SCORING_SPEC.md §2), from a card's results:
    exact match 0/1, equivalent match 0/1 (when the card has variants), code-switching 0/1, FST share (accepted ÷
    checked words; 1 with no checkable word; 0 without usable output) when the card has FST acceptance, and when the
    results carry them the semantic similarity (in integer units of 1/10,000, :data:`COLUMN_UNITS`) and
    hallucination 0/1; when an entry has a glossary, terminology adherence as a **ratio column**: a ``(2, n)`` array
    of glossary hits and terms per entry, whose resampled ratio of sums is the rate; likewise morphological accuracy
    (matched and counted units, ``morph_matched`` / ``morph_units``) when an entry has units; when some entry was asked
    again (``format_attempts`` > 1), its extra attempts (:data:`FORMAT_EXTRA`, the penalty's input). Their means (ratio) over all
    entries equal the card's rates; the bootstrap of the composite resamples them with the chrF++
    statistics (:func:`mtboard.score.metrics.bootstrap.composite_resamples`)."""
    cols: dict[str, list[float]] = {"exact_match_rate": [], "code_switching_rate": []}
    if has_equiv:
        cols["equivalent_match_rate"] = []
    if has_fst:
        cols["fst_acceptance_rate"] = []
    for r in results:
        cols["exact_match_rate"].append(1.0 if r.exact_match else 0.0)
        cols["code_switching_rate"].append(1.0 if r.code_switching_detected else 0.0)
        if has_equiv:
            cols["equivalent_match_rate"].append(1.0 if r.equivalent_match else 0.0)
        if has_fst:
            usable = r.checks.outcome == Outcome.usable
            acc, chk = r.fst_accepted_words or 0, r.fst_checked_words or 0
            cols["fst_acceptance_rate"].append((acc / chk if chk else 1.0) if usable else 0.0)
    if results and all(r.semantic_score is not None for r in results):
        cols["semantic_score"] = [float(round(r.semantic_score * COLUMN_UNITS["semantic_score"]))  # type: ignore
                                  for r in results]
    if results and all(r.hallucination_detected is not None for r in results):
        cols["hallucination_rate"] = [1.0 if r.hallucination_detected else 0.0 for r in results]
    if any(r.format_attempts > 1 for r in results):
        cols[FORMAT_EXTRA] = [float(r.format_attempts - 1) for r in results]
    if any(r.glossary_terms for r in results):
        cols["terminology_adherence"] = [[float(r.glossary_hits or 0) for r in results],  # type: ignore[list-item]
                                         [float(r.glossary_terms or 0) for r in results]]
    if any(r.morph_units for r in results):
        cols["morphological_accuracy"] = [[float(r.morph_matched or 0) for r in results],  # type: ignore[list-item]
                                          [float(r.morph_units or 0) for r in results]]
    return {k: np.asarray(v, dtype=np.float64) for k, v in cols.items()}


def composite_array(values: Mapping[str, np.ndarray]) -> np.ndarray:
    """:func:`composite` applied element-wise to arrays of metric values (one element per bootstrap resample):
    the same weights, normalisation and redistribution over the metrics present, the same profile rule, the same
    format-attempt penalty (:data:`FORMAT_EXTRA`), rounded
    to :data:`COMPOSITE_DECIMALS` with numpy (half to even; the card's own composite is :func:`composite`'s)."""
    profile = profile_of({k: (None if v is None else 0.0) for k, v in values.items()})
    num: np.ndarray | float = 0.0
    den = 0.0
    for name, weight in WEIGHTS[profile].items():
        v = values.get(name)
        if v is None:
            continue
        x = np.asarray(v, dtype=np.float64) / SCALE.get(name, 1.0)
        if name in INVERTED:
            x = 1.0 - x
        num = num + weight * x
        den += weight
    if den == 0:
        raise MtboardError("no composite metric is available", where="composite_array",
                           fix="pass at least chrf_plus_plus")
    extra = values.get(FORMAT_EXTRA)
    if extra is not None:
        return np.round(np.asarray(num) / den * (1.0 - FORMAT_ATTEMPT_PENALTY * np.asarray(extra, dtype=np.float64)),
                        COMPOSITE_DECIMALS)
    return np.round(np.asarray(num) / den, COMPOSITE_DECIMALS)


def quality_tier(value: float) -> QualityTier:
    """Provisional tier of a composite (spec §5): baseline <0.30 ≤ emerging <0.50 ≤ functional <0.70 ≤ deployable
    <0.85 ≤ fluent. Raises MtboardError outside [0, 1]."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise MtboardError(f"composite {value!r} is outside 0–1", where="quality_tier")
    tier = TIER_THRESHOLDS[0][1]
    for lower, name in TIER_THRESHOLDS:
        if value >= lower:
            tier = name
    return tier


def cost_adjusted_score(composite_value: float, cost_per_entry_usd: float | None) -> float | None:
    """composite ÷ (1 + log10(1 + cost of 1,000 entries in USD)); None when the cost is unknown.

    Free methods keep their composite; $1 per 1,000 entries divides it by 1.30, $9 by 2, $99 by 3.
    Raises MtboardError for a negative or non-finite cost.
    """
    if cost_per_entry_usd is None:
        return None
    if not math.isfinite(cost_per_entry_usd) or cost_per_entry_usd < 0:
        raise MtboardError(f"cost per entry {cost_per_entry_usd!r} is negative or not finite",
                           where="cost_adjusted_score")
    return round(composite_value / (1.0 + math.log10(1.0 + COST_REFERENCE_ENTRIES * cost_per_entry_usd)),
                 COMPOSITE_DECIMALS)


def _num(x: float) -> str:
    return f"{x:g}"


def composite_signature(profile: str, policy_version: str, *, format_penalty: bool = False) -> str:
    """The composite's signature string, in sacrebleu's ``key:value|…`` form::

        composite:A|weights:chrf_plus_plus=0.45,fst_acceptance_rate=0.1,…|scale:chrf_plus_plus=100|
        inverted:code_switching_rate,hallucination_rate|round:6|tiers:0,0.3,0.5,0.7,0.85|cost:1000|policy:mech-1.2

    (one line). ``profile``: 'A' or 'B' (the profile the composite used); ``policy_version``: the mechanical policy
    of the card (``mtboard.score.checks.POLICY_VERSION``). Weights are listed in the spec's table order, numbers in
    shortest form (``%g``). ``format_penalty``: some entry of the card was asked again (``format_attempts`` > 1):
    ``|format_attempt:0.1`` is appended (:data:`FORMAT_ATTEMPT_PENALTY`; absent otherwise, so every signature made
    before stays the same). Raises MtboardError for an unknown profile.
    """
    if profile not in WEIGHTS:
        raise MtboardError(f"unknown composite profile {profile!r}", where="composite_signature",
                           fix=f"use one of {', '.join(sorted(WEIGHTS))}")
    parts = [
        f"composite:{profile}",
        "weights:" + ",".join(f"{k}={_num(w)}" for k, w in WEIGHTS[profile].items()),
        "scale:" + ",".join(f"{k}={_num(v)}" for k, v in sorted(SCALE.items())),
        "inverted:" + ",".join(sorted(INVERTED)),
        f"round:{COMPOSITE_DECIMALS}",
        "tiers:" + ",".join(_num(lower) for lower, _ in TIER_THRESHOLDS),
        f"cost:{COST_REFERENCE_ENTRIES}",
        f"policy:{policy_version}",
    ]
    if format_penalty:
        parts.append(f"format_attempt:{_num(FORMAT_ATTEMPT_PENALTY)}")
    return "|".join(parts)
