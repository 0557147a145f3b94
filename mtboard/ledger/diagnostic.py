"""The diagnostic boards (issue 40 item 6; spec §2.3): each corpus's diagnostic segment as a view of its own, never
ranked and never mixed into the development board.

Spec §2.3: the diagnostic segment holds "targeted tests of specific linguistic phenomena", public, and developers
iterate on it freely. A score on it says where a system fails on those phenomena; it does not order systems (24
entries cannot, and a system tuned on public entries proves nothing). So this module decides, once, for every
corpus with a diagnostic segment (dataset id + version + corpus SHA-256):

* **Which rows** — the cards run on the diagnostic segment (``mtboard run --segment diagnostic``): planned by
  :func:`mtboard.ledger.standing.decide` like every board (one row per fingerprint, its tier, evidence, reproductions,
  coverage, reference baseline or not), in a plan that is never a board (:data:`mtboard.ledger.standing.DIAGNOSTIC`).
  Its standing is read here, never recomputed: a row whose standing is ranked (the whole segment, not a baseline) is
  listed in diagnostic order; reference baselines and runs on part of the segment are listed apart, as on the board.
* **A row's numbers** — over the shown card's diagnostic entries: ``n``; corpus chrF++ from the summed sacrebleu
  statistics (:func:`mtboard.score.subset.chrf_on`; replicate runs: the mean over runs), with its 95 % bootstrap
  percentile interval; the composite (:func:`mtboard.score.subset.composite_on`, the definition the board's views and
  flip distances share) with its interval; the mechanical outcomes (:class:`~mtboard.core.schema.Outcome` counts,
  run 0) and the failures among them (:func:`mtboard.ledger.tables.failed`); the entries where the mechanical
  ``placeholder`` rule fired; and the same chrF++ per phenomenon group.
* **Phenomenon groups** — the corpus records no per-entry phenomenon field: every committed diagnostic entry was
  chosen because its source carries placeholders (:func:`mtboard.inputs.corpora.labels.is_diagnostic`; the
  corpus description says so), and the entries' ``domain`` tells which placeholder convention they test (each domain
  comes from one upstream: Django's ``%(name)s``/``{name}``, GNU Health's ``%s``, Wesnoth's ``$name|``). So the
  groups are the entries' recorded domains; an entry without one is ``(none)``.
* **Order** — diagnostic composite, highest first, then chrF++, then method name; shown without rank numbers.
  Resamples are seeded by the corpus and ``diagnostic`` (:func:`mtboard.score.stats.view_seed`) and shared by the
  board's rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from mtboard.core.schema import EntryResult, Outcome
from mtboard.ledger.load import CorpusInfo, Inputs, LoadedCard
from mtboard.ledger.standing import DIAGNOSTIC, BoardPlan, Standing
from mtboard.ledger.tables import Leaderboard, failed, method_name
from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.score.subset import chrf_on, composite_on, composite_resamples_on, runs_of

NO_GROUP = "(none)"
"""The phenomenon group of a diagnostic entry without a recorded domain."""
PHENOMENON = ("placeholders: the source carries format placeholders (%(name)s, %s, {0}, $name|) that a translation "
              "must copy verbatim and place grammatically")
"""What every committed diagnostic entry targets (:func:`mtboard.inputs.corpora.labels.is_diagnostic`)."""
PURPOSE = ("Diagnostic segment (spec §2.3): public targeted tests of specific phenomena, for finding where a system "
           "fails. Not a ranking: rows are listed in diagnostic order without rank numbers, and nothing here counts "
           "towards the development board.")
"""The one line every diagnostic board shows above its table."""
EMPTY = "No card on this corpus was run on the diagnostic segment yet: run one with mtboard run CORPUS --segment " \
        "diagnostic."
"""What a diagnostic board without rows says."""


@dataclass(frozen=True)
class GroupScore:
    """A row's chrF++ on one phenomenon group: its entries and corpus chrF++ (0–100) over them."""

    n: int
    chrf: float


