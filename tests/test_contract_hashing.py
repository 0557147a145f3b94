"""Issue 2 acceptance: canonical JSON, fingerprint v3 and run_card_hash known answers, mutation sensitivity.

The fixture tests/fixtures/card_minimal.json is a small hand-written card (toy data, not evaluation data); its
expected hashes are computed here independently with hashlib over a hand-written canonical string.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from mtboard.core import canonical
from mtboard.score.card import card_fingerprint_components, compute_fingerprint
from mtboard.inputs.runspec import endpoint_host_sha256
from mtboard.core.documents import card_bytes, card_json, loads_card

FIXTURE = Path(__file__).parent / "fixtures" / "card_minimal.json"


def _jcs_independent(value):
    """A tiny independent JCS for this fixture's value set: whole floats print as integers (ECMAScript), all other
    floats here have identical Python/ECMAScript shortest forms; keys sorted; no whitespace."""

    def norm(v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    return json.dumps(norm(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@pytest.fixture()
def card_dict():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_rfc8785_number_forms():
    # RFC 8785 Appendix B examples (ECMAScript shortest round-trip forms).
    assert canonical.canonical_bytes([1e21, 1e-7, 0.000001, 1.0, -0.0, 5e-324, 333333333.3333333]) == (
        b"[1e+21,1e-7,0.000001,1,0,5e-324,333333333.3333333]"
    )
    assert canonical.canonical_bytes({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_run_card_hash_known_answer(card_dict):
    blank = copy.deepcopy(card_dict)
    blank["run_card_hash"] = ""
    expected = hashlib.sha256(_jcs_independent(blank)).hexdigest()
    assert card_dict["run_card_hash"] == expected
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    assert canonical.run_card_hash(card_json(card)) == expected


def test_fingerprint_known_answer(card_dict):
    ids_sha = hashlib.sha256(b"[7]").hexdigest()
    empty_sha = hashlib.sha256(b"").hexdigest()
    handwritten = (
        '{"components":{"api_provider":null,"batch_size":1,"condition":"baseline",'
        '"dataset_sha256":"' + "a" * 64 + '","endpoint_host_sha256":null,'
        '"engine_version":"apertium 3.8.3; apertium-eng-spa 0.8.0","entry_ids_sha256":"' + ids_sha + '",'
        '"harness_version":"0.1.0","judge_model":null,"judge_prompt_sha256":null,"max_tokens":null,'
        '"model_file_sha256":null,"model_revision":null,"model_slug":"apertium/eng-spa",'
        '"prompt_template_sha256":null,"system_prompt_sha256":"' + empty_sha + '","temperature":null,'
        '"text_normalisation":"2","tools_enabled":[]},"version":3}'
    )
    expected = hashlib.sha256(handwritten.encode("utf-8")).hexdigest()
    assert card_dict["fingerprint"]["hash"] == expected
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    assert compute_fingerprint(card).hash == expected


def test_round_trip_byte_identical():
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    once = card_bytes(card)
    again = card_bytes(loads_card(once, "again"))
    assert once == again
    assert once.endswith(b"\n") and once.count(b"\n") == 1


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    else:
        yield path, value


def _mutate(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.125
    if isinstance(value, str):
        return value + "x"
    return "x"  # None


def test_every_field_change_changes_run_card_hash(card_dict):
    base = canonical.run_card_hash(card_dict)
    seen = 0
    for path, value in _leaves(card_dict):
        if path == ("run_card_hash",):
            continue
        mutated = copy.deepcopy(card_dict)
        node = mutated
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = _mutate(value)
        assert canonical.run_card_hash(mutated) != base, path
        seen += 1
    assert seen > 60  # the fixture has every card field


def test_every_fingerprint_component_matters(card_dict):
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    comps = card_fingerprint_components(card)
    assert set(comps) == set(canonical.FINGERPRINT_COMPONENTS) and len(comps) == 19
    base = canonical.fingerprint_hash(comps)
    for key, value in comps.items():
        changed = dict(comps)
        changed[key] = ["x"] if isinstance(value, list) else _mutate(value)
        assert canonical.fingerprint_hash(changed) != base, key


def test_endpoint_host_alone_changes_fingerprint():
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    a = card.model_copy(update={"method": card.method.model_copy(
        update={"endpoint_host_sha256": endpoint_host_sha256("https://api.openai.com/v1")})})
    b = card.model_copy(update={"method": card.method.model_copy(
        update={"endpoint_host_sha256": endpoint_host_sha256("https://openrouter.ai/api/v1")})})
    assert compute_fingerprint(a).hash != compute_fingerprint(b).hash
    # the host is hashed, never stored raw
    assert endpoint_host_sha256("https://user:tok@API.OpenAI.com:443/v1?key=1") == hashlib.sha256(
        b"api.openai.com").hexdigest()


def test_limit_subset_has_own_fingerprint():
    card = loads_card(FIXTURE.read_bytes(), "fixture")
    more = card.results + [card.results[0].model_copy(update={"entry_id": 8})]
    bigger = card.model_copy(update={"results": more})
    assert compute_fingerprint(bigger).hash != compute_fingerprint(card).hash
