"""Judge reliability against people (issue 15, part 9): an anchor set of segments that professional translators
annotated with MQM, each judge's and chrF++'s agreement with them, and the record the site's judges page shows.

Anchor data: the public WMT MQM annotations (https://github.com/google/wmt-mqm-human-evaluation, Apache License 2.0;
Freitag et al. 2021, "Experts, Errors, and Context", arXiv:2104.14478). One TSV row per annotated error (or
``No-error``) with the columns ``system doc doc_id seg_id rater source target category severity comment``; the
erroneous span is marked ``<v>…</v>`` inside ``target``. The data is **not** part of mtboard: point the command at a
local copy (``mtboard anchor PATH``).

Segment MQM penalty (the repository README's weighting, the one its ``avg_seg_scores`` files use, as a positive
penalty): Major 5, Minor 1, Minor ``Fluency/Punctuation`` 0.1, ``Non-translation`` 25, summed per rater and averaged
over raters. Severity class of a cell: the worst severity any error has (none < minor < major < critical, where
``Non-translation`` counts as critical), which is also what a GEMBA-MQM verdict gives.

Meta-evaluation, the way the WMT metrics task reports segment level: Kendall's τ-b between a metric's segment scores
and the human penalty over every (system, segment) cell, without grouping (a metric where higher is better is
negated so that positive τ always means agreement); for judges also Cohen's κ on the severity class and a
character-level span F1 (the judge's quoted spans located in the target against the people's ``<v>`` spans). The
human reference translation (system ``ref`` / ``ref.A``) is the reference of chrF++ and is not itself scored.
"""

from __future__ import annotations

import asyncio
import csv
import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import canonical, safejson
from mtboard.core.errors import InputError
from mtboard.core.text import split_records
from mtboard.judges.base import REGISTRY, JudgeItem, load_judge_prompt, parse_judge_spec
from mtboard.judges.calls import Caller
from mtboard.judges.store import JudgeStore
from mtboard.core.schema import AnchorCellValue, AnchorFigures, AnchorRecord, AnchorSource
from mtboard.score.stats import cohen_kappa, kendall_tau_b

SEVERITY_ORDER = ("none", "minor", "major", "critical")
"""Severity classes, best first (Cohen's κ compares these labels)."""
REFERENCE_SYSTEMS = ("ref", "refA", "refB", "ref.A", "ref.B", "ref-A", "ref-B", "Human-A.0", "Human-B.0")
"""System names of the human translations in the WMT MQM files: never scored; the one named ``ref`` (else the first
found) is the chrF++ reference."""
_SPAN_RE = re.compile(r"<v>(.*?)</v>", re.S)
MAX_ANCHOR_BYTES = 64 * 1024 * 1024


def error_weight(severity: str, category: str) -> float:
    """The README's weight of one annotated error (0 for ``No-error``)."""
    sev = severity.strip().lower()
    cat = category.strip().lower()
    if cat.startswith("non-translation"):
        return 25.0
    if sev == "major":
        return 5.0
    if sev == "minor":
        return 0.1 if cat == "fluency/punctuation" else 1.0
    if sev == "critical":
        return 25.0
    return 0.0


def severity_class(severity: str, category: str) -> str:
    """The severity class of one annotated error ('none' for No-error, Neutral and the like)."""
    if category.strip().lower().startswith("non-translation") or severity.strip().lower() == "critical":
        return "critical"
    sev = severity.strip().lower()
    return sev if sev in ("minor", "major") else "none"


def worst(classes: Sequence[str]) -> str:
    return max(classes, key=SEVERITY_ORDER.index) if classes else "none"


@dataclass
class AnchorCell:
    """One (system, segment) cell of the anchor set."""

    system: str
    seg_id: int
    source: str
    target: str
    """The translation, span marks removed."""
    penalty: float
    """Human MQM penalty (mean over raters; lower is better)."""
    severity: str
    """Worst human severity class."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Character offsets of the people's error spans in ``target``."""

    @property
    def key(self) -> str:
        return f"{self.system}#{self.seg_id}"


@dataclass
class AnchorSet:
    path: str
    sha256: str
    cells: list[AnchorCell]
    references: dict[int, str]
    """Segment id → the human reference translation."""


def _strip_spans(marked: str) -> tuple[str, list[tuple[int, int]]]:
    out, spans, pos = [], [], 0
    for m in _SPAN_RE.finditer(marked):
        out.append(marked[pos:m.start()])
        start = sum(len(x) for x in out)
        out.append(m.group(1))
        spans.append((start, start + len(m.group(1))))
        pos = m.end()
    out.append(marked[pos:])
    return "".join(out).replace("<v>", "").replace("</v>", ""), spans


