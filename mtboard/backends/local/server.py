"""Start and stop a local OpenAI-compatible server for one GGUF model (JA→EN write-up, step 2; issue 3, backend 2).

Implementation, in order of preference:

* ``llama-server`` (llama.cpp) when it is on PATH: ``llama-server -m FILE --host 127.0.0.1 --port P -c N_CTX
  -ngl N_GPU_LAYERS -t N_THREADS`` (+ ``--reasoning off`` / ``--reasoning-budget 0`` when the build knows it);
  health = ``GET /health`` answering 200.
* otherwise llama-cpp-python's server (optional extra ``mtboard[local]``) through :mod:`mtboard.backends.local.llama_cpp_fresh`
  (its app with every completion evaluated from an empty KV cache, so an answer never depends on the request before
  it): ``python …/llama_cpp_fresh.py --factory --host 127.0.0.1 --port P llama_cpp.server.app:create_app`` with the
  settings (``MODEL``, ``N_CTX``, ``N_GPU_LAYERS``, ``N_THREADS``, ``N_THREADS_BATCH`` …) in its environment (read by
  llama-cpp-python's pydantic-settings); health = ``GET /v1/models`` answering 200 (it binds only after the model
  is loaded). Its default thread count is half the cores, so the count is always passed explicitly.

**Order independence** (issue 21): a re-run must give the card's answers whatever was asked before. llama-server gets
``"cache_prompt": false`` in every request (see :meth:`mtboard.backends.gguf.GGUFBackend.build_request`; llama.cpp's
server README: re-using the KV cache "can cause nondeterministic results" because logits are not bit-identical
across batch sizes); llama-cpp-python, which has no such switch, runs through :mod:`mtboard.backends.local.llama_cpp_fresh`.

The server binds a free loopback port, its output goes to a log file (the tail is shown when it fails), and it is
always stopped: :meth:`LocalServer.stop` (also via ``with``), an ``atexit`` hook for every live server, SIGTERM/SIGHUP
handlers (installed from the main thread) that stop servers before exiting, and on Linux ``PR_SET_PDEATHSIG`` so the
server gets SIGTERM if mtboard is killed with -9. Note: that signal follows the *thread* that started the server
(Linux semantics), so start it from the main thread or from a pooled thread that outlives it (``asyncio.to_thread``
is fine: the default executor's threads live until the event loop closes).

**Sandbox** (issue 21, :mod:`mtboard.backends.local.sandbox`): by default the server runs inside bubblewrap — no network, an empty
environment, a read-only view of the runtime and the model file (mounted as ``/model/<file name>``) — and listens on
a Unix socket in a private folder instead of a TCP port: llama-server with ``--host /run/mtboard/server.sock``
(llama.cpp binds AF_UNIX when the host ends in ``.sock``); llama-cpp-python through the same
``llama_cpp_fresh.py --factory --uds … llama_cpp.server.app:create_app`` (that one file bound read-only at
:data:`FRESH_INSIDE`), its settings set as environment variables inside the sandbox. Then ``uds`` is the socket's host path and ``base_url`` is ``http://localhost/v1`` (the host
name is not used: :class:`mtboard.llm.LLMClient` and :func:`mtboard.llm.get_json` take ``uds=``).
``sandbox=False`` (development, or a test standing in for a contributor's own TCP server) starts it as before.

Doctor fact: :func:`available` says which implementation would be used.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mtboard.backends.local import sandbox as sandboxing
from mtboard.core.errors import BackendError, ConfigError

LLAMA_SERVER = "llama-server"
FRESH_SCRIPT = str(Path(__file__).with_name("llama_cpp_fresh.py"))
"""The llama-cpp-python launcher (:mod:`mtboard.backends.local.llama_cpp_fresh`), run as a script by path."""
FRESH_INSIDE = "/opt/mtboard/llama_cpp_fresh.py"
"""Where the sandbox binds :data:`FRESH_SCRIPT` (read-only; the mtboard package itself is not visible inside)."""
FRESH_APP = "llama_cpp.server.app:create_app"
_UVICORN_QUIET = ("--log-level", "warning", "--no-access-log")
LLAMA_CPP_PYTHON = "llama-cpp-python"
IMPLEMENTATIONS = (LLAMA_SERVER, LLAMA_CPP_PYTHON)


# --------------------------------------------------------------------------------------------------------------------
# What is available


def _llama_server_path() -> str | None:
    return shutil.which(LLAMA_SERVER)


def llama_server_version(exe: str) -> str:
    """``llama-server --version`` → e.g. ``"version: 4567 (abc1234)"`` (first non-empty line, or ``"unknown"``)."""
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        if line.strip().startswith("version"):
            return line.strip()
    return "unknown"


def _llama_cpp_python_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None


@functools.lru_cache(maxsize=1)
def llama_cpp_python_info() -> dict[str, object]:
    """``{"version": "0.3.36", "gpu_offload": False}`` for the llama-cpp-python in this interpreter (asked in a
    subprocess, so the library is not loaded into mtboard). Raises BackendError when it cannot be imported."""
    code = ("import json, llama_cpp; print(json.dumps({'version': llama_cpp.__version__, "
            "'gpu_offload': bool(llama_cpp.llama_supports_gpu_offload())}))")
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BackendError(f"cannot run llama-cpp-python: {exc}", where="localserver") from None
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise BackendError(f"llama-cpp-python does not import: {tail[0][:200]}", where="localserver",
                           fix="pip install 'mtboard[local]' (builds llama-cpp-python from source, ~10 min)")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _resolve(choice: str) -> str:
    if choice not in ("auto", *IMPLEMENTATIONS):
        raise ConfigError(f"unknown server implementation {choice!r}", field="server",
                          fix="use auto, llama-server or llama-cpp-python")
    if choice in ("auto", LLAMA_SERVER) and _llama_server_path():
        return LLAMA_SERVER
    if choice == LLAMA_SERVER:
        raise BackendError("llama-server is not on PATH", where="localserver",
                           fix="install llama.cpp's llama-server, or use server=llama-cpp-python")
    if not _llama_cpp_python_installed():
        raise BackendError("no local server: llama-server is not on PATH and llama-cpp-python[server] is not "
                           "installed", where="localserver",
                           fix="pip install 'mtboard[local]' (or put llama.cpp's llama-server on PATH)")
    return LLAMA_CPP_PYTHON


@dataclass(frozen=True)
class ServerImplementation:
    """Which server would run: ``name`` (llama-server | llama-cpp-python), ``version`` (as recorded in the card) and
    ``gpu_offload`` (llama-cpp-python: whether its build can offload to a GPU; None for llama-server: unknown)."""

    name: str
    version: str
    gpu_offload: bool | None


def implementation(choice: str = "auto") -> ServerImplementation:
    """Resolve ``auto | llama-server | llama-cpp-python`` to what is installed, with its version (runs
    ``llama-server --version`` or imports llama-cpp-python in a subprocess once).

    Raises: ConfigError (unknown choice), BackendError (nothing installed / the requested one missing)."""
    impl = _resolve(choice)
    if impl == LLAMA_SERVER:
        exe = _llama_server_path()
        assert exe is not None
        return ServerImplementation(LLAMA_SERVER, f"llama-server {llama_server_version(exe)}", None)
    info = llama_cpp_python_info()
    return ServerImplementation(LLAMA_CPP_PYTHON, f"llama-cpp-python {info['version']}", bool(info["gpu_offload"]))


def available() -> str | None:
    """Which server implementation :class:`LocalServer` would start: ``"llama-server (/usr/bin/llama-server)"``,
    ``"llama-cpp-python (llama_cpp.server through mtboard.backends.local.llama_cpp_fresh)"`` or None when neither is installed. Cheap: nothing is run."""
    exe = _llama_server_path()
    if exe:
        return f"{LLAMA_SERVER} ({exe})"
    if _llama_cpp_python_installed():
        return f"{LLAMA_CPP_PYTHON} (llama_cpp.server through mtboard.backends.local.llama_cpp_fresh)"
    return None


def default_threads() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------------------------------------------------
# Cleanup of live servers: atexit + signals

_LIVE: "weakref.WeakSet[LocalServer]" = weakref.WeakSet()
_HANDLERS_INSTALLED = False


def _stop_all() -> None:
    for srv in list(_LIVE):
        try:
            srv.stop()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def _on_signal(signum: int, _frame: object) -> None:
    # Stop the servers first (synchronously), then unwind normally so try/finally blocks run too.
    _stop_all()
    raise SystemExit(128 + signum)


def install_signal_handlers() -> bool:
    """Install SIGTERM/SIGHUP handlers that stop every live server and exit with 128+signal. Only from the main
    thread and only where the current handler is the default one (an application's own handler is kept).
    Ctrl-C needs none: KeyboardInterrupt unwinds through the callers' ``finally``. Returns True if installed."""
    global _HANDLERS_INSTALLED
    if _HANDLERS_INSTALLED:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _on_signal)
    _HANDLERS_INSTALLED = True
    return True


