"""Declared methods (issue 18 part 2; spec §3.2, §6.2, §9.6): ``--coaching FILE`` is hashed into
``coaching_data_sha256``, recorded, part of the fingerprint only when present, received by the prompt template, and
makes the method class coached-llm; the validator checks the declared class and the coaching fields; the committed
cards keep their fingerprints and classes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from mtboard.core import canonical
from mtboard.backends import get_backend
from mtboard.score.card import card_fingerprint_components, compute_fingerprint
from mtboard.core.documents import card_json, load_card, seal
from mtboard.core.errors import ConfigError
from mtboard.run.settings import RunSettings
from mtboard.run.runner import prepare
from mtboard.core.schema import MethodClass, RunCard
from mtboard.validate import make_context, validate_bytes

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "corpora" / "mtb-en-es-dev.json"
GLOSSARY = ROOT / "coaching" / "en-es-debian-terms.txt"
COMMITTED = sorted(p for p in (ROOT / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))
COACHED = [p for p in COMMITTED if "coached" in p.name]
GATED = [p for p in COMMITTED if "fst-gated" in p.name]


@pytest.mark.slow  # 4.7 CPU-s, 7 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_committed_cards_keep_fingerprints_and_classes():
    uncoached = [p for p in COMMITTED if p not in COACHED and p not in GATED]
    # the 21 cards before issue 18 and the 11 of the committed sweep (issue 16), less the zero-shot card issue 38's
    # floor rule withdrew (tests/fixtures/withdrawn/), the six ES→EN / CA→EN cards (issue 39), the 13 of the
    # dialogue-history sweep (issue 40 item 2) and the two diagnostic-segment cards (issue 40 item 6)
    assert len(uncoached) == 52
    for p in uncoached:
        card = load_card(p)
        comps = card_fingerprint_components(card)
        view = {k for k in ("arm", "history") if getattr(card.method, k) is not None}  # issue 40: a corpus view
        assert tuple(sorted(comps)) == tuple(sorted({*canonical.FINGERPRINT_COMPONENTS, *view})), p.name
        assert compute_fingerprint(card).hash == card.fingerprint.hash, p.name
        assert card.coaching_data_sha256 is None and card.tools_enabled == [] and card.method.fst_retries is None
        assert all(r.tool_call_count == 0 for r in card.results), p.name
        assert card.method_class == get_backend(card.method.backend).method_class_for(coaching=False), p.name
        # the new optional fields stay out of these cards' bytes: re-serialising keeps their seal
        assert "fst_retries" not in card_json(card)["method"], p.name
        assert seal(card).run_card_hash == card.run_card_hash, p.name
    for p in COACHED:  # coaching adds its own component, never fst_retries
        assert set(card_fingerprint_components(load_card(p))) == set(canonical.FINGERPRINT_COMPONENTS) | {
            "coaching_data_sha256"}, p.name


def test_method_class_follows_what_the_method_uses():
    assert get_backend("gguf").method_class_for(coaching=True) == MethodClass.coached_llm
    assert get_backend("openai").method_class_for(coaching=True) == MethodClass.coached_llm
    assert get_backend("openai").method_class_for() == MethodClass.raw_llm
    assert get_backend("apertium").method_class_for() == MethodClass.pipeline
    # tools make a pipeline (issue 18 `--tools`), also with coaching data
    assert get_backend("gguf").method_class_for(tools=True) == MethodClass.pipeline
    assert get_backend("openai").method_class_for(coaching=True, tools=True) == MethodClass.pipeline


def _settings(**kw) -> RunSettings:
    return RunSettings(corpus_path=ES, method="openai:fake-model", base_url="http://127.0.0.1:9/v1", limit=3, **kw)


def test_prepare_with_coaching(tmp_path):
    plain = prepare(_settings(prompt="coached-few-shot-completion"))
    coached = prepare(_settings(prompt="coached-few-shot-completion", coaching=GLOSSARY))
    want = hashlib.sha256(GLOSSARY.read_bytes()).hexdigest()
    s = coached.spec
    assert (s.coaching_sha256, s.coaching_file, s.method_class) == (want, GLOSSARY.name, MethodClass.coached_llm)
    assert s.coaching_text == GLOSSARY.read_text(encoding="utf-8")
    assert plain.spec.method_class == MethodClass.raw_llm and plain.spec.coaching_sha256 is None
    # the template receives the coaching data: glossary pairs (not its # comment lines) open the prompt
    assert s.system_prompt.startswith("English: package\nSpanish: paquete\n\nEnglish: Debian package\n")
    assert "#" not in s.system_prompt and not plain.spec.system_prompt.startswith("English: package")
    assert coached.spec.identity()["coaching_data_sha256"] == want
    assert "coaching_data_sha256" not in plain.spec.identity()
    assert coached.spec.work_dir_name() == plain.spec.work_dir_name()  # the identity, not the folder, differs


def test_coaching_refused_where_it_cannot_reach_the_model(tmp_path):
    with pytest.raises(ConfigError, match="does not use coaching data"):
        prepare(_settings(prompt="few-shot-completion", coaching=GLOSSARY))
    with pytest.raises(ConfigError, match="cannot receive coaching data"):
        prepare(RunSettings(corpus_path=ES, method="apertium:eng-spa", coaching=GLOSSARY, limit=3))
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(Exception, match="empty"):
        prepare(_settings(prompt="coached-few-shot-completion", coaching=empty))


@pytest.fixture(scope="module")
def coached_card() -> tuple[Path, RunCard]:
    if not COACHED:
        pytest.fail("the coached Gemma card is committed under submissions/mtb-en-es-dev/")
    return COACHED[0], load_card(COACHED[0])


def test_coached_gemma_card_is_its_own_experiment(coached_card):
    path, card = coached_card
    assert card.method_class == MethodClass.coached_llm and card.method.backend == "gguf"
    assert card.coaching_data_sha256 == hashlib.sha256(GLOSSARY.read_bytes()).hexdigest()
    assert card.method_config.coachingFile == GLOSSARY.name
    assert card.fingerprint.components["coaching_data_sha256"] == card.coaching_data_sha256
    # without the coaching component the hash differs: coaching data is part of the experiment's identity
    rest = {k: v for k, v in card.fingerprint.components.items() if k != "coaching_data_sha256"}
    assert canonical.fingerprint_hash(rest) != card.fingerprint.hash
    others = {load_card(p).fingerprint.hash for p in COMMITTED if p != path}
    assert card.fingerprint.hash not in others


def _validate(card: RunCard, path: Path) -> list[str]:
    ctx = make_context(ROOT, ROOT / "corpora")
    raw = json.dumps(card_json(card), ensure_ascii=False).encode("utf-8")
    rel = path.relative_to(ROOT).as_posix()
    return [f"{p.check}: {p.field}: {p.message}" for p in validate_bytes(raw, rel, ctx, relpath=rel).problems]


def _resealed(card: RunCard, edit) -> RunCard:
    data = card_json(card)
    edit(data)
    data["run_card_hash"] = ""
    c = RunCard.model_validate_json(json.dumps(data))
    return seal(c.model_copy(update={"fingerprint": compute_fingerprint(c)}))


@pytest.mark.slow  # 1.9 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_validator_checks_the_declared_class_and_coaching(coached_card):
    path, card = coached_card
    assert _validate(card, path) == []
    wrong_class = _resealed(card, lambda d: d.update(method_class="raw-llm"))
    assert any("method: $.method_class" in p and "coached-llm" in p for p in _validate(wrong_class, path))

    def other_text(d):
        d["method_config"]["coachingPrompt"] += "English: tool\nSpanish: utensilio\n"
    assert any("coaching_data_sha256 is not the SHA-256" in p for p in _validate(_resealed(card, other_text), path))

    def dropped(d):
        d["coaching_data_sha256"] = None
        d["method_config"]["coachingFile"] = d["method_config"]["coachingPrompt"] = None
    problems = _validate(_resealed(card, dropped), path)
    assert any("$.method_class" in p for p in problems)  # coached-llm without coaching data
    assert any("system_prompt_used is not what prompt" in p for p in problems)  # the glossary was in the prompt
