"""Issue 37 item 2 in a real browser: filters on every board (weights, size, licence, organisation, quantization,
method class), the live "Showing X of Y rows" count, the state in the URL (restored on load) and, with JavaScript off,
every row shown. Also item 4's "best of N" on a board row.

The site is built from tests/test_site_cards.py's hand-made cards (``write_fixture_tree``, no hostile card) plus three
hand-made model records written here (invented values, chosen to differ in weights, size and licence):

* ``toy-apertium`` (apertium/eng-spa): engine, open, no parameter count (size unknown), GPL-2.0-only;
* ``toy-gemma`` (google/gemma-3-270m, two cards: chat and few-shot): open, 268,098,176 parameters (< 1 B), gemma;
* ``toy-acme`` (acme/translate-pro, one full card and one --limit 4 subset): api-only, 120 B parameters (≥ 100 B),
  proprietary.

The echo and empty baselines have no record (every fact ``unknown``). The board's main table has 6 rows: apertium,
gemma-chat, gemma-fewshot, api, echo, empty (hand-counted from ``standard_cards``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from browser_support import CHROMIUM, serving  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

RECORDS = {
    "toy-apertium": """slug: toy-apertium
name: Toy Apertium
kind: engine
organisation: Apertium project
weights: open
licence: GPL-2.0-only
model_slugs: [apertium/eng-spa]
engine: {package: apertium-eng-spa}
""",
    "toy-gemma": """slug: toy-gemma
name: Toy Gemma
organisation: Google
weights: open
parameter_count: 268098176
licence: gemma
quantization: Q4_K_M
model_slugs: [google/gemma-3-270m]
""",
    "toy-acme": """slug: toy-acme
name: Toy Acme <b>Pro</b>
organisation: Acme "Corp" <i>
weights: api-only
parameter_count: 120000000000
licence: proprietary
model_slugs: [acme/translate-pro]
""",
}
BOARD = "leaderboards/toy-en-es-v1.0.0.html"


def _build(tmp_path_factory, name: str, page_rows: int | None = None) -> Path:
    from mtboard.site import boardpages, build_site
    from test_site_cards import write_fixture_tree

    root = tmp_path_factory.mktemp(name)
    write_fixture_tree(root, xss=False, bad=False)
    (root / "models").mkdir()
    for slug, text in RECORDS.items():
        (root / "models" / f"{slug}.yaml").write_text(text, encoding="utf-8")
    mp = pytest.MonkeyPatch()
    if page_rows is not None:  # the way tests/test_board_pages.py cuts the 6-row board into pages
        mp.setattr(boardpages, "BOARD_PAGE_ROWS", page_rows)
    try:
        build_site(root / "submissions", root / "corpora", root / "out", root / "docs",
                   build_time="2026-12-01T00:00:00Z")
    finally:
        mp.undo()
    return root / "out"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving(_build(tmp_path_factory, "filters-site")) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def served_paged(tmp_path_factory):
    """The same site with 2 ranked rows on a board's page 1: the main board is cut into several pages."""
    with serving(_build(tmp_path_factory, "filters-site-paged", page_rows=2)) as port:
        yield f"http://127.0.0.1:{port}"


def _shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _page(browser, width=1366, height=900, js=True):
    ctx = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=js)
    pg = ctx.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    return ctx, pg


def _visible_rows(pg) -> list[str]:
    return pg.eval_on_selector_all("#lb-main tbody tr", "els => els.filter(e => !e.hidden && e.offsetParent !== null)"
                                   ".map(e => e.getAttribute('data-f-weights') || 'unknown')")


