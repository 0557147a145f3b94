"""docs/ARCHITECTURE.md stays true: every module it names exists, every module of the package is named (directly or
through its package), the import graph of ``mtboard/`` has no cycle and no import runs upward against the written
import order, and the rules at its end hold in the source (checked by reading the code, not by running it).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from source_support import docstring_ids

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
    """Each module by its own name: a package row does not count for the files in it (a newcomer reads the map to
    find the one file that owns a behaviour)."""
    named = _named_paths()
    missing = sorted(rel for path in PKG.rglob("*.py") if path.name not in ("__init__.py", "__main__.py")
                     and (rel := path.relative_to(PKG).as_posix()) not in named)
    assert not missing, f"not in docs/ARCHITECTURE.md's module map (one row each): {missing}"


PATH = re.compile(r"(?:^|[\s`(\"'])/?((?:mtboard|scripts|schemas|\.github)/[\w/.-]*[\w/])", re.M)


def test_every_repository_path_the_docs_name_exists():
    """A path under mtboard/, scripts/, schemas/ or .github/ named in the README, docs/*.md, CODEOWNERS or a workflow
    exists (a move that forgets a document fails here: CODEOWNERS named `/mtboard/verify.py` after the house move)."""
    files = [REPO / "README.md", REPO / ".github" / "CODEOWNERS", *sorted((REPO / "docs").glob("*.md")),
             *sorted((REPO / ".github" / "workflows").glob("*.yml"))]
    stale = [f"{f.relative_to(REPO)}: {m}" for f in files for m in PATH.findall(f.read_text(encoding="utf-8"))
             if "*" not in m and not (REPO / m.rstrip("/")).exists() and not m.startswith("mtboard/mtboard")]
    assert not stale, stale


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
    docstrings = docstring_ids(tree)
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def test_no_backend_names_in_runner_verify_prices():
    names = ("openai", "gguf", "apertium", "echo", "empty")
    for module in ("run/runner.py", "verify/rerun.py", "inputs/prices.py", "score/card.py", "inputs/runspec.py"):
        found = [s for s in _code_strings(PKG / module) if s in names or s.startswith(tuple(n + ":" for n in names))]
        assert found == [], f"{module} names backends {found}: use a Backend class attribute or hook"


def test_backends_do_not_import_downstream_modules():
    downstream = {"mtboard.run.runner", "mtboard.score.card", "mtboard.validate", "mtboard.verify.rerun", "mtboard.site",
                  "mtboard.judges", "mtboard.score.scoring"}
    for path in (PKG / "backends").glob("*.py"):
        bad = {m for m in _imports(path) if any(m == d or m.startswith(d + ".") for d in downstream)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_only_localserver_starts_long_running_processes_and_sandboxes_by_default():
    """docs/ARCHITECTURE.md rule (issue 21): model servers start in one place, sandboxed unless told otherwise."""
    starters = sorted(p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
                      if re.search(r"\bPopen\(", p.read_text(encoding="utf-8")))
    assert starters == ["backends/local/server.py"]
    from mtboard.backends.local.server import LocalServer

    assert LocalServer.__dataclass_fields__["sandbox"].default is True


# ---------------------------------------------------------------------------------------------------------------------
# The import graph (issue 30): no cycle, nothing upward against docs/ARCHITECTURE.md's "Import order"


def _module_names() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (a package is its ``__init__``)."""
    out: dict[str, Path] = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _module_names()


def _known(name: str) -> str | None:
    """The longest module of the package that ``name`` names or lies inside (``mtboard.core.schema.RunCard`` →
    ``mtboard.core.schema``); None outside the package."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, path: Path) -> set[str]:
    """Every module of the package that ``module`` imports, anywhere in its file (function-level and
    ``TYPE_CHECKING`` imports included). ``from P import n`` imports the module ``P.n`` when there is one, else ``P``
    itself (so a package's submodules, not its ``__init__``, are what ``from mtboard.site import build`` reaches)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {t for a in node.names if (t := _known(a.name))}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                t = f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else _known(base)
                if t:
                    out.add(t)
    out.discard(module)
    return out


@functools.cache
def graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (built on first use, not at collection: ~0.8 CPU-s a worker)."""
    return {m: _targets(m, p) for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _order() -> dict[str, int]:
    """docs/ARCHITECTURE.md's "Import order": the folders (``core``, ``backends/local`` …) each numbered item names
    before its dash → its position; ``mtboard/__init__.py`` and ``mtboard/__main__.py`` take the position of the item
    that names them."""
    section = DOC.split("## Import order", 1)[1].split("\n## ", 1)[0]
    ranks: dict[str, int] = {}
    for line in section.splitlines():
        m = re.match(r"(\d+)\. (.*)", line)
        if not m:
            continue
        rank = int(m.group(1))
        for name in re.findall(r"`([^`]+)`", m.group(2).split(" — ", 1)[0]):
            if name.endswith("/") and (PKG / name).is_dir():
                ranks[name.rstrip("/")] = rank
            elif name in ("mtboard/__init__.py", "mtboard/__main__.py"):
                ranks[name] = rank
    return ranks


ORDER = _order()


def _rank(module: str) -> int:
    """The position of ``module``'s stage: the deepest listed folder containing it."""
    path = MODULES[module].relative_to(REPO).as_posix()
    if path in ORDER:
        return ORDER[path]
    rel = MODULES[module].relative_to(PKG).parent.as_posix()
    while rel not in ORDER:
        assert rel not in ("", "."), f"{path} lies in no folder of docs/ARCHITECTURE.md's import order"
        rel = rel.rpartition("/")[0]
    return ORDER[rel]


def test_the_import_order_names_every_folder_of_the_package():
    folders = {p.relative_to(PKG).parts[0] for p in PKG.rglob("*.py") if len(p.relative_to(PKG).parts) > 1}
    assert folders - {"__pycache__"} <= set(ORDER), sorted(folders - set(ORDER))
    assert {"mtboard/__init__.py", "mtboard/__main__.py"} <= set(ORDER)
    assert ORDER["backends/local"] == ORDER["backends"]


def test_the_import_graph_has_no_cycle():
    assert _cycles(graph()) == []


def test_no_import_runs_upward_against_the_written_order():
    upward = sorted(f"{m} ({_rank(m)}) imports {t} ({_rank(t)})" for m, ts in graph().items() for t in ts
                    if _rank(t) > _rank(m))
    assert upward == []


def test_the_graph_checks_catch_what_they_are_for():
    """The checks above would fail on a circle and on a climb (a check that cannot fail guards nothing)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _rank("mtboard.core.errors") < _rank("mtboard.inputs.runspec") < _rank("mtboard.score.card") \
        < _rank("mtboard.backends.local.server") < _rank("mtboard.validate.pipeline") < _rank("mtboard.run.runner") \
        < _rank("mtboard.site.build") < _rank("mtboard.cli.main")
    assert _rank("mtboard") == _rank("mtboard.core.errors") and _rank("mtboard.__main__") == _rank("mtboard.cli.app")
    # real edges the graph must see: a function-level import (the run command) and a from-package submodule import
    assert "mtboard.run.runner" in graph()["mtboard.cli.run"]
    assert "mtboard.site.build" in graph()["mtboard.site"]


MAX_FUNCTION_LINES = 80
"""Issue 30: the longest function body (lines after the docstring, nested functions included) without a reason."""


def _long_functions() -> list[tuple[str, int]]:
    """Every function of the package whose body runs over :data:`MAX_FUNCTION_LINES` lines and whose docstring has no
    ``Long:`` line: (``path:name``, body lines)."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node) or ""
            first = node.body[0]
            has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                first.value.value, str)
            start = first.end_lineno + 1 if has_doc and len(node.body) > 1 else first.lineno
            lines = node.end_lineno - start + 1
            if lines > MAX_FUNCTION_LINES and not any(x.strip().startswith("Long:") for x in doc.splitlines()):
                found.append((f"{path.relative_to(REPO).as_posix()}:{node.name}", lines))
    return found


def test_no_function_body_over_80_lines_without_a_reason():
    assert _long_functions() == []


def test_the_function_length_rule_counts_the_body_after_the_docstring(tmp_path, monkeypatch):
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    (tmp_path / "m.py").write_text(f'def long():\n    """Doc."""\n{body}\n\n\ndef short():\n    """Doc.\n\n'
                                   f'    Long: a reason.\n    """\n{body}\n\n\ndef fits():\n    """Doc."""\n'
                                   + "\n".join(f"    y{i} = {i}" for i in range(80)) + "\n")
    monkeypatch.setattr(f"{__name__}.PKG", tmp_path)
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    assert _long_functions() == [("m.py:long", 81)]
