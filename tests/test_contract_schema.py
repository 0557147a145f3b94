"""Issue 2 acceptance: strict schemas, committed JSON Schemas, one-line errors for malformed corpora.

Inputs here are small hand-made toy corpora (not evaluation data).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
from datetime import date
from pathlib import Path

import pytest

from mtboard.core.documents import load_corpus
from mtboard.core.errors import InputError
from mtboard.core.schema import SCHEMAS

import cli_support

ROOT = Path(__file__).resolve().parents[1]

GOOD = {
    "dataset": {"id": "toy-en-es", "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
                "target_language": "es", "created": "2026-11-29", "license": "CC0-1.0", "provenance": ["corpus"]},
    "entries": [{"id": 1, "source": "Open the file.", "reference": "Abre el archivo.", "domain": "tech",
                 "difficulty": 2, "segment": "development"}],
}


def _write(tmp_path: Path, text: str | bytes, name: str = "c.json") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_command_matches_committed_copy(name):
    proc = cli_support.invoke(["schema", name])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    schema = json.loads(out)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    committed = (ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert out == committed, f"schemas/{name}.schema.json is stale: run `mtboard schema {name} > schemas/{name}.schema.json`"


def test_schema_is_valid_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for model in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(model.model_json_schema())


def _defined_names(module) -> set[str]:
    """Names a module defines at its top level (classes, functions, assignments), not those it imports."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_schema_package_re_exports_every_public_name_of_its_modules():
    """issue 30: ``mtboard.core.schema`` is one module per document; ``from mtboard.core.schema import X`` reaches every
    public name of every one of them (listed in ``__all__``, the same object), and nothing else is listed."""
    import mtboard.core.schema as package

    modules = [importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]
    assert {m.__name__.rsplit(".", 1)[1] for m in modules} >= {"common", "corpus", "card", "scores_card",
                                                                "verification", "review", "anchor", "sweep"}
    public: dict[str, object] = {}
    for module in modules:
        for name in _defined_names(module):
            if not name.startswith("_"):
                assert name not in public, f"{name} is defined twice in mtboard.core.schema"
                public[name] = getattr(module, name)
    assert set(package.__all__) == set(public) | {"SCHEMAS"}
    assert len(package.__all__) == len(set(package.__all__))
    for name, value in public.items():
        assert getattr(package, name) is value, name
    # private helpers that other modules import from the package
    from mtboard.core.schema import _check_bcp47, _check_iso_datetime, _date_text
    assert _check_bcp47("pt-BR") == "pt-BR" and _date_text(date(2026, 12, 1)) == "2026-12-01"
    with pytest.raises(ValueError, match="not an ISO 8601 timestamp"):
        _check_iso_datetime("yesterday")


def test_good_corpus_loads(tmp_path):
    corpus, sha = load_corpus(_write(tmp_path, json.dumps(GOOD)))
    assert corpus.entries[0].domain == "tech" and len(sha) == 64


def _bad(**patch):
    doc = json.loads(json.dumps(GOOD))
    for dotted, value in patch.items():
        node = doc
        keys = dotted.split(".")
        for k in keys[:-1]:
            node = node[int(k)] if k.isdigit() else node[k]
        node[keys[-1]] = value
    return json.dumps(doc)


CASES = [
    ("nan", _bad().replace('"difficulty": 2', '"difficulty": NaN'), "NaN"),
    ("infinity", _bad().replace('"difficulty": 2', '"difficulty": Infinity'), "Infinity"),
    ("1e400", _bad().replace('"difficulty": 2', '"difficulty": 1e400'), "infinity"),
    ("duplicate key", _bad().replace('"difficulty": 2', '"difficulty": 2, "difficulty": 3'), "duplicate key"),
    ("unknown field", _bad(**{"entries.0.colour": "red"}), "entries[0].colour"),
    ("wrong enum", _bad(**{"entries.0.segment": "secret"}), "entries[0].segment"),
    ("domain outside 16", _bad(**{"entries.0.domain": "sports"}), "entries[0].domain"),
    ("string for int", _bad(**{"entries.0.difficulty": "2"}), "entries[0].difficulty"),
    ("bool for int", _bad(**{"entries.0.difficulty": True}), "entries[0].difficulty"),
    ("lone surrogate", _bad().replace('"Open the file."', '"Open \\ud800 file."'), "surrogate"),
    ("deep nesting", _bad(**{"entries.0.notes": "x"}).replace('"x"', "[" * 200 + "]" * 200), "nesting"),
    ("huge integer", _bad().replace('"id": 1,', '"id": 123456789012345678901234567890,'), "integer"),
    ("bad language", _bad(**{"dataset.target_language": False}), "dataset.target_language"),
]


@pytest.mark.parametrize("label,text,needle", CASES, ids=[c[0] for c in CASES])
def test_malformed_corpus_one_line_error(tmp_path, label, text, needle):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    msg = str(info.value)
    assert str(path) in msg and needle in msg and "\n" not in msg


