"""Difficulty, register, context and diagnostic rules (mtboard.inputs.corpora.labels).

Hand-made strings; expected levels computed by hand from the documented rule (words → level, +1 at ≥ 3 clauses).
"""

from __future__ import annotations

import pytest

from mtboard.inputs.corpora import labels as L
from mtboard.core.schema import Context, Domain, Register


@pytest.mark.parametrize("text,lang,clauses", [
    ("Save", "en", 1),
    ("If the disk is full, the file, which is large, is not saved.", "en", 6),  # 3 commas + if + which
    ("Si el disco está lleno, no se guarda.", "es", 2),  # comma only: no subordinator list for es
    ("ディスクが一杯で、保存できません。", "ja", 2),
    ("Name — the full name; age: years", "en", 4),
])
def test_clause_count(text, lang, clauses):
    assert L.clause_count(text, lang) == clauses


@pytest.mark.parametrize("text,lang,level", [
    ("Save", "en", 1),  # 1 word
    ("Save the file now", "en", 2),  # 4 words
    ("The file could not be saved.", "en", 2),  # 6 words, 1 clause
    ("The file could not be saved because the disk is full.", "en", 3),  # 11 words, 2 clauses
    ("If the disk is full, the file, which is large, is not saved.", "en", 4),  # 13 words → 3, 6 clauses → +1
    (" ".join(["word"] * 20), "en", 4),
    (" ".join(["word"] * 26), "en", 5),
    (", ".join(["word"] * 26), "en", 5),  # capped at 5
    ("Yes, no, maybe", "en", 2),  # 3 words → 1, 3 clauses → +1
    ("これはペンです。", "ja", 1),  # 3 words
])
def test_difficulty(text, lang, level):
    assert L.difficulty(text, lang) == level


@pytest.mark.parametrize("text,context", [
    ("Invalid date.", Context.error),
    ("Could not connect to the server", Context.error),
    ("This field is required.", Context.error),
    ("Delete the selected items?", Context.question),
    ("Enter a valid email address", Context.instruction),
    ("Please log in again.", Context.instruction),
    ("Last name", Context.label),
    ("The item was added successfully.", None),
])
def test_ui_context(text, context):
    assert L.ui_context(text) == context


def test_assign_context_by_domain():
    assert L.assign_context(Domain.legal, "Everyone has the right to life.") == Context.declaration
    assert L.assign_context(Domain.news, "Debian 3.0 was released.") == Context.narrative
    assert L.assign_context(Domain.gov, "Republic of Chile") == Context.label
    assert L.assign_context(Domain.gov, "Chile is a long country in South America.") == Context.narrative
    assert L.assign_context(Domain.tech, "Package management", "h2") == Context.label
    assert L.assign_context(Domain.tech, "Install the package.", "p") == Context.instruction
    assert L.assign_context(Domain.tech, "The package is installed.", "p") is None
    assert L.assign_context(Domain.tech, "Invalid value", "p") is None  # error rule is for UI catalogs only
    assert L.assign_context(Domain.literary, "Welcome, friend!") == Context.greeting
    assert L.assign_context(Domain.literary, "Where is the king?") == Context.question
    assert L.assign_context(Domain.literary, "We march at dawn.") is None
    assert L.assign_context(Domain.medical, "Cannot save the allergy") == Context.error
    assert L.assign_context(None, "anything") is None


def test_domain_register():
    assert L.DOMAIN_REGISTER[Domain.ui] == Register.technical
    assert L.DOMAIN_REGISTER[Domain.legal] == Register.formal
    assert L.DOMAIN_REGISTER[Domain.literary] is None


@pytest.mark.parametrize("text,diag", [
    ("Hello %(name)s", True),
    ("$unit.name| attacks!", True),
    ("Deleted {0} files", True),
    ("Nothing here", False),
    ("100%% sure", False),
])
def test_is_diagnostic(text, diag):
    assert L.is_diagnostic(text) == diag
