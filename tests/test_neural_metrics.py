"""Neural metrics on a card without a model (mtboard.score.metrics.neural, mtboard.score.neural_card, mtboard.validate.neural):
the aggregate arithmetic, the signature, the re-sealed card and every way the ``neural`` check refuses a claim.

The scores here are hand-made numbers standing in for a model's output (the model path itself is tested on a real
tiny COMET model in tests/test_neural_comet.py); the cards are real Apertium cards and a committed baseline card.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtboard.core import canonical
from mtboard import validate as V
from mtboard.core.documents import loads_card
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.score.metrics import neural
from mtboard.score.neural_card import apply_neural, hypotheses

import validate_support as vs

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = {"unbabel-comet": "2.2.7", "torch": "2.13.0+cpu", "transformers": "4.57.6", "huggingface-hub": "0.36.2",
            "pytorch-lightning": "2.6.6"}
COMMIT = "2760a223ac957f30acfb18c8aa649b01cf1d75f2"


def _run(key: str, scores: list[float]) -> neural.NeuralRun:
    m = neural.MODELS[key]
    rounded = [round(s, 4) for s in scores]
    return neural.NeuralRun(key=key, repo_id=m.repo_id, revision=COMMIT, commit=COMMIT, encoder="xlm-roberta-large",
                            batch_size=16, device="cpu", versions=VERSIONS, scores=rounded, raw_scores=list(scores),
                            score=neural.aggregate(rounded), system_score=None)


def test_aggregate_is_the_exact_mean_of_the_rounded_values_ties_to_even():
    assert neural.aggregate([0.8123, 0.5, 0.25]) == 0.5208  # 15623 / 3 = 5207.67 units
    assert neural.aggregate([0.0001, 0.0002]) == 0.0002  # 1.5 units → 2 (even)
    assert neural.aggregate([0.0003, 0.0004]) == 0.0004  # 3.5 units → 4 (even)
    assert neural.aggregate([0.0002, 0.0003]) == 0.0002  # 2.5 units → 2 (even)
    assert neural.aggregate([-0.1, 0.3]) == 0.1  # COMET can leave [0, 1]; the mean is plain arithmetic
    assert neural.aggregate([]) is None
    # floating-point summation would drift: 0.1 + 0.2 + … in floats is not what the integer sum gives
    vals = [0.1] * 10 + [0.7]
    assert neural.aggregate(vals) == round((10 * 1000 + 7000) / 11) / 10_000 == 0.1545


def test_signature_names_every_component():
    assert neural.signature("comet22", repo_id="Unbabel/wmt22-comet-da", revision=COMMIT,
                            encoder="xlm-roberta-large", batch_size=8, device="cuda", versions=VERSIONS) == (
        f"comet22|model:Unbabel/wmt22-comet-da|rev:{COMMIT}|encoder:xlm-roberta-large|bs:8|device:cuda"
        "|comet:2.2.7|torch:2.13.0+cpu|transformers:4.57.6|hub:0.36.2|dp:4")


def test_parse_metrics_and_the_pinned_models():
    assert neural.parse_metrics(["comet22,cometkiwi", "comet22", " xcomet "]) == ["comet22", "cometkiwi", "xcomet"]
    with pytest.raises(ConfigError, match="unknown neural metric 'metricx'"):
        neural.parse_metrics(["metricx"])
    assert {k: (m.repo_id, m.needs_reference) for k, m in neural.MODELS.items()} == {
        "comet22": ("Unbabel/wmt22-comet-da", True), "cometkiwi": ("Unbabel/wmt22-cometkiwi-da", False),
        "xcomet": ("Unbabel/XCOMET-XL", True)}
    assert all(len(m.revision) == 40 and int(m.revision, 16) >= 0 for m in neural.MODELS.values())


def test_missing_comet_environment_is_a_config_error_with_the_fix(tmp_path):
    with use_runtime(Runtime(comet_python=tmp_path / "nowhere" / "python")):  # the CLI's MTBOARD_COMET_PYTHON
        with pytest.raises(ConfigError, match="scripts/setup.sh --comet"):
            neural.score_segments("comet22", ["a"], ["b"], ["c"])
    with pytest.raises(ConfigError, match=f"no COMET environment at {tmp_path / 'explicit'}"):
        neural.score_segments("comet22", ["a"], ["b"], ["c"], python=tmp_path / "explicit")
    with pytest.raises(ConfigError, match="needs references"):
        neural.score_segments("comet22", ["a"], ["b"], None)
    with pytest.raises(ConfigError, match="unknown device"):
        neural.score_segments("comet22", ["a"], ["b"], ["c"], device="tpu")
    # nothing to send (every hypothesis is None): no worker is started, every entry scores 0
    run = neural.score_segments("cometkiwi", ["a", "b"], [None, None])
    assert run.scores == [0.0, 0.0] and run.score == 0.0 and run.raw_scores == [None, None]


@pytest.fixture(scope="module")
def base_card():
    return loads_card(vs.real_card_bytes(12, fst=False), "card")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = vs.make_repo(tmp_path_factory.mktemp("neural"))
    return root, V.make_context(root, ROOT / "corpora")


def _check(repo, data: dict) -> tuple[str, list[str]]:
    root, ctx = repo
    data = vs.reseal(data)
    dest = vs.place(root, vs.dump(data))
    try:
        rep = V.validate_card(dest, ctx)
    finally:
        dest.unlink()
    others = {p.check for p in rep.problems} - {"neural"}
    assert not others, rep.problems
    return rep.checks["neural"], [p.message for p in rep.problems if p.check == "neural"]


SCORES12 = [0.8123, 0.7, 0.65432, 0.9, 0.31, 0.5, 0.55, 0.6, 0.61, 0.62, 0.9999, 0.12345]


def test_apply_neural_writes_per_entry_values_record_and_seal_and_the_card_validates(base_card, repo):
    card = apply_neural(base_card, [_run("comet22", SCORES12), _run("cometkiwi", [0.5] * 12)])
    assert [r.plugin_metrics["comet22"] for r in card.results] == [round(s, 4) for s in SCORES12]
    rec = card.neural_metrics["comet22"]
    # (8123 + 7000 + 6543 + 9000 + 3100 + 5000 + 5500 + 6000 + 6100 + 6200 + 9999 + 1234) / 12 = 6149.9… → 6150
    assert (rec.n, rec.score, rec.model, rec.commit, rec.batch_size) == (12, 0.615, "Unbabel/wmt22-comet-da",
                                                                         COMMIT, 16)
    assert card.neural_metrics["cometkiwi"].score == 0.5
    data = json.loads(card.model_dump_json())
    assert canonical.run_card_hash(data) == card.run_card_hash
    assert card.fingerprint == base_card.fingerprint  # no fingerprint component changes
    assert _check(repo, data) == ("pass", [])
    # a card without neural metrics: the check is skipped and the field is absent from the JSON (old seals hold)
    plain = json.loads(base_card.model_dump_json())
    assert "neural_metrics" not in plain
    assert _check(repo, plain)[0] == "skip"


def _tamper(card, fn) -> dict:
    data = json.loads(card.model_dump_json())
    fn(data)
    return data


@pytest.mark.parametrize("name,fn,message", [
    ("aggregate", lambda d: d["neural_metrics"]["comet22"].update(score=0.7), "score 0.7 is not the mean"),
    ("n", lambda d: d["neural_metrics"]["comet22"].update(n=11), "n is 11, the card has 12 results"),
    ("off-grid", lambda d: d["results"][0]["plugin_metrics"].update(comet22=0.81234), "not rounded to 4 decimals"),
    ("missing value", lambda d: d["results"][3]["plugin_metrics"].pop("comet22"), "None is not a finite number"),
    ("string value", lambda d: d["results"][3]["plugin_metrics"].update(comet22="0.9"), "is not a finite number"),
    ("model", lambda d: d["neural_metrics"]["comet22"].update(model="someone/else"), "is not comet22's model"),
    ("signature", lambda d: d["neural_metrics"]["comet22"].update(batch_size=32), "does not match the record's"),
    ("unknown key", lambda d: d["neural_metrics"].update(metricx=d["neural_metrics"]["comet22"]),
     "unknown neural metric 'metricx'"),
    ("stray values", lambda d: [r["plugin_metrics"].update(xcomet=0.5) for r in d["results"]],
     "results carry 'xcomet' values but $.neural_metrics has no 'xcomet' record"),
])
def test_the_neural_check_refuses(base_card, repo, name, fn, message):
    card = apply_neural(base_card, [_run("comet22", SCORES12)])
    status, messages = _check(repo, _tamper(card, fn))
    assert status == "fail" and any(message in m for m in messages), (name, messages)


def test_entries_without_usable_output_must_score_zero_on_a_committed_card(tmp_path):
    """The committed empty baseline: no entry has usable output, so none is sent and every value is 0."""
    src = ROOT / "submissions" / "mtb-en-es-dev" / "baseline-empty__baseline__9098cb401d85.json"
    card = loads_card(src.read_bytes(), str(src))
    assert set(hypotheses(card)) == {None}
    n = len(card.results)
    run = neural.score_segments("cometkiwi", [r.source for r in card.results], hypotheses(card))
    scored = apply_neural(card, [run])
    assert scored.neural_metrics["cometkiwi"].score == 0.0 and scored.neural_metrics["cometkiwi"].n == n
    root = vs.make_repo(tmp_path)
    ctx = V.make_context(root, ROOT / "corpora")
    good = json.loads(scored.model_dump_json())
    dest = vs.place(root, vs.dump(good))
    assert V.validate_card(dest, ctx).checks["neural"] == "pass"
    bad = vs.reseal(_tamper(scored, lambda d: d["results"][0]["plugin_metrics"].update(cometkiwi=0.4)))
    dest.write_bytes(vs.dump(bad))
    rep = V.validate_card(dest, ctx)
    assert rep.checks["neural"] == "fail"
    assert any("on an entry without usable output" in p.message for p in rep.problems)


def test_rescore_refuses_a_card_with_neural_metrics(base_card, tmp_path):
    from mtboard.core.documents import write_card
    from mtboard.run.rescore import rescore_card

    p = tmp_path / "card.json"
    write_card(apply_neural(base_card, [_run("comet22", SCORES12)]), p)
    with pytest.raises(InputError, match="carries neural metrics"):
        rescore_card(p, corpora_dir=ROOT / "corpora")


def test_run_with_a_neural_metric_and_no_comet_environment_stops_before_translating(tmp_path):
    import cli_support

    work = tmp_path / "work"
    proc = cli_support.invoke(["run", str(ROOT / "corpora" / "mtb-en-es-dev.json"), "--method", "apertium:eng-spa",
                               "--limit", "2", "--work-dir", str(work), "--neural-metric", "comet22"],
                              env={"MTBOARD_COMET_PYTHON": str(tmp_path / "no-env" / "python")})
    assert proc.returncode == 1
    assert "no COMET environment at" in proc.stderr and "scripts/setup.sh --comet" in proc.stderr
    assert not (work / "translations.jsonl").exists()
    bad = cli_support.invoke(["run", str(ROOT / "corpora" / "mtb-en-es-dev.json"), "--method", "apertium:eng-spa",
                              "--neural-metric", "metricx"])
    assert bad.returncode == 1 and "unknown neural metric 'metricx'" in bad.stderr
    rev = cli_support.invoke(["neural", str(work), "--metric", "comet22", "--revision", "comet22"])
    assert rev.returncode == 1


def test_the_run_page_shows_neural_metrics_as_claimed_until_an_accepted_verification_confirms_them():
    from mtboard.ledger.load import LoadedCard, Verification
    from mtboard.site.runpage import neural_view

    raw = vs.neural_card_bytes()
    card = loads_card(raw, "card")
    lc = LoadedCard(path="x.json", card=card, page_id=card.run_card_hash[:16],
                    verification=Verification("self-benchmarked"))
    (row,) = neural_view(lc)
    # (8123 + 7000 + 6543 + 9000 + 3100 + 5000 + 5500 + 6000 + 6100 + 6200 + 9999 + 1234) / 12 = 6149.9… → 0.615
    assert (row["key"], row["label"], row["score"], row["n"], row["status"]) == ("comet22", "COMET-22", 0.615, 12,
                                                                                 "claimed")
    assert row["commit"] == "2760a223ac95" and row["signature"] == card.neural_metrics["comet22"].signature
    delta = {"metric": "neural_metrics.comet22", "stored": 0.615, "rerun": 0.615, "delta": 0.0, "within": True}
    lc.verification = Verification("gds-verified", {"deltas": [delta]})
    assert neural_view(lc)[0]["status"] == "verified"
    lc.verification = Verification("self-benchmarked", {"deltas": [delta]})  # a record not accepted: still claimed
    assert neural_view(lc)[0]["status"] == "claimed"
    lc.verification = Verification("gds-verified", {"deltas": [{**delta, "within": False}]})
    assert neural_view(lc)[0]["status"] == "claimed"
    # a record inherited through a re-score (issue 31) re-ran another card's neural scores: still claimed
    lc.verification = Verification("gds-verified", {"deltas": [delta]}, via="a" * 64)
    assert neural_view(lc)[0]["status"] == "claimed"


def test_a_revision_must_be_a_commit():
    with pytest.raises(ConfigError, match="revision 'main' of comet22 is not a commit"):
        neural.score_segments("comet22", ["a"], [None], ["c"], revision="main")
