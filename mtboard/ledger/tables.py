"""Leaderboard tables as data: every number, rank, cluster and chart point the site shows, computed in Python.

Templates only loop and escape (ARCHITECTURE "compute, then render"). Sources: spec §9.7 (columns), §2.7 and the
domain-filtered leaderboard (views), §9.4 (verification tiers), §5 (quality tiers); :mod:`mtboard.score.stats` for
significance and item statistics.

Grouping: one leaderboard per dataset (id, version, corpus SHA-256). A card is *ranked* when its evaluated entry ids
equal the leaderboard's reference set (the most common entry-id set among its cards; ties: the larger set); other
cards are listed as unranked (a ``--limit`` subset run is not comparable; while the board has full runs, only they
choose the reference set and only they are ranked).

Ranking on one metric (issue 15 part 2): rows are ordered by the composite, and the rank clusters, the
smallest detectable difference and the composite's CI come from a paired bootstrap of the composite itself
(:func:`mtboard.score.metrics.bootstrap.composite_resamples`; docs/SCORING_SPEC.md §4.6). A card with replicate runs is
shown and ordered by its replicate mean ± spread, and its bootstrap is the mean over its runs of the resampled
composites. Reference baselines (method class ``baseline``) are listed as reference lines: no rank, not in the
clusters and not in any field statistic (field medians, item statistics). Judged metrics compare rows on common
cells only (entries every compared row has a judged value for; GEMBA note).
"""

from __future__ import annotations

import functools
import math
import statistics
from array import array
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.score.metrics.composite import entry_columns
from mtboard.score.screen import ScreenReady, screen_ready
from mtboard.score.subset import composite_resamples_on
from mtboard.review.community import gated_tier
from mtboard.core.schema import EntryResult, JudgeSummary, RunCard
from mtboard.core import fmt
from mtboard.judges.admission import ADMITTING_KINDS
from mtboard.backends.base import NO_API_COST, NOT_PRICED, cost_text  # noqa: F401 - defined with the backends' "priced"
from mtboard.core.names import mark
from mtboard.ledger.cache import ResampleCache
from mtboard.ledger.load import CorpusInfo, LoadedCard
from mtboard.ledger.standing import BoardPlan, BoardState, Standing, is_reference
from mtboard.ledger.summary import failed, sentence_chrf, summary  # noqa: F401 - failed, sentence_chrf: the ledger's rules, read here too

# --------------------------------------------------------------------------------------------------------------------
# Columns (spec §9.7 + judge columns)


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    numeric: bool
    help: str
    domain_aware: bool = False
    """Recomputed in domain views; otherwise '—' there."""


COLUMNS: list[Column] = [
    Column("rank", "Rank", True, "Rank cluster by composite: rows that a paired bootstrap of the composite cannot "
                                  "separate share a range; reference baselines are not ranked", True),
    Column("method", "Method", False, "Method spec, prompt and condition label († declared by the contributor)"),
    Column("composite", "Composite", True, "Weighted composite of the available metrics, 0–1 (replicate runs: mean "
                                           "± standard deviation)", True),
    Column("composite_ci", "Composite 95% CI", True, "Bootstrap 95% confidence interval of the composite over "
                                                     "segments", True),
    Column("screen", "Screen-ready", True, "The composite as a screen translator's reader gets it: commentary, a "
                                           "broken placeholder or > 5 foreign-script letters count as no output, "
                                           "each formatting flag costs 0.05 (docs/SCORING_SPEC.md §4.8, screen-1); "
                                           "whole segment only"),
    Column("chrf", "chrF++", True, "Corpus chrF++ (sacrebleu), 0–100 (replicate runs: mean ± standard deviation)",
           True),
    Column("chrf_ci", "chrF++ 95% CI", True, "Bootstrap 95% confidence interval over segments", True),
    Column("fst", "FST acceptance", True, "Share of output words a morphological analyser accepts, 0–1"),
    Column("exact", "Exact match", True, "Share of outputs equal to the reference after normalisation", True),
    Column("equiv", "Equivalent match", True, "Share of outputs equal to the reference or one of its human variants "
                                              "(entries with variants only on corpora that have them)", True),
    Column("term", "Terminology", True, "Share of the corpus glossary's terms rendered as the glossary requires "
                                        "(Σ hits ÷ Σ terms)", True),
    Column("morph", "Morph. acc.", True, "Morphological accuracy against Apertium MACHINE analyses of the references "
                                         "(not gold): share of the reference's lemma+tag units the output's analysis "
                                         "has, Σ matched ÷ Σ units", True),
    Column("semantic", "Semantic", True, "Meaning preservation score, 0–1"),
    Column("cost", "Cost / entry", True, "US dollars per corpus entry as declared; \"no API cost (local)\" for "
                                         "local engines, models and baselines; \"not priced\" when a price or the "
                                         "provider's usage is missing", True),
    Column("speed", "Speed", True, "Median latency per entry; batch engines: entries per second (no per-entry "
                                   "latency exists)", True),
    Column("cost_adj", "Cost-adjusted", True, "Secondary ranking (spec §4.3)"),
    Column("mclass", "Class", False, "Method class (spec §9.6)"),
    Column("model", "Model", False, "LLM or engine used († declared by the contributor)"),
    Column("qtier", "Quality tier", False, "Provisional label on the composite (spec §5)"),
    Column("vtier", "Verification", False, "Who verified the result (spec §9.4)"),
    Column("date", "Date", False, "When the run was made (UTC; † declared by the contributor)"),
    Column("mqm", "MQM penalty", True, "GEMBA-MQM mean penalty per entry over the common judged cells (lower is "
                                       "better)", True),
    Column("rubric", "Rubric", True, "Rubric judge mean total over the common judged cells, 0–10", True),
    Column("checkpoints", "Checkpoints", True, "Checkpoint judge mean score ± spread over judge runs, 0–100"),
]
JUDGE_KEYS = {"mqm": "gemba-mqm", "rubric": "rubric", "checkpoints": "checkpoints"}


@dataclass
class Cell:
    text: str
    sort: float | str | None
    """Numeric or text sort key; None sorts last in both directions."""
    declared: bool = False
    """The value is declared by the contributor (self-benchmarked row): only GDS verification confirms it."""


