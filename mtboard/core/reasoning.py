"""The one table of reasoning formats: how an open model's answer separates its reasoning from the answer when the
server hands the raw text through (no reasoning parser, or ``--reasoning-format none``), and the one function that
splits them, :func:`split_reasoning` (issue 33, item 2).

Both layers read this table: the client's verdict (:func:`mtboard.llm.policy.judge`, rule 7: what is visible, what is
reasoning, an unclosed block, an answer that is only reasoning) and the mechanical policy
(:func:`mtboard.score.checks.apply_policy`: the hypothesis, the ``think.stripped`` flag with the formats it found,
``unclosed_think``, ``empty``). docs/providers.md ("Reasoning formats") shows the same table for readers.

Each row was checked in the parser that serves the family (as read for issue 33; the URLs are in
:data:`FORMATS`, and in docs/providers.md, "Reasoning formats"):

* llama.cpp ``common/chat-parser.cpp`` at commit 05e5139a (the ``common_chat_parse_*`` functions behind
  ``--reasoning-format``), and its tests ``tests/test-chat.cpp``:
  https://github.com/ggml-org/llama.cpp/blob/05e5139a834dddce401cc3108133b5620c07f21a/common/chat-parser.cpp
* vLLM ``vllm/reasoning/*_reasoning_parser.py`` (``--reasoning-parser``) and ``tests/reasoning/``:
  https://github.com/vllm-project/vllm/tree/main/vllm/reasoning
* Kimi-VL's ``◁think▷``: LLaMA-Factory's ``kimi_vl`` chat template (``thought_words``),
  https://github.com/hiyouga/LLaMA-Factory/blob/main/src/llamafactory/data/template.py; the model card
  (https://huggingface.co/moonshotai/Kimi-VL-A3B-Thinking) names the model, its text could not be read here;
* gpt-oss behind a server that drops special tokens (``analysis…assistantfinal…``): oobabooga/textgen issue 7374,
  https://github.com/oobabooga/textgen/issues/7374, whose quoted answer is a test case.

The formats (name: markers — families, parser):

* ``harmony``: ``<|channel|>analysis<|message|>…<|end|>`` and ``commentary`` messages are reasoning, the ``final``
  channel is the answer; ``<|start|>assistant``, ``<|end|>``, ``<|return|>``, ``<|call|>`` open or end messages —
  gpt-oss (llama.cpp ``gpt_oss``; vLLM ``openai_gptoss``).
* ``harmony-text``: ``analysis…assistantfinal…`` at the start of the answer — gpt-oss with special tokens dropped.
  Harmony's header tokens are lower-case words glued to their neighbours once ``<|channel|>``, ``<|message|>``,
  ``<|end|>`` and ``<|start|>`` are gone: ``<|channel|>analysis<|message|>We need…<|end|><|start|>assistant<|channel|>
  final<|message|>Hola`` reads ``analysisWe need…assistantfinalHola`` (the issue's quoted answer:
  ``analysisUser says "Hello World!" …politely.assistantfinalHello!``). So the format matches only that: ``analysis``
  in lower case, glued to the reasoning's first character (no space after it), and ``assistantfinal`` in lower case;
  prose such as ``Analysis of the assistantfinal report`` or ``analysis of the data … assistantfinal`` is left whole.
* ``think``: ``<think>…</think>``; a template-opened block shows only ``</think>``; answer wrappers
  ``<response>…</response>`` (Granite 3.3, ERNIE 4.5) and ``<answer>…</answer>`` (Hunyuan A13B) — DeepSeek-R1/V3.1,
  Qwen3/QwQ, GLM-4.5, Kimi K2, MiniMax-M2, Nemotron, Hermes, Olmo 3, Step3 (llama.cpp ``deepseek_r1``, ``granite``,
  ``nemotron_v2``, ``kimi_k2``, ``minimax_m2``, ``glm_4_5``; vLLM ``deepseek_r1``, ``qwen3``, ``step3``, ``olmo3``,
  ``ernie45``, ``hunyuan_a13b``).
* ``mistral``: ``[THINK]…[/THINK]`` — Magistral, Ministral 3 reasoning (llama.cpp ``magistral``; vLLM ``mistral``).
* ``seed``: ``<seed:think>…</seed:think>`` — ByteDance Seed-OSS (llama.cpp ``seed_oss``; vLLM ``seed_oss``).
* ``command-r``: ``<|START_THINKING|>…<|END_THINKING|>``, answer wrapper ``<|START_RESPONSE|>…<|END_RESPONSE|>`` —
  Cohere Command R7B / Command A reasoning (llama.cpp ``command_r7b``; vLLM ``cohere_command3``).
* ``apertus``: ``<|inner_prefix|>…<|inner_suffix|>`` — Swiss AI Apertus (llama.cpp ``apertus``).
* ``thinking``: ``<thinking>…</thinking>`` — ServiceNow Apriel 1.5 (llama.cpp ``apriel_1_5``).
* ``kimi-vl``: ``◁think▷…◁/think▷`` — Moonshot Kimi-VL-A3B-Thinking (LLaMA-Factory ``kimi_vl``).
* ``granite``: ``Here is my thought process:`` … ``Here is my response:`` (``Here's`` too) at the start of the
  answer — IBM Granite 3.2 (vLLM ``granite``). Both phrases are needed, in the letter case the model writes them, as
  vLLM's ``GraniteReasoningParser.extract_reasoning_content`` reads them (no match: "all content is considered
  non-reasoning content"): an answer that only starts with ``Here is my thought process:`` — an English translation
  of a sentence that says so — is the answer, not an unclosed block (Granite's phrases are plain English, unlike the
  other formats' markers).

Left out because the sources could not be checked here: Apriel's ``[BEGIN FINAL RESPONSE]`` (llama.cpp reads Apriel
1.5 with ``<thinking>`` only), Gemma 4's and the DeepSeek V4 "engine" parsers (token-level, no text markers in the
files read), Hunyuan's newer ``hy_v3``/``hy_v4`` parsers.

Rules, the same for every format:

1. A marker that also occurs in the entry's ``source`` is text to translate, not reasoning: a format either of whose
   reasoning markers (letter case: the last paragraph below) occurs in the source is not applied to that
   entry, and an answer wrapper whose open or close tag occurs there is not removed. ``source=None`` (a judge, a
   probe) applies every format.
2. Closed blocks are removed, each one's text kept as reasoning; blocks may repeat and nest (``<think>a<think>b
   </think>c</think>d`` → answer ``d``, reasoning ``abc``: an outermost block comes off whole). One pass over the
   markers, linear in the answer's length.
3. A close marker left without an open one (the chat template opened the block in the prompt) drops everything
   before it, which is reasoning.
4. An open marker left without its close: the block never closed, there is no answer (``unclosed``). Not for
   Granite's phrases (plain English: the answer is left whole) nor ``harmony-text`` (both need their second marker).
5. An answer wrapper around what is left (``<|START_RESPONSE|>``, ``<response>``, ``<answer>``) is unwrapped.
6. Harmony: every ``final`` message is the answer; ``analysis`` and ``commentary`` messages are reasoning; with no
   ``final`` message, the text outside any message is the answer (often empty: an answer that is only reasoning),
   or, when the last message never ended, the block is unclosed.

Tag-like markers (``<think>``, ``[THINK]``, ``<seed:think>``, ``<thinking>``, ``<response>``, ``<answer>``) match in
any letter case, but only as written: ``<THINK >`` or ``< think>`` is no tag (llama.cpp and vLLM look for the exact
strings ``<think>``/``</think>``; a server emits exact tags), so ``<THINK >x</THINK>Hola`` is a block the template
opened, closed by ``</THINK>``: answer ``Hola``, reasoning ``<THINK >x``. Special tokens (``<|…|>``, ``◁think▷``),
the Granite phrases and ``analysis``/``assistantfinal`` match in the answer exactly as the model writes them.

The source rule (1) compares markers with the source in the letter case of each format's ``ignore_case``
(``str.casefold`` when set): in any letter case for the tag-like formats (``think`` with its ``<response>``/
``<answer>`` wrappers, ``mistral``, ``seed``, ``thinking``), ``harmony-text``'s ``assistantfinal`` and Granite's
phrases; exactly as written for the special-token formats (``harmony``: ``<|channel|>``, ``<|message|>``;
``command-r`` with its ``<|START_RESPONSE|>`` wrapper; ``apertus``; ``kimi-vl``), whose tokens a tokenizer only
emits in one spelling — so a source holding ``<|CHANNEL|>`` does not stop Harmony's ``<|channel|>`` from being split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FORMATS", "ReasoningFormat", "ReasoningSplit", "split_reasoning"]


@dataclass(frozen=True)
class ReasoningFormat:
    """One row of the table (module docstring): a reasoning format, its markers and where each was checked."""

    name: str
    """Short name, as recorded in the ``think.stripped`` flag's detail."""
    families: str
    markers: str
    """The markers as a reader sees them (docs/providers.md)."""
    source: str
    """Where the markers were checked: parser file or model card (URL)."""
    open: str | None = None
    close: str | None = None
    wrappers: tuple[tuple[str, str], ...] = ()
    """Answer wrappers (open, close) removed around the answer."""
    ignore_case: bool = True
    kind: str = "pair"
    """``pair`` (open … close), ``harmony``, ``harmony-text`` or ``phrase`` (Granite's sentences)."""

    def all_markers(self) -> tuple[str, ...]:
        """The format's reasoning markers (the source rule compares these with the entry's source; each answer
        wrapper is compared on its own)."""
        if self.kind == "harmony":
            return ("<|channel|>", "<|message|>")
        if self.kind == "harmony-text":
            return ("assistantfinal",)
        if self.kind == "phrase":
            return _GRANITE_PHRASES
        return tuple(m for m in (self.open, self.close) if m)

    def in_source(self, source: str | None) -> bool:
        """True when one of the format's reasoning markers occurs in ``source`` (then the format is not applied)."""
        return _occurs(self.all_markers(), source, self.ignore_case)


