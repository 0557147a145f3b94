"""The corpus file (spec §2): the dataset envelope, its entries (with glossary terms and upstream origin) and the
corpus itself (``mtboard schema corpus``)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from mtboard.core.schema.common import (DATASET_ID_RE, SEMVER_RE, Bcp47, Context, Count, Domain, Register, Segment,
                                        Strict, _check_bcp47, _lax)
from mtboard.core.text import is_blank


class Origin(Strict):
    """Where an entry's text comes from upstream, precise enough to regenerate it (corpora/SOURCES.md)."""

    package: str
    """Upstream package name, e.g. Debian ``debian-reference-es`` or PyPI ``django``."""
    package_version: str | None = None
    """Upstream package version the text was read from."""
    file: str | None = None
    """Path inside the package, e.g. ``usr/share/locale/es/LC_MESSAGES/gnumed.mo``."""
    locator: str | None = None
    """Position inside the file: msgctxt/msgid hash, HTML block index, article number."""
    note: str | None = None
    """Processing note, e.g. 'reversed from an en→ja catalogue: the Japanese is the translation, English the original'."""


class DatasetInfo(Strict):
    """The dataset envelope (spec §2.1)."""

    id: str = Field(pattern=DATASET_ID_RE)
    """Unique dataset identifier used in run cards and leaderboards (lowercase, digits, '.', '_', '-')."""
    version: str
    """Semantic version; bumping it makes earlier run cards incomparable."""
    language_pair: str = Field(min_length=3, max_length=40)
    """Display label, e.g. 'EN→ES'."""
    source_language: Bcp47
    """BCP 47 code of the source language."""
    target_language: Bcp47
    """BCP 47 code of the target language."""
    created: str
    """ISO 8601 creation date (YYYY-MM-DD)."""
    license: str = Field(min_length=1, max_length=200)
    """SPDX licence expression covering the texts (upstream licences, e.g. 'GPL-2.0-or-later AND BSD-3-Clause')."""
    provenance: list[str]
    """Provenance labels used by the entries (spec §2.5)."""
    description: str | None = None
    """What the dataset holds and how it was built (one paragraph)."""

    _v_src = field_validator("source_language", "target_language")(_check_bcp47)

    @field_validator("version")
    @classmethod
    def _semver(cls, v: str) -> str:
        if not SEMVER_RE.match(v):
            raise ValueError(f"not a semantic version: {v!r} (use e.g. '1.0.0')")
        return v

    @field_validator("created")
    @classmethod
    def _date(cls, v: str) -> str:
        try:
            date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"not an ISO 8601 date: {v!r} (use YYYY-MM-DD)") from None
        return v


class GlossaryTerm(Strict):
    """A glossary term that occurs in an entry's source and the target rendering(s) it requires (terminology
    adherence, docs/SCORING_SPEC.md §2.4)."""

    source: str = Field(min_length=1)
    """The term as written in the source language."""
    targets: list[str] = Field(min_length=1)
    """Acceptable target-language renderings (any one counts as adherent)."""

    @field_validator("source")
    @classmethod
    def _source_not_blank(cls, v: str) -> str:
        if is_blank(v):
            raise ValueError("is blank after text normalisation: write the term")
        return v

    @field_validator("targets")
    @classmethod
    def _targets_not_blank(cls, v: list[str]) -> list[str]:
        if any(is_blank(t) for t in v):
            raise ValueError("a target rendering is blank after text normalisation: write it or remove it")
        return v


class Entry(Strict):
    """One translation challenge (spec §2.2). Third-party corpora need only id, source and reference."""

    id: Count
    """Unique integer id within the corpus."""
    source: str = Field(min_length=1)
    """Source text in the source language."""
    reference: str = Field(min_length=1)
    """Human reference translation (never model-written, spec §1.4)."""
    segment: _lax(Segment) = Segment.development
    """Partition (spec §2.3); defaults to development."""
    difficulty: Annotated[int, Field(ge=1, le=5)] | None = None
    """Difficulty 1–5 (spec §2.4), assigned by a documented rule."""
    provenance: str | None = None
    """Free-form source label (spec §2.5; conventions: gold_standard, textbook, elicited, corpus)."""
    register: _lax(Register) | None = None
    """Formality (spec §2.6)."""
    context: _lax(Context) | None = None
    """Communicative function (spec §2.6)."""
    domain: _lax(Domain) | None = None
    """One of the 16 domain codes (spec §2.7)."""
    morphological_analysis: str | None = None
    """Gold morphological decomposition (optional)."""
    notes: str | None = None
    """Translator notes, dialect variants, ambiguity flags."""
    variant_class: str | None = None
    """Class label grouping acceptable variants."""
    variants: list[str] = []
    """Other acceptable human translations, used for equivalent_match."""
    history: list[str] = []
    """Prior dialogue lines in the source language (oldest first), given as context, not to be translated."""
    scene: str | None = Field(default=None, min_length=1, max_length=200)
    """Id of the scene (conversation) the entry's line belongs to, e.g. ``httt/01_The_Elves_Besieged`` (a Wesnoth
    campaign and scenario); entries of one scene share it and their ``history`` comes from the scene's earlier
    lines. ``None``: the entry is not part of a dialogue (issue 40; docs/corpora.md)."""
    glossary: list[GlossaryTerm] = []
    """Glossary terms occurring in the source, with their required renderings (terminology_adherence; kept from a
    TBX or CSV glossary by ``mtboard corpus import --glossary``)."""
    origin: Origin | None = None
    """Upstream location of the text (package, file, locator)."""
    added: str | None = None
    """When the entry's text became public: the day it was added to the dataset, or the earlier day its text was first
    published when it was copied from existing text (ISO 8601 date, YYYY-MM-DD); optional. An extension of spec §2.2
    (issue 37): an entry added after a model's training cutoff is clean for that model, and the board shows the
    model's score on those entries beside the full score. Filled for entries added from now on and for versions
    whose date is known; absent: unknown (never clean). docs/corpora.md."""

    @field_validator("added")
    @classmethod
    def _added_date(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            if len(v) != 10:
                raise ValueError
            date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"not an ISO 8601 date: {v!r} (use YYYY-MM-DD)") from None
        return v

    @field_validator("source", "reference")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        # issue 14: ' ' or a lone zero-width space passed min_length and scored an empty output as perfect
        if is_blank(v):
            raise ValueError("is blank after text normalisation (only whitespace, zero-width or other invisible "
                             "characters; mtboard.core.text.normalise): write the text or remove the entry")
        return v


class Corpus(Strict):
    """A corpus file: envelope + entries (spec §2)."""

    dataset: DatasetInfo
    """Dataset envelope."""
    entries: list[Entry] = Field(min_length=1)
    """Entries, ordered by id."""

    @model_validator(mode="after")
    def _unique_ids(self) -> Corpus:
        seen: set[int] = set()
        for i, e in enumerate(self.entries):
            if e.id in seen:
                raise ValueError(f"entries[{i}].id {e.id} is duplicated; ids must be unique")
            seen.add(e.id)
        return self

    def segment(self, name: Segment | str) -> list[Entry]:
        """Entries of one segment, in file order."""
        return [e for e in self.entries if e.segment == name]
