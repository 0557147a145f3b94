"""HTTP for :mod:`mtboard.llm`: one ``httpx.AsyncClient`` per endpoint, SSE through ``httpx-sse``, and the URL rules.

Everything mtboard sends to a model server goes through httpx (the only HTTP library mtboard imports; model
downloads go through huggingface_hub's own httpx-family client, with the same environment rules):

* ``trust_env`` on by default: ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``ALL_PROXY`` / ``NO_PROXY`` (curl's rules, as
  httpx reads them) and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` (corporate CAs). Servers mtboard starts itself on
  loopback are reached with ``trust_env=False`` (a proxy cannot reach this machine's loopback).
* HTTP/2 for ``https://`` endpoints when the ``h2`` package is installed (``pip install 'mtboard[http2]'``);
  plain-http endpoints (local servers) speak HTTP/1.1.
* One connection pool per :data:`LANES_PER_POOL` requests in flight (:class:`Pools`).
* Keep-alive connections expire after :data:`KEEPALIVE_EXPIRY_S`, below the 5 s idle timeout of uvicorn
  (llama-cpp-python) and llama.cpp, so a request is never written into a connection the server is closing.
* Credentials in the URL (``http://user:password@host/v1``) become HTTP Basic auth; a query in the base URL
  (Azure's ``?api-version=…``) goes with every request. No redirects are followed, no cookies kept.
"""

from __future__ import annotations

import codecs
import contextlib
import importlib.util
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import httpx

from mtboard.core.errors import ConfigError

KEEPALIVE_EXPIRY_S = 4.0
"""An idle connection older than this is not reused: uvicorn (llama-cpp-python's server) and llama.cpp close idle
connections after 5 s, and a request sent as the server closes would fail."""
STREAM_DRAIN_S = 0.05
"""After a stream's ``data: [DONE]``, how long the end of the HTTP body may take to arrive so the connection can be
reused (servers send it at once); later, the connection is closed instead."""
LANES_PER_POOL = 8
"""Requests in flight per ``httpx.AsyncClient`` (its own connection pool); more lanes get more clients. httpcore's
pool re-examines every connection, with a quadratic idle count and one ``poll`` per idle connection, each time a
request starts or ends: measured with ``bench/harness_throughput.py`` at C = 32, 33 connections in one pool cost
~5 ms of client CPU per request (``is_idle`` called ~4,600 times per request); pools of 8 keep it small."""
REQUEST_ERRORS = (httpx.RequestError,)
"""What a request raises when no (complete) answer arrived: connect/read/write errors and timeouts, protocol
errors, proxy errors, undecodable content codings (all httpx.RequestError)."""
PROXY_VARIABLES = "HTTP_PROXY / HTTPS_PROXY / ALL_PROXY"


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
        parts = parts._replace(path=parts.path.rstrip("/") + "/v1")
        url = urlunsplit(parts)
    return url


