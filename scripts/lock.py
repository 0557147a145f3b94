#!/usr/bin/env python3
"""Write requirements/ci.txt: every package the workflows install, pinned, with SHA-256 hashes (issue 21).

    python scripts/lock.py            re-lock after changing [project] dependencies, [build-system] requires or
                                      the local extra (needs the package index; uv from the dev extra)

The workflows (debian:12, Python 3.11, x86_64) install it with ``pip install --require-hashes -r
requirements/ci.txt`` and then the harness itself with ``pip install --no-deps --no-build-isolation --no-index``, so
nothing is fetched by name without a hash. Inputs: ``[project].dependencies`` and the ``ja`` extra (through ``uv pip compile
pyproject.toml --extra ja``) and ``[build-system].requires`` (the project is built without isolation, with the locked
setuptools). The first line records :func:`inputs_sha256` of those inputs, which tests/test_lock.py recomputes
offline: a dependency edited without re-locking fails the test.

verify.yml re-runs a ``gguf:`` card with llama-cpp-python, which has no wheels on PyPI: for that job only, two more
files pinned consistently with ci.txt — ``requirements/verify-build.txt`` (its build backend) and
``requirements/verify-local.txt`` (its sdist and server dependencies), installed with ``--require-hashes`` and the
sdist built with ``--no-build-isolation`` (:func:`local_inputs`).

Neural metrics (docs/neural_metrics.md) run in a separate environment that cannot share ci.txt's (unbabel-comet needs
huggingface-hub<1.0 and numpy<2): ``requirements/comet.txt`` locks ``requirements/comet.in`` on its own
(:func:`comet_inputs`), with PyTorch's CPU wheel — found through :data:`TORCH_CPU_LINKS` — instead of PyPI's CUDA
build. verify.yml installs it only for a card that has neural metrics.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "ci.txt"
PYTHON_VERSION = "3.11"
"""Debian 12's python3, the workflows' interpreter."""
PLATFORM = "x86_64-manylinux_2_36"
"""Debian 12's glibc 2.36 on x86_64 (GitHub's ubuntu-latest runners, debian:12 container)."""
HEADER = "# inputs-sha256: "
EXTRAS = ("ja", "weights")
"""Optional extras the workflows need: ``ja`` (MeCab tokenizers), without which no en→ja or en→ko card validates;
``weights`` (the ``gguf`` reader and the committed Gemma GGUF's package), without which the validate and site jobs
could not bind a model record's values to its weights (issue 37)."""


def inputs(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, object]:
    """What the lock is made from: ``requires-python``, ``[project].dependencies``, the :data:`EXTRAS` and
    ``[build-system].requires``, each as written in pyproject.toml."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    optional = data["project"].get("optional-dependencies", {})
    return {"requires-python": data["project"].get("requires-python"),
            "dependencies": list(data["project"].get("dependencies", [])),
            "extras": {name: list(optional.get(name, [])) for name in EXTRAS},
            "build-system": list(data["build-system"].get("requires", [])),
            "python": PYTHON_VERSION, "platform": PLATFORM}


def inputs_sha256(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """SHA-256 of the canonical JSON of :func:`inputs` (sorted keys, no spaces)."""
    blob = json.dumps(inputs(pyproject), sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


LOCAL_LOCK = ROOT / "requirements" / "verify-local.txt"
"""The local-model server for re-running a ``gguf:`` card in verify.yml: the ``local`` extra's llama-cpp-python
(its sdist, built there with ``--no-build-isolation``) and what it needs, pinned consistently with :data:`LOCK`."""
BUILD_LOCK = ROOT / "requirements" / "verify-build.txt"
"""llama-cpp-python's build backend, installed (hashed) before :data:`LOCAL_LOCK` so the sdist builds without an
isolated, unhashed build environment."""
LLAMA_BUILD_REQUIRES = ("scikit-build-core[pyproject]>=0.9.2",)
"""``[build-system].requires`` of llama-cpp-python 0.3.x's sdist (its pyproject.toml; cmake and ninja come from
Debian: verify.yml installs ``cmake ninja-build build-essential``)."""


def local_inputs(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, object]:
    """What :data:`BUILD_LOCK` and :data:`LOCAL_LOCK` are made from: the ``local`` extra's llama-cpp-python
    requirement, :data:`LLAMA_BUILD_REQUIRES` and :func:`inputs_sha256` (they are constrained by :data:`LOCK`)."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    local = data["project"].get("optional-dependencies", {}).get("local", [])
    return {"llama": [r for r in local if r.replace("_", "-").lower().startswith("llama-cpp-python")],
            "build": list(LLAMA_BUILD_REQUIRES), "ci": inputs_sha256(pyproject),
            "python": PYTHON_VERSION, "platform": PLATFORM}


