"""Run ``mtboard ARGS`` in-process with typer's CliRunner (issue 19 part 6), with the result shaped like
:class:`subprocess.CompletedProcess` (``returncode``, ``stdout``, ``stderr``) so tests read the same as with a child
process, minus the ~0.5–1 s interpreter start and imports per call.

A subprocess stays where the test is about the process (signals, kill -9, the exit code of the real console script,
the installed wheel, the workflow replays).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from mtboard.cli.main import app


def invoke(args: list[str], *, env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
           unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``mtboard ARGS`` in this process: ``env`` is added to the environment for the call, variables starting with a
    prefix in ``unset`` are removed for it, ``cwd`` is the working directory during the call. Exit codes are the
    CLI's (``guarded`` turns every error into one line and exit 1); an exception the CLI let escape is a bug and is
    re-raised here with its traceback."""
    changes: dict[str, str | None] = {k: None for k in os.environ if unset and k.startswith(unset)}
    changes.update(env or {})
    with contextlib.chdir(Path(cwd)) if cwd is not None else contextlib.nullcontext():
        res = CliRunner().invoke(app, [str(a) for a in args], env=changes, prog_name="mtboard")
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(["mtboard", *map(str, args)], res.exit_code, res.stdout, res.stderr)
