"""MkDocs hook of every ``mtboard build`` (:data:`mtboard.site.build.MKDOCS_HOOKS`): the site's pre-rendered HTML
blocks skip Python-Markdown, and the blocks marked ``data-search-exclude`` skip the search plugin's parser too (issue
35, "MkDocs").

Why: the board pages' tables are HTML that :mod:`mtboard.site.boards` rendered and escaped already. Python-Markdown
passes a raw HTML block through unchanged, but finds its end by feeding it to its own ``html.parser`` subclass, and
Material's search plugin parses every page's HTML again to index it: at 200 synthetic cards these were 8.4 s and
5.8 s of a 17.5 s MkDocs phase. The hook uses MkDocs' documented plugin events (https://www.mkdocs.org/dev-guide/
plugins/#events; MkDocs 1.6.1, Material 9.8):

* ``on_page_markdown``: every *block* that Python-Markdown would pass through as one raw HTML block is replaced by a
  placeholder paragraph (a per-process random token: page text cannot guess it). Within each *chunk* (text between
  blank lines), after any ATX heading lines, a block starts a line with the start tag of a block-level element
  (:data:`BLOCK_TAGS`) and ends with that element's end tag where its start and end tags first balance, the rest of
  that line empty (no space either), its start tag on one line; Markdown may follow on the next line (the next block
  or text is looked at the same way). A block
  holds no comment, ``<script>``, ``<style>``, ``<pre>``, ``<textarea>`` or CDATA (whose text the HTML parser does not
  read as tags), no tab or carriage return (which Python-Markdown's whitespace normalisation rewrites), and is at
  least :data:`MIN_CHARS` long. Once a chunk left to Markdown opens a block-level element it does not close, nothing
  more of the page is stashed. Anything else is left to Python-Markdown as before.
* ``on_page_content``: each placeholder paragraph ``<p>TOKEN</p>`` is replaced by its chunk, byte for byte what
  Python-Markdown's ``RawHtmlPostprocessor`` would have written; a chunk whose start tag carries the bare attribute
  ``data-search-exclude`` becomes an HTML comment holding only the token instead, so the search plugin
  (``on_page_context``) neither parses nor indexes it — what Material itself does with an element marked
  ``data-search-exclude`` (https://squidfunk.github.io/mkdocs-material/plugins/search/, "Search exclusion"), at no
  parsing cost.
* ``on_post_page``: those comments are replaced by their chunks in the finished page.

The published pages are byte-identical to a build without the hook (tests/test_site_htmlstash.py builds both); the
search index differs only by what ``data-search-exclude`` excludes. A token missing from the HTML (it cannot happen
unless an extension rewrites paragraphs) fails the build (PluginError) rather than dropping a block.
"""

from __future__ import annotations

import re
import secrets

BLOCK_TAGS = frozenset({"p", "div", "table", "nav", "details", "ol", "ul", "dl", "figure", "section", "form",
                        "blockquote", "aside", "header", "footer", "fieldset"})
"""Elements whose blocks are stashed: block-level for Python-Markdown (``markdown.Markdown.block_level_elements``;
tests/test_site_htmlstash.py checks each)."""
MIN_CHARS = 64
"""Shortest block stashed (characters): shorter ones cost Markdown next to nothing."""
_TOKEN = f"mtbstash{secrets.token_hex(8)}n"
_START = re.compile(r"<([a-z][a-z0-9]*)[\s>]")
_UNSAFE = ("<!--", "<script", "<style", "<pre", "<textarea", "<![CDATA[", "<?", "\t", "\r", "\x02", "\x03")
"""Left to Markdown: text the HTML parser reads as no tags, and characters Python-Markdown's whitespace
normalisation changes (tabs expanded, carriage returns, its own STX/ETX markers)."""
_BLANK = re.compile(r"\n[ \t]*\n")

_stash: dict[str, dict[str, tuple[str, bool, bool]]] = {}
"""Page (``src_uri``) → token → (block, search-excluded, a blank line followed it): what the placeholders stand
for."""


def split(chunk: str) -> tuple[str, str, str] | None:
    """``(head, block, tail)`` of ``chunk`` (text between blank lines, as it stands in the page's Markdown) when it
    holds a block to stash (module docstring): ``head`` its leading ATX heading lines (``#``; may be empty), ``block``
    the element, starting a line, ending where its start and end tags first balance, ``tail`` what follows it (empty,
    whitespace, or Markdown starting on the next line). None when nothing in it is stashed."""
    lines = chunk.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    body = "\n".join(lines[i:])
    m = _START.match(body)
    if m is None or m.group(1) not in BLOCK_TAGS or "\n" in body[:body.find(">") + 1]:
        return None  # a start tag broken over lines is Markdown's (it may make it a paragraph; issue 35 review)
    tag = m.group(1)
    end_tag = f"</{tag}>"
    depth, end = 0, -1
    for t in re.finditer(rf"<(/?){tag}[\s>]", body):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            end = t.start() + len(end_tag) if body.startswith(end_tag, t.start()) else -1
            break
    if end < 0:
        return None
    block, tail = body[:end], body[end:]
    if len(block) < MIN_CHARS or any(u in block for u in _UNSAFE) or (tail.strip() and not tail.startswith("\n")) \
            or (not tail.strip() and tail.strip("\n") != ""):  # spaces after the end tag: Markdown's (review)
        return None
    return "\n".join(lines[:i]), block, tail


