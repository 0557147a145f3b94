"""Running judges over a finished run: cache, retries, fail-closed verdicts, summaries, and the re-sealed card.

Entry points: :func:`run_judges` (sync) and :func:`run_judges_async` (for callers already inside an event loop).
The runner calls them for ``--judge``; ``mtboard judge WORKDIR`` calls them on the stored card. Nothing here
translates: only the card's stored ``predicted`` texts are judged.

Rules (issue 5):

* Entries whose mechanical outcome is not ``usable`` (no usable output, echoed source) are not sent and get the
  judge's worst value (MQM 25 = one critical error, rubric 0, checkpoints 0): the translator failed.
* An answer that does not parse is asked again, with the template's ``retry`` hint and the previous answer in the
  conversation, at temperature 0, up to ``max_attempts`` answers in all; then the entry is ``judge_failed`` with the
  last raw answer and **no score**: the judge failed, not the translator. A judge whose service fails (transport) or
  rejects the request gives ``judge_failed`` without an answer; such calls are not cached, so a re-run asks again.
* A scored verdict keeps the answer it was parsed from (``raw_answer``, issue 32): the validator parses it again
  with the parser version the summary records (:mod:`mtboard.judges.parsers`) and re-derives the verdict.
* ``parse_failure_rate`` = answers that did not parse ÷ answers received (every attempt counts), per judge.
* The leaderboard value ``mean`` is taken over the **judged** cells (scored, and not_sent at the worst value);
  ``judge_failed`` cells are excluded and reported as coverage (judged n of N: the GEMBA note compares systems on
  common cells only, which the leaderboard does); ``breakdown['mean']['scored_only']`` is the mean over scored
  entries alone.
* Admission (BookTrans; issue 39): before a per-entry judge judges the card it answers a fixed set of known-answer
  items (:mod:`mtboard.judges.admission`); the result is its summary's ``admission``. A judge that is not admitted
  still judges the card (its verdicts are kept), but the board does not count it.
* The checkpoint judge follows BookTrans: each of the card's translation replicates (``--runs N``) is judged once,
  and the summary reports the mean and spread of those run scores (not one translation judged N times).
* Judge endpoint: ``JUDGE_BASE_URL`` + ``JUDGE_API_KEY``; when ``JUDGE_BASE_URL`` is unset, ``OPENAI_BASE_URL`` +
  ``OPENAI_API_KEY``. The OpenAI key is never sent to a ``JUDGE_BASE_URL`` host.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from mtboard.score import card as cardlib
from mtboard.inputs.runspec import endpoint_host_sha256
from mtboard.core import documents
from mtboard.core.canonical import canonical_bytes, sha256_hex
from mtboard.core.errors import ConfigError
from mtboard.judges import checkpoints as cp
from mtboard.judges.admission import ADMITTING_KINDS, admission_record, load_pinned_admission_set
from mtboard.judges.base import (REGISTRY, EntryJudge, FamilyCheck, JudgeItem, JudgeParseError, JudgePrompt,
                                 JudgeSpec, check_family, load_judge_prompt, parse_judge_spec)
from mtboard.judges.calls import JUDGE_TEMPERATURE, Caller, Progress, gather_or_cancel, not_sent, retry_messages
from mtboard.judges.checkpoint_run import run_checkpoints
from mtboard.judges.store import JudgeStore
from mtboard.core.languages import language_name
from mtboard.core.schema import Corpus, EntryResult, JudgeSummary, JudgeVerdict, Outcome, RunCard, Usage

DEFAULT_MAX_ATTEMPTS = 3
"""Answers asked per entry (1 + 2 retries) before ``judge_failed``."""

def judge_endpoint(base_url: str | None = None) -> tuple[str, str | None, str]:
    """``(base_url, api_key, where it came from)`` for the judge: ``JUDGE_BASE_URL`` + ``JUDGE_API_KEY``; else the
    run's own ``--base-url`` (``base_url``) + ``OPENAI_API_KEY``; else ``OPENAI_BASE_URL`` + ``OPENAI_API_KEY``.
    Keys never cross hosts: the OpenAI key is never sent to a ``JUDGE_BASE_URL`` host.

    Raises: ConfigError when none of the three is set.
    """
    url = os.environ.get("JUDGE_BASE_URL")
    if url:
        return url, os.environ.get("JUDGE_API_KEY") or None, "JUDGE_BASE_URL"
    if base_url:
        return base_url, os.environ.get("OPENAI_API_KEY") or None, "--base-url (JUDGE_BASE_URL is not set)"
    url = os.environ.get("OPENAI_BASE_URL")
    if url:
        return url, os.environ.get("OPENAI_API_KEY") or None, "OPENAI_BASE_URL (JUDGE_BASE_URL is not set)"
    raise ConfigError("no judge endpoint: neither JUDGE_BASE_URL nor OPENAI_BASE_URL is set", field="--judge",
                      fix="export JUDGE_BASE_URL=https://…/v1 and JUDGE_API_KEY=… (or the OPENAI_ pair, or pass "
                          "--base-url to `mtboard run`)")


def judge_endpoint_from_env() -> tuple[str, str | None]:
    """``(base_url, api_key)`` for the judge from the environment alone (:func:`judge_endpoint` without a
    ``--base-url``). Raises: ConfigError when neither base URL is set."""
    url, key, _ = judge_endpoint()
    return url, key


def default_client_factory(concurrency: int = 8, base_url: str | None = None) -> Any:
    """An :class:`mtboard.llm.LLMClient` on the judge endpoint (:func:`judge_endpoint`)."""
    from mtboard.llm import LLMClient  # httpx and the client stack: only when a judge actually calls an endpoint

    url, key, _ = judge_endpoint(base_url)
    return LLMClient(url, key, concurrency=concurrency)


async def _judge_entry(judge: EntryJudge, prompt: JudgePrompt, caller: Caller, item: JudgeItem,
                       max_attempts: int, log_kind: str | None = None) -> JudgeVerdict:
    """One entry judged (module docstring's rules); its answers logged under ``log_kind`` (default the judge's
    kind; the admission items under ``KIND.admission``)."""
    messages = prompt.render(**judge.variables(item))
    kind = log_kind or judge.kind
    last_text: str | None = None
    reason = "no answer"
    for attempt in range(1, max_attempts + 1):
        ans = await caller.ask(messages, replicate=0)
        base_log = {"entry_id": item.entry_id, "run": 0, "attempt": attempt, "key": ans.key, "cached": ans.cached,
                    "text": ans.text, "finish_reason": ans.finish_reason, "error_kind": ans.error_kind}
        if not caller.answered(ans):
            caller.store.log(kind, {**base_log, "parse": "no-answer", "error": ans.error})
            return JudgeVerdict(status="judge_failed", score=None, attempts=attempt,
                                raw_answer=last_text,
                                justification=f"judge call failed ({ans.error_kind}): {(ans.error or '')[:200]}")
        try:
            verdict = judge.parse(ans.text)
        except JudgeParseError as exc:
            caller.tally.unparsed += 1
            reason = exc.reason
            last_text = ans.text
            caller.store.log(kind, {**base_log, "parse": "failed", "parse_error": reason})
            messages = retry_messages(prompt, messages, ans.text, reason)
            continue
        caller.store.log(kind, {**base_log, "parse": "ok", "score": verdict.score})
        # the answer that decided the verdict is kept, so the validator can parse it again (issue 32)
        return verdict.model_copy(update={"attempts": attempt, "raw_answer": ans.text})
    return JudgeVerdict(status="judge_failed", score=None, attempts=max_attempts,
                        raw_answer=last_text if last_text is not None else "",
                        justification=f"answer did not parse after {max_attempts} attempts: {reason}")


def _items(card: RunCard, corpus: Corpus) -> dict[int, JudgeItem]:
    by_id = {e.id: e for e in corpus.entries}
    items: dict[int, JudgeItem] = {}

    for r in card.results:
        entry = by_id.get(r.entry_id)
        items[r.entry_id] = JudgeItem(entry_id=r.entry_id, source=r.source, translation=r.predicted,
                                      source_lang=language_name(card.dataset.source_language),
                                      target_lang=language_name(card.dataset.target_language),
                                      history=list(entry.history) if entry is not None else [],
                                      reference=r.expected)
    return items


# --------------------------------------------------------------------------------------------------------------------
# Summaries


def _mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def _cost(usage: Usage, price_in: float | None, price_out: float | None) -> float | None:
    if price_in is None or price_out is None:
        return None
    return (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1_000_000


def _summary(spec: JudgeSpec, judge_cls: Any, prompt_sha256: str, fam: FamilyCheck, caller: Caller,
             verdicts: list[JudgeVerdict], *, mean: float | None, spread: float | None,
             breakdown: dict[str, dict[str, float]], max_attempts: int, runs: int, endpoint: dict[str, Any],
             prices: tuple[float | None, float | None], extra: dict[str, Any] | None = None) -> JudgeSummary:
    t = caller.tally
    return JudgeSummary.model_validate({
        "kind": spec.kind, "backend": spec.backend, "model": spec.model, "effort": spec.effort,
        "prompt_sha256": prompt_sha256, "family_check": fam.status,
        "judge_families": list(fam.judge_families), "translator_families": list(fam.translator_families),
        "n_scored": sum(v.status == "scored" for v in verdicts),
        "n_failed": sum(v.status == "judge_failed" for v in verdicts),
        "n_not_sent": sum(v.status == "not_sent" for v in verdicts),
        "parse_failure_rate": (t.unparsed / t.answers) if t.answers else 0.0,
        "n_answers": t.answers, "n_unparsed_answers": t.unparsed, "n_cached_answers": t.cached,
        "n_unanswered_calls": t.unanswered,
        "mean": mean, "spread": spread, "breakdown": breakdown, "higher_is_better": judge_cls.higher_is_better,
        "worst_score": judge_cls.worst_score, "parser": judge_cls.parser_version, "max_attempts": max_attempts,
        "runs": runs, "temperature": JUDGE_TEMPERATURE, "max_tokens": caller.max_tokens,
        "prompt_tokens": t.usage.prompt_tokens, "completion_tokens": t.usage.completion_tokens,
        "cost_usd": _cost(t.usage, *prices), **endpoint, **(extra or {}),
    })


# --------------------------------------------------------------------------------------------------------------------
# Orchestration


async def _run_entry_judge(spec: JudgeSpec, card: RunCard, items: dict[int, JudgeItem], caller: Caller,
                           prompt: JudgePrompt, max_attempts: int, concurrency: int,
                           progress: Progress | None) -> list[JudgeVerdict]:
    judge: EntryJudge = REGISTRY[spec.kind]()
    sem = asyncio.Semaphore(concurrency)
    done = 0

    async def one(r: EntryResult) -> JudgeVerdict:
        nonlocal done
        if r.checks.outcome != Outcome.usable:
            v = not_sent(judge.worst_score, r)
        else:
            async with sem:
                v = await _judge_entry(judge, prompt, caller, items[r.entry_id], max_attempts)
        done += 1
        if progress:
            progress(spec.kind, done, len(card.results))
        return v

    return await gather_or_cancel(one(r) for r in card.results)


def render_check(kind: str, prompt: JudgePrompt, bench: cp.Bench | None = None) -> None:
    """Render a judge prompt once with placeholder texts (with and without dialogue history) and its retry hint, so a
    template that cannot render fails before anything is paid for, not at the first judged entry.

    Raises: ConfigError naming the prompt file and block.
    """
    if kind == "checkpoints":
        if bench is None:
            return
        ds = bench.corpus.dataset
        every_point = [p.id for p in bench.key.points]
        stand_in: dict[int, Any] = {e.id: SimpleNamespace(predicted=e.reference) for e in bench.corpus.entries}
        for lost in (set(), set(stand_in)):  # paragraphs translated (the references stand in) and all lost
            prompt.render(**cp.CheckpointsJudge().variables(bench, stand_in, ds.source_language, ds.target_language,
                                                            every_point, lost))
    else:
        judge: EntryJudge = REGISTRY[kind]()
        for history in ([], ["previous line"]):
            prompt.render(**judge.variables(JudgeItem(entry_id=0, source="source", translation="translation",
                                                      source_lang="English", target_lang="Spanish", history=history,
                                                      reference="reference")))
    prompt.retry("a reason")


def preflight(judge_specs: list[str], *, translator_models: list[str | None], allow_self_judge: bool,
              bench: str | Path | None = None, need_endpoint: bool = True, judge_family: str | None = None,
              base_url: str | None = None, translator_family: str | None = None) -> list[JudgeSpec]:
    """Check judge options before anything is translated: spec syntax, one spec per kind, the self-judge family
    rule on the names given (a shared family; the unknown-family rule needs what the servers report, so
    :func:`run_judges_async` applies it), the checkpoint benchmark folder, the prompt files (loaded and rendered
    once, :func:`render_check`), the admission item set's pinned SHA-256 for a GEMBA-MQM or rubric judge
    (:func:`~mtboard.judges.admission.load_pinned_admission_set`) and (``need_endpoint``) a judge endpoint
    (:func:`judge_endpoint` with the run's ``base_url``). The runner calls it before translating so a refused judge costs no translation.

    Returns: the parsed specs. Raises: ConfigError / InputError with a one-line fix.
    """
    specs = [parse_judge_spec(s) for s in judge_specs]
    kinds = [s.kind for s in specs]
    if len(set(kinds)) != len(kinds):
        raise ConfigError(f"judge kinds given twice: {sorted(k for k in set(kinds) if kinds.count(k) > 1)}",
                          field="--judge", fix="give each judge kind once")
    for s in specs:
        check_family(s.model, translator_models, allow_self_judge=allow_self_judge, judge_family=judge_family,
                     translator_family=translator_family)
    loaded = None
    if "checkpoints" in kinds:
        if bench is None:
            raise ConfigError("the checkpoints judge needs a benchmark folder", field="--bench",
                              fix="pass --bench DIR (a folder with bench.json, its corpus and key)")
        loaded = cp.load_bench(bench)
    for s in specs:
        render_check(s.kind, load_judge_prompt(REGISTRY[s.kind].prompt_name), loaded)
    if any(k in ADMITTING_KINDS for k in kinds):
        load_pinned_admission_set()  # an edited item set stops the run before anything is translated or judged
    if need_endpoint:
        judge_endpoint(base_url)
    return specs


async def check_families(specs: list[JudgeSpec], client: Any, translator_models: list[str | None], *,
                         allow_self_judge: bool, translator_is_llm: bool, judge_family: str | None = None,
                         translator_family: str | None = None) -> dict[str, FamilyCheck]:
    """The self-judge family rule for each judge (:func:`~mtboard.judges.base.check_family`) with what the judge's
    server reports about the model it serves (``client.probe``; test doubles without ``probe`` report nothing). A
    server that did not answer (``identity_unanswered``) is no evidence: the judge's typed name alone is its declared
    family, and the status says so. Returns kind → FamilyCheck. Raises: ConfigError (refused)."""
    fams: dict[str, FamilyCheck] = {}
    for spec in specs:
        reported: list[str | None] = []
        unasked = False
        if hasattr(client, "probe"):  # what the judge's server says it serves (test doubles may not say)
            info = await client.probe(spec.model)
            ident = client.identity
            reported = [ident.served, ident.weights_name, ident.family]
            unasked = isinstance(info, dict) and bool(info.get("identity_unanswered"))
        fams[spec.kind] = check_family(spec.model, translator_models, allow_self_judge=allow_self_judge,
                                       judge_reported=reported, judge_family=judge_family,
                                       translator_is_llm=translator_is_llm, translator_family=translator_family,
                                       judge_unasked=unasked)
    return fams


async def check_families_before_translating(judge_specs: list[str], translator_models: list[str | None], *,
                                            allow_self_judge: bool, translator_is_llm: bool,
                                            judge_family: str | None = None, translator_family: str | None = None,
                                            base_url: str | None = None) -> dict[str, FamilyCheck]:
    """:func:`check_families` on the judge endpoint (:func:`judge_endpoint`), for a run that knows its translator's
    identity but has sent no translation yet, so a refused judge costs nothing. Raises: ConfigError."""
    specs = [parse_judge_spec(s) for s in judge_specs]
    async with default_client_factory(1, base_url) as client:
        return await check_families(specs, client, translator_models, allow_self_judge=allow_self_judge,
                                    translator_is_llm=translator_is_llm, judge_family=judge_family,
                                    translator_family=translator_family)


@dataclass(frozen=True)
class _Session:
    """What every judge of one :func:`run_judges_async` call shares: the card and its judge items, the store, the
    loaded checkpoint benchmark (None without the checkpoints judge), the endpoint's card fields, the prices (USD per
    1M tokens in / out) and the call's options."""

    card: RunCard
    items: dict[int, JudgeItem]
    store: JudgeStore
    bench: cp.Bench | None
    endpoint: dict[str, Any]
    prices: tuple[float | None, float | None]
    max_attempts: int
    max_tokens: int | None
    concurrency: int
    runs: int | None
    progress: Progress | None


