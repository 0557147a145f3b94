"""Importers for the files translators ship (issue 14 part 1) and ``corpus check`` on what they produce (part 3).

Fixtures: small hand-made files written by the tests, except ``tests/fixtures/real-files/`` (real files from a Debian
and a PyPI package, named in corpora/SOURCES.md "Real interchange files"). Every expected value was written by hand
from the input shown beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.inputs.corpora.importers import (ImportReport, plural_indices, read_catalog, read_csv, read_parallel, read_tmx,
                                       read_tsv, read_xliff)
from mtboard.core.documents import load_corpus
from mtboard.core.errors import InputError

REAL = Path(__file__).parent / "fixtures" / "real-files"
runner = CliRunner()


def _import(tmp_path, *files, src="en", tgt="fr", extra=()):
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["corpus", "import", *map(str, files), "-o", str(out), "--source-lang", src,
                              "--target-lang", tgt, "--license", "CC0-1.0", "--domain", "ui", "--created",
                              "2026-12-01", *extra])
    return res, out


# --------------------------------------------------------------------------------------------------------------------
# gettext: the header's charset, plural forms


PO_LATIN9 = '''msgid ""
msgstr ""
"Content-Type: text/plain; charset=ISO-8859-15\\n"
"Language: fr\\n"
"Plural-Forms: nplurals=2; plural=(n > 1);\\n"

msgid "Price in euros"
msgstr "Prix en €"

msgid "Heart of the matter"
msgstr "Le cœur du sujet"

msgid "One file was deleted"
msgid_plural "%d files were deleted"
msgstr[0] "Un fichier a été supprimé"
msgstr[1] "%d fichiers ont été supprimés"
'''


def test_po_in_iso_8859_15_is_read_in_the_header_charset(tmp_path):
    p = tmp_path / "fr.po"
    p.write_bytes(PO_LATIN9.encode("iso-8859-15"))
    # € is 0xA4 and œ 0xBD in ISO-8859-15 (¤ and ½ in ISO-8859-1): only the declared charset gives these texts
    assert b"\xa4" in p.read_bytes() and b"\xbd" in p.read_bytes()
    report = ImportReport()
    pairs = read_catalog(p, report)
    assert [(x.source, x.reference, x.context) for x in pairs] == [
        ("Price in euros", "Prix en €", None), ("Heart of the matter", "Le cœur du sujet", None),
        ("One file was deleted", "Un fichier a été supprimé", "plural form for n=1"),
        ("%d files were deleted", "%d fichiers ont été supprimés", "plural form for n=2")]
    assert report.summary() == "kept 4; skipped 0"


def test_po_in_iso_8859_15_imports_end_to_end(tmp_path):
    p = tmp_path / "fr.po"
    p.write_bytes(PO_LATIN9.encode("iso-8859-15"))
    res, out = _import(tmp_path, p)
    assert res.exit_code == 0, res.output
    corpus, _ = load_corpus(out)
    assert "Prix en €" in [e.reference for e in corpus.entries]
    assert "read fr.po: kept 4; skipped 0" in res.output


def test_po_bytes_outside_the_declared_charset_name_file_and_fix(tmp_path):
    p = tmp_path / "liar.po"
    p.write_bytes(PO_LATIN9.replace("ISO-8859-15", "UTF-8").encode("iso-8859-15"))
    with pytest.raises(InputError) as exc:
        read_catalog(p)
    line = exc.value.one_line()
    assert "liar.po" in line and "not valid UTF-8" in line and "fix: save the file as UTF-8" in line


@pytest.mark.parametrize("header,expected", [
    ("nplurals=2; plural=(n != 1);", (0, 1)),                                   # English, Spanish, German
    ("nplurals=2; plural=(n > 1);", (0, 1)),                                    # French
    ("nplurals=1; plural=0;", (0, 0)),                                          # Japanese, Chinese
    ("nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);", (0, 1)),  # Polish
    ("nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;",
     (1, 2)),                                                                   # Arabic: n=1 is form 1, n=2 form 2
    (None, (0, 1)), ("garbage", (0, 1)),
])
def test_plural_indices(header, expected):
    assert plural_indices(header, 2) == expected


def test_po_japanese_plural_gives_one_pair_and_counts_skips(tmp_path):
    p = tmp_path / "ja.po"
    p.write_text('''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=1; plural=0;\\n"

msgctxt "files"
msgid "One file"
msgid_plural "%d files"
msgstr[0] "%d 個のファイル"

#, fuzzy
msgid "Open"
msgstr "開く"

#~ msgid "Old"
#~ msgstr "古い"

msgid "New"
msgstr ""
''', encoding="utf-8")
    report = ImportReport()
    pairs = read_catalog(p, report)
    assert [(x.source, x.reference, x.context, x.tag) for x in pairs] == [
        ("%d files", "%d 個のファイル", "files; plural form for n=2", "msg-plural")]
    assert report.summary() == "kept 1; skipped 3 (fuzzy 1, obsolete 1, untranslated 1)"


# --------------------------------------------------------------------------------------------------------------------
# Line records: \n and \r\n only


def test_tsv_keeps_unicode_line_separators_inside_a_record(tmp_path):
    p = tmp_path / "ls.tsv"
    p.write_bytes("Hello world\tHola\u2028mundo\r\nGood bye\tAdiós\u0085amigo\nNo\x0cpage\tSin\x0bpágina\n"
                  .encode("utf-8"))
    pairs = read_tsv(p)
    assert [(x.source, x.reference, x.locator) for x in pairs] == [
        ("Hello world", "Hola\u2028mundo", "line 1"), ("Good bye", "Adiós\u0085amigo", "line 2"),
        ("No\x0cpage", "Sin\x0bpágina", "line 3")]


def test_tsv_error_names_the_right_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("a\tb\u2028c\nd\te\u2029f\ng h\n", encoding="utf-8")  # line 3 has no tab
    with pytest.raises(InputError) as exc:
        read_tsv(p)
    assert exc.value.one_line().startswith(f"{p}:3: expected 2 tab-separated columns")


def test_tsv_with_line_separator_imports_end_to_end(tmp_path):
    p = tmp_path / "ls.tsv"
    p.write_text("Save the document now\tEnregistrez le document\u2028maintenant\n", encoding="utf-8")
    res, out = _import(tmp_path, p)
    assert res.exit_code == 0, res.output
    corpus, _ = load_corpus(out)
    # the filters' whitespace clean-up makes the separator a space (corpora/SOURCES.md "Filters")
    assert [(e.source, e.reference) for e in corpus.entries] == [("Save the document now",
                                                                  "Enregistrez le document maintenant")]


def test_parallel_text(tmp_path):
    a, b = tmp_path / "ui.en", tmp_path / "ui.fr"
    a.write_text("Open the file\nClose\u2028it\n\nOnly English\n", encoding="utf-8")
    b.write_text("Ouvrir le fichier\r\nFermer\u2028le\r\n\r\n\r\n", encoding="utf-8")
    report = ImportReport()
    pairs = read_parallel(a, b, report)
    assert [(x.source, x.reference, x.locator) for x in pairs] == [("Open the file", "Ouvrir le fichier", "line 1"),
                                                                  ("Close\u2028it", "Fermer\u2028le", "line 2")]
    assert report.summary() == "kept 2; skipped 2 (blank line 1, one side blank 1)"
    b.write_text("Ouvrir\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"4 lines in .*ui.en but 1 in .*ui.fr"):
        read_parallel(a, b)


def test_parallel_text_by_language_suffix_end_to_end(tmp_path):
    a, b = tmp_path / "ui.en", tmp_path / "ui.fr"
    a.write_text("Open the file now\n", encoding="utf-8")
    b.write_text("Ouvrir le fichier maintenant\n", encoding="utf-8")
    res, out = _import(tmp_path, a, b)
    assert res.exit_code == 0, res.output
    assert "read ui.en + ui.fr: kept 1; skipped 0" in res.output
    assert load_corpus(out)[0].entries[0].reference == "Ouvrir le fichier maintenant"


# --------------------------------------------------------------------------------------------------------------------
# CSV (RFC 4180)


def test_csv_rfc4180(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b'source,target\r\n"Hello, world","Hola, mundo"\r\n"Say ""hi""","Di ""hola"""\r\n'
                  b'"two\r\nlines",dos\r\n\r\nplain,llano\r\n')
    report = ImportReport()
    pairs = read_csv(p, report, source_lang="en", target_lang="es")
    assert [(x.source, x.reference, x.locator) for x in pairs] == [
        ("Hello, world", "Hola, mundo", "line 2"), ('Say "hi"', 'Di "hola"', "line 3"),
        ("two\r\nlines", "dos", "line 4"), ("plain", "llano", "line 7")]
    assert report.summary() == "kept 4; skipped 2 (blank line 1, header 1); delimiter ',' (comma), detected"


