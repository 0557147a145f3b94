"""Issue 31/32: every row's standing, decided once (:mod:`mtboard.ledger.standing`) — boards, rows, tier and evidence,
representative, reproduction, coverage, ranking — on small hand-made inputs.

The cards here are stand-ins (``SimpleNamespace``) holding only the attributes :mod:`mtboard.ledger.standing` reads
(dataset id/version/segment/sha256/entry_count/language pair, method limit and class, results' entry ids and
outcomes — with the few more fields the card's summary reads, :func:`_result` —, timestamp, fingerprint hash, run card hash, composite); the verifications are real :class:`mtboard.ledger.load.Verification`
objects. tests/test_ledger.py runs the same decisions on the committed cards through the whole ledger (~2 min); this
file is fast enough for ``scripts/mutation.py ledger``. Every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mtboard.core.schema import MethodClass, Outcome
from mtboard.ledger import standing as S
from mtboard.ledger.load import CorpusInfo, Inputs, LoadedCard, Verification
from mtboard.verify.record import UNATTESTED_LABEL

SHA_A, SHA_B = "a" * 64, "b" * 64


def _card(*, fp: str = "fp1", ts: str = "2026-01-01T00:00:00Z", comp: float | None = 0.5, mean: float | None = None,
          limit: int | None = None, ids=(1, 2, 3), ds: str = "mtb-x", version: str = "1", segment: str = "dev",
          sha: str = SHA_A, lp: str = "EN→ES", cls: MethodClass = MethodClass.raw_llm, h: str | None = "c" * 64,
          usable: bool = True):
    outcome = Outcome.usable if usable else Outcome.no_usable_output
    return SimpleNamespace(
        run_card_hash=h, method_class=cls, timestamp=ts, fingerprint=SimpleNamespace(hash=fp),
        scores=SimpleNamespace(composite=comp, replicates=None if mean is None else SimpleNamespace(composite_mean=mean)),
        dataset=SimpleNamespace(id=ds, version=version, segment=segment, sha256=sha, entry_count=len(ids),
                                language_pair=lp),
        method=SimpleNamespace(limit=limit), results=[_result(i, outcome) for i in ids], tools_enabled=[])


def _result(entry_id: int, outcome: Outcome) -> SimpleNamespace:
    """A result stand-in with what :func:`mtboard.ledger.summary.summarise` reads (standing reads its entry ids and
    outcomes through the card's summary)."""
    return SimpleNamespace(entry_id=entry_id, checks=SimpleNamespace(outcome=outcome, flags=[]), error=None,
                           chrf_score=None, domain=None, segment=SimpleNamespace(value="development"), predicted="x",
                           source="s", expected="e", latency_s=None, error_kind=None, judgements={},
                           format_attempts=1, tool_call_count=0)


def _lc(path: str, page_id: str, card, tier: str = S.SELF, **ver) -> LoadedCard:
    review = ver.pop("review", None)
    return LoadedCard(path=path, card=card, page_id=page_id, verification=Verification(tier=tier, **ver),
                      review=review)


def _corpus(ds: str = "mtb-x", version: str = "1", sha: str = SHA_A, sizes: dict | None = None) -> CorpusInfo:
    sizes = sizes or {"dev": 3, "test": 7}
    corpus = SimpleNamespace(dataset=SimpleNamespace(id=ds, version=version), segment=lambda s: [None] * sizes[s])
    return CorpusInfo(path=f"corpora/{ds}.json", corpus=corpus, sha256=sha)


# --------------------------------------------------------------------------------------------------------------------
# Coverage, Reproduction, Standing


@pytest.mark.parametrize(("cov", "subset", "text"), [
    (S.Coverage(355, 355, None), False, "all 355"),
    (S.Coverage(356, 355, None), False, "all 356"),
    (S.Coverage(355, None, None), False, "355"),
    (S.Coverage(354, 355, None), True, "354 of 355 subset"),
    (S.Coverage(20, 355, 20), True, "20 of 355 subset (--limit 20)"),
    (S.Coverage(355, 355, 400), True, "355 of 355 subset (--limit 400)"),
    (S.Coverage(20, None, 20), True, "20 subset (--limit 20)"),
])
def test_coverage_text(cov, subset, text):
    assert (cov.subset, cov.text) == (subset, text)


def test_reproduction_text():
    assert S.Reproduction(1, None, (0.5,), None).text == ""
    assert S.Reproduction(2, True, (0.5, 0.5), 0.0).text == "reproduced \u00d72"
    assert S.Reproduction(3, None, (0.5, None, 0.5), 0.0).text == "reproduced \u00d73"  # unknown: not a disagreement
    assert S.Reproduction(3, False, (0.0824, None, 0.0776), 0.0048).text == "reproductions disagree (0.082 vs 0.078)"


@pytest.mark.parametrize(("tier", "label", "icon", "declared", "order"), [
    (S.SELF, "self-benchmarked", "\u25cb", True, 0),
    (S.UNATTESTED, "maintainer re-run (unattested)", "\u25d0", True, 1),
    (S.GDS, "GDS verified", "\u2714", False, 2),
    (S.COMMUNITY, "community verified", "\u2714\u2714", False, 3),
])
def test_standing_tier_properties(tier, label, icon, declared, order):
    st = S.Standing("b", "fp", tier, (), "p", ("p",), S.Reproduction(1, None, (None,), None), S.Coverage(1, 1, None),
                    True, None, False)
    assert (st.label, st.icon, st.declared, st.verified, st.rank_order) == (label, icon, declared, not declared, order)
    assert (S.SELF, S.UNATTESTED, S.GDS, S.COMMUNITY) == ("self-benchmarked", "rerun-unattested", "gds-verified",
                                                         "community-verified")


# --------------------------------------------------------------------------------------------------------------------
# What one card earned, and its evidence


@pytest.mark.parametrize(("tier", "ver", "want"), [
    (S.COMMUNITY, {}, S.COMMUNITY),
    (S.GDS, {"attested": True}, S.GDS),
    (S.GDS, {"attested": False, "label": UNATTESTED_LABEL}, S.UNATTESTED),
    (S.GDS, {"attested": False}, S.SELF),
    (S.SELF, {"label": UNATTESTED_LABEL}, S.UNATTESTED),
    (S.SELF, {"attested": True}, S.SELF),
])
def test_earned(tier, ver, want):
    assert S.earned(_lc("p.json", "0", _card(), tier, **ver)) == want


def test_evidence_of_each_tier():
    assert S._evidence(_lc("p.json", "0", _card()), S.SELF) is None
    gds = _lc("d/p.json", "0", _card(h="h1"), S.GDS, attested=True, source="d/p.verification.json", via="old")
    assert S._evidence(gds, S.GDS) == S.Evidence(S.GDS, "d/p.json", "h1", "verification record",
                                                 "d/p.verification.json", True, "old")
    un = _lc("d/p.json", "0", _card(h=None), S.GDS, source="d/p.verification.json", label=UNATTESTED_LABEL)
    assert S._evidence(un, S.UNATTESTED) == S.Evidence(S.UNATTESTED, "d/p.json", "", "verification record",
                                                       "d/p.verification.json", False, None)
    rev = SimpleNamespace(source="reviews/d/p.yaml")
    com = _lc("d/p.json", "0", _card(h="h2"), S.COMMUNITY, source="ignored", via="x", review=rev)
    assert S._evidence(com, S.COMMUNITY) == S.Evidence(S.COMMUNITY, "d/p.json", "h2",
                                                       "attested gold row + community review", "reviews/d/p.yaml", True)
    com = _lc("d/p.json", "0", _card(h=None), S.COMMUNITY)
    assert S._evidence(com, S.COMMUNITY) == S.Evidence(S.COMMUNITY, "d/p.json", "",
                                                       "attested gold row + community review", None, True, None)


def test_card_composite_is_the_replicate_mean_when_there_are_replicates():
    assert S.card_composite(_card(comp=0.4)) == 0.4
    assert S.card_composite(_card(comp=0.4, mean=0.45)) == 0.45


def test_is_reference():
    assert S.is_reference(_card(cls=MethodClass.baseline)) is True
    assert S.is_reference(_card(cls=MethodClass.pipeline)) is False


# --------------------------------------------------------------------------------------------------------------------
# Reproduction of a row's members


def _repro(*comps, rep: int = 0) -> S.Reproduction:
    members = [_lc(f"p{i}.json", str(i), _card(comp=c)) for i, c in enumerate(comps)]
    return S._reproduction(members, members[rep])


def test_reproduction_within_two_percent_of_the_representative():
    assert _repro(0.5) == S.Reproduction(1, None, (0.5,), None)
    # 2 % of 50 is exactly 1.0 (0.02 × 50 rounds to 1.0): 51 and 49 are just within, 51.5 is not
    assert _repro(50.0, 51.0, 49.0) == S.Reproduction(3, True, (50.0, 51.0, 49.0), 2.0)
    assert _repro(50.0, 51.5) == S.Reproduction(2, False, (50.0, 51.5), 1.5)
    assert _repro(50.0, 48.5) == S.Reproduction(2, False, (50.0, 48.5), 1.5)
    # measured against the representative, not the first member: 51 is within 2 % of 50.5 (1.01), 49.5 too
    assert _repro(51.0, 50.5, 49.5, rep=1).agree is True and _repro(51.0, 50.5, 49.5, rep=0).agree is False
    # the tolerance is relative to |composite|: for -50 it is 1.0 too
    assert _repro(-50.0, -49.0).agree is True


def test_reproduction_with_an_unknown_composite_is_undecided():
    assert _repro(0.5, None) == S.Reproduction(2, None, (0.5, None), None)
    assert _repro(None, 0.5, 0.7) == S.Reproduction(3, None, (None, 0.5, 0.7), pytest.approx(0.2))
    assert _repro(0.5, None, 0.7, rep=1).agree is None


# --------------------------------------------------------------------------------------------------------------------
# Boards


def test_boards_are_named_by_dataset_version_and_only_the_parts_that_differ():
    cards = [_lc("x1.json", "01", _card(ds="mtb-x", segment="dev", sha=SHA_A)),
             _lc("x2.json", "02", _card(ds="mtb-x", segment="dev", sha=SHA_B)),
             _lc("x3.json", "03", _card(ds="mtb-x", segment="test", sha=SHA_A)),
             _lc("y1.json", "04", _card(ds="mtb-y", version="2", segment="dev", sha=SHA_B, lp="JA→EN")),
             _lc("y2.json", "05", _card(ds="mtb-y", version="3", segment="dev", sha=SHA_B, lp="JA→EN"))]
    corpora = [_corpus("mtb-x", "1", SHA_A), _corpus("mtb-y", "2", SHA_B)]
    plans = S.decide(Inputs(cards=cards, corpora=corpora))
    # mtb-x v1 has two segments (suffix -dev/-test) and its dev segment two files (suffix -sha[:8]); mtb-y has one
    # segment and one file per version
    assert [p.key for p in plans] == ["mtb-x-v1-dev-aaaaaaaa", "mtb-x-v1-dev-bbbbbbbb", "mtb-x-v1-test",
                                      "mtb-y-v2", "mtb-y-v3"]
    assert [(p.dataset_id, p.version, p.segment, p.sha256[0], p.language_pair) for p in plans] == [
        ("mtb-x", "1", "dev", "a", "EN→ES"), ("mtb-x", "1", "dev", "b", "EN→ES"), ("mtb-x", "1", "test", "a", "EN→ES"),
        ("mtb-y", "2", "dev", "b", "JA→EN"), ("mtb-y", "3", "dev", "b", "JA→EN")]
    # the corpus is matched by id, version and file hash
    assert [p.corpus is corpora[0] for p in plans] == [True, False, True, False, False]
    assert [p.corpus is corpora[1] for p in plans] == [False, False, False, True, False]
    assert [[lc.path for lc in p.cards] for p in plans] == [["x1.json"], ["x2.json"], ["x3.json"], ["y1.json"],
                                                            ["y2.json"]]
    # coverage: the dev segment of mtb-x's corpus has 3 entries, its test segment 7; no corpus for the sha-b file
    assert [p.rows[0].coverage for p in plans] == [S.Coverage(3, 3, None), S.Coverage(3, None, None),
                                                   S.Coverage(3, 7, None), S.Coverage(3, 3, None),
                                                   S.Coverage(3, None, None)]


@pytest.mark.parametrize(("sets", "ref"), [
    ([(1, 2, 3), (2, 1), (1, 2)], [1, 2]),      # the most common set
    ([(1, 2, 3), (1, 2)], [1, 2, 3]),           # a tie: the larger set
    ([(1, 2), (3, 1)], [1, 3]),                 # a tie of sizes: the greater sorted tuple
])
def test_the_reference_entry_set(sets, ref):
    cards = [_lc(f"p{i}.json", f"{i:02d}", _card(fp=f"f{i}", ids=ids)) for i, ids in enumerate(sets)]
    (plan,) = S.decide(Inputs(cards=cards))
    assert plan.ref_ids == ref
    assert [lc.path for lc in plan.ranked] == [lc.path for lc, ids in zip(cards, sets) if sorted(ids) == ref]
    assert [lc.path for lc in plan.unranked] == [lc.path for lc, ids in zip(cards, sets) if sorted(ids) != ref]


def test_limit_cards_never_set_the_reference_while_full_runs_exist():
    cards = [_lc("full.json", "09", _card(fp="full", ids=(1, 2, 3, 4))),
             _lc("s1.json", "01", _card(fp="s1", ids=(1, 2), limit=2)),
             _lc("s2.json", "02", _card(fp="s2", ids=(1, 2), limit=2))]
    (plan,) = S.decide(Inputs(cards=cards, corpora=[_corpus(sizes={"dev": 4})]))
    assert plan.ref_ids == [1, 2, 3, 4] and [lc.path for lc in plan.ranked] == ["full.json"]
    assert [lc.path for lc in plan.cards] == ["s1.json", "s2.json", "full.json"]  # by page id
    assert [lc.path for lc in plan.unranked] == ["s1.json", "s2.json"]
    assert [(s.members, s.ranked, s.unranked_reason) for s in plan.rows] == [
        (("full.json",), True, None),
        (("s1.json",), False, "subset run: 2 of 4 subset (--limit 2); only runs of the board's whole entry set are "
                              "ranked"),
        (("s2.json",), False, "subset run: 2 of 4 subset (--limit 2); only runs of the board's whole entry set are "
                              "ranked")]
    # only limit cards: they are the candidates (the most common set of them)
    only = [_lc("s1.json", "01", _card(fp="s1", ids=(1, 2), limit=2)),
            _lc("s3.json", "03", _card(fp="s3", ids=(1, 2, 3), limit=3)),
            _lc("s2.json", "02", _card(fp="s2", ids=(2, 1), limit=2))]
    (plan,) = S.decide(Inputs(cards=only))
    assert plan.ref_ids == [1, 2] and [lc.path for lc in plan.ranked] == ["s1.json", "s2.json"]
    assert plan.rows[0].ranked and plan.rows[0].unranked_reason is None


# --------------------------------------------------------------------------------------------------------------------
# Rows


def test_a_row_takes_the_best_evidence_and_shows_the_strongest_earliest_member():
    # three members of one fingerprint: the oldest self-benchmarked, a GDS-verified re-run, a later unattested one
    old = _lc("old.json", "03", _card(ts="2026-01-01T00:00:00Z", comp=0.50, h="h-old"))
    gds = _lc("gds.json", "02", _card(ts="2026-02-01T00:00:00Z", comp=0.505, h="h-gds"), S.GDS, attested=True,
              source="gds.verification.json")
    una = _lc("una.json", "01", _card(ts="2026-03-01T00:00:00Z", comp=0.80, h="h-una"), S.GDS,
              label=UNATTESTED_LABEL, source="una.verification.json")
    other = _lc("other.json", "04", _card(fp="fp2", ts="2025-12-01T00:00:00Z", comp=0.3))
    (plan,) = S.decide(Inputs(cards=[una, old, other, gds], corpora=[_corpus()]))
    row = plan.rows[0]
    assert row.representative == "gds.json" and row.tier == S.GDS and row.fingerprint == "fp1"
    assert row.members == ("old.json", "gds.json", "una.json")  # oldest first
    assert row.evidence == (
        S.Evidence(S.GDS, "gds.json", "h-gds", "verification record", "gds.verification.json", True),
        S.Evidence(S.UNATTESTED, "una.json", "h-una", "verification record", "una.verification.json", False))
    # 0.80 is not within 2 % of the representative's 0.505; spread 0.80 − 0.50
    assert row.reproduction == S.Reproduction(3, False, (0.50, 0.505, 0.80), pytest.approx(0.30))
    assert (row.ranked, row.unranked_reason, row.reference, row.board) == (True, None, False, "mtb-x-v1")
    assert row.coverage == S.Coverage(3, 3, None)
    assert old.standing is row and gds.standing is row and una.standing is row
    assert plan.rows[1].members == ("other.json",) and other.standing is plan.rows[1]
    assert plan.rows[1].tier == S.SELF and plan.rows[1].evidence == ()


def test_the_representative_among_equals_is_the_earliest_then_the_lowest_page_id():
    a = _lc("a.json", "02", _card(ts="2026-01-01T00:00:00Z"))
    b = _lc("b.json", "01", _card(ts="2026-01-01T00:00:00Z"))
    c = _lc("c.json", "00", _card(ts="2026-01-02T00:00:00Z"))
    (plan,) = S.decide(Inputs(cards=[a, b, c]))
    assert plan.rows[0].representative == "b.json" and plan.rows[0].members == ("b.json", "a.json", "c.json")
    # a stronger tier wins over an earlier timestamp: community over GDS over unattested over self
    u = _lc("u.json", "05", _card(ts="2026-01-03T00:00:00Z"), S.SELF, label=UNATTESTED_LABEL)
    (plan,) = S.decide(Inputs(cards=[a, u]))
    assert (plan.rows[0].representative, plan.rows[0].tier) == ("u.json", S.UNATTESTED)
    g = _lc("g.json", "06", _card(ts="2026-01-04T00:00:00Z"), S.GDS, attested=True)
    m = _lc("m.json", "07", _card(ts="2026-01-05T00:00:00Z"), S.COMMUNITY)
    (plan,) = S.decide(Inputs(cards=[u, g, a]))
    assert (plan.rows[0].representative, plan.rows[0].tier) == ("g.json", S.GDS)
    (plan,) = S.decide(Inputs(cards=[m, u, g, a]))
    assert (plan.rows[0].representative, plan.rows[0].tier) == ("m.json", S.COMMUNITY)
    assert [e.tier for e in plan.rows[0].evidence] == [S.UNATTESTED, S.GDS, S.COMMUNITY]  # members oldest first


def test_rows_ranked_first_reference_baselines_last_then_by_first_member():
    cards = [_lc("z-ranked.json", "01", _card(fp="f1")),
             _lc("a-baseline.json", "02", _card(fp="f2", cls=MethodClass.baseline)),
             _lc("m-ranked.json", "03", _card(fp="f3")),
             _lc("b-other.json", "04", _card(fp="f4", ids=(1, 2))),
             _lc("a-other.json", "05", _card(fp="f5", ids=(2, 3)))]
    (plan,) = S.decide(Inputs(cards=cards, corpora=[_corpus()]))
    assert [(s.members[0], s.ranked, s.reference, s.unranked_reason) for s in plan.rows] == [
        ("m-ranked.json", True, False, None),
        ("z-ranked.json", True, False, None),
        ("a-other.json", False, False, "another entry set (2 of 3 subset) than the board's 3 ranked entries"),
        ("b-other.json", False, False, "another entry set (2 of 3 subset) than the board's 3 ranked entries"),
        # a baseline of the reference set: in the ranked set of cards, listed, never ranked, last
        ("a-baseline.json", False, True, "reference baseline: listed, never ranked")]
    assert plan.ref_ids == [1, 2, 3]


def test_ranked_and_unranked_cards_of_one_fingerprint_are_two_rows():
    full = _lc("full.json", "01", _card(fp="same"))
    part = _lc("part.json", "02", _card(fp="same", ids=(1, 2)))
    (plan,) = S.decide(Inputs(cards=[part, full]))
    assert [(s.members, s.ranked) for s in plan.rows] == [(("full.json",), True), (("part.json",), False)]
    assert full.standing is plan.rows[0] and part.standing is plan.rows[1]
    assert plan.rows[1].unranked_reason == "another entry set (2) than the board's 3 ranked entries"  # no corpus
    assert plan.rows[1].coverage == S.Coverage(2, None, None)


def test_one_segment_in_two_files_is_suffixed_by_file_only():
    # mtb-z v1 has one segment (dev) in two corpus files: the names differ by the file hash, not by the segment
    cards = [_lc("z1.json", "01", _card(ds="mtb-z", sha=SHA_A)), _lc("z2.json", "02", _card(ds="mtb-z", sha=SHA_B))]
    assert [p.key for p in S.decide(Inputs(cards=cards))] == ["mtb-z-v1-aaaaaaaa", "mtb-z-v1-bbbbbbbb"]


# --------------------------------------------------------------------------------------------------------------------
# Board and site states (issue 34 item 2): the first state that holds, with its exact sentence


BASE = MethodClass.baseline


@pytest.mark.parametrize(("cards", "kind", "sentence"), [
    ([("e", {"cls": BASE}), ("m", {"cls": BASE, "fp": "f2"})], "baselines-only",
     "Only baselines so far: this board's 2 rows are reference baselines (echo, empty), listed but never ranked; no "
     "translation method has been run on it yet."),
    ([("e", {"cls": BASE})], "baselines-only",
     "Only baselines so far: this board's 1 row is a reference baseline (echo, empty), listed but never ranked; no "
     "translation method has been run on it yet."),
    # every row a subset (--limit) of the corpus's 3 dev entries: the 2-entry set is the most common, so it is ranked
    ([("a", {"ids": (1, 2), "limit": 2}), ("b", {"ids": (1, 2), "limit": 2, "fp": "f2"}),
      ("c", {"ids": (1,), "limit": 1, "fp": "f3"})], "subsets-only",
     "No row covers the whole dataset yet: every run on this board evaluated a subset of its 3 entries, so its ranks "
     "compare 2 entries only."),
    # a baseline is a subset too: still subsets-only (some row is a method)
    ([("a", {"ids": (1,), "limit": 1}), ("e", {"ids": (1,), "limit": 1, "cls": BASE, "fp": "f2"})], "subsets-only",
     "No row covers the whole dataset yet: every run on this board evaluated a subset of its 3 entries, so its ranks "
     "compare 1 entry only."),
    # the only full run is a baseline: the methods are all off the ranked entry set
    ([("e", {"cls": BASE}), ("a", {"ids": (1, 2), "limit": 2, "fp": "f2"})], "nothing-ranked",
     "No method is ranked on this board yet: its only runs of the board's 3 entries are reference baselines; the other "
     "row ran a subset or another entry set and is listed unranked."),
    ([("e", {"cls": BASE}), ("a", {"ids": (1, 2), "limit": 2, "fp": "f2"}), ("b", {"ids": (1,), "fp": "f3"})],
     "nothing-ranked",
     "No method is ranked on this board yet: its only runs of the board's 3 entries are reference baselines; the other "
     "2 rows ran a subset or another entry set and are listed unranked."),
    ([("a", {"usable": False}), ("b", {"usable": False, "fp": "f2"}), ("e", {"cls": BASE, "fp": "f3"})],
     "all-failing",
     "Every method on this board failed every entry: no output of its 2 method rows passed the mechanical checks, so "
     "each entry is scored as an empty output."),
    # one method with a usable output is enough to leave all-failing (here: one ranked method left)
    ([("a", {"usable": False}), ("b", {"fp": "f2"})], "ranked", None),
    ([("a", {}), ("e", {"cls": BASE, "fp": "f2"}), ("s", {"ids": (1,), "limit": 1, "fp": "f3"})], "one-method",
     "Only one method is ranked on this board so far: there is no other method to compare it with yet."),
    ([("a", {}), ("b", {"fp": "f2"})], "ranked", None),
])
def test_board_state(cards, kind, sentence):
    lcs = [_lc(f"{name}.json", f"{i:02d}", _card(**kw)) for i, (name, kw) in enumerate(cards)]
    (plan,) = S.decide(Inputs(cards=lcs, corpora=[_corpus()]))
    assert (plan.state.kind, plan.state.sentence) == (kind, sentence)
    assert S.board_state(plan) == plan.state
    assert kind in S.BOARD_STATES


def test_the_subset_sentence_without_a_corpus_names_no_count():
    (plan,) = S.decide(Inputs(cards=[_lc("a.json", "01", _card(ids=(1, 2), limit=2))]))
    assert plan.state == S.BoardState("subsets-only", "No row covers the whole dataset yet: every run on this board "
                                      "evaluated a subset of its entries, so its ranks compare 2 entries only.")


def test_site_state():
    assert S.site_state([], 0) == S.BoardState(
        "empty", "No submissions yet: the submissions folder holds no run card, so there is no board to show.")
    assert S.site_state([], 1) == S.BoardState(
        "all-rejected", "The only submitted run card was rejected by the validator: no board can be shown yet.")
    assert S.site_state([], 3) == S.BoardState(
        "all-rejected", "All 3 submitted run cards were rejected by the validator: no board can be shown yet.")
    one = S.decide(Inputs(cards=[_lc("a.json", "01", _card())]))
    # rejected files beside a shown card change nothing: the boards' state is the site's
    assert S.site_state(one, 5) == S.BoardState(
        "one-method", "Only one method so far: there is no other method to compare it with yet.")
    two = S.decide(Inputs(cards=[_lc("a.json", "01", _card()), _lc("b.json", "02", _card(ds="mtb-y"))]))
    assert S.site_state(two, 0) == S.BoardState(
        "one-method", "Only one method per board so far: no board has a second method to compare it with yet.")
    mixed = S.decide(Inputs(cards=[_lc("a.json", "01", _card()), _lc("b.json", "02", _card(ds="mtb-y", cls=BASE))]))
    assert [p.state.kind for p in mixed] == ["one-method", "baselines-only"]
    assert S.site_state(mixed, 0) == S.BoardState("mixed", None)
    ranked = S.decide(Inputs(cards=[_lc("a.json", "01", _card()), _lc("b.json", "02", _card(fp="f2"))]))
    assert S.site_state(ranked, 0) == S.BoardState("ranked", None)
    baselines = S.decide(Inputs(cards=[_lc("a.json", "01", _card(cls=BASE)),
                                       _lc("b.json", "02", _card(ds="mtb-y", cls=BASE))]))
    assert S.site_state(baselines, 0).sentence.startswith("Only baselines so far: every run card on the board is a ")
