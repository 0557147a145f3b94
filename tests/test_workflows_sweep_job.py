"""Issue 16: .github/workflows/sweep.yml — its plan and collect steps run here the way GitHub runs them, and its
shape keeps the security properties (no contributor code next to the secrets, one protected environment, pinned
actions; actionlint and zizmor run over it in tests/test_workflows_yaml.py).

The `run:` scripts are taken verbatim from the workflow and run with GitHub's default shell
(``bash --noprofile --norc -eo pipefail``) in a scratch GITHUB_WORKSPACE laid out as the checkouts leave it:
./harness (this checkout's files: the trusted default branch) and ./data (the dispatched ref, sweeps/ only). The
collect step reads a folder laid out as ``actions/download-artifact`` (v4, ``pattern: sweep-card-*``, no
``merge-multiple``) leaves it: one ``sweep-card-CELL_ID/`` folder per artifact with the ``card.json`` the matrix job
uploaded. The cards are the committed cards of the real sweep (submissions/), so the base branch's validator
re-derives real scores.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mtboard.core.documents import load_card
from mtboard.sweeps.collect import mismatch
from mtboard.sweeps.spec import load_sweep

import install_support as inst
from test_workflows_yaml import load, rule_problems

ROOT = inst.ROOT
WF = ROOT / ".github" / "workflows" / "sweep.yml"
SWEEP_REL = "sweeps/gemma-270m-temperature.yaml"
VENV_BIN = Path(__import__("sys").executable).parent


def _step(job: str, name_start: str) -> dict:
    return next(s for s in load("sweep.yml")["jobs"][job]["steps"] if s.get("name", "").startswith(name_start))


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    for part in ("corpora", "sweeps", "prompts"):
        shutil.copytree(ROOT / part, ws / "harness" / part)
    (ws / "harness" / "submissions").mkdir(parents=True)
    shutil.copytree(ROOT / "sweeps", ws / "data" / "sweeps")
    (tmp / "runner-temp").mkdir()
    return ws


def _env(ws: Path, **extra: str) -> dict[str, str]:
    return inst.clean_env([VENV_BIN], GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(ws.parent / "runner-temp"),
                          GITHUB_OUTPUT=str(ws.parent / "github-output"), **extra)


def committed_sweep_cards() -> dict[str, Path]:
    """cell id → the committed card that is its run (the real sweep's cards under submissions/)."""
    sweep = load_sweep(ROOT / SWEEP_REL)
    out: dict[str, Path] = {}
    for path in sorted((ROOT / "submissions").glob("*/*.json")):
        if path.name.endswith(".verification.json"):
            continue
        card = load_card(path)
        for cell in sweep.cells:
            if (card.dataset.id == cell.dataset_id and mismatch(cell, card) is None
                    and card.dataset.sha256 == cell.components["dataset_sha256"]
                    and card.method.prompt_template_sha256 == cell.components["prompt_template_sha256"]):
                out[cell.id] = path
    return out


@pytest.mark.slow  # a whole-system test: 17 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_plan_step_emits_the_matrix_and_refuses_over_budget(tmp_path):
    ws = _workspace(tmp_path)
    step = _step("plan", "Plan the sweep")
    proc = subprocess.run([*inst.BASH, step["run"]], cwd=ws, capture_output=True, text=True, timeout=600,
                          env=_env(ws, SWEEP=SWEEP_REL, CHUNK="0", BUDGET="0"))
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split("=", 1) for line in (tmp_path / "github-output").read_text().splitlines())
    matrix = json.loads(out["matrix"])
    ids = [c.id for c in load_sweep(ROOT / SWEEP_REL).cells]
    assert matrix == {"include": [{"cell": i} for i in ids]} and out["max_parallel"] == "4"
    assert "11 cells" in proc.stderr
    plan = json.loads((tmp_path / "runner-temp" / "plan.json").read_text())
    assert plan["sweep"] == "gemma-270m-temperature" and len(plan["chunks"]) == 1
    # a chunk that does not exist, and a priced sweep over its budget, stop the workflow before any cell runs
    (tmp_path / "github-output").unlink()
    missing = subprocess.run([*inst.BASH, step["run"]], cwd=ws, capture_output=True, text=True, timeout=600,
                             env=_env(ws, SWEEP=SWEEP_REL, CHUNK="1", BUDGET="0"))
    assert missing.returncode != 0 and "chunk 1 does not exist: the sweep has 1 chunk(s)" in missing.stderr
    priced = ws / "data" / "sweeps" / "priced.yaml"
    priced.write_text("name: priced\ndatasets: [corpora/mtb-en-es-dev.json]\nprompts: [translate-chat]\n"
                      "methods: [{method: 'openai:gpt-4o'}]\n", encoding="utf-8")
    over = subprocess.run([*inst.BASH, step["run"]], cwd=ws, capture_output=True, text=True, timeout=600,
                          env=_env(ws, SWEEP="sweeps/priced.yaml", CHUNK="0", BUDGET="0.01"))
    assert over.returncode != 0 and "over budget" in over.stderr


