"""The user's environment, read in one place (issue 30 item 3): every ``MTBOARD_*`` variable mtboard reads is a field
of :class:`Environment`, and :func:`read_environment` is the only code in ``mtboard/`` that reads them.

When it is read: once per command invocation, by :func:`mtboard.cli.app.guarded` (every command is guarded), never
at import, so in-process tests that give typer's ``CliRunner`` an ``env=`` see their values. ``guarded`` enters
:func:`command_environment`, which reads the variables, sets the library's run-time configuration
(:mod:`mtboard.core.runtime`: the values needed deep in many call paths) for the command's duration and keeps the
:class:`Environment` for the command to ask with :func:`environment`; the commands hand the other values to the
library as parameters (``RunSettings.stream``, ``build_site(site_url=…)``, the validator's ``Context``, the
hypothesis salt, the attestation repository). A malformed value is one line naming the variable and the fix
(:class:`mtboard.core.errors.ConfigError`), never a traceback; an empty value counts as unset.

Variables that are not mtboard's own (``OPENAI_*``, ``JUDGE_*``, ``APERTIUM_APY_URL``, ``HF_*``, proxies,
``XDG_CACHE_HOME``, ``SOURCE_DATE_EPOCH``, GitHub Actions' ``GITHUB_*``/``RUNNER_*``) are read where they are used.

docs/environment.md is generated from this module (:func:`environment_page`); regenerate it with
``python -m mtboard.cli.environment`` (``--check`` exits 1 when the committed page differs;
tests/test_environment.py checks it).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from mtboard.core.errors import ConfigError
from mtboard.core.runtime import Runtime, use_runtime

PREFIX = "MTBOARD_"
"""Every variable of :class:`Environment` is ``PREFIX`` + its field name in capitals."""
PAGE = Path("docs") / "environment.md"
"""The generated table, relative to the repository root."""

SCORING = ("run", "rescore", "validate", "submit", "verify", "sweep run", "sweep collect", "build", "ledger", "demo")
"""The commands that score translations (``score_run``), in validation or in a run."""


def _variable(default: Any, meaning: str, *, kind: str, default_text: str, commands: tuple[str, ...], fix: str,
              **constraints: Any) -> Any:
    """A field of :class:`Environment`: its default, its meaning (the description) and what the docs table shows
    (``kind``: type, unit and range; ``default_text``: the behaviour when unset; ``commands``: who reads it) and the
    fix a malformed value's error gives."""
    return Field(default, description=meaning, json_schema_extra={
        "kind": kind, "default_text": default_text, "commands": list(commands), "fix": fix}, **constraints)


def _flag(value: Any) -> Any:
    """``""`` and ``"0"`` are off, anything else on."""
    return value not in ("", "0") if isinstance(value, str) else value


