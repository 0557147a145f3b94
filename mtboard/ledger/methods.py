"""One row per method on every view of a board, ranked and clustered (design §3.4; issue 12 items 1, 2, 9).

*One row per method*: cards of one board whose fingerprint hash is equal are one experiment (the ledger's row,
:mod:`mtboard.ledger.standing`). The row shows its representative card's values (strongest evidence, then earliest:
the standing's; issue 31) — its scores, CI, replicate spread for ``--runs N``, optional columns and run link — with
the range of the member cards' scores beside them. Ordering, the composite CI and the rank clusters reuse the validity
work (:mod:`mtboard.ledger.tables`, :func:`mtboard.score.stats.rank_clusters`): the representative's resampled
composites on the view's shared resamples, so clusters, CI and ordering come from one bootstrap of one metric
(docs/SCORING_SPEC.md §4.6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtboard.core import fmt
from mtboard.ledger.standing import Standing
from mtboard.ledger.tables import Leaderboard, Row, View, method_name
from mtboard.score import stats


@dataclass
class MethodRow:
    """One method on one view: every card with the same fingerprint hash (design §3.4)."""

    key: str
    """Fingerprint hash."""
    rep: Row
    """Representative card's row (:attr:`mtboard.ledger.standing.Standing.representative`: strongest evidence, then
    earliest)."""
    members: list[Row]
    """Member cards' rows, oldest first."""
    composite: float | None
    composite_sd: float | None
    """The shown card's replicate spread (``--runs N``), on the whole segment."""
    composite_ci: tuple[float, float] | None
    chrf: float | None
    chrf_sd: float | None
    chrf_ci: tuple[float, float] | None
    boot: np.ndarray | None
    reference: bool
    rank: str = fmt.DASH
    rank_lo: int | None = None
    rank_hi: int | None = None
    cluster: int = 0
    cluster_start: bool = False
    position: int = 0
    drank: int | None = None
    """Domain views: overall position − domain position (positive: better in this domain)."""
    composite_range: tuple[float, float] | None = None
    """(lowest, highest) composite over the member cards, when there are two or more."""
    chrf_range: tuple[float, float] | None = None
    values: dict[str, Any] = field(default_factory=dict)
    """Column key → the cell as the board shows it (:func:`mtboard.site.boards.fill_values`)."""
    floors: list[Any] = field(default_factory=list)
    """Floor sentinels whose cluster this ranked row is inside (:class:`mtboard.ledger.sentinels.FloorMark`,
    copy-source first; issue 38), set by :func:`mtboard.ledger.sentinels.attach`."""
    flip: Any = None
    """The flip distance to the next ranked row of the view (:class:`mtboard.ledger.flip.RowFlip`, issue 38 item 4);
    None for the last ranked row and reference baselines."""
    gold: tuple[str, str] | None = None
    """(official page#row, text) when the method's card has a row on the official board (issue 17): the cell links
    to it and shows the dev–gold gap."""

    @property
    def standing(self) -> Standing:
        """The row's standing (the same object on every view and every member card)."""
        return self.rep.lc.standing


# --------------------------------------------------------------------------------------------------------------------
# Grouping and clustering


def group_methods(view: View) -> list[MethodRow]:
    """One :class:`MethodRow` per fingerprint hash of ``view.rows``, ordered and rank-clustered on the composite.

    Member cards' per-card rows receive their method's rank label (run pages and portraits show the method's
    rank). Reference baselines are listed after the ranked methods, unranked.
    """
    groups: dict[str, list[Row]] = {}
    for row in view.rows:
        groups.setdefault(row.lc.card.fingerprint.hash, []).append(row)
    methods: list[MethodRow] = []
    for key, rows in groups.items():
        order = rows[0].lc.standing.members
        rows = sorted(rows, key=lambda r: order.index(r.lc.path))
        rep = next(r for r in rows if r.lc.path == r.lc.standing.representative)
        # the row's values are its shown card's (issue 31), the members' range beside them
        comp_sd = chrf_sd = None
        repl = rep.lc.card.scores.replicates
        if view.domain is None and repl is not None:
            comp_sd, chrf_sd = repl.composite_stdev, repl.chrf_stdev
        m = MethodRow(key, rep, rows, rep.composite, comp_sd, rep.composite_ci, rep.chrf, chrf_sd, rep.chrf_ci,
                      rep.boot, rep.reference)
        comps = [r.composite for r in rows if r.composite is not None]
        chrfs = [r.chrf for r in rows if r.chrf is not None]
        if len(rows) > 1 and len(comps) == len(rows):
            m.composite_range = (min(comps), max(comps))
        if len(rows) > 1 and len(chrfs) == len(rows):
            m.chrf_range = (min(chrfs), max(chrfs))
        methods.append(m)
    methods.sort(key=lambda m: (m.reference, m.composite is None, -(m.composite or 0.0), -(m.chrf or 0.0),
                                method_name(m.rep.lc.card).lower(), m.key))
    real = [m for m in methods if not m.reference]
    if real and all(m.boot is not None for m in real):
        clusters = stats.rank_clusters([stats.RankRow(m.key, m.composite or 0.0, m.boot) for m in real])
        prev = None
        band = -1
        for pos, (m, label, rng) in enumerate(zip(real, clusters.labels, clusters.ranges), start=1):
            m.position, m.rank, (m.rank_lo, m.rank_hi) = pos, label, rng
            if rng != prev:
                band += 1
                m.cluster_start = pos > 1
            m.cluster, prev = band, rng
    for m in methods:
        if m.reference:
            m.rank = "ref."
        for r in m.members:
            r.rank = m.rank
            r.position = m.position
    return methods


def attach_methods(boards: list[Leaderboard]) -> None:
    """Fill ``view.methods`` for every view of every board, with Δrank on domain views."""
    for lb in boards:
        overall: dict[str, int] = {}
        for i, view in enumerate(lb.views):
            view.methods = group_methods(view)
            if i == 0:
                overall = {m.key: m.position for m in view.methods if m.position}
            for m in view.methods:
                if i and m.position and m.key in overall:
                    m.drank = overall[m.key] - m.position


__all__ = ["MethodRow", "attach_methods", "group_methods"]
