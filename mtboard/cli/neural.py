"""CLI command: ``mtboard neural WORKDIR --metric comet22`` — add neural metrics (COMET-22, CometKiwi, xCOMET) to a
finished run's card without translating again (docs/neural_metrics.md).

The scoring runs in the COMET environment (``scripts/setup.sh --comet``; ``MTBOARD_COMET_PYTHON``), the models are
fetched with huggingface_hub at their pinned revisions (``HF_HUB_CACHE``, ``HF_HUB_OFFLINE`` and ``HF_TOKEN`` apply).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded, refresh_workdir_outputs
from mtboard.core.errors import ConfigError


def neural_lines(card) -> list[str]:  # noqa: ANN001 - RunCard (imported lazily)
    """One line per neural metric of a card: key, score, n and signature."""
    return [f"{key:<11} {m.score:.4f} over {m.n} entries (claimed until `mtboard verify`)  {m.signature}"
            for key, m in card.neural_metrics.items()]


def write_scored(new, target: Path, workdir: Path, original: Path) -> None:  # noqa: ANN001 - RunCard
    """Write the scored card and print its lines; when it replaces the work directory's own card, bring report.md's
    card line and the PR body file in step (as ``mtboard judge`` does)."""
    from mtboard.core import documents

    documents.write_card(new, target)
    for line in neural_lines(new):
        typer.echo(line)
    typer.echo(f"card        {target}")
    if Path(target).resolve() == original.resolve():
        refresh_workdir_outputs(workdir, target, new, "card hashes re-written", "scored")


@app.command()
@guarded
def neural(
    workdir: Annotated[Path, typer.Argument(help="Work directory of a finished run (holds card.json).")],
    metrics: Annotated[list[str], typer.Option(
        "--metric", help="comet22, cometkiwi or xcomet; repeatable or comma-separated.")],
    revision: Annotated[Optional[list[str]], typer.Option(
        "--revision", help="KEY=COMMIT: score with this model revision instead of the pinned one.")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="COMET batch size (recorded).")] = 16,
    device: Annotated[str, typer.Option("--device", help="cpu or cuda (recorded).")] = "cpu",
    comet_python: Annotated[Optional[Path], typer.Option(
        "--comet-python", help="Python of the COMET environment (default: $MTBOARD_COMET_PYTHON, else "
                               ".venv-comet/bin/python).")] = None,
    card_path: Annotated[Optional[Path], typer.Option(
        "--card", help="Card to score (default WORKDIR/card.json).")] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Where to write the card (default: re-write the card in place).")] = None,
) -> None:
    """Score a work directory's stored translations with neural metrics and re-write its card."""
    from mtboard.core import documents
    from mtboard.score.metrics.neural import parse_metrics, parse_revisions
    from mtboard.score.neural_card import score_card

    cpath = card_path or Path(workdir) / "card.json"
    if not cpath.is_file():
        raise ConfigError("no card to score", where=str(cpath),
                          fix="finish the run first (mtboard run … --work-dir WORKDIR) or pass --card")
    keys = parse_metrics(metrics)
    card = documents.load_card(cpath)
    new = score_card(card, keys, revisions=parse_revisions(revision, "--revision"), batch_size=batch_size, device=device,
                     python=comet_python)
    write_scored(new, out or cpath, Path(workdir), cpath)
