"""Contamination on the board (issue 37 item 3): which claims mark each row, and each row's clean-subset score.

Decided here, once, for every board row (the pages and ``data/ledger.json`` read the result):

* **Marks** — the claims under ``contamination/`` that apply to a row: the claim's ``model`` is the slug of the
  record the row's shown card links to (:meth:`mtboard.inputs.models.ModelIndex.link`: a refused record too, so
  that breaking a record cannot hide a claim), its ``dataset`` is the
  board's dataset id, its ``versions`` cover the board's version (:func:`mtboard.inputs.contamination.version_matches`),
  its ``entries`` (when listed) meet the entries the card evaluated, and its status is ``open`` or ``confirmed``. A
  ``rejected`` claim is listed on the Contamination page and marks nothing; a claim with a problem
  (:func:`mtboard.inputs.contamination.check_claims`) marks nothing either. The *automatic* claim: the record's
  declared ``training_corpora`` name an upstream package of the board's corpus
  (:func:`mtboard.inputs.contamination.declared_overlap`), shown like a claim ("declared training data overlaps: …").
* **Clean subset** — the entries of the board's segment whose ``added`` date (spec §2.2 extension) lies after the
  record's ``training_cutoff`` (:func:`mtboard.inputs.contamination.after_cutoff`), among those the shown card
  evaluated; the row's composite on them and its 95 % bootstrap CI, computed with the functions the board's own
  composite CI uses (:func:`mtboard.ledger.tables._composite_boot`, :func:`mtboard.score.metrics.bootstrap.
  resample_counts`, :func:`~mtboard.score.metrics.bootstrap.percentile_interval`). None when the subset is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mtboard.core import fmt
from mtboard.core.schema.model import ContaminationClaim, ModelRecord
from mtboard.inputs.contamination import after_cutoff, check_claims, declared_overlap, version_matches
from mtboard.ledger.load import Inputs, LoadedCard
from mtboard.ledger.summary import summary
from mtboard.ledger.tables import DIGITS, Leaderboard, _composite_boot
from mtboard.score import stats
from mtboard.score.metrics import bootstrap

PAGE = "contamination.md"
"""The site page that lists every claim (one anchor per claim)."""
MARKING = ("open", "confirmed")
"""Claim statuses that mark rows."""


def claim_anchor(path: str) -> str:
    """The claim's anchor on the Contamination page: ``claim-`` + the slug of its file name without ``.yaml`` plus 6
    hex of its SHA-256 (:func:`mtboard.core.fmt.slugify`; distinct files never collide):
    ``contamination/gemma-3-270m-mtb-en-es-dev.yaml`` → ``claim-gemma-3-270m-mtb-en-es-dev-3fb597``."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return "claim-" + fmt.slugify(stem)


def auto_anchor(model: str, dataset: str) -> str:
    """The anchor of an automatic (declared-overlap) claim: ``auto-<model>-<dataset>``."""
    return "auto-" + fmt.slugify(f"{model}-{dataset}")


@dataclass(frozen=True)
class Mark:
    """One claim marking a row."""

    anchor: str
    """Its anchor on the Contamination page (:func:`claim_anchor`, :func:`auto_anchor`)."""
    text: str
    """What the row says: ``contamination claim (open)`` or ``declared training data overlaps: udhr``."""
    status: str
    """``open``, ``confirmed`` or ``automatic``."""
    path: str | None
    """The claim file (relative to the repository root); None for an automatic claim."""


@dataclass(frozen=True)
class CleanSubset:
    """A row's composite on the entries added after its model's training cutoff."""

    cutoff: str
    """The record's ``training_cutoff`` (YYYY[-MM[-DD]])."""
    entries: int
    """Entries after the cutoff (≥ 1)."""
    composite: float
    """Composite (0–1) on those entries, as the board defines it (replicate runs: the mean over runs)."""
    composite_ci: tuple[float, float] | None
    """95 % bootstrap percentile interval of that composite."""

    @property
    def text(self) -> str:
        """``0.412 [0.301, 0.520] on 3 entries after the cutoff (2024-08)``."""
        n = f"{self.entries} {'entry' if self.entries == 1 else 'entries'} after the cutoff ({self.cutoff})"
        return f"{fmt.num(self.composite, DIGITS['composite'])} {fmt.ci(self.composite_ci, DIGITS['composite'])} on {n}"


@dataclass
class RowContamination:
    """What one board row shows about contamination (empty ``marks`` and None ``clean``: nothing)."""

    marks: list[Mark] = field(default_factory=list)
    clean: CleanSubset | None = None


