"""Hostile-input JSON and YAML parsing: size cap before reading, no symlinks, strict JSON.

Rejected (each with an :class:`~mtboard.core.errors.InputError` naming the file and JSON path):
NaN/Infinity literals, negative zero (``-0``, ``-0.0``, ``-0e5``: RFC 8785 §3.2.2.3 writes it as ``0``, so a sealed
document could change from ``0`` to ``-0.0`` under the same hash — refused here, file and seal stay one-to-one; issue
32 item 3), numbers that overflow to infinity (``1e400``), integers outside ±2**53 (not portable to
other JSON parsers, RFC 8785 §3.2.2.3), duplicate object keys, lone UTF-16 surrogates (escaped or raw), invalid UTF-8,
nesting deeper than ``max_depth``, files larger than ``max_bytes``, symlinks and special files (never opened).
YAML is read with a ``yaml.SafeLoader`` only (no object construction): anchors, aliases and ``<<`` merge keys as
``yaml.safe_load`` reads them; duplicate keys, recursive aliases and documents that expand past
:data:`MAX_YAML_NODES` nodes refused.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from mtboard.core.errors import InputError

MAX_CARD_BYTES = 32 * 1024 * 1024
"""Largest run card or corpus file accepted (bytes)."""
MAX_DEPTH = 64
"""Deepest accepted nesting of JSON arrays/objects."""
MAX_SAFE_INT = 2**53


class _Reject(ValueError):
    pass


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key twice: name the first repeated one, as a key-by-key insert would
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Reject(f"duplicate key {_excerpt(key)!s}")
            seen.add(key)
    return out


def _parse_constant(name: str) -> Any:
    raise _Reject(f"{name} is not valid JSON")


NEGATIVE_ZERO = ("negative zero {text} (allowed: 0; RFC 8785 writes -0 as 0, so a seal cannot tell the two texts "
                 "apart and the file must not hold the other spelling)")


def _is_negative_zero(text: str, value: float) -> bool:
    return value == 0 and text.startswith("-")


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Reject(f"number {text[:20]} overflows to infinity")
    if _is_negative_zero(text, value):
        raise _Reject(NEGATIVE_ZERO.format(text=text[:20]))
    return value


def _parse_int(text: str) -> int:
    if len(text) > 20:
        raise _Reject("integer too large (more than 20 digits)")
    value = int(text)
    if abs(value) > MAX_SAFE_INT:
        raise _Reject(f"integer {text} outside ±2**53")
    if _is_negative_zero(text, value):
        raise _Reject(NEGATIVE_ZERO.format(text=text))
    return value


def _excerpt(text: str, limit: int = 40) -> str:
    """A short, ASCII-only excerpt safe to show in an error message."""
    short = text[:limit] + ("…" if len(text) > limit else "")
    return ascii(short)


class _Bad:
    """Marker left by the lenient re-parse of :func:`_locate` where the strict parse refused a value."""


def _locate(text: str) -> str | None:
    """JSON path of the first value the strict parse refused (NaN, Infinity, overflow, huge integer, negative zero,
    duplicate key).

    Only called after a refusal: re-parses leniently, leaving :class:`_Bad` markers, then finds the first marker.
    """
    bad = _Bad()

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            out[k] = bad if k in out else v
        return out

    def flt(t: str) -> Any:
        v = float(t)
        return bad if v in (float("inf"), float("-inf")) or _is_negative_zero(t, v) else v

    def integer(t: str) -> Any:
        return bad if len(t) > 20 or abs(int(t)) > MAX_SAFE_INT or _is_negative_zero(t, int(t)) else int(t)

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=lambda _c: bad, parse_float=flt,
                           parse_int=integer)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[str, Any]] = [("$", value)]
    while stack:
        path, node = stack.pop()
        if node is bad:
            return path
        if isinstance(node, dict):
            stack.extend((f"{path}.{k}" if k.isidentifier() else f"{path}[{_excerpt(k)}]", v)
                         for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node))))
    return None


def _walk(value: Any, max_depth: int, path: str = "$", depth: int = 0) -> None:
    """Check nesting depth and lone surrogates (iteratively safe up to ``max_depth``)."""
    if depth > max_depth:
        raise InputError(f"nesting deeper than {max_depth} levels", field=path, fix="flatten the document")
    if isinstance(value, str):
        _check_str(value, path)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_str(k, path)
            _walk(v, max_depth, f"{path}.{k}" if k.isidentifier() else f"{path}[{_excerpt(k)}]", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, max_depth, f"{path}[{i}]", depth + 1)


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate (``\\ud800``–``\\udfff``)."""


