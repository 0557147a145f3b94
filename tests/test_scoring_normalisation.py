"""The one text normalisation applied by score_run to references and hypotheses before exact match, every metric and
the echo check, recorded in the signatures and the fingerprint (issue 14 part 2).

Hand-made entries; chrF++ values are sacrebleu's ``sentence_chrf(..., word_order=2)`` on the strings shown.
"""

from __future__ import annotations

import sacrebleu

from mtboard.core import canonical
from mtboard.score import scoring
from mtboard.core.schema import Entry, TranslationRecord
from mtboard.core.text import NORMALISATION_VERSION, SIGNATURE_FIELD

ENTRIES = [
    Entry(id=1, source="Cooperation is good.", reference="Die Zusammen\u00adarbeit ist gut."),       # soft hyphen
    Entry(id=2, source="Good morning", reference="Buenos\u200b días"),                                # ZWSP
    Entry(id=3, source="The file was saved.", reference="Die Datei wurde gespeichert."),
]


def _score(outputs):
    records = [TranslationRecord(entry_id=e.id, raw_predicted=o) for e, o in zip(ENTRIES, outputs)]
    return scoring.score_run(ENTRIES, records, source_language="en", target_language="de", elapsed_seconds=1.0,
                             fst=False)


def test_invisible_characters_in_the_reference_cost_nothing():
    outputs = ["Die Zusammenarbeit ist gut.", "Buenos días", "Die Datei wurde gespeichert."]
    # what they cost before: sacrebleu on the raw strings
    raw = [sacrebleu.sentence_chrf(o, [e.reference], word_order=2).score for o, e in zip(outputs, ENTRIES)]
    assert [round(x, 6) for x in raw] == [79.645468, 48.807518, 100.0]
    scores, results = _score(outputs)
    assert [r.chrf_score for r in results] == [100.0, 100.0, 100.0]
    assert [r.exact_match for r in results] == [True, True, True]
    assert scores.chrf_plus_plus == 100.0 and scores.exact_match_rate == 1.0
    # raw text is kept as it was: the card shows what the corpus and the model wrote
    assert results[0].expected == "Die Zusammen\u00adarbeit ist gut."


def test_source_echo_with_a_zero_width_space_is_an_echo():
    _, results = _score(["Cooperation\u200b is good.", "Good\u2060 morning", "The\u00ad file was saved."])
    assert [(r.checks.outcome.value, r.checks.rule) for r in results] == [("source_untranslated", "echo")] * 3
    assert [r.chrf_score for r in results] == [0.0, 0.0, 0.0]


def test_normalisation_version_is_in_every_metric_signature_and_the_fingerprint():
    scores, _ = _score(["a", "b", "c"])
    sig = scores.signatures
    assert SIGNATURE_FIELD == "textnorm:2" and NORMALISATION_VERSION == "2"  # 2: width folding (issue 32)
    for s in (sig.chrf, sig.bleu, sig.ter):
        assert s.endswith("|version:" + sacrebleu.__version__ + "|textnorm:2")
    assert canonical.FINGERPRINT_VERSION == 3
    assert canonical.FINGERPRINT_COMPONENTS[-1] == "text_normalisation"
    assert len(canonical.FINGERPRINT_COMPONENTS) == 19
