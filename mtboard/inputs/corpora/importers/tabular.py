"""Line- and record-based formats: TSV, CSV (RFC 4180, the standard library's csv module; comma, semicolon, tab or
pipe delimited) and plain parallel text (two files, one segment per line).

Records are split on ``\\n`` and ``\\r\\n`` only (:func:`mtboard.core.text.split_records`), never with
``str.splitlines``: U+2028, U+2029, U+0085, VT and FF are characters inside a segment, and the line numbers in error
messages are the ones an editor shows.

Files are UTF-8; a byte-order mark is dropped, and a UTF-16 or UTF-32 file with its byte-order mark (Excel's "Unicode
Text", Notepad's "Unicode") is read in that encoding. Excel writes "CSV" with a semicolon wherever the decimal separator
is a comma (the list separator of the Windows region settings; Microsoft, "Import or export text (.txt or .csv)
files"): :func:`read_csv` finds the delimiter (:func:`sniff_delimiter`) unless ``--delimiter`` names it.
"""

from __future__ import annotations

import codecs
import csv
import os
from collections.abc import Callable

from mtboard.inputs.corpora.filters import Pair
from mtboard.inputs.corpora.importers.report import ImportReport
from mtboard.core.errors import InputError
from mtboard.core.safejson import read_bytes
from mtboard.core.text import split_records

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

HEADER_NAMES = frozenset({"source", "src", "target", "tgt", "reference", "ref", "translation"})
"""Column names that make a CSV file's first record a header (also the two language codes)."""


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
"""Byte-order marks and the codec that reads the file and drops the mark (UTF-32 before UTF-16: FF FE 00 00 starts
with FF FE)."""


