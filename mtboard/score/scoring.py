"""The scoring pipeline: translation records → mechanical checks → metrics → ``Scores`` + ``EntryResult`` list.
The per-entry measurement (policy, statistics, sentence scores, semantic similarity) is :mod:`mtboard.score.measure`;
this module checks the inputs, builds the entry results and the aggregates.

:func:`score_run` is what the runner calls after translating and what the validator re-runs on a card's stored raw
outputs, requiring exact equality; so it depends only on its inputs (no clock, no randomness beyond the seeded
bootstrap, no dependence on record order or process-pool split). Definitions: docs/SCORING_SPEC.md.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from mtboard.score import checks, fst as fst_mod, morphology as morph_mod
from mtboard.core.errors import ConfigError, MtboardError
from mtboard.core.languages import ter_unavailable
from mtboard.score.measure import Measured, SemanticValues, measure_run, semantic_values
from mtboard.score.metrics.bleu import BLEU_STATS_LEN, bleu_from_totals, bleu_signature, make_bleu
from mtboard.score.metrics.bootstrap import chrf_ci
from mtboard.score.metrics.chrf import CHRF_STATS_LEN, chrf_from_totals, chrf_signature
from mtboard.score.metrics.composite import (FORMAT_EXTRA, composite, composite_signature, cost_adjusted_score,
                                             quality_tier)
from mtboard.score.metrics import semantic as sem_mod
from mtboard.score.metrics.terminology import adherence, glossary_counts
from mtboard.score.metrics.ter import ter_from_stats, ter_signature
from mtboard.inputs.prices import Rates
from mtboard.core.schema import (Breakdown, EntryResult, Entry, MechanicalDecision, Outcome, Replicates, Scores,
                            SegmentStats, Signatures, Totals, TranslationRecord, Usage)


def _match_records(entries: Sequence[Entry], records: Sequence[TranslationRecord]) -> list[TranslationRecord]:
    by_id: dict[int, TranslationRecord] = {}
    for rec in records:
        if rec.entry_id in by_id:
            raise MtboardError(f"entry {rec.entry_id} has more than one translation record", where="score_run",
                               field="records", fix="pass one record per entry (one replicate run at a time)")
        by_id[rec.entry_id] = rec
    ids = {e.id for e in entries}
    if len(ids) != len(entries):
        raise MtboardError("entry ids are not unique", where="score_run", field="entries",
                           fix="score each corpus entry once")
    unknown = sorted(set(by_id) - ids)
    if unknown:
        raise MtboardError(f"{len(unknown)} records name entries not in the corpus (first: {unknown[0]})",
                           where="score_run", field="records", fix="score records against the corpus they came from")
    missing = [e.id for e in entries if e.id not in by_id]
    if missing:
        raise MtboardError(f"{len(missing)} entries have no translation record (first: {missing[0]})",
                           where="score_run", field="records",
                           fix="finish or resume the run, or score only the entries that were translated")
    return [by_id[e.id] for e in entries]


def _percentile_nearest_rank(values: list[float], percent: int) -> float:
    """Nearest-rank percentile: the ⌈percent·n/100⌉-th smallest value (integer arithmetic, no float rounding)."""
    s = sorted(values)
    return s[max(0, -(-percent * len(s) // 100) - 1)]


percentile_nearest_rank = _percentile_nearest_rank
"""Public name of the nearest-rank percentile the card's ``p95_latency_seconds`` uses (the sweep page's p90)."""


def _entry_cost(usage: Usage, rates: Rates | None) -> float | None:
    return None if rates is None else rates.cost(usage)


class _Run:
    """Per-entry columns of one scored run (internal)."""

    def __init__(self) -> None:
        self.usable: list[bool] = []
        self.exact: list[bool] = []
        self.equiv: list[bool] = []
        self.cs: list[bool] = []
        self.fst_rate: list[float] = []
        self.errors: list[bool] = []
        self.semantic: list[float] | None = None
        """Per-entry hypothesis–reference similarity (None: the target language is not covered)."""
        self.hallucination: list[bool] | None = None
        """Per-entry hallucination_detected (None: a language is not covered)."""
        self.extra: list[int] = []
        """Per-entry format attempts beyond the first (docs/SCORING_SPEC.md §3.4)."""
        self.gl_hits: list[int] = []
        self.gl_terms: list[int] = []
        """Per-entry glossary hits and terms (0, 0 for an entry without a glossary)."""
        self.morph_matched: list[int] = []
        self.morph_units: list[int] = []
        """Per-entry morphological units matched and counted (0, 0 for an entry without one or without an analyser)."""


def _slice_values(run: _Run, chrf: Any, bleu: Any, idx: list[int], *, has_equiv: bool,
                  has_fst: bool) -> dict[str, float | None]:
    """Slice metrics; ``chrf``/``bleu`` are int64 matrices of the per-segment statistics (exact integer sums)."""
    n = len(idx)
    extra = {FORMAT_EXTRA: sum(run.extra[i] for i in idx) / n} if any(run.extra) else {}
    return extra | {
        "chrf_plus_plus": chrf_from_totals(chrf[idx].sum(axis=0).tolist()),
        "bleu": bleu_from_totals(bleu[idx].sum(axis=0).tolist()),
        "exact_match_rate": sum(run.exact[i] for i in idx) / n,
        "equivalent_match_rate": (sum(run.equiv[i] for i in idx) / n) if has_equiv else None,
        "code_switching_rate": sum(run.cs[i] for i in idx) / n,
        "fst_acceptance_rate": (sum(run.fst_rate[i] for i in idx) / n) if has_fst else None,
        "semantic_score": sem_mod.mean_of([run.semantic[i] for i in idx]) if run.semantic is not None else None,
        "hallucination_rate": (sum(run.hallucination[i] for i in idx) / n) if run.hallucination is not None else None,
        "terminology_adherence": adherence([run.gl_hits[i] for i in idx], [run.gl_terms[i] for i in idx]),
        "morphological_accuracy": morph_mod.accuracy([run.morph_matched[i] for i in idx],
                                                     [run.morph_units[i] for i in idx]),
    }


def _breakdowns(keys: list[str | None], run: _Run, chrf: Any, bleu: Any, *, has_equiv: bool,
                has_fst: bool) -> dict[str, Breakdown]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        if k is not None:
            groups[k].append(i)
    out: dict[str, Breakdown] = {}
    for k in sorted(groups):
        idx = groups[k]
        v = _slice_values(run, chrf, bleu, idx, has_equiv=has_equiv, has_fst=has_fst)
        comp, _ = composite(v)
        out[k] = Breakdown(n=len(idx), chrf_plus_plus=v["chrf_plus_plus"], bleu=v["bleu"],
                           exact_match_rate=v["exact_match_rate"], composite=comp,
                           errors=sum(run.errors[i] for i in idx))
    return out


MORPH_NO_ANALYSIS = "planned: needs gold morphological analyses in the corpus"
"""Why morphological accuracy is null when no entry carries an analysis with a unit (the wording of every card made
before the metric existed, kept so their bytes stay the same; docs/SCORING_SPEC.md §2.7)."""


MORPH_NO_ANALYSER = ("not measured: no Apertium analyser + tagger scored the run (lt-proc, apertium-tagger and the "
                     "pair's .automorf.bin + .prob; not installed, or scored without them)")
"""Why morphological accuracy is null when the corpus has analyses but no analyser + tagger measured the outputs."""


def _availability(sem: SemanticValues, source_language: str, target_language: str, has_equiv: bool,
                  has_terms: bool, morph: str | None = None) -> dict[str, str]:
    """``scores.metric_availability``: why each null composite metric is null (FST acceptance decides the profile
    and is not listed), and why TER is null when the target's script has no TER
    (:func:`mtboard.core.languages.ter_unavailable`). ``morph``: why morphological accuracy is null (None: it has a
    value)."""
    out = {"morphological_accuracy": morph} if morph is not None else {}
    if (why := ter_unavailable(target_language)) is not None:
        out["ter"] = why
    if not has_terms:
        out["terminology_adherence"] = "no corpus entry carries a glossary"
    if not has_equiv:
        out["equivalent_match_rate"] = "no entry of the run has reference variants"
    model = f"{sem_mod.MODEL} ({sem_mod.PACKAGE}) covers {', '.join(sorted(sem_mod.LANGUAGES))}"
    if not sem.target_covered:
        out["semantic_score"] = f"target language {target_language!r} is not covered: {model}"
    if not sem.both_covered:
        missing = target_language if not sem.target_covered else source_language
        out["hallucination_rate"] = f"language {missing!r} is not covered: {model}"
    return dict(sorted(out.items()))


def resolve_analyser(target_language: str, fst: bool | None) -> fst_mod.Analyser | None:
    """The FST analyser score_run uses: None when ``fst`` is False; auto-detected when None; required when True.

    Raises: ConfigError when ``fst`` is True and no analyser is installed for the target language.
    """
    if fst is False:
        return None
    analyser = fst_mod.find_analyser(target_language)
    if analyser is None and fst:
        raise ConfigError(f"no lttoolbox analyser is installed for target language {target_language!r}",
                          field="fst", fix="apt-get install the Apertium pair that ships it (e.g. apertium-eng-spa "
                                           "for Spanish), or score without FST")
    return analyser


def resolve_morph_analyser(entries: Sequence[Entry], source_language: str, target_language: str,
                           morphology: bool | None) -> tuple[morph_mod.MorphAnalyser | None, str | None]:
    """The analyser + tagger for morphological accuracy (:func:`mtboard.score.morphology.find_morph_analyser`) and,
    when none is used, why (``scores.metric_availability``): None when no entry's analysis has a unit or
    ``morphology`` is False; auto-detected when None; required when True.

    Raises: ConfigError when ``morphology`` is True and no analyser + tagger is installed for the pair.
    """
    if not any(morph_mod.units(e.morphological_analysis) for e in entries):
        return None, MORPH_NO_ANALYSIS
    if morphology is False:
        return None, MORPH_NO_ANALYSER
    analyser = morph_mod.find_morph_analyser(source_language, target_language)
    if analyser is None:
        if morphology:
            raise ConfigError(f"no Apertium analyser + tagger is installed for {source_language}→{target_language} "
                              "(morphological accuracy)", field="morphological_accuracy",
                              fix="apt-get install lttoolbox apertium and the pair that made the corpus's analyses "
                                  "(e.g. apertium-eng-spa for es→en)")
        return None, MORPH_NO_ANALYSER
    return analyser, None


def fst_version(target_language: str, fst: bool | None = None) -> str | None:
    """The card's ``fst_version`` for a run scored with the same ``fst`` argument (None when no analyser is used)."""
    analyser = resolve_analyser(target_language, fst)
    return analyser.version if analyser else None


