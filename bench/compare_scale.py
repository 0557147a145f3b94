"""Compare-side growth per added card (issue 35 item 1): build the site from N and from M synthetic 355-entry cards on
ONE dataset (every card its own method row, so the board, its compare data, its hard items and its portraits grow
with every card) and print, for the compare pages, the pair data (data/pairs), the hard-item pages and the model
portraits, the bytes at N and M and the marginal bytes per added card; then the largest file a compare page loads
whole (pairs.json, the fingerprint file, a pair-statistics chunk), measured, and pairs.json and the fingerprint file
extrapolated linearly to 2,000 runs (the chunk files are bounded by construction: ≤ PAIRS_CHUNK rows × PAIR_SPAN
pairs each).

SYNTHETIC, FOR LOAD ONLY: word-salad corpus and outputs, as bench/site_scale.py; cards made by the real pipeline
(tests/test_site_cards.make_card). Budget (issue 35 item 1, compare share): ≤ 20 KiB per added card in total, no
file a page loads whole past ~2 MB at 2,000 runs.

Run: PYTHONPATH=. .venv/bin/python bench/compare_scale.py [--sizes 10 30]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from mtboard.site import build_site, compare  # noqa: E402
from site_scale import make_tree  # noqa: E402

N_ENTRIES = 355
PARTS = {"compare pages": ("compare",), "pair data": ("data/pairs",), "hard items": ("hard",),
         "portraits": ("models",)}


def tree(root: Path, n: int) -> list[Path]:
    """One synthetic dataset of 355 entries and ``n`` cards under ``root`` (:func:`site_scale.make_tree`); the card
    paths in the order made."""
    return make_tree(root, n, datasets=1, entries=N_ENTRIES)


def sizes(out: Path) -> dict[str, int]:
    got = {}
    for name, folders in PARTS.items():
        got[name] = sum(p.stat().st_size for f in folders for p in (out / f).rglob("*") if p.is_file())
    return got


def largest(out: Path) -> dict[str, tuple[str, int]]:
    pairs = out / "data" / "pairs"
    pick = {"pairs.json": [p for p in pairs.glob("*.json") if ".p" not in p.name and ".fp." not in p.name],
            "fingerprints": list(pairs.glob("*.fp.json")), "pair chunk": list(pairs.glob("*.p*.json"))}
    return {k: max(((p.name, p.stat().st_size) for p in v), key=lambda x: x[1], default=("", 0))
            for k, v in pick.items()}


def build(root: Path, cards: list[Path], n: int) -> tuple[dict[str, int], dict[str, tuple[str, int]], float]:
    """Build the site of the first ``n`` cards (copied from ``root``'s tree, corpus beside them)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"mtboard-cmp-{n}-"))
    try:
        shutil.copytree(root / "corpora", tmp / "corpora")
        for path in cards[:n]:
            dst = tmp / path.relative_to(root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dst)
        t0 = time.perf_counter()
        report = build_site(tmp / "submissions", tmp / "corpora", tmp / "out", tmp / "docs", validate=False)
        secs = time.perf_counter() - t0
        assert report.cards == n and not report.rejected
        return sizes(tmp / "out"), largest(tmp / "out"), secs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[10, 30])
    n, m = ap.parse_args().sizes
    root = Path(tempfile.mkdtemp(prefix="mtboard-cmp-cards-"))
    try:
        cards = tree(root, m)
        (sn, ln, tn), (sm, lm, tm) = build(root, cards, n), build(root, cards, m)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"synthetic 355-entry cards on one board: {n} → {m} (build {tn:.0f} s → {tm:.0f} s)")
    total = 0.0
    for k in PARTS:
        per = (sm[k] - sn[k]) / (m - n)
        total += per
        print(f"  {k:14s} {sn[k]:>10,d} B → {sm[k]:>10,d} B   {per / 1024:6.2f} KiB per added card")
    print(f"  {'total':14s} {total / 1024:6.2f} KiB per added card (budget 20 KiB)")
    for k in ln:
        a, b = ln[k][1], lm[k][1]
        line = f"  largest {k:12s} {a:>9,d} B → {b:>9,d} B"
        if k != "pair chunk":
            line += f"   at 2,000 runs ≈ {(b + (b - a) / (m - n) * (2000 - m)) / 1e6:.2f} MB (linear)"
        else:
            line += f"   bounded: ≤ {compare.PAIRS_CHUNK} rows × {compare.PAIR_SPAN} pairs per file"
        print(line)


if __name__ == "__main__":
    main()
