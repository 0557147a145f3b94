"""The leaderboard site: tables as data (:mod:`.tables`), Jinja2 templates (:mod:`.render`), inline SVG charts
(:mod:`.charts`), loading with validation (:mod:`.load`) and the MkDocs build (:mod:`.build`)."""

from mtboard.site.build import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
