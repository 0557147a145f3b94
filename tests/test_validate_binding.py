"""Issue 15 part 0 — declared versus bound, tried as a careful cheater would.

The classification comes from the schema itself (``x-binding`` in the run-card JSON Schema,
:func:`mtboard.core.schema.binding_paths`). For every field classified *recomputed* or *consistent*, a concrete value is
taken from one of three REAL cards, changed, and the card is re-sealed **with the fingerprint recomputed** by the
project's own functions (``tests/validate_support.refingerprint_and_reseal``) and placed at its canonical path: the
validator must still reject it. The base cards:

* an Apertium card over 12 development entries with ``--runs 2`` (replicate runs, batch latencies, profile B);
* the same kind of card judged by GEMBA-MQM and the rubric through the real judging code against a scripted judge
  server (clean, major + minor, and a failed judgement in turn; tests/validate_support.judged_card_bytes);
* the committed Gemma 3 270M ``--runs 3`` card (a local model: canary/latency gate, a completion prompt, FST, three
  replicates).

The seal and the fingerprint themselves are recomputed by the cheater here, so their own tampering is covered by
tests/test_validate_tamper.py (stale seal, stale fingerprint).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtboard import validate as V
from mtboard.core.schema import RunCard, binding_paths

import validate_support as vs
from test_validate_tamper import _candidates

ROOT = Path(__file__).resolve().parents[1]
GEMMA_RUNS3 = next((ROOT / "submissions" / "mtb-en-es-dev").glob(
    "gemma-3-270m-q4-k-m.gguf__few-shot-completion__*.json"))
BINDINGS = binding_paths()
BOUND = {p for p, b in BINDINGS.items() if b in ("recomputed", "consistent")}
SELF_RECOMPUTED = ("$.run_card_hash", "$.fingerprint.")
"""Recomputed by the cheater in this test by construction."""
NOT_INSTANTIABLE = {
    # checkpoint-judge paths and shapes no base card has; bound by the same code paths as their siblings
    # glossary counts: no committed corpus carries a glossary yet, so no base card has them; recomputed by score_run
    # like fst_accepted_words (tests/test_terminology.py pins the values)
    "$.results[].glossary_hits", "$.results[].glossary_terms",
    "$.replicate_runs[].results[].glossary_hits", "$.replicate_runs[].results[].glossary_terms",
    # morphological counts of a replicate run: no card with replicate runs has a corpus with analyses (only es→en and
    # ca→en do, issue 39 item 6); recomputed by score_run like run 0's (tests/test_morphology.py refuses a tampered one)
    "$.replicate_runs[].results[].morph_matched", "$.replicate_runs[].results[].morph_units",
    # … and of run 0, with the signature naming the machine analyses: no base card's corpus has analyses either;
    # tests/test_morphology.py re-seals the committed ES→EN card with each edited and the validator refuses it
    "$.results[].morph_matched", "$.results[].morph_units", "$.scores.signatures.morphology",
    # a replicate's tool_call_count is omitted when 0 (issue 18 --tools): no base card runs replicates with tools;
    # mtboard.validate.tools checks it with the results' rules (tests/test_pipeline_fst_gate.py)
    "$.replicate_runs[].results[].tool_call_count",
    # a plugin's distribution record (issue 18): no base card comes from a plugin; tests/test_plugins.py re-seals a
    # real plugin card with each field edited and the validator refuses it where the plugin is installed
    "$.method.plugin.distribution", "$.method.plugin.entry_point", "$.method.plugin.files_sha256",
    "$.method.plugin.version",
    # format attempts (issue 39 item 5, --format-attempts): no committed card re-asks, so no base card has them;
    # tests/test_format_attempts.py re-seals a real re-asked card with the count, the kept failed answers and the
    # limit edited, and the validator (mtboard.validate.attempts, the metrics check) refuses each
    *(f"{prefix}.{field}" for prefix in ("$.results[]", "$.replicate_runs[].results[]")
      for field in ("format_attempts", "failed_attempts", "failed_attempts[].error_kind",
                    "failed_attempts[].raw_predicted", "failed_attempts[].rule")),
    "$.method.format_attempts", "$.fingerprint.components.format_attempts",
    # corpus views (issue 40 item 2, --arm/--history): no base card has a view; tests/test_arms.py re-seals real
    # cards with method.arm/history edited and the validator refuses each (entries, texts, results' history_lines)
    "$.results[].history_lines", "$.method.arm", "$.method.history", "$.fingerprint.components.arm",
    "$.fingerprint.components.history",
}


def _schema_path(schema: dict[str, Any], parts: tuple) -> str | None:
    """The classification path of a concrete JSON path (list index → ``[]``, mapping key → ``*``)."""
    defs = schema.get("$defs", {})

    def resolve(node):
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    node, out = schema, "$"
    for p in parts:
        if not any(k in node for k in ("type", "properties", "items", "anyOf", "$ref", "prefixItems")):
            return out  # any JSON value (e.g. a sampling parameter's list): classified with its field
        opts = [resolve(o) for o in node.get("anyOf", [node])]
        nxt = None
        for o in opts:
            if isinstance(p, int) and "prefixItems" in o:
                return out  # a fixed-length tuple (e.g. a CI): classified as a whole
            if isinstance(p, int) and o.get("type") == "array" and isinstance(o.get("items"), dict):
                nxt, step = o["items"], "[]"
            elif isinstance(p, str) and p in o.get("properties", {}):
                nxt, step = o["properties"][p], f".{p}"
            elif isinstance(p, str) and isinstance(o.get("additionalProperties"), dict):
                nxt, step = o["additionalProperties"], ".*"
            if nxt is not None:
                break
        if nxt is None:
            return None
        node, out = resolve(nxt) if "$ref" in nxt else nxt, out + step
    return out


def _leaves(value: Any, parts: tuple = ()):
    yield parts, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, parts + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, parts + (i,))


LITERALS = ["rubric", "checkpoints", "gemba-mqm", "judge_failed", "scored", "not_sent", "critical", "minor", "major",
            "VALID", "MISMATCH"]
"""Values of the schema's closed string sets, so that a Literal field can be changed to another allowed value."""


