"""CLI commands: doctor."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

import typer

from mtboard.cli import app, guarded, output_console


@app.command()
@guarded
def doctor() -> None:
    """List which optional parts are available (Apertium, local model server, tokenizers, analysers, GPU, Chromium)
    and what to install for each missing one."""
    from mtboard.doctor import probes

    table = Table(title="mtboard doctor", show_lines=False)
    table.add_column("part")
    table.add_column("status")
    table.add_column("found")
    table.add_column("to install")
    found = probes()
    for p in found:
        table.add_row(escape(p.part), "[green]ok[/green]" if p.ok else "[yellow]missing[/yellow]", escape(p.found),
                      escape(p.fix))
    output_console().print(table)
    for p in found:  # full paths on their own lines: a table cell wraps them
        if p.path:
            typer.echo(f"{p.part}: {p.path}" + ("" if p.ok else f"  (not there yet: {p.fix})"))
