"""Issue 18 acceptance: a review of 30 entries of the Apertium EN→ES card made through the review page in Debian's
headless Chromium (Playwright), keyboard only, at 390×844 — the ratings are scripted by this test, in a temporary
folder; the reviewer ``scripted-reviewer`` is listed in a temporary reviewers file — then the downloaded YAML passes
the review checks and the rebuilt site shows the result on the run page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from browser_support import CHROMIUM, serving
from mtboard.review import community as rv
from mtboard.core.documents import load_card
from mtboard.core.schema import QualityTier
from mtboard.site import build_site
from mtboard.validate.reviews import validate_review

ROOT = Path(__file__).resolve().parents[1]
DATASET = "mtb-en-es-dev"
RUN = "apertium-eng-spa__default__d0f5919b5569"
PHONE = {"width": 390, "height": 844}
PLAN = ["excellent"] * 13 + ["acceptable"] * 13 + ["gist"] * 3 + ["reject"]
NASTY = 'Se lee bien, pero "casi" <script>alert(1)</script> \\ : # & {x}'
"""A note with quotes, markup, a backslash and YAML indicators: it must survive the download byte for byte."""

pytestmark = [pytest.mark.slow, pytest.mark.browser]
playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():  # pragma: no cover
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)


def test_review_made_in_the_browser_validates_and_shows_on_the_site(browser, tmp_path):
    root = tmp_path / "repo"
    (root / "submissions" / DATASET).mkdir(parents=True)
    shutil.copy(ROOT / "submissions" / DATASET / f"{RUN}.json", root / "submissions" / DATASET)
    (root / "reviews").mkdir()
    (root / "reviews" / "reviewers.yaml").write_text(yaml.safe_dump({"reviewers": [
        {"handle": "scripted-reviewer", "languages": ["es"], "added": "2026-12-01", "added_by": "test-suite"}]}),
        encoding="utf-8")
    card = load_card(root / "submissions" / DATASET / f"{RUN}.json")
    page_id = card.run_card_hash[:16]
    out = tmp_path / "out"
    build_site(root / "submissions", ROOT / "corpora", out, tmp_path / "docs", validate=False,
               build_time="2026-12-01 00:00 UTC")
    with serving(out) as port:
        ctx = browser.new_context(viewport=PHONE, accept_downloads=True)
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(f"http://127.0.0.1:{port}/review/{page_id}.html")
        pg.wait_for_selector("#mtb-review[data-loaded]", state="attached")  # entries from the data files (issue 35)
        entries = pg.locator("fieldset.mtb-rv-entry")
        assert entries.count() == 30
        ids = [int(entries.nth(i).get_attribute("data-entry")) for i in range(30)]
        assert ids == [r.entry_id for r in rv.sample_entries(card)]
        assert pg.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        # the page shows the texts as text (escaped by the template, never markup)
        assert entries.nth(0).locator(".mtb-rv-out").text_content() == "Palau"
        # keyboard only: focus the handle field, type; Tab into each entry's radio group, Space checks the first
        # rating (reject), each ArrowRight moves to and checks the next one
        pg.focus("#mtb-rv-handle")
        pg.keyboard.type("scripted-reviewer")
        order = [r.value for r in rv.RATING_ORDER]
        for i, rating in enumerate(PLAN):
            first = entries.nth(i).locator("input[type=radio]").first
            first.focus()
            pg.keyboard.press("Space")
            for _ in range(order.index(rating)):
                pg.keyboard.press("ArrowRight")
            assert entries.nth(i).locator("input[type=radio]:checked").get_attribute("value") == rating
        pg.focus(f"#note-{ids[0]}")
        pg.keyboard.type(NASTY)
        assert "30 of 30 entries rated" in pg.text_content("#mtb-rv-status")
        pg.focus("#mtb-rv-download")
        with pg.expect_download() as dl:
            pg.keyboard.press("Enter")
        target = root / "reviews" / DATASET / f"{RUN}.yaml"
        target.parent.mkdir(parents=True)
        assert dl.value.suggested_filename == f"{RUN}.yaml"
        dl.value.save_as(target)
        assert errors == []
        ctx.close()

    rep, record, _ = validate_review(target, root)
    assert rep.ok, [str(p) for p in rep.problems]
    assert set(rep.checks.values()) == {"pass"}
    (review,) = record.reviews
    assert review.reviewer == "scripted-reviewer" and review.ratings[0].note == NASTY
    assert [e.entry_id for e in review.ratings] == ids and [e.rating for e in review.ratings] == PLAN
    s = rv.summarise(record, rep.accepted)
    assert s.counts == {"reject": 1, "gist": 3, "acceptable": 13, "excellent": 13}
    assert (s.entries, s.confirms) == (30, QualityTier.deployable)

    rebuilt = build_site(root / "submissions", ROOT / "corpora", out, tmp_path / "docs", validate=True,
                         build_time="2026-12-01 00:00 UTC")
    assert rebuilt.rejected == [] and rebuilt.warnings == []
    html = (out / "runs" / f"{page_id}.html").read_text(encoding="utf-8")
    assert "30 sampled entries rated by scripted-reviewer (30 ratings)" in html
    assert "usable (acceptable or excellent) 0.867, reject 0.033" in html
    assert "The ratings confirm <strong>deployable</strong>" in html
    assert "<script>alert(1)" not in html
    # the card's own tier is functional (composite 0.570): a review above it changes no label
    assert 'class="mtb-qtier">functional</a>' in html
