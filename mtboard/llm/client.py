"""The OpenAI-compatible client: bounded concurrency, retries with backoff, secrets kept out of everything returned.

:class:`LLMClient` sends an :class:`LLMRequest` through :mod:`mtboard.llm.transport` (httpx), reads the answer with
:mod:`mtboard.llm.shapes` and applies :mod:`mtboard.llm.policy`; runner backends and judges receive one.

What was learnt from real servers and kept here:

* llama-cpp-python's server ends a running stream with ``[DONE]`` (no ``finish_reason``) when another request
  arrives; it serves one request at a time anyway, so streams to it go one after another (:meth:`LLMClient.probe`
  recognises it), and such an interrupted stream is a transport failure, retried.
* The same server answers a streamed prompt longer than its context with an empty 200 stream; the request is asked
  once more without streaming, where the server says why (HTTP 400 "exceed context window" → ``input_truncated``).
* Retries wait ``Retry-After`` / ``retry-after-ms`` when the server sends one, else full-jitter exponential backoff.
* Rate limits announced in headers (``Retry-After``, ``x-ratelimit-reset-requests: 1m30s``, Anthropic's reset
  times; :func:`mtboard.llm.policy.rate_limit_wait`) and HTTP 529 hold back every request of the client until the
  limit resets; they are not counted as retries, so a sustained limit slows a run down (up to
  ``rate_limit_deadline_s`` per request) instead of failing it.
* Some servers ignore ``stop`` (llama.cpp has, with a few-shot completion prompt: ``Hola mundo.\\nEnglish: X``): the
  client cuts every answer at the request's stop sequences itself (:func:`mtboard.llm.policy.apply_stop`) and says
  so (:attr:`LLMResult.stop_cut`, with the server's text in :attr:`LLMResult.uncut_text` and ``raw_response``).

Secrets: the API key is sent only in the ``Authorization`` header; nothing this module returns contains it, nor the
base URL or a password in it, nor a base64 copy of any of them (every string from the server or an exception is
scrubbed); :attr:`LLMResult.raw_request` is the JSON body only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from httpx_sse import EventSource, SSEError

from mtboard import __version__
from mtboard.core.decoding import ServerText, answer_text, clean, clean_json
from mtboard.core.errors import ConfigError
from mtboard.llm import policy, serverinfo, shapes, transport
from mtboard.llm.policy import Verdict
from mtboard.core.schema import ErrorKind, Usage


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
    source: str | None = None
    """The text being translated (never sent; the prompt carries it): a reasoning marker that also occurs in it is
    text to translate, not reasoning (:func:`mtboard.llm.policy.split_think`, issue 33). None (a judge, a probe):
    every reasoning format applies."""

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

    def stop_sequences(self) -> list[str]:
        """The stop sequences sent (``extra["stop"]``: a string or a list of strings), applied again to every answer
        (:meth:`LLMClient.complete`)."""
        stop = self.extra.get("stop")
        if isinstance(stop, str):
            return [stop]
        if isinstance(stop, (list, tuple)):
            return [s for s in stop if isinstance(s, str)]
        return []

    def prompt_texts(self) -> list[str]:
        """The texts sent (message contents or the prompt), for the truncation estimate."""
        return [m.get("content") or "" for m in self.messages] if self.messages is not None else [self.prompt or ""]


PROBE_TRY_S = 15.0
"""Seconds one ``GET /models`` of :meth:`LLMClient.probe` may take before it is asked again."""


@dataclass
class LLMResult(ServerText):
    """Outcome of one request after retries. ``text`` is the visible content (None if none arrived).

    Every ``str`` field a record or a card may copy (``text``, ``reasoning``, ``raw_text``, ``uncut_text``,
    ``error``, ``model_id``, ``finish_reason``, ``stop_cut``) passes :func:`mtboard.core.decoding.clean` whenever
    set (:class:`~mtboard.core.decoding.ServerText`): no lone surrogate from any server answer (an error body's
    undecodable byte included) reaches a record. ``raw_response`` is the one exception: it keeps what was received
    (escaped bytes as U+DC80–U+DCFF; written by :func:`mtboard.core.decoding.json_line`).

    Reasoning sent apart (``reasoning_content``, ``reasoning``, thinking parts) and a closed reasoning block in the
    text (``<think>…</think>``, Harmony ``analysis``, ``[THINK]`` …: :mod:`mtboard.core.reasoning`) are in
    ``reasoning``; everything received is in ``raw_response``. ``error``/``error_kind`` are set for every failure
    (the policy table in :mod:`mtboard.llm`).
    """

    SERVER_TEXT = frozenset({"text", "finish_reason", "reasoning", "raw_text", "error", "model_id", "stop_cut",
                             "uncut_text"})

    text: str | None
    finish_reason: str | None = None
    reasoning: str | None = None
    raw_text: str | None = None
    """The answer's content as the server sent it (reasoning markup included; None after a transport failure),
    made text at the one boundary (lone surrogates and bytes that are not UTF-8 as U+FFFD, :attr:`text_repairs`;
    ``raw_response`` keeps the bytes): what a translation card keeps as ``raw_predicted`` (the mechanical policy
    strips and flags)."""
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    error_kind: ErrorKind | None = None
    attempts: int = 1
    """Exchanges that count as attempts: every one except rate-limited answers (those are waited out, not retried;
    ``attempt_log`` lists every exchange, rate-limited ones with ``rate_limited``), at least 1 once anything was
    sent; 0 when nothing could be sent. ``attempts - 1`` are the retries a card's ``totals.retries`` sums."""
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
    stop_cut: str | None = None
    """The stop sequence at which the client cut ``text`` because the server ran past it (None: nothing cut)."""
    uncut_text: str | None = None
    """The visible text as the server sent it, before that cut (only with ``stop_cut``)."""
    rate_limit_waits: list[list[float]] = field(default_factory=list)
    """Wall-clock ``[start, end]`` intervals (epoch seconds) this request waited because of rate limits (its own or
    another request's: the client holds every request back while a limit lasts)."""
    text_repairs: int = 0
    """Characters of the last attempt's answer (content, reasoning and refusal together) that
    :func:`mtboard.core.decoding.answer_text` replaced by U+FFFD: lone surrogates and bytes that are not UTF-8 even
    after the stream's fragments were joined (0: nothing replaced). ``raw_response`` keeps what was received."""

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def retries(self) -> int:
        """Attempts beyond the first."""
        return max(0, self.attempts - 1)


