"""Per-entry measurement, the first phase of :func:`mtboard.score.scoring.score_run`: the mechanical policy
(:mod:`mtboard.score.checks`), the segment statistics and sentence scores (chrF++, BLEU, TER), exact and equivalent
matches, length ratio, code-switching, FST candidate words, then the embedding similarities, verdicts and
hallucination flags (docs/SCORING_SPEC.md §2, §2.3). Large runs are measured in pool slices
(:mod:`mtboard.score.metrics.pool`); the values do not depend on the split or on record order.
"""

from __future__ import annotations

from mtboard.score import checks, fst as fst_mod
from mtboard.score.metrics import semantic as sem_mod
from mtboard.score.metrics.bleu import sentence_bleu_from_stats
from mtboard.score.metrics.chrf import sentence_chrf_from_stats
from mtboard.score.metrics.pool import map_chunks, plan_chunks
from mtboard.score.metrics.segments import statistics_chunk
from mtboard.score.metrics.ter import sentence_ter_from_stats
from mtboard.core.schema import Entry, MechanicalDecision, Outcome, SemanticVerdict, TranslationRecord
from mtboard.core.text import normalise, normalise_for_match


FIRST_SHARE = 0.85
"""Share of a pool slice that this process scores itself (:func:`mtboard.score.metrics.pool.plan_chunks`): it also gathers the
workers' results, builds the entry results and runs the bootstrap afterwards. Speed only; results do not depend on
the split."""


class Measured:
    """Per-entry columns of the policy and the metrics, in entry order: what a pool worker returns for one slice of
    entries, and (joined by :func:`measure_run`) for a whole run. ``chrf``/``bleu``: integer sufficient statistics
    per entry; ``ter``: ``[edits, reference words]``, None past the TER length cap
    (:func:`mtboard.score.metrics.ter.ter_statistics`); sentence scores on 0–100; ``fst_words``: filled only when an
    FST analyser will check them."""

    def __init__(self) -> None:
        self.predicted: list[str] = []
        self.decisions: list[MechanicalDecision] = []
        self.chrf: list[list[int]] = []
        self.bleu: list[list[int]] = []
        self.ter: list[list[float] | None] = []
        self.chrf_score: list[float] = []
        self.bleu_score: list[float] = []
        self.ter_score: list[float | None] = []
        self.exact: list[bool] = []
        self.equiv: list[bool] = []
        self.length_ratio: list[float] = []
        self.cs: list[bool] = []
        self.fst_words: list[list[str]] = []


def check_and_measure(items: list[tuple], source_language: str, target_language: str, strip_unknown_marks: bool,
                      fst_words: bool) -> Measured:
    """Mechanical policy, sufficient statistics, sentence scores, matches and FST candidate words for one slice of
    entries (runs in a pool worker when the run is large). Entries without usable output score an empty hypothesis
    and 0."""
    out = Measured()
    hyps, refs, usable = [], [], []
    for source, raw, reference, error_kind, history, _variants in items:
        p, d = checks.apply_policy(source=source, raw_predicted=raw, reference=reference, error_kind=error_kind,
                                   source_language=source_language, target_language=target_language,
                                   history=history, strip_unknown_marks=strip_unknown_marks)
        out.predicted.append(p)
        out.decisions.append(d)
        ok = d.outcome == Outcome.usable
        usable.append(ok)
        hyps.append(normalise(p) if ok else "")  # the one text normalisation (mtboard.core.text), both sides
        refs.append(normalise(reference))
    out.chrf, out.bleu, out.ter = statistics_chunk(hyps, refs, target_language)
    chrf_s, bleu_s, ter_s = sentence_chrf_from_stats, sentence_bleu_from_stats, sentence_ter_from_stats
    for i, (item, h, r, ok, d) in enumerate(zip(items, hyps, refs, usable, out.decisions)):
        out.chrf_score.append(chrf_s(out.chrf[i]) if ok else 0.0)
        out.bleu_score.append(bleu_s(out.bleu[i]) if ok else 0.0)
        out.ter_score.append(ter_s(out.ter[i]))
        # h and r are normalised already: whitespace collapsing is all that normalise_for_match has left to do
        hn = " ".join(h.split())
        rn = " ".join(r.split())
        out.exact.append(ok and hn == rn)
        out.equiv.append(ok and (hn == rn or any(hn == normalise_for_match(v) for v in item[5])))
        out.length_ratio.append(len(hn) / len(rn) if rn else 0.0)
        out.cs.append(checks.code_switching_detected(d))
        if fst_words:
            out.fst_words.append(fst_mod.checkable_words(h, item[0]) if ok else [])
    return out


