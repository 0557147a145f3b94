"""The collect step of ``.github/workflows/sweep.yml`` (``mtboard sweep collect``): the cards the matrix jobs
uploaded, downloaded by ``actions/download-artifact`` into one folder per artifact (``DIR/sweep-card-CELL/card.json``,
its layout without ``merge-multiple``), are checked against the sweep's plan, validated with the validator that runs
(the base branch's, installed by the workflow) and copied to their canonical paths under ``submissions/``
(:func:`mtboard.run.submit.submit_card`), ready for one pull request.

A card is refused when its artifact folder is a symbolic link (or its ``card.json`` is; :mod:`mtboard.core.paths`:
nothing is followed out of the downloaded folder), when it names no cell of the sweep, when it is not the run its cell planned (dataset,
method, condition, temperature, entries, replicates), or when it fails validation; a cell without an artifact (its
job failed) is reported as missing. Nothing here runs a model or reads a secret.

All or nothing: every card is checked and validated first (:func:`mtboard.run.submit.submit_card` with ``dry_run``); only
when none is refused are they copied to ``ROOT/submissions/`` (``ROOT``: ``--root``, else the checkout holding the
sweep file, :func:`mtboard.sweeps.spec.find_root`). So ``mtboard sweep collect`` exits 0 with every accepted card
filed, or 1 with the count of refused folders and nothing filed (the accepted ones are listed as held) — never a
half-filed pull request, also when the process is killed: the cards are filed into a staging copy of
``submissions/`` that replaces it in one rename (:mod:`mtboard.core.publish`, issue 34 item 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core.fmt import fold_lines, md_cell
from mtboard.core import paths, publish, safejson
from mtboard.backends import get_backend, parse_method
from mtboard.core.documents import loads_card
from mtboard.core.errors import InputError, MtboardError
from mtboard.run.submit import find_by_hash, submit_card
from mtboard.sweeps.cells import Cell
from mtboard.sweeps.spec import Sweep
from mtboard.validate import MAX_CARD_BYTES, SUBMISSIONS_DIR

ARTIFACT_PREFIX = "sweep-card-"
"""Artifact name of a cell's card: ``sweep-card-CELL_ID`` (the matrix job uploads ``card.json`` under it)."""
_ARTIFACT = re.compile(r"^sweep-card-([0-9a-f]{12})$")


@dataclass
class Collected:
    """The collect step's outcome: cards filed (repository-relative paths), refused cards (folder, reason), the
    ids of cells with no artifact, and the cards that were already in ``submissions/``."""

    filed: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    """Artifact folders whose cards passed every check but were not filed because others were refused."""
    folders: int = 0
    """Folders in the downloaded artifacts folder."""

    @property
    def ok(self) -> bool:
        return not self.refused

    def as_dict(self) -> dict[str, Any]:
        return {"filed": self.filed, "already": self.already, "refused": [list(r) for r in self.refused],
                "missing": self.missing, "held": self.held}


def mismatch(cell: Cell, card: Any) -> str | None:
    """Why ``card`` is not the run ``cell`` planned (None when it is): the dataset id, the published method, the
    condition, the temperature, the entries covered, the replicates and the corpus view (arm, history) must be the
    cell's."""

    spec = parse_method(cell.method)
    public = spec.with_model(get_backend(spec.backend).public_model(spec.model)).text
    checks = [("dataset.id", card.dataset.id, cell.dataset_id), ("method.spec", card.method.spec, public),
              ("condition", card.condition, cell.condition), ("temperature", card.temperature, cell.temperature),
              ("dataset.entry_count", card.dataset.entry_count, cell.entries), ("method.runs", card.method.runs,
                                                                                cell.runs),
              ("method.limit", card.method.limit, cell.limit), ("method.arm", card.method.arm, cell.arm),
              ("method.history", card.method.history, cell.history)]
    for name, got, want in checks:
        if got != want:
            return f"{name} is {got!r}, the cell planned {want!r}"
    return None


def _unsafe_folder(downloaded: Path, name: str) -> str | None:
    """Why the artifact folder ``downloaded/name`` is not read (None when it is a real folder):
    ``"kind"`` for a file, else the one-line refusal of :func:`mtboard.core.paths.resolve_inside` (a symbolic link,
    which ``actions/download-artifact`` never makes: a link there points wherever its maker chose)."""
    try:
        paths.resolve_inside(downloaded, name, kind="dir", where=str(downloaded),
                             root_name="the downloaded artifacts folder")
    except paths.PathRefused as exc:
        return "kind" if exc.reason == "kind" else exc.one_line()
    except paths.PathMissing as exc:  # gone since the listing
        return exc.one_line()
    return None


