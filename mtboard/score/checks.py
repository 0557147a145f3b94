"""The mechanical output-compliance policy: a frozen, versioned set of rules decided by code, without a model.

Source: the JA→EN screen-translator write-up ("Output compliance", shared/spec/screen-translator-bench-ja-en.txt),
issue 4, and BookTrans's code-computed penalties (foreign-script letters, diverged markup). Every decision is stored
per entry (:class:`mtboard.core.schema.MechanicalDecision`) with the rule that fired; the raw output is never modified
(the caller keeps ``raw_predicted``; this module returns a *new* post-processed hypothesis).

Outcomes (decide scoring; docs/SCORING_SPEC.md §3):

=====================  ==========================================================================================
``no_usable_output``   backend error kind (token cap, timeout, transport, …), no output, a reasoning block that
                       never closed (``unclosed_think``: ``<think>``, ``[THINK]``, a Harmony ``analysis`` message …),
                       or empty text after post-processing (``empty``; an answer that is only reasoning) → 0 on
                       every metric, never judged.
``source_untranslated`` equal to the source (or history + source) after :func:`mtboard.core.text.normalise` and NFKC,
                       with whitespace and speaker tags removed → 0 on every metric, never judged. Not applied when
                       the reference itself equals the source under the same normalisation (then the copy is the
                       correct translation).
``usable``             everything else, scored and judged normally.
=====================  ==========================================================================================

Post-processing, in order: reasoning (every format of :data:`mtboard.core.reasoning.FORMATS`: ``<think>``, Harmony
channels — the ``final`` channel is the answer —, ``[THINK]``, ``<seed:think>``, Command R, Apertus, Apriel,
Kimi-VL, Granite; a marker that also occurs in the source is text, not reasoning), literal EOS tokens, Apertium marks
(when asked), outer whitespace.

Flags (recorded; they never change the composite; the screen-ready score, docs/SCORING_SPEC.md §4.8 and
:mod:`mtboard.score.screen`, counts some of them, §3.3 says which): ``commentary``,
``format.speaker_label``, ``format.markdown``, ``format.markup``, ``format.line_breaks``, ``placeholder``,
``foreign_script``, ``eos.multiple``, ``length.long``, ``length.short``, ``partly_untranslated``, and the
informational ones, which never change an outcome:

=====================  ==========================================================================================
``think.stripped``     reasoning markup was removed; ``detail`` names the formats and the characters of reasoning
                       (``harmony: 1 reasoning block, 34 characters``), ``count`` the blocks (issue 33)
``encoding.broken``    the hypothesis holds U+FFFD more often than the source (bytes the client could not decode,
                       a lone surrogate replaced); ``count`` the hypothesis's U+FFFD, ``detail`` both counts (issue 33)
``unknown_marks``      Apertium unknown-word marks removed
``injection``          text addressed to a judge (issue 24)
=====================  ==========================================================================================

Changing any rule, pattern or threshold here changes results: bump :data:`POLICY_VERSION`. The echo test's text
normalisation is versioned by :data:`mtboard.core.text.NORMALISATION_VERSION` (in every card's metric signatures and
fingerprint), not here.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

import regex

from mtboard.core.languages import expected_scripts
from mtboard.core.reasoning import ReasoningSplit, split_reasoning
from mtboard.core.schema import CheckFlag, ErrorKind, MechanicalDecision, Outcome
from mtboard.core.text import CONTROL_TOKEN, MD_EMPHASIS, TAG, may_hold_placeholders, normalise, placeholders

POLICY_VERSION = "mech-1.2"
"""Version of this frozen policy, stored in every card's ``scores.policy_version``."""

# --------------------------------------------------------------------------------------------------------------------
# Post-processing: EOS tokens, reasoning blocks, Apertium unknown-word marks

EOS_TOKENS: tuple[str, ...] = (
    "</s>", "<|im_end|>", "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|eom_id|>", "<|end|>",
    "<end_of_turn>", "<eos>", "<|return|>",
)
"""Literal end-of-sequence tokens stripped from outputs (third-party GGUFs that do not mark EOS as special)."""

