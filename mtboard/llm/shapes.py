"""Response shapes of OpenAI-compatible providers read into one :class:`Answer` (pure functions, no I/O).

What providers send, from their public API documentation (each shape has a hand-made fixture in
``tests/fixtures/providers/``):

* ``message.content`` / ``delta.content``: a string (everyone); ``null`` (OpenAI with a ``refusal`` or with
  ``tool_calls``); a **list of parts** — ``{"type": "text", "text": …}`` (OpenAI-style parts, LM Studio, proxies),
  ``{"type": "thinking", "thinking": [parts]}`` (Mistral's Magistral / reasoning models), ``{"type": "thinking",
  "thinking": "…"}`` and ``{"type": "reasoning", "text": …}`` (gateways relaying Anthropic/Responses blocks),
  ``{"type": "refusal", "refusal": …}``. Text parts are joined in order; thinking/reasoning parts go to reasoning;
  other parts (images, references/citations, tool use) are ignored.
* Reasoning beside the content: ``reasoning_content`` (DeepSeek, vLLM before 0.10, llama.cpp
  ``--reasoning-format deepseek``, LM Studio, xAI), ``reasoning`` (OpenRouter, Ollama, Groq ``reasoning_format:
  parsed``, vLLM ≥ 0.10), or inline ``<think>…</think>`` tags (Qwen3/DeepSeek-R1 served raw, Groq ``raw``; split
  off later by :func:`mtboard.llm.policy.split_think`).
* ``tool_calls`` (or the legacy ``function_call``) instead of content.
* ``finish_reason`` (any string, or null); errors inside a 200 body or stream: ``{"error": {…}}`` (OpenAI,
  OpenRouter, LM Studio), ``{"object": "error", "message": …}`` (vLLM), a choice with ``error`` (OpenRouter).
* Usage (:func:`usage_from`): OpenAI's ``prompt_tokens`` (cached tokens included) with
  ``prompt_tokens_details.cached_tokens`` and ``completion_tokens_details.reasoning_tokens``; DeepSeek's
  ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens`` (their sum is ``prompt_tokens``); Anthropic-style
  ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` reported *beside* a ``prompt_tokens`` /
  ``input_tokens`` that excludes them; Groq's streamed ``x_groq.usage``; ``usage`` missing or ``null``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mtboard.core.schema import Usage

TEXT_PART_TYPES = frozenset({"text", "output_text"})
"""Content-part types whose ``text`` is the visible answer."""
REASONING_PART_TYPES = frozenset({"thinking", "reasoning", "reasoning_text", "summary_text"})
"""Content-part types that hold reasoning (never the answer)."""


def _num(v: Any) -> int:
    """A token count: a non-negative finite number, else 0 (a provider's ``null``, a string, a bool)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        return 0
    return int(v) if v >= 0 else 0


def usage_from(data: Any) -> Usage | None:
    """One provider ``usage`` object → :class:`mtboard.core.schema.Usage`; None when ``data`` is not an object.

    ``prompt_tokens`` in the result always counts every prompt token the server processed, cached or not, and
    ``cached_tokens`` the part read from a cache:

    * OpenAI / OpenRouter / vLLM / llama.cpp: ``prompt_tokens`` already includes
      ``prompt_tokens_details.cached_tokens`` (kept as reported).
    * DeepSeek: ``prompt_cache_hit_tokens`` is the cached part of ``prompt_tokens`` (= hit + miss).
    * Anthropic-style ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` (Anthropic's own accounting,
      relayed by gateways): the prompt count beside them excludes both, so they are added; when a gateway also
      sends ``prompt_tokens_details.cached_tokens`` its ``prompt_tokens`` is taken as inclusive unless it is smaller
      than the two cache fields together (then it cannot be).

    ``completion_tokens`` (or ``output_tokens``) includes reasoning tokens, as every provider bills them;
    ``reasoning_tokens`` comes from ``completion_tokens_details`` (or ``output_tokens_details``).
    Examples: ``{"prompt_tokens": 194, "completion_tokens": 7, "cache_creation_input_tokens": 9474}`` →
    prompt 9,668, cached 0; ``{"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 1920}}`` → prompt
    2,006, cached 1,920.
    """
    if not isinstance(data, dict):
        return None
    prompt = _num(data["prompt_tokens"] if data.get("prompt_tokens") is not None else data.get("input_tokens"))
    completion = _num(data["completion_tokens"] if data.get("completion_tokens") is not None
                      else data.get("output_tokens"))
    ptd = data.get("prompt_tokens_details") or data.get("input_tokens_details")
    ctd = data.get("completion_tokens_details") or data.get("output_tokens_details")
    ptd = ptd if isinstance(ptd, dict) else {}
    ctd = ctd if isinstance(ctd, dict) else {}
    reasoning = _num(ctd.get("reasoning_tokens"))
    read, write = _num(data.get("cache_read_input_tokens")), _num(data.get("cache_creation_input_tokens"))
    if read or write:  # Anthropic accounting: the prompt count beside these fields excludes them
        if ptd.get("cached_tokens") is None or prompt < read + write:
            prompt += read + write
        cached = read
    elif ptd.get("cached_tokens") is not None:
        cached = _num(ptd.get("cached_tokens"))
    else:
        cached = _num(data.get("prompt_cache_hit_tokens"))
    return Usage(prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=reasoning,
                 cached_tokens=min(cached, prompt) if prompt else cached)


def _reasoning_text(value: Any) -> str:
    """Text of a thinking part's payload: a string, or a list of text parts (Mistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p if isinstance(p, str) else str(p.get("text") or "") if isinstance(p, dict) else ""
                       for p in value)
    return ""


def content_parts(content: Any) -> tuple[str | None, str, str]:
    """``message.content`` / ``delta.content`` → ``(text, reasoning, refusal)``.

    A string is the text; None (or a missing field) gives ``(None, "", "")``; a list of parts is read part by part
    (module docstring): ``[{"type":"text","text":"Hola "},{"type":"text","text":"mundo."}]`` → ``("Hola mundo.", "",
    "")``; ``[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"Hola."}]`` →
    ``("Hola.", "hm", "")``. A list without any text part gives text ``""`` (present but empty).
    """
    if content is None:
        return None, "", ""
    if isinstance(content, str):
        return content, "", ""
    if isinstance(content, dict):  # a single part instead of a list
        content = [content]
    if not isinstance(content, list):
        return None, "", ""
    text: list[str] = []
    reasoning: list[str] = []
    refusal: list[str] = []
    for part in content:
        if isinstance(part, str):
            text.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in TEXT_PART_TYPES or (kind is None and isinstance(part.get("text"), str)):
            text.append(str(part.get("text") or ""))
        elif kind in REASONING_PART_TYPES:
            reasoning.append(_reasoning_text(part.get(kind) if kind in part else part.get("text")))
        elif kind == "refusal":
            refusal.append(str(part.get("refusal") or ""))
    return "".join(text), "".join(reasoning), "".join(refusal)


def _error_text(err: Any) -> str:
    """One line from an ``error`` value (object with message/type/code, or a string)."""
    if isinstance(err, dict):
        msg = err.get("message") or err.get("type") or json.dumps(err)[:300]
        code = err.get("code")
        return f"{msg} (code {code})" if code not in (None, "") else str(msg)
    return str(err)


def error_in(obj: Any) -> str | None:
    """The error an object carries inside a 200 answer, or None: ``{"error": …}`` (OpenAI, OpenRouter, LM Studio,
    llama.cpp) or vLLM's ``{"object": "error", "message": …}``. A null ``error`` is no error."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    if obj.get("error"):
        return _error_text(obj["error"])
    if obj.get("object") == "error":
        return _error_text(obj)
    return None


