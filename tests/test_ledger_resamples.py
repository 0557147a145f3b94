"""Issue 35 item 3 (helper "compute"): the leaderboard's bootstrap resamples computed once per row-view and cached by
content in the build cache (:class:`mtboard.ledger.cache.ResampleCache`).

* the row-view arrays equal, bit for bit, what the board computed before the change (chrF++ resamples of run 0,
  the composite resamples of :func:`mtboard.ledger.tables._composite_boot`, the compare page's ``_runs_boot``) on the
  committed EN→ES cards;
* a cached build is identical to an uncached one, cold or warm (ledger document, pairs files, every docs file);
* an entry that is corrupt, truncated, foreign (another key), not a regular file or a link is a miss: recomputed and
  replaced, never an error (docs/SECURITY.md §6);
* ``percentile_interval`` on ``np.sort`` picks the same floats as Python's ``sorted``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from mtboard.ledger import cache as C
from mtboard.ledger import document, tables
from mtboard.ledger.build import build_ledger
from mtboard.ledger.load import load_inputs
from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.site import compare

ROOT = Path(__file__).resolve().parents[1]
DATASET = "mtb-en-es-dev"
COMMIT = "0" * 40


@pytest.fixture(scope="module")
def es_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("resamples")
    subs = root / "submissions" / DATASET
    subs.mkdir(parents=True)
    for p in sorted((ROOT / "submissions" / DATASET).glob("*.json")):
        if not p.name.endswith(".verification.json"):
            shutil.copy(p, subs / p.name)
    corpora = root / "corpora"
    corpora.mkdir()
    shutil.copy(ROOT / "corpora" / f"{DATASET}.json", corpora)
    return load_inputs(root / "submissions", corpora, validate=False), root


def _published(led) -> dict[str, str]:
    out = {"ledger.json": document.to_document(led, "2026-12-01T00:00:00Z", COMMIT).model_dump_json()}
    for lb in led.boards:
        bc = compare.board_compare(lb)
        if bc is not None:
            out.update({k: compare.dumps(v) for k, v in compare.pairs_files(bc, compare.static_pairs(bc, {})).items()})
    return out


@pytest.mark.slow  # 4.4 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_row_view_resamples_are_the_arrays_computed_before(es_tree):
    inputs, _ = es_tree
    led = build_ledger(inputs)
    lb = next(b for b in led.boards if b.dataset_id == DATASET)
    assert len(lb.views) >= 2 and len(lb.views[0].rows) >= 4
    checked = 0
    for view in lb.views:
        ids = lb.ranked_ids if view.domain is None else \
            [i for i in lb.ranked_ids if next(r for r in view.rows[0].lc.card.results if r.entry_id == i).domain
             is not None and next(r for r in view.rows[0].lc.card.results
                                  if r.entry_id == i).domain.value == view.domain]
        assert len(ids) == view.n_entries
        counts = bootstrap.resample_counts(len(ids), bootstrap.BOOTSTRAP_RESAMPLES,
                                           stats.view_seed(lb.dataset_id, lb.version, lb.sha256, view.domain or "*"))
        for row in view.rows:
            by_id = {r.entry_id: r for r in row.lc.card.results}
            old_chrf = bootstrap.chrf_resamples([by_id[i].stats.chrf for i in ids], counts)
            old_comp = tables._composite_boot(row.lc.card, ids, counts)  # chrF++ resampled inside, again
            assert row.chrf_boot.tobytes() == old_chrf.tobytes()
            assert row.boot.tobytes() == old_comp.tobytes()
            assert row.chrf_mean_boot.tobytes() == compare._runs_boot(row.lc.card, ids, counts).tobytes()
            checked += 1
    assert checked == sum(len(v.rows) for v in lb.views)


@pytest.mark.slow  # 4.2 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_cached_ledger_is_identical_cold_and_warm_and_reads_every_resample(es_tree, tmp_path):
    inputs, _ = es_tree
    plain = build_ledger(inputs)
    assert (plain.resample_hits, plain.resample_misses) == (0, 0)
    cache = tmp_path / "cache"
    cold = build_ledger(inputs, cache=cache)
    entries = sorted(cache.glob("resamples/*/*.f64"))
    lookups = sum(1 + len(r.lc.card.replicate_runs) for lb in cold.boards for v in lb.views for r in v.rows)
    distinct = {(lb.key, v.domain, r.chrf_boot.tobytes()) for lb in cold.boards for v in lb.views for r in v.rows}
    # one entry per distinct (statistics, view); cards with identical statistics share it even in a cold build
    assert cold.resample_misses == len(distinct) < lookups
    assert cold.resample_hits + cold.resample_misses == lookups
    # and the sentinel lines' (counted apart from the rows'): at most one more entry per line; the copy-source line
    # shares the echo baseline's entry (the same statistics on the same view)
    lines = sum(len(v.sentinels) for lb in cold.boards for v in lb.views)
    assert lines > 0 and len(distinct) < len(entries) < len(distinct) + lines
    header = len(f"{C.RESAMPLE_FORMAT}\n{'0' * 64}\n1000\n{'0' * 64}\n")
    assert {p.stat().st_size for p in entries} == {header + 8 * 1000}  # 8,167 bytes: the float64s and one header
    warm = build_ledger(inputs, cache=cache)
    # every board's statistics read whole (mtboard.ledger.boardstats): no row-view resample is looked up
    assert (cold.board_stats_hits, cold.board_stats_misses) == (0, len(cold.boards))
    assert (warm.board_stats_hits, warm.board_stats_misses) == (len(cold.boards), 0)
    assert (warm.resample_hits, warm.resample_misses) == (0, 0)
    shutil.rmtree(cache / "boardstats")
    rows = build_ledger(inputs, cache=cache)  # the statistics gone: every resample read, none computed
    assert (rows.resample_hits, rows.resample_misses) == (lookups, 0)
    assert (rows.board_stats_hits, rows.board_stats_misses) == (0, len(cold.boards))
    # the flip distances of adjacent ranked rows (issue 35: the largest compute cost of a warm rebuild)
    pairs = sum(max(0, len([m for m in v.methods if not m.reference and m.position]) - 1)
                for lb in cold.boards for v in lb.views)
    assert pairs == 8 and (plain.flip_hits, plain.flip_misses) == (0, 0)  # 2 ranked rows, 8 views
    assert cold.flip_hits + cold.flip_misses == pairs and cold.flip_misses == len(list(cache.glob("flips/*/*.json")))
    assert (warm.flip_hits, warm.flip_misses) == (pairs, 0)
    assert sorted(cache.glob("resamples/*/*.f64")) == entries  # the warm build stored nothing new
    assert _published(plain) == _published(cold) == _published(warm) == _published(rows)
    for a, b in zip([ln for lb in plain.boards for v in lb.views for ln in v.sentinels],
                    [ln for lb in warm.boards for v in lb.views for ln in v.sentinels], strict=True):
        assert (a.name, a.boot.tobytes(), a.composite_ci) == (b.name, b.boot.tobytes(), b.composite_ci)


@pytest.mark.slow  # ~5 CPU-s (five ledgers of the committed EN→ES board)
def test_a_warm_flip_lookup_makes_no_row_and_a_changed_card_file_misses(es_tree, tmp_path, monkeypatch):
    """Issue 35, "add one card": a card read from a file is named in a flip key by its bytes' SHA-256 (with what
    parses them), so a warm build makes no FlipRow at all; another file (another SHA-256) is another key, for every
    pair that card is in; a card not read from a file, or whose ``card`` was replaced since, is named by its row's
    arrays."""
    from mtboard.ledger import flip as F

    inputs, _ = es_tree
    cache = tmp_path / "cache"
    cold = build_ledger(inputs, cache=cache)
    (board,) = cold.boards  # one board, 8 views, 2 ranked rows a view: 8 adjacent pairs, each holding both cards
    shown = sorted({m.rep.lc.card.run_id for v in board.views for m in v.methods if not m.reference and m.position})
    assert len(shown) == 2 and (cold.flip_hits + cold.flip_misses) == 8
    made: list[str] = []
    of_card = F.FlipRow.of_card

    def counted(card, ids):
        made.append(card.run_id)
        return of_card(card, ids)

    monkeypatch.setattr(F.FlipRow, "of_card", counted)
    warm = build_ledger(inputs, cache=cache)
    assert (warm.flip_hits, warm.flip_misses, made) == (8, 0, [])
    assert _published(cold) == _published(warm)

    def copied(lc, **changes):
        out = dataclasses.replace(lc, **changes)
        out.read = out.card  # as load_inputs records it: the card parsed from the file of out.sha256
        return out

    # the first ranked row's card, read from another file: every pair holds it, so every pair misses
    top = board.views[0].methods[0].rep.lc
    assert len(top.file_sha256) == 64
    changed = dataclasses.replace(inputs, cards=[copied(lc, sha256="f" * 64) if lc is top else copied(lc)
                                                 for lc in inputs.cards])
    again = build_ledger(changed, cache=cache)
    assert (again.flip_hits, again.flip_misses) == (0, 8) and sorted(made) == shown  # each row made once
    assert _published(again) == _published(cold)
    # named by their arrays: a card not read from a file misses (keys the cold build did not store), then a copy
    # whose ``read`` was not carried over finds what it stored
    for unread, found in (([dataclasses.replace(lc, sha256="") for lc in inputs.cards], (0, 8)),
                          ([dataclasses.replace(lc) for lc in inputs.cards], (8, 0))):
        made.clear()
        plain = build_ledger(dataclasses.replace(inputs, cards=unread), cache=cache)
        assert (plain.flip_hits, plain.flip_misses) == found
        assert sorted(made) == shown and _published(plain) == _published(cold)


def _one_entry(tmp_path: Path):
    mat = np.arange(5 * 24, dtype=np.int64).reshape(5, 24) % 7 + 1
    counts = bootstrap.resample_counts(5, 40, 123)
    rc = C.ResampleCache(tmp_path / "cache")
    first = rc.chrf(mat, 40, 123, lambda: counts)
    (path,) = (tmp_path / "cache").glob("resamples/*/*.f64")
    return mat, counts, first, path


def test_an_entry_holds_the_exact_floats_under_its_key(tmp_path):
    mat, counts, first, path = _one_entry(tmp_path)
    assert first.tobytes() == bootstrap.chrf_resamples(mat, counts).tobytes()
    rc = C.ResampleCache(tmp_path / "cache")
    key = rc.key(mat, 5, 40, 123)
    assert path.name == f"{key}.f64" and path.parent.name == key[:2]
    again = rc.chrf(mat, 40, 123, lambda: pytest.fail("a hit draws nothing"))
    assert (rc.hits, rc.misses) == (1, 0) and again.tobytes() == first.tobytes() and again.dtype == np.float64
    assert path.read_bytes().endswith(first.astype("<f8").tobytes())
    # another statistic, seed or resample count is another key
    other = mat.copy()
    other[0, 0] += 1
    assert len({key, rc.key(other, 5, 40, 123), rc.key(mat, 5, 40, 124), rc.key(mat, 5, 41, 123)}) == 4


@pytest.mark.parametrize("poison", ["flip", "truncate", "append", "foreign", "directory", "fifo"])
def test_a_corrupt_or_foreign_entry_is_recomputed_and_replaced(tmp_path, poison):
    mat, counts, first, path = _one_entry(tmp_path)
    raw = path.read_bytes()
    if poison == "flip":  # one bit of one float: the payload digest no longer matches
        path.write_bytes(raw[:-3] + bytes([raw[-3] ^ 1]) + raw[-2:])
    elif poison == "truncate":
        path.write_bytes(raw[:-8])
    elif poison == "append":
        path.write_bytes(raw + b"\0" * 8)
    elif poison == "foreign":  # a well-formed entry of another key, filed under this one
        rc = C.ResampleCache(tmp_path / "other")
        rc.chrf(mat, 40, 124, lambda: bootstrap.resample_counts(5, 40, 124))
        (src,) = (tmp_path / "other").glob("resamples/*/*.f64")
        shutil.copy(src, path)
    elif poison == "directory":
        path.unlink()
        path.mkdir()
    else:
        path.unlink()
        os.mkfifo(path)
    rc = C.ResampleCache(tmp_path / "cache")
    got = rc.chrf(mat, 40, 123, lambda: counts)
    assert (rc.hits, rc.misses) == (0, 1) and got.tobytes() == first.tobytes()
    # every poisoned entry is rewritten, a folder planted in its place included (issue 35 review), then read back
    assert path.is_file() and path.read_bytes() == raw
    again = C.ResampleCache(tmp_path / "cache")
    assert again.chrf(mat, 40, 123, lambda: counts).tobytes() == first.tobytes() and again.hits == 1


def test_a_linked_entry_is_not_followed(tmp_path):
    mat, counts, first, path = _one_entry(tmp_path)
    target = tmp_path / "elsewhere.f64"
    shutil.move(path, target)
    path.symlink_to(target)
    rc = C.ResampleCache(tmp_path / "cache")
    assert rc.chrf(mat, 40, 123, lambda: counts).tobytes() == first.tobytes()
    assert (rc.hits, rc.misses) == (0, 1)
    assert not path.is_symlink() and path.is_file()  # the link itself replaced, never written through
    assert target.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("linked", ["resamples", "bucket"])
def test_a_linked_folder_in_the_cache_is_neither_read_nor_written_through(tmp_path, linked):
    """A cache restored from an archive may hold a directory link (``resamples/`` or a ``KK/`` bucket): nothing is
    read through it and nothing is written where it points (issue 35 review)."""
    mat, counts, first, path = _one_entry(tmp_path)
    folder = tmp_path / "cache" / "resamples" if linked == "resamples" else path.parent
    elsewhere = tmp_path / "elsewhere"
    shutil.move(folder, elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.rglob("*"))
    rc = C.ResampleCache(tmp_path / "cache")
    assert rc.chrf(mat, 40, 123, lambda: counts).tobytes() == first.tobytes()
    assert (rc.hits, rc.misses) == (0, 1)  # the stored entry behind the link is not trusted
    other = mat + 1
    rc.chrf(other, 40, 123, lambda: counts)
    assert sorted(p.name for p in elsewhere.rglob("*")) == before  # nothing written through the link


def test_no_folder_keeps_nothing(tmp_path):
    mat = np.ones((3, 24), dtype=np.int64)
    rc = C.ResampleCache(None)
    counts = bootstrap.resample_counts(3, 10, 1)
    assert rc.chrf(mat, 10, 1, lambda: counts).tobytes() == bootstrap.chrf_resamples(mat, counts).tobytes()
    assert (rc.hits, rc.misses) == (0, 1)


def test_the_composite_takes_the_chrf_resamples_it_is_given(es_tree):
    inputs, _ = es_tree
    card = next(lc.card for lc in inputs.cards if not lc.card.replicate_runs)
    ids = [r.entry_id for r in card.results]
    counts = bootstrap.resample_counts(len(ids), 200, 7)
    sub = card.results
    from mtboard.score.metrics.composite import entry_columns
    cols = entry_columns(sub, has_equiv=card.scores.equivalent_match_rate is not None,
                         has_fst=card.scores.fst_acceptance_rate is not None)
    st = [r.stats.chrf for r in sub]
    chrf = bootstrap.chrf_resamples(st, counts)
    assert bootstrap.composite_resamples(st, cols, counts, chrf=chrf).tobytes() == \
        bootstrap.composite_resamples(st, cols, counts).tobytes()
    # the given array is what the composite uses: zeros there move every resample's composite down
    assert np.all(bootstrap.composite_resamples(st, cols, counts, chrf=np.zeros(200))
                  < bootstrap.composite_resamples(st, cols, counts))


def test_percentile_interval_picks_what_sorted_picks():
    assert bootstrap.percentile_interval([]) is None
    assert bootstrap.percentile_interval(list(range(999, -1, -1))) == (25.0, 974.0)  # sacrebleu's indices
    rng = np.random.default_rng(5)
    for size in (1, 39, 40, 41, 1000, 1001):
        x = np.round(rng.normal(size=size), 2)  # many ties
        s = sorted(float(v) for v in x)
        lo = size // 40
        got = bootstrap.percentile_interval(x)
        assert got == (s[lo], s[size - lo - 1]) and all(type(v) is float for v in got)


def _cols_equal(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(np.asarray(a[k], dtype=np.float64).tobytes()
                                      == np.asarray(b[k], dtype=np.float64).tobytes() for k in a)


@pytest.mark.parametrize("semantic", ["all", "some", "none"])
def test_sliced_entry_columns_equal_entry_columns_of_the_subset(es_tree, semantic):
    from mtboard.score.metrics.composite import entry_columns
    inputs, _ = es_tree
    card = next(lc.card for lc in inputs.cards if lc.card.scores.fst_acceptance_rate is not None
                and not lc.card.replicate_runs)
    results = []
    for k, r in enumerate(card.results):  # glossary terms on every third entry; semantic scores as parametrised
        upd = {"glossary_terms": 2 if k % 3 == 0 else None, "glossary_hits": 1 if k % 3 == 0 else None}
        if semantic == "none" or (semantic == "some" and k % 2):
            upd["semantic_score"] = None
        elif r.semantic_score is None:
            upd["semantic_score"] = 0.5 + k / 1000
        results.append(r.model_copy(update=upd))
    card = card.model_copy(update={"results": results})
    idx = tables._Indexed.of(card)
    assert (idx.columns[0] is None) == (semantic == "some")
    ids = [r.entry_id for r in results]
    subsets = {"all": ids, "with terms": ids[::3], "without terms": [i for k, i in enumerate(ids) if k % 3],
               "even": ids[::2], "reversed": ids[::-1], "none": []}
    for name, sub_ids in subsets.items():
        by_id = {r.entry_id: r for r in results}
        want = entry_columns([by_id[i] for i in sub_ids], has_equiv=False, has_fst=True)
        got = idx.entry_columns(0, sub_ids)
        assert _cols_equal(got, want), name
        assert ("terminology_adherence" in got) == (name not in ("without terms", "none")), name
        assert ("semantic_score" in got) == (name != "none" and (semantic == "all" or (semantic == "some"
                                                                          and name == "even"))), name


# --------------------------------------------------------------------------------------------------------------------
# flip distances (issue 35: C.FlipCache)


def _flip_pair(es_tree):
    """The EN→ES board's first adjacent ranked pair of its main view: (whole ids, view ids, upper row, lower row)."""
    from mtboard.ledger.build import build_ledger as _bl
    from mtboard.score.flip import FlipRow

    inputs, _ = es_tree
    lb = _bl(inputs).boards[0]
    view = lb.views[0]
    real = [m for m in view.methods if not m.reference and m.position]
    rows = [FlipRow.of_card(m.rep.lc.card, view.ids) for m in real[:2]]
    return view.ids, rows[0], rows[1], real[0].flip


