"""Issue 6 acceptance — malformed-input suite.

Every hazard goes through the command line (``mtboard validate``), and must end with exit code 1, a clear one-line
message naming the check, no traceback, and none of the file's content echoed (each hostile file carries a marker
string that must not appear in the output). The run over all hostile files at once is a real process (the console
entry point's exit code and streams); the single-hazard runs are in-process (typer's CliRunner, tests/cli_support.py).
Hostile files are hand-made here on purpose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtboard.core import safejson
from mtboard.core.errors import InputError
from mtboard.core.schema import DatasetInfo

import cli_support
import validate_support as vs

MARK = "CONTENT-MARKER-7f3a"


def run_validate(root: Path, *args: str, cwd: Path | None = None, env: dict | None = None, process: bool = False):
    if not process:
        return cli_support.invoke(["validate", "--root", str(root), *args], cwd=cwd or root, env=env,
                                  unset=("MTBOARD_SECRET_SEGMENT",))
    cmd = [sys.executable, "-c", "from mtboard.cli.main import app; app()", "validate", "--root", str(root), *args]
    e = dict(os.environ)
    e.pop("MTBOARD_SECRET_SEGMENT", None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or root, timeout=120, env=e)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return vs.make_repo(tmp_path_factory.mktemp("malformed"))


def _assert_rejected(proc, check: str, phrase: str):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Traceback" not in out and MARK not in out, out
    assert f"FAIL {check}" in out, out
    assert phrase in out, out


CASES = {
    "nan": (b'{"notes": "' + MARK.encode() + b'", "x": NaN}', "json", "NaN is not valid JSON"),
    "infinity": (b'{"notes": "' + MARK.encode() + b'", "x": -Infinity}', "json", "-Infinity is not valid JSON"),
    "1e400": (b'{"notes": "' + MARK.encode() + b'", "x": 1e400}', "json", "overflows to infinity"),
    "duplicate keys": (b'{"notes": "' + MARK.encode() + b'", "notes": "b"}', "json", "duplicate key"),
    "deep nesting": (b'{"notes": "' + MARK.encode() + b'", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}", "json",
                     "nesting deeper than"),
    "moderate nesting": (b'{"notes": "' + MARK.encode() + b'", "x": ' + b"[" * 70 + b"]" * 70 + b"}", "json",
                         "nesting deeper than 64"),
    "huge int": (b'{"notes": "' + MARK.encode() + b'", "x": 123456789012345678901234567890}', "json",
                 "integer too large"),
    "int beyond 2**53": (b'{"notes": "' + MARK.encode() + b'", "x": 9007199254740993}', "json", "outside"),
    "5000-digit int": (b'{"x": ' + b"9" * 5000 + b', "notes": "' + MARK.encode() + b'"}', "json",
                       "integer too large"),
    "lone surrogate": (b'{"notes": "' + MARK.encode() + b'\\ud800"}', "json", "lone UTF-16 surrogate"),
    "invalid utf-8": (b'{"notes": "' + MARK.encode() + b'\xed\xa0\x80"}', "json", "not valid UTF-8"),
    "bom": (b'\xef\xbb\xbf{"notes": "' + MARK.encode() + b'"}', "json", "byte-order mark"),
    "not json": (b"notes: " + MARK.encode() + b"\n", "json", "not valid JSON"),
    "schema: string for float": (None, "schema", "Input should be a valid number"),
}


def _case_file(case: str) -> str:
    return "hostile-" + "".join(c if c.isalnum() else "-" for c in case) + ".json"


@pytest.fixture(scope="module")
def hostile_run(root):
    """All hostile JSON files validated by ONE command-line run (text and JSON reports)."""
    folder = root / "submissions" / "hostile"
    folder.mkdir()
    for case, (data, _, _) in CASES.items():
        if data is None:  # a real card with one number written as a string (pydantic lax mode would accept it)
            card = json.loads(vs.real_card_bytes(12, fst=False))
            card["scores"]["chrf_plus_plus"] = str(card["scores"]["chrf_plus_plus"])
            card["notes"] = MARK
            data = json.dumps(card).encode()
        (folder / _case_file(case)).write_bytes(data)
    text = run_validate(root, "submissions/hostile", process=True)
    js = run_validate(root, "submissions/hostile", "--format", "json", process=True)
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    return text, js


@pytest.mark.slow  # 2.7 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_hostile_run_exits_1_without_traceback_or_content(hostile_run):
    text, js = hostile_run
    for proc in (text, js):
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1 and "Traceback" not in out and MARK not in out, out[:2000]
    assert f"validation FAILED: {len(CASES)} of {len(CASES)} file(s) failed" in text.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_json(hostile_run, case):
    _, check, phrase = CASES[case]
    report = json.loads(hostile_run[1].stdout)
    (f,) = [f for f in report["files"] if f["path"].endswith(_case_file(case))]
    assert f["checks"][check] == "fail"
    assert [p["check"] for p in f["problems"]] == [check], f["problems"]
    assert phrase in f["problems"][0]["message"], f["problems"]
    # the text report shows the same problem under the check's name
    block = hostile_run[0].stdout.split(_case_file(case), 1)[1].split("\nFAIL ", 1)[0]
    assert f"FAIL {check}: 1 problem(s)" in block and phrase in block


def test_symlink_outside_repo(root, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"notes": MARK}))
    link = root / "submissions" / "link.json"
    link.symlink_to(outside)
    try:
        proc = run_validate(root)  # default: everything under submissions/
        _assert_rejected(proc, "file", "symbolic link; refused without reading")
    finally:
        link.unlink()


def test_linked_folder_leading_outside(root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "card.json").write_text(json.dumps({"notes": MARK}))
    link = root / "submissions" / "ds"
    link.symlink_to(outside, target_is_directory=True)
    try:
        proc = run_validate(root, "submissions/ds/card.json")
        _assert_rejected(proc, "file", "link leading outside the repository")
    finally:
        link.unlink()


def test_linked_folder_found_by_the_walk(root, tmp_path):
    outside = tmp_path / "elsewhere2"
    outside.mkdir()
    (outside / "card.json").write_text(json.dumps({"notes": MARK}))
    link = root / "submissions" / "linked-ds"
    link.symlink_to(outside, target_is_directory=True)
    try:
        _assert_rejected(run_validate(root), "file", "symbolic link; refused without reading")
    finally:
        link.unlink()


def test_100_mb_sparse_file(root):
    p = root / "submissions" / "huge.json"
    with open(p, "wb") as fh:
        fh.truncate(100 * 1024 * 1024)  # sparse: no disk used; never read by the validator
    try:
        _assert_rejected(run_validate(root, "submissions/huge.json"), "size", "over the 33554432-byte limit")
    finally:
        p.unlink()


def test_fifo_not_opened(root):
    p = root / "submissions" / "pipe.json"
    os.mkfifo(p)
    try:  # opening a FIFO for reading would block forever; the 120 s timeout would fail the test
        _assert_rejected(run_validate(root, "submissions/pipe.json"), "file", "not a regular file")
    finally:
        p.unlink()


def test_dotdot_file_name(root, tmp_path):
    (root.parent / "outside.json").write_text(json.dumps({"notes": MARK}))
    proc = run_validate(root, "submissions/../../outside.json")
    _assert_rejected(proc, "file", "'..' component")


def test_missing_file(root):
    proc = run_validate(root, "submissions/nope.json")
    _assert_rejected(proc, "file", "file not found")


def test_unknown_dataset(root):
    card = json.loads(vs.real_card_bytes(12, fst=False))
    card["dataset"]["id"] = "mtb-xx-yy-nope"
    card["notes"] = MARK
    card = vs.reseal(card)
    p = vs.place(root, vs.dump(card))
    try:
        proc = run_validate(root, str(p.relative_to(root)))
        _assert_rejected(proc, "dataset", "no corpus with this dataset id in corpora/ (known: mtb-en-es-dev)")
    finally:
        p.unlink()


def test_control_characters_in_file_name_are_escaped(root):
    name = "bad\nFAIL-INJECTED\x1b[31m.json"
    p = root / "submissions" / name
    p.write_text('{"x": NaN}')
    try:
        proc = run_validate(root)
        assert proc.returncode == 1
        assert "\nFAIL-INJECTED" not in proc.stdout and "\x1b" not in proc.stdout
        assert "bad\\nFAIL-INJECTED\\x1b[31m.json" in proc.stdout
    finally:
        p.unlink()


def test_api_key_in_card_not_echoed(root):
    card = json.loads(vs.real_card_bytes(12, fst=False))
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    card["notes"] = f"my key is {key}"
    p = vs.place(root, vs.dump(vs.reseal(card)))
    try:
        proc = run_validate(root, str(p.relative_to(root)))
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1 and key not in out and "A1b2C3" not in out
        assert "FAIL secrets" in out and "$.notes: looks like an OpenAI/Anthropic-style key" in out
    finally:
        p.unlink()


@pytest.mark.parametrize("sep", ["\t", "\n", "\r\n"])
def test_bearer_token_behind_escaped_whitespace_is_caught(root, sep):
    """In canonical JSON a tab/newline is written as an escape, so a raw-text scan alone would miss the token."""
    card = json.loads(vs.real_card_bytes(12, fst=False))
    token = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg"
    card["notes"] = f"Authorization: Bearer{sep}{token}"
    p = vs.place(root, vs.dump(vs.reseal(card)))
    try:
        proc = run_validate(root, str(p.relative_to(root)))
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1 and token not in out
        assert "$.notes: looks like an HTTP bearer credential" in out
    finally:
        p.unlink()


@pytest.mark.parametrize("text,name", [
    ("hf_" + "a" * 34, "Hugging Face token"),
    ("AKIA" + "ABCDEFGHIJKLMNOP", "AWS access key id"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc", "HTTP bearer credential"),
    ("ghp_" + "x" * 36, "GitHub token"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key block"),
])
def test_key_patterns(text, name):
    from mtboard.validate import find_key_like

    assert find_key_like(f"before {text} after") and name in find_key_like(f"x {text}")


@pytest.mark.parametrize("text", ["sk-SK locale", "the hf_ prefix", "AKIA", "a bearer of news", "skip-this-one",
                                  "ta" + "sk-1234567890abcdefghij"])  # "sk-…" inside a word
def test_key_patterns_do_not_fire_on_prose(text):
    from mtboard.validate import find_key_like

    assert find_key_like(text) is None


def test_yaml_no_stays_no(tmp_path):
    """YAML 1.1 turns an unquoted `no` into False: schema validation rejects it; quoted it stays the string."""
    base = {"id": "x", "version": "1.0.0", "language_pair": "EN→NO", "source_language": "en", "created": "2026-01-01",
            "license": "MIT", "provenance": []}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(base) + "target_language: no\n")
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(base) + 'target_language: "no"\n')
    from mtboard.core.documents import validate_model

    with pytest.raises(InputError) as exc:
        validate_model(DatasetInfo, safejson.load_yaml(bad), "bad.yaml")
    assert "target_language" in str(exc.value)
    assert validate_model(DatasetInfo, safejson.load_yaml(good), "good.yaml").target_language == "no"


def test_yaml_never_constructs_objects(tmp_path):
    p = tmp_path / "evil.yaml"
    p.write_text("x: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(InputError) as exc:
        safejson.load_yaml(p)
    assert "not valid YAML" in str(exc.value)


def test_fast_depth_precheck_agrees_with_full_walk():
    """safejson's fast pre-check (added for validation speed) accepts exactly what the path-naming walk accepts."""
    import random

    rng = random.Random(6)

    def build(depth):
        kind = rng.choice(["list", "dict", "scalar", "empty"]) if depth else "scalar"
        if kind == "scalar":
            return rng.choice([1, "s", None, 2.5])
        if kind == "empty":
            return rng.choice([[], {}])
        n = rng.randint(1, 3)
        return [build(depth - 1) for _ in range(n)] if kind == "list" else {f"k{i}": build(depth - 1)
                                                                               for i in range(n)}

    for _ in range(400):
        value = build(rng.randint(0, 9))
        for max_depth in range(0, 9):
            try:
                safejson._walk(value, max_depth)
                walk_ok = True
            except InputError:
                walk_ok = False
            assert safejson._depth_within(value, max_depth) == walk_ok, (value, max_depth)


