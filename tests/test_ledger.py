"""Issue 31: the board ledger — every row's standing decided once (mtboard/ledger/standing.py) and read by every
surface: the board, the run page's header and verification section, the runs index, the changes page, the CSV/JSON
downloads, leaderboard.json, data/ledger.json and ``mtboard ledger --json``.

Real committed cards throughout. Hand-made variants say so where they are made: a *reproduction* is a committed card
copied with a new run id and a later (or earlier) timestamp and re-sealed — same outputs, same fingerprint, as
``mtboard run`` of the same method on the same engine gives; evidence variants replace a card's verification in
memory.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import gzip
import io
import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mtboard.core import documents
from mtboard.ledger import standing as st
from mtboard.ledger.load import Inputs, LoadedCard, Verification, load_inputs

ROOT = Path(__file__).resolve().parents[1]
ES, CA = "mtb-en-es-dev-v1.0.0", "mtb-en-ca-dev-v1.0.0"
APERTIUM_ES = "mtb-en-es-dev/apertium-eng-spa__default__d0f5919b5569.json"
APERTIUM_CA = "mtb-en-ca-dev/apertium-eng-cat__default__8ca0b3e02be0.json"
APERTIUM_CA_RECORD = "mtb-en-ca-dev/apertium-eng-cat__default__4a1761e82d51.verification.json"
"""The record of the card's re-run, named by the card it verified: the committed card was re-scored since (harness
0.5.0, issue 32) and names that card in ``rescored_from``."""
FSC_EARLY = "mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot-completion__3ddc0a3a1255.json"
FSC_LATE = "mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot-completion__f7c45f8c2b1d.json"


def fresh(inputs: Inputs) -> Inputs:
    """A copy of ``inputs`` whose LoadedCard objects are new (the session's committed_inputs stay untouched: deciding
    sets ``standing`` on each card)."""
    return Inputs(cards=[dataclasses.replace(lc, standing=None) for lc in inputs.cards],
                  rejected=list(inputs.rejected), corpora=list(inputs.corpora), warnings=list(inputs.warnings),
                  anchors=list(inputs.anchors))


def reproduction(src: Path, folder: Path, timestamp: str) -> Path:
    """Hand-made reproduction: the card at ``src`` with a new run id and ``timestamp``, re-sealed, written into
    ``folder`` under its canonical file name (same outputs and fingerprint; declared fields only differ)."""
    from mtboard.validate.naming import canonical_name

    data = json.loads(src.read_text(encoding="utf-8"))
    data["run_id"] = str(uuid.UUID(int=uuid.uuid5(uuid.NAMESPACE_URL, timestamp).int, version=4))
    data["timestamp"] = timestamp
    card = documents.seal(documents.loads_card(json.dumps(data).encode(), str(src)))
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / canonical_name(card)
    documents.write_card(card, dest)
    return dest


def row_of(plans, path: str) -> st.Standing:
    return next(s for p in plans for s in p.rows if path in s.members)


# ----------------------------------------------------------------------------------------------------------------------
# Decisions on the committed cards


@pytest.mark.slow  # a whole-system test: 21 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_committed_rows_have_one_standing_each(committed_inputs):
    inputs = fresh(committed_inputs)
    plans = st.decide(inputs)
    assert [p.key for p in plans] == sorted(p.key for p in plans)
    for p in plans:
        assert len({s.fingerprint for s in p.rows}) == len(p.rows), p.key  # one row per fingerprint
        assert sorted(m for s in p.rows for m in s.members) == sorted(lc.path for lc in p.cards)
    for lc in inputs.cards:
        assert lc.path in lc.standing.members  # every card points at its own row

    ca = row_of(plans, APERTIUM_CA)  # a passed record beside it, no attestation here: ◐, named
    assert (ca.tier, ca.label, ca.icon) == ("rerun-unattested", "maintainer re-run (unattested)", "\u25d0")
    assert [(e.card, e.source, e.attested, e.kind) for e in ca.evidence] == [
        (APERTIUM_CA, APERTIUM_CA_RECORD, False, "verification record")]
    assert ca.ranked and ca.unranked_reason is None and ca.declared and ca.reproduction.text == ""

    # two --limit 20 runs of one method against a server whose answers varied: one row, the disagreement on it
    fsc = row_of(plans, FSC_EARLY)
    assert fsc.members == (FSC_EARLY, FSC_LATE) and fsc.representative == FSC_EARLY  # earliest, same evidence
    assert fsc.reproduction.count == 2 and fsc.reproduction.agree is False
    assert fsc.reproduction.text == "reproductions disagree (0.405 vs 0.353)"
    assert fsc.reproduction.spread == pytest.approx(0.40548 - 0.353454)  # replicate mean of --runs 3
    assert not fsc.ranked and fsc.coverage.text == "20 of 355 subset (--limit 20)"
    assert fsc.unranked_reason == ("subset run: 20 of 355 subset (--limit 20); only runs of the board's whole entry "
                                   "set are ranked")

    echo = row_of(plans, "mtb-en-es-dev/baseline-echo__baseline__32e6f8fa41bf.json")
    assert echo.reference and not echo.ranked and echo.tier == "self-benchmarked"
    gemma = row_of(plans, "mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot__e8d0f7148c86.json")
    assert (gemma.tier, gemma.evidence, gemma.ranked, gemma.coverage.text) == ("self-benchmarked", (), True, "all 355")


def test_a_reproduction_adds_a_member_and_keeps_the_evidence(committed_inputs, tmp_path):
    """After the demo's run of Apertium EN→ES (here: a hand-made reproduction, later or earlier than the verified
    card) the row keeps its re-run evidence, shows the verified card, and says "reproduced ×2"."""
    for stamp in ("2026-12-01T20:00:00Z", "2026-11-01T09:00:00Z"):
        inputs = fresh(committed_inputs)
        src = ROOT / "submissions" / APERTIUM_ES
        path = reproduction(src, tmp_path / stamp[:10], stamp)
        card = documents.load_card(path)
        assert card.fingerprint.hash == documents.load_card(src).fingerprint.hash
        rel = f"mtb-en-es-dev/{path.name}"
        inputs.cards.append(LoadedCard(rel, card, card.run_card_hash[:16],
                                       Verification("self-benchmarked", label="self-benchmarked")))
        row = row_of(st.decide(inputs), APERTIUM_ES)
        assert row.members == ((APERTIUM_ES, rel) if stamp > "2026-12-01T02:16" else (rel, APERTIUM_ES))
        assert row.tier == "rerun-unattested" and row.representative == APERTIUM_ES
        assert [e.card for e in row.evidence] == [APERTIUM_ES]
        assert row.reproduction.text == "reproduced \u00d72" and row.reproduction.agree is True
        assert row.reproduction.spread == 0.0


def _with(lc: LoadedCard, tier: str) -> LoadedCard:
    v = {"gds-verified": Verification("gds-verified", {}, "x.verification.json", attested=True, label="GDS verified"),
         "rerun-unattested": Verification("self-benchmarked", {}, "x.verification.json",
                                          label="maintainer re-run (unattested)"),
         "self-benchmarked": Verification("self-benchmarked", label="self-benchmarked")}[tier]
    return dataclasses.replace(lc, verification=v, standing=None)


def test_the_row_takes_the_best_tier_any_member_earned(committed_inputs, tmp_path):
    """Hand-made evidence: whichever member holds the strongest evidence is shown, the row has its tier, and every
    member's evidence is named; order of the members does not matter."""
    src = ROOT / "submissions" / APERTIUM_ES
    path = reproduction(src, tmp_path, "2026-12-01T23:00:00Z")
    late_card = documents.load_card(path)
    base = next(lc for lc in committed_inputs.cards if lc.path == APERTIUM_ES)
    late = LoadedCard(f"mtb-en-es-dev/{path.name}", late_card, late_card.run_card_hash[:16],
                      base.verification)
    for early_tier, late_tier, want_tier, want_rep in [
            ("rerun-unattested", "gds-verified", "gds-verified", late.path),
            ("gds-verified", "rerun-unattested", "gds-verified", APERTIUM_ES),
            ("self-benchmarked", "self-benchmarked", "self-benchmarked", APERTIUM_ES),
            ("self-benchmarked", "rerun-unattested", "rerun-unattested", late.path)]:
        inputs = fresh(committed_inputs)
        inputs.cards = [c for c in inputs.cards if c.path != APERTIUM_ES]
        inputs.cards += [_with(late, late_tier), _with(base, early_tier)]
        row = row_of(st.decide(inputs), APERTIUM_ES)
        assert (row.tier, row.representative) == (want_tier, want_rep), (early_tier, late_tier)
        assert row.declared == (want_tier not in ("gds-verified", "community-verified"))
        assert sorted(e.tier for e in row.evidence) == sorted(t for t in (early_tier, late_tier)
                                                              if t != "self-benchmarked")


