"""`mtboard corpus import | check | merge`: outputs and exit codes, through the real typer app.

The PO and TSV inputs are small hand-made fixtures written by the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.core.documents import load_corpus

runner = CliRunner()
CORPORA = Path(__file__).resolve().parent.parent / "corpora"

# hand-made catalogue: 4 usable UI strings (one with a placeholder) + entries every rule drops
PO = r'''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\n"

msgid "Enter a valid date."
msgstr "Introduzca una fecha válida."

msgid "Last name"
msgstr "Apellido"

msgid "Could not save the document."
msgstr "No se pudo guardar el documento."

msgid "Hello %(name)s, welcome back"
msgstr "Hola %(name)s, bienvenido de nuevo"

msgid "%s"
msgstr "%s"

msgid "Debian"
msgstr "Debian"

#, fuzzy
msgid "Delete the file"
msgstr "Borrar el archivo"
'''


def _run(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def po(tmp_path):
    p = tmp_path / "ui.po"
    p.write_text(PO, encoding="utf-8")
    return p


def _import(po, out, *extra):
    return _run("corpus", "import", str(po), "-o", str(out), "--source-lang", "en", "--target-lang", "es",
                "--license", "BSD-3-Clause", "--domain", "ui", "--created", "2026-01-01", *extra)


def test_import_writes_a_valid_corpus(po, tmp_path):
    out = tmp_path / "ui.json"
    res = _import(po, out, "--diagnostic-placeholders", "--package", "hand", "--package-version", "0")
    assert res.exit_code == 0, res.output
    assert "wrote" in res.stdout and "4 entries" in res.stdout
    assert "read 6, kept 4, dropped: same_text 1, too_few_letters 1" in res.stderr
    corpus, _ = load_corpus(out)
    got = [(e.id, e.source, e.segment, e.context, e.difficulty) for e in corpus.entries]
    assert got == [
        (1, "Enter a valid date.", "development", "instruction", 2),
        (2, "Last name", "development", "label", 1),
        (3, "Could not save the document.", "development", "error", 2),
        (4, "Hello %(name)s, welcome back", "diagnostic", "label", 2),  # 4 words (placeholder = 1) → 2
    ]
    assert corpus.entries[0].origin.package == "hand" and corpus.entries[0].origin.file == "ui.po"
    assert corpus.dataset.id == "mtb-en-es-import" and corpus.dataset.license == "BSD-3-Clause"


def test_import_sampling_is_stable(po, tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert _import(po, a, "--sample", "2", "--seed", "9").exit_code == 0
    assert _import(po, b, "--sample", "2", "--seed", "9").exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    assert len(load_corpus(a)[0].entries) == 2
    assert _import(po, c, "--sample", "4", "--seed", "9").exit_code == 0
    small = {e.source for e in load_corpus(a)[0].entries}
    assert small <= {e.source for e in load_corpus(c)[0].entries}


def test_import_reverse_notes_origin(tmp_path):
    tsv = tmp_path / "hand.tsv"  # hand-made en→ja pairs read as ja→en
    tsv.write_text("Save the file\tファイルを保存する\nOpen the door now\tドアを開けてください\n", encoding="utf-8")
    out = tmp_path / "ja.json"
    res = _run("corpus", "import", str(tsv), "-o", str(out), "--source-lang", "ja", "--target-lang", "en",
               "--license", "MIT", "--domain", "ui", "--reverse", "--created", "2026-01-01")
    assert res.exit_code == 0, res.output
    corpus, _ = load_corpus(out)
    assert [(e.source, e.reference) for e in corpus.entries] == [("ファイルを保存する", "Save the file"),
                                                                ("ドアを開けてください", "Open the door now")]
    assert "reversed from a en→ja catalogue" in corpus.entries[0].origin.note
    assert corpus.entries[0].context.value == "instruction"  # from the English side


@pytest.mark.parametrize("args,needle", [
    (("--domain", "cooking"), "--domain: unknown value 'cooking'"),
    (("--register", "slang"), "--register: unknown value 'slang'"),
    (("--format", "docx"), "--format: unknown format"),
])
def test_import_bad_options_exit_1(po, tmp_path, args, needle):
    res = _run("corpus", "import", str(po), "-o", str(tmp_path / "x.json"), "--source-lang", "en",
               "--target-lang", "es", "--license", "MIT", *args)
    assert res.exit_code == 1
    assert needle in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_import_bad_language_and_missing_file(po, tmp_path):
    res = _run("corpus", "import", str(po), "-o", str(tmp_path / "x.json"), "--source-lang", "english!",
               "--target-lang", "es", "--license", "MIT")
    assert res.exit_code == 1 and "--source-lang" in res.stderr
    res = _run("corpus", "import", str(tmp_path / "nope.po"), "-o", str(tmp_path / "x.json"), "--source-lang", "en",
               "--target-lang", "es", "--license", "MIT")
    assert res.exit_code == 1 and "nope.po" in res.stderr and "Traceback" not in res.output


def test_check_committed_corpora_pass():
    files = sorted(str(p) for p in CORPORA.glob("*.json"))
    res = _run("corpus", "check", "--public", *files)
    assert res.exit_code == 0, res.output
    for f in files:
        assert f"{f}: ok" in res.stdout
    assert "segment     development 355, diagnostic 24" in res.stdout  # mtb-en-es-dev
    res = _run("corpus", "check", "--json", str(CORPORA / "mtb-en-es-dev.json"))
    data = json.loads(res.stdout)
    entry = data[str(CORPORA / "mtb-en-es-dev.json")]
    assert entry["entries"] == 379 and entry["segment"] == {"development": 355, "diagnostic": 24}
    assert sum(entry["domain"].values()) == 379 and sum(entry["difficulty"].values()) == 379
    assert entry["variants"] == {"entries": 0, "classes": {}}  # no committed EN→ES entry carries variants


def _corpus_json(**entry_overrides) -> dict:
    entry = {"id": 1, "source": "Hello", "reference": "Hola", "domain": "ui"}
    entry.update(entry_overrides)
    return {"dataset": {"id": "t", "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
                        "target_language": "es", "created": "2026-01-01", "license": "MIT", "provenance": []},
            "entries": [entry]}


@pytest.mark.parametrize("overrides,needle", [
    ({"domain": "cooking"}, "entries[0].domain"),
    ({"difficulty": 9}, "entries[0].difficulty"),
    ({"difficulty": "3"}, "entries[0].difficulty"),
    ({"colour": "red"}, "entries[0].colour"),
])
def test_check_bad_file_exit_1_one_line(tmp_path, overrides, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_corpus_json(**overrides)), encoding="utf-8")
    good = CORPORA / "mtb-en-fr-dev.json"
    res = _run("corpus", "check", str(good), str(bad))
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.json" in lines[0] and needle in lines[0], res.stderr
    assert f"{good}: ok" in res.stdout  # the good file was still checked
    assert "Traceback" not in res.output


def test_check_public_refuses_secret_segments(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_corpus_json(segment="gold_standard")), encoding="utf-8")
    assert _run("corpus", "check", str(secret)).exit_code == 0
    res = _run("corpus", "check", "--public", str(secret))
    assert res.exit_code == 1 and "entries[0].segment" in res.stderr and "secret.json" in res.stderr


def test_merge(po, tmp_path):
    ui = tmp_path / "ui.json"
    assert _import(po, ui).exit_code == 0
    tsv = tmp_path / "med.tsv"  # hand-made medical pairs
    tsv.write_text("Blood pressure\tPresión arterial\nLast name\tApellido\n", encoding="utf-8")
    med = tmp_path / "med.json"
    res = _run("corpus", "import", str(tsv), "-o", str(med), "--source-lang", "en", "--target-lang", "es",
               "--license", "GPL-2.0-or-later", "--domain", "medical", "--created", "2026-02-01")
    assert res.exit_code == 0, res.output
    out = tmp_path / "merged.json"
    res = _run("corpus", "merge", str(ui), str(med), "-o", str(out), "--id", "mtb-en-es-mixed")
    assert res.exit_code == 0, res.output
    merged, _ = load_corpus(out)
    assert [e.id for e in merged.entries] == [1, 2, 3, 4, 5]  # 'Last name' appears once (first wins)
    assert [e.domain.value for e in merged.entries] == ["ui"] * 4 + ["medical"]
    assert merged.dataset.license == "BSD-3-Clause AND GPL-2.0-or-later"
    assert merged.dataset.created == "2026-02-01"
    out2 = tmp_path / "merged2.json"
    assert _run("corpus", "merge", str(ui), str(med), "-o", str(out2), "--id", "mtb-en-es-mixed").exit_code == 0
    assert out.read_bytes() == out2.read_bytes()
    res = _run("corpus", "merge", str(ui), str(CORPORA / "mtb-en-fr-dev.json"), "-o", str(out), "--id", "x")
    assert res.exit_code == 1 and "one language pair" in res.stderr
