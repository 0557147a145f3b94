"""Why a connection failed, and the fix for that case (review of issues 13-24, F13): a host name that does not
resolve, a proxy that refuses to tunnel (naming the proxy variable), a closed port on this machine, a proxy that
cannot be reached — each its own problem and fix, not "start the server" for all of them.

Real failures, no mocks: ``.invalid`` names never resolve (RFC 6761), port 1 on 127.0.0.1 is closed, and the proxy is
a hand-made loopback CONNECT handler that answers 403 (nothing leaves this machine).
"""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Iterator

import httpx
import pytest

import cli_support
from mtboard.llm.policy import connect_failure, proxy_variable

ES = str(Path(__file__).resolve().parents[1] / "corpora" / "mtb-en-es-dev.json")


def _exc(url: str, proxy: str | None = None) -> BaseException:
    try:
        httpx.get(url, proxy=proxy, timeout=10, trust_env=False)
    except httpx.HTTPError as exc:
        return exc
    raise AssertionError("connected")


@pytest.fixture()
def refusing_proxy() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_CONNECT(self) -> None:  # noqa: N802
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def test_each_failure_has_its_own_problem_and_fix(refusing_proxy: str) -> None:
    dns = connect_failure(_exc("https://api.example.invalid/v1/models"), "https://api.example.invalid/v1", {})
    assert dns[0].startswith("the host name 'api.example.invalid' does not resolve (")
    assert dns[1].startswith("check the host name") and "DNS" in dns[1] and "start the server" not in dns[1]

    local = connect_failure(_exc("http://127.0.0.1:1/v1/models"), "http://127.0.0.1:1/v1", {})
    assert local == ("nothing listens on 127.0.0.1:1 on this machine ([Errno 111] Connection refused)",
                     "start the server, or check the port in --base-url / the *_BASE_URL variable")

    env = {"HTTPS_PROXY": refusing_proxy}
    proxied = connect_failure(_exc("https://api.openai.com/v1/models", proxy=refusing_proxy),
                              "https://api.openai.com/v1", env)
    assert proxied[0] == "the proxy in HTTPS_PROXY refused to connect to api.openai.com:443 (403 Forbidden)"
    assert proxied[1].startswith("check HTTPS_PROXY") and "NO_PROXY" in proxied[1]
    assert refusing_proxy not in proxied[0] + proxied[1]  # a proxy URL can hold a password

    gone = connect_failure(_exc("https://api.openai.com/v1/models", proxy="http://127.0.0.1:1"),
                           "https://api.openai.com/v1", {"https_proxy": "http://127.0.0.1:1"})
    assert gone[0].startswith("cannot reach the proxy in https_proxy on the way to api.openai.com:443")


def test_proxy_variable() -> None:
    assert proxy_variable("https://api.openai.com/v1", {"HTTPS_PROXY": "http://p:3128"}) == "HTTPS_PROXY"
    assert proxy_variable("https://api.openai.com/v1", {"https_proxy": "x", "ALL_PROXY": "y"}) == "https_proxy"
    assert proxy_variable("http://h:8000/v1", {"HTTPS_PROXY": "x", "ALL_PROXY": "y"}) == "ALL_PROXY"
    assert proxy_variable("https://api.openai.com/v1", {"HTTPS_PROXY": "x", "NO_PROXY": "openai.com"}) is None
    assert proxy_variable("http://localhost:8080/v1", {"ALL_PROXY": "x"}) is None
    assert proxy_variable("https://api.openai.com/v1", {}) is None


NO_PROXY_ENV = ("OPENAI_", "HTTP", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")
"""Variables removed for a run here: the test decides which proxy (if any) is in force."""


def test_run_says_which_failure(refusing_proxy: str, tmp_path: Path) -> None:
    key = {"OPENAI_API_KEY": "sk-test-not-a-key"}
    p = cli_support.invoke(["run", ES, "--method", "openai:gpt-4o-mini", "--base-url", "https://api.example.invalid/v1",
                            "--limit", "1", "--work-dir", str(tmp_path / "w-dns")], env=key, unset=NO_PROXY_ENV)
    assert p.returncode == 1
    assert "cannot connect to the endpoint: the host name 'api.example.invalid' does not resolve" in p.stderr
    assert "start the server" not in p.stderr and "fix: check the host name in --base-url / OPENAI_BASE_URL" in p.stderr
    p = cli_support.invoke(["run", ES, "--method", "openai:gpt-4o-mini", "--limit", "1", "--work-dir",
                            str(tmp_path / "w-proxy")], env={**key, "HTTPS_PROXY": refusing_proxy}, unset=NO_PROXY_ENV)
    assert p.returncode == 1
    assert "the proxy in HTTPS_PROXY refused to connect to api.openai.com:443 (403 Forbidden)" in p.stderr
    assert "fix: check HTTPS_PROXY" in p.stderr
    p = cli_support.invoke(["run", ES, "--method", "openai:m", "--base-url", "http://127.0.0.1:1/v1", "--limit", "1",
                            "--work-dir", str(tmp_path / "w-local")], unset=NO_PROXY_ENV)
    assert p.returncode == 1 and "nothing listens on 127.0.0.1:1 on this machine" in p.stderr
    assert "fix: start the server, or check the port in --base-url / OPENAI_BASE_URL" in p.stderr
