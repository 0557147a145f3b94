"""A single-slot server busy generating (review of issues 13-24, F2): llama-cpp-python does not answer ``/v1/models``
while it works through queued requests (right after a Ctrl-C too). The probe asks again with a backoff for a bounded
time (the client's ``timeout_s``), and when the server never answers, the missing identity is said on stderr, in the
run summary and in report.md, and a judge whose server could not be asked counts by its typed name only.

The server is a hand-made stand-in with llama-cpp-python's documented shapes (``owned_by: me``, ``Server: uvicorn``,
the model's path as its id, ``/openapi.json``) that holds every GET while it is "busy" (fault injection: the real
server's busyness cannot be timed in a test). The corpus is a hand-made fixture, not evaluation data.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.llm import LLMClient, client as llm_client
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run

GGUF = "/models/gemma-3-270m-it-Q4_K_M.gguf"


class BusyServer(LoopbackServer):
    """GETs wait until ``busy_s`` seconds after the first GET arrived, then answer; completions answer at once. (The
    window opens at the first request, not when the server is made: on a loaded machine the run took more than the
    window to reach its first probe, which was then answered at once — a flaky ``model_gets == 1`` in CI.)"""

    def __init__(self, busy_s: float):
        self.busy_s = busy_s
        self.busy_until: float | None = None
        self.lock = threading.Lock()
        self.model_gets = 0
        self.closing = threading.Event()
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                with outer.lock:
                    outer.model_gets += self.path == "/v1/models"
                    if outer.busy_until is None:
                        outer.busy_until = time.monotonic() + outer.busy_s
                while time.monotonic() < outer.busy_until and not outer.closing.is_set():
                    time.sleep(0.05)
                try:
                    if self.path == "/v1/models":
                        self.send_json(200, {"object": "list", "data": [{"id": GGUF, "object": "model",
                                                                         "owned_by": "me"}]},
                                       {"Server": "uvicorn"})
                    elif self.path == "/openapi.json":
                        self.send_json(200, {"openapi": "3.1.0", "info": {"title": "llama", "version": "0.3.16"}})
                    else:
                        self.send_json(404, {"error": "not found"})
                except OSError:  # the client gave up on this try
                    pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = "ES " + body["messages"][-1]["content"]
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": GGUF, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 3}}, {"Server": "uvicorn"})

        super().__init__(Handler)

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        super().__exit__(*exc)


def _settings(tmp_path: Path, url: str, timeout_s: float) -> RunSettings:
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-busy-test",
                                   [("Good morning.", "ES Good morning."), ("Thank you.", "ES Thank you.")])
    return RunSettings(corpus_path=corpus, method="openai:gemma-3-270m", prompt="source-only", base_url=url,
                       work_dir=tmp_path / "w", timeout_s=timeout_s)


def test_a_busy_server_is_asked_again_until_it_names_its_weights(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_client, "PROBE_TRY_S", 0.5)  # tries of 0.5 s (15 s in use) to keep the test short
    with BusyServer(busy_s=2.0) as srv:
        outcome = run(_settings(tmp_path, srv.url, timeout_s=10))
    card = outcome.card
    assert srv.model_gets >= 2  # /models timed out at least once and was asked again
    assert (card.model_slug, card.model_id, card.method.api_provider, card.method.engine_version) == (
        "gemma-3-270m-it-Q4_K_M.gguf", "gemma-3-270m-it-Q4_K_M.gguf", "llama-cpp-python", "llama-cpp-python 0.3.16")
    assert outcome.translated.description.identity_note is None


def test_a_server_that_never_answers_is_said_so_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_client, "PROBE_TRY_S", 0.5)
    from mtboard.cli.run import _summary
    from mtboard.run.runner import finish, prepare, translate_all

    notices: list[str] = []
    with BusyServer(busy_s=600) as srv:
        plan = prepare(_settings(tmp_path, srv.url, timeout_s=2))
        t0 = time.monotonic()
        translated = asyncio.run(translate_all(plan, notice=notices.append))
        took = time.monotonic() - t0
        outcome = finish(translated)
    assert 2.0 <= took < 6  # the bounded patience (timeout_s = 2 s), not forever
    card = outcome.card
    # the card keeps to its fields: the declared name, the generic provider, no weights hash or engine
    assert (card.model_slug, card.method.api_provider, card.method.model_file_sha256, card.method.engine_version) \
        == ("gemma-3-270m", "openai-compatible", None, None)
    note = translated.description.identity_note
    assert note is not None and note.startswith("the server did not answer GET /models (")
    assert "still generating?): the card names the model as typed ('gemma-3-270m', provider openai-compatible)" in note
    assert notices == [f"warning     {note}"]
    assert f"identity    WARNING: {note}" in _summary(outcome).splitlines()
    assert "- identity: **WARNING** the server did not answer GET /models" in (
        tmp_path / "w" / "report.md").read_text(encoding="utf-8")


def test_a_judge_whose_server_cannot_be_asked_counts_by_its_typed_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reviewer's case: `--judge gemba-mqm=openai:qwen3-8b` against a busy Gemma server went ahead silently
    monkeypatch.setattr(llm_client, "PROBE_TRY_S", 0.5)
    from mtboard.judges.base import parse_judge_spec
    from mtboard.judges.run import check_families

    async def go(busy_s: float):
        with BusyServer(busy_s=busy_s) as srv:
            async with LLMClient(srv.url, None, timeout_s=1.5, trust_env=False) as client:
                return await check_families([parse_judge_spec("gemba-mqm=openai:qwen3-8b")], client,
                                            ["gemma-3-270m-it-Q4_K_M.gguf"], allow_self_judge=False,
                                            translator_is_llm=True)

    fams = asyncio.run(go(600))
    assert fams["gemba-mqm"].status == ("passed (judge family from its typed name only: its server did not say what "
                                        "it serves)")
    assert fams["gemba-mqm"].judge_families == ("qwen",)
    from mtboard.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"same family \(google\)"):  # idle: the server names the Gemma file
        asyncio.run(go(0))
