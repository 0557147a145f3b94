"""The GitHub Actions matrix of a sweep (``mtboard sweep plan --json``; the plan job of
``.github/workflows/sweep.yml``).

GitHub runs at most 256 jobs per matrix ("Using a matrix for your jobs": "A matrix can generate a maximum of 256 jobs
per workflow run"), so the cells are cut into chunks of at most :data:`MAX_JOBS_PER_MATRIX`; the workflow runs one
chunk per dispatch (input ``chunk``), and every chunk's collect job adds its cards to the same pull request. Each
matrix entry carries only the cell id: the matrix job re-reads the sweep file from the dispatched commit and runs
``mtboard sweep run FILE --cell ID`` — nothing from a matrix value reaches a shell unquoted.
"""

from __future__ import annotations

import json
import math
from typing import Any

from mtboard.sweeps.estimate import SweepEstimate
from mtboard.sweeps.spec import Sweep

MAX_JOBS_PER_MATRIX = 256
"""GitHub Actions' limit on the jobs one matrix generates."""

PLAN_FORMAT = 1
"""Version of the ``sweep plan --json`` document."""


def chunks(ids: list[str], size: int = MAX_JOBS_PER_MATRIX) -> list[list[str]]:
    """``ids`` cut into consecutive chunks of at most ``size`` (the last may be shorter); ``[]`` for no ids.
    Raises: ValueError for a size below 1."""
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def plan_document(sweep: Sweep, est: SweepEstimate, *, chunk_size: int = MAX_JOBS_PER_MATRIX) -> dict[str, Any]:
    """The ``sweep plan --json`` document: the sweep's identity, the chunks (each a GitHub matrix,
    ``{"include": [{"cell": ID, …}]}``), every cell with its factors, ``mtboard run`` arguments and estimate, and the
    totals. Deterministic for a given sweep file, corpora, prompts, price table and tokenizer."""
    by_id = {c.cell.id: c for c in est.cells}
    cells = []
    for cell in sweep.cells:
        factors = {k: v for k, v in cell.factors().items()  # a cell without a corpus view: as before issue 40
                   if k not in ("arm", "history") or cell.arm is not None}
        cells.append({"id": cell.id, "index": cell.index, "lane": cell.lane, "factors": factors,
                      "method": cell.method, "run_args": cell.run_args(), "components": cell.components,
                      "estimate": by_id[cell.id].as_dict()})
    parts = chunks([c.id for c in sweep.cells], chunk_size)
    return {
        "format": PLAN_FORMAT, "sweep": sweep.name, "sweep_file": sweep.path.as_posix(), "sweep_sha256": sweep.sha256,
        "max_parallel": sweep.file.max_parallel, "chunk_size": chunk_size,
        "chunks": [{"chunk": i, "matrix": {"include": [{"cell": cid} for cid in ids]}} for i, ids in enumerate(parts)],
        "cells": cells, "totals": est.totals(),
    }


def finite(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, scalars) with every float that is not finite (an estimate that
    overflowed) replaced by ``None``, the JSON for "unknown" (issue 34 item 3: the plan's JSON held ``Infinity``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def strict_json(doc: Any, *, ensure_ascii: bool = False) -> str:
    """``doc`` as strict JSON (RFC 8259: no ``NaN``/``Infinity``; :func:`finite` first, then ``allow_nan=False`` as
    the guard), indented, keys sorted: the text of ``sweep plan --json`` and of the run's ``summary.json``."""
    return json.dumps(finite(doc), indent=2, sort_keys=True, ensure_ascii=ensure_ascii, allow_nan=False)


def plan_json(doc: dict[str, Any]) -> str:
    """The ``sweep plan --json`` text of :func:`plan_document`'s document (:func:`strict_json`)."""
    return strict_json(doc)


__all__ = ["MAX_JOBS_PER_MATRIX", "PLAN_FORMAT", "chunks", "finite", "plan_document", "plan_json", "strict_json"]
