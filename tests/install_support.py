"""Helpers for the tests that install mtboard the way its users and the GitHub workflows do (issue 19 part 5,
issue 22): a copy of the checkout's files (what a clone or ``actions/checkout`` holds), a fresh venv outside the
checkout, an environment that cannot see the test run's own (editable) install, and the pieces that replay the
workflows' `run:` steps (a pull request's merge-commit checkout, an ``apt-get`` stand-in, the validate job's steps).
"""

from __future__ import annotations

import json
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


# ----------------------------------------------------------------------------------------------------------------------
# Replaying the GitHub workflows' `run:` steps (issue 22)

BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
"""GitHub's default shell for `run:` steps on Linux."""


def workflow_job(workflow: Path) -> dict:
    """The single job of a workflow file (or the one named ``build`` when there are several)."""
    import yaml

    jobs = yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"]
    return jobs["build"] if "build" in jobs else next(iter(jobs.values()))


def workflow_step(workflow: Path, name_start: str) -> dict:
    """The step of the workflow's job whose name starts with ``name_start``."""
    return next(s for s in workflow_job(workflow)["steps"] if s.get("name", "").startswith(name_start))


def apt_shim(folder: Path, log: Path) -> Path:
    """A folder holding an ``apt-get`` that only appends its arguments to ``log`` (the test machine already has the
    packages; the tests check that with :func:`missing_packages`). Put it first on PATH. Returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "apt-get"
    exe.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    exe.chmod(0o755)
    return folder


def apt_packages(log: Path) -> list[str]:
    """Packages of every ``apt-get install`` line the shim logged (options dropped)."""
    out: list[str] = []
    for line in log.read_text().splitlines():
        words = line.split()
        if words and words[0] == "install":
            out += [w for w in words[1:] if not w.startswith("-")]
    return out


def missing_packages(packages: list[str]) -> list[str]:
    """The Debian packages of ``packages`` that are not installed on this machine."""
    out = []
    for p in packages:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if "install ok installed" not in status.stdout:
            out.append(p)
    return out


def git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in ``cwd`` with a fixed identity, no signing and no global configuration. Returns stdout."""
    env = clean_env(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def pull_request_checkout(tmp: Path, base_files: dict[str, bytes], pr_files: dict[str, bytes], dest: Path,
                          *, delete: list[str] = ()) -> Path:
    """What `actions/checkout` leaves for a `pull_request` run: a scratch origin whose main has ``base_files``; a PR
    branch forked from it adding ``pr_files`` (and removing ``delete``); main moves on by one commit after the fork
    (as it does while a PR waits); GitHub's test merge commit (first parent: main's tip, second: the PR head) under
    ``refs/pull/1/merge``, fetched with depth 2 into ``dest`` and checked out detached. Returns ``dest``."""
    origin = tmp / "origin"
    origin.mkdir(parents=True)
    git(origin, "init", "-q")
    _write(origin, base_files)
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "main before the pull request")
    git(origin, "switch", "-qc", "contributor")
    _write(origin, pr_files)
    for rel in delete:
        git(origin, "rm", "-q", rel)
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "the pull request")
    git(origin, "switch", "-q", "main")
    (origin / "MAIN_MOVED_ON.txt").write_text("a commit on main after the fork\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "main moves on")
    git(origin, "merge", "-q", "--no-ff", "--no-edit", "contributor")
    git(origin, "update-ref", "refs/pull/1/merge", "HEAD")
    git(origin, "reset", "-q", "--hard", "HEAD^1")
    dest.mkdir(parents=True)
    git(dest, "init", "-q")
    git(dest, "fetch", "-q", "--depth=2", f"file://{origin}", "+refs/pull/1/merge:refs/remotes/pull/1/merge")
    git(dest, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    return dest


VALIDATE_WF = ROOT / ".github" / "workflows" / "validate.yml"
DOCUMENTED_ANALYSERS = ["apertium-eng-spa", "apertium-eng-cat", "lttoolbox"]
"""The analyser packages scripts/setup.sh installs (the cards' fst_version names them)."""


def install_validate_job(tmp: Path, base: Path) -> list[Path]:
    """Run the job's two install steps for a workspace whose ./base is ``base``; returns the PATH entries the later
    steps get (the venv's bin from GITHUB_PATH, then the apt-get stand-in's folder). Checks the packages the first
    step asks for are the documented ones and installed here."""
    ws = base.parent
    (tmp / "runner-temp").mkdir(exist_ok=True)
    github_path = tmp / "github-path"
    github_path.write_text("")
    shims = apt_shim(tmp / "shims", tmp / "apt.log")
    env = clean_env([shims], GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(tmp / "runner-temp"),
                    GITHUB_PATH=str(github_path))
    for name in ("Install the documented environment's packages", "Install the base branch's mtboard"):
        step = workflow_step(VALIDATE_WF, name)
        proc = subprocess.run([*BASH, step["run"]], cwd=ws, env={**env, **step.get("env", {})},
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (name, proc.stdout[-3000:] + proc.stderr[-3000:])
    packages = apt_packages(tmp / "apt.log")
    assert set(DOCUMENTED_ANALYSERS) <= set(packages) and {"git", "python3", "python3-venv"} <= set(packages)
    assert missing_packages(packages) == []
    (venv_bin,) = github_path.read_text().split()
    direct_url = next(Path(venv_bin).parent.glob("lib/python3*/site-packages/mtboard-*.dist-info/direct_url.json"))
    assert not json.loads(direct_url.read_text()).get("dir_info", {}).get("editable", False)  # not editable
    return [Path(venv_bin), shims]


def run_validate_job(ws: Path, path_dirs: list[Path], *, label: bool) -> subprocess.CompletedProcess:
    """The job's "List the files" and "Validate submissions" steps on ``ws``."""
    env = clean_env(path_dirs, GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(ws.parent / "runner-temp"),
                    GIT_CONFIG_GLOBAL="/dev/null")
    list_step = workflow_step(VALIDATE_WF, "List the files")
    p1 = subprocess.run([*BASH, list_step["run"]], cwd=ws / list_step["working-directory"], env=env,
                        capture_output=True, text=True, timeout=60)
    assert p1.returncode == 0, p1.stderr
    val = workflow_step(VALIDATE_WF, "Validate submissions")
    env["MAINTAINER_CHANGE"] = "true" if label else "false"
    return subprocess.run([*BASH, val["run"]], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
