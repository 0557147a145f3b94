"""docs/SECURITY.md stays true (issue 21): every test it names as proof of a mitigation exists — a file
``tests/NAME.py``, and each ``test_…`` function named after it in the same table row or paragraph."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "SECURITY.md").read_text(encoding="utf-8")


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def named_tests(text: str) -> list[tuple[str, str | None]]:
    """``(file, function or None)`` for every ``tests/FILE.py[::function]`` and every bare ``test_…`` name, which
    belongs to the last file named before it in the same line (a table row or a paragraph line)."""
    out: list[tuple[str, str | None]] = []
    for line in text.splitlines():
        current = None
        for m in re.finditer(r"tests/(\w+\.py)(?:::(\w+))?|`(test_\w+)`", line):
            if m.group(1):
                current = m.group(1)
                out.append((current, m.group(2)))
            elif current is not None:
                out.append((current, m.group(3)))
    return out


def test_named_tests_parser():
    line = "| x | `tests/test_a.py::test_one`, `test_two` (and `tests/test_b.py`) |"
    assert named_tests(line) == [("test_a.py", "test_one"), ("test_a.py", "test_two"), ("test_b.py", None)]


def test_every_test_the_threat_model_names_exists():
    named = named_tests(DOC)
    assert len(named) >= 40
    for file, func in named:
        path = ROOT / "tests" / file
        assert path.is_file(), f"docs/SECURITY.md names tests/{file}, which does not exist"
        if func is not None:
            assert func in _functions(path), f"docs/SECURITY.md names tests/{file}::{func}, which does not exist"
