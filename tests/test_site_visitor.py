"""Visitor tasks on the boards (issue 12 acceptance), in Debian's Chromium driven by Playwright, on the site built
from the committed cards and served under a sub-path (``/mtboard/``) as GitHub Pages serves it.

Tasks: (1) from the home page, the best system for a pair and domain with its CI in ≤ 2 clicks; (3) verification
and date of every row visible without horizontal scrolling at 1366 px; sorting by keyboard with the state in the URL;
boards readable with JavaScript off; the styled 404 at any depth; axe-core (bundled by ``axe-playwright-python``)
reports no serious or critical violation on home, board, domain view, methodology, changes and 404, in the light
and the dark scheme. Screenshots at 1366×900 and 390×844 go to $MTBOARD_SCREENSHOTS (else the test's tmp folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser_support import CHROMIUM, serving
from mtboard.cli.site import SiteHandler
from mtboard.site import build_site

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "/mtboard/"
BOARD = "leaderboards/mtb-en-es-dev-v1.0.0.html"
LEGAL = "leaderboards/mtb-en-es-dev-v1.0.0-legal.html"
RUN_DRAWN = ".mtb-rd[data-loaded]"
"""Present once a run page's script has drawn the entries from the run's data (site/assets/rundata.js)."""
COMPARE_DRAWN = ".mtb-cmp-out .mtb-sbs tbody tr"
"""Present once the compare app has drawn its pair side by side from fetched data (site/assets/pages.js)."""

pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)


class _Quiet(SiteHandler):
    prefix = PREFIX

    def log_message(self, *args):  # noqa: D102
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory, build_cache):
    """The committed cards (schema-checked only: test_site_build validates them), built for and served under
    ``http://127.0.0.1:PORT/mtboard/``: (that base URL, the built site's folder)."""
    root = tmp_path_factory.mktemp("visitor")
    with serving(root / "out", _Quiet) as port:
        base = f"http://127.0.0.1:{port}{PREFIX}"
        build_site(ROOT / "submissions", ROOT / "corpora", root / "out", root / "docs", validate=False, site_url=base,
                   cache=build_cache)
        yield base, root / "out"


@pytest.fixture(scope="module")
def site(built):
    """The built site's base URL (:func:`built`)."""
    return built[0]



def _page(browser, width=1366, height=900, **kw):
    ctx = browser.new_context(viewport={"width": width, "height": height}, **kw)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None)
    pg.errors = errors
    return ctx, pg


