"""Text helpers for corpus building: scripts, word counts, placeholders, debris, sentence splitting.

Pure functions over ``str``; no model, no network. Every rule here is documented in ``corpora/SOURCES.md`` and
unit-tested with hand-made strings (tests/test_corpora_filters.py). The placeholder and markup patterns are the
shared ones of :mod:`mtboard.core.text` (the mechanical policy uses the same); language tags are parsed by
:mod:`mtboard.core.languages`.
"""

from __future__ import annotations

import re
import unicodedata

from mtboard.core import text as shared
from mtboard.core.languages import primary

# --------------------------------------------------------------------------------------------------------------------
# Scripts

_KANA_RE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
CJK_LANGS = frozenset({"ja", "zh", "ko"})


def letters(text: str) -> int:
    """Number of Unicode letters (category L*) in ``text``."""
    return sum(1 for ch in text if unicodedata.category(ch).startswith("L"))


def cjk_chars(text: str) -> int:
    """Number of kana and CJK ideographs in ``text``."""
    return len(_CJK_RE.findall(text))


def has_kana(text: str) -> bool:
    """True when ``text`` holds at least one hiragana or katakana character."""
    return bool(_KANA_RE.search(text))


_LATIN_WORD_RE = re.compile(r"[^\W\d_](?:[\w'’.-]*\w)?|\d+(?:[.,]\d+)*", re.UNICODE)


CJK_CHARS_PER_WORD = 2.5
"""Kana/kanji counted as one word. Measured here: the Japanese sides of the ja→en corpus hold 2.3 CJK characters
per English word of the reference (the rest is Latin-script names and numbers), so 2.5 makes word counts of the
two sides agree within about 5 %."""


def word_count(text: str) -> int:
    """Words in ``text``: whitespace/punctuation-delimited non-CJK tokens (numbers included; a placeholder such as
    ``%(name)s`` or ``$unit.name|`` is one word), plus one word per
    :data:`CJK_CHARS_PER_WORD` kana/kanji (rounded half up; at least 1 when there is any).

    Japanese has no spaces; this documented approximation keeps length caps and difficulty comparable across
    directions without a tokenizer. Returns an int ≥ 0. Example: 'Hello, world 42 times' → 4; 'これはペンです。' → 3.
    """
    text = PLACEHOLDER_RE.sub(_keep_percent(" X "), text.replace("%%", "% "))
    n_cjk = cjk_chars(text)
    rest = _CJK_RE.sub(" ", text)
    cjk_words = max(1, int(n_cjk / CJK_CHARS_PER_WORD + 0.5)) if n_cjk else 0
    return len(_LATIN_WORD_RE.findall(rest)) + cjk_words


# --------------------------------------------------------------------------------------------------------------------
# Placeholders and markup (the shared patterns of mtboard.core.text)

PLACEHOLDER_RE = shared.PLACEHOLDER
"""Placeholders a translation must copy verbatim (:data:`mtboard.core.text.PLACEHOLDER`): ``%(name)s``, ``%1$s``,
``%s``/``%d``, ``%1``, ``{name}``, ``{{name}}``, ``$unit.name|``, ``${var}``, literal ``\\n``. The printf space flag
(``% d``) is not recognised, so prose such as '50% less' is not mistaken for ``% le``."""


def _keep_percent(repl: str):
    return lambda m: m.group(0) if m.group(0) == "%%" else repl


def placeholders(text: str) -> list[str]:
    """Sorted list (a multiset) of the placeholders in ``text``; ``%%`` is a literal percent, not a placeholder."""
    return sorted(shared.placeholders(text))


def has_markup(text: str) -> bool:
    """True when ``text`` holds an HTML/Pango tag such as ``<b>`` or ``<span color='red'>``
    (:data:`mtboard.core.text.TAG`)."""
    return bool(shared.TAG.search(text))


def strip_placeholders(text: str) -> str:
    """``text`` with placeholders, tags and ``&entities;`` removed (used to count the real letters left)."""
    text = PLACEHOLDER_RE.sub(_keep_percent(" "), text.replace("%%", "%"))
    text = shared.TAG.sub(" ", text)
    return shared.ENTITY.sub(" ", text)


# --------------------------------------------------------------------------------------------------------------------
# Debris and whitespace

_DEBRIS_CHARS = {
    "\u00b6": " ",  # ¶ pilcrow permalink
    "\u00a7\u00a7": " ",
    "\u00ad": "",  # soft hyphen
    "\u200b": "",  # zero-width space
    "\u200c": "",
    "\u200d": "",
    "\u2060": "",
    "\ufeff": "",
}
_DEBRIS_RE = re.compile(r"\[(?:edit|editar|modifier|bearbeiten|編集)\]|\s*\[\d{1,3}\]|\s*\(\s*permalink\s*\)", re.I)
NAVIGATION = frozenset(
    w.casefold() for w in (
        "prev", "previous", "next", "up", "home", "top", "back", "table of contents", "contents", "index",
        "anterior", "siguiente", "subir", "inicio", "índice", "contenido", "tabla de contenidos",
        "précédent", "suivant", "niveau supérieur", "début", "sommaire", "table des matières",
        "zurück", "weiter", "nach oben", "anfang", "inhaltsverzeichnis", "inhalt",
        "前へ", "次へ", "上に", "ホーム", "目次", "前", "次", "上",
        "següent", "amunt", "inici", "índex", "taula de continguts",
    )
)
"""Navigation labels (case-insensitive, whole text) that are page chrome, not content."""


