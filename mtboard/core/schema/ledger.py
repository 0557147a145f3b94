"""The board ledger as published (issue 31): ``data/ledger.json`` on the site, ``mtboard ledger --json``.

One file from which anyone can audit the board: per board (dataset id + version + segment), one row per fingerprint
with its standing — tier and the evidence for it, reproductions, coverage, ranked or not and why, whether its values
are declared — and its ranks on every view. Decided by :mod:`mtboard.ledger.standing` and
:mod:`mtboard.ledger.methods`; written by :mod:`mtboard.ledger.document`. ``schema`` names the version of this shape.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from mtboard.core.schema.common import Count, Hex64, Rate, Strict, Temperature, _omit_none

LEDGER_SCHEMA = "mtboard.ledger/2"
"""The ``schema`` value of this version of the ledger. ``mtboard.ledger/2`` (issue 35, "bytes"): a row's ``tries``
leaves out ``others``, the model's other fingerprints on the board. Listed on every row of the model, they grew with
the square of a model's tries (a sweep of 200 conditions on one board: 200 × 199 fingerprints; 33 MB of the 56 MB
ledger at 5,000 synthetic cards); they are the board's rows with the same ``tries.model``. Ledgers of version 1
(earlier builds, history snapshots) still load."""

TierName = Literal["self-benchmarked", "rerun-unattested", "gds-verified", "community-verified"]
"""Verification tiers (spec §9.4), weakest first; ``rerun-unattested``: a maintainer re-run whose GitHub artifact
attestation does not verify."""

_BUILD_RE = r"^[0-9a-f]{12}$"
"""A build id: 12 hex (:func:`mtboard.ledger.document.build_id`)."""
_KEY_RE = r"^[a-z0-9][a-z0-9._-]{0,199}$"
"""A board key: a page name (leaderboards/<key>.html), never a path."""
_ISO_UTC_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"
"""``built_at``: ISO 8601 UTC to the second (it names snapshot files: nothing else may reach a path)."""


class LedgerEvidence(Strict):
    """What one member card earned, and from which file."""

    tier: TierName
    card: str
    """The member card (path under submissions/)."""
    run_card_hash: str
    kind: Literal["verification record", "attested gold row + community review"]
    source: str | None
    """The verification record (path under submissions/) or the review record (path under reviews/)."""
    attested: bool
    rescored_from: Hex64 | None = None
    """When the record is about a card the member was re-scored from (``mtboard rescore``): that card's
    run_card_hash; the ledger checked that the method is the same and the scores still agree with the re-run."""


class LedgerMember(Strict):
    """One submitted run card of the row (a verification record is evidence, never a member)."""

    card: str
    """Path under submissions/."""
    page: str = Field(pattern=r"^runs/[0-9a-f]{16}\.html$")
    """The run page (site path)."""
    run_card_hash: str
    timestamp: str
    composite: float | None = Field(ge=0.0, le=1.0)
    """Whole-segment composite (replicate mean for ``--runs N``)."""
    earned: TierName
    """The tier this card earned by itself."""


class LedgerReproduction(Strict):
    count: Count
    """Member run cards (1: not reproduced yet)."""
    agree: bool | None
    """None with one member; whether every member's composite lies within ±2 % of the representative's."""
    spread: float | None = Field(ge=0.0, le=1.0)
    """max − min of the members' composites."""
    text: str
    """What the board says: "", "reproduced ×N" or "reproductions disagree (a vs b)"."""


class LedgerCoverage(Strict):
    entries: Count
    of: Count | None
    """The segment's entry count (None when the corpus is not loaded)."""
    limit: Count | None
    """``--limit N`` of the run."""
    subset: bool
    text: str


class LedgerFloor(Strict):
    """A ranked row that is not significantly above a floor sentinel on a view (issue 38)."""

    sentinel: Literal["copy-source", "shuffled"]
    composite: float = Field(ge=0.0, le=1.0)
    """The sentinel's composite on the view."""
    p: float = Field(ge=0.0, le=1.0)
    """Two-sided p-value of the paired bootstrap test (1 when the row's composite is not above the sentinel's)."""


