"""Visitor tasks on the compare, run, portrait and hard-item pages in a real browser (issue 12 acceptance, tasks 2 and
4 and the run-page checks): Debian's headless Chromium driven by Playwright on the site built from the committed
cards, served by a local http.server; axe-core (axe-playwright-python ships axe.min.js) in the same browser.

Screenshots at 1366×900 and 390×844 go to $MTBOARD_SCREENSHOTS when set (else the test's tmp folder).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from browser_support import CHROMIUM, serving
from mtboard.site import runpage

ROOT = Path(__file__).resolve().parents[1]
BOARD = "mtb-en-es-dev-v1.0.0"
from test_site_pages import APERTIUM, CORPUS, GEMMA_FSC, _page_id  # noqa: E402 - page ids found by card name (they follow the seal)

GEMMA_DE = _page_id("mtb-en-de-dev/gemma-3-270m-q4-k-m.gguf__few-shot__*.json")
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}

pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
axe_api = pytest.importorskip("axe_playwright_python.sync_playwright")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def served(committed_site):
    """The committed cards' site (``committed_site``, tests/conftest.py: built once per session, stamped 2026-12-01
    00:00 UTC), served read-only."""
    with serving(committed_site.out) as port:
        yield f"http://127.0.0.1:{port}", committed_site.out


def _page(browser, viewport, js=True, color_scheme="light"):
    ctx = browser.new_context(viewport=viewport, java_script_enabled=js, color_scheme=color_scheme)
    pg = ctx.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    return ctx, pg


def _shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _portrait(out: Path) -> str:
    return "models/" + next((out / "models").glob("gemma-3-270m*.html")).name


def test_portrait_failure_modes_above_the_fold(served, browser, tmp_path):
    base, out = served
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        pg.goto(f"{base}/{_portrait(out)}")
        first = pg.locator("table.mtb-portrait-sum tbody tr:not(.mtb-grouprow)").first
        text = first.text_content()
        assert "%" in text and "field" in text and "source_untranslated" in text + pg.text_content(
            "table.mtb-portrait-sum")
        if vp is DESKTOP:  # the first six runs' summary lines above the fold at 1366×900 (Gemma has 15 runs since
            rows = pg.locator("table.mtb-portrait-sum tbody tr")  # the committed sweep: not all of them fit)
            assert rows.count() >= 6
            sixth = rows.nth(5).bounding_box()
            assert sixth["y"] + sixth["height"] <= vp["height"]
        else:
            box = first.bounding_box()
            assert box["y"] + box["height"] <= vp["height"]  # at least the first run's line on a phone
            assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        pg.screenshot(path=str(_shots(tmp_path) / f"portrait-{vp['width']}.png"))
        assert pg.errors == []
        ctx.close()


def test_compare_two_runs_difference_ci_p_and_outputs(served, browser, tmp_path):
    base, out = served
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        pg.goto(f"{base}/compare.html?board={BOARD}&a={APERTIUM}&b={GEMMA_FSC}")
        pg.wait_for_selector(".mtb-sbs tbody tr")
        verdict = pg.text_content(".mtb-verdict-s")
        assert "is better than" in verdict and "p < 0.001" in verdict
        table = pg.text_content(".mtb-verdict table")
        assert "+0.112 [+0.092, +0.133]" in table and "+11.8 [+9.8, +13.8]" in table and "< 0.001" in table
        assert "A better on 241 · tie on 29 · B better on 85" in pg.text_content(".mtb-verdict")
        visible = pg.locator(".mtb-sbs tbody tr:not([hidden])")
        assert visible.count() == 25
        first = visible.first.text_content()
        assert first.startswith("99") and "Jan." in first and "Ene." in first and "+100.0" in first
        assert "page 1 of 15" in pg.text_content(".mtb-pager")
        pg.screenshot(path=str(_shots(tmp_path) / f"compare-{vp['width']}.png"))
        if vp is DESKTOP:
            pg.check("input[name=mtb-k][value=b]")
            ks = pg.eval_on_selector_all(".mtb-sbs tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.k)")
            assert ks and all(k.split()[0] == "b" for k in ks)
            # swapping the runs flips the signs and the win counts (the pair is stored once)
            pg.goto(f"{base}/compare.html?board={BOARD}&a={GEMMA_FSC}&b={APERTIUM}")
            pg.wait_for_selector(".mtb-sbs tbody tr")
            assert "−0.112 [−0.133, −0.092]".replace("−", "-") in pg.text_content(".mtb-verdict table")
            assert "A better on 85 · tie on 29 · B better on 241" in pg.text_content(".mtb-verdict")
            # no board in the URL: the board holding run A is chosen (EN→DE's Gemma run)
            pg.goto(f"{base}/compare.html?a={GEMMA_DE}")
            pg.wait_for_selector(".mtb-sbs tbody tr")
            assert pg.input_value(".mtb-cmp-board") == "mtb-en-de-dev-v1.0.0"
            assert pg.input_value(".mtb-cmp-a") == GEMMA_DE
            # an id no board holds: the default pair, and a message saying so
            pg.goto(f"{base}/compare.html?a=deadbeef")
            pg.wait_for_selector(".mtb-sbs tbody tr")
            assert "No run deadbeef on this board" in pg.text_content(".mtb-cmp-out")
        else:
            assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        assert pg.errors == []
        ctx.close()


def test_compare_from_a_board_opens_that_board_on_its_two_best_methods(served, browser, tmp_path):
    """Issue 31 item 3: the board's Compare link opens the comparison of that board (EN→ES, not the first board in
    the list), on its two best distinct fingerprints — never a row against its own reproduction."""
    base, out = served
    pairs = json.loads((out / "data" / "pairs" / f"{BOARD}.json").read_text(encoding="utf-8"))
    runs = pairs["runs"]
    fps = json.loads((out / "data" / "pairs" / pairs["fp"]).read_text(encoding="utf-8"))["runs"]
    assert len({tuple(f) for f in fps}) == len(runs)  # one run per method row
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        pg.goto(f"{base}/leaderboards/{BOARD}.html")
        pg.click(".mtb-dl a:text-is('Compare')")
        pg.wait_for_selector(".mtb-cmp-out .mtb-cmp-head")
        assert pg.input_value(".mtb-cmp-board") == BOARD
        a, b = pg.input_value(".mtb-cmp-a"), pg.input_value(".mtb-cmp-b")
        assert (a, b) == (runs[0]["id"], runs[1]["id"]) and fps[0] != fps[1]
        assert a == APERTIUM  # rank 1 on EN→ES
        assert f"board={BOARD}" in pg.url
        pg.screenshot(path=str(_shots(tmp_path) / f"compare-from-board-{vp['width']}.png"))
        assert pg.errors == []
        ctx.close()


def test_a_flip_distance_opens_the_compare_page_on_its_segments(served, browser, tmp_path):
    """Issue 38 item 4: the board's ⇅N after a rank (the flip distance to the next ranked row) links to the compare
    page of those two rows, which lists the N segments (links to their rows) and shows only them side by side; the
    legal domain view's link opens the domain's pair and segments."""
    base, out = served
    ledger = json.loads((out / "data" / "ledger.json").read_text(encoding="utf-8"))
    board = next(b for b in ledger["boards"] if b["key"] == BOARD)
    for view, page in (("all", BOARD), ("legal", f"{BOARD}-legal")):
        top = next(r for r in board["rows"] if r["ranked"] and any(k["view"] == view and k["position"] == 1
                                                                    for k in r["ranks"]))
        flip = next(k for k in top["ranks"] if k["view"] == view)["flip"]
        nxt = next(r for r in board["rows"] if r["fingerprint"] == flip["below"])
        ctx, pg = _page(browser, DESKTOP)
        pg.goto(f"{base}/leaderboards/{page}.html")
        link = pg.locator("tr[data-row] td.c-rank a.fl").first
        assert link.text_content() == f"\u21c5{flip['segments']}"
        link.click()
        pg.wait_for_selector(".mtb-flipnote")
        pg.wait_for_selector(".mtb-sbs tbody tr", state="attached")
        shown_b = next(m["page"] for m in nxt["members"] if m["card"] == nxt["representative"])  # runs/<id>.html
        assert pg.input_value(".mtb-cmp-b") == shown_b[len("runs/"):-len(".html")]
        note = pg.text_content(".mtb-flipnote")
        assert f"Flip distance ({view}): removing these {flip['segments']} segments" in note
        assert [a.get_attribute("href") for a in pg.locator(".mtb-flipnote a").all()] == \
            [f"#seg-{i}" for i in flip["entries"]]
        shown = pg.locator(".mtb-sbs tbody tr:not([hidden])")
        assert pg.is_checked("input[name=mtb-k][value=flip]")
        ids = {int(shown.nth(k).get_attribute("id")[4:]) for k in range(shown.count())}
        assert ids <= set(flip["entries"]) and len(ids) == min(25, flip["segments"])  # the pager shows 25 a page
        assert f"({flip['segments']} entries)" in pg.text_content(".mtb-cmp .mtb-pager")
        pg.screenshot(path=str(_shots(tmp_path) / f"compare-flip-{view}.png"))
        assert pg.errors == []
        ctx.close()


def test_compare_without_javascript(served, browser, tmp_path):
    base, out = served
    ctx, pg = _page(browser, DESKTOP, js=False)
    pg.goto(f"{base}/compare.html")
    assert pg.locator("#mtb-cmp-app").is_hidden()
    assert "needs JavaScript" in pg.text_content(".mtb-nojs")
    pg.click(f".mtb-nojs a[href='compare/{APERTIUM}-{GEMMA_FSC}.html']")
    pg.wait_for_load_state()
    # the summary is static (issue 35 item 1); the side-by-side table says it needs JavaScript and links the data
    assert "+11.8 [+9.8, +13.8]" in pg.text_content(".mtb-verdict")
    assert "A better on 241 · tie on 29 · B better on 85" in pg.text_content(".mtb-verdict")
    assert pg.locator(".mtb-sbs tbody tr").count() == 0
    note = pg.locator(".mtb-sbs-note")
    assert note.is_visible() and "need JavaScript" in note.text_content()
    assert pg.get_attribute(".mtb-sbs-note a", "href") == f"../data/runs/{APERTIUM}.json.gz"
    assert "differing component" in pg.text_content(".mtb-cmp details summary")
    pg.screenshot(path=str(_shots(tmp_path) / "compare-static-nojs-1366.png"))
    ctx.close()


def _loaded(page_id: str):
    """The committed card ``page_id`` and its board as the site builds them (the field medians of its entries)."""
    from mtboard.ledger.build import build_ledger  # noqa: PLC0415
    from mtboard.ledger.load import load_inputs  # noqa: PLC0415

    boards = build_ledger(load_inputs(ROOT / "submissions", ROOT / "corpora", validate=False)).boards
    return next((lc, lb) for lb in boards for lc in lb.cards if lc.page_id == page_id)


def test_compare_static_page_with_javascript_fetches_its_table(served, browser, tmp_path):
    """Issue 35 item 1: the static pair page joins A's and B's gzip run data with the corpus texts in the browser —
    every entry, sorted by |Δ| (entry 99 first), 25 per page, filter and deep link as before."""
    base, out = served
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        requests = []
        pg.on("request", lambda r: requests.append(r.url))
        pg.goto(f"{base}/compare/{APERTIUM}-{GEMMA_FSC}.html")
        pg.wait_for_selector(".mtb-sbs tbody tr")
        assert pg.locator(".mtb-sbs-note").is_hidden()
        assert pg.locator(".mtb-sbs tbody tr").count() == 355
        visible = pg.locator(".mtb-sbs tbody tr:not([hidden])")
        assert visible.count() == 25 and "page 1 of 15" in pg.text_content(".mtb-pager")
        first = visible.first.text_content()
        assert first.startswith("99") and "Jan." in first and "Ene." in first and "+100.0" in first
        assert pg.get_attribute(".mtb-sbs tbody tr td.txt", "lang") == "en"
        assert {u.rsplit("/", 2)[-2] + "/" + u.rsplit("/", 1)[-1] for u in requests if u.endswith(".gz")} == {
            f"runs/{APERTIUM}.json.gz", f"runs/{GEMMA_FSC}.json.gz", f"corpora/{CORPUS}.json.gz"}
        if vp is DESKTOP:
            pg.check("input[name=mtb-k][value=b]")
            ks = pg.eval_on_selector_all(".mtb-sbs tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.k)")
            assert ks and all(k.split()[0] == "b" for k in ks)
            # a deep link to an entry on a later page opens that page
            rows = pg.eval_on_selector_all(".mtb-sbs tbody tr", "rs => rs.map(r => r.id)")
            pg.goto(f"{base}/compare/{APERTIUM}-{GEMMA_FSC}.html#{rows[300]}")
            pg.wait_for_selector(f"#{rows[300]}")
            assert pg.locator(f"#{rows[300]}").is_visible() and "page 13 of 15" in pg.text_content(".mtb-pager")
            header = pg.evaluate("document.querySelector('.md-header').getBoundingClientRect().bottom")
            assert pg.locator(f"#{rows[300]}").bounding_box()["y"] >= header
            assert pg.evaluate(f"document.getElementById('{rows[300]}').classList.contains('mtb-target')")
        else:
            assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        pg.screenshot(path=str(_shots(tmp_path) / f"compare-static-js-{vp['width']}.png"))
        assert pg.errors == []
        ctx.close()


def test_data_loader_explains_a_page_opened_as_a_file(committed_site, browser):
    """Under file:// a browser refuses fetch: the pair page keeps its summary and says how to serve the folder."""
    ctx, pg = _page(browser, DESKTOP)
    pg.goto((committed_site.out / "compare" / f"{APERTIUM}-{GEMMA_FSC}.html").as_uri())
    pg.wait_for_selector(".mtb-loadfail")
    msg = pg.text_content(".mtb-loadfail")
    assert "Could not load" in msg and "python3 -m http.server" in msg
    assert pg.locator(".mtb-sbs-note").is_visible() and "+11.8 [+9.8, +13.8]" in pg.text_content(".mtb-verdict")
    ctx.close()


