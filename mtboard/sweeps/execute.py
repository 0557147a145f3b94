"""``mtboard sweep run``: the cells of a sweep run here, through the same library code as ``mtboard run``
(:func:`mtboard.run.runner.prepare` → :func:`~mtboard.run.runner.preflight_judges` → :func:`~mtboard.run.runner.translate_all`
→ :func:`~mtboard.run.runner.finish`), one work directory per cell (``runs/sweeps/NAME/CELL_ID``).

Parallelism is bounded per lane: cells on a local model server (``Cell.lane == "local"``, the gguf backend) run one
at a time — two servers would share the same CPU cores or GPU and each would time the other — while endpoint and
engine cells (``api``: OpenAI-compatible APIs, Apertium, baselines) run up to ``max_parallel`` at once, beside the
local lane. Before the first request of any cell, every cell that is to run is prepared
(:func:`check_cells`: :func:`mtboard.run.runner.prepare`, whose planned-card check is
:func:`mtboard.run.planned.check_planned_card`): a cell whose card would break a rule (a 4,000-character model name,
an API key in the method, a name pattern …) refuses the whole sweep with one line per bad cell and nothing sent
(issue 33 item 4, second review finding 5); a cell that cannot run here for another reason (a mode not installed, no
API key) is a failed cell without a request, and the others run. Resumable: a cell whose work directory already
holds its card is not run again (its card is reused);
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
from mtboard.core.fmt import fold_lines
from mtboard.run.planned import PlannedCardError
from mtboard.run.runner import Plan, finish, preflight_judges, prepare, translate_all
from mtboard.core.errors import MtboardError
from mtboard.sweeps.cells import Cell
from mtboard.sweeps.spec import Sweep, cell_error, run_settings
from mtboard.run.workdir import lock_workdir
from mtboard.validate.hygiene import find_key_like

CARD = "card.json"


@dataclass
class CellCheck:
    """A cell prepared before anything is sent (:func:`check_cells`): its :class:`~mtboard.run.runner.Plan`, or the
    one line saying why it cannot run — ``refusal`` when its card would break a card rule (the sweep is refused),
    ``error`` for anything else (``sweep run``: the cell fails without a request; ``sweep plan``: not checked here)."""

    cell: Cell
    plan: Plan | None = None
    refusal: str | None = None
    error: str | None = None


def shown(text: str, limit: int = 40) -> str:
    """A method or label as one refusal line may show it: on one line, at most ``limit`` characters (then "…"), and
    withheld when it holds what looks like an API key (:func:`mtboard.validate.hygiene.find_key_like`; the key is
    never echoed)."""
    if find_key_like(text):
        return "method withheld: it holds what looks like an API key"
    text = fold_lines(text)
    return text if len(text) <= limit else text[:limit] + "…"


def refusal_line(sweep: Sweep, cell: Cell, exc: MtboardError) -> str:
    """One line for a cell whose planned card breaks a rule: the cell id, its method (:func:`shown`), and the sweep
    file's field, the rule and the fix (:func:`mtboard.sweeps.spec.cell_error`)."""
    return f"cell {cell.id} ({shown(cell.method)}): {cell_error(sweep.path, cell, exc)}"


def check_cells(sweep: Sweep, cells: list[Cell], work_root: Path, *, environment: bool = True,
                skip_cached: bool = True) -> list[CellCheck]:
    """Prepare every cell (:func:`mtboard.run.runner.prepare`, which checks the cell's planned card with
    :func:`mtboard.run.planned.check_planned_card`) before any is sent. Nothing is sent and no work directory is
    made. ``environment=False`` (``mtboard sweep plan``, no secrets): the backends' environment is not checked, a
    ``gguf_package`` is not assembled and the judges' endpoints are not required. ``skip_cached``: a cell whose work
    directory already holds its card is not prepared (it is not run again; no check is returned for it).

    Returns one :class:`CellCheck` per prepared cell, in ``cells``' order: a
    :class:`~mtboard.run.planned.PlannedCardError` gives ``refusal`` (:func:`refusal_line`), any other
    :class:`~mtboard.core.errors.MtboardError` ``error`` (:func:`mtboard.sweeps.spec.cell_error`)."""
    out: list[CellCheck] = []
    for cell in cells:
        work_dir = work_root / cell.id
        if skip_cached and (work_dir / CARD).is_file():
            continue
        try:
            settings = run_settings(cell, sweep.root, work_dir, early_gate=sweep.file.early_gate,
                                    resolve=environment)
            plan = prepare(settings, environment=environment)
            if environment:
                preflight_judges(plan)
        except PlannedCardError as exc:
            out.append(CellCheck(cell, refusal=refusal_line(sweep, cell, exc)))
        except MtboardError as exc:
            out.append(CellCheck(cell, error=cell_error(sweep.path, cell, exc)))
        else:
            out.append(CellCheck(cell, plan=plan))
    return out


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
                    notice: Callable[[str], None], checked: CellCheck | None = None) -> CellOutcome:
    work_dir = work_root / cell.id
    card_path = work_dir / CARD
    if card_path.is_file():
        outcome = CellOutcome.from_card(cell, "cached", card_path)
        progress.cell_finished(cell, outcome)
        return outcome
    progress.cell_started(cell)
    t0 = time.monotonic()
    if checked is not None and checked.plan is None:  # refused or failed before anything was sent
        outcome = CellOutcome(cell=cell, status="failed", error=checked.refusal or checked.error)
        progress.cell_finished(cell, outcome)
        return outcome
    try:
        if checked is not None and checked.plan is not None:
            plan = checked.plan
        else:
            plan = prepare(run_settings(cell, sweep.root, work_dir, early_gate=sweep.file.early_gate))
            preflight_judges(plan)
        settings = plan.settings
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
                    notice: Callable[[str], None] = lambda _m: None,
                    checked: dict[str, CellCheck] | None = None) -> list[CellOutcome]:
    """Run ``cells`` (module docstring: the local lane one at a time, API cells ``sweep.file.max_parallel`` at
    once); ``checked``: :func:`check_cells`' results by cell id (a cell without one is prepared when its turn
    comes). Returns the outcomes in the cells' order. A cell that raises an
    :class:`~mtboard.core.errors.MtboardError` is
    a ``failed`` outcome; anything else (Ctrl-C) propagates after the work directories were flushed."""
    api_slots = asyncio.Semaphore(sweep.file.max_parallel)
    pre = checked or {}
    results: dict[str, CellOutcome] = {}

    async def local_lane() -> None:
        for cell in (c for c in cells if c.lane == "local"):
            results[cell.id] = await _run_cell(sweep, cell, work_root, progress, notice, pre.get(cell.id))

    async def api_cell(cell: Cell) -> None:
        async with api_slots:
            results[cell.id] = await _run_cell(sweep, cell, work_root, progress, notice, pre.get(cell.id))

    await asyncio.gather(local_lane(), *(api_cell(c) for c in cells if c.lane == "api"))
    return [results[c.id] for c in cells]


