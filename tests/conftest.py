"""The suite's two lanes, how its tests share two CPUs, and the expensive artefacts built once per session (issue 30
item 5; docs/TESTING.md §1).

Lanes::

    .venv/bin/python -m pytest               # fast lane (the default): tests marked slow or browser are deselected
    .venv/bin/python -m pytest --full        # full lane: everything (what scripts/test.sh and CI run)
    .venv/bin/python -m pytest -m slow       # an explicit -m expression selects by itself, in either lane

A deselected test is still collected: the summary line counts it ("N deselected"), so the collected count is the same
in both lanes. A test belongs to the full lane when it is marked ``slow`` (real model servers, package builds and
installs, workflow replays, whole-corpus model runs) or ``browser`` (headless Chromium); everything else is fast.

Parallel runs: ``addopts`` in pyproject.toml runs ``-n auto --dist loadfile`` (pytest-xdist; ``auto`` is
:func:`pytest_xdist_auto_num_workers`). The units of work the workers are handed (:class:`_ModuleScheduling`): a test
module (its module-scoped fixtures are built once) and the modules of one of :data:`GROUPS` together; the modules of
:data:`FIRST` first (the longest: the run ends with short modules on every worker). A model-server test (a slow test
of :data:`MODEL_SERVERS`) runs on one CPU (:class:`_OneCpuModelServers`). ``-n 0`` runs in this process, serially
(one test file while editing: ``pytest -n 0 tests/test_x.py``).

Session fixtures (each built once per worker process; those marked *shared* once per run, by whichever worker asks
first, under a file lock in the workers' common temporary folder, see :func:`shared_artefact`):

* ``committed_site`` (*shared*) — the site built from the committed cards under submissions/, with MkDocs; read-only
  (test_site_build.py, test_site_pages.py, test_site_pages_browser.py, test_home_matrix.py).
* ``build_cache`` (*shared*) — one build cache folder for the run, handed out warm: every committed card validated
  and their ledger built into it once.
* ``committed_inputs`` — :func:`mtboard.ledger.load.load_inputs` of the committed cards, validated (read from the
  warm ``build_cache``).
* ``fixture_site`` — the site of the hand-made toy cards of test_site_cards.py (test_site_build.py,
  test_site_browser.py).
* ``wheel`` (*shared*) — mtboard's wheel built from a copy of the checkout (test_packaging.py).
* ``validate_job_install`` (*shared*) — validate.yml's two install steps run once: the PATH entries later steps get
  (test_workflows_validate_job.py, test_workflows_verify_job.py).
* sealed real cards — tests/validate_support.py builds each card once per run (*shared*) through
  :data:`validate_support.SHARED_DIR`, set here.

Shared artefacts are read-only: a test that changes one copies it first (``shutil.copytree``). The browser is
module-scoped (``browser``), not session-scoped: while Playwright's sync API is active no ``asyncio.run()`` can run in
the thread, so a Chromium kept open across modules would break every later test of that worker that runs the
pipeline."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# `mtboard build` keeps a build cache in the project root by default (issue 35 item 3): tests that build through the
# CLI must not leave one in the checkout; tests of the cache pass their own folder
os.environ.setdefault("MTBOARD_CACHE", "off")

ROOT = Path(__file__).resolve().parents[1]
# Bytecode: with PYTHONDONTWRITEBYTECODE set (this machine sets it), every worker compiled mtboard and rewrote the
# test modules from source (collection 18.5 s a process; 9.1 s with its bytecode kept), and so did every Python process
# the tests start. The run unsets it, so Python keeps bytecode where it does by default: __pycache__ folders beside the
# sources (git-ignored; the code and prompt hashes skip them), the installed packages' own from their install, and
# those of the tests' temporary venvs and copies inside the temporary folders they go with. (Until 2026-12-06 it was
# kept under .venv/pycache via PYTHONPYCACHEPREFIX: Python then ignores every installed package's __pycache__, so the
# first run after a clone compiled all of them again, as did every fresh venv a full-lane test installs.)
if os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.dont_write_bytecode = False  # this process too (-n 0): the test modules it imports after this one

COMMITTED_BUILD_TIME = "2026-12-01 00:00 UTC"
"""The build stamp of ``committed_site`` (the pages tests compare against it)."""
FIXTURE_BUILD_TIME = "2026-11-29 15:00 UTC"
"""The build stamp of ``fixture_site`` (test_site_build.py's determinism test replaces it)."""

FIRST = [
    "test_judges_gemma", "test_backends_gguf", "test_official_board", "test_neural_comet", "test_ledger",
    "test_server_text_boundary", "test_site_visitor", "test_broken_answers_run", "test_workflows_validate_job", "test_sandbox", "test_validity",
    "test_site_build",
    "test_site_pages_browser", "test_packaging", "test_workflows_verify_job", "test_validate_verify_gguf", "test_contributor_path", "test_demo",
    "test_workflows_sweep_job", "test_validate_binding", "test_llm_transport", "test_plugins", "test_server_identity",
    "test_validate_tamper", "test_validate_cli", "test_judges_scripted", "test_validate_judged_tamper", "test_runner_llama", "test_pipeline_fst_gate",
    "test_site_browser", "test_official_validity", "test_checkout_line_ends", "test_pinned_validate",
    "test_official_board_browser", "test_corpora_rebuild", "test_sweeps_plan", "test_site_pages",
    "test_runner_options", "test_semantic", "test_submit_same_fingerprint",
]
"""Modules handed to the workers first, longest first (their full-lane time with two workers on the 2-core machine;
a module's slow tests are deselected in the fast lane, where the same order holds for the rest), with two exceptions:
the modules that mostly wait (test_server_text_boundary: 80 s of wall time, 8–10 of CPU; test_broken_answers_run)
come early, so their waits overlap the other workers' computing instead of ending a lane alone (measured on the
fast lane's timeline); and test_validity and test_site_build come after a few others in the full lane, since their
tests wait for the warm ``build_cache`` that test_ledger's first test builds (workers that all wait for it at once
leave a core idle). The rest keep their file order. Order only: every module runs either way."""

GROUPS: dict[str, list[str]] = {"gguf-facts": ["test_models_binding", "test_models_review"]}
"""Modules that are one unit of work together: they run in one worker, one module after another.
``gguf-facts``: both read the installed Gemma GGUF's facts (:func:`mtboard.inputs.binding.gguf_facts`), which
``gguf.GGUFReader`` takes ~11 CPU-s to parse (its 262,144 tokenizer strings) and which are then remembered in the
process: apart, each worker that runs one of them paid it (2026-12-06: the two largest costs of the fast lane's
single tests)."""


MODEL_SERVERS = [
    "test_judges_gemma", "test_backends_gguf", "test_official_board", "test_neural_comet", "test_sandbox",
    "test_workflows_verify_job", "test_validate_verify_gguf", "test_contributor_path", "test_demo",
    "test_server_identity", "test_runner_llama", "test_pipeline_fst_gate", "test_runner_resume",
    "test_backends_registry", "test_native_prompts",
]
"""Modules whose ``slow`` tests start llama-cpp-python servers (Gemma 270M) or COMET: each such test runs with its
worker pinned to one CPU (:class:`_OneCpuModelServers`), so the servers it starts compute on one thread. The modules
are ordinary units of work: two of them may run at once, each on its own CPU."""


# ----------------------------------------------------------------------------------------------------------------------
# Lanes and scheduling


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full", action="store_true", default=False,
                     help="run the full lane: slow and browser tests too (scripts/test.sh, CI); "
                          "without it they are deselected unless -m selects")