def test_filters_count_url_and_restore(served, browser, tmp_path):
    ctx, pg = _page(browser)
    pg.goto(f"{served}/{BOARD}")
    assert len(_visible_rows(pg)) == 6
    count = pg.locator(".mtb-filtercount").first
    assert count.text_content() == "Showing 6 of 6 rows"
    assert count.get_attribute("aria-live") == "polite"
    weights = pg.get_by_label("Weights").first
    assert weights.evaluate("e => Array.from(e.options).map(o => o.value)") == ["", "api-only", "open", "unknown"]
    size = pg.get_by_label("Size").first
    assert size.evaluate("e => Array.from(e.options).map(o => o.textContent)") == [
        "all", "< 1 B", "≥ 100 B", "unknown size"]
    # untrusted record text is an option's text, never markup
    org = pg.get_by_label("Organisation").first
    assert 'Acme "Corp" <i>' in org.evaluate("e => Array.from(e.options).map(o => o.textContent)")
    weights.select_option("open")
    assert _visible_rows(pg) == ["open", "open", "open"]
    assert count.text_content() == "Showing 3 of 6 rows"
    size.select_option("lt1b")
    assert count.text_content() == "Showing 2 of 6 rows"
    assert "weights=open" in pg.url and "size=lt1b" in pg.url
    pg.screenshot(path=str(_shots(tmp_path) / "board-filters-1366.png"), full_page=True)
    # keyboard: focus the licence select and choose with the arrow keys
    pg.get_by_label("Weights").first.select_option("")
    pg.get_by_label("Size").first.select_option("")
    lic = pg.get_by_label("Licence").first
    lic.focus()
    assert pg.evaluate("document.activeElement.getAttribute('data-filter')") == "licence"
    lic.select_option("proprietary")
    assert count.text_content() == "Showing 1 of 6 rows"
    assert "licence=proprietary" in pg.url and "weights=" not in pg.url
    # sorting keeps the filter state in the URL
    pg.locator("#lb-main th.c-chrf button").click()
    assert "licence=proprietary" in pg.url and "sort=chrf" in pg.url
    # reload with the URL: the state restores
    pg.goto(f"{served}/{BOARD}?weights=open&size=lt1b")
    assert pg.get_by_label("Weights").first.input_value() == "open"
    assert pg.get_by_label("Size").first.input_value() == "lt1b"
    assert pg.locator(".mtb-filtercount").first.text_content() == "Showing 2 of 6 rows"
    # item 4: the better Gemma row says best of 2 and lists the other; the engine has a full run and a subset
    tries = pg.locator("#lb-main details.mtb-tries summary").all_text_contents()
    assert sorted(tries) == ["best of 2", "best of 2 (1 subset)"]
    assert pg.errors == []
    ctx.close()


def test_without_javascript_every_row_is_shown(served, browser, tmp_path):
    ctx, pg = _page(browser, js=False)
    pg.goto(f"{served}/{BOARD}?weights=open&size=lt1b")
    assert len(_visible_rows(pg)) == 6
    assert not pg.locator(".mtb-filters").first.is_visible()
    assert pg.locator(".mtb-filtercount").count() == 0
    ctx.close()


def test_phone_width(served, browser, tmp_path):
    ctx, pg = _page(browser, 390, 844)
    pg.goto(f"{served}/{BOARD}?weights=open")
    assert pg.locator(".mtb-filtercount").first.text_content() == "Showing 3 of 6 rows"
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    for sel in pg.locator(".mtb-filter select").all():
        box = sel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 24
    # a set filter keeps the disclosure open on a phone; without one it starts closed (six selects would fill the
    # screen) and the count stays visible
    assert pg.locator("details.mtb-filterbox").first.evaluate("d => d.open") is True
    assert pg.locator("details.mtb-filterbox > summary").first.text_content() == "Filter rows (1 set)"
    pg.screenshot(path=str(_shots(tmp_path) / "board-filters-390.png"), full_page=False)
    pg.goto(f"{served}/{BOARD}")
    assert pg.locator("details.mtb-filterbox").first.evaluate("d => d.open") is False
    assert pg.locator("details.mtb-filterbox > summary").first.text_content() == "Filter rows"
    assert pg.locator(".mtb-filtercount").first.text_content() == "Showing 6 of 6 rows"
    ctx.close()


def _hrefs(pg, selector: str) -> list[str]:
    return pg.eval_on_selector_all(selector, "els => els.map(e => e.getAttribute('href'))")


