"""OpenAI-compatible backend: ``openai:MODEL[:effort]`` (issue 3, backend 1; method class ``raw-llm``).

Any server speaking ``/v1/chat/completions`` (chat prompts) or ``/v1/completions`` (raw-completion prompts): OpenAI,
OpenRouter, Ollama, vLLM, LM Studio, llama.cpp's ``llama-server``, llama-cpp-python. The endpoint comes from
``--base-url``, else ``OPENAI_BASE_URL``, else ``https://api.openai.com/v1``; the key only from ``OPENAI_API_KEY``.
Requests go through :class:`mtboard.llm.LLMClient` (pooling, bounded concurrency, retries, failure classification).

Sent with every request and recorded in the card: ``temperature``, ``top_p`` (1.0; left out when a reasoning effort
is given, since reasoning models reject it), the explicit generation cap (``max_tokens``, or
``max_completion_tokens`` for api.openai.com), ``stop`` from the prompt, ``reasoning_effort`` when the spec names
one, plus any ``BackendContext.sampling`` entries.

Settings (``--backend-opt``): :class:`OpenAIOptions` (retry tuning).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import ipaddress
import os
import stat
import time
from pathlib import Path
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from pydantic import Field

from mtboard.backends.base import Backend, Options, TranslateRequest
from mtboard.core.errors import BackendError, ConfigError, MtboardError
from mtboard.llm import LLMClient, LLMRequest, LLMResult, normalise_base_url, serverinfo
from mtboard.inputs.runspec import BackendContext, MethodSpec, endpoint_host_sha256
from mtboard.core.schema import BackendFacts, MethodClass, MethodRecord, TranslationRecord

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Endpoint used when neither ``--base-url`` nor ``OPENAI_BASE_URL`` is given."""

HOSTED_NEEDING_KEY = frozenset({"api.openai.com", "openrouter.ai", "api.anthropic.com", "api.deepseek.com",
                                "api.mistral.ai", "api.groq.com", "api.together.xyz", "api.fireworks.ai"})
"""Hosts of hosted OpenAI-compatible APIs, which answer nothing without a key."""

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]

_HASHES: dict[tuple[str, int, int], str] = {}
"""(path, size, mtime_ns) → SHA-256 of weights files hashed in this process."""


def _is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class OpenAIOptions(Options):
    """``--backend-opt`` settings of the openai backend (retry tuning of :class:`mtboard.llm.LLMClient`; unset keys
    keep the client's defaults)."""

    backoff_base_s: Seconds | None = None
    """First transport-retry backoff ceiling, seconds (client default 0.5)."""
    backoff_max_s: Seconds | None = None
    """Largest transport-retry backoff, seconds (client default 30)."""
    retry_after_max_s: Seconds | None = None
    """Longest single wait a rate limit (Retry-After, x-ratelimit-reset-*) is honoured for, seconds (client default
    120; the request then asks again)."""
    deadline_s: Seconds | None = None
    """Time a streaming answer may keep producing before it is a model timeout, seconds (default: no deadline)."""
    rate_limit_deadline_s: Seconds | None = None
    """How long one request may keep being rate-limited (429, 529, 503 with a wait) before it fails, seconds
    (client default 900); rate limits are waited out, not counted as retries."""


