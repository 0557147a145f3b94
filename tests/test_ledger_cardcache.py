"""Issue 35 item 3 (add one card): a card's header and summary kept between builds (:mod:`mtboard.ledger.cardcache`).

* a stored card comes back as a pending card — the header only, its summary equal to the card's — and becomes the
  parsed card itself (class, fields, fields set) on the first read of its results or any whole-object operation;
* every method of a pydantic model that reads the whole object is one that completes the card first (the list is
  checked against pydantic's own, so an upgrade that adds one fails here);
* a card file that changed or went away before its results were read raises InputError naming it;
* an entry that is corrupt, foreign, re-signed with values that do not hold together, too large or a link is a miss
  (docs/SECURITY.md §6).

The card is the committed Apertium EN→CA card; its values (entry 1's sentence chrF++, entry 81 returned untranslated)
are those tests/test_ledger_load.py checks against the card file.
"""

from __future__ import annotations

import copy
from collections import Counter
import dataclasses
import hashlib
import json
import os
import pickle
import re
import shutil
import warnings
from array import array
from pathlib import Path

import pytest
from pydantic import BaseModel

from mtboard.core import documents
from mtboard.core.compact import Sharing
from mtboard.core.errors import InputError
from mtboard.core.schema import RunCard
from mtboard.ledger import cardcache as C
from mtboard.ledger.summary import CardSummary, summarise

ROOT = Path(__file__).resolve().parents[1]
CARD = ROOT / "submissions" / "mtb-en-ca-dev" / "apertium-eng-cat__default__8ca0b3e02be0.json"


@pytest.fixture
def stored(tmp_path):
    """(cache, card file in tmp_path, its SHA-256, the parsed card) with the card's entry stored."""
    path = tmp_path / "card.json"
    shutil.copyfile(CARD, path)
    raw = path.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    full = documents.load_card(path)
    cache = C.CardCache.make(tmp_path / "cache", _corpora(full))
    cache.put(raw, sha, summarise(full), full.dataset.sha256)
    return cache, path, sha, full


def _corpora(card: RunCard) -> dict[str, dict[int, tuple[str, str]]]:
    """The card's corpus as :attr:`mtboard.ledger.cardcache.CardCache.corpora` holds it (the committed file)."""
    (path,) = [p for p in sorted((ROOT / "corpora").glob("*.json"))
               if hashlib.sha256(p.read_bytes()).hexdigest() == card.dataset.sha256]
    corpus, _ = documents.load_corpus(path)
    return {card.dataset.sha256: {e.id: (e.source, e.reference) for e in corpus.entries}}


def _entry(cache: C.CardCache, sha: str) -> Path:
    (found,) = list((cache.folder / C.FOLDER).rglob(f"*{C.SUFFIX}"))
    assert found.name == f"{cache.key(sha)}{C.SUFFIX}"
    return found


def _same_summary(a: CardSummary, b: CardSummary) -> None:
    for f in dataclasses.fields(CardSummary):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert type(x) is type(y), f.name
        if f.name == "tallies":
            for g in dataclasses.fields(x):
                assert list(getattr(x, g.name).items()) == list(getattr(y, g.name).items()), g.name
        elif f.name == "modes":
            assert list(x[0].items()) == list(y[0].items()) and x[1] == y[1]
        else:
            assert x == y, f.name


def test_a_stored_card_comes_back_pending_with_its_summary_and_becomes_the_card(stored):
    cache, path, sha, full = stored
    pending, summary = cache.get(path, sha, Sharing())
    assert cache.used == {cache.key(sha)}
    assert type(pending) is C.PendingCard and "results" not in pending.__dict__
    for name in RunCard.model_fields:
        if name != "results":
            assert getattr(pending, name) == getattr(full, name), name
    assert pending.model_fields_set == full.model_fields_set
    assert "results" not in pending.__dict__  # reading the header parsed nothing
    _same_summary(summary, summarise(full))
    # hand-checked values of the committed card (tests/test_ledger_load.py reads them from the file)
    assert len(summary.ids) == 355 and summary.ids[0] == 1 and summary.chrf[0] == pytest.approx(36.941458841745764)
    assert summary.outcomes[summary.ids.index(81)] == "source_untranslated" and summary.chrf[summary.ids.index(81)] == 0
    assert type(summary.chrf) is array and summary.chrf.typecode == "d"
    # the texts the corpus holds are left out of the entry and read back as the corpus's own objects
    body = json.loads(_entry(cache, sha).read_bytes())["summary"]
    assert body["sources"] == body["references"] == [None] * 355 and None not in body["outputs"]
    corpus = cache.corpora[full.dataset.sha256]
    assert all(s is corpus[i][0] and r is corpus[i][1] for i, s, r in zip(summary.ids, summary.sources,
                                                                        summary.references))
    # the first read of the results: the object becomes the parsed card
    assert len(pending.results) == 355
    assert type(pending) is RunCard and pending == full and pending.model_dump() == full.model_dump()
    assert pending.model_dump_json() == full.model_dump_json() and documents.card_bytes(pending) == path.read_bytes()


