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
* Entries may carry ``added`` (YYYY-MM-DD, when the entry was added to the dataset; issue 37), an extension of spec
  §2.2: entries added after a model's training cutoff form its clean subset (:mod:`mtboard.ledger.contamination`).
* Method class ``baseline`` exists for the echo/empty reference baselines (spec §9.6 lists none for them).

The models live in one module per document, each importing only :mod:`~mtboard.core.schema.common` and the documents
it embeds (no cycles); this package re-exports every public name, so ``from mtboard.core.schema import RunCard`` is the
way in:

* :mod:`~mtboard.core.schema.common` — the strict base model, field bindings, enums, shared field types and validators,
  :func:`describe_validation_error`;
* :mod:`~mtboard.core.schema.corpus` — the corpus (spec §2);
* :mod:`~mtboard.core.schema.records` — the work directory's records: usage, local-model gate, backend facts,
  translation record;
* :mod:`~mtboard.core.schema.method`, :mod:`~mtboard.core.schema.scores`, :mod:`~mtboard.core.schema.judgements`,
  :mod:`~mtboard.core.schema.results`, :mod:`~mtboard.core.schema.card` — the run card (spec §3) and its parts;
  :func:`binding_paths`;
* :mod:`~mtboard.core.schema.scores_card` — scores-only cards;
* :mod:`~mtboard.core.schema.verification` — verification records (spec §9.4);
* :mod:`~mtboard.core.schema.anchor` — judge reliability records;
* :mod:`~mtboard.core.schema.review` — community review records and the reviewer list (spec §7);
* :mod:`~mtboard.core.schema.sweep` — the sweep file (spec §6.2);
* :mod:`~mtboard.core.schema.model` — model records and contamination claims (issue 37);
* :mod:`~mtboard.core.schema.canary` — drift canaries: the canary sets and a canary run's record (issue 38);
* :mod:`~mtboard.core.schema.ledger` — the board ledger as published (``data/ledger.json``; issue 31);
* here: :data:`SCHEMAS`, the documents with a published JSON Schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mtboard.core.lazy import LazyNames
from mtboard.core.schema.card import Ancestor, DatasetRef, Fingerprint, RunCard, binding_paths
from mtboard.core.schema.common import (BCP47_RE, BINDING_KEY, BLEU_STATS_WIDTH, CHRF_STATS_WIDTH, DATASET_ID_RE,
                                        HEX64_RE, SECRET_SEGMENTS, SEMVER_RE, TER_STATS_WIDTH, Bcp47, Binding,
                                        BleuStats, ChrfStats, Context, Correlation, Count, Domain, ErrorKind, Hex64,
                                        MethodClass, NonNeg, Outcome, Positive, QualityTier, Rate, Register, Score100,
                                        Segment, SemanticVerdict, Strict, Temperature, TerStats, VerificationTier,
                                        describe_validation_error)
from mtboard.core.schema.common import _check_bcp47, _check_iso_datetime, _date_text  # noqa: F401 (imported from here)
from mtboard.core.schema.corpus import Corpus, DatasetInfo, Entry, GlossaryTerm, Origin
from mtboard.core.schema.judgements import JudgeAdmission, JudgeSummary, JudgeVerdict, MqmError
from mtboard.core.schema.method import MethodConfig, MethodRecord, PluginRecord, PromptChoice
from mtboard.core.schema.records import (MAX_FORMAT_ATTEMPTS, BackendFacts, FailedAttempt, LocalModelGate,
                                         TranslationRecord, Usage)
from mtboard.core.schema.results import (CheckFlag, EntryResult, MechanicalDecision, ReplicateResult, ReplicateRun,
                                         SegmentStats)
from mtboard.core.schema.review import (GITHUB_HANDLE_RE, RatedEntry, Rating, Review, ReviewerEntry, ReviewersFile,
                                        ReviewRecord)
from mtboard.core.schema.scores import Breakdown, NeuralMetric, Replicates, Scores, Signatures, Totals
from mtboard.core.schema.scores_card import (SCORES_STRING_PATTERNS, SCORES_TEXT_PATTERN, ScoresCard, ScoresDataset,
                                             ScoresOnly, ScoresSegment)
from mtboard.core.schema.verification import MetricDelta, VerificationRecord

