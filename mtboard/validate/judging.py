"""The ``judges`` check: judge summaries and verdicts consistent with one another, the judge classes and the
translator (issue 15 part 0; spec §3; the GEMBA note on severities; BookTrans on runs and the self-judge rule).

Judges cannot be re-run here, so what a judge *said* — its raw answer — is declared; everything that follows from
what it said is bound. A per-entry judge's verdict is its stored answer parsed again with the recorded parser version
(errors, severities, spans, labels, subscores, flags, justification, score; :mod:`mtboard.validate.judge_answers`,
issue 32), and the answers, attempts and calls the summary counts agree with the verdicts. Then:

* every result carries one verdict per judge; ``not_sent`` exactly for entries without usable output (entry judges);
  a ``scored`` verdict has a score, a ``judge_failed`` one has none (failed judgements are excluded, not scored);
* a GEMBA-MQM score is the sum of its errors' severity weights (``non-translation`` is critical, classes are the
  inventory's); a rubric score is the sum of its three axes, each in range; a checkpoint paragraph score is
  100 × the share of its points passed; a ``not_sent`` entry-judge verdict carries the worst value;
* the summary's counts, ``mean`` (over judged cells), ``spread``, ``parse_failure_rate`` and ``breakdown`` recompute
  from the verdicts (the judge's own ``summarize``); ``parser`` is a version this mtboard knows (unknown: refused,
  :func:`~mtboard.validate.judge_answers.check_parser`); ``higher_is_better``, ``worst_score`` and ``temperature``
  are the judge class's; ``runs`` is 1 for entry judges and the card's translation replicates for the checkpoint
  judge;
* ``translator_families`` are :func:`mtboard.judges.base.model_families` of the translator's names,
  ``judge_families`` hold the judge model's (plus what its server reported or ``--judge-family`` declared), and
  ``family_check`` is what :func:`mtboard.judges.base.check_family` decides from them (:func:`_check_families`);
* every result's verdicts are of judges the card summarises; the card's judge totals are the summaries' sums.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from mtboard.judges import REGISTRY, model_families
from mtboard.judges.base import FAMILIES, JUDGE_BACKENDS, JudgeItem
from mtboard.judges.admission import ADMITTING_KINDS, admission_problems
from mtboard.judges.calls import JUDGE_TEMPERATURE
from mtboard.judges.checkpoints import mean_and_spread
from mtboard.judges.gemba_mqm import ERROR_CLASSES, SEVERITY_WEIGHTS
from mtboard.judges.rubric import AXES
from mtboard.core.schema import Entry, JudgeSummary, JudgeVerdict, Outcome, RunCard
from mtboard.validate.judge_answers import (check_answer, check_answer_counts, check_checkpoint_verdict,
                                            check_kind_extras, check_parser, missing_answers)
from mtboard.validate.report import CardRun

FAMILY_PASSED = "passed"
FAMILY_OVERRIDDEN = "overridden (--allow-self-judge)"
FAMILY_UNKNOWN = "overridden (--allow-self-judge; family unknown)"
FAMILY_DECLARED_PREFIX = "passed (judge family declared: "


def _same(a: float | None, b: float | None) -> bool:
    """Equal, allowing float summation order (sums of a few small numbers)."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _check_verdict(run: CardRun, kind: str, summary: JudgeSummary, v: JudgeVerdict, usable: bool, where: str) -> None:
    if v.status == "scored" and v.score is None:
        run.fail("judges", "a scored verdict has no score", f"{where}.score")
    if v.status == "judge_failed" and v.score is not None:
        run.fail("judges", "a judge_failed verdict has a score: failed judgements are excluded, never scored",
                 f"{where}.score")
    if kind != "checkpoints":
        if (v.status == "not_sent") == usable:
            run.fail("judges", "only entries without usable output may be not_sent, and all of them must be",
                     f"{where}.status")
        if v.status == "not_sent" and v.score != summary.worst_score:
            run.fail("judges", "a not_sent verdict carries the judge's worst value", f"{where}.score")
    elif v.status == "not_sent" and v.score not in (None, 0.0):
        run.fail("judges", "a not_sent checkpoint verdict scores 0 (no usable output) or nothing (no key point)",
                 f"{where}.score")
    if v.status != "scored" or v.score is None:
        if kind == "gemba-mqm" and v.errors:
            run.fail("judges", "only scored verdicts list MQM errors", f"{where}.errors")
        return
    if kind == "gemba-mqm":
        for k, e in enumerate(v.errors):
            if e.category not in ERROR_CLASSES:
                run.fail("judges", "MQM error class not in the GEMBA inventory", f"{where}.errors[{k}].category")
            elif e.category == "non-translation" and e.severity != "critical":
                run.fail("judges", "non-translation is always critical", f"{where}.errors[{k}].severity")
        penalty = float(sum(SEVERITY_WEIGHTS[e.severity] for e in v.errors))
        if v.score != penalty:
            run.fail("judges", f"score {v.score} but its errors' severities weigh {penalty}", f"{where}.score")
    elif kind == "rubric":
        if sorted(v.subscores) != sorted(name for name, _ in AXES) or any(
                not (0 <= v.subscores[name] <= top and float(v.subscores[name]).is_integer())
                for name, top in AXES if name in v.subscores):
            run.fail("judges", "rubric subscores must be adequacy 0–4, pragmatics 0–4, fluency 0–2 (integers)",
                     f"{where}.subscores")
        elif not _same(v.score, float(sum(v.subscores.values()))):
            run.fail("judges", f"score {v.score} but the subscores sum to {sum(v.subscores.values())}",
                     f"{where}.score")
    elif kind == "checkpoints":
        if not v.subscores or any(x not in (0.0, 1.0) for x in v.subscores.values()):
            run.fail("judges", "checkpoint subscores are 1 (point passed) or 0 per key point", f"{where}.subscores")
        elif not _same(v.score, 100.0 * statistics.fmean(v.subscores.values())):
            run.fail("judges", "score is not 100 × the share of the paragraph's points passed", f"{where}.score")


