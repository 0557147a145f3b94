"""Language tags (BCP 47) and what mtboard derives from them: the primary subtag, the script and region subtags, the
English name a prompt shows, the scripts a language is written in, and the sacrebleu tokenizer choice.

Parsing is ``langcodes`` (BCP 47 / RFC 5646; ``Language.get(tag, normalize=False)``): subtags are compared
case-insensitively (``EN_us`` is ``en-US``: ``_`` is accepted for ``-``) and a tag is never rewritten to another
language (``iw`` stays ``iw``, ``sh`` stays ``sh``), so every table below is looked up with exactly the primary subtag
the tag carries. Display names come from the override table :data:`LANGUAGE_NAMES` (the names prompts have always
rendered, which are part of every card's ``system_prompt_sha256``), else from ``langcodes``' English names (its
``language_data`` package).

Every caller that needs any of these facts imports them from here (metrics, prompts, the mechanical checks, FST,
backends, corpus building, judges); nothing else splits a tag on ``-``.
"""

from __future__ import annotations

import functools

import langcodes

from mtboard.core.errors import InputError

# --------------------------------------------------------------------------------------------------------------------
# Parsing


@functools.lru_cache(maxsize=1024)
def parse(tag: str) -> langcodes.Language:
    """The parsed tag (``langcodes.Language``; subtags in canonical case, nothing normalised to another language).

    Raises: InputError for a string that is not a well-formed language tag (empty, a stray ``-``, a subtag longer
    than 8 characters).
    """
    try:
        return langcodes.Language.get(tag, normalize=False)
    except (langcodes.LanguageTagError, ValueError, AttributeError):
        raise InputError(f"{tag!r} is not a BCP 47 language tag", field="language",
                         fix="write a tag such as 'en', 'es', 'pt-BR', 'sr-Latn' or 'zh-Hant'") from None


def primary(tag: str) -> str:
    """Primary language subtag, lower case: ``pt-BR`` → ``pt``, ``EN_us`` → ``en``, ``zh-Hant`` → ``zh``.

    Raises: InputError for a malformed tag (see :func:`parse`).
    """
    return (parse(tag).language or "").lower()


def script(tag: str) -> str | None:
    """The explicit ISO 15924 script subtag in title case (``sr-Latn`` → ``Latn``), None when the tag has none (no
    likely script is inferred)."""
    return parse(tag).script


def region(tag: str) -> str | None:
    """The region subtag (``pt-BR`` → ``BR``, ``es-419`` → ``419``), upper case for letters; None when absent."""
    return parse(tag).territory


def same_language(a: str, b: str) -> bool:
    """True when two tags name the same language: equal ignoring case and ``_``/``-``, or the same primary subtag
    (``en-US`` and ``en_gb``; not ``pt`` and ``es``)."""
    return str(parse(a)).lower() == str(parse(b)).lower() or primary(a) == primary(b)


def best_matches(tags: list[str | None], wanted: str) -> list[int]:
    """Indices of the ``tags`` that best match ``wanted`` (BCP 47, compared case-insensitively after langcodes parses
    both): the exact matches (``pt-br`` for ``pt-BR``) when there are any, else those with the same primary subtag
    (``pt-PT`` for ``pt-BR``, ``en-US`` for ``en``); ``[]`` when none. None and malformed tags match nothing. More
    than one index means the choice is ambiguous (the caller decides; importers refuse)."""
    want = str(parse(wanted)).lower()
    want_primary = primary(wanted)
    exact: list[int] = []
    near: list[int] = []
    for i, t in enumerate(tags):
        if not t:
            continue
        try:
            got = parse(t)
        except InputError:
            continue
        if str(got).lower() == want:
            exact.append(i)
        elif (got.language or "").lower() == want_primary:
            near.append(i)
    return exact or near


def is_one_of(tag: str, tags: list[str] | tuple[str, ...] | frozenset[str]) -> bool:
    """True when ``tag`` is in ``tags`` exactly, or its primary subtag is (``es-MX`` in ``[es]``)."""
    return tag in tags or primary(tag) in tags


