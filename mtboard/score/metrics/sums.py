"""Summing per-segment statistics: column sums over a selection of rows, width checks, the 0–100 clamp.

Integer statistics (chrF++, BLEU) are summed exactly (numpy int64, equal to Python's ``sum``), so a corpus score
re-derived from a card is bit-for-bit the score the runner wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mtboard.core.errors import MtboardError


def check_width(rows, width: int, name: str) -> None:
    """Raise MtboardError when a row does not have ``width`` values (``name``: the statistics family)."""
    for r in rows:
        if len(r) != width:
            raise MtboardError(f"{name} statistics row has {len(r)} values, expected {width}",
                               where="metrics", fix="pass rows from SegmentStats.%s" % name)


def column_sums(stats, indices: Sequence[int] | None, width: int, name: str) -> list:
    """Column sums of the selected rows (all rows when ``indices`` is None) as Python numbers; ``[0] * width`` for
    an empty selection.

    Integer rows (lists or an integer ndarray) are summed by numpy in int64: exact, so equal to Python's ``sum``.
    Anything else (floats, huge ints) takes the plain Python path. Raises MtboardError for a row of the wrong width.
    """
    if isinstance(stats, np.ndarray) and stats.ndim == 2 and stats.dtype.kind in "iub":
        mat = stats if indices is None else stats[np.asarray(indices, dtype=np.intp)]
    else:
        rows = stats if indices is None else [stats[i] for i in indices]
        if len(rows) == 0:
            return [0] * width
        try:
            mat = np.asarray(rows)
        except (ValueError, TypeError):  # ragged
            mat = None
        if mat is None or mat.dtype.kind not in "iub" or mat.ndim != 2:
            check_width(list(rows), width, name)
            return [sum(col) for col in zip(*rows)]
    if mat.shape[0] == 0:
        return [0] * width
    if mat.shape[1] != width:
        check_width(list(mat), width, name)
    return mat.sum(axis=0, dtype=np.int64).tolist()


def clamp100(x: float) -> float:
    """Scores are 0–100; sacrebleu's exp(mean log) can give 100.00000000000004 for a perfect match."""
    return min(100.0, max(0.0, float(x)))