def error_message(data: Any) -> str:
    """One line describing an error body of any shape (used for non-200 answers)."""
    if isinstance(data, dict):
        found = error_in(data)
        if found:
            return found
        if isinstance(data.get("message"), str):
            return data["message"]
        if isinstance(data.get("detail"), str):  # FastAPI/uvicorn servers
            return data["detail"]
    return json.dumps(data)[:300] if data is not None else "no error message"


@dataclass
class Answer:
    """What one 200 answer said, whatever the provider's shape. Built by :func:`parse_body` (a whole JSON body) or
    :class:`StreamReader` (an SSE stream); judged by :func:`mtboard.llm.policy.judge`."""

    text: str | None = None
    """Visible content (text parts joined); None when no content field arrived at all."""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: int = 0
    """Tool or function calls the model made (never asked for: mtboard sends no tools)."""
    finish_reason: str | None = None
    usage: Usage | None = None
    """None when the server sent no usage (or ``"usage": null``)."""
    model_id: str | None = None
    problem: str | None = None
    """Why the answer is not a usable completion although HTTP said 200: an error object, no choices, a chunk that
    is not JSON. Always a transport failure."""
    streamed: bool = False
    done: bool = False
    """A stream's ``data: [DONE]`` arrived (streams only)."""
    events: int = 0
    """Data events received (streams only; 0 = an empty 200 stream)."""
    stop_cut: str | None = None
    """The request's stop sequence at which mtboard cut ``text`` because the server did not stop there
    (:func:`mtboard.llm.policy.apply_stop`); None when nothing was cut."""
    uncut_text: str | None = None
    """``text`` as the server sent it, before the cut (only when ``stop_cut`` is set)."""
    repairs: int = 0
    """U+FFFD that :func:`mtboard.core.decoding.answer_text` put into ``text``, ``reasoning`` and ``refusal`` (lone
    surrogates, bytes that are not UTF-8); set by the client before the answer is judged."""


