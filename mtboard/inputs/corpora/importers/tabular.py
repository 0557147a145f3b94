"""Line- and record-based formats: TSV, CSV (RFC 4180, the standard library's csv module; comma, semicolon, tab or
pipe delimited) and plain parallel text (two files, one segment per line).

Records are split on ``\\n`` and ``\\r\\n`` only (:func:`mtboard.core.text.split_records`; a CSV file with no LF
at all, on ``\\r``), never with
``str.splitlines``: U+2028, U+2029, U+0085, VT and FF are characters inside a segment, and the line numbers in error
messages are the ones an editor shows.

Files are UTF-8; a byte-order mark is dropped, and a UTF-16 or UTF-32 file with its byte-order mark (Excel's "Unicode
Text", Notepad's "Unicode") is read in that encoding. Excel writes "CSV" with a semicolon wherever the decimal separator
is a comma (the list separator of the Windows region settings; Microsoft, "Import or export text (.txt or .csv)
files"), and may start it with a ``sep=;`` line: :func:`read_csv` takes the delimiter from ``--delimiter``, else from
that line (:func:`sep_line`), else finds it (:func:`sniff_delimiter`, which refuses a file two delimiters fit alike
rather than guess). A CSV file with CR line ends and no LF (classic Mac OS Excel) ends its records at CR.
"""

from __future__ import annotations

