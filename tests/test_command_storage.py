"""Storage faults in every command name themselves (issue 33 item 5, second review finding 4): a full disk under
``mtboard rescore``, ``corpus import``, ``submit`` and ``build`` is one line naming the file the disk refused, the fix
and ``then re-run: <the same command>`` — exit 1, never "internal error", never a line without the path — and the
printed command, run again once there is room, finishes.

The commands run as child processes (``python -m mtboard``, so the printed command is the one typed) with their output
on a real, tiny tmpfs in a private mount namespace (``unshare -rm``, the pattern of tests/test_runner_storage.py;
skipped with the reason where unshare or mount is refused). The inputs are committed files: the EN→ES development
corpus and its baseline-echo card; the import's CSV is hand-made here (3,000 numbered rows, ~150 KB as JSON: more than
the 64 KiB tmpfs holds).
"""

from __future__ import annotations

import errno
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import cli_support
from mtboard.cli.app import rerun_command
from mtboard.core.documents import atomic_write, load_card
from mtboard.core.errors import StorageError, storage_error
from test_runner_storage import _env, needs_namespace

ROOT = Path(__file__).resolve().parents[1]
CARD = ROOT / "submissions" / "mtb-en-es-dev" / "baseline-echo__baseline__32e6f8fa41bf.json"
PY = shlex.quote(sys.executable)
ENOSPC_FIX = "(fix: free space on that file system, or move the folder to a disk with room; then re-run: "


def _full_disk_then_rerun(tmp_path: Path, command: str, size: str = "64k") -> tuple[str, int, str, int]:
    """Run ``command`` (sh) with ``tmp_path/mnt`` a ``size`` tmpfs, then — after growing it to 16 MiB — the command
    its error line printed after ``then re-run:``. Returns (stderr of the first, its exit code, stderr of the re-run,
    its exit code)."""
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    script = f"""
        mount -t tmpfs -o size={size} tmpfs {mnt} || exit 9
        {command} > {out}/out1 2> {out}/err1; echo $? > {out}/rc1
        mount -o remount,size=16m {mnt} || exit 9
        rerun=$(sed -n 's/.*; then re-run: \\(.*\\))$/\\1/p' {out}/err1)
        [ -n "$rerun" ] || exit 0
        eval "$rerun" > {out}/out2 2> {out}/err2; echo $? > {out}/rc2
        cp -a {mnt}/. {out}/kept
    """
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=_env(), cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rc2 = int((out / "rc2").read_text()) if (out / "rc2").exists() else -1
    err2 = (out / "err2").read_text() if (out / "err2").exists() else ""
    return (out / "err1").read_text(), int((out / "rc1").read_text()), err2, rc2


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0] == stderr.strip().splitlines()[-1], stderr
    assert "internal error" not in errors[0]
    return errors[0]


@needs_namespace
@pytest.mark.slow  # 4.1 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_rescore_on_a_full_disk_names_the_output_and_the_rerun_writes_it(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    cmd = f"{PY} -m mtboard rescore {CARD} --out {mnt}/x.json --corpora {ROOT / 'corpora'}"
    err, rc, err2, rc2 = _full_disk_then_rerun(tmp_path, cmd, size="4k")  # the card is 22 KB
    line = _one_error_line(err)
    assert rc == 1
    assert line == f"error: {mnt}/x.json: no space left on the device (ENOSPC) {ENOSPC_FIX}{cmd})"
    assert rc2 == 0, err2
    kept = tmp_path / "out" / "kept"
    assert sorted(p.name for p in kept.iterdir()) == ["x.json"]  # no temp file left by the failed write
    assert load_card(kept / "x.json").dataset.id == "mtb-en-es-dev"


@needs_namespace
@pytest.mark.slow  # 2.9 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_corpus_import_on_a_full_disk_names_the_corpus_file_and_the_rerun_imports(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    csv = tmp_path / "big.csv"  # hand-made: a header and 3,000 numbered sentence pairs
    csv.write_text("source,target\n" + "".join(f"Sentence number {i} is here.,Frase número {i} está aquí.\n"
                                                 for i in range(3000)), encoding="utf-8")
    cmd = (f"{PY} -m mtboard corpus import {csv} -o {mnt}/c.json --source-lang en --target-lang es "
           "--license CC0-1.0")
    err, rc, err2, rc2 = _full_disk_then_rerun(tmp_path, cmd)
    assert rc == 1
    assert _one_error_line(err) == f"error: {mnt}/c.json: no space left on the device (ENOSPC) {ENOSPC_FIX}{cmd})"
    assert rc2 == 0, err2
    kept = tmp_path / "out" / "kept"
    assert sorted(p.name for p in kept.iterdir()) == ["c.json"]
    assert (kept / "c.json").read_bytes().count(b'"source": "Sentence number ') == 3000


@needs_namespace
@pytest.mark.slow  # 4.3 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_submit_on_a_full_disk_names_the_card_leaves_nothing_and_the_rerun_submits(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    dest = mnt / "submissions" / "mtb-en-es-dev" / CARD.name
    card = _copy_of_card(tmp_path)
    # the root is the tmpfs (its submissions/ made first), the corpora the repository's
    cmd = f"{PY} -m mtboard submit {card} --root {mnt} --corpora {ROOT / 'corpora'}"
    err, rc, err2, rc2 = _full_disk_then_rerun(tmp_path, f"mkdir {mnt}/submissions && {cmd}", size="4k")
    assert rc == 1
    assert _one_error_line(err) == f"error: {dest}: no space left on the device (ENOSPC) {ENOSPC_FIX}{cmd})"
    assert rc2 == 0, err2
    copied = tmp_path / "out" / "kept" / "submissions" / "mtb-en-es-dev" / CARD.name
    assert copied.read_bytes() == CARD.read_bytes()
    assert [p.name for p in card.parent.glob("pr-body-*.md")] == ["pr-body-32e6f8fa41bf.md"]


