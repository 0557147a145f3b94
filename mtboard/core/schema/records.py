"""What the runner records before scoring (the work directory): one entry's token usage, a local model's canary and
latency gate, the facts a backend learnt about itself (``backend.json``) and the translation record
(``translations.jsonl``). The run card embeds the first two (:mod:`mtboard.core.schema.method`,
:mod:`mtboard.core.schema.results`)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from mtboard.core.schema.common import Binding, Count, ErrorKind, Hex64, NonNeg, Strict, _lax
MAX_FORMAT_ATTEMPTS = 5
"""The most answers one entry may be asked for when answers fail the mechanical format rules (BookTrans: "no valid
output after 5 attempts"; ``--format-attempts``, :mod:`mtboard.run.format_attempts`)."""


class FailedAttempt(Strict):
    """One answer the method asked again for because it failed the mechanical format rules
    (:func:`mtboard.score.checks.format_failure`): kept as the server sent it, never scored."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    raw_predicted: str | None
    """The answer exactly as received (None when there was no text)."""
    error_kind: _lax(ErrorKind) | None = None
    """The runner's model-failure kind for the answer (``token_cap``, ``empty`` …); never ``transport`` or
    ``backend`` (those are retried by the client or make the run incomplete, not re-asked)."""
    rule: str
    """The format rule it failed, as :func:`mtboard.score.checks.format_failure` decides it again from
    ``raw_predicted`` (``empty``, ``unclosed_think``, ``error.token_cap``, ``format.markdown`` …)."""


class Usage(Strict):
    """Token usage of one entry (all attempts), as the provider reported it."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared"}

    prompt_tokens: Count = 0
    """Prompt tokens, cached ones included."""
    completion_tokens: Count = 0
    """Completion tokens, reasoning tokens included (as providers bill them)."""
    reasoning_tokens: Count = 0
    """The reasoning part of ``completion_tokens``."""
    cached_tokens: Count = 0
    """The cached part of ``prompt_tokens``."""
    reported: bool | None = None
    """False when the provider sent no usage for the entry (its cost is then unknown at a non-zero price, never
    $0); True when it did; None for engines that have no token counts (local engines, baselines)."""


