"""The published cost tables (spec §10.1–10.2; issue 39 item 4): what a run and a sweep of each committed method
would cost at every priced model of ``prompts/prices.yaml``, from the tokens the committed run cards measured.

Per method (the cards' ``condition``: few-shot, coached-few-shot …), over its committed cards with measured tokens
(``totals.prompt_tokens`` > 0; engines without tokens — Apertium, baselines — have nothing to price)::

    calls per entry  = Σ model_calls(result) / Σ len(results)         (the card's records; :func:`model_calls`)
    cost per call    = Rates.cost(Σ usage of the cards) / Σ calls     (mtboard.inputs.prices: the runner's formula)
    run cost         = entries × calls per entry × cost per call      (spec §10.1; estimate.run_cost)
    sweep cost       = Σ run costs                                    (spec §10.2)

``Rates.cost`` is the formula the runner prices a card with and the validator re-checks (cached prompt tokens at the
cached rate, reasoning tokens at the reasoning rate), applied to the pooled token sums, so a table cell equals the
cost the same tokens would have been billed. The tokens are the committed methods' own (a local model's tokenizer);
an API model's tokenizer splits the same text into somewhat different counts — the tables say so.

A reasoning model (:func:`is_reasoning_model`: ``gpt-5*``, ``o1``/``o3``/``o4-mini`` …) also bills hidden reasoning
tokens, which the committed (non-reasoning) runs do not hold: its run costs are lower bounds (the page marks them).

Deterministic: dated by the price table's ``as_of`` and the latest card's ``timestamp``, never the build clock.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from mtboard.core.schema import EntryResult, RunCard, Usage
from mtboard.inputs.prices import PriceTable, Rates
from mtboard.sweeps.estimate import run_cost

REFERENCE_ENTRIES = 150
"""Spec §10.1's corpus size for its typical per-run costs ("a 150-entry corpus")."""
SPEC_SWEEP_RUNS = 144
"""Spec §10.2's typical sweep: 12 models × 3 temperatures × 2 prompts × 2 coaching settings."""
_REASONING = re.compile(r"^(gpt-5|o[0-9])($|[-.])")


def is_reasoning_model(model: str) -> bool:
    """Whether a price-table model bills hidden reasoning tokens (OpenAI's ``gpt-5*`` and ``o<N>`` series; a router
    prefix such as ``openai/`` is ignored): ``"gpt-5-mini"``, ``"openai/o3"`` → True; ``"gpt-4o"`` → False."""
    return bool(_REASONING.match(model.rsplit("/", 1)[-1]))


def model_calls(card: RunCard, r: EntryResult) -> int:
    """The model calls one entry's record says were made (transport retries excluded): with the FST gate
    (``tools_enabled`` fst-gate; :mod:`mtboard.run.fst_gate`: one gate check per model answer) ``tool_call_count``,
    at least 1 (a transport failure ends the entry before any check); otherwise ``format_attempts`` (the answers
    asked for, 1 without ``--format-attempts``; :mod:`mtboard.run.format_attempts`; the two are not combinable)."""
    if "fst-gate" in card.tools_enabled:
        return max(r.tool_call_count, 1)
    return r.format_attempts


@dataclass
class MethodTokens:
    """A committed method's measured tokens, pooled over its cards (``cards``: (dataset id, run_card_hash, timestamp)
    of each)."""

    method: str
    entries: int = 0
    """Σ records (entries × replicates)."""
    calls: int = 0
    """Σ model calls (:func:`model_calls`)."""
    usage: Usage = field(default_factory=Usage)
    cards: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def calls_per_entry(self) -> float:
        return self.calls / self.entries if self.entries else 0.0

    def per_entry(self, kind: str) -> float:
        """Mean tokens of ``kind`` (prompt_tokens, completion_tokens …) per entry."""
        return getattr(self.usage, kind) / self.entries if self.entries else 0.0

    def cost_per_call(self, rates: Rates) -> float | None:
        """USD per call at ``rates`` (None when a rate is unknown or no call was made)."""
        total = rates.cost(self.usage)
        return None if total is None or not self.calls else total / self.calls

    def run_cost(self, rates: Rates, entries: int = REFERENCE_ENTRIES) -> float | None:
        """Spec §10.1 for a run over ``entries`` entries at ``rates``."""
        per_call = self.cost_per_call(rates)
        return None if per_call is None else run_cost(entries, self.calls_per_entry, per_call)


