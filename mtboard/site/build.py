"""``mtboard build``: read cards and corpora, compute, render Markdown, run MkDocs (Material, strict).

Folders:
* committed sources: ``site/assets`` (copied into the docs folder) and ``site/overrides`` (theme ``custom_dir``),
  plus ``mkdocs.yml`` at the project root — never written by the build;
* generated docs folder (default ``build/docs``): the Markdown MkDocs reads, replaced by each build;
* output (default ``build/site``): the published site, replaced by each build.
Both generated folders are refused when they are, contain, or sit inside the project root's committed sources, and a
non-empty folder is only replaced when it carries the build's marker file (so ``--out ~`` cannot wipe a home folder).

Atomic publication (issue 34 item 1, :mod:`mtboard.core.publish`): each build writes the Markdown and MkDocs' HTML into
fresh hidden sibling folders (``build/.docs.mtboard-staging-…``, ``build/.site.mtboard-staging-…``) and swaps them in
with one ``renameat2(RENAME_EXCHANGE)`` each, the site first, only after MkDocs succeeded. A build that fails, is
cancelled or is killed (``SIGKILL`` in any phase: load, compute, render, MkDocs) leaves the previous site — and the
previous docs folder — byte for byte; its staging folders are removed by the next build.

Determinism: the same inputs give byte-identical files except the build timestamp on the home page and MkDocs'
sitemap dates (both follow ``SOURCE_DATE_EPOCH`` when set).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mtboard.score.metrics import bootstrap
from mtboard.core import names, publish
from mtboard.core.errors import ConfigError, InputError, storage_faults
from mtboard.ledger import document
from mtboard.ledger.build import build_ledger
from mtboard.core.cachefiles import prune_entries
from mtboard.ledger.diff import diff_ledgers, git_dates, load_previous
from mtboard.ledger.history import load_snapshots
from mtboard.ledger.load import Rejected, collector_paused, load_inputs, long_lived
from mtboard.site import (boardpages, diagnostic, incremental, infopages, officialpages, portrait, programme, render,
                          sweeps)
from mtboard.site.contamination import render_contamination_page
from mtboard.site.reuse import BoardReuse
from mtboard.site import boards as boards_view

DOCS_MARKER = ".mtboard-docs"
SITE_MARKER = ".mtboard-site"


MKDOCS_HOOKS = (Path(__file__).with_name("htmlstash.py"), Path(__file__).with_name("mkdocs_hooks.py"))
"""The MkDocs hooks every build runs (issue 35; each module's docstring), by absolute path from the installed
package: ``hooks:`` in ``mkdocs.yml`` would resolve against the config's folder, which need not hold ``mtboard/``
(the demo's scratch copy, an installed package). Neither changes a page's text: one skips Python-Markdown for
pre-rendered HTML blocks (byte-identical output), the other trims the theme's whitespace."""


@dataclass
class BuildReport:
    out: Path
    docs: Path
    cards: int
    rejected: list[Rejected]
    leaderboards: int
    models: int
    pages: int
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Time per phase in seconds: load, compute, render, mkdocs, publish (the swaps of the site and the docs
    folder and the removal of the previous trees; :mod:`mtboard.core.publish`)."""
    changes: list[str] = field(default_factory=list)
    """One line per change since ``previous`` (:meth:`mtboard.ledger.diff.LedgerDiff.lines`); empty without it."""
    cache_hits: int = 0
    """Cards whose validation verdict came from the cache (``cache``; :mod:`mtboard.ledger.cache`); 0 without one."""
    cache_misses: int = 0
    """Cards validated because the cache had no usable verdict; 0 without a cache."""
    card_hits: int = 0
    """Cards loaded as their stored header and summary, parsed only if a page reads their entries
    (:mod:`mtboard.ledger.cardcache`); 0 without a cache."""
    card_misses: int = 0
    """Cards parsed at load (and their header and summary stored) with a cache; 0 without one."""
    resample_hits: int = 0
    """Row-views whose bootstrap resamples came from the cache (:class:`mtboard.ledger.cache.ResampleCache`)."""
    resample_misses: int = 0
    """Row-views whose resamples were computed (and stored, with a cache); 0 without a cache."""
    flip_hits: int = 0
    """Adjacent pairs whose flip distance came from the cache (:class:`mtboard.ledger.cache.FlipCache`)."""
    flip_misses: int = 0
    """Adjacent pairs whose flip distance was searched (and stored, with a cache); 0 without a cache."""
    board_stats_hits: int = 0
    """Boards whose statistics (views, resamples, items) came from the cache
    (:class:`mtboard.ledger.boardstats.BoardStats`)."""
    board_stats_misses: int = 0
    """Boards whose statistics were computed (and stored) with a cache; 0 without one."""
    board_hits: int = 0
    """Boards whose run pages, run data and compare data came from the cache (:mod:`mtboard.site.reuse`)."""
    board_misses: int = 0
    """Boards whose run outputs were rendered (and stored) with a cache; 0 without one."""
    cache_pruned: int = 0
    """Cache entries removed because this build neither read nor stored them (``prune_cache``); 0 otherwise."""
    pages_reused: int = 0
    """Pages whose HTML came from the cache instead of MkDocs (:mod:`mtboard.site.incremental`); 0 without a cache
    or on a full build."""
    full_build_reason: str = ""
    """With a cache, why no page's HTML was reused (:attr:`mtboard.site.incremental.Plan.reason`); empty otherwise."""


def project_root() -> Path:
    """The folder holding ``mkdocs.yml`` and ``site/``: the working directory when it has them, else the checkout
    this package was imported from."""
    cwd = Path.cwd()
    if (cwd / "mkdocs.yml").is_file() and (cwd / "site").is_dir():
        return cwd
    here = Path(__file__).resolve().parents[2]
    if (here / "mkdocs.yml").is_file():
        return here
    raise ConfigError("mkdocs.yml not found", where=str(cwd),
                      fix="run `mtboard build` from the mtboard checkout (the folder with mkdocs.yml and site/)")


def _guard(path: Path, marker: str, root: Path, what: str) -> None:
    """Refuse to let a generated folder clobber sources; only empty folders or marked folders may be reused."""
    p = path.resolve()
    r = root.resolve()
    for src in (r / "site", r / "submissions", r / "corpora", r / "anchors", r / "mtboard", r / "tests", r / ".git"):
        if p == src or p.is_relative_to(src) or src.is_relative_to(p):
            raise ConfigError(f"{what} folder {p} overlaps the committed sources in {src}",
                              fix=f"choose another folder for the {what}, e.g. build/site")
    if Path.home().resolve().is_relative_to(p):
        raise ConfigError(f"{what} folder {p} contains the home folder", fix="choose an empty folder")
    if p.exists():
        if not p.is_dir() or p.is_symlink():
            raise ConfigError(f"{what} path {p} is not a folder", fix="choose an empty folder")
        if any(p.iterdir()) and not (p / marker).exists():
            raise ConfigError(f"{what} folder {p} is not empty and was not made by mtboard build",
                              fix="choose an empty folder or delete it first")


def _write(docs: Path, rel: str, text: str) -> bytes:
    """Write one page under ``docs``; returns the bytes written. Raises: ConfigError when ``rel`` would leave ``docs`` (a page name made from
    input — a board key, a snapshot name — must never reach another folder)."""
    path = docs / rel
    if not path.resolve().is_relative_to(docs.resolve()) or ".." in Path(rel).parts or Path(rel).is_absolute():
        raise ConfigError(f"page path {rel!r} leaves the docs folder", field="page",
                          fix="report this: a page name was made from unchecked input")
    data = visible(rel, text).encode("utf-8")
    _write_file(path, data)
    return data


def _write_file(path: Path, data: bytes) -> None:
    """Write one file of the Markdown folder (made from scratch each build: a plain write, not atomic_write).
    Raises: StorageError naming ``path`` when the storage refuses it (a full disk, a read-only file system …:
    issue 33 item 5 — a failed ``write`` names no file of its own)."""
    with storage_faults(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _copy_file(src: str, dst: str) -> None:
    """``shutil.copytree``'s copy function for the site's assets: ``shutil.copy2``, whose storage faults become a
    StorageError naming ``dst`` — copytree would otherwise collect them into one ``shutil.Error`` with no errno."""
    with storage_faults(dst):
        shutil.copy2(src, dst)


def visible(rel: str, text: str) -> str:
    """The last defence of every written page and download (issue 32 item 5): a JSON file gets each refused character
    as a ``\\uXXXX`` escape (:func:`mtboard.core.names.json_visible`: same parsed value, visible code point); any
    other file (Markdown, CSV, XML) has every bidirectional embedding, override and isolate and every tag character
    replaced by ``[⚠U+XXXX]`` (:func:`mtboard.core.names.mark`), so no text that reaches the site reorders what
    follows it. Names are isolated and marked earlier, where the pages render them (``<bdi>``)."""
    if rel.endswith(".json"):
        return names.json_visible(text)
    return names.mark(text, free_text=True)


def iso_time(stamp: str) -> str:
    """A build stamp (``2026-12-01 00:00 UTC``, as pages show it, or ISO 8601) as ISO 8601 UTC with seconds
    (``2026-12-01T00:00:00Z``): the ledger's ``built_at`` and the Atom feed's times (RFC 3339).

    Raises: ConfigError when the stamp is neither."""
    for parse in (lambda t: datetime.strptime(t, "%Y-%m-%d %H:%M UTC").replace(tzinfo=timezone.utc),
                  lambda t: datetime.fromisoformat(t).astimezone(timezone.utc)):
        try:
            return parse(stamp).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            continue
    raise ConfigError(f"build time {stamp!r} is not a date", field="build_time",
                      fix="give it as 2026-12-01 00:00 UTC or ISO 8601")


def _build_time() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    ts = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit() else datetime.now(timezone.utc)
    return ts.strftime("%Y-%m-%d %H:%M UTC")


def build_site(submissions: Path, corpora: Path | None, out: Path, docs: Path, *, validate: bool = True,
               resamples: int = bootstrap.BOOTSTRAP_RESAMPLES, run_mkdocs: bool = True,
               build_time: str | None = None, anchors: Path | None = None,
               site_url: str | None = None, attestation_repository: str | None = None,
               official: Path | None = None, secret_segment: Path | None = None,
               secret_source: str | None = None, previous: Path | None = None,
               snapshots: Path | None = None, cache: Path | None = None,
               prune_cache: bool = False) -> BuildReport:
    """Build the whole site. Returns a :class:`BuildReport`.

    ``attestation_repository``: owner/name whose verify workflow must have attested verification records and
    scores-only cards (:func:`mtboard.ledger.load.load_inputs`). ``official``: folder of scores-only gold cards for the
    official boards (None: ``<submissions>/../official`` when it exists; :mod:`mtboard.verify.official`).

    ``anchors``: folder of judge-reliability records (``mtboard anchor``) for the judges page (None: default
    ``<submissions>/../anchors`` when it exists).

    ``site_url``: the address the site is published at (GitHub Pages: ``https://<owner>.github.io/<repo>/``); MkDocs
    makes 404.html's links absolute with it so a missing page is styled at any depth (issue 12 item 11). None: unset
    (every other link is relative either way); ``mtboard build`` passes ``--site-url``, else ``$MTBOARD_SITE_URL``.

    ``previous``: the last build's ``data/ledger.json``: the changes page, its JSON and Atom feed and ``report.changes``
    list what changed since (:mod:`mtboard.ledger.diff`; without it every row is new). ``snapshots``: earlier ledgers,
    published as the board's dated history (:mod:`mtboard.ledger.history`; unreadable ones are warnings).

    ``secret_segment``: a secret-segment corpus file; with ``validate``, cards holding its text are rejected
    (``secret_source`` names it in the message; ``mtboard build`` passes ``$MTBOARD_SECRET_SEGMENT``).

    ``cache``: the build cache folder (issue 35 item 3; ``mtboard build --cache``, default ``$MTBOARD_CACHE`` else
    ``.mtboard-cache/``): validation verdicts by content (:mod:`mtboard.ledger.cache`; ``report.cache_hits`` and
    ``report.cache_misses`` count them), each card's header and summary by its bytes, so that a card with a verdict
    is parsed only when a page reads its entries (:mod:`mtboard.ledger.cardcache`; ``report.card_hits``/
    ``card_misses``), bootstrap resamples and adjacent rows' flip distances by content
    (``report.resample_hits``/``flip_hits`` and their misses), each board's statistics by the content they are made
    from (:mod:`mtboard.ledger.boardstats`; ``report.board_stats_hits``/``board_stats_misses``), each board's run pages, run data and compare data by
    the content they are made from (:mod:`mtboard.site.reuse`; ``report.board_hits``/``board_misses``), and the HTML
    of search-excluded pages, reused when their Markdown did not change (:mod:`mtboard.site.incremental`:
    byte-identical to a full build; ``report.pages_reused``). None: every
    card is validated and every page rendered, nothing is kept.

    ``prune_cache`` (with ``cache``; ``mtboard build`` does it unless ``--keep-cache``): once the pages are
    rendered, every entry of a kind this build looked up that it neither read nor stored is removed
    (:func:`mtboard.core.cachefiles.prune_entries`; ``report.cache_pruned`` counts them); a kind it looked nothing up
    in is left alone (verdicts of a ``validate=False`` build, everything but verdicts of a build that made no board). The folder then holds what the next build of the same
    tree can use, and no more: without it every code change adds a verdict per card, a resample per row-view, a flip
    per adjacent pair and a copy of every board's run pages. Off by default for callers that share one cache folder
    between builds of different trees (the test suite).

    ``docs`` and ``out`` are published atomically (module docstring, issue 34 item 1): on any exception, cancel or
    kill both keep their previous content byte for byte; with ``run_mkdocs`` False only ``docs`` is written.

    Raises: ConfigError (unsafe or missing folders, a mount point at ``out``/``docs``, MkDocs strict-mode failure),
    InputError (no submissions folder, an unreadable ``secret_segment``, a ``previous`` file that is not a ledger),
    StorageError (a full disk …, naming the page under ``docs``/``out``).
    Invalid cards never raise: they are listed in ``report.rejected`` and on the rejected page.
    """
    root = project_root()
    if not submissions.is_dir():
        raise InputError("submissions folder not found", where=str(submissions), fix="pass --submissions DIR")
    _guard(out, SITE_MARKER, root, "output")
    _guard(docs, DOCS_MARKER, root, "docs")
    if out.resolve().is_relative_to(docs.resolve()) or docs.resolve().is_relative_to(out.resolve()):
        raise ConfigError("docs and output folders overlap", fix="use separate folders, e.g. build/docs and build/site")
    _guard_cache(cache, out, docs)
    with long_lived() as settle:  # cards stay alive until the end of _made: out of the collector's scans (issue 35)
        made = _made(root, submissions, corpora, validate=validate, resamples=resamples, build_time=build_time,
                     anchors=anchors, site_url=site_url, attestation_repository=attestation_repository,
                     official=official, secret_segment=secret_segment, secret_source=secret_source,
                     previous=previous, snapshots=snapshots, cache=cache, settle=settle,
                     prune_cache=prune_cache)
        # the cards, boards and ledger are garbage now that _made returned (issue 35, "memory"), but the pages' Jinja
        # contexts hold boards (and through them cards) in reference cycles (a template's macros and its context
        # refer to each other). Collected here, while the cards are still frozen: the collector scans only what the
        # build made after computing (the cards and the ledger are frozen by then), not the cards' ~3 M objects, and
        # the cards then go by reference counting, before MkDocs holds every page. After the unfreeze the same
        # collection scanned everything: 2.9 s at 1,000 synthetic cards, 0.8 s here (most of it freeing the cards).
        gc.collect()
    # both folders are built beside themselves and swapped in only when the whole build succeeded (issue 34 item 1,
    # mtboard.core.publish): a failed, cancelled or killed build leaves the previous docs and site byte for byte
    with publish.staged(docs, marker=DOCS_MARKER) as docs_stage:
        written = _write_docs(docs_stage.path, root, made.pages, made.data)
        pages = len(made.pages)
        made.pages, made.data = {}, {}  # written holds the same bytes
        t4 = time.perf_counter()
        report = BuildReport(out, docs, made.cards, made.rejected, made.leaderboards, made.models, pages,
                             made.warnings, {**made.seconds, "render": t4 - made.rendering},
                             changes=made.changes, **made.counts)
        if run_mkdocs:
            plan = None
            if cache is not None:  # re-render only the pages whose Markdown changed (issue 35 item 3)
                plan = incremental.plan(cache, written, made.nav, incremental.global_hash(root, made.nav,
                                                                                          site_url or None))
            del written  # MkDocs reads the files
            with publish.staged(out, marker=SITE_MARKER) as site_stage:
                # the marker travels with the tree: the published folder always carries it (the next build's guard)
                _write_file(site_stage.path / SITE_MARKER, b"built by mtboard build\n")
                # MkDocs writes many files; a failed write names none
                with storage_faults(out, own_name_first=True):
                    report.pages_reused = _mkdocs(root, docs_stage.path, site_stage.path, made.nav,
                                                  site_url or None, plan)
                report.seconds["mkdocs"] = time.perf_counter() - t4
                report.full_build_reason = plan.reason if plan is not None and not report.pages_reused else ""
            # the site is out; the docs follow (a kill between the two leaves the previous docs: not published)
    if run_mkdocs:
        report.seconds["publish"] = time.perf_counter() - t4 - report.seconds["mkdocs"]
    return report


@dataclass
class _Made:
    """What the load, compute and render phases leave for writing and MkDocs: the pages and data files, the nav and
    the report's figures — no card, board or ledger, so that those are freed before MkDocs runs (issue 35,
    "memory": at 10,000 cards the held cards alone are ~11 GB)."""

    pages: dict[str, str]
    data: dict[str, bytes]
    nav: list
    cards: int
    rejected: list[Rejected]
    leaderboards: int
    models: int
    warnings: list[str]
    seconds: dict[str, float]
    """``load`` and ``compute``."""
    rendering: float
    """``time.perf_counter()`` when rendering began: the render phase lasts until the Markdown is written."""
    changes: list[str]
    counts: dict[str, int]
    """``cache_hits``, ``cache_misses``, ``card_hits``, ``card_misses``, ``resample_hits``, ``resample_misses``, ``flip_hits``, ``flip_misses``,
    ``board_stats_hits``, ``board_stats_misses``, ``board_hits``, ``board_misses``, ``cache_pruned``."""


def _made(root: Path, submissions: Path, corpora: Path | None, *, validate: bool, resamples: int,
          build_time: str | None, anchors: Path | None, site_url: str | None, attestation_repository: str | None,
          official: Path | None, secret_segment: Path | None, secret_source: str | None, previous: Path | None,
          snapshots: Path | None, cache: Path | None, settle, prune_cache: bool = False) -> _Made:
    """Load, compute and render (the phases of :func:`build_site` before writing; its arguments). Raises as
    :func:`build_site`."""
    t0 = time.perf_counter()
    prev = load_previous(previous) if previous is not None else None
    anchors, official = _beside(anchors, submissions, "anchors"), _beside(official, submissions, "official")
    inputs = load_inputs(submissions, corpora, validate=validate, anchors_dir=anchors,
                         attestation_repository=attestation_repository, secret_segment=secret_segment,
                         secret_source=secret_source, cache=cache, settle=settle)
    sealed = {lc.card.run_card_hash: lc.card for lc in inputs.cards if lc.card.run_card_hash}
    off_inputs, off_boards = _official(official, attestation_repository, inputs.warnings, resamples, sealed,
                                       secret_segment, secret_source)
    t1 = time.perf_counter()
    # No automatic collection while computing (issue 35): it makes hundreds of thousands of objects that live until
    # the pages are rendered and no reference cycle that dies before (every full collection of this phase freed 0
    # objects, in a warm and in a cold build of 1,000 synthetic cards; in the warm one they took ~1.5 s); what it
    # leaves goes with the collection after _made.
    with collector_paused():
        # every standing and rank, decided once (issue 31)
        ledger = build_ledger(inputs, resamples=resamples, cache=cache)
        boards = ledger.boards
        boards_view.fill_values(boards)
        officialpages.attach_gold_links(boards, off_boards)
        portraits = portrait.build_portraits(boards, inputs.models)
        portrait.attach_claims(portraits, ledger.claims)
        # the cards parsed while computing (a changed board's, mtboard.ledger.cardcache) and the ledger live until
        # the pages are rendered: frozen like the loaded cards, so the first full collection after the pause does
        # not scan them (2.5 s of the render phase at 1,000 synthetic cards, one board's 200 cards parsed here)
        settle()
    t2 = time.perf_counter()
    stamp = build_time or _build_time()
    doc, diff, dates, earlier = _ledger_outputs(ledger, root, submissions, stamp, prev, snapshots, inputs.warnings)
    data: dict[str, bytes] = {}  # corpus and run data files (gzip JSON, issue 35 item 1)
    reuse = BoardReuse.make(cache, inputs, doc, resamples=resamples, repository=attestation_repository)
    pages = render.render_pages(inputs, boards, portraits, stamp, data=data, repository=attestation_repository,
                                reuse=reuse)
    pages["data/ledger.json"] = document.dumps(doc)
    pages.update(boardpages.render_board_pages(inputs, boards, portraits, root, stamp, diff, dates, site_url,
                                               ledger=doc, snapshots=earlier, data=data))
    pages.update(infopages.render_info_pages(inputs, boards, root, repository=attestation_repository))
    pages.update(programme.render_programme_pages(inputs, root))  # costs, new languages (issue 39)
    pages.update(render_contamination_page(ledger.claims, boards, root, repository=attestation_repository))
    pages.update(diagnostic.render_diagnostic_pages(ledger.diagnostic, attestation_repository))  # issue 40
    official_shown = bool(off_inputs.rows or off_inputs.rejected)
    if official_shown:
        pages.update(officialpages.render_official_pages(inputs, off_inputs, off_boards))
        pages["data/official.json"] = json.dumps(officialpages.official_json(off_boards), ensure_ascii=False,
                                                 indent=1) + "\n"
    sweep_pages, sweep_nav, sweep_warnings = sweeps.build_pages(submissions.parent / "sweeps", submissions.parent,
                                                                boards, resamples)
    pages.update(sweep_pages)
    nav = render.nav(boards, officialpages.nav_items(off_boards) if official_shown else None, sweep_nav,
                     diagnostic.nav_items(ledger.diagnostic) if ledger.diagnostic else None)
    pruned = _prune(cache, inputs, ledger, reuse, validate) if prune_cache else 0  # every page is rendered
    counts = {"cache_hits": inputs.cache_hits, "cache_misses": inputs.cache_misses,
              "card_hits": inputs.card_hits, "card_misses": inputs.card_misses,
              "resample_hits": ledger.resample_hits, "resample_misses": ledger.resample_misses,
              "flip_hits": ledger.flip_hits, "flip_misses": ledger.flip_misses,
              "board_stats_hits": ledger.board_stats_hits, "board_stats_misses": ledger.board_stats_misses,
              "board_hits": reuse.hits if reuse else 0, "board_misses": reuse.misses if reuse else 0,
              "cache_pruned": pruned}
    return _Made(pages, data, nav, sum(len(lb.cards) for lb in boards), inputs.rejected, len(boards), len(portraits),
                 list(inputs.warnings) + sweep_warnings,
                 {"load": t1 - t0, "compute": t2 - t1}, t2, diff.lines() if prev is not None else [], counts)


def _prune(cache: Path | None, inputs, ledger, reuse: BoardReuse | None, validate: bool) -> int:
    """Remove the cache entries this build did not use, kind by kind (:func:`build_site`'s ``prune_cache``); returns
    how many. A kind this build looked nothing up in is left alone: verdicts and card entries of a build that did not
    validate or read no card, the resamples, flips, sentinels, board statistics and boards of a build that made no board (a wrong ``--corpora`` or an
    empty tree must not wipe the folder the site workflow saves), the boards of a build whose reuse was off
    (:meth:`BoardReuse.make` refused an input). Every lookup records its key, hit or stored, so a kind that was looked
    up has at least one key."""
    if cache is None:
        return 0
    kept = dict(ledger.cache_used)
    if validate:
        kept["validation"] = inputs.verdict_keys
        kept["cards"] = inputs.card_keys
    removed = sum(prune_entries(cache, kind, keys) for kind, keys in sorted(kept.items()) if keys)
    if reuse is not None and reuse.used:
        removed += reuse.prune()  # one entry per board
    return removed


def _guard_cache(cache: Path | None, out: Path, docs: Path) -> None:
    """Each build replaces ``out`` and ``docs``: a cache folder inside them would be wiped, one around them would hold
    the site (issue 35 review). Raises: ConfigError naming both folders."""
    if cache is None:
        return
    c = cache.resolve()
    for path, what in ((out.resolve(), "output"), (docs.resolve(), "docs")):
        if c.is_relative_to(path) or path.is_relative_to(c):
            raise ConfigError(f"cache folder {c} overlaps the {what} folder {path}", field="cache",
                              fix="choose a separate cache folder, e.g. .mtboard-cache (or --cache off)")


def _ledger_outputs(ledger, root: Path, submissions: Path, stamp: str, prev, snapshots: Path | None,
                    warnings: list[str]):
    """The published ledger (:mod:`mtboard.ledger.document`), the changes since ``prev``, when each card entered the
    repository, and the earlier snapshots (their problems appended to ``warnings``)."""
    doc = document.to_document(ledger, iso_time(stamp), document.git_commit(root))
    dates = git_dates(root, submissions)
    earlier, snapshot_warnings = load_snapshots(snapshots)
    warnings.extend(snapshot_warnings)
    return doc, diff_ledgers(prev, doc, dates), dates, earlier


def _beside(given: Path | None, submissions: Path, name: str) -> Path | None:
    """``given``, else the folder ``name`` beside ``submissions`` when it exists."""
    if given is None and (submissions.parent / name).is_dir():
        return submissions.parent / name
    return given


def _write_docs(docs: Path, root: Path, pages: dict[str, str], data: dict[str, bytes]) -> dict[str, bytes]:
    """The Markdown folder, into the fresh staging folder ``docs``: marker, the site's assets, every page and the
    binary data files (``data``: gzip JSON already escaped by :func:`mtboard.site.rundata.gz`). The cards themselves
    are not copied: each run page links its file in the repository (issue 35 item 1). Returns every page's path →
    the bytes written (:mod:`mtboard.site.incremental`)."""
    _write_file(docs / DOCS_MARKER, b"generated by mtboard build; replaced on every build\n")
    with storage_faults(docs / "assets", own_name_first=True):  # a folder copytree makes names itself
        shutil.copytree(root / "site" / "assets", docs / "assets", copy_function=_copy_file)
    written = {rel: _write(docs, rel, text) for rel, text in sorted(pages.items())}
    for rel, blob in sorted(data.items()):
        path = docs / rel
        if not path.resolve().is_relative_to(docs.resolve()):
            raise ConfigError(f"data path {rel!r} leaves the docs folder", field="data",
                              fix="report this: a data file name was made from unchecked input")
        _write_file(path, blob)
    return written


def _official(folder: Path | None, repository: str | None, warnings: list[str], resamples: int,
              dev_cards: dict | None = None, secret_segment: Path | None = None, secret_source: str | None = None):
    """Scores-only cards and official boards (:mod:`mtboard.verify.official`); cards that fail validation (with the
    secret corpus ``secret_segment`` when given: their entries must be its) or do not match the development card they
    name (``dev_cards``: run_card_hash → card) are rejected and become warnings."""
    from mtboard.validate.scores import SecretCorpus  # noqa: PLC0415
    from mtboard.verify.official import (build_official_boards, held_out_duplicates, load_official,  # noqa: PLC0415
                                  refuse_mislinked)
    from mtboard.verify.record import expected_signer  # noqa: PLC0415

    try:
        signer = expected_signer(repository)
    except InputError:
        signer = None
    secret = SecretCorpus.load(secret_segment, secret_source) if secret_segment is not None else None
    off = load_official(folder, signer, secret)
    refuse_mislinked(off, dev_cards or {})
    warnings.extend(f"official card rejected: {path}: {problems[0]}" for path, problems in off.rejected)
    warnings.extend(held_out_duplicates(off))
    return off, build_official_boards(off, resamples=resamples)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _mkdocs(root: Path, docs: Path, out: Path, nav: list, site_url: str | None = None,
            plan: incremental.Plan | None = None) -> int:
    """Run MkDocs in-process with the project's mkdocs.yml and our docs/site folders and nav (strict). With ``plan``,
    the pages it may skip get their previous HTML and MkDocs runs with ``dirty=True`` (:mod:`mtboard.site.incremental`),
    and the cache is updated after a successful build. Returns the number of pages whose HTML was reused."""
    # mkdocs (and its plugins) take a second to import: only when HTML is rendered (run_mkdocs=False skips it)
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    from mkdocs.structure.files import File

    collect = _Collect()
    log = logging.getLogger("mkdocs")
    log.addHandler(collect)
    quiet = incremental.DropDirtyWarning()
    logging.getLogger("mkdocs.commands.build").addFilter(quiet)
    reused = 0
    try:
        extra = {"site_url": site_url} if site_url else {}
        cfg = load_config(str(root / "mkdocs.yml"), docs_dir=str(docs.resolve()), site_dir=str(out.resolve()),
                          nav=nav, strict=True, hooks=[str(h) for h in MKDOCS_HOOKS], **extra)

        def dest_of(rel: str) -> str:
            return File(rel, cfg.docs_dir, cfg.site_dir, cfg.use_directory_urls).dest_uri

        if plan is not None:
            reused = incremental.stage(plan, docs, out, dest_of)
        build(cfg, dirty=reused > 0)
        if plan is not None:
            incremental.save(plan, out, dest_of)
        return reused
    except (MkDocsException, SystemExit) as exc:
        detail = "; ".join(collect.messages[:3]) or str(exc)
        raise ConfigError(f"MkDocs build failed: {detail}", where="mkdocs.yml",
                          fix="fix the warnings above (strict mode)") from None
    finally:
        log.removeHandler(collect)
        logging.getLogger("mkdocs.commands.build").removeFilter(quiet)
