"""The diagnostic boards (issue 40 item 6; spec §2.3): one per corpus with a diagnostic segment, built from the cards
run on that segment, never ranked and never mixed into the development boards.

Hand-checked values (the committed Apertium spa-eng diagnostic card of ES→EN, 24 entries; the ledger computes them
from the card's stored statistics, the test from its texts with sacrebleu): chrF++ 57.196710 (sacrebleu
``corpus_chrf``, ``word_order=2``), composite 0.532806 (the card's own, since it evaluated the diagnostic entries
alone), 9 entries where the mechanical ``placeholder`` rule fired, 0 failures; per domain chrF++ literary 54.0,
medical 66.6, ui 57.4. The CA→EN card (cat-eng): chrF++ 54.950398, 12 placeholder flags.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import sacrebleu

from conftest import ROOT
from mtboard.core.documents import load_card
from mtboard.core.schema import Segment
from mtboard.ledger.build import build_ledger
from mtboard.ledger.diagnostic import EMPTY, PURPOSE
from mtboard.ledger.document import to_document
from mtboard.validate.submission import CHECKS

ES_EN = "mtb-es-en-dev-v1.0.0"
APERTIUM_DIAG = "mtb-es-en-dev/apertium-spa-eng__default__14175b9b61b7.json"
CA_DIAG = "mtb-ca-en-dev/apertium-cat-eng__default__df8d27cbc316.json"
DIAG_CARDS = {APERTIUM_DIAG, CA_DIAG}


def _ledger(site) -> dict:
    return json.loads((site.out / "data" / "ledger.json").read_text(encoding="utf-8"))


def _corpora_with_diagnostic() -> dict[str, int]:
    out = {}
    for path in sorted((ROOT / "corpora").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        n = sum(e["segment"] == "diagnostic" for e in doc["entries"])
        if n:
            out[f"{doc['dataset']['id']}-v{doc['dataset']['version']}"] = n
    return out


def test_the_committed_diagnostic_cards_are_what_the_test_reads():
    found = {p.relative_to(ROOT / "submissions").as_posix() for p in (ROOT / "submissions").glob("*/*.json")
             if not p.name.endswith(".verification.json")
             and json.loads(p.read_text(encoding="utf-8"))["dataset"]["segment"] == "diagnostic"}
    assert found == DIAG_CARDS


def test_every_corpus_with_a_diagnostic_segment_has_a_diagnostic_board(committed_site):
    expected = _corpora_with_diagnostic()
    # the eight development corpora have 24 diagnostic entries each; the Wesnoth dialogue corpora (issue 40 item 1)
    # 13 (EN→ES) and 10 (JA→EN: placeholder lines whose Japanese keeps the placeholder), corpora/SOURCES.md
    assert len(expected) == 10 and sorted(expected.values()) == [10, 13] + [24] * 8
    ledger = _ledger(committed_site)
    boards = {b["key"]: b for b in ledger["boards"]}
    # the diagnostic cards made no board of their own, renamed none; the JA→EN dialogue corpus has no card yet, so no
    # development board, yet its diagnostic board is built (every corpus with a diagnostic segment)
    assert set(boards) == set(expected) - {"mtb-ja-en-dialogue-v1.0.0"}
    assert {d["key"] for d in ledger["diagnostic"]} == set(expected)
    for key, n in expected.items():
        d = next(d for d in ledger["diagnostic"] if d["key"] == key)
        assert d["entries"] == n and sum(d["groups"].values()) == n
        page = (committed_site.out / "diagnostic" / f"{key}.html").read_text(encoding="utf-8")
        assert "data-diagnostic-purpose" in page and PURPOSE.split(":")[0] in page
        if key not in boards:
            assert d["board"] is None and "the development board</a>" not in page
            continue
        assert boards[key]["diagnostic"] == key and d["board"] == key
        board_page = (committed_site.out / "leaderboards" / f"{key}.html").read_text(encoding="utf-8")
        assert f'href="../diagnostic/{key}.html" data-diagnostic-link' in board_page
        if not d["rows"]:
            assert EMPTY in page
    index = (committed_site.out / "diagnostic" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{key}.html"' in index for key in expected)
    # in the navigation as the boards are (the Leaderboards tab's Diagnostic section: the index, then each board), so
    # in the search index and, with a site URL, the sitemap MkDocs writes from the same pages. The navigation is
    # pruned (navigation.prune, issue 35): a page holds its own section's links, another section is one link to its
    # first page — the home page links the Leaderboards section, a board page the Diagnostic index, and a page of
    # the Diagnostic section every diagnostic board
    def nav(page: str) -> str:
        text = (committed_site.out / page).read_text(encoding="utf-8")
        return text[text.index("md-nav--primary"):text.index("md-sidebar--secondary")]

    assert 'href="leaderboards/index.html"' in nav("index.html")
    assert 'href="../diagnostic/index.html"' in nav("leaderboards/index.html")
    assert all(f'href="{key}.html"' in nav("diagnostic/index.html") for key in expected)
    search = json.loads((committed_site.out / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert {f"diagnostic/{key}.html" for key in expected} <= {d["location"].split("#")[0] for d in search["docs"]}


def test_rows_come_from_the_diagnostic_cards_with_their_standing(committed_site):
    d = {x["key"]: x for x in _ledger(committed_site)["diagnostic"]}
    assert [(r["representative"], r["listed"], r["reference"], r["tier"]) for r in d[ES_EN]["rows"]] == [
        (APERTIUM_DIAG, True, False, "self-benchmarked")]
    assert [r["representative"] for r in d["mtb-ca-en-dev-v1.0.0"]["rows"]] == [CA_DIAG]
    # sorted keys: ca-en-dev, en-ca-dev, en-de-dev, en-es-dev, en-es-dialogue, en-fr-dev, en-ja-dev, es-en-dev, ja-en-dev,
    # ja-en-dialogue
    assert [len(d[k]["rows"]) for k in sorted(d)] == [1, 0, 0, 0, 0, 0, 0, 1, 0, 0]
    ca = d["mtb-ca-en-dev-v1.0.0"]["rows"][0]
    assert (round(ca["chrf"], 6), ca["composite"], ca["placeholder_flags"], ca["failures"]) == (54.950398, 0.521576,
                                                                                               12, 0)
    assert ca["outcomes"] == {"usable": 24, "no_usable_output": 0, "source_untranslated": 0}


@pytest.mark.slow  # a whole-system test: 25 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_a_reference_baseline_and_a_partial_run_are_listed_apart(committed_inputs, build_cache):
    """Standing read from the ledger: an echo baseline run on the diagnostic segment is a reference row (apart, never
    in diagnostic order); a run on part of the segment is apart with its coverage (hand-made: the committed
    diagnostic card cut to its first 12 entries and given ``--limit 12``, and the ES→EN echo card's outputs)."""
    inputs = dataclasses.replace(committed_inputs, cards=list(committed_inputs.cards))
    lc = next(c for c in inputs.cards if c.path == APERTIUM_DIAG)
    part = lc.card.model_copy(update={"results": lc.card.results[:12],
                                      "dataset": lc.card.dataset.model_copy(update={"entry_count": 12}),
                                      "method": lc.card.method.model_copy(update={"limit": 12})})
    part = part.model_copy(update={"fingerprint": part.fingerprint.model_copy(update={"hash": "e" * 64})})
    inputs.cards.append(dataclasses.replace(lc, path="x/part.json", card=part, page_id="e" * 16, standing=None))
    ledger = build_ledger(inputs, resamples=50, cache=build_cache)
    db = next(d for d in ledger.diagnostic if d.key == ES_EN)
    assert [(r.lc.path, r.listed) for r in db.rows] == [(APERTIUM_DIAG, True), ("x/part.json", False)]
    apart = db.rows[1]
    assert apart.standing.coverage.text == "12 of 24 subset (--limit 12)" and apart.n == 12
    from mtboard.site.diagnostic import page_context
    ctx = page_context(db)
    assert [x["reason"] for x in ctx["apart"]] == ["part of the segment: 12 of 24 subset (--limit 12)"]
    assert [x["method"] for x in ctx["listed"]] == ["apertium:spa-eng \u00b7 default"]


def test_a_rows_diagnostic_chrf_is_sacrebleus_over_the_cards_24_diagnostic_entries(committed_site):
    card = load_card(ROOT / "submissions" / APERTIUM_DIAG)
    diag = [r for r in card.results if r.segment == Segment.diagnostic]
    assert len(diag) == 24 and all(r.checks.outcome == "usable" for r in diag)
    expected = sacrebleu.corpus_chrf([r.predicted for r in diag], [[r.expected for r in diag]], word_order=2).score
    row = next(r for d in _ledger(committed_site)["diagnostic"] for r in d["rows"]
               if r["representative"] == APERTIUM_DIAG)
    assert row["chrf"] == pytest.approx(expected, abs=1e-9)
    assert round(expected, 6) == 57.19671
    assert row["chrf"] == pytest.approx(card.scores.chrf_plus_plus, abs=1e-9)  # the card scored only these entries
    assert row["composite"] == pytest.approx(card.scores.composite, abs=1e-6) and row["composite"] == 0.532806
    lo, hi = row["chrf_ci"]
    assert lo < row["chrf"] < hi and hi - lo < 15  # 24 entries: a wide interval
    assert (row["entries"], row["failures"], row["placeholder_flags"]) == (24, 0, 9)
    by_group = {g["group"]: (g["entries"], round(g["chrf"], 1)) for g in row["groups"]}
    assert by_group == {"literary": (8, 54.0), "medical": (8, 66.6), "ui": (8, 57.4)}
    for group, (n, _) in by_group.items():  # each group's chrF++ is sacrebleu's over that domain's entries
        part = [r for r in diag if r.domain == group]
        ref = sacrebleu.corpus_chrf([r.predicted for r in part], [[r.expected for r in part]], word_order=2).score
        assert len(part) == n and next(g["chrf"] for g in row["groups"] if g["group"] == group) == \
            pytest.approx(ref, abs=1e-9)
    page = (committed_site.out / "diagnostic" / f"{ES_EN}.html").read_text(encoding="utf-8")
    assert "57.2 +5.9/\u22124.5" in page and "0.533 +0.053/\u22120.039" in page


def test_the_diagnostic_page_shows_no_development_rank(committed_site):
    page = (committed_site.out / "diagnostic" / f"{ES_EN}.html").read_text(encoding="utf-8")
    table = page[page.index(f'data-diagnostic-board="{ES_EN}"'):]
    table = table[:table.index("</table>")]
    headers = re.findall(r'<th scope="col">(.*?)</th>', table)
    assert [re.sub(r"<[^>]+>", "", h) for h in headers] == [
        "Method", "Composite (diag.)", "chrF++ (diag.)", "Failures", "Placeholder flags", "chrF++ literary (8)",
        "chrF++ medical (8)", "chrF++ ui (8)", "Entries", "Verification"]
    body = table[table.index("<thead>"):]  # the caption says "no rank"; no header or cell holds one
    assert not re.search(r"\brank", body, re.I)
    # the development board's rank labels of these methods appear nowhere on the page
    board = next(b for b in _ledger(committed_site)["boards"] if b["key"] == ES_EN)
    assert "mtb-rank" not in page and "rank_lo" not in page
    assert board["rows"][0]["ranks"][0]["rank"] not in re.sub(r"<[^>]+>", " ", table).split()


def test_the_development_boards_are_what_they_were_without_the_diagnostic_cards(committed_inputs, build_cache):
    """Ranks, values and rows of every development board equal the ledger built without the diagnostic cards."""
    without = dataclasses.replace(committed_inputs, cards=[lc for lc in committed_inputs.cards
                                                           if lc.card.dataset.segment != Segment.diagnostic])
    assert len(committed_inputs.cards) - len(without.cards) == len(DIAG_CARDS)
    before = to_document(build_ledger(without, resamples=200, cache=build_cache), "2026-12-01T00:00:00Z")
    after = to_document(build_ledger(committed_inputs, resamples=200, cache=build_cache), "2026-12-01T00:00:00Z")
    assert before.build == after.build  # the build id hashes the boards' cards: none added
    strip = lambda doc: [b.model_dump(mode="json", exclude={"diagnostic"}) for b in doc.boards]  # noqa: E731
    assert strip(before) == strip(after)
    assert [b.diagnostic for b in before.boards] == [b.key for b in before.boards]  # empty diagnostic boards
    assert len(before.diagnostic) == 10 and not any(d.rows for d in before.diagnostic)
    assert not {r.representative for b in after.boards for r in b.rows} & DIAG_CARDS


def test_main_board_order_is_the_one_before_issue_40(committed_site):
    """The EN→ES board's ranked rows, in order with their composites, as main (8a870b3) published them."""
    board = next(b for b in _ledger(committed_site)["boards"] if b["key"] == "mtb-en-es-dev-v1.0.0")
    ranked = [(r["fingerprint"][:12], r["ranks"][0]["rank"], r["ranks"][0]["composite"]) for r in board["rows"]
              if r["ranked"] and not r["reference"]]
    assert ranked == MAIN_EN_ES


def test_the_development_only_rule_admits_a_diagnostic_card_alone():
    check = CHECKS["development-only"]
    card = load_card(ROOT / "submissions" / APERTIUM_DIAG)
    assert check(card, None) == (True, "24 diagnostic entries")
    mixed = card.model_copy(update={"dataset": card.dataset.model_copy(update={"segment": Segment.development})})
    assert check(mixed, None) == (False, "results from the diagnostic segment(s) in a development card")
    held = card.model_copy(update={"dataset": card.dataset.model_copy(update={"segment": Segment.held_out})})
    assert check(held, None)[0] is False


def test_the_run_page_links_the_diagnostic_board(committed_site):
    ledger = _ledger(committed_site)
    board = next(b for b in ledger["boards"] if b["key"] == "mtb-en-es-dev-v1.0.0")
    page = board["rows"][0]["members"][0]["page"]
    html = (committed_site.out / page).read_text(encoding="utf-8")
    assert 'data-diagnostic-link' in html and 'href="../diagnostic/mtb-en-es-dev-v1.0.0.html"' in html


MAIN_EN_ES = [("4c99b7a94f90", "1", 0.570035), ("0e913998173a", "2", 0.457746)]
"""main at 8a870b3, before the diagnostic cards: the EN→ES board's ranked rows (fingerprint prefix, rank, composite)."""
