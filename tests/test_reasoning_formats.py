"""Issue 33 item 2: reasoning wrappers, one table (mtboard.core.reasoning) read by both layers — the client's verdict
(mtboard.llm.policy.judge) and the mechanical policy (mtboard.score.checks.apply_policy).

The answers below are copied from the parsers' own test files and docstrings, or from the bug report quoted, each
cited on its row (a row marked "constructed" puts a format's documented markers around hand-written text because no
example text could be read in the source). Sources and references are hand-made test data, not evaluation data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli_support
from loopback import ChatServer, write_handmade_corpus
from mtboard.core.documents import load_card
from mtboard.core import reasoning
from mtboard.core.reasoning import FORMATS, ReasoningSplit, split_reasoning
from mtboard.core.schema import ErrorKind, Outcome
from mtboard.llm import split_think
from mtboard.llm.policy import judge
from mtboard.llm.shapes import Answer
from mtboard.score.checks import apply_policy

LLAMA_TEST = "llama.cpp tests/test-chat.cpp"
VLLM_TESTS = "vllm tests/reasoning/"

# (id, raw answer, answer, reasoning blocks, format names, source of the example)
CASES = [
    ("think", "<think>I'm\nthinking</think>Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?",
     ("I'm\nthinking",), ("think",), f"{LLAMA_TEST} message_assist_thoughts_unparsed_deepseek"),
    ("think-template-opened", "abc</think>xyz", "xyz", ("abc",), ("think",),
     "vllm vllm/reasoning/step3_reasoning_parser.py docstring (Step3: only </think>)"),
    ("think-ernie-response", "abc\n</think>\n\n<response>\ndef\n</response>\n", "\ndef\n", ("abc",), ("think",),
     "vllm vllm/reasoning/ernie45_reasoning_parser.py docstring (ERNIE 4.5)"),
    ("think-hunyuan-answer", "<think>\nThis is a reasoning section\n</think>\n<answer>\nThis is the rest\n</answer>",
     "\nThis is the rest\n", ("This is a reasoning section",), ("think",),
     f"{VLLM_TESTS}test_hunyuan_reasoning_parser.py SIMPLE_REASONING (Hunyuan A13B)"),
    ("harmony", "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>"
     "Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?", ("I'm\nthinking",), ("harmony",),
     f"{LLAMA_TEST} (COMMON_CHAT_FORMAT_GPT_OSS)"),
    ("harmony-stray-header", "<|channel|>commentary to=assistant<|channel|>analysis<|message|>I'm\nthinking<|end|>"
     "<|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?",
     ("I'm\nthinking",), ("harmony",), f"{LLAMA_TEST} (stray commentary header; llama.cpp recovers the same)"),
    ("harmony-vllm", "<|end|><|start|>assistant<|channel|>analysis<|message|>This is reasoning<|end|>"
     "<|start|>assistant<|channel|>final<|message|>This is the rest", "This is the rest", ("This is reasoning",),
     ("harmony",), f"{VLLM_TESTS}test_gptoss_reasoning_parser.py BASIC_CONTENT"),
    ("harmony-constrain", "<|end|><|start|>assistant<|channel|>analysis<|message|>This is reasoning<|end|>"
     "<|start|>assistant<|channel|>final<|constrain|>ReplyAction <|message|>This is the rest", "This is the rest",
     ("This is reasoning",), ("harmony",), f"{VLLM_TESTS}test_gptoss_reasoning_parser.py COMPLEX_CONTENT_2"),
    ("harmony-text", 'analysisUser says "Hello World!" Probably greeting. Should respond politely.assistantfinalHello! '
     "👋 How can I help you today?", "Hello! 👋 How can I help you today?",
     ('User says "Hello World!" Probably greeting. Should respond politely.',), ("harmony-text",),
     "https://github.com/oobabooga/textgen/issues/7374 (special tokens dropped)"),
    ("mistral", "[THINK]raisonnement[/THINK]Réponse", "Réponse", ("raisonnement",), ("mistral",),
     f"{LLAMA_TEST} message_assist_thoughts_unparsed_magistral"),
    ("mistral-template-opened", "This is a reasoning section[/THINK]This is the rest", "This is the rest",
     ("This is a reasoning section",), ("mistral",), f"{VLLM_TESTS}test_mistral_reasoning_parser.py SIMPLE_REASONING"),
    ("seed", "<seed:think>This is a reasoning section</seed:think>This is the rest", "This is the rest",
     ("This is a reasoning section",), ("seed",), f"{VLLM_TESTS}test_seedoss_reasoning_parser.py WITH_START_TOKEN"),
    ("seed-template-opened", "Some reasoning</seed:think>This is the rest", "This is the rest", ("Some reasoning",),
     ("seed",), f"{VLLM_TESTS}test_seedoss_reasoning_parser.py ONLY_END_TOKEN"),
    ("command-r", "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_RESPONSE|>Hello, world!\nWhat's up?"
     "<|END_RESPONSE|>", "Hello, world!\nWhat's up?", ("I'm\nthinking",), ("command-r",),
     f"{LLAMA_TEST} (COMMON_CHAT_FORMAT_COMMAND_R7B)"),
    ("apertus", "<|inner_prefix|>I'm\nthinking<|inner_suffix|>Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?",
     ("I'm\nthinking",), ("apertus",), f"{LLAMA_TEST} (COMMON_CHAT_FORMAT_APERTUS)"),
    ("thinking", "<thinking>The user wants Spanish.</thinking>Hola mundo.", "Hola mundo.",
     ("The user wants Spanish.",), ("thinking",), "constructed: llama.cpp common/chat-parser.cpp apriel_1_5 markers"),
    ("kimi-vl", "◁think▷The user wants Spanish.◁/think▷Hola mundo.", "Hola mundo.", ("The user wants Spanish.",),
     ("kimi-vl",), "constructed: LLaMA-Factory template.py kimi_vl thought_words"),
    ("granite", "Here is my thought process:This is a reasoning sectionHere is my response:This is the rest",
     "This is the rest", ("This is a reasoning section",), ("granite",),
     f"{VLLM_TESTS}test_granite_reasoning_parser.py SIMPLE_REASONING"),
]

# (format, an answer that is only reasoning, a source containing the format's marker)
ONLY_REASONING = {
    "think": "<think>The user wants Spanish.</think>",
    "harmony": "<|channel|>analysis<|message|>I'm\nthinking<|end|>",  # llama.cpp test-chat.cpp: content ""
    "harmony-text": "analysisThe user wants Spanish.assistantfinal",
    "mistral": "This is a reasoning section[/THINK]",  # vLLM test_mistral COMPLETE_REASONING: content None
    "seed": "This is a reasoning section</seed:think>",  # vLLM test_seedoss COMPLETE_REASONING: content None
    "command-r": "<|START_THINKING|>I'm\nthinking<|END_THINKING|>",
    "apertus": "<|inner_prefix|>I'm\nthinking<|inner_suffix|>",
    "thinking": "<thinking>x</thinking>",
    "kimi-vl": "◁think▷x◁/think▷",
    "granite": "Here is my thought process:This is a reasoning sectionHere is my response:",  # vLLM COMPLETE_REASONING
}
SOURCE_WITH_MARKER = {
    "think": "Type </think> to close the block.", "harmony": "The token <|channel|> starts a header.",
    "harmony-text": "Say assistantfinal.", "mistral": "Press [THINK] to start.", "seed": "Use <seed:think> tags.",
    "command-r": "The model writes <|START_THINKING|> first.", "apertus": "Tokens: <|inner_prefix|>",
    "thinking": "Wrap it in <thinking>.", "kimi-vl": "The marker ◁think▷ opens it.",
    "granite": "Start with: Here is my thought process:",
}
UNCLOSED = [("think", "<think>The user wants Spanish. Hola mundo"), ("mistral", "[THINK]This is a reasoning section"),
            ("seed", "<seed:think>Let me think"), ("command-r", "<|START_THINKING|>I'm\nthink"),
            ("apertus", "<|inner_prefix|>I'm"), ("thinking", "<thinking>x"), ("kimi-vl", "◁think▷x"),
            ("harmony", "<|channel|>analysis<|message|>I'm\nthink")]  # llama.cpp test-chat.cpp partial answer


def policy(raw, source="Hello world.", reference="Hola mundo.", error_kind=None):
    return apply_policy(source=source, raw_predicted=raw, reference=reference, error_kind=error_kind,
                        source_language="en", target_language="es")


def verdict(text, source=None):
    return judge(Answer(text=text, finish_reason="stop"), max_tokens=512, check_truncation=False, source=source)


def test_every_format_has_a_case_and_a_source():
    names = {f.name for f in FORMATS}
    assert names == {c[4][0] for c in CASES} == set(ONLY_REASONING) == set(SOURCE_WITH_MARKER)
    assert all(f.source.startswith("http") and f.families and f.markers for f in FORMATS)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_format_splits_its_documented_answer(case):
    _, raw, answer, reasoning, formats, _src = case
    split = split_reasoning(raw)
    assert (split.answer, split.reasoning, split.formats, split.unclosed) == (answer, reasoning, formats, None)
    # the client: the answer is visible, the reasoning moves to LLMResult.reasoning
    v = verdict(raw)
    assert (v.outcome, v.text, v.reasoning) == ("ok", answer.strip(), "\n".join(reasoning))
    # the mechanical policy: the hypothesis is the answer; think.stripped names the format and counts the reasoning
    predicted, d = policy(raw)
    assert predicted == answer.strip() and d.outcome == Outcome.usable
    flag = next(f for f in d.flags if f.rule == "think.stripped")
    assert flag.detail.startswith(f"{formats[0]}: {len(reasoning)} reasoning block")
    assert flag.count == len(reasoning)
    assert f", {sum(map(len, reasoning))} characters" in flag.detail
    assert flag.detail.endswith("; answer wrapper removed") == (case[0] in ("think-ernie-response",
                                                                           "think-hunyuan-answer", "command-r"))


def test_the_issues_two_answers_score_hola_mundo():
    harmony = ("<|channel|>analysis<|message|>The user wants Spanish. Translate.<|end|><|start|>assistant<|channel|>"
               "final<|message|>Hola mundo.")
    p, d = policy(harmony)
    assert p == "Hola mundo." and [(f.rule, f.detail, f.count) for f in d.flags] == [
        ("think.stripped", "harmony: 1 reasoning block, 34 characters", 1)]  # no injection flag any more
    p, d = policy("[THINK]The user wants Spanish.[/THINK]Hola mundo.")
    assert p == "Hola mundo." and [(f.rule, f.detail, f.count) for f in d.flags] == [
        ("think.stripped", "mistral: 1 reasoning block, 23 characters", 1)]


@pytest.mark.parametrize("fmt", sorted(SOURCE_WITH_MARKER))
def test_a_marker_the_source_contains_is_text_in_both_layers(fmt):
    raw = next(c[1] for c in CASES if c[4] == (fmt,))
    source = SOURCE_WITH_MARKER[fmt]
    assert split_reasoning(raw, source).formats == ()  # left whole: the format is not applied to this entry
    assert split_reasoning(raw).formats == (fmt,)  # the same answer to another source is split
    _, d = policy(raw, source=source)
    assert "think.stripped" not in {f.rule for f in d.flags} and d.outcome != Outcome.no_usable_output
    v = verdict(raw, source=source)
    assert v.outcome == "ok" and v.text == raw and v.reasoning is None


@pytest.mark.parametrize("fmt", sorted(SOURCE_WITH_MARKER))
def test_an_unclosed_marker_the_source_contains_is_not_unclosed(fmt):
    """Today's bug, for <think> and every other format: a source holding an opening marker, translated with it."""
    opener = {"think": "<think>", "harmony": "<|channel|>analysis<|message|>", "harmony-text": "analysis",
              "mistral": "[THINK]", "seed": "<seed:think>", "command-r": "<|START_THINKING|>",
              "apertus": "<|inner_prefix|>", "thinking": "<thinking>", "kimi-vl": "◁think▷",
              "granite": "Here is my thought process:"}[fmt]
    source = f"Type {opener} here. {SOURCE_WITH_MARKER[fmt]}"
    raw = f"{opener} Escriba aquí."
    p, d = policy(raw, source=source, reference=raw)
    assert d.outcome == Outcome.usable and p == raw.strip()
    assert verdict(raw, source=source).outcome == "ok"