@pytest.mark.parametrize("content,line,needle", [
    (b'a,b\nx,y,z\n', 2, "expected 2 fields (source, reference), got 3"),
    (b'a,b\n"open,b\n', 2, "not RFC 4180 CSV"),                # quote never closed
    (b'a,b\nc\rd,e\n', 2, "not RFC 4180 CSV"),                 # lone CR inside an unquoted field
])
def test_csv_errors_name_the_line(tmp_path, content, line, needle):
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    with pytest.raises(InputError) as exc:
        read_csv(p)
    one = exc.value.one_line()
    assert one.startswith(f"{p}:{line}: ") and needle in one and "(fix: " in one


# --------------------------------------------------------------------------------------------------------------------
# TMX: language choice


TMX_PT = '''<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en" datatype="plaintext" segtype="sentence" adminlang="en"
 creationtool="hand" creationtoolversion="1" o-tmf="none"/>
<body>
<tu tuid="bus"><tuv xml:lang="en"><seg>The bus stop is near the train station</seg></tuv>
<tuv xml:lang="pt-PT"><seg>A paragem de autocarro fica perto da estação de comboios</seg></tuv>
<tuv xml:lang="PT-br"><seg>O ponto de ônibus fica perto da estação de trem</seg></tuv></tu>
<tu tuid="screen"><tuv xml:lang="en"><seg>Screen</seg></tuv><tuv xml:lang="pt-PT"><seg>Ecrã</seg></tuv></tu>
</body></tmx>'''


