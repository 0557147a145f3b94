"""Markdown written from untrusted text stays one line per cell (issue 33 item 6): every line boundary
``str.splitlines`` or a Markdown renderer honours — CR, CR LF, LF, VT, FF, FS, GS, RS, NEL, LS, PS — is folded like LF
in report.md, the pull-request body, the sweep's pull-request body and the site's Markdown cells.

Measured on main (bdc1374 / 9c51ef2) before the fix: three entries answered ``"a | b\\rc | d"`` gave an Entries table
of 7 rows in Python-Markdown (the header and 3 entries are 4): the CR (and the CR of a CR LF) split each row.

The loopback server is hand-made (tests/loopback.py); the corpus is a hand-made fixture, not evaluation data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import markdown
import pytest

import cli_support
from loopback import ChatServer, write_handmade_corpus
from mtboard.core import fmt
from mtboard.core.schema import RunCard
from mtboard.core.text import LINE_BREAKS
from mtboard.run.submit import pr_body

REPO = Path(__file__).resolve().parents[1]
BOUNDARIES = {"CR": "\r", "CRLF": "\r\n", "LF": "\n", "VT": "\x0b", "FF": "\x0c", "FS": "\x1c", "GS": "\x1d",
              "RS": "\x1e", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}
"""Every line boundary of ``str.splitlines`` (Python docs, "str.splitlines"), CR LF as one."""


def test_the_list_is_every_boundary_python_knows() -> None:
    # the table above is complete: each of its strings is one boundary to str.splitlines, and no other code point
    # below U+3000 is one (hand-checked against the Python documentation's table)
    assert all(("x" + b + "y").splitlines() == ["x", "y"] for b in BOUNDARIES.values())
    others = [c for c in map(chr, range(0x3000)) if ("x" + c + "y").splitlines() != ["x" + c + "y"]]
    assert set(others) == set("".join(BOUNDARIES.values()))
    assert set(LINE_BREAKS + "\n") == set(others)


@pytest.mark.parametrize("name", BOUNDARIES)
def test_md_cell_folds_each_boundary_like_lf(name: str) -> None:
    text = f"a | b{BOUNDARIES[name]}c | d"
    assert fmt.fold_lines(text) == "a | b c | d"
    assert fmt.md_cell(text) == "a \\| b c \\| d"
    assert fmt.md_cell(text).splitlines() == ["a \\| b c \\| d"]
    # the site's Markdown cells too (NEL passed through before: 'a&#124;b\x85c')
    assert str(fmt.md_text(f"a|b{BOUNDARIES[name]}c")) == "a&#124;b c"


def test_md_cell_escapes_and_cuts() -> None:
    assert fmt.md_cell(None) == ""
    assert fmt.md_cell("x\\|y <b>") == "x\\\\\\|y &lt;b&gt;"
    assert fmt.md_cell("a\r\n\r\nb") == "a  b"  # two boundaries, two spaces (as two LFs always gave)
    assert fmt.md_cell("abcdef", 3) == "abc\u2026"
    assert fmt.md_cell("abc", 3) == "abc"


def _entry_rows(report_md: str) -> list[list[str]]:
    """The rows (cells' text) of report.md's Entries table as Python-Markdown with the ``tables`` extension (the
    extension mkdocs.yml enables) renders them."""
    html = markdown.markdown(report_md, extensions=["tables"])
    table = html.split("Entries (run 0)", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
            for r in rows]


def test_report_entries_table_has_one_row_per_entry_whatever_the_line_boundary(tmp_path: Path) -> None:
    names = list(BOUNDARIES)
    answers = [f"a | b{BOUNDARIES[n]}c | d" for n in names]
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-md-cells",
                                   [(f"Line {i}.", f"Línea {i}.") for i in range(len(names))])
    # entry "Line N." is answered with answers[N] ("a | b<boundary N>c | d")
    with ChatServer(lambda text: answers[int(re.search(r"Line (\d+)\.", text).group(1))],
                    {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}) as srv:
        p = cli_support.invoke(["run", str(corpus), "--method", "openai:m", "--base-url", srv.url, "--work-dir",
                                str(tmp_path / "w"), "--prompt", "source-only"], cwd=tmp_path,
                               unset=("OPENAI_", "MTBOARD_"))
    assert p.returncode == 0, p.stderr
    report = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    rows = _entry_rows(report)
    assert len(rows) == 1 + len(names)  # the header and one row per entry (main: a CR split a row in two)
    assert rows[0] == ["entry", "chrF++", "latency s", "output"]
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(1, len(names) + 1)]
    assert all(len(r) == 4 and r[3] == "a | b c | d" for r in rows[1:]), rows
    # no line boundary but LF anywhere in the file: any renderer or editor sees the lines mtboard wrote
    assert not any(c in report for c in LINE_BREAKS)
    # the raw answer keeps its boundary (only the Markdown is folded)
    card = json.loads((tmp_path / "w" / "card.json").read_text(encoding="utf-8"))
    assert [r["raw_predicted"] for r in card["results"]] == answers


def _card() -> RunCard:
    # tests/fixtures/card_minimal.json: a small hand-written card (toy data)
    return RunCard.model_validate(json.loads((REPO / "tests" / "fixtures" / "card_minimal.json").read_text("utf-8")))


@pytest.mark.parametrize("name", BOUNDARIES)
def test_pr_body_cells_and_items_stay_on_one_line(name: str) -> None:
    b = BOUNDARIES[name]
    card = _card().model_copy(update={"condition": f"base{b}line | x", "model_id": f"m{b}odel`id"})
    template = (REPO / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text(encoding="utf-8")
    body = pr_body(card, template)
    assert not any(c in body for c in LINE_BREAKS)
    html = markdown.markdown(body, extensions=["tables"])
    table = html.split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert len(rows) == 2
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", rows[1], re.S)]
    assert cells == ["toy-en-es", "apertium/eng-spa", "base line | x", "pipeline", "0.500", card.run_card_hash[:12]]
    assert "- What the server reported about the model: model id reported: `` m odel`id ``; engine " in body


def test_sweep_pr_body_refusals_stay_on_one_line() -> None:
    from types import SimpleNamespace

    from mtboard.sweeps.collect import Collected, pr_body as sweep_body

    sweep = SimpleNamespace(name="s", path=Path("sweeps/s.yaml"), sha256="0" * 64)
    result = Collected()
    result.refused = [("card-x\u2028y", "card.json: bad\x85value | <b> (fix: re-run)")]
    body = sweep_body(sweep, result)
    assert "- `card-x y`: card.json: bad value \\| &lt;b&gt; (fix: re-run)" in body.splitlines()
