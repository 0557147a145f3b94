"""The history sweep and the quality arms as sweep factors (issue 40 item 2): ``histories`` and ``arms`` in a sweep
file are two experiments, not one cross product; each value is another cell id and fingerprint; an engine history
cannot reach lists its history cells as not applicable (not run, not an error); the sweep page's history curves,
latency gate and arms table show the numbers of the cards.

Corpus: the hand-made fixture tests/fixtures/dialogue/mtb-en-es-dialogue-mini.json (3 scenes, 9 lines; see its
README). The prompted cells run against the loopback fault-injection server (tests/fake_openai_server.py), the echo
cells with the real baseline.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fake_openai_server import FakeServer
from mtboard.core.errors import InputError
from mtboard.ledger.load import LoadedCard, Verification
from mtboard.run.runner import run
from mtboard.site import sweeps as site_sweeps
from mtboard.sweeps.cells import count_cells
from mtboard.sweeps.file import load_sweep_file
from mtboard.sweeps.spec import load_sweep, run_settings

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dialogue" / "mtb-en-es-dialogue-mini.json"

SWEEP = """\
name: ctx-test
datasets: [corpora/mtb-en-es-dialogue-mini.json]
max_tokens: 64
methods:
  - {method: "openai:fake-model", label: fake, prompts: [context-chat]}
  - {method: "echo:", label: echo}
