"""What an importer kept and skipped, and why (issue 14 part 1: every importer reports its counts)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ImportReport:
    """Counts of one or more importer runs: pairs ``kept`` and units ``skipped`` by reason (e.g. ``fuzzy``,
    ``obsolete``, ``untranslated``, ``no target tuv``). ``notes`` counts recorded conversions that kept a unit (e.g.
    ``inline ph → text``). Pass one report to several reads to add their counts up."""

    kept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    facts: list[str] = field(default_factory=list)
    """How a reader read the file, once per read (e.g. ``delimiter ';' (semicolon), detected``)."""

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` units skipped for ``reason``."""
        self.skipped[reason] += n

    def summary(self) -> str:
        """One line: ``kept 12; skipped 3 (fuzzy 2, obsolete 1); inline ph → text 4``, then each distinct fact
        (``delimiter ';' (semicolon), detected``)."""
        total = sum(self.skipped.values())
        parts = [f"kept {self.kept}"]
        if total:
            parts.append(f"skipped {total} (" + ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())) + ")")
        else:
            parts.append("skipped 0")
        if self.notes:
            parts.append(", ".join(f"{k} {v}" for k, v in sorted(self.notes.items())))
        parts += list(dict.fromkeys(self.facts))
        return "; ".join(parts)
