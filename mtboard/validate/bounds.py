"""Ranges and consistency rules for stored numbers that no schema bound can express (issue 32 item 3;
docs/SCORING_SPEC.md "Ranges and consistency").

Each function returns one line per violation, naming the JSON path, the value, the allowed range and where the range
comes from; callers prefix their check name. Used by the scores-only validator (:mod:`mtboard.validate.scores`),
whose per-segment statistics are not recomputed from text, and by every check that reads a stored date.

* :func:`statistics_problems` — per-segment sacrebleu sufficient statistics internally consistent:

  - chrF++ (``CHRF(word_order=2)``, 24 integers): for char orders 1–6 then word orders 1–2 the triple
    ``(hypothesis n-grams, reference n-grams, matches)`` (sacrebleu ``CHRF._extract_corpus_statistics`` /
    ``_get_match_statistics``). Every count ≥ 0; matches ≤ both totals (a match is clipped by both sides' counts);
    the n-gram total of order n is ``max(0, t₁ − n + 1)`` where t₁ is the order-1 total of the same side and kind
    (sacrebleu's ``extract_all_char_ngrams`` slides a window over the whitespace-free string,
    ``extract_word_ngrams`` over the word list) — except that a hypothesis total is 0 when the reference has no
    n-gram of that order (``CHRF._get_match_statistics``: "don't count hits if no reference exists").
  - BLEU (10 integers): ``hyp_len, ref_len, correct₁…₄, total₁…₄`` (sacrebleu ``BLEU._compute_segment_statistics``).
    Lengths ≥ 0; ``totalₙ = max(0, hyp_len − n + 1)``; ``0 ≤ correctₙ ≤ totalₙ`` and
    ``correctₙ ≤ max(0, ref_len − n + 1)``.
  - TER (``[edits, reference words]``, sacrebleu ``TER._compute_score_from_stats``): both whole numbers ≥ 0.

* :func:`reference_problems` — with the corpus at hand (a run card's validator always has it; the official build
  has the secret corpus named by ``$MTBOARD_SECRET_SEGMENT``), every reference-side statistic equals the one the
  harness computes from the corpus's own reference (:func:`reference_statistics`): chrF++ reference totals, BLEU
  ``ref_len``, TER reference words.
* :func:`date_problem` — a stored date is not after the validation time plus :data:`CLOCK_SKEW`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

CLOCK_SKEW_MINUTES = 10
CLOCK_SKEW = timedelta(minutes=CLOCK_SKEW_MINUTES)
"""How far a stored date may lie after the validator's clock. A card is written on a contributor's machine and read on
a CI runner; both sync with NTP, which keeps clocks within well under a second, but laptops drift and container
clocks lag after suspend: ten minutes absorbs that while a date even an hour ahead is still refused."""
EARLIEST = datetime(2024, 1, 1, tzinfo=UTC)
"""No mtboard document can be older (the project did not exist)."""

CHRF_ORDERS = ("char 1-gram", "char 2-gram", "char 3-gram", "char 4-gram", "char 5-gram", "char 6-gram",
               "word 1-gram", "word 2-gram")
"""The 8 orders of ``CHRF(word_order=2)`` statistics, in sacrebleu's order (3 integers each)."""
CHRF_WIDTH = 3 * len(CHRF_ORDERS)
BLEU_ORDER = 4
BLEU_WIDTH = 2 + 2 * BLEU_ORDER
TER_WIDTH = 2
CHRF_SOURCE = "sacrebleu CHRF(word_order=2) statistics: (hyp, ref, match) per order"
BLEU_SOURCE = "sacrebleu BLEU statistics: hyp_len, ref_len, correct 1-4, total 1-4"
TER_SOURCE = "sacrebleu TER statistics: edits, reference words"