@dataclass
class Row:
    lc: LoadedCard
    cells: dict[str, Cell]
    composite: float | None
    chrf: float | None
    position: int = 0
    rank: str = fmt.DASH
    boot: np.ndarray | None = None
    """Bootstrap composites on the view's shared resamples (mean over replicate runs)."""
    reference: bool = False
    """A reference baseline: listed, never ranked."""
    chrf_boot: np.ndarray | None = None
    """Bootstrap chrF++ on the view's shared resamples (one run)."""
    chrf_mean_boot: np.ndarray | None = None
    """Bootstrap chrF++ on the view's shared resamples, the mean over replicate runs (one run: ``chrf_boot``); the
    compare page's chrF++ resamples (:func:`mtboard.site.compare.board_compare`)."""
    chrf_ci: tuple[float, float] | None = None
    composite_ci: tuple[float, float] | None = None


@dataclass
class View:
    domain: str | None
    """None for the whole dataset."""
    n_entries: int
    rows: list[Row]
    mdd: float | None
    page: str
    ordering_note: str = ""
    judge_cells: dict[str, tuple[int, int]] = field(default_factory=dict)
    """judge kind → (common judged cells, entries in the view) the judge columns are computed on."""
    methods: list[Any] = field(default_factory=list)
    """One row per method (:func:`mtboard.site.boards.attach_methods`; cards with one fingerprint merged)."""
    sentinels: list[Any] = field(default_factory=list)
    """Sentinel lines, highest composite first (:class:`mtboard.ledger.sentinels.Line`; issue 38): never ranked."""
    ids: list[int] = field(default_factory=list)
    """The view's entry ids, in the order its bootstrap uses (the board's ranked ids; a domain's among them)."""
    inseparable: bool = False
    """Every adjacent pair of ranked method rows has a paired 95 % CI that includes zero (issue 38 item 4;
    :func:`mtboard.ledger.flip.attach_flips`), with at least two ranked rows."""

    @property
    def label(self) -> str:
        return self.domain or "all domains"

    @functools.cached_property
    def pairwise(self) -> np.ndarray:
        """Holm-adjusted p-values of every pair of ranked rows (:func:`mtboard.score.stats.all_pairs`, over the
        N(N−1)/2 tests of the view's non-reference rows), an ``(N, N)`` array in row order. Computed when first read,
        not by every build: it costs O(N² × R) (issue 35: 14 s for one 2,000-row view here, ~19 minutes for the 80
        views of 10,000 synthetic cards) and no page reads the whole matrix (the board page tests its top rows,
        :func:`mtboard.site.boardpages._pairwise`)."""
        real = [r for r in self.rows if not r.reference]
        return stats.all_pairs([stats.RankRow(r.lc.page_id, r.composite or 0.0, r.boot) for r in real])


@dataclass
class Leaderboard:
    key: str
    dataset_id: str
    version: str
    language_pair: str
    sha256: str
    corpus: CorpusInfo | None
    page: str
    hard_page: str
    cards: list[LoadedCard]
    ranked_ids: list[int]
    views: list[View]
    unranked: list[LoadedCard]
    domains: list[str]
    field_entry_median: dict[int, float] = field(default_factory=dict)
    """Median sentence chrF++ over the ranked real systems (baselines excluded), per entry id."""
    chart_points: list[dict[str, Any]] = field(default_factory=list)
    hard_items: list[dict[str, Any]] = field(default_factory=list)
    easy_items: list[dict[str, Any]] = field(default_factory=list)
    item_methods: int = 0
    item_analysis: list[dict[str, Any]] = field(default_factory=list)
    """Per entry: difficulty, discrimination, fail share, suspect-reference flag (real systems only)."""
    suspect_items: list[dict[str, Any]] = field(default_factory=list)
    segment: str = "development"
    rows: list[Standing] = field(default_factory=list)
    """Every row of the board with its standing (:func:`mtboard.ledger.standing.decide`): ranked rows first."""
    state: BoardState | None = None
    """What the board holds in words (:func:`mtboard.ledger.standing.board_state`; issue 34 item 2)."""
    tries: dict[str, Any] = field(default_factory=dict)
    """Fingerprint → :class:`mtboard.ledger.tries.Tries` of every non-reference row (issue 37 item 4), set by
    :func:`mtboard.ledger.tries.attach_tries` once ranks are known."""
    facts: dict[str, Any] = field(default_factory=dict)
    """Fingerprint → :class:`mtboard.ledger.facts.ModelFacts` of every row (issue 37 item 2: the board's filters), set
    by :func:`mtboard.ledger.facts.attach_facts`."""
    scorers: Any = None
    """:class:`mtboard.ledger.scorers.BoardScorers`: each row's scorer, and whether the board mixes scorer versions
    (issue 38 item 2); set by :func:`mtboard.ledger.scorers.attach_scorers`."""
    contamination: dict[str, Any] = field(default_factory=dict)
    """Fingerprint → :class:`mtboard.ledger.contamination.RowContamination` (claims marking the row, its clean-subset
    score), rows with something to show only; filled by :func:`mtboard.ledger.contamination.attach` (issue 37)."""
    drift: dict[str, Any] = field(default_factory=dict)
    """Fingerprint → :class:`mtboard.ledger.canaries.RowDrift` (the row's canary runs and whether its model drifted),
    rows with a canary run only; filled by :func:`mtboard.ledger.canaries.attach` (issue 38 item 3)."""
    variants: dict[str, Any] = field(default_factory=dict)
    """Card path → :class:`mtboard.score.variants.VariantLint` of every card, for a corpus with variants only; filled
    by :func:`mtboard.ledger.variants.attach` (issue 39 item 2)."""
    context_slices: dict[str, Any] = field(default_factory=dict)
    """Card path → :class:`mtboard.ledger.context_slices.ContextSlices` of every card with a counted GEMBA-MQM judge
    and entries with dialogue history (issue 40 item 3); filled by :func:`mtboard.ledger.context_slices.attach`."""
    screen: dict[str, ScreenReady] = field(default_factory=dict)
    """Card path → :class:`mtboard.score.screen.ScreenReady` of every card of the board (issue 40 item 5;
    docs/SCORING_SPEC.md §4.8): computed once per card by :func:`build_leaderboards`, before its views; the board's
    ``screen`` column, the run page and ``data/ledger.json`` read it."""
    diagnostic: Any = None
    """The corpus's :class:`mtboard.ledger.diagnostic.DiagnosticBoard` when its corpus has a diagnostic segment (issue
    40 item 6); set by :func:`mtboard.ledger.diagnostic.attach`."""

    @property
    def title(self) -> str:
        return f"{self.language_pair} · {self.dataset_id} v{self.version}"