REPLACEMENT_CHARACTER = "\ufffd"
"""U+FFFD, counted by the ``encoding.broken`` flag."""
_UNKNOWN_MARK = regex.compile(r"(?<![\w*#@])([*#@])(\w+)")

LENGTH_LONG = 3.0
"""Output longer than this many times the reference (characters) → ``length.long``."""
LENGTH_SHORT = 0.33
"""Output shorter than this share of the reference (characters) → ``length.short``."""
LENGTH_FLOOR_CHARS = 10
"""Lengths below this many characters count as this many in the length rule (short UI strings vary a lot)."""
CODE_SWITCH_WORD_SHARE = 0.10
"""Same-script pairs: letters share of copied source words from which ``partly_untranslated`` is raised."""
CODE_SWITCH_MIN_WORD = 4
"""Same-script pairs: shortest word (letters) that counts as copied from the source."""


def _strip_eos(text: str, source: str) -> tuple[str, int]:
    """Remove every literal EOS token that does not also occur in the source (``</s>`` closes ``<s>`` in HTML)."""
    count = 0
    for tok in EOS_TOKENS:
        if tok in text and tok not in source:
            count += text.count(tok)
            text = text.replace(tok, "")
    return text, count


def _think_flag(split: ReasoningSplit) -> CheckFlag:
    """The informational ``think.stripped`` flag: the formats found, the reasoning blocks removed (``count``) and
    their characters, e.g. ``harmony: 1 reasoning block, 34 characters``."""
    n = len(split.reasoning)
    chars = split.reasoning_chars
    detail = (f"{', '.join(split.formats)}: {n} reasoning block{'s' if n != 1 else ''}, "
              f"{chars} character{'s' if chars != 1 else ''}")
    if split.wrapped:
        detail += "; answer wrapper removed"
    return CheckFlag(rule="think.stripped", detail=detail[:200], count=n)


def _broken_encoding(predicted: str, source: str) -> CheckFlag | None:
    """The informational ``encoding.broken`` flag: the hypothesis holds U+FFFD (the replacement character a decoder
    writes for bytes it could not read, or the client for a lone surrogate) more often than the source does."""
    n_out = predicted.count(REPLACEMENT_CHARACTER)
    if not n_out:
        return None
    n_src = source.count(REPLACEMENT_CHARACTER)
    if n_out <= n_src:
        return None
    return CheckFlag(rule="encoding.broken", detail=f"{n_out} U+FFFD replacement characters (source {n_src})",
                     count=n_out)


def _strip_unknown_marks(text: str, source: str) -> tuple[str, int]:
    """Remove Apertium's ``*word`` / ``#word`` / ``@word`` marks unless the marked token occurs in the source."""
    count = 0

    def repl(m: regex.Match) -> str:
        nonlocal count
        if m.group(0) in source:
            return m.group(0)
        count += 1
        return m.group(2)

    return _UNKNOWN_MARK.sub(repl, text), count


# --------------------------------------------------------------------------------------------------------------------
# Speaker tags, echo

_SPEAKER_TAG = regex.compile(
    r"^[ \t]*(?:"
    r"【(?P<n>[^】\n]{1,30})】"                                   # 【カオリ】
    r"|\[(?P<n>[^\]\n]{1,30})\]"                                # [Kaori]
    r"|\*\*(?P<n>[^*\n]{1,30}?)[:：]\*\*"                        # **Kaori:**
    r"|\*\*(?P<n>[^*\n]{1,30})\*\*[ \t]*[:：]"                  # **Kaori**:
    r"|(?P<n>[\p{L}\p{M}][\p{L}\p{M}\p{N} ._'’-]{0,29})[:：]"    # Kaori:
    r"|(?P<n>[^\s「」『』]{1,20})(?=[「『])"                      # カオリ「…」 (the name only)
    r")[ \t]*(?=\S)", regex.M)


_TAG_CHARS = frozenset("【[*:：「『")
"""Every alternative of :data:`_SPEAKER_TAG` needs one of these characters: text without them has no tag."""


