"""Reading and writing the two documents (corpus, run card) safely and atomically.

* Reads go through :mod:`mtboard.core.safejson` (size cap, no symlinks, strict JSON) and then the strict schema.
* Run cards are written as their RFC 8785 canonical bytes plus a newline, so the file bytes are what gets hashed.
* Corpora are written pretty-printed (sorted keys, 1-space indent, UTF-8) for reviewable diffs; ``dataset.sha256``
  is the SHA-256 of the file bytes (spec §3.3).
* Every write is atomic (temp file in the same folder, fsync, rename).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mtboard.core import canonical, safejson
from mtboard.core.errors import InputError, storage_faults
from mtboard.core.schema import Corpus, RunCard, describe_validation_error

MAX_CORPUS_BYTES = 64 * 1024 * 1024


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write bytes to ``path`` atomically: temp file in the same directory, fsync, ``os.replace``; the temp file is
    removed when anything fails, so ``path`` is either the old file or the new one.

    The temp file (``.NAME.XXXXXXXX.tmp``, :func:`tempfile.mkstemp`'s name) is ``flock``-ed while it is written. A
    process killed outright (``SIGKILL``) cannot remove its temp file; the next ``atomic_write`` of the same ``path``
    removes every such leftover that no live writer holds (issue 34 item 1: the folder holds the old file and nothing
    else again) — only names of exactly that pattern for exactly that file, only regular files.

    Raises: :class:`~mtboard.core.errors.StorageError` naming ``path`` (never the temp file) and the fix when the
    storage refuses the write — a full disk or quota, a read-only file system, no permission … (the errnos of
    :data:`~mtboard.core.errors.ENVIRONMENT_FAULTS`; issue 33 item 5: a failed ``write``/``fsync`` names no file of its
    own); any other OSError unchanged."""
    p = Path(path)
    with storage_faults(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        clear_stale_temps(p)
        while True:
            fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                break
            os.close(fd)  # a clean-up removed it between mkstemp and the lock: take another name
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600; give the usual file mode
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                os.replace(tmp, p)  # before the close: the lock is held until the temp name is gone
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def clear_stale_temps(path: str | os.PathLike[str]) -> list[str]:
    """Remove the temp files :func:`atomic_write` left beside ``path`` when its process was killed: regular files
    named ``.NAME.XXXXXXXX.tmp`` (``NAME`` = ``path``'s name, ``X`` one of mkstemp's characters) whose ``flock`` can
    be taken (no live writer holds them). Returns the names removed; anything else is left alone."""
    p = Path(path)
    pattern = re.compile(rf"\.{re.escape(p.name)}\.[a-z0-9_]{{8}}\.tmp")
    removed: list[str] = []
    try:
        entries = [e for e in os.scandir(p.parent) if pattern.fullmatch(e.name)]
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            pass  # a live writer holds it, or it is gone already
        finally:
            os.close(fd)
    return removed


def append_whole(fh: Any, data: bytes, *, fsync: bool = False) -> None:
    """Append ``data`` to the file ``fh`` opened unbuffered for appending (``open(path, "ab", buffering=0)``):
    short writes are continued, then (``fsync``) the file is flushed to the disk. When a write or the fsync fails
    part-way (``ENOSPC`` after a short write, ``write(2)``), the file is cut back to its size before the append
    (``ftruncate``) so no half line stays to glue the next record onto, and the OSError is re-raised.
    Used by the work directory's JSONL records and the judge cache (issue 33 item 5)."""
    start = os.fstat(fh.fileno()).st_size
    try:
        view = memoryview(data)
        while view:
            n = fh.write(view)
            view = view[n or 0:]
        if fsync:
            os.fsync(fh.fileno())
    except OSError:
        try:
            os.ftruncate(fh.fileno(), start)
        except OSError:
            pass  # the line is torn: readers cut a torn tail on the next open
        raise


def validate_model(model: type, data: Any, where: str):
    """Validate parsed JSON against a schema model; one-line InputError naming file and field on failure."""
    try:
        return model.model_validate(data) if not isinstance(data, (bytes, str)) else model.model_validate_json(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where).split(": ", 1)[1], where=where,
                         fix=f"see `mtboard schema {'corpus' if model is Corpus else 'run-card'}`") from None


