"""CLI command: ``mtboard rescore`` (re-score a card's stored outputs under this harness)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded


@app.command()
@guarded
def rescore(
    card: Annotated[Path, typer.Argument(help="Sealed run card whose stored outputs are re-scored.")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Where to write the re-scored card (default: "
                                                "<stem>.rescored.json next to the input).")] = None,
    corpora: Annotated[Path, typer.Option("--corpora", help="Folder of corpus files.")] = Path("corpora"),
) -> None:
    """Re-score a card's stored outputs under this harness version (no translation): mechanical policy, metrics,
    replicate statistics, totals, fingerprint and seal; run id, timestamp and elapsed time stay the card's."""
    from mtboard.core.documents import write_card
    from mtboard.run.rescore import rescore_card

    new = rescore_card(card, corpora_dir=corpora)
    dest = out or card.with_name(card.name.removesuffix(".json") + ".rescored.json")
    write_card(new, dest)
    typer.echo(f"re-scored under harness {new.harness_version}: chrF++ {new.scores.chrf_plus_plus:.2f}, composite "
               f"{new.scores.composite:.4f}")
    typer.echo(f"card: {dest} (`mtboard submit {dest}` places it under submissions/)")
