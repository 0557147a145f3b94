"""Every call into sacrebleu's private API, in one place (tests/test_metrics_sacrebleu.py pins what they return).

sacrebleu's public API scores texts (``corpus_score``, ``sentence_score``); mtboard also needs the step in between:
the per-segment sufficient statistics that ``corpus_score`` sums, and the score of an already summed row. Run cards
store those statistics, so slices, bootstrap resamples and the validator's recomputation need no text. sacrebleu
has these steps only as underscore methods of its metric classes; a sacrebleu release that changes them must fail
the pinning test, not silently change scores.

Calls (sacrebleu 2.x, ``sacrebleu.metrics.base.Metric`` and subclasses):

* ``Metric._extract_corpus_statistics(hypotheses, [references])`` — what ``corpus_score`` sums (CHRF, BLEU, TER);
* ``CHRF._compute_f_score(totals)`` — chrF of one summed row (what ``corpus_score`` returns as ``.score``);
* ``TER._preprocess_segment(text)`` — TER's tokenisation, for the TER length cap;
* ``TER._compute_score_from_stats(totals)`` — TER of one summed row.

BLEU from totals uses the public static ``BLEU.compute_bleu`` (:mod:`mtboard.score.metrics.bleu`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import CHRF, TER
from sacrebleu.metrics.base import Metric


def extract_statistics(metric: Metric, hypotheses: Sequence[str], references: Sequence[str]) -> list:
    """Per-segment sufficient statistics of ``metric`` for one reference per segment (``references`` is ONE stream,
    passed to sacrebleu as ``[references]``); sacrebleu's types (ints for chrF and BLEU, floats for TER)."""
    return metric._extract_corpus_statistics(hypotheses, [references])


def chrf_f_score(metric: CHRF, totals: list[int]) -> float:
    """chrF of one row of summed statistics (``3 × (char_order + word_order)`` integers), 0–100, unclamped."""
    return metric._compute_f_score(totals)


def ter_tokens(metric: TER, text: str) -> list[str]:
    """The TER tokens of one segment as ``metric`` sees them (its tokenizer, after its own ``rstrip``)."""
    return metric._preprocess_segment(text).split()


def ter_score(metric: TER, totals: list[float]) -> float:
    """TER (0–∞ on sacrebleu's 100 scale) of one row ``[edits, reference words]``."""
    return float(metric._compute_score_from_stats(totals).score)
