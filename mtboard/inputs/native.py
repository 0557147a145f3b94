"""Native prompt formats (issue 40 item 4): which model family a served model belongs to, and the prompt template
its model card documents.

:data:`FAMILIES` is the family → format table; :func:`choose` picks a row from *evidence*, the ``(source, value)``
pairs a model server reported about the model it serves (:func:`mtboard.llm.serverinfo.prompt_evidence` turns a
:class:`~mtboard.llm.serverinfo.ServerIdentity` into them; the local GGUF backend reads its file's metadata).
``mtboard run`` without ``--prompt`` uses the chosen template for a backend that can say what it serves (the
OpenAI-compatible backend, the local GGUF backend; :meth:`mtboard.backends.base.Backend.prompt_evidence`);
``--prompt`` always wins. The choice and why is the card's ``method.prompt_choice``
(:class:`mtboard.core.schema.PromptChoice`), part of the fingerprint.

Evidence sources (``source`` names what the server said, where):

======================================  ==============================================================  ==========
source                                  what                                                            kind
======================================  ==============================================================  ==========
``gguf.general.architecture``           the GGUF file's ``general.architecture`` key (local GGUF)       metadata
``ollama.model_info.general.architecture``  Ollama ``POST /api/show`` ``model_info``                    metadata
``ollama.details.family``               Ollama ``POST /api/show`` ``details.family``                    metadata
``gguf.general.name``                   the GGUF file's ``general.name`` / ``general.basename``         name
``ollama.model_info.general.basename``  Ollama ``/api/show`` ``model_info["general.basename"]``          name
``gguf.file_name``                      the local GGUF file's name (``gguf:`` backend)                  name
``props.model_path``                    llama.cpp ``GET /props`` ``model_path`` (its file name only)    name
``vllm.root``                           vLLM ``/v1/models`` ``root`` (the Hugging Face repo it loaded)  name
``ollama.model``                        the Ollama model name serving the request                       name
``v1/models.id``                        the ``/v1/models`` id serving the request                       name
``gguf.tokenizer.chat_template``        whether the GGUF file carries a chat template                   base?
``props.chat_template``                 llama.cpp ``/props`` ``chat_template`` (present or absent)      base?
``ollama.template``                     Ollama ``/api/show`` ``template`` (absent: ``{{ .Prompt }}``)   base?
======================================  ==============================================================  ==========

Precedence (:func:`choose`): metadata over names, except for the rows without metadata values. TranslateGemma,
HY-MT and CAT-Translate are fine-tunes whose metadata is their base model's (``general.architecture`` ``gemma3`` for
TranslateGemma, ``llama`` for CAT-Translate, Ollama's ``details.family`` likewise), and Mistral's GGUF files say
``llama`` too, so no metadata can tell them apart: they are recognised by name first, in any name source. Then the
other families by metadata (architecture before Ollama's family; ``llama`` is Llama 3 only when a name says
Llama 3 too: Llama 2, TinyLlama, SmolLM2 and Ministral GGUFs say ``llama`` as well), then by name, sources in the
order above. Names are matched at a word start in the weights' name (the last path component, or a Hugging Face
cache path's repo name); the name-only rows read the weights' names (file, ``general.name``, repo) and a served alias
(``/v1/models`` id, Ollama model name) only when no weight name was said, since an operator picks the alias freely. No match: no family, the
backend's default template, reason "family not recognised".

A chat-model family (Gemma, Llama, Qwen, Mistral) whose weights carry no chat template (the ``base?`` sources say
``absent`` and none says ``present``) is a base (pretrained) model: it continues text and follows no instruction
format, so :attr:`Choice.base_model` is set and the run gets the base-model prompt (``few-shot-completion`` where it
has examples for the language pair, else the backend's default; :func:`mtboard.run.runner.choose_prompt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Source = Literal["gguf.tokenizer.chat_template", "props.chat_template", "ollama.template",
                 "gguf.general.architecture", "ollama.model_info.general.architecture", "ollama.details.family",
                 "gguf.general.name", "ollama.model_info.general.basename", "gguf.file_name", "props.model_path",
                 "vllm.root", "ollama.model", "v1/models.id"]

METADATA_SOURCES: tuple[str, ...] = ("gguf.general.architecture", "ollama.model_info.general.architecture",
                                     "ollama.details.family")
"""Sources that are the weights' own metadata (an architecture or family key), most reliable first."""
TEMPLATE_SOURCES: tuple[str, ...] = ("gguf.tokenizer.chat_template", "props.chat_template", "ollama.template")
"""Sources saying whether the weights carry a chat template (``present`` / ``absent``)."""
NAME_SOURCES: tuple[str, ...] = ("gguf.general.name", "ollama.model_info.general.basename", "gguf.file_name",
                                 "props.model_path", "vllm.root", "ollama.model", "v1/models.id")
