"""Helpers for the judges tests (tests/test_judges_*.py): a scripted OpenAI-compatible HTTP server and CLI runners.

The scripted server is a fake on purpose (fault injection: it answers exactly what a test scripts, including answers a
lax parser would score as clean). Real-model tests use llama-cpp-python instead.
"""

from __future__ import annotations

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Callable

import cli_support
from loopback import LoopbackServer

REPO = Path(__file__).resolve().parents[1]

Script = Callable[[dict[str, Any]], str]
"""request body → assistant text."""


class ScriptedServer(LoopbackServer):
    """``/v1/chat/completions`` and ``/v1/completions`` answered by ``script(body)``; every request body is kept."""

    def __init__(self, script: Script, model: str = "scripted", usage: bool = True):
        self.script = script
        self.model = model
        self.usage = usage
        """False: answers carry no ``usage`` object (a provider that reports none)."""
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "authorization": self.headers.get("Authorization")})
                text = outer.script(body)
                sent = sum(len(m.get("content") or "") for m in body.get("messages") or []) + len(body.get("prompt")
                                                                                                 or "")
                usage = {"prompt_tokens": sent // 2 + 1, "completion_tokens": len(text) // 3 + 1}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                extra = {"usage": usage} if outer.usage else {}
                if self.path.endswith("/chat/completions"):
                    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": outer.model,
                                     "choices": [choice], **extra})
                elif self.path.endswith("/completions"):
                    self._send(200, {"id": "x", "object": "text_completion", "created": 0, "model": outer.model,
                                     "choices": [{"index": 0, "text": text, "finish_reason": "stop"}], **extra})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)


def user_text(body: dict[str, Any]) -> str:
    """Content of the first user message of a chat request (the rendered judge prompt)."""
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            return m.get("content") or ""
    return body.get("prompt") or ""


def translation_in(body: dict[str, Any]) -> str:
    """The translation the judge prompt shows: the JSON string on the line after '… translation:' or '… translation to
    judge:' (the prompts quote every text with mtboard.judges.base.as_data), decoded; '' when there is none."""
    text = user_text(body)
    i = max(text.rfind("translation:\n"), text.rfind("translation to judge:\n"))
    if i < 0:
        return ""
    start = text.index("\n", i) + 1
    value, _ = json.JSONDecoder().raw_decode(text, start)
    return value


def mtboard(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real CLI in-process (tests/cli_support.py) in ``cwd``, with no inherited OPENAI_/JUDGE_ variables
    except those given. ``timeout`` is kept for callers; pytest-timeout bounds an in-process call."""
    return cli_support.invoke(args, env=env, cwd=cwd, unset=("OPENAI_", "JUDGE_"))


def admission_answer(body: dict[str, Any], *, wrong: bool = False) -> str | None:
    """The known answer to a judge-admission item (issue 39; mtboard/judges/admission-en-es.json) when ``body`` asks
    about one, else None — so a scripted judge can pass (or, ``wrong``: fail every item of) the admission check
    without disturbing what it scripts for the card's own entries. A correct translation: no error (MQM) / adequacy
    4 (rubric); a planted error: a critical mistranslation (MQM) / adequacy 1 (rubric)."""
    from mtboard.judges.admission import load_admission_set

    t = translation_in(body)
    item = next((it for it in load_admission_set().items if it.translation == t), None)
    if item is None or not t:
        return None
    clean = (item.expect == "clean") != wrong
    if "adequacy" in " ".join(m.get("content", "") for m in body.get("messages", [])):
        return ("adequacy: 4\npragmatics: 4\nfluency: 2\nflags: none\njustification: correct" if clean else
                "adequacy: 1\npragmatics: 2\nfluency: 2\nflags: NEG\njustification: meaning changed")
    if clean:
        return "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"
    return f'Critical:\naccuracy/mistranslation - "{t}"\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear'


def card_requests(srv: ScriptedServer) -> list[dict[str, Any]]:
    """The judge requests about the card's own entries: ``srv.requests`` less those about the judge-admission items
    every per-entry judge answers first (issue 39; :func:`admission_answer` recognises them)."""
    from mtboard.judges.admission import load_admission_set

    known = {it.translation for it in load_admission_set().items}
    return [r for r in srv.requests if translation_in(r["body"]) not in known]
