"""The frozen RunSpec (issue 19): one object from which the work-directory identity, the card's method record and
the fingerprint derive — for a live run (:func:`mtboard.run.runner.prepare`) and for a published card
(:meth:`RunSpec.from_card`) alike — and the backends' rerun hooks that ``mtboard verify`` calls.

Cards are the committed submissions and fresh runs against a scripted loopback server (tests/judges_support.py);
expected values are written by hand.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from judges_support import ScriptedServer
from mtboard.core import canonical
from mtboard.run import runner
from mtboard.backends.base import Rerun, get_backend
from mtboard.score.card import card_fingerprint_components
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError
from mtboard.inputs.runspec import RunSpec, facts_from_card, fingerprint_components, split_method
from mtboard.validate import VERIFICATION_SUFFIX

REPO = Path(__file__).resolve().parent.parent
ES = REPO / "corpora" / "mtb-en-es-dev.json"
COMMITTED = sorted(p for p in (REPO / "submissions").glob("*/*.json") if not p.name.endswith(VERIFICATION_SUFFIX))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name + "/" + p.name[:40])
def test_committed_cards_round_trip_through_the_spec(path):
    card = load_card(path)
    spec, facts = RunSpec.from_card(card), facts_from_card(card)
    # the method block and the fingerprint come back exactly from (spec, facts)
    assert spec.method_record(facts, price_in=card.method.price_in_per_mtok,
                              price_out=card.method.price_out_per_mtok) == card.method
    comps = fingerprint_components(spec, facts, entry_ids=[r.entry_id for r in card.results], judges=card.judges,
                                   harness_version=card.harness_version)
    assert comps == card.fingerprint.components == card_fingerprint_components(card)
    assert canonical.fingerprint_hash(comps) == card.fingerprint.hash
    assert spec.model_slug(facts) == card.model_slug and spec.system_prompt_sha256 == card.system_prompt_sha256


def test_split_method():
    assert split_method("openai:qwen3:8b:medium") == ("openai", "qwen3:8b", "medium")
    assert split_method("openai:medium") == ("openai", "medium", None)  # a lone word is the model
    assert split_method("echo:") == ("echo", "", None)
    assert split_method("gguf:/models/a:b.gguf") == ("gguf", "/models/a:b.gguf", None)


def _run(tmp_path: Path, url: str, *extra: str, limit: int = 3):
    settings = runner.RunSettings(corpus_path=ES, method="openai:scripted-7b:low", base_url=url, limit=limit,
                                  work_dir=tmp_path / "w", prompt="translate-chat", temperature=0.2, max_tokens=64,
                                  backend_extra=list(extra))  # KEY=VALUE strings, as --backend-opt gives them
    plan = runner.prepare(settings)
    translated = asyncio.run(runner.translate_all(plan))
    card, source = runner.build_card(translated)
    return plan, card, source


def test_a_live_spec_and_the_spec_read_back_from_its_card_agree(tmp_path):
    with ScriptedServer(lambda body: "La casa.") as server:
        plan, card, price_source = _run(tmp_path, server.url)
    spec, back = plan.spec, RunSpec.from_card(card)
    assert back.identity() == spec.identity()  # what a resume compares
    assert back.method == spec.method and back.dataset == spec.dataset
    assert (back.prompt_name, back.prompt_format, back.temperature, back.max_tokens, back.batch_size) == (
        "translate-chat", "chat", 0.2, 64, 1)
    ident = spec.identity()
    assert ident["endpoint_host_sha256"] == canonical.sha256_hex("127.0.0.1") == card.method.endpoint_host_sha256
    assert ident["method"] == "openai:scripted-7b:low" and "backend_options" not in ident
    assert card.method.sampling == {"temperature": 0.2, "reasoning_effort": "low"}
    assert card.model_slug == "scripted-7b:low" and card.model_id == "scripted"
    assert price_source == "unknown (pass --price-in/--price-out)" and card.totals.total_cost_usd is None
    assert spec.work_dir_name() == "openai_scripted-7b_low-translate-chat-development-limit3"


def test_the_spec_is_frozen_and_backend_options_enter_the_identity(tmp_path):
    with ScriptedServer(lambda body: "La casa.") as server:
        plan, card, _ = _run(tmp_path, server.url, "deadline_s=30", "backoff_base_s=0.01", limit=1)
    with pytest.raises(ValidationError, match="frozen"):
        plan.spec.condition = "other"  # type: ignore[misc]
    assert plan.spec.backend_options == (("backoff_base_s", 0.01), ("deadline_s", 30.0))
    assert plan.identity["backend_options"] == {"backoff_base_s": 0.01, "deadline_s": 30.0}
    assert plan.options.deadline_s == 30.0 and plan.options.backoff_max_s is None  # type: ignore[attr-defined]


def test_rerun_hooks():
    card = load_card(next(p for p in COMMITTED if p.name.startswith("gemma-3-270m-q4-k-m.gguf__few-shot")))
    spec, facts = RunSpec.from_card(card), facts_from_card(card)
    gguf = get_backend("gguf")
    with pytest.raises(ConfigError, match=r"local GGUF file \(gemma-3-270m-q4_k_m.gguf\); it is not downloadable"):
        gguf.rerun(spec, facts)
    how = gguf.rerun(spec, facts, model_path=Path("/models/g.gguf"))
    assert how == Rerun(method="gguf:/models/g.gguf", backend_options={
        "model_sha256": card.method.model_file_sha256, "n_ctx": 2048})  # the canary passed: enforced again
    failed = facts.model_copy(update={"local": facts.local.model_copy(update={"canary_passed": False})})
    assert gguf.rerun(spec, failed, model_path=Path("/m.gguf")).backend_options["canary"] == "record"
    hub = spec.model_copy(update={"method": spec.method.with_model(f"a/b@{'0' * 40}/f.gguf")})
    assert gguf.rerun(hub, facts).method == f"gguf:a/b@{'0' * 40}/f.gguf"  # downloadable: no path needed
    apertium = load_card(next(p for p in COMMITTED if p.name.startswith("apertium-eng-spa")))
    assert get_backend("apertium").rerun(RunSpec.from_card(apertium), facts_from_card(apertium)) == Rerun(
        method="apertium:eng-spa", backend_options={})


def test_backend_facts_file_is_what_the_card_shows(tmp_path):
    with ScriptedServer(lambda body: "La casa.") as server:
        plan, card, _ = _run(tmp_path, server.url, limit=1)
    stored = json.loads((plan.work_dir / "backend.json").read_text())
    assert stored["api_provider"] == card.method.api_provider == "openai-compatible"
    assert stored["model_id"] == card.model_id and stored["sampling"] == card.method.sampling
    assert "127.0.0.1" not in json.dumps(stored) and server.url not in json.dumps(stored)
