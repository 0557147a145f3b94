"""CLI commands: ``mtboard canary sets`` and ``mtboard canary run`` — drift canaries (issue 38 item 3).

``sets`` checks ``canaries/sets.yaml`` against the corpora (``--write`` adds a set for each corpus without one, never
changing a set already there: :mod:`mtboard.inputs.canaries`); ``run`` re-runs an ``openai:`` card on its pair's
canary entries and adds one record to ``canaries/history/`` (:mod:`mtboard.verify.canary`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, fail, guarded

canary_app = typer.Typer(no_args_is_help=True, help="Drift canaries: fixed canary sets per language pair "
                         "(canaries/sets.yaml) and canary runs of API models (canaries/history/).")
app.add_typer(canary_app, name="canary")


@canary_app.command("sets")
@guarded
def sets_cmd(
    root: Annotated[Path, typer.Option("--root", help="Repository root holding canaries/ and corpora/.")] = Path("."),
    write: Annotated[bool, typer.Option("--write", help="Add a set for each corpus that has none (rule "
                                        "stratified-v1) and write the file; sets already there are kept as "
                                        "they are.")] = False,
) -> None:
    """Check canaries/sets.yaml against corpora/ (exit 1 with one line per problem: a corpus missing or changed
    since its set was chosen, an entry not in its development segment); --write adds the missing sets."""
    from mtboard.inputs import canaries as c

    corpora, warnings = c.load_corpora(root / "corpora")
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    path = root / c.SETS_FILE
    if write:
        current = c.read_sets(path) if path.exists() else None
        sets, added = c.updated_sets(current, corpora)
        c.write_sets(path, sets)
        typer.echo(f"{c.SETS_FILE}: {len(sets.sets)} sets" + (f"; added {', '.join(added)}" if added else
                                                              "; none added"))
        return
    sets = c.read_sets(path)
    problems = c.check_sets(sets, corpora)
    missing = sorted({f"{k.corpus.dataset.id}@{k.corpus.dataset.version}" for k in corpora}
                     - {f"{s.dataset_id}@{s.version}" for s in sets.sets})
    for line in problems:
        typer.echo(line, err=True)
    if missing:
        typer.echo(f"{c.SETS_FILE}: no set for {', '.join(missing)} (fix: `mtboard canary sets --write`)", err=True)
    if problems or missing:
        raise typer.Exit(1)
    typer.echo(f"{c.SETS_FILE}: {len(sets.sets)} sets hold ({sum(len(s.entry_ids) for s in sets.sets)} entries)")


@canary_app.command("list")
@guarded
def list_cmd(
    root: Annotated[Path, typer.Option("--root", help="Repository root holding submissions/ and canaries/.")]
    = Path("."),
) -> None:
    """Print, one per line, the committed openai: cards that canary runs are for (sealed, a whole development
    segment of a corpus with a canary set); on stderr, why each other openai: card is left out. Sends nothing."""
    from mtboard.verify.canary import canary_cards

    found, skipped = canary_cards(root)
    for line in skipped:
        typer.echo(f"skipped: {line}", err=True)
    for path in found:
        typer.echo(path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path))


@canary_app.command("run")
@guarded
def run_cmd(
    card: Annotated[Path, typer.Argument(help="A sealed openai: run card of a whole development segment.")],
    root: Annotated[Path, typer.Option("--root", help="Repository root holding canaries/ and corpora/.")] = Path("."),
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Corpora folder (default ROOT/corpora).")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint (default "
                                                    "$OPENAI_BASE_URL, then OpenAI's); never written.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Run and print, but write no record.")] = False,
) -> None:
    """Re-run an API model's card on its language pair's canary entries with the card's settings, score them as any
    run is scored, and add one record to canaries/history/ (date, card fingerprint, served model, composite and
    chrF++ on the canary entries, outputs hash; no key, no URL, no text). Says whether the composite lies outside the
    card's 95% bootstrap CI on the same entries (the ledger marks the row drifted by the same rule)."""
    from mtboard.cli.run import progress_sink
    from mtboard.core.fmt import ci, num
    from mtboard.verify.canary import run_canary

    res = run_canary(card, root=root, corpora_dir=corpora, base_url=base_url, write=not dry_run,
                     progress=progress_sink(f"canary {card.name}", None))
    r, ref = res.run, res.reference
    typer.echo(f"canary {r.dataset_id} v{r.version}, {len(r.entry_ids)} entries: composite {num(r.composite, 3)}, "
               f"chrF++ {num(r.chrf_plus_plus, 1)}; served {r.served.model_id or r.served.model_slug}")
    typer.echo(f"the card on the same entries: {num(ref.composite, 3)} {ci(ref.ci, 3)} -> "
               + ("OUTSIDE the CI: the model drifted" if res.outside else "inside the CI: no drift"))
    if r.served_note:
        typer.echo(f"note: {r.served_note}")
    if res.path is not None:
        typer.echo(f"record: {res.path}")
    elif not dry_run:  # pragma: no cover - write=True always gives a path
        fail("no record written")
