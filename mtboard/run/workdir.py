"""The append-only work directory of one run (issue 3, "Resumability").

Every file is append-only or atomically replaced:

* ``run.json`` — run id, start timestamp and the run's *identity* (method, dataset hash, segment, prompt hashes,
  temperature, max_tokens, sampling, condition, endpoint host hash). Resuming with a different identity is refused.
* ``translations.jsonl`` — one :class:`mtboard.core.schema.TranslationRecord` per finished (run, entry), written the
  moment it finishes and fsynced in groups. The resume unit: an entry with a record whose failure was not a transport/backend failure is never
  sent again. Entries that failed in transport are retried by the next session (the last record wins).
* ``raw.jsonl`` — per request: the JSON body sent, the response as received, the attempt log (never a header, key or
  URL: :mod:`mtboard.llm` scrubs them), with the session number and wall-clock end time.
* ``sessions.jsonl`` — start (and, when not killed, end) time of each session, for ``elapsed_seconds``.
* ``backend.json`` — the backend's ``describe()`` facts (provider, hashed host, engine, local-model gate), so a
  resume with nothing left to send does not start the backend again.
* ``.lock`` — held with an exclusive ``flock`` by the one process running in the directory (:func:`lock_workdir`);
  it records that process's pid, host and start time for the error a second process prints.

A ``kill -9`` loses at most the entries in flight: a finished entry's lines are written (to the page cache) before
the next request of its lane is sent; the fsync that follows in a thread guards against power loss. A torn last line
is cut off before the next session appends.

Storage faults (issue 33 item 5) are :class:`~mtboard.core.errors.StorageError` lines naming the file and the fix,
never an internal error: every write path here maps an OSError whose errno is an environment fault (a full disk or
quota, a read-only file system, no permission, a device error: :data:`mtboard.core.errors.ENVIRONMENT_FAULTS`). A
write that fails part-way is cut back to the file's size before it (``ftruncate``; files are written unbuffered, so
no half line waits in a buffer either), so the lines already written — and fsynced — stay whole and a resume
continues after them; a torn line left by a crash is cut by :func:`_repair_tail` when the next session opens. A work
directory deleted, moved or unmounted while the run writes (its files unlinked, or the path no longer the folder that
was opened: device and inode compared after every write) is refused at the next write, instead of writing on into
files nobody can read.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mtboard.core import safejson
from mtboard.core.decoding import json_line
from mtboard.core.documents import append_whole, atomic_write
from mtboard.core.errors import ConfigError, InputError, StorageError, storage_error
from mtboard.core.schema import BackendFacts, ErrorKind, TranslationRecord, describe_validation_error

TRANSLATIONS = "translations.jsonl"
RAW = "raw.jsonl"
MANIFEST = "run.json"
SESSIONS = "sessions.jsonl"
BACKEND = "backend.json"
LOCK = ".lock"
INCOMPLETE_KINDS = frozenset({ErrorKind.transport, ErrorKind.backend})
"""Failures that are not the model's: they make a run incomplete and are re-sent by the next session."""