class SweepRefused(MtboardError):
    """``mtboard sweep run`` refused before anything was sent: ``lines`` holds one line per cell whose planned card
    breaks a card rule (:func:`refusal_line`)."""

    def __init__(self, sweep: Sweep, lines: list[str], cells: int):
        self.lines = lines
        super().__init__(f"the sweep is refused: {len(lines)} of {cells} cell(s) would write a card that breaks a card "
                         "rule (listed above); nothing was sent", where=str(sweep.path),
                         fix="correct those cells' fields in the sweep file (or drop the cells) and run again")


def run_sweep(sweep: Sweep, work_root: Path, *, echo: Callable[[str], None], only: set[str] | None = None,
              interval_s: float = 30.0) -> SweepResult:
    """Run the sweep's cells (``only``: those ids) with a progress display through ``echo``; see
    :func:`run_cells`. Every cell to run is prepared first (:func:`check_cells`).

    Raises: :class:`SweepRefused` when a cell's planned card breaks a card rule (nothing sent, no work directory
    made)."""
    cells = [c for c in sweep.cells if only is None or c.id in only]
    checks = check_cells(sweep, cells, work_root)
    refused = [c.refusal for c in checks if c.refusal]
    if refused:
        raise SweepRefused(sweep, refused, len(cells))
    progress = SweepProgress(sweep.name, cells, echo, interval_s)
    t0 = time.monotonic()
    progress.start()
    try:
        outcomes = asyncio.run(run_cells(sweep, cells, work_root, progress, notice=echo,
                                         checked={c.cell.id: c for c in checks}))
    finally:
        progress.stop()
    return SweepResult(outcomes=outcomes, elapsed_s=time.monotonic() - t0)


def summary_record(sweep: Sweep, result: SweepResult, estimates: dict[str, Any]) -> dict[str, Any]:
    """The sweep summary as data (``runs/sweeps/NAME/summary.json`` and the printed table): per cell its status,
    card, tokens and cost used against the estimate (:func:`mtboard.sweeps.estimate.estimate_cell` as a dict keyed
    by cell id), and the totals. A cost that is not known — a card without a price, a cell the estimate could not
    price (``cost_usd`` None) — is None, in its row and in the total it would be part of ("unknown" in
    :func:`mtboard.sweeps.summary.summary_text`), never a crash or a partial sum (second review of issue 33, finding
    3)."""
    rows = []
    for o in result.outcomes:
        est = estimates.get(o.cell.id) or {}
        used = o.prompt_tokens + o.completion_tokens + o.judge_prompt_tokens + o.judge_completion_tokens
        planned = (est.get("tokens") or {}).get("total")
        estimated = (est.get("cost_usd") or {}).get("estimate")  # None: no price for the cell ("cost unknown")
        rows.append({"cell": o.cell.id, "dataset": o.cell.dataset_id, "method": o.cell.label,
                     "condition": o.cell.condition, "temperature": o.cell.temperature, "status": o.status,
                     "card": None if o.card_path is None else str(o.card_path), "error": o.error,
                     "elapsed_s": round(o.elapsed_s, 1), "tokens_used": used, "tokens_estimated": planned,
                     "tokens_ratio": None if not planned or o.status == "failed" else round(used / planned, 3),
                     "cost_usd": o.cost_usd, "cost_estimated_usd": estimated})
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
            "cost_estimated_usd": None if any(r["cost_estimated_usd"] is None for r in ok) else sum(
                r["cost_estimated_usd"] for r in ok), "rows": rows}


__all__ = ["CellCheck", "SweepRefused", "check_cells", "refusal_line", "shown", "CellOutcome", "SweepProgress",
           "SweepResult", "run_cells", "run_sweep", "summary_record", "CARD"]
