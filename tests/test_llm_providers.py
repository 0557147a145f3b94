"""Every provider response shape in tests/fixtures/providers/ (hand-made after each provider's public API docs; see
its README.md) sent through the real client (:class:`mtboard.llm.LLMClient`, httpx) from a loopback server, plus the
three inputs issue 13 found mis-scored, and the pure functions of :mod:`mtboard.llm.shapes` / ``policy`` on their
own. Expected outcomes are written by hand from the policy table.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer, QuietHandler

from mtboard.llm import LLMClient, LLMRequest, shapes
from mtboard.llm.policy import detect_truncation, finish_kind, judge
from mtboard.core.schema import ErrorKind, Usage

FIXTURES = Path(__file__).parent / "fixtures" / "providers"
CASES = {f"{path.stem}/{name}": case for path in sorted(FIXTURES.glob("*.json"))
         for name, case in json.loads(path.read_text(encoding="utf-8"))["cases"].items()}


def _wire(resp: dict[str, Any]) -> tuple[int, str, bytes, dict[str, str]]:
    """(status, content type, body bytes, extra headers) of one fixture response."""
    status = int(resp.get("status", 200))
    headers = dict(resp.get("headers", {}))
    if "sse" in resp:
        parts = []
        for ev in resp["sse"]:
            if isinstance(ev, dict):
                parts.append("data: " + json.dumps(ev, ensure_ascii=False))
            elif ev == "[DONE]":
                parts.append("data: [DONE]")
            else:
                parts.append(ev)
        return status, "text/event-stream", "".join(p + "\n\n" for p in parts).encode(), headers
    if "raw" in resp:
        return status, resp["content_type"], resp["raw"].encode(), headers
    return status, "application/json", json.dumps(resp["json"], ensure_ascii=False).encode(), headers


class FixtureServer(LoopbackServer):
    """Answers each request with the fixture case named in its last user message (``case FILE/NAME``), the n-th
    request of a case with its n-th response (the last one repeats). ``counts[case]`` = requests received."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
                name = text.split()[1]
                with lock:
                    outer.counts[name] += 1
                    outer.bodies.append(body)
                    n = outer.counts[name]
                responses = CASES[name]["responses"]
                status, ctype, data, extra = _wire(responses[min(n, len(responses)) - 1])
                self.send_body(status, data, ctype, extra)

        super().__init__(Handler)


@pytest.fixture(scope="module")
def server():
    with FixtureServer() as srv:
        yield srv


def _request(name: str, case: dict[str, Any]) -> LLMRequest:
    words = " ".join(f"word{i % 97}" for i in range(case.get("prompt_words", 0)))
    text = f"case {name} Hello world. {words}".strip()
    stream = bool(case.get("stream")) or any("sse" in r for r in case["responses"])
    chat = case.get("endpoint", "chat") == "chat"
    return LLMRequest(model="m", max_tokens=case.get("max_tokens", 1000), temperature=0.0, stream=stream,
                      messages=[{"role": "user", "content": text}] if chat else None, prompt=None if chat else text)


def _run(url: str, reqs: list[LLMRequest], **kw: Any) -> list:
    async def go():
        async with LLMClient(url, "sk-fixture-key-000", concurrency=4, max_retries=1, backoff_base_s=0.001,
                             timeout_s=10, **kw) as c:
            return await asyncio.gather(*(c.complete(r) for r in reqs))
    return asyncio.run(go())


