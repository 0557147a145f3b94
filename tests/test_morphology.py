"""Morphological accuracy against Apertium machine analyses, not gold (issue 39 item 6; docs/SCORING_SPEC.md §2.7).

Real components: the installed Debian ``lttoolbox`` / ``apertium`` and the pairs ``apertium-eng-spa`` /
``apertium-eng-cat`` (the corpora were analysed with them; the tests skip with the reason where they are missing, as
FST acceptance's tests do).

Hand-checked:

* "He walked" against the analysis of "He walks": reference units ``prpers<prn><subj><p3><m><sg>`` and
  ``walk<vblex><pri><p3><sg>``; the hypothesis's ``walk<vblex><past>`` has the right lemma and the wrong tense, so
  1 of 2 units match (0.5) — while FST acceptance accepts every checked word of it (``walked``; ``He`` is capitalised
  and skipped): 1.0.
* entry 42 of mtb-es-en-dev (Apertium spa-eng card): reference "manage password for the account", analysis
  ``manage<vblex><pres> password<n><sg> for<pr> the<det><def><sp> account<n><sg>`` = 5 units; Apertium wrote "It
  manages the password of the account" = ``prpers<prn><subj><p3><nt><sg> manage<vblex><pri><p3><sg>
  the<det><def><sp> password<n><sg> of<pr> the<det><def><sp> account<n><sg>``. Matched: password, the (the hypothesis
  has two, the reference one: clipped to 1), account = 3; ``manage`` has the wrong form (present 3rd person, not the
  base form) and ``for`` is missing: 3 / 5.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mtboard import validate as V
from mtboard.core.documents import load_card, load_corpus
from mtboard.core.schema import Entry, EntryResult, TranslationRecord
from mtboard.score import fst as fst_mod, morphology as M, scoring
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.composite import composite, entry_columns

import validate_support as vs

ROOT = Path(__file__).resolve().parent.parent
ES_CORPUS = ROOT / "corpora" / "mtb-es-en-dev.json"
ES_CARD = ROOT / "submissions" / "mtb-es-en-dev" / "apertium-spa-eng__default__f0febcd95f45.json"
WALKS = "^He/Prpers<prn><subj><p3><m><sg>$ ^walks/walk<vblex><pri><p3><sg>$"
"""Apertium eng-spa's analysis of "He walks" (lt-proc + apertium-tagger -g -p; the test re-makes it)."""

ANALYSER = M.find_morph_analyser("es", "en")
needs_apertium = pytest.mark.skipif(ANALYSER is None, reason="needs lttoolbox, apertium and apertium-eng-spa "
                                                              "(apt-get install apertium-eng-spa)")


def test_units_leave_out_unknown_words_and_punctuation_and_fold_case():
    text = ("^The/The<det><def><sp>$ \"^sshd/*sshd$\" ^is/be<vbser><pri><p3><sg>$^,/,<cm>$ ^a\\/b/a\\/b<n><sg>$"
            "^./.<sent>$ ^(/(<lpar>$^can't/can<vaux><pres>+not<adv>$")
    assert M.units(text) == ["the<det><def><sp>", "be<vbser><pri><p3><sg>", "a/b<n><sg>",
                             "can<vaux><pres>+not<adv>"]
    assert M.units(None) == [] and M.units("") == [] and M.units("^Sewell/*Sewell$") == []


def test_clipped_recall():
    assert M.matched(["a", "a", "b"], ["a", "b", "b", "c"]) == 2  # one 'a' of two, 'b' clipped to one
    assert M.matched(["a"], []) == 0 and M.matched([], ["a"]) == 0
    assert M.accuracy([2, 0], [3, 1]) == 0.5 and M.accuracy([0], [0]) is None


@needs_apertium
def test_the_analyser_is_the_corpus_pair_and_reproduces_the_stored_analyses():
    assert ANALYSER.package == "apertium-eng-spa" and ANALYSER.automorf.endswith("/eng-spa.automorf.bin")
    assert ANALYSER.prob.endswith("/eng-spa.prob")
    ca = M.find_morph_analyser("ca", "en")
    assert ca is not None and ca.package == "apertium-eng-cat" and ca.prob.endswith("/eng-cat.prob")
    sig = M.signature(ANALYSER)
    assert sig.startswith("morph:apertium-eng-spa 0.8.1-2; eng-spa.automorf.bin + eng-spa.prob; lttoolbox ")
    assert sig.endswith("|reference:apertium-machine-analysis,not-gold")
    corpus, _ = load_corpus(ES_CORPUS)
    assert M.analyse(ANALYSER, [e.reference for e in corpus.entries]) == [e.morphological_analysis
                                                                          for e in corpus.entries]
    assert M.analyse(ANALYSER, ["He walks", "", "  "]) == [WALKS, "", ""]


