"""The environment is read in one place (issue 30 item 3): every ``MTBOARD_*`` variable is a field of
:class:`mtboard.cli.environment.Environment`, read once per command by ``read_environment`` and nowhere else; the
library gets the values as parameters or through :mod:`mtboard.core.runtime`; docs/environment.md is the table
generated from that module."""

from __future__ import annotations

import ast
import functools
import re
from importlib import resources
from pathlib import Path

import pytest
import typer

import cli_support
from source_support import docstring_ids
from mtboard.cli.app import guarded
from mtboard.cli.environment import (NOT_READ, PAGE, Environment, environment, environment_page, main,
                                     read_environment, secret_segment_path, variable)
from mtboard.core.errors import ConfigError
from mtboard.core.runtime import Runtime, runtime, use_runtime

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "mtboard"
NAME = re.compile(r"\bMTBOARD_[A-Z0-9]+(?:_[A-Z0-9]+)*")
"""An ``MTBOARD_`` name (not the bare prefix of ``MTBOARD_*``)."""
SCANNED = ("mtboard", "tests", "scripts", ".github", "docs", "README.md")
TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".sh", ".toml", ".txt", ".cfg", ".j2", ".ini"}
VARIABLES = {variable(name) for name in Environment.model_fields}


def _repository_files() -> list[Path]:
    files: list[Path] = []
    for top in SCANNED:
        path = REPO / top
        found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        files += [p for p in found if p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts]
    return files


def _names_by_file() -> dict[str, set[str]]:
    return {p.relative_to(REPO).as_posix(): set(NAME.findall(p.read_text(encoding="utf-8", errors="replace")))
            for p in _repository_files()}


# ---------------------------------------------------------------------------------------------------------------------
# The docs table and the names in the repository


def test_the_committed_table_is_the_generated_one() -> None:
    assert (REPO / PAGE).read_text(encoding="utf-8") == environment_page(), \
        "docs/environment.md is stale: run python -m mtboard.cli.environment"


def test_the_table_lists_every_variable_with_its_type_default_meaning_and_commands() -> None:
    page = environment_page()
    assert len(VARIABLES) == 18  # issue 34: MTBOARD_SECRETS_JOB, MTBOARD_COMET_SANDBOX; issue 35: MTBOARD_CACHE
    for name, field in Environment.model_fields.items():
        (row,) = [line for line in page.splitlines() if line.startswith(f"| `{variable(name)}` |")]
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 5 and all(cells), row
        assert cells[3] == field.description and cells[4].startswith("`mtboard "), row
    assert "| `MTBOARD_SEMANTIC_CACHE` | file path, or `off` |" in page  # issue 30: it was in no docs page


def test_check_mode_of_the_generator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "environment.md"
    assert main(["--check", str(target)]) == 1  # missing
    assert main([str(target)]) == 0 and target.read_text(encoding="utf-8") == environment_page()
    assert main(["--check", str(target)]) == 0
    target.write_text(environment_page() + "edited\n", encoding="utf-8")
    assert main(["--check", str(target)]) == 1
    assert "differs; run python -m mtboard.cli.environment" in capsys.readouterr().out


def test_every_mtboard_name_in_the_repository_is_a_variable_or_a_listed_name() -> None:
    found = _names_by_file()
    assert len(found) > 300 and "mtboard/cli/environment.py" in found
    unknown = {f"{path}: {name}" for path, names in found.items() for name in names
               if name not in VARIABLES and name not in NOT_READ}
    assert unknown == set(), "a typo, or a new variable: add a field to mtboard.cli.environment.Environment"
    assert not VARIABLES & set(NOT_READ)
    # every listed name that mtboard does not read is still used somewhere (no stale entries)
    elsewhere = set().union(*(names for path, names in found.items()
                              if path not in ("docs/environment.md", "mtboard/cli/environment.py")))
    assert set(NOT_READ) <= elsewhere
    # and every variable is used somewhere besides its definition and the table
    assert VARIABLES <= elsewhere


