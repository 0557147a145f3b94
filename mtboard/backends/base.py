"""The backend interface, its options, method-spec parsing and the registry (spec §3.2; simonw/llm's plugin shape).

A backend is a subclass of :class:`Backend`. It declares, as class attributes, what the runner, the validator and
``mtboard verify`` need to know about it (method class, whether it takes a prompt, default prompt and concurrency,
batch size …) and an :class:`Options` model — a pydantic model of its ``--backend-opt KEY=VALUE`` settings, whose
fields give validation, defaults and the help text (``mtboard backends``).

Backends register through the entry-point group ``mtboard.backends`` (:data:`ENTRY_POINT_GROUP`): the built-ins in
mtboard's own ``pyproject.toml``, a third-party backend in its package's, the same way::

    [project.entry-points."mtboard.backends"]
    mybackend = "my_package.module:MyBackend"

:func:`load_backends` imports them (once) into :data:`REGISTRY`, keyed by the name users type (``backend:model``).
A plugin that fails to import does not break the others: it is reported when its name is used.

Life cycle (the runner): ``backend = cls(method, context, options)``; ``backend.start()`` (in a worker thread);
any number of ``await backend.translate(batch)``; ``await backend.aclose()`` always (also on Ctrl-C and errors).
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from mtboard.core import fmt
from mtboard.core.errors import ConfigError
from mtboard.inputs.runspec import EFFORTS, BackendContext, MethodSpec, RunSpec, split_method
from mtboard.core.schema import BackendFacts, LocalModelGate, MethodClass, MethodRecord, PluginRecord, TranslationRecord

ENTRY_POINT_GROUP = "mtboard.backends"
"""Entry-point group through which built-in and third-party backends register."""

BUILTIN_BACKENDS = {
    "openai": "mtboard.backends.openai:OpenAIBackend",
    "gguf": "mtboard.backends.gguf:GGUFBackend",
    "apertium": "mtboard.backends.apertium:ApertiumBackend",
    "echo": "mtboard.backends.baselines:EchoBaseline",
    "empty": "mtboard.backends.baselines:EmptyBaseline",
}
"""The built-ins as ``pyproject.toml`` declares them (``tests`` check the two agree). Used only when mtboard's own
distribution metadata is absent — running from a source tree that was never installed."""


class Options(BaseModel):
    """Base of every backend's ``--backend-opt`` settings model: unknown keys are refused, values from the command
    line arrive as strings and are converted (``"4096"`` → 4096). Subclasses document each field with a docstring
    (units, range); that text is the help."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    @classmethod
    def path_fields(cls) -> list[str]:
        """The settings that name a file or folder of the machine (sorted): a field typed :class:`pathlib.Path`, or
        one marked ``Field(json_schema_extra={"machine_path": True})`` (e.g. the gguf backend's ``hf_cache_dir``).
        A sweep file may not set them (the machine's folders are the operator's; issue 34 item 4)."""
        out = []
        for key, f in cls.model_fields.items():
            extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
            if extra.get("machine_path") or f.annotation is Path or Path in get_args(f.annotation):
                out.append(key)
        return sorted(out)


class NoOptions(Options):
    """A backend without settings."""


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
    """Replicate index (``--runs N``); the runner sets it on the returned record."""


@dataclass(frozen=True)
class Rerun:
    """How ``mtboard verify`` re-runs a card's method here (:meth:`Backend.rerun`): the method to run and the
    ``--backend-opt`` settings to apply."""

    method: str
    backend_options: dict[str, Any] = field(default_factory=dict)


