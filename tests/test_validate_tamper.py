"""Issue 6 acceptance — tamper suite.

Starting from a REAL valid card (Apertium on the first 12 development entries of corpora/mtb-en-es-dev.json, scored
and sealed by the real pipeline: tests/validate_support.py), every single-field mutation is generated from the card
itself: each score (breakdowns included), each totals field, each per-entry hypothesis (raw and post-processed) and
entry id of every entry, every per-entry field of the first entry, every fingerprint component, every dataset
field, the top-level and method fields, plus explicit timestamp mutations. Each mutation is validated twice:

* stale: the stored run_card_hash is kept → ``run_card_hash`` must be named;
* re-sealed: run_card_hash recomputed and the file moved to its new canonical path → the check that owns the field
  must be named (table EXPECTED below, written by hand from the spec: §3.8 fingerprint, §3.9 hash, issue 6 checks).

Fields that no check can bind once re-sealed (what only a re-run confirms: free labels, settings that enter no
recomputation, measured latencies) are classified ``declared`` in the schema (:data:`mtboard.validate.DECLARED_FIELDS`,
derived from ``x-binding``); a test checks that every mutated field no check owns is declared.
tests/test_validate_binding.py goes further: it re-derives the fingerprint too.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mtboard import validate as V
from mtboard.score.metrics.composite import composite_signature

import validate_support as vs

FULL_ENTRIES = (0,)
"""Entries whose every field is mutated (hypotheses and ids are mutated for all entries)."""

# (regex over the JSON path, checks of which at least one must fail when re-sealed) — first match wins.
EXPECTED: list[tuple[str, set[str] | None]] = [
    # declared and entering no recomputation: only a re-run confirms them (None: nothing can catch a re-sealed edit)
    (r"^\$\.results\[\d+\]\.(batch_latency_s|usage\.reported)$", None),
    (r"^\$\.fingerprint\.", {"fingerprint"}),
    (r"^\$\.scores\.signatures\.", {"signatures"}),
    (r"^\$\.scores\.(mechanical|policy_version)", {"mechanical"}),
    (r"^\$\.scores\.quality_tier$", {"metrics", "method"}),
    (r"^\$\.scores\.", {"metrics"}),
    (r"^\$\.totals\.judge_", {"judges"}),
    (r"^\$\.totals\.", {"metrics"}),
    (r"^\$\.results\[\d+\]\.(source|expected|segment|difficulty|domain|provenance)$", {"texts"}),
    (r"^\$\.results\[\d+\]\.entry_id$", {"entries"}),
    (r"^\$\.results\[\d+\]\.(predicted|checks\..*)$", {"mechanical"}),
    (r"^\$\.results\[\d+\]\.(raw_predicted|error|error_kind)$", {"metrics", "mechanical"}),
    (r"^\$\.results\[\d+\]\.plugin_metrics(\..*)?$", {"neural"}),  # neural metrics: mtboard.validate.neural
    (r"^\$\.results\[\d+\]\.tool_call_count$", {"method"}),  # tools rules: mtboard.validate.tools (issue 18)
    (r"^\$\.results\[\d+\]\.", {"metrics"}),
    (r"^\$\.dataset\.entry_count$", {"entries"}),
    (r"^\$\.dataset\.segment$", {"entries", "sovereignty"}),
    (r"^\$\.dataset\.", {"dataset"}),
    (r"^\$\.harness_version$", {"harness_version"}),
    (r"^\$\.timestamp$", {"timestamps"}),
    (r"^\$\.elapsed_seconds$", {"metrics", "timestamps"}),
    (r"^\$\.(model_slug|condition|temperature|batch_size|tools_enabled|system_prompt_sha256)$", {"fingerprint"}),
    (r"^\$\.method\.(api_provider|endpoint_host_sha256|max_tokens|prompt_template_sha256|model_revision|"
     r"model_file_sha256|engine_version)$", {"fingerprint"}),
    (r"^\$\.method\.limit$", {"entries"}),
    (r"^\$\.method\.(price_in_per_mtok|price_out_per_mtok|runs)$", {"metrics"}),
    (r"^\$\.(system_prompt_used|fst_version|method_class|method\.(spec|backend|model|effort|prompt_name|prompt_format)|"
     r"method_config\.(model|temperature|batchSize|qualityTier|promptContext|register|coachingFile|coachingPrompt)|"
     r"coaching_data_sha256)$", {"method"}),
]


def _declared(path: str) -> bool:
    """The path (list indexes as ``[]``) is classified ``declared`` in the schema."""
    return re.sub(r"\[\d+\]", "[]", path) in V.DECLARED_FIELDS


def expected_checks(path: str) -> set[str] | None:
    for rx, checks in EXPECTED:
        if re.search(rx, path):
            return checks
    return None


def _jpath(parts) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _leaves(value: Any, parts: tuple = ()):
    if isinstance(value, dict):
        if not value:
            yield parts, value
        for k, v in value.items():
            yield from _leaves(v, parts + (k,))
    elif isinstance(value, list):
        if not value:
            yield parts, value
        for i, v in enumerate(value):
            yield from _leaves(v, parts + (i,))
    else:
        yield parts, value


def _candidates(v: Any) -> list[Any]:
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, int):
        return [v + 1, v - 1]
    if isinstance(v, float):
        return [v + 0.1, v - 0.1, v * 1.05, v + 1.0]
    if isinstance(v, str):
        if re.fullmatch(r"[0-9a-f-]{36}", v):  # UUID
            return [v[:-1] + ("0" if v[-1] != "0" else "1")]
        if re.fullmatch(r"[0-9a-f]{64}", v):
            return [v[:-1] + ("0" if v[-1] != "0" else "1")]
        return [v + " x", v + "x", "x", "development" if v != "development" else "diagnostic", "B", "A", "baseline",
                "fluent", "api", "raw-llm", "chat", "completion", "usable", "source_untranslated", "transport",
                "VALID", "news"]
    if v is None:
        return [0.5, 1, "x", True, "a" * 64, ["search"], "0.9.0"]
    if v == []:
        return [["search"], [1]]
    if v == {}:
        return [{"seed": 1}]
    return []


def _in_scope(parts: tuple) -> bool:
    if not parts or parts[0] in ("run_card_hash",):
        return False
    if parts[0] == "results":
        i = parts[1]
        if len(parts) >= 3 and parts[2] in ("raw_predicted", "predicted", "entry_id"):
            return True
        return i in FULL_ENTRIES
    return True


def _mutations(data: dict) -> list[tuple[str, dict]]:
    out = []
    for parts, value in _leaves(data):
        if not _in_scope(parts):
            continue
        cand = vs.first_schema_valid_candidate(data, parts, value, _candidates(value))
        if cand is not vs.NO_EDIT:
            out.append((_jpath(parts), vs.path_copy(data, parts, cand)))  # read-only: shares the rest with _DATA
    # Timestamps: implausible values the generic mutation would not produce.
    now = datetime.now(UTC)
    for label, ts in (("future", (now + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")),
                      ("before-2024", "2023-06-01T12:00:00Z"), ("not-utc", data["timestamp"][:-1] + "+02:00")):
        out.append((f"$.timestamp[{label}]", vs.set_at(data, ("timestamp",), ts)))
    out.append(("$.elapsed_seconds[shorter-than-latency]", vs.set_at(data, ("elapsed_seconds",), 1e-6)))
    return out


try:
    # Scored without FST (profile B) so that each of the ~600 validations spends no time starting lt-proc; the FST
    # path is covered by tests/test_validate_cli.py on the runner's own profile-A card.
    _BASE = vs.real_card_bytes(12, fst=False)
    _DATA = json.loads(_BASE)
    _MUTATIONS = _mutations(_DATA)
    _BUILD_ERROR = None
except Exception as exc:  # collection must not crash: the test below reports it
    _DATA, _MUTATIONS, _BUILD_ERROR = {}, [], exc

_IDS = [m[0] for m in _MUTATIONS]
_BY_ID = dict(_MUTATIONS)


RECOMPUTED = {"metrics", "mechanical", "signatures"}
PRICES = ("$.method.price_in_per_mtok", "$.method.price_out_per_mtok")


def _tokens(data: dict) -> int:
    return data["totals"]["prompt_tokens"] + data["totals"]["completion_tokens"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    assert _BUILD_ERROR is None, f"could not build the real card: {_BUILD_ERROR!r}"
    root = vs.make_repo(tmp_path_factory.mktemp("tamper"), [_BASE])
    return root, V.make_context(root)


@pytest.fixture(scope="module")
def structural(repo):
    """Same repository, recomputation off: for assertions that do not depend on it (quicker)."""
    root, _ = repo
    return V.Context(root=root, corpora_dir=root / "corpora", recompute=False)


def test_base_card_is_valid(repo):
    root, ctx = repo
    report = V.validate_paths(None, ctx)
    assert report.ok, V.render_text(report)
    assert len(report.files) == 1 and all(s in ("pass", "skip") for s in report.files[0].checks.values())
    assert report.files[0].checks["metrics"] == "pass" and report.files[0].checks["mechanical"] == "pass"


def test_mutation_table_is_complete():
    assert _BUILD_ERROR is None, repr(_BUILD_ERROR)
    assert len(_MUTATIONS) > 250
    # every score, every totals field, the hypotheses of every result, every fingerprint component
    paths = set(_IDS)
    for k, v in _DATA["scores"].items():
        if v is not None and not isinstance(v, dict):
            assert f"$.scores.{k}" in paths or any(p.startswith(f"$.scores.{k}[") for p in paths), k
    for i in range(len(_DATA["results"])):
        assert f"$.results[{i}].raw_predicted" in paths and f"$.results[{i}].predicted" in paths
        assert f"$.results[{i}].entry_id" in paths
    for k in _DATA["fingerprint"]["components"]:
        assert any(p.startswith(f"$.fingerprint.components.{k}") for p in paths), k
    for k in ("sha256", "id", "version", "entry_count"):
        assert f"$.dataset.{k}" in paths


def _base(path: str) -> str:
    return re.sub(r"\[(future|before-2024|not-utc|shorter-than-latency)\]$", "", path)


def _failed(report: V.CardReport) -> set[str]:
    return {p.check for p in report.problems}


@pytest.mark.parametrize("path", _IDS)
def test_stale_hash_rejected(structural, path):
    ctx = structural
    raw = vs.dump(_BY_ID[path])
    report = V.validate_bytes(raw, "stale.json", ctx, relpath=None)
    assert "run_card_hash" in _failed(report), V.render_text(V.ValidationReport(
        validator_version="t", files=[report], ok=False))


@pytest.mark.parametrize("path", _IDS)
def test_resealed_rejected_by_owning_check(repo, structural, path):
    _, full = repo
    base = _base(path)
    want = expected_checks(base)
    if base in PRICES and _tokens(_DATA) == 0:
        pytest.skip("price of a run that used no tokens changes no cost (harmless)")
    if want is None:
        assert _declared(base), f"{path}: no check owns this field; classify it in EXPECTED or declare it in the schema"
        pytest.skip("declared field (schema x-binding: only a re-run confirms it)")
    ctx = full if want & RECOMPUTED else structural
    sealed = vs.reseal(_BY_ID[path])
    root = ctx.root
    dest = vs.place(root, vs.dump(sealed))
    try:
        report = V.validate_card(dest, ctx)
    finally:
        dest.unlink()
    failed = _failed(report)
    assert "run_card_hash" not in failed and "file_name" not in failed
    assert failed & want, f"{path}: expected one of {sorted(want)}, got {sorted(failed)}: " + "; ".join(
        str(p) for p in report.problems)


def test_every_unowned_field_is_declared():
    """A mutated path no check owns must be classified declared in the schema (nothing falls between the two)."""
    assert _BUILD_ERROR is None, repr(_BUILD_ERROR)
    unowned = {re.sub(r"\[\d+\]", "[]", p) for p in _IDS if expected_checks(_base(p)) is None}
    assert unowned and unowned <= set(V.DECLARED_FIELDS), sorted(unowned - set(V.DECLARED_FIELDS))
    assert V.UNBOUND_FIELDS == V.DECLARED_FIELDS


def test_chrf_raised_by_point_one_is_caught(repo):
    """The issue's example: a re-sealed card whose chrF++ was raised by 0.1 fails the metrics check, exactly."""
    _, ctx = repo
    data = copy.deepcopy(_DATA)
    data["scores"]["chrf_plus_plus"] += 0.1
    report = V.validate_bytes(vs.dump(vs.reseal(data)), "x.json", ctx)
    (p,) = [p for p in report.problems if p.check == "metrics"]
    assert p.field == "$.scores.chrf_plus_plus"
    assert f"stored {_DATA['scores']['chrf_plus_plus'] + 0.1!r}" in p.message
    assert f"recomputed {_DATA['scores']['chrf_plus_plus']!r}" in p.message


