"""Format attempts (issue 39 item 5, BookTrans): an answer failing the mechanical format rules is asked again up to
``--format-attempts`` answers, every failed answer is kept, the count is in the card and penalised in the composite,
and the validator checks it; transport failures are retried by the client, not re-asked and not penalised.

The runner runs end to end against the loopback fault-injection server (tests/fake_openai_server.py: ``[[fault:
markdown:2]]`` answers ``**ES …**`` twice, then ``ES …``). The corpus is a hand-made test fixture written to tmp_path
(references follow the server's documented answer rule ``"ES " + text``), not evaluation data. Target language
Swedish: no lttoolbox analyser is installed for it, so the composite is profile B and every metric of a perfect answer
is at its best — the composite before the penalty is exactly 1.0, which makes the penalty hand-computable.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fake_openai_server import FakeServer
from mtboard.core.errors import ConfigError
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run
from mtboard.score import checks
from mtboard.score.metrics.composite import composite, entry_columns
from mtboard.validate import make_context, validate_card
from mtboard.validate.pipeline import validate_bytes
from validate_support import dump, refingerprint_and_reseal, reseal

SOURCES = ["Good morning.", "Open the file. [[fault:markdown:2]]", "Save it now. [[fault:r500:2]]",
           "Close the door."]


def write_corpus(path: Path, sources: list[str]) -> Path:
    corpus = {"dataset": {"id": "hand-made-format-test", "version": "1.0.0", "language_pair": "EN→SV",
                          "source_language": "en", "target_language": "sv", "created": "2026-12-04",
                          "license": "CC0-1.0", "provenance": ["elicited"]},
              "entries": [{"id": i + 1, "source": s, "reference": "ES " + s.split(" [[")[0]}
                          for i, s in enumerate(sources)]}
    path.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    return path


def settings(tmp_path: Path, srv: FakeServer, **kw) -> RunSettings:
    base = dict(corpus_path=tmp_path / "corpora" / "c.json", method="openai:fake-model", base_url=srv.base_url,
                work_dir=tmp_path / "w", max_retries=2, backend_extra={"backoff_base_s": 0.01}, concurrency=2)
    base.update(kw)
    return RunSettings(**base)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One run with --format-attempts 5 against the loopback server: (card, card path, work dir, request counts)."""
    tmp_path = tmp_path_factory.mktemp("format")
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", SOURCES)
    with FakeServer() as srv:
        out = run(settings(tmp_path, srv, format_attempts=5))
        counts = dict(srv.counts)
    return out.card, out.card_path, tmp_path, counts


def test_wrong_format_twice_then_right_gives_three_attempts_both_failures_kept(made):
    card, _, tmp_path, counts = made
    by_id = {r.entry_id: r for r in card.results}
    r = by_id[2]
    assert r.format_attempts == 3
    assert [(a.raw_predicted, a.rule, a.error_kind) for a in r.failed_attempts] == [
        ("**ES Open the file.**", "format.markdown", None), ("**ES Open the file.**", "format.markdown", None)]
    assert r.raw_predicted == "ES Open the file." and r.predicted == r.expected and r.chrf_score == 100.0
    assert counts[SOURCES[1]] == 3  # three requests reached the server
    # transport failures: retried by the client (attempts 3), not re-asked, not penalised
    assert by_id[3].attempts == 3 and by_id[3].format_attempts == 1 and by_id[3].failed_attempts == []
    assert [by_id[i].format_attempts for i in (1, 4)] == [1, 1]
    assert card.method.format_attempts == 5 and card.fingerprint.components["format_attempts"] == 5
    # every attempt's request and response stays in raw.jsonl, tagged with its attempt
    lines = [json.loads(x) for x in (tmp_path / "w" / "raw.jsonl").read_text(encoding="utf-8").splitlines()]
    tags = sorted(x.get("format_attempt") for x in lines if x.get("entry_id") == 2)
    assert tags == [0, 1, 2]
    # the entry's usage sums its three answers: the server counts one completion token per answer word, 4 each
    assert r.usage.completion_tokens == 12


