"""The ``neural`` check: a card's neural metrics (COMET-22, CometKiwi, xCOMET; docs/neural_metrics.md) are consistent.

PR validation does not re-run the models (gigabytes of weights). It checks what follows from the card alone, so that
a claimed value is at least well-formed and its aggregate honest:

* every key of ``neural_metrics`` is a known metric and names that metric's model
  (:data:`mtboard.score.metrics.neural.MODELS`);
* every entry of ``results`` has ``plugin_metrics[<key>]``: a finite number on the 4-decimal grid within the model's
  range (:data:`NEURAL_RANGES`, each with its source); entries without usable output have
  :data:`~mtboard.score.metrics.neural.NO_OUTPUT_SCORE` (they are never sent to the model);
* no entry has a ``plugin_metrics`` key that ``neural_metrics`` lacks (plugin output is neural metrics only);
* ``n`` is the number of results and ``score`` is :func:`mtboard.score.metrics.neural.aggregate` of the per-entry values;
* ``signature`` is the one :func:`mtboard.score.metrics.neural.signature` builds from the record's fields.

The values themselves stay *claimed* (the site says so) until ``mtboard verify`` re-scores them.

Pinned revisions (issue 32 item 3): ``commit`` is checked against :data:`PINNED_REVISIONS` (the revisions this project
pins: :data:`mtboard.score.metrics.neural.ALLOWED_REVISIONS`, issue 34). Another commit does not fail the card — a
contributor may have scored with a newer model revision — but it is a note naming the field, and :func:`unpinned` tells
the site to show the metric as an **unpinned claim**, never as a score (:func:`mtboard.site.runpage.neural_view`).
Re-scoring such a card loads a model revision nobody reviewed (a checkpoint file is a pickle: code), so the verify
workflow's plugin gate (:func:`mtboard.verify.plugins.gate`) classifies the card ``unapproved``: it is verified only in
the job without secrets (docs/maintainers.md, "plugin gate"), never next to the API keys or the secret corpus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mtboard.score.metrics import neural
from mtboard.core.schema import Outcome, RunCard
from mtboard.validate.report import CardRun

CHECK = "neural"


@dataclass(frozen=True)
class NeuralRange:
    """The values a neural metric can produce, and where that range comes from."""

    low: float
    high: float
    source: str


_COMET_README = ("Unbabel/COMET README, 'COMET Models': {model} 'provides scores ranging from 0 to 1'; the regression "
                 "head has no final sigmoid, so values slightly outside occur (Unbabel/COMET issues #38 and #260): "
                 "0-1 widened by half the scale on each side")
NEURAL_RANGES: dict[str, NeuralRange] = {
    "comet22": NeuralRange(-0.5, 1.5, _COMET_README.format(model="Unbabel/wmt22-comet-da")),
    "cometkiwi": NeuralRange(-0.5, 1.5, _COMET_README.format(model="Unbabel/wmt22-cometkiwi-da")),
    "xcomet": NeuralRange(-0.5, 1.5, "xCOMET (Guerreiro et al., TACL 2024, §3): training scores min-max scaled to "
                                     "[0, 1]; no final sigmoid (Unbabel/COMET issue #260: a slightly negative "
                                     "XCOMET-XL score): 0-1 widened by half the scale on each side"),
}
"""Allowed per-entry values and aggregate of each metric of :data:`mtboard.score.metrics.neural.MODELS` (a test
checks every key has one). COMET 7.5 per entry (issue 32) is far outside; a wrong value inside stays a claim until
``mtboard verify`` re-scores it."""
PINNED_REVISIONS: dict[str, frozenset[str]] = {k: neural.ALLOWED_REVISIONS.get(m.repo_id, frozenset())
                                               for k, m in neural.MODELS.items()}
"""The model revisions this project pins, per metric key: the project's one allow-list
(:data:`mtboard.score.metrics.neural.ALLOWED_REVISIONS`, keyed by model repository; issue 34) read through each
metric's repository — what a card's ``neural_metrics.<key>.commit`` is checked against (module docstring), what the
verify workflow's gate and ``mtboard verify`` in a job that holds secrets enforce. Add a revision there only after
reviewing it."""


def unpinned(card: RunCard) -> dict[str, str]:
    """Metric key → commit, for each neural record whose commit is not a pinned revision of its metric (a metric this
    harness does not know counts as unpinned too)."""
    return {k: rec.commit for k, rec in card.neural_metrics.items() if rec.commit not in PINNED_REVISIONS.get(k, ())}


def _range_problem(key: str, value: float) -> str | None:
    """The message for a value outside ``key``'s :data:`NEURAL_RANGES` (the field is the problem's JSON path)."""
    r = NEURAL_RANGES.get(key)
    if r is None or r.low <= value <= r.high:
        return None
    return f"{key} value is {value!r}, allowed: {r.low}…{r.high} ({r.source})"


def check_neural(run: CardRun, card: RunCard) -> None:
    """``neural``: see the module docstring (skipped when the card has no neural metrics)."""
    keys = set(card.neural_metrics)
    stray = sorted({k for r in card.results for k in r.plugin_metrics} - keys)
    for k in stray:
        run.fail(CHECK, f"results carry {k!r} values but $.neural_metrics has no {k!r} record (plugin output is "
                        "neural metrics only)", f"$.neural_metrics.{k}")
    if not keys:
        if not run.failed(CHECK):
            run.skip(CHECK, "no neural metrics")
        return
    for key, rec in card.neural_metrics.items():
        where = f"$.neural_metrics.{key}"
        m = neural.MODELS.get(key)
        if m is None:
            run.fail(CHECK, f"unknown neural metric {key!r} (known: {', '.join(neural.MODELS)})", where)
            continue
        if rec.model != m.repo_id:
            run.fail(CHECK, f"model {rec.model!r} is not {key}'s model {m.repo_id!r}", f"{where}.model")
        values: list[float] = []
        for i, r in enumerate(card.results):
            v = r.plugin_metrics.get(key)
            path = f"$.results[{i}].plugin_metrics.{key}"
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                run.fail(CHECK, f"{key} value {v!r} is not a finite number", path)
                continue
            if round(v, neural.NEURAL_DECIMALS) != v:
                run.fail(CHECK, f"{key} value {v!r} is not rounded to {neural.NEURAL_DECIMALS} decimals", path)
                continue
            out_of_range = _range_problem(key, float(v))
            if out_of_range:
                run.fail(CHECK, out_of_range, path)
                continue
            if r.checks.outcome != Outcome.usable and v != neural.NO_OUTPUT_SCORE:
                run.fail(CHECK, f"{key} value {v!r} on an entry without usable output (must be "
                                f"{neural.NO_OUTPUT_SCORE}: it is not sent to the model)", path)
                continue
            values.append(float(v))
        bad_score = _range_problem(key, rec.score)
        if bad_score:
            run.fail(CHECK, bad_score, f"{where}.score")
        if rec.commit not in PINNED_REVISIONS.get(key, ()):
            pinned = ", ".join(sorted(PINNED_REVISIONS.get(key, ()))) or "none"
            run.note(f"neural: {where}.commit is {rec.commit}, allowed: a pinned revision ({pinned}; "
                     "mtboard.validate.neural.PINNED_REVISIONS): shown as an unpinned claim, never as a score")
        if rec.n != len(card.results):
            run.fail(CHECK, f"n is {rec.n}, the card has {len(card.results)} results", f"{where}.n")
        if len(values) == len(card.results):
            agg = neural.aggregate(values)
            if agg is not None and rec.score != agg:
                run.fail(CHECK, f"score {rec.score} is not the mean of the per-entry values ({agg})", f"{where}.score")
        sig = neural.signature(key, repo_id=rec.model, revision=rec.commit, encoder=rec.encoder,
                               batch_size=rec.batch_size, device=rec.device, versions=rec.versions)
        if rec.signature != sig:
            run.fail(CHECK, f"signature {rec.signature!r} does not match the record's fields ({sig!r})",
                     f"{where}.signature")
    if not run.failed(CHECK):
        run.done(CHECK)


__all__ = ["CHECK", "NEURAL_RANGES", "PINNED_REVISIONS", "NeuralRange", "check_neural", "unpinned"]
