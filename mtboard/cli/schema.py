"""``mtboard schema NAME``: print the JSON Schema of a document (the names of ``core.schema.SCHEMAS``)."""

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