def normalize_space(text: str) -> str:
    """NFC-normalise, turn every whitespace run (newlines included) into one space, strip the ends."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def clean_debris(text: str) -> str:
    """Remove markup/anchor debris: ``¶`` permalinks, soft hyphens, zero-width characters, ``[edit]``, footnote
    markers like ``[3]``, ``(permalink)``; then :func:`normalize_space`. Returns the cleaned text (maybe empty)."""
    for bad, good in _DEBRIS_CHARS.items():
        text = text.replace(bad, good)
    return normalize_space(_DEBRIS_RE.sub(" ", text))


def is_navigation(text: str) -> bool:
    """True when the whole text (after debris cleaning and trimming arrows/pipes) is a navigation label."""
    t = clean_debris(text).strip(" «»<>|/-–—→←↑").casefold()
    return t in NAVIGATION


_OPTION_LINE_RE = re.compile(r"^\s*(?:-[A-Za-z0-9?]|--[A-Za-z0-9])")
_USAGE_RE = re.compile(r"^\s*(?:usage|Usage|USAGE)\s*:", re.M)


def is_help_block(text: str) -> bool:
    """True for a multi-line command-line ``--help`` block: two or more non-empty lines and either a line that
    starts with an option (``-x``/``--long``) or a ``Usage:`` line. Single-line strings are never help blocks."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2:
        return False
    return bool(_USAGE_RE.search(text)) or any(_OPTION_LINE_RE.match(ln) for ln in lines)


_CODE_TOKEN_RE = re.compile(r"[/\\=$_{}<>|~`]|^-{1,2}\w|\(\)$|^\W+$")


def code_share(text: str) -> float:
    """Share (0–1) of whitespace-separated tokens that look like code: paths, options, variables, operators.

    Returns 0.0 for an empty string. Tokens counted: those containing any of ``/ \\ = $ _ { } < > | ~ `` ``,
    starting with ``-``/``--`` followed by a word character, ending in ``()``, or made only of symbols.
    """
    toks = text.split()
    if not toks:
        return 0.0
    return sum(1 for t in toks if _CODE_TOKEN_RE.search(t)) / len(toks)


# --------------------------------------------------------------------------------------------------------------------
# Sentence splitting

ABBREVIATIONS = frozenset(
    a.casefold() for a in (
        "e.g.", "i.e.", "etc.", "vs.", "cf.", "mr.", "mrs.", "ms.", "dr.", "st.", "no.", "nr.", "fig.", "approx.",
        "jr.", "sr.", "sra.", "sres.", "p.ej.", "ej.", "art.", "núm.", "pág.", "ca.", "z.b.", "bzw.", "d.h.", "usw.",
        "vgl.", "s.", "m.", "mme.", "mlle.", "p.ex.", "av.", "env.", "inc.", "ltd.", "co.", "vol.", "ch.", "sec.",
    )
)
"""Tokens ending in '.' that do not end a sentence (case-insensitive), plus any single letter + '.' (initials)."""

_LATIN_BOUNDARY_RE = re.compile(r"(?<=[.!?…])[\"'”’»)\]]*\s+(?=[\"'“‘«(¿¡]?[A-ZÀ-ÖØ-ÞĀ-ſ0-9])")
_CJK_BOUNDARY_RE = re.compile(r"(?<=[。！？!?])[」』）)\"”]*\s*(?=\S)")


def split_sentences(text: str, lang: str) -> list[str]:
    """Split ``text`` into sentences.

    Latin-script languages: after ``.``, ``!``, ``?`` or ``…`` (plus closing quotes/brackets) followed by whitespace
    and an upper-case letter, digit or opening quote; a '.' that ends a known abbreviation or a single-letter
    initial does not split. Japanese/Chinese: after ``。！？`` (plus closing brackets), no space needed.
    Returns a list of stripped, non-empty sentences (``[text]`` when nothing splits).
    """
    text = text.strip()
    if not text:
        return []
    if primary(lang) in CJK_LANGS:
        parts = []
        last = 0
        for m in _CJK_BOUNDARY_RE.finditer(text):
            parts.append(text[last:m.end()].strip())
            last = m.end()
        parts.append(text[last:].strip())
        return [p for p in parts if p]
    parts = []
    last = 0
    for m in _LATIN_BOUNDARY_RE.finditer(text):
        before = text[last:m.start()].rstrip()
        tail = before.split()[-1] if before.split() else ""
        core = tail.rstrip("\"'”’»)]")
        if core.casefold() in ABBREVIATIONS or re.fullmatch(r"(?:\w\.)+", core) and len(core) <= 4:
            continue
        parts.append(text[last:m.start()].strip() + text[m.start():m.end()].strip())
        last = m.end()
    parts.append(text[last:].strip())
    return [p for p in parts if p]
