"""The judge cache and answer log in the work directory.

Layout (under ``WORKDIR/judge/``):

* ``cache.jsonl`` — append-only, one fsynced line per judge answer received: ``key``, ``judge_model``,
  ``prompt_sha256``, ``input_sha256``, the raw request body (never headers or keys), the answer text, finish reason,
  error kind, usage and the raw response. Keyed by ``sha256(canonical{judge_model, prompt_sha256, input_sha256})``
  where ``input_sha256`` hashes the canonical request body (messages, max_tokens, sampling) and the judge replicate
  index. A key seen before is answered from the file: re-running a judge costs nothing (issue 5). Transport failures
  (the service failed) are never cached, so a re-run asks again.
* ``<kind>.answers.jsonl`` — rewritten at the end of each judging: every attempt that decided this card's verdicts
  (entry, replicate, attempt, cache key, whether it came from the cache, the answer text, and the parse outcome).

Storage faults (issue 33 item 5): a write the disk refuses (full, read-only, quota, no permission …) raises
:class:`~mtboard.core.errors.StorageError` naming the file; an append cut short is taken back (``ftruncate`` to the
size before it), and a torn last line left by a crash is cut when the cache is opened, so every answer already in
``cache.jsonl`` stays whole and the next append starts on a line of its own — re-running the same ``mtboard judge``
command then sends only what was not answered.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core.canonical import canonical_bytes, sha256_hex
from mtboard.core.decoding import json_line
from mtboard.core.documents import append_whole, atomic_write
from mtboard.core.errors import StorageError, storage_faults
from mtboard.core.schema import Usage
from mtboard.core.text import split_records


def input_sha256(body: dict[str, Any], replicate: int) -> str:
    """SHA-256 of the canonical request body plus the replicate index (so ``--runs N`` asks N times)."""
    return sha256_hex(canonical_bytes({"body": _jsonable(body), "replicate": replicate}))


def cache_key(judge_model: str, prompt_sha256: str, input_hash: str) -> str:
    """The cache key: SHA-256 of canonical ``{judge_model, prompt_sha256, input_sha256}``."""
    return sha256_hex(canonical_bytes({"judge_model": judge_model, "prompt_sha256": prompt_sha256,
                                       "input_sha256": input_hash}))


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


@dataclass
class CachedAnswer:
    """One judge answer as stored (text is None when no content arrived)."""

    key: str
    text: str | None
    finish_reason: str | None = None
    error: str | None = None
    error_kind: str | None = None
    usage: Usage = field(default_factory=Usage)
    model_id: str | None = None
    cached: bool = False
    """True when this invocation read it from the cache instead of asking the judge."""


class JudgeStore:
    """Cache + answer log of one work directory. Not safe for two processes judging the same directory at once."""

    def __init__(self, workdir: Path):
        """Open (create) ``WORKDIR/judge/`` and read its cache. Raises: StorageError (the folder cannot be made, a
        torn last line cannot be cut: read-only, full, no permission)."""
        self.dir = Path(workdir) / "judge"
        with storage_faults(self.dir):
            self.dir.mkdir(parents=True, exist_ok=True)
        self.cache_path = self.dir / "cache.jsonl"
        self._cache: dict[str, CachedAnswer] = {}
        self._log: dict[str, list[dict[str, Any]]] = {}
        self._load()

    def __len__(self) -> int:
        """Answers in the cache (read from the file and received since)."""
        return len(self._cache)

    def _load(self) -> None:
        if not self.cache_path.exists():
            return
        with storage_faults(self.cache_path):
            _cut_torn_tail(self.cache_path)
        with open(self.cache_path, "rb") as fh:
            for raw in fh:
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue  # a line cut by kill -9: that answer is simply asked again
                if not isinstance(rec, dict) or "key" not in rec:
                    continue
                self._cache[rec["key"]] = CachedAnswer(
                    key=rec["key"], text=rec.get("text"), finish_reason=rec.get("finish_reason"),
                    error=rec.get("error"), error_kind=rec.get("error_kind"),
                    usage=Usage.model_validate(rec.get("usage") or {}), model_id=rec.get("model_id"), cached=True)

    @contextmanager
    def _faults(self, path: Path) -> Iterator[None]:
        """A write to ``path`` under ``judge/``: an environment fault becomes a StorageError naming ``path``
        (:func:`~mtboard.core.errors.storage_faults`); ``ENOENT``/``ESTALE`` with the ``judge/`` folder gone is the
        work directory deleted, moved or unmounted while judging (a StorageError naming the folder, field
        ``WORKDIR``)."""
        try:
            with storage_faults(path):
                yield
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ESTALE) and not self.dir.is_dir():
                raise StorageError("the work directory vanished while judging (deleted, moved or unmounted); the "
                                   "judge answers it held went with it", where=str(self.dir.parent), field="WORKDIR",
                                   fix="keep the work directory in place until the command ends (restore it, or "
                                       "judge a copy that has card.json)", errno=exc.errno) from None
            raise

    def get(self, key: str) -> CachedAnswer | None:
        hit = self._cache.get(key)
        if hit is None:
            return None
        return CachedAnswer(**{**hit.__dict__, "cached": True})

    def put(self, key: str, *, judge_model: str, prompt_sha256: str, input_hash: str, request: dict[str, Any],
            answer: CachedAnswer, raw_response: str | None) -> None:
        """Append one answer (fsynced) and remember it."""
        rec = {"key": key, "judge_model": judge_model, "prompt_sha256": prompt_sha256, "input_sha256": input_hash,
               "request": _jsonable(request), "text": answer.text, "finish_reason": answer.finish_reason,
               "error": answer.error, "error_kind": answer.error_kind, "usage": answer.usage.model_dump(),
               "model_id": answer.model_id, "raw_response": raw_response}
        line = json_line(rec, sort_keys=True, compact=False)  # the raw response may hold escaped bytes
        with self._faults(self.cache_path):
            _append_whole(self.cache_path, line)
        self._cache[key] = CachedAnswer(**{**answer.__dict__, "cached": False})

    def log(self, kind: str, record: dict[str, Any]) -> None:
        """Remember one attempt for ``<kind>.answers.jsonl``."""
        self._log.setdefault(kind, []).append(_jsonable(record))

    def write_log(self, kind: str) -> Path:
        """Atomically write ``<kind>.answers.jsonl`` (sorted by entry, replicate, attempt)."""
        recs = sorted(self._log.get(kind, []), key=lambda r: (r.get("run", 0), str(r.get("entry_id")),
                                                            r.get("attempt", 0)))
        path = self.dir / f"{kind}.answers.jsonl"
        with self._faults(path):
            atomic_write(path, b"".join(json_line(r, sort_keys=True, compact=False) for r in recs))
        return path


def _append_whole(path: Path, line: bytes) -> None:
    """Append ``line`` to ``path`` unbuffered and fsync it; a failed write or fsync leaves the file as it was
    (:func:`mtboard.core.documents.append_whole`)."""
    with open(path, "ab", buffering=0) as fh:
        append_whole(fh, line, fsync=True)


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line without its newline (a crash or a full disk mid-append) so the next append starts a line;
    the cut answer is simply asked again."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    with open(path, "rb+") as fh:
        fh.truncate(data.rfind(b"\n") + 1)
        fh.flush()
        os.fsync(fh.fileno())


def read_answers(workdir: Path, kind: str) -> list[dict[str, Any]]:
    """The stored attempts of one judge kind (``WORKDIR/judge/<kind>.answers.jsonl``)."""
    path = Path(workdir) / "judge" / f"{kind}.answers.jsonl"
    # records end at \n only: answers are written with ensure_ascii=False, so U+2028/U+0085 stay inside a record
    return [json.loads(line) for line in split_records(path.read_text(encoding="utf-8")) if line.strip()]
