"""The run loop (issue 3): corpus → backend → append-only work directory → scores → run card.

Work directory (``--work-dir``), every file append-only or atomically replaced:

* ``run.json`` — run id, start timestamp and the run's *identity* (method, dataset hash, segment, prompt hashes,
  temperature, max_tokens, sampling, condition, endpoint host hash). Resuming with a different identity is refused.
* ``translations.jsonl`` — one :class:`mtboard.schema.TranslationRecord` per finished (run, entry), fsynced in groups
  as they finish. The resume unit: an entry with a record whose failure was not a transport/backend failure is never
  sent again. Entries that failed in transport are retried by the next session (the last record wins).
* ``raw.jsonl`` — per request: the JSON body sent, the response as received, the attempt log (never a header, key or
  URL: :mod:`mtboard.llm` scrubs them), with the session number and wall-clock end time.
* ``sessions.jsonl`` — start (and, when not killed, end) time of each session, for ``elapsed_seconds``.
* ``backend.json`` — the backend's ``describe()`` facts (provider, hashed host, engine, local-model gate), so a
  resume with nothing left to send does not start the backend again.
* ``card.json`` (default ``--out``) and ``report.md`` — written at the end.

A ``kill -9`` loses at most the entries in flight (and those finished but not yet fsynced in the current group); a
torn last line is cut off before the next session appends.

Concurrency: ``concurrency`` batches in flight (``preferred_batch_size`` entries per ``translate`` call; 1 for LLM
backends), all ``--runs`` replicates interleaved in one queue so they run concurrently.

Failure policy (BookTrans): transport failures that persisted after the client's retries (error_kind ``transport``)
and configuration failures (``backend``) make the run incomplete: no card unless ``allow_incomplete``. Model failures
are final, scored 0 and recorded with their kind.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mtboard import canonical, safejson
from mtboard.backends.base import (REGISTRY, BackendOptions, MethodSpec, TranslateRequest, load_builtin_backends,
                                   parse_method)
from mtboard.documents import load_corpus
from mtboard.errors import BackendError, ConfigError, InputError, MtboardError
from mtboard.prompts import Prompt, load_prompt, prompts_dir
from mtboard.schema import Corpus, Entry, ErrorKind, Segment, TranslationRecord, Usage

TRANSLATIONS = "translations.jsonl"
RAW = "raw.jsonl"
MANIFEST = "run.json"
SESSIONS = "sessions.jsonl"
REPORT = "report.md"
BACKEND = "backend.json"
INCOMPLETE_KINDS = frozenset({ErrorKind.transport, ErrorKind.backend})
"""Failures that are not the model's: they make a run incomplete and are re-sent by the next session."""


class IncompleteRunError(MtboardError):
    """Transport/backend failures persisted: the run is not a valid card (re-run the same command, or
    ``--allow-incomplete``)."""


# --------------------------------------------------------------------------------------------------------------------
# Prices (prompts/prices.yaml)


class PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: str
    """api_provider the price applies to (openai, openrouter, …)."""
    model: str
    """Model name as typed after ``openai:`` (e.g. gpt-4o-mini, openai/gpt-4o-mini on OpenRouter)."""
    input: float = Field(ge=0)
    """USD per 1M prompt tokens."""
    output: float = Field(ge=0)
    """USD per 1M completion tokens (reasoning tokens are billed as completion tokens)."""


class PriceTable(BaseModel):
    """``prompts/prices.yaml``: prices in USD per 1M tokens, with the date and page they were read from."""

    model_config = ConfigDict(extra="forbid", strict=True)

    as_of: str
    source: str
    free_providers: list[str] = []
    """Channels without a per-token price (local servers and engines): cost 0."""
    models: list[PriceEntry] = []

    def lookup(self, provider: str | None, model: str) -> tuple[float, float] | None:
        """(input, output) USD per 1M tokens; ``(0, 0)`` for a free provider; None when unknown."""
        for m in self.models:
            if m.provider == provider and m.model == model:
                return m.input, m.output
        if provider in self.free_providers:
            return 0.0, 0.0
        return None


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """Load and validate the price table (default ``prompts/prices.yaml``). Raises InputError."""
    p = Path(path) if path else prompts_dir() / "prices.yaml"
    data = safejson.load_yaml(p)
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        from mtboard.schema import describe_validation_error

        raise InputError(describe_validation_error(exc, str(p)).split(": ", 1)[1], where=str(p),
                         fix="each model needs provider, model, input, output (USD per 1M tokens)") from None