def test_a_cached_flip_is_the_searched_one(es_tree, tmp_path):
    """A stored entry holds exactly :func:`flip_greedy`'s count and entry ids under its key; the ledger's flip of the
    pair is that value (no cache)."""
    from mtboard.score.flip import flip_greedy

    ids, upper, lower, shown = _flip_pair(es_tree)
    f = flip_greedy(upper, lower, ids)
    assert (shown.count, shown.entries) == (f.count, tuple(sorted(f.entries)))
    fc = C.FlipCache(tmp_path / "cache")
    vkey = fc.view_key(ids, ids)
    key = fc.key(vkey, C.flip_row_digest(upper), C.flip_row_digest(lower))
    assert fc.key(vkey, C.flip_row_digest(lower), C.flip_row_digest(upper)) != key  # order matters
    assert fc.key(fc.view_key(ids, ids[::-1]), C.flip_row_digest(upper), C.flip_row_digest(lower)) != key  # id order
    ids = frozenset(ids)
    assert fc.get(key, ids) is None and (fc.hits, fc.misses) == (0, 1)
    fc.put(key, f.count, tuple(sorted(f.entries)))
    (path,) = (tmp_path / "cache").glob("flips/*/*.json")
    assert path == tmp_path / "cache" / "flips" / key[:2] / f"{key}.json"
    assert json.loads(path.read_text()) == {"format": C.FLIP_FORMAT, "key": key, "count": f.count,
                                            "entries": sorted(f.entries)}
    assert fc.get(key, ids) == (f.count, tuple(sorted(f.entries))) and (fc.hits, fc.misses) == (1, 1)
    assert C.FlipCache(None).get(key, ids) is None  # no folder: nothing kept


