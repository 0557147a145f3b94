"""Typer options generated from a pydantic settings model (simonw/llm's options; issue 30): one option per field, its
help the field's description and its range, so a setting is declared once — in the model — and ``--help``, the
checks and the library read the same field.

:func:`model_options` decorates a command: the command names its own parameters (options that are not settings) and
takes the settings as ``**kwargs`` (field name → value, for ``Model(**kwargs)``); the decorator gives it a
``__signature__`` with one typer parameter per field, which typer reads to build the command. How a field is spelt
(flag, positional argument, metavar, no option) is in the field's ``json_schema_extra`` (:mod:`mtboard.run.settings`
describes the keys); a bool field that defaults to True is one flag, ``--no-NAME``.

The type typer parses is the field's own for ``str``, ``int``, ``float``, ``bool`` and ``Path``; a list, tuple or
mapping field is a repeatable string option; anything else (an enum, a type resolved later) is a string the model
checks. Ranges are shown in the help (``[>= 1]``) but not given to typer, so a bad value is the model's one-line
ConfigError (``--runs must be at least 1``), not typer's usage error.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, TypeVar, Union, get_args, get_origin

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

F = TypeVar("F", bound=Callable[..., Any])

_PLAIN = (str, int, float, bool, Path)
_REPEATED = (list, tuple, dict)


def cli_type(annotation: Any) -> Any:
    """The type typer parses for a field annotated ``annotation`` (``int | None`` → ``Optional[int]``;
    ``tuple[str, ...] | list[str] | str | None`` → ``Optional[list[str]]``; an enum → ``str``)."""
    union = get_origin(annotation) in (Union, types.UnionType)
    members = list(get_args(annotation)) if union else [annotation]
    optional = type(None) in members
    members = [m for m in members if m is not type(None)]
    if any(get_origin(m) in _REPEATED or m in _REPEATED for m in members):
        return Optional[list[str]]
    base = members[0] if len(members) == 1 and members[0] in _PLAIN else str
    return Optional[base] if optional else base


def range_text(field: FieldInfo) -> str:
    """The field's range for its help line: ``[>= 1]``, ``[0-5]``, ``[> 0]``; ``""`` when unbounded."""
    meta = {key: getattr(m, key) for m in field.metadata for key in ("ge", "le", "gt") if hasattr(m, key)}
    if "ge" in meta and "le" in meta:
        return f"[{meta['ge']:g}-{meta['le']:g}]"
    if "ge" in meta:
        return f"[>= {meta['ge']:g}]"
    return f"[> {meta['gt']:g}]" if "gt" in meta else ""


def _negate(value: bool) -> bool:
    """``--no-NAME`` given → the field is False; not given → True."""
    return not value


def field_parameter(name: str, field: FieldInfo, flag: str) -> inspect.Parameter | None:
    """The typer parameter of one settings field (None for a field marked ``cli: False``); ``flag`` is how the
    command line spells it (the model's own naming function)."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if extra.get("cli") is False:
        return None
    help_text = " ".join(t for t in (field.description or "", range_text(field)) if t)
    parse = cli_type(field.annotation)
    default: Any = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=False)
    if default is not inspect.Parameter.empty and (default is PydanticUndefined or parse == Optional[list[str]]):
        default = None  # a repeatable option is None when not given; the model supplies its own empty value
    info: Any
    if extra.get("argument"):
        info = typer.Argument(metavar=str(extra["argument"]), help=help_text, show_default=False)
    else:
        if parse is bool and default is True:  # on by default: one flag, --no-NAME, turns it off
            info, default = typer.Option(f"--no-{flag[2:]}", help=help_text, callback=_negate), False
        else:
            info = typer.Option(flag, help=help_text, metavar=extra.get("metavar"))
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[parse, info])


def model_options(model: type[BaseModel], flag: Callable[[str], str]) -> Callable[[F], F]:
    """Decorator: the command takes one typer parameter per field of ``model`` (in the model's order, before the
    command's own parameters) and receives them in its ``**kwargs``; ``flag(name)`` spells a field's option."""

    def decorate(func: F) -> F:
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
               for p in inspect.signature(func, eval_str=True).parameters.values()
               if p.kind is not inspect.Parameter.VAR_KEYWORD]
        generated = [p for name, field in model.model_fields.items()
                     if (p := field_parameter(name, field, flag(name))) is not None]
        func.__signature__ = inspect.Signature([*generated, *own])  # type: ignore[attr-defined]
        return func

    return decorate


__all__ = ["cli_type", "range_text", "field_parameter", "model_options"]
