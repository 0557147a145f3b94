"""CLI command: ``mtboard lineage`` — re-score every committed card whose scorer is not this code's and say which
ranks moved (issue 38 item 2; :mod:`mtboard.ledger.lineage`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded


@app.command()
@guarded
def lineage(
    submissions: Annotated[Path, typer.Option(help="Folder of committed run cards (searched recursively).")] =
    Path("submissions"),
    corpora: Annotated[Path, typer.Option(help="Folder of corpus files.")] = Path("corpora"),
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Folder for the re-scored cards (<dataset id>/<card name>, as under submissions/) and the "
                      "report (lineage.md, lineage.json); default: a new temporary folder, printed.")] = None,
    write: Annotated[bool, typer.Option(
        "--write", help="Also replace the old cards under --submissions with the re-scored ones (one atomic swap of "
                        "the folder; verification records stay and still count through rescored_from).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of Markdown.")] = False,
) -> None:
    """Re-score every card whose scorer (harness, sacrebleu, text normalisation, mechanical policy, semantic model,
    read from its signatures) differs from this code's, from its stored outputs (no translation), and print which
    ranks moved: a Markdown table (board, method row, rank before → after, composite before → after, Δ) for the pull
    request. Cards with judge verdicts or neural metrics are kept from their older scorer and listed. Exit 0 whether
    or not anything moved; non-zero, after writing the report, when a stale card could not be re-scored (no matching
    corpus, a broken seal …): the job must not go green with the board on two scorers by accident."""
    import tempfile

    from mtboard.core.errors import InputError
    from mtboard.core.documents import atomic_write
    from mtboard.ledger.lineage import REFUSED, run_lineage
    from mtboard.score.lineage import current_scorer

    if not submissions.is_dir():
        raise InputError("submissions folder not found", where=str(submissions), fix="pass --submissions DIR")
    folder = out if out is not None else Path(tempfile.mkdtemp(prefix="mtboard-lineage-"))
    report = run_lineage(submissions, corpora, folder, current_scorer(), write=write)
    md, data = report.markdown(), json.dumps(report.as_dict(), ensure_ascii=False, indent=1) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "lineage.md", md.encode())
    atomic_write(folder / "lineage.json", data.encode())
    typer.echo(data if as_json else md, nl=False)
    if not as_json:
        typer.echo(f"\nre-scored cards and report: {folder}" + (f" (and under {submissions})" if report.written
                                                                else ""), err=True)
    failed = [k for k in report.kept if k.reason.startswith(REFUSED)]
    if failed:
        raise InputError(f"{len(failed)} stale card(s) could not be re-scored; the first: {failed[0].reason}",
                         where=failed[0].path, fix="pass --corpora with the corpora the cards were run on, or fix "
                         "the card; the report lists every card kept on its older scorer")
