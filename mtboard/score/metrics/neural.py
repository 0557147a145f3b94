"""Neural MT metrics — COMET-22, CometKiwi, xCOMET — scored per segment by ``unbabel-comet`` in its own environment
(docs/neural_metrics.md; spec §3.7 ``plugin_metrics``: "complete per-entry plugin output"; spec §4.2 and
docs/SCORING_SPEC.md: COMET is excluded from the composite).

Why a separate environment: every ``unbabel-comet`` release (2.2.7 the latest) requires ``huggingface-hub<1.0``,
``numpy<2.0`` and ``transformers<5`` (itself ``huggingface-hub<1.0``), while mtboard requires
``huggingface_hub>=1.0`` — pip answers ``ResolutionImpossible`` for ``mtboard[comet]``. So the scoring runs in
``.venv-comet`` (``scripts/setup.sh --comet``; hashed lock ``requirements/comet.txt``), as the script
:mod:`mtboard.score.metrics.comet_worker` that mtboard starts with that environment's Python (:func:`comet_python`) and talks
to in JSON files. Nothing of torch/transformers is imported into mtboard's own process.

What a score is: the model ``repo_id`` at a pinned ``revision`` (a 40-hex commit; fetched with huggingface_hub's
``snapshot_download``, so ``HF_HUB_CACHE`` / ``HF_HUB_OFFLINE`` apply), ``comet.load_from_checkpoint`` on its
``checkpoints/model.ckpt``, ``model.predict`` with the recorded batch size on the recorded device. Each segment's
score is rounded to :data:`NEURAL_DECIMALS` decimals; the card's aggregate is the mean of those rounded values over
every entry (entries without usable output are not sent to the model and count :data:`NO_OUTPUT_SCORE`), computed
in integer units of the last decimal so the validator re-derives it exactly (:func:`aggregate`). The identity of a
value — model, revision, encoder, batch size, device, package versions — is the :func:`signature` string (in the
manner of sacrebleu's).

Scores are not recomputed by ``mtboard validate`` (gigabytes of weights, minutes of GPU): the validator checks their
shape, the signature and the aggregate arithmetic (:mod:`mtboard.validate.neural`) and the site shows them as
*claimed*; ``mtboard verify`` re-scores them when a card has them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from mtboard.core.errors import BackendError, ConfigError
from mtboard.core.runtime import runtime

NEURAL_DECIMALS = 4
"""Per-segment scores are rounded to this many decimals (the unit of :func:`aggregate`)."""
UNITS = 10 ** NEURAL_DECIMALS
NO_OUTPUT_SCORE = 0.0
"""Value of an entry without usable output (not sent to the model): the bottom of the 0–1 scale COMET-22, CometKiwi
and xCOMET are trained to (a raw COMET score can fall slightly outside it)."""
DEFAULT_PYTHON = Path(".venv-comet") / "bin" / "python"
"""The COMET environment's Python when none is given (what ``scripts/setup.sh --comet`` creates), looked for under
the current folder, then under the checkout mtboard is installed from."""
WORKER = Path(__file__).with_name("comet_worker.py")
"""The worker script run in the COMET environment."""
DEVICES = ("cpu", "cuda")
DEFAULT_BATCH_SIZE = 16
"""comet-score's default batch size."""


@dataclass(frozen=True)
class NeuralModel:
    """One neural metric: its card key, Hugging Face model and pinned revision.

    ``revision``: a commit id of the model repository. The defaults were read off public code that loads these models
    from huggingface_hub snapshot folders (``models--Unbabel--…/snapshots/<commit>/checkpoints/model.ckpt``); they
    could not be checked against the Hub from where they were written down (no Hub access): a real run prints the
    commit the revision resolved to, and ``--revision`` overrides it (docs/neural_metrics.md)."""

    key: str
    repo_id: str
    revision: str
    needs_reference: bool
    label: str
    licence: str


MODELS: dict[str, NeuralModel] = {
    "comet22": NeuralModel("comet22", "Unbabel/wmt22-comet-da", "2760a223ac957f30acfb18c8aa649b01cf1d75f2", True,
                           "COMET-22", "Apache-2.0"),
    "cometkiwi": NeuralModel("cometkiwi", "Unbabel/wmt22-cometkiwi-da", "b3a8aea5a5fc22db68a554b92b3d96eb6ea75cc9",
                             False, "CometKiwi-22 (reference-free)", "CC-BY-NC-SA-4.0 (gated: accept on the Hub)"),
    "xcomet": NeuralModel("xcomet", "Unbabel/XCOMET-XL", "6a123c5e8e6dccab25e5fcffa3c8b417abadb462", True,
                          "xCOMET-XL", "CC-BY-NC-SA-4.0 (gated: accept on the Hub)"),
}
"""The metrics ``--neural-metric`` accepts. MetricX (Google) has no package on PyPI (the ``metricx`` project there is
an unrelated benchmark-data library) and is left out (docs/neural_metrics.md)."""