import codecs
import csv
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

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
    byte, or of a NUL (U+0000: no text file holds one; UTF-16 or UTF-32 without its byte-order mark is full of them,
    and read as UTF-8 would be refused for the wrong reason, e.g. a stray CR)."""
    raw = read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    codec = next((c for bom, c in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        text = raw.decode(codec)
        if "\0" in text:
            at = text.index("\0")
            raise InputError(f"a NUL character at character {at} (UTF-16 or UTF-32 without a byte-order mark?)",
                             where=f"{path}:{text.count(chr(10), 0, at) + 1}",
                             fix="save the file as UTF-8 (or UTF-16 with its byte-order mark)")
        return text
    except UnicodeDecodeError as exc:
        name = "UTF-8" if codec == "utf-8-sig" else codec.upper()
        line = raw[:exc.start].decode(codec, errors="replace").count("\n") + 1
        raise InputError(f"invalid {name} at byte {exc.start}", where=f"{path}:{line}",
                         fix=f"save the file as UTF-8{'' if name == 'UTF-8' else f' (or valid {name})'}") from None


def read_tsv(path: str | os.PathLike[str], report: ImportReport | None = None, *, source_lang: str | None = None,
             target_lang: str | None = None) -> list[Pair]:
    """Read ``source<TAB>reference`` lines (UTF-8, an optional BOM). Blank lines and lines starting with ``#`` are
    skipped (counted as ``blank line`` / ``comment``). Lines end at ``\n`` or ``\r\n`` only.

    A first record (the first line that is neither blank nor a comment) whose two columns are column names is a
    header and skipped (counted ``header``) — the CSV reader's rule (:func:`read_csv`): each name one of
    :data:`HEADER_NAMES` or ``source_lang``/``target_lang``, any case, white space around them ignored
    (``source<TAB>target``, ``src<TAB>tgt``, ``en<TAB>es``). Later records with those words are entries.

    Raises InputError (naming file and line) for a line without exactly one tab or for invalid UTF-8.
    ``locator`` is ``line <n>`` (1-based).
    """
    report = report if report is not None else ImportReport()
    out: list[Pair] = []
    first = True
    for n, line in enumerate(split_records(_read_utf8(path)), 1):
        if not line.strip():
            report.skip("blank line")
            continue
        if line.startswith("#"):
            report.skip("comment")
            continue
        cols = line.split("\t")
        if first and _is_header(cols, source_lang, target_lang):
            first = False
            report.skip("header")
            continue
        first = False
        if len(cols) != 2:
            raise InputError(f"expected 2 tab-separated columns (source, reference), got {len(cols)}",
                             where=f"{path}:{n}", fix="one 'source<TAB>reference' pair per line")
        out.append(Pair(source=cols[0], reference=cols[1], locator=f"line {n}", order=n, tag="tsv"))
        report.kept += 1
    return out


def _is_header(row: list[str], source_lang: str | None, target_lang: str | None) -> bool:
    """Whether the two-field ``row`` names the columns: every field (stripped, any case) one of :data:`HEADER_NAMES`
    or the two language codes. The header rule of CSV and TSV files and CSV glossaries."""
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
    """``text`` as the csv module's input lines, each keeping its end; no empty last line. Lines end at ``\\n`` (so
    U+2028, U+0085 … stay inside a field and a quoted ``\\r\\n`` reaches the module whole) — or, in a text with a
    CR and no LF at all (classic Mac OS Excel, "CSV (Macintosh)"), at ``\\r`` (the csv module ends a record at a
    line's final CR and keeps a CR inside a quoted field)."""
    end = "\r" if "\r" in text and "\n" not in text else "\n"
    lines = [ln + end for ln in text.split(end)]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()  # a final line break does not start an empty record
    return lines


_SEP_LINE = re.compile(r"sep=([^\r\n])(?:\r\n|\n|\r|\Z)", re.IGNORECASE)


def sep_line(text: str, where: str = "") -> tuple[str | None, str]:
    """Excel's delimiter line: a first line ``sep=;`` (``sep=,``, ``sep=<TAB>``, ``sep=|``; Excel writes it and
    reads the file with that delimiter, LibreOffice Calc too) names the delimiter and is no record. Returns
    ``(delimiter, text after the line)``, or ``(None, text)`` when the first line is not one.
    Raises InputError (``where``: the file) for a ``sep=`` line naming a delimiter not in :data:`DELIMITERS`."""
    m = _SEP_LINE.match(text)
    if m is None:
        return None, text
    if m.group(1) not in DELIMITERS:
        raise InputError(f"the first line {m.group(0).rstrip()!r} names delimiter {m.group(1)!r}, which mtboard does "
                         "not read", where=f"{where}:1" if where else None,
                         fix="save the file with a comma, semicolon, tab or pipe delimiter")
    return m.group(1), text[m.end():]


@dataclass
class _Fit:
    """How the records that are not blank read with one delimiter: the first one, whether the delimiter ever has
    white space just before or after it (``spaced``), whether it is always followed by white space (``prose``)."""

    first: list[str] | None = None
    spaced: bool = False
    prose: bool = True


def _fit(lines: list[str], delimiter: str, fits: Callable[[list[str]], bool]) -> _Fit | None:
    """:class:`_Fit` of ``lines`` read with ``delimiter`` (RFC 4180 quoting otherwise), in one pass without keeping
    the records; None when a record fails ``fits`` or is broken (a quote never closed, text after a closing quote, a
    stray CR)."""
    out = _Fit()
    try:
        for row in csv.reader(lines, dialect="excel", delimiter=delimiter, strict=True):
            if not any(c.strip() for c in row):
                continue
            if not fits(row):
                return None
            if out.first is None:
                out.first = row
            for a, b in zip(row, row[1:]):
                after = b[:1].isspace()
                out.spaced = out.spaced or after or a[-1:].isspace()
                out.prose = out.prose and after
    except csv.Error:
        return None
    return out


def sniff_delimiter(text: str, fits: Callable[[list[str]], bool] = lambda row: len(row) == 2, *,
                    is_header: Callable[[list[str]], bool] | None = None, where: str = "") -> str:
    """The delimiter of a CSV text, one of :data:`DELIMITERS`. The candidates are the delimiters with which every
    record that is not blank is well formed (RFC 4180) and passes ``fits`` (default: exactly two fields, source and
    reference). Then, in order:

    1. one candidate: it;
    2. none: :class:`csv.Sniffer`'s guess (Python docs, ``csv.Sniffer.sniff`` with ``delimiters=",;\\t|"``, on the
       first :data:`SNIFF_CHARS` characters; a comma when it cannot tell), so that the reader's error names what it
       used;
    3. several: the one with which the first record is a header (``is_header``: its fields name the columns,
       ``source;target`` or the language codes), when exactly one does;
    4. several, no header: the one that is *tight* — in every record no white space just before or after it —
       when every other candidate is *prose* — in every record followed by white space, as a comma or a semicolon
       in running text is (``Hello, world.;Hola mundo.`` → ``;``; ``Wait; stop,Espera`` → ``,``). The rule holds
       for every record or it does not decide;
    5. otherwise InputError (``where``: the file): the candidates named, ``--delimiter`` as the fix. A corpus split
       at the wrong delimiter would be imported silently wrong (mtboard review of issue 33, finding 1); a refusal
       costs one option.

    Examples: ``'source;target\\r\\nOpen the file.;Abra el archivo.\\r\\n'`` → ``';'`` (only candidate);
    ``'"a;b","c;d"\\n'`` → ``','``; ``'Hello, world.;Hola, mundo.\\n'`` → ``';'`` (``,`` gives three fields);
    ``'1,5;2\\n'`` → InputError (``,`` and ``;`` both tight)."""
    lines = _csv_lines(text)
    fitting = {d: fit for d in DELIMITERS if (fit := _fit(lines, d, fits)) is not None}
    if len(fitting) == 1:
        return next(iter(fitting))
    if not fitting or all(fit.first is None for fit in fitting.values()):  # no candidate, or only blank records
        sample = text[:SNIFF_CHARS]
        if len(text) > SNIFF_CHARS and "\n" in sample:
            sample = sample[:sample.rindex("\n") + 1]
        try:
            return csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
        except csv.Error:  # "Could not determine delimiter"
            return ","
    if is_header is not None:
        named = [d for d, fit in fitting.items() if fit.first is not None and is_header(fit.first)]
        if len(named) == 1:
            return named[0]
    tight = [d for d, fit in fitting.items() if not fit.spaced]
    if len(tight) == 1 and all(fit.prose for d, fit in fitting.items() if d != tight[0]):
        return tight[0]
    names = " and ".join(delimiter_name(d) for d in fitting)
    first = next(iter(fitting))
    raise InputError(f"cannot tell the delimiter: {names} {'both' if len(fitting) == 2 else 'all'} split every "
                     "record into fields that fit, and no header line names the columns", where=where or None,
                     fix=f"pass {' or '.join(f'--delimiter {_option(d)}' for d in fitting)}, or add a first line "
                         f"naming the columns (source{'<TAB>' if first == chr(9) else first}target)")


def _option(delimiter: str) -> str:
    """``--delimiter``'s value for ``delimiter`` as typed in a shell: ``','``, ``';'``, ``tab``, ``'|'``."""
    return "tab" if delimiter == "\t" else f"'{delimiter}'"


def read_csv(path: str | os.PathLike[str], report: ImportReport | None = None, *, source_lang: str | None = None,
             target_lang: str | None = None, delimiter: str | None = None) -> list[Pair]:
    """Read a two-column CSV file (RFC 4180: fields quoted with ``"`` may hold the delimiter, quotes doubled as ``""``
    and line breaks; parsed by the csv module) as ``source<delimiter>reference`` records, UTF-8 with an optional BOM
    (UTF-16/32 with theirs). ``delimiter``: one of :data:`DELIMITERS`, or None to find it: Excel's ``sep=;`` first
    line (:func:`sep_line`; the line is no record, counted ``sep= line``), else :func:`sniff_delimiter` (Excel's
    semicolon CSV reads without an option; two delimiters that both fit and no rule tells apart are refused). A
    given ``delimiter`` wins over a ``sep=`` line (the line is still dropped, and the report says it was
    overridden). The one used is noted in ``report`` (``delimiter ';' (semicolon), detected`` / ``…, from the
    sep= line`` / ``…, given``).

    A first record whose two fields are column names (:data:`HEADER_NAMES` or the two language codes, any case) is a
    header (counted ``header``). Empty lines (``blank line``) and records whose fields are all blank (``blank
    record``) are skipped. Records end at ``\\n`` or ``\\r\\n``; in a file with CR and no LF at all (classic Mac OS),
    at ``\\r``. Field text is kept as written (a quoted ``\\r\\n`` stays in the field; U+2028, U+2029, U+0085, VT and
    FF are characters of a field, never record ends). ``locator`` is ``line <n>``: the line the record starts on
    (the ``sep=`` line counted, as an editor shows it).

    Raises InputError naming file and line for a record that does not have 2 fields or a broken quote (both name the
    delimiter used and suggest ``--delimiter``; a stray CR is named as such), an ambiguous delimiter
    (:func:`sniff_delimiter`), a ``sep=`` line naming another delimiter, invalid UTF-8 or a NUL, or a delimiter not in
    :data:`DELIMITERS`.
    """
    report = report if report is not None else ImportReport()
    text = _read_utf8(path)
    if delimiter is not None and delimiter not in DELIMITERS:
        raise InputError(f"unknown CSV delimiter {delimiter!r}", where=str(path), field="delimiter",
                         fix="use one of: , ; tab |")
    declared, body = sep_line(text, str(path))
    offset = 0
    if declared is not None:
        offset = 1
        report.skip("sep= line")
    if delimiter is not None:
        used = delimiter
        said = f"{delimiter_name(used)}, given"
        if declared is not None and declared != delimiter:
            said += f" (over the file's sep={'<TAB>' if declared == chr(9) else declared} line)"
    elif declared is not None:
        used, said = declared, f"{delimiter_name(declared)}, from the sep= line"
    else:
        used = sniff_delimiter(body, where=str(path),
                               is_header=lambda row: _is_header(row, source_lang, target_lang))
        said = f"{delimiter_name(used)}, detected"
    report.facts.append(f"delimiter {said}")
    others = " / ".join("tab" if d == "\t" else repr(d) for d in DELIMITERS if d != used)
    hint = f"or pass --delimiter {others} when the file uses another"
    reader = csv.reader(_csv_lines(body), dialect="excel", delimiter=used, strict=True)
    out: list[Pair] = []
    first = True
    while True:
        start = reader.line_num + 1 + offset
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if "new-line character seen in unquoted field" in str(exc):
                raise InputError(f"not RFC 4180 CSV with delimiter {said}: a carriage return (CR) inside an "
                                 "unquoted field",
                                 where=f"{path}:{start}",
                                 fix="save the file with LF or CR LF line ends (a file that mixes CR-only line ends "
                                     "with LF ones cannot be read), or remove the stray CR") from None
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