@pytest.mark.slow  # a whole-system test: 6 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_collect_step_validates_downloaded_cards_and_files_them(tmp_path):
    cards = committed_sweep_cards()
    assert len(cards) == 11, "every cell of the committed sweep has its committed card"
    ws = _workspace(tmp_path)
    downloaded = tmp_path / "runner-temp" / "cards"
    ids = sorted(cards)
    for cid in ids[:-1]:  # the last cell's job "failed": no artifact
        (downloaded / f"sweep-card-{cid}").mkdir(parents=True)
        shutil.copy(cards[cid], downloaded / f"sweep-card-{cid}" / "card.json")
    step = _step("collect", "Validate the cards")
    proc = subprocess.run([*inst.BASH, step["run"]], cwd=ws, capture_output=True, text=True, timeout=900,
                          env=_env(ws, SWEEP=SWEEP_REL))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    filed = sorted(p.relative_to(ws / "harness").as_posix() for p in (ws / "harness" / "submissions").glob("*/*"))
    assert filed == sorted(cards[c].relative_to(ROOT).as_posix() for c in ids[:-1])  # the canonical paths
    for cid in ids[:-1]:  # the bytes validated are the bytes filed
        assert (ws / "harness" / cards[cid].relative_to(ROOT)).read_bytes() == cards[cid].read_bytes()
    assert f"missing     {ids[-1]} (no artifact)" in proc.stdout
    assert "collected   10 new card(s), 0 already submitted, 1 missing, 0 refused" in proc.stdout
    body = (tmp_path / "runner-temp" / "pr-body.md").read_text()
    assert "10 new card(s), validated with the base branch's validator" in body and ids[-1] in body
    assert not list(downloaded.glob("*/pr-body-*.md"))  # nothing but the cards reaches the pull request


@pytest.mark.slow  # 4.4 CPU-s, 7 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_collect_step_refuses_a_tampered_or_misplaced_card(tmp_path):
    cards = committed_sweep_cards()
    ws = _workspace(tmp_path)
    downloaded = tmp_path / "runner-temp" / "cards"
    ids = sorted(cards)
    good, swapped, tampered = ids[0], ids[1], ids[2]
    (downloaded / f"sweep-card-{good}").mkdir(parents=True)
    shutil.copy(cards[good], downloaded / f"sweep-card-{good}" / "card.json")
    (downloaded / f"sweep-card-{swapped}").mkdir()  # another cell's card in this cell's artifact
    shutil.copy(cards[ids[3]], downloaded / f"sweep-card-{swapped}" / "card.json")
    doc = json.loads(cards[tampered].read_text(encoding="utf-8"))
    doc["scores"]["chrf_plus_plus"] += 5.0
    (downloaded / f"sweep-card-{tampered}").mkdir()
    (downloaded / f"sweep-card-{tampered}" / "card.json").write_text(json.dumps(doc), encoding="utf-8")
    (downloaded / "sweep-plan").mkdir()  # an artifact that is no card
    proc = subprocess.run([*inst.BASH, _step("collect", "Validate the cards")["run"]], cwd=ws, capture_output=True,
                          text=True, timeout=900, env=_env(ws, SWEEP=SWEEP_REL))
    assert proc.returncode == 1
    assert f"refused     sweep-card-{swapped}: not the planned run" in proc.stdout
    assert f"refused     sweep-card-{tampered}: " in proc.stdout and "validation" in proc.stdout
    assert "refused     sweep-plan: not a sweep-card-CELL_ID artifact folder" in proc.stdout
    # exit 1 means nothing was filed: the good card waits until the refused ones are explained (docs/sweeps.md)
    assert "collected   0 new card(s), 0 already submitted, 8 missing, 3 refused" in proc.stdout
    assert proc.stderr.strip() == ("error: 3 of 4 artifact folder(s) refused, nothing filed under "
                                   f"{ws / 'harness' / 'submissions'} (fix: remove or re-run the refused cells' "
                                   "artifacts and collect again)")
    assert list((ws / "harness" / "submissions").glob("*/*")) == []


