"""The ``copies`` repository check: a card whose outputs are (nearly) another card's under a different model identity
is a relabelled copy, not a second system (issue 15, part 0).

Two cards of the same dataset (id, version, file SHA-256) are compared entry by entry on run 0's outputs, over the
shared entries where at least one of the two outputs is usable (the mechanical policy's outcome): an entry counts as
*equal* when both outputs are usable and their hypotheses are identical after whitespace normalisation. Empty and
echoed outputs never count, so two broken systems or two echo baselines are not "copies". The pair is a copy when
at least :data:`COPY_MIN_ENTRIES` entries are compared and at least :data:`COPY_SHARE` of them are equal, unless both
cards name the same model identity (model slug and weights hash: the same model under another condition may
legitimately produce the same text) or have the same fingerprint (a reproduction). The problem is reported once per
pair: on the card being checked (a target) when only one of the two is (a pull request's card against the accepted
ones), else on the later one (timestamp, then path).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from mtboard.core.schema import Outcome, RunCard
from mtboard.validate.report import Problem

COPY_SHARE = 0.98
"""Share of shared entries with identical usable outputs from which two cards are copies (issue 15: ≥ 98 %)."""
COPY_MIN_ENTRIES = 10
"""Fewer shared entries than this never make a copy (too little evidence)."""


@dataclass
class OutputsOf:
    """What the comparison needs of one card."""

    where: str
    """Path shown in problems."""
    dataset: tuple[str, str, str]
    identity: tuple[str, str | None]
    """(model_slug, model_file_sha256)."""
    fingerprint: str
    timestamp: str
    ids: np.ndarray
    """Entry ids, sorted."""
    hashes: np.ndarray
    """Per entry (same order): 63-bit hash of the normalised usable hypothesis, or -1 for an unusable output."""


def outputs_of(where: str, card: RunCard) -> OutputsOf:
    """The comparable outputs of a card (run 0)."""
    pairs = sorted((r.entry_id, _hash(r.predicted) if r.checks.outcome == Outcome.usable and r.predicted.strip()
                    else -1) for r in card.results)
    d = card.dataset
    return OutputsOf(where=where, dataset=(d.id, d.version, d.sha256),
                     identity=(card.model_slug, card.method.model_file_sha256), fingerprint=card.fingerprint.hash,
                     timestamp=card.timestamp, ids=np.array([p[0] for p in pairs], dtype=np.int64),
                     hashes=np.array([p[1] for p in pairs], dtype=np.int64))


def _hash(text: str) -> int:
    norm = " ".join(text.split())
    return int.from_bytes(hashlib.sha256(norm.encode("utf-8")).digest()[:8], "big") >> 1


def equal_share(a: OutputsOf, b: OutputsOf) -> tuple[int, float]:
    """(compared entries: shared, with a usable output on at least one side; share of them with identical usable
    outputs)."""
    _, ia, ib = np.intersect1d(a.ids, b.ids, assume_unique=True, return_indices=True)
    ha, hb = a.hashes[ia], b.hashes[ib]
    compared = int(np.count_nonzero((ha >= 0) | (hb >= 0)))
    if not compared:
        return 0, 0.0
    equal = int(np.count_nonzero((ha == hb) & (ha >= 0)))
    return compared, equal / compared


def find_copies(cards: Iterable[OutputsOf], targets: set[str]) -> list[Problem]:
    """``copies`` problems for the cards named in ``targets`` (by ``where``), each compared with every other card.

    A pair of two targets is reported once, on the later card (timestamp, then path); a target copying a card that is
    not a target (already accepted) is reported on the target.
    """
    by_dataset: dict[tuple[str, str, str], list[OutputsOf]] = defaultdict(list)
    for c in cards:
        by_dataset[c.dataset].append(c)
    problems: list[Problem] = []
    for group in by_dataset.values():
        group.sort(key=lambda c: (c.timestamp, c.where))
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.where not in targets and b.where not in targets:
                    continue
                if a.identity == b.identity or a.fingerprint == b.fingerprint:
                    continue
                n, share = equal_share(a, b)
                if n < COPY_MIN_ENTRIES or share < COPY_SHARE:
                    continue
                # the group is sorted by (timestamp, path): b came later; a target always takes the blame
                flagged = [(b, a)] if b.where in targets else [(a, b)]
                for later, earlier in flagged:
                    problems.append(Problem(
                        check="copies", where=later.where, field="$.results",
                        message=f"{share * 100:.1f} % of its {n} compared outputs are identical to those of "
                                f"{earlier.where}, a card of another model identity: a relabelled copy is not a "
                                "second system (a reproduction keeps the model identity and the fingerprint)"))
    return problems


__all__ = ["COPY_MIN_ENTRIES", "COPY_SHARE", "OutputsOf", "equal_share", "find_copies", "outputs_of"]