class LocalModelGate(Strict):
    """Canary and latency gate results for a locally served model (JA→EN write-up)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared", "canary_passed": "consistent",
                                             "latency_passed": "consistent"}

    canary_passed: bool
    """True when each of the 5 fixed canary lines produced a visible translation."""
    canary_outputs: list[str] = []
    """The canary outputs as returned."""
    canary_errors: list[str | None] = []
    """Error kind of each canary line's answer (None when it answered): with the outputs and the fixed lines,
    ``canary_passed`` recomputes (:meth:`mtboard.backends.base.Backend.check_local_gate`). Absent from gates recorded
    before it existed (written without the key, so re-scored cards keep their bytes)."""
    latency_median_s: NonNeg | None = None
    """Median per-line latency with 6 lines of history (seconds)."""
    latency_p90_s: NonNeg | None = None
    """90th-percentile per-line latency (seconds)."""
    latency_threshold_median_s: NonNeg | None = None
    latency_threshold_p90_s: NonNeg | None = None
    latency_passed: bool | None = None
    """Whether the latency gate passed (None when not run)."""
    n_ctx: Annotated[int, Field(ge=0)] | None = None
    """Context size the server was started with (tokens)."""
    n_threads: Annotated[int, Field(ge=-1)] | None = None
    """CPU threads (−1: llama.cpp's default)."""
    n_gpu_layers: Annotated[int, Field(ge=-1)] | None = None
    """Layers offloaded to the GPU (−1: all, llama.cpp's convention)."""
    server: str | None = None
    """'llama-server <build>' or 'llama-cpp-python <version>'."""
    device: str | None = None
    """'cpu' or the GPU name."""
    sandbox: str | None = None
    """How the model server was isolated (issue 21, mtboard.backends.local.sandbox): ``"bubblewrap 0.8.0: no network, empty
    environment, read-only model and runtime"``, or a text starting ``"off:"`` — a visible warning that the server
    ran unsandboxed (development flag ``sandbox=off``). Optional: cards written before it existed lack it, and a
    card without it is written without the key (so such cards keep their bytes and seal)."""

    @model_serializer(mode="wrap")
    def _omit_absent_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Keys added after cards were committed are left out when absent, so re-scored cards keep their bytes:
        ``sandbox`` when None, ``canary_errors`` when empty."""
        data = handler(self)
        if data.get("sandbox") is None:
            data.pop("sandbox", None)
        if not data.get("canary_errors"):
            data.pop("canary_errors", None)
        return data


class BackendFacts(BaseModel):
    """What a backend learnt about itself while running (its ``describe()``), kept in the work directory's
    ``backend.json`` and copied into the card: never a URL, a key or a header.

    Unknown keys are ignored when reading (older work directories stored a few settings here too).
    """

    model_config = ConfigDict(extra="ignore")

    api_provider: str | None = None
    """Channel serving the model (openai, openrouter, ollama, vllm, llama.cpp, llama-cpp-python, apertium, …)."""
    endpoint_host_sha256: Hex64 | None = None
    """SHA-256 of the endpoint host name."""
    engine_version: str | None = None
    model_revision: str | None = None
    model_file_sha256: Hex64 | None = None
    local: LocalModelGate | None = None
    model_id: str | None = None
    """Model name the server reported (goes to the card's top level)."""
    model_slug: str | None = None
    """Short model name for the board (default ``backend/model``)."""
    sampling: dict[str, JsonValue] = {}
    """Every sampling parameter sent besides the cap (temperature, top_p, stop, …)."""
    identity_note: str | None = None
    """Why the served model's identity is missing (its server did not answer when asked), for the run's summary
    and report.md; not copied into the card (whose identity fields then hold the declared name and nulls)."""


# --------------------------------------------------------------------------------------------------------------------
# Translation records (work directory JSONL) — the runner's output before scoring


class TranslationRecord(Strict):
    """One finished entry in ``WORKDIR/translations.jsonl`` (append-only, fsynced; the resume unit)."""

    run_index: Count = 0
    entry_id: Count
    raw_predicted: str | None
    """Raw output (None when no output at all)."""
    error: str | None = None
    error_kind: _lax(ErrorKind) | None = None
    attempts: Count = 1
    latency_s: NonNeg | None = None
    batch_latency_s: NonNeg | None = None
    """Wall-clock seconds of the batch call that produced this record (batch engines; ``latency_s`` is then None)."""
    usage: Usage = Usage()
    model_id: str | None = None
    finish_reason: str | None = None
    stop_cut: str | None = None
    """The prompt's stop sequence at which the client cut the answer because the server ran past it (issue 24);
    ``raw_predicted`` is the text before it, the server's whole text is in ``raw.jsonl`` (``uncut_text``)."""
    tool_call_count: Count = 0
    """Tool calls made for this entry (``--tools``; :mod:`mtboard.run.fst_gate`); omitted from the line when 0."""
    text_repairs: Count = 0
    """Characters of the answer (content, reasoning and refusal) that the one text boundary replaced by U+FFFD: lone
    UTF-16 surrogates and bytes that are not UTF-8 even after the stream's fragments were joined
    (:func:`mtboard.core.decoding.answer_text`; issue 33). ``raw.jsonl`` keeps the answer as received. Omitted from
    the line when 0."""

    format_attempts: Annotated[int, Field(ge=1, le=MAX_FORMAT_ATTEMPTS)] = 1
    """Answers asked for this entry (``--format-attempts``; :mod:`mtboard.run.format_attempts`): 1 + the answers
    in ``failed_attempts``. Omitted from the line when 1."""
    failed_attempts: list[FailedAttempt] = []
    """The answers asked again for, in order (the kept answer is ``raw_predicted``). Omitted when empty."""

    @model_serializer(mode="wrap")
    def _omit_no_tools(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for key in ("tool_call_count", "text_repairs"):
            if data.get(key) == 0:
                data.pop(key, None)  # work directories of runs without tools or repairs keep their lines
        if data.get("format_attempts") == 1:
            data.pop("format_attempts", None)
        if not data.get("failed_attempts"):
            data.pop("failed_attempts", None)
        return data
