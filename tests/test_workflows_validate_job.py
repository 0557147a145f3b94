"""Issue 6: the validate workflow's own `run:` scripts, executed here the way GitHub runs them.

A scratch GITHUB_WORKSPACE holds ./base (trusted corpora) and ./pr (a git repository whose HEAD is a merge-like commit
on top of the base tip, as `actions/checkout` gives for `pull_request`). The steps "List the files the pull request
changes" and "Validate submissions with the base branch's validator" are taken verbatim from
.github/workflows/validate.yml and run with `bash --noprofile --norc -eo pipefail` (GitHub's default shell); the
installed `mtboard` on PATH stands in for the venv the install step builds from ./base. Cards are real
(tests/validate_support.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtboard.documents import loads_card
from mtboard.validate import canonical_relpath

import validate_support as vs

WF = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "validate.yml"


def _step(name_start: str) -> dict:
    wf = yaml.safe_load(WF.read_text(encoding="utf-8"))
    (job,) = wf["jobs"].values()
    return next(s for s in job["steps"] if s.get("name", "").startswith(name_start))


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
                    *args], cwd=cwd, check=True, capture_output=True)


def _workspace(tmp: Path, pr_files: dict[str, bytes]) -> Path:
    ws = tmp / "ws"
    (ws / "base" / "corpora").mkdir(parents=True)
    shutil.copyfile(vs.CORPUS, ws / "base" / "corpora" / vs.CORPUS.name)
    pr = ws / "pr"
    (pr / "corpora").mkdir(parents=True)
    shutil.copyfile(vs.CORPUS, pr / "corpora" / vs.CORPUS.name)
    (pr / "submissions").mkdir()
    (pr / "submissions" / ".gitkeep").write_text("")
    (pr / "README.md").write_text("base\n")
    _git(pr, "init", "-q")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "base tip")
    for rel, data in pr_files.items():
        p = pr / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "pull request (merge commit)")
    (tmp / "runner-temp").mkdir()
    return ws


def _run_job(ws: Path, *, label: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MTBOARD_")}
    env.update(GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(ws.parent / "runner-temp"),
               PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
    bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
    list_step = _step("List the files")
    p1 = subprocess.run([*bash, list_step["run"]], cwd=ws / list_step["working-directory"], env=env,
                        capture_output=True, text=True, timeout=60)
    assert p1.returncode == 0, p1.stderr
    val = _step("Validate submissions")
    env["MAINTAINER_CHANGE"] = "true" if label else "false"
    return subprocess.run([*bash, val["run"]], cwd=ws, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def card() -> bytes:
    return vs.real_card_bytes(12, fst=False)


def test_valid_card_passes(tmp_path, card):
    rel = canonical_relpath(loads_card(card, "x"))
    proc = _run_job(_workspace(tmp_path, {rel: card}), label=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok   {rel}" in proc.stdout and "validation passed: 1 file(s)" in proc.stdout


def test_change_outside_submissions_needs_label(tmp_path, card):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card, "README.md": b"changed\n"})
    proc = _run_job(ws, label=False)
    assert proc.returncode == 1 and "FAIL scope: README.md" in proc.stdout
    proc = _run_job(ws, label=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tampered_card_fails(tmp_path, card):
    data = json.loads(card)
    data["scores"]["chrf_plus_plus"] += 0.1
    sealed = vs.dump(vs.reseal(data))
    rel = canonical_relpath(loads_card(sealed, "x"))
    proc = _run_job(_workspace(tmp_path, {rel: sealed}), label=False)
    assert proc.returncode == 1 and "FAIL metrics" in proc.stdout and "$.scores.chrf_plus_plus" in proc.stdout


def test_pr_code_is_never_executed(tmp_path, card):
    """A PR carrying its own `mtboard` package, sitecustomize and conftest: none of it runs, even with the label."""
    marker = tmp_path / "PWNED"
    payload = f"open({str(marker)!r}, 'w').write('x')\n".encode()
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card, "mtboard/__init__.py": payload, "mtboard/cli.py": payload,
                               "mtboard/validate.py": payload, "sitecustomize.py": payload,
                               "conftest.py": payload, "corpora/evil.py": payload})
    proc = _run_job(ws, label=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()


def test_pr_deleting_a_submission_fails(tmp_path, card):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card})
    _git(ws / "pr", "rm", "-q", rel)
    _git(ws / "pr", "commit", "-qm", "delete someone else's card")
    proc = _run_job(ws, label=False)
    assert proc.returncode == 1 and "pull request deletes a submission" in proc.stdout
