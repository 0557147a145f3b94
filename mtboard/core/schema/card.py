"""The run card (spec §3): the dataset reference, the fingerprint and the sealed card that holds the method, scores,
totals, results, judges and replicate runs (``mtboard schema run-card``); and :func:`binding_paths`, every card field's
binding read from the card's JSON Schema."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from mtboard.core.schema.common import (BINDING_KEY, DATASET_ID_RE, Bcp47, Binding, Count, Hex64, MethodClass, NonNeg,
                                        Segment, Strict, Temperature, _check_iso_datetime, _lax)
from mtboard.core.schema.judgements import JudgeSummary
from mtboard.core.schema.method import MethodConfig, MethodRecord
from mtboard.core.schema.results import EntryResult, ReplicateRun
from mtboard.core.schema.scores import NeuralMetric, Scores, Totals


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


class Fingerprint(Strict):
    """Fingerprint v3 (spec §3.8 extended; v2 + the text normalisation version): ``hash`` = SHA-256 of canonical
    ``{components, version}``."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    version: Literal[2, 3]
    """3 for cards of harness 0.3.0 on (:data:`mtboard.core.canonical.FINGERPRINT_VERSION`); 2 is still read, so that an
    older card parses, is refused by the validator with the reason and can be re-scored (``mtboard rescore``)."""
    hash: Hex64
    components: dict[str, str | int | float | bool | list[str] | None]


class Ancestor(Strict):
    """A card this card was re-scored from (``mtboard rescore``; issue 31): its seal and its fingerprint, so the
    ledger can carry a verification of that card over to this one — when the method is the same (the fingerprint
    components differ only in the scorer's, ``harness_version`` and ``text_normalisation``) and this card's scores
    still agree with the maintainer's re-run (:func:`mtboard.ledger.load.lineage_problem`). Declared by the card;
    checked by the ledger, which grants nothing it cannot check."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared"}

    run_card_hash: Hex64
    fingerprint_hash: Hex64
    fingerprint_version: Literal[2, 3]
    fingerprint_components: dict[str, str | int | float | bool | list[str] | None]


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
    temperature: Temperature | None
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
    rescored_from: list[Ancestor] = []
    """The cards this one was re-scored from (``mtboard rescore``), oldest first; absent when never re-scored."""
    fingerprint: Fingerprint
    run_card_hash: str = Field(pattern=r"^([0-9a-f]{64})?$")
    """SHA-256 of the canonical card with this field set to '' (spec §3.9)."""

    _v_ts = field_validator("timestamp")(_check_iso_datetime)

    @model_serializer(mode="wrap")
    def _omit_absent_replicates(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for key in ("replicate_runs", "neural_metrics", "rescored_from"):
            if not data.get(key):
                data.pop(key, None)
        return data


# --------------------------------------------------------------------------------------------------------------------
# The binding of every card field


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
