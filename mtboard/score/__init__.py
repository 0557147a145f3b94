"""Scoring a run's outputs and sealing the card (issue 30, docs/ARCHITECTURE.md): the mechanical policy
(:mod:`~mtboard.score.checks`), FST acceptance (:mod:`~mtboard.score.fst`), one module per metric family
(:mod:`~mtboard.score.metrics`), ``score_run`` (:mod:`~mtboard.score.scoring`), the site's statistics
(:mod:`~mtboard.score.stats`), and the cards: run card assembly and sealing (:mod:`~mtboard.score.card`), scores-only
cards (:mod:`~mtboard.score.scores_card`), neural metrics on a finished card (:mod:`~mtboard.score.neural_card`).
"""
