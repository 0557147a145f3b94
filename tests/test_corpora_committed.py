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
from mtboard.core.schema import SECRET_SEGMENTS, Corpus, Segment

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
FILES = sorted(CORPORA.glob("*.json"))
REQUIRED = {"mtb-en-es-dev": ("en", "es"), "mtb-en-fr-dev": ("en", "fr"), "mtb-en-de-dev": ("en", "de"),
            "mtb-en-ja-dev": ("en", "ja"), "mtb-ja-en-dev": ("ja", "en")}
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
    assert len(dev_domains) >= 4
    assert [e.id for e in corpus.entries] == list(range(1, len(corpus.entries) + 1))
    assert len({e.source.casefold() for e in corpus.entries}) == len(corpus.entries)
    reversed_ = d.id == "mtb-ja-en-dev"
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
    if reversed_:
        assert "Reversed from en→ja" in (d.description or "")


def test_raw_json_has_no_secret_segment_anywhere():
    for path in FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert all(e.get("segment", "development") in ("development", "diagnostic") for e in data["entries"])
