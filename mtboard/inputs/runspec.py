"""The frozen run spec: what a run *is* — method, prompt, settings and dataset identity (HELM's ``RunSpec``).

One :class:`RunSpec` is built by :func:`mtboard.run.runner.prepare` from the command line (or by :func:`RunSpec.from_card`
from a published card, for ``mtboard verify`` and the validator). Everything that identifies a run derives from it,
in this one module:

* the work directory's identity (:meth:`RunSpec.identity`, compared on resume) and default folder name
  (:meth:`RunSpec.work_dir_name`);
* the card's method record (:meth:`RunSpec.method_record`) and the fingerprint v3 components
  (:func:`fingerprint_components`, spec §3.8 extended — see :mod:`mtboard.core.canonical`), together with the
  :class:`~mtboard.core.schema.BackendFacts` a backend learnt while running (provider, engine build, weights hash …);
* what a backend is told about the run (:meth:`RunSpec.backend_context`).

Nothing here imports a backend, the runner or the card module: the data flows corpus → RunSpec → backend → …
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, JsonValue, model_validator

from mtboard.core import canonical
from mtboard.core.schema import (BackendFacts, JudgeSummary, MethodClass, MethodRecord, PluginRecord, PromptChoice,
                                  RunCard, Segment)
from mtboard.core.text import NORMALISATION_VERSION

if TYPE_CHECKING:  # pragma: no cover - typing only (prompts imports jinja2)
    from mtboard.inputs.prompts import Prompt

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""Reasoning efforts a method spec may end with (``openai:qwen3:8b:medium``)."""


@dataclass(frozen=True)
class MethodSpec:
    """A parsed method spec ``backend:model[:effort]``. ``text`` is the spec as written.

    Built by :func:`mtboard.backends.parse_method` (which checks the backend is registered) or
    :meth:`from_parts`.
    """

    text: str
    backend: str
    model: str
    effort: str | None = None

    @classmethod
    def from_parts(cls, backend: str, model: str, effort: str | None = None) -> MethodSpec:
        """The spec whose text is ``backend:model`` plus ``:effort`` when given."""
        return cls(text=f"{backend}:{model}" + (f":{effort}" if effort else ""), backend=backend, model=model,
                   effort=effort)

    def with_model(self, model: str) -> MethodSpec:
        """The same spec with another model part (e.g. a local path replaced by its file name)."""
        return self if model == self.model else MethodSpec.from_parts(self.backend, model, self.effort)


def split_method(text: str) -> tuple[str, str, str | None]:
    """``backend:model[:effort]`` → ``(backend, model, effort)``: the first word is the backend; the last word is a
    reasoning effort only when it is one of :data:`EFFORTS` and a model precedes it; the rest is the model
    (``openai:qwen3:8b:medium`` → ``("openai", "qwen3:8b", "medium")``).

    The one parser of the method syntax: :func:`mtboard.backends.base.parse_method` adds the registry's checks to it
    (a :class:`MethodSpec`), judge specs (:func:`mtboard.judges.base.parse_judge_spec`) and the sweep estimate use it
    as it is. Never raises (an empty model is the caller's to refuse)."""
    parts = text.split(":")
    rest = parts[1:]
    effort = None
    if len(rest) >= 2 and rest[-1] in EFFORTS:
        effort = rest[-1]
        rest = rest[:-1]
    return parts[0].strip(), ":".join(rest), effort


class DatasetIdentity(BaseModel):
    """The corpus slice a run covers: which file (by hash), which segment, how many entries."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    version: str
    sha256: str
    """SHA-256 of the corpus file's bytes."""
    language_pair: str
    source_language: str
    target_language: str
    segment: Segment = Segment.development
    limit: int | None = None
    """``--limit N``: only the first N entries of the segment (the run is then unranked)."""


