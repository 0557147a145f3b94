"""Flip distance (issue 38 item 4): how few segments decide the order of two rows.

Definitions (docs/SCORING_SPEC.md §4.7):

* The **composite of a row over a set K of segments** is the composite the scorer gives the row's card evaluated on K
  alone: corpus chrF++ from the summed per-segment statistics of K (:func:`mtboard.score.metrics.chrf.chrf_from_stats`),
  each rate the mean (terminology, morphological accuracy: the ratio of sums) of its per-entry column over K
  (:func:`mtboard.score.metrics.composite.entry_columns`: a column present for some entries only, or terminology
  with no glossary term in K, is absent and its weight redistributed), combined by
  :func:`mtboard.score.metrics.composite.composite` (rounded to
  :data:`~mtboard.score.metrics.composite.COMPOSITE_DECIMALS` = 6 decimals). A card with replicate runs: the mean
  over its runs of each run's composite over K, rounded to 6 decimals. It is not a sum over segments: chrF++ is a
  ratio of summed statistics and the rates are means, so removing a segment changes every other segment's weight.
* Row A is ranked above row B. Removing a set R of segments (K = the view's segments minus R) **reverses** their
  order when B's composite over K is *strictly* above A's, both rounded to 6 decimals (a tie at that rounding does
  not reverse: the board would break it by chrF++, then by name, not by the data). At least one segment must remain.
* The **flip distance** of (A, B) is the size of the smallest such R; None when no R of at most n − 1 segments
  reverses the order (A is above B on every non-empty subset).

:func:`flip_exact` finds it by brute force, subsets by increasing size, for small boards (tests): bounded by
``max_subsets`` (:data:`EXACT_MAX_SUBSETS`), past which it raises :class:`FlipSearchLimit` rather than run away.
:func:`flip_greedy` is the site's documented **upper bound**: repeatedly remove the one segment whose removal most
reduces A − B (recomputed after each removal; ties: the segment first in the view's order) until the order reverses;
its count is ≥ the exact distance, equal when greedy is optimal (tests/test_flip.py has a 30-segment board where it is
not). Both evaluate every candidate set at once with numpy (:func:`mtboard.score.metrics.chrf.chrf_from_totals_array`,
bit-identical to sacrebleu's F-score; :func:`mtboard.score.metrics.composite.composite_array`), and confirm a reversal
with the scorer's own :func:`~mtboard.score.metrics.composite.composite` before reporting it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mtboard.core.errors import MtboardError
from mtboard.core.schema import EntryResult
from mtboard.score.metrics.chrf import CHRF_STATS_LEN, chrf_from_stats, chrf_from_totals_array
from mtboard.score.metrics.composite import COLUMN_UNITS, COMPOSITE_DECIMALS, composite, composite_array, \
    entry_columns

EXACT_MAX_SUBSETS = 2_000_000
"""The most candidate sets :func:`flip_exact` evaluates (all sizes together) before it raises
:class:`FlipSearchLimit`: every subset of ≤ 4 of 30 segments is 31,930; of ≤ 6, 768,211."""
BATCH = 4096
"""Candidate sets evaluated per numpy batch (bounds memory: BATCH × 24 totals per run)."""
_NEAR = 2e-6
"""A vectorised difference this close to 0 is re-checked with the scorer's own composite (numpy's and Python's
rounding to 6 decimals may differ in the last place)."""
_OPTIONAL = ("semantic_score", "hallucination_rate")
"""Columns :func:`~mtboard.score.metrics.composite.entry_columns` gives only when every entry has a value."""


class FlipSearchLimit(MtboardError):
    """:func:`flip_exact` would evaluate more than its ``max_subsets`` candidate sets."""


@dataclass(frozen=True)
class FlipRun:
    """One run of a row over the view's ``n`` segments (view order): its chrF++ statistics ``(n, 24)`` int64, its
    per-entry rate columns (``(n,)`` float64, or ``(2, n)`` hits/terms for terminology; 0 where absent), which
    entries have the optional columns (``avail``) and whether the card has FST acceptance and variants."""

    stats: np.ndarray
    columns: dict[str, np.ndarray]
    avail: dict[str, np.ndarray]
    has_fst: bool
    has_equiv: bool

    @classmethod
    def of_results(cls, results: Sequence[EntryResult], *, has_fst: bool, has_equiv: bool) -> FlipRun:
        """From one run's results over the view's entries (in view order)."""
        stats = np.asarray([list(r.stats.chrf) for r in results], dtype=np.int64).reshape(len(results),
                                                                                             CHRF_STATS_LEN)
        cols = {k: v for k, v in entry_columns(results, has_equiv=has_equiv, has_fst=has_fst).items()
                if k not in _OPTIONAL}
        for ratio in ("terminology_adherence", "morphological_accuracy"):
            if ratio not in cols:
                cols[ratio] = np.zeros((2, len(results)))
        avail = {}
        for name, attr in (("semantic_score", "semantic_score"), ("hallucination_rate", "hallucination_detected")):
            have = np.array([getattr(r, attr) is not None for r in results], dtype=bool)
            avail[name] = have
            if name == "semantic_score":
                cols[name] = np.array([float(round(r.semantic_score * COLUMN_UNITS[name]))
                                       if r.semantic_score is not None else 0.0 for r in results])
            else:
                cols[name] = np.array([1.0 if r.hallucination_detected else 0.0 for r in results])
        return cls(stats, cols, avail, has_fst, has_equiv)

    def take(self, positions: np.ndarray) -> FlipRun:
        """The run over a selection of its segments (positions, in the new order)."""
        return FlipRun(self.stats[positions], {k: v[..., positions] for k, v in self.columns.items()},
                       {k: v[positions] for k, v in self.avail.items()}, self.has_fst, self.has_equiv)


@dataclass(frozen=True)
class FlipRow:
    """A row of the view: its runs (run 0 first; one for a card without replicates)."""

    runs: tuple[FlipRun, ...]

    @classmethod
    def of_card(cls, card, ids: Sequence[int]) -> FlipRow:
        """A run card's row over the view's entry ids (in that order); every run must hold every id (KeyError)."""
        has_fst = card.scores.fst_acceptance_rate is not None
        has_equiv = card.scores.equivalent_match_rate is not None
        runs = [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]
        out = []
        for results in runs:
            by_id = {r.entry_id: r for r in results}
            out.append(FlipRun.of_results([by_id[i] for i in ids], has_fst=has_fst, has_equiv=has_equiv))
        return cls(tuple(out))

    def take(self, positions: Sequence[int]) -> FlipRow:
        """The row over a selection of its segments (positions, in the new order): a domain view of a board."""
        pos = np.asarray(positions, dtype=np.intp)
        return FlipRow(tuple(run.take(pos) for run in self.runs))

    @property
    def n(self) -> int:
        return self.runs[0].stats.shape[0]


@dataclass(frozen=True)
class Flip:
    """A flip distance: ``count`` segments (None: no removal of at most n − 1 segments reverses the order), the
    removed segments' positions in the view's order (``positions``) and, when known, their entry ids
    (``entries``); ``exact``: found by :func:`flip_exact` (else the greedy upper bound)."""

    count: int | None
    positions: tuple[int, ...]
    entries: tuple[int, ...]
    exact: bool


def _values(run: FlipRun, keep: np.ndarray) -> dict[str, float | None]:
    """The composite's inputs of ``run`` over the kept segments (a boolean mask), as the scorer computes them."""
    k = int(keep.sum())
    values: dict[str, float | None] = {"chrf_plus_plus": chrf_from_stats(run.stats[keep])}
    for name, col in run.columns.items():
        if name in run.avail and not bool(run.avail[name][keep].all()):
            continue
        if col.ndim == 2:
            terms = float(col[1][keep].sum())
            if terms > 0:
                values[name] = float(col[0][keep].sum()) / terms
            continue
        mean = float(col[keep].sum()) / k
        values[name] = mean / COLUMN_UNITS.get(name, 1)
    return values


