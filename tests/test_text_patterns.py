"""mtboard.core.text: the one placeholder and markup pattern set (used by the mechanical policy and the corpus filters).

Every string is hand-made (test data); the expected matches are written by hand from the format each pattern names
(C printf, Python %-formatting and str.format, Qt, Jinja/Mustache, shell/Wesnoth variables, HTML, Markdown).
"""

from __future__ import annotations

from collections import Counter

import pytest
import regex

from mtboard.core import text
from mtboard.score import checks
from mtboard.inputs.corpora import text as corpus_text


def _only(part: str):
    return regex.compile(part).findall


@pytest.mark.parametrize("part, sample, expected", [
    # printf / Python %-formatting
    (text.PRINTF, "%s, %d, %5.2f, %-10s, %ld, %lld, %hhu, %x, %e", ["%s", "%d", "%5.2f", "%-10s", "%ld", "%lld",
                                                                   "%hhu", "%x", "%e"]),
    (text.PRINTF, "%1$s saw %2$d", ["%1$s", "%2$d"]),
    (text.PRINTF, "%(name)s has %(count)d", ["%(name)s", "%(count)d"]),
    (text.PRINTF, "%*d and %.*s", ["%*d", "%.*s"]),
    (text.PRINTF, "50% less, 5 % d", []),            # the space flag is not read: prose percent signs stay prose
    (text.PRINTF, "%option and %path", []),           # the rare conversions o/a/A/F/p only when no letter follows
    (text.PRINTF, "$devpath or %p: device", ["%p"]),
    # Qt / Windows
    (text.QT_ARG, "%1 of %2 files, %10", ["%1", "%2", "%10"]),
    (text.QT_ARG, "%1$s", []),
    # ${var}, $var
    (text.DOLLAR_BRACE, "path ${HOME}/x and ${user.name}", ["${HOME}", "${user.name}"]),
    (text.DOLLAR, "$unit.name| attacks $second_unit.name.", ["$unit.name|", "$second_unit.name"]),
    (text.DOLLAR, "$HOME and $attacks[0].name", ["$HOME", "$attacks[0].name"]),
    (text.DOLLAR, "costs $5", []),
    # {{var}}, {var}
    (text.DOUBLE_BRACE, "Hi {{name}}, {{ user.email }}", ["{{name}}", "{{ user.email }}"]),
    (text.BRACE, "{} {0} {name} {0.attr} {a[key]} {x!r} {x:>10} {:.2f}", ["{}", "{0}", "{name}", "{0.attr}",
                                                                          "{a[key]}", "{x!r}", "{x:>10}", "{:.2f}"]),
    (text.BRACE, "{count, plural, one {# item} other {# items}}", []),  # ICU: its messages are translated
    (text.BRACE, "diff -u file.c{.orig,}", []),                         # shell brace expansion is not a field
    # literal escapes
    (text.ESCAPE, r"Line\nnext\ttab\rret", [r"\n", r"\t", r"\r"]),
])
def test_each_pattern_part(part, sample, expected):
    assert _only(part)(sample) == expected


@pytest.mark.parametrize("sample, expected", [
    ("%(n)d of %s", ["%(n)d", "%s"]),
    ("Hi {name}, 100%% done", ["{name}"]),
    ("%%s is a literal, %%%s is not", ["%s"]),
    ("{{name}} and {name}", ["{{name}}", "{name}"]),
    ("${var} vs $var", ["${var}", "$var"]),
    ("Save %1 as %1$s{0}", ["%1", "%1$s", "{0}"]),
    (r"%s\n\nLab: %s", ["%s", r"\n", r"\n", "%s"]),
    ("No placeholders here.", []),
])
def test_placeholders_in_order(sample, expected):
    assert text.placeholders(sample) == expected
    assert corpus_text.placeholders(sample) == sorted(expected)  # the corpus filter uses the same set (sorted)
    assert checks._placeholders(sample) == Counter(expected)       # and so does the mechanical policy


@pytest.mark.parametrize("sample, tags", [
    ("Click <b>Save</b>", ["b", "b"]),
    ("line<br/>break <br />", ["br", "br"]),
    ("<span color='red'>x</span>", ["span", "span"]),
    ("<a href=\"https://e.org\">e</a>", ["a", "a"]),
    ("if a < b and c > d", []),
    ("I <3 it", []),
])
def test_tag(sample, tags):
    assert [m.group(1) for m in text.TAG.finditer(sample)] == tags
    assert corpus_text.has_markup(sample) is bool(tags)


def test_entity_and_markdown_emphasis():
    assert text.ENTITY.findall("Tom &amp; Jerry &#8212; &nbsp;x & y") == ["&amp;", "&#8212;", "&nbsp;"]
    assert text.MD_EMPHASIS.findall("**bold**, __bold__, *it*, _it_") == ["**bold**", "__bold__", "*it*", "_it_"]
    assert text.MD_EMPHASIS.findall("2 * 3 * 4 and snake_case_name and a*b") == []


def test_normalisation():
    assert text.nfc("Cafe\u0301") == "Café"
    assert text.normalise_for_match("  Cafe\u0301\n\tcon  leche ") == "Café con leche"