@needs_apertium
def test_wrong_tense_is_fst_valid_but_half_right_morphologically():
    entries = [Entry(id=1, source="Él camina", reference="He walks", morphological_analysis=WALKS)]
    recs = [TranslationRecord(entry_id=1, raw_predicted="He walked")]
    scores, results = scoring.score_run(entries, recs, source_language="es", target_language="en",
                                        elapsed_seconds=1.0, fst=True)
    assert scores.fst_acceptance_rate == 1.0 and results[0].fst_valid is True
    assert (results[0].morph_matched, results[0].morph_units) == (1, 2)
    assert scores.morphological_accuracy == 0.5
    assert "morphological_accuracy" not in scores.metric_availability
    assert scores.signatures.morphology == M.signature(ANALYSER)
    right = scoring.score_run(entries, [TranslationRecord(entry_id=1, raw_predicted="He walks")],
                              source_language="es", target_language="en", elapsed_seconds=1.0, fst=True)[0]
    assert right.morphological_accuracy == 1.0 and right.composite > scores.composite


@needs_apertium
def test_coverage_is_the_corpus_and_a_missing_output_scores_zero():
    """Entry 2 has no analysis (not counted); entry 3's empty output counts its 2 units with 0 matched; the composite
    weighs the metric (its value removed, the composite changes) and the bootstrap's ratio column agrees exactly."""
    entries = [Entry(id=1, source="Él camina", reference="He walks", morphological_analysis=WALKS),
               Entry(id=2, source="Hola", reference="Hello"),
               Entry(id=3, source="Él camina", reference="He walks", morphological_analysis=WALKS)]
    recs = [TranslationRecord(entry_id=1, raw_predicted="He walks"), TranslationRecord(entry_id=2, raw_predicted="Hi"),
            TranslationRecord(entry_id=3, raw_predicted="")]
    scores, results = scoring.score_run(entries, recs, source_language="es", target_language="en",
                                        elapsed_seconds=1.0, fst=False)
    assert [(r.morph_matched, r.morph_units) for r in results] == [(2, 2), (None, None), (0, 2)]
    assert scores.morphological_accuracy == 0.5
    dumped = [r.model_dump(mode="json") for r in results]
    assert "morph_units" in dumped[0] and "morph_units" not in dumped[1]  # absent, not null, without an analysis
    assert EntryResult.model_validate_json(json.dumps(dumped[2])).morph_units == 2
    v = {k: getattr(scores, k) for k in ("chrf_plus_plus", "exact_match_rate", "code_switching_rate",
                                         "semantic_score", "hallucination_rate", "morphological_accuracy")}
    assert composite(v)[0] == scores.composite != composite({**v, "morphological_accuracy": None})[0]
    cols = entry_columns(results, has_equiv=False, has_fst=False)
    assert cols["morphological_accuracy"].tolist() == [[2, 0, 0], [2, 0, 2]]
    ones = np.ones((1, 3), dtype=np.int64)
    assert bootstrap.composite_resamples([r.stats.chrf for r in results], cols, ones).tolist() == [scores.composite]
    # scored without the analyser (the validator's morphology=False for a card without the metric): null, a reason
    off, _ = scoring.score_run(entries, recs, source_language="es", target_language="en", elapsed_seconds=1.0,
                               fst=False, morphology=False)
    assert off.morphological_accuracy is None and off.signatures.morphology is None
    assert off.metric_availability["morphological_accuracy"] == scoring.MORPH_NO_ANALYSER


def test_a_corpus_without_analyses_keeps_the_old_reason_and_bytes():
    entries = [Entry(id=1, source="Hola", reference="Hello")]
    scores, results = scoring.score_run(entries, [TranslationRecord(entry_id=1, raw_predicted="Hello")],
                                        source_language="es", target_language="en", elapsed_seconds=1.0, fst=False)
    assert scores.morphological_accuracy is None
    assert scores.metric_availability["morphological_accuracy"] == "planned: needs gold morphological analyses in " \
                                                                   "the corpus"
    assert "morphology" not in scores.signatures.model_dump(mode="json")
    assert "morph_units" not in results[0].model_dump(mode="json")


