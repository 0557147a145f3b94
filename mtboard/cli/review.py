"""CLI commands: ``mtboard review sample`` and ``mtboard review check`` (community review, spec §7.3; issue 18).

Exit codes: 0 done / every record passed; 1 any problem (one line, never a traceback, never file content).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded

review_app = typer.Typer(no_args_is_help=True, help="Community review of run cards (spec §7.3): sample, check.")
app.add_typer(review_app, name="review")


@review_app.command("sample")
@guarded
def sample_cmd(
    card: Annotated[Path, typer.Argument(help="The run card to review (submissions/<dataset>/<run>.json).")],
    size: Annotated[int, typer.Option("--size", min=1, max=1000, help="Entries to draw (a review that can pass "
                                      "needs at least 30; a card with fewer entries gives all of them).")] = 30,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Sampling seed.")] = 20261201,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Review sheet to write (YAML; default "
                                                "<run>.review-sheet.yaml in the current folder).")] = None,
) -> None:
    """Draw the seeded sample of a card, stratified by domain and difficulty, and write a review sheet: the entries
    to rate (source, reference, output) and the fields the review record must carry."""
    import yaml

    from mtboard.review import community as reviews
    from mtboard.core.documents import atomic_write, load_card

    c = load_card(card)
    data = reviews.sheet(c, f"{c.dataset.id}/{card.name}", size, seed)
    data["how_to"] = ("Rate each entry reject / gist / acceptable / excellent (spec §7.3) on the review page of the "
                      "run, or write reviews/<dataset>/<run>.yaml by hand with: card, run_card_hash, sample_seed, "
                      "sample_size and reviews: [{reviewer, date, ratings: [{entry_id, rating, note}]}]; open it "
                      "as a pull request. Reviewers must be listed in reviews/reviewers.yaml.")
    dest = out or Path(f"{card.name[:-5] if card.name.endswith('.json') else card.name}.review-sheet.yaml")
    atomic_write(dest, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120).encode("utf-8"))
    n = len(data["entries"])
    strata = len({(e["domain"], e["difficulty"]) for e in data["entries"]})
    typer.echo(f"wrote {dest}: {n} entries from {strata} domain × difficulty strata (seed {seed})")
    if data["note"]:
        typer.echo(data["note"])


@review_app.command("check")
@guarded
def check_cmd(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Review records (default: every "
                                                          "reviews/**/*.yaml).")] = None,
    root: Annotated[Path, typer.Option("--root", help="Repository root holding reviews/ and submissions/.")]
    = Path("."),
) -> None:
    """Run the review checks (file, yaml, schema, path, card, entries, sample, reviewers) and print the pooled
    result of each record; exit 1 on any problem."""
    from mtboard.review import community as reviews
    from mtboard.validate.reviews import render_text, review_paths, validate_review

    todo = list(paths) if paths else review_paths(root)
    results = [validate_review(p, root) for p in todo]
    typer.echo(render_text([r for r, _, _ in results]))
    for rep, record, c in results:
        if record is not None and c is not None and rep.accepted:
            s = reviews.summarise(record, rep.accepted)
            counts = ", ".join(f"{k} {v}" for k, v in s.counts.items())
            typer.echo(f"{rep.path}: {s.entries} entries, {s.n_ratings} ratings ({counts}); usable "
                       f"{s.usable:.0%}, reject {s.reject:.0%}; confirms {s.confirms.value if s.confirms else 'no tier'}")
            for a in s.agreement:
                kappa = f"{a.kappa:.2f}" if a.kappa is not None else "undefined"
                typer.echo(f"  agreement {a.a} / {a.b}: {a.n} shared entries, exact {a.exact:.0%}, within one step "
                           f"{a.within_one:.0%}, Cohen's kappa {kappa}")
    if any(not r.ok for r, _, _ in results):
        raise typer.Exit(1)
