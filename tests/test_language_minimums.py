"""Spec §11.1 new-language minimums (issue 39 item 3): ``corpus check --new-language`` refuses a public corpus below
each minimum, naming it; ``corpus check --private`` refuses a secret corpus with < 50 gold_standard entries or,
for a new language, without its consent document; the committed corpora meet the public minimums."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.inputs.corpora import minimums
from mtboard.verify.secret import MIN_ENTRIES
from mtboard.core.schema import Segment

runner = CliRunner()
CORPORA = Path(__file__).resolve().parent.parent / "corpora"


def _entry(i: int, segment: str = "development", difficulty: int = 1, register: str = "formal") -> dict:
    return {"id": i, "source": f"The meeting number {i} starts at nine.", "reference": f"{i}. bilera bederatzietan "
            "hasten da.", "domain": "gov", "segment": segment, "difficulty": difficulty, "register": register,
            "provenance": "speaker-authored", "origin": {"package": "community session 2026-11", "locator": f"#{i}"}}


def _corpus(n_dev: int = 30, n_diag: int = 10, levels=(1, 2, 3), registers=("formal", "technical"),
            segment_extra: str | None = None, n_extra: int = 0) -> dict:
    """An en→eu corpus with ``n_dev`` development and ``n_diag`` diagnostic entries, difficulties cycling through
    ``levels`` and registers through ``registers`` (plus ``n_extra`` entries of ``segment_extra``)."""
    segs = ["development"] * n_dev + ["diagnostic"] * n_diag + [segment_extra] * n_extra
    entries = [_entry(i + 1, s, levels[i % len(levels)], registers[i % len(registers)]) for i, s in enumerate(segs)]
    return {"dataset": {"id": "mtb-en-eu-dev", "version": "1.0.0", "language_pair": "EN→EU", "source_language": "en",
                        "target_language": "eu", "created": "2026-12-01", "license": "CC-BY-4.0",
                        "provenance": ["speaker-authored"]}, "entries": entries}


def _write(tmp_path: Path, data: dict, name: str = "mtb-en-eu-dev.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return p


def _check(*args: str):
    return runner.invoke(app, ["corpus", "check", *args])


def test_a_corpus_meeting_every_public_minimum_passes(tmp_path):
    p = _write(tmp_path, _corpus())
    res = _check("--new-language", "--public", str(p))
    assert res.exit_code == 0, res.output
    assert f"{p}: ok — mtb-en-eu-dev 1.0.0 EN→EU, 40 entries" in res.stdout
    assert "error" not in res.output and "note" not in res.output


def _no_origin(data: dict) -> dict:
    del data["entries"][7]["origin"]  # entries[7] (id 8) only
    return data


@pytest.mark.parametrize("data,line", [
    (_corpus(n_dev=29), "entries[].segment: 29 development entries, 30 required (spec §11.1 item 2, minimum "
                        "'development') (fix: add development entries)"),
    (_corpus(n_diag=9), "entries[].segment: 9 diagnostic entries, 10 required (spec §11.1 item 3, minimum "
                        "'diagnostic') (fix: add diagnostic entries for the language's phenomena)"),
    (_no_origin(_corpus()), "entries[].provenance, entries[].origin: 39 of 40 entries have provenance and origin, "
                            "every entry required (spec §11.1 item 4, minimum 'provenance'; first without: "
                            "entries[7] (id 8)) (fix: give every entry a provenance label and an origin"),
    (_corpus(levels=(2, 4)), "entries[].difficulty: 2 difficulty levels, 3 required (spec §11.1 item 5, minimum "
                             "'difficulty'; levels found: 2, 4) (fix: label entries with more difficulty levels"),
    (_corpus(registers=("technical",)), "entries[].register: 1 register, 2 required (spec §11.1 item 6, minimum "
                                        "'register'; registers found: technical) (fix: add entries of another "
                                        "register"),
], ids=["development", "diagnostic", "provenance", "difficulty", "register"])
def test_each_public_minimum_refused_by_name(tmp_path, data, line):
    p = _write(tmp_path, data)
    res = _check("--new-language", str(p))
    assert res.exit_code == 1
    errors = [x for x in res.stderr.splitlines() if x.startswith("error: ")]
    assert errors == [errors[0]] and errors[0].startswith(f"error: {p}: {line}"), res.stderr
    assert f"{p}: below the new-language minimums" in res.stdout
    # without --new-language the same file passes, with a note naming the unmet minimum
    plain = _check(str(p))
    assert plain.exit_code == 0 and "below spec §11.1's new-language minimums" in plain.stderr


def test_every_unmet_minimum_gets_its_own_line(tmp_path):
    p = _write(tmp_path, _corpus(n_dev=3, n_diag=0, levels=(1,), registers=("formal",)))
    res = _check("--new-language", str(p))
    assert res.exit_code == 1
    keys = [x.split("minimum '")[1].split("'")[0] for x in res.stderr.splitlines() if x.startswith("error: ")]
    assert keys == ["development", "diagnostic", "difficulty", "register"]


def test_committed_corpora_meet_the_public_minimums():
    files = sorted(str(p) for p in CORPORA.glob("*.json"))
    assert len(files) >= 6
    res = _check("--new-language", "--public", *files)
    assert res.exit_code == 0, res.output
    for f in files:
        assert f"{f}: ok" in res.stdout


def test_the_table_is_spec_11_1_and_feeds_the_secret_segment_minimum():
    assert [(m.item, m.key, m.where, m.need) for m in minimums.MINIMUMS] == [
        (1, "gold_standard", "private", 50), (2, "development", "public", 30), (3, "diagnostic", "public", 10),
        (4, "provenance", "public", 0), (5, "difficulty", "public", 3), (6, "register", "public", 2),
        (7, "consent", "private", 1)]
    assert MIN_ENTRIES[Segment.gold_standard] == 50  # verify --segment gold_standard reads the same table
    # the docs' table says the same, row by row, and the CLI help is made from the table
    docs = (CORPORA.parent / "docs" / "corpora.md").read_text(encoding="utf-8")
    for m in minimums.MINIMUMS:
        assert f"| {m.item} | {m.short}" in docs, m.key
    assert minimums.summary("public") == ("≥ 30 development entries, ≥ 10 diagnostic entries, provenance and origin "
                                          "on every entry, ≥ 3 of the 5 difficulty levels, ≥ 2 registers")


# --------------------------------------------------------------------------------------------------------------------
# the maintainers' side: corpus check --private


def _secret(tmp_path: Path, n_gold: int) -> Path:
    data = _corpus(n_dev=0, n_diag=0, segment_extra="gold_standard", n_extra=n_gold)
    data["dataset"]["id"] = "mtb-en-eu-gold"
    return _write(tmp_path, data, "mtb-en-eu-gold.json")


def test_private_check_refuses_fewer_than_50_gold_standard_entries(tmp_path):
    p = _secret(tmp_path, 49)
    (tmp_path / "mtb-en-eu-gold.consent.md").write_text("Agreement of 2026-11-30 …\n", encoding="utf-8")
    res = _check("--private", "--new-language", str(p))
    assert res.exit_code == 1
    errors = [x for x in res.stderr.splitlines() if x.startswith("error: ")]
    assert errors == [f"error: {p}: entries[].segment: 49 gold_standard entries, 50 required (spec §11.1 item 1, "
                      "minimum 'gold_standard') (fix: add gold_standard entries to the private corpus)"]
    assert "bederatzietan" not in res.output  # counts only, never the secret text


def test_private_check_refuses_a_missing_or_empty_consent_document(tmp_path):
    p = _secret(tmp_path, 50)
    res = _check("--private", "--new-language", str(p))
    assert res.exit_code == 1
    errors = [x for x in res.stderr.splitlines() if x.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: {p}: consent document: no consent document, one required (spec §11.1 item 7, minimum 'consent'; "
        "looked for mtb-en-eu-gold.consent{.md,.txt,.pdf,.html} beside it)"), res.stderr
    doc = tmp_path / "mtb-en-eu-gold.consent.pdf"
    doc.write_bytes(b"")  # an empty file is no document
    assert _check("--private", "--new-language", str(p)).exit_code == 1
    doc.write_bytes(b"%PDF-1.7 signed agreement")
    ok = _check("--private", "--new-language", str(p))
    assert ok.exit_code == 0, ok.output
    assert f"{p}: ok — mtb-en-eu-gold 1.0.0 EN→EU, 50 entries" in ok.stdout
    # an established pair's secret corpus needs no consent document, still 50 gold_standard entries
    doc.unlink()
    assert _check("--private", str(p)).exit_code == 0
    few = _check("--private", str(_secret(tmp_path, 10)))
    assert few.exit_code == 1
    # --private alone checked the gold_standard count only: the heading says so, not "new-language minimums"
    assert (f"{p}: below the private corpus's minimum (≥ 50 gold_standard entries, spec §2.3) — mtb-en-eu-gold "
            "1.0.0 EN→EU, 10 entries") in few.stdout
    assert "new-language" not in few.stdout


def test_consent_fix_lists_every_accepted_suffix():
    # the fix text and the check read the one constant: .md, .txt, .pdf and .html are all accepted
    assert minimums.CONSENT_SUFFIXES == (".md", ".txt", ".pdf", ".html")
    assert minimums.BY_KEY["consent"].fix == ("put the signed agreement beside the private corpus as "
                                              "<stem>.consent.md (or .txt, .pdf, .html)")


def test_private_and_public_exclude_each_other(tmp_path):
    res = _check("--private", "--public", str(_secret(tmp_path, 50)))
    assert res.exit_code == 1 and "--public and --private exclude each other" in res.stderr
