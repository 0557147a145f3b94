"""The COMET path, offline, on real tiny COMET models (docs/neural_metrics.md): mtboard's own code — the worker in the
COMET environment, huggingface_hub's ``snapshot_download(repo_id, revision=…)`` with ``HF_HUB_OFFLINE=1``,
``comet.load_from_checkpoint``, ``model.predict`` — on models with random weights (fixed seeds) that
tests/comet_tiny.py builds in the exact layout COMET expects, stored in a temporary Hugging Face cache under the real
repository names at made-up revisions. Only the model's weights and revision differ from a real run.

Real values asserted: the per-segment scores equal what ``comet`` itself gives on the same checkpoint (called
directly, in another process); scores are batch-size independent within 1e-5 (COMET sorts and pads by length, so a
batch's padding changes the float arithmetic slightly; measured differences ≤ 1e-6); the card signature carries the
commit, encoder, batch size, device and package versions; an unknown revision is refused offline; the CLI writes a
card the validator passes.

Needs the COMET environment (``scripts/setup.sh --comet`` or ``--dev``; ``MTBOARD_COMET_PYTHON``): skipped with
that hint without it. Slow: each worker process imports torch and Lightning (~10 s of CPU).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtboard import validate as V
from mtboard.core.documents import load_card
from mtboard.core.errors import BackendError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.score.metrics import neural

import validate_support as vs

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

SAMPLES = [  # hand-made test sentences (never a corpus)
    ("The cat sits on the mat.", "El gato se sienta en la alfombra.", "El gato está sentado en la alfombra."),
    ("Good morning, how are you today?", "Buenos días, ¿cómo estás hoy?", "Buenos días, ¿cómo estás hoy?"),
    ("The train leaves at seven in the evening.", "El tren sale a las siete.", "El tren sale a las siete de la tarde."),
    ("Please close the door when you leave.", "Por favor cierra la puerta.", "Por favor, cierra la puerta al salir."),
    ("Translation quality is measured by people.", "La calidad", "La calidad de la traducción la miden personas."),
]


def _comet_python() -> str:
    p = os.environ.get("MTBOARD_COMET_PYTHON") or str(ROOT / neural.DEFAULT_PYTHON)
    if not Path(p).exists():
        pytest.skip(f"no COMET environment at {p}: scripts/setup.sh --comet (or set MTBOARD_COMET_PYTHON)")
    return p


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(comet python, cache root, {repo_id: revision}) with HF_HUB_OFFLINE=1 and HF_HUB_CACHE set for the module."""
    python = _comet_python()
    root = tmp_path_factory.mktemp("tiny-comet")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(root / "hub")}
    out = subprocess.run([python, str(ROOT / "tests" / "comet_tiny.py"), "build", str(root)], env=env,
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    revs = json.loads(out.stdout.strip().splitlines()[-1])
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("HF_HUB_CACHE", str(root / "hub"))
    mp.setenv("MTBOARD_COMET_PYTHON", python)  # for the mtboard processes the tests start
    with use_runtime(Runtime(comet_python=Path(python))):  # for the library calls in this process
        yield python, root, revs
    mp.undo()


def _direct(python: str, root: Path, specs: list[dict]) -> list[list[float]]:
    spec_file = root / "direct.json"
    spec_file.write_text(json.dumps(specs), encoding="utf-8")
    out = subprocess.run([python, str(ROOT / "tests" / "comet_tiny.py"), "direct", str(spec_file)],
                         capture_output=True, text=True, timeout=900, check=False, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ckpt(root: Path, repo_id: str, rev: str) -> str:
    return str(root / "hub" / ("models--" + repo_id.replace("/", "--")) / "snapshots" / rev / "checkpoints" /
               "model.ckpt")


def test_comet_scores_through_the_pinned_hub_path_equal_comet_called_directly(tiny):
    python, root, revs = tiny
    da, kiwi = "Unbabel/wmt22-comet-da", "Unbabel/wmt22-cometkiwi-da"
    src, mt, ref = (list(x) for x in zip(*SAMPLES))
    hyps: list[str | None] = [*mt[:4], None]  # the last entry has no usable output: not sent, scores 0
    run2 = neural.score_segments("comet22", src, hyps, ref, revision=revs[da], batch_size=2)
    run5 = neural.score_segments("comet22", src, hyps, ref, revision=revs[da], batch_size=5)
    kiwi2 = neural.score_segments("cometkiwi", src, hyps, None, revision=revs[kiwi], batch_size=2)
    sent = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src[:4], mt[:4], ref[:4])]
    d2, d5, dk = _direct(python, root, [
        {"checkpoint": _ckpt(root, da, revs[da]), "samples": sent, "batch_size": 2},
        {"checkpoint": _ckpt(root, da, revs[da]), "samples": sent, "batch_size": 5},
        {"checkpoint": _ckpt(root, kiwi, revs[kiwi]),
         "samples": [{"src": s["src"], "mt": s["mt"]} for s in sent], "batch_size": 2}])
    # the same model, data and batch size: exactly comet's own values
    assert run2.raw_scores[:4] == d2 and run5.raw_scores[:4] == d5 and kiwi2.raw_scores[:4] == dk
    assert run2.raw_scores[4] is None and run2.scores[4] == neural.NO_OUTPUT_SCORE
    # random weights still tell the segments apart (a constant output would make the comparison above vacuous)
    assert len({round(v, 6) for v in d2}) == 4 and d2 != dk
    # batch-size independence: within 1e-5 (padding changes the float arithmetic a little)
    assert max(abs(a - b) for a, b in zip(run2.raw_scores[:4], run5.raw_scores[:4])) <= 1e-5
    assert run2.scores == [round(v, 4) for v in d2] + [0.0]
    assert run2.score == neural.aggregate(run2.scores)
    # the signature: the commit the revision resolved to, the encoder, batch size, device and package versions
    assert run2.commit == revs[da] and run2.encoder == str(root / "encoder")
    # the worker ran inside the sandbox (issue 34 item 5), offline, on the cache prepared by mtboard's process
    from mtboard.core import sandbox

    assert run2.sandbox == (sandbox.status().record() if sandbox.status().available else None)
    assert run2.versions["unbabel-comet"] == "2.2.7" and run2.versions["torch"].startswith("2.13.0")
    v = run2.versions
    assert run2.signature == (
        f"comet22|model:{da}|rev:{revs[da]}|encoder:{root / 'encoder'}|bs:2|device:cpu|comet:2.2.7"
        f"|torch:{v['torch']}|transformers:{v['transformers']}|hub:{v['huggingface-hub']}|dp:4")


