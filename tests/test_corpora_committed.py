"""Every committed corpus in corpora/: valid, round-trips byte-identically, public-only, and meets issue 2's bar."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mtboard.core.canonical import canonical_bytes
from mtboard.inputs.corpora import text as T
from mtboard.inputs.corpora.filters import CAP_WORDS, check_pair
from mtboard.core.documents import corpus_bytes, load_corpus
from mtboard.core.schema import SECRET_SEGMENTS, Corpus, Domain, Segment

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
FILES = sorted(CORPORA.glob("*.json"))
REQUIRED = {"mtb-en-es-dev": ("en", "es"), "mtb-en-fr-dev": ("en", "fr"), "mtb-en-de-dev": ("en", "de"),
            "mtb-en-ja-dev": ("en", "ja"), "mtb-ja-en-dev": ("ja", "en"), "mtb-en-ca-dev": ("en", "ca"),
            "mtb-es-en-dev": ("es", "en"), "mtb-ca-en-dev": ("ca", "en"),
            "mtb-en-es-dialogue": ("en", "es"), "mtb-ja-en-dialogue": ("ja", "en")}
DIALOGUE = {"mtb-en-es-dialogue", "mtb-ja-en-dialogue"}
"""The dialogue corpora (issue 40, corpora/build.py build_dialogue): one domain (literary), every entry in a scene."""
TURNED = {"mtb-es-en-dev": ("mtb-en-es-dev", "Spanish"), "mtb-ca-en-dev": ("mtb-en-ca-dev", "Catalan")}
"""The datasets that turn an en→xx dataset around entry by entry (corpora/build.py build_reversed)."""
ids = [f.stem for f in FILES]


def test_required_datasets_present():
    assert set(REQUIRED) <= {f.stem for f in FILES}


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_loads_and_round_trips(path):
    corpus, digest = load_corpus(path)
    raw = path.read_bytes()
    # the file is exactly what write_corpus produces for the loaded model
    assert corpus_bytes(corpus) == raw
    # load → dump → load is byte-identical under canonical JSON
    dumped = canonical_bytes(corpus.model_dump(mode="json"))
    again = Corpus.model_validate_json(dumped)
    assert canonical_bytes(again.model_dump(mode="json")) == dumped
    assert corpus.dataset.id == path.stem


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_contents_meet_the_bar(path):
    corpus, _ = load_corpus(path)
    d = corpus.dataset
    if d.id in REQUIRED:
        assert (d.source_language, d.target_language) == REQUIRED[d.id]
    assert d.version == "1.0.0" and d.language_pair == f"{d.source_language.upper()}→{d.target_language.upper()}"
    assert d.license and d.provenance == ["corpus"]
    seg = Counter(e.segment for e in corpus.entries)
    assert not set(seg) & SECRET_SEGMENTS, "no gold_standard/held_out entry may be committed"
    assert 300 <= seg[Segment.development] <= 400
    assert seg[Segment.diagnostic] >= 10
    dev_domains = {e.domain for e in corpus.entries if e.segment == Segment.development}
    if d.id in DIALOGUE:
        assert dev_domains == {Domain.literary} and all(e.scene for e in corpus.entries)
    else:
        assert len(dev_domains) >= 4 and not any(e.scene or e.history for e in corpus.entries)
    assert [e.id for e in corpus.entries] == list(range(1, len(corpus.entries) + 1))
    by_source: dict[str, list] = {}
    for e in corpus.entries:
        by_source.setdefault(e.source.casefold(), []).append(e)
    for same in by_source.values():  # a source twice only where two English originals share one translation
        assert len(same) == 1 or (d.id in TURNED and all(
            o.reference in e.variants for e in same for o in same if o is not e)), [e.id for e in same]
    reversed_ = d.id in ("mtb-ja-en-dev", "mtb-ja-en-dialogue")
    for e in corpus.entries:
        where = f"{path.name} entry {e.id}"
        assert e.provenance == "corpus" and e.origin is not None and e.origin.package and e.origin.package_version
        assert e.origin.file and e.origin.locator, where
        assert e.difficulty in (1, 2, 3, 4, 5) and e.domain is not None, where
        assert max(T.word_count(e.source), T.word_count(e.reference)) <= CAP_WORDS, where
        # the committed text still passes every filter (catches hand edits)
        assert check_pair(e.source, e.reference, d.source_language, d.target_language) is None, where
        assert (e.segment == Segment.diagnostic) == bool(T.placeholders(e.source)), where
        if reversed_:
            assert e.origin.note and "reversed from an en→Japanese catalogue" in e.origin.note
        if d.id in TURNED:
            assert e.origin.note and e.origin.note.startswith(f"reversed from an en→{TURNED[d.id][1]} catalogue")
            assert "machine analysis of the reference by apertium-eng-" in e.origin.note
            assert e.morphological_analysis and "^" in e.morphological_analysis, where
            assert "$" in e.morphological_analysis, where
            assert (e.variant_class == "same-translation") == bool(e.variants), where
            assert all(v.casefold() != e.reference.casefold() for v in e.variants), where
            assert all(t.source in e.source for t in e.glossary), where
    if reversed_:
        assert "Reversed from en→ja" in (d.description or "")


def test_raw_json_has_no_secret_segment_anywhere():
    for path in FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert all(e.get("segment", "development") in ("development", "diagnostic") for e in data["entries"])


def test_reversed_entries_are_the_originals_turned_around():
    """mtb-es-en-dev / mtb-ca-en-dev hold exactly the pairs of mtb-en-es-dev / mtb-en-ca-dev, same ids and labels."""
    for turned, (original, _) in TURNED.items():
        rev, _ = load_corpus(CORPORA / f"{turned}.json")
        orig, _ = load_corpus(CORPORA / f"{original}.json")
        assert len(rev.entries) == len(orig.entries) == 379
        for r, o in zip(rev.entries, orig.entries):
            assert (r.id, r.source, r.reference) == (o.id, o.reference, o.source)
            assert (r.segment, r.difficulty, r.register, r.context, r.domain) == \
                (o.segment, o.difficulty, o.register, o.context, o.domain)
            assert r.origin.model_dump(exclude={"note"}) == o.origin.model_dump(exclude={"note"})


def test_reversed_variants_glossary_and_analysis_hand_checked():
    """Hand-checked entries of mtb-es-en-dev: variants (Django admin: 'Search' and 'Lookup' are both 'Buscar'), a
    glossary hit (iso-codes es: 'Brasil' → 'Brazil'), the Apertium analysis of 'Remove'; and the counts."""
    es, _ = load_corpus(CORPORA / "mtb-es-en-dev.json")
    by_id = {e.id: e for e in es.entries}
    assert (by_id[112].source, by_id[112].reference, by_id[112].variants) == ("Buscar", "Search", ["Lookup"])
    assert (by_id[116].source, by_id[116].reference, by_id[116].variants) == ("Buscar", "Lookup", ["Search"])
    e326 = by_id[326]
    assert e326.source == "Acre es el Estado más occidental de Brasil."
    assert [(t.source, t.targets) for t in e326.glossary] == [("Brasil", ["Brazil"])]
    assert by_id[104].morphological_analysis == "^Remove/Remove<vblex><inf>$"
    # 'libertad de reunión' (UDHR art. 20) is not the island of Réunion: terms keep their capitals
    assert not by_id[217].glossary and "reunión" in by_id[217].source
    assert [e.id for e in es.entries if e.variants] == [104, 112, 116, 128, 364]
    assert sum(len(e.glossary) for e in es.entries) == 21 and sum(bool(e.glossary) for e in es.entries) == 17
    ca, _ = load_corpus(CORPORA / "mtb-ca-en-dev.json")
    assert sum(bool(e.variants) for e in ca.entries) == 5 and sum(len(e.glossary) for e in ca.entries) == 27


def test_glossary_files_read_with_the_importer():
    """The committed glossaries are what ``mtboard corpus import --glossary`` reads (header ``es,en``/``ca,en``)."""
    from mtboard.inputs.corpora.importers import read_glossary

    terms = read_glossary(CORPORA / "glossaries" / "iso-3166-1-es-en.csv", "es", "en")
    assert len(terms) == 417
    assert next(t.targets for t in terms if t.source == "España") == ["Spain"]
    assert len(read_glossary(CORPORA / "glossaries" / "iso-3166-1-ca-en.csv", "ca", "en")) == 420
