"""The one OpenAI-compatible HTTP client: pooling, bounded concurrency, retries, failure classification, usage.

Only this module (with :mod:`mtboard.http1`, its h11 connection layer for completions) speaks HTTP to model servers;
httpx serves the ``/models`` probe and :func:`get_json`. Runner backends and judges receive an :class:`LLMClient`.

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
import contextlib
import email.utils
import json
import math
import os
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore
import httpx

from mtboard import http1
from mtboard.errors import ConfigError
from mtboard.schema import ErrorKind, Usage

TRANSPORT_STATUSES = frozenset({408, 409, 425, 429})
"""Retried HTTP statuses below 500 (timeout, conflict, too early, rate limit); every 5xx is retried too."""
FATAL_STATUSES = frozenset({401, 403, 404})
"""Statuses that mean the whole run cannot work (bad key, no access, unknown model or path)."""
_NET_ERRORS = (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError, OSError)
"""What a request can raise when the service fails (:mod:`mtboard.http1` raises httpcore's classes, e.g.
ConnectError, ReadTimeout, RemoteProtocolError)."""
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
    no_event: bool = False  # a 200 stream that ended before any event (see LLMClient.complete)


def _base64_forms(secret: str) -> list[str]:
    """The parts of any base64 (standard or URL-safe) encoding of a text containing ``secret`` that depend on the
    secret alone, one per alignment (0, 1, 2 bytes before it): what an echoed ``Basic``/base64 copy would contain."""
    raw = secret.encode("utf-8")
    out = []
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + raw + b"\0\0").decode("ascii")
        start = -(-8 * k // 6)  # first character made of secret bits only
        end = (8 * (k + len(raw)) - 6) // 6  # last such character
        part = enc[start:end + 1]
        if len(part) >= 8:
            out += [part, part.replace("+", "-").replace("/", "_")]
    return out


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
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0..65535
    except ValueError:
        parts = parts._replace(scheme="")
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


def _encode(body: dict[str, Any]) -> bytes:
    """A request body as compact UTF-8 JSON. Raises ValueError for NaN/Infinity, TypeError for non-JSON values."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


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

    Raises: ConfigError for a base URL that is not http(s), a concurrency below 1, or an API key (after stripping
    surrounding whitespace) with a character an HTTP header cannot carry — the key is never echoed.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 5, backoff_base_s: float = 0.5, backoff_max_s: float = 30.0,
                 retry_after_max_s: float = 120.0, connect_timeout_s: float = 10.0, deadline_s: float | None = None):
        if concurrency < 1:
            raise ConfigError("concurrency must be at least 1", field="--concurrency")
        self.base_url = normalise_base_url(base_url)
        api_key = (api_key or "").strip() or None
        if api_key is not None and not all(" " < ch <= "~" for ch in api_key):  # the key itself is never echoed
            raise ConfigError("the API key contains a character that cannot be sent in an HTTP header (a space, "
                              "newline, control or non-ASCII character)",
                              field="API key (OPENAI_API_KEY / JUDGE_API_KEY)",
                              fix="export the key again without extra characters")
        self._api_key = api_key
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
        # an echoed base64 copy (of the key, or of a Basic header's user:password) is scrubbed too
        if self._api_key and len(self._api_key) >= 6:
            self._secrets += _base64_forms(self._api_key)
        if parts.password and len(parts.password) >= 6:
            self._secrets += _base64_forms(parts.password)
            self._secrets += _base64_forms(f"{unquote(parts.username or '')}:{unquote(parts.password)}")
        self._secrets.sort(key=len, reverse=True)  # longest first: a URL containing the key is removed whole
        self._sem = asyncio.Semaphore(concurrency)
        self._stream_sem: asyncio.Semaphore | None = None  # one stream at a time (llama-cpp-python: see probe)
        headers = {"Accept": "application/json", "User-Agent": "mtboard"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # One TLS context for both clients (building one reads the CA bundle: ~15 ms); plain-http endpoints (local
        # servers) need none. httpx's context honours SSL_CERT_FILE / SSL_CERT_DIR.
        https = self.base_url.startswith("https:")
        verify: Any = httpx.create_ssl_context() if https else False
        # /models probes go through httpx; no proxies from the environment (trust_env=False), no redirects.
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, follow_redirects=False, trust_env=False,
                                       verify=verify, timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
                                       limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
        # Completions, the hot path, go over h11 keep-alive connections (mtboard.http1: why, with measurements). The
        # JSON body is encoded once per request and reused by its retries.
        hdrs = [(k.encode("ascii"), v.encode("latin-1")) for k, v in headers.items()]
        if parts.username is not None:  # user:password@host: Basic auth, as httpx does for such URLs
            cred = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            hdrs = [h for h in hdrs if h[0] != b"Authorization"]
            hdrs.append((b"Authorization", b"Basic " + base64.b64encode(cred)))
        self._post_headers = hdrs + [(b"Content-Type", b"application/json"), (b"Accept-Encoding", b"identity")]
        self._pool = http1.ConnectionPool(self.base_url, ssl_context=verify if https else None,
                                          connect_timeout=connect_timeout_s, read_timeout=timeout_s,
                                          write_timeout=timeout_s, max_idle=concurrency)

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
        await self._pool.aclose()
        await self._http.aclose()

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
            if self.api_provider == "llama-cpp-python":
                # its server (default interrupt_requests) ends a running stream with [DONE] when another request
                # arrives, and it serves one request at a time anyway: streams go one after another
                self._stream_sem = asyncio.Semaphore(1)
                info["streams_serialised"] = True
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            info["error"] = self.redact(f"{type(exc).__name__}: {exc}")
            info["unreachable"] = True
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
            payload = _encode(body)
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
        stream = req.stream
        while True:
            attempt += 1
            async with self._sem:
                async with (self._stream_sem if stream and self._stream_sem is not None
                            else contextlib.nullcontext()):
                    t0 = time.monotonic()
                    att = await self._attempt(path, payload, stream=stream)
                    elapsed = time.monotonic() - t0
            busy += elapsed
            usage = _add_usage(usage, att.usage)
            entry = {"attempt": attempt, "status": att.status, "outcome": att.outcome, "error": att.error,
                     "elapsed_s": round(elapsed, 4), "retry_after_s": att.retry_after_s, "sleep_s": None,
                     "stream": stream}
            log.append(entry)
            if att.outcome != "transport" or attempt > self.max_retries:
                break
            if stream and att.no_event:
                # A 200 stream with no event at all (llama-cpp-python does this for a prompt longer than its
                # context): ask once more for the whole body, where the server can say why (e.g. HTTP 400
                # "exceed context window" → input_truncated). The result records the body actually sent.
                stream = False
                body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
                payload = _encode(body)
                entry["sleep_s"] = 0.0
                continue
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

    async def _post(self, path: str, payload: bytes) -> tuple[int, Any, str]:
        """POST the JSON bytes; returns (status, headers, body text). Raises one of :data:`_NET_ERRORS`."""
        status, headers, data = await self._pool.request("POST", path, self._post_headers, payload)
        data = http1.decompress(headers.get("content-encoding"), data)
        return status, headers, data.decode(headers.charset(), "replace")

    @contextlib.asynccontextmanager
    async def _open_stream(self, path: str, payload: bytes) -> AsyncIterator[tuple[int, Any, Any]]:
        """Open a streaming POST: yields (status, headers, chunks) where ``chunks`` is an async iterator of decoded
        body bytes. Raises one of :data:`_NET_ERRORS`."""
        async with self._pool.stream("POST", path, self._post_headers, payload) as (status, headers, pieces):
            yield status, headers, http1.decoded_chunks(headers.get("content-encoding"), pieces)

    async def _attempt(self, path: str, payload: bytes, *, stream: bool) -> _Attempt:
        try:
            if stream:
                return await self._attempt_stream(path, payload)
            status, headers, text = await self._post(path, payload)
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

    async def _attempt_stream(self, path: str, payload: bytes) -> _Attempt:
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
            async with self._open_stream(path, payload) as (status, headers, chunks):
                if status != 200:
                    raw = b"".join([c async for c in chunks]).decode("utf-8", "replace")
                    return self._http_failure(status, headers, self.redact(raw) or "")
                async for line in http1.Lines(chunks):
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
                    if isinstance(chunk.get("model"), str) and chunk["model"]:
                        model_id = chunk["model"]
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
                            usage=usage, no_event=not any(line.startswith("data:") for line in lines))
        if finish is None:  # e.g. llama-cpp-python's server interrupting a stream when another request arrives
            return _Attempt("transport", status=200, error=f"stream ended by [DONE] without a finish_reason after "
                            f"{received} bytes (interrupted answer)", error_kind=ErrorKind.transport, raw=raw,
                            usage=usage)
        return _Attempt("ok", text=self.redact("".join(content)), reasoning=self.redact("".join(reasoning)) or None,
                        finish_reason=finish, refusal=self.redact(refusal), usage=usage, model_id=self.redact(model_id),
                        status=200, raw=raw)


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
