"""Site build scaling benchmark (issue 7; issue 35 item 5): build the leaderboard site from N generated run cards for
each size asked (default 100 and 1,000) and print, per size: published bytes per card, build time per card with its
phases (``BuildReport.seconds``), the build's peak memory, the largest page and the largest board page (HTML bytes), the
number of pages; then the marginal published bytes per added card, the incremental (persistent-cache) build times
when ``build_site`` accepts ``cache=``, ratios against the smallest size measured in the same run, and an
extrapolation to ``--estimate`` cards when that size is not run.

SYNTHETIC, FOR LOAD ONLY: the corpora and outputs below are generated word salad (never evaluation data, never
committed; ``--cards`` refuses a folder inside this checkout). Cards are scored by the real
:func:`mtboard.score.scoring.score_run` and sealed by :func:`mtboard.score.card.assemble_card` (via the tests'
``make_card``) so the site sees realistic cards. Each synthetic dataset has 355 development entries (as the real
355-entry cards of issue 35) in 7 domains, sources of 3–40 words (mean ≈ 12, as the committed corpora); cards are
spread over 5 datasets × 10 model names, one condition per card, so every card is its own board row (rows per board
= N / 5: 2,000 rows at 10,000 cards).

Run (one command, from the checkout root; generation costs ~0.6 s of CPU per card, once, then the tree is re-used;
a validated build ~1.3 s of CPU per card on main, 2026-12-03):

    PYTHONPATH=$PWD .venv/bin/python bench/site_scale.py --sizes 100 1000 --cards /tmp/mtboard-cards

Options: ``--sizes N ...`` (any list, built in increasing order); ``--cards DIR`` keeps the generated tree (cards
``0..M-1`` for ``M = max(sizes) + add``) with a ``manifest.json`` (seed, entries per card, n); a later run re-uses it,
generates only the missing cards, and refuses a folder made with another seed or entry count (default: a temporary
folder, removed at the end). ``--add K`` (default 6): cards added to an N-card site for the marginal-bytes figure
(0: skip), at the sizes ``--add-at N ...`` (default: the largest); with a cache, the add-one-card build there too.
``--estimate M``: extrapolate bytes, build time and pages to M cards from the two largest sizes measured (printed as
"extrapolated"). ``--jobs J``: generation processes (default: all CPUs). ``--no-validate``: build
without the full submission validator (``mtboard build`` validates; default: validate). Each build runs in its own
child process (spawned), so peak memory (``ru_maxrss``) is that build's alone, and starts from empty output folders
(as the site workflow on a fresh checkout; only the cache folder is kept between builds). Each size is built twice:
first as a first deployment (no previous ledger: the changes page, ``data/changes.json`` and the Atom feed list
every row as new, ~1.7 KiB a card), then again given the first build's ``data/ledger.json`` as ``previous``, as the
site workflow gives ``mtboard build --previous`` the deployed ledger (with a cache this is the warm rebuild); the
slope, the ``--add`` step and the extrapolated size read the second, the site as it stands between deployments (the
size line prints both; the slope of the first builds is printed beside the other).

Acceptance figures of issue 35 it prints: marginal bytes per added card (≤ 80 KiB: the slope between two sizes of
the same run, e.g. ``--sizes 1000 1400`` (80 rows more per board: one later page of ``BOARD_MORE_ROWS`` rows per
board view, the continuation-page steps amortised), and the ``--add`` step, which lands on a page boundary at
1,000 cards = 200 rows per board = 40 + 2 × 80), bytes at
10,000 cards (≤ 1 GB, measured or extrapolated), largest board page (≤ 250 KB HTML at 2,000 rows per board), warm
full build, add-one-card time (≤ 30 s at 1,000 cards with a warm cache).
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing as mp
import os
import queue
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mtboard.core.documents import card_bytes, write_corpus  # noqa: E402
from mtboard.core.schema import Corpus  # noqa: E402
from mtboard.site.boardpages import BOARD_MORE_ROWS, BOARD_PAGE_ROWS  # noqa: E402
from mtboard.validate import canonical_relpath  # noqa: E402

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
         "phi chi psi omega").split()
DOMAINS = ["tech", "legal", "medical", "news", "ui", "literary", "gov"]
N_DATASETS, N_MODELS, N_ENTRIES = 5, 10, 355
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
KIB = 1024


# ---------------------------------------------------------------- synthetic tree (generation, manifest, re-use)

def synthetic_corpus(k: int, seed: int, n_entries: int) -> Corpus:
    """Dataset ``k`` of the synthetic tree: deterministic in (k, seed, n_entries), so every worker rebuilds it."""
    rng = random.Random(f"{seed}:corpus:{k}")
    entries = []
    for i in range(1, n_entries + 1):
        src = " ".join(rng.choice(WORDS) for _ in range(min(40, max(3, int(rng.gauss(12, 6))))))
        ref = " ".join(w[::-1] for w in src.split())
        entries.append({"id": i, "source": src, "reference": ref, "segment": "development",
                        "domain": DOMAINS[i % len(DOMAINS)]})
    return Corpus.model_validate({"dataset": {
        "id": f"synthetic-load-{k}", "version": "1.0.0", "language_pair": "XX→YY", "source_language": "en",
        "target_language": "es", "created": "2026-11-29", "license": "CC0-1.0",
        "provenance": ["SYNTHETIC word salad for load tests (bench/site_scale.py); not evaluation data"]},
        "entries": entries})


def perturb(ref: str, quality: float, rng: random.Random) -> str | None:
    if rng.random() > 0.97:
        return None
    return " ".join(w if rng.random() < quality else rng.choice(WORDS) for w in ref.split())


_WORKER: dict = {}


def _worker_init(root: str, seed: int, n_entries: int, shas: list[str], datasets: int = N_DATASETS) -> None:
    _WORKER.update(root=Path(root), seed=seed,
                   corpora=[(synthetic_corpus(k, seed, n_entries), shas[k]) for k in range(datasets)])


def _make_one(i: int) -> tuple[int, str, float]:
    """Card ``i`` (deterministic in seed and i alone, so a tree can be extended later); returns (i, its relpath, the
    CPU seconds this process spent on it)."""
    from test_site_cards import make_card  # noqa: PLC0415  (tests/ helper: the real scoring and sealing)

    cpu0 = time.process_time()
    rng = random.Random(f"{_WORKER['seed']}:card:{i}")
    datasets = len(_WORKER["corpora"])
    corpus, sha = _WORKER["corpora"][i % datasets]
    model = f"synthetic/model-{(i // datasets) % N_MODELS}"
    quality = 0.3 + 0.6 * rng.random()
    outputs = {e.id: perturb(e.reference, quality, rng) for e in corpus.entries}
    card = make_card(corpus, sha, model_slug=model, outputs=outputs, condition=f"sweep-{i}", run_seed=i + 1,
                     cost_per_entry=round(rng.uniform(0.0001, 0.01), 6), latency=rng.uniform(0.1, 2.0))
    rel = canonical_relpath(card)
    path = _WORKER["root"] / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(card_bytes(card))
    return i, rel, time.process_time() - cpu0


def make_tree(root: Path, n: int, *, datasets: int = N_DATASETS, entries: int = 40, seed: int = 0) -> list[Path]:
    """A small synthetic tree in this process, without a manifest (tests: e.g. ``datasets=1`` for one board of ``n``
    rows, each card its own method; issue 35 item 2's 2,000-row board-page test): ``root/corpora`` and
    ``root/submissions``, cards as :func:`ensure_tree` makes them (same corpora and draws for the same seed). Returns
    the cards' paths in the order made."""
    shas = [write_corpus(synthetic_corpus(k, seed, entries), root / "corpora" / f"synthetic-load-{k}.json")
            for k in range(datasets)]
    _worker_init(str(root), seed, entries, shas, datasets)
    return [root / _make_one(i)[1] for i in range(n)]


def ensure_tree(root: Path, n: int, seed: int, n_entries: int, jobs: int) -> tuple[list[str], dict]:
    """Make ``root`` hold cards 0..n-1 (generating only the missing ones, ``jobs`` processes); returns (the cards'
    relpaths under ``root``, ``submissions/<dataset>/<file>``, in index order; generation facts). Raises SystemExit
    for a folder made with another seed, entry count or format, or a non-empty folder without a manifest."""
    root.mkdir(parents=True, exist_ok=True)
    mf = root / MANIFEST
    if mf.exists():
        m = json.loads(mf.read_text())
        want = {"format": MANIFEST_FORMAT, "seed": seed, "entries": n_entries, "datasets": N_DATASETS,
                "models": N_MODELS}
        got = {k: m.get(k) for k in want}
        if got != want:
            raise SystemExit(f"--cards {root}: made with {got}, this run needs {want}; choose another folder")
        if len(m["files"]) != m["n"]:
            raise SystemExit(f"--cards {root}: manifest lists {len(m['files'])} files for n={m['n']}; delete it")
    elif any(root.iterdir()):
        raise SystemExit(f"--cards {root}: not empty and has no {MANIFEST}; choose an empty or new folder")
    else:
        shas = [write_corpus(synthetic_corpus(k, seed, n_entries), root / "corpora" / f"synthetic-load-{k}.json")
                for k in range(N_DATASETS)]
        m = {"format": MANIFEST_FORMAT, "note": "SYNTHETIC word salad for load tests (bench/site_scale.py); never "
             "commit", "seed": seed, "entries": n_entries, "datasets": N_DATASETS, "models": N_MODELS, "n": 0,
             "corpus_sha256": shas, "files": [], "generation": []}
        _write_manifest(mf, m)
    have = m["n"]
    facts = {"reused": min(have, n), "generated": max(0, n - have), "seconds": 0.0, "jobs": jobs}
    if n <= have:
        return m["files"][:n], facts
    todo = range(have, n)
    t0 = time.perf_counter()
    cpu = 0.0
    rels: dict[int, str] = {}
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs, _worker_init, (str(root), seed, n_entries, m["corpus_sha256"])) as pool:
        for k, (i, rel, spent) in enumerate(pool.imap_unordered(_make_one, todo, chunksize=4), 1):
            rels[i] = rel
            cpu += spent
            if k % max(1, len(todo) // 10) == 0 or k == len(todo):
                print(f"  generated {k}/{len(todo)} cards ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        pool.close()
        pool.join()
    facts["seconds"] = time.perf_counter() - t0
    facts["cpu_seconds"] = cpu
    m["files"] += [rels[i] for i in todo]
    m["n"] = n
    m["generation"].append({"from": have, "to": n, "seconds": round(facts["seconds"], 1), "jobs": jobs})
    _write_manifest(mf, m)
    return m["files"][:n], facts


def _write_manifest(path: Path, m: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(m, indent=1) + "\n")
    tmp.replace(path)


def link_cards(tree: Path, rels: list[str], dest: Path) -> None:
    """Make ``dest`` (a site work folder) hold exactly the cards ``rels`` (``submissions/...``) of ``tree``: hard
    links (copies across file systems), added or removed to match."""
    want = set(rels)
    for p in list((dest / "submissions").rglob("*.json")) if dest.exists() else []:
        if p.relative_to(dest).as_posix() not in want:
            p.unlink()
    for rel in rels:
        target = dest / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(tree / rel, target)
        except OSError:
            shutil.copyfile(tree / rel, target)


# ---------------------------------------------------------------- one build, in a child process

def cache_supported() -> bool:
    """Whether :func:`mtboard.site.build_site` takes ``cache=`` (issue 35 item 3; added in parallel to this bench)."""
    return _takes("cache")


def _takes(name: str) -> bool:
    """Whether :func:`mtboard.site.build_site` of the checkout measured takes the keyword ``name``."""
    from mtboard.site import build_site  # noqa: PLC0415

    return name in inspect.signature(build_site).parameters


def _build_child(kwargs: dict, q) -> None:  # noqa: ANN001
    from mtboard.site import build_site  # noqa: PLC0415

    t0 = time.perf_counter()
    try:
        report = build_site(**kwargs)
    except BaseException:  # the parent waits on the queue: always answer
        import traceback  # noqa: PLC0415

        q.put({"error": traceback.format_exc()})
        raise
    wall = time.perf_counter() - t0
    q.put({"wall_s": wall, "phases": dict(report.seconds), "cards": report.cards, "rejected":
           [(r.path, r.problems[:3]) for r in report.rejected[:3]],
           "n_rejected": len(report.rejected), "pages": report.pages,
           "cache_hits": getattr(report, "cache_hits", None), "cache_misses": getattr(report, "cache_misses", None),
           "card_hits": getattr(report, "card_hits", None), "card_misses": getattr(report, "card_misses", None),
           "pages_reused": getattr(report, "pages_reused", None),
           "resample_hits": getattr(report, "resample_hits", None),
           "resample_misses": getattr(report, "resample_misses", None),
           "flip_hits": getattr(report, "flip_hits", None), "flip_misses": getattr(report, "flip_misses", None),
           "board_stats_hits": getattr(report, "board_stats_hits", None),
           "board_stats_misses": getattr(report, "board_stats_misses", None),
           "board_hits": getattr(report, "board_hits", None), "board_misses": getattr(report, "board_misses", None),
           "cache_pruned": getattr(report, "cache_pruned", None),
           "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * KIB,
           "maxrss_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * KIB,
           "cpu_s": sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                        for f in ("ru_utime", "ru_stime"))})


_ACTIVE: list = []  # the build child running now (ended with this process on SIGTERM)


def _on_term(signum: int, _frame) -> None:  # noqa: ANN001
    for p in _ACTIVE:
        p.terminate()
    raise SystemExit(128 + signum)  # runs main's cleanup of the scratch folders


def build(work: Path, corpora: Path, validate: bool, cache: Path | None, previous: Path | None = None) -> dict:
    """Build ``work/submissions`` into ``work/out`` (docs ``work/docs``) in a spawned child; returns its figures plus
    the published tree's (bytes, largest pages). Every build starts from empty ``out`` and ``docs`` folders, as the
    site workflow does on a fresh checkout: only ``cache`` is kept between builds. ``previous``: the ledger of the
    site as deployed before this build (``mtboard build --previous``, which the site workflow passes: the deployed
    ``data/ledger.json``), so the changes page, its JSON and its feed list this build's differences (None: every row
    is new, as on a first deployment)."""
    for folder in (work / "out", work / "docs"):
        shutil.rmtree(folder, ignore_errors=True)
    kwargs = {"submissions": work / "submissions", "corpora": corpora, "out": work / "out", "docs": work / "docs",
              "validate": validate}
    if previous is not None:
        kwargs["previous"] = previous
    if cache is not None:
        kwargs["cache"] = cache
        if _takes("prune_cache"):  # what `mtboard build` does by default (the site workflow's build)
            kwargs["prune_cache"] = True
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_build_child, args=(kwargs, q))
    p.start()
    _ACTIVE.append(p)
    try:
        while True:  # a child killed outright (out of memory) never answers: watch it
            try:
                res = q.get(timeout=5)
                break
            except queue.Empty:
                if not p.is_alive():
                    res = {"error": "no answer (killed?)"}
                    break
        p.join()
    finally:
        _ACTIVE.remove(p)
    if "error" in res or p.exitcode != 0:
        raise SystemExit(f"build child exited {p.exitcode}: {res.get('error', '')}")
    res.update(tree_figures(work / "out"))
    return res


