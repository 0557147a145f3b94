"""The site's words in one place (issue 36 item 3): the glossary page, the one-line tooltip every symbol and term
carries where it appears, and which methodology page explains each topic.

Every term on a page is written with :func:`term_html` (a link to ``glossary.html#<key>`` whose ``title`` is the
one-line definition: Material's ``content.tooltips`` shows it on hover and focus, and the link works without it), so a
page never explains a word in its own way. The methodology is split into short pages (:data:`METHODOLOGY_PAGES`);
:data:`ANCHORS` says which one holds each section, and ``methodology.html`` keeps every old anchor as a one-line
summary linking on, so links published before the split still land on the topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

from mtboard.ledger import standing as st

METHODOLOGY_PAGES: dict[str, str] = {
    "methodology/metrics.md": "Metrics",
    "methodology/composite.md": "Composite and cost",
    "methodology/ranks.md": "Ranks and quality tiers",
    "methodology/verification.md": "Verification and provenance",
    "methodology/domains.md": "Domains",
}
"""The methodology's pages after the overview (``methodology.md``): docs path → title, in reading order."""

PROGRAMME_PAGES: dict[str, str] = {
    "costs.md": "Run and sweep costs",
    "costs-programme.md": "Programme costs",
    "new-languages.md": "New languages",
}
"""The programme pages (:mod:`mtboard.site.programme`; spec §10–11): docs path → title, after the glossary in the nav."""

@dataclass(frozen=True)
class Section:
    """One methodology topic: ``anchor`` (its id on ``methodology.html``, where links published before the split
    point), ``page`` and ``slug`` (where it is explained now: the heading's id that MkDocs' toc gives it), ``title``
    and ``short`` (the one line the overview shows)."""

    anchor: str
    page: str
    slug: str
    title: str
    short: str


