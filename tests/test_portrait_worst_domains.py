"""Issue 36 item 4: a model portrait's "Worst domains" lists only domains where a run is worse than the field
(chrF++ below the field median); it listed every domain before, so a model that leads the field showed "worst
domains" it leads. On the committed cards (read-only)."""

from __future__ import annotations

from mtboard.ledger.build import build_ledger
from mtboard.site import boards as boards_view
from mtboard.site import portrait


def test_worst_domains_are_only_those_below_the_field(committed_inputs, build_cache):
    boards = build_ledger(committed_inputs, resamples=200, cache=build_cache).boards
    boards_view.fill_values(boards)
    portraits = {p.slug: p for p in portrait.build_portraits(boards)}
    leads = 0
    for slug, p in portraits.items():
        rows = []
        for lb in boards:
            by_path = {lc.path: lc for lc in lb.cards}
            for row in lb.rows:
                lc = by_path[row.representative]
                if lc.card.model_slug == slug:
                    rows += portrait._domain_rows(lb, lc, "run")
        below = sorted((d for d in rows if d["delta"] < 0), key=lambda d: (d["delta"], d["domain"], d["run"]))
        assert [(d["domain"], d["delta"]) for d in p.worst_domains] == \
            [(d["domain"], d["delta"]) for d in below[:portrait.WORST_DOMAINS]], slug
        leads += sum(d["delta"] >= 0 for d in rows)
    # the rule leaves real rows out: Apertium is rank 1 on its boards and beats the field median in its domains
    apertium = [p for slug, p in portraits.items() if slug.startswith("apertium/")]
    assert apertium and all(p.worst_domains == [] for p in apertium)
    assert leads >= 7
    # the Gemma 270M runs trail the field: their portrait still lists domains
    assert any(p.worst_domains for slug, p in portraits.items() if "gemma" in slug)
