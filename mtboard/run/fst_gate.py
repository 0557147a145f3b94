"""Tool pipelines (spec §9.6 class ``pipeline``: "multi-step pipeline (e.g. translate → FST validate → retry)";
§3.2 ``tools_enabled``; §3.5 ``tool_call_count``; issue 18).

One tool today, the **FST gate** (``mtboard run --tools fst-gate [--fst-retries N]``): after the model's hypothesis
for an entry, the target language's lttoolbox analyser (:mod:`mtboard.score.fst`) checks its words; when it rejects some,
the model is asked again — the prompt template renders the verdicts through its ``fst_feedback`` variable
(:data:`mtboard.inputs.prompts.KNOWN_VARIABLES`) — up to N retries (default :data:`DEFAULT_FST_RETRIES`, 0–
:data:`MAX_FST_RETRIES`). The entry keeps the first accepted hypothesis, else the one with the fewest rejected words
(the earliest on ties).

Where it sits in the one-way flow: the runner hands each batch to :meth:`FstGate.translate` instead of the backend's
``translate``; the gate calls the backend (any number of times) and returns one merged
:class:`~mtboard.core.schema.TranslationRecord` per entry, which scoring then treats like any other. It imports the
backend interface, the prompt layer, the mechanical policy and :mod:`mtboard.score.fst` — nothing downstream of the
backend (no scoring, card or validator).

Word policy: exactly FST acceptance's (:func:`usable_text`): the hypothesis as the mechanical policy post-processes it
(:func:`mtboard.score.checks.apply_policy`: EOS tokens and closed reasoning blocks removed, outer whitespace trimmed), the
one text normalisation (:func:`mtboard.core.text.normalise`), then :func:`mtboard.score.fst.checkable_words` (letter words,
capitalised and source-copied words skipped, lower-cased). So a final hypothesis the gate accepted has
``fst_valid`` true in the card whenever scoring finds the output usable. An answer echoing the source is no usable
text for the gate (it would pass with no word checked) and is retried. Nor is a hypothesis accepted when the policy
leaves it **no word to check** while the source has one (``fst_mod.checkable_words(source, "")`` non-empty): a
one-word capitalised answer ("Testa") or a copy of the source's words gives the analyser nothing to reject, so such a
candidate is *unverifiable*: retried like an answer without usable text (the retry prompt says so), and kept only
when no candidate with a checked word exists. A source with no checkable word (names, numbers) accepts any usable
hypothesis.

Tool calls (``tool_call_count``): one per candidate the gate checks. A candidate with usable text is analysed (its
words in one ``lt-proc`` process for the whole batch round, not one per word); a candidate without usable text (a
model error, an empty answer) is checked too — rejected without running the analyser — and retried. A transport or
configuration failure (error kinds that make a run incomplete) ends the entry at once with that failure: the run is
incomplete and resuming re-runs the whole entry (resume granularity: the entry). Hence for a card of this harness
(the validator's rule, :mod:`mtboard.validate.tools`): every entry has 0 … N+1 tool calls; an entry with usable
output at least 1; an entry with usable output whose ``fst_valid`` is false exactly N+1 (the gate kept trying).

Cost (spec §10.1 "FST-gated (3 retries)" costs more than raw): an entry's usage and latency are the sums over all
its model requests (its ``attempts`` stay transport attempts: 1 + every request's transport retries); ``raw.jsonl`` keeps every request and response, each line tagged with
``gate_attempt`` (0 = first), plus one line per analysis (``tool: "fst-gate"``, the words checked and rejected).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import langcodes

from mtboard.score import checks
from mtboard.score import fst as fst_mod
from mtboard.backends.base import Backend, TranslateRequest
from mtboard.core.errors import ConfigError
from mtboard.inputs.prompts import Prompt
from mtboard.core.schema import ErrorKind, Outcome, TranslationRecord, Usage
from mtboard.core.text import normalise
from mtboard.inputs.tools import DEFAULT_FST_RETRIES, FST_GATE, GATED_PROMPTS, MAX_FST_RETRIES

INCOMPLETE = frozenset({ErrorKind.transport, ErrorKind.backend})
"""Failures that end an entry at once (they make the run incomplete; :data:`mtboard.run.workdir.INCOMPLETE_KINDS`)."""

_ATTEMPT: contextvars.ContextVar[int | None] = contextvars.ContextVar("mtboard_gate_attempt", default=None)


def check_pipeline(tools: tuple[str, ...], fst_retries: int | None, *, backend_cls: type[Backend],
                   prompt: Prompt | None, target_language: str) -> tuple[int | None, fst_mod.Analyser | None]:
    """Check a run's ``--tools`` / ``--fst-retries`` before anything is sent. Returns ``(retry limit, analyser)``:
    ``(None, None)`` without tools.

    Raises: ConfigError (one line, naming the option and the fix) when ``--fst-retries`` comes without
    ``--tools fst-gate`` or is outside 0–:data:`MAX_FST_RETRIES`, when the backend cannot run tools (engines,
    baselines), when the prompt does not declare ``fst_feedback``, or when no lttoolbox analyser for the target
    language is installed (naming the Debian package to install).
    """
    if FST_GATE not in tools:
        if fst_retries is not None:
            raise ConfigError("--fst-retries is given without --tools fst-gate", field="--fst-retries",
                              fix="add --tools fst-gate, or drop --fst-retries")
        return None, None
    retries = DEFAULT_FST_RETRIES if fst_retries is None else fst_retries
    if not 0 <= retries <= MAX_FST_RETRIES:
        raise ConfigError(f"--fst-retries {retries} is outside 0–{MAX_FST_RETRIES}", field="--fst-retries",
                          fix=f"give a number from 0 to {MAX_FST_RETRIES} (default {DEFAULT_FST_RETRIES})")
    if not backend_cls.accepts_tools or prompt is None:
        raise ConfigError(f"backend {backend_cls.name!r} cannot run tools: --tools needs a prompted LLM backend "
                          "(openai, gguf)", field="--tools", fix="drop --tools, or use an openai: or gguf: method")
    if not prompt.uses_fst_feedback:
        raise ConfigError(f"prompt {prompt.name!r} does not use the FST gate's feedback (no `fst_feedback` variable)",
                          field="--tools", fix=f"pick a prompt that declares `fst_feedback`: "
                                               f"--prompt {' or --prompt '.join(GATED_PROMPTS)}")
    analyser = fst_mod.find_analyser(target_language)
    if analyser is None:
        raise ConfigError(f"no lttoolbox analyser is installed for target language {target_language!r}: the FST "
                          "gate has nothing to check with", field="--tools", fix=_package_hint(target_language))
    return retries, analyser


DEBIAN_ANALYSER_PACKAGES = {"spa": "apertium-eng-spa", "eng": "apertium-eng-spa", "cat": "apertium-eng-cat",
                            "fra": "apertium-fra-cat", "ita": "apertium-cat-ita", "por": "apertium-por-cat",
                            "glg": "apertium-pt-gl", "ron": "apertium-es-ro", "oci": "apertium-oci-fra"}
"""A Debian (12) package shipping an analyser of the language (ISO 639-3 key), for the error's fix."""


