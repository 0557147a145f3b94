"""``mtboard submit``: validate a card, copy it to its canonical path under ``submissions/``, print the PR commands.

Canonical path (issue 6): ``submissions/<dataset id>/<model-slug>__<condition>__<first 12 hex of run_card_hash>.json``
with allow-listed characters only (:func:`mtboard.validate.canonical_relpath`). A card whose run_card_hash is already
anywhere under ``submissions/`` is refused (duplicate). The bytes copied are exactly the bytes validated (read once).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mtboard import safejson
from mtboard.documents import atomic_write, loads_card
from mtboard.errors import InputError
from mtboard.validate import (MAX_CARD_BYTES, SUBMISSIONS_DIR, VERIFICATION_SUFFIX, CardReport, Context,
                              canonical_relpath, iter_card_paths, validate_bytes)
from mtboard.schema import RunCard
from mtboard.validate.copies import find_copies, outputs_of
from mtboard.validate.report import Problem, safe_name


class SubmissionError(InputError):
    """The card cannot be submitted (invalid, duplicate, or the destination is taken)."""


@dataclass
class Submission:
    """Outcome of :func:`submit_card`."""

    relpath: str
    """Repository-relative canonical path the card was copied to."""
    path: Path
    """Absolute destination path."""
    report: CardReport
    """The validation report (all checks passed)."""
    commands: list[str]
    """Shell commands (already quoted) that open the pull request with git and the GitHub CLI."""
    same_fingerprint: list[str] = field(default_factory=list)
    """Already submitted cards with the same fingerprint (the same experiment run again): allowed, but shown so
    the contributor knows the board will show both rows."""


def find_by_hash(root: Path, run_card_hash: str) -> str | None:
    """Repository-relative path of a submitted card with this run_card_hash, or None.

    Reads only regular files under ``submissions/`` (safe JSON; unreadable files are ignored here — ``mtboard
    validate`` reports them).
    """
    sub = root / SUBMISSIONS_DIR
    if not sub.is_dir():
        return None
    for p in iter_card_paths([sub]):
        if p.name.endswith(VERIFICATION_SUFFIX):
            continue
        try:  # every file, not only names ending in the hash prefix: a misnamed copy is still a duplicate
            data = safejson.load_file(p)
        except InputError:
            continue
        if isinstance(data, dict) and data.get("run_card_hash") == run_card_hash:
            return p.relative_to(root).as_posix()
    return None


def pr_commands(relpath: str, dataset_id: str, model_slug_part: str, condition_part: str, hash12: str) -> list[str]:
    """git/gh commands for the pull request; every interpolated value is allow-listed and shell-quoted."""
    branch = f"submit/{dataset_id}/{hash12}"
    title = f"Submission: {model_slug_part} ({condition_part}) on {dataset_id}"
    q = shlex.quote
    return [
        f"git switch -c {q(branch)}",
        f"git add {q(relpath)}",
        f"git commit -m {q(title)}",
        f"git push -u origin {q(branch)}",
        f"gh pr create --title {q(title)} --body-file .github/PULL_REQUEST_TEMPLATE.md",
    ]


def submit_card(card_path: str | os.PathLike[str], ctx: Context, *, dry_run: bool = False) -> Submission:
    """Validate ``card_path`` and copy it to its canonical path under ``ctx.root``.

    Raises:
        SubmissionError: the card fails validation (message lists the failing checks), a card with the same
            run_card_hash is already submitted, or a different file occupies the destination.
        InputError: the file is unsafe to read (symlink, special file, too large).
    """
    src = Path(card_path)
    raw = safejson.read_bytes(src, max_bytes=MAX_CARD_BYTES)
    where = safe_name(str(src))
    report = validate_bytes(raw, where, ctx, relpath=None)
    if not report.ok:
        failing = sorted({p.check for p in report.problems})
        raise SubmissionError(f"card fails validation ({', '.join(failing)}); run `mtboard validate {where}` for "
                              "the per-check report", where=where)
    card = loads_card(raw, where)
    rel = canonical_relpath(card)
    existing = find_by_hash(ctx.root, card.run_card_hash)
    if existing is not None:
        raise SubmissionError(f"already submitted as {existing} (same run_card_hash)", where=where,
                              fix="nothing to do; a re-run with a new run_id makes a new card")
    dest = ctx.root / rel
    if dest.exists() or dest.is_symlink():
        raise SubmissionError(f"{rel} exists with different content", where=where,
                              fix="remove or rename the file at the destination")
    copies = check_copies_of(card, where, ctx)
    if copies:
        raise SubmissionError(f"flagged as a copy: {copies[0].message}", where=where,
                              fix="submit your own outputs; a reproduction of another card keeps its model identity")
    same = _same_fingerprint(ctx.root, card.fingerprint.hash, card.run_card_hash)
    if not dry_run:
        atomic_write(dest, raw)
    name = Path(rel).name[: -len(".json")]
    model_part, condition_part, hash12 = name.split("__")
    return Submission(relpath=rel, path=dest.absolute(), report=report,
                      commands=pr_commands(rel, card.dataset.id, model_part, condition_part, hash12),
                      same_fingerprint=same)


def check_copies_of(card: RunCard, where: str, ctx: Context) -> list[Problem]:
    """``copies`` problems of ``card`` against every card already under ``submissions/`` (what CI's repository check
    will say): a card whose outputs are another model identity's is flagged before it is copied."""
    sub = ctx.root / SUBMISSIONS_DIR
    mine = outputs_of(where, card)
    theirs = []
    for p in iter_card_paths([sub]) if sub.is_dir() else []:
        if p.name.endswith(VERIFICATION_SUFFIX) or p.is_symlink():
            continue
        try:
            theirs.append(outputs_of(p.relative_to(ctx.root).as_posix(), loads_card(safejson.read_bytes(p), str(p))))
        except InputError:
            continue
    return find_copies([mine, *theirs], {where})


def _same_fingerprint(root: Path, fingerprint_hash: str, run_card_hash: str) -> list[str]:
    """Repository-relative paths of submitted cards whose fingerprint hash equals ``fingerprint_hash``."""
    found = []
    for path in sorted((root / SUBMISSIONS_DIR).glob("*/*.json")):
        if path.name.endswith(VERIFICATION_SUFFIX) or path.is_symlink():
            continue
        try:
            data = safejson.load_file(path)
        except InputError:
            continue
        fp = data.get("fingerprint") if isinstance(data, dict) else None
        if isinstance(fp, dict) and fp.get("hash") == fingerprint_hash and data.get("run_card_hash") != run_card_hash:
            found.append(path.relative_to(root).as_posix())
    return found