def test_run_page_height_and_deep_link(served, browser, tmp_path):
    base, out = served
    seg = json.loads(gzip.decompress((out / "data" / "runs" / f"{GEMMA_FSC}.json.gz").read_bytes()))
    eid = seg["rows"][40][0]
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        pg.goto(f"{base}/runs/{GEMMA_FSC}.html")
        pg.wait_for_selector(".mtb-rd[data-loaded]", state="attached")  # rundata.js filled the entry tables
        # the same rows the server rendered before issue 35: every entry once in its domain, failures, losses
        assert pg.eval_on_selector_all(".mtb-domgroup tr[id^=\"seg-\"]", "rs => rs.length") == 355
        assert pg.eval_on_selector_all("table[data-group=failures] tbody tr", "rs => rs.length") == 10
        assert pg.eval_on_selector_all("table[data-group=losses] tbody tr", "rs => rs.length") == 20
        row = pg.locator("#seg-1 td")
        assert [row.nth(k).text_content() for k in (0, 1, 3, 4, 5, 6)] == [
            "1", "extensive proofreading by David Sewell",
            "extensa prueba de redacción por David Sewellraw output extensa prueba de redacción por David Sewell",
            "usable", "34.1", "+1.9"]  # Δ field: the median of two ranked systems (issue 38 withdrew one)
        # the semantic verdict beside the mechanical outcome (issue 36 item 4): entry 2 is usable but lost its meaning
        assert pg.locator("#seg-2 td").nth(4).text_content() == ("usable⚑ length.short⚑ partly_untranslated"
                                                                 "\u2260 meaning mismatch (semantic)")
        assert seg["rows"][1][0] == 2 and seg["rows"][1][10] == ["meaning-mismatch"]
        assert pg.get_attribute("#seg-8", "class") == "mtb-fail"
        # source, reference and output marked with their languages (the run's div carries them once for every table)
        assert [row.nth(k).get_attribute("lang") for k in (1, 2, 3)] == ["en", "es", "es"]
        assert pg.eval_on_selector_all("table[data-group=failures] td.txt[lang]", "cs => cs.length") == 30
        # a failed entry's semantic verdicts (0 by policy) are not repeated beside the failure
        assert pg.get_attribute("#seg-8", "data-f") == "failed source_untranslated"
        if vp is DESKTOP:  # every entry's chrF++ and "vs field" cells as the server rendered them before issue 35
            shown = pg.eval_on_selector_all(".mtb-domgroup tr[id^=\"seg-\"]", "rs => rs.map(r => [+r.id.slice(4), "
                                            "r.cells[5].textContent, r.cells[6].textContent])")
            lc, lb = _loaded(GEMMA_FSC)
            want = {}
            for r in lc.card.results:
                e = runpage.entry_row(r, lb.field_entry_median.get(r.entry_id))
                delta = "\u2014" if e["delta"] is None else f"{e['delta']:+.1f}"
                want[r.entry_id] = [r.entry_id, f"{e['chrf']:.1f}", delta]
            assert sorted(shown) == [want[k] for k in sorted(want)]
        height = pg.evaluate("document.documentElement.scrollHeight")
        if vp is DESKTOP:
            assert height <= 6000, height
        pg.screenshot(path=str(_shots(tmp_path) / f"run-{vp['width']}.png"))
        assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        # deep link: the entry's closed domain <details> opens and the row is on screen
        pg.goto(f"{base}/runs/{GEMMA_FSC}.html#seg-{eid}")
        pg.wait_for_selector(".mtb-rd[data-loaded]", state="attached")
        pg.wait_for_timeout(300)
        assert pg.evaluate(f"document.getElementById('seg-{eid}').closest('details').open")
        assert pg.locator(f"#seg-{eid}").is_visible()
        # below the sticky header (not under it) and outlined: the row is made by JavaScript, so :target never
        # matches it; pages.css repeats the scroll margin and pages.js marks it .mtb-target (issue 35 review)
        header = pg.evaluate("document.querySelector('.md-header').getBoundingClientRect().bottom")
        assert header <= pg.locator(f"#seg-{eid}").bounding_box()["y"] < vp["height"]
        assert pg.evaluate(f"getComputedStyle(document.getElementById('seg-{eid}')).outlineStyle") == "solid"
        other = seg["rows"][300][0]
        pg.evaluate(f"location.hash = '#seg-{other}'")
        pg.wait_for_timeout(300)
        assert pg.evaluate(f"document.getElementById('seg-{other}').closest('details').open")
        pg.screenshot(path=str(_shots(tmp_path) / f"run-deeplink-{vp['width']}.png"))
        # the outcome filter shows only matching entries and opens the groups holding them
        if vp is DESKTOP:
            pg.select_option("select.mtb-segsel", "source_untranslated")
            shown = pg.eval_on_selector_all(".mtb-domgroup tr[data-f]:not([hidden])", "rs => rs.length")
            assert shown == 36  # the re-made EN→ES few-shot card (issue 39): 36 echoes
            # issue 36 item 4: the semantic verdicts filter too, and the outcome cell says them
            dev = {i for k, ids in seg["groups"].items() if k.startswith("dom:") for i in ids}
            want = sum(1 for r in seg["rows"] if r[0] in dev and "meaning-mismatch" in r[10])
            pg.select_option("select.mtb-segsel", "meaning-mismatch")
            shown = pg.eval_on_selector_all(".mtb-domgroup tr[data-f]:not([hidden])", "rs => rs.length")
            assert want > 0 and shown == want
            cell = pg.locator(".mtb-domgroup tr[data-f]:not([hidden]) td[data-label=Outcome]").first.text_content()
            assert cell.startswith("usable") and "\u2260 meaning mismatch" in cell and cell.endswith(" (semantic)")
        assert pg.errors == []
        ctx.close()


