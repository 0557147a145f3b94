"""Issue 34 item 1: atomic publication of a folder (mtboard/core/publish.py) and the leftovers of atomic_write.

Fast unit tests on small hand-made trees in tmp_path: the published folder keeps its old bytes until the swap, the swap
is one rename (the new tree's inode becomes the published folder), any exception leaves the old tree and no staging
folder, a killed owner's leftovers are removed by the next publication and nothing that is not ours is touched. The
kill tests of the commands themselves (SIGKILL at random points) are tests/test_publish_kill.py (slow)."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtboard.core import publish
from mtboard.core.documents import atomic_write, clear_stale_temps
from mtboard.core.errors import ConfigError, StorageError

ROOT = Path(__file__).resolve().parents[1]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) → its bytes; folders as ``name/`` → b""."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        out[rel + "/" if p.is_dir() else rel] = b"" if p.is_dir() else p.read_bytes()
    return out


def old_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "index.html").write_bytes(b"old index\n")
    (site / "a" / "page.html").write_bytes(b"old page\n")
    (site / ".marker").write_bytes(b"ours\n")
    return site


OLD = {".marker": b"ours\n", "a/": b"", "a/page.html": b"old page\n", "index.html": b"old index\n"}


def test_first_publication_is_one_rename_and_leaves_nothing_beside(tmp_path: Path) -> None:
    target = tmp_path / "out" / "site"  # the parent is made too
    with publish.staged(target) as stage:
        assert stage.path.parent == target.parent and stage.path.name.startswith(".site.mtboard-staging-")
        (stage.path / "index.html").write_bytes(b"new\n")
        inode = os.stat(stage.path).st_ino
        assert not target.exists()
    assert tree(target) == {"index.html": b"new\n"} and os.stat(target).st_ino == inode
    assert stage.published and stage.exchanged is None
    assert sorted(p.name for p in target.parent.iterdir()) == ["site"]


def test_exchange_keeps_the_old_tree_until_the_swap(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    with publish.staged(site, marker=".marker") as stage:
        (stage.path / "index.html").write_bytes(b"new index\n")
        (stage.path / ".marker").write_bytes(b"ours\n")
        assert tree(site) == OLD  # mid-build the published folder is the previous one, byte for byte
        inode = os.stat(stage.path).st_ino
    assert stage.exchanged is True
    assert tree(site) == {".marker": b"ours\n", "index.html": b"new index\n"}  # a/page.html went with the old tree
    assert os.stat(site).st_ino == inode  # the built folder itself, renamed: no copy, no moment half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(2)])
def test_a_failure_leaves_the_old_tree_and_no_staging(tmp_path: Path, exc: BaseException) -> None:
    site = old_site(tmp_path)
    with pytest.raises(type(exc)):
        with publish.staged(site) as stage:
            (stage.path / "index.html").write_bytes(b"half")
            raise exc
    assert tree(site) == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_discard_drops_the_stage_and_a_write_error_names_the_published_path(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    with publish.staged(site) as stage:
        (stage.path / "x").write_bytes(b"x")
        stage.discard()
    assert tree(site) == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    with pytest.raises(OSError) as caught:
        with publish.staged(site) as stage:
            raise OSError(errno.ENOSPC, "No space left on device", str(stage.path / "a" / "page.html"))
    assert caught.value.filename == str(site / "a" / "page.html")  # not the hidden staging name
    with pytest.raises(StorageError) as fault:
        with publish.staged(site) as stage:
            raise StorageError("no space left on the device (ENOSPC)", where=str(stage.path / "index.html"))
    assert str(fault.value) == f"{site / 'index.html'}: no space left on the device (ENOSPC)"


def test_seeded_stage_starts_as_the_current_tree_and_adds_to_it(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    with publish.staged(site, seed=True) as stage:
        assert tree(stage.path) == OLD
        # hard links: no bytes copied; the old tree's links go with it, the new tree keeps the files
        assert os.stat(stage.path / "index.html").st_ino == os.stat(site / "index.html").st_ino
        (stage.path / "a" / "new.html").write_bytes(b"added\n")
        assert "a/new.html" not in tree(site)
    assert tree(site) == {**OLD, "a/new.html": b"added\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_fallback_without_rename_exchange_swaps_with_two_renames(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish, "_renameat2", None)  # an old kernel or libc, or not Linux
    site = old_site(tmp_path)
    with publish.staged(site) as stage:
        (stage.path / "index.html").write_bytes(b"new\n")
    assert stage.exchanged is False and tree(site) == {"index.html": b"new\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    # interrupted between the two renames (the fallback's window): the old tree is put back
    renames: list[tuple[str, str]] = []
    real = os.rename

    def second_interrupted(a, b):  # noqa: ANN001
        renames.append((os.fspath(a), os.fspath(b)))
        if len(renames) == 2:
            raise KeyboardInterrupt
        real(a, b)

    monkeypatch.setattr(os, "rename", second_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with publish.staged(site) as stage:
            (stage.path / "index.html").write_bytes(b"newer\n")
    assert renames[0] == (str(site), str(stage.path) + ".old")
    assert tree(site) == {"index.html": b"new\n"} and sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_an_unsupported_exchange_flag_falls_back_and_other_errors_are_raised(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f").write_text("A")
    publish.rename2(a, b, 2)  # RENAME_EXCHANGE on this file system
    assert (b / "f").read_text() == "A" and not any(a.iterdir())
    with pytest.raises(FileExistsError):
        publish.rename2(a, b, 1)  # RENAME_NOREPLACE: b exists
    with pytest.raises(publish._Unsupported):
        publish.rename2(a, b, 1 | 2)  # both flags: EINVAL, as a file system without the flag answers


KILLED = """
import os, signal, sys
from pathlib import Path
from mtboard.core import publish
stage = publish.Stage.begin(sys.argv[1])
(stage.path / "half.html").write_bytes(b"half")
if sys.argv[2] == "after-swap":  # killed while the old tree is being removed
    publish.rename2(stage.path, stage.target, 2)
