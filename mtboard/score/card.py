"""Run-card assembly (spec §3): a :class:`~mtboard.inputs.runspec.RunSpec`, the backend's facts and the scored results
become one sealed :class:`~mtboard.core.schema.RunCard`.

The fingerprint comes from :func:`mtboard.inputs.runspec.fingerprint_components`; :func:`compute_fingerprint` re-derives it
from a card's own fields (:meth:`RunSpec.from_card`, :func:`~mtboard.inputs.runspec.facts_from_card`), which is what the
validator checks — the runner and the validator use the same function.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated

from pydantic import TypeAdapter, ValidationError

from mtboard import HARNESS_VERSION
from mtboard.core import canonical
from mtboard.core.names import name_problem
from mtboard.score import scoring
from mtboard.core.documents import card_bytes, seal
from mtboard.inputs.prices import Rates, compute_totals
from mtboard.inputs.runspec import RunSpec, facts_from_card, fingerprint_components
from mtboard.core.schema import (BackendFacts, DatasetRef, Entry, EntryResult, Fingerprint, JudgeSummary, MethodConfig,
                            ReplicateResult, ReplicateRun, RunCard, Scores, Totals, TranslationRecord)


def card_fingerprint_components(card: RunCard) -> dict[str, object]:
    """The 19 fingerprint v3 components of a card, derived only from its own fields and this harness's text
    normalisation version (spec §3.8, extended).

    Returns: dict with exactly the keys of :data:`mtboard.core.canonical.FINGERPRINT_COMPONENTS`.
    """
    return fingerprint_components(RunSpec.from_card(card), facts_from_card(card),
                                  entry_ids=[r.entry_id for r in card.results], judges=card.judges,
                                  harness_version=card.harness_version, tools_enabled=card.tools_enabled)


def compute_fingerprint(card: RunCard) -> Fingerprint:
    """Fingerprint v3 object for a card (hash over the components re-derived from its fields)."""
    comps = card_fingerprint_components(card)
    return Fingerprint(version=canonical.FINGERPRINT_VERSION, hash=canonical.fingerprint_hash(comps),
                       components=comps)


def card_records(card: RunCard) -> list[list[TranslationRecord]]:
    """The translation records a card was scored from, one list per replicate run (run 0 first): each result's raw
    output, error, attempts, latencies, usage and tool calls. What the validator recomputes from and ``mtboard rescore`` re-scores
    (the inverse of :func:`mtboard.score.scoring.score_run` on the stored fields)."""
    def rec(run_index: int, r: EntryResult | ReplicateResult) -> TranslationRecord:
        return TranslationRecord(run_index=run_index, entry_id=r.entry_id, raw_predicted=r.raw_predicted,
                                 error=r.error, error_kind=r.error_kind, attempts=r.attempts, latency_s=r.latency_s,
                                 batch_latency_s=r.batch_latency_s, usage=r.usage,
                                 tool_call_count=r.tool_call_count, format_attempts=r.format_attempts,
                                 failed_attempts=list(r.failed_attempts))

    return [[rec(0, r) for r in card.results]] + [[rec(rr.run_index, r) for r in rr.results]
                                                  for rr in card.replicate_runs]


def replicate_run(run_index: int, results: list[EntryResult]) -> ReplicateRun:
    """A replicate run's block for the card: each entry result without the corpus texts (``results`` has them)."""
    fields = set(ReplicateResult.model_fields)
    return ReplicateRun(run_index=run_index, results=[
        ReplicateResult.model_validate(r.model_dump(include=fields)) for r in results])


