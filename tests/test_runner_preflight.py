"""Configs that fail after paying (issue 24): every file a run needs is loaded and checked before the first request.

Each test points ``MTBOARD_PROMPTS_DIR`` at a copy of the shipped prompts with one file changed (price table, prompt
template, judge prompt), runs the real runner against the fault-injection server (tests/fake_openai_server.py; it
counts every completion request) and checks either that the run now succeeds with the values the file says, or that
it fails with a one-line error naming the file **before any request was sent**. The corpus is a hand-made test
fixture (references follow the fake server's rule ``"ES " + text``), not evaluation data.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli_support
from loopback import write_handmade_corpus
from fake_openai_server import FakeServer
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.inputs.prompts import prompts_dir
from mtboard.run.settings import RunSettings
from mtboard.run.runner import prepare

SOURCES = ["Good morning.", "Open the file.", "Where is the station?", "Thank you."]

MERGE_PRICES = """\
as_of: "2026-12-01"
source: "hand-made test table (issue 24: YAML merge keys)"
free_providers: [local]
models:
  - &priced {provider: openai-compatible, model: other-model, input: 2.0, output: 8.0}
  - <<: *priced
    model: fake-model
    output: 6.0
"""
"""A price table written with an anchor and a merge key: fake-model costs 2.0 in (merged from other-model) and 6.0
out (its own key overrides the merged 8.0)."""


def corpus(tmp_path: Path) -> Path:
    return write_handmade_corpus(tmp_path / "c.json", "hand-made-preflight-test", [(s, "ES " + s) for s in SOURCES])


def prompts_copy(tmp_path: Path, **files: str) -> Path:
    """A copy of the shipped prompts folder with ``files`` (relative path → text) replaced."""
    d = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), d, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    for rel, text in files.items():
        (d / rel).write_text(text, encoding="utf-8")
    return d


def run_cli(tmp_path: Path, srv: FakeServer, prompts: Path, *extra: str):
    args = ["run", str(corpus(tmp_path)), "--method", "openai:fake-model", "--base-url", srv.base_url,
            "--work-dir", str(tmp_path / "w"), *extra]
    return cli_support.invoke(args, env={"MTBOARD_PROMPTS_DIR": str(prompts)}, cwd=tmp_path, unset=("OPENAI_",
                                                                                                      "JUDGE_"))


def test_price_table_with_merge_keys_prices_the_run(tmp_path: Path) -> None:
    prompts = prompts_copy(tmp_path, **{"prices.yaml": MERGE_PRICES})
    with FakeServer() as srv:
        p = run_cli(tmp_path, srv, prompts)
    assert p.returncode == 0, p.stderr
    card = load_card(tmp_path / "w" / "card.json")
    t = card.totals
    assert t.prompt_tokens > 0 and t.completion_tokens == 15  # words of "ES " + source: 3 + 4 + 5 + 3
    assert card.totals.total_cost_usd == pytest.approx((t.prompt_tokens * 2.0 + t.completion_tokens * 6.0) / 1e6)
    assert (card.method.price_in_per_mtok, card.method.price_out_per_mtok) == (2.0, 6.0)


BAD_PRICES = [
    ("duplicate key", MERGE_PRICES.replace("    output: 6.0\n", "    output: 6.0\n    output: 7.0\n"),
     "duplicate key 'output'"),
    ("two merge keys", MERGE_PRICES.replace("    model: fake-model\n", "    <<: *priced\n    model: fake-model\n"),
     "duplicate merge key"),
    ("schema: unknown key from the merge", MERGE_PRICES.replace("output: 8.0}", "output: 8.0, currency: EUR}"),
     "currency"),
    ("a billion laughs", 'as_of: "x"\nsource: "y"\n' + "a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcde", "bcdef")), "more than 100000 nodes"),
]


@pytest.mark.parametrize("label,text,needle", BAD_PRICES, ids=[b[0] for b in BAD_PRICES])
def test_bad_price_table_fails_before_the_first_request(tmp_path: Path, label: str, text: str, needle: str) -> None:
    prompts = prompts_copy(tmp_path, **{"prices.yaml": text})
    with FakeServer() as srv:
        p = run_cli(tmp_path, srv, prompts)
        assert srv.requests == []  # nothing was paid for
    assert p.returncode == 1
    assert "prices.yaml" in p.stderr and needle in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "w").exists()


def test_prices_on_the_command_line_do_not_read_the_table(tmp_path: Path) -> None:
    prompts = prompts_copy(tmp_path, **{"prices.yaml": "as_of: [unclosed\n"})
    with FakeServer() as srv:
        p = run_cli(tmp_path, srv, prompts, "--price-in", "1", "--price-out", "3")
    assert p.returncode == 0, p.stderr
    t = load_card(tmp_path / "w" / "card.json").totals
    assert t.total_cost_usd == pytest.approx((t.prompt_tokens * 1.0 + t.completion_tokens * 3.0) / 1e6)


def test_prompt_that_fails_on_a_later_entry_fails_before_the_first_request(tmp_path: Path) -> None:
    # Renders for entries 1–2 and fails on entry 3 (a question: the template indexes an empty history).
    template = ("---\nfamily: generic\nformat: chat\nvariables: [source, history]\n---\n"
                "{% block user %}{% if '?' in source %}{{ history[0] }} {% endif %}{{ source }}{% endblock %}\n")
    prompts = prompts_copy(tmp_path, **{"broken-on-questions.j2": template})
    with FakeServer() as srv:
        p = run_cli(tmp_path, srv, prompts, "--prompt", "broken-on-questions")
        assert srv.requests == []
    assert p.returncode == 1 and "broken-on-questions.j2" in p.stderr and "template error" in p.stderr


def test_judge_prompt_that_cannot_render_fails_before_the_first_request(tmp_path: Path) -> None:
    rubric = (prompts_dir() / "judges" / "rubric.j2").read_text(encoding="utf-8")
    broken = rubric.replace("{{ reference | data }}", "{{ reference | data }} {{ flags.NOPE }}")
    assert broken != rubric
    prompts = prompts_copy(tmp_path, **{"judges/rubric.j2": broken})
    with FakeServer() as srv:
        p = cli_support.invoke(["run", str(corpus(tmp_path)), "--method", "openai:fake-model", "--base-url",
                                srv.base_url, "--work-dir", str(tmp_path / "w"), "--judge", "rubric=openai:judge-x"],
                               env={"MTBOARD_PROMPTS_DIR": str(prompts), "JUDGE_BASE_URL": srv.base_url},
                               cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
        assert srv.requests == []
    assert p.returncode == 1 and "rubric.j2" in p.stderr and "NOPE" in p.stderr


def test_missing_bleu_tokenizer_fails_in_prepare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mtboard.score.metrics.bleu as bleu

    class NoMecab:
        def __init__(self, *a, **k):
            raise ImportError("No module named 'MeCab'")

    monkeypatch.setattr(bleu, "BLEU", NoMecab)
    path = corpus(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["dataset"].update(target_language="ja", language_pair="EN→JA")
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"ja-mecab.*mtboard\[ja\]"):
        prepare(RunSettings(corpus_path=path, method="openai:fake-model", base_url="http://127.0.0.1:9/v1"))


def test_prepare_loads_the_price_table_once(tmp_path: Path) -> None:
    prompts = prompts_copy(tmp_path, **{"prices.yaml": MERGE_PRICES})
    with use_runtime(Runtime(prompts_dir=prompts)):  # what the CLI sets from MTBOARD_PROMPTS_DIR
        plan = prepare(RunSettings(corpus_path=corpus(tmp_path), method="openai:fake-model",
                                   base_url="http://127.0.0.1:9/v1"))
        assert plan.prices is not None and plan.prices.lookup("openai-compatible", "fake-model") == (2.0, 6.0)
        assert plan.prices.lookup("openai-compatible", "other-model") == (2.0, 8.0)
        # edited mid-run: the plan keeps its copy
        (prompts / "prices.yaml").write_text("broken: [\n", encoding="utf-8")
        from mtboard.inputs.prices import resolve_prices
        from mtboard.core.schema import BackendFacts

        got = resolve_prices(plan.spec, BackendFacts(api_provider="openai-compatible"), priced=True, table=plan.prices)
        assert got == (2.0, 6.0, "prompts/prices.yaml (2026-12-01)")
        with pytest.raises(InputError, match="not valid YAML"):
            prepare(RunSettings(corpus_path=corpus(tmp_path), method="openai:fake-model",
                                base_url="http://127.0.0.1:9/v1"))
