"""``mtboard sweep run``: the cells of a sweep run here, through the same library code as ``mtboard run``
(:func:`mtboard.run.runner.prepare` → :func:`~mtboard.run.runner.preflight_judges` → :func:`~mtboard.run.runner.translate_all`
→ :func:`~mtboard.run.runner.finish`), one work directory per cell (``runs/sweeps/NAME/CELL_ID``).

Parallelism is bounded per lane: cells on a local model server (``Cell.lane == "local"``, the gguf backend) run one
at a time — two servers would share the same CPU cores or GPU and each would time the other — while endpoint and
engine cells (``api``: OpenAI-compatible APIs, Apertium, baselines) run up to ``max_parallel`` at once, beside the
local lane. Resumable: a cell whose work directory already holds its card is not run again (its card is reused);
an unfinished cell resumes where its work directory stopped (:class:`mtboard.run.workdir.WorkDir`), and a failed cell
leaves the others running. Ctrl-C stops the sweep; the same command resumes it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mtboard.core.documents import load_card
from mtboard.run.runner import finish, preflight_judges, prepare, translate_all
from mtboard.core.errors import MtboardError
from mtboard.sweeps.cells import Cell
from mtboard.sweeps.spec import Sweep, cell_error, run_settings
from mtboard.run.workdir import lock_workdir

CARD = "card.json"


@dataclass
class CellOutcome:
    """What became of one cell: ``done`` (run now), ``cached`` (its card was already there) or ``failed``."""

    cell: Cell
    status: Literal["done", "cached", "failed"]
    card_path: Path | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    """Wall time this sweep spent on the cell (a cached card: the card's ``elapsed_seconds``)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    cost_usd: float | None = 0.0
    """The card's total cost (translation + judges), None when unknown."""
    chrf: float | None = None

    @classmethod
    def from_card(cls, cell: Cell, status: Literal["done", "cached"], path: Path,
                  elapsed_s: float | None = None) -> CellOutcome:
        """The outcome of a cell with a card at ``path``; ``elapsed_s`` None: the card's own ``elapsed_seconds``
        (a card made by an earlier session)."""
        card = load_card(path)
        t = card.totals
        cost = None if t.total_cost_usd is None else t.total_cost_usd + (t.judge_cost_usd or 0.0)
        return cls(cell=cell, status=status, card_path=path,
                   elapsed_s=card.elapsed_seconds if elapsed_s is None else elapsed_s, prompt_tokens=t.prompt_tokens,
                   completion_tokens=t.completion_tokens, judge_prompt_tokens=t.judge_prompt_tokens,
                   judge_completion_tokens=t.judge_completion_tokens, cost_usd=cost,
                   chrf=card.scores.chrf_plus_plus)


class SweepProgress:
    """The progress display over the whole sweep: cells done/failed/running and entries done over all cells, as one
    line every ``interval_s`` seconds (and at each cell's end) through ``echo``. Each cell reports through the
    :class:`mtboard.run.runner.ProgressSink` :meth:`for_cell` returns."""

    def __init__(self, name: str, cells: list[Cell], echo: Callable[[str], None], interval_s: float = 30.0):
        self.name = name
        self.echo = echo
        self.interval_s = interval_s
        self.total_cells = len(cells)
        self.total_entries = sum(c.entries * c.runs for c in cells)
        self.entries_done = 0
        self.entries_at_start = 0
        self.cells_done = self.cells_failed = 0
        self.running: set[str] = set()
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self) -> str:
        el = time.monotonic() - self._t0
        new = self.entries_done - self.entries_at_start
        rate = new / el if el > 0 else 0.0
        left = self.total_entries - self.entries_done
        eta = f"{left / rate:.0f} s" if rate > 0 else "?"
        return (f"sweep       {self.name}: cells {self.cells_done}/{self.total_cells} done, {self.cells_failed} "
                f"failed, {len(self.running)} running ({', '.join(sorted(self.running)) or '-'}); entries "
                f"{self.entries_done}/{self.total_entries}; elapsed {el:.0f} s, ETA {eta}")

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._tick, name="mtboard-sweep-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.echo(self.line())

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def cell_started(self, cell: Cell) -> None:
        with self._lock:
            self.running.add(cell.id)

    def cell_finished(self, cell: Cell, outcome: CellOutcome, already: int = 0) -> None:
        with self._lock:
            self.running.discard(cell.id)
            if outcome.status == "failed":
                self.cells_failed += 1
            else:
                self.cells_done += 1
            if outcome.status == "cached":
                self.entries_done += cell.entries * cell.runs
                self.entries_at_start += cell.entries * cell.runs
        what = {"done": "card", "cached": "card (already there)", "failed": "FAILED"}[outcome.status]
        detail = outcome.error if outcome.status == "failed" else (
            f"chrF++ {outcome.chrf:.2f}, {outcome.elapsed_s:.0f} s" if outcome.chrf is not None else "")
        self.echo(f"cell        {cell.id} {cell.dataset_id} {cell.label} {cell.condition} "
                  f"t={cell.temperature}: {what}" + (f" — {detail}" if detail else ""))
        self.echo(self.line())

    def for_cell(self, cell: Cell) -> _CellSink:
        return _CellSink(self)


class _CellSink:
    """ProgressSink of one cell, forwarding to the sweep's :class:`SweepProgress`."""

    def __init__(self, sweep: SweepProgress):
        self.sweep = sweep

    def start(self, total: int, already_done: int) -> None:
        with self.sweep._lock:
            self.sweep.entries_done += already_done
            self.sweep.entries_at_start += already_done

    def advance(self, n: int, failures: int) -> None:
        with self.sweep._lock:
            self.sweep.entries_done += n

    def stop(self) -> None:
        pass