class LedgerSentinel(Strict):
    """One sentinel line on one view of a board (issue 38; :mod:`mtboard.score.sentinels`): never ranked."""

    view: str
    """``all`` or a domain."""
    name: Literal["copy-source", "shuffled", "truncated", "doubled", "markup-stripped", "wrong-language"]
    floor: bool
    """copy-source and shuffled: a submission must score significantly above it."""
    composite: float = Field(ge=0.0, le=1.0)
    composite_ci: tuple[Rate, Rate] | None
    chrf: float = Field(ge=0.0, le=100.0)
    covered: Count
    """Entries of the view the sentinel has a text for (the others score 0)."""
    entries: Count
    """Entries of the view."""
class LedgerFlip(Strict):
    """The flip distance from a ranked row to the next ranked row of the same view (issue 38 item 4;
    :mod:`mtboard.ledger.flip`): the fewest segments whose removal from the view puts the next row strictly above
    this one at the composite's 6-decimal rounding, as the greedy upper bound finds them
    (:func:`mtboard.score.flip.flip_greedy`)."""

    below: Hex64
    """The next ranked row's fingerprint."""
    segments: Count | None
    """How many segments (None: no removal of fewer than all the view's segments reverses the order)."""
    entries: list[int]
    """The removed segments' entry ids, ascending."""
    method: Literal["greedy"]
    """How the count was found: ``greedy``, an upper bound on the exact distance."""


class LedgerRank(Strict):
    """The row's place on one view of its board (the whole segment, or one domain)."""

    view: str
    """``all`` or a domain."""
    rank: str
    """Rank label (a range when the paired bootstrap cannot separate rows, e.g. ``2–3``), ``ref.`` for a reference
    baseline."""
    position: Count | None
    rank_lo: Count | None
    rank_hi: Count | None
    cluster: Count | None
    composite: float | None = Field(ge=0.0, le=1.0)
    composite_ci: tuple[Rate, Rate] | None
    chrf: float | None = Field(ge=0.0, le=100.0)
    """Corpus chrF++ (0–100)."""
    inside_floor: LedgerFloor | None = None
    """A ranked row inside a floor sentinel's rank cluster on this view (issue 38; :mod:`mtboard.ledger.sentinels`):
    the first such floor (copy-source, then shuffled); None when the row clears both, or for a reference baseline."""
    flip: LedgerFlip | None = None
    """The flip distance to the next ranked row of this view (issue 38 item 4); None for the last ranked row, a
    reference baseline, and in ledgers published before issue 38."""


class LedgerTries(Strict):
    """How many methods of the row's model the board holds (issue 37 item 4; :mod:`mtboard.ledger.tries`)."""

    model: str
    """The model key: the model record's slug (``models/<slug>.yaml``), else the card's ``model_slug``."""
    count: Count
    """The model's full-coverage fingerprints on this board (reference baselines never counted)."""
    subsets: Count
    """The model's subset fingerprints on this board, counted apart."""
    best: Hex64 | None
    """Fingerprint of the model's best row (best position on the whole-segment view); None when none is ranked."""
    others: list[Hex64] | None = None
    """``mtboard.ledger/1`` only: the model's other fingerprints on this board, full coverage first, then subsets
    (each group in the order of the rows' first card path). Left out from version 2 on: they are the fingerprints of
    the board's other rows whose ``tries.model`` is this one (``coverage.subset`` tells the two groups apart)."""
    text: str
    """What the board says: "" (tried once), "best of N", "best of N (K subsets)" or "1 of N tries …; best: …"; N is
    every try, ``count`` + ``subsets``."""

    @model_serializer(mode="wrap")
    def _omit_others(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_none(handler(self), ("others",))


class LedgerClaimMark(Strict):
    """A contamination claim that marks the row (issue 37): a filed claim (open or confirmed) or the automatic one."""

    anchor: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,199}$")
    """The claim's anchor on the site's Contamination page (``contamination.html#<anchor>``)."""
    text: str
    """What the row says: ``contamination claim (open)`` or ``declared training data overlaps: <packages>``."""
    status: Literal["open", "confirmed", "automatic"]
    path: str | None
    """The claim file (``contamination/<name>.yaml``); None for the automatic claim."""


