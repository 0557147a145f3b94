"""Issue 30, one settings path: ``mtboard run``'s options are generated from :class:`RunSettings` — every field has a
description that IS its option's ``--help`` line, every option reaches its field, a value out of range is one
ConfigError line naming the option and the fix (from the library and from the command line), and the model is
frozen. Expected names, messages and values are written by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

import cli_support
from mtboard.core.errors import ConfigError
from mtboard.core.schema import Segment
from mtboard.run.settings import RunSettings, option_name, parse_backend_opts

ES = Path(__file__).resolve().parent.parent / "corpora" / "mtb-en-es-dev.json"

NOT_OPTIONS = {"stream", "max_retries", "timeout_s"}
"""Fields without an option: the run command sets ``stream`` from MTBOARD_STREAM; the other two are the library's."""

FLAGS = {
    "corpus_path": "CORPUS", "method": "--method", "prompt": "--prompt", "coaching": "--coaching", "tools": "--tools",
    "fst_retries": "--fst-retries", "format_attempts": "--format-attempts", "condition": "--condition", "temperature": "--temperature",
    "max_tokens": "--max-tokens", "concurrency": "--concurrency", "runs": "--runs", "judge": "--judge",
    "allow_self_judge": "--allow-self-judge", "bench": "--bench", "judge_max_tokens": "--judge-max-tokens",
    "judge_max_attempts": "--judge-max-attempts", "judge_concurrency": "--judge-concurrency",
    "judge_price_in": "--judge-price-in", "judge_price_out": "--judge-price-out", "judge_family": "--judge-family",
    "translator_family": "--translator-family", "early_gate": "--no-early-gate", "backend_extra": "--backend-opt",
    "segment": "--segment", "arm": "--arm", "history": "--history", "limit": "--limit", "work_dir": "--work-dir", "out": "--out", "base_url": "--base-url",
    "allow_incomplete": "--allow-incomplete", "price_in": "--price-in", "price_out": "--price-out",
    "notes": "--notes", "neural_metric": "--neural-metric", "neural_batch_size": "--neural-batch-size",
    "neural_device": "--neural-device", "neural_revision": "--neural-revision",
}
"""Every option that sets a field, as the command line spelt it before the options were generated."""


def _help() -> str:
    p = cli_support.invoke(["run", "--help"], env={"COLUMNS": "250"})
    assert p.returncode == 0, p.stderr
    return p.stdout


def _flat(text: str) -> str:
    """Help text without the rich boxes and line wrapping."""
    return " ".join(text.replace("│", " ").split())


def test_every_field_is_an_option_or_named_as_not_one():
    assert set(RunSettings.model_fields) == set(FLAGS) | NOT_OPTIONS
    for name, flag in FLAGS.items():
        assert option_name(name) == flag or (name == "early_gate" and option_name(name) == "--early-gate"), name


def test_every_field_has_a_description_that_is_its_help_line():
    text = _help()
    flat = _flat(text)
    for name, field in RunSettings.model_fields.items():
        assert field.description and len(field.description) > 15, name
        if name in NOT_OPTIONS:
            continue
        assert _flat(field.description) in flat, name  # the whole description, as --help prints it
        row = next(line for line in text.splitlines() if re.search(rf"(^|\s){re.escape(FLAGS[name])}\s", line))
        assert _flat(field.description)[:40] in _flat(row), (name, row)  # on the option's own row
    # a range is shown with the option it bounds; the options that are not settings keep their own help
    assert re.search(r"--runs\s.*Replicate runs.*\[>= 1\] \[default: 1\]", text)
    assert re.search(r"--fst-retries\s+N\s.*\(default 2\)\. \[0-5\]", text)
    assert re.search(r"--price-in\s.*\[>= 0\]", text) and re.search(r"--tools\s+TOOL\s", text)
    assert re.search(r"--backend-opt\s+KEY=VALUE\s", text) and "--early-gate " not in text
    assert re.search(r"--neural-batch-size\s+N\s.*COMET batch size \(default 16; recorded\)", text)
    assert re.search(r"--neural-device\s+DEVICE\s", text) and re.search(r"--neural-revision\s+KEY=COMMIT\s", text)
    assert "Usage: mtboard run [OPTIONS] {CORPUS}" in flat


