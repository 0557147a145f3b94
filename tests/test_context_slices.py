"""Context-behaviour slices (issue 40 item 3): a scripted GEMBA-MQM-context judge behind a real loopback HTTP server
labels a real run of a hand-made dialogue fixture, and the ledger's slice table, the board and the run page show
exactly the hand-computed numbers; an answer without the label is a parse failure counted on the card and absent
from the slices; the validator refuses a card whose claimed label distribution its verdicts do not give.

The fixture ``tests/fixtures/context-slices-en-es.json`` is HAND-MADE (eleven short EN→ES dialogue turns written by
the mtboard authors, nine with prior lines as ``history``, two without): no committed corpus has history yet. The
translator is a scripted server answering each source's reference (entry 9: the source echoed back, so it is not
sent to the judge); the judge is a scripted server answering, per translation, the annotation chosen below (fault
injection: the fake answers exactly what the test scripts). Translating and judging go through the real CLI
(``mtboard run``, ``mtboard judge``), the ledger through the real loader and validator.

Hand computation (entries with history: 1–9; without: 10, 11)::

    entry  label                        errors                      penalty
    1      used_correctly               none                          0
    2      used_correctly               1 minor                       1
    3      missed_required_context      1 major                       5
    4      missed_required_context      1 critical + 1 major         30
    5      ignored_irrelevant_context   none                          0
    6      misused_context              1 critical                   25
    7      unclear                      2 minor                       2
    8      (no valid label: 3 answers, none parses)  → judge_failed, a parse failure
    9      (source echoed: not sent)                 → not_sent
    10, 11 unclear (no history)                      → excluded

    judged = 7 (entries 1–7); shares 2/7 = 0.2857, 2/7, 1/7 = 0.1429, 1/7, 1/7
    Wilson 95 % for 2/7: centre (2/7 + z²/14)/(1 + z²/7) = 0.3616, half-width 0.2794 → [0.0822, 0.6411]
                    1/7: → [0.0257, 0.5131]                (z = 1.95996; statsmodels agrees, below)
    mean penalties: used 0.5 (0, 1), missed 17.5 (5, 30), ignored 0, misused 25, unclear 2
    bootstrap 95 % of a two-value slice: a resample is all-low (¼), mixed (½) or all-high (¼), so the 2.5th and
    97.5th percentiles are the two values: used [0, 1], missed [5, 30]; a one-entry slice has no interval.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from judges_support import REPO, ScriptedServer, admission_answer, mtboard, translation_in
from validate_support import dump, make_repo, reseal
from mtboard.core import documents

FIXTURE = REPO / "tests" / "fixtures" / "context-slices-en-es.json"
JUDGE = "gpt-4.1-scripted-judge"
LABELS = ("used_correctly", "missed_required_context", "ignored_irrelevant_context", "misused_context", "unclear")


def mqm(crit: tuple[str, ...] = (), major: tuple[str, ...] = (), minor: tuple[str, ...] = (),
        label: str | None = None) -> str:
    """A GEMBA-MQM-context answer; ``label`` None leaves out the trailing ``contextBehavior:`` line."""
    lines: list[str] = []
    for heading, errs in (("Critical:", crit), ("Major:", major), ("Minor:", minor)):
        lines += [heading, *(errs or ("no-error",))]
    return "\n".join(lines + ([f"contextBehavior: {label}"] if label else []))


ANSWERS = {  # translation (= the entry's reference) → the judge's answer
    "¿Está lejos?": mqm(label="used_correctly"),
    "¿La trajiste?": mqm(minor=('fluency/punctuation - "¿"',), label="used_correctly"),
    "Ya está lista.": mqm(major=('accuracy/mistranslation - "lista"',), label="missed_required_context"),
    "Ponlas en la mesa.": mqm(crit=('accuracy/mistranslation - "Ponlas"',), major=('fluency/grammar - "la mesa"',),
                              label="missed_required_context"),
    "Dos cafés, por favor.": mqm(label="ignored_irrelevant_context"),
    "Ábrela con cuidado.": mqm(crit=('accuracy/mistranslation - "Ábrela"',), label="misused_context"),
    "Quizás más tarde.": mqm(minor=('style/awkward - "Quizás"', 'fluency/punctuation - "."'), label="unclear"),
    "Muchas gracias.": mqm(label="unclear"),
    "Nos vemos el lunes.": mqm(label="unclear"),
}
BROKEN = "Tomamos el primero."
"""Entry 8's translation: the judge never gives a valid label for it (three attempts, three ways)."""
BROKEN_ANSWERS = (mqm(),  # no contextBehavior line at all
                  mqm(label="great"),  # a label that is not one of the five
                  mqm(label="used_correctly") + "\nThe context was used well.")  # the label not last
