"""Every row's standing, decided once (issue 31): which board a card is on, which row (fingerprint) it belongs to, the
row's verification tier and the evidence for it, whether its reproductions agree, its coverage, whether it is ranked
and why not, and whether its values are declared.

A *board* is one dataset segment: dataset id + version + segment (+ the corpus SHA-256, which tells two different
files published under one version apart; spec §2, §3.3 ``dataset``). A *row* is every card of one board with the same
fingerprint hash (spec §3.8, design §3.4) — the *members*, each a submitted run card; a verification record or a
review is evidence about a member, never a member itself.

Decisions, in the order they are made (all in :func:`decide`):

* **Tier** (spec §9.4; :data:`TIERS`, weakest first): what each member earned on its own (:func:`earned`: a passed,
  consistent verification record → ``gds-verified`` when its attestation verifies, ``rerun-unattested`` otherwise;
  an attested gold row + a review that confirms a tier → ``community-verified``), and the row takes the best any
  member earned, naming the evidence (:class:`Evidence`). Adding a member can add evidence, never remove it.
* **Representative** (whose values the row shows): the member with the strongest evidence, then the earliest
  (timestamp, then page id) — a later reproduction never displaces the run that was verified.
* **Reproduction**: ``count`` members; with two or more, they *agree* when every member's composite lies within
  ±2 % (relative) of the representative's (:data:`REPRODUCED_TOLERANCE`, ``mtboard verify``'s tolerance).
* **Coverage**: entries evaluated against the segment's size (``--limit`` runs are subsets).
* **Ranked**: a board ranks the cards of its reference entry set (the full runs' most common set); a reference
  baseline (echo, empty) is listed, never ranked; every other row says why it is not ranked.
* **Declared**: a row's declared values (model identity, settings, dates, costs) stay the contributor's declaration
  until the row is GDS or community verified (schema binding ``declared``).

* **State** (issue 34 item 2): what a whole board holds, in words, when it is not an ordinary ranking
  (:func:`board_state`: only reference baselines, only subsets, no ranked method, every method failing every entry,
  one method), and what the whole site holds (:func:`site_state`: no submission, every submission rejected, or one
  state shared by every board). Every page that says so reads these sentences; none words a state of its own.

The rank, rank range and cluster come later, from the board's paired bootstrap (:mod:`mtboard.ledger.methods`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from mtboard.inputs.corpora.arms import SCENE_ARMS
from mtboard.core.schema import MethodClass, RunCard, Segment, VerificationTier
from mtboard.core.schema.ledger import BOARD_STATES, SITE_STATES
from mtboard.ledger.load import CorpusInfo, Inputs, LoadedCard
from mtboard.ledger.summary import summary
from mtboard.verify.record import UNATTESTED_LABEL

REPRODUCED_TOLERANCE = 0.02
"""Two member cards reproduce each other when their composites differ by at most 2 % (relative; design §2
principle 4, ``mtboard verify``'s tolerance)."""

SELF = VerificationTier.self_benchmarked.value
UNATTESTED = "rerun-unattested"
GDS = VerificationTier.gds_verified.value
COMMUNITY = VerificationTier.community_verified.value

TIERS: tuple[str, ...] = (SELF, UNATTESTED, GDS, COMMUNITY)
"""Verification tiers, weakest first (spec §9.4, plus the maintainer re-run whose attestation does not verify)."""

TIER_LABEL = {SELF: "self-benchmarked", UNATTESTED: UNATTESTED_LABEL, GDS: "GDS verified",
              COMMUNITY: "community verified"}
"""What every page says for a tier (one wording everywhere)."""

TIER_ICON = {SELF: "\u25cb", UNATTESTED: "\u25d0", GDS: "\u2714", COMMUNITY: "\u2714\u2714"}
"""The board's glyph for a tier: ○ self, ◐ maintainer re-run (unattested), ✔ GDS, ✔✔ community."""

VERIFIED = (GDS, COMMUNITY)
"""Tiers whose re-run confirmed the declared values."""

DIAGNOSTIC = Segment.diagnostic.value
"""The diagnostic segment (spec §2.3): its cards are planned and their rows' standings decided here like any other, but
their plan (key ``<dataset id>-v<version>-diagnostic``) is never a ranked board: :mod:`mtboard.ledger.diagnostic`
shows it as the development board's diagnostic view (issue 40 item 6)."""


@dataclass(frozen=True)
class Coverage:
    """How many entries a card evaluated against the dataset segment's size (issue 16: a 20-entry sweep card must
    not look like a full run). ``of`` is None when the corpus is not loaded; ``limit`` is the card's ``method.limit``
    (spec §3.3 ``dataset.entry_count``; ``--limit N``)."""

    entries: int
    of: int | None
    limit: int | None

    @property
    def subset(self) -> bool:
        return self.limit is not None or (self.of is not None and self.entries < self.of)

    @property
    def text(self) -> str:
        """``all 355`` for a full run; ``20 of 355`` (``20`` without the corpus) plus ``subset`` and the limit."""
        if not self.subset:
            return f"all {self.entries}" if self.of is not None else str(self.entries)
        base = f"{self.entries} of {self.of}" if self.of is not None else str(self.entries)
        return base + " subset" + (f" (--limit {self.limit})" if self.limit is not None else "")


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence for a row's tier: what a member earned, and from which file."""

    tier: str
    """The tier it earns (:data:`TIERS`, never ``self-benchmarked``)."""
    card: str
    """The member card it is about (path under submissions/)."""
    run_card_hash: str
    kind: str
    """``verification record`` or ``attested gold row + community review``."""
    source: str | None
    """The record (path under submissions/) or the review record (path under reviews/)."""
    attested: bool
    """The record's GitHub artifact attestation verified (:mod:`mtboard.verify.record`)."""
    via: str | None = None
    """The run_card_hash of the card the member was re-scored from, when the record is that card's (``mtboard
    rescore`` keeps the evidence: :func:`mtboard.ledger.load.lineage_problem`)."""


@dataclass(frozen=True)
class Reproduction:
    """The row's members as reproductions of one method."""

    count: int
    """Submitted run cards in the row (1: not reproduced yet)."""
    agree: bool | None
    """None for one card (or a member without a composite); True when every member's composite lies within ±2 % of
    the representative's."""
    composites: tuple[float | None, ...]
    """Each member's whole-segment composite (replicate mean for ``--runs N``), members oldest first."""
    spread: float | None
    """max − min of the composites (None with fewer than two)."""

    @property
    def text(self) -> str:
        """``""`` (one card), ``reproduced ×2``, or ``reproductions disagree (0.082 vs 0.078)``."""
        if self.count < 2:
            return ""
        if self.agree is False:
            shown = [f"{c:.3f}" for c in self.composites if c is not None]
            return f"reproductions disagree ({' vs '.join(shown)})"
        return f"reproduced \u00d7{self.count}"


@dataclass(frozen=True)
class Standing:
    """One row's standing on one board: every page and download reads this object (``LoadedCard.standing`` of each
    member is the row's), none decides a standing itself."""

    board: str
    """The board's key (:attr:`BoardPlan.key`)."""
    fingerprint: str
    tier: str
    evidence: tuple[Evidence, ...]
    representative: str
    """Path of the card whose values the row shows."""
    members: tuple[str, ...]
    """Paths of the member cards, oldest first."""
    reproduction: Reproduction
    coverage: Coverage
    ranked: bool
    unranked_reason: str | None
    """Why the row is not ranked (None when ranked)."""
    reference: bool
    """A reference baseline (echo, empty): listed, never ranked."""

    @property
    def label(self) -> str:
        return TIER_LABEL[self.tier]

    @property
    def icon(self) -> str:
        return TIER_ICON[self.tier]

    @property
    def declared(self) -> bool:
        """The representative's declared values are unconfirmed (no GDS or community verification)."""
        return self.tier not in VERIFIED

    @property
    def verified(self) -> bool:
        return self.tier in VERIFIED

    @property
    def rank_order(self) -> int:
        """0 (self-benchmarked) … 3 (community verified): the tier column's sort key."""
        return TIERS.index(self.tier)


@dataclass(frozen=True)
class BoardState:
    """What a board (or the whole site) holds, in words (issue 34 item 2): ``kind`` one of
    :data:`~mtboard.core.schema.ledger.BOARD_STATES` (:data:`~mtboard.core.schema.ledger.SITE_STATES` for the site),
    ``sentence`` what every page says of it — None for an ordinary ranking (``ranked``, and the site's ``mixed``)."""

    kind: str
    sentence: str | None


def _n(count: int, one: str, many: str | None = None) -> str:
    """``1 row`` / ``3 rows``: a count with its noun."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


@dataclass
class BoardPlan:
    """One board before any statistic: its cards, the entry set it ranks, the ranked and unranked cards."""

    key: str
    """URL-safe name: ``<dataset id>-v<version>``, plus ``-<segment>`` when the version has more than one segment on
    the site and ``-<sha256[:8]>`` when it has more than one corpus file."""
    dataset_id: str
    version: str
    segment: str
    sha256: str
    language_pair: str
    corpus: CorpusInfo | None
    cards: list[LoadedCard]
    """Sorted by page id."""
    ref_ids: list[int]
    ranked: list[LoadedCard]
    unranked: list[LoadedCard]
    rows: list[Standing] = field(default_factory=list)
    state: BoardState | None = None
    """What the board holds in words (:func:`board_state`), set by :func:`decide`."""


def earned(lc: LoadedCard) -> str:
    """The tier one card earned by itself (:data:`TIERS`), from its verification (:mod:`mtboard.ledger.load`)."""
    v = lc.verification
    if v.tier == COMMUNITY:
        return COMMUNITY
    if v.tier == GDS and v.attested:
        return GDS
    if v.label == UNATTESTED_LABEL:
        return UNATTESTED
    return SELF


def _evidence(lc: LoadedCard, tier: str) -> Evidence | None:
    if tier == SELF:
        return None
    v = lc.verification
    if tier == COMMUNITY:
        source = lc.review.source if lc.review is not None else None
        return Evidence(tier, lc.path, lc.card.run_card_hash or "", "attested gold row + community review", source,
                        True)
    return Evidence(tier, lc.path, lc.card.run_card_hash or "", "verification record", v.source, v.attested, v.via)


def card_composite(card: RunCard) -> float | None:
    """A card's whole-segment composite as the board shows it (the replicate mean for ``--runs N``)."""
    rep = card.scores.replicates
    return rep.composite_mean if rep is not None else card.scores.composite


def _reproduction(members: list[LoadedCard], rep: LoadedCard) -> Reproduction:
    comps = tuple(card_composite(lc.card) for lc in members)
    known = [c for c in comps if c is not None]
    base = card_composite(rep.card)
    agree = None
    if len(members) > 1 and base is not None and len(known) == len(comps):
        agree = all(abs(c - base) <= REPRODUCED_TOLERANCE * abs(base) for c in known)
    spread = (max(known) - min(known)) if len(known) > 1 else None
    return Reproduction(len(members), agree, comps, spread)


def is_reference(card: RunCard) -> bool:
    """Reference baselines (echo, empty): shown as reference lines, never ranked or counted in field statistics."""
    return card.method_class == MethodClass.baseline


def coverage(card: RunCard, plan: BoardPlan) -> Coverage:
    """The card's :class:`Coverage` on its board: the segment's entry count from the board's loaded corpus."""
    of = len(plan.corpus.corpus.segment(card.dataset.segment)) if plan.corpus is not None else None
    return Coverage(card.dataset.entry_count, of, card.method.limit)


def scene_view_reason(card: RunCard) -> str | None:
    """Why a card of a scene arm (``method.arm`` scene-bare, scene-context or scene-full; issue 40,
    :mod:`mtboard.inputs.corpora.arms`) is never ranked on its dataset's board, nor makes the board's entry set: its
    items are scenes (ids of their last lines; ``scene-full`` joins the scene's texts under that id), not the board's
    entries; its sweep page compares the arms. None for any other card."""
    arm = getattr(card.method, "arm", None)  # test doubles and cards read before issue 40 carry none
    if arm not in SCENE_ARMS:
        return None
    what = "each scene joined into one segment" if arm == "scene-full" else "one line per scene"
    return f"corpus view {arm} ({what}): scene items, not the board's entries; compared on its sweep page"


def _unranked_reason(lc: LoadedCard, plan: BoardPlan, cov: Coverage) -> str | None:
    if lc in plan.ranked:
        return "reference baseline: listed, never ranked" if is_reference(lc.card) else None
    view = scene_view_reason(lc.card)
    if view is not None:
        return view
    if lc.card.method.limit is not None:
        return f"subset run: {cov.text}; only runs of the board's whole entry set are ranked"
    return f"another entry set ({cov.text}) than the board's {len(plan.ref_ids)} ranked entries"


def _key(card: RunCard) -> tuple[str, str, str, str]:
    d = card.dataset
    return d.id, d.version, str(d.segment), d.sha256


def _plans(inputs: Inputs) -> list[BoardPlan]:
    groups: dict[tuple[str, str, str, str], list[LoadedCard]] = defaultdict(list)
    for lc in inputs.cards:
        groups[_key(lc.card)].append(lc)
    corpora = {(c.corpus.dataset.id, c.corpus.dataset.version, c.sha256): c for c in inputs.corpora}
    segments = Counter((k[0], k[1], k[2]) for k in groups)
    # the diagnostic segment is never a board of its own (spec §2.3; issue 40 item 6: mtboard/ledger/diagnostic.py):
    # its cards neither rename the development board nor count as another segment of the version
    n_segments = Counter(k[:2] for k in {(k[0], k[1], k[2]) for k in groups if k[2] != DIAGNOSTIC})
    plans = []
    for key in sorted(groups):
        ds_id, version, segment, sha = key
        cards = sorted(groups[key], key=lambda lc: lc.page_id)
        name = f"{ds_id}-v{version}"
        if segment == DIAGNOSTIC or n_segments[(ds_id, version)] > 1:
            name += f"-{segment}"
        if segments[(ds_id, version, segment)] > 1:
            name += f"-{sha[:8]}"
        # a --limit card is never ranked while full runs exist: many subset runs (a sweep's) must not make their
        # subset the board's reference set
        # … nor a scene arm's card (issue 40): its items are scenes under the ids of their last lines
        lines = [lc for lc in cards if scene_view_reason(lc.card) is None]
        candidates = [lc for lc in lines if lc.card.method.limit is None] or lines
        sets = Counter(tuple(sorted(summary(lc).ids)) for lc in candidates)
        ref_ids = sorted(max(sets.items(), key=lambda kv: (kv[1], len(kv[0]), kv[0]))[0]) if sets else []
        ranked = [lc for lc in candidates if sorted(summary(lc).ids) == ref_ids]
        unranked = [lc for lc in cards if lc not in ranked]
        plans.append(BoardPlan(name, ds_id, version, segment, sha, cards[0].card.dataset.language_pair,
                               corpora.get((ds_id, version, sha)), cards, ref_ids, ranked, unranked))
    return plans


def _strength(lc: LoadedCard) -> tuple[int, str, str]:
    """Sort key, strongest first: tier earned (descending), then timestamp and page id (earliest first)."""
    return (-TIERS.index(earned(lc)), lc.card.timestamp, lc.page_id)


def _row(plan: BoardPlan, members: list[LoadedCard]) -> Standing:
    members = sorted(members, key=lambda lc: (lc.card.timestamp, lc.page_id))
    rep = min(members, key=_strength)
    evidence = tuple(e for lc in members if (e := _evidence(lc, earned(lc))) is not None)
    tier = max((earned(lc) for lc in members), key=TIERS.index)
    cov = coverage(rep.card, plan)
    reason = _unranked_reason(rep, plan, cov)
    return Standing(plan.key, rep.card.fingerprint.hash, tier, evidence, rep.path, tuple(lc.path for lc in members),
                    _reproduction(members, rep), cov, reason is None, reason, is_reference(rep.card))


def _fails_everything(lc: LoadedCard) -> bool:
    """No entry of the card has a usable output (every entry failed the mechanical checks)."""
    return summary(lc).fails_everything


def board_state(plan: BoardPlan) -> BoardState:
    """The board's :class:`BoardState`, from its decided rows (the first of
    :data:`~mtboard.core.schema.ledger.BOARD_STATES` that holds):

    * ``baselines-only`` — every row is a reference baseline (echo, empty): nothing is ranked;
    * ``subsets-only`` — no row covers the whole segment (every row's :class:`Coverage` is a subset): the board ranks
      the most common subset, not its dataset;
    * ``nothing-ranked`` — no method row is ranked: the board's only runs of its entry set are reference baselines,
      every other row ran a subset or another entry set;
    * ``all-failing`` — no method row has one usable output (every entry failed the mechanical checks);
    * ``one-method`` — one ranked method row: nothing to compare it with;
    * ``ranked`` — an ordinary ranking (no sentence).

    Source: issue 34 item 2 ("every board state renders ... says so in words")."""
    rows = plan.rows
    methods = [s for s in rows if not s.reference]
    ranked = [s for s in methods if s.ranked]
    cards = {lc.path: lc for lc in plan.cards}
    if not methods:
        what = "is a reference baseline" if len(rows) == 1 else "are reference baselines"
        return BoardState("baselines-only", f"Only baselines so far: this board's {_n(len(rows), 'row')} {what} "
                                            "(echo, empty), listed but never ranked; no translation method has been "
                                            "run on it yet.")
    if rows and all(s.coverage.subset for s in rows):
        of = rows[0].coverage.of
        whole = f"its {_n(of, 'entry', 'entries')}" if of is not None else "its entries"
        return BoardState("subsets-only", f"No row covers the whole dataset yet: every run on this board evaluated "
                                          f"a subset of {whole}, so its ranks compare "
                                          f"{_n(len(plan.ref_ids), 'entry', 'entries')} only.")
    if not ranked:
        return BoardState("nothing-ranked", f"No method is ranked on this board yet: its only runs of the board's "
                                            f"{_n(len(plan.ref_ids), 'entry', 'entries')} are reference baselines; "
                                            + ("the other row ran a subset or another entry set and is"
                                               if len(methods) == 1 else f"the other {len(methods)} rows ran a subset "
                                               "or another entry set and are") + " listed unranked.")
    if all(_fails_everything(cards[s.representative]) for s in methods):
        return BoardState("all-failing", f"Every method on this board failed every entry: no output of its "
                                         f"{_n(len(methods), 'method row')} passed the mechanical checks, so each "
                                         "entry is scored as an empty output.")
    if len(ranked) == 1:
        return BoardState("one-method", "Only one method is ranked on this board so far: there is no other method "
                                        "to compare it with yet.")
    return BoardState("ranked", None)


_SITE_SENTENCES = {
    "baselines-only": "Only baselines so far: every run card on the board is a reference baseline (echo, empty), "
                      "listed but never ranked; no translation method has been submitted yet.",
    "subsets-only": "No row covers the whole dataset yet: every run card on the board evaluated a subset of its "
                    "dataset's entries, so each board ranks a subset, not its dataset.",
    "nothing-ranked": "No method is ranked yet: on every board the only runs of the board's entry set are reference "
                      "baselines, and every other run is listed unranked.",
    "all-failing": "Every method so far failed every entry: no output passed the mechanical checks, so each entry is "
                   "scored as an empty output.",
    "one-method": "Only one method per board so far: no board has a second method to compare it with yet.",
}


def site_state(plans: list[BoardPlan], rejected: int) -> BoardState:
    """The whole site's :class:`BoardState` (:data:`~mtboard.core.schema.ledger.SITE_STATES`): ``empty`` (no card
    file at all), ``all-rejected`` (every one of the ``rejected`` card files failed loading or validation: no board),
    the state every board shares (:func:`board_state`; ``ranked``: no sentence), else ``mixed`` (each board says its
    own; no sentence).

    Source: issue 34 item 2."""
    if not plans:
        if rejected == 0:
            return BoardState("empty", "No submissions yet: the submissions folder holds no run card, so there is "
                                       "no board to show.")
        every = "The only submitted run card was" if rejected == 1 else f"All {rejected} submitted run cards were"
        return BoardState("all-rejected", f"{every} rejected by the validator: no board can be shown yet.")
    kinds = {(p.state or board_state(p)).kind for p in plans}
    if len(kinds) > 1:
        return BoardState("mixed", None)
    kind = kinds.pop()
    if kind == "one-method" and len(plans) == 1:
        return BoardState(kind, "Only one method so far: there is no other method to compare it with yet.")
    return BoardState(kind, _SITE_SENTENCES.get(kind))


def decide(inputs: Inputs) -> list[BoardPlan]:
    """Group ``inputs.cards`` into boards and rows and decide every row's standing; each card's ``standing`` is set to
    its row's (the only place a standing is decided). Boards come sorted by key, rows by first member."""
    plans = _plans(inputs)
    for plan in plans:
        rows: dict[tuple[str, bool], list[LoadedCard]] = {}
        for lc in plan.cards:
            # a fingerprint covers the entry set (entry_ids_sha256), so ranked and unranked cards never share one;
            # keyed by both anyway: a row is either ranked or not
            rows.setdefault((lc.card.fingerprint.hash, lc in plan.ranked), []).append(lc)
        for members in rows.values():
            standing = _row(plan, members)
            plan.rows.append(standing)
            for lc in members:
                lc.standing = standing
        plan.rows.sort(key=lambda s: (not s.ranked, s.reference, s.members[0]))
        plan.state = board_state(plan)
    return plans


__all__ = ["REPRODUCED_TOLERANCE", "TIERS", "TIER_LABEL", "TIER_ICON", "VERIFIED", "BOARD_STATES", "SITE_STATES",
           "DIAGNOSTIC", "Coverage", "Evidence", "Reproduction", "Standing", "BoardState", "BoardPlan", "earned",
           "card_composite", "coverage", "is_reference", "board_state", "site_state", "decide"]