@pytest.mark.parametrize(("field", "value", "message"), [
    ("runs", 0, "--runs: --runs must be at least 1 (fix: give --runs a number of at least 1)"),
    ("max_tokens", 0, "--max-tokens: --max-tokens must be at least 1"),
    ("limit", 0, "--limit: --limit must be at least 1"),
    ("concurrency", -2, "--concurrency: --concurrency must be at least 1"),
    ("judge_max_tokens", 0, "--judge-max-tokens: --judge-max-tokens must be at least 1"),
    ("judge_max_attempts", 0, "--judge-max-attempts: --judge-max-attempts must be at least 1"),
    ("judge_concurrency", 0, "--judge-concurrency: --judge-concurrency must be at least 1"),
    ("price_in", -0.5, "--price-in: --price-in must be at least 0 (fix: give --price-in a number of at least 0)"),
    ("judge_price_out", -1, "--judge-price-out: --judge-price-out must be at least 0"),
    ("fst_retries", 6, "--fst-retries: --fst-retries 6 is outside 0–5 (fix: give a number from 0 to 5)"),
    ("fst_retries", -1, "--fst-retries: --fst-retries -1 is outside 0–5"),
    ("temperature", -0.1, "--temperature: --temperature must be at least 0"),
    ("temperature", float("nan"), "--temperature: --temperature must be a finite number"),
    ("segment", "gold", "--segment: unknown segment 'gold' (fix: use one of development, diagnostic, gold_standard, "
                        "held_out)"),
    ("backend_extra", ["n_ctx"], "--backend-opt: --backend-opt 'n_ctx' is not KEY=VALUE"),
    ("timeout_s", 0, "timeout_s: timeout_s must be above 0"),
    ("max_retries", -1, "max_retries: max_retries must be at least 0"),
    ("runs", "three", "--runs: --runs 'three': Input should be a valid integer"),
    ("colour", "red", "colour: unknown run setting 'colour'"),
    # the --neural-* settings act on the finished card, but are refused before anything is translated
    ("neural_metric", "comet22,bleurt", "--neural-metric: unknown neural metric 'bleurt' (fix: use one of comet22, "
                                        "cometkiwi, xcomet)"),
    ("neural_device", "cuda", "--neural-device: --neural-device has no effect without --neural-metric (fix: add "
                              "--neural-metric METRIC, or drop --neural-device)"),
    ("neural_batch_size", 8, "--neural-batch-size: --neural-batch-size has no effect without --neural-metric"),
    ("neural_batch_size", 0, "--neural-batch-size: --neural-batch-size must be at least 1"),
    ("neural_revision", ["comet22=" + "a" * 40], "--neural-revision: --neural-revision has no effect without "
                                                 "--neural-metric"),
    ("neural_revision", ["comet22"], "--neural-revision: bad revision 'comet22' (fix: use KEY=COMMIT with KEY one "
                                     "of comet22, cometkiwi, xcomet)"),
])
def test_a_bad_value_is_one_config_error_naming_the_option(field, value, message):
    with pytest.raises(ConfigError) as e:
        RunSettings(corpus_path=ES, method="echo:", **{field: value})
    assert e.value.one_line().startswith(message)
    assert "\n" not in e.value.one_line() and e.value.fix


def test_neural_settings_parse_and_check_with_a_metric():
    s = RunSettings(corpus_path=ES, method="echo:", neural_metric=["comet22,xcomet", "comet22"], neural_device="cuda",
                    neural_batch_size=4, neural_revision=["xcomet=" + "b" * 40])
    assert (s.neural_metric, s.neural_device, s.neural_batch_size) == (("comet22", "xcomet"), "cuda", 4)
    assert s.neural_revision == {"xcomet": "b" * 40}
    with pytest.raises(ConfigError) as e:
        RunSettings(corpus_path=ES, method="echo:", neural_metric="comet22", neural_device="tpu")
    assert e.value.one_line() == "--neural-device: unknown device 'tpu' (fix: use cpu or cuda)"
    plain = RunSettings(corpus_path=ES, method="echo:")
    assert (plain.neural_metric, plain.neural_device, plain.neural_batch_size, plain.neural_revision) == (
        (), None, None, {})