@dataclass
class _Attempt:
    """One HTTP exchange and its verdict."""

    verdict: Verdict
    status: int | None = None
    answer: shapes.Answer | None = None
    raw: str | None = None
    empty_stream: bool = False
    """A 200 stream that ended before any event (see :meth:`LLMClient.complete`)."""
    unrequested_stream: bool = False
    """An event stream that answered a request sent without ``"stream": true``, read as a stream (by content)."""
    unrequested_json: bool = False
    """A JSON body that answered a request sent with ``"stream": true``, read as JSON (by content, whatever its
    Content-Type)."""

    @property
    def outcome(self) -> str:
        return self.verdict.outcome


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


def _encode(body: dict[str, Any]) -> bytes:
    """A request body as compact UTF-8 JSON. Raises ValueError for NaN/Infinity, TypeError for non-JSON values."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _add_usage(a: Usage, b: Usage | None) -> Usage:
    """``a + b``; ``reported`` becomes True once any attempt's answer carried usage (``b`` not None)."""
    if b is None:
        return a
    return Usage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                 completion_tokens=a.completion_tokens + b.completion_tokens,
                 reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
                 cached_tokens=a.cached_tokens + b.cached_tokens, reported=True)


@dataclass
class _Exchange:
    """One request's attempts so far (:meth:`LLMClient.complete`): the body actually sent and its encoding, whether
    it streams, usage summed over attempts, the attempt log, rate-limit waits ``[start, end]`` (epoch seconds), the
    summed attempt durations (s), the last attempt, and the counters of the retry policy."""

    body: dict[str, Any]
    path: str
    payload: bytes
    stream: bool
    usage: Usage = field(default_factory=lambda: Usage(reported=False))
    """Until an answer carries usage: then the provider's cost is unknown, not $0."""
    log: list[dict[str, Any]] = field(default_factory=list)
    waits: list[list[float]] = field(default_factory=list)
    busy: float = 0.0
    att: _Attempt | None = None
    attempt: int = 0
    failures: int = 0
    """Transport failures that count against ``max_retries`` (rate limits do not)."""
    limited: int = 0
    limited_since: float | None = None
    gave_up: str | None = None


def _exchange_for(req: LLMRequest) -> _Exchange | LLMResult:
    """The request's body, encoded once and reused by every attempt; or, when it does not encode, the fatal
    ``backend`` result (0 attempts): a configuration error, NaN/Infinity or a non-JSON value in the body."""
    try:
        body = req.body()
        path = req.path
        payload = _encode(body)  # encoded once, reused by every attempt
    except ConfigError as exc:
        return LLMResult(text=None, error=exc.one_line(), error_kind=ErrorKind.backend, attempts=0, fatal=True)
    except (TypeError, ValueError) as exc:  # NaN/Infinity or a non-JSON value in the body
        return LLMResult(text=None, error=f"request body is not JSON: {exc}"[:300], error_kind=ErrorKind.backend,
                         attempts=0, fatal=True)
    return _Exchange(body=body, path=path, payload=payload, stream=req.stream)