def tree_figures(out: Path) -> dict:
    """Bytes of every file under ``out``; the largest HTML page overall and the largest under ``leaderboards/`` (the
    board pages, continuation pages included): (bytes, relpath)."""
    total, largest, board, html = 0, (0, ""), (0, ""), 0
    for p in out.rglob("*"):
        if not p.is_file():
            continue
        size = p.stat().st_size
        total += size
        if p.suffix == ".html":
            html += 1
            rel = p.relative_to(out).as_posix()
            largest = max(largest, (size, rel))
            if rel.startswith("leaderboards/"):
                board = max(board, (size, rel))
    return {"bytes": total, "largest": largest, "board": board, "html_files": html}


# ---------------------------------------------------------------- measurement per size

def measure(n: int, tree: Path, rels: list[str], add: int, validate: bool, use_cache: bool, scratch: Path) -> dict:
    work = scratch / f"site-{n}"
    cache = scratch / f"cache-{n}" if use_cache else None
    link_cards(tree, rels[:n], work)
    r: dict = {"n": n}
    r["cold"] = build(work, tree / "corpora", validate, cache)
    if r["cold"]["cards"] != n or r["cold"]["n_rejected"]:
        raise SystemExit(f"{n} cards: built {r['cold']['cards']}, rejected {r['cold']['rejected']}")
    print_size_line(r)
    deployed = scratch / f"deployed-ledger-{n}.json"  # what the site workflow downloads as --previous
    shutil.copyfile(work / "out" / "data" / "ledger.json", deployed)
    # the same cards again, given the first build's ledger as deployed: the site as it stands between deployments
    # (its changes page lists no row as new); the slope and the marginal bytes read these sizes
    r["deployed"] = build(work, tree / "corpora", validate, cache, previous=deployed)
    what = "warm full rebuild (cache kept)" if use_cache else "rebuild"
    print(f"       {what}, previous ledger given: {_phases(r['deployed'])}")
    print(f"       site as deployed {r['deployed']['bytes'] / 1e6:,.1f} MB = "
          f"{r['deployed']['bytes'] / n / KIB:,.1f} KiB/card (the first build's changes page, JSON and feed list "
          f"all {n} rows as new: {(r['cold']['bytes'] - r['deployed']['bytes']) / KIB:,.0f} KiB more)")
    if use_cache:
        r["warm"] = r["deployed"]
    if add and use_cache:
        link_cards(tree, rels[:n + 1], work)
        r["add_one"] = build(work, tree / "corpora", validate, cache, previous=deployed)
        print(f"       add 1 card to {n} (warm cache): {_phases(r['add_one'])}")
    elif add:
        print("       incremental: no cache support (build_site takes no cache=)")
    if add:
        link_cards(tree, rels[:n + add], work)
        r["added"] = build(work, tree / "corpora", validate, cache, previous=deployed)
        print(f"       rebuild after adding {add} card(s) to {n}: {_phases(r['added'])}")
        r["marginal"] = (r["added"]["bytes"] - r["deployed"]["bytes"]) / add
        verdict = "OK" if r["marginal"] <= 80 * KIB else "OVER 80 KiB"
        print(f"       marginal published bytes per added card ({n} -> {n + add}): {r['marginal'] / KIB:,.1f} KiB "
              f"(issue 35 target <= 80 KiB: {verdict}; one step — {BOARD_PAGE_ROWS} rows per board and then every "
              f"{BOARD_MORE_ROWS} more, every view of a board gets a continuation page; the slope below amortises the "
              "steps)")
    shutil.rmtree(work, ignore_errors=True)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    return r


