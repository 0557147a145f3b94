"""Prompt templates (``prompts/*.j2``): YAML front matter + a Jinja2 body, rendered per entry (spec §3.2).

A template file looks like::

    ---
    family: generic            # which models it is written for (generic, base-model, dedicated-translator, …)
    format: chat               # chat → /v1/chat/completions messages; completion → /v1/completions text
    variables: [source, source_language_name, target_language_name]
    description: one line
    stop: []                   # optional stop sequences (each rendered as a template too)
    strip: true                # optional: false keeps the completion prompt's trailing newline (turn formats)
    source_languages: [en]     # optional: languages the template can take as source
    examples: {es: [[en, es], …]}   # optional few-shot pairs per target language
    ---
    {% block system %}…{% endblock %}
    {% block user %}{{ source }}{% endblock %}        (chat)   |   {% block prompt %}…{% endblock %}  (completion)

The ``system`` block must not depend on the entry: its rendered text is the card's ``system_prompt_used`` and its
SHA-256 ``system_prompt_sha256``; the whole file's SHA-256 is ``method.prompt_template_sha256``. Templates render
with ``StrictUndefined`` (a misspelt variable is an error, not an empty string) and without autoescaping (the output
is a prompt, not HTML). Templates are looked up in :func:`prompts_dir`: the package data ``mtboard._prompts`` (the
repository's ``prompts/`` folder, installed under that name by pyproject.toml's ``package-dir``), or the run-time
configuration's ``prompts_dir`` (``$MTBOARD_PROMPTS_DIR``, read by the CLI; :mod:`mtboard.core.runtime`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2
import jinja2.meta
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mtboard.core import canonical, paths, safejson
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.languages import is_one_of, language_name, pick
from mtboard.core.runtime import runtime
from mtboard.core.schema import describe_validation_error

KNOWN_VARIABLES = frozenset({"source", "history", "source_language", "target_language", "source_language_name",
                             "target_language_name", "examples", "coaching", "fst_feedback"})
"""Variables a template may use. ``examples`` is the list of ``(source, target)`` pairs for the target language;
``coaching`` the text of the ``--coaching`` file ('' without one; spec §3.2 coaching data, §9.6 coached-llm);
``fst_feedback`` the FST gate's verdicts on this entry's earlier hypotheses (``--tools fst-gate``,
:mod:`mtboard.run.fst_gate`): ``[]`` on the first attempt, then one ``{"hypothesis": str, "rejected": [word, …]}`` per
earlier attempt, oldest first (``rejected``: lower-cased words the target-language analyser does not know; an empty
``hypothesis`` when that attempt gave no usable text). Only the entry's user/prompt block may use it."""


PROMPTS_PACKAGE = "mtboard._prompts"
"""The package whose data are the templates: the repository's ``prompts/`` folder, mapped by pyproject.toml's
``[tool.setuptools.package-dir]`` (one source of truth, no copy; the same folder in editable installs)."""


def prompts_dir() -> Path:
    """The folder of prompt templates (``*.j2``), judge prompts (``judges/*.j2``) and the price table
    (``prices.yaml``).

    :attr:`mtboard.core.runtime.Runtime.prompts_dir` when set (``$MTBOARD_PROMPTS_DIR`` of the running command): a
    folder with the same layout that replaces the shipped one as a whole (a maintainer's own prompts; ``verify``
    still refuses a template whose SHA-256 differs from the card's). Otherwise the package data of
    :data:`PROMPTS_PACKAGE`, found with :func:`importlib.resources.files`.

    Raises: ConfigError when mtboard is not installed (run from a bare source tree, so ``mtboard._prompts`` cannot be
    imported) or is installed somewhere that is not a folder (a zip file).
    """
    chosen = runtime().prompts_dir
    if chosen is not None:
        return chosen
    try:
        root = resources.files(PROMPTS_PACKAGE)
    except ModuleNotFoundError:
        raise ConfigError(f"the prompt templates (package {PROMPTS_PACKAGE}) are not installed",
                          fix="install mtboard (pip install -e . in the checkout), or set MTBOARD_PROMPTS_DIR") \
            from None
    if not isinstance(root, Path):
        raise ConfigError(f"the prompt templates of {PROMPTS_PACKAGE} are not in a folder", where=str(root),
                          fix="install mtboard with pip (not as a zip file), or set MTBOARD_PROMPTS_DIR")
    return root


