"""Rendering the computed tables into Markdown pages with Jinja2 (autoescape on, StrictUndefined).

Returns ``{relative path: text}``; writing and MkDocs live in :mod:`mtboard.site.build`. Pages hold Markdown for fixed
prose and raw HTML blocks (generated here, data autoescaped) for tables; MkDocs passes raw HTML blocks through
untouched, so nothing from a card is ever interpreted as Markdown or HTML.
"""

from __future__ import annotations

import functools
import json
import posixpath
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from mtboard.review import community as reviews
from mtboard.score import stats
from mtboard.core.schema import MethodRecord, RunCard
from mtboard.site import boards, charts, compare, glossary, items, licences, portrait, rundata, runpage
from mtboard.ledger import tables
from mtboard.core import fmt
from mtboard.site import reuse as reuse_mod
from mtboard.site.judges import build_judges_page
from mtboard.ledger.load import Inputs, LoadedCard
from mtboard.site.portrait import Portrait
from mtboard.site.reuse import BoardReuse
from mtboard.ledger.standing import card_composite
from mtboard.ledger.tables import COLUMNS, Leaderboard
from mtboard.judges.gemba_mqm import CONTEXT_BEHAVIORS


def _env() -> Environment:
    env = Environment(loader=PackageLoader("mtboard.site", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["md"] = fmt.md_text
    env.filters["name"] = fmt.name_html  # a name in HTML: <bdi>, refused characters marked (issue 32 item 5)
    env.filters["mdname"] = fmt.name_md  # the same in a Markdown heading or list item
    env.globals.update(num=fmt.num, rate=fmt.rate, usd=fmt.usd, secs=fmt.secs, ci=fmt.ci, pm=fmt.pm, dash=fmt.DASH,
                       safe_url=fmt.safe_url,
                       method_name=tables.method_name, run_page=tables.run_page, cost_text=tables.cost_text,
                       temperature_text=tables.temperature_text, model_page=tables.model_page,
                       card_composite=card_composite,
                       columns=COLUMNS, vtiers=glossary.TIER_TERMS, cost_n_html=boards.cost_n_html,
                       tries_html=boards.tries_html, cost_n_control=boards.COST_N_CONTROL,
                       claim_marks=lambda cont, link: Markup(boards.claim_marks_html(cont, link)),
                       record_note=lambda facts, link: Markup(boards.record_note_html(facts, link)),
                       licence_anchor=licences.anchor, ctx_labels=CONTEXT_BEHAVIORS,
                       licence_of=lambda dataset_id, version: None)  # render_pages binds the build's corpora
    return env


def rel_link(here: str, target: str) -> str:
    """Relative URL from page ``here`` to page ``target`` (both docs-relative .md paths; use_directory_urls=false).
    A ``#fragment`` on ``target`` is kept (``methodology/metrics.md#chrf`` → ``methodology/metrics.html#chrf``)."""
    path, hash_, fragment = target.partition("#")
    target_html = path[:-3] + ".html" if path.endswith(".md") else path
    return _relpath(target_html, posixpath.dirname(here) or ".") + hash_ + fragment


@functools.lru_cache(maxsize=1 << 16)
def _relpath_relative(path: str, start: str) -> str:
    """``posixpath.relpath`` of two relative paths without ``..`` (:func:`_relpath`), remembered."""
    return posixpath.relpath(path, start)


def _relpath(path: str, start: str) -> str:
    """``posixpath.relpath(path, start)``, remembered for two relative paths with no ``..`` part: their answer does
    not depend on the working directory (an absolute path, or a ``..`` that may climb above the working directory,
    is computed afresh). A build asks the same few thousand pairs ~100 times each (issue 35: 184,000 calls, 4 s of
    a 2,000-row board's build)."""
    if path.startswith("/") or start.startswith("/") or ".." in path.split("/") or ".." in start.split("/"):
        return posixpath.relpath(path, start)
    return _relpath_relative(path, start)


def page_helpers(here: str) -> dict[str, Any]:
    """What every page template gets for page ``here``: ``link`` (:func:`rel_link`), ``relmd`` (:func:`rel_md`),
    ``term`` (a glossary term: :func:`mtboard.site.glossary.term_html`) and ``mlink`` (a methodology topic:
    :func:`mtboard.site.glossary.methodology_target`), all relative to ``here``."""
    return {"link": lambda target: rel_link(here, target), "relmd": lambda target: rel_md(here, target),
            "term": lambda key, text=None: glossary.term_html(key, rel_link(here, "glossary.md"), text),
            "mlink": lambda anchor: rel_link(here, glossary.methodology_target(anchor))}


def rel_md(here: str, target: str) -> str:
    """Relative Markdown link (MkDocs checks it in strict mode)."""
    return _relpath(target, posixpath.dirname(here) or ".")


def _json_attr(value: Any) -> str:
    """Compact, key-sorted JSON for a data-* attribute (autoescape then makes it attribute-safe)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _scalar_pairs(model: Any, skip: set[str]) -> list[tuple[str, Any]]:
    out = []
    for name, value in model.model_dump(mode="json").items():
        if name in skip:
            continue
        if isinstance(value, (dict, list)):
            if not value:
                continue
            value = _json_attr(value)
        out.append((name, value))
    return out


def _is_declared(model: type, name: str) -> bool:
    """The schema classifies the field as declared (``x-binding``; :data:`mtboard.core.schema.Binding`)."""
    table = model.__dict__.get("BINDING", {})
    return table.get(name, table.get("*")) == "declared"


def _mark(label: str, declared: bool) -> str:
    """A field label, with ' † (declared)' when a self-benchmarked card's value is only the contributor's word."""
    return f"{label} † (declared)" if declared else label


def _corpora_rows(inputs: Inputs) -> list[dict[str, Any]]:
    rows = []
    for c in inputs.corpora:
        ds = c.corpus.dataset
        seg = {s: 0 for s in ("development", "diagnostic", "secret")}
        domains: set[str] = set()
        for e in c.corpus.entries:
            key = e.segment.value if e.segment.value in seg else "secret"
            seg[key] += 1
            if e.domain is not None:
                domains.add(e.domain.value)
        rows.append({"id": ds.id, "version": ds.version, "pair": ds.language_pair, "license": ds.license,
                     "sizes": f"{seg['development']} / {seg['diagnostic']} / {seg['secret']}",
                     "domains": ", ".join(sorted(domains)) or None,
                     "provenance": [{"text": p, "url": fmt.safe_url(p)} for p in ds.provenance]})
    return rows


def render_pages(inputs: Inputs, boards: list[Leaderboard], portraits: list[Portrait],
                 build_time: str, *, data: dict[str, bytes] | None = None,
                 repository: str | None = None, reuse: BoardReuse | None = None) -> dict[str, str]:
    """Render every page. Deterministic: same inputs → same text (``build_time`` appears on the home page only).

    ``data``: filled with the binary data files (``{docs-relative path: bytes}``): each dataset's corpus file and
    each run's data file (:mod:`mtboard.site.rundata`, issue 35 item 1). ``repository``: owner/name the run pages
    link each card's file in (:func:`mtboard.site.rundata.card_link`; None: the path as text). ``reuse``: each
    board's run pages, run data and compare data are read from it when their key is there, and stored in it when
    rendered (:mod:`mtboard.site.reuse`, issue 35 item 3; the text is the same either way)."""
    env = _env()
    index = licences.licence_index(inputs)
    env.globals["licence_of"] = lambda dataset_id, version: licences.licence_of(index, dataset_id, version)
    data = {} if data is None else data
    data.update(rundata.corpus_files(inputs, boards))
    pages: dict[str, str] = {}

    def text(path: str, template: str, **ctx: Any) -> str:
        ctx.setdefault("title", "")
        return env.get_template(template).render(**page_helpers(path), **ctx)

    def render(path: str, template: str, **ctx: Any) -> None:
        pages[path] = text(path, template, **ctx)

    # home, boards, domain views, downloads, methodology, changes: mtboard.site.boardpages (issue 12)
    for lb in boards:
        render(lb.hard_page, "hard.md.j2", title=fmt.safe_title(f"Hard items {lb.title}"), lb=lb,
               hard_share=stats.HARD_SHARE, pass_chrf=stats.PASS_CHRF, suspect_share=stats.SUSPECT_FAIL_SHARE,
               suspect_min=stats.SUSPECT_MIN_SYSTEMS, outputs=items.item_outputs(lb),
               outputs_total=items.item_methods(lb))
    render("hard/index.md", "hard_index.md.j2", boards=boards)
    summary = portrait.summaries(boards)
    for p in portraits:
        svgs = [(c["run"], charts.domain_bars(c["bars"], f"{p.slug}: {c['run']}")) for c in p.charts]
        lines = summary.get(p.slug, [])
        render(p.page, "portrait.md.j2", title=fmt.safe_title(f"Portrait {p.slug}"), p=p, charts=svgs,
               lines=lines, groups=portrait.groups(lines),
               text_datasets=sorted({(x["dataset"], x["version"]) for x in p.losses}))
    render("models/index.md", "models_index.md.j2", portraits=portraits,
           records=portrait.record_views(inputs.models))
    closest = tables.closest_runs(boards)
    keys = {lb.key: reuse.key(lb) for lb in boards} if reuse is not None else {}
    found = {lb.key: reuse.get(keys[lb.key], *_expected(lb)) for lb in boards} if reuse is not None else {}
    made = {lb.key: reuse_mod.Outputs() for lb in boards if found.get(lb.key) is None}
    compare_next, compare_boards = _render_compare(boards, closest, render, made)
    for lb in boards:
        out = found.get(lb.key) or made[lb.key]
        for lc in lb.cards:
            if lb.key in made:
                _run_outputs(lc, lb, closest.get(lc.page_id), compare_next.get(lc.page_id), text, out, repository)
            if runpage.review_page(lc) is not None:  # the old per-run review URL, kept as a redirect (issue 35)
                pages[runpage.REVIEW_STUB.format(id=lc.page_id)] = runpage.review_stub(lc.page_id)
        if reuse is not None and lb.key in made:
            reuse.put(keys[lb.key], out)
        pages.update(out.pages)
        data.update(out.data)
    render(runpage.REVIEW_PAGE, "review.md.j2", title="Review a run", data_pattern=rundata.RUN_URL)
    render("judges.md", "judges.md.j2", title="Judges", page=build_judges_page([lc for lb in boards for lc in lb.cards],
                                                                                inputs.anchors))
    render("compare.md", "compare.md.j2", title="Compare two runs", boards=compare_boards)
    render("rejected.md", "rejected.md.j2", rejected=inputs.rejected)
    return pages


def _expected(lb: Leaderboard) -> tuple[set[str], set[str]]:
    """The page and data paths of board ``lb``'s run outputs (:mod:`mtboard.site.reuse`): its run pages and compare
    data files (:func:`mtboard.site.compare.pairs_names`), and its run data files."""
    return ({tables.run_page(lc) for lc in lb.cards} | compare.pairs_names(lb),
            {rundata.run_url(lc) for lc in lb.cards})


def _run_outputs(lc: LoadedCard, lb: Leaderboard, near: tuple[LoadedCard, int] | None,
                 nxt: tuple[str, str] | None, text: Any, out: reuse_mod.Outputs, repository: str | None) -> None:
    """Render run ``lc``'s page and data file into ``out`` (``near``: its closest run and their differing
    components; ``nxt``: its compare link and label; ``text``: the page renderer)."""
    card = lc.card
    dec = tables.declared(lc)
    top = [("method class", card.method_class.value, "method_class"),
           ("condition", card.condition, "condition"),
           ("temperature", card.temperature, "temperature"), ("batch size", card.batch_size, "batch_size"),
           ("max retries", card.max_retries, "max_retries"),
           ("tools", ", ".join(card.tools_enabled) or None, "tools_enabled"),
           *tables.tool_rows(card), *tables.format_attempt_rows(card),
           *tables.prompt_choice_rows(card),
           ("coaching data SHA-256", card.coaching_data_sha256, "coaching_data_sha256"),
           ("FST version", card.fst_version, "fst_version"), ("model id (API)", card.model_id, "model_id"),
           ("harness version", card.harness_version, "harness_version"),
           ("timestamp", card.timestamp, "timestamp"),
           ("elapsed", fmt.secs(card.elapsed_seconds), "elapsed_seconds")]
    method_pairs = ([(_mark(label, dec and _is_declared(RunCard, name)), v) for label, v, name in top]
                    + [(f"method_config.{k}", v) for k, v in _scalar_pairs(card.method_config, set())]
                    + [(_mark(f"method.{k}", dec and _is_declared(MethodRecord, k)), v)
                       for k, v in _scalar_pairs(card.method, {"prompt_choice"})])
    score_pairs = _scalar_pairs(card.scores, {"signatures", "by_domain", "by_difficulty", "by_provenance"})
    score_pairs += [(f"totals.{k}", v) for k, v in _scalar_pairs(card.totals, set())]
    score_pairs += [(f"by_domain.{d}", f"n={b.n}, chrF++ {fmt.num(b.chrf_plus_plus, 1)}, composite "
                     f"{fmt.rate(b.composite)}") for d, b in sorted(card.scores.by_domain.items())]
    judge_sigs = [(f"judge {k}", f"{j.backend}:{j.model}, prompt {j.prompt_sha256[:12]}…"
                   + tables.admission_text(j)) for k, j in sorted(card.judges.items())]
    rp = runpage.context(lc, lb, nxt[0] if nxt else None, nxt[1] if nxt else None)
    review_link = runpage.review_page(lc)  # spec §7.3: one review page; the sample in the run's data file
    review = (rundata.review_data(lc, reviews.sheet(card, lc.path), tables.run_page(lc)[:-3] + ".html")
              if review_link is not None else None)
    out.data[rundata.run_url(lc)] = rundata.gz(rundata.run_data(
        lc, lb, rp["groups"], review,
        runpage.details_data(lc, score_pairs, method_pairs, judge_sigs, near[0].card if near else None)))
    path = tables.run_page(lc)
    out.pages[path] = text(path, "run.md.j2",
                           title=fmt.safe_title(f"Run {tables.method_name(card)}", keep=f" ({lc.page_id[:8]})"),
                           lc=lc, card=card, lb=lb, closest=near[0] if near else None,
                           closest_n=near[1] if near else 0, rp=rp, data_url=rundata.run_url(lc),
                           corpus_url=rundata.corpus_url(lc), card_url=rundata.card_link(lc, repository))


def _render_compare(boards: list[Leaderboard], closest: dict, render: Any, made: dict[str, reuse_mod.Outputs]
                    ) -> tuple[dict[str, tuple[str, str]], list[dict[str, Any]]]:
    """Compare data and static pages (:mod:`mtboard.site.compare`): per board ``data/pairs/<board>.json`` (into
    ``made[board]`` for a board whose run outputs are rendered, not reused) and one static page per adjacent or
    closest pair (:func:`compare.static_pairs`). Returns (run page id → (static page of it and the next row, or
    compare.html's URL for that pair beyond the static rows; that row's label), per board what compare.html lists)."""
    nxt: dict[str, tuple[str, str]] = {}
    listing: list[dict[str, Any]] = []
    for lb in boards:
        bc = compare.board_compare(lb)  # one board's bootstraps at a time (rows × resamples each)
        if bc is None:
            continue
        static = compare.static_pairs(bc, closest)
        data_path = compare.pairs_path(lb.key)
        if lb.key in made:
            for path, value in compare.pairs_files(bc, static).items():
                made[lb.key].pages[path] = compare.dumps(value)
        links = []
        for i, j in static:
            pr = compare.full_pair(bc, i, j)
            render(pr.page, "compare_pair.md.j2",
                   title=fmt.safe_title(f"Compare {tables.method_name(pr.a.lc.card)} vs "
                                        f"{tables.method_name(pr.b.lc.card)} · {lb.title}",
                                        keep=f" ({pr.a.lc.page_id[:8]} vs {pr.b.lc.page_id[:8]})"),
                   pr=pr, lb=lb, tie=compare.TIE_CHRF, p_text=compare.p_text, alpha=stats.ALPHA,
                   per_page=compare.SEGMENTS_PAGE, n_entries=len(bc.ids),
                   corpus=compare.corpus_path(lb),
                   data_a=compare.rundata_path(pr.a.lc.page_id), data_b=compare.rundata_path(pr.b.lc.page_id))
            links.append({"a": pr.a, "b": pr.b, "page": pr.page})
        for k, row in enumerate(bc.rows):
            other = k + 1 if k + 1 < len(bc.rows) else k - 1
            i, j = min(k, other), max(k, other)
            rank = bc.rows[other].rank
            target = (compare.static_page(bc.rows[i].lc, bc.rows[j].lc) if (i, j) in static else
                      f"compare.html?board={lb.key}&a={bc.rows[i].lc.page_id}&b={bc.rows[j].lc.page_id}")
            nxt[row.lc.page_id] = (target, f"rank {rank}" if rank not in ("reference", "ref.") else "the reference row")
        members = [r.lc.page_id for m in lb.views[0].methods for r in m.members]
        for m in lb.views[0].methods:  # a reproduction's run page links to its row's comparison
            for r in m.members:
                if r is not m.rep and m.rep.lc.page_id in nxt:
                    nxt[r.lc.page_id] = nxt[m.rep.lc.page_id]
        listing.append({"key": lb.key, "title": lb.title, "data": data_path, "links": links,
                        "runs": len(bc.rows), "ids": " ".join(members)})
    return nxt, listing


def nav(boards: list[Leaderboard], official: list[dict[str, str]] | None = None,
        sweeps: list[dict[str, Any]] | None = None,
        diagnostic: list[dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """Explicit MkDocs nav, shown as tabs on every page (``navigation.tabs``; the drawer on a phone), grouped as a
    visitor looks for things (issue 36 item 3): Home; Leaderboards (the boards' index, one entry per board, titles
    made safe: MkDocs does not escape; the official boards, ``{title: page}`` items of
    :mod:`mtboard.site.officialpages`, the sweeps and the diagnostic boards (:func:`mtboard.site.diagnostic.nav_items`),
    when there are any; hard items); Models; Compare; Runs; Changes; Methodology (its pages, judges, glossary,
    licences, contamination claims); Contribute (:mod:`mtboard.site.infopages`). A section's tab opens its first page."""
    boards_section: list[dict[str, Any]] = [{"All language pairs": "leaderboards/index.md"}]
    boards_section += [{fmt.safe_title(lb.title): lb.page} for lb in boards]
    if official:
        boards_section.append({"Official": official})
    if sweeps:
        boards_section.append({"Sweeps": sweeps})
    if diagnostic:
        boards_section.append({"Diagnostic": diagnostic})
    boards_section.append({"Hard items": "hard/index.md"})
    return [
        {"Home": "index.md"},
        {"Leaderboards": boards_section},
        {"Models": "models/index.md"},
        {"Compare": "compare.md"},
        {"Runs": [{"All runs": "runs/index.md"}, {"Rejected": "rejected.md"}]},
        {"Changes": [{"Changes": "changes.md"}, {"History": "history.md"}]},
        {"Methodology": [{"Overview": "methodology.md"},
                         *({title: page} for page, title in glossary.METHODOLOGY_PAGES.items()),
                         {"Judges": "judges.md"}, {"Glossary": "glossary.md"},
                         *({title: page} for page, title in glossary.PROGRAMME_PAGES.items()), {"Licences": "licences.md"},
                         {"Contamination": "contamination.md"}]},
        {"Contribute": "contribute.md"},
    ]


__all__ = ["render_pages", "nav", "rel_link", "page_helpers", "Markup"]
