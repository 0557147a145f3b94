"""The backend interface, method-spec parsing and the registry (spec §3.2, issue: the runner).

A method spec is ``backend:model[:effort]``: the first word is the backend; the last word is a reasoning effort only
when it is one of :data:`EFFORTS`; everything between is the model (so ``openai:qwen3:8b:medium`` is backend
``openai``, model ``qwen3:8b``, effort ``medium``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol

from mtboard.errors import ConfigError
from mtboard.schema import LocalModelGate, MethodClass, TranslationRecord

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
    if not model and not REGISTRY[backend].model_optional:
        raise ConfigError(f"method {text!r} names no model", field="--method",
                          fix=f"write {backend}:MODEL[:effort]")
    return MethodSpec(text=text, backend=backend, model=model, effort=effort)


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


class Backend(Protocol):
    """One translation backend. Instances are created per run by the registry factory, started once, then asked to
    translate batches; ``close`` always runs (also on Ctrl-C).

    Class attributes:
        name: registry key.
        method_class: spec §9.6 class recorded in the card.
        model_optional: True when ``backend:`` alone is valid (baselines).
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
        model_file_sha256, local (LocalModelGate), model_id …"""
        ...

    def close(self) -> None: ...


BackendFactory = Callable[..., Backend]
REGISTRY: dict[str, Any] = {}
"""name → backend class (or factory with the class attributes above)."""


def register(cls: Any) -> Any:
    """Class decorator: add a backend to :data:`REGISTRY` under ``cls.name``."""
    REGISTRY[cls.name] = cls
    return cls


def get_backend(name: str) -> Any:
    """Registry lookup with a "did you mean" error."""
    if name not in REGISTRY:
        parse_method(f"{name}:x")  # raises the helpful error
    return REGISTRY[name]


__all__ = ["EFFORTS", "MethodSpec", "parse_method", "TranslateRequest", "Backend", "REGISTRY", "register",
           "get_backend", "LocalModelGate"]
