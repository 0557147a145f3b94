"""The failure policy: what an HTTP status or a 200 answer means for an entry (pure functions, no I/O).

BookTrans write-up, "срыв модели и сбой роутера" (spec README §LLM judging, "no valid output … scores 0 if the
model failed, … is re-run if the transport failed"); the table is in :mod:`mtboard.llm` and docs/providers.md.
:func:`classify_status` reads a non-200 answer, :func:`judge` a 200 answer already read by
:mod:`mtboard.llm.shapes`.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mtboard.core.decoding import ServerText
from mtboard.core.reasoning import split_reasoning
from mtboard.core.schema import ErrorKind
from mtboard.llm.shapes import Answer

TRANSPORT_STATUSES = frozenset({408, 409, 425, 429})
"""Retried HTTP statuses below 500 (timeout, conflict, too early, rate limit); every 5xx is retried too."""
FATAL_STATUSES = frozenset({401, 403, 404})
"""Statuses that mean the whole run cannot work (bad key, no access, unknown model or path)."""

FINISH_STOP = frozenset({"stop", "eos", "eos_token", "end_turn", "stop_sequence", "end"})
"""Natural ends: the answer is judged on its text (OpenAI ``stop``; Together ``eos``; Anthropic-native names relayed
by gateways)."""
FINISH_LENGTH = frozenset({"length", "max_tokens", "model_length", "max_output_tokens"})
"""The output-token cap (or, Mistral's ``model_length``, the context) ended the answer: model failure token_cap."""
FINISH_FILTER = frozenset({"content_filter", "safety", "recitation", "prohibited_content", "blocklist", "spii",
                           "refusal"})
"""A content filter or the model's refusal: model failure refusal."""
FINISH_TOOL = frozenset({"tool_calls", "function_call", "tool_use"})
"""The model called a tool (mtboard offers none) instead of answering: model failure format."""
FINISH_TRANSPORT = frozenset({"abort", "error", "insufficient_system_resource", "cancelled", "canceled",
                              "interrupted"})
"""The service stopped the generation (vLLM ``abort``, OpenRouter ``error``, DeepSeek
``insufficient_system_resource``): a transport failure, retried — a half answer is never scored."""

TRUNCATION_FACTOR = 0.8
"""A prompt is judged truncated when the server reports fewer than this share of the estimated minimum tokens."""
_CONTEXT_RE = re.compile(r"context (length|window|size)|too long|exceeds? (the )?(context|maximum)|n_ctx|"
                         r"maximum context|too many tokens", re.I)
_PIECE_RE = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*|\d+|[^\w\s]+")


def finish_kind(reason: str | None) -> str:
    """The policy class of a ``finish_reason``: ``stop``, ``length``, ``filter``, ``tool``, ``transport`` or
    ``none`` (null). Case-insensitive; an unknown value is ``stop`` (the text is judged as it is)."""
    if reason is None:
        return "none"
    r = reason.strip().lower()
    for kind, names in (("length", FINISH_LENGTH), ("filter", FINISH_FILTER), ("tool", FINISH_TOOL),
                        ("transport", FINISH_TRANSPORT)):
        if r in names:
            return kind
    return "stop"


def estimate_min_prompt_tokens(texts: list[Any]) -> int:
    """A conservative lower bound on how many tokens any subword tokenizer needs for ``texts``.

    Counts letter runs (with internal apostrophes/hyphens: ``don't``, ``well-known`` count once), digit runs and
    punctuation runs; every BPE/SentencePiece vocabulary spends at least one token on each. Chat-template tokens are
    not counted, so the true count is higher. Non-string items count 0. Used by :func:`detect_truncation`.
    """
    return sum(len(_PIECE_RE.findall(t)) for t in texts if isinstance(t, str))


def detect_truncation(reported_prompt_tokens: int | None, estimated_min: int, expected: int | None = None,
                      cached_tokens: int = 0) -> str | None:
    """Return a message when the server evidently saw fewer prompt tokens than were sent, else None.

    Evidence is the reported count plus ``cached_tokens`` (an upper bound on what the server saw, whether its
    ``prompt_tokens`` includes cached tokens, as OpenAI's does, or leaves them out, as some gateways do): a
    finished answer is never failed because a cache hit was reported separately. ``expected`` (an exact count from
    a tokenizer, when the caller has one) wins over the estimate. A missing or zero report is no evidence.
    Example: 3,000 words reported as 2,048 tokens → truncated; 194 reported + 9,474 cached → not.
    """
    if not reported_prompt_tokens:
        return None
    seen = reported_prompt_tokens + max(0, cached_tokens)
    if expected is not None:
        if seen < expected:
            return f"input truncated: sent {expected} prompt tokens, server reports {reported_prompt_tokens}"
        return None
    if estimated_min and seen < TRUNCATION_FACTOR * estimated_min:
        return (f"input truncated: the prompt has at least ~{estimated_min} tokens, server reports "
                f"{reported_prompt_tokens} (context window too small?)")
    return None


def split_think(text: str, source: str | None = None) -> tuple[str, str | None, bool]:
    """Split reasoning off visible text by the one table of reasoning formats
    (:func:`mtboard.core.reasoning.split_reasoning`: ``<think>``, Harmony channels, ``[THINK]``, ``<seed:think>``, …).
    Returns ``(visible, reasoning, unclosed)``. A marker that also occurs in ``source`` (the text being translated,
    :attr:`mtboard.llm.LLMRequest.source`) is text, not reasoning; ``source=None`` applies every format.

    ``"<think>a</think>b"`` → ``("b", "a", False)``; ``"a</think>b"`` (opening tag in the template) → ``("b", "a",
    False)``; ``"<think>a"`` → ``("<think>a", None, True)``; ``"[THINK]a[/THINK]b"`` → ``("b", "a", False)``;
    ``"<think>a</think>b"`` with source ``"<think>"`` → unchanged, ``(text, None, False)``.
    """
    split = split_reasoning(text, source)
    if split.unclosed is not None:
        return text, None, True
    if not split.stripped:
        return text, None, False
    return split.answer.strip(), split.reasoning_text, False


def apply_stop(text: str, stops: list[str] | tuple[str, ...]) -> tuple[str, str | None]:
    """Cut ``text`` where the first of ``stops`` begins, as a server honouring ``stop`` would (OpenAI semantics: the
    stop sequence itself is not returned). Returns ``(text, stop)`` with ``stop`` the sequence that cut, or
    ``(text, None)`` when none occurs. Empty stop sequences are ignored; at equal positions the shorter sequence
    (the one a streaming server completes first) is named.

    ``"Hola mundo.\\nEnglish: X\\nSpanish: Y"`` with ``["\\n"]`` → ``("Hola mundo.", "\\n")``.
    """
    best: tuple[int, int, str] | None = None
    for s in stops:
        if not s:
            continue
        i = text.find(s)
        if i >= 0 and (best is None or (i, len(s)) < best[:2]):
            best = (i, len(s), s)
    if best is None:
        return text, None
    return text[: best[0]], best[2]


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delta-seconds or an HTTP date); None if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            v = float(ms) / 1000.0
            if math.isfinite(v):
                return max(0.0, v)
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


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(text: str | None) -> float | None:
    """Seconds in a rate-limit reset duration as OpenAI, Groq and others send it in ``x-ratelimit-reset-requests`` /
    ``-tokens``: Go duration syntax (``1m30s`` → 90, ``250ms`` → 0.25, ``20s`` → 20, ``6m0s`` → 360, ``1h2m3.5s`` →
    3723.5) or a bare number of seconds (``7.66``). None for anything else (negative, empty, unknown unit)."""
    if text is None:
        return None
    t = text.strip()
    if not t:
        return None
    try:
        v = float(t)
        return v if math.isfinite(v) and v >= 0 else None
    except ValueError:
        pass
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(t):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return total if pos == len(t) and pos > 0 else None