FAMILY_TRANSLATOR_DECLARED = "translator family declared: "
FAMILY_UNASKED = "judge family from its typed name only: its server did not say what it serves"


def _status_parts(status: str) -> list[str]:
    """The parts of a ``passed (…; …)`` status (:func:`mtboard.judges.base.check_family` joins them with ``; ``);
    ``[]`` for any other status."""
    if not (status.startswith("passed (") and status.endswith(")")):
        return []
    return status[len("passed ("):-1].split("; ")


def _check_families(run: CardRun, card: RunCard, summary: JudgeSummary, where: str) -> None:
    """``family_check`` as :func:`mtboard.judges.base.check_family` decides it from the recorded families.

    ``translator_families`` hold the families of the card's model names and only known ones, plus at most one
    family ``--translator-family`` declared (docs/judges.md: "each is checked like a found one and recorded"; a
    ``passed`` status names it as ``translator family declared: F``). ``judge_families`` hold at least the judge
    model's own families and only known ones (:data:`mtboard.judges.base.FAMILIES`); more come from what the
    judge's server reported or ``--judge-family`` declared (issue 22: declared, a re-run confirms them). Then:
    families shared → overridden; an LLM translator (a prompted method) with the judge's or its own family unknown →
    overridden (family unknown); otherwise passed, naming (in ``check_family``'s order) a declared judge family that
    is not the judge model's own, a declared translator family that is not the names', and a judge whose server was
    not asked."""
    own = model_families(summary.model)
    jf = set(summary.judge_families)
    names_tf: set[str] = set()
    for name in (card.model_slug, card.method.model, card.model_id):
        names_tf |= model_families(name)
    tf = set(summary.translator_families)
    parts = _status_parts(summary.family_check)
    declared_tf = {p.removeprefix(FAMILY_TRANSLATOR_DECLARED) for p in parts
                   if p.startswith(FAMILY_TRANSLATOR_DECLARED)}
    if not own <= jf or not jf <= FAMILIES.keys() or summary.judge_families != sorted(jf):
        run.fail("judges", "judge_families must be known families (sorted), the judge model's own among them",
                 f"{where}.judge_families")
    extra = tf - names_tf
    if (not names_tf <= tf or not tf <= FAMILIES.keys() or summary.translator_families != sorted(tf)
            or len(extra) > 1 or (summary.family_check.startswith("passed") and extra != declared_tf)):
        run.fail("judges", "translator_families are not the families of the card's model names (sorted), plus the "
                           "one --translator-family declared", f"{where}.translator_families")
    if jf & tf:
        want, why = FAMILY_OVERRIDDEN, "the judge and translator families overlap"
    elif card.method.prompt_format != "raw" and (not jf or not tf):
        want, why = FAMILY_UNKNOWN, "an LLM translator and a judge whose families cannot be told apart"
    else:
        named = [f"{FAMILY_DECLARED_PREFIX.removeprefix('passed (')}{f}" for f in sorted(jf - own)
                 if f"{FAMILY_DECLARED_PREFIX.removeprefix('passed (')}{f}" in parts][:1]
        named += [FAMILY_TRANSLATOR_DECLARED + f for f in sorted(extra)]
        named += [FAMILY_UNASKED] if FAMILY_UNASKED in parts else []
        want = f"passed ({'; '.join(named)})" if named else FAMILY_PASSED
        why = "the judge and translator families do not overlap"
    if summary.family_check != want:
        run.fail("judges", f"family_check must be {want!r}: {why}", f"{where}.family_check")


