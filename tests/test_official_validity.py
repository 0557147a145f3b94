"""Validity holes of the official board (issue 17 review, items 1–2): a scores-only card anyone can write and seal
is not an official score, and a gold card cannot borrow another method's development row.

The scores-only cards here are forged the way an attacker would: from a committed development card with
:func:`mtboard.score.scores_card.from_run_card` (the development card stands in for the secret-segment run; a known salt),
sealed, with no attestation bundle (or a bundle that does not verify). The real attested path is tested in
tests/test_attestation.py and tests/test_official_board.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from mtboard.score import scores_card as S
from mtboard.cli.main import app
from mtboard.core.documents import load_card
from mtboard.verify.official import (UNATTESTED_GOLD_LABEL, GoldRow, OfficialInputs, build_official_boards,
                              has_attested_gold_row, load_official, refuse_mislinked)
from mtboard.core.schema import Segment
from mtboard.site.build import build_site
from mtboard.validate.scores import check_dev_link

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
APERTIUM = ES / "apertium-eng-spa__default__d0f5919b5569.json"
GEMMA = next(ES.glob("gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))
SALT = bytes(range(32))


def _forge(run: Path, dev: Path | None = None, **override) -> dict:
    """A sealed scores-only card of ``run``'s results naming ``dev`` (default: ``run``) as its development card."""
    card = load_card(run)
    sc = S.from_run_card(card, load_card(dev or run), salt=SALT, segment=Segment.gold_standard,
                         corpus_sha256="e" * 64, corpus_version="1.0.0")
    data = sc.model_dump(mode="json")
    data.update(override)
    return S.seal(data)


def _write(folder: Path, dev: Path, data: dict) -> Path:
    p = folder / ES.name / f"{dev.stem}.gold_standard.scores.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_only_attested_rows_are_ranked():
    a = S.from_run_card(load_card(APERTIUM), load_card(APERTIUM), salt=SALT, segment=Segment.gold_standard,
                        corpus_sha256="e" * 64, corpus_version="1.0.0")
    g = S.from_run_card(load_card(GEMMA), load_card(GEMMA), salt=SALT, segment=Segment.gold_standard,
                        corpus_sha256="e" * 64, corpus_version="1.0.0")
    # the unattested row has the better composite (Apertium 0.570035 > Gemma); it must still not be ranked
    assert a.scores.composite == 0.570035 and g.scores.composite < a.scores.composite
    inputs = OfficialInputs(rows=[GoldRow("a", a, attested=False, attestation_problems=["no bundle"]),
                                  GoldRow("g", g, attested=True)])
    (board,) = build_official_boards(inputs, resamples=50)
    assert [(r.path, r.rank, r.position, r.label) for r in board.rows] == [
        ("g", "1", 1, "GDS verified"), ("a", "unranked", 0, "maintainer re-run (unattested) · not ranked")]
    assert [r.path for r in board.ranked] == ["g"] and [r.path for r in board.unranked] == ["a"]
    only_forged = OfficialInputs(rows=[GoldRow("a", a, attested=False)])
    (board,) = build_official_boards(only_forged, resamples=50)
    assert board.rows[0].rank == "unranked" and board.mdd is None


def test_a_forged_scores_card_is_not_ranked_on_the_site(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(ES, root / "submissions" / ES.name)
    official = root / "official"
    forged = _write(official, APERTIUM, _forge(APERTIUM))
    (forged.parent / (forged.name + ".sigstore")).write_text("{}", encoding="utf-8")  # a bundle that does not verify
    off = load_official(official, None)
    assert off.rejected == [] and [r.attested for r in off.rows] == [False]
    assert not has_attested_gold_row(off.rows[0].card.card_run_card_hash, official, "octo/mtboard")
    build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs", official=official,
               resamples=50, run_mkdocs=False)
    page = (tmp_path / "docs" / "official" / "mtb-en-es-dev-v1.0.0.md").read_text(encoding="utf-8")
    row = page.split(f'id="gold-{off.rows[0].card.card_run_card_hash[:16]}"')[1].split("</tr>")[0]
    assert row.startswith("><td>unranked</td>") and UNATTESTED_GOLD_LABEL in row and "GDS verified" not in row
    assert "0 attested method(s) scored on 355 secret gold_standard entries" in page
    assert "1 unattested re-run(s) are listed below them, not ranked." in page
    assert '<th scope="rowgroup" colspan="10">Not ranked: re-runs whose scores carry no verifying attestation' in page
    index = (tmp_path / "docs" / "official" / "index.md").read_text(encoding="utf-8")
    assert "0 ranked method(s) on 355 secret entries, 1 unattested (not ranked)" in index
    dev_board = (tmp_path / "docs" / "leaderboards" / "mtb-en-es-dev-v1.0.0.md").read_text(encoding="utf-8")
    # validator review: an unattested row puts no gold number or gap on the development board (only the official
    # page lists it, not ranked) — anyone who gets a file into official/ could otherwise pin a fake gap on any row
    assert "gold 0.570" not in dev_board and "· gap" not in dev_board and "mtb-gold" not in dev_board
    data = json.loads((tmp_path / "docs" / "data" / "official.json").read_text(encoding="utf-8"))
    assert [(r["rank"], r["attested"], r["ranked"]) for r in data["boards"][0]["rows"]] == [
        ("unranked", False, False)]


