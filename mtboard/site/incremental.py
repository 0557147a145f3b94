"""Re-render only what changed (issue 35 item 3): MkDocs rebuilds a page only when its Markdown changed.

``mtboard build --cache DIR`` renders the Markdown of every page (cheap) and keeps, in ``DIR/site/``, the HTML of the
pages it may skip next time, with ``DIR/site-manifest.json``: the SHA-256 of each page's Markdown bytes and a *global
hash* (:func:`global_hash`: ``mkdocs.yml``, the nav, ``site/assets``, ``site/overrides``, the ``mtboard`` code, the
installed distributions — MkDocs, Material, Markdown extensions — and the site URL).

A page is **skipped** (its previous HTML copied into the fresh staging site, its Markdown given an old mtime, MkDocs run
with ``dirty=True``, which then neither reads nor renders it: ``mkdocs/commands/build.py`` 1.6.1, ``_populate_page`` and
``_build_page`` test ``File.is_modified``, the output's mtime against the source's) only when all of these hold:

* the previous manifest is readable, of this format, and its global hash is this build's;
* its Markdown bytes are the previous build's, and they do not contain the file name (without ``.md``) of any page of
  the previous build that is gone — a page linking to a removed page must be rendered, so that MkDocs' strict link
  check fails the build as a full build would (a name that merely occurs in the text costs a rebuild, nothing else); and its front matter says ``search: exclude: true`` — Material's search
  plugin indexes only the pages it builds, so every page that belongs in the search index is always rebuilt;
* it is not in the nav (a nav page's title, read from its Markdown, appears on every page);
* its previous HTML is a regular file in the cache whose SHA-256 is the one the manifest recorded.

Every other file of the site — the other pages, the assets, ``search/search_index.json``, ``sitemap.xml``,
``404.html`` — is written by MkDocs into an empty staging folder, as a full build does; a page that disappeared is not
copied, so it is absent. The result is byte-identical to a full build of the same inputs (tests/test_site_incremental.py
compares every file).

The cache folder may come back from ``actions/cache``: the manifest is read with :mod:`mtboard.core.safejson` and used
only when every field has its type; cached pages are copied only when they are regular files (no links) inside
``DIR/site``. A cache that cannot be written is skipped (the build succeeds; the next one is a full one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mtboard.core import safejson
from mtboard.core.errors import MtboardError
from mtboard.ledger.cache import code_hash, installed_distributions

MANIFEST_FORMAT = "mtboard-site-cache/1"
"""The manifest's ``format``; hashed into the global hash."""
MANIFEST = "site-manifest.json"
SITE = "site"
MAX_MANIFEST_BYTES = 256 * 1024 * 1024
DIRTY_WARNING = "A 'dirty' build is being performed"
"""The start of the warning MkDocs logs for ``dirty=True`` (meant for ``mkdocs serve --dirty``): filtered out, since a
strict build counts warnings and this build's skipping is exact (module docstring)."""


def _tree_digest(h, label: str, folder: Path) -> None:
    h.update(f"\0{label}\0".encode())
    if not folder.is_dir():
        h.update(b"missing")
        return
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(f"{p.relative_to(folder).as_posix()}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\0".encode())


def global_hash(root: Path, nav: list, site_url: str | None) -> str:
    """SHA-256 (hex) of everything every page's HTML depends on besides its own Markdown (module docstring)."""
    h = hashlib.sha256()
    h.update(f"{MANIFEST_FORMAT}\0{code_hash()}\0{site_url or ''}\0".encode())
    h.update((root / "mkdocs.yml").read_bytes())
    h.update(json.dumps(nav, sort_keys=True, ensure_ascii=True).encode())
    _tree_digest(h, "assets", root / "site" / "assets")
    _tree_digest(h, "overrides", root / "site" / "overrides")
    h.update("\0".join(installed_distributions()).encode())
    return h.hexdigest()


def search_excluded(markdown: str) -> bool:
    """Whether a page's YAML front matter says ``search: exclude: true`` (the only pages that may be skipped)."""
    if not markdown.startswith("---"):
        return False
    from mkdocs.utils.meta import get_data  # noqa: PLC0415 - MkDocs' own front-matter reader

    meta = get_data(markdown)[1]
    search = meta.get("search") if isinstance(meta, dict) else None
    return isinstance(search, dict) and search.get("exclude") is True


def nav_files(nav) -> set[str]:
    """Every ``*.md`` path the nav (MkDocs' list of ``{title: path-or-list}``) names."""
    out: set[str] = set()
    if isinstance(nav, str):
        out.add(nav)
    elif isinstance(nav, list):
        for item in nav:
            out |= nav_files(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            out |= nav_files(value)
    return out


@dataclass
class Plan:
    """What this build takes from the cache: ``skip`` (Markdown paths whose HTML is reused); ``pages`` (every page's
    SHA-256) and ``skippable`` (the search-excluded pages not in the nav) for the next manifest; ``reason`` why nothing
    is reused, when nothing is."""

    cache: Path
    global_hash: str
    pages: dict[str, str]
    skippable: list[str]
    skip: set[str] = field(default_factory=set)
    reason: str = ""
    html: dict[str, list[str]] = field(default_factory=dict)
    """The previous manifest's ``html``: Markdown path → [output path, SHA-256 of the HTML] of each cached page."""


def _read_manifest(path: Path) -> dict | None:
    try:
        data = safejson.loads(safejson.read_bytes(path, max_bytes=MAX_MANIFEST_BYTES), where=str(path),
                              max_bytes=MAX_MANIFEST_BYTES)
    except (MtboardError, OSError):  # a cache path that is a file, unreadable …: no cache (issue 35 review)
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("global"), str):
        return None
    pages, html = data.get("pages"), data.get("html")
    if not isinstance(pages, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in pages.items()):
        return None
    if not isinstance(html, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
            for k, v in html.items()):
        return None
    return data


