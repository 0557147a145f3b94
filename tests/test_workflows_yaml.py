"""Issue 6: the GitHub Actions workflows keep their security properties.

Three independent checkers:
* actionlint (the real linter, installed from PyPI by the dev extra) must report nothing on .github/workflows, and must
  report the classic script injection on a crafted bad workflow (so this test can fail);
* zizmor (the GitHub Actions security linter, dev extra; issue 21) at its default level (persona ``regular``, every
  severity) with ``--offline`` (its online audits need a GitHub token and network): 0 findings on the workflows, and
  the template injection reported (exit code 14: a high-severity finding) on the same crafted bad workflow;
* our own YAML-level rules: triggers, permissions, actions pinned to full commit SHAs, no expression inside `run:`,
  no `pull_request_target`, no secrets in the pull-request workflow, base-branch code only. The rules are also run on
  crafted bad workflows to show each one fires.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WF = ROOT / ".github" / "workflows"
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$")


def load(name_or_text: str) -> dict:
    text = (WF / name_or_text).read_text(encoding="utf-8") if name_or_text.endswith(".yml") else name_or_text
    data = yaml.safe_load(text)
    # YAML 1.1 reads the key `on` as the boolean True.
    if True in data:
        data["on"] = data.pop(True)
    return data


def steps(wf: dict):
    for job_name, job in wf["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, job, step


def rule_problems(wf: dict, *, pull_request: bool) -> list[str]:
    """Our YAML-level rules; returns one string per violation."""
    out: list[str] = []
    triggers = wf["on"] if isinstance(wf["on"], dict) else {t: None for t in ([wf["on"]] if isinstance(wf["on"], str)
                                                                               else wf["on"])}
    if "pull_request_target" in triggers or "workflow_run" in triggers:
        out.append("privileged trigger (pull_request_target/workflow_run)")
    top = wf.get("permissions")
    if not isinstance(top, dict) or top != {"contents": "read"}:
        out.append(f"top-level permissions must be exactly contents: read, got {top!r}")
    for job_name, job, step in steps(wf):
        uses = step.get("uses")
        if uses is not None and not PINNED.match(uses):
            out.append(f"{job_name}: action not pinned to a 40-hex commit SHA: {uses}")
        run = step.get("run")
        if run is not None and "${{" in run:
            out.append(f"{job_name}: expression interpolated inside run: ({step.get('name')})")
        if uses and uses.startswith("actions/checkout@"):
            if (step.get("with") or {}).get("persist-credentials") is not False:
                out.append(f"{job_name}: checkout keeps credentials (set persist-credentials: false)")
    if pull_request:
        text = yaml.safe_dump(wf)
        if "secrets." in text:
            out.append("pull-request workflow references secrets")
        for job_name, job, _ in steps(wf):
            perms = job.get("permissions")
            if perms not in (None, {"contents": "read"}):
                out.append(f"{job_name}: job escalates permissions: {perms!r}")
    return out


# --------------------------------------------------------------------------------------------------------------------
# actionlint


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / "actionlint"
    return str(here) if here.exists() else shutil.which("actionlint")


@pytest.fixture(scope="module")
def actionlint():
    exe = _actionlint()
    if exe is None:
        pytest.skip("actionlint not installed (pip install -e '.[dev]')")
    return exe


def test_actionlint_clean(actionlint):
    files = sorted(str(p) for p in WF.glob("*.yml"))
    assert len(files) == 6  # lineage.yml and canary.yml (issue 38) with validate, verify, site and sweep
    proc = subprocess.run([actionlint, "-no-color", *files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


BAD_INJECTION = """
name: bad
on: pull_request
permissions:
  contents: read
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.event.pull_request.title }}"
"""


def test_actionlint_flags_injection(actionlint, tmp_path):
    p = tmp_path / ".github" / "workflows" / "bad.yml"
    p.parent.mkdir(parents=True)
    p.write_text(BAD_INJECTION)
    proc = subprocess.run([actionlint, "-no-color", str(p)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "github.event.pull_request.title" in proc.stdout and "untrusted" in proc.stdout


# --------------------------------------------------------------------------------------------------------------------
# zizmor (issue 21)


@pytest.fixture(scope="module")
def zizmor():
    here = Path(sys.executable).parent / "zizmor"
    exe = str(here) if here.exists() else shutil.which("zizmor")
    if exe is None:
        pytest.skip("zizmor not installed (pip install -e '.[dev]')")
    return exe


def test_zizmor_clean(zizmor):
    proc = subprocess.run([zizmor, "--offline", "--no-progress", str(WF)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout, proc.stdout + proc.stderr


def test_zizmor_flags_injection(zizmor, tmp_path):
    p = tmp_path / ".github" / "workflows" / "bad.yml"
    p.parent.mkdir(parents=True)
    p.write_text(BAD_INJECTION)
    proc = subprocess.run([zizmor, "--offline", "--no-progress", str(p)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 14, proc.stdout + proc.stderr
    assert "error[template-injection]" in proc.stdout and "github.event.pull_request.title" in proc.stdout


# --------------------------------------------------------------------------------------------------------------------
# Our rules on the real workflows


def test_all_workflows_follow_rules():
    for name in ("validate.yml", "verify.yml", "site.yml", "sweep.yml", "lineage.yml", "canary.yml"):
        assert rule_problems(load(name), pull_request=name in ("validate.yml", "lineage.yml")) == [], name


def test_no_privileged_trigger_anywhere():
    for p in WF.glob("*.yml"):
        text = p.read_text(encoding="utf-8")
        assert "pull_request_target" not in text.replace("never `pull_request_target`", "")
        assert "workflow_run" not in text


def test_every_action_is_pinned_and_known():
    seen = set()
    for p in WF.glob("*.yml"):
        for _, _, step in steps(load(p.name)):
            if "uses" in step:
                assert PINNED.match(step["uses"]), step["uses"]
                seen.add(step["uses"].split("@")[0])
    assert seen == {"actions/checkout", "actions/upload-artifact", "actions/download-artifact",
                    "actions/attest-build-provenance", "actions/upload-pages-artifact", "actions/deploy-pages",
                    "actions/cache"}  # issue 35 item 3: the site's build cache


def test_the_build_cache_is_used_only_by_the_site_workflow_which_runs_on_main_only():
    """Issue 35 item 3 (docs/SECURITY.md, "The build cache"): a cache a pull request could write must never be read
    by the job that publishes the site. Only site.yml uses actions/cache; it runs on pushes to main and by hand."""
    users = {p.name for p in WF.glob("*.yml")
             if any(step.get("uses", "").startswith("actions/cache@") for _, _, step in steps(load(p.name)))}
    assert users == {"site.yml"}
    wf = load("site.yml")
    on = wf.get("on", wf.get(True))
    assert set(on) == {"push", "workflow_dispatch"} and on["push"] == {"branches": ["main"]}
    (cache,) = [step for _, _, step in steps(wf) if step.get("uses", "").startswith("actions/cache@")]
    assert cache["with"]["path"] == ".mtboard-cache"
    assert cache["with"]["key"].endswith("-${{ github.run_id }}")  # a new entry per run: caches are immutable
    (build,) = [step for _, _, step in steps(wf) if "mtboard build" in step.get("run", "")]
    assert "--cache .mtboard-cache" in build["run"]


def test_no_event_expression_inside_run():
    # The literal rule, checked on the raw text of every run: block (not only on parsed YAML).
    for p in WF.glob("*.yml"):
        for _, _, step in steps(load(p.name)):
            run = step.get("run", "")
            assert "github.event" not in run and "github.head_ref" not in run and "${{" not in run, p.name


def test_validate_workflow_shape():
    wf = load("validate.yml")
    assert set(wf["on"]) == {"pull_request"}
    assert set(wf["on"]["pull_request"]["types"]) >= {"opened", "synchronize", "reopened", "labeled", "unlabeled"}
    assert wf["permissions"] == {"contents": "read"}
    st = [s for _, _, s in steps(wf)]
    checkouts = [s for s in st if s.get("uses", "").startswith("actions/checkout@")]
    base, pr = checkouts
    assert base["with"]["path"] == "base" and base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert pr["with"]["path"] == "pr" and "ref" not in pr["with"]  # the merge commit: HEAD^1 is the base tip
    runs = "\n".join(s.get("run", "") for s in st)
    # Only the base checkout is installed; nothing is installed, imported or executed from ./pr.
    joined = re.sub(r" ?\\\n\s*", " ", runs)
    assert re.findall(r"pip\"? install[^\n]*", joined) == [
        'pip" install --disable-pip-version-check --quiet --require-hashes -r ./base/requirements/ci.txt',
        'pip" install --disable-pip-version-check --quiet --no-index --no-deps --no-build-isolation ./base']
    assert "./pr" not in runs and "python -m mtboard" not in runs and "pr/mtboard" not in runs
    validate_step = next(s for s in st if "mtboard validate" in s.get("run", ""))
    assert 'cd "$RUNNER_TEMP"' in validate_step["run"]  # never run with the PR tree as working directory
    assert '--corpora "$GITHUB_WORKSPACE/base/corpora"' in validate_step["run"]
    assert validate_step["env"] == {
        "MAINTAINER_CHANGE": "${{ contains(github.event.pull_request.labels.*.name, 'maintainer-change') }}"}


def test_verify_workflow_shape():
    wf = load("verify.yml")
    assert set(wf["on"]) == {"workflow_dispatch"}
    inputs = wf["on"]["workflow_dispatch"]["inputs"]
    assert inputs["card"]["required"] and inputs["sha"]["required"]
    # issue 18: the gate decides from the card where a plugin's code may run; only builtin and approved-plugin cards
    # reach the job with the environment and its secrets; an unapproved plugin runs in a job that has neither
    assert set(wf["jobs"]) == {"gate", "verify", "verify-plugin-without-secrets"}
    gate, plain = wf["jobs"]["gate"], wf["jobs"]["verify-plugin-without-secrets"]
    for other in (gate, plain):
        assert "environment" not in other and other["permissions"] == {"contents": "read"}
        assert "secrets." not in yaml.safe_dump(other)
    assert "mtboard\" plugin-gate" in "\n".join(s.get("run", "") for s in gate["steps"])
    assert plain["if"] == "${{ needs.gate.outputs.plugin == 'unapproved' }}" and plain["needs"] == "gate"
    job = wf["jobs"]["verify"]
    assert job["if"] == "${{ needs.gate.outputs.plugin != 'unapproved' }}" and job["needs"] == "gate"
    install = next(s for s in job["steps"] if "--check-installed" in s.get("run", ""))
    assert install["if"] == "${{ needs.gate.outputs.plugin == 'approved' }}"
    assert "--only-binary :all: --no-deps" in install["run"]
    assert job["environment"] == "verification"
    assert job["permissions"] == {"contents": "read", "id-token": "write", "attestations": "write"}
    st = job["steps"]
    data = next(s for s in st if s.get("with", {}).get("path") == "data")
    assert data["with"]["ref"] == "${{ inputs.sha }}" and data["with"]["sparse-checkout"] == "submissions"
    runs = "\n".join(s.get("run", "") for s in st)
    assert "./harness" in runs and "./data" not in runs.replace("$GITHUB_WORKSPACE/data", "")
    assert re.search(r"\[\[ \"\$SHA\" =~ \^\[0-9a-f\]\{40\}\$ \]\]", runs)
    verify = next(s for s in st if "mtboard verify" in s.get("run", ""))
    assert '--commit "$SHA"' in verify["run"]
    # Secrets appear only in the env of the one step that needs them, and (issue 17) as the deploy key of the
    # checkout of the private secret-corpora repository, which is removed after the re-run.
    secret_checkout = next(s for s in st if s.get("with", {}).get("path") == "secret-corpora")
    assert secret_checkout["with"] == {
        "repository": "${{ vars.MTBOARD_SECRET_CORPORA_REPOSITORY }}",
        "ssh-key": "${{ secrets.MTBOARD_SECRET_CORPORA_DEPLOY_KEY }}", "path": "secret-corpora",
        "persist-credentials": False}
    assert secret_checkout["if"] == "${{ inputs.segment != 'development' }}"
    for s in st:
        if s is not verify and s is not secret_checkout:
            assert "secrets." not in yaml.safe_dump(s)
    names = [s.get("name", "") for s in st]
    removal = next(s for s in st if s.get("name") == "Remove the secret corpora")
    assert removal["if"] == "${{ always() }}"
    assert names.index("Remove the secret corpora") == names.index(verify["name"]) + 1
    held = next(s for s in st if "mtboard held-out-check" in s.get("run", ""))
    assert held["if"] == "${{ inputs.segment == 'held_out' }}"
    assert names.index(held["name"]) < names.index(verify["name"])
    assert '--segment "$SEGMENT"' in verify["run"] and "--secret-corpus" in verify["run"]
    attest = next(s for s in st if s.get("uses", "").startswith("actions/attest-build-provenance@"))
    assert "*.verification.json" in attest["with"]["subject-path"] and "*.scores.json" in attest["with"]["subject-path"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in st)


def test_site_workflow_shape():
    wf = load("site.yml")
    assert wf["on"]["push"] == {"branches": ["main"]}
    assert wf["permissions"] == {"contents": "read"}
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert "permissions" not in build
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages" and deploy["needs"] == "build"
    runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert "mtboard validate" in runs and "mtboard build" in runs


# --------------------------------------------------------------------------------------------------------------------
# The rules fire on bad workflows (hand-made examples of each mistake)

BAD = {
    "pull_request_target": ("on: pull_request_target\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                            "[{run: echo}]}}", "privileged trigger"),
    "unpinned": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                 "[{uses: actions/checkout@v4, with: {persist-credentials: false}}]}}", "not pinned"),
    "short sha": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                  "[{uses: actions/checkout@11d5960, with: {persist-credentials: false}}]}}", "not pinned"),
    "write perms": ("on: pull_request\npermissions: write-all\njobs: {x: {runs-on: u, steps: [{run: echo}]}}",
                    "top-level permissions"),
    "job escalation": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, permissions: "
                       "{contents: write}, steps: [{run: echo}]}}", "escalates"),
    "title in run": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                     "[{run: 'echo ${{ github.event.pull_request.title }}'}]}}", "inside run"),
    "branch in run": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                      "[{run: 'git checkout ${{ github.head_ref }}'}]}}", "inside run"),
    "secret in PR": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                     "[{run: echo, env: {K: '${{ secrets.OPENAI_API_KEY }}'}}]}}", "references secrets"),
    "credentials kept": ("on: pull_request\npermissions: {contents: read}\njobs: {x: {runs-on: u, steps: "
                         "[{uses: 'actions/checkout@" + "a" * 40 + "'}]}}", "keeps credentials"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_rules_fire_on_bad_workflow(case):
    text, needle = BAD[case]
    problems = rule_problems(load(text), pull_request=True)
    assert any(needle in p for p in problems), problems


# --------------------------------------------------------------------------------------------------------------------
# Issue 34 item 5: every job named, every permission explained, zizmor's auditor persona argued finding by finding


def documentation_problems(text: str) -> list[str]:
    """Jobs without a ``name:`` (zizmor's ``anonymous-definition``) and permissions without an explanatory comment on
    their own line (``undocumented-permissions``; every key, ``contents: read`` included): one string each."""
    out: list[str] = []
    for job_id, job in (load(text).get("jobs") or {}).items():
        if not isinstance(job, dict) or not str(job.get("name") or "").strip():
            out.append(f"job {job_id} has no name")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)permissions:(.*)$", line)
        if not m:
            continue
        if m.group(2).split("#", 1)[0].strip():  # `permissions: read-all` / `{contents: read}` on one line
            if "#" not in m.group(2):
                out.append(f"line {i + 1}: permissions without a comment")
            continue
        for j in range(i + 1, len(lines)):
            key = lines[j]
            if not key.strip() or len(key) - len(key.lstrip()) <= len(m.group(1)):
                break
            if not re.search(r"\S\s+#\s*\S", key):
                out.append(f"line {j + 1}: {key.strip()} has no comment")
    return out


def test_every_job_is_named_and_every_permission_explained():
    for p in sorted(WF.glob("*.yml")):
        assert documentation_problems(p.read_text(encoding="utf-8")) == [], p.name
    # the branch-protection check keeps its name (docs/maintainers.md §1.3)
    assert load("validate.yml")["jobs"]["validate"]["name"] == "validate"


def test_the_documentation_rule_fires():
    bad = ("on: push\npermissions:\n  contents: read\njobs:\n  x:\n    runs-on: u\n    permissions:\n"
           "      contents: write  # push the cards\n      id-token: write\n    steps: [{run: echo}]\n"
           "  y:\n    name: ' '\n    runs-on: u\n    permissions: read-all\n    steps: [{run: echo}]\n")
    assert documentation_problems(bad) == ["job x has no name", "job y has no name",
                                           "line 3: contents: read has no comment",
                                           "line 9: id-token: write has no comment",
                                           "line 14: permissions without a comment"]


def test_jobs_that_hold_secrets_declare_it_and_only_they():
    """``MTBOARD_SECRETS_JOB`` (docs/environment.md): set on the jobs of a protected environment with secrets, so
    neural metrics there load only allow-listed revisions; never on a job without secrets (that is where an unlisted
    revision is re-scored)."""
    declared = {}
    for p in sorted(WF.glob("*.yml")):
        for job_id, job in load(p.name)["jobs"].items():
            holds = "secrets." in yaml.safe_dump(job) and "environment" in job
            declared[(p.name, job_id)] = (holds, (job.get("env") or {}).get("MTBOARD_SECRETS_JOB"))
    assert {k: v for k, v in declared.items() if v != (False, None)} == {
        ("verify.yml", "verify"): (True, "1"), ("sweep.yml", "cell"): (True, "1"), ("canary.yml", "canary"): (True, "1")}
    plain = load("verify.yml")["jobs"]["verify-plugin-without-secrets"]
    runs = "\n".join(s.get("run", "") for s in plain["steps"])
    assert "requirements/comet.txt" in runs and "bubblewrap" in runs and "SYS_ADMIN" in plain["container"]["options"]
    assert 'if [ -n "$REQUIREMENT" ]; then' in runs  # a card without a plugin comes here for its neural revision


def _security_findings() -> set[tuple[str, str, str]]:
    """The table of docs/SECURITY.md's section "Remaining zizmor findings": (audit, workflow file, job) per row."""
    text = (ROOT / "docs" / "SECURITY.md").read_text(encoding="utf-8")
    section = text.split("## Remaining zizmor findings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| `([a-z-]+\.yml)` \| `([A-Za-z0-9_-]+)` \| (.+) \|$", section, re.M)
    assert all(len(arg.strip()) > 40 for *_, arg in rows)  # each row carries its argument
    return {(a, f, j) for a, f, j, _ in rows}


def test_zizmor_auditor_persona_finds_only_what_security_md_argues(zizmor):
    """zizmor's most sensitive persona (``--persona auditor``): every finding is a row of docs/SECURITY.md's section
    "Remaining zizmor findings", with its argument, and every row is still a finding (a fixed one leaves the table)."""
    import json

    proc = subprocess.run([zizmor, "--persona", "auditor", "--offline", "--no-progress", "--format", "json", str(WF)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 11, 12, 13, 14), proc.stderr  # 1x: findings of some severity, not a crash
    found = set()
    for f in json.loads(proc.stdout):
        (primary,) = [loc["symbolic"] for loc in f["locations"] if loc["symbolic"]["kind"] == "Primary"][:1]
        route = [next(iter(r.values())) for r in primary["route"]["route"]]
        job = route[1] if route[:1] == ["jobs"] and len(route) > 1 else "-"
        found.add((f["ident"], Path(primary["key"]["Local"]["verbatim_path"]).name, job))
    assert found == _security_findings()
    assert {a for a, _, _ in found} <= {"unpinned-images"}  # today: the debian:12 tag only (no digest obtainable)


def test_the_canary_workflow_keeps_its_secrets_in_one_step():
    """Issue 38 item 3 (docs/maintainers.md "Drift canaries"): weekly and by hand; the API secrets only in the step
    that re-runs the listed cards, in the protected `canaries` environment; the listing and the upload hold none; no
    write permission anywhere."""
    wf = load("canary.yml")
    assert set(wf["on"]) == {"schedule", "workflow_dispatch"} and wf["on"]["schedule"] == [{"cron": "17 4 * * 1"}]
    (job,) = wf["jobs"].values()
    assert job["environment"] == "canaries" and job["permissions"] == {"contents": "read"}
    with_secrets = [step["name"] for step in job["steps"] if "secrets." in yaml.safe_dump(step)]
    assert with_secrets == ["Re-run each card on its canary set"]
    (rerun,) = [step for step in job["steps"] if step["name"] == with_secrets[0]]
    assert "mtboard\" canary run \"$card\"" in rerun["run"] and "uses" not in rerun
    listing = next(step for step in job["steps"] if "canary list" in step.get("run", ""))
    assert "env" not in listing
