"""gettext catalogs (``.po``/``.mo``) via polib: msgid → msgstr pairs, plural forms and ``msgctxt`` kept as context.

Format family: GNU gettext (https://www.gnu.org/software/gettext/manual/html_node/PO-Files.html). The bytes are
decoded in the charset the catalog's header declares (``Content-Type: text/plain; charset=ISO-8859-15``; polib's
``detect_encoding``), UTF-8 when it declares none.

Line ends: polib splits the text it is given with ``str.splitlines`` (polib 1.2.0, ``_POFileParser.__init__``), which
also splits at U+0085, U+2028, U+2029, VT, FF and FS/GS/RS — characters a msgid or msgstr may hold (a UTF-8 catalog
with U+0085 inside a msgstr was refused: "Syntax error in po file"). polib is given :class:`_PoText`, the text whose
``splitlines`` splits at the PO format's line ends only (LF, CR LF, CR); polib itself parses.
"""

from __future__ import annotations

import gettext
import hashlib
import os
import re
from pathlib import Path

import polib

from mtboard.inputs.corpora.filters import Pair
from mtboard.inputs.corpora.importers.report import ImportReport
from mtboard.core.errors import InputError
from mtboard.core.safejson import read_bytes

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

_FREECIV_QUALIFIER_RE = re.compile(r"^\?[^:]{1,40}:")
_WESNOTH_CONTEXT_RE = re.compile(r"^([a-z_]{1,30})\^")
_PLURAL_RE = re.compile(r"nplurals\s*=\s*(\d+)\s*;\s*plural\s*=\s*([^;]+);?")


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


_PO_LINE_END = re.compile(r"\r\n|\r|\n")


class _PoText(str):
    """PO text for :func:`polib.pofile`: a ``str`` whose :meth:`splitlines` splits at ``\\n``, ``\\r\\n`` and
    ``\\r`` only (gettext's line ends), so U+0085, U+2028, U+2029, VT, FF, FS, GS and RS stay inside the line — inside
    the quoted string — they occur in."""

    def splitlines(self, keepends: bool = False) -> list[str]:  # type: ignore[override]
        text = str(self)
        out, last = [], 0
        for m in _PO_LINE_END.finditer(text):
            out.append(text[last:m.end() if keepends else m.start()])
            last = m.end()
        if last < len(text):
            out.append(text[last:])
        return out


def _decode_po(raw: bytes, where: str) -> str:
    """The PO text in the charset its header declares (polib.detect_encoding; UTF-8 when none or ``CHARSET``)."""
    enc = polib.detect_encoding(raw)
    codec = "utf-8-sig" if enc.lower().replace("_", "-") in ("utf-8", "utf8") else enc
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputError(f"bytes {exc.start}–{exc.end} are not valid {enc}, the charset the catalog's header "
                         "declares (Content-Type: …; charset=)", where=where,
                         fix=f"save the file as {enc} or correct the header's charset") from None


def _po_text(raw: bytes, where: str) -> _PoText:
    """The decoded catalog as :class:`_PoText`, ending with a line end (polib takes a string without one for a file
    name when such a file exists)."""
    text = _decode_po(raw, where)
    return _PoText(text if text.endswith(("\n", "\r")) else text + "\n")


def plural_indices(plural_forms: str | None, nplurals_seen: int) -> tuple[int, int]:
    """Which ``msgstr[i]`` translates the singular (n = 1) and which the plural (n = 2), from the catalog's
    ``Plural-Forms`` header evaluated with the standard library's gettext (``gettext.c2py``). Without a readable
    header: 0 and 1 (``min(1, nplurals_seen - 1)``). Example: ``nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4
    && (n%100<10 || n%100>=20) ? 1 : 2);`` (Polish) → ``(0, 1)``; ``nplurals=1; plural=0;`` (Japanese) → ``(0, 0)``.
    """
    m = _PLURAL_RE.search(plural_forms or "")
    if m:
        try:
            f = gettext.c2py(m.group(2).strip())
            return int(f(1)), int(f(2))
        except (ValueError, SyntaxError, RecursionError, ZeroDivisionError):
            pass
    return 0, min(1, max(0, nplurals_seen - 1))


def read_catalog(path: str | os.PathLike[str], report: ImportReport | None = None, *,
                 plurals: bool = True) -> list[Pair]:
    """Read a gettext ``.po`` or ``.mo`` file into pairs (msgid → msgstr).

    Skipped and counted in ``report`` (catalog-level rules): ``obsolete`` (``#~``), ``fuzzy``, ``untranslated``
    (empty msgstr), ``plural form missing`` (the form a plural pair needs is empty), and ``plural`` when ``plurals``
    is false. The header (msgid "") is metadata, never a pair. Plural entries give two pairs: msgid → the form for
    n = 1 and msgid_plural → the form for n = 2 (:func:`plural_indices`; one pair, msgid_plural's, when both are the
    same form, as in Japanese), tag ``msg-plural``, context ``plural form for n=1|2`` (after the msgctxt when there
    is one), locator suffixed `` msgstr[i]``. Contexts are split with :func:`split_context`; a translation that
    still carries a Freeciv/Wesnoth context prefix gets it removed too. ``locator`` is ``[msgctxt=<ctxt> ]
    msgid-sha256=<first 16 hex of SHA-256(msgid)>``; ``order`` is the catalog position.

    Raises InputError (naming the file) when the bytes are not in the declared charset or polib cannot parse them.
    """
    p = Path(path)
    report = report if report is not None else ImportReport()
    raw = read_bytes(p, max_bytes=MAX_INPUT_BYTES)
    try:
        cat = polib.mofile(raw) if p.suffix.lower() == ".mo" else polib.pofile(_po_text(raw, str(p)))
    except (OSError, ValueError, UnicodeDecodeError, LookupError) as exc:
        raise InputError(f"not a readable gettext catalog ({type(exc).__name__}: {str(exc)[:80]})", where=str(p),
                         fix="pass a .po or .mo file (msgfmt --check-format FILE shows where it breaks)") from None
    forms = cat.metadata.get("Plural-Forms")
    out: list[Pair] = []
    for i, e in enumerate(cat):
        if not e.msgid:
            continue  # polib keeps the header out of the entries; a stray empty msgid is no pair either
        if e.obsolete:
            report.skip("obsolete")
            continue
        if "fuzzy" in e.flags:
            report.skip("fuzzy")
            continue
        msgid, ctxt = split_context(e.msgid, e.msgctxt)
        if e.msgid_plural:
            if not plurals:
                report.skip("plural")
                continue
            strs = e.msgstr_plural
            if not any(strs.values()):
                report.skip("untranslated")
                continue
            one, two = plural_indices(forms, len(strs))
            sides = ([(1, msgid, one)] if one != two else []) + [(2, split_context(e.msgid_plural)[0], two)]
            for n, text, idx in sides:
                target = strs.get(idx, "")
                if not target:
                    report.skip("plural form missing")
                    continue
                note = f"plural form for n={n}"
                out.append(Pair(source=text, reference=split_context(target)[0],
                                locator=f"{_locator(ctxt, msgid)} msgstr[{idx}]", order=i, tag="msg-plural",
                                context=f"{ctxt}; {note}" if ctxt else note))
                report.kept += 1
            continue
        if not e.msgstr:
            report.skip("untranslated")
            continue
        msgstr, _ = split_context(e.msgstr)
        out.append(Pair(source=msgid, reference=msgstr, locator=_locator(ctxt, msgid), order=i, tag="msg",
                        context=ctxt))
        report.kept += 1
    return out