@pytest.mark.parametrize("fmt", sorted(ONLY_REASONING))
def test_an_answer_that_is_only_reasoning_is_no_usable_output_in_both_layers(fmt):
    raw = ONLY_REASONING[fmt]
    p, d = policy(raw)
    assert (p, d.outcome, d.rule) == ("", Outcome.no_usable_output, "empty")
    assert d.flags[0].rule == "think.stripped" and d.flags[0].detail.startswith(fmt + ":")
    v = verdict(raw)
    assert (v.outcome, v.error_kind) == ("model", ErrorKind.empty) and v.reasoning


@pytest.mark.parametrize("fmt, raw", UNCLOSED, ids=[u[0] for u in UNCLOSED])
def test_a_block_that_never_closes_is_unclosed_in_both_layers(fmt, raw):
    assert split_reasoning(raw).unclosed == fmt
    p, d = policy(raw)
    assert (d.outcome, d.rule, p) == (Outcome.no_usable_output, "unclosed_think", raw)
    v = verdict(raw)
    assert v.error_kind == ErrorKind.unclosed_think and f"({fmt})" in v.error
    assert split_think(raw) == (raw, None, True)


@pytest.mark.parametrize("raw, answer, reasoning", [
    ("<think>a<think>b</think>c</think>d", "d", ("abc",)),  # nested: the outermost block removed whole
    ("<think>a</think>X <think>b</think>Y", "X Y", ("a", "b")),  # several blocks, the text between kept
    ("<THINK>hmm</THINK>Hola", "Hola", ("hmm",)),  # tag-like markers in any letter case
    ("<think>a</think>[THINK]b[/THINK]Hola", "Hola", ("a", "b")),  # two formats in one answer
    ("<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>commentary<|message|>pre<|end|>"
     "<|start|>assistant<|channel|>final<|message|>Hola<|return|>", "Hola", ("a", "pre")),  # commentary is reasoning
    ("Hola mundo.", "Hola mundo.", ()),  # nothing to split
    ("analysis of the data", "analysis of the data", ()),  # the English word without "assistantfinal"
])
def test_nested_multiple_and_plain(raw, answer, reasoning):
    split = split_reasoning(raw)
    assert (split.answer, split.reasoning) == (answer, reasoning)


