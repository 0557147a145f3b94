"""Reuse a board's run outputs when nothing they are made from changed (issue 35 item 3: "a build after adding one
card re-validates and re-renders only what that card touches (its board, its views, its run pages, the indexes)").

Adding a card to a board changes every run of *that* board (the field median of each entry moves, and with it every
run's "Δ vs field median"; ranks move), but no run of another board. With a cache folder (``mtboard build --cache``),
each board's **run outputs** are kept in ``DIR/boards/KK/KEY.zip`` under a key (:meth:`BoardReuse.key`) and read
back by the next build whose key for that board is the same:

* every run's page Markdown (``runs/<page id>.md``, the costliest pages to render: the per-entry rows, filters and
  groups of :func:`mtboard.site.runpage.context`);
* every run's data file (``data/runs/<page id>.json.gz``, :mod:`mtboard.site.rundata`);
* the board's compare data files (``data/pairs/<board>*.json``, :func:`mtboard.site.compare.pairs_files`).

**Key** (hex SHA-256; one decision, the inputs of everything above):

* the *salt*, made once a build (:meth:`BoardReuse.make`): :data:`FORMAT`; every ``.py`` file of ``mtboard``
  (:func:`mtboard.ledger.cache.code_hash`) and every file under ``mtboard/site/templates``; Python's version and the
  installed distributions (Jinja2, MarkupSafe, NumPy …); the bootstrap ``resamples``; the repository the run pages
  link cards in; and a digest (:func:`mtboard.ledger.digest.digest`) of every input of the build that is not a card — corpora (their
  texts and licences), judge anchors, model records, contamination claims, canary runs;
* the board's key and, for each of its cards in board order: path, page id, the SHA-256 of the card file's bytes
  (:attr:`mtboard.ledger.load.LoadedCard.file_sha256`: none for a card not read from a file, or whose ``card`` was
  replaced since, and then the board is rendered), its verification (tier, record, attestation) and its pooled
  community review;
* the digest of the board's ``LedgerBoard`` in the published ledger (every row's standing, rank, evidence, flips,
  tries, marks …): a decision that reached the board from outside it would change this and miss;
* the official boards' gold links set on the board's method rows (:func:`mtboard.site.officialpages.attach_gold_links`);
* the corpus's diagnostic board as the run pages show it (its page and entry count), which the diagnostic segment's
  cards — not on the board — decide when the corpus itself is not loaded.

An input the digest cannot encode (a type :func:`mtboard.ledger.digest.digest` does not know) turns reuse off for the build: every board
is rendered, as without a cache.

**Nothing read is trusted** (the folder may come back from ``actions/cache``, as the other caches of
:mod:`mtboard.ledger.cache`): an entry is a regular file (no link, at most :data:`MAX_ENTRY_BYTES`) read through real
folders only; a ZIP archive whose members are all *stored* (no decompression: no archive bomb), holding a member
``.key`` equal to the key and then exactly the members this build would write for the board — ``p/<path>`` for each
expected page (UTF-8 text) and ``d/<path>`` for each expected data file — no more, no fewer — and members that do
not overlap (their sizes and headers fit in the file: Python's :mod:`zipfile` checks overlaps only from 3.11.8 on),
after an end-of-central-directory record, read first, that counts exactly those members. Anything else is a miss:
the board is rendered and the entry replaced. A cache entry is written atomically (a temporary file renamed), never
through a link. As for the flip cache, a forged but well-formed entry changes what the pages show: only main's builds
write the site workflow's cache (docs/SECURITY.md §6). After rendering, :meth:`BoardReuse.prune` removes every board
entry the build neither read nor stored, so the folder holds one entry per board.

The result is byte-identical to a build without a cache (tests/test_site_reuse.py builds both after changing a card
on one board, a card's review and a model record, and compares every file).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import safejson
from mtboard.core.errors import MtboardError
from mtboard.core.cachefiles import prune_entries, real_folders, write_entry
from mtboard.ledger.cache import code_hash, installed_distributions
from mtboard.ledger.digest import digest
from mtboard.site.incremental import _tree_digest

FORMAT = "mtboard-board-reuse/1"
"""Hashed into every key: a change of the entry's layout misses every old entry."""
FOLDER = "boards"
MAX_ENTRY_BYTES = 512 * 1024 * 1024
"""Largest entry read (a 2,000-run board of 355-entry cards is ~60 MB)."""
KEY_MEMBER = ".key"
PAGE, DATA = "p/", "d/"
NOT_DIGESTED = ("cards", "rejected", "warnings", "cache_hits", "cache_misses", "verdict_keys", "card_hits",
                "card_misses", "card_keys")
