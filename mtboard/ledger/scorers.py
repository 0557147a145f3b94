"""Which scorer made each row's numbers, decided once per board (issue 38 item 2: "nothing on the board mixes scores
of two scorer versions without saying so").

Each row's scorer is its shown card's (:func:`mtboard.score.lineage.scorer_of`: harness, sacrebleu, text
normalisation, mechanical policy, semantic model, read from the card's signatures). A board whose rows share one scorer
says nothing; a board whose rows come from two or more says so in one line above its table (:attr:`BoardScorers.note`)
and marks each row whose scorer is not the board's newest (:attr:`BoardScorers.older`). "Newest" is the latest
harness version, then sacrebleu version (:meth:`mtboard.score.lineage.Scorer.sort_key`): decided from the cards alone,
so a build gives the same board whatever is installed. ``mtboard lineage`` (:mod:`mtboard.ledger.lineage`) re-scores
the older rows' stored outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mtboard.score.lineage import Scorer, scorer_of


@dataclass(frozen=True)
class BoardScorers:
    """One board's scorers: ``rows`` (fingerprint → :class:`~mtboard.score.lineage.Scorer` of the row's shown card),
    ``newest`` (None for a board without rows), ``older`` (fingerprints of the rows whose scorer differs from
    ``newest``; empty when the board does not mix) and ``note`` (the line above the table, None when it does not
    mix)."""

    rows: dict[str, Scorer] = field(default_factory=dict)
    newest: Scorer | None = None
    older: frozenset[str] = frozenset()
    note: str | None = None

    def mark(self, fingerprint: str) -> str | None:
        """What an older row says (``older scorer: harness 0.5.0, textnorm 1``: the parts that differ from the
        newest), None for a row from the newest scorer."""
        if fingerprint not in self.older or self.newest is None:
            return None
        return "older scorer: " + ", ".join(f"{label} {mine}" for label, mine, _ in
                                            self.rows[fingerprint].changed(self.newest))


def board_scorers(row_scorers: dict[str, Scorer]) -> BoardScorers:
    """The :class:`BoardScorers` of one board's rows (fingerprint → scorer). The note names how many scorers and the
    newest's version against each older one's parts that differ, e.g. ``Scores on this board come from 2 scorer
    versions: rows marked ↻ were scored by an older one (harness 0.5.0, textnorm 1; the newest: harness 0.6.0,
    textnorm 2); mtboard lineage re-scores them from their stored outputs.``"""
    if not row_scorers:
        return BoardScorers()
    distinct = sorted(set(row_scorers.values()), key=Scorer.sort_key)
    newest = distinct[-1]
    older = frozenset(fp for fp, s in row_scorers.items() if s.differences(newest))
    if not older:
        return BoardScorers(dict(row_scorers), newest)
    parts = [c for s in distinct[:-1] for c in s.changed(newest)]
    was = ", ".join(dict.fromkeys(f"{label} {mine}" for label, mine, _ in parts))
    now = ", ".join(dict.fromkeys(f"{label} {theirs}" for label, _, theirs in parts))
    kinds = len({row_scorers[fp] for fp in older}) + 1
    note = (f"Scores on this board come from {kinds} scorer versions: rows marked ↻ were scored by an older one "
            f"({was}; the newest: {now}); mtboard lineage re-scores them from their stored outputs.")
    return BoardScorers(dict(row_scorers), newest, older, note)


def attach_scorers(boards: list[Any]) -> None:
    """Set :attr:`mtboard.ledger.tables.Leaderboard.scorers` (:class:`BoardScorers`) on every board, from each row's
    representative card."""
    for lb in boards:
        cards = {lc.path: lc for lc in [*lb.cards, *lb.unranked]}
        lb.scorers = board_scorers({s.fingerprint: scorer_of(cards[s.representative].card) for s in lb.rows
                                    if s.representative in cards})


__all__ = ["BoardScorers", "attach_scorers", "board_scorers"]