def _repair_tail(path: Path) -> int:
    """Cut a torn last line (no trailing newline, e.g. after kill -9). Returns the bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # scan back for the last newline
        pos = size - 1
        block = 65536
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                cut = start + idx + 1
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
                return size - cut
            pos = start
        fh.truncate(0)
        fh.flush()
        os.fsync(fh.fileno())
        return size


@contextmanager
def _faults(path: Path, vanished: Any = None) -> Iterator[None]:
    """Turn an OSError of a write to ``path`` that is an environment fault into a StorageError naming ``path``
    (:func:`mtboard.core.errors.storage_error`); ``vanished`` (a callable returning a StorageError or None) is
    asked first for ``ENOENT``/``ESTALE``, which mean a vanished folder only when the folder existed. Other errnos
    pass unchanged (a bug's OSError stays an internal error)."""
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        if vanished is not None and exc.errno in (errno.ENOENT, errno.ESTALE):
            gone = vanished()
            if gone is not None:
                raise gone from None
        fault = storage_error(exc, str(path))
        if fault is None:
            raise
        raise fault from None


@contextmanager
def lock_workdir(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the work directory ``path`` (created if missing) for the ``with`` block: two
    ``mtboard run`` / ``mtboard sweep run --cell`` processes appending to one directory would interleave and tear
    its JSONL files and mix two sessions' records.

    Uses ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``path/.lock`` (stdlib, POSIX — mtboard runs its model servers in
    bubblewrap, Linux only): the kernel releases the lock when the holder's last descriptor closes, which includes
    any death of the process (``kill -9``, OOM, power loss on reboot), so a stale ``.lock`` file left by a crash never
    blocks; nothing has to be deleted, and no pid-liveness guess (which pid reuse and other hosts break) is made.
    The holder writes its pid, host and start time into the file; a second process reads them for its error (the
    ``filelock`` package takes the same flock but truncates the file on every attempt, which would erase that).
    Locks are per open file description, so a second ``with`` on the same directory in the same process also fails.

    Raises: ConfigError (field ``--work-dir``) at once when another process holds the lock — one line naming the
    directory, the holder's pid and host and the fix; or when ``path`` is a file. StorageError when the folder or
    its lock file cannot be made or written (read-only file system, no permission, disk full).
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError("the work directory path is a file, not a directory", where=str(path), field="--work-dir",
                          fix="pass a new or existing directory")
    with _faults(path):
        path.mkdir(parents=True, exist_ok=True)
    with _faults(path / LOCK):
        fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except ValueError:
            holder = {}
        os.close(fd)
        who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, since {holder.get('started', '?')}"
               if isinstance(holder, dict) else "pid unknown")
        raise ConfigError(f"the work directory is in use by another mtboard process ({who})", where=str(path),
                          field="--work-dir", fix="wait for that run to finish or stop it, or pass another "
                          "--work-dir; the lock goes away by itself when that process ends") from None
    except BaseException:
        os.close(fd)
        raise
    try:
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        with _faults(path / LOCK):
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me, sort_keys=True) + "\n").encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