def _occurs(markers: tuple[str, ...], source: str | None, ignore_case: bool) -> bool:
    if not source:
        return False
    hay = source.casefold() if ignore_case else source
    return any((m.casefold() if ignore_case else m) in hay for m in markers)


_LLAMA = "https://github.com/ggml-org/llama.cpp/blob/05e5139a834dddce401cc3108133b5620c07f21a/common/chat-parser.cpp"
_VLLM = "https://github.com/vllm-project/vllm/blob/main/vllm/reasoning/"
_GRANITE_PHRASES = ("Here is my thought process:", "Here's my thought process:", "Here is my response:",
                    "Here's my response:")

FORMATS: tuple[ReasoningFormat, ...] = (
    ReasoningFormat(
        "harmony", "gpt-oss (OpenAI Harmony)",
        "`<|channel|>analysis<|message|>…<|end|>` and `commentary` are reasoning; `<|channel|>final<|message|>…` is "
        "the answer (`<|start|>assistant`, `<|end|>`, `<|return|>`, `<|call|>` open or end messages)",
        f"{_LLAMA} (common_chat_parse_gpt_oss); {_VLLM}gptoss_reasoning_parser.py",
        ignore_case=False, kind="harmony"),
    ReasoningFormat(
        "harmony-text", "gpt-oss behind a server that drops special tokens",
        "`analysis…assistantfinal…` at the start of the answer",
        "https://github.com/oobabooga/textgen/issues/7374", kind="harmony-text"),
    ReasoningFormat(
        "think", "DeepSeek-R1/V3.1, Qwen3/QwQ, GLM-4.5, Kimi K2, MiniMax-M2, Nemotron, Hermes, Olmo 3, Step3 "
        "(only `</think>`), ERNIE 4.5 and Granite 3.3 (`<response>`), Hunyuan A13B (`<answer>`)",
        "`<think>…</think>` (a template-opened block shows only `</think>`); answer wrappers `<response>…</response>`, "
        "`<answer>…</answer>`",
        f"{_LLAMA} (deepseek_r1, granite, nemotron_v2, kimi_k2, minimax_m2, glm_4_5); "
        + "; ".join(f"{_VLLM}{n}_reasoning_parser.py" for n in ("deepseek_r1", "qwen3", "step3", "olmo3", "ernie45",
                                                                "hunyuan_a13b")),
        open="<think>", close="</think>", wrappers=(("<response>", "</response>"), ("<answer>", "</answer>"))),
    ReasoningFormat(
        "mistral", "Mistral Magistral, Ministral 3 reasoning", "`[THINK]…[/THINK]`",
        f"{_LLAMA} (common_chat_parse_magistral); {_VLLM}mistral_reasoning_parser.py",
        open="[THINK]", close="[/THINK]"),
    ReasoningFormat(
        "seed", "ByteDance Seed-OSS", "`<seed:think>…</seed:think>`",
        f"{_LLAMA} (common_chat_parse_seed_oss); {_VLLM}seedoss_reasoning_parser.py",
        open="<seed:think>", close="</seed:think>"),
    ReasoningFormat(
        "command-r", "Cohere Command R7B, Command A reasoning",
        "`<|START_THINKING|>…<|END_THINKING|>`; answer wrapper `<|START_RESPONSE|>…<|END_RESPONSE|>`",
        f"{_LLAMA} (common_chat_parse_command_r7b); {_VLLM}cohere_command_reasoning_parser.py",
        open="<|START_THINKING|>", close="<|END_THINKING|>",
        wrappers=(("<|START_RESPONSE|>", "<|END_RESPONSE|>"),), ignore_case=False),
    ReasoningFormat(
        "apertus", "Swiss AI Apertus", "`<|inner_prefix|>…<|inner_suffix|>`",
        f"{_LLAMA} (common_chat_parse_apertus)",
        open="<|inner_prefix|>", close="<|inner_suffix|>", ignore_case=False),
    ReasoningFormat(
        "thinking", "ServiceNow Apriel 1.5", "`<thinking>…</thinking>`",
        f"{_LLAMA} (common_chat_parse_apriel_1_5)",
        open="<thinking>", close="</thinking>"),
    ReasoningFormat(
        "kimi-vl", "Moonshot Kimi-VL-A3B-Thinking", "`◁think▷…◁/think▷`",
        "https://github.com/hiyouga/LLaMA-Factory/blob/main/src/llamafactory/data/template.py (kimi_vl); "
        "https://huggingface.co/moonshotai/Kimi-VL-A3B-Thinking",
        open="◁think▷", close="◁/think▷", ignore_case=False),
    ReasoningFormat(
        "granite", "IBM Granite 3.2",
        "`Here is my thought process:` … `Here is my response:` (`Here's` too) at the start of the answer",
        f"{_VLLM}granite_reasoning_parser.py", kind="phrase"),
)
"""Every reasoning format, in the order they are applied (Harmony first: its channels decide what the answer is)."""


