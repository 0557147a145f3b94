"""The checkpoint judge over a card's translation replicates (BookTrans; issue 5).

Each translation replicate of the card (``--runs N``: run 0 is ``results``, then ``replicate_runs``) is judged once,
in three phases:

1. :func:`_judge_replicate` — code-found penalties (lost paragraphs, markup, foreign script, extra attempts), then
   the judge asked for every key point not already failed by the code; an answer that does not parse is asked again
   with the template's retry hint, points the answer left out are asked again in a fresh conversation, up to
   ``max_attempts`` answers in all. A replicate without a verdict for every point is ``judge_failed``.
2. :func:`_breakdown` — the summary's per-run scores, area and penalty means and point failure rates over the scored
   replicates (a failed replicate is excluded from the mean and counted in ``breakdown['mean']['n_runs_failed']``).
3. :func:`_paragraph_verdicts` — one verdict per card result describing run 0's translation.

:func:`run_checkpoints` runs the three; :mod:`mtboard.judges.run` puts its verdicts and summary in the card.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from mtboard.core.schema import EntryResult, JudgeVerdict, Outcome, RunCard
from mtboard.judges import checkpoints as cp
from mtboard.judges.base import JudgeParseError, JudgePrompt, JudgeSpec
from mtboard.judges.calls import Caller, Progress, gather_or_cancel, not_sent, retry_messages


def translation_runs(card: RunCard) -> list[dict[int, Any]]:
    """The card's translation replicates as ``{entry_id: result}`` maps, run 0 (``results``) first, then
    ``replicate_runs`` (their results carry ``predicted``, ``checks`` and ``attempts`` like run 0's)."""
    return [{r.entry_id: r for r in card.results}] + [{r.entry_id: r for r in rr.results}
                                                      for rr in card.replicate_runs]


@dataclass
class _Asking:
    """One replicate's judging in progress: verdict per point ``(passed, reason, "code" | "judge")``, the points
    still without one, the judge's additions and untranslated passages ``(paragraph, quote)``, answers so far."""

    verdicts: dict[str, tuple[bool, str | None, str]]
    pending: list[str]
    additions: set[tuple[int, str]] = field(default_factory=set)
    untranslated: set[tuple[int, str]] = field(default_factory=set)
    attempts: int = 0
    raw: list[str | None] = field(default_factory=list)
    status: str = "scored"
    why: str | None = None


async def _ask_points(spec: JudgeSpec, card: RunCard, bench: cp.Bench, caller: Caller, prompt: JudgePrompt,
                      max_attempts: int, rep: int, results: dict[int, EntryResult], lost: set[int],
                      state: _Asking) -> None:
    """Ask the judge about ``state.pending`` until every point has a verdict, the judge's service fails, or
    ``max_attempts`` answers were asked; every answer is logged to the judge store. Updates ``state`` in place."""
    judge = cp.CheckpointsJudge()
    paragraphs = {e.id for e in bench.corpus.entries}
    messages: list[dict[str, str]] | None = None
    while state.pending:
        if state.attempts >= max_attempts:
            state.status = "judge_failed"
            state.why = f"{len(state.pending)} points without a verdict after {state.attempts} attempts"
            return
        if messages is None:
            messages = prompt.render(**judge.variables(bench, results, card.dataset.source_language,
                                                       card.dataset.target_language, state.pending, lost))
        state.attempts += 1
        ans = await caller.ask(messages, replicate=rep)
        log = {"entry_id": None, "run": rep, "attempt": state.attempts, "key": ans.key, "cached": ans.cached,
               "text": ans.text, "finish_reason": ans.finish_reason, "error_kind": ans.error_kind,
               "points": list(state.pending)}
        if not caller.answered(ans):
            caller.store.log(spec.kind, {**log, "parse": "no-answer", "error": ans.error})
            state.status = "judge_failed"
            state.why = f"judge call failed ({ans.error_kind}): {(ans.error or '')[:200]}"
            return
        state.raw.append(ans.text)
        try:
            parsed = cp.parse_checkpoints(ans.text, set(state.pending), paragraphs)
        except JudgeParseError as exc:
            caller.tally.unparsed += 1
            caller.store.log(spec.kind, {**log, "parse": "failed", "parse_error": exc.reason})
            messages = retry_messages(prompt, messages, ans.text, exc.reason)
            state.why = exc.reason
            continue
        caller.store.log(spec.kind, {**log, "parse": "ok", "answered": sorted(parsed.verdicts)})
        for pid, (ok, reason) in parsed.verdicts.items():
            state.verdicts[pid] = (ok, reason, "judge")
        state.additions.update(parsed.additions)
        state.untranslated.update(parsed.untranslated)
        state.pending = [pid for pid in state.pending if pid not in parsed.verdicts]
        messages = None  # ask again for just the missing points, in a fresh conversation


def _run_outcome(state: _Asking, code: dict[str, Any], bench: cp.Bench) -> dict[str, Any]:
    """One replicate's result: ``{"status": "judge_failed", "reason", "raw", "attempts"}``, or the scored run
    (point verdicts, additions, untranslated, penalty counts and weighted total, points passed, the run score in
    [0, 100] (:func:`~mtboard.judges.checkpoints.run_score`), attempts, raw answers)."""
    if state.status != "scored":
        return {"status": state.status, "reason": state.why, "raw": state.raw, "attempts": state.attempts}
    counts = {"addition": len(state.additions), "untranslated": len(state.untranslated),
              **{k: code[k] for k in ("lost_paragraph", "markup", "foreign_script", "extra_attempt")}}
    weights = bench.penalties
    penalty = sum(weights[k] * n for k, n in counts.items())
    passed = sum(ok for ok, _, _ in state.verdicts.values())
    return {"status": "scored", "verdicts": state.verdicts, "additions": sorted(state.additions),
            "untranslated": sorted(state.untranslated), "penalties": counts, "penalty_total": penalty,
            "passed": passed, "score": cp.run_score(len(bench.key.points), passed, penalty),
            "attempts": state.attempts, "raw": state.raw}


async def _judge_replicate(spec: JudgeSpec, card: RunCard, bench: cp.Bench, caller: Caller, prompt: JudgePrompt,
                           max_attempts: int, rep: int,
                           results: dict[int, EntryResult]) -> tuple[_Asking, dict[str, Any]]:
    """Phase 1 for one replicate: the code's penalties, then the judge's verdicts (:func:`_ask_points`). Points that
    address a lost paragraph fail without asking. Returns the finished asking state and the code's penalties."""
    code = cp.code_penalties(bench, results, card.dataset.target_language)
    lost = set(code["lost"])
    auto_fail = {p.id for p in bench.key.points if any(a in lost for a in p.paragraphs)}
    state = _Asking(verdicts={pid: (False, "paragraph has no usable translation", "code") for pid in auto_fail},
                    pending=[p.id for p in bench.key.points if p.id not in auto_fail])
    await _ask_points(spec, card, bench, caller, prompt, max_attempts, rep, results, lost, state)
    return state, code


def _breakdown(points: list[cp.KeyPoint], run_out: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Phase 2: the summary's breakdown — ``runs`` (score per scored run, numbered from 1), ``area_points``,
    ``mean`` (runs scored and failed) and, when a run was scored, the mean over scored runs of points passed per area,
    of each penalty count and of each point's failure (0/1)."""
    scored_runs = [o for o in run_out if o["status"] == "scored"]
    areas = sorted({p.area for p in points})
    breakdown: dict[str, dict[str, float]] = {
        "runs": {str(i + 1): float(o["score"]) for i, o in enumerate(run_out) if o["status"] == "scored"},
        "area_points": {a: float(sum(p.area == a for p in points)) for a in areas},
        "mean": {"n_runs_scored": float(len(scored_runs)), "n_runs_failed": float(len(run_out) - len(scored_runs))},
    }
    if scored_runs:
        breakdown["area_passed"] = {a: statistics.fmean(
            sum(o["verdicts"][p.id][0] for p in points if p.area == a) for o in scored_runs) for a in areas}
        breakdown["penalties"] = {k: statistics.fmean(o["penalties"][k] for o in scored_runs)
                                  for k in cp.PENALTY_KINDS}
        breakdown["point_fail_rate"] = {p.id: statistics.fmean(0.0 if o["verdicts"][p.id][0] else 1.0
                                                               for o in scored_runs) for p in points}
    return breakdown


def _paragraph_verdict(r: EntryResult, pids: list[str], first: dict[str, Any]) -> JudgeVerdict:
    """Run 0's verdict on one judged paragraph: 100 × the share of its key points passed, ``PID:fail`` /
    ``ADDITION`` / ``UNTRANSLATED`` flags and the failed points' reasons (≤ 1000 characters)."""
    subs = {pid: 1.0 if first["verdicts"][pid][0] else 0.0 for pid in pids}
    flags = sorted({f"{pid}:fail" for pid in pids if not first["verdicts"][pid][0]})
    if any(a == r.entry_id for a, _ in first["additions"]):
        flags.append("ADDITION")
    if any(a == r.entry_id for a, _ in first["untranslated"]):
        flags.append("UNTRANSLATED")
    reasons = sorted({f"{pid}: {first['verdicts'][pid][1]}" for pid in pids if not first["verdicts"][pid][0]})
    return JudgeVerdict(status="scored", score=100.0 * statistics.fmean(subs.values()), subscores=subs,
                        flags=flags, justification="; ".join(reasons)[:1000] or None, attempts=first["attempts"])


def _paragraph_verdicts(card: RunCard, bench: cp.Bench, first: dict[str, Any]) -> list[JudgeVerdict]:
    """Phase 3: one verdict per card result, describing run 0's translation (``first``): not sent (worst value 0)
    when the output was not usable; not sent without a score for an entry outside the benchmark or one no key point
    addresses; ``judge_failed`` when run 0's judging failed; else :func:`_paragraph_verdict`."""
    paragraphs = {e.id for e in bench.corpus.entries}
    by_para: dict[int, list[str]] = {}
    for p in bench.key.points:
        for a in p.paragraphs:
            by_para.setdefault(a, []).append(p.id)
    entry_verdicts: list[JudgeVerdict] = []
    for r in card.results:
        if r.checks.outcome != Outcome.usable:
            entry_verdicts.append(not_sent(0.0, r))
        elif r.entry_id not in paragraphs:
            entry_verdicts.append(JudgeVerdict(status="not_sent", score=None, attempts=0,
                                               justification="not a paragraph of the checkpoint benchmark"))
        elif first["status"] != "scored":
            entry_verdicts.append(JudgeVerdict(status="judge_failed", score=None, attempts=first["attempts"],
                                               raw_answer=(first["raw"][-1] if first["raw"] else None) or "",
                                               justification=f"checkpoint judge failed on this translation: "
                                                             f"{str(first.get('reason'))[:300]}"))
        elif not by_para.get(r.entry_id, []):
            entry_verdicts.append(JudgeVerdict(status="not_sent", score=None, attempts=0, justification=(
                "no key point addresses this paragraph (it was shown to the judge as context)")))
        else:
            entry_verdicts.append(_paragraph_verdict(r, by_para[r.entry_id], first))
    return entry_verdicts


async def run_checkpoints(spec: JudgeSpec, card: RunCard, bench: cp.Bench, caller: Caller, prompt: JudgePrompt,
                          max_attempts: int, progress: Progress | None) -> tuple[list[JudgeVerdict], dict[str, Any]]:
    """Judge each translation replicate of the card once (BookTrans: N separate translations, each judged; mean and
    spread of their scores). A run whose judging fails (no parsable answer for every point after ``max_attempts``)
    is excluded from the mean and counted in ``breakdown['mean']['n_runs_failed']``. Per-entry verdicts describe run
    0's translation (the card's ``results``).

    Replicates are judged concurrently; ``progress(spec.kind, finished, runs)`` after each.
    Returns: ``(verdicts, {"mean", "spread", "breakdown", "extra", "runs", "n_runs_failed"})``; ``mean`` and
    ``spread`` (sample standard deviation, None under 2 runs) over the scored runs' scores in [0, 100].
    Raises: BackendError when the judge endpoint refuses the request (:class:`~mtboard.judges.calls.Caller`).
    """
    translations = translation_runs(card)
    runs = len(translations)
    finished = 0

    async def one_run(rep: int) -> dict[str, Any]:
        nonlocal finished
        state, code = await _judge_replicate(spec, card, bench, caller, prompt, max_attempts, rep, translations[rep])
        finished += 1
        if progress:
            progress(spec.kind, finished, runs)
        return _run_outcome(state, code, bench)

    run_out = await gather_or_cancel(one_run(r) for r in range(runs))
    scored_runs = [o for o in run_out if o["status"] == "scored"]
    scores = [float(o["score"]) for o in scored_runs]
    mean, spread = cp.mean_and_spread(scores)
    breakdown = _breakdown(bench.key.points, run_out)
    entry_verdicts = _paragraph_verdicts(card, bench, run_out[0])
    failed_raw = [o["raw"][-1] if o["raw"] and o["raw"][-1] is not None else "" for o in run_out
                  if o["status"] != "scored"]
    extra = {"run_scores": scores, "failed_raw_answers": failed_raw,
             "bench": f"{bench.manifest.id}@{bench.key_sha256[:12]}"}
    return entry_verdicts, {"mean": mean, "spread": spread, "breakdown": breakdown, "extra": extra, "runs": runs,
                            "n_runs_failed": len(run_out) - len(scored_runs)}