_M, _C, _R, _V, _D = METHODOLOGY_PAGES
SECTIONS: tuple[Section, ...] = (
    Section("metrics", _M, "metrics", "Metrics", "Every metric is recomputed by CI from the outputs stored in the "
            "run card; higher is better except TER, MQM penalty, cost and latency."),
    Section("chrf", _M, "chrf", "chrF++", "Corpus chrF++ (sacrebleu), 0–100, with a 95% bootstrap interval; the main "
            "reference-based metric."),
    Section("bleu", _M, "bleu", "BLEU", "Corpus BLEU (sacrebleu), 0–100; shown for comparability, not in the "
            "composite."),
    Section("ter", _M, "ter", "TER", "Corpus TER (sacrebleu), lower is better; its coverage is decided by the "
            "reference alone; not in the composite."),
    Section("exact", _M, "exact-match", "Exact match", "Share of outputs equal to the reference after "
            "normalisation, 0–1."),
    Section("equivalent", _M, "equivalent-match", "Equivalent match", "Share of outputs equal to the reference or "
            "one of its human variants, 0–1; missing on corpora without variants."),
    Section("terminology", _M, "terminology-adherence", "Terminology adherence", "Share of the glossary terms in "
            "the sources that the outputs render as the glossary requires, 0–1; missing without a glossary."),
    Section("morphology", _M, "morphological-accuracy", "Morphological accuracy", "Share of the reference's "
            "analysed words (lemma + tags) that the output's analysis has, 0–1, measured against Apertium MACHINE "
            "analyses of the references, not gold ones; missing on corpora without analyses."),
    Section("fst", _M, "fst-acceptance", "FST acceptance", "Share of output words the target language's analyser "
            "accepts, 0–1; missing without an analyser."),
    Section("semantic", _M, "semantic-similarity", "Semantic similarity", "Embedding cosine of output and reference, "
            "0–1; the verdicts meaning mismatch and hallucination come from it."),
    Section("scorer", _M, "scorer-versions", "Scorer versions", "The scorer that computed each card's numbers "
            "(harness, sacrebleu, text normalisation, policy, semantic model); re-scoring when it changes."),
    Section("outcomes", _M, "outcomes-and-flags", "Outcomes and flags", "The mechanical checks of every output: its "
            "outcome (usable or not) and the flags it raised."),
    Section("composite", _C, "composite", "Composite", "Weighted mean of the available metrics, 0–1; boards are "
            "ranked on it."),
    Section("screen-ready", _C, "screen-ready-score", "Screen-ready score", "The composite as a screen translator's "
            "reader gets it: commentary and broken placeholders count as no output, formatting costs a small fixed "
            "penalty; beside the composite, never replacing it."),
    Section("weights", _C, "weights", "Weights (profiles A and B)", "Profile A counts FST acceptance, profile B is "
            "for targets without an analyser."),
    Section("cost-adjusted", _C, "cost-adjusted-score", "Cost-adjusted score", "Quality per unit of declared cost."),
    Section("ranks", _R, "ranks-intervals-and-clusters", "Ranks, intervals and clusters", "Rows a paired bootstrap "
            "cannot separate share a rank range such as 1–2."),
    Section("flip", _R, "flip-distance", "Flip distance", "How few segments decide the order of a row and the next "
            "one: removing them puts the next row above."),
    Section("board-pages", _R, "board-pages", "Board pages", "Long boards continue on further pages; ranks stay "
            "the whole board's."),
    Section("downloads", _R, "downloads", "Downloads", "Each view's CSV has the table's columns rounded as shown; "
            "the JSON beside it keeps full precision."),
    Section("sentinels", _R, "sentinel-lines", "Sentinel lines", "Texts made from the corpus without a model, "
            "scored as runs, never ranked; copy-source and shuffled are floors a submission must clear."),
    Section("quality-tiers", _R, "quality-tiers", "Quality tiers", "Provisional labels on the composite, not "
            "quality guarantees."),
    Section("tiers", _V, "verification-tiers", "Verification tiers", "Self-benchmarked, maintainer re-run, GDS "
            "verified, community verified: what was re-run and by whom."),
    Section("declared", _V, "declared-recomputed-judged", "Declared, recomputed, judged", "Which numbers CI "
            "recomputed, which the submitter declared unchecked, which an LLM judge gave."),
    Section("canaries", _V, "drift-canaries", "Drift canaries", "API models are re-run on a fixed canary set per "
            "language pair; a row whose latest canary score leaves its card's 95% interval is marked drifted."),
    Section("judges", _V, "judges", "Judges", "LLM judges (GEMBA-MQM, rubric, checkpoints), compared on common "
            "cells only."),
    Section("context-behaviour", _V, "context-behaviour", "Context behaviour", "On dialogue with history, the "
            "GEMBA-MQM-context judge labels how each translation used the prior lines; boards show the labels' "
            "shares and the MQM penalty per label."),
    Section("classes", _V, "method-classes", "Method classes", "What kind of system a row is; reference baselines "
            "are never ranked."),
    Section("domains", _D, "domains", "Domains", "How many development segments each domain has, and where they "
            "come from."),
)
"""Every methodology topic, in the overview's order."""

ANCHORS: dict[str, str] = {s.anchor: f"{s.page}#{s.slug}" for s in SECTIONS}
"""Methodology anchor → ``<page>.md#<slug>``, where it is explained."""


def methodology_target(anchor: str) -> str:
    """``<page>.md#<slug>`` of methodology topic ``anchor`` (e.g. ``chrf`` → ``methodology/metrics.md#chrf``).
    Raises KeyError for a topic no methodology page has."""
    return ANCHORS[anchor]


@dataclass(frozen=True)
class Term:
    """One glossary entry: ``key`` (its HTML id on the glossary page), ``label`` (the word or symbol as pages show
    it), ``short`` (one sentence: the tooltip and the glossary's first line), ``more`` (a methodology anchor, or
    "" when the glossary line is all there is)."""

    key: str
    label: str
    short: str
    more: str = ""


def tier_key(tier: str) -> str:
    """The glossary key of verification tier ``tier`` (a :data:`mtboard.ledger.standing.TIERS` value). Raises
    KeyError for an unknown tier."""
    label = st.TIER_LABEL[tier]
    return label.lower().replace(" ", "-").replace("(", "").replace(")", "")