def test_run_page_without_javascript_shows_its_summary(served, browser):
    """issue 35 item 1: without JavaScript the run page keeps its summary (scores, verification, details) and says
    the entry tables need JavaScript, linking the data file; no entry row is on the page."""
    base, out = served
    ctx, pg = _page(browser, DESKTOP, js=False)
    pg.goto(f"{base}/runs/{APERTIUM}.html")
    assert "Composite" in pg.text_content("table.mtb-foldt") and "chrF++" in pg.text_content("table.mtb-foldt")
    assert pg.locator("p.mtb-ver").is_visible() and "11 of 11 metrics identical" in pg.text_content("p.mtb-ver")
    note = pg.locator("p.mtb-rd-nojs")
    assert note.is_visible() and "need JavaScript" in note.text_content()
    href = note.locator("a").first.get_attribute("href")
    assert href == f"../data/runs/{APERTIUM}.json.gz" and (out / "runs" / href).resolve().is_file()
    assert pg.locator("tr[id^=\"seg-\"]").count() == 0
    assert pg.locator("details summary", has_text="Method configuration").count() == 1
    ctx.close()


def test_run_data_decoded_by_the_server_and_from_file_urls(served, browser):
    """rundata.js reads a data file a server already decoded (no gzip magic: parsed as-is), and on a file:// page,
    where fetch fails, says to open the site through a web server."""
    base, out = served
    ctx, pg = _page(browser, DESKTOP)
    pg.route("**/*.json.gz", lambda route: route.fulfill(
        status=200, content_type="application/json",
        body=gzip.decompress((out / route.request.url.split(base + "/", 1)[1]).read_bytes())))
    pg.goto(f"{base}/runs/{APERTIUM}.html")
    pg.wait_for_selector(".mtb-rd[data-loaded]", state="attached")
    assert pg.eval_on_selector_all(".mtb-domgroup tr[id^=\"seg-\"]", "rs => rs.length") == 355
    assert pg.errors == []
    ctx.close()
    ctx, pg = _page(browser, DESKTOP)
    pg.goto((out / "runs" / f"{APERTIUM}.html").as_uri())
    msg = pg.wait_for_selector(".mtb-rd-error").text_content()
    assert "Open the site through a web server (mtboard build --serve" in msg and "http.server" in msg
    ctx.close()
    # served, but the corpus file is missing (HTTP 404): the message names the file and the status, and gives no
    # file:// advice (issue 35 review)
    ctx, pg = _page(browser, DESKTOP)
    pg.route("**/data/corpora/*", lambda route: route.fulfill(status=404, body="not found"))
    pg.goto(f"{base}/runs/{APERTIUM}.html")
    msg = pg.wait_for_selector(".mtb-rd-error").text_content()
    assert f"corpora/{CORPUS}.json.gz: HTTP 404" in msg and "web server" not in msg
    ctx.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_no_serious_or_critical_violations(served, browser, scheme):
    base, out = served
    axe = axe_api.Axe()
    urls = [f"runs/{GEMMA_FSC}.html", f"runs/{APERTIUM}.html", _portrait(out), f"hard/{BOARD}.html",
            f"compare/{APERTIUM}-{GEMMA_FSC}.html", f"compare.html?board={BOARD}&a={APERTIUM}&b={GEMMA_FSC}",
            "sweeps/gemma-270m-temperature.html"]
    found = {}
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp, color_scheme=scheme)
        for url in urls:
            pg.goto(f"{base}/{url}")
            if url.startswith("compare.html"):
                pg.wait_for_selector(".mtb-sbs tbody tr")
            if url.startswith("runs/"):
                pg.wait_for_selector(".mtb-rd[data-loaded]", state="attached")
            if vp is PHONE:  # issue 36 item 6: no page scrolls sideways, no cell narrower than its longest word
                assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"], url
                cut = pg.eval_on_selector_all(
                    ".md-typeset :is(td, th)", "cs => cs.filter(c => c.offsetParent && c.closest('thead, tr').getBoundingClientRect().width > 2"
                    " && c.clientWidth < 60 && c.scrollWidth > c.clientWidth + 1)"  # a squeezed cell cuts a word
                    ".map(c => c.textContent.slice(0, 40))")
                assert cut == [], (url, cut[:5])
            res = axe.run(pg)
            bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                   for v in res.response["violations"] if v["impact"] in ("serious", "critical")]
            if bad:
                found[f"{vp['width']} {url}"] = bad
        ctx.close()
    assert found == {}


