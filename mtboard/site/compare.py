"""Comparing two runs of one leaderboard: the paired difference of each metric with its 95 % CI and p-value,
per-domain deltas, segment wins / ties / losses, a one-sentence verdict and the segment-by-segment table
(issue 12 item 3; design note "Compare").

Statistics come from the board's own paired bootstrap, never a second one: the main view's shared resamples
(:func:`mtboard.score.metrics.bootstrap.resample_counts` with the view seed :func:`mtboard.score.stats.view_seed` and the same
resample count), the composite resamples the board ranks on (``Row.boot``) and the chrF++ resamples of the same
counts (:func:`mtboard.score.metrics.bootstrap.chrf_resamples`, exact summed statistics; replicate cards: mean over their
runs, like the composite). For a pair (A, B):

* difference = A's score − B's score (replicate cards: replicate means, as the board shows them);
* 95 % CI = sacrebleu's percentile interval (:func:`mtboard.score.metrics.bootstrap.percentile_interval`) of the paired
  resampled differences ``boot_A − boot_B``;
* p = :func:`mtboard.score.stats.paired_p_value` (two-sided, normal approximation; *uncorrected*: this is one chosen pair;
  the board's all-pairs matrix is Holm-corrected);
* wins / ties / losses: entries where A's sentence chrF++ (:func:`mtboard.ledger.tables.sentence_chrf`, failures 0)
  beats B's by at least :data:`TIE_CHRF` points, where they differ by less, and where B's wins.

What is precomputed (design: Python computes every statistic, JS only joins; sizes: issue 35 item 1): per board one
``data/pairs/<board>.json`` (the runs' summary lines and the board's entry ids — no corpus texts, no fingerprints),
the statistics of every pair of runs at most :data:`PAIR_SPAN` positions apart in chunks of :data:`PAIRS_CHUNK` rows
(``data/pairs/<board>.p<k>.json``, fetched when a pair of that chunk is opened, so no file a page loads grows past
~1 MB at 2,000 runs), the fingerprints deduplicated in ``data/pairs/<board>.fp.json`` (fetched for the fingerprint
difference), one compact gzip data file per run (:func:`rundata_path`) and the corpus texts once per dataset
(:func:`corpus_path`), and static compare pages for adjacent rows and each run's closest run (:func:`static_pairs`):
their summary is readable without JavaScript; their side-by-side table is built in the browser from those files.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.core import fmt
from mtboard.ledger.load import LoadedCard
from mtboard.ledger.tables import Leaderboard, Row, fingerprint_diff, method_name, scores_by_id
from mtboard.site import rundata

TIE_CHRF = 1.0
"""Two outputs whose sentence chrF++ differ by less than this (points, 0–100) are a tie."""
PAIR_SPAN = 20
"""pairs.json holds every pair of runs at most this many board positions apart (all pairs on boards of ≤ 21 runs)."""
SEGMENTS_PAGE = 25
"""Rows per page of the side-by-side table (JS pager)."""
STATIC_ROWS = 20
"""Rows of a board whose comparisons get a static page: adjacent pairs among the first 20 rows and each of those
rows' closest run — at most 2 × 20 pages per board, whatever its size (each ~23 KB with the site's chrome: one per
added card would be the compare side's whole budget, issue 35 item 1). Every other pair opens compare.html."""
PAIRS_CHUNK = 100
"""Rows of the board per pair-statistics chunk file: rows i in [k·100, k·100 + 100) go to ``<board>.p<k>.json``
(≤ 100 × PAIR_SPAN pairs, ~150 KB; issue 35 item 1)."""

METRICS = (("composite", "Composite", 3), ("chrf", "chrF++", 1))


@dataclass
class MetricDiff:
    key: str
    label: str
    digits: int
    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    p: float | None

    @property
    def text(self) -> str:
        """'+0.034 [+0.012, +0.055]' (signed, fixed decimals) or '—'."""
        if self.diff is None:
            return fmt.DASH
        d = self.digits
        ci = f" [{self.lo:+.{d}f}, {self.hi:+.{d}f}]" if self.lo is not None and self.hi is not None else ""
        return f"{self.diff:+.{d}f}{ci}"


