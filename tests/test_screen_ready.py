"""The screen-ready score (issue 40 item 5; docs/SCORING_SPEC.md §4.8, policy ``screen-1``; :mod:`mtboard.score.screen`).

The mini runs here are HAND-MADE test fixtures (EN→SV, four and two entries written for these tests, not evaluation
data), scored by the real scorer (:func:`mtboard.score.scoring.score_run`: the mechanical policy raises the flags,
sacrebleu computes the statistics). Swedish has no semantic model and no FST analyser here, so the composite is profile
B over chrF++ (0.50), exact match (0.05) and the inverted code-switching rate (0.05), and every value can be computed
by hand; the comments do it. The committed cards are checked as they are (read, not changed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from mtboard.core.documents import load_card
from mtboard.core.schema import Entry, Outcome, TranslationRecord
from mtboard.core.schema.ledger import LedgerScreenReady
from mtboard.score import checks
from mtboard.score import screen as sc
from mtboard.score.flip import FlipRow, FlipRun, composite_over
from mtboard.score.metrics.composite import entry_columns
from mtboard.score.scoring import score_run

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "SCORING_SPEC.md"
CARDS = sorted(p for p in (ROOT / "submissions").glob("*/*.json") if not p.name.endswith(".verification.json"))

# hand-made: two 4-letter Swedish words on two lines per reference (chrF++ sees 8 letters: 8, 7, 6, 5, 4, 3 character
# n-grams of orders 1–6; 2 words and 1 word bigram)
SOURCES = ["big\ndog", "cold\nlake", "warm\ncake", "dark\nnight"]
REFERENCES = ["stor\nhund", "kall\nsjön", "varm\nkaka", "mörk\nnatt"]
OUTPUTS = ["stor\nhund",                         # exact
           "kall\nsjön (literally: cold lake)",  # commentary → hard failure
           "varm kaka",                          # format.line_breaks (still an exact match: whitespace is ignored)
           "mörk natt"]                          # format.line_breaks


def scored(sources, references, outputs):
    entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(sources, references))]
    recs = [TranslationRecord(entry_id=i + 1, raw_predicted=o) for i, o in enumerate(outputs)]
    return score_run(entries, recs, source_language="en", target_language="sv", elapsed_seconds=1.0, fst=False)


def screen_of(scores, results):
    return sc.run_screen(results, scores.composite, has_fst=False, has_equiv=False,
                         references={r.entry_id: r.expected for r in results})


@pytest.fixture(scope="module")
def mini():
    scores, results = scored(SOURCES, REFERENCES, OUTPUTS)
    return scores, results, screen_of(scores, results)


def test_hand_made_run_commentary_is_a_hard_failure_and_two_format_flags_cost_the_fixed_penalty(mini):
    scores, results, s = mini
    assert scores.composite_profile == "B" and scores.semantic_score is None and scores.fst_acceptance_rate is None
    assert [sorted(f.rule for f in r.checks.flags) for r in results] == [
        [], ["commentary", "length.long", "partly_untranslated"], ["format.line_breaks"], ["format.line_breaks"]]
    assert [sc.treatment(r.checks) for r in results] == [
        (None, ()), ("commentary", ()), (None, ("format.line_breaks",)), (None, ("format.line_breaks",))]
    assert scores.composite == 0.826444  # the composite with entry 2's commentary counted as a translation
    # C_hard, by hand: entry 2 is the empty hypothesis, so every order's precision is 1 (entries 1, 3, 4 are perfect)
    # and its recall 3/4 (one reference of four with equal counts missing): chrF++ = (1 + 2²)·1·0.75 / (2²·1 + 0.75)
    # = 3.75 / 4.75 = 0.789474; exact match 3/4; code-switching 1/4 (entry 2), inverted 0.75;
    # C_hard = (0.5 × 0.789474 + 0.05 × 0.75 + 0.05 × 0.75) / 0.60 = 0.469737 / 0.60 = 0.782895
    assert s.hard_composite == 0.782895
    # P = 0.05 × 2 flags / 4 entries = 0.025; screen-ready = min(0.782895, 0.826444) − 0.025 = 0.757895
    assert s.penalty == pytest.approx(0.025, abs=1e-15)
    assert s.value == 0.757895
    assert (dict(s.hard), s.formatted, dict(s.flags), s.entries) == ({"commentary": 1}, 2, {"format.line_breaks": 2},
                                                                     4)
    assert 0 <= s.value <= scores.composite


def test_a_hard_failure_scores_exactly_as_the_same_run_without_that_output(mini):
    """The replacement is the scorer's own treatment: the run where entry 2 returned nothing (outcome
    no_usable_output, scored by score_run) has the composite C_hard and entry 2's statistics and columns."""
    scores, results, s = mini
    empty_scores, empty_results = scored(SOURCES, REFERENCES, [OUTPUTS[0], "", *OUTPUTS[2:]])
    assert empty_results[1].checks.outcome == Outcome.no_usable_output
    assert empty_scores.composite == s.hard_composite == 0.782895
    (empty,) = sc.empty_statistics([REFERENCES[1]])
    replaced = sc.as_no_usable_output(results[1], empty, "commentary")
    assert list(replaced.stats.chrf) == list(empty_results[1].stats.chrf) == [0, 8, 0, 0, 7, 0, 0, 6, 0, 0, 5, 0, 0, 4,
                                                                              0, 0, 3, 0, 0, 2, 0, 0, 1, 0]
    cols = entry_columns([replaced], has_equiv=False, has_fst=False)
    assert {k: v.tolist() for k, v in cols.items()} == {
        k: v.tolist() for k, v in entry_columns([empty_results[1]], has_equiv=False, has_fst=False).items()}
    assert results[1].checks.outcome == Outcome.usable  # the card's own result is never changed


