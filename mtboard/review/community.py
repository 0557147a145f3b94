"""Community review (spec §7.2–7.3, §5; issue 18): the seeded stratified sample a reviewer rates, reading review
records safely, what the ratings of one card add up to, agreement between reviewers, and the gate that keeps
"deployable" and "fluent" provisional until people who read the target language have confirmed them.

Files (schemas :class:`~mtboard.core.schema.ReviewRecord`, :class:`~mtboard.core.schema.ReviewersFile`):

* ``reviews/<dataset>/<run>.yaml`` — the reviews of the card ``submissions/<dataset>/<run>.json`` (one item of
  ``reviews`` per reviewer), added by pull request; the review page on the site downloads one.
* ``reviews/reviewers.yaml`` — the people a maintainer has listed, with the languages they review.

The rule (docs/SCORING_SPEC.md §5.1, mirrored by :data:`PASS_RULES`): ratings of listed reviewers on entries of the
card's seeded sample are pooled; a card's review *confirms* a tier when at least :data:`MIN_REVIEWED` distinct
entries were rated and the pooled shares meet that tier's rule. Nothing here reads the site or the validator: the
data flows card → review record → this module → validator / site.
"""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mtboard.core import safejson
from mtboard.core.documents import validate_model
from mtboard.core.schema import (EntryResult, QualityTier, Rating, ReviewersFile, ReviewRecord, RunCard, Segment)
from mtboard.score.stats import cohen_kappa

REVIEWS_DIR = "reviews"
"""Folder of review records, beside ``submissions/``."""
REVIEWERS_FILE = "reviewers.yaml"
"""The maintained reviewers list inside :data:`REVIEWS_DIR`."""
MAX_REVIEW_BYTES = 256 * 1024
"""Largest review record read (a 1000-entry review with 2000-character notes fits)."""
MAX_REVIEWERS_BYTES = 1024 * 1024
DEFAULT_SEED = 20261201
"""Sampling seed ``mtboard review sample`` and the review page use unless told otherwise."""
MIN_REVIEWED = 30
"""Distinct sampled entries that must be rated before a review can confirm a tier (spec §7.3; issue 18: ≥ 30)."""
REVIEWABLE_SEGMENTS = (Segment.development, Segment.diagnostic)
"""Only public entries are shown to reviewers (secret segments never leave the verifier, spec §8)."""

RATING_ORDER: tuple[Rating, ...] = (Rating.reject, Rating.gist, Rating.acceptable, Rating.excellent)
"""Worst first (spec §7.3)."""
USABLE = frozenset({Rating.acceptable, Rating.excellent})
"""Ratings that say the output can be used as it is."""


@dataclass(frozen=True)
class PassRule:
    """The pooled shares a review needs to confirm a tier (docs/SCORING_SPEC.md §5.1)."""

    min_usable: float
    """Share of ratings acceptable or excellent, at least."""
    max_reject: float
    """Share of ratings reject, at most."""
    min_excellent: float = 0.0
    """Share of ratings excellent, at least."""


PASS_RULES: dict[QualityTier, PassRule] = {
    QualityTier.deployable: PassRule(min_usable=0.80, max_reject=0.05),
    QualityTier.fluent: PassRule(min_usable=0.90, max_reject=0.02, min_excellent=0.50),
}
"""The tiers that need human confirmation (spec §5, §7.2) and their rules, mirrored in docs/SCORING_SPEC.md §5.1
(a test reads the table there)."""
GATED = (QualityTier.deployable, QualityTier.fluent)


# --------------------------------------------------------------------------------------------------------------------
# Sampling


def reviewable(card: RunCard) -> list[EntryResult]:
    """The card's run-0 results a reviewer may see (public segments), in card order."""
    return [r for r in card.results if r.segment in REVIEWABLE_SEGMENTS]


def _stratum(r: EntryResult) -> tuple[str, int]:
    return (r.domain.value if r.domain is not None else "", r.difficulty if r.difficulty is not None else 0)


