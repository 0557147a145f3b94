"""Corpus rotation (spec §9.3.2: "the governance organisation may rotate entries between segments without notice";
issue 39 item 2): ``mtboard corpus rotate`` trades places between development entries and entries of every other
segment present, and names the result a new dataset version (docs/corpora.md "Rotation").

The rule (:func:`rotate`):

* every entry is ranked by ``SHA-256("<seed>\\0<dataset id>\\0<input version>\\0<entry id>")`` (hex, ascending):
  deterministic, the same for everyone who knows the seed, unpredictable for everyone who does not (the seed stays
  private with the maintainers; it is never written in the file). The input corpus's version is in the key, so
  rotating the rotated file again with the same seed ranks afresh rather than trading the same pairs straight back;
  an empty seed is refused;
* for each other segment *S* present (in :class:`mtboard.core.schema.Segment` order: diagnostic, gold_standard,
  held_out), ``k_S = max(1, ⌊share × min(|D|, |S|) + ½⌋)`` entries trade places: the ``k_S`` best-ranked entries of
  *S* move to development and the ``k_S`` best-ranked development entries not yet moved move to *S* (capped by the
  development entries left). Swapping pairs keeps every segment's size, so a board's entry count does not change;
* nothing else changes: ids, texts, labels, variants and glossary stay byte for byte, and the entries keep their
  order;
* the envelope gets a new version (:func:`next_version`: the minor number bumped, the patch reset, a pre-release
  label dropped: ``1.0.0`` → ``1.1.0``) and a sentence in its description saying what was rotated. A card names the
  version it was scored on, and boards are per dataset id + version + segment (:mod:`mtboard.ledger.standing`), so
  cards of two versions never share a ranking. A version given by hand must be greater than the input's
  (:func:`version_key`), and the new date must be neither before the input's ``created`` nor after today (UTC).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import date, datetime, timezone

from mtboard.core.errors import ConfigError
from mtboard.core.schema import Corpus, Segment
from mtboard.core.schema.common import SEMVER_RE


def rank_key(seed: str, dataset_id: str, version: str, entry_id: int) -> str:
    """An entry's rotation rank: the SHA-256 hex of ``<seed>\\0<dataset id>\\0<version>\\0<entry id>`` (smaller
    moves first; ``version``: the input corpus's version, so each rotation of a file ranks afresh)."""
    return hashlib.sha256(f"{seed}\0{dataset_id}\0{version}\0{entry_id}".encode()).hexdigest()


def version_key(version: str) -> tuple:
    """A semantic version's order key: ``(major, minor, patch, 1)`` for a release, ``(major, minor, patch, 0,
    label)`` for a pre-release (``1.0.0-rc.1`` < ``1.0.0``; a missing patch counts as 0). Pre-release labels compare as
    strings (a simplification of SemVer §11, enough to refuse going backwards). Raises ConfigError for a version that
    is not semantic."""
    if not SEMVER_RE.match(version):
        raise ConfigError(f"{version!r} is not a semantic version", field="--version",
                          fix="give a version such as 1.1.0")
    core, _, label = version.partition("-")
    nums = [int(x) for x in core.split(".")] + [0]
    return (*nums[:3], 0, label) if label else (*nums[:3], 1)


def next_version(version: str) -> str:
    """The version after a rotation: minor bumped, patch reset, pre-release dropped (``1.0.0`` → ``1.1.0``,
    ``2.3`` → ``2.4``, ``1.2.3-rc.1`` → ``1.3.0``). Raises ConfigError for a version that is not semantic."""
    if not SEMVER_RE.match(version):
        raise ConfigError(f"dataset.version {version!r} is not a semantic version", field="dataset.version",
                          fix="give the new version with --version")
    parts = version.split("-", 1)[0].split(".")
    major, minor = int(parts[0]), int(parts[1])
    return f"{major}.{minor + 1}" + (".0" if len(parts) == 3 else "")


@dataclass(frozen=True)
class Rotation:
    """What :func:`rotate` did: the new corpus, the entry ids that moved to development and out of it, per other
    segment (``moved[segment] = (into development, out of development)``)."""

    corpus: Corpus
    moved: dict[str, tuple[tuple[int, ...], tuple[int, ...]]]

    @property
    def count(self) -> int:
        """Entries whose segment changed."""
        return sum(len(a) + len(b) for a, b in self.moved.values())