if TYPE_CHECKING:  # imported on first use (__getattr__ below), named here for type checkers
    from mtboard.core.schema.anchor import AnchorCellValue, AnchorFigures, AnchorRecord, AnchorSource
    from mtboard.core.schema.canary import (CANARY_MAX_SETS, CANARY_RULE, CANARY_SET_MAX_ENTRIES, CanaryRun,
                                            CanarySet, CanarySets, ServedIdentity)
    from mtboard.core.schema.ledger import (BOARD_STATES, LEDGER_SCHEMA, SITE_STATES, Ledger, LedgerBoard,
                                            LedgerClaimMark, LedgerCleanSubset, LedgerCoverage, LedgerDrift,
                                            LedgerCanaryRun, LedgerEvidence, LedgerFlip, LedgerFloor,
                                            LedgerMember, LedgerModel, LedgerRank, LedgerReproduction, LedgerRow,
                                            LedgerScorer, LedgerScreenReady, LedgerSentinel, LedgerState,
                                            LedgerTries, LedgerVariants, TierName, ContextLabel,
                                            LedgerContextSlices, LedgerLabelSlice,
                                            LedgerDiagnostic, LedgerDiagnosticGroup, LedgerDiagnosticRow)
    from mtboard.core.schema.sweep import (GGUF_PACKAGES, SWEEP_MAX_CELLS, SWEEP_MAX_JUDGES, SWEEP_MAX_LIMIT,
                                           SWEEP_MAX_OPTION_CHARS, SWEEP_MAX_OPTION_FLOAT, SWEEP_MAX_OPTION_INT,
                                           SWEEP_MAX_PARALLEL, SWEEP_MAX_PRICE_PER_MTOK, SWEEP_MAX_RUNS,
                                           SWEEP_MAX_TEMPERATURE, SWEEP_MAX_TOKENS, SWEEP_NAME_PATTERN, CellMatch,
                                           Scalar, SweepCondition, SweepFile, SweepMethod, SweepOverride,
                                           SWEEP_MAX_HISTORY, Experiment, SweepArm)
    from pydantic import BaseModel

__all__ = [
    # common
    "BCP47_RE", "BINDING_KEY", "DATASET_ID_RE", "HEX64_RE", "SECRET_SEGMENTS", "SEMVER_RE", "Bcp47", "Binding",
    "Context", "Count", "Domain", "ErrorKind", "Hex64", "MethodClass", "NonNeg", "Outcome", "QualityTier", "Rate",
    "Register", "Segment", "SemanticVerdict", "Strict", "VerificationTier", "describe_validation_error",
    "BLEU_STATS_WIDTH", "CHRF_STATS_WIDTH", "TER_STATS_WIDTH", "BleuStats", "ChrfStats", "Correlation", "Positive",
    "Score100", "Temperature", "TerStats",
    # corpus
    "Corpus", "DatasetInfo", "Entry", "GlossaryTerm", "Origin",
    # work-directory records
    "BackendFacts", "FailedAttempt", "LocalModelGate", "MAX_FORMAT_ATTEMPTS", "TranslationRecord", "Usage",
    # run card
    "MethodConfig", "MethodRecord", "PluginRecord", "PromptChoice",
    "Breakdown", "NeuralMetric", "Replicates", "Scores", "Signatures", "Totals",
    "JudgeAdmission", "JudgeSummary", "JudgeVerdict", "MqmError",
    "CheckFlag", "EntryResult", "MechanicalDecision", "ReplicateResult", "ReplicateRun", "SegmentStats",
    "Ancestor", "DatasetRef", "Fingerprint", "RunCard", "binding_paths",
    # other documents
    "SCORES_STRING_PATTERNS", "SCORES_TEXT_PATTERN", "ScoresCard", "ScoresDataset", "ScoresOnly", "ScoresSegment",
    "MetricDelta", "VerificationRecord",
    "AnchorCellValue", "AnchorFigures", "AnchorRecord", "AnchorSource",
    "GITHUB_HANDLE_RE", "RatedEntry", "Rating", "Review", "ReviewerEntry", "ReviewersFile", "ReviewRecord",
    "SWEEP_NAME_PATTERN", "CellMatch", "Scalar", "SweepCondition", "SweepFile", "SweepMethod", "SweepOverride",
    "SWEEP_MAX_CELLS", "SWEEP_MAX_JUDGES", "SWEEP_MAX_LIMIT", "SWEEP_MAX_OPTION_CHARS", "SWEEP_MAX_OPTION_FLOAT",
    "SWEEP_MAX_OPTION_INT", "SWEEP_MAX_PARALLEL", "SWEEP_MAX_PRICE_PER_MTOK", "SWEEP_MAX_RUNS", "SWEEP_MAX_TEMPERATURE",
    "SWEEP_MAX_TOKENS", "GGUF_PACKAGES", "SWEEP_MAX_HISTORY", "Experiment", "SweepArm",
    "LEDGER_SCHEMA", "Ledger", "LedgerBoard", "LedgerCoverage", "LedgerEvidence", "LedgerMember", "LedgerRank",
    "LedgerReproduction", "LedgerRow", "LedgerState", "LedgerTries", "BOARD_STATES", "SITE_STATES", "TierName",
    "LedgerClaimMark", "LedgerCleanSubset", "LedgerModel", "LedgerScorer", "LedgerDrift", "LedgerCanaryRun",
    "LedgerFloor", "LedgerSentinel", "LedgerFlip", "LedgerVariants", "ContextLabel", "LedgerContextSlices",
    "LedgerLabelSlice", "LedgerScreenReady",
    "LedgerDiagnostic", "LedgerDiagnosticGroup", "LedgerDiagnosticRow",
    # canary.py (issue 38)
    "CANARY_MAX_SETS", "CANARY_RULE", "CANARY_SET_MAX_ENTRIES", "CanaryRun", "CanarySet", "CanarySets",
    "ServedIdentity",
    # model.py (issue 37)
    "CLAIM_STATUS", "MODEL_SLUG_RE", "WEIGHTS", "ClaimEvidence", "ContaminationClaim", "EngineInfo", "ModelRecord",
    "WeightsFile",
    # the export table
    "SCHEMAS",
]

