"""A card's header and summary kept between builds, so that a card whose board did not change is not parsed whole
(issue 35 item 3: "a build after adding one card re-validates and re-renders only what that card touches").

Parsing a 355-entry card costs ~8 ms (pydantic builds ~1,600 models) and sharing its parts ~4 ms: ~12 s of a
1,000-card build, nearly all of it for cards whose board did not change. What the build reads of such a card is its
header (every field but ``results``) and its :class:`~mtboard.ledger.summary.CardSummary`; both are stored here, in
the build cache folder (``mtboard build --cache``), by the SHA-256 of the card file's bytes.

**Use.** :func:`mtboard.ledger.load.load_inputs` looks a card's bytes up here before parsing them, and uses what it
finds only when the validation cache holds a verdict for the same bytes too (so they are known to pass the safe
parse and the schema). The card is then a :class:`PendingCard`: the header parsed by the card schema itself (the
stored header with an empty ``results``), whose ``results`` are read from the card's file on first use — the file
read again, its SHA-256 checked against the one it was loaded by, parsed (:func:`~mtboard.core.documents.
parse_card_unchecked`, as for any card with a verdict) and shared (:func:`~mtboard.core.compact.share`); the object
then *becomes* that parsed card (its class, fields and fields set), so every reader sees exactly the card a full
load gives, only later. Every whole-object operation (``model_dump``, ``==``, ``copy``, ``repr``, pickling,
assignment …) completes it first (:data:`WHOLE`). A card that changed on disk meanwhile raises InputError.

**Key** (hex SHA-256, :func:`mtboard.ledger.digest.digest`): :data:`FORMAT`, every file of the package
(:func:`mtboard.ledger.cache.code_hash`: the schema, the summary's rules), Python's version, the machine type, the
installed distributions (pydantic-core parses the numbers), and the card file's SHA-256.

**Entry** ``cards/KK/KEY.json``: JSON ``{"format", "key", "header", "summary"}``; ``header`` is the card file's own
JSON object without ``results`` (made from its bytes on the miss that stores it, so the parsed header has the
card's own fields set), ``summary`` the :class:`~mtboard.ledger.summary.CardSummary` field by field (counters as
``[name, count]`` pairs in their order; a source or reference that is its corpus entry's own text is left out,
``null``, and read back from the corpus the header names: ~100 KB an entry for a 355-entry card instead of ~150 KB).

**Nothing read is trusted** (the folder may come back from ``actions/cache``): an entry that is a link, not a regular
file, over :data:`MAX_ENTRY_BYTES`, not JSON, of another format or key, whose header the safe parse
(:mod:`mtboard.core.safejson`, as the card's bytes passed it) or the card schema refuses, or
whose summary does not hold together (:func:`_summary`: one value per entry in every column, entry ids and counts
whole numbers in range, known domain, segment and outcome values, sentence chrF++ finite in [0, 100] and 0 for a
failed entry, a non-usable entry failed and without an output hash, *fails everything*, the development count and
the outcome counts as the columns give them, texts UTF-8 can write, a left-out text its corpus holds) is a miss: the
card is parsed and the entry replaced. An entry that holds together but is not its card's (forged within every
range) is used like any other until the card's results are read — for a board the build computes, or a page that
reads entries — and that read compares the parsed card with the header and the summary and fails the build
(InputError naming the entry: delete the cache). As for the other caches, a forged but well-formed entry changes
what the pages show: only main's builds write the site workflow's cache (docs/SECURITY.md §6).

**What still parses a pending card** (each reads entries the summary does not hold): a board the build computes
(its statistics), the judges page (every judged card's verdicts), a verification record's error-rate check, clean
subsets (a model record with a training cutoff), context slices, canary drift, diagnostic boards, sweep pages and
replicate runs in compare data. A pending card never reaches a serializer through another model: pydantic-core
would write it from ``__dict__`` (no results); nothing in the build nests a card in a model.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import sys
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import safejson
from mtboard.core.cachefiles import real_folders, write_entry
from mtboard.core.compact import Sharing, share
from mtboard.core.documents import parse_card_unchecked
from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema import Domain, Outcome, RunCard, Segment
from mtboard.ledger.cache import code_hash, installed_distributions
from mtboard.ledger.digest import digest
from mtboard.ledger.summary import CardSummary, Tallies, summarise

FORMAT = "mtboard-card-summary/1"
FOLDER = "cards"
SUFFIX = ".json"
MAX_ENTRY_BYTES = 8 * 1024 * 1024
"""Largest entry read or written (a 355-entry card's is ~100 KB; a card may be up to 32 MiB,
:data:`mtboard.core.safejson.MAX_CARD_BYTES`: one whose entry would be larger is parsed every build)."""

WHOLE = ("__copy__", "__deepcopy__", "__eq__", "__ne__", "__getstate__", "__iter__", "__pretty__", "__reduce__",
         "__reduce_ex__", "__replace__", "__repr__", "__repr_args__", "__rich_repr__", "__str__", "__sizeof__",
         "__setattr__", "__delattr__", "_calculate_keys", "_copy_and_set_values", "_iter", "copy", "dict", "json",
         "model_copy", "model_dump", "model_dump_json")
"""The instance methods of a pydantic model that read (or change) the whole object: on a :class:`PendingCard`
each completes the card first (tests/test_ledger_cardcache.py checks that every other method of the model class is
one that reads no field, so a pydantic upgrade that adds one fails there)."""

_DOMAINS = frozenset(d.value for d in Domain)
_SEGMENTS = frozenset(s.value for s in Segment)
_OUTCOMES = frozenset(o.value for o in Outcome)
_INT64 = 2 ** 63


def _whole(name: str):
    def method(self: PendingCard, *args: Any, **kwargs: Any) -> Any:
        _completed(self)  # the arguments may have completed it already: card.model_copy(update={"x": card.results})
        return getattr(self, name)(*args, **kwargs)  # the completed card's own (its class is the card's now)

    method.__name__ = name
    return method


class PendingCard(RunCard):
    """A run card whose header was read from the card cache and whose ``results`` are read from its file on first
    use (module docstring); afterwards the object *is* that card (class :class:`~mtboard.core.schema.RunCard`).
    Made only by :meth:`CardCache.get`. Raises InputError (from any read of ``results`` or whole-object operation)
    when the file is gone or its bytes changed since the build read them."""

    def __getattr__(self, name: str) -> Any:
        if name == "results":
            self._complete()
            return self.results
        return super().__getattr__(name)

    def _complete(self) -> None:
        """Become the card parsed from the file (module docstring). The parsed card must be the one the header and
        summary were read for: the build has used them already (a board's plan, another board's pages), so an entry
        that does not match its card — forged, or a cache bug — fails the build rather than mix two cards.
        Raises InputError; the card stays pending then (nothing half done)."""
        src = _PENDING.get(id(self))
        if src is None:
            raise InputError("a pending card lost its source", fix="report this as a bug")  # never: see _adopt
        path, sha256, sharing, stored, entry = src
        try:
            raw = safejson.read_bytes(path)
        except (MtboardError, OSError) as exc:
            raise InputError("card unreadable while the site was built", where=str(path),
                             fix="build again without changing submissions/ meanwhile") from exc
        full = parse_card_unchecked(raw) if hashlib.sha256(raw).hexdigest() == sha256 else None
        if full is None:
            raise InputError("card changed while the site was built", where=str(path),
                             fix="build again without changing submissions/ meanwhile")
        header = {k: v for k, v in full.__dict__.items() if k != "results"}
        if (header != self.__dict__ or full.model_fields_set != self.model_fields_set
                or _encode(summarise(full), {}) != _encode(stored, {})):
            raise InputError(f"the build cache's entry for {path} does not match the card", where=str(entry),
                             fix="delete the build cache folder (mtboard build --cache) and build again")
        share(full, sharing)
        object.__setattr__(self, "__class__", RunCard)
        object.__setattr__(self, "__dict__", full.__dict__)
        object.__setattr__(self, "__pydantic_fields_set__", full.__pydantic_fields_set__)
        object.__setattr__(self, "__pydantic_extra__", full.__pydantic_extra__)
        object.__setattr__(self, "__pydantic_private__", full.__pydantic_private__)
        del _PENDING[id(self)]


def _completed(card: Any) -> None:
    """Complete ``card`` if it is (still) a pending card."""
    if isinstance(card, PendingCard):
        card._complete()


def _eq(self: PendingCard, other: Any) -> Any:
    _completed(self)
    _completed(other)  # pydantic's equality needs both of one class
    return self == other


def _ne(self: PendingCard, other: Any) -> Any:
    _completed(self)
    _completed(other)
    return self != other


for _name in WHOLE:
    setattr(PendingCard, _name, _whole(_name))
PendingCard.__eq__, PendingCard.__ne__ = _eq, _ne  # type: ignore[method-assign]

_PENDING: dict[int, tuple[Path, str, Sharing, CardSummary, Path]] = {}
"""``id(card)`` → ``(file, its SHA-256, sharing, stored summary, cache entry)`` of each pending card; an entry leaves
when its card completes or is collected (a ``weakref.finalize`` of the card)."""


def _adopt(card: PendingCard, path: Path, sha256: str, sharing: Sharing, stored: CardSummary,
           entry: Path) -> PendingCard:
    import weakref  # noqa: PLC0415

    _PENDING[id(card)] = (path, sha256, sharing, stored, entry)
    key = id(card)
    weakref.finalize(card, _PENDING.pop, key, None)
    return card


@dataclass
class CardCache:
    """The build's card cache in ``folder`` (None: nothing kept): :meth:`get` and :meth:`put` by the card file's
    SHA-256; ``used`` holds the keys looked up or written (what pruning keeps)."""

    folder: Path | None
    salt: str = ""
    corpora: dict[str, dict[int, tuple[str, str]]] = field(default_factory=dict)
    """Corpus file SHA-256 → entry id → (source, reference): the texts an entry leaves out (``null``) where the card
    holds the corpus's own, read back from here (a validated card's texts are its corpus's: the ``texts`` check)."""
    used: set[str] = field(default_factory=set)

    @classmethod
    def make(cls, folder: Path | None, corpora: dict[str, dict[int, tuple[str, str]]] | None = None) -> CardCache:
        """The cache in ``folder`` (None: nothing kept); ``corpora``: :attr:`corpora`."""
        if folder is None:
            return cls(None)
        return cls(folder, digest([FORMAT, code_hash(), sys.version, platform.machine(), installed_distributions()]),
                   corpora or {})

    def key(self, sha256: str) -> str:
        return digest([self.salt, sha256])

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / FOLDER / key[:2] / f"{key}{SUFFIX}"

    def get(self, path: Path, sha256: str, sharing: Sharing) -> tuple[PendingCard, CardSummary] | None:
        """The pending card and summary stored for the card file ``path`` whose bytes have ``sha256``, or None (no
        folder, no entry, or an entry that does not hold together: module docstring). Raises nothing."""
        if self.folder is None:
            return None
        key = self.key(sha256)
        self.used.add(key)
        found = self._read(key, sharing)
        if found is None:
            return None
        return _adopt(found[0], path, sha256, sharing, found[1], self._path(key)), found[1]

    def put(self, raw: bytes, sha256: str, summary: CardSummary, corpus: str) -> None:
        """Store the header of the card file bytes ``raw`` (SHA-256 ``sha256``, known to pass the safe parse) and its
        ``summary``; ``corpus``: the SHA-256 of the card's corpus (its texts are left out where they are the
        corpus's, :attr:`corpora`). Raises nothing (a cache only saves time)."""
        if self.folder is None:
            return
        key = self.key(sha256)
        try:
            header = json.loads(raw)
            header["results"] = []
            body = _encode(summary, self.corpora.get(corpus, {}))
            text = json.dumps({"format": FORMAT, "key": key, "header": json.dumps(
                header, ensure_ascii=False, separators=(",", ":"), allow_nan=False), "summary": body},
                              ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return
        if len(text) <= MAX_ENTRY_BYTES:
            self.used.add(key)
            write_entry(self.folder, self._path(key), text)

    def _read(self, key: str, sharing: Sharing) -> tuple[PendingCard, CardSummary] | None:
        path = self._path(key)
        if not real_folders(self.folder, path):
            return None
        try:
            body = json.loads(safejson.read_bytes(path, max_bytes=MAX_ENTRY_BYTES))
            if (type(body) is not dict or set(body) != {"format", "key", "header", "summary"}
                    or body["format"] != FORMAT or body["key"] != key or type(body["header"]) is not str):
                return None
            # the header through the safe parse a card's bytes passed (no NaN or Infinity, duplicate key, huge number,
            # deep nesting), then the card schema's own JSON parse, as for a card
            safejson.loads(body["header"], where=str(path), max_bytes=MAX_ENTRY_BYTES)
            card = PendingCard.model_validate_json(body["header"])
            if card.__dict__["results"] != []:
                return None
            del card.__dict__["results"]
            share(card, sharing)
            return card, _summary(body["summary"], self.corpora.get(card.dataset.sha256, {}))
        except (MtboardError, OSError, ValueError, KeyError, IndexError, TypeError, RecursionError, ArithmeticError,
                MemoryError):
            return None


def _counter(c: Counter[str]) -> list[list[Any]]:
    return [[k, v] for k, v in c.items()]


def _encode(s: CardSummary, corpus: dict[int, tuple[str, str]]) -> dict[str, Any]:
    t = s.tallies
    known = [corpus.get(i, (None, None)) for i in s.ids]
    return {"ids": list(s.ids), "domains": list(s.domains), "segments": list(s.segments),
            "outcomes": list(s.outcomes), "failed": list(s.failed), "chrf": list(s.chrf), "hashes": list(s.hashes),
            "sources": [None if k[0] == x else x for k, x in zip(known, s.sources)],
            "references": [None if k[1] == x else x for k, x in zip(known, s.references)], "outputs": list(s.outputs),
            "has_latency": s.has_latency, "fails_everything": s.fails_everything, "model_calls": s.model_calls,
            "tallies": [_counter(t.outcomes), _counter(t.kinds), _counter(t.severity), _counter(t.classes),
                        _counter(t.flags)],
            "modes": [_counter(s.modes[0]), s.modes[1]]}


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"stored card summary: {what}")