def parse_revisions(specs: list[str] | None, option: str = "--neural-revision") -> dict[str, str]:
    """``KEY=COMMIT`` options → {key: commit}. Raises: ConfigError for a malformed one or an unknown key."""
    out: dict[str, str] = {}
    for spec in specs or []:
        key, sep, rev = spec.partition("=")
        key, rev = key.strip(), rev.strip()
        if not sep or key not in MODELS or not rev:
            raise ConfigError(f"bad revision {spec!r}", field=option,
                              fix=f"use KEY=COMMIT with KEY one of {', '.join(MODELS)}")
        out[key] = rev
    return out


def parse_metrics(specs: Sequence[str]) -> list[str]:
    """Metric keys from ``--neural-metric`` values (repeatable or comma-separated), in order, without repeats.

    Raises: ConfigError naming the unknown key and the known ones."""
    out: list[str] = []
    for spec in specs:
        for key in (k.strip() for k in spec.split(",")):
            if not key:
                continue
            if key not in MODELS:
                raise ConfigError(f"unknown neural metric {key!r}", field="--neural-metric",
                                  fix=f"use one of {', '.join(MODELS)}")
            if key not in out:
                out.append(key)
    return out


def units(value: float) -> int:
    """A rounded segment score as an integer number of 1/UNITS."""
    return round(value * UNITS)


def aggregate(values: Sequence[float]) -> float | None:
    """The card's aggregate of per-entry scores: the mean of the (already rounded) values, rounded to
    :data:`NEURAL_DECIMALS` decimals, computed exactly on integers with fractions (ties to even). None for no entries."""
    if not values:
        return None
    return round(Fraction(sum(units(v) for v in values), len(values))) / UNITS

def signature(key: str, *, repo_id: str, revision: str, encoder: str, batch_size: int, device: str,
              versions: dict[str, str]) -> str:
    """The identity of a neural score, sacrebleu-style: ``comet22|model:Unbabel/wmt22-comet-da|rev:<40 hex>|
    encoder:xlm-roberta-large|bs:16|device:cpu|comet:2.2.7|torch:…|transformers:…|hub:…|dp:4``."""
    v = versions
    return (f"{key}|model:{repo_id}|rev:{revision}|encoder:{encoder}|bs:{batch_size}|device:{device}"
            f"|comet:{v.get('unbabel-comet', '?')}|torch:{v.get('torch', '?')}"
            f"|transformers:{v.get('transformers', '?')}|hub:{v.get('huggingface-hub', '?')}|dp:{NEURAL_DECIMALS}")


@dataclass(frozen=True)
class NeuralRun:
    """One metric over a list of segments.

    ``scores``: per segment, rounded to :data:`NEURAL_DECIMALS` (:data:`NO_OUTPUT_SCORE` where the hypothesis was
    None); ``raw_scores``: the model's unrounded values (None where not sent); ``score``: :func:`aggregate`;
    ``system_score``: COMET's own mean over the segments it scored (unrounded, for cross-checks)."""

    key: str
    repo_id: str
    revision: str
    commit: str
    encoder: str
    batch_size: int
    device: str
    versions: dict[str, str]
    scores: list[float]
    raw_scores: list[float | None]
    score: float | None
    system_score: float | None

    @property
    def signature(self) -> str:
        return signature(self.key, repo_id=self.repo_id, revision=self.commit, encoder=self.encoder,
                         batch_size=self.batch_size, device=self.device, versions=self.versions)


def comet_python(explicit: str | os.PathLike[str] | None = None) -> str:
    """The COMET environment's Python: ``explicit``, else the run-time configuration's ``comet_python``
    (``MTBOARD_COMET_PYTHON`` of the running command, :mod:`mtboard.core.runtime`), else :data:`DEFAULT_PYTHON`.

    Raises: ConfigError when none exists (fix: ``scripts/setup.sh --comet``)."""
    given = explicit or runtime().comet_python
    if given:
        p = Path(given)
    else:  # the current folder, then the checkout of an editable install (mtboard/score/metrics/neural.py → repo root)
        p = next((c for c in (DEFAULT_PYTHON, Path(__file__).resolve().parents[3] / DEFAULT_PYTHON) if c.exists()),
                 DEFAULT_PYTHON)
    if not p.exists():
        raise ConfigError(f"no COMET environment at {p}",
                          fix="create it with scripts/setup.sh --comet, or set MTBOARD_COMET_PYTHON to the Python "
                              "of an environment with unbabel-comet (docs/neural_metrics.md)")
    return str(p)