def score_run(entries: list[Entry], records: list[TranslationRecord], *, source_language: str, target_language: str,
              elapsed_seconds: float, fst: bool | None = None, strip_unknown_marks: bool = False,
              price_in_per_mtok: float | None = None, price_out_per_mtok: float | None = None,
              rates: Rates | None = None,
              semantic_claimed: dict[int, tuple[float | None, float | None]] | None = None,
              morphology: bool | None = None) -> tuple[Scores, list[EntryResult]]:
    """Score one run: apply the mechanical policy, compute every metric, fill ``Scores`` and one ``EntryResult``
    per entry (in ``entries`` order).

    Phases: check the inputs (:func:`_check_inputs`); the mechanical policy and per-segment statistics
    (:func:`mtboard.score.measure.measure_run`); the chrF++ bootstrap CI beside the FST lookup
    (:func:`_ci_and_fst`); semantic similarity (:func:`mtboard.score.measure.semantic_values`); one result per entry
    (:func:`_entry_results`); the aggregate ``Scores`` (:func:`_scores`).

    Args:
        entries: the corpus entries that were run (order kept in the results).
        records: exactly one translation record per entry, matched by ``entry_id`` (any order).
        source_language, target_language: BCP 47 tags.
        elapsed_seconds: wall-clock duration of the run (for entries_per_minute and tokens_per_second).
        fst: None = use an installed analyser for the target language if any; True = require one; False = none.
        strip_unknown_marks: True for Apertium output (its ``*word`` marks are removed from ``predicted``).
        price_in_per_mtok, price_out_per_mtok: USD per million prompt / completion tokens; both or neither.
        rates: every rate (cached input, reasoning; :class:`mtboard.inputs.prices.Rates`); replaces the two prices.
        semantic_claimed: validator only — ``{entry_id: (semantic_score, source_similarity)}`` as a card states them;
            a recomputed similarity within one unit of the 4th decimal of its claim is scored as the claim
            (:data:`mtboard.score.metrics.semantic.RECOMPUTE_TOLERANCE_UNITS`), anything else as recomputed.
        morphology: morphological accuracy against the corpus's Apertium machine analyses
            (:mod:`mtboard.score.morphology`): None = when some entry has an analysis and the pair's analyser + tagger
            is installed; True = require them (the validator, for a card with a value); False = never.

    Returns: ``(scores, results)``. Entries without usable output and echoed sources score 0 on every metric (their
    corpus statistics use an empty hypothesis; inverted rates count them at the worst value).

    Raises: MtboardError for missing, duplicate or unknown records or an empty entry list; ConfigError for a missing
    BLEU tokenizer, ``fst=True`` without an analyser, ``morphology=True`` without an analyser + tagger, or only
    one of the two prices; BackendError when ``lt-proc`` / ``apertium-tagger`` fails.
    """
    rates, recs, analyser = _check_inputs(entries, records, target_language=target_language, fst=fst,
                                          price_in_per_mtok=price_in_per_mtok,
                                          price_out_per_mtok=price_out_per_mtok, rates=rates)
    col = measure_run(entries, recs, source_language, target_language, strip_unknown_marks, analyser is not None)
    n = len(entries)
    chrf_m = np.asarray(col.chrf, dtype=np.int64).reshape(n, CHRF_STATS_LEN)
    bleu_m = np.asarray(col.bleu, dtype=np.int64).reshape(n, BLEU_STATS_LEN)
    chrf_ci95, fst_counts = _ci_and_fst(chrf_m, analyser, col.fst_words)
    morph_analyser, morph_why = resolve_morph_analyser(entries, source_language, target_language, morphology)
    morph_counts = None if morph_analyser is None else morph_mod.entry_counts(
        morph_analyser, [e.morphological_analysis for e in entries], col.predicted,
        [d.outcome == Outcome.usable for d in col.decisions])
    sem = semantic_values([e.source for e in entries], [e.reference for e in entries], col.predicted, col.decisions,
                    source_language, target_language,
                    None if semantic_claimed is None else [semantic_claimed.get(e.id, (None, None)) for e in entries])
    facts = _Facts(entries=entries, recs=recs, col=col, sem=sem, chrf_m=chrf_m, bleu_m=bleu_m,
                   has_equiv=any(e.variants for e in entries), has_fst=analyser is not None,
                   morph_counts=morph_counts, morph_why=morph_why,
                   morph_signature=morph_mod.signature(morph_analyser) if morph_analyser else None)
    run, results = _entry_results(facts, fst_counts, rates)
    scores = _scores(facts, run, results, chrf_ci95, source_language=source_language,
                     target_language=target_language, elapsed_seconds=elapsed_seconds)
    return scores, results