atexit.register(_stop_all)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


# --------------------------------------------------------------------------------------------------------------------
# The server


@dataclass(eq=False)
class LocalServer:
    """One local OpenAI-compatible server process for ``model_path``.

    Args:
        model_path: the GGUF file.
        n_ctx: context size in tokens (default 2048, as in the JA→EN write-up; llama-cpp-python keeps an
            n_ctx × vocabulary float32 logits buffer, so keep it small).
        n_gpu_layers: layers offloaded to the GPU (0 = CPU only; 99 or -1 = all).
        n_threads: CPU threads (default: all CPUs this process may use).
        implementation: ``"auto"`` (llama-server if on PATH, else llama-cpp-python), ``"llama-server"`` or
            ``"llama-cpp-python"``.
        startup_timeout_s: how long to wait for health (seconds).
        log_path: where the server's output goes (default: a temporary file).
        extra_args: more command-line arguments, passed through.
        on_warning: called with one-line warnings (default: ignore).

    After :meth:`start`: ``base_url`` (``http://127.0.0.1:PORT/v1``), ``version`` (``"llama-server version: …"`` or
    ``"llama-cpp-python 0.3.36"``), ``implementation``, ``command`` (argv), ``pid``, ``startup_s``.
    """

    model_path: Path
    n_ctx: int = 2048
    n_gpu_layers: int = 0
    n_threads: int | None = None
    implementation: str = "auto"
    startup_timeout_s: float = 180.0
    log_path: Path | None = None
    extra_args: list[str] = field(default_factory=list)
    on_warning: Callable[[str], None] | None = None
    die_with_parent: bool = True
    alias: str | None = None
    """Model name the server reports (``--alias`` / ``--model_alias``) instead of the file path."""
    sandbox: bool = True
    """Run inside :mod:`mtboard.backends.local.sandbox` (default; BackendError when it is unavailable) and listen on a Unix socket;
    False: unsandboxed on a loopback TCP port (development only)."""

    base_url: str | None = field(default=None, init=False)
    version: str | None = field(default=None, init=False)
    gpu_offload: bool | None = field(default=None, init=False)
    command: list[str] = field(default_factory=list, init=False)
    startup_s: float | None = field(default=None, init=False)
    uds: str | None = field(default=None, init=False)
    """Host path of the sandboxed server's Unix socket (None without the sandbox)."""
    sandbox_record: str | None = field(default=None, init=False)
    server_name: str | None = field(default=None, init=False)
    """After :meth:`start`: :data:`LLAMA_SERVER` or :data:`LLAMA_CPP_PYTHON`, the implementation running."""
    """What the card records in ``method.local.sandbox``: :meth:`mtboard.backends.local.sandbox.SandboxStatus.record` or
    :data:`mtboard.backends.local.sandbox.OFF_RECORD`."""
    _socket_dir: str | None = field(default=None, init=False, repr=False)
    spawned_pids: list[int] = field(default_factory=list, init=False)
    """Every process id this object started (diagnostics and tests: all must be gone after :meth:`stop`)."""
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)
    _log_file: object = field(default=None, init=False, repr=False)
    _own_log: bool = field(default=False, init=False, repr=False)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- command line ------------------------------------------------------------------------------------------------

    def _argv(self, impl: str, port: int, threads: int) -> list[str]:
        if self.sandbox:
            return self._sandboxed_argv(impl, threads)
        model = str(self.model_path)
        if impl == LLAMA_SERVER:
            exe = _llama_server_path()
            assert exe is not None
            return [exe, "-m", model, "--host", "127.0.0.1", "--port", str(port),
                    *self._llama_server_flags(exe, threads)]
        return [sys.executable, FRESH_SCRIPT, "--factory", "--host", "127.0.0.1", "--port", str(port),
                *_UVICORN_QUIET, FRESH_APP]

    def _llama_cpp_python_env(self, model: str, threads: int) -> dict[str, str]:
        """llama-cpp-python's settings as the environment variables its pydantic-settings ``Settings`` reads (it has
        no other way in through uvicorn's command line). Raises ConfigError when ``extra_args`` were given: they are
        llama-server command-line flags."""
        if self.extra_args:
            raise ConfigError("extra_args are llama-server flags; llama-cpp-python takes its settings as environment "
                              "variables", field="extra_args", fix="use server=llama-server, or drop extra_args")
        env = {"MODEL": model, "N_CTX": str(self.n_ctx), "N_GPU_LAYERS": str(self.n_gpu_layers),
               "N_THREADS": str(threads), "N_THREADS_BATCH": str(threads), "VERBOSE": "false",
               # its default cuts a streamed answer short ([DONE], no finish_reason) when another request arrives
               "INTERRUPT_REQUESTS": "false"}
        if self.alias:
            env["MODEL_ALIAS"] = self.alias
        return env

    def _llama_server_flags(self, exe: str, threads: int) -> list[str]:
        """llama-server's flags after the model and the address: context, GPU layers, threads, alias, reasoning off
        (``--reasoning off`` or, on older builds, ``--reasoning-budget 0``, whichever its ``--help`` lists), then the
        extra arguments."""
        flags = ["-c", str(self.n_ctx), "-ngl", str(self.n_gpu_layers), "-t", str(threads), "-tb", str(threads)]
        if self.alias:
            flags += ["--alias", self.alias]
        help_text = self._help(exe)
        if "--reasoning " in help_text or "--reasoning," in help_text:
            flags += ["--reasoning", "off"]
        elif "--reasoning-budget" in help_text:
            flags += ["--reasoning-budget", "0"]
        return flags + list(self.extra_args)

    def _sandboxed_argv(self, impl: str, threads: int) -> list[str]:
        """The bwrap command line (module docstring): the model read-only at ``/model/<name>``, the socket folder
        writable at :data:`mtboard.backends.local.sandbox.SOCKET_DIR`, the server listening on ``server.sock`` there."""
        assert self._socket_dir is not None
        model = f"{sandboxing.MODEL_DIR}/{Path(self.model_path).name}"
        sock = f"{sandboxing.SOCKET_DIR}/server.sock"
        env: dict[str, str] = {}
        if impl == LLAMA_SERVER:
            exe = _llama_server_path()
            assert exe is not None
            exe = os.path.realpath(exe)
            argv = [exe, "-m", model, "--host", sock, *self._llama_server_flags(exe, threads)]
            binds = [(os.path.dirname(exe), os.path.dirname(exe))] if not exe.startswith("/usr/") else []
        else:
            env = self._llama_cpp_python_env(model, threads)
            argv = [sys.executable, FRESH_INSIDE, "--factory", "--uds", sock, *_UVICORN_QUIET, FRESH_APP]
            binds = [(FRESH_SCRIPT, FRESH_INSIDE)]
        box = sandboxing.Sandbox(ro_binds=[(os.path.realpath(self.model_path), model), *binds],
                                 rw_binds=[(self._socket_dir, sandboxing.SOCKET_DIR)], env=env,
                                 gpu=self.n_gpu_layers != 0)
        return box.argv(argv)

    @staticmethod
    def _help(exe: str) -> str:
        try:
            proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ""
        return proc.stdout + proc.stderr

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    def start(self) -> LocalServer:
        """Start the server and wait until it is healthy (up to 3 ports are tried if the port was taken meanwhile).

        Raises: BackendError (no implementation, the process exited, not healthy within ``startup_timeout_s``),
        with the tail of the server log in the message. The process is stopped before raising.
        """
        if self.running:
            return self
        if not Path(self.model_path).is_file():
            raise BackendError(f"model file not found: {self.model_path}", where="localserver")
        resolved = implementation(self.implementation)
        impl = self.server_name = resolved.name
        threads = self.n_threads or default_threads()
        self.version, self.gpu_offload = resolved.version, resolved.gpu_offload
        if self.n_gpu_layers != 0 and self.gpu_offload is False and self.on_warning:
            self.on_warning("llama-cpp-python was built without GPU offload: the model runs on the CPU")
        self.n_threads = threads
        if self.sandbox:
            self.sandbox_record = sandboxing.require().record()
        else:
            self.sandbox_record = sandboxing.OFF_RECORD
            if self.on_warning:
                self.on_warning("the model server runs WITHOUT the sandbox (sandbox=off): the model file is native "
                                "code's input with this process's network and files; for development only")
        install_signal_handlers()
        last_error: BackendError | None = None
        for _ in range(3):
            port = free_loopback_port()
            try:
                self._spawn(impl, port, threads)
                self._wait_healthy(impl, port)
                return self
            except _PortTaken as exc:
                last_error = exc.error
                continue
        assert last_error is not None
        raise last_error

    def _spawn(self, impl: str, port: int, threads: int) -> None:
        if self.sandbox:
            self._socket_dir = tempfile.mkdtemp(prefix="mtboard-sandbox-")  # mode 0700: this user only
            self.uds = os.path.join(self._socket_dir, "server.sock")
        self.command = self._argv(impl, port, threads)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="mtboard-server-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
            self._own_log = True
        self._log_file = open(self.log_path, "ab", buffering=0)  # noqa: SIM115 - closed in stop()
        env = dict(os.environ)
        env.pop("OPENAI_API_KEY", None)  # the local server needs no key; keep it out of its environment and log
        if self.sandbox:
            env = dict(sandboxing.BWRAP_ENV)  # bwrap's pid-1 helper inside keeps bwrap's environment
        elif impl == LLAMA_CPP_PYTHON:
            env.update(self._llama_cpp_python_env(str(self.model_path), threads))
        preexec = _die_with_parent if (self.die_with_parent and sys.platform.startswith("linux")) else None
        self._proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                      stderr=subprocess.STDOUT, start_new_session=True, env=env,
                                      preexec_fn=preexec)  # noqa: PLW1509 - prctl only, no Python state
        self.spawned_pids.append(self._proc.pid)
        _LIVE.add(self)
        self.base_url = "http://localhost/v1" if self.sandbox else f"http://127.0.0.1:{port}/v1"

    def _wait_healthy(self, impl: str, port: int) -> None:
        from mtboard.llm import get_json  # the one module that imports httpx

        host = "localhost" if self.uds else f"127.0.0.1:{port}"
        url = f"http://{host}" + ("/health" if impl == LLAMA_SERVER else "/v1/models")
        t0 = time.monotonic()
        while True:
            assert self._proc is not None
            rc = self._proc.poll()
            if rc is not None:
                tail = self.log_tail()
                self.stop()
                err = BackendError(f"{impl} exited with code {rc} while starting: {tail}", where="localserver",
                                   fix="see the server log; check the model file, n_ctx and free memory")
                if "address already in use" in tail.lower():
                    raise _PortTaken(err)
                raise err
            try:
                status, _ = get_json(url, timeout_s=5.0, trust_env=False, uds=self.uds)  # our own server
                if status == 200:
                    self.startup_s = time.monotonic() - t0
                    return
            except ConnectionError:
                pass
            if time.monotonic() - t0 > self.startup_timeout_s:
                tail = self.log_tail()
                self.stop()
                raise BackendError(f"{impl} was not healthy after {self.startup_timeout_s:.0f} s: {tail}",
                                   where="localserver", fix="raise startup_timeout_s or check the server log")
            time.sleep(0.2)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after ``timeout_s``). Idempotent."""
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                proc.terminate()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait(timeout=timeout_s)
        if self._log_file is not None:
            try:
                self._log_file.close()  # type: ignore[attr-defined]
            except OSError:
                pass
            self._log_file = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
            self.uds = None
        if self._own_log and self.log_path is not None:
            try:
                Path(self.log_path).unlink()
            except OSError:
                pass
            self.log_path = None
            self._own_log = False

    def log_tail(self, chars: int = 400) -> str:
        """Last ``chars`` characters of the server log on one line (secrets never reach this log)."""
        if self.log_path is None or not Path(self.log_path).exists():
            return "(no log)"
        data = Path(self.log_path).read_bytes()[-chars * 4:].decode("utf-8", "replace")
        return " ".join(data.split())[-chars:] or "(empty log)"

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _PortTaken(Exception):
    def __init__(self, error: BackendError):
        super().__init__(str(error))
        self.error = error


__all__ = ["LocalServer", "ServerImplementation", "implementation", "available", "default_threads", "free_loopback_port", "install_signal_handlers",
           "llama_cpp_python_info", "llama_server_version", "LLAMA_SERVER", "LLAMA_CPP_PYTHON"]
