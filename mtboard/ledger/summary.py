"""What the ledger and the site read from a card's entries, made once per card (issue 35 item 3).

A :class:`CardSummary` holds, for one loaded card, every value of its run 0 results (``card.results``) that the
build reads outside the card's own board computation and run page: the entry ids and their domains, segments and
outcomes, the sentence chrF++ the item statistics, portraits and compare data use, the copy check's output hashes,
the portrait's tallies, the costs page's model calls, and the texts a portrait's losses and a board's item pages
show. Every reader of those values goes through :func:`summary` instead of walking the card's results itself, so a
card whose summary is known need not be parsed at all when its board did not change: :mod:`mtboard.ledger.cardcache`
keeps each card's summary between builds.

The values are those of the results, computed by the same rules as before (each rule lives here once:
:func:`failed`, :func:`sentence_chrf`, :func:`modes_of`); nothing in the build assigns to a loaded card's results, so
a summary stays that of its card.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Any

from mtboard.core.schema import EntryResult, Outcome, RunCard
from mtboard.sweeps.costs import model_calls
from mtboard.validate.copies import output_hash


def failed(r: EntryResult) -> bool:
    """Mechanical failure: no usable output or the source returned untranslated."""
    return r.checks.outcome != Outcome.usable or r.error is not None


def sentence_chrf(r: EntryResult) -> float:
    """Sentence chrF++ used for item statistics and portraits (0 for failures and missing scores)."""
    if failed(r) or r.chrf_score is None:
        return 0.0
    return float(r.chrf_score)


def modes_of(results: list[EntryResult]) -> tuple[Counter[str], int]:
    """Failure-mode counts over the development entries of ``results`` — each non-usable outcome by its value, each
    mechanical flag rule once per entry as ``flag:<rule>`` (rules in name order) — and the number of those entries
    (the portraits' summary lines, :func:`mtboard.site.portrait.summaries`)."""
    dev = [r for r in results if r.segment == "development"]
    out: Counter[str] = Counter()
    for r in dev:
        if r.checks.outcome.value != "usable":
            out[r.checks.outcome.value] += 1
        for rule in sorted({f.rule for f in r.checks.flags}):
            out[f"flag:{rule}"] += 1
    return out, len(dev)


@dataclass(frozen=True, eq=False)
class Tallies:
    """A run's entries counted for its model's portrait (:func:`mtboard.site.portrait._portrait`): ``outcomes``
    (``"outcome: <value>"`` per entry and ``"flag: <rule>"`` per mechanical flag), ``kinds`` (error kinds),
    GEMBA-MQM error ``severity`` and ``classes`` (categories), rubric ``flags``. Counts are whole numbers ≥ 1."""

    outcomes: Counter[str]
    kinds: Counter[str]
    severity: Counter[str]
    classes: Counter[str]
    flags: Counter[str]


def tallies_of(results: list[EntryResult]) -> Tallies:
    """:class:`Tallies` of ``results``."""
    t = Tallies(Counter(), Counter(), Counter(), Counter(), Counter())
    for r in results:
        t.outcomes[f"outcome: {r.checks.outcome.value}"] += 1
        for f in r.checks.flags:
            t.outcomes[f"flag: {f.rule}"] += 1
        if r.error_kind is not None:
            t.kinds[r.error_kind.value] += 1
        mqm = r.judgements.get("gemba-mqm")
        if mqm is not None:
            for err in mqm.errors:
                t.severity[err.severity] += 1
                t.classes[err.category] += 1
        rub = r.judgements.get("rubric")
        if rub is not None:
            t.flags.update(rub.flags)
    return t


@dataclass(frozen=True, eq=False)
class CardSummary:
    """One card's run 0 results as the build reads them outside its board's computation (module docstring). Every
    sequence has one item per result, in ``card.results`` order (a repeated entry id repeats)."""

    ids: tuple[int, ...]
    """Entry ids (≥ 0)."""
    domains: tuple[str | None, ...]
    """Each entry's domain value (``Domain``), or None."""
    segments: tuple[str, ...]
    """Each entry's segment value (``development``, ``test`` …)."""
    outcomes: tuple[str, ...]
    """Each entry's mechanical outcome value (``usable``, ``no_usable_output``, ``source_untranslated``)."""
    failed: tuple[bool, ...]
    """:func:`failed` of each entry."""
    chrf: array
    """:func:`sentence_chrf` of each entry, 0–100 (an ``array('d')``; failures and missing scores 0)."""
    hashes: tuple[int, ...]
    """:func:`mtboard.validate.copies.output_hash` of each entry's usable, non-blank output, -1 for the others."""
    sources: tuple[str, ...]
    """Each entry's source text as the card holds it."""
    references: tuple[str, ...]
    """Each entry's reference text (``expected``) as the card holds it."""
    outputs: tuple[str, ...]
    """Each entry's hypothesis (``predicted``)."""
    has_latency: bool
    """Some entry records a per-request latency (``latency_s``)."""
    fails_everything: bool
    """The card has entries and none has a usable output."""
    model_calls: int
    """Σ :func:`mtboard.sweeps.costs.model_calls` over the entries (≥ 0)."""
    tallies: Tallies
    modes: tuple[Counter[str], int]
    """:func:`modes_of` the results."""

    def by_id(self) -> dict[int, float]:
        """Entry id → sentence chrF++ (a repeated id: its last result's, as a dict of the results by id gives), made
        for one use and not kept."""
        return dict(zip(self.ids, self.chrf))


def summarise(card: RunCard) -> CardSummary:
    """The :class:`CardSummary` of ``card`` (one pass over its run 0 results; ~1 ms for 355 entries)."""
    res = card.results
    outcomes = tuple(r.checks.outcome.value for r in res)
    return CardSummary(
        ids=tuple(r.entry_id for r in res), domains=tuple(r.domain.value if r.domain is not None else None for r in res),
        segments=tuple(r.segment.value for r in res), outcomes=outcomes, failed=tuple(failed(r) for r in res),
        chrf=array("d", [sentence_chrf(r) for r in res]),
        hashes=tuple(output_hash(r.predicted) if r.checks.outcome == Outcome.usable and r.predicted.strip() else -1
                     for r in res),
        sources=tuple(r.source for r in res), references=tuple(r.expected for r in res),
        outputs=tuple(r.predicted for r in res), has_latency=any(r.latency_s is not None for r in res),
        fails_everything=bool(res) and all(o != Outcome.usable for o in outcomes),
        model_calls=sum(model_calls(card, r) for r in res), tallies=tallies_of(res), modes=modes_of(res))


def summary(lc: Any) -> CardSummary:
    """The :class:`CardSummary` of ``lc`` (a :class:`mtboard.ledger.load.LoadedCard`; that module imports this one):
    the one kept in its ``summary_of`` for ``lc.card`` (the card it was made of), else made now and kept there (made
    again when ``lc.card`` is another object)."""
    held = lc.summary_of
    if held is None or held[0] is not lc.card:
        held = lc.summary_of = (lc.card, summarise(lc.card))
    return held[1]


__all__ = ["CardSummary", "Tallies", "failed", "modes_of", "sentence_chrf", "summarise", "summary", "tallies_of"]