def _split_speaker_tags(text: str) -> tuple[tuple[str, ...], str]:
    """(speaker names, body key) after :func:`mtboard.core.text.normalise` and NFKC: tags at line starts removed, all
    whitespace removed from the body."""
    text = unicodedata.normalize("NFKC", normalise(text))
    if _TAG_CHARS.isdisjoint(text):  # fast path: no tag can match (same result as the substitution below)
        return (), "".join(text.split())
    names: list[str] = []

    def repl(m: regex.Match) -> str:
        names.append("".join(m.group("n").split()))
        return ""

    body = _SPEAKER_TAG.sub(repl, text)
    return tuple(names), "".join(body.split())


def _plain_key(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", normalise(text)).split())


def is_echo(output: str, source: str, history: list[str] | None = None) -> bool:
    """The JA→EN write-up's echo test: equal to the source (or history + source) after the one text normalisation
    (:func:`mtboard.core.text.normalise`: zero-width characters, soft hyphens, bidi marks removed …) and NFKC, with
    whitespace and speaker tags removed. Tags are removed from both sides; when both sides have tags their names
    must agree (so a translated label such as ``risc: %s`` for ``risk: %s`` is not an echo)."""
    names_o, body_o = _split_speaker_tags(output)
    if not body_o:
        return False
    for src in ([source, "\n".join([*history, source])] if history else [source]):
        names_s, body_s = _split_speaker_tags(src)
        if body_o == body_s and (not names_o or not names_s or names_o == names_s):
            return True
    return False


# --------------------------------------------------------------------------------------------------------------------
# Scripts (foreign script, code-switching)

_SCRIPTS = ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Han", "Hiragana", "Katakana", "Hangul", "Devanagari",
            "Bengali", "Gurmukhi", "Gujarati", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai", "Lao",
            "Khmer", "Myanmar", "Georgian", "Armenian", "Ethiopic", "Tibetan", "Canadian_Aboriginal", "Cherokee",
            "Syriac", "Thaana", "Mongolian")
_SCRIPT_RE = [(s, regex.compile(rf"\p{{Script={s}}}")) for s in _SCRIPTS]

@functools.lru_cache(maxsize=65536)
def char_script(ch: str) -> str:
    """Unicode Script of one letter among :data:`_SCRIPTS`; 'Common' for non-letters, 'Other' for the rest."""
    if ch.isascii():
        return "Latin" if ch.isalpha() else "Common"
    if not ch.isalpha():
        return "Common"
    for name, rx in _SCRIPT_RE:
        if rx.match(ch):
            return name
    return "Common" if regex.match(r"\p{Script=Common}|\p{Script=Inherited}", ch) else "Other"


_NON_LATIN_LETTER = regex.compile(r"[^\p{Latin}\P{L}]")


def letter_count(text: str) -> int:
    """Number of letters (Unicode category L*, as ``str.isalpha``)."""
    return sum(map(str.isalpha, text))


def script_counts(text: str, *, latin: bool = True) -> Counter[str]:
    """Letters per script (non-letters and Common/Inherited letters left out); ``latin=False`` skips counting Latin."""
    c: Counter[str] = Counter()
    others = _NON_LATIN_LETTER.findall(text)
    if latin:
        n_latin = letter_count(text) - len(others)
        if n_latin:
            c["Latin"] = n_latin
    for ch in others:
        s = char_script(ch)
        if s != "Common":
            c[s] += 1
    return c


_WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")


def words(text: str) -> list[str]:
    """Letter words (apostrophes inside kept), in order."""
    return _WORD.findall(text)


