"""Judge admission (BookTrans write-up: a judge must pass known-answer items before its verdicts count; issue 39
item 5): a fixed set of known-answer items each per-entry judge (GEMBA-MQM, rubric) answers before it judges a
card; the result is recorded in the judge's summary (:class:`~mtboard.core.schema.JudgeAdmission`) and the board
counts only admitted judges (:func:`mtboard.ledger.tables.counted_judges`).

The item set (``admission-en-es.json`` beside this module, SHA-256 :data:`ADMISSION_SET_SHA256`): hand-made for
mtboard, not taken from a corpus or an anchor set — five English sentences, each with one correct Spanish
translation and one with a planted error (two wrong numbers, two negation flips, one untranslated copy of the
source). EN→ES because the judges' prompts are language-generic and the board's largest pair is EN→ES; a judge
that cannot tell these apart in a high-resource pair is not to be trusted in any.

Pass rule per item (:func:`item_passed`): a judge_failed verdict never passes. GEMBA-MQM — a correct translation
passes with no major or critical error (minor ones allowed: style is a matter of taste); a planted error passes
with at least one major or critical error. Rubric — a correct translation passes with adequacy ≥ 3 of 4; a planted
error with adequacy ≤ 2. Admission: at least :attr:`AdmissionSet.threshold` (9) of the 10 items passed — one slip
allowed, no more. The checkpoint judge has no admission here: its key is the benchmark's own and is judged per
document (recorded as absent).

The items are asked through a caller of their own: their answers are cached in ``WORKDIR/judge/cache.jsonl`` like
any judge answer (re-judging a card asks nothing again) and logged in ``WORKDIR/judge/KIND.admission.answers.jsonl``,
apart from the card's entries, so they count in no summary figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mtboard.core import canonical
from mtboard.core.errors import InputError
from mtboard.core.languages import language_name
from mtboard.core.schema import JudgeAdmission, JudgeVerdict
from mtboard.judges.base import JudgeItem

ADMISSION_SET_PATH = Path(__file__).with_name("admission-en-es.json")
"""The committed item set (package data)."""
ADMISSION_SET_SHA256 = "2dee296f52063f5b23f299a1ea0636e406843194c4e8bbae2fdf574650c14190"
"""SHA-256 of :data:`ADMISSION_SET_PATH`'s bytes: what a card's ``admission.set_sha256`` must be (the validator's
rule); a changed set needs a new constant (tests/test_judge_admission.py pins both)."""
ADMITTING_KINDS = ("gemba-mqm", "rubric")
"""The judges that take the admission check."""
RUBRIC_CLEAN_MIN_ADEQUACY = 3.0
"""Rubric: a correct translation passes with adequacy at least this (of 4); a planted error at most this − 1."""


@dataclass(frozen=True)
class AdmissionItem:
    """One known-answer item."""

    id: str
    expect: Literal["clean", "error"]
    source: str
    translation: str
    reference: str
    planted: str | None = None


@dataclass(frozen=True)
class AdmissionSet:
    """The fixed item set: its id, its file's SHA-256, the threshold and the items in file order."""

    id: str
    sha256: str
    threshold: int
    source_language: str
    target_language: str
    items: tuple[AdmissionItem, ...]

    def judge_items(self) -> list[JudgeItem]:
        """The items as a per-entry judge sees them (entry ids 1 … n in set order; no history)."""
        return [JudgeItem(entry_id=k, source=it.source, translation=it.translation,
                          source_lang=language_name(self.source_language),
                          target_lang=language_name(self.target_language), reference=it.reference)
                for k, it in enumerate(self.items, start=1)]


def load_pinned_admission_set(path: Path | None = None) -> AdmissionSet:
    """The item set a judge run asks (:func:`load_admission_set` of ``path``, default :data:`ADMISSION_SET_PATH`
    read at call time), refused unless its bytes hash to :data:`ADMISSION_SET_SHA256`: an edited set would record an
    admission the validator refuses, so the run stops before any request is paid for.
    Raises: InputError (unreadable, or SHA-256 not the pinned one)."""
    path = ADMISSION_SET_PATH if path is None else path
    aset = load_admission_set(path)
    if aset.sha256 != ADMISSION_SET_SHA256:
        raise InputError(f"judge admission set has SHA-256 {aset.sha256[:12]}…, not the pinned "
                         f"{ADMISSION_SET_SHA256[:12]}…", where=str(path),
                         fix="restore the file from the repository (a changed set needs a new ADMISSION_SET_SHA256)")
    return aset


