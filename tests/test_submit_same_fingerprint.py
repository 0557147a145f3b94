"""`mtboard submit` tells a contributor when the same experiment (same fingerprint) is already on the board, and
names the card path it was given in errors. Real Apertium run against the committed en→ca corpus and card."""

from __future__ import annotations

import shutil
from pathlib import Path

import cli_support
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a whole-system test: 7 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_same_fingerprint_note_and_duplicate_error(tmp_path):
    root = tmp_path / "repo"
    for name in ("corpora", "submissions"):
        shutil.copytree(ROOT / name, root / name)
    work = tmp_path / "run"
    run = cli_support.invoke(["run", str(root / "corpora" / "mtb-en-ca-dev.json"), "--method", "apertium:eng-cat",
                              "--work-dir", str(work)], cwd=ROOT)
    assert run.returncode == 0, run.stderr
    card = work / "card.json"
    first = cli_support.invoke(["submit", str(card), "--root", str(root)], cwd=ROOT)
    assert first.returncode == 0, first.stderr
    committed = next(p for p in (ROOT / "submissions" / "mtb-en-ca-dev").glob("apertium-eng-cat__*.json")
                     if not p.name.endswith(".verification.json")).name
    assert f"note: submissions/mtb-en-ca-dev/{committed} has the same fingerprint" in first.stdout
    again = cli_support.invoke(["submit", str(card), "--root", str(root)], cwd=ROOT)
    assert again.returncode == 1 and f"{card}: already submitted as submissions/mtb-en-ca-dev/" in again.stderr