def infer_provider(base_url: str) -> str:
    """Channel name from the endpoint host: api.openai.com→openai, openrouter.ai→openrouter, port 11434→ollama,
    else ``openai-compatible`` (refined by :meth:`mtboard.llm.LLMClient.probe` when the server names itself)."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host == "api.openai.com" or host.endswith(".openai.com"):
        return "openai"
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "openrouter"
    if parts.port == 11434:
        return "ollama"
    return "openai-compatible"


def split_base_url(base_url: str) -> tuple[str, httpx.BasicAuth | None, list[tuple[str, str]]]:
    """``(url without credentials or query, Basic auth from user:password, query parameters)``."""
    parts = urlsplit(base_url)
    auth = None
    if parts.username is not None:
        auth = httpx.BasicAuth(unquote(parts.username), unquote(parts.password or ""))
    netloc = parts.netloc.rpartition("@")[2]
    params = parse_qsl(parts.query, keep_blank_values=True)
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), auth, params


def http2_available() -> bool:
    """True when the ``h2`` package (httpx's HTTP/2 support) is installed."""
    return importlib.util.find_spec("h2") is not None


def ssl_context(trust_env: bool = True) -> Any:
    """httpx's TLS context (certifi's CAs, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when ``trust_env``). Building one
    reads the CA bundle (~50 ms): one per :class:`mtboard.llm.LLMClient`, shared by its pools."""
    return httpx.create_ssl_context(trust_env=trust_env)


def async_client(base_url: str, *, headers: dict[str, str], timeout_s: float, connect_timeout_s: float,
                 connections: int, trust_env: bool = True, http2: bool | None = None,
                 verify: Any = True, uds: str | None = None) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` for one endpoint (module docstring). ``base_url`` is already normalised;
    ``verify`` is a TLS context from :func:`ssl_context` (or True: a new one). ``uds``: the path of a Unix socket
    to connect to instead of the URL's host (a sandboxed local server, :mod:`mtboard.backends.local.sandbox`; httpx's
    ``AsyncHTTPTransport(uds=…)``); never through a proxy.

    Raises: ConfigError when the proxy environment cannot be used (a SOCKS proxy without ``httpx[socks]``, a
    malformed proxy URL) — the proxy's URL is not echoed (it can hold a password).
    """
    url, auth, params = split_base_url(base_url)
    if http2 is None:
        http2 = url.startswith("https:") and http2_available()
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections,
                          keepalive_expiry=KEEPALIVE_EXPIRY_S)
    over_socket = httpx.AsyncHTTPTransport(uds=uds, limits=limits, http2=False) if uds else None
    try:
        return httpx.AsyncClient(
            base_url=url, auth=auth, params=params or None, headers=headers, follow_redirects=False,
            trust_env=trust_env and over_socket is None, http2=http2, verify=verify,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s, pool=None), limits=limits,
            transport=over_socket)
    except ImportError as exc:
        what = "socksio" if "socks" in str(exc).lower() else "h2" if "h2" in str(exc) else "a package"
        raise ConfigError(f"the HTTP client needs {what}, which is not installed",
                          field=PROXY_VARIABLES if what == "socksio" else "HTTP/2",
                          fix="pip install 'httpx[socks]'" if what == "socksio" else "pip install 'mtboard[http2]'"
                          ) from None
    except (ValueError, TypeError, httpx.InvalidURL) as exc:
        raise ConfigError(f"a proxy from the environment cannot be used ({type(exc).__name__})",
                          field=PROXY_VARIABLES,
                          fix="give the proxy as http://host:port, or unset it / list the host in NO_PROXY") from None


class Pools:
    """``ceil(lanes / LANES_PER_POOL)`` clients made by ``factory(connections)``; :meth:`lease` hands out the one
    with the fewest requests in flight. ``first`` serves one-off requests (the ``/models`` probe)."""

    def __init__(self, lanes: int, factory: Any):
        n = max(1, -(-lanes // LANES_PER_POOL))
        sizes = [lanes // n + (1 if i < lanes % n else 0) for i in range(n)]
        self.clients: list[httpx.AsyncClient] = [factory(size + 1) for size in sizes]
        self._busy = [0] * n

    @property
    def first(self) -> httpx.AsyncClient:
        return self.clients[0]

    @contextlib.contextmanager
    def lease(self) -> Iterator[httpx.AsyncClient]:
        i = min(range(len(self._busy)), key=self._busy.__getitem__)
        self._busy[i] += 1
        try:
            yield self.clients[i]
        finally:
            self._busy[i] -= 1

    async def aclose(self) -> None:
        for c in self.clients:
            await c.aclose()


class TextTee:
    """What :class:`httpx_sse.EventSource` reads of a streamed response (its headers and ``aiter_text``), keeping
    every piece of text as received for the raw record. The bytes are decoded incrementally (a character split
    between two network reads is whole) in the response's charset (:func:`body_encoding`) with ``surrogateescape``:
    an undecodable byte survives as U+DC80–U+DCFF until :func:`mtboard.core.decoding.answer_text` joins the
    answer's fragments, and the raw record spells the bytes received. A leading byte-order mark is dropped (WHATWG:
    one leading U+FEFF is ignored)."""

    def __init__(self, response: httpx.Response):
        self._response = response
        self.headers = response.headers
        self.parts: list[str] = []

    @property
    def received(self) -> int:
        return sum(len(p) for p in self.parts)

    def text(self) -> str:
        return "".join(self.parts)

    async def aiter_text(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder(body_encoding(self._response))("surrogateescape")
        first = True
        async for chunk in self._response.aiter_bytes():
            piece = decoder.decode(chunk)
            if not piece:
                continue
            self.parts.append(piece)
            if first:
                piece = piece.removeprefix("\ufeff")
                first = False
            yield piece
        tail = decoder.decode(b"", final=True)
        if tail:
            self.parts.append(tail)
            yield tail


class BodyTee(TextTee):
    """A :class:`TextTee` over a body already read whole (an event stream that answered a request sent without
    ``"stream": true``, read by content: :func:`looks_like_event_stream`): the same SSE parsing, the same raw
    text."""

    def __init__(self, text: str):
        self.headers = httpx.Headers({"content-type": "text/event-stream"})
        self.parts = []
        self._text = text

    async def aiter_text(self) -> AsyncIterator[str]:
        self.parts.append(self._text)
        yield self._text.removeprefix("\ufeff")


def body_encoding(response: httpx.Response) -> str:
    """The codec name to decode a body with: its declared charset when that names a text encoding, else UTF-8 (a
    bytes-to-bytes codec such as base64, or an unknown name, is not a charset)."""
    name = response.charset_encoding
    if name:
        try:
            info = codecs.lookup(name)
            if getattr(info, "_is_text_encoding", True):
                return info.name
        except LookupError:
            pass
    return "utf-8"


def response_text(response: httpx.Response, errors: str = "surrogateescape") -> str:
    """A read response's body as text in :func:`body_encoding`. ``errors``: ``surrogateescape`` (default: an
    invalid byte 0xXY is kept as U+DCXY, so the raw record spells the bytes received and
    :func:`mtboard.core.decoding.answer_text` can rejoin a character split between fragments) or ``replace``
    (U+FFFD; metadata nobody keeps raw)."""
    return response.content.decode(body_encoding(response), errors)


_SSE_START = re.compile(r"(?:data|event|id|retry)(?::|\r|\n|$)|:")


def looks_like_event_stream(content_type: str, text: str) -> bool:
    """True when a 200 body is a server-sent event stream (WHATWG HTML §9.2), decided by its content: its first line
    (after a byte-order mark and blank lines) is an SSE field line — ``data:``, ``event:``, ``id:``, ``retry:`` or a
    ``:`` comment — which a JSON body can never start with; or its media type (``content_type``, the Content-Type
    header, parameters ignored) is ``text/event-stream`` and it does not start like a JSON object or array (a JSON
    body under the wrong label is read as JSON)."""
    head = text.removeprefix("\ufeff").lstrip("\r\n")
    if _SSE_START.match(head) is not None:
        return True
    return (content_type.partition(";")[0].strip().lower() == "text/event-stream"
            and not head.lstrip().startswith(("{", "[")))


def get_json(url: str, *, params: dict[str, Any] | None = None, timeout_s: float = 30.0,
             headers: dict[str, str] | None = None, trust_env: bool = True, uds: str | None = None
             ) -> tuple[int, Any]:
    """Synchronous GET of a JSON resource (non-LLM HTTP services such as Apertium APY, local servers' health checks;
    call it in a thread). ``trust_env=False`` for servers mtboard started on this machine; ``uds``: connect to this
    Unix socket instead of the URL's host (a sandboxed server; never through a proxy).

    Returns: ``(status, parsed JSON)``; the body is None when it is not JSON.
    Raises: ConnectionError (one line, no URL) when no response arrived (refused, reset, timeout, proxy failure).
    """
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
                          trust_env=trust_env and not uds, follow_redirects=False, headers=headers,
                          transport=httpx.HTTPTransport(uds=uds) if uds else None) as client:
            resp = client.get(url, params=params)
    except httpx.HTTPError as exc:
        raise ConnectionError(f"{type(exc).__name__}: no response") from None
    try:
        body = resp.json()
    except ValueError:
        body = None
    return resp.status_code, body


__all__ = ["KEEPALIVE_EXPIRY_S", "LANES_PER_POOL", "Pools", "ssl_context", "REQUEST_ERRORS", "STREAM_DRAIN_S",
           "TextTee", "BodyTee", "async_client", "body_encoding", "get_json", "http2_available", "infer_provider",
           "looks_like_event_stream", "normalise_base_url", "response_text", "split_base_url"]
