"""``mtboard submit``: validate a card, copy it to its canonical path under ``submissions/``, print the PR commands.

Canonical path (issue 6): ``submissions/<dataset id>/<model-slug>__<condition>__<first 12 hex of run_card_hash>.json``
with allow-listed characters only (:func:`mtboard.validate.canonical_relpath`). A card whose run_card_hash is already
anywhere under ``submissions/`` is refused (duplicate). The bytes copied are exactly the bytes validated (read once).
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mtboard.core import safejson
from mtboard.backends.base import BUILTIN_BACKENDS
from mtboard.core.schema import RunCard
from mtboard.core.documents import atomic_write, loads_card
from mtboard.core.errors import InputError
from mtboard.core.fmt import fold_lines, md_cell
from mtboard.validate import (MAX_CARD_BYTES, SUBMISSIONS_DIR, VERIFICATION_SUFFIX, CardReport, Context,
                              canonical_relpath, iter_card_paths, validate_bytes)
from mtboard.validate.copies import find_copies, outputs_of
from mtboard.validate.report import GateOutcome, Problem, gate_markdown, safe_name, warnings_markdown


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
    body: str = ""
    """The pull-request body: ``.github/PULL_REQUEST_TEMPLATE.md`` filled from the card (:func:`pr_body`)."""
    body_path: Path | None = None
    """Where the body was written (``gh pr create --body-file``); None on a dry run."""
    unranked: str | None = None
    """The warning for a ``--limit`` card (listed unranked), else None."""


def _rel(path: Path, sub: Path) -> str:
    """``submissions/…``: the repository-relative path of ``path`` under the submissions folder ``sub`` (the checkout's,
    or the staging copy :func:`mtboard.sweeps.collect.collect` files into)."""
    return f"{SUBMISSIONS_DIR}/{path.relative_to(sub).as_posix()}"


def find_by_hash(root: Path, run_card_hash: str, *, submissions: Path | None = None) -> str | None:
    """Repository-relative path of a submitted card with this run_card_hash, or None.

    Reads only regular files under ``submissions/`` (``submissions``: that folder instead of ``root/submissions``;
    safe JSON; unreadable files are ignored here — ``mtboard validate`` reports them).
    """
    sub = submissions if submissions is not None else root / SUBMISSIONS_DIR
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
            return _rel(p, sub)
    return None


def pr_commands(relpath: str, dataset_id: str, model_slug_part: str, condition_part: str, hash12: str,
                body_file: str = ".github/PULL_REQUEST_TEMPLATE.md") -> list[str]:
    """git/gh commands for the pull request; every interpolated value is allow-listed and shell-quoted."""
    branch = f"submit/{dataset_id}/{hash12}"
    title = f"Submission: {model_slug_part} ({condition_part}) on {dataset_id}"
    q = shlex.quote
    return [
        f"git switch -c {q(branch)}",
        f"git add {q(relpath)}",
        f"git commit -m {q(title)}",
        f"git push -u origin {q(branch)}",
        f"gh pr create --title {q(title)} --body-file {q(body_file)}",
    ]


TEMPLATE = Path(".github") / "PULL_REQUEST_TEMPLATE.md"
"""The pull-request template, relative to the repository root."""


def _cell(value: object) -> str:
    return md_cell(value)


def _code(value: object) -> str:
    """A value as one Markdown code span on one line: :func:`mtboard.core.fmt.fold_lines` (a CR, NEL, LS or PS in a
    server-reported model id cannot end the list item), fenced with one backtick more than the longest run of
    backticks inside it (CommonMark 0.31.2 §6.1), padded with spaces when it starts or ends with one."""
    text = fold_lines(value)
    longest = max((len(r) for r in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def unranked_warning(card: RunCard) -> str | None:
    """The warning for a card made with ``--limit`` (the leaderboard lists it unranked), else None."""
    if card.method.limit is None:
        return None
    return (f"--limit {card.method.limit}: this card covers only the first {card.dataset.entry_count} entries of "
            "its segment; the leaderboard lists it as unranked (a full run is needed for a rank)")


def pr_body(card: RunCard, template: str | None, gate: GateOutcome | None = None,
            warnings: list[Problem] | None = None) -> str:
    """``.github/PULL_REQUEST_TEMPLATE.md`` filled from the card: the run-card table row, the method spec, the
    prompt, where the method's code lives (a built-in backend), the weights the server reported, the ``--limit``
    warning, and the validation box ticked (``mtboard submit`` just validated the card). What only the contributor
    knows (development entries used in prompts or coaching) stays for them to fill. ``template`` None: a minimal
    body of the same sections. ``gate``: the validator's submission gate for the card (spec §9.1–9.2, §9.5;
    :mod:`mtboard.validate.submission`), appended as a "Submission gate" section listing the rules met and missed.
    ``warnings``: the validator's flags of checks that warn (status ``warn``, e.g. ``variants``), listed under
    "Warnings (the card still validates)" (:func:`mtboard.validate.report.warnings_markdown`)."""
    m = card.method
    row = (f"| {_cell(card.dataset.id)} | {_cell(card.model_slug)} | {_cell(card.condition)} | "
           f"{_cell(card.method_class.value)} | {card.scores.composite:.3f} | {card.run_card_hash[:12]} |")
    code = (f"mtboard's built-in {_code(m.backend)} backend" if m.backend in BUILTIN_BACKENDS
            else f"the {_code(m.backend)} backend plugin (name its package here)")
    weights = [f"model id reported: {_code(card.model_id)}" if card.model_id else None,
               f"weights SHA-256 {_code(m.model_file_sha256)}" if m.model_file_sha256 else None,
               f"revision {_code(m.model_revision)}" if m.model_revision else None,
               f"engine {_code(m.engine_version)}" if m.engine_version else None,
               f"provider {_code(m.api_provider)}" if m.api_provider else None]
    fills = {
        "- Method spec as run": f" {_code(m.spec)}",
        "- Prompt (file under": f" {_code(m.prompt_name)}" if m.prompt_name else " none (the engine takes the source)",
        "- Where the method's code lives": f" {code}",
    }
    text = template if template is not None else (
        "## Run card(s)\n\n| dataset | model slug | condition | method class | composite | run_card_hash (12) |\n"
        "| --- | --- | --- | --- | --- | --- |\n|  |  |  |  |  |  |\n\n## Method\n\n"
        "- Method spec as run (`backend:model[:effort]`):\n- Prompt (file under `prompts/`, or \"none\"):\n"
        "- Development entries used in few-shot prompts or coaching (spec §9.2.2 — declare them, or write "
        "\"none\"):\n- Where the method's code lives (for GDS verification, spec §9.5), or \"not offered\":\n\n"
        "## Checklist\n\n- [ ] `mtboard validate` passes locally on the card(s).\n")
    declared = next((r for r in gate.rules if r.id == "development-use-declared"), None) if gate else None
    if declared is not None and declared.met:
        fills["- Development entries used in few-shot"] = f" {md_cell(declared.detail)} (found by `mtboard validate`)"
    out = []
    for line in text.splitlines():
        if line.replace(" ", "") == "|" * 7:  # the empty row of the run-card table
            line = row
        for prefix, value in fills.items():
            if line.startswith(prefix) and line.rstrip().endswith(":"):
                line = line.rstrip() + value
        if line.startswith("- [ ] `mtboard validate` passes"):
            line = "- [x]" + line[len("- [ ]"):]
        out.append(line)
        if line.startswith("- Where the method's code lives"):
            reported = [w for w in weights if w]
            if reported:
                out.append("- What the server reported about the model: " + "; ".join(reported))
            warning = unranked_warning(card)
            if warning:
                out.append(f"- **Unranked**: {warning}")
    if warnings:
        out += ["", "## Warnings", "", warnings_markdown(warnings).rstrip("\n")]
    if gate is not None:
        out += ["", "## Submission gate (spec §9.1, §9.2, §9.5)", "", gate_markdown(gate).rstrip("\n")]
    return "\n".join(out) + "\n"


def body_file_for(src: Path, root: Path, hash12: str) -> Path:
    """Where ``submit`` writes the pull-request body: next to the submitted card (its work directory), or in the
    temporary folder when the card lies under ``submissions/`` (the body must not become part of the pull
    request)."""
    try:
        src.resolve().relative_to((root / SUBMISSIONS_DIR).resolve())
    except ValueError:
        return src.parent / f"pr-body-{hash12}.md"
    return Path(tempfile.gettempdir()) / f"mtboard-pr-body-{hash12}.md"


def refresh_body_file(card_path: Path, card: RunCard, root: Path) -> tuple[list[Path], Path | None]:
    """After ``mtboard judge`` re-sealed the card at ``card_path``: remove the ``pr-body-HASH12.md`` files next to
    it that name another card hash (``submit`` wrote them for the card before judging) and, when there was one,
    write the body for the new card (the repository's pull-request template under ``root``, as ``submit`` does).

    Returns ``(removed, written)``; ``written`` is None when no body file was there (submit had not run)."""
    hash12 = Path(canonical_relpath(card)).name[: -len(".json")].split("__")[-1]
    new = card_path.parent / f"pr-body-{hash12}.md"
    stale = [p for p in sorted(card_path.parent.glob("pr-body-*.md")) if p != new and p.is_file()]
    for p in stale:
        p.unlink()
    if not stale and not new.is_file():
        return [], None
    template_path = root / TEMPLATE
    template = template_path.read_text(encoding="utf-8") if template_path.is_file() else None
    atomic_write(new, pr_body(card, template).encode("utf-8"))
    return stale, new


def submit_card(card_path: str | os.PathLike[str], ctx: Context, *, dry_run: bool = False,
                submissions: Path | None = None) -> Submission:
    """Validate ``card_path`` and copy it to its canonical path under ``ctx.root``.

    ``submissions``: the folder to file into and to check duplicates and copies against, instead of
    ``ctx.root/submissions`` (``mtboard sweep collect`` files every card into a staging copy that is swapped in whole,
    :mod:`mtboard.core.publish`). The returned ``relpath`` is ``submissions/…`` either way.

    Every write is atomic (:func:`mtboard.core.documents.atomic_write`) and the card is written last, so a process
    killed at any point leaves either no card (the same command runs again) or the whole card and its body file
    (issue 34 item 1).

    Raises:
        SubmissionError: the card fails validation (message lists the failing checks), a card with the same
            run_card_hash is already submitted, or a different file occupies the destination.
        InputError: the file is unsafe to read (symlink, special file, too large).
        StorageError: the card or the PR body file cannot be written (a full disk, a read-only file system …),
            naming the file; nothing is left behind (a card copied before its body file failed is removed), so the
            same command runs again once the fault is fixed.
    """
    src = Path(card_path)
    raw = safejson.read_bytes(src, max_bytes=MAX_CARD_BYTES)
    where = safe_name(str(src))
    report = validate_bytes(raw, where, ctx, relpath=None)
    if not report.ok:
        failing = sorted({p.check for p in report.problems})
        first = report.problems[0]  # the file, field and problem (with its fix) of the first failure
        more = f"; {len(report.problems) - 1} more problem(s)" if len(report.problems) > 1 else ""
        raise SubmissionError(f"card fails validation ({', '.join(failing)}): {first.field or first.check}: "
                              f"{first.message}{more}; run `mtboard validate {where}` for the per-check report",
                              where=where)
    card = loads_card(raw, where)
    rel = canonical_relpath(card)
    sub = submissions if submissions is not None else ctx.root / SUBMISSIONS_DIR
    existing = find_by_hash(ctx.root, card.run_card_hash, submissions=sub)
    if existing is not None:
        raise SubmissionError(f"already submitted as {existing} (same run_card_hash)", where=where,
                              fix="nothing to do; a re-run with a new run_id makes a new card")
    dest = sub / Path(rel).relative_to(SUBMISSIONS_DIR)
    if dest.exists() or dest.is_symlink():
        raise SubmissionError(f"{rel} exists with different content", where=where,
                              fix="remove or rename the file at the destination")
    copies = check_copies_of(card, where, ctx, submissions=sub)
    if copies:
        raise SubmissionError(f"flagged as a copy: {copies[0].message}", where=where,
                              fix="submit your own outputs; a reproduction of another card keeps its model identity")
    same = _same_fingerprint(sub, card.fingerprint.hash, card.run_card_hash)
    name = Path(rel).name[: -len(".json")]
    model_part, condition_part, hash12 = name.split("__")
    template_path = ctx.root / TEMPLATE
    template = template_path.read_text(encoding="utf-8") if template_path.is_file() else None
    body = pr_body(card, template, report.gate, report.warnings)
    body_path = body_file_for(src, ctx.root, hash12)
    if not dry_run:
        # the body first, the card last: the card is what makes the submission (a second run says "already
        # submitted"), so no kill or fault can leave a card without its body file
        had_body = body_path.exists()
        atomic_write(body_path, body.encode("utf-8"))
        try:
            atomic_write(dest, raw)
        except BaseException:  # a full disk …: take the new body back, so the same command can simply run again
            if not had_body:
                body_path.unlink(missing_ok=True)
            raise
    return Submission(relpath=rel, path=dest.absolute(), report=report,
                      commands=pr_commands(rel, card.dataset.id, model_part, condition_part, hash12,
                                           str(body_path)),
                      same_fingerprint=same, body=body, body_path=None if dry_run else body_path,
                      unranked=unranked_warning(card))


def check_copies_of(card: RunCard, where: str, ctx: Context, *, submissions: Path | None = None) -> list[Problem]:
    """``copies`` problems of ``card`` against every card already under ``submissions/`` (``submissions``: that folder
    instead of ``ctx.root/submissions``; what CI's repository check will say): a card whose outputs are another model
    identity's is flagged before it is copied."""
    sub = submissions if submissions is not None else ctx.root / SUBMISSIONS_DIR
    mine = outputs_of(where, card)
    theirs = []
    for p in iter_card_paths([sub]) if sub.is_dir() else []:
        if p.name.endswith(VERIFICATION_SUFFIX) or p.is_symlink():
            continue
        try:
            theirs.append(outputs_of(_rel(p, sub), loads_card(safejson.read_bytes(p), str(p))))
        except InputError:
            continue
    return find_copies([mine, *theirs], {where})


def _same_fingerprint(sub: Path, fingerprint_hash: str, run_card_hash: str) -> list[str]:
    """Repository-relative paths of cards in the submissions folder ``sub`` whose fingerprint hash equals
    ``fingerprint_hash``."""
    found = []
    for path in sorted(sub.glob("*/*.json")):
        if path.name.endswith(VERIFICATION_SUFFIX) or path.is_symlink():
            continue
        try:
            data = safejson.load_file(path)
        except InputError:
            continue
        fp = data.get("fingerprint") if isinstance(data, dict) else None
        if isinstance(fp, dict) and fp.get("hash") == fingerprint_hash and data.get("run_card_hash") != run_card_hash:
            found.append(_rel(path, sub))
    return found
