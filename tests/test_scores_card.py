"""Issue 17 item 2: scores-only cards (:mod:`mtboard.score.scores_card`, :mod:`mtboard.validate.scores`).

A committed development card stands in for a secret-segment run here (the reduction is the same): its scores-only
card recomputes to the card's own scores exactly; a statistic changed and re-sealed is rejected by the recomputation;
a text field added (and re-sealed) is rejected by the text check; the seal catches an unsealed edit.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.score import scores_card as S
from mtboard.cli.main import app
from mtboard.core.documents import load_card
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.schema import ScoresCard, Segment
from mtboard.validate.scores import check_scores_data, text_fields, validate_scores_card

ROOT = Path(__file__).resolve().parents[1]
GEMMA = next((ROOT / "submissions" / "mtb-en-es-dev").glob("gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))
APERTIUM = (ROOT / "submissions" / "mtb-en-es-dev") / "apertium-eng-spa__default__d0f5919b5569.json"  # the full-corpus card (the sweep has a --limit one)
SALT = bytes(range(32))


def _scores(path: Path) -> tuple[ScoresCard, dict]:
    card = load_card(path)
    sc = S.from_run_card(card, card, salt=SALT, segment=Segment.gold_standard, corpus_sha256="e" * 64,
                         corpus_version="1.0.0")
    return sc, sc.model_dump(mode="json")


@pytest.mark.parametrize("path", [GEMMA, APERTIUM], ids=["gemma", "apertium"])
def test_scores_only_card_recomputes_the_run_exactly(path):
    card = load_card(path)
    sc, data = _scores(path)
    assert check_scores_data(data, "x").problems == []
    for name in ("chrf_plus_plus", "bleu", "ter", "exact_match_rate", "fst_acceptance_rate", "semantic_score",
                 "code_switching_rate", "hallucination_rate", "composite", "errors", "total"):
        assert getattr(sc.scores, name) == getattr(card.scores, name), name
    assert sc.scores.mechanical == {k: v for k, v in card.scores.mechanical.items() if ":" not in k}
    assert sc.dataset.entry_count == len(card.results) == len(sc.segments)
    # hypothesis hashes: HMAC-SHA256 keyed with the salt, recomputed here with the standard library
    r = card.results[0]
    assert sc.segments[0].hypothesis_hmac == hmac.new(SALT, r.predicted.encode(), hashlib.sha256).hexdigest()
    assert sc.salt_id == hashlib.sha256(SALT).hexdigest()[:16]
    # no text of the run anywhere in the card
    blob = json.dumps(data, ensure_ascii=False)
    for res in card.results:
        for text in (res.source, res.expected, res.predicted):
            if text and len(text) > 12:
                assert text not in blob


def test_known_values_of_the_apertium_card():
    sc, _ = _scores(APERTIUM)
    assert sc.scores.chrf_plus_plus == 48.233612731571675 and sc.scores.composite == 0.570035
    assert sc.scores.total == 355 and sc.scores.bleu == 20.775698554289452
    assert sc.scores.mechanical == {"no_usable_output": 0, "source_untranslated": 5, "usable": 350}


def test_a_statistic_changed_and_resealed_is_rejected():
    _, data = _scores(GEMMA)
    bad = copy.deepcopy(data)
    bad["segments"][3]["chrf"][2] += 1  # one more matching character 1-gram in entry 4
    bad = S.seal(bad)
    problems = check_scores_data(bad, "x").problems
    src = "(recomputed from the segments: mtboard.score.scores_card.recompute)"
    assert problems == [f"recompute: $.scores.chrf_plus_plus is 36.43984438669218, allowed: 36.44033223176619 {src}",
                        f"recompute: $.scores.composite is 0.457746, allowed: 0.45775 {src}"]
    unsealed = copy.deepcopy(data)
    unsealed["scores"]["bleu"] += 0.1
    assert check_scores_data(unsealed, "x").problems[0] == (
        f"seal: $.scores_card_hash is {data['scores_card_hash'][:12]!r}…, allowed: "
        f"{S.scores_card_hash(unsealed)[:12]!r}… (the SHA-256 of the canonical card with this field \"\": changed "
        "after sealing; spec §3.9)")


@pytest.mark.parametrize("where,key,value", [
    ("segment", "source", "The committee approved the budget."),
    ("segment", "hypothesis", "El comité aprobó el presupuesto."),
    ("top", "notes", "reference: El comité aprobó el presupuesto."),
    ("top", "model_slug", "El comité aprobó el presupuesto."),  # a sentence in an identifier field
], ids=["source", "hypothesis", "notes", "sentence-in-identifier"])
def test_a_text_field_is_rejected(where, key, value):
    _, data = _scores(GEMMA)
    bad = copy.deepcopy(data)
    (bad["segments"][5] if where == "segment" else bad)[key] = value
    bad = S.seal(bad)
    path = f"segments[5].{key}" if where == "segment" else key
    assert check_scores_data(bad, "x").problems == [
        f"text: $.{path} {_TEXT_LINE}"]


def test_text_fields_allows_only_declared_identifiers():
    assert text_fields({"dataset": {"id": "mtb-gold-en-es"}, "segments": [{"outcome": "usable"}]}) == []
    assert text_fields({"segments": [{"outcome": "usable"}, {"outcome": "two words"}]}) == ["segments[1].outcome"]


def test_public_segment_and_weak_salt_are_refused():
    card = load_card(APERTIUM)
    with pytest.raises(InputError, match="public"):
        S.from_run_card(card, card, salt=SALT, segment=Segment.development, corpus_sha256="e" * 64,
                        corpus_version="1")
    with pytest.raises(ConfigError, match="at least 32 random bytes"):
        S.parse_salt("00" * 16)
    assert S.parse_salt(SALT.hex()) == SALT


@pytest.mark.slow  # a whole-system test: 8 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_validate_scores_cli(tmp_path):
    _, data = _scores(APERTIUM)
    good = tmp_path / "a.gold_standard.scores.json"
    good.write_text(json.dumps(data))
    bad = copy.deepcopy(data)
    bad["segments"][0]["reference"] = "Hola mundo."
    (tmp_path / "b.gold_standard.scores.json").write_text(json.dumps(S.seal(bad)))
    runner = CliRunner()
    res = runner.invoke(app, ["validate-scores", str(good)])
    assert res.exit_code == 0 and "scores-only validation passed: 1 file(s)" in res.output
    res = runner.invoke(app, ["validate-scores", str(tmp_path)])
    assert res.exit_code == 1
    assert "$.segments[0].reference holds text" in res.output and "failed: 1 of 2 file(s)" in res.output
    assert validate_scores_card(good).ok


# Issue 17 review: identifier-shaped fields have strict per-field patterns (a long payload does not fit), and the
# signatures are recomputed.
_B64 = "QmFzZTY0IGNhbiBjYXJyeSBhbnkgc2VudGVuY2Ugb2YgdGhlIHNlY3JldCBzZWdtZW50IGhlcmU="  # base64 of a sentence
_TEXT_LINE = ("holds text (not repeated here), allowed: no string here (strings only at the identifier, hash, enum "
              "and signature paths of mtboard.core.schema.SCORES_STRING_PATTERNS, each of its pattern; spec §6.4: a "
              "scores-only card holds no source, reference or hypothesis text)")


@pytest.mark.parametrize("path,value", [
    ("condition", "few-shot." + "Zm9vYmFy" * 10),  # 89 characters: over the 64 a prompt name may have
    ("model_slug", "gemma/" + _B64 * 2),  # 156 characters: over 128
    ("method_spec", "gguf:" + _B64 * 2),
    ("harness_version", "0.4.0+" + _B64[:20]),
    ("timestamp", "2026-12-01T02:16:38Z" + _B64[:8]),
    ("dataset.version", "1.0.0-" + _B64[:10]),
    ("dataset.source_language", "en-" + _B64[:30]),
    ("signatures.chrf", "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0|textnorm:1|x:" + _B64),
    ("signatures.semantic", "semantic:use-multilingual-v3|package:x==1|weights:sha256:" + _B64[:12]),
    ("segments[0].hypothesis_hmac", _B64[:64]),
    ("salt_id", _B64[:16]),
], ids=["condition", "model_slug", "method_spec", "harness_version", "timestamp", "dataset.version",
        "source_language", "signature-chrf", "signature-semantic", "hypothesis_hmac", "salt_id"])
def test_a_payload_in_an_identifier_field_is_rejected(path, value):
    _, data = _scores(GEMMA)
    bad = copy.deepcopy(data)
    node, *keys = path.replace("[0]", ".0").split(".")
    target = bad
    for k in [node, *keys][:-1]:
        target = target[int(k)] if k.isdigit() else target[k]
    target[[node, *keys][-1]] = value
    assert check_scores_data(S.seal(bad), "x").problems == [f"text: $.{path} {_TEXT_LINE}"]


def test_a_valid_looking_signature_that_is_not_the_harness_one_is_rejected():
    _, data = _scores(GEMMA)
    bad = copy.deepcopy(data)
    bad["signatures"]["bleu"] = bad["signatures"]["bleu"].replace("tok:13a", "tok:Zm9vYmFy")  # same shape
    assert check_scores_data(S.seal(bad), "x").problems == [
        f"signature: $.signatures.bleu is {bad['signatures']['bleu']!r}, allowed: "
        "'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0|textnorm:2' (this harness's bleu signature for "
        "target es)"]


def _committed_cards() -> list[Path]:
    return sorted(p for p in (ROOT / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))


def test_every_committed_card_fits_the_scores_patterns():
    """The patterns are the real shapes: every committed development card's (and the sweep cards', which are
    committed under submissions/ too) identifiers would pass into a scores-only card."""
    import re

    from mtboard.core.schema import SCORES_STRING_PATTERNS as P

    seen = 0
    for path in _committed_cards():
        d = json.loads(path.read_bytes())
        ds = d["dataset"]
        values = {"harness_version": d["harness_version"], "timestamp": d["timestamp"],
                  "method_spec": d["method"]["spec"], "model_slug": d["model_slug"], "condition": d["condition"],
                  "card_dataset_id": ds["id"], "dataset.id": ds["id"], "dataset.version": ds["version"],
                  "dataset.language_pair": ds["language_pair"], "dataset.source_language": ds["source_language"],
                  "dataset.target_language": ds["target_language"]}
        # the morphology signature (ES→EN, CA→EN: issue 39) is not carried into a scores-only card (no morph counts)
        values.update({f"signatures.{k}": v for k, v in d["scores"]["signatures"].items() if k != "morphology"})
        for key, value in values.items():
            assert re.fullmatch(P[key], value), (path.name, key, value)
        seen += 1
    assert seen >= 39  # 39 committed cards on main (issue 39); new ones must fit too


def test_a_development_card_whose_condition_does_not_fit_is_refused_before_reduction():
    card = load_card(APERTIUM)
    odd = card.model_copy(update={"condition": "with glossary v2"})  # `mtboard run --condition` is free-form
    with pytest.raises(InputError, match="the development card's condition does not fit a scores-only card"):
        S.from_run_card(card, odd, salt=SALT, segment=Segment.gold_standard, corpus_sha256="e" * 64,
                        corpus_version="1.0.0")
