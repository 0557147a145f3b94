"""Building the ledger from the site's inputs: plan the boards and decide every row's standing
(:func:`mtboard.ledger.standing.decide`), compute every view's statistics (:func:`mtboard.ledger.tables.build_leaderboards`),
then rank and cluster one row per fingerprint (:func:`mtboard.ledger.methods.attach_methods`), give each adjacent
pair of ranked rows its flip distance and each view its inseparable flag (:func:`mtboard.ledger.flip.attach_flips`;
issue 38 item 4), count each model's
tries on each board (:func:`mtboard.ledger.tries.attach_tries`) and its rows' facts
(:func:`mtboard.ledger.facts.attach_facts`) and its scorer (:func:`mtboard.ledger.scorers.attach_scorers`; issue 38),
then the contamination claims marking each row and its clean-subset score
(:func:`mtboard.ledger.contamination.attach`; issue 37), the drift canaries of each row
(:func:`mtboard.ledger.canaries.attach`; issue 38 item 3), the variant-class lint of every card
(:func:`mtboard.ledger.variants.attach`; issue 39 item 2), the context-behaviour slices of every card judged by
GEMBA-MQM on entries with dialogue history (:func:`mtboard.ledger.context_slices.attach`; issue 40 item 3), each corpus's diagnostic board, never ranked
(:func:`mtboard.ledger.diagnostic.attach`; issue 40 item 6: the diagnostic segment's cards are planned apart and never
become a board), and every view's sentinel lines with the ranked rows inside a
floor sentinel's cluster (:func:`mtboard.ledger.sentinels.attach`; issue 38 item 1; attached right after the method rows).

The result, :class:`BoardLedger`, is what the site renders and ``mtboard ledger`` prints; :mod:`mtboard.ledger.document`
turns it into the published ``data/ledger.json``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from mtboard.ledger import (canaries, contamination, context_slices, diagnostic, facts, flip, methods, scorers, sentinels, standing,
                            tables, tries, variants)
from mtboard.ledger.boardstats import BoardStats
from mtboard.ledger.cache import FlipCache, ResampleCache
from mtboard.ledger.load import Inputs, LoadedCard
from mtboard.ledger.standing import BoardPlan
from mtboard.ledger.tables import Leaderboard
from mtboard.score.metrics import bootstrap


@dataclass(frozen=True)
class BoardLedger:
    """The computed board: ``boards`` (every view's statistics and method rows, in key order) and ``plans`` (the same
    boards' rows and standings, :class:`mtboard.ledger.standing.BoardPlan`)."""

    inputs: Inputs
    boards: list[Leaderboard]
    plans: list[BoardPlan]
    resample_hits: int = 0
    """Row-view chrF++ resamples read from the build cache (:func:`build_ledger`)."""
    resample_misses: int = 0
    """Row-view chrF++ resamples computed (and stored) because the build cache had no usable entry."""
    flip_hits: int = 0
    """Flip distances of adjacent rows read from the build cache (:class:`mtboard.ledger.cache.FlipCache`)."""
    flip_misses: int = 0
    """Flip distances searched (and stored) because the build cache had no usable entry; 0 without a cache."""
    board_stats_hits: int = 0
    """Boards whose statistics were read from the build cache (:class:`mtboard.ledger.boardstats.BoardStats`)."""
    board_stats_misses: int = 0
    """Boards whose statistics were computed (and stored) because the build cache had no usable entry; 0 without a
    cache."""
    diagnostic: list[Any] = field(default_factory=list)
    """Every corpus's diagnostic board (:class:`mtboard.ledger.diagnostic.DiagnosticBoard`; issue 40 item 6), by key:
    never ranked, never among ``boards``."""
    claims: list[Any] = field(default_factory=list)
    """Every contamination claim, filed and automatic (:class:`mtboard.ledger.contamination.ClaimEntry`; issue 37):
    what the Contamination page lists."""
    cache_used: dict[str, set[str]] = field(default_factory=dict)
    """The keys of the build cache's entries this ledger read or stored, by kind (``resamples``, ``flips``,
    ``sentinels``: :data:`mtboard.core.cachefiles.KINDS`); empty without a cache. What ``mtboard build`` keeps when it
    prunes the cache (:func:`mtboard.core.cachefiles.prune_entries`)."""

    @functools.cached_property
    def _by_path(self) -> dict[str, LoadedCard]:
        return {lc.path: lc for lc in self.inputs.cards}

    @functools.cached_property
    def state(self) -> standing.BoardState:
        """What the whole site holds, in words (:func:`mtboard.ledger.standing.site_state`: no submission, every
        submission rejected, or the state every board shares; issue 34 item 2)."""
        return standing.site_state(self.plans, len(self.inputs.rejected))

    def card(self, card_path: str) -> LoadedCard:
        """The loaded card at ``card_path`` (relative to submissions/). Raises: KeyError (a rejected card is not on
        the board)."""
        return self._by_path[card_path]


def build_ledger(inputs: Inputs, resamples: int = bootstrap.BOOTSTRAP_RESAMPLES,
                 cache: Path | None = None) -> BoardLedger:
    """Decide every standing, compute every view and rank one row per method (``resamples``: bootstrap resamples of
    the paired tests, spec §4.6; :data:`mtboard.score.metrics.bootstrap.BOOTSTRAP_RESAMPLES` by default).
    ``cache``: the build cache folder (``mtboard build --cache``; issue 35 item 3): every row-view's resampled chrF++
    is read from ``cache/resamples/`` when stored and stored when computed
    (:class:`mtboard.ledger.cache.ResampleCache`), every board's statistics from ``cache/boardstats/``
    (:class:`mtboard.ledger.boardstats.BoardStats`: a board none of whose inputs changed is not computed again), and
    every adjacent pair's flip distance from ``cache/flips/`` (:class:`mtboard.ledger.cache.FlipCache`); the ledger
    is bit-identical with or without it.
    ``BoardLedger.resample_hits``/``resample_misses`` count the lookups (both 0 without a cache)."""
    every = standing.decide(inputs)
    plans = [p for p in every if p.segment != standing.DIAGNOSTIC]
    rc = ResampleCache(cache)
    bs = BoardStats.make(cache, resamples)
    boards = tables.build_leaderboards(plans, resamples=resamples, cache=rc, stats=bs)
    methods.attach_methods(boards)
    fc = FlipCache(cache)
    flip.attach_flips(boards, fc)
    used = sentinels.attach(boards, getattr(inputs, "corpora", []), resamples=resamples, cache=cache)
    tries.attach_tries(boards, inputs.models)
    facts.attach_facts(boards, inputs.models)
    scorers.attach_scorers(boards)
    claims = contamination.attach(boards, inputs, resamples=resamples)
    canaries.attach(boards, inputs, resamples=resamples)
    variants.attach(boards)
    context_slices.attach(boards)
    diag = diagnostic.attach(boards, [p for p in every if p.segment == standing.DIAGNOSTIC], inputs,
                             resamples=resamples)
    if cache is None:
        return BoardLedger(inputs, boards, plans, claims=claims, diagnostic=diag)
    used["resamples"] = used["resamples"] | rc.used
    used["flips"] = fc.used
    used["boardstats"] = bs.used
    return BoardLedger(inputs, boards, plans, resample_hits=rc.hits, resample_misses=rc.misses, flip_hits=fc.hits,
                       flip_misses=fc.misses, board_stats_hits=bs.hits, board_stats_misses=bs.misses, claims=claims,
                       diagnostic=diag, cache_used=used)


__all__ = ["BoardLedger", "build_ledger"]