def _maybe_surrogate(text: str, from_utf8: bool = False) -> bool:
    """Whether a string parsed from ``text`` can hold a lone surrogate: ``text`` holds a raw surrogate character or
    a JSON escape of one (only then does :func:`_walk` look string by string). The same answer as searching
    ``[\\ud800-\\udfff]|\\\\u[dD][89a-fA-F]`` (4–9 ms on a 400 KB card): an escape needs ``\\u`` (a substring
    search), and UTF-8 encoding fails on a raw surrogate and on nothing else (0.3–1.2 ms, more for non-ASCII text).
    ``from_utf8``: ``text`` was decoded from bytes by the strict UTF-8 codec, which never yields a surrogate, so the
    encoding is skipped."""
    if "\\u" in text and _ESCAPED_SURROGATE.search(text):
        return True
    if from_utf8:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _depth_within(value: Any, max_depth: int) -> bool:
    """Fast pre-check with the same depth rule as :func:`_walk` (containers only, no path strings built)."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if items is None:
            continue
        if d > max_depth or (d + 1 > max_depth and len(v)):
            return False
        for x in items:
            if isinstance(x, (dict, list)):
                stack.append((x, d + 1))
    return True


def _check_str(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("string contains a lone UTF-16 surrogate", field=path,
                         fix="encode text as valid UTF-8 / paired surrogates") from None


def loads(data: bytes | str, *, where: str = "<input>", max_bytes: int = MAX_CARD_BYTES,
          max_depth: int = MAX_DEPTH) -> Any:
    """Parse untrusted JSON bytes strictly.

    Args:
        data: UTF-8 bytes (or str) of one JSON document.
        where: file name used in error messages.
        max_bytes: size cap in bytes, checked before parsing.
        max_depth: deepest nesting allowed.

    Returns: the parsed value (dict/list/str/int/float/bool/None).
    Raises: InputError on every hazard listed in the module docstring.
    """
    if len(data) > max_bytes:
        raise InputError(f"file is {len(data)} bytes, over the {max_bytes}-byte limit", where=where,
                         fix="split the submission or raise the limit")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 at byte {exc.start}", where=where, fix="save the file as UTF-8") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise InputError("starts with a byte-order mark", where=where, fix="save as UTF-8 without BOM")
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_parse_constant,
                           parse_float=_parse_float, parse_int=_parse_int)
    except _Reject as exc:
        raise InputError(str(exc), where=where, field=_locate(text),
                         fix="write strict JSON (RFC 8259, I-JSON)") from None
    except RecursionError:
        raise InputError(f"nesting deeper than {max_depth} levels", where=where, fix="flatten the document") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", where=where,
                         fix="check the JSON syntax") from None
    except ValueError as exc:  # e.g. int conversion limits
        raise InputError(f"not valid JSON: {str(exc)[:80]}", where=where, fix="write strict JSON") from None
    try:
        # The full walk (which names the JSON path) runs only when a fast pre-check finds a possible problem.
        if _maybe_surrogate(text, isinstance(data, bytes)) or not _depth_within(value, max_depth):
            _walk(value, max_depth)
    except InputError as exc:
        exc.where = where
        raise InputError(exc.problem, where=where, field=exc.field, fix=exc.fix) from None
    return value


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = MAX_CARD_BYTES) -> bytes:
    """Read a regular file safely: refuse symlinks and special files without opening them, cap the size.

    Raises: InputError naming the file.
    """
    p = Path(path)
    where = str(p)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        raise InputError("file not found", where=where, fix="check the path") from None
    if stat.S_ISLNK(st.st_mode):
        raise InputError("is a symbolic link; refused without reading it", where=where,
                         fix="commit the file itself, not a link")
    if not stat.S_ISREG(st.st_mode):
        raise InputError("is not a regular file; refused without reading it", where=where,
                         fix="pass a regular JSON file")
    if st.st_size > max_bytes:
        raise InputError(f"file is {st.st_size} bytes, over the {max_bytes}-byte limit", where=where,
                         fix="split the submission or raise the limit")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(p, flags)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"file grew over the {max_bytes}-byte limit while reading", where=where)
    return data


def read_gzip_bytes(path: str | os.PathLike[str], *, max_bytes: int = MAX_CARD_BYTES) -> bytes:
    """:func:`read_bytes` of a gzip file (RFC 1952; the stdlib's :mod:`gzip`), decompressed: at most ``max_bytes``
    read from disk and at most ``max_bytes`` once decompressed, so a small file that inflates to gigabytes (a "gzip
    bomb") is refused after ``max_bytes`` + 1 bytes of output, never held whole.

    Raises: InputError naming the file (no gzip header, a corrupt or truncated stream, over either limit)."""
    import gzip  # noqa: PLC0415 (a few readers need it; not worth every import of this module)
    import io  # noqa: PLC0415
    import zlib  # noqa: PLC0415

    where = str(path)
    raw = read_bytes(path, max_bytes=max_bytes)
    fix = "pass the file as published (gzip, RFC 1952) or its uncompressed .json"
    if raw[:2] != b"\x1f\x8b":  # gzip's magic number: an empty or plain file is not read as an empty member
        raise InputError("not a gzip file (no gzip header)", where=where, fix=fix)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            data = fh.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a valid gzip file ({exc})", where=where, fix=fix) from None
    if len(data) > max_bytes:
        raise InputError(f"decompresses to over the {max_bytes}-byte limit", where=where,
                         fix="pass a smaller file or raise the limit")
    return data


def load_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_CARD_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """:func:`read_bytes` then :func:`loads`."""
    return loads(read_bytes(path, max_bytes=max_bytes), where=str(path), max_bytes=max_bytes, max_depth=max_depth)


MAX_YAML_NODES = 100_000
"""Largest YAML document accepted, counted in nodes *after* expanding aliases and merge keys (a price table is a
few hundred): a few lines of nested aliases (a "billion laughs") would otherwise build a structure that any walk over
it — schema validation, JSON encoding — takes hours to visit."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeys:
    """Mixin of a safe YAML loader that refuses duplicate mapping keys (plain YAML keeps the last one silently).

    Merge keys (``<<: *anchor`` or ``<<: [*a, *b]``, YAML 1.1 merge type) work as in ``yaml.SafeLoader``: the
    anchored mappings' pairs are copied in, and a key written in the mapping itself overrides a merged one (that is
    the point of a merge, not a duplicate). Keys written twice in the same mapping, or two ``<<`` keys, are refused.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            merges = 0
            for key_node, _value in node.value:
                if key_node.tag == _MERGE_TAG:
                    merges += 1
                    if merges > 1:
                        raise yaml.constructor.ConstructorError(None, None, "duplicate merge key <<",
                                                                key_node.start_mark)
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:  # a list or mapping used as a key
                    raise yaml.constructor.ConstructorError(None, None, "unhashable mapping key",
                                                            key_node.start_mark) from None
                if duplicate:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {_excerpt(str(key))}",
                                                            key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    """``yaml.SafeLoader`` (pure Python) refusing duplicate keys (:class:`_UniqueKeys`)."""


_CSafeLoader = getattr(yaml, "CSafeLoader", None)
_FastUniqueKeyLoader: type | None = (type("_FastUniqueKeyLoader", (_UniqueKeys, _CSafeLoader), {"__doc__": (
    "``yaml.CSafeLoader`` (libyaml's scanner and parser, the same safe constructor and resolver) refusing duplicate "
    "keys.")}) if _CSafeLoader is not None else None)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Nodes of the document once every alias is expanded (shared nodes counted at each use), capped at
    ``limit + 1``. Iterative, memoised per node: linear in the composed graph.

    Raises: ValueError for a recursive alias (a node that contains itself; JSON has no such value).
    """
    size: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            size[key] = min(limit + 1, 1 + sum(size[id(k)] for k in _children(node)))
            visiting.discard(key)
            continue
        if key in size:
            continue
        if key in visiting:
            raise ValueError(f"recursive alias at line {node.start_mark.line + 1}")
        visiting.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)
    return size[id(root)]


def load_yaml(path: str | os.PathLike[str], *, max_bytes: int = 1024 * 1024) -> Any:
    """Read a YAML file with a safe loader (``yaml.SafeLoader`` refusing duplicate keys) after the same file-safety
    checks.

    Note: YAML 1.1 turns ``no`` into False and ``012`` into 10; callers validate the result with a strict schema, so a
    language code must be quoted (the schema rejects a bool where a string is required).
    """
    data = read_bytes(path, max_bytes=max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8", where=str(path), fix="save the file as UTF-8") from None
    return loads_yaml(text, where=str(path), max_bytes=max_bytes)


def loads_yaml(text: str, *, where: str = "<yaml>", max_bytes: int = 1024 * 1024,
               max_nodes: int = MAX_YAML_NODES, fast: bool = False) -> Any:
    """Parse YAML text as ``yaml.safe_load`` would (anchors, aliases and ``<<`` merge keys included), refusing
    duplicate keys, texts over ``max_bytes`` (UTF-8) and documents over ``max_nodes`` nodes after alias and merge
    expansion (see :data:`MAX_YAML_NODES`). ``fast``: scan and parse with libyaml (``yaml.CSafeLoader``, ~5× faster;
    the same documents, constructor and checks; its syntax errors are worded by libyaml) where PyYAML has it — a
    sweep file is refused over its cell limit within 2 s (issue 34 item 3).

    Returns: the document (None for an empty one). Raises: InputError (one line) naming ``where`` and, for syntax
    errors, the line.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise InputError(f"YAML text is {size} bytes, over the {max_bytes}-byte limit", where=where,
                         fix="shorten the file")
    loader = (_FastUniqueKeyLoader if fast and _FastUniqueKeyLoader is not None else _UniqueKeyLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            n = _expanded_size(node, max_nodes)
        except ValueError as exc:
            raise InputError(f"not valid here: {exc}", where=where,
                             fix="write the values out instead of an alias that contains itself") from None
        if n > max_nodes:
            raise InputError(f"YAML document expands to more than {max_nodes} nodes (aliases and merge keys "
                             "counted at each use)", where=where, fix="write the data out without nested aliases")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).replace('in "<unicode string>", ', "").split())[:160]
        raise InputError(f"not valid YAML: {first}", where=where, fix="check the YAML syntax") from None
    except RecursionError:
        raise InputError("YAML nested too deeply", where=where, fix="flatten the document") from None
    except (ValueError, OverflowError) as exc:
        # a scalar that parses but does not convert: a date that does not exist (2026-02-30), an integer of over
        # 4,300 digits (CPython's int() limit), a timestamp beyond year 9999
        detail = " ".join(str(exc).split())[:200]
        raise InputError(f"a value YAML cannot convert ({detail})", where=where,
                         fix="write the value as a quoted text, or correct it (dates must exist; numbers under 4,300 "
                             "digits)") from None
    finally:
        loader.dispose()
