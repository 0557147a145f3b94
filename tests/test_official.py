"""Issue 17 item 3: :mod:`mtboard.verify.official` without running anything — the official board's bootstrap columns equal
the development board's for the same run (so the same rank clusters follow), held_out duplicates are reported, and
"has an attested gold row" is False for an unattested or foreign-attested card."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mtboard.score import scores_card as S
from mtboard.verify.attestation import ExpectedSigner
from mtboard.core.documents import load_card
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.composite import entry_columns
from mtboard.verify.official import (build_official_boards, check_bundle, has_attested_gold_row, held_out_duplicates,
                              load_official, segment_columns)
from mtboard.core.schema import Segment

from cards_support import facts

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
CARDS = sorted(p for p in ES.glob("*.json")  # full-corpus cards only: a --limit sweep card is not a gold re-run
               if not p.name.endswith(".verification.json")
               and facts(p)[:2] == (Segment.development.value, None))  # nor a diagnostic card (issue 40)
FIXTURE_BUNDLE = ROOT / "tests" / "fixtures" / "attestation" / "reusable-workflow-attestation.sigstore.json"


def _write(folder: Path, path: Path, segment: Segment = Segment.gold_standard) -> Path:
    card = load_card(path)
    sc = S.from_run_card(card, card, salt=bytes(32), segment=segment, corpus_sha256="e" * 64, corpus_version="1.0.0")
    out = folder / f"{path.stem}.{segment.value}.scores.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(sc.model_dump(mode="json")))
    return out


def test_segment_columns_equal_entry_columns_and_the_bootstrap_follows():
    for path in CARDS:
        card = load_card(path)
        sc = S.from_run_card(card, card, salt=bytes(32), segment=Segment.gold_standard, corpus_sha256="e" * 64,
                             corpus_version="1")
        a = segment_columns(sc.segments)
        b = entry_columns(card.results, has_equiv=card.scores.equivalent_match_rate is not None,
                          has_fst=card.scores.fst_acceptance_rate is not None)
        assert a.keys() == b.keys(), path.name
        for k in a:
            assert np.array_equal(a[k], b[k]), (path.name, k)
        counts = bootstrap.resample_counts(len(sc.segments), 50, 7)
        ones = np.ones((1, len(sc.segments)), dtype=np.int64)
        # at the full sample the bootstrap composite is the card's composite
        assert bootstrap.composite_resamples([s.chrf for s in sc.segments], a, ones)[0] == card.scores.composite
        assert np.array_equal(bootstrap.composite_resamples([s.chrf for s in sc.segments], a, counts),
                              bootstrap.composite_resamples([r.stats.chrf for r in card.results], b, counts))


def test_board_ranks_and_held_out_duplicates(tmp_path):
    for p in CARDS:
        _write(tmp_path / "mtb-en-es-dev", p)
    apertium = next(p for p in CARDS if p.name.startswith("apertium"))
    _write(tmp_path / "mtb-en-es-dev", apertium, Segment.held_out)
    dup = tmp_path / "other" / f"{apertium.stem}.held_out.scores.json"
    dup.parent.mkdir()
    dup.write_bytes((tmp_path / "mtb-en-es-dev" / dup.name).read_bytes())
    off = load_official(tmp_path, None)
    assert not off.rejected and len(off.rows) == len(CARDS) + 2
    assert held_out_duplicates(off) == [
        f"other/{dup.name}: held_out already evaluated for fingerprint "
        f"{load_card(apertium).fingerprint.hash[:12]}… (mtb-en-es-dev/{dup.name})"]
    (board,) = build_official_boards(off, resamples=200)
    comps = [r.card.scores.composite for r in board.rows]
    assert comps == sorted(comps, reverse=True) and board.rows[0].card.method_spec == "apertium:eng-spa"
    assert board.n_entries == 355  # no bundle here: every row is unattested, listed, not ranked
    assert all(not r.attested and r.rank == "unranked" and r.label == "maintainer re-run (unattested) · not ranked"
               for r in board.rows)


def test_attested_gold_row_needs_a_verifying_bundle(tmp_path):
    apertium = next(p for p in CARDS if p.name.startswith("apertium"))
    path = _write(tmp_path / "mtb-en-es-dev", apertium)
    h = load_card(apertium).run_card_hash
    assert not has_attested_gold_row(h, tmp_path, "octo/mtboard")
    assert check_bundle(path, ExpectedSigner("octo/mtboard")) == [f"no attestation bundle {path.name}.sigstore "
                                                                  "beside the card"]
    (path.parent / (path.name + ".sigstore")).write_bytes(FIXTURE_BUNDLE.read_bytes())  # real, but another signer
    (line,) = check_bundle(path, ExpectedSigner("octo/mtboard"))
    assert "attestation does not verify: Certificate's SANs do not match" in line
    assert not has_attested_gold_row(h, tmp_path, "octo/mtboard")
