"""Storage faults name themselves (issue 33 item 5): a full disk, a read-only file system and a work directory that
vanishes mid-run are one line naming the path, the fix and the command that resumes — exit 1, never "internal
error" — and nothing already written is lost.

The full-disk and read-only cases run ``mtboard run`` (a child process) with its work directory on a real, tiny
tmpfs mounted in a private mount namespace (``unshare -rm``; skipped, with the reason, where unshare or mount is
refused); the run resumes to a card ``mtboard validate`` accepts once space is free. The model server is the
fault-injection server (tests/fake_openai_server.py), which counts every completion request; the corpus is the
committed EN→ES development corpus, ``--limit 40`` (validated against the repository's own corpora).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cli_support
from fake_openai_server import FakeServer
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.cli.app import error_line
from mtboard.core.documents import load_card
from mtboard.core.errors import StorageError, storage_error
from mtboard.run.workdir import RAW, TRANSLATIONS, WorkDir

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "corpora" / "mtb-en-es-dev.json"
N = 40


def _unshare_works() -> str | None:
    """None when a private mount namespace with a tmpfs can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    # at collection, before the session's temporary folder is set (conftest.py): the probe removes its folder
    script = 'd=$(mktemp -d) || exit 1; mount -t tmpfs -o size=64k tmpfs "$d"; rc=$?; umount "$d" 2>/dev/null; ' \
             'rmdir "$d"; exit $rc'
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare/mount refused here: {probe.stderr.strip()[:200]}"


NO_NAMESPACE = _unshare_works()
needs_namespace = pytest.mark.skipif(NO_NAMESPACE is not None, reason=str(NO_NAMESPACE))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_", "MTBOARD_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _in_namespace(script: str, tmp_path: Path) -> None:
    """Run ``script`` (sh) in a private mount namespace; its files in ``tmp_path`` stay after it ends."""
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=_env(), cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]


def _lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), f"{path.name} ends in a torn line"
    return [json.loads(line) for line in data.splitlines()]


def _completions(srv: FakeServer) -> int:
    return sum(1 for r in srv.requests if r["path"].endswith("/completions"))


@needs_namespace
@pytest.mark.slow  # 6.5 CPU-s, 10 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_full_disk_stops_with_one_line_and_the_printed_command_resumes_to_a_valid_card(tmp_path: Path) -> None:
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    work = mnt / "w"
    with FakeServer() as srv:
        cmd = (f"{sys.executable} -m mtboard run {ES} --method openai:fake-model --base-url {srv.base_url} "
               f"--work-dir {work} --limit {N} --price-in 0 --price-out 0")
        # 64 KiB hold run.json, .lock and sessions.jsonl (a page each) and about 30 of the 40 entries' lines
        _in_namespace(f"""
            mount -t tmpfs -o size=64k tmpfs {mnt} || exit 9
            {cmd} > {out}/out1 2> {out}/err1; echo $? > {out}/rc1
            cp -a {work} {out}/full
            mount -o remount,size=8m {mnt} || exit 9
            resume=$(sed -n 's/.*; then resume with: \\(.*\\))$/\\1/p' {out}/err1)
            echo "$resume" > {out}/resume
            eval "$resume" > {out}/out2 2> {out}/err2; echo $? > {out}/rc2
            cp -a {work} {out}/final
        """, tmp_path)
        first_session = int((out / "rc1").read_text())
        sent_in_all = _completions(srv)
    err1 = (out / "err1").read_text().strip().splitlines()
    errors = [line for line in err1 if line.startswith("error: ")]
    assert first_session == 1 and len(errors) == 1 and errors[0] == err1[-1], err1
    line = errors[0]
    assert line.startswith(f"error: {work}/")  # the file the disk refused (raw.jsonl or translations.jsonl)
    assert "no space left on the device (ENOSPC)" in line and "internal error" not in line
    kept = _lines(out / "full" / TRANSLATIONS)  # whole lines only: the failed write was cut back
    _lines(out / "full" / RAW)
    k = len(kept)
    assert 0 < k < N, k
    assert (f"(fix: free space on that file system, or move the folder to a disk with room; {k} of {N} entries "
            f"finished and are kept in {work}; then resume with: ") in line
    assert (out / "resume").read_text().strip() == cmd  # the command as typed (it named --work-dir already)
    assert int((out / "rc2").read_text()) == 0, (out / "err2").read_text()
    assert f"resuming {k}/{N}: {N - k} entries left in {work}" in (out / "err2").read_text()
    assert f"sent this session {N - k}" in (out / "out2").read_text()
    assert N <= sent_in_all <= N + 8  # at most the 8 requests in flight when the disk filled were sent twice
    card = load_card(out / "final" / "card.json")
    assert len(card.results) == N and card.scores.errors == 0
    assert [r.predicted for r in card.results[:2]] == ["ES " + r.source for r in card.results[:2]]
    report = cli_support.invoke(["validate", str(out / "final" / "card.json"), "--root", str(ROOT)], cwd=ROOT)
    assert report.returncode == 0, report.stdout + report.stderr