def _package_hint(target_language: str) -> str:
    primary = target_language.split("-")[0].lower()
    try:
        alpha3 = langcodes.Language.get(primary).to_alpha3()
    except (LookupError, ValueError):
        alpha3 = primary
    code = fst_mod.ISO639_3.get(primary, alpha3)
    if code in DEBIAN_ANALYSER_PACKAGES:
        return f"apt-get install lttoolbox {DEBIAN_ANALYSER_PACKAGES[code]}"
    return (f"apt-get install lttoolbox and an Apertium pair shipping {code}-*.automorf.bin "
            f"(apt-cache search --names-only 'apertium-.*{code}' lists candidates), or run without --tools")


def usable_text(record: TranslationRecord, source: str, *, source_language: str, target_language: str,
                strip_unknown_marks: bool = False) -> str | None:
    """A candidate's text as the gate checks it and a retry prompt shows it: the mechanical policy's ``predicted``;
    None when the candidate has no usable text (no output, an error, an empty or unclosed-reasoning answer).

    The mechanical policy runs without the entry's reference (the gate never sees references): an answer that echoes
    the source counts as no usable text (its words are all copied from the source, so the analyser would check
    none of them and accept it). Scoring classes such an answer the same way unless the reference itself equals the
    source."""
    predicted, decision = checks.apply_policy(source=source, raw_predicted=record.raw_predicted, reference="",
                                              error_kind=record.error_kind, source_language=source_language,
                                              target_language=target_language,
                                              strip_unknown_marks=strip_unknown_marks)
    return predicted if decision.outcome == Outcome.usable else None