class PromptMeta(BaseModel):
    """The YAML front matter of a prompt template."""

    model_config = ConfigDict(extra="forbid", strict=True)

    family: str = Field(min_length=1)
    """Model family the prompt is written for (generic, base-model, dedicated-translator, …)."""
    format: Literal["chat", "completion"]
    """chat: messages to /v1/chat/completions; completion: raw text to /v1/completions."""
    variables: list[str]
    """Variables the body uses (checked against the body and :data:`KNOWN_VARIABLES`)."""
    description: str = ""
    stop: list[str] = []
    """Stop sequences sent with every request (each rendered with the run's variables)."""
    source_languages: list[str] | None = None
    """Source languages the template supports (None: any)."""
    examples: dict[str, list[list[str]]] = {}
    """Few-shot pairs per target-language tag: ``{es: [[english, spanish], …]}``."""
    examples_note: str | None = None
    """Where the examples come from (e.g. 'hand-written by the mtboard authors for this template')."""
    strip: bool = True
    """False: the ``prompt`` block (completion) is sent exactly as rendered, its trailing whitespace kept — a turn
    format rendered by hand ends with the model's turn header and a newline (``<start_of_turn>model\\n``), which
    stripping would cut (:mod:`mtboard.inputs.native`). True (default): leading and trailing whitespace is stripped."""
    development_entries: list[str | int] = []
    """Ids of the corpus entries the examples are taken from (spec §9.2.2: using development entries in few-shot
    prompts is allowed but must be declared; the validator's ``submission`` check refuses a card whose prompt holds
    an entry's text not listed here, :mod:`mtboard.validate.submission`)."""


