"""Issue 37 items 4 and 2 in the ledger: tries are visible (:mod:`mtboard.ledger.tries`) and each row's model facts
for the board's filters (:mod:`mtboard.ledger.facts`).

The committed cards throughout, except :func:`test_tries_text_hand_made`, whose Tries values are typed by hand.
Hand-checked: on the EN→ES development board Gemma 3 270M has 1 full-coverage fingerprint (few-shot,
``gemma-3-270m-q4-k-m.gguf__few-shot__e8d0f7148c86.json``, rank 2; the zero-shot full run was withdrawn by issue 38's
floor rule, tests/fixtures/withdrawn/README.md) and 6 subset fingerprints (coached few-shot; few-shot completion at
t 0 and at t 0.7 — the latter two cards, 3ddc0a3a1255 and f7c45f8c2b1d, one fingerprint; FST-gated few-shot;
zero-shot completion at t 0 and t 0.7, each ``--limit 20``): 7 Gemma cards in 8 files, 7 fingerprints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mtboard.core.schema.ledger import Ledger
from mtboard.ledger import facts as F
from mtboard.ledger.build import build_ledger
from mtboard.ledger.document import dumps, to_document
from mtboard.ledger.load import load_inputs
from mtboard.ledger.tries import Tries

ROOT = Path(__file__).resolve().parents[1]
ES = "mtb-en-es-dev-v1.0.0"
FEW_SHOT = "mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot__e8d0f7148c86.json"


@pytest.fixture(scope="module")
def ledger(build_cache):
    inputs = load_inputs(ROOT / "submissions", ROOT / "corpora", validate=False, cache=build_cache)
    return build_ledger(inputs, resamples=200, cache=build_cache)


def _board(ledger, key=ES):
    return next(lb for lb in ledger.boards if lb.key == key)


def _fp(ledger, path):
    return ledger.card(path).card.fingerprint.hash


def test_gemma_on_en_es_is_best_of_7_with_6_subsets(ledger):
    """Seven Gemma fingerprints on EN→ES: one full-coverage try (few-shot) and six --limit subsets (the zero-shot
    full run was withdrawn by issue 38's floor rule: tests/fixtures/withdrawn/README.md)."""
    lb = _board(ledger)
    gemma = {fp: t for fp, t in lb.tries.items() if t.model == "gemma-3-270m"}
    assert len(gemma) == 7
    best = gemma[_fp(ledger, FEW_SHOT)]
    assert (best.count, best.subsets, best.is_best) == (1, 6, True)
    assert best.text == "best of 7 (6 subsets)"  # 1 full-coverage try + 6 subset tries
    assert len(best.others) == 6 and set(best.others) == set(gemma) - {best.fingerprint}
    other = gemma[best.others[0]]
    assert other.best == best.fingerprint and not other.is_best
    assert other.text == ("1 of 7 tries (6 subsets); best: gguf:gemma-3-270m-q4_k_m.gguf · prompt "
                          "few-shot-completion · few-shot")
    # every Gemma row names the same best row; subsets are never the best
    assert {t.best for t in gemma.values()} == {best.fingerprint}
    # Apertium: one full run and one --limit 20 subset
    ap = [t for t in lb.tries.values() if t.model == "apertium-eng-spa"]
    assert sorted(t.text.split(";")[0] for t in ap) == ["1 of 2 tries (1 subset)", "best of 2 (1 subset)"]


def test_baselines_are_not_counted(ledger):
    lb = _board(ledger)
    refs = {s.fingerprint for s in lb.rows if s.reference}
    assert len(refs) == 3  # echo (full and subset) and empty
    assert not refs & set(lb.tries)
    assert all(t.model not in ("baseline/echo", "baseline/empty") for t in lb.tries.values())


def test_ledger_document_publishes_tries(ledger):
    doc = to_document(ledger, "2026-12-01T00:00:00Z")
    assert Ledger.model_validate_json(dumps(doc)) == doc  # the published JSON round-trips through the schema
    board = next(b for b in doc.boards if b.key == ES)
    row = next(r for r in board.rows if r.fingerprint == _fp(ledger, FEW_SHOT))
    assert row.tries is not None
    assert (row.tries.model, row.tries.count, row.tries.subsets, row.tries.best) == ("gemma-3-270m", 1, 6,
                                                                                    row.fingerprint)
    assert row.tries.text == "best of 7 (6 subsets)"
    assert all(r.tries is None for r in board.rows if r.reference)
    # mtboard.ledger/2 (issue 35, "bytes"): no row lists its model's other fingerprints: they are the board's rows
    # with the same tries.model, full coverage and subsets apart (the order within a group follows the rows' first
    # card path in Tries, the ledger's own row order here: the sets are compared)
    assert doc.schema_ == "mtboard.ledger/2" and '"others"' not in dumps(doc)
    for b in doc.boards:
        lb = _board(ledger, b.key)
        for r in b.rows:
            if r.tries is None:
                continue
            same = [o for o in b.rows if o.tries is not None and o.tries.model == r.tries.model
                    and o.fingerprint != r.fingerprint]
            t = lb.tries[r.fingerprint]
            full = {o.fingerprint for o in same if not o.coverage.subset}
            subsets = {o.fingerprint for o in same if o.coverage.subset}
            n_full = t.count - (0 if r.coverage.subset else 1)  # the row's own full-coverage try is not an other
            assert (full, subsets) == (set(t.others[:n_full]), set(t.others[n_full:])), (b.key, r.method)
            assert len(t.others) == len(same) == t.tried - 1
    assert sum(len(t.others) for lb in ledger.boards for t in lb.tries.values()) > 40  # hand-checked: not vacuous


def test_a_version_1_ledger_with_others_still_loads(ledger):
    """Ledgers published before version 2 (the last build's ``data/ledger.json``, history snapshots) list
    ``others`` on each row and still load; written again they keep them."""
    import json

    doc = to_document(ledger, "2026-12-01T00:00:00Z")
    data = json.loads(dumps(doc))
    data["schema"] = "mtboard.ledger/1"
    board = next(b for b in data["boards"] if b["key"] == ES)
    row = next(r for r in board["rows"] if r["fingerprint"] == _fp(ledger, FEW_SHOT))
    row["tries"]["others"] = list(_board(ledger).tries[row["fingerprint"]].others)
    old = Ledger.model_validate_json(json.dumps(data))
    assert old.schema_ == "mtboard.ledger/1"
    again = json.loads(dumps(old))
    assert again["schema"] == "mtboard.ledger/1" and len(next(
        r for b in again["boards"] if b["key"] == ES for r in b["rows"]
        if r["fingerprint"] == row["fingerprint"])["tries"]["others"]) == 6
    data["schema"] = "mtboard.ledger/3"
    with pytest.raises(ValueError):
        Ledger.model_validate_json(json.dumps(data))


def test_tries_text_hand_made():
    fp = "a" * 64
    once = Tries("m", fp, 1, 0, fp, "x", "runs/x.md", ())
    assert once.text == "" and once.lead == ""
    only_subsets = Tries("m", fp, 0, 3, None, None, None, ("b" * 64, "c" * 64))
    assert only_subsets.text == "1 of 3 subset tries"
    one_sub = Tries("m", fp, 5, 1, fp, "x", "runs/x.md", ("b" * 64,) * 5)
    assert one_sub.text == "best of 6 (1 subset)"


@pytest.mark.parametrize(("count", "bucket"), [(None, "unknown"), (1, "lt1b"), (999_999_999, "lt1b"),
                                               (10**9, "1-10b"), (9_999_999_999, "1-10b"), (10**10, "10-100b"),
                                               (10**11, "ge100b"), (10**14, "ge100b")])
def test_size_bucket_edges(count, bucket):
    assert F.size_bucket(count) == bucket


def test_row_facts_from_the_record(ledger):
    lb = _board(ledger)
    gemma = lb.facts[_fp(ledger, FEW_SHOT)]
    assert (gemma.record, gemma.weights, gemma.size, gemma.licence, gemma.organisation, gemma.quantization,
            gemma.method_class) == ("gemma-3-270m", "open", "lt1b", "gemma", "Google", "Q4_K_M", "raw-llm")
    assert gemma.label("size") == "< 1 B"
    ap = lb.facts[_fp(ledger, "mtb-en-es-dev/apertium-eng-spa__default__d0f5919b5569.json")]
    assert (ap.weights, ap.size, ap.licence, ap.organisation, ap.method_class) == (
        "open", "unknown", "GPL-2.0-only", "Apertium project", "pipeline")
    echo = lb.facts[_fp(ledger, "mtb-en-es-dev/baseline-echo__baseline__32e6f8fa41bf.json")]
    assert echo.record is None and echo.record_text == "no model record"
    assert {echo.value(n) for n, _ in F.FILTERS if n != "method_class"} == {"unknown"}


def test_each_try_says_what_tells_it_apart(ledger):
    """Two tries of one model can share a method name (the same prompt and condition at two temperatures, or a full
    run and a --limit run): the list gives each its temperature, coverage and composite (hand-checked against the
    committed cards: zero-shot completion at t 0.7 is a --limit 20 run with composite 0.294; Apertium's subset is
    --limit 20)."""
    lb = _board(ledger)
    best = lb.tries[_fp(ledger, FEW_SHOT)]
    zsc = "mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__zero-shot-completion__c09075e69625.json"
    assert best.note(_fp(ledger, zsc)) == "t 0.7 · 20 of 355 subset (--limit 20) · composite 0.294"
    assert best.note(best.fingerprint) == "t 0 · all 355 · composite 0.458"
    ap = [t for t in lb.tries.values() if t.model == "apertium-eng-spa"]
    sub = next(t for t in ap if not t.is_best)
    assert sub.note(sub.fingerprint).startswith("t — · 20 of 355 subset (--limit 20) · composite ")
    assert sub.note(sub.best) == "t — · all 355 · composite 0.570"