def _phases(b: dict) -> str:
    ph = " ".join(f"{k}={v:.1f}s" for k, v in b["phases"].items())
    hits = "" if b.get("cache_hits") is None else f", cache {b['cache_hits']} hit(s) {b['cache_misses']} miss(es)"
    hits += "" if b.get("card_hits") is None else \
        f", cards {b['card_hits']} from their stored summary {b['card_misses']} parsed"
    hits += "" if b.get("pages_reused") is None else f", {b['pages_reused']} page(s) reused"
    hits += "" if b.get("resample_hits") is None else \
        f", resamples {b['resample_hits']} hit(s) {b['resample_misses']} miss(es)"
    hits += "" if b.get("flip_hits") is None else f", flips {b['flip_hits']} hit(s) {b['flip_misses']} miss(es)"
    hits += "" if b.get("board_stats_hits") is None else \
        f", boards' statistics {b['board_stats_hits']} read {b['board_stats_misses']} computed"
    hits += "" if b.get("board_hits") is None else \
        f", boards' run pages {b['board_hits']} reused {b['board_misses']} rendered"
    hits += "" if b.get("cache_pruned") is None else f", {b['cache_pruned']} unused cache entries removed"
    return f"{b['wall_s']:.1f} s wall, {b['cpu_s']:.1f} s CPU ({ph}), peak {b['maxrss'] / 2**20:,.0f} MiB{hits}"


