"""Issue 32 item 3, neural metrics: a per-model range for every value (:data:`mtboard.validate.neural.NEURAL_RANGES`,
each with its source) and an allow-list of pinned model revisions (:data:`mtboard.validate.neural.PINNED_REVISIONS`).

The card is the real 12-entry Apertium card of tests/validate_support.py with hand-made COMET-22 values put on it by
the real :func:`mtboard.score.neural_card.apply_neural` (the model itself is tested in tests/test_neural_comet.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import validate_support as vs
from cards_support import committed
from mtboard import validate as V
from mtboard.core.documents import card_bytes, loads_card
from mtboard.score.metrics import neural
from mtboard.score.neural_card import apply_neural
from mtboard.validate.neural import NEURAL_RANGES, PINNED_REVISIONS, unpinned

ROOT = Path(__file__).resolve().parents[1]
PINNED = "2760a223ac957f30acfb18c8aa649b01cf1d75f2"
VERSIONS = {"unbabel-comet": "2.2.7", "torch": "2.13.0+cpu", "transformers": "4.57.6", "huggingface-hub": "0.36.2",
            "pytorch-lightning": "2.6.6"}


def _card(scores: list[float], commit: str = PINNED):
    base = loads_card(vs.real_card_bytes(12, fst=False), "card")
    run = neural.NeuralRun(key="comet22", repo_id="Unbabel/wmt22-comet-da", revision=commit, commit=commit,
                           encoder="xlm-roberta-large", batch_size=16, device="cpu", versions=VERSIONS,
                           scores=list(scores), raw_scores=list(scores), score=neural.aggregate(scores),
                           system_score=None)
    return apply_neural(base, [run])


def _validate(tmp_path: Path, card) -> V.CardReport:
    root = vs.make_repo(tmp_path, [card_bytes(card)])
    path = next((root / "submissions").rglob("*.json"))
    return V.validate_card(path, V.make_context(root, ROOT / "corpora"))


def test_every_neural_metric_has_a_documented_range_and_a_pinned_revision():
    assert set(NEURAL_RANGES) == set(neural.MODELS) == set(PINNED_REVISIONS)
    for key, r in NEURAL_RANGES.items():
        assert r.low < 0.0 <= neural.NO_OUTPUT_SCORE < 1.0 < r.high, key  # the nominal 0–1 scale fits inside
        assert "Unbabel/COMET" in r.source, key
        assert PINNED_REVISIONS[key] == {neural.MODELS[key].revision}
    assert PINNED in PINNED_REVISIONS["comet22"]


def test_comet_7_5_per_entry_is_refused(tmp_path):
    card = _card([7.5] * 12)
    assert card.neural_metrics["comet22"].score == 7.5  # the claim the issue found shown as "7.5000 claimed"
    rep = _validate(tmp_path, card)
    assert {p.check for p in rep.problems} == {"neural"}
    fields = [p.field for p in rep.problems]
    assert fields == [f"$.results[{i}].plugin_metrics.comet22" for i in range(12)] + ["$.neural_metrics.comet22.score"]
    assert rep.problems[0].message == f"comet22 value is 7.5, allowed: -0.5…1.5 ({NEURAL_RANGES['comet22'].source})"
    # the edges of the range pass: -0.5 and 1.5 (an unbounded regression head can overshoot 0–1 a little)
    edge = _validate(tmp_path / "edge", _card([-0.5, 1.5] * 6))
    assert edge.checks["neural"] == "pass", edge.problems
    over = _validate(tmp_path / "over", _card([-0.5001] + [0.5] * 11))
    assert [p.field for p in over.problems] == ["$.results[0].plugin_metrics.comet22"]


def test_a_forged_commit_is_an_unpinned_claim_never_a_score(tmp_path):
    from mtboard.ledger.load import LoadedCard, Verification
    from mtboard.site.runpage import neural_view
    from mtboard.verify.plugins import ApprovedPlugins, gate

    forged = "0123456789abcdef" * 2 + "01234567"
    card = _card(list(vs.NEURAL_SCORES), commit=forged)
    assert unpinned(card) == {"comet22": forged} and unpinned(_card(list(vs.NEURAL_SCORES))) == {}
    rep = _validate(tmp_path, card)
    assert rep.problems == [] and rep.checks["neural"] == "pass"
    assert rep.notes[0] == (f"neural: $.neural_metrics.comet22.commit is {forged}, allowed: a pinned revision "
                            f"({PINNED}; mtboard.validate.neural.PINNED_REVISIONS): shown as an unpinned claim, never "
                            "as a score")
    assert rep.notes[1].startswith("--limit 12")  # the card's other note
    # re-scored only in the verify job without secrets (the plugin gate), though the card has no plugin
    assert card.method.plugin is None and gate(card, ApprovedPlugins()) == "unapproved"
    assert gate(_card(list(vs.NEURAL_SCORES)), ApprovedPlugins()) == "builtin"
    lc = LoadedCard(path="x.json", card=card, page_id=card.run_card_hash[:16],
                    verification=Verification("gds-verified", {"deltas": [
                        {"metric": "neural_metrics.comet22", "stored": 0.615, "rerun": 0.615, "within": True}]}))
    (row,) = neural_view(lc)
    assert (row["status"], row["score"]) == ("unpinned", None)  # even a re-run does not make it a score


@pytest.mark.parametrize("commit,shown", [(PINNED, True), ("0123456789abcdef" * 2 + "01234567", False)],
                         ids=["pinned", "forged"])
@pytest.mark.slow  # 5.4 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_run_page_shows_a_score_only_for_a_pinned_revision(tmp_path, commit, shown):
    from mtboard.site.build import build_site

    card = _card(list(vs.NEURAL_SCORES), commit=commit)
    root = vs.make_repo(tmp_path, [card_bytes(card)])
    report = build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs", resamples=20,
                        run_mkdocs=False)
    assert report.rejected == []
    page = (tmp_path / "docs" / "runs" / f"{card.run_card_hash[:16]}.md").read_text(encoding="utf-8")
    row = page.split("<td>COMET-22</td>")[1].split("</tr>")[0]
    # (8123 + 7000 + 6543 + 9000 + 3100 + 5000 + 5500 + 6000 + 6100 + 6200 + 9999 + 1234) / 12 = 6149.9… → 0.6150
    if shown:
        assert row.startswith("<td>0.6150</td><td>claimed</td>")
    else:
        assert row.startswith("<td>—</td><td>unpinned claim (model revision not pinned by mtboard)</td>")
        assert "0.6150" not in page


@pytest.mark.slow  # 2.9 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_comet_7_5_does_not_reach_a_built_site(tmp_path):
    from mtboard.site.build import build_site

    card = _card([7.5] * 12)
    honest = committed("baseline-echo__baseline__", 20)  # a board needs one
    root = vs.make_repo(tmp_path, [card_bytes(card), honest.read_bytes()])
    report = build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs", resamples=20,
                        run_mkdocs=False)
    assert len(report.rejected) == 1 and report.cards == 1
    assert not (tmp_path / "docs" / "runs" / f"{card.run_card_hash[:16]}.md").exists()
    blob = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "docs").rglob("*.md"))
    assert "7.5000" not in blob
    assert json.loads((tmp_path / "docs" / "data" / "ledger.json").read_text(encoding="utf-8"))
