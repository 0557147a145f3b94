"""Batched against one-text-per-call embedding of the semantic score, over every committed corpus and card (issue 35
item 4; docs/SCORING_SPEC.md §2.3).

For each committed corpus whose target language the model covers, every distinct normalised source, reference and
usable hypothesis of the committed cards (``submissions/<dataset>/*.json``, verification records skipped) is embedded
one text per call (the reference). Then each card is scored as a fresh process would score it: an empty in-memory
cache, no disk cache, ``semantic.similarities(hyps, refs)`` then ``similarities(sources, hyps)`` — distinct texts
embedded in calls of ``semantic.BATCH``. Printed: the worst absolute difference of a vector component, of the unrounded
cosine and of the stored (4-decimal) values between the two ways, how many stored values differ, the validator's
tolerance (``RECOMPUTE_TOLERANCE_UNITS`` units of 1e-4), and the CPU time of both ways.

Usage (one command, ~2 minutes)::

    PYTHONPATH=. .venv/bin/python bench/semantic_batching.py
"""

from __future__ import annotations

import glob
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mtboard.core.text import normalise  # noqa: E402
from mtboard.score.metrics import semantic  # noqa: E402


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return semantic._cosine(a, b)  # noqa: SLF001 - the scorer's own cosine


def main() -> None:
    enc = semantic.encoder()
    enc.disk.path = None  # measure the embedding, not the cache
    worst_vec = worst_cos = 0.0
    worst_units = differing = values = cards = texts_total = 0
    t_one = t_batch = 0.0
    for path in sorted(glob.glob(str(ROOT / "corpora" / "*.json"))):
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        ds = doc["dataset"]
        if not semantic.covers(ds["target_language"]):
            print(f"skipped {ds['id']}: target {ds['target_language']} not covered (no semantic score)")
            continue
        both = semantic.covers(ds["source_language"])
        by_id = {e["id"]: e for e in doc["entries"]}
        runs = []
        for card_path in sorted(glob.glob(str(ROOT / "submissions" / ds["id"] / "*.json"))):
            if card_path.endswith(".verification.json"):
                continue
            card = json.loads(Path(card_path).read_text(encoding="utf-8"))
            usable = [r for r in card.get("results", []) if r["checks"]["outcome"] == "usable"]
            hyps = [normalise(r["predicted"]) for r in usable]
            refs = [normalise(by_id[r["entry_id"]]["reference"]) for r in usable]
            srcs = [normalise(by_id[r["entry_id"]]["source"]) for r in usable]
            runs.append((hyps, refs, srcs))
        distinct = list(dict.fromkeys([normalise(e["source"]) for e in doc["entries"]]
                                      + [normalise(e["reference"]) for e in doc["entries"]]
                                      + [h for hyps, _, _ in runs for h in hyps]))
        texts_total += len(distinct)
        t0 = time.process_time()
        one = {t: enc.model.encode([t])[0] for t in distinct}
        t_one += time.process_time() - t0
        for hyps, refs, srcs in runs:
            if not hyps:
                continue
            cards += 1
            enc.cache.clear()
            t0 = time.process_time()
            ref_sims = semantic.similarities(hyps, refs)
            src_sims = semantic.similarities(srcs, hyps) if both else None
            t_batch += time.process_time() - t0
            for t, v in enc.cache.items():
                worst_vec = max(worst_vec, float(np.max(np.abs(v - one[t]))))
            pairs = [(hyps, refs, ref_sims)] + ([(srcs, hyps, src_sims)] if src_sims is not None else [])
            for left, right, got in pairs:
                for a, b, g in zip(left, right, got):
                    raw_one, raw_batch = cosine(one[a], one[b]), cosine(enc.cache[a], enc.cache[b])
                    worst_cos = max(worst_cos, abs(raw_one - raw_batch))
                    want = round(min(1.0, max(0.0, raw_one)), semantic.SEMANTIC_DECIMALS)
                    diff = abs(semantic.units(g) - semantic.units(want))
                    worst_units = max(worst_units, diff)
                    differing += diff != 0
                    values += 1
        print(f"{ds['id']}: {len(distinct)} distinct texts, {len(runs)} cards")
    print(f"cards scored: {cards}; stored values compared: {values}; distinct texts embedded one per call: "
          f"{texts_total}")
    print(f"worst |vector component| difference, batched ({semantic.BATCH}) vs one per call: {worst_vec:.3g}")
    print(f"worst |cosine| difference before rounding: {worst_cos:.3g}")
    print(f"worst stored-value difference: {worst_units} unit(s) of 1e-4 ({worst_units / semantic.UNITS:.4f}); "
          f"values that differ: {differing} of {values}")
    ok = worst_units <= semantic.RECOMPUTE_TOLERANCE_UNITS
    print(f"validator tolerance: {semantic.RECOMPUTE_TOLERANCE_UNITS} unit(s) -> {'within' if ok else 'OUTSIDE'}")
    per_one = t_one / max(texts_total, 1) * 1000
    print(f"embedding CPU: one per call {t_one:.1f} s for {texts_total} texts ({per_one:.2f} ms/text); batched "
          f"scoring of the {cards} cards {t_batch:.1f} s (each card from an empty cache)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
