"""Automatic metrics (spec §4; docs/SCORING_SPEC.md is the single source of truth, the modules mirror its tables).

One module per metric family, as sacrebleu organises its own metrics; import what you need from the module:

=====================  =============================================================================================
``chrf``               chrF++ (``CHRF(word_order=2)``): statistics, corpus/sentence/subset scores, the one
                       chrF-from-totals function, signature
``bleu``               BLEU with the target language's tokenizer: statistics, scores, signature
``ter``                TER (character-level for Han/kana, none for spaceless scripts), covered set decided by the
                       reference: statistics, scores, signature
``match``              exact / equivalent match, length ratio
``segments``           a run's per-segment statistics of all three metrics (NFC, stream checks, process pool)
``pool``               chunking and the process pool used by scoring
``bootstrap``          the one bootstrap: seeded resamples, resample scores, the 95 % interval, the card's CI
``composite``          composite weights, tiers, cost-adjusted score, the composite signature
``sums``               exact column sums of statistics rows, width checks, the 0–100 clamp
``_sacrebleu``         every call into sacrebleu's private API (pinned by tests/test_metrics_sacrebleu.py)
=====================  =============================================================================================

Everything goes through sacrebleu's Python API (never its CLI). Language facts (tokenizer choice, character-level
TER) come from :mod:`mtboard.core.languages`; text normalisation (NFC) from :mod:`mtboard.core.text`.
"""
