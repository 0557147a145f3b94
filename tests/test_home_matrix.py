"""The home page's overview matrix (issue 36 item 9: methods × language pairs, cell = rank range and composite).

On the site built from the committed cards (``committed_site``, tests/conftest.py: built once per session): each
matrix cell is read back from the home page and compared with the row the pair's board page shows (rank, composite,
run link), parsed from that page: the matrix repeats the boards' decisions, it takes none. Then
:func:`mtboard.site.boards.overview` on hand-made boards (order, empty/unranked/reference cells, a second row of one
method, no board) and the template's block with hostile names (escaped) and without a board (a sentence).
"""

from __future__ import annotations

import json
import re
import posixpath
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

from mtboard.site import boards as bd
from mtboard.site.render import _env

EN_ES = "mtb-en-es-dev-v1.0.0"


class Table(HTMLParser):
    """The ``<table id=ID>`` of a page: its caption, header cells and body rows, each cell as (tag, attributes, text
    without screen-reader spans, text with them, links)."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.depth, self.sr = table_id, 0, 0
        self.attrs: dict[str, str | None] = {}
        self.caption: list[str] | None = None
        self.head: list[dict] = []
        self.rows: list[tuple[dict, list[dict]]] = []
        self.section = ""
        self.cell: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == self.table_id and not self.depth:
            self.depth, self.attrs = 1, a
            return
        if not self.depth:
            return
        if tag == "table":
            self.depth += 1
        elif tag == "caption":
            self.caption = []
        elif tag in ("thead", "tbody"):
            self.section = tag
        elif tag == "tr" and self.section == "tbody":
            self.rows.append((a, []))
        elif tag in ("th", "td"):
            self.cell = {"tag": tag, "attrs": a, "text": [], "all": [], "links": []}
        elif tag == "a" and self.cell is not None:
            self.cell["links"].append(a.get("href"))
        if tag == "span" and self.cell is not None and (self.sr or "mtb-sr" in (a.get("class") or "").split()):
            self.sr += 1

    def handle_endtag(self, tag):
        if not self.depth:
            return
        if tag == "table":
            self.depth -= 1
        elif tag == "span" and self.sr:
            self.sr -= 1
        elif tag in ("th", "td") and self.cell is not None:
            cell = {**self.cell, "text": "".join(self.cell["text"]).strip(), "all": "".join(self.cell["all"]).strip()}
            (self.head if self.section == "thead" else self.rows[-1][1]).append(cell)
            self.cell = None

    def handle_data(self, data):
        if self.caption is not None and self.cell is None and not self.head:
            self.caption.append(data)
        if self.cell is not None:
            self.cell["all"].append(data)
            if not self.sr:
                self.cell["text"].append(data)


def parse(page: Path, table_id: str) -> Table:
    t = Table(table_id)
    t.feed(page.read_text(encoding="utf-8"))
    assert t.attrs, f"no <table id={table_id}> in {page}"
    return t


def resolve(here: str, href: str) -> str:
    """A relative link of page ``here`` (docs-relative) as a docs-relative path."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(here), href))


@pytest.fixture(scope="module")
def site(committed_site):
    docs = committed_site.docs
    index = json.loads((docs / "data" / "boards.json").read_text(encoding="utf-8"))["boards"]
    return docs, parse(docs / "index.md", "overview"), index


def _row(matrix: Table, line1: str, line2: str) -> list[dict]:
    (row,) = [cells for _, cells in matrix.rows if cells[0]["text"] == line1 + line2]
    return row[1:]


def _board(docs: Path, page: str) -> list[dict]:
    """The board page's rows (page 1 of the all-domains view): method text, rank cell, composite cell, run link."""
    md = page[:-5] + ".md"
    out = []
    for _, cells in parse(docs / md, "lb-main").rows:
        by = {c["attrs"].get("class"): c for c in cells}
        # the rank cell's text without its flip distance to the next row (⇅N, issue 38 item 4) and floor mark
        rank = re.sub("[\u21c5\u2264].*$", "", by["c-rank"]["text"]).strip()  # ⇅N, ≤ shuffled / ≤ echo
        out.append({"method": by["c-method"], "rank": rank, "composite": by["c-composite"]["text"],
                    "run": resolve(md, by["c-method"]["links"][0])})
    return out