@pytest.mark.parametrize("poison", ["count-too-big", "count-mismatch", "foreign-id", "unsorted", "other-key",
                                    "format", "extra-field", "bool-count", "not-json", "directory", "link"])
def test_a_corrupt_or_foreign_flip_entry_is_a_miss(tmp_path, poison):
    """Nothing in a restored cache is trusted: each poisoned entry is a miss (then recomputed and replaced by the
    build), never an error and never a value the search would not give."""
    ids = [3, 5, 8, 13, 21]
    fc = C.FlipCache(tmp_path / "cache")
    key = fc.key(fc.view_key(ids, ids), "a" * 64, "b" * 64)
    ids = frozenset(ids)
    fc.put(key, 2, (5, 13))
    path = fc._path(key)
    assert fc.get(key, ids) == (2, (5, 13))
    doc = {"format": C.FLIP_FORMAT, "key": key, "count": 2, "entries": [5, 13]}
    changes = {"count-too-big": {"count": 5, "entries": [3, 5, 8, 13, 21]}, "count-mismatch": {"count": 1},
               "foreign-id": {"entries": [5, 14]}, "unsorted": {"entries": [13, 5]}, "other-key": {"key": "0" * 64},
               "format": {"format": "mtboard-flip-cache/0"}, "extra-field": {"extra": 1}, "bool-count": {"count": True,
                                                                                                       "entries": [5]}}
    if poison in changes:
        path.write_text(json.dumps({**doc, **changes[poison]}))
    elif poison == "not-json":
        path.write_text("{\"format\": ")
    elif poison == "directory":
        path.unlink()
        path.mkdir()
    else:
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps(doc))
        path.unlink()
        os.symlink(target, path)
    assert fc.get(key, ids) is None
    fc.put(key, 2, (5, 13))  # what the build does on a miss: the entry is replaced
    assert fc.get(key, ids) == (2, (5, 13)) and not path.is_symlink()


