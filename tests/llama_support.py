"""The real llama-cpp-python server for tests (tests/test_runner_llama.py, tests/test_native_prompts.py): started
through mtboard's fresh launcher (:data:`mtboard.backends.local.server.FRESH_SCRIPT`: every completion from a reset
state), its log in a file, stopped when the ``with`` block ends."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import free_port


@contextlib.contextmanager
def fresh_llama_server(model: Path, log: Path, *, nice: int | None = None) -> Iterator[str]:
    """``model`` (a GGUF file) served by llama-cpp-python on a free loopback port (n_ctx 2048, one thread per CPU this
    process may use: one in a model-server test, tests/conftest.py), the
    server's output in ``log`` (a file, not a pipe: the server logs a lot and would block on a full pipe); yields the
    base URL ``http://127.0.0.1:PORT/v1`` once ``/v1/models`` answers 200 (at most 120 s, else the test fails with
    the log's tail). ``nice``: run the server at that niceness."""
    from mtboard.backends.local.server import FRESH_APP, FRESH_SCRIPT, default_threads

    port = free_port()
    threads = str(default_threads())
    env = {**os.environ, "MODEL": str(model), "N_CTX": "2048", "N_THREADS": threads, "N_THREADS_BATCH": threads,
           "VERBOSE": "false"}
    argv = [sys.executable, FRESH_SCRIPT, "--factory", "--host", "127.0.0.1", "--port", str(port), FRESH_APP]
    with open(log, "wb") as fh:
        proc = subprocess.Popen((["nice", "-n", str(nice)] if nice is not None else []) + argv, stdout=fh,
                                stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"llama-cpp-python server did not start: {log.read_text(errors='replace')[-500:]}")
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
