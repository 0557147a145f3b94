"""Issue 19 part 5: the prompts ship in the wheel, from the repository's single ``prompts/`` folder.

* The package list in pyproject.toml names every folder under ``mtboard/`` and ``prompts/`` (a subpackage missing
  from it would silently be left out of the wheel).
* In this (editable) install the templates are the checkout's own ``prompts/`` files, found through
  ``importlib.resources``, not a copy.
* The slow test builds the wheel with ``python -m build`` (sdist, then the wheel from the sdist), installs it with its
  dependencies into a fresh venv outside the checkout, and from a folder outside the checkout runs ``mtboard run``
  with the ``translate-chat`` prompt against a loopback OpenAI-compatible server (tests/fake_openai_server.py, in this
  process; the installed ``mtboard`` is a separate process), ``mtboard verify`` on that card (the recorded prompt must
  be found in the installed package: issue 22's "recorded prompt … is not available here … available: none"), and
  ``mtboard validate`` on a committed card copied out with its corpus.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tomllib
import zipfile
from importlib import resources
from pathlib import Path

import pytest
import yaml

from mtboard.core.errors import ConfigError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.judges.base import judges_prompts_dir, load_judge_prompt
from mtboard.inputs.prices import load_prices
from mtboard.inputs.prompts import PROMPTS_PACKAGE, available_prompts, load_prompt, prompts_dir

import install_support as inst
from fake_openai_server import FakeServer, answer_for

ROOT = inst.ROOT
PROMPTS = ROOT / "prompts"
COMMITTED_CARD = next((ROOT / "submissions" / "mtb-en-es-dev").glob(
    "gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))  # the file name follows the seal (re-scored cards get new ones)
CORPUS = ROOT / "corpora" / "mtb-en-es-dev.json"


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _folders(top: Path, package: str) -> set[str]:
    out = {package}
    for d in top.rglob("*"):
        if d.is_dir() and "__pycache__" not in d.parts:
            out.add(".".join([package, *d.relative_to(top).parts]))
    return out


def test_package_list_names_every_folder():
    cfg = _setuptools()
    assert cfg["package-dir"] == {PROMPTS_PACKAGE: "prompts"}
    expected = _folders(ROOT / "mtboard", "mtboard") | _folders(PROMPTS, PROMPTS_PACKAGE)
    listed = set(cfg["packages"])
    assert listed == expected, (f"add to [tool.setuptools] packages in pyproject.toml: {sorted(expected - listed)}; "
                                f"remove: {sorted(listed - expected)}")


def test_prompts_come_from_the_repository_folder_through_importlib_resources(monkeypatch, tmp_path):
    monkeypatch.setenv("MTBOARD_PROMPTS_DIR", str(tmp_path))  # ignored: only the CLI reads the environment
    assert resources.files(PROMPTS_PACKAGE) == PROMPTS  # the checkout's folder itself (editable install), no copy
    assert prompts_dir() == PROMPTS and judges_prompts_dir() == PROMPTS / "judges"
    assert available_prompts() == sorted(p.stem for p in PROMPTS.glob("*.j2"))
    p = load_prompt("translate-chat")
    assert p.path == PROMPTS / "translate-chat.j2"
    assert p.template_sha256 == hashlib.sha256((PROMPTS / "translate-chat.j2").read_bytes()).hexdigest()
    assert load_judge_prompt("gemba-mqm").path == PROMPTS / "judges" / "gemba-mqm.j2"
    assert load_prices().as_of == yaml.safe_load((PROMPTS / "prices.yaml").read_text(encoding="utf-8"))["as_of"]


def test_prompts_dir_override_replaces_the_shipped_folder(tmp_path):
    (tmp_path / "mine.j2").write_bytes((PROMPTS / "translate-chat.j2").read_bytes())
    with use_runtime(Runtime(prompts_dir=tmp_path)):  # what the CLI sets from MTBOARD_PROMPTS_DIR
        assert prompts_dir() == tmp_path and available_prompts() == ["mine"]
        assert load_prompt("mine").template_sha256 == load_prompt(str(PROMPTS / "translate-chat.j2")).template_sha256
        with pytest.raises(ConfigError, match="judge prompt file not found.*MTBOARD_PROMPTS_DIR"):
            load_judge_prompt("gemba-mqm")


# --------------------------------------------------------------------------------------------------------------------
# the wheel, installed outside the checkout


def _mtboard(bin_dir: Path, args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "mtboard"), *args], cwd=cwd, env=inst.clean_env([bin_dir], **env),
                          capture_output=True, text=True, timeout=600)


# ``wheel``: the built wheel, a session fixture of tests/conftest.py (shared by the workers, read-only).


@pytest.mark.slow
def test_wheel_holds_every_prompts_file_byte_for_byte(wheel):
    files = sorted(p for p in PROMPTS.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert len(files) >= 10  # 5 templates, 3 judge prompts, prices.yaml, __init__.py
    with zipfile.ZipFile(wheel) as zf:
        for p in files:
            assert zf.read(f"mtboard/_prompts/{p.relative_to(PROMPTS).as_posix()}") == p.read_bytes(), p
        names = set(zf.namelist())
    site = {f"mtboard/site/templates/{p.name}" for p in (ROOT / "mtboard" / "site" / "templates").glob("*.j2")}
    assert site and site <= names


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_runs_verifies_and_validates_outside_the_checkout(tmp_path, wheel):
    bin_dir = inst.fresh_venv(tmp_path / "venv", str(wheel))
    user = tmp_path / "user"  # the working directory: nothing of the checkout in it
    (user / "corpora").mkdir(parents=True)
    shutil.copyfile(CORPUS, user / "corpora" / CORPUS.name)

    # the installed package, not the checkout, and its package data
    probe = ("import json, mtboard\nfrom mtboard.inputs.prompts import prompts_dir, available_prompts\n"
             "from mtboard.judges.base import load_judge_prompt\nfrom mtboard.inputs.prices import load_prices\n"
             "print(json.dumps({'pkg': mtboard.__file__, 'dir': str(prompts_dir()), 'prompts': available_prompts(),"
             " 'judges': sorted(load_judge_prompt(n).name for n in ('checkpoints', 'gemba-mqm', 'rubric')),"
             " 'as_of': load_prices().as_of}))")
    proc = subprocess.run([str(bin_dir / "python"), "-c", probe], cwd=user, env=inst.clean_env([bin_dir]),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    site_packages = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    assert Path(got["pkg"]).is_relative_to(site_packages)
    assert Path(got["dir"]) == site_packages / "mtboard" / "_prompts"
    assert got["prompts"] == sorted(p.stem for p in PROMPTS.glob("*.j2"))
    assert got["judges"] == ["checkpoints", "gemba-mqm", "rubric"]
    assert got["as_of"] == yaml.safe_load((PROMPTS / "prices.yaml").read_text(encoding="utf-8"))["as_of"]

    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    sources = {e["id"]: e["source"] for e in corpus["entries"]}
    with FakeServer() as srv:
        run = _mtboard(bin_dir, ["run", f"corpora/{CORPUS.name}", "--method", "openai:fake-model", "--prompt",
                                 "translate-chat", "--limit", "3", "--base-url", srv.base_url, "--work-dir", "w"],
                       user)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        card = json.loads((user / "w" / "card.json").read_text(encoding="utf-8"))
        m = card["method"]
        assert m["prompt_name"] == "translate-chat" and m["prompt_format"] == "chat"
        assert m["prompt_template_sha256"] == hashlib.sha256((PROMPTS / "translate-chat.j2").read_bytes()).hexdigest()
        assert card["system_prompt_used"].startswith("You are a professional translator. Translate the user's "
                                                     "message from English into Spanish.")
        assert len(card["results"]) == 3 and len(srv.requests) == 3
        for r in card["results"]:
            assert r["raw_predicted"] == answer_for(sources[r["entry_id"]])  # "ES " + source: the server's rule
        for req in srv.requests:
            assert req["path"] == "/v1/chat/completions"
            assert req["body"]["messages"][0] == {"role": "system", "content": card["system_prompt_used"]}

        # the maintainer's re-run with the installed package finds the recorded prompt (issue 22)
        ver = _mtboard(bin_dir, ["verify", "w/card.json", "--corpora", "corpora", "--out", "out"], user,
                       OPENAI_BASE_URL=srv.base_url)
        assert ver.returncode == 0, ver.stdout[-2000:] + ver.stderr[-2000:]
        assert "verification passed within ±2%" in ver.stdout and len(srv.requests) == 6

    val = _mtboard(bin_dir, ["validate", "w/card.json", "--corpora", "corpora"], user)
    assert val.returncode == 0 and "validation passed: 1 file(s)" in val.stdout, val.stdout + val.stderr

    # a committed card (a prompted LLM card), copied out of the repository with its corpus
    dest = user / "submissions" / "mtb-en-es-dev" / COMMITTED_CARD.name
    dest.parent.mkdir(parents=True)
    shutil.copyfile(COMMITTED_CARD, dest)
    val = _mtboard(bin_dir, ["validate"], user)
    assert val.returncode == 0, val.stdout + val.stderr
    assert f"ok   submissions/mtb-en-es-dev/{COMMITTED_CARD.name}" in val.stdout
    assert re.search(r"validation passed: 1 file\(s\)", val.stdout)