def test_the_cap_keeps_a_hard_failure_from_raising_the_score():
    """Hand-made 2-entry run: taking a long, note-laden output out of chrF++'s sums raises corpus precision more than
    it lowers recall, so C_hard is above C; the score is capped at C (docs/SCORING_SPEC.md §4.8)."""
    scores, results = scored(["big\ndog", "okay thanks"], ["stor\nhund", "okej tack"],
                             ["stor\nhund", "okej tack (literally: okay thanks; note: thanks is informal, okay is "
                                            "borrowed from English usage)"])
    s = screen_of(scores, results)
    assert dict(s.hard) == {"commentary": 1}
    assert results[1].code_switching_detected  # partly_untranslated: code-switching is already counted in C
    # C_hard by hand: precision 1, recall 1/2 at every order: chrF++ = 5 × 0.5 / 4.5 = 0.555556; exact 1/2;
    # code-switching 1/2 → (0.5 × 0.555556 + 0.05 × 0.5 + 0.05 × 0.5) / 0.6 = 0.546296
    assert (scores.composite, s.hard_composite) == (0.439915, 0.546296)
    assert s.value == scores.composite == 0.439915


def test_a_run_without_screen_flags_scores_exactly_its_composite():
    scores, results = scored(SOURCES, REFERENCES, REFERENCES)  # hand-made: every output equal to its reference
    s = screen_of(scores, results)
    assert all(not r.checks.flags for r in results)
    assert s.value == scores.composite == s.hard_composite and s.penalty == 0.0


def test_foreign_script_is_a_penalty_up_to_5_letters_and_a_hard_failure_above():
    out = ["stor\nhund", "kall\nsjön 寒", "varm\nkaka 寒寒寒寒寒寒", "mörk\nnatt"]  # hand-made: 1 and 6 Han letters
    scores, results = scored(SOURCES, REFERENCES, out)
    assert [(f.rule, f.count) for f in results[1].checks.flags if f.rule == "foreign_script"] == [("foreign_script", 1)]
    assert [sc.treatment(r.checks) for r in results] == [
        (None, ()), (None, ("foreign_script",)), ("foreign_script", ()), (None, ())]
    s = screen_of(scores, results)
    assert s.penalty == pytest.approx(0.05 / 4, abs=1e-15)
    assert s.value == round(min(s.hard_composite, scores.composite) - 0.0125, 6) < scores.composite


def test_signature_names_the_policy_and_its_amounts():
    assert sc.screen_signature("A", "mech-1.2") == (
        "screen:screen-1|hard:commentary,placeholder,foreign_script>5|penalty:0.05|penalised:foreign_script<=5,"
        "format.line_breaks,format.markdown,format.markup,format.speaker_label|cap:composite|floor:0|round:6|"
        "composite:A|policy:mech-1.2")
    assert sc.screen_signature("A", "mech-1.2") in SPEC.read_text(encoding="utf-8")


