"""Paired significance, rank clusters, detectable differences and item statistics for the leaderboard.

Everything here works on the per-segment sufficient statistics stored in each run card
(``EntryResult.stats.chrf``: for char orders 1–6 then word orders 1–2 the triple ``(hyp, ref, match)``, 24 integers,
the layout of sacrebleu's ``CHRF(word_order=2)``), so it needs no text and runs the same on secret segments.

Methods (sources: Koehn 2004, "Statistical significance tests for machine translation evaluation" — paired bootstrap
resampling; Holm 1979, "A simple sequentially rejective multiple test procedure"; sacrebleu's ``significance.py`` for
the resampling layout; WMT findings papers for rank clusters):

* The resamples are :mod:`mtboard.metrics.bootstrap`'s (the card's CI uses the same draw scheme and scores):
  :func:`~mtboard.metrics.bootstrap.resample_counts` draws ``R`` seeded resamples of the ``n`` segments **once per
  view** (seed :func:`view_seed`); every row of that view is scored on the same resamples
  (:func:`~mtboard.metrics.bootstrap.chrf_resamples`, exact integer sums), which makes any two rows a *paired*
  bootstrap for free.
* :func:`paired_p_value`: two-sided p-value of a chrF++ difference from the bootstrap standard error of the paired
  difference (normal approximation, continuous, so Holm's small thresholds stay reachable with 1,000 resamples).
* :func:`rank_clusters`: rows are ordered by the leaderboard score (the composite). A boundary between positions k and
  k+1 is drawn only when the *closest* pair across it — the row with the lowest chrF++ at or above k against the row
  with the highest chrF++ below — differs significantly in the same direction as the order, after Holm correction
  over the view's N−1 boundary tests (α = 0.05). Rows between two boundaries share the rank range "a–b".
* :func:`min_detectable_difference`: the smallest chrF++ difference one paired test at α = 0.05 detects with 80 %
  power in this view: (z₀.₉₇₅ + z₀.₈₀) × median bootstrap SE of adjacent paired differences.
* :func:`item_statistics`: per-entry share of methods that fail an entry or score it among their lowest 10 %,
  and entries every method passes.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

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
    chrf: float
    boot: np.ndarray
    """Bootstrap chrF++ on the view's shared resamples."""


@dataclass
class ClusterResult:
    labels: list[str]
    """Rank label per row: '3' or a range '2–4' (en dash)."""
    ranges: list[tuple[int, int]]
    boundary_p: list[float] = field(default_factory=list)
    """Holm-adjusted p-value of the boundary test between positions k and k+1 (length N−1)."""
    mdd: float | None = None
    """Smallest detectable chrF++ difference (see :func:`min_detectable_difference`)."""


def rank_clusters(rows: Sequence[RankRow], alpha: float = ALPHA) -> ClusterResult:
    """Group rows (ordered best first by the ranking score) into rank clusters; see the module docstring.

    Returns labels like '1', '2–4' per row. A single row gets '1'.
    """
    n = len(rows)
    if n == 0:
        return ClusterResult([], [])
    raw_p: list[float] = []
    for k in range(n - 1):
        above = min(range(k + 1), key=lambda i: (rows[i].chrf, i))
        below = max(range(k + 1, n), key=lambda j: (rows[j].chrf, -j))
        diff = rows[above].chrf - rows[below].chrf
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


def min_detectable_difference(boots: Sequence[np.ndarray]) -> float | None:
    """Smallest chrF++ difference a paired test at α = 0.05 detects with 80 % power in a view.

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
