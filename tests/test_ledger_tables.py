"""Issue 12/15/31: the leaderboard tables as data (:mod:`mtboard.ledger.tables`) — views, cells, clusters, field
statistics, chart points, closest runs — fast enough for ``scripts/mutation.py ledger-tables``.

Two small boards of committed cards, read without validation and planned once per process (the plans come from
:mod:`mtboard.ledger.standing`, tested in tests/test_standing.py); every test builds the tables it checks
(0.1–0.3 s), so a mutant of this module is always the code that computes what the test checks:

* EN→CA: the committed folder (Apertium, Gemma few-shot, echo and empty baselines; 355 entries in six domains).
* EN→ES, 20 entries: the committed ``--limit 20`` cards only (Apertium, echo, four Gemma rows — one of them with two
  replicate runs and one reproduced by a second card), so that they are ranked (no full run on that board).

Values are read off the cards (scores, timestamps, latencies, page ids) or worked out by hand in the comments; judge
values come from hand-made judgements put on copies of the cards (no committed card is judged). Stand-ins
(``SimpleNamespace``) are used where a helper reads only a few attributes. tests/test_validity.py and
tests/test_site_build.py run the same code on the whole committed board.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import statistics
import tempfile
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest

from mtboard.core import fmt
from mtboard.core.schema import Outcome
from mtboard.ledger import standing as S
from mtboard.ledger import tables as T
from mtboard.ledger.load import load_inputs

ROOT = Path(__file__).resolve().parents[1]
ES20 = ["apertium-eng-spa__default__4041d9a622e6", "baseline-echo__baseline__619e8cab9410",
        "gemma-3-270m-q4-k-m.gguf__few-shot-completion__3ddc0a3a1255",
        "gemma-3-270m-q4-k-m.gguf__few-shot-completion__01f17c5339ac",
        "gemma-3-270m-q4-k-m.gguf__few-shot-completion__f7c45f8c2b1d",
        "gemma-3-270m-q4-k-m.gguf__zero-shot-completion__c09075e69625",
        "gemma-3-270m-q4-k-m.gguf__zero-shot-completion__d216d23fc69b"]
AP, GE, ECHO, EMPTY = "8ca0b3e02be0e88b", "46b87995239acff4", "fee2db17bc5396b1", "78b26823ef428ba1"
RESAMPLES = 200


@functools.cache
def _plans(which: str):
    subs = Path(tempfile.mkdtemp(prefix="mtb-tables-")) / "submissions"
    if which == "ca":
        shutil.copytree(ROOT / "submissions" / "mtb-en-ca-dev", subs / "ca")
    else:
        (subs / "es").mkdir(parents=True)
        for name in ES20:
            shutil.copy(ROOT / "submissions" / "mtb-en-es-dev" / f"{name}.json", subs / "es")
    # the development board's plan only: the EN→CA folder holds a diagnostic card too, planned apart (issue 40 item 6)
    return [p for p in S.decide(load_inputs(subs, ROOT / "corpora", validate=False)) if p.segment != S.DIAGNOSTIC]


def _board(which: str = "ca") -> T.Leaderboard:
    """The board's tables, built by the test that reads them (never shared between tests: mutmut runs, for a mutant,
    only the tests it saw call the mutated function, so every test must build what it checks)."""
    (lb,) = T.build_leaderboards(_plans(which), resamples=RESAMPLES)
    return lb


# --------------------------------------------------------------------------------------------------------------------
# small helpers


def test_labels_titles_and_pages():
    assert T.View("gov", 1, [], None, "p").label == "gov" and T.View(None, 1, [], None, "p").label == "all domains"
    lb = NS(language_pair="EN→CA", dataset_id="mtb-en-ca-dev", version="1.0.0")
    assert T.Leaderboard.title.fget(lb) == "EN→CA · mtb-en-ca-dev v1.0.0"
    assert T.run_page(NS(page_id="abc")) == "runs/abc.md"
    assert T.model_page("Org/Model X.1") == f"models/{fmt.slugify('Org/Model X.1')}.md"
    assert T._date(NS(timestamp="2026-12-01T02:16:55Z")) == "2026-12-01"


def test_method_name_shows_spec_prompt_and_condition_marked():
    def card(spec="apertium:eng-cat", backend="apertium", prompt=None, cond="default", slug="m/x"):
        return NS(method=NS(spec=spec, backend=backend, prompt_name=prompt), condition=cond, model_slug=slug)

    assert T.method_name(card()) == "apertium:eng-cat · default"
    # a gguf spec holding a local path is shown by the model slug
    assert T.method_name(card("gguf:/home/u/m.gguf", "gguf", "few-shot", "c1", "g-270m")) == \
        "gguf:g-270m · prompt few-shot · c1"
    assert T.method_name(card("x\u202e", prompt="p\u202e", cond="c\u202e")) == \
        "x[⚠U+202E] · prompt p[⚠U+202E] · c[⚠U+202E]"


def test_temperature_text():
    assert [T.temperature_text(NS(temperature=t)) for t in (None, 0, 0.7, 1.25)] == [fmt.DASH, "0", "0.7", "1.25"]


def _res(eid=1, outcome=Outcome.usable, error=None, chrf=50.0, judgements=None, latency=None, cost=None, exact=False,
         domain=None):
    return NS(entry_id=eid, checks=NS(outcome=outcome), error=error, chrf_score=chrf, judgements=judgements or {},
              latency_s=latency, cost_usd=cost, exact_match=exact, domain=domain)


def test_failed_and_sentence_chrf():
    other = next(o for o in Outcome if o != Outcome.usable)
    assert [T.failed(r) for r in (_res(), _res(outcome=other), _res(error="boom"))] == [False, True, True]
    assert T.sentence_chrf(_res(chrf=42)) == 42.0 and isinstance(T.sentence_chrf(_res(chrf=42)), float)
    assert [T.sentence_chrf(r) for r in (_res(outcome=other), _res(error="x"), _res(chrf=None))] == [0.0, 0.0, 0.0]


def test_shown_and_declared_read_the_standing():
    lc = NS(path="a.json", standing=NS(representative="a.json", declared=True))
    assert T.shown(lc) and T.declared(lc)
    lc = NS(path="b.json", standing=NS(representative="a.json", declared=False))
    assert not T.shown(lc) and not T.declared(lc)


def _j(score, status="ok"):
    return NS(score=score, status=status, flags=[])  # a rubric verdict without flags


def test_judged_values_and_common_cells():
    res = [_res(1, judgements={"rubric": _j(7)}), _res(2, judgements={"rubric": _j(None)}),
           _res(3, judgements={"rubric": _j(4, "judge_failed")}), _res(4, judgements={"other": _j(1)}),
           _res(5, judgements={"rubric": _j(0, "not_sent")}), _res(6, judgements={"rubric": None})]
    got = T._judged(res, "rubric")
    assert got == {1: 7.0, 5: 0.0} and isinstance(got[1], float)
    other = [_res(5, judgements={"rubric": _j(3)}), _res(9, judgements={"rubric": _j(3)})]
    assert T.common_cells([res, other], "rubric") == {5}
    assert T.common_cells([res], "rubric") == {1, 5}
    assert T.common_cells([], "rubric") == set()


def test_judge_text_says_how_many_entries_the_judge_failed_on():
    res = [_res(1, judgements={"rubric": _j(7)}), _res(2, judgements={"rubric": _j(None, "judge_failed")}),
           _res(3, judgements={"rubric": _j(None, "judge_failed")}), _res(4)]
    assert T._judge_text(6.5, res, "rubric") == "6.50 (2 of 4 judge_failed)"
    assert T._judge_text(6.5, res[:1] + res[3:], "rubric") == "6.50"
    assert T._judge_text(None, [], "rubric") == fmt.DASH


def test_mean_and_median():
    assert T._mean([1.0, 2.0, 4.0]) == pytest.approx(7 / 3) and T._mean([]) is None
    assert T._median([3.0, 1.0, 2.0, 10.0]) == 2.5 and T._median([]) is None
    assert isinstance(T._mean([1, 2]), float) and isinstance(T._median([1, 3]), float)


def test_speed_is_a_median_latency_or_a_throughput_never_a_batch_average():
    card = NS(scores=NS(median_latency_seconds=0.9, entries_per_minute=120.0))
    timed = [_res(1, latency=0.4), _res(2, latency=None), _res(3, latency=1.0), _res(4, latency=0.6)]
    assert T._speed(card, timed, True) == T.Cell("0.90 s", 0.9)  # the whole segment: the card's own median
    assert T._speed(card, timed, False) == T.Cell("0.60 s", 0.6)  # a domain: the median of 0.4, 0.6, 1.0
    batch = [_res(1), _res(2)]
    # 120 entries a minute = 2.0 entries/s; sorts as 0.5 s an entry
    assert T._speed(card, batch, True) == T.Cell("batch: 2.0 entries/s", 0.5)
    assert T._speed(card, batch, False) == T.Cell(fmt.DASH, None)
    assert T._speed(NS(scores=NS(median_latency_seconds=None, entries_per_minute=0.0)), batch, True) == \
        T.Cell(fmt.DASH, None)
    assert T._speed(NS(scores=NS(median_latency_seconds=None, entries_per_minute=None)), batch, True) == \
        T.Cell(fmt.DASH, None)


# --------------------------------------------------------------------------------------------------------------------
# the EN→CA board


def test_the_ca_board_its_views_and_pages():
    lb = _board()
    key = "mtb-en-ca-dev-v1.0.0"
    assert (lb.key, lb.dataset_id, lb.version, lb.language_pair, lb.segment) == (
        key, "mtb-en-ca-dev", "1.0.0", "EN→CA", "development")
    assert (lb.page, lb.hard_page, lb.corpus.path, lb.unranked) == (f"leaderboards/{key}.md", f"hard/{key}.md",
                                                                    "mtb-en-ca-dev.json", [])
    assert lb.sha256 == lb.corpus.sha256 and len(lb.ranked_ids) == 355 and len(lb.cards) == 4
    assert lb.rows is _plans("ca")[0].rows
    # the corpus's domains, sorted; one view each after the whole segment (entries per domain counted in the corpus:
    # gov 30, legal 45, literary 73, medical 55, tech 80, ui 72 = 355)
    assert lb.domains == ["gov", "legal", "literary", "medical", "tech", "ui"]
    assert [(v.domain, v.n_entries, v.page) for v in lb.views] == [(None, 355, f"leaderboards/{key}.md")] + [
        (d, n, f"leaderboards/{key}-{d}.md") for d, n in zip(lb.domains, (30, 45, 73, 55, 80, 72))]
    dev = {e.id: e for e in lb.corpus.corpus.entries if e.segment.value == "development"}  # counted in the corpus
    assert sorted(dev) == lb.ranked_ids
    assert [sum(1 for e in dev.values() if e.domain and e.domain.value == d) for d in lb.domains] == \
        [30, 45, 73, 55, 80, 72]
    for v in lb.views:
        assert v.ordering_note == "ordered by composite; ranks and CIs from a paired bootstrap of the composite"
        assert v.judge_cells == {} and v.mdd is not None and v.mdd > 0
        assert v.pairwise.shape == (2, 2) and v.pairwise[0, 0] == 1.0 and v.pairwise[0, 1] < 0.05


def test_the_ca_whole_segment_rows():
    lb = _board()
    rows = lb.views[0].rows
    assert [r.lc.page_id for r in rows] == [AP, GE, ECHO, EMPTY]  # by composite; the baselines (0.0) by name: "echo"
    ap, ge, echo, empty = rows
    card = ap.lc.card
    assert (ap.composite, ap.chrf, ap.chrf_ci) == (0.584633, card.scores.chrf_plus_plus, tuple(card.scores.chrf_ci95))
    assert (ap.rank, ap.position, ap.reference, ge.rank, ge.position) == ("1", 1, False, "2", 2)
    assert (echo.rank, echo.position, echo.reference, empty.rank) == ("reference", 0, True, "reference")
    assert ap.composite_ci[0] < 0.584633 < ap.composite_ci[1] and ap.boot.shape == (RESAMPLES,)
    assert ap.chrf_boot.shape == (RESAMPLES,) and abs(float(np.mean(ap.boot)) - 0.584633) < 0.01
    c = ap.cells
    assert {k: c[k].text for k in ("rank", "method", "composite", "composite_ci", "chrf", "fst", "exact", "semantic",
                                   "cost", "cost_adj", "mclass", "model", "qtier", "vtier", "date", "mqm",
                                   "checkpoints")} == {
        "rank": "1", "method": "apertium:eng-cat · default", "composite": "0.585",
        "composite_ci": f"[{ap.composite_ci[0]:.3f}, {ap.composite_ci[1]:.3f}]", "chrf": "53.5", "fst": "0.968",
        "exact": "0.065", "semantic": fmt.DASH, "cost": "no API cost (local)", "cost_adj": "0.585", "mclass": "pipeline",
        "model": "apertium/eng-cat", "qtier": "functional", "vtier": "maintainer re-run (unattested)",
        "date": "2026-12-01", "mqm": fmt.DASH, "checkpoints": fmt.DASH}
    # sort keys: rank = first position of its range + position / 10000; the method by its lower-cased name
    assert (c["rank"].sort, ge.cells["rank"].sort, echo.cells["rank"].sort) == (1.0001, 2.0002, None)
    assert (c["composite"].sort, c["composite_ci"].sort, c["chrf_ci"].sort) == (
        0.584633, ap.composite_ci[0], card.scores.chrf_ci95[0])
    assert (c["method"].sort, c["model"].sort, c["date"].sort, c["vtier"].sort) == (
        "apertium:eng-cat · default", "apertium/eng-cat", "2026-12-01T02:16:55Z", ap.lc.standing.rank_order)
    assert [c[k].declared for k in ("method", "model", "date", "composite")] == [True, True, True, False]
    # the Apertium card is a batch engine: 355 entries in card.scores.entries_per_minute / 60 a second
    eps = card.scores.entries_per_minute / 60
    assert c["speed"] == T.Cell(f"batch: {eps:.1f} entries/s", 1 / eps)
    assert ge.cells["speed"].text == fmt.secs(ge.lc.card.scores.median_latency_seconds)
    assert ge.cells["qtier"].text == "emerging" and ge.cells["method"].sort == ge.cells["method"].text.lower()


def test_the_ca_domain_rows():
    lb = _board()
    gov = lb.views[1]
    ap = gov.rows[0]
    card = ap.lc.card
    bd = card.scores.by_domain["gov"]
    assert (ap.lc.page_id, ap.composite, ap.chrf) == (AP, bd.composite, bd.chrf_plus_plus)
    assert ap.chrf_ci != tuple(card.scores.chrf_ci95) and ap.chrf_ci[0] < bd.chrf_plus_plus < ap.chrf_ci[1]
    c = ap.cells
    assert {k: c[k].text for k in ("fst", "semantic", "speed", "cost_adj", "qtier", "exact", "cost")} == {
        "fst": fmt.DASH, "semantic": fmt.DASH, "speed": fmt.DASH, "cost_adj": fmt.DASH, "qtier": fmt.DASH,
        "exact": fmt.rate(bd.exact_match_rate), "cost": "no API cost (local)"}
    assert (c["qtier"].sort, c["fst"].sort) == (None, None)
    ids = [e.id for e in lb.corpus.corpus.entries if e.segment.value == "development" and e.domain.value == "gov"]
    assert len(ids) == 30
    # Gemma's per-entry latencies over the 30 gov entries: their median
    ge = gov.rows[1]
    lat = [r.latency_s for r in ge.lc.card.results if r.entry_id in set(ids)]
    assert ge.cells["speed"] == T.Cell(fmt.secs(statistics.median(lat)), statistics.median(lat))


def test_ca_field_statistics_items_and_chart():
    lb = _board()
    ap, ge = (lb.views[0].rows[0].lc.card, lb.views[0].rows[1].lc.card)
    by = {id(c): {r.entry_id: r for r in c.results} for c in (ap, ge)}
    # the median of two real systems is their mean; the baselines do not count
    for eid in (1, 2, 81):
        assert lb.field_entry_median[eid] == pytest.approx(
            (T.sentence_chrf(by[id(ap)][eid]) + T.sentence_chrf(by[id(ge)][eid])) / 2)
    assert len(lb.field_entry_median) == 355
    assert lb.item_methods == 2 and len(lb.item_analysis) == 355 and lb.easy_items == []
    assert [x["id"] for x in lb.hard_items][:2] == [81, 96] and len(lb.hard_items) == 5
    h = lb.hard_items[0]
    assert (h["share"], h["n"], h["struggle"], h["pass"], h["dev"], h["domain"], h["source"], h["reference"]) == (
        1.0, 2, 2, 0, True, "ui", "Afrikaans", "Afrikans")
    assert (h["discrimination"], h["suspect"]) == (None, False) and h["difficulty"] == lb.item_analysis[80]["difficulty"]
    assert all(a["share"] >= b["share"] for a, b in zip(lb.hard_items, lb.hard_items[1:]))
    a = lb.item_analysis[0]
    assert (a["id"], a["domain"], a["fail_share"], a["n"], a["suspect"], a["output_agreement"]) == (
        1, "tech", 0.0, 2, False, None)
    assert a["difficulty"] == pytest.approx(lb.field_entry_median[1])  # mean sentence chrF++ of the two systems
    assert a["source"].startswith("The more redundant") and a["reference"].startswith("Com més redundància")
    assert lb.suspect_items == []
    assert lb.chart_points == [
        {"label": "apertium:eng-cat · default", "model": "apertium/eng-cat", "cost": 0.0, "composite": 0.584633,
         "chrf": ap.scores.chrf_plus_plus, "position": 1, "href": f"runs/{AP}.md"},
        {"label": T.method_name(ge), "model": "gemma-3-270m-q4_k_m.gguf", "cost": 0.0, "composite": 0.343458,
         "chrf": ge.scores.chrf_plus_plus, "position": 2, "href": f"runs/{GE}.md"}]


# --------------------------------------------------------------------------------------------------------------------
# the EN→ES 20-entry board: replicates, a reproduction, closest runs


def test_a_replicate_card_is_shown_by_its_mean_and_spread():
    lb = _board("es")
    rows = {r.lc.page_id: r for r in lb.views[0].rows}
    rep = rows["3ddc0a3a1255467c"]
    rr = rep.lc.card.scores.replicates
    assert (rep.composite, rep.chrf) == (rr.composite_mean, rr.chrf_mean)
    assert rep.cells["composite"].text == fmt.pm(rr.composite_mean, rr.composite_stdev, 3) == "0.405 ± 0.014"
    assert rep.cells["chrf"].text == fmt.pm(rr.chrf_mean, rr.chrf_stdev, 1) == "28.3 ± 1.4"
    # with replicates the chrF CI is the bootstrap's, not the stored one of run 0
    assert rep.chrf_ci != tuple(rep.lc.card.scores.chrf_ci95 or ()) and rep.chrf_ci[0] < rep.chrf_ci[1]
    # the bootstrap is the mean over the three runs of each run's resampled composite
    counts = np.ones((1, 20), dtype=np.int64)
    one = T._composite_boot(rep.lc.card, lb.ranked_ids, counts)
    assert float(one[0]) == pytest.approx(rr.composite_mean, abs=1e-6)
    assert len(T._runs(rep.lc.card)) == 3 and T._runs(rep.lc.card)[0] == list(rep.lc.card.results)
    tech = {r.lc.page_id: r for r in lb.views[1].rows}["3ddc0a3a1255467c"]
    assert lb.views[1].domain == "tech" and tech.composite == pytest.approx(rr.composite_mean, abs=1e-6)
    assert tech.cells["composite"].text == "0.405"  # no spread on a domain view
    single = rows["01f17c5339ac2787"]
    assert single.composite == single.lc.card.scores.composite
    assert float(T._composite_boot(single.lc.card, lb.ranked_ids, counts)[0]) == pytest.approx(
        single.lc.card.scores.composite, abs=1e-6)


def test_the_es_board_ranks_clusters_and_counts_one_card_per_row():
    lb = _board("es")
    v = lb.views[0]
    assert [(r.lc.page_id, r.rank, r.position) for r in v.rows] == [
        ("4041d9a622e6e221", "1", 1), ("3ddc0a3a1255467c", "2–6", 2), ("01f17c5339ac2787", "2–6", 3),
        ("f7c45f8c2b1d941d", "2–6", 4), ("d216d23fc69ba2de", "2–6", 5), ("c09075e69625dbd8", "2–6", 6),
        ("619e8cab94103be6", "reference", 0)]
    assert [r.cells["rank"].sort for r in v.rows[:3]] == [1.0001, 2.0002, 2.0003]
    assert v.pairwise.shape == (6, 6)
    # f7c45f8c2b1d reproduces 3ddc0a3a1255's method: one card per row in the field statistics and the chart
    assert lb.item_methods == 5 and len(lb.chart_points) == 5
    assert [p["position"] for p in lb.chart_points] == [1, 2, 3, 5, 6]
    assert "f7c45f8c2b1d941d" not in {p["href"][5:21] for p in lb.chart_points}
    eid = lb.ranked_ids[0]
    shown = [r.lc.card for r in v.rows if not r.reference and T.shown(r.lc)]
    assert lb.field_entry_median[eid] == pytest.approx(statistics.median(
        T.sentence_chrf(next(x for x in c.results if x.entry_id == eid)) for c in shown))


def test_closest_runs_are_other_rows_of_the_same_model_with_fewest_differences():
    boards = [_board("es")]
    got = {k: (v[0].page_id, v[1]) for k, v in T.closest_runs(boards).items()}
    assert got == {"3ddc0a3a1255467c": ("01f17c5339ac2787", 1), "c09075e69625dbd8": ("d216d23fc69ba2de", 1),
                   "d216d23fc69ba2de": ("c09075e69625dbd8", 1), "01f17c5339ac2787": ("3ddc0a3a1255467c", 1),
                   "f7c45f8c2b1d941d": ("01f17c5339ac2787", 1)}
    assert T.closest_runs(boards, cap=1) == {}  # one card per model: nothing to compare with


def _fp_card(fp, **comps):
    return NS(fingerprint=NS(hash=fp, components=comps), model_slug="m")


def test_fingerprint_diff_and_ties_by_page_id():
    a, b = _fp_card("A", x=1, y=2), _fp_card("B", y=3, z=4)
    assert T.fingerprint_diff(a, b) == [("x", 1, None, True), ("y", 2, 3, True), ("z", None, 4, True)]
    assert T.fingerprint_diff(a, a) == [("x", 1, 1, False), ("y", 2, 2, False)]
    cards = [NS(page_id="p3", card=_fp_card("A", x=1, y=1)), NS(page_id="p2", card=_fp_card("B", x=2, y=1)),
             NS(page_id="p1", card=_fp_card("C", x=1, y=2)), NS(page_id="p0", card=_fp_card("A", x=1, y=1))]
    got = {k: (v[0].page_id, v[1]) for k, v in T.closest_runs([NS(cards=cards)]).items()}
    # p3 and p0 share fingerprint A (never their own reproduction): each finds B (p2) and C (p1) one component
    # away, and takes p1 (the smaller page id); B and C find p3 and p0 one away and take p0; B–C differ in 2
    assert got == {"p3": ("p1", 1), "p0": ("p1", 1), "p2": ("p0", 1), "p1": ("p0", 1)}


def test_tool_rows_of_a_pipeline_card():
    card = NS(tools_enabled=["fst-gate"], method=NS(fst_retries=2),
              results=[NS(tool_call_count=c) for c in (1, 3, 0, 2)])
    # 6 calls over 4 entries = 1.50 each; 3 entries checked, so 6 − 3 = 3 retries, over 2 entries (3 and 2 calls)
    assert T.tool_rows(card) == [
        ("FST gate retry limit", 2, "method"),
        ("tool calls", "6 total, 1.50 per entry: each hypothesis checked counts, so 3 were retries (over 2 entries)",
         "results")]
    card.method.fst_retries = None
    assert [r[0] for r in T.tool_rows(card)] == ["tool calls"]
    assert T.tool_rows(NS(tools_enabled=[], method=NS(fst_retries=1), results=[])) == []
    empty = NS(tools_enabled=["x"], method=NS(fst_retries=None), results=[])
    assert T.tool_rows(empty)[0][1].startswith("0 total, 0.00 per entry")


# --------------------------------------------------------------------------------------------------------------------
# judged metrics, checkpoints, costs in a domain (hand-made on copies of the committed cards)


def _judge_cards(plan, marks):
    """Copies of the plan's ranked cards with hand-made judgements: ``marks`` page_id → {entry id: (score, status)}; the
    rubric judge admitted (the board counts only an admitted judge), the checkpoint judge taking no admission."""
    out = []
    for lc in plan.ranked:
        m = marks.get(lc.page_id)
        if m is None:
            out.append(lc)
            continue
        results = [r.model_copy(update={"judgements": {"rubric": _j(*m[r.entry_id])} if r.entry_id in m else {},
                                        "cost_usd": 0.002}) for r in lc.card.results]
        card = lc.card.model_copy(update={"results": results, "judges": {"rubric": NS(mean=None, spread=None,
                                                                                       admission=NS(admitted=True)),
                                                                           "checkpoints": NS(mean=71.25, spread=2.5)}})
        out.append(dataclasses.replace(lc, card=card))
    return out


def test_judged_columns_compare_rows_on_common_cells_only():
    plan = _plans("ca")[0]
    ids = plan.ref_ids
    # Apertium judged on the first 4 entries (one of them judge_failed), Gemma on entries 2–5: common cells 2, 4
    # (entry 3 failed for Apertium)
    marks = {AP: {ids[0]: (9, "ok"), ids[1]: (8, "ok"), ids[2]: (1, "judge_failed"), ids[3]: (6, "ok")},
             GE: {ids[1]: (4, "ok"), ids[2]: (5, "ok"), ids[3]: (2, "ok"), ids[4]: (7, "ok")}}
    ranked = _judge_cards(plan, marks)
    lb = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                       "h.md", ranked, ids, [], [], [])
    v = T._view(lb, ranked, None, RESAMPLES)
    assert v.judge_cells == {"rubric": (2, 355)}
    rows = {r.lc.page_id: r for r in v.rows}
    # Apertium: mean of 8 and 6 = 7.00, one judge_failed of 355; Gemma: mean of 4 and 2 = 3.00
    assert rows[AP].cells["rubric"] == T.Cell("7.00 (1 of 355 judge_failed)", 7.0)
    assert rows[GE].cells["rubric"] == T.Cell("3.00", 3.0)
    assert rows[ECHO].cells["rubric"] == T.Cell(fmt.DASH, None)
    assert rows[AP].cells["checkpoints"] == T.Cell("71.2 ± 2.5", 71.25)  # the card's judge summary, whole segment
    assert rows[AP].cells["mqm"] == T.Cell(fmt.DASH, None)
    # a domain view: the checkpoint judge is not per entry; costs are the mean over the domain's entries
    d = T._view(lb, ranked, "gov", RESAMPLES)
    g = {r.lc.page_id: r for r in d.rows}
    assert g[AP].cells["checkpoints"] == T.Cell(fmt.DASH, None)
    assert g[AP].cells["cost"] == T.Cell(fmt.usd(0.002), pytest.approx(0.002))
    assert g[ECHO].cells["cost"].sort == 0.0  # every committed result costs 0.0
    assert d.judge_cells == {"rubric": (0, 30)}  # none of the judged entries is a gov entry


def test_checkpoints_without_a_spread_and_a_missing_domain_cost():
    plan = _plans("ca")[0]
    lc = next(x for x in plan.ranked if x.page_id == GE)
    card = lc.card.model_copy(update={"judges": {"checkpoints": NS(mean=50.0, spread=None)}})
    sub = list(card.results[:3])
    lc2 = dataclasses.replace(lc, card=card)
    cells = T._cells(lc2, None, sub, 1.0, None, None, 0.5, None, None, {})
    assert cells["checkpoints"] == T.Cell("50.0", 50.0)
    nocost = [r.model_copy(update={"cost_usd": None}) if i == 0 else r for i, r in enumerate(sub)]
    cells = T._cells(lc2, "tech", nocost, 1.0, None, None, 0.5, None, None, {})
    assert cells["cost"] == T.Cell("not priced", None)  # one entry without a cost: no mean
    # a domain the card's by_domain lacks: exact match from the entries (1 of 3 exact)
    exact = [r.model_copy(update={"exact_match": i == 1}) for i, r in enumerate(sub)]
    cells = T._cells(lc2, "nowhere", exact, 1.0, None, None, 0.5, None, None, {})
    assert cells["exact"] == T.Cell(fmt.rate(1 / 3), pytest.approx(1 / 3))
    assert T._cells(lc2, "nowhere", [], None, None, None, None, None, None, {})["exact"] == T.Cell(fmt.DASH, None)


# --------------------------------------------------------------------------------------------------------------------
# suspect references: output agreement (sentence chrF++ from sacrebleu, recomputed here with sacrebleu itself)


def test_agreement_between_outputs_and_with_the_reference():
    import sacrebleu

    def chrf(h, r):
        return sacrebleu.sentence_chrf(h, [r], word_order=2).score

    texts = ["The meeting starts at nine.", "The meeting begins at nine.", "Meeting at nine."]
    between, to_ref = T._agreement(texts, "Bananas are yellow.")
    pairs = [(a, b) for i, a in enumerate(texts) for j, b in enumerate(texts) if i != j]  # both directions: 6
    assert between == pytest.approx(statistics.fmean(chrf(a, b) for a, b in pairs), abs=1e-9)
    assert to_ref == pytest.approx(statistics.fmean(chrf(t, "Bananas are yellow.") for t in texts), abs=1e-9)
    assert between > 40 and to_ref < 10  # the outputs agree with each other, not with the reference
    same, ref = T._agreement(["Hola.", "Hola."], "Hola.")
    assert (same, ref) == (pytest.approx(100.0), pytest.approx(100.0)) and isinstance(same, float)
    assert T._agreement(["only one"], "x") == (None, None) and T._agreement([], "x") == (None, None)


EASY = {"4041d9a622e6e221": {"exact_match": True, "chrf_score": 50.0},
        "3ddc0a3a1255467c": {"exact_match": False, "equivalent_match": True, "chrf_score": 50.0},
        "01f17c5339ac2787": {"exact_match": False, "equivalent_match": False, "chrf_score": 90.0},
        "d216d23fc69ba2de": {"exact_match": False, "equivalent_match": False, "chrf_score": 95.0},
        "c09075e69625dbd8": {"exact_match": False, "equivalent_match": False, "chrf_score": 91.0},
        "f7c45f8c2b1d941d": {}}
"""Hand-made results on the second entry of the 20-entry board: how each shown system passes it."""


def test_an_entry_every_system_struggles_on_is_a_suspect_reference():
    plan = _plans("es")[0]
    target, easy = plan.ref_ids[0], plan.ref_ids[1]
    # hand-made: every real system's output for the first entry scores 0 sentence chrF++ (each one's lowest
    # decile), and one of them fails mechanically; the echo baseline is left alone (baselines do not count)
    ranked = []
    for lc in plan.ranked:
        if S.is_reference(lc.card):
            ranked.append(lc)
            continue
        res = []
        for r in lc.card.results:
            if r.entry_id == target:
                r = r.model_copy(update={"chrf_score": 0.0, "exact_match": False, "equivalent_match": False})
                if lc.page_id == "d216d23fc69ba2de":  # fails mechanically, though its stored chrF++ would pass
                    r = r.model_copy(update={"error": "boom", "chrf_score": 95.0})
            if r.entry_id == easy:
                r = r.model_copy(update={"checks": r.checks.model_copy(update={"outcome": Outcome.usable}),
                                         "error": None, **EASY[lc.page_id]})
            res.append(r)
        ranked.append(dataclasses.replace(lc, card=lc.card.model_copy(update={"results": res})))
    lb = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                       "h.md", ranked, plan.ref_ids, [], [], [])
    entries = {r.entry_id: r for r in ranked[0].card.results}
    entries[target] = entries[target].model_copy(update={"domain": None})  # an entry without a domain
    T._items(lb, ranked, entries)
    assert lb.item_methods == 5  # five rows with a shown card: f7c45f8c2b1d is a reproduction, the echo a baseline
    (sus,) = lb.suspect_items
    assert (sus["id"], sus["fail_share"], sus["n"], sus["suspect"], sus["domain"]) == (target, 1.0, 5, True, None)
    assert sus["reference"] == entries[target].expected
    # an entry that is no suspect gets no agreement computed
    assert all(a["output_agreement"] is None and a["reference_agreement"] is None
               for a in lb.item_analysis if a["id"] != target)
    # each hard item carries its analysis row's difficulty, discrimination and suspect flag
    rows = {a["id"]: a for a in lb.item_analysis}
    assert all((h["difficulty"], h["discrimination"], h["suspect"]) == (
        rows[h["id"]]["difficulty"], rows[h["id"]]["discrimination"], rows[h["id"]]["suspect"]) for h in lb.hard_items)
    firsts = {lc.page_id: next(r for r in lc.card.results if r.entry_id == target) for lc in ranked
              if not S.is_reference(lc.card) and T.shown(lc)}
    # the committed c09075e69625 output is the untranslated source and d216d23fc69b's now fails: both are left out
    # of the agreement, which compares the three usable outputs
    assert sorted(k for k, r in firsts.items() if T.failed(r)) == ["c09075e69625dbd8", "d216d23fc69ba2de"]
    shown_usable = [r.predicted for r in firsts.values() if not T.failed(r)]
    assert len(shown_usable) == 3
    assert (sus["output_agreement"], sus["reference_agreement"]) == T._agreement(shown_usable, entries[target].expected)
    assert lb.item_analysis[0] is sus and sus["source"] == entries[target].source
    (hard,) = [h for h in lb.hard_items if h["id"] == target]
    assert (hard["share"], hard["struggle"], hard["suspect"], hard["domain"]) == (1.0, 5, True, None)
    assert hard["pass"] == 0  # the failed output's stored 95.0 does not make it a pass
    # every shown system passes the easy entry: an exact match, an equivalent match, chrF++ exactly 90 and above
    (e,) = lb.easy_items
    assert (e["id"], e["pass"], e["n"], e["struggle"]) == (easy, 5, 5, 0)
    assert hard["difficulty"] == sus["difficulty"] and hard["discrimination"] == sus["discrimination"]
    assert lb.hard_items[0]["id"] == target  # the largest share first


def test_closest_runs_look_at_200_cards_per_model_by_default():
    cards = [NS(page_id=f"p{i:03d}", card=_fp_card(f"F{i}", x=i)) for i in range(202)]
    got = T.closest_runs([NS(cards=cards)])
    assert len(got) == 200 and "p199" in got and "p200" not in got and "p201" not in got
    assert got["p000"][0].page_id == "p001" and got["p000"][1] == 1  # every other card differs in x: the smallest id


# --------------------------------------------------------------------------------------------------------------------
# the struggle rule, the replicate mean, the view's seed


def _o(score, failed=False, passed=False):
    from mtboard.score.stats import ItemOutcome

    return ItemOutcome(failed, passed, score)


def test_struggle_sets_take_each_method_lowest_decile_and_failures():
    five = {i: _o(s) for i, s in enumerate((30.0, 10.0, 50.0, 20.0, 40.0), start=1)}
    twenty = {i: _o(float(i)) for i in range(1, 21)}
    flat = {1: _o(5.0), 2: _o(5.0), 3: _o(5.0, failed=True)}
    top_two = {1: _o(5.0), 2: _o(5.0), 3: _o(5.0), 4: _o(5.0), 5: _o(9.0)}
    got = T._struggle_sets({"empty": {}, "five": five, "twenty": twenty, "flat": flat, "top_two": top_two})
    # five scores: ceil(0.5) − 1 = index 0, the lowest (10.0, entry 2); twenty: ceil(2.0) − 1 = index 1, the two
    # lowest (entries 1, 2); a method scoring 5.0 everywhere struggles on nothing but its failure (5.0 is its top);
    # four 5.0s under a 9.0 are its lowest decile
    assert got == {"empty": set(), "five": {2}, "twenty": {1, 2}, "flat": {3}, "top_two": {1, 2, 3, 4}}


def test_a_two_run_card_is_bootstrapped_as_the_mean_of_its_runs():
    plan = _plans("es")[0]
    lc = next(x for x in plan.ranked if x.card.replicate_runs)
    ids = plan.ref_ids
    counts = np.ones((1, len(ids)), dtype=np.int64)
    two = lc.card.model_copy(update={"replicate_runs": lc.card.replicate_runs[:1]})
    run0 = lc.card.model_copy(update={"replicate_runs": []})
    run1 = lc.card.model_copy(update={"replicate_runs": [], "results": lc.card.replicate_runs[0].results})
    want = (T._composite_boot(run0, ids, counts) + T._composite_boot(run1, ids, counts)) / 2
    assert T._composite_boot(two, ids, counts) == pytest.approx(want)
    assert T._composite_boot(run0, ids, counts) != pytest.approx(T._composite_boot(run1, ids, counts))


def test_an_equivalent_match_rate_brings_its_column_into_the_bootstrap():
    from mtboard.score.metrics import bootstrap
    from mtboard.score.metrics.composite import entry_columns

    plan = _plans("ca")[0]
    lc = next(x for x in plan.ranked if x.page_id == AP)
    ids = plan.ref_ids
    counts = np.ones((1, len(ids)), dtype=np.int64)
    # hand-made: the card claims an equivalent-match rate, and every third output is an equivalent match
    res = [r.model_copy(update={"equivalent_match": r.entry_id % 3 == 0}) for r in lc.card.results]
    card = lc.card.model_copy(update={"results": res, "scores": lc.card.scores.model_copy(
        update={"equivalent_match_rate": 0.33})})
    with_col = bootstrap.composite_resamples([r.stats.chrf for r in res], entry_columns(res, has_equiv=True,
                                                                                       has_fst=True), counts)
    assert T._composite_boot(card, ids, counts) == pytest.approx(with_col)
    without = T._composite_boot(card.model_copy(update={"scores": lc.card.scores}), ids, counts)
    assert float(with_col[0]) != pytest.approx(float(without[0]))


def test_every_view_draws_its_resamples_from_its_own_documented_seed():
    from mtboard.score import stats
    from mtboard.score.metrics import bootstrap

    lb = _board()
    for v in lb.views[:2]:
        ids = lb.ranked_ids if v.domain is None else [
            e.id for e in lb.corpus.corpus.entries if e.segment.value == "development" and e.domain.value == v.domain]
        # spec §4.6: the seed is the dataset id, version, corpus SHA-256 and the domain ("*" for the whole segment)
        seed = stats.view_seed("mtb-en-ca-dev", "1.0.0", lb.sha256, v.domain or "*")
        counts = bootstrap.resample_counts(len(ids), RESAMPLES, seed)
        row = v.rows[0]
        assert row.composite_ci == bootstrap.percentile_interval(T._composite_boot(row.lc.card, ids, counts))


def test_a_domain_view_of_one_card_or_none():
    plan = _plans("ca")[0]
    one = [x for x in plan.ranked if x.page_id == AP]
    lb = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                       "h.md", one, plan.ref_ids, [], [], [])
    v = T._view(lb, one, "gov", RESAMPLES)
    assert (v.n_entries, [r.rank for r in v.rows], v.page) == (30, ["1"], "lb-gov.md")
    empty = T._view(lb, [], "gov", RESAMPLES)
    assert (empty.n_entries, empty.rows, empty.judge_cells) == (0, [], {})


def test_hard_items_at_the_threshold_sorted_by_share(monkeypatch):
    from mtboard.score import stats

    plan = _plans("es")[0]
    lb = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                       "h.md", plan.ranked, plan.ref_ids, [], [], [])
    entries = {r.entry_id: r for r in plan.ranked[0].card.results}
    T._items(lb, plan.ranked, entries)
    shares = sorted({it.struggle_share for it in stats.item_statistics(
        {lc.page_id: {r.entry_id: stats.ItemOutcome(T.failed(r), False, T.sentence_chrf(r)) for r in lc.card.results}
         for lc in plan.ranked if not S.is_reference(lc.card) and T.shown(lc)})})
    assert len(shares) >= 2  # the 20 entries are struggled on by different shares of the five systems
    # every item at or above the threshold is hard: with the threshold at the largest share, exactly those
    monkeypatch.setattr(stats, "HARD_SHARE", shares[-1])
    lb2 = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                        "h.md", plan.ranked, plan.ref_ids, [], [], [])
    T._items(lb2, plan.ranked, entries)
    assert lb2.hard_items and all(x["share"] == shares[-1] for x in lb2.hard_items)
    monkeypatch.setattr(stats, "HARD_SHARE", 0.0)  # every item: largest share first, then by id
    lb3 = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                        "h.md", plan.ranked, plan.ref_ids, [], [], [])
    T._items(lb3, plan.ranked, entries)
    assert [(x["share"], x["id"]) for x in lb3.hard_items] == sorted(
        ((x["share"], x["id"]) for x in lb3.hard_items), key=lambda t: (-t[0], t[1]))
    assert lb3.hard_items[0]["share"] == shares[-1] and lb3.hard_items[-1]["share"] == shares[0]
    # every item hard: each carries its analysis row's discrimination (a number where the five systems differ)
    rows = {a["id"]: a for a in lb3.item_analysis}
    assert len(lb3.hard_items) == 20 and all(h["discrimination"] == rows[h["id"]]["discrimination"]
                                             for h in lb3.hard_items)
    assert any(isinstance(h["discrimination"], float) for h in lb3.hard_items)


def test_a_suspect_needs_the_fail_share_at_or_above_the_threshold(monkeypatch):
    from mtboard.score import stats

    plan = _plans("es")[0]
    target = plan.ref_ids[0]
    ranked = [lc if S.is_reference(lc.card) else dataclasses.replace(lc, card=lc.card.model_copy(update={"results": [
        r.model_copy(update={"chrf_score": 0.0}) if r.entry_id == target else r for r in lc.card.results]}))
        for lc in plan.ranked]
    monkeypatch.setattr(stats, "SUSPECT_FAIL_SHARE", 1.0)  # exactly the target's fail share
    lb = T.Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus, "lb.md",
                       "h.md", ranked, plan.ref_ids, [], [], [])
    T._items(lb, ranked, {r.entry_id: r for r in ranked[0].card.results})
    row = next(a for a in lb.item_analysis if a["id"] == target)
    assert row["fail_share"] == 1.0 and row["output_agreement"] is not None


def _domainless(plan, keep=None):
    ranked = [dataclasses.replace(lc, card=lc.card.model_copy(update={"results": [
        r.model_copy(update={"domain": None}) for r in lc.card.results]})) for lc in plan.ranked
        if keep is None or lc.page_id in keep]
    return dataclasses.replace(plan, ranked=ranked, cards=ranked)


def test_boards_without_domains_ranked_cards_or_on_the_test_segment():
    plan = _plans("ca")[0]
    (lb,) = T.build_leaderboards([_domainless(plan)], resamples=RESAMPLES)
    assert lb.domains == [] and len(lb.views) == 1 and [p["position"] for p in lb.chart_points] == [1, 2]
    (lb,) = T.build_leaderboards([_domainless(plan, {AP})], resamples=RESAMPLES)  # one ranked card
    assert [r.rank for r in lb.views[0].rows] == ["1"] and lb.item_methods == 1 and len(lb.chart_points) == 1
    (lb,) = T.build_leaderboards([dataclasses.replace(plan, ranked=[], segment="test")], resamples=RESAMPLES)
    assert (lb.segment, lb.domains, len(lb.views), lb.views[0].rows, lb.field_entry_median, lb.item_methods,
            lb.chart_points) == ("test", [], 1, [], {}, 0, [])
    (lb,) = T.build_leaderboards([plan], resamples=RESAMPLES)
    assert lb.segment == "development"


def test_a_domain_reads_the_cards_own_domain_rates_before_the_entries():
    plan = _plans("ca")[0]
    lc = next(x for x in plan.ranked if x.page_id == AP)
    sub = [r for r in lc.card.results if r.domain is not None and r.domain.value == "gov"]
    # hand-made: the card's by_domain says 0.5 for gov, where its 30 gov entries hold 6 exact matches (0.2)
    assert sum(r.exact_match for r in sub) == 6 and len(sub) == 30
    bd = dict(lc.card.scores.by_domain)
    bd["gov"] = bd["gov"].model_copy(update={"exact_match_rate": 0.5})
    card = lc.card.model_copy(update={"scores": lc.card.scores.model_copy(update={"by_domain": bd})})
    cells = T._cells(dataclasses.replace(lc, card=card), "gov", sub, 1.0, None, None, 0.5, None, None, {})
    assert cells["exact"] == T.Cell("0.500", 0.5)
    bd["gov"] = bd["gov"].model_copy(update={"exact_match_rate": None})  # no rate stored: counted from the entries
    cells = T._cells(dataclasses.replace(lc, card=card), "gov", sub, 1.0, None, None, 0.5, None, None, {})
    assert cells["exact"] == T.Cell("0.200", pytest.approx(0.2))


def test_cost_text_never_says_a_bare_zero():
    """Issue 36 item 5: the one place a cost per entry becomes words (every page and download reads it)."""
    plan = _plans("ca")[0]
    card = next(x for x in plan.ranked if x.page_id == GE).card  # a gguf card: a local model, priced False

    def on(backend: str):
        return card.model_copy(update={"method": card.method.model_copy(update={"backend": backend})})

    assert card.method.backend == "gguf"
    assert T.cost_text(card, 0.0) == "no API cost (local)"
    assert T.cost_text(on("apertium"), 0.0) == T.cost_text(on("echo"), 0.0) == "no API cost (local)"
    assert T.cost_text(on("openai"), 0.0) == "$0 (priced at 0)"  # prices of 0 (price table or --price-in/out)
    assert T.cost_text(on("no-such-plugin"), 0.0) == "$0 (priced at 0)"  # unknown backend: the number, said
    assert T.cost_text(on("openai"), 0.00123) == "$0.00123" and T.cost_text(on("openai"), 0.0456) == "$0.046"
    assert T.cost_text(card, None) == T.cost_text(on("openai"), None) == "not priced"


def test_closest_runs_counts_differing_components_as_fingerprint_diff_does():
    """closest_runs counts a pair's differing components from hashable sets made once a card (issue 35); the count is
    fingerprint_diff's on hand-made components: a missing component equals None, 1 == 1.0 == True as in Python, a list
    compares by its items, a changed list is one component."""
    def card(**components):
        return NS(fingerprint=NS(components=components))

    cases = [({}, {}), ({"a": 1}, {"a": 1.0}), ({"a": True}, {"a": 1}), ({"a": None}, {}), ({"a": None}, {"a": 0}),
             ({"t": ["x", "y"]}, {"t": ["x", "y"]}), ({"t": ["x", "y"]}, {"t": ["y", "x"]}), ({"t": []}, {}),
             ({"m": "gpt", "temp": 0.0, "p": "a"}, {"m": "gpt", "temp": 0.2, "p": "b", "extra": "z"}),
             ({"s": "1"}, {"s": 1})]
    for ca, cb in cases:
        a, b = card(**ca), card(**cb)
        expected = sum(d for *_, d in T.fingerprint_diff(a, b))
        assert T.differing_components(T.component_items(a), T.component_items(b)) == expected, (ca, cb)
    assert [T.differing_components(T.component_items(card(**x)), T.component_items(card(**y))) for x, y in cases] \
        == [0, 0, 0, 0, 1, 0, 1, 1, 3, 1]