@pytest.mark.parametrize("lang,expected", [
    ("pt-BR", ["O ponto de ônibus fica perto da estação de trem", "Ecrã"]),   # exact (any case), then primary
    ("pt-br", ["O ponto de ônibus fica perto da estação de trem", "Ecrã"]),
    ("pt-PT", ["A paragem de autocarro fica perto da estação de comboios", "Ecrã"]),
])
def test_tmx_exact_tag_wins_then_primary_subtag(tmp_path, lang, expected):
    p = tmp_path / "pt.tmx"
    p.write_text(TMX_PT, encoding="utf-8")
    assert [x.reference for x in read_tmx(p, "en", lang)] == expected


def test_tmx_two_candidates_for_one_language_is_an_error_naming_the_unit(tmp_path):
    p = tmp_path / "pt.tmx"
    p.write_text(TMX_PT, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_tmx(p, "en", "pt")
    assert exc.value.one_line() == (f"{p}: tuid=bus: 2 tuvs match --target-lang pt (pt-PT, PT-br) (fix: pass the "
                                    "exact tag of the one you mean with --target-lang (e.g. pt-PT))")


def test_tmx_pt_br_end_to_end(tmp_path):
    p = tmp_path / "pt.tmx"
    p.write_text(TMX_PT, encoding="utf-8")
    res, out = _import(tmp_path, p, tgt="pt-BR")
    assert res.exit_code == 0, res.output
    assert [e.reference for e in load_corpus(out)[0].entries] == ["O ponto de ônibus fica perto da estação de trem",
                                                                 "Ecrã"]


def test_tmx_inline_codes_become_text_or_placeholders(tmp_path):
    p = tmp_path / "inline.tmx"
    p.write_text('''<tmx version="1.4"><header/><body>
<tu tuid="7"><tuv xml:lang="en"><seg>Click <bpt i="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> now<ph x="2"/>.</seg></tuv>
<tuv xml:lang="de"><seg>Jetzt <bpt i="1">&lt;b&gt;</bpt>Speichern<ept i="1">&lt;/b&gt;</ept> klicken<ph x="2"/>.</seg></tuv>
</tu></body></tmx>''', encoding="utf-8")
    report = ImportReport()
    [pair] = read_tmx(p, "en", "de", report)
    assert (pair.source, pair.reference) == ("Click <b>Save</b> now{ph_2}.", "Jetzt <b>Speichern</b> klicken{ph_2}.")
    assert pair.note == "inline codes: bpt → text ×2, ept → text ×2, ph → placeholder ×2"
    assert report.notes == {"inline bpt → text": 2, "inline ept → text": 2, "inline ph → placeholder": 2}


# --------------------------------------------------------------------------------------------------------------------
# XLIFF 1.2 and 2.0


XLIFF12 = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="ui.properties" source-language="en" target-language="de" datatype="plaintext">
  <body>
   <trans-unit id="save"><source>Save <g id="1">all</g> files<x id="2"/></source><target state="translated">Alle <g id="1">Dateien</g> speichern<x id="2"/></target></trans-unit>
   <group id="g"><trans-unit id="open"><source>Open %s</source><target state="needs-review-translation">Öffne %s</target></trans-unit>
   <trans-unit id="close"><source>Close</source></trans-unit>
   <trans-unit id="logo" translate="no"><source>ACME</source><target>ACME</target></trans-unit>
   <trans-unit id="br"><source>Line<ph id="1">&lt;br/&gt;</ph>break</source><target>Zeilen<ph id="1">&lt;br/&gt;</ph>umbruch</target></trans-unit></group>
  </body>
 </file>
</xliff>'''

XLIFF20 = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="fr">
 <file id="f1">
  <unit id="u1">
   <originalData><data id="d1">&lt;b&gt;</data><data id="d2">&lt;/b&gt;</data><data id="d3">{0}</data></originalData>
   <segment state="translated"><source>Press <pc id="1" dataRefStart="d1" dataRefEnd="d2">Start</pc> for <ph id="2" dataRef="d3"/>.</source><target>Appuyez sur <pc id="1" dataRefStart="d1" dataRefEnd="d2">Démarrer</pc> pour <ph id="2" dataRef="d3"/>.</target></segment>
   <ignorable><source> </source></ignorable>
   <segment><source>Done<ph id="3"/></source><target>Terminé<ph id="3"/></target></segment>
  </unit>
  <group id="g1"><unit id="u2"><segment state="initial"><source>Later</source><target>Plus tard</target></segment></unit>
  <unit id="u3"><segment><source>Nothing</source></segment></unit></group>
 </file>
</xliff>'''


def test_xliff_12(tmp_path):
    p = tmp_path / "ui.xlf"
    p.write_text(XLIFF12, encoding="utf-8")
    report = ImportReport()
    pairs = read_xliff(p, "en", "de", report)
    assert [(x.source, x.reference, x.locator, x.note) for x in pairs] == [
        ("Save all files{x_2}", "Alle Dateien speichern{x_2}", "unit save", "inline codes: x → placeholder ×2"),
        ("Line<br/>break", "Zeilen<br/>umbruch", "unit br", "inline codes: ph → text ×2")]
    assert report.summary() == ("kept 2; skipped 3 (state=needs-review-translation 1, translate=no 1, untranslated "
                                "1); inline ph → text 2, inline x → placeholder 2")


def test_xliff_20(tmp_path):
    p = tmp_path / "ui.xlf"
    p.write_text(XLIFF20, encoding="utf-8")
    report = ImportReport()
    pairs = read_xliff(p, "en", "fr", report)
    assert [(x.source, x.reference, x.locator) for x in pairs] == [
        ("Press <b>Start</b> for {0}. Done{ph_3}", "Appuyez sur <b>Démarrer</b> pour {0}. Terminé{ph_3}", "unit u1")]
    assert dict(report.skipped) == {"state=initial": 1, "untranslated": 1}


@pytest.mark.parametrize("content,lang,needle", [
    (XLIFF12, ("en", "fr"), "no unit is en→fr: the file declares en→de"),
    (XLIFF20, ("en", "de"), "no unit is en→de: the file declares en→fr"),
    ('<xliff xmlns="urn:example:other" version="9"/>', ("en", "fr"), "unknown XLIFF namespace"),
    ("<tmx/>", ("en", "fr"), "not <xliff>"),
])
def test_xliff_refusals(tmp_path, content, lang, needle):
    p = tmp_path / "x.xlf"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_xliff(p, *lang)
    assert needle in exc.value.one_line() and str(p) in exc.value.one_line()


# --------------------------------------------------------------------------------------------------------------------
# Real files from packages (corpora/SOURCES.md "Real interchange files")


def test_real_xliff_from_debian_imports_into_a_corpus_that_check_accepts(tmp_path):
    # php-symfony-validator 5.4.53+dfsg-0+deb12u1 (Debian 12), Resources/translations/validators.fr.xlf, MIT
    src = REAL / "validators.fr.xlf"
    res, out = _import(tmp_path, src, extra=["--package", "php-symfony-validator", "--package-version",
                                             "5.4.53+dfsg-0+deb12u1"])
    assert res.exit_code == 0, res.output
    assert "read validators.fr.xlf: kept 116; skipped 0" in res.output
    assert "filters: read 116, kept 114, dropped: code 2" in res.output
    corpus, _ = load_corpus(out)
    first = corpus.entries[0]
    assert (first.source, first.reference, first.origin.locator) == (
        "This value should be false.", "Cette valeur doit être fausse.", "unit 1")
    check = runner.invoke(app, ["corpus", "check", str(out), "--json"])
    assert check.exit_code == 0, check.output
    report = json.loads(check.stdout)[str(out)]
    assert report["entries"] == 114


def test_real_tmx_from_pypi_imports_into_a_corpus_that_check_accepts(tmp_path):
    # weblate 5.14.3 (PyPI wheel), weblate/trans/tests/data/memory.tmx: upper-case tags DE-DE, EN-US, CS-CZ; a BOM
    res, out = _import(tmp_path, REAL / "memory.tmx", src="en", tgt="cs")
    assert res.exit_code == 0, res.output
    corpus, _ = load_corpus(out)
    assert [(e.source, e.reference) for e in corpus.entries] == [("If the log function is installed",
                                                                  "Pokud je nainstalované logování")]
    check = runner.invoke(app, ["corpus", "check", str(out)])
    assert check.exit_code == 0, check.output
    # OmegaT's TMX 1.1 with <!DOCTYPE tmx SYSTEM "tmx11.dtd"> and lang= attributes (no entities: allowed)
    assert [(x.source, x.reference) for x in read_tmx(REAL / "memory2.tmx", "en", "sc")] == [('"%.1f MB";',
                                                                                           '"%.1f MB";')]


# --------------------------------------------------------------------------------------------------------------------
# corpus check: blank entries refused, identical / duplicate / placeholder flagged


def _corpus(tmp_path, entries):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"dataset": {"id": "mtb-en-es-test", "version": "1.0.0", "language_pair": "EN→ES",
                                         "source_language": "en", "target_language": "es", "created": "2026-12-01",
                                         "license": "CC0-1.0", "provenance": ["elicited"]},
                             "entries": [{"id": i, "source": s, "reference": r}
                                         for i, (s, r) in enumerate(entries, 1)]}, ensure_ascii=False),
                 encoding="utf-8")
    return p


