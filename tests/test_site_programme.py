"""The programme pages (issue 39 items 3 and 4): run and sweep costs computed from prompts/prices.yaml and the
committed cards' tokens (a cell checked by hand), the spec's §10.3–10.4 estimates labelled as such, and the
new-languages page generated from the table ``corpus check`` enforces; all three in the committed site's build."""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path

import pytest

from mtboard.inputs.corpora.minimums import MINIMUMS
from mtboard.inputs.prices import load_prices
from mtboard.ledger.load import Inputs
from mtboard.site import programme, render
from mtboard.sweeps.costs import cost_tables

ROOT = Path(__file__).resolve().parent.parent
COACHED = ROOT / "submissions" / "mtb-en-es-dev" / "gemma-3-270m-q4-k-m.gguf__coached-few-shot__f7a947e56d7b.json"
FST_GATED = ROOT / "submissions" / "mtb-en-es-dev" / "gemma-3-270m-q4-k-m.gguf__fst-gated-few-shot__ddba05d4ee61.json"


@pytest.fixture(scope="module")
def pages(committed_inputs) -> dict[str, str]:
    return programme.render_programme_pages(committed_inputs, ROOT)


def _row(page: str, label: str, table_id: str | None = None) -> list[str]:
    """The cells of the table row headed ``label`` (in the table ``table_id`` when given)."""
    start = page.index(f'<th scope="row">{label}</th>', page.index(f'id="{table_id}"') if table_id else 0)
    row = page[start:page.index("</tr>", start)]
    return [c.split("</td>")[0] for c in row.split("<td>")[1:]]


def _header(page: str, table_id: str) -> list[str]:
    start = page.index(f'id="{table_id}"')
    head = page[start:page.index("</thead>", start)]
    return [c.split("</th>")[0] for c in head.split('<th scope="col">')[1:]]


def test_a_run_cost_checked_by_hand(pages):
    # the committed coached-few-shot card (Gemma 3 270M, EN→ES): its token totals and records, read here
    card = json.loads(COACHED.read_text(encoding="utf-8"))
    assert card["condition"] == "coached-few-shot"
    assert (card["totals"]["prompt_tokens"], card["totals"]["completion_tokens"]) == (1957, 313)
    assert len(card["results"]) == 12 and sum(r["attempts"] for r in card["results"]) == 12
    # gpt-4o-mini in prompts/prices.yaml: $0.15 in, $0.60 out per 1M tokens (no cached, no reasoning tokens)
    # cost per call = (1957 × 0.15 + 313 × 0.60) / 1e6 / 12 = 481.35e-6 / 12 = 40.1125e-6
    # run cost (150 entries) = 150 × 1 call per entry × 40.1125e-6 = 0.006016875
    page = pages["costs.md"]
    methods = _header(page, "run-costs")[1:]
    assert methods == ["coached-few-shot", "context-completion", "few-shot", "few-shot-completion",
                       "fst-gated-few-shot", "zero-shot-completion"]  # context-completion: issue 40's sweep
    coached = methods.index("coached-few-shot")
    assert _row(page, "openai / gpt-4o-mini")[coached] == "$0.006017"
    # gpt-4o ($2.50 / $10.00): (1957 × 2.5 + 313 × 10) / 1e6 / 12 × 150 = 0.10028125
    assert _row(page, "openai / gpt-4o")[coached] == "$0.100"
    # the same cell from the module the page renders
    t = cost_tables([lc.card for lc in _inputs_again().cards], load_prices(ROOT / "prompts" / "prices.yaml"))
    gpt4o_mini = [i for i, (p, m, _) in enumerate(t.models) if (p, m) == ("openai", "gpt-4o-mini")][0]
    assert t.runs[gpt4o_mini][coached] == pytest.approx(0.006016875, rel=1e-12)
    # no card with tokens: no table, a sentence saying why
    empty = programme.render_programme_pages(Inputs(), ROOT)["costs.md"]
    assert 'id="run-costs"' not in empty and "No committed run card has measured tokens yet" in empty


def test_the_cost_page_is_dated_and_names_the_price_table_hash(pages):
    page = pages["costs.md"]
    sha = hashlib.sha256((ROOT / "prompts" / "prices.yaml").read_bytes()).hexdigest()
    assert f"prices as of 2025-08-07, SHA-256 <code>{sha}</code>" in page
    # 16 + the 9 Gemma cards of the dialogue-history sweep (issue 40)
    assert "the token counts of 25 committed run cards, the latest made 2026-12-04" in page
    # deterministic: no build clock
    assert page == programme.render_programme_pages(_inputs_again(), ROOT)["costs.md"]


