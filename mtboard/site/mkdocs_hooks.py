"""MkDocs hooks of the site (``hooks:`` in ``mkdocs.yml``; issue 35: published bytes per card).

:func:`on_env` turns on Jinja2's ``trim_blocks`` and ``lstrip_blocks`` for the theme's templates (MkDocs Material and
``site/overrides``): the newline after a block tag and the indentation before it are dropped, which Material's
templates are full of (a run page carried ~4.5 KB of blank lines and indentation). Only template whitespace changes:
a page's own content (``page.content``) is inserted as a variable and is untouched, so text inside ``<pre>`` and the
pages' tables keep every character.
"""

from __future__ import annotations

from typing import Any


def on_env(env: Any, config: Any, files: Any) -> Any:  # noqa: ARG001 (MkDocs' hook signature)
    """The theme's Jinja2 environment with ``trim_blocks`` and ``lstrip_blocks`` on and its template cache emptied
    (a template compiled before the change would keep its whitespace). Returns the same environment."""
    env.trim_blocks = True
    env.lstrip_blocks = True
    if env.cache is not None:
        env.cache.clear()
    return env
