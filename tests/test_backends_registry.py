"""The backend registry (issue 19): built-ins and a third-party package register the same way — through the
``mtboard.backends`` entry-point group — and each backend's pydantic Options model drives validation, defaults and
help.

The plugin here is a hand-made test package (a module plus a ``.dist-info`` folder with ``entry_points.txt``, the
files pip writes for an installed distribution), put on ``PYTHONPATH`` of a real ``python -m mtboard`` process, so
discovery goes through :mod:`importlib.metadata` exactly as for an installed plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mtboard.backends.base import (BUILTIN_BACKENDS, ENTRY_POINT_GROUP, NoOptions, get_backend,
                                   load_backends, option_rows, register)
from mtboard.core.errors import ConfigError
from mtboard.core.schema import MethodClass

REPO = Path(__file__).resolve().parent.parent
ES = REPO / "corpora" / "mtb-en-es-dev.json"

PLUGIN = '''
from typing import ClassVar
from mtboard.backends import Backend, Options
from mtboard.core.schema import BackendFacts, MethodClass, TranslationRecord


class UpperOptions(Options):
    suffix: str = ""
    """Text appended to every output."""


class UpperBackend(Backend):
    name: ClassVar[str] = "upper"
    method_class: ClassVar[MethodClass] = MethodClass.custom_plugin
    Options = UpperOptions
    prompt_format = "raw"
    preferred_batch_size = 50

    def describe(self):
        return BackendFacts(api_provider="upper-plugin", model_id=self.method.model, engine_version="upper 1.0")

    async def translate(self, requests):
        return [TranslationRecord(entry_id=r.entry_id, raw_predicted=r.source.upper() + self.options.suffix,
                                  latency_s=0.0) for r in requests]


class NotABackend:
    name = "fake"
'''


@pytest.fixture()
def plugin_path(tmp_path):
    """A folder holding an 'installed' plugin distribution (module + dist-info with entry points)."""
    (tmp_path / "mtboard_plugin_upper.py").write_text(PLUGIN)
    info = tmp_path / "mtboard_plugin_upper-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mtboard-plugin-upper\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nupper = mtboard_plugin_upper:UpperBackend\n"
        "broken = mtboard_plugin_upper:DoesNotExist\nfake = mtboard_plugin_upper:NotABackend\n")
    # pip writes RECORD; the card's method.plugin hashes the files it lists (issue 18)
    (info / "RECORD").write_text("mtboard_plugin_upper.py,,\nmtboard_plugin_upper-1.0.dist-info/METADATA,,\n"
                                 "mtboard_plugin_upper-1.0.dist-info/entry_points.txt,,\n"
                                 "mtboard_plugin_upper-1.0.dist-info/RECORD,,\n")
    return tmp_path


def mtboard(args: list[str], plugin: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(REPO)]), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "mtboard", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_builtins_are_declared_as_entry_points_in_pyproject():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert declared == BUILTIN_BACKENDS
    registry = load_backends()
    assert {n: f"{c.__module__}:{c.__qualname__}" for n, c in registry.items() if n in declared} == declared


def test_builtin_classes_declare_what_the_runner_reads():
    reg = load_backends()
    rows = {name: (cls.method_class, cls.prompt_format, cls.default_concurrency, cls.preferred_batch_size,
                   cls.priced, cls.writes_raw, cls.model_optional) for name, cls in reg.items() if name in BUILTIN_BACKENDS}
    assert rows == {
        "openai": (MethodClass.raw_llm, None, 8, 1, True, True, False),
        "gguf": (MethodClass.raw_llm, None, 1, 1, False, True, False),
        # Apertium writes its own raw lines (they keep stdout's bytes, issue 33)
        "apertium": (MethodClass.pipeline, "raw", 2, 1000, False, True, False),
        "echo": (MethodClass.baseline, "raw", 1, 1000, False, False, True),
        "empty": (MethodClass.baseline, "raw", 1, 1000, False, False, True),
    }
    assert reg["gguf"].default_prompt == "few-shot-completion" and reg["openai"].default_prompt == "translate-chat"


def test_register_refuses_what_is_not_a_backend():
    class Loose:  # duck-typed: has a name and translate, but not the base class
        name = "loose"

        async def translate(self, requests):
            return []

    with pytest.raises(TypeError, match="is not a subclass of mtboard.backends.Backend"):
        register(Loose)  # type: ignore[arg-type]


def test_options_rows_come_from_the_model():
    assert option_rows(get_backend("echo")) == [] and get_backend("echo").Options is NoOptions
    rows = {r[0]: r for r in option_rows(get_backend("openai"))}
    assert rows["deadline_s"][1:3] == ("float or none", "None")
    assert rows["deadline_s"][3].startswith("Time a streaming answer may keep producing")
    assert {r[0]: r[1:3] for r in option_rows(get_backend("apertium"))} == {
        "apy_concurrency": ("int", "4"), "timeout_s": ("float", "60.0")}
    with pytest.raises(ConfigError, match="bad value for --backend-opt timeout_s: Input should be greater than 0"):
        get_backend("apertium").parse_options({"timeout_s": "0"})
    with pytest.raises(ConfigError, match="bad value for --backend-opt deadline_s: Input should be a finite number"):
        get_backend("openai").parse_options({"deadline_s": "inf"})


def test_unknown_backend_suggests_the_closest(monkeypatch):
    with pytest.raises(ConfigError, match=r"unknown backend 'apertum'; did you mean 'apertium'\? known backends: "):
        get_backend("apertum")


@pytest.mark.slow
def test_a_plugin_registers_runs_validates_and_is_listed(plugin_path, tmp_path):
    work = tmp_path / "work"
    res = mtboard(["run", ES, "--method", "upper:v1", "--limit", 3, "--work-dir", work,
                   "--backend-opt", "suffix=!"], plugin_path, tmp_path)
    assert res.returncode == 0, res.stderr
    card = json.loads((work / "card.json").read_text())
    assert card["method"]["backend"] == "upper" and card["method_class"] == "custom-plugin"
    assert card["method"]["api_provider"] == "upper-plugin" and card["method"]["engine_version"] == "upper 1.0"
    entries = json.loads(ES.read_text())["entries"][:3]
    assert [r["raw_predicted"] for r in card["results"]] == [e["source"].upper() + "!" for e in entries]
    assert json.loads((work / "run.json").read_text())["identity"]["backend_options"] == {"suffix": "!"}
    res = mtboard(["validate", work / "card.json", "--root", REPO], plugin_path, tmp_path)
    assert res.returncode == 0 and "validation passed: 1 file(s)" in res.stdout, res.stdout + res.stderr
    listing = mtboard(["backends"], plugin_path, tmp_path).stdout
    assert "upper  custom-plugin; raw source (no prompt)" in listing
    assert any(ln.split()[:3] == ["suffix", "str", "''"] and "Text appended to every output." in ln
               for ln in listing.splitlines())
    # a plugin whose entry point does not load is reported when used, and breaks nothing else
    res = mtboard(["run", ES, "--method", "broken:x", "--limit", 1], plugin_path, tmp_path)
    assert res.returncode == 1
    assert ("error: --method: backend 'broken' is registered but failed to load (mtboard-plugin-upper: AttributeError: module "
            "'mtboard_plugin_upper' has no attribute 'DoesNotExist')") in res.stderr
    res = mtboard(["run", ES, "--method", "fake:x", "--limit", 1], plugin_path, tmp_path)
    assert "mtboard_plugin_upper:NotABackend is not a mtboard Backend subclass named 'fake'" in res.stderr
    headers = [ln.split()[0] for ln in listing.splitlines() if ln.strip() and not ln.startswith(" ")]
    assert headers == ["apertium", "echo", "empty", "gguf", "openai", "upper"]  # the broken ones are left out
