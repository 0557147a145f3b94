"""mtboard.llm's HTTP layer (httpx): keep-alive, content codings, charsets, credentials in the URL, TLS with
SSL_CERT_FILE, proxies from the environment (completions, streams, /models, model downloads), HTTP/2, pools,
cancellation. SSE framing is covered by the fixtures of test_llm_providers.py.

The servers here are hand-made test doubles (http.server / socketserver / asyncio streams) because a real
OpenAI-compatible server cannot be made to compress its answers, use Latin-1, close connections at chosen moments or
split events at chosen bytes; the proxy is a real one (pproxy, in its own process) and the HTTP/2 server is
hypercorn. Expected values are written by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from loopback import LoopbackServer, free_port, wait_for_port

from mtboard.llm import LLMClient, LLMRequest
from mtboard.llm import transport
from mtboard.core.schema import ErrorKind


class _Server(LoopbackServer):
    """``/v1/chat/completions`` answering 'Hola' as JSON or SSE, encoded as the test asks; records Authorization."""

    def __init__(self, *, coding: str = "identity", charset: str | None = None, text: str = "Hola"):
        self.auth: list[str | None] = []
        self.accept_encoding: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.auth.append(self.headers.get("Authorization"))
                outer.accept_encoding.append(self.headers.get("Accept-Encoding"))
                usage = {"prompt_tokens": 3, "completion_tokens": 1}
                if body.get("stream"):
                    events = [{"model": "m", "choices": [{"index": 0, "delta": {"content": text}}]},
                              {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                               "usage": usage}]
                    data = "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events).encode() + b"data: [DONE]\r\n\r\n"
                    ctype = "text/event-stream"
                else:
                    data = json.dumps({"model": "m", "usage": usage, "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]},
                        ensure_ascii=False)
                    try:
                        data = data.encode(charset or "utf-8")
                    except LookupError:  # not a text encoding (base64, rot13) or unknown: UTF-8 bytes
                        data = data.encode("utf-8")
                    ctype = "application/json" + (f"; charset={charset}" if charset else "")
                label = coding
                if coding == "gzip":
                    data = gzip.compress(data)
                elif coding == "gzip-lie":
                    label = "gzip"  # a plain body labelled gzip
                elif coding == "x-unknown":  # a coding httpx does not know: passed through undecoded
                    data = zlib.compress(data)
                elif coding == "deflate":
                    data = zlib.compress(data)
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                if coding != "identity":
                    self.send_header("Content-Encoding", label)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)


def _ask(url: str, *, stream: bool, key: str | None = None):
    async def go():
        async with LLMClient(url, key, concurrency=2, timeout_s=10, max_retries=0) as c:
            return await c.complete(LLMRequest(model="m", max_tokens=8, stream=stream,
                                               messages=[{"role": "user", "content": "Hello"}]))
    return asyncio.run(go())


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("coding", ["identity", "gzip", "deflate"])
def test_content_codings_are_decoded(coding, stream):
    """The client asks for identity; a server that compresses anyway is still understood."""
    with _Server(coding=coding, text="Hola, señor") as srv:
        res = _ask(srv.url, stream=stream)
    assert res.ok and res.text == "Hola, señor" and res.usage.prompt_tokens == 3, res.error
    assert srv.accept_encoding == ["identity"]


def test_unknown_content_coding_is_a_transport_failure():
    """httpx passes a coding it does not know through undecoded: the body is not JSON, a transport failure."""
    with _Server(coding="x-unknown") as srv:
        res = _ask(srv.url, stream=False)
    assert res.error_kind == ErrorKind.transport and "not JSON" in res.error, res.error


def test_a_body_that_is_not_gzip_although_it_says_so_is_a_transport_failure():
    with _Server(coding="gzip-lie") as srv:
        res = _ask(srv.url, stream=False)
    assert res.error_kind == ErrorKind.transport and res.error.startswith("DecodingError"), res.error


def test_response_charset_is_honoured():
    with _Server(charset="iso-8859-1", text="Año") as srv:
        res = _ask(srv.url, stream=False)
    assert res.ok and res.text == "Año"


def test_credentials_in_the_url_become_basic_auth_and_are_never_returned():
    with _Server() as srv:
        url = srv.url.replace("http://", "http://us%40er:p%3Ass@")
        res = _ask(url, stream=False, key="sk-bearer-ignored")
    # base64("us@er:p:ss"), as httpx sends for credentials in a URL (they win over the Bearer header)
    assert srv.auth == ["Basic dXNAZXI6cDpzcw=="]
    assert res.ok and "p%3Ass" not in json.dumps(res.raw_request)


class _RawServer:
    """A hand-made HTTP/1.1 server (socketserver) that misbehaves on purpose: ``close`` answers then closes the
    connection without saying so, ``silent`` never answers, ``drop`` closes without answering, ``slow`` waits
    before reading the request body; ``keep`` answers with Content-Length and keeps the connection open, ``chunked``
    likewise with a chunked body (``chunked_slow``: its second chunk 0.3 s later), ``sse`` with a one-event stream,
    ``bigheaders`` with 60 KB of headers in 1 KB pieces, ``trailing`` with a stray CRLF after the body."""

    def __init__(self, mode: str):
        import socketserver

        self.mode = mode
        self.connections = 0
        self.bodies: list[int] = []
        self.targets: list[str] = []
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer.connections += 1
                while True:
                    line = self.rfile.readline()
                    if not line:
                        return
                    outer.targets.append(line.split(b" ")[1].decode("ascii"))
                    length = 0
                    while (h := self.rfile.readline()) not in (b"\r\n", b""):
                        if h.lower().startswith(b"content-length:"):
                            length = int(h.split(b":")[1])
                    if outer.mode == "slow":  # let the client's socket buffer fill up first
                        threading.Event().wait(0.5)
                    outer.bodies.append(len(self.rfile.read(length)))
                    if outer.mode == "silent":
                        threading.Event().wait(3)
                        return
                    if outer.mode == "drop":
                        return
                    body = json.dumps({"model": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                                       "choices": [{"index": 0, "message": {"content": "Hola"},
                                                    "finish_reason": "stop"}]}).encode()
                    if outer.mode == "sse":  # an SSE answer; the body's end follows [DONE] 2 ms later
                        events = [{"model": "m", "choices": [{"index": 0, "text": "Hola", "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1}}]
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                         b"Transfer-Encoding: chunked\r\n\r\n")
                        for part in [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]:
                            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                        self.wfile.flush()
                        threading.Event().wait(0.002)
                        self.wfile.write(b"0\r\n\r\n")
                    elif outer.mode in ("chunked", "chunked_slow"):  # chunked body, two chunks flushed separately
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                         b"Transfer-Encoding: chunked\r\n\r\n")
                        for part in (body[:10], body[10:]):
                            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                            self.wfile.flush()
                            if outer.mode == "chunked_slow":
                                threading.Event().wait(0.3)
                        self.wfile.write(b"0\r\n\r\n")
                    elif outer.mode == "bigheaders":  # 60 KB of headers, sent in 1 KB pieces
                        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 990) for i in range(60))
                                + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
                        for i in range(0, len(head), 1024):
                            self.wfile.write(head[i:i + 1024])
                            self.wfile.flush()
                        self.wfile.write(body)
                    else:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                         + str(len(body)).encode() + b"\r\n\r\n" + body
                                         + (b"\r\n" if outer.mode == "trailing" else b""))
                    self.wfile.flush()
                    if outer.mode == "close":
                        return

        socketserver.ThreadingTCPServer.daemon_threads = True
        self.srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.srv.server_address[1]}/v1"

    def __enter__(self) -> _RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.srv.shutdown()
        self.srv.server_close()


def _sequential(url: str, prompts: list[str], stream: bool = False, **kw: Any) -> list:
    async def go():
        kw.setdefault("max_retries", 0)
        async with LLMClient(url, None, concurrency=1, **kw) as c:
            out = []
            for p in prompts:
                out.append(await c.complete(LLMRequest(model="m", max_tokens=8, prompt=p, check_truncation=False,
                                                       stream=stream)))
                await asyncio.sleep(0.05)  # let the server's close arrive before the next request
            return out
    return asyncio.run(go())


def test_a_connection_the_server_closed_while_idle_is_not_reused():
    with _RawServer("close") as srv:
        results = _sequential(srv.url, ["one", "two", "three"], timeout_s=5)
    assert [(r.ok, r.attempts) for r in results] == [(True, 1)] * 3, [r.error for r in results]
    assert srv.connections == 3


@pytest.mark.parametrize("mode,expected", [("silent", "ReadTimeout before any byte"),
                                           ("drop", "RemoteProtocolError before any byte")])
def test_no_answer_is_a_transport_failure(mode, expected):
    with _RawServer(mode) as srv:
        (res,) = _sequential(srv.url, ["x"], timeout_s=0.5)
    assert res.error_kind == ErrorKind.transport and res.error.startswith(expected), res.error


def test_a_large_body_is_sent_whole():
    """An 8 MB prompt to a server that starts reading late fills the socket buffers: the write waits for them to
    drain instead of failing or truncating."""
    prompt = "palabra " * 1_000_000
    with _RawServer("slow") as srv:
        (res,) = _sequential(srv.url, [prompt], timeout_s=10)
    assert res.ok, res.error
    assert srv.bodies == [len(json.dumps({"model": "m", "prompt": prompt, "max_tokens": 8},
                                         separators=(",", ":")).encode())]


def test_connection_refused_names_the_error():
    (res,) = _sequential("http://127.0.0.1:9/v1", ["x"], timeout_s=1)
    assert res.error_kind == ErrorKind.transport and res.error.startswith("ConnectError before any byte")


# ----------------------------------------------------------------------------------------------------------------------
# connection handling: keep-alive, chunked bodies, expiry, TLS

@pytest.mark.parametrize("mode", ["keep", "chunked", "sse", "bigheaders"])
def test_keep_alive_connections_are_reused(mode):
    """Also a streamed answer left at [DONE] (the body's end read just after) and a response with 60 KB of headers
    arriving in pieces."""
    with _RawServer(mode) as srv:
        results = _sequential(srv.url, ["one", "two", "three"], stream=mode == "sse", timeout_s=5)
    assert [(r.ok, r.text, r.attempts) for r in results] == [(True, "Hola", 1)] * 3, [r.error for r in results]
    assert srv.connections == 1


def test_a_stray_crlf_after_a_body_costs_one_retry_on_a_new_connection():
    """A server writing a CRLF after a Content-Length body breaks the next answer on that connection (httpx reads it
    as a missing response line): a transport failure, retried on a fresh connection."""
    with _RawServer("trailing") as srv:
        results = _sequential(srv.url, ["one", "two", "three"], timeout_s=5, max_retries=1, backoff_base_s=0.01)
    assert [r.ok for r in results] == [True] * 3, [r.error for r in results]
    assert [r.attempts for r in results] == [1, 2, 2] and srv.connections == 3


def test_an_idle_connection_past_the_keep_alive_expiry_is_not_reused(monkeypatch):
    monkeypatch.setattr(transport, "KEEPALIVE_EXPIRY_S", 0.01)  # _sequential waits 50 ms between requests
    with _RawServer("keep") as srv:
        results = _sequential(srv.url, ["one", "two"], timeout_s=5)
    assert [r.ok for r in results] == [True, True] and srv.connections == 2


def test_the_keep_alive_expiry_is_below_the_local_servers_idle_timeout():
    """uvicorn (llama-cpp-python) and llama.cpp close idle connections after 5 s."""
    assert transport.KEEPALIVE_EXPIRY_S < 5.0


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 made with the openssl command line (a test fixture, valid 2 days)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl command not found")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "key.pem"),
                    "-out", str(d / "cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"


class _TLSServer(_Server):
    def __init__(self, cert, key, **kw: Any):
        import ssl

        super().__init__(**kw)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)

    @property
    def url(self) -> str:
        return super().url.replace("http://", "https://")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_https_endpoint_with_a_trusted_certificate(tls_files, monkeypatch, stream):
    cert, key = tls_files
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # honoured as httpx honours it (corporate CAs, local proxies)
    with _TLSServer(cert, key, text="Hola, señor") as srv:
        res = _ask(srv.url, stream=stream, key="sk-tls-test")
    assert res.ok and res.text == "Hola, señor", res.error
    assert srv.auth == ["Bearer sk-tls-test"]


def test_https_endpoint_with_an_untrusted_certificate_is_refused(tls_files, monkeypatch):
    cert, key = tls_files
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with _TLSServer(cert, key) as srv:
        res = _ask(srv.url, stream=False, key="sk-tls-test")
    assert res.error_kind == ErrorKind.transport
    assert res.error.startswith("ConnectError before any byte") and "CERTIFICATE_VERIFY_FAILED" in res.error
    assert srv.auth == []  # nothing was sent to a server whose certificate failed


@pytest.mark.parametrize("charset", ["base64", "rot13", "no-such-codec"])
def test_a_charset_that_is_not_a_text_encoding_falls_back_to_utf8(charset):
    with _Server(charset=charset, text="Hola, señor") as srv:
        srv_charset_body = srv  # the body is encoded as UTF-8 (the handler falls back for unknown codecs)
        res = _ask(srv_charset_body.url, stream=False)
    assert res.ok and res.text == "Hola, señor", res.error


def test_base_url_path_query_and_credentials_are_split_for_httpx():
    assert transport.split_base_url("https://h.example/openai/v1?api-version=2024-10-21") == (
        "https://h.example/openai/v1", None, [("api-version", "2024-10-21")])
    url, auth, params = transport.split_base_url("http://us%40er:p%3Ass@[::1]:8080/v1")
    assert (url, params) == ("http://[::1]:8080/v1", []) and auth is not None
    assert transport.normalise_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1"
    assert transport.normalise_base_url("http://127.0.0.1:8080?x=1") == "http://127.0.0.1:8080/v1?x=1"


def test_a_base_url_path_is_percent_encoded_and_its_query_sent_with_every_request():
    with _RawServer("keep") as srv:
        url = srv.url.replace("/v1", "/gateway ü/v1") + "?api-version=2024-10-21"
        (res,) = _sequential(url, ["x"], timeout_s=5)
    assert res.ok, res.error
    assert srv.targets == ["/gateway%20%C3%BC/v1/completions?api-version=2024-10-21"]


@pytest.mark.parametrize("key", ["sk-abc\n-tail", "sk-abc def", "sk-ab\x7fc", "sk-ñ"])
def test_an_api_key_an_http_header_cannot_carry_is_refused_without_echoing_it(key):
    from mtboard.core.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        LLMClient("http://127.0.0.1:9/v1", key)
    assert "sk-" not in str(err.value) and "API key" in str(err.value)


def test_surrounding_whitespace_of_an_api_key_is_dropped():
    with _Server() as srv:
        res = _ask(srv.url, stream=False, key="  sk-spaced\n")
    assert res.ok and srv.auth == ["Bearer sk-spaced"]


def test_requests_cancelled_while_connecting_leave_no_connection_open():
    """Cancelling requests at every moment of their connect (as the runner does on Ctrl-C or a fatal error) leaves no
    TCP connection open once the client is closed (no socket waiting for the garbage collector)."""
    open_now = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_now[0] += 1
        try:
            await reader.read()  # until the client closes
        finally:
            open_now[0] -= 1
            writer.close()

    async def go() -> int:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        client = LLMClient(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", None, timeout_s=5,
                           concurrency=4, max_retries=0)
        for i in range(120):
            task = asyncio.ensure_future(client.complete(LLMRequest(model="m", max_tokens=8, prompt="x")))
            await asyncio.sleep((i % 40) * 0.00005)
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        await client.aclose()
        await asyncio.sleep(0.3)
        left = open_now[0]
        server.close()
        return left

    assert asyncio.run(go()) == 0


# ----------------------------------------------------------------------------------------------------------------------
# Proxies from the environment (a real proxy, pproxy, in its own process) and HTTP/2 (hypercorn)

@pytest.fixture
def http_proxy(tmp_path):
    """pproxy listening on a free loopback port; yields (proxy URL, function returning the targets it connected
    to, from its log: ``http 127.0.0.1:PORT -> HOST:PORT``)."""
    import subprocess
    import sys
    import time

    port = free_port()
    log = tmp_path / "proxy.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "pproxy", "-l", f"http://127.0.0.1:{port}", "-v"],
                                stdout=fh, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc, "pproxy")

        def targets() -> list[str]:
            time.sleep(0.1)  # its log is written as connections are made
            return [line.split(" -> ")[1].strip() for line in log.read_text().splitlines() if " -> " in line]

        yield f"http://127.0.0.1:{port}", targets
    finally:
        proc.terminate()
        proc.wait(10)


def _clear_proxy_env(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "no_proxy"):
        monkeypatch.delenv(var, raising=False)


def test_a_run_goes_through_the_proxy_given_in_the_environment_and_no_proxy_bypasses_it(tmp_path, monkeypatch,
                                                                                     http_proxy):
    """``mtboard run`` (the runner, the openai backend, the client) with only ``HTTP_PROXY`` set: every request
    reaches the server through the proxy; with ``NO_PROXY`` naming the host, none does."""
    from fake_openai_server import FakeServer
    from test_runner_faults import settings, write_corpus

    from mtboard.run.runner import run

    proxy_url, targets = http_proxy
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["Good morning.", "Open the door.", "It is late."])
    _clear_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    with FakeServer() as srv:
        outcome = run(settings(tmp_path, srv, work_dir=tmp_path / "via-proxy"))
        host = f"127.0.0.1:{srv.port}"
        seen = targets()
        assert seen and set(seen) == {host}, seen
        assert sum(srv.counts.values()) == 3
        assert [(r.predicted, r.chrf_score) for r in outcome.card.results] == [
            ("ES Good morning.", 100.0), ("ES Open the door.", 100.0), ("ES It is late.", 100.0)]
        n = len(seen)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        run(settings(tmp_path, srv, work_dir=tmp_path / "direct"))
        assert sum(srv.counts.values()) == 6 and len(targets()) == n  # straight to the server this time


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_https_through_a_proxy_tunnel_with_a_ca_from_ssl_cert_file(tls_files, monkeypatch, http_proxy, stream):
    """``HTTPS_PROXY`` + ``SSL_CERT_FILE``: a CONNECT tunnel through the proxy, TLS verified with the given CA."""
    cert, key = tls_files
    proxy_url, targets = http_proxy
    _clear_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTPS_PROXY", proxy_url)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with _TLSServer(cert, key, text="Hola, señor") as srv:
        res = _ask(srv.url, stream=stream, key="sk-tls-proxy")
        port = srv.httpd.server_address[1]
    assert res.ok and res.text == "Hola, señor", res.error
    assert targets() == [f"127.0.0.1:{port}"] and srv.auth == ["Bearer sk-tls-proxy"]


def test_a_proxy_that_is_down_is_a_transport_failure_naming_the_proxy(monkeypatch):
    _clear_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    (res,) = _sequential("http://127.0.0.1:8/v1", ["x"], timeout_s=2)
    assert res.error_kind == ErrorKind.transport and res.error.startswith("ConnectError before any byte"), res.error


def test_trust_env_off_ignores_proxies_for_servers_mtboard_starts(monkeypatch):
    _clear_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with _RawServer("keep") as srv:
        (res,) = _sequential(srv.url, ["x"], timeout_s=5, trust_env=False)
    assert res.ok and res.text == "Hola", res.error


def test_a_socks_proxy_without_socksio_is_a_configuration_error(monkeypatch):
    import importlib.util

    from mtboard.core.errors import ConfigError

    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed: SOCKS proxies work")
    _clear_proxy_env(monkeypatch)
    monkeypatch.setenv("ALL_PROXY", "socks5://user:secret@127.0.0.1:1080")
    with pytest.raises(ConfigError) as err:
        LLMClient("https://api.example.com/v1", None)
    assert "socksio" in str(err.value) and "secret" not in str(err.value)


def test_http2_with_an_https_endpoint_when_h2_is_installed(tls_files, monkeypatch, tmp_path):
    """A real HTTP/2 server (hypercorn, TLS with ALPN h2) serving a tiny ASGI app: the answer arrives over HTTP/2,
    streamed and whole."""
    pytest.importorskip("h2")
    pytest.importorskip("hypercorn")
    import subprocess
    import sys

    cert, key = tls_files
    app = tmp_path / "h2app.py"
    app.write_text('''
import json

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    req = json.loads(body or b"{}")
    proto = scope["http_version"]
    if req.get("stream"):
        data = ("data: " + json.dumps({"model": proto, "choices": [{"index": 0, "delta": {"content": "Hola"},
                "finish_reason": "stop"}]}) + "\\n\\ndata: [DONE]\\n\\n").encode()
        ctype = b"text/event-stream"
    else:
        data = json.dumps({"model": proto, "choices": [{"index": 0, "message": {"content": "Hola"},
                           "finish_reason": "stop"}]}).encode()
        ctype = b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype)]})
    await send({"type": "http.response.body", "body": data})
''')
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hypercorn", "--certfile", str(cert), "--keyfile", str(key),
                             "-b", f"127.0.0.1:{port}", "h2app:app"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, "hypercorn")
        _clear_proxy_env(monkeypatch)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        url = f"https://127.0.0.1:{port}/v1"
        for stream in (False, True):
            res = _ask(url, stream=stream)
            assert res.ok and res.text == "Hola" and res.model_id == "2", (stream, res.error)
        res = _sequential(url, ["x"], timeout_s=5, http2=False)[0]
        assert res.ok and res.model_id == "1.1"
    finally:
        proc.terminate()
        proc.wait(10)


def test_lanes_are_split_over_small_pools_and_leased_to_the_least_busy():
    made: list[int] = []
    pools = transport.Pools(20, lambda n: made.append(n) or object())
    assert made == [8, 8, 7]  # ceil(20 / 8) = 3 pools of 7, 7 and 6 lanes, plus one connection each
    with pools.lease() as a, pools.lease() as b, pools.lease() as c, pools.lease() as d:
        assert [a, b, c] == pools.clients and d is pools.clients[0]
    with pools.lease() as e:
        assert e is pools.clients[0]


def test_model_downloads_go_through_the_proxy_given_in_the_environment(tmp_path, http_proxy):
    """GGUF downloads (huggingface_hub, whose client is httpx-family) read the same proxy variables: with
    ``HTTP_PROXY`` set, the request for the file reaches the proxy (which cannot resolve the made-up hub host, so the
    download then fails with one BackendError line)."""
    import os
    import subprocess
    import sys

    proxy_url, targets = http_proxy
    env = {k: v for k, v in os.environ.items() if k.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                                                     "NO_PROXY")}
    env.update(HF_ENDPOINT="http://hub.example.invalid", HTTP_PROXY=proxy_url, HF_HUB_CACHE=str(tmp_path / "hf"))
    code = ("from mtboard.backends.gguf import parse_model_ref, resolve_model\n"
            "try:\n"
            f"    resolve_model(parse_model_ref('someone/model-GGUF@{'a' * 40}/m.gguf'), cache_dir={str(tmp_path)!r})\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "BackendError", out.stderr[-2000:]
    assert "hub.example.invalid:80" in targets()
