"""Paired significance, rank clusters, detectable differences, item statistics and agreement statistics for the
leaderboard.

The significance tests work on bootstrap scores computed from the per-segment values stored in each run card
(``EntryResult.stats.chrf``: for char orders 1–6 then word orders 1–2 the triple ``(hyp, ref, match)``, 24 integers,
the layout of sacrebleu's ``CHRF(word_order=2)``, and the per-entry rates of the composite), so they need no text and
run the same on secret segments. The leaderboard ranks on the composite, so its clusters and CIs are the composite's
(docs/SCORING_SPEC.md §4.6); the functions are metric-agnostic (``RankRow.score``).

Methods (sources: Koehn 2004, "Statistical significance tests for machine translation evaluation" — paired bootstrap
resampling; Holm 1979, "A simple sequentially rejective multiple test procedure"; sacrebleu's ``significance.py`` for
the resampling layout; WMT findings papers for rank clusters):

* The resamples are :mod:`mtboard.score.metrics.bootstrap`'s (the card's CI uses the same draw scheme and scores):
  :func:`~mtboard.score.metrics.bootstrap.resample_counts` draws ``R`` seeded resamples of the ``n`` segments **once per
  view** (seed :func:`view_seed`); every row of that view is scored on the same resamples
  (:func:`~mtboard.score.metrics.bootstrap.chrf_resamples`, exact integer sums), which makes any two rows a *paired*
  bootstrap for free.
* :func:`paired_p_value`: two-sided p-value of a score difference from the bootstrap standard error of the paired
  difference (normal approximation, continuous, so Holm's small thresholds stay reachable with 1,000 resamples).
* :func:`rank_clusters`: rows are ordered by the leaderboard score (the composite). A boundary between positions k and
  k+1 is drawn only when the *closest* pair across it — the row with the lowest score at or above k against the row
  with the highest score below — differs significantly in the same direction as the order, after Holm correction
  over the view's N−1 boundary tests (α = 0.05). Rows between two boundaries share the rank range "a–b".
* :func:`all_pairs`: every pair of rows tested the same way, Holm-corrected over the N(N−1)/2 tests.
* :func:`min_detectable_difference`: the smallest score difference one paired test at α = 0.05 detects with 80 %
  power in this view: (z₀.₉₇₅ + z₀.₈₀) × median bootstrap SE of adjacent paired differences.
* :func:`item_statistics`: per-entry share of methods that fail an entry or score it among their lowest 10 %,
  and entries every method passes; :func:`item_analysis`: classical test theory over *systems* (items = entries,
  examinees = real systems): difficulty (mean item score), discrimination (corrected item–total correlation:
  Pearson r between the item's scores and each system's mean over the *other* items), and the suspect-reference flag.
* :func:`cohen_kappa` (Cohen 1960, unweighted) and :func:`kendall_tau_b` (Kendall 1945, ties corrected; the WMT
  metrics task's segment-level statistic) for judge–judge and judge–human agreement.
* :func:`wilson_interval` (Wilson 1927, "Probable inference, the law of succession, and statistical inference"; the
  interval Brown, Cai & DasGupta 2001 recommend for small n) for a share of labelled cells, and
  :func:`mean_interval`, the seeded percentile bootstrap of a mean (the draw scheme and percentile indices of
  :mod:`mtboard.score.metrics.bootstrap`), for a mean judge penalty over a slice of entries (issue 40 item 3:
  :mod:`mtboard.ledger.context_slices`).
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mtboard.score.metrics.bootstrap import BOOTSTRAP_RESAMPLES, percentile_interval, resample_counts

ALPHA = 0.05
Z_975 = 1.959963984540054
Z_80 = 0.8416212335729143
HARD_SHARE = 0.9
"""An item is 'hard' when at least this share of methods fail it or score it among their lowest decile."""
LOW_DECILE = 0.1
PASS_CHRF = 90.0
"""Sentence chrF++ at or above which an output counts as a pass (besides exact / equivalent matches)."""


def view_seed(*parts: str) -> int:
    """Deterministic 63-bit seed derived from a view's identity (dataset id, version, domain …)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def paired_p_value(boot_a: np.ndarray, boot_b: np.ndarray, observed_diff: float) -> float:
    """Two-sided p-value for ``observed_diff`` (= score_a − score_b) from paired bootstrap scores.

    Normal approximation with the bootstrap standard error of the paired difference. Returns 1.0 when the standard
    error is 0 (identical rows or a single segment: nothing can be separated).
    """
    if boot_a.size < 2:
        return 1.0
    se = float(np.std(boot_a - boot_b, ddof=1))
    if not se > 0:
        return 1.0
    z = abs(observed_diff) / se
    return float(math.erfc(z / math.sqrt(2)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given), each capped at 1 and monotone in rank."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass
class RankRow:
    """One row of a view, already ordered by the ranking score (best first)."""

    key: str
    score: float
    """The ranking score (the composite on the leaderboard)."""
    boot: np.ndarray
    """Bootstrap scores on the view's shared resamples."""


@dataclass
class ClusterResult:
    labels: list[str]
    """Rank label per row: '3' or a range '2–4' (en dash)."""
    ranges: list[tuple[int, int]]
    boundary_p: list[float] = field(default_factory=list)
    """Holm-adjusted p-value of the boundary test between positions k and k+1 (length N−1)."""
    mdd: float | None = None
    """Smallest detectable score difference (see :func:`min_detectable_difference`)."""


def rank_clusters(rows: Sequence[RankRow], alpha: float = ALPHA) -> ClusterResult:
    """Group rows (ordered best first by the ranking score) into rank clusters; see the module docstring.

    Returns labels like '1', '2–4' per row. A single row gets '1'.
    """
    n = len(rows)
    if n == 0:
        return ClusterResult([], [])
    raw_p: list[float] = []
    # the weakest row at or above each boundary and the strongest below it (ties: the earliest above, the earliest
    # below), as running minima/maxima: O(N) instead of O(N²) at 2,000 rows (issue 35)
    above_at: list[int] = []
    for k in range(n):
        above_at.append(k if not above_at or (rows[k].score, k) < (rows[above_at[-1]].score, above_at[-1])
                        else above_at[-1])
    below_at: list[int] = [n - 1] * n
    for k in range(n - 2, -1, -1):
        j = below_at[k + 1]
        below_at[k] = k if (rows[k].score, -k) >= (rows[j].score, -j) else j
    for k in range(n - 1):
        above, below = above_at[k], below_at[k + 1]
        diff = rows[above].score - rows[below].score
        if diff <= 0:
            raw_p.append(1.0)
        else:
            raw_p.append(paired_p_value(rows[above].boot, rows[below].boot, diff))
    adj = holm(raw_p)
    ranges: list[tuple[int, int]] = []
    start = 0
    for k in range(n):
        if k == n - 1 or adj[k] < alpha:
            ranges.extend([(start + 1, k + 1)] * (k + 1 - start))
            start = k + 1
    labels = [str(a) if a == b else f"{a}\u2013{b}" for a, b in ranges]
    mdd = min_detectable_difference([r.boot for r in rows])
    return ClusterResult(labels, ranges, adj, mdd)


def all_pairs(rows: Sequence[RankRow]) -> np.ndarray:
    """Holm-adjusted two-sided p-values of every pair of rows, an ``(N, N)`` symmetric matrix (diagonal 1): the
    paired bootstrap test of :func:`paired_p_value` on the view's shared resamples, corrected over the N(N−1)/2
    tests (Holm 1979). Cost: one standard deviation of R differences per pair, computed one row against the rows
    below it at a time, so memory is O(N × R) (issue 35: the earlier one-shot N(N−1)/2 × R array was ~16 GB at
    2,000 rows × 1,000 resamples); the arithmetic per pair is unchanged (same differences, same ``np.std``)."""
    n = len(rows)
    out = np.ones((n, n))
    if n < 2:
        return out
    boots = np.stack([r.boot for r in rows]) if rows[0].boot.size else np.zeros((n, 0))
    if boots.shape[1] < 2:
        return out
    scores = np.array([r.score for r in rows], dtype=float)
    iu = np.triu_indices(n, 1)
    se = np.concatenate([np.std(boots[i] - boots[i + 1:], axis=1, ddof=1) for i in range(n - 1)])
    observed = np.concatenate([scores[i] - scores[i + 1:] for i in range(n - 1)])
    raw = [float(math.erfc(abs(d) / s / math.sqrt(2))) if s > 0 else 1.0 for d, s in zip(observed.tolist(),
                                                                                          se.tolist())]
    adj = holm(raw)
    out[iu] = adj
    out[(iu[1], iu[0])] = adj
    return out


def min_detectable_difference(boots: Sequence[np.ndarray]) -> float | None:
    """Smallest score difference a paired test at α = 0.05 detects with 80 % power in a view.

    (z₀.₉₇₅ + z₀.₈₀) × the median bootstrap standard error of the paired differences of adjacent rows; with one row,
    √2 × its own bootstrap standard error (an unpaired comparison against an equally variable method). None when the
    view has no resamples or fewer than 2 segments.
    """
    if not boots or boots[0].size < 2:
        return None
    if len(boots) == 1:
        se = float(np.std(boots[0], ddof=1)) * math.sqrt(2)
    else:
        se = statistics.median(float(np.std(a - b, ddof=1)) for a, b in zip(boots, boots[1:]))
    return (Z_975 + Z_80) * se


# ----------------------------------------------------------------------------------------------------------------
# Item statistics (hard items)


@dataclass
class ItemOutcome:
    """One method's result on one entry."""

    failed: bool
    """No usable output or source returned untranslated (mechanical policy)."""
    passed: bool
    """Exact or equivalent match, or sentence chrF++ ≥ :data:`PASS_CHRF`."""
    score: float
    """Sentence chrF++ (0 when failed)."""


@dataclass
class ItemStat:
    entry_id: int
    n_methods: int
    n_struggle: int
    n_pass: int

    @property
    def struggle_share(self) -> float:
        return self.n_struggle / self.n_methods if self.n_methods else 0.0


def item_statistics(per_method: dict[str, dict[int, ItemOutcome]]) -> list[ItemStat]:
    """Per entry: how many methods fail it or score it in their own lowest decile, and how many pass it.

    ``per_method`` maps a method key to ``{entry_id: ItemOutcome}``. A method's lowest decile is the ⌈10 %⌉ of its
    entries with the lowest sentence chrF++ (ties at the cut included; a method scoring every entry the same has no
    lowest decile). Returns entries sorted by id.
    """
    struggle: dict[int, int] = {}
    passed: dict[int, int] = {}
    seen: dict[int, int] = {}
    for outcomes in per_method.values():
        if not outcomes:
            continue
        scores = sorted(o.score for o in outcomes.values())
        cut = scores[max(0, math.ceil(len(scores) * LOW_DECILE) - 1)]
        top = scores[-1]
        for eid, o in outcomes.items():
            seen[eid] = seen.get(eid, 0) + 1
            if o.failed or (o.score <= cut and o.score < top):
                struggle[eid] = struggle.get(eid, 0) + 1
            if o.passed and not o.failed:
                passed[eid] = passed.get(eid, 0) + 1
    return [ItemStat(eid, seen[eid], struggle.get(eid, 0), passed.get(eid, 0)) for eid in sorted(seen)]


# ----------------------------------------------------------------------------------------------------------------
# Item analysis (classical test theory over systems)

SUSPECT_MIN_SYSTEMS = 5
"""An item is only flagged as a suspect reference when at least this many real systems ran it (issue 15 part 8)."""
SUSPECT_FAIL_SHARE = 0.95
"""… and at least this share of them fail it (no usable output, or a score in their own lowest decile)."""


@dataclass
class ItemAnalysis:
    entry_id: int
    n_systems: int
    difficulty: float
    """Mean item score over the systems (sentence chrF++ 0–100; failures 0): low = hard."""
    discrimination: float | None
    """Corrected item–total correlation (Pearson r of the item's scores with each system's mean over the other
    items); None with fewer than 3 systems or no variance."""
    fail_share: float
    """Share of systems that fail the item (no usable output or a score in their own lowest decile)."""
    output_agreement: float | None = None
    """Mean pairwise similarity of the systems' usable outputs (filled by the caller for candidate items)."""
    reference_agreement: float | None = None
    """Mean similarity of the systems' usable outputs to the reference."""

    @property
    def suspect_reference(self) -> bool:
        """≥ :data:`SUSPECT_FAIL_SHARE` of ≥ :data:`SUSPECT_MIN_SYSTEMS` systems fail it while their outputs agree
        with one another more than with the reference (the reference may be wrong, not every system)."""
        return (self.n_systems >= SUSPECT_MIN_SYSTEMS and self.fail_share >= SUSPECT_FAIL_SHARE
                and self.output_agreement is not None and self.reference_agreement is not None
                and self.output_agreement > self.reference_agreement)


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation; None for fewer than 3 pairs or a constant variable."""
    if len(x) < 3:
        return None
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    a = a - a.mean()
    b = b - b.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0 else None


def item_analysis(scores: dict[str, dict[int, float]], failed: dict[str, set[int]]) -> list[ItemAnalysis]:
    """Difficulty, discrimination and fail share per item over real systems (items sorted by id).

    Args:
        scores: system → {entry id → item score} (sentence chrF++, 0 for failures); only entries every system has
            are analysed (the leaderboard's reference set).
        failed: system → entries it fails (no usable output or a score in its own lowest decile, as
            :func:`item_statistics` counts struggling).
    """
    systems = sorted(scores)
    if not systems:
        return []
    ids = sorted(set.intersection(*(set(scores[s]) for s in systems)))
    if not ids:
        return []
    mat = np.array([[scores[s][i] for i in ids] for s in systems], dtype=np.float64)  # systems × items
    totals = mat.sum(axis=1)
    k = len(ids)
    out = []
    for j, eid in enumerate(ids):
        col = mat[:, j]
        rest = (totals - col) / (k - 1) if k > 1 else np.zeros(len(systems))
        out.append(ItemAnalysis(entry_id=eid, n_systems=len(systems), difficulty=float(col.mean()),
                                discrimination=pearson(col.tolist(), rest.tolist()) if k > 1 else None,
                                fail_share=sum(eid in failed.get(s, set()) for s in systems) / len(systems)))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Agreement (judges against judges and against people)


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's κ of two raters' labels on the same cells (unweighted): (pₒ − pₑ) / (1 − pₑ). None for no cells or
    when chance agreement is 1 (both raters use one and the same label everywhere)."""
    if len(a) != len(b):
        raise ValueError("the two raters must label the same cells")
    n = len(a)
    if n == 0:
        return None
    labels = sorted(set(a) | set(b))
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in labels)
    return (po - pe) / (1 - pe) if pe < 1 else None


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of paired values (ties in either variable corrected): (concordant − discordant) /
    √((n₀ − n₁)(n₀ − n₂)). None for fewer than 2 pairs or a constant variable. O(n²): meant for a few thousand
    cells."""
    if len(x) != len(y):
        raise ValueError("x and y must pair up")
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    n = len(a)
    if n < 2:
        return None
    iu = np.triu_indices(n, 1)
    sa = np.sign(a[iu[1]] - a[iu[0]])
    sb = np.sign(b[iu[1]] - b[iu[0]])
    s = float(np.sum(sa * sb))
    n0 = len(iu[0])
    n1 = float(np.sum(sa == 0))
    n2 = float(np.sum(sb == 0))
    den = math.sqrt((n0 - n1) * (n0 - n2))
    return s / den if den > 0 else None


# ----------------------------------------------------------------------------------------------------------------
# Intervals of a share and of a mean (context-behaviour slices, issue 40 item 3)


def wilson_interval(k: int, n: int, z: float = Z_975) -> tuple[float, float] | None:
    """95 % Wilson score interval of the share ``k / n`` (Wilson 1927; the default ``z`` is z₀.₉₇₅):
    ``(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)``, clipped to [0, 1] against rounding. Unlike a bootstrap
    or the normal (Wald) interval it does not collapse to a point at ``k = 0`` or ``k = n`` and keeps its coverage
    at small ``n`` (Brown, Cai & DasGupta 2001). Equal to ``statsmodels``' ``proportion_confint(k, n,
    method="wilson")`` (tests/test_context_slices.py). None when ``n`` is 0.

    Raises: ValueError when ``k`` is outside 0…``n``."""
    if not 0 <= k <= n:
        raise ValueError(f"a share needs 0 ≤ k ≤ n, got k={k}, n={n}")
    if n == 0:
        return None
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], seed: int,
                  resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """95 % percentile bootstrap interval of the mean of ``values`` (same unit as the values): ``resamples`` seeded
    resamples of the values drawn with replacement (:func:`mtboard.score.metrics.bootstrap.resample_counts`, the
    project's one draw scheme), each resample's mean, the interval at sacrebleu's percentile indices
    (:func:`~mtboard.score.metrics.bootstrap.percentile_interval`). Deterministic for given values and ``seed``
    (derive it with :func:`view_seed`). None for fewer than 2 values: one value has no spread to resample, and a
    point interval would read as certainty."""
    if len(values) < 2:
        return None
    x = np.asarray(values, dtype=np.float64)
    counts = resample_counts(len(x), resamples, seed)
    return percentile_interval(counts @ x / len(x))
