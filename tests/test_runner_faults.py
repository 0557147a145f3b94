"""The runner end to end against a misbehaving local server: each fault is classified per the BookTrans policy, no
entry is lost, no failure is scored as a translation, transport failures gate the card.

The corpus here is a hand-made test fixture (tiny English sentences with fault markers; references follow the fake
server's documented answer rule ``"ES " + text``), written to tmp_path — not evaluation data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_openai_server import FakeServer
from mtboard.core.documents import load_card
from mtboard.run.plan import IncompleteRunError
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run
from mtboard.run.workdir import WorkDir
from mtboard.validate import make_context, validate_card

# (source, expected error kind or None, expected attempts)
ROWS = [
    ("Good morning.", None, 1),
    ("Stop here. [[fault:eos]]", None, 1),
    ("Open the file. [[fault:r429:1]]", None, 1),  # a rate-limited answer is waited out, not an attempt (F10)
    ("Save it now. [[fault:r500:2]]", None, 3),
    ("Print the page. [[fault:reset:1]]", None, 2),
    ("Read the book. [[fault:error200:1]]", None, 2),
    ("Close the door. [[fault:length_empty]]", "token_cap", 1),
    ("Where is it? [[fault:think_unclosed]]", "unclosed_think", 1),
    ("Say nothing. [[fault:empty]]", "empty", 1),
    # a 3,000-word source (≥ 3,000 tokens in any tokenizer) that the server reports as 2,048 prompt tokens
    (" ".join(["word"] * 3000) + " [[fault:truncated]]", "input_truncated", 1),
    ("It is late. [[fault:r500]]", "transport", 3),
    ("The end. [[fault:error200]]", "transport", 3),
]


def write_corpus(path: Path, sources: list[str]) -> Path:
    corpus = {"dataset": {"id": "hand-made-fault-test", "version": "1.0.0", "language_pair": "EN→ES",
                          "source_language": "en", "target_language": "es", "created": "2026-11-29",
                          "license": "CC0-1.0", "provenance": ["elicited"]},
              "entries": [{"id": i + 1, "source": s, "reference": "ES " + s.split(" [[")[0]}
                          for i, s in enumerate(sources)]}
    path.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    return path


def settings(tmp_path: Path, srv: FakeServer, **kw) -> RunSettings:
    base = dict(corpus_path=tmp_path / "corpora" / "c.json", method="openai:fake-model", base_url=srv.base_url,
                work_dir=tmp_path / "w", max_retries=2, backend_extra={"backoff_base_s": 0.01}, concurrency=4)
    base.update(kw)
    return RunSettings(**base)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_faults_classified_and_gated(tmp_path, stream):
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", [r[0] for r in ROWS])
    with FakeServer() as srv:
        # persistent transport failures: no card, re-runnable
        with pytest.raises(IncompleteRunError, match="2 entries failed"):
            run(settings(tmp_path, srv, stream=stream))
        assert not (tmp_path / "w" / "card.json").exists()
        assert (tmp_path / "w" / "report.md").exists()
        recs = WorkDir(tmp_path / "w").records()
        assert len(recs) == len(ROWS)  # no entry lost
        first_counts = dict(srv.counts)
        # --allow-incomplete: a card; only the two transport entries are sent again
        out = run(settings(tmp_path, srv, stream=stream, allow_incomplete=True))
        resent = {t: srv.counts[t] - first_counts.get(t, 0) for t in srv.counts}
    assert {t for t, n in resent.items() if n} == {"It is late. [[fault:r500]]", "The end. [[fault:error200]]"}
    card = out.card
    assert [r.entry_id for r in card.results] == list(range(1, len(ROWS) + 1))
    for (source, kind, attempts), res in zip(ROWS, card.results):
        assert res.source == source
        assert (res.error_kind.value if res.error_kind else None) == kind, (source, res.error)
        assert res.attempts == attempts, source
        if kind is None:
            assert res.predicted == "ES " + source.split(" [[")[0] and res.chrf_score == 100.0
            assert res.raw_predicted == res.predicted + ("</s>" if "eos" in source else "")
        else:  # never scored as a translation
            assert res.checks.outcome.value == "no_usable_output"
            assert res.chrf_score == 0.0 and res.exact_match is False
    assert card.scores.transport_errors == 2
    assert card.scores.errors == 6 and card.scores.total == len(ROWS)
    # attempts beyond the first, summed: 2+1+1 (recovered; the 429 is none) + 2+2 (transport, last session) = 8
    assert card.totals.retries == 8
    assert card.method.streaming is stream
    assert card.method.sampling == {"temperature": 0.0, "top_p": 1.0}
    assert card.method.max_tokens == 512
    # the card written is the card returned, and it passes the project's validator
    assert load_card(out.card_path) == card
    report = validate_card(out.card_path, make_context(tmp_path, tmp_path / "corpora"))
    assert report.ok, [str(p) for p in report.problems]


def test_fatal_auth_failure_stops_the_run(tmp_path):
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", [f"Line {i}. [[fault:r401]]" for i in range(20)])
    from mtboard.core.errors import BackendError

    with FakeServer() as srv:
        with pytest.raises(BackendError, match="refused"):
            run(settings(tmp_path, srv, concurrency=1))
        assert sum(srv.counts.values()) < 20  # stopped early, did not hammer the endpoint


def test_an_endpoint_nothing_listens_on_stops_the_run_before_any_entry(tmp_path):
    """Connection refused at the first contact: one error naming the fix, at once, instead of every entry retried."""
    import socket
    import time as _time

    from mtboard.core.errors import BackendError
    from mtboard.run.workdir import WorkDir

    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", [f"Line {i}." for i in range(20)])
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = RunSettings(corpus_path=tmp_path / "corpora" / "c.json", method="openai:fake-model",
                       base_url=f"http://127.0.0.1:{port}/v1", work_dir=tmp_path / "w", concurrency=4)
    t0 = _time.monotonic()
    with pytest.raises(BackendError, match=r"cannot connect to the endpoint: nothing listens on 127\.0\.0\.1:\d+ on "
                                           r"this machine .*fix: start the server"):
        run(dead)
    assert _time.monotonic() - t0 < 10
    assert WorkDir(tmp_path / "w").records() == {}  # nothing recorded as a translation failure
    # the corrected endpoint may use the same work directory: nothing was translated under the wrong one
    with FakeServer() as srv:
        out = run(settings(tmp_path, srv))
    assert len(out.card.results) == 20 and out.card.scores.errors == 0
    assert [p.name for p in (tmp_path / "w").glob("superseded-*/run.json")] == ["run.json"]


def test_replicates_run_concurrently_with_mean_and_spread(tmp_path):
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["One.", "Two.", "Three. [[fault:empty:1]]"])
    with FakeServer() as srv:
        out = run(settings(tmp_path, srv, runs=3))
        assert srv.counts["One."] == 3 and srv.counts["Three. [[fault:empty:1]]"] == 3
    reps = out.card.scores.replicates
    assert reps is not None and reps.n == 3
    # the first request for entry 3 came back empty (which replicate got it depends on scheduling): exactly one
    # replicate has 2 of 3 entries right, the other two all 3
    assert sorted(reps.chrf_plus_plus)[1:] == [100.0, 100.0] and reps.chrf_plus_plus.count(100.0) == 2
    assert reps.chrf_mean == pytest.approx(sum(reps.chrf_plus_plus) / 3)
    recs = WorkDir(tmp_path / "w").records()
    assert set(recs) == {(r, e) for e in (1, 2, 3) for r in range(3)}
    assert out.card.method.runs == 3


def test_resume_refuses_a_different_configuration(tmp_path):
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["One."])
    from mtboard.core.errors import ConfigError

    with FakeServer() as srv:
        run(settings(tmp_path, srv))
        with pytest.raises(ConfigError, match="different temperature"):
            run(settings(tmp_path, srv, temperature=0.7))


def test_judge_hook_runs_the_judges_on_the_fresh_card(tmp_path, monkeypatch):
    """--judge KIND=openai:MODEL calls mtboard.judges.run_judges; the fake server's answers are no MQM, so every
    verdict is judge_failed (fail closed) and the card still validates."""
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["Good morning.", "Open the file."])
    with FakeServer() as srv:
        monkeypatch.setenv("JUDGE_BASE_URL", srv.base_url)
        # the translator's name tells its family (mistral); the judge's is declared (an unknown family is refused)
        out = run(settings(tmp_path, srv, method="openai:mistral-fake", judge="gemba-mqm=openai:judge-model",
                           judge_family="qwen"))
        judge_requests = [r for r in srv.requests if r["body"].get("model") == "judge-model"]
    summary = out.card.judges["gemba-mqm"]
    assert summary.model == "judge-model" and summary.n_failed == 2 and summary.n_scored == 0
    assert summary.family_check == "passed (judge family declared: qwen)" and summary.judge_families == ["qwen"]
    assert judge_requests and all(r.judgements["gemba-mqm"].status == "judge_failed" for r in out.card.results)
    assert out.card.fingerprint.components["judge_model"] == "gemba-mqm=openai:judge-model"
    report = validate_card(out.card_path, make_context(tmp_path, tmp_path / "corpora"))
    assert report.ok, [str(p) for p in report.problems]
