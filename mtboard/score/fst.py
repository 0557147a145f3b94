"""FST acceptance (spec §4.1): the share of predicted words a morphological analyser of the target language accepts.

Analysers are the lttoolbox transducers shipped by Debian's Apertium language-pair packages
(``/usr/share/apertium/apertium-<pair>/<lang>-<other>.automorf.bin`` analyses ``<lang>``), run with ``lt-proc -w``
(dictionary case) in ONE process call per run over the unique candidate words, one per line (a line break ends any
multiword). A word is accepted when ``lt-proc`` returns an analysis (unknown words come back
as ``*word``).

Words checked (corpus-sources.md, measured on Apertium's Spanish analyser): letter words of the hypothesis
(apostrophes inside kept), skipping capitalised words (names, products, sentence starts) and words copied from the
source (case-insensitive), lower-cased before lookup.

``fst_version`` = ``"<package> <dpkg version>; <analyser file>; lttoolbox <dpkg version>"``; None when no analyser is
installed for the target language.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

from mtboard.core import debian
from mtboard.core.errors import BackendError
from mtboard.core.languages import primary
from mtboard.score.checks import words

APERTIUM_DIR = "/usr/share/apertium"

ISO639_3 = {"es": "spa", "ca": "cat", "en": "eng", "gl": "glg", "pt": "por", "fr": "fra", "it": "ita", "eu": "eus",
            "eo": "epo", "is": "isl", "mk": "mkd", "oc": "oci", "ro": "ron", "nb": "nob", "nn": "nno", "da": "dan",
            "sv": "swe", "sh": "hbs", "hr": "hbs", "sr": "hbs", "bs": "hbs", "cy": "cym", "br": "bre", "ast": "ast",
            "an": "arg", "kk": "kaz", "tt": "tat", "ru": "rus", "uk": "ukr", "be": "bel", "bg": "bul", "mt": "mlt",
            "ar": "ara", "he": "heb", "af": "afr", "nl": "nld", "de": "deu", "sl": "slv", "cs": "ces", "sk": "slk",
            "pl": "pol", "lv": "lav", "lt": "lit", "ga": "gle", "gd": "gla", "se": "sme", "fi": "fin", "et": "est",
            "hu": "hun", "tr": "tur", "id": "ind", "ms": "zlm", "hi": "hin", "ur": "urd", "sc": "srd"}
"""BCP 47 primary subtag → ISO 639-3 code used in Apertium file names (older pairs use the 2-letter code)."""


@dataclass(frozen=True)
class Analyser:
    """One installed lttoolbox analyser."""

    language: str
    """Primary language subtag it analyses (as asked)."""
    path: str
    """Absolute path of the ``.automorf.bin`` file."""
    package: str
    """Debian package owning the file."""
    package_version: str
    lttoolbox_version: str

    @property
    def version(self) -> str:
        """The card's ``fst_version`` string."""
        return (f"{self.package} {self.package_version}; {os.path.basename(self.path)}; "
                f"lttoolbox {self.lttoolbox_version}")


def _dpkg_version(package: str) -> str:
    """The installed version of ``package`` as the ``fst_version`` string writes it (:func:`mtboard.core.debian.
    package_version`, asked once per process; ``"unknown"`` when dpkg does not know it or its files are not
    installed)."""
    return debian.package_version(package) or "unknown"


def _candidates(lang: str) -> list[str]:
    codes = [lang]
    if lang in ISO639_3:
        codes.insert(0, ISO639_3[lang])
    found: list[str] = []
    for code in codes:
        found += sorted(glob.glob(os.path.join(APERTIUM_DIR, "apertium-*", f"{code}-*.automorf.bin")))
    return found