def _check_inputs(entries: list[Entry], records: list[TranslationRecord], *, target_language: str, fst: bool | None,
                  price_in_per_mtok: float | None, price_out_per_mtok: float | None, rates: Rates | None
                  ) -> tuple[Rates, list[TranslationRecord], fst_mod.Analyser | None]:
    """:func:`score_run`'s inputs checked, in this order: entries, prices, records, the FST analyser, the BLEU
    tokenizer. Returns ``(rates, one record per entry in entries order, analyser or None)``.

    Raises: as :func:`score_run` (MtboardError, ConfigError)."""
    if not entries:
        raise MtboardError("no entries to score", where="score_run", fix="run at least one entry")
    if (price_in_per_mtok is None) != (price_out_per_mtok is None):
        raise ConfigError("only one of the two token prices is set", field="price_in_per_mtok/price_out_per_mtok",
                          fix="give both prices (0 for free local models) or neither")
    if rates is None:
        rates = Rates.from_method(price_in_per_mtok, price_out_per_mtok)
    recs = _match_records(entries, records)
    analyser = resolve_analyser(target_language, fst)
    make_bleu(target_language)  # a missing tokenizer fails here, not in a worker
    return rates, recs, analyser


def _ci_and_fst(chrf_m: Any, analyser: fst_mod.Analyser | None, fst_words: list[list[str]]
                ) -> tuple[Any, list[tuple[int, int]] | None]:
    """The chrF++ bootstrap CI (:func:`mtboard.score.metrics.bootstrap.chrf_ci`) and, with an analyser, the per-entry
    ``(accepted, checked)`` FST word counts (:func:`mtboard.score.fst.acceptance_from_words`; None without)."""
    if analyser is None:
        return chrf_ci(chrf_m), None
    # lt-proc runs in its own process: wait for it in a thread while this one computes the bootstrap CI
    with ThreadPoolExecutor(max_workers=1) as lookup:
        fst_future = lookup.submit(fst_mod.acceptance_from_words, analyser, fst_words)
        chrf_ci95 = chrf_ci(chrf_m)
        fst_counts = fst_future.result()
    return chrf_ci95, fst_counts


