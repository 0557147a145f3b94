"""Community review records (spec §7.2–7.3, §5; issue 18): ``reviews/<dataset>/<run>.yaml`` (``mtboard schema
review-record``) and the maintained reviewer list ``reviews/reviewers.yaml`` (``mtboard schema reviewers``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, field_validator

from mtboard.core.schema.common import Count, Hex64, Strict, _check_iso_datetime, _date_text, _lax


class Rating(StrEnum):
    """Spec §7.3 step 3: the scale a bilingual reviewer rates each sampled translation on, worst first."""

    reject = "reject"
    """Not usable."""
    gist = "gist"
    """The meaning is clear but the wording is wrong."""
    acceptable = "acceptable"
    """Correct with minor problems."""
    excellent = "excellent"
    """Indistinguishable from a human translation."""


GITHUB_HANDLE_RE = r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*$"
"""A GitHub user name: letters, digits and single inner hyphens (the fields cap it at 39 characters)."""


class RatedEntry(Strict):
    """One sampled entry's rating."""

    entry_id: Count
    """``results[].entry_id`` of the reviewed card (= the corpus entry id)."""
    rating: _lax(Rating)
    note: str | None = Field(default=None, max_length=2000)
    """Optional free text (rendered escaped; never interpreted)."""


class Review(Strict):
    """One reviewer's ratings of one card's sample (what the review page downloads)."""

    reviewer: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """GitHub handle; must be listed for the card's target language in ``reviews/reviewers.yaml``."""
    date: str
    """ISO 8601 date (or date-time) the ratings were made."""
    ratings: list[RatedEntry] = Field(min_length=1, max_length=1000)

    _v_date0 = field_validator("date", mode="before")(_date_text)
    _v_date = field_validator("date")(_check_iso_datetime)


class ReviewRecord(Strict):
    """``reviews/<dataset>/<run>.yaml``: the community reviews of one run card (spec §7.3), one item of ``reviews``
    per reviewer. The sample is the seeded stratified draw of :func:`mtboard.review.community.sample_entries`; the validator
    redraws it and requires every rated entry to belong to it."""

    record_version: Literal[1] = 1
    card: str = Field(pattern=r"^[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{1,200}\.json$")
    """Path of the reviewed card under ``submissions/`` (``<dataset>/<run>.json``)."""
    run_card_hash: Hex64
    """``run_card_hash`` of the reviewed card: a review applies to exactly that card."""
    sample_seed: int = Field(ge=0, le=2**32 - 1)
    sample_size: int = Field(ge=1, le=1000)
    """Sample size asked for (``mtboard review sample --size``; at least 30, the project's). The entries drawn are
    ``min(sample_size, the card's reviewable entries)``: a card with fewer than 30 gives all of them, and a review of
    fewer than 30 distinct entries cannot confirm a tier (docs/SCORING_SPEC.md §5.1)."""
    reviews: list[Review] = Field(min_length=1, max_length=20)


class ReviewerEntry(Strict):
    """One person a maintainer has listed as a reviewer."""

    handle: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """GitHub handle."""
    languages: list[Annotated[str, Field(min_length=2, max_length=35)]] = Field(min_length=1)
    """BCP 47 tags of the languages the person reads well enough to review a translation into them."""
    added: str
    """ISO 8601 date a maintainer listed them."""
    added_by: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    """The maintainer who listed them."""

    _v_added0 = field_validator("added", mode="before")(_date_text)
    _v_added = field_validator("added")(_check_iso_datetime)


class ReviewersFile(Strict):
    """``reviews/reviewers.yaml``: the maintained list of reviewers (changed by maintainers only)."""

    reviewers: list[ReviewerEntry] = []