# --------------------------------------------------------------------------------------------------------------------
# Helpers


DIGITS: dict[str, int] = {"composite": 3, "screen": 3, "chrf": 1, "exact": 3, "equiv": 3, "term": 3, "morph": 3,
                          "fst": 3, "semantic": 3, "bleu": 1, "ter": 1, "mqm": 2, "rubric": 2, "checkpoints": 1, "cost_adj": 3, "entries_per_s": 1}
"""Decimals each metric is shown with, on every board cell, chart label and download that rounds it (issue 36 item 5:
one rounding rule per metric; the board CSV rounds with :func:`metric_text` too). Keys: board column keys, plus
``entries_per_s`` (a batch engine's throughput)."""


def metric_text(key: str, value: float | None) -> str:
    """``value`` of metric ``key`` (a :data:`DIGITS` key) with its fixed decimals (:func:`mtboard.core.fmt.num`):
    ``0.570``, ``48.2``; '—' for None or a non-finite value. Raises KeyError for a metric :data:`DIGITS` lacks."""
    return fmt.num(value, DIGITS[key])


def method_name(card: RunCard) -> str:
    """Display name of a method: spec, prompt (when any) and condition label.

    A ``gguf:`` spec may hold a local file path (``gguf:/home/…/model.gguf``); it is shown as ``gguf:<model slug>``
    (the weights are identified by ``method.model_file_sha256`` on the run page, not by where they lay on disk).
    Each part is :func:`mtboard.core.names.mark`-ed: a character the validator refuses in a name (a card read
    without it) is a visible ``[⚠U+XXXX]``, on every page, title, chart and download that shows the name.
    """
    spec = card.method.spec
    if card.method.backend == "gguf":
        spec = f"gguf:{card.model_slug}"
    parts = [mark(spec)]
    if card.method.prompt_name:
        parts.append(f"prompt {mark(card.method.prompt_name)}")
    parts.append(mark(card.condition))
    return " · ".join(parts)


def temperature_text(card: RunCard) -> str:
    """The sampling temperature as sent (``0``, ``0.7``); the dash for engines that take no temperature."""
    return fmt.DASH if card.temperature is None else f"{card.temperature:g}"


def run_page(lc: LoadedCard) -> str:
    return f"runs/{lc.page_id}.md"


def model_page(slug: str) -> str:
    return f"models/{fmt.slugify(slug)}.md"


def sentence_scores(lc: LoadedCard) -> array:
    """:func:`~mtboard.ledger.summary.sentence_chrf` (0–100; 0 for a mechanical failure or a missing score) of each
    of ``lc``'s run 0 results, in ``lc.card.results`` order (an ``array('d')``): the card's
    :attr:`~mtboard.ledger.summary.CardSummary.chrf`, made once per card (:func:`~mtboard.ledger.summary.summary`).
    The item statistics, the field medians, the compare data and the portraits read it (issue 35: four passes over
    every entry of every card were made one)."""
    return summary(lc).chrf


def scores_by_id(lc: LoadedCard) -> dict[int, float]:
    """Entry id → :func:`sentence_scores` value of ``lc`` (a repeated id: its last result's, as a dict of the results
    by id gives), made for one use and not kept."""
    return summary(lc).by_id()


def shown(lc: LoadedCard) -> bool:
    """The card is its row's shown card (:attr:`mtboard.ledger.standing.Standing.representative`): statistics over
    methods (item difficulty, field medians, chart points) take one card per row."""
    return lc.path == lc.standing.representative


def declared(lc: LoadedCard) -> bool:
    """The card's row is not GDS or community verified: its declared values are the contributor's
    (:attr:`mtboard.ledger.standing.Standing.declared`)."""
    return lc.standing.declared


def _judged(results: list[EntryResult], kind: str) -> dict[int, float]:
    """Entry id → judged value of one judge (scored, or not_sent at the worst value); judge failures are absent."""
    out = {}
    for r in results:
        v = r.judgements.get(kind)
        if v is not None and v.score is not None and v.status != "judge_failed":
            out[r.entry_id] = float(v.score)
    return out


def common_cells(rows_results: list[list[EntryResult]], kind: str) -> set[int]:
    """Entries every given row has a judged value for (GEMBA note: compare systems on common cells only)."""
    sets = [set(_judged(res, kind)) for res in rows_results]
    return set.intersection(*sets) if sets else set()


def _judge_text(value: float | None, results: list[EntryResult], kind: str) -> str:
    """A judge's value with the number of entries the judge failed on (issue 22): those are excluded from the value
    (issue 15: coverage, judged n of N), so a value over few judged entries must say so."""
    failed = sum(1 for r in results if kind in r.judgements and r.judgements[kind].status == "judge_failed")
    text = metric_text("mqm" if kind == "gemba-mqm" else kind, value)
    return f"{text} ({failed} of {len(results)} judge_failed)" if failed else text


def _date(card: RunCard) -> str:
    return card.timestamp[:10]


