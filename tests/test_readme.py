"""Issue 36 item 1: the README in the order a newcomer needs, its commands real and its links whole.

Checks the committed README.md (and the two docs pages it moved its details to) as text: at most 100 lines; within the
first 40, in this order, the two commands, what the board answers with a screenshot, how to look at the built site
(the very command ``mtboard demo`` prints), and the three steps to put a model on the board; every relative link
resolves to a file of the checkout; every ``.venv/bin/mtboard`` command names a registered command and only options
that command has (read from the typer app, as ``--help`` shows them); no spec section is cited without a link.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from mtboard.cli.main import app
from mtboard.cli.demo import SERVE_ADDRESS, serve_command

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MOVED_TO = ("docs/running.md", "docs/corpora.md")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _text(rel: str = "README.md") -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def test_the_readme_is_short_and_in_the_newcomers_order():
    lines = _text().splitlines()
    assert len(lines) <= 100
    first = lines[:40]

    def at(predicate) -> int:
        found = [i for i, line in enumerate(first) if predicate(line)]
        assert found, "missing from the first 40 lines"
        return found[0]

    demo = at(lambda s: s.startswith("bash scripts/demo.sh "))
    tests = at(lambda s: s.startswith("bash scripts/test.sh "))
    answers = at(lambda s: s == "## What the board answers")
    shot = at(lambda s: s.startswith("![") and s.endswith("(docs/img/board.png)"))
    look = at(lambda s: s == "## Look at the site")
    serve = at(lambda s: s == serve_command(ROOT / "build" / "site", ROOT, python=".venv/bin/python"))
    address = at(lambda s: f"<{SERVE_ADDRESS}>" in s)
    steps = at(lambda s: s == "## Put your own model on the board")
    assert demo < tests < answers < shot < look < serve and look < address < steps
    numbered = [line for line in first[steps:] if re.match(r"\d\. ", line)]
    assert [n[:13] for n in numbered] == ["1. **Run** it", "2. **Check** ", "3. **Submit**"]
    # what the board answers: two or three sentences, before any other section
    prose = " ".join(first[answers + 1:shot]).split(". ")
    assert 2 <= len(prose) <= 3


def test_the_two_commands_are_the_demo_and_what_ci_runs():
    assert (ROOT / "scripts" / "demo.sh").is_file()
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_screenshot_is_a_png_at_the_desktop_width():
    data = (ROOT / "docs" / "img" / "board.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1366, 900) and len(data) < 400_000


@pytest.mark.parametrize("rel", ["README.md", *MOVED_TO])
def test_every_relative_link_resolves(rel):
    base = (ROOT / rel).parent
    targets = [t for t in LINK.findall(_text(rel)) if not re.match(r"[a-z]+:", t)]
    assert targets or rel != "README.md"
    missing = [t for t in targets if not (base / t.split("#")[0]).exists()]
    assert missing == []


def test_no_spec_section_is_cited_without_a_link():
    text = LINK.sub("", _text())
    assert "§" not in text


def _commands() -> dict[str, set[str]]:
    """Every command path of the app (``"run"``, ``"corpus import"``) → the option names it takes."""
    found: dict[str, set[str]] = {}

    def walk(cmd, prefix: str) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            path = f"{prefix} {name}".strip()
            found[path] = {o for p in sub.params for o in (*p.opts, *p.secondary_opts)}
            walk(sub, path)

    walk(typer.main.get_command(app), "")
    return found


@pytest.mark.parametrize("rel", ["README.md", *MOVED_TO])
def test_every_command_is_real_with_real_options(rel):
    commands = _commands()
    assert {"run", "validate", "submit", "demo", "corpus import"} <= commands.keys()
    text = _text(rel).replace("\\\n", " ")
    code = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S) + re.findall(r"`([^`\n]+)`", text)
    pieces = [p for span in code for p in re.split(r"&&|\|\||;|\|", span)]  # each command of a chain on its own
    used = [m for piece in pieces for m in re.findall(r"(?:^|[\s/])mtboard ([a-z][a-z-]*(?: [a-z][a-z-]*)?)([^\n]*)",
                                                     piece, flags=re.M)]
    assert len(used) >= 3
    groups = {path.split()[0] for path in commands if " " in path}
    for words, rest in used:
        name = words if words in commands else words.split()[0]
        assert name in commands, words
        assert name not in groups, f"{rel}: `mtboard {words}` names no subcommand of the group {name!r}"
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
            assert option in commands[name] or option == "--help", (rel, name, option)