@pytest.mark.parametrize("reference", [" ", "\u200b", "\u00ad", "\ufeff", " \u2060\u200b\t"])
def test_blank_reference_is_refused(tmp_path, reference):
    p = _corpus(tmp_path, [("Hello", "Hola"), ("Good night", reference)])
    res = runner.invoke(app, ["corpus", "check", str(p)])
    assert res.exit_code == 1
    assert f"error: {p}: $.entries[1].reference: Value error, is blank after text normalisation" in res.output
    with pytest.raises(InputError, match=r"entries\[1\]\.reference"):
        load_corpus(p)


def test_empty_baseline_is_not_run_on_a_blank_reference(tmp_path):
    # before: the run went ahead and the empty: baseline scored TER 0 (perfect) on the entry whose reference is " "
    p = _corpus(tmp_path, [("Hello", "Hola"), ("Good night", " ")])
    res = runner.invoke(app, ["run", str(p), "--method", "empty:", "--work-dir", str(tmp_path / "w")])
    assert res.exit_code == 1
    assert "$.entries[1].reference: Value error, is blank after text normalisation" in res.output
    assert not (tmp_path / "w").exists()


def test_blank_source_is_refused(tmp_path):
    p = _corpus(tmp_path, [("\u200b\u200b", "Hola")])
    with pytest.raises(InputError, match=r"entries\[0\]\.source: Value error, is blank"):
        load_corpus(p)