@dataclass
class Candidate:
    """One model answer for an entry and the gate's verdict."""

    record: TranslationRecord
    text: str | None = None
    """Its :func:`usable_text` (None: no usable text)."""
    rejected: list[str] | None = None
    """Lower-cased words the analyser rejected, in order of appearance (distinct); None: no usable text."""
    checked: int = 0
    """Words checked."""
    needs_words: bool = False
    """The source has a word the policy would check, so a hypothesis with none is unverifiable."""

    @property
    def unverifiable(self) -> bool:
        """Usable text in which the policy left no word to check although the source has one (module docstring)."""
        return self.rejected == [] and self.checked == 0 and self.needs_words

    @property
    def accepted(self) -> bool:
        """The analyser rejected no word and at least one was checked (or the source has none to check)."""
        return self.rejected == [] and not self.unverifiable


def choose(candidates: Sequence[Candidate]) -> int:
    """Index of the candidate an entry keeps: the first accepted (no rejected word), else the usable one with the
    fewest rejected words (the earliest on ties) — a candidate with a checked word before an unverifiable one —
    else the first. ``[3 rejected, 1, 1]`` → 1; ``[2 rejected, unverifiable]`` → 0."""
    usable = [(c.unverifiable, len(c.rejected), i) for i, c in enumerate(candidates) if c.rejected is not None]
    return min(usable)[2] if usable else 0


def merge(candidates: Sequence[Candidate], chosen: int, tool_calls: int) -> TranslationRecord:
    """The entry's record: the chosen candidate's output, with usage and latencies summed over every candidate (an
    entry's cost includes all its attempts, spec §10.1), ``tool_call_count`` set, and ``attempts`` = 1 + the
    transport retries of every candidate (so ``totals.retries`` still counts transport retries only; the gate's
    model requests are ``tool_call_count`` and the ``gate_attempt`` lines of ``raw.jsonl``)."""
    recs = [c.record for c in candidates]
    return recs[chosen].model_copy(update={**summed_answers(recs, recs[chosen]), "tool_call_count": tool_calls})