_TIER_TEXT = {
    st.SELF: "the submitter ran it; CI recomputed every score from the stored outputs, nothing was re-run",
    st.UNATTESTED: ("a maintainer re-ran the method and reproduced the scores, but no attestation of the verify "
                    "workflow verifies the record, so the declared values stay unconfirmed"),
    st.GDS: ("a maintainer re-ran the method in the repository's verify workflow (GitHub Actions), reproduced the "
             "scores within ±2%, and the workflow's signed attestation verifies"),
    st.COMMUNITY: ("the method has an attested row on the official gold board and a community review confirms its "
                   "quality tier"),
}

def tier_text(tier: str) -> str:
    """What verification tier ``tier`` means, as a clause (no capital, no full stop): one wording for the glossary
    and the methodology. Raises KeyError for an unknown tier."""
    return _TIER_TEXT[tier]


TERMS: tuple[Term, ...] = (
    # what a row is
    Term("run-card", "run card", "A sealed JSON record of one run: the method's full configuration, every output, and "
         "the scores CI recomputes from those outputs."),
    Term("method", "method", "A model or engine (line 1 of a board's method cell) plus its prompt and condition "
         "(line 2); a board has one row per method.", "classes"),
    Term("fingerprint", "fingerprint", "A hash of everything that defines a method (model, prompt, settings, corpus); "
         "run cards with the same fingerprint are one row, its reproductions."),
    Term("reproduced", "reproduced ×N", "The row stands for N run cards with the same fingerprint; the row shows the "
         "one with the strongest evidence, and the ×N list opens every card.", "tiers"),
    Term("ref", "ref.", "A reference baseline (echo copies the source, empty returns nothing): shown for scale, never "
         "ranked.", "classes"),
    Term("sentinel", "sentinel line", "A text the build makes from the corpus itself, without a model (the source "
         "copied, another entry's reference, the reference cut to half or doubled, without markup, in another "
         "language), scored as a run and shown under the board, never ranked. Copy-source and shuffled are floors: "
         "a row marked ≤ is not significantly above one on that view; CI refuses a submission inside a floor on its "
         "whole development view (a domain view's mark is shown, not enforced).", "sentinels"),
    # the numbers
    Term("composite", "composite", "Weighted mean of the available metrics, 0–1, higher is better; boards are ranked "
         "on it.", "composite"),
    Term("screen-ready", "screen-ready", "The composite recomputed as a screen translator's reader gets the output "
         "(policy screen-1): an entry with commentary, a broken placeholder or more than 5 foreign-script letters "
         "counts as no output, and each formatting flag costs its entry 0.05; 0 ≤ screen-ready ≤ composite, equal "
         "without such flags. Shown beside the composite; boards are not ranked on it.", "screen-ready"),
    Term("profile", "profile A / profile B", "The composite's weights: profile A when the target language has a "
         "morphological analyser (FST acceptance counts), profile B without one.", "weights"),
    Term("chrf", "chrF++", "Character n-gram F-score with word bigrams (sacrebleu CHRF, word_order=2), 0–100, higher is "
         "better; the main reference-based metric.", "chrf"),
    Term("bleu", "BLEU", "Word n-gram precision against the reference (sacrebleu), 0–100, higher is better; shown for "
         "comparability, not in the composite.", "bleu"),
    Term("ter", "TER", "Translation edit rate (sacrebleu): edits per reference word, lower is better; not in the "
         "composite.", "ter"),
    Term("exact", "exact match", "Share of outputs equal to the reference after normalisation, 0–1.", "exact"),
    Term("equiv", "equivalent match", "Share of outputs equal to the reference or one of its human variants after "
         "normalisation, 0–1; missing on a corpus without variants.", "equivalent"),
    Term("term", "terminology adherence", "Share of glossary terms (in the entries' sources) whose required "
         "rendering the output contains, 0–1; missing on a corpus without a glossary.", "terminology"),
    Term("morph", "morphological accuracy", "Share of the reference's analysed words (lemma<tag>…, from Apertium's "
         "machine analysis of the reference — not a gold analysis) that Apertium's analysis of the output also has, "
         "Σ matched ÷ Σ units, 0–1; a right lemma with a wrong tense is a miss; missing on a corpus without "
         "analyses.", "morphology"),
    Term("fst", "FST acceptance", "Share of output words the target language's Apertium analyser recognises, 0–1; "
         "missing, not zero, without an analyser.", "fst"),
    Term("semantic", "semantic", "Cosine similarity of multilingual sentence embeddings of output and reference, 0–1; "
         "below 0.5 is a meaning mismatch.", "semantic"),
    Term("older-scorer", "↻ older scorer", "The row's numbers were computed by an older version of the scorer than "
         "the board's other rows (the versions that differ are named); the board says so above its table.", "scorer"),
    Term("ci", "±", "95% bootstrap interval over segments: the middle 95% of the scores on test sets resampled "
         "from this one.", "ranks"),
    Term("sd", "sd", "Standard deviation over replicate runs or reproductions of the same method: how much the score "
         "moves from run to run."),
    Term("rank-range", "rank range (1–2)", "Rows that a paired bootstrap of the composite cannot separate share a "
         "range; a rule marks where the next range starts.", "ranks"),
    Term("flip", "⇅3 flip distance", "Removing these 3 segments puts the next row above this one (a greedy upper "
         "bound; ⇅— never); the compare page lists them.", "flip"),
    Term("delta-rank", "Δrank", "A method's position in this domain against its position over all domains: ▲2 means "
         "two places better here, ▼1 one place worse."),
    Term("cost", "cost", "Declared API cost per segment in US dollars; \u201cno API cost (local)\u201d for a model run "
         "on the submitter's machine, \u201cnot priced\u201d when no price was recorded.", "cost-adjusted"),
    Term("mqm", "MQM", "Multidimensional Quality Metrics: an LLM judge marks error spans by category and severity; the "
         "penalty is lower-is-better.", "judges"),
    Term("context-behaviour", "context behaviour", "The last line of a GEMBA-MQM-context judge's answer on an entry "
         "with dialogue history: how the translation used the prior lines (one of five labels); an answer without "
         "it is a judge failure.", "context-behaviour"),
    Term("ctx-used_correctly", "used_correctly", "Context label: the translation needed the prior lines and used them "
         "correctly (or needed none and ignored them).", "context-behaviour"),
    Term("ctx-missed_required_context", "missed_required_context", "Context label: the prior lines decide the "
         "meaning (a referent, gender, register) and the translation did not take them into account.",
         "context-behaviour"),
    Term("ctx-ignored_irrelevant_context", "ignored_irrelevant_context", "Context label: the prior lines had no "
         "bearing on this line and the translation rightly left them aside.", "context-behaviour"),
    Term("ctx-misused_context", "misused_context", "Context label: the translation drew something from the prior "
         "lines wrongly (a wrong referent, text carried over from them).", "context-behaviour"),
    Term("ctx-unclear", "unclear", "Context label: the judge could not tell how the context was used; it is told to "
         "answer unclear on entries without history, which the board therefore leaves out.", "context-behaviour"),
    # where a number comes from
    Term("recomputed", "recomputed", "CI recomputed the number from the outputs stored in the run card; editing the "
         "card cannot change it.", "declared"),
    Term("declared", "ᵈ (declared)", "Reported by the submitter and not checked by CI: cost, latency, tokens, model "
         "identity, date. Shown in italics with a dotted underline.", "declared"),
    Term("judge", "ʲ (LLM judge)", "A score given by an LLM judge, with its spread over judge runs.", "judges"),
    # standing
    *(Term(tier_key(t), f"{st.TIER_ICON[t]} {st.TIER_LABEL[t]}", _TIER_TEXT[t][0].upper() + _TIER_TEXT[t][1:] + ".", "tiers")
      for t in st.TIERS),
    Term("drift-canary", "drift canary", "A weekly re-run of an API model's card on 12 fixed development entries of "
         "its language pair; “⚠ drifted” marks a row whose latest canary composite lies outside the "
         "card's own 95% interval on the same entries.", "canaries"),
    Term("informal", "informal", "A development board: public segments anyone can run and submit; its results are "
         "informal, unlike the official board's, which come from a secret gold-standard segment."),
    Term("official", "official", "Scored by the project on the secret gold_standard segment that no submitter sees; "
         "only community-verified methods appear there."),
    Term("quality-tier", "quality tier", "A provisional label (baseline, emerging, functional, deployable, fluent) "
         "from the composite's thresholds; not a quality guarantee.", "quality-tiers"),
    # the segments
    Term("segment", "segment", "One source text with its human reference translation; a corpus is split into "
         "development, gold_standard and held_out segments."),
    Term("diagnostic", "diagnostic", "The diagnostic segment (spec §2.3): public entries that test one phenomenon "
         "(in the committed corpora, placeholders); cards run on it are listed on the corpus's diagnostic board in "
         "diagnostic order, never ranked and never counted on the development board."),
    Term("domain", "domain", "The kind of text a segment comes from (tech, ui, medical, legal, literary, news, gov); "
         "each board has a view per domain.", "domains"),
    Term("outcome", "outcome", "The mechanical check of one output: usable, no_usable_output (empty, refusal, "
         "cut off) or source_untranslated (the source copied back).", "outcomes"),
    Term("flag", "flag", "A recorded warning about an output: commentary, a lost placeholder, a foreign script, "
         "markup, Apertium unknown-word marks removed (unknown_marks) …; flags do not change the composite; some lower the "
         "screen-ready score.", "outcomes"),
    Term("meaning-mismatch", "meaning mismatch", "The semantic check found the output far from the reference in "
         "meaning (similarity below 0.5) although it passed the mechanical checks.", "semantic"),
    Term("hallucination", "hallucination", "An output whose similarity to its own source is below 0.3: text that "
         "does not translate the source.", "semantic"),
)
"""Every glossary entry, in the glossary page's order."""

