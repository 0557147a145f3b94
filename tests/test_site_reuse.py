"""Issue 35 item 3: a board's run pages, run data and compare data are reused from the build cache when nothing they
are made from changed (:mod:`mtboard.site.reuse`), and the site is byte for byte the site of a build without a
cache.

Inputs: three committed datasets' cards (EN→DE, CA→EN, EN→CA: 12 real cards, one verification record) with the
repository's model records, contamination claims and canary sets copied beside them; 100 resamples keep the builds
short (every build of a test uses the same number). Entries planted in the cache are hand-made.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from mtboard.core import documents
from mtboard.site import build_site
from mtboard.site import reuse as R

ROOT = Path(__file__).resolve().parents[1]
STAMP = "2026-12-01 00:00 UTC"
DATASETS = ("mtb-en-de-dev", "mtb-ca-en-dev", "mtb-en-ca-dev")
HELD = "mtb-en-de-dev/baseline-echo__baseline__f26977cf62b2.json"
BESIDE = ("models", "contamination", "canaries", "reviews")


def _docs(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(root: Path, name: str, cache: Path | None):
    return build_site(root / "submissions", ROOT / "corpora", root / name / "site", root / name / "docs",
                      validate=False, resamples=100, run_mkdocs=False, build_time=STAMP, cache=cache,
                      prune_cache=True)


def _tree(root: Path) -> None:
    for ds in DATASETS:
        shutil.copytree(ROOT / "submissions" / ds, root / "submissions" / ds)
    for name in BESIDE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, root / name)


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """A cold build without one EN→DE card, then that card added (warm cache), then the same inputs without a cache."""
    root = tmp_path_factory.mktemp("reuse")
    _tree(root)
    aside = root / "held.json"
    shutil.move(root / "submissions" / HELD, aside)
    cache = root / "cache"
    first = _build(root, "first", cache)
    shutil.move(aside, root / "submissions" / HELD)
    second = _build(root, "second", cache)
    full = _build(root, "full", None)
    return root, cache, first, second, full


@pytest.mark.slow  # the module's six builds of ten real cards: ~40 s (docs/TESTING.md: fast lane ≤ 5 min)
def test_adding_a_card_renders_its_board_alone_and_the_site_is_a_full_builds(added):
    root, cache, first, second, full = added
    assert (first.leaderboards, second.leaderboards) == (3, 3) and second.cards == first.cards + 1 == 10
    assert not first.rejected and not second.rejected
    assert (first.board_hits, first.board_misses) == (0, 3)
    assert (second.board_hits, second.board_misses) == (2, 1)  # CA→EN and EN→CA read back; EN→DE rendered
    assert (full.board_hits, full.board_misses) == (0, 0)
    # and the boards' statistics (mtboard.ledger.boardstats): the two other boards' read, EN→DE's computed
    assert (first.board_stats_hits, first.board_stats_misses) == (0, 3)
    assert (second.board_stats_hits, second.board_stats_misses) == (2, 1)
    assert (full.board_stats_hits, full.board_stats_misses) == (0, 0)
    a, b = _docs(root / "second" / "docs"), _docs(root / "full" / "docs")
    assert sorted(a) == sorted(b)
    assert [p for p in a if a[p] != b[p]] == []
    entries = sorted((cache / R.FOLDER).rglob("*.zip"))
    assert len(entries) == 3  # one a board: the changed board's old entry was pruned
    assert len(list((cache / "boardstats").rglob("*.bin"))) == 3  # the same for the boards' statistics
    # the EN→DE run pages of the second build hold the added card's row; the first build's did not
    held = root / "submissions" / HELD
    import json
    page_id = json.loads(held.read_text(encoding="utf-8"))["run_card_hash"][:16]
    assert f"runs/{page_id}.md" in a and not (root / "first" / "docs" / "runs" / f"{page_id}.md").exists()


@pytest.mark.slow  # the module's six builds of ten real cards: ~40 s (docs/TESTING.md: fast lane ≤ 5 min)
def test_a_change_beside_the_cards_renders_every_board(added, tmp_path):
    """A model record's note changes what no card holds: every board is rendered again (the salt covers every
    non-card input), and the site is a full build's."""
    root, cache, *_ = added
    cache = shutil.copytree(cache, tmp_path / "cache")  # this build prunes the entries it does not use
    shutil.copytree(root / "submissions", tmp_path / "submissions")
    for name in BESIDE:
        if (root / name).is_dir():
            shutil.copytree(root / name, tmp_path / name)
    record = tmp_path / "models" / "gemma-3-270m.yaml"
    text = record.read_text(encoding="utf-8")
    assert text.count("Instruction-tuned 270M-parameter") == 1
    record.write_text(text.replace("Instruction-tuned 270M-parameter", "Instruction-tuned, 270M-parameter"),
                      encoding="utf-8")
    again = _build(tmp_path, "again", cache)
    full = _build(tmp_path, "full", None)
    assert (again.board_hits, again.board_misses) == (0, 3)
    # a model record is no input of a board's statistics (tries and facts are attached after them): all three read
    assert (again.board_stats_hits, again.board_stats_misses) == (3, 0)
    assert _docs(tmp_path / "again" / "docs") == _docs(tmp_path / "full" / "docs")
    assert len(list((cache / R.FOLDER).rglob("*.zip"))) == 3  # the three new entries; the old ones pruned


