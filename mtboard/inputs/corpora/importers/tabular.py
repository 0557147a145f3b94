"""Line- and record-based formats: TSV, CSV (RFC 4180, the standard library's csv module) and plain parallel text
(two files, one segment per line).

Records are split on ``\\n`` and ``\\r\\n`` only (:func:`mtboard.core.text.split_records`), never with
``str.splitlines``: U+2028, U+2029, U+0085, VT and FF are characters inside a segment, and the line numbers in error
messages are the ones an editor shows.
"""

from __future__ import annotations

import csv
import os

from mtboard.inputs.corpora.filters import Pair
from mtboard.inputs.corpora.importers.report import ImportReport
from mtboard.core.errors import InputError
from mtboard.core.safejson import read_bytes
from mtboard.core.text import split_records

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest upstream file read (bytes)."""

HEADER_NAMES = frozenset({"source", "src", "target", "tgt", "reference", "ref", "translation"})
"""Column names that make a CSV file's first record a header (also the two language codes)."""


def _read_utf8(path: str | os.PathLike[str]) -> str:
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"invalid UTF-8 at byte {exc.start}", where=f"{path}:{line}",
                         fix="save the file as UTF-8") from None


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


def read_csv(path: str | os.PathLike[str], report: ImportReport | None = None, *, source_lang: str | None = None,
             target_lang: str | None = None) -> list[Pair]:
    """Read a two-column CSV file (RFC 4180: comma-separated, fields quoted with ``"`` may hold commas, quotes doubled
    as ``""`` and line breaks; parsed by the csv module) as ``source,reference`` records, UTF-8 with an optional BOM.

    A first record whose two fields are column names (:data:`HEADER_NAMES` or the two language codes, any case) is a
    header (counted ``header``). Empty lines (``blank line``) and records whose fields are all blank (``blank
    record``) are skipped. Field text is kept as written (a quoted ``\r\n`` stays in the field). ``locator`` is
    ``line <n>``: the line the record starts on.

    Raises InputError naming file and line for a record that does not have 2 fields, a broken quote, or invalid UTF-8.
    """
    report = report if report is not None else ImportReport()
    text = _read_utf8(path)
    lines = [ln + "\n" for ln in text.split("\n")]  # the csv module sees \r\n and \n line ends only
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()  # a final line break does not start an empty record
    reader = csv.reader(lines, dialect="excel", strict=True)
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
            raise InputError(f"not RFC 4180 CSV: {exc}", where=f"{path}:{start}",
                             fix='quote fields that hold commas, quotes (as "") or line breaks') from None
        if all(not c.strip() for c in row):
            report.skip("blank record" if row else "blank line")
            continue
        if first and _is_header(row, source_lang, target_lang):
            first = False
            report.skip("header")
            continue
        first = False
        if len(row) != 2:
            raise InputError(f"expected 2 fields (source, reference), got {len(row)}", where=f"{path}:{start}",
                             fix='one "source","reference" record per line; quote fields that contain commas')
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
