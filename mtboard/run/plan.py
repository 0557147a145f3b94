"""The run's typed objects, handed from stage to stage (issue 30: the report and the runner both import them, so they
live apart from both): :class:`Plan` (a prepared run — its :class:`~mtboard.run.settings.RunSettings`, the
frozen :class:`~mtboard.inputs.runspec.RunSpec`, the corpus slice, the backend and prompt), :class:`Translated` (the
translation phase's result), :class:`ProgressSink` (what the runner reports while translating) and
:class:`IncompleteRunError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mtboard.backends.base import Backend, Options
from mtboard.core.errors import MtboardError
from mtboard.score.fst import Analyser
from mtboard.inputs.prices import PriceTable
from mtboard.inputs.prompts import Prompt
from mtboard.inputs.runspec import BackendContext, RunSpec
from mtboard.core.schema import BackendFacts, Corpus, Entry, TranslationRecord
from mtboard.run.settings import RunSettings


class IncompleteRunError(MtboardError):
    """Transport/backend failures persisted: the run is not a valid card (re-run the same command, or
    ``--allow-incomplete``)."""


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
