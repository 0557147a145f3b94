"""What a name's characters look like (issue 32 item 5): the script and look-alike rules of :mod:`mtboard.core.names`.

:mod:`mtboard.core.names` refuses the characters that hide or reorder text; this module refuses the visible ones
that make a name read as another: compatibility characters, scripts mixed beyond what honest names need, characters
Unicode lists as confusable with ASCII, and punctuation or symbols of a script the name does not use. Each function
returns a :class:`~mtboard.core.names.NameProblem`-shaped tuple ``(what, char, index, fix)`` or ``None``;
:func:`mtboard.core.names.name_problem` runs them in the order below, after the character classes and NFC.

1. :func:`nfkc_problem` — every character is its own NFKC form (UAX #15, Normalization Form KC): full-width
   ``Ｇ``, ligatures ``ﬁ``, mathematical alphanumerics ``𝐠``, letterlike ``ℊ``, long ``ſ``, super/subscripts ``²``,
   Roman numerals ``Ⅳ``, half-width katakana ``ﾃ`` are refused, the error naming the form to write.
2. :func:`mixed_script_problem` — UTS #39 §5.2 *moderately restrictive*, without the scripts whose letters copy
   Latin's (:data:`LATIN_LOOKALIKE_SCRIPTS`: Cyrillic, Greek, Armenian): one script (the resolved script set of §5.1,
   with ``Script_Extensions`` and the augmented sets), or Latin + Han + Hiragana + Katakana, Latin + Han + Bopomofo,
   Latin + Han + Hangul, or Latin + one other *Recommended* script (UAX #31 Table 5) not in that table.
3. :func:`ascii_lookalike_problem` — a non-ASCII character that Unicode's confusables data (UTS #39 §4,
   ``confusables.txt``, as shipped by the maintained ``confusable_homoglyphs`` package) lists as confusable with an
   ASCII string: ``ı`` (``i``), ``ɑ`` (``a``), ``ɡ`` (``g``), ``æ`` (``ae``), ``∕`` and ``⁄``
   (``/``), ``‐``, ``–`` and ``−`` (``-``), ``օ`` (``o``)… Refused when it is a Latin, Common or Inherited character
   (a single-script look-alike: it sits among ASCII letters), or a letter of another script in a name that also holds
   a Latin letter (a mixed-script look-alike). A letter of another script that only resembles ASCII *punctuation*
   (``ノ`` for ``/``) is refused only between two ASCII characters, where it stands for that punctuation, so honest
   Japanese such as ``ELYZA-ノート`` passes while ``googleノgemma`` does not. A name wholly in another script keeps its
   letters (an all-Cyrillic ``Яндекс``): whole-script confusables are not refused.
4. :func:`common_script_problem` — a non-ASCII character of script Common or Inherited (punctuation, symbols,
   combining marks) is allowed only where its ``Script_Extensions`` include a script of the name's letters (``ー``
   U+30FC and ``・`` U+30FB with kana, ``、`` with Han, U+0301 with Latin), plus the arrows U+2190–U+21FF (the project
   writes language pairs ``EN→ES``). So ``™``, ``✓``, emoji and ``。`` in a Latin name are refused.

Why ``confusable_homoglyphs`` and not ICU: PyICU's ``SpoofChecker`` (the reference UTS #39 implementation) needs ICU
built or a 20–65 MB binary wheel; ``confusable_homoglyphs`` (MIT, pure Python) ships ``confusables.txt`` as a
two-way map, which is all a look-alike-of-ASCII test needs (a character is listed with its prototype and the
prototype with it, so one look-up finds every ASCII string of its class: checked over every code point, a second hop
adds none). Its script counting (``Scripts.txt`` alone) is not used: the script sets here are the ``regex`` module's
``Script_Extensions``.
"""

from __future__ import annotations

import functools
import unicodedata

import regex
from confusable_homoglyphs import confusables as _homoglyphs

Problem = tuple[str, "str | None", "int | None", str]
"""``(what, char, index, fix)``: the fields of :class:`mtboard.core.names.NameProblem`."""

# ISO 15924 codes of the Script / Script_Extensions values (Unicode PropertyValueAliases.txt, ``sc``); a code the
# installed regex module does not know is skipped. Zyyy (Common) and Zinh (Inherited) mean "any script".
_SCRIPT_CODES = (
    "Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Berf Bhks Bopo Brah Brai Bugi Buhd Cakm Cans Cari "
    "Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Gara Geor Glag Gong Gonm Goth "
    "Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital Java Jurc Kali Kana Kawi Khar "
    "Khmr Khoj Kits Knda Krai Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf "
    "Mend Merc Mero Miao Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh "
    "Orya Osge Osma Ougr Palm Pauc Pcun Perm Phag Phli Phlp Phnx Prti Rjng Rohg Runr Samr Sarb Saur Seal Sgnw Shaw "
    "Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Tayo Telu "
    "Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Tols Toto Tutg Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb").split()
