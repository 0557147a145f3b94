"""The reference a local-model test compares a server's answers with: llama-cpp-python's ``Llama`` called directly
in a child process, its KV cache reset before every prompt (``Llama.reset``), so each answer is evaluated from an
empty cache — what ``mtboard.backends.local.llama_cpp_fresh`` promises for every request the server answers.

Why measured here and not written down: greedy answers of the same GGUF differ between CPUs (llama.cpp picks its
kernels by instruction set: on an AVX-512 AMD EPYC, Gemma 3 270M answers " El tren sale a las siete de la noche."
where the machine that first pinned these tests answered " El tren va …"), so a constant pins a machine, not the
behaviour. The child process keeps the model out of the test process (and its threads out of pytest's).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = r"""
import json, sys
from llama_cpp import Llama
args = json.loads(sys.stdin.read())
llm = Llama(model_path=args["model"], n_threads=args["n_threads"], n_ctx=args["n_ctx"], verbose=False)
out = []
for prompt in args["prompts"]:
    llm.reset()
    res = llm.create_completion(prompt, max_tokens=args["max_tokens"], temperature=0.0, top_p=1.0,
                                stop=args["stop"])
    out.append(res["choices"][0]["text"])
print(json.dumps(out))
"""


def fresh_answers(model: Path, prompts: list[str], *, max_tokens: int, stop: list[str], n_threads: int | None = None,
                  n_ctx: int = 2048) -> list[str]:
    """Greedy completions (temperature 0, top_p 1) of ``prompts`` by ``Llama(model)``, each from an empty KV cache.

    Raises: AssertionError with the child's stderr when it fails."""
    from mtboard.backends.local.server import default_threads

    n_threads = n_threads or default_threads()  # as mtboard's servers: one in a model-server test
    args = {"model": str(model), "prompts": prompts, "max_tokens": max_tokens, "stop": stop, "n_threads": n_threads,
            "n_ctx": n_ctx}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], input=json.dumps(args), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
