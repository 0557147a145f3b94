"""CLI command: ``mtboard demo`` — the main job on the embedded default (see :mod:`mtboard.demo`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli import app, guarded


@app.command()
@guarded
def demo(
    gemma: Annotated[Optional[bool], typer.Option("--gemma/--no-gemma", help="Also run Gemma 3 270M through the "
                                                  "gguf backend (default: when the local extra is installed).")] =
    None,
    gemma_limit: Annotated[int, typer.Option("--gemma-limit", min=1, help="Entries for the Gemma arm.")] = 40,
) -> None:
    """Translate corpora/mtb-en-es-dev.json with Apertium (and Gemma 270M if installed), score, validate the run
    cards and build the leaderboard site into build/site. Needs no API key and no server."""
    from mtboard.commands.run import _RichProgress
    from mtboard.demo import run_demo

    root = Path.cwd()
    if not (root / "mkdocs.yml").is_file() or not (root / "corpora").is_dir():
        raise typer.BadParameter("run `mtboard demo` from the mtboard checkout (the folder with mkdocs.yml)")
    show = sys.stderr.isatty() or bool(os.environ.get("MTBOARD_PROGRESS"))
    result = run_demo(root, gemma=gemma, gemma_limit=gemma_limit,
                      progress_factory=lambda label: _RichProgress(label, enabled=show),
                      note=lambda m: typer.echo(f"demo: {m}", err=True))
    typer.echo("")
    for r in result.runs:
        typer.echo(f"{r.method}: {r.summary}")
        typer.echo(f"  card {r.card_path}")
    for s in result.skipped:
        typer.echo(f"skipped: {s}")
    typer.echo(f"site: {result.site_cards} cards on the leaderboard, including the run(s) above")
    typer.echo(f"open file://{result.site_index}")
    typer.echo("or serve it: .venv/bin/mtboard build --submissions build/demo/submissions --serve "
               "(then http://127.0.0.1:8000/)")