@dataclass(frozen=True)
class DiagnosticRow:
    """One row of a diagnostic board: its standing (decided by :func:`mtboard.ledger.standing.decide`) and the shown
    card's scores over its diagnostic entries."""

    standing: Standing
    lc: LoadedCard
    """The shown card (the standing's representative)."""
    method: str
    """Display name (:func:`mtboard.ledger.tables.method_name`)."""
    n: int
    chrf: float
    """Corpus chrF++ (0–100) over the diagnostic entries."""
    chrf_ci: tuple[float, float] | None
    composite: float
    """Composite (0–1) over the diagnostic entries."""
    composite_ci: tuple[float, float] | None
    outcomes: dict[str, int]
    """Mechanical outcome → entries (run 0), every outcome listed (0 when none)."""
    failures: int
    """Entries with a mechanical failure (no usable output, source untranslated or an error)."""
    placeholder_flags: int
    """Entries where the mechanical ``placeholder`` rule fired (their placeholders match neither source nor reference)."""
    groups: dict[str, GroupScore]
    """Phenomenon group → chrF++ on it (groups of the board present in the card)."""

    @property
    def listed(self) -> bool:
        """Listed in diagnostic order: the standing's ranked (whole segment, not a reference baseline)."""
        return self.standing.ranked


@dataclass(frozen=True)
class DiagnosticBoard:
    """One corpus's diagnostic board."""

    key: str
    """Page name: the development board's key when the corpus has one, else ``<dataset id>-v<version>``."""
    dataset_id: str
    version: str
    sha256: str
    language_pair: str
    entries: int
    """The corpus's diagnostic entries."""
    groups: list[str]
    """Phenomenon groups (the diagnostic entries' domains), sorted; ``(none)`` last."""
    group_sizes: dict[str, int]
    board: str | None
    """The development board's key (None when the corpus has no development board)."""
    rows: list[DiagnosticRow] = field(default_factory=list)
    """Rows in diagnostic order (:attr:`DiagnosticRow.listed` first), then reference baselines, then the others."""

    @property
    def page(self) -> str:
        """Site path of the board (Markdown source)."""
        return f"diagnostic/{self.key}.md"

    @property
    def title(self) -> str:
        return f"{self.language_pair} · {self.dataset_id} v{self.version}"


def _group(r: EntryResult) -> str:
    return r.domain.value if r.domain is not None else NO_GROUP


def _group_order(names) -> list[str]:
    return sorted(set(names), key=lambda g: (g == NO_GROUP, g))


