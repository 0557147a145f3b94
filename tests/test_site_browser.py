"""Real browser test (issue 7): Debian's headless Chromium driven by Playwright opens the built site from a local
http.server, sorts a column, uses the domain filter, opens a failure portrait and a hostile card's pages, takes
screenshots, and listens for dialogs and console errors (an executed XSS payload would raise a dialog).

Cards are the hand-made fixtures of tests/test_site_cards.py (real scoring, hand-typed outputs).
Screenshots are written to $MTBOARD_SCREENSHOTS when set (else the test's tmp folder).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mtboard.ledger import tables

sys.path.insert(0, str(Path(__file__).parent))
from browser_support import CHROMIUM, serving  # noqa: E402


pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def served(fixture_site):
    """The hand-made cards' site (``fixture_site``, tests/conftest.py: built once per session), served read-only."""
    root, cards, _ = fixture_site
    with serving(root / "out") as port:
        yield f"http://127.0.0.1:{port}", cards, root


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    events: list[tuple[str, str]] = []
    pg.on("dialog", lambda d: (events.append(("dialog", d.message)), d.dismiss()))
    pg.on("console", lambda m: events.append(("console", m.text)) if m.type == "error" else None)
    pg.on("pageerror", lambda e: events.append(("pageerror", str(e))))
    pg.events = events
    yield pg
    ctx.close()


def _shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _column(pg, key: str) -> list[str]:
    texts = pg.eval_on_selector_all(f"#lb-main tbody tr:not([hidden]) .c-{key}", "els => els.map(e => e.textContent)")
    # the rank cell's text: the rank without the flip distance to the next row after it (⇅N; issue 38 item 4)
    return [t.split("\u21c5")[0] for t in texts] if key == "rank" else texts


def _value(text: str) -> float:
    """The value of a '48.2 +1.2/−1.4' cell (issue 12: the CI sits beside the value)."""
    return float(text.split()[0])


def test_sort_filter_and_portrait(served, page, tmp_path):
    base, cards, root = served
    page.goto(f"{base}/leaderboards/toy-en-es-v1.0.0.html")
    ranks = _column(page, "rank")
    assert ranks[0] == "1" and len(ranks) == 7
    # column sort (a button in each header, issue 12): chrF++ best first on the first press, reversed on the second
    page.click("#lb-main th[data-key=chrf] button")
    chrf = [_value(x) for x in _column(page, "chrf")]
    assert chrf == sorted(chrf, reverse=True)
    assert page.get_attribute("#lb-main th[data-key=chrf]", "aria-sort") == "descending"
    assert "sort=chrf" in page.url and "dir=desc" in page.url
    page.click("#lb-main th[data-key=chrf] button")
    chrf = [_value(x) for x in _column(page, "chrf")]
    assert chrf == sorted(chrf)
    # the method column sorts by name, A first (its cells carry their place among the page's names, not the names:
    # issue 35); the order is the one of the cards' method names, lower-cased
    page.click("#lb-main th[data-key=method] button")
    shown = page.eval_on_selector_all("#lb-main tbody tr", "rows => rows.map(r => r.dataset.row)")
    names = {c.run_card_hash[:16]: tables.method_name(c).lower() for c in cards.values()}
    assert [names[r] for r in shown] == sorted(names[r] for r in shown) and len(shown) == 7
    assert page.get_attribute("#lb-main th[data-key=method]", "aria-sort") == "ascending"
    page.click("#lb-main th[data-key=cost] button")  # unrecorded costs stay last in both directions
    costs = _column(page, "cost")
    assert costs[-1] == "not priced" and costs[0] != "not priced"
    page.screenshot(path=str(_shots(tmp_path) / "leaderboard-sorted.png"), full_page=True)
    # domain views are links (issue 12): the legal page's numbers are the legal entries' numbers
    page.click(".mtb-domains a >> text=legal")
    page.wait_for_load_state()
    # the domain link keeps the board's query (issue 37: filters and sort carry over to the domain view)
    assert page.url.split("?")[0].endswith("toy-en-es-v1.0.0-legal.html") and "sort=cost" in page.url
    assert "4 segments" in page.text_content(".mtb-context")
    legal = {c.run_card_hash[:16]: c for c in cards.values() if len(c.results) == 12}
    shown = page.eval_on_selector_all(
        "#lb-main tbody tr", "rows => rows.map(r => [r.dataset.row, r.querySelector('td.c-chrf').textContent])")
    assert len(shown) == 7
    for rid, text in shown:
        assert _value(text) == round(legal[rid].scores.by_domain["legal"].chrf_plus_plus, 1)
    page.screenshot(path=str(_shots(tmp_path) / "leaderboard-legal.png"), full_page=True)
    # failure portrait via the model column, shown with the column picker
    page.click("details.mtb-cols summary")
    page.check("#col-model")
    assert "cols=model" in page.url
    page.click("#lb-main tbody td.c-model a >> text=google/gemma-3-270m")
    page.wait_for_load_state()
    assert page.url.endswith(tables.model_page("google/gemma-3-270m").replace(".md", ".html"))
    assert page.locator("svg.mtb-chart").count() >= 2
    assert page.locator("h2", has_text="Largest losses against the field median").count() == 1
    page.screenshot(path=str(_shots(tmp_path) / "portrait.png"), full_page=True)
    assert page.events == []


