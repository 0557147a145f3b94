"""Terminology adherence from entry glossaries; TBX/CSV glossary import (docs/SCORING_SPEC.md §2.4).

The glossaries and sentences below are hand-made for these tests (not evaluation data); expected values are counted
by hand.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mtboard.score import scoring
from mtboard.inputs.corpora.importers.glossary import attach_glossary, read_glossary, read_glossary_csv, read_tbx
from mtboard.core.documents import corpus_bytes, load_corpus
from mtboard.core.errors import InputError
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.composite import composite, entry_columns
from mtboard.core.schema import Corpus, Entry, EntryResult, GlossaryTerm, TranslationRecord
from mtboard.core.text import contains_term

from cli_support import invoke

TBX2 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE martif SYSTEM "TBXcoreStructV02.dtd">
<martif type="TBX" xml:lang="en"><text><body>
 <termEntry id="c1">
  <langSet xml:lang="en-US"><tig><term>file</term></tig></langSet>
  <langSet xml:lang="es"><tig><term>archivo</term></tig><ntig><termGrp><term>fichero</term></termGrp></ntig></langSet>
 </termEntry>
 <termEntry id="c2">
  <langSet xml:lang="en"><tig><term>save</term></tig></langSet>
  <langSet xml:lang="es"><tig><term>guardar</term></tig></langSet>
 </termEntry>
 <termEntry id="c3"><langSet xml:lang="en"><tig><term>orphan</term></tig></langSet></termEntry>
</body></text></martif>
"""

TBX3 = """<?xml version="1.0" encoding="UTF-8"?>
<tbx type="TBX-Basic" style="dca" xml:lang="en" xmlns="urn:iso:std:iso:30042:ed-2"><text><body>
 <conceptEntry id="1">
  <langSec xml:lang="en"><termSec><term>patient</term></termSec></langSec>
  <langSec xml:lang="es"><termSec><term>paciente</term></termSec></langSec>
 </conceptEntry>
</body></text></tbx>
"""


@pytest.mark.parametrize("text, term, found", [
    ("Open the File now", "file", True), ("Edit your profile", "file", False), ("files", "file", False),
    ("ファイルを開く", "ファイル", True), ("Abra el archivo.", "archivo", True), ("El archivo‍", "archivo", True),
    ("GUARDAR cambios", "guardar", True), ("reguardar", "guardar", False),
])
def test_contains_term(text, term, found):
    assert contains_term(text, term) is found


def test_tbx2_and_tbx3_and_csv_glossaries(tmp_path):
    p2, p3, pc = tmp_path / "g.tbx", tmp_path / "g3.tbx", tmp_path / "g.csv"
    p2.write_text(TBX2, encoding="utf-8")
    p3.write_text(TBX3, encoding="utf-8")
    pc.write_text('source,target\nfile,archivo,fichero\n"save",guardar\n\nFile,archivo\n', encoding="utf-8")
    want = [GlossaryTerm(source="file", targets=["archivo", "fichero"]),
            GlossaryTerm(source="save", targets=["guardar"])]
    assert read_tbx(p2, "en", "es") == want  # the orphan concept (no Spanish term) is skipped
    assert read_glossary_csv(pc) == want  # header skipped, 'File' merged into 'file'
    assert read_glossary(p3, "en", "es") == [GlossaryTerm(source="patient", targets=["paciente"])]
    with pytest.raises(InputError, match="no concept has terms in both en and fr"):
        read_tbx(p2, "en", "fr")
    bad = tmp_path / "bad.csv"
    bad.write_text("file\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a term and at least one rendering"):
        read_glossary_csv(bad)
    with pytest.raises(InputError, match="unknown glossary format .txt"):
        read_glossary(tmp_path / "g.txt", "en", "es")


def test_tbx_entity_declarations_are_refused(tmp_path):
    p = tmp_path / "bomb.tbx"
    p.write_text('<?xml version="1.0"?><!DOCTYPE martif [<!ENTITY a "aaaa">]><martif>&a;</martif>', encoding="utf-8")
    with pytest.raises(InputError, match="forbidden XML construct"):
        read_tbx(p, "en", "es")


ENTRIES = [
    Entry(id=1, source="Open the file.", reference="Abra el archivo."),
    Entry(id=2, source="Save the file before closing.", reference="Guarde el archivo antes de cerrar."),
    Entry(id=3, source="The patient must rest.", reference="El paciente debe descansar."),
    Entry(id=4, source="Good morning.", reference="Buenos días."),
]
TERMS = [GlossaryTerm(source="file", targets=["archivo", "fichero"]), GlossaryTerm(source="save", targets=["guardar",
                                                                                                          "guarde"])]