def test_a_gold_card_cannot_borrow_another_methods_development_row(tmp_path):
    # Gemma's scores, claiming the Apertium development card (hash and fingerprint copied from it)
    apertium = load_card(APERTIUM)
    borrowed = _forge(GEMMA, card_run_card_hash=apertium.run_card_hash, card_fingerprint=apertium.fingerprint.hash)
    sc = S.ScoresCard.model_validate(borrowed)
    gemma = load_card(GEMMA)
    tail = "a gold card is a re-run of its development card's method"
    assert check_dev_link(sc, apertium) == [
        f"link: $.method_spec is {gemma.method.spec!r}, allowed: 'apertium:eng-spa' (the development card's "
        f"method.spec: {tail})",
        f"link: $.model_slug is {gemma.model_slug!r}, allowed: 'apertium/eng-spa' (the development card's "
        f"model_slug: {tail})",
        f"link: $.condition is {gemma.condition!r}, allowed: 'default' (the development card's condition: {tail})"]
    assert check_dev_link(S.ScoresCard.model_validate(_forge(APERTIUM)), apertium) == []
    # every field the two cards share is compared (the fingerprint alone, too)
    fp_only = S.ScoresCard.model_validate(_forge(APERTIUM, card_fingerprint="0" * 64))
    assert check_dev_link(fp_only, apertium) == [
        f"link: $.card_fingerprint is {'0' * 64!r}, allowed: {apertium.fingerprint.hash!r} (the development card's "
        f"fingerprint.hash: {tail})"]

    # the official board build refuses it, with the reason on the index page
    inputs = OfficialInputs(rows=[GoldRow("x.scores.json", sc, attested=True)])
    refuse_mislinked(inputs, {apertium.run_card_hash: apertium})
    assert inputs.rows == [] and inputs.rejected[0][0] == "x.scores.json"
    assert inputs.rejected[0][1][0].startswith("link: $.method_spec is ")
    root = tmp_path / "repo"
    shutil.copytree(ES, root / "submissions" / ES.name)
    _write(root / "official", APERTIUM, borrowed)
    build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs",
               official=root / "official", resamples=50, run_mkdocs=False)
    index = (tmp_path / "docs" / "official" / "index.md").read_text(encoding="utf-8")
    assert (f"- `{ES.name}/{APERTIUM.stem}.gold_standard.scores.json`: link: $.method_spec is "
            f"&#x27;{gemma.method.spec}&#x27;, allowed: &#x27;apertium:eng-spa&#x27; (the development card&#x27;s "
            "method.spec: a gold card is a re-run of its development card&#x27;s method) (+2 more)") in index
    assert not (tmp_path / "docs" / "official" / "mtb-en-es-dev-v1.0.0.md").exists()

    # mtboard validate-scores --dev-card
    path = _write(tmp_path / "cli", APERTIUM, borrowed)
    runner = CliRunner()
    res = runner.invoke(app, ["validate-scores", str(path), "--dev-card", str(APERTIUM)])
    assert res.exit_code == 1 and "link: $.method_spec is" in res.output
    assert "scores-only validation failed: 1 of 1 file(s)" in res.output
    assert runner.invoke(app, ["validate-scores", str(path)]).exit_code == 0  # without the dev card: consistent
    good = _write(tmp_path / "good", APERTIUM, _forge(APERTIUM))
    res = runner.invoke(app, ["validate-scores", str(good), "--dev-card", str(APERTIUM)])
    assert res.exit_code == 0 and "scores-only validation passed: 1 file(s)" in res.output


def test_the_development_board_shows_gold_and_gap_only_for_attested_rows():
    """Validator review: on one official board, the attested Gemma row links its development row with its gold
    number and gap; the unattested Apertium row (the better composite) puts nothing on Apertium's development row."""
    from mtboard.site import officialpages
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.load import load_inputs

    a = S.from_run_card(load_card(APERTIUM), load_card(APERTIUM), salt=SALT, segment=Segment.gold_standard,
                        corpus_sha256="e" * 64, corpus_version="1.0.0")
    g = S.from_run_card(load_card(GEMMA), load_card(GEMMA), salt=SALT, segment=Segment.gold_standard,
                        corpus_sha256="e" * 64, corpus_version="1.0.0")
    (board,) = build_official_boards(OfficialInputs(rows=[GoldRow("a", a, attested=False),
                                                          GoldRow("g", g, attested=True)]), resamples=50)
    inputs = load_inputs(ES.parent, ROOT / "corpora", validate=False)
    boards = [lb for lb in build_ledger(inputs, resamples=50).boards if lb.dataset_id == ES.name]
    officialpages.attach_gold_links(boards, [board])
    gold = {(r.lc.card.run_card_hash, m.gold) for lb in boards for v in lb.views for m in v.methods
            for r in [m.rep, *m.members] if m.gold is not None}
    dev_gemma = load_card(GEMMA).scores.composite
    assert a.scores.composite == 0.570035 and g.scores.composite == dev_gemma  # the same results: gap 0
    text = f"gold {dev_gemma:.3f} · gap +0.000"
    assert {h for h, _ in gold} >= {load_card(GEMMA).run_card_hash}
    assert load_card(APERTIUM).run_card_hash not in {h for h, _ in gold}
    assert {t for _, (_, t) in gold} == {text} and "unattested" not in text
