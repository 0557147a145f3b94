"""Where submitted files live: the canonical card path and the allow-listed names (spec §9.1); the ``names`` check.

A card's path is derived from its content — ``submissions/<dataset id>/<model-slug>__<condition>__<12 hex>.json`` —
so the ``file_name`` check can bind it and ``mtboard submit`` can place it; the ``scope`` check accepts only names
matching :data:`NAME_RE` in a folder matching :data:`DATASET_DIR_RE`.
"""

from __future__ import annotations

import re
import unicodedata

from mtboard.core.names import card_names, name_problem
from mtboard.core.schema import RunCard
from mtboard.validate.report import CardRun, safe_name

SUBMISSIONS_DIR = "submissions"
VERIFICATION_SUFFIX = ".verification.json"

SLUG_RE = re.compile(r"[^a-z0-9.-]+")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,79}__[a-z0-9][a-z0-9.-]{0,59}__[0-9a-f]{12}\.json$")
"""Allow-listed canonical card file name: ``<model-slug>__<condition>__<12 hex>.json``."""
DATASET_DIR_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def slug(text: str, limit: int = 80) -> str:
    """File-name-safe slug: NFKD → ASCII, lower case, runs of characters outside ``[a-z0-9.-]`` → ``-``.

    ``google/gemini-2.5-flash`` → ``google-gemini-2.5-flash``; ``apertium/eng-spa`` → ``apertium-eng-spa``.
    Never empty (``x`` for text without any allowed character); never starts with ``.`` or ``-``.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    s = SLUG_RE.sub("-", ascii_text)
    s = re.sub(r"-{2,}", "-", s).strip("-.")
    s = s[:limit].rstrip("-.")
    return s or "x"


def canonical_name(card: RunCard) -> str:
    """``<model-slug>__<condition>__<first 12 hex of run_card_hash>.json`` (allow-listed characters only)."""
    return f"{slug(card.model_slug)}__{slug(card.condition, 60)}__{card.run_card_hash[:12]}.json"


def canonical_relpath(card: RunCard) -> str:
    """``submissions/<dataset id>/<canonical_name>`` (POSIX separators)."""
    return f"{SUBMISSIONS_DIR}/{card.dataset.id}/{canonical_name(card)}"


def check_names(run: CardRun, card: RunCard) -> None:
    """``names``: every name the card shows (:func:`mtboard.core.names.card_names`: model slug, condition, method
    spec, backend, model, plugin, dataset, judges …) passes :func:`mtboard.core.names.name_problem` — no
    bidirectional control, control, invisible or format character, no confusable script mix (UTS #39 §5.2). One
    problem per field, naming the code point and the fix (issue 32 item 5; docs/SCORING_SPEC.md "Names")."""
    for path, text in card_names(card):
        problem = name_problem(text)
        if problem is not None:
            run.fail("names", str(problem), safe_name(path))
    run.done("names")