def summed_answers(recs: Sequence[TranslationRecord], kept: TranslationRecord) -> dict:
    """The fields of an entry's record that sum over every model answer asked for it (the FST gate's candidates,
    :mod:`mtboard.run.format_attempts`'s re-asks; spec §10.1: an entry's cost includes all its attempts): ``usage``
    (``reported`` False if any answer's was, else True if any was), ``attempts`` = 1 + every answer's transport
    retries, ``latency_s`` and ``batch_latency_s`` (seconds, rounded to 6 places; None when ``kept`` has none)."""

    def total(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return round(sum(known), 6) if known else None

    reported = [r.usage.reported for r in recs]
    usage = Usage(prompt_tokens=sum(r.usage.prompt_tokens for r in recs),
                  completion_tokens=sum(r.usage.completion_tokens for r in recs),
                  reasoning_tokens=sum(r.usage.reasoning_tokens for r in recs),
                  cached_tokens=sum(r.usage.cached_tokens for r in recs),
                  reported=False if False in reported else (True if True in reported else None))
    return {"usage": usage, "attempts": 1 + sum(r.attempts - 1 for r in recs),
            "latency_s": total([r.latency_s for r in recs]) if kept.latency_s is not None else None,
            "batch_latency_s": total([r.batch_latency_s for r in recs]) if kept.batch_latency_s is not None else None}


def tag_raw_sink(backend: Backend) -> None:
    """Wrap the backend's raw sink so that every raw line carries the gate attempt it belongs to (``gate_attempt``,
    0 = the first hypothesis). Does nothing when the backend has no sink."""
    sink = backend.raw_sink
    if sink is None or getattr(sink, "_mtboard_gate_tagged", False):
        return

    def tagged(obj: dict[str, Any]) -> None:
        attempt = _ATTEMPT.get()
        sink(obj if attempt is None else {**obj, "gate_attempt": attempt})

    tagged._mtboard_gate_tagged = True  # type: ignore[attr-defined]
    backend.raw_sink = tagged


class FstGate:
    """The FST gate around one backend (module docstring). Build once per run; :meth:`translate` takes the place
    of the backend's ``translate`` (one merged record per request, same order)."""

    def __init__(self, backend: Backend, prompt: Prompt, analyser: fst_mod.Analyser, retries: int, *,
                 source_language: str, target_language: str, strip_unknown_marks: bool = False):
        if not 0 <= retries <= MAX_FST_RETRIES:
            raise ConfigError(f"FST gate retries {retries} outside 0–{MAX_FST_RETRIES}", field="--fst-retries")
        self.backend = backend
        self.prompt = prompt
        self.analyser = analyser
        self.retries = retries
        self.source_language = source_language
        self.target_language = target_language
        self.strip_unknown_marks = strip_unknown_marks

    def _request(self, req: TranslateRequest, feedback: list[dict[str, Any]]) -> TranslateRequest:
        r = self.prompt.render(req.source, self.source_language, self.target_language, history=list(req.history),
                               fst_feedback=feedback)
        return replace(req, prompt=r.prompt, messages=r.messages, stop=list(r.stop))

    async def _ask(self, reqs: list[TranslateRequest], attempt: int) -> list[TranslationRecord]:
        token = _ATTEMPT.set(attempt)
        try:
            recs = await self.backend.translate(reqs)
        finally:
            _ATTEMPT.reset(token)
        return [r if r.run_index == q.run_index else r.model_copy(update={"run_index": q.run_index})
                for q, r in zip(reqs, recs, strict=True)]

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """Translate a batch through the gate: attempt 0 for every request, then rounds of retries for the entries
        whose candidate was rejected, one analyser process per round. Raises what the backend raises
        (BackendError) and BackendError from ``lt-proc``."""
        tag_raw_sink(self.backend)
        n = len(requests)
        cands: list[list[Candidate]] = [[] for _ in range(n)]
        calls = [0] * n
        final: list[TranslationRecord | None] = [None] * n
        pending = list(range(n))
        current = list(requests)
        needs_words = [bool(fst_mod.checkable_words(normalise(r.source), "")) for r in requests]
        for attempt in range(self.retries + 1):
            recs = await self._ask([current[i] for i in pending], attempt)
            words: dict[int, list[str]] = {}
            for i, rec in zip(pending, recs, strict=True):
                if rec.error_kind in INCOMPLETE:  # the run is incomplete: resuming re-runs the whole entry
                    final[i] = merge([*cands[i], Candidate(rec)], len(cands[i]), calls[i])
                    continue
                text = usable_text(rec, requests[i].source, source_language=self.source_language,
                                   target_language=self.target_language, strip_unknown_marks=self.strip_unknown_marks)
                cands[i].append(Candidate(rec, text=text, needs_words=needs_words[i]))
                calls[i] += 1
                if text is not None:
                    words[i] = fst_mod.checkable_words(normalise(text), requests[i].source)
            table = await asyncio.to_thread(fst_mod.lookup, self.analyser, [x for ws in words.values() for x in ws]) \
                if any(words.values()) else {}
            nxt = []
            for i in pending:
                if final[i] is not None:
                    continue
                c = cands[i][-1]
                if i in words:
                    c.checked = len(words[i])
                    c.rejected = list(dict.fromkeys(x for x in words[i] if not table[x]))
                    self._raw_tool_line(requests[i], attempt, words[i], c.rejected)
                else:
                    self._raw_tool_line(requests[i], attempt, None, None)
                if c.accepted:
                    final[i] = merge(cands[i], len(cands[i]) - 1, calls[i])
                elif attempt == self.retries:
                    final[i] = merge(cands[i], choose(cands[i]), calls[i])
                else:
                    feedback = [{"hypothesis": k.text if k.rejected is not None and not k.unverifiable else "",
                                 "rejected": list(k.rejected or [])} for k in cands[i]]
                    current[i] = self._request(requests[i], feedback)
                    nxt.append(i)
            pending = nxt
            if not pending:
                break
        return [r for r in final if r is not None]

    def _raw_tool_line(self, req: TranslateRequest, attempt: int, words: list[str] | None,
                       rejected: list[str] | None) -> None:
        sink = self.backend.raw_sink
        if sink is None:
            return
        now = time.time()
        sink({"entry_id": req.entry_id, "run_index": req.run_index, "t_start": now, "t_end": now,
              "tool": FST_GATE, "gate_attempt": attempt, "fst_version": self.analyser.version,
              "request": {"words": words}, "response": {"rejected": rejected,
                                                        "usable": words is not None}})


__all__ = [
    "Candidate",
    "FstGate",
    "check_pipeline",
    "choose",
    "merge",
    "tag_raw_sink",
    "usable_text",
]
