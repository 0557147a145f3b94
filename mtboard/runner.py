"""The run loop (issue 3): corpus → backend → append-only work directory → scores → run card.

Modules it uses: :mod:`mtboard.workdir` (the append-only, resumable work directory: ``run.json``,
``translations.jsonl``, ``raw.jsonl``, ``sessions.jsonl``, ``backend.json``), :mod:`mtboard.prices` (price table,
totals), :mod:`mtboard.report` (``report.md``), :mod:`mtboard.card` (assembling and sealing the card). The card
(``card.json``, default ``--out``) and ``report.md`` are written at the end.

Concurrency: ``concurrency`` batches in flight (``preferred_batch_size`` entries per ``translate`` call; 1 for LLM
backends), all ``--runs`` replicates interleaved in one queue so they run concurrently.

Failure policy (BookTrans): transport failures that persisted after the client's retries (error_kind ``transport``)
and configuration failures (``backend``) make the run incomplete: no card unless ``allow_incomplete``. Model failures
are final, scored 0 and recorded with their kind.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mtboard import canonical
from mtboard.backends.base import (REGISTRY, BackendOptions, MethodSpec, TranslateRequest, load_builtin_backends,
                                   parse_method)
from mtboard.documents import load_corpus
from mtboard.errors import BackendError, ConfigError, MtboardError
from mtboard.prices import PriceEntry, PriceTable, compute_totals, load_prices, resolve_prices  # noqa: F401
from mtboard.prompts import Prompt, load_prompt
from mtboard.report import REPORT, write_report
from mtboard.schema import Corpus, Entry, Segment, TranslationRecord
from mtboard.workdir import (BACKEND, INCOMPLETE_KINDS, MANIFEST, RAW, SESSIONS, TRANSLATIONS,  # noqa: F401
                             WorkDir, _repair_tail)


class IncompleteRunError(MtboardError):
    """Transport/backend failures persisted: the run is not a valid card (re-run the same command, or
    ``--allow-incomplete``)."""


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
    judge: str | list[str] | None = None
    """Judge specs ``KIND=openai:MODEL[:EFFORT]``: a list, a comma-separated string, or None/``"none"`` for no
    judge (see :func:`judge_specs`)."""
    allow_self_judge: bool = False
    """Accept a judge from the translator's model family (recorded in the card)."""
    bench: Path | None = None
    """Checkpoint benchmark folder (``--bench``; required by the checkpoints judge)."""
    stream: bool = False
    max_retries: int = 5
    timeout_s: float = 120.0
    backend_extra: dict[str, Any] = field(default_factory=dict)
    """Backend settings (``--backend-opt KEY=VALUE``): checked against the backend's keys by
    :func:`backend_options` in :func:`prepare`."""


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


# --------------------------------------------------------------------------------------------------------------------
# Backend options (--backend-opt KEY=VALUE)

OPENAI_OPTION_KEYS: dict[str, str] = {
    "backoff_base_s": "first transport-retry backoff ceiling, seconds",
    "backoff_max_s": "largest transport-retry backoff, seconds",
    "retry_after_max_s": "longest Retry-After honoured, seconds",
    "deadline_s": "time a streaming answer may keep producing before it is a model timeout, seconds",
}
"""``BackendOptions.extra`` keys of the openai backend (read by :meth:`mtboard.backends.openai.OpenAIBackend.start`
as floats, passed to :class:`mtboard.llm.LLMClient`)."""


