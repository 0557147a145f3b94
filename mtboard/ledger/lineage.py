"""``mtboard lineage``: re-score every committed card whose scorer is not this code's, and say which ranks moved
(issue 38 item 2).

:func:`find_stale` reads every card under ``submissions/`` and compares its scorer
(:func:`mtboard.score.lineage.scorer_of`) with :func:`mtboard.score.lineage.current_scorer`. :func:`run_lineage`
re-scores each such card from its stored outputs (:func:`mtboard.run.rescore.rescore_card`: no translation; the new
card names the old one in ``rescored_from``), writes the new cards to an output folder laid out as ``submissions/``
(``<dataset id>/<canonical name>``), builds the ledger of the cards as committed and of the cards after re-scoring
(:func:`mtboard.ledger.build.build_ledger`, the same code the site uses) and lists, per board, every row whose rank
or composite moved (:class:`Move`; a re-scored row is matched to its old row through ``rescored_from``, since the
fingerprint names the scorer).

Both ledgers are built without the validator: the committed cards were validated when they were merged, and this
code's validator would refuse them for their old signatures — which is what this command repairs.

What cannot be re-scored from stored outputs is kept as it is and listed (:class:`Kept`): a card with judge verdicts
(the judges saw the old scores) or neural metrics (COMET runs apart), and a card rescoring refuses for another reason
(no matching corpus, a backend not installed). Such a card stays on the board from its older scorer, and the board
says so (:mod:`mtboard.ledger.scorers`); the fix is to re-run ``mtboard judge`` / ``mtboard neural`` on a re-scored
card (or re-run the method).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core.documents import load_card, write_card
from mtboard.core.errors import MtboardError
from mtboard.core.fmt import md_cell
from mtboard.core.schema import RunCard
from mtboard.ledger.build import build_ledger
from mtboard.ledger.load import load_inputs
from mtboard.run.rescore import rescore_card
from mtboard.score.lineage import Scorer, scorer_of
from mtboard.validate.naming import VERIFICATION_SUFFIX, canonical_name

OLDER_PARTS = "judgements/neural metrics cannot be re-scored from stored outputs"
"""Why a card with judge verdicts or neural metrics is kept from its older scorer."""


@dataclass(frozen=True)
class Stale:
    """A committed card whose scorer is not the current one."""

    path: str
    """Path under submissions/."""
    scorer: Scorer
    differences: tuple[str, ...]
    """``("textnorm 2 → 3", …)``: :meth:`mtboard.score.lineage.Scorer.differences` against the current scorer."""


@dataclass(frozen=True)
class Rescored:
    path: str
    """The old card (path under submissions/)."""
    new_path: str
    """The re-scored card: ``<dataset id>/<canonical name>`` (under the output folder, and under submissions/ with
    ``--write``)."""
    composite_before: float
    composite_after: float


REFUSED = "rescoring refused it"
"""The start of a :class:`Kept` reason for a card ``mtboard rescore`` could not re-score (``mtboard lineage`` then
exits non-zero), unlike a card kept on purpose (judge verdicts, neural metrics)."""


@dataclass(frozen=True)
class Kept:
    """A stale card left as it is: ``reason`` says why and what to do."""

    path: str
    scorer: Scorer
    reason: str


@dataclass(frozen=True)
class Move:
    """One row whose standing moved on the whole-segment view: rank labels and composites before and after
    (None/"" where the row was not ranked or did not exist)."""

    board: str
    method: str
    fingerprint_before: str | None
    fingerprint_after: str | None
    rank_before: str
    rank_after: str
    position_before: int | None
    position_after: int | None
    composite_before: float | None
    composite_after: float | None
    rescored: bool

    @property
    def delta(self) -> float | None:
        """composite after − before (None when either is missing)."""
        if self.composite_before is None or self.composite_after is None:
            return None
        return round(self.composite_after - self.composite_before, 6)

    @property
    def places(self) -> int | None:
        """Places moved up (positive) or down (negative) on the whole-segment view; None when either is unranked."""
        if self.position_before is None or self.position_after is None:
            return None
        return self.position_before - self.position_after


@dataclass
class LineageReport:
    current: Scorer
    stale: list[Stale] = field(default_factory=list)
    rescored: list[Rescored] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    written: bool = False
    """The re-scored cards replaced the old ones under submissions/ (``--write``)."""

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data (``mtboard lineage --json``)."""
        return {
            "current": self.current.as_dict(),
            "stale": [{"path": s.path, "scorer": s.scorer.as_dict(), "differences": list(s.differences)}
                      for s in self.stale],
            "rescored": [{"path": r.path, "new_path": r.new_path, "composite_before": r.composite_before,
                          "composite_after": r.composite_after} for r in self.rescored],
            "kept": [{"path": k.path, "scorer": k.scorer.as_dict(), "reason": k.reason} for k in self.kept],
            "moves": [{"board": m.board, "method": m.method, "fingerprint_before": m.fingerprint_before,
                       "fingerprint_after": m.fingerprint_after, "rank_before": m.rank_before,
                       "rank_after": m.rank_after, "places": m.places, "composite_before": m.composite_before,
                       "composite_after": m.composite_after, "delta": m.delta, "rescored": m.rescored}
                      for m in self.moves],
            "written": self.written,
        }

    def markdown(self) -> str:
        """The pull request's (and the job summary's) Markdown: the current scorer, what was re-scored, a table of
        moved rows (board, method row, rank before → after, composite before → after, Δ) and the kept cards."""
        lines = ["## Scorer lineage", "", f"Current scorer: {md_cell(self.current.text)}", ""]
        if not self.stale:
            lines.append("Every committed card was scored by the current scorer: nothing to re-score.")
            return "\n".join(lines) + "\n"
        diffs = sorted({d for s in self.stale for d in s.differences})
        lines.append(f"{len(self.stale)} committed card(s) were scored by another scorer "
                     f"({md_cell(', '.join(diffs))}); "
                     f"{len(self.rescored)} re-scored from their stored outputs, {len(self.kept)} kept.")
        lines.append("")
        if self.moves:
            lines += ["| board | method row | rank before → after | composite before → after | Δ |",
                      "| --- | --- | --- | --- | --- |"]
            for m in self.moves:
                cb = "—" if m.composite_before is None else f"{m.composite_before:.4f}"
                ca = "—" if m.composite_after is None else f"{m.composite_after:.4f}"
                d = "—" if m.delta is None else f"{m.delta:+.4f}"
                places = "" if not m.places else f" ({m.places:+d})"
                lines.append(f"| {md_cell(m.board)} | {md_cell(m.method)}{' (re-scored)' if m.rescored else ''} | "
                             f"{md_cell(m.rank_before or 'unranked')} → {md_cell(m.rank_after or 'unranked')}"
                             f"{places} | {cb} → {ca} | {d} |")
        else:
            lines.append("No rank or composite moved.")
        if self.kept:
            lines += ["", "From the older scorer (kept as they are):", ""]
            lines += [f"- `{md_cell(k.path)}` ({md_cell(k.scorer.text)}): {md_cell(k.reason)}" for k in self.kept]
        return "\n".join(lines) + "\n"


