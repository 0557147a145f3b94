"""Reading the site's inputs: run cards under ``submissions/``, verification records beside them, corpora.

Every card goes through :func:`mtboard.core.documents.loads_card` (safe JSON + strict schema; a card whose exact bytes
have a cached verdict skips the safe parse it passed before, :func:`_read_card`) and, when available and asked
for, the validator (``mtboard.validate``). A card that fails is *rejected*: skipped, with its one-line problems kept
for the "rejected" page. Reading never follows symlinks (safejson refuses them) and never aborts on one bad file.
"""

from __future__ import annotations

import contextlib
import hashlib
import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import safejson
from mtboard.core.compact import Sharing, share
from mtboard.core.documents import load_corpus, loads_card, parse_card_unchecked
from mtboard.core.errors import MtboardError
from mtboard.review.community import ReviewSummary, community_verified, summarise
from mtboard.core import canonical
from mtboard.ledger.cache import ValidationCache, environment_hash
from mtboard.ledger.cardcache import CardCache
from mtboard.ledger.summary import CardSummary, summary
from mtboard.core.schema import Ancestor, AnchorRecord, Corpus, RunCard, VerificationRecord, VerificationTier
from mtboard.core.schema.canary import CanaryRun
from mtboard.core.schema.model import ContaminationClaim
from mtboard.inputs.canaries import load_history
from mtboard.inputs.binding import bind_records
from mtboard.inputs.contamination import check_claims
from mtboard.inputs.models import MODELS_DIR, ModelIndex, load_claims, load_records
from mtboard.verify.record import COMPARED, UNATTESTED_LABEL, check_record, within_tolerance

VERIFICATION_SUFFIXES = (".verification.json",)
"""File-name endings of verification records (``mtboard verify``) stored next to a card; never read as cards."""


@dataclass
class Verification:
    """Verification status of one card (spec §9.4)."""

    tier: str
    """self-benchmarked | gds-verified | community-verified."""
    record: dict[str, Any] | None = None
    """The record's fields (display only; rendered escaped)."""
    source: str | None = None
    """Path of the record, relative to the submissions folder."""
    problem: str | None = None
    """Why a record present beside the card was not accepted."""
    attested: bool = False
    """The record's GitHub artifact attestation verified (:mod:`mtboard.verify.record`)."""
    label: str = ""
    """What the site says: "GDS verified", "maintainer re-run (unattested)", or the tier (issue 17 item 4)."""
    attestation_problems: list[str] = field(default_factory=list)
    """Why the record is not attested (one line each; empty when attested or without a record)."""
    via: str | None = None
    """The run_card_hash of the card this one was re-scored from, when the record is that card's (issue 31)."""

    @property
    def display(self) -> str:
        """Board key: the tier, or ``"unattested"`` for a passed but unattested maintainer re-run."""
        return "unattested" if self.label == UNATTESTED_LABEL else self.tier


@dataclass
class LoadedCard:
    path: str
    """Path relative to the submissions folder (display; the run page links the file in the repository). The card's
    bytes are not kept: at 10,000 cards they would hold ~2–5 GB for nothing (issue 35)."""
    card: RunCard
    page_id: str
    """16 hex: prefix of run_card_hash (or of the file's SHA-256 when the card is unsealed)."""
    verification: Verification
    review: ReviewSummary | None = None
    """Pooled community review of this card (spec §7.3), from the accepted reviews of ``reviews/<dataset>/<run>.yaml``
    (:mod:`mtboard.validate.reviews`); None without one."""
    standing: Any = None
    """Its row's :class:`mtboard.ledger.standing.Standing` (shared by the row's members), set once by
    :func:`mtboard.ledger.standing.decide`; None before. ``verification`` is what this card earned by itself; pages
    show the standing."""
    sha256: str = ""
    """SHA-256 (hex) of the card file's bytes as read (:mod:`mtboard.site.reuse` keys a board's run pages by it);
    empty for a card not read from a file (then its board's pages are always rendered). A copy that replaces
    ``card`` (``dataclasses.replace``) must clear it too: :attr:`file_sha256` gives it only for the card read."""
    read: RunCard | None = field(default=None, init=False, compare=False, repr=False)
    """The card :func:`load_inputs` read from the bytes of ``sha256`` — parsed, or a
    :class:`~mtboard.ledger.cardcache.PendingCard` that parses them on first use —; None before (not an argument:
    ``dataclasses.replace`` starts without it)."""
    summary_of: tuple[RunCard, Any] | None = field(default=None, init=False, compare=False, repr=False)
    """``(card, its CardSummary)``, kept by :func:`mtboard.ledger.summary.summary` (what the build reads of the
    card's results outside its board's computation) for the card it was made of; None before. Not an argument
    (``dataclasses.replace`` with another ``card`` starts without it) and not compared."""

    @property
    def file_sha256(self) -> str:
        """``sha256`` while ``card`` is the card parsed from those bytes (:attr:`read`), else empty: what may name
        the card's content in a cache key (:mod:`mtboard.ledger.flip`)."""
        return self.sha256 if self.read is not None and self.card is self.read else ""