def test_an_unknown_revision_is_refused_offline(tiny):
    with pytest.raises(BackendError, match="the COMET worker failed"):
        neural.score_segments("comet22", ["a"], ["b"], ["c"], revision="0" * 40, batch_size=1)


def test_cli_scores_a_work_dir_card_that_then_validates(tiny, tmp_path):
    python, root, revs = tiny
    card = vs.real_card_bytes(12)  # with the FST analyser, as the verification re-run scores
    work = tmp_path / "work"
    work.mkdir()
    (work / "card.json").write_bytes(card)
    proc = subprocess.run([sys.executable, "-m", "mtboard", "neural", str(work), "--metric", "comet22",
                           "--revision", f"comet22={revs['Unbabel/wmt22-comet-da']}", "--batch-size", "4"],
                          capture_output=True, text=True, timeout=900, check=False, cwd=ROOT, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-3000:]
    scored = load_card(work / "card.json")
    rec = scored.neural_metrics["comet22"]
    assert rec.n == 12 and rec.batch_size == 4 and rec.commit == revs["Unbabel/wmt22-comet-da"]
    assert f"comet22     {rec.score:.4f} over 12 entries (claimed" in proc.stdout
    values = [r.plugin_metrics["comet22"] for r in scored.results]
    assert rec.score == neural.aggregate(values)
    repo_root = vs.make_repo(tmp_path / "repo")
    dest = vs.place(repo_root, (work / "card.json").read_bytes())
    rep = V.validate_card(dest, V.make_context(repo_root, ROOT / "corpora"))
    assert rep.problems == [] and rep.checks["neural"] == "pass"
    # mtboard verify re-runs the method (Apertium: deterministic) and re-scores COMET-22 at the card's commit and
    # batch size: the claimed aggregate is confirmed exactly, and the kept re-run card carries the metric
    from mtboard.verify.rerun import verify_card

    res = verify_card(dest, root=repo_root, corpora_dir=ROOT / "corpora", out_dir=tmp_path / "out",
                      workdir=tmp_path / "verify-work")
    (delta,) = [d for d in res.record.deltas if d.metric == "neural_metrics.comet22"]
    assert (delta.stored, delta.rerun, delta.delta, delta.within) == (rec.score, rec.score, 0.0, True)
    assert res.record.passed, res.record.reason
    kept = load_card(res.rerun_card_path)
    assert kept.run_card_hash == res.record.rerun_run_card_hash
    assert [r.plugin_metrics["comet22"] for r in kept.results] == values


def test_run_with_neural_metric_scores_the_finished_card_and_its_report(tiny, tmp_path):
    python, root, revs = tiny
    work = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mtboard", "run", str(ROOT / "corpora" / "mtb-en-es-dev.json"),
                           "--method", "apertium:eng-spa", "--limit", "3", "--work-dir", str(work),
                           "--neural-metric", "comet22", "--neural-batch-size", "2",
                           "--neural-revision", f"comet22={revs['Unbabel/wmt22-comet-da']}"],
                          capture_output=True, text=True, timeout=900, check=False, cwd=tmp_path,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-3000:]
    card = load_card(work / "card.json")
    rec = card.neural_metrics["comet22"]
    assert (rec.n, rec.batch_size, rec.commit) == (3, 2, revs["Unbabel/wmt22-comet-da"])
    assert all(isinstance(r.plugin_metrics["comet22"], float) for r in card.results)
    # report.md's card line follows the re-sealed card
    assert card.run_card_hash in (work / "report.md").read_text(encoding="utf-8")
