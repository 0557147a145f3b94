"""``python -m mtboard`` runs the CLI."""

from mtboard.cli import app

app(prog_name="mtboard")
