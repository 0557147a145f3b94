"""`mtboard run` options added after the first runner: --backend-opt, several --judge specs with --allow-self-judge
and --bench (checked before anything is translated), and the CLI's one-line errors for every exception.

Translator and judge are scripted local servers (tests/judges_support.py: fault-injection doubles that answer what a
test scripts); the corpus is the committed EN→ES development set. Expected messages and values are written by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from judges_support import REPO, ScriptedServer, card_requests
from mtboard.backends.base import get_backend
from mtboard.cli.main import app
from mtboard.core.errors import ConfigError
from mtboard.run.runner import judge_specs, prepare
from mtboard.run.settings import RunSettings, parse_backend_opts

ES = REPO / "corpora" / "mtb-en-es-dev.json"
MQM_MINOR = 'Critical:\nno-error\nMajor:\nno-error\nMinor:\nstyle/awkward - "casa"\ncontextBehavior: unclear'
RUBRIC = "adequacy: 4\npragmatics: 3\nfluency: 2\nflags: none\njustification: Faithful and natural."
from mtboard.backends.gguf import GGUFBackend, GGUFOptions  # noqa: E402

GGUF_KEYS = ", ".join(sorted(GGUFOptions.model_fields))
"""The gguf backend's settings (its Options model is the documented list; the gguf engineer may add more)."""
# the settings the issue names must be among them (written by hand)
assert {"n_ctx", "n_threads", "n_gpu_layers", "server", "latency_gate", "latency_median_s", "latency_p90_s",
        "hf_cache_dir", "headroom_gb"} <= set(GGUFOptions.model_fields)


@pytest.fixture()
def cli(monkeypatch):
    """In-process `mtboard` with no OPENAI_/JUDGE_ variables inherited."""
    for k in list(os.environ):
        if k.startswith(("OPENAI_", "JUDGE_")):
            monkeypatch.delenv(k)
    runner = CliRunner()

    def invoke(args: list[str], env: dict[str, str] | None = None):
        return runner.invoke(app, [str(a) for a in args], env=env)

    return invoke


def one_error_line(res) -> str:
    """The command failed with exit 1 and exactly one line on stderr, no traceback."""
    assert res.exit_code == 1, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines()
             if ln.strip() and not ln.startswith(("work dir", "note ", "resuming "))]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr and 'File "' not in res.stderr
    return lines[0]


# --------------------------------------------------------------------------------------------------------------------
# --backend-opt


def test_parse_backend_opts_and_judge_specs():
    assert parse_backend_opts(["n_ctx=4096", "hf_cache_dir=/tmp/a=b", " server = llama-cpp-python "]) == {
        "n_ctx": "4096", "hf_cache_dir": "/tmp/a=b", "server": "llama-cpp-python"}
    for bad, msg in ((["n_ctx"], "is not KEY=VALUE"), (["=3"], "is not KEY=VALUE"),
                     (["n_ctx=1", "n_ctx=2"], "n_ctx given twice")):
        with pytest.raises(ConfigError, match=msg):
            parse_backend_opts(bad)
    assert judge_specs(None) == [] and judge_specs("none") == [] and judge_specs(["none"]) == []
    assert judge_specs(["gemba-mqm=openai:a, rubric=openai:b", "checkpoints=openai:c"]) == [
        "gemba-mqm=openai:a", "rubric=openai:b", "checkpoints=openai:c"]
    assert judge_specs("gemba-mqm=openai:a,") == ["gemba-mqm=openai:a"]
    with pytest.raises(ConfigError, match="cannot be combined"):
        judge_specs(["none", "gemba-mqm=openai:a"])