def score_segments(key: str, sources: Sequence[str], hypotheses: Sequence[str | None],
                   references: Sequence[str] | None = None, *, revision: str | None = None,
                   repo_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "cpu",
                   python: str | os.PathLike[str] | None = None, timeout_s: float | None = None) -> NeuralRun:
    """Score segments with neural metric ``key`` (:data:`MODELS`) in the COMET environment.

    Args:
        key: ``comet22``, ``cometkiwi`` or ``xcomet``.
        sources, hypotheses, references: aligned lists; a None hypothesis (no usable output) is not sent and scores
            :data:`NO_OUTPUT_SCORE`; references are required unless the model is reference-free.
        revision: commit id of the model repository (default: the pinned one in :data:`MODELS`).
        repo_id: the model repository (default :data:`MODELS`' one; tests point it at a tiny local model).
        batch_size, device: passed to ``model.predict`` (``cpu`` or ``cuda``) and recorded.
        python: the COMET environment's Python (default :func:`comet_python`).
        timeout_s: wall-clock limit for the worker (None: none).

    Returns: :class:`NeuralRun`. Raises: ConfigError for an unknown key, a revision that is not a 40-hex commit, a
    missing reference list, a bad device or batch size, or no COMET environment; BackendError when the worker fails (its last stderr lines in the message).
    """
    if key not in MODELS:
        raise ConfigError(f"unknown neural metric {key!r}", field="--neural-metric", fix=f"use one of {', '.join(MODELS)}")
    m = MODELS[key]
    if device not in DEVICES:
        raise ConfigError(f"unknown device {device!r}", field="--neural-device", fix="use cpu or cuda")
    if batch_size < 1:
        raise ConfigError(f"batch size {batch_size} is below 1", field="--neural-batch-size", fix="use 1 or more")
    if m.needs_reference and references is None:
        raise ConfigError(f"{key} needs references", field="references", fix="pass the corpus references")
    if len(hypotheses) != len(sources) or (references is not None and len(references) != len(sources)):
        raise ConfigError("sources, hypotheses and references differ in length", field="segments",
                          fix="pass aligned lists")
    rev = revision or m.revision
    if not re.fullmatch(r"[0-9a-f]{40}", rev):
        raise ConfigError(f"revision {rev!r} of {key} is not a commit", field="--neural-revision",
                          fix="pass the model repository's 40-hex commit id (a branch or tag can move)")
    sent = [i for i, h in enumerate(hypotheses) if h is not None]
    samples = []
    for i in sent:
        s = {"src": sources[i], "mt": hypotheses[i]}
        if m.needs_reference:
            s["ref"] = references[i]  # type: ignore[index]
        samples.append(s)
    raw: list[float | None] = [None] * len(sources)
    result: dict = {"versions": {}, "commit": rev, "pretrained_model": "?", "system_score": None}
    if samples:
        result = _run_worker(comet_python(python), {"repo_id": repo_id or m.repo_id, "revision": rev,
                                                    "samples": samples, "batch_size": batch_size, "device": device},
                             timeout_s)
        if len(result.get("scores", [])) != len(samples):
            raise BackendError(f"the COMET worker returned {len(result.get('scores', []))} scores for "
                               f"{len(samples)} segments", field=key, fix="report this as a bug")
        for i, v in zip(sent, result["scores"]):
            raw[i] = float(v)
    rounded = [round(v, NEURAL_DECIMALS) if v is not None else NO_OUTPUT_SCORE for v in raw]
    return NeuralRun(key=key, repo_id=repo_id or m.repo_id, revision=rev, commit=str(result["commit"]),
                     encoder=str(result.get("pretrained_model")), batch_size=batch_size, device=device,
                     versions=dict(result.get("versions", {})), scores=rounded, raw_scores=raw,
                     score=aggregate(rounded), system_score=result.get("system_score"))


def _run_worker(python: str, request: dict, timeout_s: float | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="mtboard-comet-") as tmp:
        req, res = Path(tmp) / "request.json", Path(tmp) / "result.json"
        req.write_text(json.dumps(request), encoding="utf-8")
        try:
            proc = subprocess.run([python, str(WORKER), str(req), str(res)], capture_output=True, text=True,
                                  timeout=timeout_s, stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            raise BackendError(f"the COMET worker ran past {timeout_s} s", field=request["repo_id"],
                               fix="raise the timeout or score fewer segments") from None
        except OSError as exc:
            raise ConfigError(f"cannot start the COMET environment's Python: {exc}", where=python,
                              fix="scripts/setup.sh --comet, or set MTBOARD_COMET_PYTHON to another environment's "
                                  "Python") from None
        if proc.returncode != 0 or not res.is_file():
            tail = " | ".join(line for line in proc.stderr.strip().splitlines()[-3:])
            raise BackendError(f"the COMET worker failed (exit {proc.returncode}): {tail}",
                               field=f"{request['repo_id']}@{request['revision']}",
                               fix="check the model id and revision, HF_TOKEN for gated models, and "
                                   "HF_HUB_OFFLINE / the Hugging Face cache (docs/neural_metrics.md)")
        return json.loads(res.read_text(encoding="utf-8"))


__all__ = ["DEFAULT_BATCH_SIZE", "MODELS", "NEURAL_DECIMALS", "NO_OUTPUT_SCORE", "NeuralModel", "NeuralRun",
           "aggregate", "comet_python", "parse_metrics", "parse_revisions", "score_segments", "signature", "units"]
