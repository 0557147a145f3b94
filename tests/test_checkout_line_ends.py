"""Checkouts that rewrite bytes (issue 24): files whose bytes are hashed are immune to end-of-line conversion, and a
hash mismatch that is exactly CRLF conversion gets an error that says so and how to repair the checkout.

The clone test uses the real ``git`` with ``core.autocrlf=true`` (the default of many Windows installs; on Linux it
converts the same way) on this repository's committed state, then the real validator on every committed card.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

import cli_support
from mtboard.core.canonical import CHECKOUT_FIX, line_end_mismatch, sha256_hex
from mtboard.core.documents import load_card
from mtboard.core.runtime import Runtime, use_runtime

REPO = Path(__file__).resolve().parents[1]
HASHED = ("corpora", "submissions", "prompts", "coaching", "schemas", "tests/fixtures")
"""Folders .gitattributes marks -text (their bytes are hashed or compared byte for byte)."""


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=300, check=True)


@pytest.fixture(scope="module")
def crlf_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO,
                                                     capture_output=True).returncode != 0:
        pytest.skip("needs git and a git checkout of mtboard")
    dest = tmp_path_factory.mktemp("crlf") / "clone"
    _git("-c", "core.autocrlf=true", "clone", "-q", "--no-hardlinks", str(REPO), str(dest), cwd=REPO.parent)
    _git("config", "core.autocrlf", "true", cwd=dest)  # the clone keeps converting, as a Windows install would
    return dest


def test_autocrlf_clone_keeps_hashed_files_byte_for_byte(crlf_clone: Path) -> None:
    # The conversion really happened (a file outside the hashed folders got CRLF line ends) …
    committed_readme = _git("show", "HEAD:README.md", cwd=crlf_clone).stdout
    assert b"\r\n" not in committed_readme and b"\r\n" in (crlf_clone / "README.md").read_bytes()
    # … and no hashed file was touched.
    listed = _git("ls-files", "-z", "--", *HASHED, cwd=crlf_clone).stdout.decode().split("\0")
    files = [f for f in listed if f]
    assert len(files) > 40
    changed = [f for f in files if (crlf_clone / f).read_bytes() != _git("show", f"HEAD:{f}", cwd=crlf_clone).stdout]
    assert changed == []


@pytest.mark.slow  # a whole-system test: 26 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_autocrlf_clone_validates_every_committed_card(crlf_clone: Path) -> None:
    cards = sorted(p for p in (crlf_clone / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))
    assert len(cards) >= 20
    p = cli_support.invoke(["validate", "submissions"], cwd=crlf_clone, env={
        "MTBOARD_PROMPTS_DIR": str(crlf_clone / "prompts")})
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    assert f"validation passed: {len(cards)} file(s)" in p.stdout


def test_autocrlf_clone_runs_every_script(crlf_clone: Path) -> None:
    # Files that are executed keep LF line ends (.gitattributes "text eol=lf"): bash would read "set -o pipefail\r"
    # as an invalid option, and a shebang ending in \r names no interpreter.
    listed = [f for f in _git("ls-files", "-z", cwd=crlf_clone).stdout.decode().split("\0") if f]
    executed = [f for f in listed if f.endswith((".sh", ".py")) or (crlf_clone / f).read_bytes()[:2] == b"#!"]
    shells = [f for f in executed
              if f.endswith(".sh") or (crlf_clone / f).read_bytes().startswith(b"#!/usr/bin/env bash")]
    assert {"scripts/demo.sh", "scripts/setup.sh", "scripts/test.sh", ".ci/run"} <= set(shells)
    assert "corpora/build.py" in executed and "bench/harness_throughput.py" in executed
    assert [f for f in executed if b"\r\n" in (crlf_clone / f).read_bytes()] == []
    for f in shells:
        p = subprocess.run(["bash", "-n", f], cwd=crlf_clone, capture_output=True, text=True, timeout=60)
        assert (f, p.returncode, p.stderr) == (f, 0, "")


def test_line_end_mismatch_both_ways() -> None:
    lf = b'{\n  "a": 1\n}\n'
    crlf = lf.replace(b"\n", b"\r\n")
    # this checkout rewrote the file (CRLF here, the hash is of the LF bytes)
    why = line_end_mismatch(crlf, sha256_hex(lf), "corpora/x.json")
    assert why == ("corpora/x.json has CRLF line ends and matches the recorded SHA-256 only with LF line ends: this "
                   "checkout rewrote its line ends (git core.autocrlf=true)")
    # the hash was taken in a checkout that rewrote it (LF here, the hash is of the CRLF bytes)
    assert "computed in a checkout that rewrote line ends" in line_end_mismatch(lf, sha256_hex(crlf), "x")
    assert line_end_mismatch(lf, sha256_hex(lf + b" "), "x") is None  # any other difference: not line ends
    assert line_end_mismatch(crlf, sha256_hex(crlf.replace(b"1", b"2")), "x") is None
    assert "git config core.autocrlf false" in CHECKOUT_FIX


def _tree_with_one_card(tmp_path: Path, corpus_bytes: Callable[[bytes], bytes]) -> Path:
    card_path = next(p for p in sorted((REPO / "submissions" / "mtb-en-es-dev").glob("baseline-echo__*.json")))
    card = load_card(card_path)
    (tmp_path / "submissions" / "mtb-en-es-dev").mkdir(parents=True)
    (tmp_path / "corpora").mkdir()
    shutil.copy(card_path, tmp_path / "submissions" / "mtb-en-es-dev" / card_path.name)
    src = REPO / "corpora" / "mtb-en-es-dev.json"
    assert sha256_hex(src.read_bytes()) == card.dataset.sha256
    (tmp_path / "corpora" / src.name).write_bytes(corpus_bytes(src.read_bytes()))
    return tmp_path


def test_a_crlf_corpus_gets_an_error_that_says_so(tmp_path: Path) -> None:
    root = _tree_with_one_card(tmp_path, lambda b: b.replace(b"\n", b"\r\n"))
    p = cli_support.invoke(["validate", "submissions"], cwd=root)
    assert p.returncode == 1
    out = p.stdout + p.stderr
    assert "dataset.sha256 does not match: corpora/mtb-en-es-dev.json has CRLF line ends" in out
    assert "git config core.autocrlf false" in out


def test_any_other_corpus_change_keeps_the_plain_error(tmp_path: Path) -> None:
    root = _tree_with_one_card(tmp_path, lambda b: b + b"\n")
    p = cli_support.invoke(["validate", "submissions"], cwd=root)
    assert p.returncode == 1
    out = p.stdout + p.stderr
    assert "dataset.sha256 does not match the published corpus file" in out and "CRLF" not in out


def test_verify_names_a_crlf_prompt_template(tmp_path: Path) -> None:
    from mtboard.inputs.prompts import prompts_dir
    from mtboard.verify.rerun import NotVerifiable, check_verifiable

    card = load_card(next(p for p in sorted((REPO / "submissions" / "mtb-en-es-dev").glob(
        "gemma-3-270m-q4-k-m.gguf__few-shot__*.json")) if '"segment":"development"' in p.read_text(encoding="utf-8")))
    prompts = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), prompts, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    with use_runtime(Runtime(prompts_dir=prompts)):  # what the CLI sets from MTBOARD_PROMPTS_DIR
        check_verifiable(card)  # the unchanged copy verifies
        t = prompts / "few-shot-completion.j2"
        t.write_bytes(t.read_bytes().replace(b"\n", b"\r\n"))
        with pytest.raises(NotVerifiable) as info:
            check_verifiable(card)
        assert "template has CRLF line ends" in info.value.problem
        assert "core.autocrlf false" in (info.value.fix or "")
        # a judge prompt in the same state says the same (it is loaded before anything is sent)
        from mtboard.core.errors import InputError
        from mtboard.judges.base import load_judge_prompt

        j = prompts / "judges" / "rubric.j2"
        j.write_bytes(j.read_bytes().replace(b"\n", b"\r\n"))
        with pytest.raises(InputError, match="template has CRLF line ends"):
            load_judge_prompt("rubric")


def test_judge_corpus_option_names_a_crlf_file(tmp_path: Path) -> None:
    from mtboard.cli.judge import find_corpus
    from mtboard.core.errors import ConfigError

    src = REPO / "corpora" / "mtb-en-es-dev.json"
    crlf = tmp_path / "c.json"
    crlf.write_bytes(src.read_bytes().replace(b"\n", b"\r\n"))
    with pytest.raises(ConfigError) as info:
        find_corpus(tmp_path, sha256_hex(src.read_bytes()), crlf, [])
    assert "has CRLF line ends" in str(info.value) and "core.autocrlf false" in str(info.value)
    json.loads(crlf.read_text(encoding="utf-8"))  # still valid JSON: only the hash tells the files apart