def test_split_think_keeps_its_contract():
    assert split_think("<think>a</think> b") == ("b", "a", False)
    assert split_think("a</think>b") == ("b", "a", False)
    assert split_think("[THINK]a[/THINK]b") == ("b", "a", False)
    assert split_think("<think>a</think>b", "Use <think>.") == ("<think>a</think>b", None, False)
    assert split_think("plain") == ("plain", None, False)


@pytest.mark.parametrize("raw, source, flag", [
    ("Hola mundo \ufffd\ufffd\ufffd.", "Hello world 😀.",
     ("encoding.broken", "3 U+FFFD replacement characters (source 0)", 3)),
    ("Byte \ufffd\ufffd malo.", "Bad \ufffd byte.",
     ("encoding.broken", "2 U+FFFD replacement characters (source 1)", 2)),
    ("Byte \ufffd malo.", "Bad \ufffd byte.", None),  # as often as the source: the source's own character
    ("Hola mundo.", "Hello world.", None),
])
def test_encoding_broken_flag(raw, source, flag):
    p, d = policy(raw, source=source)
    got = [(f.rule, f.detail, f.count) for f in d.flags if f.rule == "encoding.broken"]
    assert got == ([flag] if flag else [])
    assert d.outcome == Outcome.usable and p == raw  # informational: the outcome and the hypothesis are unchanged


