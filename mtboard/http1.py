"""HTTP/1.1 keep-alive connections for the completion hot path of :mod:`mtboard.llm`: h11 on asyncio.

The protocol work — request framing, response parsing, Content-Length and chunked bodies, keep-alive and
``Connection: close`` rules — is done by h11 (python-hyper, the HTTP/1.1 library httpx's own connection layer
httpcore uses). This module only moves h11's bytes over asyncio transports and keeps idle connections for reuse.

Why not httpx/httpcore for completions (measured with ``bench/harness_throughput.py``, C=32 lanes, L=50 ms, 2 cores,
3,200 requests, issue 3's target ≥ 0.95): every request through httpcore's pool takes three ``anyio.Lock``\\ s, and
each acquisition yields to the event loop once even when the lock is free; with 32 answers arriving together those
extra rounds interleave all 32 tasks, so every lane waits for the whole group (client turnaround 1.5–2 ms instead of
~0.3 ms). httpx.AsyncClient reached 0.93, httpcore pools with a lean network backend 0.93–0.94, the same pools with
non-yielding locks 0.95–0.96, and these h11 lanes 0.983 — equal to hand-written sockets (0.983) — at 0.09 ms client
CPU per request instead of 0.27. httpx stays the client for everything else (``/models`` probes, downloads).

Errors are httpcore's exception classes (ConnectError, ConnectTimeout, ReadError, ReadTimeout, WriteError,
WriteTimeout, RemoteProtocolError), so a failure reads the same as it would through httpx ("ReadTimeout before any
byte: …") and :mod:`mtboard.llm` classifies it the same way. No proxies (the client never read proxy variables),
no HTTP/2, no redirects, no cookies: an OpenAI-compatible POST needs none of them.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ipaddress
import ssl
import time
import zlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, urlsplit

import h11
import httpcore

KEEPALIVE_EXPIRY_S = 4.0
"""An idle connection older than this is not reused: uvicorn (llama-cpp-python's server) and llama.cpp close idle
connections after 5 s, and a request sent as the server closes would fail."""
MAX_HEAD_BYTES = 100 * 1024
"""Largest response head (status line + headers) accepted, as httpcore allows (h11's own default is 16 KiB)."""
STREAM_DRAIN_S = 0.02
"""After a streamed answer's last event (``[DONE]``), how long the end of the HTTP body may take to arrive for the
connection to be reused (servers send it at once); later, the connection is closed instead."""
READ_SIZE = 65536
"""Upper bound on bytes handed to h11 per read (seconds-scale SSE streams arrive in far smaller pieces)."""


# ----------------------------------------------------------------------------------------------------------------------
# Response helpers

class Headers:
    """Case-insensitive read-only view of response headers ``[(name, value), …]`` as h11 gives them (bytes)."""

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
                    info = codecs.lookup(v.strip().strip('"'))
                except LookupError:
                    break
                if getattr(info, "_is_text_encoding", True):  # not base64, rot13, zlib …
                    return info.name
                break
        return "utf-8"


def _zlib_decoder(coding: str) -> Any:
    """A zlib decompressor for Content-Encoding gzip/deflate; None for identity. Raises httpcore.RemoteProtocolError
    for a coding this client cannot decode (it asks for identity, so a server sending one has misbehaved)."""
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj()
    raise httpcore.RemoteProtocolError(f"unsupported Content-Encoding {coding!r}")


def decompress(coding: str | None, data: bytes) -> bytes:
    """``data`` with its Content-Encoding (gzip, deflate or identity) removed. Raises httpcore.RemoteProtocolError."""
    d = _zlib_decoder(coding or "")
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


def decoded_chunks(coding: str | None, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` itself for identity; else a view with the coding removed. Raises httpcore.RemoteProtocolError for
    an unsupported coding."""
    d = _zlib_decoder(coding or "")
    return chunks if d is None else _Decoded(d, coding or "", chunks)


class Lines:
    """Text lines of a byte stream, without their endings (``\\n``, ``\\r\\n`` or ``\\r``, also split across
    chunks), decoded as UTF-8 with replacement — as httpx's ``aiter_lines`` yields them; a last line without an
    ending comes at the end. (A class, not an async generator: see :class:`_Decoded`.)"""

    def __init__(self, chunks: AsyncIterator[bytes]):
        self._chunks = chunks.__aiter__()
        self._ready: list[str] = []
        self._next = 0
        self._pending = b""
        self._eof = False

    def __aiter__(self) -> Lines:
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


# ----------------------------------------------------------------------------------------------------------------------
# Connections

def _expire(fut: asyncio.Future[None], kind: type[Exception]) -> None:
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


class _Connection:
    """One HTTP/1.1 connection carrying one request at a time (h11 state machine + an asyncio transport)."""

    def __init__(self, protocol: _Protocol):
        self.p = protocol
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.idle_since = time.monotonic()

    def reusable(self, now: float) -> bool:
        """True when a new request may go on this connection: h11 is idle on both sides, the server has neither
        closed it nor sent anything unasked, and it has not been idle past :data:`KEEPALIVE_EXPIRY_S`."""
        p = self.p
        return (self.h11.our_state is h11.IDLE and self.h11.their_state is h11.IDLE and not p.eof and not p.buf
                and not self.h11.trailing_data[0] and p.transport is not None and not p.transport.is_closing()
                and now - self.idle_since < KEEPALIVE_EXPIRY_S)

    def close(self) -> None:
        if self.p.transport is not None:
            self.p.transport.close()

    async def _wait(self, slot: str, timeout: float | None, kind: type[Exception]) -> None:
        """Wait until the protocol wakes ``slot`` ("waiter": data, EOF or loss; "drain": the write buffer drained);
        raise ``kind`` after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        setattr(self.p, slot, fut)
        timer = loop.call_later(timeout, _expire, fut, kind) if timeout is not None else None
        try:
            await fut
        finally:
            setattr(self.p, slot, None)
            if timer is not None:
                timer.cancel()

    async def _read(self, timeout: float | None) -> bytes:
        p = self.p
        if not p.buf and not p.eof:
            await self._wait("waiter", timeout, httpcore.ReadTimeout)
        buf = p.buf
        if buf:
            data = bytes(buf[:READ_SIZE])
            del buf[:READ_SIZE]
            return data
        if p.exc is not None:
            raise httpcore.ReadError(f"{type(p.exc).__name__}: {p.exc}")
        return b""  # the peer closed the connection

    async def _write(self, data: bytes, timeout: float | None) -> None:
        p = self.p
        if p.transport is None or p.transport.is_closing() or p.exc is not None:
            raise httpcore.WriteError("the connection is closed")
        p.transport.write(data)
        if p.paused:  # the transport's buffer is over its high-water mark: wait until it drains
            await self._wait("drain", timeout, httpcore.WriteTimeout)
            if p.exc is not None or p.transport.is_closing():
                raise httpcore.WriteError("the connection closed while sending")

    async def _event(self, timeout: float | None) -> Any:
        """The next h11 event, reading as needed. Raises httpcore.RemoteProtocolError for a malformed or missing
        response, httpcore.ReadError / ReadTimeout from the socket."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(str(exc)) from None
            if event is h11.NEED_DATA:
                data = await self._read(timeout)
                if not data and self.h11.their_state is h11.SEND_RESPONSE:
                    raise httpcore.RemoteProtocolError("the server closed the connection without sending a response")
                try:
                    self.h11.receive_data(data)
                except h11.RemoteProtocolError as exc:
                    raise httpcore.RemoteProtocolError(str(exc)) from None
                continue
            if isinstance(event, h11.ConnectionClosed):
                raise httpcore.RemoteProtocolError("the server closed the connection before the response ended")
            return event

    async def send(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes,
                   timeout: float | None) -> None:
        """Send one request with a Content-Length body. Raises httpcore.WriteError / WriteTimeout."""
        hdrs = [*headers, (b"Content-Length", str(len(body)).encode("ascii"))]
        try:
            data = (self.h11.send(h11.Request(method=method, target=target, headers=hdrs))
                    + self.h11.send(h11.Data(data=body)) + self.h11.send(h11.EndOfMessage()))
        except h11.LocalProtocolError as exc:
            raise httpcore.LocalProtocolError(str(exc)) from None
        await self._write(data, timeout)

    async def head(self, timeout: float | None) -> tuple[int, Headers]:
        """Status and headers of the response (1xx interim responses skipped)."""
        while True:
            event = await self._event(timeout)
            if isinstance(event, h11.Response):
                return event.status_code, Headers(list(event.headers))
            if not isinstance(event, h11.InformationalResponse):
                raise httpcore.RemoteProtocolError(f"unexpected {type(event).__name__} before the response")

    async def body(self, timeout: float | None) -> AsyncIterator[bytes]:
        """The response body's pieces as they arrive; returns after the end of the message."""
        while True:
            event = await self._event(timeout)
            if isinstance(event, h11.Data):
                if event.data:
                    yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return

    def finish(self) -> bool:
        """After a complete response: ready the connection for the next request; False when it must be closed."""
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            self.idle_since = time.monotonic()
            return True
        return False


class _Body:
    """Async iterator over a streamed response body that records whether it reached the end of the message."""

    def __init__(self, conn: _Connection, timeout: float | None):
        self._gen = conn.body(timeout)
        self.complete = False

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._gen.__anext__()
        except StopAsyncIteration:
            self.complete = True
            raise

    async def aclose(self) -> None:
        await self._gen.aclose()

    async def drain(self, grace_s: float) -> None:
        """Read and drop the rest of the body if it ends within ``grace_s`` seconds (then :attr:`complete`)."""
        try:
            async with asyncio.timeout(grace_s):
                async for _ in self:
                    pass
        except (TimeoutError, httpcore.NetworkError, httpcore.TimeoutException, httpcore.ProtocolError):
            pass


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one origin (``http`` or ``https``); any number of requests at once (the
    caller bounds them), each on a connection of its own.

    Args:
        base_url: ``scheme://host[:port][/path][?query]``; request targets are ``path + suffix [+ ?query]``.
            Credentials in the URL are the caller's business (send them as a header).
        ssl_context: used for ``https`` (server name checked against the host).
        connect_timeout / read_timeout / write_timeout: seconds (None: wait forever); a read timeout is the longest
            wait for the next bytes, not for the whole response.
        max_idle: idle connections kept for reuse.

    Raises (from :meth:`request` and :meth:`stream`): httpcore.ConnectError, ConnectTimeout, ReadError, ReadTimeout,
    WriteError, WriteTimeout, RemoteProtocolError, LocalProtocolError.
    """

    def __init__(self, base_url: str, *, ssl_context: ssl.SSLContext | None = None, connect_timeout: float | None = 10.0,
                 read_timeout: float | None = 120.0, write_timeout: float | None = 120.0, max_idle: int = 32):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.https = parts.scheme == "https"
        host = parts.hostname
        self.host = host.encode("idna").decode("ascii") if not host.isascii() else host
        self.port = parts.port or (443 if self.https else 80)
        self.path = quote(parts.path.rstrip("/"), safe="/%!$&'()*+,;=:@-._~")  # percent-encoded, as httpx sends it
        # a query in the base URL (e.g. Azure's ?api-version=…) goes with every request
        self.query = "?" + quote(parts.query, safe="/?%!$&'()*+,;=:@-._~") if parts.query else ""
        try:
            ipaddress.ip_address(self.host)
            self._ip_literal = True
        except ValueError:
            self._ip_literal = False
        shown = f"[{self.host}]" if ":" in self.host else self.host  # Host header: host[:port], without credentials
        self.host_header = (shown + (f":{parts.port}" if parts.port else "")).encode("ascii")
        self.ssl_context = ssl_context if self.https else None
        if self.https and self.ssl_context is None:
            self.ssl_context = ssl.create_default_context()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self.max_idle = max_idle
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        kw: dict[str, Any] = {}
        if self.ssl_context is not None:
            kw.update(ssl=self.ssl_context, server_hostname=self.host)
        if not self._ip_literal and type(loop).__module__.startswith("asyncio"):
            # RFC 8305, as anyio's connect_tcp: "localhost" may name ::1 first. Not for an IP literal (one address,
            # nothing to race): CPython 3.11's racing code can drop a connected socket unclosed when cancelled.
            kw["happy_eyeballs_delay"] = 0.25
        try:
            async with asyncio.timeout(self.connect_timeout):
                _transport, protocol = await loop.create_connection(_Protocol, self.host, self.port, **kw)
        except TimeoutError:
            raise httpcore.ConnectTimeout("timed out") from None
        except OSError as exc:  # refused, unreachable, DNS, TLS handshake and certificate errors
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        conn = _Connection(protocol)
        self._open.add(conn)
        return conn

    async def _acquire(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable(now):
                return conn
            self._discard(conn)
        return await self._connect()

    def _release(self, conn: _Connection) -> None:
        if conn.finish() and len(self._idle) < self.max_idle:
            self._idle.append(conn)
        else:
            self._discard(conn)

    def _discard(self, conn: _Connection) -> None:
        conn.close()
        self._open.discard(conn)

    def _request_head(self, method: str, suffix: str,
                      headers: list[tuple[bytes, bytes]]) -> tuple[bytes, bytes, list[tuple[bytes, bytes]]]:
        target = (self.path + suffix + self.query).encode("ascii")
        return method.encode("ascii"), target, [(b"Host", self.host_header), *headers]

    async def request(self, method: str, suffix: str, headers: list[tuple[bytes, bytes]],
                      body: bytes) -> tuple[int, Headers, bytes]:
        """Send one request and read the whole response: ``(status, headers, body bytes as sent)``."""
        m, target, hdrs = self._request_head(method, suffix, headers)
        conn = await self._acquire()
        try:
            await conn.send(m, target, hdrs, body, self.write_timeout)
            status, head = await conn.head(self.read_timeout)
            data = b"".join([piece async for piece in conn.body(self.read_timeout)])
        except BaseException:
            self._discard(conn)  # also on cancellation: a half-read connection cannot carry another request
            raise
        self._release(conn)
        return status, head, data

    @contextlib.asynccontextmanager
    async def stream(self, method: str, suffix: str, headers: list[tuple[bytes, bytes]],
                     body: bytes) -> AsyncIterator[tuple[int, Headers, AsyncIterator[bytes]]]:
        """Send one request; yield ``(status, headers, body pieces)``. On a normal exit the rest of the body is read
        if it arrives within :data:`STREAM_DRAIN_S` (an SSE answer left at ``[DONE]``) and the connection is kept;
        a body not read to its end closes the connection (it cannot carry another request)."""
        m, target, hdrs = self._request_head(method, suffix, headers)
        conn = await self._acquire()
        pieces: _Body | None = None
        try:
            await conn.send(m, target, hdrs, body, self.write_timeout)
            status, head = await conn.head(self.read_timeout)
            pieces = _Body(conn, self.read_timeout)
            yield status, head, pieces
        except BaseException:
            self._discard(conn)
            raise
        else:
            if pieces is not None and not pieces.complete:
                try:
                    await pieces.drain(STREAM_DRAIN_S)
                except BaseException:  # cancelled while draining
                    self._discard(conn)
                    raise
        finally:
            if pieces is not None:
                await pieces.aclose()
        if pieces is not None and pieces.complete:
            self._release(conn)
        else:
            self._discard(conn)

    async def aclose(self) -> None:
        """Close every connection (idle or not)."""
        for conn in list(self._open):
            conn.close()
        self._open.clear()
        self._idle.clear()
