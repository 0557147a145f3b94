"""Licences and attribution of the corpus text the site republishes (issue 36 item 8), as data.

Every fact comes from the data files, never from this module: each dataset's envelope in ``corpora/*.json`` (id,
version, language pair, the SPDX ``license`` expression), each entry's ``origin`` (upstream package and version) and
``domain``, and ``corpora/SOURCES.md``'s "Pinned packages and licences" table (registry, files used and licence of
each package). :mod:`mtboard.site.infopages` renders the licences page from it; every page that shows corpus text
names its dataset's licence through :func:`licence_of` and links ``licences.html#<dataset id>`` (:func:`anchor`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable

from mtboard.ledger.load import Inputs

PACKAGES_HEADING = "## Pinned packages and licences"
"""The SOURCES.md section whose table lists each upstream package (package, registry, version, files, licence)."""


@dataclass(frozen=True)
class SourcePackage:
    """One upstream package a dataset's entries were read from."""

    package: str
    """The entry origins' ``package`` (Debian ``debian-reference-es``, PyPI ``django`` …)."""
    version: str | None
    """The entry origins' ``package_version`` (None: not recorded)."""
    domains: tuple[str, ...]
    """The domains of the entries read from it, sorted."""
    entries: int
    """How many of the dataset's entries come from it."""
    upstream: tuple[str, ...]
    """What the domains' source is (SOURCES.md "where each domain comes from"; empty when it does not say)."""
    registry: str | None = None
    """Where the package is published (``apt``, ``PyPI``, ``npm``), from SOURCES.md; None when SOURCES.md does not
    list the package."""
    files: str | None = None
    """The files used inside the package, from SOURCES.md."""
    licence: str | None = None
    """The package's SPDX licence expression, from SOURCES.md; None when SOURCES.md does not list the package (the
    dataset's licence then covers its text)."""


@dataclass(frozen=True)
class DatasetLicence:
    """One dataset version on the licences page."""

    id: str
    version: str
    language_pair: str
    licence: str
    """The envelope's SPDX expression (``dataset.license``)."""
    file: str
    """The name of the corpus file it was read from (``mtb-en-es-dev.json``)."""
    packages: list[SourcePackage] = field(default_factory=list)
    """The upstream packages, most entries first; empty when no entry records an ``origin``."""
    unattributed: int = 0
    """Entries without an ``origin``."""


def anchor(dataset_id: str) -> str:
    """The licences page's anchor of a dataset: its id as it stands (dataset ids are ``[a-z0-9._-]``, schema
    ``DATASET_ID_RE``, so they are valid HTML ids and URL fragments)."""
    return dataset_id


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _expand(names: str) -> list[str]:
    """``debian-reference-en, -es, -fr`` → the full package names: a name starting with ``-`` replaces the last
    ``-part`` of the first name (SOURCES.md's shorthand)."""
    parts = [p.strip().strip("`") for p in names.split(",") if p.strip()]
    if not parts:
        return []
    first = parts[0]
    base = first.rsplit("-", 1)[0] if "-" in first else first
    return [first] + [base + p if p.startswith("-") else p for p in parts[1:]]


def pinned_packages(sources_md: str) -> dict[str, dict[str, str]]:
    """package name → ``{"registry", "version", "files", "licence"}`` from the table under
    :data:`PACKAGES_HEADING` of corpora/SOURCES.md (columns ``package | registry | version | files used | licence``;
    a first cell ``a-en, -es`` names several packages). Empty when the section or table is missing; a row with fewer
    cells is skipped. Backticks are dropped from the text."""
    lines = sources_md.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == PACKAGES_HEADING)
    except StopIteration:
        return {}
    out: dict[str, dict[str, str]] = {}
    rows = iter(lines[start + 1:])
    for line in rows:
        if line.startswith("## "):
            return out
        if line.startswith("| package |"):
            next(rows, None)  # the |---| line
            for row in rows:
                if not row.startswith("|"):
                    return out
                cells = [c.replace("`", "") for c in _cells(row)]
                if len(cells) < 5:
                    continue
                for name in _expand(cells[0]):
                    out[name] = {"registry": cells[1], "version": cells[2], "files": cells[3], "licence": cells[4]}
            return out
    return out


def dataset_licences(inputs: Inputs, sources_md: str,
                     upstream: Callable[[str, str], str | None] | None = None) -> list[DatasetLicence]:
    """One :class:`DatasetLicence` per corpus file of ``inputs.corpora``, sorted by id then version (the order the
    page lists them). ``sources_md``: corpora/SOURCES.md's text ("" when absent: packages then carry no registry or
    licence); ``upstream(domain, language_pair)``: the source SOURCES.md names for a domain
    (:func:`mtboard.site.boardpages.source_for`; None: not shown). Never raises on missing fields: an entry without
    ``origin`` is counted in ``unattributed``."""
    pinned = pinned_packages(sources_md)
    out = []
    for c in inputs.corpora:
        ds = c.corpus.dataset
        counts: Counter[tuple[str, str | None]] = Counter()
        domains: dict[tuple[str, str | None], set[str]] = {}
        bare = 0
        for e in c.corpus.entries:
            if e.origin is None:
                bare += 1
                continue
            key = (e.origin.package, e.origin.package_version)
            counts[key] += 1
            if e.domain is not None:
                domains.setdefault(key, set()).add(e.domain.value)
        packages = []
        for (name, version), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1] or "")):
            ds_domains = tuple(sorted(domains.get((name, version), ())))
            texts = []
            for d in ds_domains:
                text = upstream(d, ds.language_pair) if upstream is not None else None
                if text and text not in texts:
                    texts.append(text)
            info = pinned.get(name, {})
            packages.append(SourcePackage(name, version, ds_domains, n, tuple(texts), info.get("registry"),
                                          info.get("files"), info.get("licence")))
        out.append(DatasetLicence(ds.id, ds.version, ds.language_pair, ds.license, PurePath(c.path).name, packages,
                                  bare))
    return sorted(out, key=lambda d: (d.id, _version_key(d.version)))


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+-]", version))


def licence_index(inputs: Inputs) -> dict[tuple[str, str], str]:
    """(dataset id, version) → the SPDX expression of its corpus file's envelope, for every corpus of
    ``inputs.corpora`` (two files of one id and version: the first read wins; their texts differ but the build
    reads both, and the licences page lists both)."""
    out: dict[tuple[str, str], str] = {}
    for c in inputs.corpora:
        ds = c.corpus.dataset
        out.setdefault((ds.id, ds.version), ds.license)
    return out


def licence_of(index: dict[tuple[str, str], str], dataset_id: str, version: str) -> str | None:
    """The licence of one dataset version from :func:`licence_index`; None when no corpus file of that id and version
    was read (a card built without validation may name one: the pages then say the licence is not known)."""
    return index.get((dataset_id, version))


__all__ = ["PACKAGES_HEADING", "SourcePackage", "DatasetLicence", "anchor", "pinned_packages", "dataset_licences",
           "licence_index", "licence_of"]
