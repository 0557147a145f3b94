"""Runner building blocks: method specs, prompt templates, the price table, the work directory, request bodies,
the run command's errors. Expected values are written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtboard.backends.base import TranslateRequest, parse_method
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.inputs.prompts import available_prompts, load_prompt
from mtboard.inputs.prices import load_prices
from mtboard.run.workdir import WorkDir, _repair_tail
from mtboard.inputs.runspec import BackendContext
from mtboard.core.schema import TranslationRecord

import cli_support


@pytest.mark.parametrize("text,backend,model,effort", [
    ("openai:qwen3:8b:medium", "openai", "qwen3:8b", "medium"),
    ("openai:qwen3:8b", "openai", "qwen3:8b", None),       # an Ollama tag is part of the model
    ("openai:gpt-5:high", "openai", "gpt-5", "high"),
    ("openai:gpt-5:xhigh", "openai", "gpt-5", "xhigh"),
    ("openai:o4-mini:none", "openai", "o4-mini", "none"),
    ("openai:medium", "openai", "medium", None),            # a lone word is the model, not an effort
    ("apertium:eng-spa", "apertium", "eng-spa", None),
    ("echo:", "echo", "", None),
    ("gguf:/models/x.gguf", "gguf", "/models/x.gguf", None),
])
def test_parse_method(text, backend, model, effort):
    spec = parse_method(text)
    assert (spec.backend, spec.model, spec.effort, spec.text) == (backend, model, effort, text)


def test_unknown_backend_did_you_mean():
    with pytest.raises(ConfigError) as exc:
        parse_method("opnai:gpt-4o")
    msg = str(exc.value)
    assert "did you mean 'openai'?" in msg and "apertium, echo, empty, gguf, openai" in msg
    with pytest.raises(ConfigError, match="names no model"):
        parse_method("openai:")


def test_shipped_prompts():
    assert {"translate-chat", "few-shot-completion", "source-only", "context-chat"} <= set(available_prompts())
    chat = load_prompt("translate-chat")
    r = chat.render("Hello.", "en", "fr")
    assert r.messages[0]["role"] == "system" and "from English into French" in r.messages[0]["content"]
    assert r.messages[1] == {"role": "user", "content": "Hello."} and r.prompt is None
    assert chat.system_prompt("en", "fr") == r.messages[0]["content"]
    # dedicated translators: the source alone, no instruction in any language
    src = load_prompt("source-only")
    assert src.render("Hello.", "en", "ja").messages == [{"role": "user", "content": "Hello."}]
    assert src.system_prompt("en", "ja") == ""
    # context: prior lines shown as context in the user turn, never in the system prompt
    ctx = load_prompt("context-chat")
    r = ctx.render("Yes.", "en", "es", history=["Are you coming?", "Now?"])
    assert r.messages[1]["content"] == ("Earlier lines (context only, do not translate):\nAre you coming?\nNow?\n\n"
                                        "Line to translate:\nYes.")
    assert "Are you coming?" not in ctx.system_prompt("en", "es")
    assert ctx.render("Yes.", "en", "es").messages[1]["content"] == "Line to translate:\nYes."


def test_few_shot_completion_prompt():
    p = load_prompt("few-shot-completion")
    assert p.format == "completion" and p.meta.family == "base-model"
    r = p.render("Good night.", "en", "es")
    assert r.messages is None and r.stop == ["\n"]
    assert r.prompt.endswith("\n\nEnglish: Good night.\nSpanish:")
    assert r.prompt.startswith("English: Where is the train station?\nSpanish: ¿Dónde está la estación de tren?\n\n")
    assert p.system_prompt("en", "es") + "\n\nEnglish: Good night.\nSpanish:" == r.prompt
    # every target language of the shipped corpora has examples; pt-BR picks its own, es-MX falls back to es
    for tgt in ("es", "ca", "fr", "de", "ja", "pt-BR", "es-MX"):
        p.render("x", "en", tgt)
    assert "trem" in p.render("x", "en", "pt-BR").prompt and "comboios" in p.render("x", "en", "pt").prompt
    with pytest.raises(ConfigError, match="no examples for target language 'sw'"):
        p.render("x", "en", "sw")
    with pytest.raises(ConfigError, match="takes source languages"):
        p.render("x", "ja", "en")


def test_template_validation(tmp_path):
    with use_runtime(Runtime(prompts_dir=tmp_path)):  # what the CLI sets from MTBOARD_PROMPTS_DIR
        (tmp_path / "bad-vars.j2").write_text("---\nfamily: x\nformat: chat\nvariables: [source]\n---\n"
                                              "{% block user %}{{ source }} {{ target_langauge }}{% endblock %}\n")
        with pytest.raises(InputError, match="used but not declared \\['target_langauge'\\]"):
            load_prompt("bad-vars")
        (tmp_path / "leaky.j2").write_text("---\nfamily: x\nformat: chat\nvariables: [source]\n---\n"
                                           "{% block system %}Translate {{ source }}{% endblock %}"
                                           "{% block user %}{{ source }}{% endblock %}\n")
        with pytest.raises(ConfigError, match="system block uses the entry"):
            load_prompt("leaky").system_prompt("en", "es")
        (tmp_path / "nofm.j2").write_text("{% block user %}{{ source }}{% endblock %}\n")
        with pytest.raises(InputError, match="front matter"):
            load_prompt("nofm")
        with pytest.raises(ConfigError, match="did you mean 'leaky'"):
            load_prompt("leaki")


def test_a_template_is_compiled_once_and_a_changed_file_is_read_again(tmp_path):
    """load_prompt keeps the compiled template by its bytes' SHA-256 (issue 35): the same bytes give an equal prompt
    (same name, path, front matter and rendering), a file rewritten with other bytes is checked and compiled again
    (never a stale template), and a refused file stays refused on every load."""
    from mtboard.inputs import prompts

    with use_runtime(Runtime(prompts_dir=tmp_path)):
        path = tmp_path / "mine.j2"
        path.write_text("---\nfamily: x\nformat: chat\nvariables: [source]\n---\n"
                        "{% block user %}A: {{ source }}{% endblock %}\n")
        a, b = load_prompt("mine"), load_prompt("mine")
        assert a == b and a is not b and a.meta is not b.meta and a._template is b._template
        assert a.render("x", "en", "es").messages[-1]["content"] == "A: x"
        path.write_text("---\nfamily: x\nformat: chat\nvariables: [source]\n---\n"
                        "{% block user %}B: {{ source }}{% endblock %}\n")
        c = load_prompt("mine")
        assert c.template_sha256 != a.template_sha256 and c.render("x", "en", "es").messages[-1]["content"] == "B: x"
        assert prompts._COMPILED[c.template_sha256][1] is c._template
        path.write_text("---\nfamily: x\nformat: chat\nvariables: [source]\n---\n"
                        "{% block user %}{{ source }} {{ nope }}{% endblock %}\n")
        for _ in range(2):
            with pytest.raises(InputError, match="used but not declared \\['nope'\\]"):
                load_prompt("mine")


def test_price_table(tmp_path):
    table = load_prices()
    assert table.lookup("openai", "gpt-4o-mini") == (0.15, 0.60)
    assert table.lookup("llama-cpp-python", "anything") == (0.0, 0.0)
    assert table.lookup("openai-compatible", "gpt-4o-mini") is None
    bad = tmp_path / "prices.yaml"
    bad.write_text("as_of: '2025-01-01'\nsource: x\nmodels:\n  - {provider: openai, model: m, input: '1', "
                   "output: 2}\n")
    with pytest.raises(InputError):
        load_prices(bad)


def test_torn_last_line_is_cut(tmp_path):
    p = tmp_path / "translations.jsonl"
    good = TranslationRecord(entry_id=1, raw_predicted="uno").model_dump_json()
    p.write_text(good + "\n" + '{"run_index":0,"entry_id":2,"raw_pre')
    assert _repair_tail(p) == len('{"run_index":0,"entry_id":2,"raw_pre')
    assert p.read_text() == good + "\n"
    assert _repair_tail(p) == 0
    w = WorkDir(tmp_path)
    assert list(w.records()) == [(0, 1)]


def test_workdir_finished_excludes_transport_failures(tmp_path):
    w = WorkDir(tmp_path)
    w.open({"method": "x"})
    w.append([TranslationRecord(entry_id=1, raw_predicted="a"),
              TranslationRecord(entry_id=2, raw_predicted=None, error="HTTP 503", error_kind="transport"),
              TranslationRecord(entry_id=3, raw_predicted="", error="empty content", error_kind="empty"),
              TranslationRecord(entry_id=4, raw_predicted=None, error="HTTP 400", error_kind="backend")], [])
    assert w.finished() == {(0, 1), (0, 3)}  # model failures are final; transport/backend are retried
    w.append([TranslationRecord(entry_id=2, raw_predicted="b")], [])
    assert w.finished() == {(0, 1), (0, 2), (0, 3)} and w.records()[(0, 2)].raw_predicted == "b"
    w.close_session(3)


def test_openai_request_bodies(monkeypatch):
    from mtboard.backends.openai import OpenAIBackend
    from mtboard.llm import LLMClient

    opts = BackendContext(temperature=0.3, max_tokens=77)
    b = OpenAIBackend(parse_method("openai:gpt-5:low"), opts,
                      client=LLMClient("https://api.openai.com/v1", "sk-x"))
    req = b.build_request(TranslateRequest(entry_id=1, source="Hi", messages=[{"role": "user", "content": "Hi"}],
                                           stop=["\n"]))
    assert req.body() == {"model": "gpt-5", "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.3,
                          "max_completion_tokens": 77, "reasoning_effort": "low", "stop": ["\n"]}
    b2 = OpenAIBackend(parse_method("openai:qwen3:8b"), opts,
                       client=LLMClient("http://127.0.0.1:11434/v1"))
    req2 = b2.build_request(TranslateRequest(entry_id=1, source="Hi", prompt="English: Hi\nSpanish:"))
    assert req2.path == "/completions"
    assert req2.body() == {"model": "qwen3:8b", "prompt": "English: Hi\nSpanish:", "temperature": 0.3,
                           "max_tokens": 77, "top_p": 1.0}
    # describe(): provider and hashed host, never the URL (which may carry a token)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:tok3n@api.example.org/v1?key=tok3n")
    b3 = OpenAIBackend(parse_method("openai:m"), opts)
    b3.start()
    d = b3.describe()
    assert "tok3n" not in d.model_dump_json() and "example.org" not in d.model_dump_json()
    from mtboard.core.canonical import sha256_hex
    assert d.endpoint_host_sha256 == sha256_hex("api.example.org")
    b3.close()


def test_run_command_errors(tmp_path):
    res = cli_support.invoke(["run", "corpora/mtb-en-es-dev.json", "--method", "apertiun:eng-spa"],
                             cwd=Path(__file__).resolve().parent.parent)
    assert res.returncode == 1
    assert "did you mean 'apertium'?" in res.stderr and "Traceback" not in res.stderr
    res = cli_support.invoke(["run", "corpora/mtb-en-es-dev.json", "--method", "openai:gpt-4o-mini"],
                             unset=("OPENAI_",), cwd=Path(__file__).resolve().parent.parent)
    # the default endpoint (api.openai.com) without a key: refused before anything is made or sent
    assert res.returncode == 1 and "no API key for api.openai.com: OPENAI_API_KEY is not set" in res.stderr
