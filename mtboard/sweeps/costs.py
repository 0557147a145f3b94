"""The published cost tables (spec §10.1–10.2; issue 39 item 4): what a run and a sweep of each committed method
would cost at every priced model of ``prompts/prices.yaml``, from the tokens the committed run cards measured.

Per method (the cards' ``condition``: few-shot, coached-few-shot …), over its committed cards with measured tokens
(``totals.prompt_tokens`` > 0; engines without tokens — Apertium, baselines — have nothing to price)::

    calls per entry  = Σ results[].attempts / Σ len(results)          (the card's records; replicates count)
    cost per call    = Rates.cost(Σ usage of the cards) / Σ attempts  (mtboard.inputs.prices: the runner's formula)
    run cost         = entries × calls per entry × cost per call      (spec §10.1; estimate.run_cost)
    sweep cost       = Σ run costs                                    (spec §10.2)

``Rates.cost`` is the formula the runner prices a card with and the validator re-checks (cached prompt tokens at the
cached rate, reasoning tokens at the reasoning rate), applied to the pooled token sums, so a table cell equals the
cost the same tokens would have been billed. The tokens are the committed methods' own (a local model's tokenizer);
an API model's tokenizer splits the same text into somewhat different counts — the tables say so.

Deterministic: dated by the price table's ``as_of`` and the latest card's ``timestamp``, never the build clock.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from mtboard.core.schema import RunCard, Usage
from mtboard.inputs.prices import PriceTable, Rates
from mtboard.sweeps.estimate import run_cost

REFERENCE_ENTRIES = 150
"""Spec §10.1's corpus size for its typical per-run costs ("a 150-entry corpus")."""
SPEC_SWEEP_RUNS = 144
"""Spec §10.2's typical sweep: 12 models × 3 temperatures × 2 prompts × 2 coaching settings."""


@dataclass
class MethodTokens:
    """A committed method's measured tokens, pooled over its cards (``cards``: (dataset id, run_card_hash, timestamp)
    of each)."""

    method: str
    entries: int = 0
    """Σ records (entries × replicates)."""
    calls: int = 0
    """Σ attempts."""
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


def measured_methods(cards: Iterable[RunCard]) -> list[MethodTokens]:
    """The committed methods with measured tokens, by ``condition`` (sorted): cards whose ``totals.prompt_tokens``
    is positive, their records' attempts and the usage totals of their cards."""
    by: dict[str, MethodTokens] = {}
    for c in cards:
        t = c.totals
        if not t.prompt_tokens or not c.results:
            continue
        m = by.setdefault(c.condition, MethodTokens(c.condition))
        m.entries += len(c.results)
        m.calls += sum(r.attempts for r in c.results)
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


def cost_tables(cards: Iterable[RunCard], table: PriceTable, entries: int = REFERENCE_ENTRIES) -> CostTables:
    """The cost tables of ``cards`` (the committed, validated cards) at every model of ``table``."""
    cards = list(cards)
    methods = measured_methods(cards)
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


__all__ = ["REFERENCE_ENTRIES", "SPEC_SWEEP_RUNS", "CostTables", "MethodTokens", "cost_tables", "measured_methods"]
