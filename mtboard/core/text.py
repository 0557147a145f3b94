"""Text rules shared by the corpus builder, the mechanical policy and the metrics: the one text normalisation, line
records, and the one set of placeholder and markup patterns.

Normalisation (issue 14 part 2): :func:`normalise` is the one function applied identically to references and
hypotheses before exact match, every metric and the echo check; raw text is always kept (cards store ``expected``,
``raw_predicted`` and ``predicted`` unnormalised). Its rules, version :data:`NORMALISATION_VERSION`, one row per
character class, decided with the script in mind:

==============================  =====================================  ============================================
characters                      rule                                   why
==============================  =====================================  ============================================
CR LF, CR, VT, FF, FS, GS, RS,  each → ``\n``                          line boundaries ``str.splitlines`` knows;
NEL U+0085, LS U+2028,                                                 one line break, however a file or a model
PS U+2029                                                              wrote it
U+FEFF BOM / ZWNBSP             removed                                a byte-order mark is not text (U+2060 is the
                                                                       word joiner)
U+200B zero-width space         removed                                an invisible break opportunity (Thai, Khmer,
                                                                       Lao, Myanmar word hints), never a letter
U+2060 word joiner              removed                                invisible no-break hint
U+00AD soft hyphen              removed                                a hyphenation hint (spec: invisible unless
                                                                       the line breaks there)
U+200E LRM, U+200F RLM, U+061C  removed                                bidi formatting: changes display order,
ALM, U+202A–U+202E embeddings/                                         never the characters (Arabic, Hebrew,
overrides, U+2066–U+2069                                               Persian text keeps its letters)
isolates
U+200C ZWNJ, U+200D ZWJ         kept between two characters of a       Persian ``می‌خواهم``, Urdu, Kurdish (Arabic
                                script that uses them (Arabic,         script), Indic conjunct control after a
                                Syriac, Mongolian, N'Ko, Devanagari,   virama (``क्‌ष``), Sinhala ``ශ්‍රී``, emoji
                                Bengali, Gurmukhi, Gujarati, Oriya,    sequences (👩‍💻) change what a reader sees
                                Tamil, Telugu, Kannada, Malayalam,     or says; anywhere else (Latin, CJK, …) they
                                Sinhala, Khmer, Myanmar) or two emoji  are invisible debris
                                (Extended_Pictographic, after any
                                combining marks, variation selectors
                                or skin-tone modifiers); else removed
U+FF61–U+FF9F half-width        Unicode NFKC on these two ranges       one text in two widths: ``ﾕｰｻﾞｰｱｶｳﾝﾄ``
katakana and CJK punctuation,   only (``ｶ`` → ``カ``, ``ｻﾞ`` → ``ザ``,   is ``ユーザーアカウント`` (legacy JIS X
U+FF01–U+FF5E full-width        ``｡`` → ``。``, ``Ａ１！`` → ``A1!``);     0201 input, old terminals); the echo
ASCII                           a run is folded at once, so a          check already folded width. Other NFKC
                                half-width voiced mark composes        foldings (ligatures, superscripts, ㍿,
                                                                       full-width yen/won signs) are left alone
U+3000 ideographic space        kept (not folded to U+0020)            already whitespace to every consumer
                                                                       (``str.split``: exact match, chrF, TER,
                                                                       13a); a Japanese typographic character,
                                                                       not a width variant of ASCII
variation selectors, CGJ,       kept                                   they select glyphs or block reordering
U+180E, tag characters                                                 (CJK ideographic variants, Mongolian, emoji
                                                                       flags)
spaces (U+0020, NBSP, narrow    kept                                   French typography puts NBSP before ``:;!?``;
NBSP)                                                                  metrics see spacing as sacrebleu defines it;
                                                                       exact match collapses runs
                                                                       (:func:`normalise_for_match`)
everything                      Unicode NFC, after the removals and    canonical composition (``e`` + U+0301 → é),
                                the width folding                      also across a removed character
==============================  =====================================  ============================================

The function is idempotent (``normalise(normalise(t)) == normalise(t)``). Changing a rule changes scores: bump
:data:`NORMALISATION_VERSION` (it is recorded in every card's metric signatures and in the fingerprint).

Placeholders are the tokens a translation must copy verbatim (docs/SCORING_SPEC.md §3.3, corpora/SOURCES.md
"Filters"); :data:`PLACEHOLDER` is their one pattern, built from named parts, used by :mod:`mtboard.score.checks` (the
``placeholder`` flag), :mod:`mtboard.inputs.corpora.text` (the ``placeholder_mismatch`` filter, word counts, the diagnostic
segment) and anything else that needs it:

====================  ===================================================================  =========================
part                  matches                                                              not
====================  ===================================================================  =========================
:data:`PRINTF`        ``%s`` ``%d`` ``%5.2f`` ``%-10s`` ``%ld`` ``%1$s`` ``%(name)s``      ``% d`` (space flag: '50%
                      ``%*d`` ``%.*s``; the rare conversions ``%o %a %A %F %p`` only when  less'), ``%option``
                      no letter follows
:data:`QT_ARG`        ``%1`` ``%12`` (Qt, Windows)                                         ``%1$s`` (printf)
:data:`DOLLAR_BRACE`  ``${var}`` ``${a.b}`` (shell, JavaScript templates)
:data:`DOLLAR`        ``$name`` ``$unit.name|`` ``$a[0].b`` (Wesnoth, shell)               a trailing ``.``
:data:`DOUBLE_BRACE`  ``{{name}}`` ``{{ user.name }}`` (Jinja, Mustache, Angular)
:data:`BRACE`         ``{}`` ``{0}`` ``{name}`` ``{0.attr}`` ``{a[k]}`` ``{x!r}``            ICU ``{n, plural, …}``
                      ``{x:>10}`` ``{:.2f}`` (str.format, .NET, ICU simple arguments)      (its messages are
                                                                                           translated)
:data:`ESCAPE`        literal ``\\n`` ``\\t`` ``\\r`` (two characters)
====================  ===================================================================  =========================

``%%`` is a literal percent sign, never a placeholder: the pattern consumes it as a token of its own
(:data:`PERCENT_LITERAL`) that :func:`placeholders` drops, so ``%%s`` holds no ``%s``.

Markup: :data:`TAG` (HTML/XML/Pango tags, group 1 the tag name), :data:`ENTITY` (``&amp;`` ``&#8212;``) and
:data:`MD_EMPHASIS` (Markdown ``**x**`` ``__x__`` ``*x*`` ``_x_``). Chat-template control tokens written as text:
:data:`CONTROL_TOKEN` (``<|im_start|>``, ``<start_of_turn>``, ``[INST]``, …).

The patterns are part of the mechanical policy (``mtboard.score.checks.POLICY_VERSION``) and of the corpus build
(``corpora/build.py --check``): changing one can change committed cards and corpora. The unified pattern was checked
against both on the committed data (every card string and every string the corpus build matches gives the same
placeholders as the two patterns it replaces, except where this module documents a correction; the rebuild is
byte-identical).
"""

