"""Issue 35 (published bytes per card): the helpers that write less — layered JSON downloads, the theme's whitespace
stripped outside a page's article, the redirect left at each old review URL. Values hand-checked."""

from __future__ import annotations

import json

import pytest

from mtboard.ledger.document import layered
from mtboard.site.mkdocs_hooks import strip_chrome
from mtboard.site.runpage import review_stub

VALUE = {"schema": "s/1", "rows": [{"a": 1, "b": [1, 2]}, {"a": "é", "b": []}], "empty": {}, "n": None}


def test_layered_indents_down_to_its_depth_and_keeps_the_value():
    assert layered(VALUE, 0) == '{"schema":"s/1","rows":[{"a":1,"b":[1,2]},{"a":"é","b":[]}],"empty":{},"n":null}'
    assert layered(VALUE, 2) == ('{\n "schema": "s/1",\n "rows": [\n  {"a":1,"b":[1,2]},\n  {"a":"é","b":[]}\n ],\n'
                                 ' "empty": {},\n "n": null\n}')
    for depth in range(5):
        assert json.loads(layered(VALUE, depth)) == VALUE
    # one row per line is smaller than json.dumps(indent=1) for the same value: 101 against 141 characters here
    assert (len(layered(VALUE, 2)), len(json.dumps(VALUE, ensure_ascii=False, indent=1))) == (101, 141)


def test_strip_chrome_leaves_the_article_untouched():
    page = ('<html>\n    <head>\n  <title>t</title>\n</head>\n<body>\n      <nav>\n\n        <a>x</a>\n  \n\n      </nav>\n'
            '<article class="md-content__inner">\n  <pre>  keep\n    this</pre>\n   <p>y</p>\n</article>\n'
            '    <footer>\n      z\n    </footer>\n</body>\n</html>\n')
    assert strip_chrome(page) == (
        '<html>\n<head>\n<title>t</title>\n</head>\n<body>\n<nav>\n<a>x</a>\n</nav>\n'
        '<article class="md-content__inner">\n  <pre>  keep\n    this</pre>\n   <p>y</p>\n</article>\n'
        '<footer>\nz\n</footer>\n</body>\n</html>\n')
    # without an article: stripped unless the page holds preformatted text
    assert strip_chrome("<p>\n   a</p>") == "<p>\na</p>"
    assert strip_chrome("<p>\n\n \t\n a</p>") == "<p>\na</p>"  # blank lines too: one line break is the same
    assert strip_chrome("<p>\n\u00a0a\n\u3000b</p>") == "<p>\n\u00a0a\n\u3000b</p>"  # HTML whitespace only: text stays
    assert strip_chrome("<pre>\n   a</pre>") == "<pre>\n   a</pre>"


def test_review_stub_redirects_to_the_one_review_page():
    stub = review_stub("0123456789abcdef")
    url = "../review.html?run=0123456789abcdef"
    assert f'<meta http-equiv="refresh" content="0; url={url}">' in stub
    assert f'location.replace("{url}"+location.hash)' in stub and f'<a href="{url}">review run 01234567</a>' in stub
    assert len(stub.encode()) == 428
    with pytest.raises(ValueError):
        review_stub('0123456789abcde"')


def test_a_hidden_table_of_contents_keeps_only_the_skip_target():
    from types import SimpleNamespace

    from mkdocs.structure.toc import get_toc

    from mtboard.site.mkdocs_hooks import on_page_context

    def page(meta):  # noqa: ANN001, ANN202
        toc = get_toc([{"level": 1, "id": "run-x", "name": "Run x", "children": [
            {"level": 2, "id": "entries", "name": "Entries", "children": []}]}])
        return SimpleNamespace(meta=meta, toc=toc)

    nav = SimpleNamespace(pages=[])
    hidden = page({"hide": ["navigation", "toc"], "search": {"exclude": True}})
    assert on_page_context("ctx", hidden, None, nav) == "ctx"
    assert [(a.id, a.level, a.children) for a in hidden.toc] == [("run-x", 1, [])]
    for meta in ({"hide": ["toc"]}, {"search": {"exclude": True}}, {}):  # searchable or with a visible toc: kept
        kept = page(meta)
        on_page_context("ctx", kept, None, nav)
        assert [a.id for a in kept.toc] == ["run-x"] and [c.id for c in next(iter(kept.toc)).children] == ["entries"]
    in_nav = page({"hide": ["toc"], "search": {"exclude": True}})
    on_page_context("ctx", in_nav, None, SimpleNamespace(pages=[in_nav]))
    assert [c.id for c in next(iter(in_nav.toc)).children] == ["entries"]
