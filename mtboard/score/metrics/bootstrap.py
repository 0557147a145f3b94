"""The one bootstrap over segments (Koehn 2004): seeded resamples drawn with replacement, each scored from the summed
per-segment statistics, and sacrebleu's percentile convention for a 95 % interval.

Used for the card's ``chrf_ci95`` (:func:`chrf_ci`, docs/SCORING_SPEC.md §2) and by the leaderboard's paired
bootstrap, rank clusters and per-domain intervals (:mod:`mtboard.score.stats`, :mod:`mtboard.ledger.tables`), which draw the
resamples of a view once (:func:`resample_counts`) and score every row of the view on them (a paired bootstrap).

The draw scheme is part of every card's CI and must not change: ``numpy.random.default_rng(seed)``; resamples are
drawn in blocks of :data:`DRAW_BLOCK` as ``rng.integers(0, n, size=(m, n))`` (the block size is part of the random
stream); a resample's totals are the exact integer sums of its drawn rows; its chrF++ is
:func:`mtboard.score.metrics.chrf.chrf_from_totals`; the interval is the sorted scores at ``R // 40`` and
``R − R // 40 − 1`` (``sacrebleu.significance.estimate_ci``'s indices).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from mtboard.score.metrics.chrf import CHRF_STATS_LEN, chrf_from_totals
from mtboard.score.metrics.composite import COLUMN_UNITS, composite_array
from mtboard.score.metrics.sums import check_width

BOOTSTRAP_RESAMPLES = 1000
"""Resamples of the card's CI and of the leaderboard's significance tests."""
BOOTSTRAP_SEED = 20261129
"""Seed of the card's CI (the leaderboard derives one seed per view: :func:`mtboard.score.stats.view_seed`)."""
DRAW_BLOCK = 50
"""Resamples drawn per ``rng.integers`` call: part of the random stream (a different block size draws other
resamples from the same seed)."""


def statistics_matrix(stats, width: int = CHRF_STATS_LEN, name: str = "chrf") -> np.ndarray:
    """Per-segment statistics as an ``(n, width)`` int64 array (``(0, width)`` for none).

    Raises: MtboardError when a row does not have ``width`` values.
    """
    if isinstance(stats, np.ndarray) and stats.ndim == 2 and stats.dtype.kind in "iub":
        if stats.shape[1] != width:
            check_width(list(stats), width, name)
        return stats.astype(np.int64, copy=False)
    rows = [list(r) for r in stats]
    if not rows:
        return np.zeros((0, width), dtype=np.int64)
    check_width(rows, width, name)
    return np.asarray(rows, dtype=np.int64)