from __future__ import annotations

import unicodedata

import regex

# --------------------------------------------------------------------------------------------------------------------
# Normalisation


NORMALISATION_VERSION = "2"
"""Version of :func:`normalise` (``textnorm:<version>`` in metric signatures, ``text_normalisation`` in the
fingerprint). Version 1: the table in this module's docstring (issue 14). Version 2: plus width folding of half-width
katakana and full-width ASCII (issue 32 item 2)."""

SIGNATURE_FIELD = f"textnorm:{NORMALISATION_VERSION}"
"""The field appended to every metric signature (chrF++, BLEU, TER): ``textnorm:2``."""

LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Every line boundary ``str.splitlines`` knows besides ``\\n``."""
_LINE_BREAK_RE = regex.compile(r"\r\n|[" + LINE_BREAKS + "]")
IGNORABLE = "\ufeff\u200b\u2060\u00ad\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Characters :func:`normalise` always removes: BOM/ZWNBSP, zero-width space, word joiner, soft hyphen, bidi marks,
embeddings, overrides and isolates."""
_IGNORABLE_RE = regex.compile("[" + IGNORABLE + "]")
JOINER_SCRIPTS = ("Arabic", "Syriac", "Mongolian", "Nko", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya",
                  "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Khmer", "Myanmar")
"""Scripts in which ZWJ/ZWNJ between two of their characters change shaping or meaning (kept by :func:`normalise`)."""
_JOINER_SIDE = "".join(rf"\p{{Script={s}}}" for s in JOINER_SCRIPTS) + r"\p{Extended_Pictographic}"
_STRAY_JOINER_RE = regex.compile(
    rf"(?<![{_JOINER_SIDE}][\p{{M}}\p{{Emoji_Modifier}}]*)[\u200c\u200d]|[\u200c\u200d](?![{_JOINER_SIDE}])")
"""ZWNJ/ZWJ not preceded (through any marks, variation selectors, skin-tone modifiers) and followed by a character of
:data:`JOINER_SCRIPTS` or an emoji."""
WIDTH_FOLDED = "\uff01-\uff5e\uff61-\uff9f"
"""The code point ranges :func:`normalise` folds with NFKC: full-width ASCII U+FF01–U+FF5E and half-width katakana
and CJK punctuation U+FF61–U+FF9F (Unicode block "Halfwidth and Fullwidth Forms")."""
_WIDTH_RE = regex.compile(f"[{WIDTH_FOLDED}]+")