class LLMClient:
    """Async OpenAI-compatible client. ``await client.complete(LLMRequest(...)) -> LLMResult``; never raises for
    per-request failures. Construct with :meth:`from_env` (``OPENAI_BASE_URL``/``OPENAI_API_KEY`` or the
    ``JUDGE_`` variants) or explicitly. Use as ``async with``.

    Args:
        base_url: endpoint ending in ``/v1`` (a bare ``http://host:port`` gets ``/v1`` appended).
        api_key: sent as ``Authorization: Bearer``; None for local servers.
        concurrency: requests in flight at once (a semaphore); connection pools of
            :data:`~mtboard.llm.transport.LANES_PER_POOL` lanes each (plus one connection for the probe).
        timeout_s: read timeout per request (seconds, between two pieces of an answer); a timeout before the
            answer is complete is a transport failure.
        max_retries: transport-failure retries beyond the first attempt.
        backoff_base_s / backoff_max_s: full-jitter exponential backoff ``U(0, min(max, base·2^(n-1)))``.
        retry_after_max_s: longest single wait honoured (a longer announced wait is capped; the request asks again
            after this long).
        rate_limit_deadline_s: how long one request may keep being rate-limited (429, 529, 503 with a wait) before
            it fails as ``transport``; rate-limited attempts do not count against ``max_retries``, so sustained
            limits slow the run down instead of failing it.
        connect_timeout_s: TCP (+ TLS, + proxy) connect timeout.
        deadline_s: total time a streaming attempt may keep producing before it is a model ``timeout`` (None: off).
        trust_env: read proxies and CA bundles from the environment (:mod:`mtboard.llm.transport`); False for
            servers mtboard starts itself on loopback.
        http2: HTTP/2 for https endpoints; None = when the ``h2`` package is installed.
        uds: connect to this Unix socket instead of the base URL's host (a sandboxed local server,
            :mod:`mtboard.backends.local.sandbox`); the URL's path still applies.

    Raises: ConfigError for a base URL that is not http(s), a concurrency below 1, an API key (after stripping
    surrounding whitespace) with a character an HTTP header cannot carry — the key is never echoed — or a proxy
    environment that cannot be used.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 5, backoff_base_s: float = 0.5, backoff_max_s: float = 30.0,
                 retry_after_max_s: float = 120.0, connect_timeout_s: float = 10.0, deadline_s: float | None = None,
                 trust_env: bool = True, http2: bool | None = None, rate_limit_deadline_s: float = 900.0,
                 uds: str | None = None):
        if concurrency < 1:
            raise ConfigError("concurrency must be at least 1", field="--concurrency")
        self.base_url = transport.normalise_base_url(base_url)
        self._trust_env = trust_env
        self.probe_patience_s: float | None = None
        """How long :meth:`probe` keeps asking a server whose ``/models`` times out (None: ``timeout_s``)."""
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
        self.rate_limit_deadline_s = rate_limit_deadline_s
        self._gate_until = 0.0
        """Monotonic time before which no request is sent: the end of the longest wait a rate limit announced."""
        self.rate_limited_responses = 0
        """Rate-limited answers received (429, 529, 503 announcing a wait), all requests together."""
        self.rate_limit_paused_s = 0.0
        """Wall-clock seconds the client held requests back because of rate limits (the union of the waits)."""
        self.deadline_s = deadline_s
        self.api_provider = transport.infer_provider(self.base_url)
        self.server_info: dict[str, Any] = {}
        self.identity = serverinfo.ServerIdentity(provider=self.api_provider)
        """What the server reported about itself and its model (filled by :meth:`probe`)."""
        self._secrets = [s for s in {self._api_key, self.base_url, base_url.strip()} if s and len(s) >= 4]
        parts = urlsplit(self.base_url)
        if parts.password:
            self._secrets += [parts.password, unquote(parts.password)]
        # an echoed base64 copy (of the key, or of a Basic header's user:password) is scrubbed too
        if self._api_key and len(self._api_key) >= 6:
            self._secrets += _base64_forms(self._api_key)
        if parts.password and len(parts.password) >= 6:
            self._secrets += _base64_forms(unquote(parts.password))
            self._secrets += _base64_forms(f"{unquote(parts.username or '')}:{unquote(parts.password)}")
        self._secrets = sorted(set(self._secrets), key=len, reverse=True)  # longest first: a URL holding the key
        self._sem = asyncio.Semaphore(concurrency)
        self._stream_sem: asyncio.Semaphore | None = None  # one stream at a time (llama-cpp-python: see probe)
        headers = {"Accept": "application/json", "Content-Type": "application/json",
                   "User-Agent": f"mtboard/{__version__}",
                   # identity: the raw record is what was sent, and a compressed stream would be buffered by
                   # proxies; a server compressing anyway is still decoded
                   "Accept-Encoding": "identity"}
        if self._api_key and parts.username is None:  # user:password@host wins (Basic auth), as curl does
            headers["Authorization"] = f"Bearer {self._api_key}"
        tls = transport.ssl_context(trust_env)
        self._pools = transport.Pools(concurrency, lambda connections: transport.async_client(
            self.base_url, headers=headers, timeout_s=timeout_s, connect_timeout_s=connect_timeout_s,
            connections=connections, trust_env=trust_env, http2=http2, verify=tls, uds=uds))
        self._http = self._pools.first
        # absolute URLs built once: httpx would re-parse and merge the base URL on every request
        base = self._http.base_url
        self._urls = {p: base.copy_with(raw_path=base.raw_path + p.lstrip("/").encode("ascii"))
                      for p in ("/chat/completions", "/completions")}

    # ---------------------------------------------------------------------------------------------------------------
    @classmethod
    def from_env(cls, prefix: str = "OPENAI", base_url: str | None = None, *, default_base_url: str | None = None,
                 **kwargs: Any) -> LLMClient:
        """Build from ``base_url``, else ``{prefix}_BASE_URL``, else ``default_base_url``; the key only from
        ``{prefix}_API_KEY`` (environment).

        Raises: ConfigError when no base URL is known.
        """
        url = base_url or os.environ.get(f"{prefix}_BASE_URL") or default_base_url
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
        await self._pools.aclose()

    def redact(self, text: str | None) -> str | None:
        """Remove the API key and the base URL (and their base64 forms) from a string that came from the network or
        an exception."""
        if text is None:
            return None
        for s in self._secrets:
            if s in text:
                text = text.replace(s, "[REDACTED]")
        return text

    async def probe(self, model: str | None = None) -> dict[str, Any]:
        """GET ``/models`` once and refine :attr:`api_provider` from what the server says about itself
        (``Server: llama.cpp`` or ``owned_by: llamacpp`` → llama.cpp; ``owned_by: vllm`` → vllm; llama-cpp-python's
        ``owned_by: me`` with a uvicorn server → llama-cpp-python; port 11434 or ``owned_by: library`` confirmed by
        ``/api/version`` → ollama); then ask that server what it serves (llama.cpp ``/props``, llama-cpp-python's
        ``/openapi.json``, Ollama ``/api/show`` and ``/api/tags``, vLLM ``/version``) and keep it in
        :attr:`identity` (:class:`~mtboard.llm.serverinfo.ServerIdentity`; ``model`` is the name requests will use).
        Never raises; returns what it learned (``unreachable`` when no connection could be made;
        ``identity_unanswered`` when ``/models`` never answered: see :meth:`_models_patiently`)."""
        info: dict[str, Any] = {}
        ident = serverinfo.ServerIdentity()
        try:
            resp = await self._models_patiently(info)
            if resp is None:  # asked until the deadline; the server never answered: identity unknown, said so
                ident.provider = self.api_provider
                self.identity = ident
                self.server_info = info
                return info
            server = resp.headers.get("server", "").lower()
            info["server"] = server or None
            info["http_version"] = resp.http_version
            owned = None
            items: list[dict[str, Any]] = []
            if resp.status_code == 200:
                items = serverinfo.model_list(clean_json(resp.json()))
                if items:
                    owned = str(items[0].get("owned_by") or "").lower() or None
                    info["models"] = [self.redact(str(i.get("id"))) for i in items]
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
            ident.model_ids = [str(i) for i in info.get("models", [])]
            ident.served = serverinfo.pick_served(ident.model_ids, model)
            item = next((i for i in items if self.redact(str(i.get("id"))) == ident.served), None)
            await self._describe_server(ident, item, model, owned)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.ProxyError) as exc:
            info["error"] = self.redact(f"{type(exc).__name__}: {exc}")
            info["unreachable"] = True
            problem, fix = policy.connect_failure(exc, self.base_url, trust_env=self._trust_env)
            info["unreachable_problem"], info["unreachable_fix"] = self.redact(problem), fix
        except (httpx.HTTPError, ValueError) as exc:
            info["error"] = self.redact(f"{type(exc).__name__}: {exc}")
        ident.provider = self.api_provider
        self.identity = ident
        self.server_info = info
        return info

    async def _models_patiently(self, info: dict[str, Any]) -> httpx.Response | None:
        """GET ``/models``, asking again while it times out: a single-slot server (llama-cpp-python, a busy
        llama.cpp) does not answer while it generates — right after a Ctrl-C it still works through the requests of
        the stopped run. Each try waits :data:`PROBE_TRY_S`; between tries a backoff of 1, 2, 4 … up to
        :data:`PROBE_TRY_S` seconds; the tries end after :attr:`probe_patience_s` (default: the client's
        ``timeout_s``, the time a completion request would wait for that server anyway). Returns the response, or
        None when no try answered (``info`` then has ``identity_unanswered``, ``probe_tries``, ``probe_waited_s``
        and ``error``). A refused connection is not waited for: the connect errors propagate."""
        t0 = time.monotonic()
        patience = self.timeout_s if self.probe_patience_s is None else self.probe_patience_s
        tries, pause = 0, 1.0
        while True:
            tries += 1
            try:
                resp = await self._http.get("/models", timeout=min(self.timeout_s, PROBE_TRY_S))
                if tries > 1:
                    info["probe_tries"] = tries
                return resp
            except httpx.ConnectTimeout:
                raise
            except httpx.TimeoutException as exc:
                waited = time.monotonic() - t0
                if waited + pause > patience:
                    info.update(identity_unanswered=True, probe_tries=tries, probe_waited_s=round(waited, 1),
                                error=self.redact(f"GET /models did not answer in {tries} tries over {waited:.0f} s "
                                                  f"({type(exc).__name__})"))
                    return None
                await asyncio.sleep(pause)
                pause = min(pause * 2, PROBE_TRY_S)

    async def _root_json(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """GET (or POST ``body`` to) ``path`` relative to the server's root (the base URL without its ``/v1``);
        the parsed JSON of a 200 answer, else None. Never raises."""
        base = self._http.base_url
        raw = base.raw_path
        root = raw[: -len(b"v1/")] if raw.endswith(b"/v1/") else raw
        url = base.copy_with(raw_path=root + path.encode("ascii"))
        try:
            timeout = min(self.timeout_s, 10.0)
            resp = await (self._http.get(url, timeout=timeout) if body is None else
                          self._http.post(url, content=_encode(body), timeout=timeout))
            if resp.status_code != 200:
                return None
            return clean_json(transport.json_body(self.redact(transport.response_text(resp, "replace")) or "null"))
        except (httpx.HTTPError, ValueError):
            return None

    async def _describe_server(self, ident: serverinfo.ServerIdentity, item: dict[str, Any] | None,
                               model: str | None, owned: str | None) -> None:
        """Fill ``ident`` from the server's own endpoints (the table in :mod:`mtboard.llm.serverinfo`)."""
        provider = self.api_provider
        if provider == "ollama" or owned == "library":
            version = await self._root_json("api/version")
            if isinstance(version, dict) and isinstance(version.get("version"), str):
                self.api_provider = provider = "ollama"
                ident.engine = f"ollama {version['version']}"
        path, name, revision = serverinfo.weights_from_models(provider, ident.served, item)
        if provider == "llama.cpp":
            props = await self._root_json("props")
            props_path, ident.engine = serverinfo.llama_cpp_props(props)
            ident.chat_template = serverinfo.props_chat_template(props)
            if props_path:
                path, name = props_path, serverinfo.basename(props_path)
        elif provider == "llama-cpp-python":
            v = serverinfo.openapi_version(await self._root_json("openapi.json"))
            ident.engine = f"llama-cpp-python {v}" if v else None
        elif provider == "vllm":
            v = await self._root_json("version")
            if isinstance(v, dict) and isinstance(v.get("version"), str):
                ident.engine = f"vllm {v['version']}"
        elif provider == "ollama" and (ident.served or model):
            tag = ident.served or str(model)
            shown = await self._root_json("api/show", {"model": tag})
            ident.weights_sha256, ident.family = serverinfo.ollama_show(shown)
            ident.architecture, ident.base_name = serverinfo.ollama_model_info(shown)
            ident.chat_template = serverinfo.ollama_chat_template(shown)
            revision = serverinfo.ollama_digest(await self._root_json("api/tags"), tag)
            name = name or tag
        ident.weights_path, ident.weights_name, ident.revision = path, name, revision

    # ---------------------------------------------------------------------------------------------------------------
    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        jittered = random.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))
        if retry_after is not None:
            wait = min(retry_after, self.retry_after_max_s)
            return wait + random.uniform(0.0, 0.1 * wait + 0.05)
        return jittered

    def _rate_limit_wait(self, n: int, announced: float | None) -> float:
        """The wait after the ``n``-th rate-limited answer to one request: what the server announced (capped at
        ``retry_after_max_s``), else an exponential backoff that keeps growing to ``backoff_max_s`` (half fixed,
        half jitter, so the pause really grows)."""
        if announced is not None:
            return min(announced, self.retry_after_max_s)
        cap = min(self.backoff_max_s, self.backoff_base_s * 2 ** (n - 1))
        return cap / 2 + random.uniform(0.0, cap / 2)

    def _close_gate(self, wait: float) -> None:
        """Hold every request of this client back for ``wait`` seconds (counted once in
        :attr:`rate_limit_paused_s` however many requests wait)."""
        now = time.monotonic()
        until = now + wait
        if until > self._gate_until:
            self.rate_limit_paused_s += until - max(self._gate_until, now)
            self._gate_until = until

    async def _through_gate(self, waits: list[list[float]]) -> None:
        """Sleep while the rate-limit gate is closed (plus a little jitter, so requests do not all return at once);
        the wall-clock interval slept is appended to ``waits``."""
        while True:
            left = self._gate_until - time.monotonic()
            if left <= 0:
                return
            t0 = time.time()
            await asyncio.sleep(left + random.uniform(0.0, min(1.0, 0.1 * left) + 0.01))
            waits.append([round(t0, 3), round(time.time(), 3)])

    async def complete(self, req: LLMRequest) -> LLMResult:
        """Send one request with retries; classify the outcome (policy table in :mod:`mtboard.llm`). Never raises
        for request failures.

        Transport failures are retried up to ``max_retries`` times. Rate limits (429, 529, a 503 announcing a wait)
        are not retries: the announced wait (:func:`mtboard.llm.policy.rate_limit_wait`) — or a growing backoff
        when none is announced — closes a gate that holds back every request of this client, and the request asks
        again, until it has been rate-limited for ``rate_limit_deadline_s``.

        Phases: encode the body once (:func:`_exchange_for`; a body that does not encode is a fatal ``backend``
        failure with 0 attempts), then send (:meth:`_send`) and decide whether to ask again (:meth:`_ask_again`)
        until an attempt is not a transport failure or the retries or the rate-limit deadline are spent, then the
        result of the last attempt (:meth:`_result`).

        Returns: LLMResult with usage summed over attempts and ``latency_s`` = the summed duration of the attempts
        (queueing and backoff sleeps excluded); ``rate_limit_waits`` lists the wall-clock intervals it waited.
        """
        ex = _exchange_for(req)
        if isinstance(ex, LLMResult):
            return ex
        while True:
            entry = await self._send(req, ex)
            if not await self._ask_again(ex, entry):
                break
        return self._result(ex)

    async def _send(self, req: LLMRequest, ex: _Exchange) -> dict[str, Any]:
        """One attempt of ``ex``: through the rate-limit gate and the concurrency limits (and the streaming limit
        for a stream), then the exchange; its duration, usage and log entry are added to ``ex``. Returns the log
        entry (``sleep_s`` None until :meth:`_ask_again` decides)."""
        ex.attempt += 1
        await self._through_gate(ex.waits)
        async with self._sem:
            async with (self._stream_sem if ex.stream and self._stream_sem is not None
                        else contextlib.nullcontext()):
                t0 = time.monotonic()
                ex.att = await self._attempt(req, ex.path, ex.payload, stream=ex.stream)
                elapsed = time.monotonic() - t0
        ex.busy += elapsed
        ex.usage = _add_usage(ex.usage, ex.att.answer.usage if ex.att.answer is not None else None)
        v = ex.att.verdict
        entry = {"attempt": ex.attempt, "status": ex.att.status, "outcome": v.outcome, "error": v.error,
                 "elapsed_s": round(elapsed, 4), "retry_after_s": v.retry_after_s, "sleep_s": None,
                 "stream": ex.stream}
        if ex.att.unrequested_stream:
            entry["unrequested_stream"] = True
        if ex.att.unrequested_json:
            entry["unrequested_json"] = True
        ex.log.append(entry)
        return entry

    async def _ask_again(self, ex: _Exchange, entry: dict[str, Any]) -> bool:
        """After an attempt: False when it was not a transport failure, the rate-limit deadline would pass, or the
        transport failures pass ``max_retries``. Else True, after closing the rate-limit gate (rate limited),
        dropping streaming (a 200 stream with no event: the next attempt asks for the whole body, where the server
        can say why) or sleeping the backoff (:meth:`_backoff`); ``entry['sleep_s']`` records the wait."""
        assert ex.att is not None
        v = ex.att.verdict
        if v.outcome != "transport":
            return False
        if v.rate_limited:
            return self._wait_out_rate_limit(ex, entry)
        ex.failures += 1
        if ex.failures > self.max_retries:
            return False
        if ex.stream and ex.att.empty_stream:
            # A 200 stream with no event at all (llama-cpp-python does this for a prompt longer than its
            # context): ask once more for the whole body, where the server can say why (e.g. HTTP 400
            # "exceed context window" → input_truncated). The result records the body actually sent.
            ex.stream = False
            ex.body = {k: val for k, val in ex.body.items() if k not in ("stream", "stream_options")}
            ex.payload = _encode(ex.body)
            entry["sleep_s"] = 0.0
            return True
        delay = self._backoff(ex.failures, v.retry_after_s)
        entry["sleep_s"] = round(delay, 4)
        t_sleep = time.time()
        await asyncio.sleep(delay)
        if v.retry_after_s is not None:
            ex.waits.append([round(t_sleep, 3), round(time.time(), 3)])
        return True

    def _wait_out_rate_limit(self, ex: _Exchange, entry: dict[str, Any]) -> bool:
        """A rate-limited attempt (not a retry): count it, and close the gate for the announced wait (or a growing
        backoff, :meth:`_rate_limit_wait`) — unless that wait would pass ``rate_limit_deadline_s`` counted from the
        request's first rate-limited answer: then record why in ``ex.gave_up`` and return False."""
        assert ex.att is not None
        v = ex.att.verdict
        entry["rate_limited"] = True
        self.rate_limited_responses += 1
        ex.limited += 1
        now = time.monotonic()
        ex.limited_since = now if ex.limited_since is None else ex.limited_since
        wait = self._rate_limit_wait(ex.limited, v.retry_after_s)
        spent = now - ex.limited_since
        if spent + wait > self.rate_limit_deadline_s:
            ex.gave_up = (f"rate limited for {spent:.0f} s ({ex.limited} answers); the next wait of {wait:.1f} s "
                          f"would pass the rate-limit deadline of {self.rate_limit_deadline_s:g} s")
            return False
        entry["sleep_s"] = round(wait, 4)
        self._close_gate(wait)
        return True

    @staticmethod
    def _result(ex: _Exchange) -> LLMResult:
        """The request's result from its last attempt: ``attempts`` counts the attempts that were not rate limited
        (at least 1); a transport failure never keeps partial text, and its error says after how many attempts (or
        why the rate-limit deadline ended it)."""
        att = ex.att
        assert att is not None
        v = att.verdict
        ans = att.answer
        result = LLMResult(text=v.text, finish_reason=ans.finish_reason if ans else None, reasoning=v.reasoning,
                           raw_text=ans.text if ans is not None and v.text is not None else None,
                           usage=ex.usage, attempts=max(1, ex.attempt - ex.limited), latency_s=ex.busy,
                           model_id=ans.model_id if ans else None,
                           raw_request=ex.body, raw_response=att.raw, attempt_log=ex.log, status_code=att.status,
                           fatal=v.fatal, stop_cut=ans.stop_cut if ans else None,
                           uncut_text=ans.uncut_text if ans else None, rate_limit_waits=ex.waits,
                           text_repairs=ans.repairs if ans else 0)
        if v.outcome != "ok":
            # an error message may quote the server's body (escaped bytes, lone surrogates): text only
            result.error, result.error_kind = clean(v.error), v.error_kind
            if v.outcome == "transport":
                result.text = result.raw_text = None  # a failed exchange is never partial success
                if ex.gave_up is not None:
                    result.error = f"{v.error} ({ex.gave_up})"[:600]
                elif ex.attempt > 1:
                    result.error = f"{v.error} (after {ex.attempt} attempts)"
        return result

    # ---------------------------------------------------------------------------------------------------------------
    @staticmethod
    def _repair(ans: shapes.Answer) -> None:
        """The one boundary (:func:`mtboard.core.decoding.answer_text`): the answer's content, reasoning and refusal
        (each the join of its stream fragments, code unit by code unit) become text; the U+FFFD inserted are counted
        in ``ans.repairs``. The server's other strings (model name, finish reason, problem) are made text too."""
        repairs = 0
        if ans.text is not None:
            ans.text, n = answer_text((ans.text,))
            repairs += n
        ans.reasoning, n = answer_text((ans.reasoning,))
        repairs += n
        ans.refusal, n = answer_text((ans.refusal,))
        ans.repairs = repairs + n
        ans.model_id, ans.finish_reason, ans.problem = clean(ans.model_id), clean(ans.finish_reason), clean(ans.problem)

    def _judge(self, req: LLMRequest, ans: shapes.Answer) -> Verdict:
        """Make the answer text (:meth:`_repair`), scrub what came from the server, apply the request's stop
        sequences (a server may ignore them: llama.cpp has), then the policy."""
        self._repair(ans)
        ans.text = self.redact(ans.text)
        stops = req.stop_sequences()
        if stops and ans.text:
            cut, hit = policy.apply_stop(ans.text, stops)
            if hit is not None:
                ans.uncut_text, ans.stop_cut, ans.text = ans.text, hit, cut
        ans.reasoning = self.redact(ans.reasoning) or ""
        ans.refusal = self.redact(ans.refusal) or ""
        ans.model_id = self.redact(ans.model_id)
        ans.problem = self.redact(ans.problem)
        return policy.judge(ans, max_tokens=req.max_tokens, prompt_texts=req.prompt_texts(),
                            expected_prompt_tokens=req.expected_prompt_tokens,
                            check_truncation=req.check_truncation, source=req.source)

    def _status_failure(self, resp: httpx.Response, raw: str) -> _Attempt:
        try:
            data = transport.json_body(raw)
        except ValueError:
            data = None
        msg = self.redact(shapes.error_message(data) if data is not None else raw[:300].strip() or "no body") or ""
        err = data.get("error") if isinstance(data, dict) else None
        code = err.get("code") if isinstance(err, dict) else None
        return _Attempt(policy.classify_status(resp.status_code, msg, code, resp.headers), status=resp.status_code,
                        raw=raw)

    def _exc(self, exc: BaseException, received: int, raw: str | None = None) -> _Attempt:
        name = type(exc).__name__
        detail = self.redact(str(exc)) or ""
        where = "before any byte" if received == 0 else f"after {received} characters (dropped stream)"
        return _Attempt(Verdict("transport", ErrorKind.transport, f"{name} {where}: {detail}"[:500]), raw=raw)

    async def _attempt(self, req: LLMRequest, path: str, payload: bytes, *, stream: bool) -> _Attempt:
        if stream:
            return await self._attempt_stream(req, path, payload)
        try:
            with self._pools.lease() as http:
                resp = await http.post(self._urls[path], content=payload)
            text = transport.response_text(resp)
        except transport.REQUEST_ERRORS as exc:
            return self._exc(exc, 0)
        raw = self.redact(text) or ""
        if resp.status_code != 200:
            return self._status_failure(resp, raw)
        return await self._whole_body(req, raw, resp.headers.get("content-type", ""), stream=False)

    async def _whole_body(self, req: LLMRequest, raw: str, ctype: str, *, stream: bool) -> _Attempt:
        """A 200 body read whole, read by its content (:func:`~mtboard.llm.transport.looks_like_event_stream`: the
        first line or character decides; the Content-Type only breaks a tie): an event stream is read as a stream
        (:meth:`_whole_stream`; ``unrequested_stream`` when the request did not ask for one), anything else as JSON
        after one leading byte-order mark (``unrequested_json`` when the request asked for a stream). ``raw`` is
        kept as received, the mark included. A body that is neither is a transport failure (asked again)."""
        if transport.looks_like_event_stream(ctype, raw):
            att = await self._whole_stream(req, raw)
            att.unrequested_stream = not stream
            return att
        try:
            data = transport.json_body(raw)
        except ValueError:
            label = ctype.partition(";")[0].strip() or "none"
            return _Attempt(Verdict("transport", ErrorKind.transport,
                                    f"HTTP 200 with a body that is not JSON (nor an event stream; Content-Type "
                                    f"{label!r}): {raw[:120]!r}"), status=200, raw=raw)
        ans = shapes.parse_body(data)
        att = _Attempt(self._judge(req, ans), status=200, answer=ans, raw=raw)
        att.unrequested_json = stream
        return att

    async def _whole_stream(self, req: LLMRequest, raw: str) -> _Attempt:
        """A body already read whole that is an event stream (:func:`~mtboard.llm.transport.looks_like_event_stream`),
        read and judged as any stream (its ``[DONE]`` and ``finish_reason`` rules included)."""
        reader = shapes.StreamReader()
        tee = transport.BodyTee(raw)
        try:
            await self._read_events(EventSource(tee).aiter_sse(), reader, time.monotonic())  # type: ignore[arg-type]
        except SSEError as exc:  # not expected: the tee says text/event-stream
            return self._exc(exc, len(raw), raw)
        ans = reader.answer
        att = _Attempt(self._judge(req, ans), status=200, answer=ans, raw=raw)
        att.empty_stream = ans.events == 0 and not ans.done
        return att

    async def _attempt_stream(self, req: LLMRequest, path: str, payload: bytes) -> _Attempt:
        with self._pools.lease() as http:
            return await self._stream_on(http, req, path, payload)

    async def _stream_on(self, http: httpx.AsyncClient, req: LLMRequest, path: str, payload: bytes) -> _Attempt:
        reader = shapes.StreamReader()
        t0 = time.monotonic()
        tee: transport.TextTee | None = None
        try:
            async with http.stream("POST", self._urls[path], content=payload) as resp:
                if resp.status_code != 200:
                    await resp.aread()
                    return self._status_failure(resp, self.redact(transport.response_text(resp)) or "")
                ctype = resp.headers.get("content-type", "")
                if ctype.partition(";")[0].strip().lower() != "text/event-stream":
                    # a server that ignored "stream": true and answered with one JSON body (or a stream under
                    # another media type): read whole, by content
                    await resp.aread()
                    return await self._whole_body(req, self.redact(transport.response_text(resp)) or "", ctype,
                                                  stream=True)
                tee = transport.TextTee(resp)
                if transport.starts_like_json(await tee.head()):
                    # a JSON body labelled text/event-stream: JSON by its content (one attempt, not an empty stream)
                    return await self._whole_body(req, self.redact(await tee.rest()) or "", ctype, stream=True)
                timeout = await self._read_events(EventSource(tee).aiter_sse(), reader, t0)  # type: ignore[arg-type]
                if timeout is not None:
                    ans = reader.answer
                    self._repair(ans)
                    v = Verdict("model", ErrorKind.timeout, timeout, text=self.redact(ans.text))
                    return _Attempt(v, status=200, answer=ans, raw=self.redact(tee.text()))
        except (*transport.REQUEST_ERRORS, SSEError) as exc:
            ans = reader.answer
            if ans.finish_reason is None or ans.problem:
                return self._exc(exc, tee.received if tee else 0, self.redact(tee.text()) if tee else None)
            ans.done = True  # the answer was complete; only the trailer was lost
        ans = reader.answer
        raw = self.redact(tee.text()) if tee is not None else ""
        att = _Attempt(self._judge(req, ans), status=200, answer=ans, raw=raw)
        att.empty_stream = ans.events == 0 and not ans.done
        return att

    async def _read_events(self, events: Any, reader: shapes.StreamReader, t0: float) -> str | None:
        """Feed SSE events to ``reader`` until ``[DONE]``, a problem or the end of the body; after ``[DONE]`` wait
        :data:`~mtboard.llm.transport.STREAM_DRAIN_S` for the body's end (so the connection can be reused).
        Returns a message when the stream outlived ``deadline_s``, else None."""
        more = True
        try:
            while True:
                nxt = events.__anext__()
                try:
                    ev = await (nxt if more else asyncio.wait_for(nxt, transport.STREAM_DRAIN_S))
                except (StopAsyncIteration, asyncio.TimeoutError):
                    return None
                if not more:
                    continue  # anything after [DONE] is kept in the raw text only
                if self.deadline_s is not None and time.monotonic() - t0 > self.deadline_s:
                    return f"stream still producing after {self.deadline_s}s"
                if ev.data == "" and ev.event == "message":
                    continue  # an event with no data (id/retry only): nothing to dispatch (WHATWG)
                more = reader.feed(ev.data, ev.event)
                if not more and not reader.answer.done:
                    return None  # a problem: stop reading
        finally:
            await events.aclose()


__all__ = ["LLMClient", "LLMRequest", "LLMResult"]
