"""Files of a build cache folder that may come back from an archive (``actions/cache``), whatever reads them: the
folder checks, the atomic entry write and the pruning every cache of ``mtboard build`` shares (issue 35 item 3;
docs/SECURITY.md §6). The caches themselves — what a key holds, what an entry must look like — live with the stage
that computes what they store: :mod:`mtboard.ledger.cache` (verdicts, resamples, flips), :mod:`mtboard.ledger.boardstats`
(a board's statistics), :mod:`mtboard.score.sentinels` (scored sentinels), :mod:`mtboard.site.reuse` (a board's run
outputs)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path


def real_folders(root: Path, path: Path) -> bool:
    """Whether every folder between the cache folder ``root`` and ``path`` (an entry's path under it) is a real
    directory or absent — no link, no file: nothing is read or written through a directory link planted in a cache
    restored from an archive (issue 35 review; ``root`` itself may be a link the user made). Raises nothing."""
    try:
        parts = path.parent.relative_to(root).parts
    except ValueError:
        return False
    folder = root
    for part in parts:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not stat.S_ISDIR(mode):
            return False
    return True


def regular_file(path: Path) -> bool:
    """Whether ``path`` is itself a regular file (not a link, not a folder). False — never an error — when it cannot
    be looked at: an unreadable folder on the way (EACCES, which :meth:`pathlib.Path.is_file` raises on Python 3.11;
    a restored archive keeps the folders' modes) makes an entry a miss, as any other bad entry."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def write_entry(root: Path, path: Path, data: bytes) -> None:
    """Write one cache entry atomically: an ``O_EXCL`` temporary file renamed over ``path`` (which replaces a planted
    link itself, never what it points to); a real folder planted at ``path`` is removed first. Skipped when a folder
    on the way is a link (:func:`real_folders`) or anything fails: a cache only saves time. Raises nothing."""
    tmp = None
    try:
        if not real_folders(root, path):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if not real_folders(root, path):
            return
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


KINDS: dict[str, str] = {"validation": ".json", "resamples": ".f64", "flips": ".json", "sentinels": ".json",
                         "boards": ".zip", "boardstats": ".bin", "cards": ".json"}
"""Every kind of entry a build keeps in its cache folder, by subfolder, with its file suffix: validation verdicts
(:class:`mtboard.ledger.cache.ValidationCache`), resampled chrF++ (:class:`mtboard.ledger.cache.ResampleCache`), flip
distances (:class:`mtboard.ledger.cache.FlipCache`), scored sentinels (:func:`mtboard.score.sentinels.sentinels`;
flat, no ``KK`` level), a board's statistics (:class:`mtboard.ledger.boardstats.BoardStats`), a board's run
outputs (:mod:`mtboard.site.reuse`) and a card's header and summary (:class:`mtboard.ledger.cardcache.CardCache`). Every entry is named by its key, 64
lowercase hex digits. The HTML of reused pages (:mod:`mtboard.site.incremental`) and the GGUF facts
(:mod:`mtboard.inputs.binding`) are one folder and one file, replaced by each build: they do not grow."""

_ENTRY = re.compile(r"[0-9a-f]{64}")
_TEMPORARY = re.compile(r"\.[0-9a-f]{64}\..+\.tmp|\.tmp-.+", re.DOTALL)
"""A killed write's file: :func:`write_entry`'s ``.KEY.SUFFIX.XXXXXXXX.tmp``, or ``.tmp-XXXXXXXX`` of the sentinel
writer before it used :func:`write_entry`."""


def prune_entries(root: Path, kind: str, keep: set[str]) -> int:
    """Remove every entry of ``kind`` (a subfolder of :data:`KINDS`) under the cache folder ``root`` whose key is
    not in ``keep``, and the temporary files a killed write left there: what ``mtboard build`` does with the keys a
    build read or wrote, so the folder the site workflow saves holds what the next build can use and no more (issue
    35 item 3; each code change otherwise adds a verdict per card, a resample per row-view and a flip per adjacent
    pair). Only files named as an entry (64 hex digits and the kind's suffix) or as a killed write are looked at —
    a ``--cache`` pointed at the wrong folder loses no other file — in ``root/kind/`` and its ``KK`` folders only,
    through real folders (:func:`real_folders`); only regular files are removed: a link is never followed (it is
    never read either), a folder in an entry's place is left alone. Returns the number of files removed; raises
    nothing (a cache only saves time)."""
    suffix = KINDS[kind]
    top = root / kind
    removed = 0
    try:
        if not real_folders(root, top / "x") or not stat.S_ISDIR(os.lstat(top).st_mode):
            return 0
        folders = [top] + sorted(p for p in top.iterdir() if stat.S_ISDIR(os.lstat(p).st_mode))
    except OSError:
        return 0
    for folder in folders:
        try:
            names = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in names:
            name = entry.name
            stale = (name.endswith(suffix) and _ENTRY.fullmatch(name[:-len(suffix)]) is not None
                     and name[:-len(suffix)] not in keep) or _TEMPORARY.fullmatch(name) is not None
            if stale and regular_file(entry):
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed += 1
    return removed


__all__ = ["KINDS", "prune_entries", "real_folders", "regular_file", "write_entry"]