def resample_blocks(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples of ``n`` segments as ``(m, n)`` int64 count matrices, ``m`` ≤ :data:`DRAW_BLOCK` rows each
    (entry ``[r, i]``: how often segment ``i`` is drawn in resample ``r``; every row sums to ``n``). ``n`` ≥ 1."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, DRAW_BLOCK):
        m = min(DRAW_BLOCK, resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        idx += (np.arange(m, dtype=idx.dtype) * n)[:, None]  # row r's draws → bins r·n … r·n + n − 1
        yield np.bincount(idx.ravel(), minlength=m * n).reshape(m, n).astype(np.int64, copy=False)


def resample_counts(n: int, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """All resamples at once: an ``(R, n)`` int64 count matrix (``(R, 0)`` for no segments). Multiplying it with an
    ``(n, k)`` statistics matrix gives every resample's totals; sharing it across rows makes a paired bootstrap."""
    if n == 0:
        return np.zeros((resamples, 0), dtype=np.int64)
    return np.concatenate(list(resample_blocks(n, resamples, seed)), axis=0)


def _totals(mat_t: np.ndarray, counts: np.ndarray) -> np.ndarray:
    # Integer-valued float64: every product and partial sum is an integer below 2**53, so the product is exact
    # whatever its summation order. einsum's own loop, not BLAS: OpenBLAS threads woken 20 times per call cost more
    # than the product itself on a busy machine.
    return np.einsum("kn,rn->rk", mat_t, counts.astype(np.float64, copy=False))


def chrf_resamples(stats, counts: np.ndarray | None = None, *, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """chrF++ (0–100) of every resample, ``(R,)`` floats in draw order.

    Args:
        stats: per-segment chrF++ statistics, ``n`` rows of 24 integers (list of rows or an integer array).
        counts: shared ``(R, n)`` resample counts (:func:`resample_counts`; a view scores all its rows on the same
            ones); None draws ``resamples`` resamples from ``seed`` block by block (the card's CI; no ``(R, n)``
            matrix is held).

    Returns: an empty array for no segments when ``counts`` is None, zeros when ``counts`` has no columns.
    Raises: MtboardError for rows of the wrong width or counts whose width is not ``n``.
    """
    mat = statistics_matrix(stats)
    n = mat.shape[0]
    if counts is not None and counts.shape[1] != n:
        check_width(list(counts), n, "resample counts")
    if n == 0:
        return np.zeros(counts.shape[0] if counts is not None else 0)
    mat_t = np.ascontiguousarray(mat.T.astype(np.float64))
    if counts is not None:
        totals = _totals(mat_t, counts)
    else:
        totals = np.empty((resamples, CHRF_STATS_LEN), dtype=np.float64)
        start = 0
        for block in resample_blocks(n, resamples, seed):
            totals[start:start + block.shape[0]] = _totals(mat_t, block)
            start += block.shape[0]
    return np.array([chrf_from_totals(row) for row in totals.astype(np.int64).tolist()], dtype=np.float64)


def composite_resamples(stats, columns: Mapping[str, np.ndarray], counts: np.ndarray,
                        chrf: np.ndarray | None = None) -> np.ndarray:
    """The composite (0–1) of every resample, ``(R,)`` floats: each resample's corpus chrF++ from its summed
    statistics and each rate as the resample's mean of the per-entry column, combined with the composite's weights
    (:func:`mtboard.score.metrics.composite.composite_array`). ``columns``: :func:`mtboard.score.metrics.composite.entry_columns`
    of the same ``n`` entries; ``counts``: the view's shared ``(R, n)`` resample counts (a paired bootstrap of the
    composite, docs/SCORING_SPEC.md §4.6); ``chrf``: :func:`chrf_resamples` of ``stats`` on ``counts`` when the
    caller has them already (the leaderboard's row-views, issue 35: not computed twice), else computed here."""
    n = counts.shape[1]
    values: dict[str, np.ndarray] = {"chrf_plus_plus": chrf_resamples(stats, counts) if chrf is None else chrf}
    if n == 0:
        return np.zeros(counts.shape[0])
    weights = counts.astype(np.float64, copy=False)  # a view's counts may come as float64 already (exact integers)
    for name, col in columns.items():
        col = np.asarray(col, dtype=np.float64)
        if col.ndim == 2:  # ratio column (numerators, denominators): Σ num ÷ Σ den per resample; the full-sample ratio
            num, den = np.einsum("rn,n->r", weights, col[0]), np.einsum("rn,n->r", weights, col[1])  # where none
            values[name] = np.where(den > 0, num / np.where(den > 0, den, 1.0), col[0].sum() / col[1].sum())
            continue
        values[name] = np.einsum("rn,n->r", weights, col) / n
        if name in COLUMN_UNITS:
            values[name] = values[name] / COLUMN_UNITS[name]
    return composite_array(values)


def percentile_interval(scores: Sequence[float] | np.ndarray) -> tuple[float, float] | None:
    """95 % percentile interval of bootstrap scores with sacrebleu's indices: the sorted scores at ``R // 40`` and
    ``R − R // 40 − 1`` (indices 25 and 974 of 1,000). None when there are no scores. A stable ``np.sort`` of the
    float64 values: the same floats Python's ``sorted`` picks (issue 35 item 3: ~20× cheaper at 1,000 scores)."""
    s = np.sort(np.asarray(scores, dtype=np.float64).ravel(), kind="stable")
    if not s.size:
        return None
    lo = s.size // 40
    return float(s[lo]), float(s[s.size - lo - 1])


def chrf_ci(stats, *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float] | None:
    """The card's ``chrf_ci95``: 95 % bootstrap CI of corpus chrF++ from per-segment statistics (deterministic for
    given statistics); None for an empty corpus. Raises MtboardError for rows of the wrong width."""
    return percentile_interval(chrf_resamples(stats, resamples=resamples, seed=seed))
