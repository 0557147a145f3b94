"""The ``mtboard`` command line's shared parts (typer): the :data:`app` every command module registers on, and the
helpers commands print and fail with. The CLI is the only layer that prints, prompts or exits.

This module imports no command module: :mod:`mtboard.cli.main` imports all of them and :mod:`mtboard.cli.entry` (the
entry point) the one a command line names; they register their commands on :data:`app` from here, so no import runs
in a circle. Every command turns :class:`mtboard.core.errors.MtboardError` into one line on stderr and exit code 1, never a traceback
(tracebacks could show locals holding API keys).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable

import typer

from mtboard import __version__
from mtboard.core.errors import MtboardError, StorageError, storage_error

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(name="mtboard", no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Open machine-translation evaluation arena: run, score, validate, publish.")
corpus_app = typer.Typer(no_args_is_help=True, help="Import, check and merge corpora (spec §2).")
app.add_typer(corpus_app, name="corpus")


def fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


PIPE_WIDTH = 160
"""Columns of rich output when stdout is not a terminal and ``$COLUMNS`` is not set (rich's own default, 80, wraps
the ``mtboard backends`` meaning column to a word or two per line in logs and pipes)."""


def output_console() -> "Console":
    """The rich Console a command prints its tables with: the terminal's width on a terminal, ``$COLUMNS`` when set,
    else :data:`PIPE_WIDTH` (pipes, files, CI logs)."""
    import os

    from rich.console import Console

    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(width=width)


REPORT_HINT = "this is a bug in mtboard; please report it with the command you ran (no traceback is shown: it " \
              "could hold API keys)"
"""Appended to ``internal error`` lines."""


def _passthrough() -> tuple[type[BaseException], ...]:
    """Exceptions typer/click use for control flow (exit codes, usage errors): never turned into error lines."""
    import click

    return (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.exceptions.ClickException)


def error_line(exc: BaseException) -> str:
    """One line for an exception escaping a command: MtboardError's own line; an OSError that is an environment
    fault (a full disk or quota, a read-only file system, no permission, a device error, too many open files, a name
    too long: :data:`mtboard.core.errors.ENVIRONMENT_FAULTS`) as the path and the fix
    (:func:`mtboard.core.errors.storage_error`) — never "internal error"; a pydantic ValidationError as
    :func:`mtboard.core.schema.describe_validation_error` (model, first JSON path, problem; never the input value);
    anything else (an OSError with another errno among them: ``EINVAL``, ``EBADF`` … from mtboard's own calls are
    bugs) as ``internal error: <type>: <first line of its message>`` plus :data:`REPORT_HINT`."""
    if isinstance(exc, MtboardError):
        return exc.one_line()
    if isinstance(exc, OSError) and (fault := storage_error(exc)) is not None:
        return fault.one_line()
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        from mtboard.core.schema import describe_validation_error

        return f"invalid data: {describe_validation_error(exc, exc.title)}"
    text = str(exc).strip().splitlines()
    first = text[0][:300] if text else ""
    return f"internal error: {type(exc).__name__}" + (f": {first}" if first else "") + f" ({REPORT_HINT})"


def invoked_program(argv0: str) -> list[str]:
    """The program as it was invoked, so that a printed command works in the same shell: ``mtboard`` when that is
    what ``PATH`` finds (a console script run through ``PATH`` gets its full path as ``argv[0]``), else ``argv0`` as
    typed (``.venv/bin/mtboard`` without an activated venv); ``python -m mtboard`` (``argv0`` is the package's
    ``__main__.py``) gives ``[sys.executable, "-m", "mtboard"]``."""
    if Path(argv0).name == "__main__.py":
        return [sys.executable, "-m", "mtboard"]
    import shutil

    found = shutil.which("mtboard")
    if argv0 == "mtboard" or (found is not None and Path(found).resolve() == Path(argv0).resolve()):
        return ["mtboard"]
    return [argv0]


def rerun_command(argv: list[str] | None = None) -> str:
    """The command line to run again after a storage fault is fixed: ``argv`` (default ``sys.argv``) as typed, with
    the program as invoked (:func:`invoked_program`: ``mtboard``, a venv path or ``python -m
    mtboard``), shell-quoted (``shlex.join``); a URL argument carrying credentials or a query (``--base-url
    https://user:key@host/v1``) is replaced by ``YOUR_URL`` — the line is printed. When ``argv`` is not an mtboard
    command line (mtboard called in-process, e.g. typer's test runner), the shape: ``the same `mtboard corpus import`
    command`` (the command's path from click's context)."""
    import shlex
    from urllib.parse import urlsplit

    argv = list(sys.argv if argv is None else argv)
    prog = Path(argv[0]) if argv else Path()
    mtboard = prog.name == "mtboard" or (prog.name == "__main__.py" and prog.parent.name == "mtboard")
    if mtboard and len(argv) > 1:  # not another program's __main__.py (``python -m pytest`` calling in-process)
        args = []
        for a in argv[1:]:
            key, eq, value = a.partition("=") if a.startswith("--") else ("", "", a)
            try:
                parts = urlsplit(value)
                secret = "://" in value and bool(parts.username or parts.password or parts.query)
            except ValueError:  # not a URL urllib can split (an unbalanced "[")
                secret = False
            args.append(f"{key}{eq}YOUR_URL" if secret else a)
        return shlex.join([*invoked_program(argv[0]), *args])
    return f"the same `{' '.join(['mtboard', *_command_path()])}` command"


def _current_context():  # noqa: ANN202 - a click Context (typer's vendored click, or click), or None
    """The click context in force — typer ≥ 0.25 vendors click as ``typer._click``, older typer uses ``click`` —
    or None outside a command."""
    import importlib

    for name in ("typer._click.globals", "click.globals"):
        try:
            ctx = importlib.import_module(name).get_current_context(silent=True)
        except ImportError:
            continue
        if ctx is not None:
            return ctx
    return None


def _option_name(param: str) -> str:
    """How the user typed the parameter ``param`` (a keyword of the command function): its longest flag
    (``--notes``) or, for an argument, its metavar (``CARD``), from the click context; ``--param-name`` outside one."""
    ctx = _current_context()
    for p in getattr(getattr(ctx, "command", None), "params", []):
        if p.name == param:
            flags = [o for o in getattr(p, "opts", []) if o.startswith("-")]
            return max(flags, key=len) if flags else (p.human_readable_name or param.upper())
    return "--" + param.replace("_", "-")


def check_text_options(values: dict) -> None:
    """Refuse a command-line string that is not valid UTF-8 (second review of issue 33, finding 8) before the
    command does anything — every ``str`` parameter of every command (and each ``str`` of a list/tuple option), once,
    here. Python decodes ``argv`` with the file-system encoding's ``surrogateescape`` handler (PEP 383): a byte that
    is not UTF-8 (``--notes $'a\\xffb'`` typed in a Latin-1 terminal) arrives as a lone surrogate (U+DCFF), which
    no JSON file, HTTP request or card can hold, so the command would otherwise fail later without naming the option
    (RFC 8785: "input contains non-UTF-8 codepoints"). Paths (``pathlib.Path`` parameters) are not checked: a file
    name may be any bytes.

    Raises: ConfigError ``--notes: not valid UTF-8: byte 0xff at character 2 (fix: …)``; a surrogate that is no
    escaped byte (U+D800–U+DC7F, U+DD00–U+DFFF: only from a caller passing str directly) is named as a lone
    surrogate."""
    from mtboard.core.errors import ConfigError

    for name, value in values.items():
        texts = [value] if isinstance(value, str) else (
            [v for v in value if isinstance(v, str)] if isinstance(value, (list, tuple)) else [])
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                ch = ord(text[exc.start])
                what = (f"byte 0x{ch - 0xDC00:02x}" if 0xDC80 <= ch <= 0xDCFF else f"a lone surrogate U+{ch:04X}")
                raise ConfigError(f"not valid UTF-8: {what} at character {exc.start + 1}", field=_option_name(name),
                                  fix="type the value in a UTF-8 terminal (locale charmap: UTF-8; e.g. "
                                      "LANG=C.UTF-8), or convert it (iconv -f LATIN1 -t UTF-8)") from None


def _command_path() -> list[str]:
    """The running command's words after the program (``["corpus", "import"]``) from the click context in force
    (:func:`_current_context`), or [] outside a command."""
    ctx = _current_context()
    words = []
    while ctx is not None and ctx.parent is not None:  # the root's name is the program, however invoked
        words.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return words


def closed_pipe_exit() -> None:
    """The reader of stdout went away (``mtboard … | head -1``): exit 1 quietly, as the ``signal`` module docs
    recommend ("Note on SIGPIPE"): point stdout at os.devnull so that the interpreter's final flush of what is still
    buffered does not raise again ("Exception ignored … BrokenPipeError", exit 120), print nothing — stderr may be
    the same closed pipe (``2>&1 | head``) — and exit with 1, Python's code for EPIPE. Python ignores SIGPIPE, so
    the write raised BrokenPipeError instead of killing the process; restoring SIG_DFL instead would kill mtboard
    mid-write of a work-dir file fed through a pipe, so it is not done."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
    except (OSError, ValueError):  # stdout/stderr replaced by objects without a descriptor (tests): nothing to do
        pass
    raise typer.Exit(1)


def guarded(fn: Callable) -> Callable:
    """Decorator of every command: the environment is read once as the command starts
    (:func:`mtboard.cli.environment.command_environment`: the ``MTBOARD_*`` variables, the library's run-time
    configuration for the command's duration), and any exception → one line on stderr, exit 1, no traceback and no
    locals (they can hold API keys).

    MtboardError → its one-line message (a malformed ``MTBOARD_*`` value among them); a storage fault — a
    StorageError, or an OSError that is an environment fault (disk full, read-only, no permission …) — → the path,
    the fix and ``then re-run: <the same command>`` (:func:`rerun_command`; issue 33 item 5: every mtboard command
    writes its outputs atomically, so running it again once the fault is fixed is the way on; ``mtboard run`` and
    ``mtboard judge`` print their own resume command, left as it is); pydantic
    ValidationError →
    model, field and problem; any other exception → ``internal error: <type>: <first line>`` with a hint to report
    it; Ctrl-C → ``interrupted``, exit 130; a text option that is not valid UTF-8 → one line naming the option,
    before the command starts (:func:`check_text_options`); a closed stdout pipe (``| head -1``) → nothing printed, exit 1
    (:func:`closed_pipe_exit`). typer/click control-flow exceptions (Exit, Abort, usage errors) pass through.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # imported here, not at the top: pydantic stays out of `mtboard --help`
        from mtboard.cli.environment import command_environment

        try:
            check_text_options(kwargs)
            with command_environment():
                return fn(*args, **kwargs)
        except BrokenPipeError:
            closed_pipe_exit()
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as exc:  # noqa: BLE001 - the CLI boundary: every error becomes one line
            if isinstance(exc, _passthrough()):
                raise
            fault = storage_error(exc) if isinstance(exc, (OSError, StorageError)) else None
            if fault is not None:  # an environment fault: the path, the fix and the command to run again
                fail(fault.with_rerun(rerun_command()).one_line())
            fail(error_line(exc))

    return wrapper


def _print_version(value: bool) -> None:
    """``--version``: eager, so it works without a command (a group otherwise asks for one first)."""
    if value:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                               callback=_print_version)] = False) -> None:
    """Open machine-translation evaluation arena: run, score, validate, publish."""

def refresh_workdir_outputs(workdir: Path, target: Path, new, report_note: str, card_word: str) -> None:  # noqa: ANN001
    """After a command re-seals the work directory's own card (``mtboard judge``, ``mtboard neural``): bring
    report.md's card lines and the PR body file in step with ``new`` and print what changed. ``report_note`` says what
    report.md re-wrote; ``card_word`` names the new card in the "run `mtboard submit` again" hint."""
    import typer

    from mtboard.run.report import REPORT, rejudge_report
    from mtboard.run.submit import refresh_body_file

    if rejudge_report(workdir / REPORT, new):
        typer.echo(f"report      {workdir / REPORT}  ({report_note})")
    removed, body = refresh_body_file(Path(target), new, Path("."))
    if body is not None:
        typer.echo(f"pr body     {body}" + (f"  (replaces {', '.join(p.name for p in removed)}; run `mtboard "
                                           f"submit` again for the {card_word} card)" if removed else ""))
