"""The rules of :mod:`mtboard.validate.bounds` and the remaining paths of :mod:`mtboard.validate.scores`, one branch at
a time (issue 32 item 3; the ``scores`` module of scripts/mutation.py runs these).

Statistics here are hand-made lists in sacrebleu's layout (each expected line worked out by hand in the comment
beside it); the reference statistics are the harness's own on two short hand-written sentences, counted by hand; the
cards are committed development cards reduced to scores-only cards (:func:`mtboard.score.scores_card.from_run_card`).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError
from mtboard.core.schema import ScoresCard, ScoresSegment, Segment
from mtboard.score import scores_card as S
from mtboard.validate import bounds as B
from mtboard.validate import scores as V

from cards_support import committed

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
APERTIUM20 = committed("apertium-eng-spa__default__", 20)
GEMMA20 = committed("gemma-3-270m-q4-k-m.gguf__few-shot-completion__", 20)
NOW = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
CHRF_SRC = "sacrebleu CHRF(word_order=2) statistics: (hyp, ref, match) per order"
BLEU_SRC = "sacrebleu BLEU statistics: hyp_len, ref_len, correct 1-4, total 1-4"
TER_SRC = "sacrebleu TER statistics: edits, reference words"


def _scores(path: Path = APERTIUM20, dev: Path | None = None) -> dict:
    run = load_card(path)
    sc = S.from_run_card(run, load_card(dev or path), salt=bytes(32), segment=Segment.gold_standard,
                         corpus_sha256="e" * 64, corpus_version="1.0.0")
    return sc.model_dump(mode="json")


# a consistent hand-made chrF++ row: hypothesis of 5 non-space characters and 2 words, reference of 6 and 2
#           char 1     char 2     char 3     char 4     char 5     char 6     word 1     word 2
CHRF_OK = [5, 6, 3, 4, 5, 2, 3, 4, 1, 2, 3, 0, 1, 2, 0, 0, 1, 0, 2, 2, 1, 1, 1, 0]
# BLEU: 5 hypothesis tokens, 3 reference tokens; matches 2, 1, 0, 0; totals 5, 4, 3, 2
BLEU_OK = [5, 3, 2, 1, 0, 0, 5, 4, 3, 2]


def test_hand_made_consistent_rows_pass():
    assert B.statistics_problems(CHRF_OK, BLEU_OK, [2.0, 3.0], "$.s") == []
    assert B.ter_problems(None, "$.t") == [] and B.ter_problems([0, 0], "$.t") == []


def test_chrf_rules_name_index_order_and_side():
    bad = list(CHRF_OK)
    bad[5] = 4  # char 2-gram matches = min(hyp 4, ref 5): allowed
    assert B.chrf_problems(bad, "$.c") == []
    bad[5] = 5  # 5 > min(hyp 4, ref 5)
    assert B.chrf_problems(bad, "$.c") == [
        f"$.c[5] (char 2-gram matches) is 5, allowed: 0…4 (at most the hypothesis's 4 and the reference's 5 char "
        f"2-grams; {CHRF_SRC})"]
    ref_side = list(CHRF_OK)
    ref_side[7] = 3  # reference char 3-grams: a reference of 6 characters has 4
    assert B.chrf_problems(ref_side, "$.c") == [
        f"$.c[7] (reference char 3-grams) is 3, allowed: 4 (a text with 6 char 1-grams has that many char 3-grams; "
        f"{CHRF_SRC})"]
    word = list(CHRF_OK)
    word[21] = 2  # hypothesis word 2-grams: 2 words make 1
    assert B.chrf_problems(word, "$.c") == [
        f"$.c[21] (hypothesis word 2-grams) is 2, allowed: 1 (a text with 2 word 1-grams has that many word 2-grams; "
        f"{CHRF_SRC})"]
    assert B.chrf_problems([True] + CHRF_OK[1:], "$.c") == ["$.c[0] is True, allowed: an integer ≥ 0 (a count)"]
    assert B.chrf_problems([1.0] + CHRF_OK[1:], "$.c") == ["$.c[0] is 1.0, allowed: an integer ≥ 0 (a count)"]
    assert B.chrf_problems(CHRF_OK + [0], "$.c") == [f"$.c has 25 values, allowed: exactly 24 ({CHRF_SRC})"]


def test_bleu_rules_for_every_order():
    too_many = list(BLEU_OK)
    too_many[2] = 4  # 1-gram matches 4 > min(5 hypothesis, 3 reference 1-grams)
    assert B.bleu_problems(too_many, "$.b") == [
        f"$.b[2] (1-gram matches) is 4, allowed: 0…3 (at most the hypothesis's 5 and the reference's 3 1-grams; "
        f"{BLEU_SRC})"]
    order4 = list(BLEU_OK)
    order4[5] = 1  # a 4-gram match, but a 3-token reference has no 4-gram
    assert B.bleu_problems(order4, "$.b") == [
        f"$.b[5] (4-gram matches) is 1, allowed: 0…0 (at most the hypothesis's 2 and the reference's 0 4-grams; "
        f"{BLEU_SRC})"]
    total4 = list(BLEU_OK)
    total4[9] = 3  # 5 tokens make 2 4-grams
    assert B.bleu_problems(total4, "$.b") == [
        f"$.b[9] (4-gram total) is 3, allowed: 2 (a hypothesis of 5 tokens; {BLEU_SRC})"]
    short = [2, 3, 1, 1, 0, 0, 2, 1, 0, 1]  # 2 tokens make no 4-gram
    assert B.bleu_problems(short, "$.b") == [f"$.b[9] (4-gram total) is 1, allowed: 0 (a hypothesis of 2 tokens; "
                                             f"{BLEU_SRC})"]
    assert B.bleu_problems(BLEU_OK[:9], "$.b") == [f"$.b has 9 values, allowed: exactly 10 ({BLEU_SRC})"]
    assert B.bleu_problems([5, -3] + BLEU_OK[2:], "$.b") == ["$.b[1] is -3, allowed: an integer ≥ 0 (a count)"]


def test_ter_rules():
    assert B.ter_problems([1.0, 2.5], "$.t") == [
        f"$.t[1] (reference words) is 2.5, allowed: a whole number ≥ 0 ({TER_SRC})"]
    assert B.ter_problems([True, 2.0], "$.t") == [f"$.t[0] (edits) is True, allowed: a whole number ≥ 0 ({TER_SRC})"]
    assert B.ter_problems(["1", 2.0], "$.t") == [f"$.t[0] (edits) is '1', allowed: a whole number ≥ 0 ({TER_SRC})"]
    assert B.ter_problems([1.0, 2.0, 3.0], "$.t") == [f"$.t has 3 values, allowed: exactly 2 ({TER_SRC})"]


def test_reference_statistics_of_hand_written_sentences():
    # "Abra el archivo." — 14 non-space characters (so 13 … 9 longer n-grams), 4 chrF words (the final full stop is
    # split off: Abra, el, archivo, .), 4 BLEU 13a tokens, 3 TER words (TER keeps "archivo." whole); "x": one of each
    a, x = B.reference_statistics(["Abra el archivo.", "x"], "es")
    assert a == B.ReferenceStats((14, 13, 12, 11, 10, 9, 4, 3), 4, 3.0)
    assert x == B.ReferenceStats((1, 0, 0, 0, 0, 0, 1, 0), 1, 1.0)
    assert B.reference_statistics([], "es") == []


def test_reference_problems_every_field():
    ref = B.ReferenceStats((6, 5, 4, 3, 2, 1, 2, 1), 3, 2.0)  # the reference side of CHRF_OK / BLEU_OK
    assert B.reference_problems(CHRF_OK, BLEU_OK, [1.0, 2.0], ref, "$.s", "C") == []
    chrf = list(CHRF_OK)
    chrf[4] = 9  # reference char 2-grams
    assert B.reference_problems(chrf, BLEU_OK, [1.0, 2.0], ref, "$.s", "C") == [
        "$.s.chrf[4] (reference char 2-grams) is 9, allowed: 5 (the reference of this entry in C)"]
    # issue 32 review: a covered reference (2 TER words) with TER null — the card dropped a segment from coverage
    assert B.reference_problems(CHRF_OK, BLEU_OK, None, ref, "$.s", "C") == [
        "$.s.ter is null, allowed: [edits, 2] (the reference of this entry in C is within TER's coverage, decided by "
        "the reference alone: mtboard.score.metrics.ter.ter_covered)"]
    assert B.reference_problems(CHRF_OK, BLEU_OK, [1.0, 5.0], ref, "$.s", "C") == [
        "$.s.ter[1] (reference words) is 5.0, allowed: 2.0 (the reference of this entry in C)"]
    uncovered = B.ReferenceStats(ref.chrf, 3, None)
    assert B.reference_problems(CHRF_OK, BLEU_OK, [1.0, 2.0], uncovered, "$.s", "C") == [
        "$.s.ter is present, allowed: null (the reference of this entry in C is outside TER's coverage)"]
    assert B.reference_problems(CHRF_OK, BLEU_OK, None, uncovered, "$.s", "C") == []


def test_dates_at_the_edges():
    assert B.parse_date("2026-12-02T06:00:00") == NOW  # a time without zone is read as UTC
    assert B.parse_date(None) is None and B.parse_date("2026-13-01") is None
    assert B.date_problem("2024-01-01T00:00:00Z", "$.d", NOW) is None  # the earliest date itself is allowed
    assert B.date_problem("2023-12-31", "$.d", NOW) == ("$.d is 2023-12-31, allowed: from 2024-01-01 on (no mtboard "
                                                        "document is older)")
    assert B.CLOCK_SKEW.total_seconds() == 600 and B.CLOCK_SKEW_MINUTES == 10


# ---------------------------------------------------------------------------------------------------------------
# validate/scores.py paths


def test_text_fields_paths():
    assert V.text_fields("x") == ["$"]  # a bare string document
    # a key that itself reads like a list path: only the list's own marker is replaced by the index
    assert V.text_fields({"a": [{"a[]": "x"}]}) == ["a[0].a[]"]
    assert V.text_fields({"segments": [{"outcome": "usable"}, {"outcome": "usable "}]}) == ["segments[1].outcome"]


def test_capped_lists_twenty_lines_then_counts_the_rest():
    assert V._capped("stats", ["a"] * 20) == ["stats: a"] * 20
    assert V._capped("stats", ["a"] * 23) == ["stats: a"] * 20 + ["stats: … and 3 more"]
    assert V.MAX_LINES_PER_CHECK == 20


def test_report_names_the_file_and_keeps_the_card(tmp_path):
    data = _scores()
    rep = V.check_scores_data(data, "a.scores.json", now=NOW)
    assert rep.ok and rep.path == "a.scores.json" and isinstance(rep.card, ScoresCard)
    bad = S.seal({**data, "dataset": {**data["dataset"], "entry_count": 21}})
    assert V.check_scores_data(bad, "a.scores.json", now=NOW).problems == [
        "recompute: $.dataset.entry_count is 21, allowed: 20 (the number of segments the card lists)"]
    schema = V.check_scores_data({**data, "salt_id": 5}, "a.scores.json", now=NOW)
    assert schema.problems[0].startswith("schema: a.scores.json: $.salt_id: ") and schema.card is None


def test_validate_scores_card_reads_safely_and_passes_the_clock(tmp_path):
    data = _scores()
    path = tmp_path / "a.gold_standard.scores.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert V.validate_scores_card(path).path == path.name
    early = datetime(2025, 1, 1, tzinfo=UTC)  # the card is dated 2026: after this clock
    (line,) = V.validate_scores_card(path, now=early).problems
    assert line.startswith(f"timestamp: $.timestamp is {data['timestamp']}, allowed: not after the validation time "
                           "2025-01-01T00:00:00Z")
    path.write_text('{"a": 1, "a": 2}', encoding="utf-8")
    rep = V.validate_scores_card(path)
    assert rep.path == path.name and rep.problems[0].startswith(f"json: {path.name}: $.a: duplicate key")
    big = tmp_path / "big.scores.json"
    with big.open("wb") as fh:  # sparse: over 16 MiB without writing them
        fh.truncate(V.MAX_BYTES + 1)
    (line,) = V.validate_scores_card(big).problems
    assert line == (f"json: {big}: file is {V.MAX_BYTES + 1} bytes, over the {V.MAX_BYTES}-byte limit (fix: split "
                    "the submission or raise the limit)")


def test_recompute_problems_compare_every_aggregate():
    card = ScoresCard.model_validate(_scores())
    assert V.recompute_problems(card) == []
    moved = card.model_copy(update={"scores": card.scores.model_copy(update={"composite": 0.5, "bleu": 1.0})})
    assert sorted(V.recompute_problems(moved)) == [
        f"recompute: $.scores.bleu is 1.0, allowed: {card.scores.bleu!r} (recomputed from the segments: "
        "mtboard.score.scores_card.recompute)",
        f"recompute: $.scores.composite is 0.5, allowed: {card.scores.composite!r} (recomputed from the segments: "
        "mtboard.score.scores_card.recompute)"]
    empty = card.model_copy(update={"segments": []})
    assert V.recompute_problems(empty) == [
        "recompute: $.segments: a scores-only card needs at least one segment"]


def test_a_fact_without_its_whole_is_refused():
    card = ScoresCard.model_validate(_scores())
    seg = card.segments[0].model_copy(update={"fst_accepted_words": 1, "fst_checked_words": None,
                                              "glossary_hits": 1, "glossary_terms": 0})
    assert V.segment_problems(card.model_copy(update={"segments": [seg]})) == [
        "$.segments[0].fst_accepted_words is 1, allowed: 0…0 (at most $.segments[0].fst_checked_words: a subset of "
        "those)",
        "$.segments[0].glossary_hits is 1, allowed: 0…0 (at most $.segments[0].glossary_terms: a subset of those)"]


def test_corpus_problems_when_the_references_cannot_be_scored(tmp_path, monkeypatch):
    dev = json.loads((ROOT / "corpora" / "mtb-en-es-dev.json").read_text(encoding="utf-8"))
    card = ScoresCard.model_validate(_scores())
    ids = [s.entry_id for s in card.segments]
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"dataset": dev["dataset"], "entries": [
        {**e, "segment": "gold_standard"} for e in dev["entries"] if e["id"] in ids[:-1]]}), encoding="utf-8")
    secret = V.SecretCorpus.load(path, "$SECRET")
    assert secret.name == "$SECRET" and V.SecretCorpus.load(path).name == "the secret corpus"
    mine = card.model_copy(update={"dataset": card.dataset.model_copy(update={"sha256": secret.sha256})})
    extra = (f"$.segments[19].entry_id is {ids[-1]}, allowed: an entry id of the gold_standard segment of $SECRET")
    assert V.corpus_problems(mine, secret) == [extra]
    # TER reference words are compared too (entry 1's reference has 10 TER words on the committed card)
    seg0 = mine.segments[0]
    assert seg0.ter is not None and seg0.ter[1] == 10.0
    wrong_ter = mine.model_copy(update={"segments": [seg0.model_copy(update={"ter": [seg0.ter[0], seg0.ter[1] + 1]}),
                                                     *mine.segments[1:]]})
    assert V.corpus_problems(wrong_ter, secret) == [extra, (
        f"$.segments[0].ter[1] (reference words) is {seg0.ter[1] + 1!r}, allowed: {seg0.ter[1]!r} (the reference of "
        "this entry in $SECRET)")]

    def broken(references, target_language):
        raise ConfigError("no tokenizer", field="target_language")

    monkeypatch.setattr(B, "reference_statistics", broken)
    assert V.corpus_problems(mine, secret) == [
        extra, "cannot compute the reference statistics: target_language: no tokenizer"]


def test_check_dev_link_compares_every_shared_field():
    apertium, gemma = load_card(APERTIUM20), load_card(GEMMA20)
    own = ScoresCard.model_validate(_scores(APERTIUM20))
    assert V.check_dev_link(own, apertium) == []
    borrowed = ScoresCard.model_validate(_scores(GEMMA20, dev=APERTIUM20))  # Gemma's run naming Apertium's card
    tail = "a gold card is a re-run of its development card's method"
    assert V.check_dev_link(borrowed, gemma) == [
        f"link: $.card_run_card_hash is {apertium.run_card_hash!r}, allowed: {gemma.run_card_hash!r} (the development "
        f"card's run_card_hash: {tail})",
        f"link: $.method_spec is 'apertium:eng-spa', allowed: {gemma.method.spec!r} (the development card's "
        f"method.spec: {tail})",
        f"link: $.model_slug is 'apertium/eng-spa', allowed: {gemma.model_slug!r} (the development card's model_slug: "
        f"{tail})",
        f"link: $.condition is 'default', allowed: {gemma.condition!r} (the development card's condition: {tail})",
        f"link: $.card_fingerprint is {apertium.fingerprint.hash!r}, allowed: {gemma.fingerprint.hash!r} (the "
        f"development card's fingerprint.hash: {tail})"]
    other_lang = own.model_copy(update={"card_dataset_id": "mtb-en-fr-dev", "dataset": own.dataset.model_copy(
        update={"source_language": "de", "target_language": "fr"})})
    assert V.check_dev_link(other_lang, apertium) == [
        f"link: $.card_dataset_id is 'mtb-en-fr-dev', allowed: 'mtb-en-es-dev' (the development card's dataset.id: "
        f"{tail})",
        f"link: $.dataset.source_language is 'de', allowed: 'en' (the development card's dataset.source_language: "
        f"{tail})",
        f"link: $.dataset.target_language is 'fr', allowed: 'es' (the development card's dataset.target_language: "
        f"{tail})"]


def test_the_segment_rule_stands_behind_the_text_rule():
    """A public segment never reaches the ``segment`` check: the text check's pattern for ``dataset.segment`` refuses
    it first (so the ``segment:`` line is defence in depth)."""
    data = _scores()
    dev = S.seal({**data, "dataset": {**data["dataset"], "segment": "development"}})
    assert V.check_scores_data(dev, "x", now=NOW).problems == [
        "text: $.dataset.segment holds text (not repeated here), allowed: no string here (strings only at the "
        "identifier, hash, enum and signature paths of mtboard.core.schema.SCORES_STRING_PATTERNS, each of its "
        "pattern; spec §6.4: a scores-only card holds no source, reference or hypothesis text)"]


def test_scores_segment_model_accepts_the_hand_made_rows():
    seg = ScoresSegment.model_validate({"entry_id": 1, "chrf": CHRF_OK, "bleu": BLEU_OK, "ter": [1.0, 2.0],
                                        "outcome": "usable", "exact_match": False, "code_switching": False,
                                        "hypothesis_hmac": "a" * 64})
    assert V.segment_problems(ScoresCard.model_validate(_scores()).model_copy(update={"segments": [seg]})) == []
    with pytest.raises(Exception):
        ScoresSegment.model_validate({**seg.model_dump(mode="json"), "chrf": CHRF_OK[:23]})
    assert copy.deepcopy(CHRF_OK) == CHRF_OK


# ---------------------------------------------------------------------------------------------------------------
# facts and statistics (issue 32 review, item 2): bounds.facts_problems on hand-made segments. Every row below is the
# harness's own statistics of the texts named beside it (asserted, so the rows cannot drift), counted by hand:
# "Abra el archivo." has 14 non-space characters (ladder 14 … 9), 4 chrF++ words (the full stop split off), 4 BLEU
# 13a tokens and 3 TER words ("archivo." stays whole).

ABRA = "Abra el archivo."
EXACT_ROW = ([14, 14, 14, 13, 13, 13, 12, 12, 12, 11, 11, 11, 10, 10, 10, 9, 9, 9, 4, 4, 4, 3, 3, 3],
             [4, 4, 4, 3, 2, 1, 4, 3, 2, 1], [0.0, 3.0])
EMPTY_ROW = ([0, 14, 0, 0, 13, 0, 0, 12, 0, 0, 11, 0, 0, 10, 0, 0, 9, 0, 0, 4, 0, 0, 3, 0],
             [0, 4, 0, 0, 0, 0, 0, 0, 0, 0], [3.0, 3.0])
ES_MODES = B.MetricModes("13a", "word", 20)
FACTS = "docs/SCORING_SPEC.md §9 facts and statistics"


def _seg(row, **facts) -> ScoresSegment:
    chrf, bleu, ter = row
    base = {"entry_id": 1, "outcome": "usable", "exact_match": False, "code_switching": False,
            "hypothesis_hmac": "0" * 64}
    return ScoresSegment.model_validate({**base, "chrf": list(chrf), "bleu": list(bleu),
                                         "ter": None if ter is None else list(ter), **facts})


def _stats(hyp: str, ref: str, tgt: str = "es"):
    from mtboard.score.metrics.segments import segment_statistics

    c, b, t = segment_statistics([hyp], [ref], tgt, workers=1)
    return c[0], b[0], t[0]


def test_the_hand_made_rows_are_the_harness_statistics():
    assert _stats(ABRA, ABRA) == EXACT_ROW
    assert _stats("", ABRA) == EMPTY_ROW
    assert B.metric_modes("es") == ES_MODES
    assert B.metric_modes("ja") == B.MetricModes("ja-mecab", "char", 60)
    assert B.metric_modes("zh") == B.MetricModes("zh", "char", 60)
    assert B.metric_modes("th") == B.MetricModes("char", None, 20)


def test_an_exact_match_has_perfect_statistics():
    ok = _seg(EXACT_ROW, exact_match=True, equivalent_match=True)
    assert B.facts_problems(ok, "$.s", ES_MODES) == []
    chrf, bleu, ter = copy.deepcopy(EXACT_ROW)
    chrf[0], chrf[2], chrf[23] = 13, 13, 2  # one character fewer, one word 2-gram match fewer
    bad = _seg((chrf, bleu, [1.0, 3.0]), exact_match=True, equivalent_match=False, outcome="no_usable_output",
               code_switching=True)
    why = "$.s.exact_match is true: the same words and characters as the reference's"
    assert B.facts_problems(bad, "$.s", ES_MODES)[:6] == [
        f"$.s.exact_match is true, allowed: false (the outcome is no_usable_output: only usable output matches; {FACTS})",
        f"$.s.equivalent_match is false, allowed: true or null ($.s.exact_match is true: an exact match is equivalent; "
        f"{FACTS})",
        f"$.s.chrf[0] (hypothesis char 1-grams) is 13, allowed: 14 ({why} 14; {FACTS})",
        f"$.s.chrf[2] (char 1-gram matches) is 13, allowed: 14 ({why} 14; {FACTS})",
        f"$.s.chrf[23] (word 2-gram matches) is 2, allowed: 3 ({why} 3; {FACTS})",
        f"$.s.ter[0] (edits) is 1.0, allowed: 0.0 ($.s.exact_match is true: word-level TER of the same words; "
        f"{FACTS})"]
    # BLEU: checked only under a tokenizer that ignores how whitespace is written (char, zh)
    short = _seg((EXACT_ROW[0], [3, 4, 3, 2, 1, 0, 3, 2, 1, 0], [0.0, 3.0]), exact_match=True)
    assert B.facts_problems(short, "$.s", ES_MODES) == []
    assert B.facts_problems(short, "$.s", B.MetricModes("zh", "char", 60)) == [  # ("char": no TER-word rules)
        f"$.s.bleu[{i}] is {v}, allowed: {w} ($.s.exact_match is true: the reference's tokens under BLEU tokenizer "
        f"zh; {FACTS})" for i, v, w in ((0, 3, 4), (2, 3, 4), (3, 2, 3), (4, 1, 2), (5, 0, 1), (6, 3, 4), (7, 2, 3),
                                        (8, 1, 2), (9, 0, 1))]


@pytest.mark.parametrize("hyp,ref,tgt", [("a-\nb", "a- b", "es"), ("日本\n-語", "日本 -語", "ja")],
                         ids=["13a-joins-hyphen-newline", "tercom-normalized-joins-newline-hyphen"])
def test_why_bleu_13a_and_character_ter_are_left_out_of_the_exact_match_rule(hyp, ref, tgt):
    """Texts equal up to whitespace (so an exact match) whose 13a BLEU or normalised TER statistics are not perfect:
    13a deletes "-\\n" (sacrebleu tokenizer_13a), tercom's normalisation deletes "\\n-" (tokenizer_ter)."""
    from mtboard.core.text import normalise_for_match

    assert normalise_for_match(hyp) == normalise_for_match(ref)
    chrf, bleu, ter = _stats(hyp, ref, tgt)
    if tgt == "es":
        assert bleu[:2] == [1, 2]  # "ab" against "a-", "b"
    else:
        assert ter == [1.0, 4.0]  # 日 本 -語 against 日 本 - 語
    seg = _seg((chrf, bleu, ter), exact_match=True)
    assert B.facts_problems(seg, "$.s", B.metric_modes(tgt)) == []  # no false refusal


