"""Pages and files of the boards half of the site (issue 12): home, pair boards and domain views with their charts
(each cut into pages: :data:`BOARD_PAGE_ROWS` ranked rows on page 1, :data:`BOARD_MORE_ROWS` on the later pages,
issue 35 item 2), the runs index (pages of :data:`RUNS_INDEX_ROWS` runs), downloads (per view ``.csv``/``.json``,
site-wide ``data/boards.json`` and ``leaderboard.json``), the methodology page and the changes page.

Returns ``{docs-relative path: text}`` like :func:`mtboard.site.render.render_pages`; :mod:`mtboard.site.build`
merges it over that dict. Everything is computed before rendering (:mod:`mtboard.site.boards`) and every output is
deterministic: no build time in these files (the build id is a hash of the inputs).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from markupsafe import Markup

from mtboard.score.metrics.composite import WEIGHTS
from mtboard.score.screen import SCREEN_POLICY
from mtboard.core.schema import MethodClass
from mtboard.site import boards as bd
from mtboard.site import charts, glossary
from mtboard.core import fmt
from mtboard.ledger.facts import UNKNOWN
from mtboard.ledger.flip import INSEPARABLE_LINE
from mtboard.ledger import standing as st
from mtboard.ledger.diff import GitDates, LedgerDiff
from mtboard.core.schema.ledger import Ledger
from mtboard.ledger.document import build_id, layered
from mtboard.ledger.document import dumps as document_dumps
from mtboard.ledger.history import Snapshot, snapshot_name
from mtboard.ledger.load import Inputs
from mtboard.core.names import mark
from mtboard.site.render import _env, page_helpers, rel_link
from mtboard.site.rundata import gzip_text
from mtboard.ledger import tables as tb
from mtboard.ledger.tables import NO_API_COST, Leaderboard, View, method_name, run_page

BOARD_SCHEMA = "mtboard.board/2"
CHART_LIMIT = 30
"""Charts (CI forest, quality vs cost/speed, domain heatmap) show the top 30 ranked methods: a chart of hundreds of
rows is unreadable and would blow the board page's 250 KB budget (design §3.12); the table holds every method."""
BOARD_PAGE_ROWS = 40
"""Ranked rows on page 1 of a board or domain view (issue 35 item 2; later pages: :data:`BOARD_MORE_ROWS`): a view
of more ranked methods continues on further static pages (:func:`view_pages`), so the largest board page stays
under 250 KB of HTML at any board size (424 KiB at 200 rows before). Measured on bench/site_scale.py's synthetic
board: a row is ≈ 1.7 KB of HTML, page 1's charts and pairwise matrix ≈ 75 KB, the theme ≈ 25 KB: 100 rows put page 1
at 267 KB, over budget; 50 rows leave room for longer names
and reproduction panels. Largest board page, before → after: 433,916 → 182,574 B at 200 rows; 3,479,641 → 189,132 B
at 2,000 rows (tests/test_board_pages.py, bench/site_scale.py --board-rows). Issue 40 (the screen-ready column,
~50 B a row, on top of issues 36–39's additions) put page 1 of the synthetic 2,000-row board at 251,382 B with 50
rows: 40 rows a page since. Reference baselines, the charts, the
pairwise matrix and the unranked runs stay on page 1; the legend is on every page; the CSV/JSON downloads keep the
whole view."""
BOARD_MORE_ROWS = 80
"""Ranked rows on each page after page 1 (issue 35, "marginal bytes per card"): those pages hold the table alone, so
they take twice page 1's rows. A page's fixed part (the theme, the context line, the controls, the column header,
both pagers, the legend) is ≈ 21 KB; at 40 rows a page it cost every added card ≈ 4.2 KB over its 8 views (21 KB
× 8 / 40), at 80 ≈ 2.1 KB. Measured on bench/site_scale.py's synthetic boards (rows ≈ 2.25 KB in a domain view,
≈ 2.5 KB in the board's main view): a later page of the main view is ≈ 121 KB at 40 rows, ≈ 221 KB at 80, under
the 250 KB budget (tests/test_board_pages.py asserts it at 2,000 rows; measured 2026-12-07 on its 2,000-row board:
page 1 212,401 B, the largest later page 201,092 B); 100 rows would not (≈ 271 KB). The margin is ≈ 2.9 KB a row
on average: rows with a reproduction panel (a table of member runs) or long notes take more, and a later page of
80 such rows can pass 250 KB — as page 1's 40 rows can with its charts."""
RUNS_INDEX_ROWS = 200
"""Run cards per page of the runs index (``runs/index.md``, then ``runs/index-p2.md`` …; run pages are
``runs/<16 hex>.md``, so the names cannot collide): ≈ 0.8 KB of HTML a row keeps each page near 190 KB
(issue 35 item 2; 162 KB at 200 runs on the synthetic board)."""
PAIRWISE_LIMIT = 20
"""The all-pairs p-value matrix covers the top 20 ranked methods (N² cells; Holm still corrects over those pairs)."""
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def unranked_rows(lb: Leaderboard) -> list[tuple[Any, Any]]:
    """(standing, shown card) of every row of the board that is not on its table: runs of another entry set or a
    ``--limit`` subset, reference baselines among them."""
    by_path = {lc.path: lc for lc in lb.cards}
    off_table = {id(lc) for lc in lb.unranked}
    return [(s, by_path[s.representative]) for s in lb.rows if id(by_path[s.representative]) in off_table]


def view_file(view: View, ext: str) -> str:
    """Docs-relative path of a view's download (``leaderboards/<board>[-<domain>].<ext>``)."""
    return view.page[:-3] + "." + ext


def page_path(view: View, number: int) -> str:
    """Docs-relative path of page ``number`` (1-based) of a view: page 1 is ``view.page``; later pages lie in a folder
    named after the view, ``leaderboards/<board>[-<domain>]/page-<n>.md`` (a folder no board or domain view file can
    take: those are flat ``leaderboards/*.md`` files)."""
    if number < 1:
        raise ValueError(f"page numbers start at 1, got {number}")
    return view.page if number == 1 else f"{view.page[:-3]}/page-{number}.md"


@dataclasses.dataclass(frozen=True)
class BoardPage:
    """One static page of a view (issue 35 item 2): its number (1-based) of ``count``, its path and its method rows
    (ranked rows ``first``–``last`` by position in the view, 1-based; reference baselines on page 1 only)."""

    number: int
    count: int
    path: str
    rows: list[Any]
    first: int
    last: int
    ranked: int
    """Ranked rows in the whole view."""