class WorkDir:
    """The append-only work directory of one run (module docstring)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.session = 0
        self._fh_t: Any = None
        self._fh_r: Any = None
        self._place: tuple[int, int] | None = None
        """(device, inode) of the folder :meth:`open` opened: the path must still name it after every write."""

    # -- storage faults ----------------------------------------------------------------------------------------------
    def vanished(self) -> StorageError | None:
        """The error for a work directory that is no longer where the run opened it (deleted, moved, replaced or
        unmounted), None while it is in place (or was never opened)."""
        if self._place is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == self._place:
            return None
        return StorageError("the work directory vanished while the run was writing to it (deleted, moved or "
                            "unmounted); the records it held went with it", where=str(self.path), field="--work-dir",
                            fix="keep the work directory in place until the run ends (a --work-dir outside folders "
                                "that get cleaned); re-running the command starts the run again in a new folder")

    def _guard(self, path: Path) -> Any:
        """:func:`_faults` for a write to ``path`` inside this work directory."""
        return _faults(path, self.vanished)

    def _check_place(self, *handles: Any) -> None:
        """After a write: the work directory is still the folder that was opened, and no file being appended was
        deleted (its link count 0: the lines went to a file nobody can read). Raises: StorageError."""
        gone = self.vanished()
        if gone is None:
            for fh in handles:
                if fh is not None and os.fstat(fh.fileno()).st_nlink == 0:
                    gone = StorageError("the file was deleted while the run was appending to it",
                                        where=str(getattr(fh, "name", self.path)),
                                        fix="keep the work directory's files until the run ends; re-run the command "
                                            "to resend what the file held")
                    break
        if gone is not None:
            raise gone

    # -- manifest and sessions ---------------------------------------------------------------------------------------
    def open(self, identity: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create or resume. Returns the manifest (run_id, timestamp, identity, plus ``extra`` such as
        ``corpus_path``, recorded at creation and not compared).

        A directory whose run has a different identity but no translation record yet (nothing to mix) is started
        afresh; its files move to ``superseded-<old run id>/``.

        Raises: ConfigError when the directory holds translations of a run with a different identity, or the path is
        not a directory; StorageError when it cannot be written (disk full, read-only, no permission).
        """
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError("the work directory path is a file, not a directory", where=str(self.path),
                              field="--work-dir", fix="pass a new or existing directory")
        with _faults(self.path):
            self.path.mkdir(parents=True, exist_ok=True)
            st = os.stat(self.path)
        self._place = (st.st_dev, st.st_ino)
        with self._guard(self.path):
            return self._open(identity, extra)

    def _open(self, identity: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
        mpath = self.path / MANIFEST
        if mpath.exists():
            manifest = safejson.load_file(mpath)
            old = manifest.get("identity", {}) if isinstance(manifest, dict) else {}
            diffs = [k for k in sorted(set(old) | set(identity)) if old.get(k) != identity.get(k)]
            if diffs and not _read_jsonl(self.path / TRANSLATIONS):
                # nothing was translated under the old settings (say, a mistyped endpoint): keep its files in a
                # subfolder and start afresh instead of refusing
                aside = self.path / f"superseded-{manifest.get('run_id', 'unknown')}"
                aside.mkdir(exist_ok=True)
                for name in (MANIFEST, RAW, SESSIONS, BACKEND, TRANSLATIONS):
                    if (self.path / name).exists():
                        os.replace(self.path / name, aside / name)
                return self._open(identity, extra)
            if diffs:
                k = diffs[0]
                raise ConfigError(f"work directory was started with a different {k} ({old.get(k)!r}, now "
                                  f"{identity.get(k)!r})", where=str(self.path),
                                  fix="re-run with the original options, or use another --work-dir")
        else:
            manifest = {"run_id": str(uuid.uuid4()),
                        "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "identity": identity, **(extra or {})}
            atomic_write(mpath, (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode())
        for name in (TRANSLATIONS, RAW, SESSIONS):
            _repair_tail(self.path / name)
        self.session = len(self.sessions()) + 1
        self._append_line(self.path / SESSIONS, {"session": self.session, "start": time.time()})
        return manifest

    def close_session(self, sent: int = 0) -> None:
        """Record the session's end (and the requests it sent), close the files. The files are closed even when the
        line cannot be written. Raises: StorageError."""
        try:
            self._append_line(self.path / SESSIONS, {"session": self.session, "end": time.time(), "sent": sent})
        finally:
            for fh in (self._fh_t, self._fh_r):
                if fh is not None:
                    with suppress(OSError):
                        fh.close()
            self._fh_t = self._fh_r = None

    def sessions(self) -> dict[int, dict[str, float]]:
        out: dict[int, dict[str, float]] = {}
        for obj in _read_jsonl(self.path / SESSIONS):
            s = out.setdefault(int(obj.get("session", 0)), {})
            for k in ("start", "end", "sent"):
                if k in obj:
                    s[k] = float(obj[k])
        return out

    def elapsed_seconds(self) -> float:
        """Σ over sessions that sent something of (end − start); a killed session ends at its last raw record.

        Sessions that sent nothing (a resume of a finished run, a backend that failed to start) do not count."""
        sessions = self.sessions()
        last_t: dict[int, float] = {}
        if any("end" not in s for s in sessions.values()):  # a killed session: read its raw records' end times
            for obj in _read_jsonl(self.path / RAW):
                s, t = obj.get("session"), obj.get("t_end")
                if isinstance(s, int) and isinstance(t, (int, float)):
                    last_t[s] = max(last_t.get(s, 0.0), float(t))
        total = 0.0
        for sid, s in sessions.items():
            if s.get("sent") == 0:
                continue
            start = s.get("start")
            end = s.get("end", last_t.get(sid))
            if start is not None and end is not None and end > start:
                total += end - start
        return total

    # -- backend description ------------------------------------------------------------------------------------------
    def save_description(self, facts: BackendFacts) -> None:
        """Keep the backend's facts (``describe()``; never a URL or key) for a resume with nothing to send.
        Raises: StorageError."""
        with self._guard(self.path / BACKEND):
            atomic_write(self.path / BACKEND, (json.dumps(facts.model_dump(mode="json"), ensure_ascii=False,
                                                          sort_keys=True, indent=1) + "\n").encode("utf-8"))
            self._check_place()

    def load_description(self) -> BackendFacts | None:
        """The facts :meth:`save_description` kept (None when absent or not JSON; unknown keys ignored).

        Raises: InputError naming the field when the file holds JSON that is not backend facts (hand-edited).
        """
        path = self.path / BACKEND
        if not path.exists():
            return None
        try:
            data = safejson.load_file(path)
        except InputError:
            return None
        try:
            return BackendFacts.model_validate(data)
        except ValidationError as exc:
            raise InputError(describe_validation_error(exc, "BackendFacts").split(": ", 1)[1], where=str(path),
                             fix="delete the file and re-run: the backend describes itself again") from None

    # -- records -----------------------------------------------------------------------------------------------------
    def records(self) -> dict[tuple[int, int], TranslationRecord]:
        """Last record per (run_index, entry_id). Lines that do not parse are skipped."""
        out: dict[tuple[int, int], TranslationRecord] = {}
        path = self.path / TRANSLATIONS
        if not path.exists():
            return out
        with open(path, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    rec = TranslationRecord.model_validate_json(line)
                except ValidationError:
                    continue
                out[(rec.run_index, rec.entry_id)] = rec
        return out

    def finished(self) -> set[tuple[int, int]]:
        """(run, entry) pairs that are never sent again: a record whose failure (if any) was the model's."""
        return {k for k, r in self.records().items() if r.error_kind not in INCOMPLETE_KINDS}

    def append(self, records: list[TranslationRecord], raws: list[dict[str, Any]]) -> None:
        """Append raw lines, then records; fsync each file once (group commit)."""
        self.append_bytes(*self.encode(records, raws))

    @staticmethod
    def encode(records: list[TranslationRecord], raws: list[dict[str, Any]]) -> tuple[bytes, bytes]:
        """(translations bytes, raw bytes): one JSON line per record / raw dict."""
        return (b"".join(r.model_dump_json().encode("utf-8") + b"\n" for r in records),
                b"".join(_line(r) for r in raws))

    def append_bytes(self, record_bytes: bytes, raw_bytes: bytes) -> None:
        """Write already-encoded lines (raw first, then records), then fsync each file once."""
        self.write_bytes(record_bytes, raw_bytes)
        self.sync()

    def write_bytes(self, record_bytes: bytes, raw_bytes: bytes) -> None:
        """Write already-encoded lines, raw first, then records, without fsync: once written they are in the
        kernel's page cache, which a ``kill -9`` of this process does not lose (:meth:`sync` makes them survive a
        power loss too). Unbuffered: a write that fails part-way is cut back
        (:func:`mtboard.core.documents.append_whole`), so a record is either whole in the file or absent (and sent
        again by the next session).

        Raises: StorageError (disk full, read-only, the work directory vanished: module docstring)."""
        if raw_bytes:
            with self._guard(self.path / RAW):
                if self._fh_r is None:
                    self._fh_r = open(self.path / RAW, "ab", buffering=0)
                append_whole(self._fh_r, raw_bytes)
        if record_bytes:
            with self._guard(self.path / TRANSLATIONS):
                if self._fh_t is None:
                    self._fh_t = open(self.path / TRANSLATIONS, "ab", buffering=0)
                append_whole(self._fh_t, record_bytes)
        if raw_bytes or record_bytes:
            with self._guard(self.path):
                self._check_place(self._fh_r, self._fh_t)

    def sync(self) -> None:
        """fsync what :meth:`write_bytes` wrote (only I/O, which releases the GIL: the runner calls it from a
        thread so its event loop keeps going). Raises: StorageError (an fsync's ``ENOSPC``/``EDQUOT``/``EIO``:
        the kernel could not keep what was written)."""
        for name, fh in ((RAW, self._fh_r), (TRANSLATIONS, self._fh_t)):
            if fh is not None:
                with self._guard(self.path / name):
                    os.fsync(fh.fileno())

    def _append_line(self, path: Path, obj: dict[str, Any]) -> None:
        """Append one fsynced line to ``path`` (cut back if the write fails part-way). Raises: StorageError."""
        with self._guard(path):
            with open(path, "ab", buffering=0) as fh:
                append_whole(fh, _line(obj))
                os.fsync(fh.fileno())
                self._check_place(fh)


def _line(obj: dict[str, Any]) -> bytes:
    """One JSONL line (:func:`mtboard.core.decoding.json_line`): never raises for any ``str``, a lone surrogate (a
    raw answer's escaped byte, a JSON-escaped half of a pair) is written as its ``\\uXXXX`` escape, so the raw
    record of an answer read back and encoded with ``surrogateescape`` gives the bytes received."""
    return json_line(obj)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    with open(path, "rb") as fh:
        for line in fh:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


__all__ = ["TRANSLATIONS", "RAW", "MANIFEST", "SESSIONS", "BACKEND", "INCOMPLETE_KINDS", "WorkDir"]
