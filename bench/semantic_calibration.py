"""Calibration of the semantic thresholds (docs/SCORING_SPEC.md §2.3): distributions of the embedding similarities
on the committed corpora for human references and for outputs that are wrong by construction.

For every committed corpus whose languages the model covers (mtboard.score.metrics.semantic.LANGUAGES), each entry's
hypothesis is, in turn:

* ``human``  — the entry's own human reference (the true translation);
* ``mt``     — the usable outputs of the committed non-baseline cards of that corpus (real machine translations);
* ``wrong``  — the reference of the next entry of the corpus (fluent, wrong sentence);
* ``shuffled`` — the reference with its words (characters for a text without spaces) in a seeded random order;
* ``echo``   — the source itself (the mechanical policy scores it 0 before any similarity);
* ``empty``  — the empty string (likewise 0 by policy).

It prints, per kind, percentiles of the cross-lingual source–hypothesis similarity (hallucination detector) and of
the hypothesis–reference similarity (semantic score, MISMATCH verdict), the share under each threshold, and the share
of entries where the wrong sentence scores lower than the human reference by at least 0.1.

Usage::

    .venv/bin/python bench/semantic_calibration.py
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mtboard.score.metrics import semantic  # noqa: E402
from mtboard.core.text import normalise  # noqa: E402

MARGIN = 0.1


def shuffled(text: str, rng: np.random.Generator) -> str:
    words = text.split()
    if len(words) > 1:
        return " ".join(words[i] for i in rng.permutation(len(words)))
    return "".join(text[i] for i in rng.permutation(len(text)))


def card_outputs(dataset_id: str) -> list[tuple[int, str]]:
    out = []
    for path in sorted(glob.glob(str(ROOT / "submissions" / dataset_id / "*.json"))):
        if path.endswith(".verification.json"):
            continue
        card = json.loads(Path(path).read_text(encoding="utf-8"))
        if card["method_class"] == "baseline":
            continue
        for r in card["results"]:
            if r["checks"]["outcome"] == "usable":
                out.append((r["entry_id"], r["predicted"]))
    return out


def row(name: str, values: list[float], threshold: float) -> str:
    p = np.percentile(values, [1, 5, 25, 50, 75, 95]) if values else [float("nan")] * 6
    below = sum(v < threshold for v in values) / len(values) if values else float("nan")
    return (f"| {name} | {len(values)} | " + " | ".join(f"{x:.2f}" for x in p) + f" | {below:.3f} |")


def main() -> None:
    rng = np.random.default_rng(20261201)
    kinds_src: dict[str, list[float]] = {}
    kinds_ref: dict[str, list[float]] = {}
    lower, total = 0, 0
    for path in sorted(glob.glob(str(ROOT / "corpora" / "*.json"))):
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        ds = doc["dataset"]
        if not (semantic.covers(ds["source_language"]) and semantic.covers(ds["target_language"])):
            print(f"skipped {ds['id']}: {ds['source_language']}→{ds['target_language']} not covered")
            continue
        ents = doc["entries"]
        src = [normalise(e["source"]) for e in ents]
        ref = [normalise(e["reference"]) for e in ents]
        by_id = {e["id"]: i for i, e in enumerate(ents)}
        hyps = {
            "human": ref,
            "wrong": ref[1:] + ref[:1],
            "shuffled": [shuffled(r, rng) for r in ref],
            "echo": src,
            "empty": [""] * len(ref),
        }
        for kind, hyp in hyps.items():
            kinds_src.setdefault(kind, []).extend(semantic.similarities(src, hyp))
            kinds_ref.setdefault(kind, []).extend(semantic.similarities(hyp, ref))
        mt = card_outputs(ds["id"])
        if mt:
            idx = [by_id[i] for i, _ in mt]
            hyp = [normalise(p) for _, p in mt]
            kinds_src.setdefault("mt", []).extend(semantic.similarities([src[i] for i in idx], hyp))
            kinds_ref.setdefault("mt", []).extend(semantic.similarities(hyp, [ref[i] for i in idx]))
        s_true = semantic.similarities(src, ref)
        s_wrong = semantic.similarities(src, ref[1:] + ref[:1])
        lower += sum(w <= t - MARGIN for t, w in zip(s_true, s_wrong))
        total += len(ref)
        print(f"{ds['id']}: {len(ref)} entries")
    head = "| hypothesis | n | p1 | p5 | p25 | p50 | p75 | p95 | share below {t} |\n| --- |" + " --- |" * 8
    print("\nsource–hypothesis similarity (hallucination detector)\n")
    print(head.format(t=semantic.HALLUCINATION_BELOW))
    for kind in ("human", "mt", "wrong", "shuffled", "echo", "empty"):
        print(row(kind, kinds_src.get(kind, []), semantic.HALLUCINATION_BELOW))
    print("\nhypothesis–reference similarity (semantic score, MISMATCH verdict)\n")
    print(head.format(t=semantic.MISMATCH_BELOW))
    for kind in ("human", "mt", "wrong", "shuffled", "echo", "empty"):
        print(row(kind, kinds_ref.get(kind, []), semantic.MISMATCH_BELOW))
    print(f"\nwrong sentence ≥ {MARGIN} below the human reference (source–hypothesis): {lower}/{total} = "
          f"{lower / total:.3f}")


if __name__ == "__main__":
    main()
