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
from typing import Any

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


def outputs_of(where: str, card: RunCard, entries: Iterable[tuple[int, int]] | None = None) -> OutputsOf:
    """The comparable outputs of a card (run 0): one per entry id, its first result's when a card repeats an id (the
    ``entries`` check reports the repeat; the comparison needs unique ids). ``entries``: ``(entry id, hash)`` of
    each result in order, the hash :func:`output_hash` of a usable, non-blank output and -1 otherwise, when the
    caller has them (:class:`mtboard.ledger.summary.CardSummary`; None: made from ``card.results``); only the
    card's header fields are read then."""
    if entries is None:
        entries = ((r.entry_id, output_hash(r.predicted) if r.checks.outcome == Outcome.usable and r.predicted.strip()
                    else -1) for r in card.results)
    first: dict[int, int] = {}
    for entry_id, h in entries:
        if entry_id not in first:
            first[entry_id] = h
    pairs = sorted(first.items())
    d = card.dataset
    return OutputsOf(where=where, dataset=(d.id, d.version, d.sha256),
                     identity=(card.model_slug, card.method.model_file_sha256), fingerprint=card.fingerprint.hash,
                     timestamp=card.timestamp, ids=np.array([p[0] for p in pairs], dtype=np.int64),
                     hashes=np.array([p[1] for p in pairs], dtype=np.int64))


def output_hash(text: str) -> int:
    """The copy check's fingerprint of one output: the first 8 bytes of the SHA-256 of its whitespace-normalised
    UTF-8 text, as a non-negative 63-bit integer."""
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
    not a target (already accepted) is reported on the target. Problems come in the order of the pairs (the earlier
    card, then the later one). The counts are :func:`equal_share`'s; the cards of a dataset holding the same entries
    are compared as one matrix (:class:`_Shares`), not pair by pair: a build compares every pair of a dataset's cards,
    ~10 million pairs at 10,000 cards (issue 35)."""
    by_dataset: dict[tuple[str, str, str], list[OutputsOf]] = defaultdict(list)
    for c in cards:
        by_dataset[c.dataset].append(c)
    problems: list[Problem] = []
    for group in by_dataset.values():
        group.sort(key=lambda c: (c.timestamp, c.where))
        shares = _Shares(group, targets)
        for i, a in enumerate(group):
            for j, n, share in shares.copies(i):
                b = group[j]
                # the group is sorted by (timestamp, path): b came later; a target always takes the blame
                later, earlier = (b, a) if b.where in targets else (a, b)
                problems.append(copy_problem(later.where, earlier.where, n, share))
    return problems


def copy_problem(where: str, copied: str, n: int, share: float) -> Problem:
    """The ``copies`` problem of the card at ``where`` whose ``n`` compared outputs are a ``share`` (0–1) identical to
    those of the card at ``copied``."""
    return Problem(check="copies", where=where, field="$.results",
                   message=f"{share * 100:.1f} % of its {n} compared outputs are identical to those of {copied}, a "
                           "card of another model identity: a relabelled copy is not a second system (a "
                           "reproduction keeps the model identity and the fingerprint)")


class _Shares:
    """The pairs of one dataset's cards (``group``, in its order) that are copies by :func:`equal_share`'s counts (at
    least :data:`COPY_MIN_ENTRIES` compared entries, at least :data:`COPY_SHARE` of them equal), of two model
    identities and two fingerprints, where at least one of the two cards is in ``targets``. Cards with the same entry
    ids (int64, strictly increasing, one hash each) form a block: one matrix of their hashes, each card's row compared
    with every later row in a few array operations, giving exactly :func:`equal_share`'s counts (both cards hold every
    entry, so the shared entries are all of them, in the same order). Any other card (a ``--limit`` run) is compared
    with :func:`equal_share`, pair by pair."""

    def __init__(self, group: list[OutputsOf], targets: set[str]) -> None:
        self.group = group
        self.targeted = np.array([c.where in targets for c in group], dtype=bool)
        self.identity = _codes([c.identity for c in group])
        self.fingerprint = _codes([c.fingerprint for c in group])
        blocks: dict[Any, list[int]] = defaultdict(list)
        for k, c in enumerate(group):
            ids, hashes = c.ids, c.hashes
            regular = (isinstance(ids, np.ndarray) and isinstance(hashes, np.ndarray) and ids.dtype == np.int64
                       and hashes.dtype == np.int64 and ids.ndim == 1 and hashes.shape == ids.shape
                       and bool(np.all(ids[1:] > ids[:-1])))
            blocks[ids.tobytes() if regular else ("alone", k)].append(k)
        self.block: dict[int, tuple[np.ndarray, int, np.ndarray]] = {}
        """Card index → (its block's hash matrix, its row there, the block's card indices, ascending)."""
        self.block_of = np.zeros(len(group), dtype=np.int64)
        for b, members in enumerate(blocks.values()):
            self.block_of[members] = b
            matrix = np.stack([group[k].hashes for k in members]) if len(members) > 1 else np.empty((1, 0), np.int64)
            index = np.asarray(members, dtype=np.int64)
            for row, k in enumerate(members):
                self.block[k] = (matrix, row, index)

    def _others(self, i: int, later: np.ndarray) -> np.ndarray:
        """The cards of ``later`` (indices after ``i``) worth comparing with card i: another model identity, another
        fingerprint, and card i or the other card a target."""
        keep = (self.identity[later] != self.identity[i]) & (self.fingerprint[later] != self.fingerprint[i])
        if not self.targeted[i]:
            keep &= self.targeted[later]
        return later[keep]

    def copies(self, i: int) -> list[tuple[int, int, float]]:
        """``(j, compared entries, share equal)`` for every later card j (ascending) that card i copies or is copied
        by (:meth:`_others` first, then the counts)."""
        matrix, row, index = self.block[i]
        found: list[tuple[int, int, float]] = []
        rows = np.arange(row + 1, len(index))
        rows = rows[np.isin(index[rows], self._others(i, index[rows]))] if rows.size else rows
        if rows.size:
            mine = matrix[row]
            later = matrix[row + 1:] if rows.size == len(index) - row - 1 else matrix[rows]
            usable = mine >= 0
            compared = np.count_nonzero((later >= 0) | usable, axis=1)
            equal = np.count_nonzero((later == mine) & usable, axis=1)
            # a superset (one entry of slack against rounding); the survivors are decided by equal_share's division
            for r in np.flatnonzero((compared >= COPY_MIN_ENTRIES) & (equal >= COPY_SHARE * compared - 1.0)):
                n, e = int(compared[r]), int(equal[r])
                if e / n >= COPY_SHARE:
                    found.append((int(index[rows[r]]), n, e / n))
        a = self.group[i]
        outside = np.flatnonzero(self.block_of[i + 1:] != self.block_of[i]) + i + 1
        for j in self._others(i, outside).tolist():
            n, share = equal_share(a, self.group[j])
            if n >= COPY_MIN_ENTRIES and share >= COPY_SHARE:
                found.append((j, n, share))
        return sorted(found)


def _codes(values: list[Any]) -> np.ndarray:
    """Each value's index among the distinct values (equal values, equal codes)."""
    seen: dict[Any, int] = {}
    return np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.int64)


__all__ = ["COPY_MIN_ENTRIES", "COPY_SHARE", "OutputsOf", "copy_problem", "equal_share", "find_copies", "output_hash", "outputs_of"]
