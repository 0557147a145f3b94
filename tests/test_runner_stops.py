"""A server that ignores stop sequences (issue 24): with the few-shot completion prompt (stop ``"\\n"``), a server
that answers ``Hola mundo.\\nEnglish: X\\nSpanish: Y`` (llama.cpp has had this bug) must give the translation
``Hola mundo.``: the client applies the prompt's stop sequences itself, records that it cut, and keeps the server's
text in ``raw.jsonl``.

The loopback server is a hand-made fault injector (tests/loopback.py) for ``/v1/completions``, as a whole JSON body
or as an SSE stream. The corpus is a hand-made fixture (English sentences with hand-written Spanish references), not
evaluation data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from loopback import LoopbackServer, QuietHandler, write_handmade_corpus
from mtboard.core.documents import load_card
from mtboard.run.settings import RunSettings
from mtboard.run.runner import run
from mtboard.run.workdir import WorkDir
from mtboard.validate import make_context, validate_card

RUNAWAY = "Hola mundo.\nEnglish: X\nSpanish: Y"
SOURCES = ["Hello world.", "Good night.", "Open the door."]
REFERENCES = ["Hola mundo.", "Buenas noches.", "Abre la puerta."]


class RunawayServer(LoopbackServer):
    """``/v1/completions`` that ignores ``stop``: answers :data:`RUNAWAY` with ``finish`` (``stop``, or ``length``
    with ``completion_tokens`` equal to ``max_tokens``: it ran to the cap), whole or streamed word by word. The
    canary text ``"Good night."``'s answer is honest (``Buenas noches.``, no runaway). Request bodies are kept."""

    def __init__(self, finish: str = "stop"):
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"object": "list", "data": [{"id": "base-model"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                honest = body["prompt"].rstrip().endswith("English: Good night.\nSpanish:")
                text = " Buenas noches." if honest else RUNAWAY
                done = "stop" if honest else finish
                usage = {"prompt_tokens": len(body["prompt"]) // 4, "total_tokens": 0,
                         "completion_tokens": body["max_tokens"] if done == "length" else len(text.split())}
                if not body.get("stream"):
                    self.send_json(200, {"id": "c", "object": "text_completion", "model": "base-model", "usage": usage,
                                         "choices": [{"index": 0, "text": text, "finish_reason": done}]})
                    return
                events = [{"choices": [{"index": 0, "text": piece, "finish_reason": None}], "model": "base-model"}
                          for piece in re.split(r"(?<= )", text) if piece]  # "Hola ", "mundo.\nEnglish: ", …
                events.append({"choices": [{"index": 0, "text": "", "finish_reason": done}], "usage": usage,
                               "model": "base-model"})
                self.send_body(200, "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n",
                               "text/event-stream")

        super().__init__(Handler)


def write_corpus(path: Path) -> Path:
    return write_handmade_corpus(path, "hand-made-stop-test", list(zip(SOURCES, REFERENCES)))


@pytest.mark.parametrize("finish,stream", [("stop", False), ("length", False), ("stop", True), ("length", True)],
                         ids=["stop", "ran-to-the-cap", "stream", "stream-ran-to-the-cap"])
def test_the_client_applies_the_prompts_stop_sequences(tmp_path: Path, finish: str, stream: bool) -> None:
    corpus = write_corpus(tmp_path / "corpora" / "c.json")
    with RunawayServer(finish) as srv:
        out = run(RunSettings(corpus_path=corpus, method="openai:base-model", prompt="few-shot-completion",
                              base_url=srv.url, work_dir=tmp_path / "w", max_tokens=24, stream=stream))
    assert all(b["stop"] == ["\n"] for b in srv.bodies)  # the stop sequence was sent; the server ignored it
    card = out.card
    assert [r.predicted for r in card.results] == ["Hola mundo.", "Buenas noches.", "Hola mundo."]
    assert [r.raw_predicted for r in card.results] == ["Hola mundo.", " Buenas noches.", "Hola mundo."]
    assert [r.error_kind for r in card.results] == [None, None, None]  # a cut answer did not hit the cap
    assert card.results[0].chrf_score == 100.0 and card.results[1].chrf_score == 100.0

    recs = WorkDir(tmp_path / "w").records()
    assert [recs[(0, i)].stop_cut for i in (1, 2, 3)] == ["\n", None, "\n"]
    assert recs[(0, 1)].finish_reason == finish  # the server's own word is kept
    raw = [json.loads(x) for x in (tmp_path / "w" / "raw.jsonl").read_text(encoding="utf-8").splitlines()]
    by_entry = {r["entry_id"]: r for r in raw}
    assert by_entry[1]["stop_cut"] == "\n" and by_entry[1]["uncut_text"] == RUNAWAY
    assert "English: " in by_entry[1]["response"] and "Spanish: " in by_entry[1]["response"]  # as received
    assert "stop_cut" not in by_entry[2]
    report = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    assert "stop sequences: the server ran past the prompt's stop sequence in 2 answers" in report
    # the card validates: the validator recomputes from the stored (cut) outputs
    result = validate_card(out.card_path, make_context(tmp_path, tmp_path / "corpora"))
    assert result.ok, [str(p) for p in result.problems]
    assert load_card(out.card_path) == card


@pytest.mark.parametrize("text,stops,expected", [
    (RUNAWAY, ["\n"], ("Hola mundo.", "\n")),
    ("abc</s>def\nx", ["\n", "</s>"], ("abc", "</s>")),                 # the earliest occurrence wins
    ("ab\n\ncd", ["\n\n", "\n"], ("ab", "\n")),                          # same place: the shorter one is named
    ("Hola mundo.", ["\n"], ("Hola mundo.", None)),                       # a compliant answer is untouched
    ("\nHola", ["\n"], ("", "\n")),                                       # as a compliant server: nothing at all
    ("x", [""], ("x", None)),                                             # empty stop sequences are ignored
])
def test_apply_stop(text: str, stops: list[str], expected: tuple[str, str | None]) -> None:
    from mtboard.llm.policy import apply_stop

    assert apply_stop(text, stops) == expected
