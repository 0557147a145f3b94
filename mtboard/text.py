"""Text rules shared by the corpus builder, the mechanical policy and the metrics: Unicode normalisation for
matching, and the one set of placeholder and markup patterns.

Placeholders are the tokens a translation must copy verbatim (docs/SCORING_SPEC.md §3.3, corpora/SOURCES.md
"Filters"); :data:`PLACEHOLDER` is their one pattern, built from named parts, used by :mod:`mtboard.checks` (the
``placeholder`` flag), :mod:`mtboard.corpora.text` (the ``placeholder_mismatch`` filter, word counts, the diagnostic
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

The patterns are part of the mechanical policy (``mtboard.checks.POLICY_VERSION``) and of the corpus build
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


def nfc(text: str) -> str:
    """Unicode NFC (applied to hypotheses and references before any metric)."""
    return unicodedata.normalize("NFC", text)


def normalise_for_match(text: str) -> str:
    """NFC, whitespace runs collapsed to one space, outer whitespace removed (exact and equivalent match)."""
    return " ".join(nfc(text).split())


# --------------------------------------------------------------------------------------------------------------------
# Placeholders

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
:mod:`mtboard.checks` (the informational ``injection`` flag) and by the judges, which escape its first character
when they quote a model's output (:func:`mtboard.judges.base.as_data`). ``<s>``/``</s>`` are also HTML
strikethrough tags: escaping them in quoted data changes nothing a reader sees."""
