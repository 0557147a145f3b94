"""Scoring speed: time ``mtboard.score.scoring.score_run`` on 10,000 real segments against sacrebleu's bare corpus chrF++ +
BLEU on the same data, measured in the same run. Target: ratio ≤ 1.5 (issue 4).

Data: the committed corpora (corpora/*.json, human references). Hypotheses are real machine translations made by
Apertium (one batch process per corpus) for the pairs it has (en→es, en→ca); without Apertium, the reference of the
next entry of the same corpus stands in (real text of realistic length, poor quality). Corpora are repeated up to
``--segments``; each corpus is scored as one run with its own target language, as the runner does.

Usage::

    .venv/bin/python bench/scoring_speed.py [--segments 10000] [--repeats 3]

Prints wall and CPU seconds of both sides (median of the repeats, interleaved) and the wall-time ratio.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

from mtboard.score import scoring  # noqa: E402
from mtboard.core.languages import bleu_tokenizer  # noqa: E402
from mtboard.score.metrics.pool import plan_chunks  # noqa: E402
from mtboard.score.metrics.ter import TER_MAX_WORDS  # noqa: E402
from mtboard.core.schema import Entry, TranslationRecord  # noqa: E402

APERTIUM_MODES = {("en", "es"): "eng-spa", ("en", "ca"): "eng-cat"}


def apertium(mode: str, sources: list[str]) -> list[str] | None:
    """Translate with one Apertium process (blank-line separated), unknown-word marks kept as the apertium backend
    records them; None when Apertium or the mode is missing."""
    if shutil.which("apertium") is None:
        return None
    text = "\n\n".join(" ".join(s.split()) for s in sources) + "\n"
    proc = subprocess.run(["apertium", mode], input=text, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None
    out = [" ".join(p.split()) for p in proc.stdout.strip().split("\n\n")]
    return out if len(out) == len(sources) else None


def load_groups(n_segments: int) -> tuple[list[dict], str]:
    corpora = []
    for path in sorted(glob.glob(str(ROOT / "corpora" / "*.json"))):
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        ds = doc["dataset"]
        corpora.append((Path(path).name, ds["source_language"], ds["target_language"], doc["entries"]))
    if not corpora:
        sys.exit("no corpora/*.json to benchmark on")
    groups, kind = [], "apertium"
    for name, src, tgt, entries in corpora:
        mode = APERTIUM_MODES.get((src, tgt))
        if mode is None:
            continue
        hyps = apertium(mode, [e["source"] for e in entries])
        if hyps is not None:
            groups.append({"name": name, "src": src, "tgt": tgt, "entries": entries, "hyps": hyps})
    if not groups:  # no Apertium: next entry's reference as the hypothesis, every corpus
        kind = "rotated references"
        for name, src, tgt, entries in corpora:
            refs = [e["reference"] for e in entries]
            groups.append({"name": name, "src": src, "tgt": tgt, "entries": entries, "hyps": refs[1:] + refs[:1]})
    total = sum(len(g["entries"]) for g in groups)
    done = 0
    for i, g in enumerate(groups):  # repeat each corpus to its share of n_segments
        share = n_segments - done if i == len(groups) - 1 else round(n_segments * len(g["entries"]) / total)
        reps = -(-share // len(g["entries"]))
        g["entries"] = (g["entries"] * reps)[:share]
        g["hyps"] = (g["hyps"] * reps)[:share]
        done += share
    return groups, kind


def cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cpu_main() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--segments", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    groups, kind = load_groups(args.segments)
    runs = []
    for g in groups:
        entries = [Entry(id=i, source=e["source"], reference=e["reference"], domain=e.get("domain"),
                         difficulty=e.get("difficulty"), provenance=e.get("provenance"))
                   for i, e in enumerate(g["entries"])]
        records = [TranslationRecord(entry_id=i, raw_predicted=h, latency_s=0.1) for i, h in enumerate(g["hyps"])]
        runs.append((g, entries, records))
    n = sum(len(r[1]) for r in runs)
    print(f"{n} segments from {', '.join(g['name'] for g, _, _ in runs)}; hypotheses: {kind}; "
          f"CPUs: {len(os.sched_getaffinity(0))}")

    def bare() -> None:
        for g, _, _ in runs:
            refs = [e["reference"] for e in g["entries"]]
            CHRF(word_order=2).corpus_score(g["hyps"], [refs])
            BLEU(tokenize=bleu_tokenizer(g["tgt"])).corpus_score(g["hyps"], [refs])

    last = {}

    def ours() -> None:
        for g, entries, records in runs:
            last[g["name"]] = scoring.score_run(entries, records, source_language=g["src"], target_language=g["tgt"],
                                                elapsed_seconds=60.0, strip_unknown_marks=kind == "apertium")[0]

    base_w, base_c, our_w, our_c, our_main = [], [], [], [], []
    for _ in range(args.repeats):
        for fn, w, c in ((bare, base_w, base_c), (ours, our_w, our_c)):
            c0, m0, t0 = cpu(), cpu_main(), time.perf_counter()
            fn()
            w.append(time.perf_counter() - t0)
            c.append(cpu() - c0)
            if fn is ours:
                our_main.append(cpu_main() - m0)
    bw, bc, ow, oc, om = (statistics.median(x) for x in (base_w, base_c, our_w, our_c, our_main))
    for name, s in last.items():
        print(f"  {name}: chrF++ {s.chrf_plus_plus:.2f}, BLEU {s.bleu:.2f}, TER {s.ter:.2f} "
              f"(coverage {s.ter_coverage:.3f}), composite {s.composite:.3f} ({s.composite_profile})")
    print(f"sacrebleu bare corpus chrF++ + BLEU: wall {bw:.2f} s, CPU {bc:.2f} s (median of {args.repeats})")
    print(f"mtboard score_run (checks, chrF++, BLEU, TER ≤ {TER_MAX_WORDS} words, stats, bootstrap, FST, "
          f"breakdowns): wall {ow:.2f} s, CPU {oc:.2f} s (main process {om:.2f} s, pool workers {oc - om:.2f} s)")
    try:
        load = os.getloadavg()[0]
        print(f"load average {load:.1f} on {os.cpu_count()} CPUs" + (" — machine busy: wall ratios overstate the cost "
                                                                    "of the parallel part" if load > 1.5 else ""))
    except OSError:
        pass
    chunks = len(plan_chunks(max(len(r[1]) for r in runs)))
    if chunks > 1:  # this process scores one chunk itself while chunks − 1 pool workers score the others
        est = max(om, (oc - om) / (chunks - 1)) / bc
        print(f"idle-machine estimate: max(main CPU, pool CPU / {chunks - 1} workers) / sacrebleu CPU = {est:.2f}")
    print(f"ratio (wall): {ow / bw:.2f}  (CPU: {oc / bc:.2f}; best-of wall: {min(our_w) / min(base_w):.2f}) "
          f"target ≤ 1.5")


if __name__ == "__main__":
    main()