def load_wmt_mqm(path: str | Path) -> AnchorSet:
    """Read a WMT MQM TSV (see the module docstring) into cells.

    Raises: InputError when the file is not such a TSV (missing columns, a non-integer seg_id).
    """
    p = Path(path)
    raw = safejson.read_bytes(p, max_bytes=MAX_ANCHOR_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8", where=str(p)) from None
    # rows end at \n / \r\n only: U+2028, U+0085 … in a segment are text (issue 33 item 6), not row ends
    rows = list(csv.reader(split_records(text), delimiter="\t", quoting=csv.QUOTE_NONE))
    need = ("system", "seg_id", "rater", "source", "target", "category", "severity")
    if not rows or any(c not in rows[0] for c in need):
        raise InputError(f"not a WMT MQM TSV (header needs {', '.join(need)})", where=str(p))
    col = {name: rows[0].index(name) for name in need}
    per_rater: dict[tuple[str, int], dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    texts: dict[tuple[str, int], tuple[str, str, list[tuple[int, int]]]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) < len(rows[0]) - 1:
            continue  # a truncated line (the files end some rows without the comment column)
        try:
            seg = int(row[col["seg_id"]])
        except ValueError:
            raise InputError(f"line {n}: seg_id is not an integer", where=str(p)) from None
        key = (row[col["system"]], seg)
        per_rater[key][row[col["rater"]]].append((row[col["severity"]], row[col["category"]]))
        target, spans = _strip_spans(row[col["target"]])
        prev = texts.get(key)
        texts[key] = (row[col["source"]], target, sorted(set((prev[2] if prev else []) + spans)))
    references: dict[int, str] = {}
    for name in REFERENCE_SYSTEMS:  # "ref" first: the reference WMT scored the metrics against
        for (s, seg), (_, target, _) in texts.items():
            if s == name:
                references.setdefault(seg, target)
    cells = []
    for key in sorted(per_rater):
        system, seg = key
        if system in REFERENCE_SYSTEMS:
            continue
        raters = per_rater[key]
        penalty = statistics.fmean(sum(error_weight(s, c) for s, c in errs) for errs in raters.values())
        sev = worst([severity_class(s, c) for errs in raters.values() for s, c in errs])
        source, target, spans = texts[key]
        cells.append(AnchorCell(system, seg, source, target, penalty, sev, spans))
    return AnchorSet(path=str(p), sha256=canonical.sha256_hex(raw), cells=cells, references=references)


def select_cells(anchor: AnchorSet, n: int | None, seed: int = 20261201) -> list[AnchorCell]:
    """``n`` cells drawn without replacement with a fixed seed (all cells with a reference when ``n`` is None),
    in (system, segment) order."""
    pool = [c for c in anchor.cells if c.seg_id in anchor.references]
    if n is not None and n < len(pool):
        pool = random.Random(seed).sample(pool, n)
    return sorted(pool, key=lambda c: (c.system, c.seg_id))


def chrf_scores(cells: Sequence[AnchorCell], references: dict[int, str]) -> list[float]:
    """Sentence chrF++ of each cell's target against the segment's human reference (sacrebleu, 0–100)."""
    from mtboard.score.metrics.chrf import chrf_statistics, sentence_chrf_from_stats  # noqa: PLC0415 - sacrebleu

    stats = chrf_statistics([c.target for c in cells], [references[c.seg_id] for c in cells])
    return [sentence_chrf_from_stats(s) for s in stats]


def span_f1(target: str, judge_spans: Sequence[str], human: Sequence[tuple[int, int]]) -> tuple[int, int, int]:
    """(overlap, judge characters, human characters) of error spans in ``target``: each judge span is located at its
    first occurrence (spans not found in the target count as judge characters with no overlap)."""
    judge_chars: set[int] = set()
    missing = 0
    for s in judge_spans:
        s = s.strip()
        if not s:
            continue
        i = target.find(s)
        if i < 0:
            missing += len(s)
            continue
        judge_chars.update(range(i, i + len(s)))
    human_chars = {i for a, b in human for i in range(a, b)}
    return len(judge_chars & human_chars), len(judge_chars) + missing, len(human_chars)


def _f1(overlap: int, judged: int, human: int) -> float | None:
    if judged == 0 and human == 0:
        return None
    p = overlap / judged if judged else 0.0
    r = overlap / human if human else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def figures(cells: Sequence[AnchorCell], values: Sequence[float | None], *, higher_is_better: bool,
            severities: Sequence[str | None] | None = None,
            spans: Sequence[list[str] | None] | None = None) -> AnchorFigures:
    """Agreement of one metric or judge with the people over ``cells`` (``values[i]`` None = no value: a failed
    judgement, excluded and reported as coverage)."""
    idx = [i for i, v in enumerate(values) if v is not None]
    metric = [(-values[i] if higher_is_better else values[i]) for i in idx]  # type: ignore[operator]
    human = [cells[i].penalty for i in idx]
    kappa = None
    if severities is not None:
        pairs = [(severities[i], cells[i].severity) for i in idx if severities[i] is not None]
        kappa = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]) if pairs else None  # type: ignore[misc]
    f1 = None
    if spans is not None:
        tot = [0, 0, 0]
        for i in idx:
            if spans[i] is not None:
                o, j, h = span_f1(cells[i].target, spans[i], cells[i].spans)  # type: ignore[arg-type]
                tot = [tot[0] + o, tot[1] + j, tot[2] + h]
        f1 = _f1(*tot)
    sys_metric: dict[str, list[float]] = defaultdict(list)
    sys_human: dict[str, list[float]] = defaultdict(list)
    for i, m in zip(idx, metric):
        sys_metric[cells[i].system].append(m)
        sys_human[cells[i].system].append(cells[i].penalty)
    systems = sorted(sys_metric)
    return AnchorFigures(
        n_cells=len(cells), n_valued=len(idx), segment_kendall_tau=kendall_tau_b(metric, human),
        system_kendall_tau=kendall_tau_b([statistics.fmean(sys_metric[s]) for s in systems],
                                         [statistics.fmean(sys_human[s]) for s in systems]),
        severity_kappa=kappa, span_f1=f1)