@dataclass
class Rejected:
    path: str
    problems: list[str]


@dataclass
class CorpusInfo:
    path: str
    corpus: Corpus
    sha256: str


@dataclass
class Inputs:
    cards: list[LoadedCard] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    corpora: list[CorpusInfo] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    anchors: list[AnchorRecord] = field(default_factory=list)
    """Judge-reliability records (``mtboard anchor``) read from the anchors folder."""
    models: ModelIndex = field(default_factory=ModelIndex)
    """Model records (``models/*.yaml``, issue 37) and which record each card links to."""
    claims: list[tuple[str, ContaminationClaim]] = field(default_factory=list)
    """Contamination claims (``contamination/*.yaml``): (path relative to the repository root, claim)."""
    canaries: list[tuple[str, CanaryRun]] = field(default_factory=list)
    """Canary runs (``canaries/history/``, :func:`mtboard.inputs.canaries.load_history`): (path relative to the
    repository root, run), oldest first (issue 38 item 3)."""
    cache_hits: int = 0
    """Cards whose verdict came from the validation cache (:mod:`mtboard.ledger.cache`); 0 without a cache."""
    cache_misses: int = 0
    """Cards validated because the cache held no usable verdict for them; 0 without a cache."""
    verdict_keys: set[str] = field(default_factory=set)
    """The keys of the verdicts read from or stored in the validation cache
    (:attr:`mtboard.ledger.cache.ValidationCache.used`: what a pruning build keeps); empty without one."""
    card_hits: int = 0
    """Accepted cards loaded as a stored header and summary (:mod:`mtboard.ledger.cardcache`), not parsed; 0
    without a cache."""
    card_misses: int = 0
    """Accepted cards parsed at load whose header and summary were then stored; 0 without a cache."""
    card_keys: set[str] = field(default_factory=set)
    """The card cache keys read or stored (what a pruning build keeps); empty without a cache."""


def _is_verification(name: str) -> bool:
    return name.endswith(VERIFICATION_SUFFIXES)


