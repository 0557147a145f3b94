"""All-pairs paired significance at build time (issue 15 part 2): 30 systems × 1,000 segments on one leaderboard.

Builds the leaderboard site from 30 generated run cards of 1,000 entries each and reports the build time by phase
(load + validation, compute — every view's paired bootstrap of the composite, rank clusters and all-pairs tests over
1,000 resamples —, render, MkDocs), plus the all-pairs test alone. Target: the whole build ≤ 60 s on the 2-core build
machine. On a shared machine the wall time includes waiting for the CPU: the build's own CPU time is printed too.

SYNTHETIC, FOR LOAD ONLY: the corpus and outputs are generated word salad (never evaluation data, never committed);
cards are scored by the real mtboard.score.scoring.score_run and sealed by mtboard.score.card.assemble_card
(tests/test_site_cards.make_card), so the site sees realistic cards.

Run: .venv/bin/python bench/significance_speed.py [--systems 30] [--segments 1000] [--no-validate] [--no-mkdocs]
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

import numpy as np  # noqa: E402

from mtboard.score import stats  # noqa: E402
from mtboard.core.documents import card_bytes, write_corpus  # noqa: E402
from mtboard.core.schema import Corpus  # noqa: E402
from mtboard.site import build_site  # noqa: E402
from mtboard.validate import canonical_relpath  # noqa: E402
from test_site_cards import make_card  # noqa: E402

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
         "phi chi psi omega").split()
DOMAINS = ["tech", "legal", "medical", "news"]


def synthetic_corpus(n: int, rng: random.Random) -> Corpus:
    entries = []
    for i in range(1, n + 1):
        src = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        entries.append({"id": i, "source": src, "reference": " ".join(w[::-1] for w in src.split()),
                        "segment": "development", "domain": DOMAINS[i % len(DOMAINS)]})
    return Corpus.model_validate({"dataset": {
        "id": "synthetic-significance", "version": "1.0.0", "language_pair": "XX→YY", "source_language": "en",
        "target_language": "es", "created": "2026-12-01", "license": "CC0-1.0",
        "provenance": ["synthetic load-test data (bench/significance_speed.py)"]}, "entries": entries})


def make_tree(root: Path, systems: int, segments: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    corpus = synthetic_corpus(segments, rng)
    sha = write_corpus(corpus, root / "corpora" / "synthetic-significance.json")
    for i in range(systems):
        quality = 0.35 + 0.5 * i / max(1, systems - 1) + rng.uniform(-0.02, 0.02)
        outputs = {e.id: " ".join(w if rng.random() < quality else rng.choice(WORDS) for w in e.reference.split())
                   for e in corpus.entries}
        card = make_card(corpus, sha, model_slug=f"synthetic/system-{i:02d}", outputs=outputs, run_seed=i + 1,
                         cost_per_entry=round(rng.uniform(0.0001, 0.01), 6), latency=rng.uniform(0.1, 2.0))
        path = root / canonical_relpath(card)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_bytes(card))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", type=int, default=30)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--no-validate", action="store_true")
    ap.add_argument("--no-mkdocs", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mtboard-significance-"))
    try:
        t0 = time.perf_counter()
        make_tree(tmp, a.systems, a.segments)
        gen = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        report = build_site(tmp / "submissions", tmp / "corpora", tmp / "out", tmp / "docs",
                            validate=not a.no_validate, run_mkdocs=not a.no_mkdocs)
        build, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert report.cards == a.systems and not report.rejected, [r.problems for r in report.rejected][:3]
        # the all-pairs test alone, on 1,000 resamples per row
        rng = np.random.default_rng(1)
        rows = [stats.RankRow(str(i), float(i), rng.normal(i / 100, 0.01, 1000)) for i in range(a.systems)]
        t1 = time.perf_counter()
        p = stats.all_pairs(rows)
        pairs_s = time.perf_counter() - t1
        ph = " ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items())
        print("SYNTHETIC cards, for load only")
        print(f"{a.systems} systems × {a.segments} segments: build {build:.1f} s wall, {cpu:.1f} s CPU of this "
              f"process, MkDocs child excluded ({ph}); all-pairs test alone "
              f"{pairs_s * 1000:.1f} ms for {p.shape[0] * (p.shape[0] - 1) // 2} pairs "
              f"[card generation {gen:.0f} s, not counted] — target ≤ 60 s: {'OK' if build <= 60 else 'OVER'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
