"""llama-cpp-python's OpenAI-compatible server with every completion evaluated from an empty KV cache (issue 21).

Run as a script by :class:`mtboard.backends.local.server.LocalServer`, never imported by mtboard (inside the sandbox the
mtboard package is not even visible; this one file is bound read-only at ``/opt/mtboard/llama_cpp_fresh.py``)::

    python llama_cpp_fresh.py --factory (--uds SOCKET | --host 127.0.0.1 --port P) llama_cpp.server.app:create_app

The arguments are uvicorn's command line (``uvicorn.main``); the server's settings (``MODEL``, ``N_CTX``,
``N_THREADS`` …) come from the environment, read by llama-cpp-python's pydantic-settings ``Settings`` exactly as in
its documented ``uvicorn --factory llama_cpp.server.app:create_app`` entry point.

Why: llama-cpp-python keeps the previous request's KV cache and, for the next prompt, re-uses the longest common
token prefix (``Llama.generate``: "prefix-match hit"), evaluating only the rest of the prompt. Logits are not
bit-for-bit identical for different batch splits (llama.cpp documents the same for llama-server's ``cache_prompt``),
so under greedy decoding an answer can depend on the request sent before it: the same prompt sent twice in a row gave
two different answers, and a re-run of a committed Gemma 3 270M card (``mtboard verify``) gave chrF++ 17.20 against
the card's 16.19. Here every completion starts from ``Llama.reset()`` (under the server's request lock, before the
prompt is evaluated), so an answer is a function of the model file, the prompt, the sampling settings and the thread
count alone — which is what a run card records and what verification re-runs. Cost: a prompt prefix shared by every
request (a few-shot block) is evaluated again for each request.

Exit status 1 with a one-line message when the installed llama-cpp-python lacks the hook this relies on
(``llama_cpp.server.app.prepare_request_resources``, llama-cpp-python ≥ 0.3).
"""

from __future__ import annotations

import sys
from typing import Any


def _fresh(prepare: Any) -> Any:
    """Wrap llama-cpp-python's ``prepare_request_resources(body, llama_proxy, body_model, kwargs) -> Llama`` so the
    model it returns has an empty KV cache (``n_tokens == 0``: ``Llama.generate`` then evaluates the whole prompt)."""

    def prepare_request_resources(*args: Any, **kwargs: Any) -> Any:
        llama = prepare(*args, **kwargs)
        llama.reset()
        return llama

    prepare_request_resources.__wrapped__ = prepare  # type: ignore[attr-defined]
    return prepare_request_resources


def main() -> None:
    import llama_cpp.server.app as server_app
    import uvicorn

    prepare = getattr(server_app, "prepare_request_resources", None)
    if prepare is None:
        sys.exit("llama_cpp_fresh: llama_cpp.server.app.prepare_request_resources is missing in this "
                 "llama-cpp-python; fix: install llama-cpp-python[server]>=0.3,<0.4 (mtboard[local])")
    server_app.prepare_request_resources = _fresh(prepare)
    sys.argv[0] = "uvicorn"
    uvicorn.main()  # uvicorn's click command line, read from sys.argv


if __name__ == "__main__":
    main()
