"""Inline SVG charts generated in Python (no JavaScript library, no CDN: the site works offline and on GitHub Pages).

Every string placed in the SVG goes through :func:`mtboard.core.fmt.html_text`; numbers are formatted with fixed
decimals so the output is byte-identical for the same input.
"""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from mtboard.core.fmt import html_text


def _f(x: float) -> str:
    return f"{x:.1f}"


_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_ticks(lo: float, hi: float, target: int = 5,
               widen: bool = False) -> tuple[float, float, list[str], list[float]]:
    """Ticks a reader can read (issue 36 item 5: no "0.928 / 1.86 / 2.78"): multiples of a step of 1, 2, 2.5 or 5
    times a power of ten, the one whose tick count over ``[lo, hi]`` is nearest ``target`` (Heckbert's "nice
    numbers", Graphics Gems, 1990). ``widen``: the axis grows to whole steps around ``[lo, hi]``; else it stays
    ``[lo, hi]`` and only the ticks inside it are drawn. Returns ``(a, b, labels, ticks)``: the axis span, each tick's
    text (the step's decimals: "0.25", "0.30"; 0 as "0") and value. ``lo`` > ``hi`` are swapped; an empty span
    becomes one step around it."""
    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo <= 0:
        pad = abs(hi) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(1, target - 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    mult = min(_NICE, key=lambda m: abs(math.log(m * mag / raw)))
    step = mult * mag
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    if widen:
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        lo, hi = first * step, last * step
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if mult == 2.5 else 0))
    ticks = [round(k * step, decimals + 6) for k in range(first, last + 1)]
    labels = ["0" if t == 0 else f"{t:.{decimals}f}" for t in ticks]
    return round(lo, decimals + 6), round(hi, decimals + 6), labels, ticks


def _log_tick(t: float, dollars: bool) -> str:
    """A power-of-ten tick as a decimal ("0.001", "10"), or "10⁻⁵" below 0.001 (never "1e-05")."""
    if t >= 0.001:
        text = f"{t:.{max(0, -round(math.log10(t)))}f}"
    else:
        text = "10" + str(round(math.log10(t))).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return ("$" if dollars else "") + text


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


# --------------------------------------------------------------------------------------------------------------------
# Board charts (issue 12 item 6; design §3.6): CI forest, quality vs cost or speed with a numbered legend, heatmap.


def _svg_open(w: int, h: int, title: str, desc: str) -> list[str]:
    # role "group" (not "img"): the points are links, and an image may not hold interactive content (axe)
    return [f'<svg class="mtb-chart mtb-wide" role="group" aria-label="{html_text(title)}" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" style="max-width:{w}px">',
            f"<title>{html_text(title)}</title><desc>{html_text(desc)}</desc>"]


def ci_forest(rows: list[dict[str, Any]], title: str) -> Markup | None:
    """Composite with its 95% CI per method (one line each, best first), alternate rank clusters banded.

    ``rows``: dicts with ``n`` (position), ``label``, ``value``, ``lo``, ``hi``, ``cluster`` (int), ``rank`` (label),
    ``href``. Returns None when no row has an interval. The x axis spans the intervals (0–1 clipped) with 5 ticks.
    """
    pts = [r for r in rows if r.get("value") is not None and r.get("lo") is not None]
    if not pts:
        return None
    row_h, left, width, top = 22, 330, 400, 26
    h = top + row_h * len(pts) + 28
    w = left + width + 20
    lo = min(r["lo"] for r in pts)
    hi = max(r["hi"] for r in pts)
    pad = max((hi - lo) * 0.08, 0.005)
    a, b, labels, ticks = nice_ticks(max(0.0, lo - pad), min(1.0, hi + pad))

    def sx(v: float) -> float:
        return left + width * (v - a) / (b - a)

    out = _svg_open(w, h, title, "Composite score and 95% confidence interval of each method, best first; rows "
                    "in one shaded band share a rank range.")
    for i, r in enumerate(pts):
        if r["cluster"] % 2:
            out.append(f'<rect x="0" y="{top + i * row_h}" width="{w}" height="{row_h}" class="band"/>')
    for t, text in zip(ticks, labels):
        out.append(f'<line x1="{_f(sx(t))}" y1="{top - 4}" x2="{_f(sx(t))}" y2="{h - 22}" class="grid"/>')
        out.append(f'<text x="{_f(sx(t))}" y="{h - 8}" text-anchor="middle" class="axis">{text}</text>')
    out.append(f'<text x="{left}" y="14" class="axis">composite (dot) and 95% CI (line)</text>')
    for i, r in enumerate(pts):
        y = top + i * row_h + row_h / 2
        label = f"{r['rank']}. {r['label']}"
        label = label if len(label) <= 52 else label[:51] + "\u2026"
        tip = f"{r['rank']} {r['label']}: {r['value']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]"
        out.append(f'<a href="{html_text(r["href"])}"><text x="{left - 8}" y="{_f(y + 4)}" text-anchor="end" '
                   f'class="label">{html_text(label)}</text>'
                   f'<line x1="{_f(sx(r["lo"]))}" y1="{_f(y)}" x2="{_f(sx(r["hi"]))}" y2="{_f(y)}" class="whisker"/>'
                   f'<circle cx="{_f(sx(r["value"]))}" cy="{_f(y)}" r="4" class="pt front">'
                   f"<title>{html_text(tip)}</title></circle></a>")
    out.append("</svg>")
    return Markup("".join(out))


