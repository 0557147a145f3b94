"""The sweep summary as text (``mtboard sweep run``): one line per cell — status, tokens used against the plan's
estimate, cost — and the totals (cells, cards, failures, actual vs estimated tokens and cost, wall time)."""

from __future__ import annotations

from typing import Any


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def summary_text(record: dict[str, Any]) -> str:
    """Render :func:`mtboard.sweeps.execute.summary_record`'s dict."""
    lines = [f"{'cell':12}  {'dataset':14} {'method':16} {'condition':22} {'temp':>4} {'status':7} {'time s':>7} "
             f"{'tokens used':>11} {'estimated':>9} {'ratio':>6} {'cost':>9}"]
    for r in record["rows"]:
        temp = "-" if r["temperature"] is None else f"{r['temperature']:g}"
        ratio = "-" if r["tokens_ratio"] is None else f"{r['tokens_ratio']:.2f}"
        lines.append(f"{r['cell']:12}  {r['dataset']:14} {r['method'][:16]:16} {r['condition'][:22]:22} {temp:>4} "
                     f"{r['status']:7} {r['elapsed_s']:>7.1f} {r['tokens_used']:>11,} "
                     f"{(r['tokens_estimated'] or 0):>9,} {ratio:>6} {_usd(r['cost_usd']):>9}")
        if r["error"]:
            lines.append(f"{'':14}error: {r['error']}")
    ratio = "-" if record["tokens_ratio"] is None else f"{record['tokens_ratio']:.2f}"
    lines.append(f"sweep       {record['sweep']}: {record['cells']} cell(s), {record['cards']} card(s), "
                 f"{record['failed']} failed; {record['elapsed_s']:.0f} s")
    lines.append(f"tokens      used {record['tokens_used']:,}, estimated {record['tokens_estimated']:,} (ratio {ratio})")
    lines.append(f"cost        actual {_usd(record['cost_usd'])}, estimated {_usd(record['cost_estimated_usd'])}")
    return "\n".join(lines)


__all__ = ["summary_text"]
