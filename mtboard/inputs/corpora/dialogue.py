"""Dialogue order from Battle for Wesnoth scenario files (WML), for corpora whose entries carry ``history``.

Wesnoth's gettext catalogues (``.mo``) are sorted by msgid, so they do not say in which order a scene's lines are
spoken. The order comes from the campaign's WML scenario files (``data/campaigns/<C>/scenarios/*.cfg``), read here
by a small scanner that knows what the order needs and nothing more:

* ``[message] … message= _ "…"`` (dialogue; the line is emitted when its ``[/message]`` closes, with its
  ``speaker=`` and the enclosing ``[event]``'s ``name=``) and ``[part] … story= _ "…"`` (narration shown between
  scenarios), in file order;
* a macro call ``{NAME … ( … ) …}`` is read through: WML in its parenthesised arguments (``{IF_VAR … ([then]
  [message]…)}``) is read in place, as the macro usually pastes it (a guess: the macro bodies live elsewhere);
* where the WML branches (``[if]``'s ``[then]``/``[else]``, ``[switch]``'s ``[case]``s, a message's ``[option]``s,
  a macro's separate arguments), each line records its branches (``WmlLine.path``, :data:`BRANCHES`), so that a
  history never holds two alternatives: the lines before a line are those on its own path, taking the first
  branch of every choice it is not inside (:func:`compatible`, :func:`path_before`);
* preprocessor conditionals are resolved as a game at NORMAL difficulty sees them (``#ifdef NORMAL`` true,
  ``#ifdef EASY`` / ``HARD`` and every other symbol false; ``#ifndef`` the opposite; ``#else`` flips), and
  ``#define … #enddef`` bodies are skipped (a macro body is not spoken where it is written);
* a ``message=`` whose value is not one or more translatable strings (``_ "…"``, joined by ``+``) is not a line: a
  pure macro call (``message={WHISPER _"…"}``), an untranslatable value (``message=$var``) or a mix is dropped and
  counted (:class:`WmlReport`), as are ``message=`` keys of ``[option]`` (a player's menu choice) and translatable
  strings given to a macro as plain arguments (unit names, hints: ``{HINT ( _ "…")}``);
* strings follow WML: ``"…"`` with ``""`` for a literal quote, possibly over several lines; ``<<…>>`` raw; ``#``
  starts a comment outside strings; a preprocessor directive is a line whose first word is ``#define``,
  ``#ifdef`` … (``#if the player …`` is a comment), and ``#enddef`` also closes a macro body at the end of a line.

The text of a line is the msgid exactly as ``wmlxgettext`` extracts it, so it can be looked up in the catalogue
(:func:`scene_lines`). Placeholders such as ``$unit.name`` or ``$second_unit.name|`` stay as written.

Source: the WML reference (https://wiki.wesnoth.org/SyntaxWML, PreprocessorRef, MessageWML, IntroWML), checked
against the 1.16.9 Debian packages' files; corpora/SOURCES.md gives the measured counts.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from mtboard.inputs.corpora.importers.catalog import split_context

DEFINED = frozenset({"NORMAL"})
"""Preprocessor symbols taken as defined when resolving ``#ifdef`` / ``#ifndef``: a NORMAL-difficulty game."""

HISTORY_CAP = 24
"""At most this many preceding lines go into an entry's ``history`` (the JA→EN write-up's longest history)."""

_DIRECTIVE_RE = re.compile(r"[ \t]*#(define|enddef|ifdef|ifndef|ifhave|ifnhave|ifver|ifnver|else|endif|undef|"
                           r"textdomain|arg|endarg|error|warning|deprecated|po)\b([^\n]*)")
_TAG_RE = re.compile(r"\[(/?)\+?([A-Za-z_][A-Za-z0-9_]*)\]")
_PLAIN_RE = re.compile(r"[^\n#+\"{]+")
_PLAIN_IN_MACRO_RE = re.compile(r"[^\n#+\"{})]+")
_KEY_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*)[ \t]*=")


