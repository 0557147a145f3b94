"""A threaded HTTP server on a free loopback port, for tests' hand-made fake endpoints (fault injection and scripted
answers only; real backends are tested against real servers)."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable


class _CountingHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that counts the requests it has accepted and not finished handling."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.active = 0
        self.active_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.active_lock:
            self.active += 1
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.active_lock:
                self.active -= 1


POLL_S = 0.02
"""How often a test server's loop looks for ``shutdown()`` (:meth:`socketserver.BaseServer.serve_forever`)."""


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1:<free port> in a daemon thread while used as a context manager.
    ``url`` is the OpenAI-style base URL (``…/v1``)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.httpd = _CountingHTTPServer(("127.0.0.1", 0), handler)
        # shutdown() waits for the serving loop to look up: every poll_interval (0.5 s by default, half a second
        # of every test that starts a server — 134 of them in test_server_text_boundary.py alone)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_S},
                                       daemon=True)

    def settle(self, quiet_s: float = 0.3, timeout_s: float = 30.0) -> None:
        """Wait until every connection a client opened has been handled: nothing waits to be accepted and no
        handler runs, for ``quiet_s`` seconds in a row. A client that stops while a request is in flight (a run
        that ends at a gate with concurrency > 1) leaves that request to be handled after it returns; read request
        counts after this. Raises TimeoutError after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        quiet_since = None
        while True:
            pending = select.select([self.httpd.socket], [], [], 0)[0]
            with self.httpd.active_lock:
                busy = self.httpd.active > 0 or bool(pending)
            now = time.monotonic()
            if busy:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                return
            if now > deadline:
                raise TimeoutError(f"loopback server still busy after {timeout_s:g} s")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout_s: float = 20.0) -> None:
    """Wait until ``proc`` (a server process) accepts connections on ``port``. Raises RuntimeError naming ``what``
    when it exits or does not listen within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.05)


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive (HTTP/1.1) request handler that logs nothing, with one way to answer: :meth:`send_body`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def send_body(self, status: int, data: bytes | str, content_type: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
        """Answer ``status`` with ``data`` (str is UTF-8 encoded), a Content-Length and ``headers``."""
        raw = data.encode() if isinstance(data, str) else data
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self.send_body(status, json.dumps(obj), "application/json", headers)


class ChatServer(LoopbackServer):
    """A scripted OpenAI-compatible chat server: ``GET /models`` lists model ``m``; every ``POST`` answers
    ``answer(last message's content)`` as one non-streamed chat completion (finish_reason ``stop``) with ``usage``
    (None: no usage object, as some providers send)."""

    def __init__(self, answer: Callable[[str], str], usage: dict[str, int] | None = None) -> None:
        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m", "owned_by": "test"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                content = answer(body["messages"][-1]["content"])
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "m", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    **({"usage": usage} if usage is not None else {})})

        super().__init__(Handler)


def write_handmade_corpus(path: Path, dataset_id: str, pairs: list[tuple[str, str]], created: str = "2026-12-01") -> Path:
    """Write a small hand-made EN→ES corpus (test fixture, not evaluation data) of (source, reference) ``pairs`` to
    ``path`` (parents made); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "dataset": {"id": dataset_id, "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
                    "target_language": "es", "created": created, "license": "CC0-1.0", "provenance": ["elicited"]},
        "entries": [{"id": i + 1, "source": s, "reference": r} for i, (s, r) in enumerate(pairs)]},
        ensure_ascii=False), encoding="utf-8")
    return path
