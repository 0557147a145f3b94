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
import json
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


BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
"""Byte-order marks and the codec that decodes the body *including* its mark (so the text starts with U+FEFF and
the raw record keeps it). UTF-32 LE is tried before UTF-16 LE (``FF FE 00 00`` starts with ``FF FE``; no JSON or SSE
body starts with U+0000). Source: WHATWG Encoding §6 "decode" (a BOM overrides the label) and RFC 8259 §8.1 (a
parser may ignore a BOM); UTF-32 from RFC 4627 §3."""
BOM = "\ufeff"
JSON_WHITESPACE = " \t\r\n"
"""RFC 8259 §2 insignificant whitespace: what may precede a JSON text's first character."""


def bom_encoding(head: bytes) -> str | None:
    """The codec a body starting with ``head`` (its first bytes, 4 are enough) must be decoded with when it starts
    with a byte-order mark (:data:`BOMS`), else None (the label decides, :func:`body_encoding`)."""
    for mark, name in BOMS:
        if head.startswith(mark):
            return name
    return None


def _may_grow_into_bom(head: bytes) -> bool:
    """True while ``head`` is too short to tell whether the body starts with a byte-order mark."""
    return any(len(head) < len(mark) and mark.startswith(head) for mark, _ in BOMS)


def strip_bom(text: str) -> str:
    """``text`` without one leading U+FEFF (what a byte-order mark decodes to; WHATWG: it is not content)."""
    return text.removeprefix(BOM)


def starts_like_json(text: str) -> bool:
    """True when ``text``'s first character after a byte-order mark and JSON whitespace is ``{`` or ``[``: the body
    is read as JSON whatever its Content-Type (no event stream can start so: an SSE line starting with ``{`` is a
    field named ``{…``, which WHATWG HTML §9.2.6 ignores)."""
    return strip_bom(text).lstrip(JSON_WHITESPACE).startswith(("{", "["))


def json_body(text: str) -> Any:
    """A body's JSON value: one leading byte-order mark dropped (``json.loads`` refuses U+FEFF; RFC 8259 §8.1 lets
    a parser ignore it). Raises: ValueError (json.JSONDecodeError) when the rest is not JSON."""
    return json.loads(strip_bom(text))


class TextTee:
    """What :class:`httpx_sse.EventSource` reads of a streamed response (its headers and ``aiter_text``), keeping
    every piece of text as received for the raw record. The bytes are decoded incrementally (a character split
    between two network reads is whole) in the encoding a leading byte-order mark names, else the response's
    charset (:func:`body_encoding`), with ``surrogateescape``: an undecodable byte survives as U+DC80–U+DCFF until
    :func:`mtboard.core.decoding.answer_text` joins the answer's fragments, and the raw record spells the bytes
    received. A leading byte-order mark is kept in the raw text and not handed to the SSE parser (WHATWG: one
    leading U+FEFF is ignored).

    :meth:`head` reads ahead to the body's first character (so the caller can read it by content,
    :func:`starts_like_json`) without losing anything for :meth:`aiter_text`; :meth:`rest` reads the whole body."""

    def __init__(self, response: httpx.Response):
        self._response = response
        self.headers = response.headers
        self.parts: list[str] = []
        self._pieces: AsyncIterator[str] | None = None
        self._ahead: list[str] = []
        self._bom_dropped = False

    @property
    def received(self) -> int:
        return sum(len(p) for p in self.parts)

    def text(self) -> str:
        return "".join(self.parts)

    async def _decode(self) -> AsyncIterator[str]:
        """The body's text, piece by piece, each piece also kept in :attr:`parts`."""
        decoder = None
        held = b""
        async for chunk in self._response.aiter_bytes():
            if decoder is None:
                held += chunk
                if _may_grow_into_bom(held):
                    continue
                name = bom_encoding(held) or body_encoding(self._response)
                decoder = codecs.getincrementaldecoder(name)("surrogateescape")
                chunk, held = held, b""
            piece = decoder.decode(chunk)
            if piece:
                self.parts.append(piece)
                yield piece
        if decoder is None:
            decoder = codecs.getincrementaldecoder(bom_encoding(held) or body_encoding(self._response))(
                "surrogateescape")
        tail = decoder.decode(held, final=True)
        if tail:
            self.parts.append(tail)
            yield tail

    def _source(self) -> AsyncIterator[str]:
        if self._pieces is None:
            self._pieces = self._decode()
        return self._pieces

    async def head(self) -> str:
        """The text received up to and including the body's first character that is neither a byte-order mark nor
        JSON whitespace ("" when the body has none); nothing is consumed."""
        source = self._source()
        while not strip_bom("".join(self._ahead)).lstrip(JSON_WHITESPACE):
            try:
                self._ahead.append(await source.__anext__())
            except StopAsyncIteration:
                break
        return "".join(self._ahead)

    async def rest(self) -> str:
        """Read the body to its end; returns the whole text as received (:meth:`text`)."""
        async for _ in self._source():
            pass
        return self.text()

    def _without_bom(self, piece: str) -> str:
        if not self._bom_dropped:
            self._bom_dropped = True
            piece = strip_bom(piece)
        return piece

    async def aiter_text(self) -> AsyncIterator[str]:
        while self._ahead:
            piece = self._without_bom(self._ahead.pop(0))
            if piece:
                yield piece
        async for piece in self._source():
            piece = self._without_bom(piece)
            if piece:
                yield piece