def pick(tag: str, keys) -> str | None:
    """The key of ``keys`` that best matches ``tag``: the tag itself, then the tag ignoring case, then its primary
    subtag (ignoring case); None when none matches. Used for per-language tables such as few-shot examples."""
    if tag in keys:
        return tag
    lower = {k.lower(): k for k in keys}
    return lower.get(tag.lower()) or lower.get(primary(tag))


# --------------------------------------------------------------------------------------------------------------------
# English names (prompts)

LANGUAGE_NAMES: dict[str, str] = {
    "ar": "Arabic", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "eu": "Basque", "fa": "Persian", "fi": "Finnish", "fr": "French",
    "gl": "Galician", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian",
    "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ko": "Korean", "mk": "Macedonian", "nl": "Dutch",
    "no": "Norwegian", "nb": "Norwegian Bokmål", "pl": "Polish", "pt": "Portuguese", "pt-BR": "Brazilian Portuguese",
    "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sr": "Serbian", "sv": "Swedish", "th": "Thai",
    "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese", "zh-Hans": "Simplified Chinese",
    "zh-Hant": "Traditional Chinese", "crk": "Plains Cree",
}
"""Names prompts render, and have rendered since the first card (so they are part of recorded system-prompt hashes):
they win over ``langcodes`` (which says "Portuguese (Brazil)", "Chinese (Traditional)"). A tag whose primary subtag
is listed here gets that name whatever its region (``es-MX``, ``es-419`` → Spanish)."""

_NAMES_LOWER = {k.lower(): v for k, v in LANGUAGE_NAMES.items()}


@functools.lru_cache(maxsize=1024)
def language_name(tag: str) -> str:
    """English name of a BCP 47 tag, as prompts and judge prompts show it.

    Order: :data:`LANGUAGE_NAMES` for the whole tag, then for language-script (``zh-Hant-TW`` → Traditional
    Chinese); a script subtag that is not the language's usual one is named by ``langcodes`` (``uz-Cyrl`` → "Uzbek
    (Cyrillic)", ``sr-Latn`` → "Serbian (Latin)"); then :data:`LANGUAGE_NAMES` for the primary subtag (``es-419`` →
    Spanish, ``EN_us`` → English); then ``langcodes``' name of the language (``gd`` → Scottish Gaelic); a tag
    ``langcodes`` does not know (or cannot parse) is returned unchanged.
    """
    try:
        lang = parse(tag)
    except InputError:
        return tag
    full = str(lang).lower()
    if full in _NAMES_LOWER:
        return _NAMES_LOWER[full]
    p = (lang.language or "").lower()
    if lang.script:
        if f"{p}-{lang.script}".lower() in _NAMES_LOWER:
            return _NAMES_LOWER[f"{p}-{lang.script}".lower()]
        if p and lang.script != langcodes.Language.get(p).maximize().script:
            return langcodes.Language.get(f"{p}-{lang.script}").display_name("en")
    if p in _NAMES_LOWER:
        return _NAMES_LOWER[p]
    if p and langcodes.Language.get(p).is_valid():
        return langcodes.Language.get(p).display_name("en")
    return tag


# --------------------------------------------------------------------------------------------------------------------
# Scripts (the mechanical policy's foreign-script and code-switching rules)