@dataclass(frozen=True)
class ReasoningSplit:
    """What :func:`split_reasoning` found. ``answer``: the text left (not trimmed); ``reasoning``: each removed block's
    text, trimmed, in order; ``formats``: names of the formats whose markup was removed (table order); ``wrapped``:
    an answer wrapper was removed; ``unclosed``: the name of the format whose block never closed (then ``answer`` is
    the text with only the closed blocks removed, and there is no answer)."""

    answer: str
    reasoning: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    wrapped: bool = False
    unclosed: str | None = None

    @property
    def stripped(self) -> bool:
        """True when any reasoning markup (or an answer wrapper) was removed."""
        return bool(self.formats)

    @property
    def reasoning_text(self) -> str:
        """The removed reasoning, blocks joined by a newline (``""`` when none)."""
        return "\n".join(r for r in self.reasoning if r)

    @property
    def reasoning_chars(self) -> int:
        """Characters of reasoning removed (the blocks' trimmed text)."""
        return sum(len(r) for r in self.reasoning)


class _Pair:
    """Compiled patterns of a ``pair`` format."""

    def __init__(self, fmt: ReasoningFormat):
        assert fmt.open is not None and fmt.close is not None
        flags = re.I if fmt.ignore_case else 0
        self.either = re.compile(f"{re.escape(fmt.open)}|{re.escape(fmt.close)}", flags)
        self.open_key = fmt.open.casefold() if fmt.ignore_case else fmt.open
        self.wrappers = [((a, b), re.compile(r"\A\s*" + re.escape(a), flags),
                          re.compile(re.escape(b) + r"\s*\Z", flags)) for a, b in fmt.wrappers]
        self.trigger = tuple(m.casefold() if fmt.ignore_case else m
                             for m in (fmt.open, fmt.close, *(a for a, _ in fmt.wrappers)))
        self.ignore_case = fmt.ignore_case

    def split(self, text: str) -> tuple[str, list[str], bool, bool] | None:
        """(answer, reasoning blocks, unclosed, found) in one pass over the markers (linear in the text, whatever the
        nesting): outermost blocks are removed whole (markers inside them dropped from the reasoning); the answer
        follows the last close marker left without an open one; an open marker still open at the end is unclosed
        (then the answer is the text with the closed blocks removed). None when no marker occurs."""
        depth, start, spans, stray = 0, 0, [], None
        for m in self.either.finditer(text):
            tok = m.group(0).casefold() if self.ignore_case else m.group(0)
            if tok == self.open_key:
                if depth == 0:
                    start = m.start()
                depth += 1
            elif depth == 0:
                stray = m
            else:
                depth -= 1
                if depth == 0:
                    spans.append((start, m.end()))
        if not spans and stray is None and depth == 0:
            return None
        blocks = [self.either.sub("", text[a:b]).strip() for a, b in spans]
        outside, pos = [], 0
        for a, b in spans:
            outside.append((pos, a))
            pos = b
        outside.append((pos, len(text)))
        if depth:
            return "".join(text[a:b] for a, b in outside), blocks, True, bool(spans)
        if stray is not None:  # the template opened the block in the prompt: everything before the close is reasoning
            cut_a, cut_b = stray.start(), stray.end()
            pre = "".join(text[a:min(b, cut_a)] for a, b in outside if a < cut_a)
            blocks = [*blocks[:sum(1 for a, _ in spans if a < cut_a)], self.either.sub("", pre).strip(),
                      *blocks[sum(1 for a, _ in spans if a < cut_a):]]
            outside = [(max(a, cut_b), b) for a, b in outside if b > cut_b]
        return "".join(text[a:b] for a, b in outside), blocks, False, True