class LedgerCleanSubset(Strict):
    """The row's composite on the entries added after its model's training cutoff (issue 37; entries' ``added`` is an
    extension of spec §2.2)."""

    cutoff: str
    """The model record's ``training_cutoff`` (YYYY, YYYY-MM or YYYY-MM-DD; the whole month or year included)."""
    entries: Count
    """Entries after the cutoff (at least 1)."""
    composite: float = Field(ge=0.0, le=1.0)
    composite_ci: tuple[Rate, Rate] | None
    """95 % bootstrap percentile interval, computed as the board's composite CI is."""
    text: str
    """What the board shows, e.g. ``0.412 [0.301, 0.520] on 3 entries after the cutoff (2024-08)``."""


class LedgerCanaryRun(Strict):
    """One canary run of the row's method (issue 38 item 3; ``canaries/history/``)."""

    date: str
    """When it ran (ISO 8601 UTC)."""
    composite: Rate
    chrf_plus_plus: float = Field(ge=0.0, le=100.0)
    outside: bool
    """Its composite lies outside the card's 95 % CI on the canary entries."""
    served: str
    """The model the server reported serving (``model_id``, else ``model_slug``)."""
    path: str
    """The run's record (``canaries/history/…``)."""


class LedgerDrift(Strict):
    """The row's drift canaries (issue 38 item 3; :mod:`mtboard.ledger.canaries`): the card's composite on its pair's
    canary entries with its 95 % bootstrap CI, and every canary run of the row's method, oldest first."""

    entries: Count
    """Canary entries (the set of the board's corpus in ``canaries/sets.yaml``)."""
    card_composite: Rate
    """The row's shown card's composite on those entries."""
    card_composite_ci: tuple[Rate, Rate] | None
    """95 % bootstrap percentile interval of that composite."""
    runs: list[LedgerCanaryRun]
    drifted: bool
    """The latest run's composite lies outside the CI: the model drifted since the card was made."""
    text: str
    """What the board shows of a drifted row (``drifted: canary 0.212 outside 0.611 [0.540, 0.690] (2026-12-04)``);
    for a row that did not drift, what the model page says."""


class LedgerVariants(Strict):
    """The variant-class lint of the row's shown card (spec §9.3.1; issue 39 item 2; :mod:`mtboard.score.variants`,
    docs/SCORING_SPEC.md §10): its matches on the entries with known variants against its other entries, one-sided
    Fisher exact test. A flag marks the row; it does not unrank it."""

    variant_entries: Count
    """The card's entries whose corpus entry has variants."""
    variant_matched: Count
    """Of those, hypotheses equal to the reference or a variant."""
    by_variant: Count
    """Of those, hypotheses equal to a variant only."""
    other_entries: Count
    """The card's other entries."""
    other_matched: Count
    """Of those, hypotheses equal to the reference."""
    p: float | None = Field(ge=0.0, le=1.0)
    """One-sided Fisher exact p-value; None when not tested."""
    flagged: bool
    """p < 0.001 and ≥ 90 % of the variant entries matched."""
    text: str
    """The one line the run page shows."""


ContextLabel = Literal["used_correctly", "missed_required_context", "ignored_irrelevant_context", "misused_context",
                       "unclear"]
"""The GEMBA-MQM-context labels (``../shared/spec/gemba-mqm-context-evaluation.txt``;
:data:`mtboard.judges.gemba_mqm.CONTEXT_BEHAVIORS`)."""


