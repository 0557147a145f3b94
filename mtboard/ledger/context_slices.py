"""Context-behaviour slices (issue 40 item 3): what a GEMBA-MQM-context judge said about each row's use of dialogue
history, decided once here from the stored verdicts; the board, the run pages and ``data/ledger.json`` only read it.

Source: ``../shared/spec/gemba-mqm-context-evaluation.txt`` ("Context Behavior Labels": the judge records one of
``used_correctly``, ``missed_required_context``, ``ignored_irrelevant_context``, ``misused_context``, ``unclear``;
"these labels support context-use and context-ignore slice analysis"). The label is the answer's last line
(:func:`mtboard.judges.gemba_mqm.parse_mqm`); an answer without it, with an unknown label or with the label not last
does not parse, so its entry is ``judge_failed`` (no label, no score) and is counted here apart, never in a slice.

Per card with a *counted* GEMBA-MQM judge (:func:`mtboard.ledger.tables.counted_judges`: admitted, issue 39), over
the card's results whose corpus entry has ``history`` (prior dialogue lines):

* **judged** — the scored verdicts: the denominator of every share. Each carries exactly one label.
* per label: **count**, **share** = count ÷ judged with its 95 % **Wilson** score interval
  (:func:`mtboard.score.stats.wilson_interval`), and the **mean MQM penalty** of the label's entries (the verdicts'
  scores: the sum of their errors' severity weights, minor 1, major 5, critical 25, uncapped) with a 95 % seeded
  percentile **bootstrap** interval (:func:`mtboard.score.stats.mean_interval`; seed
  :func:`mtboard.score.stats.view_seed` of ``context-slices``, the card's run_card_hash and the label).
  Why two methods: a share is a binomial proportion over a few dozen entries, often 0 or all of them; a bootstrap or
  Wald interval collapses to a point there, Wilson's does not and keeps its coverage at small n (Brown, Cai &
  DasGupta 2001). A mean penalty is a mean of skewed integer weights with no closed form, so it gets the project's
  one bootstrap (:mod:`mtboard.score.metrics.bootstrap`'s draw scheme and percentile indices); a slice of one entry
  has no interval (None), never a point.
* counted apart: **parse failures** (``judge_failed`` after answers that did not parse, the missing-label case among
  them), **call failures** (``judge_failed``: the judge's service gave no answer), **not sent** (no usable output:
  the judge was not asked, so there is no label).
* **excluded** — results whose entry has no history: the prompt tells the judge to answer ``unclear`` there, so
  they would only pad that slice; their number is shown.

Nothing on the card is read but the verdicts (status, score, label, justification): the judge summary's
``breakdown['context_behavior']`` rates are the validator's business (:mod:`mtboard.validate.judging` recomputes them
from the same verdicts and refuses a card that claims others), and no card field can set a number shown here.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtboard.core.schema import RunCard
from mtboard.judges.gemba_mqm import CONTEXT_BEHAVIORS
from mtboard.ledger.tables import counted_judges
from mtboard.score import stats

KIND = "gemba-mqm"
"""The judge whose verdicts carry the label."""

CALL_FAILED = "judge call failed ("
"""How a ``judge_failed`` verdict whose call got no answer begins its justification (:mod:`mtboard.judges.run`);
every other ``judge_failed`` verdict is a parse failure."""


@dataclass(frozen=True)
class LabelSlice:
    """One label's slice of a card's judged entries with history."""

    label: str
    count: int
    share: float | None
    """count ÷ judged (0–1); None when nothing was judged."""
    share_ci: tuple[float, float] | None
    """95 % Wilson score interval of the share; None when nothing was judged."""
    mean_penalty: float | None
    """Mean MQM penalty (severity-weight points per entry, ≥ 0, lower is better) of the label's entries; None for an
    empty slice."""
    penalty_ci: tuple[float, float] | None
    """95 % seeded percentile bootstrap interval of the mean penalty; None for fewer than 2 entries."""


@dataclass(frozen=True)
class ContextSlices:
    """A card's context-behaviour slices (see the module docstring)."""

    judge: str
    """The GEMBA-MQM judge's model as the card records it."""
    with_history: int
    """The card's results whose entry has history: judged + parse_failed + call_failed + not_sent."""
    judged: int
    parse_failed: int
    call_failed: int
    not_sent: int
    excluded: int
    """Results whose entry has no history (not in any slice)."""
    labels: tuple[LabelSlice, ...]
    """One per label, in :data:`mtboard.judges.gemba_mqm.CONTEXT_BEHAVIORS` order (empty slices included)."""


def card_slices(card: RunCard, history_ids: set[int] | frozenset[int]) -> ContextSlices | None:
    """The card's slices (module docstring). ``history_ids``: the ids of the corpus entries that have history.

    Returns None when the card has no counted GEMBA-MQM judge or none of its results has history (nothing to show).
    """
    summary = counted_judges(card).get(KIND)
    if summary is None:
        return None
    with_history = [r for r in card.results if r.entry_id in history_ids]
    if not with_history:
        return None
    verdicts = [r.judgements[KIND] for r in with_history if KIND in r.judgements]
    scored = [v for v in verdicts if v.status == "scored" and v.score is not None
              and v.context_behavior in CONTEXT_BEHAVIORS]
    failed = [v for v in verdicts if v.status == "judge_failed"]
    call_failed = sum(1 for v in failed if (v.justification or "").startswith(CALL_FAILED))
    judged = len(scored)
    labels = []
    for label in CONTEXT_BEHAVIORS:
        penalties = [float(v.score) for v in scored if v.context_behavior == label]  # type: ignore[arg-type]
        k = len(penalties)
        labels.append(LabelSlice(
            label=label, count=k, share=k / judged if judged else None, share_ci=stats.wilson_interval(k, judged),
            mean_penalty=sum(penalties) / k if k else None,
            penalty_ci=stats.mean_interval(penalties, stats.view_seed("context-slices", card.run_card_hash or "",
                                                                      label))))
    return ContextSlices(judge=summary.model, with_history=len(with_history), judged=judged,
                         parse_failed=len(failed) - call_failed, call_failed=call_failed,
                         not_sent=sum(1 for v in verdicts if v.status == "not_sent"),
                         excluded=len(card.results) - len(with_history), labels=tuple(labels))


def attach(boards) -> None:
    """Fill each board's ``context_slices``: card path → :class:`ContextSlices`, for boards whose corpus is known and
    holds entries with history (otherwise left empty: no entry can carry a context label); cards without a counted
    GEMBA-MQM judge are left out."""
    for lb in boards:
        corpus = lb.corpus.corpus if lb.corpus is not None else None
        if corpus is None:
            continue
        history_ids = frozenset(e.id for e in corpus.entries if e.history)
        if not history_ids:
            continue
        found = {lc.path: card_slices(lc.card, history_ids) for lc in lb.cards}
        lb.context_slices = {path: s for path, s in found.items() if s is not None}


__all__ = ["KIND", "LabelSlice", "ContextSlices", "card_slices", "attach"]
