"""Issue 15 part 9: judge reliability against people on an MQM anchor set.

The parser, the human penalty, span extraction and the meta-evaluation are checked on a tiny HAND-MADE fixture in the
WMT MQM TSV layout (invented sentences; no WMT data is part of mtboard), with hand-computed values. When a local copy
of the real annotations exists (``MTBOARD_WMT_MQM_DIR``, default ``/work/shared/anchors/wmt-mqm``: the public data of
github.com/google/wmt-mqm-human-evaluation, Apache-2.0), every computed segment penalty is compared with the
repository's own ``avg_seg_scores`` file — an independent computation by the data's authors.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from mtboard.judges.reliability import (error_weight, figures, load_wmt_mqm, metric_record, select_cells,
                                        severity_class, span_f1)
from mtboard.core.schema import AnchorCellValue, AnchorRecord, AnchorSource
from mtboard.site.judges import build_judges_page

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
ROWS = [  # hand-made: two segments, a reference and three systems
    ("ref", 1, "rater1", "The cat sleeps.", "Die Katze schläft.", "No-error", "No-error"),
    ("ref", 2, "rater1", "It rains, again.", "Es regnet, schon wieder.", "No-error", "No-error"),
    ("A", 1, "rater1", "The cat sleeps.", "Die Katze schläft.", "No-error", "No-error"),
    ("A", 2, "rater1", "It rains, again.", "Es regnet<v>,</v> wieder.", "Fluency/Punctuation", "Minor"),
    ("A", 2, "rater1", "It rains, again.", "Es regnet, <v>wieder</v>.", "Accuracy/Omission", "Major"),
    ("B", 1, "rater2", "The cat sleeps.", "<v>Der Hund</v> schläft.", "Accuracy/Mistranslation", "Major"),
    ("B", 2, "rater2", "It rains, again.", "<v>It rains, again.</v>", "Non-translation!", "Major"),
    ("C", 1, "rater1", "The cat sleeps.", "Die Katze <v>schlaft</v>.", "Fluency/Spelling", "Minor"),
    ("C", 1, "rater2", "The cat sleeps.", "Die Katze schlaft.", "No-error", "No-error"),
    ("C", 2, "rater1", "It rains, again.", "Es regnet schon wieder.", "No-error", "No-error"),
]


@pytest.fixture()
def tsv(tmp_path: Path) -> Path:
    lines = [HEADER] + [f"{s}\tdoc\t{seg}\t{seg}\t{r}\t{src}\t{tgt}\t{cat}\t{sev}\t" for s, seg, r, src, tgt, cat, sev
                        in ROWS]
    p = tmp_path / "mqm.tsv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_weights_and_classes_follow_the_readme():
    assert error_weight("Major", "Accuracy/Omission") == 5.0
    assert error_weight("Minor", "Fluency/Punctuation") == 0.1
    assert error_weight("Minor", "Style/Awkward") == 1.0
    assert error_weight("Major", "Non-translation!") == 25.0
    assert error_weight("No-error", "No-error") == 0.0
    assert severity_class("Major", "Non-translation!") == "critical"
    assert severity_class("No-error", "No-error") == "none"


def test_anchor_cells_hand_values(tsv):
    a = load_wmt_mqm(tsv)
    cells = {c.key: c for c in a.cells}
    assert sorted(cells) == ["A#1", "A#2", "B#1", "B#2", "C#1", "C#2"]  # the reference is not a cell
    assert a.references == {1: "Die Katze schläft.", 2: "Es regnet, schon wieder."}
    assert cells["A#2"].penalty == pytest.approx(5.1) and cells["A#2"].severity == "major"
    assert cells["B#2"].penalty == 25.0 and cells["B#2"].severity == "critical"
    assert cells["C#1"].penalty == 0.5  # two raters: 1 and 0, averaged
    assert cells["A#2"].target == "Es regnet, wieder." and cells["A#2"].spans == [(9, 10), (11, 17)]
    assert cells["B#1"].spans == [(0, 8)]


def test_span_f1_hand_values():
    # judge quotes "Der Hund" exactly (8 of 8 characters) and "xyz" (not in the text): P = 8/11, R = 8/8
    assert span_f1("Der Hund schläft.", ["Der Hund", "xyz"], [(0, 8)]) == (8, 11, 8)


def test_meta_evaluation_matches_scipy(tsv):
    a = load_wmt_mqm(tsv)
    cells = select_cells(a, None)
    values = [0.0, 6.0, 5.0, 25.0, None, 0.0]  # a judge's penalties; C#1 a failed judgement
    f = figures(cells, values, higher_is_better=False, severities=["none", "major", "major", "critical", None, "none"],
                spans=[[], ["wieder"], ["Der Hund"], ["It rains, again."], None, []])
    human = [c.penalty for c in cells]
    keep = [i for i, v in enumerate(values) if v is not None]
    assert f.n_cells == 6 and f.n_valued == 5
    assert f.segment_kendall_tau == pytest.approx(kendalltau([values[i] for i in keep],
                                                             [human[i] for i in keep]).statistic)
    assert f.severity_kappa == 1.0  # the judge's worst class equals the people's on every valued cell
    # spans: A#2 "wieder" (6/6 of human 7 chars: ',' + 'wieder'), B#1 8/8, B#2 16/16 → P = 30/30, R = 30/31
    assert f.span_f1 == pytest.approx(2 * 1 * (30 / 31) / (1 + 30 / 31))


def test_chrf_record_and_judges_page(tsv):
    a = load_wmt_mqm(tsv)
    src = AnchorSource(repository="https://example.org/hand-made", file="mqm.tsv", sha256=a.sha256,
                       license="CC0-1.0", language_pair="en-de", selection="all 6 cells")
    rec = metric_record(a, select_cells(a, None), src)
    assert rec.evaluator == "chrF++" and rec.figures.n_valued == 6
    # chrF++ is higher-better, negated: the identical output A#1 (chrF 100) and penalty 0 agree
    assert rec.figures.segment_kendall_tau > 0
    AnchorRecord.model_validate_json(json.dumps(rec.model_dump(mode="json")))
    assert rec.cells == []
    cells = [AnchorCellValue(key=c.key, value=c.penalty, severity=c.severity) for c in select_cells(a, None)]
    judge = rec.model_copy(update={"evaluator": "gemba-mqm=openai:x", "evaluator_kind": "gemba-mqm", "cells": cells})
    judge2 = judge.model_copy(update={"evaluator": "gemba-mqm=openai:y"})
    page = build_judges_page([], [rec, judge, judge2])
    assert [x.evaluator for x in page.anchors] == ["chrF++", "gemba-mqm=openai:x", "gemba-mqm=openai:y"]
    pair = page.anchor_pairs[0]
    assert len(page.anchor_pairs) == 1 and pair.tau == 1.0 and pair.n == 6 and pair.kappa == 1.0


REAL = Path(os.environ.get("MTBOARD_WMT_MQM_DIR", "/work/shared/anchors/wmt-mqm"))


@pytest.mark.skipif(not (REAL / "mqm_ted_ende.tsv").is_file(), reason="no local copy of the WMT MQM annotations")
@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_penalties_equal_the_published_segment_scores(pair):
    a = load_wmt_mqm(REAL / f"mqm_ted_{pair}.tsv")
    published = {}
    for line in (REAL / f"mqm_ted_{pair}.avg_seg_scores.tsv").read_text("utf-8").splitlines()[1:]:
        system, rest = line.split("\t")
        score, seg = rest.split(" ")
        if score != "None":
            published[(system, int(seg))] = -float(score)
    mine = {(c.system, c.seg_id): c.penalty for c in a.cells}
    common = set(mine) & set(published)
    assert len(common) > 6000
    assert all(mine[k] == pytest.approx(published[k], abs=1e-6) for k in common)


def test_judge_record_end_to_end_with_a_scripted_judge(tsv, tmp_path):
    """``mtboard anchor --judge`` on the hand-made cells, through the real judging code against a scripted judge
    (hand-written answers keyed by the translation it is shown; one cell gets three unparsable answers)."""
    import asyncio

    from judges_support import ScriptedServer, translation_in
    from mtboard.judges.reliability import judge_record_async
    from mtboard.llm import LLMClient

    clean = "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"
    answers = {
        "Es regnet, wieder.": 'Critical:\nno-error\nMajor:\naccuracy/omission - "wieder"\nMinor:\n'
                              'fluency/punctuation - ","\ncontextBehavior: unclear',
        "Der Hund schläft.": 'Critical:\nno-error\nMajor:\naccuracy/mistranslation - "Der Hund"\nMinor:\nno-error\n'
                             "contextBehavior: unclear",
        "It rains, again.": 'Critical:\nno-error\nMajor:\nnon-translation - "It rains, again."\nMinor:\nno-error\n'
                            "contextBehavior: unclear",
        "Die Katze schlaft.": "**not the format**",
    }
    a = load_wmt_mqm(tsv)
    cells = select_cells(a, None)
    src = AnchorSource(repository="https://example.org/hand-made", file="mqm.tsv", sha256=a.sha256,
                       license="CC0-1.0", language_pair="en-de", selection="all 6 cells")
    with ScriptedServer(lambda body: answers.get(translation_in(body).strip(), clean), model="j") as srv:
        rec = asyncio.run(judge_record_async(a, cells, src, "gemba-mqm=openai:j", workdir=tmp_path / "w",
                                             client_factory=lambda: LLMClient(srv.url, None, max_retries=0),
                                             source_lang="English", target_lang="German", concurrency=1))
    values = {c.key: c.value for c in rec.cells}
    # A#2: major 5 + minor 1 = 6 (the judge's GEMBA weights, not the people's 0.1 for punctuation); B#2: 25
    assert values == {"A#1": 0.0, "A#2": 6.0, "B#1": 5.0, "B#2": 25.0, "C#1": None, "C#2": 0.0}
    f = rec.figures
    assert (f.n_cells, f.n_valued, f.severity_kappa, f.parse_failure_rate) == (6, 5, 1.0, 3 / 8)
    keep = [c for c in cells if values[c.key] is not None]
    assert f.segment_kendall_tau == pytest.approx(kendalltau([values[c.key] for c in keep],
                                                             [c.penalty for c in keep]).statistic)
    assert f.span_f1 == 1.0  # "," and "wieder", "Der Hund", the whole B#2: every character the people marked