def _workers(b: dict) -> str:
    w = b.get("maxrss_children") or 0  # forked workers start at the parent's size: shown only when they grew past it
    return f" (largest worker process {w / 2**20:,.0f} MiB)" if w > b["maxrss"] else ""


def print_size_line(r: dict) -> None:
    n, b = r["n"], r["cold"]
    print(f"{n:>6} cards: build {b['wall_s']:8.1f} s = {b['wall_s'] / n * 1000:7.1f} ms/card wall, "
          f"{b['cpu_s'] / n * 1000:7.1f} ms/card CPU "
          f"({' '.join(f'{k}={v:.1f}s' for k, v in b['phases'].items())}); peak memory {b['maxrss'] / 2**20:,.0f} MiB"
          f"{_workers(b)}")
    print(f"       site {b['bytes'] / 1e6:,.1f} MB = {b['bytes'] / n / KIB:,.1f} KiB/card; {b['pages']} pages "
          f"({b['html_files']} HTML files)")
    print(f"       largest page {b['largest'][1]}: {b['largest'][0] / KIB:,.1f} KiB; largest board page "
          f"{b['board'][1] or '-'}: {b['board'][0] / KIB:,.1f} KiB HTML at {-(-n // N_DATASETS)} rows per board "
          f"(target <= 250 KB at 2,000 rows)", flush=True)