@functools.cache
def _parsed() -> dict[Path, ast.Module]:
    """Every module of the package and its syntax tree (parsed once for the tests below)."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PKG.rglob("*.py"))}


def test_no_module_outside_the_cli_names_an_mtboard_variable_in_code() -> None:
    """Docstrings and messages may name a variable; no string in code outside ``cli/`` starts with ``MTBOARD_`` (so
    no ``os.environ``/``os.getenv`` read of one, and no constant that a read could use)."""
    offenders = []
    modules = {p: tree for p, tree in _parsed().items() if "cli" not in p.relative_to(PKG).parts[:1]}
    assert len(modules) > 100
    for path, tree in modules.items():
        docs = docstring_ids(tree)
        offenders += [f"{path.relative_to(REPO)}:{n.lineno}: {n.value[:40]!r}" for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
                      and n.value.startswith("MTBOARD_")]
    assert offenders == []


def _reads_of_mtboard_variables(tree: ast.AST) -> list[int]:
    """Lines of ``os.environ[...]``, ``os.environ.get(...)``, ``os.getenv(...)``, ``environ.get(...)`` with an
    ``MTBOARD_`` name, and of typer's ``envvar="MTBOARD_…"``."""
    def mtboard(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("MTBOARD_")

    def environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
            (isinstance(node, ast.Name) and node.id == "environ")

    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and environ(n.value) and mtboard(n.slice):
            found.append(n.lineno)
        elif isinstance(n, ast.Call):
            f = n.func
            reader = isinstance(f, ast.Attribute) and (
                (f.attr in ("get", "pop", "setdefault") and environ(f.value)) or f.attr == "getenv")
            if reader and n.args and mtboard(n.args[0]):
                found.append(n.lineno)
            found += [n.lineno for k in n.keywords if k.arg == "envvar" and mtboard(k.value)]
    return sorted(found)


def test_only_read_environment_reads_mtboard_variables() -> None:
    offenders = [f"{p.relative_to(REPO)}:{line}" for p, tree in _parsed().items()
                 if p != PKG / "cli" / "environment.py" for line in _reads_of_mtboard_variables(tree)]
    assert offenders == []


def test_the_scan_finds_every_form_of_read() -> None:
    sample = ('import os\nfrom os import environ\na = os.environ["MTBOARD_STREAM"]\n'
              'b = os.environ.get("MTBOARD_PROGRESS")\nc = os.getenv("MTBOARD_SITE_URL")\n'
              'd = environ.get("MTBOARD_VERIFIED_BY", "")\ne = typer.Option(envvar="MTBOARD_SITE_URL")\n'
              'f = os.environ.get("HOME")\ng = os.environ.get(name)\n')
    assert _reads_of_mtboard_variables(ast.parse(sample)) == [3, 4, 5, 6, 7]


# ---------------------------------------------------------------------------------------------------------------------
# read_environment


def test_nothing_set_is_the_library_default() -> None:
    env = read_environment({})
    assert env == Environment() and env.runtime() == Runtime() == runtime()
    assert (env.stream, env.progress, env.progress_interval, env.secret_segment, env.site_url) == (
        False, False, 30.0, None, None)
    # an empty value counts as unset; names that are no variable are ignored
    assert read_environment({v: "" for v in VARIABLES} | {"MTBOARD_SECRET_SEGMENT_B64": "x"}) == env


def test_values_are_parsed_as_today() -> None:
    env = read_environment({
        "MTBOARD_PROMPTS_DIR": str(REPO / "prompts"), "MTBOARD_STREAM": "1", "MTBOARD_PROGRESS": "yes",
        "MTBOARD_PROGRESS_INTERVAL": "2.5", "MTBOARD_SCORING_WORKERS": " 3 ", "MTBOARD_SEMANTIC_CACHE": "OFF",
        "MTBOARD_COMET_PYTHON": "/c/python", "MTBOARD_NEURAL_DEVICE": "cuda", "MTBOARD_SECRET_SEGMENT": "s.json",
        "MTBOARD_HYPOTHESIS_SALT": "ab" * 32, "MTBOARD_ATTESTATION_REPOSITORY": "octo/board",
        "MTBOARD_SITE_URL": "https://x.example/", "MTBOARD_VERIFIED_BY": "me",
        "MTBOARD_VERIFY_ENVIRONMENT": "verification", "MTBOARD_VERIFY_CONTAINER": "debian:12"})
    assert env.runtime() == Runtime(prompts_dir=REPO / "prompts", scoring_workers=3, semantic_cache="off",
                                    comet_python=Path("/c/python"), neural_device="cuda", verified_by="me",
                                    verify_environment="verification", verify_container="debian:12")
    assert (env.stream, env.progress, env.progress_interval) == (True, True, 2.5)
    assert (env.secret_segment, env.attestation_repository, env.site_url) == (
        Path("s.json"), "octo/board", "https://x.example/")
    assert env.salt_text() == "ab" * 32 and "abab" not in repr(env)  # the salt never shows
    assert read_environment({"MTBOARD_STREAM": "0", "MTBOARD_PROGRESS": "0"}).stream is False
    assert read_environment({"MTBOARD_SCORING_WORKERS": "0"}).scoring_workers == 1  # below 1 counts as 1
    assert read_environment({"MTBOARD_SEMANTIC_CACHE": "rel/c.sqlite3"}).semantic_cache == Path("rel/c.sqlite3")


@pytest.mark.parametrize(("name", "value", "line"), [
    ("MTBOARD_SCORING_WORKERS", "abc", "MTBOARD_SCORING_WORKERS: 'abc' is not an integer (fix: set it to a worker "
                                       "count such as 2, or unset it)"),
    ("MTBOARD_PROGRESS_INTERVAL", "-1", "MTBOARD_PROGRESS_INTERVAL: '-1' is not above 0 seconds (fix: set it to a "
                                        "number of seconds above 0, e.g. 30, or unset it)"),
    ("MTBOARD_PROGRESS_INTERVAL", "soon", "MTBOARD_PROGRESS_INTERVAL: 'soon' is not a number of seconds (fix: set it "
                                          "to a number of seconds above 0, e.g. 30, or unset it)"),
    ("MTBOARD_NEURAL_DEVICE", "tpu", "MTBOARD_NEURAL_DEVICE: 'tpu' is not cpu or cuda (fix: set it to cpu or cuda, "
                                     "or unset it)"),
    ("MTBOARD_PROMPTS_DIR", "/nonexistent", "MTBOARD_PROMPTS_DIR: '/nonexistent' is not a folder (fix: point it at a "
                                            "folder laid out like prompts/, or unset it)"),
    ("MTBOARD_PROMPTS_DIR", "/etc/passwd", "MTBOARD_PROMPTS_DIR: '/etc/passwd' is not a folder"),
    ("MTBOARD_PROMPTS_DIR", "/etc", "MTBOARD_PROMPTS_DIR: '/etc' holds no prompt template (*.j2) (fix: point it at "
                                    "a folder laid out like prompts/, or unset it)"),
])
def test_a_malformed_value_is_one_line_naming_the_variable_and_the_fix(name: str, value: str, line: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_environment({name: value})
    assert info.value.one_line().startswith(line) and info.value.field == name
    # at the command line: that line, exit 1, no traceback — for any command (read as the command starts)
    res = cli_support.invoke(["schema", "corpus"], env={name: value})
    assert (res.returncode, res.stdout) == (1, "") and res.stderr.startswith(f"error: {line}")
    assert res.stderr.count("\n") == 1


def test_a_long_value_is_cut_in_the_error() -> None:
    with pytest.raises(ConfigError) as info:
        read_environment({"MTBOARD_SCORING_WORKERS": "x" * 500})
    assert info.value.problem == f"'{'x' * 57}...' is not an integer"


# ---------------------------------------------------------------------------------------------------------------------
# Read per command, handed to the library


def test_guarded_reads_the_environment_when_the_command_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    @guarded
    def command() -> tuple[Runtime, Environment]:
        return runtime(), environment()

    (tmp_path / "mine.j2").write_text("{{ source }}", encoding="utf-8")
    monkeypatch.setenv("MTBOARD_PROMPTS_DIR", str(tmp_path))
    monkeypatch.setenv("MTBOARD_PROGRESS_INTERVAL", "7")
    inside, env = command()
    assert inside.prompts_dir == tmp_path and env.progress_interval == 7.0
    assert runtime() == Runtime()  # restored when the command ends
    monkeypatch.setenv("MTBOARD_PROGRESS_INTERVAL", "9")  # read again by the next command, not at import
    assert command()[1].progress_interval == 9.0
    monkeypatch.setenv("MTBOARD_PROGRESS_INTERVAL", "0")
    with pytest.raises(typer.Exit) as info:
        command()
    assert info.value.exit_code == 1 and runtime() == Runtime()


def test_the_library_reads_the_runtime_configuration_not_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    from mtboard.inputs.prompts import PROMPTS_PACKAGE, prompts_dir
    from mtboard.score.metrics import neural, pool

    (tmp_path / "mine.j2").write_text("{{ source }}", encoding="utf-8")
    monkeypatch.setenv("MTBOARD_PROMPTS_DIR", str(tmp_path))
    monkeypatch.setenv("MTBOARD_SCORING_WORKERS", "5")
    monkeypatch.setenv("MTBOARD_COMET_PYTHON", str(tmp_path / "python"))
    (tmp_path / "python").touch()
    # outside a command the variables change nothing: the shipped prompts, the automatic worker count, the default
    # COMET environment (present or not)
    assert prompts_dir() == Path(resources.files(PROMPTS_PACKAGE))  # type: ignore[arg-type]
    assert pool.worker_count(10) == 1
    try:
        default = neural.comet_python()
    except ConfigError as exc:
        default = exc.problem
    assert default != str(tmp_path / "python") and ".venv-comet" in default
    with use_runtime(read_environment().runtime()):  # what a command sets
        assert prompts_dir() == tmp_path and pool.worker_count(10) == 5
        assert neural.comet_python(tmp_path) == str(tmp_path)  # an explicit Python still wins
        with use_runtime(Runtime()):  # nested: the inner one, then the outer one again
            assert pool.worker_count(10) == 1
        assert pool.worker_count(10) == 5
    assert runtime() == Runtime()


def _workers_runtime(x: int) -> tuple[int | None, int]:
    return runtime().scoring_workers, x


@pytest.mark.slow  # 2.5 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_spawned_scoring_workers_get_the_runtime_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from mtboard.score.metrics import pool

    monkeypatch.setattr(pool, "start_method", lambda: "spawn")  # a fresh interpreter: only the initializer tells it
    with use_runtime(Runtime(scoring_workers=3)):
        assert pool.map_chunks(_workers_runtime, [(1,), (2,), (3,)]) == [(3, 1), (3, 2), (3, 3)]


def test_secret_segment_path_reads_the_named_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert secret_segment_path(None) is None and secret_segment_path("") is None
    monkeypatch.delenv("MY_SECRET", raising=False)
    assert secret_segment_path("MY_SECRET") is None
    monkeypatch.setenv("MY_SECRET", str(tmp_path / "s.json"))
    assert secret_segment_path("MY_SECRET") == tmp_path / "s.json"
    monkeypatch.setenv("MTBOARD_SECRET_SEGMENT", str(tmp_path / "m.json"))
    assert secret_segment_path("MTBOARD_SECRET_SEGMENT") == tmp_path / "m.json"


def test_verify_refuses_an_unset_secret_segment_variable_before_anything_runs(tmp_path: Path) -> None:
    res = cli_support.invoke(["verify", str(tmp_path / "card.json"), "--secret-segment-env", "MTB_NOT_SET_HERE"],
                             unset=("MTB_NOT_SET_HERE",))
    assert (res.returncode, res.stderr) == (1, "error: --secret-segment-env: $MTB_NOT_SET_HERE is not set (fix: export "
                                               "MTB_NOT_SET_HERE=/path/to/secret-segment.json)\n")


def test_verify_on_a_secret_segment_without_a_salt_is_refused(tmp_path: Path) -> None:
    res = cli_support.invoke(["verify", str(tmp_path / "card.json"), "--segment", "gold_standard", "--secret-corpus",
                              str(tmp_path)], unset=("MTBOARD_HYPOTHESIS_SALT",))
    assert res.returncode == 1
    assert res.stderr.startswith("error: MTBOARD_HYPOTHESIS_SALT: the hypothesis salt must be at least 32 random "
                                 "bytes as hex (fix: generate one with")


def test_a_job_that_holds_secrets_is_declared_or_seen() -> None:
    """Issue 34 item 5: ``MTBOARD_SECRETS_JOB`` (a flag) or ``MTBOARD_VERIFY_ENVIRONMENT`` declare it; the names of
    the secret variables set are kept (never their values) for ``mtboard verify``, which fails closed on them."""
    from mtboard.cli.environment import SECRET_VARIABLES, command_environment, visible_secrets
    from mtboard.core.runtime import runtime

    assert Runtime().holds_secrets is False and Runtime().comet_sandbox is True
    assert read_environment({"MTBOARD_SECRETS_JOB": "1"}).runtime().holds_secrets is True
    assert read_environment({"MTBOARD_SECRETS_JOB": "0"}).runtime().holds_secrets is False
    assert read_environment({"MTBOARD_VERIFY_ENVIRONMENT": "verification"}).runtime().holds_secrets is True
    assert read_environment({"MTBOARD_COMET_SANDBOX": " OFF "}).runtime().comet_sandbox is False
    with pytest.raises(ConfigError, match="MTBOARD_COMET_SANDBOX: 'maybe'"):
        read_environment({"MTBOARD_COMET_SANDBOX": "maybe"})
    environ = {"OPENAI_API_KEY": "sk-secret", "HF_TOKEN": "", "MTBOARD_HYPOTHESIS_SALT": "ab" * 32, "HOME": "/h"}
    assert visible_secrets(environ) == ("OPENAI_API_KEY", "MTBOARD_HYPOTHESIS_SALT")  # an empty one is unset
    assert {"OPENAI_API_KEY", "JUDGE_API_KEY", "HF_TOKEN", "MTBOARD_HYPOTHESIS_SALT"} <= set(SECRET_VARIABLES)
    with command_environment(environ):
        rt = runtime()
        assert rt.visible_secrets == ("OPENAI_API_KEY", "MTBOARD_HYPOTHESIS_SALT") and not rt.holds_secrets
        assert "sk-secret" not in repr(rt)


def test_every_secret_a_workflow_hands_a_step_is_a_secret_variable() -> None:
    """Issue 34 item 5 (the kind, not one name): every ``NAME: ${{ secrets.X }}`` of a step's or job's environment in
    .github/workflows/ is in SECRET_VARIABLES, and so are the tokens GitHub itself hands a step (the OIDC request
    token of ``id-token: write``, the runtime token, GITHUB_TOKEN/GH_TOKEN), so ``mtboard verify`` with any one of
    them set counts the job as one that holds secrets."""
    import re

    from mtboard.cli.environment import SECRET_VARIABLES, visible_secrets

    handed = set()
    for wf in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        handed |= set(re.findall(r"^\s+([A-Z][A-Z0-9_]*):\s*\$\{\{\s*secrets\.", wf.read_text(encoding="utf-8"), re.M))
    assert {"OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGE_BASE_URL", "HF_TOKEN", "MTBOARD_HYPOTHESIS_SALT"} <= handed
    assert handed <= set(SECRET_VARIABLES), sorted(handed - set(SECRET_VARIABLES))
    for name in ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
                 "MTBOARD_SECRET_CORPORA_DEPLOY_KEY"):
        assert visible_secrets({name: "x", "HOME": "/h"}) == (name,)