def local_inputs_sha256(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """SHA-256 of the canonical JSON of :func:`local_inputs`."""
    blob = json.dumps(local_inputs(pyproject), sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def compile_lock(uv: str, out: Path, requirements: list[str], digest: str, *args: str) -> int:
    """``uv pip compile`` ``requirements`` (read from stdin) with hashes for :data:`PYTHON_VERSION` /
    :data:`PLATFORM` into ``out``, its first line ``# inputs-sha256: DIGEST``. Returns uv's exit status."""
    out.parent.mkdir(exist_ok=True)
    body = out.with_suffix(".tmp")
    if out.exists():  # uv keeps the pins of an existing output file where they still fit
        body.write_text(out.read_text(encoding="utf-8"), encoding="utf-8")
    cmd = [uv, "pip", "compile", *args, "-", "--generate-hashes", "--python-version", PYTHON_VERSION,
           "--python-platform", PLATFORM, "--custom-compile-command", "python scripts/lock.py", "--quiet",
           "-o", str(body)]
    proc = subprocess.run(cmd, cwd=ROOT, input="\n".join(requirements) + "\n", text=True)
    if proc.returncode != 0:
        body.unlink(missing_ok=True)
        return proc.returncode
    text = body.read_text(encoding="utf-8")
    if text.startswith(HEADER):
        text = text.split("\n", 1)[1]
    out.write_text(f"{HEADER}{digest}\n{text}", encoding="utf-8")
    body.unlink()
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


COMET_IN = ROOT / "requirements" / "comet.in"
"""The COMET environment's requirements (unbabel-comet, torch, setuptools)."""
COMET_LOCK = ROOT / "requirements" / "comet.txt"
"""Hashed lock of :data:`COMET_IN` (its own resolution: not constrained by :data:`LOCK`)."""
TORCH_CPU_LINKS = os.environ.get("TORCH_CPU_LINKS") or (
    "/opt/wheels" if Path("/opt/wheels").is_dir() else "https://download.pytorch.org/whl/cpu/torch/")
"""Where uv finds torch's CPU wheel (``torch==X+cpu``): ``$TORCH_CPU_LINKS``, else the local wheel folder of the
project's machines, else PyTorch's CPU index page."""


def comet_inputs(comet_in: Path = COMET_IN) -> dict[str, object]:
    """What :data:`COMET_LOCK` is made from: the requirement lines of :data:`COMET_IN` (comments dropped)."""
    lines = [ln.split("#", 1)[0].strip() for ln in comet_in.read_text(encoding="utf-8").splitlines()]
    return {"requirements": [ln for ln in lines if ln], "python": PYTHON_VERSION, "platform": PLATFORM}


def comet_inputs_sha256(comet_in: Path = COMET_IN) -> str:
    """SHA-256 of the canonical JSON of :func:`comet_inputs`."""
    blob = json.dumps(comet_inputs(comet_in), sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def main() -> int:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    build: list[str] = inputs()["build-system"]  # type: ignore[assignment]
    extras = [a for name in EXTRAS for a in ("--extra", name)]
    rc = compile_lock(uv, LOCK, build, inputs_sha256(), "pyproject.toml", *extras)
    if rc == 0:
        rc = compile_lock(uv, BUILD_LOCK, list(LLAMA_BUILD_REQUIRES), local_inputs_sha256(), "-c", str(LOCK))
    if rc == 0:
        llama: list[str] = local_inputs()["llama"]  # type: ignore[assignment]
        rc = compile_lock(uv, LOCAL_LOCK, llama, local_inputs_sha256(), "-c", str(LOCK), "-c", str(BUILD_LOCK))
    if rc == 0:
        reqs: list[str] = comet_inputs()["requirements"]  # type: ignore[assignment]
        rc = compile_lock(uv, COMET_LOCK, reqs, comet_inputs_sha256(), "--find-links", TORCH_CPU_LINKS,
                          "--no-emit-find-links")
    return rc


if __name__ == "__main__":
    sys.exit(main())
