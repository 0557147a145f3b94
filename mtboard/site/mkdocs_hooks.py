"""MkDocs hooks of the site (:data:`mtboard.site.build.MKDOCS_HOOKS`; issue 35: published bytes per card).

* :func:`on_env` turns on Jinja2's ``trim_blocks`` and ``lstrip_blocks`` for the theme's templates (MkDocs Material
  and ``site/overrides``): the newline after a block tag and the indentation before it are dropped, which Material's
  templates are full of (a run page carried ~4.5 KB of blank lines and indentation).
* :func:`on_page_context` empties the table of contents of a page that hides it and is excluded from search (run,
  review and compare pages: ~1 KB of hidden links each). The page's first heading stays the first entry, so Material's
  "Skip to content" link still targets it; Material's ``partials/toc.html`` then renders an empty ``<nav>``.
* :func:`on_post_page` removes what indentation and blank lines are left in the theme's part of a page —
  everything before ``<article`` and after ``</article>`` (header, navigation, table of contents, footer, scripts) —
  another ~1.8 KB per page (the blank lines: ~0.3 KB more on a run page).

Only the theme's whitespace changes: a page's own content (``page.content``, inside ``<article>``) is untouched, so
text inside ``<pre>`` or in a ``white-space: pre-wrap`` cell keeps every character; outside it, a line break followed by
spaces and a line break alone are the same whitespace to HTML. The visible text of every page is word for word the
same (checked on a 200-card build, issue 35).
"""

from __future__ import annotations

import re
from typing import Any

_INDENT = re.compile(r"\n[ \t\n\r\f]+")
"""A line break and the HTML whitespace after it (spaces, tabs, further line breaks, form feeds: not every Unicode
space, as ``\\s`` would take: a no-break space is text): one line break is the same whitespace to HTML."""


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
    """``html`` with the whitespace after each line break (spaces, tabs, further line breaks) removed outside its
    first ``<article``…``</article>`` (the whole page when it has none, e.g. a redirect or the 404 page's theme
    part). Raises nothing."""
    start, end = html.find("<article"), html.rfind("</article>")
    if start < 0 or end < start:
        return _INDENT.sub("\n", html) if "<pre" not in html and "<textarea" not in html else html
    return _INDENT.sub("\n", html[:start]) + html[start:end] + _INDENT.sub("\n", html[end:])


def on_post_page(output: str, page: Any, config: Any) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    """:func:`strip_chrome` of every page MkDocs writes."""
    return strip_chrome(output)


# The 404 page without a site URL (issue 36 item 3). MkDocs writes it once, at the root, with root-absolute links
# ("/assets/…"); a host serves it for every missing address, so under a project sub-path (GitHub Pages:
# https://<owner>.github.io/<repo>/) those links point outside the site. The page is rewritten to find its own root:
# a script in <head> asks, from the deepest folder of the address up, for ROOT_MARKER (a file every build writes at
# the site's root) and makes the first folder that has it the page's <base>; every link becomes relative to that base,
# and Material's configuration (its base and search worker) is pointed there before Material's bundle reads it.
ROOT_MARKER = "assets/mtboard-root.txt"
"""A file at this path below the site root marks the root (written by :mod:`mtboard.site.build`)."""

_FIND_ROOT = ("<script>(function(){var d=location.pathname.split('/');d.pop();for(var i=d.length;i>0;i--){"
              "var r=d.slice(0,i).join('/')+'/',x=new XMLHttpRequest();try{x.open('HEAD',r+'" + ROOT_MARKER +
              "',false);x.send();}catch(e){continue}if(x.status===200){window.__mtb_root=r;"
              "document.write('<base href=\"'+r.replace(/\"/g,'%22')+'\">');return}}"
              "window.__mtb_root='/';})();</script>")
_FIX_CONFIG = ("<script>(function(){var e=document.getElementById('__config');if(!e)return;var c=JSON.parse(e.textContent)"
               ",r=new URL(window.__mtb_root||'/',location.href).href;c.base=r;if(c.search)c.search=new URL(c.search.replace(/^\\//,''),r)"
               ".href;e.textContent=JSON.stringify(c);})();</script>")
_ROOT_ATTR = re.compile(r'\b(href|src)="/(?!/)')


def relocatable_404(html: str) -> str:
    """The 404 page ``html`` (written without a site URL) made to work at any depth below any site root: root-absolute
    ``href``/``src`` made relative, a root-finding ``<base>`` script first in ``<head>``, Material's ``__config``
    re-based before its bundle runs. Without JavaScript the links resolve from the address's folder (right at the
    root of a host, as before). Raises nothing; a page without ``<head>`` comes back unchanged."""
    if "<head>" not in html:
        return html
    html = _ROOT_ATTR.sub(r'\1="', html)
    html = html.replace('new URL("/",location)', "new URL(window.__mtb_root||\"/\",location)")
    html = html.replace("<head>", "<head>" + _FIND_ROOT, 1)
    at = html.find('<script src="assets/javascripts/bundle.')
    return html[:at] + _FIX_CONFIG + html[at:] if at >= 0 else html


def on_post_template(output: str, template_name: str, config: Any) -> str:
    """The 404 page made relocatable (:func:`relocatable_404`) when no site URL was given; other templates as
    they are."""
    if template_name == "404.html" and not config.get("site_url"):
        return relocatable_404(output)
    return output
