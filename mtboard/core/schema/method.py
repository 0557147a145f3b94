"""The run card's method (spec §3.2): the camelCase ``method_config`` info box and the ``method`` record — everything
needed to re-run the method, with the third-party plugin that provides the backend."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from mtboard.core.schema.common import (Binding, Hex64, NonNeg, Positive, Strict, Temperature, _omit_none)
from mtboard.core.schema.records import LocalModelGate


class MethodConfig(Strict):
    """Spec §3.2 info box: the 8-field camelCase MethodConfig carried by published cards (developer's intent).

    Every field mirrors another card field (``model`` = ``model_slug`` …) or is null: the harness has no register,
    coaching file or coaching prompt option."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    model: str
    temperature: Temperature | None
    batchSize: Positive
    register: str | None = None
    coachingFile: str | None = None
    coachingPrompt: str | None = None
    promptContext: str | None = None
    qualityTier: str | None = None


class PluginRecord(Strict):
    """The installed distribution that provides a third-party backend (spec §9.5–9.6 custom-plugin; issue 18): what
    a maintainer re-runs and what ``plugins/approved.yaml`` pins."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    distribution: str = Field(min_length=1, max_length=200)
    """Distribution (package) name as installed, e.g. ``mtboard-plugin-upper``."""
    version: str = Field(min_length=1, max_length=100)
    """Installed version."""
    files_sha256: Hex64
    """SHA-256 of the canonical JSON list of ``[path, SHA-256 of the file's bytes]`` over every file the
    distribution's ``RECORD`` lists (bytecode and ``RECORD`` itself excluded), sorted by path
    (:func:`mtboard.backends.base.plugin_record`)."""
    entry_point: str = Field(min_length=1, max_length=300)
    """``module:attribute`` the ``mtboard.backends`` entry point names."""


class PromptChoice(Strict):
    """How the prompt template was chosen when ``mtboard run`` got no ``--prompt`` and the backend could ask its
    server what it serves (issue 40 item 4; :mod:`mtboard.inputs.native`): the family recognised, the evidence that
    decided it, and the template used. Absent when ``--prompt`` named the template (it always wins) and for backends
    that cannot say what they serve."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared"}

    family: str | None = Field(default=None, max_length=40)
    """The row of the family → format table (``gemma``, ``llama``, ``qwen``, ``mistral``, ``translategemma``,
    ``hy-mt``, ``cat-translate``); None when no family was recognised (the backend's default template then)."""
    source: str | None = Field(default=None, max_length=80)
    """What the server said that decided it: ``props.model_path``, ``ollama.details.family``, ``vllm.root``,
    ``v1/models.id``, ``gguf.general.architecture`` … (:mod:`mtboard.inputs.native` lists them); None when none did."""
    evidence: str | None = Field(default=None, max_length=300)
    """The value of that source (a file name, an architecture, a model id; never a folder path)."""
    template: str = Field(min_length=1, max_length=100)
    """The prompt template used (``method.prompt_name``)."""
    reason: str = Field(min_length=1, max_length=500)
    """One line: why (e.g. "props.model_path names a Gemma … model", "family not recognised (…)")."""

    def fingerprint_value(self) -> str:
        """The fingerprint's ``prompt_choice`` component: ``family/source/template`` (``-`` for a missing part)."""
        return f"{self.family or '-'}/{self.source or '-'}/{self.template}"


class MethodRecord(Strict):
    """Everything needed to re-run the method (``mtboard verify``), secrets excluded. No URL, no key, no header."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "spec": "consistent", "backend": "consistent", "prompt_name": "consistent",
        "prompt_format": "consistent", "prompt_template_sha256": "consistent", "runs": "consistent",
        "limit": "consistent", "local": "consistent", "arm": "consistent", "history": "consistent"}

    spec: str
    """Method spec as typed, ``backend:model[:effort]`` (e.g. ``apertium:eng-spa``, ``openai:qwen3:8b:medium``)."""
    backend: str
    """Registered backend name (openai, gguf, apertium, echo, empty, …)."""
    model: str
    """Model part of the spec."""
    effort: str | None = None
    """Reasoning effort (none|minimal|low|medium|high|xhigh) when given."""
    prompt_name: str | None = None
    """Prompt file name under prompts/ (None for engines that take raw source)."""
    prompt_format: Literal["chat", "completion", "raw"] = "raw"
    """How the prompt is sent: chat messages, raw completion text, or raw source text (engines)."""
    prompt_template_sha256: Hex64 | None = None
    """SHA-256 of the prompt template file bytes."""
    api_provider: str | None = None
    """Channel serving the model: openai, openrouter, ollama, vllm, llama.cpp, local, apertium-apy, …"""
    endpoint_host_sha256: Hex64 | None = None
    """SHA-256 of the endpoint host name (never the raw URL)."""
    max_tokens: Positive | None = None
    """Explicit generation cap sent with every request."""
    sampling: dict[str, JsonValue] = {}
    """Every sampling parameter sent (temperature, top_p, seed, …)."""
    model_revision: str | None = None
    """Hugging Face revision (40 hex) or provider-reported model version, where known."""
    model_file_sha256: Hex64 | None = None
    """SHA-256 of the GGUF file, where known."""
    engine_version: str | None = None
    """Engine build: Apertium package version, llama.cpp build, llama-cpp-python version."""
    streaming: bool = False
    concurrency: Positive = 1
    runs: Positive = 1
    """Number of replicate runs (--runs)."""
    limit: int | None = None
    """--limit N when the run covered only the first N entries."""
    local: LocalModelGate | None = None
    """Canary/latency gate for locally served models."""
    price_in_per_mtok: NonNeg | None = None
    """Price per 1M prompt tokens (USD) used for cost."""
    price_out_per_mtok: NonNeg | None = None
    """Price per 1M completion tokens (USD) used for cost."""
    price_cached_in_per_mtok: NonNeg | None = None
    """Price per 1M cached prompt tokens (USD); None: cached tokens are priced as prompt tokens (no cached rate)."""
    price_reasoning_per_mtok: NonNeg | None = None
    """Price per 1M reasoning tokens (USD); None: reasoning tokens are priced as completion tokens."""
    price_as_of: str | None = None
    """Date the rates were read (YYYY-MM-DD), from the price table; None for command-line or engine prices."""
    price_table_sha256: Hex64 | None = None
    """SHA-256 of the price table file (``prompts/prices.yaml``) the rates came from; None when they did not come
    from it. The validator checks the rates against the table when it has the same file."""
    plugin: PluginRecord | None = None
    """The third-party distribution providing the backend (absent for mtboard's built-in backends)."""
    fst_retries: int | None = Field(default=None, ge=0, le=5)
    """``--tools fst-gate`` only (absent otherwise): retries the FST gate allows after the first hypothesis when the
    target-language analyser rejects words, 0–5 (:mod:`mtboard.run.fst_gate`). Not the card's top-level
    ``max_retries``, which keeps its meaning (transport retries per request) — a documented deviation from spec §3.2,
    whose ``max_retries`` reads "max retries on FST rejection, if applicable" (docs/SCORING_SPEC.md)."""

    format_attempts: int | None = Field(default=None, ge=2, le=5)
    """``--format-attempts N`` with N ≥ 2 only (absent for 1, the default, so every card made before keeps its bytes):
    the most answers the method may ask for per entry when an answer fails the mechanical format rules (BookTrans
    "no valid output after 5 attempts"; :mod:`mtboard.run.format_attempts`); each extra attempt is penalised
    (docs/SCORING_SPEC.md §3.4)."""

    prompt_choice: PromptChoice | None = None
    """How the prompt template was chosen from the served model's identity (absent when ``--prompt`` named it, so
    every card made before keeps its bytes; :class:`PromptChoice`)."""

    arm: Literal["lines", "scene-bare", "scene-context", "scene-full"] | None = None
    """``--arm ARM`` only (absent otherwise): the corpus view the run translated (issue 40;
    :mod:`mtboard.inputs.corpora.arms`): ``lines`` every line alone, ``scene-bare`` each scene's last line alone,
    ``scene-context`` that line with its scene's earlier lines as history, ``scene-full`` the whole scene as one
    segment. The validator applies the same view to the corpus before it compares and recomputes the results."""
    history: int | None = Field(default=None, ge=0, le=1000)
    """``--history N`` only (absent otherwise): the last N lines of each entry's history were sent (0: none;
    issue 40). Each result's ``history_lines`` is recomputed from the corpus with it."""

    @model_serializer(mode="wrap")
    def _omit_absent_plugin(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # cards without a plugin / without tools / with one format attempt / without a view keep their bytes
        return _omit_none(handler(self), ("plugin", "fst_retries", "format_attempts", "prompt_choice", "arm",
                                             "history"))
