"""Corpus views for translation in context (issue 40 item 2; mtboard/inputs/corpora/arms.py): the arms and history
lengths of the JA→EN screen-translator write-up, end to end — the view itself, the run that sends it, the card that
records it, and the validator that recomputes the card through the same view.

The corpus is the hand-made fixture tests/fixtures/dialogue/mtb-en-es-dialogue-mini.json (three scenes written by
the mtboard authors for these tests: ``gate`` ids 1–4, ``camp`` 5–7, ``river`` 8–9; each entry's ``history`` holds its
scene's earlier source lines). Every expected id, history and joined text below is read off that file by hand.

Prompted runs go to the loopback fault-injection server (tests/fake_openai_server.py; it answers ``"ES " + text``
and keeps every request), so the test can read exactly what each request carried; the engine runs use the real
``echo`` baseline.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fake_openai_server import FakeServer
from mtboard.core.documents import load_corpus
from mtboard.core.errors import ConfigError
from mtboard.inputs.corpora.arms import arm_view, history_not_applicable, scenes
from mtboard.run.runner import run
from mtboard.run.settings import RunSettings
from mtboard.validate import make_context, validate_card
from validate_support import refingerprint_and_reseal, validate_resealed

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dialogue" / "mtb-en-es-dialogue-mini.json"
GATE = ["Who goes there?", "A friend of the king.", "The king has no friends at this hour."]
"""The ``gate`` scene's first three lines: the history of its last line (id 4)."""


@pytest.fixture(scope="module")
def entries():
    corpus, _ = load_corpus(FIXTURE)
    return corpus.entries


def _ids(view):
    return [e.id for e in view]


def test_scenes_group_in_order_of_first_appearance(entries):
    assert [(name, [e.id for e in lines]) for name, lines in scenes(entries)] == [
        ("gate", [1, 2, 3, 4]), ("camp", [5, 6, 7]), ("river", [8, 9])]


def test_lines_arm_every_line_alone(entries):
    view = arm_view(entries, "lines")
    assert _ids(view) == list(range(1, 10))
    assert all(e.history == [] for e in view)
    assert entries[3].history == GATE  # the input is not changed


def test_scene_bare_and_context_take_each_scenes_last_line(entries):
    bare = arm_view(entries, "scene-bare")
    context = arm_view(entries, "scene-context")
    assert _ids(bare) == _ids(context) == [4, 7, 9]
    assert [e.source for e in bare] == ["Then open the gate for his messenger.", "They stay with me.", "Then we swim."]
    assert [e.history for e in bare] == [[], [], []]
    assert [e.history for e in context] == [GATE, ["We leave at dawn.", "And the wounded?"], ["The bridge is gone."]]


@pytest.mark.parametrize(("n", "gate_history"), [(0, []), (1, GATE[-1:]), (2, GATE[-2:]), (3, GATE)])
def test_history_keeps_the_last_n_lines(entries, n, gate_history):
    view = arm_view(entries, "scene-context", n)
    assert view[0].history == gate_history
    assert view[2].history == (["The bridge is gone."] if n else [])


@pytest.mark.parametrize("arm", ["scene-context", None])
def test_a_history_length_no_item_reaches_is_refused(entries, arm):
    # the fixture's longest history is the gate line's 3 lines: asking for 4 (or 24) would send what 3 sends, so a
    # card could carry a length nothing was sent with (a re-sealed card claiming --history 100 on a 24-line corpus)
    assert len(GATE) == 3
    for n in (4, 24):
        with pytest.raises(ConfigError, match=rf"history length {n} is above the longest history of the selected "
                                              r"items \(3 lines\)"):
            arm_view(entries, arm, n)


def test_scene_full_joins_lines_and_references(entries):
    full = arm_view(entries, "scene-full")
    assert _ids(full) == [4, 7, 9]
    assert full[1].source == "We leave at dawn.\nAnd the wounded?\nThey stay with me."
    assert full[1].reference == "Partimos al amanecer.\n¿Y los heridos?\nSe quedan conmigo."
    assert full[2].source == "The bridge is gone.\nThen we swim."
    assert full[2].reference == "El puente ha desaparecido.\nEntonces nadamos."
    assert all(e.history == [] for e in full)


def test_no_arm_cuts_the_stored_history(entries):
    assert arm_view(entries) == entries
    assert [len(e.history) for e in arm_view(entries, None, 1)] == [0, 1, 1, 1, 0, 1, 1, 0, 1]


