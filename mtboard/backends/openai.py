"""OpenAI-compatible backend: ``openai:MODEL[:effort]`` (issue 3, backend 1; method class ``raw-llm``).

Any server speaking ``/v1/chat/completions`` (chat prompts) or ``/v1/completions`` (raw-completion prompts): OpenAI,
OpenRouter, Ollama, vLLM, LM Studio, llama.cpp's ``llama-server``, llama-cpp-python. The endpoint comes from
``--base-url``, else ``OPENAI_BASE_URL``, else :data:`DEFAULT_BASE_URL` (OpenAI's API); the key only from
``OPENAI_API_KEY``. Requests go through
:class:`mtboard.llm.LLMClient` (pooling, bounded concurrency, retries, failure classification).

Sent with every request and recorded in the card: ``temperature``, ``top_p`` (1.0; left out when a reasoning effort
is given, since reasoning models reject it), the explicit generation cap (``max_tokens``, or
``max_completion_tokens`` for api.openai.com), ``stop`` from the prompt, ``reasoning_effort`` when the spec names
one, plus any ``BackendOptions.sampling`` entries.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable, ClassVar

from mtboard.backends.base import BackendOptions, MethodSpec, TranslateRequest, register
from mtboard.card import endpoint_host_sha256
from mtboard.errors import BackendError, ConfigError
from mtboard.llm import LLMClient, LLMRequest, LLMResult, normalise_base_url
from mtboard.schema import MethodClass, TranslationRecord

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""The endpoint when neither ``--base-url`` nor ``OPENAI_BASE_URL`` is given (README: "default endpoint")."""


def resolve_base_url(base_url: str | None) -> str:
    """``--base-url``, else ``OPENAI_BASE_URL``, else :data:`DEFAULT_BASE_URL`."""
    return base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


