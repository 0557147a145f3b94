"""``mtboard run`` with the engines that need no server: Apertium over the committed EN→ES development segment
(issue 3 acceptance: a valid card for every development entry) and the echo/empty baselines (the mechanical checks
and metrics visibly honest). Cards are checked with the project's validator against the committed corpora."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mtboard.core.documents import load_card, load_corpus
from mtboard.validate import make_context, validate_card

import cli_support

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "mtb-en-es-dev.json"


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    work = tmp_path / "w"
    res = cli_support.invoke(["run", str(CORPUS), "--work-dir", str(work), *args], cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    return res, work


@pytest.mark.skipif(shutil.which("apertium") is None, reason="apertium is not installed")
@pytest.mark.slow  # 3.0 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_apertium_card_for_every_development_entry(tmp_path):
    corpus, sha = load_corpus(CORPUS)
    dev = [e.id for e in corpus.segment("development")]
    res, work = _run(tmp_path, "--method", "apertium:eng-spa")
    card = load_card(work / "card.json")
    assert [r.entry_id for r in card.results] == dev and card.dataset.sha256 == sha
    assert card.method_class.value == "pipeline" and card.temperature is None and card.method.max_tokens is None
    assert card.method.prompt_format == "raw" and card.system_prompt_used == ""
    assert card.scores.errors == 0 and card.totals.total_cost_usd == 0.0
    assert 30.0 < card.scores.chrf_plus_plus < 80.0
    # unknown-word marks stay in raw_predicted and are stripped from predicted
    # (entries whose source has a literal "*" are left out: the glob "*.md5sums" is not a mark)
    marked = [r for r in card.results if r.raw_predicted and "*" in r.raw_predicted and "*" not in r.source]
    word_mark = re.compile(r"(?<!\S)\*\w")  # a mark in front of a word ("*MacBook")
    assert sum(1 for r in marked if word_mark.search(r.raw_predicted)) > 10
    assert not any(word_mark.search(r.predicted) for r in marked)
    assert "chrF++" in res.stdout and "composite" in res.stdout and "cost" in res.stdout
    report = validate_card(work / "card.json", make_context(ROOT, ROOT / "corpora"))
    assert report.ok, [str(p) for p in report.problems]


@pytest.mark.parametrize("method,outcome", [("echo:", "source_untranslated"), ("empty:", "no_usable_output")])
def test_baselines_score_zero_and_say_why(tmp_path, method, outcome):
    res, work = _run(tmp_path, "--method", method, "--limit", "25")
    card = load_card(work / "card.json")
    assert card.method_class.value == "baseline" and card.condition == "baseline"
    assert len(card.results) == 25
    assert card.scores.mechanical[outcome] == 25
    assert card.scores.chrf_plus_plus == 0.0 and card.scores.composite == 0.0
    assert card.scores.errors == (25 if method == "empty:" else 0)
    report = validate_card(work / "card.json", make_context(ROOT, ROOT / "corpora"))
    assert report.ok, [str(p) for p in report.problems]