class Environment(BaseModel):
    """Every ``MTBOARD_*`` variable mtboard reads (module docstring), one field each: ``MTBOARD_`` + the field name in
    capitals. Build it with :func:`read_environment`; the defaults are the behaviour when a variable is unset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompts_dir: Path | None = _variable(
        None, "Replaces the shipped prompt folder as a whole: a folder with the same layout (`*.j2`, `judges/*.j2`, "
        "`prices.yaml`). `mtboard verify` still refuses a template whose SHA-256 differs from the card's "
        "(docs/maintainers.md §4).",
        kind="folder", default_text="the prompts shipped with mtboard (package data `mtboard._prompts`)",
        commands=("run", "judge", "anchor", "rescore", "validate", "submit", "verify", "sweep", "build", "demo"),
        fix="point it at a folder laid out like prompts/, or unset it")
    stream: bool = _variable(
        False, "Stream responses from OpenAI-compatible servers (server-sent events; streams to llama-cpp-python go "
        "one at a time; docs/providers.md). Recorded in the card as `method.streaming`.",
        kind="flag: empty or `0` is off, anything else on", default_text="off", commands=("run",),
        fix="set it to 1, or unset it")
    progress: bool = _variable(
        False, "Draw the progress bar on stderr even when it is not a terminal.",
        kind="flag: empty or `0` is off, anything else on",
        default_text="the bar on a terminal, else progress lines", commands=("run", "verify", "demo"),
        fix="set it to 1, or unset it")
    progress_interval: float = _variable(
        30.0, "Seconds between two progress lines when stderr is not a terminal (nohup, CI logs).",
        kind="seconds, a number above 0", default_text="30", commands=("run", "verify", "sweep run"),
        fix="set it to a number of seconds above 0, e.g. 30, or unset it", gt=0)
    scoring_workers: int | None = _variable(
        None, "Processes one scoring job uses (docs/SCORING_SPEC.md §7); the scores do not depend on it.",
        kind="integer; below 1 counts as 1",
        default_text="1 below 2,000 segments (4,000 when the pool must spawn), else the usable CPUs, at most 8",
        commands=SCORING, fix="set it to a worker count such as 2, or unset it", ge=1)
    semantic_cache: Path | Literal["off"] | None = _variable(
        None, "The on-disk cache (SQLite) of sentence embeddings for the semantic score (docs/SCORING_SPEC.md "
        "§2.3); `off` in any case switches it off. A cache that cannot be opened or written is skipped, never an "
        "error: it only saves time.",
        kind="file path, or `off`",
        default_text="`$XDG_CACHE_HOME/mtboard/semantic-embeddings.sqlite3` (`~/.cache/…` without XDG_CACHE_HOME)",
        commands=SCORING, fix="set it to a file path or off, or unset it")
    comet_python: Path | None = _variable(
        None, "The Python of the separate COMET environment neural metrics run in (docs/neural_metrics.md); "
        "`mtboard neural --comet-python` overrides it.",
        kind="path of a Python executable",
        default_text="`.venv-comet/bin/python` under the current folder, else under the checkout mtboard is "
                     "installed from (`scripts/setup.sh --comet`)",
        commands=("run --neural-metric", "neural", "verify", "doctor"),
        fix="point it at the Python of an environment with unbabel-comet, or unset it")
    neural_device: Literal["cpu", "cuda"] = _variable(
        "cpu", "The device `mtboard verify` re-scores a card's neural metrics on (xCOMET is slow on a CPU: "
        "docs/maintainers.md §1.2).",
        kind="`cpu` or `cuda`", default_text="`cpu`", commands=("verify",), fix="set it to cpu or cuda, or unset it")
    secret_segment: Path | None = _variable(
        None, "A secret-segment corpus file: no source, reference or variant text of it may appear in a card "
        "(the `sovereignty` check, spec §8). `--secret-segment-env NAME` of `mtboard validate` and `mtboard verify` "
        "reads another variable; `mtboard verify` re-runs the card on the file its variable names.",
        kind="path of a corpus JSON file", default_text="no secret-text scan",
        commands=("validate", "submit", "verify --secret-segment-env MTBOARD_SECRET_SEGMENT", "sweep run --submit",
                  "sweep collect", "build", "ledger", "demo"),
        fix="point it at a corpus JSON file, or unset it")
    hypothesis_salt: SecretStr | None = _variable(
        None, "Keys the HMAC of every output on a scores-only card (spec §6.4); held by the verification environment "
        "only (docs/maintainers.md §3.5).",
        kind="hex text of at least 32 random bytes; a secret",
        default_text="none: a secret-segment verification is refused",
        commands=("verify --segment gold_standard/held_out",),
        fix="generate one with `python3 -c 'import secrets; print(secrets.token_hex(32))'`")
    attestation_repository: str | None = _variable(
        None, "The repository (owner/name) whose verify workflow must have attested verification records and "
        "scores-only cards (\"GDS verified\"; docs/maintainers.md §3.4); `--repository` and "
        "`--attestation-repository` override it.",
        kind="owner/name", default_text="`$GITHUB_REPOSITORY` (set by GitHub Actions), else none: nothing is attested",
        commands=("build", "ledger", "verify-record"), fix="set it to owner/name, or unset it")
    site_url: str | None = _variable(
        None, "The address the site is published at (GitHub Pages: `https://OWNER.github.io/REPO/`): 404.html's "
        "links resolve from it at any depth; `--site-url` overrides it. The site workflow sets it.",
        kind="URL", default_text="none (with `--serve`: the local address)", commands=("build",),
        fix="set it to the site's address, or unset it")
    cache: Path | None = _variable(
        None, "The build cache folder of `mtboard build` and `mtboard ledger`: validation verdicts by content (the "
        "card's bytes, the validator's code, the corpora …), so a card that did not change is not validated again, "
        "and resampled scores, sentinel lines, flip distances and each board's run pages likewise; `off` keeps none. "
        "The site workflow keeps "
        "it between runs (actions/cache). `--cache` overrides it.",
        kind="folder path, or `off`", default_text="`.mtboard-cache/` in the project root (git-ignored)",
        commands=("build", "ledger"), fix="set it to a folder or off, or unset it")
    verified_by: str | None = _variable(
        None, "Who verified: a verification record's `verified_by` (its first 200 characters). The verify workflow "
        "sets it to the actor.",
        kind="text", default_text="`$GITHUB_ACTOR`, else the login name", commands=("verify",),
        fix="set it to a name, or unset it")
    verify_environment: str | None = _variable(
        None, "Inside GitHub Actions (`$GITHUB_RUN_ID` set): the protected environment the verify job runs in, "
        "written into a verification record's `environment`. The verify workflow sets it.",
        kind="text", default_text="`(none)`", commands=("verify",), fix="set it to a name, or unset it")
    verify_container: str | None = _variable(
        None, "Inside GitHub Actions: the container image the verify job runs in, added to a verification record's "
        "`environment`. The verify workflow sets it.",
        kind="text", default_text="not named", commands=("verify",), fix="set it to an image name, or unset it")

    secrets_job: bool = _variable(
        False, "Declares that the job holds secrets (API keys, the hypothesis salt, `HF_TOKEN`, a secret segment): "
        "neural metrics then load only the model revisions of the project's allow-list "
        "(`mtboard.score.metrics.neural.ALLOWED_REVISIONS`; any other is refused before anything is downloaded) and "
        "the COMET worker never runs outside the sandbox. `MTBOARD_VERIFY_ENVIRONMENT` declares it too, and "
        "`mtboard verify` also counts a job where any secret variable is set (docs/SECURITY.md). The verify "
        "workflow's protected job and the sweep workflow's cell job set it.",
        kind="flag: empty or `0` is off, anything else on",
        default_text="off, unless `MTBOARD_VERIFY_ENVIRONMENT` is set (for `mtboard verify`: or a secret variable)",
        commands=("verify", "run --neural-metric", "neural", "sweep run"), fix="set it to 1, or unset it")
    comet_sandbox: Literal["on", "off"] = _variable(
        "on", "`off` runs the COMET worker outside the bubblewrap sandbox (development only, e.g. where bwrap is "
        "missing; still with an empty environment). Refused in a job that holds secrets.",
        kind="`on` or `off`", default_text="`on`: the worker runs in the sandbox",
        commands=("run --neural-metric", "neural", "verify"), fix="set it to on or off, or unset it")

    @field_validator("prompts_dir")
    @classmethod
    def _prompt_folder(cls, value: Path | None) -> Path | None:
        """A prompt folder that is not one would show later as "unknown prompt" or as a card's missing template."""
        if value is not None and not value.is_dir():
            raise ValueError("is not a folder")
        if value is not None and not any(value.glob("*.j2")):
            raise ValueError("holds no prompt template (*.j2)")
        return value

    @field_validator("stream", "progress", "secrets_job", mode="before")
    @classmethod
    def _flags(cls, value: Any) -> Any:
        return _flag(value)

    @field_validator("progress_interval", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ValueError("is not a number of seconds") from None
            if not value > 0:
                raise ValueError("is not above 0 seconds")
        return value

    @field_validator("scoring_workers", mode="before")
    @classmethod
    def _workers(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return max(1, int(value))
            except ValueError:
                raise ValueError("is not an integer") from None
        return value

    @field_validator("semantic_cache", mode="before")
    @classmethod
    def _cache(cls, value: Any) -> Any:
        return "off" if isinstance(value, str) and value.lower() == "off" else value

    @field_validator("comet_sandbox", mode="before")
    @classmethod
    def _on_off(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("neural_device", mode="before")
    @classmethod
    def _device(cls, value: Any) -> Any:
        from mtboard.score.metrics.neural import DEVICES  # the one list of devices (--neural-device checks it too)

        if isinstance(value, str) and value not in DEVICES:
            raise ValueError(f"is not {' or '.join(DEVICES)}")
        return value

    def runtime(self, visible_secrets: tuple[str, ...] = ()) -> Runtime:
        """The part the library reads through :func:`mtboard.core.runtime.runtime`; ``visible_secrets``: the names
        :func:`visible_secrets` found in the command's environment."""
        return Runtime(prompts_dir=self.prompts_dir, scoring_workers=self.scoring_workers,
                       semantic_cache=self.semantic_cache, comet_python=self.comet_python,
                       neural_device=self.neural_device, verified_by=self.verified_by,
                       verify_environment=self.verify_environment, verify_container=self.verify_container,
                       secrets_job=self.secrets_job,
                       visible_secrets=tuple(visible_secrets), comet_sandbox=self.comet_sandbox == "on")

    def salt_text(self) -> str:
        """The hypothesis salt's text ('' when unset), for :func:`mtboard.score.scores_card.parse_salt`."""
        return self.hypothesis_salt.get_secret_value() if self.hypothesis_salt is not None else ""


def variable(field: str) -> str:
    """The environment variable of an :class:`Environment` field: ``MTBOARD_`` + its name in capitals."""
    return PREFIX + field.upper()


SECRET_SEGMENT = variable("secret_segment")
"""``MTBOARD_SECRET_SEGMENT``: the default of ``--secret-segment-env``."""

SECRET_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGE_API_KEY", "JUDGE_BASE_URL", "HF_TOKEN",
                    "HUGGING_FACE_HUB_TOKEN", "MTBOARD_HYPOTHESIS_SALT", "MTBOARD_SECRET_SEGMENT",
                    "MTBOARD_SECRET_SEGMENT_B64", "MTBOARD_SECRET_CORPORA_DEPLOY_KEY", "GITHUB_TOKEN", "GH_TOKEN",
                    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN")
"""The secrets the workflows hand to a job (verify.yml's protected job, sweep.yml's cell job) or a maintainer's shell
holds: API keys, the endpoints the workflows keep as secrets (``OPENAI_BASE_URL``, ``JUDGE_BASE_URL``: a URL can
carry a key), the Hugging Face token, the hypothesis salt, a secret segment, the secret corpora's deploy key, and the
tokens GitHub hands a step (``GITHUB_TOKEN``/``GH_TOKEN`` when a workflow passes it, the OIDC request token of a job
with ``id-token: write``, the Actions runtime token). Every ``${{ secrets.X }}`` a workflow puts in a step's
environment is one of them (tests/test_environment.py reads the workflows).
Their presence makes ``mtboard verify`` treat the job as one that holds secrets (issue 34 item 5); the COMET
worker and model servers never see any of them (an empty environment in the sandbox)."""


def visible_secrets(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The names of :data:`SECRET_VARIABLES` set (non-empty) in ``environ``, in that order; never their values."""
    return tuple(name for name in SECRET_VARIABLES if environ.get(name))


NOT_READ: dict[str, str] = {
    "MTBOARD_SECRET_SEGMENT_B64": "verify.yml: a secret of the `verification` environment holding a secret-segment "
    "corpus as base64; the workflow decodes it to a file, points `MTBOARD_SECRET_SEGMENT` at it and unsets it "
    "(docs/maintainers.md §3.5)",
    "MTBOARD_SECRET_CORPORA_REPOSITORY": "verify.yml: a variable of the `verification` environment "
    "(`vars.…`): the private repository of secret corpora the workflow checks out",
    "MTBOARD_SECRET_CORPORA_DEPLOY_KEY": "verify.yml: a secret of the `verification` environment: the read-only "
    "deploy key of that repository",
    "MTBOARD_SCREENSHOTS": "tests: the folder the browser tests write their screenshots to (default: the test's "
    "temporary folder)",
    "MTBOARD_WMT_MQM_DIR": "tests/test_judges_reliability.py: the folder of the real WMT MQM annotations",
    "MTBOARD_VERIFY_GEMMA_CARD": "tests/test_sandbox.py: `1` runs the slow re-run of the committed Gemma card",
    "MTBOARD_TEST_CANARY": "tests/test_sandbox.py: a canary variable that must not reach a sandboxed model server",
    "MTBOARD_TEST_TIMES": "tests/conftest.py: a file each test appends one JSON line of timings to (worker, wall, CPU, "
    "waits; docs/TESTING.md)",
    "MTBOARD_APT_LOCK_WAIT": "scripts/apt-get-wait.sh (run by scripts/setup.sh and so by scripts/demo.sh): seconds to "
    "wait while another process holds the apt/dpkg lock (default 600)",
}
"""``MTBOARD_*`` names used in the repository that mtboard itself never reads: GitHub environment secrets and
variables of the workflows, switches of the test suite and of the setup scripts. Listed so that every ``MTBOARD_``
name in the repository is either a field of :class:`Environment` or one of these (tests/test_environment.py), and a
typo is neither."""


def _invalid(exc: ValidationError, raw: Mapping[str, str]) -> ConfigError:
    """The first problem of a failed :class:`Environment` validation as one line: the variable, its value (never
    the salt's; at most 60 characters), why, and the field's fix."""
    err = exc.errors()[0]
    name = str(err["loc"][0]) if err["loc"] else ""
    why = str(err["ctx"]["error"]) if err["type"] == "value_error" else err["msg"]
    field = Environment.model_fields.get(name)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    value = raw.get(name, "")
    shown = "the value" if name == "hypothesis_salt" else repr(value if len(value) <= 60 else value[:57] + "...")
    return ConfigError(f"{shown} {why}", field=variable(name) if name else None, fix=str(extra.get("fix") or ""))


def read_environment(environ: Mapping[str, str] = os.environ) -> Environment:
    """Every ``MTBOARD_*`` variable of ``environ`` that :class:`Environment` has a field for (an empty value counts
    as unset; other names are ignored). The only code in mtboard that reads them.

    Raises: ConfigError naming the variable and the fix when a value is malformed (``MTBOARD_SCORING_WORKERS=abc``,
    ``MTBOARD_PROGRESS_INTERVAL=-1``, ``MTBOARD_NEURAL_DEVICE=tpu``, ``MTBOARD_PROMPTS_DIR`` not a folder of
    templates)."""
    raw = {name: environ[variable(name)] for name in Environment.model_fields if environ.get(variable(name))}
    try:
        return Environment(**raw)
    except ValidationError as exc:
        raise _invalid(exc, raw) from None


_COMMAND: ContextVar[Environment | None] = ContextVar("mtboard_environment", default=None)


@contextlib.contextmanager
def command_environment(environ: Mapping[str, str] = os.environ) -> Iterator[Environment]:
    """One command's environment: read it (:func:`read_environment`), make it what :func:`environment` answers and
    its run-time part the library's (:func:`mtboard.core.runtime.use_runtime`) inside the ``with`` block; both are
    restored on exit. Raises what :func:`read_environment` raises."""
    env = read_environment(environ)
    token = _COMMAND.set(env)
    try:
        with use_runtime(env.runtime(visible_secrets(environ))):
            yield env
    finally:
        _COMMAND.reset(token)


def environment() -> Environment:
    """The running command's :class:`Environment` (read once by :func:`mtboard.cli.app.guarded`); outside a command
    (a helper called directly), read now."""
    env = _COMMAND.get()
    return env if env is not None else read_environment()


def secret_segment_path(name: str | None, environ: Mapping[str, str] = os.environ) -> Path | None:
    """The secret-segment corpus file the variable ``name`` names (``--secret-segment-env NAME``), None when ``name``
    is None or empty or the variable is unset or empty. :data:`SECRET_SEGMENT` comes from :func:`environment`."""
    if not name:
        return None
    if name == SECRET_SEGMENT:
        return environment().secret_segment
    value = environ.get(name, "")
    return Path(value) if value else None


# ---------------------------------------------------------------------------------------------------------------------
# docs/environment.md


def _cell(text: str) -> str:
    from mtboard.core.fmt import md_cell

    return md_cell(text)


def environment_page() -> str:
    """The text of docs/environment.md: every field of :class:`Environment` (variable, type, default, meaning, the
    commands that read it), then :data:`NOT_READ`."""
    lines = [
        "# Environment variables",
        "",
        "<!-- Generated by `python -m mtboard.cli.environment` from mtboard/cli/environment.py; edit that module, "
        "not this page (tests/test_environment.py checks they agree). -->",
        "",
        "Every `MTBOARD_*` variable mtboard reads. Each command reads them once when it starts "
        "(`mtboard.cli.environment.read_environment`, the only code that reads them); an empty value counts as unset, "
        "and a malformed one stops the command with one line naming the variable and the fix. Command-line options "
        "win over variables where both exist.",
        "",
        "| variable | type | when unset | what it does | read by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, field in Environment.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        commands = ", ".join(f"`mtboard {c}`" for c in extra.get("commands", []))  # type: ignore[union-attr]
        lines.append(f"| `{variable(name)}` | {_cell(str(extra.get('kind')))} | "
                     f"{_cell(str(extra.get('default_text')))} | {_cell(field.description or '')} | {commands} |")
    lines += [
        "",
        "## Names mtboard does not read",
        "",
        "`MTBOARD_*` names used in the repository's workflows and tests; mtboard itself never reads them.",
        "",
        "| name | what it is |",
        "| --- | --- |",
    ]
    lines += [f"| `{name}` | {_cell(text)} |" for name, text in NOT_READ.items()]
    lines += [
        "",
        "## Other variables",
        "",
        "Not mtboard's own, read where they are used: `OPENAI_BASE_URL` / `OPENAI_API_KEY` and `JUDGE_BASE_URL` / "
        "`JUDGE_API_KEY` (endpoints and keys; the keys only from the environment), `APERTIUM_APY_URL` (an Apertium "
        "APY service), the proxy variables and `SSL_CERT_FILE` (docs/providers.md), `HF_HUB_CACHE`, `HF_HUB_OFFLINE` "
        "and `HF_TOKEN` (huggingface_hub), `XDG_CACHE_HOME`, `SOURCE_DATE_EPOCH` (the site's build time), `COLUMNS`, "
        "and GitHub Actions' `GITHUB_*` / `RUNNER_*` (verification records).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m mtboard.cli.environment [--check] [PATH]``: write :func:`environment_page` to PATH (default
    :data:`PAGE` under the current folder); with ``--check``, write nothing and exit 1 when PATH differs."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    path = Path(rest[0]) if rest else PAGE
    text = environment_page()
    if check:
        same = path.is_file() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'up to date' if same else 'differs; run python -m mtboard.cli.environment'}")
        return 0 if same else 1
    from mtboard.core.documents import atomic_write

    atomic_write(path, text.encode("utf-8"))
    print(f"wrote {path}")
    return 0


__all__ = ["NOT_READ", "PAGE", "PREFIX", "SECRET_SEGMENT", "SECRET_VARIABLES", "Environment", "command_environment",
           "environment", "environment_page", "read_environment", "secret_segment_path", "variable", "visible_secrets"]

if __name__ == "__main__":  # pragma: no cover - python -m mtboard.cli.environment
    raise SystemExit(main())
