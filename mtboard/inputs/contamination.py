"""Contamination claims checked against the records and corpora, declared training data compared with the corpora's
upstream packages, and training cutoffs compared with entry dates (issue 37 item 3).

* :func:`check_claims` — every problem of the claims under ``contamination/`` (a claim's model must have a record,
  its dataset must be a corpus, its entries must exist, its version range must parse), one line each: the file, the
  field and the fix. ``mtboard models check`` and the build call it.
* :func:`declared_overlap` — a record's ``training_corpora`` against a corpus's upstream packages
  (``entries[].origin.package``): the automatic claim the board shows as "declared training data overlaps: …".
* :func:`version_matches` — the version syntax a claim's ``versions`` accepts (:data:`VERSION_SYNTAX`).
* :func:`after_cutoff` — whether an entry's ``added`` date (spec §2.2 extension) falls after a partial training cutoff.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Sequence
from datetime import date

from mtboard.core.schema.corpus import Corpus
from mtboard.core.schema.model import ContaminationClaim, ModelRecord

VERSION_SYNTAX = ("a version (1.0.0, exact), a prefix (1.*), or comma-separated clauses each an operator (==, !=, >=, "
                  "<=, >, <) and a version, all of which must hold (>=1.0.0,<2)")
"""What a claim's ``versions`` may be (a subset of PEP 440 specifiers on dotted numeric versions; a pre-release or
build suffix after ``-`` or ``+`` is ignored when comparing)."""

_CLAUSE = re.compile(r"^(==|!=|>=|<=|>|<)?\s*(\d+(?:\.\d+)*)(\.\*)?$")


def _release(version: str) -> tuple[int, ...]:
    """``1.2.3-rc1+b`` → ``(1, 2, 3)``. Raises ValueError for a non-numeric release part."""
    core = re.split(r"[-+]", version.strip(), maxsplit=1)[0]
    return tuple(int(p) for p in core.split("."))


def _pad(a: tuple[int, ...], n: int) -> tuple[int, ...]:
    return a + (0,) * (n - len(a))


def parse_versions(spec: str) -> list[tuple[str, tuple[int, ...], bool]]:
    """``spec`` (:data:`VERSION_SYNTAX`) as ``[(operator, release, prefix)]``. Raises ValueError naming the clause
    that does not parse."""
    clauses = []
    for raw in spec.split(","):
        m = _CLAUSE.match(raw.strip())
        if not m:
            raise ValueError(f"cannot read version clause {raw.strip()!r}")
        op, ver, star = m.group(1) or "==", m.group(2), bool(m.group(3))
        if star and op not in ("==", "!="):
            raise ValueError(f"a prefix ({ver}.*) takes == or != only, not {op}")
        clauses.append((op, _release(ver), star))
    return clauses


def version_matches(spec: str | None, version: str) -> bool:
    """Whether dataset ``version`` (e.g. ``1.0.0``) is covered by a claim's ``versions`` (None: every version).
    Raises ValueError when ``spec`` does not parse (:func:`parse_versions`) or ``version`` is not numeric."""
    if spec is None:
        return True
    v = _release(version)
    for op, ref, star in parse_versions(spec):
        if star:
            hit = v[:len(ref)] == ref
            ok = hit if op == "==" else not hit
        else:
            n = max(len(v), len(ref))
            a, b = _pad(v, n), _pad(ref, n)
            ok = {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


def cutoff_end(cutoff: str) -> date:
    """The last day a partial date covers: ``2024-08`` → 2024-08-31, ``2024`` → 2024-12-31, ``2024-08-14`` itself.
    Raises ValueError for anything else."""
    parts = [int(p) for p in cutoff.split("-")]
    if len(parts) == 1:
        return date(parts[0], 12, 31)
    if len(parts) == 2:
        return date(parts[0], parts[1], calendar.monthrange(parts[0], parts[1])[1])
    return date(*parts)


def after_cutoff(added: str | None, cutoff: str | None) -> bool:
    """Whether an entry ``added`` (YYYY-MM-DD) lies strictly after the training ``cutoff`` (YYYY[-MM[-DD]], the
    whole month or year included: :func:`cutoff_end`). False when either is unknown."""
    if not added or not cutoff:
        return False
    return date.fromisoformat(added) > cutoff_end(cutoff)


def _norm(name: str) -> str:
    """Case-folded, with every run of non-alphanumerics one hyphen: 'Debian_Reference ES' → 'debian-reference-es'."""
    return re.sub(r"[^0-9a-z]+", "-", name.casefold()).strip("-")


def corpus_packages(corpus: Corpus) -> list[str]:
    """The upstream packages of a corpus's entries (``entries[].origin.package``), sorted, each once."""
    return sorted({e.origin.package for e in corpus.entries if e.origin is not None and e.origin.package})