def nfc(text: str) -> str:
    """Unicode NFC only (no removals). Scoring uses :func:`normalise`."""
    return unicodedata.normalize("NFC", text)


def normalise(text: str) -> str:
    """The one text normalisation (version :data:`NORMALISATION_VERSION`; rules in this module's docstring): line
    breaks → ``\\n``; BOM, zero-width space, word joiner, soft hyphen and bidi controls removed; ZWJ/ZWNJ removed
    except inside a script that needs them or an emoji sequence; half-width katakana and full-width ASCII folded
    (NFKC on :data:`WIDTH_FOLDED` only); then NFC. Applied identically to references and hypotheses before exact
    match, metrics and the echo check.

    Examples: ``'co\\u00adop'`` → ``'coop'``; ``'\\u200b'`` → ``''``; ``'a\\u2028b'`` → ``'a\\nb'``;
    ``'می\\u200cخواهم'`` unchanged; ``'e\\u200b\\u0301'`` → ``'é'``; ``'ﾕｰｻﾞｰ'`` → ``'ユーザー'``;
    ``'Ｗｉ－Ｆｉ'`` → ``'Wi-Fi'``.
    """
    text = _LINE_BREAK_RE.sub("\n", text)
    if text.isascii():
        return text
    text = _IGNORABLE_RE.sub("", text)
    if "\u200c" in text or "\u200d" in text:
        text = _STRAY_JOINER_RE.sub("", text)
    text = _WIDTH_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    return unicodedata.normalize("NFC", text)



def normalise_for_match(text: str) -> str:
    """:func:`normalise`, then whitespace runs collapsed to one space and outer whitespace removed (exact and
    equivalent match)."""
    return " ".join(normalise(text).split())


def is_blank(text: str) -> bool:
    """True when ``text`` is empty or only whitespace after :func:`normalise` (``' '``, a lone zero-width space, a
    soft hyphen, a BOM)."""
    return not normalise(text).strip()


