"""Repository files a newcomer meets before any code runs (review of issues 13-24): comments that name code, and
folders the maintainer docs create that git must ignore."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_prices_yaml_names_the_function_that_reads_it() -> None:
    head = (REPO / "prompts" / "prices.yaml").read_text(encoding="utf-8").splitlines()[1]
    named = re.search(r"Read by (mtboard(?:\.\w+)+)", head)
    assert named is not None and named.group(1) == "mtboard.inputs.prices.load_prices"
    module, _, name = named.group(1).rpartition(".")
    table = getattr(importlib.import_module(module), name)(REPO / "prompts" / "prices.yaml")
    assert table.as_of == "2025-08-07"


def test_prices_yaml_bytes_are_not_in_any_committed_card() -> None:
    # prompts/ bytes are hashed into cards; the price table is not (so its comment may change)
    import hashlib

    digest = hashlib.sha256((REPO / "prompts" / "prices.yaml").read_bytes()).hexdigest()
    cards = list((REPO / "submissions").rglob("*.json"))
    assert len(cards) >= 20
    assert not any(digest in p.read_text(encoding="utf-8") for p in cards)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_verification_record_folder_is_ignored() -> None:
    # docs/maintainers.md downloads the attested record into ./verification-record in the repository root
    assert "-D verification-record" in (REPO / "docs" / "maintainers.md").read_text(encoding="utf-8")
    p = subprocess.run(["git", "check-ignore", "-q", "verification-record/STEM.verification.json"], cwd=REPO)
    if p.returncode == 128:
        pytest.skip("not a git checkout")
    assert p.returncode == 0


def test_streaming_is_documented_where_a_newcomer_looks() -> None:
    import cli_support

    # the README links the page about running methods (issue 36: details moved out of the README, behind links)
    assert "[docs/running.md](docs/running.md)" in (REPO / "README.md").read_text(encoding="utf-8")
    running = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    assert "`MTBOARD_STREAM=1` streams responses from OpenAI-compatible servers" in running
    p = cli_support.invoke(["run", "--help"], env={"COLUMNS": "200"})
    assert p.returncode == 0 and "MTBOARD_STREAM=1 streams responses from OpenAI-compatible servers" in p.stdout


@pytest.mark.parametrize("doc", ["README.md", "docs/submissions.md", "docs/maintainers.md"])
def test_placeholder_repository_names_are_explained(doc: str) -> None:
    # every placeholder of a GitHub address in a contributor/maintainer doc is said to be one, in that doc
    text = " ".join((REPO / doc).read_text(encoding="utf-8").split())  # prose wraps anywhere
    explained = {"YOUR-NAME": ("`YOUR-NAME` is your GitHub account",),
                 "OWNER/REPO": ("`OWNER/REPO` the main repository you forked", "`OWNER/REPO` is the GitHub repository",
                                "`OWNER/REPO` the repository you forked")}
    used = [p for p in explained if p in text]
    assert doc != "docs/submissions.md" or used == ["YOUR-NAME", "OWNER/REPO"]
    for placeholder in used:
        assert any(e in text for e in explained[placeholder]), (doc, placeholder)
    assert not re.search(r"github\.com/(?!YOUR-NAME/|OWNER/REPO)[\w.-]+/mtboard", text)  # no made-up real address