# --------------------------------------------------------------------------------------------------------------------
# End to end: the real `mtboard run` CLI against a loopback server, then `mtboard validate`

ANSWERS = {  # source → what the server answers (a hand-made provider serving raw reasoning markup)
    "Hello world.": "<|channel|>analysis<|message|>The user wants Spanish. Translate.<|end|><|start|>assistant"
                    "<|channel|>final<|message|>Hola mundo.",
    "Hello, world.": "[THINK]The user wants Spanish.[/THINK]Hola mundo.",
    "Type <think> to start.": "Escriba <think> para empezar.",
    "Good night.": "<|channel|>analysis<|message|>Spanish. Short.<|end|>",
    "Thank you.": "Gracias \ufffd.",
}
REFERENCES = {"Hello world.": "Hola mundo.", "Hello, world.": "Hola mundo.",
              "Type <think> to start.": "Escriba <think> para empezar.", "Good night.": "Buenas noches.",
              "Thank you.": "Gracias."}


def test_run_and_validate_end_to_end(tmp_path: Path) -> None:
    corpora = tmp_path / "corpora"
    corpus = write_handmade_corpus(corpora / "c.json", "hand-made-reasoning-test", list(REFERENCES.items()))
    with ChatServer(ANSWERS.__getitem__, {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}) as srv:
        p = cli_support.invoke(["run", str(corpus), "--method", "openai:m", "--base-url", srv.url, "--work-dir",
                                str(tmp_path / "w"), "--prompt", "source-only"], cwd=tmp_path,
                               unset=("OPENAI_", "MTBOARD_"))
    assert p.returncode == 0, p.stdout + p.stderr
    card = load_card(tmp_path / "w" / "card.json")
    by_source = {r.source: r for r in card.results}
    for source in ("Hello world.", "Hello, world.", "Type <think> to start."):
        r = by_source[source]
        assert r.raw_predicted == ANSWERS[source]  # kept exactly as received
        assert r.predicted == REFERENCES[source] and r.checks.outcome == Outcome.usable and r.chrf_score == 100.0
    assert [(f.rule, f.detail) for f in by_source["Hello world."].checks.flags] == [
        ("think.stripped", "harmony: 1 reasoning block, 34 characters")]
    assert [(f.rule, f.detail) for f in by_source["Hello, world."].checks.flags] == [
        ("think.stripped", "mistral: 1 reasoning block, 23 characters")]
    assert by_source["Type <think> to start."].checks.flags == []  # the source's own marker: text, not reasoning
    only = by_source["Good night."]
    assert (only.error_kind, only.checks.outcome, only.checks.rule) == (
        ErrorKind.empty, Outcome.no_usable_output, "error.empty")
    assert only.raw_predicted == ANSWERS["Good night."]
    broken = by_source["Thank you."]
    assert broken.checks.outcome == Outcome.usable and [(f.rule, f.count) for f in broken.checks.flags
                                                        if f.rule == "encoding.broken"] == [("encoding.broken", 1)]
    # the reasoning is counted as reasoning text: the client moved it to LLMResult.reasoning → raw.jsonl
    raw = {json.loads(x)["entry_id"]: json.loads(x) for x in
           (tmp_path / "w" / "raw.jsonl").read_text(encoding="utf-8").splitlines()}
    assert raw[by_source["Hello world."].entry_id]["reasoning"] == "The user wants Spanish. Translate."
    assert raw[by_source["Hello, world."].entry_id]["reasoning"] == "The user wants Spanish."
    assert raw[only.entry_id]["reasoning"] == "Spanish. Short."
    assert raw[by_source["Type <think> to start."].entry_id]["reasoning"] is None
    v = cli_support.invoke(["validate", str(tmp_path / "w" / "card.json"), "--root", str(tmp_path), "--corpora",
                            str(corpora)], cwd=tmp_path)
    assert v.returncode == 0, v.stdout + v.stderr