def view_pages(view: View, per_page: int | None = None, more: int | None = None) -> list[BoardPage]:
    """The view's rows cut into pages, in the ledger's order (ranks stay global): at most ``per_page`` ranked rows on
    page 1 (with the charts), at most ``more`` on each later page; every row is on exactly one page; reference rows
    (never ranked) go on page 1 in their place. A view with no rows has one empty page. None reads
    :data:`BOARD_PAGE_ROWS` (``per_page``) and :data:`BOARD_MORE_ROWS` (``more``) at call time. Raises ValueError
    when either is < 1."""
    per_page = BOARD_PAGE_ROWS if per_page is None else per_page
    more = BOARD_MORE_ROWS if more is None else more
    if per_page < 1 or more < 1:
        raise ValueError(f"rows a page must be at least 1, got {per_page} (page 1) and {more} (later pages)")
    ranked = [m for m in view.methods if not m.reference]
    count = 1 + max(0, -(-(len(ranked) - per_page) // more))
    first_page = {id(m) for m in ranked[:per_page]}
    pages = [BoardPage(1, count, page_path(view, 1), [m for m in view.methods if m.reference or id(m) in first_page],
                       1 if ranked else 0, min(per_page, len(ranked)), len(ranked))]
    for k in range(2, count + 1):
        lo = per_page + (k - 2) * more
        chunk = ranked[lo:lo + more]
        pages.append(BoardPage(k, count, page_path(view, k), chunk, lo + 1, lo + len(chunk), len(ranked)))
    return pages


PAGER_AROUND = 2
"""Page numbers the pager shows either side of the current page (besides the first and the last)."""


def pager(page: BoardPage, view: View, link, compact: bool = False) -> Markup | None:
    """The ``<nav>`` between a view's pages (previous, page numbers, next; relative links through ``link``): None for
    a view of one page. Every text in it is a number or a fixed word. The numbers: the first, the last and
    :data:`PAGER_AROUND` either side of this page, "…" for the gaps (every page stays reachable: each links its
    neighbours; 40 numbers cost ~3 KB of the 2,000-row page's 250 KB budget, issue 38). ``compact``: previous, "page k
    of n" and next only (above the table: page numbers would push the rows below a phone's fold)."""
    return _pager(page, lambda k: page_path(view, k), link, "Board pages", "Ranked rows", compact)


def _pager(page: BoardPage, path_of, link, label: str, what: str, compact: bool = False) -> Markup | None:
    if page.count < 2:
        return None

    def a(k: int, text: str, extra: str = "") -> str:
        return f'<a href="{fmt.html_text(link(path_of(k)))}"{extra}>{text}</a>'

    items = [a(page.number - 1, "← Previous", ' rel="prev"')] if page.number > 1 else []
    if compact:
        items.append(f"<strong>{page.number}</strong> of {page.count}")
    else:
        shown = sorted({1, page.count} | set(range(max(1, page.number - PAGER_AROUND),
                                                    min(page.count, page.number + PAGER_AROUND) + 1)))
        for prev, k in zip([0, *shown], shown):
            if k - prev > 1:
                items.append("\u2026")
            items.append(f'<strong aria-current="page">{k}</strong>' if k == page.number
                         else a(k, str(k), f' aria-label="Page {k}"'))
    if page.number < page.count:
        items.append(a(page.number + 1, "Next →", ' rel="next"'))
    label += " (short)" if compact else ""
    return Markup(f'<nav class="mtb-pager" aria-label="{label}"><span>{what} {page.first:,}–{page.last:,} '
                  f'of {page.ranked:,}</span> <span>Page {" ".join(items)}</span></nav>')


def board_title(lb: Leaderboard, view: View) -> str:
    """Unique H1 (design §3.9): ``EN→ES leaderboard · mtb-en-es-dev v1.0.0`` / ``EN→ES · legal domain · …``."""
    if view.domain is None:
        return f"{lb.language_pair} leaderboard · {lb.dataset_id} v{lb.version}"
    return f"{lb.language_pair} · {view.domain} domain · {lb.dataset_id} v{lb.version}"


# --------------------------------------------------------------------------------------------------------------------
# Downloads (design §3.7)


def csv_safe(value: Any) -> Any:
    """A text cell starting with ``= + - @`` (or tab/CR) gets a ``'`` prefix so spreadsheets never run it as a
    formula (OWASP CSV injection); numbers and None pass unchanged (None → empty cell)."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return "" if value is None else value


SIGNATURE_KEYS = ("chrf", "bleu", "ter", "composite", "screen_ready")
"""The signatures the methodology page lists, each possibly empty (a board with no shown card has none)."""
METRIC_KEYS = ("composite", "chrf", "exact", "equiv", "term", "morph", "fst", "semantic", "bleu", "ter", "mqm", "rubric",
               "checkpoints", "cost_adj")


MODEL_FIELDS = ["model_record", "model_record_note", "model_weights", "model_size", "model_licence",
                "model_organisation", "model_quantization", "tries", "contamination", "clean_composite",
                "clean_composite_lo", "clean_composite_hi", "clean_entries", "clean_cutoff"]
"""What the board says of a row's model (issue 37), as the ledger decided it (:mod:`mtboard.ledger.facts`,
:mod:`mtboard.ledger.tries`, :mod:`mtboard.ledger.contamination`): the record's slug and what the row says of its
record ("no model record", …), the filter facts (``unknown`` where the record says nothing), the tries text ("best of
8 (6 subsets)"), the contamination marks joined by "; ", and the clean-subset composite with its CI, entries and
cutoff. After :data:`CSV_TAIL` in the CSV, each only when some row has a value."""


def _model_fields(lb: Leaderboard | None, key: str) -> dict[str, Any]:
    facts = (getattr(lb, "facts", None) or {}).get(key)
    tries = (getattr(lb, "tries", None) or {}).get(key)
    cont = (getattr(lb, "contamination", None) or {}).get(key)
    clean = cont.clean if cont is not None else None
    ci = (clean.composite_ci if clean is not None else None) or (None, None)
    return {"model_record": facts.record if facts else None,
            "model_record_note": (facts.link_text or None) if facts else None,
            "model_weights": facts.weights if facts else None, "model_size": facts.size if facts else None,
            "model_licence": facts.licence if facts else None,
            "model_organisation": facts.organisation if facts else None,
            "model_quantization": facts.quantization if facts else None,
            "tries": (tries.text or None) if tries is not None else None,
            "contamination": "; ".join(mk.text for mk in cont.marks) or None if cont is not None else None,
            "clean_composite": clean.composite if clean else None, "clean_composite_lo": ci[0],
            "clean_composite_hi": ci[1], "clean_entries": clean.entries if clean else None,
            "clean_cutoff": clean.cutoff if clean else None}


SCREEN_FIELDS = ["screen_ready", "screen_hard_failures", "screen_formatted", "screen_outputs", "screen_policy"]
"""The screen-ready score of a row's shown card as the ledger computed it (issue 40 item 5,
:attr:`mtboard.ledger.tables.Leaderboard.screen`; docs/SCORING_SPEC.md §4.8): the value (whole segment; None on a
domain view), its hard-failed entries, its entries with a formatting penalty, its outputs (entries × runs) and the
policy version (the full signature is the JSON envelope's ``signatures.screen_ready``)."""


def _screen_fields(lb: Leaderboard | None, m: Any, value: float | None) -> dict[str, Any]:
    sr = (getattr(lb, "screen", None) or {}).get(m.rep.lc.path) if value is not None else None
    return {"screen_ready": value, "screen_hard_failures": sr.hard_failures if sr else None,
            "screen_formatted": sr.formatted if sr else None, "screen_outputs": sr.outputs if sr else None,
            "screen_policy": SCREEN_POLICY if sr else None}


def board_rows(view: View, lb: Leaderboard | None = None) -> list[dict[str, Any]]:
    """One dict per method row of a view (design §3.7), in the table's order, every key always present: the JSON
    download's rows, at full precision (floats as computed; None = missing). Keys: :data:`CSV_GROUPS`' fields (the
    CSV's columns) plus ``composite_sd``/``chrf_sd`` spreads, ``verification_label``, ``declared``,
    ``reproduction``, ``reproductions_agree``, ``quality_tier_automated`` and ``run_page``; with ``lb`` (the view's
    board) also :data:`MODEL_FIELDS`. ``run_date`` is the shown
    card's full timestamp (the CSV and the table show its date); ``latency_median_s`` is None for a batch engine,
    whose throughput is ``entries_per_s``."""
    out = []
    for m in view.methods:
        card = m.rep.lc.card
        v = m.values
        row: dict[str, Any] = {"rank_lo": m.rank_lo, "rank_hi": m.rank_hi, "method_id": m.key[:16],
                               "method_label": method_name(card), "model": card.model_slug,
                               "method_class": str(card.method_class), "reference": m.reference}
        for key in METRIC_KEYS:
            val = v[key]
            row[key] = val.raw if isinstance(val.raw, (int, float)) and not isinstance(val.raw, bool) else None
            row[f"{key}_lo"], row[f"{key}_hi"] = val.lo, val.hi
        row["composite_sd"], row["chrf_sd"] = m.composite_sd, m.chrf_sd
        row.update(_screen_fields(lb, m, v["screen"].raw))
        row["composite_cards_min"], row["composite_cards_max"] = m.composite_range or (None, None)
        row["chrf_cards_min"], row["chrf_cards_max"] = m.chrf_range or (None, None)
        row["cost_per_segment_usd"] = v["cost"].raw
        # what the page says in words travels with the number (issue 36 item 5): "local" for a backend that charges
        # nothing ("no API cost (local)"), "declared" for a price the submitter gave (also 0); empty: not priced
        row["cost_source"] = (None if v["cost"].raw is None else
                              "local" if v["cost"].text.startswith(NO_API_COST) else "declared")
        batch = v["throughput"].raw
        lat = v["latency"].raw
        row["latency_median_s"] = lat if batch is None and isinstance(lat, (int, float)) else None
        row["entries_per_s"] = batch
        row["run_date"] = card.timestamp
        row["delta_rank"] = m.drank
        floors = getattr(m, "floors", None) or []  # the ledger's decision (mtboard.ledger.sentinels; issue 38)
        row["inside_floor"] = floors[0].sentinel if floors else None
        row["inside_floor_p"] = floors[0].p if floors else None
        # the other issue 38 decisions of the ledger, as the page shows them (one decision, every surface)
        flip = getattr(m, "flip", None)  # mtboard.ledger.flip: greedy count to the next ranked row, its entries
        row["flip_segments"] = None if flip is None or flip.count is None else flip.count
        row["flip_entries"] = None if flip is None else ";".join(str(i) for i in flip.entries)
        drift = (getattr(lb, "drift", None) or {}).get(m.key) if lb is not None else None
        row["drift"] = drift.text if drift is not None and drift.drifted else None
        scorers = getattr(lb, "scorers", None) if lb is not None else None
        row["older_scorer"] = scorers.mark(m.key) if scorers is not None else None
        standing = m.standing
        row["verification_tier"] = standing.tier
        row["verification_label"] = standing.label
        row["declared"] = standing.declared
        row["reproduction"] = standing.reproduction.text
        row["reproductions_agree"] = standing.reproduction.agree
        row["quality_tier"] = v["qtier"].text if v["qtier"].sort is not None else None
        row["quality_tier_automated"] = v["qtier"].raw
        row["tokens"] = v["tokens"].raw
        row["harness_version"] = card.harness_version
        row["n_cards"] = len(m.members)
        row["card_ids"] = ";".join(r.lc.page_id for r in m.members)
        dates = sorted(r.lc.card.timestamp for r in m.members)
        row["first_run"], row["last_run"] = dates[0], dates[-1]
        row["run_page"] = run_page(m.rep.lc)[:-3] + ".html"
        if lb is not None:
            row.update(_model_fields(lb, m.key))
        out.append(row)
    return out


def _bounds(key: str) -> list[str]:
    return [key, f"{key}_lo", f"{key}_hi"]


CSV_GROUPS: dict[str, list[str]] = {
    "rank": ["rank_lo", "rank_hi", "inside_floor", "flip_segments", "flip_entries"],
    "method": ["method_id", "method_label", "model", "method_class", "reference", "older_scorer", "drift"],
    "composite": _bounds("composite") + ["composite_sd", "composite_cards_min", "composite_cards_max"],
    "screen": SCREEN_FIELDS,
    "vtier": ["verification_tier"],
    "drank": ["delta_rank"],
    "chrf": _bounds("chrf") + ["chrf_sd", "chrf_cards_min", "chrf_cards_max"],
    "cost": ["cost_per_segment_usd", "cost_source"],
    "latency": ["latency_median_s", "entries_per_s"],
    "date": ["run_date"],
    **{key: _bounds(key) for key in METRIC_KEYS if key not in ("composite", "chrf")},
    "qtier": ["quality_tier"],
    "model": ["model"],  # the slug is an identifier: in the CSV beside the method, always (the first place wins)
    "tokens": ["tokens"],
    "harness": ["harness_version"],
}
"""Board column key (:data:`mtboard.site.boards.BOARD_COLUMNS`) → the CSV fields that hold its cell (issue 36 item 5:
the CSV has the view table's columns, in its order; a value's CI bounds and spreads beside it). Then
:data:`CSV_TAIL`."""
CSV_TAIL = ["n_cards", "card_ids", "first_run", "last_run"]
CSV_CORE = frozenset(["rank_lo", "rank_hi", "method_id", "method_label", "model", "method_class", "composite",
                      "composite_lo", "composite_hi", "chrf", "chrf_lo", "chrf_hi", "cost_per_segment_usd",
                      "cost_source", "latency_median_s", "verification_tier", *CSV_TAIL])
"""CSV fields present on every view (design §3.7), even when empty in every row; any other field is left out when
the view's table does not show its column or no row has a value for it."""


def context_rows(lb: Leaderboard, link) -> list[dict[str, Any]]:
    """The board's context-behaviour table rows (issue 40 item 3): one per board row (ranked rows first, the ledger's
    order) whose shown card has slices (:attr:`mtboard.ledger.tables.Leaderboard.context_slices`), each ``{"name":
    the method's escaped name linking to its run page, "s": its ContextSlices}``; ``[]`` when no row has any (the
    board then shows no section). ``link``: docs-relative target → URL from the page."""
    by_path = {lc.path: lc for lc in lb.cards}
    rows = []
    for s in lb.rows:
        c = lb.context_slices.get(s.representative)
        lc = by_path.get(s.representative)
        if c is None or lc is None:
            continue
        name = Markup('<a href="{}">{}</a>').format(link(run_page(lc)), fmt.name_html(method_name(lc.card)))
        rows.append({"name": name, "s": c})
    return rows


def sentinel_rows(view: View) -> list[dict[str, Any]]:
    """The view's sentinel lines (:attr:`View.sentinels`; issue 38) as download records: ``name``, ``label``,
    ``floor``, ``composite`` with ``composite_lo``/``composite_hi`` (95% bootstrap on the view's resamples), ``chrf``,
    ``covered`` and ``entries`` (entries of the view the sentinel has a text for / in the view)."""
    return [{"name": ln.name, "label": ln.label, "floor": ln.floor, "composite": ln.composite,
             "composite_lo": ln.composite_ci[0] if ln.composite_ci else None,
             "composite_hi": ln.composite_ci[1] if ln.composite_ci else None, "chrf": ln.chrf,
             "covered": ln.covered, "entries": ln.entries} for ln in getattr(view, "sentinels", None) or []]


def _metric_field(key: str):
    return lambda x: tb.metric_text(key, x)


CSV_NUMBER = {
    **{f: _metric_field(key) for key in METRIC_KEYS for f in CSV_GROUPS[key]},
    "entries_per_s": _metric_field("entries_per_s"),
    "cost_per_segment_usd": fmt.usd_amount,
    "latency_median_s": bd.latency_seconds,
    "screen_ready": _metric_field("screen"),
    "run_date": lambda t: str(csv_safe(t[:10])),  # the Date column: the shown run's date
    **{f: _metric_field("composite") for f in ("clean_composite", "clean_composite_lo", "clean_composite_hi")},
}
"""CSV field → the formatter of its cell: the one the board table rounds that value with (one rounding rule per
metric: :func:`mtboard.ledger.tables.metric_text`, :func:`mtboard.core.fmt.usd_amount`,
:func:`mtboard.site.boards.latency_seconds`)."""


def csv_fields(view: View, rows: list[dict[str, Any]] | None = None) -> list[str]:
    """The CSV header of a view: the fields (:data:`CSV_GROUPS`) of the columns its table shows
    (:func:`mtboard.site.boards.visible_columns`), in the table's order, then :data:`CSV_TAIL`; a field outside
    :data:`CSV_CORE` only when some row has a value for it (``False`` counts as none, and ``unknown`` for a model
    fact: a board none of whose models has a record gets no facts columns). ``rows``: the view's
    :func:`board_rows` (computed when None)."""
    rows = board_rows(view) if rows is None else rows
    shown = {c.key for c in bd.visible_columns(view)}
    ordered = list(dict.fromkeys([f for c in bd.BOARD_COLUMNS for f in CSV_GROUPS[c.key]
                                  if c.key in shown or f in CSV_CORE] + CSV_TAIL
                                 + [f for f in MODEL_FIELDS if rows and f in rows[0]]))
    return [f for f in ordered if f in CSV_CORE or any(r[f] is not None and r[f] != "" and r[f] is not False
                                                        and not (f in MODEL_FIELDS and r[f] == UNKNOWN)
                                                        for r in rows)]


def csv_cell(field: str, value: Any) -> str:
    """One CSV cell: "" for None; a number through its field's :data:`CSV_NUMBER` formatter (as the table rounds
    it); ``true``/``false``; other text through :func:`csv_safe`. Raises ValueError for a float of a field without a
    formatter (every shown number is rounded by its metric's rule, never ``repr``)."""
    if value is None:
        return ""
    if field in CSV_NUMBER:
        return CSV_NUMBER[field](value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        raise ValueError(f"CSV field {field!r} has no formatter for its number {value!r}")
    return str(csv_safe(value))


def board_csv(view: View, lb: Leaderboard | None = None) -> str:
    """The view's CSV download (issue 36 item 5): header :func:`csv_fields`, one record per method row, each cell
    :func:`csv_cell` (rounded as the table shows it; full precision is the JSON's). RFC 4180 (the csv module, CRLF
    line ends), UTF-8; empty cell = missing; "" for a view with no rows. The model slug is
    :func:`mtboard.core.names.mark`-ed like the method label (a spreadsheet would apply a bidirectional control); the
    JSON download keeps it exact, with such characters as ``\\u`` escapes (:func:`mtboard.site.build.visible`)."""
    rows = board_rows(view, lb)
    if not rows:
        return ""
    fields = csv_fields(view, rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(fields)
    for r in rows:
        r["model"] = mark(r["model"])
        w.writerow([csv_cell(f, r[f]) for f in fields])
    for sr in sentinel_rows(view):  # reference lines after the rows: method_class "sentinel", never ranked
        line = {"method_id": f"sentinel:{sr['name']}", "method_label": sr["label"], "method_class": "sentinel",
                "reference": True, **{k: sr[k] for k in ("composite", "composite_lo", "composite_hi", "chrf")}}
        w.writerow([csv_cell(f, line.get(f)) for f in fields])
    return buf.getvalue()


def _signatures(lb: Leaderboard) -> dict[str, Any]:
    sig: dict[str, set[str]] = {}
    for lc in lb.cards:
        for k, s in lc.card.scores.signatures.model_dump(mode="json").items():
            if s:
                sig.setdefault(k, set()).add(s)
        sr = (getattr(lb, "screen", None) or {}).get(lc.path)  # the ledger's, not the card's (issue 40 item 5)
        if sr is not None:
            sig.setdefault("screen_ready", set()).add(sr.signature)
    return {k: sorted(v)[0] if len(v) == 1 else sorted(v) for k, v in sorted(sig.items())}


def methodology_version(boards: list[Leaderboard]) -> str:
    """Harness versions and mechanical policies of the shown cards (``harness 0.3.0 · mech-1.2``)."""
    harness = sorted({lc.card.harness_version for lb in boards for lc in lb.cards})
    policy = sorted({lc.card.scores.policy_version for lb in boards for lc in lb.cards})
    return " · ".join([f"harness {', '.join(harness)}"] + policy) if harness else ""


def download_rows(view: View, lb: Leaderboard) -> list[dict[str, Any]]:
    """:func:`board_rows` as the JSON downloads write them (``leaderboards/<view>.json``, ``leaderboard.json``;
    issue 35): a field whose value is None left out unless :data:`BOARD_ROW_REQUIRED` names it."""
    return [{k: v for k, v in row.items() if v is not None or k in _REQUIRED} for row in board_rows(view, lb)]


def board_json(lb: Leaderboard, view: View, build: str, mversion: str,
               rows: list[dict[str, Any]] | None = None) -> str:
    """The JSON envelope of design §3.7 (schema ``data/schema/board-2.json``), written with
    :func:`mtboard.ledger.document.layered` at depth 2: the envelope indented, each row and column on one line.
    Every column of the board (shown on this view or not) names its row ``fields``; each row holds the fields of
    :func:`board_rows` at full precision (the CSV beside it has the view's columns, rounded as shown), a field
    without a value (None) left out unless the schema requires it (:data:`BOARD_ROW_REQUIRED`, always present, null
    included): read a missing field as null. Schema 2 (issue 35): nulls were ~47 % of a row's bytes, written 8 times
    a method (once a view), the largest share of the bytes a card adds to the site; schema 1 wrote every field.
    ``rows``: :func:`download_rows` of the view when the caller has them (None: computed here)."""
    env = {"schema": BOARD_SCHEMA, "build": build, "methodology_version": mversion,
           "dataset": {"id": lb.dataset_id, "version": lb.version, "sha256": lb.sha256, "pair": lb.language_pair,
                       "n_segments": view.n_entries, "domain": view.domain},
           "signatures": _signatures(lb),
           "columns": [{"key": c.key, "label": c.label, "unit": c.unit, "lower_is_better": c.lower_is_better,
                        "source": c.source, "fields": CSV_GROUPS[c.key]} for c in bd.BOARD_COLUMNS],
           "rows": download_rows(view, lb) if rows is None else rows, "sentinels": sentinel_rows(view)}
    return layered(env, 2) + "\n"  # one row, one column per line (issue 35: ~35 % smaller than indent=1)


BOARD_ROW_REQUIRED = (
    "rank_lo", "rank_hi", "method_id", "method_label", "model", "method_class", "composite", "composite_lo",
    "composite_hi", "chrf", "chrf_lo", "chrf_hi", "cost_per_segment_usd", "cost_source", "latency_median_s",
    "verification_tier", "n_cards", "card_ids", "first_run", "last_run")
"""The fields every row of a board JSON download holds, null or not (:data:`BOARD_JSON_SCHEMA`); any other field
of :func:`board_rows` is present only with a value."""
_REQUIRED = frozenset(BOARD_ROW_REQUIRED)

BOARD_JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "board-2.json", "title": "mtboard board",
    "type": "object", "required": ["schema", "build", "methodology_version", "dataset", "signatures", "columns", "rows"],
    "properties": {
        "schema": {"const": BOARD_SCHEMA}, "build": {"type": "string"}, "methodology_version": {"type": "string"},
        "dataset": {"type": "object", "required": ["id", "version", "sha256", "pair", "n_segments"]},
        "signatures": {"type": "object"},
        "sentinels": {"type": "array", "items": {"type": "object", "required": [
            "name", "label", "floor", "composite", "composite_lo", "composite_hi", "chrf", "covered", "entries"]}},
        "columns": {"type": "array", "items": {"type": "object", "required": ["key", "label", "lower_is_better",
                                                                              "source"],
                                               "properties": {"fields": {"type": "array",
                                                                         "items": {"type": "string"}}}}},
        "rows": {"type": "array", "items": {
            "type": "object", "required": list(BOARD_ROW_REQUIRED),
            "description": "Every other field of a row is present only with a value: a missing field is null."}}}}


# --------------------------------------------------------------------------------------------------------------------
# Charts per view


def _forest(view: View, lb: Leaderboard, here: str):
    rows = [{"n": m.position, "label": method_name(m.rep.lc.card), "value": m.composite,
             "lo": (m.composite_ci or (None, None))[0], "hi": (m.composite_ci or (None, None))[1],
             "cluster": m.cluster, "rank": m.rank, "href": rel_link(here, run_page(m.rep.lc))}
            for m in view.methods if not m.reference][:CHART_LIMIT]
    return charts.ci_forest(rows, f"Composite with 95% CI: {bd.pair_names(lb)}"
                                  f"{', ' + view.domain + ' domain' if view.domain else ''}")


def _quality(view: View, lb: Leaderboard, here: str):
    pts = []
    for m in [m for m in view.methods if not m.reference][:CHART_LIMIT]:
        lat = m.values["latency"].raw
        pts.append({"n": m.position, "label": method_name(m.rep.lc.card), "composite": m.composite,
                    "cost": m.values["cost"].raw, "latency": lat if isinstance(lat, (int, float)) else None,
                    "batch": m.values["throughput"].raw is not None,  # its seconds per segment: 1 ÷ throughput
                    "href": rel_link(here, run_page(m.rep.lc))})
    svg, key = charts.quality_vs(pts, f"Quality against {'cost' if key_is_cost(pts) else 'speed'}: "
                                      f"{bd.pair_names(lb)}{', ' + view.domain if view.domain else ''}")
    shown = [p for p in pts if key and p.get(key) is not None and p[key] > 0 and p["composite"] is not None]
    all_zero = bool(pts) and all(p["cost"] == 0 for p in pts)
    return svg, key, shown, all_zero


def key_is_cost(pts: list[dict[str, Any]]) -> bool:
    return len({p["cost"] for p in pts if p.get("cost") is not None and p["cost"] > 0}) >= 3


def _heat(lb: Leaderboard):
    if len(lb.views) < 2:
        return None
    main = [m for m in lb.views[0].methods if not m.reference][:CHART_LIMIT]
    names = [f"{m.rank}. {method_name(m.rep.lc.card)}" for m in main]
    values = {}
    for j, view in enumerate(lb.views[1:]):
        by_key = {m.key: m for m in view.methods}
        for i, m in enumerate(main):
            other = by_key.get(m.key)
            values[(i, j)] = other.composite if other is not None else None
    return charts.heatmap(names, lb.domains, values, f"Composite by domain: {bd.pair_names(lb)}")


def _pairwise(view: View) -> dict[str, Any] | None:
    from mtboard.score import stats  # noqa: PLC0415

    real = [m for m in view.methods if not m.reference and m.boot is not None][:PAIRWISE_LIMIT]
    if len(real) < 2:
        return None
    p = stats.all_pairs([stats.RankRow(m.key, m.composite or 0.0, m.boot) for m in real])
    rows = []
    for i, a in enumerate(real):
        cells = [{"text": fmt.DASH if i == j else f"{p[i][j]:.3f}", "sig": i != j and p[i][j] < 0.05}
                 for j in range(len(real))]
        rows.append({"label": f"{a.rank} · {method_name(a.rep.lc.card)}", "cells": cells})
    n_ranked = sum(1 for m in view.methods if not m.reference)
    return {"tests": len(real) * (len(real) - 1) // 2, "labels": [{"rank": m.rank} for m in real], "rows": rows,
            "shown": len(real), "of": n_ranked}


# --------------------------------------------------------------------------------------------------------------------
# Sources of domains (corpora/SOURCES.md, "Per dataset, where each domain comes from")


def domain_sources(sources_md: str) -> dict[str, dict[str, str]]:
    """domain → {column header: source text} from the SOURCES.md table whose first header cell is ``domain``."""
    out: dict[str, dict[str, str]] = {}
    lines = sources_md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| domain |"):
            heads = [c.strip() for c in line.strip("|").split("|")]
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip("|").split("|")]
                out[cells[0]] = dict(zip(heads[1:], cells[1:]))
            break
    return out


def source_for(sources: dict[str, dict[str, str]], domain: str, pair: str) -> str | None:
    """The source text of a domain for a pair (header cells name pairs like ``en→es / fr / de``)."""
    cols = sources.get(domain)
    if not cols:
        return None
    src, tgt = (pair.lower().split("→") + [""])[:2]
    first = next(iter(cols.values()), "")
    for head, text in cols.items():
        h = head.lower()
        if f"{src}→{tgt}" in h or (src == "en" and tgt in re.split(r"[ /,→]+", h) and "en→" in h):
            if text.startswith("same"):
                text = first
            return None if text.startswith("\u2014") else re.sub(r"`", "", text)
    return None


def spec_section(spec: str, number: str, under: int | None = None) -> str:
    """The Markdown of section ``number`` (``4.6``, ``5``) of docs/SCORING_SPEC.md without its own heading line.
    ``under``: the level of the page heading it is placed under, so its subsections become level ``under + 1``
    (a page's contents list then nests them); None demotes every heading one level."""
    lines = spec.splitlines()
    pat = re.compile(r"^(#+) " + re.escape(number) + r"[. ]")
    out: list[str] = []
    level = 0
    for line in lines:
        m = re.match(r"^(#+) ", line)
        if level:
            if m and len(m.group(1)) <= level:
                break
            if m and under is not None:
                line = "#" * max(1, len(m.group(1)) - level + under) + line[len(m.group(1)):]
            elif m:
                line = "#" + line
            out.append(line)
        elif pat.match(line):
            level = len(pat.match(line).group(1))
    return "\n".join(out).strip() + "\n"


# --------------------------------------------------------------------------------------------------------------------
# Rendering


def render_board_pages(inputs: Inputs, boards: list[Leaderboard], portraits: list[Any], root: Path,
                       build_time: str, diff: LedgerDiff | None = None, dates: GitDates | None = None,
                       site_url: str | None = None, ledger: Ledger | None = None,
                       snapshots: list[Snapshot] | None = None, data: dict[str, bytes] | None = None
                       ) -> dict[str, str]:
    """Every page and file of the boards half. ``root``: project root (docs/SCORING_SPEC.md, corpora/SOURCES.md).
    ``diff``: the changes since the last build (:func:`mtboard.ledger.diff.diff_ledgers`; None: no changes page
    content); ``dates``: when each card entered the repository; ``site_url``: absolute links in the Atom feed;
    ``ledger``: this build's ledger and ``snapshots`` the earlier ones, published as the board's history
    (:mod:`mtboard.ledger.history`); ``data``: the build's binary files, where the compressed snapshots go (None: a
    dict of this call's own, dropped)."""
    env = _env()
    env.globals.update(ci_text=bd.ci_text, pair_names=bd.pair_names)
    pages: dict[str, str] = {}

    def render(path: str, template: str, **ctx: Any) -> None:
        ctx.setdefault("title", "")
        pages[path] = env.get_template(template).render(**page_helpers(path), **ctx)

    sources_path = root / "corpora" / "SOURCES.md"
    sources = domain_sources(sources_path.read_text(encoding="utf-8")) if sources_path.is_file() else {}
    build = build_id(boards)
    mversion = methodology_version(boards)
    site_rows: list[dict[str, Any]] = []
    index: list[dict[str, Any]] = []
    for lb in boards:
        names = bd.pair_names(lb)
        views_meta = []
        for i, view in enumerate(lb.views):
            n_ranked = sum(1 for m in view.methods if not m.reference)
            h1 = board_title(lb, view)
            cols, filters = bd.visible_columns(view), bd.filter_spec(lb, view.methods)  # once for all its pages
            for bp in view_pages(view):
                here = bp.path
                part = f"page {bp.number} of {bp.count}" if bp.count > 1 else ""
                # the site search indexes the rows of each board's first page of all domains only (issue 35)
                table = bd.board_table(view, lb, lambda t, here=here: rel_link(here, t), "lb-main", bp.rows, part,
                                       search=i == 0 and bp.number == 1, page=bp.number, pages=bp.count,
                                       cols=cols, filters=filters)
                common = dict(h1=h1, names=names, lb=lb, view=view, table=table, page=bp, page_rows=BOARD_PAGE_ROWS,
                              more_rows=BOARD_MORE_ROWS, inseparable_line=INSEPARABLE_LINE,
                              pager=pager(bp, view, lambda t, here=here: rel_link(here, t)),
                              pager_top=pager(bp, view, lambda t, here=here: rel_link(here, t), compact=True),
                              first_href=rel_link(here, view.page), csv_href=rel_link(here, view_file(view, "csv")),
                              json_href=rel_link(here, view_file(view, "json")),
                              domain_source=source_for(sources, view.domain, lb.language_pair) if view.domain
                              else None)
                if bp.number > 1:  # the table only: charts, matrix and unranked runs are page 1's
                    render(here, "board.md.j2", title=fmt.safe_title(f"{h1} · page {bp.number} ({names})", 120),
                           **common)
                    continue
                qv, qv_key, qv_points, all_zero = _quality(view, lb, here)
                note = (f"Charts show the top {CHART_LIMIT} of {n_ranked} ranked methods; the table lists all"
                        + (f" over {bp.count} pages." if bp.count > 1 else "."))
                render(here, "board.md.j2", title=fmt.safe_title(f"{h1} ({names})", 120), forest=_forest(view, lb, here),
                       qv=qv, qv_key=qv_key, qv_points=qv_points, all_zero=all_zero,
                       heat=_heat(lb) if i == 0 else None, pairwise=_pairwise(view),
                       chart_note=note if n_ranked > CHART_LIMIT else "", unranked_rows=unranked_rows(lb),
                       sentinels=bd.sentinels_html(view, lambda t, here=here: rel_link(here, t)),
                       ctx_rows=context_rows(lb, lambda t, here=here: rel_link(here, t)) if i == 0 else [],
                       **common)
            pages[view_file(view, "csv")] = board_csv(view, lb)
            rows = download_rows(view, lb)
            pages[view_file(view, "json")] = board_json(lb, view, build, mversion, rows)
            if i == 0:  # leaderboard.json: every board's main view, the same rows
                site_rows.extend({"dataset": lb.dataset_id, "version": lb.version, "pair": lb.language_pair, **row}
                                 for row in rows)
            top = bd.leader(view)
            views_meta.append({"domain": view.domain, "page": view.page[:-3] + ".html", "csv": view_file(view, "csv"),
                               "json": view_file(view, "json"), "n_segments": view.n_entries,
                               "leader": top.key[:16] if top else None})
        index.append({"dataset": {"id": lb.dataset_id, "version": lb.version, "sha256": lb.sha256,
                                  "pair": lb.language_pair, "languages": names},
                      "page": lb.page[:-3] + ".html", "views": views_meta,
                      "cards": sorted(lc.page_id for lc in lb.cards)})
    # issue 35: each board / row on one line (the same value as indent=1, a third of the bytes or less)
    pages["data/boards.json"] = layered({"schema": "mtboard.boards/1", "build": build,
                                         "methodology_version": mversion, "boards": index}, 2) + "\n"
    pages["leaderboard.json"] = layered({"schema": "mtboard.leaderboard/2", "build": build,
                                         "methodology_version": mversion, "rows": site_rows}, 2) + "\n"
    pages["data/schema/board-2.json"] = json.dumps(BOARD_JSON_SCHEMA, indent=1) + "\n"
    _runs_index(render, boards)
    _home(render, inputs, boards, portraits, build_time, ledger.state if ledger is not None else None)
    _methodology(render, inputs, boards, root, sources, mversion)
    diff = diff or LedgerDiff(None, None, build)
    _changes(render, boards, diff, dates or {})
    pages["data/changes.json"] = changes_json(diff)
    pages["changes.xml"] = changes_atom(diff, ledger.built_at if ledger is not None else build_time, site_url)
    if ledger is not None:
        _history(render, pages, {} if data is None else data, ledger, snapshots or [])
    return pages


def runs_index_path(number: int) -> str:
    """Docs-relative path of page ``number`` (1-based) of the runs index."""
    return "runs/index.md" if number == 1 else f"runs/index-p{number}.md"


def _runs_index(render, boards: list[Leaderboard]) -> None:
    """The runs index (every accepted card, by board), :data:`RUNS_INDEX_ROWS` a page with a pager (issue 35 item 2)."""
    rows = [(lb, lc) for lb in boards for lc in lb.cards]
    count = max(1, -(-len(rows) // RUNS_INDEX_ROWS))
    for k in range(1, count + 1):
        here = runs_index_path(k)
        chunk = rows[(k - 1) * RUNS_INDEX_ROWS:k * RUNS_INDEX_ROWS]
        page = BoardPage(k, count, here, chunk, (k - 1) * RUNS_INDEX_ROWS + 1 if chunk else 0,
                         (k - 1) * RUNS_INDEX_ROWS + len(chunk), len(rows))
        nav = _pager(page, runs_index_path, lambda t, here=here: rel_link(here, t), "Runs index pages", "Runs")
        render(here, "runs_index.md.j2", title="Runs" if k == 1 else f"Runs · page {k}", boards=boards, rows=chunk,
               pager=nav, number=k, page_rows=RUNS_INDEX_ROWS)


def _home(render, inputs: Inputs, boards: list[Leaderboard], portraits: list[Any], build_time: str,
          state: Any = None) -> None:
    """The home page; ``state``: the ledger's site state (:func:`mtboard.ledger.standing.site_state`), whose sentence
    the page shows (issue 34 item 2: an empty board, every card rejected, only baselines …)."""
    from mtboard.site.render import _corpora_rows  # noqa: PLC0415

    cards = []
    for lb in boards:
        view = lb.views[0]
        top = bd.leader(view)
        dates = sorted(lc.card.timestamp for lc in lb.cards)
        cards.append({"lb": lb, "names": bd.pair_names(lb), "n": view.n_entries,
                      "methods": sum(not m.reference for m in view.methods),
                      "leader": method_name(top.rep.lc.card) if top else None,
                      "score": bd.ci_text(top.composite, top.composite_ci, 3) if top else fmt.DASH,
                      "tied": sum(1 for m in view.methods if top and m.rank == top.rank and not m.reference),
                      "updated": dates[-1][:10] if dates else fmt.DASH})
    n_cards = sum(len(lb.cards) for lb in boards)
    render("leaderboards/index.md", "leaderboards_index.md.j2", pair_cards=cards, state=state)
    render("index.md", "index.md.j2", boards=boards, portraits=portraits, rejected=inputs.rejected, n_cards=n_cards,
           build_time=build_time, corpora=_corpora_rows(inputs), pair_cards=cards, state=state,
           matrix=bd.overview(boards))


def _methodology(render, inputs: Inputs, boards: list[Leaderboard], root: Path, sources, mversion: str) -> None:
    spec_path = root / "docs" / "SCORING_SPEC.md"
    spec = spec_path.read_text(encoding="utf-8") if spec_path.is_file() else ""
    sigs: dict[str, set[str]] = {}
    for lb in boards:
        for k, v in _signatures(lb).items():
            sigs.setdefault(k, set()).update([v] if isinstance(v, str) else v)
    weights = [{"profile": p, "rows": list(w.items()), "total": sum(w.values())} for p, w in sorted(WEIGHTS.items())]
    domains = []
    for c in inputs.corpora:
        counts = Counter(e.domain.value for e in c.corpus.entries
                         if e.domain is not None and e.segment.value == "development")
        pair = c.corpus.dataset.language_pair
        domains.append({"dataset": f"{c.corpus.dataset.id} v{c.corpus.dataset.version}", "pair": pair,
                        "rows": [(d, n, source_for(sources, d, pair) or fmt.DASH) for d, n in sorted(counts.items())]})
    common = {"mversion": mversion, "sigs": {k: sorted(sigs.get(k, ())) for k in sorted({*SIGNATURE_KEYS, *sigs})}}
    # the methodology in short pages (issue 36 item 3): an overview keeping every old anchor, then one page a topic
    render("methodology.md", "methodology.md.j2", title="Methodology", pages=list(glossary.METHODOLOGY_PAGES.items()),
           sections=glossary.SECTIONS, **common)
    titles = glossary.METHODOLOGY_PAGES
    render("methodology/metrics.md", "methodology_metrics.md.j2", title=f"Methodology: {titles['methodology/metrics.md']}",
           spec_metrics=Markup(spec_section(spec, "2", under=2)),
           spec_outcomes=Markup(spec_section(spec, "3.2", under=3)),
           spec_flags=Markup(spec_section(spec, "3.3", under=3)), **common)
    render("methodology/composite.md", "methodology_composite.md.j2",
           title=f"Methodology: {titles['methodology/composite.md']}", weights=weights,
           spec_composite=Markup(spec_section(spec, "4", under=2)), spec_cost=Markup(spec_section(spec, "6", under=2)),
           **common)
    render("methodology/ranks.md", "methodology_ranks.md.j2", title=f"Methodology: {titles['methodology/ranks.md']}",
           spec_ranks=Markup(spec_section(spec, "4.6", under=2)),
           spec_flip=Markup(spec_section(spec, "4.7", under=2)), spec_tiers=Markup(spec_section(spec, "5", under=2)),
           board_page_rows=BOARD_PAGE_ROWS, board_more_rows=BOARD_MORE_ROWS, chart_limit=CHART_LIMIT,
           runs_index_rows=RUNS_INDEX_ROWS, **common)
    render("methodology/verification.md", "methodology_verification.md.j2",
           title=f"Methodology: {titles['methodology/verification.md']}",
           tiers_text=[(t, st.TIER_LABEL[t], st.TIER_ICON[t], glossary.tier_text(t)) for t in reversed(st.TIERS)],
           classes=[c.value for c in MethodClass], **common)
    render("methodology/domains.md", "methodology_domains.md.j2", title=f"Methodology: {titles['methodology/domains.md']}",
           domains=domains, **common)
    render("glossary.md", "glossary.md.j2", terms=glossary.TERMS, target=glossary.methodology_target)


def _changes(render, boards: list[Leaderboard], diff: LedgerDiff, dates: GitDates) -> None:
    """The changes page (issue 31 item 4): the ledger diff by kind, subsets apart, then every run card by the date it
    entered the repository (else its run date)."""
    entries = []
    for lb in boards:
        for lc in lb.cards:
            entries.append({"date": dates.get(lc.path, lc.card.timestamp), "method": method_name(lc.card), "board": lb,
                            "lc": lc, "tier": lc.standing.label})
    entries.sort(key=lambda e: (e["date"], e["lc"].page_id), reverse=True)
    full = [c for c in diff.changes if not c.subset]
    sections = [("New rows", [c for c in full if c.kind == "new row"]),
                ("Rank changes", [c for c in full if c.kind == "rank change"]),
                ("Re-scored", [c for c in full if c.kind == "re-scored"]),
                ("Tier changes", [c for c in full if c.kind == "tier change"]),
                ("Reproductions added", [c for c in full if c.kind == "reproduction added"]),
                ("Withdrawn", [c for c in full if c.kind in ("card withdrawn", "row withdrawn")]),
                ("Subset runs", [c for c in diff.changes if c.subset])]
    render("changes.md", "changes.md.j2", title="Changes", diff=diff, sections=sections, entries=entries)


def _history(render, pages: dict[str, str], data: dict[str, bytes], ledger: Ledger,
             snapshots: list[Snapshot]) -> None:
    """The board's history (issue 31 item 6): this build's ledger and every earlier snapshot, each under a permanent
    name with its page, the list page and ``data/snapshots/index.json`` (each snapshot's ``file``). A snapshot is
    written as it was published (:class:`mtboard.ledger.history.Snapshot`): this build's and every compressed one as
    gzip into ``data`` (mtime 0: the same ledger, the same bytes), an earlier ``.json`` one as text into ``pages`` —
    also when this build's has its name (the same cards built again the same day), so a permalink never moves."""
    snaps = {s.name: s for s in snapshots}
    current = snapshot_name(ledger)
    earlier = snaps.get(current)  # the same board built again the same day: published as it was (a .json stays)
    snaps[current] = Snapshot(ledger, compressed=True if earlier is None else earlier.compressed)
    listing = []
    for name, snap in sorted(snaps.items(), key=lambda kv: (kv[1].doc.built_at, kv[1].doc.build), reverse=True):
        doc = snap.doc
        text = document_dumps(doc)
        if snap.compressed:
            data[snap.file] = gzip_text(text)
        else:
            pages[snap.file] = text
        render(f"history/{name}.md", "snapshot.md.j2", title=f"Board as of {doc.built_at[:10]} ({doc.build})",
               doc=doc, name=name, file=snap.file)
        listing.append({"name": name, "file": snap.file, "date": doc.built_at[:10], "built_at": doc.built_at,
                        "build": doc.build, "commit": doc.commit, "rows": sum(len(b.rows) for b in doc.boards),
                        "current": name == current})
    pages["data/snapshots/index.json"] = json.dumps({"schema": "mtboard.snapshots/1", "snapshots": [
        {k: v for k, v in x.items() if k != "current"} for x in listing]}, ensure_ascii=False, indent=1) + "\n"
    render("history.md", "history.md.j2", title="Board history", snapshots=listing)


def changes_json(diff: LedgerDiff) -> str:
    """``data/changes.json``: the diff as data (schema ``mtboard.changes/1``)."""
    return json.dumps({"schema": "mtboard.changes/1", "previous_build": diff.previous_build,
                       "previous_built_at": diff.previous_built_at, "build": diff.current_build,
                       "changes": [dataclasses.asdict(c) for c in diff.changes]}, ensure_ascii=False, indent=1) + "\n"


def changes_atom(diff: LedgerDiff, built_at: str, site_url: str | None) -> str:
    """``changes.xml``: the diff as an Atom 1.0 feed (RFC 4287; xml.etree escapes every string), one entry per
    change, links absolute when the site's address is known."""
    from xml.etree import ElementTree as ET

    ns = "http://www.w3.org/2005/Atom"
    ET.register_namespace("", ns)
    base = (site_url or "").rstrip("/") + "/" if site_url else ""

    def sub(parent, tag: str, text: str | None = None, **attrs: str):
        e = ET.SubElement(parent, f"{{{ns}}}{tag}", attrs)
        if text is not None:
            e.text = text
        return e

    feed = ET.Element(f"{{{ns}}}feed")
    sub(feed, "id", f"{base}changes.xml" if base else f"urn:mtboard:changes:{diff.current_build}")
    sub(feed, "title", "mtboard: changes on the board")
    sub(feed, "updated", built_at)
    sub(feed, "link", rel="alternate", href=f"{base}changes.html")
    sub(sub(feed, "author"), "name", "mtboard build")
    for c in diff.changes:
        entry = sub(feed, "entry")
        sub(entry, "id", f"urn:mtboard:{diff.current_build}:{c.kind.replace(' ', '-')}:{c.board}:"
                         f"{c.fingerprint[:16]}:{hashlib.sha256(c.card.encode()).hexdigest()[:12]}")
        sub(entry, "title", f"{c.kind}: {c.method} on {c.board}" + (" (subset)" if c.subset else ""))
        date = c.date if "T" in c.date else built_at
        sub(entry, "updated", date)
        if c.page:
            sub(entry, "link", rel="alternate", href=f"{base}{c.page}")
        arrow = f"{c.before} → {c.after}" if c.before and c.after else (c.after or c.before)
        sub(entry, "summary", f"{c.kind} · {c.board} · {c.method}: {arrow}")
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"