def _walk_json(root: Path) -> list[Path]:
    found: list[Path] = []
    if not root.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".json") and not name.startswith("."):
                found.append(Path(dirpath) / name)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def _validator(submissions: Path, corpora_dir: Path | None, secret_segment: Path | None = None,
               secret_source: str | None = None, cache: ValidationCache | None = None):
    """``(path, card, raw) -> list[str]``: every problem :func:`mtboard.validate.validate_card` finds (one line each).

    The repository root is the folder holding ``submissions/``; corpora come from ``corpora_dir``; the secret-text
    scan reads ``secret_segment`` (:func:`mtboard.validate.make_context`). With ``cache``, a verdict stored under the
    card's key is returned without validating (``key``: the caller looked it up already and found none), and a new
    verdict is stored (:mod:`mtboard.ledger.cache`; issue 35
    item 3) unless the clock may change it: a ``timestamps`` problem, or a card with a gold scores-only card under
    ``official/`` (the submission gate validates that card too, its timestamp against the clock, and the tier the card
    claims follows; :func:`mtboard.validate.submission.gold_card_path`) — such a card is validated on every build.
    """
    from mtboard import validate as v  # noqa: PLC0415 - heavy (sacrebleu) only when validating
    from mtboard.validate.submission import gold_card_path  # noqa: PLC0415

    root = submissions.parent
    ctx = v.make_context(root, corpora_dir if corpora_dir is not None else root / "corpora",
                         secret_segment=secret_segment, secret_source=secret_source)

    def run(path: Path, card: RunCard, raw: bytes | None = None, key: str | None = None) -> list[str]:
        if cache is not None and raw is not None and key is None:
            key = cache.key(raw, path.relative_to(root).as_posix(), path.relative_to(submissions).as_posix(), card)
            found = cache.get(key)
            if found is not None:
                return found
        problems = v.validate_card(path, ctx).problems
        lines = [str(p) for p in problems]
        gold = gold_card_path(card, root, path.name.removesuffix(".json")) if card is not None else None
        if key is not None and not any(p.check == "timestamps" for p in problems) and \
                not (gold is not None and os.path.lexists(gold)):
            cache.put(key, lines)
        return lines

    return run


def _check(rec_path: Path, root: Path, run_card_hash: str, signer) -> Verification:
    """The record at ``rec_path`` checked as ``mtboard verify-record`` does (:func:`mtboard.verify.record.check_record`)
    for the card sealed as ``run_card_hash``: the gds-verified tier only when the record is consistent, names that
    card, passed, and its attestation verifies; a consistent passed record without a verifying attestation reads
    "maintainer re-run (unattested)" and keeps the tier self-benchmarked; otherwise self-benchmarked with the reason."""
    self_b = VerificationTier.self_benchmarked.value
    rel = rec_path.relative_to(root).as_posix()
    check = check_record(rec_path, signer, card_run_card_hash=run_card_hash)
    rec = check.record
    if rec is None:
        return Verification(self_b, None, rel, "; ".join(check.content_problems), label=self_b)
    data = rec.model_dump(mode="json")
    if check.content_problems:
        return Verification(self_b, data, rel, "; ".join(check.content_problems), label=self_b,
                            attestation_problems=check.attestation_problems)
    if not rec.passed:
        return Verification(self_b, data, rel, "the re-run did not reproduce the scores within the tolerance",
                            attested=check.attested, label=self_b, attestation_problems=check.attestation_problems)
    if not check.attested:
        return Verification(self_b, data, rel, None, label=UNATTESTED_LABEL,
                            attestation_problems=check.attestation_problems)
    return Verification(rec.tier.value, data, rel, attested=True, label="GDS verified")


SCORER_COMPONENTS = frozenset({"harness_version", "text_normalisation"})
"""Fingerprint components a re-score may change (the scorer's identity); every other component names the method."""


def _score(card: RunCard, metric: str) -> float | None:
    if metric == "error_rate":
        return card.scores.errors / len(card.results) if card.results else None
    value = getattr(card.scores, metric, None)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def lineage_problem(card: RunCard, ancestor: Ancestor, record: VerificationRecord) -> str | None:
    """Why a verification of ``ancestor`` (a card ``card`` was re-scored from) does not count for ``card``; None when
    it does (issue 31, "evidence survives a re-score"). The ancestor's declared fingerprint must hash to its
    components and be the one the record verified; its components must equal this card's except the scorer's
    (:data:`SCORER_COMPONENTS`: same model, prompt, settings, dataset and entries); and every score the maintainer
    re-ran must still agree with this card's within the record's tolerance (:func:`mtboard.verify.record.
    within_tolerance`) — outputs swapped after the verification would move them."""
    if canonical.fingerprint_hash(ancestor.fingerprint_components, ancestor.fingerprint_version) \
            != ancestor.fingerprint_hash:
        return "the ancestor's fingerprint does not hash to its components"
    if record.card_fingerprint != ancestor.fingerprint_hash:
        return "the record verified another fingerprint than the ancestor's"
    mine, theirs = card.fingerprint.components, ancestor.fingerprint_components
    differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    if set(differ) - SCORER_COMPONENTS:
        return f"another method than the re-scored card: {', '.join(sorted(set(differ) - SCORER_COMPONENTS))} differ"
    for d in record.deltas:
        if d.rerun is None or d.metric not in COMPARED:
            continue
        value = _score(card, d.metric)
        if value is None or not within_tolerance(value, d.rerun, record.tolerance, COMPARED[d.metric]):
            return f"{d.metric} {value} no longer agrees with the re-run's {d.rerun} within ±{record.tolerance:g}"
    return None


