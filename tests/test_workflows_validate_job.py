"""Issue 6: the validate workflow's own `run:` scripts, executed here the way GitHub runs them.

A scratch GITHUB_WORKSPACE holds ./base (a copy of this checkout's files: the trusted base branch) and ./pr, laid out
as `actions/checkout` leaves it for a `pull_request` run: GitHub's test merge commit ``refs/pull/N/merge`` (first
parent: the base branch's tip, which moved on after the pull request forked; second parent: the pull request's
head), fetched with depth 2 and checked out detached (install_support.pull_request_checkout). Every `run:` step of the
job is taken verbatim from .github/workflows/validate.yml and run with `bash --noprofile --norc -eo pipefail`
(GitHub's default shell), in order:

* "Install the documented environment's packages": the job runs in a ``debian:12`` container (issue 22: the
  documented environment, whose analysers cards record in ``fst_version``); ``apt-get`` is a stand-in that records the
  packages, and the test checks they are installed on this machine, which is that environment (Debian 12);
* "Install the base branch's mtboard (never the PR's)": once per module it builds the venv in RUNNER_TEMP with the
  system ``python3`` (Debian 12's is 3.11) and installs ./base with pip, NOT editable, exactly as the workflow does
  (issue 22: an editable install hid that the wheel had no prompts/); the `mtboard` it puts on GITHUB_PATH is the one
  the other steps run;
* "List the files the pull request changes" and "Validate submissions with the base branch's validator".

Cards are real (tests/validate_support.py): an Apertium card scored WITH the installed Spanish analyser, so it
carries this machine's ``fst_version`` — a card made on the documented Debian 12 passes CI. The prompted LLM card
made against a real llama-cpp-python server goes through this same job in tests/test_workflows_verify_job.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from mtboard.core.documents import loads_card
from mtboard.validate import canonical_relpath

import install_support as inst
import validate_support as vs

pytestmark = pytest.mark.slow  # the install step builds and installs the package (~30 s)

WF = inst.ROOT / ".github" / "workflows" / "validate.yml"
DOCUMENTED = inst.DOCUMENTED_ANALYSERS


def _workspace(tmp: Path, pr_files: dict[str, bytes], *, base_cards: dict[str, bytes] | None = None,
               delete: list[str] = (), corpus: Path = vs.CORPUS) -> Path:
    """GITHUB_WORKSPACE with ./base (only the corpora the validator reads) and ./pr (the merge commit of a pull
    request adding ``pr_files`` to a main that holds ``corpus``, ``base_cards`` and a README)."""
    ws = tmp / "ws"
    (ws / "base" / "corpora").mkdir(parents=True)
    (ws / "base" / "corpora" / corpus.name).write_bytes(corpus.read_bytes())
    base = {f"corpora/{corpus.name}": corpus.read_bytes(), "submissions/.gitkeep": b"", "README.md": b"base\n",
            **(base_cards or {})}
    inst.pull_request_checkout(tmp / "git", base, pr_files, ws / "pr", delete=list(delete))
    (tmp / "runner-temp").mkdir()
    return ws


@pytest.fixture(scope="module")
def mtboard_bin(validate_job_install) -> list[Path]:
    """PATH entries after the install steps (run once per session on a copy of this checkout as ./base:
    tests/conftest.py's ``validate_job_install``, shared with test_workflows_verify_job.py)."""
    return validate_job_install


def _run_job(ws: Path, mtboard_bin: list[Path], *, label: bool) -> subprocess.CompletedProcess:
    return inst.run_validate_job(ws, mtboard_bin, label=label)


def test_the_job_runs_in_the_documented_environment():
    """The validate, verify and site jobs run in a debian:12 container (the README's and scripts/setup.sh's
    environment) and install the analysers setup.sh installs; this machine is that environment."""
    setup = (inst.ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert "Debian 12" in setup and "Debian 12" in (inst.ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("validate.yml", "verify.yml", "site.yml"):
        path = inst.ROOT / ".github" / "workflows" / name
        # verify.yml has a gate job and a plugin job besides the re-run (issue 18): the re-run is the `verify` job
        job = yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"]["verify"] if name == "verify.yml" \
            else inst.workflow_job(path)
        assert job["container"]["image"] == "debian:12", name
        # verify.yml starts model servers in bubblewrap, which must create namespaces inside the container
        assert set(job["container"]) == ({"image", "options"} if name == "verify.yml" else {"image"}), name
        runs = "\n".join(s.get("run", "") for s in job["steps"])
        assert "sudo" not in runs and "setup-python" not in json.dumps(job), name  # root in the container
        for pkg in DOCUMENTED:
            assert pkg in runs and pkg in setup, (name, pkg)
    release = Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
    assert 'VERSION_ID="12"' in release and "ID=debian" in release, "the tests' machine is the documented Debian 12"


@pytest.fixture(scope="module")
def card() -> bytes:
    data = vs.real_card_bytes(12, fst=None)  # scored with the installed analyser: fst_version of Debian 12
    assert loads_card(data, "x").fst_version.startswith("apertium-eng-spa ")
    return data


def test_valid_card_passes(tmp_path, card, mtboard_bin):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card})
    assert inst.git(ws / "pr", "rev-list", "--parents", "-n1", "HEAD").count(" ") == 2  # a merge commit
    proc = _run_job(ws, mtboard_bin, label=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok   {rel}" in proc.stdout and "validation passed: 1 file(s)" in proc.stdout
    assert (ws.parent / "runner-temp" / "changes.z").read_bytes() == f"A\0{rel}\0".encode()


def test_a_japanese_card_passes(tmp_path, mtboard_bin):
    """en→ja cards are scored with sacrebleu's ja-mecab tokenizer: the job's hashed install must bring the ``ja``
    extra's MeCab packages (requirements/ci.txt), or every Japanese card fails recomputation in CI."""
    path = sorted((inst.ROOT / "submissions" / "mtb-en-ja-dev").glob("gemma-*.json"))[0]
    card = path.read_bytes()
    assert loads_card(card, "x").scores.signatures.bleu.split("|tok:")[1].startswith("ja-mecab")
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {rel: card}, corpus=inst.ROOT / "corpora" / "mtb-en-ja-dev.json")
    proc = _run_job(ws, mtboard_bin, label=False)
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
    ws = _workspace(tmp_path, {rel: card, "mtboard/__init__.py": payload, "mtboard/cli/main.py": payload,
                               "mtboard/cli/entry.py": payload, "mtboard/cli/validate.py": payload,
                               "mtboard/validate.py": payload, "sitecustomize.py": payload,
                               "conftest.py": payload, "corpora/evil.py": payload})
    proc = _run_job(ws, mtboard_bin, label=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()


def test_pr_deleting_a_submission_fails(tmp_path, card, mtboard_bin):
    rel = canonical_relpath(loads_card(card, "x"))
    ws = _workspace(tmp_path, {}, base_cards={rel: card}, delete=[rel])
    proc = _run_job(ws, mtboard_bin, label=False)
    assert proc.returncode == 1 and "pull request deletes a submission" in proc.stdout


def test_the_job_summary_lists_the_submission_gate(tmp_path, card, mtboard_bin):
    """Issue 39 item 1: the step after the validation appends the submission gate's rules met and missed (`mtboard
    validate --format markdown`) to $GITHUB_STEP_SUMMARY, and never fails the job itself — not even for a card the
    validation refused."""
    rel = canonical_relpath(loads_card(card, "x"))
    data = json.loads(card)
    data["scores"]["chrf_plus_plus"] += 0.1
    bad = vs.dump(vs.reseal(data))
    bad_rel = canonical_relpath(loads_card(bad, "x"))
    ws = _workspace(tmp_path, {rel: card, bad_rel: bad})
    assert _run_job(ws, mtboard_bin, label=False).returncode == 1  # also lists the changes for the next step
    summary = tmp_path / "summary.md"
    step = inst.workflow_step(WF, "Write the submission gate's rules")
    assert step["if"] == "${{ !cancelled() }}"
    env = inst.clean_env(mtboard_bin, GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(ws.parent / "runner-temp"),
                         GITHUB_STEP_SUMMARY=str(summary), MAINTAINER_CHANGE="false")
    proc = subprocess.run([*inst.BASH, step["run"]], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("## mtboard validate\n")
    assert f"### ok `{rel}`" in md and f"### FAIL `{bad_rel}`" in md and "Failing checks: metrics." in md
    assert md.count("Checked as a **self-benchmarked** submission") == 2
    assert "- [x] `development-only` (§9.2.1, required): met — 12 development entries" in md
    assert "- [ ] `run-card` (§9.1.1, required): MISSED — the check(s) metrics failed" in md
    assert "**validation FAILED**: 2 file(s), 1 failed" in md