@dataclass
class PairResult:
    a: Row
    b: Row
    metrics: list[MetricDiff]
    wins: int
    ties: int
    losses: int
    verdict: str
    domains: list[dict[str, Any]] = field(default_factory=list)
    fp_diff: list[tuple[str, str, str]] = field(default_factory=list)
    page: str = ""


def _runs_boot(card, ids: list[int], counts: np.ndarray) -> np.ndarray:
    """chrF++ resamples of a card over ``ids`` on the view's counts: the mean over its replicate runs."""
    runs = [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]
    boots = []
    for results in runs:
        by_id = {r.entry_id: r for r in results}
        boots.append(bootstrap.chrf_resamples([by_id[i].stats.chrf for i in ids], counts))
    return np.mean(boots, axis=0) if len(boots) > 1 else boots[0]


@dataclass
class BoardCompare:
    """The comparison data of one board: its rows (main view order), bootstraps and sentence scores."""

    lb: Leaderboard
    rows: list[Row]
    ids: list[int]
    boots: dict[str, np.ndarray]
    """metric key → (N, R) resampled scores in row order."""
    sentence: np.ndarray
    """(N, n) sentence chrF++ (failures 0) in row order × ``ids`` order."""
    mdd: float | None
    index: dict[str, int] = field(default_factory=dict)


def board_compare(lb: Leaderboard) -> BoardCompare | None:
    """Bootstraps of the board's method rows (:mod:`mtboard.ledger.methods`: one per fingerprint, its representative
    card; reference baselines included: same entries, same resamples), in board order — so a row is never compared
    with its own reproduction (issue 31 item 3). None when the board has fewer than two such rows."""
    view = lb.views[0] if lb.views else None
    if view is None or len(view.methods) < 2:
        return None
    rows = [m.rep for m in view.methods]
    ids = list(lb.ranked_ids)
    r = rows[0].boot.size if rows[0].boot is not None else bootstrap.BOOTSTRAP_RESAMPLES
    counts: list[np.ndarray] = []  # drawn only for a row without the view's chrF++ resamples

    def _counts() -> np.ndarray:
        if not counts:
            counts.append(bootstrap.resample_counts(len(ids), r, stats.view_seed(lb.dataset_id, lb.version,
                                                                                  lb.sha256, "*")))
        return counts[0]

    comp = np.stack([row.boot for row in rows])
    chrf = np.stack([row.chrf_mean_boot if row.chrf_mean_boot is not None else _runs_boot(row.lc.card, ids, _counts())
                     for row in rows])  # the main view's own chrF++ resamples: never computed twice (issue 35)
    sent = np.array([[scores[i] for i in ids] for scores in (scores_by_id(row.lc) for row in rows)],
                    dtype=np.float64)  # KeyError for an id a row lacks, as before
    return BoardCompare(lb, rows, ids, {"composite": comp, "chrf": chrf}, sent, view.mdd,
                        {row.lc.page_id: k for k, row in enumerate(rows)})


def _observed(row: Row, key: str) -> float | None:
    return row.composite if key == "composite" else row.chrf


def pair_stats(bc: BoardCompare, i: int, j: int) -> PairResult:
    """Statistics of rows ``i`` (A) and ``j`` (B) of the board (see the module docstring)."""
    a, b = bc.rows[i], bc.rows[j]
    metrics = []
    for key, label, digits in METRICS:
        va, vb = _observed(a, key), _observed(b, key)
        if va is None or vb is None:
            metrics.append(MetricDiff(key, label, digits, va, vb, None, None, None, None))
            continue
        ba, bb = bc.boots[key][i], bc.boots[key][j]
        diff = va - vb
        ci = bootstrap.percentile_interval(ba - bb)
        p = stats.paired_p_value(ba, bb, diff)
        metrics.append(MetricDiff(key, label, digits, va, vb, diff, ci[0] if ci else None, ci[1] if ci else None, p))
    d = bc.sentence[i] - bc.sentence[j]
    wins, losses = int(np.sum(d >= TIE_CHRF)), int(np.sum(d <= -TIE_CHRF))
    ties = len(d) - wins - losses
    return PairResult(a, b, metrics, wins, ties, losses, verdict(metrics[0], method_name(a.lc.card),
                                                                  method_name(b.lc.card), bc.mdd))


