"""Exact and equivalent match and the length ratio (docs/SCORING_SPEC.md §2): string comparisons after
:func:`mtboard.core.text.normalise_for_match` (:func:`mtboard.core.text.normalise`, whitespace runs collapsed, trimmed;
case-sensitive)."""

from __future__ import annotations

from collections.abc import Iterable

from mtboard.core.text import normalise_for_match


def exact_match(hypothesis: str, reference: str) -> bool:
    """True when hypothesis and reference are equal after :func:`~mtboard.core.text.normalise_for_match`."""
    return normalise_for_match(hypothesis) == normalise_for_match(reference)


def equivalent_match(hypothesis: str, reference: str, variants: Iterable[str]) -> bool:
    """True when the hypothesis equals the reference or any accepted variant after
    :func:`~mtboard.core.text.normalise_for_match`."""
    h = normalise_for_match(hypothesis)
    return h == normalise_for_match(reference) or any(h == normalise_for_match(v) for v in variants)


def length_ratio(hypothesis: str, reference: str) -> float:
    """Characters of the hypothesis ÷ characters of the reference, both after
    :func:`~mtboard.core.text.normalise_for_match`; 0 for an empty reference."""
    r = len(normalise_for_match(reference))
    return len(normalise_for_match(hypothesis)) / r if r else 0.0
