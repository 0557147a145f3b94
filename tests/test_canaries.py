"""Issue 38 item 3: drift canaries — the fixed canary sets (``canaries/sets.yaml``, :mod:`mtboard.inputs.canaries`),
``mtboard canary run`` (:mod:`mtboard.verify.canary`), the drift decision in the ledger (:mod:`mtboard.ledger.canaries`)
and what the board, ``data/ledger.json`` and the model page show.

The card is made by a real ``mtboard run`` of the committed EN→ES corpus's whole development segment (355 entries)
against a scripted OpenAI-compatible loopback server (tests/loopback.py ``ChatServer``; a hand-made test double whose
answers a test must be able to change). Its answers, with the ``source-only`` prompt (the user message is the source):

* ``good`` — the committed reference for odd entry ids; for even ids the reference without its last word;
* ``drifted`` — the first half of the reference's words (ceil(n/2)): a model that stops half-way.

The canary runs re-run that card on the 12 canary entries of ``mtb-en-es-dev`` 1.0.0. Expected values are recomputed
from the runs' own per-entry results with the board's composite definition, or checked by hand in the comments.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mtboard.core.documents import card_bytes, load_card, load_corpus
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.schema.canary import CanaryRun, CanarySets
from mtboard.inputs import canaries as c
from mtboard.ledger import document
from mtboard.ledger.build import build_ledger
from mtboard.ledger.load import load_inputs
from mtboard.score.metrics.bootstrap import statistics_matrix
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.score.subset import chrf_on, composite_on
from mtboard.site import boards as board_html
from mtboard.site.portrait import build_portraits
from mtboard.validate import canonical_relpath
from mtboard.verify.canary import check_canary_card, reference, run_canary

sys.path.insert(0, str(Path(__file__).parent))
import cli_support  # noqa: E402
from loopback import ChatServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ES = "mtb-en-es-dev"
CANARY_IDS = [66, 110, 141, 188, 201, 235, 279, 290, 295, 315, 333, 337]
"""The committed set of mtb-en-es-dev 1.0.0 (canaries/sets.yaml)."""
RESAMPLES = 1000


def _mtboard(args: list) -> object:
    return cli_support.invoke([str(a) for a in args], unset=("OPENAI_", "MTBOARD_"))


class Answers:
    """The scripted server's answers (module docstring); ``mode`` is switched by the tests."""

    def __init__(self) -> None:
        corpus, _ = load_corpus(ROOT / "corpora" / f"{ES}.json")
        self.entries = {e.source: e for e in corpus.entries}
        self.mode = "good"

    def __call__(self, source: str) -> str:
        return answer(self.entries[source], self.mode)


