"""Issue 33 item 4 for sweeps (second review findings 3, 5, 11): ``mtboard sweep plan`` and ``sweep run`` check every
cell's planned card (:func:`mtboard.run.planned.check_planned_card`, through the runner's ``prepare``) before the
first request of any cell, and refuse the sweep with one line per bad cell; a cell with no price is "unknown" in the
summary, not a crash; a backtick in an artifact folder's name cannot break the PR body's "Refused" list.

The sweep files and the two-entry corpus are small hand-made ones written into tmp_path (the reviewer's cells from
/work/briefs/rev33b-scratch/sweep1.py and sweep2.py); the OpenAI-compatible endpoint is the loopback ChatServer,
which counts the requests it is sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import markdown_it
import pytest

from loopback import ChatServer, write_handmade_corpus
from mtboard.sweeps.collect import Collected, code_span, pr_body
from mtboard.sweeps.execute import CellOutcome, SweepResult, shown, summary_record
from mtboard.sweeps.spec import load_sweep
from mtboard.sweeps.summary import summary_text

import cli_support

PAIRS = [("Hello world.", "Hola mundo."), ("Good night.", "Buenas noches.")]
SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"  # a made-up key of the OpenAI project-key shape
HEAD = """name: t
description: x
datasets: [corpora/hand-made-x.json]
segment: development
runs: 1
prompts: [translate-chat]
temperatures: [0.0]
max_parallel: 1
methods:
  - method: "openai:good-model"
    label: good
"""
BAD = f"""  - method: "openai:{'m' * 4000}"
    label: long
  - method: "openai:{SECRET}"
    label: secret
"""


class CountingServer(ChatServer):
    """ChatServer answering "Hola mundo." / "Buenas noches." and counting the POSTs it was sent."""

    def __init__(self) -> None:
        self.posts = 0

        def answer(text: str) -> str:
            self.posts += 1
            return "Hola mundo." if "Hello world" in text else "Buenas noches."

        super().__init__(answer, usage={"prompt_tokens": 10, "completion_tokens": 3})


def _checkout(tmp_path: Path, text: str) -> Path:
    write_handmade_corpus(tmp_path / "corpora" / "hand-made-x.json", "hand-made-x", PAIRS)
    (tmp_path / "sweeps").mkdir(exist_ok=True)
    (tmp_path / "sweeps" / "t.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _sweep(args: list[str], checkout: Path, url: str):
    return cli_support.invoke(["sweep", *args, "sweeps/t.yaml"], cwd=checkout, unset=("OPENAI_", "JUDGE_", "MTBOARD_"),
                              env={"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "x", "MTBOARD_STREAM": "0",
                                   "MTBOARD_PROGRESS_INTERVAL": "1000"})


def test_plan_and_run_refuse_every_bad_cell_before_any_request(tmp_path):
    """Finding 5: the good cell used to be sent (2 requests), then the secret cell failed, then the summary crashed.
    Now both commands list exactly the two bad cells — id, method (the key withheld), the sweep file's field, the
    rule — and the server is sent nothing; no cell's work directory is made."""
    checkout = _checkout(tmp_path, HEAD + BAD)
    good, long_, secret = load_sweep(checkout / "sweeps" / "t.yaml").cells
    with CountingServer() as srv:
        for command in (["plan"], ["run"]):
            proc = _sweep(command, checkout, srv.url)
            assert proc.returncode == 1, proc.stderr
            assert srv.posts == 0
            refused = [line for line in proc.stderr.splitlines() if line.startswith("refused: ")]
            assert len(refused) == 2, proc.stderr
            assert refused[0].startswith(f"refused: cell {long_.id} (openai:{'m' * 33}…): "
                                         f"{Path('sweeps') / 't.yaml'}: methods.1.method: the run card's ")
            assert "model_slug would be 4000 characters" in refused[0] and "at most 200 characters" in refused[0]
            assert refused[1].startswith(f"refused: cell {secret.id} (method withheld: it holds what looks like an API "
                                         f"key): {Path('sweeps') / 't.yaml'}: methods.2.method: the run card's "
                                         "method.model would hold what looks like an OpenAI")
            assert good.id not in "".join(refused)
            assert "2 of 3 cell(s)" in proc.stderr.splitlines()[-1]
            assert SECRET not in proc.stdout + proc.stderr and "sk-proj-A1b2" not in proc.stdout + proc.stderr
        assert not (checkout / "runs" / "sweeps" / "t" / good.id).exists()