class LedgerLabelSlice(Strict):
    """One context-behaviour label's slice of the shown card's judged entries with history (issue 40 item 3;
    :mod:`mtboard.ledger.context_slices`)."""

    label: ContextLabel
    count: Count
    """Judged entries with history the judge gave this label."""
    share: Rate | None
    """count ÷ judged; None when nothing was judged."""
    share_ci: tuple[Rate, Rate] | None
    """95 % Wilson score interval of the share (small-n binomial; it does not collapse at 0 or all)."""
    mean_penalty: float | None = Field(ge=0.0)
    """Mean MQM penalty of the slice's entries (severity-weight points per entry: minor 1, major 5, critical 25;
    lower is better); None for an empty slice."""
    penalty_ci: tuple[float, float] | None
    """95 % seeded percentile bootstrap interval of the mean penalty; None for fewer than 2 entries."""


class LedgerContextSlices(Strict):
    """The shown card's context-behaviour slices (issue 40 item 3; :mod:`mtboard.ledger.context_slices`): its counted
    GEMBA-MQM judge's labels over the results whose corpus entry has dialogue history, derived from the stored
    verdicts (never from the card's summary)."""

    judge: str
    """The GEMBA-MQM judge's model."""
    with_history: Count
    """Results whose entry has history: ``judged`` + ``parse_failed`` + ``call_failed`` + ``not_sent``."""
    judged: Count
    """Scored verdicts among them: the denominator of every share."""
    parse_failed: Count
    """Judge failures after answers that did not parse (a missing, unknown or misplaced label among them)."""
    call_failed: Count
    """Judge failures without an answer (the judge's service failed)."""
    not_sent: Count
    """No usable output: the judge was not asked, no label."""
    excluded: Count
    """Results whose entry has no history: left out (the prompt tells the judge to answer ``unclear`` there)."""
    labels: list[LedgerLabelSlice]
    """One per label, in the spec's order."""


class LedgerScreenReady(Strict):
    """The screen-ready score of the row's shown card (issue 40 item 5; :mod:`mtboard.score.screen`,
    docs/SCORING_SPEC.md §4.8): the composite recomputed with hard-failed entries (commentary, a broken placeholder,
    more than 5 foreign-script letters) counted as no usable output, minus 0.05 per formatting flag averaged over the
    entries, capped at the composite, floored at 0. Shown beside the composite; nothing is ranked on it.

    Consistency (checked when the ledger is built or read): ``0 ≤ value ≤ composite``, and ``value == composite``
    when ``hard_failures`` and ``formatted`` are both 0."""

    value: Rate
    """0–1, over the whole segment (replicate cards: the mean over runs, as the composite's replicate mean)."""
    composite: Rate
    """The composite it is computed from (the card's; the replicate mean for ``--runs N``)."""
    hard_failures: Count
    """Entries counted as no usable output by the policy, over every run."""
    hard_by_rule: dict[str, Count]
    """Those entries by rule (``commentary``, ``placeholder``, ``foreign_script``)."""
    formatted: Count
    """Entries (not hard-failed) with at least one penalised formatting flag, over every run."""
    flags_by_rule: dict[str, Count]
    """Penalised flags by rule."""
    outputs: Count
    """Entries × runs."""
    penalty: float = Field(ge=0.0, le=0.25)
    """The formatting penalty subtracted (mean over runs of 0.05 × penalised flags ÷ entries; at most 5 flags an
    entry: 0.25)."""
    signature: str = Field(pattern=r"^screen:screen-[0-9]+\|")
    """The policy and its amounts (:func:`mtboard.score.screen.screen_signature`)."""
    text: str
    """What the run page says."""

    @classmethod
    def of(cls, sr: Any) -> LedgerScreenReady:
        """The published form of a :class:`mtboard.score.screen.ScreenReady` (read by attribute). Raises
        pydantic.ValidationError (a ValueError) when it breaks a range or the consistency rules below."""
        return cls(value=sr.value, composite=sr.composite, hard_failures=sr.hard_failures,
                   hard_by_rule=sr.hard_by_rule, formatted=sr.formatted, flags_by_rule=sr.flags_by_rule,
                   outputs=sr.outputs, penalty=sr.penalty, signature=sr.signature, text=sr.text)

    @model_validator(mode="after")
    def _consistent(self) -> LedgerScreenReady:
        if self.value > self.composite:
            raise ValueError(f"screen-ready {self.value} is above its composite {self.composite} (allowed: at most "
                             "the composite, docs/SCORING_SPEC.md §4.8)")
        if self.hard_failures == 0 and self.formatted == 0 and self.value != self.composite:
            raise ValueError(f"screen-ready {self.value} differs from its composite {self.composite} without a hard "
                             "failure or a formatting flag (allowed: equal, docs/SCORING_SPEC.md §4.8)")
        if sum(self.hard_by_rule.values()) != self.hard_failures:
            raise ValueError("hard_by_rule does not sum to hard_failures")
        if self.hard_failures + self.formatted > self.outputs:
            raise ValueError("more flagged entries than outputs")
        return self


