"""Issue 31: the ledger as a published document (:mod:`mtboard.ledger.document`) and the build that feeds it
(:mod:`mtboard.ledger.build`), fast enough for ``scripts/mutation.py ledger-document``.

The board is the committed EN→CA folder alone (4 cards: Apertium, Gemma few-shot and the two reference baselines;
read without validation, built once per process with 200 resamples, ~1 s), so every value below can be read off the
cards: composites, page ids, timestamps, the record beside the Apertium card. Hand-made stand-ins
(``SimpleNamespace``) pin the pieces the committed board cannot reach (an unranked row's place, a position of 0, a
card without a seal). tests/test_ledger.py runs the same code on the whole committed board (~2 min).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from mtboard.ledger import build as B
from mtboard.ledger import document as Doc
from mtboard.ledger.load import load_inputs
from mtboard.score.metrics import bootstrap

ROOT = Path(__file__).resolve().parents[1]
APERTIUM = "mtb-en-ca-dev/apertium-eng-cat__default__8ca0b3e02be0.json"
GEMMA = "mtb-en-ca-dev/gemma-3-270m-q4-k-m.gguf__few-shot__46b87995239a.json"
ECHO = "mtb-en-ca-dev/baseline-echo__baseline__fee2db17bc53.json"
EMPTY = "mtb-en-ca-dev/baseline-empty__baseline__78b26823ef42.json"
RECORD = "mtb-en-ca-dev/apertium-eng-cat__default__4a1761e82d51.verification.json"


@functools.cache
def _ledger() -> B.BoardLedger:
    subs = Path(tempfile.mkdtemp(prefix="mtb-doc-")) / "submissions"
    shutil.copytree(ROOT / "submissions" / "mtb-en-ca-dev", subs / "mtb-en-ca-dev")
    os.environ.pop("GITHUB_REPOSITORY", None)  # no signer: the record reads as an unattested re-run
    return B.build_ledger(load_inputs(subs, ROOT / "corpora", validate=False), resamples=200)


@pytest.fixture()
def ledger():
    return _ledger()


# --------------------------------------------------------------------------------------------------------------------
# build.py


def test_board_ledger_finds_a_card_by_its_path_and_refuses_others(ledger):
    assert [lc.path for lc in ledger.inputs.cards] == [APERTIUM, ECHO, EMPTY, GEMMA]
    assert ledger.card(GEMMA) is ledger.inputs.cards[3] and ledger.card(APERTIUM) is ledger.inputs.cards[0]
    with pytest.raises(KeyError):
        ledger.card("mtb-en-ca-dev/missing.json")
    assert [p.key for p in ledger.plans] == [lb.key for lb in ledger.boards] == ["mtb-en-ca-dev-v1.0.0"]


def test_build_ledger_decides_computes_then_ranks(monkeypatch):
    calls = []
    inputs = NS(models="MODELS")
    plan, diag = NS(segment="development"), NS(segment="diagnostic")  # issue 40 item 6: the diagnostic plan apart
    monkeypatch.setattr(B.standing, "decide", lambda inputs: (calls.append(("decide", inputs)), [plan, diag])[1])
    monkeypatch.setattr(B.tables, "build_leaderboards",
                        lambda plans, resamples, cache, stats: (calls.append(("tables", plans, resamples, cache.folder,
                                                                              stats.folder)), ["BOARD"])[1])
    monkeypatch.setattr(B.methods, "attach_methods", lambda boards: calls.append(("methods", boards)))
    # issue 38 item 4: flip distances and inseparable views once ranks and clusters are known
    monkeypatch.setattr(B.flip, "attach_flips", lambda boards, cache: calls.append(("flips", boards, cache.folder)))
    # issue 37: tries and the filters' facts once ranks are known, from the inputs' model records; then contamination
    monkeypatch.setattr(B.tries, "attach_tries", lambda boards, models: calls.append(("tries", boards, models)))
    monkeypatch.setattr(B.facts, "attach_facts", lambda boards, models: calls.append(("facts", boards, models)))
    # issue 38: each row's scorer, from the shown cards
    monkeypatch.setattr(B.scorers, "attach_scorers", lambda boards: calls.append(("scorers", boards)))
    monkeypatch.setattr(B.contamination, "attach", lambda boards, inputs, resamples: (
        calls.append(("contamination", boards, inputs, resamples)), ["CLAIM"])[1])
    # issue 38 item 3: then the drift canaries of each row
    monkeypatch.setattr(B.canaries, "attach", lambda boards, inputs, resamples: calls.append(
        ("canaries", boards, inputs, resamples)))
    # issue 38: the sentinel lines and floor marks once the method rows exist, from every corpus of the inputs
    # … and it returns the keys of the cache entries it used (the build's prune keeps them)
    monkeypatch.setattr(B.sentinels, "attach", lambda boards, corpora, resamples, cache: (calls.append(
        ("sentinels", boards, corpora, resamples, cache)), {"sentinels": {"S"}, "resamples": {"R"}})[1])
    # issue 39 item 2: the variant-class lint of every card, last (it reads only cards and the board's corpus)
    monkeypatch.setattr(B.variants, "attach", lambda boards: calls.append(("variants", boards)))
    # issue 40 item 3: the context-behaviour slices of every card (they read only cards and the board's corpus)
    monkeypatch.setattr(B.context_slices, "attach", lambda boards: calls.append(("context", boards)))
    # issue 40 item 6: the diagnostic boards from the development boards and the diagnostic plans, last
    monkeypatch.setattr(B.diagnostic, "attach", lambda boards, plans, inputs, resamples: (
        calls.append(("diagnostic", boards, plans, inputs, resamples)), ["DIAG"])[1])
    got = B.build_ledger(inputs, resamples=7)
    assert (got.inputs, got.boards, got.plans, got.claims, got.diagnostic) == (inputs, ["BOARD"], [plan], ["CLAIM"],
                                                                              ["DIAG"])
    assert calls == [("decide", inputs), ("tables", [plan], 7, None, None), ("methods", ["BOARD"]), ("flips", ["BOARD"], None),
                     ("sentinels", ["BOARD"], [], 7, None), ("tries", ["BOARD"], "MODELS"),
                     ("facts", ["BOARD"], "MODELS"), ("scorers", ["BOARD"]),
                     ("contamination", ["BOARD"], inputs, 7), ("canaries", ["BOARD"], inputs, 7),
                     ("variants", ["BOARD"]), ("context", ["BOARD"]),
                     ("diagnostic", ["BOARD"], [diag], inputs, 7)]
    calls.clear()
    cached = B.build_ledger(inputs, cache=Path("/nowhere"))  # the cache folder reaches the resamples and board stats
    assert calls[1] == ("tables", [plan], bootstrap.BOOTSTRAP_RESAMPLES, Path("/nowhere"), Path("/nowhere")) \
        and bootstrap.BOOTSTRAP_RESAMPLES == 1000
    # the keys of every cache entry it used, by kind: what a pruning build keeps (nothing was looked up here)
    assert cached.cache_used == {"sentinels": {"S"}, "resamples": {"R"}, "flips": set(), "boardstats": set()} \
        and got.cache_used == {}


# --------------------------------------------------------------------------------------------------------------------
# build_id, git_commit


def test_build_id_hashes_the_sorted_seals_or_page_ids():
    boards = [NS(cards=[NS(card=NS(run_card_hash="b"), page_id="zz")]),
              NS(cards=[NS(card=NS(run_card_hash=None), page_id="a")])]
    # sorted keys "a", "b": printf 'a\nb\n' | sha256sum → 911169ddaaf1…
    assert Doc.build_id(boards) == "911169ddaaf1"
    assert Doc.build_id([]) == hashlib.sha256(b"").hexdigest()[:12] == "e3b0c44298fc"


def test_git_commit_of_a_checkout_and_of_a_plain_folder(tmp_path):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    repo = tmp_path / "r"
    repo.mkdir()
    assert Doc.git_commit(repo) is None  # not a checkout
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True, env=env)
    assert Doc.git_commit(repo) is None  # no commit yet: rev-parse fails
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert Doc.git_commit(repo) == head and len(head) == 40


def test_git_commit_runs_rev_parse_and_trusts_only_a_full_hash(tmp_path, monkeypatch):
    calls = []
    out = NS(returncode=0, stdout="  " + "a" * 40 + "\n")
    monkeypatch.setattr(Doc.subprocess, "run", lambda cmd, **kw: (calls.append((cmd, kw)), out)[1])
    assert Doc.git_commit(tmp_path) == "a" * 40
    assert calls == [(["git", "-C", str(tmp_path), "rev-parse", "HEAD"],
                      {"capture_output": True, "text": True, "timeout": 20, "check": False})]
    out.stdout = "a" * 39
    assert Doc.git_commit(tmp_path) is None
    out.stdout, out.returncode = "a" * 40, 128
    assert Doc.git_commit(tmp_path) is None

    def boom(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, 20)

    monkeypatch.setattr(Doc.subprocess, "run", boom)
    assert Doc.git_commit(tmp_path) is None

    def missing(cmd, **kw):
        raise FileNotFoundError("git")

    monkeypatch.setattr(Doc.subprocess, "run", missing)
    assert Doc.git_commit(tmp_path) is None


# --------------------------------------------------------------------------------------------------------------------
# to_document on the committed EN→CA board


def test_the_document_of_the_committed_board(ledger):
    doc = Doc.to_document(ledger, "2026-12-01T00:00:00Z", "c" * 40)
    assert (doc.schema_, doc.built_at, doc.commit) == ("mtboard.ledger/2", "2026-12-01T00:00:00Z", "c" * 40)
    assert doc.build == Doc.build_id(ledger.boards)
    (board,) = doc.boards
    corpus = json.loads((ROOT / "corpora" / "mtb-en-ca-dev.json").read_text(encoding="utf-8"))
    assert (board.key, board.dataset_id, board.version, board.segment, board.language_pair, board.ranked_entries) == (
        "mtb-en-ca-dev-v1.0.0", "mtb-en-ca-dev", "1.0.0", "development", "EN→CA", 355)
    assert board.sha256 == hashlib.sha256((ROOT / "corpora" / "mtb-en-ca-dev.json").read_bytes()).hexdigest()
    assert corpus["dataset"]["id"] == "mtb-en-ca-dev"
    # ranked rows by rank (Apertium 0.584633 above Gemma 0.343458), then the two reference baselines in
    # the overall view's order
    assert [r.representative for r in board.rows] == [APERTIUM, GEMMA, ECHO, EMPTY]
    assert Doc.to_document(ledger, "2026-12-01T00:00:00Z").commit is None


def test_a_row_carries_its_standing_members_and_ranks(ledger):
    (board,) = Doc.to_document(ledger, "2026-12-01T00:00:00Z").boards
    ap = board.rows[0]
    card = ledger.card(APERTIUM).card
    assert (ap.fingerprint, ap.method, ap.model_slug, ap.temperature) == (
        card.fingerprint.hash, "apertium:eng-cat · default", "apertium/eng-cat", None)
    assert (ap.tier, ap.tier_label, ap.representative, ap.ranked, ap.unranked_reason, ap.reference, ap.declared) == (
        "rerun-unattested", "maintainer re-run (unattested)", APERTIUM, True, None, False, True)
    (ev,) = ap.evidence
    assert (ev.tier, ev.card, ev.run_card_hash, ev.kind, ev.source, ev.attested, ev.rescored_from) == (
        "rerun-unattested", APERTIUM, card.run_card_hash, "verification record", RECORD, False,
        card.rescored_from[0].run_card_hash)
    (m,) = ap.members
    assert (m.card, m.page, m.run_card_hash, m.timestamp, m.composite, m.earned) == (
        APERTIUM, f"runs/{card.run_card_hash[:16]}.html", card.run_card_hash, "2026-12-01T02:16:55Z", 0.584633,
        "rerun-unattested")
    assert (ap.reproduction.count, ap.reproduction.agree, ap.reproduction.spread, ap.reproduction.text) == (
        1, None, None, "")
    c = ap.coverage
    assert (c.entries, c.of, c.limit, c.subset, c.text) == (355, 355, None, False, "all 355")
    # one rank per view: the whole segment first ("all"), then the domains in board order
    assert [r.view for r in ap.ranks] == ["all", "gov", "legal", "literary", "medical", "tech", "ui"]
    top = ap.ranks[0]
    assert (top.rank, top.position, top.rank_lo, top.rank_hi, top.cluster, top.composite, top.chrf) == (
        "1", 1, 1, 1, 0, 0.584633, card.scores.chrf_plus_plus)
    lo, hi = top.composite_ci
    assert lo < 0.584633 < hi
    gemma = board.rows[1]
    assert [(r.rank, r.position, r.cluster) for r in gemma.ranks[:1]] == [("2", 2, 1)]
    assert gemma.members[0].earned == "self-benchmarked" and gemma.tier_label == "self-benchmarked"
    assert gemma.temperature == 0 and gemma.temperature is not None  # the card's "temperature": 0
    echo = board.rows[2]
    # a reference baseline: listed with "ref.", no position (0 → None) and no cluster
    assert (echo.ranked, echo.reference, echo.unranked_reason) == (False, True,
                                                                    "reference baseline: listed, never ranked")
    assert [(r.rank, r.position, r.cluster, r.rank_lo) for r in echo.ranks[:1]] == [("ref.", None, None, None)]
    assert echo.members[0].composite == 0.0


def test_rows_off_every_view_come_last_by_their_first_member(ledger):
    plan = ledger.plans[0]
    by = {s.representative: s for s in plan.rows}
    # hand-made: Gemma and Echo made unranked non-references (off the board's order); Apertium's row gets a
    # fingerprint no view lists, so it sorts after the listed ranked rows (order = len(order))
    rows = [dataclasses.replace(by[GEMMA], ranked=False, reference=False),
            dataclasses.replace(by[ECHO], ranked=False, reference=False),
            dataclasses.replace(by[APERTIUM], fingerprint="f" * 64), by[EMPTY]]
    fake = B.BoardLedger(ledger.inputs, ledger.boards, [dataclasses.replace(plan, rows=rows)])
    (board,) = Doc.to_document(fake, "2026-12-01T00:00:00Z").boards
    # EMPTY: reference, order 3; Apertium: ranked, unknown fingerprint → 4; then the two unranked rows by
    # order (Gemma 1, Echo 2)
    assert [r.representative for r in board.rows] == [EMPTY, APERTIUM, GEMMA, ECHO]
    assert board.rows[1].ranks == []  # placed by (fingerprint, shown card): nothing for an unknown fingerprint
    assert [len(r.ranks) for r in board.rows] == [7, 0, 7, 7]
    # equal order: the first member decides (ECHO's row given GEMMA's fingerprint: both order 1)
    rows = [dataclasses.replace(by[GEMMA], ranked=False, reference=False),
            dataclasses.replace(by[ECHO], ranked=False, reference=False, fingerprint=by[GEMMA].fingerprint)]
    fake = B.BoardLedger(ledger.inputs, ledger.boards, [dataclasses.replace(plan, rows=rows)])
    (board,) = Doc.to_document(fake, "2026-12-01T00:00:00Z").boards
    assert [r.representative for r in board.rows] == [ECHO, GEMMA]  # "…baseline-echo…" < "…gemma…"


def test_a_row_carries_its_reproduction_and_coverage_as_decided(ledger):
    from mtboard.ledger.standing import Coverage, Reproduction

    plan = ledger.plans[0]
    by = {s.representative: s for s in plan.rows}
    # hand-made standings: two reproductions that agree within 0.004, a --limit 20 run
    rows = [dataclasses.replace(by[APERTIUM], reproduction=Reproduction(2, True, (0.584633, 0.58), 0.004633),
                                coverage=Coverage(20, 355, 20))]
    fake = B.BoardLedger(ledger.inputs, ledger.boards, [dataclasses.replace(plan, rows=rows)])
    (row,) = Doc.to_document(fake, "2026-12-01T00:00:00Z").boards[0].rows
    r, c = row.reproduction, row.coverage
    assert (r.count, r.agree, r.spread, r.text) == (2, True, 0.004633, "reproduced \u00d72")
    assert (c.entries, c.of, c.limit, c.subset, c.text) == (20, 355, 20, True, "20 of 355 subset (--limit 20)")


def test_rows_follow_the_whole_segment_view_not_a_domain_view(ledger):
    lb = ledger.boards[0]
    overall = lb.views[0]
    # a hand-made board whose only other view lists the methods in the reverse order
    fake_lb = NS(cards=lb.cards, tries=lb.tries, views=[overall, NS(domain="x", methods=list(reversed(overall.methods)))])
    fake = B.BoardLedger(ledger.inputs, [fake_lb], ledger.plans)
    (board,) = Doc.to_document(fake, "2026-12-01T00:00:00Z").boards
    assert [r.representative for r in board.rows] == [APERTIUM, GEMMA, ECHO, EMPTY]
    assert [k.view for k in board.rows[0].ranks] == ["all", "x"]


def test_boards_and_plans_must_pair_up(ledger):
    with pytest.raises(ValueError):  # zip(strict=True): a board without its plan is an error, not a dropped board
        Doc.to_document(B.BoardLedger(ledger.inputs, ledger.boards, []), "2026-12-01T00:00:00Z")


def test_a_rank_holds_none_for_a_zero_position_and_a_reference_cluster():
    m = NS(rank="3", position=0, rank_lo=2, rank_hi=4, reference=False, cluster=5, composite=0.5,
           composite_ci=(0.4, 0.6), chrf=50.0)
    r = Doc._rank("gov", m)
    assert (r.view, r.rank, r.position, r.rank_lo, r.rank_hi, r.cluster, r.composite, r.composite_ci, r.chrf) == (
        "gov", "3", None, 2, 4, 5, 0.5, (0.4, 0.6), 50.0)
    m.position, m.reference = 7, True
    assert (Doc._rank("all", m).position, Doc._rank("all", m).cluster) == (7, None)


def test_an_unsealed_member_has_an_empty_seal(ledger):
    plan = ledger.plans[0]
    lc = ledger.card(GEMMA)
    unsealed = dataclasses.replace(lc, card=lc.card.model_copy(update={"run_card_hash": None}))
    inputs = dataclasses.replace(ledger.inputs, cards=[unsealed if c.path == GEMMA else c for c in ledger.inputs.cards])
    fake = B.BoardLedger(inputs, ledger.boards, [plan])
    (board,) = Doc.to_document(fake, "2026-12-01T00:00:00Z").boards
    assert board.rows[1].members[0].run_card_hash == "" and board.rows[1].members[0].page == \
        f"runs/{lc.page_id}.html"


# --------------------------------------------------------------------------------------------------------------------
# dumps


def test_dumps_is_indented_utf8_json_with_refused_characters_escaped(ledger):
    doc = Doc.to_document(ledger, "2026-12-01T00:00:00Z")
    text = Doc.dumps(doc)
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n "schema": "mtboard.ledger/2",\n "build": ')  # the alias, one-space indent
    assert '"language_pair": "EN→CA"' in text  # not ensure_ascii: → kept as is
    assert json.loads(text) == doc.model_dump(mode="json", by_alias=True)
    (board,) = doc.boards
    row = board.rows[0].model_copy(update={"method": "evil\u202ename"})
    spoof = doc.model_copy(update={"boards": [board.model_copy(update={"rows": [row]})]})
    text = Doc.dumps(spoof)
    assert '"method":"evil\\u202ename"' in text and "\u202e" not in text  # a row is one compact line (issue 35)
    assert '\n    {"fingerprint":' in text  # boards → rows → one row per line, four levels indented
    assert json.loads(text)["boards"][0]["rows"][0]["method"] == "evil\u202ename"