def _copy_of_card(tmp_path: Path) -> Path:
    """The committed card copied to ``tmp_path/card/`` (``submit`` writes the PR body file next to the card)."""
    card = tmp_path / "card" / CARD.name
    card.parent.mkdir()
    card.write_bytes(CARD.read_bytes())
    return card


def test_submit_leaves_no_body_file_when_its_card_cannot_be_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The PR body file is written first and the card last (the card is what makes the submission; issue 34 item 1:
    a kill between the two leaves no card without its body). When the disk refuses the card, the new body file is
    removed too, so running the same command again starts from nothing and is not refused as "already submitted"."""
    import mtboard.run.submit as submit

    calls: list[Path] = []

    def second_write_fails(path, data):  # noqa: ANN001
        calls.append(Path(path))
        if len(calls) == 2:
            raise storage_error(OSError(errno.ENOSPC, "No space left on device"), str(path))
        atomic_write(path, data)

    monkeypatch.setattr(submit, "atomic_write", second_write_fails)
    (tmp_path / "submissions").mkdir()
    res = cli_support.invoke(["submit", str(_copy_of_card(tmp_path)), "--root", str(tmp_path), "--corpora", str(ROOT / "corpora")])
    assert res.returncode == 1
    dest = tmp_path / "submissions" / "mtb-en-es-dev" / CARD.name
    assert calls == [tmp_path / "card" / "pr-body-32e6f8fa41bf.md", dest]
    assert res.stderr.startswith(f"error: {dest}: no space left on the device (ENOSPC) ")
    assert res.stderr.strip().endswith("then re-run: the same `mtboard submit` command)")
    assert not dest.exists() and not calls[0].exists()
    assert sorted(p.name for p in (tmp_path / "card").iterdir()) == [CARD.name]


@needs_namespace
@pytest.mark.parametrize("size, phase", [("64k", "docs"), ("2m", "site")])
@pytest.mark.slow  # 11.8 CPU-s, 17 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_build_on_a_full_disk_names_the_page_and_the_rerun_builds(tmp_path: Path, size: str, phase: str) -> None:
    """64 KiB: the Markdown folder (1.3 MB for one card) fills while mtboard writes it; 2 MiB: it fits and MkDocs
    (4.3 MB of HTML) fills the disk. Either way a page under that folder is named, and the re-run builds the site (the
    half-written site folder is mtboard's: its marker was written first)."""
    mnt = tmp_path / "mnt"
    subs = tmp_path / "subs" / "mtb-en-es-dev"
    subs.mkdir(parents=True)
    (subs / CARD.name).write_bytes(CARD.read_bytes())
    none = tmp_path / "none"
    cmd = (f"{PY} -m mtboard build --submissions {subs.parent} --out {mnt}/site --docs {mnt}/docs --no-validate "
           f"--anchors {none} --official {none}")
    err, rc, err2, rc2 = _full_disk_then_rerun(tmp_path, cmd, size=size)
    assert rc == 1
    line = _one_error_line(err)
    # the page being written, or (MkDocs copying a file) its source and the page: "docs/x → site/x"
    assert line.startswith(f"error: {mnt}/{phase}/") or f" → {mnt}/{phase}/" in line, line
    assert line.endswith(f": no space left on the device (ENOSPC) {ENOSPC_FIX}{cmd})"), line
    assert rc2 == 0, err2
    assert (tmp_path / "out" / "kept" / "site" / "index.html").is_file()


def test_an_os_error_with_two_paths_names_both() -> None:
    exc = OSError(errno.EROFS, "Read-only file system", "/m/.x.tmp", None, "/m/x.json")
    assert storage_error(exc).one_line() == ("/m/.x.tmp → /m/x.json: the file system is read-only (EROFS) (fix: "
                                             "remount it read-write, or use a folder on a writable file system)")


def test_atomic_write_names_the_file_not_its_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def full(fd: int) -> None:
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(StorageError) as caught:
        atomic_write(tmp_path / "card.json", b"{}\n")
    assert caught.value.where == str(tmp_path / "card.json") and caught.value.errno == errno.EDQUOT
    assert list(tmp_path.iterdir()) == []  # the temp file was removed


def test_rerun_command_is_the_command_as_typed_with_url_credentials_hidden() -> None:
    argv = ["/x/lib/python3.12/site-packages/mtboard/__main__.py", "sweep", "run", "my sweep.toml",
            "--base-url", "https://u:key@h.example/v1", "--judge-url=https://h.example/v1?key=s", "--out",
            "https://h.example/plain"]
    assert rerun_command(["/v/lib/python3.12/site-packages/pytest/__main__.py", "-q"]) == "the same `mtboard` command"
    assert rerun_command(argv) == shlex.join([sys.executable, "-m", "mtboard", "sweep", "run", "my sweep.toml",
                                              "--base-url", "YOUR_URL", "--judge-url=YOUR_URL", "--out",
                                              "https://h.example/plain"])


def test_with_rerun_leaves_a_resume_command_alone() -> None:
    fault = StorageError("full", where="w/raw.jsonl", fix="free space")
    assert fault.with_rerun("mtboard x").fix == "free space; then re-run: mtboard x"
    resumed = fault.with_resume("mtboard run c.json --work-dir w")
    assert resumed.with_rerun("mtboard x").fix == "free space; then resume with: mtboard run c.json --work-dir w"
