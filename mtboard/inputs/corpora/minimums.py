"""Spec §11.1: what a corpus must hold before a new language pair goes on the board — one table
(:data:`MINIMUMS`) that ``mtboard corpus check`` enforces and the site's "New languages" page lists
(:mod:`mtboard.site.programme`), so the rule is decided in one place.

=================  ========  ===================================================================================
minimum            where     met when
=================  ========  ===================================================================================
``gold_standard``  private   ≥ 50 entries in the secret ``gold_standard`` segment (also spec §2.3)
``development``    public    ≥ 30 entries in the ``development`` segment
``diagnostic``     public    ≥ 10 entries in the ``diagnostic`` segment (language-specific phenomena)
``provenance``     public    every entry has a ``provenance`` label (spec §2.5) and an ``origin`` (where its text
                             comes from: package, file, locator — for text written by speakers, the contributor or
                             session as ``origin.package``)
``difficulty``     public    entries at ≥ 3 of the 5 difficulty levels
``register``       public    entries in ≥ 2 registers
``consent``        private   a community consent document beside the private corpus (:func:`consent_documents`)
=================  ========  ===================================================================================

*public* minimums are what a committed (public) corpus file can show: ``corpus check --new-language`` checks them.
*private* ones need the secret corpus, which never enters the repository: ``corpus check --private`` (a maintainers'
command, run where the private corpus is checked out) checks them.

**What counts as a new language.** Whether a corpus opens a language pair on the board is a fact about the pull
request, not about the file, so it is said explicitly: ``--new-language``. A rule guessed from the repository
(say, "a pair no other committed corpus covers") would make the same file pass or fail depending on what else is
committed — a second corpus for a pair would silence the check on the first. Instead every corpus committed to
``corpora/`` is held to the public minimums by the test suite (``tests/test_language_minimums.py`` checks
``corpora/*.json`` with ``--new-language``), so a language cannot get onto the board below them; the ten committed
corpora meet them all (330–356 development and 10–24 diagnostic entries, all five difficulty levels, two registers,
provenance and origin on every entry).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mtboard.core.schema import Corpus, Segment


CONSENT_SUFFIXES = (".md", ".txt", ".pdf", ".html")
"""File types a consent document may have (the consent minimum's fix text and :func:`consent_documents` both read
this)."""


@dataclass(frozen=True)
class Minimum:
    """One §11.1 requirement: ``key``; ``item`` (its number in §11.1); ``where`` (``public``: the committed file
    shows it; ``private``: only the secret corpus or the governance organisation's files do); ``need`` (the
    smallest count; for ``provenance`` 0 stands for "every entry"); ``field`` (what is counted); ``what`` (one line
    for the site page); ``fix`` (what to do when it is not met)."""

    key: str
    item: int
    where: str
    need: int
    field: str
    what: str
    fix: str
    short: str


MINIMUMS: tuple[Minimum, ...] = (
    Minimum("gold_standard", 1, "private", 50, "entries[].segment",
            "At least 50 entries in the secret gold_standard segment: official scores come only from them.",
            "add gold_standard entries to the private corpus", "≥ 50 gold_standard entries"),
    Minimum("development", 2, "public", 30, "entries[].segment",
            "At least 30 entries in the public development segment: methods are built and compared on them.",
            "add development entries", "≥ 30 development entries"),
    Minimum("diagnostic", 3, "public", 10, "entries[].segment",
            "At least 10 entries in the diagnostic segment, each aimed at a phenomenon of the language "
            "(morphology, agreement, honorifics …).",
            "add diagnostic entries for the language's phenomena", "≥ 10 diagnostic entries"),
    Minimum("provenance", 4, "public", 0, "entries[].provenance, entries[].origin",
            "Provenance on every entry: a provenance label (spec §2.5) and an origin saying where the text comes "
            "from (package, file and position; for text written by speakers, the contributor or session).",
            "give every entry a provenance label and an origin (origin.package at least)", "provenance and origin on every entry"),
    Minimum("difficulty", 5, "public", 3, "entries[].difficulty",
            "Entries at no fewer than 3 of the 5 difficulty levels.",
            "label entries with more difficulty levels (1–5), adding entries at the missing levels", "≥ 3 of the 5 difficulty levels"),
    Minimum("register", 6, "public", 2, "entries[].register",
            "Entries in at least 2 registers (conversational, formal, technical, ceremonial, educational).",
            "add entries of another register and label each entry's register", "≥ 2 registers"),
    Minimum("consent", 7, "private", 1, "consent document",
            "Community consent: a documented agreement with the language community, kept beside the private "
            "corpus as <corpus file stem>.consent.<ext> (e.g. mtb-en-xx-gold.consent.pdf).",
            f"put the signed agreement beside the private corpus as <stem>.consent{CONSENT_SUFFIXES[0]} "
            f"(or {', '.join(CONSENT_SUFFIXES[1:])})", "a community consent document"),
)
"""Spec §11.1's seven minimums, in its order."""

BY_KEY = {m.key: m for m in MINIMUMS}


def summary(where: str) -> str:
    """The ``short`` texts of the minimums checked ``where`` (public | private), joined: the CLI's help."""
    return ", ".join(m.short for m in MINIMUMS if m.where == where)