@dataclass(frozen=True)
class WmlLine:
    """One spoken or narrated line of a scenario file, in file order.

    ``kind``: ``message`` (a ``[message]``'s ``message=``) or ``story`` (a ``[part]``'s ``story=``); ``pieces``: the
    translatable strings of the value (one, or several joined with ``+``), each a catalogue msgid; ``text``: the
    pieces concatenated; ``line``: 1-based line of the key in the file; ``event``: the enclosing ``[event]``'s
    ``name=`` (``None`` outside events, e.g. ``[story]``); ``speaker``: the ``speaker=`` of a message."""

    kind: str
    pieces: tuple[str, ...]
    line: int
    event: str | None = None
    speaker: str | None = None
    block: int = 0
    """Ordinal (1, 2, …) of the outermost ``[event]`` the line is in, in file order; 0 outside events (``[story]``)."""
    path: tuple[tuple[int, int], ...] = ()
    """The branches the line lies in: (choice id, branch index) pairs (:data:`BRANCHES`); () on every path."""

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass
class WmlReport:
    """What :func:`wml_lines` kept and dropped in one or more files (counts by reason, see the module doc)."""

    kept: Counter = field(default_factory=Counter)
    """``message`` / ``story`` lines emitted; ``off_first_path``: how many of them lie in a branch other than the
    first of some choice."""
    dropped: Counter = field(default_factory=Counter)
    """``macro`` (value is a macro call), ``untranslatable`` (value has no translatable string), ``mixed`` (strings
    and other tokens), ``option`` (``[option]`` menu text), ``inactive`` (translatable strings in a false
    conditional branch), ``define`` (translatable strings in a ``#define`` body), ``in_macro`` (translatable strings
    in macro-call arguments); ``inactive_line`` / ``define_line``: the ``message=`` / ``story=`` keys among them;
    ``other_tag``: a translatable ``message=`` / ``story=`` outside ``[message]`` / ``[part]``."""

    def add(self, other: WmlReport) -> None:
        self.kept.update(other.kept)
        self.dropped.update(other.dropped)


@dataclass
class _Tag:
    name: str
    keys: dict[str, tuple[int, list[tuple[str, str]]]] = field(default_factory=dict)
    children: Counter = field(default_factory=Counter)
    choice: int = 0
    """Id of the choice this tag opens (an ``[if]``, ``[switch]`` or ``[message]``), 0 if none yet."""
    path: tuple[tuple[int, int], ...] = ()
    """(choice id, branch index) of every branch the tag lies in (:data:`BRANCHES`)."""
    macro: bool = False
    """A macro call ``{NAME …}`` read as a tag: its parenthesised arguments are branches (:data:`BRANCHES`)."""
    parens: int = 0
    args: int = 0
    arg_choice: int = 0


BRANCHES = {"if": ("then", "elseif", "else"), "switch": ("case", "default"), "message": ("option",),
            "{": ("then", "elseif", "else", "case", "default")}
"""Choice points and the tags of their branches: ``[if]``'s ``[then]``/``[elseif]``/``[else]``, ``[switch]``'s
``[case]``/``[default]``, a message's ``[option]``s (the player's menu), and a macro call (``{``) holding such
tags in its arguments (``{IF_VAR … ([then] … [else] …)}``). The k-th branch tag of a choice (in file order) has
index k - 1. A macro call's parenthesised arguments are a choice of their own (argument k - 1): the lines a macro
is given in separate arguments are taken as alternatives (``{MESSAGE_DEPEND_ON_ALLY (Grog's line) (Nog's line)
…}`` says one of them), which never puts two of them in one history but also keeps a macro whose arguments are
shown one after another on one path only. A scene's *first path* takes branch 0 everywhere (:func:`compatible`)."""


