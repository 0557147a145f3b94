"""Terminology adherence (spec §3.4 ``terminology_adherence``; docs/SCORING_SPEC.md §2.4).

An entry's glossary (``Entry.glossary``, kept from a TBX or CSV glossary when the corpus is imported) lists the terms
that occur in its source with their acceptable target renderings. A term is **adhered to** when the hypothesis
contains one of its renderings (:func:`mtboard.core.text.contains_term`: normalised, case-folded, whole words).
"""

from __future__ import annotations

from collections.abc import Sequence

from mtboard.core.schema import GlossaryTerm
from mtboard.core.text import contains_term


def glossary_counts(hypothesis: str, glossary: Sequence[GlossaryTerm], usable: bool) -> tuple[int, int]:
    """``(hits, terms)`` of one entry: terms = glossary terms of the entry, hits = those with a rendering the
    hypothesis contains; 0 hits without usable output."""
    if not usable:
        return 0, len(glossary)
    return sum(any(contains_term(hypothesis, t) for t in g.targets) for g in glossary), len(glossary)


def adherence(hits: Sequence[int], terms: Sequence[int]) -> float | None:
    """Σ hits ÷ Σ terms over entries (every term of every entry weighs the same), 0–1; None when no entry has a term."""
    total = sum(terms)
    return sum(hits) / total if total else None


__all__ = ["adherence", "glossary_counts"]