def test_penalty_hand_computed(made):
    card, *_ = made
    s = card.scores
    # every final answer equals its reference: chrF++ 100, exact 1, no code-switching → composite before penalty 1.0
    assert s.chrf_plus_plus == 100.0 and s.exact_match_rate == 1.0 and s.code_switching_rate == 0.0
    assert s.composite_profile == "B"
    # 2 extra attempts over 4 entries: 1.0 × (1 − 0.1 × 2/4) = 0.95
    assert s.composite == 0.95
    assert card.scores.signatures.composite.endswith("|format_attempt:0.1")
    # the same numbers from the card's values: without the penalty's input the composite is 1.0
    vals = {k: getattr(s, k) for k in ("chrf_plus_plus", "exact_match_rate", "code_switching_rate",
                                       "semantic_score", "hallucination_rate")}
    assert composite(vals) == (1.0, "B")
    assert composite(vals | {"format_extra_attempts": 0.5}) == (0.95, "B")
    cols = entry_columns(card.results, has_equiv=False, has_fst=False)
    assert cols["format_extra_attempts"].tolist() == [0.0, 2.0, 0.0, 0.0]


def test_run_summary_has_a_format_line(made):
    """``mtboard run``'s terminal summary names the extra attempts and the composite's factor: 2 extra attempts, all
    on entry 2, over 4 entries: × (1 − 0.1 × 2/4) = 0.9500; a card asking once has no such line; a limit never used
    says so."""
    from mtboard.cli.run import _format_line

    card, *_ = made
    assert _format_line(card) == ("format      2 extra attempts on 1 entry; composite × 0.9500 (0.1 per extra "
                                  "attempt, SCORING_SPEC §3.4)")
    once = card.model_copy(update={"results": [r.model_copy(update={"format_attempts": 1, "failed_attempts": []})
                                               for r in card.results]})
    assert _format_line(once) == "format      no extra attempt: every entry answered in format at the first of up to 5"
    plain = card.model_copy(update={"method": card.method.model_copy(update={"format_attempts": None})})
    assert _format_line(plain) is None


def test_validator_accepts_the_card(made):
    _, path, tmp_path, _ = made
    report = validate_card(path, make_context(tmp_path, tmp_path / "corpora"))
    assert report.ok, [str(p) for p in report.problems]


def _problems(data, tmp_path):
    report = validate_bytes(dump(data), "x.json", make_context(tmp_path, tmp_path / "corpora"))
    return [(p.check, p.field, p.message) for p in report.problems]


def test_validator_refuses_edited_attempt_count(made):
    card, path, tmp_path, _ = made
    data = json.loads(path.read_text(encoding="utf-8"))
    i = next(k for k, r in enumerate(data["results"]) if r["entry_id"] == 2)
    # the count lowered to 2, re-sealed: inconsistent with the two kept failed answers
    d = copy.deepcopy(data)
    d["results"][i]["format_attempts"] = 2
    probs = _problems(reseal(d), tmp_path)
    assert ("method", f"$.results[{i}].format_attempts",
            "format_attempts 2 must be 1 + the 2 kept failed attempts") in probs
    # count and kept answers both cut to one failure, re-sealed: consistent, but the composite moves (0.975 ≠ 0.95)
    d = copy.deepcopy(data)
    d["results"][i]["format_attempts"] = 2
    d["results"][i]["failed_attempts"] = d["results"][i]["failed_attempts"][:1]
    probs = _problems(reseal(d), tmp_path)
    assert any(c == "metrics" and "composite" in p for c, p, _ in probs), probs
    # count 6, above the card's limit (and the schema's 5): refused
    d = copy.deepcopy(data)
    d["results"][i]["format_attempts"] = 6
    assert _problems(reseal(d), tmp_path)
    # a failed answer that in fact passes the format rules
    d = copy.deepcopy(data)
    d["results"][i]["failed_attempts"][0]["raw_predicted"] = "ES Open the file."
    probs = _problems(reseal(d), tmp_path)
    assert ("method", f"$.results[{i}].failed_attempts[0].rule",
            "the failed attempt records rule format.markdown but its answer passes the format rules") in probs
    # the limit removed from the method and the fingerprint (a careful cheater): entry 2's count exceeds 1
    d = copy.deepcopy(data)
    del d["method"]["format_attempts"]
    probs = _problems(refingerprint_and_reseal(d), tmp_path)
    assert ("method", f"$.results[{i}].format_attempts",
            "format_attempts 3 must be 1–1 (method.format_attempts absent)") in probs


def test_kept_answer_failing_before_the_limit_is_refused(made):
    _, path, tmp_path, _ = made
    data = json.loads(path.read_text(encoding="utf-8"))
    i = next(k for k, r in enumerate(data["results"]) if r["entry_id"] == 1)
    data["results"][i]["raw_predicted"] = "**ES Good morning.**"
    probs = _problems(reseal(data), tmp_path)
    assert ("method", f"$.results[{i}].format_attempts",
            "the kept answer fails format rule format.markdown after 1 of 5 attempts (it would have been asked "
            "again)") in probs