@pytest.mark.slow  # the module's six builds of ten real cards: ~40 s (docs/TESTING.md: fast lane ≤ 5 min)
def test_an_unchanged_tree_reads_every_board_back(added, tmp_path):
    root, cache, *_ = added
    again = _build(root, "third", cache)
    assert (again.board_hits, again.board_misses) == (3, 0)
    assert (again.board_stats_hits, again.board_stats_misses) == (3, 0)
    assert _docs(root / "third" / "docs") == _docs(root / "full" / "docs")


# ---------------------------------------------------------------------------------------------------------------------
# The entries: nothing read is trusted (hand-made entries)

KEY = "ab" + "0" * 62
PAGES, DATA = {"runs/x.md", "data/pairs/b.json"}, {"data/runs/x.json.gz"}


def _outputs() -> R.Outputs:
    return R.Outputs(pages={"runs/x.md": "# Run x\n", "data/pairs/b.json": "{}\n"},
                     data={"data/runs/x.json.gz": b"\x1f\x8b-not-read"})


def _reuse(folder: Path) -> R.BoardReuse:
    return R.BoardReuse(folder, "salt", {})


def _zip(members: dict[str, bytes], compress: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as z:
        for name, blob in members.items():
            z.writestr(name, blob)
    return buf.getvalue()


def test_a_stored_entry_reads_back_exactly_and_counts(tmp_path):
    reuse = _reuse(tmp_path)
    assert reuse.get(KEY, PAGES, DATA) is None and (reuse.hits, reuse.misses) == (0, 1)
    reuse.put(KEY, _outputs())
    got = reuse.get(KEY, PAGES, DATA)
    assert got == _outputs() and (reuse.hits, reuse.misses) == (1, 1)
    path = tmp_path / R.FOLDER / "ab" / f"{KEY}.zip"
    first = path.read_bytes()
    reuse.put(KEY, _outputs())
    assert path.read_bytes() == first  # the same outputs give the same archive
    assert reuse.get(None, PAGES, DATA) is None and reuse.misses == 2


@pytest.mark.parametrize("case", ["extra", "missing", "compressed", "wrong-key", "garbage", "empty", "bad-utf8"])
def test_an_entry_that_does_not_hold_exactly_the_boards_outputs_is_a_miss(tmp_path, case):
    reuse = _reuse(tmp_path)
    good = {R.KEY_MEMBER: KEY.encode(), "p/runs/x.md": b"# Run x\n", "p/data/pairs/b.json": b"{}\n",
            "d/data/runs/x.json.gz": b"gz"}
    raw = {
        "extra": _zip({**good, "p/runs/other.md": b"planted"}),
        "missing": _zip({k: v for k, v in good.items() if k != "p/data/pairs/b.json"}),
        "compressed": _zip(good, zipfile.ZIP_DEFLATED),
        "wrong-key": _zip({**good, R.KEY_MEMBER: b"cd" + b"0" * 62}),
        "garbage": b"PK\x03\x04 not an archive",
        "empty": b"",
        "bad-utf8": _zip({**good, "p/runs/x.md": b"\xff\xfe"}),
    }[case]
    path = tmp_path / R.FOLDER / "ab" / f"{KEY}.zip"
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    assert reuse.get(KEY, PAGES, DATA) is None and reuse.misses == 1
    path.write_bytes(_zip(good))  # the same members, well formed: read
    assert reuse.get(KEY, PAGES, DATA) is not None


def test_links_are_neither_read_nor_written_through(tmp_path):
    reuse = _reuse(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache" / R.FOLDER).mkdir(parents=True)
    os.symlink(elsewhere, tmp_path / "cache" / R.FOLDER / "ab")  # a folder link planted in a restored cache
    reuse.put(KEY, _outputs())
    assert list(elsewhere.iterdir()) == []
    good = tmp_path / "good.zip"
    _reuse(tmp_path / "other").put(KEY, _outputs())
    shutil.copy(tmp_path / "other" / R.FOLDER / "ab" / f"{KEY}.zip", elsewhere / f"{KEY}.zip")
    assert reuse.get(KEY, PAGES, DATA) is None  # through the folder link: not read
    (tmp_path / "cache" / R.FOLDER / "ab").unlink()
    (tmp_path / "cache" / R.FOLDER / "ab").mkdir()
    os.symlink(elsewhere / f"{KEY}.zip", tmp_path / "cache" / R.FOLDER / "ab" / f"{KEY}.zip")
    assert reuse.get(KEY, PAGES, DATA) is None  # the entry itself a link: not read
    assert not good.exists()


# ---------------------------------------------------------------------------------------------------------------------
# digest: equal values give equal digests, unequal ones differ, unknown types refuse


class _Colour(enum.Enum):
    red = "red"


class _Model(BaseModel):
    a: int
    b: list[str] = []


@dataclasses.dataclass
class _Pair:
    x: object
    y: object = None


def test_digest_is_order_free_for_mappings_and_sets_and_ordered_for_sequences():
    assert R.digest({"a": 1, "b": 2}) == R.digest({"b": 2, "a": 1})
    assert R.digest({"x", "y", "z"}) == R.digest({"z", "y", "x"}) == R.digest(frozenset("xyz"))
    assert R.digest([1, 2]) != R.digest([2, 1])
    assert R.digest(_Model(a=1, b=["q"])) == R.digest(_Model(b=["q"], a=1))
    assert R.digest(_Pair([1], {"k": _Model(a=2)})) == R.digest(_Pair([1], {"k": _Model(a=2)}))
    assert R.digest(np.arange(3, dtype="<i8")) == R.digest(np.array([0, 1, 2], dtype="<i8"))
    assert R.digest(np.int64(5)) == R.digest(5)  # a NumPy scalar is its Python value


def test_digest_tells_apart_values_that_print_alike():
    values = [1, 1.0, "1", True, None, "None", b"1", [1], (1,), {1}, {"1": None}, _Colour.red, "red",
              np.arange(3, dtype="<i8"), np.arange(3, dtype="<i4"), ["a", "b"], ["ab"], ["a", "b", ""],
              _Pair(1), _Pair(1, 1), _Model(a=1), 0.1 + 0.2, 0.3, Path("a/b"), "a/b\x00"]
    digests = [R.digest(v) for v in values]
    assert len(set(digests)) == len(values)
    assert R.digest(Path("a/b")) == R.digest("a/b")  # a path is its POSIX text


def test_digest_refuses_a_type_it_cannot_encode():
    with pytest.raises(TypeError, match="object"):
        R.digest([1, object()])
    with pytest.raises(TypeError, match="function"):
        R.digest({"f": lambda: 1})


def test_a_board_with_a_card_not_read_from_a_file_is_always_rendered(tmp_path):
    from types import SimpleNamespace

    from mtboard.ledger.load import LoadedCard, Verification

    lc = SimpleNamespace(path="a.json", page_id="0" * 16, file_sha256="", verification=None, review=None)
    lb = SimpleNamespace(key="b", cards=[lc], views=[], diagnostic=None)
    reuse = _reuse(tmp_path)
    assert reuse.key(lb) is None
    lc.file_sha256 = "1" * 64
    assert reuse.key(lb) is not None
    lc.review = object()  # an input with no canonical encoding: no key
    assert reuse.key(lb) is None
    # a loaded card names its file only while it holds the card parsed from it
    card = documents.load_card(ROOT / "submissions" / "mtb-en-ca-dev" / "apertium-eng-cat__default__8ca0b3e02be0.json")
    read = LoadedCard("a.json", card, "0" * 16, Verification("self-benchmarked"), sha256="1" * 64)
    assert read.file_sha256 == ""  # built in memory: ``read`` never set
    read.read = card
    lb.cards = [read]
    assert read.file_sha256 == "1" * 64 and reuse.key(lb) is not None
    lb.cards = [dataclasses.replace(read, card=card.model_copy(update={"run_id": "edited"}))]
    assert lb.cards[0].sha256 == "1" * 64 and reuse.key(lb) is None  # the edited copy keeps sha256, names nothing


def test_an_input_without_a_canonical_encoding_turns_reuse_off(tmp_path):
    """``BoardReuse.make`` digests every non-card input; one it cannot encode means no reuse (every board rendered),
    never a key that would ignore it."""
    from types import SimpleNamespace

    @dataclasses.dataclass
    class _Inputs:
        cards: list = dataclasses.field(default_factory=list)
        models: object = None

    ledger = SimpleNamespace(boards=[])
    made = R.BoardReuse.make(tmp_path, _Inputs(models={"a": 1}), ledger, resamples=10, repository=None)
    assert made is not None and made.ledger_boards == {}
    assert R.BoardReuse.make(tmp_path, _Inputs(models=object()), ledger, resamples=10, repository=None) is None
    assert R.BoardReuse.make(None, _Inputs(), ledger, resamples=10, repository=None) is None
    # the salt moves with each part it covers
    salts = {R.BoardReuse.make(tmp_path, _Inputs(models=m), ledger, resamples=r, repository=repo).salt
             for m, r, repo in [({"a": 1}, 10, None), ({"a": 2}, 10, None), ({"a": 1}, 20, None),
                                ({"a": 1}, 10, "o/r")]}
    assert len(salts) == 4


def test_the_board_key_moves_with_each_thing_it_covers(tmp_path):
    from types import SimpleNamespace

    from mtboard.ledger.load import Verification

    def board(**over):
        lc = dict(path="d/a.json", page_id="0" * 16, file_sha256="1" * 64,
                  verification=Verification("self-benchmarked"), review=None)
        lc.update({k: v for k, v in over.items() if k in lc})
        method = SimpleNamespace(key="m", gold=over.get("gold"))
        return SimpleNamespace(key=over.get("key", "b"), cards=[SimpleNamespace(**lc)],
                               views=[SimpleNamespace(methods=[method])], diagnostic=None)

    reuse = R.BoardReuse(tmp_path, "salt", {"b": "ledger-1"})
    base = reuse.key(board())
    assert reuse.key(board()) == base
    changed = [board(path="d/b.json"), board(page_id="1" * 16), board(file_sha256="2" * 64),
               board(verification=Verification("gds-verified", attested=True)), board(review={"confirms": True}),
               board(gold=("official/x.html#r", "gold 0.5")), board(key="c")]
    keys = [reuse.key(b) for b in changed]
    assert None not in keys and len({base, *keys}) == len(changed) + 1
    assert R.BoardReuse(tmp_path, "salt", {"b": "ledger-2"}).key(board()) != base  # its ledger board
    assert R.BoardReuse(tmp_path, "other", {"b": "ledger-1"}).key(board()) != base  # the salt


def test_prune_keeps_the_entries_the_build_used_and_nothing_else(tmp_path):
    reuse = _reuse(tmp_path)
    other = "cd" + "1" * 62
    reuse.put(KEY, _outputs())
    _reuse(tmp_path).put(other, _outputs())  # an entry of an earlier build
    note = tmp_path / R.FOLDER / "cd" / "README"
    note.write_text("not an entry")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"{'ef' + '2' * 62}.zip").write_bytes(b"kept")
    os.symlink(elsewhere, tmp_path / R.FOLDER / "ef")  # a folder link: not walked
    assert reuse.prune() == 1
    assert sorted(p.name for p in (tmp_path / R.FOLDER).rglob("*.zip")) == [f"{KEY}.zip"]
    assert note.exists() and (elsewhere / f"{'ef' + '2' * 62}.zip").exists()
    assert _reuse(tmp_path / "none").prune() == 0  # no folder: nothing to do, no error


def test_overlapping_members_and_a_huge_directory_are_misses_before_anything_is_read(tmp_path):
    """A stored archive whose members overlap returns more bytes than the file holds (zipfile checks overlaps only
    from Python 3.11.8): refused by size. An end record counting other than the expected members: refused before
    zipfile reads the directory."""
    reuse = _reuse(tmp_path)
    reuse.put(KEY, _outputs())
    path = tmp_path / R.FOLDER / "ab" / f"{KEY}.zip"
    raw = bytearray(path.read_bytes())
    # point the data member's central record at the first local header, with a size spanning the whole archive
    name = b"d/data/runs/x.json.gz"
    at = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"PK\x05\x06"))
    while raw[at + 46:at + 46 + len(name)] != name:
        at = raw.rfind(b"PK\x01\x02", 0, at)
    span = len(raw) - 30 - len(name)
    raw[at + 20:at + 24] = span.to_bytes(4, "little")  # compressed size
    raw[at + 24:at + 28] = span.to_bytes(4, "little")  # size
    raw[at + 42:at + 46] = (0).to_bytes(4, "little")  # local header offset: the first member's
    path.write_bytes(bytes(raw))
    assert reuse.get(KEY, PAGES, DATA) is None
    assert not R._sound(b"", 4) and not R._sound(b"PK\x05\x06" + bytes(18), 4)
    eocd = b"PK\x05\x06" + bytes(4) + (4).to_bytes(2, "little") * 2 + bytes(8) + b"\0\0"
    assert R._sound(eocd, 4) and not R._sound(eocd, 5) and not R._sound(eocd + b"x", 4)
    assert not R._sound(eocd[:-2] + b"\x01\0" + b"c", 4)  # a comment: not an archive this module writes


