"""``mtboard run`` as a user runs it (a subprocess), against the local fake server:

* kill -9 in the middle of a run, then the same command again → every entry exactly once in the card, and no entry
  that had finished before the kill was sent to the server again (requests counted on the server);
* a canary API key in the environment appears in no file under the work directory or the card (bytes and base64),
  although the server echoes the Authorization header back in answers and error bodies.

Corpora are hand-made test fixtures written to tmp_path (numbered English sentences), not evaluation data.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_openai_server import FakeServer, answer_for
from mtboard.core.documents import load_card
from mtboard.validate import make_context, validate_card

CLI = [sys.executable, "-c", "from mtboard.cli.main import app; app()"]
WORDS = ["red", "green", "blue", "small", "large", "old", "new", "quiet", "bright", "cold"]


def write_corpus(path: Path, sources: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    corpus = {"dataset": {"id": "hand-made-resume-test", "version": "1.0.0", "language_pair": "EN→ES",
                          "source_language": "en", "target_language": "es", "created": "2026-11-29",
                          "license": "CC0-1.0", "provenance": ["elicited"]},
              # references: the fake server's answer with the final full stop dropped (a near-perfect run)
              "entries": [{"id": i + 1, "source": s, "reference": answer_for(s).rstrip(".")}
                          for i, s in enumerate(sources)]}
    path.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    return path


def finished_ids(work: Path) -> list[int]:
    out = []
    p = work / "translations.jsonl"
    if not p.exists():
        return out
    for line in p.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(line)["entry_id"])
        except (ValueError, KeyError):
            pass
    return out


def env_with(**kw: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(kw)
    return env


@pytest.mark.slow
def test_kill_9_then_resume_sends_nothing_twice(tmp_path):
    sources = [f"The {WORDS[i % 10]} house number {i} is {WORDS[(i * 3) % 10]}." for i in range(40)]
    corpus = write_corpus(tmp_path / "corpora" / "c.json", sources)
    work = tmp_path / "w"
    with FakeServer(latency_s=0.15) as srv:
        cmd = CLI + ["run", str(corpus), "--method", "openai:fake-model", "--base-url", srv.base_url,
                     "--work-dir", str(work), "--concurrency", "3"]
        proc = subprocess.Popen(cmd, env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while len(finished_ids(work)) < 10 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        done_before = finished_ids(work)
        assert 10 <= len(done_before) < 40, "kill landed outside the run"
        counts_at_kill = dict(srv.counts)
        second = subprocess.run(cmd, env=env_with(), capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        counts = dict(srv.counts)
    card = load_card(work / "card.json")
    assert [r.entry_id for r in card.results] == list(range(1, 41))  # every entry exactly once, in order
    assert all(r.predicted == answer_for(r.source) for r in card.results)
    for eid in done_before:  # finished before the kill → never sent again
        assert counts[sources[eid - 1]] == 1, eid
    assert all(counts.get(s, 0) >= 1 for s in sources)
    # re-sent: only what was in flight at the kill (≤ concurrency) plus what had not been sent yet
    resent = [s for s in sources if counts_at_kill.get(s, 0) and counts[s] > counts_at_kill[s]]
    assert len(resent) <= 3
    assert sum(counts.values()) <= 40 + 3
    assert "chrF++" in second.stdout and "nrefs:1" in second.stdout
    report = validate_card(work / "card.json", make_context(tmp_path, tmp_path / "corpora"))
    assert report.ok, [str(p) for p in report.problems]


def _b64_variants(secret: bytes) -> list[bytes]:
    """Base64 of the secret at the three byte alignments it can have inside a longer encoded text, keeping only
    the characters that depend on the secret alone."""
    out = []
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + secret)
        core = enc[(4 if pad else 0):-4]
        out += [core, core.replace(b"+", b"-").replace(b"/", b"_")]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("stream", ["0", "1"], ids=["json", "stream"])
def test_canary_api_key_is_written_nowhere(tmp_path, stream):
    key = "sk-mtboard-canary-7f3a9c2e51d84b06a1"
    sources = ["Hello there. [[fault:auth_echo]]", "Open the door. [[fault:r429:1]]", "Good night."]
    corpus = write_corpus(tmp_path / "corpora" / "c.json", sources)
    work = tmp_path / "w"
    out_card = tmp_path / "card-out.json"
    with FakeServer() as srv:
        cmd = CLI + ["run", str(corpus), "--method", "openai:fake-model", "--work-dir", str(work),
                     "--out", str(out_card), "--price-in", "1", "--price-out", "2"]
        res = subprocess.run(cmd, env=env_with(OPENAI_API_KEY=key, OPENAI_BASE_URL=srv.base_url,
                                               MTBOARD_STREAM=stream), capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        # the key did reach the server (so the echoes below really carried it)
        assert any(h.get("authorization") == f"Bearer {key}" for h in srv.headers_seen)
    card = load_card(out_card)
    assert card.results[0].predicted == "ES Bearer [REDACTED]"  # the echoed header was scrubbed
    needles = [key.encode(), *_b64_variants(key.encode()), *_b64_variants(f"Bearer {key}".encode())]
    files = [p for p in work.rglob("*") if p.is_file()] + [out_card]
    assert {p.name for p in files} >= {"translations.jsonl", "raw.jsonl", "run.json", "report.md", "card-out.json"}
    for p in files:
        data = p.read_bytes()
        for n in needles:
            assert n not in data, f"{p.name} holds the key"
    assert key not in res.stdout + res.stderr
    assert card.method.price_in_per_mtok == 1.0 and card.totals.total_cost_usd is not None
