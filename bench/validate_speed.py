"""Benchmark (issue 6): validating N run cards of 1,000 entries vs sacrebleu scoring the same segments.

    .venv/bin/python bench/validate_speed.py [--cards 5] [--entries 1000] [--repeat 3]

Setup (in a temporary folder, nothing written to the repository): a 1,000-entry corpus made of the real development
entries of corpora/mtb-en-es-dev.json cycled with fresh ids (the published corpus has 355; the texts stay human
translations, only repeated), translated once by Apertium through the real runner (`mtboard run` code path), then N
copies of the card with fresh run_ids, re-sealed, at their canonical paths under submissions/.

Measured in the same run, best of ``--repeat``:
* validator: :func:`mtboard.validate.validate_paths` over submissions/ with a fresh context (reads and parses the
  corpus, every check on every card, FST acceptance with lt-proc included, repository checks);
* baseline: sacrebleu alone scoring the same segments as the cards report them — corpus chrF++ (word_order=2),
  corpus BLEU (the card's tokenizer), corpus TER over the segments the card covers (TER's length cap), plus the
  per-segment chrF++, BLEU and TER every card carries (``chrf_score``, ``bleu_score``, ``ter_score``).

Prints both times and the ratio validator / baseline (target ≤ 1.2).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mtboard.core import canonical  # noqa: E402
from mtboard.core.documents import load_corpus, write_corpus  # noqa: E402
from mtboard.core.schema import Corpus, DatasetInfo  # noqa: E402


def build(tmp: Path, entries: int, cards: int) -> tuple[Path, list[Path]]:
    from mtboard.run import runner
    from mtboard.core.documents import loads_card
    from mtboard.validate import canonical_relpath

    src, _ = load_corpus(ROOT / "corpora" / "mtb-en-es-dev.json")
    dev = src.segment("development")
    picked = [dev[i % len(dev)].model_copy(update={"id": i + 1}) for i in range(entries)]
    info = DatasetInfo.model_validate({**src.dataset.model_dump(mode="json"), "id": "mtb-en-es-bench",
                                       "description": "benchmark only: development entries cycled to 1,000"})
    repo = tmp / "repo"
    corpus_path = repo / "corpora" / "mtb-en-es-bench.json"
    corpus_path.parent.mkdir(parents=True)
    write_corpus(Corpus(dataset=info, entries=picked), corpus_path)
    outcome = runner.run(runner.RunSettings(corpus_path=corpus_path, method="apertium:eng-spa",
                                            work_dir=tmp / "work"))
    base = json.loads((tmp / "work" / "card.json").read_bytes())
    paths = []
    for _ in range(cards):
        data = dict(base, run_id=str(uuid.uuid4()))
        data["run_card_hash"] = canonical.run_card_hash(data)
        raw = canonical.canonical_bytes(data) + b"\n"
        dest = repo / canonical_relpath(loads_card(raw, "bench"))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(raw)
        paths.append(dest)
    del outcome
    return repo, paths


def _cpu() -> float:
    """CPU seconds of this process and its finished children (lt-proc), user + system."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def time_validator(repo: Path) -> tuple[float, float]:
    from mtboard.validate import make_context, validate_paths

    t0, c0 = time.perf_counter(), _cpu()
    report = validate_paths(None, make_context(repo))
    dt, dc = time.perf_counter() - t0, _cpu() - c0
    if not report.ok:
        from mtboard.validate import render_text

        raise SystemExit("benchmark cards do not validate:\n" + render_text(report))
    return dt, dc


def time_sacrebleu(paths: list[Path]) -> tuple[float, float]:
    from sacrebleu.metrics import BLEU, CHRF, TER

    cards = [json.loads(p.read_bytes()) for p in paths]  # parsing is not counted
    t0, c0 = time.perf_counter(), _cpu()
    for card in cards:
        hyps = [r["predicted"] for r in card["results"]]
        refs = [r["expected"] for r in card["results"]]
        chrf = CHRF(word_order=2)
        bleu = BLEU()
        sbleu = BLEU(effective_order=True)
        chrf.corpus_score(hyps, [refs])
        bleu.corpus_score(hyps, [refs])
        covered = [(h, r) for h, r, res in zip(hyps, refs, card["results"]) if res["stats"]["ter"] is not None]
        ter = TER()
        ter.corpus_score([h for h, _ in covered], [[r for _, r in covered]])
        for h, r in zip(hyps, refs):
            chrf.sentence_score(h, [r])
            sbleu.sentence_score(h, [r])
        for h, r in covered:
            ter.sentence_score(h, [r])
    return time.perf_counter() - t0, _cpu() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cards", type=int, default=5)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mtboard-bench-validate-"))
    try:
        repo, paths = build(tmp, args.entries, args.cards)
        v, b = [], []
        for _ in range(args.repeat):  # interleaved, so background load affects both sides alike
            v.append(time_validator(repo))
            b.append(time_sacrebleu(paths))
        print(f"cards: {args.cards} x {args.entries} entries (Apertium eng-spa, real text); best of {args.repeat}")
        for label, xs in (("validator (all checks, recomputation and lt-proc included)", v),
                          ("sacrebleu baseline (corpus + per-segment chrF++/BLEU/TER)", b)):
            print(f"{label}: wall {min(x[0] for x in xs):.3f} s, CPU {min(x[1] for x in xs):.3f} s")
        wall = min(x[0] for x in v) / min(x[0] for x in b)
        cpu = min(x[1] for x in v) / min(x[1] for x in b)
        print(f"ratio validator / sacrebleu: wall {wall:.2f}, CPU {cpu:.2f} "
              f"(target <= 1.20 on CPU time, robust to other load: {'met' if cpu <= 1.2 else 'NOT met'})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
