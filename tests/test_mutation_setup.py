"""Issue 23: the mutation-testing habit stays wired up — scripts/mutation.py's module table names files and covering
tests that exist, its score arithmetic, the equivalent-mutant list in docs/TESTING.md names functions that exist, and
every module of the table has its measured score in docs/TESTING.md. (The mutation runs themselves take minutes per
module and are run by hand: docs/TESTING.md.)"""

from __future__ import annotations

import importlib
import importlib.util
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("mutation_script", REPO / "scripts" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_module_table_names_existing_files_and_tests():
    m = _script()
    assert sorted(m.MODULES) == ["checks", "judging", "ledger", "ledger-diff", "ledger-document", "ledger-load",
                                 "ledger-methods", "ledger-tables", "metrics", "names", "official", "scores", "scoring",
                                 "stats", "validate"]
    for name, (files, tests) in m.MODULES.items():
        assert files and all((REPO / f).is_file() and f.startswith("mtboard/") for f in files), name
        paths = [t for t in tests if t.startswith("tests/")]
        assert paths and all((REPO / t.split("::")[0]).is_file() for t in paths), name


def test_score_counts_timeouts_as_detected_and_drops_equivalents():
    m = _script()
    statuses = {"a": "killed", "b": "killed", "c": "timeout", "d": "survived", "e": "no tests", "f": "survived",
                "g": "suspicious"}
    s = m.score(statuses, {"f"})
    assert (s["killed"], s["timeout"], s["survived"], s["no tests"], s["other"], s["equivalent"]) == (2, 1, 1, 1, 1, 1)
    partial = m.score({"a": "killed", "b": "not checked", "c": "survived"}, set())
    assert (partial["not checked"], partial["non_equivalent"], partial["score"]) == (1, 2, 0.5)
    assert (s["total"], s["non_equivalent"]) == (7, 6)
    assert s["score"] == 3 / 6
    assert m.score({}, set())["score"] == 1.0


def test_equivalents_are_read_from_list_lines_only(tmp_path):
    m = _script()
    doc = tmp_path / "T.md"
    doc.write_text("- `mtboard.score.stats.x_holm__mutmut_3`: reason\n* `mtboard.score.checks.x_words__mutmut_12`: other\n"
                   "see `mtboard.score.stats.x_holm__mutmut_4` in prose\n- `not.a.mutant`: x\n", encoding="utf-8")
    assert m.equivalents(doc) == {"mtboard.score.stats.x_holm__mutmut_3", "mtboard.score.checks.x_words__mutmut_12"}
    assert m.equivalents(tmp_path / "missing.md") == set()


def test_listed_equivalents_name_functions_of_the_mutated_modules():
    # mutmut 3 names a mutant <module>.x_<function>__mutmut_<n> or <module>.xǁ<Class>ǁ<method>__mutmut_<n>
    m = _script()
    mutated = {f[:-3].replace("/", ".") for files, _ in m.MODULES.values() for f in files}
    for name in sorted(m.equivalents()):
        match = re.fullmatch(r"(mtboard(?:\.\w+)*)\.x(?:_(\w+?)|ǁ(\w+)ǁ(\w+))__mutmut_\d+", name)
        assert match, name
        module, func, cls, method = match.groups()
        assert module in mutated, name
        obj = importlib.import_module(module)
        assert (hasattr(obj, func) if func else hasattr(getattr(obj, cls, None), method)), name


def test_testing_doc_states_every_module_score_and_the_rule():
    m = _script()
    doc = (REPO / "docs" / "TESTING.md").read_text(encoding="utf-8")
    for name in m.MODULES:
        assert re.search(rf"^\| `{name}` \|.*\| \d+(\.\d)? %[^|]*\|", doc, re.M), name
    assert "python scripts/mutation.py" in doc
    assert "adds its module" in doc


def test_mutmut_is_a_dev_dependency_and_its_folder_is_ignored():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(d.startswith("mutmut") for d in project["project"]["optional-dependencies"]["dev"])
    assert project["tool"]["mutmut"]["source_paths"] == ["mtboard/"]
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "mutants/" in ignored and "mutants-results/" in ignored