def p_text(p: float | None) -> str:
    """'0.042', '< 0.001' or '—'."""
    if p is None:
        return fmt.DASH
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def verdict(m: MetricDiff, name_a: str, name_b: str, mdd: float | None) -> str:
    """One sentence on the composite difference: who is better and whether the paired test separates them."""
    if m.diff is None or m.p is None:
        return "No composite to compare."
    if m.p < stats.ALPHA and m.diff != 0:
        better, worse = (name_a, name_b) if m.diff > 0 else (name_b, name_a)
        return (f"{better} is better than {worse}: composite difference {abs(m.diff):.3f}, "
                f"significant (p {'< 0.001' if m.p < 0.001 else f'= {m.p:.3f}'}, α = {stats.ALPHA}).")
    tail = f"; the smallest difference this board detects is ≈ {mdd:.3f}" if mdd is not None else ""
    return f"No detectable difference: composite difference {m.diff:+.3f}, p = {p_text(m.p)}{tail}."


def _domains(a: LoadedCard, b: LoadedCard, lb: Leaderboard) -> list[dict[str, Any]]:
    out = []
    for view in lb.views[1:]:
        ra = next((r for r in view.rows if r.lc is a), None)
        rb = next((r for r in view.rows if r.lc is b), None)
        if ra is None or rb is None:
            continue
        out.append({"domain": view.domain, "n": view.n_entries, "page": view.page,
                    "a": ra.composite, "b": rb.composite,
                    "d": None if ra.composite is None or rb.composite is None else ra.composite - rb.composite,
                    "ca": ra.chrf, "cb": rb.chrf,
                    "dc": None if ra.chrf is None or rb.chrf is None else ra.chrf - rb.chrf})
    return out


def full_pair(bc: BoardCompare, i: int, j: int) -> PairResult:
    """:func:`pair_stats` plus per-domain deltas and the fingerprint diff (static pages; their side-by-side rows are
    joined in the browser from :func:`rundata_path` and :func:`corpus_path`, issue 35 item 1)."""
    pr = pair_stats(bc, i, j)
    a, b = pr.a.lc, pr.b.lc
    pr.domains = _domains(a, b, bc.lb)
    pr.fp_diff = [(k, json.dumps(x, ensure_ascii=False, sort_keys=True), json.dumps(y, ensure_ascii=False,
                                                                                     sort_keys=True))
                  for k, x, y, differs in fingerprint_diff(a.card, b.card) if differs]
    pr.page = static_page(a, b)
    return pr


def static_page(a: LoadedCard, b: LoadedCard) -> str:
    return f"compare/{a.page_id}-{b.page_id}.md"


def static_pairs(bc: BoardCompare, closest: dict[str, tuple[LoadedCard, int]]) -> list[tuple[int, int]]:
    """Row-index pairs that get a static page: adjacent rows of the main view among its first :data:`STATIC_ROWS`,
    then each of those rows with its closest run (same model, fewest differing fingerprint components) when that run
    is on the board; the better-placed row is A."""
    top = min(len(bc.rows), STATIC_ROWS)
    out: list[tuple[int, int]] = [(k, k + 1) for k in range(top - 1)]
    seen = set(out)
    for k, row in enumerate(bc.rows[:top]):
        near = closest.get(row.lc.page_id)
        if near is None or near[0].page_id not in bc.index:
            continue
        pair = tuple(sorted((k, bc.index[near[0].page_id])))
        if pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


def _r(x: float | None, digits: int) -> float | None:
    return None if x is None else round(float(x), digits)


def rundata_path(page_id: str) -> str:
    """Site path of a run's compact data file (:data:`mtboard.site.rundata.RUN_URL`, issue 35 item 1):
    ``data/runs/<page_id>.json.gz``."""
    return rundata.RUN_URL.format(id=page_id)