class BodyTee(TextTee):
    """A :class:`TextTee` over a body already read whole (an event stream read by content where the request or the
    label said otherwise: :func:`looks_like_event_stream`): the same SSE parsing, the same raw text."""

    def __init__(self, text: str):
        self.headers = httpx.Headers({"content-type": "text/event-stream"})
        self.parts = []
        self._text = text

    async def aiter_text(self) -> AsyncIterator[str]:
        self.parts.append(self._text)
        yield strip_bom(self._text)


def body_encoding(response: httpx.Response) -> str:
    """The codec name to decode a body with when it has no byte-order mark (:func:`bom_encoding` comes first): its
    declared charset when that names a text encoding, else UTF-8 (a bytes-to-bytes codec such as base64, or an
    unknown name, is not a charset)."""
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
    """A read response's body as text: in the encoding its byte-order mark names (UTF-8/16/32, the mark kept as a
    leading U+FEFF: :data:`BOMS`), else in :func:`body_encoding`. ``errors``: ``surrogateescape`` (default: an
    invalid byte 0xXY is kept as U+DCXY, so the raw record spells the bytes received and
    :func:`mtboard.core.decoding.answer_text` can rejoin a character split between fragments) or ``replace``
    (U+FFFD; metadata nobody keeps raw)."""
    data = response.content
    return data.decode(bom_encoding(data[:4]) or body_encoding(response), errors)


_SSE_START = re.compile(r"(?:data|event|id|retry)(?::|\r|\n|$)|:")


def looks_like_event_stream(content_type: str, text: str) -> bool:
    """True when a 200 body is to be read as a server-sent event stream (WHATWG HTML §9.2), decided by its content,
    the label only breaking a tie. After a byte-order mark and blank lines: a first line that is an SSE field line —
    ``data:``, ``event:``, ``id:``, ``retry:`` or a ``:`` comment, which no JSON body can start with — is a stream;
    a first character ``{`` or ``[`` (after JSON whitespace) is JSON (:func:`starts_like_json`), whatever the
    label; anything else (an empty body, plain text) is a stream only when the media type (``content_type``, the
    Content-Type header, parameters ignored) is ``text/event-stream``."""
    head = strip_bom(text).lstrip("\r\n")
    if _SSE_START.match(head) is not None:
        return True
    return (content_type.partition(";")[0].strip().lower() == "text/event-stream"
            and not starts_like_json(text))


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


__all__ = ["BOM", "BOMS", "KEEPALIVE_EXPIRY_S", "LANES_PER_POOL", "Pools", "ssl_context", "REQUEST_ERRORS",
           "STREAM_DRAIN_S", "TextTee", "BodyTee", "async_client", "body_encoding", "bom_encoding", "get_json",
           "http2_available", "infer_provider", "json_body", "looks_like_event_stream", "normalise_base_url",
           "response_text", "split_base_url", "starts_like_json", "strip_bom"]
