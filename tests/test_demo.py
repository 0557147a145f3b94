"""Issue 8: `mtboard demo` (the README's first command after setup) runs the main job on the embedded default and
ends with a built site that has a leaderboard row for the run it just made. Real Apertium, real MkDocs."""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_demo_builds_site_with_new_row(tmp_path):
    if shutil.which("apertium") is None:
        pytest.fail("Apertium is not installed: bash scripts/setup.sh installs it")
    # A throwaway copy of the checkout's data folders, so the demo's runs/ and build/ stay out of the real tree.
    for name in ("corpora", "prompts", "site", "submissions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    proc = subprocess.run([sys.executable, "-m", "mtboard", "demo", "--no-gemma"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    index = tmp_path / "build" / "site" / "index.html"
    assert index.is_file()
    # issue 36 item 2: optional parts read as optional; the end says how to look at the site: one command that serves
    # the built folder as it is (no rebuild) and the address — and that command really serves it
    assert "skipped:" not in out and "\noptional, not run: Gemma 3 270M via gguf" in out
    lines = out.strip().splitlines()
    assert lines[-3].startswith("site: ") and lines[-3].endswith(" in build/site")
    # the interpreter that ran the demo (here outside the scratch checkout: its absolute path; in a checkout,
    # .venv/bin/python as the README says)
    assert lines[-2] == (f"look at it: {shlex.quote(sys.executable)} -m http.server 8000 --bind 127.0.0.1 "
                         "--directory build/site")
    assert lines[-1] == ("  then open http://127.0.0.1:8000/ (opened as a file, the search box and the compare page "
                         "do not work)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = shlex.split(lines[-2].removeprefix("look at it: ").replace(" 8000 ", f" {port} "))
    server = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                    served = resp.read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the printed command served nothing")
        assert served == index.read_bytes()
    finally:
        server.terminate()
        server.wait(timeout=10)

    card = json.loads((tmp_path / "runs" / "demo" / "apertium-eng-spa" / "card.json").read_text())
    assert card["dataset"]["id"] == "mtb-en-es-dev" and card["dataset"]["entry_count"] == 355
    chrf = f"{card['scores']['chrf_plus_plus']:.2f}"
    assert f"apertium:eng-spa: chrF++ {chrf}" in out
    # the leaderboard page links the new run's page, and the run page shows its chrF++
    board = (tmp_path / "build" / "site" / "leaderboards" / "mtb-en-es-dev-v1.0.0.html").read_text()
    page_id = card["run_card_hash"][:16]
    assert f"runs/{page_id}.html" in board
    run_page = (tmp_path / "build" / "site" / "runs" / f"{page_id}.html").read_text()
    assert chrf in run_page
    # issue 31: the demo's run is a reproduction of the committed EN→ES Apertium row (same fingerprint): that row
    # keeps its re-run evidence and its shown card, and says "reproduced ×2" — on the ledger and on the board
    committed = "mtb-en-es-dev/apertium-eng-spa__default__d0f5919b5569.json"
    ledger = json.loads((tmp_path / "build" / "site" / "data" / "ledger.json").read_text())
    es = next(b for b in ledger["boards"] if b["key"] == "mtb-en-es-dev-v1.0.0")
    row = next(r for r in es["rows"] if r["representative"] == committed)
    assert card["fingerprint"]["hash"] == row["fingerprint"]
    assert row["tier"] == "rerun-unattested" and [e["card"] for e in row["evidence"]] == [committed]
    assert row["reproduction"]["text"] == "reproduced \u00d72" and len(row["members"]) == 2
    assert row["members"][1]["page"] == f"runs/{page_id}.html"
    assert "reproduced \u00d72" in board and board.count("\u25d0") >= 1
    run_page = (tmp_path / "build" / "site" / "runs" / f"{page_id}.html").read_text()
    assert 'data-standing="rerun-unattested"' in run_page  # the demo card's page shows its row's standing
    # the checkout's own submissions/ is never modified by the demo
    assert sorted(p.name for p in (tmp_path / "submissions").rglob("*.json")) == sorted(
        p.name for p in (ROOT / "submissions").rglob("*.json"))