def quality_vs(points: list[dict[str, Any]], title: str) -> tuple[Markup | None, str]:
    """Composite (y) against declared cost per segment, or against median latency when fewer than three points
    have distinct positive costs (design §3.6). Points are numbered; the caller prints the numbered legend, so
    labels never overlap. Log x when the plotted values span more than a decade.

    ``points``: dicts with ``n``, ``label``, ``composite``, ``cost``, ``latency``, ``href``. Returns (svg or None,
    x key used: "cost" | "latency" | "").
    """
    costs = {p["cost"] for p in points if p.get("cost") is not None and p["cost"] > 0 and p.get("composite") is not None}
    key = "cost" if len(costs) >= 3 else "latency"
    pts = [p for p in points if p.get(key) is not None and p[key] > 0 and p.get("composite") is not None]
    if not pts:
        return None, ""
    W, H, L, R, T, B = 640, 320, 60, 20, 20, 50
    xs = [p[key] for p in pts]
    lo, hi = min(xs), max(xs)
    log = hi / lo > 10
    if log:
        a, b = math.log10(lo) - 0.15, math.log10(hi) + 0.15

        def sx(c: float) -> float:
            return L + (W - L - R) * (math.log10(c) - a) / (b - a)
        ticks = [10.0 ** e for e in range(math.ceil(a), math.floor(b) + 1)] or [lo, hi]
        xlabels = [_log_tick(t, key == "cost") for t in ticks]
    else:
        _, top, xlabels, ticks = nice_ticks(0.0, hi * 1.05, widen=True)
        xlabels = [("$" if key == "cost" else "") + t for t in xlabels]

        def sx(c: float) -> float:
            return L + (W - L - R) * c / top
    ys = [p["composite"] for p in pts]
    ya, yb, ylabels, yticks = nice_ticks(max(0.0, min(ys) - 0.05), min(1.0, max(ys) + 0.05))

    def sy(v: float) -> float:
        return T + (H - T - B) * (1 - (v - ya) / (yb - ya if yb > ya else 1))

    batch = key == "latency" and any(p.get("batch") for p in pts)
    xlabel = ("declared cost per segment (USD" if key == "cost" else
              "declared seconds per segment (median latency; batch engines ◇: 1 ÷ throughput" if batch else
              "declared median latency per segment (s")
    out = _svg_open(W, H, title, f"Composite against {xlabel.split(' (')[0]}; points are numbered as in the legend "
                                 "below the chart; filled points lie on the Pareto frontier.")
    for v, text in zip(yticks, ylabels):
        out.append(f'<line x1="{L}" y1="{_f(sy(v))}" x2="{W - R}" y2="{_f(sy(v))}" class="grid"/>')
        out.append(f'<text x="{L - 6}" y="{_f(sy(v) + 4)}" text-anchor="end" class="axis">{text}</text>')
    for t, text in zip(ticks, xlabels):
        out.append(f'<text x="{_f(sx(t))}" y="{H - B + 16}" text-anchor="middle" class="axis">{text}</text>')
    out.append(f'<text x="{(W + L) / 2:.1f}" y="{H - 8}" text-anchor="middle" class="axis">{xlabel}'
               f'{", log scale" if log else ""})</text>')
    out.append(f'<text x="14" y="{(H - B + T) / 2:.1f}" transform="rotate(-90 14 {(H - B + T) / 2:.1f})" '
               f'text-anchor="middle" class="axis">composite</text>')
    for p in pts:
        p.setdefault("position", p["n"])
    front = pareto_front(pts, x=key)
    on_front = {id(p) for p in front}
    for p in sorted(pts, key=lambda p: p["n"]):
        x, y = sx(p[key]), sy(p["composite"])
        cls = "pt front" if id(p) in on_front else "pt"
        tip = f"{p['n']}. {p['label']}: composite {p['composite']:.3f}, {key} {p[key]:.4g}"
        mark = (f'<rect x="{_f(x - 5)}" y="{_f(y - 5)}" width="10" height="10" transform="rotate(45 {_f(x)} {_f(y)})" '
                f'class="{cls}">' if p.get("batch") else f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5" class="{cls}">')
        end = "</rect>" if p.get("batch") else "</circle>"
        out.append(f'<a href="{html_text(p["href"])}">{mark}<title>{html_text(tip)}</title>{end}'
                   f'<text x="{_f(x + 7)}" y="{_f(y - 6)}" class="value">{p["n"]}</text></a>')
    out.append("</svg>")
    return Markup("".join(out)), key


def heatmap(methods: list[str], domains: list[str], values: dict[tuple[int, int], float | None],
            title: str) -> Markup | None:
    """Methods (rows) × domains (columns) of a score on 0–1; every cell carries its number (never colour alone).

    ``values[(i, j)]``: method i's composite on domain j (None: missing, drawn empty). Shade steps are CSS
    classes ``h0``–``h4`` (quintiles of 0–1) so both colour schemes restyle them.
    """
    if not methods or not domains:
        return None
    cw, rh, left, top = 74, 24, 330, 40
    W, H = left + cw * len(domains) + 10, top + rh * len(methods) + 10
    out = _svg_open(W, H, title, "Composite per method (rows) and domain (columns); each cell shows its value.")
    for j, d in enumerate(domains):
        out.append(f'<text x="{_f(left + cw * j + cw / 2)}" y="{top - 10}" text-anchor="middle" class="axis">'
                   f"{html_text(d)}</text>")
    for i, m in enumerate(methods):
        y = top + rh * i
        label = m if len(m) <= 52 else m[:51] + "\u2026"
        out.append(f'<text x="{left - 8}" y="{y + 16}" text-anchor="end" class="label">{html_text(label)}</text>')
        for j, d in enumerate(domains):
            v = values.get((i, j))
            x = left + cw * j
            if v is None:
                out.append(f'<text x="{_f(x + cw / 2)}" y="{y + 16}" text-anchor="middle" class="axis">\u2014</text>')
                continue
            step = min(4, max(0, int(v * 5)))
            out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{rh - 2}" class="heat h{step}">'
                       f"<title>{html_text(m)} · {html_text(d)}: {v:.3f}</title></rect>"
                       f'<text x="{_f(x + cw / 2)}" y="{y + 16}" text-anchor="middle" class="hv h{step}">{v:.3f}'
                       "</text>")
    out.append("</svg>")
    return Markup("".join(out))