def row_scores(standing: Standing, lc: LoadedCard, groups: list[str], seed: int,
               resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> DiagnosticRow:
    """The diagnostic numbers of one row from its shown card ``lc`` (module docstring); ``seed``: the board's resample
    seed. Raises: ValueError when the card has no diagnostic entry."""
    card = lc.card
    diag = [r for r in card.results if r.segment == DIAGNOSTIC]
    if not diag:
        raise ValueError(f"{lc.path}: no diagnostic entry")
    ids = [r.entry_id for r in diag]
    counts = bootstrap.resample_counts(len(ids), resamples, seed)
    chrf_boot = []
    for results in runs_of(card):
        by_id = {r.entry_id: r for r in results}
        chrf_boot.append(bootstrap.chrf_resamples([by_id[i].stats.chrf for i in ids], counts))
    outcomes = Counter(r.checks.outcome.value if isinstance(r.checks.outcome, Outcome) else str(r.checks.outcome)
                       for r in diag)
    by_group: dict[str, list[int]] = {}
    for r in diag:
        by_group.setdefault(_group(r), []).append(r.entry_id)
    return DiagnosticRow(
        standing, lc, method_name(card), len(ids), chrf_on(card, ids),
        bootstrap.percentile_interval(np.mean(chrf_boot, axis=0)), composite_on(card, ids),
        bootstrap.percentile_interval(composite_resamples_on(card, ids, counts)),
        {o.value: outcomes.get(o.value, 0) for o in Outcome}, sum(failed(r) for r in diag),
        sum(any(f.rule == "placeholder" for f in r.checks.flags) for r in diag),
        {g: GroupScore(len(by_group[g]), chrf_on(card, by_group[g])) for g in groups if g in by_group})


def _order(row: DiagnosticRow) -> tuple:
    s = row.standing
    return (not s.ranked, s.reference, -row.composite, -row.chrf, row.method, s.fingerprint)


def build(boards: list[Leaderboard], plans: list[BoardPlan], corpora: list[CorpusInfo],
          resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> list[DiagnosticBoard]:
    """One :class:`DiagnosticBoard` per loaded corpus with a diagnostic segment (with or without a development board
    or a diagnostic card: a board without rows says so) and per diagnostic plan, sorted by key. ``boards``: the development boards; ``plans``: the diagnostic plans of
    :func:`mtboard.ledger.standing.decide` (segment :data:`~mtboard.ledger.standing.DIAGNOSTIC`); ``corpora``: the
    loaded corpora (a plan whose corpus is not loaded takes its groups from its cards)."""
    by_corpus = {(c.corpus.dataset.id, c.corpus.dataset.version, c.sha256): c for c in corpora}
    dev = {(lb.dataset_id, lb.version, lb.sha256): lb for lb in boards}
    diag = {(p.dataset_id, p.version, p.sha256): p for p in plans if p.segment == DIAGNOSTIC}
    # every loaded corpus with a diagnostic segment gets its board, with or without cards (issue 40 acceptance)
    keys = {k for k, c in by_corpus.items() if c.corpus.segment(DIAGNOSTIC)} | set(diag)
    names = Counter(k[:2] for k in keys)
    out = []
    for k in keys:
        ds_id, version, sha = k
        info, lb, plan = by_corpus.get(k), dev.get(k), diag.get(k)
        if info is not None:
            entries = info.corpus.segment(DIAGNOSTIC)
            sizes = Counter(e.domain.value if e.domain is not None else NO_GROUP for e in entries)
            pair = info.corpus.dataset.language_pair
        else:
            results = [r for lc in plan.cards for r in lc.card.results if r.segment == DIAGNOSTIC]
            sizes = Counter(_group(r) for r in {r.entry_id: r for r in results}.values())
            pair = plan.language_pair
        key = lb.key if lb is not None else f"{ds_id}-v{version}" + (f"-{sha[:8]}" if names[k[:2]] > 1 else "")
        groups = _group_order(sizes)
        db = DiagnosticBoard(key, ds_id, version, sha, str(pair), sum(sizes.values()), groups, dict(sizes),
                             lb.key if lb is not None else None)
        if plan is not None:
            seed = stats.view_seed(ds_id, version, sha, DIAGNOSTIC)
            by_path = {lc.path: lc for lc in plan.cards}
            rows = [row_scores(s, by_path[s.representative], groups, seed, resamples) for s in plan.rows]
            db.rows.extend(sorted(rows, key=_order))
        out.append(db)
    return sorted(out, key=lambda d: d.key)


def attach(ledger_boards: list[Leaderboard], plans: list[BoardPlan], inputs: Inputs,
           resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> list[DiagnosticBoard]:
    """:func:`build` from the ledger's inputs; each development board with a diagnostic board gets its page name in
    ``lb.diagnostic`` (the board and its run pages link to it)."""
    out = build(ledger_boards, plans, getattr(inputs, "corpora", []), resamples)
    by_board = {d.board: d for d in out if d.board is not None}
    for lb in ledger_boards:
        lb.diagnostic = by_board.get(lb.key)
    return out


__all__ = ["DiagnosticBoard", "DiagnosticRow", "EMPTY", "GroupScore", "NO_GROUP", "PHENOMENON", "PURPOSE", "attach",
           "build", "row_scores"]
