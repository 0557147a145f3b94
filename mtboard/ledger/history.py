"""A citable board (issue 31 item 6): every build's ledger kept as a dated snapshot with a permalink.

The site publishes each snapshot as ``data/snapshots/<name>.json`` (the ledger as it was) and a page
``history/<name>.html`` ("board as of <date>", the build id and the commit it was built from), listed on
``history.html`` with ``data/snapshots/index.json``. A snapshot's *name* is ``<YYYY-MM-DD>-<build id>``: one per
distinct board per day. Earlier snapshots come from a folder (``mtboard build --snapshots DIR``; the site workflow
fills it from the published site, so the history grows with every deploy).
"""

from __future__ import annotations

from pathlib import Path

from mtboard.core.errors import MtboardError
from mtboard.core.schema.ledger import Ledger

MAX_SNAPSHOTS = 2000
"""At most this many earlier snapshots are read (newest kept): a bound on the work a folder can ask for."""


def snapshot_name(doc: Ledger) -> str:
    """``<YYYY-MM-DD>-<build id>`` of a ledger (its build date and the build id)."""
    return f"{doc.built_at[:10]}-{doc.build}"


def load_snapshots(folder: Path | None) -> tuple[list[Ledger], list[str]]:
    """Every ``*.json`` ledger directly in ``folder`` (safe JSON, strict schema; symlinks refused), newest first, one
    per name; unreadable files become warnings (one line each). A missing folder gives none."""
    from mtboard.ledger.diff import load_previous

    if folder is None or not folder.is_dir():
        return [], []
    found: dict[str, Ledger] = {}
    warnings: list[str] = []
    for path in sorted(folder.glob("*.json"))[-MAX_SNAPSHOTS:]:
        if path.name == "index.json":
            continue
        try:
            doc = load_previous(path, "--snapshots")
        except MtboardError as exc:
            warnings.append(f"snapshot skipped: {exc.one_line()}")
            continue
        found.setdefault(snapshot_name(doc), doc)
    return sorted(found.values(), key=lambda d: (d.built_at, d.build), reverse=True), warnings


__all__ = ["MAX_SNAPSHOTS", "snapshot_name", "load_snapshots"]