def metric_record(anchor: AnchorSet, cells: list[AnchorCell], source: AnchorSource) -> AnchorRecord:
    """The chrF++ meta-evaluation record over ``cells`` (figures only: a metric recomputes, so its per-cell values
    are not kept)."""
    scores = chrf_scores(cells, anchor.references)
    return AnchorRecord(source=source, evaluator="chrF++", evaluator_kind="metric",
                        figures=figures(cells, scores, higher_is_better=True), cells=[])


async def judge_record_async(anchor: AnchorSet, cells: list[AnchorCell], source: AnchorSource, judge_spec: str, *,
                             workdir: Path, client_factory: Callable[[], Any], source_lang: str, target_lang: str,
                             max_attempts: int = 3, concurrency: int = 4,
                             max_tokens: int | None = None) -> AnchorRecord:
    """Judge every cell with an entry judge (``KIND=openai:MODEL``; the same prompts, parser and retries as a run's
    judging) and measure its agreement with the people. The judge never sees the system name."""
    from mtboard.judges.run import _judge_entry  # noqa: PLC0415 - the one per-entry judging loop

    spec = parse_judge_spec(judge_spec)
    cls = REGISTRY[spec.kind]
    if spec.kind == "checkpoints":
        raise InputError("the checkpoints judge needs a benchmark key, not MQM anchors", field="--judge",
                         fix="use gemba-mqm or rubric")
    prompt = load_judge_prompt(cls.prompt_name)
    client = client_factory()
    entered = hasattr(client, "__aenter__")
    if entered:
        client = await client.__aenter__() or client
    caller = Caller(spec, prompt.sha256, client, JudgeStore(workdir), max_tokens or cls.default_max_tokens, None)
    judge = cls()
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int, c: AnchorCell):
        item = JudgeItem(entry_id=i, source=c.source, translation=c.target, source_lang=source_lang,
                         target_lang=target_lang, reference=anchor.references.get(c.seg_id))
        async with sem:
            return await _judge_entry(judge, prompt, caller, item, max_attempts)

    try:
        verdicts = await asyncio.gather(*(one(i, c) for i, c in enumerate(cells)))
    finally:
        if entered:
            await client.__aexit__(None, None, None)
    values = [v.score if v.status == "scored" else None for v in verdicts]
    sev = [worst([e.severity for e in v.errors]) if v.status == "scored" and spec.kind == "gemba-mqm" else None
           for v in verdicts]
    spans = [[e.span for e in v.errors] if v.status == "scored" and spec.kind == "gemba-mqm" else None
             for v in verdicts]
    fig = figures(cells, values, higher_is_better=cls.higher_is_better,
                  severities=sev if spec.kind == "gemba-mqm" else None,
                  spans=spans if spec.kind == "gemba-mqm" else None)
    t = caller.tally
    fig = fig.model_copy(update={"parse_failure_rate": (t.unparsed / t.answers) if t.answers else None})
    return AnchorRecord(source=source, evaluator=f"{spec.kind}={spec.backend}:{spec.model}",
                        evaluator_kind=spec.kind, prompt_sha256=prompt.sha256, figures=fig,
                        cells=[AnchorCellValue(key=c.key, value=v, severity=s)
                               for c, v, s in zip(cells, values, sev)])


__all__ = ["AnchorCell", "AnchorSet", "SEVERITY_ORDER", "chrf_scores", "error_weight", "figures",
           "judge_record_async", "load_wmt_mqm", "metric_record", "select_cells", "severity_class", "span_f1"]
