"""Rule-based metadata for entries: difficulty (spec §2.4), register and context (spec §2.6), diagnostic status.

No model is involved anywhere: each rule is a few lines of code, documented here and in ``corpora/SOURCES.md``, and
tested with hand-made strings (tests/test_corpora_labels.py).
"""

from __future__ import annotations

import re

from mtboard.inputs.corpora import text as T
from mtboard.core.languages import primary
from mtboard.core.schema import Context, Domain, Register

# --------------------------------------------------------------------------------------------------------------------
# Difficulty

SUBORDINATORS_EN = frozenset(
    "which who whom whose that because although though while whereas unless if when whenever since until after "
    "before so".split()
)
"""English words that usually open a new clause (counted by :func:`clause_count` for English sources)."""
_CLAUSE_PUNCT_RE = re.compile(r"[,;:、；：]|\s[—–-]\s")
WORD_STEPS = (3, 8, 15, 25)
"""Upper word-count bounds of difficulty 1, 2, 3 and 4; anything longer is 5."""
CLAUSE_BUMP = 3
"""A source with at least this many clauses gets one level more (capped at 5)."""


def clause_count(text: str, lang: str) -> int:
    """Clauses in ``text``: 1 + clause punctuation (``, ; :`` and Japanese ``、；：``, spaced dashes) + (English only)
    subordinating words from :data:`SUBORDINATORS_EN`. Returns an int ≥ 1."""
    n = 1 + len(_CLAUSE_PUNCT_RE.findall(text))
    if primary(lang) == "en":
        n += sum(1 for w in re.findall(r"[A-Za-z]+", text) if w.lower() in SUBORDINATORS_EN)
    return n


def difficulty(source: str, lang: str) -> int:
    """Difficulty 1–5 of translating ``source`` (language ``lang``), from length and clause count only.

    Rule: words w = :func:`mtboard.inputs.corpora.text.word_count` (CJK: one word per 2.5 characters); level 1 if w ≤ 3,
    2 if w ≤ 8, 3 if w ≤ 15, 4 if w ≤ 25, else 5; plus one level when :func:`clause_count` ≥ 3; capped at 5.
    Example: 'Save' → 1; 'The file could not be saved.' (6 words, 1 clause) → 2;
    'If the disk is full, the file, which is large, is not saved.' (13 words; clauses 1 + 3 commas + 'if' +
    'which' = 6) → 4.
    """
    w = T.word_count(source)
    level = 1 + sum(1 for step in WORD_STEPS if w > step)
    if clause_count(source, lang) >= CLAUSE_BUMP:
        level += 1
    return min(level, 5)


# --------------------------------------------------------------------------------------------------------------------
# Context and register

_ERROR_RE = re.compile(
    r"\b(?:error|errors|invalid|cannot|can't|can not|could not|couldn't|failed|fails|failure|unable|not allowed|"
    r"not found|denied|forbidden|must|is required|are required|does not exist|doesn't exist|no such|not valid|"
    r"wrong|too (?:long|short|large|small|many|few))\b", re.I)
IMPERATIVES = frozenset(
    "add apply cancel change check choose click close configure confirm create delete disable download edit enable "
    "enter fill go import install make move open please press provide remove rename replace restart run save "
    "search select set show specify start stop type update upload use verify view".split()
)
"""Verbs that make a UI string starting with them an instruction ('Enter a valid date', 'Please log in')."""
_GREETING_RE = re.compile(r"^(?:hello|hi|hey|greetings|welcome|good (?:morning|afternoon|evening|day)|farewell|"
                          r"goodbye)\b", re.I)

DOMAIN_REGISTER: dict[Domain, Register | None] = {
    Domain.ui: Register.technical,
    Domain.medical: Register.technical,
    Domain.tech: Register.technical,
    Domain.legal: Register.formal,
    Domain.news: Register.formal,
    Domain.gov: Register.formal,
    Domain.literary: None,
}
"""Register per domain for the committed corpora: software text is technical, legal/news/government prose formal;
literary dialogue mixes registers, so it gets none."""


def ui_context(english: str) -> Context | None:
    """Communicative function of a UI string (English side), first rule that matches:

    ``error`` (error vocabulary: invalid, cannot, failed, not found, must, …) → ``question`` (ends with '?') →
    ``instruction`` (first word in :data:`IMPERATIVES`) → ``label`` (≤ 4 words, no final . ! ?) → ``None``.
    """
    t = english.strip()
    if _ERROR_RE.search(t):
        return Context.error
    if t.endswith("?"):
        return Context.question
    first = re.match(r"[A-Za-z']+", t)
    if first and first.group(0).lower() in IMPERATIVES:
        return Context.instruction
    if T.word_count(t) <= 4 and not t.endswith((".", "!", "?", "…")):
        return Context.label
    return None


def assign_context(domain: Domain | None, english: str, tag: str = "") -> Context | None:
    """Context for an entry of ``domain`` whose English side is ``english`` (``tag``: upstream block kind).

    ui, medical (a UI catalogue): :func:`ui_context`. tech: headings (``h1``–``h6``) are ``label``, else
    :func:`ui_context` limited to ``instruction``/``question``. legal: ``declaration``. news: ``narrative``.
    gov: ``label`` for ≤ 4-word names, else ``narrative``. literary: ``greeting`` (Hello, Welcome, Farewell, …),
    ``question`` (ends with '?'), else ``None`` (game catalogs mix dialogue and narration and do not say which).
    Other domains: ``None``.
    """
    t = english.strip()
    if domain in (Domain.ui, Domain.medical):
        return ui_context(t)
    if domain == Domain.tech:
        if re.fullmatch(r"h[1-6]", tag):
            return Context.label
        c = ui_context(t)
        return c if c in (Context.instruction, Context.question) else None
    if domain == Domain.legal:
        return Context.declaration
    if domain == Domain.news:
        return Context.narrative
    if domain == Domain.gov:
        return Context.label if T.word_count(t) <= 4 and not t.endswith(".") else Context.narrative
    if domain == Domain.literary:
        if _GREETING_RE.match(t):
            return Context.greeting
        if t.endswith("?"):
            return Context.question
        return None
    return None


def is_diagnostic(source: str) -> bool:
    """A pair is diagnostic when its source carries placeholders (``%(name)s``, ``%s``, ``{0}``, ``$unit.name|``).

    Why diagnostic: a correct translation must copy every placeholder verbatim and place it grammatically, which
    exposes methods that translate, drop or mangle variables (a failure chrF++ barely sees). The filters already
    guarantee the reference holds exactly the same placeholders.
    """
    return bool(T.placeholders(source))
