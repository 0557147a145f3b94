"""Quality filters for parallel text (issue 2 item 5), applied to every importer's output.

Each filter is a small function returning ``None`` (keep) or a short reason string (drop). :func:`check_pair` runs them
in a fixed order and returns the first reason; :func:`cap_segments` splits or drops long paragraphs. Every rule is
documented in ``corpora/SOURCES.md`` ("Filters") and unit-tested with hand-made inputs.

Order (first failure wins): ``markup`` → ``help_block`` → ``too_few_letters`` → ``code`` → ``navigation`` →
``same_text`` → ``placeholder_mismatch`` → ``source_language`` → ``target_language`` → ``length_ratio``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from mtboard.inputs.corpora import text as T
from mtboard.core.languages import primary

MIN_LETTERS = 2
"""A side with fewer Unicode letters (after removing placeholders and tags) is format-only or a symbol: dropped."""
MAX_CODE_SHARE = 0.4
"""A source whose share of code-looking tokens exceeds this is a command line or path list: dropped."""
RATIO_MIN_CHARS = 20
"""Length-ratio bounds apply only when the longer side has at least this many characters (short UI labels such as
'OK' → 'Aceptar' legitimately differ by a factor of 3)."""
CAP_WORDS = 60
"""Longest segment kept (words, :func:`mtboard.inputs.corpora.text.word_count`); TER cost is super-linear in length."""
SPLIT_ABOVE_WORDS = 30
"""Paragraphs longer than this are split into sentence pairs when both sides split into the same number."""

STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the of and to in is that for it with as on are be this by from or an was not you at which"
                    .split()),
    "es": frozenset("el la los las de del que y en un una es por para con no se su al lo como más pero sus".split()),
    "fr": frozenset("le la les de des du et en un une est que qui pour dans pas sur au aux ce ces avec se il".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den von mit sich des auf für im dem werden wird es".split()),
    "ca": frozenset("el la els les de del i que en un una és per amb no es als al seu dels com".split()),
    "pt": frozenset("o a os as de do da dos das que e em um uma é para com não se por no na".split()),
    "it": frozenset("il lo la gli le di del della che e in un una è per con non si da al".split()),
}
"""Frequent function words per language (hand-picked; ≈20 each), used by the stopword language check."""
STOPWORD_MIN_WORDS = 5
"""The stopword check runs only on Latin-script texts of at least this many words."""


def ratio_bounds(source_lang: str, target_lang: str) -> tuple[float, float]:
    """Allowed ``len(reference) / len(source)`` in characters for a language pair.

    Same script family: 0.5–2.0. Latin → CJK: 0.15–1.2 (one kanji carries what 2–4 Latin letters do). CJK → Latin:
    the inverse, 0.83–6.67. Returns ``(low, high)``.
    """
    s_cjk = primary(source_lang) in T.CJK_LANGS
    t_cjk = primary(target_lang) in T.CJK_LANGS
    if s_cjk == t_cjk:
        return (0.5, 2.0)
    if t_cjk:
        return (0.15, 1.2)
    return (1 / 1.2, 1 / 0.15)


def language_problem(text: str, lang: str) -> str | None:
    """Does ``text`` look like language ``lang``? Returns ``None`` when plausible, else a short reason.

    * CJK languages (ja, zh, ko): at least one CJK character, and for ``ja`` at least one kana when the text has
      four or more CJK characters (pure-kanji strings of that length are more likely Chinese), and CJK characters
      make up at least 25 % of the letters.
    * Every other language: no kana and no CJK ideographs at all; and, for texts of ≥ 5 words in a language with a
      stopword list, the language's own stopwords must not be outnumbered by English ones (catches untranslated
      English left in a translation) — for English the check is skipped.
    """
    p = primary(lang)
    n_letters = T.letters(text)
    n_cjk = T.cjk_chars(text)
    if p in T.CJK_LANGS:
        if n_cjk == 0:
            return f"no {p} script"
        if p == "ja" and n_cjk >= 4 and not T.has_kana(text):
            return "no kana"
        if n_letters and n_cjk / n_letters < 0.25:
            return f"mostly non-{p} script"
        return None
    if n_cjk:
        return "CJK characters in a non-CJK text"
    if p == "en" or p not in STOPWORDS:
        return None
    words = [w.casefold().strip(".,;:!?()[]\"'«»“”") for w in text.split()]
    if len(words) < STOPWORD_MIN_WORDS:
        return None
    own = sum(1 for w in words if w in STOPWORDS[p])
    eng = sum(1 for w in words if w in STOPWORDS["en"])
    if eng > own:
        return "English stopwords outnumber target stopwords"
    return None


@dataclass(frozen=True)
class Pair:
    """A candidate translation pair before it becomes a schema Entry.

    ``order`` keeps the upstream position (for reading order in the file); ``locator`` says where it came from.
    """

    source: str
    reference: str
    locator: str = ""
    order: int = 0
    tag: str = ""
    """Upstream block kind where known (``p``, ``li``, ``h2`` for HTML; ``msg`` for catalogs)."""
    context: str | None = None
    """Upstream disambiguation context (gettext msgctxt, Wesnoth ``female^``), informative only."""
    package: str = ""
    """Upstream package the pair was read from, where the caller knows it (becomes ``Origin.package``)."""
    file: str = ""
    """Path of the upstream file inside its package (becomes ``Origin.file``)."""
    note: str | None = None
    """What the importer converted to get this text (e.g. XLIFF/TMX inline codes), for ``Origin.note``."""


def check_pair(source: str, reference: str, source_lang: str, target_lang: str) -> str | None:
    """Run the pair filters in order; return the first failing reason or ``None`` to keep.

    Inputs are the raw (unnormalised) texts so multi-line structure is still visible. Reasons:
    ``markup`` (HTML/Pango tags in either side), ``help_block`` (multi-line --help text), ``too_few_letters``
    (< 2 letters once placeholders are removed: format-only strings), ``code`` (source mostly code tokens; the
    reference is measured instead when the source is CJK, whose words are not space-separated),
    ``navigation`` (page chrome such as 'Next'), ``same_text`` (reference equals source after whitespace
    normalisation and case folding), ``placeholder_mismatch`` (placeholder multisets differ), ``source_language`` /
    ``target_language`` (:func:`language_problem` on the text without placeholders), ``length_ratio`` (outside
    :func:`ratio_bounds`).
    """
    if T.has_markup(source) or T.has_markup(reference):
        return "markup"
    if T.is_help_block(source) or T.is_help_block(reference):
        return "help_block"
    s, r = T.clean_debris(source), T.clean_debris(reference)
    if T.letters(T.strip_placeholders(s)) < MIN_LETTERS or T.letters(T.strip_placeholders(r)) < MIN_LETTERS:
        return "too_few_letters"
    if T.code_share(r if primary(source_lang) in T.CJK_LANGS else s) > MAX_CODE_SHARE:
        return "code"
    if T.is_navigation(s) or T.is_navigation(r):
        return "navigation"
    if s.casefold() == r.casefold():
        return "same_text"
    if T.placeholders(s) != T.placeholders(r):
        return "placeholder_mismatch"
    if language_problem(T.strip_placeholders(s), source_lang):
        return "source_language"
    if language_problem(T.strip_placeholders(r), target_lang):
        return "target_language"
    longest = max(len(s), len(r))
    if longest >= RATIO_MIN_CHARS:
        low, high = ratio_bounds(source_lang, target_lang)
        ratio = len(r) / max(len(s), 1)
        if not low <= ratio <= high:
            return "length_ratio"
    return None


def cap_segments(pair: Pair, source_lang: str, target_lang: str) -> tuple[list[Pair], str | None]:
    """Apply the length cap to one (already cleaned) pair.

    * Source ≤ :data:`SPLIT_ABOVE_WORDS` words: kept whole.
    * Longer: split both sides into sentences (:func:`mtboard.inputs.corpora.text.split_sentences`); when both give the same
      number n > 1 and every sentence pair passes :func:`check_pair`, return the n sentence pairs (locator suffixed
      ``#s1``…).
    * Otherwise the paragraph is kept whole when both sides are ≤ :data:`CAP_WORDS` words, else dropped.

    Returns ``(pairs, drop_reason)``; ``drop_reason`` is ``"too_long"`` when dropped, else ``None``.
    """
    if T.word_count(pair.source) <= SPLIT_ABOVE_WORDS:
        return [pair], None
    ss = T.split_sentences(pair.source, source_lang)
    rs = T.split_sentences(pair.reference, target_lang)
    if len(ss) == len(rs) > 1 and all(check_pair(a, b, source_lang, target_lang) is None for a, b in zip(ss, rs)) \
            and all(max(T.word_count(a), T.word_count(b)) <= CAP_WORDS for a, b in zip(ss, rs)):
        return [replace(pair, source=a, reference=b, locator=f"{pair.locator}#s{i}")
                for i, (a, b) in enumerate(zip(ss, rs), 1)], None
    if max(T.word_count(pair.source), T.word_count(pair.reference)) <= CAP_WORDS:
        return [pair], None
    return [], "too_long"


@dataclass
class FilterReport:
    """Counts of kept pairs and of dropped pairs per reason (for SOURCES.md and ``mtboard corpus import``)."""

    read: int = 0
    kept: int = 0
    dropped: dict[str, int] | None = None

    def drop(self, reason: str) -> None:
        if self.dropped is None:
            self.dropped = {}
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def summary(self) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in sorted((self.dropped or {}).items()))
        return f"read {self.read}, kept {self.kept}" + (f", dropped: {parts}" if parts else "")


def filter_pairs(pairs: Iterable[Pair], source_lang: str, target_lang: str,
                 report: FilterReport | None = None) -> list[Pair]:
    """Filter, clean and cap a stream of pairs; drop duplicates of an already kept source (first wins).

    Returns the kept pairs (texts cleaned with :func:`mtboard.inputs.corpora.text.clean_debris`), in input order.
    """
    report = report if report is not None else FilterReport()
    out: list[Pair] = []
    seen: set[str] = set()
    for p in pairs:
        report.read += 1
        reason = check_pair(p.source, p.reference, source_lang, target_lang)
        if reason:
            report.drop(reason)
            continue
        cleaned = replace(p, source=T.clean_debris(p.source), reference=T.clean_debris(p.reference))
        capped, reason = cap_segments(cleaned, source_lang, target_lang)
        if reason:
            report.drop(reason)
            continue
        for c in capped:
            key = c.source.casefold()
            if key in seen:
                report.drop("duplicate")
                continue
            seen.add(key)
            out.append(c)
            report.kept += 1
    return out