RESET_DURATION_HEADERS = (("x-ratelimit-reset-requests", "x-ratelimit-remaining-requests"),
                          ("x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens"))
"""(reset, remaining) header pairs with a duration until the limit resets (OpenAI, Groq, Together, …)."""
RESET_TIME_HEADERS = (("anthropic-ratelimit-requests-reset", "anthropic-ratelimit-requests-remaining"),
                      ("anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-tokens-remaining"),
                      ("anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-input-tokens-remaining"),
                      ("anthropic-ratelimit-output-tokens-reset", "anthropic-ratelimit-output-tokens-remaining"))
"""(reset, remaining) header pairs with an RFC 3339 time at which the limit resets (Anthropic)."""
RATE_LIMIT_STATUSES = frozenset({429, 529})
"""Statuses that say "too many requests" (429) or "overloaded" (529, Anthropic): waited out, never counted as
retries (503 joins them when it announces a wait)."""


def _rfc3339_seconds(value: str, now: float) -> float | None:
    try:
        when = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def rate_limit_wait(headers: Any, now: float | None = None) -> float | None:
    """Seconds a server asks the client to wait, from every documented rate-limit header; None when it says nothing.

    ``Retry-After`` (seconds or HTTP date) and ``retry-after-ms`` win when present (:func:`parse_retry_after`).
    Otherwise the reset headers: ``x-ratelimit-reset-requests`` / ``-tokens`` durations (:func:`parse_duration`)
    and Anthropic's ``anthropic-ratelimit-*-reset`` times. When a matching ``…-remaining-…`` header says 0, only the
    limits with nothing remaining count (the ones that were hit); otherwise every announced reset does. The longest
    is the wait (waiting less would hit the same limit again).
    """
    ra = parse_retry_after(headers, now)
    if ra is not None:
        return ra
    now = time.time() if now is None else now
    found: list[tuple[float, bool | None]] = []
    for reset, remaining in RESET_DURATION_HEADERS + RESET_TIME_HEADERS:
        value = headers.get(reset)
        if not value:
            continue
        secs = parse_duration(value) if reset.startswith("x-") else _rfc3339_seconds(value, now)
        if secs is None:
            continue
        rem = headers.get(remaining)
        exhausted = None
        if rem is not None:
            try:
                exhausted = float(rem) <= 0
            except ValueError:
                exhausted = None
        found.append((secs, exhausted))
    if not found:
        return None
    hit = [secs for secs, exhausted in found if exhausted]
    return max(hit) if hit else max(secs for secs, _ in found)


