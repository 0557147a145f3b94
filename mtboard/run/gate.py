"""The early gate of a prompted run (issue 22): stop after the first few entries when the model plainly does not
follow the prompt, instead of translating the whole corpus for a score of 2.

Modelled on the gguf backend's canary (JA→EN write-up: "5 fixed lines must each give a visible translation";
:func:`mtboard.backends.gguf.canary_verdict`), but for every prompted backend and on the run's own first entries:
when at least :data:`GATE_FAILURES` of the first :data:`GATE_ENTRIES` finished entries hit the token cap
(``error_kind`` ``token_cap``) or echo chat-template markup (:data:`TEMPLATE_MARKUP`: a base model continuing a
template it does not know, e.g. ``[INST] <<SYS>>`` from llama-cpp-python's Llama-2 fallback template), the run stops
with :class:`EarlyGateError` suggesting the completion prompt. Entries already translated stay in the work
directory; ``--no-early-gate`` re-runs the same command past the gate (to publish the mismatch as a negative result).
"""

from __future__ import annotations

from collections.abc import Iterable

from mtboard.core.errors import BackendError
from mtboard.core.text import TEMPLATE_MARKUP
from mtboard.core.schema import ErrorKind, TranslationRecord

GATE_ENTRIES = 5
"""Finished entries the gate looks at (the first ones, in the order they finished)."""
GATE_FAILURES = 3
"""Entries of the first :data:`GATE_ENTRIES` that must fail the gate for the run to stop (most of them)."""

class EarlyGateError(BackendError):
    """Most of the first entries hit the token cap or echoed template markup: the run stopped early."""


def template_markup(text: str | None) -> str | None:
    """The first :data:`TEMPLATE_MARKUP` token found in ``text``, or None."""
    if not text:
        return None
    return next((m for m in TEMPLATE_MARKUP if m in text), None)


def gate_reason(record: TranslationRecord) -> str | None:
    """Why one finished entry fails the gate (``"token cap"``, ``"template markup '[INST]'"``), or None."""
    mark = template_markup(record.raw_predicted)
    if mark is not None:
        return f"template markup {mark!r}"
    if record.error_kind == ErrorKind.token_cap:
        return "token cap"
    return None


def check_early_gate(records: Iterable[TranslationRecord], *, prompt_name: str | None, prompt_format: str,
                     max_tokens: int | None) -> None:
    """Apply the gate to the first :data:`GATE_ENTRIES` of ``records`` (in the order they finished); nothing when
    fewer have finished.

    Raises: EarlyGateError (one line: how many failed and why, the prompt; the fix names the completion prompt,
        ``--max-tokens`` and ``--no-early-gate``).
    """
    first = list(records)[:GATE_ENTRIES]
    if len(first) < GATE_ENTRIES:
        return
    reasons = [why for why in (gate_reason(r) for r in first) if why is not None]
    if len(reasons) < GATE_FAILURES:
        return
    caps = sum(1 for why in reasons if why == "token cap")
    marks = sorted({m for m in (template_markup(r.raw_predicted) for r in first) if m is not None})
    what = []
    if len(reasons) > caps:
        what.append(f"{len(reasons) - caps} echoed chat-template markup ({', '.join(marks)})")
    if caps:
        what.append(f"{caps} hit the token cap ({max_tokens} tokens)")
    raise EarlyGateError(
        f"early gate: {len(reasons)} of the first {len(first)} entries failed ({'; '.join(what)}): the model does "
        f"not follow the {prompt_format} prompt {prompt_name!r}; stopped before translating the rest",
        where="run", field="--prompt",
        fix="for a base (non-chat) model use a completion prompt (--prompt few-shot-completion); for a model that "
            "thinks at length raise --max-tokens; to publish this mismatch as a result, re-run the same command "
            "with --no-early-gate (finished entries are kept)")


__all__ = ["GATE_ENTRIES", "GATE_FAILURES", "TEMPLATE_MARKUP", "EarlyGateError", "template_markup", "gate_reason",
           "check_early_gate"]
