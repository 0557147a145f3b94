"""Issue 32, item 4 — judgements bound to the judge's words, tried as a careful cheater would.

The base card is REAL: Apertium on the first 5 development entries of corpora/mtb-en-es-dev.json, judged by GEMBA-MQM
and the rubric through the real judging code against a scripted judge on a loopback server
(tests/validate_support.judged_card_bytes; the judge is a fake on purpose, it answers what the test scripts). In
turn the MQM judge answers: clean, one major + one minor error, three unparsable answers (entry 3 is judge_failed),
clean, major + minor; the rubric always ``3/4/2`` with the flag NAME.

For **every** judge field of that card — every leaf under ``$.judges`` and ``$.results[*].judgements``, empty lists
and mappings included, and every mapping key renamed — the field is edited to another schema-valid value, the
fingerprint and the seal are recomputed with the project's own functions (what a careful cheater does), and the card
is validated: it must be refused by the ``judges`` check naming the field (or the list/mapping holding it), unless
the schema classifies the field *declared*, whose reason must then be in the model's ``DECLARED_WHY``.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mtboard import validate as V
from mtboard.core.schema import JudgeSummary, JudgeVerdict, MqmError, binding_paths
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.parsers import ENTRY_PARSERS, entry_parser, known_versions
from mtboard.judges.rubric import parse_rubric

import validate_support as vs

ROOT = Path(__file__).resolve().parents[1]
BINDINGS = binding_paths()
LITERALS = ["scored", "judge_failed", "not_sent", "critical", "major", "minor", "rubric", "checkpoints",
            "gemba-mqm"]
"""Other values of the judge models' closed string sets."""
AGGREGATED = {"attempts": "n_answers"}
"""A verdict field the card binds only through a sum: an edited ``attempts`` is refused naming the summary's
``n_answers`` (the sent verdicts' attempts sum to ``n_answers + n_unanswered_calls``; no check can tell which of two
verdicts a moved attempt belongs to)."""


def _base() -> dict[str, Any]:
    return json.loads(vs.judged_card_bytes(5))


def _schema_path(parts: tuple) -> str:
    """The classification path (``[]`` for a list index, ``*`` for a mapping key; keys of ``breakdown`` and
    ``subscores`` maps are data, ``*`` too)."""
    out = "$"
    for i, p in enumerate(parts):
        if isinstance(p, int):
            out += "[]"
        elif i > 0 and parts[i - 1] in ("judges", "judgements", "breakdown", "subscores") or (
                i > 1 and parts[i - 2] == "breakdown"):
            out += ".*"
        else:
            out += f".{p}"
    return out


def _leaves(value: Any, parts: tuple = ()):
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, parts + (k,))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from _leaves(v, parts + (i,))
    else:
        yield parts, value


def _judge_leaves(data: dict) -> list[tuple]:
    out = [p for p, _ in _leaves(data["judges"], ("judges",))]
    for i, r in enumerate(data["results"]):
        out += [p for p, _ in _leaves(r["judgements"], ("results", i, "judgements"))]
    return out


def _candidates(value: Any, parts: tuple) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [value + 0.5, value - 0.5]
    if isinstance(value, str):
        if re.fullmatch(r"[0-9a-f]{64}", value):
            return [value[:-1] + ("0" if value[-1] != "0" else "1")]
        return [value + " x", "x"] + LITERALS
    if value is None:
        return ["x", 0.5, 1, "low", "unclear"]
    if value == []:
        if parts[-1] == "errors":
            return [[{"severity": "minor", "category": "other", "span": "x"}]]
        return [["NEG"], ["openai"], [1.0], ["x"]]
    if value == {}:
        return [{"adequacy": 1.0}, {"x": {"y": 1.0}}]
    return []


def _mutate(data: dict, parts: tuple) -> dict | None:
    value = data
    for p in parts:
        value = value[p]
    return vs.first_schema_valid_edit(data, parts, value, _candidates(value, parts))


def _rename_key(data: dict, parts: tuple) -> dict:
    """``data`` with the mapping key at ``parts`` renamed (``KEY`` → ``KEY x``), order kept."""
    out = copy.deepcopy(data)
    holder = out
    for p in parts[:-1]:
        holder = holder[p]
    items = list(holder.items())
    holder.clear()
    holder.update({(k + " x" if k == parts[-1] else k): v for k, v in items})
    return out


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = vs.make_repo(tmp_path_factory.mktemp("judged-tamper"))
    ctx = V.make_context(root, ROOT / "corpora")
    return root, ctx, _base()


