"""CLI commands: run."""

from __future__ import annotations

from mtboard.cli import app  # noqa: F401
