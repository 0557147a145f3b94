"""Every method's output on each hard item (issue 12; design note "Hard items": each item expands to every method's
output, outcome and sentence chrF++). Real systems ranked on the board only, in board order; reference baselines are
left out as in every item statistic (:mod:`mtboard.ledger.tables`)."""

from __future__ import annotations

from typing import Any

from mtboard.ledger.summary import summary
from mtboard.ledger.tables import Leaderboard, method_name, run_page

ITEM_OUTPUTS = 12
"""Outputs a hard item shows (the board's best-ranked real methods): the hard-items page stays bounded as the board
grows (≤ 12 rows per item whatever the number of runs); every run's output is on its run page and in its data file
(issue 35 item 1)."""


def item_outputs(lb: Leaderboard, limit: int = ITEM_OUTPUTS) -> dict[int, list[dict[str, Any]]]:
    """entry id → one row per real ranked method, the first ``limit`` in board order: label, run page, output,
    outcome, failed, sentence chrF++ (failures 0), for the board's hard items (:func:`item_methods` counts them all)."""
    wanted = {x["id"] for x in lb.hard_items}
    out: dict[int, list[dict[str, Any]]] = {eid: [] for eid in sorted(wanted)}
    for row in lb.views[0].rows if lb.views else []:
        if row.reference:
            continue
        s = summary(row.lc)
        for k, eid in enumerate(s.ids):
            if eid in wanted and len(out[eid]) < limit:
                out[eid].append({"label": method_name(row.lc.card), "href": run_page(row.lc),
                                 "rank": row.rank, "output": s.outputs[k], "outcome": s.outcomes[k],
                                 "failed": s.failed[k], "chrf": s.chrf[k], "page_id": row.lc.page_id})
    return out


def item_methods(lb: Leaderboard) -> int:
    """Real ranked rows of the board's main view: how many outputs each hard item has in all."""
    return sum(1 for row in lb.views[0].rows if not row.reference) if lb.views else 0
