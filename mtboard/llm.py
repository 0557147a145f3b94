"""The one OpenAI-compatible HTTP client (httpx): pooling, bounded concurrency, retries, failure classification, usage.

Only this module imports httpx (and httpcore, httpx's connection layer, which completions use directly: see
:meth:`LLMClient.__init__`). Runner backends and judges receive an :class:`LLMClient`.

Failure policy (BookTrans write-up, "срыв модели и сбой роутера"; issue 3):

* **Transport failures** — the service failed, not the model: connection refused/reset, a dropped or truncated
  stream, HTTP 408/409/425/429/5xx, a timeout before the response arrived, a 200 response whose body or stream
  carries an ``error`` object (an error chunk inside a 200 stream is never partial success), a body that is not
  JSON. They are retried up to ``max_retries`` times with exponential backoff and full jitter, waiting at least
  ``Retry-After`` / ``retry-after-ms`` when the server sends one. When they persist the result has
  ``error_kind=transport``.
* **Model failures** — the model failed; scored 0, recorded with their kind, not retried (the same request gives the
  same failure): ``token_cap`` (``finish_reason: length``, also with empty content), ``unclosed_think`` (``<think>``
  without ``</think>``), ``empty`` (no visible text), ``refusal`` (a ``refusal`` field or ``content_filter``),
  ``timeout`` (a stream still producing past ``deadline_s``), ``input_truncated`` (the server reports fewer prompt
  tokens than were sent, or rejects the prompt as longer than its context).
* **Configuration failures** — other 4xx (401 bad key, 404 unknown model, 400 unsupported parameter):
  ``error_kind=backend``, not retried; :attr:`LLMResult.fatal` is True for 401/403/404 so a runner can stop early.

Secrets: the API key is sent only in the ``Authorization`` header; nothing this module returns contains it (every
string that came from the server is scrubbed of the key and of the base URL), and :attr:`LLMResult.raw_request` is
the JSON body only.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import email.utils
import json
import math
import os
import random
import re
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore
import httpx

from mtboard.errors import ConfigError
from mtboard.schema import ErrorKind, Usage

TRANSPORT_STATUSES = frozenset({408, 409, 425, 429})
"""Retried HTTP statuses below 500 (timeout, conflict, too early, rate limit); every 5xx is retried too."""
FATAL_STATUSES = frozenset({401, 403, 404})
"""Statuses that mean the whole run cannot work (bad key, no access, unknown model or path)."""
SHARD_SIZE = 4
"""Connections per connection-pool shard (see LLMClient.__init__)."""
_NET_ERRORS = (httpx.HTTPError, httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError,
               httpcore.UnsupportedProtocol, httpcore.ProxyError, httpcore.ConnectionNotAvailable, OSError)
"""What a request can raise when the service fails (httpx's errors on the injected-transport path, httpcore's on the
direct path; both name the same classes, e.g. ConnectError, ReadTimeout, RemoteProtocolError)."""
TRUNCATION_FACTOR = 0.8
"""A prompt is judged truncated when the server reports fewer than this share of the estimated minimum tokens."""
_CONTEXT_RE = re.compile(r"context (length|window|size)|too long|exceeds? (the )?(context|maximum)|n_ctx|"
                         r"maximum context|too many tokens", re.I)
_PIECE_RE = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*|\d+|[^\w\s]+")


def estimate_min_prompt_tokens(texts: list[str]) -> int:
    """A conservative lower bound on how many tokens any subword tokenizer needs for ``texts``.

    Counts letter runs (with internal apostrophes/hyphens: ``don't``, ``well-known`` count once), digit runs and
    punctuation runs; every BPE/SentencePiece vocabulary spends at least one token on each. Chat-template tokens are
    not counted, so the true count is higher. Used by :func:`detect_truncation`.
    """
    return sum(len(_PIECE_RE.findall(t)) for t in texts)


def detect_truncation(reported_prompt_tokens: int | None, estimated_min: int, expected: int | None = None,
                      cached_tokens: int = 0) -> str | None:
    """Return a message when the server evidently saw fewer prompt tokens than were sent, else None.

    ``expected`` (exact count from a tokenizer, when the caller has one) wins over the estimate. A missing or zero
    report is not evidence (some servers omit usage). Example: 3,000 words reported as 2,048 tokens → truncated.
    Caveat: a server that reports only the uncached part of a prompt (without ``cached_tokens``) can trip this.
    """
    if not reported_prompt_tokens:
        return None
    seen = reported_prompt_tokens
    if expected is not None:
        if seen < expected:
            return f"input truncated: sent {expected} prompt tokens, server reports {seen}"
        return None
    if estimated_min and seen + cached_tokens < TRUNCATION_FACTOR * estimated_min:
        return (f"input truncated: the prompt has at least ~{estimated_min} tokens, server reports {seen} "
                "(context window too small?)")
    return None


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
    max_tokens_field: str = "max_tokens"
    """Body key for the cap: ``max_tokens`` (most servers) or ``max_completion_tokens`` (OpenAI's current API)."""
    expected_prompt_tokens: int | None = None
    """Exact prompt token count when the caller knows it (tokenizer); otherwise a lower-bound estimate is used."""
    check_truncation: bool = True
    """Compare the server's reported prompt tokens with what was sent (error kind ``input_truncated``)."""

    @property
    def path(self) -> str:
        """``/chat/completions`` or ``/completions`` (relative to the base URL, which ends in ``/v1``)."""
        if (self.messages is None) == (self.prompt is None):
            raise ConfigError("an LLMRequest needs exactly one of messages or prompt", field="LLMRequest")
        return "/chat/completions" if self.messages is not None else "/completions"

    def body(self) -> dict[str, Any]:
        """The JSON body sent: model, messages|prompt, temperature, the cap, extra, stream (+ usage in streams)."""
        body: dict[str, Any] = {"model": self.model}
        if self.messages is not None:
            body["messages"] = self.messages
        else:
            body["prompt"] = self.prompt
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body[self.max_tokens_field] = int(self.max_tokens)
        body.update(self.extra)
        if self.stream:
            body["stream"] = True
            body.setdefault("stream_options", {"include_usage": True})
        return body

    def prompt_texts(self) -> list[str]:
        return [m.get("content") or "" for m in self.messages] if self.messages is not None else [self.prompt or ""]


@dataclass
class LLMResult:
    """Outcome of one request after retries. ``text`` is the visible content (None if none arrived).

    A closed ``<think>…</think>`` block is moved from ``text`` to ``reasoning``; everything received is in
    ``raw_response``. ``error``/``error_kind`` are set for every failure (see the module docstring).
    """

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
    """The raw response body (or concatenated stream) as received (the last attempt's), scrubbed of secrets."""
    attempt_log: list[dict[str, Any]] = field(default_factory=list)
    """One dict per attempt: attempt, status, outcome, error, elapsed_s, retry_after_s, sleep_s."""
    status_code: int | None = None
    """HTTP status of the last attempt (None when no response arrived)."""
    fatal: bool = False
    """True when the failure means no request of this run can succeed (401/403/404)."""

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def retries(self) -> int:
        """Attempts beyond the first."""
        return max(0, self.attempts - 1)


@dataclass
class _Attempt:
    outcome: str  # ok | transport | model | backend
    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    usage: Usage | None = None
    model_id: str | None = None
    status: int | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    retry_after_s: float | None = None
    raw: str | None = None
    fatal: bool = False


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delta-seconds or an HTTP date); None if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
        return max(0.0, secs) if math.isfinite(secs) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def infer_provider(base_url: str) -> str:
    """Channel name from the endpoint host: api.openai.com→openai, openrouter.ai→openrouter, port 11434→ollama,
    else ``openai-compatible`` (refined by :meth:`LLMClient.probe` when the server names itself)."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host == "api.openai.com" or host.endswith(".openai.com"):
        return "openai"
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "openrouter"
    if parts.port == 11434:
        return "ollama"
    return "openai-compatible"


def normalise_base_url(base_url: str) -> str:
    """Strip trailing slashes; add ``/v1`` when the URL has no path (``http://127.0.0.1:8080`` → ``…/v1``).

    Raises: ConfigError when the URL is not http(s).
    """
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError("base URL is not an http(s) URL", field="--base-url / OPENAI_BASE_URL",
                          fix="use e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1")
    if parts.path in ("", "/"):
        url += "/v1"
    return url


def split_think(text: str) -> tuple[str, str | None, bool]:
    """Split a ``<think>`` block off visible text. Returns ``(visible, reasoning, unclosed)``.

    ``"<think>a</think>b"`` → ``("b", "a", False)``; ``"a</think>b"`` (opening tag in the template) → ``("b", "a",
    False)``; ``"<think>a"`` → ``("<think>a", None, True)``.
    """
    close = text.rfind("</think>")
    if close >= 0:
        before = text[:close]
        start = before.find("<think>")
        reasoning = before[start + 7:] if start >= 0 else before
        return text[close + 8:].strip(), reasoning.strip(), False
    if "<think>" in text:
        return text, None, True
    return text, None, False


def _usage_from(data: dict[str, Any] | None) -> Usage | None:
    if not isinstance(data, dict):
        return None

    def num(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0

    ptd = data.get("prompt_tokens_details") or {}
    ctd = data.get("completion_tokens_details") or {}
    return Usage(prompt_tokens=num(data.get("prompt_tokens")), completion_tokens=num(data.get("completion_tokens")),
                 reasoning_tokens=num(ctd.get("reasoning_tokens") if isinstance(ctd, dict) else 0),
                 cached_tokens=num(ptd.get("cached_tokens") if isinstance(ptd, dict) else 0))


def _add_usage(a: Usage, b: Usage | None) -> Usage:
    if b is None:
        return a
    return Usage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                 completion_tokens=a.completion_tokens + b.completion_tokens,
                 reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
                 cached_tokens=a.cached_tokens + b.cached_tokens)


def _error_message(data: Any) -> str:
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        msg = err.get("message") or err.get("type") or json.dumps(err)[:300]
        code = err.get("code")
        return f"{msg} (code {code})" if code not in (None, "") else str(msg)
    if isinstance(err, str):
        return err
    return json.dumps(data)[:300] if data is not None else "no error message"


class LLMClient:
    """Async OpenAI-compatible client. ``await client.complete(LLMRequest(...)) -> LLMResult``; never raises for
    per-request failures. Construct with :meth:`from_env` (``OPENAI_BASE_URL``/``OPENAI_API_KEY`` or the
    ``JUDGE_`` variants) or explicitly. Use as ``async with``.

    Args:
        base_url: endpoint ending in ``/v1`` (a bare ``http://host:port`` gets ``/v1`` appended).
        api_key: sent as ``Authorization: Bearer``; None for local servers.
        concurrency: requests in flight at once (a semaphore) and the connection-pool size.
        timeout_s: read timeout per request (seconds); a timeout before the response is a transport failure.
        max_retries: transport-failure retries beyond the first attempt.
        backoff_base_s / backoff_max_s: full-jitter exponential backoff ``U(0, min(max, base·2^(n-1)))``.
        retry_after_max_s: longest Retry-After honoured (longer waits are capped).
        deadline_s: total time a streaming attempt may keep producing before it is a model ``timeout`` (None: off).
        transport: an httpx transport (tests only); with one, completions go through httpx as well.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 5, backoff_base_s: float = 0.5, backoff_max_s: float = 30.0,
                 retry_after_max_s: float = 120.0, connect_timeout_s: float = 10.0, deadline_s: float | None = None,
                 transport: httpx.AsyncBaseTransport | None = None):
        if concurrency < 1:
            raise ConfigError("concurrency must be at least 1", field="--concurrency")
        self.base_url = normalise_base_url(base_url)
        self._api_key = api_key or None
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max(0, int(max_retries))
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self.deadline_s = deadline_s
        self.api_provider = infer_provider(self.base_url)
        self.server_info: dict[str, Any] = {}
        self._secrets = [s for s in {self._api_key, self.base_url, base_url.strip()} if s and len(s) >= 4]
        parts = urlsplit(self.base_url)
        if parts.password:
            self._secrets.append(parts.password)
        self._sem = asyncio.Semaphore(concurrency)
        headers = {"Accept": "application/json", "User-Agent": "mtboard"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # httpcore's pool scans every connection it holds on each request and response; shards of SHARD_SIZE
        # connections keep that scan short (measured at C=32, L=50 ms on 2 cores: 135 requests/s with one pool of 32,
        # 424 with 8 pools of 4).
        n_shards = max(1, math.ceil(concurrency / SHARD_SIZE))
        per = math.ceil(concurrency / n_shards)
        # One TLS context for all shards (building one reads the CA bundle: ~15 ms each); plain-http endpoints
        # (local servers) need none.
        https = self.base_url.startswith("https:")
        verify: Any = httpx.create_ssl_context() if https else False
        timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s, pool=None)

        def client(limit: int) -> httpx.AsyncClient:
            return httpx.AsyncClient(base_url=self.base_url, headers=headers, transport=transport,
                                     follow_redirects=False, trust_env=False, verify=verify, timeout=timeout,
                                     limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit))

        # Completions go straight to httpcore pools (the connection layer httpx itself uses) with the same TLS
        # context, timeouts, no proxies (trust_env=False) and no redirects: httpx's request/response models, URL
        # merging, cookie and auth hooks cost ~0.3 ms CPU per request, a third of the client's work at C=32. The JSON
        # body is encoded once per request and reused by its retries. An injected ``transport`` (tests) keeps the
        # whole path on httpx. /models (probe) always goes through httpx. Measured with bench/harness_throughput.py
        # (C=32, L=50 ms, 2 cores): client CPU 0.6 → 0.25 ms per request.
        self._pools: list[httpcore.AsyncConnectionPool] | None = None
        if transport is None:
            self._shards: list[httpx.AsyncClient] = []
            self._http = client(1)
            # plain-http endpoints (local servers, where the harness's own overhead matters) use a small asyncio
            # network backend; TLS endpoints keep httpcore's own (anyio) backend
            backend = {} if https else {"network_backend": _AsyncioBackend()}
            self._pools = [httpcore.AsyncConnectionPool(
                ssl_context=verify if https else None, max_connections=per, max_keepalive_connections=per,
                http1=True, http2=False, **backend) for _ in range(n_shards)]
            parts = urlsplit(self.base_url)
            netloc = parts.netloc.rpartition("@")[2]
            prefix = f"{parts.scheme}://{netloc}{parts.path}"
            self._urls = {p: httpcore.URL(prefix + p) for p in ("/chat/completions", "/completions")}
            hdrs = [(k.encode("ascii"), v.encode("latin-1")) for k, v in headers.items()]
            if parts.username is not None:  # user:password@host: Basic auth, as httpx does for such URLs
                cred = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
                hdrs = [h for h in hdrs if h[0] != b"Authorization"]
                hdrs.append((b"Authorization", b"Basic " + base64.b64encode(cred)))
            self._post_headers = hdrs + [(b"Content-Type", b"application/json"), (b"Accept-Encoding", b"identity")]
            self._extensions = {"timeout": {"connect": connect_timeout_s, "read": timeout_s, "write": timeout_s,
                                            "pool": None}}
        else:
            self._shards = [client(per) for _ in range(n_shards)]
            self._http = self._shards[0]
        self._inflight = [0] * n_shards

    # ---------------------------------------------------------------------------------------------------------------
    @classmethod
    def from_env(cls, prefix: str = "OPENAI", base_url: str | None = None, **kwargs: Any) -> LLMClient:
        """Build from ``{prefix}_BASE_URL`` (unless ``base_url`` is given) and ``{prefix}_API_KEY`` (environment only).

        Raises: ConfigError when no base URL is known.
        """
        url = base_url or os.environ.get(f"{prefix}_BASE_URL")
        if not url:
            raise ConfigError(f"no endpoint: {prefix}_BASE_URL is not set", field="--base-url",
                              fix=f"export {prefix}_BASE_URL=https://api.openai.com/v1 (or pass --base-url); "
                                  f"the key comes from {prefix}_API_KEY")
        return cls(url, os.environ.get(f"{prefix}_API_KEY"), **kwargs)

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for pool in self._pools or []:
            await pool.aclose()
        for client in {id(c): c for c in [self._http, *self._shards]}.values():
            await client.aclose()

    def _pick(self) -> int:
        """Index of the pool shard with the fewest requests in flight."""
        return min(range(len(self._inflight)), key=self._inflight.__getitem__)

    def redact(self, text: str | None) -> str | None:
        """Remove the API key and the base URL from a string that came from the network or an exception."""
        if text is None:
            return None
        for s in self._secrets:
            text = text.replace(s, "[REDACTED]")
        return text

    async def probe(self) -> dict[str, Any]:
        """GET ``/models`` once and refine :attr:`api_provider` from what the server says about itself
        (``Server: llama.cpp`` or ``owned_by: llamacpp`` → llama.cpp; ``owned_by: vllm`` → vllm; llama-cpp-python's
        ``owned_by: me`` with a uvicorn server → llama-cpp-python). Never raises; returns what it learned."""
        info: dict[str, Any] = {}
        try:
            resp = await self._http.get("/models", timeout=min(self.timeout_s, 15.0))
            server = resp.headers.get("server", "").lower()
            info["server"] = server or None
            owned = None
            if resp.status_code == 200:
                data = resp.json()
                items = data.get("data") if isinstance(data, dict) else None
                if isinstance(items, list) and items and isinstance(items[0], dict):
                    owned = str(items[0].get("owned_by") or "").lower() or None
                    info["models"] = [str(i.get("id")) for i in items if isinstance(i, dict)][:50]
            info["owned_by"] = owned
            if self.api_provider == "openai-compatible":
                if "llama.cpp" in server or owned == "llamacpp":
                    self.api_provider = "llama.cpp"
                elif owned == "vllm":
                    self.api_provider = "vllm"
                elif owned == "me" and "uvicorn" in server:
                    self.api_provider = "llama-cpp-python"
        except (httpx.HTTPError, ValueError) as exc:
            info["error"] = self.redact(f"{type(exc).__name__}: {exc}")
        self.server_info = info
        return info

    # ---------------------------------------------------------------------------------------------------------------
    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        jittered = random.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))
        if retry_after is not None:
            wait = min(retry_after, self.retry_after_max_s)
            return wait + random.uniform(0.0, 0.1 * wait + 0.05)
        return jittered

    async def complete(self, req: LLMRequest) -> LLMResult:
        """Send one request with retries; classify the outcome (module docstring). Never raises for request failures.

        Returns: LLMResult with usage summed over attempts and ``latency_s`` = the summed duration of the attempts
        (queueing and backoff sleeps excluded).
        """
        try:
            body = req.body()
            path = req.path
            # encoded once, reused by every attempt (the same bytes httpx's ``json=`` sends)
            payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except ConfigError as exc:
            return LLMResult(text=None, error=exc.one_line(), error_kind=ErrorKind.backend, attempts=0, fatal=True)
        except (TypeError, ValueError) as exc:  # NaN/Infinity or a non-JSON value in the body
            return LLMResult(text=None, error=f"request body is not JSON: {exc}"[:300], error_kind=ErrorKind.backend,
                             attempts=0, fatal=True)
        usage = Usage()
        log: list[dict[str, Any]] = []
        busy = 0.0
        att: _Attempt | None = None
        attempt = 0
        while True:
            attempt += 1
            async with self._sem:
                t0 = time.monotonic()
                att = await self._attempt(path, payload, stream=req.stream)
                elapsed = time.monotonic() - t0
            busy += elapsed
            usage = _add_usage(usage, att.usage)
            entry = {"attempt": attempt, "status": att.status, "outcome": att.outcome, "error": att.error,
                     "elapsed_s": round(elapsed, 4), "retry_after_s": att.retry_after_s, "sleep_s": None}
            log.append(entry)
            if att.outcome != "transport" or attempt > self.max_retries:
                break
            delay = self._backoff(attempt, att.retry_after_s)
            entry["sleep_s"] = round(delay, 4)
            await asyncio.sleep(delay)
        assert att is not None
        result = LLMResult(text=att.text, finish_reason=att.finish_reason, reasoning=att.reasoning, usage=usage,
                           attempts=attempt, latency_s=busy, model_id=att.model_id, raw_request=body,
                           raw_response=att.raw, attempt_log=log, status_code=att.status, fatal=att.fatal)
        if att.outcome != "ok":
            result.error = att.error
            result.error_kind = att.error_kind
            if att.outcome == "transport" and attempt > 1:
                result.error = f"{att.error} (after {attempt} attempts)"
            return result
        self._classify_model(req, result, att)
        return result

    def _classify_model(self, req: LLMRequest, result: LLMResult, att: _Attempt) -> None:
        """Model-failure policy on a complete 200 answer (order matters: truncation, refusal, think, cap, empty)."""
        text = att.text or ""
        if req.check_truncation and att.usage is not None:
            msg = detect_truncation(att.usage.prompt_tokens, estimate_min_prompt_tokens(req.prompt_texts()),
                                    req.expected_prompt_tokens, att.usage.cached_tokens)
            if msg:
                result.error, result.error_kind = msg, ErrorKind.input_truncated
                return
        if att.refusal or att.finish_reason == "content_filter":
            result.error = f"refusal: {(att.refusal or 'content_filter')[:200]}"
            result.error_kind = ErrorKind.refusal
            return
        visible, reasoning, unclosed = split_think(text)
        if unclosed:
            result.error, result.error_kind = "unclosed <think>: no visible answer after the reasoning", \
                ErrorKind.unclosed_think
            return
        if reasoning is not None:
            result.text = visible
            result.reasoning = "\n".join(x for x in (att.reasoning, reasoning) if x)
        if att.finish_reason == "length":
            result.error = (f"token cap hit (finish_reason length at max_tokens={req.max_tokens})"
                            + ("" if visible.strip() else " with no visible text"))
            result.error_kind = ErrorKind.token_cap
            return
        if not visible.strip():
            result.error, result.error_kind = "empty content", ErrorKind.empty

    # ---------------------------------------------------------------------------------------------------------------
    def _http_failure(self, status: int, headers: Any, raw: str) -> _Attempt:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        msg = self.redact(_error_message(data) if data is not None else raw[:300].strip() or "no body") or ""
        if status in TRANSPORT_STATUSES or status >= 500:
            return _Attempt("transport", status=status, error=f"HTTP {status}: {msg}"[:500],
                            error_kind=ErrorKind.transport, retry_after_s=parse_retry_after(headers), raw=raw)
        if status in (400, 413, 422) and _CONTEXT_RE.search(msg):
            return _Attempt("model", status=status, error=f"input too long for the context: HTTP {status}: {msg}"[:500],
                            error_kind=ErrorKind.input_truncated, raw=raw)
        return _Attempt("backend", status=status, error=f"HTTP {status}: {msg}"[:500], error_kind=ErrorKind.backend,
                        raw=raw, fatal=status in FATAL_STATUSES)

    def _exc(self, exc: BaseException, received: int) -> _Attempt:
        name = type(exc).__name__
        detail = self.redact(str(exc)) or ""
        where = "before any byte" if received == 0 else f"after {received} bytes (dropped stream)"
        return _Attempt("transport", error=f"{name} {where}: {detail}"[:500], error_kind=ErrorKind.transport)

    async def _attempt(self, path: str, payload: bytes, *, stream: bool) -> _Attempt:
        shard = self._pick()
        self._inflight[shard] += 1
        try:
            return await self._attempt_on(shard, path, payload, stream=stream)
        finally:
            self._inflight[shard] -= 1

    async def _post(self, shard: int, path: str, payload: bytes) -> tuple[int, Any, str]:
        """POST the JSON bytes; returns (status, headers, body text). Raises one of :data:`_NET_ERRORS`."""
        if self._pools is not None:
            resp = await self._pools[shard].request("POST", self._urls[path], headers=self._post_headers,
                                                    content=payload, extensions=self._extensions)
            headers = _Headers(resp.headers)
            data = resp.content
            coding = headers.get("content-encoding")
            if coding:
                data = _decompress(coding, data)
            return resp.status, headers, data.decode(headers.charset(), "replace")
        r = await self._shards[shard].post(path, content=payload, headers={"Content-Type": "application/json"})
        return r.status_code, r.headers, r.text

    @contextlib.asynccontextmanager
    async def _open_stream(self, shard: int, path: str, payload: bytes) -> AsyncIterator[tuple[int, Any, Any]]:
        """Open a streaming POST: yields (status, headers, chunks) where ``chunks`` is an async iterator of decoded
        body bytes. Raises one of :data:`_NET_ERRORS`."""
        if self._pools is not None:
            async with self._pools[shard].stream("POST", self._urls[path], headers=self._post_headers,
                                                 content=payload, extensions=self._extensions) as resp:
                headers = _Headers(resp.headers)
                yield resp.status, headers, _decoded_chunks(headers.get("content-encoding"), resp.aiter_stream())
            return
        async with self._shards[shard].stream("POST", path, content=payload,
                                              headers={"Content-Type": "application/json"}) as r:
            yield r.status_code, r.headers, r.aiter_bytes()

    async def _attempt_on(self, shard: int, path: str, payload: bytes, *, stream: bool) -> _Attempt:
        try:
            if stream:
                return await self._attempt_stream(shard, path, payload)
            status, headers, text = await self._post(shard, path, payload)
        except _NET_ERRORS as exc:
            return self._exc(exc, 0)
        raw = self.redact(text) or ""
        if status != 200:
            return self._http_failure(status, headers, raw)
        try:
            data = json.loads(raw)
        except ValueError:
            return _Attempt("transport", status=200, error=f"HTTP 200 with a body that is not JSON: {raw[:120]!r}",
                            error_kind=ErrorKind.transport, raw=raw)
        if not isinstance(data, dict) or "error" in data:
            return _Attempt("transport", status=200, error=f"HTTP 200 carrying an error: {self.redact(_error_message(data))}"[:500],
                            error_kind=ErrorKind.transport, raw=raw)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return _Attempt("transport", status=200, error="HTTP 200 without choices", error_kind=ErrorKind.transport,
                            raw=raw)
        ch = choices[0]
        if ch.get("finish_reason") == "error" or ch.get("error"):  # OpenRouter: provider failed mid-generation
            return _Attempt("transport", status=200, error=f"HTTP 200 whose choice failed: "
                            f"{self.redact(_error_message(ch))}"[:500], error_kind=ErrorKind.transport, raw=raw)
        msg = ch.get("message") if isinstance(ch.get("message"), dict) else {}
        text = msg.get("content") if "message" in ch else ch.get("text")
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        return _Attempt("ok", text=self.redact(text) if isinstance(text, str) else None,
                        reasoning=reasoning if isinstance(reasoning, str) else None,
                        finish_reason=ch.get("finish_reason"), refusal=msg.get("refusal") or None,
                        usage=_usage_from(data.get("usage")), model_id=data.get("model"), status=200, raw=raw)

    async def _attempt_stream(self, shard: int, path: str, payload: bytes) -> _Attempt:
        received = 0
        lines: list[str] = []
        content: list[str] = []
        reasoning: list[str] = []
        finish = None
        refusal = None
        usage = None
        model_id = None
        done = False
        t0 = time.monotonic()
        try:
            async with self._open_stream(shard, path, payload) as (status, headers, chunks):
                if status != 200:
                    raw = b"".join([c async for c in chunks]).decode("utf-8", "replace")
                    return self._http_failure(status, headers, self.redact(raw) or "")
                async for line in _Lines(chunks):
                    received += len(line) + 1
                    lines.append(line)
                    if self.deadline_s is not None and time.monotonic() - t0 > self.deadline_s:
                        return _Attempt("model", status=200, error=f"stream still producing after {self.deadline_s}s",
                                        error_kind=ErrorKind.timeout, text=self.redact("".join(content)),
                                        raw=self.redact("\n".join(lines)), usage=usage)
                    if not line.startswith("data:"):
                        continue
                    event = line[5:].strip()
                    if event == "[DONE]":
                        done = True
                        break
                    try:
                        chunk = json.loads(event)
                    except ValueError:
                        return _Attempt("transport", status=200, error="malformed stream chunk (not JSON)",
                                        error_kind=ErrorKind.transport, raw=self.redact("\n".join(lines)))
                    if not isinstance(chunk, dict) or "error" in chunk:
                        return _Attempt("transport", status=200,
                                        error=f"error chunk inside a 200 stream: {self.redact(_error_message(chunk))}"[:500],
                                        error_kind=ErrorKind.transport, raw=self.redact("\n".join(lines)),
                                        usage=usage)
                    model_id = chunk.get("model") or model_id
                    if chunk.get("usage"):
                        usage = _usage_from(chunk["usage"])
                    for ch in chunk.get("choices") or []:
                        if not isinstance(ch, dict) or ch.get("index", 0) != 0:
                            continue
                        if ch.get("error"):
                            return _Attempt("transport", status=200, error="error inside a 200 stream's choice: "
                                            f"{self.redact(_error_message(ch))}"[:500],
                                            error_kind=ErrorKind.transport, raw=self.redact("\n".join(lines)),
                                            usage=usage)
                        delta = ch.get("delta") if isinstance(ch.get("delta"), dict) else {}
                        piece = delta.get("content") if "delta" in ch else ch.get("text")
                        if isinstance(piece, str):
                            content.append(piece)
                        rpiece = delta.get("reasoning_content") or delta.get("reasoning")
                        if isinstance(rpiece, str):
                            reasoning.append(rpiece)
                        if delta.get("refusal"):
                            refusal = (refusal or "") + str(delta["refusal"])
                        if ch.get("finish_reason"):
                            finish = ch["finish_reason"]
        except _NET_ERRORS as exc:
            if finish is None:
                return self._exc(exc, received)
            done = True  # the answer was complete; only the trailer was lost
        raw = self.redact("\n".join(lines))
        if finish == "error":
            return _Attempt("transport", status=200, error="stream ended with finish_reason 'error'",
                            error_kind=ErrorKind.transport, raw=raw, usage=usage)
        if not done and finish is None:
            return _Attempt("transport", status=200, error=f"stream ended after {received} bytes without "
                            "finish_reason or [DONE] (dropped stream)", error_kind=ErrorKind.transport, raw=raw,
                            usage=usage)
        return _Attempt("ok", text=self.redact("".join(content)), reasoning="".join(reasoning) or None,
                        finish_reason=finish, refusal=refusal, usage=usage, model_id=model_id, status=200, raw=raw)