@dataclass(frozen=True)
class _Facts:
    """What :func:`score_run` knows once every entry is measured (internal): the entries and their records in the
    same order, the measured columns, the semantic values, the int64 chrF++/BLEU statistics matrices (one row per
    entry) and whether any entry has reference variants / an FST analyser was used."""

    entries: list[Entry]
    recs: list[TranslationRecord]
    col: Measured
    sem: SemanticValues
    chrf_m: Any
    bleu_m: Any
    has_equiv: bool
    has_fst: bool
    morph_counts: list[tuple[int, int] | None] | None = None
    """Per entry ``(matched, units)`` of morphological accuracy (None: not covered); None without an analyser."""
    morph_why: str | None = None
    """Why morphological accuracy is null (None when an analyser measured it)."""
    morph_signature: str | None = None


def _fst_entry(fst_counts: list[tuple[int, int]] | None, i: int, ok: bool
               ) -> tuple[int | None, int | None, float, bool | None]:
    """Entry ``i``'s ``(accepted words, checked words, acceptance rate, fst_valid)``: rate 1.0 when nothing was
    checkable, 0.0 without usable output; ``(None, None, 0.0, None)`` without an analyser."""
    if fst_counts is None:
        return None, None, 0.0, None
    acc, chk = fst_counts[i]
    return acc, chk, (acc / chk if chk else 1.0) if ok else 0.0, ok and acc == chk