def qualifies(chunk: str) -> bool:
    """Whether ``chunk`` is one block to stash, nothing before or after it (:func:`split`)."""
    parts = split(chunk)
    return parts is not None and parts[0] == "" and parts[2] == ""


def _excluded(chunk: str) -> bool:
    head = chunk[: chunk.index(">") + 1]
    return re.search(r"\sdata-search-exclude[\s>]", head) is not None


MARKDOWN_BLOCK_TAGS = ("address", "article", "aside", "blockquote", "body", "canvas", "center", "colgroup", "dd",
                       "details", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "group", "h1",
                       "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "html", "iframe", "legend", "li", "main", "map",
                       "math", "menu", "nav", "noscript", "object", "ol", "option", "output", "p", "pre", "progress",
                       "script", "section", "style", "summary", "table", "tbody", "td", "textarea", "tfoot", "th",
                       "thead", "tr", "ul", "video")
"""Python-Markdown 3.11's block-level elements (``markdown.Markdown().block_level_elements``; tests check the list)
but the void ``hr``: any of them at a line's start opens a raw HTML block that lasts until its end tag."""
_ANY_BLOCK = re.compile(rf"<(/?)({'|'.join(MARKDOWN_BLOCK_TAGS)})(?=[\s>/])")


def _balanced(text: str, depth: dict[str, int]) -> bool:
    """Add ``text``'s block-level start (+1) and end (−1) tags to ``depth``; whether every depth is 0 after."""
    for m in _ANY_BLOCK.finditer(text):  # a stray end tag closes nothing: a depth never goes below 0 (review)
        depth[m.group(2)] = max(0, depth.get(m.group(2), 0) + (-1 if m.group(1) else 1))
    return not any(depth.values())


def stash(markdown: str, key: str) -> str:
    """``markdown`` with every qualifying chunk replaced by a placeholder paragraph; the chunks kept under ``key``.

    A chunk is stashed only when every block-level element opened before it (in the chunks left to Markdown) is
    closed again: otherwise it may lie inside a raw HTML block that an earlier chunk opened (an element spanning blank
    lines), which Python-Markdown passes through whole. After such an imbalance nothing more of the page is stashed
    (its tags are left to Markdown, as before)."""
    found: dict[str, tuple[str, bool, bool]] = {}
    parts = _BLANK.split(markdown)
    seps = _BLANK.findall(markdown)
    out: list[str] = []
    depth: dict[str, int] = {}
    closed = True
    for i, chunk in enumerate(parts):
        pieces: list[str] = []
        while closed and chunk:
            cut = split(chunk)
            if cut is None:
                break
            head, block, tail = cut
            token = f"{_TOKEN}{len(found)}x"
            direct = bool(tail.strip())  # Markdown on the very next line: Python-Markdown writes one newline between
            found[token] = (block, _excluded(block), not direct)
            pieces += [head, token] if head else [token]
            if not direct:
                pieces[-1] += tail  # whitespace only: kept as it was
                chunk = ""
            else:
                chunk = tail[1:]
        if chunk:
            if closed:
                closed = _balanced(chunk, depth)
            pieces.append(chunk)
        out.append("\n\n".join(pieces))
        if i < len(seps):
            out.append(seps[i])
    _stash[key] = found
    return "".join(out) if found else markdown


def restore_content(html: str, key: str) -> str:
    """``html`` (a page's content) with each placeholder paragraph replaced by its chunk, or by a comment holding the
    token when the chunk is search-excluded. Raises ValueError when a placeholder is not there exactly once."""
    for token, (chunk, excluded, gap) in _stash.get(key, {}).items():
        para = f"<p>{token}</p>"
        if html.count(para) != 1:
            raise ValueError(f"{key}: a stashed HTML block's placeholder was rewritten by Markdown")
        # Python-Markdown ends a raw HTML block that a blank line follows with a blank line when anything comes
        # after it, a paragraph with a newline only: "<div>…</div>\n\n<p>" against "<p>TOKEN</p>\n<p>"
        if gap and html.find(para + "\n") >= 0:
            html = html.replace(para + "\n", para + "\n\n")
        html = html.replace(para, f"<!--{token}-->" if excluded else chunk)
    return html


def restore_page(output: str, key: str) -> str:
    """The finished page with each search-excluded chunk back in place of its comment; the page's stash is dropped.
    Raises ValueError when a comment is not there exactly once."""
    for token, (chunk, excluded, _gap) in _stash.pop(key, {}).items():
        if excluded:
            comment = f"<!--{token}-->"
            if output.count(comment) != 1:
                raise ValueError(f"{key}: a search-excluded HTML block's placeholder is missing from the page")
            output = output.replace(comment, chunk)
    return output


def _plugin_error(exc: ValueError):
    from mkdocs.exceptions import PluginError  # noqa: PLC0415 - MkDocs is there whenever it calls the hook

    return PluginError(str(exc))


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' event signature
    return stash(markdown, page.file.src_uri)


def on_page_content(html: str, page, config, files) -> str:  # noqa: ARG001
    try:
        return restore_content(html, page.file.src_uri)
    except ValueError as exc:
        raise _plugin_error(exc) from None


def on_post_page(output: str, page, config) -> str:  # noqa: ARG001
    try:
        return restore_page(output, page.file.src_uri)
    except ValueError as exc:
        raise _plugin_error(exc) from None
