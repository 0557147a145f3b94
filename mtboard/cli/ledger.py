"""CLI command: ``mtboard ledger`` — the board's standings from the command line (issue 31 item 5).

A maintainer answers "why is this row ◐?" without a browser: the same ledger the site renders
(:func:`mtboard.ledger.build.build_ledger`, :mod:`mtboard.ledger.document`), read from the same folders ``mtboard
build`` reads.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from mtboard.cli.app import app, guarded, output_console
from mtboard.core.errors import InputError
from mtboard.core.names import json_visible


def _find_row(doc, board: str | None, row: str):
    """Rows whose fingerprint starts with ``row``, or that have a member card with that path, or whose run page id
    starts with ``row`` (8 characters at least: the site shows run ids as 8)."""
    found = []
    for b in doc.boards:
        if board is not None and b.key != board:
            continue
        for r in b.rows:
            page_ids = [m.page.rsplit("/", 1)[-1][:-len(".html")] for m in r.members]
            if r.fingerprint.startswith(row.lower()) or any(m.card == row for m in r.members) or (
                    len(row) >= 8 and any(p.startswith(row.lower()) for p in page_ids)):
                found.append((b, r))
    return found


def _print_board(console, b) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{b.key} · {b.language_pair} · segment {b.segment} · {b.ranked_entries} ranked entries")
    for col in ("rank", "method", "temp.", "tier", "reproduction", "coverage", "declared", "fingerprint"):
        table.add_column(col)
    for r in b.rows:
        rank = r.ranks[0].rank if r.ranks else "unranked"
        temp = "—" if r.temperature is None else f"{r.temperature:g}"
        table.add_row(escape(rank), escape(r.method), temp, escape(r.tier_label),
                      escape(r.reproduction.text or "1 card"), escape(r.coverage.text), "yes" if r.declared else "no",
                      r.fingerprint[:16])
    console.print(table)


def _print_row(b, r) -> None:
    lines = [f"board        {b.key} ({b.language_pair}, segment {b.segment})",
             f"method       {r.method}" + ("" if r.temperature is None else f" (temperature {r.temperature:g})"),
             f"fingerprint  {r.fingerprint}",
             f"tier         {r.tier_label} ({r.tier})",
             "ranked       " + (r.ranks[0].rank if r.ranked and r.ranks else f"no: {r.unranked_reason}"),
             f"coverage     {r.coverage.text}",
             "declared     " + ("yes: the model identity, settings and date are the contributor's declaration"
                                  if r.declared else "no: a verified re-run confirmed them"),
             f"shown card   {r.representative}",
             f"reproduction {r.reproduction.text or 'one run card'}"
             + (f" (spread {r.reproduction.spread:.4f})" if r.reproduction.spread is not None else "")]
    lines.append("evidence     " + ("none: no member has a passed re-run" if not r.evidence else ""))
    for e in r.evidence:
        lines.append(f"  - {e.tier}: {e.kind} {e.source} about {e.card}"
                     + (f", re-scored from {e.rescored_from[:12]}" if e.rescored_from else "")
                     + (" (attested)" if e.attested else " (not attested)"))
    if r.screen_ready is not None:  # issue 40 item 5
        lines.append(f"screen-ready {r.screen_ready.text} ({r.screen_ready.signature.split('|', 1)[0]})")
    if r.drift is not None:  # issue 38 item 3
        lines.append(f"canaries     {r.drift.text}")
        for pt in r.drift.runs:
            lines.append(f"  - {pt.date}  composite {pt.composite:.4f}  chrF++ {pt.chrf_plus_plus:.2f}  "
                         f"{'outside' if pt.outside else 'inside'}  {pt.path}")
    c = r.context_behaviour
    if c is not None:  # issue 40 item 3
        lines.append(f"context      judge {c.judge}: {c.judged} judged of {c.with_history} entries with history; "
                     f"apart: {c.parse_failed} parse failures, {c.call_failed} call failures, {c.not_sent} not sent; "
                     f"{c.excluded} without history excluded")
        for x in c.labels:
            share = "—" if x.share is None else f"{x.share:.3f}"
            share_ci = "" if x.share_ci is None else f" [{x.share_ci[0]:.3f}, {x.share_ci[1]:.3f}]"
            pen = "—" if x.mean_penalty is None else f"{x.mean_penalty:.2f}"
            pen_ci = "" if x.penalty_ci is None else f" [{x.penalty_ci[0]:.2f}, {x.penalty_ci[1]:.2f}]"
            lines.append(f"  - {x.label:<27} {x.count:>4}  share {share}{share_ci}  mean MQM penalty {pen}{pen_ci}")
    lines.append("members")
    for m in r.members:
        comp = "—" if m.composite is None else f"{m.composite:.4f}"
        lines.append(f"  - {m.card}  {m.timestamp}  composite {comp}  earned {m.earned}")
    typer.echo("\n".join(lines))


@app.command()
@guarded
def ledger(
    board: Annotated[str | None, typer.Argument(help="A board key (leaderboards/<key>.html); none: every board.")] =
    None,
    row: Annotated[str | None, typer.Option("--row", help="One row: a fingerprint (or its first characters), a "
                                                          "member card's path under submissions/, or its run id "
                                                          "(at least its first 8 characters).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ledger (data/ledger.json's shape) as JSON.")] =
    False,
    submissions: Annotated[Path, typer.Option(help="Folder of run cards (searched recursively).")] =
    Path("submissions"),
    corpora: Annotated[Path, typer.Option(help="Folder of corpus files.")] = Path("corpora"),
    validate: Annotated[bool, typer.Option(help="Run the submission validator on each card (as mtboard build).")] =
    True,
    attestation_repository: Annotated[str | None, typer.Option(
        "--attestation-repository", help="owner/name whose verify workflow must have attested verification records "
                                         "(default $MTBOARD_ATTESTATION_REPOSITORY, else $GITHUB_REPOSITORY).")] =
    None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Build cache folder, shared with mtboard build: validation verdicts, resampled scores and "
                        "sentinel lines by content, so what did not change is not computed again (`off`: no "
                        "cache). Default $MTBOARD_CACHE, else .mtboard-cache/ in the project root.")] = None,
) -> None:
    """Print the board ledger: every row's standing (tier and evidence, reproductions, coverage, ranked or not and
    why, declared values), as the site shows it."""
    from mtboard.cli.environment import environment
    from mtboard.cli.site import cache_folder
    from mtboard.ledger import document
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.load import load_inputs
    from mtboard.site.build import project_root

    if not submissions.is_dir():
        raise InputError("submissions folder not found", where=str(submissions), fix="pass --submissions DIR")
    env = environment()
    folder = cache_folder(cache, env.cache)
    inputs = load_inputs(submissions, corpora if corpora.is_dir() else None, validate=validate,
                         attestation_repository=attestation_repository or env.attestation_repository,
                         secret_segment=env.secret_segment,
                         secret_source="$MTBOARD_SECRET_SEGMENT" if env.secret_segment is not None else None,
                         cache=folder)
    for r in inputs.rejected:
        typer.echo(f"warning: rejected {r.path}: {r.problems[0]}", err=True)
    built = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = document.to_document(build_ledger(inputs, cache=folder), built, document.git_commit(project_root()))
    keys = [b.key for b in doc.boards]
    if board is not None and board not in keys:
        raise InputError(f"no board {board!r}", where=str(submissions), field="BOARD",
                         fix=f"use one of: {', '.join(keys) or '(no boards: no valid cards)'}")
    if row is not None:
        found = _find_row(doc, board, row)
        if not found:
            raise InputError(f"no row matches {row!r}", field="--row",
                             fix="give a fingerprint prefix, a card path under submissions/ or a run page id "
                                 "(mtboard ledger BOARD lists them)")
        if len(found) > 1 and len({r.fingerprint for _, r in found}) > 1:
            raise InputError(f"{row!r} matches {len(found)} rows", field="--row",
                             fix="give more characters of the fingerprint, or the board")
        b, r = found[0]
        if as_json:
            typer.echo(json_visible(json.dumps(r.model_dump(mode="json"), ensure_ascii=False, indent=1)))
        else:
            _print_row(b, r)
        return
    if board is not None:
        doc = doc.model_copy(update={"boards": [b for b in doc.boards if b.key == board]})
    if as_json:
        typer.echo(document.dumps(doc), nl=False)
        return
    console = output_console()
    if board is None and doc.state is not None and doc.state.sentence:
        typer.echo(doc.state.sentence)  # the whole board's state in words (issue 34 item 2)
    for b in doc.boards:
        _print_board(console, b)
        if b.state is not None and b.state.sentence:
            typer.echo(b.state.sentence)
