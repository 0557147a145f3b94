"""Every run-card rule the command line can break is refused before the first request (issue 33 item 4).

The rules are not listed by hand: :func:`card_rules` reads every constraint (``maxLength``, ``minLength``,
``pattern``, ``minimum``, ``maximum``, ``minItems``, ``maxItems``, ``enum`` …) out of the run card's JSON Schema.
Each must be either in :data:`FROM_THE_COMMAND_LINE` — with a command line (or a corpus / prompt file) that breaks
it, run against the fault-injection server (tests/fake_openai_server.py) whose request count is asserted to be 0 —
or matched by one reason of :data:`NOT_FROM_THE_COMMAND_LINE` (a value computed from the answers, a hash, the
clock). A new rule in the schema fails :func:`test_every_card_rule_is_classified` until it is classified here, so a
rule the command line can break is never first checked after the money was spent.

The corpus is a hand-made test fixture (references follow the fake server's rule ``"ES " + text``), not
evaluation data.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import cli_support
from fake_openai_server import FakeServer
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError
from mtboard.core.schema import RunCard
from mtboard.inputs.prompts import prompts_dir
from mtboard.run.planned import check_planned_card, source_of
from mtboard.run.runner import prepare
from mtboard.run.settings import RunSettings

SOURCES = ["Good morning.", "Open the file.", "Thank you."]
RULE_KEYWORDS = ("maxLength", "minLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                 "minItems", "maxItems", "enum", "const")


def card_rules() -> dict[tuple[str, str], Any]:
    """Every constraint of the run card's JSON Schema: ``{(JSON path, keyword): value}``; ``[]`` = any list item,
    ``*`` = any key of a mapping (the paths :func:`mtboard.core.schema.card.binding_paths` uses)."""
    schema = RunCard.model_json_schema()
    defs = schema.get("$defs", {})
    out: dict[tuple[str, str], Any] = {}

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    def walk(node: dict[str, Any], path: str) -> None:
        node = resolve(node)
        for opt in (resolve(o) for o in node.get("anyOf", [node])):
            for key in RULE_KEYWORDS:
                if key in opt:
                    out[(path, key)] = opt[key]
            for name, prop in opt.get("properties", {}).items():
                walk(prop, f"{path}.{name}")
            if opt.get("type") == "array" and isinstance(opt.get("items"), dict):
                walk(opt["items"], f"{path}[]")
            if opt.get("type") == "object" and isinstance(opt.get("additionalProperties"), dict):
                walk(opt["additionalProperties"], f"{path}.*")

    walk(schema, "$")
    return out


@dataclass(frozen=True)
class Case:
    """A command line that breaks a card rule: extra ``mtboard run`` arguments, the option (or file) the one-line
    error must name, and optionally changes to the hand-made corpus (``dataset`` fields, first ``entry`` fields) or
    prompt files replaced in a copy of the shipped prompts folder."""

    args: tuple[str, ...]
    names: str
    dataset: dict[str, Any] = field(default_factory=dict)
    entry: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)


LONG_MODEL = Case(("--method", "openai:" + "m" * 4000), "--method")  # the 4,000-character model name
NEGATIVE_PRICE = Case(("--price-in", "-1"), "--price-in")
NEGATIVE_JUDGE_PRICE = Case(("--judge", "rubric=openai:judge-x", "--judge-price-in", "-1"), "--judge-price-in")
NEGATIVE_TABLE_RATE = Case((), "prices.yaml", prompts={"prices.yaml": (
    'as_of: "2026-12-01"\nsource: "hand-made test table"\nfree_providers: [local]\nmodels:\n'
    "  - {provider: openai-compatible, model: fake-model, input: 1.0, output: 2.0, cached_input: -0.5, "
    "reasoning: -1.0}\n")})
WRONG_PROMPT_FORMAT = Case(("--prompt", "xml-prompt"), "xml-prompt", prompts={"xml-prompt.j2": (
    "---\nfamily: generic\nformat: xml\nvariables: [source]\n---\n{% block user %}{{ source }}{% endblock %}\n")})

FROM_THE_COMMAND_LINE: dict[tuple[str, str], Case] = {
    ("$.model_slug", "maxLength"): LONG_MODEL,
    ("$.model_slug", "minLength"): Case(("--method", "openai:"), "--method"),
    ("$.condition", "maxLength"): Case(("--condition", "c" * 101), "--condition"),
    ("$.temperature", "minimum"): Case(("--temperature", "-0.5"), "--temperature"),
    ("$.method_config.temperature", "minimum"): Case(("--temperature", "-0.5"), "--temperature"),
    ("$.method.max_tokens", "minimum"): Case(("--max-tokens", "0"), "--max-tokens"),
    ("$.method.concurrency", "minimum"): Case(("--concurrency", "0"), "--concurrency"),
    ("$.method.runs", "minimum"): Case(("--runs", "0"), "--runs"),
    ("$.method.fst_retries", "minimum"): Case(("--tools", "fst-gate", "--fst-retries", "-1"), "--fst-retries"),
    ("$.method.fst_retries", "maximum"): Case(("--tools", "fst-gate", "--fst-retries", "6"), "--fst-retries"),
    ("$.method.format_attempts", "minimum"): Case(("--format-attempts", "0"), "--format-attempts"),
    ("$.method.format_attempts", "maximum"): Case(("--format-attempts", "6"), "--format-attempts"),
    ("$.method.arm", "enum"): Case(("--arm", "scenes"), "--arm"),
    ("$.method.history", "minimum"): Case(("--history", "-1"), "--history"),
    ("$.method.history", "maximum"): Case(("--history", "1001"), "--history"),
    ("$.method.price_in_per_mtok", "minimum"): NEGATIVE_PRICE,
    ("$.method.price_out_per_mtok", "minimum"): Case(("--price-out", "-1"), "--price-out"),
    ("$.method.price_cached_in_per_mtok", "minimum"): NEGATIVE_TABLE_RATE,
    ("$.method.price_reasoning_per_mtok", "minimum"): NEGATIVE_TABLE_RATE,
    ("$.totals.total_cost_usd", "minimum"): NEGATIVE_PRICE,
    ("$.totals.cost_per_entry_usd", "minimum"): NEGATIVE_PRICE,
    ("$.totals.cost_per_source_char", "minimum"): NEGATIVE_PRICE,
    ("$.results[].cost_usd", "minimum"): NEGATIVE_PRICE,
    ("$.replicate_runs[].results[].cost_usd", "minimum"): NEGATIVE_PRICE,
    ("$.method.prompt_format", "enum"): WRONG_PROMPT_FORMAT,
    ("$.judges.*.kind", "enum"): Case(("--judge", "nope=openai:judge-x"), "--judge"),
    ("$.judges.*.max_attempts", "minimum"): Case(("--judge", "rubric=openai:judge-x", "--judge-max-attempts", "0"),
                                                  "--judge-max-attempts"),
    ("$.judges.*.max_tokens", "minimum"): Case(("--judge", "rubric=openai:judge-x", "--judge-max-tokens", "0"),
                                                "--judge-max-tokens"),
    ("$.judges.*.cost_usd", "minimum"): NEGATIVE_JUDGE_PRICE,
    ("$.totals.judge_cost_usd", "minimum"): NEGATIVE_JUDGE_PRICE,
    ("$.neural_metrics.*.batch_size", "minimum"): Case(("--neural-metric", "comet22", "--neural-batch-size", "0"),
                                                       "--neural-batch-size"),
    ("$.neural_metrics.*.commit", "pattern"): Case(("--neural-metric", "comet22", "--neural-revision",
                                                    "comet22=main"), "--neural-revision"),
    ("$.neural_metrics.*.device", "enum"): Case(("--neural-metric", "comet22", "--neural-device", "tpu"),
                                                "--neural-device"),
    ("$.dataset.segment", "enum"): Case(("--segment", "nope"), "--segment"),
    ("$.results[].segment", "enum"): Case(("--segment", "nope"), "--segment"),
    ("$.dataset.id", "pattern"): Case((), "c.json", dataset={"id": "Bad Id"}),
    ("$.dataset.source_language", "minLength"): Case((), "c.json", dataset={"source_language": "e"}),
    ("$.dataset.source_language", "maxLength"): Case((), "c.json", dataset={"source_language": "en-" + "x" * 40}),
    ("$.dataset.target_language", "minLength"): Case((), "c.json", dataset={"target_language": "s"}),
    ("$.dataset.target_language", "maxLength"): Case((), "c.json", dataset={"target_language": "es-" + "x" * 40}),
    ("$.results[].difficulty", "minimum"): Case((), "c.json", entry={"difficulty": 0}),
    ("$.results[].difficulty", "maximum"): Case((), "c.json", entry={"difficulty": 6}),
    ("$.results[].domain", "enum"): Case((), "c.json", entry={"domain": "nope"}),
    ("$.method.local.n_ctx", "minimum"): Case(("--method", "gguf:MODEL", "--backend-opt", "n_ctx=-1"),
                                              "--backend-opt"),
    ("$.method.local.n_gpu_layers", "minimum"): Case(("--method", "gguf:MODEL", "--backend-opt", "n_gpu_layers=-2"),
                                                     "--backend-opt"),
    ("$.method.local.n_threads", "minimum"): Case(("--method", "gguf:MODEL", "--backend-opt", "n_threads=-2"),
                                                  "--backend-opt"),
}
"""A card rule → a run that breaks it and the option its error names. The corpus, prompt and price-table cases are
the files a run reads before it sends: they are checked as the run starts, too."""

COMPUTED = ("computed by scoring, from the answers (the planned card checks it with placeholder answers in range; "
            "a value outside it is a bug in mtboard, refused with the translations kept)")
NOT_FROM_THE_COMMAND_LINE: tuple[tuple[str, str], ...] = (
    (r"\$\.scores\..*", COMPUTED),
    (r"\$\.totals\.(?!total_cost_usd|cost_per_entry_usd|cost_per_source_char|judge_cost_usd).*", COMPUTED),
    (r"\$\.(results|replicate_runs\[\]\.results)\[\]\.(?!difficulty|domain|segment|cost_usd).*", COMPUTED),
    (r"\$\.replicate_runs\[\]\.run_index", "numbered 1 … N−1 by the runner from --runs (≥ 1)"),
    (r"\$\.judges\.\*\.(breakdown|completion_tokens|prompt_tokens|mean|n_\w+|parse_failure_rate|run_scores|"
     r"spread|worst_score).*", "computed from the judges' answers"),
    (r"\$\.judges\.\*\.(temperature|runs)", "fixed by the judge's code (no option sets it)"),
    (r"\$\.judges\.\*\.admission\.\w+", "the judge's answers on the fixed admission set (mtboard.judges.admission)"),
    (r"\$\.neural_metrics\.\*\.(model|n)", "the pinned metric model's name (score/metrics/neural.py MODELS) and a "
                                           "count of scored entries"),
    (r"\$\.method\.local\.latency_\w+", "measured by the local-model gate, or its limits (the gguf backend's "
                                        "latency_median_s / latency_p90_s)"),
    (r".*sha256|\$\.fingerprint\.hash|\$\.rescored_from\[\]\.\w+_hash",
     "a SHA-256 mtboard computes (of a file, the host name, a text, the card)"),
    (r"\$\.method\.plugin\.(distribution|version|entry_point)",
     "the installed plugin distribution's metadata: PluginRecord is validated when prepare() builds the RunSpec, "
     "before anything is sent"),
    (r"\$\.method\.prompt_choice\.\w+", "chosen by mtboard from what the server reports (runner.choose_prompt, "
                                     "issue 40 item 4): PromptChoice is validated, its strings cut to their limits, "
                                     "when prepare() builds the RunSpec, before anything is sent"),
    (r"\$\.run_id", "a UUID v4 the work directory draws"),
    (r"\$\.run_card_hash", "the seal, computed"),
    (r"\$\.(fingerprint\.version|rescored_from\[\]\.fingerprint_version)", "the harness's fingerprint version"),
    (r"\$\.elapsed_seconds", "measured wall-clock time"),
    (r"\$\.dataset\.entry_count", "the number of entries run"),
    (r"\$\.(batch_size|method_config\.batchSize)", "the backend's batch size, max(1, preferred_batch_size)"),
    (r"\$\.method_class", "chosen by the backend class from --coaching / --tools (method_class_for)"),
    (r"\$\.max_retries", "not an option of mtboard run (RunSettings.max_retries, cli: False): "
                         "test_max_retries_of_library_callers"),
    (r"\$\.condition/minLength", "an empty --condition means 'not given': the default label (the prompt's name) "
                                 "is used, so no card has an empty condition: test_an_empty_condition_is_the_default"),
)
"""A card rule no command line decides → why (a regular expression over the rule's JSON path, or ``path/keyword``
for one keyword of a path)."""


def reasons_for(path: str, keyword: str) -> list[str]:
    return [why for rx, why in NOT_FROM_THE_COMMAND_LINE
            if re.fullmatch(rx, path) or re.fullmatch(rx, f"{path}/{keyword}")]


def test_every_card_rule_is_classified() -> None:
    rules = card_rules()
    # hand-checked members of the list (core/schema/card.py, method.py, corpus-derived fields)
    assert rules[("$.model_slug", "maxLength")] == 200 and rules[("$.condition", "maxLength")] == 100
    assert rules[("$.method.fst_retries", "maximum")] == 5 and rules[("$.dataset.source_language", "maxLength")] == 35
    assert rules[("$.method.plugin.entry_point", "maxLength")] == 300
    assert len(rules) >= 200  # 213 rules at the time of writing
    unclassified = [r for r in rules if r not in FROM_THE_COMMAND_LINE and not reasons_for(*r)]
    assert unclassified == [], "classify each new card rule in FROM_THE_COMMAND_LINE or NOT_FROM_THE_COMMAND_LINE"
    twice = [r for r in rules if r in FROM_THE_COMMAND_LINE and reasons_for(*r)]
    assert twice == []
    stale = [r for r in FROM_THE_COMMAND_LINE if r not in rules]
    assert stale == []


# --------------------------------------------------------------------------------------------------------------------
# Each rule the command line decides, broken: 0 requests, one line naming the option


def _corpus(tmp_path: Path, case: Case) -> Path:
    path = write_handmade_corpus(tmp_path / "c.json", "hand-made-card-rules", [(s, "ES " + s) for s in SOURCES])
    if case.dataset or case.entry:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["dataset"].update(case.dataset)
        data["entries"][0].update(case.entry)
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _prompts(tmp_path: Path, files: dict[str, str]) -> Path:
    d = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), d, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    for rel, text in files.items():
        (d / rel).write_text(text, encoding="utf-8")
    return d


def _run(tmp_path: Path, srv: FakeServer, case: Case, *, method: str = "openai:fake-model") -> Any:
    args = [a.replace("MODEL", str(tmp_path / "tiny.gguf")) for a in case.args]
    if "--method" not in args:
        args += ["--method", method]
    env = {"JUDGE_BASE_URL": srv.base_url}
    if case.prompts:
        env["MTBOARD_PROMPTS_DIR"] = str(_prompts(tmp_path, case.prompts))
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")  # a name for gguf:PATH; never loaded (refused before)
    return cli_support.invoke(["run", str(_corpus(tmp_path, case)), "--base-url", srv.base_url, "--work-dir",
                               str(tmp_path / "w"), *args], env=env, cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))


_CASES: list[tuple[Case, list[str]]] = []  # each distinct case once, with the rules it breaks
for (_path, _keyword), _case in FROM_THE_COMMAND_LINE.items():
    _seen = next((rules for c, rules in _CASES if c is _case), None)
    if _seen is None:
        _CASES.append((_case, _seen := []))
    _seen.append(f"{_path}/{_keyword}")


@pytest.mark.parametrize("case", [c for c, _ in _CASES], ids=[" ".join(v)[:90] for _, v in _CASES])
def test_a_broken_card_rule_fails_before_the_first_request(tmp_path: Path, case: Case) -> None:
    with FakeServer() as srv:
        p = _run(tmp_path, srv, case)
        assert srv.requests == []  # nothing was paid for
    err = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(err) == 1 and err[0].startswith("error: "), p.stderr
    assert case.names in err[0] and "internal error" not in err[0] and "fix:" in err[0]
    assert not (tmp_path / "w").exists()


def test_the_4000_character_model_name_costs_nothing(tmp_path: Path) -> None:
    """The issue's case: before, all 3 requests were sent and then no card was written."""
    with FakeServer() as srv:
        p = _run(tmp_path, srv, LONG_MODEL)
        assert srv.requests == []
    assert p.returncode == 1
    assert p.stderr.startswith("error: --method: the run card's model_slug would be 4000 characters ('mmmm")
    assert "over the 200 the card allows; nothing was sent (fix: give a model name of at most 200 characters" \
        in p.stderr


