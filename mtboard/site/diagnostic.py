"""The diagnostic boards' pages (issue 40 item 6; spec §2.3): ``diagnostic/<key>.md`` per corpus with a diagnostic
segment and ``diagnostic/index.md`` listing them.

Every number and every row's standing comes from :mod:`mtboard.ledger.diagnostic` (nothing is decided or computed
here). The page says what the segment is for — targeted tests of specific phenomena, not a ranking — and shows no
rank: rows are in *diagnostic order* (the diagnostic composite, highest first), without numbers, so nothing on it can
be read as a development rank. Contributor-controlled strings (method names, card paths) are escaped by the templates
(autoescape, :func:`mtboard.core.fmt.name_html`).
"""

from __future__ import annotations

from typing import Any

from mtboard.core import fmt
from mtboard.ledger.diagnostic import EMPTY, PHENOMENON, PURPOSE, DiagnosticBoard, DiagnosticRow
from mtboard.ledger.tables import DIGITS, board_page
from mtboard.site.boards import ci_text
from mtboard.site.render import _env, page_helpers
from mtboard.site.rundata import card_link

INDEX = "diagnostic/index.md"
"""The diagnostic boards' index page."""


def _row(r: DiagnosticRow, groups: list[str], repository: str | None) -> dict[str, Any]:
    s = r.standing
    return {"method": r.method, "path": r.lc.path, "url": card_link(r.lc, repository), "tier": s.label,
            "icon": s.icon, "n": r.n, "composite": ci_text(r.composite, r.composite_ci, DIGITS["composite"]),
            "chrf": ci_text(r.chrf, r.chrf_ci, DIGITS["chrf"]), "failures": r.failures,
            "placeholder": r.placeholder_flags,
            "outcomes": ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r.outcomes.items() if v),
            "groups": [fmt.num(r.groups[g].chrf, DIGITS["chrf"]) if g in r.groups else fmt.DASH for g in groups],
            "reason": None if r.listed else ("reference baseline (echo, empty): a floor, never in diagnostic order"
                                             if s.reference else f"part of the segment: {s.coverage.text}"),
            "reproduced": s.reproduction.text, "fingerprint": s.fingerprint}


def page_context(db: DiagnosticBoard, repository: str | None = None) -> dict[str, Any]:
    """What ``diagnostic.md.j2`` shows of one board: its rows as display strings, listed rows and the others apart."""
    rows = [_row(r, db.groups, repository) for r in db.rows]
    return {"db": db, "listed": [x for x, r in zip(rows, db.rows) if r.listed],
            "apart": [x for x, r in zip(rows, db.rows) if not r.listed],
            "groups": [(g, db.group_sizes.get(g, 0)) for g in db.groups], "purpose": PURPOSE,
            "phenomenon": PHENOMENON, "empty": EMPTY,
            "board_page": board_page(db.board) if db.board else None}


def render_diagnostic_pages(diagnostic: list[DiagnosticBoard], repository: str | None = None) -> dict[str, str]:
    """``{docs path: Markdown}``: one page per diagnostic board and the index (also when there is none: it says
    so). ``repository``: owner/name the rows link each card's file in (None: the path as text). Never raises."""
    env = _env()
    pages: dict[str, str] = {}
    for db in diagnostic:
        pages[db.page] = env.get_template("diagnostic.md.j2").render(
            **page_helpers(db.page), title=fmt.safe_title(f"Diagnostic {db.title}", 120),
            **page_context(db, repository))
    pages[INDEX] = env.get_template("diagnostic_index.md.j2").render(
        **page_helpers(INDEX), title="Diagnostic boards", boards=diagnostic, purpose=PURPOSE)
    return pages


def nav_items(diagnostic: list[DiagnosticBoard]) -> list[dict[str, str]]:
    """The Leaderboards tab's ``Diagnostic`` section: the index, then one item per board (titles made safe)."""
    return [{"All diagnostic boards": INDEX}, *({fmt.safe_title(f"Diagnostic {d.title}"): d.page} for d in diagnostic)]


__all__ = ["INDEX", "nav_items", "page_context", "render_diagnostic_pages"]