@dataclass
class Verdict(ServerText):
    """What one attempt means: ``outcome`` is ``ok``, ``transport`` (retried), ``model`` (scored 0, not retried) or
    ``backend`` (configuration; not retried). ``text``/``reasoning`` are what the entry keeps.

    ``error`` is composed here from what the server sent (an error body of any status, 2xx/4xx/5xx, streamed or
    not; an exception's text): it, ``text`` and ``reasoning`` pass :func:`mtboard.core.decoding.clean` whenever set
    (:class:`~mtboard.core.decoding.ServerText`), so a verdict never holds a lone surrogate (review 2 of issue 33,
    findings 1 and 2: a ``surrogateescape``'d ``\\xff`` of a 500 body ended the run at the record's write)."""

    SERVER_TEXT = frozenset({"error", "text", "reasoning"})

    outcome: str
    error_kind: ErrorKind | None = None
    error: str | None = None
    text: str | None = None
    reasoning: str | None = None
    fatal: bool = False
    retry_after_s: float | None = None
    """The wait the server announced (:func:`rate_limit_wait`), seconds."""
    rate_limited: bool = False
    """A rate limit or overload (429, 529, or 503 announcing a wait): waited out until a deadline, not counted as a
    retry (:class:`mtboard.llm.LLMClient`)."""


def classify_status(status: int, message: str, error_code: Any = None, headers: Any = None) -> Verdict:
    """A non-200 HTTP answer. ``message`` is the error text already read from the body (and scrubbed).

    408/409/425/429 and 5xx → transport, with the wait the headers announce (:func:`rate_limit_wait`); 429, 529 and
    a 503 that announces a wait are ``rate_limited``; 400/413/422 saying the prompt is longer than the context →
    model ``input_truncated``; 400 with error code ``content_filter`` (Azure's prompt filter) → model ``refusal``; any
    other status → ``backend``, fatal for 401/403/404.
    """
    line = f"HTTP {status}: {message}"[:500]
    if status in TRANSPORT_STATUSES or status >= 500:
        wait = rate_limit_wait(headers) if headers is not None else None
        limited = status in RATE_LIMIT_STATUSES or (status == 503 and wait is not None)
        return Verdict("transport", ErrorKind.transport, line, retry_after_s=wait, rate_limited=limited)
    if status in (400, 413, 422) and _CONTEXT_RE.search(message):
        return Verdict("model", ErrorKind.input_truncated, f"input too long for the context: {line}"[:500])
    if status == 400 and str(error_code or "").lower() == "content_filter":
        return Verdict("model", ErrorKind.refusal, f"refusal: {line}"[:500])
    return Verdict("backend", ErrorKind.backend, line, fatal=status in FATAL_STATUSES)


