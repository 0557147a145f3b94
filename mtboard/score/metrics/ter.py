"""TER (Snover et al. 2006) through sacrebleu's ``TER``, over the segments whose reference is within a length cap
(docs/SCORING_SPEC.md §2).

Character-level for Han and Japanese targets (``normalized=True, asian_support=True``; see
:func:`mtboard.core.languages.character_level_ter`), where whitespace words do not exist; not computed at all for
targets written without spaces in another script (Thai, Lao, Khmer, Myanmar, Tibetan, …:
:func:`mtboard.core.languages.ter_unavailable`), where sacrebleu has no TER mode.

Coverage (issue 32 item 1): a segment is TER-scored when its *reference* has at most :func:`ter_token_cap` TER
tokens — decided by the reference alone, so every system on a corpus is scored on the same segments
(``ter_coverage`` is a property of the corpus); the hypothesis is scored whatever its length. The cost of a long
hypothesis is bounded by sacrebleu's own TER limits (``sacrebleu.metrics.lib_ter``: at most 1,000 shift candidates
per segment, shifts of at most 10 words over at most 50 positions, a 25-wide beam in the edit distance), so it grows
linearly with the hypothesis; the reference cap bounds the shift search (measured on the committed cards in
docs/SCORING_SPEC.md §2). Per segment the statistics are ``[edits, reference words]`` (floats, summed in order as
sacrebleu does); None for a segment outside the covered set.

Padding (docs/SCORING_SPEC.md §2.6): sacrebleu's TER is tercom's heuristic (greedy shifts from a beam-limited
alignment), an upper bound of the true TER, so one added token can lower a sentence's value (a hand-made Han example
falls from 30 to 4 edits). What holds, measured on every committed card by tests/test_metrics_coverage.py: coverage
never changes with the hypothesis, and padding every output the same reference-blind way never improves corpus TER
over the entries whose mechanical outcome it leaves unchanged. The value is sacrebleu's, never re-implemented here.
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import TER

from mtboard.core.languages import character_level_ter, ter_unavailable
from mtboard.score.metrics import _sacrebleu
from mtboard.core.text import SIGNATURE_FIELD

TER_MAX_WORDS = 20
"""TER is computed only for segments whose reference has at most this many TER tokens (the hypothesis: any length)."""
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
    """Most TER tokens a reference may have for its segment to be TER-scored (the hypothesis is never capped):
    :data:`TER_MAX_CJK_TOKENS` for Chinese/Japanese targets (character-level TER), :data:`TER_MAX_WORDS`
    otherwise."""
    return TER_MAX_CJK_TOKENS if character_level_ter(target_language) else TER_MAX_WORDS


def ter_covered(references: Sequence[str], target_language: str) -> list[bool]:
    """Per segment, whether it is TER-scored: its (normalised) reference has at most :func:`ter_token_cap` TER tokens
    and the target has TER at all (:func:`mtboard.core.languages.ter_unavailable`). Depends on the references and the
    target language only, never on a hypothesis."""
    if ter_unavailable(target_language):
        return [False] * len(references)
    metric = make_ter(target_language)
    cap = ter_token_cap(target_language)
    return [len(_sacrebleu.ter_tokens(metric, r)) <= cap for r in references]


def ter_statistics(hypotheses: Sequence[str], references: Sequence[str],
                   target_language: str) -> list[list[float] | None]:
    """Per-segment ``[edits, reference words]`` of equal-length, normalised streams
    (:func:`mtboard.core.text.normalise`) for the covered segments (:func:`ter_covered`: decided by the reference), whatever the hypothesis's length; None
    for the others (every segment when the target has no TER)."""
    covered = ter_covered(references, target_language)
    sel = [i for i, c in enumerate(covered) if c]
    out: list[list[float] | None] = [None] * len(hypotheses)
    if sel:
        rows = _sacrebleu.extract_statistics(make_ter(target_language), [hypotheses[i] for i in sel],
                                             [references[i] for i in sel])
        for i, s in zip(sel, rows):
            out[i] = [float(s[0]), float(s[1])]
    return out


def ter_from_stats(stats: Sequence[Sequence[float] | None], indices: Sequence[int] | None = None) -> float | None:
    """Corpus TER (0–∞ on sacrebleu's 0–100 scale, lower is better) over the segments that have TER statistics
    (None entries are outside the covered set and skipped). None when no selected segment has statistics."""
    rows = [r for r in (stats if indices is None else [stats[i] for i in indices]) if r is not None]
    if not rows:
        return None
    total = [sum(col) for col in zip(*rows)]  # floats: summed in order, as sacrebleu does
    return _sacrebleu.ter_score(_TER, total)


def sentence_ter_from_stats(stats: Sequence[float] | None) -> float | None:
    """Sentence TER of one segment (equals ``sacrebleu.sentence_ter``), None outside the covered set."""
    return None if stats is None else _sacrebleu.ter_score(_TER, [0 + stats[0], 0 + stats[1]])


def ter_signature(target_language: str) -> str:
    """sacrebleu's signature string of corpus TER as computed here, with the text normalisation applied before it
    (``…|tok:tercom|norm:no|…|textnorm:1``; :data:`mtboard.core.text.SIGNATURE_FIELD`)."""
    metric = make_ter(target_language)
    metric.corpus_score(["a"], [["a"]])  # resolves nrefs, which the signature needs
    return f"{metric.get_signature().format()}|{SIGNATURE_FIELD}"
