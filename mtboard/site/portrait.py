"""A model's failure portrait (``models/<slug>.md``; design note "Model portrait"): :func:`build_portraits` gathers
every run of a model slug over every dataset — outcomes and flags, error kinds, the domains where it trails the
field most, MQM severities and classes, checkpoint areas, rubric flags and the entries it loses most against the
field's median — into one :class:`Portrait`; :func:`summaries` and :func:`groups` make the fold above it (issue 12
item 5): one line per run with its main failure modes and their rates beside the field median, and the runs grouped
by prompt and condition.

A *failure mode* is a mechanical outcome other than ``usable`` (``no_usable_output``, ``source_untranslated``) or a
mechanical flag (``flag:<rule>``, e.g. an output with commentary), counted over the run's development entries; its
rate is the share of those entries. The field median of a mode is the median of that rate over the *real systems*
ranked on the same board (method class ``baseline`` excluded: echo and empty fail every entry by design).
"""

from __future__ import annotations

import heapq
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from mtboard.inputs.models import ADD_RECORD_PAGE, ModelIndex, ModelLink
from mtboard.ledger.load import LoadedCard
from mtboard.ledger.summary import summary
from mtboard.ledger.tables import Leaderboard, is_reference, method_name, model_page, run_page
from mtboard.site.charts import canary_history

TOP_MODES = 3
WORST_DOMAINS = 8
"""Domain rows a portrait shows (the largest deficits against the field first)."""
LOSSES = 20
"""Entries a portrait shows (the largest sentence chrF++ deficits against the field's median first)."""
CHARTS = 6
"""Per-run domain charts a portrait shows (its first runs, board order; ~1.5 KB of SVG each): a model with many
runs keeps a bounded page — every run's domain scores stay on its run page (issue 35 item 1)."""


@dataclass
class Portrait:
    """One model slug's failure portrait over all its runs (every dataset). Shares are of ``n_entries``; chrF++
    values are 0–100; lists are in the order the page shows them."""

    slug: str
    page: str
    """The portrait's page (:func:`mtboard.ledger.tables.model_page`)."""
    runs: list[dict[str, Any]]
    """Per run, in board order: label, href, lb (board page), composite, chrf, errors, n (entries), pair."""
    outcomes: list[tuple[str, int, float]]
    """(outcome or flag, count, share of entries)."""
    error_kinds: list[tuple[str, int]]
    worst_domains: list[dict[str, Any]]
    """Up to :data:`WORST_DOMAINS` (run, domain, chrf, field median, delta, n, href) where the run's chrF++ is below
    the field median (delta < 0), most negative delta first; empty when the model beats the field everywhere."""
    mqm_severity: list[tuple[str, int]]
    mqm_classes: list[tuple[str, int]]
    checkpoint_areas: list[tuple[str, str, float]]
    """(run label, area, value) from the checkpoints judge's breakdown."""
    rubric_flags: list[tuple[str, int]]
    losses: list[dict[str, Any]]
    """Up to :data:`LOSSES` development entries below the field's entry median, most negative delta first."""
    charts: list[dict[str, Any]]
    """Per run with domain rows (the first :data:`CHARTS`): its chrF++ and the field median per domain."""
    n_entries: int
    charts_total: int = 0
    """Runs with domain rows, shown or not."""
    weights: str = ""
    """Where the model's weights are, as its runs declare it (:func:`weights_text`; several kinds joined by "; ")."""
    record: ModelLink = field(default_factory=lambda: ModelLink("none"))
    """The model record its runs link to (:meth:`mtboard.inputs.models.ModelIndex.link` of its first run; issue 37)."""
    claims: list[Any] = field(default_factory=list)
    """The contamination claims about its record's model (:class:`mtboard.ledger.contamination.ClaimEntry`, filed and
    automatic, as the Contamination page lists them; :func:`attach_claims`)."""
    canaries: list[dict[str, Any]] = field(default_factory=list)
    """Per run with canary runs (issue 38 item 3; the ledger's :class:`mtboard.ledger.canaries.RowDrift`): label,
    href, ``drift`` and ``chart`` (:func:`mtboard.site.charts.canary_history`), in board order."""

    @property
    def record_view(self) -> RecordView:
        """:func:`record_view` of :attr:`record`."""
        return record_view(self.record)


