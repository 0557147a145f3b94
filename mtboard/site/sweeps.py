"""Sweep pages (issue 16; spec §6.1: "a benchmark is the whole matrix"): one page per sweep file under ``sweeps/``
next to ``submissions/``, at ``sweeps/<name>.md``.

A card belongs to a sweep cell when it is the run the cell planned (:func:`mtboard.sweeps.collect.mismatch`: dataset,
method, condition, temperature, entries, replicates, plus the corpus and prompt template hashes of the cell's planned
components); when several cards are one cell's run, the latest is shown. The page holds:

* the grid per dataset (design §2 "Sweep"): rows = method, columns = the conditions present (prompt/condition ×
  temperature); a cell is chrF++ with its 95 % bootstrap interval, shaded by value, linked to its run page; the best
  cell of a row outlined; a footer with the runs and Σ declared cost;
* a heatmap per pair of factors that vary (prompt × temperature, method × dataset, …): the mean chrF++ over the cards
  at each combination (every other factor averaged), as a coloured HTML table (screen-readable, design §3.6);
* each factor's effect with a CI: for a factor with levels a, b, …, the effect of level b is the mean over every pair
  of cards that differ only in that factor (same dataset, same entries) of chrF++(b) − chrF++(a), with a 95 %
  percentile interval from a paired bootstrap over segments — each dataset's segments resampled once
  (:func:`mtboard.metrics.bootstrap.resample_counts`, seed :func:`mtboard.stats.view_seed`) and every card's chrF++
  recomputed from its stored per-segment statistics on the same resamples
  (:func:`mtboard.metrics.bootstrap.chrf_resamples`), so the difference is paired (Koehn 2004).
"""

from __future__ import annotations

import itertools
import statistics as pystats
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mtboard.errors import MtboardError
from mtboard.metrics import bootstrap
from mtboard.site import fmt
from mtboard.site.load import LoadedCard
from mtboard.site.render import _env, rel_link
from mtboard.site.tables import Leaderboard, run_page
from mtboard.stats import view_seed
from mtboard.sweeps.collect import mismatch
from mtboard.sweeps.spec import Cell, Sweep, load_sweep

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


def _shade(v: float | None) -> str:
    return "" if v is None else f"mtb-h{min(4, max(0, int(v / 20)))}"


def grids(placed: list[Placed], page: str) -> list[dict[str, Any]]:
    """One grid per dataset: rows = method, columns = (condition, temperature) present; the best cell per row."""
    out = []
    for ds in dict.fromkeys(p.cell.dataset_id for p in placed):
        here = [p for p in placed if p.cell.dataset_id == ds]
        cols = list(dict.fromkeys((p.cell.condition, p.cell.temperature) for p in here))
        rows = []
        for method in dict.fromkeys(p.cell.label for p in here):
            cells = []
            mine = {(p.cell.condition, p.cell.temperature): p for p in here if p.cell.label == method}
            best = max((p.chrf for p in mine.values() if p.chrf is not None), default=None)
            for col in cols:
                p = mine.get(col)
                if p is None:
                    cells.append(None)
                    continue
                cells.append({"chrf": fmt.num(p.chrf), "ci": fmt.ci(p.ci), "shade": _shade(p.chrf),
                              "best": p.chrf is not None and p.chrf == best and sum(
                                  1 for q in mine.values() if q.chrf is not None) > 1,
                              "link": rel_link(page, run_page(p.lc)) if p.lc is not None else None,
                              "cell": p.cell.id})
            rows.append({"method": method, "cells": cells})
        language_pair = here[0].cell.language_pair
        out.append({"dataset": ds, "language_pair": language_pair,
                    "columns": [f"{c}{'' if t is None else f' · t={t:g}'}" for c, t in cols], "rows": rows,
                    "runs": sum(1 for p in here if p.lc is not None), "cells": len(here)})
    return out


def heatmaps(placed: list[Placed]) -> list[dict[str, Any]]:
    """Mean chrF++ per combination of two varying factors (every other factor averaged)."""
    have = [p for p in placed if p.chrf is not None]
    varying = [f for f in FACTORS if len({p.cell.factors()[f] for p in have}) > 1]
    out = []
    for fa, fb in itertools.combinations(varying, 2):
        rows = list(dict.fromkeys(p.cell.factors()[fa] for p in have))
        cols = list(dict.fromkeys(p.cell.factors()[fb] for p in have))
        table = []
        for r in rows:
            line = []
            for c in cols:
                vals = [p.chrf for p in have if p.cell.factors()[fa] == r and p.cell.factors()[fb] == c]
                v = pystats.fmean(vals) if vals else None  # type: ignore[arg-type]
                line.append({"value": fmt.num(v), "shade": _shade(v), "n": len(vals)})
            table.append({"level": _level(r), "cells": line})
        out.append({"rows_factor": fa, "cols_factor": fb, "columns": [_level(c) for c in cols], "rows": table})
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
                       cost=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs))
        pages[page] = env.get_template("sweep.md.j2").render(
            sp=sp, title=f"Sweep {sweep.name}", link=lambda target, _p=page: rel_link(_p, target), level=_level)
        nav.append({fmt.safe_title(f"Sweep {sweep.name}"): page})
    return pages, nav, warnings


def with_sweeps(nav: list[dict[str, Any]], sweep_nav: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The site's nav with a "Sweeps" section after the leaderboards (unchanged when there are no sweep pages)."""
    if not sweep_nav:
        return nav
    at = next((i + 1 for i, item in enumerate(nav) if "Leaderboards" in item), 1)
    return [*nav[:at], {"Sweeps": sweep_nav}, *nav[at:]]


__all__ = ["FACTORS", "with_sweeps", "Placed", "Effect", "SweepPage", "belongs", "place", "factor_effects", "grids", "heatmaps",
           "build_pages"]