def test_check_flags_identical_duplicate_and_placeholder(tmp_path):
    p = _corpus(tmp_path, [("Debian", "Debian"), ("Open %s", "Abrir %s"), ("Open  %s", "Abrir %s\u200b"),
                           ("{n} files in %(dir)s", "{n} archivos"), ("Hi", "Hola")])
    res = runner.invoke(app, ["corpus", "check", str(p)])
    assert res.exit_code == 0, res.output
    flags = [ln for ln in res.output.splitlines() if ln.startswith("flag: ")]
    assert flags == [
        f"flag: {p}: entries[0] (id 1): same_as_source: the reference equals the source",
        f"flag: {p}: entries[2] (id 3): duplicate_pair: same source and reference as id 2",
        f"flag: {p}: entries[3] (id 4): placeholder: missing in the reference: %(dir)s"]
    strict = runner.invoke(app, ["corpus", "check", "--strict", str(p)])
    assert strict.exit_code == 1 and f"error: {p}: 3 flagged entries" in strict.output


def test_committed_corpora_have_no_flags():
    files = sorted((Path(__file__).parent.parent / "corpora").glob("*.json"))
    assert len(files) == 10  # six en↔xx corpora + es→en and ca→en (issue 39) + the two dialogue corpora (issue 40)
    res = runner.invoke(app, ["corpus", "check", "--strict", *map(str, files)])
    assert res.exit_code == 0, res.output