RECORD_FIELDS = (
    ("organisation", "Organisation"), ("weights", "Weights"), ("parameter_count", "Parameters"),
    ("architecture", "Architecture"), ("licence", "Licence"), ("quantization", "Quantization"),
    ("context_length", "Context length"), ("engine.version", "Engine version"), ("engine.pairs", "Language pairs"),
    ("release_date", "Release date"), ("training_cutoff", "Training cutoff"),
    ("training_corpora", "Training corpora"), ("links", "Links"))
"""The record fields a models page shows, in order, with their labels (issue 37 item 1)."""


def params_text(n: int) -> str:
    """A parameter count for people, 3 significant figures: 268,098,176 → "268 M", 1,500,000,000 → "1.5 B"."""
    for scale, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "k")):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return str(n)


@dataclass(frozen=True)
class RecordRow:
    """One field of a model record as a page shows it."""

    label: str
    value: str
    """The value as text ("268 M", "32,768 tokens"); empty for ``links``."""
    links: tuple[str, ...]
    """https URLs (the ``links`` field only)."""
    mark: str
    """``bound``, ``declared`` or ``conflict`` (:data:`mtboard.inputs.binding.STATUSES`)."""
    source: str
    """Where a bound value was read; for a conflict, the bound value and where it was read."""


@dataclass(frozen=True)
class RecordView:
    """A model record on a page (:func:`record_view`)."""

    state: str
    """``record``, ``refused``, ``none`` or ``baseline`` (:class:`mtboard.inputs.models.ModelLink`)."""
    text: str
    """Empty for a valid record, else "model record refused" / "no model record"."""
    slug: str = ""
    name: str = ""
    kind: str = ""
    rows: tuple[RecordRow, ...] = ()
    notes: tuple[str, ...] = ()
    """Conflicts (refused), then why values could not be bound."""
    add_page: str = ADD_RECORD_PAGE
    """The contribute page's section on adding a record."""


def _text(name: str, value: Any) -> str:
    if name == "parameter_count":
        return f"{params_text(value)} ({value:,})"
    if name == "context_length":
        return f"{value:,} tokens"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def record_view(link: ModelLink) -> RecordView:
    """The rows a page shows for a card's model record: each of :data:`RECORD_FIELDS` the record gives or its weights
    or engine bind, marked bound (with where it was read), declared or conflict. Values are plain text (the templates
    escape them: records are untrusted input)."""
    rec = link.record
    if rec is None:
        return RecordView(link.state, link.text)
    check = link.check
    by_field = {f.field: f for f in check.fields} if check is not None else {}
    rows = []
    for name, label in RECORD_FIELDS:
        f = by_field.get(name)
        if f is None:
            if check is not None:
                continue
            head, _, tail = name.partition(".")
            value = getattr(getattr(rec, head), tail) if tail and getattr(rec, head) is not None else (
                None if tail else getattr(rec, head))
            if value is None or value == []:
                continue
            mark, source, shown = "declared", "", value
        else:
            mark = f.status
            shown = f.declared if f.declared is not None else f.bound
            source = f.source if mark == "bound" else (
                f"bound {_text(name, f.bound)} from {f.source}" if f.bound is not None else "")
        links = tuple(shown) if name == "links" else ()
        rows.append(RecordRow(label, "" if links else _text(name, shown), links, mark, source))
    notes = tuple(check.conflicts) + tuple(check.notes) if check is not None else ()
    return RecordView(link.state, link.text, rec.slug, rec.name, rec.kind, tuple(rows), notes)


def record_views(models: ModelIndex) -> list[RecordView]:
    """Every record of ``models``, valid and refused, by slug (the models index lists records without runs too)."""
    recs = sorted([*models.records, *models.refused.values()], key=lambda r: r.slug)
    return [record_view(ModelLink("refused" if r.slug in models.refused else "record", r, models.checks.get(r.slug)))
            for r in recs]


