"""The ``mtboard`` command line (typer). The only module that prints, prompts or exits.

Every command turns :class:`mtboard.errors.MtboardError` into one line on stderr and exit code 1, never a traceback
(tracebacks could show locals holding API keys).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Callable

import typer

from mtboard import __version__
from mtboard.errors import MtboardError

app = typer.Typer(name="mtboard", no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Open machine-translation evaluation arena: run, score, validate, publish.")
corpus_app = typer.Typer(no_args_is_help=True, help="Import, check and merge corpora (spec §2).")
app.add_typer(corpus_app, name="corpus")


def fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def guarded(fn: Callable) -> Callable:
    """Decorator: MtboardError → one line on stderr, exit 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MtboardError as exc:
            fail(exc.one_line())
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False) -> None:
    if version:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.command()
@guarded
def schema(name: Annotated[str, typer.Argument(help="corpus | run-card")]) -> None:
    """Print the JSON Schema of a document (corpus or run-card)."""
    from mtboard.schema import SCHEMAS

    if name not in SCHEMAS:
        fail(f"unknown schema {name!r}; choose one of: {', '.join(SCHEMAS)}")
    typer.echo(json.dumps(SCHEMAS[name].model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))


# Command modules register themselves on `app` when imported.
from mtboard.commands import corpus, doctor, judge, run, site, validate  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover
    # `python -m mtboard.cli` runs this file as `__main__`, while the command modules registered their commands on
    # the `app` of the imported module `mtboard.cli`: run that one.
    from mtboard.cli import app as _registered_app

    _registered_app()