@pytest.mark.parametrize(("arm", "history", "field"), [
    ("lines", 3, "--history"), ("scene-bare", 0, "--history"), ("scene-full", 6, "--history"),
    ("scenes", None, "--arm"), ("scene-context", -1, "--history")])
def test_refused_views_name_the_option(entries, arm, history, field):
    with pytest.raises(ConfigError) as exc:
        arm_view(entries, arm, history)
    assert exc.value.field == field


def test_a_scene_arm_needs_scene_ids(entries):
    no_scenes = [e.model_copy(update={"scene": None}) for e in entries]
    with pytest.raises(ConfigError, match="needs scene ids, and none of the 9 entries has one"):
        arm_view(no_scenes, "scene-bare")


def test_history_not_applicable_reasons():
    assert history_not_applicable("scene-context", 0, method="apertium", raw=True, prompt=None,
                                  prompt_uses_history=False) is None  # 0 lines: nothing to send
    assert history_not_applicable("scene-context", 3, method="apertium", raw=True, prompt=None,
                                  prompt_uses_history=False) == (
        "history does not apply to apertium: it translates the raw source text, without context")
    assert history_not_applicable("scene-context", None, method="gemma", raw=False, prompt="few-shot-completion",
                                  prompt_uses_history=False) == (
        "history does not apply to prompt few-shot-completion: the template has no history variable")
    assert history_not_applicable("scene-bare", None, method="apertium", raw=True, prompt=None,
                                  prompt_uses_history=False) is None


# --------------------------------------------------------------------------------------------------------------------
# End to end: the run sends the view, the card records it, the validator recomputes through it


