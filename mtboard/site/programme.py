"""The programme pages (issue 39 items 3 and 4): ``costs.md`` (spec §10.1–10.2: run and sweep costs of the committed
methods at every priced model, computed by :func:`mtboard.sweeps.costs.cost_tables` from ``prompts/prices.yaml`` and the
committed cards' measured tokens, dated by the price table and the latest card, with the table's SHA-256),
``costs-programme.md`` (spec §10.3–10.4: the spec's own estimates of establishing a language and of the programme,
cited as such — nothing here computes them) and ``new-languages.md`` (spec §11: what a language community provides —
the minimums from :data:`mtboard.inputs.corpora.minimums.MINIMUMS`, the table ``corpus check`` enforces; the optional
resources; the agent-assisted path, marked planned).

Every page is deterministic (no build clock): rebuilt from the same inputs it is byte for byte the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mtboard.core.errors import MtboardError
from mtboard.inputs.corpora.minimums import MINIMUMS
from mtboard.inputs.prices import load_prices
from mtboard.ledger.load import Inputs
from mtboard.ledger.summary import summary
from mtboard.site.glossary import PROGRAMME_PAGES
from mtboard.site.render import _env, page_helpers
from mtboard.sweeps.costs import REFERENCE_ENTRIES, SPEC_SWEEP_RUNS, cost_tables

PAGES = PROGRAMME_PAGES
"""The pages, docs path → title (their nav entries: :func:`mtboard.site.render.nav`)."""
COSTS_PAGE, PROGRAMME_PAGE, LANGUAGES_PAGE = PAGES


@dataclass(frozen=True)
class SpecCost:
    """One row of a spec §10 table, as the spec states it (USD): ``what``, ``low``–``high``, ``unit`` ("" or "/year"),
    ``note``."""

    what: str
    low: int
    high: int
    unit: str
    note: str


SPEC_RUNS: tuple[tuple[str, str, float, float], ...] = (
    ("Naive LLM", "Gemini 2.5 Flash", 0.15, 0.30),
    ("Coached LLM", "Gemini 2.5 Flash", 0.30, 0.60),
    ("FST-gated (3 retries)", "Gemini 2.5 Flash", 0.45, 1.20),
    ("Naive LLM", "Claude Sonnet 4", 0.45, 0.90),
    ("Coached LLM", "GPT-4.1", 0.60, 1.50),
)
"""Spec §10.1's typical per-run costs for a 150-entry corpus: (method, model, low, high) USD."""

SPEC_ESTABLISHMENT: tuple[SpecCost, ...] = (
    SpecCost("Speaker compensation (corpus)", 2500, 6000, "", "50–150 entries, $50–65 an hour"),
    SpecCost("Speaker compensation (review)", 500, 1500, "", "reviewing method outputs"),
    SpecCost("Compute (benchmark sweeps)", 100, 500, "", "several sweeps during development"),
    SpecCost("Compute (ongoing leaderboard)", 50, 200, "/year", "running submitted methods"),
    SpecCost("Infrastructure (sandbox)", 200, 500, "/year", "the governance organisation's evaluation infrastructure"),
)
"""Spec §10.3, establishing one language: its components."""
SPEC_ESTABLISHMENT_TOTAL = (3350, 8500)
"""Spec §10.3's stated total. Its components' upper ends add up to $8,700 (:func:`component_sum`); the page shows
both."""

SPEC_PROGRAMME: tuple[SpecCost, ...] = (
    SpecCost("1 language (maintenance)", 1000, 3000, "/year", "after establishment"),
    SpecCost("5 languages (establishment + maintenance)", 25000, 65000, "", "first year"),
    SpecCost("10 languages (steady state)", 15000, 40000, "/year", "a year, after establishment"),
)
"""Spec §10.4, programme scale."""

