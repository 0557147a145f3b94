"""Deterministic sampling, entry building, ids and merging (mtboard.inputs.corpora.assemble). Hand-made pairs."""

from __future__ import annotations

import hashlib

import pytest

from mtboard.inputs.corpora.assemble import build_corpus, merge_corpora, rank_key, sample, summarize, to_entry
from mtboard.inputs.corpora.filters import Pair
from mtboard.core.errors import InputError
from mtboard.core.schema import Context, DatasetInfo, Domain, Entry, Register, Segment

PAIRS = [Pair(f"Source sentence number {i}", f"Frase de origen número {i}", locator=f"line {i}", order=i)
         for i in range(40)]


def _info(**kw) -> DatasetInfo:
    base = dict(id="t-en-es", version="1.0.0", language_pair="EN→ES", source_language="en", target_language="es",
                created="2026-01-01", license="MIT", provenance=["corpus"])
    base.update(kw)
    return DatasetInfo(**base)


def test_rank_key_known_answer():
    expected = hashlib.sha256("7\x00Hello\x00Hola".encode("utf-8")).hexdigest()
    assert rank_key(7, "Hello", "Hola") == expected
    assert rank_key("7", "Hello", "Hola") == expected


def test_sample_is_the_n_smallest_ranks_in_upstream_order():
    got = sample(PAIRS, 5, "s1")
    by_rank = sorted(PAIRS, key=lambda p: hashlib.sha256(f"s1\x00{p.source}\x00{p.reference}".encode()).hexdigest())
    assert {p.locator for p in got} == {p.locator for p in by_rank[:5]}
    assert [p.order for p in got] == sorted(p.order for p in got)


def test_sample_stable_under_reordering_and_additions():
    a = sample(PAIRS, 10, "seed")
    b = sample(list(reversed(PAIRS)), 10, "seed")
    assert [p.locator for p in a] == [p.locator for p in b]
    assert a != sample(PAIRS, 10, "other seed")
    # adding pairs upstream only displaces chosen pairs that the new ones outrank
    more = PAIRS + [Pair(f"Extra {i}", f"Extra es {i}", locator=f"x{i}", order=100 + i) for i in range(5)]
    c = sample(more, 10, "seed")
    kept_old = {p.locator for p in c if not p.locator.startswith("x")}
    assert kept_old <= {p.locator for p in a}
    assert len(kept_old) == 10 - sum(1 for p in c if p.locator.startswith("x"))


def test_sample_all_and_negative():
    assert sample(PAIRS[:3], None, 0) == PAIRS[:3]
    assert sample(PAIRS[:3], 10, 0) == PAIRS[:3]
    with pytest.raises(InputError):
        sample(PAIRS, -1, 0)


def test_to_entry_labels():
    e = to_entry(Pair("Enter a valid date", "Introduzca una fecha válida", tag="msg"), source_lang="en",
                 domain=Domain.ui)
    assert (e.difficulty, e.register, e.context, e.domain, e.segment, e.provenance) == (
        2, Register.technical, Context.instruction, Domain.ui, Segment.development, "corpus")
    # explicit values win; English side used for context when reversed
    e2 = to_entry(Pair("日付が無効です", "Invalid date"), source_lang="ja", domain=Domain.ui,
                  register=Register.formal, english="Invalid date")
    assert (e2.register, e2.context) == (Register.formal, Context.error)
    e3 = to_entry(Pair("a b", "c d"), source_lang="en", domain=Domain.ui, auto_labels=False)
    assert (e3.register, e3.context) == (None, None)


def test_build_corpus_ids_and_secret_refused():
    entries = [to_entry(p, source_lang="en", domain=Domain.tech) for p in PAIRS[:3]]
    c = build_corpus(_info(), entries)
    assert [e.id for e in c.entries] == [1, 2, 3]
    secret = Entry(id=0, source="x y", reference="z w", segment=Segment.gold_standard)
    with pytest.raises(InputError, match="secret"):
        build_corpus(_info(), entries + [secret])
    with pytest.raises(InputError, match="no entries"):
        build_corpus(_info(), [])


def test_merge_stable_ids_and_dedup():
    ui = build_corpus(_info(id="ui"), [to_entry(p, source_lang="en", domain=Domain.ui) for p in PAIRS[:3]])
    med = build_corpus(_info(id="med"), [to_entry(p, source_lang="en", domain=Domain.medical) for p in PAIRS[2:5]])
    lit = build_corpus(_info(id="lit"), [to_entry(p, source_lang="en", domain=Domain.literary) for p in PAIRS[5:7]])
    m1 = merge_corpora([ui, med], _info(id="merged"))
    # PAIRS[2] appears in both: the ui copy wins
    assert [(e.id, e.source, e.domain) for e in m1.entries] == [
        (1, PAIRS[0].source, Domain.ui), (2, PAIRS[1].source, Domain.ui), (3, PAIRS[2].source, Domain.ui),
        (4, PAIRS[3].source, Domain.medical), (5, PAIRS[4].source, Domain.medical)]
    m2 = merge_corpora([ui, med, lit], _info(id="merged"))
    assert [(e.id, e.source) for e in m2.entries[:5]] == [(e.id, e.source) for e in m1.entries]  # appending keeps ids
    assert merge_corpora([ui, med], _info(id="merged")) == m1  # same inputs → same ids
    fr = build_corpus(_info(id="fr", target_language="fr", language_pair="EN→FR"),
                      [to_entry(PAIRS[0], source_lang="en", domain=Domain.ui)])
    with pytest.raises(InputError, match="one language pair"):
        merge_corpora([ui, fr], _info(id="merged"))


def test_summarize():
    entries = [to_entry(p, source_lang="en", domain=Domain.tech) for p in PAIRS[:2]]
    entries.append(to_entry(PAIRS[2], source_lang="en", domain=None, segment=Segment.diagnostic))
    s = summarize(build_corpus(_info(), entries))
    assert s["segment"] == {"development": 2, "diagnostic": 1}
    assert s["domain"] == {"-": 1, "tech": 2}
    assert s["difficulty"] == {"2": 3}  # 'Source sentence number N': 4 words → 2
