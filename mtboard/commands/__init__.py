"""CLI command modules. Each registers its commands on ``mtboard.cli.app`` (the CLI layer: the only code that prints).

One module per area so that areas evolve independently: corpus, run, judge, validate (validate/submit/verify),
site (build), doctor.
"""

from pathlib import Path


def refresh_workdir_outputs(workdir: Path, target: Path, new, report_note: str, card_word: str) -> None:  # noqa: ANN001
    """After a command re-seals the work directory's own card (``mtboard judge``, ``mtboard neural``): bring
    report.md's card lines and the PR body file in step with ``new`` and print what changed. ``report_note`` says what
    report.md re-wrote; ``card_word`` names the new card in the "run `mtboard submit` again" hint."""
    import typer

    from mtboard.report import REPORT, rejudge_report
    from mtboard.submit import refresh_body_file

    if rejudge_report(workdir / REPORT, new):
        typer.echo(f"report      {workdir / REPORT}  ({report_note})")
    removed, body = refresh_body_file(Path(target), new, Path("."))
    if body is not None:
        typer.echo(f"pr body     {body}" + (f"  (replaces {', '.join(p.name for p in removed)}; run `mtboard "
                                           f"submit` again for the {card_word} card)" if removed else ""))