def test_one_column_per_board_in_board_order_each_linked(site):
    docs, matrix, index = site
    assert matrix.head[0]["text"] == "Method" and matrix.head[0]["attrs"]["scope"] == "col"
    cols = matrix.head[1:]
    assert len(cols) == len(index) == 9  # + EN→ES dialogue (issue 40)
    for th, board in zip(cols, index):
        assert th["attrs"]["scope"] == "col"
        assert resolve("index.md", th["links"][0]) == board["page"]
        assert th["text"].startswith(board["dataset"]["pair"])
    assert all(len(cells) == 1 + len(index) for _, cells in matrix.rows)


def test_apertium_cell_is_the_en_es_boards_first_row(site):
    """The EN→ES column's cell of apertium:eng-spa shows what the EN→ES board page's first row shows."""
    docs, matrix, index = site
    col = [b["page"] for b in index].index(f"leaderboards/{EN_ES}.html")
    first = _board(docs, f"leaderboards/{EN_ES}.html")[0]
    assert first["method"]["text"].startswith("apertium:eng-spa")
    cell = _row(matrix, "apertium:eng-spa", "default")[col]
    assert cell["attrs"]["data-cell"] == "ranked"
    rank, composite = cell["text"].split(" · ")
    assert rank == first["rank"] == "1"
    assert composite == first["composite"].split()[0] and composite.startswith("0.")
    assert cell["all"] == f"rank {rank}, composite · {composite}"
    assert resolve("index.md", cell["links"][0]) == first["run"]


def test_every_cell_is_its_boards_row(site):
    """Every board row (ranked and reference) is one matrix cell with the board's rank ('ref.') and composite, and
    every other cell is empty: the matrix holds nothing the boards do not."""
    docs, matrix, index = site
    seen = 0
    for j, board in enumerate(index):
        shown = {}
        for r in _board(docs, board["page"]):
            shown[r["run"]] = r
        for _, cells in matrix.rows:
            cell = cells[1 + j]
            kind = cell["attrs"]["data-cell"]
            if kind == "absent":
                assert cell["text"] == "" and cell["all"] == "not run" and not cell["links"]
                continue
            assert kind in ("ranked", "reference")
            r = shown.pop(resolve("index.md", cell["links"][0]))
            rank, composite = cell["text"].split(" · ")
            assert rank == r["rank"] and composite == r["composite"].split()[0]
            assert (kind == "reference") == (rank == "ref.")
            assert r["method"]["text"].startswith(cells[0]["text"])  # the board's method cell: line 1, line 2, …
            seen += 1
        assert not shown, f"board rows missing from the matrix: {board['page']} {sorted(shown)}"
    assert seen == sum(1 for _, cells in matrix.rows for c in cells[1:] if c["attrs"]["data-cell"] != "absent")


def test_a_method_absent_from_a_pair_has_an_empty_cell(site):
    docs, matrix, index = site
    cells = _row(matrix, "apertium:eng-spa", "default")
    kinds = [c["attrs"]["data-cell"] for c in cells]
    pages = [b["page"] for b in index]
    # EN→ES, and the EN→ES dialogue board, whose ranked rows are the dialogue-history sweep's 12-line `lines` arm
    # (issue 40; its scene arms are listed unranked)
    ranked = {pages.index(f"leaderboards/{EN_ES}.html"), pages.index("leaderboards/mtb-en-es-dialogue-v1.0.0.html")}
    assert kinds == ["ranked" if k in ranked else "absent" for k in range(len(index))]