def _full(config: pytest.Config) -> bool:
    return bool(config.getoption("--full") or config.getoption("markexpr"))


def pytest_report_header(config: pytest.Config) -> str:
    if _full(config):
        return "lane: full" if config.getoption("--full") else f"lane: -m {config.getoption('markexpr')!r}"
    return "lane: fast (slow and browser tests deselected; --full runs them)"


def _unit(module: str) -> str:
    """The unit of work of a test module under xdist: its group of :data:`GROUPS`, else the module itself."""
    stem = Path(module).stem
    return next((name for name, modules in GROUPS.items() if stem in modules), module)


def _model_server_test(item: pytest.Item) -> bool:
    """A model-server test: a slow test of a module in :data:`MODEL_SERVERS`."""
    return item.path.stem in MODEL_SERVERS and item.get_closest_marker("slow") is not None


WHOLE_SYSTEM_FIXTURES = frozenset({"committed_site", "committed_inputs", "build_cache"})
"""Fixtures that stand for the whole committed system: every committed card validated and the ledger of every board
built (``build_cache``'s warm-up, ~45 CPU-s once a run), the committed site built. A test that uses one, directly or
through another fixture, is a whole-system test and runs in the full lane: :func:`pytest_itemcollected` marks it
``committed`` and ``slow`` (docs/TESTING.md §1). Until 2026-12-06, 67 such tests were fast only because they were
not marked, and the warm-up they share was a seventh of the fast lane."""


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark a test that uses one of :data:`WHOLE_SYSTEM_FIXTURES` ``committed`` and ``slow`` (so ``-m committed``
    selects exactly these tests, and ``-m slow`` selects them too)."""
    if WHOLE_SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.committed)
        if item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the full lane's tests (unless --full or -m). In an xdist worker, also order the modules :data:`FIRST`
    first (a plain run keeps file order)."""
    if not _full(config):
        slow = [i for i in items if i.get_closest_marker("slow") or i.get_closest_marker("browser")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            dropped = set(slow)
            items[:] = [i for i in items if i not in dropped]
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return
    rank = {m: n for n, m in enumerate(FIRST)}
    items.sort(key=lambda i: rank.get(i.path.stem, len(FIRST)))  # stable: file order otherwise; the same everywhere


class _ModuleScheduling:
    """xdist's ``--dist loadfile`` with this suite's units of work: a test module (its module-scoped fixtures are
    built once) or the modules of a group of :data:`GROUPS`. (xdist's own ``loadgroup`` marks do not group under
    pytest 9.2: pytest-dev/pytest-xdist#1386.) Also hands each worker the folder where model-server tests note the
    CPU they hold (:class:`_OneCpuModelServers`)."""

    def __init__(self) -> None:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="mtboard-xdist-"))

    def pytest_configure_node(self, node) -> None:
        node.workerinput["mtboard_cpus"] = str(self.folder)

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class ModuleScheduling(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return _unit(super()._split_scope(nodeid))

        return ModuleScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_ModuleScheduling(), "mtboard-module-scheduling")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _full(config):  # -n 0 (one file while editing): servers use every CPU
        folder = workerinput.get("mtboard_cpus")
        config.pluginmanager.register(_OneCpuModelServers(Path(folder) if folder else None),
                                      "mtboard-one-cpu-model-servers")
    times = os.environ.get("MTBOARD_TEST_TIMES")
    if times:  # the controlling process of xdist runs no test: the hook never fires there
        config.pluginmanager.register(_Timeline(Path(times)), "mtboard-timeline")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the CPUs this process may use, in both lanes: many tests wait on the
    processes they start (on the 2-core machine the fast lane took 4 min 49 s with 2 workers, 3 min 48 s with 3,
    3 min 44 s with 4). Model servers compute on one thread each (:class:`_OneCpuModelServers`), so the extra worker
    does not stall them. A conftest hook: xdist reads it before ``pytest_configure``."""
    return len(os.sched_getaffinity(0)) + 1


def model_server_cpu(cpus: list[int], taken: list[int], workerid: str) -> int:
    """The CPU a model-server test runs on: of ``cpus``, the one fewest other workers' model-server tests hold now
    (``taken``: their CPUs, a CPU once per holder); on a tie, worker ``gwN`` prefers the (N mod count)-th (sorted),
    ``main`` (no xdist) the first."""
    order = sorted(cpus)
    n = int(workerid[2:]) if workerid.startswith("gw") and workerid[2:].isdigit() else 0
    return min(order, key=lambda c: (taken.count(c), (order.index(c) - n) % len(order)))


class _OneCpuModelServers:
    """In the full lane, a model-server test (a slow test of :data:`MODEL_SERVERS`) runs with its worker pinned to one
    CPU (``os.sched_setaffinity``; restored after the test): the one fewest other workers' model-server tests hold
    (:func:`model_server_cpu`; the workers note their CPUs in ``folder``, under a lock). The servers it starts
    inherit the mask and size their thread pools from it — mtboard's
    :func:`mtboard.backends.local.server.default_threads` is the CPUs this process may use, torch's intra-op pool
    likewise — so each computes on one thread.

    Why: llama.cpp's threads wait for each other at every layer, so a two-thread server beside any other process on
    the two cores stalls (the 20-entry Gemma judge test: 70 s alone, 310 s beside one other worker). The suite used
    to make every other worker wait while a server was alive; that left the second core idle through the servers'
    own non-model work and still let a test already running stall them (the model-server tests took 826 s of a
    24-minute full lane, 504 s alone; the other workers waited 735 s). One thread needs no turns: measured on this
    machine, Gemma 3 270M answers 24 EN→ES prompts identically on one and two threads, in 13.2 s against 9.3 s — 1.4×
    the wall time for half the CPUs. Two workers' model-server tests run at once on different CPUs; pinning both to
    one CPU (the first design: by worker number) left the other CPU to the ordinary tests while the two servers
    shared one."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def _take(self, worker: str, cpus: list[int]) -> tuple[int, Path | None]:
        if self.folder is None:
            return model_server_cpu(cpus, [], worker), None
        import fcntl

        with open(self.folder / "lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            taken = [int(p.name.split(".", 1)[0]) for p in self.folder.glob("*.cpu")]
            cpu = model_server_cpu(cpus, taken, worker)
            mark = self.folder / f"{cpu}.{worker}.cpu"
            mark.touch()
        return cpu, mark

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        if not _model_server_test(item):
            yield
            return
        before = os.sched_getaffinity(0)
        worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
        cpu, mark = self._take(worker, list(before))
        os.sched_setaffinity(0, {cpu})
        try:
            yield
        finally:
            os.sched_setaffinity(0, before)
            if mark is not None:
                mark.unlink(missing_ok=True)


class _Timeline:
    """``MTBOARD_TEST_TIMES=FILE``: one JSON line per test appended to FILE — worker, node id, start (Unix time),
    wall seconds of setup + call + teardown, CPU seconds of the worker and of the processes it waited for
    (``os.times``: user + system, children included once reaped).
    For tuning the lanes (docs/TESTING.md §1: a test whose wall time is far above its CPU time waits on something);
    off unless set."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        t0, c0, w0 = time.time(), os.times(), time.monotonic()
        yield
        c1 = os.times()
        cpu = sum(getattr(c1, f) - getattr(c0, f) for f in ("user", "system", "children_user", "children_system"))
        worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
        line = json.dumps({"worker": worker, "test": item.nodeid, "start": round(t0, 3),
                           "wall": round(time.monotonic() - w0, 3), "cpu": round(cpu, 3)})
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


# ----------------------------------------------------------------------------------------------------------------------
# Artefacts shared by the workers of one run


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder that every xdist worker sees (a worker's basetemp is ``<run>/popen-gwN``)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_artefact(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``<run>/shared/NAME``, filled by ``build(folder)`` once per run: the first worker to ask builds it
    under a file lock while the others wait, then everyone reads it. A failed build leaves no ``.done`` marker, so
    the next asker builds again (and fails the same way, in its own test)."""
    from filelock import FileLock

    root = _shared_root(tmp_path_factory) / "shared"
    root.mkdir(exist_ok=True)
    folder = root / name
    with FileLock(str(root / f"{name}.lock")):
        if not (folder / ".done").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".done").write_text("")
    return folder


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_in_the_runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Temporary files and folders made outside ``tmp_path`` while the tests run go into this worker's pytest base
    folder (``<basetemp>/tmp``), which pytest rotates (it keeps the last three runs' folders), not into ``/tmp``: a
    helper's per-process cache (``tempfile.mkdtemp`` behind ``functools.cache``: the ledger tests' copies of the
    committed cards, the mini corpus), what the product itself makes there (a verify re-run's kept folder when no
    ``--out`` is given, a model server's log and socket folder) and a subprocess's that inherits ``TMPDIR``. Before,
    each run left them in ``/tmp``: ~190 folders (~92 MB) there after a day of test runs on this machine. Not covered:
    what runs at collection (before this fixture) and subprocesses given an environment built at import. A model
    server's socket path gets longer (~84 characters under ``/tmp/pytest-of-<user>/pytest-N/popen-gwN/tmp``; the
    limit is 107): a much longer ``--basetemp`` would hit it."""
    import tempfile

    folder = tmp_path_factory.mktemp("tmp", numbered=False)
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = str(folder)
    yield
    tempfile.tempdir = saved_dir
    if saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_env


@pytest.fixture(scope="session", autouse=True)
def _shared_sealed_cards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Sealed real cards (tests/validate_support.py) are built once per run and read by every worker."""
    import validate_support

    folder = _shared_root(tmp_path_factory) / "shared" / "cards"
    folder.mkdir(parents=True, exist_ok=True)
    saved, validate_support.SHARED_DIR = validate_support.SHARED_DIR, folder
    yield
    validate_support.SHARED_DIR = saved