@pytest.mark.parametrize("method,limit_text", [("openai:" + "m" * 201, "at most 200 characters"),
                                               ("openai:" + "m" * 197 + ":high", "at most 195 characters")])
def test_the_error_says_how_long_the_model_part_may_be(tmp_path: Path, method: str, limit_text: str) -> None:
    # openai names the slug as typed, model[:effort]: ':high' takes 5 of the 200
    with pytest.raises(ConfigError, match=re.escape(limit_text)) as info:
        prepare(RunSettings(corpus_path=_corpus(tmp_path, Case((), "")), method=method,
                            base_url="http://127.0.0.1:9/v1"))
    assert info.value.field == "--method"


def test_a_model_name_at_the_limit_runs_and_validates(tmp_path: Path) -> None:
    """The boundary: 200 characters is a card, 201 is refused above."""
    with FakeServer() as srv:
        p = _run(tmp_path, srv, Case(("--method", "openai:" + "m" * 200), ""))
        assert len([r for r in srv.requests if r["path"].endswith("/completions")]) == 3
    assert p.returncode == 0, p.stderr
    card = load_card(tmp_path / "w" / "card.json")
    assert card.model_slug == "m" * 200 and card.method.model == "m" * 200


def test_an_api_key_in_the_notes_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    # the validator's secrets check, run on the planned card: a key would be written into the card
    with FakeServer() as srv:
        p = _run(tmp_path, srv, Case(("--notes", "run with sk-" + "a" * 30), ""))
        assert srv.requests == []
    assert p.returncode == 1
    assert "error: --notes: the run card's notes would hold what looks like an OpenAI/Anthropic-style key" in p.stderr
    assert "sk-aaaa" not in p.stderr  # the key itself is never repeated