class Backend(ABC):
    """One translation backend. See the module docstring for registration and life cycle.

    Class attributes (defaults here; a backend overrides what differs):
        name: the registry key users type before the colon.
        method_class: spec §9.6 class recorded in the card.
        Options: the pydantic model of its ``--backend-opt`` settings.
        model_optional: True when ``backend:`` alone is valid (baselines).
        prompt_format: ``"raw"`` for engines that take the raw source text and no prompt template; None when the
            prompt template decides (chat | completion).
        default_prompt: prompt used when ``--prompt`` is not given (prompted backends).
        default_concurrency: batches in flight when ``--concurrency`` is not given.
        preferred_batch_size: entries per :meth:`translate` call.
        strip_unknown_marks: outputs carry Apertium-style ``*word``/``#word`` marks that scoring strips from
            ``predicted`` (``raw_predicted`` keeps them).
        priced: requests cost money per token (price table applies); False for local engines and baselines.
        endpoint_env: prefix of the ``*_BASE_URL`` variable naming the endpoint, for backends that talk to one.
        writes_raw: the backend hands the runner one raw line per request through :attr:`raw_sink` (LLM
            backends); otherwise the runner writes one line per record (source and output).
        label: human label of the method in summaries (e.g. "baseline: echo").
        accepts_tools: the method can run with ``--tools`` (prompted LLM backends).
        local_gate: the backend serves a local model and records its canary/latency gate in ``method.local``.
        model_is_path: the model part may name a file of the machine (``gguf:PATH``); a sweep file's model is then
            checked under the sweep's root (:func:`mtboard.core.paths.resolve_inside`; issue 34 item 4).
    """

    name: ClassVar[str]
    method_class: ClassVar[MethodClass]
    Options: ClassVar[type[Options]] = NoOptions
    model_optional: ClassVar[bool] = False
    prompt_format: ClassVar[Literal["raw"] | None] = None
    default_prompt: ClassVar[str] = "translate-chat"
    default_concurrency: ClassVar[int] = 8
    local_gate: ClassVar[bool] = False
    model_is_path: ClassVar[bool] = False
    """True for backends that serve a local model and record its canary/latency gate (``method.local``); a card of
    any other backend must have ``method.local`` null."""
    preferred_batch_size: ClassVar[int] = 1
    strip_unknown_marks: ClassVar[bool] = False
    priced: ClassVar[bool] = False
    endpoint_env: ClassVar[str | None] = None
    writes_raw: ClassVar[bool] = False
    label: ClassVar[str | None] = None
    accepts_tools: ClassVar[bool] = False
    """The method can run inside a tool pipeline (``--tools``, :mod:`mtboard.run.fst_gate`): a prompted LLM backend whose
    prompt can be re-rendered with tool feedback. Engines and baselines cannot."""

    def __init__(self, method: MethodSpec, context: BackendContext | None = None, options: Options | None = None):
        self.method = method
        self.context = context or BackendContext()
        self.options = options if options is not None else type(self).Options()
        self.raw_sink: Callable[[dict[str, Any]], None] | None = None
        """Set by the runner when :attr:`writes_raw`: receives one JSON-able dict per request (``entry_id``,
        ``run_index``, ``t_start``, ``t_end``, ``request`` body, ``response`` as received, ``attempts`` …; never
        headers, keys or URLs); the runner appends it to ``WORKDIR/raw.jsonl``."""

    # -- class-level hooks -------------------------------------------------------------------------------------------
    @classmethod
    def parse_options(cls, values: Mapping[str, Any]) -> Options:
        """Check ``--backend-opt`` values (strings or typed) against :attr:`Options`.

        Raises: ConfigError (one line) for an unknown key — listing this backend's keys — or a bad value.
        """
        keys = sorted(cls.Options.model_fields)
        unknown = sorted(k for k in values if k not in keys)
        if unknown:
            listing = f"valid keys: {', '.join(keys)}" if keys else "it takes none"
            raise ConfigError(f"unknown --backend-opt {unknown[0]!r} for backend {cls.name}; {listing}",
                              field="--backend-opt", fix="drop it or use one of the valid keys "
                                                         "(`mtboard backends` lists them)")
        try:
            return cls.Options.model_validate(dict(values))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            key = ".".join(map(str, first["loc"]))
            raise ConfigError(f"bad value for --backend-opt {key}: {first['msg']}", field="--backend-opt",
                              fix=f"see the {cls.name} backend's settings ({', '.join(keys)}; "
                                  "`mtboard backends` describes them)") from None

    @classmethod
    def method_class_for(cls, *, coaching: bool = False, tools: bool = False) -> MethodClass:
        """The spec §9.6 class of a method of this backend, chosen by what the method uses: a method with tools
        (``--tools``, e.g. the FST gate's translate → validate → retry loop) is ``pipeline``, also with coaching data;
        an LLM given coaching data (``--coaching``) is ``coached-llm``; otherwise the backend's
        :attr:`method_class`. The runner records it; the validator requires a card's ``method_class`` to equal it
        (issue 18). A backend that a third-party distribution provides through the entry-point group is
        ``custom-plugin`` (spec §9.6), whatever it declares."""
        if _SOURCE.get(cls.name, (OWN_DISTRIBUTION, ""))[0] != OWN_DISTRIBUTION and REGISTRY.get(cls.name) is cls:
            return MethodClass.custom_plugin
        if tools:
            return MethodClass.pipeline
        if coaching and cls.method_class == MethodClass.raw_llm:
            return MethodClass.coached_llm
        return cls.method_class

    @classmethod
    def check_languages(cls, model: str, source_language: str, target_language: str) -> None:
        """Refuse a model that cannot translate this language pair (e.g. an Apertium mode for another pair).
        Default: no check. Raises: ConfigError."""

    @classmethod
    def prompt_evidence(cls, model: str, base_url: str | None) -> list[tuple[str, str]] | None:
        """What can be learnt before the run about the family of the model this backend will serve, for the automatic
        prompt choice of a run without ``--prompt`` (:mod:`mtboard.inputs.native`): ``(source, value)`` pairs, or
        None when the backend cannot say (then its :attr:`default_prompt` is used and nothing is recorded). The
        default: None. Must not raise for an unreachable server (None or ``[]`` then)."""
        return None

    @classmethod
    def public_model(cls, model: str) -> str:
        """The model part as published in a card (default: as typed). A backend whose model may be a local path
        returns something that names no local folder."""
        return model

    @classmethod
    def model_slug_for(cls, model: str, effort: str | None = None) -> str:
        """The card's ``model_slug`` for a published model part (:meth:`public_model`): what :meth:`describe`
        reports. Default ``backend/model`` (the backend alone without a model). The validator requires a card's
        ``model_slug`` to equal it (issue 15: ``model_slug`` agrees with ``backend:model``)."""
        return f"{cls.name}/{model}" if model else cls.name

    @classmethod
    def accepts_model_slug(cls, model_slug: str, method: MethodRecord, model_id: str | None) -> bool:
        """Whether a card's ``model_slug`` agrees with its method (the validator's check, issue 15). Default: it
        equals :meth:`model_slug_for` of the method's model and effort. A backend whose :meth:`describe` may name
        the model otherwise (the weights a server reports) accepts those names too."""
        return model_slug == cls.model_slug_for(method.model, method.effort)

    @classmethod
    def check_local_gate(cls, gate: LocalModelGate, source_language: str, sample_sources: list[str]) -> list[str]:
        """Problems (one line each) with a card's local-model gate record that its own fields show (e.g. a canary
        marked passed although an output is no translation). Only backends that serve a local model
        (:attr:`local_gate`) record one; default: none."""
        return []

    @classmethod
    def endpoint_url(cls, base_url: str | None) -> str | None:
        """The endpoint this backend will talk to (``--base-url``, else its environment), or None for backends
        without one. Only its host's SHA-256 is recorded."""
        return None

    @classmethod
    def check_environment(cls, base_url: str | None) -> None:
        """Refuse, before anything is translated, a run whose environment cannot work (e.g. a hosted endpoint and
        no API key). Default: no check. Raises: ConfigError naming the variable to set."""

    @classmethod
    def rerun(cls, spec: RunSpec, facts: BackendFacts, *, model_path: Path | None = None) -> Rerun:
        """How to re-run a card's method here (``mtboard verify``), from the card's spec and backend facts
        (:meth:`RunSpec.from_card`, :func:`mtboard.inputs.runspec.facts_from_card`): by default the recorded method with
        the recorded ``--backend-opt`` settings. ``model_path``: a local copy of the model a card names only by file
        name and hash (local backends). Raises: ConfigError when the method cannot be re-run as recorded."""
        return Rerun(method=spec.method.text, backend_options=spec.options)

    # -- instance life cycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Prepare to translate (check the engine, start a server …). Called once, in a worker thread.
        Raises: ConfigError / BackendError / DeferredError when the method cannot run here."""

    async def identify(self) -> None:
        """Learn what :meth:`describe` reports about the served model before the first request (a server's
        ``/models``), so the runner can check judges against it before anything is paid for. Default: nothing (a
        backend that knows its model after :meth:`start`). Raises: BackendError when the endpoint cannot be
        reached."""

    @abstractmethod
    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """Translate a batch; one record per request, same order. Never raises for per-entry failures: they are
        recorded with ``error``/``error_kind``. Raises BackendError when no request of the run can succeed."""

    def describe(self) -> BackendFacts:
        """What this backend learnt about itself (:class:`~mtboard.core.schema.BackendFacts`): provider, engine build,
        weights hash, model id … never a URL or a key. Default: the backend name as provider, the model as id."""
        return BackendFacts(api_provider=self.name, model_id=self.method.model or self.name)

    def close(self) -> None:
        """Release what :meth:`start` took (synchronous)."""

    async def aclose(self) -> None:
        """Release what :meth:`start` took; the runner always awaits this (default: :meth:`close` in a thread)."""
        await asyncio.to_thread(self.close)


# --------------------------------------------------------------------------------------------------------------------
# Registry

REGISTRY: dict[str, type[Backend]] = {}
"""name → backend class, filled by :func:`load_backends` (and :func:`register`)."""
_FAILED: dict[str, str] = {}
"""name → why its entry point could not be loaded."""
_SOURCE: dict[str, tuple[str, str]] = {}
"""name → (distribution, ``module:attr``) of a backend loaded from an entry point."""
_loaded = False


def register(cls: type[Backend]) -> type[Backend]:
    """Add a backend class to :data:`REGISTRY` under ``cls.name`` (also usable as a class decorator, e.g. in tests;
    installed packages register through the entry-point group instead)."""
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise TypeError(f"{cls!r} is not a subclass of mtboard.backends.Backend")
    REGISTRY[cls.name] = cls
    return cls


def _entry_points() -> list[tuple[str, str, str]]:
    """(name, "module:attr", distribution) of every registered backend entry point; the built-in table when
    mtboard's own distribution is not installed."""
    eps = [(ep.name, ep.value, ep.dist.name if ep.dist is not None else "?")
           for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)]
    if not any(dist == "mtboard" for _, _, dist in eps):
        eps = [(n, v, "mtboard") for n, v in BUILTIN_BACKENDS.items()] + eps
    return eps


