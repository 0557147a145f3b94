"""The command line (issue 30, docs/ARCHITECTURE.md): :mod:`~mtboard.cli.app` (the typer ``app``, ``fail``,
``guarded``), :mod:`~mtboard.cli.environment` (every ``MTBOARD_*`` variable, read once per command by ``guarded``),
:mod:`~mtboard.cli.entry` (the entry point: imports the one command module a command line names),
:mod:`~mtboard.cli.main` (the whole app: registers every command module), one module per command area. The only
layer that prints, prompts or exits. Empty on purpose: importing a command module must not import the others.
"""
