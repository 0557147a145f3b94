"""Issue 16: ``mtboard sweep run`` runs the cells through the runner's library code (real Apertium, the echo
baseline, a gguf cell whose model file does not exist as the failing one), resumes, and summarises; the gguf
backend's ``seed`` option (temperature > 0 made reproducible) is sent and recorded.

The sweep files are small hand-made ones in tmp_path over the committed EN→ES corpus.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mtboard.core.documents import load_card
from mtboard.sweeps.spec import load_sweep

import cli_support

ROOT = Path(__file__).resolve().parents[1]

SWEEP = """name: tiny
datasets: [corpora/mtb-en-es-dev.json]
limit: 4
methods:
  - {method: "apertium:eng-spa", label: apertium}
  - {method: "echo:", label: echo}
  - {method: "gguf:models/model.gguf", label: missing}
"""


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "corpora").mkdir()
    shutil.copy(ROOT / "corpora" / "mtb-en-es-dev.json", tmp_path / "corpora")
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(SWEEP, encoding="utf-8")
    return tmp_path


@pytest.mark.skipif(shutil.which("apertium") is None, reason="apertium is not installed")
@pytest.mark.slow  # 2.6 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_sweep_run_runs_resumes_and_summarises(checkout):
    sweep = load_sweep(checkout / "sweeps" / "tiny.yaml")
    apertium, echo, missing = sweep.cells
    proc = cli_support.invoke(["sweep", "run", "sweeps/tiny.yaml"], cwd=checkout,
                              env={"MTBOARD_PROGRESS_INTERVAL": "1000"})
    assert proc.returncode == 1  # one cell failed; the others ran
    assert "1 of 3 cell(s) failed" in proc.stderr
    work = checkout / "runs" / "sweeps" / "tiny"
    summary = json.loads((work / "summary.json").read_text(encoding="utf-8"))
    rows = {r["cell"]: r for r in summary["rows"]}
    assert (summary["cells"], summary["cards"], summary["failed"]) == (3, 2, 1)
    assert rows[missing.id]["status"] == "failed" and "model.gguf" in rows[missing.id]["error"]
    a_card = load_card(work / apertium.id / "card.json")
    e_card = load_card(work / echo.id / "card.json")
    # the same run `mtboard run` makes: the cell's dataset slice, method, condition
    assert (a_card.dataset.entry_count, a_card.method.limit, a_card.condition) == (4, 4, "default")
    assert [r.entry_id for r in a_card.results] == [1, 2, 3, 4]
    assert e_card.scores.chrf_plus_plus == 0.0 and e_card.condition == "baseline"
    assert rows[apertium.id]["status"] == "done" and rows[apertium.id]["tokens_used"] == 0
    assert "sweep       tiny: 3 cell(s), 2 card(s), 1 failed" in proc.stdout
    assert f"cell        {missing.id} mtb-en-es-dev missing few-shot-completion t=0.0: FAILED" in proc.stderr
    before = (work / apertium.id / "card.json").read_bytes()

    # resumable: the finished cells are not run again (their cards are reused byte for byte); --cell picks one
    again = cli_support.invoke(["sweep", "run", "sweeps/tiny.yaml", "--cell", apertium.id, "--cell", echo.id],
                               cwd=checkout, env={"MTBOARD_PROGRESS_INTERVAL": "1000"})
    assert again.returncode == 0, again.stderr
    assert "card (already there)" in again.stderr
    assert (work / apertium.id / "card.json").read_bytes() == before
    assert "2 cell(s), 2 card(s), 0 failed" in again.stdout

    unknown = cli_support.invoke(["sweep", "run", "sweeps/tiny.yaml", "--cell", "0123456789ab"], cwd=checkout)
    assert unknown.returncode == 1 and "no cell 0123456789ab" in unknown.stderr


def test_gguf_seed_is_sent_per_replicate_recorded_and_re_run(tmp_path):
    """``--backend-opt seed=N``: request of replicate r carries seed N + r; method.sampling records N; a card with a
    recorded seed re-runs with it (mtboard verify)."""
    from mtboard.backends.base import TranslateRequest
    from mtboard.backends.gguf import GGUFBackend, GGUFOptions
    from mtboard.inputs.runspec import BackendContext, DatasetIdentity, MethodSpec, RunSpec
    from mtboard.core.schema import BackendFacts, MethodClass

    (tmp_path / "m.gguf").write_bytes(b"GGUF")  # never loaded: the requests are only built
    method = MethodSpec.from_parts("gguf", str(tmp_path / "m.gguf"))
    be = GGUFBackend(method, BackendContext(temperature=0.7), GGUFOptions(seed=41))
    reqs = [be.build_request(TranslateRequest(entry_id=1, source="Hi", prompt="Hi", run_index=r)) for r in (0, 2)]
    assert [r.extra["seed"] for r in reqs] == [41, 43] and reqs[0].temperature == 0.7
    assert be.sampling() == {"temperature": 0.7, "top_p": 1.0, "seed": 41}
    plain = GGUFBackend(method, BackendContext(temperature=0.7), GGUFOptions())
    assert "seed" not in plain.build_request(TranslateRequest(entry_id=1, source="Hi", prompt="Hi")).extra
    assert "seed" not in plain.sampling()

    spec = RunSpec(method=MethodSpec.from_parts("gguf", "m.gguf"), public_method=MethodSpec.from_parts("gguf", "m.gguf"),
                   method_class=MethodClass.raw_llm,
                   dataset=DatasetIdentity(id="d", version="1", sha256="0" * 64, language_pair="EN→ES",
                                           source_language="en", target_language="es"), condition="c")
    rerun = GGUFBackend.rerun(spec, BackendFacts(sampling={"temperature": 0.7, "seed": 41}),
                              model_path=Path("/models/m.gguf"))
    assert rerun.backend_options == {"seed": 41}
    assert GGUFBackend.rerun(spec, BackendFacts(sampling={"temperature": 0.0}),
                             model_path=Path("/models/m.gguf")).backend_options == {}


def test_a_missing_dataset_or_mode_names_the_sweep_file_the_field_and_the_fix(checkout, tmp_path):
    """The reviewer's leftover of issue 16: these errors named a corpus path under a guessed root, or ``--method``,
    never the sweep file. Plan time: a dataset that is not there, a mode for other languages; run time: an Apertium
    mode that is not installed here (eng-fra: this machine has eng-spa and eng-cat)."""
    sweeps = checkout / "sweeps"
    (sweeps / "nodata.yaml").write_text("name: nodata\ndatasets: [corpora/mtb-en-xx-dev.json]\n"
                                        "methods: [{method: 'echo:'}]\n", encoding="utf-8")
    proc = cli_support.invoke(["sweep", "plan", "sweeps/nodata.yaml"], cwd=checkout)
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert line == (f"error: {Path('sweeps') / 'nodata.yaml'}: datasets.0: dataset corpora/mtb-en-xx-dev.json "
                    f"does not load from {checkout.resolve()}: file not found (fix: give the corpus path relative "
                    f"to the repository root (--root; default: the checkout holding the sweep file), or add the "
                    f"corpus there)")
    (sweeps / "langs.yaml").write_text("name: langs\ndatasets: [corpora/mtb-en-es-dev.json]\n"
                                       "methods: [{method: 'echo:'}, {method: 'apertium:cat-spa'}]\n", encoding="utf-8")
    proc = cli_support.invoke(["sweep", "plan", "sweeps/langs.yaml"], cwd=checkout)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {Path('sweeps') / 'langs.yaml'}: methods.1.method: Apertium mode "
                                  "'cat-spa' translates cat→spa") and "(fix: use a mode for eng→spa" in proc.stderr
    from mtboard.backends.apertium import installed_modes

    if shutil.which("apertium") is None or "eng-fra" in installed_modes():
        return
    shutil.copy(ROOT / "corpora" / "mtb-en-fr-dev.json", checkout / "corpora")
    (sweeps / "nomode.yaml").write_text("name: nomode\ndatasets: [corpora/mtb-en-fr-dev.json]\nlimit: 2\n"
                                        "methods: [{method: 'echo:'}, {method: 'apertium:eng-fra'}]\n",
                                        encoding="utf-8")
    proc = cli_support.invoke(["sweep", "run", "sweeps/nomode.yaml"], cwd=checkout,
                              env={"MTBOARD_PROGRESS_INTERVAL": "1000"})
    assert proc.returncode == 1 and "1 of 2 cell(s) failed" in proc.stderr
    summary = json.loads((checkout / "runs" / "sweeps" / "nomode" / "summary.json").read_text(encoding="utf-8"))
    error = summary["rows"][1]["error"]
    assert error.startswith(f"{Path('sweeps') / 'nomode.yaml'}: methods.1.method: Apertium mode 'eng-fra' is not "
                            "installed; installed modes: ") and "(fix: pick one of the installed modes" in error
