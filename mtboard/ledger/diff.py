"""What changed between two ledgers (issue 31 item 4): the changes page, the Atom feed and ``mtboard build``'s summary.

``diff_ledgers(previous, current)`` compares the published ``data/ledger.json`` of the last build with this build's,
row by row (board key + fingerprint): rows added, rows withdrawn, rank changes (whole-segment view), tier changes,
reproductions added (a member card that was not there) and member cards withdrawn. A row whose shown card was
re-scored (``mtboard lineage``/``mtboard rescore``: a new fingerprint, since it names the scorer, whose card names the
old one in ``rescored_from``) is the same row: its change is ``re-scored`` (rank and composite before → after), never
a withdrawn row and a new one (issue 38 item 2). Subset rows (``--limit`` runs,
another entry set) are reported apart from full runs. Each change carries a date: when the card entered the repository
(the first commit adding it, from ``git log``) when the build knows it, else the run's own timestamp.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema.ledger import Ledger, LedgerRow

KINDS = ("new row", "rank change", "re-scored", "tier change", "reproduction added", "card withdrawn", "row withdrawn")
"""Kinds of change, in the order the changes page lists them."""


@dataclass(frozen=True)
class Change:
    """One change of one row."""

    kind: str
    """One of :data:`KINDS`."""
    board: str
    fingerprint: str
    method: str
    subset: bool
    """The row is a subset run (or another entry set): listed apart."""
    before: str
    """The previous value (rank, tier label, members), "" for a new row."""
    after: str
    """The new value, "" for a withdrawn row."""
    date: str
    """ISO 8601 date of the change (git date of the card when known, else the run's timestamp)."""
    date_source: str
    """``git`` (the commit that added the card) or ``run`` (the card's own timestamp)."""
    card: str
    """The card the change is about (the row's shown card, the added or withdrawn member)."""
    page: str | None = None
    """The run page of that card on this build (None when withdrawn)."""


@dataclass
class LedgerDiff:
    previous_build: str | None
    previous_built_at: str | None
    current_build: str
    changes: list[Change] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per change (``mtboard build``'s summary; a pull-request comment)."""
        out = []
        for c in self.changes:
            arrow = f"{c.before} → {c.after}" if c.before and c.after else (c.after or c.before)
            out.append(f"{c.kind}: {c.board} · {c.method}{' (subset)' if c.subset else ''}: {arrow} ({c.date[:10]})")
        return out


def load_previous(path: Path, option: str = "--previous", *, compressed: bool = False) -> Ledger:
    """Read a published ``data/ledger.json`` (safe JSON, strict schema; ``option`` names the command-line option the
    file came from, in the error); ``compressed``: the file is gzip (a snapshot's ``.json.gz``), read with
    :func:`mtboard.core.safejson.read_gzip_bytes` (256 MiB at most, read or decompressed).

    Raises: InputError naming the file and the option (unreadable, not gzip, not a ledger, another schema version)."""
    from mtboard.core import safejson
    from mtboard.core.documents import validate_model

    try:
        read = safejson.read_gzip_bytes if compressed else safejson.read_bytes
        raw = read(path, max_bytes=256 * 1024 * 1024)
        safejson.loads(raw, where=str(path), max_bytes=256 * 1024 * 1024)
        return validate_model(Ledger, raw, str(path))
    except MtboardError as exc:
        problem = exc.problem if exc.where == str(path) else exc.one_line()
        raise InputError(f"not a published ledger: {exc.field + ': ' if exc.field else ''}{problem}",
                         where=str(path), field=option,
                         fix="pass a data/ledger.json that mtboard build published (its shape: mtboard schema "
                             "ledger)") from None


GitDates = dict[str, str]
"""Card path under submissions/ → ISO 8601 date of the commit that added it."""


def git_dates(root: Path, submissions: Path) -> GitDates:
    """When each card under ``submissions`` entered the repository at ``root`` (``git log --diff-filter=A``, first
    parent: the merge of its pull request); empty outside a git checkout."""
    try:
        rel = submissions.resolve().relative_to(root.resolve()).as_posix()
        proc = subprocess.run(["git", "-C", str(root), "log", "--first-parent", "--diff-filter=A", "--name-only",
                               "--format=@%cI", "--", rel], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    if proc.returncode != 0:
        return {}
    dates: GitDates = {}
    date = ""
    for line in proc.stdout.splitlines():
        if line.startswith("@"):
            date = line[1:]
        elif line.strip() and date:
            path = line.strip()[len(rel) + 1:]
            dates.setdefault(path, date)  # newest first: the first seen is the latest addition
    return dates


def _rank(row: LedgerRow) -> str:
    return row.ranks[0].rank if row.ranked and row.ranks else ""


def _date(card: str, row: LedgerRow, dates: GitDates) -> tuple[str, str]:
    if card in dates:
        return dates[card], "git"
    member = next((m for m in row.members if m.card == card), None)
    return (member.timestamp if member is not None else ""), "run"


def _page(row: LedgerRow, card: str) -> str | None:
    return next((m.page for m in row.members if m.card == card), None)


def _composite(row: LedgerRow) -> str:
    r = row.ranks[0] if row.ranked and row.ranks else None
    value = r.composite if r is not None else next((m.composite for m in row.members
                                                    if m.card == row.representative), None)
    return "—" if value is None else f"{value:.4f}"


def _row_changes(b: str, old: LedgerRow | None, new: LedgerRow | None, dates: GitDates,
                 rescored: bool = False) -> list[Change]:
    row = new or old
    assert row is not None
    subset = row.coverage.subset or not (row.ranked or row.reference)

    def change(kind: str, before: str, after: str, card: str) -> Change:
        date, source = _date(card, row, dates)
        return Change(kind, b, row.fingerprint, row.method, subset, before, after, date, source, card,
                      _page(new, card) if new is not None else None)

    if old is None:
        assert new is not None
        first = min(new.members, key=lambda m: _date(m.card, new, dates)[0] or m.timestamp)
        return [change("new row", "", _rank(new) or ("ref." if new.reference else "unranked"), first.card)]
    if new is None:
        return [change("row withdrawn", _rank(old) or "unranked", "", old.representative)]
    out = []
    if rescored:
        out.append(change("re-scored", f"{_rank(old) or 'unranked'} ({_composite(old)})",
                          f"{_rank(new) or 'unranked'} ({_composite(new)})", new.representative))
        return out
    if _rank(old) != _rank(new):
        out.append(change("rank change", _rank(old) or "unranked", _rank(new) or "unranked", new.representative))
    if old.tier != new.tier:
        out.append(change("tier change", old.tier_label, new.tier_label, new.representative))
    was = {m.card for m in old.members}
    now = {m.card for m in new.members}
    for card in sorted(now - was):
        out.append(change("reproduction added", f"×{len(old.members)}", f"×{len(new.members)}", card))
    for card in sorted(was - now):
        out.append(change("card withdrawn", card, "", card))
    return out


def diff_ledgers(previous: Ledger | None, current: Ledger, dates: GitDates | None = None) -> LedgerDiff:
    """Every change from ``previous`` to ``current`` (None: every row is new), newest first within each kind
    (:data:`KINDS` order), full runs before subsets."""
    dates = dates or {}
    before = {(b.key, r.fingerprint): r for b in (previous.boards if previous else []) for r in b.rows}
    after = {(b.key, r.fingerprint): r for b in current.boards for r in b.rows}
    ancestor: dict[tuple[str, str], tuple[str, str]] = {}  # re-scored row → the previous row it was re-scored from
    for key, row in after.items():
        if key not in before:
            lineage = reversed(getattr(row, "rescored_from", []))  # newest ancestor first
            old = next(((key[0], fp) for fp in lineage if (key[0], fp) in before), None)
            if old is not None and old not in after:
                ancestor[key] = old
    replaced = set(ancestor.values())
    changes: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        if key in replaced:
            continue
        if key in ancestor:
            changes.extend(_row_changes(key[0], before[ancestor[key]], after[key], dates, rescored=True))
            continue
        changes.extend(_row_changes(key[0], before.get(key), after.get(key), dates))
    changes.sort(key=lambda c: c.date, reverse=True)
    changes.sort(key=lambda c: (c.subset, KINDS.index(c.kind)))
    return LedgerDiff(previous.build if previous else None, previous.built_at if previous else None, current.build,
                      changes)


__all__ = ["KINDS", "Change", "LedgerDiff", "GitDates", "load_previous", "git_dates", "diff_ledgers"]
