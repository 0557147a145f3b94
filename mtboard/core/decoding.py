"""The one boundary where what a model server or an engine sent becomes text (issue 33 item 1).

Every answer passes :func:`answer_text` before anything reads it: streamed or not, chat or completion, every backend
(OpenAI-compatible and local GGUF servers through :mod:`mtboard.llm`, Apertium's and every subprocess's stdout), every
judge (they use the same client), and the reasoning and refusal text beside the answer. It never raises for any
content, and it says how many characters it had to replace.

Where broken text comes from, and what the function does about it:

* **Bytes that are not UTF-8.** A server that cuts a character's UTF-8 bytes between two stream events (llama.cpp
  sends token pieces, and a byte-level BPE token can end inside a character: llama.cpp issues #6209, #11171) gives
  each event an invalid tail or head. The HTTP body is decoded with Python's ``surrogateescape`` error handler
  (PEP 383: each undecodable byte 0xXY becomes U+DCXY), so the bytes survive the SSE framing and the JSON parse;
  once the events' fragments are joined the escaped bytes are encoded back and decoded again, and a character that
  was only split becomes whole (``F0 9F`` + ``98 80`` → 😀). What is still not UTF-8 then (a truncated sequence, an
  overlong form such as ``C0 AF``, a byte that never starts a character) becomes U+FFFD, one per maximal subpart of
  an ill-formed sequence (Unicode 15 §3.9 "U+FFFD Substitution of Maximal Subparts", Python's ``"replace"``).
* **JSON escapes of lone UTF-16 surrogates.** JSON strings are UTF-16 code units (RFC 8259 §7), so a server that
  escapes an emoji's two halves into two events (``"\\ud83d"`` then ``"\\ude00."``, seen from llama.cpp's server,
  llamafile and proxies; inspect_ai and unsloth bug reports) hands Python two lone surrogates. After the join a high
  surrogate (U+D800–U+DBFF) directly followed by a low one (U+DC00–U+DFFF) is one character (UTF-16, Unicode §3.9
  D91); what stays alone becomes U+FFFD.
* **The one ambiguity.** U+DC80–U+DCFF is both an escaped byte and a low surrogate. After a high surrogate it is read
  as the pair's second half (as UTF-16 says), unless the escaped bytes from there on start a well-formed UTF-8
  character (``\\ud83d`` followed by the escaped bytes ``F0 9F 98 80`` is a lone high surrogate, then 😀).

A lone surrogate can reach nothing else: cards are RFC 8785 JSON (UTF-8 only), the work directory's records are
UTF-8. The raw answer is kept as received (``raw.jsonl``): :func:`json_line` writes any ``str`` as one JSON line,
lone surrogates as ``\\udcXX`` escapes, so ``json.loads(line)[...].encode("utf-8", "surrogateescape")`` gives the
bytes received back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar

REPLACEMENT = "\ufffd"
"""U+FFFD REPLACEMENT CHARACTER: what a lone surrogate or an undecodable byte becomes."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")
"""A run of ``surrogateescape`` escapes (PEP 383: byte 0xXY ↔ U+DCXY for 0x80 ≤ XY ≤ 0xFF)."""


def decode_bytes(data: bytes, encoding: str = "utf-8") -> str:
    """Bytes as text with every undecodable byte kept as its ``surrogateescape`` escape (U+DC80–U+DCFF), for a
    raw record and for :func:`answer_text` to join. Never raises for any bytes; an unknown encoding name raises
    LookupError (callers choose the name)."""
    return data.decode(encoding, "surrogateescape")


def _escaped_run(run: str) -> tuple[str, int]:
    """A run of escaped bytes → (its UTF-8 decoding with U+FFFD per maximal ill-formed subpart, replacements made).
    A U+FFFD the bytes themselves spell (``EF BF BD``, received whole or split) is text, not a replacement."""
    raw = run.encode("utf-8", "surrogateescape")
    fixed = raw.decode("utf-8", "replace")
    return fixed, fixed.count(REPLACEMENT) - raw.decode("utf-8", "surrogateescape").count(REPLACEMENT)


def _starts_character(text: str, at: int) -> bool:
    """True when the escaped bytes from ``text[at]`` on begin with a well-formed UTF-8 character."""
    run = _ESCAPED_BYTES.match(text, at)
    assert run is not None
    return run.group().encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")[0] != text[at]


