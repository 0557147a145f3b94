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
from mtboard.sweeps.cells import Cell
from mtboard.sweeps.spec import Sweep, load_sweep

FACTORS = ("method", "prompt", "temperature", "dataset")
"""The sweep axes the page compares (spec §6.2: model, prompt version, temperature; and the language pair)."""
PAIRED_FACTORS = ("method", "prompt", "temperature")
"""Factors whose effect is measured on pairs of cards over the same segments (the language pair is not: its cards
cover different segments)."""


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
    by_ds: dict[str, list[Placed]] = {}
    for p in placed:
        if p.lc is not None:
            by_ds.setdefault(p.cell.dataset_id, []).append(p)
    for ds, group in sorted(by_ds.items()):
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
        cols = list(dict.fromkeys((p.cell.condition, p.cell.temperature) for p in here))
        rows = []
        lo, hi, legend = _scale([p.chrf for p in here if p.chrf is not None])
        for method in dict.fromkeys(p.cell.label for p in here):
            cells = []
            mine = {(p.cell.condition, p.cell.temperature): p for p in here if p.cell.label == method}
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
                    "columns": [f"{c}{'' if t is None else f' · t={t:g}'}" for c, t in cols], "rows": rows,
                    "runs": sum(1 for p in here if p.lc is not None), "cells": len(here), "legend": legend,
                    "coverage": _coverage(here)})
    return out


def _coverage(cells: list[Placed]) -> str:
    """``20 of 355 entries`` (a range ``20–40`` when the cells differ; ``all 355`` for full-segment cells)."""
    covered = sorted({p.cell.entries for p in cells})
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
    have = [p for p in placed if p.chrf is not None]
    out = []
    varying = [f for f in FACTORS if len({p.cell.factors()[f] for p in have}) > 1]
    if "method" in varying:
        for other in (f for f in FACTORS if f != "method"):
            if len({p.cell.factors()[other] for p in have}) > 1:
                out.append(_heatmap(have, "method", other, None))
    for method in dict.fromkeys(p.cell.label for p in have):
        mine = [p for p in have if p.cell.label == method]
        for fa, fb in itertools.combinations([f for f in FACTORS if f != "method"], 2):
            values = [{p.cell.factors()[f] for p in mine} for f in (fa, fb)]
            if any(None in v or len(v) < 2 for v in values):
                continue
            out.append(_heatmap(mine, fa, fb, method))
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
                       subset_note=subset_note(placed))
        pages[page] = env.get_template("sweep.md.j2").render(
            sp=sp, title=f"Sweep {sweep.name}", link=lambda target, _p=page: rel_link(_p, target), level=_level)
        nav.append({fmt.safe_title(f"Sweep {sweep.name}"): page})
    return pages, nav, warnings


__all__ = ["FACTORS", "Placed", "Effect", "SweepPage", "belongs", "place", "factor_effects", "grids", "heatmaps", "subset_note",
           "build_pages"]