def assemble_card(spec: RunSpec, facts: BackendFacts, *, scores: Scores, results: list[EntryResult],
                  totals: Totals, run_id: str, timestamp: str, elapsed_seconds: float, price_in: float | None,
                  price_out: float | None, fst_version: str | None = None,
                  judges: Mapping[str, JudgeSummary] | None = None, notes: str | None = None,
                  harness_version: str | None = None, rates: Rates | None = None,
                  replicate_runs: list[ReplicateRun] | None = None) -> RunCard:
    """Assemble, fingerprint (v2) and seal a run card.

    Args:
        spec: the run's :class:`RunSpec` (method as published, prompt, settings, dataset identity).
        facts: the backend's :meth:`describe` (provider, engine, weights hash, local-model gate; ``model_id`` and
            ``model_slug`` go to the card's top level).
        scores / results: from :func:`mtboard.score.scoring.score_run` (run 0, with replicates when ``runs > 1``);
            ``totals`` over all replicates (:func:`mtboard.inputs.prices.compute_totals`).
        run_id / timestamp: the work directory's manifest; ``elapsed_seconds``: translation wall-clock, seconds.
        price_in / price_out: USD per 1M tokens used for cost (None when unknown).
        rates: every rate used for cost (cached input, reasoning, date, price-table hash), when known; its input and
            output rates must equal ``price_in`` / ``price_out``.
        replicate_runs: runs 1 … N−1 of ``--runs N`` (:func:`replicate_run`).
        fst_version: the analyser that scored FST acceptance, None when none ran (the validator checks it names the
            analyser installed where the card is validated).
        judges: judge summaries by kind (empty before judging).
        harness_version: defaults to :data:`mtboard.HARNESS_VERSION`.
    Returns: a sealed :class:`RunCard` (``run_card_hash`` set). Raises pydantic ValidationError on a contract bug.
    """
    d = spec.dataset
    dataset = DatasetRef(id=d.id, version=d.version, language_pair=d.language_pair, source_language=d.source_language,
                         target_language=d.target_language, sha256=d.sha256, entry_count=len(results),
                         segment=d.segment)
    model_slug = spec.model_slug(facts)
    method_config = MethodConfig(model=model_slug, temperature=spec.temperature, batchSize=spec.batch_size,
                                 promptContext=spec.prompt_name, qualityTier=scores.quality_tier.value,
                                 coachingFile=spec.coaching_file, coachingPrompt=spec.coaching_text)
    placeholder = Fingerprint(version=canonical.FINGERPRINT_VERSION, hash="0" * 64, components={})
    card = RunCard(
        run_id=run_id, harness_version=harness_version or HARNESS_VERSION, timestamp=timestamp,
        elapsed_seconds=max(0.0, float(elapsed_seconds)), model_slug=model_slug, model_id=facts.model_id,
        condition=spec.condition, temperature=spec.temperature, system_prompt_sha256=spec.system_prompt_sha256,
        system_prompt_used=spec.system_prompt, fst_version=fst_version, coaching_data_sha256=spec.coaching_sha256,
        tools_enabled=list(spec.tools), batch_size=spec.batch_size,
        max_retries=spec.max_retries, method_class=spec.method_class, method_config=method_config,
        method=spec.method_record(
            facts, price_in=price_in, price_out=price_out,
            price_cached_in=rates.cached_input if rates else None, price_reasoning=rates.reasoning if rates else None,
            price_as_of=rates.as_of if rates else None, price_table_sha256=rates.table_sha256 if rates else None),
        dataset=dataset, scores=scores, totals=totals, results=list(results), judges=dict(judges or {}),
        replicate_runs=list(replicate_runs or []), notes=notes, fingerprint=placeholder, run_card_hash="")
    card = card.model_copy(update={"fingerprint": compute_fingerprint(card)})
    return seal(card)


def _slug_rule() -> TypeAdapter[str]:
    return TypeAdapter(Annotated[str, RunCard.model_fields["model_slug"]])


def _reported_name_problem(text: str, rule: TypeAdapter[str] | None) -> str | None:
    """Why a name a server reported cannot be a card's name: the schema's rule (``rule``: the field's length) or the
    names rule (:func:`mtboard.core.names.name_problem`); None when it can."""
    if rule is not None:
        try:
            rule.validate_python(text)
        except ValidationError as exc:
            return f"{len(text)} characters: {exc.errors()[0]['msg'].lower()}"
    problem = name_problem(text)
    return None if problem is None else str(problem)