WHOLE_CALLS = {
    "__copy__": lambda c, full: copy.copy(c) == full,
    "__deepcopy__": lambda c, full: copy.deepcopy(c) == full,
    "__eq__": lambda c, full: c == full,
    "__ne__": lambda c, full: not (c != full),
    "__getstate__": lambda c, full: c.__getstate__()["__dict__"] == full.__getstate__()["__dict__"],
    "__iter__": lambda c, full: dict(c) == dict(full),
    "__pretty__": lambda c, full: list(c.__pretty__(repr)) == list(full.__pretty__(repr)),
    "__reduce__": lambda c, full: c.__reduce__()[0] is full.__reduce__()[0],
    "__reduce_ex__": lambda c, full: pickle.loads(pickle.dumps(c)) == full,
    "__replace__": lambda c, full: c.__replace__(notes="x") == full.model_copy(update={"notes": "x"}),
    "__repr__": lambda c, full: repr(c) == repr(full),
    "__repr_args__": lambda c, full: list(c.__repr_args__()) == list(full.__repr_args__()),
    "__rich_repr__": lambda c, full: list(c.__rich_repr__()) == list(full.__rich_repr__()),
    "__str__": lambda c, full: str(c) == str(full),
    "__sizeof__": lambda c, full: c.__sizeof__() == full.__sizeof__(),
    "__setattr__": lambda c, full: (setattr(c, "notes", "x") or c.notes == "x") and c.results == full.results,
    "__delattr__": lambda c, full: pytest.raises(AttributeError, delattr, c, "nothing") is not None,
    "_calculate_keys": lambda c, full: c._calculate_keys(None, None, False) == full._calculate_keys(None, None, False),
    "_copy_and_set_values": lambda c, full: c._copy_and_set_values(dict(full.__dict__), set(full.model_fields_set),
                                                                   deep=False) == full,
    "_iter": lambda c, full: dict(c._iter()) == dict(full._iter()),
    "copy": lambda c, full: c.copy() == full,
    "dict": lambda c, full: c.dict() == full.dict(),
    "json": lambda c, full: c.json() == full.json(),
    "model_copy": lambda c, full: c.model_copy() == full,
    "model_dump": lambda c, full: c.model_dump(mode="json") == full.model_dump(mode="json"),
    "model_dump_json": lambda c, full: c.model_dump_json() == full.model_dump_json(),
}


@pytest.mark.parametrize("name", C.WHOLE)
def test_every_whole_object_operation_completes_the_card_first(stored, name):
    cache, path, sha, full = stored
    pending, _ = cache.get(path, sha, Sharing())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # copy, dict, json: pydantic's deprecated names
        assert WHOLE_CALLS[name](pending, full)
    assert type(pending) is RunCard and "results" in pending.__dict__


def test_the_whole_object_operations_are_every_pydantic_method_that_reads_the_object():
    """Every other attribute of a pydantic model reads no field of an instance (class-level, schema or
    configuration, the single-field access, the fields set), as read in pydantic's source for the version pinned;
    an attribute pydantic adds changes this set and must be sorted into one list or the other."""
    assert set(WHOLE_CALLS) == set(C.WHOLE)
    other = set(dir(BaseModel)) - set(C.WHOLE)
    assert other == {
        "__abstractmethods__", "__annotations__", "__class__", "__class_getitem__", "__dict__", "__dir__", "__doc__",
        "__fields_set__", "__format__", "__ge__", "__get_pydantic_core_schema__", "__get_pydantic_json_schema__",
        "__getattr__", "__getattribute__", "__gt__", "__hash__", "__init__", "__init_subclass__", "__le__", "__lt__",
        "__module__", "__new__", "__pydantic_complete__", "__pydantic_core_schema__", "__pydantic_decorators__",
        "__pydantic_extra__", "__pydantic_fields_set__", "__pydantic_init_subclass__", "__pydantic_on_complete__",
        "__pydantic_parent_namespace__", "__pydantic_private__", "__pydantic_root_model__", "__pydantic_serializer__",
        "__pydantic_validator__", "__repr_name__", "__repr_recursion__", "__repr_str__", "__setstate__", "__slots__",
        "__subclasshook__", "_abc_impl", "_get_value", "_setattr_handler", "construct", "from_orm",
        "model_computed_fields", "model_config", "model_construct", "model_extra", "model_fields", "model_fields_set",
        "model_json_schema", "model_parametrized_name", "model_post_init", "model_rebuild", "model_validate",
        "model_validate_json", "model_validate_strings", "parse_file", "parse_obj", "parse_raw", "schema",
        "schema_json", "update_forward_refs", "validate"}


