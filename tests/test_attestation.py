"""Issue 17 item 4: verification anyone can check — GitHub artifact attestations verified offline
(:mod:`mtboard.verify.attestation`) and verification records checked like ``mtboard verify-record``
(:mod:`mtboard.verify.record`).

The positive case is a REAL public attestation (tests/fixtures/attestation/README.md: GitHub CLI's test data, MIT):
it verifies with the committed trusted root, no network. Tampered copies (a byte of the signed payload, of the
signature, of the artifact) are rejected, as are a wrong signer, a wrong run and a record whose bundle attests
another file. The committed verification records (re-made by ``mtboard verify`` outside GitHub Actions) are
consistent but unattested.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.verify.attestation import (SLSA_PROVENANCE_V1, TRUSTED_ROOT, AttestationError, ExpectedSigner,
                                 run_invocation_uri, verify_attestation)
from mtboard.cli.main import app
from mtboard.verify.record import UNATTESTED_LABEL, check_record, content_problems, expected_signer

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "attestation"
BUNDLE = (FIX / "reusable-workflow-attestation.sigstore.json").read_bytes()
ARTIFACT = (FIX / "reusable-workflow-artifact").read_bytes()
ARTIFACT_SHA = "49a3aa6075e0f49f82843e74b5baa614ad2a588e6675612bf108a0a008c5ac25"
FIXTURE_SIGNER = ExpectedSigner(
    repository="malancas/attest-demo", workflow=".github/workflows/shared.yml", ref="refs/heads/main",
    signer="https://github.com/github/artifact-attestations-workflows/.github/workflows/attest.yml@"
           "09b495c3f12c7881b3cc17209a327792065c1a1d")
FIXTURE_RUN = {"run_invocation_uri": run_invocation_uri("malancas/attest-demo", "9228858953", 1),
               "source_repository_digest": "95baf27389e83e6a5c48f42e190d48d7abcea19e"}
RECORDS = sorted((ROOT / "submissions").rglob("*.verification.json"))


def _edit(mutate) -> bytes:
    data = json.loads(BUNDLE)
    mutate(data)
    return json.dumps(data).encode()


def test_trusted_root_is_the_pinned_file():
    # sigstore-python 4.5.1's embedded public-good root; a change must be a reviewed commit that updates this hash
    assert hashlib.sha256(TRUSTED_ROOT.read_bytes()).hexdigest() == \
        "6494e21ea73fa7ee769f85f57d5a3e6a08725eae1e38c755fc3517c9e6bc0b66"


def test_real_attestation_verifies_offline():
    assert hashlib.sha256(ARTIFACT).hexdigest() == ARTIFACT_SHA
    att = verify_attestation(BUNDLE, ARTIFACT_SHA, FIXTURE_SIGNER, extra=FIXTURE_RUN)
    assert att.subjects == {"github_provenance_demo-0.0.0-py3-none-any.whl": ARTIFACT_SHA}
    assert att.predicate_type == SLSA_PROVENANCE_V1 == "https://slsa.dev/provenance/v1"
    assert att.predicate["buildDefinition"]["externalParameters"]["workflow"]["repository"] == \
        "https://github.com/malancas/attest-demo"


def _flip_payload(d):
    payload = bytearray(base64.b64decode(d["dsseEnvelope"]["payload"]))
    i = payload.index(ARTIFACT_SHA.encode())
    payload[i] = ord("5") if payload[i] != ord("5") else ord("6")  # one hex digit of the attested digest
    d["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()


def _flip_signature(d):
    sig = bytearray(base64.b64decode(d["dsseEnvelope"]["signatures"][0]["sig"]))
    sig[40] ^= 0x01
    d["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()


@pytest.mark.parametrize("mutate", [_flip_payload, _flip_signature], ids=["payload-byte", "signature-byte"])
def test_tampered_bundle_is_rejected(mutate):
    with pytest.raises(AttestationError, match="attestation does not verify"):
        verify_attestation(_edit(mutate), ARTIFACT_SHA, FIXTURE_SIGNER)


def test_tampered_artifact_is_rejected():
    changed = bytearray(ARTIFACT)
    changed[100] ^= 0x01
    with pytest.raises(AttestationError, match=r"another file \(attested sha256 49a3aa6075e0…"):
        verify_attestation(BUNDLE, hashlib.sha256(bytes(changed)).hexdigest(), FIXTURE_SIGNER)


@pytest.mark.parametrize("signer,extra,needle", [
    (ExpectedSigner("malancas/attest-demo", workflow=".github/workflows/shared.yml"), None, "SANs do not match"),
    (ExpectedSigner("octo/mtboard", workflow=".github/workflows/shared.yml", signer=FIXTURE_SIGNER.signer), None,
     "SourceRepositoryURI does not match"),
    (FIXTURE_SIGNER, {"run_invocation_uri": run_invocation_uri("malancas/attest-demo", "9228858954", 1)},
     "RunInvocationURI does not match"),
    (FIXTURE_SIGNER, {"source_repository_digest": "0" * 40}, "SourceRepositoryDigest does not match"),
], ids=["other-signer", "other-repository", "other-run", "other-commit"])
def test_wrong_identity_is_rejected(signer, extra, needle):
    with pytest.raises(AttestationError, match=needle):
        verify_attestation(BUNDLE, ARTIFACT_SHA, signer, extra=extra)


def test_garbage_is_rejected_in_one_line():
    with pytest.raises(AttestationError, match="not a Sigstore bundle") as exc:
        verify_attestation(b'{"mediaType": "x"}', ARTIFACT_SHA, FIXTURE_SIGNER)
    assert "\n" not in str(exc.value)


# --------------------------------------------------------------------------------------------------------------------
# Records


def _record(tmp_path: Path, **changes) -> Path:
    """A record_version 2 record as the verify workflow would write it for the fixture's run (repository, run id,
    attempt and commit of the fixture's certificate), deltas copied from the committed Apertium record."""
    (src,) = [p for p in RECORDS if "apertium-eng-spa" in p.name]
    data = json.loads(src.read_bytes())
    data.update(repository="malancas/attest-demo", run_id="9228858953", run_attempt=1,
                workflow_commit="95baf27389e83e6a5c48f42e190d48d7abcea19e",
                workflow_ref="malancas/attest-demo/.github/workflows/shared.yml@refs/heads/main", **changes)
    path = tmp_path / src.name
    path.write_text(json.dumps(data))
    return path