def _cards(submissions: Path) -> list[Path]:
    return sorted(p for p in submissions.rglob("*.json") if p.is_file() and not p.is_symlink()
                  and not p.name.endswith(VERIFICATION_SUFFIX))


def find_stale(submissions: Path, current: Scorer) -> list[Stale]:
    """Every card under ``submissions`` whose scorer differs from ``current`` (path order). A file that is not a
    readable card is skipped (the validator reports it)."""
    out = []
    for p in _cards(submissions):
        try:
            card = load_card(p)
        except MtboardError:
            continue
        s = scorer_of(card)
        diff = s.differences(current)
        if diff:
            out.append(Stale(p.relative_to(submissions).as_posix(), s, tuple(diff)))
    return out


def _kept_reason(card: RunCard) -> str | None:
    parts = [what for what, has in (("judge verdicts", bool(card.judges)),
                                    ("neural metrics", bool(card.neural_metrics))) if has]
    if not parts:
        return None
    return (f"carries {' and '.join(parts)}: {OLDER_PARTS} — re-score the card without them, then re-run "
            "`mtboard judge`/`mtboard neural` on it")


def _whole(row) -> tuple[str, int | None, float | None]:
    r = row.ranks[0] if row.ranked and row.ranks else None
    comp = r.composite if r is not None else next((m.composite for m in row.members if m.card == row.representative),
                                                  None)
    return (r.rank if r is not None else ("ref." if row.reference else "")), \
        (r.position if r is not None else None), comp


