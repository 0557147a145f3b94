"""Verification (issue 30, docs/ARCHITECTURE.md): re-running a card's method (GDS verification,
:mod:`~mtboard.verify.rerun`), verification records (:mod:`~mtboard.verify.record`) and their GitHub artifact
attestations (:mod:`~mtboard.verify.attestation`), the plugin gate (:mod:`~mtboard.verify.plugins`), secret segments
(:mod:`~mtboard.verify.secret`) and the official boards' data (:mod:`~mtboard.verify.official`).
"""
