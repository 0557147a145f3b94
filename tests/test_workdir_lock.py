"""The work-directory lock (issue 16 leftover): two ``mtboard run`` or ``mtboard sweep run --cell`` processes on one
work directory would interleave its append-only files. Real processes (subprocesses of the installed CLI) against the
local fake OpenAI-compatible server, slowed down so the first is still running when the second starts; the first is
then killed with SIGKILL and a third run resumes at once (flock is released when the holder dies).

The corpus is a hand-made test fixture (numbered English sentences), not evaluation data.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_openai_server import FakeServer
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError
from mtboard.sweeps.spec import load_sweep
from mtboard.run.workdir import LOCK, lock_workdir
from test_runner_resume import WORDS, env_with, finished_ids, write_corpus

CLI = [sys.executable, "-c", "from mtboard.cli.main import app; app()"]


def _wait_for_holder(work: Path, proc: subprocess.Popen, entries: int = 1) -> dict:
    """The holder record once ``proc`` holds the lock and has finished ``entries`` entries."""
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        try:
            holder = json.loads((work / LOCK).read_text())
        except (OSError, ValueError):
            holder = None
        if holder and len(finished_ids(work)) >= entries:
            return holder
        time.sleep(0.05)
    raise AssertionError(f"the first run never held the lock (rc {proc.poll()})")


def _second_fails_at_once(cmd: list[str], env: dict[str, str], work: Path, holder_pid: int) -> str:
    t0 = time.monotonic()
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    assert second.returncode == 1, second.stdout + second.stderr
    assert took < 15, took  # at once: no waiting for the holder (it needs up to 24 s)
    return second.stderr


@pytest.mark.slow  # 7.8 CPU-s, 12 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_second_run_on_a_work_dir_fails_at_once_and_a_killed_holder_never_blocks(tmp_path):
    sources = [f"The {WORDS[i % 10]} house number {i} is {WORDS[(i * 3) % 10]}." for i in range(40)]
    corpus = write_corpus(tmp_path / "corpora" / "c.json", sources)
    work = tmp_path / "w"
    with FakeServer(latency_s=0.6) as srv:
        cmd = CLI + ["run", str(corpus), "--method", "openai:fake-model", "--base-url", srv.base_url,
                     "--work-dir", str(work), "--concurrency", "1"]
        first = subprocess.Popen(cmd, env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            holder = _wait_for_holder(work, first)
            assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
            err = _second_fails_at_once(cmd, env_with(), work, first.pid)
            assert err.count("\n") == 1 and "Traceback" not in err  # one line
            assert err.strip() == (f"error: {work}: --work-dir: the work directory is in use by another mtboard "
                                   f"process (pid {first.pid} on {socket.gethostname()}, since {holder['started']}) "
                                   "(fix: wait for that run to finish or stop it, or pass another --work-dir; the "
                                   "lock goes away by itself when that process ends)")
            done = finished_ids(work)
            assert len(done) < 40  # the first run was still running while the second was refused
        finally:
            if first.poll() is None:
                os.kill(first.pid, signal.SIGKILL)  # a crash: the lock file stays, its flock dies with the process
            first.wait()
        assert first.returncode == -signal.SIGKILL
        assert (work / LOCK).exists()
        srv.latency_s = 0.0
        third = subprocess.run(cmd, env=env_with(), capture_output=True, text=True, timeout=120)
        assert third.returncode == 0, third.stderr
    card = load_card(work / "card.json")
    assert [r.entry_id for r in card.results] == list(range(1, 41))  # resumed and finished, every entry once


@pytest.mark.slow  # 4.5 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_second_sweep_cell_process_fails_at_once(tmp_path):
    """Two ``mtboard sweep run FILE --cell ID`` processes on one cell: the second reports the cell as failed with the
    lock's line (naming the cell's work dir and the holder) and exits 1 while the first is still running."""
    write_corpus(tmp_path / "corpora" / "c.json",
                 [f"The {WORDS[i % 10]} garden number {i} is {WORDS[(i * 7) % 10]}." for i in range(40)])
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "s.yaml").write_text(
        "name: s\ndatasets: [corpora/c.json]\nprompts: [translate-chat]\ntemperatures: [0.0]\n"
        "methods: [{method: 'openai:fake-model', price_in: 0, price_out: 0}]\n", encoding="utf-8")
    (cell,) = load_sweep(tmp_path / "sweeps" / "s.yaml").cells
    work = tmp_path / "runs" / "sweeps" / "s" / cell.id
    with FakeServer(latency_s=0.6) as srv:
        env = env_with(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="sk-test", MTBOARD_PROGRESS_INTERVAL="1000")
        cmd = CLI + ["sweep", "run", "sweeps/s.yaml", "--cell", cell.id]
        first = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            holder = _wait_for_holder(work, first)
            t0 = time.monotonic()
            second = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert time.monotonic() - t0 < 15
            assert second.returncode == 1
            assert (f"{Path('runs') / 'sweeps' / 's' / cell.id}: --work-dir: the work directory is in use by another "
                    f"mtboard process (pid {first.pid} on {holder['host']}, since {holder['started']})") in second.stderr
            assert "1 of 1 cell(s) failed" in second.stderr
            assert first.poll() is None and not (work / "card.json").exists()  # the holder was still running
        finally:
            if first.poll() is None:
                first.kill()
            first.wait()


def test_lock_is_per_open_file_and_released_on_exit(tmp_path):
    """In one process: a second lock on the same directory fails too (flock is per open file description), and the
    lock is free again after the ``with`` block; a path that is a file is refused."""
    work = tmp_path / "w"
    with lock_workdir(work):
        with pytest.raises(ConfigError, match=f"pid {os.getpid()} on "):
            with lock_workdir(work):
                pass
    with lock_workdir(work):
        pass
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        with lock_workdir(tmp_path / "f"):
            pass
