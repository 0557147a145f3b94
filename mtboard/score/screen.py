"""The screen-ready score (issue 40 item 5; docs/SCORING_SPEC.md §4.8, policy :data:`SCREEN_POLICY` = ``screen-1``).

Source: the JA→EN screen-translator write-up, "Output compliance" (shared/spec/screen-translator-bench-ja-en.txt): a
screen translator's output is shown to the reader as it is; its flags "don't change any score yet: a separate
screen-ready score is planned, with a hard failure for commentary and a small fixed penalty for formatting". The
write-up gives no amount; ``screen-1`` sets them (the spec says why):

* **Hard failure** (:data:`HARD_FLAGS`): a usable entry flagged ``commentary`` or ``placeholder``, or
  ``foreign_script`` with more than :data:`FOREIGN_SCRIPT_HARD_ABOVE` letters, is counted as **no usable output**:
  its per-entry statistics are replaced by those the scorer gives an empty hypothesis (:func:`as_no_usable_output`:
  chrF++ statistics of ``""`` against the entry's reference, no exact or equivalent match, code-switching, FST share
  0, semantic 0, hallucinated, no glossary hit, no morphological unit matched — docs/SCORING_SPEC.md §3.2, §9).
* **Formatting penalty** (:data:`PENALISED_FLAGS`): every other usable entry loses :data:`FORMAT_PENALTY` = 0.05 per
  penalised flag it carries (``format.speaker_label``, ``format.markdown``, ``format.markup``,
  ``format.line_breaks``, and ``foreign_script`` at or below the hard limit); the run loses the mean of that over its
  entries.

A run's screen-ready score is ``max(0, round(min(C_hard, C) − P, 6))``: ``C`` its composite, ``C_hard`` the composite
recomputed with the hard-failed entries' statistics replaced (the scorer's own :func:`mtboard.score.metrics.composite
.composite` over the run's per-entry columns, as :mod:`mtboard.score.flip` computes a composite over any entries:
corpus chrF++ from summed statistics, rates as means), ``P`` the mean per-entry penalty. A run without a hard failure
takes ``C`` itself (so a run without any screen flag scores exactly its composite). A card with replicate runs scores
the mean (``statistics.fmean``, unrounded, as its composite's replicate mean) of its runs' scores. Every other flag
(``partly_untranslated``, ``length.*``, ``eos.multiple`` and the informational ones) changes nothing here: the
composite already counts what they measure, or the reader never sees them (§3.3).

Computed once per card by the ledger (:mod:`mtboard.ledger.tables`, ``Leaderboard.screen``) from the validated
card's results: nothing is stored on the card, so no committed card changes.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtboard.core.errors import MtboardError
from mtboard.core.schema import MechanicalDecision, Outcome, RunCard
from mtboard.core.text import normalise
from mtboard.score.flip import FlipRow, FlipRun, composite_over
from mtboard.score.metrics.chrf import chrf_statistics
from mtboard.score.metrics.composite import COMPOSITE_DECIMALS

SCREEN_POLICY = "screen-1"
"""Version of this policy (in :func:`screen_signature`). Changing a flag's treatment, an amount, the cap or the
rounding is a new version."""
HARD_FLAGS: tuple[str, ...] = ("commentary", "placeholder")
"""Flags that make a usable entry a hard failure (counted as no usable output)."""
FOREIGN_SCRIPT_HARD_ABOVE = 5
"""``foreign_script`` with more than this many letters (its ``count``) is a hard failure too; at or below it, a
formatting penalty."""
FORMAT_PENALTY = 0.05
"""What one penalised flag costs its entry (absolute, on the composite's 0–1 scale); the run loses the mean over its
entries."""
PENALISED_FLAGS: tuple[str, ...] = ("foreign_script", "format.line_breaks", "format.markdown", "format.markup",
                                    "format.speaker_label")
"""Flags that cost an entry :data:`FORMAT_PENALTY` each (``foreign_script`` only at or below
:data:`FOREIGN_SCRIPT_HARD_ABOVE` letters)."""
NO_EFFECT_FLAGS: tuple[str, ...] = ("partly_untranslated", "length.long", "length.short", "eos.multiple",
                                    "think.stripped", "encoding.broken", "unknown_marks", "injection")
"""The policy's other flags: they change no screen-ready score (docs/SCORING_SPEC.md §3.3 says why, one by one)."""


def screen_signature(profile: str, policy_version: str) -> str:
    """The screen-ready score's signature, in sacrebleu's ``key:value|…`` form (one line)::

        screen:screen-1|hard:commentary,placeholder,foreign_script>5|penalty:0.05|penalised:foreign_script<=5,
        format.line_breaks,format.markdown,format.markup,format.speaker_label|cap:composite|floor:0|round:6|
        composite:A|policy:mech-1.2

    ``profile``: the card's composite profile ('A' or 'B'); ``policy_version``: its mechanical policy (the flags'
    source). Raises MtboardError for an unknown profile."""
    if profile not in ("A", "B"):
        raise MtboardError(f"unknown composite profile {profile!r}", where="screen_signature", fix="use A or B")
    penalised = [f"foreign_script<={FOREIGN_SCRIPT_HARD_ABOVE}" if f == "foreign_script" else f
                 for f in PENALISED_FLAGS]
    return "|".join([f"screen:{SCREEN_POLICY}",
                     "hard:" + ",".join([*HARD_FLAGS, f"foreign_script>{FOREIGN_SCRIPT_HARD_ABOVE}"]),
                     f"penalty:{FORMAT_PENALTY:g}", "penalised:" + ",".join(penalised), "cap:composite", "floor:0",
                     f"round:{COMPOSITE_DECIMALS}", f"composite:{profile}", f"policy:{policy_version}"])


def treatment(decision: MechanicalDecision) -> tuple[str | None, tuple[str, ...]]:
    """One entry's treatment under ``screen-1``: ``(hard rule, penalised rules)``. The hard rule is the first of
    ``commentary``, ``placeholder``, ``foreign_script`` (> 5 letters) the entry carries, else None; the penalised
    rules are the :data:`PENALISED_FLAGS` it carries, in that order, when it is not a hard failure. An entry that is
    not ``usable`` (already no usable output, or an echo) gets ``(None, ())``: it scores 0 already."""
    if decision.outcome != Outcome.usable:
        return None, ()
    rules = {f.rule: f for f in decision.flags}
    for rule in HARD_FLAGS:
        if rule in rules:
            return rule, ()
    fs = rules.get("foreign_script")
    if fs is not None and (fs.count or 0) > FOREIGN_SCRIPT_HARD_ABOVE:
        return "foreign_script", ()
    return None, tuple(r for r in PENALISED_FLAGS if r in rules)


def as_no_usable_output(result: Any, empty_chrf: Sequence[int], rule: str) -> Any:
    """A copy of ``result`` (an :class:`~mtboard.core.schema.EntryResult` or a replicate run's result) with what the
    scorer gives an entry without usable output (docs/SCORING_SPEC.md §3.2 "0 on every metric", §9 "an outcome that
    is not usable is scored as the empty hypothesis"): ``empty_chrf`` (the chrF++ statistics of ``""`` against the
    entry's normalised reference, :func:`empty_statistics`), outcome ``no_usable_output`` with rule ``screen.<rule>``
    (the original flags kept), no exact or equivalent match, code-switching, FST 0 of 0 words where FST was checked,
    semantic score 0 and hallucinated where they were measured, 0 glossary hits of the same terms, 0 morphological
    units matched of the same units. Everything else (format attempts, latency, cost) is kept. The copy is not
    validated and never stored."""
    upd: dict[str, Any] = {
        "checks": result.checks.model_copy(update={"outcome": Outcome.no_usable_output, "rule": f"screen.{rule}"}),
        "stats": result.stats.model_copy(update={"chrf": list(empty_chrf)}),
        "exact_match": False, "code_switching_detected": True,
    }
    if result.equivalent_match is not None:
        upd["equivalent_match"] = False
    if result.fst_checked_words is not None:
        upd.update(fst_accepted_words=0, fst_checked_words=0, fst_valid=False)
    if result.semantic_score is not None:
        upd["semantic_score"] = 0.0
    if result.hallucination_detected is not None:
        upd["hallucination_detected"] = True
    if result.glossary_terms is not None:
        upd["glossary_hits"] = 0
    if result.morph_units is not None:
        upd["morph_matched"] = 0
    return result.model_copy(update=upd)


def empty_statistics(references: Sequence[str]) -> list[list[int]]:
    """The chrF++ statistics (24 integers each, sacrebleu's layout) of the empty hypothesis against each reference,
    normalised as the scorer normalises both sides (:func:`mtboard.core.text.normalise`): what
    :func:`mtboard.score.measure.check_and_measure` stores for an entry without usable output."""
    return chrf_statistics([""] * len(references), [normalise(r) for r in references]) if references else []


@dataclass(frozen=True)
class RunScreen:
    """One run's screen-ready score and its parts (see the module docstring)."""

    value: float
    composite: float
    """The run's composite ``C`` (the card's, or its replicate's)."""
    hard_composite: float
    """``C_hard``: the composite with the hard-failed entries counted as no usable output (``C`` when none)."""
    penalty: float
    """``P``: :data:`FORMAT_PENALTY` × penalised flags ÷ entries."""
    entries: int
    hard: Counter = field(default_factory=Counter)
    """Hard-failed entries by rule."""
    formatted: int = 0
    """Entries with at least one penalised flag (not hard-failed)."""
    flags: Counter = field(default_factory=Counter)
    """Penalised flags by rule."""


def run_screen(results: Sequence[Any], composite_value: float, *, has_fst: bool, has_equiv: bool,
               references: dict[int, str]) -> RunScreen:
    """The screen-ready score of one run: ``results`` its per-entry results (run 0's ``EntryResult`` or a replicate
    run's), ``composite_value`` its composite as stored (validated), ``has_fst``/``has_equiv`` the card's (whether it
    has FST acceptance and equivalent match), ``references`` entry id → reference text (the card's ``expected``).

    Raises: MtboardError for an empty run; KeyError for a hard-failed entry without a reference."""
    if not results:
        raise MtboardError("no entry to score", where="screen-ready", fix="pass a run with entries")
    hard: dict[int, str] = {}
    flags: Counter = Counter()
    formatted = 0
    for k, r in enumerate(results):
        rule, penalised = treatment(r.checks)
        if rule is not None:
            hard[k] = rule
        elif penalised:
            formatted += 1
            flags.update(penalised)
    n = len(results)
    c_hard = composite_value
    if hard:
        empties = empty_statistics([references[results[k].entry_id] for k in sorted(hard)])
        changed = list(results)
        for k, st in zip(sorted(hard), empties):
            changed[k] = as_no_usable_output(results[k], st, hard[k])
        row = FlipRow((FlipRun.of_results(changed, has_fst=has_fst, has_equiv=has_equiv),))
        c_hard = composite_over(row, np.ones(n, dtype=bool))
    penalty = FORMAT_PENALTY * sum(flags.values()) / n
    if not hard and not flags:
        value = composite_value  # no screen flag: the composite itself, exactly
    else:
        value = max(0.0, round(min(c_hard, composite_value) - penalty, COMPOSITE_DECIMALS))
        if value == 0.0:
            value = 0.0  # never -0.0
    return RunScreen(value, composite_value, c_hard, penalty, n, Counter(hard.values()), formatted, flags)


@dataclass(frozen=True)
class ScreenReady:
    """A card's screen-ready score (docs/SCORING_SPEC.md §4.8) with its counts, over every run of the card."""

    value: float
    """0–1; ≤ ``composite``; equal to it when no entry of any run has a screen flag."""
    composite: float
    """The card's composite as the board shows it (the replicate mean for ``--runs N``)."""
    runs: tuple[RunScreen, ...]
    signature: str

    @property
    def hard_failures(self) -> int:
        """Hard-failed entries over every run."""
        return sum(sum(r.hard.values()) for r in self.runs)

    @property
    def formatted(self) -> int:
        """Entries with a formatting penalty over every run."""
        return sum(r.formatted for r in self.runs)

    @property
    def outputs(self) -> int:
        """Entries × runs."""
        return sum(r.entries for r in self.runs)

    @property
    def penalty(self) -> float:
        """The mean over runs of each run's formatting penalty ``P``."""
        return statistics.fmean(r.penalty for r in self.runs)

    @property
    def hard_by_rule(self) -> dict[str, int]:
        out: Counter = Counter()
        for r in self.runs:
            out.update(r.hard)
        return dict(sorted(out.items()))

    @property
    def flags_by_rule(self) -> dict[str, int]:
        out: Counter = Counter()
        for r in self.runs:
            out.update(r.flags)
        return dict(sorted(out.items()))

    @property
    def text(self) -> str:
        """What the run page says: ``0.412 (composite 0.455): 2 hard failures (commentary 2), 3 entries with a
        formatting penalty (format.markdown 3) of 20 outputs``; ``= composite: no screen flag in 20 outputs``."""
        if not self.hard_failures and not self.formatted:
            return f"{self.value:.3f} = the composite: no screen flag in {self.outputs} outputs"
        parts = []
        if self.hard_failures:
            rules = ", ".join(f"{k} {v}" for k, v in self.hard_by_rule.items())
            parts.append(f"{self.hard_failures} hard failure{'s' if self.hard_failures != 1 else ''} ({rules})")
        if self.formatted:
            rules = ", ".join(f"{k} {v}" for k, v in self.flags_by_rule.items())
            parts.append(f"{self.formatted} entr{'ies' if self.formatted != 1 else 'y'} with a formatting penalty "
                         f"({rules}; −{self.penalty:.4f})")
        return f"{self.value:.3f} (composite {self.composite:.3f}): {', '.join(parts)} of {self.outputs} outputs"


def screen_ready(card: RunCard) -> ScreenReady:
    """The card's screen-ready score over its entries (the board's development segment: the card's whole run), run 0
    and every replicate run (the mean of their values, as ``scores.replicates.composite_mean``). Reads only the
    validated card: its results' mechanical decisions and statistics, its references (``expected``) and its stored
    composites. Raises MtboardError for a card without results."""
    sc = card.scores
    has_fst = sc.fst_acceptance_rate is not None
    has_equiv = sc.equivalent_match_rate is not None
    refs = {r.entry_id: r.expected for r in card.results}
    comps = [sc.composite] if sc.replicates is None else list(sc.replicates.composite)
    runs = [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]
    if len(comps) != len(runs):
        raise MtboardError(f"{len(runs)} runs but {len(comps)} replicate composites", where="screen-ready",
                           fix="validate the card first")
    out = tuple(run_screen(res, c, has_fst=has_fst, has_equiv=has_equiv, references=refs)
                for res, c in zip(runs, comps))
    value = out[0].value if len(out) == 1 else statistics.fmean(r.value for r in out)
    composite = sc.composite if sc.replicates is None else sc.replicates.composite_mean
    if not math.isfinite(value):
        raise MtboardError(f"screen-ready score {value!r} is not finite", where="screen-ready")
    return ScreenReady(value, composite, out, screen_signature(sc.composite_profile, sc.policy_version))


__all__ = ["FOREIGN_SCRIPT_HARD_ABOVE", "FORMAT_PENALTY", "HARD_FLAGS", "NO_EFFECT_FLAGS", "PENALISED_FLAGS",
           "RunScreen", "SCREEN_POLICY", "ScreenReady", "as_no_usable_output", "empty_statistics", "run_screen",
           "screen_ready", "screen_signature", "treatment"]