histories: [0, 1, 2]
arms: [lines, scene-bare, scene-context, scene-full]
overrides:
  - {match: {experiment: history}, limit: 2}
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ctx")
    (root / "corpora").mkdir()
    shutil.copyfile(FIXTURE, root / "corpora" / FIXTURE.name)
    (root / "sweeps").mkdir()
    (root / "sweeps" / "ctx-test.yaml").write_text(SWEEP, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def sweep(root):
    return load_sweep(root / "sweeps" / "ctx-test.yaml")


def test_two_experiments_expand_to_the_exact_cell_list(sweep):
    got = [(c.label, c.experiment, c.arm, c.history, c.entries, c.limit) for c in sweep.cells]
    assert got == [
        ("fake", "history", "scene-context", 0, 2, 2), ("fake", "history", "scene-context", 1, 2, 2),
        ("fake", "history", "scene-context", 2, 2, 2),
        ("fake", "arms", "lines", None, 9, None), ("fake", "arms", "scene-bare", None, 3, None),
        ("fake", "arms", "scene-context", None, 3, None), ("fake", "arms", "scene-full", None, 3, None),
        ("echo", "history", "scene-context", 0, 2, 2),
        ("echo", "arms", "lines", None, 9, None), ("echo", "arms", "scene-bare", None, 3, None),
        ("echo", "arms", "scene-full", None, 3, None)]
    assert len({c.id for c in sweep.cells}) == 11  # each value is another cell id
    assert [c.components.get("history") for c in sweep.cells[:3]] == [0, 1, 2]
    assert "--arm" in sweep.cells[0].run_args() and sweep.cells[0].run_args()[-2:] == ["--history", "0"]


def test_engine_history_cells_are_listed_not_applicable(sweep):
    got = [(n.label, n.experiment, n.arm, n.history, n.reason) for n in sweep.not_applicable]
    reason = "history does not apply to echo: it translates the raw source text, without context"
    assert got == [("echo", "history", "scene-context", 1, reason), ("echo", "history", "scene-context", 2, reason),
                   ("echo", "arms", "scene-context", None, reason)]


def test_count_adds_the_experiments(root):
    file, _ = load_sweep_file(root / "sweeps" / "ctx-test.yaml")
    count = count_cells(file)
    # (3 histories + 4 arms) per method: an upper bound of 14 (11 cells + 3 not applicable), never 3 × 4 = 12 per method
    assert count.views == 7 and count.cells == 14
    assert "(histories + arms) 7" in count.factors()


@pytest.mark.parametrize(("text", "field"), [
    ("histories: [0, 3, 3]", "histories"), ("arms: [lines, scenes]", "arms.1"), ("histories: [-1]", "histories.0"),
    ("histories: [2000]", "histories.0"), ("histories: ['6']", "histories.0")])
def test_strict_schema_refuses_bad_factors(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ndatasets: [corpora/x.json]\nmethods: [{method: 'echo:'}]\n" + text + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_sweep_file(path)
    assert exc.value.field == field, exc.value


# --------------------------------------------------------------------------------------------------------------------
# The sweep page reads every number from the cards


@pytest.fixture(scope="module")
def placed(root, sweep, tmp_path_factory, monkeypatch_module):
    cards = []
    with FakeServer(latency_s=0.0) as srv:
        monkeypatch_module.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch_module.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        for cell in sweep.cells:
            settings = run_settings(cell, root, root / "runs" / cell.id, early_gate=False)
            made = run(settings)
            cards.append(LoadedCard(f"{cell.id}.json", made.card, made.card.run_card_hash[:16],
                                    Verification("self-benchmarked")))
    return site_sweeps.place(sweep, cards)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.slow  # 2.7 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_every_cell_finds_its_card(placed):
    assert all(p.lc is not None for p in placed)
    assert [(p.cell.arm, p.lc.card.method.arm, p.cell.history, p.lc.card.method.history) for p in placed][:3] == [
        ("scene-context", "scene-context", 0, 0), ("scene-context", "scene-context", 1, 1),
        ("scene-context", "scene-context", 2, 2)]


@pytest.mark.slow  # 2.9 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_history_section_numbers_equal_the_cards(placed, sweep):
    sections = site_sweeps.history_sections(placed, sweep.not_applicable, "sweeps/ctx-test.md")
    assert len(sections) == 1
    s = sections[0]
    assert s["lengths"] == [0, 1, 2] and s["scenes"] == [2]
    assert [x["label"] for x in s["series"]] == ["fake · context-chat · t=0", "echo"]
    fake = s["series"][0]
    for q, p in zip(fake["points"], placed[:3]):
        card = p.lc.card
        assert (q["history"], q["chrf"], q["composite"], q["n"]) == (
            p.cell.history, card.scores.chrf_plus_plus, card.scores.composite, 2)
        lat = sorted(r.latency_s for r in card.results)
        assert q["median"] == card.scores.median_latency_seconds
        assert q["p90"] == lat[1]  # nearest rank: ⌈0.9 × 2⌉ = 2nd of 2
    assert fake["gate"] is None  # no 6-line cell in this sweep
    assert s["not_applicable"] == ["history does not apply to echo: it translates the raw source text, without "
                                   "context (not run: 1, 2 lines of history)"]
    assert len(s["charts"]) >= 2 and "lines of history" in str(s["charts"][0])


def test_gate_verdict_at_six_lines():
    assert site_sweeps.gate_verdict(2.0, 3.0) == "pass"
    assert site_sweeps.gate_verdict(2.01, 1.0) == "fail"
    assert site_sweeps.gate_verdict(1.0, 3.01) == "fail"
    assert site_sweeps.gate_verdict(None, None) == "not measured"


def test_arms_table_numbers_equal_the_cards(placed, sweep):
    tables = site_sweeps.arms_tables(placed, sweep.not_applicable, "sweeps/ctx-test.md")
    assert len(tables) == 1
    t = tables[0]
    assert t["arms"] == ["lines", "scene-bare", "scene-context", "scene-full"]
    by_arm = {(p.cell.label, p.cell.arm): p.lc.card for p in placed if p.cell.experiment == "arms"}
    fake, echo = t["rows"]
    assert fake["label"] == "fake · context-chat · t=0" and echo["label"] == "echo"
    for arm, c in zip(t["arms"], fake["cells"]):
        card = by_arm[("fake", arm)]
        assert (c["chrf"], c["composite"], c["n"]) == (card.scores.chrf_plus_plus, card.scores.composite,
                                                       card.dataset.entry_count)
    assert [c["n"] for c in fake["cells"]] == [9, 3, 3, 3]
    assert echo["cells"][2] == {"state": "not-applicable", "reason": "history does not apply to echo: it "
                                "translates the raw source text, without context"}


def test_page_renders_the_sections(root, placed, sweep):
    from mtboard.site.render import _env

    page = "sweeps/ctx-test.md"
    sp = site_sweeps.SweepPage(sweep=sweep, page=page, placed=placed, grids=site_sweeps.grids(placed, page),
                               heatmaps=site_sweeps.heatmaps(placed), effects=[], cost=0.0,
                               history=site_sweeps.history_sections(placed, sweep.not_applicable, page),
                               arms=site_sweeps.arms_tables(placed, sweep.not_applicable, page))
    text = _env().get_template("sweep.md.j2").render(sp=sp, title="t", link=lambda x: x, level=str,
                                                     gate_history=6, gate_median="2", gate_p90="3")
    assert "## History sweep: EN→ES · mtb-en-es-dialogue-mini" in text
    assert "## Quality arms: EN→ES · mtb-en-es-dialogue-mini" in text
    assert "**history does not apply to echo: it translates the raw source text, without context (not run: 1, 2 " \
           "lines of history).**" in text
    assert "Measured on the CPU of the machine that ran this sweep" in text
    echo_lines = next(p.lc.card for p in placed if p.cell.label == "echo" and p.cell.arm == "lines")
    assert f"{echo_lines.scores.chrf_plus_plus:.1f}</a> / {echo_lines.scores.composite:.3f}" in text


def test_scene_arm_cards_are_never_ranked_on_the_dataset_board(placed):
    """A scene arm's items are scenes under the ids of their last lines (scene-full joins their texts): the ledger
    lists such a card unranked with the reason, and never takes its ids as the board's entry set."""
    from mtboard.ledger.standing import scene_view_reason

    reasons = {(p.cell.label, p.cell.arm, p.cell.history): scene_view_reason(p.lc.card) for p in placed}
    assert reasons[("fake", "lines", None)] is None
    assert reasons[("fake", "scene-full", None)] == ("corpus view scene-full (each scene joined into one segment): "
                                                     "scene items, not the board's entries; compared on its sweep page")
    assert reasons[("echo", "scene-bare", None)].startswith("corpus view scene-bare (one line per scene)")
    assert reasons[("fake", "scene-context", 2)].startswith("corpus view scene-context")