def test_docs_providers_lists_each_reasoning_format_with_its_source():
    text = (Path(__file__).resolve().parents[1] / "docs" / "providers.md").read_text(encoding="utf-8")
    section = text.split("## Reasoning formats", 1)[1].split("\n## ", 1)[0]
    rows = {ln.split("|")[1].strip(): ln for ln in section.splitlines() if ln.startswith("| `")}
    assert set(rows) == {f"`{f.name}`" for f in FORMATS}
    for f in FORMATS:
        for url in (u.split(" ")[0] for u in f.source.split("; ")):
            assert f"<{url}>" in rows[f"`{f.name}`"], (f.name, url)


@pytest.mark.parametrize("raw, answer, reasoning, unclosed", [
    ("<think>a</think>X</think>Y", "Y", ("a", "X"), None),  # a block, then a stray close: the answer follows it
    ("x</think><think>y</think>Hola", "Hola", ("x", "y"), None),  # a stray close, then a block
    ("<think>a</think>b<think>c", "b<think>c", ("a",), "think"),  # closed blocks off, the open one left: unclosed
    ("<think><think>a</think>", "<think><think>a</think>", (), "think"),  # nested, the outer never closes
])
def test_stray_and_unclosed_mixtures(raw, answer, reasoning, unclosed):
    split = split_reasoning(raw)
    assert (split.answer, split.reasoning, split.unclosed) == (answer, reasoning, unclosed)


