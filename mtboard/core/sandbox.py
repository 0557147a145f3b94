"""The sandbox every model server started for a card runs in (issue 21; docs/SECURITY.md, "A malicious model file"),
and the COMET worker too (issue 34 item 5: :mod:`mtboard.score.metrics.neural` unpickles a model checkpoint).

It lives in ``core/`` so that both can use the one implementation (the backends import it as
:mod:`mtboard.backends.local.sandbox`, which re-exports this module).

A contributor's GGUF file (its tensors, metadata and embedded chat template) is attacker-controlled input to native
code, and ``mtboard verify`` parses it inside the job that holds the API keys and the secret segment. The server
therefore runs under bubblewrap (``bwrap``, Debian package ``bubblewrap``; https://github.com/containers/bubblewrap):

* **no network**: new network namespace (``--unshare-all``: net, pid, ipc, uts, cgroup and, where allowed, user):
  only its own ``lo``, so no TCP/UDP connection leaves the namespace. The harness reaches the server over a Unix
  socket in the one writable bind-mounted folder (:data:`SOCKET_DIR`); prompts are the only data that crosses.
* **no secrets from the environment**: ``--clearenv``; only :data:`PASSED_ENV` (device selection) and the values the
  caller sets (server settings) are present. A new pid namespace and its own ``/proc`` hide the parent's
  ``/proc/PID/environ``. bwrap itself must be started with :data:`BWRAP_ENV` only (``env=`` of the spawn): its
  pid-1 helper inside the sandbox keeps bwrap's own environment, which the server could read at
  ``/proc/1/environ`` (tests/test_sandbox.py shows both).
* **read-only view of what it needs**: the system's ``/usr`` (and the merged-``/usr`` links), the dynamic linker's
  cache, the Python runtime and its site-packages (:func:`python_roots`), the model file (at
  ``/model/<file name>``); a private ``/tmp`` and ``/dev``; GPU device nodes when present. The repository, the
  corpora, ``$HOME``, the HF cache's other files and the secret segment are not visible.
* **no privileges**: ``--cap-drop ALL``, ``--new-session`` (no terminal injection), ``--die-with-parent``.

:func:`status` says whether the sandbox works here (``mtboard doctor``); :func:`require` raises when it does not.
Turning it off (``--backend-opt sandbox=off``) is for development only: the card records :data:`OFF_RECORD`.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from mtboard.core.errors import BackendError

BWRAP = "bwrap"
SOCKET_DIR = "/run/mtboard"
"""Folder inside the sandbox bind-mounted (writable) from a fresh private host folder: the server's Unix socket."""
MODEL_DIR = "/model"
"""Folder inside the sandbox holding the model file, read-only, under its own file name."""
PASSED_ENV = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GGML_VK_VISIBLE_DEVICES")
"""Variables copied from the parent's environment (device selection only; nothing else crosses)."""
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")
"""The few files under /etc a dynamically linked server reads (the linker cache, user names, the time zone)."""
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")
BWRAP_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
"""The whole environment bwrap is started with (module docstring: its pid-1 helper keeps it)."""
OFF_RECORD = "off: the model server ran without the sandbox (sandbox=off, development only; not isolated)"
"""What a card records in ``method.local.sandbox`` when the sandbox was turned off."""
FIX = ("install bubblewrap (apt-get install bubblewrap; in a container also allow namespaces: --cap-add SYS_ADMIN "
       "--security-opt seccomp=unconfined --security-opt apparmor=unconfined), or for development only pass "
       "--backend-opt sandbox=off (the card records it)")


@dataclass(frozen=True)
class SandboxStatus:
    """Whether the sandbox works on this machine: ``available``, the ``bwrap`` path and ``version``
    (``"bubblewrap 0.8.0"``), and ``reason`` (one line) when it does not."""

    available: bool
    path: str | None = None
    version: str | None = None
    reason: str | None = None

    def record(self) -> str:
        """The card's ``method.local.sandbox`` text for a sandboxed server, e.g. ``"bubblewrap 0.8.0: no network,
        empty environment, read-only model and runtime"``."""
        return f"{self.version or 'bubblewrap'}: no network, empty environment, read-only model and runtime"