def _read_string(text: str, i: int) -> tuple[str, int]:
    """The WML string starting at ``text[i]`` (``"``): its value and the index after the closing quote."""
    out = []
    j = i + 1
    while True:
        k = text.find('"', j)
        if k < 0:
            raise ValueError(f"unterminated string at offset {i}")
        out.append(text[j:k])
        if text.startswith('""', k):
            out.append('"')
            j = k + 2
            continue
        return "".join(out), k + 1


def _skip_macro(text: str, i: int) -> tuple[int, int]:
    """Index after the balanced ``{…}`` starting at ``text[i]`` and the number of translatable strings in it."""
    depth = 0
    n_tr = 0
    j = i
    while j < len(text):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1, n_tr
        elif c == '"':
            before = text[max(i, j - 3):j].rstrip()
            n_tr += before.endswith("_")
            _, j = _read_string(text, j)
            continue
        elif text.startswith("<<", j):
            k = text.find(">>", j + 2)
            j = len(text) if k < 0 else k + 2
            continue
        j += 1
    raise ValueError(f"unterminated macro call at offset {i}")


def wml_lines(text: str, defined: frozenset[str] = DEFINED) -> tuple[list[WmlLine], WmlReport]:
    """The dialogue and narration lines of one WML file, in file order, and what was dropped (module doc).

    ``text``: the file's text; ``defined``: preprocessor symbols taken as defined (default :data:`DEFINED`).
    Raises ValueError on an unterminated string or macro call.

    Long: one scanner over the file's characters; its helpers share the position, the tag stack and the ``#if`` state,
    which split-out functions would pass back and forth at every token."""
    report = WmlReport()
    out: list[WmlLine] = []
    stack: list[_Tag] = []
    cond: list[bool] = []  # one per open #if…: is this branch active
    in_define = 0
    event_names: list[str | None] = []
    blocks = 0
    choices = 0
    i, n = 0, len(text)
    line = 1

    def active() -> bool:
        return in_define == 0 and all(cond)

    def child_path(name: str) -> tuple[tuple[int, int], ...]:
        """The path of a tag ``name`` opened now; counts it among its parent's children."""
        nonlocal choices
        if not stack:
            return ()
        parent = stack[-1]
        path = parent.path
        if parent.macro:
            if not parent.arg_choice:
                choices += 1
                parent.arg_choice = choices
            path = path + ((parent.arg_choice, max(0, parent.args - 1)),)
        kinds = BRANCHES.get("{" if parent.macro else parent.name, ())
        if name in kinds:
            if not parent.choice:
                choices += 1
                parent.choice = choices
            path = path + ((parent.choice, sum(parent.children[b] for b in kinds)),)
        parent.children[name] += 1
        return path

    def pop() -> _Tag:
        tag = stack.pop()
        if tag.name == "event" and event_names:
            event_names.pop()
        return tag

    def count_inactive(k: int) -> None:
        report.dropped["define" if in_define else "inactive"] += k

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            bol = text.rfind("\n", 0, i) + 1
            m = _DIRECTIVE_RE.match(text, bol) if text[bol:i].strip() == "" else None
            if m is None and in_define and text.startswith("#enddef", i):  # 'CS(-240,30,20)#enddef' (utbs 12)
                m = _DIRECTIVE_RE.match(text, i)
            end = text.find("\n", i)
            end = n if end < 0 else end
            if m:
                d, arg = m.group(1), m.group(2).split()
                sym = arg[0] if arg else ""
                if d == "define":
                    in_define += 1
                elif d == "enddef":
                    in_define = max(0, in_define - 1)
                elif d in ("ifdef", "ifhave", "ifver"):
                    cond.append(sym in defined if d == "ifdef" else False)
                elif d in ("ifndef", "ifnhave", "ifnver"):
                    cond.append(sym not in defined if d == "ifndef" else True)
                elif d == "else" and cond:
                    cond[-1] = not cond[-1]
                elif d == "endif" and cond:
                    cond.pop()
            i = end
            continue
        if c == "[":
            m = _TAG_RE.match(text, i)
            if m:
                i = m.end()
                if not active():
                    continue
                closing, name = m.group(1) == "/", m.group(2)
                if not closing:
                    stack.append(_Tag(name, path=child_path(name)))
                    if name == "event":
                        event_names.append(None)
                        blocks += len(event_names) == 1
                    continue
                k = len(stack) - 1
                while k >= 0 and stack[k].name != name and not stack[k].macro:
                    k -= 1
                if k < 0 or stack[k].name != name:  # a close tag with no open one (inside this macro call)
                    continue
                while len(stack) > k + 1:  # tolerate a missing close tag
                    pop()
                tag = pop()
                want = {"message": "message", "part": "story"}.get(name)
                if want and want in tag.keys:
                    at, toks = tag.keys[want]
                    kinds = {k for k, _ in toks if k != "plus"}
                    if kinds == {"tr"}:
                        speaker = tag.keys.get("speaker")
                        spk = "".join(v for _, v in speaker[1]) if speaker else None
                        ev = next((e for e in reversed(event_names) if e), None)
                        out.append(WmlLine("message" if name == "message" else "story",
                                           tuple(v for k, v in toks if k == "tr"), at, ev, spk,
                                           blocks if event_names else 0, tag.path))
                        report.kept[out[-1].kind] += 1
                        report.kept["off_first_path"] += any(b for _, b in tag.path)
                    elif kinds == {"macro"}:
                        report.dropped["macro"] += 1
                    elif "tr" in kinds:
                        report.dropped["mixed"] += 1
                    else:
                        report.dropped["untranslatable"] += 1
                continue
        if c == "{":
            if not active():
                j, k = _skip_macro(text, i)
                line += text.count("\n", i, j)
                count_inactive(k)
                i = j
                continue
            stack.append(_Tag("{", path=child_path("{"), macro=True))
            i += 1
            continue
        if c == "}":
            if active() and any(t.macro for t in stack):
                while not pop().macro:
                    pass
            i += 1
            continue
        if c in "()" and active() and stack and stack[-1].macro:
            top = stack[-1]
            top.parens += 1 if c == "(" else -1
            top.args += c == "(" and top.parens == 1
            i += 1
            continue
        if c == '"':
            tr = text[text.rfind("\n", 0, i) + 1:i].rstrip().endswith("_")
            _, j = _read_string(text, i)
            line += text.count("\n", i, j)
            if tr:
                if active():
                    report.dropped["in_macro"] += 1
                else:
                    count_inactive(1)
            i = j
            continue
        m = _KEY_RE.match(text, i)
        if m:
            key, key_line = m.group(1), line
            i = m.end()
            toks: list[tuple[str, str]] = []
            while i < n:  # the value: tokens up to the end of the line (a trailing + continues it)
                c = text[i]
                if c in " \t\r":
                    i += 1
                elif c == "\n" or c == "#":
                    if toks and toks[-1][0] == "plus":
                        if c == "#":
                            e = text.find("\n", i)
                            i = n if e < 0 else e
                        else:
                            line += 1
                            i += 1
                        continue
                    break
                elif c == "_" and text[i + 1:i + 2] in (" ", "\t", '"'):
                    toks.append(("underscore", ""))
                    i += 1
                elif c == '"':
                    s, j = _read_string(text, i)
                    line += text.count("\n", i, j)
                    if toks and toks[-1][0] == "underscore":
                        toks[-1] = ("tr", s)
                    else:
                        toks.append(("str", s))
                    i = j
                elif text.startswith("<<", i):
                    k = text.find(">>", i + 2)
                    k = n if k < 0 else k
                    line += text.count("\n", i, k)
                    toks.append(("str", text[i + 2:k]))
                    i = k + 2
                elif c == "{":
                    j, k = _skip_macro(text, i)
                    line += text.count("\n", i, j)
                    toks.append(("macro", text[i:j]))
                    i = j
                elif c == "+":
                    toks.append(("plus", "+"))
                    i += 1
                elif c in ")}" and any(t.macro for t in stack):
                    break  # the end of a macro argument or call ends the value
                else:
                    m2 = (_PLAIN_IN_MACRO_RE if any(t.macro for t in stack) else _PLAIN_RE).match(text, i)
                    toks.append(("plain", m2.group(0).strip()))
                    i = m2.end()
            has_tr = any(k == "tr" for k, _ in toks)
            if not active():
                count_inactive(sum(k == "tr" for k, _ in toks))
                if key in ("message", "story") and has_tr:
                    report.dropped[("define" if in_define else "inactive") + "_line"] += 1
                continue
            if stack:
                stack[-1].keys[key] = (key_line, toks)
                if key == "name" and stack[-1].name == "event" and event_names:
                    event_names[-1] = "".join(v for _, v in toks)
                if key in ("message", "story") and has_tr and \
                        stack[-1].name != {"message": "message", "story": "part"}[key]:
                    report.dropped["option" if stack[-1].name == "option" else "other_tag"] += 1
            elif key in ("message", "story") and has_tr:
                report.dropped["other_tag"] += 1
            continue
        i += 1  # anything else (stray characters) is skipped
    # a [message] is emitted when it closes, after the replies nested in its [option]s: file order is the order of
    # the message= / story= keys
    out.sort(key=lambda ln: ln.line)
    return out, report