def _bench_for_card(card: RunCard, kinds: list[str], bench: str | Path | None) -> cp.Bench | None:
    """The checkpoint benchmark, loaded and checked against the card's corpus, when ``checkpoints`` is among
    ``kinds``; else None. Raises: ConfigError (no ``--bench``), InputError (bad folder, another corpus)."""
    if "checkpoints" not in kinds:
        return None
    if bench is None:
        raise ConfigError("the checkpoints judge needs a benchmark folder", field="--bench",
                          fix="pass --bench DIR (a folder with bench.json, its corpus and key)")
    loaded = cp.load_bench(bench)
    loaded.check_corpus(card.dataset.sha256, f"the card's corpus {card.dataset.id}")
    return loaded


def _entry_aggregate(judge_cls: Any, card: RunCard, items: dict[int, JudgeItem],
                     verdicts: list[JudgeVerdict]) -> tuple[float | None, dict[str, dict[str, float]]]:
    """A per-entry judge's ``(mean, breakdown)``: the judge's own breakdown of the sent entries, plus
    ``breakdown['mean']`` (``n_scored``; ``scored_only``, the mean over scored entries, when there is one); ``mean``
    over the judged cells (scored, and not_sent at the worst value; judge failures excluded), None when none."""
    judge = judge_cls()
    sent = [(items[r.entry_id], v) for r, v in zip(card.results, verdicts) if v.status != "not_sent"]
    breakdown = judge.summarize(sent)
    scored = [v.score for v in verdicts if v.status == "scored" and v.score is not None]
    breakdown["mean"] = {"n_scored": float(len(scored))}
    if scored:  # absent, never 0, when nothing was scored (0 would read as a clean MQM score)
        breakdown["mean"]["scored_only"] = statistics.fmean(scored)
    mean = _mean([v.score for v in verdicts if v.score is not None])  # judge failures excluded
    return mean, breakdown