ECHOED = "Call me when you land."


def judge_script(body: dict[str, Any]) -> str:
    known = admission_answer(body)  # the admission items (issue 39): answered right, so the judge is counted
    if known is not None:
        return known
    t = translation_in(body)
    if t == BROKEN:
        return BROKEN_ANSWERS[(len(body["messages"]) - 2) // 2]  # 1st, 2nd, 3rd attempt
    return ANSWERS[t]


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict[str, Any]:
    """The fixture translated by `mtboard run` (scripted translator) and judged by `mtboard judge` (scripted judge),
    the card placed in a scratch repository with the fixture as its corpus, the ledger built by the real loader
    (every card validated) and its pages rendered."""
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.document import to_document
    from mtboard.ledger.load import load_inputs
    from mtboard.site import boards as boards_view
    from mtboard.site.boardpages import render_board_pages
    from mtboard.site.render import render_pages

    tmp = tmp_path_factory.mktemp("ctxslices")
    refs = {e.source: e.reference for e in documents.load_corpus(FIXTURE)[0].entries}
    refs[ECHOED] = ECHOED  # the translator copies this source back: source_untranslated, never sent to the judge
    with ScriptedServer(lambda b: refs[b["messages"][-1]["content"]]) as tr:
        p = mtboard(["run", str(FIXTURE), "--method", "openai:mistral-scripted-mt", "--work-dir", str(tmp / "wd"),
                     "--base-url", tr.url], env={}, cwd=tmp)
    assert p.returncode == 0, p.stderr
    with ScriptedServer(judge_script, model=JUDGE) as js:
        p = mtboard(["judge", str(tmp / "wd"), "--judge", f"gemba-mqm=openai:{JUDGE}", "--corpus", str(FIXTURE)],
                    env={"JUDGE_BASE_URL": js.url}, cwd=REPO)
    assert p.returncode == 0, p.stderr
    raw = (tmp / "wd" / "card.json").read_bytes()
    root = make_repo(tmp, [raw], corpus=FIXTURE)
    inputs = load_inputs(root / "submissions", root / "corpora")
    assert inputs.rejected == [] and len(inputs.cards) == 1
    ledger = build_ledger(inputs, resamples=100)
    boards_view.fill_values(ledger.boards)
    doc = to_document(ledger, "2026-12-04T00:00:00Z")
    pages = render_board_pages(inputs, ledger.boards, [], root, "2026-12-04 00:00 UTC", ledger=doc)
    pages.update(render_pages(inputs, ledger.boards, [], "2026-12-04 00:00 UTC"))
    return {"raw": raw, "card": documents.loads_card(raw, "card"), "root": root, "wd": tmp / "wd",
            "ledger": ledger, "doc": doc, "pages": pages, "inputs": inputs}


def test_the_card_records_each_label_and_the_missing_label_as_a_judge_failure(judged):
    card = judged["card"]
    verdicts = {r.entry_id: r.judgements["gemba-mqm"] for r in card.results}
    assert [(i, verdicts[i].status, verdicts[i].score, verdicts[i].context_behavior) for i in range(1, 12)] == [
        (1, "scored", 0.0, "used_correctly"), (2, "scored", 1.0, "used_correctly"),
        (3, "scored", 5.0, "missed_required_context"), (4, "scored", 30.0, "missed_required_context"),
        (5, "scored", 0.0, "ignored_irrelevant_context"), (6, "scored", 25.0, "misused_context"),
        (7, "scored", 2.0, "unclear"), (8, "judge_failed", None, None), (9, "not_sent", 25.0, None),
        (10, "scored", 0.0, "unclear"), (11, "scored", 0.0, "unclear")]
    # entry 8: three answers, none parsed; the last one's reason is recorded, its text kept for the validator
    v8 = verdicts[8]
    assert v8.attempts == 3 and v8.raw_answer == BROKEN_ANSWERS[2]
    assert v8.justification == ("answer did not parse after 3 attempts: contextBehavior is not the last line "
                                "(text follows it)")
    from mtboard.judges.store import read_answers

    log = [r for r in read_answers(judged["wd"], "gemba-mqm") if r["entry_id"] == 8]
    assert [(r["attempt"], r["parse"], r["parse_error"]) for r in log] == [
        (1, "failed", "no contextBehavior line; last line is 'no-error'"),
        (2, "failed", "unknown contextBehavior 'great'"),
        (3, "failed", "contextBehavior is not the last line (text follows it)")]
    s = card.judges["gemba-mqm"]
    # answers: 9 scored entries × 1 + entry 8 × 3 = 12, of which 3 did not parse
    assert (s.n_scored, s.n_failed, s.n_not_sent, s.n_answers, s.n_unparsed_answers) == (9, 1, 1, 12, 3)
    assert s.parse_failure_rate == 0.25
    assert s.admission is not None and s.admission.admitted
    # the card's own summary: rates over the 7 scored entries with history (the failure and the echo in none)
    assert s.breakdown["context_behavior"] == pytest.approx({
        "used_correctly": 2 / 7, "missed_required_context": 2 / 7, "ignored_irrelevant_context": 1 / 7,
        "misused_context": 1 / 7, "unclear": 1 / 7, "n": 7.0})


def test_the_ledger_slice_table_has_the_hand_computed_numbers(judged):
    (board,) = judged["doc"].boards
    (row,) = board.rows
    c = row.context_behaviour
    assert c is not None and c.judge == JUDGE
    assert (c.with_history, c.judged, c.parse_failed, c.call_failed, c.not_sent, c.excluded) == (9, 7, 1, 0, 1, 2)
    assert [x.label for x in c.labels] == list(LABELS)
    assert [x.count for x in c.labels] == [2, 2, 1, 1, 1]  # 7 in all: the parse failure is in no slice
    assert [x.share for x in c.labels] == pytest.approx([2 / 7, 2 / 7, 1 / 7, 1 / 7, 1 / 7])
    wide, narrow = (0.0822, 0.6411), (0.0257, 0.5131)  # Wilson, by hand (module docstring)
    assert [x.share_ci for x in c.labels] == [pytest.approx(b, abs=5e-5) for b in (wide, wide, narrow, narrow, narrow)]
    assert [x.mean_penalty for x in c.labels] == [0.5, 17.5, 0.0, 25.0, 2.0]
    assert [x.penalty_ci for x in c.labels] == [(0.0, 1.0), (5.0, 30.0), None, None, None]
    # the published document holds the same, and validates against the exported JSON Schema
    import jsonschema

    from mtboard.ledger.document import dumps

    published = json.loads(dumps(judged["doc"]))
    schema = json.loads((REPO / "schemas" / "ledger.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(published, schema)
    assert published["boards"][0]["rows"][0]["context_behaviour"]["labels"][1] == {
        "label": "missed_required_context", "count": 2, "share": 2 / 7, "share_ci": list(c.labels[1].share_ci),
        "mean_penalty": 17.5, "penalty_ci": [5.0, 30.0]}


def test_wilson_interval_and_the_mean_interval():
    from statsmodels.stats.proportion import proportion_confint

    from mtboard.score.stats import mean_interval, view_seed, wilson_interval

    for k, n in ((0, 1), (0, 7), (1, 7), (2, 7), (7, 7), (13, 40), (40, 40)):
        assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)
    assert wilson_interval(2, 7) == pytest.approx((0.0822189, 0.6410655), abs=1e-7)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    assert mean_interval([4.0], seed=1) is None  # one value: no interval, never a point
    assert mean_interval([0.0, 1.0], seed=view_seed("x")) == (0.0, 1.0)
    assert mean_interval([5.0, 5.0, 5.0], seed=3) == (5.0, 5.0)
    spread = mean_interval([0.0, 1.0, 5.0, 25.0], seed=7)
    assert spread == mean_interval([0.0, 1.0, 5.0, 25.0], seed=7)  # seeded: the same interval every time
    assert 0.0 < spread[0] < 7.75 < spread[1] <= 25.0  # around the mean 7.75, inside the values' range


def test_board_and_run_pages_show_the_slices(judged):
    pages, ledger = judged["pages"], judged["ledger"]
    lb = ledger.boards[0]
    (lc,) = lb.cards
    from mtboard.ledger.tables import run_page

    for path, what in ((lb.page, "per system"), (run_page(lc), "of this run")):
        page = pages[path]
        assert page.count("## Context behaviour") == 1, path
        assert f'aria-label="Context-behaviour labels {what}"' in page
        wide, narrow = "0.286<br><span class=\"mtb-muted\">[0.082, 0.641]", "0.143<br><span class=\"mtb-muted\">[0.026, 0.513]"
        for label, text in (("used_correctly", f"2 · {wide}"), ("missed_required_context", f"2 · {wide}"),
                            ("ignored_irrelevant_context", f"1 · {narrow}"), ("misused_context", f"1 · {narrow}"),
                            ("unclear", f"1 · {narrow}")):
            assert f'data-label="{label}">{text}</span></td>' in page, (path, label)
        for label, mean, n, ci in (("used_correctly", "0.50", 2, "[0.00, 1.00]"),
                                   ("missed_required_context", "17.50", 2, "[5.00, 30.00]"),
                                   ("ignored_irrelevant_context", "0.00", 1, "—"), ("misused_context", "25.00", 1, "—"),
                                   ("unclear", "2.00", 1, "—")):
            assert (f'data-label="{label}">{mean} <span class="mtb-muted">(n={n})</span><br>'
                    f'<span class="mtb-muted">{ci}</span></td>') in page, (path, label)
        assert '<td data-n="judged">7 of 9</td>' in page and '<td data-n="parse_failed">1</td>' in page
        assert '<td data-n="not_sent">1</td>' in page and '<td data-n="excluded">2</td>' in page
        assert 'href="../glossary.html#ctx-misused_context"' in page
        assert 'href="../methodology/verification.html#context-behaviour"' in page
    assert "whose answers never parsed" in pages[run_page(lc)]
    # the labels are explained in the glossary's terms and on the methodology page
    from mtboard.site import glossary

    assert {f"ctx-{label}" for label in LABELS} | {"context-behaviour"} <= set(glossary.BY_KEY)
    assert glossary.methodology_target("context-behaviour") == "methodology/verification.md#context-behaviour"
    method = pages["methodology/verification.md"]
    assert "## Context behaviour" in method and "Wilson score interval" in method


def test_no_section_without_slices_and_names_are_escaped(judged):
    """The board shows the section only when some row has slices: the same board with none has no section. A judge
    name with markup is shown as text."""
    import dataclasses

    from mtboard.site.boardpages import render_board_pages

    ledger = judged["ledger"]
    lb = ledger.boards[0]
    kept = lb.context_slices
    (path,) = kept
    try:
        lb.context_slices = {}
        pages = render_board_pages(judged["inputs"], ledger.boards, [], judged["root"], "2026-12-04 00:00 UTC",
                                   ledger=judged["doc"])
        assert "Context behaviour" not in pages[lb.page]
        lb.context_slices = {path: dataclasses.replace(kept[path], judge='<img src=x onerror="alert(1)">')}
        pages = render_board_pages(judged["inputs"], ledger.boards, [], judged["root"], "2026-12-04 00:00 UTC",
                                   ledger=judged["doc"])
    finally:
        lb.context_slices = kept
    assert "<img" not in pages[lb.page] and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in pages[lb.page]


def test_the_ledger_reads_the_verdicts_not_the_cards_summary(judged):
    """Nothing on the card but the verdicts decides a slice: a summary claiming another distribution changes nothing
    (the validator refuses such a card, below); a judge that failed its admission check gives no slices (issue 39);
    a corpus without history gives none."""
    from mtboard.ledger.context_slices import card_slices

    card = judged["card"]
    history = frozenset(range(1, 10))
    want = card_slices(card, history)
    assert want is not None and [x.count for x in want.labels] == [2, 2, 1, 1, 1]
    s = card.judges["gemba-mqm"]
    lying = card.model_copy(deep=True)
    lying.judges["gemba-mqm"] = s.model_copy(update={"breakdown": {
        **s.breakdown, "context_behavior": {"used_correctly": 1.0, "n": 7.0}}})
    assert card_slices(lying, history) == want
    refused = card.model_copy(deep=True)
    refused.judges["gemba-mqm"] = s.model_copy(update={"admission": s.admission.model_copy(
        update={"passed": 0, "admitted": False})})
    assert card_slices(refused, history) is None
    assert card_slices(card, frozenset()) is None


def _judge_problems(data: dict[str, Any], root: Path) -> list[tuple[str | None, str]]:
    from mtboard import validate as V

    report = V.validate_bytes(dump(reseal(data)), "card.json", V.make_context(root, root / "corpora"))
    return [(p.field, p.message) for p in report.problems if p.check == "judges"]


def test_the_validator_refuses_a_claimed_distribution_its_verdicts_do_not_give(judged):
    root = judged["root"]
    data = json.loads(judged["raw"])
    assert _judge_problems(copy.deepcopy(data), root) == []
    where = "$.judges.gemba-mqm.breakdown.context_behavior"
    # a claimed distribution that is not the verdicts' (re-sealed, so only the judges check can object)
    d = copy.deepcopy(data)
    d["judges"]["gemba-mqm"]["breakdown"]["context_behavior"].update(used_correctly=3 / 7, misused_context=0.0)
    assert _judge_problems(d, root) == [(where, "breakdown.context_behavior does not recompute from the verdicts")]
    # a claimed n that leaves out an entry with history
    d = copy.deepcopy(data)
    d["judges"]["gemba-mqm"]["breakdown"]["context_behavior"]["n"] = 6.0
    assert _judge_problems(d, root) == [(where, "breakdown.context_behavior does not recompute from the verdicts")]
    # a verdict relabelled together with the summary: its stored answer, parsed again, still says misused_context
    d = copy.deepcopy(data)
    (i,) = [k for k, r in enumerate(d["results"]) if r["entry_id"] == 6]
    d["results"][i]["judgements"]["gemba-mqm"]["context_behavior"] = "used_correctly"
    cb = d["judges"]["gemba-mqm"]["breakdown"]["context_behavior"]
    cb.update(used_correctly=3 / 7, misused_context=0.0)
    problems = _judge_problems(d, root)
    assert (f"$.results[{i}].judgements.gemba-mqm.context_behavior",
            "context_behavior 'used_correctly' but the judge's answer parsed again gives 'misused_context'") in problems
    # the parse failure cannot be turned into a labelled verdict without an answer that parses
    d = copy.deepcopy(data)
    (j,) = [k for k, r in enumerate(d["results"]) if r["entry_id"] == 8]
    d["results"][j]["judgements"]["gemba-mqm"].update(status="scored", score=0.0, context_behavior="used_correctly")
    assert (f"$.results[{j}].judgements.gemba-mqm.status",
            "the judge's stored answer does not parse (contextBehavior is not the last line (text follows it)), yet "
            "the verdict is scored") in _judge_problems(d, root)


def test_mtboard_ledger_row_prints_the_slices(judged):
    root = judged["root"]
    (row,) = judged["doc"].boards[0].rows
    p = mtboard(["ledger", "--submissions", str(root / "submissions"), "--corpora", str(root / "corpora"),
                 "--row", row.fingerprint[:12]], env={}, cwd=root)
    assert p.returncode == 0, p.stderr
    assert (f"context      judge {JUDGE}: 7 judged of 9 entries with history; apart: 1 parse failures, 0 call "
            "failures, 1 not sent; 2 without history excluded") in p.stdout
    assert ("  - missed_required_context        2  share 0.286 [0.082, 0.641]  mean MQM penalty 17.50 [5.00, 30.00]"
            in p.stdout)
    assert "  - misused_context                1  share 0.143 [0.026, 0.513]  mean MQM penalty 25.00\n" in p.stdout