@dataclass(frozen=True)
class Unmet:
    """A minimum a corpus misses: ``minimum``, what was ``found`` and what is ``required`` (counts), and a
    ``detail`` (e.g. the first entry lacking provenance)."""

    minimum: Minimum
    found: int
    required: int
    detail: str = ""

    def line(self, where: str) -> str:
        """``<file>: <field>: <found> … , <required> required (spec §11.1 item N) (fix: …)``."""
        m = self.minimum
        detail = f"; {self.detail}" if self.detail else ""
        return (f"{where}: {m.field}: {_found(m, self.found, self.required)}, {_required(m, self.required)} "
                f"(spec §11.1 item {m.item}, minimum '{m.key}'{detail}) (fix: {m.fix})")


def _found(m: Minimum, found: int, required: int) -> str:
    return {"development": f"{found} development entries", "diagnostic": f"{found} diagnostic entries",
            "gold_standard": f"{found} gold_standard entries",
            "provenance": f"{found} of {required} entries have provenance and origin",
            "difficulty": f"{found} difficulty level{'' if found == 1 else 's'}",
            "register": f"{found} register{'' if found == 1 else 's'}",
            "consent": "no consent document"}[m.key]


def _required(m: Minimum, required: int) -> str:
    return "every entry required" if m.key == "provenance" else ("one required" if m.key == "consent"
                                                                  else f"{required} required")


def _has_provenance(e) -> bool:
    return bool(e.provenance and e.provenance.strip()) and e.origin is not None and bool(e.origin.package.strip())


def _counts(corpus: Corpus) -> dict[str, tuple[int, int, str]]:
    """``key → (found, required, detail)`` for every countable minimum."""
    seg = Counter(e.segment for e in corpus.entries)
    n = len(corpus.entries)
    lacking = [i for i, e in enumerate(corpus.entries) if not _has_provenance(e)]
    detail = ""
    if lacking:
        e = corpus.entries[lacking[0]]
        detail = f"first without: entries[{lacking[0]}] (id {e.id})"
    levels = sorted({e.difficulty for e in corpus.entries if e.difficulty is not None})
    registers = sorted({str(e.register) for e in corpus.entries if e.register is not None})
    return {"gold_standard": (seg[Segment.gold_standard], BY_KEY["gold_standard"].need, ""),
            "development": (seg[Segment.development], BY_KEY["development"].need, ""),
            "diagnostic": (seg[Segment.diagnostic], BY_KEY["diagnostic"].need, ""),
            "provenance": (n - len(lacking), n, detail),
            "difficulty": (len(levels), BY_KEY["difficulty"].need,
                           f"levels found: {', '.join(map(str, levels)) or 'none'}"),
            "register": (len(registers), BY_KEY["register"].need,
                         f"registers found: {', '.join(registers) or 'none'}")}


def _check(corpus: Corpus, keys: tuple[str, ...]) -> list[Unmet]:
    counts = _counts(corpus)
    out = []
    for key in keys:
        found, required, detail = counts[key]
        if found < required or (key == "provenance" and required == 0):
            out.append(Unmet(BY_KEY[key], found, required, detail))
    return out


def check_public(corpus: Corpus) -> list[Unmet]:
    """The public minimums (``where == "public"``, in §11.1 order) ``corpus`` misses; empty when it meets them.
    An empty corpus misses provenance too (no entry to carry it)."""
    return _check(corpus, tuple(m.key for m in MINIMUMS if m.where == "public"))


def consent_documents(corpus_path: Path) -> list[Path]:
    """The consent documents of a private corpus file: non-empty regular files named
    ``<corpus file stem>.consent<suffix>`` (:data:`CONSENT_SUFFIXES`) beside it, sorted. The document is the
    governance organisation's record of the community's agreement (spec §11.1 item 7, §8); mtboard checks that it
    is there and not empty, not what it says — a person reads it."""
    stem = corpus_path.name[:-len(".json")] if corpus_path.name.endswith(".json") else corpus_path.stem
    found = []
    for suffix in CONSENT_SUFFIXES:
        p = corpus_path.with_name(f"{stem}.consent{suffix}")
        if p.is_file() and not p.is_symlink() and p.stat().st_size > 0:
            found.append(p)
    return found


def check_private(corpus: Corpus, corpus_path: Path, *, new_language: bool,
                  documents: Callable[[Path], list[Path]] = consent_documents) -> list[Unmet]:
    """The private minimums the secret corpus at ``corpus_path`` misses: ``gold_standard`` always (spec §2.3 asks
    the same of every pair), ``consent`` when ``new_language``."""
    out = _check(corpus, ("gold_standard",))
    if new_language and not documents(corpus_path):
        out.append(Unmet(BY_KEY["consent"], 0, 1,
                         f"looked for {corpus_path.name.removesuffix('.json')}.consent"
                         f"{{{','.join(CONSENT_SUFFIXES)}}} beside it"))
    return out


__all__ = ["summary", "BY_KEY", "CONSENT_SUFFIXES", "MINIMUMS", "Minimum", "Unmet", "check_private", "check_public",
           "consent_documents"]