def _problems(root: Path, ctx, data: dict) -> list:
    return list(vs.validate_resealed(root, ctx, data).problems)


def _jpath(parts: tuple) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _names(field: str | None, path: str) -> bool:
    """A problem's field names ``path``: the field itself or the list/mapping holding it."""
    return field is not None and (path == field or path.startswith((field + ".", field + "[")))


def test_the_base_card_is_what_the_script_says(judged):
    """Hand-checked: penalties 0, 5 + 1 = 6, failed, 0, 6 → mean over the judged cells (0+6+0+6)/4 = 3; answers
    1+1+3+1+1 = 7 of which 3 did not parse; rubric 3+4+2 = 9 on each entry."""
    root, ctx, data = judged
    assert _problems(root, ctx, data) == []
    mqm = [r["judgements"]["gemba-mqm"] for r in data["results"]]
    assert [(v["status"], v["score"], v["attempts"]) for v in mqm] == [
        ("scored", 0, 1), ("scored", 6, 1), ("judge_failed", None, 3), ("scored", 0, 1), ("scored", 6, 1)]
    assert mqm[1]["raw_answer"] == vs.MQM_ERRORS and mqm[2]["raw_answer"] == vs.MQM_BROKEN
    s = data["judges"]["gemba-mqm"]
    assert (s["mean"], s["n_answers"], s["n_unparsed_answers"], s["n_scored"], s["n_failed"]) == (3, 7, 3, 4, 1)
    assert all(r["judgements"]["rubric"]["raw_answer"] == vs.RUBRIC_OK for r in data["results"])


@pytest.mark.slow  # a whole-system test: 11 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_every_judge_field_is_refused_after_a_resealed_edit_or_declared(judged):
    root, ctx, data = judged
    accepted, unnamed, untried = [], [], []
    leaves = _judge_leaves(data)
    assert len(leaves) > 150
    for parts in leaves:
        sp = _schema_path(parts)
        binding = BINDINGS.get(sp) or BINDINGS.get(re.sub(r"\[\]$", "", sp))
        assert binding is not None, sp
        mutated = _mutate(data, parts)
        if mutated is None:
            untried.append(sp)
            continue
        problems = _problems(root, ctx, mutated)
        if binding == "declared":
            continue
        path = _jpath(parts)
        judges = [p for p in problems if p.check == "judges"]
        if not judges:
            accepted.append(path)
            continue
        alias = AGGREGATED.get(str(parts[-1]))
        kind = parts[3] if parts[0] == "results" else parts[1]
        if not any(_names(p.field, path) or alias and p.field == f"$.judges.{kind}.{alias}" for p in judges):
            unnamed.append((path, [p.field for p in judges]))
    assert not accepted, accepted
    assert not unnamed, unnamed
    # leaves with no schema-valid edit: only closed sets with one allowed value
    assert set(untried) <= {"$.judges.*.backend"}, untried


@pytest.mark.slow  # 2.2 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_every_renamed_key_is_refused(judged):
    root, ctx, data = judged
    keys = [("judges", k) for k in data["judges"]]
    for kind, s in data["judges"].items():
        keys += [("judges", kind, "breakdown", b) for b in s["breakdown"]]
        keys += [("judges", kind, "breakdown", b, k) for b, d in s["breakdown"].items() for k in d]
    for i in (1, 2):
        keys += [("results", i, "judgements", k) for k in data["results"][i]["judgements"]]
    keys += [("results", 0, "judgements", "rubric", "subscores", k) for k in ("adequacy", "fluency")]
    for parts in keys:
        problems = _problems(root, ctx, _rename_key(data, parts))
        assert any(p.check == "judges" for p in problems), parts


def test_every_declared_judge_field_says_why():
    declared = {p.rsplit(".", 1)[-1].removesuffix("[]") for p, b in BINDINGS.items()
                if b == "declared" and (p.startswith("$.judges.") or ".judgements." in p)}
    why = {**JudgeSummary.DECLARED_WHY, **JudgeVerdict.DECLARED_WHY}
    assert declared == set(why), (sorted(declared - set(why)), sorted(set(why) - declared))
    assert declared == {"raw_answer", "model", "prompt_sha256", "effort", "api_provider", "endpoint_host_sha256",
                        "max_tokens", "max_attempts", "n_cached_answers", "prompt_tokens", "completion_tokens", "cost_usd", "bench",
                        "failed_raw_answers"}
    assert all(len(w) > 40 for w in why.values())
    assert MqmError.BINDING == {"severity": "recomputed", "category": "recomputed", "span": "recomputed"}