def _entry_results(f: _Facts, fst_counts: list[tuple[int, int]] | None, rates: Rates | None
                   ) -> tuple[_Run, list[EntryResult]]:
    """One ``EntryResult`` per entry (``entries`` order) and the per-entry columns the aggregates use."""
    col, sem, has_fst = f.col, f.sem, f.has_fst
    run = _Run()
    if sem.target_covered:
        run.semantic = [x for x in sem.score if x is not None]
    if sem.both_covered:
        run.hallucination = [bool(x) for x in sem.hallucination]
    results: list[EntryResult] = []
    for i, (e, r, d) in enumerate(zip(f.entries, f.recs, col.decisions)):
        ok = d.outcome == Outcome.usable
        exact, equiv, cs = col.exact[i], col.equiv[i], col.cs[i]
        acc, chk, fst_rate, fst_valid = _fst_entry(fst_counts, i, ok)
        run.usable.append(ok)
        run.exact.append(exact)
        run.equiv.append(equiv)
        run.cs.append(cs)
        run.fst_rate.append(fst_rate)
        run.errors.append(d.outcome == Outcome.no_usable_output)
        gl_hits, gl_terms = glossary_counts(col.predicted[i], e.glossary, ok) if e.glossary else (None, None)
        run.extra.append(r.format_attempts - 1)
        run.gl_hits.append(gl_hits or 0)
        run.gl_terms.append(gl_terms or 0)
        mc = f.morph_counts[i] if f.morph_counts is not None else None
        run.morph_matched.append(mc[0] if mc else 0)
        run.morph_units.append(mc[1] if mc else 0)
        results.append(EntryResult(
            entry_id=e.id, source=e.source, expected=e.reference, raw_predicted=r.raw_predicted,
            predicted=col.predicted[i], segment=e.segment, difficulty=e.difficulty, domain=e.domain,
            provenance=e.provenance, exact_match=exact,
            chrf_score=col.chrf_score[i], bleu_score=col.bleu_score[i], ter_score=col.ter_score[i],
            latency_s=r.latency_s, batch_latency_s=r.batch_latency_s, cost_usd=_entry_cost(r.usage, rates),
            error=r.error, error_kind=r.error_kind, attempts=r.attempts, tool_call_count=r.tool_call_count,
            format_attempts=r.format_attempts, failed_attempts=list(r.failed_attempts),
            fst_valid=fst_valid, fst_accepted_words=acc if ok else (0 if has_fst else None),
            fst_checked_words=chk if ok else (0 if has_fst else None),
            equivalent_match=equiv if f.has_equiv else None,
            semantic_score=sem.score[i], source_similarity=sem.source[i], semantic_verdict=sem.verdict[i],
            hallucination_detected=sem.hallucination[i], glossary_terms=gl_terms, glossary_hits=gl_hits,
            morph_units=mc[1] if mc else None, morph_matched=mc[0] if mc else None,
            history_lines=len(e.history) or None,
            code_switching_detected=cs, checks=d, plugin_metrics={}, judgements={},
            stats=SegmentStats(chrf=col.chrf[i], bleu=col.bleu[i], ter=col.ter[i]), usage=r.usage))
    return run, results


