"""A card judged after the run still validates, and the card records the FST analyser that scored it.

Regression for a report that a card judged with `mtboard judge WORKDIR --judge gemba-mqm=openai:…` failed
`mtboard validate`'s metrics check: judging may only add verdicts, judge summaries, judge totals, the fingerprint's judge
components and a new seal — every field the validator recomputes must stay byte-identical.

Translator and judge are scripted local servers (tests/judges_support.py, fault-injection doubles); the corpora are the
committed development sets; FST acceptance uses the real Apertium analyser installed by apt.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extras_support import requires_ja
from judges_support import REPO, ScriptedServer
from mtboard.score import fst
from mtboard.cli.main import app
from mtboard.core.documents import card_json, load_card
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run
from mtboard.validate import make_context, validate_card

ES = REPO / "corpora" / "mtb-en-es-dev.json"
JA = REPO / "corpora" / "mtb-en-ja-dev.json"
CLEAN = "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"
MAJOR = 'Critical:\nno-error\nMajor:\naccuracy/mistranslation - "roja"\nMinor:\nno-error\ncontextBehavior: unclear'
BOLD = "**Critical:**\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"  # fails closed


def validate(path: Path):
    report = validate_card(path, make_context(REPO, REPO / "corpora"))
    assert report.ok, [str(p) for p in report.problems]
    return report


def recomputed_part(card) -> dict:
    """Everything of a card outside what judging may change."""
    data = card_json(card)
    for r in data["results"]:
        del r["judgements"]
    for k in [k for k in data["totals"] if k.startswith("judge_")]:
        del data["totals"][k]
    for k in ("judges", "fingerprint", "run_card_hash"):
        del data[k]
    return data


def test_judged_card_validates_and_judging_changes_nothing_recomputed(tmp_path, monkeypatch):
    for k in list(os.environ):
        if k.startswith(("OPENAI_", "JUDGE_")):
            monkeypatch.delenv(k)
    wd = tmp_path / "w"
    turn = itertools.count()
    # translator: a Spanish sentence, an empty answer, the source echoed, a Spanish sentence — in turn
    outputs = ["La casa es roja.", "", None, "El gato duerme en la casa."]

    def translate(body):
        out = outputs[next(turn) % 4]
        return body["messages"][-1]["content"] if out is None else out

    cli = CliRunner()
    with ScriptedServer(translate) as tr:
        res = cli.invoke(app, ["run", str(ES), "--method", "openai:mistral-scripted-mt", "--base-url", tr.url,
                               "--limit", "8", "--work-dir", str(wd)])
    assert res.exit_code == 0, res.output
    before = load_card(wd / "card.json")
    analyser = fst.find_analyser("es")
    assert analyser is not None, "apertium-eng-spa is installed by the project's setup"
    assert before.fst_version == analyser.version and before.scores.fst_acceptance_rate is not None
    assert before.scores.composite_profile == "A"
    validate(wd / "card.json")

    answers = itertools.cycle([CLEAN, MAJOR, BOLD, BOLD, BOLD])  # 3rd entry: three unparsable answers → judge_failed
    # the judge's server names an openai-family model (an unknown judge family is refused for an LLM translator)
    with ScriptedServer(lambda body: next(answers), model="gpt-4.1-scripted-judge") as jd:
        monkeypatch.setenv("JUDGE_BASE_URL", jd.url)
        res = cli.invoke(app, ["judge", str(wd), "--judge", "gemba-mqm=openai:judge-x", "--concurrency", "1"])
    assert res.exit_code == 0, res.output
    after = load_card(wd / "card.json")
    summary = after.judges["gemba-mqm"]
    assert summary.n_scored + summary.n_failed + summary.n_not_sent == 8 and summary.n_not_sent == 4
    assert summary.n_failed >= 1 and summary.n_scored >= 1
    assert after.run_card_hash != before.run_card_hash
    assert recomputed_part(after) == recomputed_part(before)
    report = validate(wd / "card.json")
    assert report.checks["metrics"] == "pass" and report.checks["judges"] == "pass", report.checks


@requires_ja
def test_fst_version_only_when_fst_ran(tmp_path):
    ja = run(RunSettings(corpus_path=JA, method="echo:", limit=2, work_dir=tmp_path / "ja")).card
    assert fst.find_analyser("ja") is None
    assert ja.fst_version is None and ja.scores.fst_acceptance_rate is None and ja.scores.composite_profile == "B"
    validate(tmp_path / "ja" / "card.json")
    es = run(RunSettings(corpus_path=ES, method="empty:", limit=2, work_dir=tmp_path / "es")).card
    assert es.fst_version is not None and es.fst_version.startswith("apertium-eng-spa ")
    assert es.fst_version.endswith("lttoolbox " + fst.find_analyser("es").lttoolbox_version)
    validate(tmp_path / "es" / "card.json")


@pytest.mark.parametrize("tampered", ["apertium-eng-spa 0.0.0; spa-eng.automorf.bin; lttoolbox 0"])
def test_validator_refuses_a_foreign_fst_version(tmp_path, tampered):
    """The validator's method check compares fst_version with the analyser it would recompute FST with."""
    from mtboard.core.documents import seal, write_card

    card = run(RunSettings(corpus_path=ES, method="empty:", limit=2, work_dir=tmp_path / "es")).card
    bad = seal(card.model_copy(update={"fst_version": tampered}))
    write_card(bad, tmp_path / "bad.json")
    report = validate_card(tmp_path / "bad.json", make_context(REPO, REPO / "corpora"))
    assert not report.ok and report.checks["method"] == "fail"
    assert [p.check for p in report.problems] == ["method"]
