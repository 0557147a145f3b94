"""A canonical digest of build inputs: equal values give equal hex SHA-256 digests in every process, and a value
the encoding does not know is refused (TypeError) rather than guessed. The keys of the board statistics
(:mod:`mtboard.ledger.boardstats`) and of a board's run outputs (:mod:`mtboard.site.reuse`) are made with it."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np
from pydantic import BaseModel


def _feed(h: Any, value: Any) -> None:  # noqa: C901 - one branch per kind of value, each one line
    """Feed ``value``'s canonical encoding to the hash ``h`` (type-tagged, length-prefixed where text)."""
    if value is None or isinstance(value, bool):
        h.update(f"{value!r};".encode())
    elif isinstance(value, enum.Enum):
        h.update(f"E{type(value).__name__}:".encode())
        _feed(h, value.value)
    elif isinstance(value, (int, float)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        h.update(b"s%d:" % len(data) + data)
    elif isinstance(value, bytes):
        h.update(b"b%d:" % len(value) + value)
    elif isinstance(value, PurePath):
        _feed(h, value.as_posix())
    elif isinstance(value, BaseModel):
        h.update(f"M{type(value).__qualname__}:".encode())
        _feed(h, value.model_dump_json(round_trip=True))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"D{type(value).__qualname__}{{".encode())
        for f in dataclasses.fields(value):
            _feed(h, f.name)
            _feed(h, getattr(value, f.name))
        h.update(b"}")
    elif isinstance(value, Mapping):
        h.update(b"{%d:" % len(value))
        for k, v in sorted(((digest(k), v) for k, v in value.items()), key=lambda kv: kv[0]):
            h.update(k.encode())
            _feed(h, v)
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update((b"[%d:" if isinstance(value, list) else b"(%d:") % len(value))
        for v in value:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(value, (set, frozenset)):
        h.update(("{" + ",".join(sorted(digest(v) for v in value)) + "}").encode())
    elif isinstance(value, np.ndarray):
        h.update(f"A{value.dtype.str}{value.shape}:".encode() + np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.generic):
        _feed(h, value.item())
    else:
        raise TypeError(f"no canonical encoding for {type(value).__qualname__}")


def digest(value: Any) -> str:
    """Hex SHA-256 of a canonical encoding of ``value``: None, bools, numbers (``repr``: exact), text, bytes, paths,
    enums, pydantic models (their JSON, round-trip), dataclasses (field by field), mappings (order-free), lists and
    tuples (in order; a list is not its tuple), sets (order-free) and NumPy arrays/scalars, nested. Equal values of one type give equal digests
    in every process (no ``hash()``, no ``id()``).

    Raises: TypeError for any other type (a value that cannot be proven equal is never treated as equal)."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()


__all__ = ["digest"]