@dataclass(frozen=True)
class RenderedPrompt:
    """One entry's prompt: ``messages`` (chat) or ``prompt`` (completion), plus stop sequences."""

    messages: list[dict[str, str]] | None
    prompt: str | None
    stop: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Prompt:
    """A loaded template. Build with :func:`load_prompt`."""

    name: str
    path: Path
    meta: PromptMeta
    template_sha256: str
    """SHA-256 of the template file bytes (front matter included)."""
    _template: Any = field(repr=False, compare=False)
    _system_cache: dict[tuple[str, str], str] = field(default_factory=dict, repr=False, compare=False)
    coaching: str = ""
    """Coaching data (``--coaching`` file text) the template receives as ``coaching`` ('' when none)."""

    @property
    def uses_coaching(self) -> bool:
        """The template declares the ``coaching`` variable (only such a prompt can carry coaching data)."""
        return "coaching" in self.meta.variables

    def with_coaching(self, text: str) -> Prompt:
        """This prompt rendering ``coaching`` as ``text`` (a copy; its own system-prompt cache)."""
        return replace(self, coaching=text, _system_cache={})

    @property
    def uses_history(self) -> bool:
        """The template declares ``history`` (only such a prompt shows an entry's earlier lines; issue 40)."""
        return "history" in self.meta.variables

    @property
    def uses_fst_feedback(self) -> bool:
        """The template declares ``fst_feedback`` (only such a prompt can run behind the FST gate, ``--tools``)."""
        return "fst_feedback" in self.meta.variables

    @property
    def format(self) -> str:
        return self.meta.format

    def _vars(self, source_language: str, target_language: str, source: str = "",
              history: list[str] | None = None,
              fst_feedback: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        m = self.meta
        if m.source_languages is not None and not is_one_of(source_language, m.source_languages):
            raise ConfigError(f"prompt {self.name!r} takes source languages {m.source_languages}, not "
                              f"{source_language!r}", where=str(self.path), field="source_languages",
                              fix="pick another --prompt (e.g. translate-chat)")
        examples: list[tuple[str, str]] = []
        if "examples" in m.variables:
            key = pick(target_language, m.examples)
            if key is None:
                raise ConfigError(f"prompt {self.name!r} has no examples for target language {target_language!r} "
                                  f"(has: {', '.join(sorted(m.examples))})", where=str(self.path), field="examples",
                                  fix="add hand-written example pairs for that language to the front matter, or "
                                      "pick another --prompt")
            examples = [(p[0], p[1]) for p in m.examples[key]]
        return {"source": source, "history": list(history or []), "source_language": source_language,
                "target_language": target_language, "source_language_name": language_name(source_language),
                "target_language_name": language_name(target_language), "examples": examples,
                "coaching": self.coaching, "fst_feedback": list(fst_feedback or [])}

    def _block(self, name: str, variables: dict[str, Any]) -> str:
        tmpl = self._template
        if name not in tmpl.blocks:
            return ""
        try:
            text = "".join(tmpl.blocks[name](tmpl.new_context(variables)))
            return text if name == "prompt" and not self.meta.strip else text.strip()
        except jinja2.TemplateError as exc:
            raise ConfigError(f"template error in block {name!r}: {exc}", where=str(self.path),
                              fix="fix the template") from None

    def system_prompt(self, source_language: str, target_language: str) -> str:
        """The rendered ``system`` block ('' when the template has none): the card's ``system_prompt_used``.

        Raises: ConfigError when the block depends on the entry (source/history) or the language is unsupported.
        """
        v = self._vars(source_language, target_language)
        text = self._block("system", v)
        probe = self._block("system", {**v, "source": "\x00probe", "history": ["\x00probe"],
                                       "fst_feedback": [{"hypothesis": "\x00probe", "rejected": ["\x00probe"]}]})
        if probe != text:
            raise ConfigError("the system block uses the entry (source/history/fst_feedback); move that into the "
                              "user/prompt block", where=str(self.path), field="system")
        return text

    def render(self, source: str, source_language: str, target_language: str,
               history: list[str] | None = None,
               fst_feedback: list[dict[str, Any]] | None = None) -> RenderedPrompt:
        """Render one entry. Chat: ``[{"role": "system", …}?, {"role": "user", …}]`` (no system message when the
        system block is empty). Completion: the ``prompt`` block text. ``fst_feedback``: the FST gate's verdicts on
        earlier attempts (see :data:`KNOWN_VARIABLES`; None or [] on a first attempt)."""
        v = self._vars(source_language, target_language, source, history, fst_feedback)
        stop = [self._render_string(s, v) for s in self.meta.stop]
        if self.meta.format == "chat":
            key = (source_language, target_language)
            system = self._system_cache.get(key)
            if system is None:  # the system block does not depend on the entry (checked by system_prompt)
                system = self._system_cache[key] = self.system_prompt(source_language, target_language)
            user = self._block("user", v)
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": user}]
            return RenderedPrompt(messages=messages, prompt=None, stop=stop)
        return RenderedPrompt(messages=None, prompt=self._block("prompt", v), stop=stop)

    def _render_string(self, text: str, variables: dict[str, Any]) -> str:
        if "{" not in text:
            return text
        try:
            return _env().from_string(text).render(variables)
        except jinja2.TemplateError as exc:
            raise ConfigError(f"template error in a stop sequence: {exc}", where=str(self.path), field="stop") \
                from None


def _env() -> jinja2.Environment:
    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=False)


def split_front_matter(text: str, where: str) -> tuple[str, str]:
    """Split ``---\\nYAML\\n---\\nbody``. Raises InputError when the front matter is missing, or when the file
    has CRLF line ends (a checkout with ``core.autocrlf=true`` rewrote it: its SHA-256 and the text sent to models
    would change; :data:`mtboard.core.canonical.CHECKOUT_FIX` says how to repair the checkout)."""
    if "\r\n" in text:
        raise InputError("template has CRLF line ends: a checkout that rewrites line ends (git core.autocrlf=true) "
                         "changed it, so its SHA-256 and the prompt it renders differ from the committed file",
                         where=where, fix=canonical.CHECKOUT_FIX)
    if not text.startswith("---\n"):
        raise InputError("template does not start with '---' front matter", where=where,
                         fix="add YAML front matter: family, format, variables")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise InputError("front matter is not closed with '---'", where=where, fix="close it with a '---' line")
    return text[4:end + 1], text[end + 5:]


def available_prompts() -> list[str]:
    """Names of the templates in :func:`prompts_dir` (file stems of ``*.j2``)."""
    d = prompts_dir()
    return sorted(p.stem for p in d.glob("*.j2")) if d.is_dir() else []


MAX_TEMPLATE_BYTES = 256 * 1024
"""Largest prompt template read."""