def test_rows_by_pairs_covered_then_rank_baselines_last(site):
    docs, matrix, index = site
    covered = [sum(c["attrs"]["data-cell"] != "absent" for c in cells[1:]) for _, cells in matrix.rows]
    refs = [(a.get("class") or "") == "mtb-ref" for a, _ in matrix.rows]
    assert refs == sorted(refs) and refs[-2:] == [True, True]  # echo and empty, last, marked as on the boards
    real = covered[:refs.index(True)]
    assert real == sorted(real, reverse=True) and real[0] == 5  # the few-shot gemma runs on five pairs
    assert {matrix.rows[-1][1][0]["text"], matrix.rows[-2][1][0]["text"]} == {"echo:baseline", "empty:baseline"}
    for _, cells in matrix.rows:
        assert cells[0]["tag"] == "th" and cells[0]["attrs"]["scope"] == "row"


def test_a_board_of_baselines_only(site):
    """JA→EN has only the echo and empty baselines: its column holds two "ref." cells and says so in its header."""
    docs, matrix, index = site
    col = [b["dataset"]["pair"] for b in index].index("JA→EN")
    assert matrix.head[1 + col]["text"].endswith("no ranked method")
    kinds = [cells[1 + col]["attrs"]["data-cell"] for _, cells in matrix.rows]
    assert kinds.count("reference") == 2 and set(kinds) == {"reference", "absent"}


def test_a_labelled_scroll_region_with_a_caption(site):
    docs, matrix, index = site
    home = (docs / "index.md").read_text(encoding="utf-8")
    assert ('<div class="mtb-region mtb-overview-region" role="region" aria-labelledby="overview-cap" tabindex="0">'
            '<table class="mtb-plain mtb-overview" id="overview"><caption id="overview-cap">Methods × language pairs')\
        in home
    # below the pair cards, before the datasets and how to submit (design note "Home")
    assert home.index('class="mtb-paircards"') < home.index('id="overview"') < home.index("## Datasets")
    html = (docs.parent / "out" / "index.html").read_text(encoding="utf-8")  # committed_site.out: MkDocs kept it
    assert 'id="overview-cap"' in html and html.count('data-cell="ranked"') == home.count('data-cell="ranked"')


# --------------------------------------------------------------------------------------------------------------------
# overview() on hand-made boards


def _card(spec: str, condition: str = "default", prompt: str | None = None, cls: str = "raw-llm"):
    backend = spec.split(":")[0]
    return SimpleNamespace(method=SimpleNamespace(spec=spec, backend=backend, prompt_name=prompt),
                           condition=condition, temperature=None if prompt is None else 0.0, model_slug=spec,
                           method_class=cls)


def _m(card, page_id: str, rank: str = "", lo: int | None = None, composite: float = 0.5, reference: bool = False):
    return SimpleNamespace(rep=SimpleNamespace(lc=SimpleNamespace(card=card, page_id=page_id)), rank=rank,
                           rank_lo=lo, composite=composite, reference=reference)


def _lb(key: str, methods: list, unranked: list | None = None):
    return SimpleNamespace(key=key, page=f"leaderboards/{key}.md", language_pair=key.upper(), dataset_id=key,
                           version="1.0.0", views=[SimpleNamespace(methods=methods)], unranked=unranked or [])