def _verification(card_path: Path, root: Path, card: RunCard, signer=None,
                  records: dict[str, list[Path]] | None = None) -> Verification:
    """What the card earned by itself: the record ``<card stem>.verification.json`` beside it (:func:`_check`); when
    that gives no passed re-run, the record of a card it was re-scored from (``card.rescored_from``, newest first;
    ``records``: run_card_hash a record names → the records), when :func:`lineage_problem` finds nothing wrong."""
    self_b = VerificationTier.self_benchmarked.value
    rec_path = card_path.with_name(card_path.name[: -len(".json")] + VERIFICATION_SUFFIXES[0])
    own = Verification(self_b, label=self_b)
    if rec_path.exists() or rec_path.is_symlink():
        own = _check(rec_path, root, card.run_card_hash, signer)
        if own.label != self_b:
            return own
    for ancestor in reversed(card.rescored_from):
        for path in (records or {}).get(ancestor.run_card_hash, []):  # every record naming it: none can shadow one
            inherited = _check(path, root, ancestor.run_card_hash, signer)
            if inherited.label == self_b or inherited.record is None:
                continue
            why = lineage_problem(card, ancestor, VerificationRecord.model_validate(inherited.record))
            if why is None:
                inherited.via = ancestor.run_card_hash
                return inherited
            if own.problem is None:
                own.problem = f"the record of the card this one was re-scored from does not count: {why}"
    return own


def _records_by_hash(submissions: Path) -> dict[str, list[Path]]:
    """Every verification record under ``submissions`` by the run_card_hash it names, in path order (unreadable ones
    are left out: the card beside them reports them)."""
    out: dict[str, list[Path]] = {}
    for path in _walk_json(submissions):
        if not _is_verification(path.name):
            continue
        try:
            named = safejson.loads(safejson.read_bytes(path, max_bytes=4 * 1024 * 1024), where=str(path),
                                   max_bytes=4 * 1024 * 1024).get("run_card_hash")
        except (MtboardError, AttributeError):
            continue
        if isinstance(named, str):
            out.setdefault(named, []).append(path)
    return out


def load_anchors(anchors_dir: Path | None) -> tuple[list[AnchorRecord], list[str]]:
    """Every ``*.json`` anchor record under ``anchors_dir`` (strict schema); unreadable ones become warnings."""
    from mtboard.core.documents import validate_model  # noqa: PLC0415

    records, warnings = [], []
    if anchors_dir is None or not anchors_dir.is_dir():
        return records, warnings
    for p in _walk_json(anchors_dir):
        rel = p.relative_to(anchors_dir).as_posix()
        try:
            raw = safejson.read_bytes(p, max_bytes=16 * 1024 * 1024)
            safejson.loads(raw, where=rel, max_bytes=16 * 1024 * 1024)
            records.append(validate_model(AnchorRecord, raw, rel))
        except MtboardError as exc:
            warnings.append(f"anchor record skipped: {exc.one_line()}")
    return records, warnings


def load_reviews(root: Path) -> tuple[dict[str, ReviewSummary], list[str]]:
    """Every review record under ``root/reviews/`` through the review checks (:mod:`mtboard.validate.reviews`):
    ``{card path relative to submissions/: pooled summary of its accepted reviewers}`` and one warning per record
    with problems (its rejected reviewers do not count; a record whose card does not match counts for nothing)."""
    from mtboard.validate.reviews import review_paths, validate_review  # noqa: PLC0415

    out: dict[str, ReviewSummary] = {}
    warnings: list[str] = []
    for p in review_paths(root):
        rep, record, card = validate_review(p, root)
        for prob in rep.problems[:3]:
            warnings.append(f"review record: {prob}")
        if record is not None and card is not None and rep.accepted:
            out[record.card] = summarise(record, rep.accepted, source=rep.path)
    return out, warnings


