"""A small secret corpus built at test time (issue 17 acceptance): human en→es translations from the gettext catalog
of Debian's ``apt`` package (``/usr/share/locale/es/LC_MESSAGES/apt.mo``, apt 2.6.1, GPL-2.0-or-later; the translation
team's work) — a package none of the public corpora uses (corpora/build.py: PACKAGES). Generated into a temporary
folder, never committed: single-line messages of 4–16 words without format placeholders, in catalog order, the first
``gold`` as gold_standard and the next ``held_out`` as held_out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mtboard.inputs.corpora.importers.catalog import read_catalog
from mtboard.core.documents import corpus_bytes
from mtboard.core.schema import Corpus

APT_MO = Path("/usr/share/locale/es/LC_MESSAGES/apt.mo")


def apt_pairs() -> list[tuple[str, str]]:
    if not APT_MO.is_file():
        pytest.skip(f"{APT_MO} (Debian package apt) is not installed here")
    out = []
    for p in read_catalog(APT_MO, plurals=False):
        if "\n" in p.source or "%" in p.source or re.search(r"[{}<>$\\]|--", p.source):
            continue
        if 4 <= len(p.source.split()) <= 16 and p.source != p.reference:
            out.append((p.source, p.reference))
    return out


def write_secret_corpus(folder: Path, *, gold: int = 60, held_out: int = 10,
                        dataset_id: str = "test-secret-en-es") -> Path:
    pairs = apt_pairs()
    assert len(pairs) >= gold + held_out, len(pairs)
    entries = [{"id": i + 1, "source": s, "reference": r, "segment": "gold_standard" if i < gold else "held_out",
                "provenance": "gold_standard", "domain": "tech"}
               for i, (s, r) in enumerate(pairs[:gold + held_out])]
    corpus = Corpus.model_validate({"dataset": {
        "id": dataset_id, "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
        "target_language": "es", "created": "2026-12-01", "license": "GPL-2.0-or-later",
        "provenance": ["gold_standard"],
        "description": "Test-only secret corpus from Debian apt's Spanish message catalog (never committed)."},
        "entries": entries})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dataset_id}.json"
    path.write_bytes(corpus_bytes(corpus))
    return path