def compare(before: Any, after: Any, renamed: dict[str, str]) -> list[Move]:
    """Rows whose whole-segment rank label, position or composite differ between two ledgers
    (:class:`mtboard.core.schema.ledger.Ledger`), board by board. ``renamed``: old fingerprint → new fingerprint of
    every re-scored card (a row and its re-scored row are one row). Order: board key, then the row's position after
    (unranked last)."""
    moves = []
    keys = sorted({b.key for b in before.boards} | {b.key for b in after.boards})
    old_boards = {b.key: b for b in before.boards}
    new_boards = {b.key: b for b in after.boards}
    for key in keys:
        old = {r.fingerprint: r for r in (old_boards[key].rows if key in old_boards else [])}
        new = {r.fingerprint: r for r in (new_boards[key].rows if key in new_boards else [])}
        back = {v: k for k, v in renamed.items()}
        pairs = []
        for fp, row in new.items():
            pairs.append((old.get(back.get(fp, fp)), row, fp in back))
        matched = {back.get(fp, fp) for fp in new}
        pairs += [(row, None, False) for fp, row in old.items() if fp not in matched]
        board_moves = []
        for o, n, rescored in pairs:
            rb, pb, cb = _whole(o) if o is not None else ("", None, None)
            ra, pa, ca = _whole(n) if n is not None else ("", None, None)
            if (rb, pb, cb) == (ra, pa, ca):
                continue
            row = n or o
            board_moves.append(Move(key, row.method, o.fingerprint if o else None, n.fingerprint if n else None,
                                    rb, ra, pb, pa, cb, ca, rescored))
        board_moves.sort(key=lambda m: (m.position_after is None, m.position_after or 0, m.method))
        moves += board_moves
    return moves


def _ledger(submissions: Path, corpora: Path | None, resamples: int | None):
    from datetime import datetime, timezone

    from mtboard.ledger import document

    inputs = load_inputs(submissions, corpora, validate=False)
    built = build_ledger(inputs) if resamples is None else build_ledger(inputs, resamples=resamples)
    return document.to_document(built, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))


def run_lineage(submissions: Path, corpora: Path, out: Path, current: Scorer, *, write: bool = False,
                resamples: int | None = None) -> LineageReport:
    """Re-score every stale card of ``submissions`` into ``out`` (``<dataset id>/<canonical name>``; created) and
    compare the ledgers before and after (module docstring). ``write``: the re-scored cards also replace the old ones
    under ``submissions`` in one atomic swap of the folder (:func:`mtboard.core.publish.staged`; verification
    records stay: a re-scored card inherits its ancestor's through ``rescored_from``). ``resamples``: the ledgers'
    bootstrap resamples (default the board's). Nothing stale: nothing is written or built.

    Raises: StorageError when ``out`` or ``submissions`` cannot be written."""
    report = LineageReport(current, find_stale(submissions, current))
    if not report.stale:
        return report
    out.mkdir(parents=True, exist_ok=True)
    renamed: dict[str, str] = {}
    new_cards: dict[str, RunCard] = {}
    for s in report.stale:
        path = submissions / s.path
        card = load_card(path)
        reason = _kept_reason(card)
        if reason is None:
            try:
                new = rescore_card(path, corpora_dir=corpora)
            except MtboardError as exc:
                reason = f"{REFUSED}: {exc.one_line()}"
        if reason is not None:
            report.kept.append(Kept(s.path, s.scorer, reason))
            continue
        rel = f"{Path(s.path).parent.as_posix()}/{canonical_name(new)}"
        write_card(new, out / rel)
        new_cards[s.path] = new
        renamed[card.fingerprint.hash] = new.fingerprint.hash
        report.rescored.append(Rescored(s.path, rel, card.scores.composite, new.scores.composite))
    with tempfile.TemporaryDirectory(prefix="mtboard-lineage-") as tmp:
        after = Path(tmp) / "submissions"
        shutil.copytree(submissions, after, symlinks=True)
        _replace(after, new_cards)
        corp = corpora if corpora.is_dir() else None
        report.moves = compare(_ledger(submissions, corp, resamples), _ledger(after, corp, resamples), renamed)
    if write and new_cards:
        from mtboard.core import publish

        with publish.staged(submissions, seed=True) as stage:
            _replace(stage.path, new_cards)
        report.written = True
    return report


def _replace(root: Path, new_cards: dict[str, RunCard]) -> None:
    """Under ``root`` (a copy of submissions/): each old card removed, its re-scored card written at its canonical
    name beside it."""
    for old, new in new_cards.items():
        write_card(new, root / Path(old).parent / canonical_name(new))
        if canonical_name(new) != Path(old).name:
            os.unlink(root / old)


__all__ = ["OLDER_PARTS", "REFUSED", "Stale", "Rescored", "Kept", "Move", "LineageReport", "find_stale", "compare",
           "run_lineage"]