class _AsyncioStream(httpcore.AsyncNetworkStream):
    """A plain-TCP connection for httpcore on an asyncio Protocol (see :class:`_AsyncioBackend`)."""

    def __init__(self, protocol: _Protocol):
        self._p = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._p
        if not p.buf and not p.eof:
            loop = asyncio.get_running_loop()
            p.waiter = fut = loop.create_future()
            timer = loop.call_later(timeout, _expire, fut) if timeout is not None else None
            try:
                await fut
            finally:
                p.waiter = None
                if timer is not None:
                    timer.cancel()
        buf = p.buf
        if buf:
            if len(buf) <= max_bytes:
                data = bytes(buf)
                buf.clear()
            else:
                data = bytes(buf[:max_bytes])
                del buf[:max_bytes]
            return data
        if p.exc is not None:
            raise httpcore.ReadError(f"{type(p.exc).__name__}: {p.exc}")
        return b""  # the peer closed the connection (httpcore turns this into the right protocol error)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        p = self._p
        if p.transport is None or p.transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        p.transport.write(buffer)
        if p.paused:  # the transport's buffer is over its high-water mark: wait until it drains
            loop = asyncio.get_running_loop()
            p.drain = fut = loop.create_future()
            timer = loop.call_later(timeout, _expire, fut, httpcore.WriteTimeout) if timeout is not None else None
            try:
                await fut
            finally:
                p.drain = None
                if timer is not None:
                    timer.cancel()
            if p.exc is not None or p.transport.is_closing():
                raise httpcore.WriteError("the connection closed while sending")

    async def aclose(self) -> None:
        if self._p.transport is not None:
            self._p.transport.close()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.UnsupportedProtocol("TLS endpoints use httpcore's own network backend")

    def get_extra_info(self, info: str) -> Any:
        p = self._p
        if info == "is_readable":  # an idle keep-alive connection the server wrote to or closed is not reused
            return bool(p.buf) or p.eof
        t = p.transport
        if t is None:
            return None
        return {"socket": t.get_extra_info("socket"), "client_addr": t.get_extra_info("sockname"),
                "server_addr": t.get_extra_info("peername")}.get(info)


