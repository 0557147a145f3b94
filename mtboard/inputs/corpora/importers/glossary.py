"""Glossaries for terminology adherence (docs/SCORING_SPEC.md §2.4): TBX (ISO 30042: TBX-Basic/TBX 2 ``termEntry``
/ ``langSet`` / ``tig``·``ntig`` and TBX 3 ``conceptEntry`` / ``langSec`` / ``termSec``, parsed with defusedxml like
the other XML formats) and CSV (RFC 4180: ``source,target[,target…]``, further columns are alternative renderings).

:func:`attach_glossary` keeps, on each corpus entry, the terms that occur in its source
(:func:`mtboard.core.text.contains_term`), so the corpus file carries what the metric needs (``Entry.glossary``).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence

from mtboard.inputs.corpora.importers.interchange import _local, parse_xml
from mtboard.inputs.corpora.importers.tabular import _csv_lines, _is_header, _read_utf8, delimiter_name, sniff_delimiter
from mtboard.core.errors import InputError
from mtboard.core.languages import same_language
from mtboard.core.schema import Entry, GlossaryTerm
from mtboard.core.text import contains_term, is_blank

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_LAYOUT = re.compile("[^\\S\x85\u2028\u2029]+")
"""A run of white space in a term's text (its layout in the file: XML 1.0 §2.3 white space, and the other spaces
``str.split`` knew), folded to one space; U+0085, U+2028 and U+2029 are characters of the term, kept (issue 33 item
6; ``" ".join(text.split())`` made them spaces)."""


def _merge(terms: list[tuple[str, list[str]]]) -> list[GlossaryTerm]:
    """One GlossaryTerm per source term (case-folded), renderings merged in first-seen order."""
    out: dict[str, tuple[str, list[str]]] = {}
    for src, targets in terms:
        key = src.strip().casefold()
        kept = out.setdefault(key, (src.strip(), []))[1]
        for t in targets:
            if t.strip() and t.strip() not in kept:
                kept.append(t.strip())
    return [GlossaryTerm(source=s, targets=t) for s, t in out.values() if t]


def read_tbx(path: str | os.PathLike[str], source_lang: str, target_lang: str) -> list[GlossaryTerm]:
    """Terms of a TBX file: for each concept entry, every source-language term paired with all its target-language
    terms (language sets matched with :func:`mtboard.core.languages.same_language`: ``en-US`` is English). Concepts
    without a term on both sides are skipped.

    Raises InputError naming the file for malformed or forbidden XML, a root that is not ``tbx``/``martif``, or no
    concept with terms in both languages.
    """
    root = parse_xml(path, "TBX")
    if _local(root.tag) not in ("tbx", "martif"):
        raise InputError(f"root element is <{_local(root.tag)}>, not <tbx> or <martif>", where=str(path),
                         fix="pass a TBX file")
    pairs: list[tuple[str, list[str]]] = []
    for concept in root.iter():
        if _local(concept.tag) not in ("termEntry", "conceptEntry"):
            continue
        by_side: dict[str, list[str]] = {"src": [], "tgt": []}
        for lang_set in concept:
            if _local(lang_set.tag) not in ("langSet", "langSec"):
                continue
            lang = lang_set.get(_XML_LANG) or lang_set.get("lang") or ""
            side = "src" if lang and same_language(lang, source_lang) else \
                "tgt" if lang and same_language(lang, target_lang) else None
            if side is None:
                continue
            for el in lang_set.iter():
                if _local(el.tag) == "term":
                    text = "".join(el.itertext())
                    if not is_blank(text):
                        by_side[side].append(_LAYOUT.sub(" ", text).strip(" "))
        pairs += [(s, by_side["tgt"]) for s in by_side["src"] if by_side["tgt"]]
    terms = _merge(pairs)
    if not terms:
        raise InputError(f"no concept has terms in both {source_lang} and {target_lang}", where=str(path),
                         fix="check the langSet/langSec xml:lang values against --source-lang/--target-lang")
    return terms


def read_glossary_csv(path: str | os.PathLike[str], source_lang: str | None = None,
                      target_lang: str | None = None) -> list[GlossaryTerm]:
    """Terms of a CSV glossary (RFC 4180, UTF-8 with an optional BOM; comma, semicolon, tab or pipe delimited, found
    by :func:`mtboard.inputs.corpora.importers.tabular.sniff_delimiter` as the delimiter with which every record has
    a term and a rendering; two that fit alike, with no header or spacing rule to tell them apart, are refused):
    ``source,target[,target…]`` per record; a first record of column names (``source,target`` or the two language
    codes) is a header; blank records are skipped. Records end at ``\\n`` or ``\\r\\n`` (at ``\\r`` in a file
    with no LF; U+2028, U+2029, U+0085 are characters of a term). Raises InputError naming file and line (and the
    delimiter used) for a record with fewer than 2 fields or broken quoting, or no term at all, and naming the file
    for an ambiguous delimiter."""
    text = _read_utf8(path)
    delimiter = sniff_delimiter(text, lambda row: len(row) >= 2, where=str(path),
                                is_header=lambda row: _is_header(row[:2], source_lang, target_lang))
    said = delimiter_name(delimiter)
    reader = csv.reader(_csv_lines(text), dialect="excel", delimiter=delimiter, strict=True)
    pairs: list[tuple[str, list[str]]] = []
    try:
        for i, row in enumerate(reader):
            if all(not c.strip() for c in row):
                continue
            if i == 0 and _is_header(row[:2], source_lang, target_lang):
                continue
            if len(row) < 2 or not row[0].strip() or not any(c.strip() for c in row[1:]):
                raise InputError(f"expected a term and at least one rendering, got {len(row)} field(s) with "
                                 f"delimiter {said}", where=f"{path}:{reader.line_num}",
                                 fix='one "term","rendering"[,...] per line, delimited by a comma, semicolon, tab '
                                     'or pipe')
            pairs.append((row[0], row[1:]))
    except csv.Error as exc:
        raise InputError(f"not RFC 4180 CSV with delimiter {said}: {exc}", where=f"{path}:{reader.line_num}",
                         fix='quote fields that hold the delimiter or quotes (as "")') from None
    terms = _merge(pairs)
    if not terms:
        raise InputError("the glossary has no term", where=str(path), fix="add term,rendering records")
    return terms


def read_glossary(path: str | os.PathLike[str], source_lang: str, target_lang: str) -> list[GlossaryTerm]:
    """A glossary by suffix: ``.tbx`` (or ``.xml``) → :func:`read_tbx`, ``.csv`` → :func:`read_glossary_csv`.
    Raises InputError for another suffix."""
    suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
    if suffix in ("tbx", "xml"):
        return read_tbx(path, source_lang, target_lang)
    if suffix == "csv":
        return read_glossary_csv(path, source_lang, target_lang)
    raise InputError(f"unknown glossary format .{suffix}", where=os.fspath(path), fix="pass a .tbx or .csv file")


def attach_glossary(entries: Sequence[Entry], terms: Sequence[GlossaryTerm]) -> list[Entry]:
    """Each entry with the glossary terms that occur in its source (whole words, case-folded; in glossary order);
    entries without any keep an empty glossary."""
    return [e.model_copy(update={"glossary": [t for t in terms if contains_term(e.source, t.source)]}) for e in entries]


__all__ = ["attach_glossary", "read_glossary", "read_glossary_csv", "read_tbx"]