def _attested_gold(card: RunCard, root: Path, repository: str | None) -> bool:
    """Whether ``card`` has an attested gold-standard row under ``root/official/`` (spec §8.2, §9.4;
    :func:`mtboard.verify.official.has_attested_gold_row`): the half of "community verified"
    (:func:`mtboard.review.community.community_verified`) that a passing review cannot give."""
    from mtboard.verify.official import OFFICIAL_DIR, has_attested_gold_row  # noqa: PLC0415 - only for reviewed cards

    return bool(card.run_card_hash) and has_attested_gold_row(card.run_card_hash, root / OFFICIAL_DIR, repository,
                                                                  dev_card=card)


def _read_card(path: Path, raw: bytes, submissions: Path, verdicts: ValidationCache | None,
               digest: str | None = None, cards: CardCache | None = None, sharing: Sharing | None = None
               ) -> tuple[RunCard, str | None, list[str] | None, CardSummary | None]:
    """``(card, cache key, cached problems, stored summary)`` of the card file ``path`` whose bytes are ``raw``
    (issue 35, "load"); ``digest``: their SHA-256 (hex) when the caller has it.

    With ``cards`` (and ``verdicts``), a card whose bytes have both a stored header and summary
    (:class:`mtboard.ledger.cardcache.CardCache`) and a cached verdict is not parsed: it is a
    :class:`~mtboard.ledger.cardcache.PendingCard` (shared with ``sharing`` already) whose results are read from
    ``path`` on first use, returned with its summary; the summary is None otherwise.

    With ``verdicts``, the card is first parsed by the schema alone (:func:`~mtboard.core.documents.
    parse_card_unchecked`) to make its cache key (which names the card's backend and target language). On a hit the
    bytes are known: a verdict is stored only for a card that passed :func:`~mtboard.core.documents.loads_card` with
    these exact bytes (the key holds their SHA-256) under this code (the key holds the SHA-256 of every core, ledger
    and validator module), so the safe parse's hazard checks (duplicate keys, NaN, huge numbers, depth) passed for
    them already and the parsed card is the one :func:`~mtboard.core.documents.loads_card` gives. A cache a workflow
    restores is trusted for its verdicts already (a forged "no problems" would pass any card), so this trusts it
    for nothing more. On a miss, or without a cache, the bytes go through the safe parse; the key is returned (None
    without a cache) and the problems are None (to be found by the validator).

    Raises: InputError (the safe parse or the schema refused the bytes)."""
    if verdicts is None:
        return loads_card(raw, str(path)), None, None, None
    root = submissions.parent
    rel_root, rel_sub = path.relative_to(root).as_posix(), path.relative_to(submissions).as_posix()
    stored = cards.get(path, digest or hashlib.sha256(raw).hexdigest(), sharing or Sharing()) \
        if cards is not None else None
    looked_up = None  # the key already looked up (a miss): looked up once, as the verdict counts say
    if stored is not None:
        looked_up = verdicts.key(raw, rel_root, rel_sub, stored[0], digest)
        found = verdicts.get(looked_up)
        if found is not None:
            return stored[0], looked_up, found, stored[1]
    fast = parse_card_unchecked(raw)
    if fast is None:  # the schema refuses it: the full path names the problem (a safe-parse hazard first)
        return loads_card(raw, str(path)), None, None, None
    key = verdicts.key(raw, rel_root, rel_sub, fast, digest)
    found = verdicts.get(key) if key != looked_up else None
    if found is not None:
        return fast, key, found, None
    return loads_card(raw, str(path), parsed=fast), key, None, None


