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
  ``ref_len``, TER reference words — and TER is present exactly where the reference is within TER's coverage
  (:func:`mtboard.score.metrics.ter.ter_covered`, decided by the reference alone): a card cannot drop a covered
  segment's bad TER by writing ``null``.
* :func:`facts_problems` — a segment's facts (outcome, exact match, …) and its statistics tell the same story
  (docs/SCORING_SPEC.md §9 "Facts and statistics"; each rule is proved there from sacrebleu's tokenizers and
  :mod:`mtboard.score.measure`, and holds on every segment of every committed card):

  - ``exact_match`` ⇒ usable output, ``equivalent_match`` not false, perfect chrF++ statistics (hypothesis total =
    reference total = matches at every order), perfect BLEU statistics where the tokenizer ignores whitespace
    (``char``, ``zh``; not ``13a``, which joins ``-\\n``, nor MeCab's), TER 0 edits where TER is word-level.
  - an outcome that is not usable (scored as the empty hypothesis) ⇒ no hypothesis n-grams or tokens, TER edits =
    reference words, no exact/equivalent match, code-switching true, hallucination not false, semantic units 0.
  - BLEU's ``char`` tokenizer (scripts without spaces): BLEU's n-gram counts of orders 1–4 are chrF++'s
    character n-gram counts.
  - word-level TER: reference words ≤ chrF++ reference words ≤ 2 × reference words (chrF++ splits at most one
    punctuation mark off a word); edits ≥ the length difference the chrF++ hypothesis words allow; 0 edits ⇒ equal
    chrF++ word counts; a present TER's reference within the coverage cap, and a TER-less segment's reference
    over it; no TER at all for targets without a TER mode.

* :func:`date_problem` — a stored date is not after the validation time plus :data:`CLOCK_SKEW`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mtboard.core.languages import bleu_tokenizer, character_level_ter, ter_unavailable
from mtboard.core.schema import Outcome

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
    if ter is None and ref.ter_ref_words is not None:
        out.append(f"{path}.ter is null, allowed: [edits, {ref.ter_ref_words:g}] (the reference of this entry in "
                   f"{corpus} is within TER's coverage, decided by the reference alone: "
                   "mtboard.score.metrics.ter.ter_covered)")
    elif ter is not None and ref.ter_ref_words is None:
        out.append(f"{path}.ter is present, allowed: null (the reference of this entry in {corpus} is outside TER's "
                   "coverage)")
    elif ter is not None and ter[1] != ref.ter_ref_words:
        out.append(f"{path}.ter[1] (reference words) is {ter[1]!r}, allowed: {ref.ter_ref_words!r} (the reference of "
                   f"this entry in {corpus})")
    return out


FACTS_SOURCE = "docs/SCORING_SPEC.md §9 facts and statistics"
WHITESPACE_FREE_BLEU = frozenset({"char", "zh"})
"""BLEU tokenizers whose tokens do not depend on how whitespace is written (kind, run length, outer whitespace):
``char`` drops every whitespace character, ``zh`` strips the line, spaces out Han characters and applies the
regex rules, which see any whitespace character alike. ``13a`` turns ``-\\n`` into nothing but ``- `` into a
token boundary; MeCab's segmentation of differently spaced text is not proved equal."""


@dataclass(frozen=True)
class MetricModes:
    """How the harness scores a target language, as far as :func:`facts_problems` needs it: the BLEU tokenizer
    (:func:`mtboard.core.languages.bleu_tokenizer`), the TER mode (``"word"``, ``"char"`` for Han/Japanese, None
    where the target has no TER) and the TER coverage cap (:func:`mtboard.score.metrics.ter.ter_token_cap`)."""

    bleu_tokenizer: str
    ter: str | None
    ter_cap: int


def metric_modes(target_language: str) -> MetricModes:
    """:class:`MetricModes` of a target language. Raises InputError for a malformed tag."""
    from mtboard.score.metrics.ter import ter_token_cap  # noqa: PLC0415 - sacrebleu only when needed

    ter = None if ter_unavailable(target_language) else "char" if character_level_ter(target_language) else "word"
    return MetricModes(bleu_tokenizer(target_language), ter, ter_token_cap(target_language))


def _line(path: str, value: object, allowed: object, why: str) -> str:
    return f"{path} is {value}, allowed: {allowed} ({why}; {FACTS_SOURCE})"


def _exact_problems(seg: Any, path: str, modes: MetricModes) -> list[str]:
    """``exact_match`` true ⇒ usable, equivalent, perfect statistics (module docstring)."""
    why = f"{path}.exact_match is true"
    out = []
    if seg.outcome != Outcome.usable:
        out.append(_line(f"{path}.exact_match", "true", "false", f"the outcome is {seg.outcome.value}: only usable "
                         "output matches"))
    if seg.equivalent_match is False:
        out.append(_line(f"{path}.equivalent_match", "false", "true or null", f"{why}: an exact match is equivalent"))
    c = seg.chrf
    for o, name in enumerate(CHRF_ORDERS):
        for k, what in ((0, f"hypothesis {name}s"), (2, f"{name} matches")):
            if c[3 * o + k] != c[3 * o + 1]:
                out.append(_line(f"{path}.chrf[{3 * o + k}] ({what})", c[3 * o + k], c[3 * o + 1],
                                 f"{why}: the same words and characters as the reference's {c[3 * o + 1]}"))
    b = seg.bleu
    if modes.bleu_tokenizer in WHITESPACE_FREE_BLEU:
        want = [b[1], b[1]] + [max(0, b[1] - n + 1) for n in range(1, BLEU_ORDER + 1)] * 2
        out += [_line(f"{path}.bleu[{i}]", b[i], want[i], f"{why}: the reference's tokens under BLEU tokenizer "
                      f"{modes.bleu_tokenizer}") for i in (0, *range(2, BLEU_WIDTH)) if b[i] != want[i]]
    if modes.ter == "word" and seg.ter is not None and seg.ter[0] != 0:
        out.append(_line(f"{path}.ter[0] (edits)", repr(seg.ter[0]), "0.0", f"{why}: word-level TER of the same "
                         "words"))
    return out


def _unusable_problems(seg: Any, path: str) -> list[str]:
    """An outcome that is not usable ⇒ the statistics and facts of the empty hypothesis (module docstring)."""
    why = f"{path}.outcome is {seg.outcome.value}, scored as the empty hypothesis"
    c, b = seg.chrf, seg.bleu
    checks = [(f"{path}.chrf[0] (hypothesis char 1-grams)", c[0], 0), (f"{path}.chrf[18] (hypothesis word 1-grams)",
                                                                       c[18], 0),
              (f"{path}.bleu[0] (hypothesis length)", b[0], 0)]
    if seg.ter is not None:
        checks.append((f"{path}.ter[0] (edits)", seg.ter[0], seg.ter[1]))
    out = [_line(p, repr(v), repr(want), why) for p, v, want in checks if v != want]
    facts = [("exact_match", seg.exact_match, seg.exact_match is False, "false"),
             ("equivalent_match", seg.equivalent_match, seg.equivalent_match is not True, "false or null"),
             ("code_switching", seg.code_switching, seg.code_switching is True, "true"),
             ("hallucination", seg.hallucination, seg.hallucination is not False, "true or null"),
             ("semantic_units", seg.semantic_units, seg.semantic_units in (0, None), "0 or null")]
    return out + [_line(f"{path}.{name}", _json(v), allowed, why) for name, v, ok, allowed in facts if not ok]


def _json(value: object) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _ter_problems(seg: Any, path: str, modes: MetricModes) -> list[str]:
    """TER against the target's TER mode, its coverage cap and the chrF++ word counts (module docstring)."""
    t, c = seg.ter, seg.chrf
    if modes.ter is None:
        return [] if t is None else [_line(f"{path}.ter", "present", "null", "the target language has no TER mode")]
    if t is None:
        if modes.ter == "word" and c[19] <= modes.ter_cap:
            return [_line(f"{path}.ter", "null", "[edits, reference words]", f"the reference has at most {c[19]} "
                          f"TER words (its chrF++ word 1-grams), within the cap of {modes.ter_cap}: TER-covered")]
        return []
    if t[1] > modes.ter_cap:
        return [_line(f"{path}.ter[1] (reference words)", t[1], f"0…{modes.ter_cap}", "a TER-scored reference has at "
                      "most the coverage cap of TER tokens")]
    if modes.ter != "word":
        return []
    out = []
    if not t[1] <= c[19] <= 2 * t[1]:
        out.append(_line(f"{path}.chrf[19] (reference word 1-grams)", c[19], f"{t[1]:g}…{2 * t[1]:g}",
                         f"the reference's {t[1]:g} TER words, at most one punctuation mark split off each"))
    low = max(0, -(-c[18] // 2) - t[1], t[1] - c[18])
    if t[0] < low:
        out.append(_line(f"{path}.ter[0] (edits)", repr(t[0]), f"≥ {low:g}", f"a hypothesis of {c[18]} chrF++ "
                         f"words has {-(-c[18] // 2)}…{c[18]} TER words, the reference {t[1]:g}: each missing or "
                         "extra word is an edit"))
    if t[0] == 0 and c[18] != c[19]:
        out.append(_line(f"{path}.chrf[18] (hypothesis word 1-grams)", c[18], c[19], "TER 0 edits: the reference's "
                         "words up to case, split alike"))
    return out


def _char_bleu_problems(seg: Any, path: str) -> list[str]:
    """Under BLEU's ``char`` tokenizer the BLEU n-grams of orders 1–4 are chrF++'s character n-grams: both are the
    n-grams of the text with its whitespace removed (sacrebleu ``TokenizerChar`` joins every character with spaces and
    BLEU splits on whitespace; chrF's ``extract_all_char_ngrams`` joins ``text.split()``), and both clip matches
    at the smaller count. So ``ref_len`` is the reference char 1-gram total, ``correctₙ`` the char n-gram matches,
    and ``hyp_len`` and ``totalₙ`` the hypothesis char n-gram totals wherever the reference has n-grams of that order
    (chrF counts no hypothesis n-grams of an order the reference lacks)."""
    b, c = seg.bleu, seg.chrf
    pairs = [(1, 1, "reference char 1-grams")] + ([(0, 0, "hypothesis char 1-grams")] if c[1] else [])
    for n in range(1, BLEU_ORDER + 1):
        pairs.append((1 + n, 3 * (n - 1) + 2, f"char {n}-gram matches"))
        if c[3 * (n - 1) + 1]:
            pairs.append((1 + BLEU_ORDER + n, 3 * (n - 1), f"hypothesis char {n}-grams"))
    return [_line(f"{path}.bleu[{i}]", b[i], c[k], f"BLEU tokenizer char: chrF++'s {what}, {path}.chrf[{k}]")
            for i, k, what in pairs if b[i] != c[k]]


def facts_problems(seg: Any, path: str, modes: MetricModes) -> list[str]:
    """One line per rule of the module docstring's :func:`facts_problems` list that segment ``seg`` (a
    :class:`mtboard.core.schema.ScoresSegment`, statistics of the right widths) at ``path`` breaks; [] when its facts
    and statistics agree. ``modes``: :func:`metric_modes` of the card's target language."""
    out = _exact_problems(seg, path, modes) if seg.exact_match else []
    if modes.bleu_tokenizer == "char":
        out += _char_bleu_problems(seg, path)
    if seg.outcome != Outcome.usable:
        out += _unusable_problems(seg, path)
    return out + _ter_problems(seg, path, modes)


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


__all__ = ["BLEU_WIDTH", "CHRF_ORDERS", "CHRF_WIDTH", "CLOCK_SKEW", "CLOCK_SKEW_MINUTES", "EARLIEST", "FACTS_SOURCE",
           "MetricModes", "ReferenceStats", "TER_WIDTH", "WHITESPACE_FREE_BLEU", "bleu_problems", "chrf_problems",
           "date_problem", "facts_problems", "metric_modes", "parse_date", "reference_problems",
           "reference_statistics", "statistics_problems", "ter_problems"]