@pytest.mark.slow  # 5.7 CPU-s, 8 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_collect_outside_a_checkout_needs_root_and_files_only_there(tmp_path):
    """The reviewer's leftover of issue 16: with the sweep file outside a checkout (the workflow's sparse ./data),
    collect used the current folder as the root and wrote submissions/ beside the sweep file. Now the root is
    --root, else the checkout holding the sweep file (the folder above it with corpora/), else the current folder if
    it is one; otherwise one line naming the file, --root and the fix. Exit 0 = every card filed."""
    cards = committed_sweep_cards()
    ws = _workspace(tmp_path)
    cid = sorted(cards)[0]
    downloaded = tmp_path / "runner-temp" / "cards"
    (downloaded / f"sweep-card-{cid}").mkdir(parents=True)
    shutil.copy(cards[cid], downloaded / f"sweep-card-{cid}" / "card.json")
    data = ws / "data"
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*"))
    proc = subprocess.run(["mtboard", "sweep", "collect", SWEEP_REL, str(downloaded)], cwd=data,
                          capture_output=True, text=True, timeout=600, env=_env(ws))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"error: {SWEEP_REL}: --root: the sweep file is outside an mtboard checkout (no corpora/ folder above it "
        "or in the current folder): no repository root for its datasets and submissions/ (fix: pass --root "
        "CHECKOUT, the mtboard checkout whose corpora/ the sweep names; collect files the cards under "
        "CHECKOUT/submissions/)")
    proc = subprocess.run(["mtboard", "sweep", "collect", SWEEP_REL, str(downloaded), "--root", "../harness"],
                          cwd=data, capture_output=True, text=True, timeout=600, env=_env(ws))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == before  # nothing beside the file
    assert [p.name for p in (ws / "harness" / "submissions").glob("*/*")] == [cards[cid].name]
    assert f"into        {(ws / 'harness' / 'submissions').resolve()}" in proc.stdout


def test_workflow_shape_keeps_secrets_away_from_contributor_code():
    wf = load("sweep.yml")
    assert set(wf["on"]) == {"workflow_dispatch"}
    assert rule_problems(wf, pull_request=False) == []
    jobs = wf["jobs"]
    assert set(jobs) == {"plan", "cell", "collect"}
    cell = jobs["cell"]
    assert cell["environment"] == "sweep" and cell["strategy"]["fail-fast"] is False
    assert cell["strategy"]["max-parallel"] == "${{ fromJSON(needs.plan.outputs.max_parallel) }}"
    assert cell["permissions"] == {"contents": "read"}
    text = WF.read_text(encoding="utf-8")
    # secrets only in the cell job, whose every install comes from the default branch's checkout
    for name, job in jobs.items():
        uses_secrets = "secrets." in json.dumps(job)
        assert uses_secrets == (name == "cell"), name
        checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        harness, data = checkouts
        assert harness["with"]["ref"] == "${{ github.event.repository.default_branch }}"
        assert harness["with"]["path"] == "harness" and data["with"]["path"] == "data"
        assert data["with"]["sparse-checkout"] == "sweeps" and "ref" not in data["with"]
        runs = "\n".join(s.get("run", "") for s in job["steps"])
        assert "./data" not in runs.replace("/data/$SWEEP", "")  # ./data is read as a file, never installed or run
        joined = re.sub(r" ?\\\n\s*", " ", runs)
        assert re.findall(r"pip\"? install[^\n]*", joined) == [
            'pip" install --disable-pip-version-check --quiet --require-hashes -r ./harness/requirements/ci.txt',
            'pip" install --disable-pip-version-check --quiet --no-index --no-deps --no-build-isolation ./harness']
    assert jobs["collect"]["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert "environment" not in jobs["collect"] and "environment" not in jobs["plan"]
    dl = [s for s in jobs["collect"]["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    assert dl[0]["uses"] == "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
    assert dl[0]["with"] == {"pattern": "sweep-card-*", "path": "${{ runner.temp }}/cards"}
    assert "gh pr create" in text and "--global" not in text.replace("never a global", "")