def _parse(model: type, raw: bytes, where: str, max_bytes: int):
    # Safe parse first (duplicate keys, NaN, depth, surrogates, big ints), then strict JSON-mode validation so enum
    # strings are accepted while "55.5" / true are not coerced.
    safejson.loads(raw, where=where, max_bytes=max_bytes)
    return validate_model(model, raw, where)


def load_corpus(path: str | os.PathLike[str]) -> tuple[Corpus, str]:
    """Load and validate a corpus file.

    Returns: ``(corpus, sha256_of_file_bytes)``.
    Raises: InputError (one line: file, JSON path, problem, fix).
    """
    return loads_corpus(safejson.read_bytes(path, max_bytes=MAX_CORPUS_BYTES), str(path))


def loads_corpus(raw: bytes, where: str) -> tuple[Corpus, str]:
    """Validate corpus bytes already read (e.g. by :func:`mtboard.core.paths.read_inside`, at most
    :data:`MAX_CORPUS_BYTES`). Returns: ``(corpus, sha256_of_the_bytes)``. Raises: InputError naming ``where``."""
    corpus = _parse(Corpus, raw, where, MAX_CORPUS_BYTES)
    return corpus, canonical.sha256_hex(raw)


def loads_card(raw: bytes, where: str = "<card>", *, parsed: RunCard | None = None) -> RunCard:
    """Validate run-card bytes (strict schema). ``parsed``: the card :func:`parse_card_unchecked` made of these same
    ``raw`` bytes, returned once the safe parse passes instead of validating the bytes a second time (the result is
    the same: both are ``RunCard.model_validate_json(raw)``). Raises: InputError (safe parse or schema)."""
    if parsed is None:
        return _parse(RunCard, raw, where, safejson.MAX_CARD_BYTES)
    safejson.loads(raw, where=where, max_bytes=safejson.MAX_CARD_BYTES)
    return parsed


def parse_card_unchecked(raw: bytes) -> RunCard | None:
    """The card of ``raw`` through the schema's own JSON parser only (pydantic-core: strict JSON-mode validation, no
    :mod:`~mtboard.core.safejson` hazard checks), or None when the schema refuses it. ~18 ms for a 355-entry card
    against ~55 ms for :func:`loads_card` (issue 35, "load"). Only for bytes known to have passed :func:`loads_card`
    under this code before — :mod:`mtboard.ledger.load` uses it when the validation cache holds a verdict for exactly
    these bytes (the cache stores verdicts only of cards that loaded; its key holds the SHA-256 of the bytes and of
    the core code) — or followed by ``loads_card(raw, where, parsed=card)``. For bytes that pass the safe parse the
    result equals :func:`loads_card`'s (the same call; tests/test_documents_fastload.py checks every committed
    card)."""
    try:
        return RunCard.model_validate_json(raw)
    except ValueError:  # ValidationError, and anything else the parser refuses: the full path reports it
        return None


def load_card(path: str | os.PathLike[str]) -> RunCard:
    """Load and validate a run card file (no hash check here; see mtboard.validate). Raises InputError."""
    return loads_card(safejson.read_bytes(path), str(path))


def card_json(card: RunCard) -> dict[str, Any]:
    """The card as plain JSON values (every field present, nulls included)."""
    return card.model_dump(mode="json")


def card_bytes(card: RunCard) -> bytes:
    """Canonical bytes of a card + newline: the exact file content of a written card."""
    return canonical.canonical_bytes(card_json(card)) + b"\n"


def seal(card: RunCard) -> RunCard:
    """Return a copy of ``card`` with ``run_card_hash`` computed (spec §3.9)."""
    data = card_json(card)
    data["run_card_hash"] = canonical.run_card_hash(data)
    return RunCard.model_validate_json(json.dumps(data))


def write_card(card: RunCard, path: str | os.PathLike[str]) -> None:
    """Write a (sealed) card atomically as canonical JSON."""
    atomic_write(path, card_bytes(card))


def corpus_bytes(corpus: Corpus) -> bytes:
    """Pretty, deterministic corpus file bytes (sorted keys, indent 1, UTF-8, optional nulls/empties omitted)."""
    data = corpus.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
    for e in data["entries"]:
        for k in ("variants", "history", "glossary"):
            if e.get(k) == []:
                del e[k]
    return (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def write_corpus(corpus: Corpus, path: str | os.PathLike[str]) -> str:
    """Write a corpus atomically; returns the SHA-256 of the bytes written."""
    data = corpus_bytes(corpus)
    atomic_write(path, data)
    return canonical.sha256_hex(data)