async def _judge_kind(s: _Session, spec: JudgeSpec, prompt: JudgePrompt, client: Any,
                      fam: FamilyCheck) -> tuple[list[JudgeVerdict], JudgeSummary]:
    """One judge over the card: its verdicts (one per result, in order) and its summary. The checkpoints judge's
    prompt hash covers the template and the key; it judges every translation replicate (:func:`run_checkpoints`).
    Raises: ConfigError (``runs`` differs from the card's ``method.runs`` for checkpoints), BackendError."""
    judge_cls = REGISTRY[spec.kind]
    prompt_sha = prompt.sha256
    if spec.kind == "checkpoints":
        assert s.bench is not None
        prompt_sha = sha256_hex(canonical_bytes({"template": prompt.sha256, "key": s.bench.key_sha256}))
    caller = Caller(spec, prompt_sha, client, s.store, s.max_tokens or judge_cls.default_max_tokens,
                    s.endpoint["endpoint_host_sha256"])
    common = {"max_attempts": s.max_attempts, "endpoint": s.endpoint, "prices": s.prices}
    if spec.kind == "checkpoints":
        assert s.bench is not None
        if s.runs is not None and s.runs != s.card.method.runs:
            raise ConfigError(f"the checkpoints judge judges each translation replicate once (BookTrans); "
                              f"this card has {s.card.method.runs}, not {s.runs}", field="--runs",
                              fix=f"translate with `mtboard run … --runs {s.runs}` and judge that card, or drop "
                                  "--runs")
        verdicts, agg = await run_checkpoints(spec, s.card, s.bench, caller, prompt, s.max_attempts, s.progress)
        return verdicts, _summary(spec, judge_cls, prompt_sha, fam, caller, verdicts, mean=agg["mean"],
                                  spread=agg["spread"], breakdown=agg["breakdown"], runs=agg["runs"],
                                  extra=agg["extra"], **common)
    admission = await _admission(s, spec, prompt, prompt_sha, client) if spec.kind in ADMITTING_KINDS else None
    verdicts = await _run_entry_judge(spec, s.card, s.items, caller, prompt, s.max_attempts, s.concurrency,
                                      s.progress)
    mean, breakdown = _entry_aggregate(judge_cls, s.card, s.items, verdicts)
    return verdicts, _summary(spec, judge_cls, prompt_sha, fam, caller, verdicts, mean=mean, spread=None,
                              breakdown=breakdown, runs=1,
                              extra={"admission": admission.model_dump(mode="json")} if admission else None,
                              **common)