def swap_count(share: float, n_dev: int, n_other: int) -> int:
    """``max(1, ⌊share × min(n_dev, n_other) + ½⌋)`` (0 when either side is empty)."""
    m = min(n_dev, n_other)
    return 0 if m == 0 else max(1, min(m, math.floor(share * m + 0.5)))


def rotate(corpus: Corpus, *, share: float, seed: str, version: str | None = None, created: str | None = None,
           source: str | None = None) -> Rotation:
    """The rotated corpus (module docstring). ``share`` in (0, 1]; ``seed``: a non-empty private string;
    ``version``: the new version (default :func:`next_version`; must be greater than the current one);
    ``created``: the new version's date YYYY-MM-DD (default: the current one; not before it, not after today UTC);
    ``source``: the input's name for the description sentence.

    Raises: ConfigError for a share outside (0, 1] (NaN included), an empty seed, a version not greater than the
    current one, a date before the input's or after today, or a corpus with no development entries or no other
    segment."""
    if not (0.0 < share <= 1.0):  # NaN fails every comparison, so it is refused here too
        raise ConfigError(f"share {share} is outside (0, 1]", field="--share", fix="give a share such as 0.1")
    if not seed:
        raise ConfigError("the seed is empty", field="--seed",
                          fix="give a private random value, e.g. --seed \"$(openssl rand -hex 16)\"")
    d = corpus.dataset
    new_version = version or next_version(d.version)
    if new_version == d.version:
        raise ConfigError(f"the new version {new_version} equals the current one", field="--version",
                          fix="give a newer version: a rotated corpus is a new dataset version")
    if version_key(new_version) <= version_key(d.version):
        raise ConfigError(f"the new version {new_version} is not greater than the current one {d.version}",
                          field="--version", fix=f"give a version greater than {d.version}, e.g. "
                                                 f"{next_version(d.version)}")
    if created is not None:
        try:
            day = date.fromisoformat(created)
        except ValueError:
            raise ConfigError(f"{created!r} is not a date YYYY-MM-DD", field="--created",
                              fix="give the new version's date, e.g. 2026-12-04") from None
        today = datetime.now(timezone.utc).date()
        if created < d.created:
            raise ConfigError(f"{created} is before the input's created date {d.created}", field="--created",
                              fix=f"give a date from {d.created} to {today.isoformat()}")
        if day > today:
            raise ConfigError(f"{created} is in the future (today is {today.isoformat()} UTC)", field="--created",
                              fix=f"give a date from {d.created} to {today.isoformat()}")
    ranked = sorted(corpus.entries, key=lambda e: rank_key(seed, d.id, d.version, e.id))
    dev = [e.id for e in ranked if e.segment == Segment.development]
    others = [s for s in Segment if s != Segment.development and any(e.segment == s for e in corpus.entries)]
    if not dev or not others:
        raise ConfigError(f"{d.id} {d.version} has {'no development entries' if not dev else 'only development entries'}"
                          ": nothing to rotate", field="entries[].segment",
                          fix="rotate a corpus with development entries and at least one other segment")
    new_segment: dict[int, Segment] = {}
    moved: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    free = list(dev)
    for s in others:
        members = [e.id for e in ranked if e.segment == s]
        k = min(swap_count(share, len(dev), len(members)), len(free))
        if k == 0:
            continue
        into_dev, out_of_dev = members[:k], free[:k]
        free = free[k:]
        for i in into_dev:
            new_segment[i] = Segment.development
        for i in out_of_dev:
            new_segment[i] = s
        moved[s.value] = (tuple(sorted(into_dev)), tuple(sorted(out_of_dev)))
    n = sum(len(a) + len(b) for a, b in moved.values())
    note = (f"Rotated from version {d.version}{f' ({source})' if source else ''} by `mtboard corpus rotate` "
            f"(share {share:g}, seeded): {n} entries changed segment, "
            + "; ".join(f"{len(a)} {seg} ↔ development" for seg, (a, _b) in moved.items()) + ".")
    info = d.model_copy(update={"version": new_version, "created": created or d.created,
                                "description": f"{d.description} {note}" if d.description else note})
    entries = [e.model_copy(update={"segment": new_segment[e.id]}) if e.id in new_segment else e
               for e in corpus.entries]
    # validated again as a whole (ids, dates, semantic version) rather than trusting model_copy
    new = Corpus.model_validate({"dataset": info.model_dump(mode="json"),
                                 "entries": [e.model_dump(mode="json") for e in entries]})
    return Rotation(new, moved)


__all__ = ["Rotation", "next_version", "rank_key", "rotate", "swap_count", "version_key"]
