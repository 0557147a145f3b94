"""Prices and totals (spec §3.5): the price table ``prompts/prices.yaml``, price resolution for a run, and the
token/cost totals of a run card.

Cost = (prompt_tokens × price_in + completion_tokens × price_out) / 1e6, prices in USD per 1M tokens. Reasoning tokens
are billed as completion tokens (they are part of ``completion_tokens`` as OpenAI-compatible servers report them).
:func:`compute_totals` is also what :mod:`mtboard.validate` re-runs, so runner and validator cannot drift apart.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mtboard import safejson
from mtboard.errors import InputError
from mtboard.prompts import prompts_dir
from mtboard.runspec import RunSpec
from mtboard.schema import BackendFacts, Entry, ErrorKind, Totals, TranslationRecord, Usage, describe_validation_error


class PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: str
    """api_provider the price applies to (openai, openrouter, …)."""
    model: str
    """Model name as typed after ``openai:`` (e.g. gpt-4o-mini, openai/gpt-4o-mini on OpenRouter)."""
    input: float = Field(ge=0)
    """USD per 1M prompt tokens."""
    output: float = Field(ge=0)
    """USD per 1M completion tokens (reasoning tokens are billed as completion tokens)."""


class PriceTable(BaseModel):
    """``prompts/prices.yaml``: prices in USD per 1M tokens, with the date and page they were read from."""

    model_config = ConfigDict(extra="forbid", strict=True)

    as_of: str
    source: str
    free_providers: list[str] = []
    """Channels without a per-token price (local servers and engines): cost 0."""
    models: list[PriceEntry] = []

    def lookup(self, provider: str | None, model: str) -> tuple[float, float] | None:
        """(input, output) USD per 1M tokens; ``(0, 0)`` for a free provider; None when unknown."""
        for m in self.models:
            if m.provider == provider and m.model == model:
                return m.input, m.output
        if provider in self.free_providers:
            return 0.0, 0.0
        return None


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """Load and validate the price table (default ``prompts/prices.yaml``). Raises InputError."""
    p = Path(path) if path else prompts_dir() / "prices.yaml"
    data = safejson.load_yaml(p)
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, str(p)).split(": ", 1)[1], where=str(p),
                         fix="each model needs provider, model, input, output (USD per 1M tokens)") from None


def price_table_for(spec: RunSpec, *, priced: bool, price_in: float | None = None,
                    price_out: float | None = None) -> PriceTable | None:
    """The price table a run will look its prices up in, loaded and validated now (before anything is sent), or
    None when :func:`resolve_prices` will not need it (prices given on the command line, an engine without a
    per-token price).

    Raises: InputError when prices.yaml is malformed (so a bad table costs no request).
    """
    if price_in is not None or price_out is not None or not priced or not spec.uses_prompt:
        return None
    return load_prices()


def resolve_prices(spec: RunSpec, facts: BackendFacts, *, priced: bool, price_in: float | None = None,
                   price_out: float | None = None,
                   table: PriceTable | None = None) -> tuple[float | None, float | None, str]:
    """(price_in, price_out, source) in USD per 1M tokens for a run: the command line's ``--price-in/--price-out``
    when either is given, else 0 for engines that are not ``priced`` per token (local engines, baselines), else
    the price table (``table``, as :func:`price_table_for` loaded it before the run; default: ``prompts/prices.yaml``
    read now) looked up by the provider the backend reported (``facts.api_provider``) and the model typed; unknown →
    ``(None, None, …)``.

    Raises: InputError when prices.yaml is malformed.
    """
    if price_in is not None or price_out is not None:
        return price_in or 0.0, price_out or 0.0, "command line"
    if not priced or not spec.uses_prompt:
        return 0.0, 0.0, "engine without per-token price"
    if table is None:
        table = load_prices()
    hit = table.lookup(facts.api_provider, spec.method.model)
    if hit is None:
        return None, None, "unknown (pass --price-in/--price-out)"
    return hit[0], hit[1], f"prompts/prices.yaml ({table.as_of})"


def compute_totals(records: list[TranslationRecord], entries: list[Entry], runs: int, price_in: float | None,
                   price_out: float | None) -> Totals:
    """Totals (spec §3.5) over all records of all replicates: token sums, retries, cost.

    cost = (prompt_tokens × price_in + completion_tokens × price_out) / 1e6; per entry = cost / (entries × runs);
    per source character = cost / (source characters × runs). None when the price is unknown.
    """
    u = Usage(prompt_tokens=sum(r.usage.prompt_tokens for r in records),
              completion_tokens=sum(r.usage.completion_tokens for r in records),
              reasoning_tokens=sum(r.usage.reasoning_tokens for r in records),
              cached_tokens=sum(r.usage.cached_tokens for r in records))
    retries = sum(max(0, r.attempts - 1) for r in records)
    cost = per_entry = per_char = None
    if price_in is not None and price_out is not None:
        cost = (u.prompt_tokens * price_in + u.completion_tokens * price_out) / 1e6
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
    missing = sum(1 for r in answered if r.usage.prompt_tokens == 0 and r.usage.completion_tokens == 0)
    if answered and missing == len(answered):
        return NO_USAGE
    return base + (f" ({missing} answers without usage)" if missing else "")


__all__ = ["PriceEntry", "PriceTable", "load_prices", "price_table_for", "resolve_prices", "compute_totals",
           "tokens_text", "NO_USAGE"]