@register
class OpenAIBackend:
    """See the module docstring. Construct as ``OpenAIBackend(spec, options=BackendOptions(...))``.

    ``client`` (tests) replaces the client built from the options/environment.
    """

    name: ClassVar[str] = "openai"
    method_class: ClassVar[MethodClass] = MethodClass.raw_llm
    model_optional: ClassVar[bool] = False
    default_prompt: ClassVar[str] = "translate-chat"
    default_concurrency: ClassVar[int] = 8
    preferred_batch_size: ClassVar[int] = 1
    env_prefix: ClassVar[str] = "OPENAI"
    default_base_url: ClassVar[str | None] = DEFAULT_BASE_URL

    def __init__(self, spec: MethodSpec, options: BackendOptions | None = None, *, client: LLMClient | None = None,
                 **_: Any):
        self.spec = spec
        self.options = options or BackendOptions()
        self._client = client
        self._probed = False
        self._probe_lock: asyncio.Lock | None = None
        self._base_url = (self.options.base_url or os.environ.get(f"{self.env_prefix}_BASE_URL")
                          or self.default_base_url)
        self.model_id: str | None = None
        self._provider: str | None = None
        self._stop: list[str] | None = None
        self.raw_sink: Callable[[dict[str, Any]], None] | None = None
        """Set by the runner: receives one dict per request (body, response, attempts); never headers or keys."""

    # -- lifecycle ---------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Build the client. Raises ConfigError when no endpoint is configured."""
        if self._client is None:
            tuning = {k: float(v) for k, v in self.options.extra.items()
                      if k in ("backoff_base_s", "backoff_max_s", "retry_after_max_s", "deadline_s")}
            self._client = LLMClient.from_env(
                self.env_prefix, base_url=self._base_url, concurrency=max(1, self.options.concurrency),
                timeout_s=self.options.timeout_s, max_retries=self.options.max_retries, **tuning)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            asyncio.run(client.aclose())
        else:
            loop.create_task(client.aclose())

    async def aclose(self) -> None:
        """Async close (the runner prefers it when present)."""
        client, self._client = self._client, None
        if client is not None:
            self._provider = client.api_provider
            await client.aclose()

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self.start()
        assert self._client is not None
        return self._client

    def describe(self) -> dict[str, Any]:
        c = self._client
        if c is not None:
            self._provider = c.api_provider
        return {
            "api_provider": self._provider,
            "endpoint_host_sha256": endpoint_host_sha256(self._base_url),
            "model_id": self.model_id,
            "model_slug": self.spec.model + (f":{self.spec.effort}" if self.spec.effort else ""),
            "max_tokens": self.options.max_tokens,
            "sampling": self.sampling(self._stop),
            "streaming": self.options.stream,
            "engine_version": None,
        }

    # -- requests ----------------------------------------------------------------------------------------------------
    def sampling(self, stop: list[str] | None = None) -> dict[str, Any]:
        """Every sampling parameter sent besides the cap (recorded in ``method.sampling``)."""
        s: dict[str, Any] = {"temperature": self.options.temperature}
        if self.spec.effort is None:
            s["top_p"] = 1.0
        else:
            s["reasoning_effort"] = self.spec.effort
        s.update(self.options.sampling)
        if stop:
            s["stop"] = list(stop)
        return s

    def build_request(self, req: TranslateRequest) -> LLMRequest:
        """The LLMRequest for one entry (chat when the prompt rendered messages, else completion)."""
        extra = self.sampling(req.stop)
        self._stop = list(req.stop) or None
        temperature = extra.pop("temperature")
        provider = self._client.api_provider if self._client is not None else None
        return LLMRequest(model=self.spec.model, max_tokens=self.options.max_tokens, messages=req.messages,
                          prompt=None if req.messages is not None else (req.prompt if req.prompt is not None
                                                                         else req.source),
                          temperature=temperature, extra=extra, stream=self.options.stream,
                          max_tokens_field="max_completion_tokens" if provider == "openai" else "max_tokens")

    async def _ensure_probed(self) -> None:
        if self._probed:
            return
        if self._probe_lock is None:
            self._probe_lock = asyncio.Lock()
        async with self._probe_lock:
            if not self._probed:
                info = await self.client.probe()
                if info.get("unreachable"):  # no TCP connection at all: every request would fail the same way
                    raise BackendError(f"cannot connect to the endpoint ({info.get('error')})",
                                       where=f"{self.env_prefix}_BASE_URL / --base-url",
                                       fix="start the server, or check the host and port")
                self._provider = self.client.api_provider
                self._probed = True

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """One record per request, same order; per-entry failures are recorded. Raises BackendError when the
        server answers 401/403/404 (bad key, no access, unknown model): no request of this run can succeed."""
        await self._ensure_probed()
        if len(requests) == 1:  # the usual case (batch size 1): no task per request, no extra event-loop round
            return [await self._one(requests[0])]
        results = await asyncio.gather(*(self._one(r) for r in requests))
        return list(results)

    async def _one(self, req: TranslateRequest) -> TranslationRecord:
        llm_req = self.build_request(req)
        t_start = time.time()
        res: LLMResult = await self.client.complete(llm_req)
        if res.model_id:
            self.model_id = res.model_id
        if self.raw_sink is not None:
            self.raw_sink({"entry_id": req.entry_id, "run_index": req.run_index, "t_start": t_start,
                           "t_end": time.time(), "endpoint": llm_req.path, "request": res.raw_request,
                           "response": res.raw_response, "status": res.status_code, "attempts": res.attempt_log,
                           "error": res.error, "error_kind": res.error_kind.value if res.error_kind else None,
                           "reasoning": res.reasoning})
        if res.fatal:
            raise BackendError(f"the endpoint refused the request: {res.error}", where="openai",
                               fix="check OPENAI_API_KEY, the model name and --base-url / OPENAI_BASE_URL")
        return TranslationRecord(run_index=req.run_index, entry_id=req.entry_id, raw_predicted=res.text,
                                 error=res.error, error_kind=res.error_kind, attempts=max(1, res.attempts),
                                 latency_s=res.latency_s, usage=res.usage, model_id=res.model_id,
                                 finish_reason=res.finish_reason)


def check_base_url(base_url: str | None) -> None:
    """Fail before starting when the endpoint (:func:`resolve_base_url`) is not an http(s) URL (ConfigError)."""
    normalise_base_url(resolve_base_url(base_url))