_LATIN = frozenset({"Latin"})
LANGUAGE_SCRIPTS: dict[str, frozenset[str]] = {
    **{lang: _LATIN for lang in (
        "en es fr de it pt ca gl eu nl sv da no nb nn fi et is ga cy pl cs sk sl hr bs sq ro hu lt lv tr az id ms "
        "vi tl fil sw eo la af mt oc br lb fo gd ha yo ig zu xh so uz tk qu gn ay ht mi sm to haw ast an sc rm "
        "fur lij vec co wa fy se").split()},
    **{lang: frozenset({"Cyrillic"}) for lang in "ru uk be bg mk kk ky mn tg tt ba cv os ce".split()},
    "sr": frozenset({"Cyrillic", "Latin"}), "hbs": frozenset({"Cyrillic", "Latin"}),
    "el": frozenset({"Greek"}),
    **{lang: frozenset({"Arabic"}) for lang in "ar fa ur ps ug ckb sd".split()},
    "he": frozenset({"Hebrew"}), "yi": frozenset({"Hebrew"}),
    **{lang: frozenset({"Devanagari"}) for lang in "hi mr ne sa mai bho".split()},
    "bn": frozenset({"Bengali"}), "as": frozenset({"Bengali"}), "pa": frozenset({"Gurmukhi"}),
    "gu": frozenset({"Gujarati"}), "ta": frozenset({"Tamil"}), "te": frozenset({"Telugu"}),
    "kn": frozenset({"Kannada"}), "ml": frozenset({"Malayalam"}), "si": frozenset({"Sinhala"}),
    "th": frozenset({"Thai"}), "lo": frozenset({"Lao"}), "km": frozenset({"Khmer"}), "my": frozenset({"Myanmar"}),
    "ka": frozenset({"Georgian"}), "hy": frozenset({"Armenian"}), "am": frozenset({"Ethiopic"}),
    "ti": frozenset({"Ethiopic"}), "bo": frozenset({"Tibetan"}), "dv": frozenset({"Thaana"}),
    "zh": frozenset({"Han"}), "ja": frozenset({"Han", "Hiragana", "Katakana"}), "ko": frozenset({"Hangul", "Han"}),
    "crk": frozenset({"Latin", "Canadian_Aboriginal"}), "iu": frozenset({"Canadian_Aboriginal", "Latin"}),
    "chr": frozenset({"Cherokee"}),
}
"""Unicode scripts (``\\p{Script=…}`` names) each language is normally written in, by primary subtag. Part of the
mechanical policy (``mtboard.score.checks.POLICY_VERSION``): changing an entry changes card outcomes."""

SCRIPT_SUBTAGS: dict[str, str] = {
    "Latn": "Latin", "Cyrl": "Cyrillic", "Hans": "Han", "Hant": "Han", "Arab": "Arabic", "Grek": "Greek",
    "Hebr": "Hebrew", "Deva": "Devanagari", "Cans": "Canadian_Aboriginal", "Jpan": "Han", "Kore": "Hangul",
}
"""ISO 15924 script subtag → Unicode script name, for tags that name their script (``sr-Latn``). ``Jpan`` means
Han + Hiragana + Katakana. Other script subtags fall back to the language's entry in :data:`LANGUAGE_SCRIPTS`."""


@functools.lru_cache(maxsize=1024)
def expected_scripts(tag: str) -> frozenset[str] | None:
    """Unicode scripts a text in this language is written in: from the script subtag when it is one of
    :data:`SCRIPT_SUBTAGS` (``sr-Latn`` → {Latin}, ``uz-Cyrl`` → {Cyrillic}, ``ja-Jpan`` → {Han, Hiragana,
    Katakana}), else :data:`LANGUAGE_SCRIPTS` of the primary subtag (``pt-BR`` → {Latin}); None for a language
    without an entry (then no script rule applies) or a malformed tag."""
    try:
        lang = parse(tag)
    except InputError:
        return None
    s = lang.script
    if s in SCRIPT_SUBTAGS:
        return frozenset({"Han", "Hiragana", "Katakana"}) if s == "Jpan" else frozenset({SCRIPT_SUBTAGS[s]})
    return LANGUAGE_SCRIPTS.get((lang.language or "").lower())


# --------------------------------------------------------------------------------------------------------------------
# Tokenizers (docs/SCORING_SPEC.md §2)

BLEU_TOKENIZERS: dict[str, str] = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
"""sacrebleu BLEU tokenizer by primary subtag of the target language; every other language uses ``13a``."""
CHARACTER_LEVEL_TER = frozenset({"zh", "ja"})
"""Targets written without spaces between words: TER runs with ``normalized=True, asian_support=True`` (every Han
character one token) and the TER length cap counts those tokens."""


def bleu_tokenizer(target_language: str) -> str:
    """sacrebleu tokenizer name for a target language: ``zh`` (Chinese), ``ja-mecab`` (Japanese), ``ko-mecab``
    (Korean), ``13a`` otherwise (``zh-Hant`` → ``zh``, ``en-GB`` → ``13a``). Raises InputError for a malformed tag."""
    return BLEU_TOKENIZERS.get(primary(target_language), "13a")


def character_level_ter(target_language: str) -> bool:
    """True for Chinese and Japanese targets (:data:`CHARACTER_LEVEL_TER`)."""
    return primary(target_language) in CHARACTER_LEVEL_TER