def test_record_whose_bundle_attests_another_digest_is_rejected(tmp_path):
    path = _record(tmp_path)
    (tmp_path / (path.name + ".sigstore")).write_bytes(BUNDLE)  # a genuine bundle, but for another file
    check = check_record(path, FIXTURE_SIGNER)
    assert not check.content_problems and not check.attested and not check.ok
    (line,) = check.attestation_problems
    assert "the attestation is for another file (attested sha256 49a3aa6075e0…" in line
    assert hashlib.sha256(path.read_bytes()).hexdigest()[:12] in line


def test_record_for_another_repository_or_without_bundle_is_unattested(tmp_path):
    path = _record(tmp_path)
    assert check_record(path, ExpectedSigner("octo/mtboard")).attestation_problems == [
        "record names repository malancas/attest-demo, expected octo/mtboard"]
    assert check_record(path, FIXTURE_SIGNER).attestation_problems == [
        f"no attestation bundle {path.name}.sigstore beside the record"]
    assert "no expected repository configured" in check_record(path, None).attestation_problems[0]


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.parent.name)
def test_committed_records_are_consistent_but_unattested(path):
    # the record stays under the name of the card it verified; the committed card beside it was re-scored from that
    # card (harness 0.5.0) and names it in rescored_from
    verified = json.loads(path.read_bytes())["run_card_hash"]
    beside = [json.loads(p.read_bytes()) for p in path.parent.glob("*.json")
              if not p.name.endswith(".verification.json")]
    (card,) = [c for c in beside if c["run_card_hash"] == verified
               or verified in [a["run_card_hash"] for a in c.get("rescored_from", [])]]
    assert path.name.rsplit("__", 1)[0] == f"{card['model_slug'].replace('/', '-')}__{card['condition']}"
    check = check_record(path, ExpectedSigner("octo/mtboard"), card_run_card_hash=verified)
    rec = check.record
    assert rec is not None and rec.record_version == 2 and rec.passed and not check.content_problems
    assert rec.card_commit == "1c63c75ce4df3e54db64923b7cd869e9f9d61abd" and rec.started_at <= rec.verified_at
    assert check.attestation_problems == ["not made by the verify workflow (no repository, run_id, run_attempt, "
                                          "workflow_commit): a hand-made record cannot be attested"]
    assert not check.gds_verified