def load_backends() -> dict[str, type[Backend]]:
    """Import every backend registered in the ``mtboard.backends`` entry-point group (once) and return
    :data:`REGISTRY`. A plugin that fails to import or is not a :class:`Backend` subclass is left out and its
    reason kept for :func:`get_backend`."""
    global _loaded
    if _loaded:
        return REGISTRY
    _loaded = True
    for name, value, dist in _entry_points():
        _load_entry(name, value, dist)
    return REGISTRY


def _load_entry(name: str, value: str, dist: str) -> None:
    """Import one entry point into :data:`REGISTRY` (unless ``name`` is there already) or record why not."""
    if name in REGISTRY:
        return
    module, _, attr = value.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the others
        _FAILED[name] = f"{dist}: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return
    if not (isinstance(obj, type) and issubclass(obj, Backend)) or getattr(obj, "name", None) != name:
        _FAILED[name] = f"{dist}: {value} is not a mtboard Backend subclass named {name!r}"
        return
    REGISTRY[name] = obj
    _SOURCE[name] = (dist, value)


OWN_DISTRIBUTION = "mtboard"


def plugin_record(name: str) -> PluginRecord | None:
    """The installed distribution behind backend ``name`` when it is a third-party plugin (spec §9.6
    custom-plugin; issue 18): name, version, ``module:attr`` and the SHA-256 over its installed files — each file the
    distribution's ``RECORD`` lists (bytecode and ``RECORD`` itself excluded), ``[path, SHA-256 of its bytes]``,
    sorted by path, as canonical JSON (RFC 8785). None for mtboard's own backends and for classes registered in
    code (:func:`register`), which no installed distribution provides.

    Reads the installed metadata and files only: nothing of the plugin is imported (``verify.yml`` checks an
    installed release against the approved hash before any of its code runs).

    Raises: ConfigError when the distribution lists no files (installed without a RECORD) or a listed file cannot be
    read."""
    found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name and ep.dist is not None]
    if not found or any(ep.dist.name == OWN_DISTRIBUTION for ep in found):
        return None
    from mtboard.core import canonical  # noqa: PLC0415

    dist, value = found[0].dist, found[0].value
    dist_name = dist.metadata["Name"]
    files = dist.files
    if not files:
        raise ConfigError(f"plugin distribution {dist_name!r} lists no installed files (no RECORD)",
                          field="--method", fix="install the plugin with pip (a wheel records its files)")
    rows = []
    for f in files:
        path = str(f).replace("\\", "/")
        if path.endswith((".pyc", "/RECORD", "/INSTALLER", "/REQUESTED", "/direct_url.json")) or "__pycache__/" in path:
            continue
        try:
            data = Path(f.locate()).read_bytes()
        except OSError as exc:
            raise ConfigError(f"plugin {dist_name!r}: installed file {path} cannot be read ({exc.strerror})",
                              field="--method", fix="reinstall the plugin") from None
        rows.append([path, canonical.sha256_hex(data)])
    return PluginRecord(distribution=dist.metadata["Name"], version=dist.version,
                        files_sha256=canonical.sha256_hex(canonical.canonical_bytes(sorted(rows))), entry_point=value)