def test_a_corpus_whose_card_would_be_too_large_is_refused_before_anything_is_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mtboard.run.planned as planned

    path = _corpus(tmp_path, Case((), ""))
    settings = RunSettings(corpus_path=path, method="openai:fake-model", base_url="http://127.0.0.1:9/v1")
    sizes: list[int] = []
    measure = planned.planned_card_bytes
    monkeypatch.setattr(planned, "planned_card_bytes", lambda *a: sizes.append(measure(*a)) or sizes[-1])
    prepare(settings)  # fits the real limit
    monkeypatch.setattr(planned, "MAX_CARD_BYTES", sizes[0])
    prepare(settings)  # exactly at the limit: fits
    monkeypatch.setattr(planned, "MAX_CARD_BYTES", sizes[0] - 1)
    with pytest.raises(ConfigError, match=rf"the run card would be at least {sizes[0]:,} bytes \(3 entries × 1 "
                                          r"run\(s\)\), over the [\d,]+ a card may hold; nothing was sent") as info:
        prepare(settings)
    assert info.value.field == "--limit" and 3000 < sizes[0] < 30000


def test_the_size_bound_is_below_the_written_card(tmp_path: Path) -> None:
    """planned_card_bytes is a lower bound of the real card: a run's card.json is at least that large."""
    from mtboard.score.card import planned_card, planned_card_bytes
    from mtboard.core.schema import BackendFacts

    with FakeServer() as srv:
        p = _run(tmp_path, srv, Case(("--runs", "2"), ""))
    assert p.returncode == 0, p.stderr
    plan = prepare(RunSettings(corpus_path=tmp_path / "c.json", method="openai:fake-model", runs=2,
                               base_url=srv.base_url))
    bound = planned_card_bytes(planned_card(plan.spec, BackendFacts(), plan.entries, rates=None,
                                            strip_unknown_marks=False, timestamp="2026-12-01T00:00:00Z"),
                               plan.entries)
    written = (tmp_path / "w" / "card.json").stat().st_size
    assert 0.5 * written < bound <= written