def _edits(value: Any) -> list[Any]:
    extra = LITERALS if isinstance(value, str) or value is None else []
    return _candidates(value) + extra + ([[]] if isinstance(value, list) and value else []) + (
        [{}] if isinstance(value, dict) and value else [])


def _mutate(data: dict, parts: tuple, value: Any) -> dict | None:
    return vs.first_schema_valid_edit(data, parts, value, _edits(value))


def _bases() -> list[tuple[str, dict]]:
    return [("apertium-runs2", json.loads(vs.real_card_bytes(12, fst=False, runs=2))),
            ("judged", json.loads(vs.judged_card_bytes(12))),
            ("gemma-runs3", json.loads(GEMMA_RUNS3.read_bytes())),
            ("neural", json.loads(vs.neural_card_bytes()))]


def _plan() -> dict[str, tuple[str, tuple]]:
    """schema path → (base card, concrete path): the first concrete value of each bound path, in base order."""
    schema = RunCard.model_json_schema()
    plan: dict[str, tuple[str, tuple]] = {}
    tries: dict[str, int] = {}
    for name, data in _BASES.items():
        for parts, value in _leaves(data):
            if not parts or isinstance(value, (dict, list)) and value and not isinstance(parts[-1], str):
                continue
            sp = _schema_path(schema, parts)
            if sp is None or sp not in BOUND or sp in plan or sp.startswith(SELF_RECOMPUTED):
                continue
            if tries.get(sp, 0) >= 3:  # three instances without a schema-valid change: give up on this path
                continue
            tries[sp] = tries.get(sp, 0) + 1
            if vs.first_schema_valid_candidate(data, parts, value, _edits(value)) is not vs.NO_EDIT:
                plan[sp] = (name, parts)
    return plan


try:
    _BASES = dict(_bases())
    _SCHEMA = RunCard.model_json_schema()
    _PLAN = _plan()
    _ERROR = None
except Exception as exc:  # collection must not crash: the tests below report it
    _BASES, _PLAN, _ERROR = {}, {}, exc


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    assert _ERROR is None, f"could not build the base cards: {_ERROR!r}"
    root = vs.make_repo(tmp_path_factory.mktemp("binding"))
    return root, V.make_context(root, ROOT / "corpora")


def test_classification_is_in_the_schema_and_covers_every_field():
    schema = json.loads((ROOT / "schemas" / "run-card.schema.json").read_text("utf-8"))
    assert schema["properties"]["model_slug"]["x-binding"] == "consistent"
    assert schema["properties"]["timestamp"]["x-binding"] == "declared"
    assert schema["$defs"]["Scores"]["properties"]["chrf_plus_plus"]["x-binding"] == "recomputed"
    assert set(BINDINGS.values()) == {"recomputed", "consistent", "declared"}
    # every leaf of every base card has a classification
    for name, data in _BASES.items():
        for parts, _ in _leaves(data):
            if parts:
                sp = _schema_path(_SCHEMA, parts)
                assert sp is not None, (name, parts)
    assert V.DECLARED_FIELDS == tuple(p for p, b in BINDINGS.items() if b == "declared")
    for declared in ("$.timestamp", "$.method.model", "$.temperature", "$.results[].raw_predicted",
                     "$.results[].latency_s", "$.method.sampling"):
        assert declared in V.DECLARED_FIELDS


def test_every_bound_field_is_exercised():
    assert _ERROR is None, repr(_ERROR)
    missing = sorted(p for p in BOUND if not p.startswith(SELF_RECOMPUTED) and p not in _PLAN
                     and p not in NOT_INSTANTIABLE)
    # items of lists and mappings no base card fills (tools, families, plugin metrics) are bound as a whole by their
    # exercised parent; a nested record (checks, stats, the local gate) by its exercised fields
    missing = [p for p in missing if not any(p.startswith(q + ".") or p.startswith(q + "[") for q in _PLAN)
               and not any(q.startswith(p + ".") or q.startswith(p + "[") for q in _PLAN)]
    assert not missing, missing
    assert len(_PLAN) > 150


def _validate(root: Path, ctx, data: dict) -> set[str]:
    failed = {p.check for p in vs.validate_resealed(root, ctx, data).problems}
    return failed


def test_base_cards_are_valid(repo):
    root, ctx = repo
    for name, data in _BASES.items():
        assert _validate(root, ctx, data) == set(), name


@pytest.mark.parametrize("path", sorted(_PLAN))
def test_resealed_and_refingerprinted_edit_is_rejected(repo, path):
    root, ctx = repo
    name, parts = _PLAN[path]
    data = _BASES[name]
    value = data
    for p in parts:
        value = value[p]
    mutated = _mutate(data, parts, value)
    failed = _validate(root, ctx, mutated)
    assert failed, f"{path} ({BINDINGS[path]}) on {name}: a re-sealed, re-fingerprinted edit was accepted"
