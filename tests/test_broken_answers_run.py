"""Broken characters and unrequested streams, end to end through ``mtboard run`` (issue 33 items 1 and 3).

What real servers send (llama.cpp #6209/#11171: a character's UTF-8 bytes split between two stream events; JSON
escapes of an emoji's two UTF-16 halves sent in two events, or one half alone; a server or proxy that answers a
request sent without ``"stream": true`` with an event stream), played by a hand-made loopback server (fault injection:
no real server can be made to cut a character at a chosen byte). The corpus is a hand-made two-entry fixture, not
evaluation data. Every expected value is written by hand: 😀 is U+1F600, UTF-8 ``F0 9F 98 80``, UTF-16 ``D83D DE00``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import cli_support
import pytest
from judges_support import ScriptedServer, card_requests
from judges_support import mtboard as judges_mtboard
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus

from mtboard.core.documents import load_card
from mtboard.core.schema import ErrorKind
from mtboard.llm import LLMClient, LLMRequest, LLMResult

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


BOM8 = b"\xef\xbb\xbf"  # U+FEFF in UTF-8
HOLA = _whole(b'"Hola mundo."')
CASES: dict[str, tuple[str, bytes, str, str, int]] = {
    # name: (MTBOARD_STREAM, answer body for "Hello world.", its Content-Type, expected hypothesis, repairs)
    "split-surrogate-pair": ("1", _stream(b'"Hola mundo \\ud83d"', b'"\\ude00."'), "text/event-stream",
                             f"Hola mundo {GRIN}.", 0),
    "lone-high-surrogate": ("0", _whole(b'"Hola mundo \\ud83d."'), "application/json", "Hola mundo \ufffd.", 1),
    "split-utf8-bytes": ("1", _stream(b'"Hola mundo \xf0\x9f"', b'"\x98\x80."'), "text/event-stream",
                         f"Hola mundo {GRIN}.", 0),
    "unrequested-stream": ("0", _stream(b'"Hola mundo "', b'"\xf0\x9f\x98\x80."'), "text/event-stream",
                           f"Hola mundo {GRIN}.", 0),
    # bodies read by content, not by their label or the request (review of issue 33, findings 2 and 7)
    "json-labelled-stream": ("1", HOLA, "text/event-stream", "Hola mundo.", 0),
    "json-labelled-stream-unstreamed": ("0", HOLA, "text/event-stream", "Hola mundo.", 0),
    "blank-lines-then-json-labelled-stream": ("1", b"\n\n\r\n " + HOLA, "text/event-stream", "Hola mundo.", 0),
    "stream-labelled-json": ("1", _stream(b'"Hola "', b'"mundo."'), "application/json", "Hola mundo.", 0),
    # a UTF-8 byte-order mark before the body: dropped before json.loads / the SSE parser, kept in raw.jsonl
    "bom-json": ("0", BOM8 + HOLA, "application/json", "Hola mundo.", 0),
    "bom-json-to-stream-request": ("1", BOM8 + HOLA, "application/json", "Hola mundo.", 0),
    "bom-json-labelled-stream": ("1", BOM8 + HOLA, "text/event-stream", "Hola mundo.", 0),
    "bom-stream": ("1", BOM8 + _stream(b'"Hola "', b'"mundo."'), "text/event-stream", "Hola mundo.", 0),
    "bom-unrequested-stream": ("0", BOM8 + _stream(b'"Hola "', b'"mundo."'), "text/plain", "Hola mundo.", 0),
}
READ_AS = {
    # the attempt-log mark of a body read otherwise than the request asked (default: none)
    "unrequested-stream": "unrequested_stream", "bom-unrequested-stream": "unrequested_stream",
    "json-labelled-stream": "unrequested_json", "blank-lines-then-json-labelled-stream": "unrequested_json",
    "bom-json-to-stream-request": "unrequested_json", "bom-json-labelled-stream": "unrequested_json",
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
        assert raws[1]["attempts"][0].get("unrequested_stream", False) is (READ_AS.get(case) == "unrequested_stream")
        assert raws[1]["attempts"][0].get("unrequested_json", False) is (READ_AS.get(case) == "unrequested_json")
        if body.startswith(BOM8):  # the mark is kept as received: the line holds the bytes EF BB BF
            assert raws[1]["response"].startswith("\ufeff") and b'"response":"\xef\xbb\xbf' in (
                work / "raw.jsonl").read_bytes()
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


# --------------------------------------------------------------------------------------------------------------------
# The client alone: streams read by content, the boundary on every string of an answer


class OneBody(LoopbackServer):
    """Every POST answered with ``body`` (``status``, ``content_type``); ``chunks``: instead, a chunked body sent in
    these pieces, flushed one by one (a character's bytes cut between two network reads)."""

    def __init__(self, body: bytes = b"", content_type: str = "application/json", status: int = 200,
                 chunks: list[bytes] | None = None):
        self.posts = 0
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.posts += 1
                if chunks is None:
                    self.send_body(status, body, content_type)
                    return
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    time.sleep(0.05)
                self.wfile.write(b"0\r\n\r\n")

        super().__init__(Handler)


def _complete(url: str, *, stream: bool, retries: int = 0) -> LLMResult:
    async def go() -> LLMResult:
        async with LLMClient(url, concurrency=1, timeout_s=10, max_retries=retries, backoff_base_s=0.01) as c:
            return await c.complete(LLMRequest(model="m", max_tokens=64, stream=stream,
                                               messages=[{"role": "user", "content": "Hello world."}]))
    return asyncio.run(go())


@pytest.mark.parametrize("ctype, head", [("text/event-stream", b""), ("application/json", b""),
                                         ("text/plain", b": keep-alive\n\n"), ("application/json", b"\xef\xbb\xbf"),
                                         ("application/octet-stream", b"event: message\n")],
                         ids=["sse-type", "json-type-sse-body", "comment-first", "bom-first", "event-line-first"])
def test_an_unrequested_stream_is_read_as_a_stream_by_content(ctype, head):
    body = head + _stream(b'"Hola "', b'"mundo."')
    with OneBody(body, ctype) as srv:
        res = _complete(srv.url, stream=False)
    assert res.ok and res.text == "Hola mundo." and res.finish_reason == "stop", res.error
    assert res.attempts == 1 and srv.posts == 1 and res.usage.prompt_tokens == 500
    assert res.attempt_log[0]["unrequested_stream"] is True and res.attempt_log[0]["stream"] is False
    assert res.raw_response.encode("utf-8", "surrogateescape") == body


def test_an_unrequested_stream_keeps_the_stream_rules():
    """``[DONE]`` without a finish_reason (llama-cpp-python interrupting a stream) is a transport failure, retried."""
    body = _chunk(b'"Hola"') + b"data: [DONE]\n\n"
    with OneBody(body, "text/event-stream") as srv:
        res = _complete(srv.url, stream=False, retries=1)
    assert res.error_kind == ErrorKind.transport and "interrupted answer" in res.error, res.error
    assert srv.posts == 2 and res.attempts == 2 and res.text is None
    assert [a.get("unrequested_stream") for a in res.attempt_log] == [True, True]


def test_a_requested_stream_under_another_media_type_is_read_as_a_stream():
    body = _stream(b'"Hola mundo."')
    with OneBody(body, "text/plain; charset=utf-8") as srv:
        res = _complete(srv.url, stream=True)
    assert res.ok and res.text == "Hola mundo." and "unrequested_stream" not in res.attempt_log[0], res.error


def test_a_json_body_to_a_streamed_request_is_still_read_as_json():
    with OneBody(_whole(b'"Hola \\ud83d."')) as srv:
        res = _complete(srv.url, stream=True)
    assert res.ok and (res.text, res.text_repairs) == ("Hola \ufffd.", 1)


def test_a_character_cut_between_two_network_reads_of_one_event_is_whole():
    event = _chunk('"Hola mundo 😀."'.encode())
    cut = event.index(b"\x9f") + 1  # after F0 9F
    with OneBody(content_type="text/event-stream", chunks=[event[:cut], event[cut:], FINISH]) as srv:
        res = _complete(srv.url, stream=True)
    assert res.ok and (res.text, res.text_repairs) == (f"Hola mundo {GRIN}.", 0), res.error


def test_reasoning_refusal_and_model_name_pass_the_same_boundary():
    body = (b'{"model":"m\\udfff","choices":[{"index":0,"message":{"role":"assistant","content":"Hola.",'
            b'"reasoning_content":"pienso \\ud83d","refusal":null},"finish_reason":"stop"}],'
            b'"usage":{"prompt_tokens":500,"completion_tokens":5}}')
    with OneBody(body) as srv:
        res = _complete(srv.url, stream=False)
    assert res.ok and res.text == "Hola." and res.reasoning == "pienso \ufffd" and res.model_id == "m\ufffd"
    assert res.text_repairs == 1  # the reasoning's lone half; the model name is not the answer
    streamed = _stream(b'"No "', b'"puedo"').replace(b'"content":"No "', b'"refusal":"No \\ud83d"')
    with OneBody(streamed, "text/event-stream") as srv:
        res = _complete(srv.url, stream=True)
    assert res.error_kind == ErrorKind.refusal and res.text_repairs == 1, (res.error_kind, res.error)


def test_an_error_body_with_broken_bytes_gives_an_error_that_is_text():
    with OneBody(b'{"error":{"message":"bad \xf0\x9f and \\ud83d"}}', status=400) as srv:
        res = _complete(srv.url, stream=False)
    assert res.error_kind == ErrorKind.backend and res.error.encode("utf-8")  # no surrogate left
    assert "bad \ufffd and \ufffd" in res.error
    assert res.raw_response.encode("utf-8", "surrogateescape") == b'{"error":{"message":"bad \xf0\x9f and \\ud83d"}}'


# --------------------------------------------------------------------------------------------------------------------
# Judges use the same client


@pytest.mark.parametrize("broken", ["\ud83d", "\udcf0"], ids=["high-half", "escaped-byte"])
def test_a_judge_answer_with_a_lone_surrogate_does_not_crash_the_judge_run(tmp_path: Path, broken: str) -> None:
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-broken.json", "hand-made-broken", PAIRS)
    wd = tmp_path / "w"
    with ScriptedServer(lambda body: "Hola mundo." if "Hello" in body["messages"][-1]["content"] else
                        "Buenas noches.", model="mistral-scripted-mt") as srv:
        p = judges_mtboard(["run", str(corpus), "--method", "openai:mistral-scripted-mt", "--work-dir", str(wd),
                            "--base-url", srv.url], env={}, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # json.dumps writes the lone half as a JSON escape (\ud83d / \udcf0) into the judge's answer
    answer = ("Critical:\nno-error\nMajor:\nno-error\nMinor:\n"
              f'fluency/punctuation - "mundo{broken}"\ncontextBehavior: unclear')
    with ScriptedServer(lambda body: answer, model="gpt-4.1-scripted-judge") as judge:
        p = judges_mtboard(["judge", str(wd), "--judge", "gemba-mqm=openai:scripted-judge"],
                           env={"JUDGE_BASE_URL": judge.url}, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(card_requests(judge)) == 2 and len(judge.requests) == 2 + 10  # + the admission items (issue 39)
    card = load_card(wd / "card.json")
    spans = [e.span for r in card.results for v in r.judgements.values() for e in v.errors]
    assert spans == ["mundo\ufffd", "mundo\ufffd"]  # one minor error per entry, its span made text
    stored = (wd / "judge" / "cache.jsonl").read_bytes()
    stored.decode("utf-8")  # the cache holds the raw answers, escaped where JSON cannot hold them
    texts = [json.loads(line)["text"] for line in stored.splitlines()]
    # the 10 judge-admission items (issue 39) share the cache: the same scripted answer, 12 times
    assert texts == [answer.replace(broken, "\ufffd")] * 12


def test_a_json_body_labelled_event_stream_is_read_as_json():
    """By content: a body that starts like JSON is JSON, whatever its label."""
    with OneBody(_whole(b'"Hola mundo."'), "text/event-stream") as srv:
        res = _complete(srv.url, stream=False)
    assert res.ok and res.text == "Hola mundo." and "unrequested_stream" not in res.attempt_log[0], res.error


# --------------------------------------------------------------------------------------------------------------------
# Engines: Apertium's stdout and its APY answers pass the same boundary

FAKE_APERTIUM = r'''import sys
text = sys.stdin.buffer.read()
# a hand-made stand-in for `apertium -f txt MODE` (fault injection: the real engine cannot be made to emit broken
# bytes): every paragraph is echoed with EMOJI as the UTF-8 bytes of U+1F600 and CUT as the first two of them only
out = text.replace(b"EMOJI", b"\xf0\x9f\x98\x80").replace(b"CUT", b"\xf0\x9f")
sys.stdout.buffer.write(out)
'''


def test_apertium_stdout_is_made_text_per_entry(tmp_path: Path) -> None:
    from mtboard.backends.apertium import ApertiumBackend
    from mtboard.backends.base import TranslateRequest, parse_method

    exe = tmp_path / "apertium"
    exe.write_text(f"#!{sys.executable}\n{FAKE_APERTIUM}")
    exe.chmod(0o755)
    b = ApertiumBackend(parse_method("apertium:eng-spa"), apy_url="")
    b._exe, b._started = str(exe), True  # the stand-in instead of /usr/bin/apertium
    sources = ["Hola EMOJI.", "Hola CUT.", "Bien."]
    recs = asyncio.run(b.translate([TranslateRequest(entry_id=i, source=s) for i, s in enumerate(sources)]))
    assert [(r.raw_predicted, r.text_repairs, r.error) for r in recs] == [
        (f"Hola {GRIN}.", 0, None), ("Hola \ufffd.", 1, None), ("Bien.", 0, None)]
    assert b.process_calls == 1  # one process for the three entries: the repair is per entry, after the split


def test_an_apy_answer_with_a_lone_surrogate_is_made_text(tmp_path: Path) -> None:
    from mtboard.backends.apertium import ApertiumBackend
    from mtboard.backends.base import TranslateRequest, parse_method

    body = b'{"responseData":{"translatedText":"Hola \\ud83d."},"responseDetails":null,"responseStatus":200}'

    class Apy(LoopbackServer):
        def __init__(self) -> None:
            class Handler(QuietHandler):
                def do_GET(self) -> None:  # noqa: N802
                    self.send_body(200, body)
            super().__init__(Handler)

    with Apy() as srv:
        b = ApertiumBackend(parse_method("apertium:eng-spa"), apy_url=srv.url.removesuffix("/v1"))
        b.start()
        recs = asyncio.run(b.translate([TranslateRequest(entry_id=1, source="Hello.")]))
    assert (recs[0].raw_predicted, recs[0].text_repairs, recs[0].error) == ("Hola \ufffd.", 1, None)


# --------------------------------------------------------------------------------------------------------------------
# Bodies read by content (issue 33 item 3; review findings 2 and 7): the first non-blank, non-BOM character or line
# decides, never the label nor the request


def test_json_bodies_labelled_event_stream_cost_one_post_per_entry(tmp_path: Path) -> None:
    """The reviewer's case: six entries, MTBOARD_STREAM=1, every answer a JSON body labelled text/event-stream. It
    was read as a stream of 0 events and asked again without streaming (12 POSTs); now 6."""
    pairs = [(f"Sentence {i}.", f"Frase {i}.") for i in range(6)]
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-labels.json", "hand-made-labels", pairs)
    work = tmp_path / "w"
    seen: list[bool] = []

    class Labelled(LoopbackServer):
        def __init__(self) -> None:
            class Handler(QuietHandler):
                def do_GET(self) -> None:  # noqa: N802
                    self.send_json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

                def do_POST(self) -> None:  # noqa: N802
                    req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    seen.append(bool(req.get("stream")))
                    n = req["messages"][-1]["content"].split("Sentence ")[1][0]
                    self.send_body(200, _whole(f'"Frase {n}."'.encode()), "text/event-stream")
            super().__init__(Handler)

    with Labelled() as srv:
        res = _run(["run", corpus, "--method", "openai:m", "--concurrency", 1, "--work-dir", work,
                    "--base-url", srv.url], "1")
    assert res.returncode == 0, res.stderr
    assert seen == [True] * 6  # one POST per entry, each the streamed request
    card = load_card(work / "card.json")
    assert sorted(r.predicted for r in card.results) == [f"Frase {i}." for i in range(6)]
    logs = [r["attempts"] for r in _raw_lines(work)]
    assert [len(a) for a in logs] == [1] * 6
    assert all(a[0]["unrequested_json"] is True and a[0]["stream"] is True for a in logs)


BOM16LE, BOM16BE = b"\xff\xfe", b"\xfe\xff"
BOM32LE, BOM32BE = b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"


@pytest.mark.parametrize("codec, mark", [("utf-16-le", BOM16LE), ("utf-16-be", BOM16BE), ("utf-32-le", BOM32LE),
                                         ("utf-32-be", BOM32BE)], ids=["16le", "16be", "32le", "32be"])
@pytest.mark.parametrize("stream, ctype, body", [
    (False, "application/json", HOLA), (True, "application/json", HOLA), (True, "text/event-stream", HOLA),
    (True, "text/event-stream", _stream(b'"Hola "', b'"mundo."')),
    (False, "text/plain", _stream(b'"Hola "', b'"mundo."'))], ids=["json", "json-to-stream", "json-labelled-stream",
                                                                   "stream", "unrequested-stream"])
def test_a_utf16_or_utf32_bom_names_the_encoding_whatever_the_charset(codec, mark, stream, ctype, body):
    """No charset (or a wrong one): the byte-order mark decides (WHATWG Encoding "decode": the BOM wins over the
    label); the raw text keeps it as a leading U+FEFF."""
    sent = mark + body.decode("ascii").encode(codec)
    with OneBody(sent, ctype + "; charset=utf-8") as srv:
        res = _complete(srv.url, stream=stream)
    assert res.ok and res.text == "Hola mundo." and srv.posts == 1, res.error
    assert res.raw_response == "\ufeff" + body.decode("ascii")
    assert res.attempt_log[0].get("unrequested_json", False) is (stream and body == HOLA)


@pytest.mark.parametrize("stream", [False, True], ids=["request", "stream"])
def test_a_bom_cut_between_network_reads_before_a_json_body_labelled_stream(stream):
    sent = BOM8 + b"\r\n" + HOLA
    pieces = [sent[:1], sent[1:2], sent[2:5], sent[5:]]  # EF | BB | BF \r \n | {...
    with OneBody(content_type="text/event-stream", chunks=pieces) as srv:
        res = _complete(srv.url, stream=stream)
    assert res.ok and res.text == "Hola mundo." and srv.posts == 1 and res.attempts == 1, res.error
    assert res.raw_response.encode("utf-8") == sent


@pytest.mark.parametrize("stream", [False, True], ids=["request", "stream"])
def test_an_error_body_after_a_bom_is_read_as_json(stream):
    """A 400 whose JSON says ``content_filter`` (Azure's prompt filter) is a refusal: the code is only seen once the
    body is parsed; with the BOM left in, it was an unreadable body and a ``backend`` failure quoting it raw."""
    body = BOM8 + b'{"error":{"message":"The prompt was filtered.","code":"content_filter"}}'
    with OneBody(body, status=400) as srv:
        res = _complete(srv.url, stream=stream)
    assert res.error_kind == ErrorKind.refusal, res.error
    assert res.error == "refusal: HTTP 400: The prompt was filtered. (code content_filter)"
    assert res.raw_response.encode("utf-8") == body


@pytest.mark.parametrize("ctype, text, stream", [
    ("text/event-stream", '\ufeff\n {"a": 1}', False), ("text/event-stream; charset=utf-8", "[1]", False),
    ("application/json", '\ufeffdata: {"a": 1}', True), ("text/plain", ": ping\n\ndata: x\n\n", True),
    ("application/json", "\r\n\r\nevent: message\ndata: x\n\n", True), ("", "retry: 10\n", True),
    ("text/event-stream", "", True), ("text/event-stream", "hello", True),  # no content rule: the label
    ("application/json", "", False), ("application/json", "hello", False)])
def test_the_content_rule_table(ctype, text, stream):
    from mtboard.llm.transport import looks_like_event_stream
    assert looks_like_event_stream(ctype, text) is stream


@pytest.mark.parametrize("head, codec", [(b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                                         (b"\xff\xfe{\x00", "utf-16-le"), (b"\xfe\xff\x00{", "utf-16-be"),
                                         (b"\xef\xbb\xbf{", "utf-8"), (b'{"a', None), (b"", None)])
def test_the_byte_order_mark_names_the_codec(head, codec):
    from mtboard.llm.transport import bom_encoding
    assert bom_encoding(head) == codec
