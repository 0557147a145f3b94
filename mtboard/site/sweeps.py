"""Sweep pages (issue 16; spec §6.1: "a benchmark is the whole matrix"): one page per sweep file under ``sweeps/``
next to ``submissions/``, at ``sweeps/<name>.md``.

A card belongs to a sweep cell when it is the run the cell planned (:func:`mtboard.sweeps.collect.mismatch`: dataset,
method, condition, temperature, entries, replicates, plus the corpus and prompt template hashes of the cell's planned
components); when several cards are one cell's run, the latest is shown. The page holds:

* the grid per dataset (design §2 "Sweep"): rows = method, columns = the conditions present (prompt/condition ×
  temperature); a cell is chrF++ with its 95 % bootstrap interval, shaded on the grid's range, linked to its run page; the best
  cell of a row outlined; a footer with the runs and Σ declared cost;
* a heatmap per pair of factors that vary (prompt × temperature, method × dataset, …): the mean chrF++ over the cards
  at each combination (the other factors averaged, never two methods: :func:`heatmaps`), as a coloured HTML table
  (screen-readable, design §3.6), shaded on the table's own range with a legend;
* a note when the cells are ``limit`` subsets of their segments (:func:`subset_note`);
* each factor's effect with a CI: for a factor with levels a, b, …, the effect of level b is the mean over every pair
  of cards that differ only in that factor (same dataset, same entries) of chrF++(b) − chrF++(a), with a 95 %
  percentile interval from a paired bootstrap over segments — each dataset's segments resampled once
  (:func:`mtboard.score.metrics.bootstrap.resample_counts`, seed :func:`mtboard.score.stats.view_seed`) and every card's chrF++
  recomputed from its stored per-segment statistics on the same resamples
  (:func:`mtboard.score.metrics.bootstrap.chrf_resamples`), so the difference is paired (Koehn 2004).
"""

from __future__ import annotations

import itertools
import statistics as pystats
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mtboard.core.errors import MtboardError
from mtboard.score.metrics import bootstrap
from mtboard.core import fmt
from mtboard.ledger.load import LoadedCard
from mtboard.site.render import _env, rel_link
from mtboard.ledger.tables import Leaderboard, run_page
from mtboard.score.stats import view_seed
from mtboard.sweeps.collect import mismatch
from mtboard.score.scoring import percentile_nearest_rank
from mtboard.site import charts
from mtboard.sweeps.cells import Cell, NotApplicable
from mtboard.sweeps.spec import Sweep, load_sweep

FACTORS = ("method", "prompt", "temperature", "dataset", "arm", "history")
"""The sweep axes the page compares (spec §6.2: model, prompt version, temperature; and the language pair; issue 40:
the corpus view's arm and history length)."""
HEAT_FACTORS = ("method", "prompt", "temperature", "dataset")
"""The factors of the heatmaps (the arm and the history length have sections of their own)."""
PAIRED_FACTORS = ("method", "prompt", "temperature", "history")
"""Factors whose effect is measured on pairs of cards over the same segments (the language pair is not: its cards
cover different segments; nor the arm: lines and scenes are other segments)."""
GATE_HISTORY = 6
"""The latency gate's history length (JA→EN write-up, method step 4: "The gate is at 6 lines")."""
GATE_MEDIAN_S = 2.0
"""The gate's median seconds per whole line ("median ≤ 2 s")."""
GATE_P90_S = 3.0
"""The gate's 90th-percentile seconds per whole line ("p90 ≤ 3 s")."""


@dataclass
class Placed:
    """A sweep cell and the card shown for it (None: no card yet)."""

    cell: Cell
    lc: LoadedCard | None
    chrf: float | None = None
    ci: tuple[float, float] | None = None
    boot: np.ndarray | None = None


@dataclass
class Effect:
    factor: str
    baseline: Any
    level: Any
    pairs: int
    diff: float
    lo: float | None
    hi: float | None


@dataclass
class SweepPage:
    sweep: Sweep
    page: str
    placed: list[Placed]
    grids: list[dict[str, Any]] = field(default_factory=list)
    heatmaps: list[dict[str, Any]] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    cost: float | None = 0.0
    subset_note: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    """The history experiment per dataset (:func:`history_sections`)."""
    arms: list[dict[str, Any]] = field(default_factory=list)
    """The arms experiment per dataset (:func:`arms_tables`)."""