@pytest.mark.parametrize("name", sorted(CASES))
def test_provider_fixture_through_the_real_client(server, name):
    case = CASES[name]
    exp = case["expect"]
    before = server.counts[name]
    (res,) = _run(server.url, [_request(name, case)])
    kind = exp.get("kind")
    assert res.error_kind == (ErrorKind(kind) if kind else None), res.error
    # the fixture's "attempts" are exchanges; rate-limited answers among them are waited out, not attempts (F10)
    limited = sum(1 for a in res.attempt_log if a.get("rate_limited"))
    assert server.counts[name] - before == exp.get("attempts", 1) == len(res.attempt_log)
    assert res.attempts == max(1, len(res.attempt_log) - limited)
    if "text" in exp:
        assert res.text == exp["text"]
    if "reasoning" in exp:
        assert res.reasoning == exp["reasoning"]
    if "finish" in exp:
        assert res.finish_reason == exp["finish"]
    if "usage" in exp:
        u = res.usage
        assert [u.prompt_tokens, u.completion_tokens, u.reasoning_tokens, u.cached_tokens] == exp["usage"]
    if "error" in exp:
        assert exp["error"] in res.error
    assert res.fatal is bool(exp.get("fatal", False))
    assert res.raw_response  # what arrived is always kept
    assert "sk-fixture-key-000" not in json.dumps([res.raw_response, res.error, res.text])


# ----------------------------------------------------------------------------------------------------------------------
# The three inputs of issue 13, with the values they must score

def test_issue13_content_as_a_list_of_parts_is_the_translation(server):
    (res,) = _run(server.url, [_request("lmstudio/content-as-text-parts", CASES["lmstudio/content-as-text-parts"])])
    assert (res.ok, res.text, res.error) == (True, "Hola mundo.", None)


def test_issue13_an_aborted_stream_is_retried_and_never_scored_as_a_half_answer(server):
    """"Hola", then ``finish_reason: abort``, then ``[DONE]``: a transport failure retried; when the retry answers,
    the entry is the full answer."""
    name = "vllm/stream-aborted"
    case = {"responses": [CASES[name]["responses"][0], {"sse": [
        {"choices": [{"index": 0, "delta": {"content": "Hola mundo."}, "finish_reason": "stop"}]}, "[DONE]"]}]}
    CASES["issue13/abort-then-ok"] = case
    try:
        (res,) = _run(server.url, [_request("issue13/abort-then-ok", case)])
    finally:
        del CASES["issue13/abort-then-ok"]
    assert (res.ok, res.text, res.attempts) == (True, "Hola mundo.", 2)
    assert [a["outcome"] for a in res.attempt_log] == ["transport", "ok"]
    assert "'abort'" in res.attempt_log[0]["error"]


def test_issue13_an_event_split_over_two_data_lines_is_one_event(server):
    name = "sse/json-split-over-two-data-lines"
    (res,) = _run(server.url, [_request(name, CASES[name])])
    assert (res.ok, res.text, res.attempts, res.usage.completion_tokens) == (True, "Hola mundo.", 1, 4)


# ----------------------------------------------------------------------------------------------------------------------
# Pure functions (no server)

@pytest.mark.parametrize("content,expected", [
    ("Hola", ("Hola", "", "")),
    (None, (None, "", "")),
    ([{"type": "text", "text": "Hola "}, {"type": "text", "text": "mundo."}], ("Hola mundo.", "", "")),
    ([{"type": "thinking", "thinking": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"type": "text", "text": "Hola."}], ("Hola.", "ab", "")),
    ([{"type": "reasoning", "text": "r"}, {"type": "output_text", "text": "t"}], ("t", "r", "")),
    ([{"type": "refusal", "refusal": "no"}], ("", "", "no")),
    ([{"type": "image_url", "image_url": {"url": "x"}}], ("", "", "")),
    ({"type": "text", "text": "solo"}, ("solo", "", "")),
    (42, (None, "", "")),
])
def test_content_parts(content, expected):
    assert shapes.content_parts(content) == expected


