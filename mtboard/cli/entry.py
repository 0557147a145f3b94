"""The ``mtboard`` console script (``[project.scripts]``) and ``python -m mtboard``: import only the command module the
command line names (issue 35 item 4: modules a command does not use are not imported).

:mod:`mtboard.cli.main` imports all 19 command modules (the corpus importers, the site builder's and the validator's
command code, asyncio for ``anchor`` …) so that ``--help`` can list every command; a command needs one of them.
Measured on this project's 2-CPU machine (2026-12-07, bytecode compiled, five runs each): ``mtboard validate --help``
took 0.85–1.46 s of CPU through :mod:`mtboard.cli.main` and 0.37–0.81 s with only :mod:`mtboard.cli.validate`
imported; ``mtboard --version`` 0.76–1.06 s and 0.10–0.11 s. A command that needs most of the package gains nothing
measurable: ``mtboard validate CARD`` (3.2–4.3 s) and ``mtboard run`` of the 355 EN→ES entries with Apertium
(4.0–5.0 s with a warm semantic cache) measured the same before and after, alternating runs.

:func:`main` reads the first command-line argument: when it is a command or group name of :data:`COMMANDS` (nothing
or another option first, ``--help``, an unknown name, or shell completion: the whole app; ``--version`` first: the
app alone, whose eager option prints and exits), it imports :mod:`mtboard.cli.app` and that one module, which
registers its commands on the same :data:`~mtboard.cli.app.app`, and runs it. A subcommand's help, usage line,
options and errors are the ones the whole app gives (the parent's help is never printed on this path: ``mtboard
--help`` has no command name). tests/test_cli_entry.py checks that :data:`COMMANDS` names the module of every command
:mod:`mtboard.cli.main` registers, and that each module alone registers its commands and loads no other.
"""

from __future__ import annotations

import importlib
import os
import sys

COMMANDS: dict[str, str] = {
    "schema": "schema", "anchor": "anchor", "backends": "backends", "canary": "canary", "corpus": "corpus",
    "demo": "demo", "doctor": "doctor", "judge": "judge", "ledger": "ledger", "lineage": "lineage",
    "neural": "neural", "plugin-gate": "plugins", "models": "models", "rescore": "rescore", "review": "review",
    "run": "run", "build": "site", "validate": "validate", "submit": "validate", "verify": "validate",
    "verify-record": "validate", "validate-scores": "validate", "held-out-check": "validate", "sweep": "sweep",
}
"""Top-level command or group name (as typed) → its module under ``mtboard.cli``."""

COMPLETION_VARIABLE = "_MTBOARD_COMPLETE"
"""The variable click's shell completion sets (``_<PROG>_COMPLETE``): completion needs every command."""


def command_module(argv: list[str]) -> str | None:
    """The module (``mtboard.cli.<name>``) that holds the command ``argv`` (the arguments after the program name)
    starts with (``mtboard.cli.app`` itself for ``--version`` first), or None when the whole app is needed: no
    argument, another option first (``--help``), a name that is not a command, or shell completion running."""
    if not argv or os.environ.get(COMPLETION_VARIABLE):
        return None
    if argv[0] == "--version":  # the app's own eager option (mtboard.cli.app): it prints and exits first
        return "mtboard.cli.app"
    module = COMMANDS.get(argv[0])
    return f"mtboard.cli.{module}" if module else None


def main(argv: list[str] | None = None) -> None:
    """Run the ``mtboard`` command line on ``argv`` (default: ``sys.argv[1:]``), importing only the command's module
    when :func:`command_module` names one, else every module (:mod:`mtboard.cli.main`). Exits as the command does
    (click's ``standalone_mode``: ``SystemExit`` with the command's code)."""
    args = sys.argv[1:] if argv is None else list(argv)
    module = command_module(args)
    if module is None:
        from mtboard.cli.main import app
    else:
        from mtboard.cli.app import app

        importlib.import_module(module)
    app(args=args, prog_name="mtboard")


__all__ = ["COMMANDS", "COMPLETION_VARIABLE", "command_module", "main"]

if __name__ == "__main__":  # pragma: no cover - `python -m mtboard.cli.entry`
    main()