LOCAL_PROVIDERS = ("llama.cpp", "local", "ollama", "vllm")
"""``method.api_provider`` values that serve weights on the submitter's own machine."""


def weights_text(card: Any) -> str:
    """What a run card declares about its model's weights (issue 36, the visitor task "open-weight models"): a local
    GGUF file (with its SHA-256 when recorded), weights served locally, a rule-based engine, a baseline, or an API
    whose weights the run cannot show. Declared by the submitter, like the model slug; a GDS re-run of a GGUF card
    checks the file's hash."""
    m = card.method
    if card.method_class == "baseline" or m.backend in ("echo", "empty"):
        return "baseline (no model)"
    if m.backend == "apertium":
        return "rule-based engine, open source (Apertium)"
    if m.backend == "gguf" or m.model_file_sha256:
        return (f"open weights: GGUF file sha256 {m.model_file_sha256[:12]}…" if m.model_file_sha256
                else "open weights: GGUF file")
    if m.api_provider in LOCAL_PROVIDERS:
        return f"weights served locally ({m.api_provider})"
    return f"API ({m.api_provider or m.backend}): the weights are not part of the run"


@dataclass
class _Gathered:
    """What :func:`_portrait` collects over a model's runs before sorting."""

    outcomes: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    severity: Counter[str] = field(default_factory=Counter)
    classes: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    areas: list[tuple[str, str, float]] = field(default_factory=list)
    worst: list[dict[str, Any]] = field(default_factory=list)
    losses: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    canaries: list[dict[str, Any]] = field(default_factory=list)
    n_entries: int = 0


def build_portraits(boards: list[Leaderboard], models: ModelIndex | None = None) -> list[Portrait]:
    """One portrait per model slug (sorted), aggregating its rows over every dataset (board order, then row order):
    one run per ledger row — the row's shown card (:attr:`mtboard.ledger.standing.Standing.representative`), so a
    reproduction does not count the method twice. ``models``: the record each portrait's first run links to
    (:attr:`Portrait.record`; None: no records)."""
    by_model: dict[str, list[tuple[Leaderboard, LoadedCard]]] = defaultdict(list)
    for lb in boards:
        by_path = {lc.path: lc for lc in lb.cards}
        for row in lb.rows:
            lc = by_path[row.representative]
            by_model[lc.card.model_slug].append((lb, lc))
    index = _DomainIndex()
    out = [_portrait(slug, by_model[slug], index) for slug in sorted(by_model)]
    if models is not None:
        for p in out:
            p.record = models.link(by_model[p.slug][0][1].card)
    return out


def attach_claims(portraits: list[Portrait], claims: list[Any]) -> None:
    """Give each portrait the claims (:class:`mtboard.ledger.contamination.ClaimEntry`) whose model is its record's
    slug (a refused record's too: a claim is about the model, issue 37)."""
    for p in portraits:
        slug = p.record.record.slug if p.record.record is not None else None
        p.claims = [c for c in claims if slug is not None and c.model == slug]