def _standing_verification(path: Path, submissions: Path, card: RunCard, signer, records,
                           review: ReviewSummary | None, attestation_repository: str | None) -> Verification:
    """The card's own verification (:func:`_verification`), raised to *community verified* when an attested
    review confirms its attested gold row (:func:`mtboard.review.community.community_verified`)."""
    ver = _verification(path, submissions, card, signer, records)
    if signer is not None and review is not None and review.confirms is not None and community_verified(
            _attested_gold(card, submissions.parent, attestation_repository), review):
        ver = Verification(VerificationTier.community_verified.value, ver.record, ver.source, attested=ver.attested,
                           label="community verified")
    return ver


@contextlib.contextmanager
def long_lived() -> Iterator[Callable[[], None]]:
    """Keep loaded cards out of the cyclic garbage collector's scans while the caller holds them (issue 35, "load").

    Yields ``settle``, for :func:`load_inputs`: called after each card, it moves every object alive at that moment
    into the collector's permanent generation (:func:`gc.freeze`); on exit they return to the oldest generation
    (:func:`gc.unfreeze`). A 355-entry card is thousands of acyclic container objects (~6,000 the collector tracks, for
    the committed Apertium EN→CA card) that live until the build ends; without this each full collection walks all of
    them, so reading cards slows down as more are held (measured here on 1,000 synthetic cards: 34 ms per card to parse
    instead of 7 ms; the whole warm build 106 s → 76 s). Reference counting still frees anything dropped; cyclic
    garbage frozen with a card (made while loading it) is freed by the first full collection after the exit (in a
    build, while MkDocs runs), bounded by one build.

    The collector has one permanent generation for the whole process and no partial unfreeze: when the process had
    frozen objects already on entry (a host that calls :func:`gc.freeze` itself), nothing is unfrozen on exit, so the
    host's freeze holds (the build's objects then stay frozen too; reference counting still frees them)."""
    ours = gc.get_freeze_count() == 0
    try:
        yield gc.freeze
    finally:
        if ours:
            gc.unfreeze()


@contextlib.contextmanager
def collector_paused(pause: bool = True) -> Iterator[Callable[[], contextlib.AbstractContextManager[None]]]:
    """No automatic cyclic garbage collection inside the block when ``pause`` (issue 35, "load"); the collector's
    state (:func:`gc.isenabled`) is restored on exit, whatever happens inside. Process-wide, as the collector is: the
    build toggles it from its one thread (a scoring worker forked inside the block starts with it paused).

    Yields ``resume``: ``with resume():`` runs its block with the collector as it was before the pause (on again
    when this pause turned it off; a caller's disabled collector stays disabled), and pauses it again after.

    For :func:`load_inputs`' read of a card while a build holds its cards (:func:`long_lived`): from the parse until
    the card is frozen (``settle``). The schema's parser makes no reference cycle, so a collection there frees
    nothing; it only scans the card's new containers as their allocation triggers young, middle and (the frozen cards
    not counting towards the threshold) full collections. Paused until the freeze, not only over the parse: a pause
    that ends before it leaves the card's thousands of new containers counted in the youngest generation, and the
    first allocation after it scans them all (~1 ms a card); :func:`gc.freeze` moves them out and resets that count.
    The validator (a card without a cached verdict), which may make cycles, runs resumed; the card's verification
    record and review checks run paused, so a cycle they leave is frozen with the card and freed after the build
    (:func:`long_lived`). Measured on 300 synthetic 355-entry cards held at once (the parse alone paused or not, then
    share and freeze; CPU time, median of five alternations on this 2-CPU machine): 10.6 ms a card with the collector
    on, 8.8 ms paused; pausing until the freeze too: 0.4–1.1 s less load (medians of alternated warm add-one-card
    builds at 1,000 cards). :func:`mtboard.site.build._made` pauses it over its compute phase too. ``resume`` belongs
    to its block: called after the block's exit, it would leave the collector off."""
    was = gc.isenabled()

    @contextlib.contextmanager
    def resume() -> Iterator[None]:
        if pause and was:
            gc.enable()
        try:
            yield
        finally:
            if pause:
                gc.disable()

    try:
        if pause:
            gc.disable()
        yield resume
    finally:
        if pause and was:
            gc.enable()