def test_a_card_that_changed_or_went_away_before_its_results_were_read_raises(stored):
    cache, path, sha, full = stored
    pending, _ = cache.get(path, sha, Sharing())
    path.write_bytes(path.read_bytes().replace(b'"notes":null', b'"notes":"changed"', 1))
    with pytest.raises(InputError, match="card changed while the site was built") as err:
        pending.results  # noqa: B018
    assert str(path) in err.value.one_line()
    path.unlink()
    with pytest.raises(InputError, match="card unreadable while the site was built"):
        pending.model_dump()
    path.mkdir()  # not a regular file
    with pytest.raises(InputError, match="card unreadable while the site was built"):
        pending.results  # noqa: B018
    assert type(pending) is C.PendingCard  # still pending: nothing half done
    path.rmdir()
    shutil.copyfile(CARD, path)  # the bytes it was loaded by, back: it completes
    assert pending.results == full.results and type(pending) is RunCard


def _poison(cache: C.CardCache, sha: str, change) -> None:
    entry = _entry(cache, sha)
    body = json.loads(entry.read_bytes())
    change(body)
    entry.write_text(json.dumps(body), encoding="ascii")  # a lone surrogate as its JSON escape


def _summary_set(name, value):
    return lambda b: b["summary"].__setitem__(name, value)


def _column_set(name, k, value):
    return lambda b: b["summary"][name].__setitem__(k, value)


def _header(change):
    def edit(b):
        h = json.loads(b["header"])
        change(h)
        b["header"] = json.dumps(h)
    return edit


UNTRANSLATED = 80  # the index of entry 81 (source returned untranslated)

POISONS = {
    "format": lambda b: b.__setitem__("format", "mtboard-card-summary/0"),
    "key": lambda b: b.__setitem__("key", "0" * 64),
    "extra field": lambda b: b.__setitem__("more", 1),
    "header as an object": lambda b: b.__setitem__("header", json.loads(b["header"])),
    "header with results": _header(lambda h: h.__setitem__("results", [None])),
    "header the schema refuses": _header(lambda h: h.__setitem__("run_id", "not a uuid")),
    "header with Infinity": lambda b: b.__setitem__("header", re.sub(r'"elapsed_seconds":[0-9.]+',
                                                                     '"elapsed_seconds":Infinity', b["header"])),
    "header with a key twice": lambda b: b.__setitem__("header", b["header"].replace('{', '{"condition":"forged",', 1)),
    "chrF++ of -0.0": _column_set("chrf", 80, -0.0),
    "summary field missing": lambda b: b["summary"].pop("outputs"),
    "summary field added": _summary_set("more", []),
    "negative id": _column_set("ids", 0, -1),
    "boolean id": _column_set("ids", 0, True),
    "id over 64 bits": _column_set("ids", 0, 2 ** 64),
    "column too short": lambda b: b["summary"]["outputs"].pop(),
    "unknown domain": _column_set("domains", 0, "astrology"),
    "unknown segment": _column_set("segments", 0, "secret"),
    "unknown outcome": _column_set("outcomes", 0, "great"),
    "chrF++ above 100": _column_set("chrf", 0, 100.5),
    "chrF++ NaN": _column_set("chrf", 0, float("nan")),
    "chrF++ as text": _column_set("chrf", 0, "36.9"),
    "an untranslated entry not failed": _column_set("failed", UNTRANSLATED, False),
    "a failed entry with a score": _column_set("chrf", UNTRANSLATED, 50.0),
    "a non-usable output hashed": _column_set("hashes", UNTRANSLATED, 12345),
    "hash below -1": _column_set("hashes", 0, -2),
    "text as a number": _column_set("outputs", 0, 7),
    "fails everything, wrongly": _summary_set("fails_everything", True),
    "negative model calls": _summary_set("model_calls", -1),
    "latency as a number": _summary_set("has_latency", 1),
    "development count": lambda b: b["summary"]["modes"].__setitem__(1, 354),
    "outcome tally": lambda b: b["summary"]["tallies"][0].__setitem__(0, ["outcome: usable", 1]),
    "zero count": lambda b: b["summary"]["tallies"][4].append(["made-up", 0]),
    "a count named twice": lambda b: b["summary"]["tallies"][1].extend([["x", 1], ["x", 2]]),
    "mode count": lambda b: b["summary"]["modes"][0].append(["no_usable_output", 3]),
    "development count as a boolean": lambda b: b["summary"]["modes"].__setitem__(1, True),
    "development count as a float": lambda b: b["summary"]["modes"].__setitem__(1, 355.0),
    "a count as a float": lambda b: b["summary"]["tallies"][0][0].__setitem__(1, 1.0),
    "a lone surrogate in an output": _column_set("outputs", 0, "a\ud800"),
    "a lone surrogate in a source": _column_set("sources", 0, "\udfff"),
    "a lone surrogate in a count's name": lambda b: b["summary"]["tallies"][4].append(["\ud800", 1]),
}