def parse_backend_opts(items: list[str] | None) -> dict[str, str]:
    """``["n_ctx=4096", "server=llama-cpp-python"]`` → ``{"n_ctx": "4096", "server": "llama-cpp-python"}``.

    Values stay strings here; :func:`backend_options` checks and converts them for the chosen backend.
    Raises: ConfigError for an item without ``KEY=`` or a key given twice.
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--backend-opt {item!r} is not KEY=VALUE", field="--backend-opt",
                              fix="write e.g. --backend-opt n_ctx=4096 (repeat the option for more settings)")
        if key in out:
            raise ConfigError(f"--backend-opt {key} given twice", field="--backend-opt", fix="give each key once")
        out[key] = value.strip()
    return out


def _options_model(backend: str, backend_cls: Any) -> Any:
    """The pydantic model that validates a backend's ``extra`` settings (class attribute ``options_model``; gguf:
    :class:`mtboard.backends.gguf.GGUFSettings`), or None."""
    model = getattr(backend_cls, "options_model", None)
    if model is None and backend == "gguf":
        from mtboard.backends.gguf import GGUFSettings

        model = GGUFSettings
    return model


def backend_option_keys(backend: str, backend_cls: Any) -> list[str]:
    """The ``--backend-opt`` keys a backend understands (sorted; empty when it takes none)."""
    model = _options_model(backend, backend_cls)
    if model is not None:
        return sorted(model.model_fields)
    from mtboard.backends.openai import OpenAIBackend

    if isinstance(backend_cls, type) and issubclass(backend_cls, OpenAIBackend):
        return sorted(OPENAI_OPTION_KEYS)
    return []


def backend_options(backend: str, backend_cls: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """Check ``extra`` (``--backend-opt`` values, strings or already typed) against the backend's keys and convert
    them: gguf through :class:`~mtboard.backends.gguf.GGUFSettings` (lax: ``"4096"`` → 4096), openai to finite
    non-negative floats. Returns the typed settings (only the keys given).

    Raises: ConfigError (one line) for an unknown key — listing the valid keys of that backend — or a bad value.
    """
    if not extra:
        return {}
    valid = backend_option_keys(backend, backend_cls)
    unknown = sorted(k for k in extra if k not in valid)
    if unknown:
        listing = f"valid keys: {', '.join(valid)}" if valid else "it takes none"
        raise ConfigError(f"unknown --backend-opt {unknown[0]!r} for backend {backend}; {listing}",
                          field="--backend-opt", fix="drop it or use one of the valid keys")
    model = _options_model(backend, backend_cls)
    if model is not None:
        from pydantic import ValidationError

        try:
            checked = model.model_validate(dict(extra))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            key = ".".join(map(str, first["loc"]))
            raise ConfigError(f"bad value for --backend-opt {key}: {first['msg']}", field="--backend-opt",
                              fix=f"see the {backend} backend's settings ({', '.join(valid)})") from None
        return checked.model_dump(mode="json", include=set(extra))
    out: dict[str, Any] = {}
    for k, v in extra.items():
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = float("nan")
        if not (x >= 0 and x != float("inf")):
            raise ConfigError(f"bad value for --backend-opt {k}: {v!r} is not a non-negative number of seconds",
                              field="--backend-opt", fix=f"e.g. --backend-opt {k}=0.5")
        out[k] = x
    return out


def judge_specs(value: str | list[str] | None) -> list[str]:
    """Judge specs from ``--judge`` values: repeatable and/or comma-separated; ``none`` (alone) means no judge.

    ``["gemba-mqm=openai:a,rubric=openai:b"]`` → ``["gemba-mqm=openai:a", "rubric=openai:b"]``; ``"none"`` → ``[]``.
    Raises: ConfigError when ``none`` is mixed with judge specs.
    """
    items = [value] if isinstance(value, str) else list(value or [])
    specs = [part.strip() for item in items for part in item.split(",") if part.strip()]
    if "none" in specs:
        if len(specs) > 1:
            raise ConfigError("--judge none cannot be combined with judge specs", field="--judge",
                              fix="drop 'none', or drop the judge specs")
        return []
    return specs


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
    check_languages = getattr(backend_cls, "check_languages", None)
    if check_languages is not None:  # e.g. an Apertium mode for another language pair
        check_languages(spec.model, corpus.dataset.source_language, corpus.dataset.target_language)
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
    extra = backend_options(spec.backend, backend_cls, dict(settings.backend_extra))
    options = BackendOptions(temperature=temperature, max_tokens=settings.max_tokens, concurrency=concurrency,
                             base_url=settings.base_url, prompt=prompt, stream=settings.stream,
                             timeout_s=settings.timeout_s, max_retries=settings.max_retries,
                             extra=dict(extra), source_language=corpus.dataset.source_language,
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
        "endpoint_host_sha256": endpoint_host_sha256(_openai_base_url(settings.base_url))
        if spec.backend == "openai" else None,
        "stream": settings.stream,
    }
    if extra:  # only when given, so work directories of runs without --backend-opt keep their identity
        identity["backend_options"] = dict(sorted(extra.items()))
    return Plan(settings=settings, corpus=corpus, corpus_sha256=sha, entries=entries, spec=spec,
                backend_cls=backend_cls, options=options, prompt=prompt, system_prompt=system_prompt,
                condition=condition, work_dir=Path(work_dir), identity=identity)



def _openai_base_url(base_url: str | None) -> str:
    from mtboard.backends.openai import resolve_base_url  # the documented default endpoint when none is given

    return resolve_base_url(base_url)


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
    failures = 0
    sent = 0
    if progress:
        progress.start(total, total - len(jobs))
    by_id = {e.id: e for e in plan.entries}

    def write(recs: list[TranslationRecord]) -> None:
        """Write the finished records (after the raw lines gathered so far) on the event loop, at once: a kill -9
        from here on loses nothing. The fsync follows in a thread (:func:`syncer`)."""
        raws = pending_raw[:]
        del pending_raw[: len(raws)]
        if not has_sink:
            now = time.time()
            raws += [{"session": session, "run_index": r.run_index, "entry_id": r.entry_id, "t_end": now,
                      "request": {"source": by_id[r.entry_id].source}, "response": r.raw_predicted,
                      "error": r.error} for r in recs]
        work.write_bytes(*work.encode(recs, raws))

    dirty = asyncio.Event()
    done_writing = False
    sync_lock = threading.Lock()  # an fsync cut short by Ctrl-C may still run in its thread when the last one starts

    def sync() -> None:
        with sync_lock:
            work.sync()

    async def syncer() -> None:
        """Group commit: one fsync for whatever was written while the previous one ran."""
        while True:
            await dirty.wait()
            dirty.clear()
            await asyncio.to_thread(sync)
            if done_writing and not dirty.is_set():
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
            write(fixed)
            dirty.set()
            if progress:
                progress.advance(len(fixed), failures)

    syncer_task: asyncio.Task[None] | None = None
    try:
        await asyncio.to_thread(backend.start)
        syncer_task = asyncio.create_task(syncer())
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
        if syncer_task is not None:
            done_writing = True
            dirty.set()
            try:
                await asyncio.shield(syncer_task)
            except BaseException:
                pass
        if pending_raw:  # raw lines of requests whose entries never finished (an error, Ctrl-C)
            write([])
        sync()
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



@dataclass
class RunOutcome:
    """What ``mtboard run`` reports: the card (None when incomplete), paths and the translation facts."""

    card: Any
    card_path: Path | None
    report_path: Path
    translated: Translated
    price_source: str
    judge_note: str | None = None


FST_MODE: bool | None = None
"""``fst`` argument of :func:`mtboard.scoring.score_run` for runs: None = FST acceptance whenever an analyser for the
target language is installed (the card then records ``fst_version``; :mod:`mtboard.validate` recomputes with FST on
exactly when the card has an FST acceptance rate)."""


def _score(plan: Plan, translated: Translated, records: list[TranslationRecord], elapsed: float,
           price_in: float | None, price_out: float | None) -> tuple[Any, list[Any]]:
    from mtboard import scoring

    ds = plan.corpus.dataset
    return scoring.score_run(plan.entries, records, source_language=ds.source_language,
                             target_language=ds.target_language, elapsed_seconds=elapsed, fst=FST_MODE,
                             strip_unknown_marks=bool(getattr(plan.backend_cls, "strip_unknown_marks", False)),
                             price_in_per_mtok=price_in, price_out_per_mtok=price_out)


def public_spec(plan: Plan) -> MethodSpec:
    """The method spec as recorded in the card: the backend's ``public_model`` hook may shorten the model part (a
    gguf ``PATH`` → its file name) so that no local folder names are published."""
    hook = getattr(plan.backend_cls, "public_model", None)
    if hook is None:
        return plan.spec
    model = hook(plan.spec.model)
    if model == plan.spec.model:
        return plan.spec
    text = f"{plan.spec.backend}:{model}" + (f":{plan.spec.effort}" if plan.spec.effort else "")
    return MethodSpec(text=text, backend=plan.spec.backend, model=model, effort=plan.spec.effort)


def finish(translated: Translated, *, judge: str | list[str] | None = None,
           t_session_start: float | None = None) -> RunOutcome:
    """Score, assemble and write the card, run judges (if asked; see :func:`judge_specs`) and re-write the judged
    card, then write report.md.

    The unjudged card is written before the judges run, so a judge that fails (endpoint down) leaves a valid card
    that ``mtboard judge WORKDIR`` can judge later.

    Raises: IncompleteRunError (after writing report.md) when transport/backend failures remain and
    ``allow_incomplete`` is off, or when entries have no record at all; whatever the judges raise.
    """
    from mtboard import scoring
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
        corpus=plan.corpus, corpus_sha256=plan.corpus_sha256, segment=plan.entries[0].segment, spec=public_spec(plan),
        method_class=getattr(plan.backend_cls, "method_class"), description=translated.description,
        prompt=plan.prompt, system_prompt=plan.system_prompt, condition=plan.condition,
        temperature=plan.options.temperature, max_tokens=plan.options.max_tokens if plan.uses_prompt else None,
        batch_size=plan.batch_size, max_retries=plan.options.max_retries, concurrency=plan.options.concurrency,
        runs=runs, limit=s.limit, price_in=price_in, price_out=price_out, scores=scores, results=results,
        totals=totals, run_id=translated.manifest["run_id"], timestamp=translated.manifest["timestamp"],
        elapsed_seconds=elapsed, judges={}, notes=s.notes, streaming=plan.options.stream,
        fst_version=scoring.fst_version(plan.corpus.dataset.target_language, FST_MODE))
    judge_note = None
    out = s.out or plan.work_dir / "card.json"
    write_card(card, out)
    if judge_specs(judge):
        card, judge_note = run_judge_hook(judge, plan, card)
        write_card(card, out)
    write_report(report_path, translated, card, price_source, judge_note)
    return RunOutcome(card=card, card_path=Path(out), report_path=report_path, translated=translated,
                      price_source=price_source, judge_note=judge_note)


def run_judge_hook(judge: str | list[str], plan: Plan, card: Any) -> tuple[Any, str]:
    """Judge the fresh card with ``mtboard.judges.run_judges`` (issue 5): ``--judge KIND=openai:MODEL[:EFFORT]``,
    repeatable or comma-separated, with the run's ``allow_self_judge`` and ``bench``. Returns the re-sealed card and a
    one-line note.

    Raises: ConfigError when judges are not available; whatever the judges raise (ConfigError, BackendError).
    """
    run_judge_hook_check()
    from mtboard.judges import run_judges

    specs = judge_specs(judge)
    s = plan.settings
    judged = run_judges(card, plan.corpus, specs, workdir=plan.work_dir, allow_self_judge=s.allow_self_judge,
                        bench=s.bench)
    notes = []
    for kind, summ in sorted(judged.judges.items()):
        notes.append(f"{kind} {summ.backend}:{summ.model} mean {summ.mean}")
    return judged, "; ".join(notes) or f"judged with {', '.join(specs)}"


def preflight_judges(plan: Plan) -> list[str]:
    """Check the run's judge options before anything is translated, so a refused judge costs nothing
    (``mtboard.judges.preflight``: spec syntax, one spec per kind, the self-judge family rule against the method's
    model, prompt files, a judge endpoint in the environment; for ``checkpoints`` the ``--bench`` folder and that
    it was made for this corpus file).

    The translator's resolved model id is only known after translating; ``run_judges`` checks the family rule again
    with it. Returns the judge specs ([] for none). Raises: ConfigError / InputError (one line).
    """
    specs = judge_specs(plan.settings.judge)
    if not specs:
        return []
    run_judge_hook_check()
    from mtboard.judges import preflight

    s = plan.settings
    translator_models = [f"{plan.spec.backend}/{plan.spec.model}" if plan.spec.model else plan.spec.backend,
                         plan.spec.model or None]
    parsed = preflight(specs, translator_models=translator_models, allow_self_judge=s.allow_self_judge,
                       bench=s.bench, need_endpoint=True)
    if any(p.kind == "checkpoints" for p in parsed):
        from mtboard.judges import load_bench

        bench = load_bench(s.bench)
        if bench.corpus_sha256 != plan.corpus_sha256:
            raise ConfigError(f"--bench {s.bench} was made for another corpus file (sha256 "
                              f"{bench.corpus_sha256[:12]}…), not {plan.settings.corpus_path} (sha256 "
                              f"{plan.corpus_sha256[:12]}…)", field="--bench",
                              fix="run the benchmark's own corpus file, or pass the matching --bench")
    return specs


def run(settings: RunSettings, progress: ProgressSink | None = None) -> RunOutcome:
    """prepare → judge preflight → translate_all → finish (sync entry point for the run command)."""
    plan = prepare(settings)
    preflight_judges(plan)
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


__all__ = ["RunSettings", "Plan", "WorkDir", "Translated", "RunOutcome", "IncompleteRunError", "ProgressSink",
           "PriceTable", "load_prices", "prepare", "translate_all", "finish", "run", "compute_totals",
           "make_requests", "resolve_prices", "write_report", "parse_backend_opts", "backend_options",
           "backend_option_keys", "judge_specs", "preflight_judges", "FST_MODE"]
