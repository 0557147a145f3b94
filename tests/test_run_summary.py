"""The run summary and report.md say what is known (review of issues 13-24): token counts a provider did not report
are "unknown", not 0 (F15).

The loopback server is a hand-made provider shape (tests/loopback.py): an OpenAI chat answer with no ``usage``
object, as some OpenAI-compatible servers send. The corpus is a hand-made fixture, not evaluation data.
"""

from __future__ import annotations

from pathlib import Path

import cli_support
from loopback import ChatServer, write_handmade_corpus
from mtboard.inputs.prices import NO_USAGE, tokens_text
from mtboard.core.schema import ErrorKind, Totals, Usage


class _R:
    def __init__(self, p: int, c: int, kind: ErrorKind | None = None):
        self.usage, self.error_kind = Usage(prompt_tokens=p, completion_tokens=c), kind


def test_tokens_text() -> None:
    t = Totals(prompt_tokens=12, completion_tokens=5, retries=0)
    assert tokens_text(t, [_R(12, 5)], language_model=True) == "12 in / 5 out"
    assert tokens_text(t, [_R(12, 5), _R(0, 0)], language_model=True) == "12 in / 5 out (1 answers without usage)"
    zero = Totals(prompt_tokens=0, completion_tokens=0, retries=0)
    assert tokens_text(zero, [_R(0, 0), _R(0, 0)], language_model=True) == NO_USAGE
    # a transport failure has no answer, so its zero usage says nothing about the provider
    assert tokens_text(t, [_R(12, 5), _R(0, 0, ErrorKind.transport)], language_model=True) == "12 in / 5 out"
    assert tokens_text(zero, [_R(0, 0)], language_model=False) == "0 in / 0 out"  # an engine uses no tokens


def test_a_provider_without_usage_shows_unknown_tokens_and_cost(tmp_path: Path) -> None:
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-usage-test",
                                   [("Good morning.", "ES Good morning."), ("Thank you.", "ES Thank you.")])
    with ChatServer(lambda text: "ES " + text) as srv:
        p = cli_support.invoke(["run", str(corpus), "--method", "openai:m", "--base-url", srv.url, "--work-dir",
                                str(tmp_path / "w"), "--prompt", "source-only", "--price-in", "1",
                                "--price-out", "2"], cwd=tmp_path, unset=("OPENAI_", "MTBOARD_"))
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("cost"))
    assert line == ("cost        unknown (the provider reported no usage); tokens unknown (the provider reported no "
                    "usage)")
    report = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    assert "tokens unknown (the provider reported no usage) (0 reasoning, 0 cached)" in report


def test_a_local_engine_run_says_no_api_cost_never_a_bare_zero(tmp_path: Path) -> None:
    """issue 36 item 5: the echo baseline is charged nothing, and the summary says so in the site's words."""
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-cost-test",
                                   [("Good morning.", "Buenos días."), ("Thank you.", "Gracias.")])
    p = cli_support.invoke(["run", str(corpus), "--method", "echo:", "--work-dir", str(tmp_path / "w")],
                           cwd=tmp_path, unset=("OPENAI_", "MTBOARD_"))
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("cost"))
    assert line == "cost        no API cost (local); tokens 0 in / 0 out"