@dataclass(frozen=True)
class SceneLine:
    """A line of a scene with its translation: ``source`` (the original text), ``target`` (its translation, ``None``
    when the catalogue has none), plus the :class:`WmlLine` it came from and its index in the scene."""

    index: int
    source: str
    target: str | None
    wml: WmlLine


def shown(piece: str) -> str:
    """A msgid as the player sees it: a Wesnoth context prefix (``female^``) removed
    (:func:`mtboard.inputs.corpora.importers.catalog.split_context`)."""
    return split_context(piece)[0]


def scene_lines(lines: list[WmlLine], catalog: dict[str, str]) -> list[SceneLine]:
    """Look every line's pieces up in ``catalog`` (msgid as WML writes it, context prefix included → msgstr;
    translated entries only); returns the scene's lines (``source`` without context prefixes, :func:`shown`),
    ``target`` ``None`` when a piece has no translation there."""
    out = []
    for k, ln in enumerate(lines):
        tr = [catalog.get(p) for p in ln.pieces]
        out.append(SceneLine(k, "".join(shown(p) for p in ln.pieces),
                             "".join(t for t in tr if t is not None) if all(t is not None for t in tr) else None,
                             ln))
    return out


def compatible(before: WmlLine, line: WmlLine) -> bool:
    """Whether ``before`` can be shown before ``line`` in one play: at every choice ``before`` lies in, it is in
    ``line``'s branch when ``line`` lies in that choice too, else in the first branch (index 0)."""
    mine = dict(line.path)
    return all(b == mine.get(c, 0) for c, b in before.path)


def path_before(lines: list[WmlLine], index: int) -> list[int]:
    """Indices of the lines before ``lines[index]`` on its path (:func:`compatible`), oldest first."""
    return [j for j in range(index) if compatible(lines[j], lines[index])]


def on_first_path(line: WmlLine) -> bool:
    """The line lies in the first branch of every choice it is inside (a scene's main sequence)."""
    return all(b == 0 for _, b in line.path)


def history(texts: list[str | None], index: int, cap: int = HISTORY_CAP) -> list[str]:
    """The history of the line at ``index`` of a scene whose lines (in the history's language) are ``texts``: the
    preceding lines, oldest first, at most ``cap`` of them. A line with no text (``None``: no translation in that
    language) is a gap: the history stops after it (only the lines after the last gap before ``index`` count), so a
    history never skips a line silently."""
    if not 0 <= index < len(texts):
        raise IndexError(f"line {index} of a scene of {len(texts)} lines")
    start = max(0, index - cap)
    prior = texts[start:index]
    for k in range(len(prior) - 1, -1, -1):
        if prior[k] is None:
            prior = prior[k + 1:]
            break
    return [t for t in prior if t is not None]