def test_the_diagnostic_board_the_run_pages_count_is_in_the_key(tmp_path):
    from types import SimpleNamespace

    from mtboard.ledger.load import Verification

    lc = SimpleNamespace(path="d/a.json", page_id="0" * 16, file_sha256="1" * 64, verification=Verification("x"),
                         review=None)
    keys = set()
    for diag in (None, SimpleNamespace(page="diagnostic/d.md", entries=3),
                 SimpleNamespace(page="diagnostic/d.md", entries=7)):
        lb = SimpleNamespace(key="b", cards=[lc], views=[], diagnostic=diag)
        keys.add(R.BoardReuse(tmp_path, "salt", {}).key(lb))
    assert None not in keys and len(keys) == 3


@pytest.mark.slow  # 3.2 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_board_of_more_than_65_534_members_reads_back(tmp_path):
    """From 65,535 members zipfile writes a ZIP64 end record (count 0xFFFF in the plain one): read through its locator,
    so a board of ~32,800 runs still hits."""
    reuse = _reuse(tmp_path)
    n = 32_800
    out = R.Outputs(pages={f"runs/{k:05d}.md": "#" for k in range(n)},
                    data={f"data/runs/{k:05d}.json.gz": b"x" for k in range(n)})
    reuse.put(KEY, out)
    raw = (tmp_path / R.FOLDER / "ab" / f"{KEY}.zip").read_bytes()
    assert int.from_bytes(raw[-12:-10], "little") == 0xFFFF  # the ZIP64 case
    assert R._sound(raw, 2 * n + 1) and not R._sound(raw, 2 * n)
    assert reuse.get(KEY, set(out.pages), set(out.data)) == out
