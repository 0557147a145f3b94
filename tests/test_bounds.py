"""Issue 32 item 3: nothing impossible is accepted or shown — ranges and consistency rules for stored numbers
(:mod:`mtboard.validate.bounds`, :mod:`mtboard.validate.scores`, :mod:`mtboard.validate.neural`,
:mod:`mtboard.core.safejson`).

Each attack of the issue is reproduced first on real data — the committed development cards reduced to scores-only
cards the way the verify workflow does (:func:`mtboard.score.scores_card.from_run_card`), or a committed card's bytes
edited as text — then shown refused with one line naming the field, the value, the allowed range and its source.
Expected numbers are read off the committed cards (the hand checks are in comments); the secret corpus here is a
hand-made file of five development entries (their texts copied from corpora/mtb-en-es-dev.json, segment relabelled
gold_standard).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mtboard.core import canonical, safejson
from mtboard.core.documents import load_card
from mtboard.core.errors import InputError
from mtboard.core.schema import ScoresSegment, Segment
from mtboard.score import scores_card as S
from mtboard.validate import bounds as B
from mtboard.validate.scores import SecretCorpus, check_scores_data, validate_scores_card

from cards_support import committed

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
GEMMA = committed("gemma-3-270m-q4-k-m.gguf__few-shot__")  # the development card (a diagnostic one exists too)
APERTIUM = committed("apertium-eng-spa__default__")  # the full-corpus card (355 entries)
EMPTY = committed("baseline-empty__baseline__")
SALT = bytes(range(32))
NOW = datetime(2026, 12, 9, 6, 0, tzinfo=UTC)  # after every committed card's timestamp (the latest: 2026-12-04)


def _scores(path: Path = GEMMA) -> dict:
    card = load_card(path)
    sc = S.from_run_card(card, card, salt=SALT, segment=Segment.gold_standard, corpus_sha256="e" * 64,
                         corpus_version="1.0.0")
    return sc.model_dump(mode="json")


def _reaggregate(data: dict) -> dict:
    """What a forger does after editing segments: recompute every aggregate from them and seal (so only the
    segment rules can catch the edit)."""
    out = copy.deepcopy(data)
    agg = S.recompute([ScoresSegment.model_validate(s) for s in out["segments"]])
    out["scores"] = {**out["scores"], **agg}
    out["dataset"]["entry_count"] = len(out["segments"])
    return S.seal(out)


# ---------------------------------------------------------------------------------------------------------------
# the loader: -0


@pytest.mark.parametrize("text,path", [('{"a": -0.0}', "$.a"), ('{"a": [1, -0]}', "$.a[1]"), ('{"a": -0e5}', "$.a"),
                                       ('{"a": -1e-400}', "$.a")])  # the last underflows to -0.0
def test_negative_zero_is_refused_by_the_loader(text, path):
    with pytest.raises(InputError) as exc:
        safejson.loads(text, where="x.json")
    assert exc.value.field == path and "negative zero" in exc.value.problem
    assert "allowed: 0" in exc.value.one_line()


def test_zero_and_negative_numbers_still_load():
    assert safejson.loads('{"a": 0, "b": 0.0, "c": -1, "d": -0.5, "e": 1e-400}') == {
        "a": 0, "b": 0.0, "c": -1, "d": -0.5, "e": 0.0}


def test_the_negative_zero_edit_of_a_committed_card_is_refused_though_its_seal_still_matches():
    from mtboard.validate import make_context, validate_bytes

    raw = EMPTY.read_bytes()
    n = raw.count(b'"chrf_score":0,')
    assert n == 355  # every entry of the empty baseline has chrF 0 (355 development entries)
    bad = raw.replace(b'"chrf_score":0,', b'"chrf_score":-0.0,')
    # the hole: RFC 8785 writes -0.0 as 0, so the edited text has the same seal
    assert canonical.run_card_hash(json.loads(bad)) == json.loads(raw)["run_card_hash"]
    rep = validate_bytes(bad, "x.json", make_context(ROOT))
    assert [(p.check, p.field) for p in rep.problems] == [("json", "$.results[0].chrf_score")]
    assert "negative zero -0.0 (allowed: 0; RFC 8785" in rep.problems[0].message


# ---------------------------------------------------------------------------------------------------------------
# scores-only cards: statistics, entries, dates


def test_matches_above_the_hypothesis_ngrams_are_refused():
    data = _scores()
    forged = copy.deepcopy(data)
    for s in forged["segments"]:
        for o in range(8):
            s["chrf"][3 * o + 2] = s["chrf"][3 * o + 1]  # matches := the reference's n-grams
    forged = _reaggregate(forged)
    # the attack: the aggregates follow from the forged statistics, chrF++ 100 (the honest card: 35.75)
    assert forged["scores"]["chrf_plus_plus"] == 100.0 and data["scores"]["chrf_plus_plus"] == 36.43984438669218
    problems = check_scores_data(forged, "x", now=NOW).problems
    # entry 1 of the Gemma card: 38 hypothesis and 55 reference character 1-grams (its stats, first triple)
    assert data["segments"][0]["chrf"][:3] == [38, 55, 35]
    assert problems[0] == ("stats: $.segments[0].chrf[2] (char 1-gram matches) is 55, allowed: 0…38 (at most the "
                           "hypothesis's 38 and the reference's 55 char 1-grams; sacrebleu CHRF(word_order=2) "
                           "statistics: (hyp, ref, match) per order)")
    assert len(problems) == B_MAX + 1 and problems[-1].startswith("stats: … and ")
    assert not any(p.startswith("recompute:") for p in problems)  # aggregates of impossible statistics: not compared


B_MAX = 20


@pytest.mark.parametrize("edit,line", [
    (lambda s: s["bleu"].__setitem__(6, s["bleu"][6] + 1),
     "$.segments[0].bleu[6] (1-gram total) is {v}, allowed: {w} (a hypothesis of {h} tokens; sacrebleu BLEU "
     "statistics: hyp_len, ref_len, correct 1-4, total 1-4)"),
    (lambda s: s["chrf"].__setitem__(3, s["chrf"][3] + 1),
     "$.segments[0].chrf[3] (hypothesis char 2-grams) is {c3}, allowed: {c3m} (a text with {c0} char 1-grams has "
     "that many char 2-grams; sacrebleu CHRF(word_order=2) statistics: (hyp, ref, match) per order)"),
    (lambda s: s.__setitem__("ter", [1.5, s["ter"][1]]),
     "$.segments[0].ter[0] (edits) is 1.5, allowed: a whole number ≥ 0 (sacrebleu TER statistics: edits, "
     "reference words)"),
], ids=["bleu-total", "chrf-total", "fractional-edits"])
def test_each_inconsistent_statistic_is_one_line(edit, line):
    data = _scores()
    seg = data["segments"][0]
    h, c = seg["bleu"][0], seg["chrf"]
    values = {"v": seg["bleu"][6] + 1, "w": h, "h": h, "c3": c[3] + 1, "c3m": c[3], "c0": c[0]}
    assert c[3] == c[0] - 1 and seg["bleu"][6] == h  # sacrebleu's layout on the real card
    bad = copy.deepcopy(data)
    edit(bad["segments"][0])
    bad = S.seal(bad)  # aggregates left as they were: the segment line comes first
    problems = check_scores_data(bad, "x", now=NOW).problems
    assert problems[0] == "stats: " + line.format(**values), problems


@pytest.mark.parametrize("edit,line", [
    (lambda s: s["bleu"].__setitem__(2, -1), "$.segments[0].bleu[2]: Input should be greater than or equal to 0"),
    (lambda s: s.__setitem__("ter", [-1.0, s["ter"][1]]),
     "$.segments[0].ter[0]: Input should be greater than or equal to 0"),
    (lambda s: s.__setitem__("chrf", s["chrf"][:23]),
     "$.segments[0].chrf: List should have at least 24 items after validation, not 23"),
], ids=["negative-count", "negative-edits", "width"])
def test_negative_counts_and_wrong_widths_are_schema_errors(edit, line):
    bad = copy.deepcopy(_scores())
    edit(bad["segments"][0])
    (problem,) = check_scores_data(S.seal(bad), "x", now=NOW).problems
    assert problem.startswith(f"schema: x: {line}"), problem


def test_the_statistics_rules_alone_name_negative_counts_and_widths():
    """:mod:`mtboard.validate.bounds` does not rely on the schema (its callers may hold plain lists)."""
    chrf, bleu = [0] * 24, [0] * 10
    assert B.statistics_problems(chrf, bleu, [0.0, 0.0], "$.s") == []
    assert B.statistics_problems(chrf, [0, 0, -1] + [0] * 7, None, "$.s") == [
        "$.s.bleu[2] is -1, allowed: an integer ≥ 0 (a count)"]
    assert B.statistics_problems(chrf[:23], bleu, [-1.0, 2.0], "$.s") == [
        "$.s.chrf has 23 values, allowed: exactly 24 (sacrebleu CHRF(word_order=2) statistics: (hyp, ref, match) per "
        "order)",
        "$.s.ter[0] (edits) is -1.0, allowed: a whole number ≥ 0 (sacrebleu TER statistics: edits, reference words)"]
    # a reference without word 2-grams: sacrebleu counts no hypothesis word 2-grams either ("don't count hits")
    one_word = [1, 1, 1] + [0, 0, 0] * 5 + [3, 1, 1, 0, 0, 0]
    assert B.chrf_problems(one_word, "$.c") == []
    assert B.chrf_problems(one_word[:21] + [2, 0, 0], "$.c") == [
        "$.c[21] (hypothesis word 2-grams) is 2, allowed: 0 (sacrebleu counts no hypothesis word 2-grams when the "
        "reference has none; sacrebleu CHRF(word_order=2) statistics: (hyp, ref, match) per order)"]


def test_facts_that_exceed_their_whole_are_refused():
    data = _scores(APERTIUM)
    seg = data["segments"][0]
    checked = seg["fst_checked_words"]
    assert checked == 1 and seg["fst_accepted_words"] <= checked  # the committed Apertium card's first entry
    bad = copy.deepcopy(data)
    bad["segments"][0]["fst_accepted_words"] = checked + 1
    problems = check_scores_data(_reaggregate(bad), "x", now=NOW).problems
    assert problems == ["stats: $.segments[0].fst_accepted_words is 2, allowed: 0…1 (at most "
                        "$.segments[0].fst_checked_words: a subset of those)"]


def test_a_card_dated_2099_is_refused_and_ten_minutes_of_skew_is_not():
    data = _scores()
    far = S.seal({**data, "timestamp": "2099-01-01T00:00:00Z"})
    assert check_scores_data(far, "x", now=NOW).problems == [
        "timestamp: $.timestamp is 2099-01-01T00:00:00Z, allowed: not after the validation time 2026-12-09T06:00:00Z"
        " + 10 min clock skew (a document cannot be dated in the future)"]
    edge = S.seal({**data, "timestamp": "2026-12-09T06:10:00Z"})
    assert check_scores_data(edge, "x", now=NOW).problems == []
    past_edge = S.seal({**data, "timestamp": "2026-12-09T06:10:01Z"})
    assert check_scores_data(past_edge, "x", now=NOW).problems[0].startswith("timestamp: $.timestamp is 2026-12-09T")
    old = S.seal({**data, "timestamp": "2023-12-31T23:59:59Z"})
    assert check_scores_data(old, "x", now=NOW).problems == [
        "timestamp: $.timestamp is 2023-12-31T23:59:59Z, allowed: from 2024-01-01 on (no mtboard document is older)"]


def test_a_good_segment_listed_twice_in_place_of_a_bad_one_is_refused():
    data = _scores()
    forged = copy.deepcopy(data)
    forged["segments"][3] = copy.deepcopy(forged["segments"][2])
    forged = _reaggregate(forged)
    ids = [s["entry_id"] for s in data["segments"]]
    assert forged["scores"]["composite"] != data["scores"]["composite"]  # the swap changed the score
    assert check_scores_data(forged, "x", now=NOW).problems == [
        f"entries: $.segments[3].entry_id is {ids[2]}, already at $.segments[2]; allowed: each entry of the secret "
        "segment once"]


# ---------------------------------------------------------------------------------------------------------------
# scores-only cards against the secret corpus


def _secret(tmp_path: Path, ids: list[int]) -> Path:
    """A hand-made secret corpus: the development entries ``ids`` of corpora/mtb-en-es-dev.json, relabelled
    gold_standard."""
    dev = json.loads((ROOT / "corpora" / "mtb-en-es-dev.json").read_text(encoding="utf-8"))
    dataset = {**dev["dataset"], "id": "test-secret-en-es", "version": "1.0.0"}
    entries = [{**e, "segment": "gold_standard"} for e in dev["entries"] if e["id"] in ids]
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"dataset": dataset, "entries": entries}, ensure_ascii=False), encoding="utf-8")
    return path


def _secret_card(secret: SecretCorpus, keep: int = 5) -> dict:
    data = _scores(APERTIUM)
    data["segments"] = data["segments"][:keep]
    data["dataset"].update(id=secret.corpus.dataset.id, version="1.0.0", sha256=secret.sha256)
    return _reaggregate(data)


def test_a_scores_card_lists_exactly_the_secret_segment_with_its_references(tmp_path):
    ids = [r.entry_id for r in load_card(APERTIUM).results[:5]]
    secret = SecretCorpus.load(_secret(tmp_path, ids))
    good = _secret_card(secret)
    assert check_scores_data(good, "x", secret=secret, now=NOW).problems == []
    # an entry left out (and the aggregates recomputed without it)
    short = _secret_card(secret, keep=4)
    assert check_scores_data(short, "x", secret=secret, now=NOW).problems == [
        f"corpus: $.segments has no entry {ids[4]}, allowed: exactly the 5 gold_standard entries of the secret corpus"]
    # a reference length that is not the corpus reference's (consistent on its own: matches stay under it)
    longer = copy.deepcopy(good)
    ref_len = longer["segments"][1]["bleu"][1]
    longer["segments"][1]["bleu"][1] += 1
    assert check_scores_data(_reaggregate(longer), "x", secret=secret, now=NOW).problems == [
        f"corpus: $.segments[1].bleu[1] (reference length) is {ref_len + 1}, allowed: {ref_len} (the reference of "
        "this entry in the secret corpus)"]
    # reference character n-grams (the whole ladder moves with the 1-gram count, so only the corpus can tell)
    grown = copy.deepcopy(good)
    c = grown["segments"][2]["chrf"]
    for o in range(6):
        c[3 * o + 1] += 1
    problems = check_scores_data(_reaggregate(grown), "x", secret=secret, now=NOW).problems
    assert len(problems) == 6 and problems[0] == (
        f"corpus: $.segments[2].chrf[1] (reference char 1-grams) is {c[1]}, allowed: {c[1] - 1} (the reference of "
        "this entry in the secret corpus)")
    # an entry of another segment
    other = copy.deepcopy(good)
    other["segments"][0]["entry_id"] = 99999
    assert check_scores_data(_reaggregate(other), "x", secret=secret, now=NOW).problems[:2] == [
        f"corpus: $.segments has no entry {ids[0]}, allowed: exactly the 5 gold_standard entries of the secret corpus",
        "corpus: $.segments[0].entry_id is 99999, allowed: an entry id of the gold_standard segment of the secret "
        "corpus"]
    # the secret corpus's id and version with another file's SHA-256
    renamed = S.seal({**good, "dataset": {**good["dataset"], "sha256": "f" * 64}})
    assert check_scores_data(renamed, "x", secret=secret, now=NOW).problems == [
        f"corpus: $.dataset.sha256 is ffffffffffff…, allowed: {secret.sha256[:12]}… (the SHA-256 of the secret "
        "corpus, dataset test-secret-en-es v1.0.0)"]
    # a card of another corpus is not checked against this one
    foreign = S.seal({**good, "dataset": {**good["dataset"], "id": "other-corpus", "sha256": "f" * 64}})
    assert check_scores_data(foreign, "x", secret=secret, now=NOW).problems == []


@pytest.mark.slow  # a whole-system test: 7 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_validate_scores_cli_takes_the_secret_corpus(tmp_path):
    from typer.testing import CliRunner

    from mtboard.cli.main import app

    ids = [r.entry_id for r in load_card(APERTIUM).results[:5]]
    path = _secret(tmp_path, ids)
    card = tmp_path / "a.gold_standard.scores.json"
    card.write_text(json.dumps(_secret_card(SecretCorpus.load(path), keep=4)))
    runner = CliRunner()
    assert runner.invoke(app, ["validate-scores", str(card)]).exit_code == 0
    res = runner.invoke(app, ["validate-scores", str(card), "--secret-corpus", str(path)])
    assert res.exit_code == 1 and f"corpus: $.segments has no entry {ids[4]}" in res.output
    assert validate_scores_card(card, secret=SecretCorpus.load(path)).problems[0].startswith("corpus: ")


# ---------------------------------------------------------------------------------------------------------------
# the official board and the site


@pytest.mark.slow  # 6.5 CPU-s, 8 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_none_of_the_impossible_scores_cards_reaches_the_official_page(tmp_path):
    import shutil

    from mtboard.site.build import build_site
    from mtboard.verify.official import load_official

    root = tmp_path / "repo"
    shutil.copytree(ES, root / "submissions" / ES.name)
    official = root / "official" / ES.name
    official.mkdir(parents=True)
    forged = _scores()
    for s in forged["segments"]:
        for o in range(8):
            s["chrf"][3 * o + 2] = s["chrf"][3 * o + 1]
    dup = _scores(APERTIUM)
    dup["segments"][3] = copy.deepcopy(dup["segments"][2])
    cards = {"chrf100": _reaggregate(forged), "future": S.seal({**_scores(), "timestamp": "2099-01-01T00:00:00Z"}),
             "duplicate": _reaggregate(dup)}
    for name, data in cards.items():
        (official / f"{name}.gold_standard.scores.json").write_text(json.dumps(data), encoding="utf-8")
    off = load_official(root / "official", None)
    assert off.rows == []
    assert {(p, lines[0].split(":")[0]) for p, lines in off.rejected} == {
        (f"{ES.name}/chrf100.gold_standard.scores.json", "stats"),
        (f"{ES.name}/future.gold_standard.scores.json", "timestamp"),
        (f"{ES.name}/duplicate.gold_standard.scores.json", "entries")}
    report = build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs",
                        official=root / "official", resamples=50, run_mkdocs=False, validate=False)
    assert not (tmp_path / "docs" / "official" / "mtb-en-es-dev-v1.0.0.md").exists()  # no board: nothing valid
    index = (tmp_path / "docs" / "official" / "index.md").read_text(encoding="utf-8")
    assert "chrf100.gold_standard.scores.json`: stats: $.segments[0].chrf[2] (char 1-gram matches) is 55" in index
    assert "100.0" not in index and "0.872725" not in index
    assert sum("official card rejected" in w for w in report.warnings) == 3


# ---------------------------------------------------------------------------------------------------------------
# dates elsewhere: verification records and reviews


def test_a_verification_record_dated_in_the_future_is_refused():
    from mtboard.core.schema import VerificationRecord
    from mtboard.verify.record import content_problems

    (rec_path,) = APERTIUM.parent.glob("apertium-eng-spa__default__*.verification.json")  # the card's, or its ancestor's
    data = json.loads(rec_path.read_text(encoding="utf-8"))
    rec = VerificationRecord.model_validate(data)
    assert content_problems(rec, now=NOW) == []
    future = VerificationRecord.model_validate({**data, "verified_at": "2099-01-01T00:00:00Z"})
    assert content_problems(future, now=NOW) == [
        "$.verified_at is 2099-01-01T00:00:00Z, allowed: not after the validation time 2026-12-09T06:00:00Z + 10 min "
        "clock skew (a document cannot be dated in the future)"]


def test_the_date_rule_reads_dates_and_times():
    assert B.date_problem("2026-12-09", "$.d", NOW) is None  # a bare date is midnight UTC
    assert B.date_problem(str((NOW + timedelta(days=1)).date()), "$.d", NOW).startswith("$.d is 2026-12-10, allowed")
    assert B.date_problem("2026-12-09T07:05:00+01:00", "$.d", NOW) is None  # 06:05 UTC
    assert B.date_problem("yesterday", "$.d", NOW) == "$.d is 'yesterday', allowed: an ISO 8601 date"
    assert B.date_problem("2020-01-01", "$.d", NOW, earliest=None) is None


@pytest.mark.slow  # 3.8 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_negative_zero_card_does_not_reach_a_built_site(tmp_path):
    import shutil

    from mtboard.site.build import build_site

    root = tmp_path / "repo"
    (root / "submissions" / ES.name).mkdir(parents=True)
    shutil.copytree(ROOT / "corpora", root / "corpora")
    honest = committed("baseline-echo__baseline__", 20)  # a board needs one valid card
    shutil.copyfile(honest, root / "submissions" / ES.name / honest.name)
    bad = EMPTY.read_bytes().replace(b'"chrf_score":0,', b'"chrf_score":-0.0,')
    (root / "submissions" / ES.name / EMPTY.name).write_bytes(bad)
    report = build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs", resamples=20,
                        run_mkdocs=False)
    assert report.cards == 1 and len(report.rejected) == 1
    page_id = json.loads(bad)["run_card_hash"][:16]
    assert not (tmp_path / "docs" / "runs" / f"{page_id}.md").exists()
    assert not any("-0.0" in p.read_text(encoding="utf-8") for p in (tmp_path / "docs").rglob("*.md"))


# ---------------------------------------------------------------------------------------------------------------
# schema ranges (pydantic Field bounds, published in schemas/*.json)


@pytest.mark.parametrize("path,value,message", [
    (("results", 0, "chrf_score"), 100.5, "Input should be less than or equal to 100"),
    (("results", 0, "bleu_score"), -1.0, "Input should be greater than or equal to 0"),
    (("results", 0, "ter_score"), -0.5, "Input should be greater than or equal to 0"),
    (("results", 0, "difficulty"), 6, "Input should be less than or equal to 5"),
    (("results", 0, "stats", "chrf", 0), -1, "Input should be greater than or equal to 0"),
    (("results", 0, "stats", "bleu"), [0] * 11, "List should have at most 10 items after validation, not 11"),
    (("results", 0, "checks", "flags"), [{"rule": "length", "count": -2}], "greater than or equal to 0"),
    (("temperature",), -0.1, "Input should be greater than or equal to 0"),
    (("scores", "chrf_ci95"), [10.0, 100.5], "Input should be less than or equal to 100"),
    (("scores", "cost_adjusted_score"), 1.5, "Input should be less than or equal to 1"),
    (("scores", "mechanical", "usable"), -1, "Input should be greater than or equal to 0"),
    (("method", "concurrency"), 0, "Input should be greater than or equal to 1"),
    (("method", "price_in_per_mtok"), -0.5, "Input should be greater than or equal to 0"),
], ids=lambda v: "/".join(map(str, v)) if isinstance(v, tuple) else None)
def test_every_stored_number_has_a_range(path, value, message):
    from pydantic import ValidationError

    from mtboard.core.schema import RunCard

    data = json.loads(APERTIUM.read_bytes())
    RunCard.model_validate_json(json.dumps(data))  # the committed card is within every range (JSON mode, as loaded)
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(ValidationError) as exc:
        RunCard.model_validate_json(json.dumps(data))
    assert message in str(exc.value)


def test_scores_only_semantic_units_are_at_most_ten_thousand():
    data = _scores(APERTIUM)
    assert max(s["semantic_units"] for s in data["segments"]) <= 10_000
    bad = copy.deepcopy(data)
    bad["segments"][0]["semantic_units"] = 10_001
    (problem,) = check_scores_data(S.seal(bad), "x", now=NOW).problems
    assert problem.startswith("schema: x: $.segments[0].semantic_units: Input should be less than or equal to 10000")


# ---------------------------------------------------------------------------------------------------------------
# issue 32 review: facts and statistics tied together; TER coverage decided by the corpus (docs/SCORING_SPEC.md §9)


def _forgeries(good: dict) -> dict[str, dict]:
    """The reviewer's consistent-but-impossible edits of an honest 5-entry scores-only card (each re-aggregated and
    re-sealed): the worst covered segment's TER dropped (null), TER 0 edits everywhere, exact match everywhere, and
    the first segment marked without usable output while keeping its matches."""
    cards = {}
    ternull = copy.deepcopy(good)
    ternull["segments"][1]["ter"] = None  # entry 2: 15 edits on 18 words, the worst ratio of the five
    cards["ternull"] = ternull
    ter0 = copy.deepcopy(good)
    for s in ter0["segments"]:
        if s["ter"]:
            s["ter"][0] = 0.0
    cards["ter0"] = ter0
    exact = copy.deepcopy(good)
    for s in exact["segments"]:
        s["exact_match"] = True
    cards["exact"] = exact
    unusable = copy.deepcopy(good)
    unusable["segments"][0]["outcome"] = "no_usable_output"
    cards["unusable"] = unusable
    return {name: _reaggregate(data) for name, data in cards.items()}


def test_the_reviewers_forgeries_are_refused_with_the_secret_corpus_and_without(tmp_path):
    ids = [r.entry_id for r in load_card(APERTIUM).results[:5]]
    secret = SecretCorpus.load(_secret(tmp_path, ids))
    good = _secret_card(secret)
    assert [s["ter"] for s in good["segments"]] == [[7.0, 10.0], [15.0, 18.0], None, [11.0, 14.0], [7.0, 9.0]]
    assert good["scores"]["ter"] == 78.43137254901961  # (7 + 15 + 11 + 7) / (10 + 18 + 14 + 9) = 40 / 51
    forged = _forgeries(good)
    assert forged["ternull"]["scores"]["ter"] == 75.75757575757575  # 25 / 33: better by dropping a bad segment
    assert forged["ter0"]["scores"]["ter"] == 0.0
    assert forged["exact"]["scores"]["exact_match_rate"] == 1.0
    with_secret = check_scores_data(forged["ternull"], "x", secret=secret, now=NOW).problems
    assert with_secret[1:] == [
        "corpus: $.segments[1].ter is null, allowed: [edits, 18] (the reference of this entry in the secret corpus is "
        "within TER's coverage, decided by the reference alone: mtboard.score.metrics.ter.ter_covered)",
        "corpus: $.segments[*].ter is present on 3 of 5 entries (TER coverage 3/5), allowed: 4 of 5 (the entries "
        "whose reference in the secret corpus is within TER's coverage: mtboard.score.metrics.ter.ter_covered)"]
    # entry 2's reference has 20 chrF++ words (18 TER words, two full stops split off): covered even without corpus
    assert good["segments"][1]["chrf"][19] == 20
    assert with_secret[0] == check_scores_data(forged["ternull"], "x", now=NOW).problems[0] == (
        "stats: $.segments[1].ter is null, allowed: [edits, reference words] (the reference has at most 20 TER words "
        "(its chrF++ word 1-grams), within the cap of 20: TER-covered; docs/SCORING_SPEC.md §9 facts and statistics)")
    first = {name: check_scores_data(data, "x", now=NOW).problems[0] for name, data in forged.items()}
    facts = "docs/SCORING_SPEC.md §9 facts and statistics"
    # entry 1: a 5-word hypothesis (chrF++ words 5, so 3…5 TER words) against 10 reference words: ≥ 5 edits
    assert first["ter0"] == (
        "stats: $.segments[0].ter[0] (edits) is 0.0, allowed: ≥ 5 (a hypothesis of 5 chrF++ words has 3…5 TER words, "
        f"the reference 10: each missing or extra word is an edit; {facts})")
    c0 = good["segments"][0]["chrf"]
    assert c0[:2] == [33, 55]
    assert first["exact"] == (
        "stats: $.segments[0].chrf[0] (hypothesis char 1-grams) is 33, allowed: 55 ($.segments[0].exact_match is "
        f"true: the same words and characters as the reference's 55; {facts})")
    assert first["unusable"] == (
        "stats: $.segments[0].chrf[0] (hypothesis char 1-grams) is 33, allowed: 0 ($.segments[0].outcome is "
        f"no_usable_output, scored as the empty hypothesis; {facts})")


@pytest.mark.slow  # 2.5 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_none_of_the_forgeries_reaches_the_official_page_beside_an_honest_card(tmp_path):
    import shutil

    from mtboard.site.build import build_site

    root = tmp_path / "repo"
    shutil.copytree(ES, root / "submissions" / ES.name)
    official = root / "official" / ES.name
    official.mkdir(parents=True)
    ids = [r.entry_id for r in load_card(APERTIUM).results[:5]]
    secret_path = _secret(tmp_path, ids)
    good = _secret_card(SecretCorpus.load(secret_path))
    for name, data in {"honest": good, **_forgeries(good)}.items():
        (official / f"{name}.gold_standard.scores.json").write_text(json.dumps(data), encoding="utf-8")
    report = build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs",
                        official=root / "official", secret_segment=secret_path, resamples=50, run_mkdocs=False,
                        validate=False)
    rejected = sorted(w.split(": ")[1] for w in report.warnings if w.startswith("official card rejected"))
    assert rejected == [f"{ES.name}/{n}.gold_standard.scores.json" for n in ("exact", "ter0", "ternull", "unusable")]
    pages = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "docs" / "official").glob("*.md")}
    board = pages["test-secret-en-es-v1.0.0.md"]
    assert "78.4" in board  # the honest card's TER (40 / 51 edits per reference word)
    for forged in ("75.8", "0.0 |", "0.0</td>"):  # the forged TERs (25 / 33, 0) are nowhere on the board
        assert forged not in board