@dataclass(frozen=True)
class ClaimEntry:
    """One claim as the Contamination page lists it."""

    anchor: str
    path: str | None
    """The claim file; None for an automatic claim."""
    claim: ContaminationClaim | None
    """The claim as filed; None for an automatic claim."""
    model: str
    dataset: str
    automatic: str = ""
    """For an automatic claim: the overlapping packages, comma-separated."""
    problems: tuple[str, ...] = ()
    """Why the claim marks nothing besides its status (:func:`~mtboard.inputs.contamination.check_claims`)."""
    rows: tuple[tuple[str, str], ...] = ()
    """(board page, fingerprint) of each row it marks."""


def clean_subset(lc: LoadedCard, record: ModelRecord | None, lb: Leaderboard,
                 resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> CleanSubset | None:
    """The clean subset of one row (its shown card ``lc``) on board ``lb``; None without a record, a cutoff, a corpus
    or an evaluated entry added after the cutoff. The resamples are drawn from a seed of the board and the cutoff
    (:func:`mtboard.score.stats.view_seed`), so rows of one cutoff share them as a view's rows do."""
    if record is None or not record.training_cutoff or lb.corpus is None:
        return None
    cutoff = record.training_cutoff
    evaluated = set(summary(lc).ids)
    ids = sorted(e.id for e in lb.corpus.corpus.entries
                 if e.segment == lb.segment and e.id in evaluated and after_cutoff(e.added, cutoff))
    if not ids:
        return None
    value = float(_composite_boot(lc.card, ids, np.ones((1, len(ids)), dtype=np.int64))[0])
    seed = stats.view_seed(lb.dataset_id, lb.version, lb.sha256, f"clean<{cutoff}")
    counts = bootstrap.resample_counts(len(ids), resamples, seed)
    ci = bootstrap.percentile_interval(_composite_boot(lc.card, ids, counts))
    return CleanSubset(cutoff, len(ids), value, ci)


def attach(boards: list[Leaderboard], inputs: Inputs,
           resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> list[ClaimEntry]:
    """Fill ``lb.contamination`` (fingerprint → :class:`RowContamination`, rows with something to show only) for
    every board and return every claim for the Contamination page: the filed claims in file order, then the automatic
    ones (by model, then dataset)."""
    records = inputs.models.records + list(inputs.models.refused.values())  # a refused record is still the model's
    problems: dict[str, list[str]] = {}
    for line in check_claims(inputs.claims, records, [c.corpus for c in inputs.corpora]):
        problems.setdefault(line.split(": ", 1)[0], []).append(line)
    marked: dict[str, list[tuple[str, str]]] = {}
    auto: dict[tuple[str, str], tuple[str, list[tuple[str, str]]]] = {}
    for lb in boards:
        lb.contamination = {}
        by_path = {c.path: c for c in lb.cards}  # one lookup per row, not a scan of the board's cards
        for s in lb.rows:
            lc = by_path.get(s.representative)
            if lc is None:
                continue
            record = inputs.models.record_for(lc.card)
            # a claim marks the rows of its model also when the model's record is refused (bound values disagree):
            # breaking a record must not hide a claim against the model
            claimed = inputs.models.link(lc.card).record
            row = RowContamination()
            evaluated = set(summary(lc).ids)
            for path, claim in inputs.claims if claimed is not None else []:
                if (claim.model != claimed.slug or claim.dataset != lb.dataset_id or claim.status not in MARKING
                        or path in problems or not version_matches(claim.versions, lb.version)
                        or (claim.entries and not evaluated.intersection(claim.entries))):
                    continue
                row.marks.append(Mark(claim_anchor(path), f"contamination claim ({claim.status})", claim.status, path))
                marked.setdefault(path, []).append((lb.page, s.fingerprint))
            if record is not None and lb.corpus is not None:
                overlap = declared_overlap(record, lb.corpus.corpus)
                if overlap:
                    anchor = auto_anchor(record.slug, lb.dataset_id)
                    row.marks.append(Mark(anchor, "declared training data overlaps: " + ", ".join(overlap),
                                          "automatic", None))
                    auto.setdefault((record.slug, lb.dataset_id), (", ".join(overlap), []))[1].append(
                        (lb.page, s.fingerprint))
            row.clean = clean_subset(lc, record, lb, resamples)
            if row.marks or row.clean is not None:
                lb.contamination[s.fingerprint] = row
    out = [ClaimEntry(claim_anchor(p), p, c, c.model, c.dataset, problems=tuple(problems.get(p, ())),
                      rows=tuple(marked.get(p, ()))) for p, c in inputs.claims]
    out += [ClaimEntry(auto_anchor(m, d), None, None, m, d, automatic=pk, rows=tuple(rows))
            for (m, d), (pk, rows) in sorted(auto.items())]
    return out


__all__ = ["MARKING", "PAGE", "ClaimEntry", "CleanSubset", "Mark", "RowContamination", "attach", "auto_anchor",
           "claim_anchor", "clean_subset"]
