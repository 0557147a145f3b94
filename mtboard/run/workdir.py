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
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mtboard.core import safejson
from mtboard.core.decoding import json_line
from mtboard.core.documents import atomic_write
from mtboard.core.errors import ConfigError, InputError
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
    directory, the holder's pid and host and the fix; or when ``path`` is a file.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError("the work directory path is a file, not a directory", where=str(path), field="--work-dir",
                          fix="pass a new or existing directory")
    path.mkdir(parents=True, exist_ok=True)
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

    # -- manifest and sessions ---------------------------------------------------------------------------------------
    def open(self, identity: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create or resume. Returns the manifest (run_id, timestamp, identity, plus ``extra`` such as
        ``corpus_path``, recorded at creation and not compared).

        A directory whose run has a different identity but no translation record yet (nothing to mix) is started
        afresh; its files move to ``superseded-<old run id>/``.

        Raises: ConfigError when the directory holds translations of a run with a different identity, or the path is
        not a directory.
        """
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError("the work directory path is a file, not a directory", where=str(self.path),
                              field="--work-dir", fix="pass a new or existing directory")
        self.path.mkdir(parents=True, exist_ok=True)
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
                return self.open(identity, extra)
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
        self._append_line(self.path / SESSIONS, {"session": self.session, "end": time.time(), "sent": sent})
        for fh in (self._fh_t, self._fh_r):
            if fh is not None:
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
        """Keep the backend's facts (``describe()``; never a URL or key) for a resume with nothing to send."""
        atomic_write(self.path / BACKEND, (json.dumps(facts.model_dump(mode="json"), ensure_ascii=False,
                                                      sort_keys=True, indent=1) + "\n").encode("utf-8"))

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
        power loss too)."""
        if raw_bytes:
            if self._fh_r is None:
                self._fh_r = open(self.path / RAW, "ab")
            self._fh_r.write(raw_bytes)
            self._fh_r.flush()
        if record_bytes:
            if self._fh_t is None:
                self._fh_t = open(self.path / TRANSLATIONS, "ab")
            self._fh_t.write(record_bytes)
            self._fh_t.flush()

    def sync(self) -> None:
        """fsync what :meth:`write_bytes` wrote (only I/O, which releases the GIL: the runner calls it from a
        thread so its event loop keeps going)."""
        for fh in (self._fh_r, self._fh_t):
            if fh is not None:
                os.fsync(fh.fileno())

    def _append_line(self, path: Path, obj: dict[str, Any]) -> None:
        with open(path, "ab") as fh:
            fh.write(_line(obj))
            fh.flush()
            os.fsync(fh.fileno())


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
