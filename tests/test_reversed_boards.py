"""The es→en and ca→en boards (issue 39 item 6): the committed corpora carry human variants and a glossary, so
equivalent match and terminology adherence have values on the committed cards and on the board; so does morphological
accuracy, measured against the corpora's Apertium machine analyses, not gold ones (tests/test_morphology.py has its
hand-checked entry). Hand-checked values:

* entry 104 of mtb-es-en-dev: source ``Eliminar``, reference ``Remove``, variant ``Delete`` (Django admin catalogue:
  both msgids are ``msgstr "Eliminar"``); Apertium spa-eng writes ``Delete``: no exact match, an equivalent match.
  That is the only entry where the two differ: exact 18, equivalent 19 of 355 development entries.
* terminology: 21 glossary terms on 17 development entries; Apertium renders 19 (misses: entry 350 ``Palaos`` left as
  is, reference ``Palau``; entry 355 ``Tunez`` (an upstream spelling without the accent) left as is, ``Tunisia``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from mtboard.core.documents import load_card, load_corpus
from mtboard.score.metrics.match import equivalent_match, exact_match

ROOT = Path(__file__).resolve().parent.parent
ES_CARD = ROOT / "submissions" / "mtb-es-en-dev" / "apertium-spa-eng__default__f0febcd95f45.json"
CA_CARD = ROOT / "submissions" / "mtb-ca-en-dev" / "apertium-cat-eng__default__7c743cb3493e.json"


def test_es_en_entry_104_is_an_equivalent_not_an_exact_match():
    corpus, _ = load_corpus(ROOT / "corpora" / "mtb-es-en-dev.json")
    entry = next(e for e in corpus.entries if e.id == 104)
    card = load_card(ES_CARD)
    r = next(r for r in card.results if r.entry_id == 104)
    assert (r.source, r.expected, r.predicted, entry.variants) == ("Eliminar", "Remove", "Delete", ["Delete"])
    assert not exact_match(r.predicted, r.expected) and equivalent_match(r.predicted, r.expected, entry.variants)
    assert (r.exact_match, r.equivalent_match) == (False, True)
    assert [x.entry_id for x in card.results if x.equivalent_match and not x.exact_match] == [104]


def test_es_en_card_has_the_three_metrics_hand_counted():
    s = load_card(ES_CARD).scores
    assert (s.total, s.exact_matches, s.equivalent_matches) == (355, 18, 19)
    assert s.equivalent_match_rate == 19 / 355
    assert s.terminology_adherence == 19 / 21
    card = load_card(ES_CARD)
    misses = [(r.entry_id, r.predicted) for r in card.results
              if r.glossary_terms and r.glossary_hits != r.glossary_terms]
    assert misses == [(350, "Palaos"), (355, "Tunez")]
    assert sum(r.glossary_terms or 0 for r in card.results) == 21
    # the English target has Apertium's English analyser: FST acceptance is measured, not absent
    assert card.fst_version == "apertium-eng-cat 1.0.1-5; eng-cat.automorf.bin; lttoolbox 3.7.1-1+b2"
    assert s.fst_accepted == 342 and round(s.fst_acceptance_rate, 4) == 0.9872
    # morphological accuracy against Apertium eng-spa's machine analyses (not gold): 2,510 of the 4,290 units of the
    # 350 development entries whose reference analysis has a unit (entries 82, 98, 116, 159, 350 have none)
    covered = [r for r in card.results if r.morph_units]
    assert len(covered) == 350 and sorted(r.entry_id for r in card.results if r.morph_units is None) == [
        82, 98, 116, 159, 350]
    assert (sum(r.morph_matched or 0 for r in covered), sum(r.morph_units for r in covered)) == (2510, 4290)
    assert s.morphological_accuracy == 2510 / 4290 and "morphological_accuracy" not in s.metric_availability
    assert s.signatures.morphology.startswith("morph:apertium-eng-spa 0.8.1-2; eng-spa.automorf.bin + eng-spa.prob")
    assert s.composite == 0.488978  # 0.478299 before the metric counted


def test_ca_en_card_has_values_too():
    s = load_card(CA_CARD).scores
    assert (s.total, s.exact_matches, s.equivalent_matches) == (355, 32, 32)
    assert s.terminology_adherence == 24 / 27
    assert s.morphological_accuracy == 2495 / 4336 and s.composite == 0.493577  # 0.484382 before
    assert s.signatures.morphology.startswith("morph:apertium-eng-cat 1.0.1-5; eng-cat.automorf.bin + eng-cat.prob")


def test_baselines_score_zero_morphological_accuracy():
    for board in ("mtb-es-en-dev", "mtb-ca-en-dev"):
        for path in sorted((ROOT / "submissions" / board).glob("baseline-*.json")):
            s = load_card(path).scores
            assert s.morphological_accuracy == 0.0 and s.composite == 0.0, path.name


def test_board_shows_equivalent_match_and_terminology(committed_site):
    """The committed site's ES→EN and CA→EN boards carry the two columns with the cards' values, rounded as shown;
    the EN→ES board, whose corpus has neither variants nor a glossary, does not show them."""
    boards = committed_site.docs / "leaderboards"
    rows = {}
    for key in ("mtb-es-en-dev-v1.0.0", "mtb-ca-en-dev-v1.0.0"):
        text = (boards / f"{key}.csv").read_text(encoding="utf-8")
        rows[key] = {r["method_label"]: r for r in csv.DictReader(io.StringIO(text))}
    es = rows["mtb-es-en-dev-v1.0.0"]["apertium:spa-eng · default"]
    assert (es["exact"], es["equiv"], es["term"], es["morph"], es["fst"]) == ("0.051", "0.054", "0.905", "0.585",
                                                                              "0.987")
    assert rows["mtb-es-en-dev-v1.0.0"]["echo: · baseline"]["equiv"] == "0.000"
    ca = rows["mtb-ca-en-dev-v1.0.0"]["apertium:cat-eng · default"]
    assert (ca["equiv"], ca["term"], ca["morph"]) == ("0.090", "0.889", "0.575")
    html = (boards / "mtb-es-en-dev-v1.0.0.md").read_text(encoding="utf-8")
    assert "Equiv. match" in html and "Terminology" in html and "Morph. acc." in html
    assert "measured against Apertium machine analyses of the references, not gold" in html  # the column's tooltip
    en_es = (boards / "mtb-en-es-dev-v1.0.0.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "equiv" not in en_es and "term" not in en_es and "morph" not in en_es and "exact" in en_es
