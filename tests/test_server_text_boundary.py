"""Every text a server sent reaches a record or a card only through the one boundary (issue 33 item 1; second review,
findings 1, 2 and 6): error bodies of every status (2xx/4xx/5xx), streamed or not, the error message composed from
them, the attempt log, judge verdicts and Apertium's stdout. ``raw.jsonl`` alone keeps what was received, exactly.

The servers are hand-made loopback servers (fault injection: no real server can be made to put a chosen byte into
its error page); the corpus is a hand-made two-entry fixture, not evaluation data; the fake ``apertium`` is a
hand-made stand-in on PATH. Every expected value is written by hand: ``\\xff`` is never UTF-8, so it is U+FFFD.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import cli_support
import pytest
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus

from mtboard.backends.base import TranslateRequest, parse_method
from mtboard.backends.openai import OpenAIBackend
from mtboard.core.documents import load_card
from mtboard.core.errors import BackendError
from mtboard.core.schema import ErrorKind
from mtboard.inputs.runspec import BackendContext
from mtboard.llm import LLMClient
from mtboard.run.workdir import WorkDir

FFFD = "\ufffd"
PAIRS = [("Hello world.", "Hola mundo."), ("Good night.", "Buenas noches.")]
"""Entry 1 gets the broken answer; entry 2 a plain one."""


def _strs(value: Any, path: str = "$") -> list[tuple[str, str]]:
    """Every ``str`` in ``value`` (dict keys too) with where it is."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strs(k, f"{path}.<key>") + _strs(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in _strs(v, f"{path}[{i}]")]
    return []


def _assert_text(value: Any, where: str) -> None:
    """Every str in ``value`` encodes as UTF-8 (holds no lone surrogate)."""
    for path, s in _strs(value):
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            pytest.fail(f"{where} {path} holds a lone surrogate: {s!r}")


def _chunk(content_json: bytes) -> bytes:
    return b'data: {"model":"m","choices":[{"index":0,"delta":{"content":' + content_json + b'}}]}\n\n'


FINISH = (b'data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
          b'"usage":{"prompt_tokens":500,"completion_tokens":5}}\n\ndata: [DONE]\n\n')

ERROR_BODIES: dict[str, tuple[bytes, str]] = {
    # an error body's shape: (bytes, Content-Type). Each holds a byte that is never UTF-8 (\xff), a cut character
    # (\xf0\x9f) or a JSON escape of a lone UTF-16 half.
    "json-badbyte": (b'{"error":{"message":"boom \xff","type":"server_error"}}', "application/json"),
    "json-lone-half": (b'{"error":{"message":"boom \\ud800","code":"x\\udfff"}}', "application/json"),
    "json-string-error": (b'{"error":"boom \xf0\x9f"}', "application/json"),
    "json-detail": (b'{"detail":"boom \xff \\ud83d"}', "application/json"),
    "text": (b"Internal \xff error", "text/plain"),
    "html": (b"<html><body>\xff\xfe</body></html>", "text/html"),
    "latin1-labelled": (b"Fehler \xff\xe4", "text/plain; charset=utf-8"),
}
STATUSES = [400, 408, 413, 422, 500, 502, 503, 504]
"""401/403/404 are fatal (raise; tested apart); 429/529 are rate limits (waited out, tested in test_llm_ratelimits)."""

OK_BODIES: dict[str, tuple[bytes, str]] = {
    # HTTP 200 bodies that are failures: an error object, not JSON, an SSE error event, a stream cut short
    "200-error-object": (b'{"error":{"message":"overloaded \xff \\ud800"}}', "application/json"),
    "200-not-json": (b"not json \xff", "application/json"),
    "200-sse-error-event": (b'data: {"error":{"message":"overloaded \xff","type":"server_error"}}\n\n',
                            "text/event-stream"),
    "200-sse-bad-chunk": (b"data: {not json \xff \\ud800\n\n", "text/event-stream"),
    "200-sse-dropped": (_chunk(b'"Hola \xf0\x9f"'), "text/event-stream"),
    "200-sse-finish-surrogate": (_chunk(b'"Hola."').replace(b'}}]}', b'},"finish_reason":"ab\\ud800"}]}')
                                 + b"data: [DONE]\n\n", "text/event-stream"),
    "200-refusal-surrogate": (b'{"model":"m\\ud800","choices":[{"index":0,"message":{"role":"assistant",'
                              b'"content":null,"refusal":"No \\ud83d \xff"},"finish_reason":"st\\udc80op"}],'
                              b'"usage":{"prompt_tokens":500,"completion_tokens":5}}', "application/json"),
}


