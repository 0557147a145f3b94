"""Scores-only cards (issue 17 item 2; spec §6.4 "only scores are returned", §8 sovereignty): a method's scores on a
secret segment, with the pattern every string of such a card must match (``mtboard schema scores-card``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from mtboard.core.schema.common import (BleuStats, ChrfStats, Count, DATASET_ID_RE, HEX64_RE, Hex64, NonNeg, Outcome,
                                        Rate, Score100, Segment, Strict, TerStats, _check_iso_datetime, _lax)
from mtboard.core.schema.scores import Signatures


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

    entry_id: Count
    chrf: ChrfStats
    """sacrebleu CHRF(word_order=2) statistics (as :class:`SegmentStats`; their consistency:
    :func:`mtboard.validate.bounds.statistics_problems`)."""
    bleu: BleuStats
    """sacrebleu BLEU statistics (as :class:`SegmentStats`)."""
    ter: TerStats | None = None
    """sacrebleu TER statistics (edits, reference words); None over the TER length cap."""
    outcome: _lax(Outcome)
    """Mechanical outcome (usable, no_usable_output, source_untranslated)."""
    exact_match: bool
    equivalent_match: bool | None = None
    code_switching: bool
    fst_accepted_words: Count | None = None
    fst_checked_words: Count | None = None
    semantic_units: Annotated[int, Field(ge=0, le=10_000)] | None = None
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
    chrf_plus_plus: Score100
    bleu: Score100
    ter: NonNeg | None = None
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