def test_an_unusable_outcome_has_the_empty_hypothesis_statistics():
    ok = _seg(EMPTY_ROW, outcome="no_usable_output", code_switching=True, hallucination=True, semantic_units=0)
    assert B.facts_problems(ok, "$.s", ES_MODES) == []
    assert B.facts_problems(_seg(EMPTY_ROW, outcome="source_untranslated", code_switching=True), "$.s",
                            ES_MODES) == []  # facts that were not computed (null) are not claimed
    chrf, bleu, _ = EXACT_ROW
    bad = _seg((chrf, bleu, [0.0, 3.0]), outcome="source_untranslated", equivalent_match=True, hallucination=False,
               semantic_units=9000)
    why = f"$.s.outcome is source_untranslated, scored as the empty hypothesis; {FACTS}"
    assert B.facts_problems(bad, "$.s", ES_MODES) == [
        f"$.s.chrf[0] (hypothesis char 1-grams) is 14, allowed: 0 ({why})",
        f"$.s.chrf[18] (hypothesis word 1-grams) is 4, allowed: 0 ({why})",
        f"$.s.bleu[0] (hypothesis length) is 4, allowed: 0 ({why})",
        f"$.s.ter[0] (edits) is 0.0, allowed: 3.0 ({why})",
        f"$.s.equivalent_match is true, allowed: false or null ({why})",
        f"$.s.code_switching is false, allowed: true ({why})",
        f"$.s.hallucination is false, allowed: true or null ({why})",
        f"$.s.semantic_units is 9000, allowed: 0 or null ({why})"]
    assert B.facts_problems(_seg(EMPTY_ROW, outcome="no_usable_output", code_switching=True, exact_match=True),
                            "$.s", ES_MODES)[-1] == f"$.s.exact_match is true, allowed: false ($.s.outcome is " \
                                                    f"no_usable_output, scored as the empty hypothesis; {FACTS})"