class LedgerModel(Strict):
    """The row's model as its record describes it (issue 37 items 1–2; :mod:`mtboard.ledger.facts`): the values the
    board's filters use. ``unknown`` where the record says nothing or there is no (valid) record."""

    record: str | None
    """The model record's slug (``models/<slug>.yaml``); None without a valid record."""
    link: Literal["record", "refused", "none", "baseline"]
    """``record`` (a valid record), ``refused`` (its bound values disagree with it; treated as absent), ``none`` (no
    record) or ``baseline`` (echo/empty: no model)."""
    link_text: str
    """What the row says of its record: "" for a valid one, ``no model record``, ``model record refused`` or
    ``baseline (no model)``."""
    weights: str
    """``open``, ``closed``, ``api-only`` or ``unknown``."""
    size: str
    """Size bucket by parameter count: ``lt1b``, ``1-10b``, ``10-100b``, ``ge100b`` or ``unknown``."""
    licence: str
    organisation: str
    quantization: str
    method_class: str


class LedgerScorer(Strict):
    """The scorer that made the row's numbers (issue 38 item 2; :func:`mtboard.score.lineage.scorer_of` of the shown
    card, read from its signatures)."""

    harness: str
    sacrebleu: str | None
    textnorm: str | None
    """The text normalisation's version (``textnorm:N`` in the metric signatures)."""
    policy: str | None
    """The mechanical policy (``policy:…`` in the composite signature)."""
    semantic: str | None
    """The semantic model: name, package and weights' hash; None without a semantic score."""
    older: str | None = None
    """When the board mixes scorers and this row's is not the newest: what the row says (``older scorer: textnorm
    1``); None otherwise (:mod:`mtboard.ledger.scorers`)."""


class LedgerRow(Strict):
    fingerprint: Hex64
    method: str
    model_slug: str
    temperature: Temperature | None
    """The sampling temperature sent (None: an engine that takes none); with ``method`` it tells rows apart."""
    tier: TierName
    tier_label: str
    """What every page says for the tier."""
    evidence: list[LedgerEvidence]
    representative: str
    """The member whose values the row shows (strongest evidence, then earliest)."""
    members: list[LedgerMember]
    """Oldest first."""
    reproduction: LedgerReproduction
    coverage: LedgerCoverage
    ranked: bool
    unranked_reason: str | None
    reference: bool
    """A reference baseline (echo, empty): listed, never ranked."""
    declared: bool
    """The row's declared values (model identity, settings, date, cost, latency) are the contributor's, unconfirmed by a
    GDS or community verification."""
    ranks: list[LedgerRank]
    """Ranked rows: the whole segment first, then each domain view. Empty for an unranked row."""
    tries: LedgerTries | None = None
    """The model's tries on this board (issue 37 item 4); None for a reference baseline (and in ledgers published
    before issue 37)."""
    contamination: list[LedgerClaimMark] = Field(default_factory=list)
    """Contamination claims marking the row (issue 37); empty when none."""
    clean_subset: LedgerCleanSubset | None = None
    """The composite on entries added after the model's training cutoff; None when no such entry was evaluated."""
    model: LedgerModel | None = None
    """The row's model facts (issue 37; None in ledgers published before it)."""
    scorer: LedgerScorer | None = None
    """The scorer of the row's numbers (issue 38; None in ledgers published before it)."""
    rescored_from: list[Hex64] = Field(default_factory=list)
    """Fingerprints the shown card was re-scored from (``mtboard rescore``/``mtboard lineage``; its
    ``rescored_from``, oldest first): the changes page attributes a rank change to re-scoring through them."""
    drift: LedgerDrift | None = None
    """The row's drift canaries (issue 38 item 3); None when its method has no canary run."""
    variants: LedgerVariants | None = None
    """The variant-class lint of the shown card (issue 39 item 2); None when its corpus has no entry with variants."""
    context_behaviour: LedgerContextSlices | None = None
    """The shown card's context-behaviour slices (issue 40 item 3); None without a counted GEMBA-MQM judge or without
    an entry with dialogue history."""
    screen_ready: LedgerScreenReady | None = None
    """The screen-ready score of the shown card (issue 40 item 5); None in ledgers published before it."""