# --------------------------------------------------------------------------------------------------------------------
# Settings and plan


@dataclass
class RunSettings:
    """Everything ``mtboard run`` was asked to do (CLI options)."""

    corpus_path: Path
    method: str
    prompt: str | None = None
    condition: str | None = None
    temperature: float | None = None
    max_tokens: int = 512
    concurrency: int | None = None
    runs: int = 1
    segment: str = "development"
    limit: int | None = None
    work_dir: Path | None = None
    out: Path | None = None
    base_url: str | None = None
    allow_incomplete: bool = False
    price_in: float | None = None
    price_out: float | None = None
    notes: str | None = None
    judge: str | None = None
    stream: bool = False
    max_retries: int = 5
    timeout_s: float = 120.0
    backend_extra: dict[str, Any] = field(default_factory=dict)


class ProgressSink(Protocol):
    """What the runner reports while translating (the run command draws a rich progress bar from it)."""

    def start(self, total: int, already_done: int) -> None: ...

    def advance(self, n: int, failures: int) -> None: ...

    def stop(self) -> None: ...


@dataclass(repr=False)
class Plan:
    """A prepared run: the corpus slice, the backend class and options, the prompt, the work directory."""

    settings: RunSettings
    corpus: Corpus
    corpus_sha256: str
    entries: list[Entry]
    spec: MethodSpec
    backend_cls: Any
    options: BackendOptions
    prompt: Prompt | None
    system_prompt: str
    condition: str
    work_dir: Path
    identity: dict[str, Any]

    def __repr__(self) -> str:
        return f"Plan({self.spec.text!r}, {len(self.entries)} entries, work_dir={str(self.work_dir)!r})"

    @property
    def uses_prompt(self) -> bool:
        return getattr(self.backend_cls, "prompt_format", None) != "raw"

    @property
    def batch_size(self) -> int:
        return max(1, int(getattr(self.backend_cls, "preferred_batch_size", 1)))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "run"


def prepare(settings: RunSettings) -> Plan:
    """Validate options, load the corpus and prompt, pick the work directory. Nothing is sent yet.

    Raises: ConfigError (unknown backend/prompt/segment, bad numbers), InputError (corpus).
    """
    load_builtin_backends()
    spec = parse_method(settings.method)
    backend_cls = REGISTRY[spec.backend]
    if settings.runs < 1:
        raise ConfigError("--runs must be at least 1", field="--runs")
    if settings.max_tokens < 1:
        raise ConfigError("--max-tokens must be at least 1", field="--max-tokens")
    if settings.limit is not None and settings.limit < 1:
        raise ConfigError("--limit must be at least 1", field="--limit")
    if settings.concurrency is not None and settings.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1", field="--concurrency")
    try:
        segment = Segment(settings.segment)
    except ValueError:
        raise ConfigError(f"unknown segment {settings.segment!r}", field="--segment",
                          fix=f"use one of {', '.join(s.value for s in Segment)}") from None
    corpus, sha = load_corpus(settings.corpus_path)
    entries = corpus.segment(segment)
    if not entries:
        raise ConfigError(f"the corpus has no {segment.value} entries", where=str(settings.corpus_path),
                          field="--segment", fix="pick a segment the corpus has")
    if settings.limit is not None:
        entries = entries[: settings.limit]
    raw_engine = getattr(backend_cls, "prompt_format", None) == "raw"
    prompt: Prompt | None = None
    system_prompt = ""
    if raw_engine:
        if settings.prompt:
            raise ConfigError(f"backend {spec.backend!r} takes the raw source text; it has no prompt",
                              field="--prompt", fix="drop --prompt")
    else:
        prompt = load_prompt(settings.prompt or getattr(backend_cls, "default_prompt", "translate-chat"))
        system_prompt = prompt.system_prompt(corpus.dataset.source_language, corpus.dataset.target_language)
    temperature = None if raw_engine else (0.0 if settings.temperature is None else settings.temperature)
    concurrency = settings.concurrency or int(getattr(backend_cls, "default_concurrency", 8))
    options = BackendOptions(temperature=temperature, max_tokens=settings.max_tokens, concurrency=concurrency,
                             base_url=settings.base_url, prompt=prompt, stream=settings.stream,
                             timeout_s=settings.timeout_s, max_retries=settings.max_retries,
                             extra=dict(settings.backend_extra), source_language=corpus.dataset.source_language,
                             target_language=corpus.dataset.target_language,
                             sample_sources=[e.source for e in entries[:18]])
    condition = settings.condition or (prompt.name if prompt else "baseline" if
                                       getattr(backend_cls, "method_class", None) == "baseline" else "default")
    work_dir = settings.work_dir or Path("runs") / corpus.dataset.id / _slug(
        f"{spec.text}-{condition}-{segment.value}" + (f"-limit{settings.limit}" if settings.limit else ""))
    from mtboard.card import endpoint_host_sha256

    identity = {
        "method": spec.text, "dataset_sha256": sha, "dataset_id": corpus.dataset.id, "segment": segment.value,
        "prompt": prompt.name if prompt else None,
        "prompt_template_sha256": prompt.template_sha256 if prompt else None,
        "system_prompt_sha256": canonical.sha256_hex(system_prompt), "temperature": temperature,
        "max_tokens": settings.max_tokens if not raw_engine else None, "condition": condition,
        "endpoint_host_sha256": endpoint_host_sha256(settings.base_url or os.environ.get("OPENAI_BASE_URL"))
        if spec.backend == "openai" else None,
        "stream": settings.stream,
    }
    return Plan(settings=settings, corpus=corpus, corpus_sha256=sha, entries=entries, spec=spec,
                backend_cls=backend_cls, options=options, prompt=prompt, system_prompt=system_prompt,
                condition=condition, work_dir=Path(work_dir), identity=identity)