def fit_reported_names(facts: BackendFacts, typed_slug: str) -> BackendFacts:
    """The backend's facts with every model name the *server* reported that the card cannot hold replaced (issue 33
    item 4): what the server echoes back (the weights' name as ``model_slug``, the served id as ``model_id``) is
    only known after requests were paid for, so it cannot be checked before the first one; refusing the card then
    would lose a finished run. A reported ``model_slug`` that breaks the card's rule (more than 200 characters) or
    the names rule (:func:`mtboard.core.names.name_problem`) gives way to ``typed_slug``, the name as typed (the
    backend's ``model_slug_for(model, effort)``: checked on the planned card before the first request, and a
    ``model_slug`` the validator accepts); a ``model_id`` the names rule refuses is left out (None). Nothing is truncated (a cut name
    names another model). The server's own words stay in ``raw.jsonl``; ``identity_note`` says what was replaced
    (the run's summary and report.md show it; the card does not hold it). Facts that fit are returned unchanged."""
    typed = typed_slug
    notes: list[str] = []
    update: dict[str, object] = {}
    if facts.model_slug is not None and facts.model_slug != typed:
        why = _reported_name_problem(facts.model_slug, _slug_rule())
        if why is not None:
            update["model_slug"] = typed
            notes.append(f"the server reported a model name the card cannot hold ({why}); the card names the model "
                         f"as typed ({typed[:80]})")
    if facts.model_id is not None:
        why = _reported_name_problem(facts.model_id, None)
        if why is not None:
            update["model_id"] = None
            notes.append(f"the server reported a model id the card cannot hold ({why}); the card's model_id is left "
                         "empty")
    if not update:
        return facts
    note = "; ".join(([facts.identity_note] if facts.identity_note else []) + notes) + " (the server's words are in " \
                                                                                      "raw.jsonl)"
    return facts.model_copy(update={**update, "identity_note": note})


PLANNED_RUN_ID = "00000000-0000-4000-8000-000000000000"
"""The run id of a planned card (:func:`planned_card`): a UUID v4 by the schema's pattern that no run draws."""


def planned_card(spec: RunSpec, facts: BackendFacts, entries: list[Entry], *, rates: Rates | None,
                 strip_unknown_marks: bool, timestamp: str, notes: str | None = None) -> RunCard:
    """The card a run will write, assembled before anything is sent (issue 33 item 4): every field the command
    line, the corpus, the prompt and the backend's static facts decide is the real one (method, model slug as typed,
    condition, temperature, caps, runs, prices, coaching, tools, plugin, dataset), built by the same functions and
    pydantic models as the finished card; what only answers decide is a placeholder in range — the first entry
    translated as its own reference (one tool call with ``--tools``), 1 s elapsed, run id :data:`PLANNED_RUN_ID`.
    Scored as the run will be (:data:`FST_MODE`: the installed analyser, which ``--tools fst-gate`` needs).

    Args: ``facts``: what the backend is known to report before it is asked (:class:`BackendFacts` with the
    endpoint's host hash); ``entries``: the run's entries (only the first is scored); ``timestamp``: ISO 8601 UTC.
    Returns: a sealed :class:`RunCard` of one entry (``runs`` replicates of it).
    Raises: pydantic ValidationError (title: the model that refused, e.g. ``RunCard``, ``MethodRecord``) for a
    value the card's schema refuses; MtboardError from scoring (a missing tokenizer extra)."""
    first = entries[0]
    calls = 1 if spec.tools else 0  # a tool's pipeline checks every usable answer at least once
    runs = [[TranslationRecord(run_index=i, entry_id=first.id, raw_predicted=first.reference, latency_s=0.0,
                               tool_call_count=calls)] for i in range(spec.runs)]
    return score_and_assemble(spec, facts, [first], runs, rates=rates, strip_unknown_marks=strip_unknown_marks,
                              elapsed_seconds=1.0, run_id=PLANNED_RUN_ID, timestamp=timestamp, notes=notes)