BOARD_STATES: tuple[str, ...] = ("baselines-only", "subsets-only", "nothing-ranked", "all-failing", "one-method",
                                  "ranked")
"""A board's states (:func:`mtboard.ledger.standing.board_state`), in the order they are tested (issue 34 item 2)."""
SITE_STATES: tuple[str, ...] = ("empty", "all-rejected", *BOARD_STATES, "mixed")
"""The whole site's states (:func:`mtboard.ledger.standing.site_state`): no card file, every card rejected, the state
every board shares, or boards in different states (``mixed``)."""


class LedgerState(Strict):
    """What a board, or the whole board, holds in words (issue 34 item 2): every page that says so shows
    ``sentence``."""

    kind: Literal[SITE_STATES]  # type: ignore[valid-type]
    """One of :data:`SITE_STATES` (a board's: :data:`BOARD_STATES`)."""
    sentence: str | None
    """What the pages say; None for an ordinary ranking (``ranked``, ``mixed``)."""


class LedgerBoard(Strict):
    key: str = Field(pattern=_KEY_RE)
    """The board's page name (leaderboards/<key>.html)."""
    dataset_id: str
    version: str
    segment: str
    sha256: Hex64
    """The corpus file's SHA-256."""
    language_pair: str
    ranked_entries: Count
    """Entries of the set the board ranks."""
    rows: list[LedgerRow]
    """Ranked rows in board order, then reference baselines, then unranked rows."""
    state: LedgerState | None = None
    """What the board holds in words (None in ledgers published before issue 34)."""
    scorer_note: str | None = None
    """When the board's rows come from two or more scorer versions: the line above its table naming them (issue 38;
    :mod:`mtboard.ledger.scorers`); None when they share one."""
    sentinels: list[LedgerSentinel] = []
    """Every view's sentinel lines (issue 38), views in board order, each view's highest composite first; empty in
    ledgers published before issue 38."""
    inseparable: list[str] = Field(default_factory=list)
    """The views (``all`` or a domain) ranking at least two rows where every adjacent pair's paired 95 % CI of the
    composite difference includes zero (issue 38 item 4; :mod:`mtboard.ledger.flip`): the board says so above the
    table."""
    diagnostic: str | None = None
    """The key of the corpus's diagnostic board (``Ledger.diagnostic``; issue 40 item 6); None when the corpus has no
    diagnostic segment (and in ledgers published before issue 40)."""


class LedgerDiagnosticGroup(Strict):
    """A diagnostic row's chrF++ on one phenomenon group (the diagnostic entries' recorded domain)."""

    group: str
    entries: Count
    chrf: float = Field(ge=0.0, le=100.0)


