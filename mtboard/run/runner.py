"""The run loop (issue 3): corpus → backend → append-only work directory → scores → run card.

Modules it uses: :mod:`mtboard.run.workdir` (the append-only, resumable work directory: ``run.json``,
``translations.jsonl``, ``raw.jsonl``, ``sessions.jsonl``, ``backend.json``), :mod:`mtboard.inputs.prices` (price table,
totals), :mod:`mtboard.run.report` (``report.md``), :mod:`mtboard.score.card` (assembling and sealing the card). The card
(``card.json``, default ``--out``) and ``report.md`` are written at the end.

Concurrency: ``concurrency`` batches in flight (``preferred_batch_size`` entries per ``translate`` call; 1 for LLM
backends), all ``--runs`` replicates interleaved in one queue so they run concurrently.

Failure policy (BookTrans): transport failures that persisted after the client's retries (error_kind ``transport``)
and configuration failures (``backend``) make the run incomplete: no card unless ``allow_incomplete``. Model failures
are final, scored 0 and recorded with their kind.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from mtboard.core import canonical, safejson
from mtboard.backends.base import Backend, Options, TranslateRequest, get_backend, parse_method, plugin_record
from mtboard.score.card import fit_reported_names, score_and_assemble
from mtboard.core.documents import load_corpus, write_card
from mtboard.core.errors import (BackendError, ConfigError, InputError, MtboardError, StorageError, check_writable,
                                  storage_faults)
from mtboard.run.gate import GATE_ENTRIES, check_early_gate
from mtboard.score.metrics.bleu import make_bleu
from mtboard.inputs.prices import PriceTable, price_table_for, resolve_rates
from mtboard.run.format_attempts import FormatAttempts, check_format_attempts
from mtboard.run.fst_gate import FstGate, check_pipeline
from mtboard.inputs.corpora.arms import arm_view, history_not_applicable
from mtboard.inputs.tools import parse_tools
from mtboard.inputs import native
from mtboard.inputs.prompts import Prompt, load_prompt
from mtboard.run.report import REPORT, write_report
from mtboard.inputs.runspec import DatasetIdentity, MethodSpec, RunSpec, endpoint_host_sha256
from mtboard.core.schema import (BackendFacts, Corpus, DatasetInfo, Entry, MethodClass, PromptChoice, RunCard,
                                  TranslationRecord)
from mtboard.run.plan import IncompleteRunError, Plan, ProgressSink, Translated
from mtboard.run.planned import check_planned_card, judge_specs
from mtboard.run.settings import RunSettings
from mtboard.run.workdir import INCOMPLETE_KINDS, WorkDir


MAX_COACHING_BYTES = 64 * 1024
"""Largest coaching file (it is sent with every request and stored in the card)."""


def load_coaching(path: Path, prompt: Prompt | None, backend: str) -> tuple[str, str, str]:
    """Read a ``--coaching`` file: ``(SHA-256 of its bytes, file name, text)`` (spec §3.2 ``coaching_data_sha256``).

    Raises: ConfigError when the method has no prompt or its prompt does not declare ``coaching`` (the data would be
    hashed but never reach the model); InputError for a file that is missing, a link, over 64 KiB, not UTF-8 or
    empty.
    """
    if prompt is None:
        raise ConfigError(f"backend {backend!r} takes the raw source text: it cannot receive coaching data",
                          field="--coaching", fix="drop --coaching, or use an LLM backend")
    if not prompt.uses_coaching:
        raise ConfigError(f"prompt {prompt.name!r} does not use coaching data (no `coaching` variable)",
                          field="--coaching", fix="pick a prompt that declares `coaching`, e.g. "
                                                  "--prompt coached-few-shot-completion")
    raw = safejson.read_bytes(path, max_bytes=MAX_COACHING_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("coaching file is not UTF-8", where=str(path), fix="save it as UTF-8") from None
    if not text.strip():
        raise InputError("coaching file is empty", where=str(path), fix="write the coaching data into it")
    return canonical.sha256_hex(raw), path.name, text


def prepare(settings: RunSettings, *, environment: bool = True) -> Plan:
    """Load the corpus and prompt, check everything the run needs, build the
    :class:`~mtboard.inputs.runspec.RunSpec` and pick the work directory. Nothing is sent yet.

    Everything the run will need after its first request is loaded and checked here, so a bad file costs no request
    (issue 24): the corpus, the backend options, the prompt template rendered for every selected entry (a template
    that fails on one entry's history fails now, not after the others were paid for), the price table
    (:func:`mtboard.inputs.prices.price_table_for`) and the target language's BLEU tokenizer (``ja-mecab`` needs an
    extra). :func:`preflight_judges` does the same for the judges. The settings' ranges (``--runs``, ``--limit`` …)
    and segment were checked when :class:`~mtboard.run.settings.RunSettings` was built. Phases, in order:
    :func:`_corpus_slice`, :func:`_prompt_and_coaching`, the tools (:func:`mtboard.run.fst_gate.check_pipeline`),
    the backend options, :func:`_run_spec`, :func:`_preflight`, then the folder of ``--out`` is tried
    (:func:`mtboard.core.errors.check_writable`: a file made and removed there), so a read-only or full ``--out``
    costs no request (issue 33 review finding 6); the work directory (report.md, the card by default) is tried by
    :func:`mtboard.run.workdir.lock_workdir`, which writes its ``.lock`` before the first request.

    ``environment=False`` (``mtboard sweep plan``, which runs where no secret is set): the backend's environment
    (:meth:`~mtboard.backends.base.Backend.check_environment`: its API key) and ``--out`` are not checked.

    Raises: ConfigError (unknown backend/prompt/backend option, a segment the corpus lacks, tools that cannot work,
    a template that cannot render, a missing tokenizer extra, ``--out`` a folder), InputError (corpus, coaching file,
    price table), StorageError (``--out``'s folder cannot be written: read-only, full, no permission).
    """
    method = parse_method(settings.method)
    backend_cls = get_backend(method.backend)
    if environment:
        backend_cls.check_environment(settings.base_url)
    corpus, dataset, entries = _corpus_slice(settings, backend_cls, method)
    prompt, coaching, system_prompt, choice = _prompt_and_coaching(settings, backend_cls, method.backend,
                                                                   corpus.dataset, model=method.model,
                                                                   environment=environment)
    why = history_not_applicable(settings.arm, settings.history, method=method.backend,
                                 raw=backend_cls.prompt_format == "raw", prompt=prompt.name if prompt else None,
                                 prompt_uses_history=prompt is not None and prompt.uses_history)
    if why is not None:  # issue 40: a history run whose history would reach no model
        raise ConfigError(why, field="--history" if settings.history else "--arm",
                          fix="drop --history/--arm scene-context for this method, or use a prompt with history "
                              "(context-chat, context-completion)")
    tools = parse_tools(settings.tools)
    fst_retries, analyser = check_pipeline(tools, settings.fst_retries, backend_cls=backend_cls, prompt=prompt,
                                           target_language=dataset.target_language)
    format_attempts = check_format_attempts(settings.format_attempts, backend_cls=backend_cls, prompt=prompt,
                                            tools=tools)
    options = backend_cls.parse_options(settings.backend_extra)
    spec = _run_spec(settings, method, backend_cls, dataset, options, prompt=prompt, system_prompt=system_prompt,
                     coaching=coaching, tools=tools, fst_retries=fst_retries, format_attempts=format_attempts,
                     prompt_choice=choice)
    prices = _preflight(spec, settings, backend_cls, prompt, entries)
    work_dir = settings.work_dir or Path("runs") / dataset.id / spec.work_dir_name()
    if environment and settings.out is not None:  # the work dir: tried by lock_workdir (its .lock) before any request
        check_writable(settings.out, "--out")
    return Plan(settings=settings, spec=spec, corpus=corpus, entries=entries, backend_cls=backend_cls,
                options=options, prompt=prompt, work_dir=Path(work_dir), prices=prices, analyser=analyser)


def _corpus_slice(settings: RunSettings, backend_cls: type[Backend],
                  method: MethodSpec) -> tuple[Corpus, DatasetIdentity, list[Entry]]:
    """:func:`prepare`'s first phase: the corpus (its file's hash in the dataset identity), its language pair checked
    by the backend, the segment's entries seen through ``--arm``/``--history``
    (:func:`mtboard.inputs.corpora.arms.arm_view`: lines or scene items), the first ``limit`` of them. Raises: InputError (corpus), ConfigError
    (a language pair the backend cannot translate, a segment the corpus does not have)."""
    corpus, sha = load_corpus(settings.corpus_path)
    ds = corpus.dataset
    backend_cls.check_languages(method.model, ds.source_language, ds.target_language)
    entries = corpus.segment(settings.segment)
    if not entries:
        raise ConfigError(f"the corpus has no {settings.segment.value} entries", where=str(settings.corpus_path),
                          field="--segment", fix="pick a segment the corpus has")
    entries = arm_view(entries, settings.arm, settings.history)  # the corpus view (issue 40): lines or scenes
    if settings.limit is not None:
        entries = entries[: settings.limit]
    dataset = DatasetIdentity(id=ds.id, version=ds.version, sha256=sha, language_pair=ds.language_pair,
                              source_language=ds.source_language, target_language=ds.target_language,
                              segment=settings.segment, limit=settings.limit)
    return corpus, dataset, entries


def _prompt_and_coaching(settings: RunSettings, backend_cls: type[Backend], backend: str, ds: DatasetInfo, *,
                         model: str = "", environment: bool = True
                         ) -> tuple[Prompt | None, tuple[str, str, str] | None, str, PromptChoice | None]:
    """:func:`prepare`'s second phase: ``(prompt, coaching, system prompt, choice)`` — the prompt template (None for
    an engine that takes the raw source; ``--prompt``, else the served model's native format, :func:`choose_prompt`),
    the ``--coaching`` file as :func:`load_coaching` reads it (given to the prompt), the prompt's system block
    rendered for the language pair (``""`` without a prompt) and how the template was chosen (None with
    ``--prompt``).
    Raises: ConfigError (``--prompt`` for a raw engine, an unknown prompt, coaching the prompt cannot use),
    InputError (coaching file)."""
    prompt: Prompt | None = None
    choice: PromptChoice | None = None
    if backend_cls.prompt_format == "raw":
        if settings.prompt:
            raise ConfigError(f"backend {backend!r} takes the raw source text; it has no prompt",
                              field="--prompt", fix="drop --prompt")
    elif settings.prompt:
        prompt = load_prompt(settings.prompt)  # --prompt always wins
    else:
        choice = choose_prompt(backend_cls, model, settings.base_url, ask=environment,
                               source_language=ds.source_language, target_language=ds.target_language)
        prompt = load_prompt(choice.template if choice is not None else backend_cls.default_prompt)
    coaching = load_coaching(settings.coaching, prompt, backend) if settings.coaching else None
    if prompt is None:
        return None, coaching, "", None
    if coaching is not None:
        prompt = prompt.with_coaching(coaching[2])
    return prompt, coaching, prompt.system_prompt(ds.source_language, ds.target_language), choice


def choose_prompt(backend_cls: type[Backend], model: str, base_url: str | None, *, ask: bool = True,
                  source_language: str | None = None, target_language: str | None = None) -> PromptChoice | None:
    """The prompt template for a run without ``--prompt`` (issue 40 item 4): the native format of the served model's
    family (:func:`mtboard.inputs.native.choose` over :meth:`Backend.prompt_evidence`); for a base model of a chat
    family (no chat template in its weights) :data:`~mtboard.inputs.native.BASE_MODEL_PROMPT` where it can render the
    language pair, else the backend's default; the backend's default template when no family is recognised ("family
    not recognised"). None — the default template, nothing recorded — when the backend cannot say what it serves, or
    ``ask`` is False (``mtboard sweep plan``: no server is asked). Never raises."""
    if not ask:
        return None
    evidence = backend_cls.prompt_evidence(model, base_url)
    if evidence is None:
        return None
    picked = native.choose(evidence)
    template = backend_cls.default_prompt
    if picked.row is not None and not picked.base_model:
        template = picked.row.template
    elif picked.base_model and source_language and target_language:
        try:
            load_prompt(native.BASE_MODEL_PROMPT).system_prompt(source_language, target_language)
            template = native.BASE_MODEL_PROMPT
        except MtboardError:  # no examples for this pair: the backend's default
            pass
    return PromptChoice(family=picked.row.family if picked.row else None, source=picked.source,
                        evidence=picked.evidence[:300] if picked.evidence else None, template=template,
                        reason=picked.reason[:500])


def _run_spec(settings: RunSettings, method: MethodSpec, backend_cls: type[Backend], dataset: DatasetIdentity,
              options: Options, *, prompt: Prompt | None, system_prompt: str, coaching: tuple[str, str, str] | None,
              tools: tuple[str, ...], fst_retries: int | None, format_attempts: int | None = None,
              prompt_choice: PromptChoice | None = None) -> RunSpec:
    """:func:`prepare`'s RunSpec: the settings with the backend's defaults filled in (condition, temperature 0 and
    the token cap for prompted runs — None for raw engines —, concurrency, batch size), the backend options as
    given (typed, sorted), the endpoint's host hash, tools and coaching."""
    raw_engine = backend_cls.prompt_format == "raw"
    given = options.model_dump(mode="json", exclude_unset=True)
    condition = settings.condition or (prompt.name if prompt else "baseline"
                                       if backend_cls.method_class == MethodClass.baseline else "default")
    return RunSpec(
        method=method, public_method=method.with_model(backend_cls.public_model(method.model)),
        method_class=backend_cls.method_class_for(coaching=coaching is not None, tools=bool(tools)),
        plugin=plugin_record(method.backend), dataset=dataset,
        prompt_name=prompt.name if prompt else None, prompt_format=prompt.format if prompt else "raw",
        prompt_template_sha256=prompt.template_sha256 if prompt else None, system_prompt=system_prompt,
        condition=condition,
        temperature=None if raw_engine else (0.0 if settings.temperature is None else settings.temperature),
        max_tokens=None if raw_engine else settings.max_tokens, stream=settings.stream, runs=settings.runs,
        concurrency=settings.concurrency or backend_cls.default_concurrency,
        batch_size=max(1, backend_cls.preferred_batch_size), max_retries=settings.max_retries,
        timeout_s=settings.timeout_s, backend_options=tuple(sorted(given.items())),
        endpoint_host_sha256=endpoint_host_sha256(backend_cls.endpoint_url(settings.base_url)),
        tools=tools, fst_retries=fst_retries, format_attempts=format_attempts, prompt_choice=prompt_choice,
        arm=settings.arm, history=settings.history,
        **({"coaching_sha256": coaching[0], "coaching_file": coaching[1], "coaching_text": coaching[2]}
           if coaching else {}))


def _preflight(spec: RunSpec, settings: RunSettings, backend_cls: type[Backend], prompt: Prompt | None,
               entries: list[Entry]) -> PriceTable | None:
    """:func:`prepare`'s last checks before anything is sent: the prompt rendered for every selected entry (render
    errors are per entry — a template indexing history —: find them all now), the price table
    (:func:`mtboard.inputs.prices.price_table_for`; returned), the BLEU tokenizer scoring will need, and the card the
    run will write (:func:`mtboard.run.planned.check_planned_card`: every rule of the card's schema and the
    validator's names, method and secrets checks, on the planned card; issue 33 item 4).
    Raises: ConfigError (a template that cannot render, a missing tokenizer extra, a card rule the options break),
    InputError (price table)."""
    ds = spec.dataset
    if prompt is not None:
        for e in entries:
            prompt.render(e.source, ds.source_language, ds.target_language, history=list(e.history))
    prices = price_table_for(spec, priced=backend_cls.priced, price_in=settings.price_in,
                             price_out=settings.price_out)
    make_bleu(ds.target_language)  # the BLEU tokenizer scoring will need (ConfigError naming the extra)
    check_planned_card(spec, settings, backend_cls, entries, prices)
    return prices


# --------------------------------------------------------------------------------------------------------------------
# Translation phase


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


def _construct_backend(plan: Plan) -> Backend:
    return plan.backend_cls(plan.spec.method, plan.backend_context(), plan.options)


async def check_judges_before_sending(plan: Plan, facts: BackendFacts) -> None:
    """The judge family rule with the translator's identity as its server reported it (``facts``, after
    :meth:`Backend.identify`) and the judge's server asked too — before the first translation request, so a
    refused judge costs no translation (the card's names are the same: ``model_slug``, ``method.model``,
    ``model_id``). Nothing without ``--judge``. Raises: ConfigError."""
    specs = judge_specs(plan.settings.judge)
    if not specs:
        return
    s = plan.settings
    translator_models = [plan.spec.model_slug(facts), plan.spec.method.model or None, facts.model_id]
    from mtboard import judges  # noqa: PLC0415 - only with --judge: a run without judges never imports them (issue 35)

    await judges.check_families_before_translating(
        specs, translator_models, allow_self_judge=s.allow_self_judge, translator_is_llm=plan.spec.uses_prompt,
        judge_family=s.judge_family, translator_family=s.translator_family, base_url=s.base_url)


async def translate_all(plan: Plan, progress: ProgressSink | None = None,
                        backend: Backend | None = None, notice: Callable[[str], None] | None = None) -> Translated:
    """Translate every (run, entry) job not yet finished in the work directory; append records as they finish.

    ``backend`` (tests) replaces the registry construction. The backend is always closed (also on Ctrl-C/errors).
    Before the first request the backend identifies its model (:meth:`Backend.identify`): judges are checked against
    it (:func:`check_judges_before_sending`), and ``notice`` (the CLI: stderr) is told when the identity stays
    unknown (``BackendFacts.identity_note``: a server too busy to answer).
    Prompted runs pass the early gate (:mod:`mtboard.run.gate`) unless ``settings.early_gate`` is off: once the first
    entries have finished (stored ones first, in corpus order, then in the order they finish) most of them must not
    hit the token cap or echo template markup.

    Phases: open the work directory and plan the jobs left (:func:`_resume`); re-check the early gate on the stored
    records; return at once when nothing is left; else run a :class:`_Session` (start and identify the backend,
    the workers, closing) and save the backend's description.

    Raises: BackendError from the backend (start failure, fatal endpoint refusal), EarlyGateError, after flushing
    finished records.
    """
    work = WorkDir(plan.work_dir)
    manifest = work.open(plan.identity, {"corpus_path": str(Path(plan.settings.corpus_path).resolve())})
    jobs, gate_seen, stored = _resume(plan, work)
    total = len(plan.entries) * plan.settings.runs
    gated = plan.spec.uses_prompt and plan.settings.early_gate
    if gated and jobs:
        try:  # a run the gate stopped stops again when its command is repeated without --no-early-gate
            _early_gate(plan, gate_seen)
        except MtboardError:
            with suppress(StorageError):  # a full disk must not hide why the gate stopped the run
                work.close_session()
            raise
    if not jobs and stored is not None and backend is None:
        # nothing left to translate: do not start the backend (a local model would load, canary and gate again)
        work.close_session()
        if progress:
            progress.start(total, total)
            progress.stop()
        return _translated(plan, work, manifest, stored, 0)
    session = _Session(plan, work, backend if backend is not None else _construct_backend(plan), progress,
                       jobs=jobs, total=total, gate_seen=gate_seen if gated else None)
    description = await session.run(notice)
    work.save_description(description)
    return _translated(plan, work, manifest, description, session.sent,
                       rate_limit_wait_s=union_seconds(session.waits), rate_limited_responses=session.limited)


def _resume(plan: Plan, work: WorkDir) -> tuple[list[tuple[int, Entry]], list[TranslationRecord],
                                                 BackendFacts | None]:
    """What an opened work directory leaves to do: the ``(run index, entry)`` jobs without a record (corpus order,
    replicates of an entry together), the stored records the early gate counts first (corpus order) and the stored
    backend description (None before the first session saved one)."""
    done = work.finished()
    runs = plan.settings.runs
    jobs = [(ri, e) for e in plan.entries for ri in range(runs) if (ri, e.id) not in done]
    stored = work.load_description()
    stored_records = work.records()
    gate_seen = [stored_records[(ri, e.id)] for e in plan.entries for ri in range(runs) if (ri, e.id) in done]
    return jobs, gate_seen, stored


def _early_gate(plan: Plan, seen: list[TranslationRecord]) -> None:
    """:func:`mtboard.run.gate.check_early_gate` over the records seen so far. Raises: EarlyGateError."""
    check_early_gate(seen, prompt_name=plan.spec.prompt_name, prompt_format=plan.spec.prompt_format,
                     max_tokens=plan.spec.max_tokens)


class _Session:
    """One translation session of :func:`translate_all` (internal): the state its phases and workers share — the
    queue of batches, the counters (requests sent, failures, rate-limited responses and waits), the raw lines not
    yet written and the group-commit fsync (:meth:`_syncer`).

    Records are written on the event loop as each batch finishes, after the raw lines gathered so far; the fsync
    follows in a thread. ``concurrency`` workers take batches from one queue (:meth:`_worker`)."""

    def __init__(self, plan: Plan, work: WorkDir, backend: Backend, progress: ProgressSink | None, *,
                 jobs: list[tuple[int, Entry]], total: int, gate_seen: list[TranslationRecord] | None) -> None:
        """``gate_seen``: the stored records the early gate counts first (None: no early gate).

        Raises: ConfigError for a ``--tools`` run without its prompt and analyser (not from
        :func:`prepare`)."""
        self.plan, self.work, self.backend, self.progress, self.jobs = plan, work, backend, progress, jobs
        self.gate_seen = gate_seen
        self.pending_raw: list[dict[str, Any]] = []
        self.session = work.session
        self.waits: list[list[float]] = []
        """Rate-limit waits ``[start, end]`` (seconds) reported in the raw lines."""
        self.limited = 0
        """Responses that were rate-limited (attempts marked ``rate_limited``)."""
        self.has_sink = backend.writes_raw
        if self.has_sink:
            backend.raw_sink = self._sink
        self.failures = 0
        self.sent = 0
        if progress:
            progress.start(total, total - len(jobs))
        self.by_id = {e.id: e for e in plan.entries}
        self.dirty = asyncio.Event()
        self.done_writing = False
        self.sync_error: MtboardError | None = None
        """The first StorageError of a background fsync (:meth:`_syncer`): the workers stop at their next batch and
        :meth:`run` raises it (an fsync error is reported once per file by Linux: swallowed, it would be lost)."""
        # an fsync cut short by Ctrl-C may still run in its thread when the last one starts
        self.sync_lock = threading.Lock()
        self.translate = self._translator()
        self.batches = [jobs[i: i + plan.spec.batch_size] for i in range(0, len(jobs), plan.spec.batch_size)]
        self.queue: asyncio.Queue[list[tuple[int, Entry]]] = asyncio.Queue()
        for b in self.batches:
            self.queue.put_nowait(b)

    def _translator(self) -> Callable[[list[TranslateRequest]], Any]:
        """The backend's ``translate``, or for a pipeline method (``--tools``) the FST gate's, which calls the backend
        (:mod:`mtboard.run.fst_gate`), or with ``--format-attempts N`` (N ≥ 2) the format attempts'
        (:mod:`mtboard.run.format_attempts`)."""
        plan = self.plan
        translate = self.backend.translate
        if plan.spec.tools:
            if plan.prompt is None or plan.analyser is None or plan.spec.fst_retries is None:
                raise ConfigError("a run with --tools needs its prompt and analyser (use mtboard.run.runner.prepare)",
                                  field="--tools")
            fst_gate = FstGate(self.backend, plan.prompt, plan.analyser, plan.spec.fst_retries,
                               source_language=plan.spec.dataset.source_language,
                               target_language=plan.spec.dataset.target_language,
                               strip_unknown_marks=plan.backend_cls.strip_unknown_marks)
            translate = fst_gate.translate
        elif plan.spec.format_attempts is not None:
            attempts = FormatAttempts(self.backend, plan.spec.format_attempts,
                                      source_language=plan.spec.dataset.source_language,
                                      target_language=plan.spec.dataset.target_language,
                                      strip_unknown_marks=plan.backend_cls.strip_unknown_marks)
            translate = attempts.translate
        return translate

    def _sink(self, obj: dict[str, Any]) -> None:
        """The backend's raw sink: keep the raw line (stamped with the session) for the next write, and count its
        rate-limit waits and rate-limited attempts."""
        obj = dict(obj)
        obj["session"] = self.session
        self.pending_raw.append(obj)
        self.waits.extend(obj.get("rate_limit_waits") or ())
        self.limited += sum(1 for a in obj.get("attempts") or () if isinstance(a, dict) and a.get("rate_limited"))

    def _write(self, recs: list[TranslationRecord]) -> None:
        """Write the finished records (after the raw lines gathered so far) on the event loop, at once: a kill -9
        from here on loses nothing. The fsync follows in a thread (:meth:`_syncer`)."""
        raws = self.pending_raw[:]
        del self.pending_raw[: len(raws)]
        if not self.has_sink:
            now = time.time()
            raws += [{"session": self.session, "run_index": r.run_index, "entry_id": r.entry_id, "t_end": now,
                      "request": {"source": self.by_id[r.entry_id].source}, "response": r.raw_predicted,
                      "error": r.error} for r in recs]
        self.work.write_bytes(*self.work.encode(recs, raws))

    def _sync(self) -> None:
        with self.sync_lock:
            self.work.sync()

    async def _syncer(self) -> None:
        """Group commit: one fsync for whatever was written while the previous one ran. A storage fault ends it and
        is kept in :attr:`sync_error`."""
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            try:
                await asyncio.to_thread(self._sync)
            except StorageError as exc:
                self.sync_error = exc
                return
            if self.done_writing and not self.dirty.is_set():
                return

    async def run(self, notice: Callable[[str], None] | None) -> BackendFacts:
        """Start the backend, identify it and check the judges (when jobs are left), run the workers until the
        queue is empty, then close (:meth:`_close`, also on errors and Ctrl-C). Returns the backend's description.

        Raises: the first MtboardError a worker raised (unwrapped from the task group), else what was raised; a
        StorageError of the background fsync or of closing (disk full, the work directory vanished) when nothing
        else failed."""
        syncer_task: asyncio.Task[None] | None = None
        failing = True
        try:
            await asyncio.to_thread(self.backend.start)
            if self.jobs:
                await self._identify(notice)
            syncer_task = asyncio.create_task(self._syncer())
            n_workers = min(self.plan.spec.concurrency, max(1, len(self.batches)))
            async with asyncio.TaskGroup() as tg:
                for _ in range(n_workers):
                    tg.create_task(self._worker())
            failing = False
        except BaseExceptionGroup as eg:  # unwrap the first MtboardError for a one-line message
            for exc in eg.exceptions:
                if isinstance(exc, MtboardError):
                    raise exc from None
            raise
        finally:
            description = await self._close(syncer_task, failing=failing)
        if description is None:
            description = self.backend.describe()
        return description

    async def _identify(self, notice: Callable[[str], None] | None) -> None:
        """Ask the backend who it is (:meth:`Backend.identify`), tell ``notice`` when the identity stays unknown,
        and check the judges against it (:func:`check_judges_before_sending`). Raises: ConfigError."""
        identify = getattr(self.backend, "identify", None)  # test doubles may not be Backend subclasses
        if identify is not None:
            await identify()
        facts = self.backend.describe()
        if facts.identity_note and notice is not None:
            notice(f"warning     {facts.identity_note}")
        await check_judges_before_sending(self.plan, facts)

    async def _worker(self) -> None:
        """Take batches from the queue until it is empty: render, translate, check and record each."""
        while True:
            if self.sync_error is not None:  # the disk refused an fsync: send nothing more
                raise self.sync_error
            try:
                batch = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            reqs = make_requests(self.plan, batch)
            self.sent += len(reqs)
            recs = await self.translate(reqs)
            self._record(self._checked(reqs, recs))

    def _checked(self, reqs: list[TranslateRequest], recs: list[TranslationRecord]) -> list[TranslationRecord]:
        """The backend's records for ``reqs``, each given its request's run index; failures counted.

        Raises: BackendError for a wrong number of records or a record for another entry."""
        if len(recs) != len(reqs):
            raise BackendError(f"backend returned {len(recs)} records for {len(reqs)} requests",
                               where=self.plan.spec.backend)
        fixed = []
        for req, rec in zip(reqs, recs):
            if rec.entry_id != req.entry_id:
                raise BackendError(f"backend returned entry {rec.entry_id} for entry {req.entry_id}",
                                   where=self.plan.spec.backend)
            if rec.run_index != req.run_index:
                rec = rec.model_copy(update={"run_index": req.run_index})
            fixed.append(rec)
            if rec.error_kind is not None:
                self.failures += 1
        return fixed

    def _record(self, fixed: list[TranslationRecord]) -> None:
        """Write a finished batch, wake the syncer, advance the progress and, until the gate has seen
        :data:`~mtboard.run.gate.GATE_ENTRIES` records, check the early gate. Raises: EarlyGateError."""
        self._write(fixed)
        self.dirty.set()
        if self.progress:
            self.progress.advance(len(fixed), self.failures)
        if self.gate_seen is not None and len(self.gate_seen) < GATE_ENTRIES:
            self.gate_seen.extend(fixed)
            _early_gate(self.plan, self.gate_seen)

    async def _close(self, syncer_task: asyncio.Task[None] | None, *, failing: bool = False) -> BackendFacts | None:
        """Finish the session whatever happened: let the syncer write its last fsync, write raw lines of requests
        whose entries never finished (an error, Ctrl-C), fsync, describe and close the backend (neither may mask the
        real error), close the session in the work directory and stop the progress. Returns the description, None
        when describing failed.

        A storage fault while closing (the disk still full, the work directory gone) never masks the error that
        stopped the session (``failing``); when the session ended normally the first one is raised after
        everything is closed. Raises: StorageError."""
        late: MtboardError | None = None
        if syncer_task is not None:
            self.done_writing = True
            self.dirty.set()
            try:
                await asyncio.shield(syncer_task)
            except BaseException:
                pass
        try:
            if self.pending_raw:  # raw lines of requests whose entries never finished (an error, Ctrl-C)
                self._write([])
            self._sync()
        except StorageError as exc:
            late = exc
        description: BackendFacts | None = None
        try:
            description = self.backend.describe()
        except Exception:  # noqa: BLE001 - describing must not mask the real error
            description = None
        try:
            await self.backend.aclose()
        except Exception:  # noqa: BLE001 - closing must not mask the real error
            pass
        try:
            self.work.close_session(self.sent)
        except StorageError as exc:
            late = late or exc
        if self.progress:
            self.progress.stop()
        late = self.sync_error or late
        if late is not None and not failing:
            raise late
        return description


def union_seconds(intervals: list[list[float]]) -> float:
    """Length of the union of ``[start, end]`` intervals, seconds (overlapping waits of concurrent requests count
    once). ``[[0, 2], [1, 3], [5, 6]]`` → 4.0."""
    total, end = 0.0, float("-inf")
    for a, b in sorted((float(a), float(b)) for a, b in intervals if b > a):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def _translated(plan: Plan, work: WorkDir, manifest: dict[str, Any], description: BackendFacts,
                sent: int, *, rate_limit_wait_s: float = 0.0, rate_limited_responses: int = 0) -> Translated:
    m = plan.spec.public_method  # a name the server reported that the card cannot hold gives way to the typed one
    description = fit_reported_names(description, plan.backend_cls.model_slug_for(m.model, m.effort))
    records = work.records()
    selected = {(ri, e.id) for e in plan.entries for ri in range(plan.settings.runs)}
    incomplete = [r for k, r in records.items() if k in selected and r.error_kind in INCOMPLETE_KINDS]
    return Translated(plan=plan, manifest=manifest, records={k: v for k, v in records.items() if k in selected},
                      description=description, elapsed_seconds=work.elapsed_seconds(), sent=sent,
                      incomplete=incomplete, rate_limit_wait_s=rate_limit_wait_s,
                      rate_limited_responses=rate_limited_responses)


# --------------------------------------------------------------------------------------------------------------------
# Scoring, totals, card



@dataclass
class RunOutcome:
    """What ``mtboard run`` reports: the card (None when incomplete), paths and the translation facts."""

    card: RunCard | None
    card_path: Path | None
    report_path: Path
    translated: Translated
    price_source: str
    judge_note: str | None = None


def check_complete(translated: Translated, price_source: str) -> None:
    """Raise IncompleteRunError (after writing report.md) when entries have no record, or transport/backend
    failures remain and ``--allow-incomplete`` is off (BookTrans failure policy)."""
    plan = translated.plan
    runs = plan.spec.runs
    missing = [(ri, e.id) for ri in range(runs) for e in plan.entries if (ri, e.id) not in translated.records]
    if not missing and not (translated.incomplete and not plan.settings.allow_incomplete):
        return
    write_report(plan.work_dir / REPORT, translated, None, price_source)
    kinds = Counter(r.error_kind.value for r in translated.incomplete if r.error_kind)
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    if missing:
        what = (what + ", " if what else "") + f"{len(missing)} without any record"
    raise IncompleteRunError(f"{len(translated.incomplete) + len(missing)} entries failed not by the model's "
                             f"fault ({what}); the run is not a valid card", where=str(plan.work_dir),
                             fix="re-run the same command to retry only those entries, or pass --allow-incomplete")


def build_card(translated: Translated, *, elapsed_seconds: float | None = None) -> tuple[RunCard, str]:
    """Score every replicate and assemble the sealed, unjudged card (not written). Returns ``(card, price
    source)``.

    ``elapsed_seconds``: translation wall-clock recorded in the card (default: the work directory's, rounded to
    ms); scoring uses ``elapsed / runs``, exactly as :mod:`mtboard.validate` recomputes it from the card.
    Replicates (``--runs N``): run 0's results and scores; every other run's per-entry results (outputs,
    statistics, scores) in ``replicate_runs``; every run's chrF++ and composite with mean and spread in
    ``scores.replicates``; totals cover all runs. The validator recomputes each replicate from its stored outputs.
    """
    plan = translated.plan
    rates, price_source = resolve_rates(plan.spec, translated.description, priced=plan.backend_cls.priced,
                                        price_in=plan.settings.price_in, price_out=plan.settings.price_out,
                                        table=plan.prices)
    elapsed = round(translated.elapsed_seconds, 3) if elapsed_seconds is None else elapsed_seconds
    runs = [translated.run_records(ri) for ri in range(plan.spec.runs)]
    try:
        card = score_and_assemble(plan.spec, translated.description, plan.entries, runs, rates=rates,
                                  strip_unknown_marks=plan.backend_cls.strip_unknown_marks, elapsed_seconds=elapsed,
                                  run_id=translated.manifest["run_id"], timestamp=translated.manifest["timestamp"],
                                  notes=plan.settings.notes)
    except ValidationError as exc:  # a rule only the answers could break: the translations stay, the error says so
        from mtboard.core.schema import describe_validation_error

        rule = describe_validation_error(exc, exc.title)
        raise MtboardError(f"the finished card breaks a rule of the run card ({rule}); every translation is kept in "
                           f"{plan.work_dir}", where=str(plan.work_dir),
                           fix="report it as a bug in mtboard with this line; once fixed, re-running the same command "
                               "scores the kept translations without sending anything") from None
    return card, price_source


def finish(translated: Translated, *, judge: str | list[str] | None = None) -> RunOutcome:
    """Score, assemble and write the card, run judges (if asked; see :func:`judge_specs`) and re-write the judged
    card, then write report.md.

    The unjudged card is written before the judges run, so a judge that fails (endpoint down) leaves a valid card
    that ``mtboard judge WORKDIR`` can judge later.

    Raises: IncompleteRunError (after writing report.md) when transport/backend failures remain and
    ``allow_incomplete`` is off, or when entries have no record at all; whatever the judges raise; StorageError
    naming the card or report.md when the disk refuses them (the translations stay: re-running scores them).
    """
    plan = translated.plan
    s = plan.settings
    _, price_source = resolve_rates(plan.spec, translated.description, priced=plan.backend_cls.priced,
                                    price_in=s.price_in, price_out=s.price_out, table=plan.prices)
    with storage_faults(plan.work_dir / REPORT):
        check_complete(translated, price_source)
    card, price_source = build_card(translated)
    judge_note = None
    out = s.out or plan.work_dir / "card.json"
    with storage_faults(out):
        write_card(card, out)
    if judge_specs(judge):
        try:
            card, judge_note = run_judge_hook(judge, plan, card)
        except BaseException as exc:  # report.md on every stop after translation, saying why the judges did not run
            why = exc.one_line() if isinstance(exc, MtboardError) else type(exc).__name__
            with suppress(OSError, StorageError):  # a full disk must not hide why the judges stopped
                write_report(plan.work_dir / REPORT, translated, card, price_source,
                             f"judges not run: {why}; the card is unjudged (judge it with `mtboard judge "
                             f"{plan.work_dir}`)")
            raise
        with storage_faults(out):
            write_card(card, out)
    with storage_faults(plan.work_dir / REPORT):
        write_report(plan.work_dir / REPORT, translated, card, price_source, judge_note)
    return RunOutcome(card=card, card_path=Path(out), report_path=plan.work_dir / REPORT, translated=translated,
                      price_source=price_source, judge_note=judge_note)


def run_judge_hook(judge: str | list[str], plan: Plan, card: RunCard) -> tuple[RunCard, str]:
    """Judge the fresh card with ``mtboard.judges.run_judges`` (issue 5): ``--judge KIND=openai:MODEL[:EFFORT]``,
    repeatable or comma-separated, with the run's ``allow_self_judge`` and ``bench``. Returns the re-sealed card and a
    one-line note.

    Raises: whatever the judges raise (ConfigError, BackendError).
    """
    from mtboard import judges  # noqa: PLC0415 - only with --judge (issue 35 item 4)

    specs = judge_specs(judge)
    s = plan.settings
    _, _, where = judges.judge_endpoint(s.base_url)
    judged = judges.run_judges(card, plan.corpus, specs, workdir=plan.work_dir, allow_self_judge=s.allow_self_judge,
                               bench=s.bench, max_attempts=s.judge_max_attempts, max_tokens=s.judge_max_tokens,
                               concurrency=s.judge_concurrency, price_in_per_mtok=s.judge_price_in,
                               price_out_per_mtok=s.judge_price_out, judge_family=s.judge_family,
                               base_url=s.base_url, translator_family=s.translator_family)
    kinds = [k.split("=", 1)[0].strip() for k in specs]
    lines = [f"judge endpoint from {where}"]
    lines += [judges.summary_line(kind, judged.judges[kind]) for kind in kinds if kind in judged.judges]
    return judged, "\n".join(lines)


def preflight_judges(plan: Plan) -> list[str]:
    """Check the run's judge options before anything is translated, so a refused judge costs nothing
    (``mtboard.judges.preflight``: spec syntax, one spec per kind, the self-judge family rule against the method's
    model, prompt files, a judge endpoint in the environment; for ``checkpoints`` the ``--bench`` folder and that
    it was made for this corpus file).

    The translator's identity is known once its server was asked: :func:`translate_all` checks the family rule
    with it before the first request (:func:`check_judges_before_sending`), and ``run_judges`` again with the card. Returns the judge specs ([] for none). Raises: ConfigError / InputError (one line).
    """
    specs = judge_specs(plan.settings.judge)
    if not specs:
        return []
    from mtboard import judges  # noqa: PLC0415 - only with --judge (issue 35 item 4)

    s = plan.settings
    m = plan.spec.method
    # the model as typed (the backend's name is no model family: "openai/qwen3" is a qwen model, not an openai one)
    translator_models = [m.model or None]
    parsed = judges.preflight(specs, translator_models=translator_models, allow_self_judge=s.allow_self_judge,
                              bench=s.bench, need_endpoint=True, judge_family=s.judge_family, base_url=s.base_url,
                              translator_family=s.translator_family)
    if any(p.kind == "checkpoints" for p in parsed):
        bench = judges.load_bench(s.bench)
        bench.check_corpus(plan.spec.dataset.sha256, str(plan.settings.corpus_path))
    return specs


def run(settings: RunSettings, progress: ProgressSink | None = None) -> RunOutcome:
    """prepare → judge preflight → translate_all → finish (sync entry point for the run command)."""
    plan = prepare(settings)
    preflight_judges(plan)
    translated = asyncio.run(translate_all(plan, progress))
    return finish(translated, judge=settings.judge)


__all__ = ["RunOutcome", "prepare", "translate_all", "check_complete", "build_card", "finish", "run", "make_requests",
           "judge_specs", "preflight_judges"]
