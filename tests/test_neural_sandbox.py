"""Issue 34 item 5: a job that holds secrets loads only allow-listed neural-metric revisions, and the COMET worker runs
with an empty environment inside the sandbox model servers run in (docs/SECURITY.md, "A contributor-chosen COMET
checkpoint").

Fixtures are hand-made and tiny: a Hugging Face cache laid out by hand (``models--OWNER--NAME/{blobs, snapshots/<rev>,
refs/main}``) whose ``hparams.yaml`` names a local encoder folder and whose ``checkpoints/model.ckpt`` is a few bytes,
and a fake "COMET Python" — a script run by mtboard's own interpreter — that answers the worker protocol with fixed
scores and reports what it saw: its environment, the ``/proc/*/environ`` it can read, which host paths exist, whether
it can write the checkpoint or reach the network. No torch, no model: the real COMET path is
tests/test_neural_comet.py (slow).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
from pathlib import Path

import pytest

import cli_support
import validate_support as vs
from mtboard.core import sandbox
from mtboard.core.documents import card_bytes, loads_card
from mtboard.core.errors import ConfigError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.score.metrics import neural
from mtboard.score.neural_card import apply_neural
from mtboard.verify import rerun

ROOT = Path(__file__).resolve().parents[1]
CANARY = "canary-5d1e77b0-do-not-leak"
SECRETS = {"OPENAI_API_KEY": "sk-" + CANARY, "HF_TOKEN": "hf_" + CANARY, "MTBOARD_HYPOTHESIS_SALT": "ab" + CANARY,
           "JUDGE_API_KEY": "jk-" + CANARY, "MTBOARD_TEST_CANARY": CANARY}
SHELL_VARS = {"PWD", "SHLVL", "_"}
"""What the fake Python's ``/bin/sh`` adds to any environment it starts with."""
UNLISTED = "0123456789abcdef0123456789abcdef01234567"
"""A made-up 40-hex revision of Unbabel/wmt22-comet-da, in no allow-list."""
DA = "Unbabel/wmt22-comet-da"

needs_bwrap = pytest.mark.skipif(not sandbox.status().available,
                                 reason="bubblewrap cannot create a sandbox here (mtboard doctor says why)")

FAKE_WORKER = r'''
import json, os, socket, sys
worker, req_path, res_path = sys.argv[1:4]
req = json.load(open(req_path, encoding="utf-8"))
snap = os.path.join(req["cache_dir"], "models--" + req["repo_id"].replace("/", "--"), "snapshots", req["revision"])
seen = {"environ": dict(os.environ), "proc_environ_hits": [], "paths": {}, "argv": sys.argv[1:]}
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    try:
        if b"canary-5d1e77b0" in open(f"/proc/{pid}/environ", "rb").read():
            seen["proc_environ_hits"].append(pid)
    except OSError:
        pass
for p in req.get("probe_paths", []):
    seen["paths"][p] = os.path.exists(p)
seen["ckpt"] = open(os.path.join(snap, "checkpoints", "model.ckpt"), "rb").read().decode()
try:
    open(os.path.join(snap, "checkpoints", "model.ckpt"), "ab").close()
    seen["ckpt_write"] = "written"
except OSError as exc:
    seen["ckpt_write"] = type(exc).__name__
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", int(req.get("probe_port", 9))))
    seen["connect"] = "connected"
except OSError as exc:
    seen["connect"] = f"{type(exc).__name__} errno={exc.errno}"
json.dump({"scores": [0.25 + 0.125 * i for i in range(len(req["samples"]))], "system_score": 0.5,
           "commit": os.path.basename(os.path.realpath(snap)), "pretrained_model": "tiny-encoder",
           "versions": {"unbabel-comet": "fake"}, "seen": seen}, open(res_path, "w", encoding="utf-8"))
'''


