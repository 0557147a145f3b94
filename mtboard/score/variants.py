"""Anti-cheating over known variants (spec §9.3.1 "variant-class linting", issue 39 item 2; §2.2 ``variants`` and
``variant_class``, §4.1 equivalent match): the corpus lint of malformed variants (``mtboard corpus check``) and the
per-card statistic that flags suspiciously perfect matches on the entries with known variants (the validator's
``variants`` check, the ledger row's ``variants``, the run page). docs/SCORING_SPEC.md §10 "Variant-class lint".

Corpus lint (:func:`corpus_variant_problems`), each an error of ``corpus check`` (exit 1):

=========================  ===================================================================================
rule                       fires when
=========================  ===================================================================================
``variant_is_reference``   a variant equals the reference after :func:`mtboard.core.text.normalise_for_match`
``variant_duplicate``      a variant equals an earlier variant of the same entry after the same normalisation
``variant_script``         more than half of a variant's letters are in scripts the target language is not written
                           in (:func:`mtboard.core.languages.expected_scripts`; :func:`mtboard.score.checks.script_counts`)
``variant_language``       the variant is the source, or more than half of its letters are left in the source language
                           (the mechanical policy's code-switching share,
                           :func:`mtboard.score.checks.untranslated_share`)
``variant_other_language`` a variant of ≥ :data:`OTHER_LANGUAGE_MIN_WORDS` words in a third language: of its words
                           of two or more letters that are known function words
                           (:data:`mtboard.inputs.corpora.filters.STOPWORDS`: en, es, fr, de, ca, pt, it), at least
                           :data:`OTHER_LANGUAGE_MIN_HITS` and more than half belong only to other languages' lists,
                           not the target's (a heuristic: a single word or a short label in another language, such
                           as ``Supprimer``, is not detected; targets without a list are not checked)
``variant_class``          variants without a ``variant_class``, a ``variant_class`` without variants, or a class
                           label outside :data:`VARIANT_CLASS_RE` (lowercase ASCII words joined by hyphens, as the
                           spec's ``simple-ta-direct``)
=========================  ===================================================================================

Card statistic (:func:`variant_lint`): on the card's entries whose corpus entry has variants (*V*), the share whose
usable hypothesis equals the reference or a variant; on its other entries (*O*), the share whose usable hypothesis
equals the reference (the same equivalent-match rule: without variants it is the exact match). One-sided Fisher
exact test of the 2×2 table (matched / not matched × V / O), alternative "V matches more often than O": the
hypergeometric upper tail ``p = Σ_{x ≥ k_V} C(K, x)·C(N − K, n_V − x) / C(N, n_V)`` with ``N = n_V + n_O`` and
``K = k_V + k_O`` (computed exactly with :func:`math.comb`; it is the statistic itself). Flagged when
``p < FLAG_P`` (0.001) and the V rate ≥ :data:`FLAG_RATE` (0.9): a system that is perfect where variants are known
and ordinary elsewhere; a uniformly perfect system gives ``p = 1``. Skipped, with the reason, when no entry of the
card has variants or every entry has them (nothing to compare with).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import regex

from mtboard.core.languages import expected_scripts, primary
from mtboard.core.schema import Corpus, Entry, EntryResult, Outcome
from mtboard.core.text import normalise_for_match
from mtboard.inputs.corpora.filters import STOPWORDS
from mtboard.score.checks import script_counts, untranslated_share, words

VARIANT_CLASS_RE = regex.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
"""The documented form of a ``variant_class`` label: lowercase ASCII letters and digits, words joined by single
hyphens (spec §2.2's example ``simple-ta-direct``), at most :data:`VARIANT_CLASS_MAX` characters."""
VARIANT_CLASS_MAX = 64
"""Longest ``variant_class`` label (characters)."""
FOREIGN_SCRIPT_SHARE = 0.5
"""``variant_script`` fires when more than this share of a variant's letters are in scripts the target is not
written in (names in another script inside a variant stay below it)."""
SOURCE_LANGUAGE_SHARE = 0.5
"""``variant_language`` fires when more than this share of a variant's letters are left in the source language
(:func:`mtboard.score.checks.untranslated_share`'s share): a loanword in a variant (``Revise su email.``) is Spanish
usage, not an untranslated variant, so the mechanical policy's 10 % detection threshold is not used here."""
OTHER_LANGUAGE_MIN_WORDS = 3
"""``variant_other_language`` looks only at variants of at least this many words (:func:`mtboard.score.checks.words`):
one or two words are too little evidence for a function-word count."""
OTHER_LANGUAGE_MIN_HITS = 2
"""Least number of another language's function words for ``variant_other_language`` to fire."""


def other_language(text: str, target_language: str) -> tuple[str, int, int] | None:
    """The third language a text of ≥ :data:`OTHER_LANGUAGE_MIN_WORDS` words looks written in, by function words
    (:data:`mtboard.inputs.corpora.filters.STOPWORDS`, hand-picked, about 20 per language): ``(language, its function
    words in the text, function words known in the text)`` when at least :data:`OTHER_LANGUAGE_MIN_HITS` and more
    than half of the text's known function words of two or more letters are in other languages' lists and not in the
    target's, the language being the one with most of them; else None. None too for a target without a list (only
    en, es, fr, de, ca, pt, it have one). One-letter words (``a``, ``o``, ``e``, ``i``, ``y``) are left out: they
    are function words in several of these languages at once."""
    own = STOPWORDS.get(primary(target_language))
    toks = [w.casefold() for w in words(text)]
    if own is None or len(toks) < OTHER_LANGUAGE_MIN_WORDS:
        return None
    known = [w for w in toks if len(w) >= 2 and any(w in sw for sw in STOPWORDS.values())]
    foreign = [w for w in known if w not in own]
    if len(foreign) < OTHER_LANGUAGE_MIN_HITS or 2 * len(foreign) <= len(known):
        return None
    lang, hits = max(((lang, sum(w in sw for w in foreign)) for lang, sw in STOPWORDS.items() if sw is not own),
                     key=lambda x: x[1])
    return lang, hits, len(known)
FLAG_P = 0.001
"""One-sided Fisher p-value below which a card's match rate on variant entries is suspicious (docs/SCORING_SPEC.md §10:
strict, as every card on a board with variants is tested, and a legitimate system's variant entries may be easier)."""
FLAG_RATE = 0.9
"""Least match rate on the variant entries for a flag: *suspiciously perfect*, not merely better."""

CORPUS_RULES = ("variant_is_reference", "variant_duplicate", "variant_script", "variant_language",
                "variant_other_language", "variant_class")
"""The corpus lint's rules, in the order an entry is checked."""


@dataclass(frozen=True)
class VariantProblem:
    """One malformed variant field of a corpus entry: ``rule`` (one of :data:`CORPUS_RULES`), the entry's position
    ``index`` and ``entry_id``, the JSON ``field`` (``variants[1]``, ``variant_class``), what is wrong and the fix."""

    rule: str
    index: int
    entry_id: int
    field: str
    problem: str
    fix: str

    def line(self, where: str) -> str:
        """``<file>: entries[3].variants[0] (id 4): variant_is_reference: … (fix: …)``."""
        return (f"{where}: entries[{self.index}].{self.field} (id {self.entry_id}): {self.rule}: {self.problem} "
                f"(fix: {self.fix})")


def _entry_variant_problems(i: int, e: Entry, source_language: str, target_language: str) -> list[VariantProblem]:
    out: list[VariantProblem] = []
    ref, src = normalise_for_match(e.reference), normalise_for_match(e.source)
    allowed = expected_scripts(target_language)
    seen: dict[str, int] = {}
    for j, v in enumerate(e.variants):
        f, nv = f"variants[{j}]", normalise_for_match(v)
        if not nv:
            out.append(VariantProblem("variant_is_reference", i, e.id, f, "the variant is blank after text "
                                      "normalisation", "write the variant or remove it"))
            continue
        if nv == ref:
            out.append(VariantProblem("variant_is_reference", i, e.id, f, "the variant equals the reference after "
                                      "text normalisation", "remove it: the reference is always accepted"))
        elif nv in seen:
            out.append(VariantProblem("variant_duplicate", i, e.id, f, f"the variant repeats variants[{seen[nv]}] "
                                      "after text normalisation", "remove the repeat"))
        seen.setdefault(nv, j)
        counts = script_counts(v)
        letters = sum(counts.values())
        if allowed is not None and letters:
            foreign = sum(n for s, n in counts.items() if s not in allowed)
            if foreign / letters > FOREIGN_SCRIPT_SHARE:
                scripts = ", ".join(sorted(s for s in counts if s not in allowed))
                out.append(VariantProblem("variant_script", i, e.id, f, f"{foreign} of {letters} letters are in "
                                          f"{scripts}, not a script {target_language} is written in "
                                          f"({', '.join(sorted(allowed))})", f"write the variant in {target_language} "
                                          "or remove it"))
                continue
        share, _ = untranslated_share(output=v, source=e.source, reference=e.reference,
                                      source_language=source_language, target_language=target_language)
        if nv == src or share > SOURCE_LANGUAGE_SHARE:
            out.append(VariantProblem("variant_language", i, e.id, f, "the variant is the source or most of its "
                                      f"letters are source-language ({source_language}) words the reference does "
                                      f"not have ({share:.0%}; the code-switching rule)",
                                      f"write the variant in {target_language} or remove it"))
            continue
        third = other_language(v, target_language)
        if third is not None:
            lang, hits, known = third
            out.append(VariantProblem("variant_other_language", i, e.id, f, f"{hits} of its {known} known function "
                                      f"words are {lang}, not {target_language} (function-word heuristic)",
                                      f"write the variant in {target_language} or remove it"))
    if e.variants and e.variant_class is None:
        out.append(VariantProblem("variant_class", i, e.id, "variant_class", f"{len(e.variants)} variants without a "
                                  "variant_class", "name the class of variation (e.g. 'word-order', 'dialect', "
                                  "'orthography')"))
    elif e.variant_class is not None and not e.variants:
        out.append(VariantProblem("variant_class", i, e.id, "variant_class", "a variant_class without variants",
                                  "add the accepted variants or remove variant_class"))
    if e.variant_class is not None and (len(e.variant_class) > VARIANT_CLASS_MAX
                                        or not VARIANT_CLASS_RE.match(e.variant_class)):
        out.append(VariantProblem("variant_class", i, e.id, "variant_class", "the label is not lowercase ASCII words "
                                  f"joined by hyphens (at most {VARIANT_CLASS_MAX} characters)",
                                  "write it like 'simple-ta-direct'"))
    return out


def corpus_variant_problems(corpus: Corpus) -> list[VariantProblem]:
    """Every malformed variant field of the corpus (:data:`CORPUS_RULES`), in entry order; empty for a corpus
    without variants or classes."""
    d = corpus.dataset
    return [p for i, e in enumerate(corpus.entries) if e.variants or e.variant_class is not None
            for p in _entry_variant_problems(i, e, d.source_language, d.target_language)]


# --------------------------------------------------------------------------------------------------------------------
# The card statistic


@dataclass(frozen=True)
class VariantLint:
    """A card's variant-class lint. ``n_variant``/``k_variant``: the card's entries with variants and how many its
    usable hypothesis matched (reference or variant; ``k_by_variant`` of them by a variant only); ``n_other``/
    ``k_other``: its other entries and their matches; ``p``: the one-sided Fisher exact p-value (None when skipped);
    ``flagged``: ``p < FLAG_P`` and the variant rate ≥ ``FLAG_RATE``; ``skip``: why the test did not run (None
    when it ran); ``by_class``: class → (entries, matched) on the variant entries."""

    n_variant: int
    k_variant: int
    k_by_variant: int
    n_other: int
    k_other: int
    p: float | None
    flagged: bool
    skip: str | None
    by_class: tuple[tuple[str, int, int], ...] = ()

    @property
    def variant_rate(self) -> float | None:
        return self.k_variant / self.n_variant if self.n_variant else None

    @property
    def other_rate(self) -> float | None:
        return self.k_other / self.n_other if self.n_other else None

    @property
    def text(self) -> str:
        """One line for the validator, the ledger and the run page."""
        if self.skip is not None:
            return f"not tested: {self.skip}"
        verdict = "flagged: suspiciously perfect on the entries with known variants" if self.flagged else "not flagged"
        return (f"{verdict} — matched {self.k_variant} of {self.n_variant} entries with variants "
                f"({self.k_by_variant} by a variant) against {self.k_other} of {self.n_other} other entries; "
                f"one-sided Fisher p = {self.p:.2g} (flag: p < {FLAG_P:g} and ≥ {FLAG_RATE:.0%} matched)")


def fisher_greater(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """One-sided Fisher exact p-value that group A's success rate exceeds group B's: the hypergeometric probability of
    ``k_a`` or more successes in ``n_a`` draws from ``n_a + n_b`` items holding ``k_a + k_b`` successes (exact
    rational arithmetic, rounded once to a float in [0, 1]). Raises ValueError for counts outside ``0 ≤ k ≤ n``."""
    if not (0 <= k_a <= n_a and 0 <= k_b <= n_b):
        raise ValueError(f"counts out of range: {k_a}/{n_a}, {k_b}/{n_b}")
    n, k = n_a + n_b, k_a + k_b
    tail = sum(math.comb(k, x) * math.comb(n - k, n_a - x) for x in range(k_a, min(n_a, k) + 1))
    return min(1.0, tail / math.comb(n, n_a))


def _usable(r: EntryResult) -> bool:
    return r.checks.outcome == Outcome.usable


def variant_lint(results: Iterable[EntryResult], entries: Mapping[int, Entry]) -> VariantLint:
    """The variant-class lint of a card's results against its corpus entries by id (an id missing from ``entries``
    is left out). Matching: :func:`normalise_for_match` equality of the usable hypothesis (``predicted``) with the
    reference or a variant; a hypothesis without usable output never matches."""
    return variant_lint_of(((r.entry_id, r.predicted if _usable(r) else None) for r in results), entries)


def variant_lint_of(hypotheses: Iterable[tuple[int, str | None]], entries: Mapping[int, Entry]) -> VariantLint:
    """:func:`variant_lint` of ``(entry id, usable hypothesis or None)`` pairs, in result order (what
    :class:`mtboard.ledger.summary.CardSummary` holds: its ids, outputs and outcomes)."""
    nv = kv = kbv = no = ko = 0
    classes: dict[str, list[int]] = {}
    for entry_id, predicted in hypotheses:
        e = entries.get(entry_id)
        if e is None:
            continue
        h = normalise_for_match(predicted) if predicted is not None else None
        ref_hit = h is not None and h == normalise_for_match(e.reference)
        if e.variants:
            var_hit = h is not None and not ref_hit and any(h == normalise_for_match(v) for v in e.variants)
            nv += 1
            kv += ref_hit or var_hit
            kbv += var_hit
            c = classes.setdefault(e.variant_class or "(no class)", [0, 0])
            c[0] += 1
            c[1] += ref_hit or var_hit
        else:
            no += 1
            ko += ref_hit
    by_class = tuple((c, n, k) for c, (n, k) in sorted(classes.items()))
    if nv == 0:
        return VariantLint(0, 0, 0, no, ko, None, False, "no entry of this card has variants in its corpus")
    if no == 0:
        return VariantLint(nv, kv, kbv, 0, 0, None, False, "every entry of this card has variants: no other entries "
                           "to compare with", by_class)
    p = fisher_greater(kv, nv, ko, no)
    return VariantLint(nv, kv, kbv, no, ko, p, p < FLAG_P and kv / nv >= FLAG_RATE, None, by_class)


__all__ = ["CORPUS_RULES", "FLAG_P", "FLAG_RATE", "FOREIGN_SCRIPT_SHARE", "OTHER_LANGUAGE_MIN_HITS",
           "OTHER_LANGUAGE_MIN_WORDS", "SOURCE_LANGUAGE_SHARE", "VARIANT_CLASS_MAX", "VARIANT_CLASS_RE", "VariantLint",
           "VariantProblem", "corpus_variant_problems", "fisher_greater", "other_language", "variant_lint",
           "variant_lint_of"]
