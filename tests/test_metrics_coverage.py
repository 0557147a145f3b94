"""No metric's coverage depends on what a system writes (issue 32 item 1), and what padding does to TER, stated as
measured (docs/SCORING_SPEC.md §2).

The property tests pad the real outputs of EVERY committed card (``submissions/**``, not ``*.verification.json``):
at random — seeded ``random.Random`` (the ``hypothesis`` library is not in the project's environment) — with junk
tokens absent from the reference, repeats of the output and words taken from the reference, checking that chrF++,
BLEU, TER and the sentence scores cover exactly the segments they cover unpadded; and the same reference-blind way for
every output (prefix, suffix, random insertion of a junk token, repeat), checking that coverage is the same and corpus
TER never improves, and counting the sentences whose TER falls — sacrebleu's TER is tercom's heuristic, an upper bound
of the true TER, so an added token can lower one sentence's value (hand-made example below, 30 → 4 edits); those
counts are pinned to the measured ones. The issue's own example is checked by hand below.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from pathlib import Path

import pytest
import sacrebleu

from mtboard.core.schema import Entry, Outcome, TranslationRecord
from mtboard.score import scoring
from mtboard.score.measure import check_and_measure, semantic_values
from mtboard.score.metrics.ter import make_ter, ter_from_stats

ROOT = Path(__file__).resolve().parents[1]
CARDS = sorted(p for p in (ROOT / "submissions").rglob("*.json") if not p.name.endswith(".verification.json"))
FAST_CARDS = {next(p for p in CARDS if p.parent == folder) for folder in {p.parent for p in CARDS}}
"""The per-card property tests run on every committed card in the full lane and on one card per submissions folder
(every language pair; 9 of 54 cards) in the fast lane (docs/TESTING.md §1: together the 108 cases took 75 CPU-s, a
tenth of the fast lane)."""
CARD_CASES = [pytest.param(p, id=p.stem[:60], marks=() if p in FAST_CARDS else pytest.mark.slow) for p in CARDS]

REFS = ["Abra el archivo y guarde los cambios.", "El primer usuario se crea durante la instalación.",
        "Pulse Aceptar para continuar."]
WRONG = "Haga clic en cancelar ahora."
NOTE = ("Nota: esta traducción se ha generado automáticamente y puede contener errores, revísela antes de publicarla "
        "en su sitio web.")


def _score_es(outputs):
    entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(
        ["Open the file and save the changes.", "The first user is created during installation.",
         "Press OK to continue."], REFS))]
    records = [TranslationRecord(entry_id=e.id, raw_predicted=o) for e, o in zip(entries, outputs)]
    scores, _ = scoring.score_run(entries, records, source_language="en", target_language="es", elapsed_seconds=1.0,
                                  fst=False)
    return scores


def test_the_issues_padded_hypothesis_gets_no_better_ter():
    # Hand check (TER tokens: lower-cased whitespace words): references have 7 + 8 + 4 = 19 words. Unpadded, the
    # third hypothesis "haga clic en cancelar ahora." against "pulse aceptar para continuar." is 4 substitutions
    # + 1 deletion = 5 edits → 5 / 19 = 26.3158. Padded with the 19-word note (none of its words is in the
    # reference), the 24 hypothesis words cost 4 substitutions + 20 deletions = 24 edits → 24 / 19 = 126.3158.
    # Before this change the padded segment (24 > 20 words) dropped out and the corpus TER was 0.0.
    plain = _score_es(REFS[:2] + [WRONG])
    padded = _score_es(REFS[:2] + [f"{WRONG} {NOTE}"])
    assert plain.ter == pytest.approx(500 / 19, abs=1e-9) and round(plain.ter, 1) == 26.3
    assert padded.ter == pytest.approx(2400 / 19, abs=1e-9)
    assert padded.ter >= plain.ter
    assert plain.ter_coverage == padded.ter_coverage == 1.0
    # sacrebleu on the same texts agrees (its TER has no length cap)
    assert padded.ter == pytest.approx(sacrebleu.corpus_ter(REFS[:2] + [f"{WRONG} {NOTE}"], [REFS]).score)


def _junk(rng: random.Random, reference: str) -> str:
    """A token absent from the reference (and from its TER tokens: letters only, checked as a substring)."""
    low = reference.lower()
    while True:
        tok = "qz" + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 7)))
        if tok not in low:
            return tok


def _pad(rng: random.Random, text: str, reference: str, kind: str) -> str:
    words = text.split(" ")
    n = rng.randint(1, max(2, len(words) * 3))
    if kind == "absent":
        for _ in range(n):
            words.insert(rng.randint(0, len(words)), _junk(rng, reference))
        return " ".join(words)
    if kind == "repeat":
        return " ".join([text] * rng.randint(2, 4))
    ref_words = reference.split() or ["x"]
    for _ in range(n):
        words.insert(rng.randint(0, len(words)), rng.choice(ref_words))
    return " ".join(words)


def _items(card: dict, outputs: list[str]) -> list[tuple]:
    return [(r["source"], o, r["expected"], r.get("error_kind"), None, []) for r, o in zip(card["results"], outputs)]


JUNK = "Ψ"
"""The reference-blind padding token: absent from every committed reference (checked below), a letter in no target
script of the committed corpora. A system cannot know the reference, so these paddings are what it can try."""


def _insert(output: str, rng: random.Random) -> str:
    words = output.split(" ")
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randint(0, len(words)), JUNK)
    return " ".join(words)


BLIND_PADDINGS = {
    "prefix": lambda o, rng: f"{JUNK} {o}",
    "suffix": lambda o, rng: f"{o} {JUNK}",
    "insert": _insert,  # 1–3 junk tokens at random positions, seeded by the entry id
    "repeat": lambda o, rng: f"{o} {o}",
}
"""The same reference-blind padding applied to EVERY output of a card (docs/SCORING_SPEC.md §2, TER)."""

SENTENCE_DROPS: dict[str, dict[str, int]] = {
    "mtb-en-ca-dev apertium/eng-cat default n=355 out=70a626": {"suffix": 1},
    "mtb-en-es-dev apertium/eng-spa default n=355 out=a5d234": {"suffix": 1},
    "mtb-en-es-dev apertium/eng-spa default n=20 out=824e77": {"suffix": 1},
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf few-shot n=355 out=5de509": {"repeat": 2},
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf zero-shot n=355 out=9e44b0": {"repeat": 2},
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf zero-shot-completion n=20 out=7fd7c7": {"repeat": 1},
    "mtb-en-fr-dev gemma-3-270m-q4_k_m.gguf few-shot n=355 out=226744": {"suffix": 1},
    "mtb-en-ja-dev gemma-3-270m-q4_k_m.gguf few-shot n=330 out=ee0dfb": {"prefix": 1, "suffix": 1, "insert": 1,
                                                                       "repeat": 10},
}
"""Measured: per card (keyed by :func:`_card_key`) and padding, the segments whose sentence TER edits FALL when every
output is padded, among the entries whose mechanical outcome the padding leaves unchanged (docs/SCORING_SPEC.md §2
has the same table). sacrebleu's TER is tercom's heuristic (greedy shifts from one edit-distance alignment, a 25-wide
beam), an upper bound of the true TER: one added token can move the alignment it starts from and let it find a
cheaper one. Every committed card not listed: none."""


MEASURED_WITHOUT_DROPS: frozenset[str] = frozenset({
    "mtb-en-ca-dev baseline/echo baseline n=355 out=378a2e",
    "mtb-en-ca-dev baseline/empty baseline n=355 out=b8ee8f",
    "mtb-en-ca-dev gemma-3-270m-q4_k_m.gguf few-shot n=355 out=9997ea",
    "mtb-en-de-dev baseline/echo baseline n=355 out=ee2f02",
    "mtb-en-de-dev baseline/empty baseline n=355 out=b8ee8f",
    "mtb-en-de-dev gemma-3-270m-q4_k_m.gguf few-shot n=355 out=770642",
    "mtb-en-es-dev baseline/echo baseline n=20 out=76047f",
    "mtb-en-es-dev baseline/echo baseline n=355 out=0892f8",
    "mtb-en-es-dev baseline/empty baseline n=355 out=b8ee8f",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf coached-few-shot n=12 out=82d4b9",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf few-shot-completion n=20 out=1e42ee",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf few-shot-completion n=20 out=54524b",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf few-shot-completion n=20 out=bb6b04",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf fst-gated-few-shot n=60 out=27f18d",
    "mtb-en-es-dev gemma-3-270m-q4_k_m.gguf zero-shot-completion n=20 out=80f5b7",
    "mtb-en-fr-dev baseline/echo baseline n=20 out=828011",
    "mtb-en-fr-dev baseline/echo baseline n=355 out=1c8e4d",
    "mtb-en-fr-dev baseline/empty baseline n=355 out=b8ee8f",
    "mtb-en-fr-dev gemma-3-270m-q4_k_m.gguf few-shot-completion n=20 out=2a8651",
    "mtb-en-fr-dev gemma-3-270m-q4_k_m.gguf few-shot-completion n=20 out=dde9eb",
    "mtb-en-fr-dev gemma-3-270m-q4_k_m.gguf zero-shot-completion n=20 out=a3e193",
    "mtb-en-fr-dev gemma-3-270m-q4_k_m.gguf zero-shot-completion n=20 out=a4ce1c",
    "mtb-en-ja-dev baseline/echo baseline n=330 out=8fff00",
    "mtb-en-ja-dev baseline/empty baseline n=330 out=847448",
    "mtb-ja-en-dev baseline/echo baseline n=330 out=b28f99",
    "mtb-ja-en-dev baseline/empty baseline n=330 out=847448",
})
"""The other committed cards the drops were measured on (2026-12-02, harness 0.5.0): none fell. A card not in
either table (added later) is held to the strict corpus properties only."""




def _card_key(card: dict) -> str:
    """``dataset model condition n=entries out=<first 6 hex of the SHA-256 of the raw outputs>``: stable across a
    re-score (which renames the card but keeps its outputs), distinct for cards of one configuration."""
    raw = "\x00".join(r["raw_predicted"] or "" for r in card["results"])
    return (f"{card['dataset']['id']} {card['model_slug']} {card['condition']} n={len(card['results'])} "
            f"out={hashlib.sha256(raw.encode()).hexdigest()[:6]}")


def _blind_padding_effects(card: dict) -> tuple[dict[str, int], list[str]]:
    """Pads every output of the card with each of :data:`BLIND_PADDINGS` and checks what must hold strictly; returns
    the sentence drops per padding (as :data:`SENTENCE_DROPS`) and the paddings that lowered corpus TER over ALL
    entries (allowed only on echo baselines: see the test)."""
    src, tgt = card["dataset"]["source_language"], card["dataset"]["target_language"]
    results = card["results"]
    raw = [r["raw_predicted"] or "" for r in results]
    base = check_and_measure(_items(card, raw), src, tgt, False, False)
    covered = [t is not None for t in base.ter]
    drops: dict[str, int] = {}
    improved: list[str] = []
    for name, pad in BLIND_PADDINGS.items():
        padded = [pad(o, random.Random(f"{name}:{r['entry_id']}")) for o, r in zip(raw, results)]
        got = check_and_measure(_items(card, padded), src, tgt, False, False)
        assert [t is not None for t in got.ter] == covered, name  # coverage: strictly the same
        same = [i for i in range(len(raw)) if base.decisions[i].outcome == got.decisions[i].outcome]
        before, after = ter_from_stats(base.ter, same), ter_from_stats(got.ter, same)
        assert (before is None) is (after is None), name
        if before is not None:
            assert after >= before, (name, before, after)  # strictly: never an improvement
        corpus_before, corpus_after = ter_from_stats(base.ter), ter_from_stats(got.ter)
        assert (corpus_before is None) is (corpus_after is None), name
        # None: no entry is TER-covered (a scene-full card's joined multi-line segments, issue 40)
        if corpus_before is not None and corpus_after < corpus_before:
            improved.append(name)
        k = sum(1 for i in same if covered[i] and got.ter[i][0] < base.ter[i][0])
        if k:
            drops[name] = k
    return drops, improved


@pytest.mark.parametrize("path", CARD_CASES)
def test_padding_changes_no_metrics_coverage(path):
    card = json.loads(path.read_text(encoding="utf-8"))
    src, tgt = card["dataset"]["source_language"], card["dataset"]["target_language"]
    raw = [r["raw_predicted"] or "" for r in card["results"]]
    base = check_and_measure(_items(card, raw), src, tgt, False, False)
    n = len(raw)
    assert len(base.chrf) == len(base.bleu) == len(base.ter) == n
    covered = [t is not None for t in base.ter]
    rng = random.Random(f"issue32:{path.name}")
    kinds = [rng.choice(("absent", "repeat", "reference words")) for _ in raw]
    padded = [_pad(rng, o, r["expected"], k) for o, r, k in zip(raw, card["results"], kinds)]
    got = check_and_measure(_items(card, padded), src, tgt, False, False)
    assert len(got.chrf) == len(got.bleu) == len(got.chrf_score) == len(got.bleu_score) == n
    assert [t is not None for t in got.ter] == covered
    assert [s is not None for s in got.ter_score] == covered


def test_ter_covered_set_is_the_same_for_every_system_of_a_corpus():
    # the committed cards of one corpus (dataset id + corpus view + entry ids) cover exactly the same TER segments; the
    # corpus view (issue 40: method.arm) is part of the key since a scene-full card's items are scenes joined under
    # their last lines' ids, other texts than the scene-bare card's items of the same ids
    seen: dict[tuple, list[bool]] = {}
    for path in CARDS:
        card = json.loads(path.read_text(encoding="utf-8"))
        key = (card["dataset"]["id"], card["method"].get("arm") == "scene-full",
               tuple(r["entry_id"] for r in card["results"]))
        cov = [r["stats"]["ter"] is not None for r in card["results"]]
        assert seen.setdefault(key, cov) == cov, path.name
    assert len(seen) >= 5


def test_semantic_similarity_covers_every_entry_whatever_the_padding():
    path = next(p for p in CARDS if json.loads(p.read_text(encoding="utf-8"))["dataset"]["target_language"] == "es"
                and len(json.loads(p.read_text(encoding="utf-8"))["results"]) <= 20)
    card = json.loads(path.read_text(encoding="utf-8"))
    rs = card["results"]
    rng = random.Random(32)
    for outputs in ([r["predicted"] or "" for r in rs], [_pad(rng, r["predicted"] or "", r["expected"], "absent")
                                                        for r in rs]):
        m = check_and_measure(_items(card, outputs), "en", "es", False, False)
        sem = semantic_values([r["source"] for r in rs], [r["expected"] for r in rs], m.predicted, m.decisions,
                              "en", "es")
        assert sem.target_covered and all(v is not None for v in sem.score)
        assert all(h is not None for h in sem.hallucination)
        assert sum(d.outcome == Outcome.usable for d in m.decisions) > 0


def test_a_long_hypothesis_costs_time_linear_in_its_length_not_coverage():
    # sacrebleu's TER limits (1,000 shift candidates, shift distance 50, beam 25) bound the work on a hypothesis of
    # any length: a 2,000-word hypothesis against a 20-word reference is scored, and its edits are at least the
    # 1,980 words it has too many
    ref = " ".join(f"w{i}" for i in range(20))
    hyp = " ".join(f"w{i % 25}" for i in range(2000))
    edits, ref_len = make_ter("es")._extract_corpus_statistics([hyp], [[ref]])[0]
    assert ref_len == 20 and edits >= 1980


@pytest.mark.parametrize("path", CARD_CASES)
def test_reference_blind_padding_of_every_output_never_improves_corpus_ter(path):
    # Every output of the card padded the same reference-blind way (prefix, suffix, random insertion, repeat):
    # coverage is strictly the same; corpus TER over the entries whose mechanical outcome the padding leaves unchanged
    # never improves; over ALL entries it never improves either, except on the echo baselines, where a padded echo is
    # no longer an exact echo (the mechanical policy's equality rule, §3.2) and is scored as the text it is instead
    # of as an empty output (see test_a_padded_echo_escapes_the_echo_rule_not_ter). Sentence-level drops exist (the
    # heuristic) and are exactly the measured ones.
    card = json.loads(path.read_text(encoding="utf-8"))
    assert not any(JUNK in r["expected"] for r in card["results"])
    drops, improved = _blind_padding_effects(card)
    if card["model_slug"] != "baseline/echo":
        assert improved == []
    key = _card_key(card)
    if key in SENTENCE_DROPS or key in MEASURED_WITHOUT_DROPS:
        # the measured cards: exactly the drops measured (a sacrebleu release that moves them shows here); a card
        # added later is held to the strict corpus properties above, not to a measurement made before it existed
        assert drops == SENTENCE_DROPS.get(key, {}), key
    else:
        assert set(drops) <= set(BLIND_PADDINGS)  # counted, not pinned: a card measured after 2026-12-02


# sacrebleu's TER is a heuristic (hand-made strings, not evaluation data): a reference X 成 Y 他 of 33 Han characters
# (X: 14, Y: 17) and the hypothesis Y 成 X 他. Three shifts turn one into the other (X to the front in two blocks of at
# most 10 words, then 成): 3 edits at most. sacrebleu finds no shift from its beam-limited alignment and returns 30
# edits (90.91); with one absent token "Ψ" in front, the alignment it starts from changes and it finds them:
# 3 + 1 (deleting Ψ) = 4 edits (12.12).
X, Y = "于要对分到和年就有这生动为中", "我作会要分会上动来分有的用以在会于"
HEUR_REF, HEUR_HYP = f"{X}成{Y}他", f"{Y}成{X}他"


@pytest.mark.parametrize("tgt", ["ja", "zh", "zh-Hant"])
def test_one_absent_token_can_lower_a_sentences_ter_because_sacrebleus_ter_is_a_heuristic(tgt):
    direct = sacrebleu.metrics.TER(normalized=True, asian_support=True)
    assert direct.sentence_score(HEUR_HYP, [HEUR_REF]).score == pytest.approx(3000 / 33)
    assert direct.sentence_score(f"{JUNK} {HEUR_HYP}", [HEUR_REF]).score == pytest.approx(400 / 33)
    entries = [Entry(id=1, source="x", reference=HEUR_REF)]
    for hyp, edits in ((HEUR_HYP, 30), (f"{JUNK} {HEUR_HYP}", 4)):
        scores, results = scoring.score_run(entries, [TranslationRecord(entry_id=1, raw_predicted=hyp)],
                                            source_language="en", target_language=tgt, elapsed_seconds=1.0, fst=False)
        assert results[0].stats.ter == [edits, 33] and scores.ter_coverage == 1.0


def test_a_padded_echo_escapes_the_echo_rule_not_ter():
    # The ja→en echo baseline: every output is the Japanese source, scored as an empty output (TER 100) by the
    # mechanical policy's echo rule (§3.2). "Ψ " + source is no longer an exact echo: it is usable and scored as the
    # text it is, and a Japanese sentence against an English reference costs fewer edits than the reference has words
    # wherever the reference repeats a Latin name or number of the source: corpus TER 100 → 98.44. Every segment
    # that fell is one whose outcome moved from source_untranslated to usable; none of the others fell.
    path = next(p for p in CARDS if p.parent.name == "mtb-ja-en-dev" and p.name.startswith("baseline-echo__"))
    card = json.loads(path.read_text(encoding="utf-8"))
    raw = [r["raw_predicted"] or "" for r in card["results"]]
    base = check_and_measure(_items(card, raw), "ja", "en", False, False)
    got = check_and_measure(_items(card, [f"{JUNK} {o}" for o in raw]), "ja", "en", False, False)
    assert ter_from_stats(base.ter) == 100.0
    assert round(ter_from_stats(got.ter), 2) == 98.44
    fell = [i for i, (b, g) in enumerate(zip(base.ter, got.ter)) if b is not None and g[0] < b[0]]
    assert len(fell) == 46
    assert all(base.decisions[i].outcome == Outcome.source_untranslated and got.decisions[i].outcome == Outcome.usable
               for i in fell)