# --------------------------------------------------------------------------------------------------------------------
# Work directory


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

        Raises: ConfigError when the directory belongs to a run with a different identity.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        mpath = self.path / MANIFEST
        if mpath.exists():
            manifest = safejson.load_file(mpath)
            old = manifest.get("identity", {}) if isinstance(manifest, dict) else {}
            diffs = [k for k in sorted(set(old) | set(identity)) if old.get(k) != identity.get(k)]
            if diffs:
                k = diffs[0]
                raise ConfigError(f"work directory was started with a different {k} ({old.get(k)!r}, now "
                                  f"{identity.get(k)!r})", where=str(self.path),
                                  fix="re-run with the original options, or use another --work-dir")
        else:
            manifest = {"run_id": str(uuid.uuid4()),
                        "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "identity": identity, **(extra or {})}
            from mtboard.documents import atomic_write

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
    def save_description(self, description: dict[str, Any]) -> None:
        """Keep the backend's ``describe()`` (card facts; never a URL or key) for a resume with nothing to send."""
        from mtboard.documents import atomic_write

        def plain(v: Any) -> Any:
            return v.model_dump(mode="json") if isinstance(v, BaseModel) else str(v)

        atomic_write(self.path / BACKEND,
                     (json.dumps(description, ensure_ascii=False, sort_keys=True, indent=1, default=plain)
                      + "\n").encode("utf-8"))

    def load_description(self) -> dict[str, Any] | None:
        path = self.path / BACKEND
        if not path.exists():
            return None
        try:
            data = safejson.load_file(path)
        except InputError:
            return None
        return data if isinstance(data, dict) else None

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
        """Write already-encoded lines: raw first, then records, each file fsynced once. (Only I/O here, which
        releases the GIL, so the runner can call it from a thread without slowing its event loop.)"""
        if raw_bytes:
            if self._fh_r is None:
                self._fh_r = open(self.path / RAW, "ab")
            self._fh_r.write(raw_bytes)
            self._fh_r.flush()
            os.fsync(self._fh_r.fileno())
        if record_bytes:
            if self._fh_t is None:
                self._fh_t = open(self.path / TRANSLATIONS, "ab")
            self._fh_t.write(record_bytes)
            self._fh_t.flush()
            os.fsync(self._fh_t.fileno())

    def _append_line(self, path: Path, obj: dict[str, Any]) -> None:
        with open(path, "ab") as fh:
            fh.write(_line(obj))
            fh.flush()
            os.fsync(fh.fileno())


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8") + b"\n"


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


# --------------------------------------------------------------------------------------------------------------------
# Translation phase


@dataclass(repr=False)
class Translated:
    """Result of the translation phase.

    (A short ``repr`` on purpose: ``asyncio.run`` formats the main task's result when it restores the SIGINT
    handler, and a full repr of thousands of records cost ~0.2 s per 1,000 entries.)
    """

    plan: Plan
    manifest: dict[str, Any]
    records: dict[tuple[int, int], TranslationRecord]
    description: dict[str, Any]
    elapsed_seconds: float
    sent: int
    """(run, entry) pairs sent to the backend in this session."""
    incomplete: list[TranslationRecord]
    """Records whose failure was transport/backend (run incomplete)."""

    def __repr__(self) -> str:
        return f"Translated({self.plan.spec.text!r}, {len(self.records)} records, sent={self.sent})"

    def run_records(self, run_index: int) -> list[TranslationRecord]:
        """One record per selected entry for a replicate, in corpus order (entries without one are left out)."""
        return [self.records[(run_index, e.id)] for e in self.plan.entries if (run_index, e.id) in self.records]


def make_requests(plan: Plan, jobs: list[tuple[int, Entry]]) -> list[TranslateRequest]:
    """Render the prompt for each (run, entry) job."""
    src, tgt = plan.corpus.dataset.source_language, plan.corpus.dataset.target_language
    out = []
    for run_index, e in jobs:
        if plan.prompt is None:
            out.append(TranslateRequest(entry_id=e.id, source=e.source, history=list(e.history), run_index=run_index))
            continue
        r = plan.prompt.render(e.source, src, tgt, history=list(e.history))
        out.append(TranslateRequest(entry_id=e.id, source=e.source, prompt=r.prompt, messages=r.messages,
                                    history=list(e.history), stop=list(r.stop), run_index=run_index))
    return out


def _construct_backend(plan: Plan) -> Any:
    return plan.backend_cls(plan.spec, options=plan.options)


async def _close_backend(backend: Any) -> None:
    aclose = getattr(backend, "aclose", None)
    if aclose is not None:
        await aclose()
    else:
        await asyncio.to_thread(backend.close)


async def translate_all(plan: Plan, progress: ProgressSink | None = None, backend: Any = None) -> Translated:
    """Translate every (run, entry) job not yet finished in the work directory; append records as they finish.

    ``backend`` (tests) replaces the registry construction. The backend is always closed (also on Ctrl-C/errors).
    Raises: BackendError from the backend (start failure, fatal endpoint refusal), after flushing finished records.
    """
    work = WorkDir(plan.work_dir)
    manifest = work.open(plan.identity, {"corpus_path": str(Path(plan.settings.corpus_path).resolve())})
    done = work.finished()
    runs = plan.settings.runs
    jobs = [(ri, e) for e in plan.entries for ri in range(runs) if (ri, e.id) not in done]
    total = len(plan.entries) * runs
    stored = work.load_description()
    if not jobs and stored is not None and backend is None:
        # nothing left to translate: do not start the backend (a local model would load, canary and gate again)
        work.close_session()
        if progress:
            progress.start(total, total)
            progress.stop()
        return _translated(plan, work, manifest, stored, 0)
    backend = backend if backend is not None else _construct_backend(plan)
    pending_raw: list[dict[str, Any]] = []
    session = work.session

    def sink(obj: dict[str, Any]) -> None:
        obj = dict(obj)
        obj["session"] = session
        pending_raw.append(obj)

    if hasattr(backend, "raw_sink"):
        backend.raw_sink = sink
    has_sink = hasattr(backend, "raw_sink")
    write_q: asyncio.Queue[list[TranslationRecord] | None] = asyncio.Queue()
    failures = 0
    sent = 0
    if progress:
        progress.start(total, total - len(jobs))

    flush_lock = threading.Lock()  # a flush cut short by Ctrl-C may still run in its thread when the last one starts

    def encode(groups: list[list[TranslationRecord]]) -> tuple[bytes, bytes]:
        """Serialise on the event loop (fast); the thread then only writes and fsyncs."""
        recs = [r for g in groups for r in g]
        raws = pending_raw[:]
        del pending_raw[: len(raws)]
        if not has_sink:
            now = time.time()
            raws += [{"session": session, "run_index": r.run_index, "entry_id": r.entry_id, "t_end": now,
                      "request": {"source": by_id[r.entry_id].source}, "response": r.raw_predicted,
                      "error": r.error} for r in recs]
        return work.encode(recs, raws)

    def write_sync(data: tuple[bytes, bytes]) -> None:
        with flush_lock:
            work.append_bytes(*data)

    def flush_sync(groups: list[list[TranslationRecord]]) -> None:
        write_sync(encode(groups))

    by_id = {e.id: e for e in plan.entries}

    async def writer() -> None:
        while True:
            item = await write_q.get()
            groups = [item] if item is not None else []
            stop = item is None
            while not write_q.empty():
                nxt = write_q.get_nowait()
                if nxt is None:
                    stop = True
                else:
                    groups.append(nxt)
            if groups:
                await asyncio.to_thread(write_sync, encode(groups))
            if stop:
                return

    batches = [jobs[i: i + plan.batch_size] for i in range(0, len(jobs), plan.batch_size)]
    batch_q: asyncio.Queue[list[tuple[int, Entry]]] = asyncio.Queue()
    for b in batches:
        batch_q.put_nowait(b)

    async def worker() -> None:
        nonlocal failures, sent
        while True:
            try:
                batch = batch_q.get_nowait()
            except asyncio.QueueEmpty:
                return
            reqs = make_requests(plan, batch)
            sent += len(reqs)
            recs = await backend.translate(reqs)
            if len(recs) != len(reqs):
                raise BackendError(f"backend returned {len(recs)} records for {len(reqs)} requests",
                                   where=plan.spec.backend)
            fixed = []
            for req, rec in zip(reqs, recs):
                if rec.entry_id != req.entry_id:
                    raise BackendError(f"backend returned entry {rec.entry_id} for entry {req.entry_id}",
                                       where=plan.spec.backend)
                if rec.run_index != req.run_index:
                    rec = rec.model_copy(update={"run_index": req.run_index})
                fixed.append(rec)
                if rec.error_kind is not None:
                    failures += 1
            write_q.put_nowait(fixed)
            if progress:
                progress.advance(len(fixed), failures)

    writer_task: asyncio.Task[None] | None = None
    try:
        await asyncio.to_thread(backend.start)
        writer_task = asyncio.create_task(writer())
        n_workers = min(plan.options.concurrency, max(1, len(batches)))
        async with asyncio.TaskGroup() as tg:
            for _ in range(n_workers):
                tg.create_task(worker())
    except BaseExceptionGroup as eg:  # unwrap the first MtboardError for a one-line message
        for exc in eg.exceptions:
            if isinstance(exc, MtboardError):
                raise exc from None
        raise
    finally:
        if writer_task is not None:
            write_q.put_nowait(None)
            try:
                await asyncio.shield(writer_task)
            except BaseException:
                pass
        # anything still queued (cancelled writer) is written synchronously
        leftover = []
        while not write_q.empty():
            g = write_q.get_nowait()
            if g is not None:
                leftover.append(g)
        if leftover or pending_raw:
            flush_sync(leftover)
        description: dict[str, Any] | None = None
        try:
            description = dict(backend.describe() or {})
        except Exception:  # noqa: BLE001 - describing must not mask the real error
            description = None
        try:
            await _close_backend(backend)
        except Exception:  # noqa: BLE001 - closing must not mask the real error
            pass
        work.close_session(sent)
        if progress:
            progress.stop()
    if description is None:
        description = dict(backend.describe() or {})
    work.save_description(description)
    return _translated(plan, work, manifest, description, sent)


def _translated(plan: Plan, work: WorkDir, manifest: dict[str, Any], description: dict[str, Any],
                sent: int) -> Translated:
    records = work.records()
    selected = {(ri, e.id) for e in plan.entries for ri in range(plan.settings.runs)}
    incomplete = [r for k, r in records.items() if k in selected and r.error_kind in INCOMPLETE_KINDS]
    return Translated(plan=plan, manifest=manifest, records={k: v for k, v in records.items() if k in selected},
                      description=description, elapsed_seconds=work.elapsed_seconds(), sent=sent,
                      incomplete=incomplete)


# --------------------------------------------------------------------------------------------------------------------
# Scoring, totals, card


def resolve_prices(plan: Plan, description: dict[str, Any]) -> tuple[float | None, float | None, str]:
    """(price_in, price_out, source) in USD per 1M tokens: CLI flags, then prices.yaml, then free engines → 0."""
    s = plan.settings
    if s.price_in is not None or s.price_out is not None:
        return s.price_in or 0.0, s.price_out or 0.0, "command line"
    if not plan.uses_prompt or getattr(plan.backend_cls, "method_class", None) == "baseline":
        return 0.0, 0.0, "engine without per-token price"
    table = load_prices()
    hit = table.lookup(description.get("api_provider"), plan.spec.model)
    if hit is None:
        return None, None, "unknown (pass --price-in/--price-out)"
    return hit[0], hit[1], f"prompts/prices.yaml ({table.as_of})"


def compute_totals(records: list[TranslationRecord], entries: list[Entry], runs: int, price_in: float | None,
                   price_out: float | None) -> Any:
    """Totals (spec §3.5) over all records of all replicates: token sums, retries, cost.

    cost = (prompt_tokens × price_in + completion_tokens × price_out) / 1e6; per entry = cost / (entries × runs);
    per source character = cost / (source characters × runs). None when the price is unknown.
    """
    from mtboard.schema import Totals

    u = Usage(prompt_tokens=sum(r.usage.prompt_tokens for r in records),
              completion_tokens=sum(r.usage.completion_tokens for r in records),
              reasoning_tokens=sum(r.usage.reasoning_tokens for r in records),
              cached_tokens=sum(r.usage.cached_tokens for r in records))
    retries = sum(max(0, r.attempts - 1) for r in records)
    cost = per_entry = per_char = None
    if price_in is not None and price_out is not None:
        cost = (u.prompt_tokens * price_in + u.completion_tokens * price_out) / 1e6
        n = max(1, len(entries) * runs)
        chars = max(1, sum(len(e.source) for e in entries) * runs)
        per_entry, per_char = cost / n, cost / chars
    return Totals(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                  reasoning_tokens=u.reasoning_tokens, cached_tokens=u.cached_tokens, total_cost_usd=cost,
                  cost_per_entry_usd=per_entry, cost_per_source_char=per_char, retries=retries)


@dataclass
class RunOutcome:
    """What ``mtboard run`` reports: the card (None when incomplete), paths and the translation facts."""

    card: Any
    card_path: Path | None
    report_path: Path
    translated: Translated
    price_source: str
    judge_note: str | None = None


def _score(plan: Plan, translated: Translated, records: list[TranslationRecord], elapsed: float,
           price_in: float | None, price_out: float | None) -> tuple[Any, list[Any]]:
    from mtboard import scoring

    ds = plan.corpus.dataset
    return scoring.score_run(plan.entries, records, source_language=ds.source_language,
                             target_language=ds.target_language, elapsed_seconds=elapsed, fst=None,
                             strip_unknown_marks=bool(getattr(plan.backend_cls, "strip_unknown_marks", False)),
                             price_in_per_mtok=price_in, price_out_per_mtok=price_out)


def finish(translated: Translated, *, judge: str | None = None, t_session_start: float | None = None) -> RunOutcome:
    """Score, run judges (if asked), assemble and write the card and report.md.

    Raises: IncompleteRunError (after writing report.md) when transport/backend failures remain and
    ``allow_incomplete`` is off, or when entries have no record at all.
    """
    from mtboard.card import assemble_card
    from mtboard.documents import write_card
    from mtboard.schema import Replicates

    plan = translated.plan
    s = plan.settings
    runs = s.runs
    missing = [(ri, e.id) for ri in range(runs) for e in plan.entries if (ri, e.id) not in translated.records]
    price_in, price_out, price_source = resolve_prices(plan, translated.description)
    report_path = plan.work_dir / REPORT
    if missing or (translated.incomplete and not s.allow_incomplete):
        write_report(report_path, translated, None, price_source)
        kinds = Counter(r.error_kind.value for r in translated.incomplete if r.error_kind)
        what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        if missing:
            what = (what + ", " if what else "") + f"{len(missing)} without any record"
        raise IncompleteRunError(f"{len(translated.incomplete) + len(missing)} entries failed not by the model's "
                                 f"fault ({what}); the run is not a valid card", where=str(plan.work_dir),
                                 fix="re-run the same command to retry only those entries, or pass "
                                     "--allow-incomplete")
    # The card's elapsed_seconds is the translation wall-clock; scoring uses elapsed / runs, exactly as
    # mtboard.validate recomputes it from the card.
    elapsed = round(translated.elapsed_seconds, 3)
    scored = []
    for ri in range(runs):
        scored.append(_score(plan, translated, translated.run_records(ri), elapsed / runs, price_in, price_out))
    scores, results = scored[0]
    if runs > 1:
        chrfs = [sc.chrf_plus_plus for sc, _ in scored]
        comps = [sc.composite for sc, _ in scored]
        reps = Replicates(n=runs, chrf_plus_plus=chrfs, composite=comps, chrf_mean=statistics.fmean(chrfs),
                          chrf_stdev=statistics.stdev(chrfs), composite_mean=statistics.fmean(comps),
                          composite_stdev=statistics.stdev(comps))
        scores = scores.model_copy(update={"replicates": reps})
    all_records = [r for ri in range(runs) for r in translated.run_records(ri)]
    totals = compute_totals(all_records, plan.entries, runs, price_in, price_out)
    card = assemble_card(
        corpus=plan.corpus, corpus_sha256=plan.corpus_sha256, segment=plan.entries[0].segment, spec=plan.spec,
        method_class=getattr(plan.backend_cls, "method_class"), description=translated.description,
        prompt=plan.prompt, system_prompt=plan.system_prompt, condition=plan.condition,
        temperature=plan.options.temperature, max_tokens=plan.options.max_tokens if plan.uses_prompt else None,
        batch_size=plan.batch_size, max_retries=plan.options.max_retries, concurrency=plan.options.concurrency,
        runs=runs, limit=s.limit, price_in=price_in, price_out=price_out, scores=scores, results=results,
        totals=totals, run_id=translated.manifest["run_id"], timestamp=translated.manifest["timestamp"],
        elapsed_seconds=elapsed, judges={}, notes=s.notes, streaming=plan.options.stream)
    judge_note = None
    if judge and judge != "none":
        card, judge_note = run_judge_hook(judge, plan, card)
    out = s.out or plan.work_dir / "card.json"
    write_card(card, out)
    write_report(report_path, translated, card, price_source, judge_note)
    return RunOutcome(card=card, card_path=Path(out), report_path=report_path, translated=translated,
                      price_source=price_source, judge_note=judge_note)


def run_judge_hook(judge: str, plan: Plan, card: Any) -> tuple[Any, str]:
    """Judge the fresh card with ``mtboard.judges.run_judges`` (issue 5): ``--judge KIND=openai:MODEL[:EFFORT]``,
    several separated by commas. Returns the re-sealed card and a one-line note.

    Raises: ConfigError when judges are not available; whatever the judges raise (ConfigError, BackendError).
    """
    run_judge_hook_check()
    from mtboard.judges import run_judges

    specs = [j.strip() for j in judge.split(",") if j.strip()]
    judged = run_judges(card, plan.corpus, specs, workdir=plan.work_dir, allow_self_judge=False)
    notes = []
    for kind, summ in sorted(judged.judges.items()):
        notes.append(f"{kind} {summ.backend}:{summ.model} mean {summ.mean}")
    return judged, "; ".join(notes) or f"judged with {judge}"


def run(settings: RunSettings, progress: ProgressSink | None = None) -> RunOutcome:
    """prepare → translate_all → finish (sync entry point for the run command)."""
    plan = prepare(settings)
    if settings.judge and settings.judge != "none":
        run_judge_hook_check()
    translated = asyncio.run(translate_all(plan, progress))
    return finish(translated, judge=settings.judge)


def run_judge_hook_check() -> None:
    """Fail before translating when ``--judge`` is asked for but judges are not available."""
    try:
        import mtboard.judges as judges_pkg
    except ImportError:
        judges_pkg = None
    if judges_pkg is None or getattr(judges_pkg, "run_judges", None) is None:  # pragma: no cover
        raise ConfigError("--judge is not available in this build (mtboard.judges.run_judges is missing)",
                          field="--judge", fix="use --judge none now and `mtboard judge WORKDIR` later")


# --------------------------------------------------------------------------------------------------------------------
# report.md


def _md(text: Any) -> str:
    s = "" if text is None else str(text)
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")
    return s[:160] + ("…" if len(s) > 160 else "")


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def write_report(path: Path, translated: Translated, card: Any, price_source: str,
                 judge_note: str | None = None) -> None:
    """A human-readable summary of the work directory (markdown, untrusted text escaped)."""
    from mtboard.documents import atomic_write

    plan = translated.plan
    ds = plan.corpus.dataset
    lines = [f"# mtboard run — {_md(plan.spec.text)} on {_md(ds.id)} {_md(ds.version)}", ""]
    lines += [f"- run id: `{translated.manifest['run_id']}`, started {translated.manifest['timestamp']}",
              f"- dataset: {_md(ds.language_pair)}, segment {plan.entries[0].segment.value if plan.entries else '?'},"
              f" {len(plan.entries)} entries × {plan.settings.runs} run(s)",
              f"- prompt: {_md(plan.prompt.name) if plan.prompt else '(raw source)'}; condition {_md(plan.condition)};"
              f" temperature {plan.options.temperature}; max_tokens {plan.options.max_tokens if plan.uses_prompt else '-'}",
              f"- api provider: {_md(translated.description.get('api_provider'))}; model id: "
              f"{_md(translated.description.get('model_id'))}",
              f"- translation time: {translated.elapsed_seconds:.1f} s; sent this session: {translated.sent}",
              f"- prices: {price_source}", ""]
    if card is not None:
        sc, t = card.scores, card.totals
        lines += ["## Scores (run 0)", "",
                  f"- chrF++ **{sc.chrf_plus_plus:.2f}** (`{sc.signatures.chrf}`)",
                  f"- BLEU {_num(sc.bleu, 2)}; TER {_num(sc.ter, 2)}",
                  f"- composite **{sc.composite:.3f}** (profile {sc.composite_profile}, tier {sc.quality_tier.value})",
                  f"- errors {sc.errors} of {sc.total} (transport {sc.transport_errors})",
                  f"- cost: {_num(t.total_cost_usd, 6)} USD; tokens "
                  f"{t.prompt_tokens} in / {t.completion_tokens} out ({t.reasoning_tokens} reasoning, "
                  f"{t.cached_tokens} cached); retries {t.retries}",
                  f"- latency avg/median/p95: {_num(sc.avg_latency_seconds)} / {_num(sc.median_latency_seconds)} / "
                  f"{_num(sc.p95_latency_seconds)} s; entries/min {_num(sc.entries_per_minute, 1)}; tokens/s "
                  f"{_num(sc.tokens_per_second, 1)}", ""]
        if sc.replicates:
            r = sc.replicates
            lines += [f"- replicates: chrF++ {r.chrf_mean:.2f} ± {r.chrf_stdev:.2f}, composite "
                      f"{r.composite_mean:.3f} ± {r.composite_stdev:.3f} over {r.n} runs", ""]
        if judge_note:
            lines += [f"- {judge_note}", ""]
        lines += [f"Card: fingerprint `{card.fingerprint.hash}`, run_card_hash `{card.run_card_hash}`", ""]
    else:
        lines += ["## No card", "", "The run is incomplete (see the failures below).", ""]
    failed = [r for r in translated.records.values() if r.error_kind is not None]
    kinds = Counter(r.error_kind.value for r in failed if r.error_kind)
    lines += ["## Failures", ""]
    if not failed:
        lines += ["None.", ""]
    else:
        lines += [", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())), "",
                  "| run | entry | kind | attempts | error |", "| --- | --- | --- | --- | --- |"]
        for r in sorted(failed, key=lambda r: (r.run_index, r.entry_id))[:200]:
            lines.append(f"| {r.run_index} | {r.entry_id} | {r.error_kind.value if r.error_kind else ''} | "
                         f"{r.attempts} | {_md(r.error)} |")
        lines.append("")
    if card is not None:
        lines += ["## Entries (run 0)", "", "| entry | chrF++ | latency s | output |", "| --- | --- | --- | --- |"]
        for res in card.results[:500]:
            lines.append(f"| {res.entry_id} | {'' if res.chrf_score is None else f'{res.chrf_score:.1f}'} | "
                         f"{'' if res.latency_s is None else f'{res.latency_s:.2f}'} | {_md(res.predicted)} |")
        lines.append("")
    atomic_write(path, "\n".join(lines).encode("utf-8"))


__all__ = ["RunSettings", "Plan", "WorkDir", "Translated", "RunOutcome", "IncompleteRunError", "ProgressSink",
           "PriceTable", "load_prices", "prepare", "translate_all", "finish", "run", "compute_totals",
           "make_requests", "resolve_prices"]