@dataclass
class SweepResult:
    """Every cell's outcome and the sweep's wall time."""

    outcomes: list[CellOutcome] = field(default_factory=list)
    elapsed_s: float = 0.0


async def _run_cell(sweep: Sweep, cell: Cell, work_root: Path, progress: SweepProgress,
                    notice: Callable[[str], None]) -> CellOutcome:
    work_dir = work_root / cell.id
    card_path = work_dir / CARD
    if card_path.is_file():
        outcome = CellOutcome.from_card(cell, "cached", card_path)
        progress.cell_finished(cell, outcome)
        return outcome
    progress.cell_started(cell)
    t0 = time.monotonic()
    try:
        settings = run_settings(cell, sweep.root, work_dir, early_gate=sweep.file.early_gate)
        plan = prepare(settings)
        preflight_judges(plan)
        with lock_workdir(work_dir):  # another `sweep run --cell` (or `mtboard run`) on this cell fails at once
            translated = await translate_all(plan, progress.for_cell(cell), notice=notice)
            result = await asyncio.to_thread(finish, translated, judge=settings.judge)
        outcome = CellOutcome.from_card(cell, "done", result.card_path, time.monotonic() - t0)
    except MtboardError as exc:
        outcome = CellOutcome(cell=cell, status="failed", error=cell_error(sweep.path, cell, exc),
                              elapsed_s=time.monotonic() - t0)
    progress.cell_finished(cell, outcome)
    return outcome


async def run_cells(sweep: Sweep, cells: list[Cell], work_root: Path, progress: SweepProgress,
                    notice: Callable[[str], None] = lambda _m: None) -> list[CellOutcome]:
    """Run ``cells`` (module docstring: the local lane one at a time, API cells ``sweep.file.max_parallel`` at
    once). Returns the outcomes in the cells' order. A cell that raises an :class:`~mtboard.core.errors.MtboardError` is
    a ``failed`` outcome; anything else (Ctrl-C) propagates after the work directories were flushed."""
    api_slots = asyncio.Semaphore(sweep.file.max_parallel)
    results: dict[str, CellOutcome] = {}

    async def local_lane() -> None:
        for cell in (c for c in cells if c.lane == "local"):
            results[cell.id] = await _run_cell(sweep, cell, work_root, progress, notice)

    async def api_cell(cell: Cell) -> None:
        async with api_slots:
            results[cell.id] = await _run_cell(sweep, cell, work_root, progress, notice)

    await asyncio.gather(local_lane(), *(api_cell(c) for c in cells if c.lane == "api"))
    return [results[c.id] for c in cells]


def run_sweep(sweep: Sweep, work_root: Path, *, echo: Callable[[str], None], only: set[str] | None = None,
              interval_s: float = 30.0) -> SweepResult:
    """Run the sweep's cells (``only``: those ids) with a progress display through ``echo``; see
    :func:`run_cells`."""
    cells = [c for c in sweep.cells if only is None or c.id in only]
    progress = SweepProgress(sweep.name, cells, echo, interval_s)
    t0 = time.monotonic()
    progress.start()
    try:
        outcomes = asyncio.run(run_cells(sweep, cells, work_root, progress, notice=echo))
    finally:
        progress.stop()
    return SweepResult(outcomes=outcomes, elapsed_s=time.monotonic() - t0)


def summary_record(sweep: Sweep, result: SweepResult, estimates: dict[str, Any]) -> dict[str, Any]:
    """The sweep summary as data (``runs/sweeps/NAME/summary.json`` and the printed table): per cell its status,
    card, tokens and cost used against the estimate (:func:`mtboard.sweeps.estimate.estimate_cell` as a dict keyed
    by cell id), and the totals."""
    rows = []
    for o in result.outcomes:
        est = estimates.get(o.cell.id, {})
        used = o.prompt_tokens + o.completion_tokens + o.judge_prompt_tokens + o.judge_completion_tokens
        planned = est.get("tokens", {}).get("total")
        rows.append({"cell": o.cell.id, "dataset": o.cell.dataset_id, "method": o.cell.label,
                     "condition": o.cell.condition, "temperature": o.cell.temperature, "status": o.status,
                     "card": None if o.card_path is None else str(o.card_path), "error": o.error,
                     "elapsed_s": round(o.elapsed_s, 1), "tokens_used": used, "tokens_estimated": planned,
                     "tokens_ratio": None if not planned or o.status == "failed" else round(used / planned, 3),
                     "cost_usd": o.cost_usd, "cost_estimated_usd": est.get("cost_usd", {}).get("estimate")})
    ok = [r for r in rows if r["status"] != "failed"]
    used = sum(r["tokens_used"] for r in ok)
    planned = sum(r["tokens_estimated"] or 0 for r in ok)
    costs = [r["cost_usd"] for r in ok]
    return {"sweep": sweep.name, "sweep_sha256": sweep.sha256, "cells": len(rows),
            "cards": sum(1 for r in rows if r["status"] != "failed"),
            "failed": sum(1 for r in rows if r["status"] == "failed"), "elapsed_s": round(result.elapsed_s, 1),
            "tokens_used": used, "tokens_estimated": planned,
            "tokens_ratio": round(used / planned, 3) if planned else None,
            "cost_usd": None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            "cost_estimated_usd": sum(r["cost_estimated_usd"] or 0.0 for r in ok), "rows": rows}


__all__ = ["CellOutcome", "SweepProgress", "SweepResult", "run_cells", "run_sweep", "summary_record", "CARD"]