class OpenAIBackend(Backend):
    """See the module docstring. ``client`` (tests) replaces the client built from the context and environment."""

    name: ClassVar[str] = "openai"
    method_class: ClassVar[MethodClass] = MethodClass.raw_llm
    Options: ClassVar[type[Options]] = OpenAIOptions
    default_prompt: ClassVar[str] = "translate-chat"
    default_concurrency: ClassVar[int] = 8
    preferred_batch_size: ClassVar[int] = 1
    priced: ClassVar[bool] = True
    endpoint_env: ClassVar[str | None] = "OPENAI"
    writes_raw: ClassVar[bool] = True
    accepts_tools: ClassVar[bool] = True

    def __init__(self, method: MethodSpec, context: BackendContext | None = None, options: Options | None = None, *,
                 client: LLMClient | None = None):
        super().__init__(method, context, options)
        self._client = client
        self._probed = False
        self._probe_lock: asyncio.Lock | None = None
        self._base_url = self.endpoint_url(self.context.base_url)
        self.model_id: str | None = None
        self._provider: str | None = None
        self._stop: list[str] | None = None
        self._weights_sha256: str | None = None
        self._identity: serverinfo.ServerIdentity | None = None
        self._identity_note: str | None = None

    @classmethod
    def endpoint_url(cls, base_url: str | None) -> str | None:
        """``--base-url``, else ``$OPENAI_BASE_URL``, else :data:`DEFAULT_BASE_URL` (the key: ``$OPENAI_API_KEY``)."""
        return base_url or os.environ.get(f"{cls.endpoint_env}_BASE_URL") or DEFAULT_BASE_URL

    @classmethod
    def check_environment(cls, base_url: str | None) -> None:
        """Refuse before anything is sent: an endpoint that is not an http(s) URL, or a hosted provider's endpoint
        (:data:`HOSTED_NEEDING_KEY`) without ``$OPENAI_API_KEY``, which cannot answer. Raises: ConfigError."""
        endpoint = cls.endpoint_url(base_url)
        if endpoint is None:  # a subclass that starts its own server (gguf)
            return
        url = normalise_base_url(endpoint)
        host = (urlsplit(url).hostname or "").lower()
        if host in HOSTED_NEEDING_KEY and not os.environ.get(f"{cls.endpoint_env}_API_KEY", "").strip():
            raise ConfigError(f"no API key for {host}: {cls.endpoint_env}_API_KEY is not set",
                              field=f"{cls.endpoint_env}_API_KEY",
                              fix=f"export {cls.endpoint_env}_API_KEY=…, or point --base-url / "
                                  f"{cls.endpoint_env}_BASE_URL at your own server")

    SELF_HOSTED: ClassVar[tuple[str, ...]] = ("llama.cpp", "llama-cpp-python", "ollama", "vllm")
    """Servers whose model the automatic prompt choice applies to (:meth:`prompt_evidence`): self-hosted engines that
    serve raw completions with the model's own special tokens. A hosted API applies its own chat format."""
    PROMPT_PROBE_PATIENCE_S: ClassVar[float] = 15.0
    """How long :meth:`prompt_evidence` waits for a busy server's ``/models`` before giving up (the default prompt
    then)."""

    @classmethod
    def prompt_evidence(cls, model: str, base_url: str | None) -> list[tuple[str, str]] | None:
        """Ask the endpoint what it serves (:meth:`mtboard.llm.LLMClient.probe`: ``/v1/models``, llama.cpp
        ``/props``, Ollama ``/api/show``, vLLM ``root``) and return what names the model's family
        (:func:`mtboard.llm.serverinfo.prompt_evidence`), plus the GGUF header of the weights file when the server
        runs on this machine (loopback) and reports the file's path (:func:`mtboard.llm.serverinfo.gguf_evidence`).
        None when the server is not a self-hosted engine (:data:`SELF_HOSTED`: a hosted API, or a server that did
        not answer). Never raises."""
        endpoint = cls.endpoint_url(base_url)
        if endpoint is None:
            return None
        try:
            client = LLMClient(normalise_base_url(endpoint), os.environ.get(f"{cls.endpoint_env}_API_KEY"),
                               concurrency=1, timeout_s=cls.PROMPT_PROBE_PATIENCE_S, max_retries=0)
        except MtboardError:
            return None
        client.probe_patience_s = cls.PROMPT_PROBE_PATIENCE_S

        async def ask() -> None:
            try:
                await client.probe(model or None)
            finally:
                await client.aclose()

        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # safe inside a running event loop
                pool.submit(asyncio.run, ask()).result()
        except Exception:  # noqa: BLE001 - the probe never raises; a loop failure must not stop the run either
            return None
        ident = client.identity
        if ident.provider not in cls.SELF_HOSTED:
            return None
        evidence = serverinfo.prompt_evidence(ident)
        host = (urlsplit(normalise_base_url(endpoint)).hostname or "").lower()
        path = ident.weights_path
        if path and _is_loopback(host) and Path(path).is_absolute() and Path(path).is_file():
            evidence = serverinfo.gguf_evidence(path) + evidence  # the server's own file: its header says more
        return evidence

    # -- lifecycle ---------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Build the client from the endpoint and ``$OPENAI_API_KEY``. Raises ConfigError for a bad base URL."""
        if self._client is None:
            tuning = {k: v for k, v in self.options.model_dump().items() if v is not None}
            self._client = LLMClient(self._base_url, os.environ.get(f"{self.endpoint_env}_API_KEY"),
                                     concurrency=max(1, self.context.concurrency), timeout_s=self.context.timeout_s,
                                     max_retries=self.context.max_retries, **tuning)

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

    @classmethod
    def model_slug_for(cls, model: str, effort: str | None = None) -> str:
        """The model as typed, with ``:effort`` when one is given (``qwen3:8b:medium``)."""
        return model + (f":{effort}" if effort else "")

    @classmethod
    def accepts_model_slug(cls, model_slug: str, method: MethodRecord, model_id: str | None) -> bool:
        """The model as typed (:meth:`model_slug_for`), or the weights' name the server reported (:meth:`describe`):
        the served model's listed name (``model_id``), or another name when the card records what the server said
        about itself (its build, the weights' revision or hash: llama.cpp's GGUF file behind an alias, the Hugging
        Face repo vLLM loaded). A server-reported name is declared: only a re-run confirms it (``mtboard verify``
        compares the weights the re-run's server reports)."""
        if model_slug == cls.model_slug_for(method.model, method.effort):
            return True
        if model_id is None:
            return False
        return model_slug == model_id or any(x is not None for x in (method.engine_version, method.model_revision,
                                                                      method.model_file_sha256))

    def describe(self) -> BackendFacts:
        """Provider, endpoint host hash, sampling — and, when the server named the weights it serves (issue 22;
        :mod:`mtboard.llm.serverinfo`), those weights: ``model_slug`` = their public name (the GGUF file name,
        the Hugging Face repo vLLM loaded, Ollama's model name; so two names typed for one file make one model
        page), ``model_id`` = the served model as listed (a path only by its file name), ``model_revision`` (vLLM's
        Hugging Face commit, Ollama's manifest digest), ``model_file_sha256`` (Ollama's blob, or the file's SHA-256
        when the server runs on this machine), ``engine_version`` (the server's build). Otherwise ``model_slug`` is
        the model as typed and ``model_id`` what the answers named."""
        c = self._client
        if c is not None:
            self._provider = c.api_provider
        m = self.method
        ident = self._identity
        slug = self.model_slug_for(m.model, m.effort)
        model_id = self.model_id
        revision = file_sha = engine = None
        if ident is not None:
            engine = ident.engine
            if ident.identifies_weights:
                slug = ident.weights_name or slug
                served = ident.served or ident.weights_name
                model_id = serverinfo.basename(served) if serverinfo.looks_like_path(served or "") else served
                revision = ident.revision
                file_sha = ident.weights_sha256 or self._weights_sha256
        return BackendFacts(api_provider=self._provider, endpoint_host_sha256=endpoint_host_sha256(self._base_url),
                            model_id=model_id, model_slug=slug, sampling=self.sampling(self._stop),
                            model_revision=revision, model_file_sha256=file_sha, engine_version=engine,
                            identity_note=self._identity_note)

    def _local_weights_sha256(self, path: str) -> str | None:
        """SHA-256 of the weights file a server reported, when the server runs on this machine (a loopback
        endpoint) and the file is readable here; None otherwise (a remote server's path means nothing here).
        Hashed once per file (size and modification time) per process."""
        host = (urlsplit(self._base_url or "").hostname or "").lower()
        if not _is_loopback(host):
            return None
        p = Path(path)
        try:
            st = p.stat()
        except OSError:
            return None
        if not p.is_absolute() or not stat.S_ISREG(st.st_mode):
            return None
        key = (str(p), st.st_size, st.st_mtime_ns)
        if key not in _HASHES:
            h = hashlib.sha256()
            with open(p, "rb") as f:
                while block := f.read(4 << 20):
                    h.update(block)
            _HASHES[key] = h.hexdigest()
        return _HASHES[key]

    # -- requests ----------------------------------------------------------------------------------------------------
    def sampling(self, stop: list[str] | None = None) -> dict[str, Any]:
        """Every sampling parameter sent besides the cap (recorded in ``method.sampling``)."""
        s: dict[str, Any] = {"temperature": self.context.temperature}
        if self.method.effort is None:
            s["top_p"] = 1.0
        else:
            s["reasoning_effort"] = self.method.effort
        s.update(self.context.sampling)
        if stop:
            s["stop"] = list(stop)
        return s

    def build_request(self, req: TranslateRequest) -> LLMRequest:
        """The LLMRequest for one entry (chat when the prompt rendered messages, else completion); it carries the
        entry's source, so a reasoning marker the source itself contains stays text (issue 33)."""
        extra = self.sampling(req.stop)
        self._stop = list(req.stop) or None
        temperature = extra.pop("temperature")
        provider = self._client.api_provider if self._client is not None else None
        return LLMRequest(model=self.method.model, max_tokens=self.context.max_tokens, messages=req.messages,
                          prompt=None if req.messages is not None else (req.prompt if req.prompt is not None
                                                                         else req.source),
                          temperature=temperature, extra=extra, stream=self.context.stream,
                          max_tokens_field="max_completion_tokens" if provider == "openai" else "max_tokens",
                          source=req.source)

    async def _ensure_probed(self) -> None:
        if self._probed:
            return
        if self._probe_lock is None:
            self._probe_lock = asyncio.Lock()
        async with self._probe_lock:
            if not self._probed:
                info = await self.client.probe(self.method.model)
                if info.get("unreachable"):  # no TCP connection at all: every request would fail the same way
                    # why (a name that does not resolve, a proxy, a closed local port …) and that case's fix
                    raise BackendError(f"cannot connect to the endpoint: "
                                       f"{info.get('unreachable_problem') or info.get('error')}",
                                       where=f"{self.endpoint_env}_BASE_URL / --base-url" if self.endpoint_env
                                       else self.name,
                                       fix=(info.get("unreachable_fix") or "check the host and port").replace(
                                           "the *_BASE_URL variable", f"{self.endpoint_env or 'OPENAI'}_BASE_URL"))
                self._provider = self.client.api_provider
                self._identity = self.client.identity
                if info.get("identity_unanswered"):  # a busy server: identity unknown, said so (not silently)
                    self._identity_note = (
                        f"the server did not answer GET /models ({info.get('probe_tries')} tries over "
                        f"{info.get('probe_waited_s')} s; still generating?): the card names the model as typed "
                        f"({self.method.model!r}, provider {self._provider}) with no weights SHA-256 or engine; "
                        "re-run when the server is idle to record what it serves")
                path = self._identity.weights_path
                if path is not None:
                    self._weights_sha256 = await asyncio.to_thread(self._local_weights_sha256, path)
                self._probed = True

    async def identify(self) -> None:
        """Ask the server what it serves now (before the first request; :meth:`Backend.identify`)."""
        await self._ensure_probed()

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
                           "reasoning": res.reasoning,
                           **({"stop_cut": res.stop_cut, "uncut_text": res.uncut_text} if res.stop_cut else {}),
                           **({"rate_limit_waits": res.rate_limit_waits} if res.rate_limit_waits else {})})
        if res.fatal:
            raise BackendError(f"the endpoint refused the request: {res.error}", where="openai",
                               fix="check OPENAI_API_KEY, the model name and --base-url / OPENAI_BASE_URL")
        # raw_predicted is what the server sent; stripping reasoning (<think>, Harmony channels, [THINK] …) is the
        # mechanical policy's job (recorded there as the think.stripped flag), never done before the card
        raw = res.raw_text if res.raw_text is not None else res.text
        return TranslationRecord(run_index=req.run_index, entry_id=req.entry_id, raw_predicted=raw,
                                 error=res.error, error_kind=res.error_kind, attempts=max(1, res.attempts),
                                 latency_s=res.latency_s, usage=res.usage, model_id=res.model_id,
                                 finish_reason=res.finish_reason, stop_cut=res.stop_cut,
                                 text_repairs=res.text_repairs)


__all__ = ["DEFAULT_BASE_URL", "OpenAIBackend", "OpenAIOptions"]