def _json_len(text: str | None) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def planned_card_bytes(card: RunCard, entries: list[Entry]) -> int:
    """A lower bound of the written card's size in bytes (canonical JSON, :func:`mtboard.core.documents.card_bytes`)
    for a :func:`planned_card` of ``entries``' first entry: the planned card, plus for every other entry its result
    with the entry's source and reference and an empty translation (``runs`` − 1 replicate results without texts
    each). Real translations only add to it. Used to refuse, before anything is sent, a run whose card could not be
    stored (:data:`mtboard.core.safejson.MAX_CARD_BYTES`)."""
    size = len(card_bytes(card))
    if len(entries) < 2:
        return size
    base = card.results[0].model_copy(update={"source": "", "expected": "", "raw_predicted": "", "predicted": "",
                                              "provenance": None})
    per_result = len(canonical.canonical_bytes(base.model_dump(mode="json"))) + 1  # + the comma
    per_replicate = 0
    if card.replicate_runs:
        rep = card.replicate_runs[0].results[0].model_copy(update={"raw_predicted": "", "predicted": ""})
        per_replicate = (len(canonical.canonical_bytes(rep.model_dump(mode="json"))) + 1) * len(card.replicate_runs)
    texts = sum(_json_len(e.source) + _json_len(e.reference) - 4 for e in entries[1:])
    return size + texts + (per_result + per_replicate) * (len(entries) - 1)


__all__ = ["assemble_card", "card_fingerprint_components", "card_records", "compute_fingerprint", "replicate_run",
           "fit_reported_names", "planned_card", "planned_card_bytes", "PLANNED_RUN_ID"]


FST_MODE: bool | None = None
"""``fst`` argument of :func:`mtboard.score.scoring.score_run` for runs and rescoring: None = FST acceptance whenever an analyser for the
target language is installed (the card then records ``fst_version``; :mod:`mtboard.validate` recomputes with FST on
exactly when the card has an FST acceptance rate)."""


def score_and_assemble(spec: RunSpec, facts: BackendFacts, entries: list[Entry],
                       runs: list[list[TranslationRecord]], *, rates: Rates | None, strip_unknown_marks: bool,
                       elapsed_seconds: float, run_id: str, timestamp: str, notes: str | None = None,
                       fst: bool | None = None, judges: dict[str, JudgeSummary] | None = None) -> RunCard:
    """Score every replicate's records and assemble the sealed card: what :func:`mtboard.run.runner.build_card` does for a fresh run
    and ``mtboard rescore`` for a card's stored outputs (``runs[i]``: replicate i's records, one per entry).

    ``fst``: None = :data:`FST_MODE`. ``elapsed_seconds``: translation wall-clock; each replicate is
    scored with ``elapsed / runs`` (what the validator recomputes with).
    """
    fst = FST_MODE if fst is None else fst
    ds = spec.dataset
    n = len(runs)
    price_in, price_out = (rates.input, rates.output) if rates is not None else (None, None)
    scored = [scoring.score_run(entries, records, source_language=ds.source_language,
                                target_language=ds.target_language, elapsed_seconds=elapsed_seconds / n,
                                fst=fst, strip_unknown_marks=strip_unknown_marks, rates=rates)
              for records in runs]
    scores, results = scored[0]
    if n > 1:
        scores = scores.model_copy(update={"replicates": scoring.replicates([sc for sc, _ in scored])})
    totals = compute_totals([r for records in runs for r in records], entries, n, price_in, price_out, rates=rates)
    return assemble_card(spec, facts, scores=scores, results=results, totals=totals, run_id=run_id,
                         timestamp=timestamp, elapsed_seconds=elapsed_seconds, price_in=price_in,
                         price_out=price_out, rates=rates, fst_version=scoring.fst_version(ds.target_language, fst),
                         notes=notes, judges=judges,
                         replicate_runs=[replicate_run(i, res) for i, (_, res) in enumerate(scored) if i > 0])


replicates = scoring.replicates
"""Every replicate's chrF++ and composite with mean and spread (:func:`mtboard.score.scoring.replicates`)."""