# ----------------------------------------------------------------------------------------------------------------------
# Built sites


@dataclasses.dataclass(frozen=True)
class BuiltSite:
    """A site built by :func:`mtboard.site.build_site`: its HTML folder, its Markdown folder and what the build
    reported (``rejected``: (path, problems) pairs; ``cards``: cards on the site)."""

    out: Path
    docs: Path
    cards: int
    rejected: list[tuple[str, list[str]]]


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache folder for the whole run (*shared* by the workers; :mod:`mtboard.ledger.cache`,
    :mod:`mtboard.site.incremental`), for the tests that build the ledger or the site of the committed cards,
    handed out warm: the first worker to ask validates every committed card and builds their ledger into it
    (:func:`_warm_build_cache`, under :func:`shared_artefact`'s lock) while the others wait, so the validator's
    verdicts, the GGUF facts of the model records, each board's sentinel scores and the row-views' resamples are
    computed once per run and read by every later build, as ``mtboard build`` reads ``.mtboard-cache/``. (Before,
    workers asking at once each scored the sentinel sets and parsed the GGUF file: ~30 CPU-s a run twice over.) Its
    entries are keyed by content (a changed card, corpus or code is another key) and written atomically, so builds of
    different inputs share it safely, at once or one after another. The cache's own behaviour (hits, misses, stored
    entries, byte-identical results with and without it) is tested on folders of its tests' own
    (tests/test_ledger_cache.py, test_ledger_resamples.py, test_site_incremental.py, test_sentinels.py)."""
    folder = _shared_root(tmp_path_factory) / "shared" / "build-cache"
    folder.mkdir(parents=True, exist_ok=True)
    shared_artefact(tmp_path_factory, "build-cache-warm", lambda _: _warm_build_cache(folder))
    return folder


def _warm_build_cache(cache: Path) -> None:
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.load import load_inputs

    build_ledger(load_inputs(ROOT / "submissions", ROOT / "corpora", cache=cache), cache=cache)


def _build_committed(folder: Path, cache: Path) -> None:
    from mtboard.site import build_site

    report = build_site(ROOT / "submissions", ROOT / "corpora", folder / "out", folder / "docs", validate=False,
                        build_time=COMMITTED_BUILD_TIME, cache=cache)
    (folder / "report.json").write_text(json.dumps({"cards": report.cards, "rejected": [
        [r.path, r.problems] for r in report.rejected]}), encoding="utf-8")


@pytest.fixture(scope="session")
def committed_site(tmp_path_factory: pytest.TempPathFactory, build_cache: Path) -> BuiltSite:
    """The leaderboard site of the committed cards (submissions/, corpora/), MkDocs run, stamped
    :data:`COMMITTED_BUILD_TIME`. Built without re-validating the cards (``committed_inputs`` validates them, the
    same :func:`~mtboard.ledger.load.load_inputs` call the build makes; with every card valid both builds write the
    same bytes), with the run's ``build_cache``. Shared by the workers; read-only."""
    folder = shared_artefact(tmp_path_factory, "committed-site", lambda f: _build_committed(f, build_cache))
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return BuiltSite(folder / "out", folder / "docs", report["cards"], [tuple(r) for r in report["rejected"]])