@needs_namespace
def test_a_read_only_work_dir_is_one_line_before_anything_is_sent(tmp_path: Path) -> None:
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    with FakeServer() as srv:
        _in_namespace(f"""
            mount -t tmpfs -o size=1m tmpfs {mnt} && mkdir {mnt}/w && mount -o remount,ro {mnt} || exit 9
            {sys.executable} -m mtboard run {ES} --method openai:fake-model --base-url {srv.base_url} \
                --work-dir {mnt}/w --limit 3 > {out}/out 2> {out}/err; echo $? > {out}/rc
        """, tmp_path)
        assert srv.requests == []
    err = (out / "err").read_text().strip().splitlines()
    assert int((out / "rc").read_text()) == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {mnt}/w/.lock: the file system is read-only (EROFS) (fix: remount it "
                             "read-write, or use a folder on a writable file system; 0 of 3 entries finished and "
                             f"are kept in {mnt}/w; then resume with: {sys.executable} -m mtboard run ")


class DeletesTheWorkDir(LoopbackServer):
    """An OpenAI-compatible chat server (``"ES " + the entry``'s answer shape) that deletes ``victim`` while
    answering its ``nth`` completion request; ``count`` counts completion requests."""

    def __init__(self, victim: Path, nth: int) -> None:
        self.count = 0
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.count += 1
                if outer.count == nth:
                    shutil.rmtree(victim)
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "fake-model",
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": "Hola."}}],
                                     "usage": {"prompt_tokens": 10, "completion_tokens": 1}})

        super().__init__(Handler)