def test_calls_per_entry_count_model_calls_and_reasoning_rows_are_marked(pages):
    """Calls per entry counts the model calls each record says were made, not transport attempts: the committed
    FST-gated card (the only fst-gated-few-shot card) asked the model once per gate check (tool_call_count) — 40
    entries once, 1 twice, 19 three times = 99 calls for 60 entries = 1.65 — while every record's ``attempts`` is 1.
    A reasoning model's run costs are lower bounds and carry "≥"; the others do not."""
    card = json.loads(FST_GATED.read_text(encoding="utf-8"))
    assert card["condition"] == "fst-gated-few-shot" and card["tools_enabled"] == ["fst-gate"]
    calls = [r["tool_call_count"] for r in card["results"]]
    assert (len(calls), calls.count(1), calls.count(2), calls.count(3)) == (60, 40, 1, 19)
    assert sum(calls) == 99 and sum(r["attempts"] for r in card["results"]) == 60
    page = pages["costs.md"]
    # Cards (datasets), Entries, Calls per entry, prompt and completion tokens per entry (15739 / 60, 2043 / 60)
    assert _row(page, "fst-gated-few-shot") == ["1 (mtb-en-es-dev)", "60", "1.65", "262.3", "34.0"]
    assert _row(page, "coached-few-shot")[2] == "1.00"  # 12 entries, one call each, no re-asks
    methods = _header(page, "run-costs")[1:]
    coached = methods.index("coached-few-shot")
    # gpt-5-mini ($0.25 / $2.00): (1957 × 0.25 + 313 × 2.00) / 1e6 / 12 × 150 = 0.01394 → "≥ $0.014"
    assert _row(page, "openai / gpt-5-mini (reasoning)", "run-costs")[coached] == "≥ $0.014"
    assert _row(page, "openai / o3 (reasoning)", "run-costs")[coached].startswith("≥ $")
    assert _row(page, "openrouter / openai/gpt-5-mini (reasoning)", "run-costs")[coached] == "≥ $0.014"
    assert all(not c.startswith("≥") for c in _row(page, "openai / gpt-4o-mini", "run-costs"))
    assert "their rows are lower bounds, marked **≥**" in page


def test_reasoning_models_are_named_by_the_price_table_rule():
    from mtboard.sweeps.costs import is_reasoning_model

    assert [is_reasoning_model(m) for m in ("gpt-5", "gpt-5-mini", "o3", "o4-mini", "openai/gpt-5-mini", "gpt-4o",
                                            "gpt-4.1-nano", "openai/gpt-4o-mini", "omni")] == [True] * 5 + [False] * 4


def _inputs_again():
    from mtboard.ledger.load import load_inputs

    return load_inputs(ROOT / "submissions", ROOT / "corpora", validate=False)


def test_sweep_costs_are_the_sums_of_the_run_columns(pages):
    page = pages["costs.md"]
    # coached-few-shot over the 13 priced models: Σ of the column, computed here from the page's own rates
    table = load_prices(ROOT / "prompts" / "prices.yaml")
    per_million = sum(m.input * 1957 + m.output * 313 for m in table.models)
    expected = per_million / 1e6 / 12 * 150
    assert round(expected, 3) == 0.453
    # the sum holds the reasoning models' lower bounds (gpt-5*, o3, o4-mini): a lower bound too
    assert _row(page, "coached-few-shot", "sweep-costs") == ["≥ $0.453"]
    assert "the spec estimates $72 (144 runs × $0.50)" in page


def test_programme_page_cites_the_spec_and_labels_it(pages):
    page = pages["costs-programme.md"]
    assert "These are the spec's estimates (spec §10.3–10.4)" in page
    assert _row(page, "Speaker compensation (corpus)") == ["$2,500–$6,000", "50–150 entries, $50–65 an hour"]
    assert _row(page, "Total establishment")[0] == "$3,350–$8,500"
    # the spec's components' upper ends: 6,000 + 1,500 + 500 + 200 + 500 = 8,700, not its stated 8,500
    assert "its components add up to $3,350–$8,700" in page
    assert _row(page, "10 languages (steady state)")[0] == "$15,000–$40,000"


def test_new_languages_page_is_the_checked_table(pages):
    page = pages["new-languages.md"]
    for m in MINIMUMS:
        assert f'<tr id="minimum-{m.key.replace("_", "-")}"><td>{m.item}</td><td>{html.escape(m.what, quote=True)}' \
               in page
    assert page.count("<code>mtboard corpus check --new-language</code>") == 5
    assert page.count("<code>mtboard corpus check --private --new-language</code>") == 2
    assert '<span class="mtb-tag">planned</span>' in page and "nothing\nbelow is built" in page
    assert "Variant classes" in page and "about 80 hours to about 30–40 hours" in page


def test_the_pages_are_in_the_site_build_and_its_nav(committed_site):
    nav = render.nav([])
    methodology = nav[-2]["Methodology"]
    assert methodology[-5:] == [{"Run and sweep costs": "costs.md"}, {"Programme costs": "costs-programme.md"},
                                {"New languages": "new-languages.md"}, {"Licences": "licences.md"},
                                {"Contamination": "contamination.md"}]
    costs = (committed_site.out / "costs.html").read_text(encoding="utf-8")
    assert 'id="run-costs"' in costs and "$0.006017" in costs
    assert "<h1" in costs and "Run and sweep costs" in costs
    langs = (committed_site.out / "new-languages.html").read_text(encoding="utf-8")
    assert 'id="minimum-consent"' in langs and 'href="costs-programme.html"' in langs
    prog = (committed_site.out / "costs-programme.html").read_text(encoding="utf-8")
    assert 'href="costs.html"' in prog and "$3,350–$8,700" in prog
