"""Checking a verification record anyone can repeat (issue 17 item 4; spec §9.4 "GDS verified", §1.3 ±2%).

A record (:class:`mtboard.core.schema.VerificationRecord`, ``<card stem>.verification.json``) counts as *GDS verified* only
when every check below passes; a record that is well-formed but not attested is a *maintainer re-run (unattested)*:
its numbers are shown, it grants no tier.

Content (the record alone, and the card beside it when given):
  * every delta's ``within`` follows from its numbers: ``|rerun − stored| <= tolerance × |stored|`` (``tolerance ×``
    the score's full scale when stored is 0; :data:`COMPARED`), ``passed`` implies every delta within and
    ``tier == gds-verified``, a failed record grants ``self-benchmarked``;
  * ``started_at <= verified_at``, and neither after the validation time + the clock skew (issue 32 item 3);
  * the card (when given) has the record's ``run_card_hash``.
Attestation (:mod:`mtboard.verify.attestation`):
  * the record says where it was made (``repository``, ``run_id``, ``run_attempt``, ``workflow_commit``, ``started_at``
    — filled by the verify workflow only);
  * the Sigstore bundle beside it (``<card stem>`` + :data:`BUNDLE_SUFFIX`) verifies offline with the pinned trusted
    root, its statement's subject is the SHA-256 of the record file's bytes, and its certificate names the expected
    signer (:class:`~mtboard.verify.attestation.ExpectedSigner`: the repository, ``.github/workflows/verify.yml`` at
    ``refs/heads/main``), the record's repository, and the run (RunInvocationURI
    ``…/actions/runs/<run_id>/attempts/<run_attempt>``) and commit (SourceRepositoryDigest = ``workflow_commit``) the
    record names.

The expected repository is configuration, not content: ``--repository owner/name`` on ``mtboard verify-record`` and
``mtboard build``, else ``$MTBOARD_ATTESTATION_REPOSITORY`` (both read by the CLI and passed as ``repository``), else
``$GITHUB_REPOSITORY`` (set inside GitHub Actions, so the site workflow checks against its own repository). With none,
nothing is attested.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mtboard.core import safejson
from mtboard.verify.attestation import (DEFAULT_REF, VERIFY_WORKFLOW, AttestationError, ExpectedSigner, run_invocation_uri,
                                 verify_attestation)
from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema import VerificationRecord, VerificationTier
from mtboard.validate.bounds import date_problem

RECORD_SUFFIX = ".verification.json"
BUNDLE_SUFFIX = ".verification.json.sigstore"
"""The record's Sigstore bundle, beside it: ``<card stem>.verification.json.sigstore`` (not ``*.json``, so card
walkers never read it as a card)."""
REPOSITORY_ENV = "GITHUB_REPOSITORY"
"""GitHub Actions' variable naming the repository a workflow runs in: the expected repository when none is given."""
MAX_RECORD_BYTES = 4 * 1024 * 1024

COMPARED: dict[str, float] = {
    "chrf_plus_plus": 100.0, "bleu": 100.0, "ter": 100.0, "exact_match_rate": 1.0, "equivalent_match_rate": 1.0,
    "fst_acceptance_rate": 1.0, "morphological_accuracy": 1.0, "semantic_score": 1.0, "length_ratio": 1.0,
    "code_switching_rate": 1.0, "hallucination_rate": 1.0, "terminology_adherence": 1.0, "composite": 1.0,
    "error_rate": 1.0,
}
"""Score name → full scale (used when the stored value is 0). ``error_rate`` = errors / total."""

UNATTESTED_LABEL = "maintainer re-run (unattested)"
"""What the site shows for a well-formed record that is not attested."""


def within_tolerance(stored: float, rerun: float, tolerance: float, scale: float) -> bool:
    """Spec §1.3: ``|rerun − stored| <= tolerance × |stored|`` (``tolerance × scale`` when stored is 0), with 1e-12
    slack for float rounding."""
    bound = tolerance * (abs(stored) if stored != 0 else scale)
    return abs(rerun - stored) <= bound + 1e-12


def expected_signer(repository: str | None = None, *, workflow: str = VERIFY_WORKFLOW,
                    ref: str = DEFAULT_REF) -> ExpectedSigner | None:
    """The configured :class:`ExpectedSigner` (module docstring): ``repository`` (the CLI passes ``--repository``,
    else ``$MTBOARD_ATTESTATION_REPOSITORY``), else :data:`REPOSITORY_ENV`; None when neither names one.

    Raises: InputError when the repository is not ``owner/name``."""
    repo = repository or os.environ.get(REPOSITORY_ENV) or None
    return ExpectedSigner(repository=repo, workflow=workflow, ref=ref) if repo else None


@dataclass
class RecordCheck:
    """Outcome of :func:`check_record`."""

    record: VerificationRecord | None
    """The parsed record (None when it does not parse)."""
    content_problems: list[str] = field(default_factory=list)
    """One line each: the record contradicts itself or the card."""
    attestation_problems: list[str] = field(default_factory=list)
    """One line each: why the record is not attested."""

    @property
    def attested(self) -> bool:
        return self.record is not None and not self.attestation_problems

    @property
    def ok(self) -> bool:
        """Well-formed, consistent and attested (``mtboard verify-record`` exits 0)."""
        return self.attested and not self.content_problems

    @property
    def gds_verified(self) -> bool:
        """``ok`` and the re-run reproduced the card (the record passed)."""
        return self.ok and self.record is not None and self.record.passed

    @property
    def reasons(self) -> list[str]:
        return [*self.content_problems, *self.attestation_problems]


