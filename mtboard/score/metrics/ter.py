"""TER (Snover et al. 2006) through sacrebleu's ``TER``, length-capped (docs/SCORING_SPEC.md §2).

Character-level for Chinese and Japanese targets (``normalized=True, asian_support=True``; see
:func:`mtboard.core.languages.character_level_ter`), where whitespace words do not exist. TER's shift search is
super-linear in length, so a segment is TER-scored only when its hypothesis and reference both have at most
:func:`ter_token_cap` TER tokens; the others have no statistics (None) and the covered share is the card's
``ter_coverage``. Per segment the statistics are ``[edits, reference words]`` (floats, summed in order as sacrebleu
does).
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import TER

from mtboard.core.languages import character_level_ter
from mtboard.score.metrics import _sacrebleu
from mtboard.core.text import SIGNATURE_FIELD

TER_MAX_WORDS = 20
"""TER is computed only for segments whose hypothesis and reference have at most this many TER tokens."""
TER_MAX_CJK_TOKENS = 60
"""The TER cap for character-level targets (Chinese, Japanese): sacrebleu's ``asian_support`` makes every Han
character (and each run of hiragana or of katakana, and each CJK punctuation mark) one TER token, so a 20-token cap
kept only 0.61 of the en→ja references; 60 keeps 0.95 of them."""

_TER = TER()  # only its score-from-statistics formula is used, which no TER option changes


def make_ter(target_language: str) -> TER:
    """A sacrebleu TER metric for the target language (character-level for Chinese/Japanese)."""
    cjk = character_level_ter(target_language)
    return TER(normalized=cjk, asian_support=cjk)


def ter_token_cap(target_language: str) -> int:
    """Most TER tokens a hypothesis or reference may have for the segment to be TER-scored: :data:`TER_MAX_CJK_TOKENS`
    for Chinese/Japanese targets (character-level TER), :data:`TER_MAX_WORDS` otherwise."""
    return TER_MAX_CJK_TOKENS if character_level_ter(target_language) else TER_MAX_WORDS


def ter_statistics(hypotheses: Sequence[str], references: Sequence[str],
                   target_language: str) -> list[list[float] | None]:
    """Per-segment ``[edits, reference words]`` of equal-length, normalised streams (:func:`mtboard.core.text.normalise`);
    None for a segment whose hypothesis or reference is over :func:`ter_token_cap`."""
    metric = make_ter(target_language)
    cap = ter_token_cap(target_language)
    sel = [i for i, (h, r) in enumerate(zip(hypotheses, references))
           if len(_sacrebleu.ter_tokens(metric, h)) <= cap and len(_sacrebleu.ter_tokens(metric, r)) <= cap]
    out: list[list[float] | None] = [None] * len(hypotheses)
    if sel:
        rows = _sacrebleu.extract_statistics(metric, [hypotheses[i] for i in sel], [references[i] for i in sel])
        for i, s in zip(sel, rows):
            out[i] = [float(s[0]), float(s[1])]
    return out


def ter_from_stats(stats: Sequence[Sequence[float] | None], indices: Sequence[int] | None = None) -> float | None:
    """Corpus TER (0–∞ on sacrebleu's 0–100 scale, lower is better) over the segments that have TER statistics
    (None entries are over the length cap and skipped). None when no selected segment has statistics."""
    rows = [r for r in (stats if indices is None else [stats[i] for i in indices]) if r is not None]
    if not rows:
        return None
    total = [sum(col) for col in zip(*rows)]  # floats: summed in order, as sacrebleu does
    return _sacrebleu.ter_score(_TER, total)


def sentence_ter_from_stats(stats: Sequence[float] | None) -> float | None:
    """Sentence TER of one segment (equals ``sacrebleu.sentence_ter``), None when over the length cap."""
    return None if stats is None else _sacrebleu.ter_score(_TER, [0 + stats[0], 0 + stats[1]])


def ter_signature(target_language: str) -> str:
    """sacrebleu's signature string of corpus TER as computed here, with the text normalisation applied before it
    (``…|tok:tercom|norm:no|…|textnorm:1``; :data:`mtboard.core.text.SIGNATURE_FIELD`)."""
    metric = make_ter(target_language)
    metric.corpus_score(["a"], [["a"]])  # resolves nrefs, which the signature needs
    return f"{metric.get_signature().format()}|{SIGNATURE_FIELD}"