def answer_text(fragments: Iterable[str | bytes | None]) -> tuple[str, int]:
    """The text of an answer from its fragments (the pieces of a stream in order, or one whole answer), and how many
    characters had to be replaced by U+FFFD (module docstring for the rules and their sources).

    Args:
        fragments: ``str`` (may hold lone surrogates: JSON escapes, ``surrogateescape``'d bytes) or ``bytes`` (a
            subprocess's stdout; decoded as UTF-8 with ``surrogateescape``), in the order received; None and empty
            fragments are skipped. Fragments are joined *before* anything is decided, so a surrogate pair or a UTF-8
            sequence split between two of them is one character.

    Returns: ``(text, repairs)``: ``text`` holds no surrogate code point (it always encodes as UTF-8); ``repairs``
    ≥ 0 counts the U+FFFD inserted (one per lone surrogate, one per maximal ill-formed byte subpart). Examples:
    ``["Hola mundo \\ud83d", "\\ude00."]`` → ``("Hola mundo 😀.", 0)``; ``["Hola mundo \\ud83d."]`` →
    ``("Hola mundo �.", 1)``; ``[b"Hola mundo \\xf0\\x9f", b"\\x98\\x80."]`` → ``("Hola mundo 😀.", 0)``;
    ``[b"\\xc0\\xaf"]`` → ``("��", 2)``.

    Raises: TypeError for a fragment that is not str, bytes or None (a programming error, never content).
    """
    parts: list[str] = []
    for piece in fragments:
        if piece is None:
            continue
        if isinstance(piece, (bytes, bytearray, memoryview)):
            parts.append(bytes(piece).decode("utf-8", "surrogateescape"))
        elif isinstance(piece, str):
            parts.append(piece)
        else:
            raise TypeError(f"answer_text: a fragment is {type(piece).__name__}, not str or bytes")
    text = "".join(parts)
    found = _SURROGATE.search(text)
    if found is None:
        return text, 0
    out: list[str] = []
    repairs = 0
    i, n = 0, len(text)
    while found is not None:
        j = found.start()
        out.append(text[i:j])
        code = ord(text[j])
        if 0xDC80 <= code <= 0xDCFF:  # escaped bytes (or a low surrogate no high one precedes)
            run = _ESCAPED_BYTES.match(text, j)
            assert run is not None
            fixed, k = _escaped_run(run.group())
            out.append(fixed)
            repairs += k
            i = run.end()
        elif code <= 0xDBFF and j + 1 < n and 0xDC00 <= ord(text[j + 1]) <= 0xDFFF and not (
                ord(text[j + 1]) >= 0xDC80 and ord(text[j + 1]) <= 0xDCFF and _starts_character(text, j + 1)):
            low = ord(text[j + 1])
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
            i = j + 2
        else:  # a lone high surrogate, or a lone low one outside the escaped-byte range
            out.append(REPLACEMENT)
            repairs += 1
            i = j + 1
        found = _SURROGATE.search(text, i)
    out.append(text[i:])
    return "".join(out), repairs


def clean(text: str | None) -> str | None:
    """:func:`answer_text` of one string, without the count (error messages, model names, finish reasons: server
    strings that are not the answer but may reach a record or a card). None stays None."""
    return None if text is None else answer_text((text,))[0]


class ServerText:
    """Mixin for a (non-frozen) dataclass whose ``str`` fields may hold what a server sent, or a message composed
    from it (an error body of any status quoted in an error, a model name, a finish reason): every assignment to a
    field named in ``SERVER_TEXT`` — the dataclass ``__init__`` and any later ``obj.field = ...`` — passes
    :func:`clean`, so such an object can never carry a lone surrogate on to a record or a card (which are UTF-8
    only: a ``surrogateescape``'d byte of a 5xx body ended runs with "surrogates not allowed", review 2 of issue
    33, finding 1). Values that are not ``str`` are stored unchanged. Costs one regex search per assignment."""

    SERVER_TEXT: ClassVar[frozenset[str]] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, str) and name in self.SERVER_TEXT:
            value = clean(value)
        object.__setattr__(self, name, value)


def clean_json(value: Any) -> Any:
    """A parsed JSON value with every string in it (keys too) through :func:`clean`: metadata a server sent (model
    lists, server properties) that may reach a card. Other values unchanged."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    return value


def escape_surrogates(json_text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every surrogate code point written as
    its ``\\uXXXX`` escape, so it encodes as UTF-8. Surrogates only occur inside JSON strings, where a character
    and its escape are the same value (RFC 8259 §7): ``json.loads`` gives the same ``str`` back, except that a high
    and a low surrogate next to each other come back as the one character they spell."""
    if _SURROGATE.search(json_text) is None:
        return json_text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def json_line(obj: Any, *, sort_keys: bool = False, compact: bool = True) -> bytes:
    """One JSON Lines record: ``obj`` as UTF-8 JSON (non-ASCII written as is, lone surrogates escaped,
    :func:`escape_surrogates`), ``\\n`` at the end. Values JSON cannot hold are written as ``str(value)``. Never
    raises for any ``str`` in ``obj`` (raises ValueError only for a circular reference)."""
    separators = (",", ":") if compact else None
    text = json.dumps(obj, ensure_ascii=False, separators=separators, sort_keys=sort_keys, default=str)
    return escape_surrogates(text).encode("utf-8") + b"\n"


__all__ = ["REPLACEMENT", "ServerText", "answer_text", "clean", "clean_json", "decode_bytes", "escape_surrogates", "json_line"]
