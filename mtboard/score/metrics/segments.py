"""Per-segment sufficient statistics of a run for all three sacrebleu metrics at once (chrF++, BLEU, TER), split
over the process pool for large runs (docs/SCORING_SPEC.md §1–§2).

Hypotheses and references go through :func:`mtboard.core.text.normalise` first; the two streams must have equal length
(sacrebleu truncates silently, we raise). Every corpus, sentence, slice and bootstrap score is derived from these statistics, so a run
card's stored statistics re-derive its scores without the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from mtboard.core.errors import MtboardError
from mtboard.score.metrics.bleu import bleu_statistics, make_bleu
from mtboard.score.metrics.chrf import chrf_statistics
from mtboard.score.metrics.pool import map_chunks, plan_chunks
from mtboard.score.metrics.ter import ter_statistics
from mtboard.core.text import normalise


def check_streams(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    """Raise MtboardError unless both streams are lists of strings of equal length (sacrebleu would truncate)."""
    if len(hypotheses) != len(references):
        raise MtboardError(f"{len(hypotheses)} hypotheses but {len(references)} references",
                           where="metrics", fix="pass exactly one hypothesis per reference")
    for i, (h, r) in enumerate(zip(hypotheses, references)):
        if not isinstance(h, str) or not isinstance(r, str):
            raise MtboardError(f"segment {i} is not a string pair", where="metrics",
                               fix="score an empty string for a missing hypothesis")


def statistics_chunk(hyps: list[str], refs: list[str], target_language: str) -> tuple[list, list, list]:
    """chrF++, BLEU and (length-capped) TER statistics of one slice of normalised segments (runs in a pool
    worker for large runs)."""
    if not hyps:
        return [], [], []
    return (chrf_statistics(hyps, refs), bleu_statistics(hyps, refs, target_language),
            ter_statistics(hyps, refs, target_language))


def segment_statistics(hypotheses: Sequence[str], references: Sequence[str], target_language: str,
                       *, workers: int | None = None) -> tuple[list[list[int]], list[list[int]],
                                                                list[list[float] | None]]:
    """Per-segment sufficient statistics for chrF++, BLEU and TER.

    Args:
        hypotheses, references: equal-length streams, one reference per segment (normalised here with
            :func:`mtboard.core.text.normalise`).
        target_language: BCP 47 tag (chooses the BLEU tokenizer and TER's character-level handling).
        workers: process count (default: :func:`mtboard.score.metrics.pool.worker_count`).

    Returns: ``(chrf, bleu, ter)``: lists of 24 ints, 10 ints, and ``[edits, ref_words]`` or None (over the TER
    length cap), one per segment.

    Raises: MtboardError for unequal streams; ConfigError for a missing tokenizer.
    """
    check_streams(hypotheses, references)
    make_bleu(target_language)  # fail loudly here, not in a worker
    hyps = [normalise(h) for h in hypotheses]
    refs = [normalise(r) for r in references]
    parts = map_chunks(statistics_chunk, [(hyps[a:b], refs[a:b], target_language)
                                          for a, b in plan_chunks(len(hyps), workers)])
    c: list = []
    b_: list = []
    t: list = []
    for pc, pb, pt in parts:
        c += pc
        b_ += pb
        t += pt
    return c, b_, t