def test_an_empty_condition_is_the_default(tmp_path: Path) -> None:
    plan = prepare(RunSettings(corpus_path=_corpus(tmp_path, Case((), "")), method="openai:fake-model",
                               condition="", base_url="http://127.0.0.1:9/v1"))
    assert plan.spec.condition == "translate-chat"


def test_max_retries_of_library_callers() -> None:
    with pytest.raises(ConfigError, match="max_retries must be at least 0"):
        RunSettings(corpus_path=Path("c.json"), method="openai:x", max_retries=-1)


def test_source_of_names_the_option_of_each_field() -> None:
    assert source_of("$.model_slug") == "--method" == source_of("$.method.effort")
    assert source_of("$.method.price_in_per_mtok") == "--price-in"
    assert source_of("$.method.price_cached_in_per_mtok") == "prompts/prices.yaml"
    assert source_of("$.results[0].expected") == "CORPUS" and source_of("$.scores.bleu") == "the run"


# --------------------------------------------------------------------------------------------------------------------
# What the server reports back cannot be checked before: the card falls back to the name as typed


LONG_FILE = "w" * 300 + ".gguf"


class LlamaServerStandIn(LoopbackServer):
    """llama-server as documented (``GET /v1/models``, ``GET /props`` with ``model_path``; ``Server: llama.cpp``),
    serving a GGUF file whose name is 305 characters; every chat answer is ``Hola.``."""

    def __init__(self) -> None:
        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                hdr = {"Server": "llama.cpp"}
                if self.path.endswith("/v1/models"):
                    self.send_json(200, {"object": "list", "data": [{"id": "my-gemma", "object": "model",
                                                                     "owned_by": "llamacpp"}]}, hdr)
                elif self.path == "/props":
                    self.send_json(200, {"model_path": "/models/" + LONG_FILE, "build_info": "b5002-2c3f8b85"},
                                   hdr)
                else:
                    self.send_json(404, {"error": "not found"}, hdr)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "my-gemma",
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": "Hola."}}],
                                     "usage": {"prompt_tokens": 10, "completion_tokens": 2}},
                               {"Server": "llama.cpp"})

        super().__init__(Handler)


