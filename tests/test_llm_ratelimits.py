"""Rate limits announced in headers (issue 24): every documented signal sets the wait, rate limits are waited out
(not counted as retries) until a deadline, the client holds every request back while a limit lasts, and the run
summary says how long it waited.

The header values are the documented shapes (OpenAI/Groq ``x-ratelimit-reset-requests: 1m30s``, ``250ms``;
``Retry-After`` as seconds or an HTTP date; Anthropic's RFC 3339 reset times; HTTP 529). The loopback server is a
hand-made fault injector (tests/loopback.py): it answers each text with a scripted list of rate-limit responses, then
``"ES " + text``. The corpus is a hand-made fixture, not evaluation data.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import cli_support
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.core.documents import load_card
from mtboard.llm import LLMClient, LLMRequest
from mtboard.llm.policy import classify_status, parse_duration, parse_retry_after, rate_limit_wait
from mtboard.run.plan import IncompleteRunError
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run, union_seconds
from mtboard.core.schema import ErrorKind

NOW = 1_445_412_480.0  # Wed, 21 Oct 2015 07:28:00 GMT


@pytest.mark.parametrize("text,seconds", [
    ("1m30s", 90.0), ("250ms", 0.25), ("20s", 20.0), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), ("2m59.56s", 179.56),
    ("7.66s", 7.66), ("7.66", 7.66), ("0s", 0.0), ("500us", 0.0005), (".5s", 0.5),
    ("", None), ("soon", None), ("-1s", None), ("1x", None), ("5s3", None), ("1m 2s", None), ("inf", None),
])
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


@pytest.mark.parametrize("headers,wait", [
    ({"x-ratelimit-reset-requests": "20s"}, 20.0),                                   # the 429
    ({"x-ratelimit-reset-requests": "1m30s", "x-ratelimit-reset-tokens": "250ms"}, 90.0),  # no remaining: longest
    ({"x-ratelimit-reset-requests": "1m30s", "x-ratelimit-remaining-requests": "12",
      "x-ratelimit-reset-tokens": "250ms", "x-ratelimit-remaining-tokens": "0"}, 0.25),   # the exhausted one
    ({"retry-after": "3", "x-ratelimit-reset-requests": "1m"}, 3.0),                 # Retry-After wins
    ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),                      # HTTP date
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"anthropic-ratelimit-requests-reset": "2015-10-21T07:28:30Z",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-tokens-reset": "2015-10-21T07:29:00Z",
      "anthropic-ratelimit-tokens-remaining": "5000"}, 30.0),
    ({"x-ratelimit-reset-requests": "whenever"}, None),
    ({}, None),
])
def test_rate_limit_wait_from_headers(headers: dict[str, str], wait: float | None) -> None:
    assert rate_limit_wait(headers, now=NOW) == (pytest.approx(wait) if wait is not None else None)


def test_classify_rate_limits() -> None:
    v = classify_status(429, "Rate limit reached", headers={"x-ratelimit-reset-requests": "20s"})
    assert (v.outcome, v.error_kind, v.retry_after_s, v.rate_limited) == ("transport", ErrorKind.transport, 20.0,
                                                                          True)
    assert classify_status(529, "Overloaded", headers={}).rate_limited is True
    assert classify_status(503, "busy", headers={"retry-after": "2"}).rate_limited is True
    plain = classify_status(503, "busy", headers={})
    assert (plain.outcome, plain.rate_limited) == ("transport", False)  # a 503 without a wait is an ordinary retry
    assert classify_status(500, "oops", headers={}).rate_limited is False
    assert parse_retry_after({"retry-after-ms": "nan"}) is None


def test_union_seconds() -> None:
    assert union_seconds([[0, 2], [1, 3], [5, 6]]) == 4.0
    assert union_seconds([[5, 6], [0, 10]]) == 10.0
    assert union_seconds([]) == 0.0


class LimitServer(LoopbackServer):
    """Answers the n-th request carrying a text with ``script[text][n-1]`` (status, headers) while there is one,
    then 200 ``"ES " + text``; a script ending in ``"forever"`` repeats its last response. ``times[text]`` are the
    arrival times (monotonic) of its requests, ``wall[text]`` the same arrivals on the wall clock (``time.time``), to
    compare with an HTTP date the server sent."""

    def __init__(self, script: dict[str, list[Any]]):
        self.script = script
        self.times: dict[str, list[float]] = {}
        self.wall: dict[str, list[float]] = {}
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m", "owned_by": "test"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
                with lock:
                    seen = outer.times.setdefault(text, [])
                    seen.append(time.monotonic())
                    outer.wall.setdefault(text, []).append(time.time())
                    n = len(seen)
                steps = outer.script.get(text, [])
                if steps and steps[-1] == "forever":
                    steps = steps[:-1]
                    step = steps[min(n, len(steps)) - 1]
                else:
                    step = steps[n - 1] if n <= len(steps) else None
                if step is not None:
                    status, headers = step
                    headers = {k: (v() if callable(v) else v) for k, v in headers.items()}
                    self.send_json(status, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
                                   headers)
                    return
                answer = "ES " + text
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "m", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": len(answer.split()), "total_tokens": 9}})

        super().__init__(Handler)


def _complete(url: str, texts: list[str], delays: list[float] | None = None, **kw: Any):
    async def go():
        async with LLMClient(url, None, concurrency=4, max_retries=1, backoff_base_s=0.02, timeout_s=10,
                             trust_env=False, **kw) as c:
            async def one(text: str, delay: float):
                await asyncio.sleep(delay)
                return await c.complete(LLMRequest(model="m", max_tokens=16, temperature=0.0,
                                                   messages=[{"role": "user", "content": text}]))
            res = await asyncio.gather(*(one(t, d) for t, d in zip(texts, delays or [0.0] * len(texts))))
            return res, c
    return asyncio.run(go())


def test_reset_duration_sets_the_wait_and_rate_limits_are_not_retries() -> None:
    # Five 429s with x-ratelimit-reset-requests: 250ms and no Retry-After; max_retries=1 would have failed at the 2nd.
    script = {"a": [(429, {"x-ratelimit-reset-requests": "250ms", "x-ratelimit-remaining-requests": "0"})] * 5}
    with LimitServer(script) as srv:
        (res,), client = _complete(srv.url, ["a"])
    assert (res.ok, res.text, res.attempts, len(res.attempt_log)) == (True, "ES a", 1, 6)  # 429s are no attempts
    assert [a["retry_after_s"] for a in res.attempt_log[:5]] == [0.25] * 5
    assert all(a["rate_limited"] for a in res.attempt_log[:5]) and "rate_limited" not in res.attempt_log[5]
    gaps = [b - a for a, b in zip(srv.times["a"], srv.times["a"][1:])]
    assert len(gaps) == 5 and all(g >= 0.25 for g in gaps), gaps  # each wait is the announced 250 ms
    assert client.rate_limited_responses == 5
    assert 1.25 <= round(client.rate_limit_paused_s, 6) < 1.3  # 5 × 0.25 s, counted once
    assert len(res.rate_limit_waits) == 5 and all(b - a >= 0.25 for a, b in res.rate_limit_waits)


def test_retry_after_http_date_and_529() -> None:
    sent: list[str] = []

    def date() -> str:  # an HTTP date has whole-second resolution: 0.6 to 1.6 s ahead when the server writes it
        sent.append(email.utils.formatdate(time.time() + 1.6, usegmt=True))
        return sent[-1]

    script = {"d": [(429, {"Retry-After": date})], "o": [(529, {})] * 3}
    with LimitServer(script) as srv:
        (d, o), _ = _complete(srv.url, ["d", "o"])
    # the client measures the wait from when it read the answer (a little after the server wrote the date), so the
    # wait it records is at most 1.6 s; the retry must not arrive before the instant the server named
    assert d.ok and d.attempts == 1 and len(d.attempt_log) == 2 and 0.0 < d.attempt_log[0]["retry_after_s"] <= 1.6
    named = email.utils.parsedate_to_datetime(sent[0]).timestamp()
    assert srv.wall["d"][1] >= named and srv.wall["d"][0] < named
    assert (o.ok, o.attempts, len(o.attempt_log)) == (True, 1, 4)  # three 529s waited out with a growing backoff, max_retries=1 untouched
    assert [a["status"] for a in o.attempt_log] == [529, 529, 529, 200]


def test_one_limit_holds_back_every_request() -> None:
    # "a" is rate-limited at once for 600 ms; "b" starts 100 ms later and must wait for the same reset.
    script = {"a": [(429, {"retry-after-ms": "600"})]}
    with LimitServer(script) as srv:
        (a, b), client = _complete(srv.url, ["a", "b"], delays=[0.0, 0.1])
    assert a.ok and b.ok and (a.attempts, b.attempts, len(a.attempt_log)) == (1, 1, 2)
    assert srv.times["b"][0] - srv.times["a"][0] >= 0.6  # b was held back until the limit reset
    assert b.rate_limit_waits and [x["status"] for x in b.attempt_log] == [200]  # b itself was never refused
    # the pause counted once, not per waiting request (rounded: (now + 0.6) - now is 0.59999… for a large monotonic)
    assert 0.6 <= round(client.rate_limit_paused_s, 6) < 0.65


def test_an_announced_wait_beyond_the_deadline_fails_at_once() -> None:
    script = {"a": [(429, {"x-ratelimit-reset-requests": "1m30s"})]}
    with LimitServer(script) as srv:
        t0 = time.monotonic()
        (res,), _ = _complete(srv.url, ["a"], rate_limit_deadline_s=60)
        took = time.monotonic() - t0
    assert res.error_kind == ErrorKind.transport and res.attempts == 1 and took < 5
    assert "next wait of 90.0 s would pass the rate-limit deadline of 60 s" in res.error


def test_sustained_limit_without_headers_gives_up_at_the_deadline() -> None:
    script = {"a": [(429, {}), "forever"]}
    with LimitServer(script) as srv:
        t0 = time.monotonic()
        (res,), _ = _complete(srv.url, ["a"], rate_limit_deadline_s=1.0, backoff_max_s=0.2)
        took = time.monotonic() - t0
    assert res.error_kind == ErrorKind.transport and res.attempts == 1 and len(res.attempt_log) >= 5
    assert "rate-limit deadline of 1 s" in res.error and 0.8 <= took < 2.0


def write_corpus(path: Path, sources: list[str]) -> Path:
    return write_handmade_corpus(path, "hand-made-ratelimit-test", [(s, "ES " + s) for s in sources])


def test_sustained_limits_slow_the_run_and_the_summary_says_how_long(tmp_path: Path) -> None:
    # Every entry is refused 3 times with x-ratelimit-reset-requests: 200ms, more than --max-retries 1 allows for
    # ordinary failures: the run slows down, finishes with a card, and the summary reports the wait.
    sources = ["Good morning.", "Open the file.", "Thank you."]
    script = {s: [(429, {"x-ratelimit-reset-requests": "200ms"})] * 3 for s in sources}
    corpus = write_corpus(tmp_path / "c.json", sources)
    with LimitServer(script) as srv:
        p = cli_support.invoke(["run", str(corpus), "--method", "openai:m", "--base-url", srv.url, "--work-dir",
                                str(tmp_path / "w"), "--concurrency", "1", "--prompt", "source-only"],
                               cwd=tmp_path, unset=("OPENAI_",))
    assert p.returncode == 0, p.stderr
    card = load_card(tmp_path / "w" / "card.json")
    assert [r.predicted for r in card.results] == ["ES " + s for s in sources]
    # rate-limited answers are not retries (F10; `mtboard backends` and docs/providers.md say so): 9 were waited out
    assert [r.attempts for r in card.results] == [1, 1, 1] and card.totals.retries == 0
    errors_line = next(ln for ln in p.stdout.splitlines() if ln.startswith("errors"))
    assert errors_line == "errors      0 of 3"  # no "; retries 9"
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("time"))
    waited = float(line.split("waited ")[1].split(" s")[0])
    assert 1.7 <= waited < 2.5, line  # 9 waits of 0.2 s one after another (concurrency 1), counted once each
    assert "(9 rate-limited answers)" in line
    report = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    assert "- rate limits: 9 rate-limited answers; requests waited" in report
    raw = [json.loads(x) for x in (tmp_path / "w" / "raw.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(len(r.get("rate_limit_waits", [])) for r in raw) == 9


def test_a_limit_that_outlasts_the_deadline_leaves_the_run_resumable(tmp_path: Path) -> None:
    sources = ["Good morning.", "Open the file."]
    script = {"Open the file.": [(429, {}), "forever"]}
    corpus = write_corpus(tmp_path / "c.json", sources)
    with LimitServer(script) as srv:
        settings = RunSettings(corpus_path=corpus, method="openai:m", prompt="source-only", base_url=srv.url,
                               work_dir=tmp_path / "w", max_retries=1,
                               backend_extra={"rate_limit_deadline_s": 0.5, "backoff_max_s": 0.1})
        with pytest.raises(IncompleteRunError, match="1 transport"):
            run(settings)