def test_a_cell_without_a_price_runs_and_its_cost_is_unknown(tmp_path):
    """Finding 3 end to end (the reviewer's sweep2.py): a model the price table does not list — estimate cost_usd
    None — used to crash ``sweep run`` after the cell ran. The cell runs (2 requests: 2 entries × 1 run), the card
    is written, and the summary says the cost is unknown."""
    checkout = _checkout(tmp_path, HEAD)
    (cell,) = load_sweep(checkout / "sweeps" / "t.yaml").cells
    with CountingServer() as srv:
        plan = _sweep(["plan"], checkout, srv.url)
        assert plan.returncode == 0 and srv.posts == 0 and "refused" not in plan.stderr
        proc = _sweep(["run"], checkout, srv.url)
        assert proc.returncode == 0, proc.stderr
        assert srv.posts == 2
    summary = json.loads((checkout / "runs" / "sweeps" / "t" / "summary.json").read_text(encoding="utf-8"))
    assert (summary["cells"], summary["cards"], summary["failed"]) == (1, 1, 0)
    assert (summary["cost_usd"], summary["cost_estimated_usd"]) == (None, None)
    assert summary["rows"][0]["cell"] == cell.id and summary["rows"][0]["cost_estimated_usd"] is None
    assert "cost        actual unknown, estimated unknown" in proc.stdout


def _record(tmp_path: Path, estimates: dict) -> dict:
    text = HEAD + '  - method: "openai:other-model"\n    label: other\n'
    sweep = load_sweep(_checkout(tmp_path, text) / "sweeps" / "t.yaml")
    outcomes = [CellOutcome(cell=c, status="done", prompt_tokens=100, completion_tokens=20, cost_usd=None)
                for c in sweep.cells]
    return summary_record(sweep, SweepResult(outcomes=outcomes, elapsed_s=1.0),
                          {c.id: estimates[i] for i, c in enumerate(sweep.cells)})


@pytest.mark.parametrize("estimates, rows, total", [
    # both priced: the total is the sum (0.25 + 0.5)
    ([{"tokens": {"total": 120}, "cost_usd": {"estimate": 0.25}},
      {"tokens": {"total": 60}, "cost_usd": {"estimate": 0.5}}], [0.25, 0.5], 0.75),
    # one cell without a price: unknown, not the partial sum 0.25
    ([{"tokens": {"total": 120}, "cost_usd": {"estimate": 0.25}},
      {"tokens": {"total": 60}, "cost_usd": None}], [0.25, None], None),
    # no estimate at all for a cell (and tokens None): unknown, no crash
    ([{"tokens": None, "cost_usd": None}, {}], [None, None], None),
])
def test_summary_record_with_unknown_prices(tmp_path, estimates, rows, total):
    record = _record(tmp_path, estimates)
    assert [r["cost_estimated_usd"] for r in record["rows"]] == rows
    assert record["cost_estimated_usd"] == total
    assert record["tokens_used"] == 240
    text = summary_text(record)
    assert text.splitlines()[-1] == ("cost        actual unknown, estimated "
                                     + ("unknown" if total is None else f"${total:.4f}"))


def test_shown_withholds_keys_and_cuts_long_methods():
    assert shown(f"openai:{SECRET}") == "method withheld: it holds what looks like an API key"
    assert shown("openai:" + "m" * 100) == "openai:" + "m" * 33 + "…"
    assert shown("openai:a\rb") == "openai:a b"


@pytest.mark.parametrize("name, fence", [
    ("sweep-card-a`b", "``"), ("``x", "```"), ("x`", "``"), ("plain", "`"), ("a`` b ```c", "````"),
])
def test_code_span_cannot_be_broken_by_a_backtick(name, fence):
    """Finding 11: the fence is one backtick longer than the longest run inside (CommonMark §6.1), padded when the
    text starts or ends with one; rendered by a CommonMark parser, the code is the name exactly."""
    span = code_span(name)
    assert span.startswith(fence) and span.endswith(fence) and not span.startswith(fence + "`")
    html = markdown_it.MarkdownIt("commonmark").render(f"- {span}: why")
    assert html == f"<ul>\n<li><code>{name}</code>: why</li>\n</ul>\n"


def test_pr_body_refused_list_keeps_one_item_per_folder(tmp_path):
    """Three refused folders, two named with backticks: the "Refused" list renders three items, each name whole in
    its code span and each reason after it (before the fix, `` `sweep-card-a`b` `` closed the span early)."""
    sweep = load_sweep(_checkout(tmp_path, HEAD) / "sweeps" / "t.yaml")
    result = Collected(refused=[("sweep-card-a`b", "not a sweep-card-CELL_ID artifact folder"),
                                ("`` x", "bad `card`"), ("plain", "no cell")], missing=["0123456789ab"])
    html = markdown_it.MarkdownIt("commonmark").render(pr_body(sweep, result))
    assert html.count("<li>") == 3
    assert "<li><code>sweep-card-a`b</code>: not a sweep-card-CELL_ID artifact folder</li>" in html
    assert "<li><code>`` x</code>: " in html
    assert "<li><code>plain</code>: no cell</li>" in html
    assert "<code>0123456789ab</code>" in html
