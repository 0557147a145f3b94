"""Flip distances and inseparable views (issue 38 item 4), decided once for every view of every board.

For each view, each adjacent pair of ranked method rows (the row at position k and the one at k + 1; reference
baselines are not ranked and not paired) gets :func:`mtboard.score.flip.flip_greedy`'s flip distance — the greedy
upper bound on the fewest segments whose removal from the view puts the lower row strictly above the upper one at
the composite's rounding — with the removed segments' entry ids (:class:`RowFlip`, on the upper row:
:attr:`mtboard.ledger.methods.MethodRow.flip`). The rows' composites are their shown cards' (replicate cards: the mean
over their runs), over the view's entries.

A view is **inseparable** (:attr:`mtboard.ledger.tables.View.inseparable`) when it ranks at least two rows and the
paired 95 % CI of every adjacent pair's composite difference includes zero. The CI is the normal-approximation interval
of :func:`mtboard.score.stats.paired_p_value` (difference ± z₀.₉₇₅ × the bootstrap standard error of the paired
differences on the view's shared resamples): it includes zero exactly when that p-value is ≥ α = 0.05, or the
difference is not positive. It is the test the rank clusters draw boundaries with
(:func:`mtboard.score.stats.rank_clusters`, adjacent rows, before Holm's correction, which only raises p-values): so on an inseparable view no boundary is drawn
and every row shares one rank range, and the board's sentence never contradicts its ranks (a percentile interval of
the differences could). The board says so in one line above its table (:data:`INSEPARABLE_LINE`).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mtboard.ledger.cache import FlipCache, flip_row_digest, installed_distributions, validator_code_hash
from mtboard.ledger.methods import MethodRow
from mtboard.ledger.tables import Leaderboard, View
from mtboard.score import stats
from mtboard.score.flip import FlipRow, flip_greedy

if TYPE_CHECKING:
    from mtboard.ledger.load import LoadedCard

INSEPARABLE_LINE = ("Every adjacent pair of rows on this view has a paired 95 % confidence interval that includes "
                    "zero: the data cannot order any row against the next one.")
"""The one line a board or domain view shows above its table when it is inseparable."""


@dataclass(frozen=True)
class RowFlip:
    """The flip distance from a ranked row to the next ranked row (``below``: its fingerprint) on one view."""

    below: str
    count: int | None
    """Segments removed (greedy upper bound); None when no removal of fewer than all the view's segments reverses
    the order."""
    entries: tuple[int, ...]
    """The removed segments' entry ids, ascending."""
    method: str = "greedy"


def adjacent_inseparable(real: list[MethodRow]) -> bool:
    """True when ``real`` (a view's ranked method rows, in order) has at least two rows and every adjacent pair's
    paired 95 % CI includes zero (see the module docstring). Rows without resamples count as including zero."""
    if len(real) < 2:
        return False
    for a, b in zip(real, real[1:]):
        diff = (a.composite or 0.0) - (b.composite or 0.0)
        if diff > 0 and a.boot is not None and b.boot is not None and \
                stats.paired_p_value(a.boot, b.boot, diff) < stats.ALPHA:
            return False
    return True


def _view_flips(view: View, rows: _Rows, positions: list[int] | None, whole: list[int],
                digests: dict[str, str], cache: FlipCache) -> None:
    real = [m for m in view.methods if not m.reference and m.position]
    for m in view.methods:
        m.flip = None
    view.inseparable = adjacent_inseparable(real)
    if not view.ids:
        return
    taken: dict[str, FlipRow] = {}

    def row(m: MethodRow) -> FlipRow:  # made and sliced only when its pair is not in the cache
        if m.key not in taken:
            full = rows.of(m.rep.lc)
            taken[m.key] = full if positions is None else full.take(positions)
        return taken[m.key]

    view_key = cache.view_key(whole, view.ids) if cache.folder is not None else None  # no cache: no hashing
    allowed = frozenset(view.ids)
    for a, b in zip(real, real[1:]):
        key = None if view_key is None else cache.key(view_key, digests[a.rep.lc.page_id], digests[b.rep.lc.page_id])
        found = None if key is None else cache.get(key, allowed)
        if found is None:
            f = flip_greedy(row(a), row(b), view.ids)
            found = (f.count, tuple(sorted(f.entries)))
            if key is not None:
                cache.put(key, *found)
        a.flip = RowFlip(b.key, found[0], found[1])