def test_a_work_dir_deleted_mid_run_stops_at_the_next_write(tmp_path: Path) -> None:
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-vanish",  # hand-made fixture
                                   [(f"Sentence {i}.", f"Frase {i}.") for i in range(20)])
    work = tmp_path / "w"
    args = ["run", str(corpus), "--method", "openai:fake-model", "--work-dir", str(work), "--concurrency", "1",
            "--price-in", "0", "--price-out", "0"]
    with DeletesTheWorkDir(work, nth=5) as srv:
        p = cli_support.invoke([*args, "--base-url", srv.url], cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
        sent = srv.count
    err = p.stderr.strip().splitlines()
    assert p.returncode == 1 and err[-1].startswith("error: ") and sum(e.startswith("error:") for e in err) == 1
    assert err[-1].startswith(f"error: {work}: --work-dir: the work directory vanished while the run was writing to "
                              "it (deleted, moved or unmounted); the records it held went with it (fix: keep the "
                              "work directory in place until the run ends")
    assert "0 of 20 entries finished and are kept" in err[-1] and "then resume with: " in err[-1]
    assert sent == 5  # the write after the 5th answer noticed: nothing more was sent
    with DeletesTheWorkDir(tmp_path / "elsewhere", nth=0) as srv:  # re-running starts afresh and finishes
        p = cli_support.invoke([*args, "--base-url", srv.url], cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
    assert p.returncode == 0, p.stderr
    assert len(load_card(work / "card.json").results) == 20


def test_a_file_deleted_mid_run_is_refused_at_the_next_write(tmp_path: Path) -> None:
    work = WorkDir(tmp_path / "w")
    work.open({"x": 1})
    work.write_bytes(b'{"a":1}\n', b'{"r":1}\n')
    (tmp_path / "w" / TRANSLATIONS).unlink()
    with pytest.raises(StorageError, match="translations.jsonl: the file was deleted while the run was appending"):
        work.write_bytes(b'{"a":2}\n', b"")


def test_a_write_that_fails_part_way_is_cut_back(tmp_path: Path) -> None:
    """The unbuffered append writes what fits, then ENOSPC: the file returns to its size before the write."""
    work = WorkDir(tmp_path / "w")
    work.open({"x": 1})
    work.write_bytes(b'{"a":1}\n', b"")
    calls: list[int] = []

    class ShortThenFull:
        """The open file, as a disk that takes 5 bytes and is then full."""

        def __init__(self, fh) -> None:  # noqa: ANN001
            self.fh, self.name = fh, fh.name

        def fileno(self) -> int:
            return self.fh.fileno()

        def write(self, data) -> int:  # noqa: ANN001
            calls.append(len(data))
            if len(calls) == 1:
                return self.fh.write(bytes(data)[:5])  # a short write: 5 bytes land
            raise OSError(errno.ENOSPC, "No space left on device")

    work._fh_t = ShortThenFull(work._fh_t)
    with pytest.raises(StorageError, match=r"translations.jsonl: no space left on the device \(ENOSPC\)"):
        work.write_bytes(b'{"a":2,"long":"' + b"x" * 100 + b'"}\n', b"")
    assert calls == [118, 113]
    assert (tmp_path / "w" / TRANSLATIONS).read_bytes() == b'{"a":1}\n'


@pytest.mark.parametrize("number,text", [
    (errno.ENOSPC, "w/raw.jsonl: no space left on the device (ENOSPC) (fix: free space on that file system, or move "
                   "the folder to a disk with room)"),
    (errno.EDQUOT, "w/raw.jsonl: disk quota exceeded (EDQUOT) (fix: free space within your quota (quota -s shows "
                   "it), or use a folder on another disk)"),
    (errno.EROFS, "w/raw.jsonl: the file system is read-only (EROFS) (fix: remount it read-write, or use a folder on "
                  "a writable file system)"),
    (errno.EACCES, "w/raw.jsonl: permission denied (EACCES) (fix: make the folder writable for this user "
                   "(chmod/chown), or use another folder)"),
    (errno.EIO, "w/raw.jsonl: input/output error: the device failed (EIO) (fix: check the disk (dmesg, smartctl) "
                "and its mount, or use a folder on another disk)"),
])
def test_environment_faults_are_one_line_naming_the_path(number: int, text: str) -> None:
    exc = OSError(number, os.strerror(number), "w/raw.jsonl")
    assert storage_error(exc).one_line() == text
    assert error_line(exc) == text  # what every command prints (cli/app.py guarded)


@pytest.mark.parametrize("number", [errno.EINVAL, errno.EBADF, errno.ENOENT, errno.EISDIR])
def test_other_os_errors_stay_internal_errors(number: int) -> None:
    # an errno mtboard's own calls cause (a bad argument, a closed descriptor, a path it computed) is a bug
    exc = OSError(number, os.strerror(number), "x")
    assert storage_error(exc) is None
    assert error_line(exc).startswith(f"internal error: {type(exc).__name__}: [Errno {number}]")


def test_with_resume_appends_the_command() -> None:
    e = StorageError("no space left on the device (ENOSPC)", where="w/raw.jsonl", fix="free space", errno=28)
    assert e.with_resume("mtboard run c.json --work-dir w").one_line() == (
        "w/raw.jsonl: no space left on the device (ENOSPC) (fix: free space; then resume with: mtboard run c.json "
        "--work-dir w)")


def test_a_card_the_disk_refuses_names_the_card_and_the_rerun_scores_without_sending(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last write of a run (card.json) on a full disk: a failed write names no file of its own, the line names
    the card; every translation is kept, and re-running sends nothing and writes the card."""
    import mtboard.run.runner as runner

    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-card-write",  # hand-made fixture
                                   [(f"Sentence {i}.", f"ES Sentence {i}.") for i in range(4)])
    work = tmp_path / "w"
    args = ["run", str(corpus), "--method", "openai:fake-model", "--work-dir", str(work), "--price-in", "0",
            "--price-out", "0"]

    def full(card, path):  # noqa: ANN001
        raise OSError(errno.ENOSPC, "No space left on device")

    with FakeServer() as srv:
        monkeypatch.setattr(runner, "write_card", full)
        p = cli_support.invoke([*args, "--base-url", srv.base_url], cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
        assert p.returncode == 1
        assert p.stderr.strip().splitlines()[-1].startswith(
            f"error: {work / 'card.json'}: no space left on the device (ENOSPC) (fix: free space on that file system, "
            f"or move the folder to a disk with room; 4 of 4 entries finished and are kept in {work}; then resume "
            "with: ")
        monkeypatch.undo()
        p = cli_support.invoke([*args, "--base-url", srv.base_url], cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
        assert _completions(srv) == 4  # the re-run sent nothing
    assert p.returncode == 0, p.stderr
    assert "sent this session 0" in p.stdout and len(load_card(work / "card.json").results) == 4


def test_an_fsync_the_disk_refuses_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The group-commit fsync runs in a thread: its failure (ENOSPC/EIO, reported once by Linux) is not swallowed —
    the workers send nothing more and the run ends with the line (exit 1)."""
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-fsync",  # hand-made fixture
                                   [(f"Sentence {i}.", f"ES Sentence {i}.") for i in range(30)])
    real = WorkDir.sync
    calls: list[int] = []

    def failing_sync(self: WorkDir) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise StorageError("input/output error: the device failed (EIO)", where=str(self.path / TRANSLATIONS),
                               fix="check the disk", errno=errno.EIO)
        real(self)

    monkeypatch.setattr(WorkDir, "sync", failing_sync)
    with FakeServer(latency_s=0.02) as srv:
        p = cli_support.invoke(["run", str(corpus), "--method", "openai:fake-model", "--work-dir",
                                str(tmp_path / "w"), "--concurrency", "1", "--base-url", srv.base_url],
                               cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
        sent = _completions(srv)
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1].startswith(
        f"error: {tmp_path / 'w' / TRANSLATIONS}: input/output error: the device failed (EIO) (fix: check the disk; ")
    assert sent < 30
