"""bench/site_scale.py's synthetic card tree (issue 35 item 5): generated once into a folder with a manifest, extended
when short, refused when made with another seed or entry count, identical whether made at once, in parallel or by
extension; the per-size submissions folders hold exactly the cards asked for. No timing is asserted here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def scale():
    spec = importlib.util.spec_from_file_location("bench_site_scale", ROOT / "bench" / "site_scale.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # the generation pool pickles its worker function by module name
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.json"))
            if p.name != "manifest.json"}


def test_tree_generated_extended_and_refused(scale, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    rels, facts = scale.ensure_tree(a, 2, 0, 5, 1)
    assert facts["generated"] == 2 and facts["reused"] == 0
    assert [r.split("/")[:2] for r in rels] == [["submissions", "synthetic-load-0"], ["submissions", "synthetic-load-1"]]
    rels3, facts = scale.ensure_tree(a, 3, 0, 5, 1)  # extension: card 2 only
    assert (facts["generated"], facts["reused"]) == (1, 2) and rels3[:2] == rels
    m = json.loads((a / "manifest.json").read_text())
    assert (m["n"], m["seed"], m["entries"], len(m["files"])) == (3, 0, 5, 3) and "SYNTHETIC" in m["note"]
    assert [g["from"] for g in m["generation"]] == [0, 2]
    assert scale.ensure_tree(a, 2, 0, 5, 1)[0] == rels  # a smaller request re-uses, generates nothing
    scale.ensure_tree(b, 3, 0, 5, 2)  # at once, two processes
    assert _tree_bytes(a) == _tree_bytes(b) and len(_tree_bytes(a)) == 5 + 3  # 5 corpora + 3 cards, byte for byte
    card = json.loads((a / rels3[2]).read_bytes())
    assert len(card["results"]) == 5 and card["condition"] == "sweep-2" and card["dataset"]["id"] == "synthetic-load-2"
    with pytest.raises(SystemExit, match="seed"):
        scale.ensure_tree(a, 3, 1, 5, 1)
    with pytest.raises(SystemExit, match="entries"):
        scale.ensure_tree(a, 3, 0, 6, 1)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("x")
    with pytest.raises(SystemExit, match="no manifest.json"):
        scale.ensure_tree(tmp_path / "c", 1, 0, 5, 1)


def test_link_cards_holds_exactly_the_first_n(scale, tmp_path):
    tree = tmp_path / "tree"
    rels, _ = scale.ensure_tree(tree, 3, 0, 5, 1)
    work = tmp_path / "site"
    scale.link_cards(tree, rels, work)
    scale.link_cards(tree, rels[:1], work)
    held = sorted(p.relative_to(work).as_posix() for p in (work / "submissions").rglob("*.json"))
    assert held == rels[:1]
    assert (work / rels[0]).read_bytes() == (tree / rels[0]).read_bytes()


def test_extrapolation_hand_checked(scale, capsys):
    """Sizes linear through the two largest points, times per card at the largest: 100 cards 100 MB, 1,000 cards
    910 MB -> 10,000 cards 9.01 GB (slope 0.9 MB/card); 1,000 cards in 500 s wall -> 5,000 s = 83.3 min."""
    def row(n, mb, wall, board_kib):
        return {"n": n, "cold": {"bytes": mb * 1e6, "pages": 3 * n, "board": (board_kib * 1024, "x"),
                                 "maxrss": 2**30, "wall_s": wall, "cpu_s": wall / 2}}
    scale.extrapolate([row(100, 100, 90, 40), row(1000, 910, 500, 400)], 10000)
    out = capsys.readouterr().out
    assert "extrapolated" in out and "9.01 GB" in out and "cold build 83.3 min wall (41.7 min CPU)" in out
    assert "~30,000 pages" in out and "~4,000 KiB at 2000 rows per board" in out and "peak memory ~1.0 GiB" in out


def test_extrapolation_reads_the_site_as_deployed(scale, capsys):
    """With a rebuild given the deployed ledger (``deployed``), the size is extrapolated from its bytes, not the first
    build's (whose changes page lists every row as new): 100 cards 90 MB, 1,000 cards 810 MB as deployed (first builds
    100 and 910 MB) -> 10,000 cards 8.01 GB (slope 0.8 MB/card)."""
    def row(n, mb, deployed_mb):
        return {"n": n, "cold": {"bytes": mb * 1e6, "pages": 3 * n, "board": (1024, "x"), "maxrss": 2**30,
                                 "wall_s": 10.0, "cpu_s": 5.0},
                "deployed": {"bytes": deployed_mb * 1e6}}
    scale.extrapolate([row(100, 100, 90), row(1000, 910, 810)], 10000)
    out = capsys.readouterr().out
    assert "8.01 GB" in out and "9.01 GB" not in out
