"""chrF++ (Popović 2017) through sacrebleu's ``CHRF(word_order=2)``: character n-grams 1–6 plus word n-grams 1–2,
β = 2 (docs/SCORING_SPEC.md §2).

Per segment, sacrebleu's sufficient statistics are 24 integers: ``(hyp, ref, match)`` counts for character orders
1–6 then word orders 1–2. A corpus score over any subset of segments is sacrebleu's F-score of their column sums
(equal to ``corpus_score`` on the same texts); :func:`chrf_from_totals` is the one function that turns summed
statistics into chrF++, for the card, its slices, the bootstrap and the site.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics import CHRF

from mtboard.score.metrics import _sacrebleu
from mtboard.score.metrics.sums import check_width, clamp100, column_sums
from mtboard.core.text import SIGNATURE_FIELD

CHRF_WORD_ORDER = 2
"""chrF++: word n-grams 1–2 on top of chrF's character n-grams."""
CHRF_STATS_LEN = 3 * (CHRF.CHAR_ORDER + CHRF_WORD_ORDER)
"""24 integers per segment: (hyp, ref, match) for char orders 1–6 then word orders 1–2."""

_CHRF = CHRF(word_order=CHRF_WORD_ORDER)


def make_chrf() -> CHRF:
    """A fresh sacrebleu chrF++ metric (``CHRF(word_order=2)``, every other option sacrebleu's default)."""
    return CHRF(word_order=CHRF_WORD_ORDER)


def chrf_statistics(hypotheses: Sequence[str], references: Sequence[str]) -> list[list[int]]:
    """Per-segment chrF++ statistics (24 ints each) of equal-length streams, already normalised
    (:func:`mtboard.core.text.normalise`)."""
    return [list(map(int, s)) for s in _sacrebleu.extract_statistics(make_chrf(), hypotheses, references)]


def chrf_from_totals(totals: Sequence[int]) -> float:
    """chrF++ (0–100) of one row of summed statistics (24 integers): sacrebleu's F-score, clamped to 0–100.

    Raises: MtboardError for a row that does not have 24 values.
    """
    if len(totals) != CHRF_STATS_LEN:
        check_width([totals], CHRF_STATS_LEN, "chrf")
    return clamp100(_sacrebleu.chrf_f_score(_CHRF, [int(v) for v in totals]))


def chrf_from_totals_array(totals: np.ndarray) -> np.ndarray:
    """chrF++ (0–100) of many rows of summed statistics at once: an ``(m, 24)`` integer-valued array → ``(m,)``
    float64, equal bit for bit to :func:`chrf_from_totals` of each row (tests/test_flip.py checks it on random rows).

    sacrebleu's ``CHRF._compute_f_score`` (β = 2, no eps smoothing: chrF++'s defaults) written with numpy, the same
    operations in the same order (correctly rounded float64 division, product and sum of the same operands), then
    clamped to 0–100. Used where one row's score is needed for many candidate sets of segments
    (:mod:`mtboard.score.flip`). Raises: MtboardError for rows that do not have 24 values.
    """
    t = np.asarray(totals, dtype=np.float64)
    if t.ndim != 2 or t.shape[1] != CHRF_STATS_LEN:
        check_width([[0] * (t.shape[-1] if t.ndim else 0)], CHRF_STATS_LEN, "chrf")
    eps = 1e-16
    factor = float(_CHRF.beta ** 2)
    m = t.shape[0]
    avg_prec, avg_rec, order = np.zeros(m), np.zeros(m), np.zeros(m)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(CHRF_STATS_LEN // 3):
            n_hyp, n_ref, n_match = t[:, 3 * i], t[:, 3 * i + 1], t[:, 3 * i + 2]
            prec = np.where(n_hyp > 0, n_match / np.where(n_hyp > 0, n_hyp, 1.0), eps)
            rec = np.where(n_ref > 0, n_match / np.where(n_ref > 0, n_ref, 1.0), eps)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec = np.where(both, avg_prec + prec, avg_prec)
            avg_rec = np.where(both, avg_rec + rec, avg_rec)
            order = order + both
        some = order > 0
        avg_prec = np.where(some, avg_prec / np.where(some, order, 1.0), 0.0)
        avg_rec = np.where(some, avg_rec / np.where(some, order, 1.0), 0.0)
        total = avg_prec + avg_rec
        score = (1 + factor) * avg_prec * avg_rec
        score = np.where(total != 0, 100 * (score / np.where(total != 0, (factor * avg_prec) + avg_rec, 1.0)), 0.0)
    return np.clip(score, 0.0, 100.0)


def chrf_from_stats(stats, indices: Sequence[int] | None = None) -> float:
    """Corpus chrF++ (0–100) from per-segment statistics (a list of rows or an ``(n, 24)`` integer array), optionally
    over a subset of segment indices; equals ``CHRF(word_order=2).corpus_score`` on the same segments. An empty
    selection scores 0. Raises MtboardError for a row of the wrong width."""
    return chrf_from_totals(column_sums(stats, indices, CHRF_STATS_LEN, "chrf"))


def sentence_chrf_from_stats(stats: Sequence[int]) -> float:
    """Sentence chrF++ of one segment (equals ``sacrebleu.sentence_chrf(h, [r], word_order=2)``)."""
    return chrf_from_totals(stats)


def chrf_signature() -> str:
    """sacrebleu's signature string of corpus chrF++ as computed here, with the text normalisation applied before it
    (:data:`mtboard.core.text.SIGNATURE_FIELD`), e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0|
    textnorm:1``."""
    metric = make_chrf()
    metric.corpus_score(["a"], [["a"]])  # resolves nrefs, which the signature needs
    return f"{metric.get_signature().format()}|{SIGNATURE_FIELD}"