def _settings(tmp_path: Path, srv: FakeServer, name: str, **kw) -> RunSettings:
    return RunSettings(corpus_path=tmp_path / "corpora" / FIXTURE.name, method="openai:fake-model",
                       base_url=srv.base_url, prompt="context-chat", work_dir=tmp_path / name, max_retries=1,
                       backend_extra={"backoff_base_s": 0.01}, concurrency=1, early_gate=False, **kw)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Cards of the same model and prompt over five views, with the user message of each request."""
    tmp_path = tmp_path_factory.mktemp("arms")
    (tmp_path / "corpora").mkdir()
    shutil.copyfile(FIXTURE, tmp_path / "corpora" / FIXTURE.name)
    views = {"context-2": dict(arm="scene-context", history=2), "context-0": dict(arm="scene-context", history=0),
             "context-all": dict(arm="scene-context"), "bare": dict(arm="scene-bare"),
             "full": dict(arm="scene-full")}
    out = {}
    for name, kw in views.items():
        with FakeServer() as srv:
            made = run(_settings(tmp_path, srv, name, **kw))
            users = [r["body"]["messages"][-1]["content"] for r in srv.requests if "messages" in r.get("body", {})]
        out[name] = (made.card, made.card_path, users)
    return tmp_path, out


@pytest.mark.slow  # 1.7 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_requests_carry_exactly_the_views_history(runs):
    _, out = runs
    card, _, users = out["context-2"]
    assert [r.entry_id for r in card.results] == [4, 7, 9]
    gate = next(u for u in users if "Then open the gate" in u)
    assert "A friend of the king." in gate and "The king has no friends at this hour." in gate
    assert "Who goes there?" not in gate  # the third line back is cut
    bare = next(u for u in out["context-0"][2] if "Then open the gate" in u)
    assert "Earlier lines" not in bare
    every = next(u for u in out["context-all"][2] if "Then open the gate" in u)
    assert all(line in every for line in GATE)
    full = out["full"][2]
    assert any("We leave at dawn.\nAnd the wounded?\nThey stay with me." in u for u in full)


def test_card_records_arm_history_and_history_lines(runs):
    _, out = runs
    card = out["context-2"][0]
    assert (card.method.arm, card.method.history) == ("scene-context", 2)
    assert (card.fingerprint.components["arm"], card.fingerprint.components["history"]) == ("scene-context", 2)
    assert [r.history_lines for r in card.results] == [2, 2, 1]
    assert [r.history_lines for r in out["context-all"][0].results] == [3, 2, 1]
    assert [r.history_lines for r in out["bare"][0].results] == [None, None, None]
    full = out["full"][0]
    assert "history" not in full.fingerprint.components and full.method.history is None
    assert full.results[2].source == "The bridge is gone.\nThen we swim."
    assert full.results[2].expected == "El puente ha desaparecido.\nEntonces nadamos."


def test_each_view_is_another_fingerprint(runs):
    _, out = runs
    hashes = {name: card.fingerprint.hash for name, (card, _, _) in out.items()}
    assert len(set(hashes.values())) == len(hashes) == 5


def test_validator_accepts_every_view(runs):
    tmp_path, out = runs
    ctx = make_context(tmp_path, tmp_path / "corpora")
    for name, (_, path, _) in out.items():
        report = validate_card(path, ctx)
        assert report.ok, (name, report.problems)


def _root_with_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "corpora").mkdir(parents=True)
    shutil.copyfile(FIXTURE, root / "corpora" / FIXTURE.name)
    return root


@pytest.mark.parametrize(("view", "edit", "check", "path", "message"), [
    ("context-2", {"history": 1}, "metrics", "$.results[0].history_lines", "stored 2, recomputed 1"),
    ("context-2", {"history": None}, "metrics", "$.results[0].history_lines", "stored 2, recomputed 3"),
    ("context-2", {"arm": "scene-bare", "history": None}, "metrics", "$.results[0].history_lines",
     "stored 2, recomputed absent"),
    ("full", {"arm": "scene-bare"}, "texts", "$.results[0].source", "differs from the corpus source of entry 4"),
    ("bare", {"arm": "lines"}, "entries", "$.results", "6 entries of the segment have no result (first id 1)"),
])
def test_validator_refuses_a_card_whose_results_do_not_match_its_view(runs, tmp_path, view, edit, check, path,
                                                                       message):
    """A careful cheater edits method.arm/history, re-derives the fingerprint and re-seals: the validator applies
    the declared view to the corpus and the results no longer match it."""
    _, out = runs
    card, card_path, _ = out[view]
    data = json.loads(card_path.read_bytes())
    data["method"].update(edit)
    for key in ("arm", "history"):
        if data["method"].get(key) is None:
            data["method"].pop(key, None)
    root = _root_with_corpus(tmp_path)
    report = validate_resealed(root, make_context(root, root / "corpora"), data)
    assert not report.ok
    assert any(p.check == check and p.field == path and message in p.message for p in report.problems), \
        report.problems


def test_engines_refuse_history_and_run_bare_arms(tmp_path):
    root = _root_with_corpus(tmp_path)
    corpus = root / "corpora" / FIXTURE.name
    with pytest.raises(ConfigError, match="history does not apply to echo: it translates the raw source text"):
        run(RunSettings(corpus_path=corpus, method="echo:", arm="scene-context", work_dir=tmp_path / "e1"))
    with pytest.raises(ConfigError, match="history does not apply to echo"):
        run(RunSettings(corpus_path=corpus, method="echo:", history=3, work_dir=tmp_path / "e2"))
    made = run(RunSettings(corpus_path=corpus, method="echo:", arm="scene-full", work_dir=tmp_path / "e3"))
    assert [r.entry_id for r in made.card.results] == [4, 7, 9]
    assert made.card.results[0].predicted == ("Who goes there?\nA friend of the king.\nThe king has no friends at "
                                              "this hour.\nThen open the gate for his messenger.")
    assert validate_card(made.card_path, make_context(root, root / "corpora")).ok


def test_settings_refuse_history_with_a_bare_arm(tmp_path):
    with pytest.raises(ConfigError) as exc:
        RunSettings(corpus_path=FIXTURE, method="echo:", arm="lines", history=3)
    assert exc.value.field == "--history"
    with pytest.raises(ConfigError) as exc:
        RunSettings(corpus_path=FIXTURE, method="echo:", arm="scene")
    assert exc.value.field == "--arm"


def test_limit_counts_scenes_after_the_view(tmp_path):
    root = _root_with_corpus(tmp_path)
    made = run(RunSettings(corpus_path=root / "corpora" / FIXTURE.name, method="echo:", arm="scene-bare", limit=2,
                           work_dir=tmp_path / "w"))
    assert [r.entry_id for r in made.card.results] == [4, 7]
    assert made.card.method.limit == 2 and made.card.dataset.entry_count == 2


def test_rescore_applies_the_cards_view(runs):
    """``mtboard rescore`` re-scores a view's card on the same view: nothing moves, the seal stays."""
    from mtboard.run.rescore import rescore_card

    tmp_path, out = runs
    for name in ("full", "context-2"):
        card, path, _ = out[name]
        assert rescore_card(path, corpora_dir=tmp_path / "corpora").run_card_hash == card.run_card_hash, name
