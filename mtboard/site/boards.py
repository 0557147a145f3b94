"""Boards as visitors read them: core and optional columns, provenance markers, rank clusters, the board's HTML.

Design note ``shared/site-design.md`` §2 (pair board, domain view) and §3.1–3.5; issue 12 items 1, 2, 9.

The rows, their standing and their ranks are the ledger's (:mod:`mtboard.ledger.methods`,
:mod:`mtboard.ledger.standing`); this module only shows them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from markupsafe import Markup

from mtboard.core import fmt
from mtboard.core.languages import language_name
from mtboard.ledger import standing as st
from mtboard.inputs.models import ADD_RECORD_PAGE
from mtboard.ledger.facts import FILTERS, SIZE_BUCKETS, UNKNOWN
from mtboard.site import glossary
from mtboard.ledger.methods import MethodRow
from mtboard.ledger.summary import summary
from mtboard.ledger.tables import (DIGITS, NOT_PRICED, Leaderboard, Row, View, method_name, metric_text, model_page,
                                  run_page)


@dataclass(frozen=True)
class BoardColumn:
    """One board column (design §3.7 column metadata; HELM's ``lower_is_better`` per column)."""

    key: str
    label: str
    unit: str
    lower_is_better: bool | None
    """None: not sortable by value direction (text)."""
    source: str
    """recomputed | declared | judge (design §3.5)."""
    help: str
    anchor: str
    """The methodology topic explaining the column (:data:`mtboard.site.glossary.ANCHORS`)."""
    core: bool = False


BOARD_COLUMNS: list[BoardColumn] = [
    BoardColumn("rank", "Rank", "", True, "recomputed", "Rank range on the composite: rows that cannot be separated "
                "share a range (paired bootstrap, Holm-corrected); ⇅N: flip distance", "ranks", True),
    BoardColumn("method", "Method", "", None, "declared", "Model or engine (line 1); prompt and condition (line 2)",
                "classes", True),
    BoardColumn("composite", "Composite ±CI", "0–1", False, "recomputed", "Weighted composite, 95% bootstrap CI",
                "composite", True),
    BoardColumn("screen", "Screen-ready", "0–1", False, "recomputed", "The composite as a screen translator's "
                "reader gets it (policy screen-1): commentary, a broken placeholder or more than 5 foreign-script "
                "letters count as no output; each formatting flag costs 0.05; equal to the composite without "
                "flags; whole segment only", "screen-ready", True),
    BoardColumn("vtier", "Verified", "", None, "recomputed", "Verification tier (spec §9.4)", "tiers", True),
    BoardColumn("drank", "Δrank", "", None, "recomputed", "Position in this domain compared with all domains",
                "ranks", True),
    BoardColumn("chrf", "chrF++ ±CI", "0–100", False, "recomputed", "Corpus chrF++ (sacrebleu), 95% bootstrap CI",
                "chrf", True),
    BoardColumn("cost", "Cost/seg.", "USD", True, "declared", "Declared cost per segment (US dollars)", "declared",
                True),
    BoardColumn("latency", "Latency", "s", True, "declared", "Declared median latency per segment; batch engines: "
                "segments per second", "declared", True),
    BoardColumn("date", "Date", "", None, "declared", "Date of the shown run (UTC)", "declared", True),
    BoardColumn("exact", "Exact match", "0–1", False, "recomputed", "Share of outputs equal to the reference",
                "exact"),
    BoardColumn("equiv", "Equiv. match", "0–1", False, "recomputed", "Share of outputs equal to the reference or "
                "one of its human variants", "equivalent"),
    BoardColumn("term", "Terminology", "0–1", False, "recomputed", "Share of glossary terms rendered as the "
                "glossary requires", "terminology"),
    BoardColumn("morph", "Morph. acc.", "0–1", False, "recomputed", "Morphological accuracy measured against "
                "Apertium machine analyses of the references, not gold: share of the reference's lemma+tag units "
                "the output's analysis has", "morphology"),
    BoardColumn("fst", "FST accept.", "0–1", False, "recomputed", "Share of output words a morphological analyser "
                "accepts", "fst"),
    BoardColumn("semantic", "Semantic", "0–1", False, "recomputed", "Meaning preservation score", "semantic"),
    BoardColumn("bleu", "BLEU", "0–100", False, "recomputed", "Corpus BLEU (sacrebleu)", "bleu"),
    BoardColumn("ter", "TER", "0–100+", True, "recomputed", "Corpus TER (sacrebleu), lower is better", "ter"),
    BoardColumn("mqm", "MQM pen.", "", True, "judge", "GEMBA-MQM mean penalty per entry (LLM judge)", "judges"),
    BoardColumn("rubric", "Rubric", "0–10", False, "judge", "Rubric judge mean total (LLM judge)", "judges"),
    BoardColumn("checkpoints", "Checkpoints", "0–100", False, "judge", "Checkpoint judge mean ± spread (LLM judge)",
                "judges"),
    BoardColumn("cost_adj", "Cost-adj.", "", False, "recomputed", "Cost-adjusted score (spec §6)", "cost-adjusted"),
    BoardColumn("qtier", "Quality tier", "", None, "recomputed", "Provisional label on the composite (spec §5)",
                "quality-tiers"),
    BoardColumn("model", "Model slug", "", None, "declared", "Model identity as declared", "classes"),
    BoardColumn("tokens", "Tokens", "", True, "declared", "Prompt + completion tokens (declared)", "declared"),
    BoardColumn("harness", "Harness", "", None, "recomputed", "mtboard harness version", "tiers"),
]
COLUMN_BY_KEY = {c.key: c for c in BOARD_COLUMNS}

COST_SEGMENTS = 10_000
"""The number of segments the "cost of N segments" figures are computed for before the visitor changes it (issue 36
item 5; the board's and the run page's control, ``site/assets/board.js`` recomputes them in the page)."""


def cost_of_segments(per_segment: float | None, n: int = COST_SEGMENTS) -> str:
    """The declared cost of ``n`` segments (``per_segment`` × ``n``, US dollars) as :func:`mtboard.core.fmt.usd`
    shows it; "" when there is no positive declared cost (a local run, not priced, or $0: nothing to multiply).
    ``site/assets/board.js`` (``usd``) writes the same text when the visitor changes ``n``."""
    if per_segment is None or not per_segment > 0:
        return ""
    return fmt.usd(per_segment * n)


def cost_n_html(per_segment: float | None) -> Markup:
    """``<span class="mtb-costn" data-usd="…">$12.000 for 10,000 segments</span>`` (:func:`cost_of_segments` at
    :data:`COST_SEGMENTS`), the span the page's control updates; empty Markup without a positive declared cost."""
    text = cost_of_segments(per_segment)
    if not text:
        return Markup("")
    return Markup('<span class="mtb-costn" data-usd="{}">{} for <span class="mtb-costn-n">{:,}</span> segments'
                  '</span>').format(repr(float(per_segment)), text, COST_SEGMENTS)


COST_N_CONTROL = Markup(
    f'<label class="mtb-costn-ctl">Cost of <input type="number" class="mtb-costn-input" min="1" max="1000000000" '
    f'step="1" value="{COST_SEGMENTS}" inputmode="numeric"> segments (declared prices; needs JavaScript to '
    f'change)</label>')
"""The visitor's N for every :func:`cost_n_html` figure on the page."""
OPTIONAL_KEYS = [c.key for c in BOARD_COLUMNS if not c.core]


@dataclass
class Value:
    """One cell: display text, sort key (None = missing, last both ways), raw value and CI bounds for downloads."""

    text: str
    sort: float | str | None
    raw: Any = None
    lo: float | None = None
    hi: float | None = None


def fill_values(boards: list[Leaderboard]) -> None:
    """Fill ``m.values`` (the cells as the board shows them) for every method row of every view."""
    for lb in boards:
        for view in lb.views:
            for m in view.methods:
                m.values = _values(m, view)


# --------------------------------------------------------------------------------------------------------------------
# Values


def ci_text(value: float | None, ci: tuple[float, float] | None, digits: int, sd: float | None = None) -> str:
    """Design §3.3: ``0.547 ±0.012``; ``48.2 +1.3/−1.5`` when the halves differ by more than one display unit;
    replicate or reproduction spread as ``(sd 0.004)``. '—' when there is no value."""
    if value is None:
        return fmt.DASH
    text = fmt.num(value, digits)
    if ci is not None:
        up, down = round(ci[1] - value, digits), round(value - ci[0], digits)
        unit = 10 ** -digits
        if abs(up - down) > unit * 1.001:  # rounded halves differ by more than one display unit
            text += f" +{max(up, 0):.{digits}f}/\u2212{max(down, 0):.{digits}f}"
        else:
            text += f" \u00b1{max(up, down, 0):.{digits}f}"
    if sd is not None:
        text += f" (sd {sd:.{digits}f})"
    return text


def _latency_shown(seconds: float) -> tuple[str, int]:
    """(number, power of ten of its unit): three significant digits in seconds; two in milliseconds below 0.01 s."""
    if seconds < 0.01:
        return f"{seconds * 1000:.2g}", -3
    return f"{seconds:.3g}", 0


def latency_text(seconds: float | None) -> str:
    """Seconds with three significant digits (``0.283 s``, ``12.4 s``); milliseconds below 0.01 s."""
    if seconds is None:
        return fmt.DASH
    number, power = _latency_shown(seconds)
    return f"{number} {'ms' if power else 's'}"


def latency_seconds(seconds: float | None) -> str:
    """The latency :func:`latency_text` shows, as a plain decimal number of seconds (a download's cell, rounded as
    the page shows it): ``0.283``, ``12.4``, ``0.0025`` (shown as ``2.5 ms``), ``1230`` (``1.23e+03 s``); "" for
    None."""
    if seconds is None:
        return ""
    number, power = _latency_shown(seconds)
    return format(Decimal(number).scaleb(power), "f")


def _cell(row: Row, key: str) -> Value:
    c = row.cells.get(key)
    if c is None or c.sort is None or c.text == fmt.DASH:
        return Value(fmt.DASH, None)
    return Value(c.text, c.sort, c.sort)


def _values(m: MethodRow, view: View) -> dict[str, Value]:
    card = m.rep.lc.card
    sc = card.scores
    whole = view.domain is None
    name = method_name(card)
    out: dict[str, Value] = {
        "rank": Value(m.rank, m.position or None, m.position or None, m.rank_lo, m.rank_hi),
        "method": Value(name, name.lower(), name),
        "vtier": Value(m.standing.tier, m.standing.rank_order, m.standing.tier),
        "composite": Value(ci_text(m.composite, m.composite_ci, DIGITS["composite"], m.composite_sd)
                           + _range(m.composite_range, DIGITS["composite"]),
                           m.composite, m.composite, *(m.composite_ci or (None, None))),
        "chrf": Value(ci_text(m.chrf, m.chrf_ci, DIGITS["chrf"], m.chrf_sd) + _range(m.chrf_range, DIGITS["chrf"]),
                      m.chrf, m.chrf, *(m.chrf_ci or (None, None))),
    }
    cost = m.rep.cells["cost"].sort  # its text is the ledger's (tables.cost_text)
    out["cost"] = Value(m.rep.cells["cost"].text, cost, cost)
    speed = m.rep.cells["speed"]
    has_latency = summary(m.rep.lc).has_latency
    out["throughput"] = Value(fmt.DASH, None)  # not a column: a batch engine's entries/s, for the downloads
    if speed.sort is None:
        out["latency"] = Value(fmt.DASH, None)
    elif has_latency:
        out["latency"] = Value(latency_text(speed.sort), speed.sort, speed.sort)
    else:
        out["latency"] = Value(speed.text.replace("batch: ", "batch "), speed.sort, speed.sort)
        eps = sc.entries_per_minute / 60.0  # the ledger's (tables._speed): batch text only on the whole view
        out["throughput"] = Value(metric_text("entries_per_s", eps), eps, eps)
    date = card.timestamp  # the shown card's, like every other value of the row
    out["date"] = Value(date[:10], date, date[:10])
    out["drank"] = (Value(_drank_text(m.drank), -m.drank, m.drank) if m.drank is not None and not whole
                    else Value(fmt.DASH, None))
    for key in ("screen", "exact", "equiv", "term", "morph", "fst", "semantic", "mqm", "rubric", "checkpoints",
                "cost_adj", "qtier", "model"):
        out[key] = _cell(m.rep, key)
    for key in ("bleu", "ter"):
        val = getattr(sc, key)
        out[key] = Value(metric_text(key, val), val, val) if whole and val is not None else Value(fmt.DASH, None)
    tok = card.totals.prompt_tokens + card.totals.completion_tokens
    out["tokens"] = Value(f"{tok:,}", tok, tok) if whole and tok else Value(fmt.DASH, None)
    out["harness"] = Value(card.harness_version, card.harness_version, card.harness_version)
    return out


def _range(bounds: tuple[float, float] | None, digits: int) -> str:
    """`` [cards 0.353–0.405]``: the members' range beside a row's values (issue 31); "" for one card."""
    if bounds is None:
        return ""
    return f" [cards {fmt.num(bounds[0], digits)}\u2013{fmt.num(bounds[1], digits)}]"


def _drank_text(d: int) -> str:
    if d > 0:
        return f"\u25b2{d}"
    if d < 0:
        return f"\u25bc{-d}"
    return "="


def visible_columns(view: View) -> list[BoardColumn]:
    """Core columns plus the optional ones some row has a value for and whose values differ between rows (design
    principle 6: an empty column is dropped, not dashed; issue 12: a column that carries nothing is dropped too).
    Δrank only on domain views."""
    cols = []
    for c in BOARD_COLUMNS:
        if c.key == "drank":
            if view.domain is not None:
                cols.append(c)
            continue
        if c.key in ("rank", "method"):
            cols.append(c)
            continue
        present = [m.values[c.key].text for m in view.methods if m.values[c.key].sort is not None]
        if not present:
            continue  # empty for every row
        if not c.core and len(view.methods) > 1 and len(present) == len(view.methods) and len(set(present)) == 1:
            continue  # an optional column with one value in every row carries nothing (issue 12)
        cols.append(c)
    return cols


# --------------------------------------------------------------------------------------------------------------------
# HTML (raw HTML blocks; every card string escaped here)


SIZE_ORDER = {k: i for i, (k, *_) in enumerate(SIZE_BUCKETS)}
"""Size bucket key → its place in the size filter (smallest first)."""


def _e(value: object) -> str:
    return fmt.html_text(value)


_SR = '<span class="mtb-sr">{}</span>'
_VT_SHORT = {st.SELF: "self", st.UNATTESTED: "re-run", st.GDS: "GDS", st.COMMUNITY: "community"}


def _provenance(text: str, source: str, name: bool = False) -> str:
    """Design §3.5: declared → italic, dotted, ``ᵈ``; judge → ``ʲ``; recomputed → plain. The screen-reader text
    ("declared, unchecked" / "LLM judge") is in the column header, read with every cell (once per column keeps a
    200-method board under its weight budget). ``name``: the text is a name, shown isolated and marked
    (:func:`mtboard.core.fmt.name_html`). A declared value's ``ᵈ`` is drawn by the stylesheet after the
    ``mtb-decm`` span (``site/assets/board.css``: generated content with empty alternative text, so screen readers
    skip it as they skipped the ``aria-hidden`` span it replaces): 34 bytes less for each of the 4 declared cells
    of a row in each of a board's 8 views (issue 35, "marginal bytes per card"). Copied text no longer holds the
    mark, and a browser without CSS's alternative-text syntax (Firefox < 128, Safari < 17.4) lets screen readers
    read it."""
    if text in (fmt.DASH, "unknown", NOT_PRICED):
        return _e(text)
    shown = str(fmt.name_html(text)) if name else _e(text)
    if source == "declared":
        return f'<span class="mtb-decm">{shown}</span>'
    if source == "judge":
        return f'{shown}<span aria-hidden="true">\u02b2</span>'
    return shown


_SOURCE_SR = {"declared": " (declared, unchecked)", "judge": " (LLM judge)"}


def method_lines(card) -> tuple[str, str]:
    """(line 1: model or engine, line 2: prompt · condition · sampling temperature) of a method (issue 12: full
    name, never cut)."""
    line1 = method_name(card).split(" · ")[0]
    rest = []
    if card.method.prompt_name:
        rest.append(f"prompt {card.method.prompt_name}")
    rest.append(card.condition)
    if card.temperature is not None:  # two rows that differ only in temperature must not read the same
        rest.append(f"t {card.temperature:g}")
    return line1, " · ".join(rest)


TRIES_LISTED = 3
"""Most of a model's other tries the best row lists on a board page (issue 37 item 4); the rest are counted, with a
link to the model's page, which lists every run. The list grows with the tries, not with the page: a model tried
2,000 times would otherwise put 2,000 links in one cell, and with 50 models the first page holds 50 best rows (the
250 KB board page budget, issue 35 item 2: 10 listed gave 270 KB at 2,000 rows)."""


def tries_html(t: Any, link, more_page: str | None = None) -> Markup:
    """The row's tries (issue 37 item 4; :class:`mtboard.ledger.tries.Tries`, None or tried once: ``""``): on the best
    row ``best of N (K subsets)`` opening a list of the model's other rows (links to their run pages, at most
    :data:`TRIES_LISTED`, then ``… and 12 more`` linking ``more_page``, the model's page); on the others ``1 of N
    tries …; best: <link>``. Escaped."""
    if t is None or not t.lead:
        return Markup("")
    if t.is_best:
        shown = t.other_rows[:TRIES_LISTED]
        items = "".join(f'<li><a href="{_e(link(page))}">{fmt.name_html(name)}</a>'
                        f' <span class="mtb-muted">({_e(t.note(fp))})</span></li>' if t.note(fp) else
                        f'<li><a href="{_e(link(page))}">{fmt.name_html(name)}</a></li>'
                        for fp, name, page in shown)
        rest = len(t.other_rows) - len(shown)
        if rest:
            more = f"\u2026 and {rest} more"
            items += (f'<li><a href="{_e(link(more_page))}">{_e(more)} (the model\'s page)</a></li>' if more_page
                      else f"<li>{_e(more)}</li>")
        # on a line of its own (a block): an inline <details> sits against the badge before it in Chromium
        return Markup(f'<details class="mtb-tries"><summary>{_e(t.lead)}</summary><ul>{items}</ul></details>')
    # the best row by a link, not by its name: the name can be this row's own (a --limit run of the same method),
    # the link's title says what tells it apart
    best_note = t.note(t.best)
    best = (f' \u00b7 <a href="{_e(link(t.best_page))}" title="{_e(t.best_method)}'
            + (f' ({_e(best_note)})' if best_note else "") + '">the best</a>' if t.best_method and t.best_page else "")
    return Markup(f' <span class="mtb-tries">{_e(t.lead)}{best}</span>')


def claim_marks_html(cont: Any, link) -> str:
    """The row's contamination marks (issue 37; :class:`mtboard.ledger.contamination.RowContamination` or None):
    one ``⚠`` link per claim to its anchor on the Contamination page, its words as text and tooltip, escaped; "" when
    none."""
    if cont is None or not cont.marks:
        return ""
    out = []
    for mk in cont.marks:
        href = link(f"contamination.md#{mk.anchor}")
        out.append(f' <a class="mtb-claim" href="{_e(href)}" title="{_e(mk.text)}" data-claim="{_e(mk.status)}">'
                   f'<span aria-hidden="true">\u26a0</span> {_e(mk.text)}</a>')
    return "".join(out)


def drift_html(drift: Any, link, page: str) -> str:
    """The row's drift mark (issue 38 item 3; :class:`mtboard.ledger.canaries.RowDrift` or None): a ``⚠ drifted``
    link to the model page's canary history with the ledger's words as its tooltip, on drifted rows only ("" for every
    other row: the 2,000-row board page budget)."""
    if drift is None or not drift.drifted:
        return ""
    return (f' <a class="mtb-drift" href="{_e(link(page))}#drift-canaries" title="{_e(drift.text)}">'
            '<span aria-hidden="true">\u26a0</span> drifted</a>')


def clean_subset_html(cont: Any) -> str:
    """The row's clean-subset composite under its full composite (issue 37; the ledger's
    :class:`mtboard.ledger.contamination.CleanSubset` text, escaped); "" when the row has none."""
    if cont is None or cont.clean is None:
        return ""
    c = cont.clean
    tip = (f"Composite on the {c.entries} entries added after the model's training cutoff ({c.cutoff}), with its "
           "95% bootstrap CI")
    return f'<br><span class="mtb-clean" title="{_e(tip)}">clean: {_e(c.text)}</span>'


def older_scorer_html(older: str | None) -> str:
    """The mark of a row from an older scorer on a board that mixes scorer versions (issue 38 item 2;
    :meth:`mtboard.ledger.scorers.BoardScorers.mark`): ``↻`` with the parts that differ as its text, escaped; "" for
    a row from the board's newest scorer (most rows: nothing is written for them, the 2,000-row page's budget)."""
    return "" if not older else f' <span class="mtb-oldscorer" title="{_e(older)}">\u21bb {_e(older)}</span>'


def _method_cell(m: MethodRow, link, tries: Any = None, cont: Any = None, facts: Any = None,
                 older: str | None = None, drift: Any = None) -> str:
    card = m.rep.lc.card
    l1, l2 = method_lines(card)
    tier = m.standing.tier
    parts = [f'<a class="mtb-m1" href="{_e(link(run_page(m.rep.lc)))}">{fmt.name_html(l1)}</a>',
             f'<span class="mtb-m2">{fmt.name_html(l2)} <span class="mtb-badge">{_e(card.method_class)}</span>',
             # the tier again where a phone shows it (the Verified column is off-screen at 390 px); hidden from
             # screen readers, which read the column
             f' <span class="mtb-vt-inline" aria-hidden="true">{st.TIER_ICON[tier]} {_e(_VT_SHORT[tier])}</span>']
    repro = m.standing.reproduction
    if repro.count > 1:
        if repro.agree is False:  # on the row itself, never only inside the closed panel (issue 31 item 2)
            parts.append(f' <span class="mtb-warnbadge">\u26a0 {_e(repro.text)}</span>')
        summary = repro.text if repro.agree is not False else f"{repro.count} runs"
        parts.append(f' <details class="mtb-repro"><summary>{_e(summary)}</summary>')
        parts.append('<table class="mtb-members"><caption class="mtb-sr">Member runs of this method</caption>'
                     '<thead><tr><th scope="col">Run</th><th scope="col">Date</th><th scope="col">Own evidence</th>'
                     '<th scope="col">Composite</th><th scope="col">\u0394</th></tr></thead><tbody>')
        for r in m.members:
            delta = (r.composite - m.rep.composite) if r.composite is not None and m.rep.composite is not None else None
            star = " (shown)" if r is m.rep else ""
            parts.append(f'<tr><td><a href="{_e(link(run_page(r.lc)))}">{_e(r.lc.page_id[:8])}</a>{_e(star)}</td>'
                         f'<td>{_e(r.lc.card.timestamp[:10])}</td><td>{_e(st.TIER_LABEL[st.earned(r.lc)])}</td>'
                         f'<td>{_e(fmt.num(r.composite, 3))}</td>'
                         f'<td>{_e(fmt.DASH if delta is None else f"{delta:+.3f}")}</td></tr>')
        parts.append("</tbody></table></details>")
    parts.append(str(tries_html(tries, link, model_page(card.model_slug))))
    if m.gold is not None:
        target, text = m.gold
        parts.append(f' <a class="mtb-gold" href="{_e(link(target))}">{_e(text)}</a>')
    parts.append(claim_marks_html(cont, link))
    parts.append(older_scorer_html(older))
    parts.append(drift_html(drift, link, model_page(card.model_slug)))
    parts.append(record_note_html(facts, link))
    parts.append("</span>")
    return "".join(parts)


def record_note_html(facts: Any, link) -> str:
    """What a row says of its model record (issue 37 item 1, decided by
    :meth:`mtboard.inputs.models.ModelIndex.link` and carried by :class:`mtboard.ledger.facts.ModelFacts`):
    ``no model record`` linking the contribute page's section on adding one, ``model record refused`` linking the
    models page; "" for a valid record, a baseline or no facts."""
    if facts is None or facts.link not in ("none", "refused"):
        return ""
    target = ADD_RECORD_PAGE if facts.link == "none" else "models/index.md"
    return f' <a class="mtb-norecord" href="{_e(link(target))}">{_e(facts.link_text)}</a>'


def _td(m: MethodRow, col: BoardColumn, link, tries: Any = None, cont: Any = None, whole: bool = True,
        facts: Any = None, older: str | None = None, drift: Any = None, place: str = "") -> str:
    """One cell of a board row. ``place``: the method cell's sort key, its place among the page's names
    (:func:`method_places`)."""
    v = m.values[col.key]
    sort = "" if v.sort is None else (v.sort if isinstance(v.sort, str) else f"{float(v.sort):.7g}")
    cls = f"c-{col.key}"
    if col.key == "method":
        cell = _method_cell(m, link, tries, cont, facts, older, drift)
        return f'<th scope="row" class="{cls}" data-v="{_e(place)}">{cell}</th>'
    if col.key == "vtier":
        tier = m.standing.tier
        # no tooltip in the HTML: the same line on every row of the standing; the legend below the table has it once
        # (board.js copies it onto these links)
        body = str(glossary.term_html(glossary.tier_key(tier), link("glossary.md"), Markup(
            f'<span aria-hidden="true">{st.TIER_ICON[tier]}</span> {_e(_VT_SHORT[tier])}'
            + _SR.format(f" ({_e(st.TIER_LABEL[tier])})")), tooltip=False))
    elif col.key == "drank":
        body = _e(v.text)
        if m.drank is not None:
            body += _SR.format(f" ({'up' if m.drank > 0 else 'down' if m.drank < 0 else 'same'} "
                               f"{abs(m.drank)} vs all domains)" if m.drank else " (same as all domains)")
    elif col.key == "model" and v.sort is not None:
        body = f'<a href="{_e(link(model_page(m.rep.lc.card.model_slug)))}">{_provenance(v.text, col.source, True)}</a>'
    elif col.key == "rank" and m.reference:
        body = 'ref.' + _SR.format(" (reference baseline, not ranked)")
    else:
        body = _provenance(v.text, col.source)
    if col.key == "composite":  # an uneven interval may break after its slash on a phone ("+0.020/" "−0.018")
        body = body.replace("/", "/<wbr>", 1)
    if col.key == "rank" and m.flip is not None:
        body += flip_html(m.flip)
    if col.key == "rank" and getattr(m, "floors", None):  # the ledger's decision (mtboard.ledger.sentinels); only such rows pay bytes
        fm = m.floors[0]
        body += f'<br><span class="mtb-floor" title="{_e(fm.text)}">≤ {_e(fm.sentinel)}</span>'
    if col.key == "cost" and cost_of_segments(v.raw):
        body += f'<br>{cost_n_html(v.raw)}'
    if col.key == "composite" and whole:
        body += clean_subset_html(cont)
    if col.key == "vtier":
        return f'<td class="{cls}" data-v="{_e(sort)}" data-standing="{_e(m.standing.tier)}">{body}</td>'
    return f'<td class="{cls}" data-v="{_e(sort)}">{body}</td>'


FLIP_NONE = "\u2014"
"""What ⇅ shows when no removal of fewer than all segments reverses two rows."""


def flip_html(flip: Any) -> str:
    """``<i class="fl">⇅3</i>`` after a ranked row's rank: its flip distance to the next ranked row
    (:class:`mtboard.ledger.flip.RowFlip`, greedy count; ``⇅—`` when none; issue 38 item 4). 23 bytes a row: the
    2,000-row board's page budget (tests/test_board_pages.py) leaves no room for a link or a title per row, so the
    column's help and the legend's glossary term explain it, and ``site/assets/board.js`` makes it a link to the
    compare page of the two rows (``compare.html?board=…&a=<row>&flip=<view>``), which lists the segments."""
    return f'<i class="fl">\u21c5{FLIP_NONE if flip.count is None else flip.count}</i>'


def facts_attrs(lb: Leaderboard, fingerprint: str) -> str:
    """`` data-f-weights="open" data-f-size="lt1b" …``: the row's model facts (:data:`mtboard.ledger.facts.FILTERS`,
    from :attr:`Leaderboard.facts`; issue 37 item 2) for the board's filters; ``""`` when the ledger has none. A fact
    that is :data:`~mtboard.ledger.facts.UNKNOWN` is left out (board.js reads a missing one as ``unknown``): a row
    without a record would otherwise carry five ``unknown`` attributes (the 250 KB page budget at 2,000 rows)."""
    f = lb.facts.get(fingerprint)
    if f is None:
        return ""
    return "".join(f' data-f-{name.replace("_", "-")}="{_e(f.value(name))}"' for name, _ in FILTERS
                   if f.value(name) != UNKNOWN)


def filters_html(lb: Leaderboard, rows: list[MethodRow], page: int = 1, pages: int = 1) -> str:
    """The filters' data (issue 37 item 2): an empty, ``hidden`` ``<form class="mtb-filters">`` whose ``data-filters``
    JSON lists, per filter of :data:`mtboard.ledger.facts.FILTERS`, its label and the values present in ``rows`` as
    ``[value, label]`` (sorted, ``unknown`` last). ``site/assets/board.js`` builds the selects from it and shows it;
    without JavaScript it stays hidden and every row is shown. ``""`` when no row has facts.

    ``rows``: the WHOLE view's rows, also on a paginated view (a value present on another page is an option on every
    page). ``page``/``pages``: this page's number and the view's page count (``data-page``/``data-pages``); with
    more than one page the count says "… on this page (page k of n)", since the filter sees this page's rows only."""
    return filters_form(filter_spec(lb, rows), page, pages)


def filter_spec(lb: Leaderboard, rows: list[MethodRow]) -> str | None:
    """The ``data-filters`` JSON of :func:`filters_html` for ``rows`` (None when no row has facts): the same for every
    page of a view, so a paginated view computes it once (:func:`board_table`'s ``filters``; issue 35)."""
    facts = [lb.facts[m.key] for m in rows if m.key in lb.facts]
    if not facts:
        return None
    spec = []
    for name, label in FILTERS:
        values = {f.value(name): f.label(name) for f in facts}
        order = sorted(values, key=lambda v: (v == UNKNOWN, SIZE_ORDER.get(v, 0) if name == "size" else 0,
                                              v.lower()))
        spec.append({"key": name.replace("_", "-"), "label": label, "options": [[v, values[v]] for v in order]})
    return json.dumps(spec, ensure_ascii=False)


def filters_form(spec: str | None, page: int = 1, pages: int = 1) -> str:
    """The ``<form>`` of :func:`filters_html` from its :func:`filter_spec` (``""`` for None)."""
    if spec is None:
        return ""
    paged = f' data-page="{page}" data-pages="{pages}"' if pages > 1 else ""
    # a <form>, not a <div>: Material's search parser matches an element's end by its tag name, so a <div> inside
    # the board's data-search-exclude <div> would end the exclusion early (material/plugins/search, Element.__eq__)
    return f'<form class="mtb-filters" hidden data-filters="{_e(spec)}" data-rows-label="rows"{paged}></form>'


def method_places(rows: list[MethodRow]) -> dict[str, str]:
    """Method sort key (``Value.sort``: the name in lower case) → its place among ``rows``' distinct keys, zero-padded
    to one width (``"007"`` of 120), so that the board script's string comparison (``site/assets/board.js``, which
    compares ``data-v`` strings for the method column) orders a page's rows as the names would; equal names share a
    place. Written as the method cell's ``data-v`` in place of the name: ~70 bytes less a row in each of a board's
    8 views (issue 35, "marginal bytes per card"). The names are ordered by UTF-16 code units, as the script
    compared them before (a name with a character above U+FFFF sorts as JavaScript sorts it, not by code point)."""
    keys = sorted({m.values["method"].sort for m in rows}, key=lambda k: k.encode("utf-16-be"))
    width = len(str(max(len(keys) - 1, 0)))
    return {k: f"{i:0{width}d}" for i, k in enumerate(keys)}


def board_table(view: View, lb: Leaderboard, link, table_id: str = "board",
                rows: list[MethodRow] | None = None, part: str = "", search: bool = True,
                page: int = 1, pages: int = 1, cols: list[BoardColumn] | None = None,
                filters: str | None | Literal[False] = False) -> Markup:
    """The board's ``<table>`` (WAI-ARIA APG sortable table: a button in each sortable header, ``aria-sort`` on the
    sorted column only) inside a labelled, focusable scroll region, preceded by the CSS column picker.

    ``rows``: the method rows of one page of the view (issue 35 item 2, :func:`mtboard.site.boardpages.view_pages`;
    None: every row). The columns are the whole view's (:func:`visible_columns`), so every page of a view shows the
    same columns; ranks are the ledger's, never renumbered per page. ``part``: appended to the caption
    (``page 2 of 20``). ``search`` False marks the block ``data-search-exclude``: the site search does not index
    its rows (issue 35, "MkDocs"; :mod:`mtboard.site.htmlstash`). ``page``/``pages``: this page's number and the
    view's page count, for the filters' count (:func:`filters_html`, whose options are the whole view's values).
    ``cols`` and ``filters``: the view's :func:`visible_columns` and :func:`filter_spec` when the caller computed them
    once for every page of the view (issue 35: each is a pass over the whole view; ``filters`` False: compute it)."""
    cols = visible_columns(view) if cols is None else cols
    optional = [c for c in cols if not c.core]
    shown_rows = view.methods if rows is None else rows
    out = [f'<div class="mtb-board" data-board="{_e(table_id)}" data-cmp="{_e(link("compare.md"))}?board='
           f'{_e(lb.key)}" data-view="{_e(view.domain or "all")}"{"" if search else " data-search-exclude"}>']
    out.append(filters_html(lb, view.methods, page, pages) if filters is False else filters_form(filters, page, pages))
    if optional:
        out.append('<details class="mtb-cols"><summary>Columns</summary><fieldset><legend>Optional columns'
                   '</legend>')
        for c in optional:
            out.append(f'<label><input type="checkbox" id="col-{c.key}" data-col="{c.key}"> {_e(c.label)}</label>')
        out.append("</fieldset></details>")
    caption = (f"{lb.title}{' · domain ' + view.domain if view.domain else ''}: one row per method, ordered by "
               f"composite; rank ranges from a paired bootstrap{'; ' + part if part else ''}")
    # a phone shows rank, method (with its verification) and composite ±CI; the rest behind this switch (issue 36
    # item 6; CSS only, hidden on wider screens)
    out.append('<label class="mtb-allcols"><input type="checkbox" class="mtb-allcols-input"> Show every column '
               '(scrolls sideways)</label>')
    if any(cost_of_segments(m.values["cost"].raw) for m in (view.methods if rows is None else rows)):
        out.append(str(COST_N_CONTROL))
    out.append(f'<div class="mtb-region" role="region" aria-labelledby="{table_id}-cap" tabindex="0">')
    out.append(f'<table class="mtb-board-table" id="{_e(table_id)}"><caption id="{table_id}-cap">{_e(caption)}'
               f'</caption><thead><tr>')
    for c in cols:
        lib = "" if c.lower_is_better is None else (' data-lib="1"' if c.lower_is_better else ' data-lib="0"')
        help_link = (f'<a class="mtb-help" href="{_e(link(glossary.methodology_target(c.anchor)))}" '
                     f'aria-label="About {_e(c.label)}" title="{_e(c.help)}">?</a>')
        sr = _SR.format(_SOURCE_SR[c.source]) if c.source in _SOURCE_SR and c.key != "method" else ""
        out.append(f'<th scope="col" class="c-{c.key}" data-key="{c.key}"{lib}><button type="button">'
                   f'{_e(c.label)}{sr}<span class="mtb-sorticon" aria-hidden="true"></span></button>{help_link}</th>')
    out.append("</tr></thead><tbody>")
    places = method_places(shown_rows)  # sorting orders one page's rows: places among them
    for m in shown_rows:
        cls = ["mtb-band" if m.cluster % 2 else "", "mtb-cut" if m.cluster_start else "",
               "mtb-ref" if m.reference else ""]
        cl = " ".join(c for c in cls if c)
        out.append(f'<tr data-row="{_e(m.rep.lc.page_id)}" data-method="{_e(m.key[:16])}"{facts_attrs(lb, m.key)}'
                   f'{f" class={chr(34)}{cl}{chr(34)}" if cl else ""}>')
        cont = getattr(lb, "contamination", {}).get(m.key)
        older = lb.scorers.mark(m.key) if lb.scorers is not None else None
        drift = (getattr(lb, "drift", None) or {}).get(m.key)
        out.extend(_td(m, c, link, lb.tries.get(m.key), cont, view.domain is None, lb.facts.get(m.key), older,
                       drift, places[m.values["method"].sort])
                   for c in cols)
        out.append("</tr>")
    out.append('</tbody></table></div><p class="mtb-sr" role="status" aria-live="polite" data-live></p></div>')
    return Markup("\n".join(out))


def sentinel_position(view: View, composite: float) -> str:
    """Where a sentinel line sits among the view's ranked rows, by composite: ``above rank 1``, ``between #3 and #4``
    (positions), ``below #N`` (every ranked row above it), or ``no ranked row``."""
    ranked = [m for m in view.methods if not m.reference and m.position]
    if not ranked:
        return "no ranked row"
    above = sum(1 for m in ranked if (m.composite or 0.0) > composite)
    if above == 0:
        return "above #1"
    if above == len(ranked):
        return f"below #{len(ranked)}"
    return f"between #{above} and #{above + 1}"


def sentinels_html(view: View, link) -> Markup:
    """The view's sentinel lines (:attr:`View.sentinels`, decided by :mod:`mtboard.ledger.sentinels`; issue 38): a
    small table below the board, highest composite first — name (floors marked), composite with its 95% interval,
    chrF++, and where the line sits among the ranked rows. Empty when the view has none. Kept to a few hundred bytes
    (the 2,000-row page budget)."""
    lines = getattr(view, "sentinels", None) or []
    if not lines:
        return Markup("")
    # the glossary link without its tooltip and a short caption: a few hundred bytes (the 2,000-row page budget)
    out = [f'<table class="mtb-plain mtb-sentinels"><caption><a class="mtb-term" href="{_e(link("glossary.md"))}'
           f'#sentinel">Sentinel lines</a>: texts made from the corpus, never ranked; ≤ marks a row inside a floor '
           f'(<a href="{_e(link(glossary.methodology_target("sentinels")))}">how</a>)</caption><thead><tr><th>'
           'Sentinel</th><th>Composite (95% CI)</th><th>chrF++</th><th>Sits</th></tr></thead><tbody>']
    for ln in lines:
        ci = f" ({ln.composite_ci[0]:.3f}–{ln.composite_ci[1]:.3f})" if ln.composite_ci else ""
        floor = " <b>floor</b>" if ln.floor else ""
        out.append(f'<tr><th scope="row" title="{_e(ln.label)}">{_e(ln.name)}{floor}</th><td>{ln.composite:.3f}{ci}'
                   f'</td><td>{metric_text("chrf", ln.chrf)}</td><td>{sentinel_position(view, ln.composite)}</td></tr>')
    out.append("</tbody></table>")
    return Markup("".join(out))


def pair_names(lb: Leaderboard) -> str:
    """``English → Spanish`` from the cards' language tags (search: a visitor types language names)."""
    ds = lb.cards[0].card.dataset
    return f"{language_name(ds.source_language)} \u2192 {language_name(ds.target_language)}"


def leader(view: View) -> MethodRow | None:
    """The first ranked method of a view."""
    return next((m for m in view.methods if not m.reference and m.position == 1), None)


# --------------------------------------------------------------------------------------------------------------------
# Home: methods × language pairs (issue 36 item 9; design note "Home": overview matrix, cell = rank range)


OVERVIEW_ROWS = 50
"""Method rows the home page's matrix shows at most (and as many reference rows): the methods covering the most pairs,
best ranked first. Every method stays on its boards; the home page stays bounded at any site size (issue 35: 10,000
synthetic cards are thousands of methods)."""


@dataclass(frozen=True)
class OverviewCell:
    """One method on one board's all-domains view, as that board shows it. ``kind``: ``ranked`` (a row with a rank
    range), ``reference`` (an echo/empty baseline row, "ref.", never ranked), ``unranked`` (only runs of a subset or
    another entry set, listed under the board's unranked runs) or ``absent`` (no run on that pair)."""

    kind: str
    rank: str = ""
    """The ledger's rank label of the row (:attr:`MethodRow.rank`: ``1``, ``1–2``); "" unless ranked."""
    composite: str = ""
    """The row's composite as the board's Composite column begins (:func:`ci_text`, three decimals)."""
    target: str = ""
    """Docs-relative page the cell links to: the shown card's run page (what the board row's method links to)."""
    more: int = 0
    """Further rows of the same method (same name, prompt, condition, temperature) on the board: the cell shows the
    board's first (best placed)."""


@dataclass(frozen=True)
class OverviewRow:
    """One method across the boards: its name in two lines (:func:`method_lines`) and one cell per board."""

    line1: str
    line2: str
    method_class: str
    reference: bool
    cells: list[OverviewCell]
    covered: int
    """Boards with a row of this method (ranked or reference)."""
    mean_rank: float | None
    """Mean of the row's best rank (``rank_lo``) over the boards that rank it: the order of the matrix only."""


@dataclass(frozen=True)
class Overview:
    """The home page's matrix: one column per board (board order, its all-domains view), one row per method."""

    boards: list[Leaderboard]
    rows: list[OverviewRow]
    ranked: list[bool]
    """Per board: its all-domains view ranks at least one method (False: baselines only, or nothing)."""
    methods: int = 0
    """Methods (reference baselines apart) with a row on some board: more than the rows shown when over
    :data:`OVERVIEW_ROWS`."""


def overview(boards: list[Leaderboard]) -> Overview | None:
    """Methods × language pairs for the home page; None without a board. A method is what a board row shows as its
    name (:func:`method_lines`: spec, prompt, condition, temperature), so one method run on several pairs is one
    row. Every rank, cluster, reference flag and composite is the board's row's own (:class:`MethodRow`, decided by
    the ledger): nothing is ranked here. A method whose only runs are unranked ones (a subset, another entry set) has
    no row, as on the boards' tables. Rows: reference baselines last (as on the boards), then by pairs covered (most
    first), the mean of their best ranks, the name; at most :data:`OVERVIEW_ROWS` of each kind."""
    if not boards:
        return None
    ids: dict[tuple[str, str], int] = {}
    found: list[dict[str, Any]] = []

    def slot(card) -> dict[str, Any]:
        key = method_lines(card)
        if key not in ids:
            ids[key] = len(found)
            found.append({"key": key, "class": card.method_class, "rows": [[] for _ in boards],
                          "unranked": [None] * len(boards)})
        return found[ids[key]]

    for j, lb in enumerate(boards):
        for m in lb.views[0].methods:
            slot(m.rep.lc.card)["rows"][j].append(m)
        for lc in lb.unranked:
            s = slot(lc.card)
            s["unranked"][j] = s["unranked"][j] or lc
    rows: list[OverviewRow] = []
    for f in found:
        cells: list[OverviewCell] = []
        for ms, lc in zip(f["rows"], f["unranked"]):
            if ms:
                m = ms[0]  # the board's order: its best placed row of this method
                cells.append(OverviewCell("reference" if m.reference else "ranked", "" if m.reference else m.rank,
                                          ci_text(m.composite, None, 3), run_page(m.rep.lc), len(ms) - 1))
            elif lc is not None:
                cells.append(OverviewCell("unranked", target=run_page(lc)))
            else:
                cells.append(OverviewCell("absent"))
        ranks = [ms[0].rank_lo for ms in f["rows"] if ms and not ms[0].reference and ms[0].rank_lo is not None]
        reference = any(c.kind == "reference" for c in cells) and not any(c.kind == "ranked" for c in cells)
        rows.append(OverviewRow(f["key"][0], f["key"][1], f["class"], reference, cells,
                                sum(c.kind in ("ranked", "reference") for c in cells),
                                sum(ranks) / len(ranks) if ranks else None))
    rows = [r for r in rows if r.covered]  # a method with no board row anywhere (only unranked runs) is not a row
    rows.sort(key=lambda r: (r.reference, -r.covered,
                             float("inf") if r.mean_rank is None else r.mean_rank, r.line1.lower(), r.line2.lower()))
    ranked = [any(not m.reference for m in lb.views[0].methods) for lb in boards]
    real, refs = [r for r in rows if not r.reference], [r for r in rows if r.reference]
    return Overview(boards, real[:OVERVIEW_ROWS] + refs[:OVERVIEW_ROWS], ranked, len(real))


__all__ = ["BOARD_COLUMNS", "OVERVIEW_ROWS", "COST_SEGMENTS", "COST_N_CONTROL", "cost_of_segments", "cost_n_html",
           "board_table", "ci_text", "facts_attrs", "filter_spec", "filters_form", "filters_html", "fill_values",
           "overview", "tries_html"]
