"""Importers (mtboard.inputs.corpora.importers): PO/MO via polib, TSV, TMX via defusedxml, aligned HTML, UDHR.

All fixtures are small, hand-made files written by the tests themselves.
"""

from __future__ import annotations

import json

import polib
import pytest

import cli_support
from mtboard.inputs.corpora.importers import ImportReport, align_html, align_udhr, html_blocks, read_catalog, read_csv, \
    read_tmx, read_tsv, split_context
from mtboard.core.errors import InputError

# Hand-made PO catalogue: header, a normal entry, msgctxt, fuzzy, obsolete, plural, untranslated, identical.
PO = r'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Language: es\n"

msgid "Save the file"
msgstr "Guardar el archivo"

msgctxt "month name"
msgid "May"
msgstr "Mayo"

#, fuzzy
msgid "Open the door"
msgstr "Abrir la puerta"

msgid "One file"
msgid_plural "%d files"
msgstr[0] "Un archivo"
msgstr[1] "%d archivos"

msgid "Not translated yet"
msgstr ""

msgid "Debian"
msgstr "Debian"

#~ msgid "Old string"
#~ msgstr "Cadena vieja"
'''


@pytest.fixture
def po_file(tmp_path):
    p = tmp_path / "hand.po"
    p.write_text(PO, encoding="utf-8")
    return p


def _pairs(pairs):
    return [(p.source, p.reference, p.context) for p in pairs]


def test_read_po(po_file):
    report = ImportReport()
    pairs = read_catalog(po_file, report)
    # fuzzy, untranslated, obsolete and the header are gone (and counted); the plural entry gives its two forms (no
    # Plural-Forms header: msgstr[0] for n=1, msgstr[1] for n=2); identical text is left to the filters
    assert _pairs(pairs) == [("Save the file", "Guardar el archivo", None), ("May", "Mayo", "month name"),
                             ("One file", "Un archivo", "plural form for n=1"),
                             ("%d files", "%d archivos", "plural form for n=2"), ("Debian", "Debian", None)]
    assert (report.kept, dict(report.skipped)) == (5, {"fuzzy": 1, "untranslated": 1, "obsolete": 1})
    assert pairs[3].locator.endswith(" msgstr[1]") and pairs[3].tag == "msg-plural"
    # the corpus build's recipe reads catalogs without plural entries (corpora/build.py)
    assert [p.source for p in read_catalog(po_file, plurals=False)] == ["Save the file", "May", "Debian"]
    assert pairs[1].locator.startswith("msgctxt=month name msgid-sha256=")
    import hashlib
    assert pairs[0].locator == "msgid-sha256=" + hashlib.sha256(b"Save the file").hexdigest()[:16]


def test_read_mo_round_trip(po_file, tmp_path):
    mo = tmp_path / "hand.mo"
    polib.pofile(str(po_file)).save_as_mofile(str(mo))  # msgfmt-like compile of the hand-made PO (fuzzy excluded)
    pairs = read_catalog(mo, plurals=False)
    assert sorted(_pairs(pairs)) == sorted([("Save the file", "Guardar el archivo", None),
                                            ("May", "Mayo", "month name"), ("Debian", "Debian", None)])


@pytest.mark.parametrize("msgid,ctx,expected", [
    ("month\x04May", None, ("May", "month")),
    ("?plural:Frisians", None, ("Frisians", "plural")),
    ("female^Hello there", None, ("Hello there", "female")),
    ("Plain text", "given", ("Plain text", "given")),
    ("What? No:", None, ("What? No:", None)),  # '?' not at the start: no qualifier
])
def test_split_context(msgid, ctx, expected):
    assert split_context(msgid, ctx) == expected


def test_read_catalog_garbage(tmp_path):
    bad = tmp_path / "bad.mo"
    bad.write_bytes(b"\x00\x01not a catalog at all")
    with pytest.raises(InputError, match="bad.mo"):
        read_catalog(bad)


def test_read_tsv(tmp_path):
    p = tmp_path / "hand.tsv"
    p.write_text("# hand-made\nHello\tHola\n\nGood night\tBuenas noches\n", encoding="utf-8")
    pairs = read_tsv(p)
    assert [(x.source, x.reference, x.locator) for x in pairs] == [("Hello", "Hola", "line 2"),
                                                                  ("Good night", "Buenas noches", "line 4")]
    p.write_text("Hello\tHola\nno tab here\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_tsv(p)
    assert "hand.tsv:2" in str(exc.value) and "2 tab-separated columns" in str(exc.value)



@pytest.mark.parametrize("header, langs", [
    ("source\ttarget", {}),
    ("SRC\tTgt ", {}),  # any case, white space around a name
    ("en\tes", {"source_lang": "en", "target_lang": "es"}),
    ("Reference\tsource", {}),
])
def test_a_tsv_header_naming_the_columns_is_skipped_like_the_csv_one(tmp_path, header, langs):
    # hand-made: a comment, the header, two entries, and a later line with the header's words (an entry)
    p = tmp_path / "hand.tsv"
    p.write_text(f"# hand-made\n{header}\nHello\tHola\nsource\ttarget\n", encoding="utf-8-sig")  # with a BOM
    report = ImportReport()
    pairs = read_tsv(p, report, **langs)
    assert [(x.source, x.reference, x.locator) for x in pairs] == [("Hello", "Hola", "line 3"),
                                                                  ("source", "target", "line 4")]
    assert report.kept == 2 and report.skipped == {"comment": 1, "header": 1}
    csv = tmp_path / "hand.csv"  # the same rule as the CSV reader's
    csv.write_text(f"{header.replace(chr(9), ',')}\nHello,Hola\n", encoding="utf-8")
    assert [(x.source, x.locator) for x in read_csv(csv, **langs)] == [("Hello", "line 2")]


def test_a_tsv_first_line_that_is_not_column_names_is_an_entry(tmp_path):
    p = tmp_path / "hand.tsv"  # hand-made: "en<TAB>es" without the language codes given; "source<TAB>Hola"
    p.write_text("en\tes\nsource\tHola\n", encoding="utf-8")
    assert [(x.source, x.reference) for x in read_tsv(p)] == [("en", "es"), ("source", "Hola")]
    assert [x.source for x in read_tsv(p, source_lang="en", target_lang="fr")] == ["en", "source"]


def test_corpus_import_skips_a_tsv_header(tmp_path):
    p = tmp_path / "hand.tsv"  # hand-made
    p.write_text("en\tes\nOpen the file.\tAbra el archivo.\n", encoding="utf-8")
    out = tmp_path / "c.json"
    res = cli_support.invoke(["corpus", "import", str(p), "-o", str(out), "--source-lang", "en", "--target-lang",
                              "es", "--license", "CC0-1.0"])
    assert res.returncode == 0, res.stderr
    assert "header 1" in res.stdout + res.stderr
    corpus = json.loads(out.read_text(encoding="utf-8"))
    assert [e["source"] for e in corpus["entries"]] == ["Open the file."]


TMX = '''<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en" datatype="plaintext" segtype="sentence" adminlang="en"
 creationtool="hand" creationtoolversion="1" o-tmf="none"/>