def test_overview_of_hand_made_boards():
    a, b, c = _card("x:a", prompt="p"), _card("x:b"), _card("x:c")
    echo, only_unranked = _card("echo:", "baseline", cls="baseline"), _card("x:subset")
    boards = [
        _lb("p1", [_m(a, "a1", "1", 1, 0.61), _m(b, "b1", "2–3", 2, 0.5), _m(c, "c1", "2–3", 2, 0.49),
                   _m(a, "a1bis", "4", 4, 0.3), _m(echo, "e1", composite=0.0, reference=True)],
            unranked=[SimpleNamespace(card=only_unranked, page_id="u1")]),
        _lb("p2", [_m(c, "c2", "1", 1, 0.7), _m(echo, "e2", composite=0.0, reference=True)],
            unranked=[SimpleNamespace(card=b, page_id="b2")]),
        _lb("p3", [_m(echo, "e3", composite=0.012, reference=True)]),
    ]
    ov = bd.overview(boards)
    assert ov is not None and ov.boards == boards and ov.ranked == [True, True, False]
    names = [(r.line1, r.line2) for r in ov.rows]
    # c covers two pairs; a and b one each, a (rank 1) before b (rank 2); the baseline last; x:subset has no row
    assert names == [("x:c", "default"), ("x:a", "prompt p · default · t 0"), ("x:b", "default"),
                     ("echo:", "baseline")]
    c_row, a_row, b_row, e_row = ov.rows
    assert [x.kind for x in c_row.cells] == ["ranked", "ranked", "absent"] and c_row.mean_rank == 1.5
    assert (c_row.cells[0].rank, c_row.cells[0].composite, c_row.cells[0].target) == ("2–3", "0.490", "runs/c1.md")
    assert (a_row.cells[0].rank, a_row.cells[0].target, a_row.cells[0].more) == ("1", "runs/a1.md", 1)
    assert [x.kind for x in b_row.cells] == ["ranked", "unranked", "absent"] and b_row.cells[1].target == "runs/b2.md"
    assert e_row.reference and [x.kind for x in e_row.cells] == ["reference"] * 3
    assert [(x.rank, x.composite) for x in e_row.cells] == [("", "0.000"), ("", "0.000"), ("", "0.012")]
    assert bd.overview([]) is None


def test_overview_rows_are_bounded(monkeypatch):
    """Over :data:`~mtboard.site.boards.OVERVIEW_ROWS` methods the matrix keeps the best placed ones (and its
    reference rows) and the page says how many there are."""
    monkeypatch.setattr(bd, "OVERVIEW_ROWS", 2)
    cards = [_card(f"x:m{k}") for k in range(5)]
    echo = _card("echo:", "baseline", cls="baseline")
    lb = _lb("p1", [_m(c, f"m{k}", str(k + 1), k + 1, 0.9 - k / 10) for k, c in enumerate(cards)]
             + [_m(echo, "e1", composite=0.0, reference=True)])
    ov = bd.overview([lb])
    assert [r.line1 for r in ov.rows] == ["x:m0", "x:m1", "echo:"] and ov.methods == 5
    text = _home(ov)
    assert ("The 2 methods covering the most pairs, best ranked first, of 5: every method is on its pair's board."
            in text)
    monkeypatch.setattr(bd, "OVERVIEW_ROWS", 50)
    assert "methods covering the most pairs" not in _home(bd.overview([lb]))


# --------------------------------------------------------------------------------------------------------------------
# The template's block


HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def _home(matrix) -> str:
    ctx = dict(title="", boards=[], portraits=[], rejected=[], n_cards=0, build_time="2026-12-01 00:00 UTC",
               corpora=[], pair_cards=[], state=None, matrix=matrix)
    return _env().get_template("index.md.j2").render(link=lambda t: t, relmd=lambda t: t, **ctx)


def test_names_from_cards_are_escaped():
    evil = _card("x:" + HOSTILE, condition='"><b>c</b>', prompt="p<i>")
    lb = _lb("p1", [_m(evil, "e1", "1", 1, 0.5)])
    lb.language_pair, lb.dataset_id = "<b>EN→ES</b>", 'd"><script>x</script>'
    text = _home(bd.overview([lb]))
    block = text[text.index('<div class="mtb-region mtb-overview-region"'):text.index("</table></div>")]
    assert "<script" not in block and "<img" not in block and "<b>" not in block and "<i>" not in block
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in block and "&lt;b&gt;EN→ES&lt;/b&gt;" in block
    assert 'onerror=&#34;alert(2)&#34;' in block or "onerror=&quot;alert(2)&quot;" in block


def test_no_board_no_matrix_a_sentence():
    text = _home(None)
    assert 'id="overview"' not in text
    assert "No board yet, so no method can be compared across language pairs." in text