def plan(cache: Path, written: dict[str, bytes], nav, global_h: str) -> Plan:
    """Which pages of ``written`` (docs-relative path → the exact bytes written) can reuse their previous HTML."""
    in_nav = nav_files(nav)
    pages = {rel: hashlib.sha256(data).hexdigest() for rel, data in written.items() if rel.endswith(".md")}
    skippable = sorted(rel for rel in pages if rel not in in_nav
                       and search_excluded(written[rel].decode("utf-8", errors="replace")))
    result = Plan(cache, global_h, pages, skippable)
    old = _read_manifest(cache / MANIFEST)
    if old is None:
        result.reason = "no usable manifest"
    elif old["global"] != global_h:
        result.reason = "configuration, nav, theme, assets or code changed"
    else:
        gone = sorted({Path(rel).stem for rel in set(old["pages"]) - set(pages)})
        result.html = old["html"]
        result.skip = {rel for rel in skippable if old["pages"].get(rel) == pages[rel] and rel in old["html"]
                       and not any(name.encode() in written[rel] for name in gone)}
        if not result.skip:
            result.reason = "no skippable page kept its Markdown"
    return result


def _inside(base: Path, rel: str) -> Path | None:
    """``base/rel`` when ``rel`` is a plain relative path staying inside ``base`` (no ``..``, not absolute)."""
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not rel:
        return None
    return base / p


def stage(p: Plan, docs: Path, site: Path, dest_of) -> int:
    """Copy the reused pages' HTML from the cache into the empty staging ``site`` and give their Markdown under
    ``docs`` an old mtime (so MkDocs' dirty build skips them); ``dest_of(rel)``: a page's output path relative to
    the site. A cached page is reused only when its output path is the one this build would write, it is a regular
    file (no link at any level inside the cache) and its bytes hash to the manifest's SHA-256; otherwise that page is
    built. Returns the number of pages reused."""
    reused = set()
    cached_site = p.cache / SITE
    if cached_site.is_symlink() or not cached_site.is_dir():
        p.skip = set()
        return 0
    for rel in sorted(p.skip):
        out_rel, want = p.html[rel]
        if out_rel != dest_of(rel):
            continue
        src, dst, md = _inside(cached_site, out_rel), _inside(site, out_rel), _inside(docs, rel)
        if src is None or dst is None or md is None:
            continue
        try:
            if any(q.is_symlink() for q in [src, *src.parents] if q.is_relative_to(cached_site)) or not src.is_file():
                continue
            data = src.read_bytes()
            if hashlib.sha256(data).hexdigest() != want:
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)  # a copy: MkDocs must never write into the cache
            os.utime(dst, (2_000_000_000, 2_000_000_000))
            os.utime(md, (1_000_000_000, 1_000_000_000))
        except OSError:
            with contextlib.suppress(OSError):
                dst.unlink()
            continue
        reused.add(rel)
    p.skip = reused
    return len(reused)


def save(p: Plan, site: Path, dest_of) -> None:
    """Keep this build's skippable pages' HTML and the manifest in the cache: the pages into a fresh hidden folder,
    swapped in with two renames, then the manifest (removed first, written last: a build killed in between leaves no
    manifest, so the next build is a full one). The manifest records each page's HTML SHA-256, which :func:`stage`
    checks, so two builds saving into one cache at once cannot pair one's manifest with the other's pages. Failures
    are ignored (the cache only saves time)."""
    manifest = p.cache / MANIFEST
    new = aside = None
    try:
        p.cache.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            manifest.unlink()
        new = Path(tempfile.mkdtemp(prefix=f".{SITE}.", suffix=".new", dir=p.cache))
        html = {}
        for rel in p.skippable:
            out_rel = dest_of(rel)
            src, dst = _inside(site, out_rel), _inside(new, out_rel)
            if src is None or dst is None or src.is_symlink() or not src.is_file():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)  # the published tree is never written in place (replaced by a swap)
            except OSError:
                shutil.copyfile(src, dst)
            html[rel] = [out_rel, hashlib.sha256(dst.read_bytes()).hexdigest()]
        old = p.cache / SITE
        if old.is_symlink() or old.is_file():
            old.unlink()
        elif old.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{SITE}.", suffix=".old", dir=p.cache))
            os.replace(old, aside / SITE)
        os.replace(new, old)
        new = None
        data = json.dumps({"format": MANIFEST_FORMAT, "global": p.global_hash, "pages": p.pages, "html": html},
                          ensure_ascii=True, sort_keys=True, indent=0) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.", suffix=".tmp", dir=p.cache)  # O_EXCL: never a link
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("ascii"))
        os.replace(tmp, manifest)
    except OSError:
        pass
    finally:
        for leftover in (new, aside):
            if leftover is not None:
                shutil.rmtree(leftover, ignore_errors=True)


class DropDirtyWarning(logging.Filter):
    """Drops MkDocs' dirty-build warning (:data:`DIRTY_WARNING`) on ``mkdocs.commands.build``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_WARNING)