def collect(sweep: Sweep, downloaded: Path, ctx: Any) -> Collected:
    """Check, validate and file every ``downloaded/sweep-card-ID/card.json`` (module docstring) under
    ``ctx.root/submissions``. Raises: InputError when ``downloaded`` is not a folder."""

    if not downloaded.is_dir():
        raise InputError("the downloaded artifacts folder does not exist", where=str(downloaded),
                         fix="pass the folder actions/download-artifact wrote (one sub-folder per artifact)")
    cells = {c.id: c for c in sweep.cells}
    out = Collected()
    seen: set[str] = set()
    accepted: list[Path] = []
    folders = sorted(p for p in downloaded.iterdir())
    out.folders = len(folders)
    for folder in folders:
        m = _ARTIFACT.match(folder.name)
        refused = _unsafe_folder(downloaded, folder.name) if m is not None else None
        if m is None or refused == "kind":
            out.refused.append((folder.name, f"not a {ARTIFACT_PREFIX}CELL_ID artifact folder"))
            continue
        if refused is not None:  # a symbolic link in place of the folder: never followed (issue 34 item 4)
            out.refused.append((folder.name, refused))
            continue
        cid = m.group(1)
        if cid not in cells:
            out.refused.append((folder.name, f"no cell {cid} in sweep {sweep.name}"))
            continue
        path = folder / "card.json"
        try:  # the card through the folder, each component opened without following a link
            raw = paths.read_inside(downloaded, f"{folder.name}/card.json", max_bytes=MAX_CARD_BYTES,
                                    where=str(downloaded), root_name="the downloaded artifacts folder")
            card = loads_card(raw, str(path))
        except MtboardError as exc:
            out.refused.append((folder.name, exc.one_line()))
            continue
        why = mismatch(cells[cid], card)
        if why:
            out.refused.append((folder.name, f"not the planned run: {why}"))
            continue
        seen.add(cid)
        existing = find_by_hash(ctx.root, card.run_card_hash)
        if existing is not None:
            out.already.append(existing)
            continue
        try:
            submit_card(path, ctx, dry_run=True)  # validation and the destination checks, nothing written
        except MtboardError as exc:
            out.refused.append((folder.name, exc.one_line()))
            continue
        accepted.append(folder)
    if out.refused:
        out.held = [f.name for f in accepted]
    elif accepted:
        # every card goes into a copy of submissions/ that is swapped in whole (issue 34 item 1): a collect that
        # fails, is cancelled or is killed files nothing, never a part
        with publish.staged(ctx.root / SUBMISSIONS_DIR, seed=True) as stage:
            for folder in accepted:
                try:
                    sub = submit_card(folder / "card.json", ctx, submissions=stage.path)
                except MtboardError as exc:  # e.g. two artifacts holding copies of one run: the second is refused
                    out.refused.append((folder.name, exc.one_line()))
                    continue
                out.filed.append(sub.relpath)
            if out.refused:  # all or nothing: the others are held, the staging copy dropped
                refused = {name for name, _ in out.refused}
                out.held, out.filed = [f.name for f in accepted if f.name not in refused], []
                stage.discard()
        for folder in accepted:
            for stray in folder.glob("pr-body-*.md"):  # submit_card's PR body, next to the card: not in the PR
                stray.unlink()
    out.missing = [c.id for c in sweep.cells if c.id not in seen and not any(
        r[0] == ARTIFACT_PREFIX + c.id for r in out.refused)]
    return out


def code_span(value: object) -> str:
    """``value`` as one Markdown code span that no text can break (CommonMark 0.31 §6.1 "Code spans"): on one line
    (:func:`mtboard.core.fmt.fold_lines`), fenced by one more backtick than its longest run of backticks, with a space
    inside each fence when the text starts or ends with a backtick (or is blank), since one leading and one trailing
    space are stripped. ``"a`b"`` → ``"``a`b``"``; ``"`x"`` → ``"`` `x ``"``; ``""`` → ``"`  `"``
    (second review of issue 33, finding 11: an artifact folder named with a backtick broke the "Refused" list)."""
    text = fold_lines(value)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    if not text.strip(" ") or text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def pr_body(sweep: Sweep, result: Collected) -> str:
    """The pull request's body (Markdown): the sweep, the cards filed and what is missing or refused. Every name and
    path is a :func:`code_span`, every reason an :func:`mtboard.core.fmt.md_cell`."""
    lines = [f"Sweep {code_span(sweep.name)} ({code_span(sweep.path.as_posix())}, sha256 "
             f"{code_span(sweep.sha256[:12])}): {len(result.filed)} new card(s), validated with the base branch's "
             "validator.", ""]
    lines += [f"- {code_span(p)}" for p in result.filed]
    if result.already:
        lines += ["", f"Already submitted: {len(result.already)}."]
    if result.missing:
        lines += ["", "Cells without a card (their job failed or was cancelled): "
                  + ", ".join(code_span(c) for c in result.missing)]
    if result.refused:
        # an artifact's name and the refusal (it may quote a file) stay on one line (issue 33 item 6)
        lines += ["", "Refused:"] + [f"- {code_span(name)}: {md_cell(why)}" for name, why in result.refused]
    return "\n".join(lines) + "\n"


__all__ = ["ARTIFACT_PREFIX", "Collected", "code_span", "collect", "mismatch", "pr_body"]
