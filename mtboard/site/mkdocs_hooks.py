"""MkDocs hooks of the site (:data:`mtboard.site.build.MKDOCS_HOOKS`; issue 35: published bytes per card).

* :func:`on_env` turns on Jinja2's ``trim_blocks`` and ``lstrip_blocks`` for the theme's templates (MkDocs Material
  and ``site/overrides``): the newline after a block tag and the indentation before it are dropped, which Material's
  templates are full of (a run page carried ~4.5 KB of blank lines and indentation).
* :func:`on_page_context` empties the table of contents of a page that hides it and is excluded from search (run,
  review and compare pages: ~1 KB of hidden links each). The page's first heading stays the first entry, so Material's
  "Skip to content" link still targets it; Material's ``partials/toc.html`` then renders an empty ``<nav>``.
* :func:`on_post_page` removes what indentation is left at the start of each line of the theme's part of a page —
  everything before ``<article`` and after ``</article>`` (header, navigation, table of contents, footer, scripts) —
  another ~1.8 KB per page.

Only the theme's whitespace changes: a page's own content (``page.content``, inside ``<article>``) is untouched, so
text inside ``<pre>`` or in a ``white-space: pre-wrap`` cell keeps every character; outside it, a line break followed by
spaces and a line break alone are the same whitespace to HTML. The visible text of every page is word for word the
same (checked on a 200-card build, issue 35).
"""

from __future__ import annotations

import re
from typing import Any

_INDENT = re.compile(r"\n[ \t]+")


def on_env(env: Any, config: Any, files: Any) -> Any:  # noqa: ARG001 (MkDocs' hook signature)
    """The theme's Jinja2 environment with ``trim_blocks`` and ``lstrip_blocks`` on and its template cache emptied
    (a template compiled before the change would keep its whitespace). Returns the same environment."""
    env.trim_blocks = True
    env.lstrip_blocks = True
    if env.cache is not None:
        env.cache.clear()
    return env


def _hidden(meta: dict, key: str) -> bool:
    hide = meta.get("hide") if isinstance(meta, dict) else None
    return isinstance(hide, list) and key in hide


def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:  # noqa: ARG001 (hook signature)
    """For a page outside the nav whose front matter has ``hide: [toc]`` and ``search: {exclude: true}``: its
    table of contents cut to its first entry without children (what the skip link needs). Returns ``context``."""
    from mkdocs.structure.toc import AnchorLink, TableOfContents

    meta = page.meta or {}
    search = meta.get("search")
    excluded = isinstance(search, dict) and search.get("exclude") is True
    first = next(iter(page.toc), None) if page.toc else None
    if excluded and _hidden(meta, "toc") and first is not None and page not in nav.pages:
        page.toc = TableOfContents([AnchorLink(first.title, first.id, first.level)])
    return context


def strip_chrome(html: str) -> str:
    """``html`` with the spaces and tabs after each line break removed outside its first ``<article``…``</article>``
    (the whole page when it has none, e.g. a redirect or the 404 page's theme part). Raises nothing."""
    start, end = html.find("<article"), html.rfind("</article>")
    if start < 0 or end < start:
        return _INDENT.sub("\n", html) if "<pre" not in html and "<textarea" not in html else html
    return _INDENT.sub("\n", html[:start]) + html[start:end] + _INDENT.sub("\n", html[end:])


def on_post_page(output: str, page: Any, config: Any) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    """:func:`strip_chrome` of every page MkDocs writes."""
    return strip_chrome(output)