def load_prompt(name: str, *, named: bool = False, where: str | None = None, field: str | None = None) -> Prompt:
    """Load ``prompts/NAME.j2`` (or, from the command line, a path to a ``.j2`` file) and validate front matter and
    variables.

    ``named``: the name comes from a contributor's file (a sweep file's ``prompts``, a card's ``prompt_name``), so
    only a template of :func:`prompts_dir` is taken — ``NAME.j2`` resolved and read by :mod:`mtboard.core.paths`
    (issue 34 item 4: no absolute path, no ``..``, no symbolic link at any level) — never a path of the machine;
    ``where`` and ``field`` name that file and its field in errors. A name (not a path) from the command line goes
    through the same check.

    Raises: ConfigError for an unknown name (with "did you mean" and the list); InputError for a malformed file or a
    name that leaves the prompts folder or passes a symbolic link (naming the path).
    """
    if not named and name.endswith(".j2") and Path(name).exists():
        path = Path(name)
        raw = safejson.read_bytes(path, max_bytes=MAX_TEMPLATE_BYTES)
    else:
        root = prompts_dir()
        label = f"the prompts folder {root}"
        field = field or "--prompt"
        paths.parts_of(name, where=where, field=field, root_name=label)  # the name as written: no '..', not absolute
        try:
            path = paths.resolve_inside(root, f"{name}.j2", where=where, field=field, root_name=label)
        except paths.PathMissing:
            names = available_prompts()
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"unknown prompt {paths.shown(name)}; {hint}available: {', '.join(names) or 'none'}",
                              where=where, field=field, fix=f"pick a template from {root}") from None
        raw = paths.read_inside(root, f"{name}.j2", max_bytes=MAX_TEMPLATE_BYTES, where=where, field=field,
                                root_name=label)
    where = str(path)
    digest = canonical.sha256_hex(raw)
    compiled = _COMPILED.get(digest)
    if compiled is None:
        compiled = _compile(raw, where)
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[digest] = compiled
    meta, template = compiled
    return Prompt(name=path.stem, path=path, meta=meta.model_copy(deep=True), template_sha256=digest,
                  _template=template)


_COMPILED: dict[str, tuple[PromptMeta, Any]] = {}
"""Template bytes' SHA-256 → their validated front matter and compiled Jinja2 template (:func:`_compile`): the same
bytes are parsed and compiled once a process (issue 35: the validator loads a card's prompt for every card, ~20 ms
each). Only a template that passed every check is kept; the file is still read, bounded and resolved every time."""
_COMPILED_MAX = 64


def _compile(raw: bytes, where: str) -> tuple[PromptMeta, Any]:
    """Decode, split, validate and compile one template's bytes (:func:`load_prompt`'s checks). Raises: InputError
    naming ``where``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("template is not UTF-8", where=where, fix="save it as UTF-8") from None
    fm, body = split_front_matter(text, where)
    data = safejson.loads_yaml(fm, where=f"{where} (front matter)")
    try:
        meta = PromptMeta.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where).split(": ", 1)[1], where=where,
                         fix="front matter needs family, format (chat|completion), variables") from None
    for pair_list in meta.examples.values():
        for pair in pair_list:
            if len(pair) != 2:
                raise InputError("every example must be a [source, target] pair", where=where, field="examples")
    env = _env()
    try:
        ast = env.parse(body)
        template = env.from_string(body)
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(f"Jinja2 syntax error line {exc.lineno}: {exc.message}", where=where) from None
    used = jinja2.meta.find_undeclared_variables(ast)
    unknown = sorted(set(meta.variables) - KNOWN_VARIABLES)
    undeclared = sorted(used - set(meta.variables))
    if unknown or undeclared:
        raise InputError(f"variables: unknown {unknown}, used but not declared {undeclared}", where=where,
                         field="variables", fix=f"declare what the body uses; known: {sorted(KNOWN_VARIABLES)}")
    need = {"chat": "user", "completion": "prompt"}[meta.format]
    if need not in template.blocks:
        raise InputError(f"a {meta.format} template needs a {{% block {need} %}}", where=where)
    return meta, template


__all__ = ["Prompt", "PromptMeta", "RenderedPrompt", "load_prompt", "available_prompts", "prompts_dir",
           "language_name", "KNOWN_VARIABLES"]
