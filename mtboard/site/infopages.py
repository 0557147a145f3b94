"""The contribute page and the licences page (issue 36 items 7 and 8): ``contribute.md`` and ``licences.md``.

Contribute: the repository address (``repo_url`` of mkdocs.yml, else the build's GitHub repository), the setup, run
and submit commands of README.md and docs/submissions.md, the named checks CI runs (:mod:`mtboard.validate.report`)
and what happens after a pull request. Licences: each dataset's licence and, per upstream package, its version,
registry, files and licence (:mod:`mtboard.site.licences`, from corpora/*.json and corpora/SOURCES.md), and what the
repository says about the licence of its code and of model outputs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mtboard.core import fmt
from mtboard.ledger.load import Inputs
from mtboard.ledger.tables import Leaderboard
from mtboard.site import licences
from mtboard.site.boardpages import domain_sources, source_for
from mtboard.site.render import _env, page_helpers
from mtboard.validate.report import CARD_CHECKS, REPO_CHECKS

CONTRIBUTE_PAGE = "contribute.md"
LICENCES_PAGE = "licences.md"

_REPO_URL = re.compile(r"""^repo_url:[ \t]*["']?([^"'\s#]+)""", re.M)
_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


def repository_url(root: Path, repository: str | None = None) -> str | None:
    """The repository's web address for the contribute page: ``repo_url`` of ``root/mkdocs.yml`` when it is set
    and an absolute http(s) URL (:func:`mtboard.core.fmt.safe_url`); else ``https://github.com/<repository>`` when
    ``repository`` (the build's ``attestation_repository``: ``--attestation-repository``,
    ``$MTBOARD_ATTESTATION_REPOSITORY``, else ``$GITHUB_REPOSITORY`` in CI) is an owner/name; else None (the page
    then says the address is not configured). A missing or unreadable mkdocs.yml counts as unset; never raises."""
    try:
        text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    m = _REPO_URL.search(text)
    url = fmt.safe_url(m.group(1)) if m else None
    if url:
        return url.rstrip("/")
    if repository and _REPO.fullmatch(repository):
        return f"https://github.com/{repository}"
    return None


def code_licence(root: Path) -> str | None:
    """The title of the licence in ``root/LICENSE`` (its first two non-blank lines, e.g. "Apache License Version
    2.0, January 2004"); None when the file is missing or unreadable."""
    try:
        lines = [line.strip() for line in (root / "LICENSE").read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return None
    return " ".join(lines[:2]) or None


def render_info_pages(inputs: Inputs, boards: list[Leaderboard], root: Path,
                      repository: str | None = None) -> dict[str, str]:
    """``{"contribute.md": text, "licences.md": text}``. ``root``: project root (mkdocs.yml, LICENSE,
    corpora/SOURCES.md; a missing file leaves its part of the page saying so). ``repository``: owner/name, the
    fallback repository address (:func:`repository_url`). Datasets of ``boards`` without a corpus file in ``inputs``
    get an anchor on the licences page too, saying their licence is not known, so every page's licence link
    resolves. Deterministic; never raises for missing files."""
    env = _env()
    pages: dict[str, str] = {}

    def render(path: str, template: str, **ctx: Any) -> None:
        pages[path] = env.get_template(template).render(**page_helpers(path), **ctx)

    repo_url = repository_url(root, repository)
    render(CONTRIBUTE_PAGE, "contribute.md.j2", title="Contribute a run", repo_url=repo_url,
           card_checks=CARD_CHECKS, repo_checks=REPO_CHECKS)
    sources_path = root / "corpora" / "SOURCES.md"
    try:
        sources_md = sources_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        sources_md = ""
    domains = domain_sources(sources_md)
    datasets = licences.dataset_licences(inputs, sources_md, lambda d, pair: source_for(domains, d, pair))
    known = {d.id for d in datasets}
    absent: dict[str, set[str]] = {}
    for lb in boards:
        if lb.dataset_id not in known:
            absent.setdefault(lb.dataset_id, set()).add(lb.version)
    missing = [(i, ", ".join(sorted(v))) for i, v in sorted(absent.items())]
    render(LICENCES_PAGE, "licences.md.j2", title="Licences and attribution", datasets=datasets, missing=missing,
           code_licence=code_licence(root), repo_url=repo_url, has_sources=bool(sources_md))
    return pages


__all__ = ["CONTRIBUTE_PAGE", "LICENCES_PAGE", "repository_url", "code_licence", "render_info_pages"]
