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
# Tokenizers by script (docs/SCORING_SPEC.md §2, issue 32 item 2)

SA_SCRIPTS = frozenset({"Thai", "Laoo", "Khmr", "Mymr", "Lana", "Talu", "Tavt", "Tale", "Ahom"})
"""Scripts with letters of line-break class SA, "complex context dependent (South East Asian)": words are not
delimited and line breaks need a dictionary (Unicode UAX #14 §5.1): Thai, Lao, Khmer, Myanmar, Tai Tham, New Tai Lue,
Tai Viet, Tai Le, Ahom."""
AKSARA_SCRIPTS = frozenset({"Bali", "Java", "Batk", "Cham", "Maka", "Kawi", "Brah", "Gran", "Diak", "Tutg", "Gukh"})
"""Scripts with letters of line-break class AK, AP or AS (Aksara, Aksara Pre-Base, Aksara Start; UAX #14 §5.1 and
rules LB28a, since Unicode 15.1): Brahmic scripts whose lines break between orthographic syllables because their
words are written without spaces: Balinese, Javanese, Batak, Cham, Makasar, Kawi, Brahmi, Grantha, Dives Akuru,
Tulu-Tigalari, Gurung Khema."""
SYLLABIC_ID_SCRIPTS = frozenset({"Yiii", "Tang", "Nshu", "Bopo"})
"""Scripts other than Han and kana whose letters are of line-break class ID, "ideographic" (UAX #14 §5.1: a line may
break before or after any of them; all letters but an iteration mark): Yi, Tangut, Nüshu, Bopomofo — one syllable
(or phoneme) per character, no spaces between words. Hangul is not here: Korean writes spaces between words and its
syllables are H2/H3."""
UNSPACED_SCRIPTS = SA_SCRIPTS | AKSARA_SCRIPTS | SYLLABIC_ID_SCRIPTS | frozenset({"Tibt"})
"""ISO 15924 codes of scripts written without spaces between words (other than Han and Japanese, which have their own
tokenizers): :data:`SA_SCRIPTS`, :data:`AKSARA_SCRIPTS` and :data:`SYLLABIC_ID_SCRIPTS` (each derived from the Unicode
line-break data by tests/test_languages.py), plus Tibetan, which separates syllables with the tsheg (U+0F0B) and
phrases with the shad, never words with a space (W3C "Requirements for Tibetan Text Layout and Typography"). BLEU uses
sacrebleu's ``char`` tokenizer there; TER is not computed (sacrebleu has no TER mode for them)."""
HAN_SCRIPTS = frozenset({"Hans", "Hant", "Hani"})
"""Chinese scripts: BLEU tokenizer ``zh``, character-level TER (``asian_support``)."""
JAPANESE_SCRIPTS = frozenset({"Jpan", "Hira", "Kana", "Hrkt"})
"""Japanese (Han + kana, or kana alone): BLEU tokenizer ``ja-mecab``, character-level TER (``asian_support``)."""
HANGUL_SCRIPTS = frozenset({"Kore", "Hang"})
"""Korean: written with spaces between words (eojeol), BLEU tokenizer ``ko-mecab`` (sacrebleu[ko], in mtboard's
``ja`` extra), word-level TER."""
BLEU_BY_SCRIPT: dict[frozenset[str], str] = {HAN_SCRIPTS: "zh", JAPANESE_SCRIPTS: "ja-mecab",
                                              HANGUL_SCRIPTS: "ko-mecab", UNSPACED_SCRIPTS: "char"}
"""sacrebleu BLEU tokenizer by the target's script (:func:`text_script`); any other script uses ``13a``. sacrebleu's
SentencePiece tokenizers (``flore101``/``flores200``) are never used: they download a model at scoring time."""


@functools.lru_cache(maxsize=1024)
def text_script(tag: str) -> str | None:
    """ISO 15924 script a text in this language is written in: the tag's explicit script subtag (``sr-Latn`` →
    ``Latn``, ``zh-Hant`` → ``Hant``), else ``langcodes``' likely script of the tag (CLDR likely subtags, offline:
    ``th`` → ``Thai``, ``yue`` → ``Hant``, ``cmn`` → ``Hans``, ``jpn`` → ``Jpan``, ``kor`` → ``Kore``; three-letter
    ISO 639 codes are normalised to their two-letter equivalents for this lookup only). None when ``langcodes`` knows no
    likely script (then the defaults apply; langcodes itself falls back to ``und`` → ``en-Latn-US`` for a language it
    does not know, so ``qaa`` → ``Latn``).

    Raises: InputError for a malformed tag (see :func:`parse`).
    """
    explicit = parse(tag).script
    if explicit:
        return explicit
    try:
        return langcodes.Language.get(tag, normalize=True).maximize().script
    except (langcodes.LanguageTagError, ValueError, AttributeError):  # pragma: no cover - parse() accepted it
        return None


def bleu_tokenizer(target_language: str) -> str:
    """sacrebleu tokenizer name for a target language, by its script (:data:`BLEU_BY_SCRIPT`): ``zh`` (Han: ``zh``,
    ``zh-Hant``, ``yue``, ``cmn``), ``ja-mecab`` (``ja``, ``jpn``, ``ja-Hira``), ``ko-mecab`` (``ko``, ``kor``),
    ``char`` (:data:`UNSPACED_SCRIPTS`: Thai, Lao, Khmer, Myanmar, Tibetan, Yi (``ii``), Javanese (``jv-Java``),
    Balinese (``ban-Bali``), …), ``13a`` otherwise (``en-GB``, ``sr-Latn``, ``ja-Latn``).

    Raises: InputError for a malformed tag."""
    s = text_script(target_language)
    return next((tok for scripts, tok in BLEU_BY_SCRIPT.items() if s in scripts), "13a")


def character_level_ter(target_language: str) -> bool:
    """True when TER runs character-level (``normalized=True, asian_support=True``): Han and Japanese scripts, where
    sacrebleu's TER tokenizer splits every Han character and each kana run."""
    return text_script(target_language) in HAN_SCRIPTS | JAPANESE_SCRIPTS


def ter_unavailable(target_language: str) -> str | None:
    """Why TER is not computed for this target (a sentence for ``scores.metric_availability``), None when it is:
    scripts of :data:`UNSPACED_SCRIPTS` have neither whitespace words nor a sacrebleu TER mode (``asian_support``
    covers only Han and kana)."""
    s = text_script(target_language)
    if s in UNSPACED_SCRIPTS:
        return (f"target script {s} is written without spaces between words and sacrebleu's TER has no mode for it "
                "(asian_support covers Han and kana only)")
    return None