def load_admission_set(path: Path = ADMISSION_SET_PATH) -> AdmissionSet:
    """Read the item set. Raises: InputError (unreadable, not JSON, a missing field, a threshold outside 1–items)."""
    try:
        raw = path.read_bytes()
        data: dict[str, Any] = json.loads(raw)
        items = tuple(AdmissionItem(id=x["id"], expect=x["expect"], source=x["source"], translation=x["translation"],
                                    reference=x["reference"], planted=x.get("planted")) for x in data["items"])
        out = AdmissionSet(id=data["id"], sha256=canonical.sha256_hex(raw), threshold=int(data["threshold"]),
                           source_language=data["source_language"], target_language=data["target_language"],
                           items=items)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"judge admission set unreadable: {type(exc).__name__}", where=str(path),
                         fix="restore the file from the repository") from None
    if not 1 <= out.threshold <= len(items) or any(it.expect not in ("clean", "error") for it in items):
        raise InputError("judge admission set: threshold outside 1–items or an item neither clean nor error",
                         where=str(path), fix="restore the file from the repository")
    return out


def item_passed(kind: str, item: AdmissionItem, verdict: JudgeVerdict) -> bool:
    """Whether ``verdict`` is the known answer to ``item`` for judge ``kind`` (module docstring's pass rule)."""
    if verdict.status != "scored":
        return False
    if kind == "gemba-mqm":
        serious = any(e.severity in ("major", "critical") for e in verdict.errors)
        return serious if item.expect == "error" else not serious
    if kind == "rubric":
        adequacy = verdict.subscores.get("adequacy")
        if adequacy is None:
            return False
        return adequacy < RUBRIC_CLEAN_MIN_ADEQUACY if item.expect == "error" else adequacy >= RUBRIC_CLEAN_MIN_ADEQUACY
    raise ValueError(f"judge {kind!r} takes no admission check")


def admission_record(kind: str, aset: AdmissionSet, verdicts: list[JudgeVerdict]) -> JudgeAdmission:
    """The card's record of one judge's admission from its verdicts on the set's items (same order)."""
    if len(verdicts) != len(aset.items):
        raise ValueError(f"{len(verdicts)} verdicts for {len(aset.items)} admission items")
    failed = [it.id for it, v in zip(aset.items, verdicts) if not item_passed(kind, it, v)]
    passed = len(aset.items) - len(failed)
    return JudgeAdmission(set_id=aset.id, set_sha256=aset.sha256, items=len(aset.items), passed=passed,
                          threshold=aset.threshold, admitted=passed >= aset.threshold, failed_items=failed)


def admission_problems(adm: JudgeAdmission) -> list[str]:
    """The validator's rules for one recorded admission, one line each (empty when consistent): the committed set
    (id, hash, item count, threshold), ``passed ≤ items``, ``failed_items`` = ``items − passed`` distinct ids of
    the set, ``admitted ⇔ passed ≥ threshold``."""
    aset = load_admission_set()
    out = []
    if adm.set_sha256 != ADMISSION_SET_SHA256 or adm.set_id != aset.id:
        out.append("admission.set_sha256/set_id is not the committed item set's "
                   f"({aset.id}, {ADMISSION_SET_SHA256[:12]}…)")
    if adm.items != len(aset.items) or adm.threshold != aset.threshold:
        out.append(f"admission.items/threshold must be the set's {len(aset.items)} / {aset.threshold}")
    if adm.passed > adm.items:
        out.append(f"admission.passed {adm.passed} is more than its {adm.items} items")
    ids = [it.id for it in aset.items]
    if (len(adm.failed_items) != adm.items - adm.passed or len(set(adm.failed_items)) != len(adm.failed_items)
            or any(x not in ids for x in adm.failed_items)):
        out.append(f"admission.failed_items must be the {max(0, adm.items - adm.passed)} distinct ids of the "
                   "set's items not passed")
    if adm.admitted != (adm.passed >= adm.threshold):
        out.append(f"admission.admitted must be {adm.passed >= adm.threshold}: passed {adm.passed}, threshold "
                   f"{adm.threshold}")
    return out


__all__ = ["ADMISSION_SET_PATH", "ADMISSION_SET_SHA256", "ADMITTING_KINDS", "AdmissionItem", "AdmissionSet",
           "admission_problems", "admission_record", "item_passed", "load_admission_set",
           "load_pinned_admission_set"]
