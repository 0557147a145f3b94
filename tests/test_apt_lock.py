"""Issue 36 item 2: the demo survives a machine whose automatic updates hold the apt/dpkg lock.

``scripts/setup.sh`` (run first by ``scripts/demo.sh``) calls apt-get only through ``scripts/apt-get-wait.sh``, which
waits — bounded by ``MTBOARD_APT_LOCK_WAIT`` seconds — while another process holds the lock, and says so. These tests
hold the real locks apt takes (``fcntl`` record locks on ``/var/lib/dpkg/lock-frontend`` and ``/var/lib/apt/lists/lock``,
as apt and unattended-upgrades do) and run the real apt-get: ``install`` of a package that is installed already (no
download, nothing changes) and ``update`` (refused at its lock before any download). Needs root (CI runs as root);
skipped elsewhere with the reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "apt-get-wait.sh"
FRONTEND = Path("/var/lib/dpkg/lock-frontend")
LISTS = Path("/var/lib/apt/lists/lock")
INSTALLED = "lttoolbox"  # scripts/setup.sh installs it; `apt-get install` of it again changes nothing

needs_root_apt = pytest.mark.skipif(
    shutil.which("apt-get") is None or os.geteuid() != 0 or not FRONTEND.parent.is_dir(),
    reason="needs apt-get and root (the locks are the system's own)")
pytestmark = [pytest.mark.slow, needs_root_apt]


@contextlib.contextmanager
def held(lock: Path):
    """Hold ``lock`` as apt does (an exclusive fcntl record lock on the whole file) until the block ends."""
    with open(lock, "a+") as f:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            yield
        finally:
            fcntl.lockf(f, fcntl.LOCK_UN)


def run(*args: str, wait: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "MTBOARD_APT_LOCK_WAIT": wait}
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)
    return proc, time.monotonic() - t0


def test_it_waits_while_the_lock_is_held_and_goes_on_when_it_is_released():
    release = threading.Event()

    def hold_for_a_while():
        with held(FRONTEND):
            release.wait(8)

    holder = threading.Thread(target=hold_for_a_while)
    holder.start()
    time.sleep(0.5)  # the lock is taken before apt-get first asks
    try:
        proc, took = run("install", "-y", "-qq", "--no-install-recommends", INSTALLED, wait="60")
    finally:
        release.set()
        holder.join()
    assert proc.returncode == 0, proc.stderr
    # said once, naming the holder (this test's process) and the bound
    assert proc.stderr.count("apt-get-wait: the apt/dpkg lock is held by process") == 1, proc.stderr
    assert f"held by process {os.getpid()} " in proc.stderr
    assert "waiting up to 60 s (MTBOARD_APT_LOCK_WAIT)" in proc.stderr
    assert 7.0 <= took < 40, took  # waited for the ~7.5 s the lock was still held, then ran


@pytest.mark.parametrize(("lock", "args"), [
    (FRONTEND, ("install", "-y", "-qq", "--no-install-recommends", INSTALLED)),
    (LISTS, ("update", "-qq")),  # apt's own -o DPkg::Lock::Timeout does not cover this lock (apt 2.6)
])
def test_it_gives_up_after_the_bound_with_the_holder_and_the_fix(lock, args):
    with held(lock):
        proc, took = run(*args, wait="6")
    assert proc.returncode == 100
    last = proc.stderr.strip().splitlines()[-1]
    # the bound is 6 s; the time it reports is what it measured, which a loaded machine stretches (11 s seen in a CI
    # run at load ~4): anything from the bound to the wall-clock limit below
    assert re.match(r"apt-get-wait: gave up after ([6-9]|[12][0-9]) s: the apt/dpkg lock is still held by process "
                    rf"{os.getpid()} ", last), last
    assert last.endswith("set MTBOARD_APT_LOCK_WAIT=SECONDS to wait longer")
    # the script counts whole seconds (bash's $SECONDS ticks on the second, not 1 s after the start): it may give up
    # after 5.x s of wall time (5.87 s seen in a clean-clone CI run)
    assert 5.0 <= took < 30, took


def test_any_other_failure_is_apt_gets_own_at_once():
    proc, took = run("install", "-y", "-qq", "mtboard-no-such-package", wait="60")
    assert proc.returncode == 100
    assert "Unable to locate package mtboard-no-such-package" in proc.stderr
    assert "apt-get-wait" not in proc.stderr and took < 20


@pytest.mark.parametrize("bad", ["ten", " 5", "-1", "1234567", "99999999999999999999"])
def test_a_bad_bound_is_refused_with_the_fix(bad):
    proc, took = run("update", wait=bad)
    assert proc.returncode == 2 and took < 5
    assert proc.stderr.strip() == ("apt-get-wait: MTBOARD_APT_LOCK_WAIT must be a whole number of seconds, at most "
                                   f"999999 (got '{bad}')")


def test_setup_runs_apt_get_only_through_the_waiting_script():
    text = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if re.search(r"(^|[\s;])(\$sudo )?apt-get ", line)]
    assert sum("bash scripts/apt-get-wait.sh " in line for line in code) == 2  # update, install
    assert "bash scripts/setup.sh" in (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