def measure_run(entries: list[Entry], recs: list[TranslationRecord], source_language: str, target_language: str,
                strip_unknown_marks: bool, fst_words: bool) -> Measured:
    """:func:`check_and_measure` over every entry (``recs``: one record per entry, in ``entries`` order), in pool
    slices (:func:`mtboard.score.metrics.pool.map_chunks`), joined back into one :class:`Measured` in ``entries``
    order. ``fst_words``: collect the FST candidate words too."""
    items = [(e.source, r.raw_predicted, e.reference, r.error_kind, e.history, e.variants)
             for e, r in zip(entries, recs)]
    parts = map_chunks(check_and_measure, [(items[a:b], source_language, target_language, strip_unknown_marks,
                                             fst_words)
                                            for a, b in plan_chunks(len(items), first_share=FIRST_SHARE)])
    col = Measured()
    for part in parts:
        for name, value in vars(part).items():
            getattr(col, name).extend(value)
    return col


class SemanticValues:
    """Per-entry semantic values of one run (docs/SCORING_SPEC.md §2.3): similarity to the reference and to the
    source (cosine, ≤ 1; None where not computed), verdicts, hallucination flags, and whether the target language /
    both languages are covered by the embedding model."""

    def __init__(self, n: int) -> None:
        self.score: list[float | None] = [None] * n
        self.source: list[float | None] = [None] * n
        self.verdict: list[SemanticVerdict] = [SemanticVerdict.UNKNOWN] * n
        self.hallucination: list[bool | None] = [None] * n
        self.target_covered = False
        self.both_covered = False


def semantic_values(sources: list[str], references: list[str], predicted: list[str],
                    decisions: list[MechanicalDecision], source_language: str, target_language: str,
                    claimed: list[tuple[float | None, float | None]] | None = None) -> SemanticValues:
    """Embedding similarities, verdicts and hallucination flags (docs/SCORING_SPEC.md §2.3). Texts go through the one
    text normalisation first, as for every metric. Entries without usable output score 0 and count as hallucinated
    (worst value by policy, like code-switching); their verdict is ERROR, or MISMATCH for an echoed source.
    ``claimed`` (the validator): per entry the card's (semantic_score, source_similarity); a recomputed value that
    :func:`mtboard.score.metrics.semantic.agrees` with its claim is replaced by the claim (BLAS last-bit differences)."""
    n = len(sources)
    out = SemanticValues(n)
    out.target_covered = sem_mod.covers(target_language)
    out.both_covered = out.target_covered and sem_mod.covers(source_language)
    if not out.target_covered:
        return out
    usable = [i for i, d in enumerate(decisions) if d.outcome == Outcome.usable]
    hyps = [normalise(predicted[i]) for i in usable]
    ref_sims = sem_mod.similarities(hyps, [normalise(references[i]) for i in usable])
    src_sims = sem_mod.similarities([normalise(sources[i]) for i in usable], hyps) if out.both_covered else None
    for i, d in enumerate(decisions):
        out.score[i] = 0.0
        out.verdict[i] = (SemanticVerdict.MISMATCH if d.outcome == Outcome.source_untranslated
                          else SemanticVerdict.ERROR)
        if out.both_covered:
            out.hallucination[i] = True
    if claimed is not None:
        ref_sims = [c if sem_mod.agrees(c := claimed[i][0], s) else s for i, s in zip(usable, ref_sims)]
        if src_sims is not None:
            src_sims = [c if sem_mod.agrees(c := claimed[i][1], s) else s for i, s in zip(usable, src_sims)]
    for k, i in enumerate(usable):
        out.score[i] = ref_sims[k]
        out.verdict[i] = SemanticVerdict.VALID if ref_sims[k] >= sem_mod.MISMATCH_BELOW else SemanticVerdict.MISMATCH
        if src_sims is not None:
            out.source[i] = src_sims[k]
            out.hallucination[i] = src_sims[k] < sem_mod.HALLUCINATION_BELOW
    return out


__all__ = ["FIRST_SHARE", "Measured", "SemanticValues", "check_and_measure", "measure_run", "semantic_values"]
