"""An Apertium mode must translate the dataset's language pair: refused by `mtboard run` before anything is written,
and rejected by the validator's `method` check when a card was made some other way."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtboard.backends.apertium import ApertiumBackend
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError

import cli_support

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mode,src,tgt,ok", [
    ("eng-spa", "en", "es", True),
    ("eng-cat_valencia", "en", "ca", True),
    ("eng-spa", "en", "fr", False),
    ("spa-eng", "en", "es", False),
    ("eng-cat", "en", "es", False),
    ("eng-spa", "en", "es-MX", True),
])
def test_check_languages(mode, src, tgt, ok):
    if ok:
        ApertiumBackend.check_languages(mode, src, tgt)
    else:
        with pytest.raises(ConfigError, match="translates"):
            ApertiumBackend.check_languages(mode, src, tgt)


def test_run_refuses_wrong_pair_before_writing(tmp_path):
    work = tmp_path / "wd"
    proc = cli_support.invoke(["run", str(ROOT / "corpora" / "mtb-en-fr-dev.json"), "--method", "apertium:eng-spa",
                               "--work-dir", str(work)])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "translates eng→spa" in proc.stderr and "'fr'" in proc.stderr
    assert not work.exists()


def test_validator_rejects_wrong_pair_card():
    from mtboard.validate.report import CardRun
    from mtboard.validate.structure import check_method

    path = next(p for p in (ROOT / "submissions" / "mtb-en-es-dev").glob("apertium-eng-spa__*.json")
                if not p.name.endswith(".verification.json"))
    card = load_card(path)
    run = CardRun("x")
    check_method(run, card)
    assert not [p for p in run.report("x", None).problems if p.check == "method"]
    bad = card.model_copy(update={"dataset": card.dataset.model_copy(update={"target_language": "fr"})})
    run = CardRun("x")
    check_method(run, bad)
    report = run.report("x", None)
    assert any(p.check == "method" and "translates eng→spa" in p.message for p in report.problems)
