"""``variants``: the variant-class lint of one card (spec §9.3.1; issue 39 item 2): the card's matches on the entries
with known variants against its matches elsewhere (:func:`mtboard.score.variants.variant_lint`, one-sided Fisher exact
test, docs/SCORING_SPEC.md §10). A flag is a warning (status ``warn``), not a failure: the statistic names a
suspicion a maintainer looks at (was the method tuned on the variants?), and a legitimate system can be strong exactly
where a corpus lists variants (short, formulaic entries). CI prints it; the ledger row and the run page show it."""

from __future__ import annotations

from mtboard.core.schema import RunCard
from mtboard.score.variants import variant_lint
from mtboard.validate.context import KnownCorpus
from mtboard.validate.report import CardRun


def check_variants(run: CardRun, card: RunCard, known: KnownCorpus) -> None:
    """Warn when the card is suspiciously perfect on its corpus's entries with variants; skip, with the reason, when
    no entry of the card has variants or every entry has them."""
    lint = variant_lint(card.results, {e.id: e for e in known.corpus.entries})
    if lint.skip is not None:
        run.skip("variants", lint.skip)
    elif lint.flagged:
        run.warn("variants", lint.text, "$.results")
    else:
        run.done("variants")


__all__ = ["check_variants"]
