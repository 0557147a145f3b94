"""Plugin methods (issue 18 part 3; spec §9.5–9.6): a tiny real distribution (tests/fixtures/mtboard-plugin-upper,
hand-written for this test) installed with pip registers the backend ``upper`` through the ``mtboard.backends``
entry-point group; it runs as a method with the built-ins' ``--backend-opt`` interface, its card records the
distribution, version and the SHA-256 over its installed files, validates, and the verification gate tells an
approved release from an unapproved one.

The package is installed with ``pip install --target`` into a temporary folder put on ``PYTHONPATH`` of the
``mtboard`` processes (a real wheel install: dist-info, RECORD, entry_points.txt), so the test venv stays unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtboard.core import canonical
from mtboard.core.documents import card_json, load_card, seal, write_card
from mtboard.core.schema import MethodClass, RunCard

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mtboard-plugin-upper"
MTBOARD = Path(sys.executable).with_name("mtboard")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("plugin")
    src = tmp / "src"
    shutil.copytree(FIXTURE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--target", str(site), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return site


def _mtboard(site: Path | None, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([str(MTBOARD), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def _files_sha256(site: Path) -> str:
    """Independent recomputation: every RECORD row except bytecode and the install-time files, [path, SHA-256]."""
    (info,) = site.glob("mtboard_plugin_upper-*.dist-info")
    rows = []
    with open(info / "RECORD", newline="", encoding="utf-8") as fh:
        for path, _, _ in csv.reader(fh):
            name = path.rsplit("/", 1)[-1]
            if path.endswith(".pyc") or name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
                continue
            rows.append([path, hashlib.sha256((site / path).read_bytes()).hexdigest()])
    return hashlib.sha256(canonical.canonical_bytes(sorted(rows))).hexdigest()


def test_plugin_runs_as_a_method_and_its_card_validates(installed, tmp_path):
    listing = _mtboard(installed, "backends")
    assert listing.returncode == 0, listing.stderr
    assert "upper  custom-plugin" in listing.stdout and "suffix" in listing.stdout
    card_path = tmp_path / "card.json"
    run = _mtboard(installed, "run", str(ROOT / "corpora" / "mtb-en-es-dev.json"), "--method", "upper:",
                   "--limit", "5", "--backend-opt", "suffix=!", "--work-dir", str(tmp_path / "w"),
                   "--out", str(card_path))
    assert run.returncode == 0, run.stderr
    card = load_card(card_path)
    assert card.method_class == MethodClass.custom_plugin
    p = card.method.plugin
    assert (p.distribution, p.version, p.entry_point) == ("mtboard-plugin-upper", "0.1.0",
                                                          "mtboard_plugin_upper:UpperBackend")
    assert p.files_sha256 == _files_sha256(installed)
    assert card.fingerprint.components["model_slug"] == "upper"
    first = card.results[0]
    assert first.raw_predicted == first.source.upper() + "!"  # the --backend-opt reached the plugin's Options
    # the card validates (mtboard submit runs every check) where the plugin is installed …
    root = tmp_path / "repo"
    (root / "submissions").mkdir(parents=True)
    ok = _mtboard(installed, "submit", str(card_path), "--root", str(root), "--corpora", str(ROOT / "corpora"),
                  "--dry-run")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "all 23 checks passed" in ok.stdout  # CARD_CHECKS (names: issue 32; submission: issue 39)
    # … and where it is not installed too: CI validates a submission without ever installing contributor code
    # (the backend's own checks are then skipped; its scores are still recomputed from the stored outputs)
    missing = _mtboard(None, "submit", str(card_path), "--root", str(root), "--corpora", str(ROOT / "corpora"),
                       "--dry-run")
    assert missing.returncode == 0, missing.stdout + missing.stderr

    # every field of method.plugin is bound where the plugin is installed: a re-sealed edit is refused
    for field, value in (("distribution", "mtboard-plugin-other"), ("version", "0.2.0"),
                         ("entry_point", "mtboard_plugin_upper:Other"), ("files_sha256", "2" * 64)):
        data = card_json(card)
        data["method"]["plugin"][field] = value
        data["run_card_hash"] = ""
        edited_card = seal(RunCard.model_validate_json(json.dumps(data)))
        edited_path = tmp_path / f"edited-{field}.json"
        write_card(edited_card, edited_path)
        res = _mtboard(installed, "submit", str(edited_path), "--root", str(root), "--corpora",
                       str(ROOT / "corpora"), "--dry-run")
        assert res.returncode == 1 and f"$.method.plugin.{field}" in res.stdout + res.stderr, field

    # the verification gate: unapproved until a maintainer pins this exact release
    approved = tmp_path / "approved.yaml"
    gate = _mtboard(installed, "plugin-gate", str(card_path), "--approved", str(approved), "--check-installed")
    assert gate.returncode == 0, gate.stderr
    assert gate.stdout.splitlines()[:3] == ["unapproved", "requirement mtboard-plugin-upper==0.1.0",
                                            "installed release matches the card"]
    entry = {"distribution": "mtboard-plugin-upper", "version": "0.1.0", "files_sha256": p.files_sha256,
             "approved_by": "a-maintainer", "approved": "2026-12-01"}
    approved.write_text(yaml.safe_dump({"approved": [entry]}), encoding="utf-8")
    assert _mtboard(None, "plugin-gate", str(card_path), "--approved", str(approved)).stdout.startswith("approved\n")
    approved.write_text(yaml.safe_dump({"approved": [dict(entry, files_sha256="0" * 64)]}), encoding="utf-8")
    assert _mtboard(None, "plugin-gate", str(card_path), "--approved", str(approved)).stdout.startswith("unapproved")
    # an installed release other than the recorded one is refused before anything of it runs
    edited = json.loads(card_path.read_text(encoding="utf-8"))
    edited["method"]["plugin"]["files_sha256"] = "1" * 64
    other = tmp_path / "other.json"
    other.write_text(json.dumps(edited), encoding="utf-8")
    assert _mtboard(installed, "plugin-gate", str(other), "--approved", str(approved),
                    "--check-installed").returncode == 1

    # the no-secrets job's check (verify.yml): the release pip installed with --target into its own folder, checked
    # against the card's files_sha256 with the folder searched last and no .pth file of it read — so a .pth that
    # would run code at start-up does not run, and changes the hash
    gate = _mtboard(None, "plugin-gate", str(card_path), "--approved", str(approved), "--check-installed",
                    "--plugin-dir", str(installed))
    assert gate.returncode == 0 and "installed release matches the card" in gate.stdout, gate.stderr
    tampered = tmp_path / "tampered"
    shutil.copytree(installed, tampered)
    marker = tmp_path / "pth-ran"
    (tampered / "zz-evil.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n",
                                          encoding="utf-8")
    (info,) = tampered.glob("mtboard_plugin_upper-*.dist-info")
    with open(info / "RECORD", "a", encoding="utf-8") as fh:
        fh.write("zz-evil.pth,,\n")
    gate = _mtboard(None, "plugin-gate", str(card_path), "--approved", str(approved), "--check-installed",
                    "--plugin-dir", str(tampered))
    assert gate.returncode == 1 and not marker.exists()
    assert "the installed provider of backend 'upper' is not the release the card records" in gate.stderr


def test_builtin_cards_have_no_plugin_record_and_pass_the_gate():
    committed = sorted(p for p in (ROOT / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))
    for p in committed:
        assert "plugin" not in json.loads(p.read_text(encoding="utf-8"))["method"], p.name
    gate = _mtboard(None, "plugin-gate", str(committed[0]), "--approved", str(ROOT / "plugins" / "approved.yaml"))
    assert gate.returncode == 0 and gate.stdout == "builtin\n"
    assert yaml.safe_load((ROOT / "plugins" / "approved.yaml").read_text(encoding="utf-8")) == {"approved": []}
