"""The one OpenAI-compatible HTTP client (httpx): pooling, bounded concurrency, retries, failure classification, usage.

Only this module imports httpx. Runner backends and judges receive an :class:`LLMClient`.

Failure policy (BookTrans write-up): transport failures (connection reset, dropped stream, 429, 5xx, timeout before
any byte) are retried with exponential backoff + jitter, honouring Retry-After; model failures (token cap, unclosed
``<think>``, empty content, refusal) are not transport failures and are returned as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mtboard.schema import ErrorKind, Usage


@dataclass
class LLMRequest:
    """One completion request. Exactly one of ``messages`` (``/v1/chat/completions``) or ``prompt``
    (``/v1/completions``) is set. ``max_tokens`` is always sent."""

    model: str
    max_tokens: int
    messages: list[dict[str, str]] | None = None
    prompt: str | None = None
    temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Other sampling/body parameters sent verbatim (top_p, seed, stop, reasoning_effort, …)."""
    stream: bool = False


@dataclass
class LLMResult:
    """Outcome of one request after retries. ``text`` is the visible content (None if none arrived)."""

    text: str | None
    finish_reason: str | None = None
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    error_kind: ErrorKind | None = None
    attempts: int = 1
    latency_s: float | None = None
    model_id: str | None = None
    raw_request: dict[str, Any] = field(default_factory=dict)
    """The JSON body sent (never headers or keys)."""
    raw_response: str | None = None
    """The raw response body (or concatenated stream) as received."""


class LLMClient:
    """Async OpenAI-compatible client. ``await client.complete(LLMRequest(...)) -> LLMResult``; never raises for
    per-request failures. Construct with :meth:`from_env` (``OPENAI_BASE_URL``/``OPENAI_API_KEY`` or the
    ``JUDGE_`` variants) or explicitly. Use as ``async with``."""

    def __init__(self, base_url: str, api_key: str | None = None, *, concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 5):
        raise NotImplementedError("implemented by the runner work")