# --------------------------------------------------------------------------------------------------------------------
# Drift canaries (issue 38 item 3)


def canary_history(points: list[tuple[str, float, bool]], card: float, ci: tuple[float, float] | None,
                   title: str) -> Markup:
    """A small chart of a model's canary runs: each run's composite (0–1) as a dot in date order (``points``:
    ``(date, composite, outside)``; a run outside the card's CI is drawn as a filled square), over the card's
    composite on the same entries (dashed line) and its 95% CI (shaded band). The y axis spans every value and the
    CI with 5 ticks."""
    w, h, left, top, bottom = 320, 120, 44, 10, 22
    values = [v for _, v, _ in points] + [card] + (list(ci) if ci else [])
    lo, hi = min(values), max(values)
    pad = max((hi - lo) * 0.1, 0.01)
    a, b, labels, ticks = nice_ticks(max(0.0, lo - pad), min(1.0, hi + pad))
    span = (b - a) or 1.0

    def sy(v: float) -> float:
        return top + (h - top - bottom) * (1 - (v - a) / span)

    step = (w - left - 16) / max(1, len(points) - 1) if len(points) > 1 else 0.0

    def sx(i: int) -> float:
        return left + 8 + i * step if len(points) > 1 else (left + w) / 2

    out = [f'<svg class="mtb-chart" role="img" aria-label="{html_text(title)}" xmlns="http://www.w3.org/2000/svg" '
           f'viewBox="0 0 {w} {h}" style="max-width:{w}px">',
           f"<title>{html_text(title)}</title><desc>Composite of each canary run in date order (dots; squares lie "
           "outside the card's 95% CI), the card's composite on the same entries (dashed) and its CI (band)."
           "</desc>"]
    for t, text in zip(ticks, labels):
        out.append(f'<line x1="{left}" y1="{_f(sy(t))}" x2="{w - 4}" y2="{_f(sy(t))}" class="grid"/>')
        out.append(f'<text x="{left - 4}" y="{_f(sy(t) + 3)}" text-anchor="end" class="axis">{text}</text>')
    if ci:
        out.append(f'<rect x="{left}" y="{_f(sy(ci[1]))}" width="{w - 4 - left}" '
                   f'height="{_f(max(0.5, sy(ci[0]) - sy(ci[1])))}" class="band"/>')
    out.append(f'<line x1="{left}" y1="{_f(sy(card))}" x2="{w - 4}" y2="{_f(sy(card))}" class="whisker" '
               'stroke-dasharray="4 3"/>')
    for i, (date, v, outside) in enumerate(points):
        tip = html_text(f"{date[:10]}: {v:.3f}" + (" (outside the card's CI)" if outside else ""))
        x, y = sx(i), sy(v)
        shape = (f'<rect x="{_f(x - 4)}" y="{_f(y - 4)}" width="8" height="8" class="pt front">' if outside
                 else f'<circle cx="{_f(x)}" cy="{_f(y)}" r="4" class="pt">')
        out.append(f"{shape}<title>{tip}</title></{'rect' if outside else 'circle'}>")
    if points:
        out.append(f'<text x="{left}" y="{h - 6}" class="axis">{html_text(points[0][0][:10])}</text>')
        if len(points) > 1:
            out.append(f'<text x="{w - 4}" y="{h - 6}" text-anchor="end" class="axis">'
                       f'{html_text(points[-1][0][:10])}</text>')
    out.append("</svg>")
    return Markup("".join(out))


