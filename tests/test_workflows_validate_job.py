"""Issue 6: the validate workflow's own `run:` scripts, executed here the way GitHub runs them.

A scratch GITHUB_WORKSPACE holds ./base (trusted corpora) and ./pr (a git repository whose HEAD is a merge-like commit
on top of the base tip, as `actions/checkout` gives for `pull_request`). The steps "List the files the pull request
changes" and "Validate submissions with the base branch's validator" are taken verbatim from
.github/workflows/validate.yml and run with `bash --noprofile --norc -eo pipefail` (GitHub's default shell). So is
the step "Install the base branch's mtboard (never the PR's)": once per module it builds the venv in RUNNER_TEMP and
installs ./base (a copy of this checkout's files) with pip, not editable, exactly as the workflow does (issue 22: an
editable install hid that the wheel had no prompts/); the `mtboard` it puts on GITHUB_PATH is the one the other steps
run, and `python` on PATH is the base interpreter (what actions/setup-python gives). Cards are real
(tests/validate_support.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mtboard.documents import loads_card
from mtboard.validate import canonical_relpath

import install_support as inst
import validate_support as vs

pytestmark = pytest.mark.slow  # the install step builds and installs the package (~30 s)

WF = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "validate.yml"
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


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


@pytest.fixture(scope="module")
def mtboard_bin(tmp_path_factory) -> list[Path]:
    """PATH entries after the install step: the venv's bin (from GITHUB_PATH), then setup-python's."""
    tmp = tmp_path_factory.mktemp("install")
    ws = tmp / "ws"
    inst.copy_checkout(ws / "base")
    (tmp / "runner-temp").mkdir()
    github_path = tmp / "github-path"
    github_path.write_text("")
    python_dir = inst.setup_python(tmp / "setup-python")
    env = inst.clean_env([python_dir], GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(tmp / "runner-temp"),
                         GITHUB_PATH=str(github_path))
    proc = subprocess.run([*BASH, _step("Install the base branch's mtboard")["run"]], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (venv_bin,) = github_path.read_text().split()
    direct_url = next(Path(venv_bin).parent.glob("lib/python3*/site-packages/mtboard-*.dist-info/direct_url.json"))
    assert not json.loads(direct_url.read_text()).get("dir_info", {}).get("editable", False)  # not editable
    return [Path(venv_bin), python_dir]


def _run_job(ws: Path, mtboard_bin: list[Path], *, label: bool) -> subprocess.CompletedProcess:
    env = inst.clean_env(mtboard_bin, GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(ws.parent / "runner-temp"))
    list_step = _step("List the files")
    p1 = subprocess.run([*BASH, list_step["run"]], cwd=ws / list_step["working-directory"], env=env,
                        capture_output=True, text=True, timeout=60)
    assert p1.returncode == 0, p1.stderr
    val = _step("Validate submissions")
    env["MAINTAINER_CHANGE"] = "true" if label else "false"
    return subprocess.run([*BASH, val["run"]], cwd=ws, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def card() -> bytes:
    return vs.real_card_bytes(12, fst=False)


def test_valid_card_passes(tmp_path, card, mtboard_bin):
    rel = canonical_relpath(loads_card(card, "x"))
    proc = _run_job(_workspace(tmp_path, {rel: card}), mtboard_bin, label=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok   {rel}" in proc.stdout and "validation passed: 1 file(s)" in proc.stdout


def test_change_outside_submissions_needs_label(tmp_path, card, mtboard_bin):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card, "README.md": b"changed\n"})
    proc = _run_job(ws, mtboard_bin, label=False)
    assert proc.returncode == 1 and "FAIL scope: README.md" in proc.stdout
    proc = _run_job(ws, mtboard_bin, label=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tampered_card_fails(tmp_path, card, mtboard_bin):
    data = json.loads(card)
    data["scores"]["chrf_plus_plus"] += 0.1
    sealed = vs.dump(vs.reseal(data))
    rel = canonical_relpath(loads_card(sealed, "x"))
    proc = _run_job(_workspace(tmp_path, {rel: sealed}), mtboard_bin, label=False)
    assert proc.returncode == 1 and "FAIL metrics" in proc.stdout and "$.scores.chrf_plus_plus" in proc.stdout


def test_pr_code_is_never_executed(tmp_path, card, mtboard_bin):
    """A PR carrying its own `mtboard` package, sitecustomize and conftest: none of it runs, even with the label."""
    marker = tmp_path / "PWNED"
    payload = f"open({str(marker)!r}, 'w').write('x')\n".encode()
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card, "mtboard/__init__.py": payload, "mtboard/cli.py": payload,
                               "mtboard/validate.py": payload, "sitecustomize.py": payload,
                               "conftest.py": payload, "corpora/evil.py": payload})
    proc = _run_job(ws, mtboard_bin, label=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()


def test_pr_deleting_a_submission_fails(tmp_path, card, mtboard_bin):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card})
    _git(ws / "pr", "rm", "-q", rel)
    _git(ws / "pr", "commit", "-qm", "delete someone else's card")
    proc = _run_job(ws, mtboard_bin, label=False)
    assert proc.returncode == 1 and "pull request deletes a submission" in proc.stdout
