"""Judge admission (issue 39 item 5, BookTrans): a per-entry judge answers a fixed set of known-answer items before it
judges a card; the card records the result, the validator checks it, and the board counts only admitted judges.

A real Apertium card (tests/validate_support.py) is judged through the real judging code by a scripted judge server
(fault injection: the judge answers what the test scripts): one judge gives every admission item its known answer,
the other the opposite answer on every item. Expected values by hand: 10 items, threshold 9; the right judge passes
10, the wrong one 0.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from judges_support import ScriptedServer, admission_answer
from mtboard import validate as V
from mtboard.core import canonical
from mtboard.core.documents import card_bytes, load_corpus, loads_card
from mtboard.judges.admission import (ADMISSION_SET_PATH, ADMISSION_SET_SHA256, admission_record, item_passed,
                                      load_admission_set)
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.rubric import parse_rubric
from mtboard.ledger.tables import admission_text, counted_judges
from validate_support import CORPUS, MQM_CLEAN, RUBRIC_OK, dump, make_repo, real_card_bytes, reseal

LIMIT = 4


def test_the_committed_item_set():
    aset = load_admission_set()
    assert canonical.sha256_hex(ADMISSION_SET_PATH.read_bytes()) == ADMISSION_SET_SHA256 == aset.sha256
    assert aset.id == "judge-admission-en-es" and aset.threshold == 9 and len(aset.items) == 10
    assert [it.expect for it in aset.items].count("clean") == 5
    planted = sorted(it.planted for it in aset.items if it.expect == "error")
    assert planted == ["negation flipped (do not press → press)", "negation flipped (not saved → saved)",
                       "untranslated (the source copied)", "wrong number (10 → 12)",
                       "wrong number (three → thirteen)"]
    # every planted error pairs with a correct translation of the same source
    clean = {it.source for it in aset.items if it.expect == "clean"}
    assert {it.source for it in aset.items if it.expect == "error"} <= clean


def test_pass_rules_on_parsed_answers():
    aset = load_admission_set()
    clean = next(it for it in aset.items if it.expect == "clean")
    wrong = next(it for it in aset.items if it.expect == "error")
    minor = parse_mqm('Critical:\nno-error\nMajor:\nno-error\nMinor:\nstyle/awkward - "a"\ncontextBehavior: unclear')
    major = parse_mqm('Critical:\nno-error\nMajor:\naccuracy/mistranslation - "12"\nMinor:\nno-error\n'
                      "contextBehavior: unclear")
    assert item_passed("gemba-mqm", clean, parse_mqm(MQM_CLEAN)) and item_passed("gemba-mqm", clean, minor)
    assert not item_passed("gemba-mqm", clean, major)
    assert item_passed("gemba-mqm", wrong, major) and not item_passed("gemba-mqm", wrong, minor)
    ok3 = parse_rubric(RUBRIC_OK)  # adequacy 3
    low = parse_rubric("adequacy: 2\npragmatics: 4\nfluency: 2\nflags: NEG\njustification: negation lost")
    assert item_passed("rubric", clean, ok3) and not item_passed("rubric", clean, low)
    assert item_passed("rubric", wrong, low) and not item_passed("rubric", wrong, ok3)
    failed = parse_mqm(MQM_CLEAN).model_copy(update={"status": "judge_failed", "score": None})
    assert not item_passed("gemba-mqm", clean, failed)
    # 8 passed of 10 (two clean items given a major error): below the threshold 9
    verdicts = [major if it.expect == "error" or k < 2 else parse_mqm(MQM_CLEAN)
                for k, it in enumerate(aset.items)]
    rec = admission_record("gemba-mqm", aset, verdicts)
    assert (rec.items, rec.passed, rec.threshold, rec.admitted) == (10, 8, 9, False)
    assert rec.failed_items == ["clean-time", "clean-door"]


def _judged(wrong: bool) -> bytes:
    from mtboard.judges import run_judges
    from mtboard.llm import LLMClient

    card = loads_card(real_card_bytes(LIMIT, fst=False), "card")
    corpus, _ = load_corpus(CORPUS)

    def script(body):
        known = admission_answer(body, wrong=wrong)
        if known is not None:
            return known
        system = " ".join(m.get("content", "") for m in body.get("messages", []))
        return RUBRIC_OK if "adequacy" in system else MQM_CLEAN

    work = Path(tempfile.mkdtemp(prefix="mtboard-admission-"))
    try:
        with ScriptedServer(script, model="gpt-4.1-scripted-judge") as srv:
            judged = run_judges(card, corpus, ["gemba-mqm=openai:gpt-4.1-scripted-judge",
                                               "rubric=openai:gpt-4.1-scripted-judge"],
                                workdir=work, allow_self_judge=False, concurrency=2,
                                client_factory=lambda: LLMClient(srv.url, None, max_retries=0))
            asked = len(srv.requests)
        logged = (work / "judge" / "gemba-mqm.admission.answers.jsonl").read_text(encoding="utf-8")
        card_log = (work / "judge" / "gemba-mqm.answers.jsonl").read_text(encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # 2 judges × (10 admission items + LIMIT entries), every answer parsed at the first attempt
    assert asked == 2 * (10 + LIMIT)
    assert len(logged.splitlines()) == 10 and len(card_log.splitlines()) == LIMIT  # kept apart
    return card_bytes(judged)


@pytest.fixture(scope="module")
def cards():
    return {"right": _judged(False), "wrong": _judged(True)}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("admission-repo"))


def test_admitted_and_refused_recorded_in_the_card(cards):
    right, wrong = loads_card(cards["right"]), loads_card(cards["wrong"])
    for kind in ("gemba-mqm", "rubric"):
        a = right.judges[kind].admission
        assert (a.set_id, a.set_sha256, a.items, a.passed, a.threshold, a.admitted, a.failed_items) == (
            "judge-admission-en-es", ADMISSION_SET_SHA256, 10, 10, 9, True, [])
        b = wrong.judges[kind].admission
        assert (b.passed, b.admitted) == (0, False)
        assert b.failed_items == [it.id for it in load_admission_set().items]
        # the refused judge's verdicts are kept: it judged every entry of the card
        assert wrong.judges[kind].n_scored == LIMIT
        assert all(kind in r.judgements for r in wrong.results)
        # the admission answers are in no summary count: n_answers counts the card's entries only
        assert right.judges[kind].n_answers == LIMIT
    assert counted_judges(right).keys() == {"gemba-mqm", "rubric"}
    assert counted_judges(wrong) == {}
    assert admission_text(right.judges["rubric"]) == "; admitted: 10 of 10 known-answer items (threshold 9)"
    assert admission_text(wrong.judges["rubric"]) == ("; NOT admitted: 0 of 10 known-answer items (threshold 9): "
                                                       "its verdicts are kept but not counted")
    from mtboard.judges.run import summary_line

    assert summary_line("rubric", wrong.judges["rubric"]).endswith(
        "; admission 0/10 known-answer items (threshold 9): NOT admitted, its verdicts are kept but not counted")
    assert summary_line("rubric", right.judges["rubric"]).endswith(
        "; admission 10/10 known-answer items (threshold 9): admitted")


def _judge_problems(raw: bytes, repo: Path) -> list[tuple[str | None, str]]:
    report = V.validate_bytes(raw, "card.json", V.make_context(repo, repo / "corpora"))
    return [(p.field, p.message) for p in report.problems if p.check == "judges"]


def test_validator_accepts_both_and_refuses_edited_admissions(cards, repo):
    assert _judge_problems(cards["right"], repo) == []
    assert _judge_problems(cards["wrong"], repo) == []
    data = json.loads(cards["wrong"])
    where = "$.judges.gemba-mqm.admission"
    cases = [
        ({"admitted": True}, "admission.admitted must be False: passed 0, threshold 9"),
        ({"passed": 11, "failed_items": []}, "admission.passed 11 is more than its 10 items"),
        ({"passed": 9, "admitted": True}, "admission.failed_items must be the 1 distinct ids of the set's items not "
                                          "passed"),
        ({"set_sha256": "0" * 64}, f"admission.set_sha256/set_id is not the committed item set's "
                                   f"(judge-admission-en-es, {ADMISSION_SET_SHA256[:12]}…)"),
        ({"threshold": 0}, "admission.items/threshold must be the set's 10 / 9"),
    ]
    for edit, message in cases:
        d = copy.deepcopy(data)
        d["judges"]["gemba-mqm"]["admission"].update(edit)
        assert (where, message) in _judge_problems(dump(reseal(d)), repo), edit


def test_the_board_does_not_count_a_refused_judge(cards):
    """The ledger decides (mtboard.ledger.tables.counted_judges): two rows judged by GEMBA-MQM, one judge admitted and
    one not; the judge column has a value for the admitted row only and its common cells are that row's."""
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.load import Inputs, LoadedCard, Verification

    right = loads_card(cards["right"])
    refused = right.model_copy(deep=True)
    adm = refused.judges["gemba-mqm"].admission
    refused.judges["gemba-mqm"] = refused.judges["gemba-mqm"].model_copy(update={"admission": adm.model_copy(
        update={"passed": 8, "admitted": False, "failed_items": ["clean-time", "clean-door"]})})
    lcs = [LoadedCard("a.json", right, "a" * 16, Verification("self-benchmarked")),
           LoadedCard("b.json", refused, "b" * 16, Verification("self-benchmarked"))]
    view = build_ledger(Inputs(cards=lcs), resamples=50).boards[0].views[0]
    vals = {r.lc.page_id: r.cells["mqm"].sort for r in view.rows}
    assert vals["a" * 16] == 0.0 and vals["b" * 16] is None  # the scripted judge found no error: MQM 0
    assert view.judge_cells["gemba-mqm"] == (LIMIT, LIMIT)
    assert {r.lc.page_id: r.cells["rubric"].sort for r in view.rows} == {"a" * 16: 9.0, "b" * 16: 9.0}