def test_hostile_card_renders_as_text(served, page, tmp_path):
    base, cards, root = served
    xss = cards["xss"]
    urls = [f"/runs/{xss.run_card_hash[:16]}.html", tables.model_page(xss.model_slug).replace(".md", ".html"),
            "/models/index.html", "/leaderboards/toy-en-es-v1.0.0.html", "/runs/index.html", "/compare.html",
            "/rejected.html", "/index.html"]
    for url in urls:
        page.goto(base + "/" + url.lstrip("/"))
        page.wait_for_load_state("load")
        assert page.locator("img[src=x]").count() == 0
        assert page.locator("a[href^='javascript']").count() == 0
        assert "<" not in page.title()  # sanitised look-alikes only
    page.goto(f"{base}/runs/{xss.run_card_hash[:16]}.html")
    body = page.text_content("body")
    assert "<script>alert(1)</script>" in body and "[click](javascript:alert(3))" in body  # visible as text
    page.screenshot(path=str(_shots(tmp_path) / "xss-run.png"), full_page=True)
    # compare view fills its table with textContent
    page.goto(f"{base}/compare.html?a={xss.run_card_hash[:16]}")
    page.wait_for_selector(".mtb-cmp-table tbody tr", state="attached")  # in the closed fingerprint <details>
    assert "<script>" in page.text_content(".mtb-cmp-table")
    # search (Material's client-side search) for the payload must not execute anything either
    page.goto(f"{base}/index.html")
    page.click("label.md-search__icon, .md-search__input", timeout=5000)
    page.fill(".md-search__input", "script alert")
    page.wait_for_timeout(1500)
    assert page.events == [], page.events


def test_cost_of_n_segments_on_the_board_and_the_run_page(served, page):
    """issue 36 item 5: the declared cost per segment times the visitor's N, computed in the page with the rule the
    board uses for dollars (mtboard.core.fmt.usd); N in the URL; runs without a positive declared cost show none."""
    base, cards, root = served
    page.goto(f"{base}/leaderboards/toy-en-es-v1.0.0.html")
    row = page.locator("#lb-main tbody tr", has_text="acme/translate-pro")
    assert row.locator(".mtb-costn").text_content() == "$21.000 for 10,000 segments"  # 0.0021 × 10,000
    # the two priced rows (the API one and the hostile card at $0.0005); $0, local and unpriced rows have none
    assert page.locator("#lb-main .mtb-costn").count() == 2
    box = page.locator("input.mtb-costn-input")
    box.fill("500")
    assert row.locator(".mtb-costn").text_content() == "$1.050 for 500 segments"
    assert "segments=500" in page.url
    page.goto(page.url)  # the URL keeps N
    assert row.locator(".mtb-costn").text_content() == "$1.050 for 500 segments"
    box.fill("3")
    assert row.locator(".mtb-costn").text_content() == "$0.0063 for 3 segments"  # below a cent: 6 decimals
    box.fill("0")  # not a number of segments: the figures stay as they were
    assert row.locator(".mtb-costn").text_content() == "$0.0063 for 3 segments"
    page.goto(f"{base}/leaderboards/toy-en-es-v1.0.0.html")
    run = row.locator("th.c-method a").first.get_attribute("href")
    page.goto(f"{base}/leaderboards/{run}")
    assert page.locator(".mtb-costn").text_content() == "$21.000 for 10,000 segments"
    page.locator("input.mtb-costn-input").fill("1000000")
    assert page.locator(".mtb-costn").text_content() == "$2100.000 for 1,000,000 segments"
    assert [e for e in page.events if e[0] != "console" or "404" not in e[1]] == []