@pytest.fixture(scope="session")
def committed_inputs(build_cache: Path):
    """:func:`mtboard.ledger.load.load_inputs` of the committed cards, every card validated (the load every
    leaderboard test starts from), read from the warm ``build_cache``'s verdicts (~1 CPU-s; not the warm-up's own
    inputs, which its ledger build has decided). Read-only: the leaderboard builders do not change their inputs."""
    from mtboard.ledger.load import load_inputs

    return load_inputs(ROOT / "submissions", ROOT / "corpora", cache=build_cache)


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory: pytest.TempPathFactory):
    """The site of test_site_cards.py's hand-made cards (hostile strings included, and its rejected files), built
    with validation and MkDocs, stamped :data:`FIXTURE_BUILD_TIME`: ``(root, cards, report)`` with ``root/out``,
    ``root/docs``, ``root/submissions``, ``root/corpora``. Read-only."""
    from mtboard.site import build_site
    from test_site_cards import write_fixture_tree

    root = tmp_path_factory.mktemp("fixture-site")
    cards = write_fixture_tree(root, xss=True)
    report = build_site(root / "submissions", root / "corpora", root / "out", root / "docs",
                        build_time=FIXTURE_BUILD_TIME)
    return root, cards, report


# ----------------------------------------------------------------------------------------------------------------------
# Installs


