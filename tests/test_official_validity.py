"""Validity holes of the official board (issue 17 review, items 1–2): a scores-only card anyone can write and seal
is not an official score, and a gold card cannot borrow another method's development row.

The scores-only cards here are forged the way an attacker would: from a committed development card with
:func:`mtboard.score.scores_card.from_run_card` (the development card stands in for the secret-segment run; a known salt),
sealed, with no attestation bundle (or a bundle that does not verify). The real attested path is tested in
tests/test_attestation.py and tests/test_official_board.py.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
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


@functools.cache
def _scores(run: Path, dev: Path) -> str:
    """The scores-only card of ``run``'s results naming ``dev`` (JSON; cached: the committed cards are large)."""
    sc = S.from_run_card(load_card(run), load_card(dev), salt=SALT, segment=Segment.gold_standard,
                         corpus_sha256="e" * 64, corpus_version="1.0.0")
    return json.dumps(sc.model_dump(mode="json"))


def _forge(run: Path, dev: Path | None = None, **override) -> dict:
    """A sealed scores-only card of ``run``'s results naming ``dev`` (default: ``run``) as its development card."""
    data = json.loads(_scores(run, dev or run))
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


@pytest.mark.slow  # a whole-system test: 7 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
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


@pytest.mark.slow  # a whole-system test: 8 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
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
    # issue 34 item 6: without --dev-card, the card it names is found under --submissions (what the site workflow
    # runs: `mtboard validate-scores official`), and the lines are the build's, word for word
    res = runner.invoke(app, ["validate-scores", str(root / "official"), "--submissions", str(root / "submissions")])
    rel = f"{ES.name}/{APERTIUM.stem}.gold_standard.scores.json"
    off_path = root / "official" / rel
    assert res.exit_code == 1 and [line.split(": ", 1)[1] for line in res.output.splitlines()
                                   if line.startswith("FAIL ")] == check_dev_link(sc, apertium)
    assert f"FAIL {off_path}: {check_dev_link(sc, apertium)[0]}" in res.output.splitlines()
    good = _write(tmp_path / "good", APERTIUM, _forge(APERTIUM))
    res = runner.invoke(app, ["validate-scores", str(good), "--dev-card", str(APERTIUM)])
    assert res.exit_code == 0 and "scores-only validation passed: 1 file(s)" in res.output


@pytest.mark.slow  # a whole-system test: 29 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
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


# --------------------------------------------------------------------------------------------------------------------
# Issue 34 item 6: `mtboard validate-scores` and the official board build run one dev-link check


_load = functools.cache(load_card)


def _mislinked(kind: str) -> tuple[Path, dict]:
    """(the development card the file is named for, the gold card's data) of one kind of mislinked gold card. Every
    card is Apertium's scores (a real re-run's shape) unless said otherwise."""
    apertium, gemma = _load(APERTIUM), _load(GEMMA)
    return {
        # another method's scores claiming Apertium's development row (hash and fingerprint copied)
        "borrowed": (APERTIUM, _forge(GEMMA, card_run_card_hash=apertium.run_card_hash,
                                      card_fingerprint=apertium.fingerprint.hash)),
        "method_spec": (APERTIUM, _forge(APERTIUM, method_spec="apertium:eng-cat")),
        "model_slug": (APERTIUM, _forge(APERTIUM, model_slug="apertium/eng-cat")),
        "condition": (APERTIUM, _forge(APERTIUM, condition="coached")),
        "fingerprint": (APERTIUM, _forge(APERTIUM, card_fingerprint="0" * 64)),
        "dataset": (APERTIUM, _forge(APERTIUM, card_dataset_id="mtb-en-ca-dev")),
        # a consistent Apertium gold card filed under Gemma's development card's name
        "file name": (GEMMA, _forge(APERTIUM)),
        # the name says held_out, the card gold_standard
        "segment": (APERTIUM, _forge(APERTIUM)),
        # the development card Gemma, forged from Apertium's scores with Gemma's identity except its method spec
        "one field of many": (GEMMA, _forge(APERTIUM, card_run_card_hash=gemma.run_card_hash,
                                            card_fingerprint=gemma.fingerprint.hash, model_slug=gemma.model_slug,
                                            condition=gemma.condition)),
    }[kind]


@pytest.fixture(scope="module")
def dev_folder(tmp_path_factory) -> Path:
    """submissions/ with the two development cards the gold cards below name (copies of committed cards)."""
    sub = tmp_path_factory.mktemp("link") / "submissions" / ES.name
    sub.mkdir(parents=True)
    for p in (APERTIUM, GEMMA):
        shutil.copy(p, sub / p.name)
    return sub.parent


@pytest.mark.parametrize("kind", ["borrowed", "method_spec", "model_slug", "condition", "fingerprint", "dataset",
                                  "file name", "segment", "one field of many"])