def _script_runs(text: str, scripts: frozenset[str]) -> list[str]:
    """Maximal runs of letters whose script is in ``scripts`` (marks inside a run kept)."""
    runs, cur = [], []
    for ch in text:
        if ch.isalpha() and char_script(ch) in scripts:
            cur.append(ch)
        elif cur and unicodedata.category(ch).startswith("M"):
            cur.append(ch)
        elif cur:
            runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def untranslated_share(*, output: str, source: str, reference: str, source_language: str,
                       target_language: str) -> tuple[float, bool]:
    """Code-switching: share of the output's letters left in the source language, and whether it counts as detected.

    * Source written in scripts the target does not use (ja→en, en→ja, ru→en, …): letters of those source-only
      scripts, in runs that do not occur in the reference (names the reference keeps are fine); Latin runs count
      only when they also occur in the source (Latin names, commands and units are common in any script). Detected
      when > 0.
    * Same script (en→es, …): lower-case words of ≥ :data:`CODE_SWITCH_MIN_WORD` letters, not capitalised in the
      output, found in the source and not in the reference. Detected when the share is ≥
      :data:`CODE_SWITCH_WORD_SHARE` (cognates make single words weak evidence).

    Returns: (share in [0, 1], detected). (0.0, False) for an output without letters.
    """
    out_letters = letter_count(output)
    if out_letters == 0:
        return 0.0, False
    src_s, tgt_s = expected_scripts(source_language), expected_scripts(target_language)
    src_only = (src_s - tgt_s) if (src_s is not None and tgt_s is not None) else frozenset()
    if src_only:
        ref_low, src_low = reference.casefold(), source.casefold()
        leaked = 0
        for run in _script_runs(output, src_only):
            k = run.casefold()
            # Latin is everyone's borrowing script (names, commands, units): it counts only when copied from the source
            if k not in ref_low and (k in src_low or char_script(run[0]) != "Latin"):
                leaked += len(run)
        share = min(1.0, leaked / out_letters)
        return share, share > 0
    cand = [w for w in words(output) if len(w) >= CODE_SWITCH_MIN_WORD and not w[0].isupper()]
    if not cand:
        return 0.0, False
    src_words = {w.casefold() for w in words(source)}
    cand = [w for w in cand if w.casefold() in src_words]
    if not cand:
        return 0.0, False
    ref_words = {w.casefold() for w in words(reference)}
    leaked = sum(len(w) for w in cand if w.casefold() not in ref_words)
    share = min(1.0, leaked / out_letters)
    return share, share >= CODE_SWITCH_WORD_SHARE


# --------------------------------------------------------------------------------------------------------------------
# Flags

_LABEL_COLON = regex.compile(r"^[ \t]*[\p{Lu}][\p{L}\p{M}\p{N}.'’-]*(?: [\p{L}\p{M}\p{N}.'’-]+){0,2}[ \t]*[:：][ \t]",
                             regex.M)
_LABEL_BOLD = regex.compile(r"^[ \t]*\*\*[^*\n]{1,30}?(?:[:：]\*\*|\*\*[ \t]*[:：])", regex.M)
_ANY_SPEAKER_TAG = regex.compile(r"^[ \t]*(?:【[^】\n]{1,30}】|\[[^\]\n]{1,30}\]|[^\s「」『』]{1,20}[「『])", regex.M)

_COMMENTARY = [re.compile(p, re.I | re.M) for p in (  # stdlib re: 2× faster than regex on these
    # preambles
    r"\A\s*(?:sure|certainly|of course)\b[,!.:]",
    r"\A\s*here(?:'s|’s| is| are)\b[^\n]{0,40}\btranslat",
    r"\A\s*(?:the |my )?translation(?: is)?\s*[:：]",
    r"\A\s*translated(?: text)?\s*[:：]",
    r"\A\s*(?:english|spanish|french|german|japanese|chinese|catalan|russian|korean|portuguese|italian)"
    r"(?: translation)?\s*[:：]",
    r"\A\s*aquí (?:está|tienes|tiene|va) (?:la|una) traducción",
    r"\A\s*(?:traducción|traduction|übersetzung|tradução|traduzione|traducció|перевод)\s*[:：]",
    r"\A\s*voici (?:la|une) traduction",
    r"\A\s*hier ist (?:die|eine) übersetzung",
    r"\A\s*(?:翻訳|翻译|번역)\s*[:：]",
    # appended notes, alternatives, glosses
    r"^\s*(?:\(|\*\s*)?(?:note|notes|nota|notas|remarque|hinweis|anmerkung|explanation|explicación|alternative|"
    r"alternatively|alternativa|alternativamente|or|o|literally|literal translation|traducción literal|"
    r"translator'?s? note)\s*[:：]",
    r"[(\[]\s*(?:lit\.|literally|literalmente|littéralement|wörtlich)(?=[\s:：,])",
    r"[(\[]\s*(?:note|nota|or|o|ou|oder|alternatively|alt\.)\s*[:：]",
    r"\bliterally\b\s*[:,]?\s*[\"“‘'«]",
    r"\bthis (?:translates|can be translated) (?:to|as)\b",
    r"\b(?:which|that) (?:means|translates to)\b",
    r"(?:（|\()\s*(?:直訳|注)\s*[:：]",
)]