def test_values_accepted_before_stay_accepted():
    s = RunSettings(corpus_path=str(ES), method="openai:m", temperature=2.5, fst_retries=5, tools="fst-gate",
                    price_in=0, price_out=0.0, segment=Segment.diagnostic, judge="none", concurrency=1, limit=1)
    assert (s.temperature, s.fst_retries, s.tools, s.price_in, s.segment) == (2.5, 5, "fst-gate", 0, Segment.diagnostic)
    assert s.corpus_path == ES and isinstance(s.corpus_path, Path)
    assert RunSettings(corpus_path=ES, method="m", fst_retries=0, temperature=0).fst_retries == 0
    assert RunSettings(corpus_path=ES, method="m", segment="held_out").segment is Segment.held_out
    assert RunSettings(corpus_path=ES, method="m").segment is Segment.development  # the default is the enum too
    # list-valued fields keep the type their caller gave (a sweep cell, a verification re-run give lists)
    assert RunSettings(corpus_path=ES, method="m", tools=["fst-gate"]).tools == ["fst-gate"]
    assert RunSettings(corpus_path=ES, method="m", backend_extra={"n_ctx": 4096}).backend_extra == {"n_ctx": 4096}
    assert RunSettings(corpus_path=ES, method="m", backend_extra=["n_ctx = 4096"]).backend_extra == {"n_ctx": "4096"}
    assert RunSettings(corpus_path=ES, method="m", backend_extra=None).backend_extra == {}


def test_the_model_is_frozen_and_copies_with_model_copy():
    s = RunSettings(corpus_path=ES, method="echo:", runs=2)
    with pytest.raises(ValidationError, match="frozen"):
        s.runs = 3  # type: ignore[misc]
    t = s.model_copy(update={"runs": 3, "limit": 5})
    assert (s.runs, s.limit, t.runs, t.limit, t.method) == (2, None, 3, 5, "echo:")
    with pytest.raises(TypeError):
        RunSettings(ES, "echo:")  # type: ignore[misc]  # keyword construction only


def test_backend_opts_parse_as_before():
    assert parse_backend_opts(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ConfigError, match="given twice"):
        parse_backend_opts(["a=1", "a=2"])


@pytest.fixture()
def captured(monkeypatch):
    """The RunSettings ``mtboard run`` builds, caught before anything is loaded or sent."""
    from mtboard.run import runner

    seen: list[RunSettings] = []

    def stop(settings: RunSettings):
        seen.append(settings)
        raise ConfigError("stopped by the test")

    monkeypatch.setattr(runner, "prepare", stop)
    return seen