def test_the_surrogate_precheck_answers_as_the_character_class_search():
    r"""``_maybe_surrogate`` (a substring search for ``\u``, the escape pattern, UTF-8 encoding unless the text came
    from the strict UTF-8 codec) says yes exactly when the former one-regex search ``[\ud800-\udfff]|\\u[dD][89a-fA-F]``
    finds something: hand-made edges (each surrogate bound raw and escaped, upper-case escapes, an escaped backslash
    before ``ud800``, the neighbours U+D7FF/U+E000) and 5,000 seeded texts built from them, each also as the codec
    could give it when it holds no raw surrogate."""
    import random
    import re

    former = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")
    pieces = ["", "a", "é", "\u20ac", "\U0001f600", "\ud7ff", "\ue000", "\ud800", "\udbff", "\udc00", "\udfff",
              "\\ud800", "\\uDFFF", "\\uD83D", "\\ud7ff", "\\ue000", "\\u00e9", "\\\\ud800", "\\u", "\\", "u",
              "d8", "\\U", '"', "\\u d800"]
    for t in pieces:
        assert safejson._maybe_surrogate(t) == bool(former.search(t)), ascii(t)
    rng = random.Random(35)
    for _ in range(5000):
        t = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        assert safejson._maybe_surrogate(t) == bool(former.search(t)), ascii(t)
        try:  # a text the strict UTF-8 codec can give (no raw surrogate): the encoding may be skipped
            t.encode("utf-8")
        except UnicodeEncodeError:
            continue
        assert safejson._maybe_surrogate(t, from_utf8=True) == bool(former.search(t)), ascii(t)