def get_backend(name: str) -> type[Backend]:
    """The backend class registered as ``name``.

    Only the entry points named ``name`` are imported when one of them loads (a run imports its own backend, not
    every backend and their HTTP client: issue 35 item 4); every backend otherwise, for the message.

    Raises: ConfigError naming the plugin's load failure, or "did you mean" with the known names.
    """
    if name not in REGISTRY and not _loaded:
        for ep_name, value, dist in _entry_points():
            if ep_name == name:
                _load_entry(ep_name, value, dist)
    if name not in REGISTRY:
        load_backends()
    if name in REGISTRY:
        return REGISTRY[name]
    if name in _FAILED:
        raise ConfigError(f"backend {name!r} is registered but failed to load ({_FAILED[name]})",
                          field="--method", fix="reinstall the package that provides it")
    close = difflib.get_close_matches(name, REGISTRY.keys(), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(f"unknown backend {name!r}; {hint}known backends: {', '.join(sorted(REGISTRY))}",
                      field="--method", fix="write backend:model[:effort], e.g. apertium:eng-spa")


def option_rows(cls: type[Backend]) -> list[tuple[str, str, str, str]]:
    """``(key, type, default, meaning)`` of each ``--backend-opt`` setting of a backend, from its :attr:`Options`
    model (the help of ``mtboard backends``)."""
    rows = []
    for key, f in sorted(cls.Options.model_fields.items()):
        default = "required" if f.is_required() else repr(f.get_default(call_default_factory=True))
        meaning = " ".join((f.description or "").replace("``", "").split())
        rows.append((key, _type_text(f.annotation), default, meaning))
    return rows


def _type_text(annotation: Any) -> str:
    """``int``, ``float or none``, ``enforce|record`` … for a settings field's annotation."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "|".join(str(a) for a in args)
    if origin is Annotated:
        return _type_text(args[0])
    if origin in (Union, UnionType):
        parts = [_type_text(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" or none" if type(None) in args else "")
    return getattr(annotation, "__name__", str(annotation))


def parse_method(text: str) -> MethodSpec:
    """Parse ``backend:model[:effort]`` with the syntax's one parser (:func:`mtboard.inputs.runspec.split_method`)
    and check it against the registry: the backend is registered and names a model unless it needs none.

    Raises: ConfigError for an unknown backend (with "did you mean" and the list) or an empty model where the
    backend needs one.
    """
    backend, model, effort = split_method(text)
    cls = get_backend(backend)
    if not model and not cls.model_optional:
        raise ConfigError(f"method {text!r} names no model", field="--method",
                          fix=f"write {backend}:MODEL[:effort]")
    return MethodSpec(text=text, backend=backend, model=model, effort=effort)


# --------------------------------------------------------------------------------------------------------------------
# What a cost is called

NO_API_COST = "no API cost (local)"
"""Cost text of a run whose backend charges nothing per request (a local engine, a local model, a baseline)."""
NOT_PRICED = "not priced"
"""Cost text of a run with no recorded cost (no price for the model, or the provider reported no usage)."""


def cost_text(card: Any, cost: float | None) -> str:
    """What every page says for a cost per entry (issue 36 item 5; decided here, once, for the site, the downloads and
    ``mtboard run``'s summary; ``card``: a :class:`mtboard.core.schema.RunCard`): :data:`NOT_PRICED` when
    nothing was recorded (``cost`` None); :data:`NO_API_COST` when it is 0 because the card's backend charges nothing
    (its ``priced`` is False: :class:`mtboard.backends.base.Backend`); else US dollars (:func:`mtboard.core.fmt.usd`),
    a 0 from prices of 0 (the price table's or ``--price-in/--price-out``) said as such. Never a bare "$0". A backend
    this installation does not know (a plugin) counts as priced: its number is shown."""
    if cost is None:
        return NOT_PRICED
    if cost == 0:
        try:
            priced = get_backend(card.method.backend).priced
        except Exception:  # noqa: BLE001 - an unknown backend: show the number
            priced = True
        return "$0 (priced at 0)" if priced else NO_API_COST
    return fmt.usd(cost)


__all__ = ["NO_API_COST", "NOT_PRICED", "cost_text", "EFFORTS", "ENTRY_POINT_GROUP", "BUILTIN_BACKENDS", "Options", "NoOptions", "TranslateRequest", "Rerun",
           "Backend", "BackendContext", "BackendFacts", "MethodSpec", "REGISTRY", "register", "load_backends",
           "get_backend", "option_rows", "parse_method", "plugin_record", "OWN_DISTRIBUTION"]