def test_a_degenerate_answer_is_split_in_linear_time():
    import time

    raw = "<think>" * 50_000 + "x"  # a model repeating the open marker up to its token cap
    t0 = time.perf_counter()
    split = split_reasoning(raw)
    assert split.unclosed == "think" and time.perf_counter() - t0 < 1.0
    raw = "</think>" * 50_000 + "Hola"
    assert split_reasoning(raw).answer == "Hola"


# Review of issue 33, finding 12: prose that looks like a marker. Hand-made answers; the reasoning each one would carry
# if the format were (wrongly) applied is what the old code returned.
@pytest.mark.parametrize("raw, source", [
    ("Analysis of the assistantfinal report", None),  # the English word, capitalised: gpt-oss's token is lower case
    ("analysis of the assistantfinal report", None),  # lower case but spaced: the dropped tokens glue the words
    ("analysis The user wants Spanish. assistantfinal Hola mundo.", None),
    ("ANALYSISx.ASSISTANTFINALHola", None),  # the tokens are lower case
    ("Analysisx.assistantfinalHola", None),
    ("analysisx.AssistantFinalHola", None),
    ("Here is my thought process: I think it works.", "Voici mon processus de réflexion : je pense que ça marche."),
    ("Here's my thought process: first, the data.", None),  # an English sentence, no response phrase: not unclosed
    ("here is my thought process: x here is my response: Hola", None),  # vLLM's phrases are case-sensitive
    ("Here is my thought process: x Here is my Response: Hola", None),
    ("< think>x</ think>Hola mundo.", None),  # a spaced tag is no tag (the servers look for the exact string)
])
def test_prose_that_looks_like_a_marker_is_left_whole(raw, source):
    split = split_reasoning(raw, source)
    assert (split.answer, split.reasoning, split.formats, split.unclosed) == (raw, (), (), None)
    p, d = policy(raw, source=source or "Hello world.", reference=raw)
    assert (p, d.outcome) == (raw, Outcome.usable) and "think.stripped" not in {f.rule for f in d.flags}
    v = verdict(raw, source=source)
    assert (v.outcome, v.text, v.reasoning) == ("ok", raw, None)


@pytest.mark.parametrize("raw, answer, reasoning, fmt", [
    ("analysisx.assistantfinalHola", "Hola", ("x.",), "harmony-text"),
    ("  analysisWe need Spanish.assistantfinal Hola mundo.", " Hola mundo.", ("We need Spanish.",), "harmony-text"),
    ("analysis\u00bfQu\u00e9?assistantfinalHola", "Hola", ("\u00bfQu\u00e9?",), "harmony-text"),
    ("Here's my thought process: x Here's my response: Hola", " Hola", ("x",), "granite"),
    ("Here is my thought process:a\nb\nHere is my response:\nHola", "\nHola", ("a\nb",), "granite"),
    # `<THINK >` is no tag, but `</THINK>` is a close marker: what precedes it is a block the template opened
    ("<THINK >x</THINK>Hola mundo.", "Hola mundo.", ("<THINK >x",), "think"),
])
def test_what_the_models_emit_is_still_split(raw, answer, reasoning, fmt):
    split = split_reasoning(raw)
    assert (split.answer, split.reasoning, split.formats, split.unclosed) == (answer, reasoning, (fmt,), None)