def _portrait(slug: str, pairs: list[tuple[Leaderboard, LoadedCard]], index: _DomainIndex) -> Portrait:
    """Gather every run of one model (:func:`_count_results`, :func:`_domain_rows`, :func:`_losses`), then sort:
    counts by decreasing count then name (outcomes and error kinds by name), domains and losses by delta.
    ``index``: the build's :class:`_DomainIndex`, shared by every portrait."""
    g = _Gathered()
    for lb, lc in pairs:
        card = lc.card
        label = f"{method_name(card)} on {lb.dataset_id} v{lb.version}"
        if lc.standing.reproduction.text:
            label += f" ({lc.standing.reproduction.text})"
        g.runs.append({"label": label, "href": run_page(lc), "lb": lb.page, "composite": card.scores.composite,
                       "chrf": card.scores.chrf_plus_plus, "errors": card.scores.errors,
                       "n": len(summary(lc).ids), "pair": lb.language_pair})
        _count_results(g, lc)
        cp = card.judges.get("checkpoints")
        if cp is not None:
            for area, value in sorted(cp.breakdown.get("area", {}).items()):
                g.areas.append((label, area, value))
        domain_rows = _domain_rows(lb, lc, label, index)
        g.worst.extend(d for d in domain_rows if d["delta"] < 0)  # worse than the field only (issue 36 item 4)
        if domain_rows:
            g.charts.append({"run": label, "bars": [(d["domain"], d["chrf"], d["field"]) for d in domain_rows]})
        g.losses.extend(_losses(lb, lc, label))
        drift = (getattr(lb, "drift", None) or {}).get(lc.standing.fingerprint) if lc.standing else None
        if drift is not None:
            g.canaries.append({"label": label, "href": run_page(lc), "drift": drift, "chart": canary_history(
                [(pt.date, pt.composite, pt.outside) for pt in drift.runs], drift.card_composite, drift.card_ci,
                f"Canary runs of {label}")})
    g.worst.sort(key=lambda d: (d["delta"], d["domain"], d["run"]))
    # the LOSSES most negative, as sorted(...)[:LOSSES] orders them (heapq.nsmallest's documented equivalence)
    losses = heapq.nsmallest(LOSSES, g.losses, key=lambda x: (x["delta"], x["run"], x["id"]))
    n = g.n_entries
    return Portrait(
        slug, model_page(slug), g.runs, [(k, v, v / n if n else 0.0) for k, v in sorted(g.outcomes.items())],
        sorted(g.kinds.items()), g.worst[:WORST_DOMAINS], _by_count(g.severity), _by_count(g.classes), g.areas,
        _by_count(g.flags), losses, g.charts[:CHARTS], n, len(g.charts),
        "; ".join(dict.fromkeys(weights_text(lc.card) for _, lc in pairs)), canaries=g.canaries)