def _shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_task1_best_system_for_pair_and_domain_in_two_clicks(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    card = pg.locator(".mtb-paircard", has_text="mtb-en-es-dev")
    assert "English \u2192 Spanish" in card.text_content()
    card.locator("a", has_text="legal").click()  # click 1 of at most 2
    pg.wait_for_load_state()
    assert pg.url.endswith(LEGAL)
    assert pg.text_content("h1").startswith("EN\u2192ES \u00b7 legal domain")
    first = pg.locator("#lb-main tbody tr").first
    assert first.locator("td.c-rank").text_content().split("\u21c5")[0] == "1"  # then ⇅N (issue 38 item 4)
    method = first.locator("th.c-method .mtb-m1").text_content()
    score = first.locator("td.c-composite").text_content()
    assert method and ("\u00b1" in score or "/\u2212" in score)  # the CI beside the score
    for el in (first.locator("th.c-method"), first.locator("td.c-composite")):
        box = el.bounding_box()
        assert box["y"] + box["height"] <= 900 and box["x"] + box["width"] <= 1366  # above the fold, unscrolled
    assert "Only 45 segments" in pg.text_content(".mtb-warn") and "UDHR" in pg.text_content(".mtb-warn")
    assert pg.errors == []
    ctx.close()


def test_task3_verification_and_date_without_horizontal_scroll(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    boards = pg.eval_on_selector_all(".mtb-paircard a.mtb-pc-title", "as => as.map(a => a.href)")
    assert len(boards) == 9  # + EN→ES dialogue (the dialogue-history sweep's cards, issue 40)
    for url in boards + [site + LEGAL]:
        pg.goto(url)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1366
        region = pg.locator(".mtb-board .mtb-region")
        assert region.evaluate("r => r.scrollWidth <= r.clientWidth"), url  # the table needs no scrolling
        rows = pg.locator("#lb-main tbody tr")
        assert rows.count() >= 2
        for i in range(rows.count()):
            for key in ("vtier", "date"):
                box = rows.nth(i).locator(f"td.c-{key}").bounding_box()
                assert box is not None and box["x"] + box["width"] <= 1366, (url, i, key)
                assert rows.nth(i).locator(f"td.c-{key}").text_content().strip()
    ctx.close()


def test_keyboard_sort_state_in_url(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + BOARD)
    for _ in range(80):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.closest('th') && "
                       "document.activeElement.closest('th').dataset.key === 'chrf'"):
            break
    else:
        pytest.fail("the chrF++ sort button is not reachable by Tab")
    pg.keyboard.press("Space")
    assert pg.get_attribute("#lb-main th[data-key=chrf]", "aria-sort") == "descending"
    assert pg.locator("#lb-main th[aria-sort]").count() == 1
    assert "sort=chrf" in pg.url and "dir=desc" in pg.url
    assert "Sorted by chrF++" in pg.text_content(".mtb-board [data-live]")
    pg.goto(pg.url)  # the URL reproduces the view
    assert pg.get_attribute("#lb-main th[data-key=chrf]", "aria-sort") == "descending"
    assert pg.errors == []
    ctx.close()


def test_boards_readable_without_javascript(site, browser):
    ctx, pg = _page(browser, java_script_enabled=False)
    pg.goto(site + BOARD)
    ranks = [r.split("\u21c5")[0] for r in  # the rank, without the flip distance after it (issue 38 item 4)
             pg.eval_on_selector_all("#lb-main td.c-rank", "els => els.map(e => e.textContent)")]
    assert ranks[0] == "1" and any("ref." in r for r in ranks)
    assert "\u00b1" in pg.text_content("#lb-main") or "/\u2212" in pg.text_content("#lb-main")
    assert pg.locator(".mtb-domains a").count() == 7 and pg.locator("a", has_text="CSV").count() == 1
    assert pg.locator("svg.mtb-chart").count() >= 2  # charts are inline SVG, no script
    ctx.close()


def test_styled_404_at_depth_under_the_sub_path(site, browser):
    ctx, pg = _page(browser)
    resp = pg.goto(site + "runs/deadbeef.html")
    assert resp.status == 404
    assert pg.text_content("h1") == "Page not found"
    bg = pg.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor")
    assert bg not in ("rgba(0, 0, 0, 0)", "transparent")  # Material's stylesheet loaded from /mtboard/assets/
    links = pg.eval_on_selector_all("article a", "as => as.map(a => a.href)")
    board = next(h for h in links if "/mtboard/leaderboards/" in h)
    assert pg.goto(board).status == 200
    assert pg.locator(".md-search__input").count() == 1
    ctx.close()


@pytest.fixture(scope="module")
def site_without_url(tmp_path_factory, build_cache):
    """The same site built without a site URL (``mtboard build`` with no ``--site-url``), served under the same
    sub-path: MkDocs then writes the 404 page with root-absolute links (issue 36 item 3)."""
    root = tmp_path_factory.mktemp("visitor-nourl")
    build_site(ROOT / "submissions", ROOT / "corpora", root / "out", root / "docs", validate=False, cache=build_cache)
    with serving(root / "out", _Quiet) as port:
        yield f"http://127.0.0.1:{port}{PREFIX}"


@pytest.mark.parametrize("depth", ["runs/deadbeef.html", "a/b/c/d.html", "nothing.html"])
def test_styled_404_at_any_depth_without_a_site_url(site_without_url, browser, depth):
    """The 404 page finds the site's root itself: its stylesheet, its links and the search come from /mtboard/, at
    any depth, although the build was not told the address."""
    ctx, pg = _page(browser)
    resp = pg.goto(site_without_url + depth)
    assert resp.status == 404
    assert pg.text_content("h1") == "Page not found"
    bg = pg.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor")
    assert bg not in ("rgba(0, 0, 0, 0)", "transparent")
    links = pg.eval_on_selector_all("article a", "as => as.map(a => a.href)")
    assert links and all(h.startswith(site_without_url) for h in links), links
    board = next(h for h in links if "/mtboard/leaderboards/" in h)
    tabs = pg.eval_on_selector_all(".md-tabs a", "as => as.map(a => a.href)")
    assert site_without_url + "methodology.html" in tabs  # the site-wide navigation points into the site too
    pg.click("label.md-search__icon, .md-search__input", timeout=5000)
    pg.type(".md-search__input", "Spanish", delay=40)  # the search worker and index load from the site's root
    pg.wait_for_selector(".md-search-result__item", timeout=15000)
    assert pg.goto(board).status == 200
    assert pg.errors == []
    ctx.close()


AXE_PAGES = ("index.html", BOARD, LEGAL, "methodology.html", "methodology/metrics.html", "methodology/composite.html",
             "glossary.html", "changes.html", "runs/deadbeef.html", "contribute.html", "licences.html",
             "models/index.html", "judges.html", "compare.html", "runs/index.html")


@pytest.mark.parametrize("width", [1366, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_no_serious_or_critical_violations(site, browser, scheme, width):
    """Every page type (issue 36: light and dark, desktop and phone; run, portrait and compare pages are checked in
    test_site_pages_browser.py), and no page scrolls sideways at 390 px."""
    axe_mod = pytest.importorskip("axe_playwright_python.sync_playwright")
    axe = axe_mod.Axe()
    ctx, pg = _page(browser, width, 900 if width > 600 else 844, color_scheme=scheme)
    found = {}
    for path in AXE_PAGES:
        pg.goto(site + path)
        if path == "compare.html":  # the app draws the default pair from fetched data after the load event
            pg.wait_for_selector(COMPARE_DRAWN)
        if path == BOARD:
            assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == (
                "slate" if scheme == "dark" else "default")
        if width == 390:
            assert pg.evaluate("document.documentElement.scrollWidth") <= 390, path
        res = axe.run(pg).response
        bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"][:3]]) for v in res["violations"]
               if v["impact"] in ("serious", "critical")]
        if bad:
            found[path] = bad
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())
    ctx.close()


def test_screenshots_and_phone_layout(site, browser, tmp_path):
    shots = _shots(tmp_path)
    for w, h in ((1366, 900), (390, 844)):
        ctx, pg = _page(browser, w, h)
        for name, path in (("home", "index.html"), ("board", BOARD), ("domain", LEGAL),
                           ("methodology", "methodology.html"), ("changes", "changes.html"),
                           ("404", "runs/deadbeef.html")):
            pg.goto(site + path)
            pg.screenshot(path=str(shots / f"boards-{name}-{w}x{h}.png"))
            assert pg.evaluate("document.documentElement.scrollWidth") <= w, (name, w)
        if w == 390:
            pg.goto(site + BOARD)
            assert pg.locator("#lb-main th.c-method").first.evaluate("e => getComputedStyle(e).position") == "sticky"
            rows = pg.locator("#lb-main tbody tr")
            assert rows.count() >= 3
            # no one-character wrapping: every method line is wider than three characters' width
            widths = pg.eval_on_selector_all("#lb-main .mtb-m1", "els => els.map(e => e.getBoundingClientRect().width)")
            assert min(widths) > 40
            # rank, method (with its verification) and composite ±CI fit without scrolling the table (issue 36
            # item 6); every other column is behind the "Show every column" switch
            region = pg.locator(".mtb-board .mtb-region").first
            assert region.evaluate("r => r.scrollWidth <= r.clientWidth")
            shown = pg.eval_on_selector_all("#lb-main thead th", "ths => ths.filter(t => t.offsetParent)"
                                            ".map(t => t.dataset.key)")
            assert shown == ["rank", "method", "composite"]
            first = rows.first
            assert "\u00b1" in first.locator("td.c-composite").text_content()
            assert first.locator(".mtb-vt-inline").is_visible()  # the verification, inline in the method cell
            pg.locator(".mtb-allcols").first.click()
            assert pg.locator("#lb-main th[data-key=chrf]").is_visible()
            assert not region.evaluate("r => r.scrollWidth <= r.clientWidth")  # now it scrolls sideways
            assert pg.evaluate("document.documentElement.scrollWidth") <= w  # inside its region only
        assert pg.errors == []
        ctx.close()


def test_search_finds_boards_by_language_name(site, browser):
    """Material's search titles entries by H1: board H1s are unique and name pair and dataset; the pair cards and
    context lines carry language names, so "Spanish" finds the EN→ES board."""
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    pg.click("label.md-search__icon, .md-search__input", timeout=5000)
    pg.type(".md-search__input", "Spanish", delay=40)  # key events: Material searches on keyup
    pg.wait_for_selector(".md-search-result__item", timeout=15000)
    titles = pg.eval_on_selector_all(".md-search-result__item", "els => els.map(e => e.textContent.trim())")
    assert titles[0].startswith("EN\u2192ES leaderboard \u00b7 mtb-en-es-dev v1.0.0"), titles[:3]  # boosted board first
    ctx.close()


SHOWN_HIDDEN = ("[...document.querySelectorAll('.md-typeset [hidden]')].filter(e => getComputedStyle(e).display "
                "!== 'none').map(e => e.tagName + '#' + e.id + '.' + e.className)")


def test_run_and_review_pages_read_their_data_under_the_sub_path(site, browser):
    """issue 35 item 1: the run page's entry tables and the review page's entries come from data files fetched by
    relative URLs, so they load under the sub-path too."""
    from test_site_pages import APERTIUM  # noqa: PLC0415 - the page id follows the committed card's seal

    ctx, pg = _page(browser)
    pg.goto(site + f"runs/{APERTIUM}.html")
    pg.wait_for_selector(RUN_DRAWN, state="attached")
    assert pg.eval_on_selector_all(".mtb-domgroup tr[id^=\"seg-\"]", "rs => rs.length") == 355
    # the detail tables built from the same data file (issue 35), the note that stood in for them gone
    ident = "details.mtb-more[data-key=identity] table.mtb-kv tr"
    assert pg.eval_on_selector_all(ident + " > th", "hs => hs.slice(0, 5).map(h => h.textContent)") == [
        "run id", "run card hash", "file", "entries", "errors"]
    assert pg.text_content(ident + ":nth-child(4) > td") == "355"
    assert pg.locator("details.mtb-more[data-key=method] table.mtb-kv tr").count() > 10
    assert pg.locator(".mtb-more-note").count() == 0
    assert pg.evaluate(SHOWN_HIDDEN) == []
    comps = pg.eval_on_selector_all("table[data-more=components] tbody th", "hs => hs.map(h => h.textContent)")
    assert comps == sorted(comps) and "model_slug" in comps and len(comps) > 10
    assert pg.eval_on_selector_all("table[data-more=components] thead th", "hs => hs.map(h => h.textContent)") == [
        "Component", "Value"]
    assert pg.text_content("table[data-more=signatures] tbody tr:first-child th") == "chrF++"
    assert pg.text_content("table[data-more=signatures] tbody tr:first-child td").startswith("nrefs:1|")
    # the table header the page no longer sends, built with the rows
    assert pg.eval_on_selector_all("table[data-group=losses] thead th", "hs => hs.map(h => h.textContent)") == [
        "Entry", "Source", "Reference", "Output", "Outcome", "chrF++", "vs field"]
    # the run page's "Review this run" opens the one review page (issue 35), which reads the run from ?run=
    pg.click("a.md-button:has-text('Review this run')")
    pg.wait_for_selector("#mtb-review[data-loaded]", state="attached")
    assert pg.url == site + f"review.html?run={APERTIUM}"
    assert pg.locator("fieldset.mtb-rv-entry").count() == 30
    # a full 30-entry sample: the "cannot confirm a tier" box stays hidden (Material's .admonition display rule once
    # overrode [hidden]; issue 35 review); no element marked hidden is displayed on the page
    assert pg.is_hidden("#mtb-rv-small")
    assert pg.evaluate(SHOWN_HIDDEN) == []
    assert pg.text_content("h1").startswith(f"Review run {APERTIUM[:8]} \u00b7 apertium:")
    assert pg.get_attribute("#mtb-rv-intro a.mtb-rv-run", "href") == f"runs/{APERTIUM}.html"
    assert pg.get_attribute("#mtb-review", "data-hash").startswith(APERTIUM)
    # the old per-run URL redirects there
    pg.goto(site + f"review/{APERTIUM}.html")
    pg.wait_for_url(site + f"review.html?run={APERTIUM}")
    pg.wait_for_selector("#mtb-review[data-loaded]", state="attached")
    assert pg.locator("fieldset.mtb-rv-entry").count() == 30
    # a run id that is not one: said, nothing fetched
    pg.goto(site + "review.html?run=nope")
    assert pg.text_content("#mtb-rv-pick") == "Not a run id: nope."
    assert pg.is_hidden("#mtb-review")
    assert pg.errors == []
    ctx.close()


def test_compare_pages_fetch_their_data_under_the_sub_path(site, browser):
    """Issue 35 item 1: the compare pages fetch pairs.json, its chunk and fingerprint files, both runs' gzip data and
    the corpus texts by relative URLs, so they work under /mtboard/ as at the root."""
    ctx, pg = _page(browser)
    pg.goto(site + "compare.html?board=mtb-en-es-dev-v1.0.0")
    pg.wait_for_selector(".mtb-sbs tbody tr")
    assert pg.locator(".mtb-sbs tbody tr").count() == 355
    assert "A better on 241 · tie on 29 · B better on 85" in pg.text_content(".mtb-verdict")
    pg.click(".mtb-cmp-out details summary")
    assert "differing component" in pg.text_content(".mtb-cmp-out details summary")
    assert pg.locator(".mtb-cmp-out details table tbody tr").count() >= 1
    static = pg.get_attribute(".mtb-nojs a", "href")
    pg.goto(site + static)
    pg.wait_for_selector(".mtb-sbs tbody tr")
    assert pg.locator(".mtb-sbs tbody tr").count() > 0 and pg.locator(".mtb-loadfail").count() == 0
    assert pg.errors == []
    ctx.close()


# --------------------------------------------------------------------------------------------------------------------
# The fourteen visitor tasks of issue 36, each from the home page in at most two clicks (counted: every click below is
# one the visitor makes), on the committed cards under the /mtboard/ sub-path. Tasks 10 and 11 at 390 px.

def _tab(pg, label: str) -> None:
    """Click a site-wide navigation tab (one click)."""
    pg.locator(".md-tabs__link", has_text=label).first.click()
    pg.wait_for_load_state()


def _open_board(pg) -> None:
    """From the home page, open the EN→ES board by its pair card's title (one click), and wait until it has loaded (a
    click returns once the navigation commits: a count or a page-wide read could see a half-parsed page)."""
    pg.locator(".mtb-paircard", has_text="mtb-en-es-dev").locator("a.mtb-pc-title").click()
    pg.wait_for_url("**/" + BOARD)


def _matrix_cell(pg, board: str, method_text: str):
    """The home matrix's link for ``method_text`` (in the row's method cell) on ``board``."""
    col = pg.eval_on_selector_all("#overview thead th", "ths => ths.map(t => t.dataset.board || '')").index(board)
    row = pg.locator("#overview tbody tr", has=pg.locator("th", has_text=method_text)).first
    return row.locator("td, th").nth(col).locator("a")


ES = "mtb-en-es-dev-v1.0.0"


def test_visitor_task01_best_for_a_domain_and_how_sure(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    pg.locator(".mtb-paircard", has_text="mtb-en-es-dev").locator("a", has_text="legal").click()  # 1
    pg.wait_for_url("**/" + LEGAL)
    first = pg.locator("#lb-main tbody tr").first
    assert first.locator("td.c-rank").text_content().split("\u21c5")[0] == "1"  # then ⇅N (issue 38 item 4)
    assert "\u00b1" in first.locator("td.c-composite").text_content() or "/\u2212" in first.locator(
        "td.c-composite").text_content()
    assert "Only 45 segments" in pg.text_content(".mtb-warn")  # how sure: the page says the domain is small
    ctx.close()


def test_visitor_task02_what_a_model_gets_wrong(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _tab(pg, "Models")  # 1
    pg.locator("table.mtb-models a", has_text="gemma").first.click()  # 2
    pg.wait_for_url("**/models/*.html")
    summary = pg.text_content("table.mtb-portrait-sum")
    assert "%" in summary and "field" in summary
    assert pg.locator("h2", has_text="Worst domains").count() == 1
    ctx.close()


def test_visitor_task03_verified_and_cost(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1
    first = pg.locator("#lb-main tbody tr").first
    assert first.locator("td.c-vtier").text_content().strip().endswith("re-run (maintainer re-run (unattested))")
    assert first.locator("td.c-cost").text_content().startswith("no API cost (local)")  # never a bare "$0"
    assert first.locator("td.c-vtier a.mtb-term").get_attribute("href").endswith(
        "glossary.html#maintainer-re-run-unattested")
    # the verification link's tooltip: not in every row's HTML (issue 35), copied from the legend by board.js
    assert first.locator("td.c-vtier a.mtb-term").get_attribute("title") == pg.locator(
        ".mtb-legend a.mtb-term[href$='#maintainer-re-run-unattested']").get_attribute("title") != ""
    # a declared value is marked ᵈ by the stylesheet (issue 35: not repeated in every row's HTML), italic and dotted
    date = first.locator("td.c-date span.mtb-decm")
    assert date.evaluate("e => getComputedStyle(e, '::after').content") == '"\u1d48" / ""'
    assert date.evaluate("e => getComputedStyle(e).fontStyle") == "italic"
    ctx.close()


def test_visitor_task04_compare_two(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1
    pg.click(".mtb-dl a:text-is('Compare')")  # 2
    pg.wait_for_selector(".mtb-sbs tbody tr")
    verdict = pg.text_content(".mtb-verdict")
    assert "is better than" in verdict and "p < 0.001" in verdict and "A better on" in verdict
    ctx.close()


def test_visitor_task05_cost_of_10000_segments(site, browser):
    """The committed runs are local: the board says what 10,000 segments cost in API fees (none), in words; a priced
    run's figure is tested on the hand-made cards (test_site_browser.py)."""
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1
    costs = pg.eval_on_selector_all("#lb-main td.c-cost", "els => els.map(e => e.textContent)")
    assert costs and all(c.startswith("no API cost (local)") for c in costs)
    assert pg.locator("input.mtb-costn-input").count() == 0  # nothing priced: no control to multiply nothing
    ctx.close()


def test_visitor_task06_find_a_hallucination(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _matrix_cell(pg, ES, "few-shot-completion").locator("strong").click()  # 1 (on the rank it shows)
    pg.wait_for_selector(RUN_DRAWN, state="attached")
    pg.select_option(".mtb-segsel", "hallucination")  # 2
    shown = pg.locator(".mtb-domgroup tr[data-f]:visible")  # the entries by domain, filtered
    assert shown.count() >= 1 and pg.text_content(".mtb-segcount") == f"{shown.count()} entries match"
    assert all("hallucination (semantic)" in t for t in shown.all_text_contents())
    ctx.close()


def test_visitor_task07_add_my_model(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _tab(pg, "Contribute")  # 1
    text = pg.text_content("article")
    assert "submissions/" in text and "mtboard run" in text and "scripts/setup.sh" in text
    ctx.close()


def test_visitor_task08_download_a_csv(site, browser):
    ctx, pg = _page(browser, accept_downloads=True)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1
    with pg.expect_download() as dl:
        pg.click(".mtb-dl a:text-is('CSV')")  # 2
    import csv  # noqa: PLC0415
    rows = list(csv.DictReader(open(dl.value.path(), encoding="utf-8")))
    assert rows[0]["rank_lo"] == "1" and rows[0]["composite"] == "0.570"  # rounded as the table shows it
    # 2 methods + 2 reference baselines, then the 5 sentinel lines (issue 38; the zero-shot run withdrawn)
    assert len(rows) == 9 and [r["method_class"] for r in rows].count("sentinel") == 5
    ctx.close()


def test_visitor_task09_what_changed(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _tab(pg, "Changes")  # 1
    assert pg.text_content("h1").startswith("Changes")
    every = pg.locator("h2", has_text="Every run card").locator("xpath=following::table[1]")
    dates = every.locator("td.mtb-nowrap").all_text_contents()
    assert dates and dates == sorted(dates, reverse=True)  # newest first
    ctx.close()


def test_visitor_task10_phone_board(site, browser):
    ctx, pg = _page(browser, 390, 844)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1 (loaded: the page as it settles; before the bundle: the no-JavaScript test)
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    first = pg.locator("#lb-main tbody tr").first
    for cell in ("th.c-method", "td.c-composite"):
        box = first.locator(cell).bounding_box()
        assert box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844
    assert first.locator(".mtb-vt-inline").is_visible()
    ctx.close()


def test_visitor_task11_phone_run_page(site, browser):
    ctx, pg = _page(browser, 390, 844)
    pg.goto(site + "index.html")
    _open_board(pg)  # 1
    pg.locator("#lb-main tbody tr").first.locator("th.c-method a").first.click()  # 2
    pg.wait_for_url("**/runs/*.html")
    pg.wait_for_selector(RUN_DRAWN, state="attached")  # the entries, built from the run's data
    assert pg.text_content("h1").startswith("Run ")
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    composite = pg.locator("table.mtb-foldt tr", has_text="Composite").first.bounding_box()
    assert composite["y"] < 844 * 2  # the summary is near the top, not under the entries
    ctx.close()


def test_visitor_task12_open_weight_models(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _tab(pg, "Models")  # 1
    weights = pg.eval_on_selector_all("table.mtb-models tbody tr", "rs => rs.map(r => r.cells[1].textContent)")
    assert any(w.startswith("open weights: GGUF file sha256") for w in weights)
    assert any(w.startswith("rule-based engine") for w in weights)
    ctx.close()


def test_visitor_task13_methodology_of_the_composite(site, browser):
    ctx, pg = _page(browser)
    pg.goto(site + "index.html")
    _tab(pg, "Methodology")  # 1
    pg.locator("dt#composite a").click()  # 2
    pg.wait_for_url("**/methodology/composite.html#composite")
    assert pg.locator("h2#composite").is_visible()
    assert pg.locator("table.mtb-plain caption", has_text="Profile A weights").count() == 1
    ctx.close()


def test_visitor_task14_without_javascript(site, browser):
    ctx, pg = _page(browser, java_script_enabled=False)
    pg.goto(site + "index.html")
    assert pg.locator("#overview tbody tr").count() >= 3  # the matrix is plain HTML
    _open_board(pg)  # 1
    ranks = [r.split("\u21c5")[0] for r in  # the rank, without the flip distance after it (issue 38 item 4)
             pg.eval_on_selector_all("#lb-main td.c-rank", "els => els.map(e => e.textContent)")]
    assert ranks[0] == "1" and "\u00b1" in pg.text_content("#lb-main")
    assert pg.locator(".mtb-domains a").count() == 7 and pg.locator(".mtb-dl a", has_text="CSV").count() == 1
    assert pg.locator(".md-tabs__link", has_text="Methodology").count() == 1
    ctx.close()


NARROW = 320
"""The narrowest phone the site is laid out for (design §3.11: phones up to 600 px, no page-level sideways scroll)."""


def _wider_than(pg, width: int) -> int | None:
    """The page's document width when it is wider than ``width``, else None."""
    got = pg.evaluate("document.documentElement.scrollWidth")
    return got if got > width else None


def test_phone_pages_are_never_wider_than_the_screen(built, browser):
    """Design §3.11 on the narrowest phone (320 x 700): no page is wider than the screen.

    First every page (redirect stubs left out) with JavaScript off -- as a phone shows a page without, or before,
    Material's bundle (which removes ``html.no-js`` first); then, with JavaScript, the pages whose scripts draw from
    fetched data (every run page's entries, the compare app's default pair) once drawn. Three faults of this kind, found
    on 2026-12-07: Material's header keeps the page title as a second topic, hidden and shifted 1.25rem right until the
    visitor scrolls, and without the bundle (no search or palette buttons) it ended at x = 403 on a 390 px phone on
    every page with a long title -- the CI caught it as a race in task 10, read before the bundle had run
    (site/assets/extra.css); the compare verdict's five-column table needs 334 px (pages.css lets it scroll); the
    "maintainer re-run (unattested)" badge is 298 px on one line (board.css lets badges wrap below 360 px). At least one
    page must have a title as wide as its header box, so the first case stays exercised."""
    base, out = built
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")
                   if 'http-equiv="refresh"' not in p.read_text("utf-8")[:4000])  # a meta refresh fires without JS too
    assert len(pages) >= 150 and BOARD in pages and LEGAL in pages
    ctx, pg = _page(browser, NARROW, 700, java_script_enabled=False)
    wide, full = {}, []
    for rel in pages:
        pg.goto(base + rel)
        if (width := _wider_than(pg, NARROW)) is not None:
            wide[rel] = width
        if pg.evaluate("(() => { const t = document.querySelector('.md-header__topic + .md-header__topic');"
                       " return t !== null && t.scrollWidth >= t.parentElement.clientWidth - 1; })()"):
            full.append(rel)
    ctx.close()
    assert wide == {}
    assert full, "no page's title fills the header: the hidden-title case is no longer exercised"
    ctx, pg = _page(browser, NARROW, 700)
    drawn = [rel for rel in pages if rel.startswith("runs/") and not rel.startswith("runs/index")]
    assert len(drawn) >= 30
    for rel in drawn + ["compare.html"]:
        pg.goto(base + rel)
        pg.wait_for_selector(RUN_DRAWN if rel.startswith("runs/") else COMPARE_DRAWN, state="attached")
        if (width := _wider_than(pg, NARROW)) is not None:
            wide[rel] = width
    assert wide == {}
    ctx.close()