def test_oversize_file_refused_before_reading(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(200 * 1024 * 1024)  # sparse: never actually read
    with pytest.raises(InputError, match="over the"):
        load_corpus(big)


def test_symlink_refused(tmp_path):
    target = _write(tmp_path, json.dumps(GOOD), "real.json")
    link = tmp_path / "link.json"
    os.symlink(target, link)
    with pytest.raises(InputError, match="symbolic link"):
        load_corpus(link)


def test_yaml_norway_stays_a_string_or_fails(tmp_path):
    from pydantic import ValidationError

    from mtboard.core.safejson import load_yaml
    from mtboard.core.schema import DatasetInfo

    p = _write(tmp_path, "target_language: no\n", "c.yaml")
    data = load_yaml(p)
    assert data == {"target_language": False}  # YAML 1.1 hazard …
    with pytest.raises(ValidationError):  # … which the strict schema refuses instead of coercing
        DatasetInfo.model_validate({**GOOD["dataset"], **data})


@pytest.mark.parametrize("label,text,needle", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_cli_malformed_exit_1_no_traceback(tmp_path, label, text, needle):
    path = _write(tmp_path, text)
    proc = cli_support.invoke(["corpus", "check", str(path)])
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert str(path) in proc.stderr


def test_yaml_duplicate_keys_refused(tmp_path):
    from mtboard.core.safejson import load_yaml

    p = _write(tmp_path, "input: 0.15\noutput: 0.60\ninput: 99.0\n", "prices.yaml")
    with pytest.raises(InputError, match="duplicate key 'input'") as info:
        load_yaml(p)
    assert str(p) in str(info.value) and "\n" not in str(info.value)


def test_yaml_never_constructs_python_objects(tmp_path):
    from mtboard.core.safejson import load_yaml

    p = _write(tmp_path, "x: !!python/object/apply:os.system ['true']\n", "evil.yaml")
    with pytest.raises(InputError, match="not valid YAML"):
        load_yaml(p)


@pytest.mark.parametrize("label,text,path", [
    ("nan", _bad().replace('"difficulty": 2', '"difficulty": NaN'), "$.entries[0].difficulty"),
    ("1e400", _bad().replace('"difficulty": 2', '"difficulty": 1e400'), "$.entries[0].difficulty"),
    ("duplicate key", _bad().replace('"difficulty": 2', '"difficulty": 2, "difficulty": 3'),
     "$.entries[0].difficulty"),
    ("huge integer", _bad().replace('"id": 1,', '"id": 123456789012345678901234567890,'), "$.entries[0].id"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_strict_json_errors_name_the_field(tmp_path, label, text, path):
    p = _write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_corpus(p)
    assert f"{p}: {path}: " in str(info.value)


# YAML accepted as a safe loader accepts it (issue 24): anchors, aliases, merge keys; the same value as yaml.safe_load.
SAFE_YAML = [
    "a: &x {p: 1, q: 2}\nb:\n  <<: *x\n  q: 3\n",                         # merge, own key overrides
    "a: &x {p: 1}\nb: &y {q: 2}\nc:\n  <<: [*x, *y]\n  r: 3\n",            # merge of a list of mappings
    "a: &x {p: 1}\nb: &y {p: 2}\nc:\n  <<: [*x, *y]\n",                    # the first mapping of the list wins
    "base: &b {provider: openai, input: 1.5}\nm:\n  - <<: *b\n    model: x\n  - <<: *b\n    model: y\n    input: 2\n",
    "a: &l [1, 2]\nb: *l\nc: [*l, *l]\n",                                   # plain aliases
    "a: &x {p: {deep: 1}}\nb:\n  <<: *x\n",                                # nested value merged by reference
    "",                                                                      # empty document → None
]


@pytest.mark.parametrize("text", SAFE_YAML)
def test_yaml_reads_what_safe_load_reads(text):
    import yaml

    from mtboard.core.safejson import loads_yaml

    assert loads_yaml(text) == yaml.safe_load(text)


def test_yaml_merge_values_by_hand():
    from mtboard.core.safejson import loads_yaml

    assert loads_yaml(SAFE_YAML[0]) == {"a": {"p": 1, "q": 2}, "b": {"p": 1, "q": 3}}
    assert loads_yaml(SAFE_YAML[2])["c"] == {"p": 1}


@pytest.mark.parametrize("label,text,needle", [
    ("duplicate key beside a merge", "a: &x {p: 1}\nb:\n  <<: *x\n  q: 1\n  q: 2\n", "duplicate key 'q'"),
    ("two merge keys", "a: &x {p: 1}\nb:\n  <<: *x\n  <<: *x\n", "duplicate merge key <<"),
    ("recursive alias", "a: &x [1, *x]\n", "recursive alias at line 1"),
    ("alias expansion bomb", "a: &a [0,0,0,0,0,0,0,0,0,0]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcd", "bcde")), "more than 100000 nodes"),
    ("merge expansion bomb", "a: &a {k0: 0, k1: 1}\n" + "".join(
        f"{n}: &{n} {{<<: [{', '.join([f'*{p}'] * 10)}]}}\n" for p, n in zip("abcdef", "bcdefg")),
     "more than 100000 nodes"),
    ("unhashable key", "? [1, 2]\n: x\n", "unhashable mapping key"),
    ("python object", "x: !!python/object/apply:os.system ['true']\n", "could not determine a constructor"),
])
def test_yaml_refusals_are_one_line(tmp_path, label, text, needle):
    from mtboard.core.safejson import load_yaml

    p = _write(tmp_path, text, "x.yaml")
    with pytest.raises(InputError) as info:
        load_yaml(p)
    msg = str(info.value)
    assert needle in msg and str(p) in msg and "\n" not in msg and "<unicode string>" not in msg


def test_yaml_size_limit_applies_to_text_too():
    from mtboard.core.safejson import loads_yaml

    with pytest.raises(InputError, match="over the 100-byte limit"):
        loads_yaml("a: " + "x" * 200 + "\n", max_bytes=100)
