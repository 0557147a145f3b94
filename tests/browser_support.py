"""Shared pieces of the real-browser site tests (issue 7, issue 12): Debian's Chromium and its flags, a quiet static
HTTP server on a free loopback port, and the body of the ``browser`` fixture (tests/conftest.py: one Chromium per
module)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A static file handler that writes no access log."""

    def log_message(self, *args):  # noqa: D102
        pass


@contextlib.contextmanager
def serving(directory: Path, handler: type[http.server.SimpleHTTPRequestHandler] = QuietHandler) -> Iterator[int]:
    """Serve ``directory`` (read per request: it may be filled after the server starts) on 127.0.0.1; yields the
    port; the server is shut down on exit."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def browser_session():
    """Generator body of the ``browser`` fixture (tests/conftest.py): one headless Chromium, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