def test_every_option_reaches_its_field(captured, tmp_path):
    args = ["run", ES, "--method", "openai:m", "--prompt", "translate-chat", "--coaching", tmp_path / "c.txt",
            "--tools", "fst-gate", "--fst-retries", "3", "--condition", "cond", "--temperature", "0.3",
            "--max-tokens", "64", "--concurrency", "2", "--runs", "3", "--judge", "gemba-mqm=openai:j",
            "--judge", "rubric=openai:k", "--allow-self-judge", "--bench", tmp_path / "bench",
            "--judge-max-tokens", "99", "--judge-max-attempts", "2", "--judge-concurrency", "5",
            "--judge-price-in", "1.5", "--judge-price-out", "2.5", "--judge-family", "qwen",
            "--translator-family", "gemma", "--no-early-gate", "--backend-opt", "n_ctx=4096", "--backend-opt",
            "server=llama-cpp-python", "--segment", "diagnostic", "--limit", "7", "--work-dir", tmp_path / "w",
            "--out", tmp_path / "card.json", "--base-url", "http://127.0.0.1:9/v1", "--allow-incomplete",
            "--price-in", "0.1", "--price-out", "0.2", "--notes", "a note", "--neural-metric", "comet22",
            "--neural-metric", "cometkiwi", "--neural-batch-size", "4", "--neural-device", "cuda",
            "--neural-revision", "comet22=" + "c" * 40]
    p = cli_support.invoke(args, env={"MTBOARD_STREAM": "1"})
    assert p.returncode == 1 and p.stderr.strip() == "error: stopped by the test", p.stderr
    s = captured[0]
    assert s == RunSettings(
        corpus_path=ES, method="openai:m", prompt="translate-chat", coaching=tmp_path / "c.txt", tools=["fst-gate"],
        fst_retries=3, condition="cond", temperature=0.3, max_tokens=64, concurrency=2, runs=3,
        judge=["gemba-mqm=openai:j", "rubric=openai:k"], allow_self_judge=True, bench=tmp_path / "bench",
        judge_max_tokens=99, judge_max_attempts=2, judge_concurrency=5, judge_price_in=1.5, judge_price_out=2.5,
        judge_family="qwen", translator_family="gemma", early_gate=False,
        backend_extra={"n_ctx": "4096", "server": "llama-cpp-python"}, segment=Segment.diagnostic, limit=7,
        work_dir=tmp_path / "w", out=tmp_path / "card.json", base_url="http://127.0.0.1:9/v1",
        allow_incomplete=True, price_in=0.1, price_out=0.2, notes="a note", stream=True,
        neural_metric=("comet22", "cometkiwi"), neural_batch_size=4, neural_device="cuda",
        neural_revision={"comet22": "c" * 40})


def test_the_defaults_of_the_command_are_the_models(captured):
    p = cli_support.invoke(["run", ES, "--method", "echo:"], unset=("MTBOARD_STREAM",))
    assert p.returncode == 1 and len(captured) == 1
    assert captured[0] == RunSettings(corpus_path=ES, method="echo:")
    assert (captured[0].early_gate, captured[0].backend_extra, captured[0].tools) == (True, {}, None)


@pytest.mark.parametrize(("args", "line"), [
    (["--runs", "0"], "error: --runs: --runs must be at least 1 (fix: give --runs a number of at least 1)"),
    (["--limit", "0"], "error: --limit: --limit must be at least 1 (fix: give --limit a number of at least 1)"),
    (["--fst-retries", "9"], "error: --fst-retries: --fst-retries 9 is outside 0–5 (fix: give a number from 0 to 5)"),
    (["--format-attempts", "9"], "error: --format-attempts: --format-attempts 9 is outside 1–5 (fix: give a number "
                                 "from 1 to 5)"),
    (["--price-out", "-1"], "error: --price-out: --price-out must be at least 0 (fix: give --price-out a number of "
                            "at least 0)"),
    (["--segment", "dev"], "error: --segment: unknown segment 'dev' (fix: use one of development, diagnostic, "
                           "gold_standard, held_out)"),
    (["--backend-opt", "n_ctx"], "error: --backend-opt: --backend-opt 'n_ctx' is not KEY=VALUE (fix: write e.g. "
                                 "--backend-opt n_ctx=4096 (repeat the option for more settings))"),
    (["--neural-metric", "comet22", "--neural-device", "tpu"], "error: --neural-device: unknown device 'tpu' (fix: "
                                                               "use cpu or cuda)"),
    (["--neural-batch-size", "0"], "error: --neural-batch-size: --neural-batch-size must be at least 1 (fix: give "
                                   "--neural-batch-size a number of at least 1)"),
    (["--neural-device", "cuda"], "error: --neural-device: --neural-device has no effect without --neural-metric "
                                  "(fix: add --neural-metric METRIC, or drop --neural-device)"),
])
def test_the_command_line_says_one_line_naming_the_option(captured, args, line):
    p = cli_support.invoke(["run", ES, "--method", "echo:", *args])
    assert p.returncode == 1 and p.stderr.splitlines() == [line] and captured == []
