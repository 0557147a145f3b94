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

What is precomputed (design: Python computes every statistic, JS only joins): per board one ``pairs.json`` (runs,
entries, and the statistics of every pair of runs at most :data:`PAIR_SPAN` positions apart, so its size grows
linearly with the board), one ``data/runs/<id>.json.gz`` per run (:mod:`mtboard.site.rundata`), and static compare pages for adjacent rows and
each run's closest run (:func:`static_pairs`), readable without JavaScript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.core.schema import EntryResult
from mtboard.core import fmt
from mtboard.ledger.load import LoadedCard
from mtboard.ledger.tables import Leaderboard, Row, failed, fingerprint_diff, method_name, sentence_chrf

TIE_CHRF = 1.0
"""Two outputs whose sentence chrF++ differ by less than this (points, 0–100) are a tie."""
PAIR_SPAN = 20
"""pairs.json holds every pair of runs at most this many board positions apart (all pairs on boards of ≤ 21 runs)."""
SEGMENTS_PAGE = 25
"""Rows per page of the side-by-side table (JS pager)."""

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
    segments: list[dict[str, Any]] = field(default_factory=list)
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
    counts = bootstrap.resample_counts(len(ids), r, stats.view_seed(lb.dataset_id, lb.version, lb.sha256, "*"))
    comp = np.stack([row.boot for row in rows])
    chrf = np.stack([_runs_boot(row.lc.card, ids, counts) for row in rows])
    sent = np.array([[sentence_chrf(res) for res in _by_ids(row.lc.card.results, ids)] for row in rows],
                    dtype=np.float64)
    return BoardCompare(lb, rows, ids, {"composite": comp, "chrf": chrf}, sent, view.mdd,
                        {row.lc.page_id: k for k, row in enumerate(rows)})


def _by_ids(results: list[EntryResult], ids: list[int]) -> list[EntryResult]:
    by_id = {r.entry_id: r for r in results}
    return [by_id[i] for i in ids]


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


def segment_rows(a: LoadedCard, b: LoadedCard, ids: list[int]) -> list[dict[str, Any]]:
    """Side-by-side rows sorted by |Δ sentence chrF++| (largest first; ties by entry id)."""
    rows = []
    for ra, rb in zip(_by_ids(a.card.results, ids), _by_ids(b.card.results, ids)):
        sa, sb = sentence_chrf(ra), sentence_chrf(rb)
        rows.append({"id": ra.entry_id, "domain": ra.domain.value if ra.domain else None, "source": ra.source,
                     "reference": ra.expected, "a": ra.predicted, "b": rb.predicted, "fa": failed(ra),
                     "fb": failed(rb), "oa": ra.checks.outcome.value, "ob": rb.checks.outcome.value,
                     "sa": sa, "sb": sb, "d": sa - sb,
                     "k": "tie" if abs(sa - sb) < TIE_CHRF else ("a" if sa > sb else "b")})
    rows.sort(key=lambda x: (-abs(x["d"]), x["id"]))
    return rows


def full_pair(bc: BoardCompare, i: int, j: int) -> PairResult:
    """:func:`pair_stats` plus per-domain deltas, the side-by-side rows and the fingerprint diff (static pages)."""
    pr = pair_stats(bc, i, j)
    a, b = pr.a.lc, pr.b.lc
    pr.domains = _domains(a, b, bc.lb)
    pr.segments = segment_rows(a, b, bc.ids)
    pr.fp_diff = [(k, json.dumps(x, ensure_ascii=False, sort_keys=True), json.dumps(y, ensure_ascii=False,
                                                                                     sort_keys=True))
                  for k, x, y, differs in fingerprint_diff(a.card, b.card) if differs]
    pr.page = static_page(a, b)
    return pr


def static_page(a: LoadedCard, b: LoadedCard) -> str:
    return f"compare/{a.page_id}-{b.page_id}.md"


def static_pairs(bc: BoardCompare, closest: dict[str, tuple[LoadedCard, int]]) -> list[tuple[int, int]]:
    """Row-index pairs that get a static page: adjacent rows of the main view, then each row with its closest run
    (same model, fewest differing fingerprint components) when that run is on the board; the better-placed row is A.
    """
    out: list[tuple[int, int]] = [(k, k + 1) for k in range(len(bc.rows) - 1)]
    seen = set(out)
    for k, row in enumerate(bc.rows):
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


def pairs_json(bc: BoardCompare, static: list[tuple[int, int]], seg_url: str) -> dict[str, Any]:
    """The board's ``pairs.json``: runs (one per method row, board order), ``aliases`` (a reproduction's run id → its
    row's shown run id, so a link from any member opens its row), entries, and the statistics of every pair ≤ :data:`PAIR_SPAN`
    positions apart as ``[i, j, Δcomposite, lo, hi, p, Δchrf, lo, hi, p, wins, ties, losses]`` (A = row i, B = row
    j, i < j; JS flips signs and swaps wins/losses for B-vs-A). ``static``: pairs with a static page (``"s"``)."""
    lb = bc.lb
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
                     "ci": row.cells["composite_ci"].text, "tier": lc.standing.label, "dom": doms,
                     "fp": {k: json.dumps(v, ensure_ascii=False, sort_keys=True)
                            for k, v in sorted(lc.card.fingerprint.components.items())},
                     "seg": seg_url.format(id=lc.page_id)})
    first = _by_ids(bc.rows[0].lc.card.results, bc.ids)
    entries = [[r.entry_id, r.domain.value if r.domain else None, r.source, r.expected] for r in first]
    pairs = []
    for i in range(len(bc.rows)):
        for j in range(i + 1, min(len(bc.rows), i + PAIR_SPAN + 1)):
            pr = pair_stats(bc, i, j)
            row = [i, j]
            for m in pr.metrics:
                row += [_r(m.diff, 5), _r(m.lo, 5), _r(m.hi, 5), _r(m.p, 5)]
            pairs.append(row + [pr.wins, pr.ties, pr.losses])
    return {"schema": "mtboard.pairs/1", "board": lb.key, "title": lb.title, "tie_chrf": TIE_CHRF,
            "span": PAIR_SPAN, "mdd": _r(bc.mdd, 5), "alpha": stats.ALPHA, "runs": runs, "entries": entries,
            "domains": [v.domain for v in lb.views[1:]], "pairs": pairs,
            "aliases": {r.lc.page_id: m.rep.lc.page_id for m in lb.views[0].methods for r in m.members
                        if r is not m.rep},
            "static": [[i, j, static_page(bc.rows[i].lc, bc.rows[j].lc)[:-3] + ".html"] for i, j in static]}


def dumps(value: Any) -> str:
    """Compact, key-sorted JSON (byte-identical between builds)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