def test_an_unreadable_flip_entry_is_a_miss(tmp_path, monkeypatch):
    """Reviewer's finding: an entry the build cannot read (permissions, a folder that cannot be searched) is a miss,
    as for the verdict and resample caches, never an error."""
    ids = [1, 2, 3]
    fc = C.FlipCache(tmp_path / "cache")
    key = fc.key(fc.view_key(ids, ids), "a" * 64, "b" * 64)
    ids = frozenset(ids)
    fc.put(key, 1, (2,))
    assert fc.get(key, ids) == (1, (2,))

    def denied(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(C.safejson, "load_file", denied)
    assert fc.get(key, ids) is None and (fc.hits, fc.misses) == (1, 1)


def test_the_flip_key_follows_the_ledgers_flip_module(tmp_path, monkeypatch):
    """Reviewer's finding: which search ``mtboard/ledger/flip.py`` calls, with which arguments, and what it stores are
    part of every flip key, as the scoring code is: an edit there is another key (old entries are never served)."""
    from mtboard.ledger import flip as LF

    C._flip_environment.cache_clear()
    before = C._flip_environment()
    folder = tmp_path / "ledger"
    folder.mkdir()
    (folder / "flip.py").write_bytes(Path(LF.__file__).read_bytes() + b"\n# max_steps=5\n")
    monkeypatch.setattr(C, "__file__", str(folder / "cache.py"))  # the module finds flip.py beside itself
    C._flip_environment.cache_clear()
    try:
        assert C._flip_environment() != before
    finally:
        monkeypatch.undo()
        C._flip_environment.cache_clear()
    assert C._flip_environment() == before