class Broken(LoopbackServer):
    """Every POST answered with (``status``, ``body``, ``ctype``); ``GET /models`` lists a model whose id and
    owner hold lone halves (the probe's metadata goes through the same boundary)."""

    def __init__(self, status: int, body: bytes, ctype: str):
        self.posts = 0
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_body(200, b'{"object":"list","data":[{"id":"m","owned_by":"me\\ud800"},'
                                    b'{"id":"x\\udcff","owned_by":"y"}]}')

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.posts += 1
                self.send_body(status, body, ctype)

        super().__init__(Handler)


def _translate(url: str, stream: bool) -> tuple[list[Any], list[dict[str, Any]]]:
    """One entry through the openai backend (the code path of ``mtboard run``) with 1 retry and a 10 ms backoff:
    the records and the raw lines it hands the runner."""
    raws: list[dict[str, Any]] = []

    async def go() -> list[Any]:
        client = LLMClient(url, concurrency=1, timeout_s=10, max_retries=1, backoff_base_s=0.01,
                           backoff_max_s=0.01)
        backend = OpenAIBackend(parse_method("openai:m"), BackendContext(base_url=url, stream=stream),
                                client=client)
        backend.raw_sink = raws.append
        try:
            return await backend.translate([TranslateRequest(
                entry_id=1, source="Hello world.", messages=[{"role": "user", "content": "Hello world."}])])
        finally:
            await client.aclose()

    return asyncio.run(go()), raws


def _check_written(recs: list[Any], raws: list[dict[str, Any]], body: bytes) -> None:
    """The record and the raw line as ``mtboard run`` writes them: every str of the record and of the raw line
    (but the raw body) is text; the raw body gives back the bytes received; the work directory encodes them."""
    assert len(recs) == 1 and len(raws) == 1
    _assert_text(recs[0].model_dump(), "TranslationRecord")
    line = {k: v for k, v in raws[0].items() if k != "response"}
    _assert_text(line, "raw line")
    assert raws[0]["response"].encode("utf-8", "surrogateescape") == body
    translations, raw_bytes = WorkDir.encode(recs, raws)  # never raises
    translations.decode("utf-8")
    assert json.loads(raw_bytes)["response"].encode("utf-8", "surrogateescape") == body


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("shape", list(ERROR_BODIES))
@pytest.mark.parametrize("status", STATUSES)
def test_every_error_body_becomes_a_record_that_is_text(status: int, shape: str, stream: bool) -> None:
    body, ctype = ERROR_BODIES[shape]
    with Broken(status, body, ctype) as srv:
        recs, raws = _translate(srv.url, stream)
    _check_written(recs, raws, body)
    rec = recs[0]
    assert rec.raw_predicted is None and rec.error is not None and rec.error.startswith(f"HTTP {status}")
    retried = status in (408, 500, 502, 503, 504)
    if retried:
        assert rec.error_kind == ErrorKind.transport and srv.posts == 2 and rec.error.endswith("(after 2 attempts)")
    else:  # 413 "boom" does not say the context is exceeded: a configuration failure, not retried
        assert rec.error_kind == ErrorKind.backend and srv.posts == 1
    if shape in ("json-badbyte", "text", "json-string-error"):
        assert FFFD in rec.error  # the broken byte is said, as U+FFFD
    assert [a["status"] for a in raws[0]["attempts"]] == [status] * srv.posts


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("shape", list(OK_BODIES))
def test_every_broken_200_answer_becomes_a_record_that_is_text(shape: str, stream: bool) -> None:
    body, ctype = OK_BODIES[shape]
    with Broken(200, body, ctype) as srv:
        recs, raws = _translate(srv.url, stream)
    _check_written(recs, raws, body)
    rec = recs[0]
    if shape == "200-refusal-surrogate":  # a model failure, not retried; its strings made text
        assert (rec.error_kind, rec.model_id, rec.finish_reason) == (ErrorKind.refusal, f"m{FFFD}", f"st{FFFD}op")
        assert srv.posts == 1
    elif shape == "200-sse-finish-surrogate":  # an unknown finish reason is an answer (the policy's table)
        assert (rec.error_kind, rec.raw_predicted, rec.finish_reason, srv.posts) == (None, "Hola.", f"ab{FFFD}", 1)
    else:
        assert rec.error_kind == ErrorKind.transport and srv.posts == 2 and rec.raw_predicted is None


def test_a_fatal_status_with_a_broken_body_raises_an_error_that_is_text() -> None:
    body = b'{"error":{"message":"bad key \xff \\ud800"}}'
    for status in (401, 403, 404):
        with Broken(status, body, "application/json") as srv:
            with pytest.raises(BackendError) as info:
                _translate(srv.url, False)
        str(info.value).encode("utf-8")
        assert f"HTTP {status}: bad key {FFFD} {FFFD}" in str(info.value)