_PAIRS = {f.name: _Pair(f) for f in FORMATS if f.kind == "pair"}

_H_HEADER = re.compile(r"(?:<\|start\|>[^<]*)?<\|channel\|>(?P<channel>[A-Za-z_]*)"
                       r"(?P<rest>(?:(?!<\|message\|>|<\|channel\|>|<\|start\|>).)*)<\|message\|>", re.S)
_H_END = re.compile(r"<\|end\|>|<\|return\|>|<\|call\|>|(?=<\|start\|>|<\|channel\|>)")
_H_RESIDUE = re.compile(r"<\|start\|>[A-Za-z_]*|<\|end\|>|<\|return\|>|<\|call\|>")
# gpt-oss with special tokens dropped: ``analysis`` glued to the reasoning, ``assistantfinal`` — lower case as the
# tokens are (oobabooga/textgen issue 7374); Granite: vLLM granite_reasoning_parser.py's regex, case as written
_H_TEXT = re.compile(r"\A\s*analysis(?=\S)(?P<reasoning>.*?)assistantfinal(?P<answer>.*)\Z", re.S)
_GRANITE = re.compile(r"\A\s*(?:Here's|Here is) my thought process:(?P<reasoning>.*?)"
                      r"(?:Here's|Here is) my response:(?P<answer>.*)\Z", re.S)


