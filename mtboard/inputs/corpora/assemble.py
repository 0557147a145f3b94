"""From filtered pairs to schema entries and corpora: sampling, labels, ids, merging, summaries.

* :func:`rank_key` / :func:`sample` — deterministic sampling: rank every pair by SHA-256 of (seed, source, reference)
  and keep the N smallest, so a re-import of the same upstream file with the same seed selects the same pairs, and
  adding pairs upstream only displaces pairs whose rank they beat.
* :func:`to_entry` — a :class:`~mtboard.core.schema.Entry` with difficulty, register, context and origin set by rule.
* :func:`build_corpus` — ids 1..N in the order given.
* :func:`merge_corpora` — several corpora → one multi-domain dataset with stable ids.
* :func:`summarize` — counts by segment, domain and difficulty.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from mtboard.inputs.corpora import labels as L
from mtboard.inputs.corpora.filters import Pair
from mtboard.core.errors import InputError
from mtboard.core.schema import SECRET_SEGMENTS, Context, Corpus, DatasetInfo, Domain, Entry, Origin, Register, Segment


def rank_key(seed: str | int, source: str, reference: str) -> str:
    """Hex SHA-256 of ``f"{seed}\\x00{source}\\x00{reference}"`` (UTF-8): the sampling rank of one pair."""
    return hashlib.sha256(f"{seed}\x00{source}\x00{reference}".encode("utf-8")).hexdigest()


def sample(pairs: Sequence[Pair], n: int | None, seed: str | int) -> list[Pair]:
    """The ``n`` pairs with the smallest :func:`rank_key`, returned in their upstream order (``Pair.order``, then
    input position). ``n`` ``None`` or ≥ len(pairs) keeps all. Deterministic; independent of input order."""
    if n is None or n >= len(pairs):
        chosen = list(pairs)
    else:
        if n < 0:
            raise InputError(f"sample size must be ≥ 0, got {n}", field="--sample")
        chosen = sorted(pairs, key=lambda p: (rank_key(seed, p.source, p.reference), p.locator))[:n]
    pos = {id(p): i for i, p in enumerate(pairs)}
    return sorted(chosen, key=lambda p: (p.order, pos[id(p)]))


def to_entry(pair: Pair, *, source_lang: str, domain: Domain | None, segment: Segment = Segment.development,
             register: Register | None = None, context: Context | None = None, provenance: str | None = "corpus",
             origin: Origin | None = None, english: str | None = None, auto_labels: bool = True) -> Entry:
    """Build an Entry (id 0; :func:`build_corpus` numbers entries).

    ``difficulty`` = :func:`mtboard.inputs.corpora.labels.difficulty` of the source. When ``auto_labels`` is true, a
    missing register comes from :data:`~mtboard.inputs.corpora.labels.DOMAIN_REGISTER` and a missing context from
    :func:`~mtboard.inputs.corpora.labels.assign_context` applied to ``english`` (the English side; defaults to the source).
    """
    if auto_labels and domain is not None:
        if register is None:
            register = L.DOMAIN_REGISTER.get(domain)
        if context is None:
            context = L.assign_context(domain, english if english is not None else pair.source, pair.tag)
    return Entry(id=0, source=pair.source, reference=pair.reference, segment=segment,
                 difficulty=L.difficulty(pair.source, source_lang), provenance=provenance, register=register,
                 context=context, domain=domain, origin=origin)


def build_corpus(info: DatasetInfo, entries: Sequence[Entry], first_id: int = 1) -> Corpus:
    """Number ``entries`` ``first_id``, ``first_id`` + 1, … in the order given and wrap them in a Corpus.

    Raises InputError when ``entries`` is empty or an entry is in a secret segment (gold_standard, held_out are never
    produced by the importers).
    """
    if not entries:
        raise InputError("no entries left after filtering", field="entries",
                         fix="check --source-lang/--target-lang and the input file")
    out = []
    for i, e in enumerate(entries):
        if e.segment in SECRET_SEGMENTS:
            raise InputError(f"entry in secret segment {e.segment}", field=f"entries[{i}].segment")
        out.append(e.model_copy(update={"id": first_id + i}))
    return Corpus(dataset=info, entries=out)


def merge_corpora(corpora: Sequence[Corpus], info: DatasetInfo) -> Corpus:
    """Merge several corpora of one language pair into one dataset with stable ids.

    Entries are taken in the order of ``corpora``, each corpus in its own entry order; an entry whose (source,
    reference) already appeared is dropped (first wins). Ids are renumbered 1..N in that order, so the same inputs in
    the same order always give the same ids, and appending an input never changes the ids of earlier entries.
    ``info.provenance`` is extended with every entry provenance label. Raises InputError when the inputs disagree on
    source/target language.
    """
    seen: set[tuple[str, str]] = set()
    entries: list[Entry] = []
    for c in corpora:
        if (c.dataset.source_language, c.dataset.target_language) != (info.source_language, info.target_language):
            raise InputError(f"dataset {c.dataset.id} is {c.dataset.source_language}→{c.dataset.target_language}, "
                             f"not {info.source_language}→{info.target_language}", field="dataset.source_language",
                             fix="merge corpora of one language pair")
        for e in c.entries:
            key = (e.source, e.reference)
            if key in seen:
                continue
            seen.add(key)
            entries.append(e)
    labels = list(info.provenance)
    for e in entries:
        if e.provenance and e.provenance not in labels:
            labels.append(e.provenance)
    return build_corpus(info.model_copy(update={"provenance": labels}), entries)


def summarize(corpus: Corpus) -> dict[str, dict[str, int]]:
    """Counts of entries by ``segment``, ``domain``, ``difficulty``, ``register`` and ``context`` (keys as strings;
    missing values counted under ``"-"``), each sorted by key."""
    out: dict[str, dict[str, int]] = {}
    for field in ("segment", "domain", "difficulty", "register", "context"):
        c = Counter(str(getattr(e, field)) if getattr(e, field) is not None else "-" for e in corpus.entries)
        out[field] = dict(sorted(c.items()))
    return out
