"""The Contamination page (issue 37 item 3): ``contamination.md``, every claim the ledger read — filed claims under
``contamination/`` (model, dataset, versions and entries, evidence link, quote and test, claimant, date, status, the
YAML file in the repository) and the automatic ones (a record's declared training corpora naming an upstream package
of a corpus) — one anchor per claim, which the board rows' ``⚠`` marks link to. Which rows a claim marks is the
ledger's (:mod:`mtboard.ledger.contamination`); claims are untrusted input: every string is escaped by the template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mtboard.core import fmt
from mtboard.ledger.contamination import PAGE, ClaimEntry
from mtboard.ledger.tables import Leaderboard
from mtboard.site.infopages import repository_url
from mtboard.site.render import _env, page_helpers


def claim_file_url(repo_url: str | None, path: str | None) -> str | None:
    """The claim file's web address: ``<repo_url>/blob/HEAD/<path>`` for a GitHub-style ``repo_url``; None without
    either (the page then shows the path as text)."""
    if not repo_url or not path:
        return None
    return fmt.safe_url(f"{repo_url}/blob/HEAD/{path}")


def render_contamination_page(claims: list[ClaimEntry], boards: list[Leaderboard], root: Path,
                              repository: str | None = None) -> dict[str, str]:
    """``{"contamination.md": text}``: the claims of :attr:`mtboard.ledger.build.BoardLedger.claims` in their order,
    each with the boards whose rows it marks (titles from ``boards``). ``root``/``repository``: where the repository's
    address comes from (:func:`mtboard.site.infopages.repository_url`). Deterministic; never raises."""
    titles = {lb.page: lb.title for lb in boards}
    repo_url = repository_url(root, repository)
    items: list[dict[str, Any]] = []
    for c in claims:
        pages = sorted({p for p, _ in c.rows})
        ev = c.claim.evidence if c.claim is not None else None
        items.append({"c": c, "claim": c.claim, "evidence": ev,
                      "url": fmt.safe_url(ev.url) if ev is not None and ev.url else None,
                      "file_url": claim_file_url(repo_url, c.path),
                      "boards": [(p, titles.get(p, p), sum(1 for q, _ in c.rows if q == p)) for p in pages]})
    text = _env().get_template("contamination.md.j2").render(**page_helpers(PAGE), title="Contamination claims",
                                                             items=items)
    return {PAGE: text}


__all__ = ["claim_file_url", "render_contamination_page"]