def test_content_checks_catch_an_edited_record(tmp_path):
    path = _record(tmp_path)
    data = json.loads(path.read_bytes())
    from mtboard.core.schema import VerificationRecord

    chrf = data["deltas"][0]
    assert chrf["metric"] == "chrf_plus_plus"
    # a re-run 3 % lower still marked within ±2 %
    chrf.update(rerun=chrf["stored"] * 0.97, delta=chrf["stored"] * -0.03)
    problems = content_problems(VerificationRecord.model_validate(data))
    assert problems == [f"delta chrf_plus_plus: within is True but stored {chrf['stored']}, re-run "
                        f"{chrf['rerun']} and tolerance 0.02 give False",
                        "passed is true but not every compared score is within the tolerance"]
    data = json.loads(path.read_bytes())
    data.update(passed=False)
    assert content_problems(VerificationRecord.model_validate(data)) == [
        "tier is gds-verified but a record with passed=False grants self-benchmarked"]
    assert content_problems(VerificationRecord.model_validate(json.loads(path.read_bytes())), "f" * 64) == [
        "the record verifies a different card (run_card_hash differs)"]


def test_expected_signer_comes_from_option_then_environment(monkeypatch):
    monkeypatch.setenv("MTBOARD_ATTESTATION_REPOSITORY", "octo/board")  # the CLI's to read and pass as the option
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    assert expected_signer() is None
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/site")
    assert expected_signer().build_config_uri == \
        "https://github.com/octo/site/.github/workflows/verify.yml@refs/heads/main"
    assert expected_signer("a/b").repository == "a/b"


def test_verify_record_cli_takes_the_repository_from_option_then_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("MTBOARD_ATTESTATION_REPOSITORY", raising=False)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    path = _record(tmp_path)  # names malancas/attest-demo

    def expected(*args: str, **env: str) -> str:
        res = CliRunner().invoke(app, ["verify-record", str(path), *args], env=env)
        assert res.exit_code == 1 and len(res.output.splitlines()) == 1, res.output
        return res.output.strip().rsplit(", expected ", 1)[1]

    both = {"MTBOARD_ATTESTATION_REPOSITORY": "octo/board", "GITHUB_REPOSITORY": "octo/site"}
    assert expected(**both) == "octo/board"
    assert expected(GITHUB_REPOSITORY="octo/site") == "octo/site"
    assert expected("--repository", "a/b", **both) == "a/b"


def test_verify_record_cli(tmp_path, monkeypatch):
    monkeypatch.delenv("MTBOARD_ATTESTATION_REPOSITORY", raising=False)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    runner = CliRunner()
    committed = next(p for p in RECORDS if "apertium-eng-spa" in p.name)
    res = runner.invoke(app, ["verify-record", str(committed), "--repository", "octo/mtboard"])
    assert res.exit_code == 1
    assert res.output == (f"{committed.name}: not made by the verify workflow (no repository, run_id, run_attempt, "
                          "workflow_commit): a hand-made record cannot be attested\n")
    path = _record(tmp_path)
    (tmp_path / (path.name + ".sigstore")).write_bytes(BUNDLE)
    res = runner.invoke(app, ["verify-record", str(path), "--repository", "malancas/attest-demo",
                              "--workflow", ".github/workflows/shared.yml"])
    assert res.exit_code == 1 and len(res.output.splitlines()) == 1
    # the fixture's signer is a reusable workflow, not verify.yml itself: the identity check fails first
    assert "SANs do not match https://github.com/malancas/attest-demo/.github/workflows/shared.yml@refs/heads/main" \
        in res.output


def test_unattested_label():
    assert UNATTESTED_LABEL == "maintainer re-run (unattested)"