RECOMMENDED = frozenset(("Arab Armn Beng Bopo Cyrl Deva Ethi Geor Grek Gujr Guru Hang Hani Hebr Hira Kana Knda Khmr "
                         "Laoo Latn Mlym Mymr Orya Sinh Taml Telu Thaa Thai Tibt").split())
"""Recommended scripts for identifiers (UAX #31 Table 5), Common and Inherited aside."""
LATIN_LOOKALIKE_SCRIPTS = frozenset({"Cyrl", "Grek", "Armn"})
"""Recommended scripts that may not mix with Latin at all: the three with ten or more letters Unicode's
confusables data lists as confusable with ASCII letters (Cyrillic 53 characters, Greek 38, Armenian 16 — ``օ ս ո
հ ա``…; every other Recommended script has at most four, mostly a digit zero that looks like ``o``, which
:func:`ascii_lookalike_problem` refuses one by one). tests/test_names_rule.py re-derives this set from the data."""
_AUGMENT = {"Hani": {"Hanb", "Jpan", "Kore"}, "Hira": {"Jpan"}, "Kana": {"Jpan"}, "Hang": {"Kore"},
            "Bopo": {"Hanb"}}
"""UTS #39 §5.1: the augmented script set adds the writing systems a script is part of."""
_HIGHLY = (frozenset({"Latn", "Hani", "Hira", "Kana"}), frozenset({"Latn", "Hani", "Bopo"}),
           frozenset({"Latn", "Hani", "Hang"}))
"""UTS #39 §5.2 "Highly Restrictive": the script combinations of Japanese, Chinese and Korean with Latin."""
_SCRIPT_NAMES = {"Latn": "Latin", "Cyrl": "Cyrillic", "Grek": "Greek", "Hani": "Han", "Hira": "Hiragana",
                 "Kana": "Katakana", "Hang": "Hangul", "Bopo": "Bopomofo", "Arab": "Arabic", "Hebr": "Hebrew",
                 "Cher": "Cherokee", "Armn": "Armenian", "Geor": "Georgian", "Deva": "Devanagari",
                 "Copt": "Coptic", "Brai": "Braille"}
_COMMON = regex.compile(r"[\p{sc=Zyyy}\p{sc=Zinh}]")
_LATIN = regex.compile(r"\p{sc=Latn}")
_ARROWS = range(0x2190, 0x2200)
"""The Arrows block: Common characters allowed in any name (language pairs are written ``EN→ES``)."""
FIX_SCRIPTS = ("write the name in one script: a name may mix Latin only with Han and kana, Han and Bopomofo, Han and "
               "Hangul, or one other recommended script that is not Cyrillic, Greek or Armenian (Unicode UTS #39 "
               "§5.2, moderately restrictive)")


def shown(text: str) -> str:
    """``text`` quoted when it is printable ASCII (``'fi'``), else as its code points and names
    (``U+30C6 KATAKANA LETTER TE``), so an error never echoes a character that could itself spoof."""
    if text.isascii() and text.isprintable():
        return f"'{text}'"
    return " + ".join(f"U+{ord(c):04X} {unicodedata.name(c, '<unnamed>')}" for c in text)


@functools.cache
def _script_patterns() -> tuple[tuple[str, regex.Pattern[str]], ...]:
    out = []
    for code in _SCRIPT_CODES:
        try:
            out.append((code, regex.compile(rf"\p{{scx={code}}}")))
        except regex.error:  # pragma: no cover - an older regex without this script
            continue
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def scripts(ch: str) -> frozenset[str]:
    """The augmented ``Script_Extensions`` set of one character (UTS #39 §5.1) as ISO 15924 codes; the empty set for
    Common and Inherited characters that belong to no particular script (digits, ``-``, ``.``, ``™``)."""
    if ch.isascii():
        return frozenset({"Latn"}) if ch.isalpha() else frozenset()
    found = {code for code, rx in _script_patterns() if rx.match(ch)}
    for code in list(found):
        found |= _AUGMENT.get(code, set())
    return frozenset(found)