def test_backend_opts_reach_the_gguf_backend_typed(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")  # never loaded: the backend is only constructed, not started
    opts = parse_backend_opts(["n_ctx=4096", "n_threads=2", "latency_gate=enforce", "latency_median_s=1.5",
                               "hf_cache_dir=/tmp/hf", "server=llama-cpp-python", "n_gpu_layers=0"])
    plan = prepare(RunSettings(corpus_path=ES, method=f"gguf:{model}", backend_extra=opts, work_dir=tmp_path / "w"))
    given = {"n_ctx": 4096, "n_threads": 2, "latency_gate": "enforce", "latency_median_s": 1.5,
             "hf_cache_dir": "/tmp/hf", "server": "llama-cpp-python", "n_gpu_layers": 0}
    assert plan.spec.options == given and isinstance(plan.options, GGUFOptions)
    assert plan.identity["backend_options"] == given
    b = GGUFBackend(plan.spec.method, plan.backend_context(), plan.options)
    s = b.settings
    assert (s.n_ctx, s.n_threads, s.latency_gate, s.latency_median_s, s.hf_cache_dir, s.server, s.n_gpu_layers) == (
        4096, 2, "enforce", 1.5, "/tmp/hf", "llama-cpp-python", 0)
    assert s.latency_p90_s == 3.0  # not given: the default
    # without --backend-opt the identity has no backend_options key (older work directories still resume)
    assert "backend_options" not in prepare(RunSettings(corpus_path=ES, method=f"gguf:{model}")).identity


def test_unknown_or_bad_backend_opt_fails_in_one_line(cli, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    line = one_error_line(cli(["run", ES, "--method", f"gguf:{model}", "--backend-opt", "n_ctxx=4096",
                               "--work-dir", tmp_path / "w"]))
    assert f"unknown --backend-opt 'n_ctxx' for backend gguf; valid keys: {GGUF_KEYS}" in line
    line = one_error_line(cli(["run", ES, "--method", f"gguf:{model}", "--backend-opt", "latency_gate=sometimes"]))
    assert "bad value for --backend-opt latency_gate" in line
    line = one_error_line(cli(["run", ES, "--method", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                               "--backend-opt", "n_ctx=4096"]))
    assert ("unknown --backend-opt 'n_ctx' for backend openai; valid keys: backoff_base_s, backoff_max_s, "
            "deadline_s, rate_limit_deadline_s, retry_after_max_s") in line
    line = one_error_line(cli(["run", ES, "--method", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                               "--backend-opt", "deadline_s=soon"]))
    assert "bad value for --backend-opt deadline_s" in line
    line = one_error_line(cli(["run", ES, "--method", "apertium:eng-spa", "--backend-opt", "x=1"]))
    assert "unknown --backend-opt 'x' for backend apertium; valid keys: apy_concurrency, timeout_s" in line
    line = one_error_line(cli(["run", ES, "--method", "echo:", "--backend-opt", "x=1"]))
    assert "unknown --backend-opt 'x' for backend echo; it takes none" in line
    line = one_error_line(cli(["run", ES, "--method", "echo:", "--backend-opt", "n_ctx"]))
    assert "--backend-opt 'n_ctx' is not KEY=VALUE" in line
    assert not (tmp_path / "w").exists()  # refused before the work directory was made


def test_backends_command_lists_every_key_with_its_help(cli):
    res = cli(["backends"], env={"COLUMNS": "250"})  # wide enough that no meaning is wrapped
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    for key in GGUF_KEYS.split(", ") + ["backoff_base_s", "deadline_s", "apy_concurrency", "timeout_s"]:
        assert any(ln.strip().startswith(key + " ") for ln in lines), key
    n_ctx = next(ln for ln in lines if ln.strip().startswith("n_ctx "))
    assert n_ctx.split()[:3] == ["n_ctx", "int", "2048"] and "Context size (tokens)" in n_ctx
    canary = next(ln for ln in lines if ln.strip().startswith("canary "))
    assert canary.split()[1:3] == ["enforce|record", "'enforce'"]
    assert any(ln.startswith("echo") and "raw source (no prompt)" in ln for ln in lines)
    assert any("no --backend-opt settings" in ln for ln in lines)
    with pytest.raises(ConfigError, match="valid keys"):
        get_backend("gguf").parse_options({"nope": 1})


def test_openai_backend_opt_used_and_part_of_the_resume_identity(cli, tmp_path):
    wd = tmp_path / "w"
    with ScriptedServer(lambda b: "La casa.") as tr:
        args = ["run", ES, "--method", "openai:m", "--base-url", tr.url, "--limit", 2, "--work-dir", wd]
        res = cli(args + ["--backend-opt", "deadline_s=30", "--backend-opt", "backoff_base_s=0.01"])
        assert res.exit_code == 0, res.output
        assert json.loads((wd / "run.json").read_text())["identity"]["backend_options"] == {
            "backoff_base_s": 0.01, "deadline_s": 30.0}
        line = one_error_line(cli(args + ["--backend-opt", "deadline_s=60", "--backend-opt", "backoff_base_s=0.01"]))
        assert "different backend_options" in line
        assert len(tr.requests) == 2


# --------------------------------------------------------------------------------------------------------------------
# --judge (several), --allow-self-judge, --bench: preflight before translating


@pytest.mark.parametrize("judge_args,env_judge,expected", [
    (["--judge", "gemba-mqm=openai:gpt-4.1"], True,
     "judge model 'gpt-4.1' is from the same family (openai) as the translator"),
    (["--judge", "gemba=openai:judge-x"], True, "unknown judge kind 'gemba'; did you mean 'gemba-mqm'?"),
    (["--judge", "gemba-mqm=openai:judge-x,gemba-mqm=openai:judge-y"], True, "judge kinds given twice"),
    (["--judge", "checkpoints=openai:judge-x"], True, "the checkpoints judge needs a benchmark folder"),
    (["--judge", "checkpoints=openai:judge-x", "--bench", REPO / "tests" / "fixtures" / "checkpoints-example"], True,
     "is not the benchmark's corpus"),
], ids=["self-judge", "bad-kind", "twice", "no-bench", "other-bench"])
def test_judge_refused_before_anything_is_sent(cli, tmp_path, judge_args, env_judge, expected):
    wd = tmp_path / "w"
    with ScriptedServer(lambda b: "La casa.") as tr, ScriptedServer(lambda b: MQM_MINOR) as jd:
        env = {"JUDGE_BASE_URL": jd.url} if env_judge else {}
        res = cli(["run", ES, "--method", "openai:gpt-4o-mini", "--base-url", tr.url, "--limit", 2,
                   "--work-dir", wd] + judge_args, env=env)
        line = one_error_line(res)
        assert expected in line
        assert tr.requests == [] and jd.requests == []
    assert not (wd / "translations.jsonl").exists()


def test_several_judges_and_allowed_self_judge(cli, tmp_path):
    """Two judges (repeated --judge), one of them from the translator's family but allowed: both run on every entry,
    the card records the override, and the judged card passes the validator."""
    from mtboard.core.documents import load_card
    from mtboard.validate import make_context, validate_card

    wd = tmp_path / "w"

    def judge_answer(body):
        return MQM_MINOR if body["model"] == "gpt-4.1" else RUBRIC

    with ScriptedServer(lambda b: "La casa es roja.") as tr, ScriptedServer(judge_answer) as jd:
        res = cli(["run", ES, "--method", "openai:gpt-4o-mini", "--base-url", tr.url, "--limit", 3, "--work-dir", wd,
                   "--judge", "gemba-mqm=openai:gpt-4.1", "--judge", "rubric=openai:judge-b", "--allow-self-judge",
                   "--price-in", 0, "--price-out", 0], env={"JUDGE_BASE_URL": jd.url})
        assert res.exit_code == 0, res.output
        assert len(tr.requests) == 3 and len(card_requests(jd)) == 6  # + 10 admission items per judge (issue 39)
        assert len(jd.requests) == 6 + 2 * 10
    card = load_card(wd / "card.json")
    mqm, rub = card.judges["gemba-mqm"], card.judges["rubric"]
    # gpt-4.1 shares the translator's family; judge-b's family is unknown (neither its name nor its server tells it)
    assert mqm.family_check == "overridden (--allow-self-judge)"
    assert rub.family_check == "overridden (--allow-self-judge; family unknown)"
    assert (mqm.n_scored, mqm.mean) == (3, 1.0)  # one minor error each: penalty 1
    assert (rub.n_scored, rub.mean) == (3, 9.0)  # 4 + 3 + 2
    assert "judges      judge endpoint from JUDGE_BASE_URL" in res.stdout
    assert ("gemba-mqm   1.00 (lower is better)  judge openai:gpt-4.1  scored 3, judge_failed 0, not sent 0; parse "
            "failures 0.0% of 3 answers (0 cached)") in res.stdout
    assert "rubric      9.00 (higher is better)  judge openai:judge-b  scored 3" in res.stdout
    report = validate_card(wd / "card.json", make_context(REPO, REPO / "corpora"))
    assert report.ok, [str(p) for p in report.problems]


# --------------------------------------------------------------------------------------------------------------------
# One line for every error (mtboard.cli.app.guarded)


def test_errors_that_used_to_leak_tracebacks_are_one_line(cli, tmp_path):
    # 1. --work-dir naming a file: was FileExistsError with a traceback; now a ConfigError
    afile = tmp_path / "file"
    afile.write_text("x")
    line = one_error_line(cli(["run", ES, "--method", "echo:", "--limit", 2, "--work-dir", afile]))
    assert "the work directory path is a file, not a directory" in line
    # 2. a tampered backend.json: was a pydantic ValidationError printed with the input values
    wd = tmp_path / "w"
    args = ["run", ES, "--method", "echo:", "--limit", 2, "--work-dir", wd]
    assert cli(args).exit_code == 0
    desc = json.loads((wd / "backend.json").read_text())
    (wd / "backend.json").write_text(json.dumps({**desc, "local": {"bogus": "sk-secret-looking-value"}}))
    line = one_error_line(cli(args))
    assert line.startswith(f"error: {wd / 'backend.json'}: $.local.canary_passed: Field required (+1 more problems)")
    assert "delete the file and re-run" in line and "sk-secret-looking-value" not in line


@pytest.mark.slow  # 3.0 CPU-s, 5 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_unexpected_exception_is_an_internal_error_line_in_a_real_process(tmp_path):
    """A work directory whose run.json lost its run_id (hand-edited) hits a KeyError deep in the runner: the real
    process prints one line naming the exception and asking for a report, and exits 1 — no traceback, no locals."""
    wd = tmp_path / "w"
    cmd = [sys.executable, "-c", "from mtboard.cli.main import app; app()", "run", str(ES), "--method", "echo:",
           "--limit", "2", "--work-dir", str(wd)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assert subprocess.run(cmd, capture_output=True, env=env, cwd=tmp_path).returncode == 0
    manifest = json.loads((wd / "run.json").read_text())
    del manifest["run_id"]
    (wd / "run.json").write_text(json.dumps(manifest))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 1
    lines = [ln for ln in res.stderr.splitlines()
             if ln.strip() and not ln.startswith(("work dir", "note ", "resuming "))]
    assert lines == ["error: internal error: KeyError: 'run_id' (this is a bug in mtboard; please report it with the "
                     "command you ran (no traceback is shown: it could hold API keys))"], res.stderr
