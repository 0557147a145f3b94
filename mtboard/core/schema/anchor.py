"""Judge reliability records (issue 15 part 9; ``mtboard anchor``, :mod:`mtboard.judges.reliability`): one evaluator's
agreement with professional MQM annotators on a human-annotated anchor set (``mtboard schema anchor-record``)."""

from __future__ import annotations

from typing import Literal

from mtboard.core.schema.common import Correlation, Count, Hex64, Rate, Strict


class AnchorSource(Strict):
    """Where the human anchor annotations came from (the data itself is never part of mtboard)."""

    repository: str
    """e.g. https://github.com/google/wmt-mqm-human-evaluation"""
    commit: str | None = None
    """Commit the file was read at, when known."""
    file: str
    """Path of the file inside the repository, e.g. ``ted/ende/mqm_ted_ende.tsv``."""
    sha256: Hex64
    """SHA-256 of the file read."""
    license: str
    """Licence of the annotations (SPDX), e.g. Apache-2.0."""
    citation: str | None = None
    language_pair: str
    """e.g. en-de."""
    selection: str
    """How the cells were chosen, e.g. '200 of 7,406 cells, seeded sample (seed 20261201)'."""


class AnchorFigures(Strict):
    """Agreement of one evaluator (a metric or a judge) with professional MQM annotators on the same cells."""

    n_cells: Count
    n_valued: Count
    """Cells the evaluator gave a value (a judge's failed judgements are excluded: coverage = n_valued / n_cells)."""
    segment_kendall_tau: Correlation | None
    """Kendall τ-b between the evaluator's cell values (oriented so that positive means agreement) and the human MQM
    penalties, over all cells (no grouping)."""
    system_kendall_tau: Correlation | None = None
    """Kendall τ-b between the systems' mean values and their mean human penalties."""
    severity_kappa: Correlation | None = None
    """Cohen's κ between the evaluator's worst severity class per cell and the people's (MQM judges)."""
    span_f1: Rate | None = None
    """Character-level F1 of the evaluator's error spans against the people's (MQM judges)."""
    parse_failure_rate: Rate | None = None
    """Judge answers that did not parse ÷ answers (judges)."""


class AnchorCellValue(Strict):
    key: str
    """``system#seg_id`` of the anchor cell."""
    value: float | None
    """The evaluator's value (None: a failed judgement)."""
    severity: str | None = None
    """Worst severity class the judge reported (MQM judges)."""


class AnchorRecord(Strict):
    """One evaluator's meta-evaluation on a human-annotated anchor set (``mtboard anchor``), read by the site's
    judges page. Holds numbers and cell keys only, never the annotated texts."""

    record_version: Literal[1] = 1
    source: AnchorSource
    evaluator: str
    """``chrF++`` or the judge spec ``KIND=backend:model``."""
    evaluator_kind: str
    """``metric`` or the judge kind (gemba-mqm, rubric)."""
    prompt_sha256: Hex64 | None = None
    """Judge prompt file hash (judges)."""
    figures: AnchorFigures
    cells: list[AnchorCellValue]
    """Per cell value, so two evaluators on the same cells can be compared with each other."""
    harness_version: str | None = None
    created: str | None = None
    """ISO 8601 UTC time the record was made."""