def test_word_level_ter_agrees_with_the_chrf_word_counts():
    # a 10-word hypothesis (chrF++ words: "mismo," and "favor." split: 10) against ABRA: 8 edits, TER words 8
    long_row = _stats("Pulse Aceptar para continuar ahora mismo, por favor.", ABRA)
    assert long_row[2] == [8.0, 3.0] and long_row[0][18:20] == [10, 4]
    assert B.facts_problems(_seg(long_row), "$.s", ES_MODES) == []
    # edits forged to 1: the hypothesis has 5…10 TER words, the reference 3, so at least 2 edits
    forged = _seg((long_row[0], long_row[1], [1.0, 3.0]))
    assert B.facts_problems(forged, "$.s", ES_MODES) == [
        f"$.s.ter[0] (edits) is 1.0, allowed: ≥ 2 (a hypothesis of 10 chrF++ words has 5…10 TER words, the reference "
        f"3: each missing or extra word is an edit; {FACTS})"]
    # edits 0 with other chrF++ word counts, and reference words outside 3…6 chrF++ words
    chrf = list(EXACT_ROW[0])
    chrf[18], chrf[19] = 3, 7
    assert B.facts_problems(_seg((chrf, EXACT_ROW[1], [0.0, 3.0])), "$.s", ES_MODES) == [
        f"$.s.chrf[19] (reference word 1-grams) is 7, allowed: 3…6 (the reference's 3 TER words, at most one "
        f"punctuation mark split off each; {FACTS})",
        f"$.s.chrf[18] (hypothesis word 1-grams) is 3, allowed: 7 (TER 0 edits: the reference's words up to case, "
        f"split alike; {FACTS})"]
    # U+0130: TER 0 (lower-cased alike) though chrF++ counts 1 and 2 characters, and BLEU 13a 3 and 1 tokens for
    # "&QUOT;" / "&quot;" — why TER 0 implies neither equal character counts nor equal BLEU lengths
    for hyp, ref in (("İ", "i\u0307"), ("&QUOT;", "&quot;")):
        row = _stats(hyp, ref)
        assert row[2][0] == 0.0 and (row[0][0] != row[0][1] or row[1][0] != row[1][1])
        assert B.facts_problems(_seg(row), "$.s", ES_MODES) == []


