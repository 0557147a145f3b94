"""Issue 35 item 3 (noticed in note 59): a build that prunes its cache (``mtboard build``'s default,
``--prune-cache``; ``build_site(prune_cache=True)``) keeps exactly the entries it read or stored, kind by kind, so
the folder the site workflow saves does not grow with each code change.

Inputs: three committed EN→FR cards (real, 20 entries each: two ranked methods and a baseline) and the committed
corpora; 100 resamples keep the builds short. The stale entries planted in the cache are hand-made copies of real ones under other names.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mtboard.core import cachefiles as C
from mtboard.site import build_site

ROOT = Path(__file__).resolve().parents[1]
STAMP = "2026-12-01 00:00 UTC"
DATASET = "mtb-en-fr-dev"
CARDS = ("gemma-3-270m-q4-k-m.gguf__few-shot-completion__2bcc5b166e32.json",
         "gemma-3-270m-q4-k-m.gguf__zero-shot-completion__5c519b55e824.json",
         "baseline-echo__baseline__580b902f522e.json")
KEY = "ab" + "0" * 62
"""A key no build makes (hand-made)."""


def _build(root: Path, name: str, cache: Path, **kw):
    return build_site(root / "submissions", ROOT / "corpora", root / name / "site", root / name / "docs",
                      resamples=100, run_mkdocs=False, build_time=STAMP, cache=cache, **kw)


def _entries(cache: Path) -> dict[str, list[str]]:
    """Every entry's name, by kind."""
    return {kind: sorted(p.name for p in (cache / kind).rglob("*") if p.is_file()) for kind in C.KINDS
            if (cache / kind).is_dir()}


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """The three cards built once with a pruning cache: the cache holds what that build used."""
    root = tmp_path_factory.mktemp("prune")
    (root / "submissions" / DATASET).mkdir(parents=True)
    for name in CARDS:
        shutil.copy(ROOT / "submissions" / DATASET / name, root / "submissions" / DATASET / name)
    cache = root / "cache"
    first = _build(root, "first", cache, prune_cache=True)
    return root, cache, first


def _plant(cache: Path) -> list[Path]:
    """One stale entry of each kind (a real entry's bytes under a key no build makes) and a killed write's
    temporary file; returns their paths."""
    planted = []
    for kind, suffix in C.KINDS.items():
        real = sorted((cache / kind).rglob(f"*{suffix}"))
        if not real:
            continue
        folder = cache / kind / KEY[:2] if real[0].parent != cache / kind else cache / kind
        folder.mkdir(parents=True, exist_ok=True)
        stale = folder / f"{KEY}{suffix}"
        stale.write_bytes(real[0].read_bytes())
        planted.append(stale)
    tmp = cache / "validation" / KEY[:2] / f".{KEY}.json.x1y2.tmp"
    tmp.write_bytes(b"{")
    return planted + [tmp]


@pytest.mark.slow  # 6.5 CPU-s, 9 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_pruning_build_keeps_what_it_used_and_removes_the_rest(warm, tmp_path):
    root, cache, first = warm
    assert first.cards == 3 and not first.rejected and first.cache_misses == 3
    before = _entries(cache)
    # each kind the build used is there: 3 verdicts, the rows' and the sentinels' resamples, 1 flip (the two ranked
    # rows), the board's sentinels, the board's statistics, the board's run pages
    assert len(before["validation"]) == 3 and len(before["flips"]) == 1 and len(before["sentinels"]) == 1
    assert len(before["resamples"]) > first.resample_misses and len(before["boards"]) == 1  # + the sentinels' lines
    assert len(before["boardstats"]) == 1 and len(before["cards"]) == 3  # and each card's header and summary
    cache2 = shutil.copytree(cache, tmp_path / "cache")
    planted = _plant(cache2)
    assert len(planted) == 8  # seven kinds + the temporary file
    again = _build(root, "again", cache2, prune_cache=True)
    assert again.cache_pruned == 8
    assert not any(p.exists() for p in planted)
    assert _entries(cache2) == before  # nothing the build used was removed
    assert (again.cache_hits, again.cache_misses, again.resample_misses, again.flip_misses) == (3, 0, 0, 0)
    assert (again.card_hits, again.card_misses) == (3, 0)
    assert (again.board_hits, again.board_misses) == (1, 0)


@pytest.mark.slow  # 3.1 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_without_pruning_or_for_a_kind_not_looked_up_nothing_is_removed(warm, tmp_path):
    root, cache, _ = warm
    cache2 = shutil.copytree(cache, tmp_path / "cache")
    planted = _plant(cache2)
    kept = _build(root, "kept", cache2)  # prune_cache off: the API's default (a cache shared by several trees)
    assert kept.cache_pruned == 0 and all(p.exists() for p in planted)
    # a build that does not validate reads no verdict and no card entry: both kinds (and the killed write's file) stay
    unvalidated = _build(root, "unvalidated", cache2, prune_cache=True, validate=False)
    assert unvalidated.cache_pruned == 5
    assert [p.relative_to(cache2).parts[0] for p in planted if p.exists()] == ["validation", "cards", "validation"]
    assert [p.name for p in planted if p.exists()] == [f"{KEY}.json", f"{KEY}.json", f".{KEY}.json.x1y2.tmp"]
    assert len(_entries(cache2)["validation"]) == 5 and len(_entries(cache2)["cards"]) == 4


