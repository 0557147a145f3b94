"""Drift canaries on the board (issue 38 item 3): which rows' models drifted since their card was made.

Decided here, once, for every board row (the board page, the model pages and ``data/ledger.json`` read the result):

* **A row's canary runs** — the records under ``canaries/history/`` (:func:`mtboard.inputs.canaries.load_history`)
  whose ``card_fingerprint`` is the row's fingerprint and whose dataset id, version and corpus SHA-256 are the board's,
  oldest first. A run whose entries the row's shown card did not all evaluate counts for nothing (a warning).
* **The yardstick** — the shown card's composite on the canary entries and its 95 % bootstrap CI
  (:func:`mtboard.verify.canary.reference`: the board's composite definition on resamples of those entries, seeded
  by the dataset and ``canary``).
* **Drifted** — the *latest* run's composite lies outside that CI: the model as served now scores differently from
  the card on the same entries, more than resampling the card's own entries explains. Earlier runs outside the CI
  are listed on the model page (each run's ``outside``), but a model back inside its CI is not marked: the mark says
  what the model does now.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mtboard.core import fmt
from mtboard.core.schema.canary import CanaryRun
from mtboard.ledger.load import Inputs
from mtboard.ledger.tables import DIGITS, Leaderboard
from mtboard.score.metrics import bootstrap
from mtboard.verify.canary import API_BACKENDS, reference


@dataclass(frozen=True)
class CanaryPoint:
    """One canary run of a row's method."""

    date: str
    composite: float
    chrf_plus_plus: float
    outside: bool
    """Its composite lies outside the card's CI on the canary entries."""
    served: str
    """The model the server reported serving (``model_id``, else ``model_slug``)."""
    path: str
    """Its record, relative to the repository root."""


@dataclass(frozen=True)
class RowDrift:
    """A row's drift canaries: the card's composite on the canary entries with its CI, and every run."""

    entries: int
    card_composite: float
    card_ci: tuple[float, float] | None
    runs: list[CanaryPoint] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        """The latest run lies outside the card's CI."""
        return bool(self.runs) and self.runs[-1].outside

    @property
    def text(self) -> str:
        """``drifted: canary 0.212 (2026-12-04) outside the card's 0.611 [0.540, 0.690] on 12 canary entries`` (or
        ``no drift: …inside…``)."""
        last = self.runs[-1]
        d = DIGITS["composite"]
        head = "drifted" if self.drifted else "no drift"
        where = "outside" if self.drifted else "inside"
        return (f"{head}: canary {fmt.num(last.composite, d)} ({last.date[:10]}) {where} the card's "
                f"{fmt.num(self.card_composite, d)} {fmt.ci(self.card_ci, d)} on {self.entries} canary entries")


def row_drift(card, runs: list[tuple[str, CanaryRun]],
              resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> tuple[RowDrift | None, list[str]]:
    """The drift of one row from its shown ``card`` and its canary ``runs`` (``(path, run)``, oldest first), and one
    warning per run that counts for nothing (entries the card did not evaluate, or not the latest run's entries).
    None when no run counts."""
    if not runs:
        return None, []
    evaluated = {r.entry_id for r in card.results}
    ids = list(runs[-1][1].entry_ids)
    warnings, kept = [], []
    for path, run in runs:
        if list(run.entry_ids) != ids or not evaluated.issuperset(ids):
            warnings.append(f"canary run {path} counts for nothing: its entries are not the latest run's or the card "
                            "did not evaluate them all")
            continue
        kept.append((path, run))
    if not kept:
        return None, warnings
    ref = reference(card, ids, resamples)
    points = [CanaryPoint(run.date, run.composite, run.chrf_plus_plus, ref.outside(run.composite),
                          run.served.model_id or run.served.model_slug, path) for path, run in kept]
    return RowDrift(len(ids), ref.composite, ref.ci, points), warnings


def attach(boards: list[Leaderboard], inputs: Inputs, resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> None:
    """Fill ``lb.drift`` (fingerprint → :class:`RowDrift`, rows with a counting canary run only) on every board from
    ``inputs.canaries``; warnings go to ``inputs.warnings``."""
    by_fp: dict[str, list[tuple[str, CanaryRun]]] = {}
    for path, run in inputs.canaries:
        by_fp.setdefault(run.card_fingerprint, []).append((path, run))
    for lb in boards:
        lb.drift = {}
        if not by_fp:
            continue
        by_path = {c.path: c for c in lb.cards}
        for s in lb.rows:
            lc = by_path.get(s.representative)
            runs = [(p, r) for p, r in by_fp.get(s.fingerprint, [])
                    if (r.dataset_id, r.version, r.sha256) == (lb.dataset_id, lb.version, lb.sha256)
                    and lb.segment == "development"]
            if lc is None or not runs:
                continue
            # a record counts only for an API row (a local or RBMT engine cannot drift under its name) whose method
            # it re-ran (verify/canary.API_BACKENDS; issue 38 review)
            foreign = [p for p, r in runs if lc.card.method.backend not in API_BACKENDS or r.method != lc.card.method.spec]
            for p in foreign:
                inputs.warnings.append(f"canary run left out: {p}: its method or the row's backend is not an API "
                                       f"method re-run of {lc.card.method.spec} (fix: remove the file)")
            runs = [(p, r) for p, r in runs if p not in foreign]
            if not runs:
                continue
            drift, warnings = row_drift(lc.card, runs, resamples)
            inputs.warnings.extend(warnings)
            if drift is not None:
                lb.drift[s.fingerprint] = drift


__all__ = ["CanaryPoint", "RowDrift", "attach", "row_drift"]
