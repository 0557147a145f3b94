"""Format attempts (BookTrans write-up, "Checkpoint key": "a run with no valid output after 5 attempts scores 0 if
the model failed (loops, token cap, bad format)"; issue 39 item 5): ``mtboard run --format-attempts N`` (1–
:data:`~mtboard.core.schema.MAX_FORMAT_ATTEMPTS`, default 1 = ask once, as every card made before).

When an entry's answer fails the mechanical format rules (:func:`mtboard.score.checks.format_failure`: outcome
``no_usable_output`` by the model's fault — empty, token cap, refusal, unclosed reasoning — or a ``format.*`` flag —
speaker labels rewritten, markdown emphasis added, markup not preserved), the same request is sent again, up to N
answers in all. The entry keeps the first answer that passes, else the N-th; every answer asked again for is kept
in the record's ``failed_attempts`` (and so in the card) as received, with the rule it failed, and every request and
response stays in ``raw.jsonl`` with ``format_attempt`` (0 = the first). ``format_attempts`` = 1 + the failed
answers; each one past the first is penalised in the composite (docs/SCORING_SPEC.md §3.4).

Transport and configuration failures (:data:`mtboard.score.checks.RETRIED_BY_TRANSPORT`) are not format failures:
the client already retried them (``attempts``, ``max_retries``), and one that persisted ends the entry at once and
makes the run incomplete (resuming re-runs the whole entry) — never re-asked here, never penalised.

Cost: an entry's usage and latency are the sums over all its answers (spec §10.1, as the FST gate does); its
``attempts`` stay transport attempts (1 + every request's transport retries).

Where it sits: the runner hands each batch to :meth:`FormatAttempts.translate` instead of the backend's
``translate``; it imports the backend interface and the mechanical policy, nothing downstream (no scoring, card or
validator). Not combinable with ``--tools fst-gate`` (the gate re-asks already, on its own rule) nor with engines
that take no prompt (:func:`check_format_attempts`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

from mtboard.backends.base import Backend, TranslateRequest
from mtboard.core.errors import ConfigError
from mtboard.core.schema import MAX_FORMAT_ATTEMPTS, FailedAttempt, TranslationRecord
from mtboard.inputs.prompts import Prompt
from mtboard.run.fst_gate import summed_answers
from mtboard.score import checks

_ATTEMPT: contextvars.ContextVar[int | None] = contextvars.ContextVar("mtboard_format_attempt", default=None)


def check_format_attempts(n: int | None, *, backend_cls: type[Backend], prompt: Prompt | None,
                          tools: tuple[str, ...]) -> int | None:
    """Check ``--format-attempts`` before anything is sent. Returns the limit when it is above 1, else None (one
    answer per entry: the run, its card and its fingerprint are those of a run without the option).

    Raises: ConfigError (one line, naming the option and the fix) outside 1–5, for an engine without a prompt (its
    output is not a model's answer to re-ask), and together with ``--tools`` (the FST gate re-asks on its own rule).
    """
    if n is None or n == 1:
        return None
    if not 1 <= n <= MAX_FORMAT_ATTEMPTS:
        raise ConfigError(f"--format-attempts {n} is outside 1–{MAX_FORMAT_ATTEMPTS}", field="--format-attempts",
                          fix=f"give a number from 1 to {MAX_FORMAT_ATTEMPTS} (default 1: ask once)")
    if prompt is None or not backend_cls.accepts_tools:
        raise ConfigError(f"backend {backend_cls.name!r} takes no prompt: --format-attempts re-asks a prompted LLM",
                          field="--format-attempts", fix="drop --format-attempts, or use an openai: or gguf: method")
    if tools:
        raise ConfigError("--format-attempts cannot be combined with --tools (the FST gate re-asks already)",
                          field="--format-attempts", fix="drop one of the two options")
    return n


def merge(answers: list[TranslationRecord], failed: list[FailedAttempt]) -> TranslationRecord:
    """The entry's record: the last answer's output, with usage and latencies summed over every answer (spec §10.1),
    ``attempts`` = 1 + the transport retries of every answer, ``format_attempts`` = 1 + the failed answers and the
    failed answers kept."""
    last = answers[-1]
    if len(answers) == 1:
        return last

    return last.model_copy(update={**summed_answers(answers, last), "format_attempts": 1 + len(failed),
                                   "failed_attempts": list(failed)})


def tag_raw_sink(backend: Backend) -> None:
    """Wrap the backend's raw sink so that every raw line carries the format attempt it belongs to
    (``format_attempt``, 0 = the first answer). Does nothing when the backend has no sink."""
    sink = backend.raw_sink
    if sink is None or getattr(sink, "_mtboard_format_tagged", False):
        return

    def tagged(obj: dict[str, Any]) -> None:
        attempt = _ATTEMPT.get()
        sink(obj if attempt is None else {**obj, "format_attempt": attempt})

    tagged._mtboard_format_tagged = True  # type: ignore[attr-defined]
    backend.raw_sink = tagged


class FormatAttempts:
    """Format attempts around one backend (module docstring). Build once per run; :meth:`translate` takes the place
    of the backend's ``translate`` (one merged record per request, same order)."""

    def __init__(self, backend: Backend, limit: int, *, source_language: str, target_language: str,
                 strip_unknown_marks: bool = False,
                 translate: Callable[[list[TranslateRequest]], Awaitable[list[TranslationRecord]]] | None = None):
        if not 1 <= limit <= MAX_FORMAT_ATTEMPTS:
            raise ConfigError(f"format attempts {limit} outside 1–{MAX_FORMAT_ATTEMPTS}", field="--format-attempts")
        self.backend = backend
        self.limit = limit
        self.source_language = source_language
        self.target_language = target_language
        self.strip_unknown_marks = strip_unknown_marks
        self._translate = translate or backend.translate

    async def _ask(self, reqs: list[TranslateRequest], attempt: int) -> list[TranslationRecord]:
        token = _ATTEMPT.set(attempt)
        try:
            recs = await self._translate(reqs)
        finally:
            _ATTEMPT.reset(token)
        return [r if r.run_index == q.run_index else r.model_copy(update={"run_index": q.run_index})
                for q, r in zip(reqs, recs, strict=True)]

    def failure(self, req: TranslateRequest, rec: TranslationRecord) -> str | None:
        """The format rule ``rec`` fails (:func:`mtboard.score.checks.format_failure`), None when it passes."""
        return checks.format_failure(source=req.source, raw_predicted=rec.raw_predicted, error_kind=rec.error_kind,
                                     source_language=self.source_language, target_language=self.target_language,
                                     strip_unknown_marks=self.strip_unknown_marks)

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """Translate a batch: every request once, then rounds for the entries whose answer failed the format rules,
        until each passes or has :attr:`limit` answers. Raises what the backend raises (BackendError)."""
        tag_raw_sink(self.backend)
        n = len(requests)
        answers: list[list[TranslationRecord]] = [[] for _ in range(n)]
        failed: list[list[FailedAttempt]] = [[] for _ in range(n)]
        final: list[TranslationRecord | None] = [None] * n
        pending = list(range(n))
        for attempt in range(self.limit):
            recs = await self._ask([requests[i] for i in pending], attempt)
            nxt = []
            for i, rec in zip(pending, recs, strict=True):
                answers[i].append(rec)
                if rec.error_kind is not None and rec.error_kind in checks.RETRIED_BY_TRANSPORT:
                    final[i] = merge(answers[i], failed[i])  # the run is incomplete: resuming re-runs the entry
                    continue
                rule = self.failure(requests[i], rec)
                if rule is None or attempt == self.limit - 1:
                    final[i] = merge(answers[i], failed[i])
                    continue
                failed[i].append(FailedAttempt(raw_predicted=rec.raw_predicted, error_kind=rec.error_kind, rule=rule))
                nxt.append(i)
            pending = nxt
            if not pending:
                break
        return [r for r in final if r is not None]


__all__ = ["FormatAttempts", "check_format_attempts", "merge", "tag_raw_sink"]
