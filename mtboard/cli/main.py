"""The ``mtboard`` entry point (``[project.scripts]``): the typer :data:`app` of :mod:`mtboard.cli.app` with every
command module registered on it, plus ``mtboard schema``.

Every command turns :class:`mtboard.core.errors.MtboardError` into one line on stderr and exit code 1, never a traceback
(:func:`mtboard.cli.app.guarded`).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from mtboard.cli.app import app, fail, guarded


@app.command()
@guarded
def schema(name: Annotated[str, typer.Argument(help="One of: corpus, run-card, anchor-record, scores-card, "
                                                   "review-record, reviewers, sweep, ledger, model-record, "
                                                   "contamination-claim, canary-sets, canary-run.")]) -> None:
    """Print the JSON Schema of a document (the names of core.schema.SCHEMAS)."""
    from mtboard.core.schema import SCHEMAS

    if name not in SCHEMAS:
        fail(f"unknown schema {name!r}; choose one of: {', '.join(SCHEMAS)}")
    typer.echo(json.dumps(SCHEMAS[name].model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False))


# The command modules register their commands on `app` when imported, after `schema` (the order `--help` lists them).
from mtboard.cli import (anchor, backends, canary, corpus, demo, doctor, judge, ledger, lineage,  # noqa: E402,F401
                              neural, plugins, models, rescore, review, run, site, validate)
from mtboard.cli import sweep  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover - `python -m mtboard.cli.main`
    app(prog_name="mtboard")
