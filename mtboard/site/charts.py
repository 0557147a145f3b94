"""Inline SVG charts generated in Python (no JavaScript library, no CDN: the site works offline and on GitHub Pages).

Every string placed in the SVG goes through :func:`mtboard.site.fmt.html_text`; numbers are formatted with fixed
decimals so the output is byte-identical for the same input.
"""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from mtboard.site.fmt import html_text


def _f(x: float) -> str:
    return f"{x:.1f}"


def domain_bars(bars: list[tuple[str, float, float]], title: str) -> Markup:
    """Horizontal bars: per domain the run's chrF++ (0–100) with a tick at the field median.

    ``bars``: (domain, value, field median). Returns an ``<svg>`` element (role=img, with a <title>).
    """
    row_h, left, width = 22, 110, 420
    height = 30 + row_h * len(bars) + 24
    out = [f'<svg class="mtb-chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" '
           f'height="{height}" viewBox="0 0 {left + width + 70} {height}">',
           f"<title>{html_text(title)}</title>"]
    for tick in (0, 25, 50, 75, 100):
        x = left + width * tick / 100
        out.append(f'<line x1="{_f(x)}" y1="24" x2="{_f(x)}" y2="{height - 20}" class="grid"/>')
        out.append(f'<text x="{_f(x)}" y="{height - 6}" text-anchor="middle" class="axis">{tick}</text>')
    out.append(f'<text x="{left}" y="14" class="axis">chrF++ per domain (bar) and field median (tick)</text>')
    for i, (domain, value, med) in enumerate(bars):
        y = 30 + i * row_h
        w = width * max(0.0, min(100.0, value)) / 100
        mx = left + width * max(0.0, min(100.0, med)) / 100
        worse = value < med
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" class="label">{html_text(domain)}</text>')
        out.append(f'<rect x="{left}" y="{y + 3}" width="{_f(w)}" height="{row_h - 8}" '
                   f'class="{"bar worse" if worse else "bar"}"><title>{html_text(domain)}: {value:.1f} '
                   f'(field median {med:.1f})</title></rect>')
        out.append(f'<line x1="{_f(mx)}" y1="{y}" x2="{_f(mx)}" y2="{y + row_h - 2}" class="median"/>')
        out.append(f'<text x="{_f(left + w + 4)}" y="{y + 14}" class="value">{value:.1f}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def pareto_front(points: list[dict[str, Any]], x: str = "cost", y: str = "composite") -> list[dict[str, Any]]:
    """Points not dominated by another (lower-or-equal cost and higher-or-equal score, one strictly). Ordered by cost.

    Points whose x or y is None are ignored.
    """
    pts = [p for p in points if p.get(x) is not None and p.get(y) is not None]
    pts.sort(key=lambda p: (p[x], -p[y], p.get("position", 0)))
    front: list[dict[str, Any]] = []
    best = -math.inf
    for p in pts:
        if p[y] > best:
            front.append(p)
            best = p[y]
    return front


def cost_quality(points: list[dict[str, Any]], title: str) -> Markup | None:
    """Scatter of composite (y, 0–1) against cost per entry (x, USD), Pareto frontier drawn as a step line.

    The x axis is logarithmic when every plotted cost is positive and they span more than 20×; otherwise linear
    from 0. Points are labelled with their leaderboard position. Returns None when no point has a cost.
    """
    pts = [p for p in points if p.get("cost") is not None and p.get("composite") is not None]
    if not pts:
        return None
    W, H, L, R, T, B = 640, 360, 60, 20, 20, 50
    costs = [p["cost"] for p in pts]
    lo, hi = min(costs), max(costs)
    log = lo > 0 and hi / lo > 20
    if log:
        a, b = math.log10(lo) - 0.1, math.log10(hi) + 0.1

        def sx(c: float) -> float:
            return L + (W - L - R) * (math.log10(c) - a) / (b - a)
        ticks = [10 ** e for e in range(math.floor(a), math.ceil(b) + 1) if a <= e <= b]
    else:
        top = hi * 1.1 if hi > 0 else 1.0

        def sx(c: float) -> float:
            return L + (W - L - R) * c / top
        ticks = [top * i / 4 for i in range(5)]

    def sy(v: float) -> float:
        return T + (H - T - B) * (1 - max(0.0, min(1.0, v)))

    out = [f'<svg class="mtb-chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}">', f"<title>{html_text(title)}</title>"]
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{L}" y1="{_f(sy(v))}" x2="{W - R}" y2="{_f(sy(v))}" class="grid"/>')
        out.append(f'<text x="{L - 6}" y="{_f(sy(v) + 4)}" text-anchor="end" class="axis">{v:.2f}</text>')
    for t in ticks:
        out.append(f'<text x="{_f(sx(t))}" y="{H - B + 16}" text-anchor="middle" class="axis">${t:.2g}</text>')
    out.append(f'<text x="{(W + L) / 2:.1f}" y="{H - 8}" text-anchor="middle" class="axis">cost per entry (USD'
               f'{", log scale" if log else ""})</text>')
    out.append(f'<text x="14" y="{(H - B + T) / 2:.1f}" transform="rotate(-90 14 {(H - B + T) / 2:.1f})" '
               f'text-anchor="middle" class="axis">composite</text>')
    front = pareto_front(pts)
    if len(front) > 1:
        path = []
        for i, p in enumerate(front):
            x, y = sx(p["cost"]), sy(p["composite"])
            if i:
                path.append(f"L{_f(x)},{_f(sy(front[i - 1]['composite']))}")
            path.append(f"{'M' if not i else 'L'}{_f(x)},{_f(y)}")
        out.append(f'<path d="{" ".join(path)}" class="pareto"/>')
    on_front = {id(p) for p in front}
    for p in sorted(pts, key=lambda p: p["position"]):
        x, y = sx(p["cost"]), sy(p["composite"])
        cls = "pt front" if id(p) in on_front else "pt"
        tip = f"#{p['position']} {p['label']} ({p['model']}): composite {p['composite']:.3f}, ${p['cost']:.6g}/entry"
        out.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5" class="{cls}"><title>{html_text(tip)}</title></circle>')
        out.append(f'<text x="{_f(x + 7)}" y="{_f(y - 6)}" class="value">{p["position"]}</text>')
    out.append("</svg>")
    return Markup("".join(out))