def measured_methods(cards: Iterable[RunCard], counted: Iterable[tuple[int, int]] | None = None
                     ) -> list[MethodTokens]:
    """The committed methods with measured tokens, by ``condition`` (sorted): cards whose ``totals.prompt_tokens``
    is positive, their records' model calls (:func:`model_calls`) and the usage totals of their cards.
    ``counted``: ``(results, Σ model_calls)`` of each card's run 0, in ``cards`` order, when the caller has them
    (:class:`mtboard.ledger.summary.CardSummary`; None: counted from ``card.results``)."""
    by: dict[str, MethodTokens] = {}
    counts = list(counted) if counted is not None else None
    for i, c in enumerate(cards):
        t = c.totals
        if not t.prompt_tokens:
            continue
        n, calls = counts[i] if counts is not None else (len(c.results), -1)
        if not n:
            continue
        m = by.setdefault(c.condition, MethodTokens(c.condition))
        m.entries += n
        m.calls += calls if calls >= 0 else sum(model_calls(c, r) for r in c.results)
        m.usage = Usage(prompt_tokens=m.usage.prompt_tokens + t.prompt_tokens,
                        completion_tokens=m.usage.completion_tokens + t.completion_tokens,
                        reasoning_tokens=m.usage.reasoning_tokens + t.reasoning_tokens,
                        cached_tokens=m.usage.cached_tokens + t.cached_tokens, reported=True)
        m.cards.append((c.dataset.id, c.run_card_hash, c.timestamp))
    for m in by.values():
        m.cards.sort()
    return [by[k] for k in sorted(by)]


@dataclass
class CostTables:
    """What the run-costs page shows: ``methods`` (measured), ``models`` (``(provider, model, Rates)`` of every
    priced model, in the table's order), ``runs[model index][method index]`` (USD per :data:`REFERENCE_ENTRIES`-entry
    run), ``sweeps[method index]`` (Σ over the models: one run of the method per priced model), the price table's
    ``as_of``, ``source`` and ``sha256``, and ``latest_card`` (the newest card timestamp read)."""

    methods: list[MethodTokens]
    models: list[tuple[str, str, Rates]]
    runs: list[list[float | None]]
    sweeps: list[float | None]
    as_of: str
    source: str
    sha256: str | None
    latest_card: str | None
    entries: int = REFERENCE_ENTRIES

    @property
    def lower_bounds(self) -> list[bool]:
        """Per model (``models``' order): its run costs are lower bounds (:func:`is_reasoning_model`)."""
        return [is_reasoning_model(model) for _, model, _ in self.models]

    @property
    def mean_run(self) -> float | None:
        """The mean of every (model, method) run cost; None when one is unknown or there is none."""
        cells = [v for row in self.runs for v in row]
        if not cells or any(v is None for v in cells):
            return None
        return sum(v for v in cells if v is not None) / len(cells)

    @property
    def spec_sweep(self) -> float | None:
        """Spec §10.2's typical 144-run sweep at :attr:`mean_run` (the spec: 144 × $0.50 = $72)."""
        mean = self.mean_run
        return None if mean is None else SPEC_SWEEP_RUNS * mean


def cost_tables(cards: Iterable[RunCard], table: PriceTable, entries: int = REFERENCE_ENTRIES,
                counted: Iterable[tuple[int, int]] | None = None) -> CostTables:
    """The cost tables of ``cards`` (the committed, validated cards) at every model of ``table``; ``counted`` as
    :func:`measured_methods` takes it."""
    cards = list(cards)
    methods = measured_methods(cards, counted)
    models: list[tuple[str, str, Any]] = []
    for m in table.models:
        rates = table.rates(m.provider, m.model)
        if rates is not None:
            models.append((m.provider, m.model, rates))
    runs = [[meth.run_cost(r, entries) for meth in methods] for _, _, r in models]
    sweeps: list[float | None] = []
    for j in range(len(methods)):
        col = [row[j] for row in runs]
        sweeps.append(None if any(v is None for v in col) else sum(v for v in col if v is not None))
    stamps = [c.timestamp for c in cards if c.totals.prompt_tokens]
    return CostTables(methods, models, runs, sweeps, table.as_of, table.source, table.sha256,
                      max(stamps) if stamps else None, entries)


__all__ = ["REFERENCE_ENTRIES", "SPEC_SWEEP_RUNS", "CostTables", "MethodTokens", "cost_tables", "is_reasoning_model",
           "measured_methods", "model_calls"]
