"""CLI command: ``mtboard anchor`` (judge reliability against professional MQM annotations; issue 15 part 9)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded


@app.command()
@guarded
def anchor(
    path: Annotated[Path, typer.Argument(help="A WMT MQM annotation TSV (github.com/google/wmt-mqm-human-evaluation, "
                                              "e.g. ted/ende/mqm_ted_ende.tsv); not part of mtboard.")],
    pair: Annotated[str, typer.Option("--pair", help="Language pair of the file, SOURCE-TARGET (e.g. en-de).")],
    judge: Annotated[Optional[list[str]], typer.Option("--judge", help="Judge to measure, KIND=openai:MODEL (repeat "
                                                       "for several; endpoint as for `mtboard judge`).")] = None,
    cells: Annotated[Optional[int], typer.Option("--cells", min=10, help="Seeded sample of this many (system, "
                                                 "segment) cells (default: all).")] = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Folder for the records (the site reads anchors/).")] =
    Path("anchors"),
    repository: Annotated[str, typer.Option(help="Where the file comes from.")] =
    "https://github.com/google/wmt-mqm-human-evaluation",
    commit: Annotated[Optional[str], typer.Option(help="Commit the file was read at.")] = None,
    repo_file: Annotated[Optional[str], typer.Option("--file", help="Path of the file in the repository (default: "
                                                     "the file name).")] = None,
    license: Annotated[str, typer.Option("--license", help="Licence of the annotations (SPDX).")] = "Apache-2.0",
    work_dir: Annotated[Path, typer.Option("--work-dir", help="Judge cache folder.")] = Path("runs/anchors"),
    judge_max_tokens: Annotated[Optional[int], typer.Option("--judge-max-tokens", min=1, help="Output cap per judge "
                                                            "request (default: the judge's).")] = None,
) -> None:
    """Measure chrF++ and LLM judges against professional MQM annotators on the same cells (segment and system
    Kendall τ-b, severity κ, span F1, coverage) and write one record per evaluator for the site's judges page."""
    from mtboard import __version__
    from mtboard.core.documents import atomic_write
    from mtboard.core.canonical import canonical_bytes
    from mtboard.judges.reliability import judge_record_async, load_wmt_mqm, metric_record, select_cells
    from mtboard.judges.run import default_client_factory
    from mtboard.core.languages import language_name
    from mtboard.core.schema import AnchorSource

    src_lang, _, tgt_lang = pair.partition("-")
    data = load_wmt_mqm(path)
    chosen = select_cells(data, cells)
    source = AnchorSource(repository=repository, commit=commit, file=repo_file or path.name, sha256=data.sha256,
                          license=license, citation="Freitag et al. 2021, arXiv:2104.14478", language_pair=pair,
                          selection=(f"{len(chosen)} of {len(data.cells)} cells, seeded sample (seed 20261201)"
                                     if cells else f"all {len(chosen)} cells with a human reference"))
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    records = [metric_record(data, chosen, source)]
    for spec in judge or []:
        records.append(asyncio.run(judge_record_async(
            data, chosen, source, spec, workdir=work_dir, client_factory=default_client_factory,
            source_lang=language_name(src_lang), target_lang=language_name(tgt_lang), max_tokens=judge_max_tokens)))
    out_dir.mkdir(parents=True, exist_ok=True)
    for rec in records:
        rec = rec.model_copy(update={"harness_version": __version__, "created": now})
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{pair}__{len(chosen)}-cells__{rec.evaluator}")[:120] + ".json"
        atomic_write(out_dir / name, canonical_bytes(rec.model_dump(mode="json")) + b"\n")
        f = rec.figures
        tau = "—" if f.segment_kendall_tau is None else f"{f.segment_kendall_tau:.3f}"
        typer.echo(f"{rec.evaluator}: {f.n_valued} of {f.n_cells} cells valued, segment tau {tau} -> "
                   f"{out_dir / name}")