def check_judge_declaration(run: CardRun, card: RunCard, kind: str, summary: JudgeSummary) -> None:
    """The checks of one judge's summary whose inputs the command line decides (issue 33 item 4: the runner runs
    them on its planned card before the first request, :mod:`mtboard.run.planned`): the summary's kind is its key,
    a known backend, the judge class's constants (direction, worst score, temperature), its runs and the families
    (:func:`_check_families`). Problems go to ``run`` under the ``judges`` check."""
    where = f"$.judges.{kind}"
    if summary.kind != kind:
        run.fail("judges", "summary kind differs from its key", f"{where}.kind")
        return
    cls = REGISTRY[kind]
    if summary.backend not in JUDGE_BACKENDS:
        run.fail("judges", f"judge backend must be one of {', '.join(JUDGE_BACKENDS)}", f"{where}.backend")
    for name, want in (("higher_is_better", cls.higher_is_better), ("worst_score", cls.worst_score),
                       ("temperature", JUDGE_TEMPERATURE)):
        if getattr(summary, name) != want:
            run.fail("judges", f"{name} is not the {kind} judge's ({want!r})", f"{where}.{name}")
    want_runs = card.method.runs if kind == "checkpoints" else 1
    if summary.runs != want_runs:
        run.fail("judges", f"runs {summary.runs} but the {kind} judge judges "
                           + ("each translation replicate once" if kind == "checkpoints" else "once"),
                 f"{where}.runs")
    _check_families(run, card, summary, where)


def _check_breakdown(run: CardRun, card: RunCard, kind: str, summary: JudgeSummary, verdicts: list[JudgeVerdict],
                     entries: list[Entry] | None, where: str) -> None:
    if kind == "checkpoints":
        runs = {str(i + 1): s for i, s in enumerate(summary.run_scores)}
        got = summary.breakdown.get("runs", {})
        if sorted(got.values()) != sorted(runs.values()) or len(got) != len(runs):
            run.fail("judges", "breakdown.runs are not the run scores", f"{where}.breakdown.runs")
        mean = summary.breakdown.get("mean", {})
        if mean.get("n_runs_scored") != float(len(summary.run_scores)) or \
                mean.get("n_runs_scored", 0) + mean.get("n_runs_failed", 0) != summary.runs:
            run.fail("judges", "breakdown.mean counts do not add up to the judged runs", f"{where}.breakdown.mean")
        return
    if entries is None:
        return  # the corpus (dialogue history) is needed to recompute context-behaviour rates
    axes = sorted(name for name, _ in AXES)
    if kind == "rubric" and any(v.status == "scored" and sorted(v.subscores) != axes for v in verdicts):
        return  # a scored rubric verdict without its three axes is reported by _check_verdict; nothing to average
    judge = REGISTRY[kind]()
    history = {e.id: list(e.history) for e in entries}
    sent = [(JudgeItem(entry_id=r.entry_id, source=r.source, translation=r.predicted, source_lang="",
                       target_lang="", history=history.get(r.entry_id, [])), v)
            for r, v in zip(card.results, verdicts) if v.status != "not_sent"]
    want: dict[str, Any] = judge.summarize(sent)
    scored = [v.score for v in verdicts if v.status == "scored" and v.score is not None]
    want["mean"] = {"n_scored": float(len(scored))}
    if scored:
        want["mean"]["scored_only"] = statistics.fmean(scored)
    got = summary.breakdown
    for key in sorted(set(want) | set(got)):
        a, b = got.get(key), want.get(key)
        if a is None or b is None or set(a) != set(b) or any(not _same(a[k], b[k]) for k in a):
            run.fail("judges", f"breakdown.{key} does not recompute from the verdicts", f"{where}.breakdown.{key}")


def _check_admission(run: CardRun, kind: str, summary: JudgeSummary, where: str) -> None:
    """The judge's recorded admission check (issue 39; :mod:`mtboard.judges.admission`): only for the judges that
    take it (:data:`~mtboard.judges.admission.ADMITTING_KINDS`: GEMBA-MQM and rubric) it is required and consistent
    (:func:`mtboard.judges.admission.admission_problems`: the committed item set, ``passed ≤ items``, the failed ids,
    ``admitted ⇔ passed ≥ threshold``); the checkpoint judge takes none. Absent is refused: deleting the field must
    not skip the check. The board counts only an admitted judge (:func:`mtboard.ledger.tables.counted_judges`)."""
    adm = summary.admission
    if adm is None:
        if kind in ADMITTING_KINDS:
            run.fail("judges", f"the {kind} judge has no admission record", f"{where}.admission")
        return
    if kind not in ADMITTING_KINDS:
        run.fail("judges", f"the {kind} judge takes no admission check", f"{where}.admission")
        return
    for line in admission_problems(adm):
        run.fail("judges", line, f"{where}.admission")


