"""The test lanes' own machinery (tests/conftest.py, docs/TESTING.md): in the full lane no test starts while a model
server computes, so the detector must know every server command line mtboard starts, and nothing else."""

from __future__ import annotations

import sys

from conftest import is_model_server

from mtboard.backends.local import server
from mtboard.score.metrics import neural


def test_every_model_server_command_line_mtboard_starts_is_recognised():
    assert is_model_server([sys.executable, server.FRESH_SCRIPT, "--factory", "--host", "127.0.0.1"])
    assert is_model_server(["bwrap", "--die-with-parent", "--ro-bind", "/m", "/model/m.gguf", sys.executable,
                            server.FRESH_INSIDE, "--factory", "--uds", "/run/mtboard/server.sock"])
    assert is_model_server(["/usr/local/bin/llama-server", "-m", "/model/m.gguf", "--host", "127.0.0.1"])
    assert is_model_server([sys.executable, "-m", "llama_cpp.server", "--model", "m.gguf"])  # the tests' own
    assert is_model_server(["/repo/.venv-comet/bin/python", str(neural.WORKER), "request.json", "result.json"])


def test_names_inside_other_command_lines_are_not_servers():
    # an xdist worker's title names the test it runs; a pytest selection, an editor, a grep
    assert not is_model_server(["[pytest-xdist running] tests/test_server_identity.py::test_x[llama-server]"])
    assert not is_model_server([sys.executable, "-m", "pytest", "-k", "llama_cpp.server"])
    assert not is_model_server(["grep", "-r", "llama_cpp_fresh", "mtboard/"])
    assert not is_model_server(["vim", "mtboard/backends/local/llama_cpp_fresh.py.swp"])
    assert not is_model_server([])