def corpus_path(lb: Leaderboard) -> str:
    """Site path of the board's dataset texts, published once (:func:`mtboard.site.rundata.corpus_file`, issue 35
    item 1): ``data/corpora/<dataset id>-v<version>-<sha256[:12]>.json.gz``."""
    return rundata.corpus_file(lb.dataset_id, lb.version, lb.sha256)


def _rel(frm: str, to: str) -> str:
    """``to`` relative to the folder of ``frm`` (site paths): links inside data files, so the site works from a
    sub-path."""
    return posixpath.relpath(to, posixpath.dirname(frm) or ".")


def pairs_path(board: str) -> str:
    return f"data/pairs/{board}.json"


def _chunks(n: int) -> int:
    return (n + PAIRS_CHUNK - 1) // PAIRS_CHUNK


def pairs_names(lb: Leaderboard) -> set[str]:
    """The site paths :func:`pairs_files` writes for board ``lb`` (none when :func:`board_compare` gives None), without
    computing them."""
    view = lb.views[0] if lb.views else None
    if view is None or len(view.methods) < 2:  # board_compare's None
        return set()
    return {pairs_path(lb.key), f"data/pairs/{lb.key}.fp.json",
            *(f"data/pairs/{lb.key}.p{k}.json" for k in range(_chunks(len(view.methods))))}