"""Fields of :class:`mtboard.ledger.load.Inputs` the salt leaves out: the cards go into each board's key; the rest
is what the build reports, not what it renders from."""


def _templates_digest() -> str:
    h = hashlib.sha256()
    _tree_digest(h, "templates", Path(__file__).resolve().parent / "templates")
    return h.hexdigest()


@dataclass
class Outputs:
    """One board's run outputs: ``pages`` (site path → Markdown or JSON text) and ``data`` (site path → bytes)."""

    pages: dict[str, str] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)


@dataclass
class BoardReuse:
    """The boards' run outputs by key in ``folder/boards/`` (module docstring). ``hits``/``misses`` count
    :meth:`get` lookups."""

    folder: Path
    salt: str
    ledger_boards: dict[str, str]
    """Board key → :func:`digest` of its ``LedgerBoard`` in this build's ledger."""
    hits: int = 0
    misses: int = 0
    used: set[str] = field(default_factory=set)
    """The keys this build read or stored: :meth:`prune` keeps only their entries."""

    @classmethod
    def make(cls, folder: Path | None, inputs: Any, ledger: Any, *, resamples: int,
             repository: str | None) -> BoardReuse | None:
        """The build's reuse (None without a cache ``folder``, or when an input has no canonical encoding: then
        every board is rendered). ``inputs``: the build's :class:`mtboard.ledger.load.Inputs`; ``ledger``: its
        published :class:`mtboard.core.schema.ledger.Ledger`."""
        if folder is None:
            return None
        try:
            rest = {f.name: getattr(inputs, f.name) for f in dataclasses.fields(inputs) if f.name not in NOT_DIGESTED}
            salt = digest([FORMAT, code_hash(), _templates_digest(), sys.version, installed_distributions(), resamples,
                           repository, digest(rest)])
            boards = {b.key: digest(b) for b in ledger.boards}
        except TypeError:
            return None
        return cls(folder, salt, boards)

    def key(self, lb: Any) -> str | None:
        """The key of board ``lb``'s run outputs (module docstring); None when one of its inputs has no canonical
        encoding (the board is rendered and nothing is stored)."""
        if not all(lc.file_sha256 for lc in lb.cards):
            return None
        try:
            cards = [(lc.path, lc.page_id, lc.file_sha256, lc.verification, lc.review) for lc in lb.cards]
            gold = [(i, m.key, m.gold) for i, view in enumerate(lb.views) for m in view.methods if m.gold]
            diag = lb.diagnostic
            diag = None if diag is None else (diag.page, diag.entries)  # made from the diagnostic segment's cards
            return digest([self.salt, lb.key, self.ledger_boards.get(lb.key), cards, gold, diag])
        except TypeError:
            return None

    def _path(self, key: str) -> Path:
        return self.folder / FOLDER / key[:2] / f"{key}.zip"

    def get(self, key: str | None, pages: set[str], data: set[str]) -> Outputs | None:
        """The stored outputs of ``key`` when a valid entry holds exactly the ``pages`` and ``data`` paths this build
        writes for the board, else None (a miss; also for ``key`` None)."""
        found = None if key is None else self._read(key, pages, data)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return found

    def _read(self, key: str, pages: set[str], data: set[str]) -> Outputs | None:
        path = self._path(key)
        if not real_folders(self.folder, path):
            return None
        want = {KEY_MEMBER} | {PAGE + p for p in pages} | {DATA + d for d in data}
        try:
            raw = safejson.read_bytes(path, max_bytes=MAX_ENTRY_BYTES)
            if not _sound(raw, len(want)):
                return None
            with zipfile.ZipFile(io.BytesIO(raw)) as z:
                infos = z.infolist()
                names = [i.filename for i in infos]
                # members may not overlap (zipfile before 3.11.8 does not check): what they hold, with their local
                # headers, fits in the archive, so reading them returns no more bytes than the file has
                held = sum(i.file_size + 30 + len(i.filename.encode("utf-8")) + len(i.extra) for i in infos)
                if (len(names) != len(want) or set(names) != want or held > len(raw)
                        or any(i.compress_type != zipfile.ZIP_STORED or i.compress_size != i.file_size
                               for i in infos)
                        or z.read(KEY_MEMBER) != key.encode()):
                    return None
                out = Outputs()
                for name in names:
                    if name.startswith(PAGE):
                        out.pages[name[len(PAGE):]] = z.read(name).decode("utf-8")
                    elif name.startswith(DATA):
                        out.data[name[len(DATA):]] = z.read(name)
                return out
        except (MtboardError, OSError, zipfile.BadZipFile, UnicodeDecodeError, KeyError, ValueError, EOFError):
            return None

    def put(self, key: str | None, outputs: Outputs) -> None:
        """Store ``outputs`` under ``key`` (nothing for ``key`` None). Raises nothing: a cache only saves time."""
        if key is None:
            return
        self.used.add(key)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(_member(KEY_MEMBER), key.encode())
            for p, text in sorted(outputs.pages.items()):
                z.writestr(_member(PAGE + p), text.encode("utf-8"))
            for d, blob in sorted(outputs.data.items()):
                z.writestr(_member(DATA + d), blob)
        write_entry(self.folder, self._path(key), buf.getvalue())


    def prune(self) -> int:
        """Remove every board entry (``boards/KK/*.zip``) this build neither read nor stored
        (:func:`mtboard.core.cachefiles.prune_entries`): a board's entry is replaced whenever its key changes (any code,
        template, package or non-card input change replaces them all), and the site workflow saves the folder after
        every build, so without this it would grow by a copy of every run page per code change. ``mtboard build``
        calls it when it prunes the cache (``--prune-cache``, its default). Returns the number removed; raises
        nothing."""
        return prune_entries(self.folder, FOLDER, self.used)


def _sound(raw: bytes, members: int) -> bool:
    """Whether ``raw`` ends with an end-of-central-directory record (no comment) counting ``members`` entries — from
    65,535 members on (a board of ~32,800 runs), the count of the ZIP64 record its locator points to: read before
    :class:`zipfile.ZipFile` parses the directory, so a planted archive of a million records costs nothing to
    refuse."""
    if len(raw) < 22 or raw[-22:-18] != b"PK\x05\x06" or raw[-2:] != b"\0\0":
        return False
    count = int.from_bytes(raw[-12:-10], "little")
    if count != 0xFFFF:
        return count == members
    locator = raw[-42:-22]
    if len(locator) != 20 or locator[:4] != b"PK\x06\x07":
        return False
    at = int.from_bytes(locator[8:16], "little")
    record = raw[at:at + 56]
    return len(record) == 56 and record[:4] == b"PK\x06\x06" and int.from_bytes(record[32:40], "little") == members


def _member(name: str) -> zipfile.ZipInfo:
    """A stored member with a fixed date: the same outputs give the same archive bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    return info


__all__ = ["BoardReuse", "FORMAT", "Outputs", "digest"]