def test_ter_coverage_and_availability_without_the_corpus():
    # null TER on a reference of 4 chrF++ words (so at most 4 TER words): covered, TER cannot be null
    assert B.facts_problems(_seg((EXACT_ROW[0], EXACT_ROW[1], None)), "$.s", ES_MODES) == [
        f"$.s.ter is null, allowed: [edits, reference words] (the reference has at most 4 TER words (its chrF++ word "
        f"1-grams), within the cap of 20: TER-covered; {FACTS})"]
    # 21 chrF++ reference words may be 11 TER words (covered) or 21 (not): nothing to say without the corpus
    chrf = list(EMPTY_ROW[0])
    chrf[19], chrf[22] = 21, 20
    assert B.facts_problems(_seg((chrf, EMPTY_ROW[1], None), outcome="no_usable_output", code_switching=True),
                            "$.s", ES_MODES) == []
    # a present TER whose reference has more words than the cap: never scored
    chrf[19] = 42
    assert B.facts_problems(_seg((chrf, EMPTY_ROW[1], [21.0, 21.0]), outcome="no_usable_output",
                                 code_switching=True), "$.s", ES_MODES) == [
        f"$.s.ter[1] (reference words) is 21.0, allowed: 0…20 (a TER-scored reference has at most the coverage cap of "
        f"TER tokens; {FACTS})"]
    # Thai: no TER mode at all; Japanese: character-level TER, whose cap is 60 and whose words are not chrF++'s
    thai = _stats("ภาษาไทย", "ภาษาไทย", "th")  # an exact match: 7 characters
    assert B.facts_problems(_seg((thai[0], thai[1], [0.0, 1.0])), "$.s", B.metric_modes("th")) == [
        f"$.s.ter is present, allowed: null (the target language has no TER mode; {FACTS})"]
    assert B.facts_problems(_seg((EXACT_ROW[0], EXACT_ROW[1], [0.0, 60.0])), "$.s", B.metric_modes("ja")) == []
    assert B.facts_problems(_seg((EXACT_ROW[0], EXACT_ROW[1], None)), "$.s", B.metric_modes("ja")) == []


