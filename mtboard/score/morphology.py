"""Morphological accuracy (spec §4.1; docs/SCORING_SPEC.md §2.7), measured against Apertium **machine** analyses of
the references, not gold ones.

Spec §4.1 defines the metric on gold-standard morphological analyses: the fraction of correctly produced morphemes,
finer than FST acceptance (a word can be accepted by the analyser yet have the wrong morpheme structure: right root,
wrong tense). No committed corpus has gold analyses; ``mtb-es-en-dev`` and ``mtb-ca-en-dev`` carry, per entry,
``morphological_analysis`` = Apertium's analysis of the English reference (``lt-proc`` + ``apertium-tagger -g -p``,
Apertium stream format ``^looks/look<n><pl>$``; ``corpora/build.py`` :func:`analyse_english`, ``corpora/SOURCES.md``).
This module measures against those, and every label says so.

Definition:

* **units** of an analysis: its analysed words ``lemma<tag><tag>…``, case-folded (the tagger's one reading per word,
  multiword readings joined by ``+`` kept whole), leaving out unknown words (``*word``) and punctuation (first tag in
  :data:`PUNCT_TAGS`). :func:`units`.
* the hypothesis is analysed by the same analyser and tagger the corpus used (:func:`find_morph_analyser`: the
  Apertium pair joining the source and target languages; one ``lt-proc`` + ``apertium-tagger`` process pair per run,
  :func:`analyse`), its units taken the same way.
* per entry: ``matched`` = clipped multiset recall count — Σ over distinct reference units of
  min(count in reference, count in hypothesis); ``units`` = number of reference units. A right lemma with a wrong tag
  (``walk<vblex><past>`` for ``walk<vblex><pri><p3><sg>``) is a miss.
* per card: Σ matched ÷ Σ units over the entries whose corpus analysis has at least one unit (coverage is decided by
  the corpus, never by the output: an entry without usable output or with an empty hypothesis counts its units with
  0 matched), 0–1; None when no entry has a unit or no analyser + tagger is installed.

Identity (the card's ``scores.signatures.morphology``, :func:`signature`):
``morph:<package> <dpkg version>; <pair>.automorf.bin + <pair>.prob; lttoolbox <v>; apertium <v>|units:lemma+tags,
-unknown,-punct|recall:clipped|pooled|reference:apertium-machine-analysis,not-gold``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass

from mtboard.core.errors import BackendError
from mtboard.core.languages import primary
from mtboard.score import fst as fst_mod

PUNCT_TAGS = frozenset({"sent", "cm", "lpar", "rpar", "lquest", "rquest", "guio", "apos", "quot", "lquot", "rquot",
                        "percent", "lpunt", "rpunt"})
"""Apertium's punctuation tags: a unit whose first tag is one of these is not counted."""

_UNIT = re.compile(r"\^((?:\\.|[^$\\])*)\$")
_SLASH = re.compile(r"(?<!\\)/")
_STREAM_RESERVED = re.compile(r"[\\^$@\[\]{}/<>]")
"""Characters with a meaning in Apertium's stream format, backslash-escaped before ``lt-proc`` (as corpora/build.py)."""
_UNESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class MorphAnalyser:
    """An installed Apertium analyser (``.automorf.bin``) with its tagger model (``.prob``) beside it."""

    package: str
    package_version: str
    automorf: str
    """Absolute path of the ``<pair>.automorf.bin`` analyser."""
    prob: str
    """Absolute path of the ``<pair>.prob`` tagger model."""
    lttoolbox_version: str
    apertium_version: str

    @property
    def version(self) -> str:
        """``<package> <version>; <analyser> + <tagger model>; lttoolbox <v>; apertium <v>``."""
        return (f"{self.package} {self.package_version}; {os.path.basename(self.automorf)} + "
                f"{os.path.basename(self.prob)}; lttoolbox {self.lttoolbox_version}; apertium {self.apertium_version}")


def _code(lang: str) -> str:
    lang = primary(lang)
    return fst_mod.ISO639_3.get(lang, lang)


@functools.lru_cache(maxsize=64)
def find_morph_analyser(source_language: str, target_language: str) -> MorphAnalyser | None:
    """The analyser + tagger of the target language the corpora's analyses were made with, or None (no ``lt-proc`` /
    ``apertium-tagger``, or no pair data with both files).

    Rule: the Apertium pair package joining the two languages (``apertium-<tgt>-<src>`` or ``apertium-<src>-<tgt>``,
    ISO 639-3 codes) with ``<tgt>-<src>.automorf.bin`` and ``<tgt>-<src>.prob`` (es→en: ``apertium-eng-spa``'s
    ``eng-spa.*``, as corpora/build.py analysed mtb-es-en-dev's references); else the FST acceptance analyser
    (:func:`mtboard.score.fst.find_analyser`) when its ``.prob`` sits beside it.
    """
    if shutil.which("lt-proc") is None or shutil.which("apertium-tagger") is None:
        return None
    tgt, src = _code(target_language), _code(source_language)
    paths: list[tuple[str, str]] = []
    for pkg in (f"apertium-{tgt}-{src}", f"apertium-{src}-{tgt}"):
        base = os.path.join(fst_mod.APERTIUM_DIR, pkg, f"{tgt}-{src}")
        paths.append((base + ".automorf.bin", base + ".prob"))
    fallback = fst_mod.find_analyser(target_language)
    if fallback is not None:
        paths.append((fallback.path, fallback.path.removesuffix(".automorf.bin") + ".prob"))
    for automorf, prob in paths:
        if os.path.isfile(automorf) and os.path.isfile(prob):
            package = os.path.basename(os.path.dirname(automorf))
            return MorphAnalyser(package=package, package_version=fst_mod._dpkg_version(package),
                                 automorf=automorf, prob=prob, lttoolbox_version=fst_mod._dpkg_version("lttoolbox"),
                                 apertium_version=fst_mod._dpkg_version("apertium"))
    return None


