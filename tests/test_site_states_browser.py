"""Issue 34 item 2 in a real browser (Debian's Chromium through Playwright): the site of an empty submissions folder
and of a folder whose every card is rejected, each built by MkDocs, says so on its home page — the sentence is visible
above the fold at both design viewports (1366×900, 390×844), the page does not scroll sideways, no script error, and
its link leads on (how to submit; the rejected page). Screenshots go to ``$MTBOARD_SCREENSHOTS`` (default: the
test's temporary folder).

HAND-MADE FIXTURES: those of tests/test_site_states.py (the toy corpus; a card with one byte changed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from browser_support import CHROMIUM, serving

sys.path.insert(0, str(Path(__file__).parent))
from test_site_states import EMPTY, STATES, _build, _tree  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.browser]
pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

VIEWPORTS = [{"width": 1366, "height": 900}, {"width": 390, "height": 844}]
REJECTED = STATES["all rejected"][2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two sites, built once: ``empty`` (no card) and ``rejected`` (two rejected files)."""
    sites = {}
    for name, state in (("empty", "no cards"), ("rejected", "all rejected")):
        root = tmp_path_factory.mktemp(f"states-{name}")
        _tree(root, STATES[state][0])
        _build(root, run_mkdocs=True)
        sites[name] = root / "out"
    with serving(sites["empty"]) as empty, serving(sites["rejected"]) as rejected:
        yield {"empty": f"http://127.0.0.1:{empty}", "rejected": f"http://127.0.0.1:{rejected}"}


@pytest.mark.parametrize("vp", VIEWPORTS, ids=lambda v: str(v["width"]))
@pytest.mark.parametrize("site, sentence, link, lands", [
    ("empty", EMPTY, "how to submit", "#how-to-submit"),
    ("rejected", REJECTED, "rejected submissions", "/rejected.html")])
def test_the_empty_home_page_says_so(served, browser, tmp_path, vp, site, sentence, link, lands):
    ctx = browser.new_context(viewport=vp)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{served[site]}/index.html")
    state = pg.locator("p.mtb-state")
    assert state.is_visible() and state.inner_text().startswith(sentence)
    box = state.bounding_box()
    assert box is not None and box["y"] + box["height"] <= vp["height"], "the sentence is above the fold"
    assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shots = Path(os.environ.get("MTBOARD_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(shots / f"states-{site}-home-{vp['width']}.png"))
    state.get_by_role("link", name=link).click()
    pg.wait_for_load_state()
    assert pg.url.endswith(lands)
    assert not errors
    ctx.close()
