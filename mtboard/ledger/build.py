"""Building the ledger from the site's inputs: plan the boards and decide every row's standing
(:func:`mtboard.ledger.standing.decide`), compute every view's statistics (:func:`mtboard.ledger.tables.build_leaderboards`),
then rank and cluster one row per fingerprint (:func:`mtboard.ledger.methods.attach_methods`).

The result, :class:`BoardLedger`, is what the site renders and ``mtboard ledger`` prints; :mod:`mtboard.ledger.document`
turns it into the published ``data/ledger.json``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from mtboard.ledger import methods, standing, tables
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


def build_ledger(inputs: Inputs, resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> BoardLedger:
    """Decide every standing, compute every view and rank one row per method (``resamples``: bootstrap resamples of
    the paired tests, spec §4.6; :data:`mtboard.score.metrics.bootstrap.BOOTSTRAP_RESAMPLES` by default)."""
    plans = standing.decide(inputs)
    boards = tables.build_leaderboards(plans, resamples=resamples)
    methods.attach_methods(boards)
    return BoardLedger(inputs, boards, plans)


__all__ = ["BoardLedger", "build_ledger"]
