"""Sentinel lines on every view of every board, and which ranked rows are inside a floor (issue 38 item 1).

Each board's sentinels (:mod:`mtboard.score.sentinels`: copy of the source, shuffled references, truncated, doubled,
markup-stripped, wrong-language) are scored from the board's own corpus and segment. On every view (the whole segment
and each domain) a sentinel is a *line*: name, composite, chrF++, and the composite's bootstrap on the view's shared
resamples (the same draws every row of the view is scored on: seed :func:`mtboard.score.stats.view_seed` of the
dataset, version, corpus SHA-256 and domain). Composite and chrF++ are the sentinel's ``Scores`` (its ``by_domain``
slice on a domain view, as a card row's), or computed from its per-entry statistics when the view's entry set is a
subset of the segment. A line is never ranked and never counted in any field statistic; a ``wrong-language`` line is
shown only on views whose every entry it covers.

Floors (:data:`mtboard.score.sentinels.FLOORS`: ``copy-source`` and ``shuffled``): a ranked method row is *inside a
floor's cluster* when it is not significantly above it — its composite is not higher, or the paired bootstrap test
(:func:`mtboard.score.stats.paired_p_value` of the two rows' resampled composites on the view's shared resamples) gives
p ≥ α = 0.05 (:func:`mtboard.score.sentinels.inside_floor`: :func:`mtboard.score.stats.rank_clusters`' boundary rule
applied to the two rows; one test, so Holm leaves it as it is). Decided here once (:attr:`mtboard.ledger.methods.MethodRow.floors`); pages and downloads read it;
the validator applies the same rule to a submitted card on its whole development view
(:func:`mtboard.validate.repository.check_floors`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mtboard.core.schema import EntryResult
from mtboard.ledger.cache import ResampleCache, validator_code_hash
from mtboard.score import sentinels as sent
from mtboard.score import stats
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.chrf import chrf_from_stats


@dataclass(frozen=True)
class Line:
    """One sentinel on one view."""

    name: str
    label: str
    """:data:`mtboard.score.sentinels.LABELS`."""
    floor: bool
    composite: float
    chrf: float
    composite_ci: tuple[float, float] | None
    boot: np.ndarray
    """Resampled composites on the view's shared resamples."""
    covered: int
    """Entries of the view the sentinel has a hypothesis for."""
    entries: int
    """Entries of the view."""


@dataclass(frozen=True)
class FloorMark:
    """A ranked row inside a floor sentinel's cluster."""

    sentinel: str
    sentinel_composite: float
    composite: float
    p: float
    """Two-sided p-value of the paired test (1.0 when the row's composite is not above the sentinel's)."""

    @property
    def text(self) -> str:
        return (f"not significantly above the {self.sentinel} sentinel (composite {self.composite:.3f} vs "
                f"{self.sentinel_composite:.3f}, p = {self.p:.3f})")


def view_ids(results: list[EntryResult], ranked_ids: list[int], domain: str | None) -> list[int]:
    """The view's entry ids, as :func:`mtboard.ledger.tables._view` chooses them (the board's ranked set; on a domain
    view those of that domain)."""
    if domain is None:
        return list(ranked_ids)
    by_id = {r.entry_id: r for r in results}
    return [i for i in ranked_ids if i in by_id and by_id[i].domain == domain]


def line(s: sent.Sentinel, ids: list[int], counts: np.ndarray, domain: str | None,
         resamples: tuple[ResampleCache, int] | None = None) -> Line:
    """Sentinel ``s`` on the view of entries ``ids`` whose shared resample counts are ``counts`` ``(R, len(ids))``.
    ``resamples``: ``(cache, seed)`` — the build cache's resampled chrF++ (:class:`mtboard.ledger.cache.ResampleCache`,
    keyed by the sentinel's statistics on the view and the view's ``(n, R, seed)``, as a card's row-view is): read when
    stored, else computed and stored; bit-identical to computing them (issue 35 item 3: a warm ledger of the committed
    cards spent 3.5 of its 7 CPU-seconds on the sentinel lines' resamples). None computes them."""
    by_id = {r.entry_id: r for r in s.results}
    sub = [by_id[i] for i in ids]
    mat = bootstrap.statistics_matrix([r.stats.chrf for r in sub])
    has_fst = s.scores.fst_acceptance_rate is not None
    has_equiv = s.scores.equivalent_match_rate is not None
    chrf = None
    if resamples is not None and ids:
        cache, seed = resamples
        chrf = [cache.chrf(mat, counts.shape[0], seed, lambda: counts)]
    boot = sent.resampled_composite([s.results], ids, counts, has_equiv=has_equiv, has_fst=has_fst, chrf=chrf)
    whole = len(ids) == len(s.results)
    bd = s.scores.by_domain.get(domain) if domain is not None else None
    if whole and domain is None:
        composite, chrf = s.scores.composite, s.scores.chrf_plus_plus
    elif bd is not None and len(ids) == sum(1 for r in s.results if r.domain == domain):
        composite = bd.composite
        chrf = bd.chrf_plus_plus if bd.chrf_plus_plus is not None else chrf_from_stats(mat)
    else:
        ones = np.ones((1, len(ids)), dtype=np.float64)
        composite = float(sent.resampled_composite([s.results], ids, ones, has_equiv=has_equiv, has_fst=has_fst)[0])
        chrf = chrf_from_stats(mat)
    covered = sum(1 for i in ids if i in s.covered)
    return Line(s.name, sent.LABELS[s.name], s.floor, float(composite or 0.0), float(chrf or 0.0),
                bootstrap.percentile_interval(boot), boot, covered, len(ids))