def test_attach_and_score_hand_counted():
    ents = attach_glossary(ENTRIES, TERMS)
    assert [[t.source for t in e.glossary] for e in ents] == [["file"], ["file", "save"], [], []]
    outs = ["Abra el fichero.", "Guarde el documento antes de cerrar.", "El paciente debe descansar.", None]
    recs = [TranslationRecord(entry_id=e.id, raw_predicted=o, **({} if o else {"error": "x", "error_kind": "timeout"}))
            for e, o in zip(ents, outs)]
    scores, results = scoring.score_run(ents, recs, source_language="en", target_language="es", elapsed_seconds=1.0,
                                        fst=False)
    # entry 1: 1 of 1 ('fichero'); entry 2: 'guarde' yes, 'archivo' no → 1 of 2; entries 3–4 have no glossary
    assert [(r.glossary_hits, r.glossary_terms) for r in results] == [(1, 1), (1, 2), (None, None), (None, None)]
    assert scores.terminology_adherence == 2 / 3
    assert "terminology_adherence" not in scores.metric_availability
    dumped = [r.model_dump(mode="json") for r in results]
    assert "glossary_terms" in dumped[0] and "glossary_terms" not in dumped[2]  # absent, not null, without a glossary
    assert EntryResult.model_validate_json(json.dumps(dumped[1])).glossary_hits == 1
    # the composite weighs it (profile B: 0.02) and the bootstrap at the full sample agrees exactly
    v = {k: getattr(scores, k) for k in ("chrf_plus_plus", "exact_match_rate", "code_switching_rate",
                                         "semantic_score", "hallucination_rate", "terminology_adherence")}
    assert composite(v)[0] == scores.composite
    without = composite({**v, "terminology_adherence": None})[0]
    assert without != scores.composite
    cols = entry_columns(results, has_equiv=False, has_fst=False)
    assert cols["terminology_adherence"].tolist() == [[1, 1, 0, 0], [1, 2, 0, 0]]
    ones = np.ones((1, 4), dtype=np.int64)
    assert bootstrap.composite_resamples([r.stats.chrf for r in results], cols, ones).tolist() == [scores.composite]
    # a resample holding only entries without a glossary falls back to the full-sample ratio
    only34 = np.array([[0, 0, 2, 2]])
    got = bootstrap.composite_resamples([r.stats.chrf for r in results], cols, only34)
    assert np.isfinite(got).all()


def test_a_failed_entry_misses_its_terms():
    ents = attach_glossary(ENTRIES[:1], TERMS)
    recs = [TranslationRecord(entry_id=1, raw_predicted="", error=None)]
    scores, results = scoring.score_run(ents, recs, source_language="en", target_language="es", elapsed_seconds=1.0,
                                        fst=False)
    assert (results[0].glossary_hits, results[0].glossary_terms) == (0, 1) and scores.terminology_adherence == 0.0


def test_corpus_file_omits_empty_glossaries_and_keeps_terms(tmp_path):
    ents = attach_glossary(ENTRIES, TERMS)
    corpus = Corpus.model_validate({"dataset": {"id": "t", "version": "1.0.0", "language_pair": "EN→ES",
                                                "source_language": "en", "target_language": "es",
                                                "created": "2026-12-01", "license": "CC0-1.0", "provenance": ["elicited"]},
                                    "entries": [e.model_dump() for e in ents]})
    data = json.loads(corpus_bytes(corpus))
    assert "glossary" not in data["entries"][3]
    assert data["entries"][1]["glossary"] == [{"source": "file", "targets": ["archivo", "fichero"]},
                                              {"source": "save", "targets": ["guardar", "guarde"]}]


def test_cli_import_keeps_the_glossary(tmp_path):
    src = tmp_path / "pairs.tsv"
    src.write_text("Open the file.\tAbra el archivo.\nSave your work.\tGuarde su trabajo.\n"
                   "Good morning to you all.\tBuenos días a todos.\n", encoding="utf-8")
    gl = tmp_path / "g.tbx"
    gl.write_text(TBX2, encoding="utf-8")
    out = tmp_path / "c.json"
    res = invoke(["corpus", "import", str(src), "--output", str(out), "--source-lang", "en", "--target-lang", "es",
                  "--license", "CC0-1.0", "--glossary", str(gl), "--created", "2026-12-01"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "glossary g.tbx: 2 terms, found in the sources of 2 of" in res.stderr
    corpus, _ = load_corpus(out)
    by_src = {e.source: [t.source for t in e.glossary] for e in corpus.entries}
    assert by_src.get("Open the file.") == ["file"] and by_src.get("Save your work.") == ["save"]
