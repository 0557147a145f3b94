"""The verification record (GDS verification, spec §9.4; ``mtboard verify``): a maintainer's re-run of a card's method
compared score by score with the card."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from mtboard.core.schema.common import Hex64, Segment, Strict, VerificationTier, _check_iso_datetime, _lax


class MetricDelta(Strict):
    """One score compared between the submitted card and the maintainer's re-run."""

    metric: str
    """Score name, a key of ``scores`` (e.g. ``chrf_plus_plus``, ``composite``), or ``neural_metrics.<key>`` for a
    neural metric's aggregate (``neural_metrics.comet22``)."""
    stored: float | None
    """Value in the submitted card."""
    rerun: float | None
    """Value in the re-run card."""
    delta: float | None
    """``rerun - stored`` (None when either is missing)."""
    relative: float | None
    """``|delta| / |stored|`` (None when stored is 0 or missing; then the absolute rule applies)."""
    within: bool
    """True when ``|delta| <= tolerance * |stored|`` (stored 0: ``|delta| <= tolerance * full scale``)."""


class VerificationRecord(Strict):
    """Result of ``mtboard verify``: a maintainer re-ran a card's method (spec §9.4 GDS verified, §1.3 ±2%).

    Written next to the card as ``<card file stem>.verification.json``; the site grants the ``gds-verified`` tier
    only when ``passed`` is true and ``run_card_hash`` equals the card's.
    """

    record_version: Literal[2] = 2
    """2 (issue 17): adds where and when the re-run ran (``run_id`` … ``started_at``), which the verify workflow fills
    and its GitHub artifact attestation vouches for (:mod:`mtboard.verify.record`)."""
    run_card_hash: Hex64
    """run_card_hash of the submitted card being verified."""
    card_path: str
    """Repository-relative path of the submitted card."""
    card_commit: str | None = None
    """Git commit (40 hex) the card was read at, when known (the verify workflow's ``sha`` input)."""
    card_fingerprint: Hex64
    """Fingerprint hash of the submitted card."""
    rerun_run_card_hash: Hex64
    """run_card_hash of the re-run card (kept beside the record as evidence)."""
    rerun_fingerprint: Hex64
    """Fingerprint hash of the re-run (differs from ``card_fingerprint`` only through harness version or segment)."""
    rerun_harness_version: str
    """mtboard version that re-ran the method."""
    method_spec: str
    """``backend:model[:effort]`` that was re-run."""
    segment: _lax(Segment)
    """Segment re-run and compared with the card: always the card's own segment (the card being verified)."""
    secret_segment_sha256: Hex64 | None = None
    """SHA-256 of the secret-segment file when one was also run (the file itself never leaves the verifier)."""
    secret_segment: _lax(Segment) | None = None
    """Secret segment re-run besides the card's own (sovereign path, spec §8.2), when one was."""
    secret_scores: dict[str, float | None] = {}
    """Scores of the secret-segment re-run (the compared score names). Reported beside the development scores, never
    compared with them: a different segment is a different test set, so ±2 % says nothing there."""
    verified_by: str = Field(min_length=1, max_length=200)
    """Who re-ran it: the GitHub actor in the verify workflow, else the local user name."""
    verified_at: str
    """ISO 8601 UTC time the verification finished."""
    environment: str | None = None
    """Where it ran: the verify workflow's protected GitHub environment and runner (``"github-actions environment
    verification, runner github-hosted, container debian:12"``); None for a re-run made elsewhere."""
    repository: str | None = None
    """``owner/name`` of the repository whose verify workflow ran (``$GITHUB_REPOSITORY``); None outside Actions."""
    run_id: str | None = Field(default=None, pattern=r"^[0-9]{1,20}$")
    """GitHub Actions run id (``$GITHUB_RUN_ID``); None outside Actions."""
    run_attempt: int | None = Field(default=None, ge=1)
    """Attempt of that run (``$GITHUB_RUN_ATTEMPT``)."""
    workflow_ref: str | None = None
    """``$GITHUB_WORKFLOW_REF``: ``owner/name/.github/workflows/verify.yml@refs/heads/main``."""
    workflow_commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    """Commit of the harness the workflow ran (``$GITHUB_SHA``: the dispatched ref's head; the attestation's
    SourceRepositoryDigest must equal it)."""
    started_at: str | None = None
    """ISO 8601 UTC time the re-run started (``verified_at`` is when it finished)."""
    tolerance: float = Field(gt=0.0, le=1.0)
    """Relative tolerance applied to every compared score (spec §1.3: 0.02)."""
    deltas: list[MetricDelta]
    """Every compared score (quality scores; speed and cost are hardware/price dependent and not compared)."""
    passed: bool
    """True when every delta is within the tolerance and the re-run completed."""
    tier: _lax(VerificationTier)
    """Tier the record grants: gds-verified when passed, else self-benchmarked."""
    reason: str | None = None
    """One line: why it failed (metrics out of tolerance, errors) or notes."""

    _v_ts = field_validator("verified_at")(_check_iso_datetime)
    _v_start = field_validator("started_at")(lambda v: v if v is None else _check_iso_datetime(v))