@pytest.mark.parametrize("name", sorted(POISONS))
def test_an_entry_that_does_not_hold_together_is_a_miss(stored, name):
    cache, path, sha, _ = stored
    assert cache.get(path, sha, Sharing()) is not None  # the entry as stored reads back
    _poison(cache, sha, POISONS[name])
    assert cache.get(path, sha, Sharing()) is None


def test_an_entry_rewritten_unchanged_still_reads_back(stored):
    """The control of the poisons above: rewriting the entry's JSON (as they do) without a change is still a hit."""
    cache, path, sha, full = stored
    _poison(cache, sha, lambda b: None)
    pending, summary = cache.get(path, sha, Sharing())
    _same_summary(summary, summarise(full))
    assert pending == full


def test_a_text_the_corpus_does_not_hold_is_kept_and_a_left_out_one_needs_the_corpus(stored):
    cache, path, sha, full = stored
    _poison(cache, sha, _column_set("sources", 0, "A source of its own"))  # kept as written: read back as is
    _, summary = cache.get(path, sha, Sharing())
    assert summary.sources[0] == "A source of its own" and summary.sources[1] == full.results[1].source
    assert C.CardCache(cache.folder, cache.salt).get(path, sha, Sharing()) is None  # no corpus: the texts are not known


def test_a_whole_object_operation_whose_arguments_complete_the_card_still_works(stored):
    """``card.model_copy(update={"results": card.results[:12]})``: the bound method is looked up on the pending card,
    then its argument completes it (tests/test_diagnostic_board.py does this with a loaded card)."""
    cache, path, sha, full = stored
    pending, _ = cache.get(path, sha, Sharing())
    part = pending.model_copy(update={"results": pending.results[:12]})
    assert type(part) is RunCard and part.results == full.results[:12] and type(pending) is RunCard
    other, _ = cache.get(path, sha, Sharing())
    assert other.__eq__(other.results and full) and other.__ne__(other.model_copy()) is False


def test_two_pending_cards_of_one_file_are_equal(stored):
    cache, path, sha, full = stored
    a, _ = cache.get(path, sha, Sharing())
    b, _ = cache.get(path, sha, Sharing())
    assert a == b and not (a != b) and type(a) is type(b) is RunCard


@pytest.mark.parametrize("forge", ["summary", "header"])
def test_an_entry_consistent_in_itself_but_not_with_its_card_fails_the_build_when_the_card_is_read(stored, forge):
    """A forged entry within every range (a usable entry's chrF++ changed; the header's notes changed) is read as
    the card's; the build has used its values by the time the card's results are read, so that read refuses it,
    naming the entry and the fix, and the card stays pending."""
    cache, path, sha, _ = stored
    if forge == "summary":
        _poison(cache, sha, _column_set("chrf", 0, 50.0))
    else:
        _poison(cache, sha, _header(lambda h: h.__setitem__("notes", "not this card's")))
    pending, _ = cache.get(path, sha, Sharing())
    with pytest.raises(InputError, match="does not match the card") as err:
        pending.results  # noqa: B018
    assert str(_entry(cache, sha)) in err.value.one_line() and "delete the build cache" in err.value.one_line()
    assert type(pending) is C.PendingCard and "results" not in pending.__dict__


