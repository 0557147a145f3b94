"""Judge specs, the self-judge family table, prompt files, the example benchmark and the checkpoint arithmetic.

Expected values are written by hand.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from mtboard.core.errors import ConfigError, InputError
from mtboard.judges import REGISTRY
from mtboard.judges.base import check_family, load_judge_prompt, model_families, parse_judge_spec
from mtboard.judges.checkpoints import (foreign_script_blocks, load_bench, markup_tokens, mean_and_spread,
                                        run_score)
from mtboard.judges.rubric import FLAGS
from mtboard.judges.store import cache_key, input_sha256

EXAMPLE = Path(__file__).parent / "fixtures" / "checkpoints-example"


@pytest.mark.parametrize("text,kind,model,effort", [
    ("gemba-mqm=openai:gpt-4.1", "gemba-mqm", "gpt-4.1", None),
    ("rubric=openai:qwen3:8b:medium", "rubric", "qwen3:8b", "medium"),
    ("checkpoints=openai:anthropic/claude-opus-4:high", "checkpoints", "anthropic/claude-opus-4", "high"),
    ("gemba-mqm=openai:gemma3:270m", "gemba-mqm", "gemma3:270m", None),
])
def test_parse_judge_spec(text: str, kind: str, model: str, effort: str | None) -> None:
    s = parse_judge_spec(text)
    assert (s.kind, s.backend, s.model, s.effort) == (kind, "openai", model, effort)


@pytest.mark.parametrize("text,needle", [
    ("openai:gpt-4.1", "no KIND="),
    ("gemba=openai:gpt-4.1", "did you mean 'gemba-mqm'"),
    ("rubric=opnai:gpt-4.1", "did you mean 'openai'"),
    ("rubric=openai:", "names no model"),
])
def test_parse_judge_spec_errors(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_judge_spec(text)
    assert needle in str(exc.value)


@pytest.mark.parametrize("model,families", [
    ("gpt-4.1", {"openai"}), ("openai/gpt-4o-mini", {"openai"}), ("o3-mini", {"openai"}), ("gpt-oss-20b", {"openai"}),
    ("claude-opus-4-1", {"anthropic"}), ("anthropic/claude-3.5-sonnet", {"anthropic"}),
    ("gemini-2.5-flash", {"google"}), ("google/gemma-3-27b-it", {"google"}), ("gemma3:270m", {"google"}),
    ("/tmp/x/gemma-3-270m-q4_k_m.gguf", {"google"}),
    ("qwen3:8b", {"qwen"}), ("Qwen/Qwen2.5-7B-Instruct", {"qwen"}), ("deepseek-v3.1", {"deepseek"}),
    ("glm-4.6", {"glm"}), ("moonshotai/kimi-k2", {"kimi"}), ("meta-llama/Llama-3.1-8B", {"llama"}),
    ("mistral-small-3.2", {"mistral"}), ("mixtral-8x7b", {"mistral"}),
    ("apertium/eng-spa", set()), ("eng-spa", set()), ("philosophy-bot", set()), ("omni-translator", set()),
])
def test_model_families(model: str, families: set[str]) -> None:
    assert model_families(model) == families


def test_family_check_refuses_self_judge_unless_allowed() -> None:
    with pytest.raises(ConfigError) as exc:
        check_family("google/gemini-2.5-flash", ["gemma3:270m", None], allow_self_judge=False)
    assert "google" in str(exc.value) and "--allow-self-judge" in str(exc.value)
    fc = check_family("google/gemini-2.5-flash", ["gemma3:270m"], allow_self_judge=True)
    assert fc.status == "overridden (--allow-self-judge)"
    fc = check_family("gpt-4.1", ["apertium/eng-spa", "eng-spa"], allow_self_judge=False)
    assert (fc.status, fc.judge_families, fc.translator_families) == ("passed", ("openai",), ())


def test_an_unknown_family_is_not_a_different_one() -> None:
    """Issue 22: `openai:local` judging `openai:local` passed with empty families. For an LLM translator an unknown
    family on either side is refused unless the judge's family is declared or --allow-self-judge is given; for an
    engine (no family at all) nothing changes."""
    with pytest.raises(ConfigError) as exc:
        check_family("local", ["local", "my-model", None], allow_self_judge=False, translator_is_llm=True)
    msg = str(exc.value)
    assert "cannot tell whether judge 'local' is from the translator's family" in msg
    assert "the translator's family is unknown (its names: local, my-model)" in msg
    assert "unknown family is not a different one" in msg and "--allow-self-judge" in msg
    with pytest.raises(ConfigError) as exc:  # the translator is known, the judge is not: --judge-family helps
        check_family("local", ["gemma-3-270m-q4_k_m.gguf"], allow_self_judge=False, translator_is_llm=True,
                     judge_reported=["local", None])
    assert "the judge's family is unknown ('local'; its server reported local)" in str(exc.value)
    assert "--judge-family FAMILY" in str(exc.value)
    fc = check_family("local", ["gemma-3-270m-q4_k_m.gguf"], allow_self_judge=False, translator_is_llm=True,
                      judge_family="qwen")
    assert (fc.status, fc.judge_families, fc.translator_families) == (
        "passed (judge family declared: qwen)", ("qwen",), ("google",))
    with pytest.raises(ConfigError, match="same family \\(google\\)"):  # a declared family is checked too
        check_family("local", ["gemma-3-270m-q4_k_m.gguf"], allow_self_judge=False, translator_is_llm=True,
                     judge_family="google")
    fc = check_family("local", ["local"], allow_self_judge=True, translator_is_llm=True)
    assert fc.status == "overridden (--allow-self-judge; family unknown)"
    fc = check_family("local", ["apertium/eng-spa"], allow_self_judge=False, translator_is_llm=False)
    assert fc.status == "passed"  # an engine has no family
    with pytest.raises(ConfigError, match="unknown model family 'gwen'; did you mean 'qwen'"):
        check_family("local", ["x"], allow_self_judge=False, judge_family="gwen")
    # what the judge's server reports decides: a listed gemma file makes `local` a google model
    with pytest.raises(ConfigError, match="same family \\(google\\)"):
        check_family("local", ["gemma-3-270m-q4_k_m.gguf"], allow_self_judge=False, translator_is_llm=True,
                     judge_reported=["/models/gemma-3-1b-it-Q4_K_M.gguf", "gemma-3-1b-it-Q4_K_M.gguf"])


def test_every_registered_judge_has_a_prompt_file() -> None:
    assert sorted(REGISTRY) == ["checkpoints", "gemba-mqm", "rubric"]
    for kind, cls in REGISTRY.items():
        p = load_judge_prompt(cls.prompt_name)
        assert p.meta.kind == kind
        assert len(p.sha256) == 64
        assert "{{" not in p.retry("empty answer") and "empty answer" in p.retry("empty answer")


def test_gemba_prompt_shows_context_and_never_the_model_name() -> None:
    p = load_judge_prompt("gemba-mqm")
    msgs = p.render(source_lang="English", target_lang="Spanish", history=["Where is the station?"],
                    source="Is it far?", translation="¿Está lejos?")
    user = msgs[-1]["content"]
    # every text is a JSON string on a line of its own (issue 24: data the text cannot break out of)
    assert '\n"Where is the station?"\n' in user and '\n"Is it far?"\n' in user and user.endswith('\n"¿Está lejos?"')
    assert "contextBehavior: used_correctly" in user
    no_ctx = p.render(source_lang="English", target_lang="Spanish", history=[], source="Hi", translation="Hola")
    assert "Previous turns" not in no_ctx[-1]["content"]
    assert "always use this when no previous turns are given" in no_ctx[-1]["content"]
    rub = load_judge_prompt("rubric").render(source_lang="Japanese", target_lang="English", history=[],
                                             source="a", reference="b", translation="c", flags=FLAGS)
    assert "one valid reading, not the answer" in rub[-1]["content"]


def test_cache_key_depends_on_model_prompt_input_and_replicate() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
    k = cache_key("openai:m@h", "a" * 64, input_sha256(body, 0))
    assert k == cache_key("openai:m@h", "a" * 64, input_sha256(dict(body), 0))
    assert k != cache_key("openai:m2@h", "a" * 64, input_sha256(body, 0))
    assert k != cache_key("openai:m@h", "b" * 64, input_sha256(body, 0))
    assert k != cache_key("openai:m@h", "a" * 64, input_sha256({**body, "max_tokens": 6}, 0))
    assert k != cache_key("openai:m@h", "a" * 64, input_sha256(body, 1))


def test_example_bench_loads() -> None:
    b = load_bench(EXAMPLE)
    assert [p.id for p in b.key.points] == ["A01", "A02", "B01", "B02", "C01", "C02", "D01", "D02"]
    assert [e.id for e in b.corpus.entries] == [1, 2, 3, 4, 5]
    assert b.penalties["markup"] == 1.0


def test_bench_key_may_be_gzipped(tmp_path: Path) -> None:
    d = tmp_path / "bench"
    shutil.copytree(EXAMPLE, d)
    raw = (d / "key.json").read_bytes()
    (d / "key.json.gz").write_bytes(gzip.compress(raw))
    (d / "key.json").unlink()
    m = json.loads((d / "bench.json").read_text())
    m["key"] = "key.json.gz"
    (d / "bench.json").write_text(json.dumps(m))
    b = load_bench(d)
    assert len(b.key.points) == 8
    assert b"A01" not in (d / "key.json.gz").read_bytes()


@pytest.mark.parametrize("mutate,needle", [
    (lambda m, k: m.update(key="../key.json"), "outside"),
    (lambda m, k: m.update(penalties={"typos": 1}), "unknown penalty kinds"),
    (lambda m, k: k["points"].append(dict(k["points"][0])), "duplicated"),
    (lambda m, k: k["points"][0].update(paragraphs=[9]), "not in the corpus"),
])
def test_bench_errors(tmp_path: Path, mutate, needle: str) -> None:
    d = tmp_path / "bench"
    shutil.copytree(EXAMPLE, d)
    m = json.loads((d / "bench.json").read_text())
    k = json.loads((d / "key.json").read_text())
    mutate(m, k)
    (d / "bench.json").write_text(json.dumps(m))
    (d / "key.json").write_text(json.dumps(k))
    with pytest.raises(InputError) as exc:
        load_bench(d)
    assert needle in str(exc.value)


def test_markup_and_foreign_script() -> None:
    assert markup_tokens('Click <b>Save</b> or *Cancel* for {name}, %s') == {
        "<b>": 1, "</b>": 1, "*": 2, "{name}": 1, "%s": 1}
    assert markup_tokens("pay *a cent*") == markup_tokens("ни *цента*")
    assert markup_tokens("pay *a cent*") != markup_tokens("ни цента")
    assert foreign_script_blocks("решила 不 платить 他 说", ["CYRILLIC"]) == 2
    assert foreign_script_blocks("дом Хартли (Hartley)", ["CYRILLIC"]) == 0
    assert foreign_script_blocks("дом Хартли", []) == 1


def test_checkpoint_arithmetic() -> None:
    assert run_score(8, 7, 3.0) == 50.0
    assert run_score(8, 2, 5.0) == 0.0  # clamped
    assert run_score(100, 90, 0.0) == 90.0
    mean, spread = mean_and_spread([50.0, 50.0, 37.5])
    assert mean == pytest.approx(45.8333333, abs=1e-6)
    assert spread == pytest.approx(7.2168784, abs=1e-6)
    assert mean_and_spread([80.0]) == (80.0, None)


def test_family_table_in_docs_matches_code() -> None:
    from mtboard.judges.base import FAMILIES

    text = (Path(__file__).resolve().parents[1] / "docs" / "judges.md").read_text()
    block = text.split("<!-- families:start -->")[1].split("<!-- families:end -->")[0]
    rows = [line.strip("| ").split(" | ") for line in block.strip().splitlines()[2:]]
    assert {fam: tuple(p.strip() for p in prefixes.split(",")) for fam, prefixes in rows} == FAMILIES


def test_preflight_checks_everything_before_translating(monkeypatch: pytest.MonkeyPatch) -> None:
    from mtboard.judges import preflight

    monkeypatch.delenv("JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="no judge endpoint"):
        preflight(["gemba-mqm=openai:gpt-4.1"], translator_models=["apertium/eng-spa"], allow_self_judge=False)
    monkeypatch.setenv("JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    specs = preflight(["gemba-mqm=openai:gpt-4.1", "rubric=openai:claude-sonnet-4:low"],
                      translator_models=["apertium/eng-spa"], allow_self_judge=False)
    assert [(s.kind, s.model, s.effort) for s in specs] == [("gemba-mqm", "gpt-4.1", None),
                                                            ("rubric", "claude-sonnet-4", "low")]
    with pytest.raises(ConfigError, match="given twice"):
        preflight(["rubric=openai:a", "rubric=openai:b"], translator_models=[], allow_self_judge=False)
    with pytest.raises(ConfigError, match="same family"):
        preflight(["rubric=openai:qwen3:32b"], translator_models=["qwen3:8b"], allow_self_judge=False)
    with pytest.raises(ConfigError, match="--bench"):
        preflight(["checkpoints=openai:gpt-4.1"], translator_models=[], allow_self_judge=False)
    assert preflight(["checkpoints=openai:gpt-4.1"], translator_models=[], allow_self_judge=False, bench=EXAMPLE)


def test_a_declared_translator_family_is_checked_like_a_found_one() -> None:
    # F4: --translator-family declares the translator's family (--judge-family the judge's), recorded in the status
    fc = check_family("gpt-4.1", ["local"], allow_self_judge=False, translator_is_llm=True, translator_family="qwen")
    assert (fc.status, fc.judge_families, fc.translator_families) == (
        "passed (translator family declared: qwen)", ("openai",), ("qwen",))
    with pytest.raises(ConfigError, match="same family \\(openai\\)"):
        check_family("gpt-4.1", ["local"], allow_self_judge=False, translator_is_llm=True, translator_family="openai")
    with pytest.raises(ConfigError) as exc:
        check_family("gpt-4.1", ["local"], allow_self_judge=False, translator_family="gwen")
    assert "unknown model family 'gwen'; did you mean 'qwen'" in str(exc.value) and "--translator-family" in str(
        exc.value)
    with pytest.raises(ConfigError) as exc:  # only the translator is unknown: that fix, and the override
        check_family("gpt-4.1", ["local"], allow_self_judge=False, translator_is_llm=True)
    assert "fix: pass --translator-family FAMILY naming the translator's family (one of " in str(exc.value)
    assert "--judge-family" not in str(exc.value) and "or --allow-self-judge" in str(exc.value)
