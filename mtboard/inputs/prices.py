"""Prices and totals (spec §3.5): the price table ``prompts/prices.yaml``, price resolution for a run, and the
token/cost totals of a run card.

Cost (USD, rates in USD per 1M tokens; :meth:`Rates.cost`)::

    ((prompt − cached) × input + cached × cached_input
     + (completion − reasoning) × output + reasoning × reasoning) / 1e6

``cached_tokens`` is the cached part of ``prompt_tokens`` and ``reasoning_tokens`` the reasoning part of
``completion_tokens`` (as OpenAI-compatible servers report them, :func:`mtboard.llm.shapes.usage`). A missing
``cached_input`` rate prices cached tokens at ``input``; a missing ``reasoning`` rate prices reasoning tokens at
``output`` (providers bill them as output). An entry whose provider reported no usage (``Usage.reported`` False) has
an **unknown** cost at a non-zero rate, never $0, and so has the run. :func:`compute_totals` and
:func:`Rates.cost` are also what :mod:`mtboard.validate` re-runs, so runner and validator cannot drift apart.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mtboard.core import canonical, safejson
from mtboard.core.errors import InputError
from mtboard.inputs.prompts import prompts_dir
from mtboard.inputs.runspec import RunSpec
from mtboard.core.schema import BackendFacts, Entry, ErrorKind, Totals, TranslationRecord, Usage, describe_validation_error


class PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: str
    """api_provider the price applies to (openai, openrouter, …)."""
    model: str
    """Model name as typed after ``openai:`` (e.g. gpt-4o-mini, openai/gpt-4o-mini on OpenRouter)."""
    input: float = Field(ge=0)
    """USD per 1M prompt tokens (not cached)."""
    output: float = Field(ge=0)
    """USD per 1M completion tokens (not reasoning)."""
    cached_input: float | None = Field(default=None, ge=0)
    """USD per 1M cached prompt tokens; absent: the provider has no cached rate (priced as ``input``)."""
    reasoning: float | None = Field(default=None, ge=0)
    """USD per 1M reasoning tokens; absent: priced as ``output`` (how providers bill them)."""
    as_of: str | None = None
    """Date this entry's rates were read (YYYY-MM-DD); absent: the table's ``as_of``."""


class PriceTable(BaseModel):
    """``prompts/prices.yaml``: prices in USD per 1M tokens, with the date and page they were read from."""

    model_config = ConfigDict(extra="forbid", strict=True)

    as_of: str
    source: str
    free_providers: list[str] = []
    """Channels without a per-token price (local servers and engines): cost 0."""
    models: list[PriceEntry] = []

    sha256: str | None = None
    """SHA-256 of the file's bytes (set by :func:`load_prices`; recorded in cards priced from the table)."""

    def lookup(self, provider: str | None, model: str) -> tuple[float, float] | None:
        """(input, output) USD per 1M tokens; ``(0, 0)`` for a free provider; None when unknown."""
        r = self.rates(provider, model)
        return None if r is None else (r.input, r.output)

    def rates(self, provider: str | None, model: str) -> Rates | None:
        """Every rate of (provider, model), dated, with this table's hash; zero rates for a free provider; None
        when unknown."""
        for m in self.models:
            if m.provider == provider and m.model == model:
                return Rates(m.input, m.output, m.cached_input, m.reasoning, m.as_of or self.as_of, self.sha256)
        if provider in self.free_providers:
            return Rates(0.0, 0.0)
        return None


@dataclass(frozen=True)
class Rates:
    """The per-token rates of a run, USD per 1M tokens (see the module docstring for the cost formula)."""

    input: float
    output: float
    cached_input: float | None = None
    """None: cached prompt tokens at ``input``."""
    reasoning: float | None = None
    """None: reasoning tokens at ``output``."""
    as_of: str | None = None
    """Date the rates were read (from the price table)."""
    table_sha256: str | None = None
    """SHA-256 of the price table they came from (None: command line or an engine without a price)."""

    @property
    def free(self) -> bool:
        return not any((self.input, self.output, self.cached_input or 0.0, self.reasoning or 0.0))

    def cost(self, usage: Usage) -> float | None:
        """USD cost of ``usage``; None when the provider reported no usage (``usage.reported`` is False) and a rate
        is not zero. Cached tokens above the prompt count and reasoning tokens above the completion count are
        capped at those counts."""
        if usage.reported is False and not self.free:
            return None
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        if self.cached_input is None:
            cost_in = prompt * self.input
        else:
            cached = min(usage.cached_tokens, prompt)
            cost_in = (prompt - cached) * self.input + cached * self.cached_input
        if self.reasoning is None:
            cost_out = completion * self.output
        else:
            reasoning = min(usage.reasoning_tokens, completion)
            cost_out = (completion - reasoning) * self.output + reasoning * self.reasoning
        return (cost_in + cost_out) / 1_000_000

    @classmethod
    def from_method(cls, price_in: float | None, price_out: float | None, cached_in: float | None = None,
                    reasoning: float | None = None) -> Rates | None:
        """The rates a card's method record names (None when the input or output price is unknown)."""
        if price_in is None or price_out is None:
            return None
        return cls(price_in, price_out, cached_in, reasoning)


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """Load and validate the price table (default ``prompts/prices.yaml``); ``sha256`` is the file's hash.
    Raises InputError."""
    p = Path(path) if path else prompts_dir() / "prices.yaml"
    raw = safejson.read_bytes(p, max_bytes=1024 * 1024)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8", where=str(p), fix="save the file as UTF-8") from None
    data = safejson.loads_yaml(text, where=str(p))
    try:
        table = PriceTable.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, str(p)).split(": ", 1)[1], where=str(p),
                         fix="each model needs provider, model, input, output (USD per 1M tokens)") from None
    return table.model_copy(update={"sha256": canonical.sha256_hex(raw)})