<body>
<tu tuid="greet"><tuv xml:lang="en-US"><seg>Hello <bpt i="1">&lt;b&gt;</bpt>world<ept i="1">&lt;/b&gt;</ept></seg></tuv>
<tuv xml:lang="es-ES"><seg>Hola <bpt i="1">&lt;b&gt;</bpt>mundo<ept i="1">&lt;/b&gt;</ept></seg></tuv></tu>
<tu><tuv lang="EN"><seg>Good <hi>night</hi></seg></tuv><tuv lang="ES"><seg>Buenas <hi>noches</hi></seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>Only English</seg></tuv><tuv xml:lang="fr"><seg>Seulement</seg></tuv></tu>
</body></tmx>'''


def test_read_tmx(tmp_path):
    p = tmp_path / "hand.tmx"
    p.write_text(TMX, encoding="utf-8")
    report = ImportReport()
    pairs = read_tmx(p, "en", "es", report)
    # bpt/ept carry the native markup they stand for: it becomes text again; hi keeps its text
    assert [(x.source, x.reference, x.locator) for x in pairs] == [
        ("Hello <b>world</b>", "Hola <b>mundo</b>", "tuid=greet"), ("Good night", "Buenas noches", "tu 2")]
    assert pairs[0].note == "inline codes: bpt → text ×2, ept → text ×2" and pairs[1].note is None
    assert (report.kept, dict(report.skipped)) == (2, {"no es tuv": 1})
    # other direction reads the same units
    assert [(x.source, x.reference) for x in read_tmx(p, "es", "en")][0] == ("Hola <b>mundo</b>", "Hello <b>world</b>")


BOMB = '''<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<tmx version="1.4"><header/><body><tu><tuv xml:lang="en"><seg>&b;</seg></tuv>
<tuv xml:lang="es"><seg>x</seg></tuv></tu></body></tmx>'''
XXE = '''<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<tmx version="1.4"><header/><body><tu><tuv xml:lang="en"><seg>&x;</seg></tuv></tu></body></tmx>'''


@pytest.mark.parametrize("content,match", [
    (BOMB, "forbidden XML"), (XXE, "forbidden XML"), ("<tmx><body>", "malformed XML"),
    ("<html/>", "not <tmx>"),
])
def test_read_tmx_rejects(tmp_path, content, match):
    p = tmp_path / "evil.tmx"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=match) as exc:
        read_tmx(p, "en", "es")
    assert "evil.tmx" in str(exc.value)


def test_symlink_refused(tmp_path, po_file):
    link = tmp_path / "link.po"
    link.symlink_to(po_file)
    with pytest.raises(InputError):
        read_catalog(link)


# Hand-made po4a-style pages: same block structure, navigation and code to skip.
EN_PAGE = '''<html><body><div class="navheader"><a>Prev</a><a>Next</a></div>
<h2>1.1. The shell</h2><p>The shell reads <code>commands</code>.<sup>[1]</sup></p>
<pre>ls -la</pre><ul><li><p>First item</p></li><li>Second item</li></ul>
<div class="navfooter"><p>Home</p></div></body></html>'''
ES_PAGE = '''<html><body><div class="navheader"><a>Anterior</a></div>
<h2>1.1. El intérprete</h2><p>El intérprete lee <code>órdenes</code>.<sup>[1]</sup></p>
<pre>ls -la</pre><ul><li><p>Primer elemento</p></li><li>Segundo elemento</li></ul>
<div class="navfooter"><p>Inicio</p></div></body></html>'''


def test_html_blocks():
    blocks = html_blocks(EN_PAGE)
    assert blocks == [("h2", "1.1. The shell"), ("p", "The shell reads commands."), ("li", ""),
                      ("p", "First item"), ("li", "Second item")]


def test_align_html(tmp_path):
    en, es = tmp_path / "a.en.html", tmp_path / "a.es.html"
    en.write_text(EN_PAGE, encoding="utf-8")
    es.write_text(ES_PAGE, encoding="utf-8")
    pairs = align_html(en, es)
    assert [(p.tag, p.source, p.reference, p.locator) for p in pairs] == [
        ("h2", "1.1. The shell", "1.1. El intérprete", "block 0"),
        ("p", "The shell reads commands.", "El intérprete lee órdenes.", "block 1"),
        ("p", "First item", "Primer elemento", "block 3"),
        ("li", "Second item", "Segundo elemento", "block 4"),
    ]
    es.write_text(ES_PAGE.replace("<li>Segundo elemento</li>", ""), encoding="utf-8")
    assert align_html(en, es) is None  # different block structure: skipped, never guessed


UDHR_EN = '''<html><body><h1>Universal Declaration</h1><header><h2>Preamble</h2><p>Whereas one;</p><p>Whereas two,</p>
</header><article data-number="1"><h2>Article 1</h2><p>All are born free.</p></article>
<article data-number="2"><h2>Article 2</h2><p>Everyone has rights.</p><p>Furthermore, none.</p></article>
</body></html>'''
UDHR_ES = '''<html><body><h1>Declaración</h1><header><h2>Preámbulo</h2><p>Considerando uno;</p><p>Considerando dos,</p>
</header><article data-number="1"><h2>Artículo 1</h2><p>Todos nacen libres.</p></article>
<article data-number="2"><h2>Artículo 2</h2><p>Toda persona tiene derechos. Además, ninguna.</p></article>
</body></html>'''


def test_align_udhr(tmp_path):
    en, es = tmp_path / "eng.html", tmp_path / "spa.html"
    en.write_text(UDHR_EN, encoding="utf-8")
    es.write_text(UDHR_ES, encoding="utf-8")
    got = [(p.locator, p.source, p.reference) for p in align_udhr(en, es)]
    assert got == [
        ("preamble block 0", "Whereas one;", "Considerando uno;"),
        ("preamble block 1", "Whereas two,", "Considerando dos,"),
        ("article 1 block 0", "All are born free.", "Todos nacen libres."),
        ("article 2", "Everyone has rights. Furthermore, none.", "Toda persona tiene derechos. Además, ninguna."),
    ]
