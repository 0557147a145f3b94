"""Boards half of issue 12: one row per method, CI display, downloads, charts, methodology sources, sub-path serving.

Cards are the hand-made fixtures of tests/test_site_cards.py (real scoring over hand-typed outputs); the second
gemma-chat card below is the same method re-run (same fingerprint, another run id and date).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from mtboard.core.documents import card_bytes
from mtboard.site import boardpages, boards, build_site, charts
from mtboard.validate import canonical_relpath

sys.path.insert(0, str(Path(__file__).parent))
from test_site_cards import OUTPUTS, make_card, standard_cards, write_toy_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    """The standard fixture cards plus a second gemma-chat card: same fingerprint, later date (a reproduction)."""
    root = tmp_path_factory.mktemp("repro")
    corpus, sha = write_toy_corpus(root / "corpora")
    cards = standard_cards(corpus, sha)
    cards["gemma-chat-2"] = make_card(corpus, sha, model_slug="google/gemma-3-270m", outputs=OUTPUTS["mid"],
                                      spec="openai:google/gemma-3-270m", condition="chat", latency=0.8, run_seed=9,
                                      timestamp="2026-11-30T09:00:00Z")
    for card in cards.values():
        path = root / canonical_relpath(card)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_bytes(card))
    report = build_site(root / "submissions", root / "corpora", root / "out", root / "docs", run_mkdocs=False,
                        build_time="2026-11-29 15:00 UTC")
    return root, cards, report


@pytest.mark.slow  # 3.0 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_same_fingerprint_is_one_row_reproduced_x2(reproduced):
    root, cards, report = reproduced
    a, b = cards["gemma-chat"], cards["gemma-chat-2"]
    assert a.fingerprint.hash == b.fingerprint.hash and a.run_card_hash != b.run_card_hash
    assert not report.rejected and report.cards == 7
    page = (root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.md").read_text(encoding="utf-8")
    assert page.count('data-method="') == 6  # 7 cards, 6 methods
    assert page.count("reproduced \u00d72") == 1
    # the members table lists both cards with their dates; the representative (same evidence: the earliest) is shown
    # (issue 31: a later reproduction never displaces the run that was there first)
    block = page[page.index("reproduced \u00d72"):page.index("</details>", page.index("reproduced \u00d72"))]
    assert a.run_card_hash[:8] in block and b.run_card_hash[:8] in block
    assert "2026-11-28" in block and "2026-11-30" in block
    assert f'data-row="{a.run_card_hash[:16]}"' in page and a.timestamp < b.timestamp
    assert "not reproduced" not in block  # identical outputs: composites equal
    rows = json.loads((root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.json").read_text(encoding="utf-8"))["rows"]
    row = next(r for r in rows if r["n_cards"] == 2)
    assert row["card_ids"] == f"{a.run_card_hash[:16]};{b.run_card_hash[:16]}"
    assert row["composite"] == a.scores.composite  # the shown card's value (issue 31), the cards' range beside it
    assert "composite_sd" not in row  # a single run: no replicate spread (schema 2: a field without a value is left out)
    assert row["composite_cards_min"] == row["composite_cards_max"] == a.scores.composite
    assert row["first_run"] == "2026-11-28T14:00:00Z" and row["last_run"] == "2026-11-30T09:00:00Z"
    # gemma-chat and acme (one entry apart) stay inseparable after the merge: one shared range
    acme = next(r for r in rows if r["model"] == "acme/translate-pro")
    assert (row["rank_lo"], row["rank_hi"]) == (acme["rank_lo"], acme["rank_hi"]) == (2, 3)


def test_csv_download_has_the_tables_columns_rounded_as_shown(reproduced):
    """Issue 36 item 5: the view's columns (an optional one only with a value in some row), in the table's order,
    each number rounded as the table shows it; the JSON beside it keeps full precision."""
    root, cards, _ = reproduced
    raw = (root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.csv").read_bytes()
    assert raw.count(b"\r\n") == 11  # RFC 4180 line ends: header + 6 methods + 4 sentinel lines (issue 38)
    text = raw.decode("utf-8")
    every = list(csv.DictReader(io.StringIO(text)))
    rows = [r for r in every if r["method_class"] != "sentinel"]
    assert len(rows) == 6
    lines = every[6:]  # after the method rows, highest composite first, never ranked
    assert [r["method_id"] for r in lines] == ["sentinel:doubled", "sentinel:truncated", "sentinel:shuffled",
                                               "sentinel:copy-source"]
    assert all(r["rank_lo"] == "" and r["reference"] == "true" for r in lines)
    # the few-shot gemma row (composite 0.311) is not significantly above the shuffled sentinel (0.265) on this
    # small corpus: the ledger marks it, and only it
    assert [(r["composite"], r["inside_floor"]) for r in rows if r["inside_floor"]] == [("0.311", "shuffled")]
    assert list(rows[0]) == [
        "rank_lo", "rank_hi", "inside_floor", "flip_segments", "flip_entries", "method_id", "method_label", "model", "method_class", "reference", "composite",
        "composite_lo", "composite_hi", "composite_cards_min", "composite_cards_max",
        # issue 40 item 5: the screen-ready score beside the composite, its counts and policy
        "screen_ready", "screen_hard_failures", "screen_formatted", "screen_outputs", "screen_policy",
        "verification_tier", "chrf",
        "chrf_lo", "chrf_hi", "chrf_cards_min", "chrf_cards_max", "cost_per_segment_usd", "cost_source",
        "latency_median_s", "run_date", "exact", "semantic", "bleu", "ter", "cost_adj", "quality_tier", "tokens",
        "n_cards", "card_ids", "first_run", "last_run", "model_record_note", "tries"]
    # no fst, judge or harness column: the table shows none; no model-facts columns: no model here has a record
    # (issue 37), so each row says what it says of its record, and the model with two methods its tries
    assert [r["model_record_note"] for r in rows].count("no model record") == 4
    assert {r["model_record_note"] for r in rows if r["model"].startswith("baseline/")} == {"baseline (no model)"}
    assert sorted(r["tries"] for r in rows if r["tries"]) == ["1 of 2 tries; best: " + next(
        r["method_label"] for r in rows if r["tries"] == "best of 2"), "best of 2"]
    assert all(any(r[k] for r in rows) for k in rows[0])  # no column empty in every row
    ap = next(r for r in rows if r["model"] == "apertium/eng-spa")
    sc = cards["apertium"].scores
    assert (ap["composite"], sc.composite) == ("0.794", 0.793614)  # rounded as the table shows it
    assert ap["rank_lo"] == ap["rank_hi"] == "1" and ap["reference"] == "false"
    assert (ap["chrf_lo"], ap["chrf_hi"]) == tuple(f"{x:.1f}" for x in sc.chrf_ci95)
    assert (ap["exact"], ap["bleu"], ap["latency_median_s"]) == ("0.417", "64.0", "0.055")
    assert ap["cost_per_segment_usd"] == "0" and ap["cost_source"] == "local"  # the page: "no API cost (local)"
    assert ap["run_date"] == "2026-11-28" and ap["first_run"] == "2026-11-28T14:00:00Z"
    acme = next(r for r in rows if r["model"] == "acme/translate-pro")
    assert acme["cost_per_segment_usd"] == "0.0021" and acme["tokens"] == "12000"  # fmt.usd's digits, no "$"
    gemma = next(r for r in rows if r["n_cards"] == "2")
    assert gemma["composite_cards_min"] == gemma["composite_cards_max"] == gemma["composite"]
    assert gemma["card_ids"].count(";") == 1 and gemma["cost_per_segment_usd"] == gemma["cost_source"] == ""
    echo = next(r for r in rows if r["model"] == "baseline/echo")
    assert echo["rank_lo"] == "" and echo["reference"] == "true"  # unranked: empty, not 0
    page = (root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.md").read_text(encoding="utf-8")
    assert f'<td class="c-composite" data-v="{sc.composite:.7g}">0.794 +0.103/<wbr>\u22120.114</td>' in page
    full = json.loads((root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.json").read_text(encoding="utf-8"))
    row = next(r for r in full["rows"] if r["model"] == "apertium/eng-spa")
    assert row["composite"] == sc.composite and (row["chrf_lo"], row["chrf_hi"]) == tuple(sc.chrf_ci95)
    assert row["run_date"] == "2026-11-28T14:00:00Z" and "fst" not in row  # no value: left out (schema 2)
    # every CSV column with a value in this row is in the JSON row; every field the schema requires is in every row,
    # null or not, and no other field is null (issue 35: nulls were ~47 % of a row's bytes)
    csv_row = next(r for r in rows if r["model"] == "apertium/eng-spa")
    assert {k for k, v in csv_row.items() if v != ""} <= set(row)
    assert all(set(boardpages.BOARD_ROW_REQUIRED) <= set(r) for r in full["rows"])
    assert all(v is not None for r in full["rows"] for k, v in r.items() if k not in boardpages.BOARD_ROW_REQUIRED)
    assert any(r["cost_per_segment_usd"] is None for r in full["rows"])  # required: present as null
    assert {c["key"]: c["fields"] for c in full["columns"]}["latency"] == ["latency_median_s", "entries_per_s"]
    legal = list(csv.DictReader(io.StringIO((root / "docs" / "leaderboards" / "toy-en-es-v1.0.0-legal.csv")
                                            .read_text(encoding="utf-8"))))
    assert "delta_rank" in legal[0] and "bleu" not in legal[0]  # a domain view: Δrank, no corpus BLEU


def test_csv_cells_are_formula_safe_and_every_number_has_its_rounding_rule():
    assert boardpages.csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert boardpages.csv_safe("-1+1") == "'-1+1" and boardpages.csv_safe("@x") == "'@x"
    assert boardpages.csv_safe(-1.5) == -1.5 and boardpages.csv_safe(None) == ""
    assert boardpages.csv_cell("method_label", "+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0"
    assert boardpages.csv_cell("composite", 0.5347) == "0.535" and boardpages.csv_cell("chrf_hi", 53.48289) == "53.5"
    assert boardpages.csv_cell("mqm", 1.23456) == "1.23" and boardpages.csv_cell("delta_rank", -2) == "-2"
    assert boardpages.csv_cell("cost_per_segment_usd", 0.000123456) == "0.000123"
    assert boardpages.csv_cell("latency_median_s", 0.00234) == "0.0023"  # shown as 2.3 ms
    assert boardpages.csv_cell("latency_median_s", 1234.5) == "1230"  # shown as 1.23e+03 s
    assert boardpages.csv_cell("reference", True) == "true" and boardpages.csv_cell("rank_lo", None) == ""
    with pytest.raises(ValueError, match="no formatter"):
        boardpages.csv_cell("mystery", 0.5)  # a number without its metric's rule is refused, never repr-ed
    for field in boardpages.CSV_NUMBER:  # every formatted field is a CSV field of some column (or of the model's)
        assert any(field in fields for fields in boardpages.CSV_GROUPS.values()) or field in boardpages.MODEL_FIELDS
    assert boardpages.csv_cell("clean_composite", 0.41249) == "0.412"  # the clean subset rounds as the composite


def test_site_wide_data_and_schema(reproduced):
    root, _, _ = reproduced
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((root / "docs" / "data" / "schema" / "board-2.json").read_text())
    for name in ("toy-en-es-v1.0.0", "toy-en-es-v1.0.0-legal"):
        jsonschema.validate(json.loads((root / "docs" / "leaderboards" / f"{name}.json").read_text()), schema)
    index = json.loads((root / "docs" / "data" / "boards.json").read_text())
    assert [v["domain"] for v in index["boards"][0]["views"]] == [None, "legal", "medical", "tech"]
    flat = json.loads((root / "docs" / "leaderboard.json").read_text())
    assert len(flat["rows"]) == 6 and {r["dataset"] for r in flat["rows"]} == {"toy-en-es"}
    assert index["build"] == flat["build"] and len(index["build"]) == 12


def test_ci_text_formats():
    # design §3.3: symmetric within one display unit → ±; else +up/−down
    assert boards.ci_text(0.547, (0.536, 0.557), 3) == "0.547 \u00b10.011"
    assert boards.ci_text(48.2, (46.7, 49.5), 1) == "48.2 +1.3/\u22121.5"
    assert boards.ci_text(48.2, None, 1, 0.4) == "48.2 (sd 0.4)"
    assert boards.ci_text(None, (1.0, 2.0), 1) == "\u2014"
    assert boards.latency_text(0.6381) == "0.638 s" and boards.latency_text(12.44) == "12.4 s"


def test_quality_chart_falls_back_to_speed_and_goes_log():
    pts = [{"n": i + 1, "label": f"m{i}", "composite": 0.5 + i / 10, "cost": 0.0, "latency": lat, "href": "x.html"}
           for i, lat in enumerate((0.05, 0.6, 7.0))]
    svg, key = charts.quality_vs(pts, "t")
    assert key == "latency" and "log scale" in svg and "median latency" in svg
    assert svg.count("<circle") == 3 and ">1</text>" in svg and ">3</text>" in svg  # numbered, legend below
    pts = [{**p, "cost": c} for p, c in zip(pts, (0.001, 0.002, 0.003))]
    svg, key = charts.quality_vs(pts, "t")
    assert key == "cost" and "log scale" not in svg and "cost per segment" in svg


def test_methodology_sources_from_the_committed_files():
    sources = boardpages.domain_sources((ROOT / "corpora" / "SOURCES.md").read_text(encoding="utf-8"))
    assert boardpages.source_for(sources, "legal", "EN→ES") == "UDHR (spa, fra, deu_1996)"
    assert boardpages.source_for(sources, "legal", "EN→JA") == "UDHR (jpn)"
    assert boardpages.source_for(sources, "news", "EN→CA") is None  # "—": no Catalan translation
    assert boardpages.source_for(sources, "news", "JA→EN") == "A Brief History of Debian (debian-history)"  # "same"
    spec = (ROOT / "docs" / "SCORING_SPEC.md").read_text(encoding="utf-8")
    ranks = boardpages.spec_section(spec, "4.6")
    assert ranks.startswith("The leaderboard orders rows by the composite") and "## 5." not in ranks
    assert "#### 4.2 Profile A weights" in boardpages.spec_section(spec, "4")  # demoted one level


def test_methodology_and_changes_pages(reproduced):
    root, cards, _ = reproduced
    meth = (root / "docs" / "methodology.md").read_text(encoding="utf-8")
    for anchor in ("chrf", "composite", "ranks", "tiers", "classes", "domains", "declared"):
        assert f'id="{anchor}"' in meth  # the anchors published before the split (issue 36) still land
    metrics = (root / "docs" / "methodology" / "metrics.md").read_text(encoding="utf-8")
    assert cards["apertium"].scores.signatures.chrf in metrics  # sacrebleu signature verbatim
    domains = (root / "docs" / "methodology" / "domains.md").read_text(encoding="utf-8")
    assert "<td>legal</td><td>4</td>" in domains  # the toy corpus: 4 legal entries
    changes = (root / "docs" / "changes.md").read_text(encoding="utf-8")
    every = changes.partition("## Every run card")[2]  # the card list under the ledger diff (issue 31)
    dates = [line.split('"mtb-nowrap">')[1][:10] for line in every.splitlines() if line.startswith("<tr><td")]
    assert dates == sorted(dates, reverse=True) and dates[0] == "2026-11-30" and len(dates) == 7
    # no earlier ledger given: every row is new, one line per method row (7 cards, 6 rows)
    assert changes.partition("## New rows")[2].partition("## Rank changes")[0].count('data-change="new row"') == 6
    board = (root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.md").read_text(encoding="utf-8")
    assert 'href="../methodology/composite.html#composite"' in board  # header help links to the section
    assert "# EN&#8594;ES leaderboard" in board or "# EN→ES leaderboard" in board
    assert "English → Spanish" in board  # language names are searchable text


def test_cost_of_segments_uses_the_boards_dollar_rule():
    """issue 36 item 5: the figure the page starts with (N = 10,000), as fmt.usd writes dollars; nothing for a cost
    that is missing, zero or negative."""
    from mtboard.site import boards as bd

    assert bd.cost_of_segments(0.0021) == "$21.000"  # 21.000000000000004 in binary
    assert bd.cost_of_segments(0.0021, 3) == "$0.0063"
    assert bd.cost_of_segments(1e-11) == "< $0.000001"  # 1e-7: positive, below the last decimal
    assert bd.cost_of_segments(None) == bd.cost_of_segments(0.0) == bd.cost_of_segments(-1.0) == ""
    assert str(bd.cost_n_html(0.0021)) == ('<span class="mtb-costn" data-usd="0.0021">$21.000 for '
                                           '<span class="mtb-costn-n">10,000</span> segments</span>')
    assert str(bd.cost_n_html(0.0)) == ""