_LAZY_MODULES = ("anchor", "canary", "ledger", "model", "sweep")
"""Documents a run never reads (the judge reliability record, the board ledger, the sweep file): imported on first use
of one of their names, so ``mtboard run`` builds none of their pydantic models (issue 35 item 4: ~40 classes, measured
in docs/SCORING_SPEC.md §7). Every other document is imported with the package."""
_LAZY_NAMES = {"anchor": ("AnchorCellValue", "AnchorFigures", "AnchorRecord", "AnchorSource"),
               "canary": ("CANARY_MAX_SETS", "CANARY_RULE", "CANARY_SET_MAX_ENTRIES", "CanaryRun", "CanarySet",
                          "CanarySets", "ServedIdentity"),
               "ledger": ("BOARD_STATES", "LEDGER_SCHEMA", "SITE_STATES", "Ledger", "LedgerBoard", "LedgerClaimMark",
                          "LedgerCanaryRun", "LedgerCleanSubset", "LedgerCoverage", "LedgerDrift",
                          "LedgerEvidence", "LedgerMember", "LedgerRank",
                          "LedgerModel", "LedgerReproduction", "LedgerRow", "LedgerScorer", "LedgerState",
                          "LedgerTries", "TierName", "LedgerFloor", "LedgerSentinel", "LedgerFlip", "LedgerVariants",
                          "ContextLabel", "LedgerContextSlices", "LedgerLabelSlice", "LedgerScreenReady",
                          "LedgerDiagnostic", "LedgerDiagnosticGroup", "LedgerDiagnosticRow"),
               "model": ("CLAIM_STATUS", "MODEL_SLUG_RE", "WEIGHTS", "ClaimEvidence", "ContaminationClaim",
                         "EngineInfo", "ModelRecord", "WeightsFile"),
               "sweep": ("GGUF_PACKAGES", "SWEEP_MAX_CELLS", "SWEEP_MAX_JUDGES", "SWEEP_MAX_LIMIT",
                         "SWEEP_MAX_OPTION_CHARS", "SWEEP_MAX_OPTION_FLOAT", "SWEEP_MAX_OPTION_INT",
                         "SWEEP_MAX_PARALLEL", "SWEEP_MAX_PRICE_PER_MTOK", "SWEEP_MAX_RUNS", "SWEEP_MAX_TEMPERATURE",
                         "SWEEP_MAX_TOKENS", "SWEEP_NAME_PATTERN", "CellMatch", "Scalar", "SweepCondition", "SweepFile",
                         "SweepMethod", "SweepOverride", "SWEEP_MAX_HISTORY", "Experiment", "SweepArm")}
_LAZY = LazyNames(__name__, globals(), _LAZY_NAMES)


def __getattr__(name: str) -> Any:
    """A name of a document in :data:`_LAZY_MODULES` (its module imported now, the name kept here), or
    :data:`SCHEMAS`. Raises AttributeError for any other name, as a module does."""
    if name == "SCHEMAS":
        value: Any = {"corpus": Corpus, "run-card": RunCard, "anchor-record": __getattr__("AnchorRecord"),
                      "scores-card": ScoresCard, "review-record": ReviewRecord, "reviewers": ReviewersFile,
                      "sweep": __getattr__("SweepFile"), "ledger": __getattr__("Ledger"),
                      "model-record": __getattr__("ModelRecord"),
                      "contamination-claim": __getattr__("ContaminationClaim"),
                      "canary-sets": __getattr__("CanarySets"), "canary-run": __getattr__("CanaryRun")}
        globals()[name] = value
        return value
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(__all__)


SCHEMAS: dict[str, type[BaseModel]]
"""Documents with a published JSON Schema (``mtboard schema NAME``; committed under ``schemas/``); built on first
use (:func:`__getattr__`)."""