def _read_choice(ans: Answer, ch: dict[str, Any], delta_key: str) -> None:
    """Add one choice (``message`` of a body or ``delta`` of a chunk; ``text`` for /completions) to ``ans``."""
    if ch.get("error"):  # OpenRouter: the provider failed mid-generation
        ans.problem = f"a choice carrying an error: {_error_text(ch['error'])}"
        return
    msg = ch.get(delta_key)
    if isinstance(msg, dict):
        text, reasoning, refusal = content_parts(msg.get("content"))
        if text is not None:
            ans.text = (ans.text or "") + text
        for key in ("reasoning_content", "reasoning"):
            if isinstance(msg.get(key), str):
                reasoning += msg[key]
                break
        ans.reasoning += reasoning
        if isinstance(msg.get("refusal"), str):
            refusal += msg["refusal"]
        ans.refusal += refusal
        calls = msg.get("tool_calls")
        if isinstance(calls, list) and calls:
            # a stream repeats a call's index while its arguments arrive: count distinct indexes
            ans.tool_calls = max(ans.tool_calls, len(calls),
                                 1 + max((c.get("index", 0) for c in calls if isinstance(c, dict)
                                          and isinstance(c.get("index"), int)), default=-1))
        elif msg.get("function_call"):
            ans.tool_calls = max(ans.tool_calls, 1)
    elif isinstance(ch.get("text"), str):  # /v1/completions
        ans.text = (ans.text or "") + ch["text"]
    if ch.get("finish_reason"):
        ans.finish_reason = str(ch["finish_reason"])


def _usage_of(obj: dict[str, Any]) -> Usage | None:
    usage = usage_from(obj.get("usage"))
    if usage is None and isinstance(obj.get("x_groq"), dict):  # Groq streams: usage in the last chunk's x_groq
        usage = usage_from(obj["x_groq"].get("usage"))
    return usage


def parse_body(data: Any) -> Answer:
    """A whole (non-streamed) JSON answer → :class:`Answer`. Only choice 0 is read (mtboard asks for one)."""
    ans = Answer()
    if not isinstance(data, dict):
        ans.problem = "a 200 answer that is not a JSON object"
        return ans
    err = error_in(data)
    if err:
        ans.problem = f"an error inside the 200 answer: {err}"
        return ans
    if isinstance(data.get("model"), str) and data["model"]:
        ans.model_id = data["model"]
    ans.usage = _usage_of(data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        ans.problem = "a 200 answer without choices"
        return ans
    ch = choices[0]
    if "message" in ch:
        _read_choice(ans, ch, "message")
    else:
        _read_choice(ans, ch, "delta")
    return ans


@dataclass
class StreamReader:
    """Accumulates the events of one SSE stream into :attr:`answer`. Feed each event's ``data`` with
    :meth:`feed`; it returns False once the stream has nothing more to say (``[DONE]`` or a problem)."""

    answer: Answer = field(default_factory=lambda: Answer(streamed=True, text=""))

    def feed(self, data: str, event: str = "message") -> bool:
        """One event. ``event`` is the SSE event type (``error`` events are failures whatever their data)."""
        ans = self.answer
        if data.strip() == "[DONE]":
            ans.done = True
            return False
        ans.events += 1
        try:
            chunk = json.loads(data)
        except ValueError:
            if event == "error":
                ans.problem = f"an error event inside the 200 stream: {data[:300]}"
            else:
                ans.problem = "a stream event that is not JSON"
            return False
        err = error_in(chunk)
        if err or event == "error":
            ans.problem = f"an error inside the 200 stream: {err or error_message(chunk)}"
            return False
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            ans.model_id = chunk["model"]
        usage = _usage_of(chunk)
        if usage is not None:  # cumulative where sent more than once: the last one counts
            ans.usage = usage
        for ch in chunk.get("choices") or []:
            if isinstance(ch, dict) and ch.get("index", 0) == 0:
                _read_choice(ans, ch, "delta")
                if ans.problem:
                    return False
        return True


__all__ = ["Answer", "StreamReader", "content_parts", "error_in", "error_message", "parse_body", "usage_from"]
