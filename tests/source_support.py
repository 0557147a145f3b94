"""Reading the project's source as data, for the tests that check rules in the code itself (tests/test_architecture.py,
tests/test_environment.py): which string constants of a module are docstrings."""

from __future__ import annotations

import ast


def docstring_ids(tree: ast.AST) -> set[int]:
    """``id()`` of every string constant in ``tree`` that is a docstring: the first statement of a module, class or
    function, and a bare string statement (an attribute docstring)."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                                          ast.Constant):
            ids.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # attribute docstrings
            ids.add(id(node.value))
    return ids