def sample_entries(card: RunCard, size: int = MIN_REVIEWED, seed: int = DEFAULT_SEED) -> list[EntryResult]:
    """A stratified random sample of the card's reviewable entries (spec §7.3 step 2: by difficulty; issue 18: and
    by domain).

    Strata are (domain, difficulty) pairs. Each gets ``size × its share`` entries rounded down, and the entries left
    over go to the strata with the largest remainders (ties: stratum order) — the largest-remainder method, so the
    sample's mix follows the card's. Within a stratum, entries are drawn with ``random.Random(seed)`` from the
    entry ids in ascending order, strata visited in sorted order: the same card, size and seed give the same sample
    on every machine (the validator redraws it). ``size`` ≥ the number of entries: all of them.

    Returns: the drawn results ordered by stratum, then entry id. Raises: ValueError for ``size`` < 1.
    """
    if size < 1:
        raise ValueError("sample size must be at least 1")
    pool = reviewable(card)
    if size >= len(pool):
        return sorted(pool, key=lambda r: (_stratum(r), r.entry_id))
    strata: dict[tuple[str, int], list[EntryResult]] = defaultdict(list)
    for r in pool:
        strata[_stratum(r)].append(r)
    keys = sorted(strata)
    exact = {k: size * len(strata[k]) / len(pool) for k in keys}
    quota = {k: int(exact[k]) for k in keys}
    left = size - sum(quota.values())
    for k in sorted(keys, key=lambda k: (-(exact[k] - quota[k]), k))[:left]:
        quota[k] += 1
    rng = random.Random(seed)
    out: list[EntryResult] = []
    for k in keys:
        members = sorted(strata[k], key=lambda r: r.entry_id)
        out.extend(sorted(rng.sample(members, quota[k]), key=lambda r: r.entry_id))
    return out


def sample_note(drawn: int, size: int = MIN_REVIEWED) -> str | None:
    """What a reviewer must know when the sample is smaller than a review needs (None when it is not): a review of
    fewer than :data:`MIN_REVIEWED` distinct entries cannot confirm a tier (docs/SCORING_SPEC.md §5.1;
    :func:`confirmed_tier`). ``drawn``: entries in the sample; ``size``: the size asked for. ``drawn < size`` only
    when the card has fewer reviewable entries than asked (:func:`sample_entries` then draws all of them), and only
    then does the note say the card is that small; otherwise it says the sample is below :data:`MIN_REVIEWED`."""
    if drawn >= MIN_REVIEWED:
        return None
    tail = (f"A review of fewer than {MIN_REVIEWED} entries cannot confirm a tier (docs/SCORING_SPEC.md §5.1): its "
            "ratings are shown, and the card's deployable or fluent label stays provisional whatever they are.")
    if drawn >= size:  # the size asked for, drawn from a larger (or equal) card
        return f"The sample ({drawn} entr{'y' if drawn == 1 else 'ies'}) is below {MIN_REVIEWED}. {tail}"
    return (f"This card has only {drawn} reviewable entr{'y' if drawn == 1 else 'ies'}, so the sample is all of them "
            f"({drawn}, not the {size} asked for). {tail}")


def sheet(card: RunCard, card_path: str, size: int = MIN_REVIEWED, seed: int = DEFAULT_SEED) -> dict:
    """The review sheet of a card (``mtboard review sample``; the review page embeds the same data): what to rate,
    with the texts, and the record fields a download must carry. ``card_path``: ``<dataset>/<run>.json``.

    ``sample_size`` is the size asked for (the record carries it; the validator redraws with it); ``entries_drawn``
    the true count, smaller when the card has fewer reviewable entries; ``can_confirm_tier`` whether a review of them
    could confirm a tier (≥ :data:`MIN_REVIEWED`), with ``note`` (:func:`sample_note`) when it could not."""
    drawn = sample_entries(card, size, seed)
    return {
        "card": card_path, "run_card_hash": card.run_card_hash, "sample_seed": seed, "sample_size": size,
        "entries_drawn": len(drawn), "can_confirm_tier": len(drawn) >= MIN_REVIEWED,
        "note": sample_note(len(drawn), size),
        "language_pair": card.dataset.language_pair, "target_language": card.dataset.target_language,
        "method": card.method.spec, "ratings": [r.value for r in RATING_ORDER],
        "entries": [{"entry_id": r.entry_id, "domain": r.domain.value if r.domain else None,
                     "difficulty": r.difficulty, "source": r.source, "reference": r.expected,
                     "output": r.predicted} for r in drawn],
    }


