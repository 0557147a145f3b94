"""Issue 39 item 1: the submission gate (spec §9.1, §9.2, §9.5) — the validator's ``submission`` check.

Table-driven: one case per rule of :data:`mtboard.validate.submission.RULES`. Each case takes a real committed card
(and, for the GDS rules, the committed verification record beside it), checks that the untouched card meets the rule
at that tier, removes the one item the rule asks for, re-seals the card (``validate_support.reseal``: what a
contributor's tool would do) and asserts that the gate refuses it with a ``submission`` problem naming the rule and
its section. Cards are placed at their canonical path in a scratch repository that reads the committed corpora, so
``file_name`` and the records beside them behave as under ``submissions/``. No committed card has a gold row yet (the
repository has no ``official/``): the governance case builds the path's output for the committed card — its
gold_standard scores-only card, made as ``mtboard verify --segment gold_standard`` makes one, and a bundle file. Recomputation is switched off (the
metrics are not what these cases change; tests/test_validity.py recomputes every committed card).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from mtboard.core.documents import loads_card
from mtboard.core.errors import InputError
from mtboard.run.submit import pr_body
from mtboard.validate import canonical_relpath, make_context, validate_card, validate_paths
from mtboard.validate.report import TIER_NAMES, gate_markdown, render_markdown, render_text
from mtboard.validate.submission import GDS, GOLD, RULES, SELF, rules_table_markdown

import validate_support as vs

ROOT = vs.ROOT
SUB = ROOT / "submissions"
GEMMA_ES = SUB / "mtb-en-es-dev" / "gemma-3-270m-q4-k-m.gguf__few-shot__e8d0f7148c86.json"
COACHED = SUB / "mtb-en-es-dev" / "gemma-3-270m-q4-k-m.gguf__coached-few-shot__f7a947e56d7b.json"
ECHO_ES = SUB / "mtb-en-es-dev" / "baseline-echo__baseline__32e6f8fa41bf.json"
APERTIUM_GDS = SUB / "mtb-en-es-dev" / "apertium-eng-spa__default__d0f5919b5569.json"
"""Re-scored from the card that ``apertium-eng-spa__default__fe31216fd883.verification.json`` verified."""
RECORD = SUB / "mtb-en-es-dev" / "apertium-eng-spa__default__fe31216fd883.verification.json"


def _dev_entry() -> dict[str, Any]:
    """The first development entry of the committed EN→ES corpus with a source of at least 16 characters."""
    corpus = json.loads((ROOT / "corpora" / "mtb-en-es-dev.json").read_bytes())
    return next(e for e in corpus["entries"] if e["segment"] == "development" and len(e["source"]) >= 16)


def _coach_with_entry(d: dict[str, Any], declare: bool) -> None:
    e = _dev_entry()
    text = d["method_config"]["coachingPrompt"]
    text += f"\nEnglish: {e['source']}\nSpanish: {e['reference']}\n"
    if declare:
        text += f"# development entries: {e['id']}\n"
    d["method_config"]["coachingPrompt"] = text
    d["coaching_data_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plugin(d: dict[str, Any], *, record: bool) -> None:
    """The method's backend as a third-party plugin (not built in): with ``record``, a plugin record no maintainer
    approved in plugins/approved.yaml, and notes describing the method."""
    d["method"]["backend"] = "acme"
    d["method"]["spec"] = "acme:eng-spa"
    if record:
        d["method"]["plugin"] = {"distribution": "mtboard-plugin-acme", "version": "1.0.0",
                                 "files_sha256": "0" * 64, "entry_point": "acme_mt:AcmeBackend"}
        d["notes"] = "Acme rule-based engine; limits: no context across entries."


def _del(*path: str) -> Callable[[dict[str, Any]], None]:
    def go(d: dict[str, Any]) -> None:
        for k in path[:-1]:
            d = d[k]
        d.pop(path[-1])
    return go


def _set(value: Any, *path: str) -> Callable[[dict[str, Any]], None]:
    def go(d: dict[str, Any]) -> None:
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return go


def _held_out(d: dict[str, Any]) -> None:
    d["dataset"]["segment"] = "held_out"
    for r in d["results"]:
        r["segment"] = "held_out"


def _no_cost(d: dict[str, Any]) -> None:
    d["totals"]["total_cost_usd"] = None
    d["totals"]["cost_per_entry_usd"] = None


# (rule id, section, committed card, tier (None: the tier the card's evidence claims), keep the record beside it,
#  the mutation removing the item)
CASES = [
    ("run-card", "§9.1.1", GEMMA_ES, None, False, _del("scores")),
    ("development-only", "§9.2.1", ECHO_ES, None, False, _held_out),
    ("development-use-declared", "§9.2.2", COACHED, None, False, lambda d: _coach_with_entry(d, declare=False)),
    ("cost-report", "§9.1.4", APERTIUM_GDS, None, True, _no_cost),
    ("method-readme", "§9.1.5", APERTIUM_GDS, None, True, lambda d: _plugin(d, record=False)),
    ("installable", "§9.1.2, §9.5", APERTIUM_GDS, None, True, lambda d: _plugin(d, record=True)),
    ("dependencies-pinned", "§9.1.3", APERTIUM_GDS, None, True, _set(None, "method", "engine_version")),
    ("reproducible", "§9.2.3", APERTIUM_GDS, GDS, False, lambda d: None),
    ("governance", "§9.5, §8.2", APERTIUM_GDS, GOLD, True, lambda d: None),
]


def test_one_case_per_rule():
    assert [c[0] for c in CASES] == [r.id for r in RULES]
    assert [c[1] for c in CASES] == [r.section for r in RULES]


def _place(root: Path, raw: bytes, *, record: bool, fallback: Path | None = None) -> Path:
    """The card at its canonical path under ``root/submissions`` (``fallback``'s path for a card that does not
    parse), with the committed record beside it when ``record``; the repository's coaching/ and plugins/ folders
    beside."""
    for sub in ("coaching", "plugins"):
        if not (root / sub).exists():
            shutil.copytree(ROOT / sub, root / sub)
    try:
        path = root / canonical_relpath(loads_card(raw, "card"))
    except InputError:
        assert fallback is not None
        path = root / fallback.relative_to(ROOT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    if record:
        shutil.copyfile(RECORD, path.parent / RECORD.name)
    return path


def _gold(root: Path, card_path: Path) -> Path:
    """What the governance path leaves for a card (spec §8.2, §9.5): its gold_standard scores-only card under
    ``official/<dataset id>/<card stem>.gold_standard.scores.json`` (made from the card as ``mtboard verify
    --segment gold_standard`` makes one, :func:`mtboard.score.scores_card.from_run_card`) and a Sigstore bundle file
    beside it (its signature is the official board's to verify, not the gate's)."""
    from mtboard.core.schema import Segment
    from mtboard.score import scores_card as S

    card = loads_card(card_path.read_bytes(), "card")
    sc = S.from_run_card(card, card, salt=bytes(32), segment=Segment.gold_standard, corpus_sha256="e" * 64,
                         corpus_version="1.0.0")
    out = root / "official" / card.dataset.id / f"{card_path.stem}.gold_standard.scores.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(sc.model_dump(mode="json")), encoding="utf-8")
    shutil.copyfile(ROOT / "tests" / "fixtures" / "attestation" / "reusable-workflow-attestation.sigstore.json",
                    out.with_name(out.name + ".sigstore"))
    return out


def _ctx(root: Path):
    ctx = make_context(root, ROOT / "corpora")
    ctx.recompute = False
    return ctx


def _rule(report, rule_id):
    return next(r for r in report.gate.rules if r.id == rule_id)


@pytest.mark.parametrize("rule_id,section,card,tier,record,mutate", CASES, ids=[c[0] for c in CASES])
def test_the_gate_refuses_a_card_missing_the_item(tmp_path, rule_id, section, card, tier, record, mutate):
    raw = card.read_bytes()
    # the committed card meets the rule (with the committed record beside it) … — except the governance rule: no
    # committed card has a gold_standard scores-only card under official/ yet (the repository has no official/)
    placed = _place(tmp_path / "before", raw, record=True)
    if rule_id == "governance":  # no committed card has a gold row yet (no official/): the governance path's output
        assert not (ROOT / "official").exists()
        _gold(tmp_path / "before", placed)
    before = validate_card(placed, _ctx(tmp_path / "before"), tier=tier)
    assert _rule(before, rule_id).met is True, _rule(before, rule_id).detail
    assert before.ok, [str(p) for p in before.problems]
    # … and the same card with the item removed is refused, naming the rule and its section
    data = json.loads(raw)
    mutate(data)
    sealed = vs.dump(vs.reseal(data))
    after = validate_card(_place(tmp_path / "after", sealed, record=record, fallback=card), _ctx(tmp_path / "after"),
                          tier=tier)
    assert not after.ok
    assert _rule(after, rule_id).met is False
    assert _rule(after, rule_id).level == "required"
    if rule_id == "run-card":  # refused by the checks it reports, which the gate names (no second problem)
        assert [p.check for p in after.problems] == ["schema"]
        assert _rule(after, rule_id).detail == "the check(s) schema failed"
        assert after.checks["submission"] == "pass" and after.gate.eligible == {SELF: False, GDS: False, GOLD: False}
        return
    assert after.checks["submission"] == "fail"
    named = [p for p in after.problems if p.check == "submission" and p.message.startswith(f"{rule_id} ({section})")]
    assert len(named) == 1, [str(p) for p in after.problems]
    assert f" is required for a {TIER_NAMES[tier or (GDS if record else SELF)]} card: " in named[0].message


def test_the_tier_comes_from_the_evidence(tmp_path):
    """The apertium card re-scored from a verified card claims GDS with the record beside it and is then held to the
    GDS rules; without the record it is a self-benchmarked card."""
    raw = APERTIUM_GDS.read_bytes()
    with_record = validate_card(_place(tmp_path / "a", raw, record=True), _ctx(tmp_path / "a"))
    assert with_record.ok and with_record.gate.tier == GDS
    assert _rule(with_record, "reproducible").detail.startswith(f"{RECORD.name}: re-run composite ")
    assert with_record.gate.eligible == {SELF: True, GDS: True, GOLD: False}
    alone = validate_card(_place(tmp_path / "b", raw, record=False), _ctx(tmp_path / "b"))
    assert alone.ok and alone.gate.tier == SELF
    assert _rule(alone, "reproducible").met is False and _rule(alone, "reproducible").level == "-"


def test_a_gold_row_claims_the_community_tier(tmp_path):
    """With its gold_standard scores-only card and bundle under official/, the apertium card claims the community
    tier and meets every rule asked there; a gold card of another card's numbers fails the governance rule's link
    check and so claims nothing."""
    path = _place(tmp_path, APERTIUM_GDS.read_bytes(), record=True)
    gold = _gold(tmp_path, path)
    rep = validate_card(path, _ctx(tmp_path))
    assert rep.ok and rep.gate.tier == GOLD and rep.gate.eligible == {SELF: True, GDS: True, GOLD: True}
    assert _rule(rep, "governance").detail == (f"{gold.name} with its bundle (the official board verifies the "
                                               "attestation)")
    data = json.loads(gold.read_text(encoding="utf-8"))
    data["card_fingerprint"] = "f" * 64  # another method's gold row filed under this card's name
    gold.write_text(json.dumps(data), encoding="utf-8")
    rep = validate_card(path, _ctx(tmp_path))
    # a gold card that does not hold claims nothing: the development card stays at the tier its record earns (GDS)
    # and is not refused for a bad file under official/ (the official board refuses that file itself)
    assert rep.ok and rep.gate.tier == GDS and _rule(rep, "governance").met is False
    assert _rule(rep, "governance").detail.startswith(f"{gold.name} does not validate (")
    assert rep.gate.eligible == {SELF: True, GDS: True, GOLD: False}


def test_a_declared_development_entry_passes(tmp_path):
    data = json.loads(COACHED.read_bytes())
    _coach_with_entry(data, declare=True)
    sealed = vs.dump(vs.reseal(data))
    rep = validate_card(_place(tmp_path, sealed, record=False), _ctx(tmp_path))
    rule = _rule(rep, "development-use-declared")
    assert rule.met is True and rule.detail == "1 development entry used and declared"
    assert not [p for p in rep.problems if p.check == "submission" and "development-use" in p.message]


def test_a_missing_readme_is_a_warning_for_a_self_benchmarked_card(tmp_path):
    data = json.loads(ECHO_ES.read_bytes())
    _plugin(data, record=False)
    sealed = vs.dump(vs.reseal(data))
    rep = validate_card(_place(tmp_path, sealed, record=False), _ctx(tmp_path))
    assert rep.gate.tier == SELF
    readme = _rule(rep, "method-readme")
    assert readme.met is False and readme.level == "warning"
    assert not [p for p in rep.problems if p.check == "submission" and p.message.startswith("method-readme")]
    assert any(n.startswith("submission: method-readme (§9.1.5) missed (a warning") for n in rep.notes)


@pytest.mark.slow  # 5.2 CPU-s, 7 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_committed_cards_pass_the_gate():
    """Every committed card passes at the tier it claims: 2 claim GDS (re-scored from verified cards), 39 are
    self-benchmarked (2 of them diagnostic-segment cards, issue 40 item 6); none carries a gold card."""
    ctx = make_context(ROOT)
    ctx.recompute = False
    report = validate_paths([SUB], ctx, repository_checks=False)
    assert len(report.files) == 54  # 39 + 13 of the dialogue-history sweep + 2 diagnostic cards (issue 40)
    assert all(f.checks["submission"] == "pass" for f in report.files), \
        [(f.path, [str(p) for p in f.problems]) for f in report.files if f.checks["submission"] != "pass"]
    tiers = sorted(f.gate.tier for f in report.files)
    assert tiers.count(GDS) == 2 and tiers.count(SELF) == 52  # 39 + 13 sweep cards (issue 40)


def test_an_unpriced_self_benchmarked_card_passes_with_a_warning(tmp_path):
    """A card whose provider reported no usage states its cost as unknown ("not priced"): a warning for a
    self-benchmarked run (tests/test_validity.py::test_no_usage_reported_means_unknown_cost keeps it valid)."""
    data = json.loads(GEMMA_ES.read_bytes())
    _no_cost(data)
    rep = validate_card(_place(tmp_path, vs.dump(vs.reseal(data)), record=False), _ctx(tmp_path))
    assert rep.ok and rep.gate.tier == SELF
    assert _rule(rep, "cost-report").met is False and _rule(rep, "cost-report").level == "warning"
    assert rep.gate.eligible == {SELF: True, GDS: False, GOLD: False}


def test_pr_body_and_markdown_list_rules_met_and_missed(tmp_path):
    data = json.loads(GEMMA_ES.read_bytes())
    _no_cost(data)
    sealed = vs.dump(vs.reseal(data))
    path = _place(tmp_path, sealed, record=False)
    rep = validate_card(path, _ctx(tmp_path))
    template = (ROOT / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text(encoding="utf-8")
    body = pr_body(loads_card(sealed, "card"), template, rep.gate)
    section = body.split("## Submission gate (spec §9.1, §9.2, §9.5)\n", 1)[1]
    assert "Checked as a **self-benchmarked** submission" in section
    assert "- [x] `run-card` (§9.1.1, required): met — every check passed (metrics, mechanical, signatures, variants, " \
           "judges, neural skipped)" in section
    assert "- [x] `development-only` (§9.2.1, required): met — 355 development entries" in section
    assert "- [ ] `cost-report` (§9.1.4, warning): MISSED — totals.total_cost_usd" in section
    assert "- [x] `installable` (§9.1.2, §9.5, not asked at this tier): met — built-in backend gguf" in section
    assert "- [ ] `reproducible` (§9.2.3, not asked at this tier): MISSED" in section
    assert "Eligible tiers: self-benchmarked." in section
    assert "- Development entries used in few-shot prompts or coaching (spec §9.2.2 — declare them, or write " \
           "\"none\"): no corpus entry's text in the prompt or coaching data (found by `mtboard validate`)" in body
    assert gate_markdown(rep.gate) in body
    # the CI job summary: `mtboard validate --format markdown`, here held to the GDS rules (`--tier gds-verified`)
    report = validate_paths([path], _ctx(tmp_path), repository_checks=False, tier=GDS)
    md = render_markdown(report)
    assert md.startswith("## mtboard validate\n") and "### FAIL `" in md
    assert "Checked as a **GDS verified** submission" in md
    assert "- submission: $.totals: cost-report (§9.1.4) is required for a GDS verified card" in md
    assert "- [ ] `cost-report` (§9.1.4, required): MISSED" in md
    assert "- [ ] `reproducible` (§9.2.3, required): MISSED — no verification record beside the card" in md
    assert "- [x] `dependencies-pinned` (§9.1.3, required): met — prompt few-shot-completion, weights or engine " \
           "pinned" in md
    assert "**validation FAILED**: 1 file(s), 1 failed" in md
    text = render_text(report)
    assert "  gate gds-verified: met run-card, development-only, development-use-declared, method-readme, " \
           "installable, dependencies-pinned; missed cost-report (§9.1.4), reproducible (§9.2.3), governance " \
           "(§9.5, §8.2)" in text


def test_docs_carry_the_rules_table():
    page = (ROOT / "docs" / "submissions.md").read_text(encoding="utf-8")
    assert rules_table_markdown() in page


@pytest.mark.slow  # 3.5 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_cli_checks_a_card_against_a_tier(tmp_path):
    """`mtboard validate --tier gds-verified`: a self-benchmarked committed card held to the GDS rules misses
    `reproducible` (no record beside it); the same card at its own tier passes; an unknown tier is one error line."""
    from typer.testing import CliRunner

    from mtboard.cli.main import app

    path = _place(tmp_path, GEMMA_ES.read_bytes(), record=False)
    runner = CliRunner()
    args = ["validate", "--root", str(tmp_path), "--corpora", str(ROOT / "corpora"), str(path)]
    own = runner.invoke(app, args)
    assert own.exit_code == 0, own.output
    assert "  gate self-benchmarked: met run-card, development-only, development-use-declared, cost-report, " \
           "method-readme, installable, dependencies-pinned; missed reproducible (§9.2.3), governance (§9.5, §8.2)" \
        in own.output
    gds = runner.invoke(app, [*args, "--tier", "gds-verified", "--format", "json"])
    assert gds.exit_code == 1
    (f,) = json.loads(gds.output)["files"]
    assert f["checks"]["submission"] == "fail" and f["gate"]["tier"] == GDS
    assert [p["message"].split(":")[0] for p in f["problems"]] == ["reproducible (§9.2.3) is required for a GDS "
                                                                   "verified card"]
    assert f["gate"]["eligible"] == {SELF: True, GDS: False, GOLD: False}
    bad = runner.invoke(app, [*args, "--tier", "gold"])
    assert bad.exit_code == 1 and "--tier must be one of self-benchmarked, gds-verified, community-verified" in \
        bad.output