def _load_corpora(inputs: Inputs, corpora_dir: Path | None) -> None:
    """Every ``*.json`` corpus of ``corpora_dir`` (name order) into ``inputs.corpora``; one that does not load is a
    warning, not an error."""
    if corpora_dir is None or not corpora_dir.is_dir():
        return
    for p in sorted(corpora_dir.glob("*.json")):
        try:
            corpus, sha = load_corpus(p)
        except MtboardError as exc:
            inputs.warnings.append(f"corpus skipped: {exc.one_line()}")
            continue
        inputs.corpora.append(CorpusInfo(p.name, corpus, sha))


def _sharing(corpora: list[CorpusInfo]) -> Sharing:
    """What the held cards share (:mod:`mtboard.core.compact`): every corpus's sources and references, the texts
    every card of that corpus repeats."""
    texts: dict[str, str] = {}
    for info in corpora:
        for entry in info.corpus.entries:
            texts.setdefault(entry.source, entry.source)
            texts.setdefault(entry.reference, entry.reference)
    return Sharing(texts)


def _held(lc: LoadedCard, stored: CardSummary | None, sharing: Sharing) -> LoadedCard:
    """``lc``, its card the one parsed from the bytes of ``lc.sha256`` (:attr:`LoadedCard.read`): a pending card
    (:mod:`mtboard.ledger.cardcache`) with its ``stored`` summary, or a parsed card, shared
    (:func:`mtboard.core.compact.share`)."""
    lc.read = lc.card
    if stored is not None:
        lc.summary_of = (lc.card, stored)
    else:
        share(lc.card, sharing)
    return lc


def _reject_copies(inputs: Inputs) -> None:
    """Move the cards whose outputs copy another model identity's (:mod:`mtboard.validate.copies`, read from each
    card's summary) from ``inputs.cards`` to ``inputs.rejected``."""
    from mtboard.validate.copies import find_copies, outputs_of  # noqa: PLC0415 - with the validator

    copies = find_copies([outputs_of(lc.path, lc.card, zip(summary(lc).ids, summary(lc).hashes))
                          for lc in inputs.cards], {lc.path for lc in inputs.cards})
    bad = {p.where: p.message for p in copies}
    inputs.rejected.extend(Rejected(lc.path, [f"copies: {bad[lc.path]}"]) for lc in inputs.cards if lc.path in bad)
    inputs.cards = [lc for lc in inputs.cards if lc.path not in bad]