def _build_wheel(folder: Path) -> None:
    import subprocess
    import sys

    import install_support as inst

    src = inst.copy_checkout(folder / "src")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(folder / "dist"), str(src)], cwd=folder,
                          env=inst.clean_env(), capture_output=True, text=True, timeout=900)
    (folder / "build.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mtboard's wheel, built with ``python -m build`` (sdist, then the wheel from the sdist) from a copy of the
    checkout's files. Shared by the workers; read-only (install it, do not change it)."""
    folder = shared_artefact(tmp_path_factory, "wheel", _build_wheel)
    log = (folder / "build.log").read_text(encoding="utf-8")
    # setuptools' own check: a folder of package data that is not in the package list
    assert "is absent from the `packages` configuration" not in log
    (whl,) = (folder / "dist").glob("mtboard-*-py3-none-any.whl")
    return whl


@pytest.fixture(scope="session")
def validate_job_install(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """validate.yml's install steps, run once on a copy of the checkout as ./base: the PATH entries its later steps
    get (the installed venv's bin, the apt-get stand-in). Shared by the workers; read-only."""
    import install_support as inst

    def build(folder: Path) -> None:
        dirs = inst.install_validate_job(folder, inst.copy_checkout(folder / "ws" / "base"))
        (folder / "path.json").write_text(json.dumps([str(d) for d in dirs]), encoding="utf-8")

    folder = shared_artefact(tmp_path_factory, "validate-job-install", build)
    return [Path(d) for d in json.loads((folder / "path.json").read_text(encoding="utf-8"))]


# ----------------------------------------------------------------------------------------------------------------------
# Browser


@pytest.fixture(scope="module")
def browser():
    """One headless Debian Chromium (Playwright) for the module (module scope: see the header)."""
    from browser_support import browser_session

    yield from browser_session()