def _by_count(counts: Counter[str]) -> list[tuple[str, int]]:
    """Counts by decreasing count, then name."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _count_results(g: _Gathered, lc: LoadedCard) -> None:
    """Count one run's entries into ``g``: outcomes and flags, error kinds, GEMBA-MQM severities and categories,
    rubric flags (the card's :class:`~mtboard.ledger.summary.Tallies`)."""
    s = summary(lc)
    g.n_entries += len(s.ids)
    t = s.tallies
    g.outcomes.update(t.outcomes)
    g.kinds.update(t.kinds)
    g.severity.update(t.severity)
    g.classes.update(t.classes)
    g.flags.update(t.flags)


class _DomainIndex:
    """Per domain view, its rows by card and the median chrF++ of its real systems, each computed once a build (not
    once per run: a 2,000-row board made that quadratic, issue 35). Views and cards are keyed by ``id()``: valid while
    the build's boards are alive (one :func:`build_portraits` call)."""

    def __init__(self) -> None:
        self._views: dict[int, tuple[dict[int, Any], float | None]] = {}

    def __call__(self, view: Any) -> tuple[dict[int, Any], float | None]:
        """``view``'s first row of each card (``id(row.lc)`` → row) and the median chrF++ of its non-reference rows
        with a value (None when no row has one)."""
        found = self._views.get(id(view))
        if found is None:
            by_card: dict[int, Any] = {}
            for row in view.rows:
                by_card.setdefault(id(row.lc), row)  # the first row of a card, as a scan would find it
            field_vals = [row.chrf for row in view.rows if row.chrf is not None and not row.reference]
            found = (by_card, float(statistics.median(field_vals)) if field_vals else None)
            self._views[id(view)] = found
        return found


def _domain_rows(lb: Leaderboard, lc: LoadedCard, label: str,
                 index: _DomainIndex | None = None) -> list[dict[str, Any]]:
    """The run's chrF++ in each domain view of its board beside the median of the real systems there (reference
    baselines excluded); views where the run or the field has no value are left out. ``index``: the build's
    :class:`_DomainIndex` (None: a new one)."""
    index = _DomainIndex() if index is None else index
    rows = []
    for view in lb.views[1:]:
        by_card, med = index(view)
        mine = by_card.get(id(lc))
        if mine is None or mine.chrf is None or med is None:
            continue
        rows.append({"run": label, "domain": view.domain, "chrf": mine.chrf, "field": med,
                     "delta": mine.chrf - med, "n": view.n_entries, "href": view.page})
    return rows


def _losses(lb: Leaderboard, lc: LoadedCard, label: str) -> list[dict[str, Any]]:
    """Every development entry of the run below its field median (``lb.field_entry_median``): its sentence chrF++
    (:func:`mtboard.ledger.tables.sentence_chrf`, failures 0) beside that median, and the texts with their
    dataset's id and version (the page names its licence). Entries at or above the median are not losses: the
    portrait never shows them, so no row is made for them (issue 35: a row per entry of every card of a model)."""
    out = []
    medians = lb.field_entry_median
    s = summary(lc)
    for k, mine_s in enumerate(s.chrf):
        if s.segments[k] != "development":
            continue
        med = medians.get(s.ids[k])
        if med is None:
            continue
        if not mine_s - med < 0:
            continue
        out.append({"run": label, "href": run_page(lc), "id": s.ids[k], "source": s.sources[k],
                    "dataset": lb.dataset_id, "version": lb.version,
                    "reference": s.references[k], "output": s.outputs[k], "chrf": mine_s, "field": med,
                    "delta": mine_s - med, "outcome": s.outcomes[k], "domain": s.domains[k]})
    return out


def modes(lc: LoadedCard) -> tuple[Counter[str], int]:
    """Failure-mode counts over the development entries, and the number of those entries
    (:func:`mtboard.ledger.summary.modes_of`, kept in the card's summary)."""
    return summary(lc).modes


def _field(lb: Leaderboard, counted: dict[str, tuple[Counter[str], int]]) -> tuple[list[dict[str, float]], int]:
    """Per real ranked system of the board: mode → rate, and how many systems. ``counted``: :func:`modes` of each
    card of the board, by page id."""
    rates = []
    for row in lb.views[0].rows if lb.views else []:
        if row.reference:
            continue
        counts, n = counted[row.lc.page_id]
        rates.append({k: v / n for k, v in counts.items()} if n else {})
    return rates, len(rates)


def summaries(boards: list[Leaderboard]) -> dict[str, list[dict[str, Any]]]:
    """model slug → one summary line per run (board order, then row order): run label, link, board, rank range,
    composite ±CI, and the top :data:`TOP_MODES` failure modes as ``(mode, rate, field median, count)``."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for lb in boards:
        counted = {lc.page_id: modes(lc) for lc in lb.cards}  # once per card: _field reads the ranked ones too
        field_rates, n_field = _field(lb, counted)
        rows = {r.lc.page_id: r for r in lb.views[0].rows} if lb.views else {}
        for lc in lb.cards:
            counts, n = counted[lc.page_id]
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_MODES]
            row = rows.get(lc.page_id)
            out[lc.card.model_slug].append({
                "label": method_name(lc.card), "href": run_page(lc), "board": lb.title, "board_page": lb.page,
                "pair": lb.language_pair, "rank": row.rank if row else "unranked",
                "composite": row.cells["composite"].text if row else f"{lc.card.scores.composite:.3f}",
                "ci": row.cells["composite_ci"].text if row else "",
                "prompt": lc.card.method.prompt_name or "no prompt", "condition": lc.card.condition,
                "baseline": is_reference(lc.card), "n": n, "n_field": n_field,
                "modes": [(k, v / n if n else 0.0,
                           statistics.median([f.get(k, 0.0) for f in field_rates]) if field_rates else None, v)
                          for k, v in top]})
    return out


def groups(lines: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The summary lines grouped by prompt · condition (sorted)."""
    g: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        g[f"{line['prompt']} · {line['condition']}"].append(line)
    return sorted(g.items())
