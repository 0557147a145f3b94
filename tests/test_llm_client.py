"""mtboard.llm: failure classification per the BookTrans policy, against a local misbehaving HTTP server.

Expected kinds are written by hand from the policy (issue 3 / spec README "failure policy"); answers from the fake
server follow its documented rule ``"ES " + text``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time

import pytest

from fake_openai_server import FakeServer
from mtboard.core.errors import ConfigError
from mtboard.llm import (LLMClient, LLMRequest, detect_truncation, estimate_min_prompt_tokens, infer_provider,
                         normalise_base_url, parse_retry_after, split_think)
from mtboard.core.schema import ErrorKind

KEY = "sk-canary-0123456789abcdef"


def _complete(srv: FakeServer, text: str, *, stream: bool, chat: bool = True, max_retries: int = 3,
              max_tokens: int = 32, **kw) -> tuple:
    async def go():
        async with LLMClient(srv.base_url, KEY, concurrency=4, max_retries=max_retries, backoff_base_s=0.01,
                             timeout_s=10) as c:
            req = LLMRequest(model="m", max_tokens=max_tokens, temperature=0.0, stream=stream,
                             messages=[{"role": "user", "content": text}] if chat else None,
                             prompt=None if chat else text, **kw)
            t0 = time.monotonic()
            res = await c.complete(req)
            return res, time.monotonic() - t0
    return asyncio.run(go())


# (marker, expected error kind or None, expected attempts, expected text or None)
CASES = [
    ("", None, 1, "ES hello"),
    ("[[fault:r500:2]]", None, 3, "ES hello"),
    ("[[fault:r500]]", ErrorKind.transport, 4, None),
    ("[[fault:reset:1]]", None, 2, "ES hello"),
    ("[[fault:reset]]", ErrorKind.transport, 4, None),
    ("[[fault:error200:1]]", None, 2, "ES hello"),
    ("[[fault:error200]]", ErrorKind.transport, 4, None),
    ("[[fault:length_empty]]", ErrorKind.token_cap, 1, ""),
    ("[[fault:think_unclosed]]", ErrorKind.unclosed_think, 1, "<think>The user wants a translation. Let me think about"),
    ("[[fault:think_closed]]", None, 1, "ES hello"),
    ("[[fault:empty]]", ErrorKind.empty, 1, ""),
    ("[[fault:ctx400]]", ErrorKind.input_truncated, 1, None),
    ("[[fault:r401]]", ErrorKind.backend, 1, None),
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("marker,kind,attempts,text", CASES, ids=[c[0] or "ok" for c in CASES])
def test_fault_classification(marker, kind, attempts, text, stream):
    with FakeServer() as srv:
        res, _ = _complete(srv, f"hello {marker}".strip() if marker else "hello", stream=stream)
        assert res.error_kind == kind, res.error
        assert res.attempts == attempts
        assert srv.counts[f"hello {marker}".strip() if marker else "hello"] == attempts
        if kind in (ErrorKind.transport, ErrorKind.backend, ErrorKind.input_truncated):
            assert res.text is None  # an error chunk after some content is never partial success
        else:
            assert res.text == text
        if kind is not None:
            assert res.error
        assert (res.fatal is True) == (marker == "[[fault:r401]]")


@pytest.mark.parametrize("marker,kind,attempts", [("[[fault:interrupted:1]]", None, 2),
                                                  ("[[fault:interrupted]]", ErrorKind.transport, 4)])
def test_a_stream_ended_by_done_without_finish_reason_is_a_transport_failure(marker, kind, attempts):
    """llama-cpp-python's server cuts a stream short when another request arrives: one piece, then ``[DONE]`` with no
    finish_reason. That is an interrupted answer, retried like a dropped stream, never a (short) translation."""
    with FakeServer() as srv:
        res, _ = _complete(srv, f"hello world again {marker}", stream=True)
    assert (res.error_kind, res.attempts) == (kind, attempts), res.error
    if kind is None:
        assert res.text == "ES hello world again"
    else:
        assert res.text is None and "[DONE] without a finish_reason" in res.error


def test_think_closed_moves_reasoning():
    with FakeServer() as srv:
        res, _ = _complete(srv, "hi [[fault:think_closed]]", stream=False)
    assert res.ok and res.text == "ES hi" and res.reasoning == "reasoning here"


def test_retry_after_is_honoured_and_key_never_returned():
    with FakeServer() as srv:
        res, elapsed = _complete(srv, "hello [[fault:r429:1]]", stream=False)
    # the 429 is waited out, not retried (F10): two exchanges, one attempt
    assert res.ok and res.text == "ES hello" and (res.attempts, res.retries, len(res.attempt_log)) == (1, 0, 2)
    assert elapsed >= 1.0  # Retry-After: 1
    assert res.attempt_log[0]["status"] == 429 and res.attempt_log[0]["retry_after_s"] == 1.0
    assert res.attempt_log[0]["sleep_s"] >= 1.0
    # the server echoed the Authorization header in its 429 body: scrubbed
    assert KEY not in repr(res)


def test_truncated_prompt_detected_from_reported_tokens():
    prompt = " ".join(f"word{i % 50}" for i in range(3000))  # 3,000 words: at least 3,000 tokens anywhere
    with FakeServer() as srv:
        res, _ = _complete(srv, prompt + " [[fault:truncated]]", stream=False, chat=False)
        assert res.error_kind == ErrorKind.input_truncated and res.attempts == 1
        assert "2048" in res.error
        # the same prompt with honest usage passes
        ok, _ = _complete(srv, prompt, stream=False, chat=False, max_tokens=4096)  # the echo has 3,001 words
    assert ok.ok and ok.usage.prompt_tokens == len(prompt) // 2 + 1


def test_transport_persisting_counts_attempts_with_backoff():
    with FakeServer() as srv:
        res, _ = _complete(srv, "x [[fault:r500]]", stream=True, max_retries=2)
    assert res.error_kind == ErrorKind.transport and res.attempts == 3
    assert "after 3 attempts" in res.error
    assert [a["status"] for a in res.attempt_log] == [500, 500, 500]


def test_connection_refused_is_transport():
    async def go():
        async with LLMClient("http://127.0.0.1:9/v1", None, max_retries=1, backoff_base_s=0.01) as c:
            return await c.complete(LLMRequest(model="m", max_tokens=8, prompt="x"))
    res = asyncio.run(go())
    assert res.error_kind == ErrorKind.transport and res.attempts == 2 and "before any byte" in res.error


def test_body_always_has_sampling_and_cap_and_usage_parsed():
    with FakeServer() as srv:
        res, _ = _complete(srv, "hola", stream=True, extra={"top_p": 1.0, "stop": ["\n"]},
                           max_tokens_field="max_completion_tokens")
        body = srv.requests[-1]["body"]
    assert body["temperature"] == 0.0 and body["top_p"] == 1.0 and body["max_completion_tokens"] == 32
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert res.usage.prompt_tokens == 3 and res.usage.completion_tokens == 2  # len("hola")//2+1; "ES hola"
    assert res.raw_request == body


def test_bounded_concurrency():
    async def go(srv):
        async with LLMClient(srv.base_url, None, concurrency=3, timeout_s=10) as c:
            reqs = [LLMRequest(model="m", max_tokens=8, prompt=f"p{i}") for i in range(9)]
            return await asyncio.gather(*(c.complete(r) for r in reqs))
    with FakeServer(latency_s=0.2) as srv:
        t0 = time.monotonic()
        results = asyncio.run(go(srv))
        elapsed = time.monotonic() - t0
        starts = sorted(r["t"] for r in srv.requests)
    assert all(r.ok for r in results)
    # 9 requests, 3 at a time, 0.2 s each → three waves: ≥ 0.6 s, and no more than 3 started in the first wave
    assert elapsed >= 0.58
    assert sum(1 for t in starts if t - starts[0] < 0.1) == 3


@pytest.mark.parametrize("url,provider", [
    ("https://api.openai.com/v1", "openai"), ("https://openrouter.ai/api/v1", "openrouter"),
    ("http://localhost:11434/v1", "ollama"), ("http://10.0.0.2:8000/v1", "openai-compatible"),
])
def test_infer_provider(url, provider):
    assert infer_provider(url) == provider


def test_probe_names_llama_cpp_from_server_header():
    async def go(srv):
        async with LLMClient(srv.base_url) as c:
            await c.probe()
            return c.api_provider
    with FakeServer(server_header="llama.cpp") as srv:
        assert asyncio.run(go(srv)) == "llama.cpp"


def test_helpers():
    assert normalise_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1"
    assert normalise_base_url("https://openrouter.ai/api/v1/") == "https://openrouter.ai/api/v1"
    with pytest.raises(ConfigError):
        normalise_base_url("ftp://x")
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({}) is None
    assert split_think("<think>a</think> b") == ("b", "a", False)
    assert split_think("a</think>b") == ("b", "a", False)
    assert split_think("<think>a") == ("<think>a", None, True)
    # letters with internal apostrophes/hyphens count once; digits and punctuation runs once each
    assert estimate_min_prompt_tokens(["Don't stop, well-known 42 times..."]) == 7
    assert detect_truncation(2048, 3000) is not None
    assert detect_truncation(2900, 3000) is None
    assert detect_truncation(None, 3000) is None
    assert detect_truncation(100, 10, expected=120) is not None


@pytest.mark.parametrize("chat", [True, False], ids=["chat", "completion"])
def test_an_empty_200_stream_is_asked_again_whole_and_the_servers_reason_kept(chat):
    """llama-cpp-python answers a streamed prompt longer than its context with an empty 200 stream; the same request
    without streaming gets HTTP 400 "exceed context window". One whole-body retry turns a would-be endless transport
    failure into the model failure it is."""
    with FakeServer() as srv:
        res, _ = _complete(srv, "hello [[fault:ctx_stream_empty]]", stream=True, chat=chat)
    assert (res.error_kind, res.attempts) == (ErrorKind.input_truncated, 2), res.error
    assert [a["stream"] for a in res.attempt_log] == [True, False]
    assert "stream" not in res.raw_request and "stream_options" not in res.raw_request  # the body actually sent
    assert [r["body"].get("stream", False) for r in srv.requests] == [True, False]


def test_streams_to_llama_cpp_python_go_one_at_a_time():
    """llama-cpp-python's server (recognised by its /models answer) cuts a running stream short when another
    request arrives; streams to it are serialised, whole-body requests are not."""
    async def go(srv, stream):
        async with LLMClient(srv.base_url, None, concurrency=4, timeout_s=10) as c:
            await c.probe()
            reqs = [LLMRequest(model="m", max_tokens=8, prompt=f"p{i}", stream=stream) for i in range(4)]
            return c.api_provider, await asyncio.gather(*(c.complete(r) for r in reqs))
    for stream, expected in ((True, 1), (False, 4)):
        with FakeServer(latency_s=0.1, server_header="uvicorn", owned_by="me") as srv:
            provider, results = asyncio.run(go(srv, stream))
        assert provider == "llama-cpp-python" and all(r.ok for r in results)
        assert srv.max_in_flight == expected, stream
    with FakeServer(latency_s=0.1) as srv:  # any other server: streams in parallel
        _, results = asyncio.run(go(srv, True))
        assert srv.max_in_flight_streams == 4


def test_echoed_credentials_are_scrubbed_in_streams_and_in_base64():
    """A server echoing the Authorization header, base64-encoded in the text and verbatim as the model's name."""
    for stream in (False, True):
        with FakeServer() as srv:
            res, _ = _complete(srv, "hello [[fault:auth_echo_b64]]", stream=stream)
        assert res.ok, res.error
        dumped = json.dumps([res.text, res.model_id, res.raw_response, res.raw_request, res.reasoning])
        b64 = base64.b64encode(f"Bearer {KEY}".encode()).decode()
        assert KEY not in dumped and b64[8:-8] not in dumped and "[REDACTED]" in res.text, (stream, dumped)
        assert res.model_id == "Bearer [REDACTED]"
