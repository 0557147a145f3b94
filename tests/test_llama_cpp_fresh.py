"""mtboard/backends/local/llama_cpp_fresh.py (issue 21), the launcher that makes every llama-cpp-python answer start
from an empty KV cache, pinned without a model: the wrapped ``prepare_request_resources`` resets the model it returns
before the prompt is evaluated, and a llama-cpp-python without the hook is refused with one line. (The real-server
check, tests/test_backends_gguf.py, compares answers with a fresh ``Llama``; on a CPU where prefix re-use happens to
give the same greedy answers it cannot see a missing reset, so the hook itself is pinned here.)"""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest

from mtboard.backends.local.server import FRESH_SCRIPT


def _launcher():
    spec = importlib.util.spec_from_file_location("llama_cpp_fresh_under_test", FRESH_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Llama:
    def __init__(self) -> None:
        self.n_tokens = 17  # a previous request's tokens still in the cache
        self.calls: list[str] = []

    def reset(self) -> None:
        self.calls.append("reset")
        self.n_tokens = 0


def test_the_model_returned_for_a_request_has_an_empty_cache():
    llama = _Llama()
    seen = []

    def prepare(body, proxy, body_model, kwargs):  # llama-cpp-python's signature
        seen.append((body, proxy, body_model, kwargs))
        return llama

    wrapped = _launcher()._fresh(prepare)
    assert wrapped("body", "proxy", "model", {"k": 1}) is llama
    assert seen == [("body", "proxy", "model", {"k": 1})]
    assert llama.calls == ["reset"] and llama.n_tokens == 0
    assert wrapped.__wrapped__ is prepare


def test_main_installs_the_wrapper_and_refuses_a_server_without_the_hook(monkeypatch):
    launcher = _launcher()
    app = types.ModuleType("llama_cpp.server.app")
    llama = _Llama()
    app.prepare_request_resources = lambda *a, **k: llama
    uvicorn = types.ModuleType("uvicorn")
    uvicorn.main = lambda: None
    for name, module in {"llama_cpp": types.ModuleType("llama_cpp"), "llama_cpp.server": types.ModuleType("x"),
                         "llama_cpp.server.app": app, "uvicorn": uvicorn}.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(sys, "argv", ["llama_cpp_fresh.py", "--factory", "llama_cpp.server.app:create_app"])
    sys.modules["llama_cpp"].server = sys.modules["llama_cpp.server"]
    sys.modules["llama_cpp.server"].app = app
    launcher.main()
    assert app.prepare_request_resources() is llama and llama.calls == ["reset"]
    assert sys.argv[0] == "uvicorn"
    del app.prepare_request_resources
    with pytest.raises(SystemExit, match="prepare_request_resources is missing"):
        launcher.main()
