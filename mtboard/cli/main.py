"""The whole ``mtboard`` command line: the typer :data:`app` of :mod:`mtboard.cli.app` with every command module
registered on it (``--help`` lists them in this order). The console script and ``python -m mtboard`` start through
:func:`mtboard.cli.entry.main`, which imports only the module of the command asked for and this module for anything
else (``mtboard``, ``mtboard --help``, an unknown command); library code and tests that drive the CLI in-process
(``typer.testing.CliRunner``) import :data:`app` from here.

Every command turns :class:`mtboard.core.errors.MtboardError` into one line on stderr and exit code 1, never a traceback
(:func:`mtboard.cli.app.guarded`).
"""

from __future__ import annotations

from mtboard.cli.app import app

# The command modules register their commands on `app` when imported, in this order (the order `--help` lists them);
# mtboard.cli.entry.COMMANDS names each command's module (tests/test_cli_entry.py keeps the two in step).
from mtboard.cli import schema  # noqa: E402,F401,I001
from mtboard.cli import (anchor, backends, canary, corpus, demo, doctor, judge, ledger, lineage,  # noqa: E402,F401
                         neural, plugins, models, rescore, review, run, site, validate)
from mtboard.cli import sweep  # noqa: E402,F401

__all__ = ["app"]

if __name__ == "__main__":  # pragma: no cover - `python -m mtboard.cli.main`
    app(prog_name="mtboard")