# --------------------------------------------------------------------------------------------------------------------
# End to end: mtboard run, mtboard judge, a fake apertium

FAST = ["--backend-opt", "backoff_base_s=0.01", "--backend-opt", "backoff_max_s=0.01"]


class Scripted(LoopbackServer):
    """Chat server: entry "Hello world." gets (``status``, ``body``, ``ctype``) until ``fixed``; everything else
    a plain answer; requests with "adequacy" (the rubric judge) get ``judge`` when set. POSTs are counted."""

    def __init__(self, status: int, body: bytes, ctype: str, judge: tuple[int, bytes] | None = None):
        self.posts = self.judge_posts = 0
        self.fixed = False
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = json.dumps(req)
                if judge is not None and "adequacy" in text:
                    with lock:
                        outer.judge_posts += 1
                    # retry-after-ms 0: the client retries at once (the test is about the body's bytes, not the
                    # backoff; without it 12 items × 5 full-jitter waits slept ~35 s)
                    self.send_body(judge[0], judge[1], headers={"retry-after-ms": "0"})
                    return
                with lock:
                    outer.posts += 1
                if "Hello world" in text and not outer.fixed:
                    self.send_body(status, body, ctype)
                    return
                answer = "Hola mundo." if "Hello world" in text else "Buenas noches."
                if req.get("stream"):
                    self.send_body(200, _chunk(json.dumps(answer).encode()) + FINISH, "text/event-stream")
                else:
                    self.send_json(200, {"model": "m", "choices": [{"index": 0, "message": {
                        "role": "assistant", "content": answer}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 500, "completion_tokens": 5}})

        super().__init__(Handler)


def _run(args: list[Any], env: dict[str, str] | None = None) -> Any:
    return cli_support.invoke([str(a) for a in args], unset=("OPENAI_", "JUDGE_", "MTBOARD_"),
                              env={"MTBOARD_STREAM": "0", **(env or {})})


def _validate(tmp: Path, work: Path, corpora: Path) -> Any:
    return cli_support.invoke(["validate", work / "card.json", "--root", tmp, "--corpora", corpora])


RUN_CASES = {
    # the reviewer's cases (second review of issue 33, finding 1): name → (status, body, ctype, MTBOARD_STREAM)
    "500-json-badbyte": (500, b'{"error":{"message":"boom \xff"}}', "application/json", "0"),
    "503-html-badbytes": (503, b"<html>\xff</html>", "text/html", "0"),
    "500-text": (500, b"Internal \xff error", "text/plain", "0"),
    "500-text-streamed": (500, b"Internal \xff error", "text/plain", "1"),
    "200-sse-error-event": (200, b'data: {"error":{"message":"overloaded \xff"}}\n\n', "text/event-stream", "1"),
}


@pytest.mark.parametrize("case", list(RUN_CASES))
def test_a_5xx_body_with_a_broken_byte_is_a_recorded_transport_failure_and_resume_works(tmp_path: Path,
                                                                                          case: str) -> None:
    status, body, ctype, stream = RUN_CASES[case]
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-errbody.json", "hand-made-errbody", PAIRS)
    work = tmp_path / "w"
    args = ["run", corpus, "--method", "openai:m", "--concurrency", 1, "--work-dir", work, *FAST]
    with Scripted(status, body, ctype) as srv:
        res = _run(args + ["--base-url", srv.url], {"MTBOARD_STREAM": stream})
        # the usual end of a run whose retries ran out: one line, the entry recorded, no "internal error"
        assert res.returncode != 0 and "internal error" not in res.stderr, res.stderr
        assert "1 entries failed not by the model's fault (1 transport)" in res.stderr, res.stderr
        assert srv.posts == 7  # entry 1: 6 attempts (1 + 5 retries); entry 2: 1
        recs = {r["entry_id"]: r for r in map(json.loads, (work / "translations.jsonl").read_text().splitlines())}
        assert recs[1]["error_kind"] == "transport" and FFFD in recs[1]["error"], recs[1]
        assert recs[1]["error"].endswith("(after 6 attempts)") and recs[2]["raw_predicted"] == "Buenas noches."
        raws = [json.loads(line) for line in (work / "raw.jsonl").read_bytes().splitlines()]
        first = next(r for r in raws if r["entry_id"] == 1)
        assert first["response"].encode("utf-8", "surrogateescape") == body  # kept exactly
        _assert_text([{k: v for k, v in r.items() if k != "response"} for r in raws], "raw.jsonl")
        # resume once the server answers: only entry 1 is sent again, and the card validates
        srv.fixed = True
        res = _run(args + ["--base-url", srv.url], {"MTBOARD_STREAM": stream})
        assert res.returncode == 0, res.stderr
        assert srv.posts == 8
    card = load_card(work / "card.json")
    assert [r.predicted for r in card.results] == ["Hola mundo.", "Buenas noches."]
    val = _validate(tmp_path, work, corpora)
    assert val.returncode == 0, val.stdout + val.stderr


def test_a_judge_5xx_body_with_a_broken_byte_gives_judge_failed_verdicts_and_a_valid_card(tmp_path: Path) -> None:
    """Second review of issue 33, finding 2 (judge500.py): a card was refused with "lone leading surrogate"."""
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-errbody.json", "hand-made-errbody", PAIRS)
    work = tmp_path / "w"
    judge = (500, b'{"error":{"message":"judge boom \xff \\ud800"}}')
    with Scripted(200, b"", "application/json", judge=judge) as srv:
        srv.fixed = True  # the translator answers well; only the judge breaks
        res = _run(["run", corpus, "--method", "openai:m", "--concurrency", 1, "--work-dir", work,
                    "--base-url", srv.url, "--judge", "rubric=openai:judge-x", "--allow-self-judge"],
                   {"JUDGE_BASE_URL": srv.url})
        assert res.returncode == 0, res.stderr
        assert srv.judge_posts == 72  # (2 entries + 10 judge-admission items, issue 39) × 6 attempts each
    card = load_card(work / "card.json")
    verdicts = [r.judgements["rubric"] for r in card.results]
    assert [v.status for v in verdicts] == ["judge_failed", "judge_failed"]
    assert verdicts[0].justification == (f"judge call failed (transport): HTTP 500: judge boom {FFFD} {FFFD} "
                                         "(after 6 attempts)")
    _assert_text([v.model_dump() for v in verdicts], "JudgeVerdict")
    _assert_text(json.loads((work / "card.json").read_text(encoding="utf-8")), "card")
    val = _validate(tmp_path, work, corpora)
    assert val.returncode == 0, val.stdout + val.stderr


FAKE_APERTIUM = """#!/bin/sh
# a hand-made stand-in for `apertium` (fault injection: the real engine cannot be made to print broken bytes):
# `-l` lists one mode; a translation prints a cut emoji (F0 9F) for the first paragraph and an encoded UTF-16
# half (ED A0 80, never UTF-8) for the second
if [ "$1" = "-l" ]; then echo eng-spa; exit 0; fi
cat > /dev/null
printf 'Hola \\360\\237 mundo.\\n\\nBuenas \\355\\240\\200 noches.\\n'
"""


def test_apertium_raw_lines_keep_the_bytes_and_the_card_keeps_the_repaired_text(tmp_path: Path) -> None:
    """Second review of issue 33, finding 6 (apfake.py)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "apertium").write_text(FAKE_APERTIUM)
    (bindir / "apertium").chmod(0o755)
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "hand-made-errbody.json", "hand-made-errbody", PAIRS)
    work = tmp_path / "w"
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "APERTIUM_APY_URL": ""}
    res = _run(["run", corpus, "--method", "apertium:eng-spa", "--work-dir", work], env)
    assert res.returncode == 0, res.stderr
    raws = {r["entry_id"]: r for r in map(json.loads, (work / "raw.jsonl").read_bytes().splitlines())}
    assert raws[1]["response"].encode("utf-8", "surrogateescape") == b"Hola \xf0\x9f mundo."
    assert raws[2]["response"].encode("utf-8", "surrogateescape") == b"Buenas \xed\xa0\x80 noches."
    assert raws[1]["request"] == {"source": "Hello world."} and raws[1]["error"] is None
    recs = {r["entry_id"]: r for r in map(json.loads, (work / "translations.jsonl").read_text().splitlines())}
    assert (recs[1]["raw_predicted"], recs[1]["text_repairs"]) == (f"Hola {FFFD} mundo.", 1)
    assert (recs[2]["raw_predicted"], recs[2]["text_repairs"]) == (f"Buenas {FFFD * 3} noches.", 3)
    card = load_card(work / "card.json")
    assert [r.raw_predicted for r in card.results] == [f"Hola {FFFD} mundo.", f"Buenas {FFFD * 3} noches."]
    assert [[f.rule for f in r.checks.flags] for r in card.results] == [["encoding.broken"], ["encoding.broken"]]
    val = _validate(tmp_path, work, corpora)
    assert val.returncode == 0, val.stdout + val.stderr
    # resume: nothing is sent again, the card is the same
    before = (work / "card.json").read_bytes()
    res = _run(["run", corpus, "--method", "apertium:eng-spa", "--work-dir", work], env)
    assert res.returncode == 0, res.stderr
    assert (work / "card.json").read_bytes() == before