async def _admission(s: _Session, spec: JudgeSpec, prompt: JudgePrompt, prompt_sha: str, client: Any):
    """The judge's admission check (:mod:`mtboard.judges.admission`): every item of the fixed set judged once with
    the same prompt, options and retries as the card's entries, through a caller of its own (its answers cached
    in ``WORKDIR/judge/`` with the card's, logged in ``KIND.admission.answers.jsonl``, counted in no summary).
    Returns the :class:`JudgeAdmission` record."""
    judge_cls = REGISTRY[spec.kind]
    aset = load_pinned_admission_set()
    caller = Caller(spec, prompt_sha, client, s.store, s.max_tokens or judge_cls.default_max_tokens,
                    s.endpoint["endpoint_host_sha256"])
    judge: EntryJudge = judge_cls()
    sem = asyncio.Semaphore(s.concurrency)

    async def one(item: JudgeItem) -> JudgeVerdict:
        async with sem:
            return await _judge_entry(judge, prompt, caller, item, s.max_attempts, f"{spec.kind}.admission")

    verdicts = await gather_or_cancel(one(it) for it in aset.judge_items())
    s.store.write_log(f"{spec.kind}.admission")
    return admission_record(spec.kind, aset, list(verdicts))


async def run_judges_async(card: RunCard, corpus: Corpus, judge_specs: list[str], *, workdir: Path,
                           allow_self_judge: bool, client_factory: Callable[[], Any] | None = None,
                           runs: int | None = None, bench: str | Path | None = None,
                           max_attempts: int = DEFAULT_MAX_ATTEMPTS, max_tokens: int | None = None,
                           concurrency: int = 4, price_in_per_mtok: float | None = None,
                           price_out_per_mtok: float | None = None,
                           progress: Progress | None = None, judge_family: str | None = None,
                           base_url: str | None = None, translator_family: str | None = None) -> RunCard:
    """Judge a card's stored translations with each ``KIND=openai:MODEL[:EFFORT]`` spec; return the re-sealed card.

    Args:
        card: the run card (its ``results[].predicted`` are judged; nothing is translated).
        corpus: the corpus the run used (dialogue ``history`` comes from it).
        judge_specs: e.g. ``["gemba-mqm=openai:gpt-4.1", "rubric=openai:claude-sonnet-4"]``; one per kind.
        workdir: the run's work directory; cache and answers go to ``WORKDIR/judge/``.
        allow_self_judge: accept a judge from the translator's model family (recorded in the card).
        client_factory: ``() -> LLMClient``-like object (async ``complete``; ``async with`` supported); default:
            :func:`default_client_factory` (JUDGE_/OPENAI_ environment).
        runs: translation replicates the checkpoints judge judges: must equal the card's ``method.runs`` when given
            (BookTrans: each replicate judged once; re-run the translation with ``--runs N`` for N judged runs);
            per-entry judges run once.
        bench: checkpoint benchmark folder (required for ``checkpoints``).
        max_attempts: answers asked per entry (or per checkpoint run) before ``judge_failed`` (≥ 1).
        max_tokens: explicit output cap for every judge request (default per judge: MQM 512, rubric 256,
            checkpoints 4096).
        price_in_per_mtok / price_out_per_mtok: USD per 1M judge prompt/completion tokens (cost None without both).
        judge_family: the judges' family as declared with ``--judge-family`` (when their names do not tell it).
        translator_family: the translator's family as declared with ``--translator-family`` (likewise).
        base_url: the run's ``--base-url``, used for the judge when ``JUDGE_BASE_URL`` is not set
            (:func:`judge_endpoint`).

    The self-judge family rule (:func:`~mtboard.judges.base.check_family`) is applied with what the judge's server
    reports about the model it serves (its ``probe``), and with the card's names for the translator (which carry
    what the translator's server reported); for a prompted (LLM) translator an unknown family is refused.

    Returns: a new RunCard with ``results[].judgements[kind]``, ``judges[kind]``, ``totals.judge_*``, the fingerprint
    recomputed (judge model + prompt hash are components) and ``run_card_hash`` re-sealed.
    Raises: ConfigError (bad spec, duplicate kind, self-judge refused, missing/mismatched bench, no endpoint);
        BackendError when the judge endpoint refuses every request (401/403/404).
    """
    if max_attempts < 1:
        raise ConfigError("max attempts must be at least 1", field="--max-attempts")
    translator_models = [card.model_slug, card.method.model, card.model_id]
    specs = preflight(judge_specs, translator_models=translator_models, allow_self_judge=allow_self_judge,
                      bench=bench, need_endpoint=client_factory is None, judge_family=judge_family,
                      base_url=base_url, translator_family=translator_family)
    loaded_bench = _bench_for_card(card, [s.kind for s in specs], bench)
    prompts = {s.kind: load_judge_prompt(REGISTRY[s.kind].prompt_name) for s in specs}
    store = JudgeStore(Path(workdir))
    items = _items(card, corpus)
    factory = client_factory or (lambda: default_client_factory(concurrency, base_url))
    client = factory()
    endpoint = {"api_provider": getattr(client, "api_provider", None),
                "endpoint_host_sha256": endpoint_host_sha256(getattr(client, "base_url", None))}
    session = _Session(card=card, items=items, store=store, bench=loaded_bench, endpoint=endpoint,
                       prices=(price_in_per_mtok, price_out_per_mtok), max_attempts=max_attempts,
                       max_tokens=max_tokens, concurrency=concurrency, runs=runs, progress=progress)
    new_verdicts: dict[str, list[JudgeVerdict]] = {}
    summaries: dict[str, JudgeSummary] = {}
    entered = hasattr(client, "__aenter__")
    if entered:
        client = await client.__aenter__() or client
    try:
        fams = await check_families(specs, client, translator_models, allow_self_judge=allow_self_judge,
                                    translator_is_llm=card.method.prompt_format != "raw", judge_family=judge_family,
                                    translator_family=translator_family)
        for spec in specs:
            new_verdicts[spec.kind], summaries[spec.kind] = await _judge_kind(session, spec, prompts[spec.kind],
                                                                              client, fams[spec.kind])
            store.write_log(spec.kind)
    finally:
        if entered:
            await client.__aexit__(None, None, None)
    return apply_judgements(card, new_verdicts, summaries)


