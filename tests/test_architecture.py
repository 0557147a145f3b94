"""docs/ARCHITECTURE.md stays true: every module it names exists, every module of the package is named (directly or
through its package), and the rules at its end hold in the source (checked by reading the code, not by running it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "mtboard"
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _module_map() -> str:
    return DOC.split("## Module map", 1)[1].split("## Rules", 1)[0]


def _named_paths() -> set[str]:
    """Backticked names in the module map's first column, expanded (``metrics/chrf.py``, ``bleu.py`` after a
    ``metrics/…`` name in the same cell, packages as ``dir/``)."""
    names: set[str] = set()
    for line in _module_map().splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        prefix = ""
        for name in re.findall(r"`([^`]+)`", cell):
            if "/" in name and not name.endswith("/"):
                prefix = name.rsplit("/", 1)[0] + "/"
                names.add(name)
            elif name.endswith("/"):
                names.add(name)
            else:
                names.add(prefix + name if prefix else name)
    return names


def test_every_named_module_exists():
    for name in _named_paths():
        assert (PKG / name).exists(), f"docs/ARCHITECTURE.md names mtboard/{name}, which does not exist"


def test_every_module_is_named():
    named = _named_paths()
    packages = {n for n in named if n.endswith("/")}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if path.name in ("__init__.py", "__main__.py"):
            continue
        covered = rel in named or any(rel.startswith(p) for p in packages)
        assert covered, f"mtboard/{rel} is not in docs/ARCHITECTURE.md's module map"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_only_the_llm_package_imports_httpx():
    offenders = [p.relative_to(REPO).as_posix() for p in PKG.rglob("*.py")
                 if "llm" not in p.relative_to(PKG).parts and any(m.split(".")[0] in ("httpx", "httpcore", "h11")
                                                                   for m in _imports(p))]
    assert offenders == []


def test_sacrebleu_private_names_only_in_one_module():
    pattern = re.compile(r"\._(extract|compute|preprocess|[a-z]+_score)\w*\(")
    offenders = [p.relative_to(REPO).as_posix() for p in PKG.rglob("*.py")
                 if p.name != "_sacrebleu.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def _code_strings(path: Path) -> list[str]:
    """String literals of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                                          ast.Constant):
            docstrings.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # attribute docstrings
            docstrings.add(id(node.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def test_no_backend_names_in_runner_verify_prices():
    names = ("openai", "gguf", "apertium", "echo", "empty")
    for module in ("runner.py", "verify.py", "prices.py", "card.py", "runspec.py"):
        found = [s for s in _code_strings(PKG / module) if s in names or s.startswith(tuple(n + ":" for n in names))]
        assert found == [], f"{module} names backends {found}: use a Backend class attribute or hook"


def test_backends_do_not_import_downstream_modules():
    downstream = {"mtboard.runner", "mtboard.card", "mtboard.validate", "mtboard.verify", "mtboard.site",
                  "mtboard.judges", "mtboard.scoring"}
    for path in (PKG / "backends").glob("*.py"):
        bad = {m for m in _imports(path) if any(m == d or m.startswith(d + ".") for d in downstream)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_only_localserver_starts_long_running_processes_and_sandboxes_by_default():
    """docs/ARCHITECTURE.md rule (issue 21): model servers start in one place, sandboxed unless told otherwise."""
    starters = sorted(p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
                      if re.search(r"\bPopen\(", p.read_text(encoding="utf-8")))
    assert starters == ["localserver.py"]
    from mtboard.localserver import LocalServer

    assert LocalServer.__dataclass_fields__["sandbox"].default is True
