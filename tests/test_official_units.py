""":mod:`mtboard.verify.official` function by function, without building a site (issue 32: the module's mutation run,
docs/TESTING.md). The rows are real: committed 20-entry development cards reduced to scores-only cards with
:func:`mtboard.score.scores_card.from_run_card` (the reduction the verify workflow applies to a secret-segment run);
where a test needs a row to count as attested, the attestation check is replaced by one that accepts (the real
Sigstore path is tested in tests/test_attestation.py and tests/test_official.py). Expected values are the cards' own
(composite, chrF++, method) or counted by hand from the segments built here (comments).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from mtboard.core.documents import load_card
from mtboard.core.schema import ScoresSegment, Segment
from mtboard.score import scores_card as S
from mtboard.verify import official as O
from mtboard.verify.attestation import AttestationError, ExpectedSigner

from cards_support import committed

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
APERTIUM20 = committed("apertium-eng-spa__default__", 20)  # composite 0.491168 (harness 0.4)
ECHO20 = committed("baseline-echo__baseline__", 20)  # composite 0.0
GEMMA20 = committed("gemma-3-270m-q4-k-m.gguf__few-shot-completion__", 20)  # the best of three: 0.420117
SIGNER = ExpectedSigner("octo/mtboard")


@functools.cache
def _card(path: Path, segment: Segment = Segment.gold_standard, sha: str = "e" * 64):
    run = load_card(path)
    return S.from_run_card(run, run, salt=bytes(32), segment=segment, corpus_sha256=sha, corpus_version="1.0.0")


def _row(path: Path, attested: bool = True, **kw) -> O.GoldRow:
    return O.GoldRow(path.name, _card(path, **kw), attested=attested)


def _write(folder: Path, path: Path, segment: Segment = Segment.gold_standard, name: str | None = None) -> Path:
    out = folder / (name or f"{path.stem}.{segment.value}.scores.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_card(path, segment).model_dump(mode="json")), encoding="utf-8")
    return out


def _seg(i: int, **kw) -> ScoresSegment:
    base = {"entry_id": i, "chrf": [0] * 24, "bleu": [0] * 10, "ter": None, "outcome": "usable",
            "exact_match": False, "code_switching": False, "hypothesis_hmac": "a" * 64}
    return ScoresSegment.model_validate({**base, **kw})


# ---------------------------------------------------------------------------------------------------------------


def test_row_label_anchor_and_board_properties():
    a, e = _row(APERTIUM20), _row(ECHO20, attested=False)
    assert a.label == "GDS verified" and e.label == O.UNATTESTED_GOLD_LABEL
    assert a.anchor == f"gold-{load_card(APERTIUM20).run_card_hash[:16]}" and len(a.anchor) == 21
    board = O.OfficialBoard("en", "es", "EN→ES", "mtb-en-es-dev", "1.0.0", "e" * 64, 20, [a, e])
    assert board.ranked == [a] and board.unranked == [e]
    assert board.page == "official/mtb-en-es-dev-v1.0.0.md" and board.mdd is None
    assert (O.OFFICIAL_DIR, O.BUNDLE_SUFFIX, O.UNRANKED) == ("official", ".sigstore", "unranked")
    assert O.UNATTESTED_GOLD_LABEL == "maintainer re-run (unattested) · not ranked"


def test_segment_columns_follow_the_all_or_none_rules():
    # hand-made segments: 3 usable, 1 without usable output
    segs = [_seg(1, exact_match=True, equivalent_match=True, fst_accepted_words=1, fst_checked_words=2,
                 semantic_units=5000, hallucination=False, glossary_hits=1, glossary_terms=2),
            _seg(2, code_switching=True, equivalent_match=False, fst_accepted_words=0, fst_checked_words=0,
                 semantic_units=10000, hallucination=True),
            _seg(3, equivalent_match=True, fst_accepted_words=3, fst_checked_words=3, semantic_units=0,
                 hallucination=False),
            _seg(4, outcome="no_usable_output", equivalent_match=False, fst_accepted_words=0, fst_checked_words=4,
                 semantic_units=0, hallucination=True)]
    cols = O.segment_columns(segs)
    assert sorted(cols) == ["code_switching_rate", "equivalent_match_rate", "exact_match_rate",
                            "fst_acceptance_rate", "hallucination_rate", "semantic_score", "terminology_adherence"]
    assert cols["exact_match_rate"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert cols["code_switching_rate"].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert cols["equivalent_match_rate"].tolist() == [1.0, 0.0, 1.0, 0.0]
    # 1/2; nothing checked counts 1.0; 3/3; no usable output counts 0 whatever its counts
    assert cols["fst_acceptance_rate"].tolist() == [0.5, 1.0, 1.0, 0.0]
    assert cols["semantic_score"].tolist() == [5000.0, 10000.0, 0.0, 0.0]  # integer units of 1/10,000
    assert cols["hallucination_rate"].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert cols["terminology_adherence"].tolist() == [[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]
    assert all(v.dtype == np.float64 for v in cols.values())
    # one segment without a fact: that column is left out
    missing = [segs[0], _seg(5)]  # a glossary on any segment is enough for terminology (absent terms count 0)
    cols = O.segment_columns(missing)
    assert sorted(cols) == ["code_switching_rate", "exact_match_rate", "terminology_adherence"]
    assert cols["terminology_adherence"].tolist() == [[1.0, 0.0], [2.0, 0.0]]
    # no segments: the all-of-nothing columns are present (empty), semantic and hallucination guard against it
    assert sorted(O.segment_columns([])) == ["code_switching_rate", "equivalent_match_rate", "exact_match_rate",
                                             "fst_acceptance_rate"]
    assert O.segment_columns([_seg(6, glossary_terms=0, glossary_hits=0)]).keys() == {"code_switching_rate",
                                                                                      "exact_match_rate"}


def test_check_bundle_names_what_is_missing(tmp_path, monkeypatch):
    path = _write(tmp_path, APERTIUM20)
    assert O.check_bundle(path, None) == ["no expected repository configured, so no attestation can be checked"]
    assert O.check_bundle(path, SIGNER) == [f"no attestation bundle {path.name}.sigstore beside the card"]
    bundle = path.with_name(path.name + O.BUNDLE_SUFFIX)
    bundle.write_text("{}", encoding="utf-8")
    seen = {}

    def fake(data, digest, signer, where):
        seen.update(data=data, digest=digest, signer=signer, where=where)
        raise AttestationError("not a bundle", where=where)

    monkeypatch.setattr(O, "verify_attestation", fake)
    (line,) = O.check_bundle(path, SIGNER)
    assert "not a bundle" in line and bundle.name in line
    import hashlib

    assert seen == {"data": b"{}", "digest": hashlib.sha256(path.read_bytes()).hexdigest(), "signer": SIGNER,
                    "where": bundle.name}
    monkeypatch.setattr(O, "verify_attestation", lambda *a, **k: None)
    assert O.check_bundle(path, SIGNER) == []
    with bundle.open("r+b") as fh:  # a bundle over 1 MiB is not read (sparse: nothing written)
        fh.truncate(1024 * 1024 + 1)
    assert O.check_bundle(path, SIGNER) == [f"no attestation bundle {bundle.name} beside the card"]
    with bundle.open("r+b") as fh:
        fh.truncate(1024 * 1024)
    assert O.check_bundle(path, SIGNER) == []


def test_load_official_reads_validates_and_marks_attestation(tmp_path, monkeypatch):
    assert O.load_official(None, None).rows == [] and O.load_official(tmp_path / "absent", None).rows == []
    good = _write(tmp_path / "mtb-en-es-dev", APERTIUM20)
    bad = _write(tmp_path / "mtb-en-es-dev", ECHO20, name="0-echo.gold_standard.scores.json")  # read first
    data = json.loads(bad.read_text(encoding="utf-8"))
    data["timestamp"] = "2099-01-01T00:00:00Z"
    bad.write_text(json.dumps(S.seal(data)), encoding="utf-8")
    (tmp_path / "link.gold_standard.scores.json").symlink_to(good)  # a link is never read (and sorts first)
    (tmp_path / "mtb-en-es-dev" / "00.gold_standard.scores.json").mkdir()  # nor a folder
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")  # nor another name
    off = O.load_official(tmp_path, None)
    assert [r.path for r in off.rows] == [f"mtb-en-es-dev/{good.name}"]
    assert off.rows[0].attested is False
    assert off.rows[0].attestation_problems == ["no expected repository configured, so no attestation can be checked"]
    assert [(p, lines[0].split(":")[0]) for p, lines in off.rejected] == [(f"mtb-en-es-dev/{bad.name}", "timestamp")]
    monkeypatch.setattr(O, "verify_attestation", lambda *a, **k: None)
    good.with_name(good.name + ".sigstore").write_text("{}", encoding="utf-8")
    (row,) = O.load_official(tmp_path, SIGNER).rows
    assert row.attested is True and row.attestation_problems == [] and row.card == _card(APERTIUM20)


def test_load_official_checks_cards_of_the_secret_corpus(tmp_path):
    from mtboard.validate.scores import SecretCorpus

    dev = json.loads((ROOT / "corpora" / "mtb-en-es-dev.json").read_text(encoding="utf-8"))
    ids = [r.entry_id for r in load_card(APERTIUM20).results]
    secret_file = tmp_path / "secret.json"
    secret_file.write_text(json.dumps({"dataset": dev["dataset"], "entries": [
        {**e, "segment": "gold_standard"} for e in dev["entries"] if e["id"] in ids[:19]]}), encoding="utf-8")
    secret = SecretCorpus.load(secret_file)
    run = load_card(APERTIUM20)
    card = S.from_run_card(run, run, salt=bytes(32), segment=Segment.gold_standard, corpus_sha256=secret.sha256,
                           corpus_version="1.0.0")
    (tmp_path / "official").mkdir()
    (tmp_path / "official" / "a.gold_standard.scores.json").write_text(json.dumps(card.model_dump(mode="json")))
    assert O.load_official(tmp_path / "official", None).rejected == []  # without the corpus: consistent
    off = O.load_official(tmp_path / "official", None, secret)
    assert off.rows == [] and off.rejected == [("a.gold_standard.scores.json", [
        f"corpus: $.segments[19].entry_id is {ids[19]}, allowed: an entry id of the gold_standard segment of the "
        "secret corpus"])]


def test_boards_group_by_corpus_order_rows_and_rank_only_attested_ones():
    a, g, e = _row(APERTIUM20), _row(GEMMA20), _row(ECHO20)
    other = _row(APERTIUM20, sha="f" * 64)  # the same method on another secret corpus: its own board
    held = _row(GEMMA20, segment=Segment.held_out)  # held_out: never on a board
    unattested = O.GoldRow("u", _card(GEMMA20), attested=False)
    seeds = []

    def seed_of(*parts):
        seeds.append(parts)
        return 7

    boards = O.build_official_boards(O.OfficialInputs(rows=[e, g, held, a, other, unattested]), resamples=30,
                                     seed_of=seed_of)
    assert sorted(seeds) == [("mtb-en-es-dev", "1.0.0", "e" * 64), ("mtb-en-es-dev", "1.0.0", "f" * 64)]
    first, second = boards
    assert (first.sha256, second.sha256) == ("e" * 64, "f" * 64)  # sorted by corpus identity
    assert (first.source_language, first.target_language, first.language_pair, first.dataset_id,
            first.dataset_version, first.n_entries) == ("en", "es", "EN→ES", "mtb-en-es-dev", "1.0.0", 20)
    # ranked by composite (0.491168 > 0.420117 > 0.0), then the unattested row, unranked
    assert [r.path for r in first.rows] == [a.path, g.path, e.path, "u"]
    assert [(r.position, r.rank) for r in first.rows][-1] == (0, O.UNRANKED)
    assert [r.position for r in first.rows[:3]] == [1, 2, 3] and first.rows[0].rank.startswith("1")
    assert first.mdd is not None and first.mdd > 0
    assert [r.path for r in second.rows] == [other.path] and second.rows[0].rank == "1"
    for r in first.rows:
        assert r.boot.shape == (30,) and r.composite_ci[0] <= r.card.scores.composite <= r.composite_ci[1]
    # with the default seed: the view's seed from the corpus identity, the same every build
    again = O.build_official_boards(O.OfficialInputs(rows=[a, g]), resamples=30)[0]
    twice = O.build_official_boards(O.OfficialInputs(rows=[a, g]), resamples=30)[0]
    assert np.array_equal(again.rows[0].boot, twice.rows[0].boot)
    from mtboard.score import stats

    assert stats.view_seed("mtb-en-es-dev", "1.0.0", "e" * 64, "gold") != 7


def test_the_default_seed_is_the_views_gold_seed():
    from mtboard.score import stats
    from mtboard.score.metrics import bootstrap

    a, g = _row(APERTIUM20), _row(GEMMA20)
    (board,) = O.build_official_boards(O.OfficialInputs(rows=[a, g]), resamples=30)
    seed = stats.view_seed("mtb-en-es-dev", "1.0.0", "e" * 64, "gold")
    segs = sorted(a.card.segments, key=lambda s: s.entry_id)
    want = bootstrap.composite_resamples([s.chrf for s in segs], O.segment_columns(segs),
                                         bootstrap.resample_counts(20, 30, seed))
    assert board.rows[0] is a and np.array_equal(a.boot, want)
    (other,) = O.build_official_boards(O.OfficialInputs(rows=[_row(APERTIUM20)]), resamples=30,
                                       seed_of=lambda *parts: seed + 1)
    assert not np.array_equal(other.rows[0].boot, want)


def test_a_row_over_other_entries_is_left_off_its_board_and_ties_break_by_chrf_then_method():
    a = _row(APERTIUM20)
    fewer = a.card.model_copy(update={"segments": a.card.segments[:19], "card_run_card_hash": "b" * 64})
    rows = [a, O.GoldRow("fewer", fewer, attested=True)]
    (board,) = O.build_official_boards(O.OfficialInputs(rows=rows), resamples=20)
    assert [r.path for r in board.rows] == [a.path]  # the first row's entry set decides the board's
    # equal composites: the higher chrF++ first, then the method spec, then the hash
    sc = a.card.scores
    lower = a.card.model_copy(update={"scores": sc.model_copy(update={"chrf_plus_plus": sc.chrf_plus_plus - 1}),
                                      "card_run_card_hash": "0" * 64})
    other_method = a.card.model_copy(update={"method_spec": "zzz:model", "card_run_card_hash": "1" * 64})
    same = a.card.model_copy(update={"card_run_card_hash": "2" * 64})
    rows = [O.GoldRow(n, c, attested=True) for n, c in (("lower", lower), ("z", other_method), ("same", same))]
    (board,) = O.build_official_boards(O.OfficialInputs(rows=[*rows, a]), resamples=20)
    assert [r.path for r in board.rows] == ["same", a.path, "z", "lower"]
    only_unattested = O.build_official_boards(O.OfficialInputs(rows=[O.GoldRow("x", a.card, attested=False)]),
                                              resamples=20)
    assert only_unattested[0].mdd is None and only_unattested[0].rows[0].rank == O.UNRANKED


def test_gold_rows_by_card_and_attested_only():
    a, u = _row(APERTIUM20), O.GoldRow("u", _card(GEMMA20), attested=False)
    (board,) = O.build_official_boards(O.OfficialInputs(rows=[a, u]), resamples=20)
    everything = O.gold_rows_by_card([board])
    assert set(everything) == {a.card.card_run_card_hash, u.card.card_run_card_hash}
    assert everything[a.card.card_run_card_hash] == (board, a)
    assert set(O.gold_rows_by_card([board], attested_only=True)) == {a.card.card_run_card_hash}


def test_attested_gold_row_needs_gold_attestation_and_the_same_method(tmp_path, monkeypatch):
    monkeypatch.setattr(O, "verify_attestation", lambda *a, **k: None)
    folder = tmp_path / "official"
    gold = _write(folder / "mtb-en-es-dev", APERTIUM20)
    held = _write(folder / "mtb-en-es-dev", GEMMA20, Segment.held_out)
    h_a, h_g = load_card(APERTIUM20).run_card_hash, load_card(GEMMA20).run_card_hash
    assert O.attested_gold_row(h_a, folder, "octo/mtboard") is None  # no bundle yet
    for p in (gold, held):
        p.with_name(p.name + ".sigstore").write_text("{}", encoding="utf-8")
    row = O.attested_gold_row(h_a, folder, "octo/mtboard")
    assert row is not None and row.path == f"mtb-en-es-dev/{gold.name}"
    assert O.has_attested_gold_row(h_a, folder, "octo/mtboard")
    assert not O.has_attested_gold_row(h_g, folder, "octo/mtboard")  # held_out is not a gold row
    assert not O.has_attested_gold_row("c" * 64, folder, "octo/mtboard")
    assert O.has_attested_gold_row(h_a, folder, "octo/mtboard", dev_card=load_card(APERTIUM20))
    assert not O.has_attested_gold_row(h_a, folder, "octo/mtboard", dev_card=load_card(GEMMA20))


def test_refuse_mislinked_moves_only_rows_whose_present_card_differs():
    a, g = _row(APERTIUM20), _row(GEMMA20)
    orphan = O.GoldRow("orphan", _card(ECHO20), attested=True)
    inputs = O.OfficialInputs(rows=[a, g, orphan], rejected=[("earlier", ["x"])])
    dev_a, dev_g = load_card(APERTIUM20), load_card(GEMMA20)
    # g names Gemma's card, but the site's card under that hash is Apertium's
    O.refuse_mislinked(inputs, {dev_a.run_card_hash: dev_a, dev_g.run_card_hash: dev_a})
    assert inputs.rows == [a, orphan]
    assert [p for p, _ in inputs.rejected] == ["earlier", g.path]
    assert inputs.rejected[1][1][0].startswith(f"link: $.card_run_card_hash is '{dev_g.run_card_hash}'")
    assert any(line.startswith("link: $.method_spec is 'gguf:") for line in inputs.rejected[1][1])
    O.refuse_mislinked(inputs, {dev_g.run_card_hash: dev_g})
    assert inputs.rows == [a, orphan] and len(inputs.rejected) == 2


def test_held_out_duplicates_one_line_per_repeat():
    h1 = O.GoldRow("one/x.held_out.scores.json", _card(APERTIUM20, Segment.held_out), attested=True)
    h2 = O.GoldRow("two/x.held_out.scores.json", _card(APERTIUM20, Segment.held_out), attested=False)
    h3 = O.GoldRow("three/x.held_out.scores.json", _card(APERTIUM20, Segment.held_out), attested=False)
    gold = _row(APERTIUM20)
    other = O.GoldRow("g/y.held_out.scores.json", _card(GEMMA20, Segment.held_out), attested=True)
    fp = h1.card.card_fingerprint
    assert O.held_out_duplicates(O.OfficialInputs(rows=[gold, h1, other, h2, h3])) == [
        f"two/x.held_out.scores.json: held_out already evaluated for fingerprint {fp[:12]}… "
        "(one/x.held_out.scores.json)",
        f"three/x.held_out.scores.json: held_out already evaluated for fingerprint {fp[:12]}… "
        "(one/x.held_out.scores.json)"]
    assert O.held_out_duplicates(O.OfficialInputs(rows=[gold, gold])) == []


@pytest.mark.parametrize("name", O.__all__)
def test_every_public_name_is_tested_here(name):
    """A name added to the module's public list needs a test in this file (the mutation run relies on it)."""
    text = Path(__file__).read_text(encoding="utf-8")
    assert f"O.{name}" in text, name