class RunSpec(BaseModel):
    """Everything that makes two runs the same run (immutable). See the module docstring.

    Fields are the card's own names where the card has them. ``max_tokens`` and ``temperature`` are None for
    engines that take the raw source (no prompt); ``system_prompt`` is then ``""``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    method: MethodSpec
    """The method as typed (a gguf ``PATH`` stays a path here; :attr:`public_method` is what cards show)."""
    public_method: MethodSpec
    """The method as published: the backend's ``public_model`` hook may shorten the model (a local path → its file
    name) so that no local folder names reach a card."""
    method_class: MethodClass
    dataset: DatasetIdentity
    prompt_name: str | None = None
    """Prompt file name under ``prompts/`` (None for engines that take the raw source)."""
    prompt_format: Literal["chat", "completion", "raw"] = "raw"
    """chat messages, raw completion text, or the raw source (engines without a prompt)."""
    prompt_template_sha256: str | None = None
    """SHA-256 of the template file's bytes."""
    system_prompt: str = ""
    """The prompt's rendered system block for this language pair (``system_prompt_used``; ``""`` when none)."""
    system_prompt_sha256: str = ""
    """SHA-256 of :attr:`system_prompt` (filled in when not given; a card's recorded value otherwise)."""
    condition: str
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    runs: int = 1
    """Replicates (``--runs``)."""
    concurrency: int = 1
    """Requests/batches in flight."""
    batch_size: int = 1
    """Entries per backend call (the backend's preferred batch size)."""
    max_retries: int = 5
    timeout_s: float = 120.0
    backend_options: tuple[tuple[str, JsonValue], ...] = ()
    """``--backend-opt`` settings as given, typed by the backend's ``Options`` model, sorted by key."""
    endpoint_host_sha256: str | None = None
    """SHA-256 of the endpoint's host name (never the URL), for backends that talk to an endpoint."""
    coaching_sha256: str | None = None
    """SHA-256 of the ``--coaching`` file's bytes (spec §3.2 ``coaching_data_sha256``); None without coaching."""
    coaching_file: str | None = None
    """The coaching file's name (no folder; ``method_config.coachingFile``)."""
    coaching_text: str | None = None
    """The coaching file's text as the prompt received it (``method_config.coachingPrompt``)."""
    plugin: PluginRecord | None = None
    """The installed third-party distribution providing the backend (``method.plugin``); None for built-ins."""
    tools: tuple[str, ...] = ()
    """Tools the method uses (``--tools``; the card's ``tools_enabled``), sorted: ``()`` or ``("fst-gate",)``."""
    fst_retries: int | None = None
    """The FST gate's retry limit (``--fst-retries``, 0–5; ``method.fst_retries``); None without ``fst-gate``."""
    prompt_choice: PromptChoice | None = None
    """How the prompt template was chosen from the served model's identity (``method.prompt_choice``; None when
    ``--prompt`` named it or the backend cannot say what it serves; :mod:`mtboard.inputs.native`)."""
    format_attempts: int | None = None
    """Answers asked per entry when answers fail the format rules (``--format-attempts``, 2–5;
    ``method.format_attempts``); None for 1, the default (:mod:`mtboard.run.format_attempts`)."""
    arm: str | None = None
    """Corpus view (``--arm``: lines, scene-bare, scene-context, scene-full; :mod:`mtboard.inputs.corpora.arms`;
    ``method.arm``); None: the entries as stored."""
    history: int | None = None
    """History lines kept per entry (``--history N``; ``method.history``); None: as the view gives them."""

    @model_validator(mode="before")
    @classmethod
    def _fill_system_prompt_sha256(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("system_prompt_sha256"):
            data = {**data, "system_prompt_sha256": canonical.sha256_hex(data.get("system_prompt") or "")}
        return data

    # -- derived -----------------------------------------------------------------------------------------------------
    @property
    def uses_prompt(self) -> bool:
        """False for engines that take the raw source text (prompt format ``raw``)."""
        return self.prompt_format != "raw"

    @property
    def options(self) -> dict[str, Any]:
        """:attr:`backend_options` as a dict."""
        return dict(self.backend_options)

    def identity(self) -> dict[str, Any]:
        """The work directory's identity (``run.json``): resuming with a different identity is refused
        (:class:`mtboard.run.workdir.WorkDir`). ``backend_options`` appears only when options were given, so work
        directories of runs without ``--backend-opt`` keep their identity."""
        ident: dict[str, Any] = {
            "method": self.method.text, "dataset_sha256": self.dataset.sha256, "dataset_id": self.dataset.id,
            "segment": self.dataset.segment.value, "prompt": self.prompt_name,
            "prompt_template_sha256": self.prompt_template_sha256,
            "system_prompt_sha256": self.system_prompt_sha256, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "condition": self.condition,
            "endpoint_host_sha256": self.endpoint_host_sha256, "stream": self.stream,
        }
        if self.backend_options:
            ident["backend_options"] = self.options
        if self.coaching_sha256:
            ident["coaching_data_sha256"] = self.coaching_sha256
        if self.tools:  # a work directory of a run without tools keeps its identity
            ident["tools_enabled"] = list(self.tools)
            ident["fst_retries"] = self.fst_retries
        if self.format_attempts is not None:  # work directories of runs asking once keep their identity
            ident["format_attempts"] = self.format_attempts
        if self.prompt_choice is not None:  # runs given --prompt keep their identity
            ident["prompt_choice"] = self.prompt_choice.fingerprint_value()
        if self.arm is not None:  # work directories of runs without a view keep their identity (issue 40)
            ident["arm"] = self.arm
        if self.history is not None:
            ident["history"] = self.history
        return ident

    def work_dir_name(self) -> str:
        """Default work folder under ``runs/DATASET/``: ``METHOD-CONDITION-SEGMENT[-limitN]``, made file-safe."""
        text = f"{self.method.text}-{self.condition}-{self.dataset.segment.value}" + (
            f"-limit{self.dataset.limit}" if self.dataset.limit else "") + (
            f"-{self.arm}" if self.arm else "") + (f"-history{self.history}" if self.history is not None else "")
        return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "run"

    def model_slug(self, facts: BackendFacts) -> str:
        """The card's ``model_slug``: what the backend reports, else ``backend/model`` (or the backend alone)."""
        m = self.public_method
        return facts.model_slug or (f"{m.backend}/{m.model}" if m.model else m.backend)

    def method_record(self, facts: BackendFacts, *, price_in: float | None, price_out: float | None,
                      price_cached_in: float | None = None, price_reasoning: float | None = None,
                      price_as_of: str | None = None, price_table_sha256: str | None = None) -> MethodRecord:
        """The card's ``method`` block: this spec plus the backend's facts (never a URL, key or header) and the
        rates used for cost (USD per 1M tokens; dated, with the price table's hash when they came from it)."""
        m = self.public_method
        return MethodRecord(
            spec=m.text, backend=m.backend, model=m.model, effort=m.effort,
            prompt_name=self.prompt_name, prompt_format=self.prompt_format,
            prompt_template_sha256=self.prompt_template_sha256,
            api_provider=facts.api_provider, endpoint_host_sha256=facts.endpoint_host_sha256,
            max_tokens=self.max_tokens, sampling=dict(facts.sampling), model_revision=facts.model_revision,
            model_file_sha256=facts.model_file_sha256, engine_version=facts.engine_version, streaming=self.stream,
            concurrency=self.concurrency, runs=self.runs, limit=self.dataset.limit, local=facts.local,
            price_in_per_mtok=price_in, price_out_per_mtok=price_out, price_cached_in_per_mtok=price_cached_in,
            price_reasoning_per_mtok=price_reasoning, price_as_of=price_as_of, price_table_sha256=price_table_sha256,
            plugin=self.plugin, fst_retries=self.fst_retries, format_attempts=self.format_attempts,
            prompt_choice=self.prompt_choice, arm=self.arm,
            history=self.history)

    def backend_context(self, *, prompt: Prompt | None = None, base_url: str | None = None,
                        sample_sources: Iterable[str] = ()) -> BackendContext:
        """What a backend is told about this run (:class:`BackendContext`)."""
        return BackendContext(temperature=self.temperature, max_tokens=self.max_tokens or 512,
                              concurrency=self.concurrency, stream=self.stream, timeout_s=self.timeout_s,
                              max_retries=self.max_retries, base_url=base_url, prompt=prompt,
                              source_language=self.dataset.source_language,
                              target_language=self.dataset.target_language, sample_sources=list(sample_sources))

    # -- from a published card ---------------------------------------------------------------------------------------
    @classmethod
    def from_card(cls, card: RunCard) -> RunSpec:
        """The spec a card records (its ``method`` block, settings and dataset reference).

        Lossless for every field the fingerprint uses, also on an inconsistent card (the validator's other checks
        judge consistency). The card holds the published method (a local gguf path is only its file name), so
        ``method`` and ``public_method`` are the same here; ``timeout_s`` is not recorded and gets the default.
        """
        m = card.method
        method = MethodSpec(text=m.spec, backend=m.backend, model=m.model, effort=m.effort)
        d = card.dataset
        return cls(method=method, public_method=method, method_class=card.method_class,
                   dataset=DatasetIdentity(id=d.id, version=d.version, sha256=d.sha256, language_pair=d.language_pair,
                                           source_language=d.source_language, target_language=d.target_language,
                                           segment=d.segment, limit=m.limit),
                   prompt_name=m.prompt_name, prompt_format=m.prompt_format,
                   prompt_template_sha256=m.prompt_template_sha256, system_prompt=card.system_prompt_used,
                   system_prompt_sha256=card.system_prompt_sha256, condition=card.condition,
                   temperature=card.temperature, max_tokens=m.max_tokens, stream=m.streaming, runs=m.runs,
                   concurrency=m.concurrency, batch_size=card.batch_size, max_retries=card.max_retries,
                   endpoint_host_sha256=m.endpoint_host_sha256, coaching_sha256=card.coaching_data_sha256,
                   coaching_file=card.method_config.coachingFile, coaching_text=card.method_config.coachingPrompt,
                   plugin=m.plugin, tools=tuple(sorted(card.tools_enabled)), fst_retries=m.fst_retries,
                   format_attempts=m.format_attempts, prompt_choice=m.prompt_choice, arm=m.arm,
                   history=m.history)


def facts_from_card(card: RunCard) -> BackendFacts:
    """The backend facts a card records (inverse of what :meth:`RunSpec.method_record` and the card assembler
    copy from them)."""
    m = card.method
    return BackendFacts(api_provider=m.api_provider, endpoint_host_sha256=m.endpoint_host_sha256,
                        engine_version=m.engine_version, model_revision=m.model_revision,
                        model_file_sha256=m.model_file_sha256, local=m.local, model_id=card.model_id,
                        model_slug=card.model_slug, sampling=dict(m.sampling))


@dataclass
class BackendContext:
    """What the runner tells a backend about the run (built by :meth:`RunSpec.backend_context`). Backends ignore
    what they do not use. ``base_url`` is runtime only: it is never written to any artifact (only its host's hash)."""

    temperature: float | None = 0.0
    """Sampling temperature sent with every request (LLM backends)."""
    max_tokens: int = 512
    """Explicit generation cap sent with every request (LLM backends), tokens."""
    concurrency: int = 8
    """Requests in flight at once (the runner bounds batches in flight with the same number)."""
    stream: bool = False
    """Use server-sent-event streaming (LLM backends)."""
    timeout_s: float = 120.0
    """Per-request read timeout (seconds)."""
    max_retries: int = 5
    """Transport-failure retries per request beyond the first attempt."""
    base_url: str | None = None
    """Endpoint given with ``--base-url`` (backends fall back to their environment variable)."""
    prompt: Prompt | None = None
    """The loaded prompt template, so a backend can render canary lines itself."""
    sampling: dict[str, Any] = field(default_factory=dict)
    """Further sampling parameters sent verbatim (top_p, seed, …)."""
    source_language: str | None = None
    """Corpus source language (BCP 47)."""
    target_language: str | None = None
    """Corpus target language (BCP 47)."""
    sample_sources: list[str] = field(default_factory=list)
    """A few corpus source lines in order (the first 18); gguf uses them for the canary/latency gate when it has no
    fixed lines for the source language."""


def endpoint_host_sha256(base_url: str | None) -> str | None:
    """SHA-256 of the lower-cased host name of an endpoint URL — never the URL itself, which may hold tokens.
    None when there is no URL or it has no host."""
    if not base_url:
        return None
    host = (urlsplit(base_url).hostname or "").lower()
    return canonical.sha256_hex(host) if host else None


def _judges_component(judges: Mapping[str, JudgeSummary]) -> tuple[str | None, str | None]:
    if not judges:
        return None, None
    kinds = sorted(judges)
    model = ",".join(f"{k}={judges[k].backend}:{judges[k].model}" for k in kinds)
    prompt = canonical.sha256_hex(",".join(f"{k}={judges[k].prompt_sha256}" for k in kinds))
    return model, prompt


def fingerprint_components(spec: RunSpec, facts: BackendFacts, *, entry_ids: Iterable[int],
                           judges: Mapping[str, JudgeSummary], harness_version: str,
                           tools_enabled: Iterable[str] | None = None) -> dict[str, Any]:
    """The 19 fingerprint v3 components of a run (spec §3.8 extended; :data:`mtboard.core.canonical.
    FINGERPRINT_COMPONENTS` lists them), plus ``coaching_data_sha256`` when the run used coaching data and
    ``fst_retries`` when it used the FST gate (:data:`mtboard.core.canonical.OPTIONAL_FINGERPRINT_COMPONENTS`, issue 18): the spec's settings, the backend's facts (provider, weights, engine),
    the entry ids covered, the judges, the harness version and the text normalisation version
    (:data:`mtboard.core.text.NORMALISATION_VERSION`, applied before every metric by this harness).

    ``tools_enabled``: default the spec's :attr:`RunSpec.tools` (a card's own list when given).
    The runner calls it with the live spec; the validator with :meth:`RunSpec.from_card` and
    :func:`facts_from_card` of the card under test — the same function, so the two cannot drift apart.
    """
    judge_model, judge_prompt = _judges_component(judges)
    optional: dict[str, Any] = {"coaching_data_sha256": spec.coaching_sha256} if spec.coaching_sha256 else {}
    if spec.fst_retries is not None:  # only runs with --tools fst-gate (issue 18): other fingerprints stay the same
        optional["fst_retries"] = spec.fst_retries
    if spec.format_attempts is not None:  # only runs asking more than once (issue 39): other fingerprints stay
        optional["format_attempts"] = spec.format_attempts
    if spec.prompt_choice is not None:  # only runs whose prompt was chosen from the served model (issue 40 item 4)
        optional["prompt_choice"] = spec.prompt_choice.fingerprint_value()
    if spec.arm is not None:  # only runs with --arm / --history (issue 40): other fingerprints stay the same
        optional["arm"] = spec.arm
    if spec.history is not None:
        optional["history"] = spec.history
    return optional | {
        "dataset_sha256": spec.dataset.sha256,
        "model_slug": spec.model_slug(facts),
        "condition": spec.condition,
        "system_prompt_sha256": spec.system_prompt_sha256,
        "temperature": spec.temperature,
        "harness_version": harness_version,
        "batch_size": spec.batch_size,
        "tools_enabled": sorted(spec.tools if tools_enabled is None else tools_enabled),
        "api_provider": facts.api_provider,
        "endpoint_host_sha256": facts.endpoint_host_sha256,
        "max_tokens": spec.max_tokens,
        "prompt_template_sha256": spec.prompt_template_sha256,
        "model_revision": facts.model_revision,
        "model_file_sha256": facts.model_file_sha256,
        "engine_version": facts.engine_version,
        "entry_ids_sha256": canonical.entry_ids_sha256(list(entry_ids)),
        "judge_model": judge_model,
        "judge_prompt_sha256": judge_prompt,
        "text_normalisation": NORMALISATION_VERSION,
    }


__all__ = ["EFFORTS", "MethodSpec", "split_method", "DatasetIdentity", "RunSpec", "BackendContext",
           "facts_from_card", "fingerprint_components", "endpoint_host_sha256"]