def test_duplicate_keys_are_named_as_a_key_by_key_insert_names_them():
    """The object hook builds the dict in one call and names the first repeated key only when the sizes differ: the
    same dict and the same first duplicate as inserting key by key (the former hook), on 3,000 seeded key lists."""
    import random

    def former(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                return f"duplicate key {safejson._excerpt(key)!s}"
            out[key] = value
        return out

    rng = random.Random(35)
    for _ in range(3000):
        pairs = [(rng.choice("abcdefgh"), rng.randint(0, 9)) for _ in range(rng.randint(0, 8))]
        try:
            got = safejson._pairs_hook(pairs)
        except safejson._Reject as exc:
            got = str(exc)
        want = former(pairs)
        assert got == want and (not isinstance(got, dict) or list(got.items()) == list(want.items())), pairs


def test_the_joined_scan_finds_a_key_exactly_when_one_string_holds_one():
    """``check_secrets_value`` scans a card's strings joined by NUL and looks string by string only after a hit:
    that is exact only if the joined text matches when, and only when, some string does. Hand-made pieces at each
    pattern's edges (a key whole, one character short, with a letter or digit glued before or after, a prefix cut
    from its key material, a NUL inside) checked in every ordered pair and, seeded, in 3,000 triples."""
    import random

    from mtboard.validate.hygiene import find_key_like

    keys = ["sk-" + "a" * 20, "hf_" + "b" * 30, "AKIA" + "ABCDEFGHIJKLMNOP", "ASIA" + "0123456789ABCDEF",
            "Bearer " + "c" * 16, "BEARER\t" + "d" * 16 + "==", "ghp_" + "e" * 30, "github_pat_" + "f" * 30,
            "AIza" + "g" * 35, "xoxb-" + "h" * 10, "-----BEGIN RSA PRIVATE KEY-----"]
    pieces = ["", "x", "1", "Z", " ", "\n", "=", "-", "_", "\x00", "bearer", "prose with sk- in it"]
    for k in keys:
        pieces += [k, k[:-1], "x" + k, "9" + k, k + "X", k + "7", k[: len(k) // 2], k[len(k) // 2:],
                   k[:3] + "\x00" + k[3:]]
    assert sum(find_key_like(p) is not None for p in pieces) >= len(keys)  # the pieces hold real hits

    def same(strings: list[str]) -> None:
        joined = find_key_like("\x00".join(strings)) is not None
        assert joined == any(find_key_like(s) is not None for s in strings), strings

    for a in pieces:
        for b in pieces:
            same([a, b])
    rng = random.Random(20261206)
    for _ in range(3000):
        same([rng.choice(pieces) + rng.choice(pieces) for _ in range(3)])


def test_a_key_in_an_escaped_card_string_is_found_by_its_path():
    """A card whose JSON text holds escapes (no raw-text fast path) and one key among thousands of strings: the key is
    reported once, at its JSON path; without it nothing is reported."""
    from mtboard.validate.hygiene import check_secrets_value

    class Run:
        def __init__(self) -> None:
            self.fails: list[tuple[str, str, str]] = []

        def fail(self, check: str, message: str, where: str) -> None:
            self.fails.append((check, message, where))

    data = {"results": [{"entry_id": i, "predicted": f"line one\nline {i}"} for i in range(3000)], "notes": "ok"}
    text = json.dumps(data)
    assert "\\n" in text
    run = Run()
    check_secrets_value(run, data, text)
    assert run.fails == []
    data["results"][1234]["predicted"] = "see\nsk-" + "Q" * 24
    run = Run()
    check_secrets_value(run, data, json.dumps(data))
    assert [(c, w) for c, _, w in run.fails] == [("secrets", "$.results[1234].predicted")]
