"""The judges a run will add are on its planned card, checked before the first request (issue 33 item 4; review
findings 3, 4, 10, 11).

Each case is a ``mtboard run`` command line whose judges (or numbers, or labels) would make a card the validator
refuses; it must stop before the first request (the loopback server's POST count is 0) with one line naming the
option. The ``--translator-family`` run is the other side: the card it writes must pass ``mtboard validate``.

The corpus is a hand-made test fixture (references ``"ES " + source``), not evaluation data; the loopback server
answers every translation with the reference and every rubric judge request with a fixed, well-formed rubric answer.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import cli_support
from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.core.documents import load_card
from mtboard.run.planned import PLANNED_JUDGEMENT, check_planned_card, source_of
from mtboard.run.runner import prepare
from mtboard.run.settings import CARD_INT_MAX, RunSettings, card_limit

SOURCES = ["Good morning.", "Open the file."]
RUBRIC = "adequacy: 4\npragmatics: 4\nfluency: 2\nflags: none\njustification: fine."
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"  # key-shaped test string, not a key


class Server(LoopbackServer):
    """Loopback OpenAI-compatible server: ``GET /v1/models`` lists ``m``; a chat request whose text asks for
    ``adequacy`` gets :data:`RUBRIC`, any other the reference of the source it contains. ``posts`` counts POSTs."""

    def __init__(self) -> None:
        self.posts = 0
        lock, outer = threading.Lock(), self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.posts += 1
                text = json.dumps(req, ensure_ascii=False)
                answer = RUBRIC if "adequacy" in text else next(
                    ("ES " + s for s in SOURCES if s in req["messages"][-1]["content"]), "?")
                self.send_json(200, {"id": "x", "object": "chat.completion", "model": "m",
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": answer}}],
                                     "usage": {"prompt_tokens": 50, "completion_tokens": 5}})

        super().__init__(Handler)


def _corpus(tmp_path: Path) -> Path:
    return write_handmade_corpus(tmp_path / "corpora" / "hand-made-judges.json", "hand-made-judges",
                                 [(s, "ES " + s) for s in SOURCES])


def _run(tmp_path: Path, srv: Server, *args: str) -> Any:
    if "--method" not in args:
        args = ("--method", "openai:m", *args)
    return cli_support.invoke(["run", str(_corpus(tmp_path)), "--base-url", srv.url, "--work-dir",
                               str(tmp_path / "w"), "--concurrency", "1", *args],
                              env={"JUDGE_BASE_URL": srv.url}, cwd=tmp_path, unset=("OPENAI_", "JUDGE_", "MTBOARD_"))


REFUSED: list[tuple[tuple[str, ...], str, str]] = [
    # the reviewer's case: a judge model that is a key (paid for, then refused by validate's secrets check)
    (("--method", "openai:qwen3-8b", "--judge", f"rubric=openai:{KEY}", "--judge-family", "llama"), "--judge",
     "the run card's judges.rubric.model would hold what looks like an OpenAI/Anthropic-style key"),
    # a key after the judge's model (read as part of the model: no effort of that name)
    (("--judge", f"rubric=openai:llama-3:{KEY}", "--translator-family", "qwen"), "--judge",
     "the run card's judges.rubric.model would hold what looks like an OpenAI/Anthropic-style key"),
    # finding 11: a key-like label names --condition, not "the run" (and not the fingerprint's copy)
    (("--condition", "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2"), "--condition",
     "the run card's condition would hold what looks like an OpenAI/Anthropic-style key"),
    # finding 10: numbers no card can hold
    (("--max-tokens", "99999999999999999999"), "--max-tokens",
     f"--max-tokens 99999999999999999999 is more than a run card can hold (at most {CARD_INT_MAX})"),
    (("--judge", "rubric=openai:llama-3", "--translator-family", "qwen", "--judge-max-tokens", str(CARD_INT_MAX + 1)),
     "--judge-max-tokens", f"is more than a run card can hold (at most {CARD_INT_MAX})"),
    (("--price-in", "1e300", "--price-out", "1"), "--price-in", "--price-in 1e+300 is more than a run card can hold"),
    # a judge family nobody knows
    (("--judge", "rubric=openai:judge-x", "--judge-family", "lama"), "--judge-family", "unknown model family 'lama'"),
]


@pytest.mark.parametrize("args,option,text", REFUSED, ids=[c[1] + ":" + c[2][:30] for c in REFUSED])
def test_a_judge_or_option_the_card_cannot_hold_costs_nothing(tmp_path: Path, args: tuple[str, ...], option: str,
                                                            text: str) -> None:
    with Server() as srv:
        p = _run(tmp_path, srv, *args)
        assert srv.posts == 0  # nothing was paid for
    err = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(err) == 1, p.stderr
    assert err[0].startswith(f"error: {option}: ") and text in err[0] and "fix:" in err[0], err[0]
    assert KEY not in p.stderr and "internal error" not in p.stderr


def test_the_planned_card_holds_the_judges(tmp_path: Path) -> None:
    """Every field the judge hook writes that the command line decides is on the planned card (finding 3)."""
    settings = RunSettings(corpus_path=_corpus(tmp_path), method="openai:m", judge="rubric=openai:judge-x:high",
                           judge_family="llama", translator_family="qwen", judge_max_tokens=99,
                           judge_max_attempts=2, judge_price_in=1, judge_price_out=2,
                           base_url="http://127.0.0.1:9/v1")
    plan = prepare(settings)
    card = check_planned_card(plan.spec, settings, plan.backend_cls, plan.entries, plan.prices)
    j = card.judges["rubric"]
    assert (j.kind, j.backend, j.model, j.effort, j.max_tokens, j.max_attempts, j.runs) == (
        "rubric", "openai", "judge-x", "high", 99, 2, 1)
    assert j.family_check == "passed (judge family declared: llama; translator family declared: qwen)"
    assert (j.judge_families, j.translator_families, j.cost_usd) == (["llama"], ["qwen"], 0.0)
    # the fingerprint's judge components (the spec without effort; a hash over the judges' prompt hashes)
    assert card.fingerprint.components["judge_model"] == "rubric=openai:judge-x"
    assert len(card.fingerprint.components["judge_prompt_sha256"]) == 64 == len(j.prompt_sha256)
    v = card.results[0].judgements["rubric"]
    assert (v.status, v.score, v.justification) == ("judge_failed", None, PLANNED_JUDGEMENT)


def test_a_declared_translator_family_writes_a_card_that_validates(tmp_path: Path) -> None:
    """Finding 4: the runner records a --translator-family as docs/judges.md says ("checked like a found one and
    recorded"); the validator accepts it. Before, validate refused every such card."""
    with Server() as srv:
        p = _run(tmp_path, srv, "--judge", "rubric=openai:judge-x", "--translator-family", "qwen",
                 "--judge-family", "llama")
        assert p.returncode == 0, p.stderr
        assert srv.posts == 14  # 2 translations + 10 judge-admission items (issue 39) + 2 judge requests
    card = load_card(tmp_path / "w" / "card.json")
    j = card.judges["rubric"]
    assert j.family_check == "passed (judge family declared: llama; translator family declared: qwen)"
    assert (j.translator_families, j.judge_families, len(card.results)) == (["qwen"], ["llama"], 2)
    # the server reports 50 prompt tokens for every ~480-token judge prompt: each judge call fails as input_truncated
    # (the card's verdicts are judge_failed), so no admission item passes either — a judge that cannot answer is
    # not admitted (issue 39)
    assert (j.admission.passed, j.admission.admitted, len(j.admission.failed_items)) == (0, False, 10)
    v = cli_support.invoke(["validate", str(tmp_path / "w" / "card.json"), "--root", str(tmp_path), "--corpora",
                            str(tmp_path / "corpora")])
    assert v.returncode == 0, v.stdout + v.stderr


def test_the_validator_still_refuses_an_undeclared_translator_family(tmp_path: Path) -> None:
    """The other side of finding 4: a translator family the status does not declare, or two, is refused."""
    from mtboard.validate.judging import check_judge_declaration
    from mtboard.validate.report import CardRun

    settings = RunSettings(corpus_path=_corpus(tmp_path), method="openai:m", judge="rubric=openai:judge-x",
                           judge_family="llama", translator_family="qwen", base_url="http://127.0.0.1:9/v1")
    plan = prepare(settings)
    card = check_planned_card(plan.spec, settings, plan.backend_cls, plan.entries, plan.prices)
    good = card.judges["rubric"]
    for update, field in ((dict(family_check="passed (judge family declared: llama)"), "family_check"),
                          (dict(translator_families=["mistral", "qwen"]), "translator_families"),
                          (dict(translator_families=["nope"]), "translator_families")):
        run = CardRun("t")
        check_judge_declaration(run, card, "rubric", good.model_copy(update=update))
        assert any(p.field == f"$.judges.rubric.{field}" for p in run.problems), (update, run.problems)
    run = CardRun("t")
    check_judge_declaration(run, card, "rubric", good)
    assert run.problems == []


def test_every_number_option_has_the_card_s_limit() -> None:
    """Finding 10's kind: every int/float option is bounded by what a card can hold; the schema's own lower bounds
    are the options' (checked by tests/test_runner_card_rules.py's enumeration)."""
    from mtboard.run.settings import bounds

    numbers = [n for n, f in RunSettings.model_fields.items() if any(t in str(f.annotation) for t in ("int", "float"))
               and bounds(n)[1] is None]  # --fst-retries has its own, smaller range (0–5)
    assert len(numbers) >= 15
    for name in numbers:
        big = 2 * int(card_limit(name)) if "int" in str(RunSettings.model_fields[name].annotation) else 1e300
        with pytest.raises(Exception, match="more than a run card can hold"):
            RunSettings(corpus_path=Path("c.json"), method="openai:x", **{name: big},
                        **({"neural_metric": "comet22"} if name.startswith("neural") else {}))


def test_source_of_names_judge_and_fingerprint_fields() -> None:
    assert source_of("$.judges.rubric.max_tokens") == "--judge-max-tokens"
    assert source_of("$.judges.gemba-mqm.model") == "--judge"
    assert source_of("$.fingerprint.components.condition") == "--condition"
    assert source_of("$.fingerprint.components.judge_model") == "--judge"
    assert source_of("$.results[1].judgements.rubric.score") == "--judge"
    assert source_of("$.method.local.n_ctx") == "--backend-opt"
