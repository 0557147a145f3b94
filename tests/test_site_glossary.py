"""The site's words and its methodology pages (issue 36 item 3), checked on the site built from the committed cards:
every glossary link lands on an entry, every methodology topic on its heading (MkDocs' toc makes the ids, so a
renamed heading would silently break links), the old ``methodology.html#<topic>`` anchors still land on a one-line
summary, the contents lists work, and the spec sections render as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import Markup

from mtboard.site import glossary
from mtboard.site.render import rel_link

HREF = re.compile(r'href="([^"#]*)#([^"]+)"')


def _ids(path: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def test_term_html_is_an_escaped_link_with_its_line_as_title():
    html = glossary.term_html("delta-rank", "../glossary.html")
    assert html == Markup('<a class="mtb-term" href="../glossary.html#delta-rank" title="A method&#39;s position in '
                          'this domain against its position over all domains: ▲2 means two places better here, ▼1 '
                          'one place worse.">Δrank</a>')
    assert glossary.term_html("ci", "g.html", "<b>") == Markup(
        '<a class="mtb-term" href="g.html#ci" title="95% bootstrap interval over segments: the middle 95% of the '
        'scores on test sets resampled from this one.">&lt;b&gt;</a>')
    # without the tooltip (a term repeated on every row of a board, issue 35): the link alone, text still escaped
    assert glossary.term_html("self-benchmarked", "../g.html", "<b>", tooltip=False) == Markup(
        '<a class="mtb-term" href="../g.html#self-benchmarked">&lt;b&gt;</a>')
    try:
        glossary.term_html("no-such-term", "g.html")
    except KeyError:
        pass
    else:
        raise AssertionError("an unknown term must not render")


def test_every_tier_has_a_term_and_every_term_a_methodology_topic_that_exists():
    keys = [t.key for t in glossary.TERMS]
    assert len(keys) == len(set(keys))
    assert [t.key for t in glossary.TIER_TERMS] == ["community-verified", "gds-verified",
                                                    "maintainer-re-run-unattested", "self-benchmarked"]
    assert {t.key for t in glossary.TIER_TERMS} <= set(keys)
    assert all(t.more in glossary.ANCHORS for t in glossary.TERMS if t.more)
    assert glossary.methodology_target("exact") == "methodology/metrics.md#exact-match"
    # a page links a topic through rel_link, which keeps the fragment
    assert rel_link("leaderboards/b.md", glossary.methodology_target("chrf")) == "../methodology/metrics.html#chrf"
    assert rel_link("methodology/ranks.md", "methodology/ranks.md#downloads") == "ranks.html#downloads"


def test_rel_link_is_posix_relpath_whatever_the_working_directory(tmp_path, monkeypatch):
    """rel_link remembers relative pairs (issue 35): its answers are posixpath.relpath's, hand-checked here, and do not
    change with the working directory; an absolute path or a '..' part is computed afresh (its answer may depend on
    it: relpath stops at '/'; the reviewer's cases)."""
    import posixpath

    from mtboard.site import render

    pairs = {("index.md", "runs/abc.md"): "runs/abc.html", ("runs/abc.md", "index.md"): "../index.html",
             ("leaderboards/x/page-2.md", "compare/a-b.md"): "../../compare/a-b.html",
             ("a/b/c.md", "a/b/d.md#top"): "d.html#top", ("runs/abc.md", "data/x.json.gz"): "../data/x.json.gz"}
    for cwd in (None, tmp_path, tmp_path / "deep" / "er"):
        if cwd is not None:
            cwd.mkdir(parents=True, exist_ok=True)
            monkeypatch.chdir(cwd)
        for (here, target), want in pairs.items():
            assert rel_link(here, target) == want
        assert render.rel_md("runs/abc.md", "index.md") == "../index.md"
        assert render._relpath("/abs/x.html", "runs") == posixpath.relpath("/abs/x.html", "runs")
        for here, target in (("index.md", "../x.md"), ("p.md", "../../../../x.md"), ("a/p.md", "../../../../../y.md"),
                             ("a/../b/p.md", "c.md")):  # a '..' can climb above the working directory: not remembered
            want = posixpath.relpath(target[:-3] + ".html", posixpath.dirname(here) or ".")
            assert rel_link(here, target) == want, (cwd, here, target)
    monkeypatch.chdir("/")
    # from '/', relpath stops climbing at the root (what the old code gave; a remembered answer would be '../x.html')
    assert rel_link("index.md", "../x.md") == "x.html" and rel_link("p.md", "../../../../x.md") == "x.html"


def test_glossary_and_methodology_links_land_on_ids(committed_site):
    out = committed_site.out
    pages = [p for p in out.rglob("*.html") if not p.name.startswith("404")]
    ids: dict[Path, set[str]] = {}
    checked = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target, frag in HREF.findall(text):
            if not target.endswith(("glossary.html", ".html")) or "://" in target:
                continue
            if not ("glossary.html" in target or "methodology" in target):
                continue
            dest = (page.parent / target).resolve()
            assert dest.is_file(), (page, target)
            found = ids.setdefault(dest, _ids(dest))
            assert frag in found, (page.relative_to(out), target, frag)
            checked += 1
    assert checked > 100  # boards' headers, keys and verification cells, run pages, the methodology's own links


def test_methodology_split_keeps_old_anchors_and_renders_the_spec(committed_site):
    out = committed_site.out
    overview = (out / "methodology.html").read_text(encoding="utf-8")
    for s in glossary.SECTIONS:  # every anchor published before the split: a one-line summary linking on
        assert f'<dt id="{s.anchor}"><a href="{s.page[:-3]}.html#{s.slug}">' in overview, s.anchor
    metrics = (out / "methodology" / "metrics.html").read_text(encoding="utf-8")
    prose = re.sub(r"<code>.*?</code>", "", metrics.split("<article")[1], flags=re.S)
    assert "**" not in prose and "| --- |" not in prose and "<table>" in prose  # Markdown rendered, not shown raw
    assert re.search(r'<h3 id="21-fst-acceptance">2\.1 FST acceptance</h3>', metrics)
    toc = metrics.split('data-md-component="toc"')[1]
    for slug in ("chrf", "exact-match", "semantic-similarity", "outcomes-and-flags", "full-metric-definitions",
                 "21-fst-acceptance"):
        assert f'href="#{slug}"' in toc, slug  # the contents list holds the page's sections, not one stray heading
    words = len(re.sub(r"<[^>]+>", " ", overview.split("<article")[1].split("</article>")[0]).split())
    assert words < 700, words  # the overview is short; the detail is one click away


def test_site_wide_navigation_on_every_page_type(committed_site):
    out = committed_site.out
    for rel in ("index.html", "leaderboards/mtb-en-es-dev-v1.0.0.html", "methodology.html", "glossary.html",
                "compare.html", "changes.html", "models/index.html"):
        text = (out / rel).read_text(encoding="utf-8")
        tabs = text.split('class="md-tabs"')[1].split("</nav>")[0]
        labels = re.findall(r'md-tabs__link[^>]*>\s*([^<]+?)\s*<', tabs)
        assert labels[:7] == ["Home", "Leaderboards", "Models", "Compare", "Runs", "Changes", "Methodology"], (
            rel, labels)