def extrapolate(rows: list[dict], target: int) -> None:
    """To ``target`` cards: sizes (bytes of the site as deployed when measured, pages, largest board page, peak
    memory) linear in N through the two largest sizes measured (one size: proportional; never below the largest
    measured); times proportional to the per-card time at the largest size (wall times of small builds are too noisy
    on a shared machine for a slope)."""
    pts = sorted(rows, key=lambda r: r["n"])[-2:]
    big = pts[-1]

    def at(key) -> float:  # noqa: ANN001
        if len(pts) == 1:
            return key(big) * target / big["n"]
        (n0, y0), (n1, y1) = [(p["n"], key(p)) for p in pts]
        return max(key(big), y0 + (y1 - y0) * (target - n0) / (n1 - n0))

    def per_card(key) -> float:  # noqa: ANN001
        return key(big) / big["n"] * target

    src = " and ".join(str(p["n"]) for p in pts)
    b = at(lambda r: r.get("deployed", r["cold"])["bytes"])
    pages = at(lambda r: r["cold"]["pages"])
    board, mem = at(lambda r: r["cold"]["board"][0]), at(lambda r: r["cold"]["maxrss"])
    t, cpu = per_card(lambda r: r["cold"]["wall_s"]), per_card(lambda r: r["cold"]["cpu_s"])
    print(f"{target:>6} cards (extrapolated: sizes linear through {src}, times per card at {big['n']}): site "
          f"{b / 1e9:,.2f} GB = {b / target / KIB:,.1f} KiB/card (target <= 1 GB: {'OK' if b <= 1e9 else 'OVER'}), "
          f"cold build {t / 60:,.1f} min wall ({cpu / 60:,.1f} min CPU), ~{pages:,.0f} pages, peak memory "
          f"~{mem / 2**30:,.1f} GiB, largest board page ~{board / KIB:,.0f} KiB at {-(-target // N_DATASETS)} rows "
          "per board")
    if "warm" in big:
        w, wc = per_card(lambda r: r["warm"]["wall_s"]), per_card(lambda r: r["warm"]["cpu_s"])
        print(f"       warm full build (extrapolated): {w / 60:,.1f} min wall, {wc / 60:,.1f} min CPU "
              "(target <= 15 min)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--cards", type=Path, help="keep / re-use the generated tree here (outside this checkout)")
    ap.add_argument("--add", type=int, default=6, help="cards added for the marginal-bytes figure (0: skip)")
    ap.add_argument("--add-at", type=int, nargs="+", help="sizes that get the add/incremental builds (default: the "
                    "largest)")
    ap.add_argument("--estimate", type=int, help="extrapolate to this many cards when not measured")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="generation processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-validate", dest="validate", action="store_false")
    ap.add_argument("--generate-only", action="store_true", help="make the tree and stop")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, _on_term)
    sizes = sorted(set(a.sizes))
    if a.cards and a.cards.resolve().is_relative_to(ROOT):
        raise SystemExit(f"--cards {a.cards}: inside the checkout; synthetic cards are never committed")
    tmp_cards = None if a.cards else Path(tempfile.mkdtemp(prefix="mtboard-cards-"))
    tree = a.cards or tmp_cards
    scratch = Path(tempfile.mkdtemp(prefix="mtboard-scale-"))
    try:
        need = max(sizes) + max(0, a.add)
        if a.add_at and not set(a.add_at) <= set(sizes):
            raise SystemExit(f"--add-at {a.add_at}: not among --sizes {sizes}")
        rels, gen = ensure_tree(tree, need, a.seed, N_ENTRIES, max(1, a.jobs))
        print(f"SYNTHETIC {N_ENTRIES}-entry cards, for load only (tree {tree}: {gen['reused']} re-used, "
              f"{gen['generated']} generated)")
        if gen["generated"]:
            print(f"generation: {gen['seconds']:.0f} s wall for {gen['generated']} cards with {gen['jobs']} processes"
                  f" = {gen['seconds'] / gen['generated'] * 1000:,.0f} ms/card wall, "
                  f"{gen['cpu_seconds'] / gen['generated'] * 1000:,.0f} ms/card CPU (first card per process includes "
                  "imports)")
        if a.generate_only:
            return
        use_cache = cache_supported()
        print(f"build: validate={a.validate}; persistent cache: {'yes (cache=)' if use_cache else 'no cache support'}")
        add_at = set(a.add_at or sizes[-1:])
        rows = [measure(n, tree, rels, a.add if n in add_at else 0, a.validate, use_cache, scratch) for n in sizes]
        base = rows[0]
        for r in rows[1:]:
            tr = (r["cold"]["wall_s"] / r["n"]) / (base["cold"]["wall_s"] / base["n"])
            cr = (r["cold"]["cpu_s"] / r["n"]) / (base["cold"]["cpu_s"] / base["n"])
            sr = (r["cold"]["bytes"] / r["n"]) / (base["cold"]["bytes"] / base["n"])
            mr = r["cold"]["maxrss"] / base["cold"]["maxrss"]
            print(f"ratio {r['n']} vs {base['n']} (same run): time per card {tr:.2f} (CPU {cr:.2f}), bytes per card "
                  f"{sr:.2f} "
                  f"(target <= 1.5: {'OK' if tr <= 1.5 and sr <= 1.5 else 'OVER'}), peak memory {mr:.2f}")
        for lo, hi in zip(rows, rows[1:]):  # the slope: continuation pages, index pages and static pair pages come
            # in steps (a board view passing BOARD_PAGE_ROWS + k × BOARD_MORE_ROWS rows gets a page); over a range of
            # sizes the steps are amortised, as they are for a board that grows (issue 35 acceptance)
            slope = (hi["deployed"]["bytes"] - lo["deployed"]["bytes"]) / (hi["n"] - lo["n"])
            first = (hi["cold"]["bytes"] - lo["cold"]["bytes"]) / (hi["n"] - lo["n"])
            print(f"marginal published bytes per card over {lo['n']} -> {hi['n']} cards (slope of the sites as "
                  f"deployed, same run): {slope / KIB:,.1f} KiB (issue 35 target <= 80 KiB: "
                  f"{'OK' if slope <= 80 * KIB else 'OVER'}; first builds, every row new on the changes page: "
                  f"{first / KIB:,.1f} KiB)")
        if a.estimate and a.estimate not in sizes:
            extrapolate(rows, a.estimate)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if tmp_cards:
            shutil.rmtree(tmp_cards, ignore_errors=True)


if __name__ == "__main__":
    main()