def _expire(fut: asyncio.Future[None], kind: type[Exception] = httpcore.ReadTimeout) -> None:
    if not fut.done():
        fut.set_exception(kind("timed out"))


class _Protocol(asyncio.Protocol):
    """Buffers what arrives and wakes the one reader or writer waiting on it."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.eof = False
        self.exc: BaseException | None = None
        self.transport: Any = None
        self.waiter: asyncio.Future[None] | None = None
        self.drain: asyncio.Future[None] | None = None
        self.paused = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._wake("waiter")

    def eof_received(self) -> bool:
        self.eof = True
        self._wake("waiter")
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.eof = True
        self.exc = exc
        self._wake("waiter")
        self._wake("drain")

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake("drain")

    def _wake(self, name: str) -> None:
        fut = getattr(self, name)
        if fut is not None and not fut.done():
            fut.set_result(None)


class _AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend for plain-TCP endpoints on asyncio's Protocol/Transport, httpcore's documented
    extension point (``network_backend=``). httpcore's default (anyio) backend yields to the event loop and arms a
    timer on every read and write; at C=32 against a local server those extra event-loop rounds cost ~4% of the
    throughput. Here a read returns buffered bytes at once and arms its timeout only when it has to wait; a write
    only waits when the transport's buffer is full. TLS is not handled (https endpoints keep the anyio backend).

    Errors are httpcore's own (ConnectError, ConnectTimeout, ReadError, ReadTimeout, WriteError, WriteTimeout), so
    failure classification is the same on both backends.
    """

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                # happy eyeballs (RFC 8305, 250 ms) as anyio's connect_tcp does: "localhost" may name ::1 first
                transport, protocol = await loop.create_connection(
                    _Protocol, host, port, local_addr=(local_address, 0) if local_address else None,
                    happy_eyeballs_delay=0.25)
        except TimeoutError:
            raise httpcore.ConnectTimeout("timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        sock = transport.get_extra_info("socket")
        for option in socket_options or []:
            sock.setsockopt(*option)
        return _AsyncioStream(protocol)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.UnsupportedProtocol("unix sockets are not supported")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _Headers:
    """Case-insensitive read-only view of httpcore's ``[(name, value), …]`` response headers (bytes)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[tuple[bytes, bytes]]):
        self._items = items

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower().encode("ascii")
        for k, v in self._items:
            if k.lower() == key:
                return v.decode("latin-1")
        return default

    def charset(self) -> str:
        """The Content-Type charset when it names a known codec, else utf-8 (what httpx decodes ``.text`` with)."""
        ctype = self.get("content-type") or ""
        for param in ctype.split(";")[1:]:
            k, _, v = param.strip().partition("=")
            if k.lower() == "charset" and v:
                try:
                    return codecs.lookup(v.strip().strip('"')).name
                except LookupError:
                    break
        return "utf-8"


def _zlib_decoder(coding: str) -> Any:
    """A zlib decompressor for Content-Encoding gzip/deflate; None for identity. Raises httpcore.ProtocolError for
    a coding this client cannot decode (it asks for identity, so a server sending one has misbehaved)."""
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj()
    raise httpcore.RemoteProtocolError(f"unsupported Content-Encoding {coding!r}")


def _decompress(coding: str, data: bytes) -> bytes:
    d = _zlib_decoder(coding)
    if d is None:
        return data
    try:
        return d.decompress(data) + d.flush()
    except zlib.error as exc:
        raise httpcore.RemoteProtocolError(f"cannot decode Content-Encoding {coding!r}: {exc}") from None


class _Decoded:
    """Async iterator of a body's bytes with a gzip/deflate Content-Encoding removed (a class, not an async
    generator, so leaving it early leaves nothing suspended to finalise)."""

    def __init__(self, decoder: Any, coding: str, chunks: AsyncIterator[bytes]):
        self._d = decoder
        self._coding = coding
        self._chunks = chunks.__aiter__()

    def __aiter__(self) -> _Decoded:
        return self

    async def __anext__(self) -> bytes:
        while True:
            chunk = await self._chunks.__anext__()
            try:
                out = self._d.decompress(chunk)
            except zlib.error as exc:
                raise httpcore.RemoteProtocolError(f"cannot decode Content-Encoding {self._coding!r}: {exc}") from None
            if out:
                return out


def _decoded_chunks(coding: str | None, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` itself for identity; else a :class:`_Decoded` view. Raises httpcore.RemoteProtocolError for an
    unsupported coding."""
    d = _zlib_decoder(coding or "")
    return chunks if d is None else _Decoded(d, coding or "", chunks)


