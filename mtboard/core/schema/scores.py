"""The run card's aggregate figures (spec §3.4–3.6): scores with their sacrebleu signatures, breakdowns and replicate
statistics, token and cost totals, and the neural metrics' records."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from mtboard.core.schema.common import (Binding, Count, NonNeg, QualityTier, Rate, Score100, Strict, _lax)
class Signatures(Strict):
    """sacrebleu signature strings of the corpus scores (e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0``)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    chrf: str
    bleu: str
    ter: str
    semantic: str | None = None
    """Signature of the semantic score (``semantic:use-multilingual-v3|package:…|weights:sha256:…``;
    mtboard.score.metrics.semantic); absent when the pair's languages are not covered (no semantic value on the card)."""
    morphology: str | None = None
    """Identity of morphological accuracy (``morph:apertium-eng-spa 0.8.1-2; eng-spa.automorf.bin + eng-spa.prob; …|
    reference:apertium-machine-analysis,not-gold``; mtboard.score.morphology.signature): the analyser and tagger
    that analysed the hypotheses, measured against the corpus's Apertium machine analyses, not gold ones; absent
    when the card has no morphological accuracy."""
    composite: str | None = None
    """Signature of the composite (``composite:A|weights:…|policy:mech-1.2``; mtboard.score.metrics.composite). Every card from
    harness 0.2.0 on has it (the validator requires it to equal the recomputation); the schema keeps it optional so an
    older card still parses and is refused with the reason (its harness version)."""

    @model_serializer(mode="wrap")
    def _omit_absent_composite(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for key in ("semantic", "composite", "morphology"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class Breakdown(Strict):
    """Scores restricted to one slice of entries (by domain, difficulty or provenance)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    n: Count
    chrf_plus_plus: Score100 | None
    bleu: Score100 | None = None
    exact_match_rate: Rate | None = None
    composite: Rate | None = None
    errors: Count = 0


class Replicates(Strict):
    """Mean and spread over ``--runs N`` replicate runs (BookTrans: mean, not median; spread = sample standard
    deviation). Every replicate's outputs are in the card (run 0: ``results``; the others: ``replicate_runs``), so the
    validator recomputes each replicate's scores and these statistics exactly."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    n: int = Field(ge=1)
    chrf_plus_plus: list[Score100]
    """Corpus chrF++ of each replicate, run 0 first."""
    composite: list[Rate]
    """Composite of each replicate, run 0 first."""
    chrf_mean: Score100
    chrf_stdev: NonNeg
    composite_mean: Rate
    composite_stdev: NonNeg


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
    """Share of the reference analyses' units (``lemma<tag>…``) the hypotheses' analyses have, pooled (Σ matched ÷ Σ
    units; docs/SCORING_SPEC.md §2.7), measured against Apertium **machine** analyses of the references, not gold
    ones; null when no entry has an analysis or no analyser + tagger is installed."""
    chrf_plus_plus: Annotated[float, Field(ge=0.0, le=100.0)]
    """Corpus-level chrF++ (sacrebleu CHRF(word_order=2)), 0–100."""
    chrf_ci95: tuple[Score100, Score100] | None = None
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
    cost_adjusted_score: Rate | None = None
    """composite ÷ (1 + log10(1 + cost of 1,000 entries)): 0–1, at most the composite."""
    errors: Count
    """Entries without usable output for any reason."""
    transport_errors: Count = 0
    """Entries that failed because the service failed (run is invalid unless --allow-incomplete)."""
    mechanical: dict[str, Count] = {}
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