def test_without_the_tools_it_is_null_with_a_reason(monkeypatch):
    """Fault injection: no apertium-tagger on PATH. Scoring leaves the metric null with the reason; the validator's
    ``morphology=True`` (a card with a value) refuses, as ``fst=True`` does without an analyser."""
    real = shutil.which
    monkeypatch.setattr(M.shutil, "which", lambda name: None if name == "apertium-tagger" else real(name))
    M.find_morph_analyser.cache_clear()
    try:
        entries = [Entry(id=1, source="Él camina", reference="He walks", morphological_analysis=WALKS)]
        recs = [TranslationRecord(entry_id=1, raw_predicted="He walked")]
        scores, results = scoring.score_run(entries, recs, source_language="es", target_language="en",
                                            elapsed_seconds=1.0, fst=False)
        assert scores.morphological_accuracy is None and results[0].morph_units is None
        assert scores.metric_availability["morphological_accuracy"].startswith("not measured: no Apertium analyser")
        with pytest.raises(Exception, match="no Apertium analyser \\+ tagger is installed for es→en"):
            scoring.score_run(entries, recs, source_language="es", target_language="en", elapsed_seconds=1.0,
                              fst=False, morphology=True)
    finally:
        M.find_morph_analyser.cache_clear()


@needs_apertium
def test_es_en_card_entry_42_hand_checked():
    card = load_card(ES_CARD)
    r = next(x for x in card.results if x.entry_id == 42)
    assert (r.expected, r.predicted) == ("manage password for the account", "It manages the password of the account")
    corpus, _ = load_corpus(ES_CORPUS)
    entry = next(e for e in corpus.entries if e.id == 42)
    ref = M.units(entry.morphological_analysis)
    assert ref == ["manage<vblex><pres>", "password<n><sg>", "for<pr>", "the<det><def><sp>", "account<n><sg>"]
    hyp = M.units(M.analyse(ANALYSER, [r.predicted])[0])
    assert hyp == ["prpers<prn><subj><p3><nt><sg>", "manage<vblex><pri><p3><sg>", "the<det><def><sp>",
                   "password<n><sg>", "of<pr>", "the<det><def><sp>", "account<n><sg>"]
    assert M.matched(ref, hyp) == 3 and (r.morph_matched, r.morph_units) == (3, 5)
    assert fst_mod.find_analyser("en") is not None and r.fst_valid is True  # every checked word accepted


@needs_apertium
def test_validator_refuses_a_resealed_card_with_a_changed_morph_count(tmp_path):
    """A cheater raises entry 42's matched units from 3 to 5 and the card's rate to match, and re-seals: the
    validator's exact recomputation (``metrics``) refuses both."""
    raw = ES_CARD.read_bytes()
    root = vs.make_repo(tmp_path, [], corpus=ES_CORPUS)
    ctx = V.make_context(root)
    data = json.loads(raw)
    i = next(k for k, x in enumerate(data["results"]) if x["entry_id"] == 42)
    data["results"][i]["morph_matched"] = 5
    s = data["scores"]
    s["morphological_accuracy"] = (2510 + 2) / 4290
    report = vs.validate_resealed(root, ctx, data)
    paths = {(p.check, p.field) for p in report.problems}
    assert ("metrics", f"$.results[{i}].morph_matched") in paths
    assert ("metrics", "$.scores.morphological_accuracy") in paths


@needs_apertium
@pytest.mark.parametrize("edit", ["units", "signature", "drop"])
def test_validator_refuses_a_resealed_card_with_edited_morph_fields(tmp_path, edit):
    """The other bound morphology fields (tests/test_validate_binding.py lists them as not instantiable on its base
    cards, which have no analyses): entry 42's unit count, the signature that says the reference is a machine analysis,
    and the counts removed from an entry — each edit re-sealed and refused."""
    root = vs.make_repo(tmp_path, [], corpus=ES_CORPUS)
    ctx = V.make_context(root)
    data = json.loads(ES_CARD.read_bytes())
    i = next(k for k, x in enumerate(data["results"]) if x["entry_id"] == 42)
    if edit == "units":
        data["results"][i]["morph_units"] = 3  # 3 of 3: the entry would read as perfect
    elif edit == "signature":
        sig = data["scores"]["signatures"]["morphology"]
        assert sig.endswith("reference:apertium-machine-analysis,not-gold")
        data["scores"]["signatures"]["morphology"] = sig.replace(",not-gold", ",gold")
    else:
        del data["results"][i]["morph_units"], data["results"][i]["morph_matched"]
    report = vs.validate_resealed(root, ctx, data)
    assert report.problems, edit
    assert {p.check for p in report.problems} <= {"metrics", "signatures", "schema"}, report.problems
