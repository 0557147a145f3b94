"""The run card's per-entry results (spec §3.7): the mechanical decision, the sufficient statistics, one translated
entry with its scores and judgements, and the replicate runs of ``--runs N``."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from mtboard.core.schema.common import (BleuStats, Binding, ChrfStats, Count, Domain, ErrorKind, NonNeg, Outcome, Rate,
                                        Score100, Segment, SemanticVerdict, Strict, TerStats, _lax, _omit_none)
from mtboard.core.schema.judgements import JudgeVerdict
from mtboard.core.schema.records import MAX_FORMAT_ATTEMPTS, FailedAttempt, Usage


def _omit_one_attempt(data: dict[str, Any]) -> dict[str, Any]:
    """Leave out ``format_attempts`` when 1 and ``failed_attempts`` when empty, so cards made before format attempts
    existed keep their bytes and seals."""
    if data.get("format_attempts") == 1:
        data.pop("format_attempts", None)
    if not data.get("failed_attempts"):
        data.pop("failed_attempts", None)
    return data


class CheckFlag(Strict):
    """One mechanical flag that fired on an entry."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "recomputed"}

    rule: str
    """Rule id, e.g. 'commentary', 'format.speaker_label', 'placeholder', 'foreign_script', 'eos', 'length'."""
    detail: str | None = None
    count: Count | None = None


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

    chrf: ChrfStats
    """sacrebleu CHRF(word_order=2) statistics: for each char order 1–6 then word order 1–2, (hyp, ref, match);
    24 counts ≥ 0 (their consistency: :mod:`mtboard.validate.bounds`; a run card's are recomputed from its text)."""
    bleu: BleuStats
    """sacrebleu BLEU statistics: hyp_len, ref_len, 4 match counts, 4 total counts (10 counts ≥ 0)."""
    ter: TerStats | None = None
    """sacrebleu TER statistics: (edits, ref_words); None when over the TER length cap."""


_OPTIONAL_COUNTS = ("glossary_terms", "glossary_hits", "morph_units", "morph_matched", "history_lines")
"""Per-entry counts omitted when None (fields added later; cards made before them keep their bytes)."""


class EntryResult(Strict):
    """One translated entry (spec §3.7)."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "recomputed", "entry_id": "consistent", "source": "consistent", "expected": "consistent",
        "segment": "consistent", "difficulty": "consistent", "domain": "consistent", "provenance": "consistent",
        "raw_predicted": "declared", "latency_s": "declared", "batch_latency_s": "declared", "error": "declared",
        "error_kind": "declared", "attempts": "declared", "usage": "declared", "judgements": "consistent",
        "plugin_metrics": "consistent", "tool_call_count": "consistent",
        "format_attempts": "consistent"}

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
    difficulty: Annotated[int, Field(ge=1, le=5)] | None = None
    domain: _lax(Domain) | None = None
    provenance: str | None = None
    exact_match: bool
    chrf_score: Score100 | None
    """Sentence chrF++ 0–100."""
    bleu_score: Score100 | None
    """Sentence BLEU 0–100 (effective order)."""
    ter_score: NonNeg | None = None
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
    format_attempts: Annotated[int, Field(ge=1, le=MAX_FORMAT_ATTEMPTS)] = 1
    """Answers asked for this entry when answers failed the mechanical format rules (``--format-attempts``;
    :mod:`mtboard.run.format_attempts`): 1 + ``len(failed_attempts)``; each one past the first is penalised in the
    composite (docs/SCORING_SPEC.md §3.4). Omitted when 1 (every card made before has 1)."""
    failed_attempts: list[FailedAttempt] = []
    """The answers asked again for, as received, with the format rule each failed (omitted when empty)."""
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
    morph_units: Count | None = None
    """Counted units (``lemma<tag>…``) of the entry's reference analysis — Apertium's machine analysis in the corpus,
    not gold (docs/SCORING_SPEC.md §2.7); absent when the entry has no analysis with a unit or no analyser ran."""
    morph_matched: Count | None = None
    """Of those, units the hypothesis's analysis has (clipped multiset recall; 0 without usable output); absent
    likewise."""
    history_lines: Count | None = None
    """History lines the entry was sent with (its corpus ``history`` after the run's ``--arm``/``--history`` view,
    :mod:`mtboard.inputs.corpora.arms`; issue 40); absent when it had none. Recomputed from the corpus: a card whose
    results do not match its declared view is refused."""
    checks: MechanicalDecision
    stats: SegmentStats
    usage: Usage = Usage()
    judgements: dict[str, JudgeVerdict] = {}

    @model_serializer(mode="wrap")
    def _omit_absent_glossary(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_one_attempt(_omit_none(handler(self), _OPTIONAL_COUNTS))


class ReplicateResult(Strict):
    """One entry of a replicate run (``--runs N``, runs 1 … N−1): the outputs and their recomputable scores. The
    corpus texts are those of the same entry in ``results``."""

    BINDING: ClassVar[dict[str, Binding]] = EntryResult.BINDING

    entry_id: Count
    raw_predicted: str | None
    predicted: str
    exact_match: bool
    chrf_score: Score100 | None
    bleu_score: Score100 | None
    ter_score: NonNeg | None = None
    latency_s: NonNeg | None = None
    batch_latency_s: NonNeg | None = None
    cost_usd: NonNeg | None = None
    tool_call_count: Count = 0
    """As :attr:`EntryResult.tool_call_count` (omitted when 0, so replicate runs without tools keep their bytes)."""
    error: str | None = None
    error_kind: _lax(ErrorKind) | None = None
    attempts: Count = 1
    format_attempts: Annotated[int, Field(ge=1, le=MAX_FORMAT_ATTEMPTS)] = 1
    """Answers asked for this entry when answers failed the mechanical format rules (``--format-attempts``;
    :mod:`mtboard.run.format_attempts`): 1 + ``len(failed_attempts)``; each one past the first is penalised in the
    composite (docs/SCORING_SPEC.md §3.4). Omitted when 1 (every card made before has 1)."""
    failed_attempts: list[FailedAttempt] = []
    """The answers asked again for, as received, with the format rule each failed (omitted when empty)."""
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
    morph_units: Count | None = None
    morph_matched: Count | None = None
    checks: MechanicalDecision
    stats: SegmentStats
    usage: Usage = Usage()

    @model_serializer(mode="wrap")
    def _omit_absent_glossary(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = _omit_one_attempt(_omit_none(handler(self), _OPTIONAL_COUNTS))
        if data.get("tool_call_count") == 0:
            data.pop("tool_call_count", None)
        return data


class ReplicateRun(Strict):
    """A replicate run's per-entry results (same entries, same order as the card's ``results``)."""

    BINDING: ClassVar[dict[str, Binding]] = {"run_index": "consistent"}

    run_index: int = Field(ge=1)
    """1 … runs − 1 (run 0 is the card's ``results``)."""
    results: list[ReplicateResult]