def test_prune_entries_removes_regular_files_only_through_real_folders(tmp_path):
    cache = tmp_path / "cache"
    bucket = cache / "flips" / "ab"
    bucket.mkdir(parents=True)
    keep, drop = "ab" + "1" * 62, "ab" + "2" * 62
    (bucket / f"{keep}.json").write_text("{}")
    (bucket / f"{drop}.json").write_text("{}")
    (bucket / "notes.txt").write_text("not an entry")  # another suffix: left alone
    (bucket / "notes.json").write_text("{}")  # not named by a key: left alone (a --cache aimed at the wrong folder)
    (bucket / "..json").write_text("{}")
    (bucket / ".tmp-x1y2z3").write_text("{")  # a killed write of the sentinel writer before write_entry: removed
    (bucket / f"{'ab' + '3' * 62}.json").mkdir()  # a folder in an entry's place: left alone
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("{}")
    os.symlink(outside / "victim.json", bucket / f"{'ab' + '4' * 62}.json")  # a planted link: not followed
    assert C.prune_entries(cache, "flips", {keep}) == 2
    assert sorted(p.name for p in bucket.iterdir()) == sorted([f"{keep}.json", "notes.txt", "notes.json", "..json",
                                                               f"{'ab' + '3' * 62}.json", f"{'ab' + '4' * 62}.json"])
    assert (outside / "victim.json").exists()
    # a kind folder that is a link (a cache restored from an archive): nothing behind it is touched
    os.symlink(outside, cache / "validation")
    assert C.prune_entries(cache, "validation", set()) == 0 and (outside / "victim.json").exists()
    # a bucket that is a link: skipped
    os.symlink(outside, cache / "flips" / "cd")
    assert C.prune_entries(cache, "flips", set()) == 1 and (outside / "victim.json").exists()
    assert C.prune_entries(tmp_path / "none", "flips", set()) == 0  # no folder: nothing to do, no error


@pytest.mark.slow  # 3.8 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_scored_sentinels_reach_every_cache_folder_and_never_pass_a_folder_link(warm, tmp_path):
    """The sentinels are scored once a process (:func:`mtboard.score.sentinels.sentinels`): a second cache folder
    still gets its entry (this process scored them for the fixture's folder), and a ``sentinels`` folder planted as
    a link to a folder outside the cache is neither written nor read through."""
    root, cache, _ = warm
    fresh = tmp_path / "fresh"
    _build(root, "fresh", fresh, validate=False)
    assert [p.name for p in (fresh / "sentinels").iterdir()] == [p.name for p in (cache / "sentinels").iterdir()]
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(outside, linked / "sentinels")
    again = _build(root, "linked", linked, validate=False, prune_cache=True)
    assert again.cards == 3 and list(outside.iterdir()) == [] and (linked / "sentinels").is_symlink()
    # an entry behind the link is not read; the same bytes in a real folder are
    from mtboard.score import sentinels as S

    entry = next((cache / "sentinels").iterdir())
    shutil.copy(entry, outside / entry.name)
    key = entry.name.removesuffix(".json")
    assert S._read(linked, linked / "sentinels" / entry.name, key) is None
    assert S._read(fresh, fresh / "sentinels" / entry.name, key)


@pytest.mark.slow  # the module's warm build cache: 6.5 CPU-s, 9 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_build_that_made_no_board_leaves_the_saved_cache_alone(warm, tmp_path):
    """A wrong --corpora (every card rejected: no board) or an empty tree looks up no resample, flip, sentinel or
    board: those entries stay. Its verdicts (of the rejected cards) are this build's; the others are pruned."""
    root, cache, _ = warm
    cache2 = shutil.copytree(cache, tmp_path / "cache")
    before = _entries(cache2)
    report = build_site(root / "submissions", tmp_path / "no-corpora", tmp_path / "s", tmp_path / "d", resamples=100,
                        run_mkdocs=False, build_time=STAMP, cache=cache2, prune_cache=True)
    assert report.leaderboards == 0 and len(report.rejected) == 3
    after = _entries(cache2)
    assert {k: v for k, v in after.items() if k != "validation"} == {k: v for k, v in before.items()
                                                                      if k != "validation"}
    assert len(after["validation"]) == 3 and report.cache_pruned == 3  # the verdicts under the old corpora, replaced


def test_an_entry_that_cannot_be_looked_at_is_a_miss_not_an_error(tmp_path, monkeypatch):
    """A restored archive keeps folder modes: an unreadable folder makes ``lstat`` fail with EACCES (Path.is_file
    raises it on Python 3.11). The suite runs as root, which no mode stops, so the refusal is injected."""
    entry = tmp_path / "validation" / "ab" / ("ab" + "0" * 62 + ".json")
    entry.parent.mkdir(parents=True)
    entry.write_text("{}")
    assert C.regular_file(entry) and not C.regular_file(entry.parent) and not C.regular_file(tmp_path / "none")
    real_lstat, real_stat = os.lstat, os.stat

    def refusing(real):
        def call(path, *a, **kw):
            if str(path) == str(entry):
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, *a, **kw)
        return call

    monkeypatch.setattr(os, "lstat", refusing(real_lstat))
    monkeypatch.setattr(os, "stat", refusing(real_stat))
    with pytest.raises(PermissionError):
        entry.is_file()  # what the cache asked before
    assert not C.regular_file(entry)
    assert C.prune_entries(tmp_path, "validation", set()) == 0  # not looked at: not removed, no error
    from mtboard.ledger.cache import ValidationCache

    assert ValidationCache(tmp_path, "env").get("ab" + "0" * 62) is None  # a miss


def test_the_sentinel_key_holds_the_other_corpora_in_their_order():
    """The wrong-language sentinel takes each passage from the first other corpus that has one: the order the
    ledger passes is part of the result, so it is part of the key (review of 272b723: the ledger's code is no longer
    in the salt)."""
    from mtboard.score import sentinels as S

    assert S.cache_key("c" * 64, "development", ["a" * 64, "b" * 64]) != \
        S.cache_key("c" * 64, "development", ["b" * 64, "a" * 64])
