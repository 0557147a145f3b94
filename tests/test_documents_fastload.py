"""Issue 35, "load": a card whose exact bytes have a cached verdict is parsed by the schema alone
(:func:`mtboard.core.documents.parse_card_unchecked`); every other card still goes through the safe parse.

Inputs: every committed card under ``submissions/`` (read, never changed); copies of the committed EN→CA echo card in
``tmp_path``, one of them given a duplicate key (which the schema's own parser accepts, last value winning, and the
safe parse refuses); a cache folder in ``tmp_path``. A counting wrapper around :func:`mtboard.core.safejson.loads`
tells the safe parse from the fast one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mtboard.core import documents, safejson
from mtboard.core.errors import InputError
from mtboard.ledger import load as L
from mtboard.verify.record import REPOSITORY_ENV

ROOT = Path(__file__).resolve().parents[1]
CARDS = sorted(p for p in (ROOT / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))
ECHO = "baseline-echo__baseline__fee2db17bc53.json"


def test_there_are_committed_cards_to_compare():
    # 8 dev boards: 33 as committed at a34f8c2 less one withdrawn by issue 38, + 6 on ES→EN, CA→EN; + 13 of the
    # dialogue-history sweep on the EN→ES dialogue corpus (issue 40 item 2); + 2 diagnostic cards (issue 40 item 6:
    # on the diagnostic boards, never on a development board)
    assert len(CARDS) == 54


@pytest.mark.parametrize("path", CARDS, ids=lambda p: p.relative_to(ROOT / "submissions").as_posix())
def test_the_fast_parse_equals_the_full_one_for_every_committed_card(path):
    raw = path.read_bytes()
    full = documents.loads_card(raw, str(path))
    fast = documents.parse_card_unchecked(raw)
    assert fast is not None and fast == full
    assert fast.model_dump(mode="json") == full.model_dump(mode="json")  # every field, nested models included
    assert documents.loads_card(raw, str(path), parsed=fast) is fast


def test_the_fast_parse_accepts_what_the_safe_parse_refuses_so_it_is_only_for_known_bytes():
    raw = (ROOT / "submissions" / "mtb-en-ca-dev" / ECHO).read_bytes()
    dup = raw.replace(b'{"', b'{"run_card_hash":"x","', 1)  # a duplicate key: the last value wins in pydantic
    card = documents.parse_card_unchecked(dup)
    assert card is not None and card.run_card_hash != "x"
    with pytest.raises(InputError, match="duplicate key"):
        documents.loads_card(dup, "dup.json", parsed=card)  # the safe parse still runs when `parsed` is given
    assert documents.parse_card_unchecked(b"{broken") is None
    assert documents.parse_card_unchecked(b'{"run_card_hash": 1}') is None


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    subs = tmp_path / "submissions" / "mtb-en-ca-dev"
    subs.mkdir(parents=True)
    shutil.copy(ROOT / "submissions" / "mtb-en-ca-dev" / ECHO, subs / ECHO)
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copy(ROOT / "corpora" / "mtb-en-ca-dev.json", corpora)
    safe: list[str] = []
    real = safejson.loads
    monkeypatch.setattr(safejson, "loads", lambda data, **kw: (safe.append(kw.get("where", "")), real(data, **kw))[1])
    return tmp_path / "submissions", corpora, tmp_path / "cache", safe


def test_a_cache_hit_skips_the_safe_parse_and_gives_the_same_card(tree):
    subs, corpora, cache, safe = tree
    first = L.load_inputs(subs, corpora, cache=cache)
    assert (first.cache_hits, first.cache_misses, len(first.cards)) == (0, 1, 1)
    assert sum(ECHO in w for w in safe) >= 1  # a miss: the card's bytes went through the safe parse
    safe.clear()
    second = L.load_inputs(subs, corpora, cache=cache)
    assert (second.cache_hits, second.cache_misses, len(second.cards)) == (1, 0, 1)
    assert not any(ECHO in w for w in safe)  # a hit: not parsed safely again
    assert second.cards[0].card == first.cards[0].card
    assert second.cards[0].page_id == first.cards[0].page_id == first.cards[0].card.run_card_hash[:16]


def test_a_card_the_safe_parse_refuses_is_rejected_with_or_without_a_cache(tree):
    subs, corpora, cache, safe = tree
    path = subs / "mtb-en-ca-dev" / ECHO
    path.write_bytes(path.read_bytes().replace(b'{"', b'{"run_card_hash":"x","', 1))
    for _ in range(2):  # the second time a cache exists: still no verdict for these bytes, still the safe parse
        inputs = L.load_inputs(subs, corpora, cache=cache)
        assert inputs.cards == [] and len(inputs.rejected) == 1
        assert "duplicate key" in inputs.rejected[0].problems[0] and str(subs) not in inputs.rejected[0].problems[0]
        assert inputs.cache_hits == 0
    assert not list(cache.glob("validation/*/*.json"))  # no verdict is ever stored for bytes that did not load
