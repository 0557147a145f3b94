"""Checking a GitHub artifact attestation offline (issue 17 item 4; spec §9.4 "GDS verified").

The ``verify`` workflow attests each verification record it writes with ``actions/attest-build-provenance``: a
Sigstore bundle (``*.sigstore.json``) holding a DSSE envelope whose in-toto statement names the record's SHA-256 as its
subject (predicate type SLSA provenance v1), signed by a short-lived Fulcio certificate that carries the workflow's
OIDC identity (repository, workflow file and ref, commit, run URL) and logged in Rekor. :func:`verify_attestation`
checks such a bundle with sigstore-python, offline:

1. the certificate chains to the pinned trusted root, was logged (signed certificate timestamp) and the bundle's Rekor
   entry is included and signed (``sigstore.verify.Verifier.verify_dsse``);
2. the certificate's identity satisfies the :class:`ExpectedSigner` policy (OIDC issuer, source repository, the
   workflow file at its ref, the signing workflow) plus any extra claims the caller pins (run URL, commit);
3. the DSSE signature over the statement holds, the statement is in-toto with predicate type SLSA provenance v1, and
   one of its subjects has the expected SHA-256.

Pinned trusted root (decision, docs/maintainers.md "Attested verification records"): the Sigstore public-good
``trusted_root.json`` committed beside this module (:data:`TRUSTED_ROOT`, the copy sigstore-python 4.5.1 embeds),
loaded with ``TrustedRoot.from_file``. Not ``Verifier.production(offline=True)``: in offline mode sigstore-python reads
``trusted_root.json`` from the user's cache folder (``~/.cache/sigstore-python``; seeded from the package, replaced by
any earlier online use), so which root is trusted would depend on the machine; a committed file is the same on every
machine and reviewable in git. GitHub attests public repositories through the public-good instance, so this root
verifies them; a private repository's attestations (GitHub's own instance) do not verify with it. When Sigstore
rotates a key, replace the file (``TRUSTED_ROOT`` docstring) in a reviewed commit.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtboard.core.errors import InputError

GITHUB_OIDC_ISSUER = "https://token.actions.githubusercontent.com"
"""Issuer of GitHub Actions' OIDC tokens (the certificate's OIDC issuer extension)."""
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1"
"""Predicate type ``actions/attest-build-provenance`` writes."""
VERIFY_WORKFLOW = ".github/workflows/verify.yml"
"""The workflow that alone produces attested verification records."""
DEFAULT_REF = "refs/heads/main"
"""The ref the verify workflow is dispatched on (its file at that ref is the trusted harness)."""
TRUSTED_ROOT = Path(__file__).with_name("sigstore_trusted_root.json")
"""Sigstore public-good trusted root (Fulcio CAs, Rekor and CT log keys, timestamp authorities), copied from
sigstore-python 4.5.1 (``sigstore/_store/https%3A%2F%2Ftuf-repo-cdn.sigstore.dev/trusted_root.json``, itself the TUF
target of https://tuf-repo-cdn.sigstore.dev). SHA-256 pinned in tests/test_attestation.py; replace it only in a
reviewed commit."""
REPOSITORY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
MAX_BUNDLE_BYTES = 1024 * 1024


class AttestationError(InputError):
    """The bundle does not verify (signature, log entry, identity or subject digest); the message says which."""


@dataclass(frozen=True)
class ExpectedSigner:
    """Who must have signed: a GitHub Actions workflow of one repository, at one ref.

    Attributes:
        repository: ``owner/name`` of the repository whose workflow ran (certificate extension
            SourceRepositoryURI, 1.3.6.1.4.1.57264.1.12).
        workflow: path of the top-level workflow file in that repository (BuildConfigURI, …1.18, is
            ``https://github.com/<repository>/<workflow>@<ref>``).
        ref: git ref the workflow ran on (SourceRepositoryRef, …1.14).
        signer: the certificate's identity (subject alternative name) when a reusable workflow signed; None means the
            workflow itself signed (SAN = the BuildConfigURI), which is what ``actions/attest-build-provenance``
            inside verify.yml gives.
        issuer: OIDC issuer (default GitHub Actions).
    """

    repository: str
    workflow: str = VERIFY_WORKFLOW
    ref: str = DEFAULT_REF
    signer: str | None = None
    issuer: str = GITHUB_OIDC_ISSUER

    def __post_init__(self) -> None:
        if not REPOSITORY_RE.match(self.repository):
            raise InputError(f"repository {self.repository!r} is not owner/name", field="repository",
                             fix="pass the GitHub repository as owner/name, e.g. --repository octo/mtboard")

    @property
    def build_config_uri(self) -> str:
        return f"https://github.com/{self.repository}/{self.workflow}@{self.ref}"

    def policy(self, extra: dict[str, str] | None = None) -> Any:
        """The sigstore verification policy (``sigstore.verify.policy.AllOf``) for this signer, plus ``extra``
        claims: ``run_invocation_uri`` and/or ``source_repository_digest`` (the commit the workflow ran at)."""
        from sigstore.verify import policy as p  # noqa: PLC0415 - heavy import, only when checking

        checks = [p.Identity(identity=self.signer or self.build_config_uri, issuer=self.issuer),
                  p.OIDCIssuerV2(self.issuer),
                  p.OIDCSourceRepositoryURI(f"https://github.com/{self.repository}"),
                  p.OIDCSourceRepositoryRef(self.ref),
                  p.OIDCBuildConfigURI(self.build_config_uri)]
        extra = extra or {}
        if "run_invocation_uri" in extra:
            checks.append(p.OIDCRunInvocationURI(extra["run_invocation_uri"]))
        if "source_repository_digest" in extra:
            checks.append(p.OIDCSourceRepositoryDigest(extra["source_repository_digest"]))
        return p.AllOf(checks)


@dataclass(frozen=True)
class Attestation:
    """What a verified bundle attests."""

    subjects: dict[str, str]
    """Subject name → SHA-256 (hex) from the in-toto statement."""
    predicate_type: str
    predicate: dict[str, Any]


def run_invocation_uri(repository: str, run_id: str, attempt: int) -> str:
    """``https://github.com/<repository>/actions/runs/<run_id>/attempts/<attempt>`` — the certificate's
    RunInvocationURI for that workflow run."""
    return f"https://github.com/{repository}/actions/runs/{run_id}/attempts/{attempt}"


def _verifier() -> Any:
    from sigstore.models import TrustedRoot  # noqa: PLC0415
    from sigstore.verify import Verifier  # noqa: PLC0415

    return Verifier(trusted_root=TrustedRoot.from_file(str(TRUSTED_ROOT)))


def verify_attestation(bundle: bytes, artifact_sha256: str, signer: ExpectedSigner, *,
                       extra: dict[str, str] | None = None, where: str = "bundle") -> Attestation:
    """Verify a Sigstore bundle offline against an artifact digest and a signer (module docstring, steps 1–3).

    Args:
        bundle: the ``.sigstore.json`` bytes (≤ 1 MiB).
        artifact_sha256: 64 lowercase hex, the SHA-256 of the attested file's bytes.
        signer: :class:`ExpectedSigner`.
        extra: further certificate claims to require (see :meth:`ExpectedSigner.policy`).
        where: name used in error messages.

    Returns: :class:`Attestation`.
    Raises: AttestationError (one line saying what failed: parse, signature/log/certificate, identity, payload type,
        predicate type, digest).
    """
    from sigstore.errors import Error as SigstoreError  # noqa: PLC0415
    from sigstore.models import Bundle  # noqa: PLC0415

    if len(bundle) > MAX_BUNDLE_BYTES:
        raise AttestationError(f"bundle is larger than {MAX_BUNDLE_BYTES} bytes", where=where)
    try:
        parsed = Bundle.from_json(bundle)
    except Exception as exc:  # noqa: BLE001 - sigstore raises several types for malformed input
        raise AttestationError(f"not a Sigstore bundle: {_first_line(exc)}", where=where) from None
    try:
        payload_type, payload = _verifier().verify_dsse(parsed, signer.policy(extra))
    except SigstoreError as exc:
        raise AttestationError(f"attestation does not verify: {_first_line(exc)}", where=where) from None
    except Exception as exc:  # noqa: BLE001 - e.g. a tampered signature fails inside cryptography
        raise AttestationError(f"attestation does not verify: {type(exc).__name__}: {_first_line(exc)}",
                               where=where) from None
    if payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise AttestationError(f"payload type is {payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE}", where=where)
    try:
        statement = json.loads(payload)
        subjects = {str(s["name"]): str(s["digest"]["sha256"]) for s in statement["subject"]}
        predicate_type = str(statement["predicateType"])
        predicate = statement.get("predicate") or {}
    except (ValueError, KeyError, TypeError):
        raise AttestationError("the in-toto statement lacks subject names/sha256 digests or a predicate type",
                               where=where) from None
    if predicate_type != SLSA_PROVENANCE_V1:
        raise AttestationError(f"predicate type is {predicate_type!r}, not {SLSA_PROVENANCE_V1}", where=where)
    if artifact_sha256 not in subjects.values():
        got = ", ".join(f"{d[:12]}…" for d in subjects.values()) or "none"
        raise AttestationError(f"the attestation is for another file (attested sha256 {got}; this file "
                               f"{artifact_sha256[:12]}…)", where=where)
    return Attestation(subjects=subjects, predicate_type=predicate_type,
                       predicate=predicate if isinstance(predicate, dict) else {})


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


__all__ = ["DEFAULT_REF", "GITHUB_OIDC_ISSUER", "SLSA_PROVENANCE_V1", "TRUSTED_ROOT", "VERIFY_WORKFLOW", "Attestation",
           "AttestationError", "ExpectedSigner", "run_invocation_uri", "sha256_file", "verify_attestation"]