def _check_summary(run: CardRun, card: RunCard, kind: str, summary: JudgeSummary,
                   entries: list[Entry] | None) -> None:
    """One judge: its class's fields, families, counts, answers and attempts, every verdict (re-derived from the
    judge's words for the per-entry judges), mean, spread and breakdown."""
    where = f"$.judges.{kind}"
    if summary.kind != kind:
        run.fail("judges", "summary kind differs from its key", f"{where}.kind")
        return
    cls = REGISTRY[kind]
    parse = check_parser(run, kind, summary, where)
    check_judge_declaration(run, card, kind, summary)
    _check_admission(run, kind, summary, where)
    verdicts = [r.judgements.get(kind) for r in card.results]
    present = [v for v in verdicts if v is not None]
    if len(present) != len(card.results):
        run.fail("judges", f"{len(card.results) - len(present)} results have no verdict of this judge", where)
        return
    counts = {s: sum(1 for v in present if v.status == s) for s in ("scored", "judge_failed", "not_sent")}
    for name, key in (("n_scored", "scored"), ("n_failed", "judge_failed"), ("n_not_sent", "not_sent")):
        if getattr(summary, name) != counts[key]:
            run.fail("judges", f"{name} {getattr(summary, name)} but {counts[key]} verdicts say {key}",
                     f"{where}.{name}")
    if summary.n_answers is not None and summary.n_unparsed_answers is not None:
        rate = summary.n_unparsed_answers / summary.n_answers if summary.n_answers else 0.0
        if summary.parse_failure_rate != rate:
            run.fail("judges", f"parse_failure_rate {summary.parse_failure_rate} but n_unparsed_answers/"
                               f"n_answers = {rate}", f"{where}.parse_failure_rate")
    check_answer_counts(run, kind, summary, present, where)
    if kind != "checkpoints":
        missing_answers(run, kind, present)
    check_kind_extras(run, kind, summary, where)
    for i, (r, v) in enumerate(zip(card.results, present)):
        at = f"$.results[{i}].judgements.{kind}"
        _check_verdict(run, kind, summary, v, r.checks.outcome == Outcome.usable, at)
        if kind == "checkpoints":
            check_checkpoint_verdict(run, v, at)
        elif parse is not None:
            check_answer(run, parse, cls.worst_score, r, v, at)
    if kind == "checkpoints":
        mean, spread = mean_and_spread(list(summary.run_scores))
    else:
        judged = [v.score for v in present if v.score is not None]
        mean, spread = (statistics.fmean(judged) if judged else None), None
    if summary.mean != mean:
        run.fail("judges", f"mean {summary.mean} but the judged cells give {mean}", f"{where}.mean")
    if summary.spread != spread:
        run.fail("judges", f"spread {summary.spread} but the run scores give {spread}", f"{where}.spread")
    _check_breakdown(run, card, kind, summary, present, entries, where)


def check_judges(run: CardRun, card: RunCard, entries: list[Entry] | None = None) -> None:
    """``judges``: see the module docstring. ``entries``: the card's corpus entries when matched (needed to
    recompute MQM context-behaviour rates, which count entries with dialogue history)."""
    t = card.totals
    if not card.judges:
        kinds = {k for r in card.results for k in r.judgements}
        if kinds:
            run.fail("judges", f"results carry verdicts of {len(kinds)} judge(s) that have no summary in $.judges",
                     "$.judges")
        if t.judge_prompt_tokens or t.judge_completion_tokens or t.judge_cost_usd is not None:
            run.fail("judges", "judge totals are set but no judge ran", "$.totals")
        if not run.failed("judges"):
            run.skip("judges", "no judges ran")
        return
    for i, r in enumerate(card.results):
        for kind in sorted(set(r.judgements) - set(card.judges)):
            run.fail("judges", f"a verdict of judge {kind!r}, which has no summary in $.judges",
                     f"$.results[{i}].judgements.{kind}")
    for kind, summary in card.judges.items():
        _check_summary(run, card, kind, summary, entries)
    sums = {"judge_prompt_tokens": sum(j.prompt_tokens or 0 for j in card.judges.values()),
            "judge_completion_tokens": sum(j.completion_tokens or 0 for j in card.judges.values())}
    for name, value in sums.items():
        if getattr(t, name) != value:
            run.fail("judges", f"{name} {getattr(t, name)} but the judge summaries sum to {value}", f"$.totals.{name}")
    costs = [j.cost_usd for j in card.judges.values()]
    cost = sum(costs) if costs and all(c is not None for c in costs) else None  # type: ignore[arg-type]
    if t.judge_cost_usd != cost:
        run.fail("judges", f"judge_cost_usd {t.judge_cost_usd} but the judge summaries sum to {cost}",
                 "$.totals.judge_cost_usd")
    run.done("judges")
