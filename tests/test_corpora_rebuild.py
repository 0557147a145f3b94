"""corpora/SOURCES.md regenerates the committed corpora byte-identically (slow: downloads real upstream packages).

* The Django (ui) part of mtb-en-es-dev is rebuilt from the PyPI wheel alone (pip only) and compared entry by entry.
* The whole of mtb-en-es-dev is rebuilt from Debian, PyPI and npm packages and compared byte for byte, where the
  pinned Debian 12 packages are reachable with apt-get (skipped elsewhere, e.g. on a non-Debian CI runner).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mtboard.core.documents import load_corpus
from mtboard.core.schema import Domain

REPO = Path(__file__).resolve().parent.parent
DATASET = "mtb-en-es-dev"


def _build_module():
    spec = importlib.util.spec_from_file_location("mtb_corpora_build", REPO / "corpora" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_django_part_rebuilds_identically(tmp_path):
    build = _build_module()
    try:
        root = build.fetch({"django"}, tmp_path)
    except SystemExit as exc:  # pip could not reach PyPI
        pytest.skip(f"PyPI not reachable: {str(exc)[:200]}")
    recipe = next(r for r in build.RECIPES if r.id == DATASET)
    committed, _ = load_corpus(REPO / "corpora" / f"{DATASET}.json")
    parts = list(recipe.parts)
    k = next(i for i, p in enumerate(parts) if p.source == "django")
    earlier = {p.domain for p in parts[:k]}
    seen = {e.source.casefold() for e in committed.entries if e.domain in earlier}
    dev, diag = build.build_part(recipe, parts[k], root, seen, log=lambda *_: None)
    rebuilt = [e.model_dump(mode="json", exclude={"id"}) for e in dev + diag]
    expected = [e.model_dump(mode="json", exclude={"id"}) for e in committed.entries if e.domain == Domain.ui]
    assert len(rebuilt) == len(expected) == 55 + 8
    assert rebuilt == expected


def _debian_packages_available(build, recipe) -> bool:
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb") and shutil.which("npm")):
        return False
    apt = [f"{n}={build.PACKAGES[n][1]}" for n in sorted(build.packages_for(recipe)) if build.PACKAGES[n][0] == "apt"]
    # --print-uris downloads nothing and exits non-zero when a pinned version is not in the configured archive
    return subprocess.run(["apt-get", "download", "--print-uris", *apt], capture_output=True).returncode == 0


@pytest.mark.slow
def test_full_dataset_rebuilds_byte_identically(tmp_path):
    build = _build_module()
    recipe = next(r for r in build.RECIPES if r.id == DATASET)
    if not _debian_packages_available(build, recipe):
        pytest.skip("pinned Debian 12 packages, npm or dpkg-deb not available here")
    out = tmp_path / "out"
    rc = build.main(["--only", DATASET, "--out", str(out), "--cache", str(tmp_path / "cache")])
    assert rc == 0
    assert (out / f"{DATASET}.json").read_bytes() == (REPO / "corpora" / f"{DATASET}.json").read_bytes()


@pytest.mark.slow
def test_es_en_variants_are_english_msgids_with_the_same_translation(tmp_path):
    """mtb-es-en-dev's variants are human-attested: each one is an English msgid of the same Django catalogues whose
    Spanish translation is exactly the entry's source. Hand-checked in Django 5.2.19's admin catalogue:
    ``msgid "Remove"`` (line 115) and ``msgid "Delete"`` (line 291) both have ``msgstr "Eliminar"``."""
    import polib

    build = _build_module()
    try:
        root = build.fetch({"django"}, tmp_path)
    except SystemExit as exc:  # pip could not reach PyPI
        pytest.skip(f"PyPI not reachable: {str(exc)[:200]}")
    corpus, _ = load_corpus(REPO / "corpora" / "mtb-es-en-dev.json")
    e104 = corpus.entries[103]
    assert (e104.id, e104.source, e104.reference, e104.variants, e104.variant_class) == (
        104, "Eliminar", "Remove", ["Delete"], "same-translation")
    admin = polib.pofile(str(root / "django/contrib/admin/locale/es/LC_MESSAGES/django.po"))
    assert {m.msgid for m in admin if m.msgstr == "Eliminar" and not m.msgctxt} == {"Remove", "Delete"}
    catalogue: set[tuple[str, str]] = set()
    for po in sorted(root.glob("django/**/locale/es/LC_MESSAGES/django.po")):
        catalogue |= {(m.msgid, m.msgstr) for m in polib.pofile(str(po)) if m.msgstr}
    django_variants = [(v, e.source) for e in corpus.entries if e.origin.package == "django" for v in e.variants]
    assert len(django_variants) == 4  # Eliminar ← Delete, Buscar ← Lookup / Search, nombre ← first name
    assert all(pair in catalogue for pair in django_variants), django_variants


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["mtb-es-en-dev", "mtb-ca-en-dev"])
def test_reversed_dataset_rebuilds_byte_identically(tmp_path, dataset):
    """The turned-around datasets and their glossaries rebuild byte for byte (needs the pinned Debian packages and the
    installed apertium / lttoolbox versions that corpora/build.py TOOLS names)."""
    build = _build_module()
    recipe = next(r for r in build.RECIPES if r.id == dataset)
    if not _debian_packages_available(build, recipe) or not shutil.which("apertium-tagger"):
        pytest.skip("pinned Debian 12 packages, npm, dpkg-deb or apertium-tagger not available here")
    out = tmp_path / "out"
    rc = build.main(["--only", dataset, "--out", str(out), "--cache", str(tmp_path / "cache")])
    assert rc == 0
    assert (out / f"{dataset}.json").read_bytes() == (REPO / "corpora" / f"{dataset}.json").read_bytes()
    gloss = build.GLOSSARY_FILE.format(lang=recipe.catalog_lang)
    assert (out / gloss).read_bytes() == (REPO / "corpora" / gloss).read_bytes()
