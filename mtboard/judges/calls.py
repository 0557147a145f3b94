"""One judge's requests: through the work directory's cache, with attempt accounting, and the retry conversation;
the verdict of an entry that is not sent, and the progress callback's shape.

Every answer is appended to the cache (:mod:`mtboard.judges.store`) before it is used; cache hits are answered from
the file. Requests go through :class:`mtboard.llm.LLMClient` (the only module that speaks HTTP).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from mtboard.core.errors import BackendError
from mtboard.judges.base import JudgePrompt, JudgeSpec
from mtboard.judges.store import CachedAnswer, JudgeStore, cache_key, input_sha256
from mtboard.core.schema import EntryResult, JudgeVerdict, Usage

JUDGE_TEMPERATURE = 0.0
CACHEABLE_KINDS = (None, "token_cap", "empty", "unclosed_think", "refusal")
"""LLMResult error kinds that are still an answer of the model (cached, parsed, counted in the failure rate)."""
PREVIOUS_ANSWER_LIMIT = 4000
"""Characters of a failed answer echoed back in the retry conversation."""

Progress = Callable[[str, int, int], None]
"""progress(kind, done, total)."""

T = TypeVar("T")


async def gather_or_cancel(coros: Iterable[Awaitable[T]]) -> list[T]:
    """``asyncio.gather`` of ``coros`` (results in order) that, when one raises (a full disk refusing the cache, a
    401), cancels the others and waits for them before re-raising that first error — so the judge's HTTP client is
    closed with no request in flight and no coroutine left half-started (without it, a connect still pending when
    the event loop closes prints "RuntimeWarning: coroutine … was never awaited"; review finding 5 of issue 33).
    ``asyncio.TaskGroup`` would do the same but wraps the error in an ExceptionGroup."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise




@dataclass
class Tally:
    answers: int = 0
    unparsed: int = 0
    cached: int = 0
    unanswered: int = 0
    usage: Usage = field(default_factory=Usage)

    def add_usage(self, u: Usage) -> None:
        self.usage = Usage(prompt_tokens=self.usage.prompt_tokens + u.prompt_tokens,
                           completion_tokens=self.usage.completion_tokens + u.completion_tokens,
                           reasoning_tokens=self.usage.reasoning_tokens + u.reasoning_tokens,
                           cached_tokens=self.usage.cached_tokens + u.cached_tokens)


class Caller:
    """Sends one judge's requests through the cache; every answer is appended to the cache before it is used."""

    def __init__(self, spec: JudgeSpec, prompt_sha256: str, client: Any, store: JudgeStore, max_tokens: int,
                 endpoint_host_sha256: str | None):
        self.spec = spec
        self.prompt_sha256 = prompt_sha256
        self.client = client
        self.store = store
        self.max_tokens = max_tokens
        self.judge_model = f"{spec.method}@{endpoint_host_sha256 or 'unknown-host'}"
        self.tally = Tally()

    def request(self, messages: list[dict[str, str]]) -> Any:
        from mtboard.llm import LLMRequest

        extra = {"reasoning_effort": self.spec.effort} if self.spec.effort else {}
        return LLMRequest(model=self.spec.model, max_tokens=self.max_tokens, messages=messages,
                          temperature=JUDGE_TEMPERATURE, extra=extra)

    async def ask(self, messages: list[dict[str, str]], replicate: int) -> CachedAnswer:
        req = self.request(messages)
        body = req.body()
        ih = input_sha256(body, replicate)
        key = cache_key(self.judge_model, self.prompt_sha256, ih)
        hit = self.store.get(key)
        if hit is not None:
            self.tally.cached += 1
            self.tally.answers += 1
            self.tally.add_usage(hit.usage)
            return hit
        res = await self.client.complete(req)
        kind = res.error_kind.value if res.error_kind is not None else None
        ans = CachedAnswer(key=key, text=res.text, finish_reason=res.finish_reason, error=res.error,
                           error_kind=kind, usage=res.usage, model_id=res.model_id)
        if getattr(res, "fatal", False):
            raise BackendError(f"judge endpoint refused the request: {res.error}", field="--judge",
                               fix="check JUDGE_BASE_URL / JUDGE_API_KEY and the judge model name")
        if kind in CACHEABLE_KINDS:
            self.store.put(key, judge_model=self.judge_model, prompt_sha256=self.prompt_sha256, input_hash=ih,
                           request=res.raw_request or body, answer=ans, raw_response=res.raw_response)
            self.tally.answers += 1
            self.tally.add_usage(res.usage)
        else:
            self.tally.unanswered += 1
            self.tally.add_usage(res.usage)
        return ans

    @staticmethod
    def answered(ans: CachedAnswer) -> bool:
        return ans.error_kind in CACHEABLE_KINDS


def retry_messages(prompt: JudgePrompt, messages: list[dict[str, str]], text: str | None,
                    reason: str) -> list[dict[str, str]]:
    return messages + [{"role": "assistant", "content": (text or "")[:PREVIOUS_ANSWER_LIMIT]},
                       {"role": "user", "content": prompt.retry(reason)}]


def not_sent(worst: float, result: EntryResult) -> JudgeVerdict:
    """The verdict of an entry whose mechanical outcome is not ``usable``: not sent to the judge, scored ``worst``
    (the judge's worst value; the translator failed), with the outcome and rule as its justification."""
    rule = f" ({result.checks.rule})" if result.checks.rule else ""
    return JudgeVerdict(status="not_sent", score=worst, attempts=0,
                        justification=f"not sent: {result.checks.outcome}{rule}; scored the worst value")