def test_a_deleted_admission_is_refused_and_not_counted(cards, repo):
    """Deleting ``admission`` must not skip the check: the validator refuses a GEMBA-MQM or rubric summary without
    one, and the board counts only an admitted judge (absent = not admitted)."""
    data = json.loads(cards["right"])
    for kind in ("gemba-mqm", "rubric"):
        d = copy.deepcopy(data)
        del d["judges"][kind]["admission"]
        raw = dump(reseal(d))
        assert _judge_problems(raw, repo) == [(f"$.judges.{kind}.admission",
                                               f"the {kind} judge has no admission record")]
        other = ({"gemba-mqm", "rubric"} - {kind}).pop()
        assert counted_judges(loads_card(raw)).keys() == {other}


def test_an_edited_item_set_stops_the_run_before_any_request(tmp_path, monkeypatch):
    """An edited ``admission-en-es.json`` (one translation changed) no longer hashes to ADMISSION_SET_SHA256: the run
    stops in the preflight with a one-line InputError naming the file, and the judge server is asked nothing."""
    from mtboard.core.errors import InputError
    from mtboard.judges import admission, run_judges
    from mtboard.llm import LLMClient

    edited = tmp_path / "admission-en-es.json"
    edited.write_bytes(ADMISSION_SET_PATH.read_bytes().replace(b"\"translation\": \"", b"\"translation\": \"X", 1))
    assert edited.read_bytes() != ADMISSION_SET_PATH.read_bytes()
    monkeypatch.setattr(admission, "ADMISSION_SET_PATH", edited)
    card = loads_card(real_card_bytes(LIMIT, fst=False), "card")
    corpus, _ = load_corpus(CORPUS)
    with ScriptedServer(lambda body: MQM_CLEAN, model="gpt-4.1-scripted-judge") as srv:
        with pytest.raises(InputError) as err:
            run_judges(card, corpus, ["gemba-mqm=openai:gpt-4.1-scripted-judge"], workdir=tmp_path / "w",
                       allow_self_judge=False, client_factory=lambda: LLMClient(srv.url, None, max_retries=0))
        assert srv.requests == []
    msg = str(err.value)
    assert "\n" not in msg and str(edited) in msg
    assert f"not the pinned {ADMISSION_SET_SHA256[:12]}…" in msg
