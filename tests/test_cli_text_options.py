"""A command-line string that is not UTF-8 is one line naming the option, before anything is sent or written (second
review of issue 33, finding 8): Python decodes argv with ``surrogateescape`` (PEP 383), so a byte typed in a Latin-1
terminal arrives as a lone surrogate that no card, JSON file or request can hold. The check is made once, for every
``str`` parameter of every command (:func:`mtboard.cli.app.check_text_options`); these tests try three commands and
four options. The corpus is hand-made (tests/loopback.py), the server the fault-injection server, which counts
every request.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cli_support
from fake_openai_server import FakeServer
from loopback import write_handmade_corpus
from mtboard.cli.app import check_text_options
from mtboard.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FIX = "(fix: type the value in a UTF-8 terminal (locale charmap: UTF-8; e.g. LANG=C.UTF-8), or convert it (iconv -f " \
      "LATIN1 -t UTF-8))"


def test_a_non_utf8_byte_in_argv_names_the_option_and_nothing_is_sent(tmp_path: Path) -> None:
    """The real thing: the bytes ``a\\xffb`` in the process's argv (a child process, C.UTF-8 locale)."""
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-x", [("Hello world.", "Hola mundo.")])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_", "MTBOARD_"))}
    env.update(PYTHONPATH=str(ROOT), LC_ALL="C.UTF-8")
    with FakeServer() as srv:
        p = subprocess.run([sys.executable, "-m", "mtboard", "run", str(corpus), "--method", "openai:fake-model",
                            "--base-url", srv.base_url, "--work-dir", str(tmp_path / "w"), "--notes", b"a\xffb"],
                           env=env, capture_output=True, timeout=120)
        assert srv.requests == []
    assert p.returncode == 1
    assert p.stderr.decode() == f"error: --notes: not valid UTF-8: byte 0xff at character 2 {FIX}\n"
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("args, line", [
    (["corpus", "import", "{tsv}", "-o", "{out}", "--source-lang", "en", "--target-lang", "es", "--license",
      "CC0-1.0\udce9"], "--license: not valid UTF-8: byte 0xe9 at character 8"),
    (["run", "{corpus}", "--method", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--work-dir", "{out}",
      "--condition", "caf\udce9"], "--condition: not valid UTF-8: byte 0xe9 at character 4"),
    (["run", "{corpus}", "--method", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--work-dir", "{out}",
      "--backend-opt", "top_k=1", "--backend-opt", "seed=\ud83d"],
     "--backend-opt: not valid UTF-8: a lone surrogate U+D83D at character 6"),
    (["validate", "{corpus}", "--secret-segment-env", "X\udcff"],
     "--secret-segment-env: not valid UTF-8: byte 0xff at character 2"),
])
def test_every_text_option_is_checked_before_the_command_starts(tmp_path: Path, args: list[str], line: str) -> None:
    tsv = tmp_path / "hand.tsv"  # hand-made
    tsv.write_text("Hello\tHola\n", encoding="utf-8")
    corpus = write_handmade_corpus(tmp_path / "c.json", "hand-made-x", [("Hello world.", "Hola mundo.")])
    out = tmp_path / "out"
    res = cli_support.invoke([a.format(tsv=tsv, out=out, corpus=corpus) for a in args],
                             unset=("OPENAI_", "JUDGE_", "MTBOARD_"))
    assert res.returncode == 1
    assert res.stderr == f"error: {line} {FIX}\n"
    assert not out.exists()


def test_valid_text_and_paths_pass() -> None:
    check_text_options({"notes": "café ✓ 😀", "backend_opt": ["a=1"], "out": Path(os.fsdecode(b"x\xff.json")),
                        "runs": 3, "judge": None})
    with pytest.raises(ConfigError) as caught:
        check_text_options({"judge": ["rubric=openai:m", "x\udc80"]})
    assert caught.value.field == "--judge" and caught.value.problem == "not valid UTF-8: byte 0x80 at character 2"
