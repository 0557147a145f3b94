"""The run-time configuration: the settings from the user's environment that code deep in many call paths needs
(issue 30 item 3; every variable in docs/environment.md).

Only the command line reads ``MTBOARD_*`` variables (:func:`mtboard.cli.environment.read_environment`, once per
command). Most of them it hands down as explicit parameters (run settings, function arguments, the validator's
``Context``). The ones here are needed far below any function a command calls: the prompt folder (prompt templates,
judge prompts and the price table, read by the runner, the validator, the judges, the price resolution and the sweep
estimate), the scoring worker count (every ``score_run``), the semantic embedding cache (every scoring), the COMET
environment (every neural scoring, also inside ``mtboard verify``), whether the job holds secrets and the COMET worker's
sandbox, and what a verification record says about who verified and where. Passing each one as a parameter would add it
to dozens of signatures that only hand it on, so they travel together in one frozen :class:`Runtime` held by a
:class:`contextvars.ContextVar`:

* the CLI edge sets it for the duration of a command with :func:`use_runtime` (``mtboard.cli.app.guarded``);
* library code reads it with :func:`runtime`;
* outside a command (library use, tests) it is ``Runtime()``, whose defaults are mtboard's behaviour with no
  variable set.

Why a context variable and not a module global: :func:`use_runtime` restores the previous value on exit (commands
run one after another in one process, as the in-process CLI tests do, never see each other's values); asyncio tasks
and ``asyncio.to_thread`` copy it, so the runner's tasks and worker threads see the command's value. A thread
started with :class:`threading.Thread` or a ``ThreadPoolExecutor`` starts from an empty context and sees the
defaults: none of those threads reads this (the progress timer, the FST lookup, the gguf gates). The scoring process
pool hands the value to its workers itself (:func:`mtboard.score.metrics.pool.map_chunks`, :func:`install`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Runtime:
    """Settings the library reads through :func:`runtime` (module docstring). Each default is the behaviour when the
    variable is unset; the variables' meanings, units and ranges are in docs/environment.md."""

    prompts_dir: Path | None = None
    """Folder replacing the shipped prompt folder as a whole (``MTBOARD_PROMPTS_DIR``); None: the package data
    (:func:`mtboard.inputs.prompts.prompts_dir`)."""
    scoring_workers: int | None = None
    """Scoring processes, ≥ 1 (``MTBOARD_SCORING_WORKERS``); None: chosen from the segment count and the CPUs
    (:func:`mtboard.score.metrics.pool.worker_count`)."""
    semantic_cache: Path | Literal["off"] | None = None
    """On-disk embedding cache file (``MTBOARD_SEMANTIC_CACHE``); ``"off"``: none; None: the default file under
    ``$XDG_CACHE_HOME`` (:func:`mtboard.score.metrics.semantic.cache_path`)."""
    comet_python: Path | None = None
    """Python of the COMET environment (``MTBOARD_COMET_PYTHON``); None: ``.venv-comet/bin/python``
    (:func:`mtboard.score.metrics.neural.comet_python`)."""
    neural_device: Literal["cpu", "cuda"] = "cpu"
    """Device ``mtboard verify`` re-scores a card's neural metrics on (``MTBOARD_NEURAL_DEVICE``)."""
    verified_by: str | None = None
    """Who verified, for a verification record's ``verified_by`` (``MTBOARD_VERIFIED_BY``); None: ``$GITHUB_ACTOR``,
    else the login name (:mod:`mtboard.verify.rerun`)."""
    verify_environment: str | None = None
    """The verify workflow's protected environment, for a record's ``environment`` (``MTBOARD_VERIFY_ENVIRONMENT``)."""
    verify_container: str | None = None
    """The container image the verify workflow ran in, for a record's ``environment``
    (``MTBOARD_VERIFY_CONTAINER``)."""
    secrets_job: bool = False
    """The job declares that it holds secrets (``MTBOARD_SECRETS_JOB``); see :attr:`holds_secrets`."""
    visible_secrets: tuple[str, ...] = ()
    """The names (never the values) of the secret variables set in the command's environment (``OPENAI_API_KEY``,
    ``HF_TOKEN``, the hypothesis salt …; :data:`mtboard.cli.environment.SECRET_VARIABLES`): ``mtboard verify``
    counts a job where any is set as one that holds secrets (:func:`mtboard.verify.rerun.secrets_held`)."""
    comet_sandbox: bool = True
    """The COMET worker runs inside the sandbox (default); False: ``MTBOARD_COMET_SANDBOX=off``, development only
    (:func:`mtboard.score.metrics.neural.run_worker`)."""

    @property
    def holds_secrets(self) -> bool:
        """The command runs in a job declared to hold secrets: ``MTBOARD_SECRETS_JOB``, or a protected verify
        environment (``MTBOARD_VERIFY_ENVIRONMENT``). There neural metrics load only allow-listed revisions
        (:func:`mtboard.score.metrics.neural.check_allowed`) and the COMET worker only inside the sandbox (issue 34
        item 5)."""
        return self.secrets_job or bool(self.verify_environment)


_CURRENT: ContextVar[Runtime] = ContextVar("mtboard_runtime", default=Runtime())


def runtime() -> Runtime:
    """The run-time configuration in force: the running command's, else ``Runtime()`` (every default)."""
    return _CURRENT.get()


@contextlib.contextmanager
def use_runtime(value: Runtime) -> Iterator[Runtime]:
    """Make ``value`` the run-time configuration inside the ``with`` block (this context and the asyncio tasks and
    ``asyncio.to_thread`` calls started in it); the previous one is back on exit, also on an exception."""
    token = _CURRENT.set(value)
    try:
        yield value
    finally:
        _CURRENT.reset(token)


def install(value: Runtime) -> None:
    """Make ``value`` the run-time configuration of this context for good: the initializer of a worker process
    (spawned workers start from the defaults), never for a command (use :func:`use_runtime`)."""
    _CURRENT.set(value)


__all__ = ["Runtime", "install", "runtime", "use_runtime"]