def test_a_board_is_one_dataset_segment(committed_inputs):
    """Board key = dataset id + version + segment (+ corpus hash): a card of another segment of the same dataset
    version is on a board of its own, named with its segment (hand-made: the committed card with another segment).
    The diagnostic segment's plan (the committed diagnostic cards, issue 40 item 6) is always named with its segment
    and renames no development board: it is never a board (mtboard/ledger/diagnostic.py)."""
    keys = [p.key for p in st.decide(fresh(committed_inputs))]
    es_en = "mtb-es-en-dev-v1.0.0"  # a committed diagnostic card beside its development cards
    assert es_en in keys and f"{es_en}-diagnostic" in keys and f"{es_en}-development" not in keys and ES in keys
    inputs = fresh(committed_inputs)
    lc = next(c for c in inputs.cards if c.path == APERTIUM_ES)
    other = lc.card.model_copy(update={"dataset": lc.card.dataset.model_copy(update={"segment": "held_out"})})
    inputs.cards.append(dataclasses.replace(lc, path="x/held.json", card=other, page_id="f" * 16, standing=None))
    keys = [p.key for p in st.decide(inputs)]
    assert "mtb-en-es-dev-v1.0.0-development" in keys and "mtb-en-es-dev-v1.0.0-held_out" in keys
    assert ES not in keys and CA in keys


# ----------------------------------------------------------------------------------------------------------------------
# Every surface reads the standing


def _docs_rows(html: str, attr: str) -> dict[str, str]:
    """``data-<attr>`` of each table row that has one → the first ``data-standing`` in that row (a row's nested
    member table has rows without attributes, so a row runs to the next row that has one)."""
    out = {}
    for chunk in re.split(rf'(?=<tr [^>]*data-{attr}=")', html)[1:]:
        key = re.match(rf'<tr [^>]*data-{attr}="([^"]+)"', chunk)
        tier = re.search(r'data-standing="([^"]+)"', chunk.split("</tbody></table></div>")[0])
        if key and tier:
            out[key.group(1)] = tier.group(1)
    return out


