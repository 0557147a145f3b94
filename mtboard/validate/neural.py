"""The ``neural`` check: a card's neural metrics (COMET-22, CometKiwi, xCOMET; docs/neural_metrics.md) are consistent.

PR validation does not re-run the models (gigabytes of weights). It checks what follows from the card alone, so that
a claimed value is at least well-formed and its aggregate honest:

* every key of ``neural_metrics`` is a known metric and names that metric's model
  (:data:`mtboard.score.metrics.neural.MODELS`);
* every entry of ``results`` has ``plugin_metrics[<key>]``: a finite number on the 4-decimal grid; entries without
  usable output have :data:`~mtboard.score.metrics.neural.NO_OUTPUT_SCORE` (they are never sent to the model);
* no entry has a ``plugin_metrics`` key that ``neural_metrics`` lacks (plugin output is neural metrics only);
* ``n`` is the number of results and ``score`` is :func:`mtboard.score.metrics.neural.aggregate` of the per-entry values;
* ``signature`` is the one :func:`mtboard.score.metrics.neural.signature` builds from the record's fields.

The values themselves stay *claimed* (the site says so) until ``mtboard verify`` re-scores them.
"""

from __future__ import annotations

import math

from mtboard.score.metrics import neural
from mtboard.core.schema import Outcome, RunCard
from mtboard.validate.report import CardRun

CHECK = "neural"


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
            if r.checks.outcome != Outcome.usable and v != neural.NO_OUTPUT_SCORE:
                run.fail(CHECK, f"{key} value {v!r} on an entry without usable output (must be "
                                f"{neural.NO_OUTPUT_SCORE}: it is not sent to the model)", path)
                continue
            values.append(float(v))
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


__all__ = ["CHECK", "check_neural"]