"""Sources that are names (of the weights, the file, the repo, the served model), most reliable first."""


@dataclass(frozen=True)
class FamilyFormat:
    """One row of the family → format table."""

    family: str
    """Short id recorded on cards (``gemma``, ``translategemma`` …)."""
    label: str
    """Human name of the family and versions covered."""
    template: str
    """Prompt template name under ``prompts/``."""
    dedicated: bool
    """A dedicated translator: it translates everything it is given, so the prompt holds the card's own template
    words and source-language text only — never a harness-written instruction or context wrapper."""
    context: str
    """How history (earlier dialogue lines) is passed; ``none``: the target line alone."""
    architectures: tuple[str, ...]
    """Metadata values (GGUF ``general.architecture``, Ollama ``details.family``) that name the family; empty for
    dedicated translators (their metadata is their base model's)."""
    name_pattern: str
    """Regular expression (case-insensitive) searched in a name (the last path component, or the repo name of a
    Hugging Face cache path) at a word start: not after a letter or digit (``concat-translate`` is no CAT-Translate)."""
    card_url: str
    """The model card or format documentation cited."""
    card_quote: str
    """The documented template line(s), quoted."""
    card_note: str = ""
    """Where the card could not be read here, and where the format was taken from instead."""
    name_required: bool = False
    """The metadata value alone does not tell the format: a name must match too (``llama`` is the architecture of
    Llama 2, TinyLlama, SmolLM2 and Mistral GGUFs as well as Llama 3; only a Llama 3 name gets the Llama 3 format)."""


