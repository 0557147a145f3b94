"""Formatting and escaping for the site. Pure functions; every contributor-controlled string passes through here.

Escaping layers (issue 7 rules):
* :func:`fold_lines` — every line boundary ``str.splitlines`` and CommonMark know (CR LF, LF, CR, VT, FF, FS, GS, RS,
  NEL U+0085, LS U+2028, PS U+2029; :data:`mtboard.core.text.LINE_BREAKS`) as one space: the one rule for text that
  must stay on one Markdown line (issue 33 item 6). :func:`md_text` and :func:`md_cell` apply it.
* :func:`md_cell` — untrusted text in a cell of a Markdown table mtboard writes outside the site (``report.md``, the
  pull-request body, docs/environment.md): :func:`fold_lines`, then ``\\`` doubled, ``|`` as ``\\|``, ``<``/``>`` as
  ``&lt;``/``&gt;``.
* :func:`md_text` — text placed in a Markdown context (paragraphs, list items, Markdown table cells): HTML-escaped,
  then every ASCII character Markdown or a Markdown extension could interpret (``\\ ` * _ { } [ ] ( ) # + - . ! | : ~
  ^ = < > "``) is written as a numeric character reference, and newlines become spaces, so ``[x](javascript:…)``,
  ``|`` table breakers and raw HTML all stay literal text.
* HTML contexts use Jinja2 autoescape (templates) or :func:`html.escape` (SVG built in Python).
* :func:`safe_title` — strings that MkDocs puts into ``<title>`` without escaping (its Jinja environment has no
  autoescape): characters ``< > & " '`` and controls are replaced by look-alikes.
* :func:`safe_url` — only ``http://`` / ``https://`` URLs become links.
* Names (issue 32 item 5): :func:`name_html` / :func:`name_md` put a name in ``<bdi>`` (it cannot reorder what stands
  around it) with every refused character (:func:`mtboard.core.names.mark`) shown as ``[⚠U+XXXX]``; every other helper
  here marks bidirectional controls, invisible and format characters too, so nothing that reaches a page, a title or a
  download can reorder or hide text.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from mtboard.core.names import REFUSED, codepoint, mark, marker
from mtboard.core.text import LINE_BREAKS

DASH = "\u2014"
"""Shown for every missing value (never 0)."""

_MD_SPECIAL = set("\\`*_{}[]()#+-.!|:~^=<>\"'&$%@")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029]")


_LINE_BOUNDARY = re.compile("\r\n|[\n" + LINE_BREAKS + "]")
"""One line boundary: CR LF, or one of LF and :data:`mtboard.core.text.LINE_BREAKS` (CR, VT, FF, FS, GS, RS, NEL,
LS, PS) — exactly where ``str.splitlines`` splits, a superset of CommonMark's line endings (LF, CR, CR LF; spec
0.31.2 §2.1) and of Python-Markdown's (it turns CR LF and CR into LF before parsing)."""


def fold_lines(value: object) -> str:
    """``str(value)`` with every line boundary (:data:`_LINE_BOUNDARY`; CR LF counts once) replaced by one space, so
    ``str.splitlines`` of the result has at most one line and no Markdown renderer can start a new line, table row or
    block inside it. ``'a | b\\rc'`` → ``'a | b c'``; ``'x\\r\\ny\\u2028z\\x85w'`` → ``'x y z w'``."""
    return _LINE_BOUNDARY.sub(" ", str(value))


def md_cell(value: object, limit: int | None = None) -> str:
    """Untrusted text as one cell of a Markdown table (or a one-line list item) in the files mtboard writes outside
    the site — ``report.md``, the pull-request body, docs/environment.md (issue 33 item 6): :func:`fold_lines` (every
    line boundary, CR, NEL, LS and PS included, is one space, as LF always was), then ``\\`` doubled, ``|`` escaped
    as ``\\|`` (GFM tables, Python-Markdown's ``tables`` extension), ``<`` and ``>`` as ``&lt;`` and ``&gt;`` (no raw
    HTML). Cut to ``limit`` characters of the escaped text with ``…`` after it when longer (None: no limit). None →
    ``''``. Example: ``'a | b\\rc | d'`` → ``'a \\| b c \\| d'``."""
    s = "" if value is None else fold_lines(value)
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    if limit is None or len(s) <= limit:
        return s
    return s[:limit] + "\u2026"


def md_text(value: object) -> Markup:
    """Escape any value for a Markdown context (see module docstring). None → '—'."""
    if value is None:
        return Markup(DASH)
    s = fold_lines(_CONTROL.sub(" ", mark(str(value), free_text=True)))
    out = []
    for ch in s:
        out.append(f"&#{ord(ch)};" if ch in _MD_SPECIAL else ch)
    return Markup("".join(out))


def html_text(value: object) -> str:
    """HTML-escape (quotes included) for SVG/HTML strings assembled in Python; controls become spaces."""
    return html.escape(_CONTROL.sub(" ", mark(str(value), free_text=True)), quote=True)


