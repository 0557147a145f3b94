"""Issue 12/31: one row per method on every view, ordered, ranked and clustered (:mod:`mtboard.ledger.methods`), on
hand-made views — fast enough for ``scripts/mutation.py ledger-methods``.

The view rows are stand-ins (``SimpleNamespace``) holding only what :func:`mtboard.ledger.methods.group_methods`
reads: the card's fingerprint hash and replicate spreads, its path, its row's standing (members, representative), the
row's composite/chrF/CIs/bootstrap vector and reference flag. ``method_name`` (mtboard.ledger.tables, tested there) is
replaced by the stand-in card's ``name`` so the name tie-break can be set by hand. The bootstrap vectors are built so
that the clusters are certain: one method 0.4 above the rest with a spread of 0.01, two methods 0.01 apart with
independent spreads of 0.05 (no test can tell those apart: a difference of 0.01 against a standard error of
~0.07). tests/test_validity.py runs the same code on the committed board.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from mtboard.core import fmt
from mtboard.ledger import methods as M

RNG = np.random.default_rng(7)
R = 1000


@pytest.fixture(autouse=True)
def _names(monkeypatch):
    monkeypatch.setattr(M, "method_name", lambda card: card.name)


def _row(path, fp, comp, chrf=None, *, members=None, rep=None, name="m", boot="auto", reference=False, repl=None):
    standing = NS(members=tuple(members or (path,)), representative=rep or (members or (path,))[0])
    card = NS(fingerprint=NS(hash=fp), scores=NS(replicates=repl), name=name)
    if isinstance(boot, str):
        boot = None if comp is None else comp + RNG.normal(0, 0.01, R)
    return NS(lc=NS(path=path, card=card, standing=standing), composite=comp, composite_ci=(comp, comp) if comp else None,
              chrf=chrf, chrf_ci=None if chrf is None else (chrf - 1, chrf + 1), boot=boot, reference=reference,
              rank=None, position=None)


def _view(rows, domain=None):
    return NS(domain=domain, rows=rows, methods=[])


def test_one_row_per_fingerprint_showing_the_representative_with_the_members_range():
    members = ("c1.json", "c2.json", "c3.json")
    repl = NS(composite_stdev=0.01, chrf_stdev=0.5)
    rows = [_row("c2.json", "F", 0.6, 60.0, members=members, rep="c2.json", repl=repl),
            _row("c3.json", "F", 0.4, 40.0, members=members, rep="c2.json"),
            _row("c1.json", "F", 0.5, 50.0, members=members, rep="c2.json"),
            _row("d.json", "G", 0.1, 10.0)]
    (f, g) = M.group_methods(_view(rows))
    assert [r.lc.path for r in f.members] == ["c1.json", "c2.json", "c3.json"]  # the standing's member order
    assert f.rep is rows[0] and f.key == "F" and f.standing is rows[0].lc.standing
    assert (f.composite, f.composite_sd, f.composite_ci, f.chrf, f.chrf_sd, f.chrf_ci, f.reference) == (
        0.6, 0.01, (0.6, 0.6), 60.0, 0.5, (59.0, 61.0), False)
    assert f.boot is rows[0].boot
    assert (f.composite_range, f.chrf_range) == ((0.4, 0.6), (40.0, 60.0))
    assert (g.composite_range, g.chrf_range, g.composite_sd, g.chrf_sd) == (None, None, None, None)  # one card


def test_a_domain_view_shows_no_replicate_spread_and_a_missing_score_no_range():
    members = ("a.json", "b.json")
    repl = NS(composite_stdev=0.01, chrf_stdev=0.5)
    rows = [_row("a.json", "F", 0.6, None, members=members, repl=repl),
            _row("b.json", "F", None, 50.0, members=members)]
    (f,) = M.group_methods(_view(rows, domain="gov"))
    assert (f.composite_sd, f.chrf_sd, f.composite_range, f.chrf_range) == (None, None, None, None)
    (f,) = M.group_methods(_view([_row("a.json", "F", 0.6, 50.0, members=members, repl=repl),
                                  _row("b.json", "F", 0.5, None, members=members)]))
    assert (f.composite_sd, f.chrf_sd, f.composite_range, f.chrf_range) == (0.01, 0.5, (0.5, 0.6), None)
    (f,) = M.group_methods(_view([_row("a.json", "F", 0.6, 50.0, members=members),
                                  _row("b.json", "F", 0.5, 55.0, members=members)]))
    assert (f.composite_range, f.chrf_range) == ((0.5, 0.6), (50.0, 55.0))  # two cards are enough for a range


def test_methods_are_ordered_by_composite_chrf_name_then_key_references_last():
    rows = [_row("ref.json", "A", 0.9, 90.0, reference=True),
            _row("none.json", "B", None, 99.0),
            _row("lo.json", "C", 0.2, 10.0),
            _row("tie-chrf-lo.json", "D", 0.5, 40.0),
            _row("tie-chrf-hi.json", "E", 0.5, 45.0),
            _row("tie-name-b.json", "F", 0.3, 30.0, name="Beta"),
            _row("tie-name-a.json", "G", 0.3, 30.0, name="alpha"),  # lower-cased: "alpha" < "beta"
            _row("tie-key-2.json", "I", 0.25, None, name="x"),
            _row("tie-key-1.json", "H", 0.25, None, name="x"),
            _row("tie-chrf-none.json", "L", 0.22, None, name="a"),  # a missing chrF sorts as 0: after 0.5
            _row("tie-chrf-some.json", "N", 0.22, 0.5, name="b"),
            _row("case-a.json", "P", 0.21, None, name="a"),  # lower-cased, "_b" < "a" ("_" U+005F < "a" U+0061;
            _row("case-b.json", "Q", 0.21, None, name="_b"),  # upper-cased "A" U+0041 would come first)
            _row("zero.json", "J", 0.0, None),
            _row("ref0.json", "K", None, None, reference=True)]
    got = M.group_methods(_view(rows))
    # the None composite sorts after every real one (0.0 too); references after that
    assert [m.key for m in got] == ["E", "D", "G", "F", "H", "I", "N", "L", "Q", "P", "C", "J", "B", "A", "K"]


def test_clusters_positions_and_ranks_go_to_every_member():
    far = 0.9 + RNG.normal(0, 0.01, R)
    b1, b2 = 0.5 + RNG.normal(0, 0.05, R), 0.49 + RNG.normal(0, 0.05, R)
    rows = [_row("c.json", "C", 0.49, boot=b2), _row("a.json", "A", 0.9, boot=far),
            _row("b1.json", "B", 0.5, boot=b1, members=("b1.json", "b2.json")),
            _row("b2.json", "B", 0.45, boot=None, members=("b1.json", "b2.json")),
            _row("r.json", "R", 0.95, reference=True, boot=None)]
    a, b, c, r = M.group_methods(_view(rows))
    assert [(m.key, m.position, m.rank, m.rank_lo, m.rank_hi, m.cluster, m.cluster_start) for m in (a, b, c)] == [
        ("A", 1, "1", 1, 1, 0, False), ("B", 2, "2\u20133", 2, 3, 1, True), ("C", 3, "2\u20133", 2, 3, 1, False)]
    assert (r.key, r.rank, r.position, r.cluster, r.rank_lo) == ("R", "ref.", 0, 0, None)
    assert [(x.rank, x.position) for x in rows] == [("2\u20133", 3), ("1", 1), ("2\u20133", 2), ("2\u20133", 2),
                                                    ("ref.", 0)]


def test_a_method_without_a_composite_ranks_as_zero():
    # B has a bootstrap vector but no composite: ranked last, compared as 0 — 0.9 apart from A, so its own cluster
    # (were it compared as 1.0 it would sit above A and the two could not be separated)
    rows = [_row("b.json", "B", None, boot=0.1 + RNG.normal(0, 0.005, R)),
            _row("a.json", "A", 0.9, boot=0.9 + RNG.normal(0, 0.005, R))]
    a, b = M.group_methods(_view(rows))
    assert [(m.key, m.rank, m.position) for m in (a, b)] == [("A", "1", 1), ("B", "2", 2)]


def test_three_clusters_start_three_bands():
    rows = [_row(f"{k}.json", k, v, boot=v + RNG.normal(0, 0.005, R)) for k, v in (("A", 0.9), ("B", 0.6), ("C", 0.3))]
    got = M.group_methods(_view(rows))
    assert [(m.rank, m.cluster, m.cluster_start) for m in got] == [("1", 0, False), ("2", 1, True), ("3", 2, True)]


def test_without_every_bootstrap_vector_nothing_is_ranked():
    rows = [_row("a.json", "A", 0.9), _row("b.json", "B", 0.5, boot=None), _row("r.json", "R", 0.1, reference=True)]
    a, b, r = M.group_methods(_view(rows))
    assert [(m.rank, m.position, m.rank_lo, m.cluster) for m in (a, b)] == [(fmt.DASH, 0, None, 0)] * 2
    assert (r.rank, rows[0].rank, rows[0].position) == ("ref.", fmt.DASH, 0)
    assert M.group_methods(_view([_row("r.json", "R", 0.1, reference=True)]))[0].rank == "ref."
    assert M.group_methods(_view([])) == []


def test_domain_views_get_the_change_of_position_against_the_whole_segment():
    def rows(order):
        return [_row(f"{k}.json", k, v, boot=v + RNG.normal(0, 0.005, R)) for k, v in order]

    overall = _view(rows((("A", 0.9), ("B", 0.6), ("C", 0.3))))
    gov = _view(rows((("C", 0.9), ("A", 0.6), ("B", 0.3), ("D", 0.1))), domain="gov")
    legal = _view(rows((("B", 0.9), ("A", 0.8))) + [_row("x.json", "C", 0.5, boot=None)], domain="legal")
    M.attach_methods([NS(views=[overall, gov, legal])])
    assert [(m.key, m.drank) for m in overall.methods] == [("A", None), ("B", None), ("C", None)]
    # C: 3rd overall, 1st in gov → +2; A 1 → 2: −1; B 2 → 3: −1; D is not on the whole-segment view
    assert [(m.key, m.drank) for m in gov.methods] == [("C", 2), ("A", -1), ("B", -1), ("D", None)]
    # legal has a method without a bootstrap vector: nothing ranked, no Δrank
    assert [(m.key, m.position, m.drank) for m in legal.methods] == [("B", 0, None), ("A", 0, None), ("C", 0, None)]


def test_a_method_unplaced_overall_gets_no_change_on_a_domain():
    overall = _view([_row("a.json", "A", 0.9), _row("b.json", "B", 0.5, boot=None)])  # unranked overall
    gov = _view([_row("a.json", "A", 0.9, boot=0.9 + RNG.normal(0, 0.005, R))], domain="gov")
    second = _view([_row("a.json", "A", 0.9, boot=0.9 + RNG.normal(0, 0.005, R))])
    third = _view([_row("a.json", "A", 0.9, boot=0.9 + RNG.normal(0, 0.005, R))], domain="ui")
    M.attach_methods([NS(views=[overall, gov]), NS(views=[second, third])])
    assert gov.methods[0].position == 1 and gov.methods[0].drank is None
    # each board has its own whole-segment view: the second board's A is 1st there and 1st on ui → 0
    assert third.methods[0].drank == 0
