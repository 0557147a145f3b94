"""CLI commands: ``mtboard sweep plan FILE`` and ``mtboard sweep run FILE`` (issue 16; spec §6 benchmark matrix,
§10 cost). The sweep file format, the estimate method and the GitHub Actions workflow are in docs/sweeps.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, fail, guarded

sweep_app = typer.Typer(no_args_is_help=True, help="Benchmark sweeps: a matrix of runs priced before anything is "
                        "sent (spec §6, §10; docs/sweeps.md).")
app.add_typer(sweep_app, name="sweep")

SweepFileArg = Annotated[Path, typer.Argument(help="Sweep file (sweeps/NAME.yaml; docs/sweeps.md).")]
RootOpt = Annotated[Optional[Path], typer.Option("--root", help="Repository root the sweep's dataset paths are "
                                                 "relative to (default: the checkout holding the file).")]


def _work_root(sweep_name: str, work_root: Path | None) -> Path:
    return work_root if work_root is not None else Path("runs") / "sweeps" / sweep_name


@sweep_app.command("plan")
@guarded
def plan(
    file: SweepFileArg,
    budget: Annotated[Optional[float], typer.Option("--budget", min=0.0, help="Refuse (exit 1) when the estimate's "
                                                    "upper bound is over this many USD.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the GitHub Actions matrix (chunked under 256 jobs) "
                                          "with the estimate, as JSON.")] = False,
    ratio_only: Annotated[bool, typer.Option("--ratio-only", help="Count tokens with the chars-per-token ratios "
                                             "even where a local tokenizer is available.")] = False,
    root: RootOpt = None,
) -> None:
    """Print the expanded matrix and the cost estimate per cell and in total (nothing is sent); every cell's planned
    card is checked as `sweep run` checks it, and a cell whose card would break a card rule is listed on stderr
    (exit 1)."""
    from mtboard.sweeps.spec import load_sweep

    sweep = load_sweep(file, root)  # first, before the estimate's imports: a sweep over the cell limit is refused now

    from mtboard.sweeps.estimate import estimate_sweep, plan_table
    from mtboard.sweeps.execute import check_cells
    from mtboard.sweeps.matrix import plan_document, plan_json

    checks = check_cells(sweep, sweep.cells, _work_root(sweep.name, None), environment=False, skip_cached=False)
    est = estimate_sweep(sweep, use_tokenizers=not ratio_only)
    if as_json:
        typer.echo(plan_json(plan_document(sweep, est)))
    else:
        typer.echo(plan_table(sweep, est))
    for c in checks:
        if c.error:
            typer.echo(f"note: cell {c.cell.id}: planned card not checked here: {c.error}", err=True)
    refused = [c.refusal for c in checks if c.refusal]
    for line in refused:
        typer.echo(f"refused: {line}", err=True)
    if refused:
        fail(f"{file}: the sweep would be refused: {len(refused)} of {len(sweep.cells)} cell(s) would write a card "
             "that breaks a card rule (listed above) (fix: correct those cells' fields in the sweep file, or drop "
             "the cells)")
    if budget is not None and est.cost_high_usd is not None and est.cost_high_usd > budget:
        fail(f"over budget: the sweep may cost up to ${est.cost_high_usd:.4f} (estimate ${est.cost_usd:.4f}), "
             f"--budget is ${budget:.4f}; drop cells or raise --budget")
    if budget is not None and est.cost_high_usd is None:
        fail("--budget cannot be checked: some cells have no known price (add them to prompts/prices.yaml or give "
             "price_in/price_out in the sweep file)")


@sweep_app.command("run")
@guarded
def run(
    file: SweepFileArg,
    cell: Annotated[Optional[list[str]], typer.Option("--cell", help="Run only this cell id (repeatable); "
                                                      "default all.")] = None,
    work_root: Annotated[Optional[Path], typer.Option("--work-root", help="Folder of the cells' work directories "
                                                      "(default runs/sweeps/NAME).")] = None,
    budget: Annotated[Optional[float], typer.Option("--budget", min=0.0, help="Refuse to start when the estimate's "
                                                    "upper bound is over this many USD.")] = None,
    submit: Annotated[bool, typer.Option("--submit", help="Copy every new card to submissions/ (as `mtboard "
                                         "submit`, after validating it).")] = False,
    root: RootOpt = None,
) -> None:
    """Run the sweep's cells here (one local model server at a time, API cells concurrently), resumably; print the
    sweep summary (cells, cards, tokens and cost used against the estimate, failures).

    Progress over the whole sweep goes to stderr every MTBOARD_PROGRESS_INTERVAL seconds (default 30)."""
    from mtboard.sweeps.spec import load_sweep

    sweep = load_sweep(file, root)  # first: a sweep over the cell limit is refused before the runner is imported

    from mtboard.cli.environment import environment
    from mtboard.sweeps.estimate import estimate_sweep
    from mtboard.sweeps.execute import SweepRefused, run_sweep, summary_record
    from mtboard.sweeps.matrix import strict_json
    from mtboard.sweeps.summary import summary_text

    only = set(cell) if cell else None
    if only:
        unknown = sorted(only - {c.id for c in sweep.cells})
        if unknown:
            fail(f"no cell {unknown[0]} in {file}; `mtboard sweep plan {file}` lists the cell ids")
    est = estimate_sweep(sweep)
    if budget is not None and (est.cost_high_usd is None or est.cost_high_usd > budget):
        fail(f"over budget: the sweep may cost up to {est.cost_high_usd}, --budget is ${budget:.4f}")
    root = _work_root(sweep.name, work_root)

    def echo(line: str) -> None:
        typer.echo(line, err=True)

    echo(f"sweep       {sweep.name}: {len(sweep.cells) if only is None else len(only)} cell(s), work dirs under "
         f"{root}")
    try:
        result = run_sweep(sweep, root, echo=echo, only=only, interval_s=environment().progress_interval)
    except SweepRefused as exc:
        for line in exc.lines:
            echo(f"refused: {line}")
        fail(exc.one_line())
    except KeyboardInterrupt:
        fail(f"interrupted: finished cells keep their cards and unfinished ones their finished entries under {root}; "
             f"resume with the same command", 130)
    record = summary_record(sweep, result, {c.cell.id: c.as_dict() for c in est.cells})
    from mtboard.core.documents import atomic_write

    root.mkdir(parents=True, exist_ok=True)
    atomic_write(root / "summary.json", (strict_json(record, ensure_ascii=True) + "\n").encode("utf-8"))
    typer.echo(summary_text(record))
    if submit:
        from mtboard.cli.validate import validation_context
        from mtboard.run.submit import find_by_hash, submit_card

        ctx = validation_context(Path("."), None)
        for o in result.outcomes:
            if o.card_path is None:
                continue
            from mtboard.core.documents import load_card

            already = find_by_hash(Path("."), load_card(o.card_path).run_card_hash)
            if already:
                typer.echo(f"submitted   {already} (already there)")
                continue
            sub = submit_card(o.card_path, ctx)
            typer.echo(f"submitted   {sub.relpath}")
    if record["failed"]:
        fail(f"{record['failed']} of {record['cells']} cell(s) failed; run the same command again to retry them")


@sweep_app.command("collect")
@guarded
def collect(
    file: SweepFileArg,
    downloaded: Annotated[Path, typer.Argument(help="Folder actions/download-artifact wrote: one sweep-card-CELL_ID "
                                               "folder per cell, each with card.json.")],
    root: RootOpt = None,
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Trusted corpora folder for validation "
                                                    "(default ROOT/corpora).")] = None,
    body: Annotated[Optional[Path], typer.Option("--body", help="Write the pull request's body (Markdown) "
                                                 "here.")] = None,
) -> None:
    """Check downloaded sweep cards against the plan, validate them and copy them to ROOT/submissions/ (the
    workflow's collect step; ROOT: --root, else the checkout holding the sweep file).

    Exit 0: every card filed (or already there); cells without a card are listed, not refused. Exit 1: N artifact
    folder(s) refused and nothing filed (the accepted cards are listed as held), or an error."""
    from mtboard.cli.validate import validation_context
    from mtboard.sweeps.collect import collect as collect_cards
    from mtboard.sweeps.collect import pr_body
    from mtboard.sweeps.spec import find_root, load_sweep

    root = root or find_root(file)
    sweep = load_sweep(file, root)
    ctx = validation_context(root, corpora)
    typer.echo(f"into        {(ctx.root / 'submissions').resolve()}")
    result = collect_cards(sweep, downloaded, ctx)
    for rel in result.filed:
        typer.echo(f"filed       {rel}")
    for rel in result.already:
        typer.echo(f"already     {rel}")
    for cid in result.missing:
        typer.echo(f"missing     {cid} (no artifact)")
    for name, why in result.refused:
        typer.echo(f"refused     {name}: {why}")
    for name in result.held:
        typer.echo(f"held        {name} (accepted; not filed while others are refused)")
    typer.echo(f"collected   {len(result.filed)} new card(s), {len(result.already)} already submitted, "
               f"{len(result.missing)} missing, {len(result.refused)} refused")
    if body is not None:
        from mtboard.core.documents import atomic_write

        atomic_write(body, pr_body(sweep, result).encode("utf-8"))
    if not result.ok:
        fail(f"{len(result.refused)} of {result.folders} artifact folder(s) refused, nothing filed under "
             f"{(ctx.root / 'submissions').resolve()} (fix: remove or re-run the refused cells' artifacts and "
             f"collect again)")


__all__ = ["plan", "run", "collect", "sweep_app"]
