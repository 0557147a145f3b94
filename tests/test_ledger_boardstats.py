"""Issue 35 item 3 (add one card): a board's statistics kept between builds (:mod:`mtboard.ledger.boardstats`).

* the entry's encoding gives back every value with its type (NumPy scalars, tuples, dictionaries with their key
  types and order, counters, arrays of each kept type) and every object two places share shared again; a type it does
  not know is refused, never guessed;
* a board the build computes sets no statistic outside :data:`~mtboard.ledger.boardstats.FIELDS`;
* a cached ledger is the uncached one, cold and warm (published ledger and compare data of the committed EN→ES
  board); a warm build reads each board whole and marks its resample entries used (pruning keeps them);
* an entry that is corrupt, truncated, foreign, re-signed with unknown content, or a link is a miss: computed and
  replaced, never an error (docs/SECURITY.md §6).

Hand-made values below are small and made for these tests; the ledgers are the committed EN→ES cards.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mtboard.ledger import boardstats as B
from mtboard.ledger import document, tables
from mtboard.ledger.build import build_ledger
from mtboard.ledger.load import LoadedCard, Verification, load_inputs
from mtboard.ledger.standing import decide
from mtboard.ledger.tables import Cell, Leaderboard, Row, View
from mtboard.score.screen import RunScreen, ScreenReady
from test_ledger_resamples import _published, es_tree  # noqa: F401 - the committed EN→ES board, a fixture

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0" * 40


def _same(a, b) -> bool:
    """Equal values of the same types all the way down (arrays: dtype, shape and bytes; NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float | np.floating):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(k, l) for k, l in zip(a, b)) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, LoadedCard):
        return a is b
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def _card(page_id: str) -> LoadedCard:
    return LoadedCard(f"x/{page_id}.json", None, page_id, Verification("self-benchmarked"))  # no card: codec only


def _round_trip(value, cards=()):
    enc = B._Encoder()
    text = json.dumps(enc.encode(value))
    payload = bytearray(b"".join(enc.arrays))
    assert len(payload) == enc.size
    return B._Decoder(payload, {lc.page_id: lc for lc in cards}).decode(json.loads(text))


def test_every_value_comes_back_with_its_type_and_its_sharing():
    lc = _card("0123456789abcdef")
    boot = np.array([0.1, 0.2, -0.0, 1e-300, np.nan])
    shared_item = {"id": 7, "share": 0.5, "dev": True, "domain": None}
    value = {
        "floats": [1.0, -0.0, float("inf"), float("nan"), 0.1 + 0.2, np.float64(0.30000000000000004)],
        "ints": [0, -3, 2**63 - 1, -2**63, np.int64(-5), np.bool_(True), False],
        "tuple": (1.5, (2, "b"), None),
        "by_id": {355: 71.25, 3: 0.0, 10: 12.5},  # int keys in their order
        "counter": Counter({"empty": 2, "echo": 1}),
        "arrays": [boot, np.arange(6, dtype=np.int32).reshape(2, 3), np.array([True, False]), np.zeros((0, 24), "<i8")],
        "items": [shared_item, {"id": 8}],
        "suspect": [shared_item],
        "text": "naïve \u202e\udc80 «»",
    }
    row = Row(lc, {"rank": Cell("1", 1.0001), "method": Cell("m", "m", True)}, 71.5, np.float64(70.25), position=1,
              rank="1", boot=boot, chrf_boot=boot[:3].copy(), chrf_mean_boot=None, chrf_ci=(69.0, 72.0),
              composite_ci=None)
    row.chrf_mean_boot = row.chrf_boot
    view = View(None, 355, [row], None, "leaderboards/x.md", "note", judge_cells={"gemba-mqm": (10, 355)},
                ids=[1, 2, 3])
    screen = ScreenReady(0.5, 0.625, (RunScreen(0.5, 0.625, 0.6, 0.01, 355, Counter({"empty": 3}), 2,
                                                Counter({"markup": 2})),), "sig")
    value["views"] = [view]
    value["screen"] = {lc.path: screen}
    back = _round_trip(value, [lc])
    assert _same(back, value)
    assert back["items"][0] is back["suspect"][0]  # one item in two lists stays one object
    (brow,) = back["views"][0].rows
    assert brow.lc is lc and brow.chrf_mean_boot is brow.chrf_boot
    assert type(brow.chrf) is np.float64 and type(back["tuple"]) is tuple and type(back["counter"]) is Counter
    assert all(a.flags.writeable and a.ctypes.data % 8 == 0 for a in back["arrays"])
    assert back["floats"][3] != back["floats"][3] and math.copysign(1, back["floats"][1]) == -1