class _Lines:
    """Text lines of a byte stream, without their endings (``\\n``, ``\\r\\n`` or ``\\r``, also split across
    chunks), decoded as UTF-8 with replacement — as httpx's ``aiter_lines`` yields them; a last line without an
    ending comes at the end. (A class, not an async generator: see :class:`_Decoded`.)"""

    def __init__(self, chunks: AsyncIterator[bytes]):
        self._chunks = chunks.__aiter__()
        self._ready: list[str] = []
        self._next = 0
        self._pending = b""
        self._eof = False

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while self._next >= len(self._ready):
            if self._eof:
                raise StopAsyncIteration
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._eof = True
                self._ready, self._next = ([self._pending.rstrip(b"\r\n").decode("utf-8", "replace")]
                                           if self._pending else []), 0
                self._pending = b""
                continue
            data = self._pending + chunk if self._pending else chunk
            parts = data.splitlines(keepends=True)
            self._pending = b""
            last = len(parts) - 1
            ready = []
            for i, part in enumerate(parts):
                if part.endswith(b"\n") or (part.endswith(b"\r") and i < last):
                    ready.append(part.rstrip(b"\r\n").decode("utf-8", "replace"))
                else:  # no ending yet, or a \r that a \n in the next chunk may complete
                    self._pending = part
            self._ready, self._next = ready, 0
        line = self._ready[self._next]
        self._next += 1
        return line


def get_json(url: str, *, params: dict[str, Any] | None = None, timeout_s: float = 30.0,
             headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """Synchronous GET of a JSON resource (for non-LLM HTTP services such as Apertium APY; call it in a thread).

    Returns: ``(status, parsed JSON)``; the body is None when it is not JSON.
    Raises: ConnectionError (one line, no URL) when no response arrived (refused, reset, timeout).
    """
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)), trust_env=False,
                          follow_redirects=False, headers=headers) as client:
            resp = client.get(url, params=params)
    except httpx.HTTPError as exc:
        raise ConnectionError(f"{type(exc).__name__}: no response") from None
    try:
        body = resp.json()
    except ValueError:
        body = None
    return resp.status_code, body


__all__ = ["LLMRequest", "LLMResult", "LLMClient", "estimate_min_prompt_tokens", "detect_truncation",
           "infer_provider", "normalise_base_url", "parse_retry_after", "split_think", "get_json"]