# --------------------------------------------------------------------------------------------------------------------
# Reading


def load_record(path: str | os.PathLike[str], where: str | None = None) -> ReviewRecord:
    """A review record read with the safe YAML loader (size and alias-expansion limits, duplicate keys refused,
    symlinks refused: :func:`mtboard.core.safejson.load_yaml`) and the strict schema. Raises: InputError (one line)."""
    data = safejson.load_yaml(path, max_bytes=MAX_REVIEW_BYTES)
    return validate_model(ReviewRecord, data, where or str(path))


def load_reviewers(path: str | os.PathLike[str], where: str | None = None) -> ReviewersFile:
    """``reviews/reviewers.yaml`` (safe YAML, strict schema); an absent file is an empty list.
    Raises: InputError."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return ReviewersFile()
    data = safejson.load_yaml(p, max_bytes=MAX_REVIEWERS_BYTES)
    return validate_model(ReviewersFile, data if data is not None else {}, where or str(path))


def _primary(tag: str) -> str:
    return tag.split("-", 1)[0].lower()


def listed_for(reviewers: ReviewersFile, handle: str, language: str) -> bool:
    """Whether ``handle`` is listed (GitHub handles compare case-insensitively) for ``language`` (primary subtags
    compared: a reviewer listed for ``es`` reviews ``es-MX``)."""
    want = _primary(language)
    return any(r.handle.lower() == handle.lower() and any(_primary(l) == want for l in r.languages)
               for r in reviewers.reviewers)


# --------------------------------------------------------------------------------------------------------------------
# Summary, agreement, the gate


@dataclass(frozen=True)
class Agreement:
    """Two reviewers on the entries both rated."""

    a: str
    b: str
    n: int
    """Entries both rated."""
    exact: float
    """Share rated identically."""
    within_one: float
    """Share at most one step apart on the four-step scale."""
    kappa: float | None
    """Cohen's κ (unweighted, :func:`mtboard.score.stats.cohen_kappa` — the judges' statistic); None when undefined."""


@dataclass
class ReviewSummary:
    """What the reviews of one card add up to (pooled over reviewers)."""

    reviewers: list[str]
    entries: int
    """Distinct entries rated."""
    counts: dict[str, int]
    """rating → number of ratings (every reviewer's)."""
    usable: float
    reject: float
    excellent: float
    confirms: QualityTier | None
    """Highest gated tier the ratings confirm (None: none)."""
    agreement: list[Agreement] = field(default_factory=list)
    source: str | None = None
    """Path of the record, relative to the reviews folder."""

    @property
    def n_ratings(self) -> int:
        return sum(self.counts.values())


def confirmed_tier(counts: Counter | dict, entries: int) -> QualityTier | None:
    """The highest tier of :data:`PASS_RULES` whose rule the pooled rating counts meet, given ``entries`` distinct
    rated entries (fewer than :data:`MIN_REVIEWED`: None)."""
    total = sum(counts.values())
    if entries < MIN_REVIEWED or total == 0:
        return None
    usable = sum(counts.get(r.value, 0) for r in USABLE) / total
    reject = counts.get(Rating.reject.value, 0) / total
    excellent = counts.get(Rating.excellent.value, 0) / total
    best = None
    for tier in GATED:
        rule = PASS_RULES[tier]
        if usable >= rule.min_usable and reject <= rule.max_reject and excellent >= rule.min_excellent:
            best = tier
    return best


def agreement(a: str, ra: dict[int, Rating], b: str, rb: dict[int, Rating]) -> Agreement | None:
    """Agreement of two reviewers over the entries both rated (None when they share none)."""
    common = sorted(set(ra) & set(rb))
    if not common:
        return None
    la = [ra[i] for i in common]
    lb = [rb[i] for i in common]
    step = {r: i for i, r in enumerate(RATING_ORDER)}
    return Agreement(a, b, len(common), sum(x == y for x, y in zip(la, lb)) / len(common),
                     sum(abs(step[x] - step[y]) <= 1 for x, y in zip(la, lb)) / len(common),
                     cohen_kappa([x.value for x in la], [y.value for y in lb]))


def summarise(record: ReviewRecord, accepted: Iterable[str] | None = None, source: str | None = None) -> ReviewSummary:
    """Pool the ratings of ``record``'s reviews (only reviewers in ``accepted`` when given: the ones the validator
    accepted) and compute the confirmed tier and pairwise agreement."""
    allow = None if accepted is None else {h.lower() for h in accepted}
    per: dict[str, dict[int, Rating]] = {}
    for rv in record.reviews:
        if allow is not None and rv.reviewer.lower() not in allow:
            continue
        per[rv.reviewer] = {e.entry_id: Rating(e.rating) for e in rv.ratings}
    counts: Counter = Counter(r.value for ratings in per.values() for r in ratings.values())
    entries = len({i for ratings in per.values() for i in ratings})
    total = sum(counts.values()) or 1
    names = sorted(per)
    pairs = [agreement(x, per[x], y, per[y]) for i, x in enumerate(names) for y in names[i + 1:]]
    return ReviewSummary(
        reviewers=names, entries=entries, counts={r.value: counts.get(r.value, 0) for r in RATING_ORDER},
        usable=sum(counts.get(r.value, 0) for r in USABLE) / total, reject=counts.get("reject", 0) / total,
        excellent=counts.get("excellent", 0) / total, confirms=confirmed_tier(counts, entries),
        agreement=[p for p in pairs if p is not None], source=source)


def gated_tier(tier: QualityTier, review: ReviewSummary | None) -> tuple[str, bool]:
    """The quality tier as the board shows it (spec §5, §7.2: no method is deployable or better without community
    review confirming it): ``(label, provisional)``.

    Below deployable the automated tier is shown as it is. Deployable or fluent is shown as "<tier> (reviewed)" when
    the review confirms that tier; fluent with a review that confirms only deployable as "deployable (reviewed;
    fluent provisional)"; otherwise "<tier> (provisional)".
    """
    if tier not in GATED:
        return tier.value, False
    got = review.confirms if review is not None else None
    if got is None:
        return f"{tier.value} (provisional)", True
    if GATED.index(got) >= GATED.index(tier):
        return f"{tier.value} (reviewed)", False
    return f"{got.value} (reviewed; {tier.value} provisional)", True


def community_verified(attested_gold: bool, review: ReviewSummary | None) -> bool:
    """Spec §9.4 "community verified": the card is an attested gold-standard row (the governance organisation ran
    the method on the secret gold segment, spec §8.2) **and** a community review confirms at least deployable.

    ``attested_gold`` comes from :func:`mtboard.verify.official.has_attested_gold_row` (a scores-only gold card under
    ``official/`` whose attestation verifies; the site asks only for cards whose review confirms a tier)."""
    return bool(attested_gold and review is not None and review.confirms is not None)


def rated_ids(record: ReviewRecord) -> Sequence[int]:
    """Every entry id any review in the record rated (sorted, distinct)."""
    return sorted({e.entry_id for rv in record.reviews for e in rv.ratings})


__all__ = ["REVIEWS_DIR", "REVIEWERS_FILE", "DEFAULT_SEED", "MIN_REVIEWED", "RATING_ORDER", "PASS_RULES", "PassRule",
           "reviewable", "sample_entries", "sheet", "load_record", "load_reviewers", "listed_for", "Agreement",
           "ReviewSummary", "sample_note",
           "confirmed_tier", "agreement", "summarise", "gated_tier", "community_verified",
           "rated_ids"]