@pytest.mark.parametrize("value", [{1, 2}, 2**63, np.float32(1.5), np.zeros(2, dtype=np.float32),
                                   np.array(["a"], dtype=object), Path("x"), b"raw",
                                   Verification("self-benchmarked")],
                         ids=["set", "int-beyond-64-bits", "float32", "float32-array", "object-array", "path", "bytes", "other-dataclass"])
def test_a_value_without_an_encoding_is_refused(value):
    with pytest.raises(TypeError):
        B._Encoder().encode({"x": [value]})


def test_a_string_subclass_is_refused_not_turned_into_text():
    import enum

    class Kind(str, enum.Enum):
        A = "a"

    with pytest.raises(TypeError):
        B._Encoder().encode([Kind.A])


def _stats(lb: Leaderboard) -> dict:
    return {name: getattr(lb, name) for name in B.FIELDS}


def test_computing_a_board_sets_only_the_kept_fields(es_tree):
    inputs, _ = es_tree
    (plan,) = [p for p in decide(inputs) if p.segment != "diagnostic"]
    fresh = tables.build_leaderboards([plan], resamples=50)[0]
    blank = Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus,
                        f"leaderboards/{plan.key}.md", f"hard/{plan.key}.md", plan.cards, plan.ref_ids, [],
                        plan.unranked, [], segment=plan.segment, rows=plan.rows, state=plan.state)
    changed = {f.name for f in dataclasses.fields(Leaderboard) if not _same(getattr(fresh, f.name),
                                                                           getattr(blank, f.name))}
    assert changed <= set(B.FIELDS)
    assert {"screen", "domains", "views", "field_entry_median", "chart_points", "item_methods"} <= changed


@pytest.mark.slow  # ~4 CPU-s: four ledgers of the committed EN→ES board
def test_a_cached_board_is_the_computed_one_cold_and_warm(es_tree, tmp_path):
    inputs, _ = es_tree
    plain = build_ledger(inputs, resamples=200)
    cache = tmp_path / "cache"
    cold = build_ledger(inputs, resamples=200, cache=cache)
    (entry,) = sorted(cache.glob("boardstats/*/*.bin"))
    assert entry.stem in cold.cache_used["boardstats"]
    warm = build_ledger(inputs, resamples=200, cache=cache)
    assert (cold.board_stats_hits, cold.board_stats_misses, warm.board_stats_hits, warm.board_stats_misses) == \
        (0, 1, 1, 0)
    for a, b, c in zip(plain.boards, cold.boards, warm.boards, strict=True):
        assert _same(_stats(a), _stats(b)) and _same(_stats(a), _stats(c))
    assert _published(plain) == _published(cold) == _published(warm)
    # the warm build read no row resample, yet marks every one the board was made from used (pruning keeps them)
    stored = {p.stem for p in cache.glob("resamples/*/*.f64")}
    rows = cold.cache_used["resamples"] - warm.cache_used["resamples"]
    assert rows == set() and len(stored) > 0 and cold.cache_used["resamples"] == stored
    # another resample count is another key: computed again, the first entry left for pruning
    other = build_ledger(inputs, resamples=100, cache=cache)
    assert (other.board_stats_hits, other.board_stats_misses) == (0, 1)
    assert len(list(cache.glob("boardstats/*/*.bin"))) == 2


def _resign(entry: Path, edit) -> None:
    """Rewrite ``entry``'s JSON with ``edit`` and sign the payload again: a well-formed entry with other content."""
    raw = entry.read_bytes()
    fmt, key, jn, an, _sha, rest = raw.split(b"\n", 5)
    body = json.loads(rest[:int(jn)])
    edit(body)
    text = json.dumps(body).encode()
    payload = text + rest[int(jn):]
    entry.write_bytes(b"\n".join([fmt, key, str(len(text)).encode(), an, hashlib.sha256(payload).hexdigest().encode(),
                                  payload]))


def _first(body: dict, tag: str, cls: str | None = None) -> dict:
    todo = [body]
    while todo:
        v = todo.pop(0)
        if isinstance(v, dict):
            if v.get("!") == tag and cls in (None, v.get("c")):
                return v
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    raise AssertionError(tag)


def _composite_sort_text(body: dict) -> None:
    """Text as the sort key of the first row's composite cell (a numeric column)."""
    cells = _first(body, "o", "Row")["f"][1]
    cells["v"][cells["k"].index("composite")]["f"][1] = "x"


def _nan_array(entry: Path) -> None:
    """Write NaN over the first array's first value and sign the payload again."""
    fmt, key, jn, an, _sha, rest = entry.read_bytes().split(b"\n", 5)
    at = int(jn) + _first(json.loads(rest[:int(jn)]), "a")["o"]
    payload = rest[:at] + np.array([np.nan]).tobytes() + rest[at + 8:]
    entry.write_bytes(b"\n".join([fmt, key, jn, an, hashlib.sha256(payload).hexdigest().encode(), payload]))


