"""The backend interface, method-spec parsing and the registry (spec §3.2, issue: the runner).

A method spec is ``backend:model[:effort]``: the first word is the backend; the last word is a reasoning effort only
when it is one of :data:`EFFORTS`; everything between is the model (so ``openai:qwen3:8b:medium`` is backend
``openai``, model ``qwen3:8b``, effort ``medium``).

Construction convention (used by the runner): ``backend = REGISTRY[spec.backend](spec, options=options)`` with a
:class:`MethodSpec` and a :class:`BackendOptions` passed by keyword (a backend that needs none may swallow it with
``**_``); then ``backend.start()``; then any number of
``await backend.translate(batch)``; ``backend.close()`` always runs (also on Ctrl-C and errors).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol

from mtboard.errors import ConfigError
from mtboard.schema import LocalModelGate, MethodClass, TranslationRecord

if TYPE_CHECKING:  # pragma: no cover
    from mtboard.prompts import Prompt

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class MethodSpec:
    """A parsed method spec. ``text`` is what the user typed."""

    text: str
    backend: str
    model: str
    effort: str | None = None


def parse_method(text: str) -> MethodSpec:
    """Parse ``backend:model[:effort]``.

    Raises: ConfigError for an empty model or an unknown backend (with "did you mean" and the list).
    """
    parts = text.split(":")
    backend = parts[0].strip()
    rest = parts[1:]
    effort = None
    if len(rest) >= 2 and rest[-1] in EFFORTS:
        effort = rest[-1]
        rest = rest[:-1]
    model = ":".join(rest)
    if backend not in REGISTRY:
        close = difflib.get_close_matches(backend, REGISTRY.keys(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown backend {backend!r}; {hint}known backends: {', '.join(sorted(REGISTRY))}",
                          field="--method", fix="write backend:model[:effort], e.g. apertium:eng-spa")
    if not model and not getattr(REGISTRY[backend], "model_optional", False):
        raise ConfigError(f"method {text!r} names no model", field="--method",
                          fix=f"write {backend}:MODEL[:effort]")
    return MethodSpec(text=text, backend=backend, model=model, effort=effort)


@dataclass
class BackendOptions:
    """Run settings handed to a backend's constructor (``cls(spec, options)``). Backends ignore what they do not use.

    Every field here that changes the output is recorded in the card by the runner (MethodRecord).
    """

    temperature: float | None = 0.0
    """Sampling temperature sent with every request (LLM backends)."""
    max_tokens: int = 512
    """Explicit generation cap sent with every request (LLM backends), tokens."""
    concurrency: int = 8
    """Requests in flight at once (the runner bounds batches in flight with the same number)."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (``--base-url`` or ``OPENAI_BASE_URL``); never written to any artifact."""
    prompt: Prompt | None = None
    """The loaded prompt template (mtboard.prompts.Prompt), so a backend can render canary lines itself."""
    sampling: dict[str, Any] = field(default_factory=dict)
    """Further sampling parameters sent verbatim (top_p, seed, …)."""
    stream: bool = False
    """Use server-sent-event streaming (LLM backends)."""
    timeout_s: float = 120.0
    """Per-request read timeout (seconds)."""
    max_retries: int = 5
    """Transport-failure retries per request beyond the first attempt."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Backend-specific settings (e.g. gguf: n_ctx, n_gpu_layers, n_threads; latency thresholds)."""
    source_language: str | None = None
    """Corpus source language (BCP 47); gguf renders its canary and latency-gate lines with it."""
    target_language: str | None = None
    """Corpus target language (BCP 47)."""
    sample_sources: list[str] = field(default_factory=list)
    """A few corpus source lines in order (e.g. the first 18); gguf uses them for the canary/latency gate when it has
    no fixed lines for the source language."""


@dataclass
class TranslateRequest:
    """What the runner asks a backend to translate: one entry, already rendered by the prompt layer."""

    entry_id: int
    source: str
    prompt: str | None = None
    """Rendered completion prompt (prompt format 'completion')."""
    messages: list[dict[str, str]] | None = None
    """Rendered chat messages (prompt format 'chat')."""
    history: list[str] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    """Stop sequences from the prompt's front matter (LLM backends send them as ``stop``)."""
    run_index: int = 0
    """Replicate index (``--runs N``); backends may ignore it (the runner sets it on the returned record)."""


class Backend(Protocol):
    """One translation backend. Instances are created per run by the registry factory, started once, then asked to
    translate batches; ``close`` always runs (also on Ctrl-C).

    Class attributes:
        name: registry key.
        method_class: spec §9.6 class recorded in the card.
        model_optional: True when ``backend:`` alone is valid (baselines).

    Optional class attributes (the runner reads them with ``getattr`` and these defaults):
        prompt_format (None): ``"raw"`` for engines that take the raw source text and no prompt template
            (apertium, echo, empty); otherwise the prompt template decides (chat | completion).
        default_prompt ("translate-chat"): prompt name used when ``--prompt`` is not given.
        default_concurrency (8): batches in flight when ``--concurrency`` is not given (gguf: 1).
        preferred_batch_size (1): entries per ``translate`` call; the runner keeps ``concurrency`` batches in flight.
        strip_unknown_marks (False): True when outputs carry Apertium-style ``*word``/``#word`` marks for scoring to
            strip from ``predicted`` (kept in ``raw_predicted``).
        label (None): human label of the method in summaries (e.g. "baseline: echo").

    Optional instance hooks:
        raw_sink: when the backend has this attribute, the runner sets it to a callable; the backend calls it with
            one JSON-able dict per request (``entry_id``, ``run_index``, ``t_start``, ``t_end``, ``request`` body,
            ``response`` as received, ``attempts`` …; never headers, keys or URLs) and the runner appends it to
            ``WORKDIR/raw.jsonl``. Backends without it get one line per record (source and output).
        aclose(): async close; preferred by the runner over ``close()`` when present.
    """

    name: ClassVar[str]
    method_class: ClassVar[MethodClass]
    model_optional: ClassVar[bool]

    def start(self) -> None: ...

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """Translate a batch; returns one record per request, same order. Never raises for per-entry failures:
        they are recorded with ``error``/``error_kind``."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts for the card's MethodRecord: api_provider, endpoint_host_sha256, engine_version, model_revision,
        model_file_sha256, local (LocalModelGate), model_id, streaming, sampling, max_tokens …  Keys that are
        MethodRecord fields are copied into it; ``model_id`` goes to the card's top level. Never a URL or a key."""
        ...

    def close(self) -> None: ...


BackendFactory = Callable[..., Backend]
REGISTRY: dict[str, Any] = {}
"""name → backend class (or factory with the class attributes above), called as ``factory(spec, options=options)``."""


def register(cls: Any) -> Any:
    """Class decorator: add a backend to :data:`REGISTRY` under ``cls.name``."""
    REGISTRY[cls.name] = cls
    return cls


def get_backend(name: str) -> Any:
    """Registry lookup with a "did you mean" error."""
    if name not in REGISTRY:
        parse_method(f"{name}:x")  # raises the helpful error
    return REGISTRY[name]


def load_builtin_backends() -> None:
    """Import the built-in backend modules so they register (missing optional modules are skipped)."""
    import importlib

    for mod in ("openai", "apertium", "baselines", "gguf"):
        try:
            importlib.import_module(f"mtboard.backends.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"mtboard.backends.{mod}":
                raise


__all__ = ["EFFORTS", "MethodSpec", "parse_method", "BackendOptions", "TranslateRequest", "Backend", "REGISTRY",
           "register", "get_backend", "load_builtin_backends", "LocalModelGate"]