def test_url_value_no_row_has_stays_selected(served, browser):
    """A URL value that no row has is kept (an option "closed (no row)"), not silently dropped: 0 rows shown."""
    ctx, pg = _page(browser)
    pg.goto(f"{served}/{BOARD}?weights=closed&licence=GPL-2.0-only")
    weights = pg.get_by_label("Weights").first
    assert weights.input_value() == "closed"
    assert weights.evaluate("e => e.options[e.selectedIndex].textContent") == "closed (no row)"
    assert pg.get_by_label("Licence").first.input_value() == "GPL-2.0-only"
    assert pg.locator(".mtb-filtercount").first.text_content() == "Showing 0 of 6 rows"
    assert _visible_rows(pg) == []
    assert "weights=closed" in pg.url and "licence=GPL-2.0-only" in pg.url
    # the domain links carry the filter query (issue 37 item 2, item 3 of the review)
    domains = _hrefs(pg, ".mtb-domains a")
    assert domains and all(h.endswith("?weights=closed&licence=GPL-2.0-only") for h in domains), domains
    # a change of filter updates them; clearing every filter leaves them bare
    weights.select_option("")
    assert all(h.endswith("?licence=GPL-2.0-only") for h in _hrefs(pg, ".mtb-domains a"))
    pg.get_by_label("Licence").first.select_option("")
    assert all("?" not in h for h in _hrefs(pg, ".mtb-domains a"))
    # following a domain link keeps the state there
    pg.get_by_label("Weights").first.select_option("open")
    pg.locator(".mtb-domains a").first.click()
    pg.wait_for_load_state()
    assert "weights=open" in pg.url
    assert pg.get_by_label("Weights").first.input_value() == "open"
    assert pg.errors == []
    ctx.close()


def test_paginated_board_keeps_query_and_says_on_this_page(served_paged, browser):
    ctx, pg = _page(browser)
    pg.goto(f"{served_paged}/{BOARD}?weights=api-only")
    count = pg.locator(".mtb-filtercount").first.text_content()
    m = re.fullmatch(r"Showing (\d+) of (\d+) rows on this page \(page 1 of (\d+)\)", count)
    assert m and int(m.group(3)) >= 2, count
    # the options are the whole view's values, not only this page's (every fact of the 6 rows)
    weights = pg.get_by_label("Weights").first
    assert weights.evaluate("e => Array.from(e.options).map(o => o.value)") == ["", "api-only", "open", "unknown"]
    # every pager link (both pagers: short above, full below) keeps the query
    links = _hrefs(pg, "nav.mtb-pager a")
    assert links and all(h.endswith("?weights=api-only") for h in links), links
    # a change updates them, with the sort too
    pg.get_by_label("Size").first.select_option("ge100b")
    pg.locator("#lb-main th.c-chrf button").click()
    for h in _hrefs(pg, "nav.mtb-pager a"):
        assert "weights=api-only" in h and "size=ge100b" in h and "sort=chrf" in h, h
    # Next keeps the state on page 2, which says it is page 2
    pg.locator("nav.mtb-pager a[rel=next]").first.click()
    pg.wait_for_load_state()
    assert "weights=api-only" in pg.url and "size=ge100b" in pg.url
    assert pg.get_by_label("Weights").first.input_value() == "api-only"
    assert re.fullmatch(r"Showing \d+ of \d+ rows on this page \(page 2 of \d+\)",
                        pg.locator(".mtb-filtercount").first.text_content())
    # page 2's selects offer the whole view's values too
    assert pg.get_by_label("Weights").first.evaluate("e => Array.from(e.options).map(o => o.value)") == [
        "", "api-only", "open", "unknown"]
    assert pg.errors == []
    ctx.close()


def test_paginated_without_javascript(served_paged, browser):
    ctx, pg = _page(browser, js=False)
    pg.goto(f"{served_paged}/{BOARD}?weights=api-only")
    assert not pg.locator(".mtb-filters").first.is_visible()
    assert pg.locator(".mtb-filtercount").count() == 0
    assert len(_visible_rows(pg)) == pg.locator("#lb-main tbody tr").count() >= 2
    assert all("?" not in h for h in _hrefs(pg, "nav.mtb-pager a"))
    ctx.close()
