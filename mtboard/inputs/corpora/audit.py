"""Entry-level findings for ``mtboard corpus check`` (issue 14 part 3), on the normalised text
(:func:`mtboard.core.text.normalise`).

Blank sources and references are refused by the schema itself (:class:`mtboard.core.schema.Entry`), so every loader — run,
validate, check — rejects them. The findings here are flags: legitimate in some corpora (a brand name translates to
itself; a catalogue reorders ``%s`` as ``%1$s``), always worth a look, and errors under ``corpus check --strict``.

===================  ==========================================================================================
rule                 fires when
===================  ==========================================================================================
``same_as_source``   the reference equals the source after :func:`mtboard.core.text.normalise_for_match` (an echo of
                     the source would score as a perfect translation)
``duplicate_pair``   source and reference both equal an earlier entry's, after the same normalisation
``placeholder``      the placeholders (:func:`mtboard.core.text.placeholders`, a multiset) of source and reference differ
===================  ==========================================================================================
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mtboard.core.schema import Corpus
from mtboard.core.text import normalise, normalise_for_match, placeholders

RULES = ("same_as_source", "duplicate_pair", "placeholder")


@dataclass(frozen=True)
class Finding:
    """One flagged entry: ``rule`` (one of :data:`RULES`), its position ``index`` in ``entries``, its ``entry_id`` and a
    short ``detail``."""

    rule: str
    index: int
    entry_id: int
    detail: str

    def line(self, where: str) -> str:
        """``<file>: entries[3] (id 4): duplicate_pair: same source and reference as id 2``."""
        return f"{where}: entries[{self.index}] (id {self.entry_id}): {self.rule}: {self.detail}"


def _fmt(c: Counter[str]) -> str:
    return " ".join(f"{k}×{v}" if v > 1 else k for k, v in sorted(c.items()))


def audit_corpus(corpus: Corpus) -> list[Finding]:
    """Every finding of :data:`RULES` over the corpus entries, in entry order (an entry may have several)."""
    out: list[Finding] = []
    first: dict[tuple[str, str], int] = {}
    for i, e in enumerate(corpus.entries):
        src, ref = normalise_for_match(e.source), normalise_for_match(e.reference)
        if src == ref:
            out.append(Finding("same_as_source", i, e.id, "the reference equals the source"))
        key = (src, ref)
        if key in first:
            out.append(Finding("duplicate_pair", i, e.id, f"same source and reference as id {first[key]}"))
        else:
            first[key] = e.id
        ps, pr = Counter(placeholders(normalise(e.source))), Counter(placeholders(normalise(e.reference)))
        if ps != pr:
            missing, extra = ps - pr, pr - ps
            detail = "; ".join(x for x in (f"missing in the reference: {_fmt(missing)}" if missing else "",
                                           f"not in the source: {_fmt(extra)}" if extra else "") if x)
            out.append(Finding("placeholder", i, e.id, detail))
    return out