def test_a_linked_or_oversized_entry_is_a_miss(stored, tmp_path, monkeypatch):
    cache, path, sha, _ = stored
    entry = _entry(cache, sha)
    moved = tmp_path / "elsewhere.json"
    os.replace(entry, moved)
    os.symlink(moved, entry)
    assert cache.get(path, sha, Sharing()) is None
    os.replace(moved, entry)
    assert cache.get(path, sha, Sharing()) is not None
    monkeypatch.setattr(C, "MAX_ENTRY_BYTES", entry.stat().st_size - 1)
    assert cache.get(path, sha, Sharing()) is None


def test_the_key_follows_the_bytes_and_the_code(stored, tmp_path):
    cache, path, sha, _ = stored
    assert cache.get(path, "f" * 64, Sharing()) is None  # other bytes: another key
    other = C.CardCache(cache.folder, "another salt")  # other code, Python or distributions
    assert other.key(sha) != cache.key(sha) and other.get(path, sha, Sharing()) is None
    assert C.CardCache.make(None).get(path, sha, Sharing()) is None


# ---------------------------------------------------------------------------------------------------------------------
# A validated site build: the same site with pending cards, and the untouched boards' cards never parsed

SITE_DATASETS = ("mtb-en-de-dev", "mtb-ca-en-dev", "mtb-en-ca-dev")
HELD = "mtb-en-de-dev/baseline-echo__baseline__f26977cf62b2.json"


def _docs(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # four validated builds of ten committed cards: ~30 CPU-s
def test_a_warm_build_parses_only_the_changed_boards_cards_and_is_a_full_builds(tmp_path, monkeypatch):
    from mtboard.site import build_site

    for ds in SITE_DATASETS:
        shutil.copytree(ROOT / "submissions" / ds, tmp_path / "submissions" / ds)
    aside = tmp_path / "held.json"
    shutil.move(tmp_path / "submissions" / HELD, aside)
    completed: list[str] = []
    complete = C.PendingCard._complete

    def counted(card):
        completed.append(card.dataset.id)
        complete(card)

    monkeypatch.setattr(C.PendingCard, "_complete", counted)

    def build(name: str, cache: Path | None):
        return build_site(tmp_path / "submissions", ROOT / "corpora", tmp_path / name / "site", tmp_path / name / "docs",
                          validate=True, resamples=100, run_mkdocs=False, build_time="2026-12-01 00:00 UTC",
                          cache=cache, prune_cache=True)

    cache = tmp_path / "cache"
    first = build("first", cache)
    # ten card files read (nine on the three boards, one on a diagnostic board of its own), each parsed and stored
    assert (first.card_hits, first.card_misses, first.cache_misses) == (0, 10, 10) and completed == []
    assert len(list((cache / C.FOLDER).rglob("*.json"))) == 10
    shutil.move(aside, tmp_path / "submissions" / HELD)
    second = build("second", cache)  # one EN→DE card added: its board is computed and rendered again
    assert (second.card_hits, second.card_misses, second.cache_hits, second.cache_misses) == (10, 1, 10, 1)
    assert (second.board_stats_hits, second.board_stats_misses, second.board_hits, second.board_misses) == (2, 1, 2, 1)
    # parsed: the two EN→DE cards (their board is computed again); of the boards the added card does not touch, only
    # the EN→CA card a re-score's verification record checks (its error rate) and the CA→EN card on the diagnostic
    # board (its row's scores are made from the diagnostic entries every build)
    assert Counter(completed) == {"mtb-en-de-dev": 2, "mtb-en-ca-dev": 1, "mtb-ca-en-dev": 1}
    full = build("full", None)
    assert _docs(tmp_path / "second" / "docs") == _docs(tmp_path / "full" / "docs")
    completed.clear()
    third = build("third", cache)  # nothing changed: nothing parsed but the two cards read every build (above)
    assert (third.card_hits, third.card_misses) == (11, 0)
    assert Counter(completed) == {"mtb-en-ca-dev": 1, "mtb-ca-en-dev": 1}
    assert _docs(tmp_path / "third" / "docs") == _docs(tmp_path / "full" / "docs")
    assert len(list((cache / C.FOLDER).rglob("*.json"))) == 11 and full.card_hits == 0
