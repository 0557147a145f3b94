"""XML interchange formats: TMX 1.4 and XLIFF 1.2 / 2.x, parsed with defusedxml: entity declarations and external
references are forbidden (XML bombs, XXE); a document type declaration without them is allowed, because OmegaT and
other CAT tools write ``<!DOCTYPE tmx SYSTEM "tmx11.dtd">`` into every TMX (the DTD is never fetched).

Inline codes (issue 14 part 1) become text or placeholders, and every conversion is recorded (the pair's ``note``
and the :class:`~mtboard.inputs.corpora.importers.report.ImportReport`):

=========================================  ====================================================================
element                                    becomes
=========================================  ====================================================================
TMX ``bpt ept it ph ut``, XLIFF 1.2        its content, the native code it stands for (``<b>``, ``%s``); when
``bpt ept it ph``                          empty, the placeholder ``{<element>_<id>}`` (id: ``x``, ``i`` or ``id``)
XLIFF 1.2 ``x bx ex``                      the placeholder ``{x_<id>}`` / ``{bx_<id>}`` / ``{ex_<id>}``
XLIFF 2 ``ph sc ec``                       the ``<originalData>`` text its ``dataRef`` names; else the
                                           placeholder ``{ph_<id>}`` / ``{sc_<id>}`` / ``{ec_<id>}``
XLIFF 2 ``pc``                             ``dataRefStart`` text + content + ``dataRefEnd`` text (content only
                                           when it has none)
TMX ``hi sub``, XLIFF ``g mrk sub``        their text (translatable content)
XLIFF 2 ``cp``                             the character ``hex`` names
XLIFF 2 ``sm em``                          nothing (annotation boundaries)
=========================================  ====================================================================

The placeholders match :data:`mtboard.core.text.BRACE`, so the placeholder checks compare them like any other; the same
id gives the same placeholder on both sides.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from mtboard.inputs.corpora.filters import Pair
from mtboard.inputs.corpora.importers.report import ImportReport
from mtboard.core.errors import InputError
from mtboard.core.languages import best_matches
from mtboard.core.safejson import read_bytes

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

_ID_RE = re.compile(r"[A-Za-z0-9_]{1,40}")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
XLIFF1_NAMESPACES = ("urn:oasis:names:tc:xliff:document:1.2", "urn:oasis:names:tc:xliff:document:1.1", "")
XLIFF2_NAMESPACE_PREFIX = "urn:oasis:names:tc:xliff:document:2."
XLIFF1_SKIP_STATES = frozenset({"new", "needs-translation", "needs-adaptation", "needs-l10n",
                                "needs-review-translation", "needs-review-adaptation", "needs-review-l10n"})
"""XLIFF 1.2 ``target/@state`` values of a target not (yet) a finished human translation: skipped and counted, like
fuzzy gettext entries."""


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _ns(tag: str) -> str:
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def parse_xml(path: str | os.PathLike[str], what: str):
    """The root element of an XML file read with :func:`mtboard.core.safejson.read_bytes` and parsed by defusedxml.

    Raises InputError naming the file for forbidden constructs (entity declarations, external references) and
    malformed XML (with line and column)."""
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    try:
        return fromstring(raw, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise InputError(f"forbidden XML construct ({type(exc).__name__})", where=str(path),
                         fix=f"remove the entity declarations from the {what} file's DOCTYPE") from None
    except ParseError as exc:
        raise InputError(f"malformed XML: {exc}", where=str(path), fix=f"pass a well-formed {what} file") from None


class _Inline:
    """Flattens a segment element to text, converting inline codes by :data:`_RULES` and counting conversions."""

    def __init__(self, rules: dict[str, str], data: dict[str, str] | None = None):
        self.rules = rules
        self.data = data or {}
        self.counts: Counter[str] = Counter()

    def placeholder(self, name: str, el) -> str:
        ident = el.get("id") or el.get("x") or el.get("i")
        self.counts[f"inline {name} → placeholder"] += 1
        return "{" + name + (f"_{ident}" if ident and _ID_RE.fullmatch(ident) else "") + "}"

    def text(self, el) -> str:
        parts = [el.text or ""]
        for child in el:
            parts.append(self.element(child))
            parts.append(child.tail or "")
        return "".join(parts)

    def element(self, el) -> str:
        name = _local(el.tag)
        rule = self.rules.get(name, "text")
        if rule == "text":
            return self.text(el)
        if rule == "drop":
            return ""
        if rule == "cp":
            try:
                self.counts["inline cp → character"] += 1
                return chr(int(el.get("hex", ""), 16))
            except (ValueError, OverflowError):
                return ""
        if rule == "native":  # content is the native code (TMX, XLIFF 1.2)
            native = self.text(el)
            if native:
                self.counts[f"inline {name} → text"] += 1
                return native
            return self.placeholder(name, el)
        if rule == "dataref":  # XLIFF 2 ph/sc/ec
            ref = el.get("dataRef")
            if ref in self.data:
                self.counts[f"inline {name} → text"] += 1
                return self.data[ref]
            return self.placeholder(name, el)
        if rule == "pc":  # XLIFF 2 paired code
            start, end = self.data.get(el.get("dataRefStart", "")), self.data.get(el.get("dataRefEnd", ""))
            if start is not None or end is not None:
                self.counts["inline pc → text"] += 1
            return (start or "") + self.text(el) + (end or "")
        return self.placeholder(name, el)  # "placeholder"

    def note(self) -> str | None:
        if not self.counts:
            return None
        return "inline codes: " + ", ".join(f"{k.removeprefix('inline ')} ×{v}" for k, v in sorted(self.counts.items()))


TMX_RULES = {"bpt": "native", "ept": "native", "it": "native", "ph": "native", "ut": "native"}
XLIFF1_RULES = {"bpt": "native", "ept": "native", "it": "native", "ph": "native", "x": "placeholder",
                "bx": "placeholder", "ex": "placeholder"}
XLIFF2_RULES = {"ph": "dataref", "sc": "dataref", "ec": "dataref", "pc": "pc", "cp": "cp", "sm": "drop", "em": "drop"}


def _ambiguous(where: str, which: str, lang: str, tags: list[str]) -> InputError:
    return InputError(f"{len(tags)} tuvs match {which} {lang} ({', '.join(tags)})", where=where,
                      fix=f"pass the exact tag of the one you mean with {which} (e.g. {tags[0]})")


def read_tmx(path: str | os.PathLike[str], source_lang: str, target_lang: str,
             report: ImportReport | None = None) -> list[Pair]:
    """Read a TMX file: for each ``<tu>``, the ``<tuv>`` of each language gives source and reference.

    A ``tuv``'s language is its ``xml:lang`` (TMX 1.1: ``lang``). The one whose tag equals the wanted tag wins
    (BCP 47, case-insensitive); else the one with the same primary subtag
    (:func:`mtboard.core.languages.best_matches`). Units lacking either language are skipped (``no <lang> tuv``) and
    units with an empty side too (``empty segment``). Inline codes: this module's table. ``locator`` is
    ``tuid=<id>`` when present, else ``tu <n>``.

    Raises InputError on malformed or forbidden XML, a root that is not ``<tmx>``, and a unit with two candidates
    for one language (``pt-PT`` and ``pt-BR`` for ``--target-lang pt``), naming the unit.
    """
    report = report if report is not None else ImportReport()
    root = parse_xml(path, "TMX")
    if _local(root.tag) != "tmx":
        raise InputError(f"root element is <{_local(root.tag)[:30]}>, not <tmx>", where=str(path),
                         fix="pass a TMX file")
    out: list[Pair] = []
    for n, tu in enumerate(root.iter("tu"), 1):
        tuid = tu.get("tuid")
        loc = f"tuid={tuid}" if tuid else f"tu {n}"
        tuvs = [t for t in tu.findall("tuv") if t.find("seg") is not None]
        langs = [t.get(_XML_LANG) or t.get("lang") for t in tuvs]
        chosen = []
        for which, lang in (("--source-lang", source_lang), ("--target-lang", target_lang)):
            idx = best_matches(langs, lang)
            if len(idx) > 1:
                raise _ambiguous(f"{path}: {loc}", which, lang, [str(langs[i]) for i in idx])
            chosen.append(idx[0] if idx else None)
        si, ti = chosen
        if si is None or ti is None or si == ti:
            report.skip(f"no {source_lang if si is None else target_lang} tuv")
            continue
        inline = _Inline(TMX_RULES)
        src, ref = inline.text(tuvs[si].find("seg")), inline.text(tuvs[ti].find("seg"))
        if not src.strip() or not ref.strip():
            report.skip("empty segment")
            continue
        report.notes.update(inline.counts)
        out.append(Pair(source=src, reference=ref, locator=loc, order=n, tag="tu", note=inline.note()))
        report.kept += 1
    return out


def _lang_ok(declared: str | None, wanted: str) -> bool:
    return not declared or bool(best_matches([declared], wanted))


def read_xliff(path: str | os.PathLike[str], source_lang: str, target_lang: str,
               report: ImportReport | None = None) -> list[Pair]:
    """Read an XLIFF 1.2 (also 1.0/1.1) or 2.x file: one pair per translation unit (``trans-unit`` / ``unit``).

    Languages: a ``file`` (1.x: ``source-language``/``target-language``) or document (2.x: ``srcLang``/``trgLang``)
    whose declared languages do not match the wanted ones (exact tag or primary subtag) is skipped and counted
    (``file for another language pair``); when no unit is left for that reason the file is refused.

    Skipped and counted: ``translate=no`` units; ``untranslated`` (no target or an empty one); XLIFF 1.2 targets in a
    :data:`XLIFF1_SKIP_STATES` state (``state=<value>``); XLIFF 2 segments whose ``state`` is ``initial`` (an
    omitted state is read as translated: tools omit it). An XLIFF 2 unit's text is its segments and ignorables in
    order (an ignorable without a target contributes its source). Inline codes: this module's table. ``locator``
    is ``unit <id>`` (with ``file <original|id>`` before it when the document has several files).

    Raises InputError on malformed or forbidden XML, a root that is not ``<xliff>``, or a version this reader does
    not know.
    """
    report = report if report is not None else ImportReport()
    root = parse_xml(path, "XLIFF")
    if _local(root.tag) != "xliff":
        raise InputError(f"root element is <{_local(root.tag)[:30]}>, not <xliff>", where=str(path),
                         fix="pass an XLIFF file")
    ns = _ns(root.tag)
    if ns.startswith(XLIFF2_NAMESPACE_PREFIX):
        return _read_xliff2(root, str(path), source_lang, target_lang, report)
    if ns in XLIFF1_NAMESPACES:
        return _read_xliff1(root, str(path), source_lang, target_lang, report)
    raise InputError(f"unknown XLIFF namespace {ns[:60]!r} (version {root.get('version', '?')[:10]})",
                     where=str(path), fix="pass XLIFF 1.2 or 2.x")


def _units(el, name: str):
    """``name`` elements under ``el`` in document order, through groups (not inside other units)."""
    for child in el:
        local = _local(child.tag)
        if local == name:
            yield child
        elif local in ("group", "body"):
            yield from _units(child, name)


def _finish(pairs: list[Pair], report: ImportReport, wrong_language: int, where: str, source_lang: str,
            target_lang: str, declared: str) -> list[Pair]:
    if wrong_language:
        report.skip("file for another language pair", wrong_language)
        if not pairs and report.kept == 0:
            raise InputError(f"no unit is {source_lang}→{target_lang}: the file declares {declared}", where=where,
                             fix="pass --source-lang/--target-lang as the file declares them")
    return pairs


def _read_xliff1(root, where: str, source_lang: str, target_lang: str, report: ImportReport) -> list[Pair]:
    files = [f for f in root if _local(f.tag) == "file"]
    out: list[Pair] = []
    wrong = 0
    declared = ""
    order = 0
    for f in files:
        fname = f.get("original") or ""
        units = list(_units(f, "trans-unit"))
        if not (_lang_ok(f.get("source-language"), source_lang) and _lang_ok(f.get("target-language"), target_lang)):
            wrong += len(units)
            declared = f"{f.get('source-language')}→{f.get('target-language')}"
            continue
        for u in units:
            order += 1
            uid = u.get("id") or str(order)
            loc = (f"file {fname} " if len(files) > 1 and fname else "") + f"unit {uid}"
            if u.get("translate") == "no":
                report.skip("translate=no")
                continue
            src_el = next((c for c in u if _local(c.tag) == "source"), None)
            tgt_el = next((c for c in u if _local(c.tag) == "target"), None)
            state = tgt_el.get("state") if tgt_el is not None else None
            if state in XLIFF1_SKIP_STATES:
                report.skip(f"state={state}")
                continue
            inline = _Inline(XLIFF1_RULES)
            src = inline.text(src_el) if src_el is not None else ""
            ref = inline.text(tgt_el) if tgt_el is not None else ""
            if not src.strip() or not ref.strip():
                report.skip("untranslated")
                continue
            report.notes.update(inline.counts)
            out.append(Pair(source=src, reference=ref, locator=loc, order=order, tag="trans-unit",
                            note=inline.note()))
            report.kept += 1
    return _finish(out, report, wrong, where, source_lang, target_lang, declared)


def _read_xliff2(root, where: str, source_lang: str, target_lang: str, report: ImportReport) -> list[Pair]:
    files = [f for f in root if _local(f.tag) == "file"]
    units_of = [(f, list(_units(f, "unit"))) for f in files]
    if not (_lang_ok(root.get("srcLang"), source_lang) and _lang_ok(root.get("trgLang"), target_lang)):
        return _finish([], report, sum(len(u) for _, u in units_of), where, source_lang, target_lang,
                       f"{root.get('srcLang')}→{root.get('trgLang')}")
    out: list[Pair] = []
    order = 0
    for f, units in units_of:
        fid = f.get("original") or f.get("id") or ""
        for u in units:
            order += 1
            uid = u.get("id") or str(order)
            loc = (f"file {fid} " if len(files) > 1 and fid else "") + f"unit {uid}"
            if u.get("translate") == "no":
                report.skip("translate=no")
                continue
            data = {d.get("id"): _Inline({}).text(d) for od in u if _local(od.tag) == "originalData"
                    for d in od if _local(d.tag) == "data"}
            inline = _Inline(XLIFF2_RULES, data)
            why = _xliff2_unit(u, inline)
            if isinstance(why, str):
                report.skip(why)
                continue
            src, ref = why
            report.notes.update(inline.counts)
            out.append(Pair(source=src, reference=ref, locator=loc, order=order, tag="unit", note=inline.note()))
            report.kept += 1
    return out


def _xliff2_unit(u, inline: _Inline) -> tuple[str, str] | str:
    """(source, target) text of an XLIFF 2 unit, or the reason it is skipped."""
    src: list[str] = []
    tgt: list[str] = []
    segments = 0
    text: Callable = inline.text
    for part in u:
        kind = _local(part.tag)
        if kind not in ("segment", "ignorable"):
            continue
        s_el = next((c for c in part if _local(c.tag) == "source"), None)
        t_el = next((c for c in part if _local(c.tag) == "target"), None)
        if kind == "segment":
            segments += 1
            if part.get("state") == "initial":
                return "state=initial"
            if t_el is None:
                return "untranslated"
        src.append(text(s_el) if s_el is not None else "")
        tgt.append(text(t_el) if t_el is not None else src[-1])
    s, t = "".join(src), "".join(tgt)
    if not segments or not s.strip() or not t.strip():
        return "untranslated"
    return s, t