def test_the_spec_table_and_the_constants_agree():
    """docs/SCORING_SPEC.md §3.3's third column is the policy: every flag the checks raise has one treatment, the
    same as :mod:`mtboard.score.screen`'s constants."""
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(r"^### 3\.3 Flags.*?$(.*?)^### ", text, re.M | re.S).group(1)
    hard, penalised, none = set(), set(), set()
    for line in block.splitlines():
        if not line.startswith("| `"):
            continue
        flag_cell, _, treat = [c.strip() for c in line.strip("|").split(" | ")][:3]
        flags = set(re.findall(r"`([a-z_.]+)`", flag_cell))
        if treat.startswith("hard failure above 5 letters; −0.05"):
            assert flags == {"foreign_script"} and sc.FOREIGN_SCRIPT_HARD_ABOVE == 5
            hard |= flags
            penalised |= flags
        elif treat.startswith("hard failure"):
            hard |= flags
        elif treat.startswith("−0.05"):
            penalised |= flags
        elif treat.startswith("none"):
            none |= flags
        else:
            raise AssertionError(f"unknown treatment {treat!r} of {flags}")
    assert hard == set(sc.HARD_FLAGS) | {"foreign_script"}
    assert penalised == set(sc.PENALISED_FLAGS)
    assert none == set(sc.NO_EFFECT_FLAGS)
    raised = set(re.findall(r'rule="([a-z_.]+)"', Path(checks.__file__).read_text(encoding="utf-8")))
    assert hard | penalised | none == raised and sc.FORMAT_PENALTY == 0.05
    assert "**0.05**" in text and "**screen-ready = 0.757895**" in text


@pytest.fixture(scope="module")
def committed():
    return {p.relative_to(ROOT / "submissions").as_posix(): load_card(p) for p in CARDS}


def test_every_committed_card_is_in_range_and_equal_to_its_composite_without_flags(committed):
    assert len(committed) >= 39  # 39 today; cards added later are checked the same way
    flagged = {}
    for path, card in committed.items():
        s = sc.screen_ready(card)
        comp = card.scores.composite if card.scores.replicates is None else card.scores.replicates.composite_mean
        assert 0.0 <= s.value <= comp == s.composite, path
        LedgerScreenReady(value=s.value, composite=s.composite, hard_failures=s.hard_failures,
                          hard_by_rule=s.hard_by_rule, formatted=s.formatted, flags_by_rule=s.flags_by_rule,
                          outputs=s.outputs, penalty=s.penalty, signature=s.signature, text=s.text)
        if s.hard_failures or s.formatted:
            flagged[path] = (s.value, s.composite, s.flags_by_rule, s.outputs)
        else:
            assert s.value == comp, path  # exactly: the Apertium, echo, empty and most Gemma cards
    known = {
        # one format.markup of 20 entries: 0.260637 − 0.05 / 20 = 0.258137
        "mtb-en-fr-dev/gemma-3-270m-q4-k-m.gguf__zero-shot-completion__9addc6f4a79b.json":
            (0.258137, 0.260637, {"format.markup": 1}, 20),
        # one foreign_script of 1 letter in 330 entries: 0.262249 − 0.05 / 330 = 0.262097 (0.26209748… rounded)
        "mtb-en-ja-dev/gemma-3-270m-q4-k-m.gguf__few-shot__52e19d592f29.json":
            (0.262097, 0.262249, {"foreign_script": 1}, 330)}
    assert {k: flagged.get(k) for k in known} == known
    assert len(committed) - len(flagged) >= 37  # every other committed card today has no screen flag
    for name in ("apertium-eng-spa__default__d0f5919b5569.json", "baseline-echo__baseline__32e6f8fa41bf.json"):
        card = committed[f"mtb-en-es-dev/{name}"]
        assert sc.screen_ready(card).value == card.scores.composite


def test_replicate_card_scores_the_mean_of_its_runs(committed):
    card = committed["mtb-en-es-dev/gemma-3-270m-q4-k-m.gguf__few-shot-completion__3ddc0a3a1255.json"]
    s = sc.screen_ready(card)
    assert len(s.runs) == card.scores.replicates.n == 3 and s.outputs == 60
    assert [r.value for r in s.runs] == list(card.scores.replicates.composite)
    assert s.value == card.scores.replicates.composite_mean == s.composite


def test_the_composite_path_reproduces_every_committed_composite(committed):
    """C_hard is computed by mtboard.score.flip's composite over a set: with nothing replaced it gives each committed
    run's stored composite exactly, so a hard failure moves exactly what it replaces."""
    for path, card in committed.items():
        has_fst = card.scores.fst_acceptance_rate is not None
        has_equiv = card.scores.equivalent_match_rate is not None
        runs = [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]
        comps = [card.scores.composite] if card.scores.replicates is None else card.scores.replicates.composite
        for res, comp in zip(runs, comps):
            row = FlipRow((FlipRun.of_results(res, has_fst=has_fst, has_equiv=has_equiv),))
            assert composite_over(row, np.ones(len(res), dtype=bool)) == comp, path


