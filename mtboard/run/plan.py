"""The run's typed objects, handed from stage to stage (issue 30: the report and the runner both import them, so they
live apart from both): :class:`RunSettings` (what ``mtboard run`` was asked), :class:`Plan` (a prepared run: the
frozen :class:`~mtboard.inputs.runspec.RunSpec`, the corpus slice, the backend and prompt), :class:`Translated` (the
translation phase's result), :class:`ProgressSink` (what the runner reports while translating) and
:class:`IncompleteRunError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mtboard.backends.base import Backend, Options
from mtboard.core.errors import MtboardError
from mtboard.score.fst import Analyser
from mtboard.inputs.prices import PriceTable
from mtboard.inputs.prompts import Prompt
from mtboard.inputs.runspec import BackendContext, RunSpec
from mtboard.core.schema import BackendFacts, Corpus, Entry, TranslationRecord


class IncompleteRunError(MtboardError):
    """Transport/backend failures persisted: the run is not a valid card (re-run the same command, or
    ``--allow-incomplete``)."""


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
    judge_max_tokens: int | None = None
    """Output-token cap per judge request (``--judge-max-tokens``; default per judge)."""
    judge_max_attempts: int = 3
    """Judge answers asked per entry before judge_failed (``--judge-max-attempts``)."""
    judge_concurrency: int = 4
    """Judge requests in flight (``--judge-concurrency``)."""
    judge_price_in: float | None = None
    """USD per 1M judge prompt tokens (``--judge-price-in``)."""
    judge_price_out: float | None = None
    """USD per 1M judge completion tokens (``--judge-price-out``)."""
    judge_family: str | None = None
    """The judge's model family when its names do not tell it (``--judge-family``)."""
    translator_family: str | None = None
    """The translator's model family when its names do not tell it (``--translator-family``)."""
    coaching: Path | None = None
    """``--coaching FILE``: coaching data (glossary, grammar notes, examples; UTF-8 text) the prompt template
    receives as ``coaching`` (spec §3.2, §9.6 coached-llm)."""
    tools: tuple[str, ...] | list[str] | str | None = None
    """``--tools``: tools the method uses (:data:`mtboard.inputs.tools.TOOLS`; ``fst-gate``), making it a ``pipeline``
    method (spec §3.2 ``tools_enabled``, §9.6)."""
    fst_retries: int | None = None
    """``--fst-retries N``: the FST gate's retries after the first hypothesis (0–5; default 2 with ``fst-gate``)."""
    early_gate: bool = True
    """Stop a prompted run early when most of its first entries hit the token cap or echo chat-template markup
    (:mod:`mtboard.run.gate`); ``--no-early-gate`` runs on (e.g. to publish a mismatched prompt as a negative result)."""
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
    """A prepared run: the frozen :class:`~mtboard.inputs.runspec.RunSpec`, the corpus slice, the backend class with its
    typed options, the loaded prompt and the work directory. Nothing has been sent yet."""

    settings: RunSettings
    spec: RunSpec
    corpus: Corpus
    entries: list[Entry]
    backend_cls: type[Backend]
    options: Options
    prompt: Prompt | None
    work_dir: Path
    prices: PriceTable | None = None
    """The price table, loaded and validated by :func:`prepare` (None when the run does not look prices up)."""
    analyser: Analyser | None = None
    """The target-language analyser the FST gate checks with (``--tools fst-gate``; None without tools)."""

    def __repr__(self) -> str:
        return f"Plan({self.spec.method.text!r}, {len(self.entries)} entries, work_dir={str(self.work_dir)!r})"

    @property
    def identity(self) -> dict[str, Any]:
        """The work directory's identity (:meth:`RunSpec.identity`)."""
        return self.spec.identity()

    def backend_context(self) -> BackendContext:
        """What the backend is told about the run (the runtime ``--base-url`` and the first 18 sources included)."""
        return self.spec.backend_context(prompt=self.prompt, base_url=self.settings.base_url,
                                         sample_sources=[e.source for e in self.entries[:18]])


@dataclass(repr=False)
class Translated:
    """Result of the translation phase.

    (A short ``repr`` on purpose: ``asyncio.run`` formats the main task's result when it restores the SIGINT
    handler, and a full repr of thousands of records cost ~0.2 s per 1,000 entries.)
    """

    plan: Plan
    manifest: dict[str, Any]
    records: dict[tuple[int, int], TranslationRecord]
    description: BackendFacts
    """The backend's facts (:meth:`Backend.describe`)."""
    elapsed_seconds: float
    sent: int
    """(run, entry) pairs sent to the backend in this session."""
    incomplete: list[TranslationRecord]
    """Records whose failure was transport/backend (run incomplete)."""
    rate_limit_wait_s: float = 0.0
    """Wall-clock seconds of this session during which requests waited for a rate limit to reset (the union of
    every request's waits, from ``raw.jsonl``'s ``rate_limit_waits``)."""
    rate_limited_responses: int = 0
    """Rate-limited answers (429, 529, 503 announcing a wait) received in this session."""

    def __repr__(self) -> str:
        return f"Translated({self.plan.spec.method.text!r}, {len(self.records)} records, sent={self.sent})"

    def run_records(self, run_index: int) -> list[TranslationRecord]:
        """One record per selected entry for a replicate, in corpus order (entries without one are left out)."""
        return [self.records[(run_index, e.id)] for e in self.plan.entries if (run_index, e.id) in self.records]
