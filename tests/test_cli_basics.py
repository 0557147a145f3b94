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
from mtboard.cli.main import app
from mtboard.core.errors import ConfigError


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


def test_backends_and_doctor_are_readable_without_a_terminal() -> None:
    # F18: rich's width without a terminal is 80, which wrapped the meaning column to a word or two per line.
    import cli_support
    from mtboard.cli.app import PIPE_WIDTH

    p = cli_support.invoke(["backends"], unset=("COLUMNS",))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(ln) for ln in lines) == PIPE_WIDTH == 160
    assert any(ln.strip() == "n_ctx                int                                   2048         Context size "
               "(tokens) the server is started with (JA→EN write-up: -c 2048)." for ln in lines)
    assert any("Parallel APY requests ($APERTIUM_APY_URL)." in ln for ln in lines)
    p = cli_support.invoke(["backends"], env={"COLUMNS": "100"})
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 100  # an explicit width is kept
    p = cli_support.invoke(["doctor"], unset=("COLUMNS",))
    table = p.stdout.split("\n\n")[0].splitlines()
    assert p.returncode == 0 and 100 < max(len(ln) for ln in table) <= 160


@pytest.mark.parametrize("args, stderr_too", [
    (["schema", "run-card"], False), (["schema", "run-card"], True),
    # validating a committed folder: 6.8 CPU-s, 10 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
    pytest.param(["validate", "submissions/mtb-en-ca-dev"], False, marks=pytest.mark.slow),
    # submitting a committed card (validated first): 2.8 CPU-s, 4 s in the fast lane (docs/TESTING.md: which lane)
    pytest.param(["submit", "submissions/mtb-en-ca-dev/apertium-eng-cat__default__8ca0b3e02be0.json", "--dry-run"],
                 False, marks=pytest.mark.slow)],
    ids=["schema", "schema-2>&1", "validate", "submit"])
def test_a_closed_pipe_exits_quietly(args, stderr_too, tmp_path):
    """``mtboard … | head -1``: the reader is gone before mtboard writes. A real pipe (subprocess): its read end is
    closed at once, so the first write hits EPIPE. As the ``signal`` module docs recommend for SIGPIPE, the CLI points
    stdout at os.devnull and exits 1 — no traceback, no "internal error", no "Exception ignored" at shutdown; also
    when stderr is the same closed pipe (``2>&1 | head``)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if args[0] == "submit":  # into an empty root: submit --dry-run prints the destination and the commands
        (tmp_path / "repo" / "submissions").mkdir(parents=True)
        args = [*args, "--root", str(tmp_path / "repo"), "--corpora", str(root / "corpora")]
    r, w = os.pipe()
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", "from mtboard.cli.main import app; app()", *args], cwd=root,
                                stdout=w, stderr=w if stderr_too else err)
        os.close(w)
        os.close(r)  # the reader is gone (head -1 after its line; here before the first)
        rc = proc.wait(timeout=300)
    assert rc == 1  # not 120 (Python's code when the final flush of stdout fails) nor a traceback's
    if not stderr_too:
        assert err_path.read_text() == ""
