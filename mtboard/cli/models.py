"""CLI command: ``mtboard models check`` — model records and contamination claims validated like cards (issue 37
item 1).

Every ``models/<slug>.yaml`` is read through the strict schema (:func:`mtboard.inputs.models.read_record`) and bound
to its weights or engine (:func:`mtboard.inputs.binding.bind_record`); every ``contamination/*.yaml`` must name a
record, a dataset of ``corpora/`` and entry ids that dataset has. Each record's fields are printed with their status
(bound, declared, conflict); each problem is one line naming the file, the field and the fix, and any problem exits 1.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, guarded

models_app = typer.Typer(no_args_is_help=True, help="Model records models/<slug>.yaml and contamination claims "
                                                    "(issue 37): check.")
app.add_typer(models_app, name="models")


def _value(v: object) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _corpora(folder: Path) -> list:
    from mtboard.core.documents import load_corpus
    from mtboard.core.errors import MtboardError

    out = []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append(load_corpus(p)[0])
        except MtboardError:
            continue  # a corpus' own problems are `mtboard corpus check`'s
    return out


@models_app.command("check")
@guarded
def check_cmd(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Model records and contamination claims (default: "
                                                          "every models/*.yaml and contamination/*.yaml).")] = None,
    root: Annotated[Path, typer.Option("--root", help="Repository root holding models/, contamination/ and "
                                                      "corpora/.")] = Path("."),
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Corpora folder the claims' datasets must be "
                                                                      "in (default: ROOT/corpora).")] = None,
    cache: Annotated[Optional[Path], typer.Option("--cache", help="Folder for the cache of GGUF facts by SHA-256 "
                                                                  "(default: ~/.cache/mtboard).")] = None,
) -> None:
    """Check model records (schema, slug = file name, bound values against the GGUF or the Debian package) and
    contamination claims (model record, dataset and entry ids exist); print each record's fields as bound, declared
    or conflict; exit 1 with one line per problem (file, field, fix)."""
    from mtboard.core.errors import MtboardError
    from mtboard.inputs.binding import bind_record
    from mtboard.inputs.contamination import check_claims
    from mtboard.inputs.models import (CONTAMINATION_DIR, MODELS_DIR, _yaml_files, link_clashes, read_claim,
                                       read_record)

    if paths:
        todo = list(paths)
    else:
        todo = _yaml_files(root / MODELS_DIR) + _yaml_files(root / CONTAMINATION_DIR)
    record_files = [p for p in todo if p.parent.name != CONTAMINATION_DIR]
    claim_files = [p for p in todo if p.parent.name == CONTAMINATION_DIR]
    problems: list[str] = []
    records = []
    for p in _yaml_files(root / MODELS_DIR):
        with contextlib.suppress(MtboardError):  # an unreadable record is reported below when it is checked
            records.append(read_record(p))
    clashes = link_clashes(records)  # across every record under models/, as the build sees them
    def read(reader, path: Path):
        """The file through ``reader``, or None with its one-line problem recorded."""
        try:
            return reader(path)
        except MtboardError as exc:
            problems.append(exc.one_line())
            return None

    for p in record_files:
        if (record := read(read_record, p)) is None:
            continue
        problems.extend(clashes.get(record.slug, []))
        chk = bind_record(record, cache)
        typer.echo(f"{p}: {record.kind} {record.name!r}" + (" REFUSED" if chk.refused else ""))
        for f in chk.fields:
            shown = f.declared if f.declared is not None else f.bound
            line = f"  {f.field:<22} {f.status:<9} {_value(shown)}"
            if f.status == "bound":
                line += f"  [read from {f.source}]"
            elif f.status == "conflict":
                line += f"  [bound {_value(f.bound)} from {f.source}]"
            elif f.bound is not None:
                line += f"  [{_value(f.bound)} from {f.source}]"
            typer.echo(line)
        for note in chk.notes:
            typer.echo(f"  note: {note}")
        problems.extend(f"{p}: {c} (fix: correct the record's value, or the weights file it names)"
                        for c in chk.conflicts)
    if claim_files:
        corpus_list = _corpora(corpora if corpora is not None else root / "corpora")
        for p in claim_files:
            if (claim := read(read_claim, p)) is None:
                continue
            # the checks the build applies (one place: mtboard.inputs.contamination.check_claims)
            found = check_claims([(str(p), claim)], records, corpus_list)
            problems.extend(found)
            typer.echo(f"{p}: claim that {claim.model} saw {claim.dataset} ({claim.status})"
                       + (" REFUSED" if found else ""))
    for line in problems:
        typer.echo(f"error: {line}", err=True)
    n_rec, n_claim = len(record_files), len(claim_files)
    typer.echo(f"{n_rec} model record(s), {n_claim} contamination claim(s): "
               + (f"{len(problems)} problem(s)" if problems else "all valid"))
    if problems:
        raise typer.Exit(1)
