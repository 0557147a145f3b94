"""Scores-only cards: a run on a secret segment reduced to numbers (issue 17 item 2; spec §6.4 "only scores are
returned", §8 sovereignty, §2.3 secret segments).

:func:`from_run_card` turns the full run card of a secret-segment re-run (which holds secret text and never leaves
the verifier) into a :class:`mtboard.core.schema.ScoresCard`: per entry the sacrebleu sufficient statistics (chrF++,
BLEU, TER — the same lists the run card's ``results[].stats`` hold), the mechanical outcome and the facts the
composite's rates are means of (exact/equivalent match, code-switching, FST words, semantic similarity in integer
units, hallucination, glossary counts), and an HMAC-SHA256 of the hypothesis keyed with a secret salt; then the
aggregates, and a seal (``scores_card_hash``). :func:`recompute` derives every aggregate from the segments with the
harness's own metric functions (:mod:`mtboard.score.metrics`), in the order the scorer (:mod:`mtboard.score.scoring`) uses, so a
card's values equal the recomputation bit for bit.

The salt: ≥ 32 random bytes as hex, held by the verification environment only (``MTBOARD_HYPOTHESIS_SALT``,
docs/maintainers.md); ``salt_id`` (16 hex of its SHA-256) names it on the card.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from typing import Any

from mtboard.core import canonical
from mtboard.core.errors import ConfigError, InputError
from mtboard.score.metrics.bleu import bleu_from_totals
from mtboard.score.metrics.chrf import chrf_from_totals
from mtboard.score.metrics.composite import composite
from mtboard.score.metrics.semantic import UNITS, units
from mtboard.score.metrics.terminology import adherence
from mtboard.score.metrics.ter import ter_from_stats
from mtboard.core.schema import (SCORES_STRING_PATTERNS, SECRET_SEGMENTS, Outcome, RunCard, ScoresCard, ScoresDataset,
                            ScoresOnly, ScoresSegment, Segment)

MIN_SALT_BYTES = 32
SCORES_SUFFIX = ".scores.json"
"""File-name ending of scores-only cards (``official/<dataset id>/<dev card stem>.<segment>.scores.json``)."""


def parse_salt(value: str, where: str = "salt") -> bytes:
    """The salt from its hex text (``mtboard verify`` reads it from ``MTBOARD_HYPOTHESIS_SALT``; ``where`` names that
    source in the error). Raises ConfigError unless it is hex of at least :data:`MIN_SALT_BYTES` bytes."""
    try:
        salt = bytes.fromhex(value.strip())
    except ValueError:
        salt = b""
    if len(salt) < MIN_SALT_BYTES:
        raise ConfigError(f"the hypothesis salt must be at least {MIN_SALT_BYTES} random bytes as hex", field=where,
                          fix="generate one with `python3 -c 'import secrets; print(secrets.token_hex(32))'`")
    return salt


def salt_id(salt: bytes) -> str:
    return hashlib.sha256(salt).hexdigest()[:16]


def hypothesis_hmac(salt: bytes, text: str) -> str:
    """HMAC-SHA256(key = salt, message = text as UTF-8), hex."""
    return hmac.new(salt, text.encode("utf-8"), hashlib.sha256).hexdigest()


def recompute(segments: list[ScoresSegment]) -> dict[str, Any]:
    """Every aggregate of :class:`mtboard.core.schema.ScoresOnly` from the segments (module docstring).

    Rates are present (not None) when every segment carries their fact (equivalent match, FST words, semantic units,
    hallucination) — as on the run card, where they are all-or-none; terminology adherence when any segment has a
    glossary term. Raises MtboardError from :func:`mtboard.score.metrics.composite.composite` for impossible values, and
    InputError for an empty card or statistics of the wrong width."""
    n = len(segments)
    if n == 0:
        raise InputError("a scores-only card needs at least one segment", field="$.segments")
    chrf_tot = [sum(col) for col in zip(*(s.chrf for s in segments))]
    bleu_tot = [sum(col) for col in zip(*(s.bleu for s in segments))]
    if any(len(s.chrf) != len(chrf_tot) for s in segments) or any(len(s.bleu) != len(bleu_tot) for s in segments):
        raise InputError("segments' statistics differ in length", field="$.segments")
    usable = [s.outcome == Outcome.usable for s in segments]
    values: dict[str, Any] = {
        "chrf_plus_plus": chrf_from_totals(chrf_tot),
        "bleu": bleu_from_totals(bleu_tot),
        "exact_match_rate": sum(s.exact_match for s in segments) / n,
        "equivalent_match_rate": (sum(bool(s.equivalent_match) for s in segments) / n)
        if all(s.equivalent_match is not None for s in segments) else None,
        "code_switching_rate": sum(s.code_switching for s in segments) / n,
        "fst_acceptance_rate": None,
        "semantic_score": (sum(int(s.semantic_units) for s in segments) / n / UNITS)  # type: ignore[arg-type]
        if all(s.semantic_units is not None for s in segments) else None,
        "hallucination_rate": (sum(bool(s.hallucination) for s in segments) / n)
        if all(s.hallucination is not None for s in segments) else None,
        "terminology_adherence": adherence([s.glossary_hits or 0 for s in segments],
                                           [s.glossary_terms or 0 for s in segments]),
    }
    if all(s.fst_checked_words is not None for s in segments):
        shares = [((s.fst_accepted_words or 0) / s.fst_checked_words if s.fst_checked_words else 1.0) if ok else 0.0
                  for s, ok in zip(segments, usable)]
        values["fst_acceptance_rate"] = sum(shares) / n
    comp, profile = composite(values)
    mech = Counter({o.value: 0 for o in Outcome})
    for s in segments:
        mech[s.outcome.value] += 1
    return {"total": n, **values, "ter": ter_from_stats([s.ter for s in segments]), "composite": comp,
            "composite_profile": profile, "errors": sum(s.outcome == Outcome.no_usable_output for s in segments),
            "mechanical": dict(sorted(mech.items()))}


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """The card's JSON with ``scores_card_hash`` = SHA-256 of its canonical JSON with that field "" (the rule of
    spec §3.9)."""
    out = dict(data)
    out["scores_card_hash"] = ""
    out["scores_card_hash"] = canonical.sha256_hex(canonical.canonical_bytes(out))
    return out


def scores_card_hash(data: dict[str, Any]) -> str:
    return seal(data)["scores_card_hash"]


def from_run_card(run: RunCard, dev_card: RunCard, *, salt: bytes, segment: Segment, corpus_sha256: str,
                  corpus_version: str) -> ScoresCard:
    """Reduce a secret-segment re-run's card to a sealed scores-only card.

    Args:
        run: the full card of the re-run on the secret segment (``run.results[].predicted`` is hashed, not kept).
        dev_card: the development card whose method was re-run (its hash and fingerprint are recorded).
        salt: the secret salt (:func:`parse_salt`).
        segment: gold_standard or held_out.
        corpus_sha256, corpus_version: identity of the secret corpus file.

    Raises: InputError when ``segment`` is not secret, a result lacks its statistics, or an identifier of the
        development card does not fit its scores-only pattern (:data:`mtboard.core.schema.SCORES_STRING_PATTERNS`: e.g. a
        ``--condition`` label with spaces); MtboardError when the
        recomputed aggregates differ from the run card's own scores (they are the same computation: a difference is
        a bug, never published).
    """
    if segment not in SECRET_SEGMENTS:
        raise InputError(f"segment {segment.value} is public: scores-only cards are for gold_standard/held_out",
                         field="--segment")
    if any(r.format_attempts > 1 for r in run.results):  # issue 39: segments carry no attempt counts (yet)
        raise InputError("the run asked some entry more than once (--format-attempts): a scores-only card cannot "
                         "carry the format-attempt penalty", field="results[].format_attempts",
                         fix="re-run the secret segment without --format-attempts")
    if run.scores.morphological_accuracy is not None:  # issue 39 item 6: segments carry no morph counts (yet)
        raise InputError("the run's corpus carries morphological analyses and the run has a morphological accuracy: "
                         "a scores-only card cannot carry it, so its composite would differ",
                         field="scores.morphological_accuracy",
                         fix="score the secret segment from a corpus file without morphological_analysis fields")
    segs: list[ScoresSegment] = []
    for r in run.results:
        if r.stats is None:
            raise InputError(f"result {r.entry_id} has no sufficient statistics", field="results[].stats")
        segs.append(ScoresSegment(
            entry_id=r.entry_id, chrf=list(r.stats.chrf), bleu=list(r.stats.bleu),
            ter=None if r.stats.ter is None else list(r.stats.ter), outcome=r.checks.outcome,
            exact_match=bool(r.exact_match), equivalent_match=r.equivalent_match,
            code_switching=bool(r.code_switching_detected), fst_accepted_words=r.fst_accepted_words,
            fst_checked_words=r.fst_checked_words,
            semantic_units=None if r.semantic_score is None else units(r.semantic_score),
            hallucination=r.hallucination_detected, glossary_hits=r.glossary_hits, glossary_terms=r.glossary_terms,
            hypothesis_hmac=hypothesis_hmac(salt, r.predicted or "")))
    agg = recompute(segs)
    sc = run.scores
    for name in ("chrf_plus_plus", "bleu", "ter", "exact_match_rate", "code_switching_rate", "fst_acceptance_rate",
                 "semantic_score", "hallucination_rate", "composite", "errors"):
        if agg[name] != getattr(sc, name):
            raise InputError(f"recomputed {name} {agg[name]!r} differs from the run's {getattr(sc, name)!r}",
                             where="scores-only card", fix="report this as a bug; nothing was published")
    for name, value in (("method_spec", dev_card.method.spec), ("model_slug", dev_card.model_slug),
                        ("condition", dev_card.condition), ("card_dataset_id", dev_card.dataset.id)):
        if not re.fullmatch(SCORES_STRING_PATTERNS[name], value):  # e.g. a free-form --condition label with spaces
            raise InputError(f"the development card's {name} does not fit a scores-only card (pattern "
                             f"{SCORES_STRING_PATTERNS[name]})", where="scores-only card",
                             fix="re-run the method with identifiers of that shape (a --condition label of letters, "
                                 "digits, '.', '_' and '-', at most 64) and submit that card")
    ds = run.dataset
    card = ScoresCard(
        harness_version=run.harness_version, timestamp=run.timestamp,
        dataset=ScoresDataset(id=ds.id, version=corpus_version, language_pair=ds.language_pair,
                              source_language=ds.source_language, target_language=ds.target_language,
                              segment=segment, sha256=corpus_sha256, entry_count=len(segs)),
        method_spec=dev_card.method.spec, model_slug=dev_card.model_slug, condition=dev_card.condition,
        card_run_card_hash=dev_card.run_card_hash, card_fingerprint=dev_card.fingerprint.hash,
        card_dataset_id=dev_card.dataset.id, rerun_fingerprint=run.fingerprint.hash, salt_id=salt_id(salt),
        # no morphology signature: a scores-only card carries no per-entry morph counts, so morphological accuracy
        # is null there (issue 39 item 6) and so is the identity of its analyser
        signatures=run.scores.signatures.model_copy(update={"morphology": None}), scores=ScoresOnly(**agg),
        segments=segs)
    return ScoresCard.model_validate(seal(card.model_dump(mode="json")))


__all__ = ["MIN_SALT_BYTES", "SCORES_SUFFIX", "from_run_card", "hypothesis_hmac", "parse_salt",
           "recompute", "salt_id", "scores_card_hash", "seal"]
