"""A card's scores on a subset of its entries: the composite and corpus chrF++ as the board defines them, on any list
of entry ids, for one draw or for bootstrap resamples.

One definition shared by every place that scores part of a card: the board's views and clean subsets
(:func:`mtboard.ledger.tables._composite_boot`), the drift canaries' runs (:mod:`mtboard.verify.canary`) and the
card's composite on the same canary entries with its CI (:mod:`mtboard.ledger.canaries`). A card with replicate runs
scores the mean over its runs of each run's value (one run: that run's).
"""

from __future__ import annotations

import numpy as np

from mtboard.core.schema import RunCard
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.score.metrics.composite import entry_columns


def runs_of(card: RunCard) -> list[list]:
    """Every replicate's per-entry results (run 0 first)."""
    return [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]


def composite_resamples_on(card: RunCard, ids: list[int], counts: np.ndarray) -> np.ndarray:
    """Composites (0–1) of ``card`` on entries ``ids`` for each row of ``counts`` (``(R, len(ids))`` resample counts,
    :func:`mtboard.score.metrics.bootstrap.resample_counts`; a row of ones is the composite itself): the mean over
    the card's replicate runs of each run's (:func:`mtboard.score.metrics.bootstrap.composite_resamples`).
    Raises: KeyError when an id is not among a run's results."""
    has_fst = card.scores.fst_acceptance_rate is not None
    has_equiv = card.scores.equivalent_match_rate is not None
    boots = []
    for results in runs_of(card):
        by_id = {r.entry_id: r for r in results}
        sub = [by_id[i] for i in ids]
        cols = entry_columns(sub, has_equiv=has_equiv, has_fst=has_fst)
        boots.append(bootstrap.composite_resamples([r.stats.chrf for r in sub], cols, counts))
    return np.mean(boots, axis=0) if len(boots) > 1 else boots[0]


def composite_on(card: RunCard, ids: list[int]) -> float:
    """The composite (0–1) of ``card`` on entries ``ids`` (:func:`composite_resamples_on` with one row of ones).
    Raises: KeyError (an id the card did not evaluate), ValueError (no id)."""
    if not ids:
        raise ValueError("no entry to score")
    return float(composite_resamples_on(card, ids, np.ones((1, len(ids)), dtype=np.int64))[0])


def chrf_on(card: RunCard, ids: list[int]) -> float:
    """Corpus chrF++ (0–100) of ``card`` on entries ``ids``, from the summed sacrebleu statistics of each run (the
    mean over replicate runs). Raises: KeyError (an id the card did not evaluate), ValueError (no id)."""
    if not ids:
        raise ValueError("no entry to score")
    values = []
    for results in runs_of(card):
        by_id = {r.entry_id: r for r in results}
        values.append(chrf_from_stats(bootstrap.statistics_matrix([by_id[i].stats.chrf for i in ids])))
    return float(np.mean(values))


__all__ = ["chrf_on", "composite_on", "composite_resamples_on", "runs_of"]
