"""A row's model facts for the board's filters (issue 37 item 2: "Filters on every board: weights, size buckets,
licence, organisation, quantization, method class").

Taken from the model record the row's card links to (:meth:`mtboard.inputs.models.ModelIndex.record_for`) and from
the card itself (method class); a row without a record says :data:`UNKNOWN` for every record fact. Record values are
untrusted text: pages escape them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mtboard.inputs.models import NO_RECORD, ModelIndex

UNKNOWN = "unknown"
"""A fact the record does not give, or every record fact of a row without a record."""

SIZE_BUCKETS: tuple[tuple[str, str, int, int | None], ...] = (
    ("lt1b", "< 1 B", 0, 10**9),
    ("1-10b", "1–10 B", 10**9, 10**10),
    ("10-100b", "10–100 B", 10**10, 10**11),
    ("ge100b", "≥ 100 B", 10**11, None),
)
"""Size buckets of ``parameter_count``: (key, label, lowest count included, first count excluded or None). Edges:
below 1e9, [1e9, 1e10), [1e10, 1e11), 1e11 and above; no count is :data:`UNKNOWN`."""

SIZE_LABELS: dict[str, str] = {k: label for k, label, _, _ in SIZE_BUCKETS} | {UNKNOWN: "unknown size"}
"""Bucket key → label (the filter's option text)."""

FILTERS: tuple[tuple[str, str], ...] = (("weights", "Weights"), ("size", "Size"), ("licence", "Licence"),
                                        ("organisation", "Organisation"), ("quantization", "Quantization"),
                                        ("method_class", "Method class"))
"""The board's filters, in order: (fact name, label)."""


def size_bucket(parameter_count: int | None) -> str:
    """The :data:`SIZE_BUCKETS` key of ``parameter_count`` (≥ 1), or :data:`UNKNOWN` for None."""
    if parameter_count is None:
        return UNKNOWN
    for key, _, lo, hi in SIZE_BUCKETS:
        if parameter_count >= lo and (hi is None or parameter_count < hi):
            return key
    return UNKNOWN


@dataclass(frozen=True)
class ModelFacts:
    """One row's facts (every value a non-empty string): ``record`` the record's slug or None; ``weights``
    open|closed|api-only|unknown; ``size`` a :data:`SIZE_BUCKETS` key or unknown; ``licence``, ``organisation``,
    ``quantization`` the record's text or unknown; ``method_class`` the card's."""

    record: str | None
    weights: str
    size: str
    licence: str
    organisation: str
    quantization: str
    method_class: str
    link: str = "record"
    """:attr:`mtboard.inputs.models.ModelLink.state` of the row's card: ``record``, ``refused``, ``none`` or
    ``baseline``."""
    link_text: str = ""
    """What the row says of its record (:attr:`mtboard.inputs.models.ModelLink.text`): ``""`` for a valid record,
    ``no model record``, ``model record refused`` or ``baseline (no model)``."""

    @property
    def record_text(self) -> str:
        """The record's slug, or :data:`mtboard.inputs.models.NO_RECORD`."""
        return self.record or NO_RECORD

    def value(self, name: str) -> str:
        """The fact called ``name`` (one of :data:`FILTERS`). Raises: AttributeError for another name."""
        return str(getattr(self, name))

    def label(self, name: str) -> str:
        """What the filter shows for the fact: the size bucket's label, else the value itself."""
        v = self.value(name)
        return SIZE_LABELS.get(v, v) if name == "size" else v


def card_facts(card: Any, models: ModelIndex) -> ModelFacts:
    """The facts of a run card: its record's weights, size bucket, licence, organisation and quantization (the
    weights file's quantization when the card's ``method.model_file_sha256`` is one of the record's files, else the
    record's); :data:`UNKNOWN` where the record says nothing or there is no record; the card's ``method_class``."""
    rec = models.record_for(card)
    mclass = str(getattr(card.method_class, "value", card.method_class))
    link = models.link(card)
    if rec is None:
        return ModelFacts(None, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, mclass, link.state, link.text)
    sha = getattr(card.method, "model_file_sha256", None)
    file_q = next((f.quantization for f in rec.files if sha and f.sha256 == sha), None)
    return ModelFacts(rec.slug, rec.weights or UNKNOWN, size_bucket(rec.parameter_count), rec.licence or UNKNOWN,
                      rec.organisation or UNKNOWN, file_q or rec.quantization or UNKNOWN, mclass, link.state,
                      link.text)


def attach_facts(boards: list[Any], models: ModelIndex) -> None:
    """Set :attr:`mtboard.ledger.tables.Leaderboard.facts` (fingerprint → :class:`ModelFacts` of the row's
    representative card) on every board."""
    for lb in boards:
        cards = {lc.path: lc for lc in [*lb.cards, *lb.unranked]}
        lb.facts = {s.fingerprint: card_facts(cards[s.representative].card, models) for s in lb.rows
                    if s.representative in cards}


__all__ = ["attach_facts", "FILTERS", "SIZE_BUCKETS", "SIZE_LABELS", "UNKNOWN", "ModelFacts", "card_facts", "size_bucket"]