# quick screen: preambles (\A patterns) on the first 200 characters, the rest combined
_COMMENTARY_START = re.compile("|".join(f"(?:{rx.pattern})" for rx in _COMMENTARY if rx.pattern.startswith(r"\A")),
                               re.I | re.M)
_COMMENTARY_REST = re.compile("|".join(f"(?:{rx.pattern})" for rx in _COMMENTARY
                                       if not rx.pattern.startswith(r"\A")), re.I | re.M)


def _may_be_commentary(text: str) -> bool:
    return bool(_COMMENTARY_START.match(text[:200]) or _COMMENTARY_REST.search(text))


def _placeholders(text: str) -> Counter[str]:
    return Counter(placeholders(text))


def _markup(text: str) -> Counter[str]:
    return Counter(m.group(0).startswith("</") and "/" + m.group(1).lower() or m.group(1).lower()
                   for m in TAG.finditer(text))


def _fmt_counter(c: Counter[str]) -> str:
    return " ".join(f"{k}×{v}" if v > 1 else k for k, v in sorted(c.items()))


def _length_key(text: str) -> int:
    return max(len(" ".join(text.split())), LENGTH_FLOOR_CHARS)


_NO_COUNTS: Counter[str] = Counter()
"""Shared empty multiset for texts that cannot hold markup or placeholders (only compared and subtracted, never
mutated)."""


_JUDGE_DIRECTED: list[tuple[str, re.Pattern[str]]] = [(what, re.compile(p, flags)) for what, p, flags in (
    ("code fence", r"```", 0),
    # the answer formats of mtboard's judges (mtboard.judges: rubric, GEMBA-MQM, checkpoints), written as lines
    ("judge answer line", r"^[ \t]*(?:adequacy|pragmatics|fluency)[ \t]*[:：][ \t]*[0-9]", re.I | re.M),
    ("judge answer line", r"^[ \t]*(?:flags|justification|contextBehavior)[ \t]*[:：]", re.I | re.M),
    ("judge answer line", r"^[ \t]*(?:Critical|Major|Minor)[ \t]*:[ \t]*$", re.M),
    ("judge answer line", r"^[ \t]*no-error[ \t]*$", re.I | re.M),
    ("judge answer line", r"\[\[\[(?:CHECK|ADDITION|UNTRANSLATED|END)\b", 0),
    # words addressed to whoever reads the output next
    ("instruction to the judge", r"\bignore\b[^.\n]{0,30}\b(?:previous|prior|above|earlier|preceding|all)\b[^.\n]{0,20}"
                                 r"\b(?:instructions?|prompts?|directions|rules)\b", re.I),
    ("instruction to the judge", r"\b(?:ignora|ignorez|ignoriere|ignorieren)\b[^.\n]{0,30}"
                                 r"\b(?:instrucciones|instructions|anweisungen|istruzioni|instruções)\b", re.I),
    ("instruction to the judge", r"\b(?:note|message|instructions?|hint)s? (?:to|for) (?:the )?"
                                 r"(?:judge|evaluator|grader|annotator|reviewer|examiner|rater|assessor)s?\b", re.I),
    ("instruction to the judge", r"^[ \t]*(?:judge|evaluator|grader|annotator|examiner)[ \t]*[:：]", re.I | re.M),
    ("role heading", r"^[ \t]*#{2,4}[ \t]*(?:instruction|response|system|input)\b", re.I | re.M),
)]
"""Text written to a judge rather than for a reader (the informational ``injection`` flag, issue 24): a code fence
(the old judge prompts quoted translations in fences), lines in the answer formats of mtboard's judges (``adequacy:
4``, ``Critical:``, ``no-error``, ``contextBehavior:``, ``[[[CHECK …]]]``), "ignore previous instructions" (English,
Spanish, French, German), a note to the judge, and Alpaca-style ``### Instruction:`` headings. Judges never see such
text as instructions (they receive outputs as JSON string data, :mod:`mtboard.judges.base`); the flag makes an attempt
visible."""


