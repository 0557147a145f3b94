"""Tries are visible (issue 37 item 4): how many distinct methods (fingerprints: prompts, conditions, temperatures,
sweep cells) of the same model a board holds, and which of them is its best row.

Per board, the rows (:class:`mtboard.ledger.standing.Standing`, one per fingerprint) are grouped by
:meth:`mtboard.inputs.models.ModelIndex.model_key` of the representative card (the model record's slug, else the
card's ``model_slug``). A model's tries are all its fingerprints on the board: full-coverage ones (``count``) and,
counted apart, subset ones (``subsets``: a ``--limit`` run or any run of fewer entries than the segment). Every try is
counted in N, subsets too: each is a variant someone ran and looked at before choosing what to show (the selection
effect of "The Leaderboard Illusion", 2025), and the parenthesis says how many of the N covered only part of the
segment. Reference baselines are
never counted and get no tries. The best row is the model's row with the best position on the board's main view (the
whole segment); a model none of whose rows is ranked has no best row.

The board says ``best of N`` on the best row (``best of 8 (6 subsets)``: 8 tries, 6 of them on subsets) and ``1 of N tries; best: …``
with a link on the others; ``data/ledger.json`` publishes it as each row's ``tries``
(:class:`mtboard.core.schema.ledger.LedgerTries`). The official board counts its rows the same way
(:func:`official_tries`: a held-out segment is evaluated once per fingerprint already). Computed here once; pages only
read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mtboard.inputs.models import ModelIndex
from mtboard.ledger.standing import card_composite
from mtboard.ledger.tables import Leaderboard, method_name, run_page, temperature_text


@dataclass(frozen=True)
class Tries:
    """One row's tries on its board: ``model`` the model key; ``count`` ≥ 1 the model's full-coverage fingerprints on
    the board (this row's included when it is full-coverage); ``subsets`` ≥ 0 its subset fingerprints; ``best`` the
    best row's fingerprint (None: none of the model's rows is ranked); ``best_method``/``best_page`` that row's method
    name and run page (docs path, ``runs/<id>.md``); ``others`` the model's other fingerprints on the board, full
    coverage first (board order), then subsets."""

    model: str
    fingerprint: str
    count: int
    subsets: int
    best: str | None
    best_method: str | None
    best_page: str | None
    others: tuple[str, ...]
    other_rows: tuple[tuple[str, str, str], ...] = ()
    """``others`` as (fingerprint, method name, run page) for the links."""
    notes: tuple[tuple[str, str], ...] = ()
    """(fingerprint, what tells the row apart from the model's others: ``t 0.7 · 20 of 355 subset (--limit 20) ·
    composite 0.412``) for this row and every other; the list shows it beside each name, which can repeat."""

    def note(self, fingerprint: str | None) -> str:
        """:attr:`notes` of ``fingerprint`` ("" when unknown)."""
        return dict(self.notes).get(fingerprint or "", "")

    @property
    def is_best(self) -> bool:
        return self.best is not None and self.best == self.fingerprint

    @property
    def tried(self) -> int:
        """Every fingerprint of the model on the board (full and subset)."""
        return self.count + self.subsets

    @property
    def subsets_text(self) -> str:
        """`` (3 subsets)``, `` (1 subset)`` or ``""``."""
        if not self.subsets:
            return ""
        return f" ({self.subsets} subset{'' if self.subsets == 1 else 's'})"

    @property
    def lead(self) -> str:
        """:attr:`text` without its ``; best: …`` part (the page links the best row's name)."""
        if self.tried < 2:
            return ""
        if self.is_best:
            return f"best of {self.tried}{self.subsets_text}"
        if self.count == 0:
            return f"1 of {self.subsets} subset tries"
        return f"1 of {self.tried} tries{self.subsets_text}"

    @property
    def text(self) -> str:
        """What the board says: ``""`` for a model tried once; ``best of 8 (6 subsets)`` on the best row; ``1 of 8
        tries (6 subsets); best: <method>`` on every other row (``1 of 3 subset tries`` for a model with subsets only;
        without ``; best: …`` when nothing is ranked)."""
        if not self.lead or self.is_best or not self.best_method:
            return self.lead
        return f"{self.lead}; best: {self.best_method}"


def _group(rows: Iterable[tuple[str, str, bool, int | None, Any]], describe: Callable[[Any], tuple[str, str]],
           note: Callable[[str, Any], str] | None = None) -> dict[str, Tries]:
    """``rows``: (fingerprint, model key, subset, position on the main view or None when unranked, the row's card),
    in board order. ``describe(card)``: (method name, run page); ``note(fingerprint, card)``: what tells the row
    apart (:attr:`Tries.notes`)."""
    by_model: dict[str, list[tuple[str, str, bool, int | None, Any]]] = {}
    for row in rows:
        by_model.setdefault(row[1], []).append(row)
    out: dict[str, Tries] = {}
    for model, group in by_model.items():
        full = [r for r in group if not r[2]]
        subsets = [r for r in group if r[2]]
        ranked = [r for r in group if r[3] is not None]
        best = min(ranked, key=lambda r: (r[3], r[0])) if ranked else None
        name, page = describe(best[4]) if best is not None else (None, None)
        order = [r[0] for r in full] + [r[0] for r in subsets]
        shown = {r[0]: (r[0], *describe(r[4])) for r in group}
        notes = tuple((r[0], note(r[0], r[4])) for r in group) if note is not None else ()
        for fp, *_ in group:
            out[fp] = Tries(model=model, fingerprint=fp, count=len(full), subsets=len(subsets),
                            best=best[0] if best is not None else None, best_method=name, best_page=page,
                            others=tuple(f for f in order if f != fp),
                            other_rows=tuple(shown[f] for f in order if f != fp), notes=notes)
    return out


def board_tries(lb: Leaderboard, models: ModelIndex) -> dict[str, Tries]:
    """Fingerprint → :class:`Tries` for every non-reference row of ``lb`` (ranks known:
    :func:`mtboard.ledger.methods.attach_methods` has run). Reference baselines are left out."""
    cards = {lc.path: lc for lc in lb.cards}
    for lc in lb.unranked:
        cards.setdefault(lc.path, lc)
    positions = {m.key: m.position for m in lb.views[0].methods if not m.reference} if lb.views else {}
    rows = []
    coverage: dict[str, str] = {}
    for s in lb.rows:
        if s.reference or s.representative not in cards:
            continue
        lc = cards[s.representative]
        coverage[s.fingerprint] = s.coverage.text
        rows.append((s.fingerprint, models.model_key(lc.card), s.coverage.subset,
                     positions.get(s.fingerprint) if s.ranked else None, lc))

    def note(fp: str, lc: Any) -> str:
        comp = card_composite(lc.card)
        return " · ".join(x for x in (f"t {temperature_text(lc.card)}", coverage.get(fp, ""),
                                       "" if comp is None else f"composite {comp:.3f}") if x)

    return _group(rows, lambda lc: (method_name(lc.card), run_page(lc)), note)


def attach_tries(boards: list[Leaderboard], models: ModelIndex) -> None:
    """Set :attr:`mtboard.ledger.tables.Leaderboard.tries` on every board (:func:`board_tries`)."""
    for lb in boards:
        lb.tries = board_tries(lb, models)


def official_tries(rows: list[Any], dev_cards: dict[str, Any], models: ModelIndex) -> dict[str, Tries]:
    """Tries on an official board (issue 37 item 4: "the official board counts tries too"). ``rows``: its
    :class:`mtboard.verify.official.GoldRow` in board order; ``dev_cards``: run_card_hash → the development
    :class:`~mtboard.ledger.load.LoadedCard`. Keyed by the row's ``card_fingerprint`` (a held-out segment is evaluated
    once per fingerprint); the model is the development card's model key, else the scores card's ``model_slug``.
    Only attested rows are ranked, so only they can be the best; every gold row covers the whole secret segment
    (no subsets)."""
    items = []
    for r in rows:
        lc = dev_cards.get(r.card.card_run_card_hash)
        model = models.model_key(lc.card) if lc is not None else r.card.model_slug
        items.append((r.card.card_fingerprint, model, False, (r.position or None) if r.attested else None, r))

    def describe(r: Any) -> tuple[str, str]:
        lc = dev_cards.get(r.card.card_run_card_hash)
        name = method_name(lc.card) if lc is not None else f"{r.card.method_spec} · {r.card.condition}"
        return name, f"#{r.anchor}"

    return _group(items, describe)


__all__ = ["Tries", "attach_tries", "board_tries", "official_tries"]
