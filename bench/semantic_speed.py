"""Semantic scoring speed: what ``mtboard.score.scoring.score_run`` spends on the semantic score and the hallucination
detector (``mtboard.score.metrics.semantic``: hypothesis–reference and source–hypothesis similarities, every text
embedded in batches of 64 from an empty cache) for ``--segments`` real segments, against sacrebleu's bare corpus chrF++
on the same segments, measured in the same run.

Data: the committed corpora whose languages the model covers (corpora/*.json, human references), in file order,
repeated up to ``--segments``; each segment's hypothesis is the reference of the next entry of its corpus (real text
of realistic length; distinct from every reference, so nothing is embedded twice by accident). Repeated segments are
made distinct by a numbered prefix, so the cache never shortcuts a repeat.

Usage::

    .venv/bin/python bench/semantic_speed.py [--segments 1000] [--repeats 3]

Prints wall and CPU seconds of both sides (median of the repeats, interleaved, model already loaded) and the ratios.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sacrebleu.metrics import CHRF  # noqa: E402

from mtboard.score.metrics import semantic  # noqa: E402
from mtboard.core.text import normalise  # noqa: E402


def load(n_segments: int) -> tuple[list[str], list[str], list[str]]:
    pool = []
    for path in sorted(glob.glob(str(ROOT / "corpora" / "*.json"))):
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        ds = doc["dataset"]
        if not (semantic.covers(ds["source_language"]) and semantic.covers(ds["target_language"])):
            continue
        ents = doc["entries"]
        for i, e in enumerate(ents):
            pool.append((e["source"], e["reference"], ents[(i + 1) % len(ents)]["reference"]))
    src, ref, hyp = [], [], []
    k = 0
    while len(src) < n_segments:
        s, r, h = pool[k % len(pool)]
        tag = f"{k // len(pool)}. " if k >= len(pool) else ""
        src.append(normalise(tag + s))
        ref.append(normalise(tag + r))
        hyp.append(normalise(tag + h))
        k += 1
    return src, ref, hyp


def timed(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    src, ref, hyp = load(args.segments)
    enc = semantic.encoder()  # load the model outside the timing (~2 s once per process)
    chrf = CHRF(word_order=2)

    def sem() -> None:
        enc.cache.clear()
        semantic.similarities(hyp, ref)
        semantic.similarities(src, hyp)

    def base() -> None:
        chrf.corpus_score(hyp, [ref])

    s_runs, b_runs = [], []
    for _ in range(args.repeats):
        s_runs.append(timed(sem))
        b_runs.append(timed(base))
    sw, sc = statistics.median(x[0] for x in s_runs), statistics.median(x[1] for x in s_runs)
    bw, bc = statistics.median(x[0] for x in b_runs), statistics.median(x[1] for x in b_runs)
    print(f"segments: {len(src)} (texts embedded per run: {len(set(src)) + len(set(ref)) + len(set(hyp))})")
    print(f"semantic (both similarities): wall {sw:.2f} s, CPU {sc:.2f} s ({1000 * sw / len(src):.2f} ms/segment)")
    print(f"sacrebleu corpus chrF++:       wall {bw:.2f} s, CPU {bc:.2f} s")
    print(f"ratio semantic / chrF++: wall {sw / bw:.1f}, CPU {sc / bc:.1f}")


if __name__ == "__main__":
    main()