def summary_line(kind: str, s: JudgeSummary) -> str:
    """One line for a judge's summary wherever its score is shown (``mtboard run`` / ``mtboard judge`` output,
    ``report.md``): value and direction, the judge, scored / judge_failed / not sent, the parse-failure rate with its
    denominator, cache hits, the family check and tokens, the admission check (issue 39) — and a warning when the judge failed on half the entries
    or more (those are excluded from the value, issue 15: it then covers few of the entries, or none)."""
    direction = "lower is better" if s.higher_is_better is False else "higher is better"
    value = "-" if s.mean is None else f"{s.mean:.2f}"
    spread = f" ± {s.spread:.2f}" if s.spread is not None else ""
    answers = "-" if s.n_answers is None else str(s.n_answers)
    line = (f"{kind:<11} {value}{spread} ({direction})  judge {s.backend}:{s.model}  scored {s.n_scored}, "
            f"judge_failed {s.n_failed}, not sent {s.n_not_sent}; parse failures {s.parse_failure_rate:.1%} of "
            f"{answers} answers ({s.n_cached_answers or 0} cached); family check {s.family_check}; tokens "
            f"{s.prompt_tokens} in / {s.completion_tokens} out")
    if s.admission is not None:  # issue 39: a judge that fails its known-answer items is not counted on the board
        a = s.admission
        line += (f"; admission {a.passed}/{a.items} known-answer items (threshold {a.threshold}): "
                 + ("admitted" if a.admitted else "NOT admitted, its verdicts are kept but not counted"))
    total = s.n_scored + s.n_failed + s.n_not_sent
    if s.n_failed and total and s.n_failed * 2 >= total:
        line += (f"  WARNING: the judge failed on {s.n_failed} of {total} entries, excluded from the value (it "
                 f"covers {total - s.n_failed} of {total})")
    return line