def declared_overlap(record: ModelRecord, corpus: Corpus) -> list[str]:
    """The corpus's upstream packages (:func:`corpus_packages`) that the record's declared ``training_corpora`` name,
    compared normalised (case-folded, punctuation and spaces as one hyphen): a declared corpus matches a package when
    the two are equal or the package occurs in it as a whole hyphen-separated run ('Debian Reference ES (2023)'
    matches ``debian-reference-es``; 'web documents' matches nothing). Sorted package names, each once; [] when none.
    Each match is an automatic claim on the board ("declared training data overlaps: …"; issue 37)."""
    declared = [f"-{_norm(t)}-" for t in record.training_corpora]
    found = []
    for pkg in corpus_packages(corpus):
        p = _norm(pkg)
        if p and any(f"-{p}-" in d for d in declared):
            found.append(pkg)
    return found


def check_claims(claims: Iterable[tuple[str, ContaminationClaim]], records: Sequence[ModelRecord],
                 corpora: Sequence[Corpus]) -> list[str]:
    """Every problem of ``claims`` (``(path, claim)`` as :func:`mtboard.inputs.models.load_claims` gives them), one
    line each ``<path>: <field> …: <what> (fix: …)``; [] when all hold. Checks: ``model`` is a record's slug,
    ``dataset`` is the id of a corpus, ``versions`` parses (:data:`VERSION_SYNTAX`) and covers a version of that
    dataset among ``corpora``, and each of ``entries`` is an entry id of a covered version."""
    slugs = {r.slug for r in records}
    by_id: dict[str, list[Corpus]] = {}
    for c in corpora:
        by_id.setdefault(c.dataset.id, []).append(c)
    problems: list[str] = []
    for path, claim in claims:
        if claim.model not in slugs:
            problems.append(f"{path}: model {claim.model!r} has no record (fix: add models/{claim.model}.yaml or "
                            f"name one of: {', '.join(sorted(slugs)) or 'none'})")
        versions = by_id.get(claim.dataset)
        if not versions:
            problems.append(f"{path}: dataset {claim.dataset!r} is not a corpus under corpora/ (fix: use a corpus's "
                            f"dataset.id: {', '.join(sorted(by_id)) or 'none'})")
            continue
        try:
            covered = [c for c in versions if version_matches(claim.versions, c.dataset.version)]
        except ValueError as exc:
            problems.append(f"{path}: versions {claim.versions!r}: {exc} (fix: write {VERSION_SYNTAX})")
            continue
        if not covered:
            have = ", ".join(sorted(c.dataset.version for c in versions))
            problems.append(f"{path}: versions {claim.versions!r} covers no version of {claim.dataset} (fix: name "
                            f"one of: {have})")
            continue
        ids = {e.id for c in covered for e in c.entries}
        missing = sorted(set(claim.entries) - ids)
        if missing:
            shown = ", ".join(str(i) for i in missing[:10]) + (" …" if len(missing) > 10 else "")
            problems.append(f"{path}: entries {shown} not in {claim.dataset} (fix: list entry ids of the dataset, or "
                            "none for the whole dataset)")
    return problems


__all__ = ["VERSION_SYNTAX", "after_cutoff", "check_claims", "corpus_packages", "cutoff_end", "declared_overlap",
           "parse_versions", "version_matches"]