MQM_ERRORS_MINOR = vs.MQM_ERRORS.replace("Major:\naccuracy/mistranslation - \"la\"\nMinor:\n",
                                                            "Major:\nno-error\nMinor:\naccuracy/mistranslation - "
                                       "\"la\"\n")


def test_an_answer_that_says_something_else_is_refused(judged):
    """The raw answer of entry 1 edited so the major error is minor (penalty 1 + 1 = 2, hand-checked), the verdict
    left at major (6): refused, naming the error's severity and the score."""
    root, ctx, data = judged
    assert parse_mqm(MQM_ERRORS_MINOR).score == 2.0
    mutated = vs.set_at(data, ("results", 1, "judgements", "gemba-mqm", "raw_answer"), MQM_ERRORS_MINOR)
    fields = {p.field for p in _problems(root, ctx, mutated) if p.check == "judges"}
    at = "$.results[1].judgements.gemba-mqm"
    assert {f"{at}.errors[0].severity", f"{at}.score"} <= fields, fields


def test_an_answer_and_its_verdict_edited_together_is_the_declared_text(judged):
    """Both edited consistently (the span "la" → "el" in the answer and in the verdict: the same severities, classes
    and score, so every aggregate is unchanged): accepted — the raw answer is what the judge said, declared, unless
    a judge transcript is attested."""
    root, ctx, data = judged
    at = ("results", 1, "judgements", "gemba-mqm")
    mutated = vs.set_at(data, at + ("raw_answer",), vs.MQM_ERRORS.replace('"la"', '"el"'))
    mutated = vs.set_at(mutated, at + ("errors", 0, "span"), "el")
    assert _problems(root, ctx, mutated) == []
    assert BINDINGS["$.results[].judgements.*.raw_answer"] == "declared"


@pytest.mark.parametrize("entry,answer,field", [
    (0, vs.MQM_BROKEN, "status"),           # a scored verdict whose answer does not parse
    (2, vs.MQM_CLEAN, "status"),            # a failed judgement whose answer parses (score 0)
    (2, vs.MQM_BROKEN.replace("**Critical:**", "Critical"), "justification"),  # another parse error, same verdict
])
def test_parse_outcome_of_the_stored_answer_is_bound(judged, entry, answer, field):
    root, ctx, data = judged
    mutated = vs.set_at(data, ("results", entry, "judgements", "gemba-mqm", "raw_answer"), answer)
    fields = {p.field for p in _problems(root, ctx, mutated) if p.check == "judges"}
    assert f"$.results[{entry}].judgements.gemba-mqm.{field}" in fields, fields


def test_unknown_parser_version_is_refused_naming_the_known_ones(judged):
    root, ctx, data = judged
    mutated = vs.set_at(data, ("judges", "rubric", "parser"), "rubric/0")
    (p,) = [p for p in _problems(root, ctx, mutated) if p.check == "judges"]
    assert p.field == "$.judges.rubric.parser"
    assert "'rubric/0' is not a rubric parser version this mtboard knows (rubric/1)" in p.message
    assert "mtboard judge WORKDIR" in p.message


def test_a_card_without_raw_answers_is_refused_once_per_judge(judged):
    """A card judged before answers were kept: every scored verdict's raw_answer is None (4 MQM, 5 rubric)."""
    root, ctx, data = judged
    mutated = copy.deepcopy(data)
    for r in mutated["results"]:
        for v in r["judgements"].values():
            if v["status"] == "scored":
                v["raw_answer"] = None
    problems = [p for p in _problems(root, ctx, mutated) if p.check == "judges"]
    assert [(p.field, p.message.split(" keep")[0]) for p in problems] == [
        ("$.results[0].judgements.gemba-mqm.raw_answer", "4 scored verdict(s) of the gemba-mqm judge"),
        ("$.results[0].judgements.rubric.raw_answer", "5 scored verdict(s) of the rubric judge")]


