"""The variant-class lint on the board (spec §9.3.1; issue 39 item 2): every card of every board tested against its
board's corpus with :func:`mtboard.score.variants.variant_lint` (the validator's ``variants`` check, the same
function, read from each card's summary: :func:`mtboard.score.variants.variant_lint_of`), kept on the board by card path (:attr:`mtboard.ledger.tables.Leaderboard.variants`); the row shows its
representative's (``data/ledger.json`` rows' ``variants``) and the run page each card's. A flag marks, it does not
unrank: the statistic is a suspicion for a maintainer, not proof (docs/SCORING_SPEC.md §10)."""

from __future__ import annotations

from collections.abc import Iterator

from mtboard.ledger.summary import CardSummary, summary
from mtboard.score.variants import variant_lint_of


def attach(boards) -> None:
    """Fill each board's ``variants``: card path → :class:`mtboard.score.variants.VariantLint`, for boards whose
    corpus is known and holds at least one entry with variants (otherwise left empty: nothing to test)."""
    for lb in boards:
        corpus = lb.corpus.corpus if lb.corpus is not None else None
        if corpus is None or not any(e.variants for e in corpus.entries):
            continue
        by_id = {e.id: e for e in corpus.entries}
        lb.variants = {lc.path: variant_lint_of(_hypotheses(summary(lc)), by_id) for lc in lb.cards}


def _hypotheses(s: CardSummary) -> Iterator[tuple[int, str | None]]:
    """``(entry id, usable hypothesis or None)`` of each result (:func:`mtboard.score.variants.variant_lint`)."""
    return ((i, out if outcome == "usable" else None) for i, out, outcome in zip(s.ids, s.outputs, s.outcomes))


__all__ = ["attach"]