def test_signature_saying_nw0_fails(repo):
    _, ctx = repo
    data = copy.deepcopy(_DATA)
    data["scores"]["signatures"]["chrf"] = data["scores"]["signatures"]["chrf"].replace("nw:2", "nw:0")
    report = V.validate_bytes(vs.dump(vs.reseal(data)), "x.json", ctx)
    msgs = [p.message for p in report.problems if p.check == "signatures"]
    assert any("nw:0" in m for m in msgs), msgs


def test_composite_signature_is_recorded_and_checked(repo):
    """Cards record the composite's signature; the validator requires it to equal the recomputation (harness 0.2.0:
    every card has one, so a card without it fails)."""
    _, ctx = repo
    sig = _DATA["scores"]["signatures"]["composite"]
    assert sig == composite_signature(_DATA["scores"]["composite_profile"], _DATA["scores"]["policy_version"])
    assert sig.startswith(f"composite:{_DATA['scores']['composite_profile']}|weights:chrf_plus_plus=")
    without = copy.deepcopy(_DATA)
    del without["scores"]["signatures"]["composite"]
    report = V.validate_bytes(vs.dump(vs.reseal(without)), "x.json", ctx)
    assert [p.field for p in report.problems if p.check == "signatures"] == ["$.scores.signatures.composite"]
    for wrong in (sig.replace("round:6", "round:5"), sig.replace("composite:B", "composite:A", 1)
                  if sig.startswith("composite:B") else sig.replace("composite:A", "composite:B", 1)):
        data = copy.deepcopy(_DATA)
        data["scores"]["signatures"]["composite"] = wrong
        report = V.validate_bytes(vs.dump(vs.reseal(data)), "x.json", ctx)
        (p,) = [p for p in report.problems if p.check == "signatures"]
        assert p.field == "$.scores.signatures.composite"
