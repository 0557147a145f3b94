"""A citable board (issue 31 item 6): every build's ledger kept as a dated snapshot with a permalink.

The site publishes each snapshot as ``data/snapshots/<name>.json.gz`` (the ledger as it was; see below) and a page
``history/<name>.html`` ("board as of <date>", the build id and the commit it was built from), listed on
``history.html`` with ``data/snapshots/index.json``. A snapshot's *name* is ``<YYYY-MM-DD>-<build id>``: one per
distinct board per day. Earlier snapshots come from a folder (``mtboard build --snapshots DIR``; the site workflow
fills it from the published site, so the history grows with every deploy).

A snapshot is published gzip-compressed (``data/snapshots/<name>.json.gz``, RFC 1952, mtime 0; issue 35): a ledger
is ~5 KB a method row, so 10,000 cards make a ~50 MB snapshot and a few dozen builds would fill the 1 GB that
GitHub Pages publishes; gzip keeps a seventh to a ninth of it (measured on synthetic boards: 989 KB → 112 KB at 200
rows, 5.92 MB → 0.89 MB at 1,000). A snapshot
published before as ``<name>.json`` keeps that file name (a permalink does not move); ``data/snapshots/index.json``
names each snapshot's ``file``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mtboard.core.errors import MtboardError
from mtboard.core.schema.ledger import Ledger

MAX_SNAPSHOTS = 2000
"""At most this many earlier snapshots are read (newest kept): a bound on the work a folder can ask for."""


def snapshot_name(doc: Ledger) -> str:
    """``<YYYY-MM-DD>-<build id>`` of a ledger (its build date and the build id)."""
    return f"{doc.built_at[:10]}-{doc.build}"


@dataclass(frozen=True)
class Snapshot:
    """One earlier (or this build's) ledger and how it is published: ``compressed`` True for
    ``data/snapshots/<name>.json.gz`` (every new snapshot), False for a ``<name>.json`` published before snapshots
    were compressed (its permalink kept)."""

    doc: Ledger
    compressed: bool = True

    @property
    def name(self) -> str:
        return snapshot_name(self.doc)

    @property
    def file(self) -> str:
        """The published file's path from the site root: ``data/snapshots/<name>.json.gz`` (or ``.json``)."""
        return f"data/snapshots/{self.name}.json{'.gz' if self.compressed else ''}"


def load_snapshots(folder: Path | None) -> tuple[list[Snapshot], list[str]]:
    """Every ``*.json`` and ``*.json.gz`` ledger directly in ``folder`` (safe JSON, strict schema, a bounded gunzip:
    :func:`mtboard.core.safejson.read_gzip_bytes`; symlinks refused), newest first, one per name (of a name's files,
    the first in file-name order); unreadable files become warnings (one line each). At most
    :data:`MAX_SNAPSHOTS` files are read, the last in file-name order. A missing folder gives none."""
    from mtboard.ledger.diff import load_previous

    if folder is None or not folder.is_dir():
        return [], []
    found: dict[str, Snapshot] = {}
    warnings: list[str] = []
    paths = sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")) and p.name != "index.json")
    for path in paths[-MAX_SNAPSHOTS:]:
        compressed = path.name.endswith(".gz")
        try:
            doc = load_previous(path, "--snapshots", compressed=compressed)
        except MtboardError as exc:
            warnings.append(f"snapshot skipped: {exc.one_line()}")
            continue
        found.setdefault(snapshot_name(doc), Snapshot(doc, compressed))
    return sorted(found.values(), key=lambda s: (s.doc.built_at, s.doc.build), reverse=True), warnings


__all__ = ["MAX_SNAPSHOTS", "Snapshot", "snapshot_name", "load_snapshots"]
