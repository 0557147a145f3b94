"""Site build scaling benchmark (issue 7): build the leaderboard site from 100 and from 1,000 generated run cards and
print build time and output size per card for both, plus their ratio (target: ≤ 1.5 at 1,000 vs 100).

SYNTHETIC, FOR LOAD ONLY: the corpora and outputs below are generated word salad (never evaluation data, never
committed); cards are scored by the real mtboard.score.scoring.score_run and sealed by mtboard.score.card.assemble_card so the
site sees realistic cards (per-segment statistics, breakdowns, fingerprints). Cards are spread over 5 synthetic
datasets × 10 synthetic model names; each dataset has 40 development entries in 4 domains.

Run: .venv/bin/python bench/site_scale.py [--sizes 100 1000] [--validate] [--keep DIR]
     .venv/bin/python bench/site_scale.py --board-rows 200 2000 --resamples 20   (issue 35 item 2: board pages)
(--validate also runs the full submission validator on every card during the build; default: schema only.)
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mtboard.core.documents import card_bytes, write_corpus  # noqa: E402
from mtboard.core.schema import Corpus  # noqa: E402
from mtboard.site import build_site  # noqa: E402
from mtboard.validate import canonical_relpath  # noqa: E402
from test_site_cards import make_card  # noqa: E402

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
         "phi chi psi omega").split()
DOMAINS = ["tech", "legal", "medical", "news"]
N_DATASETS, N_MODELS, N_ENTRIES = 5, 10, 40


def synthetic_corpus(k: int, rng: random.Random) -> Corpus:
    entries = []
    for i in range(1, N_ENTRIES + 1):
        src = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
        ref = " ".join(w[::-1] for w in src.split())
        entries.append({"id": i, "source": src, "reference": ref, "segment": "development",
                        "domain": DOMAINS[i % len(DOMAINS)]})
    return Corpus.model_validate({"dataset": {
        "id": f"synthetic-load-{k}", "version": "1.0.0", "language_pair": "XX→YY", "source_language": "en",
        "target_language": "es", "created": "2026-11-29", "license": "CC0-1.0",
        "provenance": ["synthetic load-test data (bench/site_scale.py)"]}, "entries": entries})


def perturb(ref: str, quality: float, rng: random.Random) -> str | None:
    if rng.random() > 0.97:
        return None
    words = [w if rng.random() < quality else rng.choice(WORDS) for w in ref.split()]
    return " ".join(words)


def make_tree(root: Path, n_cards: int, seed: int = 0, datasets: int = N_DATASETS, start: int = 0) -> None:
    """Write ``n_cards`` synthetic cards spread over ``datasets`` synthetic corpora (``datasets=1``: one board of
    ``n_cards`` rows, each card its own method) under ``root/submissions`` and ``root/corpora``. ``start``: skip the
    first cards (resume a tree: same corpora, the later cards' random draws differ from an uninterrupted run)."""
    rng = random.Random(seed)
    corpora = []
    for k in range(datasets):
        corpus = synthetic_corpus(k, rng)
        sha = write_corpus(corpus, root / "corpora" / f"synthetic-load-{k}.json")
        corpora.append((corpus, sha))
    for i in range(start, n_cards):
        corpus, sha = corpora[i % datasets]
        model = f"synthetic/model-{(i // datasets) % N_MODELS}"
        quality = 0.3 + 0.6 * rng.random()
        outputs = {e.id: perturb(e.reference, quality, rng) for e in corpus.entries}
        card = make_card(corpus, sha, model_slug=model, outputs=outputs, condition=f"sweep-{i}", run_seed=i + 1,
                         cost_per_entry=round(rng.uniform(0.0001, 0.01), 6), latency=rng.uniform(0.1, 2.0))
        path = root / canonical_relpath(card)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_bytes(card))


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def board_weights(out: Path) -> tuple[int, int, str]:
    """(largest board page's HTML bytes, its gzip bytes, its name): the page itself, theme CSS/JS excluded (issue 12
    budget: board HTML ≤ 250 KB)."""
    import gzip  # noqa: PLC0415

    best = (0, 0, "")
    for p in sorted((out / "leaderboards").rglob("*.html")):  # board pages, domain views and their later pages
        raw = p.read_bytes()
        if len(raw) > best[0]:
            best = (len(raw), len(gzip.compress(raw, 9, mtime=0)), str(p.relative_to(out / "leaderboards")))
    return best