def fake_comet_python(folder: Path) -> Path:
    """``folder/bin/python``: a script run by this interpreter (bound into the sandbox with mtboard's own runtime)
    that answers the worker protocol (scores 0.25, 0.375, …) and reports what it saw (module docstring)."""
    (folder / "bin").mkdir(parents=True)
    (folder / "fake_worker.py").write_text(FAKE_WORKER, encoding="utf-8")
    exe = folder / "bin" / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {folder / 'fake_worker.py'} \"$@\"\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def tiny_cache(hub: Path, encoder: Path, repo_id: str = DA, revision: str = UNLISTED) -> Path:
    """A hand-made Hugging Face cache holding ``repo_id@revision``: ``hparams.yaml`` naming the local ``encoder``
    folder (with a ``config.json``) and an 11-byte ``checkpoints/model.ckpt``; returns the snapshot folder."""
    encoder.mkdir(parents=True, exist_ok=True)
    (encoder / "config.json").write_text('{"model_type": "xlm-roberta"}', encoding="utf-8")
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    files = {"hparams.yaml": f"pretrained_model: {encoder}\nclass_identifier: regression_metric\n",
             "checkpoints/model.ckpt": "fake-pickle"}
    for rel, text in files.items():
        blob = repo / "blobs" / hashlib.sha256(text.encode()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_text(text, encoding="utf-8")
        link = repo / "snapshots" / revision / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    return repo / "snapshots" / revision


@pytest.fixture
def secrets_env(monkeypatch, tmp_path):
    """Every secret of :data:`SECRETS` set in this process, an offline cache under ``tmp_path/hub``."""
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def _capture(monkeypatch) -> list[dict]:
    """Wrap :func:`neural.run_worker` so the test sees the worker's whole result (its ``seen`` report)."""
    seen: list[dict] = []
    real = neural.run_worker

    def spy(*a, **k):
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(neural, "run_worker", spy)
    return seen


def test_the_allow_list_is_the_reviewed_constant_and_holds_every_default():
    assert neural.ALLOWED_REVISIONS == {
        "Unbabel/wmt22-comet-da": {"2760a223ac957f30acfb18c8aa649b01cf1d75f2"},
        "Unbabel/wmt22-cometkiwi-da": {"b3a8aea5a5fc22db68a554b92b3d96eb6ea75cc9"},
        "Unbabel/XCOMET-XL": {"6a123c5e8e6dccab25e5fcffa3c8b417abadb462"}}
    assert all(neural.is_allowed(m.repo_id, m.revision) for m in neural.MODELS.values())
    assert not neural.is_allowed(DA, "main") and not neural.is_allowed(DA, UNLISTED)
    assert not neural.is_allowed("Unbabel/wmt22-cometkiwi-da", neural.MODELS["comet22"].revision)  # per repository
    from mtboard.validate.neural import PINNED_REVISIONS

    assert PINNED_REVISIONS == {k: neural.ALLOWED_REVISIONS[m.repo_id] for k, m in neural.MODELS.items()}


@needs_bwrap
def test_the_comet_worker_runs_sandboxed_with_no_secret_in_its_environment(secrets_env, monkeypatch):
    """The canary test (as tests/test_sandbox.py's for model servers): secrets set in mtboard's environment reach
    neither the worker's environment nor any ``/proc/*/environ`` it can see; it sees the checkpoint read-only, not
    the repository or the rest of the cache, and has no network."""
    tmp = secrets_env
    tiny_cache(tmp / "hub", tmp / "encoder")
    (tmp / "hub" / "models--someone--other").mkdir()  # another model in the cache: not shown to the worker
    python = fake_comet_python(tmp / "comet-env")
    with socket.socket() as srv:  # a host loopback listener the worker must not reach
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        port = srv.getsockname()[1]
        hidden = [str(ROOT / "pyproject.toml"), str(tmp / "hub" / "models--someone--other"), str(Path.home() / ".ssh"),
                  str(tmp / "comet-env" / ".." / "encoder" / ".." / "hub" / "models--someone--other")]
        seen: list[dict] = []
        real = neural.run_worker

        def with_probes(python_, request, timeout_s, **k):  # the probe's questions travel in the request
            seen.append(real(python_, {**request, "probe_paths": hidden, "probe_port": port}, timeout_s, **k))
            return seen[-1]

        monkeypatch.setattr(neural, "run_worker", with_probes)
        with use_runtime(Runtime(secrets_job=False)):
            run = neural.score_segments("comet22", ["a", "b", "c"], ["x", None, "z"], ["r", "s", "t"],
                                        revision=UNLISTED, python=python, timeout_s=60)
    assert run.scores == [0.25, 0.0, 0.375] and run.raw_scores == [0.25, None, 0.375]
    assert run.commit == UNLISTED and run.encoder == "tiny-encoder" and run.sandbox.startswith("bubblewrap ")
    (result,) = seen
    got = result["seen"]
    env = got["environ"]
    assert CANARY not in json.dumps(env) and not set(SECRETS) & set(env)
    assert got["proc_environ_hits"] == []  # bwrap's own pid-1 helper was started with BWRAP_ENV only
    assert env["HF_HUB_OFFLINE"] == "1" and env["HF_HUB_CACHE"] == neural.HUB_INSIDE
    assert set(env) - SHELL_VARS == {"PATH", "HOME", "LANG", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_HOME",
                                      "TOKENIZERS_PARALLELISM"}
    assert got["argv"][0] == neural.WORKER_INSIDE
    assert got["ckpt"] == "fake-pickle" and got["ckpt_write"] in ("OSError", "PermissionError")  # EROFS
    assert got["paths"] == {p: False for p in hidden}
    assert got["connect"] == "ConnectionRefusedError errno=111"  # its own lo, not the host's listener


def test_without_the_sandbox_the_worker_still_gets_an_empty_environment(secrets_env, monkeypatch):
    """``MTBOARD_COMET_SANDBOX=off`` (development only): no sandbox, but the same empty environment."""
    tmp = secrets_env
    tiny_cache(tmp / "hub", tmp / "encoder")
    python = fake_comet_python(tmp / "comet-env")
    seen = _capture(monkeypatch)
    with use_runtime(Runtime(comet_sandbox=False)):
        run = neural.score_segments("comet22", ["a"], ["x"], ["r"], revision=UNLISTED, python=python, timeout_s=60)
    assert run.sandbox == neural.UNSANDBOXED and run.scores == [0.25]
    env = seen[0]["seen"]["environ"]
    assert CANARY not in json.dumps(env) and not set(SECRETS) & set(env)
    assert set(env) - SHELL_VARS == {"PATH", "HOME", "LANG", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_HOME",
                                      "TOKENIZERS_PARALLELISM"}
    assert env["HF_HUB_CACHE"] == str(tmp / "hub") and env["HF_HUB_OFFLINE"] == "1"
    # in a job that holds secrets the sandbox cannot be turned off: refused before the worker starts
    with use_runtime(Runtime(comet_sandbox=False, secrets_job=True)), \
            pytest.raises(ConfigError, match="MTBOARD_COMET_SANDBOX=off"):
        neural.score_segments("comet22", ["a"], ["x"], ["r"], python=python)
    # nor where a secret is merely set (mtboard verify's fail-closed rule): the names, never the values, in the line
    with use_runtime(Runtime(comet_sandbox=False, visible_secrets=("GITHUB_TOKEN", "OPENAI_BASE_URL"))), \
            pytest.raises(ConfigError, match=r"outside it in a job that holds secrets \(GITHUB_TOKEN, "
                                             r"OPENAI_BASE_URL\)"):
        neural.score_segments("comet22", ["a"], ["x"], ["r"], python=python)
    assert len(seen) == 1


def _forbid_start(monkeypatch) -> list[str]:
    """Replace every step after the allow-list check with a recorder: the test shows none of them ran."""
    calls: list[str] = []
    for name in ("comet_python", "sandbox_record", "prepare_model", "run_worker"):
        monkeypatch.setattr(neural, name, lambda *a, _n=name, **k: calls.append(_n) or pytest.fail(f"{_n} ran"))
    return calls


def test_a_secrets_job_refuses_an_unlisted_revision_before_anything_is_fetched_or_started(secrets_env,
                                                                                          monkeypatch):
    calls = _forbid_start(monkeypatch)
    hub = secrets_env / "hub"
    hub.mkdir()
    with use_runtime(Runtime(secrets_job=True)):
        for key, repo in (("comet22", DA), ("cometkiwi", "Unbabel/wmt22-cometkiwi-da"),
                          ("xcomet", "Unbabel/XCOMET-XL")):
            refs = None if key == "cometkiwi" else ["r"]
            with pytest.raises(ConfigError) as err:
                neural.score_segments(key, ["a"], ["x"], refs, revision=UNLISTED)
            msg = str(err.value)
            assert msg.startswith(f"neural metric {key}: revision: revision {UNLISTED} of {repo} is not in the "
                                  "project's allow-list of neural-metric revisions"), msg
            assert "fix: re-score it in a job without secrets" in msg and "\n" not in msg
        # another repository at an allowed commit is refused too (the list is per repository)
        with pytest.raises(ConfigError, match="of someone/comet is not in the project's allow-list"):
            neural.score_segments("comet22", ["a"], ["x"], ["r"], repo_id="someone/comet")
    assert calls == [] and list(hub.iterdir()) == []
    # the pinned default gets past the check (to the first step after it)
    with use_runtime(Runtime(secrets_job=True)), pytest.raises(pytest.fail.Exception, match="comet_python ran"):
        neural.score_segments("comet22", ["a"], ["x"], ["r"])
    assert calls == ["comet_python"]


def _unlisted_card_path(tmp_path: Path) -> Path:
    """The real 12-entry Apertium card of tests/validate_support.py with COMET-22 values at :data:`UNLISTED`, placed
    in a repository under ``tmp_path``."""
    base = loads_card(vs.real_card_bytes(12, fst=False), "card")
    scores = [0.5] * 12
    run = neural.NeuralRun(key="comet22", repo_id=DA, revision=UNLISTED, commit=UNLISTED, encoder="xlm-roberta-large",
                           batch_size=16, device="cpu", versions={"unbabel-comet": "2.2.7"}, scores=scores,
                           raw_scores=list(scores), score=neural.aggregate(scores), system_score=None)
    root = vs.make_repo(tmp_path / "repo", [card_bytes(apply_neural(base, [run]))])
    return next((root / "submissions").rglob("*.json"))


@pytest.mark.parametrize("declared", [
    {"MTBOARD_SECRETS_JOB": "1"}, {"MTBOARD_VERIFY_ENVIRONMENT": "verification"}, {"OPENAI_API_KEY": "sk-x"},
    {"HF_TOKEN": "hf_x"}, {"MTBOARD_HYPOTHESIS_SALT": "ab" * 32}])
def test_verify_in_a_secrets_job_refuses_a_card_claiming_an_unlisted_revision_before_the_rerun(tmp_path, declared):
    card = _unlisted_card_path(tmp_path)
    marker = tmp_path / "worker-started"
    python = tmp_path / "comet" / "bin" / "python"  # a COMET Python that would leave a mark if it ever ran
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
    python.chmod(0o755)
    out, work, hub = tmp_path / "out", tmp_path / "work", tmp_path / "hub"
    proc = cli_support.invoke(
        ["verify", str(card), "--root", str(tmp_path / "repo"), "--corpora", str(ROOT / "corpora"), "--out", str(out),
         "--workdir", str(work)],
        env={"MTBOARD_COMET_PYTHON": str(python), "HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1", **declared},
        unset=("OPENAI_", "JUDGE_", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "MTBOARD_SECRET_SEGMENT",
               "MTBOARD_SECRET_CORPORA_DEPLOY_KEY", "MTBOARD_HYPOTHESIS_SALT", "MTBOARD_VERIFY_ENVIRONMENT",
               "MTBOARD_SECRETS_JOB"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line
    assert line.startswith(f"error: {card}: $.neural_metrics.comet22.commit: revision {UNLISTED} of {DA} (comet22) "
                           "is not in the project's allow-list of neural-metric revisions, and this job holds secrets (")
    assert "fix: verify the card in a job without secrets" in line and "ALLOWED_REVISIONS" in line
    reason = next(iter(declared)) if "MTBOARD_" not in next(iter(declared)) else "MTBOARD_"
    assert reason in line.split("holds secrets (", 1)[1]
    # nothing was started, downloaded or written: no worker, no cache, no work folder, no record
    assert not marker.exists() and not hub.exists() and not work.exists() and not out.exists()


def test_verify_without_secrets_gets_past_the_revision_check(tmp_path):
    card_path = _unlisted_card_path(tmp_path)
    card = rerun.load_sealed_card(card_path)
    with use_runtime(Runtime()):
        assert rerun.secrets_held() == []
        rerun.check_neural_revisions(card, card_path, rerun.secrets_held())  # no secrets: left to the re-run
        assert rerun.secrets_held(tmp_path / "secret.json") == ["--secret-segment-env"]
    with use_runtime(Runtime(visible_secrets=("HF_TOKEN",))), pytest.raises(rerun.NotVerifiable,
                                                                             match=r"holds secrets \(HF_TOKEN\)"):
        rerun.check_neural_revisions(card, card_path, rerun.secrets_held())
    pinned = card.model_copy(update={"neural_metrics": {"comet22": card.neural_metrics["comet22"].model_copy(
        update={"commit": neural.MODELS["comet22"].revision})}})
    with use_runtime(Runtime(secrets_job=True, visible_secrets=("OPENAI_API_KEY",))):
        rerun.check_neural_revisions(pinned, card_path, rerun.secrets_held())  # an allow-listed revision passes