FAMILIES: tuple[FamilyFormat, ...] = (
    FamilyFormat(
        family="translategemma", label="TranslateGemma (Gemma 3 based, 4B/12B/27B)", template="translategemma",
        dedicated=True, context="none", architectures=(), name_pattern=r"translate[-_ ]?gemma",
        card_url="https://ollama.com/library/translategemma",
        card_quote=("TranslateGemma expects a single user message with this structure: You are a professional "
                    "{SOURCE_LANG} ({SOURCE_CODE}) to {TARGET_LANG} ({TARGET_CODE}) translator. [...] Please "
                    "translate the following {SOURCE_LANG} text into {TARGET_LANG}:\\n\\n\\n{TEXT}  Important: "
                    "There are two blank lines before the text to translate."),
        card_note=("the Hugging Face card (google/translategemma-4b-it) and its chat template are not readable "
                   "here; the text branch is taken from the Ollama library page and FastFlowLM's model docs "
                   "(docs/docs/models/translategemma.md), which quote it; rendered by hand as raw completion "
                   "because the chat template's structured content parts (source_lang_code, target_lang_code) "
                   "are dropped by llama-server")),
    FamilyFormat(
        family="hy-mt", label="Tencent HY-MT1.5 / Hunyuan-MT", template="hy-mt",
        dedicated=True, context="the card's contextual template (English version unless the source is Chinese)",
        architectures=(), name_pattern=r"hy[-_ ]?mt|hunyuan[-_ ]?mt",
        card_url="https://github.com/Tencent-Hunyuan/HY-MT/blob/main/README.md",
        card_quote=("Prompt Template for XX<=>XX Translation, excluding ZH<=>XX: Translate the following segment "
                    "into {target_language}, without additional explanation.\\n\\n{source_text} | contextual "
                    "translation: {context}\\n参考上面的信息，把下面的文本翻译成{target_language}，注意不需要翻译上文，"
                    "也不要额外解释：\\n{source_text}")),
    FamilyFormat(
        family="cat-translate", label="CyberAgent CAT-Translate (0.8b-7b, JA<->EN)", template="cat-translate",
        dedicated=True, context="none", architectures=(), name_pattern=r"cat[-_ ]?translate",
        card_url="https://huggingface.co/cyberagent/CAT-Translate-3.3b-beta/blob/main/test.py",
        card_quote=('prompt = "Translate the following {src_lang} text into {tgt_lang}.\\n\\n {src_text}"; '
                    'user_input = [{"role": "user", "content": prompt.format(...)}]'),
        card_note=("the model card (README) is not readable here; the format is the repository's own test.py "
                   "(the 3.3b-beta repository, which loads CyberAgent/CAT-Translate-3.3b); it documents no way to "
                   "pass context")),
    FamilyFormat(
        family="gemma", label="Google Gemma 3 instruction-tuned (gemma3, gemma2, gemma)", template="gemma-instruct",
        dedicated=False, context="earlier lines inside the user turn, marked as context",
        architectures=("gemma3", "gemma3n", "gemma2", "gemma"), name_pattern=r"gemma",
        card_url="https://ai.google.dev/gemma/docs/core/prompt-structure",
        card_quote=("<start_of_turn>user\\nknock knock<end_of_turn>\\n<start_of_turn>model\\nwho is there"
                    "<end_of_turn> ... The token '<end_of_turn>\\n' is the turn separator, and the prompt "
                    "prefix is '<start_of_turn>model\\n'."),
        card_note=("the same page (its Japanese and Chinese versions, read here) says the instruction-tuned models "
                   "support only the user and model roles, no system turn: system-level instructions go in the "
                   "first user turn")),
    FamilyFormat(
        family="llama", label="Meta Llama 3.x Instruct", template="llama3-instruct",
        dedicated=False, context="earlier lines inside the user message, marked as context",
        architectures=("llama",), name_pattern=r"llama[-_ ]?3", name_required=True,
        card_url="https://www.llama.com/docs/model-cards-and-prompt-formats/meta-llama-3/",
        card_quote=("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful AI "
                    "assistant for travel tips and recommendations<|eot_id|><|start_header_id|>user<|end_header_id|>"
                    "\\n\\nWhat can you help me with?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\\n")),
    FamilyFormat(
        family="qwen", label="Alibaba Qwen 2.5 / 3 (ChatML)", template="qwen-chatml",
        dedicated=False, context="earlier lines inside the user message, marked as context",
        architectures=("qwen2", "qwen3", "qwen3moe", "qwen2moe"), name_pattern=r"qwen",
        card_url="https://huggingface.co/Qwen/Qwen1.5-72B-Chat/blob/main/tokenizer_config.json",
        card_quote=("{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}} ... "
                    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"),
        card_note=("Qwen2.5/3's own chat templates (tool-calling variants of ChatML) are not readable here; the "
                   "turn format is the ChatML chat_template quoted from Qwen's tokenizer_config.json in a Hugging "
                   "Face discussion (LoneStriker/Qwen1.5-110B-Chat-GGUF #1)")),
    FamilyFormat(
        family="mistral", label="Mistral Instruct ([INST] format, v0.1-v0.3)", template="mistral-inst",
        dedicated=False, context="earlier lines inside the [INST] block, marked as context",
        architectures=(), name_pattern=r"mistral|mixtral",
        card_url="https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.1",
        card_quote=('prompt = "<s>[INST] What is your favourite condiment? [/INST]" ... chat_template: '
                    "{{ '[INST] ' + message['content'] + ' [/INST]' }} ... raise_exception('Only user and "
                    "assistant roles are supported!')"),
        card_note=("the Hugging Face card is not readable here; the format is its text as mirrored on "
                   "replicate.com/mistralai/mistral-7b-instruct-v0.1 and the v0.2 chat_template in "
                   "PrunaAI/Mistral-7B-Instruct-v0.2-bnb-4bit's tokenizer_config.json; GGUF files of Mistral "
                   "models say general.architecture llama, so the family is recognised by name")),
)
"""The family → format table, in precedence order (dedicated translators first: see the module docstring)."""


@dataclass(frozen=True)
class Choice:
    """What :func:`choose` decided: the row (None when no family was recognised), the source and value that
    decided it, and a one-line reason."""

    row: FamilyFormat | None
    source: str | None
    evidence: str | None
    reason: str
    base_model: bool = False
    """A chat-model family whose weights carry no chat template: a base model (module docstring)."""


_HF_CACHE_REPO = re.compile(r"models--[^/\\]+?--(?P<name>[^/\\]+)")

WEIGHT_NAME_SOURCES: tuple[str, ...] = ("gguf.general.name", "ollama.model_info.general.basename", "gguf.file_name",
                                        "props.model_path", "vllm.root")
"""Name sources that name the weights themselves; the others (``ollama.model``, ``v1/models.id``) are the served
alias, which an operator chooses freely (``llama-server --alias``)."""


def _name_value(value: str) -> str:
    """A name as matched: the repo name of a Hugging Face cache path (``…/models--ORG--NAME/snapshots/<rev>`` →
    NAME), else the last path component (a file or repo path names the weights by its last part, never by a folder)."""
    if not value:
        return value
    m = _HF_CACHE_REPO.search(value)
    if m:
        return m.group("name")
    return re.split(r"[/\\]", value.rstrip("/\\"))[-1]


def _matches_name(row: FamilyFormat, value: str) -> bool:
    return re.search(rf"(?<![a-z0-9])(?:{row.name_pattern})", _name_value(value), re.IGNORECASE) is not None


def choose(evidence: list[tuple[str, str]]) -> Choice:
    """The family of the served model from ``evidence`` (``(source, value)`` pairs; sources of :data:`Source`,
    others ignored; empty values ignored), by the precedence in the module docstring. Never raises."""
    items = [(s, v.strip()) for s, v in evidence if isinstance(v, str) and v.strip()]
    names = [(s, v) for src in NAME_SOURCES for s, v in items if s == src]
    # rows recognised by name only read the weights' own names; a served alias only when no weight name was said
    weight_names = [(s, v) for s, v in names if s in WEIGHT_NAME_SOURCES] or names
    for row in FAMILIES:
        if not row.architectures:  # recognised by name only: their metadata is another family's
            for s, v in weight_names:
                if _matches_name(row, v):
                    picked = Choice(row, s, v, f"{s} names a {row.label} model (recognised by name: its metadata "
                                               f"is its base model's)")
                    return picked if row.dedicated else _base_or_chat(picked, items)
    for src in METADATA_SOURCES:
        for s, v in items:
            if s != src:
                continue
            for row in FAMILIES:
                if v.lower() in row.architectures:
                    if row.name_required:
                        named = next(((ns, nv) for ns, nv in names if _matches_name(row, nv)), None)
                        if named is None:  # e.g. a Llama 2, TinyLlama or SmolLM2 GGUF: architecture llama too
                            continue
                        return _base_or_chat(Choice(row, s, v, f"{s} is {v!r} and {named[0]} names a {row.label} "
                                                               f"model"), items)
                    return _base_or_chat(Choice(row, s, v, f"{s} is {v!r}"), items)
    for s, v in names:
        for row in FAMILIES:
            if row.architectures and _matches_name(row, v):
                return _base_or_chat(Choice(row, s, v, f"{s} names a {row.label} model"), items)
    seen = "; ".join(f"{s}={v}" for s, v in items) or "the server reported nothing about its model"
    return Choice(None, None, None, f"family not recognised ({seen[:300]})")


def _base_or_chat(picked: Choice, items: list[tuple[str, str]]) -> Choice:
    """``picked`` marked as a base model when the template sources say ``absent`` and none says ``present``."""
    said = [(s, v.lower()) for s, v in items if s in TEMPLATE_SOURCES]
    if said and all(v == "absent" for _, v in said):
        return Choice(picked.row, picked.source, picked.evidence,
                      f"{picked.reason}; but the weights carry no chat template ({said[0][0]}): a base model, which "
                      f"follows no instruction format", base_model=True)
    return picked


def family(name: str) -> FamilyFormat:
    """The row of ``name``. Raises KeyError for an unknown family."""
    for row in FAMILIES:
        if row.family == name:
            return row
    raise KeyError(name)


BASE_MODEL_PROMPT = "few-shot-completion"
"""The prompt a base model of a chat-model family gets where it has examples for the language pair."""

__all__ = ["FamilyFormat", "FAMILIES", "Choice", "choose", "family", "METADATA_SOURCES", "NAME_SOURCES",
           "TEMPLATE_SOURCES", "BASE_MODEL_PROMPT"]