def test_the_replacement_is_what_the_scorer_stores_for_every_committed_unusable_entry(committed):
    """Every committed entry without usable output (4,553 of them) already holds what the scorer gives an empty
    hypothesis; replacing it again changes neither its statistics nor its composite columns."""
    n = 0
    for card in committed.values():
        has_fst = card.scores.fst_acceptance_rate is not None
        has_equiv = card.scores.equivalent_match_rate is not None
        bad = [r for r in card.results if r.checks.outcome != Outcome.usable]
        for r, empty in zip(bad, sc.empty_statistics([r.expected for r in bad])):
            again = sc.as_no_usable_output(r, empty, "test")
            assert list(again.stats.chrf) == list(r.stats.chrf), (card.model_slug, r.entry_id)
            a = entry_columns([again], has_equiv=has_equiv, has_fst=has_fst)
            b = entry_columns([r], has_equiv=has_equiv, has_fst=has_fst)
            assert {k: v.tolist() for k, v in a.items()} == {k: v.tolist() for k, v in b.items()}
            n += 1
    assert n > 4000


def test_the_ledger_schema_refuses_an_inconsistent_value():
    base = dict(value=0.5, composite=0.5, hard_failures=0, hard_by_rule={}, formatted=0, flags_by_rule={},
                outputs=10, penalty=0.0, signature=sc.screen_signature("B", "mech-1.2"), text="t")
    LedgerScreenReady(**base)
    with pytest.raises(ValueError, match="above its composite"):
        LedgerScreenReady(**{**base, "value": 0.6, "hard_failures": 1, "hard_by_rule": {"commentary": 1}})
    with pytest.raises(ValueError, match="without a hard failure or a formatting flag"):
        LedgerScreenReady(**{**base, "value": 0.4})
    with pytest.raises(ValueError):
        LedgerScreenReady(**{**base, "value": 1.2, "composite": 1.2})


def test_the_board_and_the_ledger_show_the_ledgers_value(committed_site):
    """The committed site: the EN→ES board's Screen-ready column beside the composite, each cell the ledger's value
    (data/ledger.json), and the run page of the one flagged 20-entry EN→FR card with its count."""
    ledger = json.loads((committed_site.out / "data" / "ledger.json").read_text(encoding="utf-8"))
    board = next(b for b in ledger["boards"] if b["key"] == "mtb-en-es-dev-v1.0.0")
    html = (committed_site.out / "leaderboards" / "mtb-en-es-dev-v1.0.0.html").read_text(encoding="utf-8")
    heads = re.findall(r'<th scope="col" class="c-([a-z_]+)"', html)
    assert heads[heads.index("composite") + 1] == "screen"
    shown = 0
    for row in board["rows"]:
        if not row["ranks"] and not row["reference"]:
            continue
        page = next(m["page"] for m in row["members"] if m["card"] == row["representative"])
        tr = re.search(r'<tr data-row="' + page[5:21] + r'".*?</tr>', html, re.S)
        if tr is None:
            continue
        cell = re.search(r'<td class="c-screen" data-v="([^"]*)">([^<]*)<', tr.group(0))
        assert float(cell.group(1)) == row["screen_ready"]["value"] and cell.group(2) == \
            f'{row["screen_ready"]["value"]:.3f}'
        shown += 1
    assert shown >= 4  # today: Apertium 0.570, Gemma few-shot 0.458, echo and empty 0.000
    assert re.search(r'<td class="c-screen" data-v="0.570035">0.570<', html)  # Apertium: equal to its composite
    fr = next(b for b in ledger["boards"] if b["key"] == "mtb-en-fr-dev-v1.0.0")
    sr = next(r["screen_ready"] for r in fr["rows"]
              if any(m["page"] == "runs/9addc6f4a79bc1bc.html" for m in r["members"]))
    assert (sr["value"], sr["composite"], sr["formatted"], sr["flags_by_rule"]) == (0.258137, 0.260637, 1,
                                                                                  {"format.markup": 1})
    run = (committed_site.out / "runs" / "9addc6f4a79bc1bc.html").read_text(encoding="utf-8")
    assert ('data-screen="0.258137">0.258 (composite 0.261): 1 entry with a formatting penalty (format.markup 1; '
            '−0.0025) of 20 outputs') in run
    csv_head = (committed_site.out / "leaderboards" / "mtb-en-es-dev-v1.0.0.csv").read_text(encoding="utf-8")
    assert "screen_ready,screen_hard_failures,screen_formatted,screen_outputs,screen_policy" in csv_head
    env = json.loads((committed_site.out / "leaderboards" / "mtb-en-es-dev-v1.0.0.json").read_text(encoding="utf-8"))
    assert env["signatures"]["screen_ready"] == sc.screen_signature("A", "mech-1.2")
