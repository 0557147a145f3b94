"""Issue 32 item 5 acceptance, in Debian's headless Chromium (Playwright): a card whose model name is a right-to-left
override followed by "apertium/eng-spa" written backwards — on a page that applied the override it would read as
Apertium's own row — reaches a site built without the validator (``validate=False``: the path an older or
unvalidated card still takes). On every page that shows it (the board, its run page, the runs and models indexes,
the changes page, a compare page) the name is inside ``<bdi>`` with the visible marker ``[⚠U+202E]``, no U+202E is
left in the document or its title, and the text is laid out in its logical order (the first character of the name
is left of its last). The CSV and JSON downloads show the code point too.

Fixture: two committed EN→ES cards copied as they are, plus the committed empty-baseline card with its model names
replaced (schema-valid; not re-sealed — nothing validates it on this path). Screenshots at 1366×900 and 390×844 are
written to $MTBOARD_SCREENSHOTS when set (else the test's tmp folder).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser_support import CHROMIUM, serving  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "submissions" / "mtb-en-es-dev"
SPOOF = "\u202e" + "aps-gne/muitrepa"
SHOWN = "[\u26a0U+202E]aps-gne/muitrepa"
"""What every page shows instead: the marker, then the name in its logical order."""
PAGE_ID = "9098cb401d85835c"
"""The empty-baseline card's run page id (the first 16 hex of its run_card_hash, unchanged by the edit)."""
SIZES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def spoof_site(tmp_path_factory):
    from mtboard.site import build_site

    root = tmp_path_factory.mktemp("names")
    sub = root / "submissions" / "mtb-en-es-dev"
    sub.mkdir(parents=True)
    for name in ("apertium-eng-spa__default__d0f5919b5569.json", "baseline-echo__baseline__32e6f8fa41bf.json"):
        shutil.copy(DEV / name, sub)
    data = json.loads((DEV / "baseline-empty__baseline__9098cb401d85.json").read_text(encoding="utf-8"))
    data["model_slug"] = data["method_config"]["model"] = data["method"]["model"] = SPOOF
    data["method"]["spec"] = "empty:" + SPOOF
    (sub / "spoof.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    rep = build_site(root / "submissions", ROOT / "corpora", root / "out", root / "docs", validate=False,
                     build_time="2026-12-01 00:00 UTC")
    assert rep.cards == 3 and not rep.rejected
    with serving(root / "out") as port:
        yield f"http://127.0.0.1:{port}", root


def _laid_out(pg, selector: str) -> list[tuple[str, list[float], list[float], bool]]:
    """For each element matching ``selector``: (its text, (line bottom, x) of its first character, (line bottom, x) of
    its last character, whether it is laid out at all — a hidden optional column is not), measured with DOM ranges
    on the laid-out text. In reading order the first character comes first: an earlier line, or the same line and
    further left."""
    return pg.evaluate("""sel => Array.from(document.querySelectorAll(sel)).map(b => {
        const w = document.createTreeWalker(b, NodeFilter.SHOW_TEXT); const nodes = [];
        while (w.nextNode()) if (w.currentNode.data.length) nodes.push(w.currentNode);
        const first = nodes[0], last = nodes[nodes.length - 1];
        const r1 = document.createRange(); r1.setStart(first, 0); r1.setEnd(first, 1);
        const r2 = document.createRange(); r2.setStart(last, last.data.length - 1); r2.setEnd(last, last.data.length);
        const a = r1.getBoundingClientRect(), z = r2.getBoundingClientRect();
        return [b.textContent, [Math.round(a.bottom), a.left], [Math.round(z.bottom), z.left],
                b.getClientRects().length > 0];
    })""", selector)


