"""Tool pipelines in a card (spec §3.2 ``tools_enabled``, ``fst_version``; §3.5 ``tool_call_count``; §9.6 class
``pipeline``; issue 18), reported under the ``method`` check — see :mod:`mtboard.run.fst_gate` for what the FST gate
does.

Rules (each problem one line naming the field):

* ``tools_enabled`` holds known tool names (:data:`mtboard.inputs.tools.TOOLS`), sorted and distinct, and only for a
  backend that can run tools (``Backend.accepts_tools``: prompted LLM backends; never Apertium or a baseline).
* With ``fst-gate``: ``fst_version`` is set (the analyser that gated and scored), ``method.fst_retries`` is set, in
  0–5, and equals the fingerprint's ``fst_retries`` component (the retry limit is part of the experiment), the
  prompt declares ``fst_feedback``; ``method_class`` is ``pipeline`` (checked with the class rule of
  :meth:`mtboard.backends.base.Backend.method_class_for`).
* Without tools: ``method.fst_retries`` is absent and every entry's ``tool_call_count`` is 0.
* Per entry with ``fst-gate`` and retry limit N (results and replicate results): 0 ≤ ``tool_call_count`` ≤ N+1;
  an entry with usable output (``checks.outcome`` usable) made at least 1; an entry with usable output whose
  ``fst_valid`` is false made exactly N+1 (the gate keeps trying until the analyser accepts or the retries are
  spent), and so did an entry with usable output in which the word policy left no word to check although its
  source has one (``fst_checked_words`` 0; :mod:`mtboard.run.fst_gate`: such a hypothesis is unverifiable and retried).
  Entries without usable output may have any count in 0 … N+1 (a transport failure ends an entry at once).

What no rule here can see (a reviewer's tampers, measured): a gated card re-sealed as a plain run of the same
prompt (tools, retry limit, fingerprint component and counts all removed: a gated prompt renders its first attempt
exactly as the plain prompt, so a plain run of it is legitimate — the sweep's with/without-gate axis is just that), or
counts lowered within the rules (a retried-then-accepted entry claiming one call). Which attempt produced a kept
hypothesis is in the work directory's ``raw.jsonl``, not in the card: only a re-run (``mtboard verify``, GDS
verified) confirms a pipeline card's outputs and counts.
"""

from __future__ import annotations

from mtboard.backends.base import Backend
from mtboard.score.fst import checkable_words
from mtboard.inputs.tools import FST_GATE, MAX_FST_RETRIES, TOOLS
from mtboard.core.schema import Outcome, RunCard
from mtboard.core.text import normalise
from mtboard.validate.report import CardRun


def check_tools(run: CardRun, card: RunCard, cls: type[Backend] | None) -> None:
    """The rules of the module docstring, as ``method`` problems."""
    tools = card.tools_enabled
    retries = card.method.fst_retries
    fp = card.fingerprint.components
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        run.fail("method", f"tools_enabled names an unknown tool; known tools: {', '.join(TOOLS)}", "$.tools_enabled")
    if tools != sorted(set(tools)):
        run.fail("method", "tools_enabled must be sorted and without repeats", "$.tools_enabled")
    if tools and cls is not None and not cls.accepts_tools:
        run.fail("method", f"tools_enabled must be empty: backend {cls.name} cannot run tools (only prompted LLM "
                           "backends run inside a tool pipeline)", "$.tools_enabled")
    if FST_GATE not in tools:
        if retries is not None:
            run.fail("method", "method.fst_retries is set but tools_enabled has no fst-gate", "$.method.fst_retries")
        if "fst_retries" in fp:
            run.fail("method", "the fingerprint has an fst_retries component but tools_enabled has no fst-gate",
                     "$.fingerprint.components.fst_retries")
        if not tools:
            for where, results in _all_results(card):
                for i, r in enumerate(results):
                    if r.tool_call_count != 0:
                        run.fail("method", "tool_call_count must be 0: the card's method uses no tools",
                                 f"$.{where}[{i}].tool_call_count")
                        break
        return
    if card.fst_version is None:
        run.fail("method", "fst_version must name the analyser the FST gate checked with (tools_enabled has "
                           "fst-gate)", "$.fst_version")
    if retries is None or not 0 <= retries <= MAX_FST_RETRIES:
        run.fail("method", f"method.fst_retries must be 0–{MAX_FST_RETRIES} with tools_enabled fst-gate",
                 "$.method.fst_retries")
        return
    if fp.get("fst_retries") != retries:
        run.fail("method", "the fingerprint's fst_retries component differs from method.fst_retries (the retry "
                           "limit is part of the experiment's identity)", "$.fingerprint.components.fst_retries")
    limit = retries + 1
    for where, results in _all_results(card):
        for i, r in enumerate(results):
            n = r.tool_call_count
            usable = r.checks.outcome == Outcome.usable
            if not 0 <= n <= limit:
                why = f"must be 0–{limit} (method.fst_retries {retries} + the first check)"
            elif usable and n < 1:
                why = "must be at least 1 for an entry with usable output (the FST gate checked it)"
            elif usable and r.fst_valid is False and n != limit:
                why = (f"must be {limit} for an entry whose fst_valid is false (the FST gate retries until the "
                       f"analyser accepts or method.fst_retries {retries} are spent)")
            elif usable and r.fst_checked_words == 0 and n != limit and checkable_words(normalise(r.source), ""):
                why = (f"must be {limit} for an entry whose hypothesis has no word to check although its source "
                       f"has one (the FST gate retries such an unverifiable hypothesis until method.fst_retries "
                       f"{retries} are spent)")
            else:
                continue
            run.fail("method", f"tool_call_count {n} {why}", f"$.{where}[{i}].tool_call_count")


def _all_results(card: RunCard):
    yield "results", card.results
    for k, rr in enumerate(card.replicate_runs):
        yield f"replicate_runs[{k}].results", rr.results


__all__ = ["check_tools"]
