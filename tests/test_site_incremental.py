"""Issue 35 item 3: ``build_site(cache=…)`` re-renders only the pages whose Markdown changed
(:mod:`mtboard.site.incremental`) and validates only the cards that changed (:mod:`mtboard.ledger.cache`) — and the
site it publishes is byte for byte the site of a full build of the same inputs.

Inputs: test_site_cards.py's hand-made cards (``write_fixture_tree``, no invalid files), one of them held back and added
for the second build; a fixed build stamp and ``SOURCE_DATE_EPOCH`` (MkDocs' sitemap dates), so two full builds of the
same inputs are identical (tests/test_site_build.py::test_build_is_deterministic).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from mtboard.site import build_site
from mtboard.site import incremental as I

sys.path.insert(0, str(Path(__file__).parent))
from test_site_cards import write_fixture_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STAMP = "2026-12-01 00:00 UTC"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(root: Path, name: str, cache: Path | None):
    return build_site(root / "submissions", root / "corpora", root / name / "site", root / name / "docs",
                      build_time=STAMP, cache=cache)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental")
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", "1764547200")  # 2025-12-01: the sitemap's dates
    mp.delenv("GITHUB_REPOSITORY", raising=False)
    cards = write_fixture_tree(root, bad=False)
    held = sorted((root / "submissions").rglob("*.json"))
    assert len(held) == len(cards) == 7
    aside = root / "held-back.json"
    shutil.move(held[0], aside)
    cache = root / "cache"
    first = _build(root, "first", cache)  # cold: nothing in the cache
    shutil.move(aside, held[0])
    second = _build(root, "second", cache)  # one card added, warm cache
    full = _build(root, "full", None)  # the same inputs, no cache
    third = _build(root, "third", cache)  # nothing changed
    yield root, first, second, full, third
    mp.undo()


@pytest.mark.slow  # three builds with MkDocs of seven real cards, ~10 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_adding_a_card_validates_it_alone_and_rebuilds_only_changed_pages(tree):
    root, first, second, full, third = tree
    assert (first.cards, second.cards, full.cards) == (6, 7, 7)
    assert (first.cache_hits, first.cache_misses, first.pages_reused) == (0, 6, 0)
    assert (second.cache_hits, second.cache_misses) == (6, 1)
    assert (full.cache_hits, full.cache_misses, full.pages_reused) == (0, 0, 0)
    assert (third.cache_hits, third.cache_misses) == (7, 0)
    manifest = json.loads((root / "cache" / I.MANIFEST).read_text())
    skippable = sorted(manifest["html"])
    assert skippable and all(rel.startswith(("runs/", "compare/", "review")) for rel in skippable), skippable
    run_pages = [rel for rel in skippable if rel.startswith("runs/")]
    assert len(run_pages) == 7
    # the second build reused the run pages of the six unchanged cards (their Markdown did not change) at most;
    # the third build reuses every skippable page
    assert 1 <= second.pages_reused <= len(skippable) - 1
    assert third.pages_reused == len(skippable)


@pytest.mark.slow  # 15.8 CPU-s, 24 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_an_incremental_build_is_byte_identical_to_a_full_build(tree):
    root, *_ = tree
    full, incr, again = _files(root / "full" / "site"), _files(root / "second" / "site"), _files(root / "third" / "site")
    assert sorted(full) == sorted(incr) == sorted(again)
    assert [f for f in full if full[f] != incr[f]] == []
    assert [f for f in full if full[f] != again[f]] == []
    assert "search/search_index.json" in full and "sitemap.xml" in full


@pytest.mark.slow  # the module's two builds with MkDocs of real cards: 11.4 CPU-s, 18 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_search_index_holds_no_skipped_page_and_every_other(tree):
    root, *_ = tree
    index = json.loads((root / "third" / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {d["location"].split("#")[0] for d in index["docs"]}
    manifest = json.loads((root / "cache" / I.MANIFEST).read_text())
    assert len(manifest["html"]) == 13  # 7 run pages, the one review page (issue 35), 5 compare pages: search-excluded
    assert not locations & {out_rel for out_rel, _ in manifest["html"].values()}
    assert {"index.html", "runs/index.html", "methodology.html"} <= locations  # the pages that are searched


@pytest.mark.slow  # three builds with MkDocs of seven real cards, ~10 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_a_removed_card_keeps_the_site_identical_and_a_bad_manifest_means_a_full_build(tree, tmp_path, monkeypatch):
    root, *_ = tree
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    work = tmp_path / "w"
    shutil.copytree(root / "submissions", work / "submissions")
    shutil.copytree(root / "corpora", work / "corpora")
    shutil.copytree(root / "cache", work / "cache")
    gone = sorted((work / "submissions").rglob("*.json"))[-1]
    gone.unlink()
    removed = _build(work, "removed", work / "cache")
    assert removed.cards == 6
    full = _build(work, "full", None)
    assert _files(work / "removed" / "site") == _files(work / "full" / "site")
    again = _build(work, "again", work / "cache")  # the manifest saved by the full build is used again
    assert again.pages_reused > 0
    manifest = work / "cache" / I.MANIFEST
    data = json.loads(manifest.read_text())
    data["pages"] = {k: 1 for k in data["pages"]}  # a foreign manifest: wrong types
    manifest.write_text(json.dumps(data))
    assert _build(work, "foreign", work / "cache").pages_reused == 0
    assert _files(work / "foreign" / "site") == _files(work / "full" / "site")


@pytest.mark.slow  # 3.7 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_cached_page_that_is_a_link_is_not_copied(tree, tmp_path, monkeypatch):
    root, *_ = tree
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    cache = tmp_path / "cache"
    shutil.copytree(root / "cache", cache, symlinks=True)
    manifest = json.loads((cache / I.MANIFEST).read_text())
    rel, (out_rel, _) = sorted(manifest["html"].items())[0]
    secret = tmp_path / "secret.html"
    secret.write_text("SECRET", encoding="utf-8")
    (cache / "site" / out_rel).unlink()
    (cache / "site" / out_rel).symlink_to(secret)
    report = _build(root, "linked", cache)
    assert report.pages_reused == len(manifest["html"]) - 1
    assert (root / "linked" / "site" / out_rel).read_bytes() == (root / "full" / "site" / out_rel).read_bytes()


@pytest.mark.slow  # 3.3 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_cached_page_whose_bytes_changed_is_rebuilt(tree, tmp_path, monkeypatch):
    """The manifest records each cached page's SHA-256: an edited page (or another build's, saved at the same time
    into the same cache) is built again, not published."""
    root, *_ = tree
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    cache = tmp_path / "cache"
    shutil.copytree(root / "cache", cache, symlinks=True)
    manifest = json.loads((cache / I.MANIFEST).read_text())
    edited = [out_rel for out_rel, _ in sorted(manifest["html"].values())[:2]]
    for out_rel in edited:
        (cache / "site" / out_rel).write_text("<p>forged</p>", encoding="utf-8")
    report = _build(root, "edited", cache)
    assert report.pages_reused == len(manifest["html"]) - 2
    assert _files(root / "edited" / "site") == _files(root / "full" / "site")


def test_search_excluded_reads_the_front_matter():
    assert I.search_excluded("---\ntitle: x\nsearch:\n  exclude: true\n---\n# x\n")
    assert not I.search_excluded("---\nsearch:\n  boost: 1.5\n---\n# x\n")
    assert not I.search_excluded("# x\nsearch:\n  exclude: true\n")
    assert I.nav_files([{"Home": "index.md"}, {"Boards": [{"A": "boards/a.md"}, "b.md"]}]) == {
        "index.md", "boards/a.md", "b.md"}


@pytest.mark.slow  # 11.2 CPU-s, 17 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_cli_takes_the_cache_folder_and_off(tree, tmp_path):
    import cli_support

    root, *_ = tree
    cache = tmp_path / "cache"
    shutil.copytree(root / "cache", cache)
    args = ["build", "--submissions", root / "submissions", "--corpora", root / "corpora", "--out", tmp_path / "out",
            "--docs", tmp_path / "docs"]
    stale = cache / "validation" / "ab" / ("ab" + "0" * 62 + ".json")  # a verdict no build of this tree reads
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(next((cache / "validation").rglob("*.json")).read_bytes())
    res = cli_support.invoke([*args, "--cache", cache], cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "validation cache: 7 hit(s), 0 miss(es)" in res.stdout
    # --prune-cache is the default: what the build did not use is removed, and the build says how many
    assert not stale.exists() and re.search(r"^cache: \d+ unused entr(y|ies) removed \(--keep-cache keeps them\)$",
                                            res.stdout, re.M)
    stale.write_bytes(next((cache / "validation").rglob("*.json")).read_bytes())
    res = cli_support.invoke([*args, "--cache", cache, "--keep-cache"], cwd=ROOT)
    assert res.returncode == 0 and stale.exists() and "removed" not in res.stdout
    res = cli_support.invoke(args, env={"MTBOARD_CACHE": "off"}, cwd=ROOT)
    assert res.returncode == 0 and "validation cache" not in res.stdout


@pytest.mark.slow  # 7.5 CPU-s, 11 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_cache_path_that_is_a_file_or_overlaps_the_output(tmp_path):
    """Issue 35 review: a cache path that is a regular file is no cache (the build succeeds and says why), and a cache
    inside (or holding) the output or docs folder is refused before anything is written."""
    from mtboard.core.errors import ConfigError
    from mtboard.site import build_site

    subs = tmp_path / "submissions"
    subs.mkdir()
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a folder\n")
    card = next((ROOT / "submissions" / "mtb-en-ca-dev").glob("apertium-*__default__*[0-9a-f].json"))
    (subs / "mtb-en-ca-dev").mkdir()
    shutil.copy(card, subs / "mtb-en-ca-dev" / card.name)
    report = build_site(subs, ROOT / "corpora", tmp_path / "out", tmp_path / "docs", cache=blocker)
    assert (report.cards, report.cache_hits, report.cache_misses) == (1, 0, 1) and not report.rejected
    assert report.full_build_reason == "no usable manifest" and blocker.read_text() == "not a folder\n"
    for cache in (tmp_path / "out2", tmp_path / "out2" / "cache", tmp_path):
        with pytest.raises(ConfigError, match="overlaps the output folder"):
            build_site(subs, ROOT / "corpora", tmp_path / "out2", tmp_path / "docs2", run_mkdocs=False, cache=cache)
    assert not (tmp_path / "out2").exists()
