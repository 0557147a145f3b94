"""Issue 17: the official board in a real browser (Debian's Chromium through Playwright) at the design's two
viewports, 1366×900 and 390×844: the table is readable (its row, the dev–gold gap, the verification label visible),
the page does not scroll sideways on a phone (the table scrolls inside its own box), and the development board's link
lands on the gold row. Screenshots go to ``$MTBOARD_SCREENSHOTS`` (default: the test's temporary folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import secret_corpus_support as secret
from browser_support import CHROMIUM, serving
from mtboard.core.schema import Segment
from mtboard.verify.secret import evaluate_secret
from mtboard.site.build import build_site

pytestmark = [pytest.mark.slow, pytest.mark.browser]
pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
APERTIUM = ES / "apertium-eng-spa__default__d0f5919b5569.json"  # the full-corpus card (the sweep has a --limit one)
VIEWPORTS = [{"width": 1366, "height": 900}, {"width": 390, "height": 844}]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("official-browser")
    root = tmp / "repo"
    (root / "submissions").mkdir(parents=True)
    shutil.copytree(ES, root / "submissions" / ES.name)
    secret_dir = tmp / "secret"
    secret.write_secret_corpus(secret_dir)
    res = evaluate_secret(root / "submissions" / ES.name / APERTIUM.name, secret_dir, Segment.gold_standard,
                          salt=bytes(32), out_dir=root / "official" / ES.name)
    build_site(root / "submissions", ROOT / "corpora", tmp / "out", tmp / "docs", official=root / "official",
               resamples=200, build_time="2026-12-01 00:00 UTC")
    with serving(tmp / "out") as port:
        yield f"http://127.0.0.1:{port}", res.card



def _shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.mark.parametrize("vp", VIEWPORTS, ids=lambda v: str(v["width"]))
def test_official_board_reads_at_both_viewports(served, browser, tmp_path, vp):  # served first: it runs asyncio
    base, card = served
    ctx = browser.new_context(viewport=vp)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{base}/official/test-secret-en-es-v1.0.0.html")
    row = pg.locator(f"#gold-{card.card_run_card_hash[:16]}")
    assert row.is_visible()
    text = row.inner_text()
    assert "apertium:eng-spa · default" in text and "+0.051" in text and "0.519" in text
    # the page itself never scrolls sideways; a wide table scrolls inside its own box
    assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    pg.screenshot(path=str(_shots(tmp_path) / f"official-{vp['width']}.png"), full_page=True)
    assert not errors
    # no bundle in this test: the row is not ranked, and the development board shows no gold number or gap for it
    pg.goto(f"{base}/leaderboards/mtb-en-es-dev-v1.0.0.html")
    assert pg.locator("a.mtb-gold").count() == 0 and "· gap" not in pg.content()
    ctx.close()
