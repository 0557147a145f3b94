"""The failure portrait's fold (issue 12 item 5; design note "Model portrait"): one line per run with its main
failure modes and their rates beside the field median, and the runs grouped by prompt and condition.

A *failure mode* is a mechanical outcome other than ``usable`` (``no_usable_output``, ``source_untranslated``) or a
mechanical flag (``flag:<rule>``, e.g. an output with commentary), counted over the run's development entries; its
rate is the share of those entries. The field median of a mode is the median of that rate over the *real systems*
ranked on the same board (method class ``baseline`` excluded: echo and empty fail every entry by design).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from mtboard.site.load import LoadedCard
from mtboard.site.tables import Leaderboard, is_reference, method_name, run_page

TOP_MODES = 3


def modes(lc: LoadedCard) -> tuple[Counter[str], int]:
    """Failure-mode counts over the development entries, and the number of those entries."""
    dev = [r for r in lc.card.results if r.segment == "development"]
    out: Counter[str] = Counter()
    for r in dev:
        if r.checks.outcome.value != "usable":
            out[r.checks.outcome.value] += 1
        for rule in sorted({f.rule for f in r.checks.flags}):
            out[f"flag:{rule}"] += 1
    return out, len(dev)


def _field(lb: Leaderboard) -> tuple[list[dict[str, float]], int]:
    """Per real ranked system of the board: mode → rate."""
    rates = []
    for row in lb.views[0].rows if lb.views else []:
        if row.reference:
            continue
        counts, n = modes(row.lc)
        rates.append({k: v / n for k, v in counts.items()} if n else {})
    return rates, len(rates)


def summaries(boards: list[Leaderboard]) -> dict[str, list[dict[str, Any]]]:
    """model slug → one summary line per run (board order, then row order): run label, link, board, rank range,
    composite ±CI, and the top :data:`TOP_MODES` failure modes as ``(mode, rate, field median, count)``."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for lb in boards:
        field, n_field = _field(lb)
        rows = {r.lc.page_id: r for r in lb.views[0].rows} if lb.views else {}
        for lc in lb.cards:
            counts, n = modes(lc)
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_MODES]
            row = rows.get(lc.page_id)
            out[lc.card.model_slug].append({
                "label": method_name(lc.card), "href": run_page(lc), "board": lb.title, "board_page": lb.page,
                "pair": lb.language_pair, "rank": row.rank if row else "unranked",
                "composite": row.cells["composite"].text if row else f"{lc.card.scores.composite:.3f}",
                "ci": row.cells["composite_ci"].text if row else "",
                "prompt": lc.card.method.prompt_name or "no prompt", "condition": lc.card.condition,
                "baseline": is_reference(lc.card), "n": n, "n_field": n_field,
                "modes": [(k, v / n if n else 0.0,
                           statistics.median([f.get(k, 0.0) for f in field]) if field else None, v)
                          for k, v in top]})
    return out


def groups(lines: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The summary lines grouped by prompt · condition (sorted)."""
    g: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        g[f"{line['prompt']} · {line['condition']}"].append(line)
    return sorted(g.items())