def test_sweep_page_grid_effects_and_phone(served, browser, tmp_path):
    """Issue 16: the sweep page shows the grid (every cell linked to its run), the factor effects with CIs and the
    heatmaps; at 390 px nothing but the table regions scrolls sideways."""
    base, out = served
    for vp in (DESKTOP, PHONE):
        ctx, pg = _page(browser, vp)
        pg.goto(f"{base}/sweeps/gemma-270m-temperature.html")
        assert pg.locator("h1").text_content().strip() == "Sweep gemma-270m-temperature"
        assert "11 of 11 cells have a card" in pg.text_content("article")
        grids = pg.locator("table.mtb-sweep caption")
        assert [grids.nth(i).text_content() for i in range(2)] == ["EN→ES · mtb-en-es-dev · 20 of 355 entries",
                                                                            "EN→FR · mtb-en-fr-dev · 20 of 355 entries"]
        links = pg.locator("table.mtb-sweep td a")
        assert links.count() == 11
        href = links.first.get_attribute("href")
        assert href.startswith("../runs/") and (out / "sweeps" / href).resolve().is_file()
        effects = pg.locator("table:has(caption#effects-cap) tbody tr")
        factors = [effects.nth(i).locator("td").first.text_content() for i in range(effects.count())]
        assert factors == ["prompt", "temperature"]
        assert pg.locator("caption", has_text="gemma-3-270m: prompt × temperature").count() == 1
        assert pg.locator("p.mtb-legend .mtb-swatch").count() >= 5  # each shaded table has its legend
        assert pg.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        pg.screenshot(path=str(_shots(tmp_path) / f"sweep-{vp['width']}.png"), full_page=True)
        assert pg.errors == []
        ctx.close()