def system_args() -> list[str]:
    """bwrap arguments for the read-only system view: ``/usr``, the merged-``/usr`` links (or read-only binds on a
    split-``/usr`` system), :data:`ETC_FILES` that exist, a fresh ``/proc``, a minimal ``/dev`` and a private
    ``/tmp``."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for path in ETC_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]


def python_roots() -> list[str]:
    """Folders the Python runtime and the server's packages live in: ``sys.prefix`` (a venv), ``sys.base_prefix``
    (the interpreter), the install scheme's purelib/platlib/stdlib and the folders of ``llama_cpp`` and ``uvicorn``
    (e.g. a user site), without the ones already inside another and without ``/usr`` (bound anyway)."""
    found: list[str] = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    paths = sysconfig.get_paths()
    found += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    for name in ("llama_cpp", "uvicorn"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            found.append(str(Path(spec.origin).resolve().parent.parent))
    real = sorted({os.path.realpath(p) for p in found if p and os.path.isdir(p)}, key=len)
    roots: list[str] = []
    for p in real:
        if p == "/usr" or p.startswith("/usr/") or any(p == r or p.startswith(r + "/") for r in roots):
            continue
        roots.append(p)
    return roots


def gpu_device_args() -> list[str]:
    """``--dev-bind`` for the GPU device nodes that exist (NVIDIA, DRI, ROCm) and a read-only ``/sys`` they need;
    empty on a machine without them."""
    nodes = sorted({p for pattern in GPU_DEVICES for p in glob.glob(pattern)})
    args: list[str] = []
    for node in nodes:
        args += ["--dev-bind", node, node]
    if nodes and os.path.isdir("/sys"):
        args += ["--ro-bind", "/sys", "/sys"]
    return args


@dataclass
class Sandbox:
    """One sandboxed command line (module docstring).

    Args:
        ro_binds: ``(host path, path inside)`` pairs bound read-only (a file or a folder).
        rw_binds: ``(host folder, path inside)`` pairs bound writable (the socket folder).
        env: variables set inside (server settings); nothing else but :data:`PASSED_ENV` is inherited.
        gpu: whether GPU device nodes are bound in.
        bwrap: the bwrap executable (default: found on PATH).
    """

    ro_binds: list[tuple[str, str]] = field(default_factory=list)
    rw_binds: list[tuple[str, str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    gpu: bool = False
    bwrap: str | None = None

    def argv(self, command: list[str]) -> list[str]:
        """The full ``bwrap … -- COMMAND`` argv, to be started with ``env=`` :data:`BWRAP_ENV`. Raises BackendError
        when bwrap is not installed."""
        exe = self.bwrap or shutil.which(BWRAP)
        if exe is None:
            raise BackendError("bubblewrap (bwrap) is not installed: model servers run only inside its sandbox",
                               where="sandbox", fix=FIX)
        args = [exe, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
        args += system_args()
        for root in python_roots():
            args += ["--ro-bind", root, root]
        for host, inside in self.ro_binds:
            args += ["--ro-bind", str(host), inside]
        for host, inside in self.rw_binds:
            args += ["--bind", str(host), inside]
        if self.gpu:
            args += gpu_device_args()
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
        env.update({k: os.environ[k] for k in PASSED_ENV if k in os.environ})
        env.update(self.env)
        for key, value in env.items():
            args += ["--setenv", key, value]
        return args + ["--chdir", "/tmp", "--", *command]


@functools.lru_cache(maxsize=1)
def status() -> SandboxStatus:
    """Whether the sandbox works here: bwrap on PATH, its version, and a probe (``true`` run with the same
    namespaces and system view as a server) that succeeds. Cached; the probe takes ~20 ms."""
    exe = shutil.which(BWRAP)
    if exe is None:
        return SandboxStatus(False, reason="bwrap is not installed (Debian package bubblewrap)")
    try:
        ver = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        probe = subprocess.run(Sandbox(bwrap=exe).argv(["true"]), capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL, env=BWRAP_ENV)
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus(False, exe, reason=f"bwrap cannot run: {type(exc).__name__}: {exc}")
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1][:200]
        return SandboxStatus(False, exe, ver or None, reason=f"bwrap cannot create the sandbox here: {why}")
    return SandboxStatus(True, exe, ver or "bubblewrap")


def require() -> SandboxStatus:
    """:func:`status`, or BackendError (where ``sandbox``, the reason, the fix) when the sandbox does not work."""
    st = status()
    if not st.available:
        raise BackendError(f"model servers run only inside the sandbox, and it is not available: {st.reason}",
                           where="sandbox", fix=FIX)
    return st


__all__ = ["BWRAP", "BWRAP_ENV", "SOCKET_DIR", "MODEL_DIR", "PASSED_ENV", "OFF_RECORD", "Sandbox", "SandboxStatus", "status",
           "require", "system_args", "python_roots", "gpu_device_args"]
