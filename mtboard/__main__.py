"""``python -m mtboard`` runs the CLI."""

from mtboard.cli.main import app

app(prog_name="mtboard")