def _harmony(text: str) -> tuple[str, list[str], bool] | None:
    """(answer, reasoning blocks, unclosed) for a Harmony answer; None when no message header occurs. The headers
    found never overlap a message body: a body ends at ``<|end|>``/``<|return|>``/``<|call|>`` or just before the next
    ``<|start|>``/``<|channel|>``, where the next header begins."""
    pos, outside, finals, reasoning = 0, [], [], []
    last_open = False  # set by every message; read only when there was one
    for m in _H_HEADER.finditer(text):
        outside.append(text[pos:m.start()])
        end = _H_END.search(text, m.end())
        body_end = end.start() if end else len(text)
        body = text[m.end():body_end]
        last_open = end is None
        pos = end.end() if end else len(text)
        if m.group("channel").lower() == "final":
            finals.append(body)
        else:
            reasoning.append(body.strip())
    if not outside:  # one piece per header found
        return None
    outside.append(text[pos:])
    if finals:
        return "".join(finals), reasoning, False
    rest = _H_RESIDUE.sub("", "".join(outside))
    return rest, reasoning, last_open and not rest.strip()


def split_reasoning(text: str, source: str | None = None) -> ReasoningSplit:
    """Split ``text`` (a model's answer as the server sent it) into the answer and its reasoning by every format of
    :data:`FORMATS`, under the rules of the module docstring (a marker that occurs in ``source`` is left alone).

    Examples: ``"<think>The user wants Spanish.</think>Hola mundo."`` → answer ``"Hola mundo."``, reasoning
    ``("The user wants Spanish.",)``, formats ``("think",)``; ``"<|channel|>analysis<|message|>Translate.<|end|>
    <|start|>assistant<|channel|>final<|message|>Hola mundo."`` → ``"Hola mundo."`` (``harmony``);
    ``"[THINK]x"`` → unclosed ``"mistral"``; ``"<think>x</think>"`` with source ``"Type <think>"`` → unchanged.

    Raises: nothing for any string (model output is untrusted, never an error here).
    """
    low = text.casefold()
    reasoning: list[str] = []
    formats: list[str] = []
    wrapped = False
    for fmt in FORMATS:
        if fmt.kind == "harmony":
            if "<|channel|>" not in text or fmt.in_source(source):
                continue
            h = _harmony(text)
            if h is None:
                continue
            answer, blocks, unclosed = h
            if unclosed:
                return ReasoningSplit(text, tuple(reasoning), tuple(formats), wrapped, "harmony")
            text = answer
            reasoning += blocks
            formats.append("harmony")
        elif fmt.kind == "harmony-text":
            if "assistantfinal" not in text or "<|channel|>" in text or fmt.in_source(source):
                continue
            m = _H_TEXT.match(text)
            if m:
                text = m.group("answer")
                reasoning.append(m.group("reasoning").strip())
                formats.append(fmt.name)
        elif fmt.kind == "phrase":
            if "my response:" not in text or fmt.in_source(source):
                continue
            m = _GRANITE.match(text)
            if m:
                text = m.group("answer")
                reasoning.append(m.group("reasoning").strip())
                formats.append(fmt.name)
        else:
            p = _PAIRS[fmt.name]
            if not any(t in (low if p.ignore_case else text) for t in p.trigger) or fmt.in_source(source):
                continue
            found = False
            res = p.split(text)
            if res is not None:
                answer, blocks, unclosed, found = res
                reasoning += blocks
                if unclosed:
                    return ReasoningSplit(answer, tuple(reasoning), tuple(formats + ([fmt.name] if found else [])),
                                          wrapped, fmt.name)
                text = answer
            for markers, w_open, w_close in p.wrappers:
                if _occurs(markers, source, p.ignore_case):
                    continue
                m = w_open.match(text)
                if m:
                    text = w_close.sub("", text[m.end():], count=1)
                    wrapped = found = True
            if found:
                formats.append(fmt.name)
        low = text.casefold()
    return ReasoningSplit(text, tuple(reasoning), tuple(formats), wrapped)
