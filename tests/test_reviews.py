"""Community review (issue 18 part 1; spec §5, §7.2–7.3): the seeded stratified sample, the review checks, the pass
rule and the tier gate, agreement between reviewers, and the board's "provisional" label.

Every review record here is written by the test into a temporary folder and says so (reviewer handles
``scripted-reviewer-*``): no review under ``reviews/`` is made up.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

import cli_support
from mtboard.review import community as rv
from mtboard.core.documents import card_json, load_card, seal, write_card
from mtboard.core.schema import QualityTier, ReviewRecord, RunCard
from mtboard.site import build_site
from mtboard.validate import make_context, validate_paths
from mtboard.validate.repository import check_scope
from mtboard.validate.reviews import REVIEW_CHECKS, validate_review

ROOT = Path(__file__).resolve().parents[1]
DATASET = "mtb-en-es-dev"
RUN = "apertium-eng-spa__default__d0f5919b5569"
CARD = ROOT / "submissions" / DATASET / f"{RUN}.json"
REVIEWERS = {"reviewers": [{"handle": "scripted-reviewer-a", "languages": ["es"], "added": "2026-12-01",
                            "added_by": "test-suite"},
                           {"handle": "scripted-reviewer-b", "languages": ["es-MX", "ca"], "added": "2026-12-01",
                            "added_by": "test-suite"},
                           {"handle": "scripted-reviewer-fr", "languages": ["fr"], "added": "2026-12-01",
                            "added_by": "test-suite"}]}
FIRST_DRAW = [350, 331, 330, 201, 210, 196, 206, 238, 250, 243]
"""First ten ids of the default sample of the Apertium EN→ES card (seed 20261201), by stratum then id: pinned so that
a change of the draw (which would orphan every committed review) fails here."""


@pytest.fixture(scope="module")
def card() -> RunCard:
    return load_card(CARD)


def _root(tmp_path: Path, card_path: Path = CARD, reviewers: dict | None = None) -> Path:
    root = tmp_path / "repo"
    (root / "submissions" / DATASET).mkdir(parents=True)
    shutil.copy(card_path, root / "submissions" / DATASET / card_path.name)
    (root / "reviews").mkdir()
    (root / "reviews" / "reviewers.yaml").write_text(yaml.safe_dump(reviewers or REVIEWERS), encoding="utf-8")
    return root


def _ratings(ids: list[int], plan: list[str]) -> list[dict]:
    return [{"entry_id": i, "rating": r} for i, r in zip(ids, plan)]


def _record(card: RunCard, reviews: list[dict], *, run: str = RUN, size: int = 30) -> dict:
    return {"record_version": 1, "card": f"{DATASET}/{run}.json", "run_card_hash": card.run_card_hash,
            "sample_seed": rv.DEFAULT_SEED, "sample_size": size, "reviews": reviews}


def _write(root: Path, data: dict | str, run: str = RUN) -> Path:
    p = root / "reviews" / DATASET / f"{run}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


PASSING = ["excellent"] * 13 + ["acceptable"] * 13 + ["gist"] * 3 + ["reject"]
"""30 ratings: usable 26/30 = 0.867 ≥ 0.80, reject 1/30 = 0.033 ≤ 0.05, excellent 13/30 = 0.433 < 0.50 →
confirms deployable, not fluent."""


# -- sampling -----------------------------------------------------------------------------------------------------


def test_sample_is_stratified_seeded_and_pinned(card):
    s = rv.sample_entries(card)
    ids = [r.entry_id for r in s]
    assert len(ids) == 30 == len(set(ids))
    assert ids[:10] == FIRST_DRAW
    assert ids == [r.entry_id for r in rv.sample_entries(card)]  # same seed, same sample
    assert ids != [r.entry_id for r in rv.sample_entries(card, seed=1)]
    # largest-remainder allocation over (domain, difficulty), by hand: floors of 30 × n/355 sum to 17, so the 13
    # largest remainders get one more. ui/1 (40 entries): 3.38 → 3. medical/3 and ui/2 (11): 0.93 → 1.
    # The 12th–14th remainders tie at 0.4366 (three 17-entry strata: medical/1, news/5, tech/2): stratum order
    # gives the last two places to medical/1 and news/5, so tech/2 stays at its floor 1.
    strata = Counter((r.domain.value, r.difficulty) for r in s)
    assert strata[("ui", 1)] == 3 and strata[("medical", 3)] == strata[("ui", 2)] == 1
    assert (strata[("medical", 1)], strata[("news", 5)], strata[("tech", 2)]) == (2, 2, 1)
    assert len(strata) == 22 and sum(strata.values()) == 30
    every = rv.sample_entries(card, size=1000)
    assert len(every) == 355


def test_review_sample_command_writes_sheet(tmp_path):
    out = tmp_path / "sheet.yaml"
    proc = cli_support.invoke(["review", "sample", str(CARD), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert "30 entries from 22 domain × difficulty strata (seed 20261201)" in proc.stdout
    sheet = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert sheet["card"] == f"{DATASET}/{RUN}.json" and sheet["sample_size"] == 30
    assert [e["entry_id"] for e in sheet["entries"]][:10] == FIRST_DRAW
    first = sheet["entries"][0]
    assert (first["source"], first["reference"], first["output"]) == ("Palau", "Palaos", "Palau")


# -- the rule and the gate ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("counts, entries, expected", [
    ({"excellent": 13, "acceptable": 13, "gist": 3, "reject": 1}, 30, QualityTier.deployable),
    ({"excellent": 13, "acceptable": 13, "gist": 3, "reject": 1}, 29, None),  # fewer than 30 entries
    ({"excellent": 12, "acceptable": 11, "gist": 7}, 30, None),  # usable 23/30 = 0.767 < 0.80
    ({"excellent": 14, "acceptable": 10, "gist": 4, "reject": 2}, 30, None),  # reject 2/30 = 0.067 > 0.05
    ({"excellent": 15, "acceptable": 13, "gist": 2}, 30, QualityTier.fluent),  # 28/30 usable, 15/30 excellent
    ({"excellent": 14, "acceptable": 14, "gist": 2}, 30, QualityTier.deployable),  # excellent 0.467 < 0.5
])
def test_confirmed_tier(counts, entries, expected):
    assert rv.confirmed_tier(counts, entries) == expected


def test_gated_tier_labels():
    yes = rv.ReviewSummary(["a"], 30, {}, 0.9, 0.0, 0.3, QualityTier.deployable)
    fluent = rv.ReviewSummary(["a"], 30, {}, 0.95, 0.0, 0.6, QualityTier.fluent)
    no = rv.ReviewSummary(["a"], 30, {}, 0.5, 0.2, 0.1, None)
    assert rv.gated_tier(QualityTier.functional, None) == ("functional", False)
    assert rv.gated_tier(QualityTier.deployable, None) == ("deployable (provisional)", True)
    assert rv.gated_tier(QualityTier.deployable, no) == ("deployable (provisional)", True)
    assert rv.gated_tier(QualityTier.deployable, yes) == ("deployable (reviewed)", False)
    assert rv.gated_tier(QualityTier.fluent, yes) == ("deployable (reviewed; fluent provisional)", True)
    assert rv.gated_tier(QualityTier.fluent, fluent) == ("fluent (reviewed)", False)


def test_community_verified_needs_an_attested_gold_row_and_a_confirming_review(tmp_path):
    from mtboard.ledger.load import _attested_gold

    yes = rv.ReviewSummary(["a"], 30, {}, 0.9, 0.0, 0.3, QualityTier.deployable)
    no = rv.ReviewSummary(["a"], 30, {}, 0.5, 0.2, 0.1, None)
    assert rv.community_verified(True, yes) is True
    assert rv.community_verified(True, None) is False
    assert rv.community_verified(True, no) is False
    assert rv.community_verified(False, yes) is False
    # the committed repository has no official/ folder: no card has an attested gold row
    card = load_card(next((ROOT / "submissions" / "mtb-en-es-dev").glob("apertium-*[0-9a-f].json")))
    assert _attested_gold(card, tmp_path, "owner/repo") is False


def test_pass_rule_table_matches_scoring_spec():
    text = (ROOT / "docs" / "SCORING_SPEC.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| confirms (deployable|fluent) \| (.+?) \|$", text, re.M))
    for tier, rule in rv.PASS_RULES.items():
        cells = [c.strip() for c in rows[tier.value].split("|")]
        assert cells == [f"≥ {rule.min_usable:.2f}", f"≤ {rule.max_reject:.2f}", f"≥ {rule.min_excellent:.2f}",
                         f"≥ {rv.MIN_REVIEWED}"], tier


def test_agreement_hand_checked():
    # 6 shared entries: identical on 4 (ids 1-4); id 5 one step apart; id 6 three steps apart
    a = {1: "excellent", 2: "excellent", 3: "acceptable", 4: "reject", 5: "gist", 6: "reject", 9: "gist"}
    b = {1: "excellent", 2: "excellent", 3: "acceptable", 4: "reject", 5: "acceptable", 6: "excellent"}
    ag = rv.agreement("a", {k: rv.Rating(v) for k, v in a.items()}, "b", {k: rv.Rating(v) for k, v in b.items()})
    assert (ag.n, ag.exact, ag.within_one) == (6, 4 / 6, 5 / 6)
    # p_o = 4/6; a: exc 2, acc 1, rej 2, gist 1; b: exc 3, acc 2, rej 1 → p_e = (2·3 + 1·2 + 2·1)/36 = 10/36
    assert ag.kappa == pytest.approx((4 / 6 - 10 / 36) / (1 - 10 / 36))


# -- the checks ---------------------------------------------------------------------------------------------------


def test_valid_record_passes_every_check_and_confirms_deployable(tmp_path, card):
    root = _root(tmp_path)
    ids = [r.entry_id for r in rv.sample_entries(card)]
    p = _write(root, _record(card, [{"reviewer": "scripted-reviewer-a", "date": "2026-12-01",
                                     "ratings": _ratings(ids, PASSING)}]))
    rep, record, c = validate_review(p, root)
    assert rep.ok, rep.problems
    assert set(rep.checks.values()) == {"pass"} and list(rep.checks) == list(REVIEW_CHECKS)
    s = rv.summarise(record, rep.accepted)
    assert s.counts == {"reject": 1, "gist": 3, "acceptable": 13, "excellent": 13}
    assert (s.entries, s.confirms) == (30, QualityTier.deployable)
    assert s.usable == pytest.approx(26 / 30) and s.reject == pytest.approx(1 / 30)


def test_a_review_cannot_choose_its_entries_through_size_or_seed(tmp_path, card):
    """The sample is the project's: a larger sample_size must be rated in full, another seed is refused (a reviewer
    could otherwise rate the 30 easiest entries of the whole card, or shop for a seed)."""
    root = _root(tmp_path)
    everything = [r.entry_id for r in rv.sample_entries(card, 355)]
    easiest = sorted(everything, key=lambda i: -next(r.chrf_score or 0 for r in card.results if r.entry_id == i))[:30]
    p = _write(root, _record(card, [{"reviewer": "scripted-reviewer-a", "date": "2026-12-01",
                                     "ratings": _ratings(easiest, ["excellent"] * 30)}], size=355))
    rep, _, _ = validate_review(p, root)
    assert rep.checks["sample"] == "fail" and not rep.accepted
    assert any(f"{len(everything) - 30} entries of the sample not rated" in str(q) for q in rep.problems), rep.problems
    other = 7
    ids = [r.entry_id for r in rv.sample_entries(card, 30, other)]
    data = _record(card, [{"reviewer": "scripted-reviewer-a", "date": "2026-12-01", "ratings": _ratings(ids, PASSING)}])
    data["sample_seed"] = other
    rep, _, _ = validate_review(_write(root, data), root)
    assert rep.checks["sample"] == "fail"
    assert any(f"sample_seed {other} is not the project's seed {rv.DEFAULT_SEED}" in str(q) for q in rep.problems)


def test_two_reviewers_agreement_pooled(tmp_path, card):
    root = _root(tmp_path)
    ids = [r.entry_id for r in rv.sample_entries(card)]
    b_plan = list(PASSING)
    b_plan[0], b_plan[29] = "acceptable", "gist"  # two disagreements, each one step
    p = _write(root, _record(card, [
        {"reviewer": "scripted-reviewer-a", "date": "2026-12-01", "ratings": _ratings(ids, PASSING)},
        {"reviewer": "scripted-reviewer-b", "date": "2026-12-02", "ratings": _ratings(ids, b_plan)}]))
    rep, record, _ = validate_review(p, root)
    assert rep.ok, rep.problems  # b is listed for es-MX: the primary subtag matches the card's es
    s = rv.summarise(record, rep.accepted)
    assert s.n_ratings == 60 and s.entries == 30
    assert s.counts == {"reject": 1, "gist": 7, "acceptable": 27, "excellent": 25}
    (ag,) = s.agreement
    assert (ag.n, ag.exact, ag.within_one) == (30, 28 / 30, 1.0)
    proc = cli_support.invoke(["review", "check", "--root", str(root)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "agreement scripted-reviewer-a / scripted-reviewer-b: 30 shared entries, exact 93%" in proc.stdout


def test_checks_refuse_bad_records(tmp_path, card):
    root = _root(tmp_path)
    ids = [r.entry_id for r in rv.sample_entries(card)]
    outside = next(r.entry_id for r in card.results if r.entry_id not in ids)

    def problems(data) -> dict[str, list[str]]:
        rep, _, _ = validate_review(_write(root, data), root)
        out: dict[str, list[str]] = {}
        for pr in rep.problems:
            out.setdefault(pr.check, []).append(f"{pr.field}: {pr.message}")
        return out

    good = {"reviewer": "scripted-reviewer-a", "date": "2026-12-01", "ratings": _ratings(ids, PASSING)}
    assert problems(_record(card, [good])) == {}
    unlisted = dict(good, reviewer="someone-else")
    assert list(problems(_record(card, [unlisted]))) == ["reviewers"]
    french = dict(good, reviewer="scripted-reviewer-fr")  # listed, but for fr only
    assert list(problems(_record(card, [french]))) == ["reviewers"]
    picked = dict(good, ratings=_ratings(ids[:29] + [outside], PASSING))
    got = problems(_record(card, [picked]))
    assert list(got) == ["sample"] and f"first: {outside}" in got["sample"][0]
    assert list(problems(_record(card, [dict(good, ratings=_ratings([999999], ["gist"]))]))) == ["entries", "sample"]
    assert "entries" in problems(_record(card, [dict(good, ratings=_ratings([ids[0], ids[0]], ["gist", "reject"]))]))
    assert list(problems(_record(card, [good, good]))) == ["entries"]
    assert list(problems(_record(card, [good], size=20))) == ["sample"]
    stale = _record(card, [good])
    stale["run_card_hash"] = "0" * 64
    assert list(problems(stale)) == ["card"]
    wrong = _record(card, [good])
    wrong["card"] = f"{DATASET}/baseline-echo__baseline__32e6f8fa41bf.json"
    assert "path" in problems(wrong)
    assert list(problems(dict(_record(card, [good]), extra=1))) == ["schema"]
    assert list(problems(_record(card, [dict(good, ratings=_ratings(ids, ["fine"] * 30))]))) == ["schema"]
    assert list(problems("a: 1\na: 2\n")) == ["yaml"]  # duplicate key
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    assert list(problems(bomb)) == ["yaml"]
    assert list(problems("x" * (rv.MAX_REVIEW_BYTES + 1))) == ["yaml"]


def test_misplaced_record_fails_file_check(tmp_path, card):
    root = _root(tmp_path)
    p = root / "reviews" / "Some Folder" / "x.yaml"
    p.parent.mkdir(parents=True)
    p.write_text("record_version: 1\n", encoding="utf-8")
    rep, _, _ = validate_review(p, root)
    assert [x.check for x in rep.problems] == ["file"] and rep.checks["yaml"] == "skip"


@pytest.mark.slow  # 1.9 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_repository_validation_reports_review_problems(tmp_path, card):
    root = _root(tmp_path)
    ctx = make_context(root, ROOT / "corpora")
    ctx.recompute = False
    report = validate_paths(None, ctx)
    assert report.ok, [str(p) for p in report.all_problems()]
    ids = [r.entry_id for r in rv.sample_entries(card)]
    _write(root, _record(card, [{"reviewer": "nobody-listed", "date": "2026-12-01",
                                 "ratings": _ratings(ids, PASSING)}]))
    report = validate_paths(None, ctx)
    assert [(p.check, p.field) for p in report.repository] == [("reviews", "$.reviews[0].reviewer")]


def test_scope_lets_contributors_add_review_records_only():
    problems, todo = check_scope([("A", f"reviews/{DATASET}/{RUN}.yaml")], allow_outside=False)
    assert problems == [] and todo == []
    problems, _ = check_scope([("M", "reviews/reviewers.yaml")], allow_outside=False)
    assert [p.check for p in problems] == ["scope"]
    problems, _ = check_scope([("A", f"reviews/{DATASET}/evil name.yaml")], allow_outside=False)
    assert [p.check for p in problems] == ["scope"]


def test_committed_reviewers_file_and_schemas():
    rv.load_reviewers(ROOT / "reviews" / "reviewers.yaml")  # reads under the strict schema
    for name in ("review-record", "reviewers"):
        schema = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
        assert schema["additionalProperties"] is False
    # no review record is committed: every review must come from a person through a pull request
    assert [p for p in (ROOT / "reviews").rglob("*") if p.is_file()] == [ROOT / "reviews" / "reviewers.yaml"]


# -- the board ----------------------------------------------------------------------------------------------------


def _claims_deployable(card: RunCard) -> RunCard:
    """The committed card re-sealed after editing its composite and tier to claim deployable (the validator would
    refuse it: the composite no longer recomputes; the site is built without validation to show the gate)."""
    data = card_json(card)
    data["scores"]["composite"] = 0.75
    data["scores"]["quality_tier"] = "deployable"
    data["method_config"]["qualityTier"] = "deployable"
    data["run_card_hash"] = ""
    return seal(RunCard.model_validate_json(json.dumps(data)))


@pytest.mark.slow  # 6.3 CPU-s, 9 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_resealed_deployable_card_shows_provisional_until_a_passing_review(tmp_path, card):
    claimed = _claims_deployable(card)
    root = tmp_path / "repo"
    run = f"apertium-eng-spa__default__{claimed.run_card_hash[:12]}"
    path = root / "submissions" / DATASET / f"{run}.json"
    path.parent.mkdir(parents=True)
    write_card(claimed, path)
    (root / "reviews").mkdir()
    (root / "reviews" / "reviewers.yaml").write_text(yaml.safe_dump(REVIEWERS), encoding="utf-8")

    def board_and_run() -> tuple[str, str]:
        rep = build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs", validate=False,
                         run_mkdocs=False, build_time="2026-12-01 00:00 UTC")
        docs = rep.docs
        board = next(p for p in docs.rglob("*.md") if "mtb-en-es-dev" in p.name and "hard" not in p.parts)
        run_page = next((docs / "runs").glob(f"{claimed.run_card_hash[:16]}.md"))
        return board.read_text(encoding="utf-8"), run_page.read_text(encoding="utf-8")

    board, page = board_and_run()
    assert "deployable (provisional)" in board and "deployable (provisional)" in page
    assert "deployable (reviewed)" not in board + page
    assert "No community review yet" in page
    ids = [r.entry_id for r in rv.sample_entries(claimed)]
    _write(root, _record(claimed, [{"reviewer": "scripted-reviewer-a", "date": "2026-12-01",
                                    "ratings": _ratings(ids, PASSING)}], run=run), run=run)
    board, page = board_and_run()
    assert "deployable (reviewed)" in board and "deployable (reviewed)" in page
    assert "deployable (provisional)" not in board + page
    assert "30 sampled entries rated by scripted-reviewer-a (30 ratings)" in page
    assert "The ratings confirm <strong>deployable</strong>" in page
    assert "community-verified" not in page.split("## Entries")[0]  # no attested gold row: not reachable yet


# -- a card smaller than the sample (issue 18 review, item 6) ----------------------------------------------------

COACHED = next((ROOT / "submissions" / DATASET).glob("gemma-3-270m-q4-k-m.gguf__coached-few-shot__*.json"))
SMALL_NOTE = ("This card has only 12 reviewable entries, so the sample is all of them (12, not the 30 asked for). A "
              "review of fewer than 30 entries cannot confirm a tier (docs/SCORING_SPEC.md §5.1): its ratings are "
              "shown, and the card's deployable or fluent label stays provisional whatever they are.")


SIZE5_NOTE = ("The sample (5 entries) is below 30. A review of fewer than 30 entries cannot confirm a tier "
              "(docs/SCORING_SPEC.md §5.1): its ratings are shown, and the card's deployable or fluent label stays "
              "provisional whatever they are.")


def test_a_sample_asked_smaller_than_the_card_says_only_that_it_is_below_30(tmp_path):
    """Validator review: ``--size 5`` on the 12-entry coached card drew 5 of 12; the note must not claim the card
    has only 5 entries. The default size (30 > 12) keeps the card-too-small note."""
    assert len(rv.reviewable(load_card(COACHED))) == 12
    out = tmp_path / "sheet5.yaml"
    proc = cli_support.invoke(["review", "sample", str(COACHED), "--size", "5", "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    sheet = yaml.safe_load(out.read_text(encoding="utf-8"))
    strata = len({(e["domain"], e["difficulty"]) for e in sheet["entries"]})
    assert proc.stdout.splitlines()[-2:] == [
        f"wrote {out}: 5 entries from {strata} domain × difficulty strata (seed 20261201)", SIZE5_NOTE]
    assert (sheet["sample_size"], sheet["entries_drawn"], sheet["can_confirm_tier"], sheet["note"]) == (
        5, 5, False, SIZE5_NOTE)
    assert "only" not in SIZE5_NOTE and "12" not in SIZE5_NOTE
    out = tmp_path / "sheet30.yaml"
    proc = cli_support.invoke(["review", "sample", str(COACHED), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == SMALL_NOTE
    assert SMALL_NOTE.startswith("This card has only 12 reviewable entries, so the sample is all of them (12, not "
                                 "the 30 asked for).")
    assert rv.sample_note(12, 12) == ("The sample (12 entries) is below 30. A review of fewer than 30 entries "
                                          "cannot confirm a tier (docs/SCORING_SPEC.md §5.1): its ratings are shown, "
                                          "and the card's deployable or fluent label stays provisional whatever "
                                          "they are.")
    assert rv.sample_note(30, 30) is None and rv.sample_note(30, 45) is None


@pytest.mark.slow  # 5.9 CPU-s, 7 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_card_with_fewer_entries_than_a_review_needs_says_so(tmp_path, card):
    small = load_card(COACHED)
    assert len(small.results) == 12 and len(rv.reviewable(small)) == 12
    out = tmp_path / "sheet.yaml"
    proc = cli_support.invoke(["review", "sample", str(COACHED), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    strata = len({(r.domain, r.difficulty) for r in small.results})
    assert proc.stdout.splitlines()[-2:] == [
        f"wrote {out}: 12 entries from {strata} domain × difficulty strata (seed 20261201)", SMALL_NOTE]
    sheet = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert (sheet["sample_size"], sheet["entries_drawn"], sheet["can_confirm_tier"], sheet["note"]) == (
        30, 12, False, SMALL_NOTE)
    assert len(sheet["entries"]) == 12
    big = rv.sheet(card, f"{DATASET}/{RUN}.json")
    assert (big["entries_drawn"], big["can_confirm_tier"], big["note"]) == (30, True, None)
    # ratings of all 12, all excellent, still confirm nothing
    assert rv.confirmed_tier({"excellent": 12}, 12) is None

    root = tmp_path / "repo"
    (root / "submissions" / DATASET).mkdir(parents=True)
    shutil.copy(COACHED, root / "submissions" / DATASET / COACHED.name)
    shutil.copy(CARD, root / "submissions" / DATASET / CARD.name)
    rep = build_site(root / "submissions", ROOT / "corpora", tmp_path / "out", tmp_path / "docs", validate=False,
                     run_mkdocs=False, build_time="2026-12-01 00:00 UTC")
    # issue 35: one review page (review.html?run=<page id>); each run's sample is in its data file, key "review"
    page = (rep.docs / "review.md").read_text(encoding="utf-8")
    assert page.startswith('---\ntitle: "Review a run"\nsearch:\n  exclude: true\n') and "\n---\n\n# Review a run\n" in page
    assert '<p class="admonition-title">This review cannot confirm a tier</p>' in page
    assert 'data-runs="data/runs/"' in page and "data-hash" not in page

    def review(c):  # noqa: ANN001, ANN202
        raw = gzip.decompress((rep.docs / "data" / "runs" / f"{c.run_card_hash[:16]}.json.gz").read_bytes())
        return json.loads(raw)["review"]

    sm = review(small)
    assert (sm["note"], sm["size"], sm["drawn"], sm["hash"], sm["seed"]) == (
        SMALL_NOTE, 30, 12, small.run_card_hash, rv.DEFAULT_SEED)
    # the 12 entries to rate, filled in by review.js from the run's data file (issue 35 item 1)
    assert sorted(sm["ids"]) == sorted(r.entry_id for r in small.results)
    assert sm["card"] == f"{DATASET}/{COACHED.name}" and sm["record"] == f"reviews/{DATASET}/{COACHED.stem}.yaml"
    assert sm["file"] == f"{COACHED.stem}.yaml" and sm["run_page"] == f"runs/{small.run_card_hash[:16]}.html"
    big_rv = review(card)
    assert (big_rv["note"], big_rv["drawn"]) == (None, 30)
    assert big_rv["ids"] == [r.entry_id for r in rv.sample_entries(card)]
    # the old per-run URL is a small redirect to the one page
    stub = (rep.docs / "review" / f"{small.run_card_hash[:16]}.html").read_text(encoding="utf-8")
    assert f'url=../review.html?run={small.run_card_hash[:16]}"' in stub and len(stub.encode()) < 500


def test_a_review_dated_in_the_future_is_not_accepted(tmp_path, card):
    """Issue 32 item 3: every stored date is checked against the validation time (the ``dates`` check)."""
    from datetime import UTC, datetime

    root = _root(tmp_path)
    ids = [r.entry_id for r in rv.sample_entries(card)]
    p = _write(root, _record(card, [{"reviewer": "scripted-reviewer-a", "date": "2099-01-01",
                                     "ratings": _ratings(ids, PASSING)}]))
    rep, _, _ = validate_review(p, root, now=datetime(2026, 12, 2, 6, 0, tzinfo=UTC))
    assert rep.checks["dates"] == "fail" and rep.accepted == []
    assert [(p.check, p.field, p.message) for p in rep.problems] == [
        ("dates", "$.reviews[0].date", "$.reviews[0].date is 2099-01-01, allowed: not after the validation time "
         "2026-12-02T06:00:00Z + 10 min clock skew (a document cannot be dated in the future)")]
