"""The console script imports only the command's module (mtboard/cli/entry.py; issue 35 item 4): its table names the
module of every command the whole app registers, each module alone registers exactly its commands, a command's help
and errors are the whole app's, and no other command module is imported."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from mtboard.cli.entry import COMMANDS, COMPLETION_VARIABLE, command_module

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
ENV.pop(COMPLETION_VARIABLE, None)


def _registered(app) -> dict[str, str]:
    """Top-level name (as typed) → module of the callback(s) behind it, for a typer app (a group no module has put a
    command in yet, such as ``corpus`` before ``mtboard.cli.corpus`` is imported, is left out)."""
    out: dict[str, str] = {}
    for cmd in app.registered_commands:
        out[cmd.name or typer.main.get_command_name(cmd.callback.__name__)] = cmd.callback.__module__
    for group in app.registered_groups:
        modules = {c.callback.__module__ for c in group.typer_instance.registered_commands}
        assert len(modules) <= 1, f"group {group.name} has commands in {sorted(modules)}"
        if modules:
            out[group.name] = modules.pop()
    return out


def test_the_table_names_the_module_of_every_command_of_the_whole_app():
    from mtboard.cli.main import app

    want = _registered(app)
    assert len(want) == 24
    assert {name: f"mtboard.cli.{module}" for name, module in COMMANDS.items()} == want


def test_command_module_reads_the_first_argument():
    assert command_module(["run", "corpora/x.json"]) == "mtboard.cli.run"
    assert command_module(["plugin-gate", "card.json"]) == "mtboard.cli.plugins"
    assert command_module(["build"]) == "mtboard.cli.site"
    assert command_module(["corpus", "import", "x.po"]) == "mtboard.cli.corpus"
    # the whole app: nothing, an option first, an unknown name (its error lists nothing, but --help would)
    for argv in ([], ["--help"], ["--help", "run"], ["nosuch"], ["Run"], ["run_"], ["-h"]):
        assert command_module(argv) is None, argv
    assert command_module(["--version"]) == command_module(["--version", "run"]) == "mtboard.cli.app"


def test_shell_completion_gets_the_whole_app(monkeypatch):
    monkeypatch.setenv(COMPLETION_VARIABLE, "bash_complete")
    assert command_module(["run"]) is None


ALONE = """
import json, os, sys
sys.path.insert(0, "tests")
from test_cli_entry import _registered  # imports mtboard.cli.entry, no command module
from mtboard.cli.app import app  # the common base, imported once; every module then in a child of its own (fork)
for module in MODULES:
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        __import__(module)
        names = set(_registered(app))
        loaded = sorted(m for m in sys.modules if m.startswith("mtboard.cli."))
        os.write(write, json.dumps([module, sorted(names), loaded]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        print(f.read())
    os.wait()
"""


def test_each_module_alone_registers_exactly_its_commands_and_imports_no_other_command_module():
    """Each module imported alone (a fresh child of one interpreter that has only the app): it registers exactly
    the names the table gives it, and importing it loads no other command module (one that did would make
    ``mtboard <its command>`` pay for both, or hide a dependency the table does not know)."""
    modules = sorted({f"mtboard.cli.{m}" for m in COMMANDS.values()})
    assert len(modules) == 19
    code = f"MODULES = {modules!r}\n" + ALONE
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=ENV, capture_output=True, text=True,
                          check=True, timeout=120)
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [g[0] for g in got] == modules
    for module, names, loaded in got:
        assert names == sorted(n for n, m in COMMANDS.items() if f"mtboard.cli.{m}" == module), module
        assert sorted(set(loaded) & set(modules)) == [module], (module, loaded)


PROBE = """
import sys
from mtboard.cli.entry import main
try:
    main(sys.argv[1:])
finally:
    import json
    print("MODULES " + json.dumps(sorted(m for m in sys.modules if m.startswith("mtboard.cli."))), file=sys.stderr)
"""
WHOLE = "import sys; from mtboard.cli.main import app; app(args=sys.argv[1:], prog_name='mtboard')"


def _probe(*args: str) -> tuple[int, str, str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, env=ENV, capture_output=True, text=True,
                          timeout=120)
    err, _, line = proc.stderr.rpartition("MODULES ")
    return proc.returncode, proc.stdout, err, json.loads(line)


def _whole(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-c", WHOLE, *args], cwd=REPO, env=ENV, capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [("validate", "--help"), ("corpus", "import", "--help"),
                                  ("run", "no/such/corpus.json", "--method", "echo:")],
                         ids=["validate-help", "corpus-import-help", "run-error"])
def test_a_command_reads_and_fails_as_in_the_whole_app_and_imports_no_other_command_module(args):
    code, out, err, loaded = _probe(*args)
    assert (code, out, err) == _whole(*args)
    if args[0] == "run":  # a one-line error naming the corpus, exit 1 (cli.app.guarded)
        assert code == 1 and "no/such/corpus.json" in err and err.count("\n") == 1, err
    else:
        assert code == 0 and f"Usage: mtboard {' '.join(args[:-1])} [OPTIONS]" in out
    own = f"mtboard.cli.{COMMANDS[args[0]]}"
    others = {f"mtboard.cli.{m}" for m in COMMANDS.values()} - {own}
    assert own in loaded and "mtboard.cli.main" not in loaded
    assert sorted(others & set(loaded)) == []


def test_the_version_needs_no_command_module():
    code, out, err, loaded = _probe("--version")
    assert (code, out, err) == _whole("--version") and code == 0
    from mtboard import __version__

    assert out == f"{__version__}\n"
    assert set(loaded) <= {"mtboard.cli.app", "mtboard.cli.entry", "mtboard.cli.environment"}, loaded


def test_the_whole_app_is_imported_for_the_top_level_help():
    code, out, _, loaded = _probe("--help")
    assert code == 0 and "Usage: mtboard [OPTIONS] COMMAND [ARGS]..." in out
    assert "mtboard.cli.main" in loaded
    listed = re.findall(r"^│ ([a-z][a-z-]*) ", out, re.M)  # the Commands panel's rows (rich)
    assert sorted(listed) == sorted(COMMANDS)
