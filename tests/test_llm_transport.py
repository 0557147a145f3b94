"""mtboard.llm's direct httpcore path: what httpx used to do for it (line splitting of streams, response charsets,
content codings, credentials in the URL) still happens, byte for byte.

The server here is a hand-made test double (http.server) because a real OpenAI-compatible server cannot be made to
compress its answers, use Latin-1 or split lines at chosen bytes; expected values are written by hand.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mtboard.llm import LLMClient, LLMRequest, _Lines
from mtboard.schema import ErrorKind


async def _collect(chunks: list[bytes]) -> list[str]:
    async def gen():
        for c in chunks:
            yield c
    return [line async for line in _Lines(gen())]


@pytest.mark.parametrize("chunks,lines", [
    ([b"a\nb\n"], ["a", "b"]),
    ([b"a\r\nb\r\n"], ["a", "b"]),
    ([b"a\rb\r"], ["a", "b"]),
    ([b"a\r", b"\nb"], ["a", "b"]),               # CRLF split across chunks: one line ending, not two
    ([b"da", b"ta: x", b"\n\n"], ["data: x", ""]),  # a line split across chunks; the blank event separator kept
    ([b"tail without newline"], ["tail without newline"]),
    ([b"\xc3", b"\xb1o\n"], ["ño"]),              # a UTF-8 character split across chunks
    ([b"bad \xff\n"], ["bad \ufffd"]),             # invalid UTF-8 replaced, as httpx does
    ([b""], []),
    ([], []),
])
def test_line_splitting(chunks, lines):
    assert asyncio.run(_collect(chunks)) == lines


class _Server:
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
                        ensure_ascii=False).encode(charset or "utf-8")
                    ctype = "application/json" + (f"; charset={charset}" if charset else "")
                if coding == "gzip":
                    data = gzip.compress(data)
                elif coding == "deflate":
                    data = zlib.compress(data)
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                if coding != "identity":
                    self.send_header("Content-Encoding", coding)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


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


def test_unsupported_content_coding_is_a_transport_failure():
    with _Server(coding="br") as srv:
        res = _ask(srv.url, stream=False)
    assert res.error_kind == ErrorKind.transport and "unsupported Content-Encoding 'br'" in res.error


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