BY_KEY: dict[str, Term] = {t.key: t for t in TERMS}


@dataclass(frozen=True)
class TierTerm:
    """A verification tier as the boards' key shows it: glossary ``key``, ``icon`` and ``label``."""

    key: str
    icon: str
    label: str


TIER_TERMS: tuple[TierTerm, ...] = tuple(TierTerm(tier_key(t), st.TIER_ICON[t], st.TIER_LABEL[t])
                                         for t in reversed(st.TIERS))
"""The verification tiers, strongest first (the order of the boards' key)."""


def term_html(key: str, glossary_href: str, text: str | None = None, tooltip: bool = True) -> Markup:
    """``<a class="mtb-term" href="<glossary_href>#<key>" title="<one line>">text</a>`` for glossary term ``key``
    (``text`` defaults to the term's label; a str is escaped, Markup kept as it is). The title is the tooltip
    (Material ``content.tooltips``); the link opens the full entry. ``tooltip`` False leaves the title out: for a term
    repeated on every row of a table (a board's verification cell: ~115 bytes a row in each of a board's 8 views,
    issue 35), whose line the page's legend carries once (the link still opens the entry; ``site/assets/board.js``
    copies the legend's title onto a board's verification links). Raises KeyError for a term the
    glossary does not have, so a page cannot cite a missing entry."""
    t = BY_KEY[key]
    shown = escape(t.label if text is None else text)
    if not tooltip:
        return Markup('<a class="mtb-term" href="{}#{}">{}</a>').format(glossary_href, key, shown)
    return Markup('<a class="mtb-term" href="{}#{}" title="{}">{}</a>').format(glossary_href, key, t.short, shown)


__all__ = ["METHODOLOGY_PAGES", "SECTIONS", "Section", "ANCHORS", "TERMS", "BY_KEY", "Term", "TierTerm", "TIER_TERMS",
           "methodology_target", "term_html", "tier_key", "tier_text"]