def test_a_verdict_of_a_judge_without_summary_is_refused(judged):
    root, ctx, data = judged
    mutated = copy.deepcopy(data)
    mutated["results"][0]["judgements"]["checkpoints"] = copy.deepcopy(
        mutated["results"][0]["judgements"]["rubric"])
    fields = {p.field for p in _problems(root, ctx, mutated) if p.check == "judges"}
    assert "$.results[0].judgements.checkpoints" in fields


def test_parser_registry():
    assert entry_parser("gemba-mqm", "gemba-mqm-context/1 (uncapped)") is parse_mqm
    assert entry_parser("rubric", "rubric/1") is parse_rubric
    assert entry_parser("rubric", "gemba-mqm-context/1 (uncapped)") is None and entry_parser("rubric", None) is None
    assert known_versions("checkpoints") == ["checkpoints/1"]
    assert len(ENTRY_PARSERS) == 2


# --------------------------------------------------------------------------------------------------------------------
# The checkpoint judge: its answers are parsed against the benchmark key, which the card does not hold

CP_ANSWER = ('[[[CHECK A01 fail "the agency bought the firm"]]]\n[[[CHECK A02 ok]]]\n[[[CHECK B01 ok]]]\n'
             "[[[CHECK B02 ok]]]\n[[[CHECK C01 ok]]]\n[[[CHECK C02 ok]]]\n[[[CHECK D01 ok]]]\n[[[CHECK D02 ok]]]\n"
             '[[[ADDITION P3 "и все радовались"]]]\n[[[END]]]')
"""A scripted checkpoint answer (hand-written): A01 fails, an addition in P3."""


@pytest.fixture(scope="module")
def checkpoint_card(tmp_path_factory):
    """A real `mtboard run` of the example benchmark's corpus (tests/fixtures/checkpoints-example, a hand-made
    fixture) by a scripted translator, judged by the checkpoint judge against a scripted judge (:data:`CP_ANSWER`);
    a scratch repository whose corpora/ holds the benchmark's corpus."""
    from mtboard.core import documents
    from test_judges_scripted import BENCH, _cp_translate, judge

    tmp = tmp_path_factory.mktemp("cp")
    wd = _cp_translate(tmp)
    p, _, card = judge(wd, ["checkpoints=openai:j"], lambda b: CP_ANSWER, extra=["--bench", str(BENCH), "--runs", "1"])
    assert p.returncode == 0, p.stderr
    root = vs.make_repo(tmp / "repo", corpus=BENCH / "corpus.json")
    return root, V.make_context(root, root / "corpora"), json.loads(documents.card_bytes(card))


def _accepted_fields(root: Path, ctx, data: dict) -> tuple[set[str], set[str]]:
    """Schema paths of the judge fields whose re-sealed edit the validator accepted, and of those refused."""
    accepted, refused = set(), set()
    for parts in _judge_leaves(data):
        mutated = _mutate(data, parts)
        if mutated is None:
            continue
        sp = _schema_path(parts)
        (refused if any(p.check == "judges" for p in _problems(root, ctx, mutated)) else accepted).add(sp)
    return accepted, refused


@pytest.mark.slow  # a whole-system test: 6 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_checkpoint_card_declares_what_only_the_key_could_bind(checkpoint_card):
    """Hand-checked: A01 fails on P3 (its only point): P3 scores 0 with flags A01:fail and ADDITION; every other
    judged paragraph 100; run score 100·(7 − 1 addition − code penalties)/8 (the translation's markup and foreign
    script penalties, tests/test_judges_scripted.py)."""
    root, ctx, data = checkpoint_card
    assert _problems(root, ctx, data) == []
    v3 = data["results"][2]["judgements"]["checkpoints"]
    assert (v3["status"], v3["score"], v3["subscores"], v3["flags"]) == ("scored", 0, {"A01": 0}, ["A01:fail",
                                                                                                    "ADDITION"])
    accepted, refused = _accepted_fields(root, ctx, data)
    declared = {p for p, b in BINDINGS.items() if b == "declared"}
    kind_declared = {f"$.results[].judgements.*.{f}" for f in JudgeVerdict.CHECKPOINT_DECLARED} | {
        f"$.judges.*.{f}" for f in JudgeSummary.CHECKPOINT_DECLARED}
    leftover = {p for p in accepted - declared
                if not any(p == k or p.startswith((k + ".", k + "[")) for k in kind_declared)}
    assert not leftover, sorted(leftover)
    assert "$.results[].judgements.*.score" in refused and "$.judges.*.mean" in refused
