"""The one OpenAI-compatible HTTP client of mtboard: transport (httpx), response shapes, failure policy.

Only this package speaks HTTP to model servers (issue 3; issue 13). Runner backends and judges receive an
:class:`LLMClient`. Modules, in the order an answer flows through them:

* :mod:`mtboard.llm.transport` — ``httpx.AsyncClient`` per endpoint (proxies, CA bundles, optional HTTP/2,
  keep-alive expiry, Basic auth from the URL), SSE through ``httpx-sse``, :func:`get_json`;
* :mod:`mtboard.llm.shapes` — pure functions reading every provider's response shape into one ``Answer``;
* :mod:`mtboard.llm.policy` — pure functions classifying a status or an ``Answer`` (the table below);
* :mod:`mtboard.llm.client` — :class:`LLMClient`: concurrency, retries and backoff, scrubbing of secrets.

Failure policy (BookTrans write-up, "срыв модели и сбой роутера"; spec README §LLM judging). A **transport**
failure (the service failed) is retried up to ``max_retries`` times with full-jitter backoff, waiting at least
``Retry-After`` / ``retry-after-ms``; when it persists the entry has ``error_kind=transport`` and the runner re-runs
it instead of scoring it. Rate limits (429, 529, a 503 announcing a wait) are transport failures that are waited
out rather than retried: every request of the client waits for the announced reset
(:func:`~mtboard.llm.policy.rate_limit_wait`), up to ``rate_limit_deadline_s`` per request. A **model** failure (the
model failed) is scored 0 and not retried (the same request gives the same failure). A **configuration** failure is not retried; 401/403/404 stop the run (``LLMResult.fatal``).

==========================================================  ===========  ===================================
What arrived                                                 outcome      error_kind
==========================================================  ===========  ===================================
no connection, reset, timeout before the answer ended,       transport    transport
a stream cut before ``finish_reason``/``[DONE]``
HTTP 408, 409, 425, 429, any 5xx                             transport    transport
HTTP 200 carrying ``{"error": …}`` / vLLM                     transport    transport
``{"object": "error"}`` / a choice with ``error`` / an SSE
``event: error`` / a body or event that is not JSON / no
``choices``
stream ends with ``[DONE]`` but no ``finish_reason``         transport    transport
(llama-cpp-python interrupting a stream)
``finish_reason`` ``abort``, ``error``,                      transport    transport
``insufficient_system_resource``, ``cancelled``
a 200 stream with no event at all                            asked again  (outcome of the whole-body answer)
                                                             without
                                                             streaming
HTTP 400/413/422 saying the prompt exceeds the context;      model        input_truncated
a 200 answer reporting (prompt + cached tokens) below
80 % of the prompt's minimum token count (or below the
exact count when known)
HTTP 400 with error code ``content_filter``                  model        refusal
``refusal`` field or part; ``finish_reason``                 model        refusal
``content_filter`` (or ``safety``, ``recitation``, …)
``tool_calls`` / ``function_call`` in the answer;            model        format
``finish_reason`` ``tool_calls`` / ``function_call``
a reasoning block never closed (``<think>`` without          model        unclosed_think
``</think>``, ``[THINK]``, a Harmony ``analysis`` message
cut …; :mod:`mtboard.core.reasoning`)
``finish_reason`` ``length`` (``max_tokens``,                model        token_cap
``model_length``), with or without text
``finish_reason`` ``stop`` but ``completion_tokens`` ≥       model        token_cap ("at token cap")
``max_tokens``
no visible text (content ``null``, ``""``, only thinking)    model        empty
a stream still producing after ``deadline_s``                model        timeout
``finish_reason`` ``stop`` / ``eos`` / ``end_turn`` /        ok           —
unknown value, or ``null`` in a whole JSON body, with
visible text
other 4xx (400 bad parameter …); 401/403/404 fatal           backend      backend
==========================================================  ===========  ===================================

Text, reasoning and usage whatever the shape (:mod:`mtboard.llm.shapes`): content as a string or as a list of
parts (text parts joined, thinking parts to reasoning); reasoning in ``reasoning_content``, ``reasoning`` or in the
text (every format of :mod:`mtboard.core.reasoning`: ``<think>`` tags, Harmony channels, ``[THINK]`` …; a marker
that also occurs in :attr:`LLMRequest.source` stays text); usage with cached tokens reported inside or beside ``prompt_tokens``, reasoning tokens, or no usage
at all (counted as 0; no truncation check without it).

Text at one boundary (:func:`mtboard.core.decoding.answer_text`; issue 33): bodies are decoded with
``surrogateescape``, a stream's fragments are joined before anything is decided (a character split between events,
bytes or UTF-16 halves, is whole), and what is still a lone surrogate or not UTF-8 becomes U+FFFD, counted in
:attr:`LLMResult.text_repairs`. Streams are read by content: an event stream answering a request sent without
``"stream": true`` is read as a stream (``unrequested_stream`` in the attempt log), a JSON body answering a streamed
request as JSON (docs/providers.md).
"""

from __future__ import annotations

from mtboard.llm.client import LLMClient, LLMRequest, LLMResult
from mtboard.llm.policy import (FATAL_STATUSES, TRANSPORT_STATUSES, TRUNCATION_FACTOR, detect_truncation,
                                estimate_min_prompt_tokens, parse_retry_after, split_think)
from mtboard.llm.transport import get_json, infer_provider, normalise_base_url

__all__ = ["LLMRequest", "LLMResult", "LLMClient", "estimate_min_prompt_tokens", "detect_truncation",
           "infer_provider", "normalise_base_url", "parse_retry_after", "split_think", "get_json",
           "TRANSPORT_STATUSES", "FATAL_STATUSES", "TRUNCATION_FACTOR"]