OPTIONAL_RESOURCES: tuple[tuple[str, str], ...] = (
    ("FST morphological analyser", "enables FST acceptance, the strongest metric for polysynthetic languages, and "
     "the FST-gated methods"),
    ("Bilingual dictionary", "enables dictionary-based methods and reduces hallucination"),
    ("Gold-standard morphological analyses", "enables the morphological accuracy metric"),
    ("Variant classes", "enable the equivalent-match metric and the anti-cheating lint on variants"),
    ("Governance organisation", "enables data sovereignty (the secret segments, held by the community) and the "
     "transfer of ownership"),
)
"""Spec §11.2: optional but valuable resources and what each enables."""

AGENT_STEPS: tuple[str, ...] = (
    "An agent generates candidate source sentences across difficulty levels and registers.",
    "Bilingual speakers translate them (this step is always human).",
    "The agent proposes morphological analyses, validated by the FST where one exists, otherwise by speakers.",
    "The agent formats everything into the corpus schema.",
    "A linguist or speaker reviews the final corpus.",
)
"""Spec §11.3's agent-assisted path (planned; not built)."""


def component_sum(rows: tuple[SpecCost, ...]) -> tuple[int, int]:
    """(Σ low, Σ high) of spec rows."""
    return sum(r.low for r in rows), sum(r.high for r in rows)


def _dollars(v: int) -> str:
    return f"${v:,}"


def render_programme_pages(inputs: Inputs, root: Path) -> dict[str, str]:
    """``{costs.md, costs-programme.md, new-languages.md: text}``. ``inputs``: the build's validated cards (their
    measured tokens); ``root``: the project root whose ``prompts/prices.yaml`` prices them (the package's table when
    the root has none). An unreadable price table leaves the costs page saying so; never raises for it."""
    env = _env()
    pages: dict[str, str] = {}
    path = root / "prompts" / "prices.yaml"
    tables, problem = None, None
    try:
        table = load_prices(path if path.is_file() else None)
        tables = cost_tables([lc.card for lc in inputs.cards], table, counted=[
            (len(summary(lc).ids), summary(lc).model_calls) for lc in inputs.cards])
    except MtboardError as exc:
        problem = exc.one_line()
    pages[COSTS_PAGE] = env.get_template("costs.md.j2").render(
        **page_helpers(COSTS_PAGE), title=PAGES[COSTS_PAGE], t=tables, problem=problem, spec_runs=SPEC_RUNS,
        rows=list(zip(tables.models, tables.runs, tables.lower_bounds)) if tables else [],
        sweep_low=any(tables.lower_bounds) if tables else False,
        n_cards=sum(len(m.cards) for m in tables.methods) if tables else 0,
        reference_entries=REFERENCE_ENTRIES, spec_sweep_runs=SPEC_SWEEP_RUNS)
    pages[PROGRAMME_PAGE] = env.get_template("costs_programme.md.j2").render(
        **page_helpers(PROGRAMME_PAGE), title=PAGES[PROGRAMME_PAGE], establishment=SPEC_ESTABLISHMENT,
        total=SPEC_ESTABLISHMENT_TOTAL, components=component_sum(SPEC_ESTABLISHMENT), programme=SPEC_PROGRAMME,
        dollars=_dollars)
    pages[LANGUAGES_PAGE] = env.get_template("new_languages.md.j2").render(
        **page_helpers(LANGUAGES_PAGE), title=PAGES[LANGUAGES_PAGE], minimums=MINIMUMS,
        optional=OPTIONAL_RESOURCES, steps=AGENT_STEPS)
    return pages


__all__ = ["AGENT_STEPS", "COSTS_PAGE", "LANGUAGES_PAGE", "OPTIONAL_RESOURCES", "PAGES", "PROGRAMME_PAGE",
           "SPEC_ESTABLISHMENT", "SPEC_ESTABLISHMENT_TOTAL", "SPEC_PROGRAMME", "SPEC_RUNS", "SpecCost",
           "component_sum", "render_programme_pages"]
