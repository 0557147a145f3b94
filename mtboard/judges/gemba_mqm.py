"""GEMBA-MQM with dialogue context: reference-free error annotation, strict parser, uncapped penalty.

Sources: Kocmi & Federmann, "GEMBA-MQM: Detecting Translation Quality Error Spans with GPT-4" (WMT 2023) for the
text annotation format and the MQM error inventory; ``../shared/spec/gemba-mqm-context-evaluation.txt`` for the
context extension (prior turns + current utterance, trailing ``contextBehavior:`` line) and the severity weights.

Answer format (every non-blank line, in this order; surrounding whitespace on a line is ignored)::

    Critical:
    no-error                          ← or one or more lines  <class> - "<span>"
    Major:
    <class> - "<span>"
    Minor:
    no-error
    contextBehavior: <label>          ← the last line

Penalty = Σ weights over **all** listed errors (minor 1, major 5, critical 25), **uncapped**. GEMBA's own parser
(``parse_mqm_answer``) differs on purpose in four ways we do not copy: it counts only the first 5 errors, caps the
penalty at 25, silently skips any line containing "no error"/"no-error" (so a span quoting those words is lost), and
accepts anything else (unknown headings, prose) by ignoring it. Here every deviation is a parse failure (fail closed).
Like GEMBA, a ``non-translation`` error always weighs as critical.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import ClassVar

from mtboard.judges.base import EntryJudge, JudgeItem, JudgeParseError, register, split_lines
from mtboard.core.schema import JudgeVerdict, MqmError

SEVERITY_WEIGHTS = {"critical": 25, "major": 5, "minor": 1}
"""Severity weights (GEMBA-MQM; context spec 'Severity Weights')."""

HEADINGS = (("Critical:", "critical"), ("Major:", "major"), ("Minor:", "minor"))

ERROR_CLASSES = frozenset({
    "accuracy/addition", "accuracy/mistranslation", "accuracy/omission", "accuracy/untranslated text",
    "fluency/character encoding", "fluency/grammar", "fluency/inconsistency", "fluency/punctuation",
    "fluency/register", "fluency/spelling",
    "style/awkward",
    "terminology/inappropriate for context", "terminology/inconsistent use",
    "locale convention/currency", "locale convention/date", "locale convention/name",
    "locale convention/telephone", "locale convention/time",
    "non-translation", "other",
})
"""The MQM inventory of the GEMBA-MQM prompt (categories/subcategories, lower case, exactly as listed there)."""

CONTEXT_BEHAVIORS = ("used_correctly", "missed_required_context", "ignored_irrelevant_context", "misused_context",
                     "unclear")
"""Context-behaviour labels (context spec). Entries without prior turns are told to answer ``unclear``; rates are
reported over entries with history only."""

_ERROR_RE = re.compile(r'^(?P<cls>[a-z][a-z /-]*?) - "(?P<span>.+)"$')
_CONTEXT_RE = re.compile(r"^contextBehavior: (?P<label>\S+)$")

MQM_WORST = 25.0
"""Penalty for entries not sent (no usable output, echoed source) and judge failures: one critical error. Judged
penalties are uncapped and can exceed it."""


def parse_mqm(text: str | None) -> JudgeVerdict:
    """Parse a GEMBA-MQM-context answer strictly.

    Returns: JudgeVerdict(status='scored', score=penalty (int-valued float ≥ 0, lower is better), errors, context_behavior).
    Raises: JudgeParseError with a one-line reason (empty answer, markdown, inline heading, missing/duplicate/out-of-order
    section, unknown class, malformed line, ``no-error`` mixed with errors, missing or non-final ``contextBehavior``,
    unknown label, trailing prose).
    """
    if text is None or not text.strip():
        raise JudgeParseError("empty answer")
    lines = split_lines(text)
    if not lines[-1].startswith("contextBehavior:"):
        if any(ln.startswith("contextBehavior:") for ln in lines):
            raise JudgeParseError("contextBehavior is not the last line (text follows it)")
        raise JudgeParseError(f"no contextBehavior line; last line is {lines[-1][:60]!r}")
    m = _CONTEXT_RE.match(lines[-1])
    if not m:
        raise JudgeParseError(f"malformed contextBehavior line {lines[-1][:60]!r}")
    label = m.group("label")
    if label not in CONTEXT_BEHAVIORS:
        raise JudgeParseError(f"unknown contextBehavior {label[:40]!r}")
    body = lines[:-1]
    if any(ln.startswith("contextBehavior:") for ln in body):
        raise JudgeParseError("more than one contextBehavior line")

    errors: list[MqmError] = []
    i = 0
    for heading, severity in HEADINGS:
        if i >= len(body):
            raise JudgeParseError(f"section {heading!r} missing")
        if body[i] != heading:
            got = body[i][:60]
            if heading.rstrip(":").lower() in got.lower():
                raise JudgeParseError(f"heading {heading!r} not alone on its line in the exact form (got {got!r})")
            raise JudgeParseError(f"expected heading {heading!r}, got {got!r}")
        i += 1
        section: list[str] = []
        while i < len(body) and body[i] not in ("Critical:", "Major:", "Minor:"):
            section.append(body[i])
            i += 1
        if not section:
            raise JudgeParseError(f"section {heading!r} is empty (write no-error)")
        if section == ["no-error"]:
            continue
        for line in section:
            if line == "no-error":
                raise JudgeParseError(f"section {heading!r} mixes no-error with errors")
            em = _ERROR_RE.match(line)
            if not em:
                raise JudgeParseError(f"malformed line in {heading!r}: {line[:60]!r}")
            cls = em.group("cls")
            if cls not in ERROR_CLASSES:
                raise JudgeParseError(f"unknown error class {cls[:40]!r}")
            sev = "critical" if cls == "non-translation" else severity
            errors.append(MqmError(severity=sev, category=cls, span=em.group("span")))
    if i != len(body):
        raise JudgeParseError(f"unexpected line {body[i][:60]!r}")
    penalty = float(sum(SEVERITY_WEIGHTS[e.severity] for e in errors))
    return JudgeVerdict(status="scored", score=penalty, errors=errors, context_behavior=label)


@register
class GembaMqmJudge(EntryJudge):
    """Reference-free GEMBA-MQM with dialogue context. Leaderboard value: mean penalty (lower is better)."""

    kind: ClassVar[str] = "gemba-mqm"
    prompt_name: ClassVar[str] = "gemba-mqm"
    default_max_tokens: ClassVar[int] = 512
    worst_score: ClassVar[float] = MQM_WORST
    higher_is_better: ClassVar[bool] = False
    parser_version: ClassVar[str] = "gemba-mqm-context/1 (uncapped)"

    def parse(self, text: str | None) -> JudgeVerdict:
        return parse_mqm(text)

    def summarize(self, judged: list[tuple[JudgeItem, JudgeVerdict]]) -> dict[str, dict[str, float]]:
        """Breakdown: error counts by severity and by class (over scored entries) and context-behaviour rates over
        scored entries that have prior turns (entries without history are told to answer ``unclear``)."""
        scored = [v for _, v in judged if v.status == "scored"]
        sev = Counter(e.severity for v in scored for e in v.errors)
        cls = Counter(e.category for v in scored for e in v.errors)
        out: dict[str, dict[str, float]] = {
            "severity": {k: float(sev.get(k, 0)) for k in ("critical", "major", "minor")},
            "class": {k: float(n) for k, n in sorted(cls.items())},
        }
        with_ctx = [v for item, v in judged if v.status == "scored" and item.history]
        if with_ctx:
            cb = Counter(v.context_behavior for v in with_ctx)
            out["context_behavior"] = {k: cb.get(k, 0) / len(with_ctx) for k in CONTEXT_BEHAVIORS}
            out["context_behavior"]["n"] = float(len(with_ctx))
        return out