print(stage.path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_owner(site: Path, when: str) -> Path:
    proc = subprocess.run([sys.executable, "-c", KILLED, str(site), when], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == -9, proc.stderr
    return Path(proc.stdout.strip())


@pytest.mark.parametrize("when", ["before-swap", "after-swap"])
def test_a_killed_owners_leftovers_are_harmless_and_removed_by_the_next_publication(tmp_path: Path,
                                                                                     when: str) -> None:
    site = old_site(tmp_path)
    left = _killed_owner(site, when)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["site", left.name, left.name + ".lock"])
    published = {"half.html": b"half"} if when == "after-swap" else OLD
    assert tree(site) == published  # before the swap the old tree, after it the new one: never a mix
    with publish.staged(site) as stage:
        assert not left.exists() and not Path(str(left) + ".lock").exists()  # gone before the new stage starts
        (stage.path / "index.html").write_bytes(b"next\n")
    assert tree(site) == {"index.html": b"next\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_killed_fallback_between_its_renames_is_put_back(tmp_path: Path) -> None:
    """The fallback's window, after a kill: the old tree is at ``…-TOKEN.old`` and the published path missing; the next
    clean-up renames it back before anything else."""
    site = old_site(tmp_path)
    stage_dir = tmp_path / ".site.mtboard-staging-0123456789ab"
    stage_dir.mkdir()
    (stage_dir / "index.html").write_bytes(b"new, never published\n")
    site.rename(stage_dir.with_name(stage_dir.name + ".old"))
    stage_dir.with_name(stage_dir.name + ".lock").write_bytes(publish.LOCK_TEXT + b"pid 1\n")
    assert publish.clean_leftovers(site) == [stage_dir.with_name(stage_dir.name + ".lock")]
    assert tree(site) == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_live_stage_is_not_removed(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    live = publish.Stage.begin(site)
    try:
        (live.path / "x").write_bytes(b"x")
        assert publish.clean_leftovers(site) == []  # its lock is held
        with publish.staged(site) as other:
            (other.path / "index.html").write_bytes(b"other\n")
        assert (live.path / "x").read_bytes() == b"x"
    finally:
        live.discard()
    assert tree(site) == {"index.html": b"other\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_nothing_that_is_not_ours_is_touched(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    token = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd"])
    # 1. our folder name without its lock file; 2. a lock file that is not ours; 3. our lock, but a symlink at the
    # folder's name; 4. a lock file that is a symlink to one of ours
    no_lock = tmp_path / f".site.mtboard-staging-{next(token)}"
    no_lock.mkdir()
    (no_lock / "f").write_text("f")
    foreign = tmp_path / f".site.mtboard-staging-{next(token)}"
    foreign.mkdir()
    foreign.with_name(foreign.name + ".lock").write_bytes(b"someone else's lock\n")
    linked = tmp_path / f".site.mtboard-staging-{next(token)}"
    linked.symlink_to(precious, target_is_directory=True)
    linked.with_name(linked.name + ".lock").write_bytes(publish.LOCK_TEXT)
    link_lock = tmp_path / f".site.mtboard-staging-{next(token)}.lock"
    link_lock.symlink_to(linked.with_name(linked.name + ".lock"))
    before = sorted(p.name for p in tmp_path.iterdir())
    publish.clean_leftovers(site)
    with publish.staged(site) as stage:
        (stage.path / "index.html").write_bytes(b"new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (precious / "keep.txt").read_text() == "keep" and (no_lock / "f").read_text() == "f"


def test_refuses_a_mount_point_before_anything_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = old_site(tmp_path)
    monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) == str(site))  # a volume mounted at --out
    with pytest.raises(ConfigError, match="is a mount point") as caught:
        with publish.staged(site):
            pytest.fail("the block must not run")
    assert f"(fix: choose a folder inside it, e.g. {site / 'site'})" in str(caught.value)
    assert tree(site) == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_refuses_a_symlink_a_file_or_an_unmarked_folder(tmp_path: Path) -> None:
    site = old_site(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(site, target_is_directory=True)
    afile = tmp_path / "file"
    afile.write_text("x")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("precious")
    for target, message in [(link, "is not a folder"), (afile, "is not a folder"), (mine, "not empty")]:
        with pytest.raises(ConfigError, match=message):
            with publish.staged(target, marker=".marker"):
                pytest.fail("the block must not run")
    assert tree(site) == OLD and (mine / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "link", "mine", "site"]
    # the published path turning into a symlink while the stage was built: refused at the swap, nothing followed
    with pytest.raises(ConfigError, match="is not a folder"):
        with publish.staged(tmp_path / "late") as stage:
            (stage.path / "x").write_text("x")
            (tmp_path / "late").symlink_to(site, target_is_directory=True)
    assert tree(site) == OLD and (tmp_path / "late").is_symlink()


def test_atomic_write_removes_a_killed_writers_temp_files_only(tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    card.write_bytes(b"old\n")
    stale = tmp_path / ".card.json.k3x_9q2a.tmp"  # what a SIGKILLed atomic_write leaves
    stale.write_bytes(b"half")
    live = tmp_path / ".card.json.abcdefgh.tmp"  # a writer that is alive: its temp file is locked
    live.write_bytes(b"writing")
    other = [tmp_path / ".card.json.tmp", tmp_path / ".other.json.abcdefgh.tmp", tmp_path / ".card.json.ABCDEFGH.tmp",
             tmp_path / ".card.json.abcdefghi.tmp"]  # not a mkstemp name of card.json
    for p in other:
        p.write_bytes(b"keep")
    linked = tmp_path / ".card.json.zzzzzzzz.tmp"
    linked.symlink_to(tmp_path / "card.json")
    fd = os.open(live, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        atomic_write(card, b"new\n")
        assert clear_stale_temps(card) == []
    finally:
        os.close(fd)
    assert card.read_bytes() == b"new\n" and not stale.exists()
    assert live.exists() and linked.is_symlink() and all(p.read_bytes() == b"keep" for p in other)
    assert clear_stale_temps(card) == [live.name]  # its writer is gone now
