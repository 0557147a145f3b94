"""Files read safely (issue 33 item 6): the CSV importer finds its delimiter (Excel's semicolon CSV imports) and names
it in its errors; every importer keeps U+0085 (NEL), U+2028 (LS) and U+2029 (PS) inside the record they occur in.

Measured on main (9c51ef2) before the fix: the issue's Excel bytes were refused with "expected 2 fields … got 1 (fix:
… quote fields that contain commas)"; a UTF-8 catalog with U+0085 inside a msgstr with "not a readable gettext
catalog (OSError: Syntax error in po file (line 6)…)" (polib splits with ``str.splitlines``); a CSV glossary split a
term at U+2028; a TBX term's U+2028 became a space.

Every file here is a small hand-made fixture (test data, not evaluation data).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import polib
import pytest

import cli_support
from mtboard.core.documents import load_corpus
from mtboard.core.errors import InputError
from mtboard.core.schema import GlossaryTerm
from mtboard.inputs.corpora.importers import (ImportReport, read_catalog, read_csv, read_glossary, read_parallel,
                                              read_tmx, read_tsv, read_xliff)
from mtboard.inputs.corpora.importers.tabular import delimiter_name, sniff_delimiter
from mtboard.judges.reliability import load_wmt_mqm

EXCEL = b"\xef\xbb\xbfsource;target\r\nOpen the file.;Abra el archivo.\r\n"
"""The issue's bytes: a UTF-8 BOM and a semicolon CSV with CR LF, as Excel writes "CSV UTF-8" in decimal-comma
locales."""


# --------------------------------------------------------------------------------------------------------------------
# CSV delimiters


def test_excel_semicolon_csv_imports(tmp_path: Path) -> None:
    p = tmp_path / "excel.csv"
    p.write_bytes(EXCEL)
    report = ImportReport()
    pairs = read_csv(p, report, source_lang="en", target_lang="es")
    assert [(x.source, x.reference, x.locator) for x in pairs] == [("Open the file.", "Abra el archivo.", "line 2")]
    assert report.summary() == "kept 1; skipped 1 (header 1); delimiter ';' (semicolon), detected"


def test_excel_semicolon_csv_through_the_cli(tmp_path: Path) -> None:
    p = tmp_path / "excel.csv"
    p.write_bytes(EXCEL)
    out = tmp_path / "c.json"
    res = cli_support.invoke(["corpus", "import", str(p), "-o", str(out), "--source-lang", "en", "--target-lang",
                              "es", "--license", "CC0-1.0"])
    assert res.returncode == 0, res.stderr
    assert "read excel.csv: kept 1; skipped 1 (header 1); delimiter ';' (semicolon), detected" in res.stderr
    entries = load_corpus(out)[0].entries
    assert [(e.source, e.reference) for e in entries] == [("Open the file.", "Abra el archivo.")]


@pytest.mark.parametrize("content,delimiter,pairs", [
    # a comma CSV whose quoted fields hold semicolons still reads with the comma
    (b'"Wait; stop","Espera; para"\r\n"One; two",Uno\r\n', ",", [("Wait; stop", "Espera; para"), ("One; two", "Uno")]),
    # unquoted semicolons inside comma fields: ';' would give 2 fields to the first record only
    (b"source,target\nWait; stop,Espera\nGo,Ve\n", ",", [("Wait; stop", "Espera"), ("Go", "Ve")]),
    # a tab-delimited .csv (Excel's "Text (Tab delimited)" renamed)
    (b"source\ttarget\nOpen the file.\tAbra el archivo.\nSave, then close.\tGuarde y cierre.\n", "\t",
     [("Open the file.", "Abra el archivo."), ("Save, then close.", "Guarde y cierre.")]),
    (b"Open the file.|Abra el archivo.\n", "|", [("Open the file.", "Abra el archivo.")]),
    # commas in both fields of a semicolon file: csv.Sniffer prefers ',' (2 per line); only ';' gives 2 fields
    (b"Hello, world.;Hola, mundo.\nYes, sir.;S\xc3\xad, se\xc3\xb1or.\n", ";",
     [("Hello, world.", "Hola, mundo."), ("Yes, sir.", "Sí, señor.")]),
])
def test_delimiter_is_found(tmp_path: Path, content: bytes, delimiter: str, pairs: list) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    assert sniff_delimiter(p.read_bytes().decode("utf-8")) == delimiter
    assert [(x.source, x.reference) for x in read_csv(p, source_lang="en", target_lang="es")] == pairs
    # the same file with the delimiter given reads the same
    assert [(x.source, x.reference) for x in read_csv(p, delimiter=delimiter)] == pairs


def test_utf16_with_bom_reads(tmp_path: Path) -> None:
    # Excel's "Unicode Text": UTF-16 LE with its byte-order mark, tab-delimited
    p = tmp_path / "unicode.csv"
    p.write_bytes(codecs.BOM_UTF16_LE + "source\ttarget\r\nOpen the file.\tAbra el archivo.\r\n".encode("utf-16-le"))
    assert [(x.source, x.reference) for x in read_csv(p)] == [("Open the file.", "Abra el archivo.")]


@pytest.mark.parametrize("content,given,line,needle", [
    (b"a,b\nx,y,z\n", None, 2, "expected 2 fields (source, reference), got 3 with delimiter ',' (comma), detected"),
    (EXCEL, ",", 1, "expected 2 fields (source, reference), got 1 with delimiter ',' (comma), given"),
    (b"a;b\nc;d;e\n", ";", 2, "got 3 with delimiter ';' (semicolon), given"),
    (b'a,b\n"open,b\n', None, 2, "not RFC 4180 CSV with delimiter ',' (comma), detected"),
])
def test_mismatch_errors_name_the_delimiter(tmp_path: Path, content: bytes, given: str | None, line: int,
                                            needle: str) -> None:
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    with pytest.raises(InputError) as exc:
        read_csv(p, delimiter=given)
    one = exc.value.one_line()
    assert one.startswith(f"{p}:{line}: ") and needle in one, one
    assert "--delimiter" in one and "contain commas" not in one


def test_delimiter_option(tmp_path: Path) -> None:
    p = tmp_path / "excel.csv"
    p.write_bytes(EXCEL)
    base = ["corpus", "import", "-o", str(tmp_path / "c.json"), "--source-lang", "en", "--target-lang", "es",
            "--license", "CC0-1.0"]
    res = cli_support.invoke([*base, str(p), "--delimiter", ";"])
    assert res.returncode == 0 and "delimiter ';' (semicolon), given" in res.stderr, res.stderr
    res = cli_support.invoke([*base, str(p), "--delimiter", ","])
    assert res.returncode == 1
    assert "got 1 with delimiter ',' (comma), given" in res.stderr and "--delimiter ';' / tab / '|'" in res.stderr
    res = cli_support.invoke([*base, str(p), "--delimiter", ":"])
    assert res.returncode == 1 and "--delimiter: unknown delimiter ':'" in res.stderr
    po = tmp_path / "x.po"
    po.write_text('msgid "a"\nmsgstr "b"\n', encoding="utf-8")
    res = cli_support.invoke([*base, str(po), "--delimiter", "tab"])
    assert res.returncode == 1 and "x.po is not read as CSV; --delimiter applies to CSV input only" in res.stderr


def test_glossary_csv_finds_its_delimiter(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_bytes(b"\xef\xbb\xbfsource;target\r\nfile;archivo;fichero\r\nsave, as;guardar como\r\n")
    assert read_glossary(p, "en", "es") == [GlossaryTerm(source="file", targets=["archivo", "fichero"]),
                                            GlossaryTerm(source="save, as", targets=["guardar como"])]


# --------------------------------------------------------------------------------------------------------------------
# Two delimiters that fit alike, Excel's sep= line, CR-only line ends (review of issue 33, findings 1, 8, 9; the bytes
# are the reviewer's repro files in /work/briefs/rev33-scratch, hand-made)

NO_HEADER = (b"Hello, world.;Hola mundo.\r\nYes, sir.;S\xc3\xad se\xc3\xb1or.\r\nOpen the file, please.;Abra el "
             b"archivo.\r\nSave, then close.;Guarde y cierre.\r\n")
"""excel-nohdr.csv: ',' and ';' both give two fields on every record; main imported it with ','."""


@pytest.mark.parametrize("content,delimiter,pairs", [
    (NO_HEADER, ";", [("Hello, world.", "Hola mundo."), ("Yes, sir.", "Sí señor."),
                      ("Open the file, please.", "Abra el archivo."), ("Save, then close.", "Guarde y cierre.")]),
    # one-comma-per-line-semicolon.csv
    (b"Hello, world.;Hola mundo.\nYes, sir.;S\xc3\xad se\xc3\xb1or.\n", ";",
     [("Hello, world.", "Hola mundo."), ("Yes, sir.", "Sí señor.")]),
    # one-semicolon-per-line-comma.csv: here the semicolon is the prose one
    (b"Wait; stop,Espera\nGo; now,Ve ya\n", ",", [("Wait; stop", "Espera"), ("Go; now", "Ve ya")]),
    # single-line-pipe-and-comma.csv
    (b"a, b|c\n", "|", [("a, b", "c")]),
    # a French semicolon (space before and after) is prose too
    (b"Attendez ; arr\xc3\xaatez,Wait; stop\n", ",", [("Attendez ; arrêtez", "Wait; stop")]),
])
def test_two_fitting_delimiters_decided_by_spacing(tmp_path: Path, content: bytes, delimiter: str,
                                                   pairs: list) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    assert sniff_delimiter(content.decode("utf-8")) == delimiter
    report = ImportReport()
    assert [(x.source, x.reference) for x in read_csv(p, report, source_lang="en", target_lang="es")] == pairs
    assert report.facts == [f"delimiter {delimiter_name(delimiter)}, detected"]


def test_finding_1_through_the_cli(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_bytes(NO_HEADER)
    out = tmp_path / "x.json"
    res = cli_support.invoke(["corpus", "import", str(p), "-o", str(out), "--source-lang", "en", "--target-lang",
                              "es", "--license", "CC0-1.0"])
    assert res.returncode == 0, res.stderr
    assert "read x.csv: kept 4; skipped 0; delimiter ';' (semicolon), detected" in res.stderr
    assert [(e.source, e.reference) for e in load_corpus(out)[0].entries] == [
        ("Hello, world.", "Hola mundo."), ("Yes, sir.", "Sí señor."), ("Open the file, please.", "Abra el archivo."),
        ("Save, then close.", "Guarde y cierre.")]


AMBIGUOUS = "cannot tell the delimiter: {names} split every record into fields that fit, and no header line names " \
            "the columns (fix: pass {options}, or add a first line naming the columns (source{first}target))"


@pytest.mark.parametrize("content,names,options", [
    # both tight: decimal commas in a semicolon file, or semicolons in a comma file: no rule tells
    (b"1,5;2\r\n3,5;4\r\n", "',' (comma) and ';' (semicolon) both", "--delimiter ',' or --delimiter ';'"),
    (b"Hello,world;Hola\n", "',' (comma) and ';' (semicolon) both", "--delimiter ',' or --delimiter ';'"),
    # the comma is prose in the first record only: the rule must hold for every record
    (b"Hello, world.;Hola.\nYes,sir.;S\xc3\xad.\n", "',' (comma) and ';' (semicolon) both",
     "--delimiter ',' or --delimiter ';'"),
    # both followed by a space: neither is tight
    (b"Hello, world.; Hola mundo.\n", "',' (comma) and ';' (semicolon) both", "--delimiter ',' or --delimiter ';'"),
    (b"1,5\t2|3\n", "',' (comma) and tab and '|' (pipe) all", "--delimiter ',' or --delimiter tab or --delimiter '|'"),
])
def test_two_fitting_delimiters_without_evidence_are_refused(tmp_path: Path, content: bytes, names: str,
                                                             options: str) -> None:
    p = tmp_path / "amb.csv"
    p.write_bytes(content)
    with pytest.raises(InputError) as exc:
        read_csv(p, source_lang="en", target_lang="es")
    assert exc.value.one_line() == f"{p}: " + AMBIGUOUS.format(names=names, options=options, first=",")
    # the option the refusal names reads the file
    assert len(read_csv(p, delimiter=";" if ";" in names else "|")) == content.count(b"\n")


def test_ambiguous_refusal_through_the_cli(tmp_path: Path) -> None:
    p = tmp_path / "amb.csv"
    p.write_bytes(b"Hello,world;Hola\n")
    res = cli_support.invoke(["corpus", "import", str(p), "-o", str(tmp_path / "c.json"), "--source-lang", "en",
                              "--target-lang", "es", "--license", "CC0-1.0"])
    assert res.returncode == 1 and not (tmp_path / "c.json").exists()
    assert res.stderr.strip().splitlines()[-1] == (
        f"error: {p}: cannot tell the delimiter: ',' (comma) and ';' (semicolon) both split every record into "
        "fields that fit, and no header line names the columns (fix: pass --delimiter ',' or --delimiter ';', or add "
        "a first line naming the columns (source,target))"), res.stderr


@pytest.mark.parametrize("content,pairs", [
    # a header names the columns with ';' (and with the language codes)
    (b"source;target\r\n1,5;2\r\n", [("1,5", "2")]),
    (b"EN;ES\r\n1,5;2\r\n", [("1,5", "2")]),
    (b"src,tgt\r\n1;5,2\r\n", [("1;5", "2")]),
])
def test_a_header_decides(tmp_path: Path, content: bytes, pairs: list) -> None:
    p = tmp_path / "h.csv"
    p.write_bytes(content)
    assert [(x.source, x.reference) for x in read_csv(p, source_lang="en", target_lang="es")] == pairs


def test_a_header_decides_between_fitting_candidates() -> None:
    # with a glossary's "at least two fields", 'src;tgt,x' fits ',' and ';' alike; the header decides
    text = "src;tgt,alt\r\n1;5,2\r\n"
    assert sniff_delimiter(text, lambda row: len(row) >= 2, is_header=lambda row: row[:2] == ["src", "tgt,alt"]) \
        == ";"
    with pytest.raises(InputError, match="cannot tell the delimiter"):
        sniff_delimiter(text, lambda row: len(row) >= 2)


def test_glossary_refuses_an_ambiguous_delimiter(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_bytes(b"file,x;archivo\r\n")
    with pytest.raises(InputError) as exc:
        read_glossary(p, "en", "es")
    assert exc.value.one_line().startswith(f"{p}: cannot tell the delimiter: ',' (comma) and ';' (semicolon)")


EXCEL_SEP = (b"\xef\xbb\xbfsep=;\r\nsource;target\r\nOpen the file.;Abra el archivo.\r\nClose it.;Ci\xc3\xa9rrelo."
             b"\r\n")
"""excel-sep.csv: main imported the header as an entry."""


@pytest.mark.parametrize("content,pairs,said,skipped", [
    (EXCEL_SEP, [("Open the file.", "Abra el archivo.", "line 3"), ("Close it.", "Ciérrelo.", "line 4")],
     "';' (semicolon)", "skipped 2 (header 1, sep= line 1)"),
    # sep-hint.csv
    (b"sep=;\r\nsource;target\r\nOpen the file.;Abra el archivo.\r\n", [("Open the file.", "Abra el archivo.",
                                                                          "line 3")],
     "';' (semicolon)", "skipped 2 (header 1, sep= line 1)"),
    # the sep= line decides a file no rule could: ',' and ';' both fit and both are tight
    (b"sep=,\n1,5;2\n", [("1", "5;2", "line 2")], "',' (comma)", "skipped 1 (sep= line 1)"),
    (b"SEP=;\n1,5;2\n", [("1,5", "2", "line 2")], "';' (semicolon)", "skipped 1 (sep= line 1)"),
    (b"sep=\t\r\na, b\tc; d\r\n", [("a, b", "c; d", "line 2")], "tab", "skipped 1 (sep= line 1)"),
    (b"sep=|\ra|b\rc|d\r", [("a", "b", "line 2"), ("c", "d", "line 3")], "'|' (pipe)", "skipped 1 (sep= line 1)"),
])
def test_excel_sep_line(tmp_path: Path, content: bytes, pairs: list, said: str, skipped: str) -> None:
    p = tmp_path / "s.csv"
    p.write_bytes(content)
    report = ImportReport()
    assert [(x.source, x.reference, x.locator) for x in read_csv(p, report, source_lang="en",
                                                                 target_lang="es")] == pairs
    assert report.summary() == f"kept {len(pairs)}; {skipped}; delimiter {said}, from the sep= line"


def test_excel_sep_line_and_the_option(tmp_path: Path) -> None:
    p = tmp_path / "excel-sep.csv"
    p.write_bytes(EXCEL_SEP)
    base = ["corpus", "import", "-o", str(tmp_path / "c.json"), "--source-lang", "en", "--target-lang", "es",
            "--license", "CC0-1.0", str(p)]
    res = cli_support.invoke(base)
    assert res.returncode == 0, res.stderr
    assert ("read excel-sep.csv: kept 2; skipped 2 (header 1, sep= line 1); delimiter ';' (semicolon), from the sep= "
            "line") in res.stderr
    assert [(e.source, e.reference) for e in load_corpus(tmp_path / "c.json")[0].entries] == [
        ("Open the file.", "Abra el archivo."), ("Close it.", "Ciérrelo.")]
    res = cli_support.invoke([*base, "--delimiter", ";"])
    assert res.returncode == 0 and "delimiter ';' (semicolon), given" in res.stderr, res.stderr
    # --delimiter wins over the sep= line (the line is still no record), and the error says so
    res = cli_support.invoke([*base, "--delimiter", ","])
    assert res.returncode == 1
    assert (f"error: {p}:2: expected 2 fields (source, reference), got 1 with delimiter ',' (comma), given (over "
            "the file's sep=; line)") in res.stderr, res.stderr


def test_sep_line_with_an_unknown_delimiter(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_bytes(b"sep=:\na:b\n")
    with pytest.raises(InputError) as exc:
        read_csv(p)
    assert exc.value.one_line() == (f"{p}:1: the first line 'sep=:' names delimiter ':', which mtboard does not read "
                                    "(fix: save the file with a comma, semicolon, tab or pipe delimiter)")


def test_utf16_without_bom_is_named(tmp_path: Path) -> None:
    # utf16-no-bom.csv: read as UTF-8 it was refused as a stray CR ("new-line character seen in unquoted field")
    p = tmp_path / "u.csv"
    p.write_bytes("source;target\r\nOpen the file.;Abra el archivo.\r\n".encode("utf-16-le"))
    with pytest.raises(InputError) as exc:
        read_csv(p)
    assert exc.value.one_line() == (f"{p}:1: a NUL character at character 1 (UTF-16 or UTF-32 without a byte-order "
                                    "mark?) (fix: save the file as UTF-8 (or UTF-16 with its byte-order mark))")


CR_ONLY = b"source;target\rOpen the file.;Abra el archivo.\rClose it.;Ci\xc3\xa9rrelo.\r"
"""cr-only.csv: classic Mac OS Excel ends lines with CR alone."""


@pytest.mark.parametrize("content,pairs", [
    (CR_ONLY, [("Open the file.", "Abra el archivo.", "line 2"), ("Close it.", "Ciérrelo.", "line 3")]),
    # a quoted CR stays in its field; NEL and LS stay characters; no final CR
    ('a;"two\rlines"\rb\u0085c;d\u2028e\rf;g'.encode(), [("a", "two\rlines", "line 1"),
                                                        ("b\u0085c", "d\u2028e", "line 3"), ("f", "g", "line 4")]),
])
def test_cr_only_line_ends(tmp_path: Path, content: bytes, pairs: list) -> None:
    p = tmp_path / "mac.csv"
    p.write_bytes(content)
    report = ImportReport()
    assert [(x.source, x.reference, x.locator) for x in read_csv(p, report, source_lang="en",
                                                                 target_lang="es")] == pairs
    assert report.facts == ["delimiter ';' (semicolon), detected"]


def test_cr_only_glossary(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_bytes(b"source;target\rfile;archivo;fichero\r")
    assert read_glossary(p, "en", "es") == [GlossaryTerm(source="file", targets=["archivo", "fichero"])]


@pytest.mark.parametrize("content,line", [
    (b"a,b\nc\rd,e\n", 2),                                 # a stray CR in an LF file
    (b'source;target\r"a\nb";c\rd;e\r', 1),                # CR line ends, but an LF in a quoted field
])
def test_stray_cr_hint_names_line_ends(tmp_path: Path, content: bytes, line: int) -> None:
    p = tmp_path / "cr.csv"
    p.write_bytes(content)
    with pytest.raises(InputError) as exc:
        read_csv(p)
    one = exc.value.one_line()
    assert one.startswith(f"{p}:{line}: not RFC 4180 CSV with delimiter ") and \
        "a carriage return (CR) inside an unquoted field (fix: save the file with LF or CR LF line ends" in one, one
    assert "quote" not in one.split("(fix: ")[1], one


# --------------------------------------------------------------------------------------------------------------------
# U+0085, U+2028, U+2029 inside a record, every importer

CHARS = {"NEL": "\u0085", "LS": "\u2028", "PS": "\u2029"}
HEADER_PO = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


def _src(c: str) -> str:
    return f"Open{c}the file."


def _ref(c: str) -> str:
    return f"Abra{c}el archivo."


def _csv(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.csv"
    p.write_text(f'source,target\r\n{_src(c)},"{_ref(c)}"\r\nNext,Siguiente\r\n', encoding="utf-8")
    return [(x.source, x.reference) for x in read_csv(p)][:1]


def _csv_semicolon(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.csv"
    p.write_bytes(b"\xef\xbb\xbf" + f"source;target\r\n{_src(c)};{_ref(c)}\r\n".encode("utf-8"))
    return [(x.source, x.reference) for x in read_csv(p)]


def _tsv(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.tsv"
    p.write_text(f"{_src(c)}\t{_ref(c)}\r\nNext\tSiguiente\n", encoding="utf-8")
    return [(x.source, x.reference) for x in read_tsv(p)][:1]


def _parallel(tmp: Path, c: str) -> list[tuple[str, str]]:
    a, b = tmp / "t.en", tmp / "t.es"
    a.write_text(f"{_src(c)}\nNext\n", encoding="utf-8")
    b.write_text(f"{_ref(c)}\nSiguiente\n", encoding="utf-8")
    return [(x.source, x.reference) for x in read_parallel(a, b)][:1]


def _po(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.po"
    p.write_text(HEADER_PO + f'msgid "{_src(c)}"\nmsgstr "{_ref(c)}"\n\nmsgid ""\n"Next{c}"\n"step"\nmsgstr "Paso"\n',
                 encoding="utf-8")
    pairs = [(x.source, x.reference) for x in read_catalog(p)]
    assert pairs[1] == (f"Next{c}step", "Paso")  # continuation lines joined, the character kept
    return pairs[:1]


def _po_crlf(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.po"
    p.write_bytes((HEADER_PO + f'msgid "{_src(c)}"\nmsgstr "{_ref(c)}"\n').replace("\n", "\r\n").encode("utf-8"))
    return [(x.source, x.reference) for x in read_catalog(p)]


def _mo(tmp: Path, c: str) -> list[tuple[str, str]]:
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    po.append(polib.POEntry(msgid=_src(c), msgstr=_ref(c)))
    po.save_as_mofile(str(tmp / "t.mo"))
    return [(x.source, x.reference) for x in read_catalog(tmp / "t.mo")]


def _tmx(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.tmx"
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="en" datatype="plaintext"'
                 f' segtype="sentence" adminlang="en" creationtool="hand" creationtoolversion="1" o-tmf="none"/>'
                 f'<body><tu><tuv xml:lang="en"><seg>{_src(c)}</seg></tuv><tuv xml:lang="es"><seg>{_ref(c)}</seg>'
                 f'</tuv></tu></body></tmx>\n', encoding="utf-8")
    return [(x.source, x.reference) for x in read_tmx(p, "en", "es")]


def _xliff1(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.xlf"
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
                 f'xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" target-language="es" '
                 f'datatype="plaintext" original="x"><body><trans-unit id="1"><source>{_src(c)}</source>'
                 f'<target>{_ref(c)}</target></trans-unit></body></file></xliff>\n', encoding="utf-8")
    return [(x.source, x.reference) for x in read_xliff(p, "en", "es")]


def _xliff2(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "t.xlf"
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="2.0" '
                 f'xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="en" trgLang="es"><file id="f"><unit id="1">'
                 f'<segment><source>{_src(c)}</source><target>{_ref(c)}</target></segment></unit></file></xliff>\n',
                 encoding="utf-8")
    return [(x.source, x.reference) for x in read_xliff(p, "en", "es")]


def _glossary_csv(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "g.csv"
    p.write_text(f"source,target\r\n{_src(c)},{_ref(c)}\r\nfile,archivo\r\n", encoding="utf-8")
    return [(t.source, t.targets[0]) for t in read_glossary(p, "en", "es")][:1]


def _glossary_tbx(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "g.tbx"
    p.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<martif type="TBX"><text><body><termEntry>'
                 f'<langSet xml:lang="en"><tig><term>{_src(c)}</term></tig></langSet>'
                 f'<langSet xml:lang="es"><tig><term>{_ref(c)}</term></tig></langSet>'
                 f'</termEntry></body></text></martif>\n', encoding="utf-8")
    return [(t.source, t.targets[0]) for t in read_glossary(p, "en", "es")]


def _wmt_mqm(tmp: Path, c: str) -> list[tuple[str, str]]:
    p = tmp / "mqm.tsv"
    p.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"
                 f"sysA\td\t1\t1\trater1\t{_src(c)}\t{_ref(c)}\tNo-error\tNo-error\t\n", encoding="utf-8")
    return [(cell.source, cell.target) for cell in load_wmt_mqm(p).cells]


READERS = {"csv": _csv, "csv-semicolon": _csv_semicolon, "tsv": _tsv, "parallel": _parallel, "po": _po,
           "po-crlf": _po_crlf, "mo": _mo, "tmx": _tmx, "xliff-1.2": _xliff1, "xliff-2": _xliff2,
           "glossary-csv": _glossary_csv, "glossary-tbx": _glossary_tbx, "wmt-mqm-tsv": _wmt_mqm}


@pytest.mark.parametrize("char", CHARS)
@pytest.mark.parametrize("reader", READERS)
def test_every_importer_keeps_line_separators_inside_a_record(tmp_path: Path, reader: str, char: str) -> None:
    c = CHARS[char]
    assert READERS[reader](tmp_path, c) == [(_src(c), _ref(c))]


def test_po_with_nel_through_the_cli(tmp_path: Path) -> None:
    # the case end to end: the catalog imports (the corpus filters then fold white space, NEL included, to
    # one space, as they do a line break: corpora/SOURCES.md "Filters")
    p = tmp_path / "t.po"
    p.write_text(HEADER_PO + 'msgid "Open\u0085the file now."\nmsgstr "Abra\u0085el archivo ahora."\n',
                 encoding="utf-8")
    out = tmp_path / "c.json"
    res = cli_support.invoke(["corpus", "import", str(p), "-o", str(out), "--source-lang", "en", "--target-lang",
                              "es", "--license", "CC0-1.0"])
    assert res.returncode == 0, res.stderr
    assert [(e.source, e.reference) for e in load_corpus(out)[0].entries] == [
        ("Open the file now.", "Abra el archivo ahora.")]