def nfkc_problem(text: str) -> Problem | None:
    """UAX #15: the first character whose NFKC form differs from it, e.g. U+FF27 FULLWIDTH LATIN CAPITAL LETTER G
    (NFKC ``G``); None when every character is NFKC-stable. Run after the NFC test (a composed sequence is caught
    there). Python's :mod:`unicodedata` provides the forms."""
    for i, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch)
        if folded != ch:
            return (f"a compatibility character (Unicode NFKC writes it {shown(folded)}):", ch, i,
                    f"write {shown(folded)} instead (names are NFKC-stable: UAX #15, so full-width, ligature, "
                    "mathematical, superscript and Roman-numeral forms are refused)")
    return None


def mixed_script_problem(text: str) -> Problem | None:
    """UTS #39 §5.2 (module docstring, rule 2): None when the scripts of ``text``'s letters may go together, else the
    first character that breaks the rule, with every script the name's letters use named."""
    per_char = [(i, ch, s) for i, ch in enumerate(text) if (s := scripts(ch))]
    if not per_char:
        return None
    if frozenset.intersection(*(s for _, _, s in per_char)):  # single script
        return None
    if any(all(s & combo for _, _, s in per_char) for combo in _HIGHLY):
        return None
    others = [(i, ch, s) for i, ch, s in per_char if "Latn" not in s]
    if others and frozenset.intersection(*(s for _, _, s in others)) & (RECOMMENDED - LATIN_LOOKALIKE_SCRIPTS):
        return None
    first = per_char[0][2]
    i, ch, _ = others[0] if others and len(others) < len(per_char) else next(
        (i, ch, s) for i, ch, s in per_char if not s & first)
    named = sorted({_SCRIPT_NAMES.get(c, c) for _, _, s in per_char for c in s} - {"Jpan", "Kore", "Hanb"})
    listed = f"{', '.join(named[:-1])} and {named[-1]}"
    return f"mixes the scripts {listed}, e.g.", ch, i, FIX_SCRIPTS


@functools.lru_cache(maxsize=4096)
def ascii_lookalike(ch: str) -> str:
    """The printable-ASCII string Unicode's confusables data lists as confusable with the non-ASCII character ``ch``
    (``ı`` → ``'i'``, ``æ`` → ``'ae'``); ``''`` for ASCII characters and for characters confusable with nothing in
    ASCII (``é`` is ``e`` + U+0301 there: not ASCII). The data lists at most one per character (checked over every
    key: each character maps to one prototype, and ASCII is its own prototype); were there two, the first in code
    point order is returned."""
    if ch.isascii():
        return ""
    found = _homoglyphs.is_confusable(ch, greedy=True)
    glyphs = {g["c"] for hit in found or () for g in hit["homoglyphs"]}
    return min((g for g in glyphs if g.isascii() and g.isprintable()), default="")


def ascii_lookalike_problem(text: str) -> Problem | None:
    """UTS #39 §4 (module docstring, rule 3): the first character that reads as ASCII it is not, or None."""
    has_latin = any(_LATIN.match(ch) for ch in text)
    for i, ch in enumerate(text):
        look = ascii_lookalike(ch)
        if not look:
            continue
        own = _COMMON.match(ch) is not None or _LATIN.match(ch) is not None
        if not own:
            if not has_latin:
                continue  # a whole-script name (all Cyrillic, all Arabic …) keeps its letters
            if not any(c.isalnum() for c in look):  # resembles punctuation only: refused inside ASCII
                if not (0 < i < len(text) - 1 and text[i - 1].isascii() and text[i + 1].isascii()):
                    continue
        alike = shown(look)
        fix = (f"write {alike} in ASCII, or a character that is not its look-alike" if own else
               f"write the name in one script, or {alike} in ASCII")
        return f"a look-alike of ASCII {alike} (Unicode confusables, UTS #39 §4):", ch, i, fix
    return None


def common_script_problem(text: str) -> Problem | None:
    """UTS #39 §5.1 (module docstring, rule 4): the first non-ASCII Common or Inherited character whose
    ``Script_Extensions`` hold none of the scripts of the name's other characters, or None. Arrows pass."""
    letters = frozenset().union(*(scripts(ch) for ch in text if not _COMMON.match(ch)))
    for i, ch in enumerate(text):
        if ch.isascii() or not _COMMON.match(ch) or ord(ch) in _ARROWS or scripts(ch) & letters:
            continue
        return ("a punctuation mark, symbol or combining mark of no script the name's letters use "
                "(Script_Extensions, UTS #39 §5.1):", ch, i,
                "remove it or write it in ASCII: a non-ASCII character of script Common or Inherited is allowed only "
                "where its Script_Extensions include a script of the name's letters (U+30FC with kana), and arrows "
                "U+2190–U+21FF")
    return None