def composite_over(row: FlipRow, keep: np.ndarray) -> float:
    """The row's composite over the segments ``keep`` marks (a boolean ``(n,)`` mask with at least one True), by
    the scorer's :func:`~mtboard.score.metrics.composite.composite` (replicates: the mean of the runs', rounded to 6
    decimals). Raises MtboardError for an empty selection."""
    keep = np.asarray(keep, dtype=bool)
    if not keep.any():
        raise MtboardError("no segment is kept", where="flip", fix="keep at least one segment")
    vals = [composite(_values(run, keep))[0] for run in row.runs]
    return vals[0] if len(vals) == 1 else round(math.fsum(vals) / len(vals), COMPOSITE_DECIMALS)


def reverses(a: FlipRow, b: FlipRow, keep: np.ndarray) -> bool:
    """B's composite over the kept segments is strictly above A's, both rounded to 6 decimals."""
    return composite_over(b, keep) > composite_over(a, keep)


def _batch(row: FlipRow, keep: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """The row's composite over ``keep`` minus each candidate set: ``removed`` is ``(m, k)`` positions (all kept, k ≥ 0)
    → ``(m,)``; numpy's rounding (:func:`composite_array`)."""
    m, k = removed.shape
    left = int(keep.sum()) - k
    out = []
    for run in row.runs:
        base = run.stats[keep].sum(axis=0)
        tot = base[None, :] - (run.stats[removed].sum(axis=1) if k else 0)
        values: dict[str, np.ndarray] = {"chrf_plus_plus": chrf_from_totals_array(np.broadcast_to(tot, (m, 24)))}
        present: dict[str, np.ndarray] = {}
        for name, col in run.columns.items():
            if col.ndim == 2:
                hits = col[0][keep].sum() - (col[0][removed].sum(axis=1) if k else 0.0)
                terms = col[1][keep].sum() - (col[1][removed].sum(axis=1) if k else 0.0)
                terms = np.broadcast_to(np.asarray(terms, dtype=np.float64), (m,))
                present[name] = terms > 0
                values[name] = np.where(terms > 0, np.broadcast_to(hits, (m,)) / np.where(terms > 0, terms, 1.0), 0.0)
                continue
            total = col[keep].sum() - (col[removed].sum(axis=1) if k else 0.0)
            values[name] = np.broadcast_to(np.asarray(total / left, dtype=np.float64), (m,)) / COLUMN_UNITS.get(name, 1)
            if name in run.avail:
                missing = int((~run.avail[name][keep]).sum())
                gone = (~run.avail[name][removed]).sum(axis=1) if k else 0
                present[name] = np.broadcast_to(np.asarray(missing - gone) == 0, (m,))
        comp = np.empty(m)
        names = sorted(present)
        patterns = np.stack([present[x] for x in names], axis=1) if names else np.zeros((m, 0), dtype=bool)
        # one presence pattern for every candidate (the usual case) needs no np.unique
        groups = patterns[:1] if m and bool((patterns == patterns[0]).all()) else np.unique(patterns, axis=0)
        for pat in groups:
            sel = np.all(patterns == pat, axis=1)
            vals = {x: v[sel] for x, v in values.items() if x not in present}
            vals.update({x: values[x][sel] for x, on in zip(names, pat) if on})
            if not run.has_fst:
                vals.pop("fst_acceptance_rate", None)
            comp[sel] = composite_array(vals)
        out.append(comp)
    return out[0] if len(out) == 1 else np.round(np.mean(out, axis=0), COMPOSITE_DECIMALS)


def _check(a: FlipRow, b: FlipRow) -> None:
    if a.n != b.n:
        raise MtboardError(f"rows over {a.n} and {b.n} segments", where="flip",
                           fix="build both rows over the view's entry ids")
    if a.n == 0:
        raise MtboardError("the view has no segment", where="flip", fix="pass a view with segments")


def _confirmed(a: FlipRow, b: FlipRow, keep: np.ndarray, diffs: np.ndarray, removed: np.ndarray) -> int | None:
    """The first candidate (in order) whose removal reverses the order by the scorer's own composite: candidates
    whose vectorised difference is below ``_NEAR`` are checked with :func:`reverses`."""
    for c in np.flatnonzero(diffs < _NEAR):
        mask = keep.copy()
        mask[removed[c]] = False
        if reverses(a, b, mask):
            return int(c)
    return None


def _result(positions, ids: Sequence[int] | None, exact: bool) -> Flip:
    pos = tuple(sorted(int(p) for p in positions))
    return Flip(len(pos), pos, tuple(int(ids[p]) for p in pos) if ids is not None else (), exact)


def flip_exact(a: FlipRow, b: FlipRow, ids: Sequence[int] | None = None, *,
               max_subsets: int = EXACT_MAX_SUBSETS) -> Flip:
    """The flip distance of A (ranked above) and B (see the module docstring) by brute force: every subset of 0, 1,
    2 … segments in :func:`itertools.combinations` order; the first that reverses the order is returned (so ties
    between subsets of the smallest size go to the lexicographically first positions). ``ids``: the view's entry ids
    (same order as the rows' segments), reported as ``Flip.entries``.

    Returns ``Flip(None, …)`` when no subset of at most n − 1 segments reverses. Raises :class:`FlipSearchLimit`
    before evaluating more than ``max_subsets`` candidate sets in all (a larger size is not started), and
    MtboardError for rows over different segment counts or no segment."""
    _check(a, b)
    n = a.n
    keep = np.ones(n, dtype=bool)
    done = 0
    for k in range(n):
        size = math.comb(n, k)
        if done + size > max_subsets:
            raise FlipSearchLimit(f"an exact flip distance above {k - 1} over {n} segments needs {done + size:,} "
                                  f"candidate sets (limit {max_subsets:,})", where="flip_exact",
                                  fix="use flip_greedy (an upper bound) or raise max_subsets")
        combos = itertools.combinations(range(n), k)
        while True:
            chunk = list(itertools.islice(combos, BATCH))
            if not chunk:
                break
            removed = np.asarray(chunk, dtype=np.intp).reshape(len(chunk), k)
            diffs = _batch(a, keep, removed) - _batch(b, keep, removed)
            c = _confirmed(a, b, keep, diffs, removed)
            if c is not None:
                return _result(removed[c], ids, True)
        done += size
    return Flip(None, (), (), True)


def flip_greedy(a: FlipRow, b: FlipRow, ids: Sequence[int] | None = None, *, max_steps: int | None = None) -> Flip:
    """An upper bound on the flip distance of A (ranked above) and B: remove, one at a time, the kept segment whose
    removal leaves the smallest A − B (every candidate evaluated at once; ties: the first in view order),
    recomputing after each removal, until B is strictly above A by the scorer's composite. ``ids``: as
    :func:`flip_exact`. ``max_steps``: stop after this many removals (None: n − 1).

    Returns ``Flip(None, …)`` when the order has not reversed after ``max_steps`` removals (or with one segment
    left). Cost: one numpy evaluation of ≤ n candidates per removal (tests/test_flip.py measures a 2,000-row
    board). Raises MtboardError for rows over different segment counts or no segment."""
    _check(a, b)
    n = a.n
    keep = np.ones(n, dtype=bool)
    if reverses(a, b, keep):
        return _result((), ids, False)
    steps = n - 1 if max_steps is None else min(max_steps, n - 1)
    removed: list[int] = []
    for _ in range(steps):
        cand = np.flatnonzero(keep).reshape(-1, 1)
        diffs = _batch(a, keep, cand) - _batch(b, keep, cand)
        c = _confirmed(a, b, keep, diffs, cand)
        if c is None:
            c = int(np.argmin(diffs))
            keep[cand[c, 0]] = False
            removed.append(int(cand[c, 0]))
            continue
        removed.append(int(cand[c, 0]))
        return _result(removed, ids, False)
    return Flip(None, (), (), False)


__all__ = ["BATCH", "EXACT_MAX_SUBSETS", "Flip", "FlipRow", "FlipRun", "FlipSearchLimit", "composite_over",
           "flip_exact", "flip_greedy", "reverses"]
