"""Display names that cannot spoof (issue 32 item 5): the one rule every name the site or the ledger shows obeys.

A *name* is an identifier a person reads to tell one system from another: a model or model slug, a method spec, a
backend or plugin name, a condition label, a run id, a prompt name, a judge's model, a dataset id, a reviewer or
verifier name. :func:`name_problem` says why a name is refused (``None`` when it is not); :func:`check_name` raises
it as one line. The validator (``names`` check, :mod:`mtboard.validate.naming`; ``mtboard submit`` runs it) and
``mtboard run``'s settings (:mod:`mtboard.run.settings`) call it, so the rule is the same for every name, wherever it
enters; reviewer handles need no call: their schema pattern (:data:`mtboard.core.schema.review.GITHUB_HANDLE_RE`,
ASCII letters, digits and inner hyphens) admits no character this rule refuses. What still reaches a page without
the validator (an older card built with ``--no-validate``, free text) is shown with :func:`mark` (each refused
character replaced by a visible ``[⚠U+XXXX]`` marker), inside ``<bdi>`` (:func:`mtboard.core.fmt.name_html`).

A name is refused when it holds (first match wins; classes from the Unicode Character Database through the ``regex``
module, whose Unicode version is the one in force):

1. a bidirectional control (``Bidi_Control``: U+061C, U+200E/F, U+202A–E, U+2066–9) — it reorders what follows it;
2. a control character (``gc=Cc``: C0, DEL, C1);
3. an invisible character (``Default_Ignorable_Code_Point``: zero-width space/joiners, U+2060–U+2064, U+FEFF, U+00AD,
   U+180E, variation selectors, tag characters, Hangul fillers, …);
4. any other format character (``gc=Cf``, e.g. U+0600 ARABIC NUMBER SIGN), a line or paragraph separator (``Zl``,
   ``Zp``), a space other than U+0020 (``Zs``), a private-use, surrogate or unassigned code point (``Co``, ``Cs``,
   ``Cn``);
5. a space at either end (two names then look the same);
6. more than :data:`MAX_MARKS` nonspacing marks in a row, or the same mark twice in a row (UTS #39 §5.4, "Optional
   Detection");
7. text not in Unicode Normalization Form C (UAX #15): ``é`` written ``e`` + U+0301 looks like ``é`` but is another
   string;
8. a character that is not its own NFKC form (UAX #15): full-width ``Ｇ``, ligature ``ﬁ``, mathematical ``𝐠``,
   letterlike ``ℊ``, long ``ſ``, superscript ``²``, Roman numeral ``Ⅳ``, half-width katakana — the error names the
   form to write;
9. a mix of scripts that is not *moderately restrictive* (UTS #39 §5.2) or that puts Latin beside Cyrillic, Greek or
   Armenian (the scripts whose letters copy Latin's): the name's letters must share one script (their resolved
   script set, §5.1, with ``Script_Extensions`` and the augmented sets), or be covered by Latin + Han + Hiragana +
   Katakana, Latin + Han + Bopomofo, Latin + Han + Hangul, or Latin + one other *Recommended* script (UAX #31
   Table 5) other than those three. So ``gpt-4о`` (Latin + Cyrillic о) is refused, while an all-Cyrillic, all-Greek,
   Japanese (Han + kana), Korean or Latin + Arabic name passes;
10. a non-ASCII character Unicode's confusables data (UTS #39 §4) lists as confusable with ASCII — ``ı`` (``i``),
    ``ɑ``, ``ɡ``, ``æ`` (``ae``), ``∕`` and ``⁄`` (``/``), ``‐`` and ``−`` (``-``) — when it is Latin, Common or
    Inherited, or a letter of another script in a name that also holds Latin letters (``gpt-4օ``, Armenian օ);
11. a non-ASCII punctuation mark, symbol or combining mark (script Common or Inherited) whose ``Script_Extensions``
    hold no script of the name's letters (``™``, ``✓``, ``。`` in a Latin name; ``ー`` with kana passes), arrows aside.

Rules 8–11 are :mod:`mtboard.core.lookalike`'s, which says where each comes from and why the confusables data is
the maintained ``confusable_homoglyphs`` package's. Whole-script confusables (an all-Cyrillic ``аре`` that reads as
Latin ``ape``) are not refused: an honest all-Cyrillic name must pass, and the board tells rows apart by their full
method, not by a look-alike word.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import regex

from mtboard.core.errors import InputError
from mtboard.core.lookalike import ascii_lookalike_problem, common_script_problem, mixed_script_problem, nfkc_problem
from mtboard.core.lookalike import scripts as scripts  # re-exported: the rule's script sets

MAX_MARKS = 4
"""Longest run of nonspacing marks (gc=Mn/Me) a name may hold (UTS #39 §5.4)."""

_CLASSES: tuple[tuple[str, regex.Pattern[str]], ...] = (
    ("bidirectional control", regex.compile(r"\p{Bidi_Control}")),
    ("control character", regex.compile(r"\p{Cc}")),
    ("invisible character", regex.compile(r"\p{Default_Ignorable_Code_Point}")),
    ("format character", regex.compile(r"\p{Cf}")),
    ("line or paragraph separator", regex.compile(r"[\p{Zl}\p{Zp}]")),
    ("space other than U+0020", regex.compile(r"[\p{Zs}--[\x20]]", regex.V1)),
    ("private-use character", regex.compile(r"\p{Co}")),
    ("surrogate", regex.compile(r"\p{Cs}")),
    ("unassigned code point", regex.compile(r"\p{Cn}")),
)
"""Refused character classes, in the order a character is classified (the first that matches names it)."""
REFUSED = regex.compile("|".join(f"(?:{rx.pattern})" for _, rx in _CLASSES), regex.V1)
_SPOOF = regex.compile(r"[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")
"""What :func:`mark` replaces in free text (translations, notes): the explicit bidirectional embeddings, overrides and
isolates, which reorder text beyond their own word, and the tag characters, which smuggle invisible ASCII. The
marks honest text needs (U+200E/F, U+061C, ZWJ/ZWNJ in Persian or Indic text and emoji, soft hyphens, variation
selectors) are left as they are."""
_JSON_ESCAPE = regex.compile(rf"(?:{REFUSED.pattern})(?<![\t\n\r])", regex.V1)
_MARK = regex.compile(r"[\p{Mn}\p{Me}]")


def _ascii_hits(pattern: regex.Pattern[str]) -> frozenset[str]:
    """The ASCII characters (U+0000–U+007F) a single-character ``pattern`` matches."""
    return frozenset(c for c in map(chr, range(128)) if pattern.match(c))


_ASCII_HITS = {rx: _ascii_hits(rx) for rx in (REFUSED, _SPOOF, _JSON_ESCAPE)}
"""The ASCII characters each single-character pattern matches, computed from the patterns themselves: REFUSED, the C0
controls and DEL; the JSON escape, the same but tab, line feed and carriage return; :data:`_SPOOF`, none."""


def _replace_chars(pattern: regex.Pattern[str], text: str, repl: Callable[[str], str]) -> str:
    """``pattern.sub(lambda m: repl(m.group()), text)`` for a ``pattern`` every match of which is one character, by
    distinct character: the text's distinct characters are matched one by one and the hits replaced with
    ``str.translate``. Same result; on a page or a download (megabytes, a few hundred distinct characters) about 6×
    faster than scanning with ``regex``, and an ASCII text with no ASCII hit is returned at once (issue 35: the
    build calls this for every name and every written file)."""
    text = str(text)  # a str subclass (markupsafe.Markup) comes back a plain str, as from regex.sub
    if text.isascii():
        hits = _ASCII_HITS[pattern]
        found = hits.intersection(text) if hits else hits  # no pass over the text when nothing ASCII can match
    else:
        found = {c for c in set(text) if pattern.match(c)}
    if not found:
        return text
    return text.translate({ord(c): repl(c) for c in found})


@dataclass(frozen=True)
class NameProblem:
    """Why a name is refused: ``what`` (the class), the first offending character (``None`` for a whole-name
    problem such as normalisation) and its 0-based ``index``, and the ``fix``."""

    what: str
    char: str | None
    index: int | None
    fix: str

    def __str__(self) -> str:
        at = f" {codepoint(self.char)} at character {self.index + 1}" if self.char is not None else ""
        return f"{self.what}{at} (fix: {self.fix})"


def codepoint(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: the code point and its Unicode name (``<unnamed>`` for controls, private
    use and unassigned code points, which have none)."""
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '<unnamed>')}"


def _marks_problem(text: str) -> NameProblem | None:
    run, prev = 0, ""
    for i, ch in enumerate(text):
        if _MARK.match(ch):
            run += 1
            if run > MAX_MARKS or ch == prev:
                return NameProblem(f"more than {MAX_MARKS} combining marks in a row, or one mark repeated", ch, i,
                                   "remove the stacked marks (Unicode UTS #39 §5.4)")
        else:
            run = 0
        prev = ch
    return None


def name_problem(text: str) -> NameProblem | None:
    """Why ``text`` cannot be a displayed name (the module docstring's rule), or None when it can.

    Args: text: the name (any length; the schema bounds lengths).
    Returns: the first problem found, in the rule's order (character classes, ends, marks, NFC, NFKC, scripts,
    ASCII look-alikes, Common characters).
    """
    m = REFUSED.search(text)
    if m is not None:
        ch = m.group()
        what = next(label for label, rx in _CLASSES if rx.match(ch))
        return NameProblem(what, ch, m.start(), "remove it: names may hold no bidirectional control, control, "
                                                "invisible, format or separator character")
    if text != text.strip(" "):
        i = 0 if text.startswith(" ") else len(text) - 1
        return NameProblem("a space at the start or end", " ", i, "remove the space")
    problem = _marks_problem(text)
    if problem is not None:
        return problem
    if not unicodedata.is_normalized("NFC", text):
        return NameProblem("not in Unicode Normalization Form C", None, None,
                           "write the name in NFC (unicodedata.normalize('NFC', name))")
    for rule in (nfkc_problem, mixed_script_problem, ascii_lookalike_problem, common_script_problem):
        found = rule(text)
        if found is not None:
            return NameProblem(*found)
    return None


class NameRefused(ValueError):
    """A refused name inside a pydantic validator (``ValueError`` so pydantic reports it as the field's error); the
    caller turns ``problem`` into its one-line error (:func:`mtboard.run.settings.settings_error`)."""

    def __init__(self, problem: NameProblem):
        super().__init__(str(problem))
        self.problem = problem


def validate_name(text: str) -> str:
    """A pydantic field validator: ``text`` when it is a name :func:`name_problem` accepts.

    Raises: NameRefused (a ValueError)."""
    problem = name_problem(text)
    if problem is not None:
        raise NameRefused(problem)
    return text


def check_name(text: str, field: str, *, where: str | None = None) -> str:
    """``text`` when it passes :func:`name_problem`.

    Raises: InputError naming ``where``, the field, the class and the code point, e.g. ``model_slug: bidirectional
    control U+202E RIGHT-TO-LEFT OVERRIDE at character 6 (fix: remove it …)``.
    """
    problem = name_problem(text)
    if problem is not None:
        at = f" {codepoint(problem.char)} at character {problem.index + 1}" if problem.char is not None else ""
        raise InputError(f"{problem.what}{at}", where=where, field=field, fix=problem.fix)
    return text


MARKER = "\u26a0"
"""Shown before the code point of every refused character on a page or in a download: ``[⚠U+202E]``."""


def mark(text: str, *, free_text: bool = False) -> str:
    """``text`` with every character of a refused class (:func:`name_problem`'s classes 1–4) replaced by a visible
    marker ``[⚠U+XXXX]`` (:func:`marker`), so that nothing reorders, hides or splits what is shown. Letters are kept:
    a mixed-script name is shown as it is (the validator refuses it; the page isolates it in ``<bdi>``). ``free_text``:
    a translation, a note or other prose, where only the characters of :data:`_SPOOF` are replaced."""
    return _replace_chars(_SPOOF if free_text else REFUSED, text, marker)


def marker(ch: str) -> str:
    """The visible stand-in of one refused character: ``[⚠U+202E]``."""
    return f"[{MARKER}U+{ord(ch):04X}]"


def has_refused(text: str) -> bool:
    """Whether ``text`` holds a character :func:`mark` replaces."""
    return REFUSED.search(text) is not None


# --------------------------------------------------------------------------------------------------------------------
# Where a run card holds names

_CARD_NAMES = ("model_slug", "model_id", "condition", "run_id", "harness_version", "method_config.model",
               "method.spec", "method.backend", "method.model", "method.effort", "method.prompt_name",
               "method.api_provider", "method.model_revision", "method.engine_version", "method.plugin.distribution",
               "method.plugin.version", "method.plugin.entry_point", "dataset.id", "dataset.version",
               "dataset.language_pair")
"""Dotted paths of a run card's single names: every one the site, the ledger or a download shows as a label."""
_JUDGE_NAMES = ("backend", "model", "effort", "api_provider", "parser")


def _get(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def card_names(card: object) -> list[tuple[str, str]]:
    """Every name a run card shows, as ``(JSON path, text)``: the fields of :data:`_CARD_NAMES`, each tool name, each
    judge's key and its backend, model, effort, provider and parser, each neural metric's key and model.

    Args: card: a :class:`mtboard.core.schema.RunCard` (any object with its attributes).
    Returns: the pairs in a fixed order (absent fields left out)."""
    out = [(f"$.{p}", v) for p in _CARD_NAMES if isinstance(v := _get(card, p), str)]
    out += [(f"$.tools_enabled[{i}]", t) for i, t in enumerate(getattr(card, "tools_enabled", []))]
    for key, j in sorted(getattr(card, "judges", {}).items()):
        out.append((f"$.judges.{key}", key))
        out += [(f"$.judges.{key}.{f}", v) for f in _JUDGE_NAMES if isinstance(v := getattr(j, f, None), str)]
    for key, m in sorted(getattr(card, "neural_metrics", {}).items()):
        out += [(f"$.neural_metrics.{key}", key), (f"$.neural_metrics.{key}.model", m.model)]
    return out


def json_visible(text: str) -> str:
    """Serialised JSON ``text`` with every refused character (but the structural ``\\t \\n \\r``, which JSON
    escapes inside strings anyway) written as a ``\\uXXXX`` escape (a surrogate pair beyond the BMP): the parsed
    value is unchanged — a download keeps the exact name — while a person reading the file sees the code point
    instead of reordered or hidden text. Safe on any JSON text: outside strings JSON holds only ASCII."""

    def esc(ch: str) -> str:
        cp = ord(ch)
        if cp < 0x10000:
            return f"\\u{cp:04x}"
        cp -= 0x10000
        return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"

    return _replace_chars(_JSON_ESCAPE, text, esc)
