"""Coaching data cannot drift (issue 18 review, item 7): every committed coached card's coaching file is committed
under coaching/ with exactly the bytes the card was run with, and ``mtboard validate`` fails a card whose coaching
file is present and differs (:func:`mtboard.validate.structure.check_coaching_file`; why a failure and not a warning:
its docstring)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from mtboard import validate as V

ROOT = Path(__file__).resolve().parents[1]
COACHED = next((ROOT / "submissions" / "mtb-en-es-dev").glob("gemma-3-270m-q4-k-m.gguf__coached-few-shot__*.json"))


def _coached_cards() -> list[Path]:
    out = []
    for p in sorted((ROOT / "submissions").rglob("*.json")):
        if p.name.endswith(".verification.json"):
            continue
        if json.loads(p.read_bytes()).get("coaching_data_sha256"):
            out.append(p)
    return out


def test_every_committed_coached_card_has_its_coaching_file_unchanged():
    cards = _coached_cards()
    assert COACHED in cards
    for p in cards:
        d = json.loads(p.read_bytes())
        name = d["method_config"]["coachingFile"]
        f = ROOT / "coaching" / name
        assert f.is_file() and not f.is_symlink(), f"{p.name}: coaching/{name} is not committed"
        assert hashlib.sha256(f.read_bytes()).hexdigest() == d["coaching_data_sha256"], (
            f"{p.name}: coaching/{name} differs from the card's coaching data")
    d = json.loads(COACHED.read_bytes())
    assert d["method_config"]["coachingFile"] == "en-es-debian-terms.txt"
    assert d["coaching_data_sha256"] == "d88f635f43f69d1e429d7ffca2df15d36bb19918e9327c2e84afd29fa4b5ff47"


def _method_problems(root: Path) -> list[tuple[str | None, str]]:
    ctx = V.Context(root=root, corpora_dir=ROOT / "corpora", recompute=False)
    rep = V.validate_bytes(COACHED.read_bytes(), COACHED.name, ctx)
    return [(p.field, p.message) for p in rep.problems if p.check == "method"]


def test_validate_fails_a_card_whose_coaching_file_changed(tmp_path):
    assert _method_problems(ROOT) == []
    (tmp_path / "coaching").mkdir()
    assert _method_problems(tmp_path) == []  # absent: the card holds its text; the repository test above applies
    edited = tmp_path / "coaching" / "en-es-debian-terms.txt"
    shutil.copy(ROOT / "coaching" / edited.name, edited)
    assert _method_problems(tmp_path) == []
    edited.write_bytes(edited.read_bytes() + b"- kernel: kernel\n")  # one more glossary line, after sealing
    got = hashlib.sha256(edited.read_bytes()).hexdigest()
    assert _method_problems(tmp_path) == [(
        "$.method_config.coachingFile",
        f"coaching/en-es-debian-terms.txt has changed since the card was sealed: its SHA-256 is {got[:12]}…, the "
        "card's coaching_data_sha256 d88f635f43f6… (restore the file, or commit the edited coaching data under a new "
        "file name and run it as a new method)")]


def test_mtboard_validate_reports_the_drift(tmp_path):
    import cli_support

    root = tmp_path / "repo"
    (root / "submissions" / "mtb-en-es-dev").mkdir(parents=True)
    shutil.copy(COACHED, root / "submissions" / "mtb-en-es-dev" / COACHED.name)
    shutil.copytree(ROOT / "coaching", root / "coaching")
    ok = cli_support.invoke(["validate", "--root", str(root), "--corpora", str(ROOT / "corpora")], cwd=root)
    assert ok.returncode == 0 and "validation passed: 1 file(s)" in ok.stdout, ok.stdout[-1500:]
    (root / "coaching" / "en-es-debian-terms.txt").write_text("- bug: fallo\n", encoding="utf-8")
    bad = cli_support.invoke(["validate", "--root", str(root), "--corpora", str(ROOT / "corpora")], cwd=root)
    assert bad.returncode == 1
    assert "coaching/en-es-debian-terms.txt has changed since the card was sealed" in bad.stdout + bad.stderr


def test_a_checkout_that_rewrote_line_ends_is_told_so(tmp_path):
    (tmp_path / "coaching").mkdir()
    lf = (ROOT / "coaching" / "en-es-debian-terms.txt").read_bytes()
    (tmp_path / "coaching" / "en-es-debian-terms.txt").write_bytes(lf.replace(b"\n", b"\r\n"))
    ((field, message),) = _method_problems(tmp_path)
    assert field == "$.method_config.coachingFile"
    assert message.startswith("coaching/en-es-debian-terms.txt has CRLF line ends and matches the recorded SHA-256 "
                              "only with LF line ends: this checkout rewrote its line ends (git core.autocrlf=true); "
                              "fix: turn line-end conversion off")


def test_a_symlink_or_a_directory_in_place_of_the_coaching_file_fails(tmp_path):
    """Validator review: the drift check must not be skipped by replacing the committed file with a symlink to an
    edited copy (or to the original: a symlink is never the committed file), or with a directory."""
    (tmp_path / "coaching").mkdir()
    path = tmp_path / "coaching" / "en-es-debian-terms.txt"
    edited = tmp_path / "edited.txt"
    edited.write_bytes((ROOT / "coaching" / path.name).read_bytes() + b"- kernel: kernel\n")
    path.symlink_to(edited)
    assert _method_problems(tmp_path) == [(
        "$.method_config.coachingFile",
        "coaching/en-es-debian-terms.txt is a symlink, not a regular file (fix: commit the coaching data there as a "
        "regular file whose bytes hash to the card's coaching_data_sha256 d88f635f43f6…)")]
    path.unlink()
    path.symlink_to(ROOT / "coaching" / path.name)  # a link to the unchanged file is refused too
    assert [m for _, m in _method_problems(tmp_path)] == [
        "coaching/en-es-debian-terms.txt is a symlink, not a regular file (fix: commit the coaching data there as a "
        "regular file whose bytes hash to the card's coaching_data_sha256 d88f635f43f6…)"]
    path.unlink()
    path.mkdir()
    assert _method_problems(tmp_path) == [(
        "$.method_config.coachingFile",
        "coaching/en-es-debian-terms.txt is not a regular file (fix: commit the coaching data there as a regular file "
        "whose bytes hash to the card's coaching_data_sha256 d88f635f43f6…)")]
    path.rmdir()
    assert _method_problems(tmp_path) == []  # absent: not a failure (the card embeds the text)
