"""CLI commands: corpus."""

from __future__ import annotations

from mtboard.cli import app, corpus_app  # noqa: F401
