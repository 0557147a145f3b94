"""CLI command: ``mtboard backends`` — the registered backends and their ``--backend-opt`` settings."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from mtboard.cli.app import app, guarded, output_console


@app.command("backends")
@guarded
def backends() -> None:
    """List the registered backends (built-in and plugins: entry-point group mtboard.backends) with their method
    class, prompt use and --backend-opt settings (type, default, meaning)."""
    from mtboard.backends.base import load_backends, option_rows

    console = output_console()
    for name, cls in sorted(load_backends().items()):
        takes = "raw source (no prompt)" if cls.prompt_format == "raw" else f"prompt (default {cls.default_prompt})"
        console.print(f"[bold]{escape(name)}[/bold]  {cls.method_class.value}; {escape(takes)}; "
                      f"default concurrency {cls.default_concurrency}")
        rows = option_rows(cls)
        if not rows:
            console.print("  no --backend-opt settings\n")
            continue
        table = Table(show_header=True, box=None, padding=(0, 2))
        for col in ("--backend-opt", "type", "default", "meaning"):
            table.add_column(col)
        for row in rows:
            table.add_row(*(escape(x) for x in row))
        console.print(table)
        console.print()


__all__ = ["backends"]