class LedgerDiagnosticRow(Strict):
    """One row of a diagnostic board (issue 40 item 6; :mod:`mtboard.ledger.diagnostic`): its standing, decided as
    every row's is, and the shown card's scores over its diagnostic entries. Never ranked."""

    fingerprint: Hex64
    method: str
    tier: TierName
    representative: str
    """The card whose values the row shows (path under submissions/)."""
    members: list[str]
    """Paths of the member cards, oldest first."""
    listed: bool
    """Listed in diagnostic order: a run of the whole segment that is not a reference baseline (the standing's
    ``ranked``); otherwise ``reason`` says why it is apart."""
    reason: str | None
    reference: bool
    """A reference baseline (echo, empty)."""
    entries: Count
    """Diagnostic entries the shown card evaluated."""
    chrf: float = Field(ge=0.0, le=100.0)
    """Corpus chrF++ over them (summed sacrebleu statistics; replicate runs: the mean)."""
    chrf_ci: tuple[float, float] | None
    """95 % bootstrap percentile interval (resamples seeded by the corpus and ``diagnostic``)."""
    composite: float = Field(ge=0.0, le=1.0)
    """The composite over the diagnostic entries (:func:`mtboard.score.subset.composite_on`)."""
    composite_ci: tuple[Rate, Rate] | None
    outcomes: dict[str, Count]
    """Mechanical outcome → entries."""
    failures: Count
    """Entries with a mechanical failure (no usable output, source untranslated, an error)."""
    placeholder_flags: Count
    """Entries where the mechanical ``placeholder`` rule fired."""
    groups: list[LedgerDiagnosticGroup]


class LedgerDiagnostic(Strict):
    """One corpus's diagnostic board (spec §2.3; issue 40 item 6): targeted tests of specific phenomena, never a
    ranking; nothing on it counts towards the development board."""

    key: str = Field(pattern=_KEY_RE)
    """The page name (diagnostic/<key>.html): the development board's key when the corpus has one."""
    board: str | None
    """The development board's key (None when the corpus has none)."""
    dataset_id: str
    version: str
    sha256: Hex64
    language_pair: str
    entries: Count
    """The corpus's diagnostic entries."""
    phenomenon: str
    """What the diagnostic entries target."""
    groups: dict[str, Count]
    """Phenomenon group (the entries' domain) → diagnostic entries."""
    rows: list[LedgerDiagnosticRow]
    """Listed rows in diagnostic order (composite, then chrF++, then method), then reference baselines, then runs on
    part of the segment."""


class Ledger(Strict):
    """The whole board at one build."""

    schema_: Literal["mtboard.ledger/1", "mtboard.ledger/2"] = Field(alias="schema")
    """``mtboard.ledger/2`` when written by this code (:data:`LEDGER_SCHEMA`); ``mtboard.ledger/1`` in earlier ones."""
    build: str = Field(pattern=_BUILD_RE)
    """The build id (hash of the boards' contents)."""
    built_at: str = Field(pattern=_ISO_UTC_RE)
    """UTC time of the build (ISO 8601, to the second)."""
    commit: str | None = Field(pattern=r"^[0-9a-f]{40}$")
    """The git commit the build was made from, when known."""
    boards: list[LedgerBoard]
    state: LedgerState | None = None
    """What the whole board holds in words: no submission, every submission rejected, or the state every board
    shares (None in ledgers published before issue 34)."""
    diagnostic: list[LedgerDiagnostic] = Field(default_factory=list)
    """Every corpus's diagnostic board, by key (issue 40 item 6); empty in ledgers published before it."""

    model_config = Strict.model_config | {"populate_by_name": True, "serialize_by_alias": True}


__all__ = ["LedgerScorer", "LEDGER_SCHEMA", "BOARD_STATES", "SITE_STATES", "TierName", "Ledger", "LedgerState",
           "LedgerBoard", "LedgerRow", "LedgerRank", "LedgerFloor", "LedgerSentinel", "LedgerFlip", "LedgerModel",
           "LedgerTries", "LedgerClaimMark", "LedgerCleanSubset", "LedgerMember", "LedgerCanaryRun", "LedgerDrift",
           "LedgerEvidence", "LedgerReproduction", "LedgerCoverage", "LedgerVariants", "LedgerContextSlices",
           "LedgerLabelSlice", "ContextLabel", "LedgerScreenReady",
           "LedgerDiagnostic", "LedgerDiagnosticRow", "LedgerDiagnosticGroup"]