def price_table_for(spec: RunSpec, *, priced: bool, price_in: float | None = None,
                    price_out: float | None = None) -> PriceTable | None:
    """The price table a run will look its prices up in, loaded and validated now (before anything is sent), or
    None when :func:`resolve_rates` will not need it (prices given on the command line, an engine without a
    per-token price).

    Raises: InputError when prices.yaml is malformed (so a bad table costs no request).
    """
    if price_in is not None or price_out is not None or not priced or not spec.uses_prompt:
        return None
    return load_prices()


def resolve_rates(spec: RunSpec, facts: BackendFacts, *, priced: bool, price_in: float | None = None,
                  price_out: float | None = None, table: PriceTable | None = None) -> tuple[Rates | None, str]:
    """(rates, source) for a run: the command line's ``--price-in/--price-out`` when either is given, else zero
    rates for engines that are not ``priced`` per token (local engines, baselines), else the price table (``table``,
    as :func:`price_table_for` loaded it before the run; default: ``prompts/prices.yaml`` read now) looked up by the
    provider the backend reported (``facts.api_provider``) and the model typed (every rate of the entry, dated, with
    the table's hash); unknown → ``(None, …)``.

    Raises: InputError when prices.yaml is malformed.
    """
    if price_in is not None or price_out is not None:
        return Rates(price_in or 0.0, price_out or 0.0), "command line"
    if not priced or not spec.uses_prompt:
        return Rates(0.0, 0.0), "engine without per-token price"
    if table is None:
        table = load_prices()
    hit = table.rates(facts.api_provider, spec.method.model)
    if hit is None:
        return None, "unknown (pass --price-in/--price-out)"
    return hit, f"prompts/prices.yaml ({hit.as_of or table.as_of})"


def resolve_prices(spec: RunSpec, facts: BackendFacts, *, priced: bool, price_in: float | None = None,
                   price_out: float | None = None,
                   table: PriceTable | None = None) -> tuple[float | None, float | None, str]:
    """(price_in, price_out, source) of :func:`resolve_rates` (the input and output rates only)."""
    rates, source = resolve_rates(spec, facts, priced=priced, price_in=price_in, price_out=price_out, table=table)
    return (rates.input, rates.output, source) if rates is not None else (None, None, source)


def compute_totals(records: list[TranslationRecord], entries: list[Entry], runs: int, price_in: float | None,
                   price_out: float | None, *, rates: Rates | None = None) -> Totals:
    """Totals (spec §3.5) over all records of all replicates: token sums, retries, cost.

    Cost = :meth:`Rates.cost` of the summed usage (``rates``; default the plain input/output prices); None when a
    price is unknown or some record's provider reported no usage at a non-zero rate. Per entry = cost / (entries ×
    runs); per source character = cost / (source characters × runs).
    """
    if rates is None:
        rates = Rates.from_method(price_in, price_out)
    reported = [r.usage.reported for r in records]
    u = Usage(prompt_tokens=sum(r.usage.prompt_tokens for r in records),
              completion_tokens=sum(r.usage.completion_tokens for r in records),
              reasoning_tokens=sum(r.usage.reasoning_tokens for r in records),
              cached_tokens=sum(r.usage.cached_tokens for r in records),
              reported=False if any(x is False for x in reported) else None)
    retries = sum(max(0, r.attempts - 1) for r in records)
    cost = per_entry = per_char = None
    if rates is not None:
        cost = rates.cost(u)
    if cost is not None:
        n = max(1, len(entries) * runs)
        chars = max(1, sum(len(e.source) for e in entries) * runs)
        per_entry, per_char = cost / n, cost / chars
    return Totals(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                  reasoning_tokens=u.reasoning_tokens, cached_tokens=u.cached_tokens, total_cost_usd=cost,
                  cost_per_entry_usd=per_entry, cost_per_source_char=per_char, retries=retries)


NO_USAGE = "unknown (the provider reported no usage)"
"""What the run summary and report.md say instead of ``0 in / 0 out`` when no answer carried a usage object."""


def tokens_text(totals: Totals, results: Iterable[Any], *, language_model: bool) -> str:
    """The token part of a run summary: ``"120 in / 45 out"``; :data:`NO_USAGE` when the method is a language model
    and none of its answers carried usage (a prompt is never 0 tokens, so all-zero usage of an answered request
    means the provider did not report it; spec §3.5 sums only reported counts); ``"… (3 answers without usage)"``
    when some did not. ``results``: card results or translation records (``usage``, ``error_kind``), of which
    those failed in transport or by the backend (no answer) are not counted. Engines and baselines use no tokens:
    their zeros are shown as they are."""
    base = f"{totals.prompt_tokens} in / {totals.completion_tokens} out"
    if not language_model:
        return base
    answered = [r for r in results if r.error_kind not in (ErrorKind.transport, ErrorKind.backend)]
    missing = sum(1 for r in answered if r.usage.reported is False or (
        r.usage.reported is None and r.usage.prompt_tokens == 0 and r.usage.completion_tokens == 0))
    if answered and missing == len(answered):
        return NO_USAGE
    return base + (f" ({missing} answers without usage)" if missing else "")


__all__ = ["PriceEntry", "PriceTable", "Rates", "load_prices", "price_table_for", "resolve_rates", "resolve_prices",
           "compute_totals", "tokens_text", "NO_USAGE"]
