"""Helpers for the tests that install mtboard the way its users and the GitHub workflows do (issue 19 part 5,
issue 22): a copy of the checkout's files (what a clone or ``actions/checkout`` holds), a fresh venv outside the
checkout, and an environment that cannot see the test run's own (editable) install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_checkout(dest: Path) -> Path:
    """Copy the checkout's files to ``dest``: the tracked ones plus untracked files git does not ignore (so a new file
    not yet committed is tested too), never ``.venv``, ``build/`` or other ignored output. Returns ``dest``."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout
    for rel in out.decode("utf-8").split("\0"):
        src = ROOT / rel
        if not rel or not src.is_file():  # deleted in the working tree but still in the index
            continue
        dst = dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    return dest


def clean_env(path_dirs: list[Path] | tuple[Path, ...] = (), **extra: str) -> dict[str, str]:
    """``os.environ`` without what would let a child see this test run's Python or settings: the test venv's
    ``bin`` on PATH, ``VIRTUAL_ENV``, ``PYTHON*`` (PYTHONPATH), ``MTBOARD_*``, ``OPENAI_*``, ``JUDGE_*``. PATH is
    ``path_dirs`` followed by the remaining system PATH; ``extra`` is added last."""
    own_bin = Path(sys.executable).parent.resolve()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MTBOARD_", "OPENAI_", "JUDGE_", "PYTHON")) and k != "VIRTUAL_ENV"}
    system = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and Path(d).resolve() != own_bin]
    env["PATH"] = os.pathsep.join([*(str(p) for p in path_dirs), *system])
    env.update(extra)
    return env


def setup_python(dest: Path) -> Path:
    """What ``actions/setup-python`` gives: a folder with a ``python`` that is the base interpreter this test venv was
    made from (not the venv). Returns the folder to put first on PATH."""
    bin_dir = dest / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    base = Path(getattr(sys, "_base_executable", sys.executable))
    for name in ("python", "python3"):
        (bin_dir / name).symlink_to(base)
    return bin_dir


def fresh_venv(dest: Path, *install: str, timeout: float = 900) -> Path:
    """A new venv at ``dest`` (no system site-packages) with ``pip install ARGS`` run in it, from a working
    directory outside the checkout. Returns the venv's ``bin`` folder. Raises AssertionError with pip's output on
    failure."""
    env = clean_env()
    cwd = dest.parent
    subprocess.run([sys.executable, "-m", "venv", str(dest)], check=True, cwd=cwd, env=env, timeout=120)
    bin_dir = dest / "bin"
    proc = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                           *install], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"pip install {' '.join(install)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return bin_dir