# --------------------------------------------------------------------------------------------------------------------
# History sweeps (issue 40 item 2)


def history_curves(series: list[dict[str, Any]], key: str, ylabel: str, title: str, *,
                   gate: float | None = None) -> Markup | None:
    """A value (``key`` of each point: chrF++, composite or seconds) against history length, one line per model.

    ``series``: dicts with ``n`` (the legend number the caller prints under the chart), ``label`` and ``points``
    (dicts with ``history`` (lines) and ``key``; None values are left out). The x axis places the history lengths
    present at equal steps (0, 3, 6, 12, 24 read as positions, labelled with their values), so short lengths do not
    crowd; each line's points carry the model's number. ``gate``: a dashed horizontal line at that value (the latency
    gate). Returns None when no point has a value."""
    pts = [(s, p) for s in series for p in s["points"] if p.get(key) is not None]
    if not pts:
        return None
    xs = sorted({p["history"] for _, p in pts})
    W, H, L, R, T, B = 640, 300, 60, 20, 20, 50
    values = [p[key] for _, p in pts] + ([gate] if gate is not None else [])
    lo, hi = min(values), max(values)
    ya, yb, ylabels, yticks = nice_ticks(min(0.0, lo), hi * 1.08 if hi > 0 else 1.0, widen=True)

    def sx(h: int) -> float:
        i = xs.index(h)
        return L + 20 + (W - L - R - 40) * (i / (len(xs) - 1) if len(xs) > 1 else 0.5)

    def sy(v: float) -> float:
        return T + (H - T - B) * (1 - (v - ya) / (yb - ya if yb > ya else 1))

    out = _svg_open(W, H, title, f"{ylabel} against the number of history lines sent with each line; one numbered "
                                 "line per model, as in the legend below the chart"
                                 + ("; the dashed line is the gate" if gate is not None else "") + ".")
    for v, text in zip(yticks, ylabels):
        out.append(f'<line x1="{L}" y1="{_f(sy(v))}" x2="{W - R}" y2="{_f(sy(v))}" class="grid"/>')
        out.append(f'<text x="{L - 6}" y="{_f(sy(v) + 4)}" text-anchor="end" class="axis">{text}</text>')
    for h in xs:
        out.append(f'<text x="{_f(sx(h))}" y="{H - B + 16}" text-anchor="middle" class="axis">{h}</text>')
    out.append(f'<text x="{(W + L) / 2:.1f}" y="{H - 8}" text-anchor="middle" class="axis">lines of history</text>')
    out.append(f'<text x="14" y="{(H - B + T) / 2:.1f}" transform="rotate(-90 14 {(H - B + T) / 2:.1f})" '
               f'text-anchor="middle" class="axis">{html_text(ylabel)}</text>')
    if gate is not None:
        out.append(f'<line x1="{L}" y1="{_f(sy(gate))}" x2="{W - R}" y2="{_f(sy(gate))}" class="whisker" '
                   'stroke-dasharray="4 3"/>')
    for s in series:
        mine = sorted((p for p in s["points"] if p.get(key) is not None), key=lambda p: p["history"])
        if len(mine) > 1:
            coords = " ".join(f"{_f(sx(p['history']))},{_f(sy(p[key]))}" for p in mine)
            out.append(f'<polyline points="{coords}" fill="none" class="whisker"/>')
        for p in mine:
            x, y = sx(p["history"]), sy(p[key])
            tip = f"{s['n']}. {s['label']}: {p['history']} lines, {ylabel} {p[key]:.4g}"
            out.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="4" class="pt front"><title>{html_text(tip)}</title>'
                       f'</circle><text x="{_f(x + 6)}" y="{_f(y - 6)}" class="value">{s["n"]}</text>')
    out.append("</svg>")
    return Markup("".join(out))
