"""score_run end to end: baselines, hand-checked aggregates, record matching, determinism, FST, breakdowns.

The small corpus below is hand-made for these tests (not evaluation data); expected values are computed by hand or
with sacrebleu called directly on the same strings.
"""

from __future__ import annotations

import glob
import math
import random

import pytest
from sacrebleu.metrics import CHRF

from mtboard.score import checks, scoring
from mtboard.core.documents import load_corpus
from mtboard.core.errors import ConfigError, MtboardError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.score.metrics.bleu import bleu_from_stats
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.score.metrics.composite import quality_tier
from mtboard.score.metrics.pool import plan_chunks
from mtboard.core.schema import Entry, TranslationRecord, Usage

from extras_support import skip_without_ja

# hand-made fixture: English → Spanish
ENTRIES = [
    Entry(id=1, source="The house is red.", reference="La casa es roja.", domain="literary", difficulty=1,
          provenance="elicited"),
    Entry(id=2, source="Open the file.", reference="Abra el archivo.", domain="tech", difficulty=2,
          provenance="corpus"),
    Entry(id=3, source="Save your changes before closing.", reference="Guarde los cambios antes de cerrar.",
          domain="ui", difficulty=2, provenance="corpus"),
    Entry(id=4, source="The patient must rest for two days.",
          reference="El paciente debe descansar durante dos días.", domain="medical", difficulty=3,
          provenance="corpus", variants=["El paciente tiene que descansar dos días."]),
]


def rec(entry_id, raw, **kw):
    return TranslationRecord(entry_id=entry_id, raw_predicted=raw, **kw)


def score(records, entries=ENTRIES, **kw):
    kw.setdefault("fst", False)
    return scoring.score_run(entries, records, source_language="en", target_language="es",
                             elapsed_seconds=kw.pop("elapsed_seconds", 30.0), **kw)


MIXED = [
    rec(1, "La casa es roja.", latency_s=1.0, usage=Usage(prompt_tokens=10, completion_tokens=5)),
    rec(2, None, error="length", error_kind="token_cap", latency_s=2.0,
        usage=Usage(prompt_tokens=10, completion_tokens=5)),
    rec(3, "Save your changes before closing.", latency_s=3.0, usage=Usage(prompt_tokens=10, completion_tokens=5)),
    rec(4, "El paciente tiene que descansar dos días.</s>", latency_s=10.0,
        usage=Usage(prompt_tokens=10, completion_tokens=5)),
]


# ---------------------------------------------------------------------------------------------------------------
# baselines


def corpora() -> list[str]:
    return sorted(glob.glob("corpora/*.json"))


def _assert_echo(entries, src, tgt):
    records = [rec(e.id, e.source) for e in entries]
    scores, results = scoring.score_run(entries, records, source_language=src, target_language=tgt,
                                        elapsed_seconds=1.0)
    assert scores.composite <= 0.05
    assert scores.composite == 0.0
    assert scores.quality_tier == "baseline"
    assert scores.mechanical["source_untranslated"] == len(entries)
    for r in results:
        assert (r.checks.outcome, r.checks.rule) == ("source_untranslated", "echo")
        assert r.chrf_score == 0.0 and r.bleu_score == 0.0 and r.exact_match is False
        assert r.code_switching_detected is True
        assert r.predicted == r.source.strip() and r.raw_predicted == r.source
    assert scores.chrf_plus_plus == 0.0 and scores.code_switching_rate == 1.0


def test_echo_baseline_on_the_hand_made_corpus():
    _assert_echo(ENTRIES, "en", "es")


@pytest.mark.parametrize("path", corpora() or ["<none>"])
def test_echo_baseline_on_every_committed_corpus(path):
    if path == "<none>":
        pytest.skip("no committed corpora")
    corpus, _ = load_corpus(path)
    skip_without_ja(corpus.dataset.target_language)
    _assert_echo(corpus.entries, corpus.dataset.source_language, corpus.dataset.target_language)


@pytest.mark.parametrize("raw", ["", None, "   ", "</s>"])
def test_empty_baseline_scores_zero(raw):
    scores, results = score([rec(e.id, raw) for e in ENTRIES])
    assert scores.composite == 0.0
    assert scores.errors == len(ENTRIES) and scores.mechanical["no_usable_output"] == len(ENTRIES)
    assert all(r.chrf_score == 0.0 and r.bleu_score == 0.0 for r in results)
    assert scores.code_switching_rate == 1.0  # a missing translation never earns the inverted-rate credit