def measure(n: int, validate: bool, keep: Path | None, datasets: int = N_DATASETS, resamples: int | None = None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"mtboard-scale-{n}-"))
    try:
        t0 = time.perf_counter()
        make_tree(tmp, n, datasets=datasets)
        gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        extra = {} if resamples is None else {"resamples": resamples}
        report = build_site(tmp / "submissions", tmp / "corpora", tmp / "out", tmp / "docs", validate=validate,
                            **extra)
        build = time.perf_counter() - t0
        assert report.cards == n and not report.rejected, [r.problems for r in report.rejected][:3]
        size = du(tmp / "out")
        boards = board_weights(tmp / "out")
        if keep:
            shutil.copytree(tmp / "out", keep / f"site-{n}", dirs_exist_ok=True)
        return {"n": n, "gen_s": gen, "build_s": build, "bytes": size, "pages": report.pages,
                "phases": report.seconds, "boards": boards}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[100, 1000])
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--board-rows", type=int, nargs="+", metavar="N",
                    help="instead: one board of N rows each (one dataset, every card its own method), built whole; "
                         "prints the largest board page (issue 35 item 2: <= 250 KB of HTML at 2,000 rows)")
    ap.add_argument("--resamples", type=int, default=None,
                    help="bootstrap resamples (default: the build's). The all-pairs test holds N(N-1)/2 x resamples "
                         "floats: 2,000 rows need --resamples 20 or so (16 GB at 1,000)")
    a = ap.parse_args()
    if a.board_rows:
        print("SYNTHETIC cards, for load only: one board")
        for n in a.board_rows:
            r = measure(n, a.validate, a.keep, datasets=1, resamples=a.resamples)
            raw, gz, name = r["boards"]
            print(f"{n:>5} rows: build {r['build_s']:7.1f} s, largest board page {name}: {raw:,} B HTML "
                  f"({raw / 1024:.1f} KiB; {gz / 1024:.1f} KiB gzipped): {'OK' if raw <= 250_000 else 'OVER'} "
                  f"(budget 250,000 B)")
        return
    rows = [measure(n, a.validate, a.keep) for n in a.sizes]
    print("SYNTHETIC cards, for load only")
    for r in rows:
        ph = " ".join(f"{k}={v:.1f}s" for k, v in r["phases"].items())
        print(f"{r['n']:>5} cards: build {r['build_s']:7.1f} s ({r['build_s'] / r['n'] * 1000:6.1f} ms/card; {ph}), "
              f"site {r['bytes'] / 1e6:7.1f} MB ({r['bytes'] / r['n'] / 1024:6.1f} KiB/card), {r['pages']} pages "
              f"[card generation {r['gen_s']:.0f} s, not counted]")
        raw, gz, name = r["boards"]
        print(f"       largest board page {name}: {raw / 1024:.1f} KiB HTML, {gz / 1024:.1f} KiB gzipped (theme "
              f"excluded)")
    small, big = rows
    t_ratio = (big["build_s"] / big["n"]) / (small["build_s"] / small["n"])
    s_ratio = (big["bytes"] / big["n"]) / (small["bytes"] / small["n"])
    verdict = "OK" if t_ratio <= 1.5 and s_ratio <= 1.5 else "OVER TARGET"
    print(f"per-card ratio {big['n']} vs {small['n']}: time {t_ratio:.2f}, size {s_ratio:.2f} "
          f"(target <= 1.5): {verdict}")


if __name__ == "__main__":
    main()