_LINE_BREAKS = str.maketrans({c: "\n" for c in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})
"""Every line boundary ``str.splitlines`` knows, as ``\\n`` (``re``'s ``^`` sees only ``\\n``; a tokenizer or a
reader may break lines at the others)."""


def _injection(out: str, source: str, reference: str) -> CheckFlag | None:
    """The ``injection`` flag: chat-template control tokens (:data:`mtboard.core.text.CONTROL_TOKEN`) and
    :data:`_JUDGE_DIRECTED` text in the output that neither the source nor the reference contains. ``count`` is the
    number of such matches; ``detail`` names the first."""
    out, source, reference = (t.translate(_LINE_BREAKS) for t in (out, source, reference))
    hits: list[tuple[int, str]] = []
    for m in CONTROL_TOKEN.finditer(out):
        tok = m.group(0)
        if tok not in source and tok not in reference:
            hits.append((m.start(), f"role/format token {tok}"))
    for what, rx in _JUDGE_DIRECTED:
        found = list(rx.finditer(out))
        if found and not rx.search(source) and not rx.search(reference):
            hits.extend((m.start(), f"{what} {m.group(0).strip()[:40]!r}") for m in found)
    if not hits:
        return None
    hits.sort()
    return CheckFlag(rule="injection", detail=hits[0][1][:80], count=len(hits))


def _flags(out: str, *, source: str, reference: str, source_language: str, target_language: str) -> list[CheckFlag]:
    flags: list[CheckFlag] = []

    # commentary: a marker in the output that neither the source nor the reference has
    for rx in (_COMMENTARY if _may_be_commentary(out) else ()):
        m = rx.search(out)
        if m and not rx.search(reference) and not rx.search(source):
            flags.append(CheckFlag(rule="commentary", detail=m.group(0).strip()[:60]))
            break

    # speaker labels rewritten as Name: / **Name:**
    bold = len(_LABEL_BOLD.findall(out)) if "**" in out else 0
    if bold and bold > max(len(_LABEL_BOLD.findall(source)), len(_LABEL_BOLD.findall(reference))):
        flags.append(CheckFlag(rule="format.speaker_label", detail="**Name:** label added", count=bold))
    elif _ANY_SPEAKER_TAG.search(source):
        colon = len(_LABEL_COLON.findall(out))
        if colon > max(len(_LABEL_COLON.findall(source)), len(_LABEL_COLON.findall(reference))):
            flags.append(CheckFlag(rule="format.speaker_label", detail="speaker tag rewritten as Name:", count=colon))

    # markdown emphasis added
    def md_count(text: str) -> int:  # bold speaker labels are counted above, not twice
        return len(MD_EMPHASIS.findall(_LABEL_BOLD.sub("", text)))

    md = md_count(out) if ("*" in out or "_" in out) else 0
    if md and md > max(md_count(source), md_count(reference)):
        flags.append(CheckFlag(rule="format.markdown", detail="markdown emphasis added", count=md))

    # markup tags not preserved (matches neither the source's nor the reference's tags)
    mo = _markup(out) if "<" in out else _NO_COUNTS
    ms = _markup(source) if "<" in source else _NO_COUNTS
    if (mo or ms) and mo != ms and mo != _markup(reference):  # both empty: equal, nothing to compare
        missing, extra = ms - mo, mo - ms
        detail = "; ".join(x for x in (missing and f"missing {_fmt_counter(missing)}",
                                       extra and f"extra {_fmt_counter(extra)}") if x)
        flags.append(CheckFlag(rule="format.markup", detail=detail[:200], count=sum((missing + extra).values())))

    # line breaks: the reference keeps the source's line count, the output does not
    n_src = source.count("\n")
    if n_src and reference.count("\n") == n_src and out.count("\n") != n_src:
        flags.append(CheckFlag(rule="format.line_breaks", detail=f"{out.count(chr(10))} line breaks, source {n_src}",
                               count=abs(out.count("\n") - n_src)))

    # placeholders: the output's multiset matches neither the source's nor the reference's
    po = _placeholders(out) if may_hold_placeholders(out) else _NO_COUNTS
    ps = _placeholders(source) if may_hold_placeholders(source) else _NO_COUNTS
    if (po or ps) and po != ps and po != _placeholders(reference):  # both empty: equal, nothing to compare
        missing, extra = ps - po, po - ps
        detail = "; ".join(x for x in (missing and f"missing {_fmt_counter(missing)}",
                                       extra and f"extra {_fmt_counter(extra)}") if x)
        flags.append(CheckFlag(rule="placeholder", detail=detail[:200], count=sum((missing + extra).values())))

    # foreign script: letters of a script used by neither language nor the reference
    src_s, tgt_s = expected_scripts(source_language), expected_scripts(target_language)
    if src_s is not None and tgt_s is not None:
        base = src_s | tgt_s
        foreign = {s: n for s, n in script_counts(out, latin="Latin" not in base).items() if s not in base}
        if foreign:
            in_ref = set(script_counts(reference))
            foreign = {s: n for s, n in foreign.items() if s not in in_ref}
        if foreign:
            flags.append(CheckFlag(rule="foreign_script", detail=" ".join(sorted(foreign)),
                                   count=sum(foreign.values())))

    # length against the reference
    lo, lr = _length_key(out), _length_key(reference)
    if lo > LENGTH_LONG * lr:
        flags.append(CheckFlag(rule="length.long", detail=f"{lo / lr:.2f}× the reference"))
    elif lo < LENGTH_SHORT * lr:
        flags.append(CheckFlag(rule="length.short", detail=f"{lo / lr:.2f}× the reference"))

    # text addressed to a judge (informational)
    inj = _injection(out, source, reference)
    if inj is not None:
        flags.append(inj)
    return flags


