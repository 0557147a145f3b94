"""The leaderboard site: it renders the ledger (:mod:`mtboard.ledger`): Jinja2 templates (:mod:`.render`), the boards as
visitors read them (:mod:`.boards`, :mod:`.boardpages`), inline SVG charts (:mod:`.charts`) and the MkDocs build
(:mod:`.build`)."""

from mtboard.site.build import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
