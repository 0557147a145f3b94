"""Reading the sweep file ``sweeps/NAME.yaml`` (spec §6.2): :func:`load_sweep_file`. The pydantic models that validate
it are :class:`mtboard.core.schema.SweepFile` and its parts (exported as ``schemas/sweep.schema.json``, ``mtboard schema
sweep``). The format is described in :mod:`mtboard.sweeps.spec` and docs/sweeps.md; expansion into cells is :func:`mtboard.sweeps.cells.expand`.

The file is untrusted (the workflow reads it from the dispatched ref): it is read by the hostile-input loaders of
:mod:`mtboard.core.safejson` (at most :data:`MAX_SWEEP_BYTES`, no symbolic link, duplicate keys refused, aliases
expanded to at most :data:`mtboard.core.safejson.MAX_YAML_NODES` nodes), and every number in it is bounded by the
schema (issue 34 item 3: ``runs: 1000000000000000000`` is one line naming ``runs`` and the maximum).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mtboard.core import canonical, fmt, safejson
from mtboard.core.errors import InputError
from mtboard.core.schema import SweepFile

MAX_SWEEP_BYTES = 256 * 1024
"""Largest sweep file read (256 KiB; the committed one is 2 KB, the 1,000-cell bench sweep 1.5 KB): it bounds the
time the YAML parser takes before the cell count can refuse a sweep (~1 s at the limit)."""

_UNION_TAGS = {"str", "int", "float", "bool", "constrained-str", "constrained-int", "constrained-float"}
"""pydantic's names of a union's members at the end of an error's location (a backend option's value)."""


def _value(value: Any) -> str:
    """A refused value as the message shows it: a number in full, anything else as a short ASCII excerpt."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ascii(value[:40] + ("…" if len(value) > 40 else "")) if isinstance(value, str) else type(value).__name__
    return fmt.whole(value) if isinstance(value, int) else f"{value:g}"


def describe(exc: ValidationError) -> tuple[str, str]:
    """The first problem of a sweep file's validation error as ``(field, problem)``: the field as a dotted path
    (``methods.0.price_in``), the problem naming the value and the bound for a number out of range ("1000000000000000000
    is over the maximum 100"), a list's length over its maximum, a number that is not finite."""
    errs = exc.errors(include_url=False)
    err = errs[0]
    loc = list(err["loc"])
    if len(errs) > 1 and loc and loc[-1] in _UNION_TAGS and all(
            list(e["loc"])[:-1] == loc[:-1] for e in errs[1:4]):
        return ".".join(str(x) for x in loc[:-1]) or "(top)", "is not a text, a number or true/false"
    field = ".".join(str(x) for x in loc) or "(top)"
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if kind in ("less_than_equal", "less_than"):
        return field, f"{_value(value)} is over the maximum {_value(ctx.get('le', ctx.get('lt')))}"
    if kind in ("greater_than_equal", "greater_than"):
        return field, f"{_value(value)} is under the minimum {_value(ctx.get('ge', ctx.get('gt')))}"
    if kind == "finite_number":
        return field, f"{_value(value)} is not a finite number"
    if kind in ("int_parsing", "int_parsing_size", "int_type", "int_from_float"):
        return field, f"{_value(value)} is not a whole number"
    if kind in ("float_parsing", "float_type"):
        return field, f"{_value(value)} is not a number"
    if kind == "too_long":
        return field, (f"{ctx.get('actual_length')} items are over the maximum {ctx.get('max_length')}" if
                       ctx.get("actual_length") is not None else err["msg"])
    if kind == "value_error":
        return field, str(ctx.get("error", err["msg"]))
    if kind == "extra_forbidden":
        return field, "unknown field (not in the schema)"
    return field, err["msg"]


def load_sweep_file(path: str | Path) -> tuple[SweepFile, str]:
    """Read and validate a sweep file (module docstring). Returns (model, SHA-256 of its bytes).

    Raises: InputError naming the file, the field and the problem (a number out of its range names the value and the
    bound).
    """
    p = Path(path)
    try:
        data = safejson.read_bytes(p, max_bytes=MAX_SWEEP_BYTES)
    except InputError as exc:
        raise InputError(f"cannot read the sweep file: {exc.problem}", where=str(p),
                         fix="pass the path of a sweeps/NAME.yaml file (a regular file of at most 256 KiB)") from None
    except OSError as exc:
        raise InputError(f"cannot read the sweep file: {exc.strerror or exc}", where=str(p),
                         fix="pass the path of a sweeps/NAME.yaml file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", where=str(p), fix="save the file as UTF-8") from None
    raw = safejson.loads_yaml(text, where=str(p), max_bytes=MAX_SWEEP_BYTES, fast=True)
    if not isinstance(raw, dict):
        raise InputError("a sweep file is a YAML mapping (name, datasets, methods, …)", where=str(p),
                         fix="see docs/sweeps.md for the format")
    try:
        model = SweepFile.model_validate(raw)
    except ValidationError as exc:
        field, problem = describe(exc)
        raise InputError(problem, where=str(p), field=field,
                         fix="see docs/sweeps.md (schemas/sweep.schema.json) for the fields and their ranges") from None
    return model, canonical.sha256_hex(data)


__all__ = ["MAX_SWEEP_BYTES", "describe", "load_sweep_file"]