def test_reference_as_output_scores_top_marks_without_flags():
    scores, results = score([rec(e.id, e.reference) for e in ENTRIES])
    assert scores.chrf_plus_plus == 100.0 and scores.bleu == 100.0 and scores.exact_match_rate == 1.0
    assert scores.composite == 1.0 and scores.quality_tier == "fluent"
    assert all(r.checks.flags == [] for r in results)


# ---------------------------------------------------------------------------------------------------------------
# a mixed run, every aggregate checked by hand


def test_mixed_run_aggregates():
    scores, results = score(MIXED, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    by_id = {r.entry_id: r for r in results}

    # decisions stored per entry, exactly what the policy returns
    for e, r in zip(ENTRIES, MIXED):
        assert by_id[e.id].checks == checks.apply_policy(
            source=e.source, raw_predicted=r.raw_predicted, reference=e.reference, error_kind=r.error_kind,
            source_language="en", target_language="es", history=[])[1]
    assert by_id[2].checks.rule == "error.token_cap" and by_id[3].checks.rule == "echo"
    assert by_id[4].predicted == "El paciente tiene que descansar dos días." and by_id[4].checks.eos_tokens == 1
    assert scores.mechanical == {"no_usable_output": 1, "rule:echo": 1, "rule:error.token_cap": 1,
                                 "source_untranslated": 1, "usable": 2}

    # corpus chrF++: sacrebleu directly on the scored hypotheses (zeroed entries as empty strings)
    hyps = ["La casa es roja.", "", "", "El paciente tiene que descansar dos días."]
    refs = [e.reference for e in ENTRIES]
    assert abs(scores.chrf_plus_plus - CHRF(word_order=2).corpus_score(hyps, [refs]).score) < 1e-9
    assert scores.chrf_plus_plus == chrf_from_stats([r.stats.chrf for r in results])
    assert scores.bleu == bleu_from_stats([r.stats.bleu for r in results])
    assert by_id[2].chrf_score == by_id[3].chrf_score == 0.0 and by_id[1].chrf_score == 100.0

    assert (scores.total, scores.exact_matches, scores.exact_match_rate) == (4, 1, 0.25)
    assert (scores.equivalent_matches, scores.equivalent_match_rate) == (2, 0.5)  # entry 4 matches its variant
    assert by_id[4].equivalent_match is True and by_id[4].exact_match is False
    assert (scores.errors, scores.transport_errors) == (1, 0)
    assert scores.code_switching_rate == 0.5  # entries 2 and 3 (zeroed)
    assert scores.fst_acceptance_rate is None and scores.composite_profile == "B"
    # semantic (USE multilingual v3, docs/SCORING_SPEC.md §2.3): entry 1 is the reference (1.0), entry 4 its variant
    # (0.9333, measured); the failed and the echoed entry count 0 and as hallucinated (worst value by policy)
    assert [by_id[i].semantic_score for i in (1, 2, 3, 4)] == [1.0, 0.0, 0.0, 0.9333]
    assert [by_id[i].source_similarity for i in (1, 2, 3, 4)] == [0.9204, None, None, 0.853]
    assert [by_id[i].semantic_verdict for i in (1, 2, 3, 4)] == ["VALID", "ERROR", "MISMATCH", "VALID"]
    assert [by_id[i].hallucination_detected for i in (1, 2, 3, 4)] == [False, True, True, False]
    assert scores.semantic_score == (10_000 + 9_333) / 4 / 10_000 and scores.hallucination_rate == 0.5
    assert set(scores.metric_availability) == {"morphological_accuracy", "terminology_adherence"}

    # composite, profile B: chrF 0.50, equivalent 0.15, exact 0.05, semantic 0.10, code-switching 0.05 (inverted),
    # hallucination 0.03 (inverted) over 0.88
    expected = (0.50 * scores.chrf_plus_plus / 100 + 0.15 * 0.5 + 0.05 * 0.25 + 0.10 * 0.483325 + 0.05 * 0.5
                + 0.03 * 0.5) / 0.88
    assert scores.composite == round(expected, 6)
    assert scores.quality_tier == quality_tier(scores.composite)

    # latency 1, 2, 3, 10 s: mean 4, median 2.5, p95 by nearest rank = 4th smallest
    assert (scores.avg_latency_seconds, scores.median_latency_seconds, scores.p95_latency_seconds) == (4.0, 2.5, 10.0)
    # 4 × 15 tokens in 30 s; 4 entries in 30 s
    assert scores.tokens_per_second == 2.0 and scores.entries_per_minute == 8.0

    # cost: (10 × $1 + 5 × $2) / 1e6 per entry
    assert all(r.cost_usd == pytest.approx(2e-5) for r in results)
    assert scores.cost_adjusted_score == round(scores.composite / (1 + math.log10(1 + 0.02)), 6)
    totals = scoring.totals(ENTRIES, results)
    assert totals.total_cost_usd == pytest.approx(8e-5) and totals.prompt_tokens == 40
    assert totals.cost_per_source_char == pytest.approx(8e-5 / sum(len(e.source) for e in ENTRIES))

    # breakdowns: one entry per domain here; difficulty 2 holds entries 2 and 3 (both zeroed)
    assert sorted(scores.by_domain) == ["literary", "medical", "tech", "ui"]
    assert scores.by_domain["literary"].chrf_plus_plus == 100.0
    assert scores.by_difficulty["2"].n == 2 and scores.by_difficulty["2"].errors == 1
    assert scores.by_difficulty["2"].chrf_plus_plus == 0.0 and scores.by_difficulty["2"].composite == 0.0
    assert scores.by_provenance["corpus"].n == 3
    assert scores.by_provenance["corpus"].chrf_plus_plus == chrf_from_stats(
        [by_id[i].stats.chrf for i in (2, 3, 4)])

    assert scores.policy_version == checks.POLICY_VERSION
    assert "tok:13a" in scores.signatures.bleu and "nw:2" in scores.signatures.chrf
    assert scores.ter_coverage == 1.0 and scores.chrf_ci95 is not None


def test_transport_errors_are_counted_apart():
    records = [rec(1, None, error="connection reset", error_kind="transport")] + \
        [rec(e.id, e.reference) for e in ENTRIES[1:]]
    scores, results = score(records)
    assert (scores.errors, scores.transport_errors) == (1, 1)
    assert results[0].error == "connection reset" and results[0].checks.rule == "error.transport"


# ---------------------------------------------------------------------------------------------------------------
# record matching, inputs


def test_records_are_matched_by_entry_id_and_order_does_not_matter():
    shuffled = MIXED[:]
    random.Random(7).shuffle(shuffled)
    a = score(MIXED)
    b = score(shuffled)
    assert a[0].model_dump() == b[0].model_dump()
    assert [r.model_dump() for r in a[1]] == [r.model_dump() for r in b[1]]
    assert [r.entry_id for r in b[1]] == [1, 2, 3, 4]


@pytest.mark.parametrize("records, message", [
    (MIXED + [rec(1, "otra vez")], "more than one translation record"),
    (MIXED[:3], "1 entries have no translation record"),
    (MIXED + [rec(99, "x")], "not in the corpus"),
])
def test_record_matching_errors(records, message):
    with pytest.raises(MtboardError, match=message):
        score(records)


def test_inputs_are_checked():
    with pytest.raises(MtboardError, match="no entries"):
        scoring.score_run([], [], source_language="en", target_language="es", elapsed_seconds=1.0)
    with pytest.raises(ConfigError, match="only one of the two token prices"):
        score(MIXED, price_in_per_mtok=1.0)


def test_unknown_cost_and_speed_stay_null():
    scores, results = score([rec(e.id, e.reference) for e in ENTRIES], elapsed_seconds=0.0)
    assert scores.cost_adjusted_score is None and results[0].cost_usd is None
    assert scores.tokens_per_second is None and scores.entries_per_minute is None
    assert scores.avg_latency_seconds is None


def test_apertium_marks_are_stripped_only_on_request():
    records = [rec(1, "La casa es *roja."), *[rec(e.id, e.reference) for e in ENTRIES[1:]]]
    _, plain = score(records)
    _, stripped = score(records, strip_unknown_marks=True)
    assert plain[0].predicted == "La casa es *roja." and plain[0].exact_match is False
    assert stripped[0].predicted == "La casa es roja." and stripped[0].exact_match is True
    assert stripped[0].raw_predicted == "La casa es *roja."


def test_pool_and_inline_scoring_agree():
    with use_runtime(Runtime(scoring_workers=2)):  # what the CLI sets from MTBOARD_SCORING_WORKERS
        assert plan_chunks(len(MIXED)) != [(0, len(MIXED))]  # really split
        pooled = score(MIXED)
    with use_runtime(Runtime(scoring_workers=1)):
        inline = score(MIXED)
    assert pooled[0] == inline[0] and pooled[1] == inline[1]


# ---------------------------------------------------------------------------------------------------------------
# FST acceptance with the real Apertium Spanish analyser


needs_spanish_fst = pytest.mark.skipif(scoring.fst_mod.find_analyser("es") is None,
                                       reason="apertium-eng-spa (lttoolbox Spanish analyser) not installed")


@needs_spanish_fst
def test_fst_acceptance_with_the_spanish_analyser():
    records = [
        rec(1, "La casa es roja."),                    # la, casa, es, roja → 3 checked (La capitalised), 3 accepted
        rec(2, "Abra el xyzzyq archivo."),             # el, xyzzyq, archivo → 3 checked, 2 accepted
        rec(3, None, error_kind="timeout"),            # zeroed: counts 0
        rec(4, "El paciente debe descansar durante dos días."),  # 6 checked, 6 accepted
    ]
    scores, results = score(records, fst=None)
    assert scores.composite_profile == "A"
    got = [(r.fst_accepted_words, r.fst_checked_words, r.fst_valid) for r in results]
    assert got == [(3, 3, True), (2, 3, False), (0, 0, False), (6, 6, True)]
    assert scores.fst_accepted == 2
    assert scores.fst_acceptance_rate == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)