def answer(e, mode: str) -> str:
    """The scripted answer to entry ``e`` in ``mode`` (module docstring)."""
    words = e.reference.split(" ")
    if mode == "drifted":
        return " ".join(words[: (len(words) + 1) // 2])
    return e.reference if e.id % 2 else " ".join(words[:-1]) if len(words) > 1 else e.reference


@pytest.fixture(scope="module")
def served():
    answers = Answers()
    with ChatServer(answers) as srv:
        yield srv, answers


@pytest.fixture(scope="module")
def repo(tmp_path_factory, served):
    """A repository tree: the committed EN→ES corpus and canary sets, and the card of a real run under
    submissions/."""
    srv, answers = served
    root = tmp_path_factory.mktemp("repo")
    (root / "corpora").mkdir()
    shutil.copyfile(ROOT / "corpora" / f"{ES}.json", root / "corpora" / f"{ES}.json")
    (root / "canaries").mkdir()
    shutil.copyfile(ROOT / c.SETS_FILE, root / c.SETS_FILE)
    work = root.parent / "work"
    answers.mode = "good"
    res = _mtboard(["run", root / "corpora" / f"{ES}.json", "--method", "openai:m", "--prompt", "source-only",
                    "--base-url", srv.url, "--concurrency", 4, "--work-dir", work])
    assert res.returncode == 0, res.stderr
    card = load_card(work / "card.json")
    dest = root / canonical_relpath(card)
    dest.parent.mkdir(parents=True)
    dest.write_bytes(card_bytes(card))
    return root, dest


# --------------------------------------------------------------------------------------------------------------------
# the canary sets


def test_committed_sets_hold_and_follow_the_rule():
    corpora, warnings = c.load_corpora(ROOT / "corpora")
    sets = c.read_sets(ROOT / c.SETS_FILE)
    assert warnings == [] and c.check_sets(sets, corpora) == []
    assert [(s.dataset_id, s.version, len(s.entry_ids), s.rule) for s in sets.sets] == [
        (f"mtb-{p}", "1.0.0", 12, "stratified-v1") for p in (
            "ca-en-dev", "en-ca-dev", "en-de-dev", "en-es-dev", "en-es-dialogue", "en-fr-dev", "en-ja-dev", "es-en-dev",
            "ja-en-dev", "ja-en-dialogue")]
    es = c.set_for(sets, ES, "1.0.0")
    assert es.entry_ids == CANARY_IDS
    corpus = next(k for k in corpora if k.corpus.dataset.id == ES)
    assert es.sha256 == corpus.sha256 and es.language_pair == "EN→ES"
    # the rule today picks the committed set; 7 domains, in name order gov, legal, literary, medical, news, tech,
    # ui: the first round takes one of each (7), the second the first five by name (12)
    assert c.select(corpus.corpus) == CANARY_IDS
    by_id = {e.id: e for e in corpus.corpus.entries}
    counts = {}
    for i in CANARY_IDS:
        assert by_id[i].segment.value == "development"
        counts[by_id[i].domain.value] = counts.get(by_id[i].domain.value, 0) + 1
    assert counts == {"gov": 2, "legal": 2, "literary": 2, "medical": 2, "news": 2, "tech": 1, "ui": 1}


def test_sets_file_round_trips_and_write_keeps_existing_sets(tmp_path):
    corpora, _ = c.load_corpora(ROOT / "corpora")
    sets = c.read_sets(ROOT / c.SETS_FILE)
    assert c.sets_yaml(sets) == (ROOT / c.SETS_FILE).read_bytes()  # the committed file is what --write writes
    path = tmp_path / "canaries" / "sets.yaml"
    c.write_sets(path, sets)
    assert c.read_sets(path) == sets
    # a hand-changed set is kept as it is (changing the rule never changes a committed set); a missing one is added
    es = c.set_for(sets, ES, "1.0.0")
    kept = [s if s is not es else es.model_copy(update={"entry_ids": [1, 2, 3], "rule": "hand"}) for s in sets.sets
            if s.dataset_id != "mtb-en-fr-dev"]
    updated, added = c.updated_sets(CanarySets(sets=kept), corpora)
    assert added == ["mtb-en-fr-dev@1.0.0"]
    assert c.set_for(updated, ES, "1.0.0").entry_ids == [1, 2, 3]
    assert c.set_for(updated, "mtb-en-fr-dev", "1.0.0") == c.set_for(sets, "mtb-en-fr-dev", "1.0.0")


def test_a_changed_corpus_is_refused(tmp_path):
    """The same corpus id and version with other bytes (one reference edited): the set's SHA-256 no longer holds."""
    (tmp_path / "corpora").mkdir()
    data = json.loads((ROOT / "corpora" / f"{ES}.json").read_text(encoding="utf-8"))
    data["entries"][0]["reference"] += " (editado)"
    (tmp_path / "corpora" / f"{ES}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    corpora, _ = c.load_corpora(tmp_path / "corpora")
    sets = CanarySets(sets=[c.set_for(c.read_sets(ROOT / c.SETS_FILE), ES, "1.0.0")])
    (problem,) = c.check_sets(sets, corpora)
    assert problem.startswith(f"canaries/sets.yaml: $.sets[0].sha256: corpora/{ES}.json hashes ")
    assert "the set was chosen from 46886d28e45c…" in problem and "(fix: a changed corpus is a new version" in problem
    with pytest.raises(InputError, match=r"\$\.sets\[0\]\.sha256: corpora/mtb-en-es-dev.json hashes"):
        c.updated_sets(sets, corpora)
    # the CLI says the same and exits 1
    (tmp_path / "canaries").mkdir()
    c.write_sets(tmp_path / c.SETS_FILE, sets)
    res = _mtboard(["canary", "sets", "--root", tmp_path])
    assert res.returncode == 1 and "$.sets[0].sha256" in res.stderr and "hashes" in res.stderr


def test_sets_file_refuses_bad_documents(tmp_path):
    path = tmp_path / "sets.yaml"
    good = yaml.safe_load((ROOT / c.SETS_FILE).read_text(encoding="utf-8"))
    for mutate, match in ((lambda d: d["sets"][0].update(entry_ids=[5, 3]), "ascending"),
                          (lambda d: d["sets"][0].update(sha256="xyz"), "sha256"),
                          (lambda d: d["sets"][0].update(extra=1), "extra"),
                          (lambda d: d["sets"].append(dict(d["sets"][0])), "a second set for mtb-ca-en-dev")):
        data = json.loads(json.dumps(good))
        mutate(data)
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        with pytest.raises(InputError, match=match):
            c.read_sets(path)
    path.write_text("sets: []\nsets: []\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate"):
        c.read_sets(path)


def test_cli_checks_the_committed_file():
    res = _mtboard(["canary", "sets", "--root", ROOT])
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "canaries/sets.yaml: 10 sets hold (120 entries)"  # 8 + the two dialogue corpora


# --------------------------------------------------------------------------------------------------------------------
# canary runs, the drift decision, the board


def test_only_api_methods_get_canary_runs(tmp_path):
    """An Apertium card: refused with one line saying why (a committed card, read as is)."""
    ap = next((ROOT / "submissions" / ES).glob("apertium*.json"))
    res = _mtboard(["canary", "run", ap, "--root", ROOT])
    assert res.returncode == 1
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert "canary runs are for API models (openai: methods)" in lines[0]
    assert "cannot drift under the same name" in lines[0] and "method.backend" in lines[0]
    assert "apertium:eng-spa uses backend 'apertium'" in lines[0]
    with pytest.raises(ConfigError, match="uses backend 'apertium'"):
        check_canary_card(load_card(ap), str(ap))


def _sacrebleu_chrf(mode: str) -> float:
    from sacrebleu.metrics import CHRF

    corpus, _ = load_corpus(ROOT / "corpora" / f"{ES}.json")
    by_id = {e.id: e for e in corpus.entries}
    entries = [by_id[i] for i in CANARY_IDS]
    return CHRF(word_order=2).corpus_score([answer(e, mode) for e in entries], [[e.reference for e in entries]]).score


@pytest.mark.slow  # a whole-system test: 9 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_drift_is_marked_after_the_server_changes_its_answers(repo, served):
    srv, answers = served
    root, card_path = repo
    card = load_card(card_path)
    assert card.method.backend == "openai" and len(card.results) == 355 and card.scores.errors == 0

    # the card on the canary entries, recomputed by hand from its per-entry results: chrF++ from the summed
    # statistics; the composite by the board's definition (the function the board's views use)
    by_id = {r.entry_id: r for r in card.results}
    ref_chrf = chrf_from_stats(statistics_matrix([by_id[i].stats.chrf for i in CANARY_IDS]))
    assert chrf_on(card, CANARY_IDS) == pytest.approx(ref_chrf, abs=1e-9)
    ref = reference(card, CANARY_IDS, RESAMPLES)
    lo, hi = ref.ci
    assert lo < ref.composite < hi  # odd ids perfect, even ids one word short: the entries differ, a real interval
    # measured (composite values are 6-decimal, as the composite is): 0.968 [0.933, 0.997]; chrF++ 98.6
    assert (ref.composite, round(lo, 6), round(hi, 6)) == (0.967582, 0.932655, 0.996569)
    assert ref_chrf == pytest.approx(98.645156, abs=1e-6)

    # 1. the same answers: the same outputs, the same composite, inside the CI, no mark
    answers.mode = "good"
    res = _mtboard(["canary", "run", card_path, "--root", root, "--base-url", srv.url])
    assert res.returncode == 0, res.stderr
    assert "inside the CI: no drift" in res.stdout
    (first,) = c.load_history(root)[0]
    run1 = first[1]
    assert run1.entry_ids == CANARY_IDS and run1.card_fingerprint == card.fingerprint.hash
    assert run1.composite == pytest.approx(ref.composite, abs=1e-12)
    assert run1.chrf_plus_plus == pytest.approx(ref_chrf, abs=1e-9)
    assert run1.served.model_slug == "m" and run1.served.model_id == "m" and run1.served_note is None
    led = build_ledger(load_inputs(root / "submissions", root / "corpora", validate=False), resamples=RESAMPLES)
    (lb,) = led.boards
    (row,) = lb.rows
    drift = lb.drift[row.fingerprint]
    assert not drift.drifted and [p.outside for p in drift.runs] == [False]
    assert drift.card_ci == ref.ci and drift.entries == 12
    board_html.fill_values(led.boards)
    assert "mtb-drift" not in str(board_html.board_table(lb.views[0], lb, lambda t: t))

    # 2. the server's answers change: the source copied back
    answers.mode = "drifted"
    res = _mtboard(["canary", "run", card_path, "--root", root, "--base-url", srv.url])
    assert res.returncode == 0, res.stderr
    assert "OUTSIDE the CI: the model drifted" in res.stdout
    history, warnings = c.load_history(root)
    assert warnings == [] and len(history) == 2
    run2 = history[1][1]
    assert run2.outputs_sha256 != run1.outputs_sha256
    # chrF++ of each run recomputed independently by sacrebleu from the scripted outputs of the 12 entries
    assert run1.chrf_plus_plus == pytest.approx(_sacrebleu_chrf("good"), abs=1e-9)
    assert run2.chrf_plus_plus == pytest.approx(_sacrebleu_chrf("drifted"), abs=1e-9)
    assert run2.composite < lo and run2.chrf_plus_plus < ref_chrf - 20
    assert run2.composite == 0.594547 and run2.chrf_plus_plus == pytest.approx(52.424872, abs=1e-6)  # measured
    led = build_ledger(load_inputs(root / "submissions", root / "corpora", validate=False), resamples=RESAMPLES)
    (lb,) = led.boards
    drift = lb.drift[row.fingerprint]
    assert drift.drifted and [p.outside for p in drift.runs] == [False, True]
    assert [p.composite for p in drift.runs] == [run1.composite, run2.composite]
    assert drift.text == (f"drifted: canary {run2.composite:.3f} ({run2.date[:10]}) outside the card's "
                          f"{ref.composite:.3f} [{lo:.3f}, {hi:.3f}] on 12 canary entries")
    # data/ledger.json
    doc = document.to_document(led, "2026-12-04T00:00:00Z")
    (published,) = doc.boards[0].rows
    assert published.drift.drifted and len(published.drift.runs) == 2 and published.drift.text == drift.text
    assert published.drift.runs[1].path == history[1][0]
    # the rendered board row
    board_html.fill_values(led.boards)
    table = str(board_html.board_table(lb.views[0], lb, lambda t: t))
    assert table.count('class="mtb-drift"') == 1 and "\u26a0</span> drifted</a>" in table
    assert ('<a class="mtb-drift" href="models/m-62c66a.md#drift-canaries" title="drifted: canary '
            f'{run2.composite:.3f}') in table
    # the model page's history
    (p,) = build_portraits(led.boards)
    (entry,) = p.canaries
    assert entry["drift"] is drift and "<svg" in str(entry["chart"])
    assert str(entry["chart"]).count("<rect x=") >= 1  # the outside run is a square

    # `mtboard ledger --row` says it too, with every run
    res = _mtboard(["ledger", "--no-validate", "--submissions", root / "submissions", "--corpora", root / "corpora",
                    "--row", row.fingerprint[:12]])
    assert res.returncode == 0, res.stderr
    assert f"canaries     {drift.text}" in res.stdout
    assert res.stdout.count("  inside  canaries/history/") == 1 and res.stdout.count("  outside  canaries/") == 1

    # the record holds no secret and no URL
    for path, _ in history:
        text = (root / path).read_text(encoding="utf-8")
        assert "127.0.0.1" not in text and "http" not in text and "key" not in text.lower()
        assert CanaryRun.model_validate_json(text)


@pytest.mark.slow  # 4.3 CPU-s, 9 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_canary_needs_the_whole_set(repo, served, tmp_path):
    """A card of the first 30 entries has none of the 12 canary entries: nothing to compare with; `canary list` leaves
    it out."""
    srv, answers = served
    root, _ = repo
    answers.mode = "good"
    work = tmp_path / "w"
    res = _mtboard(["run", root / "corpora" / f"{ES}.json", "--method", "openai:m", "--prompt", "source-only",
                    "--base-url", srv.url, "--limit", 30, "--work-dir", work])
    assert res.returncode == 0, res.stderr
    res = _mtboard(["canary", "run", work / "card.json", "--root", root, "--base-url", srv.url, "--dry-run"])
    assert res.returncode == 1
    assert "the card did not evaluate 12 of the 12 canary entries (66, 110, 141, 188, 201 …)" in res.stderr
    # `mtboard canary list` (what the workflow re-runs): the whole-segment card, not this one (said on stderr)
    other = tmp_path / "repo"
    shutil.copytree(root, other, ignore=shutil.ignore_patterns("history"))
    limited = load_card(work / "card.json")
    (other / canonical_relpath(limited)).write_bytes(card_bytes(limited))
    res = _mtboard(["canary", "list", "--root", other])
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [canonical_relpath(load_card(repo[1]))]
    assert res.stderr.count("skipped: ") == 1 and "did not evaluate 12 of the 12 canary entries" in res.stderr


@pytest.mark.slow  # 2.8 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_subset_scores_are_the_boards(repo):
    """score.subset is the one definition: the ledger's _composite_boot is it, and on all entries it gives the card's
    own composite (6-decimal card value)."""
    from mtboard.ledger.tables import _composite_boot

    _, card_path = repo
    card = load_card(card_path)
    ids = [r.entry_id for r in card.results]
    ones = np.ones((1, len(ids)), dtype=np.int64)
    assert float(_composite_boot(card, ids, ones)[0]) == composite_on(card, ids)
    assert composite_on(card, ids) == pytest.approx(card.scores.composite, abs=1e-6)
    assert chrf_on(card, ids) == pytest.approx(card.scores.chrf_plus_plus, abs=1e-6)


def test_history_records_are_read_safely(tmp_path):
    """Hand-made records: a valid one is read; duplicate keys, an unknown field (no place for a key) and a number out
    of range are each left out with one warning naming the file."""
    good = {"date": "2026-12-04T10:00:00Z", "card_fingerprint": "a" * 64, "card_run_card_hash": "b" * 64,
            "card_path": "mtb-en-es-dev/x.json", "method": "openai:m", "model_slug": "m",
            "served": {"model_slug": "m"}, "dataset_id": ES, "version": "1.0.0", "sha256": "c" * 64,
            "entry_ids": CANARY_IDS, "composite": 0.5, "chrf_plus_plus": 50.0, "outputs_sha256": "d" * 64,
            "harness_version": "0.6.0"}
    run = CanaryRun.model_validate(good)
    assert c.history_path(run) == "canaries/history/m-62c66a/20261204T100000Z-aaaaaaaaaaaa.json"
    folder = tmp_path / "canaries" / "history" / "m-62c66a"
    folder.mkdir(parents=True)
    (folder / "1.json").write_bytes(c.run_bytes(run))
    (folder / "2.json").write_text('{"date": "x", "date": "y"}', encoding="utf-8")
    (folder / "3.json").write_text(json.dumps({**good, "api_key": "sk-123"}), encoding="utf-8")
    (folder / "4.json").write_text(json.dumps({**good, "composite": 1.5}), encoding="utf-8")
    runs, warnings = c.load_history(tmp_path)
    assert runs == [("canaries/history/m-62c66a/1.json", run)]
    assert len(warnings) == 3 and all(w.startswith("canary run skipped: canaries/history/m-62c66a/") for w in warnings)
    assert "duplicate" in warnings[0] and "api_key" in warnings[1] and "composite" in warnings[2]
