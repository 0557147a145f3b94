"""The variant-class lint on the board (spec §9.3.1; issue 39 item 2): every card of every board tested against its
board's corpus with :func:`mtboard.score.variants.variant_lint` (the validator's ``variants`` check, the same
function), kept on the board by card path (:attr:`mtboard.ledger.tables.Leaderboard.variants`); the row shows its
representative's (``data/ledger.json`` rows' ``variants``) and the run page each card's. A flag marks, it does not
unrank: the statistic is a suspicion for a maintainer, not proof (docs/SCORING_SPEC.md §10)."""

from __future__ import annotations

from mtboard.score.variants import variant_lint


def attach(boards) -> None:
    """Fill each board's ``variants``: card path → :class:`mtboard.score.variants.VariantLint`, for boards whose
    corpus is known and holds at least one entry with variants (otherwise left empty: nothing to test)."""
    for lb in boards:
        corpus = lb.corpus.corpus if lb.corpus is not None else None
        if corpus is None or not any(e.variants for e in corpus.entries):
            continue
        by_id = {e.id: e for e in corpus.entries}
        lb.variants = {lc.path: variant_lint(lc.card.results, by_id) for lc in lb.cards}


__all__ = ["attach"]
