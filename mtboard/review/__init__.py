"""Community review (spec §7.2–7.3; issue 30, docs/ARCHITECTURE.md): the seeded review sample, review records,
the pooled result and the deployable gate (:mod:`~mtboard.review.community`). A building block, below the validator:
:mod:`mtboard.validate.reviews` checks review records with it.
"""