# --------------------------------------------------------------------------------------------------------------------
# The policy


def apply_policy(*, source: str, raw_predicted: str | None, reference: str, error_kind: ErrorKind | None,
                 source_language: str, target_language: str, history: list[str] = [],  # noqa: B006 (never mutated)
                 strip_unknown_marks: bool = False) -> tuple[str, MechanicalDecision]:
    """Apply the frozen mechanical policy (:data:`POLICY_VERSION`) to one entry's output.

    Args:
        source, reference: the entry's source and human reference.
        raw_predicted: the output exactly as returned (None when there was none). Never modified.
        error_kind: the runner's failure classification, or None when the backend answered.
        source_language, target_language: BCP 47 tags (scripts for the foreign-script and code-switching rules).
        history: prior dialogue lines given as context (an output echoing history + source is an echo).
        strip_unknown_marks: True only for Apertium output: remove its ``*word``/``#word``/``@word`` marks.

    Returns:
        ``(predicted, decision)``: the post-processed hypothesis (EOS tokens and reasoning blocks removed, marks
        stripped when asked, outer whitespace trimmed; ``""`` when there was no output) and the decision. Outcomes
        other than ``usable`` are scored as an empty hypothesis by :mod:`mtboard.score.scoring`.

    Raises: nothing for any string input (model output is untrusted but never an error here).
    """
    if raw_predicted is None:
        rule = f"error.{ErrorKind(error_kind).value}" if error_kind is not None else "no_output"
        return "", MechanicalDecision(outcome=Outcome.no_usable_output, rule=rule)

    flags: list[CheckFlag] = []
    split = split_reasoning(raw_predicted, source)  # reasoning first: its markup may hold EOS-like tokens
    unclosed = split.unclosed is not None
    if split.stripped:
        flags.append(_think_flag(split))
    text, n_eos = _strip_eos(split.answer, source)
    if n_eos > 1:
        flags.append(CheckFlag(rule="eos.multiple", detail="more than one literal EOS token", count=n_eos))
    if strip_unknown_marks:
        text, n_marks = _strip_unknown_marks(text, source)
        if n_marks:
            flags.append(CheckFlag(rule="unknown_marks", detail="Apertium unknown-word marks removed", count=n_marks))
    predicted = text.strip()
    broken = _broken_encoding(predicted, source)
    if broken is not None:
        flags.append(broken)

    def decided(outcome: Outcome, rule: str, share: float | None = None) -> tuple[str, MechanicalDecision]:
        return predicted, MechanicalDecision(outcome=outcome, rule=rule, flags=flags, untranslated_share=share,
                                             eos_tokens=n_eos)

    if error_kind is not None:
        return decided(Outcome.no_usable_output, f"error.{ErrorKind(error_kind).value}")
    if unclosed:
        return decided(Outcome.no_usable_output, "unclosed_think")
    if not predicted:
        return decided(Outcome.no_usable_output, "empty")

    if _plain_key(reference) != _plain_key(source) and is_echo(predicted, source, history):
        return decided(Outcome.source_untranslated, "echo", 1.0)

    flags.extend(_flags(predicted, source=source, reference=reference, source_language=source_language,
                        target_language=target_language))
    share, detected = untranslated_share(output=predicted, source=source, reference=reference,
                                         source_language=source_language, target_language=target_language)
    if detected:
        flags.append(CheckFlag(rule="partly_untranslated", detail=f"{share:.3f} of letters left in the source"))
    return predicted, MechanicalDecision(outcome=Outcome.usable, rule=None, flags=flags,
                                         untranslated_share=round(share, 6), eos_tokens=n_eos)


