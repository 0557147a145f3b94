"""Two documented behaviours (issue 13, part 3): ``mtboard --version`` prints the version and exits 0; an
``openai:`` method without ``--base-url`` or ``OPENAI_BASE_URL`` uses OpenAI's API (README: "default endpoint
https://api.openai.com/v1"). Nothing is sent anywhere."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from typer.testing import CliRunner

from mtboard import __version__
from mtboard.backends.base import parse_method
from mtboard.backends.openai import DEFAULT_BASE_URL, OpenAIBackend
from mtboard.cli import app
from mtboard.errors import ConfigError


def test_version_prints_the_version_and_exits_0():
    res = CliRunner().invoke(app, ["--version"])
    assert (res.exit_code, res.output) == (0, f"{__version__}\n")


def test_openai_default_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-endpoint-test")
    assert DEFAULT_BASE_URL == "https://api.openai.com/v1"
    OpenAIBackend.check_environment(None)  # the key is there: no ConfigError
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="no API key for api.openai.com: OPENAI_API_KEY is not set"):
        OpenAIBackend.check_environment(None)
    OpenAIBackend.check_environment("http://127.0.0.1:8080/v1")  # a local server needs no key
    with pytest.raises(ConfigError, match="base URL is not an http"):
        OpenAIBackend.check_environment("ftp://example.org")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-endpoint-test")
    backend = OpenAIBackend(parse_method("openai:gpt-4.1-mini"))
    backend.start()
    try:
        assert backend.client.base_url == "https://api.openai.com/v1"
        assert backend.client.api_provider == "openai"
        assert backend.describe().endpoint_host_sha256 == hashlib.sha256(b"api.openai.com").hexdigest()
    finally:
        asyncio.run(backend.aclose())
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert OpenAIBackend(parse_method("openai:m")).describe().endpoint_host_sha256 == hashlib.sha256(
        b"127.0.0.1").hexdigest()
