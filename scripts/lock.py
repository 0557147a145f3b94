#!/usr/bin/env python3
"""Write requirements/ci.txt: every package the workflows install, pinned, with SHA-256 hashes (issue 21).

    python scripts/lock.py            re-lock after changing [project] dependencies or [build-system] requires
                                      (needs the package index; uv from the dev extra)

The workflows (debian:12, Python 3.11, x86_64) install it with ``pip install --require-hashes -r
requirements/ci.txt`` and then the harness itself with ``pip install --no-deps --no-build-isolation --no-index``, so
nothing is fetched by name without a hash. Inputs: ``[project].dependencies`` and the ``ja`` extra (through ``uv pip compile
pyproject.toml --extra ja``) and ``[build-system].requires`` (the project is built without isolation, with the locked
setuptools). The first line records :func:`inputs_sha256` of those inputs, which tests/test_lock.py recomputes
offline: a dependency edited without re-locking fails the test.
"""

from __future__ import annotations

import hashlib
import json
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
EXTRAS = ("ja",)
"""Optional extras the workflows need: ``ja`` (MeCab tokenizers), without which no en→ja or en→ko card validates."""


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


def main() -> int:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    build = "\n".join(inputs()["build-system"]) + "\n"  # type: ignore[arg-type]
    LOCK.parent.mkdir(exist_ok=True)
    body = LOCK.with_suffix(".tmp")
    if LOCK.exists():  # uv keeps the pins of an existing output file where they still fit
        body.write_text(LOCK.read_text(encoding="utf-8"), encoding="utf-8")
    cmd = [uv, "pip", "compile", "pyproject.toml", "-", "--generate-hashes",
           *(a for name in EXTRAS for a in ("--extra", name)), "--python-version", PYTHON_VERSION,
           "--python-platform", PLATFORM, "--custom-compile-command", "python scripts/lock.py", "--quiet",
           "-o", str(body)]
    proc = subprocess.run(cmd, cwd=ROOT, input=build, text=True)
    if proc.returncode != 0:
        body.unlink(missing_ok=True)
        return proc.returncode
    text = body.read_text(encoding="utf-8")
    if text.startswith(HEADER):
        text = text.split("\n", 1)[1]
    LOCK.write_text(f"{HEADER}{inputs_sha256()}\n{text}", encoding="utf-8")
    body.unlink()
    print(f"wrote {LOCK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