def test_char_bleu_counts_are_chrf_character_counts():
    # "ภาษาไทย" (Thai language) against "ภาษาลาว" (Lao language), 7 characters each: common characters ภ, า×2, ษ
    # (4), 2-grams ภา าษ ษา (3), 3-grams ภาษ าษา (2), 4-gram ภาษา (1) — the same under BLEU char and chrF++
    chrf, bleu, ter = _stats("ภาษาไทย", "ภาษาลาว", "th")
    assert chrf[:12] == [7, 7, 4, 6, 6, 3, 5, 5, 2, 4, 4, 1] and bleu == [7, 7, 4, 3, 2, 1, 7, 6, 5, 4] and ter is None
    th = B.metric_modes("th")
    assert B.facts_problems(_seg((chrf, bleu, None)), "$.s", th) == []
    perfect = [7, 7, 7, 6, 5, 4, 7, 6, 5, 4]  # BLEU 100 forged, chrF++ left honest
    assert B.facts_problems(_seg((chrf, perfect, None)), "$.s", th) == [
        f"$.s.bleu[{i}] is {v}, allowed: {w} (BLEU tokenizer char: chrF++'s char {n}-gram matches, $.s.chrf[{k}]; "
        f"{FACTS})" for i, v, w, n, k in ((2, 7, 4, 1, 2), (3, 6, 3, 2, 5), (4, 5, 2, 3, 8), (5, 4, 1, 4, 11))]
    longer = [8, 7, 4, 3, 2, 1, 8, 7, 6, 5]  # one more hypothesis character claimed to BLEU only
    assert B.facts_problems(_seg((chrf, longer, None)), "$.s", th)[0] == (
        f"$.s.bleu[0] is 8, allowed: 7 (BLEU tokenizer char: chrF++'s hypothesis char 1-grams, $.s.chrf[0]; {FACTS})")
    assert B.facts_problems(_seg((chrf, [7, 6] + longer[2:], None)), "$.s", th)[0].startswith(
        "$.s.bleu[1] is 6, allowed: 7 (BLEU tokenizer char: chrF++'s reference char 1-grams")
    # an empty reference: chrF++ counts no hypothesis n-grams at all, BLEU counts them (2 characters, one 2-gram)
    empty_ref = _stats("ab", "", "th")
    assert empty_ref[0] == [0] * 24 and empty_ref[1] == [2, 0, 0, 0, 0, 0, 2, 1, 0, 0]
    assert B.facts_problems(_seg(empty_ref), "$.s", th) == []
    assert B.facts_problems(_seg((chrf, perfect, [3.0, 1.0])), "$.s", ES_MODES) == []  # 13a: no such link