def test_a_granite_opening_without_the_response_phrase_is_the_answer():
    """vLLM's GraniteReasoningParser: no match of both phrases → all content (the old code said unclosed)."""
    raw = "Here is my thought process: still thinking"
    assert split_reasoning(raw) == split_reasoning(raw, "Voilà.")
    assert split_reasoning(raw).answer == raw and split_reasoning(raw).unclosed is None
    p, d = policy(raw, reference=raw)
    assert (p, d.outcome, d.rule) == (raw, Outcome.usable, None)
    assert split_think(raw) == (raw, None, False)


# --------------------------------------------------------------------------------------------------------------------
# Each rule on hand-made answers, compared whole (answer, reasoning, formats, wrapped, unclosed): the cases the mutation
# run (scripts/mutation.py checks) found unpinned.

@pytest.mark.parametrize("raw, source, expected", [
    ("Hola mundo.", None, ReasoningSplit("Hola mundo.")),  # nothing found: wrapped False, unclosed None
    ("Escriba <response> aquí.", None, ReasoningSplit("Escriba <response> aquí.")),  # a wrapper tag not around it
    ("<think>x", None, ReasoningSplit("<think>x", (), (), False, "think")),
    ("<think>a</think>b<think>c", None, ReasoningSplit("b<think>c", ("a",), ("think",), False, "think")),
    ("<|channel|>analysis<|message|>I'm", None,
     ReasoningSplit("<|channel|>analysis<|message|>I'm", (), (), False, "harmony")),
    # `<|channel|>` without a header: Harmony finds nothing, the other formats still apply
    ("<|channel|> <think>a</think>Hola", None, ReasoningSplit("<|channel|> Hola", ("a",), ("think",))),
    ("Hola <|channel|> mundo", None, ReasoningSplit("Hola <|channel|> mundo")),
    # special tokens present: they were not dropped, so it is not harmony-text
    ("analysisx.<|channel|>assistantfinalHola", None, ReasoningSplit("analysisx.<|channel|>assistantfinalHola")),
    # two final messages are one answer; what is left outside messages loses Harmony's residue tokens
    ("<|channel|>final<|message|>Hola<|end|><|start|>assistant<|channel|>final<|message|> mundo.", None,
     ReasoningSplit("Hola mundo.", (), ("harmony",))),
    ("<|channel|>analysis<|message|>x<|end|><|start|>assistant", None, ReasoningSplit("", ("x",), ("harmony",))),
    ("<|channel|>analysis<|message|>x<|end|><|return|>", None, ReasoningSplit("", ("x",), ("harmony",))),
    # no final message: the text outside the messages, before and after, is the answer
    ("Hola <|channel|>analysis<|message|>x<|end|> mundo.", None, ReasoningSplit("Hola  mundo.", ("x",), ("harmony",))),
    # the source rule: each answer wrapper on its own, in any letter case; every reasoning marker of a format
    ("<answer>Hola</answer>", "<answer>Hello</answer>", ReasoningSplit("<answer>Hola</answer>")),
    ("<answer>Hola</answer>", "<ANSWER>Hello</ANSWER>", ReasoningSplit("<answer>Hola</answer>")),
    ("<answer>Hola</answer>", "Use <response> tags.", ReasoningSplit("Hola", (), ("think",), True)),
    ("<|channel|>analysis<|message|>x<|end|><|channel|>final<|message|>Hola", "Then <|message|> follows.",
     ReasoningSplit("<|channel|>analysis<|message|>x<|end|><|channel|>final<|message|>Hola")),
    ("analysisx.assistantfinalHola", "Say ASSISTANTFINAL.", ReasoningSplit("analysisx.assistantfinalHola")),
    ("<think>a</think>Hola", "Type </THINK>.", ReasoningSplit("<think>a</think>Hola")),
    # stray closes: the reasoning before each is one block, in order with the closed blocks
    ("<think>a</think>X</think><think>b</think>Y", None, ReasoningSplit("Y", ("a", "X", "b"), ("think",))),
    ("a</think>b</think>Hola", None, ReasoningSplit("Hola", ("ab",), ("think",))),
])
def test_split_reasoning_whole_result(raw, source, expected):
    assert split_reasoning(raw, source) == expected