def _mechanical(decisions: list[MechanicalDecision]) -> dict[str, int]:
    """``scores.mechanical``: entries per outcome (every outcome, 0 included), per ``rule:NAME`` and per
    ``flag:NAME`` (:mod:`mtboard.score.checks`), keys sorted."""
    mech: Counter[str] = Counter({o.value: 0 for o in Outcome})
    for d in decisions:
        mech[d.outcome.value] += 1
        if d.rule:
            mech[f"rule:{d.rule}"] += 1
        for f in d.flags:
            mech[f"flag:{f.rule}"] += 1
    return dict(sorted(mech.items()))


def _speed(recs: list[TranslationRecord], n: int, elapsed_seconds: float) -> dict[str, float | None]:
    """The speed and latency fields of ``Scores`` (spec §3.6): tokens per second and entries per minute over the
    run's wall clock (None when it is 0), mean / median / nearest-rank p95 of the records' latencies, seconds (None
    when no record has one)."""
    lat = [r.latency_s for r in recs if r.latency_s is not None]
    tokens = sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in recs)
    return {
        "tokens_per_second": (tokens / elapsed_seconds) if tokens and elapsed_seconds > 0 else None,
        "entries_per_minute": (60.0 * n / elapsed_seconds) if elapsed_seconds > 0 else None,
        "avg_latency_seconds": (sum(lat) / len(lat)) if lat else None,
        "median_latency_seconds": statistics.median(lat) if lat else None,
        "p95_latency_seconds": _percentile_nearest_rank(lat, 95) if lat else None,
    }


def _by_slices(f: _Facts, run: _Run) -> dict[str, dict[str, Breakdown]]:
    """``by_difficulty``, ``by_provenance`` and ``by_domain`` (:func:`_breakdowns`)."""
    keys = {
        "by_difficulty": [str(e.difficulty) if e.difficulty is not None else None for e in f.entries],
        "by_provenance": [e.provenance for e in f.entries],
        "by_domain": [e.domain.value if e.domain is not None else None for e in f.entries],
    }
    return {name: _breakdowns(k, run, f.chrf_m, f.bleu_m, has_equiv=f.has_equiv, has_fst=f.has_fst)
            for name, k in keys.items()}