def walk_surfaces(docs: Path, ledger_json: dict) -> int:
    """Check that every surface of a built site's Markdown folder shows each ledger row's tier; returns how many
    (surface, row) pairs were compared."""
    checked = 0
    index = (docs / "runs" / "index.md").read_text(encoding="utf-8")
    changes = (docs / "changes.md").read_text(encoding="utf-8")
    site_rows = json.loads((docs / "leaderboard.json").read_text(encoding="utf-8"))["rows"]
    for b in ledger_json["boards"]:
        board_md = (docs / "leaderboards" / f"{b['key']}.md").read_text(encoding="utf-8")
        on_board = _docs_rows(board_md, "method")
        csv_rows = {r["method_id"]: r for r in csv.DictReader(io.StringIO(
            (docs / "leaderboards" / f"{b['key']}.csv").read_text(encoding="utf-8")))}
        json_rows = {r["method_id"]: r for r in json.loads(
            (docs / "leaderboards" / f"{b['key']}.json").read_text(encoding="utf-8"))["rows"]}
        lb_rows = {r["method_id"]: r for r in site_rows if r["dataset"] == b["dataset_id"]}
        for row in b["rows"]:
            tier, fp = row["tier"], row["fingerprint"][:16]
            assert on_board[fp] == tier, (b["key"], row["method"])
            checked += 1
            if row["ranks"]:  # on the table: the downloads list it
                for rows in (csv_rows, json_rows, lb_rows):
                    assert rows[fp]["verification_tier"] == tier, (b["key"], row["method"])
                    checked += 1
            for m in row["members"]:
                page_id = m["page"].rsplit("/", 1)[-1][:-5]
                run_md = (docs / "runs" / f"{page_id}.md").read_text(encoding="utf-8")
                header, _, rest = run_md.partition("## Entries")
                assert re.search(rf'class="mtb-badge mtb-v-{tier}" data-standing="{tier}"', header), page_id
                section = rest.partition("## Verification")[2].partition("## Community review")[0]
                assert re.search(rf'class="mtb-standing" data-standing="{tier}"', section), page_id
                for listing in (index, changes):
                    tr = re.search(rf'<tr>(?:(?!</tr>).)*(?<![0-9a-f]){page_id}\.(?:md|html)(?:(?!</tr>).)*</tr>', listing, re.S)
                    assert tr and f'data-standing="{tier}"' in tr.group(0), page_id
                checked += 4
    return checked