def test_fst_required_but_missing_is_an_error():
    with pytest.raises(ConfigError, match="no lttoolbox analyser"):
        scoring.score_run(ENTRIES, MIXED, source_language="en", target_language="ja", elapsed_seconds=1.0,
                          fst=True)


def test_fst_off_leaves_fst_fields_null():
    scores, results = score(MIXED, fst=False)
    assert scores.fst_acceptance_rate is None and scores.fst_accepted is None
    assert all(r.fst_valid is None and r.fst_checked_words is None for r in results)


@pytest.mark.parametrize("path", corpora() or ["<none>"])
def test_fluent_but_wrong_output_stays_low(path):
    # each entry answered with the reference of the next entry: fluent target-language text, wrong meaning
    if path == "<none>":
        pytest.skip("no committed corpora")
    corpus, _ = load_corpus(path)
    skip_without_ja(corpus.dataset.target_language)
    refs = [e.reference for e in corpus.entries]
    records = [rec(e.id, h) for e, h in zip(corpus.entries, refs[1:] + refs[:1])]
    scores, _ = scoring.score_run(corpus.entries, records, source_language=corpus.dataset.source_language,
                                  target_language=corpus.dataset.target_language, elapsed_seconds=1.0)
    assert scores.chrf_plus_plus < 20
    assert scores.composite < 0.35  # docs/SCORING_SPEC.md §4.3


@pytest.mark.parametrize("n, p95", [(1, 1.0), (19, 19.0), (20, 19.0), (21, 20.0), (40, 38.0), (100, 95.0)])
def test_p95_latency_by_nearest_rank(n, p95):
    # latencies 1, 2, …, n seconds: the ⌈0.95·n⌉-th smallest
    entries = [Entry(id=i, source=f"Line {i}.", reference=f"Línea {i}.") for i in range(1, n + 1)]
    records = [rec(i, f"Línea {i}.", latency_s=float(i)) for i in range(1, n + 1)]
    scores, _ = score(records, entries=entries)
    assert scores.p95_latency_seconds == p95


def test_duplicate_entry_ids_are_an_error():
    with pytest.raises(MtboardError, match="not unique"):
        score(MIXED, entries=ENTRIES + ENTRIES[:1])
