"""The judges page as data (issue 15 part 9): per judge model its parse-failure rate and coverage on the board's
cards; agreement between two judges on the same cells (Cohen's κ on severity classes, Kendall τ-b on cell values);
and each evaluator's agreement with professional MQM annotators on an anchor set (``mtboard anchor`` records), next
to chrF++'s on the same cells.

Cells are the same when they are the same entry of the same dataset file with the identical output text, so two
cards judging one run (or two runs that happen to produce the same text) share them.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from mtboard.score import stats
from mtboard.core.schema import AnchorRecord
from mtboard.ledger.load import LoadedCard

SEVERITIES = ("none", "minor", "major", "critical")


@dataclass
class JudgeRow:
    kind: str
    model: str
    cards: int = 0
    cells: int = 0
    judged: int = 0
    failed: int = 0
    answers: int = 0
    unparsed: int = 0

    @property
    def coverage(self) -> float | None:
        return self.judged / self.cells if self.cells else None

    @property
    def parse_failure_rate(self) -> float | None:
        return self.unparsed / self.answers if self.answers else None


@dataclass
class PairRow:
    kind: str
    a: str
    b: str
    n: int
    kappa: float | None
    tau: float | None


@dataclass
class JudgesPage:
    judges: list[JudgeRow] = field(default_factory=list)
    board_pairs: list[PairRow] = field(default_factory=list)
    anchors: list[AnchorRecord] = field(default_factory=list)
    anchor_pairs: list[PairRow] = field(default_factory=list)


def _severity(verdict: Any) -> str:
    return max((e.severity for e in verdict.errors), key=SEVERITIES.index, default="none")


def _cell_key(lc: LoadedCard, entry_id: int, predicted: str) -> str:
    d = lc.card.dataset
    h = hashlib.sha256(" ".join(predicted.split()).encode("utf-8")).hexdigest()[:16]
    return f"{d.sha256[:16]}#{entry_id}#{h}"


def _pairs(kind: str, per_model: dict[str, dict[str, tuple[float, str | None]]]) -> list[PairRow]:
    out = []
    models = sorted(per_model)
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            common = sorted(set(per_model[a]) & set(per_model[b]))
            if not common:
                continue
            va = [per_model[a][k] for k in common]
            vb = [per_model[b][k] for k in common]
            sev = [(x[1], y[1]) for x, y in zip(va, vb) if x[1] is not None and y[1] is not None]
            kappa = stats.cohen_kappa([x for x, _ in sev], [y for _, y in sev]) if sev else None
            out.append(PairRow(kind, a, b, len(common), kappa, stats.kendall_tau_b([x[0] for x in va],
                                                                                  [y[0] for y in vb])))
    return out


def build_judges_page(cards: list[LoadedCard], anchors: list[AnchorRecord]) -> JudgesPage:
    page = JudgesPage()
    rows: dict[tuple[str, str], JudgeRow] = {}
    values: dict[str, dict[str, dict[str, tuple[float, str | None]]]] = defaultdict(lambda: defaultdict(dict))
    for lc in cards:
        for kind, summ in lc.card.judges.items():
            model = f"{summ.backend}:{summ.model}"
            row = rows.setdefault((kind, model), JudgeRow(kind, model))
            row.cards += 1
            row.cells += len(lc.card.results)
            row.judged += summ.n_scored + summ.n_not_sent
            row.failed += summ.n_failed
            row.answers += summ.n_answers or 0
            row.unparsed += summ.n_unparsed_answers or 0
            if kind == "checkpoints":
                continue
            for r in lc.card.results:
                v = r.judgements.get(kind)
                if v is not None and v.status == "scored" and v.score is not None:
                    sev = _severity(v) if kind == "gemba-mqm" else None
                    values[kind][model][_cell_key(lc, r.entry_id, r.predicted)] = (float(v.score), sev)
    page.judges = [rows[k] for k in sorted(rows)]
    for kind in sorted(values):
        page.board_pairs.extend(_pairs(kind, values[kind]))
    page.anchors = sorted(anchors, key=lambda a: (a.source.language_pair, a.evaluator_kind != "metric",
                                                  a.evaluator))
    by_source: dict[tuple[str, str], dict[str, dict[str, tuple[float, str | None]]]] = defaultdict(dict)
    for rec in anchors:
        if rec.evaluator_kind == "metric":
            continue
        by_source[(rec.source.sha256, rec.evaluator_kind)][rec.evaluator] = {
            c.key: (c.value, c.severity) for c in rec.cells if c.value is not None}
    for (_, kind), per_model in sorted(by_source.items()):
        page.anchor_pairs.extend(_pairs(kind, per_model))
    return page


__all__ = ["JudgeRow", "JudgesPage", "PairRow", "build_judges_page"]