def test_limit_spent_keeps_the_last_answer_and_one_attempt_changes_nothing(tmp_path):
    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["Good morning.", "Open the file. [[fault:markdown]]"])
    with FakeServer() as srv:
        out = run(settings(tmp_path, srv, format_attempts=3, work_dir=tmp_path / "w3"))
        plain = run(settings(tmp_path, srv, work_dir=tmp_path / "w1"))
    r = out.card.results[1]
    assert r.format_attempts == 3 and len(r.failed_attempts) == 2 and r.raw_predicted == "**ES Open the file.**"
    assert r.checks.flags[0].rule == "format.markdown"  # kept and scored as it is
    # default (1 attempt): no field, no fingerprint component, no penalty, bytes as before
    assert plain.card.method.format_attempts is None and "format_attempts" not in plain.card.fingerprint.components
    raw = plain.card_path.read_text(encoding="utf-8")
    assert "format_attempts" not in raw and "failed_attempts" not in raw and "format_attempt:" not in raw
    assert validate_card(out.card_path, make_context(tmp_path, tmp_path / "corpora")).ok


@pytest.mark.parametrize("kw,match", [({"format_attempts": 6}, "--format-attempts"),
                                      ({"format_attempts": 0}, "--format-attempts")])
def test_out_of_range_refused(tmp_path, kw, match):
    with pytest.raises(ConfigError, match=match):
        RunSettings(corpus_path=tmp_path / "c.json", method="openai:m", **kw)


def test_refused_with_tools_and_for_engines(tmp_path):
    from mtboard.run.runner import prepare

    (tmp_path / "corpora").mkdir()
    write_corpus(tmp_path / "corpora" / "c.json", ["Good morning."])
    with pytest.raises(ConfigError, match="takes no prompt"):
        prepare(RunSettings(corpus_path=tmp_path / "corpora" / "c.json", method="echo:", format_attempts=2,
                            work_dir=tmp_path / "w"))


def test_format_failure_rules():
    f = checks.format_failure
    kw = dict(source="Open the file.", source_language="en", target_language="es")
    assert f(raw_predicted="**Abra el archivo.**", error_kind=None, **kw) == "format.markdown"
    assert f(raw_predicted="", error_kind=None, **kw) == "empty"
    assert f(raw_predicted="", error_kind="token_cap", **kw) == "error.token_cap"
    assert f(raw_predicted="<think>hmm", error_kind=None, **kw) == "unclosed_think"
    assert f(raw_predicted="Abra el archivo.", error_kind=None, **kw) is None
    assert f(raw_predicted="Open the file.", error_kind=None, **kw) is None  # an echo: scored 0, not re-asked
    assert f(raw_predicted=None, error_kind="transport", **kw) is None  # the client retries transport failures


@pytest.mark.slow  # 3.4 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_committed_cards_keep_their_bytes_and_have_one_attempt():
    """No committed card has a format attempt above 1, and each keeps its exact bytes through the new schema (the new
    fields are left out when at their defaults), so seals, fingerprints and composites stay as they are (the
    validator's ``metrics`` check over all of them: tests/test_validity.py)."""
    from mtboard.core.documents import card_bytes, load_card

    root = Path(__file__).resolve().parents[1] / "submissions"
    paths = sorted(p for p in root.glob("*/*.json") if not p.name.endswith(".verification.json"))
    assert len(paths) == 54  # 39 + the 13 of the dialogue-history sweep + the two diagnostic-segment cards (issue 40)
    for path in paths:
        card = load_card(path)
        assert card_bytes(card) == path.read_bytes(), path
        assert card.method.format_attempts is None, path
        assert all(r.format_attempts == 1 and not r.failed_attempts
                   for rr in [card.results, *[x.results for x in card.replicate_runs]] for r in rr), path
        assert "format_attempt" not in (card.scores.signatures.composite or "")


def test_run_page_rows_show_attempts_and_penalty(made):
    from mtboard.ledger.tables import format_attempt_rows
    from mtboard.site.rundata import _row

    card, *_ = made
    assert format_attempt_rows(card) == [
        ("format attempt limit", 5, "method"),
        ("format attempts", "2 extra over 1 of 4 entries; penalty 0.1 × 2 ÷ 4 = 0.0500 of the composite "
                            "(≈ 1.0000 before the penalty → 0.9500)", "results")]
    by_id = {r.entry_id: r for r in card.results}
    assert _row(by_id[2], None)[11] == [["format.markdown", "**ES Open the file.**"]] * 2
    assert len(_row(by_id[1], None)) == 11  # rows of entries asked once keep their shape
