"""A board's statistics kept between builds (issue 35 item 3: "a build after adding one card re-validates and
re-renders only what that card touches"): what :func:`mtboard.ledger.tables.build_leaderboards` computes for one
board — every view's rows (cells, composite and chrF++, their bootstrap resamples and CIs, ranks), the field
medians, the item statistics, the chart points and each card's screen-ready score (:data:`FIELDS`) — stored in the
build cache folder (``mtboard build --cache``) under a key made of every input of that computation, and read back,
value for value and type for type, by a later build whose key is the same. Adding a card to one board changes that
board's key and no other: the other boards' statistics are read, not recomputed.

**Key** (hex SHA-256, :func:`mtboard.ledger.digest.digest`):

* the *salt*, made once a build (:meth:`BoardStats.make`): :data:`FORMAT`; every file of the ``mtboard`` package
  (:func:`mtboard.ledger.cache.code_hash`: the tables, the metrics, the schema that parses the cards); Python's
  version, the machine type (NumPy's float sums may differ between instruction sets) and the installed distributions
  (NumPy, sacrebleu, pydantic-core …); the bootstrap ``resamples``;
* the board's plan (:class:`mtboard.ledger.standing.BoardPlan`): key, dataset id, version, language pair, corpus
  SHA-256, segment; for each of its cards in board order: path, page id, the SHA-256 of the card file's bytes
  (:attr:`mtboard.ledger.load.LoadedCard.file_sha256`: none for a card not read from a file, or whose ``card`` was
  replaced since — then the board is computed and nothing is stored), its verification, its pooled community review
  and its row's standing (the tier and declared cells, the shown card of each row); the ranked cards' page ids in
  board order, the ranked entry ids, the unranked cards' page ids.

An input the digest cannot encode turns the board's reuse off: it is computed, as without a cache.

**Entry** ``boardstats/KK/KEY.bin``: the ASCII header ``FORMAT\\nKEY\\nJ\\nB\\nSHA256(payload)\\n``, then the payload:
``J`` bytes of JSON — the statistics as :class:`_Encoder` writes them, every value tagged with its type so it comes
back as it was (a NumPy float64 scalar stays one, a tuple stays a tuple, a dictionary keeps its key types and
order, an object two fields share is shared again) and the resample cache keys the board's computation used — then
``B`` bytes of little-endian arrays (the resamples: ~8 KB per row-view and array) the JSON points into.
**Nothing read is trusted** (the folder may come back from ``actions/cache``): an entry that is a link, not a regular
file, over :data:`MAX_ENTRY_BYTES`, of another header, key or length, whose payload digest differs, whose JSON names
a type, a class, a field, an array type or a card this module does not know, an array outside the payload or an
overflowing number, JSON longer than a board of its cards writes, or whose values do not have the board's shape
(:func:`_check`: its domains and each view's entry ids recomputed, a view each and one for all, its own row for every
ranked card once, a cell per column with a sort key of the column's kind, composites in [0, 1] and chrF++ in
[0, 100] with ordered CIs, finite float64 resamples of the build's length, a screen-ready score for every card that
the published schema accepts, item and chart dictionaries of their keys and types with distinct entry ids of the
board) is a miss: the board is computed and the entry replaced, never an error. An entry that would be over
:data:`MAX_ENTRY_BYTES` is not written. As for the flip cache, a forged but well-formed
entry changes what the pages show: only main's builds write the site workflow's cache (docs/SECURITY.md §6). A hit
marks the board's resample cache entries used, so pruning the cache keeps them for the next change of that board.

The ledger is the same with or without an entry (tests/test_ledger_boardstats.py: every published file of a build
compared, cold and warm, and after a card of one board changed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import platform
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mtboard.core import safejson
from mtboard.core.cachefiles import real_folders, write_entry
from mtboard.core.errors import MtboardError
from mtboard.core.schema.ledger import LedgerScreenReady
from mtboard.ledger.cache import ResampleCache, code_hash, installed_distributions
from mtboard.ledger.digest import digest
from mtboard.ledger.load import LoadedCard
from mtboard.ledger.standing import BoardPlan
from mtboard.ledger.tables import (COLUMNS, Cell, Leaderboard, Row, View, board_domains, board_page, entry_domains,
                                  view_ids, view_page)
from mtboard.score.screen import RunScreen, ScreenReady

FORMAT = "mtboard-board-stats/1"
"""Hashed into every key and written in every header: a change of the entry's layout misses every old entry."""
FOLDER = "boardstats"
SUFFIX = ".bin"
MAX_ENTRY_BYTES = 2 * 1024 * 1024 * 1024
"""Largest entry read: a 2,000-row board of 8 views keeps ~400 MB of resamples."""
FIELDS = ("screen", "domains", "views", "field_entry_median", "chart_points", "hard_items", "easy_items",
          "item_methods", "item_analysis", "suspect_items")