POISONS = {
    "flip": lambda e: e.write_bytes(e.read_bytes()[:-5] + bytes([e.read_bytes()[-5] ^ 1]) + e.read_bytes()[-4:]),
    "truncate": lambda e: e.write_bytes(e.read_bytes()[:-1]),
    "append": lambda e: e.write_bytes(e.read_bytes() + b"\0"),
    "foreign": lambda e: e.write_bytes(e.read_bytes().replace(e.stem.encode(), b"0" * 64, 1)),
    "class": lambda e: _resign(e, lambda b: _first(b, "o").update(c="Verification")),
    "card": lambda e: _resign(e, lambda b: _first(b, "card").update(p="ffffffffffffffff")),
    "array": lambda e: _resign(e, lambda b: _first(b, "a").update(o=10**9)),
    "dtype": lambda e: _resign(e, lambda b: _first(b, "a").update(d="|O")),
    "tag": lambda e: _resign(e, lambda b: _first(b, "t").update({"!": "set"})),
    "fields": lambda e: _resign(e, lambda b: b["fields"].pop("views")),
    "i8-overflow": lambda e: _resign(e, lambda b: b["fields"].update(item_methods={"!": "i8", "v": 2**70})),
    "shape-overflow": lambda e: _resign(e, lambda b: _first(b, "a").update(s=[2**70])),
    "row-card": lambda e: _resign(e, lambda b: _first(b, "o", "Row")["f"].__setitem__(0, 5)),
    "arity": lambda e: _resign(e, lambda b: _first(b, "o", "Cell")["f"].append(False)),
    "no-views": lambda e: _resign(e, lambda b: b["fields"].update(views={"!": "l", "i": 10**6, "v": []})),
    "chart-keys": lambda e: _resign(e, lambda b: b["fields"].update(
        chart_points={"!": "l", "i": 10**6, "v": [{"!": "d", "i": 10**6 + 1, "k": ["x"], "v": [1]}]})),
    "self-list": lambda e: _resign(e, lambda b: b["fields"].update(
        chart_points={"!": "l", "i": 10**6, "v": [{"!": "r", "i": 10**6}]})),
    "methods-text": lambda e: _resign(e, lambda b: b["fields"].update(item_methods="2")),
    # values of the right classes that later stages could not take (the second review's cases)
    "screen-above": lambda e: _resign(e, lambda b: _first(b, "o", "ScreenReady")["f"].__setitem__(0, 0.99)),
    "screen-no-runs": lambda e: _resign(e, lambda b: _first(b, "o", "ScreenReady")["f"].__setitem__(
        2, {"!": "t", "v": []})),
    "composite-range": lambda e: _resign(e, lambda b: _first(b, "o", "Row")["f"].__setitem__(2, 1.5)),
    "composite-int": lambda e: _resign(e, lambda b: _first(b, "o", "Row")["f"].__setitem__(2, 1)),
    "no-cells": lambda e: _resign(e, lambda b: _first(b, "o", "Row")["f"].__setitem__(
        1, {"!": "d", "i": 10**6, "k": [], "v": []})),
    "text-sort": lambda e: _resign(e, _composite_sort_text),
    "view-ids": lambda e: _resign(e, lambda b: _first(b, "o", "View")["f"].__setitem__(
        9, {"!": "l", "i": 10**6, "v": [10**9]})),
    "big-int": lambda e: _resign(e, lambda b: _first(b, "o", "View")["f"].__setitem__(1, 10**400)),
    "nan-boot": _nan_array,
    "json-cap": lambda e: _resign(e, lambda b: b.__setitem__("pad", "x" * 64 * 1024 * 1024)),
    "directory": lambda e: (e.unlink(), e.mkdir()),
}


@pytest.mark.slow  # ~1 CPU-s each: two ledgers of the committed EN→ES board at 50 resamples
@pytest.mark.parametrize("poison", sorted(POISONS))
def test_a_corrupt_or_foreign_entry_is_computed_and_replaced(es_tree, tmp_path, poison):
    inputs, _ = es_tree
    cache = tmp_path / "cache"
    cold = build_ledger(inputs, resamples=50, cache=cache)
    (entry,) = sorted(cache.glob("boardstats/*/*.bin"))
    POISONS[poison](entry)
    again = build_ledger(inputs, resamples=50, cache=cache)
    assert (again.board_stats_hits, again.board_stats_misses) == (0, 1)
    assert _published(again) == _published(cold)
    if poison != "directory":
        assert build_ledger(inputs, resamples=50, cache=cache).board_stats_hits == 1  # the entry was replaced


