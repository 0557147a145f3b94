"""The ``copies`` check compares a dataset's cards as one matrix (:class:`mtboard.validate.copies._Shares`, issue 35:
~10 million pairs at 10,000 cards); its problems must be exactly those of comparing every pair with
:func:`mtboard.validate.copies.equal_share` (the check before this change, kept below as the oracle), in the same
order. Inputs: hand-made :class:`OutputsOf` values drawn at random (seeded): near-copies around the 98 % line,
unusable outputs, subset runs, shared model identities and fingerprints, timestamp ties, every kind of target set.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from mtboard.validate import copies as C
from mtboard.validate.report import Problem


def _oracle(cards: list[C.OutputsOf], targets: set[str]) -> list[Problem]:
    """The pair-by-pair check as it was before the matrix (mtboard 53309c9, validate/copies.py)."""
    from collections import defaultdict

    by_dataset = defaultdict(list)
    for c in cards:
        by_dataset[c.dataset].append(c)
    problems = []
    for group in by_dataset.values():
        group.sort(key=lambda c: (c.timestamp, c.where))
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.where not in targets and b.where not in targets:
                    continue
                if a.identity == b.identity or a.fingerprint == b.fingerprint:
                    continue
                n, share = C.equal_share(a, b)
                if n < C.COPY_MIN_ENTRIES or share < C.COPY_SHARE:
                    continue
                later, earlier = (b, a) if b.where in targets else (a, b)
                problems.append(C.copy_problem(later.where, earlier.where, n, share))
    return problems


def _cards(rng: random.Random, n_cards: int, n_entries: int) -> list[C.OutputsOf]:
    datasets = [("d1", "1", "a" * 64), ("d2", "1", "b" * 64)]
    bases = {d: np.array([rng.randrange(1, 2**62) for _ in range(n_entries)], dtype=np.int64) for d in datasets}
    out = []
    for k in range(n_cards):
        ds = rng.choice(datasets)
        ids = np.arange(n_entries, dtype=np.int64)
        if rng.random() < 0.2:  # a subset run (--limit) or a card missing entries
            ids = np.array(sorted(rng.sample(range(n_entries), rng.randrange(0, n_entries + 1))), dtype=np.int64)
        hashes = bases[ds][ids].copy()
        differ = rng.choice([0, 0, 1, 2, 3, 5, 8, n_entries // 10, n_entries])  # near the 98 % line, or far
        for pos in rng.sample(range(len(ids)), min(differ, len(ids))):
            hashes[pos] = rng.randrange(1, 2**62)
        for pos in rng.sample(range(len(ids)), min(rng.choice([0, 0, 1, 4]), len(ids))):
            hashes[pos] = -1  # an unusable output
        out.append(C.OutputsOf(where=f"{ds[0]}/card-{k:03d}.json", dataset=ds,
                               identity=(f"model-{rng.randrange(4)}", rng.choice([None, "f" * 64])),
                               fingerprint=f"fp-{rng.randrange(6)}",
                               timestamp=f"2026-12-0{rng.randrange(1, 4)}T00:00:00Z", ids=ids, hashes=hashes))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_matrix_finds_exactly_the_pairwise_problems_in_order(seed):
    rng = random.Random(seed)
    cards = _cards(rng, rng.randrange(2, 40), rng.choice([8, 10, 12, 50, 100, 355]))
    paths = [c.where for c in cards]
    for targets in (set(paths), set(), set(rng.sample(paths, rng.randrange(len(paths) + 1)))):
        assert C.find_copies(list(cards), targets) == _oracle(list(cards), targets)


def test_a_copy_exactly_at_the_line_and_one_entry_below_it():
    """50 compared entries: 49 equal is 98.0 % (a copy), 48 is 96 % (not); 500 entries: 490 equal is exactly 0.98."""
    for n, equal, copy in [(50, 49, True), (50, 48, False), (500, 490, True), (500, 489, False), (10, 10, True),
                           (9, 9, False)]:
        ids = np.arange(n, dtype=np.int64)
        a = np.arange(1, n + 1, dtype=np.int64)
        b = a.copy()
        b[equal:] += 10_000
        cards = [C.OutputsOf("x/a.json", ("d", "1", "s"), ("m1", None), "f1", "2026-12-01T00:00:00Z", ids, a),
                 C.OutputsOf("x/b.json", ("d", "1", "s"), ("m2", None), "f2", "2026-12-02T00:00:00Z", ids, b)]
        found = C.find_copies(cards, {"x/a.json", "x/b.json"})
        assert [p.where for p in found] == (["x/b.json"] if copy else []), (n, equal)
        if copy:
            assert f"{equal / n * 100:.1f} % of its {n} compared outputs" in found[0].message


def test_cards_the_matrix_cannot_hold_are_compared_pair_by_pair():
    """Entry ids of another dtype, not strictly increasing, or hashes of another dtype: such a card is compared with
    equal_share, as before the matrix (uint64 hashes stacked with int64 ones would become float64 and make hashes
    that differ by 1 near 2**62 equal)."""
    ds = ("d", "1", "s")
    ids = np.arange(12, dtype=np.int64)
    base = np.arange(2**62, 2**62 + 12, dtype=np.int64)
    near = base.copy()
    near[0] += 1  # one entry differs by one unit: 11 of 12 equal, 91.7 %, not a copy
    cards = [C.OutputsOf("a.json", ds, ("m1", None), "f1", "2026-12-01T00:00:00Z", ids, base),
             C.OutputsOf("b.json", ds, ("m2", None), "f2", "2026-12-02T00:00:00Z", ids, near.astype(np.uint64)),
             C.OutputsOf("c.json", ds, ("m3", None), "f3", "2026-12-03T00:00:00Z", ids.astype(np.int32), base),
             C.OutputsOf("d.json", ds, ("m4", None), "f4", "2026-12-04T00:00:00Z", ids[::-1].copy(), base[::-1].copy())]
    targets = {c.where for c in cards}
    assert C.find_copies(list(cards), targets) == _oracle(list(cards), targets)
    assert {p.where for p in C.find_copies(list(cards), targets)} == {"c.json", "d.json"}


def test_a_card_that_repeats_an_entry_id_is_compared_on_its_first_result():
    """The card schema lets a card repeat an entry id (the entries check reports it); outputs_of keeps the first
    result of each id, so the comparison never sees a repeated id (np.intersect1d with assume_unique miscounted or
    raised IndexError on one)."""
    from types import SimpleNamespace

    from mtboard.core.schema import Outcome

    def card(texts):
        results = [SimpleNamespace(entry_id=i, predicted=t, checks=SimpleNamespace(outcome=Outcome.usable))
                   for i, t in texts]
        return SimpleNamespace(results=results, dataset=SimpleNamespace(id="d", version="1", sha256="s"),
                               model_slug="m", method=SimpleNamespace(model_file_sha256=None),
                               fingerprint=SimpleNamespace(hash="f"), timestamp="2026-12-01T00:00:00Z")

    out = C.outputs_of("x.json", card([(0, "uno"), (1, "dos"), (0, "otro"), (2, "tres")]))
    assert out.ids.tolist() == [0, 1, 2]
    assert out.hashes.tolist() == [C.output_hash("uno"), C.output_hash("dos"), C.output_hash("tres")]