def apply_judgements(card: RunCard, verdicts: dict[str, list[JudgeVerdict]],
                     summaries: dict[str, JudgeSummary]) -> RunCard:
    """A new card with the verdicts (one per result, same order) and summaries of the given kinds replaced, judge
    totals re-summed over every judge in the card, fingerprint recomputed and the card re-sealed."""
    data = documents.card_json(card)
    for kind, vs in verdicts.items():
        if len(vs) != len(data["results"]):
            raise ValueError(f"{kind}: {len(vs)} verdicts for {len(data['results'])} results")
        for res, v in zip(data["results"], vs):
            res["judgements"][kind] = v.model_dump(mode="json")
    for kind, s in summaries.items():
        data["judges"][kind] = s.model_dump(mode="json")
    judges = data["judges"]
    data["totals"]["judge_prompt_tokens"] = sum(int(j.get("prompt_tokens") or 0) for j in judges.values())
    data["totals"]["judge_completion_tokens"] = sum(int(j.get("completion_tokens") or 0) for j in judges.values())
    costs = [j.get("cost_usd") for j in judges.values()]
    data["totals"]["judge_cost_usd"] = sum(costs) if costs and all(c is not None for c in costs) else None
    new = RunCard.model_validate_json(json.dumps(data))
    new = new.model_copy(update={"fingerprint": cardlib.compute_fingerprint(new), "run_card_hash": ""})
    return documents.seal(new)


def run_judges(card: RunCard, corpus: Corpus, judge_specs: list[str], *, workdir: Path, allow_self_judge: bool,
               client_factory: Callable[[], Any] | None = None, runs: int | None = None, **kwargs: Any) -> RunCard:
    """Synchronous :func:`run_judges_async` (not callable from inside a running event loop; use the async one)."""
    return asyncio.run(run_judges_async(card, corpus, judge_specs, workdir=workdir,
                                        allow_self_judge=allow_self_judge, client_factory=client_factory,
                                        runs=runs, **kwargs))