@pytest.mark.parametrize("usage,expected", [
    (None, None),
    ({}, Usage()),
    ({"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920},
      "completion_tokens_details": {"reasoning_tokens": 296}}, Usage(prompt_tokens=2006, completion_tokens=300,
                                                                     reasoning_tokens=296, cached_tokens=1920)),
    # Anthropic accounting beside prompt_tokens: 194 + 9474 + 0
    ({"prompt_tokens": 194, "completion_tokens": 7, "cache_creation_input_tokens": 9474, "cache_read_input_tokens": 0},
     Usage(prompt_tokens=9668, completion_tokens=7)),
    # native Anthropic names
    ({"input_tokens": 4, "output_tokens": 9, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 20},
     Usage(prompt_tokens=1024, completion_tokens=9, cached_tokens=1000)),
    # a gateway sending both conventions with an inclusive prompt_tokens: not added twice
    ({"prompt_tokens": 1024, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 1000},
      "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 20},
     Usage(prompt_tokens=1024, completion_tokens=9, cached_tokens=1000)),
    # DeepSeek: hit + miss = prompt_tokens
    ({"prompt_tokens": 21530, "completion_tokens": 9, "prompt_cache_hit_tokens": 320,
      "prompt_cache_miss_tokens": 21210}, Usage(prompt_tokens=21530, completion_tokens=9, cached_tokens=320)),
    ({"prompt_tokens": None, "completion_tokens": "7", "prompt_tokens_details": None}, Usage()),
    ({"prompt_tokens": -5, "completion_tokens": True}, Usage()),
])
def test_usage_variants(usage, expected):
    assert shapes.usage_from(usage) == expected


@pytest.mark.parametrize("reason,kind", [
    ("stop", "stop"), ("eos", "stop"), ("end_turn", "stop"), ("something_new", "stop"), (None, "none"),
    ("length", "length"), ("MAX_TOKENS", "length"), ("model_length", "length"),
    ("content_filter", "filter"), ("SAFETY", "filter"), ("tool_calls", "tool"), ("function_call", "tool"),
    ("abort", "transport"), ("error", "transport"), ("insufficient_system_resource", "transport"),
])
def test_finish_reason_classes(reason, kind):
    assert finish_kind(reason) == kind


def test_truncation_is_flagged_only_on_evidence():
    assert detect_truncation(2048, 3000) is not None  # 3,000 words, 2,048 tokens seen
    assert detect_truncation(194, 9000, cached_tokens=9474) is None  # cache hit reported apart
    assert detect_truncation(None, 3000) is None and detect_truncation(0, 3000) is None  # no usage: no evidence
    assert detect_truncation(100, 10, expected=120) is not None
    assert detect_truncation(100, 10, expected=120, cached_tokens=20) is None


def test_judge_keeps_a_finished_answer_when_cached_tokens_are_reported_apart():
    """A 6,000-word prompt; the server reports 194 uncached + 9,474 cache-read tokens beside them."""
    ans = shapes.parse_body({"choices": [{"index": 0, "message": {"content": "Hola mundo."}, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 194, "completion_tokens": 7,
                                       "cache_read_input_tokens": 9474}})
    v = judge(ans, max_tokens=100, prompt_texts=["word " * 6000])
    assert (v.outcome, v.text) == ("ok", "Hola mundo.")


@pytest.mark.parametrize("completion,finish,expected", [
    (16, "stop", ErrorKind.token_cap), (15, "stop", None), (16, "length", ErrorKind.token_cap),
    (17, None, ErrorKind.token_cap),
])
def test_an_answer_at_the_token_cap(completion, finish, expected):
    ans = shapes.parse_body({"choices": [{"message": {"content": "Hola"}, "finish_reason": finish}],
                             "usage": {"prompt_tokens": 5, "completion_tokens": completion}})
    v = judge(ans, max_tokens=16)
    assert v.error_kind == expected
    if expected and finish != "length":
        assert v.error.startswith("at token cap: ")


def test_stream_reader_counts_distinct_tool_calls():
    r = shapes.StreamReader()
    for idx, args in ((0, "{"), (0, "}"), (1, "{}")):
        r.feed(json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": idx, "function": {"arguments": args}}]}}]}))
    r.feed(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
    assert r.feed("[DONE]") is False
    assert (r.answer.tool_calls, r.answer.done, judge(r.answer, max_tokens=8).error_kind) == (2, True,
                                                                                              ErrorKind.format)