def content_problems(rec: VerificationRecord, card_run_card_hash: str | None = None, *,
                     now: datetime | None = None) -> list[str]:
    """The record's internal consistency (module docstring, "Content"); [] when consistent. ``verified_at`` and
    ``started_at`` must not lie after ``now`` (default: the clock) + the clock skew
    (:func:`mtboard.validate.bounds.date_problem`, issue 32 item 3)."""
    out: list[str] = []
    clock = now or datetime.now(UTC)
    for name in ("verified_at", "started_at"):
        value = getattr(rec, name)
        bad = date_problem(value, f"$.{name}", clock) if value is not None else None
        if bad:
            out.append(bad)
    all_within = bool(rec.deltas)
    for d in rec.deltas:
        scale = COMPARED.get(d.metric)
        if scale is None:
            out.append(f"delta {d.metric!r} is not a compared score")
            continue
        if d.stored is None or d.rerun is None:
            expect = False
        else:
            expect = within_tolerance(d.stored, d.rerun, rec.tolerance, scale)
            if d.delta is None or abs(d.delta - (d.rerun - d.stored)) > 1e-9 * max(1.0, abs(d.stored)):
                out.append(f"delta {d.metric}: delta {d.delta} is not re-run − stored")
        all_within = all_within and expect
        if d.within != expect:
            out.append(f"delta {d.metric}: within is {d.within} but stored {d.stored}, re-run {d.rerun} and "
                       f"tolerance {rec.tolerance} give {expect}")
    if rec.passed and not all_within:
        out.append("passed is true but not every compared score is within the tolerance")
    want = VerificationTier.gds_verified if rec.passed else VerificationTier.self_benchmarked
    if rec.tier != want:
        out.append(f"tier is {rec.tier.value} but a record with passed={rec.passed} grants {want.value}")
    if rec.started_at is not None and _ts(rec.started_at) > _ts(rec.verified_at):
        out.append(f"started_at {rec.started_at} is after verified_at {rec.verified_at}")
    if card_run_card_hash is not None and rec.run_card_hash != card_run_card_hash:
        out.append("the record verifies a different card (run_card_hash differs)")
    return out


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def bundle_path_for(record_path: Path) -> Path:
    """``X.verification.json`` → ``X.verification.json.sigstore`` beside it."""
    return record_path.with_name(record_path.name + ".sigstore")


def check_record(record_path: str | os.PathLike[str], signer: ExpectedSigner | None, *,
                 bundle_path: str | os.PathLike[str] | None = None,
                 card_run_card_hash: str | None = None) -> RecordCheck:
    """Check a verification record's content and attestation (module docstring). Never raises for a bad record or
    bundle: every problem is a line in the result.

    Args:
        record_path: the ``*.verification.json`` file.
        signer: who must have attested it (:func:`expected_signer`); None: not attested ("no repository configured").
        bundle_path: the Sigstore bundle (default :func:`bundle_path_for`).
        card_run_card_hash: the card's run_card_hash when the card is at hand.
    """
    path = Path(record_path)
    where = path.name
    try:
        raw = safejson.read_bytes(path, max_bytes=MAX_RECORD_BYTES)
        safejson.loads(raw, where=where)
        from mtboard.core.documents import validate_model  # noqa: PLC0415

        rec = validate_model(VerificationRecord, raw, where)
    except MtboardError as exc:
        return RecordCheck(None, content_problems=[exc.one_line()], attestation_problems=["record unreadable"])
    result = RecordCheck(rec, content_problems=content_problems(rec, card_run_card_hash))
    missing = [n for n in ("repository", "run_id", "run_attempt", "workflow_commit", "started_at")
               if getattr(rec, n) is None]
    if missing:
        result.attestation_problems.append(f"not made by the verify workflow (no {', '.join(missing)}): a hand-made "
                                           "record cannot be attested")
        return result
    if signer is None:
        result.attestation_problems.append("no expected repository configured (--repository or "
                                           "$MTBOARD_ATTESTATION_REPOSITORY), so no attestation can be checked")
        return result
    if rec.repository != signer.repository:
        result.attestation_problems.append(f"record names repository {rec.repository}, expected {signer.repository}")
        return result
    bundle = Path(bundle_path) if bundle_path is not None else bundle_path_for(path)
    try:
        data = safejson.read_bytes(bundle, max_bytes=1024 * 1024)
    except InputError:
        result.attestation_problems.append(f"no attestation bundle {bundle.name} beside the record")
        return result
    assert rec.run_id is not None and rec.run_attempt is not None and rec.workflow_commit is not None
    extra = {"run_invocation_uri": run_invocation_uri(rec.repository, rec.run_id, rec.run_attempt),
             "source_repository_digest": rec.workflow_commit}
    try:
        verify_attestation(data, hashlib.sha256(raw).hexdigest(), signer, extra=extra, where=bundle.name)
    except AttestationError as exc:
        result.attestation_problems.append(exc.one_line())
    return result


__all__ = ["BUNDLE_SUFFIX", "COMPARED", "RECORD_SUFFIX", "REPOSITORY_ENV", "UNATTESTED_LABEL", "RecordCheck",
           "bundle_path_for", "check_record", "content_problems", "expected_signer", "within_tolerance"]
