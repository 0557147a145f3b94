"""Issue 31/32: reading the ledger's inputs (:mod:`mtboard.ledger.load`) — the record check, the lineage rule, the
record map, anchors, reviews and the card walk — on small inputs, fast enough for ``scripts/mutation.py ledger-load``.

Inputs: the committed EN→CA Apertium card and the committed record of the card it was re-scored from (read, never
changed), copies of them in ``tmp_path``, hand-made stand-ins (``SimpleNamespace``) where a function reads only a few
attributes, and fakes (monkeypatched) for the collaborators whose own tests live elsewhere (``check_record``, the
validator, the review checks, the gold-row lookup). tests/test_ledger.py runs the same code on the whole committed
board (~2 min). Every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from mtboard.core import canonical, documents
from mtboard.core.errors import InputError
from mtboard.core.schema import VerificationRecord
from mtboard.ledger import load as L
from mtboard.verify.record import REPOSITORY_ENV, UNATTESTED_LABEL, expected_signer

ROOT = Path(__file__).resolve().parents[1]
CA_DIR = ROOT / "submissions" / "mtb-en-ca-dev"
CARD = CA_DIR / "apertium-eng-cat__default__8ca0b3e02be0.json"
RECORD = CA_DIR / "apertium-eng-cat__default__4a1761e82d51.verification.json"
SELF = "self-benchmarked"


@pytest.fixture(scope="module")
def real():
    card = documents.load_card(CARD)
    record = VerificationRecord.model_validate_json(RECORD.read_bytes())
    # re-scored twice (harness 0.5.0, then 0.6.0): the ancestor that counts is the one the record verified
    assert len(card.rescored_from) == 2
    (ancestor,) = [a for a in card.rescored_from if a.run_card_hash == record.run_card_hash]
    return card, ancestor, record


# --------------------------------------------------------------------------------------------------------------------
# small helpers


def test_display_is_unattested_only_for_the_unattested_label():
    assert L.Verification("gds-verified", label=UNATTESTED_LABEL).display == "unattested"
    assert L.Verification("gds-verified", label="GDS verified").display == "gds-verified"
    assert L.Verification(SELF).display == SELF  # the default label "" is not the unattested one


def test_verification_files_are_told_apart_by_their_ending():
    assert L._is_verification("a.verification.json")
    assert not L._is_verification("a.json") and not L._is_verification("a.verification.json.bak")


def test_walk_json_skips_hidden_and_other_files_and_sorts_by_relative_path(tmp_path):
    for rel in ("b.json", "a/z.json", "a/b/c.json", "A.json", ".hidden.json", ".git/x.json", "a/.h/y.json",
                "notes.txt", "a/x.JSON", "a-b.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}", encoding="utf-8")
    # by relative POSIX path as a string: "A.json" < "a-b.json" < "a/b/c.json" < "a/z.json" < "b.json" (uppercase
    # first; "-" U+002D before "/" U+002F — sorting Path objects part by part would put "a/…" before "a-b.json")
    assert [p.relative_to(tmp_path).as_posix() for p in L._walk_json(tmp_path)] == [
        "A.json", "a-b.json", "a/b/c.json", "a/z.json", "b.json"]
    assert L._walk_json(tmp_path / "missing") == []
    assert L._walk_json(tmp_path / "b.json") == []  # a file is not a folder


def test_walk_json_does_not_follow_a_linked_folder(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "c.json").write_text("{}", encoding="utf-8")
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert L._walk_json(tmp_path / "subs") == []


def test_score_reads_a_number_the_error_rate_and_nothing_else():
    scores = SimpleNamespace(errors=3, composite=0.5, bleu=27, flag=True, text="0.5", none=None)
    card = SimpleNamespace(scores=scores, results=[None] * 12)
    assert L._score(card, "error_rate") == 0.25  # 3 errors of 12 results
    assert L._score(SimpleNamespace(scores=scores, results=[]), "error_rate") is None
    assert L._score(card, "composite") == 0.5
    assert L._score(card, "bleu") == 27.0 and isinstance(L._score(card, "bleu"), float)
    assert [L._score(card, m) for m in ("flag", "text", "none", "missing")] == [None, None, None, None]


# --------------------------------------------------------------------------------------------------------------------
# lineage_problem


def test_the_committed_lineage_counts(real):
    card, ancestor, record = real
    # the components differ only in harness_version 0.4.0 → 0.6.0 and text_normalisation 1 → 2 (the scorer's)
    differ = {k for k in card.fingerprint.components if card.fingerprint.components[k]
              != ancestor.fingerprint_components.get(k)}
    assert differ == {"harness_version", "text_normalisation"}
    assert L.lineage_problem(card, ancestor, record) is None


def test_the_ancestors_fingerprint_is_hashed_with_its_own_version(real):
    card, ancestor, record = real
    assert ancestor.fingerprint_version == 3
    h2 = canonical.fingerprint_hash(ancestor.fingerprint_components, 2)
    assert h2 != ancestor.fingerprint_hash  # the version is part of what is hashed
    v2 = ancestor.model_copy(update={"fingerprint_version": 2, "fingerprint_hash": h2})
    assert L.lineage_problem(card, v2, record.model_copy(update={"card_fingerprint": h2})) is None


def test_a_lineage_with_a_false_or_foreign_fingerprint_does_not_count(real):
    card, ancestor, record = real
    lying = ancestor.model_copy(update={"fingerprint_hash": "0" * 64})
    assert L.lineage_problem(card, lying, record) == "the ancestor's fingerprint does not hash to its components"
    other = record.model_copy(update={"card_fingerprint": "1" * 64})
    assert L.lineage_problem(card, ancestor, other) == "the record verified another fingerprint than the ancestor's"


def _with_components(card, **changes):
    comps = {**card.fingerprint.components, **changes}
    return card.model_copy(update={"fingerprint": card.fingerprint.model_copy(update={"components": comps})})


def test_another_method_is_named_component_by_component(real):
    card, ancestor, record = real
    other = _with_components(card, model_slug="x/y", condition="few-shot", harness_version="9")
    assert L.lineage_problem(other, ancestor, record) == \
        "another method than the re-scored card: condition, model_slug differ"  # the scorer's own left out, sorted
    extra = _with_components(card, zz_new="1")  # a component only this card has differs too
    assert L.lineage_problem(extra, ancestor, record) == "another method than the re-scored card: zz_new differ"
    fewer = card.model_copy(update={"fingerprint": card.fingerprint.model_copy(update={"components": {
        k: v for k, v in card.fingerprint.components.items() if k != "api_provider"}})})
    assert L.lineage_problem(fewer, ancestor, record) == "another method than the re-scored card: api_provider differ"


def _delta(record, metric, **update):
    return [d.model_copy(update=update) if d.metric == metric else d for d in record.deltas]


def test_every_rerun_score_must_still_agree_within_the_tolerance(real):
    card, ancestor, record = real
    # composite 0.584633, tolerance 0.02: the bound is 0.02 × 0.584633 = 0.01169266
    drifted = record.model_copy(update={"deltas": _delta(record, "composite", rerun=0.6)})  # off by 0.015367
    assert L.lineage_problem(card, ancestor, drifted) == \
        "composite 0.584633 no longer agrees with the re-run's 0.6 within ±0.02"
    close = record.model_copy(update={"deltas": _delta(record, "composite", rerun=0.595)})  # off by 0.010367
    assert L.lineage_problem(card, ancestor, close) is None
    # error_rate: 0 errors → stored 0, so the bound is the tolerance × the full scale 1 = 0.02
    assert L.lineage_problem(card, ancestor, record.model_copy(
        update={"deltas": _delta(record, "error_rate", rerun=0.019)})) is None
    assert L.lineage_problem(card, ancestor, record.model_copy(
        update={"deltas": _delta(record, "error_rate", rerun=0.03)})) == \
        "error_rate 0.0 no longer agrees with the re-run's 0.03 within ±0.02"


def test_reruns_without_a_value_or_of_an_uncompared_metric_are_skipped(real):
    card, ancestor, record = real
    unrun = record.model_copy(update={"deltas": _delta(record, "composite", rerun=None)})
    assert L.lineage_problem(card, ancestor, unrun) is None
    d0 = record.deltas[0]
    other = record.model_copy(update={"deltas": [d0.model_copy(update={"metric": "words", "rerun": 99.0})]})
    assert L.lineage_problem(card, ancestor, other) is None
    # a compared score the card does not have (no semantic score on this card) never agrees
    sem = record.model_copy(update={"deltas": [d0.model_copy(update={"metric": "semantic_score", "rerun": 0.5})]})
    assert L.lineage_problem(card, ancestor, sem) == \
        "semantic_score None no longer agrees with the re-run's 0.5 within ±0.02"
    # later deltas are still checked after a skipped one
    both = record.model_copy(update={"deltas": [d0.model_copy(update={"rerun": None}),
                                                d0.model_copy(update={"metric": "words"}),
                                                d0.model_copy(update={"rerun": d0.rerun * 2})]})
    assert L.lineage_problem(card, ancestor, both).startswith("chrf_plus_plus 53.48")


# --------------------------------------------------------------------------------------------------------------------
# _check


def _fake_check(monkeypatch, result):
    calls = []

    def check_record(path, signer, *, card_run_card_hash=None):
        calls.append((path, signer, card_run_card_hash))
        return result

    monkeypatch.setattr(L, "check_record", check_record)
    return calls


def test_check_without_a_parsed_record_names_every_content_problem(tmp_path, monkeypatch):
    rec = tmp_path / "d" / "x.verification.json"
    calls = _fake_check(monkeypatch, SimpleNamespace(record=None, content_problems=["bad a", "bad b"],
                                                     attestation_problems=["none"], attested=False))
    got = L._check(rec, tmp_path, "h" * 64, "SIGNER")
    assert calls == [(rec, "SIGNER", "h" * 64)]
    assert got == L.Verification(SELF, None, "d/x.verification.json", "bad a; bad b", label=SELF)


def test_check_of_a_real_unreadable_record(tmp_path):
    rec = tmp_path / "x.verification.json"
    rec.write_text("{not json", encoding="utf-8")
    got = L._check(rec, tmp_path, "h" * 64, None)
    assert (got.tier, got.record, got.source, got.label, got.attested) == (SELF, None, "x.verification.json", SELF,
                                                                            False)
    assert got.problem and "x.verification.json" in got.problem


def test_check_of_an_inconsistent_a_failed_an_unattested_and_an_attested_record(tmp_path, monkeypatch, real):
    _, _, record = real
    rec = tmp_path / "x.verification.json"
    data = record.model_dump(mode="json")
    _fake_check(monkeypatch, SimpleNamespace(record=record, content_problems=["p1", "p2"],
                                             attestation_problems=["a1"], attested=False))
    assert L._check(rec, tmp_path, "h", None) == L.Verification(SELF, data, "x.verification.json", "p1; p2",
                                                                label=SELF, attestation_problems=["a1"])
    failed = record.model_copy(update={"passed": False})
    _fake_check(monkeypatch, SimpleNamespace(record=failed, content_problems=[], attestation_problems=["a2"],
                                             attested=True))
    assert L._check(rec, tmp_path, "h", None) == L.Verification(
        SELF, failed.model_dump(mode="json"), "x.verification.json",
        "the re-run did not reproduce the scores within the tolerance", attested=True, label=SELF,
        attestation_problems=["a2"])
    _fake_check(monkeypatch, SimpleNamespace(record=record, content_problems=[], attestation_problems=["a1"],
                                             attested=False))
    assert L._check(rec, tmp_path, "h", None) == L.Verification(SELF, data, "x.verification.json", None,
                                                                label=UNATTESTED_LABEL, attestation_problems=["a1"])
    _fake_check(monkeypatch, SimpleNamespace(record=record, content_problems=[], attestation_problems=[],
                                             attested=True))
    assert L._check(rec, tmp_path, "h", None) == L.Verification("gds-verified", data, "x.verification.json",
                                                                attested=True, label="GDS verified")


def test_check_of_the_committed_record_is_an_unattested_rerun(real):
    card, ancestor, _ = real
    got = L._check(RECORD, ROOT / "submissions", ancestor.run_card_hash, None)
    assert (got.tier, got.label, got.problem, got.attested) == (SELF, UNATTESTED_LABEL, None, False)
    assert got.source == "mtb-en-ca-dev/" + RECORD.name and got.record["run_card_hash"] == ancestor.run_card_hash
    # the record's fields as JSON values (plain strings, not the schema's enums): what the pages print
    assert type(got.record["tier"]) is str and type(got.record["segment"]) is str
    assert json.loads(json.dumps(got.record)) == got.record
    # checked for another card's seal, the same record contradicts that card
    other = L._check(RECORD, ROOT / "submissions", card.run_card_hash, None)
    assert other.label == SELF and other.problem


# --------------------------------------------------------------------------------------------------------------------
# _verification (the record beside the card, then the lineage)


def _ver(label, record=None, problem=None):
    tier = "gds-verified" if label == "GDS verified" else SELF
    return L.Verification(tier, record, "src", problem, label=label)


def _lineage_setup(monkeypatch, results: dict, why: dict):
    """``_check`` answers per record file name; ``lineage_problem`` per ancestor hash."""
    checked, asked = [], []

    def check(path, root, h, signer):
        assert (root, signer) == (ROOTS[0], "SIGNER")  # the submissions folder and the signer, passed on
        checked.append((Path(path).name, h))
        v = results[Path(path).name]
        return L.Verification(v.tier, v.record, v.source, v.problem, label=v.label)

    def lineage(card, ancestor, record):
        asked.append(ancestor.run_card_hash)
        assert isinstance(record, VerificationRecord)
        return why[ancestor.run_card_hash]

    monkeypatch.setattr(L, "_check", check)
    monkeypatch.setattr(L, "lineage_problem", lineage)
    return checked, asked


ROOTS: list[Path] = []


@pytest.fixture(autouse=True)
def _root(tmp_path):
    ROOTS[:] = [tmp_path]


def _lineage_card(*hashes):
    return SimpleNamespace(run_card_hash="mine", rescored_from=[SimpleNamespace(run_card_hash=h) for h in hashes])


def test_a_passed_record_beside_the_card_wins(tmp_path, monkeypatch, real):
    card_path = tmp_path / "c.json"
    (tmp_path / "c.verification.json").write_text("{}", encoding="utf-8")
    checked, asked = _lineage_setup(monkeypatch, {"c.verification.json": _ver(UNATTESTED_LABEL)}, {})
    got = L._verification(card_path, tmp_path, _lineage_card("A"), "SIGNER", {"A": [tmp_path / "a.v.json"]})
    assert (got.label, checked, asked) == (UNATTESTED_LABEL, [("c.verification.json", "mine")], [])


def test_without_a_record_the_card_is_self_benchmarked(tmp_path, monkeypatch):
    checked, _ = _lineage_setup(monkeypatch, {}, {})
    assert L._verification(tmp_path / "c.json", tmp_path, _lineage_card(), "SIGNER", None) == L.Verification(SELF,
                                                                                                        label=SELF)
    assert L._verification(tmp_path / "c.json", tmp_path, _lineage_card("A"), "SIGNER", None).label == SELF
    assert checked == []


def test_a_dangling_linked_record_is_still_checked(tmp_path, monkeypatch):
    (tmp_path / "c.verification.json").symlink_to(tmp_path / "gone.json")
    checked, _ = _lineage_setup(monkeypatch, {"c.verification.json": _ver(SELF, problem="a link")}, {})
    got = L._verification(tmp_path / "c.json", tmp_path, _lineage_card(), "SIGNER", {})
    assert (got.problem, checked) == ("a link", [("c.verification.json", "mine")])


def test_the_newest_ancestor_whose_record_counts_is_inherited(tmp_path, monkeypatch, real):
    data = real[2].model_dump(mode="json")
    results = {"a1.json": _ver(UNATTESTED_LABEL, data), "b0.json": _ver(SELF, data), "b1.json": _ver("GDS verified"),
               "b2.json": _ver("GDS verified", data)}
    checked, asked = _lineage_setup(monkeypatch, results, {"A": None, "B": None})
    records = {"A": [tmp_path / "a1.json"], "B": [tmp_path / n for n in ("b0.json", "b1.json", "b2.json")]}
    got = L._verification(tmp_path / "c.json", tmp_path, _lineage_card("A", "B"), "SIGNER", records)
    # B is newest (last in rescored_from); b0 did not pass, b1 has no record fields: both skipped; b2 counts
    assert (got.label, got.via, got.record) == ("GDS verified", "B", data)
    assert checked == [("b0.json", "B"), ("b1.json", "B"), ("b2.json", "B")] and asked == ["B"]


def test_a_lineage_that_does_not_count_says_why_unless_the_own_record_already_did(tmp_path, monkeypatch, real):
    data = real[2].model_dump(mode="json")
    results = {"a1.json": _ver(UNATTESTED_LABEL, data), "b1.json": _ver(UNATTESTED_LABEL, data),
               "c.verification.json": _ver(SELF, data, problem="own record failed")}
    _, asked = _lineage_setup(monkeypatch, results, {"A": "reason A", "B": "reason B"})
    records = {"A": [tmp_path / "a1.json"], "B": [tmp_path / "b1.json"]}
    got = L._verification(tmp_path / "c.json", tmp_path, _lineage_card("A", "B"), "SIGNER", records)
    assert (got.label, got.via, got.problem) == (
        SELF, None, "the record of the card this one was re-scored from does not count: reason B")
    assert asked == ["B", "A"]  # both tried, newest first; the first reason is kept
    (tmp_path / "c.verification.json").write_text("{}", encoding="utf-8")
    got = L._verification(tmp_path / "c.json", tmp_path, _lineage_card("A", "B"), "SIGNER", records)
    assert (got.label, got.problem, got.record) == (SELF, "own record failed", data)
    # the second ancestor's record counts after the first one's did not
    _lineage_setup(monkeypatch, results, {"A": None, "B": "reason B"})
    got = L._verification(tmp_path / "c.json", tmp_path, _lineage_card("A", "B"), "SIGNER", records)
    assert (got.label, got.via) == (UNATTESTED_LABEL, "A")


def test_the_committed_card_inherits_its_ancestors_record(real):
    card, ancestor, _ = real
    got = L._verification(CARD, ROOT / "submissions", card, None, {ancestor.run_card_hash: [RECORD]})
    assert (got.label, got.via, got.source) == (UNATTESTED_LABEL, ancestor.run_card_hash,
                                                "mtb-en-ca-dev/" + RECORD.name)


# --------------------------------------------------------------------------------------------------------------------
# _records_by_hash, load_anchors, load_reviews, _attested_gold


def test_records_by_hash_reads_every_readable_record(tmp_path):
    files = {"a.verification.json": {"run_card_hash": "h1"}, "b.verification.json": {"run_card_hash": "h1"},
             "s/c.verification.json": {"run_card_hash": "h2"}, "d.verification.json": [1],
             "f.verification.json": {"run_card_hash": 5}, "card.json": {"run_card_hash": "h3"}}
    for rel, value in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(value), encoding="utf-8")
    (tmp_path / "e.verification.json").write_text("{broken", encoding="utf-8")
    # a record just over the 4 MiB read limit (4 × 1024 × 1024 bytes) is left out
    (tmp_path / "g.verification.json").write_text(json.dumps({"run_card_hash": "h4", "pad": "x" * (4 * 1024 * 1024)}),
                                                  encoding="utf-8")
    (tmp_path / "h.verification.json").write_text(json.dumps({"run_card_hash": "h5", "pad": "x" * 4_000_000}),
                                                  encoding="utf-8")  # 4 000 036 bytes: under the limit
    got = L._records_by_hash(tmp_path)
    assert {k: [p.relative_to(tmp_path).as_posix() for p in v] for k, v in got.items()} == {
        "h1": ["a.verification.json", "b.verification.json"], "h2": ["s/c.verification.json"],
        "h5": ["h.verification.json"]}


def test_load_anchors_reads_records_and_warns_about_the_rest(tmp_path):
    assert L.load_anchors(None) == ([], [])
    assert L.load_anchors(tmp_path / "missing") == ([], [])
    shutil.copy(ROOT / "anchors" / "en-de__20-cells__chrF_.json", tmp_path / "b.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text('{"x": 1}', encoding="utf-8")
    (tmp_path / "c.json").write_text("{broken", encoding="utf-8")
    records, warnings = L.load_anchors(tmp_path)
    assert len(records) == 1 and records[0].model_dump() == L.load_anchors(ROOT / "anchors")[0][0].model_dump()
    assert len(warnings) == 2 and all(w.startswith("anchor record skipped: ") for w in warnings)
    assert "c.json" in warnings[0] and "sub/a.json" in warnings[1]  # named by the relative path, in walk order
    assert str(tmp_path) not in warnings[0] + warnings[1]
    assert len(L.load_anchors(ROOT / "anchors")[0]) == 4 and L.load_anchors(ROOT / "anchors")[1] == []


def test_load_anchors_refuses_a_record_over_16_mib(tmp_path):
    big = json.loads((ROOT / "anchors" / "en-de__20-cells__chrF_.json").read_text(encoding="utf-8"))
    raw = json.dumps(big)
    (tmp_path / "a.json").write_text(raw + " " * (16 * 1024 * 1024 + 1 - len(raw.encode())), encoding="utf-8")
    records, warnings = L.load_anchors(tmp_path)
    # refused by the read itself (before parsing): safejson.read_bytes names the whole path and the limit
    assert records == [] and warnings == [
        (f"anchor record skipped: {tmp_path / 'a.json'}: file is 16777217 bytes, over the 16777216-byte limit "
         "(fix: split the submission or raise the limit)")]
    (tmp_path / "a.json").write_text(raw + " " * (16 * 1024 * 1024 - len(raw.encode())), encoding="utf-8")
    assert len(L.load_anchors(tmp_path)[0]) == 1  # exactly 16 MiB is allowed


def test_load_reviews_pools_accepted_reviews_and_warns_three_problems_each(tmp_path, monkeypatch):
    from mtboard.validate import reviews as R

    recs = {"r1": (SimpleNamespace(problems=["p1", "p2", "p3", "p4"], accepted=["ann"], path="reviews/r1.yaml"),
                   SimpleNamespace(card="ds/c1.json"), "CARD"),
            "r2": (SimpleNamespace(problems=[], accepted=[], path="r2"), SimpleNamespace(card="ds/c2.json"), "CARD"),
            "r3": (SimpleNamespace(problems=["q"], accepted=["bo"], path="r3"), None, "CARD"),
            "r4": (SimpleNamespace(problems=[], accepted=["bo"], path="r4"), SimpleNamespace(card="ds/c4.json"), None)}
    seen = []
    monkeypatch.setattr(R, "review_paths", lambda root: (seen.append(root), list(recs))[1])
    monkeypatch.setattr(R, "validate_review", lambda p, root: (seen.append((p, root)), recs[p])[1])
    monkeypatch.setattr(L, "summarise", lambda record, accepted, source: ("pooled", record.card, accepted, source))
    out, warnings = L.load_reviews(tmp_path)
    assert out == {"ds/c1.json": ("pooled", "ds/c1.json", ["ann"], "reviews/r1.yaml")}
    assert warnings == ["review record: p1", "review record: p2", "review record: p3", "review record: q"]
    assert seen == [tmp_path, ("r1", tmp_path), ("r2", tmp_path), ("r3", tmp_path), ("r4", tmp_path)]


def test_attested_gold_asks_the_official_folder_for_a_sealed_card(tmp_path, monkeypatch):
    from mtboard.verify import official

    calls = []
    monkeypatch.setattr(official, "has_attested_gold_row",
                        lambda h, folder, repo, dev_card=None: (calls.append((h, folder, repo, dev_card)), True)[1])
    card = SimpleNamespace(run_card_hash="abc")
    assert L._attested_gold(card, tmp_path, "o/n") is True
    assert calls == [("abc", tmp_path / "official", "o/n", card)]
    assert L._attested_gold(SimpleNamespace(run_card_hash=""), tmp_path, "o/n") is False
    assert L._attested_gold(SimpleNamespace(run_card_hash=None), tmp_path, "o/n") is False
    assert len(calls) == 1


# --------------------------------------------------------------------------------------------------------------------
# _validator and load_inputs


def test_the_validator_gets_the_repository_root_the_corpora_and_the_secret(tmp_path, monkeypatch):
    from mtboard import validate as V

    made = []
    monkeypatch.setattr(V, "make_context", lambda root, corpora, **kw: (made.append((root, corpora, kw)), "CTX")[1])
    monkeypatch.setattr(V, "validate_card", lambda path, ctx: SimpleNamespace(problems=[f"{path}:{ctx}", 7]))
    run = L._validator(tmp_path / "submissions", None)
    assert run(Path("x.json"), None) == ["x.json:CTX", "7"]
    L._validator(tmp_path / "submissions", tmp_path / "c", tmp_path / "s.json", "the secret")
    assert made == [(tmp_path, tmp_path / "corpora", {"secret_segment": None, "secret_source": None}),
                    (tmp_path, tmp_path / "c", {"secret_segment": tmp_path / "s.json", "secret_source": "the secret"})]


def _tree(tmp_path):
    subs = tmp_path / "submissions"
    shutil.copytree(CA_DIR, subs / "ca")
    shutil.copy(CARD, subs / "ca" / "az-dup.json")  # the same seal again, read right after the first
    (subs / "broken.json").write_text("{broken", encoding="utf-8")
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copy(ROOT / "corpora" / "mtb-en-ca-dev.json", corpora)
    (corpora / "bad.json").write_text("{}", encoding="utf-8")
    (corpora / "notes.txt").write_text("x", encoding="utf-8")
    return subs, corpora


def test_load_inputs_reads_cards_rejects_the_broken_and_the_duplicate(tmp_path, monkeypatch):
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    subs, corpora = _tree(tmp_path)
    unsealed = json.loads((CA_DIR / "baseline-echo__baseline__fee2db17bc53.json").read_text(encoding="utf-8"))
    unsealed["run_card_hash"] = ""  # an unsealed card: keyed by its file's SHA-256
    (subs / "zz").mkdir()
    (subs / "zz" / "unsealed.json").write_text(json.dumps(unsealed), encoding="utf-8")
    inputs = L.load_inputs(subs, corpora, validate=False)
    names = ["ca/apertium-eng-cat__default__8ca0b3e02be0.json", "ca/baseline-echo__baseline__fee2db17bc53.json",
             "ca/baseline-empty__baseline__78b26823ef42.json", "ca/gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json",
             "zz/unsealed.json"]
    assert [lc.path for lc in inputs.cards] == names  # the record beside the Apertium card is not read as a card
    assert [lc.page_id for lc in inputs.cards[:4]] == [lc.card.run_card_hash[:16] for lc in inputs.cards[:4]]
    assert inputs.cards[4].page_id == hashlib.sha256((subs / "zz" / "unsealed.json").read_bytes()).hexdigest()[:16]
    assert inputs.cards[0].card.run_card_hash == json.loads(CARD.read_bytes())["run_card_hash"]
    assert inputs.cards[0].review is None
    assert [lc.verification.label for lc in inputs.cards] == [UNATTESTED_LABEL, SELF, SELF, SELF, SELF]
    assert inputs.cards[0].verification.via == inputs.cards[0].card.rescored_from[0].run_card_hash
    assert [r.path for r in inputs.rejected] == ["broken.json", "ca/az-dup.json"]
    assert str(subs) not in inputs.rejected[0].problems[0] and "broken.json" in inputs.rejected[0].problems[0]
    assert inputs.rejected[1].problems == [
        "duplicate of ca/apertium-eng-cat__default__8ca0b3e02be0.json (same run_card_hash)"]
    assert [c.path for c in inputs.corpora] == ["mtb-en-ca-dev.json"]
    assert inputs.corpora[0].corpus.dataset.id == "mtb-en-ca-dev" and len(inputs.corpora[0].sha256) == 64
    assert len(inputs.warnings) == 1 and inputs.warnings[0].startswith("corpus skipped: ")
    assert L.load_inputs(subs, None, validate=False).corpora == []
    assert L.load_inputs(subs, tmp_path / "missing", validate=False).corpora == []


def test_load_inputs_warns_when_the_attestation_repository_is_malformed(tmp_path, monkeypatch):
    subs = tmp_path / "submissions"
    subs.mkdir()
    with pytest.raises(InputError):
        expected_signer("not-a-repo")  # the malformed repository load_inputs must survive
    inputs = L.load_inputs(subs, None, validate=False, attestation_repository="not-a-repo")
    assert len(inputs.warnings) == 1 and inputs.warnings[0].startswith("attestations not checked: ")
    assert "not-a-repo" in inputs.warnings[0]
    # no signer at all then: not even a confirmed review with a gold row makes a card community verified
    shutil.copytree(CA_DIR, subs / "ca")
    apertium = "ca/apertium-eng-cat__default__8ca0b3e02be0.json"
    monkeypatch.setattr(L, "load_reviews", lambda root: ({apertium: SimpleNamespace(confirms=True)}, []))
    monkeypatch.setattr(L, "_attested_gold", lambda card, root, repo: True)
    monkeypatch.setattr(L, "community_verified", lambda gold, review: True)
    signers = []
    real_verification = L._verification
    monkeypatch.setattr(L, "_verification",
                        lambda p, root, card, signer, records: (signers.append(signer),
                                                                real_verification(p, root, card, signer, records))[1])
    inputs = L.load_inputs(subs, None, validate=False, attestation_repository="not-a-repo")
    assert {lc.path: lc.verification.label for lc in inputs.cards}[apertium] == UNATTESTED_LABEL
    assert signers == [None] * 4


def test_load_inputs_passes_anchor_warnings_and_the_secret_on(tmp_path, monkeypatch):
    subs = tmp_path / "submissions"
    subs.mkdir()
    seen = []
    monkeypatch.setattr(L, "load_anchors", lambda d: (seen.append(d), (["ANCHOR"], ["anchor warn"]))[1])
    monkeypatch.setattr(L, "load_reviews", lambda root: (seen.append(root), ({}, ["review warn"]))[1])
    monkeypatch.setattr(L, "_validator", lambda *a: (seen.append(a), None)[1])
    inputs = L.load_inputs(subs, tmp_path / "c", anchors_dir=tmp_path / "a", secret_segment=tmp_path / "s",
                           secret_source="S")
    assert (inputs.anchors, inputs.warnings) == (["ANCHOR"], ["anchor warn", "review warn"])
    assert seen == [tmp_path / "a", (subs, tmp_path / "c", tmp_path / "s", "S", None), tmp_path]  # None: no cache


def test_load_inputs_rejects_what_the_validator_or_the_copy_check_finds(tmp_path, monkeypatch):
    from mtboard.validate import copies

    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    subs, corpora = _tree(tmp_path)
    (subs / "ca" / "az-dup.json").unlink()

    def validator(path, card, raw, key=None):
        assert card.run_card_hash and path.name.endswith(f"{card.run_card_hash[:12]}.json")  # the card of that file
        if path.name.startswith("baseline-empty"):
            return [f"{path}: empty", "second"]
        if path.name.startswith("gemma"):
            raise InputError(f"{path}: unreadable")
        return []

    monkeypatch.setattr(L, "_validator", lambda *a: validator)
    got = []

    def find(outputs, targets):
        outputs = list(outputs)
        got.append(([o.where for o in outputs], targets))
        return [SimpleNamespace(where="ca/baseline-echo__baseline__fee2db17bc53.json", message="same as X")]

    monkeypatch.setattr(copies, "find_copies", find)
    inputs = L.load_inputs(subs, corpora)
    ok = ["ca/apertium-eng-cat__default__8ca0b3e02be0.json", "ca/baseline-echo__baseline__fee2db17bc53.json"]
    assert got == [(ok, set(ok))]
    assert [lc.path for lc in inputs.cards] == ok[:1]
    assert [(r.path, r.problems) for r in inputs.rejected[1:]] == [
        ("ca/baseline-empty__baseline__78b26823ef42.json", ["ca/baseline-empty__baseline__78b26823ef42.json: empty",
                                                            "second"]),
        ("ca/gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json",
         ["ca/gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json: unreadable"]),
        ("ca/baseline-echo__baseline__fee2db17bc53.json", ["copies: same as X"])]
    assert inputs.rejected[0].path == "broken.json"


def test_a_confirmed_review_with_an_attested_gold_row_makes_the_card_community_verified(tmp_path, monkeypatch):
    subs, corpora = _tree(tmp_path)
    (subs / "ca" / "az-dup.json").unlink()
    apertium = "ca/apertium-eng-cat__default__8ca0b3e02be0.json"
    echo = "ca/baseline-echo__baseline__fee2db17bc53.json"
    reviews = {apertium: SimpleNamespace(confirms=True), echo: SimpleNamespace(confirms=None)}
    monkeypatch.setattr(L, "load_reviews", lambda root: (reviews, []))
    asked = []
    monkeypatch.setattr(L, "_attested_gold",
                        lambda card, root, repo: (asked.append((card.run_card_hash[:12], root, repo)), "GOLD")[1])
    signers = []
    real_verification = L._verification

    def verification(p, root, card, signer, records):
        signers.append(signer)
        got = real_verification(p, root, card, signer, records)
        got.attested = p.name.startswith("apertium")  # stands for an attested record: carried over
        return got

    monkeypatch.setattr(L, "_verification", verification)
    monkeypatch.setattr(L, "community_verified", lambda gold, review: gold == "GOLD" and review.confirms)
    inputs = L.load_inputs(subs, corpora, validate=False, attestation_repository="o/n")
    by = {lc.path: lc for lc in inputs.cards}
    ver = by[apertium].verification
    assert (ver.tier, ver.label, ver.source, ver.attested) == ("community-verified", "community verified",
                                                               "ca/" + RECORD.name, True)
    assert [(s.repository if s else None) for s in signers] == ["o/n"] * 4
    assert ver.record["run_card_hash"] == by[apertium].card.rescored_from[0].run_card_hash
    assert by[apertium].review is reviews[apertium] and by[echo].review is reviews[echo]
    assert by[echo].verification.label == SELF and asked == [("8ca0b3e02be0", tmp_path, "o/n")]
    # without a signer nothing is community verified
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    inputs = L.load_inputs(subs, corpora, validate=False)
    assert {lc.path: lc.verification.label for lc in inputs.cards}[apertium] == UNATTESTED_LABEL
    # nor when the pooled review does not confirm, or the rule says no
    monkeypatch.setattr(L, "community_verified", lambda gold, review: False)
    inputs = L.load_inputs(subs, corpora, validate=False, attestation_repository="o/n")
    assert {lc.path: lc.verification.label for lc in inputs.cards}[apertium] == UNATTESTED_LABEL


# --------------------------------------------------------------------------------------------------------------------
# long_lived (issue 35, "load")

def test_long_lived_settles_once_per_card_and_unfreezes_on_exit(tmp_path):
    import gc

    subs = tmp_path / "submissions" / "mtb-en-ca-dev"
    subs.mkdir(parents=True)
    shutil.copy(CARD, subs / CARD.name)
    shutil.copy(CARD, subs / ("b" + CARD.name))  # same run_card_hash: rejected as a duplicate, not settled
    (subs / "broken.json").write_text("{", encoding="utf-8")  # unreadable: rejected, not settled
    calls, frozen = [], []
    assert gc.get_freeze_count() == 0
    with L.long_lived() as settle:
        def counted() -> None:
            settle()
            calls.append(1)
            frozen.append(gc.get_freeze_count())
        inputs = L.load_inputs(tmp_path / "submissions", None, validate=False, settle=counted)
    assert [lc.path for lc in inputs.cards] == [f"mtb-en-ca-dev/{CARD.name}"]
    assert len(inputs.rejected) == 2 and len(calls) == 1
    assert frozen[0] > 10_000  # a 355-entry card is far more than 10⁴ objects, all moved out of the collector's scans
    assert gc.get_freeze_count() == 0  # and back on exit


def test_long_lived_unfreezes_when_the_build_fails():
    import gc

    with pytest.raises(RuntimeError), L.long_lived() as settle:
        settle()
        assert gc.get_freeze_count() > 0
        raise RuntimeError("a failed build")
    assert gc.get_freeze_count() == 0


def test_long_lived_keeps_a_freeze_the_caller_made():
    import gc

    gc.freeze()
    try:
        before = gc.get_freeze_count()
        assert before > 0
        with L.long_lived() as settle:
            settle()
        assert gc.get_freeze_count() >= before  # the host's own freeze holds (no partial unfreeze exists)
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_collector_paused_restores_the_collector_whatever_happens():
    import gc

    assert gc.isenabled()
    with L.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), L.collector_paused():
        raise RuntimeError("a card that does not parse")
    assert gc.isenabled()
    with L.collector_paused(False):
        assert gc.isenabled()  # not asked: nothing changes
    gc.disable()
    try:
        with L.collector_paused():
            pass
        assert not gc.isenabled()  # a caller's disabled collector stays disabled
    finally:
        gc.enable()


def test_a_held_card_is_parsed_with_the_collector_paused_and_only_then(tmp_path, monkeypatch):
    """Issue 35, "load": while a build holds its cards (``settle`` given) each card's parse runs without automatic
    collections; without ``settle`` (``mtboard validate``, a card read once) the collector is left alone; after
    either, it is on."""
    import gc

    subs = tmp_path / "submissions" / "mtb-en-ca-dev"
    subs.mkdir(parents=True)
    shutil.copy(CARD, subs / CARD.name)
    seen: list[bool] = []
    read = L._read_card

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return read(*args, **kwargs)

    monkeypatch.setattr(L, "_read_card", watched)
    with L.long_lived() as settle:
        held = L.load_inputs(tmp_path / "submissions", None, validate=False, settle=settle)
    once = L.load_inputs(tmp_path / "submissions", None, validate=False)
    assert len(held.cards) == len(once.cards) == 1 and held.cards[0].card == once.cards[0].card
    assert seen == [False, True] and gc.isenabled()


def test_a_held_card_stays_paused_until_frozen_and_is_validated_with_the_collector_on(tmp_path, monkeypatch):
    """Issue 35, "load": the pause lasts from a held card's parse to its freeze (``settle``), so the card's new
    objects are never scanned by a young collection (gc.freeze resets that count); the validator, which may make
    reference cycles, runs with the collector on; after the load it is on again."""
    import gc

    subs = tmp_path / "submissions" / "mtb-en-ca-dev"
    subs.mkdir(parents=True)
    shutil.copy(CARD, subs / CARD.name)
    validating: list[bool] = []

    def fake_validator(submissions, corpora_dir, secret_segment=None, secret_source=None, cache=None):
        def run(path, card, raw=None, key=None):  # the validator's own tests live elsewhere: here, when it runs
            validating.append(gc.isenabled())
            cache.put(key, [])  # a verdict stored, as the real one stores it: the next load is a hit
            return []
        return run

    monkeypatch.setattr(L, "_validator", fake_validator)
    settling: list[tuple[bool, int]] = []

    def load(cache_hits: int):
        with L.long_lived() as settle:
            def counted() -> None:
                settling.append((gc.isenabled(), gc.get_count()[0]))
                settle()
                settling.append((gc.isenabled(), gc.get_count()[0]))
            gc.collect()  # the youngest generation's count starts near 0
            start = gc.get_count()[0]
            inputs = L.load_inputs(tmp_path / "submissions", ROOT / "corpora", validate=True,
                                   cache=tmp_path / "cache", settle=counted)
        assert [lc.path for lc in inputs.cards] == [f"mtb-en-ca-dev/{CARD.name}"]
        assert (inputs.cache_hits, inputs.cache_misses) == (cache_hits, 1 - cache_hits) and gc.isenabled()
        return start

    load(0)  # a miss: validated, with the collector on
    assert validating == [True]
    start = load(1)  # a hit (the build's warm path): no validator, paused from the parse to the freeze
    assert validating == [True]
    for (before, young), (after, left) in zip(settling[0::2], settling[1::2]):
        assert not before and not after  # paused on both sides of the freeze
        assert left < 50  # the freeze cleared the count: the card's containers are never scanned young
    # warm: every container the load made was still counted young — the header the card cache keeps and its summary
    # (mtboard.ledger.cardcache: ~225 containers; the parse of the whole card made ~2,000 more before it)
    assert settling[2][1] > start + 150


def test_resume_runs_its_block_with_the_collector_as_it_was():
    """``collector_paused``'s ``resume``: on inside its block when the pause turned it off, paused again after
    (whatever happens inside); a caller's disabled collector stays off; no pause, nothing changes."""
    import gc

    with L.collector_paused() as resume:
        with resume():
            assert gc.isenabled()
        assert not gc.isenabled()
        with pytest.raises(RuntimeError), resume():
            raise RuntimeError("the validator failed")
        assert not gc.isenabled()
    assert gc.isenabled()
    with L.collector_paused(False) as resume:
        with resume():
            assert gc.isenabled()
        assert gc.isenabled()
    gc.disable()
    try:
        with L.collector_paused() as resume, resume():
            assert not gc.isenabled()  # the caller's choice
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_sentence_scores_are_the_ledger_rule_read_once_per_card():
    """Issue 35: run 0's sentence chrF++ per entry (failures 0), made once per loaded card and read by the item
    statistics, field medians, compare data and portraits. Values read from the committed Apertium EN→CA card."""
    from mtboard.ledger.tables import scores_by_id, sentence_chrf, sentence_scores

    card = documents.load_card(CARD)
    timed_out = card.results[0].model_copy(update={"error": "timeout"})  # failed: 0 whatever its stored score
    card = card.model_copy(update={"results": [timed_out, *card.results[1:]]})
    lc = L.LoadedCard("a.json", card, "a" * 16, L.Verification(SELF))
    assert lc.summary_of is None
    scores = sentence_scores(lc)
    assert scores is sentence_scores(lc) is lc.summary_of[1].chrf  # made once, in results order
    assert len(scores) == 355 and list(scores) == [sentence_chrf(r) for r in card.results]
    by_id = scores_by_id(lc)
    assert card.results[0].chrf_score == pytest.approx(36.941458841745764) and by_id[1] == scores[0] == 0.0
    assert by_id[2] == 73.9816995385644  # usable: its stored sentence chrF++
    assert by_id[81] == 0.0  # source returned untranslated
    other = dataclasses.replace(lc, card=documents.load_card(CARD))  # another card: its own scores
    assert other.summary_of is None and sentence_scores(other)[0] == pytest.approx(36.941458841745764)
    lc.card = other.card  # a card swapped in place is not read through the kept value either
    assert list(sentence_scores(lc)) == list(sentence_scores(other)) and sentence_scores(lc)[0] > 0 == scores[0]
    # a repeated entry id (refused by the validator; a --no-validate build): by id, the last result's score
    again = card.results[1].model_copy(update={"error": "timeout"})  # entry 2 once more, failed this time
    twice = card.model_copy(update={"results": [*card.results, again]})
    assert scores_by_id(L.LoadedCard("b.json", twice, "b" * 16, L.Verification(SELF)))[2] == 0.0