"""The :class:`mtboard.ledger.tables.Leaderboard` fields :func:`mtboard.ledger.tables.build_leaderboards` computes;
every other field comes from the board's plan (tests/test_ledger_boardstats.py checks that the computation sets no
other)."""
CLASSES: dict[str, type] = {c.__name__: c for c in (Cell, Row, View, ScreenReady, RunScreen)}
"""The only classes an entry may hold (besides the board's own cards, named by page id)."""
_ARITY = {name: len(dataclasses.fields(cls)) for name, cls in CLASSES.items()
          if all(f.init for f in dataclasses.fields(cls))}
"""Fields of each class, every one an ``__init__`` argument (a class with another field could not be rebuilt)."""
if set(_ARITY) != set(CLASSES):
    raise TypeError("a class of CLASSES has a field its __init__ does not take: it cannot be read back")
DTYPES = frozenset({"<f8", "<i8", "<i4", "|b1"})
"""The only array types an entry may hold."""


class _Encoder:
    """Turns the statistics into JSON-ready values and an array payload: every container, array and object gets a
    number on first sight (``"i"``) and is written as a reference (``{"!": "r", "i": n}``) when seen again."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.held: list[Any] = []  # keeps every numbered value alive, so no id() is reused while encoding
        self.arrays: list[bytes] = []
        self.size = 0

    def _number(self, value: Any) -> int | None:
        n = self.seen.get(id(value))
        if n is None:
            self.seen[id(value)] = len(self.held)
            self.held.append(value)
        return n

    def encode(self, v: Any) -> Any:  # noqa: C901, PLR0911 - one branch per kind of value
        if type(v) is int and not -2**63 <= v < 2**63:
            raise TypeError("a whole number beyond 64 bits")  # the reader refuses them
        if v is None or type(v) in (str, bool, int, float):
            return v
        if isinstance(v, np.ndarray | LoadedCard | list | dict) or dataclasses.is_dataclass(v):
            n = self._number(v)
            if n is not None:
                return {"!": "r", "i": n}
            i = len(self.held) - 1
        if isinstance(v, np.generic):
            kind = {np.float64: "f8", np.int64: "i8", np.bool_: "b1"}.get(type(v))
            if kind is None:
                raise TypeError(f"no encoding for {type(v).__qualname__}")
            return {"!": kind, "v": v.item()}
        if isinstance(v, tuple):
            return {"!": "t", "v": [self.encode(x) for x in v]}
        if isinstance(v, np.ndarray):
            if v.dtype.str not in DTYPES:
                raise TypeError(f"no encoding for arrays of {v.dtype.str}")
            data = np.ascontiguousarray(v).tobytes()
            at = self.size
            self.arrays.append(data + b"\0" * (-len(data) % 8))  # every array starts 8-byte aligned
            self.size += len(self.arrays[-1])
            return {"!": "a", "i": i, "d": v.dtype.str, "s": list(v.shape), "o": at}
        if isinstance(v, LoadedCard):
            return {"!": "card", "i": i, "p": v.page_id}
        if type(v) is list:
            return {"!": "l", "i": i, "v": [self.encode(x) for x in v]}
        if type(v) in (dict, Counter):
            return {"!": "d" if type(v) is dict else "C", "i": i, "k": [self.encode(k) for k in v],
                    "v": [self.encode(x) for x in v.values()]}
        if type(v).__name__ in CLASSES and CLASSES[type(v).__name__] is type(v):
            return {"!": "o", "i": i, "c": type(v).__name__,
                    "f": [self.encode(getattr(v, f.name)) for f in dataclasses.fields(v)]}
        raise TypeError(f"no encoding for {type(v).__qualname__}")


class _Decoder:
    """The inverse of :class:`_Encoder`; any value it does not know raises ValueError (the entry is a miss)."""

    def __init__(self, payload: bytearray, cards: dict[str, LoadedCard]) -> None:
        self.payload = payload
        self.cards = cards
        self.made: dict[int, Any] = {}

    def _keep(self, n: Any, value: Any) -> Any:
        if type(n) is not int or n in self.made:
            raise ValueError("bad object number")
        self.made[n] = value
        return value

    def decode(self, v: Any) -> Any:  # noqa: C901, PLR0911 - one branch per tag
        if type(v) is int and not -2**63 <= v < 2**63:
            raise ValueError("a whole number out of range")
        if v is None or type(v) in (str, bool, int, float):
            return v
        if type(v) is not dict:
            raise ValueError("untagged value")
        tag = v.get("!")
        if tag == "r":
            return self.made[v["i"]]
        if tag in ("f8", "i8", "b1"):
            kind = {"f8": (np.float64, float), "i8": (np.int64, int), "b1": (np.bool_, bool)}[tag]
            if type(v["v"]) is not kind[1] or (tag == "i8" and not -2**63 <= v["v"] < 2**63):
                raise ValueError("bad scalar")
            return kind[0](v["v"])
        if tag == "t":
            return tuple(self.decode(x) for x in v["v"])
        if tag == "l":
            return self._keep(v["i"], [self.decode(x) for x in v["v"]])  # kept when whole: no list holds itself
        if tag in ("d", "C"):
            keys, values = v["k"], v["v"]
            if len(keys) != len(values):
                raise ValueError("keys and values differ in length")
            made = dict(zip([self.decode(k) for k in keys], [self.decode(x) for x in values]))
            if len(made) != len(keys):
                raise ValueError("repeated key")
            return self._keep(v["i"], made if tag == "d" else Counter(made))
        if tag == "a":
            return self._keep(v["i"], self._array(v))
        if tag == "card":
            return self._keep(v["i"], self.cards[v["p"]])
        if tag == "o":
            cls, count = CLASSES[v["c"]], _ARITY[v["c"]]
            values = v["f"]
            if type(values) is not list or len(values) != count:
                raise ValueError("fields differ")
            return self._keep(v["i"], cls(*[self.decode(x) for x in values]))  # every field is an init field, in order
        raise ValueError(f"unknown tag {tag!r}")

    def _array(self, v: dict[str, Any]) -> np.ndarray:
        dtype, shape, offset = v["d"], v["s"], v["o"]
        if (dtype not in DTYPES or type(offset) is not int or type(shape) is not list or len(shape) > 2
                or not all(type(n) is int and 0 <= n <= len(self.payload) for n in shape)):
            raise ValueError("bad array")
        count = math.prod(shape)
        size = count * np.dtype(dtype).itemsize
        if offset < 0 or offset + size > len(self.payload):
            raise ValueError("array outside the payload")
        return np.frombuffer(self.payload, dtype=dtype, count=count, offset=offset).reshape(shape)


_KEY = re.compile(r"[0-9a-f]{64}")
_FLOAT = (float, np.float64)
_NUMBER = (int, float, np.float64, np.int64)
_MAYBE_NUMBER = (type(None), *_NUMBER)
_MAYBE_TEXT = (type(None), str)
_ITEM = {"id": int, "domain": _MAYBE_TEXT, "source": str, "reference": str, "share": _NUMBER, "n": int,
         "struggle": int, "pass": int, "dev": bool}
_HARD = {**_ITEM, "difficulty": _MAYBE_NUMBER, "discrimination": _MAYBE_NUMBER, "suspect": (type(None), bool)}
_ANALYSIS = {"id": int, "domain": _MAYBE_TEXT, "source": str, "reference": str, "difficulty": _MAYBE_NUMBER,
             "discrimination": _MAYBE_NUMBER, "fail_share": _NUMBER, "n": int, "suspect": bool,
             "output_agreement": _MAYBE_NUMBER, "reference_agreement": _MAYBE_NUMBER}
_CHART = {"label": str, "model": str, "cost": _MAYBE_NUMBER, "composite": _MAYBE_NUMBER, "chrf": _MAYBE_NUMBER,
          "position": int, "href": str}
"""The keys and value types of the item, item-analysis and chart-point dictionaries ``build_leaderboards`` makes
(:func:`mtboard.ledger.tables._items`); a stored one of any other shape is refused (the tests read back every
committed board, whose dictionaries these must fit)."""
_CELLS = {c.key: c.numeric for c in COLUMNS}
"""Every row's cells: one per column (:data:`mtboard.ledger.tables.COLUMNS`); a numeric column's sort key is a finite
number or None, another's text, a whole number (the verification tier's order) or None."""
_MAX_JSON_PER_CARD = 256 * 1024
"""The JSON part of an entry may be at most 1 MiB plus this per card of the board (a 200-card board of 8 views
writes ~20 KiB a card): a forged entry cannot make the reader parse gigabytes of JSON."""


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"stored board statistics: {what}")


def _finite(x: Any, low: float, high: float) -> bool:
    return type(x) in _FLOAT and low <= x <= high  # NaN fails both comparisons


def _dicts(values: Any, ids: set[int], *shapes: dict[str, Any]) -> None:
    """``values``: a list of dictionaries of one of ``shapes`` (keys and value types; numbers finite), with distinct
    ``id`` values among ``ids`` when the shape has one."""
    _need(type(values) is list, "a list of dictionaries")
    seen: set[int] = set()
    for x in values:
        shape = next((s for s in shapes if type(x) is dict and set(x) == set(s)), None)
        _need(shape is not None, "dictionary keys")
        _need(all(type(x[k]) in (t if isinstance(t, tuple) else (t,)) for k, t in shape.items()),
              "dictionary values")  # exact types: a bool is no number here
        _need(all(math.isfinite(v) for v in x.values() if type(v) in (float, np.float64)), "finite numbers")
        if "id" in shape:
            _need(x["id"] in ids and x["id"] not in seen, "item ids")
            seen.add(x["id"])


def _check_row(row: Any, ranked: dict[int, LoadedCard], resamples: int) -> None:
    _need(type(row) is Row and id(row.lc) in ranked, "a row of a ranked card")
    cells = row.cells
    _need(type(cells) is dict and set(cells) == set(_CELLS), "cells")
    for key, c in cells.items():
        sort = c.sort if type(c) is Cell else "-"
        ok = (sort is None or (type(sort) in _NUMBER and math.isfinite(sort)) if _CELLS[key]
              else sort is None or type(sort) in (str, int))
        _need(type(c) is Cell and type(c.text) is str and type(c.declared) is bool and ok, f"cell {key}")
    _need(row.composite is None or _finite(row.composite, 0.0, 1.0), "composite")
    _need(row.chrf is None or _finite(row.chrf, 0.0, 100.0), "chrF++")
    _need(type(row.position) is int and type(row.rank) is str and type(row.reference) is bool, "row rank")
    for ci, top in ((row.chrf_ci, 100.0), (row.composite_ci, 1.0)):
        _need(ci is None or (type(ci) is tuple and len(ci) == 2 and all(_finite(x, 0.0, top) for x in ci)
                             and ci[0] <= ci[1]), "CI")
    for a in (row.boot, row.chrf_boot, row.chrf_mean_boot):
        _need(type(a) is np.ndarray and a.dtype == np.float64 and a.shape == (resamples,)
              and bool(np.isfinite(a).all()), "resamples")
    _need(bool(row.lc.card.replicate_runs) or row.chrf_mean_boot is row.chrf_boot, "one run's chrF++ resamples")


def _check_views(found: dict[str, Any], plan: BoardPlan, first: dict[int, Any], resamples: int) -> None:
    _need(found["domains"] == board_domains(first), "domains")
    views, ranked, seen = found["views"], {id(lc): lc for lc in plan.ranked}, set()
    _need(type(views) is list and len(views) == 1 + len(found["domains"]), "views")
    for view, domain in zip(views, [None, *found["domains"]]):  # what tables._view makes for each
        ids = view_ids(plan.ref_ids, first, domain)
        _need(type(view) is View and view.domain == domain and view.page == view_page(board_page(plan.key), domain)
              and type(view.rows) is list and view.ids == ids and type(view.n_entries) is int
              and view.n_entries == len(ids) and (view.mdd is None or _finite(view.mdd, 0.0, math.inf))
              and type(view.ordering_note) is str and view.methods == [] and view.sentinels == []
              and view.inseparable is False, "view")
        _need(type(view.judge_cells) is dict and all(
            type(k) is str and type(v) is tuple and len(v) == 2 and all(type(n) is int and 0 <= n <= len(ids)
                                                                        for n in v)
            for k, v in view.judge_cells.items()), "judge cells")
        _need(sorted(id(r.lc) for r in view.rows if type(r) is Row) == sorted(ranked), "one row a ranked card")
        for row in view.rows:
            _need(id(row) not in seen, "a row in one view")
            seen.add(id(row))
            _check_row(row, ranked, resamples)


def _check_screen(screen: Any, plan: BoardPlan) -> None:
    _need(type(screen) is dict and set(screen) == {lc.path for lc in plan.cards}, "screen-ready scores")
    for sr in screen.values():
        _need(type(sr) is ScreenReady and type(sr.signature) is str and type(sr.runs) is tuple and sr.runs
              and _finite(sr.value, 0.0, 1.0) and _finite(sr.composite, 0.0, 1.0), "a screen-ready score")
        for run in sr.runs:
            _need(type(run) is RunScreen and all(_finite(x, -math.inf, math.inf) for x in
                                                 (run.value, run.composite, run.hard_composite, run.penalty))
                  and all(type(n) is int and n >= 0 for n in (run.entries, run.formatted))
                  and all(type(c) is Counter and all(type(k) is str and type(n) is int and n >= 0
                                                     for k, n in c.items()) for c in (run.hard, run.flags)),
                  "a run's screen-ready score")
        LedgerScreenReady.of(sr)  # the published score's schema (ranges, value ≤ composite …): ValidationError


def _check(found: dict[str, Any], plan: BoardPlan, resamples: int) -> None:
    """Raise ValueError unless ``found`` (decoded :data:`FIELDS`) has the shape ``build_leaderboards`` gives
    ``plan``'s board: its domains and each view's entry ids (recomputed from the plan), one view per domain and one
    for all, each with its own row for every ranked card once, a cell per column with a sort key of the column's
    kind, composites in [0, 1] and chrF++ in [0, 100] with ordered CIs, ``resamples``-long finite float64 resamples;
    a screen-ready score for every card that the published schema accepts; field medians of ranked entries; item
    and chart dictionaries of their shapes with distinct entry ids of the board."""
    first = entry_domains(plan.ranked[0]) if plan.ranked else {}  # what tables reads
    _check_views(found, plan, first, resamples)
    _check_screen(found["screen"], plan)
    medians, refs = found["field_entry_median"], set(plan.ref_ids)
    _need(type(medians) is dict and all(type(k) is int and k in refs and _finite(v, 0.0, 100.0)
                                        for k, v in medians.items()), "field medians")
    _need(type(found["item_methods"]) is int and 0 <= found["item_methods"] <= len(plan.cards), "item methods")
    entries = set(first)
    _dicts(found["hard_items"], entries, _HARD)
    _dicts(found["easy_items"], entries, _ITEM, _HARD)
    _dicts(found["item_analysis"], entries, _ANALYSIS)
    analysed = {id(x) for x in found["item_analysis"]}
    _need(type(found["suspect_items"]) is list and all(id(x) in analysed for x in found["suspect_items"])
          and len({id(x) for x in found["suspect_items"]}) == len(found["suspect_items"]),
          "suspect items among the analysed")
    _dicts(found["chart_points"], set(), _CHART)


@dataclass
class BoardStats:
    """Every board's statistics by key in ``folder/boardstats/`` (module docstring; ``folder`` None keeps nothing).
    ``hits``/``misses`` count boards read and boards computed with a folder; ``used`` holds the keys read or
    stored (what :func:`mtboard.core.cachefiles.prune_entries` keeps)."""

    folder: Path | None
    salt: str = ""
    resamples: int = 0
    """The bootstrap resample count: the length of every row's resample arrays."""
    hits: int = 0
    misses: int = 0
    used: set[str] = field(default_factory=set)

    @classmethod
    def make(cls, folder: Path | None, resamples: int) -> BoardStats:
        """The build's board statistics in ``folder`` (None: nothing kept) for ``resamples`` bootstrap resamples."""
        if folder is None:
            return cls(None)
        return cls(folder, digest([FORMAT, code_hash(), sys.version, platform.machine(), installed_distributions(),
                                   resamples]), resamples)

    def key(self, plan: BoardPlan) -> str | None:
        """The key of ``plan``'s statistics (module docstring); None without a folder, when an input has no
        canonical encoding or when two of its cards share a page id (the board is computed and nothing is stored)."""
        if (self.folder is None or not all(lc.file_sha256 for lc in plan.cards)
                or len({lc.page_id for lc in plan.cards}) != len(plan.cards)):  # an entry names a card by page id
            return None
        try:
            cards = [(lc.path, lc.page_id, lc.file_sha256, lc.verification, lc.review, lc.standing)
                     for lc in plan.cards]
            return digest([self.salt, plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256,
                           plan.segment, cards, [lc.page_id for lc in plan.ranked], plan.ref_ids,
                           [lc.page_id for lc in plan.unranked]])
        except TypeError:
            return None

    def fill(self, lb: Leaderboard, plan: BoardPlan, resamples: ResampleCache,
             compute: Callable[[Leaderboard, ResampleCache], None]) -> None:
        """Set ``lb``'s :data:`FIELDS` from the stored entry of ``plan``'s key, or by ``compute(lb, cache)`` (then
        stored). ``resamples``: the build's resample cache; ``compute`` gets one of its own whose lookups, hits,
        misses and used keys are added to it (the used keys are stored with the board, and marked used on a hit)."""
        key = self.key(plan)
        if key is not None:
            self.used.add(key)
            found = self._read(key, plan)
            if found is not None:
                self.hits += 1
                for name in FIELDS:
                    setattr(lb, name, found[0][name])
                resamples.used |= found[1]
                return
            self.misses += 1
        mine = ResampleCache(resamples.folder)
        compute(lb, mine)
        resamples.hits += mine.hits
        resamples.misses += mine.misses
        resamples.used |= mine.used
        if key is not None:
            self._write(key, lb, mine.used)

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / FOLDER / key[:2] / f"{key}{SUFFIX}"

    @staticmethod
    def _header(key: str, text: bytes, arrays: int, payload_sha256: str) -> bytes:
        return f"{FORMAT}\n{key}\n{len(text)}\n{arrays}\n{payload_sha256}\n".encode()

    def _write(self, key: str, lb: Leaderboard, used: set[str]) -> None:
        enc = _Encoder()
        try:
            body = {"fields": {name: enc.encode(getattr(lb, name)) for name in FIELDS}, "resamples": sorted(used)}
        except TypeError:
            return
        text = json.dumps(body, separators=(",", ":")).encode()
        if len(text) + enc.size + 256 > MAX_ENTRY_BYTES:
            return  # never read back: not written
        h = hashlib.sha256(text)
        for a in enc.arrays:
            h.update(a)
        assert self.folder is not None
        write_entry(self.folder, self._path(key), b"".join([self._header(key, text, enc.size, h.hexdigest()), text,
                                                            *enc.arrays]))

    def _read(self, key: str, plan: BoardPlan) -> tuple[dict[str, Any], set[str]] | None:
        path = self._path(key)
        if not real_folders(self.folder, path):
            return None
        try:
            raw = safejson.read_bytes(path, max_bytes=MAX_ENTRY_BYTES)
            end = 0
            for _ in range(5):  # the header's five lines; the payload is not copied: a view of it is hashed and decoded
                end = raw.index(b"\n", end) + 1
            fmt, stored, jn, an, sha = raw[:end].split(b"\n")[:5]
            rest = memoryview(raw)[end:]
            jn, an = int(jn), int(an)
            if (fmt.decode() != FORMAT or stored.decode() != key or jn < 0 or an < 0 or len(rest) != jn + an
                    or jn > 1024 * 1024 + _MAX_JSON_PER_CARD * len(plan.cards)
                    or hashlib.sha256(rest).hexdigest() != sha.decode()):
                return None
            body = json.loads(bytes(rest[:jn]))
            dec = _Decoder(bytearray(rest[jn:]), {lc.page_id: lc for lc in plan.cards})
            fields = body["fields"]
            if type(fields) is not dict or set(fields) != set(FIELDS):
                return None
            found = {name: dec.decode(fields[name]) for name in FIELDS}
            used = body["resamples"]
            if type(used) is not list or not all(type(k) is str and _KEY.fullmatch(k) for k in used):
                return None
            _check(found, plan, self.resamples)
            return found, set(used)
        except (MtboardError, OSError, ValueError, KeyError, IndexError, TypeError, RecursionError, ArithmeticError,
                MemoryError):
            return None


__all__ = ["BoardStats", "FIELDS", "FORMAT"]