@functools.lru_cache(maxsize=64)
def find_analyser(target_language: str) -> Analyser | None:
    """The installed analyser for a BCP 47 language, or None (no ``lt-proc`` or no package with one).

    When several packages ship one, the first in sorted path order wins (deterministic on a given machine; the card's
    ``fst_version`` records which).
    """
    if shutil.which("lt-proc") is None:
        return None
    lang = primary(target_language)
    paths = _candidates(lang)
    if not paths:
        return None
    path = paths[0]
    package = os.path.basename(os.path.dirname(path))
    return Analyser(language=lang, path=path, package=package, package_version=_dpkg_version(package),
                    lttoolbox_version=_dpkg_version("lttoolbox"))


def _parse_units(chunk: str) -> list[tuple[str, bool]]:
    """``^surface/analysis…$`` units of one chunk → (surface, has_analysis)."""
    units = []
    pos = 0
    while True:
        start = chunk.find("^", pos)
        if start < 0:
            break
        end = chunk.find("$", start)
        if end < 0:
            break
        body = chunk[start + 1:end]
        surface, _, rest = body.partition("/")
        units.append((surface, bool(rest) and not rest.startswith("*")))
        pos = end + 1
    return units


def lookup(analyser: Analyser, candidates: list[str], *, timeout_s: float = 300.0) -> dict[str, bool]:
    """Accept/reject each distinct lower-cased word with one ``lt-proc -w`` call, one word per line.

    A word is accepted when every unit ``lt-proc`` splits it into that contains a letter has an analysis. (Not
    ``lt-proc -z``: lttoolbox 3.7 drops a word that could start a multiword when a null flush follows it, e.g.
    Catalan ``d'aleshores``; a final ``.`` line guards the end of input the same way.)

    Raises: BackendError when ``lt-proc`` fails, times out or its output does not line up with the input.
    """
    uniq = sorted(set(candidates))
    if not uniq:
        return {}
    data = "\n".join(uniq) + "\n.\n"
    try:
        proc = subprocess.run(["lt-proc", "-w", analyser.path], input=data.encode("utf-8"),
                              capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise BackendError(f"lt-proc timed out after {timeout_s:.0f} s on {len(uniq)} words", where=analyser.path,
                           fix="check the analyser with: echo casa | lt-proc -w FILE") from None
    except OSError as exc:
        raise BackendError(f"cannot run lt-proc: {exc.strerror}", where=analyser.path,
                           fix="apt-get install lttoolbox") from None
    if proc.returncode != 0:
        raise BackendError(f"lt-proc exited with {proc.returncode}", where=analyser.path,
                           fix="check the analyser with: echo casa | lt-proc -w FILE")
    lines = proc.stdout.decode("utf-8", errors="replace").split("\n")
    result: dict[str, bool] = {}
    for i, word in enumerate(uniq):
        units = _parse_units(lines[i]) if i < len(lines) else []
        if "".join(s for s, _ in units) != word:
            raise BackendError(f"lt-proc output does not line up with its input at word {i}", where=analyser.path,
                               fix="report the lttoolbox version (FST acceptance expects one output line per word)")
        result[word] = all(ok for s, ok in units if any(ch.isalpha() for ch in s))
    return result


def checkable_words(hypothesis: str, source: str) -> list[str]:
    """Lower-cased words of a hypothesis that FST acceptance checks (capitalised and source-copied words skipped)."""
    src = {w.casefold() for w in words(source)}
    return [w.lower() for w in words(hypothesis) if not w[0].isupper() and w.casefold() not in src]


def acceptance(analyser: Analyser, hypotheses: list[str], sources: list[str]) -> list[tuple[int, int]]:
    """Per segment ``(accepted, checked)`` word counts, with one ``lt-proc`` call for the whole run."""
    return acceptance_from_words(analyser, [checkable_words(h, s) for h, s in zip(hypotheses, sources, strict=True)])


def acceptance_from_words(analyser: Analyser, per_segment: list[list[str]]) -> list[tuple[int, int]]:
    """Per segment ``(accepted, checked)`` from already selected words (:func:`checkable_words`), one call."""
    table = lookup(analyser, [w for ws in per_segment for w in ws])
    return [(sum(1 for w in ws if table[w]), len(ws)) for ws in per_segment]
