"""Every board state builds and says so in words (issue 34 item 2): no card, every card rejected, one card, only
baselines, only subsets, no ranked method, every method failing every entry, and boards in different states.

The words are the ledger's (:func:`mtboard.ledger.standing.board_state`, :func:`~mtboard.ledger.standing.site_state`):
each test asserts the exact sentence on the home page, on the board page(s) and in ``data/ledger.json``.

HAND-MADE FIXTURES: the toy corpus and hand-typed outputs of tests/test_site_cards.py (12 EN→ES sentences), made
into sealed cards by the real pipeline; a rejected card is a committed-style card with one byte changed, or a file
that is not JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from markupsafe import escape

from mtboard.core.documents import card_bytes
from mtboard.core.schema import BOARD_STATES, SITE_STATES, Ledger
from mtboard.core.schema.card import RunCard
from mtboard.ledger.build import build_ledger
from mtboard.ledger.load import load_inputs
from mtboard.site.build import build_site
from mtboard.validate import canonical_relpath

sys.path.insert(0, str(Path(__file__).parent))
from test_site_cards import OUTPUTS, make_card, standard_cards, write_toy_corpus  # noqa: E402

BOARD = "toy-en-es-v1.0.0"
EMPTY = "No submissions yet: the submissions folder holds no run card, so there is no board to show."


def _subset(corpus, sha, *, limit: int = 4, seed: int = 8, slug: str = "acme/translate-pro") -> RunCard:
    return make_card(corpus, sha, model_slug=slug, outputs=OUTPUTS["good"], spec=f"openai:{slug}", limit=limit,
                     run_seed=seed)


def _failing(corpus, sha, slug: str, seed: int) -> RunCard:
    """A method whose every output is empty: every entry fails the mechanical checks."""
    return make_card(corpus, sha, model_slug=slug, outputs={}, spec=f"openai:{slug}", run_seed=seed)


def _tampered(corpus, sha) -> list[tuple[str, bytes]]:
    """Two rejected files: a sealed card with one byte of its condition changed (the seal no longer matches), and a
    file that is not JSON at all."""
    raw = bytearray(card_bytes(standard_cards(corpus, sha)["apertium"]))
    at = raw.index(b'"condition"') + len(b'"condition": "') + 1
    raw[at] ^= 1
    return [("apertium-eng-spa__default__000000000000.json", bytes(raw)), ("broken.json", b'{"scores": NaN}')]


# state → (cards, the site's state, its sentence, the board's state, its sentence); None: no board
STATES: dict[str, tuple[Callable, str, str | None, str | None, str | None]] = {
    "no cards": (lambda c, s: [], "empty", EMPTY, None, None),
    "all rejected": (_tampered, "all-rejected",
                     "All 2 submitted run cards were rejected by the validator: no board can be shown yet.", None, None),
    "one rejected": (lambda c, s: _tampered(c, s)[:1], "all-rejected",
                     "The only submitted run card was rejected by the validator: no board can be shown yet.", None,
                     None),
    "one card": (lambda c, s: [standard_cards(c, s)["apertium"]], "one-method",
                 "Only one method so far: there is no other method to compare it with yet.", "one-method",
                 "Only one method is ranked on this board so far: there is no other method to compare it with yet."),
    "only baselines": (lambda c, s: [standard_cards(c, s)[k] for k in ("echo", "empty")], "baselines-only",
                       "Only baselines so far: every run card on the board is a reference baseline (echo, empty), "
                       "listed but never ranked; no translation method has been submitted yet.", "baselines-only",
                       "Only baselines so far: this board's 2 rows are reference baselines (echo, empty), listed but "
                       "never ranked; no translation method has been run on it yet."),
    "only subsets": (lambda c, s: [_subset(c, s), _subset(c, s, limit=6, seed=9, slug="google/gemma-3-270m")],
                     "subsets-only",
                     "No row covers the whole dataset yet: every run card on the board evaluated a subset of its "
                     "dataset's entries, so each board ranks a subset, not its dataset.", "subsets-only",
                     "No row covers the whole dataset yet: every run on this board evaluated a subset of its 12 "
                     "entries, so its ranks compare 6 entries only."),
    "only unranked methods": (lambda c, s: [standard_cards(c, s)["echo"], _subset(c, s)], "nothing-ranked",
                              "No method is ranked yet: on every board the only runs of the board's entry set are "
                              "reference baselines, and every other run is listed unranked.", "nothing-ranked",
                              "No method is ranked on this board yet: its only runs of the board's 12 entries are "
                              "reference baselines; the other row ran a subset or another entry set and is listed "
                              "unranked."),
    "all failing": (lambda c, s: [_failing(c, s, "acme/translate-pro", 9), _failing(c, s, "google/gemma-3-270m", 10),
                                  standard_cards(c, s)["echo"]], "all-failing",
                    "Every method so far failed every entry: no output passed the mechanical checks, so each entry "
                    "is scored as an empty output.", "all-failing",
                    "Every method on this board failed every entry: no output of its 2 method rows passed the "
                    "mechanical checks, so each entry is scored as an empty output."),
    "ordinary": (lambda c, s: [standard_cards(c, s)[k] for k in ("apertium", "gemma-chat", "echo")], "ranked", None,
                 "ranked", None),
}


def _tree(root: Path, make: Callable) -> None:
    corpus, sha = write_toy_corpus(root / "corpora")
    folder = root / "submissions" / corpus.dataset.id
    folder.mkdir(parents=True)
    for item in make(corpus, sha):
        if isinstance(item, tuple):
            (folder / item[0]).write_bytes(item[1])
        else:
            (root / canonical_relpath(item)).write_bytes(card_bytes(item))


def _build(root: Path, run_mkdocs: bool = False):
    return build_site(root / "submissions", root / "corpora", root / "out", root / "docs", resamples=50,
                      run_mkdocs=run_mkdocs, build_time="2026-12-01 00:00 UTC")


@pytest.mark.parametrize("name", list(STATES))
def test_every_board_state_builds_and_says_so(tmp_path, name):
    make, site_kind, site_sentence, board_kind, board_sentence = STATES[name]
    _tree(tmp_path, make)
    report = _build(tmp_path)
    docs = tmp_path / "docs"
    home = (docs / "index.md").read_text(encoding="utf-8")
    ledger = Ledger.model_validate_json((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    assert ledger.state is not None and (ledger.state.kind, ledger.state.sentence) == (site_kind, site_sentence)
    if site_sentence is None:
        assert 'class="mtb-state"' not in home
    else:
        assert f'<p class="mtb-state" role="status" data-state="{site_kind}">{escape(site_sentence)}' in home
    if board_kind is None:  # no board at all: nothing to list, and the pages say so instead of empty tables
        assert report.leaderboards == 0 and ledger.boards == [] and not list((docs / "leaderboards").glob("*-v*.md"))  # the index only
        assert "No leaderboard yet: a board appears with the first run card that passes the validator." in home
        assert "No run card is on the board yet" in (docs / "runs" / "index.md").read_text(encoding="utf-8")
        assert "No model has a run card on the board yet." in (docs / "models" / "index.md").read_text("utf-8")
        assert "No board yet, so no item statistics." in (docs / "hard" / "index.md").read_text(encoding="utf-8")
        files = sorted(p.name for p in (tmp_path / "submissions").rglob("*.json"))
        assert sorted(r.path.rsplit("/", 1)[-1] for r in report.rejected) == files
        assert len(files) == {"no cards": 0, "all rejected": 2, "one rejected": 1}[name]
        return
    (board,) = ledger.boards
    assert board.state is not None and (board.state.kind, board.state.sentence) == (board_kind, board_sentence)
    pages = sorted((docs / "leaderboards").glob(f"{BOARD}*.md"))
    assert pages, "the board and its domain views"
    for page in pages:  # the whole board and each domain view say it
        text = page.read_text(encoding="utf-8")
        if board_sentence is None:
            assert 'class="mtb-state"' not in text
        else:
            assert f'<p class="mtb-state" role="status" data-state="{board_kind}">{escape(board_sentence)}</p>' \
                in text, page


@pytest.mark.slow  # 2.7 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_boards_in_different_states_each_say_their_own(tmp_path):
    """Two boards, one ordinary and one of baselines only: the site is ``mixed`` (no site sentence) and the home
    page's pair card of the baselines board carries that board's sentence."""
    _tree(tmp_path, lambda c, s: [standard_cards(c, s)[k] for k in ("apertium", "gemma-chat")])
    corpus, sha = write_toy_corpus(tmp_path / "other")
    other = corpus.model_copy(update={"dataset": corpus.dataset.model_copy(update={"id": "toy2-en-es"})})
    from mtboard.core.documents import write_corpus

    sha2 = write_corpus(other, tmp_path / "corpora" / "toy2-en-es.json")
    (tmp_path / "submissions" / "toy2-en-es").mkdir()
    for k in ("echo", "empty"):
        card = standard_cards(other, sha2)[k]
        (tmp_path / canonical_relpath(card)).write_bytes(card_bytes(card))
    _build(tmp_path)
    docs = tmp_path / "docs"
    ledger = Ledger.model_validate_json((docs / "data" / "ledger.json").read_text(encoding="utf-8"))
    assert (ledger.state.kind, ledger.state.sentence) == ("mixed", None)
    assert [(b.key, b.state.kind) for b in ledger.boards] == [(BOARD, "ranked"),
                                                              ("toy2-en-es-v1.0.0", "baselines-only")]
    home = (docs / "index.md").read_text(encoding="utf-8")
    sentence = ledger.boards[1].state.sentence
    assert sentence.startswith("Only baselines so far: this board's 2 rows")
    assert f'<span class="mtb-pc-state" data-state="baselines-only">{escape(sentence)}</span>' in home
    assert home.count('class="mtb-pc-state"') == 1 and 'class="mtb-state"' not in home


def test_states_are_decided_by_the_ledger_alone(tmp_path):
    """The ledger (no site code) decides each state: ``mtboard ledger``'s inputs give the same kinds, and every kind
    the schema allows is one the ledger names."""
    _tree(tmp_path, STATES["only baselines"][0])
    built = build_ledger(load_inputs(tmp_path / "submissions", tmp_path / "corpora"), resamples=50)
    assert built.state.kind == "baselines-only" and [p.state.kind for p in built.plans] == ["baselines-only"]
    assert set(BOARD_STATES) < set(SITE_STATES) and {"empty", "all-rejected", "mixed"} == set(SITE_STATES) - set(
        BOARD_STATES)


def test_the_empty_board_builds_with_mkdocs(tmp_path):
    """The regression of issue 34: an empty folder crashed the build ("UndefinedError: 'dict object' has no attribute
    'chrf'", the methodology page's signatures). A real MkDocs build (strict) of it: every page is written, the home
    page says so, and the methodology page says no signature is listed yet."""
    _tree(tmp_path, lambda c, s: [])
    report = _build(tmp_path, run_mkdocs=True)
    out = tmp_path / "out"
    assert report.cards == 0 and report.leaderboards == 0 and "mkdocs" in report.seconds
    home = (out / "index.html").read_text(encoding="utf-8")
    assert EMPTY in home and 'href="#how-to-submit"' in home and 'id="how-to-submit"' in home
    for page in ("methodology.html", "runs/index.html", "models/index.html", "hard/index.html", "compare.html",
                 "judges.html", "changes.html", "history.html", "rejected.html"):
        assert (out / page).is_file(), page
    metrics = (out / "methodology" / "metrics.html").read_text(encoding="utf-8")
    assert "No run card is on the board yet, so no signature is listed." in metrics
    assert "No corpus file was found" not in (out / "methodology" / "domains.html").read_text(encoding="utf-8")
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert data["rows"] == []


def test_cli_build_of_an_all_rejected_folder_succeeds(tmp_path):
    """``mtboard build`` on a folder whose only card is rejected: exit 0, the rejection as a warning, the home page's
    sentence (issue 34: this crashed with an internal error)."""
    from typer.testing import CliRunner

    from mtboard.cli.main import app

    _tree(tmp_path, lambda c, s: _tampered(c, s)[:1])
    res = CliRunner().invoke(app, ["build", "--submissions", str(tmp_path / "submissions"), "--corpora",
                                   str(tmp_path / "corpora"), "--out", str(tmp_path / "out"), "--docs",
                                   str(tmp_path / "docs"), "--anchors", str(tmp_path / "none"), "--official",
                                   str(tmp_path / "none")])
    assert res.exit_code == 0, res.output
    assert "0 cards on 0 leaderboard(s), 0 model portrait(s), 1 rejected" in res.output
    assert "internal error" not in res.output
    home = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "The only submitted run card was rejected by the validator: no board can be shown yet." in home


def test_mtboard_ledger_prints_the_states(tmp_path):
    """``mtboard ledger`` reads the same decisions: the site's sentence first, each board's under its table."""
    from typer.testing import CliRunner

    from mtboard.cli.main import app

    _tree(tmp_path, lambda c, s: [])
    args = ["ledger", "--submissions", str(tmp_path / "submissions"), "--corpora", str(tmp_path / "corpora")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and res.output.strip() == EMPTY
    _tree(tmp_path / "b", STATES["only baselines"][0])
    args = ["ledger", "--submissions", str(tmp_path / "b" / "submissions"), "--corpora", str(tmp_path / "b" / "corpora")]
    lines = CliRunner().invoke(app, args).output.splitlines()
    assert lines[0] == STATES["only baselines"][2] and lines[-1] == STATES["only baselines"][4]
