"""What every document model shares: the strict base model, the run-card field bindings, the enums, the field types
and validators several documents use, and the one-line description of a validation error.

The document models stand above this module (:mod:`mtboard.core.schema`, one module per document); it imports none of
them.
"""

from __future__ import annotations

import re
import warnings
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
Score100 = Annotated[float, Field(ge=0.0, le=100.0)]
"""A sacrebleu score on its 0–100 scale (chrF++, BLEU; sacrebleu clamps nothing above, the harness clamps to 100)."""
Correlation = Annotated[float, Field(ge=-1.0, le=1.0)]
"""A correlation or agreement coefficient (Kendall τ, Cohen κ): −1 … 1 by definition."""
Temperature = Annotated[float, Field(ge=0.0)]
"""A sampling temperature: ≥ 0 (0 = greedy; every OpenAI-compatible server and llama.cpp refuse negatives)."""
Positive = Annotated[int, Field(ge=1)]
CHRF_STATS_WIDTH = 24
"""sacrebleu ``CHRF(word_order=2)`` statistics per segment: (hyp, ref, match) for 6 char + 2 word orders."""
BLEU_STATS_WIDTH = 10
"""sacrebleu BLEU statistics per segment: hyp_len, ref_len, 4 match counts, 4 totals."""
TER_STATS_WIDTH = 2
"""sacrebleu TER statistics per segment: edits, reference words."""
ChrfStats = Annotated[list[Count], Field(min_length=CHRF_STATS_WIDTH, max_length=CHRF_STATS_WIDTH)]
BleuStats = Annotated[list[Count], Field(min_length=BLEU_STATS_WIDTH, max_length=BLEU_STATS_WIDTH)]
TerStats = Annotated[list[NonNeg], Field(min_length=TER_STATS_WIDTH, max_length=TER_STATS_WIDTH)]
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


def _date_text(value: Any) -> Any:
    """YAML reads an unquoted ``2026-12-01`` as a date: take it as its ISO text (the schema stores text)."""
    return value.isoformat() if isinstance(value, (date, datetime)) else value


# --------------------------------------------------------------------------------------------------------------------
# Error messages


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
