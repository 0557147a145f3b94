"""Rubric judge (JA→EN write-up, ``../shared/spec/screen-translator-bench-ja-en.txt``, section "Judge").

The judge scores a translation against a reference that is "one valid reading, not the answer" on three axes and
returns flags and a one-line justification; it never sees the model name. Answer format (exactly five non-blank
lines, in this order)::

    adequacy: <0-4>
    pragmatics: <0-4>
    fluency: <0-2>
    flags: none | FLAG, FLAG, …
    justification: <one line>

Entry score = adequacy + pragmatics + fluency (0–10, higher is better). Items not sent (no usable output, echoed
source) and judge failures score 0 (the write-up: "Items a model failed to produce score 0").
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, ClassVar

from mtboard.judges.base import EntryJudge, JudgeItem, JudgeParseError, register, split_lines
from mtboard.core.schema import JudgeVerdict

AXES = (("adequacy", 4), ("pragmatics", 4), ("fluency", 2))
"""Axis name and maximum (adequacy 0–4: meaning; pragmatics 0–4: intent, voice, politeness, implication, humour;
fluency 0–2: natural target language)."""

FLAGS = {
    "IDIOM": "an idiom or set phrase translated literally or lost",
    "NEG": "a negation lost, added or flipped",
    "AGENT": "who does what to whom changed (agent/patient, buyer/seller swapped)",
    "KEIGO": "politeness or honorific level wrong (keigo, tu/vous, du/Sie)",
    "OMIT": "content of the source left out",
    "ADD": "content added that is not in the source",
    "REFUSAL": "the output refuses, asks a question or comments instead of translating",
    "NUMBER": "a number, date, unit or amount wrong",
    "NAME": "a name or term mistranslated or transliterated wrongly",
    "UNTRANSLATED": "source-language text left in the output",
    "REGISTER": "register or tone wrong for the setting (too formal, too casual, slang)",
    "GENDER": "grammatical or referential gender wrong",
    "TENSE": "tense, aspect or mood changed",
}
"""Allowed flags and their meaning (the write-up lists IDIOM, NEG, AGENT, KEIGO, OMIT, ADD, REFUSAL "and others";
the others are documented here and in the prompt)."""

_AXIS_RE = re.compile(r"^(?P<name>[a-z]+): (?P<value>[0-9])$")
_FLAG_TOKEN_RE = re.compile(r"^[A-Z]+$")

RUBRIC_WORST = 0.0


def parse_rubric(text: str | None) -> JudgeVerdict:
    """Parse a rubric answer strictly.

    Returns: JudgeVerdict(status='scored', score=total 0–10, subscores {adequacy, pragmatics, fluency}, flags,
    justification).
    Raises: JudgeParseError (empty, wrong line count/order, value out of range, unknown or duplicate flag,
    ``none`` mixed with flags, empty or multi-line justification, trailing prose).
    """
    if text is None or not text.strip():
        raise JudgeParseError("empty answer")
    lines = split_lines(text)
    if len(lines) != 5:
        raise JudgeParseError(f"expected exactly 5 lines (adequacy, pragmatics, fluency, flags, justification), "
                              f"got {len(lines)}")
    subs: dict[str, float] = {}
    for (name, top), line in zip(AXES, lines[:3]):
        m = _AXIS_RE.match(line)
        if not m or m.group("name") != name:
            raise JudgeParseError(f"expected '{name}: 0-{top}', got {line[:60]!r}")
        value = int(m.group("value"))
        if value > top:
            raise JudgeParseError(f"{name} {value} out of range 0-{top}")
        subs[name] = float(value)
    if not lines[3].startswith("flags: "):
        raise JudgeParseError(f"expected 'flags: …', got {lines[3][:60]!r}")
    raw_flags = lines[3][len("flags: "):].strip()
    flags: list[str] = []
    if raw_flags != "none":
        for tok in (t.strip() for t in raw_flags.split(",")):
            if not _FLAG_TOKEN_RE.match(tok):
                raise JudgeParseError(f"malformed flag {tok[:30]!r} (write none or FLAG, FLAG)")
            if tok not in FLAGS:
                raise JudgeParseError(f"unknown flag {tok[:30]!r}")
            if tok in flags:
                raise JudgeParseError(f"duplicate flag {tok!r}")
            flags.append(tok)
    if not lines[4].startswith("justification: ") or not lines[4][len("justification: "):].strip():
        raise JudgeParseError(f"expected 'justification: <one line>', got {lines[4][:60]!r}")
    justification = lines[4][len("justification: "):].strip()
    return JudgeVerdict(status="scored", score=float(sum(subs.values())), subscores=subs, flags=flags,
                        justification=justification)


@register
class RubricJudge(EntryJudge):
    """Reference-guided rubric judge. Leaderboard value: mean total 0–10 (higher is better)."""

    kind: ClassVar[str] = "rubric"
    prompt_name: ClassVar[str] = "rubric"
    default_max_tokens: ClassVar[int] = 256
    worst_score: ClassVar[float] = RUBRIC_WORST
    higher_is_better: ClassVar[bool] = True
    parser_version: ClassVar[str] = "rubric/1"

    def variables(self, item: JudgeItem) -> dict[str, Any]:
        return {**super().variables(item), "reference": item.reference or "", "flags": FLAGS}

    def parse(self, text: str | None) -> JudgeVerdict:
        return parse_rubric(text)

    def summarize(self, judged: list[tuple[JudgeItem, JudgeVerdict]]) -> dict[str, dict[str, float]]:
        """Breakdown: mean of each axis and flag rates, over scored entries."""
        scored = [v for _, v in judged if v.status == "scored"]
        out: dict[str, dict[str, float]] = {}
        if scored:
            out["axis_mean"] = {name: sum(v.subscores[name] for v in scored) / len(scored) for name, _ in AXES}
            fl = Counter(f for v in scored for f in v.flags)
            out["flag_rate"] = {f: fl.get(f, 0) / len(scored) for f in sorted(fl)}
        return out