@pytest.mark.slow  # a whole-system test: 40 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_every_surface_of_the_committed_site_shows_the_ledger_standing(committed_site):
    ledger_json = json.loads((committed_site.docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    rows = [r for b in ledger_json["boards"] for r in b["rows"]]
    assert len(rows) == 51 and sum(len(r["members"]) for r in rows) == committed_site.cards == 52  # + 13 (issue 40)
    assert walk_surfaces(committed_site.docs, ledger_json) > 150
    board = (committed_site.docs / "leaderboards" / f"{ES}.md").read_text(encoding="utf-8")
    # the disagreement is on the row (unranked table), outside any closed panel
    row = re.search(r'<tr data-method="8a68eb02cc[^"]*">.*?</tr>', board, re.S).group(0)
    assert "\u26a0 reproductions disagree (0.405 vs 0.353)" in row and "<details" not in row
    # one row for the pair: 2 cards, the shown card's value (replicate mean of its --runs 3) and the cards' range
    assert "<td>2 <span" in row and "(cards 0.353\u20130.405)" in row and "t 0.7" not in row.split("</td>")[0]
    # the runs index and the changes page show the same composite as the board (replicate mean) and the mark
    for page in ("runs/index.md", "changes.md"):
        listing = (committed_site.docs / page).read_text(encoding="utf-8")
        tr = re.search(r"<tr>(?:(?!</tr>).)*3ddc0a3a1255[0-9a-f]{4}\.(?:md|html)(?:(?!</tr>).)*</tr>", listing,
                       re.S).group(0)
        assert "0.405" in tr and "0.420" not in tr and "reproductions disagree (0.405 vs 0.353)" in tr, page
    # rows that differ only in temperature do not read the same; a phone sees the tier in the method cell
    assert "few-shot-completion \u00b7 few-shot \u00b7 t 0" in board and 'class="mtb-vt-inline"' in board
    # the board's Compare link opens this board
    assert f'compare.md?board={ES}">Compare</a>' in board or f'compare.html?board={ES}">Compare</a>' in board


def test_ledger_json_validates_against_its_exported_schema(committed_site):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "schemas" / "ledger.schema.json").read_text(encoding="utf-8"))
    data = json.loads((committed_site.docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
    from mtboard.core.schema import Ledger

    assert Ledger.model_validate_json(json.dumps(data)).schema_ == "mtboard.ledger/2"
    bad = copy.deepcopy(data)
    bad["boards"][0]["rows"][0]["members"][0]["composite"] = 7.5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)


@pytest.mark.slow  # a whole-system test: 82 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_cli_prints_the_same_ledger_as_the_site(committed_site, build_cache):
    """The CLI's ledger is the site's; the four calls read the build cache the committed site was built with
    (``--cache``), as a maintainer's calls after ``mtboard build`` read .mtboard-cache/: the sentinel lines and
    resampled scores are there already, and nothing new is stored for them (tests/test_ledger_cache.py checks the
    cache changes no value; test_sentinels.py that a sentinel set is stored once)."""
    cache = ["--cache", str(build_cache)]
    stored = sorted((build_cache / "sentinels").glob("*.json"))
    proc = subprocess.run([sys.executable, "-m", "mtboard", "ledger", "--json", "--no-validate", *cache], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    site = json.loads((committed_site.docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    assert cli["boards"] == site["boards"] and cli["build"] == site["build"]

    assert len(stored) >= 9 and sorted((build_cache / "sentinels").glob("*.json")) == stored  # 9 development boards
    proc = subprocess.run([sys.executable, "-m", "mtboard", "ledger", CA, "--row", APERTIUM_CA, "--no-validate",
                           *cache], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "tier         maintainer re-run (unattested) (rerun-unattested)" in out
    assert f"rerun-unattested: verification record {APERTIUM_CA_RECORD} about {APERTIUM_CA}" in out
    # issue 40 item 5: no screen flag on any of its 355 outputs, so the screen-ready score is the composite
    assert "screen-ready 0.585 = the composite: no screen flag in 355 outputs (screen:screen-1)" in out

    proc = subprocess.run([sys.executable, "-m", "mtboard", "ledger", "no-such-board", "--no-validate", *cache],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "no board 'no-such-board'" in proc.stderr and proc.stderr.count("\n") == 1
    # a run id as the site shows it (8 characters) finds its row
    run_id = APERTIUM_ES.rsplit("__", 1)[1][:8]
    proc = subprocess.run([sys.executable, "-m", "mtboard", "ledger", "--row", run_id, "--no-validate", "--json",
                           *cache], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and json.loads(proc.stdout)["representative"] == APERTIUM_ES


@pytest.mark.slow  # a whole-system test: 23 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_after_a_reproduction_every_surface_agrees_and_the_row_says_reproduced(tmp_path, build_cache):
    """Committed cards + a reproduction of the EN→ES Apertium run (hand-made, as the demo's): the site is built again
    (validated) and walked; the committed row keeps its evidence, shows its verified card and "reproduced ×2"."""
    from mtboard.site import build_site

    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    demo = reproduction(ROOT / "submissions" / APERTIUM_ES, subs / "mtb-en-es-dev", "2026-12-01T20:00:00Z")
    report = build_site(subs, ROOT / "corpora", tmp_path / "out", tmp_path / "docs", run_mkdocs=False,
                        resamples=200, build_time="2026-12-02T10:00:00Z", cache=build_cache)
    assert not report.rejected and report.cards == 53  # 52 committed (39 + 13 of issue 40's sweep) + the copy
    docs = tmp_path / "docs"
    ledger_json = json.loads((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    walk_surfaces(docs, ledger_json)
    es = next(b for b in ledger_json["boards"] if b["key"] == ES)
    row = next(r for r in es["rows"] if r["representative"] == APERTIUM_ES)
    assert row["tier"] == "rerun-unattested" and row["reproduction"]["text"] == "reproduced \u00d72"
    assert [m["card"] for m in row["members"]] == [APERTIUM_ES, f"mtb-en-es-dev/{demo.name}"]
    assert row["ranks"][0]["rank"] == "1"
    board = (docs / "leaderboards" / f"{ES}.md").read_text(encoding="utf-8")
    assert "<summary>reproduced \u00d72</summary>" in board
    # compare: one run per method row — never a row against its own reproduction; the reproduction opens its row
    pairs = json.loads((docs / "data" / "pairs" / f"{ES}.json").read_text(encoding="utf-8"))
    demo_id = json.loads(demo.read_text())["run_card_hash"][:16]
    shown_id = json.loads((subs / APERTIUM_ES).read_text())["run_card_hash"][:16]
    assert demo_id not in [r["id"] for r in pairs["runs"]] and pairs["aliases"] == {demo_id: shown_id}
    fps = [tuple(r) for r in json.loads((docs / "data" / "pairs" / pairs["fp"]).read_text(encoding="utf-8"))["runs"]]
    assert len(set(fps)) == len(fps) == len(pairs["runs"])  # deduplicated fingerprints (issue 35 item 1)
    # hard items count methods, not cards; the model page lists the method once
    hard = (docs / "hard" / f"{ES}.md").read_text(encoding="utf-8")
    assert "— 2 non-baseline ranked method(s)" in hard  # Apertium, Gemma few-shot (zero-shot withdrawn: issue 38)
    portrait = next((docs / "models").glob("apertium-eng-spa*.md")).read_text(encoding="utf-8")
    runs = re.findall(r'<tr><td><a href="[^"]*"><bdi class="mtb-name">([^<]*)</bdi></a></td><td>EN\u2192ES</td>'
                      r'<td>(\d+)</td>', portrait)
    # the four Apertium cards of the dialogue-history sweep (issue 40) are EN→ES runs too, on the dialogue corpus
    assert sum("mtb-en-es-dialogue" in name for name, _ in runs) == 4
    runs = [r for r in runs if "mtb-en-es-dialogue" not in r[0]]
    assert runs == [("apertium:eng-spa \u00b7 default on mtb-en-es-dev v1.0.0 (reproduced \u00d72)", "355"),
                    ("apertium:eng-spa \u00b7 default on mtb-en-es-dev v1.0.0", "20")]  # the --limit 20 row


# ----------------------------------------------------------------------------------------------------------------------
# Changes as a ledger diff, the Atom feed, the board's history


def new_engine_card(folder: Path) -> Path:
    """Hand-made new method row: the committed EN→ES Apertium card as a newer Apertium release would make it (another
    ``engine_version`` fingerprint component, identical outputs), fingerprint and seal recomputed."""
    from mtboard.core import canonical

    data = json.loads((ROOT / "submissions" / APERTIUM_ES).read_text(encoding="utf-8"))
    comps = data["fingerprint"]["components"]
    comps["engine_version"] = "apertium 3.9.0-1; apertium-eng-spa 0.8.2-1"
    data["fingerprint"]["hash"] = canonical.fingerprint_hash(comps, data["fingerprint"]["version"])
    data["run_id"] = "0b9f3c2e-5a1d-4c7e-9f00-6d2a1b3c4d5e"
    data["timestamp"] = "2026-12-01T08:00:00Z"
    from mtboard.validate.naming import canonical_name

    card = documents.seal(documents.loads_card(json.dumps(data).encode(), "new"))
    dest = folder / canonical_name(card)
    documents.write_card(card, dest)
    return dest


def _build(subs: Path, out: Path, cache: Path, validate: bool = False, **kw):
    """The site of ``subs`` without MkDocs, reading and filling the run's shared build cache (tests/conftest.py)."""
    from mtboard.site import build_site

    return build_site(subs, ROOT / "corpora", out / "out", out / "docs", run_mkdocs=False, validate=validate,
                      resamples=200, cache=cache, **kw)


@pytest.mark.slow  # a whole-system test: 20 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_changes_page_is_the_ledger_diff_between_two_builds(tmp_path, build_cache):
    """Committed cards, then committed + one new card: the changes page (and data/changes.json, the Atom feed and
    the build's summary) show exactly that card as a new row, and the rank change it causes."""
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    _build(subs, tmp_path / "a", build_cache, build_time="2026-12-01T00:00:00Z")
    previous = tmp_path / "a" / "docs" / "data" / "ledger.json"
    new = new_engine_card(subs / "mtb-en-es-dev")
    report = _build(subs, tmp_path / "b", build_cache, build_time="2026-12-02T00:00:00Z", previous=previous)
    docs = tmp_path / "b" / "docs"
    changes = json.loads((docs / "data" / "changes.json").read_text(encoding="utf-8"))["changes"]
    fp = json.loads(new.read_text())["fingerprint"]["hash"]
    assert [(c["kind"], c["board"], c["card"]) for c in changes if c["kind"] == "new row"] == [
        ("new row", ES, f"mtb-en-es-dev/{new.name}")]
    assert next(c for c in changes if c["kind"] == "new row")["fingerprint"] == fp
    # the same composite as the committed Apertium row: the two share a rank range now
    moved = [(c["method"], c["before"], c["after"]) for c in changes if c["kind"] == "rank change"]
    assert ("apertium:eng-spa \u00b7 default", "1", "1\u20132") in moved
    assert {c["kind"] for c in changes} == {"new row", "rank change"}  # nothing else moved
    assert report.changes and report.changes[0].startswith(f"new row: {ES} \u00b7 apertium:eng-spa")
    page = (docs / "changes.md").read_text(encoding="utf-8")
    section = page.partition("## New rows")[2].partition("## Rank changes")[0]
    assert section.count('data-change="new row"') == 1 and fp[:16] in section
    assert page.partition("## Subset runs")[2].partition("## Every run card")[0].strip().endswith("None.</p>")
    # the Atom feed (RFC 4287) parses and has one entry per change
    from xml.etree import ElementTree as ET

    feed = ET.fromstring((docs / "changes.xml").read_text(encoding="utf-8"))
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert feed.tag == "{http://www.w3.org/2005/Atom}feed" and feed.find("a:updated", ns).text == "2026-12-02T00:00:00Z"
    titles = [e.find("a:title", ns).text for e in feed.findall("a:entry", ns)]
    assert len(titles) == len(changes) and titles[0] == f"new row: apertium:eng-spa \u00b7 default on {ES}"

    # without --previous every row is new; a file that is not a ledger is refused with one line naming it
    from mtboard.core.errors import InputError

    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "mtboard.ledger/1"}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        _build(subs, tmp_path / "c", build_cache, previous=bad)
    line = err.value.one_line()
    assert line.startswith(f"{bad}: --previous: not a published ledger: $.build: Field required")
    assert "mtboard schema ledger" in line and "run-card" not in line and "\n" not in line


@pytest.mark.slow  # a whole-system test: 34 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_history_publishes_every_snapshot_under_a_permanent_name(tmp_path, build_cache):
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    _build(subs, tmp_path / "a", build_cache, build_time="2026-12-01T00:00:00Z")
    snaps = tmp_path / "snapshots"
    snaps.mkdir()
    old = json.loads((tmp_path / "a" / "docs" / "data" / "ledger.json").read_text(encoding="utf-8"))
    shutil.copy(tmp_path / "a" / "docs" / "data" / "ledger.json", snaps / "whatever-name.json")
    (snaps / "junk.json").write_text("{not json", encoding="utf-8")
    new_engine_card(subs / "mtb-en-es-dev")
    report = _build(subs, tmp_path / "b", build_cache, build_time="2026-12-02T00:00:00Z", snapshots=snaps)
    docs = tmp_path / "b" / "docs"
    index = json.loads((docs / "data" / "snapshots" / "index.json").read_text(encoding="utf-8"))["snapshots"]
    cur = json.loads((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in index] == [f"2026-12-02-{cur['build']}", f"2026-12-01-{old['build']}"]
    # issue 35: this build's snapshot is gzip, byte for byte the published ledger inside; the earlier one was read
    # from a .json file and keeps that permalink
    assert [s["file"] for s in index] == [f"data/snapshots/2026-12-02-{cur['build']}.json.gz",
                                          f"data/snapshots/2026-12-01-{old['build']}.json"]
    current = (docs / "data" / "snapshots" / f"2026-12-02-{cur['build']}.json.gz").read_bytes()
    assert current[:2] == b"\x1f\x8b" and gzip.decompress(current) == (docs / "data" / "ledger.json").read_bytes()
    assert not (docs / "data" / "snapshots" / f"2026-12-02-{cur['build']}.json").exists()
    assert json.loads((docs / "data" / "snapshots" / f"2026-12-01-{old['build']}.json").read_text()) == old
    history = (docs / "history.md").read_text(encoding="utf-8")
    assert f"2026-12-02-{cur['build']}.json.gz\">JSON (gzip)</a>" in history
    assert f"2026-12-01-{old['build']}.json\">JSON</a>" in history
    # the next build reads the compressed snapshot back (the site workflow fetches the index's "file")
    shutil.copy(docs / "data" / "snapshots" / f"2026-12-02-{cur['build']}.json.gz", snaps)
    report = _build(subs, tmp_path / "d", build_cache, build_time="2026-12-03T00:00:00Z", snapshots=snaps)
    files = [s["file"] for s in json.loads((tmp_path / "d" / "docs" / "data" / "snapshots" / "index.json")
                                           .read_text(encoding="utf-8"))["snapshots"]]
    assert files[1:] == [f"data/snapshots/2026-12-02-{cur['build']}.json.gz",
                         f"data/snapshots/2026-12-01-{old['build']}.json"], files
    assert (tmp_path / "d" / "docs" / "data" / "snapshots" / f"2026-12-02-{cur['build']}.json.gz").read_bytes() \
        == current
    page = (docs / "history" / f"2026-12-01-{old['build']}.md").read_text(encoding="utf-8")
    assert "# Board as of 2026-12-01" in page and old["build"] in page
    assert any("snapshot skipped" in w and "junk.json" in w for w in report.warnings)
    # a snapshot whose build id or date would make a path (reviewer's finding) is refused, and nothing is written
    # outside the docs folder
    evil = dict(old, build="x/../../../../../../../../" + str(tmp_path / "PWNED").lstrip("/"))
    (snaps / "evil.json").write_text(json.dumps(evil), encoding="utf-8")
    report = _build(subs, tmp_path / "c", build_cache, build_time="2026-12-02T00:00:00Z", snapshots=snaps)
    assert any("evil.json" in w and "--snapshots" in w and "$.build" in w for w in report.warnings)
    assert not list(tmp_path.glob("PWNED*"))
    from mtboard.core.errors import ConfigError
    from mtboard.site.build import _write

    with pytest.raises(ConfigError, match="leaves the docs folder"):
        _write(tmp_path / "c" / "docs", "history/../../../x.md", "")


# ----------------------------------------------------------------------------------------------------------------------
# Evidence survives a re-score


def directly_verified_ca(subs: Path) -> tuple[Path, object]:
    """Hand-made: the committed EN→CA Apertium card without its lineage (re-sealed, filed under its new name) and the
    committed record re-pointed at it — the card as the maintainer's re-run verified it directly."""
    card = documents.load_card(subs / APERTIUM_CA)
    direct = documents.seal(card.model_copy(update={"rescored_from": []}))
    return _file_in_place_of_the_committed_ca(subs, direct), direct


def _file_in_place_of_the_committed_ca(subs: Path, card) -> Path:
    """File ``card`` in place of the committed EN→CA Apertium card (at its canonical name) and move the committed
    record beside it, re-pointed at it (its seal, fingerprint and path). Returns the card's path."""
    from mtboard.validate.naming import canonical_name

    committed = subs / APERTIUM_CA
    committed.unlink()
    path = committed.with_name(canonical_name(card))
    documents.write_card(card, path)
    rec_src = subs / APERTIUM_CA_RECORD
    rec = json.loads(rec_src.read_text(encoding="utf-8"))
    rec.update(run_card_hash=card.run_card_hash, card_fingerprint=card.fingerprint.hash,
               card_path=path.relative_to(subs.parent).as_posix())
    rec_src.unlink()
    path.with_name(path.name[:-5] + ".verification.json").write_text(json.dumps(rec), encoding="utf-8")
    return path


def older_scorer_card(subs: Path) -> tuple[Path, object]:
    """Hand-made: the committed EN→CA Apertium card as an older harness (0.3.9) would have sealed it (its
    ``harness_version`` and that fingerprint component changed, re-sealed), filed in its place, with the committed
    record re-pointed at it (its seal and fingerprint) — the state of the repository before a harness bump."""
    from mtboard.core import canonical

    data = json.loads((subs / APERTIUM_CA).read_text(encoding="utf-8"))
    data.pop("rescored_from", None)  # the committed card was itself re-scored (harness 0.5.0); the older one was not
    data["harness_version"] = data["fingerprint"]["components"]["harness_version"] = "0.3.9"
    data["fingerprint"]["hash"] = canonical.fingerprint_hash(data["fingerprint"]["components"],
                                                             data["fingerprint"]["version"])
    old = documents.seal(documents.loads_card(json.dumps(data).encode(), "old"))
    return _file_in_place_of_the_committed_ca(subs, old), old


@pytest.mark.slow  # a whole-system test: 32 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_a_rescored_card_keeps_its_re_run_evidence_on_every_surface(tmp_path, build_cache):
    """After a harness bump, a card re-scored with the real ``mtboard rescore`` and filed in place of the old one (the
    old card gone, its record left where it was) names the old card (``rescored_from``), validates, and its row keeps
    the maintainer re-run evidence on every surface: the record of the card it was re-scored from."""
    from mtboard.validate.naming import canonical_name

    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    old, old_card = older_scorer_card(subs)
    proc = subprocess.run([sys.executable, "-m", "mtboard", "rescore", str(old), "--out", str(tmp_path / "r.json"),
                           "--corpora", str(ROOT / "corpora")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    new_card = documents.load_card(tmp_path / "r.json")
    assert [a.run_card_hash for a in new_card.rescored_from] == [old_card.run_card_hash]
    assert new_card.rescored_from[0].fingerprint_hash == old_card.fingerprint.hash
    assert new_card.harness_version != "0.3.9" and new_card.run_card_hash != old_card.run_card_hash
    committed = documents.load_card(ROOT / "submissions" / APERTIUM_CA)
    assert new_card.scores == committed.scores and new_card.fingerprint == committed.fingerprint
    old.unlink()
    dest = old.with_name(canonical_name(new_card))
    shutil.copy(tmp_path / "r.json", dest)
    # a junk record naming the same seal, sorted first, does not shadow the real one
    junk = subs / "mtb-en-ca-dev" / "aaa.verification.json"
    junk.write_text(json.dumps({"run_card_hash": old_card.run_card_hash, "passed": True}), encoding="utf-8")
    report = _build(subs, tmp_path / "site", build_cache, build_time="2026-12-01T12:00:00Z", validate=True)
    assert not report.rejected, report.rejected
    docs = tmp_path / "site" / "docs"
    ledger_json = json.loads((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    walk_surfaces(docs, ledger_json)
    ca = next(b for b in ledger_json["boards"] if b["key"] == CA)
    row = next(r for r in ca["rows"] if r["representative"] == f"mtb-en-ca-dev/{dest.name}")
    assert row["tier"] == "rerun-unattested"
    assert [(e["source"], e["rescored_from"]) for e in row["evidence"]] == [
        (f"mtb-en-ca-dev/{old.name[:-5]}.verification.json", old_card.run_card_hash)]
    page = (docs / "runs" / f"{new_card.run_card_hash[:16]}.md").read_text(encoding="utf-8")
    assert f"re-scored from, <code>{old_card.run_card_hash[:12]}</code>" in page
    # rescoring a card under the harness that made it moves nothing: the same card, no lineage
    proc = subprocess.run([sys.executable, "-m", "mtboard", "rescore", str(dest), "--out", str(tmp_path / "s.json"),
                           "--corpora", str(ROOT / "corpora")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and (tmp_path / "s.json").read_bytes() == dest.read_bytes()


@pytest.mark.slow  # 2.8 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_lineage_counts_only_for_the_same_method_with_the_same_scores(tmp_path):
    """What a card cannot borrow (hand-made claims): another method's record, and a record whose re-run scores no
    longer agree with the card's."""
    from mtboard.core.schema import Ancestor, VerificationRecord
    from mtboard.ledger.load import lineage_problem

    apertium = documents.load_card(ROOT / "submissions" / APERTIUM_CA)
    record = VerificationRecord.model_validate_json(
        (ROOT / "submissions" / APERTIUM_CA_RECORD).read_bytes())
    # the committed card was re-scored twice (harness 0.5.0, 0.6.0); the first ancestor is the card the record verified
    (ancestor,) = [a for a in apertium.rescored_from if a.run_card_hash == record.run_card_hash]
    assert ancestor.run_card_hash == record.run_card_hash and isinstance(ancestor, Ancestor)
    assert lineage_problem(apertium, ancestor, record) is None
    gemma = documents.load_card(ROOT / "submissions" / "mtb-en-ca-dev" /
                                "gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json")
    why = lineage_problem(gemma, ancestor, record)
    assert why is not None and why.startswith("another method than the re-scored card:") and "model_slug" in why
    drifted = record.model_copy(update={"deltas": [d.model_copy(update={"rerun": d.rerun * 1.05})
                                                   if d.metric == "composite" else d for d in record.deltas]})
    why = lineage_problem(apertium, ancestor, drifted)
    assert why is not None and why.startswith("composite 0.584633 no longer agrees with the re-run's")
    lying = ancestor.model_copy(update={"fingerprint_hash": "0" * 64})
    assert lineage_problem(apertium, lying, record) == "the ancestor's fingerprint does not hash to its components"

    # a card of another method claiming the Apertium card's lineage gets nothing on the board, and says why
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    path = subs / "mtb-en-ca-dev" / "gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json"
    claim = documents.seal(gemma.model_copy(update={"rescored_from": [ancestor]}))
    documents.write_card(claim, path)
    inputs = load_inputs(subs, ROOT / "corpora", validate=False)
    lc = next(c for c in inputs.cards if c.card.run_card_hash == claim.run_card_hash)
    assert lc.verification.label == "self-benchmarked" and lc.verification.via is None
    assert "re-scored from does not count: another method" in lc.verification.problem


@pytest.mark.slow  # 4.9 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_resealed_edit_accepted_as_declared_shows_as_declared(tmp_path):
    """Editing a declared field (here the model identity) and re-sealing is accepted by the validator — declared
    values are the contributor's word — and the ledger shows exactly that: the edited card loses the re-run evidence
    of the card it was (the record names the old seal) and its row's values are declared."""
    from mtboard import validate as V

    from mtboard.validate.naming import canonical_name

    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    path, card = directly_verified_ca(subs)
    row = row_of(st.decide(load_inputs(subs, ROOT / "corpora", validate=False)), f"mtb-en-ca-dev/{path.name}")
    assert row.tier == "rerun-unattested"  # before the edit: the record beside it counts
    edited = documents.seal(card.model_copy(update={"model_id": "apertium/eng-cat-but-better"}))
    path.unlink()
    path = path.with_name(canonical_name(edited))  # filed where `mtboard submit` puts it; the record stays
    documents.write_card(edited, path)
    report = V.validate_card(path, V.make_context(tmp_path, ROOT / "corpora"))
    assert report.ok, [str(p) for p in report.problems]
    inputs = load_inputs(subs, ROOT / "corpora", validate=False)
    rel = f"mtb-en-ca-dev/{path.name}"
    row = row_of(st.decide(inputs), rel)
    assert (row.tier, row.evidence, row.declared, row.members) == ("self-benchmarked", (), True, (rel,))
    # and the old card's record, left behind, names a seal no card on the board has: it counts for nothing
    assert all(not s.evidence for p in st.decide(inputs) if p.key == CA for s in p.rows)


def test_the_attested_tier_rests_on_a_real_sigstore_bundle(tmp_path, monkeypatch, build_cache):
    """✔ GDS verified needs an attestation that verifies. The bundle is a real public one (tests/fixtures/attestation:
    GitHub CLI's test data, made by GitHub Actions, logged in Rekor); mtboard.verify.attestation checks its signature,
    certificate chain, transparency-log entry, signer identity and run for real, offline. Two substitutions, because
    no GitHub workflow here can attest a record of ours: the digest it attests stands for the record file's, and the
    expected signer is the fixture's workflow. A bundle with one byte changed leaves the row ◐."""
    import hashlib as real_hashlib

    from mtboard.verify import record as vr
    from mtboard.verify.attestation import ExpectedSigner

    fix = ROOT / "tests" / "fixtures" / "attestation"
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    rec_path = subs / APERTIUM_CA_RECORD
    rec = json.loads(rec_path.read_text(encoding="utf-8"))
    rec.update(repository="malancas/attest-demo", run_id="9228858953", run_attempt=1,
               workflow_commit="95baf27389e83e6a5c48f42e190d48d7abcea19e", started_at="2026-12-01T02:00:00Z")
    rec_path.write_text(json.dumps(rec), encoding="utf-8")
    raw = rec_path.read_bytes()
    bundle = (fix / "reusable-workflow-attestation.sigstore.json").read_bytes()
    Path(str(rec_path) + ".sigstore").write_bytes(bundle)
    artifact_sha = real_hashlib.sha256((fix / "reusable-workflow-artifact").read_bytes()).hexdigest()

    class _Digest:  # the record's bytes stand for the attested artifact; every other digest is the real one
        def sha256(self, data=b""):
            if data == raw:
                return type("D", (), {"hexdigest": lambda _self: artifact_sha})()
            return real_hashlib.sha256(data)

    monkeypatch.setattr(vr, "hashlib", _Digest())
    signer = ExpectedSigner(repository="malancas/attest-demo", workflow=".github/workflows/shared.yml",
                            ref="refs/heads/main",
                            signer="https://github.com/github/artifact-attestations-workflows/.github/workflows/"
                                   "attest.yml@09b495c3f12c7881b3cc17209a327792065c1a1d")
    monkeypatch.setattr(vr, "expected_signer", lambda *a, **k: signer)

    report = _build(subs, tmp_path / "site", build_cache, build_time="2026-12-01T12:00:00Z",
                    attestation_repository="malancas/attest-demo")
    assert not report.rejected
    docs = tmp_path / "site" / "docs"
    ledger_json = json.loads((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    walk_surfaces(docs, ledger_json)
    ca = next(b for b in ledger_json["boards"] if b["key"] == CA)
    row = next(r for r in ca["rows"] if r["representative"] == APERTIUM_CA)
    assert (row["tier"], row["tier_label"], row["declared"]) == ("gds-verified", "GDS verified", False)
    assert [(e["attested"], e["source"]) for e in row["evidence"]] == [(True, rec_path.relative_to(subs).as_posix())]

    import base64

    tampered = json.loads(bundle)
    sig = bytearray(base64.b64decode(tampered["dsseEnvelope"]["signatures"][0]["sig"]))
    sig[10] ^= 1  # one bit of the signature
    tampered["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    Path(str(rec_path) + ".sigstore").write_text(json.dumps(tampered), encoding="utf-8")
    inputs = load_inputs(subs, ROOT / "corpora", validate=False, attestation_repository="malancas/attest-demo")
    assert row_of(st.decide(inputs), APERTIUM_CA).tier == "rerun-unattested"
