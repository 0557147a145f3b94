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
from mtboard.inputs.corpora.importers.tabular import sniff_delimiter
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