def test_char_bleu_totals_are_compared_order_by_order():
    # two disjoint 5-letter Thai strings (กขคงจ, ฉชซฌญ; one chrF++ word each): no match at any order, so every
    # total is compared by the order's own reference count (5, 4, 3, 2 n-grams), never by its matches (0)
    chrf, bleu, _ = _stats("กขคงจ", "ฉชซฌญ", "th")
    assert chrf == [5, 5, 0, 4, 4, 0, 3, 3, 0, 2, 2, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert bleu == [5, 5, 0, 0, 0, 0, 5, 4, 3, 2]
    th = B.metric_modes("th")
    assert B.facts_problems(_seg((chrf, bleu, None)), "$.s", th) == []
    longer = [6, 5, 0, 0, 0, 0, 6, 5, 4, 3]  # one hypothesis character more, claimed to BLEU only
    lines = B.facts_problems(_seg((chrf, longer, None)), "$.s", th)
    assert [line.split(" (")[0] for line in lines] == [
        "$.s.bleu[0] is 6, allowed: 5", "$.s.bleu[6] is 6, allowed: 5", "$.s.bleu[7] is 5, allowed: 4",
        "$.s.bleu[8] is 4, allowed: 3", "$.s.bleu[9] is 3, allowed: 2"]
    # a 7-letter hypothesis against a 2-letter reference (ไท, inside it): chrF++ counts no hypothesis 3-grams or
    # longer (the reference has none), BLEU counts 5 and 4 — not compared
    chrf, bleu, _ = _stats("ภาษาไทย", "ไท", "th")
    assert chrf[:9] == [7, 2, 2, 6, 1, 1, 0, 0, 0] and bleu == [7, 2, 2, 1, 0, 0, 7, 6, 5, 4]
    assert B.facts_problems(_seg((chrf, bleu, None)), "$.s", th) == []


def test_an_exact_match_under_zh_keeps_every_line():
    # "中文" against itself: 2 zh tokens, so no 3- or 4-grams (totals 0); every line of the rule is reported together
    chrf, bleu, _ = _stats("中文", "中文", "zh")
    assert bleu == [2, 2, 2, 1, 0, 0, 2, 1, 0, 0]
    zh = B.metric_modes("zh")
    assert B.facts_problems(_seg((chrf, bleu, None), exact_match=True), "$.s", zh) == []
    bad_chrf = list(chrf)
    bad_chrf[2] -= 1  # one character match fewer
    lines = B.facts_problems(_seg((bad_chrf, [1, 2, 1, 0, 0, 0, 1, 0, 0, 0], None), exact_match=True), "$.s", zh)
    assert [line[:line.index(" (", line.index("allowed"))] for line in lines] == [
        "$.s.chrf[2] (char 1-gram matches) is 1, allowed: 2", "$.s.bleu[0] is 1, allowed: 2", "$.s.bleu[2] is 1, allowed: 2",
        "$.s.bleu[3] is 0, allowed: 1", "$.s.bleu[6] is 1, allowed: 2", "$.s.bleu[7] is 0, allowed: 1"]


def test_the_edit_bound_rounds_half_the_hypothesis_words_up():
    # 11 chrF++ hypothesis words are 6…11 TER words (⌈11/2⌉ = 6, not 5.5); against 3 reference words: ≥ 3 edits
    chrf = list(EXACT_ROW[0])
    chrf[18], chrf[21] = 11, 10
    lines = B.facts_problems(_seg((chrf, EXACT_ROW[1], [2.0, 3.0])), "$.s", ES_MODES)
    assert lines == [f"$.s.ter[0] (edits) is 2.0, allowed: ≥ 3 (a hypothesis of 11 chrF++ words has 6…11 TER words, "
                     f"the reference 3: each missing or extra word is an edit; {FACTS})"]
    assert B.facts_problems(_seg((chrf, EXACT_ROW[1], [3.0, 3.0])), "$.s", ES_MODES) == []


def test_a_char_target_keeps_the_exact_match_lines():
    # Thai, an exact match claimed on a one-letter-short hypothesis ("ภาษาไท" for "ภาษาไทย"): BLEU and chrF++ agree
    # (the char rule is silent), the exact-match rule is not
    chrf, bleu, _ = _stats("ภาษาไท", "ภาษาไทย", "th")
    assert chrf[:3] == [6, 7, 6] and bleu[:3] == [6, 7, 6]
    lines = B.facts_problems(_seg((chrf, bleu, None), exact_match=True), "$.s", B.metric_modes("th"))
    assert lines[0] == ("$.s.chrf[0] (hypothesis char 1-grams) is 6, allowed: 7 ($.s.exact_match is true: the same "
                        f"words and characters as the reference's 7; {FACTS})")
    assert any(line.startswith("$.s.bleu[0] is 6, allowed: 7 ($.s.exact_match is true") for line in lines)