def test_a_linked_entry_is_not_followed(es_tree, tmp_path):
    inputs, _ = es_tree
    cache = tmp_path / "cache"
    build_ledger(inputs, resamples=50, cache=cache)
    (entry,) = sorted(cache.glob("boardstats/*/*.bin"))
    aside = tmp_path / "aside.bin"
    shutil.move(entry, aside)
    entry.symlink_to(aside)
    again = build_ledger(inputs, resamples=50, cache=cache)
    assert (again.board_stats_hits, again.board_stats_misses) == (0, 1)


@pytest.mark.parametrize("linked", ["boardstats", "bucket"])
def test_a_linked_folder_in_the_cache_is_neither_read_nor_written_through(es_tree, tmp_path, linked):
    inputs, _ = es_tree
    cache = tmp_path / "cache"
    build_ledger(inputs, resamples=50, cache=cache)
    (entry,) = sorted(cache.glob("boardstats/*/*.bin"))
    folder = cache / "boardstats" if linked == "boardstats" else entry.parent
    outside = tmp_path / "outside"
    shutil.move(folder, outside)
    folder.symlink_to(outside, target_is_directory=True)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    again = build_ledger(inputs, resamples=50, cache=cache)
    assert (again.board_stats_hits, again.board_stats_misses) == (0, 1)  # the entry behind the link: not read
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before  # nor written through


def test_no_folder_keeps_nothing_and_a_card_not_read_from_a_file_is_computed(es_tree, tmp_path):
    inputs, _ = es_tree
    led = build_ledger(inputs, resamples=50)
    assert (led.board_stats_hits, led.board_stats_misses) == (0, 0)
    stats = B.BoardStats.make(tmp_path, 50)
    (plan,) = [p for p in decide(inputs) if p.segment != "diagnostic"]
    assert stats.key(plan) is not None
    assert stats.key(dataclasses.replace(plan, cards=[plan.cards[0], *plan.cards])) is None  # two cards, one page id
    plan.cards[0] = dataclasses.replace(plan.cards[0])  # a copy: its card is no longer the one its bytes gave
    assert not plan.cards[0].file_sha256 and stats.key(plan) is None


@pytest.mark.slow  # ~25 CPU-s: two ledgers of every committed card at 100 resamples
def test_every_committed_board_is_stored_and_read_back(tmp_path):
    """Every board of the committed submissions (domains, replicate runs, judges, baselines, several datasets): its
    statistics are stored (no value the codec refuses) and read back whole, and the ledger is the computed one."""
    inputs = load_inputs(ROOT / "submissions", ROOT / "corpora", validate=False)
    plain = build_ledger(inputs, resamples=100)
    cold = build_ledger(inputs, resamples=100, cache=tmp_path)
    warm = build_ledger(inputs, resamples=100, cache=tmp_path)
    n = len(plain.boards)
    assert n >= 8 and (cold.board_stats_hits, cold.board_stats_misses) == (0, n)
    assert (warm.board_stats_hits, warm.board_stats_misses) == (n, 0)
    assert len(list(tmp_path.glob("boardstats/*/*.bin"))) == n
    for a, c in zip(plain.boards, warm.boards, strict=True):
        assert _same(_stats(a), _stats(c)), a.key
    assert document.to_document(plain, "2026-12-01T00:00:00Z", COMMIT).model_dump_json() == \
        document.to_document(warm, "2026-12-01T00:00:00Z", COMMIT).model_dump_json()


def test_the_key_follows_every_input_of_the_board_and_the_machine(es_tree, tmp_path, monkeypatch):
    """A card's standing (tier and declared cells), its review, its verification, the ranked set, the resample count
    and the machine type each change the key; the same inputs give the same key in another BoardStats."""
    inputs, _ = es_tree
    (plan,) = [p for p in decide(inputs) if p.segment != "diagnostic"]
    stats = B.BoardStats.make(tmp_path, 50)
    key = stats.key(plan)
    assert key == B.BoardStats.make(tmp_path, 50).key(plan) and key != B.BoardStats.make(tmp_path, 60).key(plan)
    lc = plan.cards[0]
    for name, other in [("standing", dataclasses.replace(lc.standing, tier="gds-verified")),
                        ("review", "a review"),
                        ("verification", dataclasses.replace(lc.verification, tier="gds-verified"))]:
        before = getattr(lc, name)
        setattr(lc, name, other)
        try:
            assert stats.key(plan) not in (None, key), name
        finally:
            setattr(lc, name, before)
    assert stats.key(plan) == key
    assert stats.key(dataclasses.replace(plan, ranked=plan.ranked[:1])) != key
    monkeypatch.setattr(B.platform, "machine", lambda: "riscv64")
    assert B.BoardStats.make(tmp_path, 50).key(plan) != key