def pairs_files(bc: BoardCompare, static: list[tuple[int, int]]) -> dict[str, dict[str, Any]]:
    """Every compare data file of one board, site path → value (issue 35 item 1):

    * ``data/pairs/<board>.json`` (:func:`pairs_main`): runs, entry ids, chunk and data-file links;
    * ``data/pairs/<board>.p<k>.json``: ``{"schema": "mtboard.pairs-chunk/1", "rows": [...], "flips": {...}}``, the
      pairs whose first row is in chunk k and those rows' flip distances (:func:`flip_lists`, keyed by row index) (:data:`PAIRS_CHUNK`), each ``[i, j, Δcomposite, lo, hi, p, Δchrf, lo, hi, p, wins,
      ties, losses]`` (A = row i, B = row j, i < j ≤ i + :data:`PAIR_SPAN`; JS flips signs and swaps wins/losses
      for B-vs-A);
    * ``data/pairs/<board>.fp.json`` (:func:`fingerprints`)."""
    main = pairs_path(bc.lb.key)
    n = len(bc.rows)
    chunks: list[list[list[Any]]] = [[] for _ in range(_chunks(n))]
    for i in range(n):
        for j in range(i + 1, min(n, i + PAIR_SPAN + 1)):
            pr = pair_stats(bc, i, j)
            row: list[Any] = [i, j]
            for m in pr.metrics:
                row += [_r(m.diff, 5), _r(m.lo, 5), _r(m.hi, 5), _r(m.p, 5)]
            chunks[i // PAIRS_CHUNK].append(row + [pr.wins, pr.ties, pr.losses])
    names = [f"data/pairs/{bc.lb.key}.p{k}.json" for k in range(len(chunks))]
    files: dict[str, dict[str, Any]] = {main: pairs_main(bc, static, [_rel(main, x) for x in names])}
    flips = flip_lists(bc)
    for k, (name, rows) in enumerate(zip(names, chunks)):
        files[name] = {"schema": "mtboard.pairs-chunk/1", "board": bc.lb.key, "rows": rows,
                       "flips": {str(i): v for i, v in flips.items() if i // PAIRS_CHUNK == k}}
    files[f"data/pairs/{bc.lb.key}.fp.json"] = fingerprints(bc)
    return files


def flip_lists(bc: BoardCompare) -> dict[int, dict[str, list[Any]]]:
    """Row index → view (``all`` or a domain) → ``[segments or None, next row's index, [entry ids]]``: each row's flip
    distance to the next ranked row of each view (:attr:`mtboard.ledger.methods.MethodRow.flip`, issue 38 item 4),
    for the compare page opened from a board's ``⇅N`` (``compare.html?board=…&a=<row>&flip=<view>``)."""
    out: dict[int, dict[str, list[Any]]] = {}
    for view in bc.lb.views:
        by_key = {m.key: m for m in view.methods}
        for m in view.methods:
            f = m.flip
            below = by_key.get(f.below) if f is not None else None
            if below is None or m.rep.lc.page_id not in bc.index or below.rep.lc.page_id not in bc.index:
                continue
            out.setdefault(bc.index[m.rep.lc.page_id], {})[view.domain or "all"] = [
                f.count, bc.index[below.rep.lc.page_id], list(f.entries)]
    return out


def pairs_main(bc: BoardCompare, static: list[tuple[int, int]], chunk_files: list[str]) -> dict[str, Any]:
    """The board's ``pairs.json``: ``runs`` (one per method row, board order: id, label, model, rank, composite,
    chrF++, CI text, tier, per-domain ``[composite, chrF++]``), ``aliases`` (a reproduction's run id → its row's
    shown run id, so a link from any member opens its row), ``ids`` (the board's entry ids, board order),
    ``corpus`` / ``rundata`` / ``fp`` (data files relative to this one; ``rundata`` has ``{id}``), ``chunks``
    (pair-statistics files, :func:`pairs_files`) and ``static`` (pairs with a static page). No corpus texts, no
    fingerprints: what grows per run is one summary line and its ≤ :data:`PAIR_SPAN` pairs (issue 35 item 1)."""
    lb = bc.lb
    main = pairs_path(lb.key)
    runs = []
    for row in bc.rows:
        lc = row.lc
        doms = {}
        for view in lb.views[1:]:
            mine = next((r for r in view.rows if r.lc is lc), None)
            if mine is not None:
                doms[view.domain] = [_r(mine.composite, 4), _r(mine.chrf, 2)]
        runs.append({"id": lc.page_id, "label": method_name(lc.card), "model": lc.card.model_slug,
                     "rank": row.rank, "composite": _r(row.composite, 4), "chrf": _r(row.chrf, 2),
                     "ci": row.cells["composite_ci"].text, "tier": lc.standing.label, "dom": doms})
    return {"schema": "mtboard.pairs/2", "board": lb.key, "title": lb.title, "tie_chrf": TIE_CHRF,
            "span": PAIR_SPAN, "chunk": PAIRS_CHUNK, "mdd": _r(bc.mdd, 5), "alpha": stats.ALPHA, "runs": runs,
            "ids": list(bc.ids), "domains": [v.domain for v in lb.views[1:]], "chunks": chunk_files,
            "corpus": _rel(main, corpus_path(lb)),
            "rundata": _rel(main, rundata_path("{id}")), "fp": f"{lb.key}.fp.json",
            "aliases": {r.lc.page_id: m.rep.lc.page_id for m in lb.views[0].methods for r in m.members
                        if r is not m.rep},
            "static": [[i, j, static_page(bc.rows[i].lc, bc.rows[j].lc)[:-3] + ".html"] for i, j in static]}


def fingerprints(bc: BoardCompare) -> dict[str, Any]:
    """``data/pairs/<board>.fp.json``: the method rows' fingerprints, deduplicated — ``components`` (sorted names),
    ``values`` (per component its distinct JSON texts) and ``runs`` (per row, board order, one index into that
    component's values, −1 when the run lacks it). Runs of one board share most components, so a run adds
    ~2 bytes per component (issue 35 item 1)."""
    comps = sorted({k for row in bc.rows for k in row.lc.card.fingerprint.components})
    values: list[list[str]] = [[] for _ in comps]
    index: list[dict[str, int]] = [{} for _ in comps]
    runs = []
    for row in bc.rows:
        own = row.lc.card.fingerprint.components
        line = []
        for c, k in enumerate(comps):
            if k not in own:
                line.append(-1)
                continue
            text = json.dumps(own[k], ensure_ascii=False, sort_keys=True)
            if text not in index[c]:
                index[c][text] = len(values[c])
                values[c].append(text)
            line.append(index[c][text])
        runs.append(line)
    return {"schema": "mtboard.pairs-fp/1", "board": bc.lb.key, "components": comps, "values": values, "runs": runs}


def dumps(value: Any) -> str:
    """Compact, key-sorted JSON (byte-identical between builds)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
