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
    assert row["composite_sd"] is None  # a single run: no replicate spread
    assert row["composite_cards_min"] == row["composite_cards_max"] == a.scores.composite
    assert row["first_run"] == "2026-11-28T14:00:00Z" and row["last_run"] == "2026-11-30T09:00:00Z"
    # gemma-chat and acme (one entry apart) stay inseparable after the merge: one shared range
    acme = next(r for r in rows if r["model"] == "acme/translate-pro")
    assert (row["rank_lo"], row["rank_hi"]) == (acme["rank_lo"], acme["rank_hi"]) == (2, 3)


def test_csv_download_header_and_formula_prefix(reproduced):
    root, cards, _ = reproduced
    raw = (root / "docs" / "leaderboards" / "toy-en-es-v1.0.0.csv").read_bytes()
    assert raw.count(b"\r\n") == 7  # RFC 4180 line ends: header + 6 methods
    text = raw.decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 6
    head = list(rows[0])
    for key in ("rank_lo", "rank_hi", "method_id", "method_label", "model", "method_class", "composite",
                "composite_lo", "composite_hi", "chrf", "chrf_lo", "chrf_hi", "cost_per_segment_usd", "cost_source",
                "latency_median_s", "verification_tier", "n_cards", "card_ids", "first_run", "last_run"):
        assert key in head
    ap = next(r for r in rows if r["model"] == "apertium/eng-spa")
    assert float(ap["composite"]) == cards["apertium"].scores.composite  # full precision (repr)
    assert ap["rank_lo"] == ap["rank_hi"] == "1"
    lo, hi = cards["apertium"].scores.chrf_ci95
    assert (float(ap["chrf_lo"]), float(ap["chrf_hi"])) == (lo, hi)
    assert ap["cost_per_segment_usd"] == "0.0" and ap["cost_source"] == "declared"
    assert next(r for r in rows if r["model"] == "baseline/echo")["rank_lo"] == ""  # unranked: empty, not 0
    assert boardpages.csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert boardpages.csv_safe("-1+1") == "'-1+1" and boardpages.csv_safe("@x") == "'@x"
    assert boardpages.csv_safe(-1.5) == -1.5 and boardpages.csv_safe(None) == ""


def test_site_wide_data_and_schema(reproduced):
    root, _, _ = reproduced
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((root / "docs" / "data" / "schema" / "board-1.json").read_text())
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
