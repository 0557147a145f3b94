"""A sweep's cells (spec §6.1–6.2: "a benchmark is a matrix of run cards, one per combination of parameter values";
runs = |models| × |temperatures| × |prompts| × |coaching| × |tools|): :class:`Cell` and the expansion of a sweep file
into cells (:func:`expand`). The sweep file itself and the loaded :class:`~mtboard.sweeps.spec.Sweep` are in
:mod:`mtboard.sweeps.spec`.

Expansion (:func:`expand`) is deterministic: datasets × methods × prompts × conditions × temperatures in file order;
engines that take the raw source (Apertium, baselines) get one cell per dataset (no prompt, no temperature).
Each cell's id is the first 12 hex digits of the SHA-256 of its planned fingerprint components (:func:`planned_
components`: the fingerprint v3 components known before anything runs — :func:`mtboard.inputs.runspec.
fingerprint_components` — plus the method as typed, the backend options, the replicates and the segment), so the
same cell keeps its id (and its work directory ``runs/sweeps/NAME/ID``) across plans, and any change that makes a
different run makes a different id.

Bounded before it expands (issue 34 item 3): :func:`count_cells` counts the cells from the factor sizes alone (no
corpus, prompt or backend is loaded), and :func:`expand` refuses a sweep over :data:`MAX_CELLS` at once, naming the
count, the limit and the factors.

Raises: ConfigError for a cell that cannot run (unknown backend, prompt, option, a prompt without examples for the
target language) or a sweep over :data:`MAX_CELLS`; InputError for a dataset that does not load, or whose path
leaves the repository root or passes a symbolic link (:mod:`mtboard.core.paths`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mtboard import HARNESS_VERSION
from mtboard.core import canonical
from mtboard.backends import Backend, get_backend, parse_method
from mtboard.core import paths
from mtboard.core.documents import MAX_CORPUS_BYTES, loads_corpus
from mtboard.core.errors import ConfigError, InputError, MtboardError
from mtboard.inputs.corpora.arms import arm_view, history_not_applicable
from mtboard.run.fst_gate import check_pipeline
from mtboard.inputs.tools import parse_tools
from mtboard.inputs.prompts import Prompt, load_prompt
from mtboard.inputs.runspec import MethodSpec, split_method
from mtboard.core.schema import Corpus, DatasetInfo, Entry, MethodClass, Segment
from mtboard.core.schema import CellMatch, Scalar, SweepCondition, SweepFile, SweepMethod
from mtboard.core.schema import SWEEP_MAX_CELLS as MAX_CELLS


@dataclass(frozen=True)
class Cell:
    """One run of the sweep (one card). ``method`` is the spec as written in the sweep file; ``components`` the
    planned fingerprint components the id hashes."""

    id: str
    index: int
    dataset_path: str
    dataset_id: str
    language_pair: str
    method: str
    label: str
    backend: str
    prompt: str | None
    condition: str
    temperature: float | None
    runs: int
    limit: int | None
    max_tokens: int | None
    segment: str
    backend_options: tuple[tuple[str, Scalar], ...]
    judges: tuple[str, ...]
    lane: Literal["local", "api"]
    """``local``: a local model server (one at a time); ``api``: endpoints and engines (concurrent)."""
    gguf_package: str | None = None
    price_in: float | None = None
    price_out: float | None = None
    provider: str | None = None
    entries: int = 0
    """Entries the cell covers (segment, after --limit)."""
    segment_entries: int = 0
    """Entries of the dataset's segment (``entries`` of them are covered; fewer under ``limit``)."""
    method_index: int = 0
    """Index of the cell's method in the sweep file's ``methods`` (error messages name ``methods.N``)."""
    components: dict[str, Any] = field(default_factory=dict, compare=False)
    tools: tuple[str, ...] = ()
    """``--tools`` of the cell's condition (spec §6.2 tool_config; empty: none)."""
    fst_retries: int | None = None
    """``--fst-retries`` (the FST gate's retry limit) when the cell runs with ``fst-gate``."""
    experiment: str | None = None
    """``history`` (a cell of the sweep's ``histories``), ``arms`` (of its ``arms``) or None (neither: the corpus as
    stored); issue 40."""
    arm: str | None = None
    """``--arm`` (:mod:`mtboard.inputs.corpora.arms`); None: the corpus as stored."""
    history: int | None = None
    """``--history N``; None: the view's history as it is."""

    def factors(self) -> dict[str, Any]:
        """The cell's values on the sweep axes (spec §6.2): dataset, method, prompt, condition, temperature, and
        the corpus view (arm, history; issue 40)."""
        return {"dataset": self.dataset_id, "method": self.label, "prompt": self.prompt,
                "condition": self.condition, "temperature": self.temperature, "arm": self.arm,
                "history": self.history}

    def run_args(self) -> list[str]:
        """The ``mtboard run`` arguments of this cell (after ``mtboard run``); a gguf_package method keeps its file
        name (the runner substitutes the assembled path)."""
        args = [self.dataset_path, "--method", self.method, "--segment", self.segment]
        if self.prompt:
            args += ["--prompt", self.prompt]
        args += ["--condition", self.condition]
        if self.temperature is not None:
            args += ["--temperature", repr(self.temperature)]
        if self.max_tokens is not None:
            args += ["--max-tokens", str(self.max_tokens)]
        if self.runs != 1:
            args += ["--runs", str(self.runs)]
        if self.limit is not None:
            args += ["--limit", str(self.limit)]
        for k, v in self.backend_options:
            args += ["--backend-opt", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
        for j in self.judges:
            args += ["--judge", j]
        for t in self.tools:
            args += ["--tools", t]
        if self.fst_retries is not None:
            args += ["--fst-retries", str(self.fst_retries)]
        if self.arm is not None:
            args += ["--arm", self.arm]
        if self.history is not None:
            args += ["--history", str(self.history)]
        return args


@dataclass(frozen=True)
class NotApplicable:
    """A cell of the history or arms experiment that is not run because history cannot reach the method (issue 40):
    Apertium and the baselines translate the raw source; a prompt without ``history`` shows none. The sweep page
    lists it with ``reason`` (:func:`mtboard.inputs.corpora.arms.history_not_applicable`)."""

    dataset_id: str
    language_pair: str
    method: str
    label: str
    prompt: str | None
    experiment: str
    arm: str
    history: int | None
    reason: str


def planned_components(*, dataset_sha256: str, public_method: str, condition: str, system_prompt_sha256: str,
                       temperature: float | None, batch_size: int, max_tokens: int | None,
                       prompt_template_sha256: str | None, entry_ids: list[int], judges: tuple[str, ...],
                       backend_options: dict[str, Any], runs: int, segment: str, tools: tuple[str, ...] = (),
                       fst_retries: int | None = None, arm: str | None = None,
                       history: int | None = None) -> dict[str, Any]:
    """The fingerprint v3 components a cell's card will have that are known before it runs (spec §3.8 extended;
    :func:`mtboard.inputs.runspec.fingerprint_components` — the backend's facts, e.g. the weights hash and the engine
    build, are learnt while running and are not here), plus the method as published, its backend options, the
    replicates and the segment. A cell id is the first 12 hex digits of their canonical SHA-256. ``fst_retries``
    appears only for a cell with the FST gate (as in the card's fingerprint), so cells without tools keep their
    ids; ``arm`` and ``history`` likewise only when set (issue 40)."""
    optional: dict[str, Any] = {"fst_retries": fst_retries} if fst_retries is not None else {}
    if arm is not None:
        optional["arm"] = arm
    if history is not None:
        optional["history"] = history
    return optional | {
        "dataset_sha256": dataset_sha256, "method": public_method, "condition": condition,
        "system_prompt_sha256": system_prompt_sha256, "temperature": temperature,
        "harness_version": HARNESS_VERSION, "batch_size": batch_size, "tools_enabled": sorted(tools),
        "max_tokens": max_tokens, "prompt_template_sha256": prompt_template_sha256,
        "entry_ids_sha256": canonical.entry_ids_sha256(entry_ids), "judge_model": ",".join(judges) or None,
        "backend_options": dict(sorted(backend_options.items())), "runs": runs, "segment": segment,
    }


def _matches(m: CellMatch, *, dataset_id: str, dataset_path: str, method: str, prompt: str | None, condition: str,
             temperature: float | None, view: tuple[str | None, str | None, int | None] = (None, None, None)) -> bool:
    experiment, arm, history = view
    return ((m.dataset is None or m.dataset in (dataset_id, dataset_path))
            and (m.experiment is None or m.experiment == experiment)
            and (m.arm is None or m.arm == arm)
            and (m.history is None or m.history == history)
            and (m.method is None or m.method == method)
            and (m.prompt is None or m.prompt == prompt)
            and (m.condition is None or m.condition == condition)
            and (m.temperature is None or m.temperature == temperature))


@contextmanager
def _named(where: str, field: str) -> Iterator[None]:
    """Re-raise a ConfigError/InputError from a backend or the method parser (which name ``--method`` or
    ``--backend-opt``, the ``mtboard run`` options) with the sweep file as ``where`` and its ``field``; the problem
    and the fix stay."""
    try:
        yield
    except (ConfigError, InputError) as exc:
        raise type(exc)(exc.problem, where=where, field=field, fix=exc.fix) from exc


def expand(file: SweepFile, root: Path, *, where: str = "sweep file") -> list[Cell]:
    """The cells of a sweep, in file order (module docstring). Loads each corpus and prompt once.

    Phases (:class:`_Expansion`): check the methods' datasets; per dataset, load it and its segment; per method,
    parse it and find its backend; its axes (prompts × conditions × temperatures, or one cell for a raw engine); per
    cell, the overrides, the checks a run would make first, the planned components and the id.

    Raises: ConfigError first, before anything is loaded, for a sweep of more than :data:`MAX_CELLS` cells
    (:func:`check_cell_count`); InputError (a corpus that does not load, a dataset path that leaves ``root`` or
    passes a symbolic link), ConfigError (unknown backend, prompt or backend option; a prompt that cannot serve a
    dataset's languages; a method's dataset that is not among the sweep's; two cells that would be the same run).
    """
    return expand_all(file, root, where=where)[0]


def expand_all(file: SweepFile, root: Path, *, where: str = "sweep file") -> tuple[list[Cell], list[NotApplicable]]:
    """:func:`expand`, with the history and arm cells that are not run because history cannot reach their method
    (:class:`NotApplicable`; issue 40). Raises: as :func:`expand`."""
    check_cell_count(file, where)
    expansion = _Expansion(file, root, where)
    cells = expansion.cells_of_file()
    return cells, expansion.not_applicable


@dataclass(frozen=True)
class MethodCount:
    """One method's share of a sweep's cells (:func:`count_cells`): the datasets it runs on and its prompts ×
    conditions × temperatures (1 × 1 × 1 for an engine that takes the raw source)."""

    index: int
    method: str
    datasets: int
    prompts: int
    conditions: int
    temperatures: int
    views: int = 1
    """Cells per combination from the context experiments (issue 40): ``len(histories) + len(arms)``, else 1."""

    @property
    def cells(self) -> int:
        return self.datasets * self.prompts * self.conditions * self.temperatures * self.views

    def factors(self) -> str:
        return (f"datasets {self.datasets:,} × prompts {self.prompts:,} × conditions {self.conditions:,} × "
                f"temperatures {self.temperatures:,}" + (f" × (histories + arms) {self.views:,}"
                                                         if self.views != 1 else ""))


@dataclass(frozen=True)
class CellCount:
    """A sweep's cell count from its factor sizes (:func:`count_cells`): ``cells`` is exact unless an override skips
    cells (``skips``: then it is an upper bound, the skipped cells not subtracted). The sweep-level factor sizes are
    ``datasets``, ``methods``, ``prompts`` (1 when the list is empty: each backend's default), ``conditions`` (1
    when empty) and ``temperatures``; ``per_method`` each method's share."""

    cells: int
    datasets: int
    methods: int
    prompts: int
    conditions: int
    temperatures: int
    per_method: tuple[MethodCount, ...]
    skips: bool
    views: int = 1
    """``len(histories) + len(arms)`` (1 when both are empty): the two context experiments add, not multiply."""

    @property
    def uniform(self) -> bool:
        """Whether every method runs on every dataset with the sweep's prompts, conditions and temperatures (then
        the count is the product of the sweep-level factors)."""
        return all((m.datasets, m.prompts, m.conditions, m.temperatures, m.views)
                   == (self.datasets, self.prompts, self.conditions, self.temperatures, self.views)
                   for m in self.per_method)

    def factors(self) -> str:
        """The factors as one line: ``datasets 10 × methods 100 × prompts 10 × conditions 10 × temperatures 10``,
        and, when the methods differ (their own datasets, prompts or temperatures; raw engines), the largest
        method's share."""
        text = (f"datasets {self.datasets:,} × methods {self.methods:,} × prompts {self.prompts:,} × conditions "
                f"{self.conditions:,} × temperatures {self.temperatures:,}"
                + (f" × (histories + arms) {self.views:,}" if self.views != 1 else ""))
        if not self.uniform and self.per_method:
            top = max(self.per_method, key=lambda m: m.cells)
            text += (f"; per method, the largest is methods.{top.index} ({paths.shown(top.method)}): "
                     f"{top.factors()} = {top.cells:,}")
        return text


def _takes_raw_source(method: str, known: dict[str, bool]) -> bool:
    """Whether ``method``'s engine takes the raw source (one cell per dataset: no prompt, no temperature), ``known``
    caching the answer per backend; False when the method or backend is unknown (the prompted count is then the
    upper bound; expansion reports the error)."""
    try:
        backend = split_method(method)[0]
    except MtboardError:
        return False
    if backend not in known:
        try:
            known[backend] = get_backend(backend).prompt_format == "raw"
        except MtboardError:
            known[backend] = False
    return known[backend]


def count_cells(file: SweepFile) -> CellCount:
    """The number of cells :func:`expand` makes of ``file``, from the factor sizes alone (issue 34 item 3): per
    method, the sweep's datasets it runs on (its ``datasets``, else all) × its prompts (its own, else the sweep's,
    else the backend's one default) × the sweep's conditions (1 when none) × its temperatures (its own, else the
    sweep's); 1 per dataset for an engine that takes the raw source; each of these × (``len(histories) +
    len(arms)``, else 1). Nothing is loaded: O(datasets + methods) however many cells that makes. Exact, but for
    overrides that skip cells (not subtracted: ``skips``), history cells a method cannot take (listed as not
    applicable by the expansion) and duplicate cells (refused by the expansion)."""
    conditions = max(1, len(file.conditions))
    prompts = len(file.prompts) or 1
    views = (len(file.histories) + len(file.arms)) or 1
    per: list[MethodCount] = []
    known: dict[str, bool] = {}
    for i, sm in enumerate(file.methods):
        allowed = None if sm.datasets is None else set(sm.datasets)
        n_datasets = len(file.datasets) if allowed is None else sum(1 for d in file.datasets if d in allowed)
        if _takes_raw_source(sm.method, known):
            per.append(MethodCount(i, sm.method, n_datasets, 1, 1, 1, views))
            continue
        per.append(MethodCount(i, sm.method, n_datasets, prompts if sm.prompts is None else len(sm.prompts),
                               conditions, len(file.temperatures if sm.temperatures is None else sm.temperatures),
                               views))
    return CellCount(cells=sum(m.cells for m in per), datasets=len(file.datasets), methods=len(file.methods),
                     prompts=prompts, conditions=conditions, temperatures=len(file.temperatures),
                     per_method=tuple(per), skips=any(o.skip for o in file.overrides), views=views)


def check_cell_count(file: SweepFile, where: str, *, limit: int = MAX_CELLS) -> CellCount:
    """The sweep's :func:`count_cells`, refused over ``limit`` (default :data:`MAX_CELLS`) before anything is loaded.

    Raises: ConfigError, one line: ``FILE: sweep NAME: 1,000,000 cells over the limit of 1,024 (datasets 10 ×
    methods 100 × prompts 10 × conditions 10 × temperatures 10) (fix: …)``; "up to N cells" when overrides skip
    cells (the count is then an upper bound)."""
    count = count_cells(file)
    if count.cells > limit:
        up_to = "up to " if count.skips else ""
        note = " before the overrides that skip cells" if count.skips else ""
        raise ConfigError(
            f"sweep {file.name}: {up_to}{count.cells:,} cells{note}, over the limit of {limit:,} cells "
            f"({count.factors()}); nothing was loaded or sent", where=where,
            fix=f"split it into sweep files of at most {limit:,} cells each (four GitHub matrices of 256 jobs; "
                "docs/sweeps.md), or drop values of its largest factors"
                + (" (list fewer values instead of skipping cells)" if count.skips else ""))
    return count


@dataclass(frozen=True)
class _Dataset:
    """One of the sweep's datasets as the expansion uses it: its path as written, the corpus, the SHA-256 of its
    file and the entries of the sweep's segment (all of them, before ``limit``)."""

    path: str
    corpus: Corpus
    sha256: str
    entries: list[Entry]


@dataclass(frozen=True)
class _Method:
    """One of the sweep's methods (``index`` in ``methods``) as parsed for a dataset: its backend class, whether
    the engine takes the raw source (no prompt, no temperature), the method as published, its label and lane."""

    index: int
    sm: SweepMethod
    spec: MethodSpec
    backend_cls: type[Backend]
    raw: bool
    public: str
    label: str
    lane: Literal["local", "api"]


class _Expansion:
    """One expansion of a sweep file (internal): the corpora and prompts loaded so far (each once), the cells made
    and the ids seen (two cells with one id are the same run)."""

    def __init__(self, file: SweepFile, root: Path, where: str) -> None:
        self.file, self.root, self.where = file, root, where
        self.corpora: dict[str, tuple[Any, str]] = {}
        self.prompts: dict[str, Prompt] = {}
        self.cells: list[Cell] = []
        self.not_applicable: list[NotApplicable] = []
        self.seen: dict[str, str] = {}
        self.segment = Segment(file.segment)

    def cells_of_file(self) -> list[Cell]:
        """Every cell: datasets × methods × axes in file order."""
        self._check_method_datasets()
        for di, dpath in enumerate(self.file.datasets):
            dataset = self._dataset(di, dpath)
            for mi, sm in enumerate(self.file.methods):
                if sm.datasets is not None and dpath not in sm.datasets:
                    continue
                method = self._method(mi, sm, dataset)
                for prompt_name, cond, temperature in self._axes(method):
                    for view in self._views():
                        self._add_cell(dataset, method, prompt_name, cond, temperature, view)
        return self.cells

    def _views(self) -> list[tuple[str | None, str | None, int | None]]:
        """The ``(experiment, arm, history)`` of each cell per axis value (issue 40): the history experiment (the
        ``scene-context`` arm at each of ``histories``), then the arms experiment (each of ``arms``, no history
        length) — two experiments, not one cross product; ``[(None, None, None)]`` when the sweep has neither."""
        views: list[tuple[str | None, str | None, int | None]] = [
            ("history", "scene-context", h) for h in self.file.histories]
        views += [("arms", a, None) for a in self.file.arms]
        return views or [(None, None, None)]

    def _check_method_datasets(self) -> None:
        """Raises: ConfigError for a method naming a dataset that is not among the sweep's."""
        for mi, sm in enumerate(self.file.methods):
            if sm.datasets is not None:
                unknown = [d for d in sm.datasets if d not in self.file.datasets]
                if unknown:
                    raise ConfigError(f"methods[{mi}] names dataset {unknown[0]!r}, which is not in the sweep's "
                                      "datasets", where=self.where, field=f"methods.{mi}.datasets",
                                      fix="list it under datasets too, or drop it here")

    def _dataset(self, di: int, dpath: str) -> _Dataset:
        """Dataset ``di`` loaded (once) from the repository root. Raises: InputError for a corpus that does not
        load; ConfigError when it has no entry in the sweep's segment."""
        if dpath not in self.corpora:
            field = f"datasets.{di}"
            try:
                raw = paths.read_inside(self.root, dpath, max_bytes=MAX_CORPUS_BYTES, where=self.where, field=field,
                                        root_name=f"the repository root {self.root.resolve()}")
                self.corpora[dpath] = loads_corpus(raw, str(self.root / dpath))
            except paths.PathRefused:
                raise
            except MtboardError as exc:
                problem = "file not found" if isinstance(exc, paths.PathMissing) else exc.problem
                raise InputError(f"dataset {dpath} does not load from {self.root.resolve()}: {problem}",
                                 where=self.where, field=field,
                                 fix="give the corpus path relative to the repository root (--root; default: the "
                                 "checkout holding the sweep file), or add the corpus there") from exc
        corpus, sha = self.corpora[dpath]
        seg_entries = corpus.segment(self.segment)
        if not seg_entries:
            raise ConfigError(f"{dpath} has no {self.segment.value} entries", where=self.where, field="segment",
                              fix="pick a segment the corpus has")
        return _Dataset(path=dpath, corpus=corpus, sha256=sha, entries=seg_entries)

    def _method(self, mi: int, sm: SweepMethod, dataset: _Dataset) -> _Method:
        """Method ``mi`` parsed and its backend checked against the dataset's languages. Raises: ConfigError /
        InputError naming ``methods.N.method``."""
        ds = dataset.corpus.dataset
        with _named(self.where, f"methods.{mi}.method"):
            spec = parse_method(sm.method)
            backend_cls = get_backend(spec.backend)
            backend_cls.check_languages(spec.model, ds.source_language, ds.target_language)
        model_path(backend_cls, spec.model, sm.gguf_package, self.root, where=self.where, field=f"methods.{mi}.method")
        return _Method(index=mi, sm=sm, spec=spec, backend_cls=backend_cls, raw=backend_cls.prompt_format == "raw",
                       public=spec.with_model(backend_cls.public_model(spec.model)).text,
                       label=sm.label or (backend_cls.public_model(spec.model) or spec.backend),
                       lane="local" if getattr(backend_cls, "local_gate", False) else "api")

    def _axes(self, method: _Method) -> list[tuple[str | None, SweepCondition | None, float | None]]:
        """The method's ``(prompt, condition, temperature)`` values: the method's own prompts and temperatures, else
        the sweep's (else the backend's default prompt), × the sweep's conditions; one ``(None, None, None)`` for
        an engine that takes the raw source."""
        if method.raw:
            return [(None, None, None)]
        sm, file = method.sm, self.file
        prompt_names = sm.prompts if sm.prompts is not None else (file.prompts or [method.backend_cls.default_prompt])
        temps = sm.temperatures if sm.temperatures is not None else file.temperatures
        conds: list[SweepCondition | None] = list(file.conditions) or [None]
        return [(p, c, t) for p in prompt_names for c in conds for t in temps]

    def _prompt(self, name: str | None, method: _Method) -> Prompt | None:
        """The prompt ``name`` of ``method``'s cells, loaded once (None for no prompt) from the prompts folder only
        (a name, never a path: :func:`mtboard.inputs.prompts.load_prompt` with ``named``). Raises: ConfigError for an
        unknown prompt, InputError for a name that leaves the prompts folder or passes a symbolic link; both name
        the sweep file's field (``prompts.N`` or ``methods.M.prompts.N``)."""
        if name is None:
            return None
        if name not in self.prompts:
            own = method.sm.prompts
            field = (f"methods.{method.index}.prompts.{own.index(name)}" if own is not None and name in own else
                     f"prompts.{self.file.prompts.index(name)}" if name in self.file.prompts else
                     f"methods.{method.index}.method")
            self.prompts[name] = load_prompt(name, named=True, where=self.where, field=field)
        return self.prompts[name]

    def _overridden(self, dataset: _Dataset, method: _Method, prompt_name: str | None,
                    cond: SweepCondition | None, condition: str, temperature: float | None,
                    view: tuple[str | None, str | None, int | None] = (None, None, None)
                    ) -> tuple[int | None, int, int | None, dict[str, Any]] | None:
        """The cell's ``(limit, runs, max_tokens, backend options)``: the sweep's (options: the method's, then the
        condition's) with every matching override applied in file order; None when one of them skips the cell."""
        path_keys = method.backend_cls.Options.path_fields()
        self._no_machine_paths(method.sm.backend_options, path_keys, f"methods.{method.index}")
        if cond is not None:
            ci = next(i for i, c in enumerate(self.file.conditions) if c is cond)
            self._no_machine_paths(cond.backend_options, path_keys, f"conditions.{ci}")
        options: dict[str, Any] = {**method.sm.backend_options, **(cond.backend_options if cond else {})}
        limit, runs, max_tokens, skip = self.file.limit, self.file.runs, self.file.max_tokens, False
        for oi, o in enumerate(self.file.overrides):
            self._no_machine_paths(o.backend_options, path_keys, f"overrides.{oi}")
            if _matches(o.match, dataset_id=dataset.corpus.dataset.id, dataset_path=dataset.path,
                        method=method.sm.method, prompt=prompt_name, condition=condition, temperature=temperature,
                        view=view):
                limit = o.limit or limit
                runs = o.runs or runs
                max_tokens = o.max_tokens or max_tokens
                options.update(o.backend_options)
                skip = skip or o.skip
        if skip:
            return None
        return limit, runs, max_tokens, options

    def _no_machine_paths(self, options: dict[str, Any], path_keys: list[str], at: str) -> None:
        """Refuse a backend option that names a file or folder of the machine (:meth:`Options.path_fields`, e.g.
        ``hf_cache_dir``) in a sweep file: the machine's folders are the operator's, not the contributor's (issue 34
        item 4). Raises: ConfigError naming ``AT.backend_options.KEY``."""
        bad = sorted(set(options) & set(path_keys))
        if bad:
            key = bad[0]
            raise ConfigError(f"backend option {key!r} names a folder or file of the machine; a sweep file may not "
                              "choose one", where=self.where, field=f"{at}.backend_options.{key}",
                              fix=f"remove {key} from the sweep file: the machine's folders are its operator's "
                                  f"to choose (mtboard run --backend-opt {key}=PATH on their own runs)")

    def _add_cell(self, dataset: _Dataset, method: _Method, prompt_name: str | None, cond: SweepCondition | None,
                  temperature: float | None,
                  view: tuple[str | None, str | None, int | None] = (None, None, None)) -> None:
        """Make the cell of one axis value and corpus view (unless an override skips it, or history cannot reach
        the method: then it is listed in :attr:`not_applicable`), after the checks a run makes first: backend
        options, tools, the corpus view, a prompt that renders the view's first entry. Raises: ConfigError."""
        ds, backend_cls, raw = dataset.corpus.dataset, method.backend_cls, method.raw
        prompt = self._prompt(prompt_name, method)
        condition = (cond.name if cond is not None else prompt_name) if not raw else (
            "baseline" if backend_cls.method_class == MethodClass.baseline else "default")
        experiment, arm, history = view
        if experiment is not None and arm is not None:
            why = history_not_applicable(arm, history, method=method.label, raw=raw, prompt=prompt_name,
                                         prompt_uses_history=prompt is not None and prompt.uses_history)
            if why is not None:
                self.not_applicable.append(NotApplicable(
                    dataset_id=ds.id, language_pair=ds.language_pair, method=method.sm.method, label=method.label,
                    prompt=prompt_name, experiment=experiment, arm=arm, history=history, reason=why))
                return
        overridden = self._overridden(dataset, method, prompt_name, cond, condition, temperature, view)
        if overridden is None:
            return
        limit, runs, max_tokens, options = overridden
        with _named(self.where, f"methods.{method.index}.backend_options"):
            backend_cls.parse_options(options)  # ConfigError for an unknown key or a bad value, now
        tools = parse_tools(cond.tools) if cond is not None and not raw else ()
        fst_retries, _ = check_pipeline(tools, cond.fst_retries if cond is not None and not raw else None,
                                        backend_cls=backend_cls, prompt=prompt, target_language=ds.target_language)
        with _named(self.where, "histories" if experiment == "history" else "arms"):
            viewed = arm_view(dataset.entries, arm, history)
        if not viewed:
            raise ConfigError(f"the {arm} view of {dataset.path} has no entries", where=self.where,
                              field="arms", fix="use a corpus with scenes, or drop the arm")
        entries = viewed[:limit] if limit else viewed
        system_prompt = _system_prompt(prompt, ds, entries)
        temp = None if raw else float(temperature if temperature is not None else 0.0)
        comps = planned_components(
            dataset_sha256=dataset.sha256, public_method=method.public, condition=condition,
            system_prompt_sha256=canonical.sha256_hex(system_prompt), temperature=temp,
            batch_size=max(1, backend_cls.preferred_batch_size), max_tokens=None if raw else max_tokens,
            prompt_template_sha256=prompt.template_sha256 if prompt else None,
            entry_ids=[e.id for e in entries], judges=() if raw else tuple(self.file.judges),
            backend_options=options, runs=runs, segment=self.segment.value, tools=tools, fst_retries=fst_retries,
            arm=arm, history=history)
        what = f"{method.sm.method} {prompt_name} {temperature}" + (f" {arm} {history}" if arm else "")
        cid = self._new_id(comps, what, ds.id)
        sm = method.sm
        self.cells.append(Cell(
            id=cid, index=len(self.cells), dataset_path=dataset.path, dataset_id=ds.id,
            language_pair=ds.language_pair, method=sm.method, label=method.label, backend=method.spec.backend,
            prompt=prompt_name, condition=condition, temperature=temp, runs=runs, limit=limit,
            max_tokens=None if raw else max_tokens, segment=self.segment.value,
            backend_options=tuple(sorted(options.items())), judges=() if raw else tuple(self.file.judges),
            lane=method.lane, gguf_package=sm.gguf_package, price_in=sm.price_in, price_out=sm.price_out,
            provider=sm.provider or ("openai" if backend_cls.priced else None), entries=len(entries),
            segment_entries=len(viewed), method_index=method.index, components=comps, tools=tools,
            fst_retries=fst_retries, experiment=experiment, arm=arm, history=history))

    def _new_id(self, comps: dict[str, Any], what: str, dataset_id: str) -> str:
        """The cell id of ``comps`` (first 12 hex digits of their canonical SHA-256), remembered with ``what`` (method,
        prompt, temperature). Raises: ConfigError when another cell of the sweep has the same id."""
        cid = canonical.sha256_hex(canonical.canonical_bytes(comps))[:12]
        if cid in self.seen:
            raise ConfigError(f"two cells are the same run ({self.seen[cid]} and {what}) on {dataset_id}",
                              where=self.where, field="methods", fix="remove the duplicate axis value")
        self.seen[cid] = what
        return cid


def model_path(backend_cls: type[Backend], model: str, gguf_package: str | None, root: Path, *,
               where: str | None = None, field: str | None = None) -> Path | None:
    """The local model file a sweep method names (``gguf:models/x.gguf``: ``root / models/x.gguf``), checked with
    :func:`mtboard.core.paths.resolve_inside` under the sweep's ``root`` (a relative path; no ``..``, no symbolic
    link at any level; a regular file — issue 34 item 4). None when the backend's model names no file
    (``Backend.model_is_path`` false), a ``gguf_package`` assembles it (the method then holds its file name), or
    nothing is at that path (a pinned Hub reference ``REPO@REV/FILE.gguf``, or a file the runner reports missing).

    Raises: PathRefused (InputError) naming ``where``, ``field`` and the path."""
    if not backend_cls.model_is_path or gguf_package or not model:
        return None
    path = paths.resolve_inside(root, model, where=where, field=field, kind="file", missing_ok=True,
                                root_name=f"the sweep's root {root}")
    return path if os.path.lexists(path) else None


def _system_prompt(prompt: Prompt | None, ds: DatasetInfo, entries: list[Entry]) -> str:
    """The system prompt a cell's card will hash ("" without a prompt), after rendering the template on the first
    entry (a template that cannot serve the dataset's languages or history fails now). Raises: ConfigError."""
    system_prompt = ""
    if prompt is not None:
        system_prompt = prompt.system_prompt(ds.source_language, ds.target_language)
        prompt.render(entries[0].source, ds.source_language, ds.target_language, history=list(entries[0].history))
    return system_prompt


__all__ = ["Cell", "CellCount", "MAX_CELLS", "MethodCount", "NotApplicable", "check_cell_count", "count_cells",
           "expand", "expand_all", "model_path", "planned_components"]