RETRIED_BY_TRANSPORT = frozenset({ErrorKind.transport, ErrorKind.backend})
"""Error kinds that are the service's fault, not the model's: retried by the client (transport) or making the run
incomplete (backend) — never a format failure, never re-asked by ``--format-attempts``, never penalised."""


def format_failure(*, source: str, raw_predicted: str | None, error_kind: ErrorKind | None, source_language: str,
                   target_language: str, strip_unknown_marks: bool = False) -> str | None:
    """The mechanical format rule an answer fails, or None when it passes (BookTrans: a model whose answer breaks
    the format is asked again, up to 5 attempts; :mod:`mtboard.run.format_attempts`).

    An answer fails when :func:`apply_policy`, run **without the reference** (the runner never sees references; the
    validator decides again the same way from the kept answer), gives outcome ``no_usable_output`` — a model failure
    (token cap, empty answer, refusal, reasoning that never closed …) — the rule is returned (``empty``,
    ``unclosed_think``, ``error.token_cap`` …), or a usable answer with a ``format.*`` flag (speaker labels rewritten,
    markdown emphasis added, markup not preserved; the first such flag's rule, e.g. ``format.markdown``). An echo
    of the source is not a format failure (it is scored 0 as ``source_untranslated``). Error kinds in
    :data:`RETRIED_BY_TRANSPORT` are never a format failure (None).

    ``"**Hola** mundo"`` for the source ``"Hello world"`` → ``"format.markdown"``; ``""`` → ``"empty"``; ``"Hola
    mundo"`` → None. Raises nothing for any string input."""
    if error_kind is not None and ErrorKind(error_kind) in RETRIED_BY_TRANSPORT:
        return None
    _, decision = apply_policy(source=source, raw_predicted=raw_predicted, reference="", error_kind=error_kind,
                               source_language=source_language, target_language=target_language,
                               strip_unknown_marks=strip_unknown_marks)
    if decision.outcome == Outcome.no_usable_output:
        return decision.rule or "no_output"
    if decision.outcome == Outcome.usable:
        for f in decision.flags:
            if f.rule.startswith("format."):
                return f.rule
    return None


def code_switching_detected(decision: MechanicalDecision) -> bool:
    """True when the entry leaks source language: echo, no usable output (worst value by policy), or the
    ``partly_untranslated`` flag."""
    if decision.outcome != Outcome.usable:
        return True
    return any(f.rule == "partly_untranslated" for f in decision.flags)