def test_an_over_long_name_the_server_reports_gives_way_to_the_typed_one(tmp_path: Path) -> None:
    path = _corpus(tmp_path, Case((), ""))
    with LlamaServerStandIn() as srv:
        # --prompt: without it the stand-in's llama.cpp self-report would choose Gemma's native (completion) format
        p = cli_support.invoke(["run", str(path), "--method", "openai:my-gemma", "--base-url", srv.url,
                                "--prompt", "translate-chat",
                                "--work-dir", str(tmp_path / "w"), "--price-in", "0", "--price-out", "0"],
                               cwd=tmp_path, unset=("OPENAI_", "JUDGE_"))
    assert p.returncode == 0, p.stderr
    card = load_card(tmp_path / "w" / "card.json")
    assert (card.model_slug, card.model_id, card.method.engine_version) == ("my-gemma", "my-gemma",
                                                                            "llama.cpp b5002-2c3f8b85")
    assert ("identity    WARNING: the server reported a model name the card cannot hold (305 characters: string "
            "should have at most 200 characters); the card names the model as typed (my-gemma)") in p.stdout
    raw = (tmp_path / "w" / "raw.jsonl").read_text(encoding="utf-8")
    assert len(raw) > 0 and len(card.results) == 3


def test_the_planned_card_is_the_card_the_run_writes(tmp_path: Path) -> None:
    """The planned card's fields the command line decides equal the written card's (same functions, same models)."""
    with FakeServer() as srv:
        p = _run(tmp_path, srv, Case(("--condition", "lab-1", "--temperature", "0.25", "--max-tokens", "77",
                                      "--notes", "a note", "--price-in", "1", "--price-out", "2"), ""))
        assert p.returncode == 0, p.stderr
        settings = RunSettings(corpus_path=tmp_path / "c.json", method="openai:fake-model", condition="lab-1",
                               temperature=0.25, max_tokens=77, notes="a note", price_in=1, price_out=2,
                               base_url=srv.base_url)
    plan = prepare(settings)
    planned = check_planned_card(plan.spec, settings, plan.backend_cls, plan.entries, plan.prices)
    card = load_card(tmp_path / "w" / "card.json")
    for name in ("model_slug", "condition", "temperature", "notes", "system_prompt_sha256", "batch_size",
                 "method_class", "tools_enabled"):
        assert getattr(planned, name) == getattr(card, name), name
    keep = ("spec", "backend", "model", "prompt_name", "prompt_format", "prompt_template_sha256", "max_tokens",
            "concurrency", "runs", "price_in_per_mtok", "price_out_per_mtok", "endpoint_host_sha256")
    assert {k: getattr(planned.method, k) for k in keep} == {k: getattr(card.method, k) for k in keep}
    assert planned.dataset.model_dump(exclude={"entry_count"}) == card.dataset.model_dump(exclude={"entry_count"})


def test_a_finished_card_that_breaks_a_rule_keeps_the_translations(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The last net: a rule only the answers could break (a bug) is one line naming the work directory, not an
    "invalid data" line that loses the run; once fixed, the same command scores the kept translations, sending
    nothing."""
    import mtboard.run.runner as runner

    def broken(*args: Any, **kwargs: Any) -> RunCard:
        return RunCard.model_validate({"model_slug": "x" * 201})  # raises the schema's ValidationError

    with FakeServer() as srv:
        monkeypatch.setattr(runner, "score_and_assemble", broken)
        p = _run(tmp_path, srv, Case((), ""))
        assert p.returncode == 1
        line = p.stderr.strip().splitlines()[-1]
        assert line.startswith(f"error: {tmp_path / 'w'}: the finished card breaks a rule of the run card (RunCard: $.")
        assert f"every translation is kept in {tmp_path / 'w'} (fix: report it as a bug in mtboard" in line
        monkeypatch.undo()
        p = _run(tmp_path, srv, Case((), ""))
        assert len([r for r in srv.requests if r["path"].endswith("/completions")]) == 3  # nothing sent twice
    assert p.returncode == 0, p.stderr
    assert len(load_card(tmp_path / "w" / "card.json").results) == 3