def safe_title(value: object, limit: int = 80, keep: str = "") -> str:
    """A page title safe for MkDocs' unescaped ``<title>``: no ``< > & " '`` or control characters, ≤ limit chars.
    ``keep``: an ending that survives the cut (``value`` is shortened with "…" before it), so titles that differ only
    there — two runs of one long method name, told apart by their page ids — stay unique (issue 36 item 3)."""
    def clean(text: str) -> str:
        t = mark(_CONTROL.sub(" ", text).replace("\n", " "))
        return (t.replace("<", "\u2039").replace(">", "\u203a").replace("&", "\uff06").replace('"', "\u201d")
                .replace("'", "\u2019").replace("`", "\u02cb").replace("\\", "\u29f5"))

    s, tail = clean(str(value)), clean(keep)
    room = limit - len(tail)
    return s + tail if len(s) <= room else s[: room - 1] + "\u2026" + tail


def _marked_html(text: str) -> str:
    """HTML-escaped ``text`` with each refused character as ``<span class="mtb-refused" title="U+… NAME">⚠U+…</span>``
    (:data:`mtboard.core.names.REFUSED`)."""
    out, last = [], 0
    for m in REFUSED.finditer(text):
        ch = m.group()
        out.append(f'{escape(text[last:m.start()])}<span class="mtb-refused" title="{escape(codepoint(ch))}">'
                   f'{escape(marker(ch))}</span>')
        last = m.end()
    out.append(str(escape(text[last:])))
    return "".join(out)


def name_html(value: object) -> Markup:
    """A name (model, method, condition, run, judge, reviewer …) for an HTML context: ``<bdi class="mtb-name">``
    around its escaped text, each refused character a visible ``[⚠U+XXXX]`` marker (issue 32 item 5). None → '—'."""
    if value is None:
        return Markup(DASH)
    return Markup(f'<bdi class="mtb-name">{_marked_html(str(value))}</bdi>')


def name_md(value: object) -> Markup:
    """:func:`name_html` for a Markdown context (a heading, a list item): the text escaped as :func:`md_text` does,
    inside ``<bdi>``, refused characters marked."""
    if value is None:
        return Markup(DASH)
    return Markup(f'<bdi class="mtb-name">{md_text(mark(str(value)))}</bdi>')


def safe_url(value: object) -> str | None:
    """The URL if it is an absolute http(s) URL with a host and no whitespace/controls, else None."""
    if not isinstance(value, str) or len(value) > 2000 or re.search(r"[\s\x00-\x1f\x7f<>\"'`]", value):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return value


def slugify(value: str, limit: int = 60) -> str:
    """File-name-safe slug (lowercase a–z, 0–9, '-') plus 6 hex of the value's SHA-256, so distinct values never
    collide and hostile names cannot traverse paths."""
    base = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")[:limit] or "x"
    return f"{base}-{hashlib.sha256(value.encode('utf-8')).hexdigest()[:6]}"


def whole(value: int, limit: int = 40) -> str:
    """An integer as an error message shows it: in full up to ``limit`` digits, else "a 4,816-digit number" — the
    digit count from the bit length, never ``str()`` of the whole number (CPython refuses to write an ``int`` of over
    4,300 decimal digits, sys.int_info.str_digits_check_threshold, and a contributor's file can hold one)."""
    magnitude = abs(value)
    digits = max(1, math.floor((magnitude.bit_length() - 1) * math.log10(2)) + 1)  # at most one short
    if magnitude >= 10 ** digits:
        digits += 1
    if digits <= limit:
        return str(value)
    return f"a {'negative ' if value < 0 else ''}{digits:,}-digit number"


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def num(x: float | None, digits: int = 1) -> str:
    """Fixed decimals; '—' for None."""
    return f"{x:.{digits}f}" if _finite(x) else DASH


def rate(x: float | None) -> str:
    """A 0–1 rate with 3 decimals (spec §9.7 gives rates on 0.0–1.0)."""
    return num(x, 3)


def usd(x: float | None) -> str:
    """US dollars: 3 decimals from $0.01, up to 6 decimals below; "< $0.000001" for a positive amount below that
    (never "$0." for a cost that is not 0); '$0' for exactly 0; '—' for None, non-finite or negative (a cost is never
    negative: the schema refuses it). The number is :func:`usd_amount`'s."""
    amount = usd_amount(x)
    if not amount:
        return DASH
    return "< $" + amount[1:] if amount.startswith("<") else "$" + amount


def usd_amount(x: float | None) -> str:
    """The amount :func:`usd` shows, without the dollar sign (a download's number, rounded as the page shows it):
    ``0.013``, ``0.00042``, ``0``; ``<0.000001`` for a positive amount below the last decimal; "" for None,
    non-finite or negative."""
    if not _finite(x) or x < 0:
        return ""
    if x == 0:
        return "0"
    if x >= 0.01:
        return f"{x:.3f}"
    shown = f"{x:.6f}"
    return "<0.000001" if float(shown) == 0 else shown.rstrip("0")


def secs(x: float | None) -> str:
    """Seconds with 2 decimals and the unit."""
    return f"{x:.2f} s" if _finite(x) else DASH


def ci(bounds: tuple[float, float] | None, digits: int = 1) -> str:
    """'[a, b]' with ``digits`` decimals (1 for chrF++, 3 for the composite), or '—'."""
    if not bounds or not all(_finite(b) for b in bounds):
        return DASH
    return f"[{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]"


def pm(mean: float | None, spread: float | None, digits: int) -> str:
    """'mean ± spread' (replicate runs), or '—'."""
    if not _finite(mean):
        return DASH
    return f"{mean:.{digits}f}" + (f" ± {spread:.{digits}f}" if _finite(spread) else "")