def test_think_flag_names_every_format_and_counts_in_the_singular_and_plural():
    _, d = policy("<think>a</think>[THINK]bc[/THINK]Hola")
    assert [(f.rule, f.detail, f.count) for f in d.flags] == [
        ("think.stripped", "think, mistral: 2 reasoning blocks, 3 characters", 2)]
    _, d = policy("<think>a</think>Hola")
    assert [(f.rule, f.detail, f.count) for f in d.flags] == [
        ("think.stripped", "think: 1 reasoning block, 1 character", 1)]


PAIR_CASES = [  # (raw, expected) for freshly compiled pair formats; hand-checked
    ("<think>a</think>Hola", ReasoningSplit("Hola", ("a",), ("think",))),
    ("<THINK>a</Think>Hola", ReasoningSplit("Hola", ("a",), ("think",))),  # tag-like: any letter case
    ("[think]a[/think]Hola", ReasoningSplit("Hola", ("a",), ("mistral",))),
    ("<think>a<think>b</think>c</think>d", ReasoningSplit("d", ("abc",), ("think",))),
    ("a</think>Hola", ReasoningSplit("Hola", ("a",), ("think",))),
    ("<|start_thinking|>a<|end_thinking|>Hola", ReasoningSplit("<|start_thinking|>a<|end_thinking|>Hola")),
    ("<|START_THINKING|>a<|END_THINKING|><|START_RESPONSE|>Hola<|END_RESPONSE|>",
     ReasoningSplit("Hola", ("a",), ("command-r",), True)),
    ("<|START_RESPONSE|>Hola<|END_RESPONSE|>", ReasoningSplit("Hola", (), ("command-r",), True)),
    ("<|start_response|>Hola<|end_response|>", ReasoningSplit("<|start_response|>Hola<|end_response|>")),
    # special tokens exactly: the lower-case close inside the block is text of the reasoning
    ("<|START_THINKING|>a<|end_thinking|>b<|END_THINKING|>Hola",
     ReasoningSplit("Hola", ("a<|end_thinking|>b",), ("command-r",))),
    (" <RESPONSE>Hola</Response> \n", ReasoningSplit("Hola", (), ("think",), True)),  # wrapper: any case, spaces
    ("<answer>Hola</answer>", ReasoningSplit("Hola", (), ("think",), True)),
    ("<response>Hola", ReasoningSplit("Hola", (), ("think",), True)),
    ("Say <response> now", ReasoningSplit("Say <response> now")),
    *[(f"{f.open}x{f.close}Hola", ReasoningSplit("Hola", ("x",), (f.name,))) for f in FORMATS if f.kind == "pair"],
    *[(f"{f.open}x", ReasoningSplit(f"{f.open}x", (), (), False, f.name)) for f in FORMATS if f.kind == "pair"],
]


@pytest.mark.parametrize("raw, expected", PAIR_CASES)
def test_pair_formats_compiled_afresh(raw, expected, monkeypatch):
    """The pair formats' patterns are compiled once at import; compiled again here, so that what the constructor
    builds (the either-marker pattern and its letter case, the open marker, the wrappers, the trigger strings) is
    what these answers exercise."""
    monkeypatch.setattr(reasoning, "_PAIRS", {f.name: reasoning._Pair(f) for f in FORMATS if f.kind == "pair"})
    assert split_reasoning(raw) == expected