def _level(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"t={x:g}"
    return str(x)


def belongs(cell: Cell, lc: LoadedCard) -> bool:
    """Whether the card is the run the cell planned (module docstring)."""
    card = lc.card
    if mismatch(cell, card) is not None:
        return False
    comps = cell.components
    return (card.dataset.sha256 == comps["dataset_sha256"]
            and card.method.prompt_template_sha256 == comps["prompt_template_sha256"])


def place(sweep: Sweep, cards: list[LoadedCard]) -> list[Placed]:
    """Every cell with its card (the latest of those that belong to it) and its chrF++ with a 95 % CI."""
    out = []
    for cell in sweep.cells:
        mine = [lc for lc in cards if lc.card.dataset.id == cell.dataset_id and belongs(cell, lc)]
        lc = max(mine, key=lambda x: (x.card.timestamp, x.page_id)) if mine else None
        p = Placed(cell, lc)
        if lc is not None:
            p.chrf = lc.card.scores.chrf_plus_plus
            p.ci = bootstrap.chrf_ci([r.stats.chrf for r in lc.card.results])
        out.append(p)
    return out


def _paired_boots(placed: list[Placed], resamples: int) -> None:
    """chrF++ resamples of every placed card on its dataset's shared counts (a paired bootstrap per dataset)."""
    by_ds: dict[tuple[str, str | None], list[Placed]] = {}
    for p in placed:
        if p.lc is not None:  # lines and scenes (arms) are other segments: paired within one view only
            by_ds.setdefault((p.cell.dataset_id, p.cell.arm), []).append(p)
    for (ds, _), group in sorted(by_ds.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        ids = sorted({r.entry_id for p in group for r in p.lc.card.results})  # type: ignore[union-attr]
        counts = bootstrap.resample_counts(len(ids), resamples, view_seed(ds, "sweep"))
        for p in group:
            by_id = {r.entry_id: r for r in p.lc.card.results}  # type: ignore[union-attr]
            if set(by_id) != set(ids):
                continue  # other entries than its dataset's other cards: no paired comparison
            p.boot = bootstrap.chrf_resamples([by_id[i].stats.chrf for i in ids], counts)


def factor_effects(placed: list[Placed], resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> list[Effect]:
    """Each varying factor's effect (module docstring), level by level against the factor's first level."""
    _paired_boots(placed, resamples)
    have = [p for p in placed if p.lc is not None and p.boot is not None]
    effects = []
    for factor in PAIRED_FACTORS:
        levels = list(dict.fromkeys(p.cell.factors()[factor] for p in have))
        if factor == "history":  # a cell without a history length (an arm) is not a level of the history sweep
            levels = [v for v in levels if v is not None]
        if len(levels) < 2:
            continue
        base = levels[0]
        for level in levels[1:]:
            pairs = []
            for a in have:
                fa = a.cell.factors()
                if fa[factor] != base:
                    continue
                for b in have:
                    fb = b.cell.factors()
                    if fb[factor] == level and all(fa[k] == fb[k] for k in FACTORS if k != factor):
                        pairs.append((a, b))
            if not pairs:
                continue
            diffs = [b.chrf - a.chrf for a, b in pairs]  # type: ignore[operator]
            boot = np.mean([b.boot - a.boot for a, b in pairs], axis=0)  # type: ignore[operator]
            ci = bootstrap.percentile_interval(boot)
            effects.append(Effect(factor, base, level, len(pairs), float(np.mean(diffs)),
                                  ci[0] if ci else None, ci[1] if ci else None))
    return effects


SHADES = 5
"""Steps of the sweep page's sequential colour scale (CSS classes ``mtb-s0`` … ``mtb-s4``, light to dark)."""


def _shade(v: float | None, lo: float | None, hi: float | None) -> str:
    """The CSS class of ``v`` on a scale relative to its table's range [lo, hi] (five equal steps; the lowest value
    is ``mtb-s0``, the highest ``mtb-s4``; a table of one value is the middle step)."""
    if v is None or lo is None or hi is None:
        return ""
    if hi <= lo:
        return f"mtb-s{SHADES // 2}"
    return f"mtb-s{min(SHADES - 1, max(0, int(SHADES * (v - lo) / (hi - lo))))}"


def _scale(values: list[float]) -> tuple[float | None, float | None, list[tuple[str, str]]]:
    """``(lo, hi, legend)`` of a table's values: the legend is (class, ``"a–b"`` chrF++ range) per step."""
    if not values:
        return None, None, []
    lo, hi = min(values), max(values)
    if hi <= lo:
        return lo, hi, [(f"mtb-s{SHADES // 2}", f"{lo:.1f}")]
    step = (hi - lo) / SHADES
    return lo, hi, [(f"mtb-s{i}", f"{lo + i * step:.1f}–{lo + (i + 1) * step:.1f}") for i in range(SHADES)]


def grids(placed: list[Placed], page: str) -> list[dict[str, Any]]:
    """One grid per dataset: rows = method, columns = (condition, temperature) present; the best cell per row."""
    out = []
    for ds in dict.fromkeys(p.cell.dataset_id for p in placed):
        here = [p for p in placed if p.cell.dataset_id == ds]
        cols = list(dict.fromkeys(_column(p.cell) for p in here))
        rows = []
        lo, hi, legend = _scale([p.chrf for p in here if p.chrf is not None])
        for method in dict.fromkeys(p.cell.label for p in here):
            cells = []
            mine = {_column(p.cell): p for p in here if p.cell.label == method}
            best = max((p.chrf for p in mine.values() if p.chrf is not None), default=None)
            for col in cols:
                p = mine.get(col)
                if p is None:
                    cells.append(None)
                    continue
                cells.append({"chrf": fmt.num(p.chrf), "ci": fmt.ci(p.ci), "shade": _shade(p.chrf, lo, hi),
                              "best": p.chrf is not None and p.chrf == best and sum(
                                  1 for q in mine.values() if q.chrf is not None) > 1,
                              "link": rel_link(page, run_page(p.lc)) if p.lc is not None else None,
                              "cell": p.cell.id})
            rows.append({"method": method, "cells": cells})
        language_pair = here[0].cell.language_pair
        out.append({"dataset": ds, "language_pair": language_pair,
                    "columns": [_column_label(c) for c in cols], "rows": rows,
                    "runs": sum(1 for p in here if p.lc is not None), "cells": len(here), "legend": legend,
                    "coverage": _coverage(here)})
    return out


def _column(cell: Cell) -> tuple[str, float | None, str | None, int | None]:
    """A grid column: (condition, temperature, arm, history length)."""
    return cell.condition, cell.temperature, cell.arm, cell.history


def _column_label(col: tuple[str, float | None, str | None, int | None]) -> str:
    c, t, arm, history = col
    text = f"{c}{'' if t is None else f' · t={t:g}'}"
    if arm is not None:
        text += f" · {arm}"
    if history is not None:
        text += f" · {history} lines"
    return text


def _coverage(cells: list[Placed]) -> str:
    """``20 of 355 entries`` (a range ``20–40`` when the cells differ; ``all 355`` for full-segment cells)."""
    covered = sorted({p.cell.entries for p in cells})
    if any(p.cell.arm is not None for p in cells):  # corpus views: lines and scenes are counted apart (issue 40)
        n = str(covered[0]) if len(covered) == 1 else f"{covered[0]}–{covered[-1]}"
        return f"{n} lines or scenes per cell"
    of = max(p.cell.segment_entries for p in cells)
    n = str(covered[0]) if len(covered) == 1 else f"{covered[0]}–{covered[-1]}"
    return f"all {of} entries" if covered == [of] else f"{n} of {of} entries"


def subset_note(placed: list[Placed]) -> str | None:
    """The sentence saying the grid's cells are subsets (``limit`` in the sweep file), None when every cell covers
    its whole segment."""
    subsets = [p.cell for p in placed if p.cell.entries < p.cell.segment_entries]
    if not subsets:
        return None
    entries = sorted({c.entries for c in subsets})
    totals = sorted({c.segment_entries for c in subsets})
    n = str(entries[0]) if len(entries) == 1 else f"{entries[0]}–{entries[-1]}"
    of = str(totals[0]) if len(totals) == 1 else f"{totals[0]}–{totals[-1]}"
    limits = sorted({c.limit for c in subsets if c.limit is not None})
    lim = f" (`limit: {limits[0]}`)" if len(limits) == 1 else ""
    if any(c.arm is not None for c in subsets):  # corpus views (issue 40): the limit counts lines or scenes
        return (f"The cells cover the first {n} items of their corpus view{lim} — lines for the `lines` arm, scenes "
                f"for the scene arms and the history sweep — of the {subsets[0].segment} segment: the scores compare "
                f"the cells of this page with each other, not with the full-corpus leaderboards, and {entries[0]} "
                "segments give wide intervals.")
    every = "Every cell covers" if len(subsets) == len(placed) else f"{len(subsets)} of {len(placed)} cells cover"
    return (f"{every} the first {n} of the {of} {subsets[0].segment} entries of its dataset{lim}: the scores compare "
            f"the cells of this page with each other, not with the full-corpus leaderboards, and {entries[0]} "
            f"segments give wide intervals.")


def _heat_level(factor: str, x: Any) -> str:
    if x is None:  # an engine's prompt or temperature: it takes none
        return f"no {factor}"
    return _level(x)


def _heatmap(have: list[Placed], fa: str, fb: str, method: str | None) -> dict[str, Any]:
    rows = list(dict.fromkeys(p.cell.factors()[fa] for p in have))
    cols = list(dict.fromkeys(p.cell.factors()[fb] for p in have))
    groups = {(r, c): [p for p in have if p.cell.factors()[fa] == r and p.cell.factors()[fb] == c]
              for r in rows for c in cols}
    means = {k: pystats.fmean(p.chrf for p in g) for k, g in groups.items() if g}  # type: ignore[misc]
    lo, hi, legend = _scale(list(means.values()))
    table = [{"level": _heat_level(fa, r), "cells": [
        {"value": fmt.num(means.get((r, c))), "shade": _shade(means.get((r, c)), lo, hi), "n": len(groups[(r, c)]),
         "cells": [p.cell.id for p in groups[(r, c)]]} for c in cols]} for r in rows]
    return {"rows_factor": fa, "cols_factor": fb, "method": method, "columns": [_heat_level(fb, c) for c in cols],
            "rows": table, "lo": lo, "hi": hi, "legend": legend}


def heatmaps(placed: list[Placed]) -> list[dict[str, Any]]:
    """Mean chrF++ per combination of two factors, never over two methods: a pair with ``method`` has one row per
    method (each cell averages that method's runs over the other factors); any other pair (prompt × temperature,
    prompt × dataset, …) gets one heatmap per method on which both factors apply (no engine, which takes no prompt
    and no temperature) and both vary. Each table is shaded on its own range (:func:`_shade`)."""
    have = [p for p in placed if p.chrf is not None and p.cell.arm is None]  # views have sections of their own
    out = []
    varying = [f for f in HEAT_FACTORS if len({p.cell.factors()[f] for p in have}) > 1]
    if "method" in varying:
        for other in (f for f in HEAT_FACTORS if f != "method"):
            if len({p.cell.factors()[other] for p in have}) > 1:
                out.append(_heatmap(have, "method", other, None))
    for method in dict.fromkeys(p.cell.label for p in have):
        mine = [p for p in have if p.cell.label == method]
        for fa, fb in itertools.combinations([f for f in HEAT_FACTORS if f != "method"], 2):
            values = [{p.cell.factors()[f] for p in mine} for f in (fa, fb)]
            if any(None in v or len(v) < 2 for v in values):
                continue
            out.append(_heatmap(mine, fa, fb, method))
    return out


def _series_key(cell: Cell) -> tuple[str, str | None, str, float | None]:
    return cell.label, cell.prompt, cell.condition, cell.temperature


def _series_label(cell: Cell) -> str:
    parts = [cell.label] + ([cell.prompt] if cell.prompt else []) + (
        [f"t={cell.temperature:g}"] if cell.temperature is not None else [])
    return " · ".join(parts)


def latency_point(card: Any) -> tuple[float | None, float | None]:
    """``(median, p90)`` seconds per whole line of a card: its ``scores.median_latency_seconds`` and the nearest-rank
    90th percentile of its results' ``latency_s`` (run 0; :func:`mtboard.score.scoring.percentile_nearest_rank`);
    None when its engine measured no per-line latency (a batch engine: ``latency_s`` absent)."""
    lat = [r.latency_s for r in card.results if r.latency_s is not None]
    if not lat:
        return None, None
    return card.scores.median_latency_seconds, percentile_nearest_rank(lat, 90)


def gate_verdict(median: float | None, p90: float | None) -> str:
    """``pass`` when median ≤ :data:`GATE_MEDIAN_S` and p90 ≤ :data:`GATE_P90_S`, ``fail`` otherwise, ``not
    measured`` without per-line latencies."""
    if median is None or p90 is None:
        return "not measured"
    return "pass" if median <= GATE_MEDIAN_S and p90 <= GATE_P90_S else "fail"


def history_sections(placed: list[Placed], skipped: tuple[NotApplicable, ...], page: str) -> list[dict[str, Any]]:
    """The history experiment per dataset (issue 40): per model (method · prompt · temperature) its cells by history
    length with chrF++, composite, median and p90 seconds per line and n, all read from the cards; the latency gate at
    :data:`GATE_HISTORY` lines per model; the charts (quality and latency against history length); and the history
    cells not run because history cannot reach the method (``skipped``, with the reason)."""
    out = []
    mine = [p for p in placed if p.cell.experiment == "history"]
    datasets = list(dict.fromkeys([p.cell.dataset_id for p in mine]
                                  + [n.dataset_id for n in skipped if n.experiment == "history"]))
    for ds in datasets:
        here = [p for p in mine if p.cell.dataset_id == ds]
        series: list[dict[str, Any]] = []
        for key in dict.fromkeys(_series_key(p.cell) for p in here):
            cells = sorted((p for p in here if _series_key(p.cell) == key), key=lambda p: p.cell.history or 0)
            points = []
            for p in cells:
                card = p.lc.card if p.lc is not None else None
                median, p90 = latency_point(card) if card is not None else (None, None)
                points.append({"history": p.cell.history, "cell": p.cell.id, "has_card": card is not None,
                               "chrf": card.scores.chrf_plus_plus if card else None,
                               "composite": card.scores.composite if card else None,
                               "median": median, "p90": p90, "n": card.dataset.entry_count if card else None,
                               "sent": _mean_history_sent(card) if card is not None else None,
                               "link": rel_link(page, run_page(p.lc)) if p.lc is not None else None})
            gate = next((q for q in points if q["history"] == GATE_HISTORY and q["has_card"]), None)
            series.append({"n": len(series) + 1, "label": _series_label(cells[0].cell), "points": points,
                           "gate": None if gate is None else {
                               "median": gate["median"], "p90": gate["p90"],
                               "verdict": gate_verdict(gate["median"], gate["p90"])},
                           "engine": (cells[0].lc.card.method.engine_version if cells[0].lc is not None else None)})
        lengths = sorted({p.cell.history for p in here if p.cell.history is not None})
        notes = _not_applicable_notes([n for n in skipped if n.dataset_id == ds and n.experiment == "history"])
        first = here[0].cell if here else None
        out.append({
            "dataset": ds, "language_pair": first.language_pair if first else "", "series": series,
            "lengths": lengths, "scenes": sorted({p.cell.entries for p in here}), "not_applicable": notes,
            "charts": [c for c in (
                charts.history_curves(series, "chrf", "chrF++", f"{ds}: chrF++ against history length"),
                charts.history_curves(series, "composite", "composite", f"{ds}: composite against history length"),
                charts.history_curves(series, "median", "median s per line", f"{ds}: median seconds per line "
                                      "against history length", gate=GATE_MEDIAN_S),
                charts.history_curves(series, "p90", "p90 s per line", f"{ds}: 90th-percentile seconds per line "
                                      "against history length", gate=GATE_P90_S)) if c is not None]})
    return out


def _mean_history_sent(card: Any) -> float | None:
    """Mean lines of history the card's results were sent (``results[].history_lines``, recomputed by the validator
    from the corpus; 0 when absent): a scene gives its last line only as many earlier lines as it has, so a cell asking
    for 24 sends fewer where a scene is shorter. None for a card without results."""
    results = [r for r in card.results if r.segment == "development"] or list(card.results)
    if not results:
        return None
    return sum(getattr(r, "history_lines", None) or 0 for r in results) / len(results)


def _not_applicable_notes(skipped: list[NotApplicable]) -> list[str]:
    """One sentence per method and reason: ``history does not apply to apertium: … (not run: 3, 6, 12 and 24 lines
    of history)``."""
    groups: dict[tuple[str, str], list[NotApplicable]] = {}
    for n in skipped:
        groups.setdefault((n.label, n.reason), []).append(n)
    out = []
    for (_, reason), items in groups.items():
        lengths = [str(n.history) for n in items if n.experiment == "history" and n.history is not None]
        arms = [n.arm for n in items if n.experiment == "arms"]
        what = ([f"{', '.join(lengths)} lines of history"] if lengths else []) + [f"the {a} arm" for a in arms]
        out.append(f"{reason} (not run: {'; '.join(what)})")
    return out


def arms_tables(placed: list[Placed], skipped: tuple[NotApplicable, ...], page: str) -> list[dict[str, Any]]:
    """The arms experiment per dataset (issue 40): rows = model (method · prompt · temperature), columns = the arms
    in the sweep file's order; a cell is chrF++, composite and n (items: lines or scenes) read from the card, or the
    reason it was not run (history cannot reach the method), or no card yet."""
    out = []
    mine = [p for p in placed if p.cell.experiment == "arms"]
    skip = [n for n in skipped if n.experiment == "arms"]
    for ds in dict.fromkeys([p.cell.dataset_id for p in mine] + [n.dataset_id for n in skip]):
        here = [p for p in mine if p.cell.dataset_id == ds]
        arms = list(dict.fromkeys([p.cell.arm for p in here] + [n.arm for n in skip if n.dataset_id == ds]))
        order = {a: i for i, a in enumerate(("lines", "scene-bare", "scene-context", "scene-full"))}
        arms.sort(key=lambda a: order.get(a or "", 9))
        rows = []
        labels: dict[str, str] = {}
        for p in here:
            labels.setdefault(p.cell.label, _series_label(p.cell))
        for n in skip:
            if n.dataset_id == ds:
                labels.setdefault(n.label, " · ".join([n.label] + ([n.prompt] if n.prompt else [])))
        for label, shown in labels.items():
            cells = []
            for arm in arms:
                p = next((q for q in here if q.cell.label == label and q.cell.arm == arm), None)
                n = next((x for x in skip if x.dataset_id == ds and x.label == label and x.arm == arm), None)
                if p is None:
                    cells.append({"state": "not-applicable" if n else "none", "reason": n.reason if n else None})
                    continue
                card = p.lc.card if p.lc is not None else None
                cells.append({"state": "card" if card else "pending", "cell": p.cell.id,
                              "chrf": card.scores.chrf_plus_plus if card else None,
                              "composite": card.scores.composite if card else None,
                              "n": card.dataset.entry_count if card else p.cell.entries,
                              "link": rel_link(page, run_page(p.lc)) if p.lc is not None else None})
            rows.append({"label": shown, "cells": cells})
        lp = here[0].cell.language_pair if here else next(n.language_pair for n in skip if n.dataset_id == ds)
        out.append({"dataset": ds, "language_pair": lp, "arms": arms, "rows": rows})
    return out


def build_pages(sweeps_dir: Path, root: Path, boards: list[Leaderboard],
                resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> tuple[dict[str, str], list[dict[str, Any]], list[str]]:
    """``({docs path: Markdown}, nav entries, warnings)`` for every ``sweeps_dir/*.yaml`` (none when the folder is
    missing). A sweep file that does not load is a warning, not a failed build."""
    pages: dict[str, str] = {}
    nav: list[dict[str, Any]] = []
    warnings: list[str] = []
    if not sweeps_dir.is_dir():
        return pages, nav, warnings
    cards = [lc for lb in boards for lc in lb.cards]
    env = _env()
    for path in sorted(sweeps_dir.glob("*.yaml")):
        try:
            sweep = load_sweep(path, root)
        except MtboardError as exc:
            warnings.append(f"sweep {path.name} not shown: {exc.one_line()}")
            continue
        page = f"sweeps/{sweep.name}.md"
        placed = place(sweep, cards)
        costs = [p.lc.card.totals.total_cost_usd for p in placed if p.lc is not None]
        sp = SweepPage(sweep=sweep, page=page, placed=placed, grids=grids(placed, page), heatmaps=heatmaps(placed),
                       effects=factor_effects(placed, resamples),
                       cost=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
                       subset_note=subset_note(placed),
                       history=history_sections(placed, sweep.not_applicable, page),
                       arms=arms_tables(placed, sweep.not_applicable, page))
        pages[page] = env.get_template("sweep.md.j2").render(
            sp=sp, title=f"Sweep {sweep.name}", link=lambda target, _p=page: rel_link(_p, target), level=_level,
            gate_history=GATE_HISTORY, gate_median=f"{GATE_MEDIAN_S:g}", gate_p90=f"{GATE_P90_S:g}")
        nav.append({fmt.safe_title(f"Sweep {sweep.name}"): page})
    return pages, nav, warnings


__all__ = ["FACTORS", "GATE_HISTORY", "GATE_MEDIAN_S", "GATE_P90_S", "Placed", "Effect", "SweepPage", "arms_tables",
           "belongs", "build_pages", "factor_effects", "gate_verdict", "grids", "heatmaps", "history_sections",
           "latency_point", "place", "subset_note"]