def _count_problem(path: str, value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{path} is {value!r}, allowed: an integer ≥ 0 (a count)"
    return None


def _width_problem(path: str, values: Sequence, width: int, source: str) -> str | None:
    if len(values) != width:
        return f"{path} has {len(values)} values, allowed: exactly {width} ({source})"
    return None


def chrf_problems(stats: Sequence[int], path: str) -> list[str]:
    """Consistency of one segment's chrF++ statistics (module docstring); [] when consistent."""
    bad = _width_problem(path, stats, CHRF_WIDTH, CHRF_SOURCE)
    if bad:
        return [bad]
    out = [p for i, v in enumerate(stats) if (p := _count_problem(f"{path}[{i}]", v))]
    if out:
        return out
    for o, name in enumerate(CHRF_ORDERS):
        hyp, ref, match = stats[3 * o: 3 * o + 3]
        if match > min(hyp, ref):
            out.append(f"{path}[{3 * o + 2}] ({name} matches) is {match}, allowed: 0…{min(hyp, ref)} (at most the "
                       f"hypothesis's {hyp} and the reference's {ref} {name}s; {CHRF_SOURCE})")
        first = 0 if o < 6 else 6
        for side, name_side in ((0, "hypothesis"), (1, "reference")):
            want = max(0, stats[3 * first + side] - (o - first))
            why = f"a text with {stats[3 * first + side]} {CHRF_ORDERS[first]}s has that many {name}s"
            if side == 0 and ref == 0:
                want, why = 0, f"sacrebleu counts no hypothesis {name}s when the reference has none"
            if stats[3 * o + side] != want:
                out.append(f"{path}[{3 * o + side}] ({name_side} {name}s) is {stats[3 * o + side]}, allowed: "
                           f"{want} ({why}; {CHRF_SOURCE})")
    return out


def bleu_problems(stats: Sequence[int], path: str) -> list[str]:
    """Consistency of one segment's BLEU statistics (module docstring); [] when consistent."""
    bad = _width_problem(path, stats, BLEU_WIDTH, BLEU_SOURCE)
    if bad:
        return [bad]
    out = [p for i, v in enumerate(stats) if (p := _count_problem(f"{path}[{i}]", v))]
    if out:
        return out
    hyp_len, ref_len = stats[0], stats[1]
    for n in range(1, BLEU_ORDER + 1):
        correct, total = stats[1 + n], stats[1 + BLEU_ORDER + n]
        if total != max(0, hyp_len - n + 1):
            out.append(f"{path}[{1 + BLEU_ORDER + n}] ({n}-gram total) is {total}, allowed: "
                       f"{max(0, hyp_len - n + 1)} (a hypothesis of {hyp_len} tokens; {BLEU_SOURCE})")
        limit = min(total, max(0, ref_len - n + 1))
        if correct > limit:
            out.append(f"{path}[{1 + n}] ({n}-gram matches) is {correct}, allowed: 0…{limit} (at most the "
                       f"hypothesis's {total} and the reference's {max(0, ref_len - n + 1)} {n}-grams; {BLEU_SOURCE})")
    return out


def ter_problems(stats: Sequence[float] | None, path: str) -> list[str]:
    """Consistency of one segment's TER statistics (module docstring); [] when consistent or None."""
    if stats is None:
        return []
    bad = _width_problem(path, stats, TER_WIDTH, TER_SOURCE)
    if bad:
        return [bad]
    return [f"{path}[{i}] ({what}) is {v!r}, allowed: a whole number ≥ 0 ({TER_SOURCE})"
            for i, (what, v) in enumerate(zip(("edits", "reference words"), stats))
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or v != int(v)]


def statistics_problems(chrf: Sequence[int], bleu: Sequence[int], ter: Sequence[float] | None,
                        path: str) -> list[str]:
    """:func:`chrf_problems` + :func:`bleu_problems` + :func:`ter_problems` of one segment at JSON path ``path``
    (e.g. ``$.segments[3]``)."""
    return chrf_problems(chrf, f"{path}.chrf") + bleu_problems(bleu, f"{path}.bleu") + ter_problems(ter, f"{path}.ter")


@dataclass(frozen=True)
class ReferenceStats:
    """What the harness computes from one reference alone: chrF++ reference totals per order, BLEU ``ref_len`` and
    TER reference words (None when the reference is outside TER's coverage)."""

    chrf: tuple[int, ...]
    bleu_ref_len: int
    ter_ref_words: float | None


def reference_statistics(references: Sequence[str], target_language: str) -> list[ReferenceStats]:
    """The reference side of each reference's statistics: the harness's own
    :func:`mtboard.score.metrics.segments.segment_statistics` of an empty hypothesis against the reference (the
    reference-side columns do not depend on the hypothesis). Raises what that raises (ConfigError for a missing
    tokenizer)."""
    from mtboard.score.metrics.segments import segment_statistics  # noqa: PLC0415 - sacrebleu only when needed

    chrf, bleu, ter = segment_statistics([""] * len(references), list(references), target_language, workers=1)
    return [ReferenceStats(tuple(c[1::3]), b[1], None if t is None else t[1]) for c, b, t in zip(chrf, bleu, ter)]


def reference_problems(chrf: Sequence[int], bleu: Sequence[int], ter: Sequence[float] | None, ref: ReferenceStats,
                       path: str, corpus: str) -> list[str]:
    """One line per reference-side statistic of a segment at ``path`` that differs from ``ref`` (the corpus's,
    :func:`reference_statistics`); ``corpus`` names the corpus in the message. Assumes widths already checked."""
    out = [f"{path}.chrf[{3 * o + 1}] (reference {name}s) is {chrf[3 * o + 1]}, allowed: {want} (the reference of "
           f"this entry in {corpus})" for o, (name, want) in enumerate(zip(CHRF_ORDERS, ref.chrf))
           if chrf[3 * o + 1] != want]
    if bleu[1] != ref.bleu_ref_len:
        out.append(f"{path}.bleu[1] (reference length) is {bleu[1]}, allowed: {ref.bleu_ref_len} (the reference of "
                   f"this entry in {corpus})")
    if ter is not None and ref.ter_ref_words is None:
        out.append(f"{path}.ter is present, allowed: null (the reference of this entry in {corpus} is outside TER's "
                   "coverage)")
    elif ter is not None and ter[1] != ref.ter_ref_words:
        out.append(f"{path}.ter[1] (reference words) is {ter[1]!r}, allowed: {ref.ter_ref_words!r} (the reference of "
                   f"this entry in {corpus})")
    return out


def parse_date(text: str) -> datetime | None:
    """An ISO 8601 date or date-time as an aware datetime (a bare date or naive time read as UTC); None if
    unparseable."""
    try:
        ts = datetime.fromisoformat(text)  # Python ≥ 3.11 reads a trailing Z
    except (ValueError, TypeError):
        return None
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def date_problem(text: str, path: str, now: datetime, *, earliest: datetime | None = EARLIEST) -> str | None:
    """One line when the stored date ``text`` at ``path`` lies after ``now`` + :data:`CLOCK_SKEW` (or before
    ``earliest``), else None. ``now``: the validation time (aware)."""
    ts = parse_date(text)
    if ts is None:
        return f"{path} is {text!r}, allowed: an ISO 8601 date"
    latest = now + CLOCK_SKEW
    if ts > latest:
        return (f"{path} is {text}, allowed: not after the validation time {now.strftime('%Y-%m-%dT%H:%M:%SZ')} + "
                f"{CLOCK_SKEW_MINUTES} min clock skew (a document cannot be dated in the future)")
    if earliest is not None and ts < earliest:
        return f"{path} is {text}, allowed: from {earliest.date()} on (no mtboard document is older)"
    return None


__all__ = ["BLEU_WIDTH", "CHRF_ORDERS", "CHRF_WIDTH", "CLOCK_SKEW", "CLOCK_SKEW_MINUTES", "EARLIEST", "ReferenceStats", "TER_WIDTH",
           "bleu_problems", "chrf_problems", "date_problem", "parse_date", "reference_problems",
           "reference_statistics", "statistics_problems", "ter_problems"]
