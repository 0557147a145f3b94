"""Issue 31 items 4 and 6: what changed between two ledgers (:mod:`mtboard.ledger.diff`) and the dated snapshots
(:mod:`mtboard.ledger.history`), on small hand-made inputs — fast enough for ``scripts/mutation.py ledger-diff``.

Rows and ledgers handed to the diff are stand-ins (``SimpleNamespace``) holding only the attributes the diff reads
(fingerprint, method, tier and its label, representative, members with card/page/timestamp, coverage.subset, ranked,
reference, ranks[0].rank); the files read back are minimal real ledgers (no boards) that the strict schema accepts;
git_dates runs real ``git`` on a throw-away repository with fixed commit dates. tests/test_ledger.py runs the same
code through whole builds (~2 min). Every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from mtboard.core import safejson
from mtboard.core.errors import InputError
from mtboard.ledger import diff as D
from mtboard.ledger import history as H


def _member(card, ts="2026-01-01T00:00:00Z", page=None):
    return NS(card=card, timestamp=ts, page=page or f"runs/{card}.html")


def _row(fp="f1", *, members=("a.json",), ts=None, rank=None, ranked=True, reference=False, subset=False,
         tier="self-benchmarked", label="self-benchmarked", rep=None, method="m"):
    ms = [_member(c, ts[i] if ts else "2026-01-01T00:00:00Z") for i, c in enumerate(members)]
    return NS(fingerprint=fp, method=method, tier=tier, tier_label=label, representative=rep or members[0],
              members=ms, coverage=NS(subset=subset), ranked=ranked, reference=reference,
              ranks=[NS(rank=rank)] if rank else [])


def _ledger(boards, build="b1", built_at="2026-01-01T00:00:00Z"):
    return NS(build=build, built_at=built_at, boards=[NS(key=k, rows=rows) for k, rows in boards.items()])


# --------------------------------------------------------------------------------------------------------------------
# LedgerDiff.lines


def test_lines_show_before_and_after_the_subset_mark_and_the_day():
    def c(kind, before, after, subset=False):
        return D.Change(kind, "bd", "fp", "meth", subset, before, after, "2026-03-04T05:06:07Z", "git", "x.json")

    diff = D.LedgerDiff(None, None, "b", [c("rank change", "2", "1"), c("new row", "", "3", True),
                                          c("row withdrawn", "4", ""), c("x", "", "")])
    assert diff.lines() == ["rank change: bd · meth: 2 → 1 (2026-03-04)", "new row: bd · meth (subset): 3 (2026-03-04)",
                            "row withdrawn: bd · meth: 4 (2026-03-04)", "x: bd · meth:  (2026-03-04)"]


# --------------------------------------------------------------------------------------------------------------------
# load_previous


MINIMAL = {"schema": "mtboard.ledger/1", "build": "0123456789ab", "built_at": "2026-12-01T10:00:00Z",
           "commit": None, "boards": []}


def _write(path: Path, **changes) -> Path:
    path.write_text(json.dumps({**MINIMAL, **changes}), encoding="utf-8")
    return path


def test_load_previous_reads_a_published_ledger(tmp_path):
    doc = D.load_previous(_write(tmp_path / "l.json"))
    assert (doc.build, doc.built_at, doc.commit, doc.boards) == ("0123456789ab", "2026-12-01T10:00:00Z", None, [])


def test_load_previous_reads_at_most_256_mib(tmp_path, monkeypatch):
    seen = []
    real_read, real_loads = safejson.read_bytes, safejson.loads
    monkeypatch.setattr(safejson, "read_bytes", lambda p, **kw: (seen.append(("read", kw)), real_read(p, **kw))[1])
    monkeypatch.setattr(safejson, "loads", lambda raw, **kw: (seen.append(("loads", kw)), real_loads(raw, **kw))[1])
    path = _write(tmp_path / "l.json")
    D.load_previous(path)
    assert seen == [("read", {"max_bytes": 268435456}), ("loads", {"where": str(path), "max_bytes": 268435456})]


def test_load_previous_names_the_file_the_option_and_the_problem(tmp_path):
    path = tmp_path / "l.json"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(InputError) as e:
        D.load_previous(path, "--snapshots")
    err = e.value
    assert (err.where, err.field) == (str(path), "--snapshots")
    assert err.problem.startswith("not a published ledger: ") and str(path) not in err.problem  # where is not repeated
    assert err.fix == ("pass a data/ledger.json that mtboard build published (its shape: mtboard schema ledger)")
    with pytest.raises(InputError) as e:
        D.load_previous(_write(path, build="XYZ"))
    # a schema error names its field: "not a published ledger: $.build: <pydantic's message>"
    assert e.value.problem == "not a published ledger: $.build: String should match pattern '^[0-9a-f]{12}$'"
    assert e.value.field == "--previous"  # and no "(fix: …)" of the schema error inside the problem
    with pytest.raises(InputError) as e:
        D.load_previous(tmp_path / "missing.json")
    assert e.value.problem.startswith("not a published ledger: ") and e.value.where == str(tmp_path / "missing.json")


def test_load_previous_keeps_the_whole_line_of_an_error_about_another_place(tmp_path, monkeypatch):
    from mtboard.core import documents

    def fail(model, raw, where):
        raise InputError("bad thing", where="elsewhere", field="f")

    monkeypatch.setattr(documents, "validate_model", fail)
    with pytest.raises(InputError) as e:
        D.load_previous(_write(tmp_path / "l.json"))
    assert e.value.problem == "not a published ledger: f: elsewhere: f: bad thing"

    def fail_here(model, raw, where):
        raise InputError("bad thing", where=where)

    monkeypatch.setattr(documents, "validate_model", fail_here)
    with pytest.raises(InputError) as e:
        D.load_previous(_write(tmp_path / "l.json"))
    assert e.value.problem == "not a published ledger: bad thing"  # no field, and the path is not repeated


# --------------------------------------------------------------------------------------------------------------------
# git_dates


def _git(root: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    if date:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = date
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_git_dates_give_the_latest_addition_of_each_card(tmp_path):
    root = tmp_path / "repo"
    subs = root / "submissions"
    (subs / "ds").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (subs / "ds" / "a.json").write_text("1", encoding="utf-8")
    (root / "other.json").write_text("1", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one", date="2026-01-01T10:00:00+00:00")
    (subs / "ds" / "b.json").write_text("1", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two", date="2026-02-01T10:00:00+00:00")
    (subs / "ds" / "a.json").unlink()
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "gone", date="2026-03-01T10:00:00+00:00")
    (subs / "ds" / "a.json").write_text("2", encoding="utf-8")
    (subs / "ds" / "b.json").write_text("2", encoding="utf-8")  # a change, not an addition
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "back", date="2026-04-01T10:00:00+00:00")
    # a.json added on 01-01 and again on 04-01 (the newest addition wins); b.json added on 02-01 only;
    # other.json is outside submissions/; paths are relative to submissions/
    # (%cI: strict ISO 8601 with the committer's offset)
    assert D.git_dates(root, subs) == {"ds/a.json": "2026-04-01T10:00:00+00:00", "ds/b.json": "2026-02-01T10:00:00+00:00"}


def test_git_dates_are_empty_outside_a_checkout_or_the_root(tmp_path):
    (tmp_path / "submissions").mkdir()
    assert D.git_dates(tmp_path, tmp_path / "submissions") == {}  # not a git repository: git fails
    assert D.git_dates(tmp_path / "submissions", tmp_path) == {}  # submissions outside the root: ValueError


def test_git_dates_runs_the_documented_git_log(tmp_path, monkeypatch):
    calls = []
    out = "@2026-02-01T00:00:00Z\nsubs/x.json\n\n   \n@2026-01-01T00:00:00Z\nsubs/x.json\nsubs/y.json\n"
    monkeypatch.setattr(D.subprocess, "run", lambda cmd, **kw: (calls.append((cmd, kw)),
                                                                NS(returncode=0, stdout=out))[1])
    (tmp_path / "subs").mkdir()
    assert D.git_dates(tmp_path, tmp_path / "subs") == {"x.json": "2026-02-01T00:00:00Z",
                                                        "y.json": "2026-01-01T00:00:00Z"}
    assert calls == [(["git", "-C", str(tmp_path), "log", "--first-parent", "--diff-filter=A", "--name-only",
                       "--format=@%cI", "--", "subs"],
                      {"capture_output": True, "text": True, "timeout": 60, "check": False})]
    monkeypatch.setattr(D.subprocess, "run", lambda cmd, **kw: NS(returncode=1, stdout=out))
    assert D.git_dates(tmp_path, tmp_path / "subs") == {}
    # a name before any date line is not dated
    monkeypatch.setattr(D.subprocess, "run", lambda cmd, **kw: NS(returncode=0, stdout="subs/z.json\n@D\nsubs/w.json"))
    assert D.git_dates(tmp_path, tmp_path / "subs") == {"w.json": "D"}

    def boom(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, 60)

    monkeypatch.setattr(D.subprocess, "run", boom)
    assert D.git_dates(tmp_path, tmp_path / "subs") == {}

    def missing(cmd, **kw):
        raise FileNotFoundError("git")

    monkeypatch.setattr(D.subprocess, "run", missing)
    assert D.git_dates(tmp_path, tmp_path / "subs") == {}


# --------------------------------------------------------------------------------------------------------------------
# rows


def test_rank_date_and_page_of_a_row():
    assert D._rank(_row(rank="2")) == "2"
    assert D._rank(_row(rank="2", ranked=False)) == ""
    assert D._rank(_row(rank=None)) == ""
    row = _row(members=("a.json", "b.json"), ts=("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"))
    assert D._date("b.json", row, {"b.json": "2026-05-05T00:00:00Z"}) == ("2026-05-05T00:00:00Z", "git")
    assert D._date("b.json", row, {"a.json": "x"}) == ("2026-02-01T00:00:00Z", "run")
    assert D._date("c.json", row, {}) == ("", "run")
    assert D._page(row, "b.json") == "runs/b.json.html" and D._page(row, "c.json") is None


def test_a_new_row_is_dated_by_its_earliest_member_and_shows_its_rank():
    new = _row(members=("a.json", "b.json", "c.json"),
               ts=("2026-03-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"), rank="3")
    # git dates win over run timestamps: c.json entered the repository first (2025-12-01)
    dates = {"a.json": "2026-04-01T00:00:00Z", "c.json": "2025-12-01T00:00:00Z"}
    (ch,) = D._row_changes("bd", None, new, dates)
    assert ch == D.Change("new row", "bd", "f1", "m", False, "", "3", "2025-12-01T00:00:00Z", "git", "c.json",
                          "runs/c.json.html")
    (ch,) = D._row_changes("bd", None, new, {})  # by run timestamp: b.json (01-01)
    assert (ch.card, ch.date, ch.date_source) == ("b.json", "2026-01-01T00:00:00Z", "run")
    assert D._row_changes("bd", None, _row(ranked=False, reference=True), {})[0].after == "ref."
    assert D._row_changes("bd", None, _row(ranked=False), {})[0].after == "unranked"
    # a ranked row without a whole-segment rank is still "unranked"; a reference row's own rank wins over "ref."
    assert D._row_changes("bd", None, _row(rank=None), {})[0].after == "unranked"
    assert D._row_changes("bd", None, _row(rank="1", reference=True), {})[0].after == "1"


def test_subset_rows_are_subset_runs_and_rows_neither_ranked_nor_reference():
    assert D._row_changes("bd", None, _row(subset=True), {})[0].subset is True
    assert D._row_changes("bd", None, _row(ranked=False), {})[0].subset is True
    assert D._row_changes("bd", None, _row(ranked=False, reference=True), {})[0].subset is False
    assert D._row_changes("bd", None, _row(), {})[0].subset is False
    # a withdrawn row is judged by its old self
    assert D._row_changes("bd", _row(subset=True), None, {})[0].subset is True


def test_a_withdrawn_row_names_its_representative_and_has_no_page():
    old = _row(members=("a.json", "b.json"), rep="b.json", rank="4",
               ts=("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"))
    assert D._row_changes("bd", old, None, {}) == [
        D.Change("row withdrawn", "bd", "f1", "m", False, "4", "", "2026-02-01T00:00:00Z", "run", "b.json", None)]
    assert D._row_changes("bd", _row(ranked=False), None, {})[0].before == "unranked"


def test_rank_tier_and_member_changes_of_one_row():
    old = _row(members=("a.json", "b.json", "c.json"), rank="2")
    new = _row(members=("a.json", "d.json", "e.json", "c.json"), rank="1", tier="gds-verified", label="GDS verified",
               rep="d.json")
    got = D._row_changes("bd", old, new, {"d.json": "2026-06-01T00:00:00Z"})
    assert [(c.kind, c.before, c.after, c.card, c.date_source, c.page) for c in got] == [
        ("rank change", "2", "1", "d.json", "git", "runs/d.json.html"),
        ("tier change", "self-benchmarked", "GDS verified", "d.json", "git", "runs/d.json.html"),
        ("reproduction added", "×3", "×4", "d.json", "git", "runs/d.json.html"),
        ("reproduction added", "×3", "×4", "e.json", "run", "runs/e.json.html"),
        ("card withdrawn", "b.json", "", "b.json", "run", None)]
    # b.json is no member of the new row: no date (its run timestamp is not at hand)
    assert got[-1].date == ""
    assert D._row_changes("bd", _row(rank="2", ranked=True), _row(rank="2", ranked=False), {})[0].after == "unranked"
    assert D._row_changes("bd", _row(ranked=False), _row(rank="5"), {})[0].before == "unranked"
    assert D._row_changes("bd", _row(rank="2"), _row(rank="2"), {}) == []


def test_diff_orders_by_kind_then_newest_first_full_runs_before_subsets():
    prev = _ledger({"bd": [_row("f1", rank="1"), _row("f2", rank="2", members=("x.json",)),
                           _row("f5", members=("w.json",), ranked=False)]},
                   build="p1", built_at="2026-01-02T00:00:00Z")
    cur = _ledger({"bd": [_row("f2", rank="1", members=("x.json",)), _row("f1", rank="2"),
                          _row("f3", members=("n.json",), ts=("2026-03-01T00:00:00Z",), rank="3"),
                          _row("f4", members=("s.json",), ts=("2026-05-01T00:00:00Z",), subset=True)],
                   "be": [_row("f3", members=("m.json",), ts=("2026-04-01T00:00:00Z",), rank="1")]},
                  build="c1")
    diff = D.diff_ledgers(prev, cur)
    assert (diff.previous_build, diff.previous_built_at, diff.current_build) == ("p1", "2026-01-02T00:00:00Z", "c1")
    assert [(c.kind, c.board, c.fingerprint, c.subset) for c in diff.changes] == [
        ("new row", "be", "f3", False),  # 04-01 before 03-01: newest first
        ("new row", "bd", "f3", False),
        ("rank change", "bd", "f1", False),  # both dated 2026-01-01: the stable sort keeps key order (f1, f2)
        ("rank change", "bd", "f2", False),
        ("new row", "bd", "f4", True),  # subsets last, in kind order
        ("row withdrawn", "bd", "f5", True)]  # unranked and not a reference: listed with the subsets


def test_without_a_previous_ledger_every_row_is_new():
    cur = _ledger({"bd": [_row("f1", rank="1"), _row("f2", rank="2", members=("b.json",),
                                                     ts=("2026-02-01T00:00:00Z",))]}, build="c1")
    diff = D.diff_ledgers(None, cur)
    assert (diff.previous_build, diff.previous_built_at, diff.current_build) == (None, None, "c1")
    assert [(c.kind, c.fingerprint, c.after) for c in diff.changes] == [("new row", "f2", "2"), ("new row", "f1", "1")]
    git = D.diff_ledgers(None, cur, {"a.json": "2026-09-09T00:00:00Z"})  # the git date moves f1 first
    assert [(c.fingerprint, c.date_source) for c in git.changes] == [("f1", "git"), ("f2", "run")]
    assert D.diff_ledgers(cur, cur).changes == []


# --------------------------------------------------------------------------------------------------------------------
# history


def test_snapshot_name_is_the_build_day_and_id():
    assert H.snapshot_name(NS(built_at="2026-12-01T10:00:00Z", build="0123456789ab")) == "2026-12-01-0123456789ab"


def test_snapshots_newest_first_one_per_name_bad_files_warned(tmp_path):
    assert H.load_snapshots(None) == ([], [])
    assert H.load_snapshots(tmp_path / "missing") == ([], [])
    _write(tmp_path / "a.json", build="aaaaaaaaaaaa", built_at="2026-01-01T10:00:00Z")
    _write(tmp_path / "b.json", build="aaaaaaaaaaaa", built_at="2026-01-01T23:00:00Z", commit="1" * 40)  # same name
    _write(tmp_path / "c.json", build="bbbbbbbbbbbb", built_at="2026-01-01T09:00:00Z")
    _write(tmp_path / "d.json", build="cccccccccccc", built_at="2026-03-01T00:00:00Z")
    _write(tmp_path / "e.json", build="000000000000", built_at="2026-03-01T00:00:00Z")  # same time: build decides
    _write(tmp_path / "index.json", build="dddddddddddd", built_at="2027-01-01T00:00:00Z")  # the index: not a ledger
    (tmp_path / "f.json").write_text("[]", encoding="utf-8")
    (tmp_path / "g.txt").write_text("{}", encoding="utf-8")
    _write(tmp_path / "z.json", build="ffffffffffff", built_at="2025-01-01T00:00:00Z")  # read after f.json and index
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "h.json", build="eeeeeeeeeeee")
    snaps, warnings = H.load_snapshots(tmp_path)
    docs = [s.doc for s in snaps]
    assert not any(s.compressed for s in snaps)  # .json files: published again under the same name
    # a.json and b.json share 2026-01-01-aaaaaaaaaaaa: the first read (a.json) is kept
    assert [(d.build, d.built_at) for d in docs] == [
        ("cccccccccccc", "2026-03-01T00:00:00Z"), ("000000000000", "2026-03-01T00:00:00Z"),
        ("aaaaaaaaaaaa", "2026-01-01T10:00:00Z"), ("bbbbbbbbbbbb", "2026-01-01T09:00:00Z"),
        ("ffffffffffff", "2025-01-01T00:00:00Z")]
    assert len(warnings) == 1 and warnings[0].startswith("snapshot skipped: ") and "f.json: --snapshots: " in warnings[0]


def test_at_most_max_snapshots_newest_files_are_read(tmp_path, monkeypatch):
    for i, name in enumerate(("a", "b", "c")):
        _write(tmp_path / f"{name}.json", build=f"{i}" * 12, built_at=f"2026-01-0{i + 1}T00:00:00Z")
    monkeypatch.setattr(H, "MAX_SNAPSHOTS", 2)
    assert [s.doc.build for s in H.load_snapshots(tmp_path)[0]] == ["2" * 12, "1" * 12]  # c.json, b.json (last)
    assert H.MAX_SNAPSHOTS == 2 and H.load_snapshots.__module__ == "mtboard.ledger.history"


def test_compressed_snapshots_are_read_and_keep_their_file_name(tmp_path):
    """Issue 35: snapshots are published as gzip (``<name>.json.gz``); one published before as ``<name>.json`` keeps
    its name. A file that is not gzip, or that inflates past the 256 MiB limit, is a one-line warning."""
    import gzip

    old = _write(tmp_path / "2026-01-01-aaaaaaaaaaaa.json", build="aaaaaaaaaaaa", built_at="2026-01-01T10:00:00Z")
    new = tmp_path / "2026-02-01-bbbbbbbbbbbb.json.gz"
    new.write_bytes(gzip.compress(json.dumps({**MINIMAL, "build": "bbbbbbbbbbbb",
                                              "built_at": "2026-02-01T10:00:00Z"}).encode("utf-8")))
    (tmp_path / "2026-03-01-cccccccccccc.json.gz").write_bytes(b'{"not": "gzip"}')
    snaps, warnings = H.load_snapshots(tmp_path)
    assert [(s.doc.build, s.compressed, s.file) for s in snaps] == [
        ("bbbbbbbbbbbb", True, "data/snapshots/2026-02-01-bbbbbbbbbbbb.json.gz"),
        ("aaaaaaaaaaaa", False, "data/snapshots/2026-01-01-aaaaaaaaaaaa.json")]
    assert old.is_file() and len(warnings) == 1
    assert warnings[0].startswith(f"snapshot skipped: {tmp_path / '2026-03-01-cccccccccccc.json.gz'}: --snapshots: ")
    assert "not a gzip file (no gzip header)" in warnings[0] and "\n" not in warnings[0]


def test_gzip_reader_refuses_a_bomb_without_inflating_it(tmp_path):
    """:func:`safejson.read_gzip_bytes`: at most ``max_bytes`` + 1 bytes come out of the decompressor (10 MB of zeros
    compress to ~10 KB; the limit here is 1 MB)."""
    import gzip

    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"0" * 10_000_000))
    assert bomb.stat().st_size < 20_000
    with pytest.raises(InputError, match="decompresses to over the 1000000-byte limit") as err:
        safejson.read_gzip_bytes(bomb, max_bytes=1_000_000)
    assert err.value.where == str(bomb)
    assert safejson.read_gzip_bytes(bomb, max_bytes=10_000_000) == b"0" * 10_000_000
    truncated = tmp_path / "cut.gz"
    truncated.write_bytes(gzip.compress(b"{}" * 1000)[:-12])
    with pytest.raises(InputError, match="not a valid gzip file"):
        safejson.read_gzip_bytes(truncated)
    # reviewer's findings: a corrupt deflate stream behind a valid header (zlib.error) and an empty or plain file are
    # one-line InputErrors too, not a crash and not an empty document
    corrupt = bytearray(gzip.compress(json.dumps({"k": list(range(200))}).encode()))
    corrupt[12:40] = bytes(b ^ 0xFF for b in corrupt[12:40])
    (tmp_path / "bad.gz").write_bytes(bytes(corrupt))
    with pytest.raises(InputError, match="not a valid gzip file"):
        safejson.read_gzip_bytes(tmp_path / "bad.gz")
    for name, data in (("empty.gz", b""), ("plain.gz", b'{"schema": 1}')):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError, match="not a gzip file"):
            safejson.read_gzip_bytes(tmp_path / name)


def test_a_corrupt_compressed_snapshot_is_a_warning(tmp_path):
    """One bad snapshot from the published site (a corrupt gzip body) is skipped with a warning; the build goes on."""
    import gzip

    _write(tmp_path / "2026-01-01-aaaaaaaaaaaa.json", build="aaaaaaaaaaaa", built_at="2026-01-01T10:00:00Z")
    corrupt = bytearray(gzip.compress(json.dumps({**MINIMAL, "build": "bbbbbbbbbbbb"}).encode()))
    corrupt[12:40] = bytes(b ^ 0xFF for b in corrupt[12:40])
    (tmp_path / "2026-02-01-bbbbbbbbbbbb.json.gz").write_bytes(bytes(corrupt))
    snaps, warnings = H.load_snapshots(tmp_path)
    assert [s.doc.build for s in snaps] == ["aaaaaaaaaaaa"] and len(warnings) == 1
    assert "2026-02-01-bbbbbbbbbbbb.json.gz" in warnings[0] and "not a valid gzip file" in warnings[0]


def test_max_snapshots_is_two_thousand():
    assert H.MAX_SNAPSHOTS == 2000


def test_a_json_permalink_stays_when_this_build_has_its_name():
    """Reviewer's finding: the same cards built again on the day of the last uncompressed deploy have that
    snapshot's name; its ``.json`` permalink is published again as it was, not replaced by a ``.json.gz``. A new name
    is gzip."""
    import gzip

    from mtboard.core.schema.ledger import Ledger
    from mtboard.site import boardpages

    doc = Ledger.model_validate(MINIMAL)
    rendered = []
    for earlier, want in (([H.Snapshot(doc, compressed=False)], "data/snapshots/2026-12-01-0123456789ab.json"),
                          ([], "data/snapshots/2026-12-01-0123456789ab.json.gz")):
        pages, data = {}, {}
        boardpages._history(lambda path, template, **ctx: rendered.append((path, ctx.get("file"))), pages, data, doc,
                            earlier)
        index = json.loads(pages["data/snapshots/index.json"])["snapshots"]
        assert [s["file"] for s in index] == [want] and ("history/2026-12-01-0123456789ab.md", want) in rendered
        if want.endswith(".gz"):
            assert not [p for p in pages if p.startswith("data/snapshots/2026")]
            assert json.loads(gzip.decompress(data[want]))["build"] == "0123456789ab"
        else:
            assert not data and json.loads(pages[want])["build"] == "0123456789ab"
