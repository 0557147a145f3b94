"""Issue 32 review (item 2): every consistency rule between a segment's facts and its statistics
(:func:`mtboard.validate.bounds.facts_problems`, docs/SCORING_SPEC.md §9 "Facts and statistics") holds on EVERY
segment of every committed run card, reduced to scores-only segments the way the verify workflow does
(:func:`mtboard.score.scores_card.from_run_card`). A rule that refused one honest segment would be wrong, not the
card. Kept out of the mutation run's covering list for time (~15 s: every committed card); the rules' branches are
pinned on hand-made rows in tests/test_scores_rules.py.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mtboard.core.documents import load_card
from mtboard.core.errors import InputError
from mtboard.core.schema import Outcome, Segment
from mtboard.score import scores_card as S
from mtboard.validate import bounds as B

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # 2.4 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_every_committed_segment_satisfies_every_facts_rule():
    seen: Counter = Counter()
    problems = []
    for path in sorted((ROOT / "submissions").glob("*/*.json")):
        if path.name.endswith(".verification.json"):
            continue
        run = load_card(path)
        if run.scores.morphological_accuracy is not None:  # ES→EN, CA→EN: refused (no morph counts in segments)
            with pytest.raises(InputError, match="cannot carry it"):
                S.from_run_card(run, run, salt=bytes(32), segment=Segment.gold_standard, corpus_sha256="e" * 64,
                                corpus_version="1.0.0")
            seen["morph-refused"] += 1
            continue
        card = S.from_run_card(run, run, salt=bytes(32), segment=Segment.gold_standard, corpus_sha256="e" * 64,
                               corpus_version="1.0.0")
        modes = B.metric_modes(card.dataset.target_language)
        for i, seg in enumerate(card.segments):
            problems += [f"{path.name}: {p}" for p in B.facts_problems(seg, f"$.segments[{i}]", modes)]
            seen["segments"] += 1
            seen["exact"] += seg.exact_match
            seen["unusable"] += seg.outcome != Outcome.usable
            seen[f"ter-{modes.ter}"] += seg.ter is not None
            seen["ter-0-word"] += modes.ter == "word" and seg.ter is not None and seg.ter[0] == 0
    assert problems == []
    # the six ES→EN / CA→EN cards (Apertium and both baselines: 0, not null) and the two Apertium diagnostic cards of
    # those pairs (issue 40 item 6: 24 entries each, with the corpus's analyses)
    assert seen["morph-refused"] == 8
    # what the rules were tried on (counted by this test on the committed cards, 2026-12-02): every rule has cases
    assert seen["segments"] >= 6932  # 7,287 before issue 38 withdrew a 355-entry card
    assert seen["exact"] > 50 and seen["unusable"] > 4000 and seen["ter-0-word"] > 50
    assert seen["ter-word"] > 4000 and seen["ter-char"] > 500
