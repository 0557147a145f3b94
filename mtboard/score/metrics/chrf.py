"""chrF++ (Popović 2017) through sacrebleu's ``CHRF(word_order=2)``: character n-grams 1–6 plus word n-grams 1–2,
β = 2 (docs/SCORING_SPEC.md §2).

Per segment, sacrebleu's sufficient statistics are 24 integers: ``(hyp, ref, match)`` counts for character orders
1–6 then word orders 1–2. A corpus score over any subset of segments is sacrebleu's F-score of their column sums
(equal to ``corpus_score`` on the same texts); :func:`chrf_from_totals` is the one function that turns summed
statistics into chrF++, for the card, its slices, the bootstrap and the site.
"""

from __future__ import annotations

from collections.abc import Sequence

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