PAGES = {
    "board": "leaderboards/mtb-en-es-dev-v1.0.0.html",
    "run": f"runs/{PAGE_ID}.html",
    "runs": "runs/index.html",
    "models": "models/index.html",
    "changes": "changes.html",
    "compare": "compare.html",
}
READY = {"run": ".mtb-rd[data-loaded]", "compare": ".mtb-cmp-out .mtb-cmp-head"}
"""The element each page's script adds once its fetched data is drawn (site/assets/rundata.js, pages.js)."""


@pytest.mark.parametrize("size", list(SIZES))
def test_spoofing_name_is_isolated_marked_and_in_order(browser, spoof_site, size, tmp_path):
    base, _ = spoof_site
    shots = Path(os.environ.get("MTBOARD_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport=SIZES[size])
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    for key, path in PAGES.items():
        pg.goto(f"{base}/{path}")
        if key in READY:  # what the page's script builds from fetched data is checked too
            pg.wait_for_selector(READY[key], state="attached")
        html = pg.content()
        assert "\u202e" not in html and "\u202e" not in pg.title(), key
        marked = pg.locator("bdi.mtb-name", has_text=SHOWN)
        if key != "compare":  # compare.html lists pages of pairs; its links name both rows
            assert marked.count() >= 1, key
        shown = [(text, a, b) for text, a, b, visible in _laid_out(pg, "bdi.mtb-name") if SHOWN in text and visible]
        assert shown or key == "compare", key
        for text, x_first, x_last in shown:
            assert x_first < x_last, (key, text, x_first, x_last)  # in reading order: nothing reversed it
        if key in ("board", "run"):
            pg.screenshot(path=str(shots / f"names-{key}-{size}.png"), full_page=False)
    # the board row itself: method cell and model column (optional, hidden by default, in the DOM)
    pg.goto(f"{base}/{PAGES['board']}")
    row = pg.locator("tr", has=pg.locator("bdi.mtb-name", has_text=SHOWN)).first
    assert row.locator("th.c-method bdi.mtb-name").first.text_content() == "empty:" + SHOWN
    assert row.locator("td.c-model bdi.mtb-name").first.text_content() == SHOWN
    # the run page's model line: the marker is an element naming the code point
    pg.goto(f"{base}/{PAGES['run']}")
    assert "[\u26a0U+202E]" in pg.title()
    refused = pg.locator("p.mtb-sub bdi.mtb-name span.mtb-refused").first
    assert refused.text_content() == "[\u26a0U+202E]"
    assert refused.get_attribute("title") == "U+202E RIGHT-TO-LEFT OVERRIDE"
    assert not errors, errors
    ctx.close()


def test_downloads_show_the_code_point(spoof_site):
    _, root = spoof_site
    out = root / "out"
    csv_text = (out / "leaderboards" / "mtb-en-es-dev-v1.0.0.csv").read_text(encoding="utf-8")
    assert SHOWN in csv_text and "\u202e" not in csv_text
    raw = (out / "leaderboards" / "mtb-en-es-dev-v1.0.0.json").read_text(encoding="utf-8")
    assert "\u202e" not in raw and "\\u202eaps-gne/muitrepa" in raw
    rows = json.loads(raw)["rows"]
    assert SPOOF in {r["model"] for r in rows}  # the exact name, parsed back
    ledger = (out / "data" / "ledger.json").read_text(encoding="utf-8")
    assert "\u202e" not in ledger and SPOOF in {r["model_slug"] for b in json.loads(ledger)["boards"]
                                                 for r in b["rows"]}
    # issue 35 item 1: no copy of the card any more (the run page links its file in the repository); the run data
    # files, which carry contributor text (outputs), escape a refused character the same way
    assert not (out / "runs" / f"{PAGE_ID}.json").exists() and (out / "data" / "runs" / f"{PAGE_ID}.json.gz").is_file()
    from mtboard.site import rundata  # noqa: PLC0415

    text = gzip.decompress(rundata.gz({"rows": [[1, SPOOF]]})).decode("utf-8")
    assert "\u202e" not in text and "\\u202e" in text and json.loads(text)["rows"][0][1] == SPOOF