def test_validate_scores_and_the_build_refuse_a_mislinked_gold_card_alike(tmp_path, dev_folder, kind):
    named, data = _mislinked(kind)
    official = tmp_path / "official"
    path = _write(official, named, data)
    if kind == "segment":
        path = path.rename(path.with_name(path.name.replace(".gold_standard.", ".held_out.")))
    # the build's check (mtboard.site.build._official): the shown development cards by run_card_hash
    devs = {c.run_card_hash: c for c in (_load(APERTIUM), _load(GEMMA))}
    off = load_official(official, None)
    assert off.rejected == [] and len(off.rows) == 1, off.rejected  # a valid scores-only card by itself
    refuse_mislinked(off, devs)
    assert off.rows == [] and len(off.rejected) == 1
    rel, build_lines = off.rejected[0]
    assert rel == path.relative_to(official).as_posix() and build_lines
    # validate-scores, as the site workflow runs it: the same lines, word for word, one FAIL line each
    res = CliRunner().invoke(app, ["validate-scores", str(official), "--submissions", str(dev_folder)])
    assert res.exit_code == 1, res.output
    assert [line for line in res.output.splitlines() if line.startswith("FAIL ")] == [
        f"FAIL {path}: {line}" for line in build_lines]
    assert res.output.splitlines()[-1] == "error: scores-only validation failed: 1 of 1 file(s)"


def test_the_exact_lines_of_two_kinds(tmp_path, dev_folder):
    """Hand-checked lines: a gold card of Apertium's filed under Gemma's card, and the one-field fingerprint forgery."""
    apertium, gemma = _load(APERTIUM), _load(GEMMA)
    tail = "a gold card is a re-run of its development card's method"
    named, data = _mislinked("file name")
    path = _write(tmp_path / "a", named, data)
    res = CliRunner().invoke(app, ["validate-scores", str(path), "--submissions", str(dev_folder)])
    assert f"FAIL {path}: link: the file name names development card {gemma.run_card_hash[:12]}…, but " \
           f"$.card_run_card_hash is {apertium.run_card_hash[:12]}… (a gold card is filed as <its development " \
           "card's stem>.<segment>.scores.json)" in res.output.splitlines()
    named, data = _mislinked("fingerprint")
    path = _write(tmp_path / "b", named, data)
    res = CliRunner().invoke(app, ["validate-scores", str(path), "--submissions", str(dev_folder)])
    assert [line for line in res.output.splitlines() if line.startswith("FAIL ")] == [
        f"FAIL {path}: link: $.card_fingerprint is {'0' * 64!r}, allowed: {apertium.fingerprint.hash!r} (the "
        f"development card's fingerprint.hash: {tail})"]


def test_a_consistent_gold_card_passes_and_an_absent_development_card_is_noted(tmp_path, dev_folder):
    path = _write(tmp_path / "official", APERTIUM, _forge(APERTIUM))
    res = CliRunner().invoke(app, ["validate-scores", str(path), "--submissions", str(dev_folder)])
    assert res.exit_code == 0 and res.output.splitlines() == ["scores-only validation passed: 1 file(s)"]
    # no development card to compare with: passes (as the build keeps it: a withdrawn card keeps its gold row), said
    empty = tmp_path / "none"
    res = CliRunner().invoke(app, ["validate-scores", str(path), "--submissions", str(empty)])
    h = load_card(APERTIUM).run_card_hash[:12]
    assert res.exit_code == 0 and res.output.splitlines() == [
        f"note {path}: its development card {h}… is not under {empty}: method, model and fingerprint not compared "
        "(the board shows no development row for it)", "scores-only validation passed: 1 file(s)"]


def test_development_cards_are_the_sealed_cards_only(tmp_path):
    """:func:`mtboard.validate.scores.development_cards`: sealed cards by run_card_hash; a card changed after sealing,
    a verification record, a symlink, a hidden folder and a non-card file are left out."""
    from mtboard.validate.scores import development_cards

    sub = tmp_path / "submissions" / ES.name
    sub.mkdir(parents=True)
    shutil.copy(APERTIUM, sub / APERTIUM.name)
    data = json.loads(GEMMA.read_bytes())
    data["notes"] = "changed after sealing"
    (sub / GEMMA.name).write_text(json.dumps(data), encoding="utf-8")
    (sub / "x.verification.json").write_bytes(APERTIUM.read_bytes())
    (sub / "link.json").symlink_to(GEMMA)
    (tmp_path / "submissions" / ".hidden").mkdir()
    shutil.copy(GEMMA, tmp_path / "submissions" / ".hidden" / GEMMA.name)
    (sub / "broken.json").write_text("{", encoding="utf-8")
    assert list(development_cards(tmp_path / "submissions")) == [load_card(APERTIUM).run_card_hash]
    assert development_cards(tmp_path / "missing") == {}