def _scores(f: _Facts, run: _Run, results: list[EntryResult], chrf_ci95: Any, *, source_language: str,
            target_language: str, elapsed_seconds: float) -> Scores:
    """The run's aggregate ``Scores`` (docs/SCORING_SPEC.md): corpus metrics over all entries, the composite and its
    profile, cost-adjusted score, mechanical counts, signatures, breakdowns and speed."""
    n = len(f.entries)
    values = _slice_values(run, f.chrf_m, f.bleu_m, list(range(n)), has_equiv=f.has_equiv, has_fst=f.has_fst)
    comp, profile = composite(values)
    costs = [x.cost_usd for x in results]
    cost_per_entry = (sum(costs) / n) if all(c is not None for c in costs) else None  # type: ignore[arg-type]
    ter = f.col.ter
    return Scores(
        total=n,
        exact_matches=sum(run.exact),
        exact_match_rate=values["exact_match_rate"],
        equivalent_matches=sum(run.equiv) if f.has_equiv else None,
        equivalent_match_rate=values["equivalent_match_rate"],
        fst_accepted=sum(1 for x in results if x.fst_valid) if f.has_fst else None,
        fst_acceptance_rate=values["fst_acceptance_rate"],
        morphological_accuracy=values["morphological_accuracy"],
        chrf_plus_plus=values["chrf_plus_plus"],
        chrf_ci95=chrf_ci95,
        bleu=values["bleu"],
        semantic_score=values["semantic_score"],
        ter=ter_from_stats(ter),
        ter_coverage=None if ter_unavailable(target_language) else sum(t is not None for t in ter) / n,
        length_ratio=sum(f.col.length_ratio) / n,
        code_switching_rate=values["code_switching_rate"],
        hallucination_rate=values["hallucination_rate"],
        terminology_adherence=values["terminology_adherence"],
        metric_availability=_availability(f.sem, source_language, target_language, f.has_equiv,
                                          values["terminology_adherence"] is not None,
                                          None if values["morphological_accuracy"] is not None else f.morph_why),
        composite=comp,
        composite_profile=profile,
        quality_tier=quality_tier(comp),
        cost_adjusted_score=cost_adjusted_score(comp, cost_per_entry),
        errors=sum(run.errors),
        transport_errors=sum(1 for r in f.recs if r.error_kind == "transport"),
        mechanical=_mechanical(f.col.decisions),
        policy_version=checks.POLICY_VERSION,
        signatures=Signatures(chrf=chrf_signature(), bleu=bleu_signature(target_language),
                              ter=ter_signature(target_language),
                              semantic=sem_mod.semantic_signature() if f.sem.target_covered else None,
                              morphology=f.morph_signature if values["morphological_accuracy"] is not None else None,
                              composite=composite_signature(profile, checks.POLICY_VERSION,
                                                            format_penalty=any(run.extra))),
        **_by_slices(f, run),
        **_speed(f.recs, n, elapsed_seconds),
    )


def totals(entries: Sequence[Entry], results: Sequence[EntryResult]) -> Totals:
    """Token and cost totals of a scored run (spec §3.5): sums of the results' usage and ``cost_usd``.

    Cost fields are None unless every result has a cost. ``cost_per_source_char`` divides by the source characters
    of the entries. ``retries`` = attempts beyond the first, summed.
    """
    costs = [r.cost_usd for r in results]
    known = all(c is not None for c in costs) and bool(costs)
    total_cost = sum(costs) if known else None  # type: ignore[arg-type]
    chars = sum(len(e.source) for e in entries)
    return Totals(
        prompt_tokens=sum(r.usage.prompt_tokens for r in results),
        completion_tokens=sum(r.usage.completion_tokens for r in results),
        reasoning_tokens=sum(r.usage.reasoning_tokens for r in results),
        cached_tokens=sum(r.usage.cached_tokens for r in results),
        total_cost_usd=total_cost,
        cost_per_entry_usd=(total_cost / len(results)) if total_cost is not None else None,
        cost_per_source_char=(total_cost / chars) if total_cost is not None and chars else None,
        retries=sum(max(0, r.attempts - 1) for r in results),
    )


def replicates(scores: Sequence[Scores]) -> Replicates:
    """Every replicate's chrF++ and composite (run 0 first) with their mean and sample standard deviation
    (``--runs N``, N ≥ 2; BookTrans reports mean and spread, the mean on purpose, not the median)."""
    chrfs = [sc.chrf_plus_plus for sc in scores]
    comps = [sc.composite for sc in scores]
    return Replicates(n=len(scores), chrf_plus_plus=chrfs, composite=comps, chrf_mean=statistics.fmean(chrfs),
                      chrf_stdev=statistics.stdev(chrfs), composite_mean=statistics.fmean(comps),
                      composite_stdev=statistics.stdev(comps))