def _read_utf8(path: str | os.PathLike[str]) -> str:
    """The file's text: UTF-8 (a UTF-8 byte-order mark dropped), or UTF-16/UTF-32 when it starts with their
    byte-order mark (dropped too). Raises InputError naming the file, the line and the byte offset of an undecodable
    byte."""
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    codec = next((c for bom, c in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        name = "UTF-8" if codec == "utf-8-sig" else codec.upper()
        line = raw[:exc.start].decode(codec, errors="replace").count("\n") + 1
        raise InputError(f"invalid {name} at byte {exc.start}", where=f"{path}:{line}",
                         fix=f"save the file as UTF-8{'' if name == 'UTF-8' else f' (or valid {name})'}") from None


def read_tsv(path: str | os.PathLike[str], report: ImportReport | None = None) -> list[Pair]:
    """Read ``source<TAB>reference`` lines (UTF-8, an optional BOM). Blank lines and lines starting with ``#`` are
    skipped (counted as ``blank line`` / ``comment``). Lines end at ``\\n`` or ``\\r\\n`` only.

    Raises InputError (naming file and line) for a line without exactly one tab or for invalid UTF-8.
    ``locator`` is ``line <n>`` (1-based).
    """
    report = report if report is not None else ImportReport()
    out: list[Pair] = []
    for n, line in enumerate(split_records(_read_utf8(path)), 1):
        if not line.strip():
            report.skip("blank line")
            continue
        if line.startswith("#"):
            report.skip("comment")
            continue
        cols = line.split("\t")
        if len(cols) != 2:
            raise InputError(f"expected 2 tab-separated columns (source, reference), got {len(cols)}",
                             where=f"{path}:{n}", fix="one 'source<TAB>reference' pair per line")
        out.append(Pair(source=cols[0], reference=cols[1], locator=f"line {n}", order=n, tag="tsv"))
        report.kept += 1
    return out


def _is_header(row: list[str], source_lang: str | None, target_lang: str | None) -> bool:
    names = {c.strip().lower() for c in row}
    known = HEADER_NAMES | {x.lower() for x in (source_lang, target_lang) if x}
    return len(row) == 2 and names <= known


DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
"""The delimiters a CSV file may use (``--delimiter``), in the order :func:`sniff_delimiter` tries them: comma (RFC
4180), semicolon (Excel where the decimal separator is a comma), tab, pipe."""

SNIFF_CHARS = 4096
"""How much of a CSV file (characters, cut at a line end) :class:`csv.Sniffer` looks at. Small on purpose: the
sniffer's quote pattern is quadratic on hostile text (``',"a' * n``: 0.08 s at 4,096 characters, 21 s at 65,536,
measured), and :func:`sniff_delimiter` checks its guess on the whole file anyway."""


def delimiter_name(delimiter: str) -> str:
    """How messages name a delimiter: ``tab``, ``';' (semicolon)``, ``',' (comma)``, ``'|' (pipe)``."""
    return "tab" if delimiter == "\t" else f"{delimiter!r} ({DELIMITERS.get(delimiter, 'delimiter')})"


def _csv_lines(text: str) -> list[str]:
    """``text`` as the csv module's input lines: split at ``\\n`` only (so U+2028, U+0085 … stay inside a field and a
    quoted ``\\r\\n`` reaches the module whole), each line keeping its end; no empty last line."""
    lines = [ln + "\n" for ln in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()  # a final line break does not start an empty record
    return lines


def _fits(lines: list[str], delimiter: str, fits: Callable[[list[str]], bool]) -> bool:
    """True when every record that is not blank, read with ``delimiter`` (RFC 4180 quoting otherwise), passes
    ``fits`` and no record is broken."""
    try:
        return all(fits(row) for row in csv.reader(lines, dialect="excel", delimiter=delimiter, strict=True)
                   if any(c.strip() for c in row))
    except csv.Error:
        return False


def sniff_delimiter(text: str, fits: Callable[[list[str]], bool] = lambda row: len(row) == 2) -> str:
    """The delimiter of a CSV text, one of :data:`DELIMITERS`: :class:`csv.Sniffer` (Python docs, ``csv.Sniffer
    .sniff`` with ``delimiters=",;\\t|"``) guesses from the first :data:`SNIFF_CHARS` characters; its guess is kept
    when every record of the whole text read with it passes ``fits`` (default: exactly two fields, source and
    reference); else the first of :data:`DELIMITERS` with which every record does. When none does, the guess (a
    comma when the sniffer cannot tell), so that the reader's error names what it used.

    Examples: ``'source;target\\r\\nOpen the file.;Abra el archivo.\\r\\n'`` → ``';'``; ``'"a;b","c;d"\\n'`` → ``','``;
    ``'Hello, world.;Hola, mundo.\\n'`` → ``';'`` (the sniffer prefers ``,``, which gives three fields)."""
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS and "\n" in sample:
        sample = sample[:sample.rindex("\n") + 1]
    try:
        guess = csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:  # "Could not determine delimiter"
        guess = ","
    lines = _csv_lines(text)
    return next((d for d in dict.fromkeys([guess, *DELIMITERS]) if _fits(lines, d, fits)), guess)


def read_csv(path: str | os.PathLike[str], report: ImportReport | None = None, *, source_lang: str | None = None,
             target_lang: str | None = None, delimiter: str | None = None) -> list[Pair]:
    """Read a two-column CSV file (RFC 4180: fields quoted with ``"`` may hold the delimiter, quotes doubled as ``""``
    and line breaks; parsed by the csv module) as ``source<delimiter>reference`` records, UTF-8 with an optional BOM
    (UTF-16/32 with theirs). ``delimiter``: one of :data:`DELIMITERS`, or None to find it
    (:func:`sniff_delimiter`: Excel's semicolon CSV reads without an option); the one used is noted in ``report``
    (``delimiter ';' (semicolon), detected``).

    A first record whose two fields are column names (:data:`HEADER_NAMES` or the two language codes, any case) is a
    header (counted ``header``). Empty lines (``blank line``) and records whose fields are all blank (``blank
    record``) are skipped. Field text is kept as written (a quoted ``\r\n`` stays in the field; U+2028, U+2029,
    U+0085, VT and FF are characters of a field, never record ends). ``locator`` is ``line <n>``: the line the record
    starts on.

    Raises InputError naming file and line for a record that does not have 2 fields or a broken quote (both name the
    delimiter used and suggest ``--delimiter``), invalid UTF-8, or a delimiter not in :data:`DELIMITERS`.
    """
    report = report if report is not None else ImportReport()
    text = _read_utf8(path)
    if delimiter is not None and delimiter not in DELIMITERS:
        raise InputError(f"unknown CSV delimiter {delimiter!r}", where=str(path), field="delimiter",
                         fix="use one of: , ; tab |")
    how = "given" if delimiter is not None else "detected"
    used = delimiter if delimiter is not None else sniff_delimiter(text)
    said = f"{delimiter_name(used)}, {how}"
    report.facts.append(f"delimiter {said}")
    others = " / ".join("tab" if d == "\t" else repr(d) for d in DELIMITERS if d != used)
    hint = f"or pass --delimiter {others} when the file uses another"
    reader = csv.reader(_csv_lines(text), dialect="excel", delimiter=used, strict=True)
    out: list[Pair] = []
    start = 1
    first = True
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"not RFC 4180 CSV with delimiter {said}: {exc}", where=f"{path}:{start}",
                             fix=f'quote fields that hold the delimiter, quotes (as "") or line breaks; {hint}'
                             ) from None
        if all(not c.strip() for c in row):
            report.skip("blank record" if row else "blank line")
            continue
        if first and _is_header(row, source_lang, target_lang):
            first = False
            report.skip("header")
            continue
        first = False
        if len(row) != 2:
            raise InputError(f"expected 2 fields (source, reference), got {len(row)} with delimiter {said}",
                             where=f"{path}:{start}",
                             fix=f"one source{'<TAB>' if used == chr(9) else used}reference record per line, fields "
                                 f"that contain the delimiter quoted (\"…\"); {hint}")
        src, ref = row
        out.append(Pair(source=src, reference=ref, locator=f"line {start}", order=start, tag="csv"))
        report.kept += 1
    return out


def read_parallel(source_path: str | os.PathLike[str], target_path: str | os.PathLike[str],
                  report: ImportReport | None = None) -> list[Pair]:
    """Read two plain UTF-8 text files with one segment per line, line *n* of one the translation of line *n* of the
    other (Moses/OPUS style ``corpus.en`` + ``corpus.es``). Lines end at ``\\n`` or ``\\r\\n`` only. A line blank on
    both sides is skipped (``blank line``), blank on one side only skipped as ``one side blank``.

    Raises InputError naming both files when their line counts differ (the alignment would be a guess).
    ``locator`` is ``line <n>``.
    """
    report = report if report is not None else ImportReport()
    a = split_records(_read_utf8(source_path))
    b = split_records(_read_utf8(target_path))
    if len(a) != len(b):
        raise InputError(f"{len(a)} lines in {os.fspath(source_path)} but {len(b)} in {os.fspath(target_path)}",
                         where=os.fspath(target_path), fix="pass two files with one segment per line, aligned line "
                                                             "by line")
    out: list[Pair] = []
    for n, (s, r) in enumerate(zip(a, b), 1):
        if not s.strip() and not r.strip():
            report.skip("blank line")
            continue
        if not s.strip() or not r.strip():
            report.skip("one side blank")
            continue
        out.append(Pair(source=s, reference=r, locator=f"line {n}", order=n, tag="line"))
        report.kept += 1
    return out