def floor_mark(composite: float, boot: np.ndarray, floor: Line, alpha: float = stats.ALPHA) -> FloorMark | None:
    """A :class:`FloorMark` when a row (``composite``, resampled composites ``boot`` on the same resamples as the
    line's) is inside ``floor``'s cluster (module docstring), else None."""
    p = sent.inside_floor(composite, boot, floor.composite, floor.boot, alpha)
    return None if p is None else FloorMark(floor.name, floor.composite, composite, p)


def view_lines(found: list[sent.Sentinel], results: list[EntryResult], ranked_ids: list[int], domain: str | None,
               counts: np.ndarray, resamples: tuple[ResampleCache, int] | None = None) -> list[Line]:
    """Every sentinel line of one view, highest composite first (a wrong-language line only where it covers every
    entry of the view). ``resamples``: as :func:`line`."""
    ids = view_ids(results, ranked_ids, domain)
    out = []
    for s in found:
        if s.name == "wrong-language" and not all(i in s.covered for i in ids):
            continue
        if ids:
            out.append(line(s, ids, counts, domain, resamples))
    out.sort(key=lambda ln: (-ln.composite, sent.NAMES.index(ln.name)))
    return out


def attach(boards: list, corpora: list, resamples: int = bootstrap.BOOTSTRAP_RESAMPLES,
           cache: Path | None = None) -> dict[str, set[str]]:
    """Set ``view.sentinels`` (:class:`Line` list) on every view of every board whose corpus is known, and
    ``MethodRow.floors`` (:class:`FloorMark` list, copy-source first) on each ranked method row inside a floor's
    cluster. ``corpora``: every :class:`mtboard.ledger.load.CorpusInfo` (the wrong-language sentinel's other
    languages); ``cache``: the build cache folder (:func:`mtboard.score.sentinels.sentinels`). Returns the keys of
    the cache entries read or stored, by kind (``sentinels``, ``resamples``:
    :func:`mtboard.core.cachefiles.prune_entries`); empty sets without a cache."""
    salt = "" if cache is None else validator_code_hash()  # stored results: this scorer's code only
    rc = ResampleCache(cache)  # its own counts: the build report's resample hits are the card rows'
    used: set[str] = set()
    for lb in boards:
        info = lb.corpus
        if info is None:
            continue
        others = [(c.corpus, c.sha256) for c in corpora if c.sha256 != info.sha256]
        found = sent.sentinels(info.corpus, info.sha256, lb.segment, others, cache=cache, salt=salt, used=used)
        if not found:
            continue
        results = found[0].results
        for view in lb.views:
            ids = view_ids(results, lb.ranked_ids, view.domain)
            counts = sent.view_counts(lb.dataset_id, lb.version, lb.sha256, len(ids), view.domain, resamples)
            seed = sent.view_seed(lb.dataset_id, lb.version, lb.sha256, view.domain)
            view.sentinels = view_lines(found, results, lb.ranked_ids, view.domain, counts,
                                        None if cache is None else (rc, seed))
            floors = [ln for ln in sorted(view.sentinels, key=lambda ln: sent.NAMES.index(ln.name)) if ln.floor]
            for m in view.methods:
                if m.reference or m.boot is None or not m.position:
                    continue
                m.floors = [fm for fm in (floor_mark(m.composite or 0.0, m.boot, f) for f in floors) if fm]
    return {"sentinels": used, "resamples": rc.used}


__all__ = ["FloorMark", "Line", "attach", "floor_mark", "line", "view_ids", "view_lines"]
