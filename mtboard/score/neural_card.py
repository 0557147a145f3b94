"""Neural metrics on a finished card (``mtboard neural WORKDIR``, ``mtboard run --neural-metric``): score the stored
outputs with :mod:`mtboard.score.metrics.neural` and re-seal the card with ``results[].plugin_metrics[<key>]`` (spec §3.7)
and ``neural_metrics[<key>]`` (docs/neural_metrics.md).

Which text is scored: the card's ``predicted`` (after the mechanical policy) against ``source`` and ``expected``, for
the entries of ``results`` (run 0; replicate runs are not scored). Entries whose mechanical outcome is not ``usable``
are not sent and count :data:`~mtboard.score.metrics.neural.NO_OUTPUT_SCORE`. The fingerprint does not change (neural
metrics are no component of it): the card is re-sealed only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from mtboard.core import documents
from mtboard.score.metrics import neural
from mtboard.core.schema import NeuralMetric, Outcome, RunCard


def neural_record(run: neural.NeuralRun) -> NeuralMetric:
    """The card's record of one :class:`~mtboard.score.metrics.neural.NeuralRun`."""
    return NeuralMetric(model=run.repo_id, commit=run.commit, encoder=run.encoder, batch_size=run.batch_size,
                        device=run.device, versions=run.versions, n=len(run.scores),
                        score=run.score if run.score is not None else 0.0, signature=run.signature)


def hypotheses(card: RunCard) -> list[str | None]:
    """What is sent to the model per entry of ``results``: ``predicted`` for usable outputs, None otherwise."""
    return [r.predicted if r.checks.outcome == Outcome.usable else None for r in card.results]


def apply_neural(card: RunCard, runs: Sequence[neural.NeuralRun]) -> RunCard:
    """A new sealed card with each run's per-entry scores in ``plugin_metrics`` and its record in
    ``neural_metrics`` (replacing an earlier value of the same key).

    Raises: ValueError when a run does not have one score per entry of ``results``."""
    data = json.loads(card.model_dump_json())
    for run in runs:
        if len(run.scores) != len(card.results):
            raise ValueError(f"{run.key}: {len(run.scores)} scores for {len(card.results)} results")
        for r, v in zip(data["results"], run.scores):
            r.setdefault("plugin_metrics", {})[run.key] = v
        data.setdefault("neural_metrics", {})[run.key] = json.loads(neural_record(run).model_dump_json())
    new = RunCard.model_validate_json(json.dumps(data)).model_copy(update={"run_card_hash": ""})
    return documents.seal(new)


def score_card(card: RunCard, keys: Sequence[str], *, revisions: dict[str, str] | None = None,
               batch_size: int = neural.DEFAULT_BATCH_SIZE, device: str = "cpu",
               python: str | os.PathLike[str] | None = None, repo_ids: dict[str, str] | None = None,
               timeout_s: float | None = None) -> RunCard:
    """Score ``card``'s outputs with each neural metric in ``keys`` and return the re-sealed card.

    ``revisions`` / ``repo_ids``: per key, overriding the pinned defaults (:data:`mtboard.score.metrics.neural.MODELS`).
    Raises: what :func:`mtboard.score.metrics.neural.score_segments` raises."""
    srcs = [r.source for r in card.results]
    refs = [r.expected for r in card.results]
    hyps = hypotheses(card)
    runs = [neural.score_segments(k, srcs, hyps, refs, revision=(revisions or {}).get(k),
                                  repo_id=(repo_ids or {}).get(k), batch_size=batch_size, device=device,
                                  python=python, timeout_s=timeout_s) for k in keys]
    return apply_neural(card, runs)


__all__ = ["apply_neural", "hypotheses", "neural_record", "score_card"]