def _mean(values: list[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _speed(card: RunCard, sub: list[EntryResult], whole: bool) -> Cell:
    """Median per-entry latency when the entries were timed one by one; for batch engines (per-entry latency null)
    the throughput, never a batch average posing as a latency."""
    lat = [r.latency_s for r in sub if r.latency_s is not None]
    if lat:
        med = card.scores.median_latency_seconds if whole else _median(lat)
        return Cell(fmt.secs(med), med)
    if whole and card.scores.entries_per_minute:
        eps = card.scores.entries_per_minute / 60.0
        return Cell(f"batch: {metric_text('entries_per_s', eps)} entries/s",
                    1.0 / eps if eps else None)
    return Cell(fmt.DASH, None)


def _equiv_term(sub: list[EntryResult]) -> tuple[float | None, float | None, float | None]:
    """A domain view's equivalent-match rate (mean of the entries' ``equivalent_match``; None when the card has no
    variants), terminology adherence (Σ glossary hits ÷ Σ terms; None without a term) and morphological accuracy
    (Σ matched ÷ Σ units; None without a unit), as :mod:`mtboard.score.scoring` computes them over the whole run."""
    eq = [r.equivalent_match for r in sub if r.equivalent_match is not None]
    equiv = sum(eq) / len(sub) if sub and len(eq) == len(sub) else None
    terms = sum(r.glossary_terms or 0 for r in sub)
    units = sum(r.morph_units or 0 for r in sub)
    return (equiv, (sum(r.glossary_hits or 0 for r in sub) / terms if terms else None),
            (sum(r.morph_matched or 0 for r in sub) / units if units else None))


def _cells(lc: LoadedCard, domain: str | None, sub: list[EntryResult], chrf: float | None, chrf_sd: float | None,
           chrf_ci: tuple[float, float] | None, composite: float | None, composite_sd: float | None,
           composite_ci: tuple[float, float] | None, judged: dict[str, float | None],
           screen: ScreenReady | None = None) -> dict[str, Cell]:
    """Cells of one row in one view. Whole-dataset values come from the card; domain values from by_domain / entries;
    judge values from the view's common cells (``judged``); the screen-ready score (``screen``, the ledger's
    :attr:`Leaderboard.screen`) on the whole view only."""
    card, sc = lc.card, lc.card.scores
    if domain is None:
        exact = sc.exact_match_rate
        cost = lc.card.totals.cost_per_entry_usd
        cp = counted_judges(card).get("checkpoints")
        fst, semantic, cost_adj = sc.fst_acceptance_rate, sc.semantic_score, sc.cost_adjusted_score
        equiv, term, morph = sc.equivalent_match_rate, sc.terminology_adherence, sc.morphological_accuracy
    else:
        bd = sc.by_domain.get(domain)
        exact = (bd.exact_match_rate if bd and bd.exact_match_rate is not None
                 else (sum(r.exact_match for r in sub) / len(sub) if sub else None))
        costs = [r.cost_usd for r in sub if r.cost_usd is not None]
        cost = _mean(costs) if costs and len(costs) == len(sub) else None
        cp = None
        fst = semantic = cost_adj = None
        equiv, term, morph = _equiv_term(sub)
    cp_text = fmt.DASH
    if cp is not None and cp.mean is not None:
        spread = cp.spread
        cp_text = metric_text("checkpoints", cp.mean) + (f" ± {metric_text('checkpoints', spread)}"
                                                         if spread is not None else "")
    mqm, rubric = judged.get("gemba-mqm"), judged.get("rubric")
    dec = declared(lc)
    return {
        "method": Cell(method_name(card), method_name(card).lower(), dec),
        "composite": Cell(fmt.pm(composite, composite_sd, DIGITS["composite"]), composite),
        "composite_ci": Cell(fmt.ci(composite_ci, DIGITS["composite"]), composite_ci[0] if composite_ci else None),
        "screen": (Cell(metric_text("screen", screen.value), screen.value) if screen is not None and domain is None
                   else Cell(fmt.DASH, None)),
        "chrf": Cell(fmt.pm(chrf, chrf_sd, DIGITS["chrf"]), chrf),
        "chrf_ci": Cell(fmt.ci(chrf_ci, DIGITS["chrf"]), chrf_ci[0] if chrf_ci else None),
        "fst": Cell(metric_text("fst", fst), fst),
        "exact": Cell(metric_text("exact", exact), exact),
        "equiv": Cell(metric_text("equiv", equiv), equiv),
        "term": Cell(metric_text("term", term), term),
        "morph": Cell(metric_text("morph", morph), morph),
        "semantic": Cell(metric_text("semantic", semantic), semantic),
        "cost": Cell(cost_text(card, cost), cost),
        "speed": _speed(card, sub, domain is None),
        "cost_adj": Cell(metric_text("cost_adj", cost_adj), cost_adj),
        "mclass": Cell(str(card.method_class), str(card.method_class)),
        "model": Cell(mark(card.model_slug), card.model_slug.lower(), dec),
        "qtier": Cell(gated_tier(sc.quality_tier, lc.review)[0] if domain is None else fmt.DASH,
                      str(sc.quality_tier) if domain is None else None),
        "vtier": Cell(lc.standing.label, lc.standing.rank_order),
        "date": Cell(_date(card), card.timestamp, dec),
        "mqm": Cell(_judge_text(mqm, card.results if domain is None else sub, "gemba-mqm"), mqm),
        "rubric": Cell(_judge_text(rubric, card.results if domain is None else sub, "rubric"), rubric),
        "checkpoints": Cell(cp_text, cp.mean if cp is not None else None),
    }


# --------------------------------------------------------------------------------------------------------------------
# Building


def _runs(card: RunCard) -> list[list]:
    """Every replicate's per-entry results (run 0 first)."""
    return [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]


def _composite_boot(card: RunCard, ids: list[int], counts: np.ndarray) -> np.ndarray:
    """Bootstrap composites of a card over the view's entries: the mean over its replicate runs of each run's
    resampled composite (one run: that run's); :func:`mtboard.score.subset.composite_resamples_on`, the one
    definition the drift canaries share."""
    return composite_resamples_on(card, ids, counts)


@dataclass
class _Indexed:
    """A card's replicate runs indexed once per board, not again for every view (issue 35): per run (run 0 first)
    its results by entry id, its entry id → row map and its ``(entries, 24)`` chrF++ statistics (int32 when every
    value fits, else int64; widened to int64 exactly when sliced)."""

    by_id: list[dict[int, EntryResult]]
    rows: list[dict[int, int]]
    stats: list[np.ndarray]
    columns: list[dict[str, np.ndarray] | None]
    """Per run, :func:`mtboard.score.metrics.composite.entry_columns` of all its results as float64 arrays; None
    when some but not all entries carry a semantic score or a hallucination flag (a subset's columns then depend on
    the subset: computed per view)."""
    has_equiv: bool
    has_fst: bool

    @classmethod
    def of(cls, card: RunCard) -> _Indexed:
        has_fst = card.scores.fst_acceptance_rate is not None
        has_equiv = card.scores.equivalent_match_rate is not None
        by_id, rows, mats, cols = [], [], [], []
        for results in _runs(card):
            by_id.append({r.entry_id: r for r in results})
            rows.append({r.entry_id: k for k, r in enumerate(results)})
            mat = bootstrap.statistics_matrix([r.stats.chrf for r in results])
            small = mat.size == 0 or (int(mat.min()) >= -2**31 and int(mat.max()) < 2**31)
            mats.append(mat.astype(np.int32) if small else mat)
            mixed = any(len({getattr(r, f) is None for r in results}) > 1
                        for f in ("semantic_score", "hallucination_detected"))
            cols.append(None if mixed or not results else
                        {k: np.asarray(v, dtype=np.float64)
                         for k, v in entry_columns(results, has_equiv=has_equiv, has_fst=has_fst).items()})
        return cls(by_id, rows, mats, cols, has_equiv, has_fst)

    def _positions(self, run: int, ids: list[int]) -> np.ndarray:
        rows = self.rows[run]
        return np.fromiter((rows[i] for i in ids), dtype=np.intp, count=len(ids))

    def matrix(self, run: int, ids: list[int]) -> np.ndarray:
        """Run ``run``'s statistics over ``ids``, in that order: ``(len(ids), 24)`` int64 (the same integers as
        :func:`mtboard.score.metrics.bootstrap.statistics_matrix` of those entries' rows)."""
        return self.stats[run][self._positions(run, ids)].astype(np.int64)

    def entry_columns(self, run: int, ids: list[int]) -> dict[str, np.ndarray]:
        """:func:`mtboard.score.metrics.composite.entry_columns` of run ``run``'s results over ``ids`` (in that
        order): the same columns with the same float64 values, sliced from the run's columns. A column whose presence
        depends on the entries follows the same rule: the terminology ratio column only when some entry of ``ids``
        has glossary terms."""
        full = self.columns[run]
        if full is None or not ids:
            by_id = self.by_id[run]
            return entry_columns([by_id[i] for i in ids], has_equiv=self.has_equiv, has_fst=self.has_fst)
        pos = self._positions(run, ids)
        out: dict[str, np.ndarray] = {}
        for name, col in full.items():
            if col.ndim == 2:  # ratio column (hits, terms): present when any entry has terms
                piece = col[:, pos]
                if not np.any(piece[1] != 0):
                    continue
                out[name] = piece
            else:
                out[name] = col[pos]
        return out


def _row_boots(card: RunCard, idx: _Indexed, ids: list[int], counts: np.ndarray, seed: int,
               cache: ResampleCache) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One row-view's resamples on the view's ``counts`` (drawn from ``seed``; float64 or integer), each run's chrF++
    resamples computed once (issue 35: they were computed again for the composite, and again by the compare page)
    and read from ``cache`` when stored (:class:`mtboard.ledger.cache.ResampleCache`): ``(run 0's statistics matrix
    (n, 24), run 0's chrF++ (R,), the composite (R,), the chrF++ (R,))`` — the last two the mean over the replicate
    runs (one run: that run's), as :func:`_composite_boot` and :func:`mtboard.site.compare._runs_boot` compute
    them."""
    comps, chrfs, mats = [], [], []
    for run in range(len(idx.by_id)):
        mat = idx.matrix(run, ids)
        chrf = cache.chrf(mat, counts.shape[0], seed, lambda: counts) if len(ids) else \
            bootstrap.chrf_resamples(mat, counts)
        cols = idx.entry_columns(run, ids)
        comps.append(bootstrap.composite_resamples(mat, cols, counts, chrf=chrf))
        chrfs.append(chrf)
        mats.append(mat)
    many = len(comps) > 1
    return (mats[0], chrfs[0], np.mean(comps, axis=0) if many else comps[0],
            np.mean(chrfs, axis=0) if many else chrfs[0])


def board_domains(domains: dict[int, str | None]) -> list[str]:
    """A board's domains, one view each besides the whole board's: those of its first ranked card's entries
    (``domains``: entry id → domain value or None, :func:`entry_domains`), sorted."""
    return sorted({d for d in domains.values() if d is not None})


def entry_domains(lc: LoadedCard) -> dict[int, str | None]:
    """Entry id → domain value (None: no domain) of ``lc``'s run 0 results (a repeated id: its last result's), from
    its :class:`~mtboard.ledger.summary.CardSummary`."""
    s = summary(lc)
    return dict(zip(s.ids, s.domains))


def view_ids(ranked_ids: list[int], domains: dict[int, str | None], domain: str | None) -> list[int]:
    """A view's entry ids, in the order its bootstrap uses: the board's ranked ids (``ranked_ids`` itself); a
    domain's view, those whose entry in the first ranked card (``domains``: :func:`entry_domains` of it) is of
    ``domain``."""
    if domain is None:
        return ranked_ids
    return [i for i in ranked_ids if domains.get(i) == domain]


def board_page(key: str) -> str:
    """A board's page (its whole-board view's): ``leaderboards/<key>.md``."""
    return f"leaderboards/{key}.md"


def view_page(page: str, domain: str | None) -> str:
    """A view's page: the board's (``leaderboards/<key>.md``), or for a domain ``leaderboards/<key>-<domain>.md``."""
    return page if domain is None else page.replace(".md", f"-{domain}.md")


def _view(lb: Leaderboard, ranked: list[LoadedCard], domain: str | None, resamples: int,
          cache: ResampleCache | None = None, indexed: dict[str, _Indexed] | None = None) -> View:
    cache = cache if cache is not None else ResampleCache(None)
    indexed = indexed if indexed is not None else {lc.page_id: _Indexed.of(lc.card) for lc in ranked}
    by_id = {lc.page_id: indexed[lc.page_id].by_id[0] for lc in ranked}
    ids = view_ids(lb.ranked_ids, entry_domains(ranked[0]) if ranked else {}, domain)
    seed = stats.view_seed(lb.dataset_id, lb.version, lb.sha256, domain or "*")
    counts = bootstrap.resample_counts(len(ids), resamples, seed).astype(np.float64)  # exact; converted once
    judged = {}
    for kind in JUDGE_KEYS.values():
        having = [lc for lc in ranked if kind in counted_judges(lc.card)]
        if having and kind != "checkpoints":
            subs = [[by_id[lc.page_id][i] for i in ids] for lc in having]
            judged[kind] = (common_cells(subs, kind), having)
    rows: list[Row] = []
    for lc in ranked:
        card = lc.card
        res = by_id[lc.page_id]
        sub = [res[i] for i in ids]
        mat, chrf_boot, boot, chrf_mean = _row_boots(card, indexed[lc.page_id], ids, counts, seed, cache)
        rep = card.scores.replicates
        chrf_sd = composite_sd = None
        if domain is None:
            chrf, composite = card.scores.chrf_plus_plus, card.scores.composite
            if rep is not None:
                chrf, chrf_sd, composite, composite_sd = rep.chrf_mean, rep.chrf_stdev, rep.composite_mean, \
                    rep.composite_stdev
            chrf_ci = tuple(card.scores.chrf_ci95) if card.scores.chrf_ci95 and rep is None \
                else bootstrap.percentile_interval(chrf_boot)
        else:
            bd = card.scores.by_domain.get(domain)
            chrf = (bd.chrf_plus_plus if bd and bd.chrf_plus_plus is not None
                    else chrf_from_stats(mat) if len(mat) else None)
            composite = bd.composite if bd else None
            chrf_ci = bootstrap.percentile_interval(chrf_boot)
            if rep is not None:  # the domain slice of every replicate: the mean of the resampled composites
                composite = float(np.mean([_composite_boot(card, ids, np.ones((1, len(ids)), dtype=np.int64))]))
        composite_ci = bootstrap.percentile_interval(boot)
        values: dict[str, float | None] = {}
        for kind, (common, having) in judged.items():
            if lc in having:
                mine = _judged(sub, kind)
                values[kind] = _mean([mine[i] for i in ids if i in common])
        cells = _cells(lc, domain, sub, chrf, chrf_sd, chrf_ci, composite, composite_sd, composite_ci, values,
                       lb.screen.get(lc.path))
        rows.append(Row(lc, cells, composite, chrf, boot=boot, reference=is_reference(card), chrf_boot=chrf_boot,
                        chrf_ci=chrf_ci, composite_ci=composite_ci, chrf_mean_boot=chrf_mean))
    rows.sort(key=lambda r: (r.composite is None, -(r.composite or 0.0), -(r.chrf or 0.0),
                             r.cells["method"].sort, r.lc.page_id))
    note = "ordered by composite; ranks and CIs from a paired bootstrap of the composite"
    real = [r for r in rows if not r.reference]
    clusters = stats.rank_clusters([stats.RankRow(r.lc.page_id, r.composite or 0.0, r.boot) for r in real])
    for pos, (row, label, rng) in enumerate(zip(real, clusters.labels, clusters.ranges), start=1):
        row.position = pos
        row.rank = label
        row.cells["rank"] = Cell(label, rng[0] + pos / 10000)
    for row in rows:
        if row.reference:
            row.rank = "reference"
            row.cells["rank"] = Cell("reference", None)
    page = view_page(lb.page, domain)
    view = View(domain, len(ids), rows, clusters.mdd, page, note,
                judge_cells={k: (len(c), len(ids)) for k, (c, _) in judged.items()}, ids=list(ids))
    return view


def _struggle_sets(per_method: dict[str, dict[int, stats.ItemOutcome]]) -> dict[str, set[int]]:
    """Entries each method fails or scores in its own lowest decile (:func:`mtboard.score.stats.item_statistics`' rule)."""
    out: dict[str, set[int]] = {}
    for key, outcomes in per_method.items():
        scores = sorted(o.score for o in outcomes.values())
        if not scores:
            out[key] = set()
            continue
        cut = scores[max(0, math.ceil(len(scores) * stats.LOW_DECILE) - 1)]
        top = scores[-1]
        out[key] = {eid for eid, o in outcomes.items() if o.failed or (o.score <= cut and o.score < top)}
    return out


def _agreement(texts: list[str], reference: str) -> tuple[float | None, float | None]:
    """(mean pairwise sentence chrF++ between the outputs, both directions; mean sentence chrF++ against the
    reference)."""
    from mtboard.score.metrics.chrf import chrf_statistics, sentence_chrf_from_stats  # noqa: PLC0415 - sacrebleu

    if len(texts) < 2:
        return None, None
    pairs = [(a, b) for i, a in enumerate(texts) for j, b in enumerate(texts) if i != j]
    between = [sentence_chrf_from_stats(st) for st in chrf_statistics([a for a, _ in pairs], [b for _, b in pairs])]
    to_ref = [sentence_chrf_from_stats(st) for st in chrf_statistics(texts, [reference] * len(texts))]
    return float(statistics.fmean(between)), float(statistics.fmean(to_ref))


def _items(lb: Leaderboard, ranked: list[LoadedCard], entries: dict[int, EntryResult]) -> None:
    methods = [lc for lc in ranked if not is_reference(lc.card) and shown(lc)]  # one card per method row
    per_method: dict[str, dict[int, stats.ItemOutcome]] = {}
    for lc in methods:  # sentence_chrf(r) read once per card (issue 35)
        per_method[lc.page_id] = {
            r.entry_id: stats.ItemOutcome(failed(r), bool(r.exact_match or r.equivalent_match
                                                          or (r.chrf_score or 0) >= stats.PASS_CHRF), score)
            for r, score in zip(lc.card.results, sentence_scores(lc)) if r.entry_id in entries}
    lb.item_methods = len(per_method)
    if len(per_method) < 2:
        return
    for it in stats.item_statistics(per_method):
        e = entries[it.entry_id]
        item = {"id": it.entry_id, "domain": e.domain.value if e.domain else None, "source": e.source,
                "reference": e.expected, "share": it.struggle_share, "n": it.n_methods,
                "struggle": it.n_struggle, "pass": it.n_pass, "dev": e.segment == "development"}
        if it.struggle_share >= stats.HARD_SHARE:
            lb.hard_items.append(item)
        if it.n_pass == it.n_methods:
            lb.easy_items.append(item)
    lb.hard_items.sort(key=lambda x: (-x["share"], x["id"]))
    scores = {k: {eid: o.score for eid, o in v.items()} for k, v in per_method.items()}
    fails = _struggle_sets(per_method)
    outputs = {lc.page_id: {r.entry_id: r for r in lc.card.results} for lc in methods}
    analysis = stats.item_analysis(scores, fails)
    for a in analysis:
        if a.n_systems >= stats.SUSPECT_MIN_SYSTEMS and a.fail_share >= stats.SUSPECT_FAIL_SHARE:
            usable = [outputs[k][a.entry_id].predicted for k in outputs
                      if not failed(outputs[k][a.entry_id]) and outputs[k][a.entry_id].predicted.strip()]
            a.output_agreement, a.reference_agreement = _agreement(usable, entries[a.entry_id].expected)
        e = entries[a.entry_id]
        row = {"id": a.entry_id, "domain": e.domain.value if e.domain else None, "source": e.source,
               "reference": e.expected, "difficulty": a.difficulty, "discrimination": a.discrimination,
               "fail_share": a.fail_share, "n": a.n_systems, "suspect": a.suspect_reference,
               "output_agreement": a.output_agreement, "reference_agreement": a.reference_agreement}
        lb.item_analysis.append(row)
        if a.suspect_reference:
            lb.suspect_items.append(row)
    by_id = {x["id"]: x for x in lb.item_analysis}
    for x in lb.hard_items:
        a = by_id.get(x["id"], {})
        x.update(difficulty=a.get("difficulty"), discrimination=a.get("discrimination"), suspect=a.get("suspect"))


def build_leaderboards(plans: list[BoardPlan], resamples: int = bootstrap.BOOTSTRAP_RESAMPLES,
                       cache: ResampleCache | None = None, stats: Any = None) -> list[Leaderboard]:
    """Every view, cluster, chart point and item statistic of the boards :func:`mtboard.ledger.standing.decide`
    planned (which cards each board ranks is decided there). ``cache``: resampled chrF++ by content
    (:class:`mtboard.ledger.cache.ResampleCache`, issue 35 item 3); None computes every resample. ``stats``: each
    board's statistics by the key of everything they are made from (a :class:`mtboard.ledger.boardstats.BoardStats`,
    which imports this module: its ``fill`` is called with :func:`_compute_board`), read instead of computed when
    stored; None computes every board. The result is the same with or without either,
    bit for bit."""
    cache = cache if cache is not None else ResampleCache(None)
    boards: list[Leaderboard] = []
    for plan in plans:
        lb = Leaderboard(plan.key, plan.dataset_id, plan.version, plan.language_pair, plan.sha256, plan.corpus,
                         board_page(plan.key), f"hard/{plan.key}.md", plan.cards, plan.ref_ids, [],
                         plan.unranked, [], segment=plan.segment, rows=plan.rows, state=plan.state)
        compute = functools.partial(_compute_board, plan=plan, resamples=resamples)
        if stats is None:
            compute(lb, cache)
        else:
            stats.fill(lb, plan, cache, compute)
        boards.append(lb)
    return boards


def _compute_board(lb: Leaderboard, cache: ResampleCache, *, plan: BoardPlan, resamples: int) -> None:
    """Set the statistics of board ``lb`` (:data:`mtboard.ledger.boardstats.FIELDS`) from ``plan``'s cards."""
    ranked, ref_ids = plan.ranked, plan.ref_ids
    lb.screen = {lc.path: screen_ready(lc.card) for lc in plan.cards}  # once per card (issue 40 item 5)
    entries: dict[int, EntryResult] = {}
    if ranked:
        entries = {r.entry_id: r for r in ranked[0].card.results}
    lb.domains = board_domains(entry_domains(ranked[0]) if ranked else {})
    indexed = {lc.page_id: _Indexed.of(lc.card) for lc in ranked}  # this board's cards, indexed once
    lb.views.append(_view(lb, ranked, None, resamples, cache, indexed))
    for d in lb.domains:
        lb.views.append(_view(lb, ranked, d, resamples, cache, indexed))
    del indexed
    # field statistics: real systems only, one card per method row (a reproduction does not count twice)
    real = [lc for lc in ranked if not is_reference(lc.card) and shown(lc)]
    by_id = [scores_by_id(lc) for lc in real]
    for eid in ref_ids:
        vals = [s[eid] for s in by_id]
        if vals:
            lb.field_entry_median[eid] = float(statistics.median(vals))
    _items(lb, ranked, entries)
    for row in lb.views[0].rows:
        if row.reference or not shown(row.lc):
            continue  # the chart shows ranked methods; baselines are reference lines, not points
        lc = row.lc
        lb.chart_points.append({"label": method_name(lc.card), "model": lc.card.model_slug,
                                "cost": lc.card.totals.cost_per_entry_usd, "composite": lc.card.scores.composite,
                                "chrf": lc.card.scores.chrf_plus_plus, "position": row.position,
                                "href": run_page(lc)})


# --------------------------------------------------------------------------------------------------------------------
# Fingerprints


def tool_rows(card: RunCard) -> list[tuple[str, Any, str]]:
    """Run-page rows of a pipeline card (``--tools``; issue 18): the FST gate's retry limit and the tool calls of
    run 0, total and mean per entry, and the retries among them (every check after an entry's first; spec §3.5
    ``tool_call_count``). ``[]`` for a card without tools.
    Rows are ``(label, value, card field)`` like the run page's other top rows."""
    if not card.tools_enabled:
        return []
    calls = [r.tool_call_count for r in card.results]
    mean = sum(calls) / len(calls) if calls else 0.0
    rows: list[tuple[str, Any, str]] = []
    if card.method.fst_retries is not None:
        rows.append(("FST gate retry limit", card.method.fst_retries, "method"))
    checked = sum(1 for c in calls if c)
    rows.append(("tool calls", f"{sum(calls)} total, {mean:.2f} per entry: each hypothesis checked counts, so "
                               f"{sum(calls) - checked} were retries (over {sum(1 for c in calls if c > 1)} "
                               "entries)", "results"))
    return rows


def counted_judges(card: RunCard) -> dict[str, JudgeSummary]:
    """The card's judges whose verdicts the board counts (issue 39, BookTrans judge admission): a judge that takes
    the admission check (:data:`~mtboard.judges.admission.ADMITTING_KINDS`: GEMBA-MQM, rubric) counts only with a
    recorded check it passed (``admission.admitted`` true; absent = not admitted, the validator refuses such a
    card); the checkpoint judge takes none and counts. The one place that decides it: judge columns, common cells
    and the checkpoint column read this; a refused judge's verdicts stay in the card and on the run page, marked
    not admitted."""
    return {k: j for k, j in card.judges.items()
            if k not in ADMITTING_KINDS
            or (getattr(j, "admission", None) is not None and j.admission.admitted)}  # a summary-like may lack it


def admission_text(summary: JudgeSummary) -> str:
    """What the run page says after a judge's name about its admission check (issue 39): ``""`` without one,
    ``"; admitted: 10 of 10 known-answer items (threshold 9)"``, or ``"; NOT admitted: 7 of 10 known-answer items
    (threshold 9): its verdicts are kept but not counted"``."""
    a = summary.admission
    if a is None:
        return ""
    head = "admitted" if a.admitted else "NOT admitted"
    tail = "" if a.admitted else ": its verdicts are kept but not counted"
    return f"; {head}: {a.passed} of {a.items} known-answer items (threshold {a.threshold}){tail}"


def prompt_choice_rows(card: RunCard) -> list[tuple[str, Any, str]]:
    """Run-page row of a card whose prompt was chosen from the served model's identity (``method.prompt_choice``;
    issue 40 item 4): the family, the evidence that decided it, the template and why. ``[]`` for a card given
    ``--prompt``. Rows are ``(label, value, card field)`` like the run page's other top rows."""
    c = card.method.prompt_choice
    if c is None:
        return []
    said = f" ({c.source}: {c.evidence})" if c.source else ""
    return [("prompt chosen", f"{c.family or 'no family recognised'}{said} → template {c.template}; {c.reason}",
             "method")]


def format_attempt_rows(card: RunCard) -> list[tuple[str, Any, str]]:
    """Run-page rows of a card made with ``--format-attempts N`` (N ≥ 2; issue 39): the limit, and for run 0 the
    entries asked again, the extra attempts and the penalty they cost the composite (docs/SCORING_SPEC.md §3.4: the
    composite before the penalty times ``0.1 × extra ÷ entries``, recomputed from the card's composite). ``[]`` for
    a card asking once. Rows are ``(label, value, card field)`` like the run page's other top rows."""
    from mtboard.score.metrics.composite import FORMAT_ATTEMPT_PENALTY  # noqa: PLC0415

    if card.method.format_attempts is None:
        return []
    extra = [r.format_attempts - 1 for r in card.results]
    n, total = len(extra), sum(extra)
    rows: list[tuple[str, Any, str]] = [("format attempt limit", card.method.format_attempts, "method")]
    share = FORMAT_ATTEMPT_PENALTY * total / n if n else 0.0
    if total:
        before = card.scores.composite / (1.0 - share)
        text = (f"{total} extra over {sum(1 for x in extra if x)} of {n} entries; penalty "
                f"{FORMAT_ATTEMPT_PENALTY:g} × {total} ÷ {n} = {share:.4f} of the composite "
                f"(≈ {before:.4f} before the penalty → {card.scores.composite:.4f})")
    else:
        text = f"none: every one of {n} entries answered in format at the first attempt"
    rows.append(("format attempts", text, "results"))
    return rows


def fingerprint_diff(a: RunCard, b: RunCard) -> list[tuple[str, Any, Any, bool]]:
    """Component-by-component comparison: (component, value in a, value in b, differs)."""
    ca, cb = a.fingerprint.components, b.fingerprint.components
    keys = sorted(set(ca) | set(cb))
    return [(k, ca.get(k), cb.get(k), ca.get(k) != cb.get(k)) for k in keys]


def component_items(card: RunCard) -> frozenset[tuple[str, Any]]:
    """The card's fingerprint components as hashable ``(component, value)`` pairs (a list value as a tuple; a
    ``None`` value left out, as a missing component compares equal to it in :func:`fingerprint_diff`)."""
    return frozenset((k, tuple(v) if isinstance(v, list) else v)
                     for k, v in card.fingerprint.components.items() if v is not None)


def differing_components(a: frozenset[tuple[str, Any]], b: frozenset[tuple[str, Any]]) -> int:
    """How many components differ between two :func:`component_items` sets: the count of ``differs`` in
    :func:`fingerprint_diff` (a component is counted once, whatever differs about it)."""
    return len({k for k, _ in a ^ b})


def closest_runs(boards: list[Leaderboard], cap: int = 200) -> dict[str, tuple[LoadedCard, int]]:
    """For each card, the card of another method row (another fingerprint: never its own reproduction) of the same
    dataset and model with the fewest differing fingerprint components (ties: smallest page id). Candidates are capped
    per model so the cost stays linear; each card's components are made hashable once
    (:func:`component_items`), not compared key by key for every pair (issue 35: 400,000 pairs at 2,000 cards)."""
    out: dict[str, tuple[LoadedCard, int]] = {}
    for lb in boards:
        by_model: dict[str, list[LoadedCard]] = defaultdict(list)
        for lc in lb.cards:
            by_model[lc.card.model_slug].append(lc)
        for group in by_model.values():
            group = group[:cap]
            items = {id(lc): component_items(lc.card) for lc in group}
            for lc in group:
                best: tuple[int, str, LoadedCard] | None = None
                for other in group:
                    if other.card.fingerprint.hash == lc.card.fingerprint.hash:
                        continue
                    n = differing_components(items[id(lc)], items[id(other)])
                    if best is None or (n, other.page_id) < (best[0], best[1]):
                        best = (n, other.page_id, other)
                if best is not None:
                    out[lc.page_id] = (best[2], best[0])
    return out