def _whole_number(v: Any, low: int, high: int = _INT64 - 1) -> bool:
    return type(v) is int and low <= v <= high


def _counts(pairs: Any) -> Counter[str]:
    _need(type(pairs) is list and all(type(p) is list and len(p) == 2 and _text(p[0])
                                      and _whole_number(p[1], 1) for p in pairs), "counts")
    out: Counter[str] = Counter({k: v for k, v in pairs})
    _need(len(out) == len(pairs), "counts named once")
    return out


def _text(v: Any) -> bool:
    """A string the site can write: UTF-8 encodable (the standard ``json`` module reads a lone surrogate)."""
    if type(v) is not str:
        return False
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _column(body: dict[str, Any], name: str, n: int, ok) -> tuple[Any, ...]:
    values = body[name]
    _need(type(values) is list and len(values) == n and all(ok(v) for v in values), name)
    return tuple(values)


def _summary(body: Any, corpus: dict[int, tuple[str, str]]) -> CardSummary:
    """The :class:`CardSummary` a stored ``summary`` object holds, once it holds together (module docstring); a
    source or reference left out (``null``) is the card's corpus's (``corpus``: entry id → (source, reference)), the
    corpus's own object. Raises ValueError (or KeyError/TypeError)."""
    _need(type(body) is dict and set(body) == {"ids", "domains", "segments", "outcomes", "failed", "chrf", "hashes",
                                               "sources", "references", "outputs", "has_latency",
                                               "fails_everything", "model_calls", "tallies", "modes"}, "fields")
    ids = body["ids"]
    _need(type(ids) is list and all(_whole_number(i, 0) for i in ids), "ids")
    n = len(ids)
    domains = _column(body, "domains", n, lambda v: v is None or (type(v) is str and v in _DOMAINS))
    segments = _column(body, "segments", n, lambda v: type(v) is str and v in _SEGMENTS)
    outcomes = _column(body, "outcomes", n, lambda v: type(v) is str and v in _OUTCOMES)
    failed = _column(body, "failed", n, lambda v: type(v) is bool)
    chrf = _column(body, "chrf", n, lambda v: type(v) in (int, float) and math.isfinite(v) and 0.0 <= v <= 100.0
                   and math.copysign(1.0, v) > 0)  # no -0.0: sentence_chrf never gives one
    hashes = _column(body, "hashes", n, lambda v: _whole_number(v, -1))
    sources, references = (_column(body, name, n, lambda v: v is None or _text(v))
                           for name in ("sources", "references"))
    outputs = _column(body, "outputs", n, _text)
    known = [corpus.get(i) for i in ids]
    _need(all(k is not None for k, x, y in zip(known, sources, references) if x is None or y is None),
          "texts of entries the corpus does not hold")
    _need(all((o == "usable" or f) and (not f or c == 0.0) and (o == "usable" or h == -1)
              for o, f, c, h in zip(outcomes, failed, chrf, hashes)), "failed entries")
    fails = body["fails_everything"]
    _need(fails is (n > 0 and all(o != "usable" for o in outcomes)), "fails everything")
    _need(type(body["has_latency"]) is bool and _whole_number(body["model_calls"], 0), "latency, calls")
    tallies = body["tallies"]
    _need(type(tallies) is list and len(tallies) == 5, "tallies")
    modes = body["modes"]
    _need(type(modes) is list and len(modes) == 2 and type(modes[1]) is int
          and modes[1] == sum(1 for s in segments if s == "development"), "development entries")
    tallied, mode_counts = Tallies(*(_counts(t) for t in tallies)), _counts(modes[0])
    by_outcome = Counter(outcomes)
    dev_outcomes = Counter(o for o, s in zip(outcomes, segments) if s == "development" and o != "usable")
    _need(all(tallied.outcomes[f"outcome: {o}"] == by_outcome[o] for o in _OUTCOMES)
          and all(mode_counts[o] == dev_outcomes[o] for o in _OUTCOMES), "outcome counts")
    return CardSummary(
        ids=tuple(ids), domains=domains, segments=segments, outcomes=outcomes, failed=failed,
        chrf=array("d", [float(c) for c in chrf]), hashes=hashes,
        sources=tuple(k[0] if x is None else x for k, x in zip(known, sources)),
        references=tuple(k[1] if x is None else x for k, x in zip(known, references)),
        outputs=outputs, has_latency=body["has_latency"], fails_everything=fails, model_calls=body["model_calls"],
        tallies=tallied, modes=(mode_counts, modes[1]))


__all__ = ["FORMAT", "MAX_ENTRY_BYTES", "WHOLE", "CardCache", "PendingCard"]
