"""Broken characters and unrequested streams, end to end through ``mtboard run`` (issue 33 items 1 and 3).

What real servers send (llama.cpp #6209/#11171: a character's UTF-8 bytes split between two stream events; JSON
escapes of an emoji's two UTF-16 halves sent in two events, or one half alone; a server or proxy that answers a
request sent without ``"stream": true`` with an event stream), played by a hand-made loopback server (fault injection:
no real server can be made to cut a character at a chosen byte). The corpus is a hand-made two-entry fixture, not
evaluation data. Every expected value is written by hand: 😀 is U+1F600, UTF-8 ``F0 9F 98 80``, UTF-16 ``D83D DE00``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import cli_support
import pytest
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus

from mtboard.core.documents import load_card

GRIN = "\U0001f600"
PAIRS = [("Hello world.", f"Hola mundo {GRIN}."), ("Good night.", "Buenas noches.")]
"""Entry 1 gets the broken answer; entry 2 a plain one."""


def _event(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode("ascii") + b"\n\n"


def _chunk(content_json: bytes) -> bytes:
    """An SSE event whose delta content is ``content_json`` (a JSON string literal, written as raw bytes)."""
    return b'data: {"model":"m","choices":[{"index":0,"delta":{"content":' + content_json + b'}}]}\n\n'


# usage: 500 prompt tokens, above the prompt's estimated minimum (no input_truncated)
FINISH = (_event({"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 500, "completion_tokens": 5}}) + b"data: [DONE]\n\n")


def _stream(*contents: bytes) -> bytes:
    return b"".join(_chunk(c) for c in contents) + FINISH


def _whole(content_json: bytes) -> bytes:
    return (b'{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":' + content_json +
            b'},"finish_reason":"stop"}],"usage":{"prompt_tokens":500,"completion_tokens":5}}')


CASES: dict[str, tuple[str, bytes, str, str, int]] = {
    # name: (MTBOARD_STREAM, answer body for "Hello world.", its Content-Type, expected hypothesis, repairs)
    "split-surrogate-pair": ("1", _stream(b'"Hola mundo \\ud83d"', b'"\\ude00."'), "text/event-stream",
                             f"Hola mundo {GRIN}.", 0),
    "lone-high-surrogate": ("0", _whole(b'"Hola mundo \\ud83d."'), "application/json", "Hola mundo \ufffd.", 1),
    "split-utf8-bytes": ("1", _stream(b'"Hola mundo \xf0\x9f"', b'"\x98\x80."'), "text/event-stream",
                         f"Hola mundo {GRIN}.", 0),
    "unrequested-stream": ("0", _stream(b'"Hola mundo "', b'"\xf0\x9f\x98\x80."'), "text/event-stream",
                           f"Hola mundo {GRIN}.", 0),
}


class BrokenServer(LoopbackServer):
    """``/v1/chat/completions``: the scripted body for the entry "Hello world.", a plain answer for the other;
    ``/v1/models`` lists model ``m``. Every POST is counted; ``down`` answers 503 to every POST."""

    def __init__(self, body: bytes, content_type: str):
        self.posts = 0
        self.down = False
        self._lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.posts += 1
                if outer.down:
                    self.send_json(503, {"error": {"message": "down"}})
                    return
                user = req["messages"][-1]["content"]
                if "Hello world." in user:
                    self.send_body(200, body, content_type)
                elif req.get("stream"):
                    self.send_body(200, _stream(b'"Buenas noches."'), "text/event-stream")
                else:
                    self.send_body(200, _whole(b'"Buenas noches."'))

        super().__init__(Handler)


def _run(args: list[Any], stream: str) -> Any:
    return cli_support.invoke([str(a) for a in args], unset=("OPENAI_", "JUDGE_", "MTBOARD_"),
                              env={"MTBOARD_STREAM": stream})


def _raw_lines(work: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (work / "raw.jsonl").read_bytes().splitlines()]


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_or_unrequested_answer_finishes_the_run_with_a_valid_card(tmp_path: Path, case: str) -> None:
    stream, body, ctype, hypothesis, repairs = CASES[case]
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-broken.json", "hand-made-broken", PAIRS)
    work = tmp_path / "w"
    args = ["run", corpus, "--method", "openai:m", "--concurrency", 1, "--work-dir", work]
    with BrokenServer(body, ctype) as srv:
        res = _run(args + ["--base-url", srv.url], stream)
        assert res.returncode == 0, res.stderr
        assert srv.posts == 2  # one attempt each: nothing retried as a transport failure
        card = load_card(work / "card.json")
        first = next(r for r in card.results if r.entry_id == 1)
        assert first.predicted == hypothesis and first.error_kind is None
        assert first.checks.outcome == "usable"  # (the encoding.broken flag on U+FFFD is the policy's, issue 33)
        # the record keeps the repair count; a clean answer's line has no key
        records = {r["entry_id"]: r for r in map(json.loads, (work / "translations.jsonl").read_text().splitlines())}
        assert records[1]["raw_predicted"] == hypothesis and records[1].get("text_repairs", 0) == repairs
        assert "text_repairs" not in records[2]
        # raw.jsonl: the body exactly as received (escaped bytes as \udcXX, JSON escapes as sent)
        raws = {r["entry_id"]: r for r in _raw_lines(work)}
        assert raws[1]["response"].encode("utf-8", "surrogateescape") == body
        assert raws[1]["attempts"][0].get("unrequested_stream", False) is (case == "unrequested-stream")
        assert raws[1]["attempts"][0]["stream"] is (stream == "1")
        # the card validates against the hand-made corpus
        val = cli_support.invoke(["validate", work / "card.json", "--root", tmp_path, "--corpora", corpora])
        assert val.returncode == 0, val.stdout + val.stderr
        # resume: the same command sends nothing more and writes the same card
        before = (work / "card.json").read_bytes()
        srv.down = True
        res = _run(args + ["--base-url", srv.url], stream)
        assert res.returncode == 0, res.stderr
        assert srv.posts == 2
        assert (work / "card.json").read_bytes() == before