def split_records(text: str) -> list[str]:
    """Split text into line records on ``\\n`` and ``\\r\\n`` only (a trailing ``\\r`` is removed from each line);
    never on U+2028, U+0085, VT, FF or a lone CR, which are characters inside a record (``str.splitlines`` would
    split there). A final line break does not start an empty record. ``'a\\u2028b\\r\\nc\\n'`` → ``['a\\u2028b',
    'c']``."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


# --------------------------------------------------------------------------------------------------------------------
# Placeholders

TEMPLATE_MARKUP = ("[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<SYS>", "</SYS>", "<start_of_turn>",
                   "<end_of_turn>", "<|im_start|>", "<|im_end|>", "<|start_header_id|>", "<|eot_id|>", "<|user|>",
                   "<|assistant|>", "<|system|>", "### Instruction", "### Response")
"""Chat-template tokens that a model echoing a template it does not know writes into its output (the early gate of
every prompted run, :mod:`mtboard.run.gate`, and the gguf backend's canary both look for them)."""

PERCENT_LITERAL = r"%%"
"""A printf-escaped percent sign (a token of its own so that ``%%s`` is not read as ``%s``)."""
PRINTF = (r"%(?:\d+\$)?(?:\([^()\s]{1,40}\))?[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?"
          r"(?:[diuxXeEfgGcrs]|[oaAFp](?![A-Za-z]))")
"""printf and Python %-formatting: optional position (``1$``) or mapping key (``(name)``), flags ``-+#0`` (not the
space flag), width, precision, length modifier, conversion."""
QT_ARG = r"%\d+(?![\d$])"
"""Qt / Windows numbered arguments ``%1``."""
DOLLAR_BRACE = r"\$\{[A-Za-z_][\w.]*\}"
"""``${var}``."""
DOLLAR = r"\$[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]\s]*\])*\|?"
"""``$name``, ``$unit.name|`` (Wesnoth's closing bar included), ``$a[0].b``; dots only between names."""
DOUBLE_BRACE = r"\{\{\s*[\w.]+\s*\}\}"
"""``{{name}}`` with optional inner spaces."""
BRACE = r"\{(?:\d+|[A-Za-z_]\w*)?(?:\.[A-Za-z_]\w*|\[[^\]{}\s]*\])*(?:![rsa])?(?::[^{}\s]{0,20})?\}"
"""``str.format`` fields: empty, index or name, attribute/index chain, conversion, format spec (≤ 20 characters)."""
ESCAPE = r"\\[nrt]"
"""Literal backslash escapes as written in source strings."""

PLACEHOLDER = regex.compile("|".join((PERCENT_LITERAL, PRINTF, QT_ARG, DOLLAR_BRACE, DOLLAR, DOUBLE_BRACE, BRACE,
                                      ESCAPE)))
"""All placeholder parts in one alternation (earlier parts win at the same position). Matches also ``%%``
(:data:`PERCENT_LITERAL`); use :func:`placeholders` for the placeholders themselves."""


def placeholders(text: str) -> list[str]:
    """The placeholders of ``text`` in order of appearance (a multiset: repeats kept; ``%%`` dropped).

    Examples: ``'%(n)d of %s'`` → ``['%(n)d', '%s']``; ``'Hi {name}, 100%% done'`` → ``['{name}']``;
    ``'$unit.name| attacks.'`` → ``['$unit.name|']``.
    """
    return [m for m in PLACEHOLDER.findall(text) if m != "%%"]


def may_hold_placeholders(text: str) -> bool:
    """Fast pre-check: False when ``text`` cannot contain a placeholder (no ``%``, ``{``, ``$`` or ``\\``)."""
    return "%" in text or "{" in text or "$" in text or "\\" in text


# --------------------------------------------------------------------------------------------------------------------
# Markup

TAG = regex.compile(r"</?([A-Za-z][A-Za-z0-9]*)(?:\s[^<>]*)?/?>")
"""An HTML/XML/Pango tag: ``<b>``, ``</b>``, ``<br/>``, ``<span color='red'>``; group 1 is the tag name. Not ``a < b``
or ``<3``."""
ENTITY = regex.compile(r"&[A-Za-z]+;|&#\d+;")
"""A named or decimal character reference: ``&amp;``, ``&#8212;``."""
MD_EMPHASIS = regex.compile(
    r"\*\*[^*\n]+\*\*|__[^_\n]+__"
    r"|(?<![\w*])\*[^*\s][^*\n]*?(?<!\s)\*(?![\w*])"
    r"|(?<![\w_])_[^_\s][^_\n]*?(?<!\s)_(?![\w_])")
"""Markdown emphasis: ``**x**``, ``__x__``, ``*x*``, ``_x_`` (not ``2 * 3 * 4``, not ``snake_case_name``)."""


# --------------------------------------------------------------------------------------------------------------------
# Chat-template control tokens

CONTROL_TOKEN = regex.compile(
    r"<\|[^|<>\s]{1,40}\|>"                      # ChatML, Llama 3, Phi, gpt-oss: <|im_start|> <|eot_id|> <|channel|>
    r"|<｜[^｜<>\n]{1,40}｜>"                     # DeepSeek: <｜begin▁of▁sentence｜> <｜User｜> <｜Assistant｜>
    r"|</?(?:start_of_turn|end_of_turn|bos|eos|s)>"  # Gemma turns; SentencePiece <s> </s> <bos> <eos>
    r"|\[/?INST\]|<</?SYS>>")                    # Llama 2, Mistral
"""A chat-template control token written as text: a server that parses special tokens in prompt text (llama.cpp
does by default) reads it as a real role switch or end of turn, whatever quoting surrounds it. Used by
:mod:`mtboard.score.checks` (the informational ``injection`` flag) and by the judges, which escape its first character
when they quote a model's output (:func:`mtboard.judges.base.as_data`). ``<s>``/``</s>`` are also HTML
strikethrough tags: escaping them in quoted data changes nothing a reader sees."""


# --------------------------------------------------------------------------------------------------------------------
# Glossary terms (terminology adherence, docs/SCORING_SPEC.md §2.4; corpus import keeps a glossary's matching terms)

_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
_TERM_PATTERNS: dict[str, regex.Pattern] = {}


def _term_pattern(term: str) -> regex.Pattern:
    pat = _TERM_PATTERNS.get(term)
    if pat is None:
        t = normalise(term).casefold().strip()
        left = "" if _UNSPACED.match(t[:1]) else r"(?<![\p{L}\p{N}\p{M}])"
        right = "" if _UNSPACED.match(t[-1:]) else r"(?![\p{L}\p{N}\p{M}])"
        pat = regex.compile(left + regex.escape(t) + right)
        if len(_TERM_PATTERNS) > 4096:
            _TERM_PATTERNS.clear()
        _TERM_PATTERNS[term] = pat
    return pat


def contains_term(text: str, term: str) -> bool:
    """True when glossary ``term`` occurs in ``text``: both normalised (:func:`normalise`) and case-folded, as a whole
    word — the match may not continue a run of letters, digits or marks on either side, except on a side whose
    character is written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar), where a
    substring is enough (``ファイル`` in ``ファイルを開く``; ``file`` not in ``profile``)."""
    return _term_pattern(term).search(normalise(text).casefold()) is not None