def signature(analyser: MorphAnalyser) -> str:
    """The card's ``scores.signatures.morphology`` string (module docstring)."""
    return (f"morph:{analyser.version}|units:lemma+tags,-unknown,-punct|recall:clipped|pooled"
            f"|reference:apertium-machine-analysis,not-gold")


def units(analysis: str | None) -> list[str]:
    """The counted units of an Apertium stream (``^surface/lemma<tag>…$ …``), in order: each word's reading
    ``lemma<tag><tag>…`` (backslash escapes removed, case-folded: Apertium copies a sentence-initial capital into
    the lemma, ``The/The<det>…``), unknown words (``*``) and punctuation (:data:`PUNCT_TAGS`) left
    out; ``[]`` for None or a text with no unit.

    >>> units("^He/prpers<prn><subj><p3><m><sg>$ ^walks/walk<vblex><pri><p3><sg>$^./.<sent>$")
    ['prpers<prn><subj><p3><m><sg>', 'walk<vblex><pri><p3><sg>']
    """
    out: list[str] = []
    for m in _UNIT.finditer(analysis or ""):
        parts = _SLASH.split(m.group(1), maxsplit=1)
        if len(parts) < 2 or not parts[1] or parts[1].startswith("*"):
            continue
        reading = _UNESCAPE.sub(r"\1", parts[1]).casefold()
        tag = re.match(r"[^<]*<([^>]*)>", reading)
        if tag is not None and tag.group(1) in PUNCT_TAGS:
            continue
        out.append(reading)
    return out


def matched(reference_units: list[str], hypothesis_units: list[str]) -> int:
    """Clipped multiset recall count: Σ over distinct reference units of min(reference count, hypothesis count)."""
    hyp = Counter(hypothesis_units)
    return sum(min(n, hyp[u]) for u, n in Counter(reference_units).items())


def analyse(analyser: MorphAnalyser, texts: list[str], *, timeout_s: float = 300.0) -> list[str]:
    """Apertium's analysis of each text, as corpora/build.py made the corpora's: reserved characters
    backslash-escaped, line breaks as spaces, one text per line, ONE ``lt-proc`` + ``apertium-tagger -g -p`` process
    pair for all of them; whitespace runs in each output line collapsed to one space. Empty (or blank) texts are not
    sent and come back as ``""``.

    Raises: BackendError when a process fails, times out or the output lines do not match the input lines.
    """
    keep = [i for i, t in enumerate(texts) if t.strip()]
    out = [""] * len(texts)
    if not keep:
        return out
    data = "".join(_STREAM_RESERVED.sub(r"\\\g<0>", " ".join(texts[i].split())) + "\n" for i in keep)
    fix = "check the pair with: echo 'He walks' | lt-proc ANALYSER | apertium-tagger -g -p PROB"
    try:
        morf = subprocess.run(["lt-proc", analyser.automorf], input=data, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
        if morf.returncode != 0:
            raise BackendError(f"lt-proc exited with {morf.returncode}", where=analyser.automorf, fix=fix)
        tagged = subprocess.run(["apertium-tagger", "-g", "-p", analyser.prob], input=morf.stdout,
                                capture_output=True, text=True, timeout=timeout_s, check=False)
        if tagged.returncode != 0:
            raise BackendError(f"apertium-tagger exited with {tagged.returncode}", where=analyser.prob, fix=fix)
    except subprocess.TimeoutExpired:
        raise BackendError(f"the analyser timed out after {timeout_s:.0f} s on {len(keep)} texts",
                           where=analyser.automorf, fix=fix) from None
    except OSError as exc:
        raise BackendError(f"cannot run the analyser: {exc.strerror}", where=analyser.automorf,
                           fix="apt-get install lttoolbox apertium") from None
    lines = tagged.stdout.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(keep):
        raise BackendError(f"{len(keep)} texts gave {len(lines)} analysed lines", where=analyser.automorf, fix=fix)
    for i, line in zip(keep, lines):
        out[i] = " ".join(line.split())
    return out


def entry_counts(analyser: MorphAnalyser, reference_analyses: list[str | None], hypotheses: list[str],
                 usable: list[bool]) -> list[tuple[int, int] | None]:
    """Per entry ``(matched, units)``, or None when its reference analysis has no unit (not covered). An entry
    without usable output scores 0 matched. One analyser call for the hypotheses of the covered, usable entries."""
    ref = [units(a) for a in reference_analyses]
    todo = [i for i, u in enumerate(ref) if u and usable[i]]
    analysed = dict(zip(todo, analyse(analyser, [hypotheses[i] for i in todo])))
    return [None if not u else (matched(u, units(analysed[i])) if i in analysed else 0, len(u))
            for i, u in enumerate(ref)]


def accuracy(matched_counts: list[int], unit_counts: list[int]) -> float | None:
    """Σ matched ÷ Σ units (pooled), None when there is no unit."""
    total = sum(unit_counts)
    return sum(matched_counts) / total if total else None