class _Rows:
    """A board's whole-board :class:`~mtboard.score.flip.FlipRow` of each shown card, made when first asked for: for
    a pair the cache does not hold, or to name a card not read from a file (:meth:`digest`). A warm build of cards
    read from files makes none (~1 ms a card, issue 35 "add one card")."""

    def __init__(self, whole: list[int], code: str = "") -> None:
        self.whole = whole
        self.code = code
        """:func:`parse_environment`, made once a build."""
        self.made: dict[str, FlipRow] = {}

    def of(self, lc: LoadedCard) -> FlipRow:
        row = self.made.get(lc.page_id)
        if row is None:
            row = self.made[lc.page_id] = FlipRow.of_card(lc.card, self.whole)
        return row

    def digest(self, lc: LoadedCard) -> str:
        """What names ``lc``'s whole-board row in a flip key (the board's entry ids and ``score/``'s bytes are in the
        view key): the SHA-256 of the file the card was parsed from (:attr:`~mtboard.ledger.load.LoadedCard.
        file_sha256`) with :func:`parse_environment`, so a held card's row is not made to be named; any other card
        (not read from a file, or its ``card`` replaced since) by its row's arrays
        (:func:`mtboard.ledger.cache.flip_row_digest`)."""
        sha = lc.file_sha256
        if not sha:
            return flip_row_digest(self.of(lc))
        return hashlib.sha256(f"card\0{self.code}\0{sha}".encode()).hexdigest()


def parse_environment() -> str:
    """What a card's parsed values depend on besides its bytes (hex SHA-256): the code that parses and validates it
    (:func:`mtboard.ledger.cache.validator_code_hash`: ``core/``'s schema and JSON reader, ``ledger/load.py``), the
    Python version and every installed distribution with its version (pydantic-core parses the numbers). ~0.1 s."""
    h = hashlib.sha256(f"{validator_code_hash()}\0{sys.version}\0".encode())
    h.update("\n".join(installed_distributions()).encode())
    return h.hexdigest()


def attach_flips(boards: list[Leaderboard], cache: FlipCache | None = None) -> None:
    """Set every ranked method row's :attr:`~mtboard.ledger.methods.MethodRow.flip` and every view's
    :attr:`~mtboard.ledger.tables.View.inseparable` (after :func:`mtboard.ledger.methods.attach_methods`). Each shown
    card is indexed at most once per board (its whole-board :class:`~mtboard.score.flip.FlipRow`, made only when
    :class:`_Rows` needs it), then sliced per view. ``cache``: flip distances by content
    (:class:`mtboard.ledger.cache.FlipCache`; issue 35 item 3): a pair whose cards and view did not change is read
    back, not searched again; the result is the same with or without it."""
    cache = cache if cache is not None else FlipCache(None)
    code = parse_environment() if cache.folder is not None else ""
    for lb in boards:
        if not lb.views:
            continue
        whole = lb.views[0].ids
        at = {eid: k for k, eid in enumerate(whole)}
        rows = _Rows(whole, code)
        shown = {m.rep.lc.page_id: m.rep.lc for view in lb.views for m in view.methods if not m.reference}
        digests = {pid: rows.digest(lc) for pid, lc in shown.items()} if cache.folder is not None else {}
        for view in lb.views:
            positions = None if view.ids == whole else [at[i] for i in view.ids]
            _view_flips(view, rows, positions, whole, digests, cache)


__all__ = ["INSEPARABLE_LINE", "RowFlip", "adjacent_inseparable", "attach_flips"]