def judge(ans: Answer, *, max_tokens: int, prompt_texts: list[Any] | None = None,
          expected_prompt_tokens: int | None = None, check_truncation: bool = True,
          source: str | None = None) -> Verdict:
    """The failure policy on a 200 answer (module docstring of :mod:`mtboard.llm`; rules in this order):

    1. a problem inside the answer (error object, no choices, a chunk that is not JSON) → transport;
    2. a stream without ``finish_reason``: ended without ``[DONE]`` (dropped) or with ``[DONE]`` (interrupted,
       llama-cpp-python) → transport; a whole JSON body with ``finish_reason: null`` is judged as ``stop``;
    3. a transport finish (``abort``, ``error``, …) → transport;
    4. the server reports fewer prompt tokens than were sent (:func:`detect_truncation`) → ``input_truncated``;
    5. a refusal (``refusal`` field or part, or a filter finish) → ``refusal``;
    6. tool calls or a tool finish → ``format``;
    7. a reasoning block never closed (``<think>``, ``[THINK]``, a Harmony ``analysis`` message …, every format of
       :data:`mtboard.core.reasoning.FORMATS`) → ``unclosed_think``; a closed block moves to reasoning, and a marker
       that also occurs in ``source`` (the text being translated; None: none) is text, not reasoning;
    8. a length finish → ``token_cap``; a ``stop`` answer whose ``completion_tokens`` reached ``max_tokens`` →
       ``token_cap`` ("at token cap": the server stopped it at the cap but called it a natural end) — neither when
       mtboard cut the text at a stop sequence the server ignored (``ans.stop_cut``: the answer ended there);
    9. no visible text → ``empty``; else ok.
    """
    where = "stream" if ans.streamed else "answer"
    if ans.problem:
        return Verdict("transport", ErrorKind.transport, f"HTTP 200 with {ans.problem}"[:500])
    kind = finish_kind(ans.finish_reason)
    if ans.streamed and kind == "none":
        if not ans.done:
            return Verdict("transport", ErrorKind.transport, "stream ended without finish_reason or [DONE] "
                           f"after {ans.events} events (dropped stream)")
        return Verdict("transport", ErrorKind.transport, "stream ended by [DONE] without a finish_reason after "
                       f"{ans.events} events (interrupted answer)")
    if kind == "transport":
        return Verdict("transport", ErrorKind.transport,
                       f"the {where} ended with finish_reason {ans.finish_reason!r} (generation stopped by the "
                       "service)")
    if ans.stop_cut is not None and kind == "length":
        kind = "stop"  # mtboard cut the answer at a stop sequence the server ran past: the cap did not end it
    text = ans.text or ""
    reasoning = ans.reasoning or None
    usage = ans.usage
    if check_truncation and usage is not None:
        msg = detect_truncation(usage.prompt_tokens, estimate_min_prompt_tokens(prompt_texts or []),
                                expected_prompt_tokens, usage.cached_tokens)
        if msg:
            return Verdict("model", ErrorKind.input_truncated, msg, text=ans.text, reasoning=reasoning)
    if ans.refusal or kind == "filter":
        detail = ans.refusal or f"finish_reason {ans.finish_reason}"
        return Verdict("model", ErrorKind.refusal, f"refusal: {detail[:200]}", text=ans.text, reasoning=reasoning)
    if ans.tool_calls or kind == "tool":
        return Verdict("model", ErrorKind.format, f"the model called a tool instead of answering "
                       f"({ans.tool_calls or 'no'} tool call(s), finish_reason {ans.finish_reason!r})",
                       text=ans.text, reasoning=reasoning)
    split = split_reasoning(text, source)
    if split.unclosed is not None:
        return Verdict("model", ErrorKind.unclosed_think, f"unclosed reasoning block ({split.unclosed}): no visible "
                       "answer after the reasoning", text=ans.text, reasoning=reasoning)
    visible = text
    if split.stripped:
        text = visible = split.answer.strip()
        reasoning = "\n".join(x for x in (reasoning, split.reasoning_text) if x) or None
    out = text if ans.text is not None else None
    if kind == "length":
        return Verdict("model", ErrorKind.token_cap,
                       f"token cap hit (finish_reason {ans.finish_reason} at max_tokens={max_tokens})"
                       + ("" if visible.strip() else " with no visible text"), text=out, reasoning=reasoning)
    if usage is not None and max_tokens > 0 and usage.completion_tokens >= max_tokens and ans.stop_cut is None:
        return Verdict("model", ErrorKind.token_cap,
                       f"at token cap: {usage.completion_tokens} completion tokens reached max_tokens={max_tokens} "
                       f"although finish_reason is {ans.finish_reason!r}", text=out, reasoning=reasoning)
    if not visible.strip():
        return Verdict("model", ErrorKind.empty, "empty content", text=out, reasoning=reasoning)
    return Verdict("ok", text=out, reasoning=reasoning)


def context_error(message: str) -> bool:
    """True when an error message says the prompt is longer than the context window."""
    return bool(_CONTEXT_RE.search(message))


LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]"})
"""Hosts that are this machine: a refused connection there means the local server is not running."""


def proxy_variable(url: str, environ: Mapping[str, str]) -> str | None:
    """The environment variable whose proxy httpx uses for ``url`` (``trust_env``; curl's rules:
    ``{scheme}_proxy`` / ``{SCHEME}_PROXY``, then ``all_proxy`` / ``ALL_PROXY``, unless ``NO_PROXY`` names the host;
    :func:`urllib.request.proxy_bypass_environment` decides that), or None for a direct connection."""
    import urllib.request

    parts = urlsplit(url)
    host = parts.hostname or ""
    if host in LOCAL_HOSTS:
        return None
    scheme = parts.scheme.lower()
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if environ.get(name):
            no_proxy = environ.get("no_proxy") or environ.get("NO_PROXY")
            if no_proxy and urllib.request.proxy_bypass_environment(host, {"no": no_proxy}):
                return None
            return name
    return None


def connect_failure(exc: BaseException, url: str, environ: Mapping[str, str] | None = None,
                    trust_env: bool = True) -> tuple[str, str]:
    """Why no connection to ``url`` could be made, and its fix, from an httpx connect exception (its cause chain:
    :class:`socket.gaierror` for a name that does not resolve, :class:`ConnectionRefusedError` for a closed port;
    :class:`httpx.ProxyError` for a proxy that refused to tunnel; :class:`httpx.ConnectTimeout`).

    Returns ``(problem, fix)``, one line each: a name that does not resolve (check the host name and this machine's
    DNS); a proxy error, naming the proxy variable (``HTTPS_PROXY`` …) that routes the request; a refused port on
    this machine (start the server); a refused remote port; a connect timeout. The proxy's URL is never shown (it can
    hold a password)."""
    import os
    import socket

    import httpx

    env = os.environ if environ is None else environ
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    where = f"{host}:{port}"
    proxy = proxy_variable(url, env) if trust_env else None
    chain: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and len(chain) < 10:
        chain.append(e)
        e = e.__cause__ or e.__context__
    detail = str(exc).strip() or type(exc).__name__
    if any(isinstance(x, httpx.ProxyError) for x in chain):
        return (f"the proxy in {proxy or 'the proxy environment'} refused to connect to {where} ({detail})",
                f"check {proxy or 'HTTPS_PROXY / HTTP_PROXY / ALL_PROXY'} (the proxy's address and whether it lets "
                f"this host through), or add {host} to NO_PROXY to connect directly")
    if proxy is not None and any(isinstance(x, (ConnectionRefusedError, socket.gaierror, httpx.ConnectTimeout))
                                 for x in chain):
        return (f"cannot reach the proxy in {proxy} on the way to {where} ({detail})",
                f"check {proxy} (the proxy's host and port), or unset it / add {host} to NO_PROXY to connect "
                "directly")
    if any(isinstance(x, socket.gaierror) for x in chain):
        return (f"the host name {host!r} does not resolve ({detail})",
                "check the host name in --base-url / the *_BASE_URL variable, and this machine's DNS and network "
                "connection")
    if any(isinstance(x, ConnectionRefusedError) for x in chain):
        if host in LOCAL_HOSTS:
            return (f"nothing listens on {where} on this machine ({detail})",
                    "start the server, or check the port in --base-url / the *_BASE_URL variable")
        return (f"{where} refused the connection ({detail})",
                "check the host and port in --base-url / the *_BASE_URL variable (no service listens there)")
    if any(isinstance(x, httpx.ConnectTimeout) for x in chain):
        return (f"no connection to {where} within the connect timeout ({detail})",
                "check the host and port, a firewall on the way, or whether a proxy (HTTPS_PROXY) is needed")
    return (f"cannot connect to {where} ({type(exc).__name__}: {detail})",
            "check the host and port in --base-url / the *_BASE_URL variable, and the network")


__all__ = ["TRANSPORT_STATUSES", "FATAL_STATUSES", "RATE_LIMIT_STATUSES", "FINISH_STOP", "FINISH_LENGTH",
           "FINISH_FILTER", "FINISH_TOOL", "FINISH_TRANSPORT", "TRUNCATION_FACTOR", "LOCAL_HOSTS", "Verdict",
           "apply_stop", "classify_status", "connect_failure", "context_error", "detect_truncation",
           "estimate_min_prompt_tokens", "finish_kind", "judge", "parse_duration", "parse_retry_after",
           "proxy_variable", "rate_limit_wait", "split_think"]
