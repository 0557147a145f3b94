"""Drift canaries (issue 38 item 3): the canary sets ``canaries/sets.yaml`` (``mtboard schema canary-sets``) and one
canary run's record ``canaries/history/<model>/<date>-<fingerprint12>.json`` (``mtboard schema canary-run``).

A canary set is a small fixed list of a corpus's development entries (public human translations), chosen once by a
documented rule (:mod:`mtboard.inputs.canaries`) and then kept in the committed file: changing the selection code never
changes a committed set. A canary run re-runs an API model's card on its pair's set (:mod:`mtboard.verify.canary`)
and records the scores; the ledger compares them with the card's own results on the same entries
(:mod:`mtboard.ledger.canaries`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from mtboard.core.schema.common import (DATASET_ID_RE, SEMVER_RE, Count, Hex64, Rate, Score100, Strict,
                                        _check_iso_datetime)

CANARY_SET_MAX_ENTRIES = 50
"""At most this many entries in one canary set (the rule picks :data:`mtboard.inputs.canaries.CANARY_SIZE`)."""
CANARY_MAX_SETS = 200
"""At most this many sets in ``canaries/sets.yaml``."""
CANARY_RULE = "stratified-v1"
"""The selection rule's name (:func:`mtboard.inputs.canaries.select`); recorded in each set it picked."""

_Text = Annotated[str, Field(min_length=1, max_length=200)]


class CanarySet(Strict):
    """One corpus's canary entries (development segment)."""

    dataset_id: str = Field(pattern=DATASET_ID_RE)
    version: str = Field(pattern=SEMVER_RE.pattern)
    sha256: Hex64
    """SHA-256 of the corpus file the entries were chosen from; a corpus whose file hashes otherwise is refused."""
    language_pair: _Text
    rule: _Text
    """The rule that chose the entries (``stratified-v1``; a set written by hand names its own)."""
    entry_ids: list[Count] = Field(min_length=1, max_length=CANARY_SET_MAX_ENTRIES)
    """Corpus entry ids (development segment), ascending, no repeats."""

    @field_validator("entry_ids")
    @classmethod
    def _ascending(cls, v: list[int]) -> list[int]:
        if any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("entry ids must be ascending without repeats")
        return v


class CanarySets(Strict):
    """``canaries/sets.yaml``: every canary set, one per corpus (dataset id + version)."""

    sets: list[CanarySet] = Field(max_length=CANARY_MAX_SETS)


class ServedIdentity(Strict):
    """What the server reported about the model it served for a canary run (:mod:`mtboard.llm.serverinfo`, as the
    runner records it on a card): every field None when the server says nothing."""

    model_slug: _Text
    model_id: str | None = Field(None, max_length=200)
    api_provider: str | None = Field(None, max_length=200)
    engine_version: str | None = Field(None, max_length=200)
    model_revision: str | None = Field(None, max_length=200)
    model_file_sha256: Hex64 | None = None


class CanaryRun(Strict):
    """One canary run of a card's method (``mtboard canary run``), as stored under ``canaries/history/``. Holds no
    text and no secret: hashes, ids and numbers."""

    date: str
    """When the run finished (ISO 8601 UTC, ``YYYY-MM-DDTHH:MM:SSZ``)."""
    card_fingerprint: Hex64
    """The fingerprint of the card whose method was re-run (the board row it belongs to)."""
    card_run_card_hash: Hex64
    card_path: str = Field(max_length=400)
    """The card, relative to ``submissions/`` when it lies there (display only)."""
    method: _Text
    """The card's public method spec (``openai:gpt-4.1-mini``)."""
    model_slug: _Text
    """The card's model slug."""
    served: ServedIdentity
    """What the server reported serving in this canary run."""
    served_note: str | None = Field(None, max_length=1000)
    """When the server reported other weights than the card records (:func:`mtboard.verify.rerun.
    weights_mismatches`): those lines joined by "; "; None when they agree or the card records none."""
    dataset_id: str = Field(pattern=DATASET_ID_RE)
    version: str = Field(pattern=SEMVER_RE.pattern)
    sha256: Hex64
    entry_ids: list[Count] = Field(min_length=1, max_length=CANARY_SET_MAX_ENTRIES)
    composite: Rate
    """The composite on the canary entries (:func:`mtboard.score.subset.composite_on`)."""
    chrf_plus_plus: Score100
    """Corpus chrF++ on the canary entries (:func:`mtboard.score.subset.chrf_on`)."""
    outputs_sha256: Hex64
    """SHA-256 of the canonical JSON ``[[entry id, raw output], …]`` of the run (run 0), so two runs' outputs can be
    told equal or not without storing them."""
    harness_version: _Text

    _date = field_validator("date")(_check_iso_datetime)


__all__ = ["CANARY_MAX_SETS", "CANARY_RULE", "CANARY_SET_MAX_ENTRIES", "CanaryRun", "CanarySet", "CanarySets",
           "ServedIdentity"]
