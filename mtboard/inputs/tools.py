"""The tools a method may enable (spec §3.2 ``tools_enabled``, §9.6 class ``pipeline``; issue 18): their names,
the FST gate's retry limits, and ``--tools`` parsing. What the FST gate does at run time is
:mod:`mtboard.run.fst_gate`; the validator (:mod:`mtboard.validate.tools`) checks a card against these names and limits.
"""

from __future__ import annotations

from collections.abc import Sequence

from mtboard.core.errors import ConfigError

FST_GATE = "fst-gate"
TOOLS = (FST_GATE,)
"""Tool names ``--tools`` accepts (the card's ``tools_enabled``)."""
DEFAULT_FST_RETRIES = 2
"""Retries after the first hypothesis when ``--fst-retries`` is not given."""
MAX_FST_RETRIES = 5
"""Largest ``--fst-retries``."""
GATED_PROMPTS = ("fst-gated-chat", "fst-gated-few-shot-completion")
"""Shipped prompts that declare ``fst_feedback`` (named in the error for a prompt that does not)."""


def parse_tools(values: Sequence[str] | str | None) -> tuple[str, ...]:
    """``--tools`` values (repeatable and/or comma-separated) → sorted distinct tool names; ``none`` alone → ().

    Raises: ConfigError for an unknown tool name (listing :data:`TOOLS`).
    """
    items = [values] if isinstance(values, str) else list(values or [])
    names = sorted({p.strip() for item in items for p in item.split(",") if p.strip()})
    if names == ["none"]:
        return ()
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ConfigError(f"unknown tool {unknown[0]!r}; known tools: {', '.join(TOOLS)}", field="--tools",
                          fix="write --tools fst-gate (or drop --tools)")
    return tuple(names)
