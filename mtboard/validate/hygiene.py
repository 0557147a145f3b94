"""Hygiene checks: ``timestamps``, ``sovereignty``, ``secrets`` (spec §8, §9.1).

* ``timestamps``: ISO 8601 UTC, not in the future, not before 2024, elapsed time consistent with the latencies.
* ``sovereignty``: no gold_standard/held_out entries; no secret-segment text anywhere in the file (when a secret file
  is given, :func:`mtboard.validate.context.make_context`).
* ``secrets``: no API-key-like strings (sk-…, hf_…, AKIA…, Bearer …, ghp_…, private keys); the match is never shown.

The secret scans walk every string of the parsed JSON (keys included) and run whatever the schema says.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from mtboard.core.schema import SECRET_SEGMENTS, RunCard
from mtboard.validate.bounds import CLOCK_SKEW, EARLIEST
from mtboard.validate.context import Context, find_secret_text
from mtboard.validate.report import CardRun, json_path

EARLIEST_TIMESTAMP = EARLIEST
"""Cards dated before this are implausible (mtboard did not exist): :data:`mtboard.validate.bounds.EARLIEST`."""


# --------------------------------------------------------------------------------------------------------------------
# timestamps


def _parse_ts(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def check_timestamps(run: CardRun, card: RunCard, ctx: Context) -> None:
    """``timestamps``: UTC, between :data:`EARLIEST_TIMESTAMP` and now (+ :data:`CLOCK_SKEW`, also for the end of the
    run); ``elapsed_seconds`` at least the slowest entry and enough for the summed latencies over the concurrent
    lanes (concurrency × batch size, per replicate)."""
    ts = _parse_ts(card.timestamp)
    if ts is None:  # pragma: no cover - the schema already parsed it
        run.fail("timestamps", "timestamp is not ISO 8601", "$.timestamp")
        return
    if ts.tzinfo is None or ts.utcoffset() != timedelta(0):
        run.fail("timestamps", "timestamp must be UTC (end with Z or +00:00)", "$.timestamp")
    else:
        now = ctx.clock()
        end = ts + timedelta(seconds=card.elapsed_seconds)
        if ts < EARLIEST_TIMESTAMP:
            run.fail("timestamps", f"timestamp is before {EARLIEST_TIMESTAMP.date()}: implausible", "$.timestamp")
        if ts > now + CLOCK_SKEW:
            run.fail("timestamps", "timestamp is in the future", "$.timestamp")
        elif end > now + CLOCK_SKEW:
            run.fail("timestamps", "timestamp + elapsed_seconds ends in the future", "$.elapsed_seconds")
    lat = [r.latency_s for r in card.results if r.latency_s is not None]
    if lat:
        longest = max(lat)
        if card.elapsed_seconds + 1e-6 < longest:
            run.fail("timestamps", f"elapsed_seconds {card.elapsed_seconds} is shorter than the slowest entry "
                                   f"({longest} s)", "$.elapsed_seconds")
        lanes = max(1, card.method.concurrency) * max(1, card.batch_size)
        if card.elapsed_seconds * lanes * (1 + 1e-6) + 1.0 < sum(lat) / max(1, card.method.runs):
            run.fail("timestamps", f"elapsed_seconds {card.elapsed_seconds} cannot hold the summed entry latencies "
                                   f"({sum(lat):.3f} s over {lanes} concurrent lanes)", "$.elapsed_seconds")
    run.done("timestamps")


# --------------------------------------------------------------------------------------------------------------------
# sovereignty


def check_sovereignty_card(run: CardRun, card: RunCard) -> None:
    """``sovereignty`` on the parsed card: neither the dataset nor any result is from a secret segment."""
    if card.dataset.segment in SECRET_SEGMENTS:
        run.fail("sovereignty", f"dataset.segment is {card.dataset.segment.value}: secret segments are never "
                                "published (spec §8); submit development-segment runs only", "$.dataset.segment")
    for i, r in enumerate(card.results):
        if r.segment in SECRET_SEGMENTS:
            run.fail("sovereignty", f"result is from the secret {r.segment.value} segment (spec §8)",
                     f"$.results[{i}].segment")


def json_strings(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """Every string (keys included) in a parsed JSON value with its path; iterative (depth already capped)."""
    stack: list[tuple[tuple, Any]] = [(path, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(v, str):
            yield p, v
        elif isinstance(v, dict):
            for k, x in v.items():
                yield p, k
                stack.append((p + (k,), x))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                stack.append((p + (i,), x))


def secret_text_hits(data: Any, ctx: Context) -> Iterator[tuple[str, str]]:
    """(JSON path, how) for every string of ``data`` holding secret-segment text (:func:`find_secret_text`); nothing
    when the context has no secret strings."""
    if not ctx.secret_strings:
        return
    for p, s in json_strings(data):
        hit = find_secret_text(s, ctx)
        if hit:
            yield json_path(p), hit


def check_secret_text(run: CardRun, data: Any, ctx: Context) -> None:
    """``sovereignty`` on the raw parsed value: no string holds secret-segment text."""
    for where, hit in secret_text_hits(data, ctx):
        run.fail("sovereignty", f"contains text of a secret-segment entry ({hit}; source: {ctx.secret_source}); "
                                "secret segments never appear in a public repository (spec §8)", where)


# --------------------------------------------------------------------------------------------------------------------
# secrets (API keys)

# API-key-like patterns: provider prefixes with enough key material that ordinary prose does not match.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI/Anthropic-style key (sk-…)", re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}")),
    ("Hugging Face token (hf_…)", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),
    ("AWS access key id (AKIA…)", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("HTTP bearer credential (Bearer …)", re.compile(r"\b(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*")),
    ("GitHub token (ghp_…)", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("Google API key (AIza…)", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("Slack token (xox…)", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("private key block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)


_KEY_MARKERS: tuple[tuple[str, ...], ...] = (("sk-",), ("hf_",), ("AKIA", "ASIA"), ("bearer",),
                                            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ("AIza",),
                                            ("xox",), ("PRIVATE KEY",))
"""Literal text each pattern of SECRET_PATTERNS needs (same order; 'bearer' is matched case-insensitively): a fast
substring pre-filter so the regular expressions run only where they can match."""


def find_key_like(text: str) -> str | None:
    """Name of the first API-key-like pattern found in ``text`` (the match itself is never returned)."""
    lowered: str | None = None
    for (name, rx), markers in zip(SECRET_PATTERNS, _KEY_MARKERS):
        if markers == ("bearer",):
            lowered = text.lower() if lowered is None else lowered
            present = "bearer" in lowered
        else:
            present = any(m in text for m in markers)
        if present and rx.search(text):
            return name
    return None


def _string_values(value: Any) -> Iterator[str]:
    """Every string (keys included) in a parsed JSON value, without paths (:func:`json_strings` for those)."""
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            yield from v
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def check_secrets_value(run: CardRun, data: Any, text: str | None = None) -> None:
    """Report every string of the parsed card that looks like an API key, by JSON path.

    Fast paths, exact: when the raw JSON text has no escape sequence at all, every string's text appears verbatim in
    it, so one C-level scan of the raw text proves there is nothing to find. Any backslash (``\\t``, ``\\n``,
    ``\\u…``) can hide a separator or a character from that scan, so then the parsed strings are scanned as one text
    joined by NUL: no pattern of :data:`SECRET_PATTERNS` matches a NUL or spans one, and a NUL next to a string is,
    for every look-around and word boundary there, what the string's own start or end is — so the joined text has a
    match exactly when some string has one. Only then is every string scanned on its own, for the paths (a card of
    355 entries holds ~10,000 strings: one scan instead of 10,000).
    """
    if text is not None and "\\" not in text and find_key_like(text) is None:
        return
    if find_key_like("\x00".join(_string_values(data))) is None:
        return
    for p, s in json_strings(data):
        name = find_key_like(s)
        if name:
            run.fail("secrets", f"looks like an {name}; remove it, rotate the key, and re-run", json_path(p))


def check_secrets_text(run: CardRun, raw: bytes) -> None:
    """``secrets`` on bytes that are not valid JSON: scan the text as a whole (no JSON path)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    name = find_key_like(text)
    if name:
        run.fail("secrets", f"file contains what looks like an {name}; remove it and rotate the key")