def load_inputs(submissions: Path, corpora_dir: Path | None, validate: bool = True,
                anchors_dir: Path | None = None, attestation_repository: str | None = None,
                secret_segment: Path | None = None, secret_source: str | None = None,
                cache: Path | None = None, settle: Callable[[], None] | None = None) -> Inputs:
    """Read every card, corpus and anchor record; never raises for one bad file (it is rejected or warned about
    instead). Cards whose outputs copy another model identity's (:mod:`mtboard.validate.copies`) are rejected too.
    Verification records are checked against the verify workflow of ``attestation_repository`` (owner/name; default
    :func:`mtboard.verify.record.expected_signer`'s ``$GITHUB_REPOSITORY``; none: no record is attested). With
    ``validate``, a card holding text of the ``secret_segment`` corpus file is rejected (``secret_source`` names it
    in the message; :func:`mtboard.validate.make_context`). ``cache``: a folder of stored verdicts
    (:mod:`mtboard.ledger.cache`, issue 35 item 3): a card whose key is there is not validated again; None validates
    every card. The cross-card ``copies`` check always runs. ``settle``: called after each card is read (the
    ``settle`` of :func:`long_lived`). Accepted cards share their equal parts and the corpora's texts
    (:func:`mtboard.core.compact.share`, issue 35 "memory"): they are to be read, not changed.

    Raises: InputError when ``secret_segment`` cannot be read as a corpus."""
    from mtboard.verify.record import expected_signer  # noqa: PLC0415

    inputs = Inputs()
    try:
        signer = expected_signer(attestation_repository)
    except MtboardError as exc:
        inputs.warnings.append(f"attestations not checked: {exc.one_line()}")
        signer = None
    inputs.anchors, warnings = load_anchors(anchors_dir)
    inputs.warnings.extend(warnings)
    _load_corpora(inputs, corpora_dir)
    verdicts = None
    if validate and cache is not None:
        verdicts = ValidationCache(cache, environment_hash(
            submissions.parent, corpora_dir if corpora_dir is not None else submissions.parent / "corpora",
            secret_segment, secret_source), root=submissions.parent)
    validator = _validator(submissions, corpora_dir, secret_segment, secret_source, verdicts) if validate else None
    cards = CardCache.make(cache, {info.sha256: {e.id: (e.source, e.reference) for e in info.corpus.entries}
                                   for info in inputs.corpora}) if verdicts is not None else None  # issue 35 item 3
    reviewed, warnings = load_reviews(submissions.parent)
    records, more = load_records(submissions.parent)
    checks = bind_records(records, cache)  # issue 37: a record whose bound values disagree is refused (absent)
    inputs.models = ModelIndex.of(records, checks)
    more = more + [f"model record refused: {MODELS_DIR}/{slug}.yaml: {line} (fix: correct the record)"
                   for slug, c in checks.items() for line in c.conflicts]
    inputs.claims, claim_warnings = load_claims(submissions.parent)
    # a claim that fails its checks marks no row (mtboard.ledger.contamination): the build says so, as for records
    claim_warnings += [f"contamination claim marks nothing: {line}" for line in check_claims(
        inputs.claims, records, [c.corpus for c in inputs.corpora])]
    inputs.canaries, canary_warnings = load_history(submissions.parent)
    warnings = warnings + more + claim_warnings + canary_warnings
    records = _records_by_hash(submissions)
    inputs.warnings.extend(warnings)
    seen_hash: dict[str, str] = {}
    sharing = _sharing(inputs.corpora)
    for path in _walk_json(submissions):
        rel = path.relative_to(submissions).as_posix()
        if _is_verification(path.name):
            continue
        # a held card's thousands of objects: no collection from its parse until it is frozen (collector_paused)
        with collector_paused(settle is not None) as resume:
            try:
                raw = safejson.read_bytes(path)  # read once: the bytes hashed are the bytes parsed
                digest = hashlib.sha256(raw).hexdigest()
                card, key, problems, stored = _read_card(path, raw, submissions, verdicts, digest, cards, sharing)
            except MtboardError as exc:
                inputs.rejected.append(Rejected(rel, [exc.one_line().replace(str(path), rel)]))
                continue
            if validator is not None:
                if problems is None:  # no cached verdict
                    with resume():  # the validator may make reference cycles
                        try:
                            problems = validator(path, card, raw, key)
                        except MtboardError as exc:
                            problems = [exc.one_line()]
                if problems:
                    inputs.rejected.append(Rejected(rel, [p.replace(str(path), rel) for p in problems]))
                    continue
            key = card.run_card_hash or digest
            if key in seen_hash:
                inputs.rejected.append(Rejected(rel, [f"duplicate of {seen_hash[key]} (same run_card_hash)"]))
                continue
            seen_hash[key] = rel
            review = reviewed.get(rel)
            ver = _standing_verification(path, submissions, card, signer, records, review, attestation_repository)
            held = _held(LoadedCard(rel, card, key[:16], ver, review, sha256=digest), stored, sharing)
            if cards is not None and stored is None:  # a parsed card: its header and summary kept for the next build
                cards.put(raw, digest, summary(held), card.dataset.sha256)
            inputs.card_hits += stored is not None
            inputs.card_misses += cards is not None and stored is None
            inputs.cards.append(held)
            if settle is not None:
                settle()
    if validate:
        _reject_copies(inputs)
    if verdicts is not None:
        inputs.cache_hits, inputs.cache_misses, inputs.verdict_keys = verdicts.hits, verdicts.misses, verdicts.used
    if cards is not None:
        inputs.card_keys = cards.used
    return inputs
