"""Issue 39 item 2 (spec §9.3): anti-cheating.

* the variant-class lint of a card (:mod:`mtboard.score.variants`, the validator's ``variants`` check, the ledger row's
  ``variants``, the run page): scripted cards made by the real pipeline (``make_card``: ``score_run`` +
  ``assemble_card``) against a HAND-MADE fixture corpus with variants (:func:`variant_corpus`: 10 entries with
  variants, 30 without; no committed corpus carries variants yet);
* the corpus lint of malformed variants in ``mtboard corpus check`` (a hand-made malformed copy of the fixture);
* ``mtboard corpus rotate`` on a copy of the committed corpora/mtb-en-es-dev.json, and a ledger of one card bound to
  the old version (the committed Apertium card) and one bound to the rotated version (made by ``make_card``).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from scipy.stats import fisher_exact

from cli_support import invoke
from mtboard.core.documents import card_bytes, load_card, load_corpus, write_corpus
from mtboard.core.schema import Corpus
from mtboard.ledger.build import build_ledger
from mtboard.ledger.document import to_document
from mtboard.ledger.load import load_inputs
from mtboard.score.variants import FLAG_P, corpus_variant_problems, fisher_greater, variant_lint
from mtboard.validate import make_context, render_text
from mtboard.validate.pipeline import validate_bytes
from mtboard.validate.report import ValidationReport

sys.path.insert(0, str(Path(__file__).parent))
from cards_support import committed  # noqa: E402
from test_site_cards import make_card  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Hand-made fixture: 10 EN→ES entries with a second acceptable human rendering (variant) each, written for this test.
VARIANT_ENTRIES = [
    ("Close the window.", "Cierre la ventana.", "Cierra la ventana.", "formality"),
    ("Save your changes.", "Guarde los cambios.", "Guarda los cambios.", "formality"),
    ("Delete this file?", "¿Eliminar este archivo?", "¿Borrar este archivo?", "lexical"),
    ("The printer is offline.", "La impresora está desconectada.", "La impresora está fuera de línea.", "lexical"),
    ("Enter your password.", "Introduzca su contraseña.", "Escriba su contraseña.", "lexical"),
    ("Check your email.", "Revise su correo.", "Revisa tu correo.", "formality"),
    ("The meeting starts at nine.", "La reunión empieza a las nueve.", "La reunión comienza a las nueve.", "lexical"),
    ("Turn left at the bank.", "Gire a la izquierda en el banco.", "En el banco, gire a la izquierda.", "word-order"),
    ("Tomorrow it will rain.", "Mañana lloverá.", "Lloverá mañana.", "word-order"),
    ("Take one tablet daily.", "Tome un comprimido al día.", "Tome una pastilla al día.", "lexical"),
]
# … and 30 entries without variants (hand-made, numbered so that each is distinct).
OTHER_ENTRIES = [(f"Room {n} is on the second floor.", f"La sala {n} está en el segundo piso.") for n in range(1, 31)]


def variant_corpus(dataset_id: str = "toy-variants-en-es", with_variants: bool = True) -> Corpus:
    entries = []
    for i, (src, ref, var, cls) in enumerate(VARIANT_ENTRIES, start=1):
        e = {"id": i, "source": src, "reference": ref, "segment": "development", "domain": "ui"}
        if with_variants:
            e |= {"variants": [var], "variant_class": cls}
        entries.append(e)
    for j, (src, ref) in enumerate(OTHER_ENTRIES, start=len(VARIANT_ENTRIES) + 1):
        entries.append({"id": j, "source": src, "reference": ref, "segment": "development", "domain": "ui"})
    return Corpus.model_validate({"dataset": {
        "id": dataset_id, "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
        "target_language": "es", "created": "2026-12-04", "license": "CC0-1.0",
        "provenance": ["hand-made test fixture (tests/test_anticheat.py)"]}, "entries": entries})


def _write(folder: Path, corpus: Corpus) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    return write_corpus(corpus, folder / f"{corpus.dataset.id}.json")


def _cheater_outputs(corpus: Corpus) -> dict[int, str]:
    """Perfect exactly where variants are known (each variant entry answered with its variant), weak elsewhere (a
    plausible but different wording: never the reference)."""
    out = {}
    for e in corpus.entries:
        out[e.id] = e.variants[0] if e.variants else e.reference.replace("La sala", "El cuarto").replace(
            "segundo piso", "piso dos")
    return out


def _perfect_outputs(corpus: Corpus) -> dict[int, str]:
    return {e.id: e.reference for e in corpus.entries}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """corpora/ (the variant fixture and the same texts without variants) and submissions/ with three cards."""
    root = tmp_path_factory.mktemp("anticheat")
    corpus, novar = variant_corpus(), variant_corpus("toy-novariants-en-es", with_variants=False)
    sha, sha_nv = _write(root / "corpora", corpus), _write(root / "corpora", novar)
    cards = {
        "cheater": make_card(corpus, sha, model_slug="acme/translate-pro", spec="openai:acme/translate-pro",
                             outputs=_cheater_outputs(corpus), run_seed=11),
        "perfect": make_card(corpus, sha, model_slug="google/gemma-3-270m", spec="openai:google/gemma-3-270m",
                             outputs=_perfect_outputs(corpus), run_seed=12),
        "novariants": make_card(novar, sha_nv, model_slug="acme/translate-pro", spec="openai:acme/translate-pro",
                                outputs=_cheater_outputs(corpus), run_seed=13),
    }
    from mtboard.validate import canonical_relpath

    for card in cards.values():
        path = root / canonical_relpath(card)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(card_bytes(card))
    return root, corpus, cards


# ----------------------------------------------------------------------------------------------------------------------
# The statistic


def test_fisher_tail_is_the_exact_one_sided_test():
    # 10 of 10 against 0 of 30: only the table itself is as extreme: 1 / C(40, 10)
    assert math.comb(40, 10) == 847660528
    assert fisher_greater(10, 10, 0, 30) == pytest.approx(1 / 847660528, rel=1e-12)
    for t in [(10, 10, 0, 30), (9, 10, 5, 30), (10, 10, 30, 30), (3, 5, 10, 30), (0, 4, 4, 4), (6, 10, 15, 30)]:
        want = fisher_exact([[t[0], t[1] - t[0]], [t[2], t[3] - t[2]]], alternative="greater").pvalue
        assert fisher_greater(*t) == pytest.approx(want, rel=1e-9), t
    assert fisher_greater(10, 10, 30, 30) == 1.0
    with pytest.raises(ValueError):
        fisher_greater(11, 10, 0, 30)


def test_cheater_flagged_perfect_and_honest_not(tree):
    _root, corpus, cards = tree
    by_id = {e.id: e for e in corpus.entries}
    lint = variant_lint(cards["cheater"].results, by_id)
    assert (lint.n_variant, lint.k_variant, lint.k_by_variant, lint.n_other, lint.k_other) == (10, 10, 10, 30, 0)
    assert lint.p == pytest.approx(1.1797e-9, rel=1e-4) and lint.p < FLAG_P
    assert lint.flagged
    assert dict((c, (n, k)) for c, n, k in lint.by_class) == {"formality": (3, 3), "lexical": (5, 5),
                                                              "word-order": (2, 2)}
    perfect = variant_lint(cards["perfect"].results, by_id)
    assert (perfect.k_variant, perfect.k_by_variant, perfect.k_other, perfect.p, perfect.flagged) == (10, 0, 30, 1.0,
                                                                                                      False)
    # an honest, better-on-short-strings system: 6 of 10 against 15 of 30: p = 363736760 / C(40, 10) ≈ 0.4291
    honest = [r.model_copy(update={"predicted": by_id[r.entry_id].reference if (r.entry_id <= 6 or r.entry_id > 25)
                                   else "otra cosa"}) for r in cards["perfect"].results]
    h = variant_lint(honest, by_id)
    assert (h.k_variant, h.k_other, h.flagged) == (6, 15, False) and h.p == pytest.approx(363736760 / 847660528, rel=1e-12)
    # 9 of 10 matched is still ≥ 90 %: flagged; 8 of 10 is below the rate: not flagged, however small p
    nine = [r.model_copy(update={"predicted": "otra cosa"}) if r.entry_id == 1 else r for r in cards["cheater"].results]
    assert variant_lint(nine, by_id).flagged
    eight = [r.model_copy(update={"predicted": "otra cosa"}) if r.entry_id in (1, 2) else r
             for r in cards["cheater"].results]
    e8 = variant_lint(eight, by_id)
    assert e8.p < FLAG_P and not e8.flagged


def test_validator_warns_in_ci_and_skips_without_variants(tree):
    root, _corpus, cards = tree
    ctx = make_context(root, root / "corpora")
    rep = validate_bytes(card_bytes(cards["cheater"]), "cheater.json", ctx)
    assert rep.ok, rep.problems  # a warning, not a failure
    assert rep.checks["variants"] == "warn" and rep.checks["metrics"] == "pass"
    (w,) = rep.warnings
    assert w.check == "variants" and w.field == "$.results"
    assert "matched 10 of 10 entries with variants (10 by a variant) against 0 of 30 other entries" in w.message
    assert "p = 1.2e-09" in w.message
    text = render_text(ValidationReport(validator_version="x", files=[rep], ok=True))
    assert "  warn variants: $.results: flagged: suspiciously perfect" in text
    assert text.splitlines()[0] == "ok   cheater.json"
    assert text.splitlines()[-1] == ("validation passed: 1 file(s), 23 checks each; 1 file(s) with warnings "
                                     "(variants): look at the warn lines above")
    # the CI job summary and the pull-request body list the flag too, with its check name and p value
    from mtboard.run.submit import pr_body
    from mtboard.validate.report import render_markdown
    md = render_markdown(ValidationReport(validator_version="x", files=[rep], ok=True))
    flag = "- warn `variants`: $.results: flagged: suspiciously perfect"
    assert "**Warnings (the card still validates)**: 1 flag(s)" in md
    (line,) = [x for x in md.splitlines() if x.startswith(flag)]
    assert "matched 10 of 10 entries with variants" in line and "p = 1.2e-09" in line
    assert md.index("Warnings (the card still validates)") < md.index("rules met and missed")
    body = pr_body(cards["cheater"], None, rep.gate, rep.warnings)
    assert "## Warnings" in body and "**Warnings (the card still validates)**: 1 flag(s)" in body
    (line,) = [x for x in body.splitlines() if x.startswith(flag)]
    assert "p = 1.2e-09" in line
    assert "Warnings" not in pr_body(cards["perfect"], None, rep.gate, [])
    rep = validate_bytes(card_bytes(cards["perfect"]), "perfect.json", ctx)
    assert rep.ok and rep.checks["variants"] == "pass" and not rep.warnings
    rep = validate_bytes(card_bytes(cards["novariants"]), "novariants.json", ctx)
    assert rep.ok and rep.checks["variants"] == "skip"
    assert rep.skipped["variants"] == "no entry of this card has variants in its corpus"


def test_ledger_row_and_run_page_show_the_flag(tree):
    root, _corpus, cards = tree
    inputs = load_inputs(root / "submissions", root / "corpora", validate=False)
    ledger = build_ledger(inputs, resamples=200)
    doc = to_document(ledger, "2026-12-04T00:00:00Z")
    rows = {r.model_slug: r for b in doc.boards if b.dataset_id == "toy-variants-en-es" for r in b.rows}
    assert rows["acme/translate-pro"].variants.flagged
    assert rows["acme/translate-pro"].variants.variant_matched == 10
    assert rows["acme/translate-pro"].variants.other_matched == 0
    assert rows["google/gemma-3-270m"].variants.flagged is False
    assert rows["google/gemma-3-270m"].variants.p == 1.0
    (nv,) = [r for b in doc.boards if b.dataset_id == "toy-novariants-en-es" for r in b.rows]
    assert nv.variants is None  # no entry with variants: nothing to test, nothing shown
    from mtboard.site.render import render_pages

    pages = render_pages(inputs, ledger.boards, [], "2026-12-04 00:00 UTC")
    page = pages[f"runs/{cards['cheater'].run_card_hash[:16]}.md"]
    assert '<th scope="row">Variant lint</th>' in page and 'data-variant-flag="flagged"' in page
    assert "⚠ flagged: suspiciously perfect on the entries with known variants" in page
    page = pages[f"runs/{cards['perfect'].run_card_hash[:16]}.md"]
    assert "Variant lint" in page and "data-variant-flag" not in page and "not flagged" in page
    assert "Variant lint" not in pages[f"runs/{cards['novariants'].run_card_hash[:16]}.md"]


# ----------------------------------------------------------------------------------------------------------------------
# Corpus lint


def test_corpus_check_refuses_malformed_variants(tmp_path):
    data = json.loads(variant_corpus().model_dump_json(exclude_none=True))
    e = data["entries"]
    e[0]["variants"] = ["  Cierre   la ventana. "]  # the reference after normalisation
    e[1]["variants"] = ["Guarda los cambios.", "Guarda los  cambios."]  # a repeat
    e[2]["variants"] = ["Удалить этот файл?"]  # Cyrillic: not a script Spanish is written in
    e[3]["variants"] = ["The printer is offline."]  # the source
    del e[4]["variant_class"]  # variants without a class
    e[10]["variant_class"] = "lexical"  # a class without variants
    e[5]["variant_class"] = "Formality Variant"  # not like 'simple-ta-direct'
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    corpus, _ = load_corpus(path)
    assert [(p.rule, p.entry_id, p.field) for p in corpus_variant_problems(corpus)] == [
        ("variant_is_reference", 1, "variants[0]"), ("variant_duplicate", 2, "variants[1]"),
        ("variant_script", 3, "variants[0]"), ("variant_language", 4, "variants[0]"),
        ("variant_class", 5, "variant_class"), ("variant_class", 6, "variant_class"),
        ("variant_class", 11, "variant_class")]
    res = invoke(["corpus", "check", str(path)])
    assert res.returncode == 1
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 7
    assert err[0] == (f"error: {path}: entries[0].variants[0] (id 1): variant_is_reference: the variant equals the "
                      "reference after text normalisation (fix: remove it: the reference is always accepted)")
    assert f"{path}: entries[2].variants[0] (id 3): variant_script: 15 of 15 letters are in Cyrillic" in err[2]
    assert "entries[4].variant_class (id 5): variant_class: 1 variants without a variant_class (fix:" in err[4]
    assert "entries[10].variant_class (id 11): variant_class: a variant_class without variants" in err[6]
    assert "ok —" not in res.stdout
    good = tmp_path / "good.json"
    data = json.loads(variant_corpus().model_dump_json(exclude_none=True))
    # a loanword from the source in a variant is usage, not an untranslated variant: 'email' is 5 of 13 letters
    data["entries"][5]["variants"] = ["Revise su email."]
    good.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert corpus_variant_problems(load_corpus(good)[0]) == []
    res = invoke(["corpus", "check", str(good)])
    assert res.returncode == 0 and f"{good}: ok" in res.stdout
    assert "  variants    10 entries with variants: formality 3, lexical 5, word-order 2" in res.stdout
    # --json carries the same counts
    res = invoke(["corpus", "check", "--json", str(good)])
    assert res.returncode == 0 and json.loads(res.stdout)[str(good)]["variants"] == {
        "entries": 10, "classes": {"formality": 3, "lexical": 5, "word-order": 2}}


def test_committed_corpora_have_no_malformed_variants():
    for path in sorted((ROOT / "corpora").glob("*.json")):
        assert corpus_variant_problems(load_corpus(path)[0]) == [], path.name


# ----------------------------------------------------------------------------------------------------------------------
# Rotation


@pytest.mark.slow  # 2.1 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_rotate_copy_of_committed_corpus(tmp_path):
    src = tmp_path / "mtb-en-es-dev.json"
    shutil.copyfile(ROOT / "corpora" / "mtb-en-es-dev.json", src)
    out = tmp_path / "rotated.json"
    res = invoke(["corpus", "rotate", str(src), "--share", "0.1", "--seed", "s1", "-o", str(out),
                  "--created", "2026-12-04"])
    assert res.returncode == 0, res.stderr
    old, new = load_corpus(src)[0], load_corpus(out)[0]
    assert (old.dataset.version, new.dataset.version) == ("1.0.0", "1.1.0")
    assert new.dataset.created == "2026-12-04" and new.dataset.id == old.dataset.id
    # 355 development, 24 diagnostic: ⌊0.1 × min(355, 24) + ½⌋ = ⌊2.9⌋ = 2 pairs trade places; sizes unchanged
    count = lambda c, s: sum(e.segment == s for e in c.entries)  # noqa: E731
    assert (count(old, "development"), count(old, "diagnostic")) == (355, 24)
    assert (count(new, "development"), count(new, "diagnostic")) == (355, 24)
    moved = {e.id: (o.segment.value, e.segment.value) for o, e in zip(old.entries, new.entries) if o.segment != e.segment}
    # ranked by SHA-256("s1\0mtb-en-es-dev\01.0.0\0<id>") (docs/corpora.md "Rotation" names these ids)
    assert moved == {359: ("diagnostic", "development"), 374: ("diagnostic", "development"),
                     76: ("development", "diagnostic"), 171: ("development", "diagnostic")}
    assert "diagnostic    2 to development (ids 359, 374); 2 from development (ids 76, 171)" in res.stdout
    # every text and label unchanged, in the same order
    strip = lambda c: [e.model_dump(exclude={"segment"}) for e in c.entries]  # noqa: E731
    assert strip(old) == strip(new)
    assert "Rotated from version 1.0.0 (mtb-en-es-dev.json) by `mtboard corpus rotate` (share 0.1, seeded): 4 " \
           "entries changed segment" in new.dataset.description
    # deterministic; another seed moves other entries; the input file is untouched
    again = tmp_path / "again.json"
    invoke(["corpus", "rotate", str(src), "--seed", "s1", "-o", str(again), "--created", "2026-12-04"])
    assert again.read_bytes() == out.read_bytes()
    assert src.read_bytes() == (ROOT / "corpora" / "mtb-en-es-dev.json").read_bytes()
    other = tmp_path / "other.json"
    invoke(["corpus", "rotate", str(src), "--seed", "s2", "-o", str(other), "--created", "2026-12-04"])
    assert other.read_bytes() != out.read_bytes()
    # re-rotating the rotated file with the same seed ranks afresh (the input version 1.1.0 is in the key): it does
    # not trade 359/374 and 76/171 straight back, it swaps 358, 364 ↔ 228, 239
    twice = tmp_path / "twice.json"
    res = invoke(["corpus", "rotate", str(out), "--seed", "s1", "-o", str(twice), "--created", "2026-12-04"])
    assert res.returncode == 0, res.stderr
    assert "diagnostic    2 to development (ids 358, 364); 2 from development (ids 228, 239)" in res.stdout
    assert load_corpus(twice)[0].dataset.version == "1.2.0"
    # refused, one line each, nothing written: a share outside (0, 1] (NaN too), the same or an older version, no
    # seed or an empty one, a date before the input's or in the future, a folder as --output
    x = str(tmp_path / "x.json")
    for args, words in [
            (["--share", "0"], "error: --share: share 0.0 is outside (0, 1]"),
            (["--share", "nan"], "error: --share: share nan is outside (0, 1]"),
            (["--share", "1.5"], "error: --share: share 1.5 is outside (0, 1]"),
            (["--version", "1.0.0"], "equals the current one"),
            (["--version", "0.9"], "error: --version: the new version 0.9 is not greater than the current one 1.0.0 "
                                   "(fix: give a version greater than 1.0.0, e.g. 1.1.0)"),
            (["--version", "1.0.0-rc.1"], "is not greater than the current one 1.0.0"),
            (["--created", "2025-12-31"], "error: --created: 2025-12-31 is before the input's created date"),
            (["--created", "2999-01-01"], "error: --created: 2999-01-01 is in the future"),
            (["--seed", ""], "error: --seed: the seed is empty (fix: give a private random value, e.g. --seed "
                             '"$(openssl rand -hex 16)")')]:
        seed = [] if args[0] == "--seed" else ["--seed", "s1"]
        bad = invoke(["corpus", "rotate", str(src), *seed, *args, "-o", x])
        assert bad.returncode == 1 and words in bad.stderr, (args, bad.stderr)
        assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.json").exists()
    bad = invoke(["corpus", "rotate", str(src), "-o", x])  # the public default "0" is gone: --seed is required
    assert bad.returncode == 1 and bad.stderr.strip() == (
        'error: --seed: no seed given: the rotation seed decides which entries move (fix: give a private random value, '
        'e.g. --seed "$(openssl rand -hex 16)", and keep it private)')
    bad = invoke(["corpus", "rotate", str(src), "--seed", "s1", "-o", str(tmp_path)])
    assert bad.returncode == 1 and bad.stderr.strip().startswith(f"error: {tmp_path}: --output/-o: this is a folder")
    assert "internal error" not in bad.stderr
    # a missing parent folder is made, as corpus import -o and every atomic_write do (core/documents.py)
    deep = tmp_path / "new" / "dir" / "x.json"
    assert invoke(["corpus", "rotate", str(src), "--seed", "s1", "-o", str(deep)]).returncode == 0 and deep.is_file()
    # the help gives the share's open interval, not typer's closed [0.0<=x<=1.0]
    helptext = invoke(["corpus", "rotate", "--help"]).stdout
    assert "(0, 1]" in helptext and "0.0<=x" not in helptext


@pytest.mark.slow  # a whole-system test: 7 s in the fast lane (docs/TESTING.md: the fast lane ≤ 5 min)
def test_ledger_keeps_versions_apart(tmp_path):
    """The committed Apertium card (bound to v1.0.0) and a card made on the rotated v1.1.0 with the same outputs
    (the two entries new to development answered with their reference): two boards, never one ranking."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copyfile(ROOT / "corpora" / "mtb-en-es-dev.json", corpora / "mtb-en-es-dev.json")
    assert invoke(["corpus", "rotate", str(corpora / "mtb-en-es-dev.json"), "--seed", "s1", "-o",
                   str(corpora / "mtb-en-es-dev-1.1.0.json"), "--created", "2026-12-04"]).returncode == 0
    new, sha = load_corpus(corpora / "mtb-en-es-dev-1.1.0.json")
    old_card_path = committed("apertium-eng-spa__default__")
    old_card = load_card(old_card_path)
    outputs = {r.entry_id: r.predicted for r in old_card.results}
    outputs |= {e.id: e.reference for e in new.segment("development") if e.id not in outputs}
    dev_only = new.model_copy(update={"entries": new.segment("development")})  # make_card runs every entry given
    new_card = make_card(dev_only, sha, model_slug="acme/translate-pro", spec="openai:acme/translate-pro",
                         outputs=outputs, run_seed=21)
    from mtboard.validate import canonical_relpath

    sub = tmp_path / "submissions"
    (sub / "mtb-en-es-dev").mkdir(parents=True)
    shutil.copyfile(old_card_path, sub / "mtb-en-es-dev" / old_card_path.name)
    (tmp_path / canonical_relpath(new_card)).write_bytes(card_bytes(new_card))
    inputs = load_inputs(sub, corpora, validate=False)
    assert len(inputs.cards) == 2
    doc = to_document(build_ledger(inputs, resamples=200), "2026-12-04T00:00:00Z")
    boards = {b.key: b for b in doc.boards}
    assert sorted(boards) == ["mtb-en-es-dev-v1.0.0", "mtb-en-es-dev-v1.1.0"]
    assert [(b.version, [r.model_slug for r in b.rows]) for b in doc.boards] == [
        ("1.0.0", ["apertium/eng-spa"]), ("1.1.0", ["acme/translate-pro"])]
    for b in doc.boards:  # each ranked first as the only method of its own board: nothing ranked across versions
        assert b.ranked_entries == 355 and b.state.kind == "one-method"
        (row,) = b.rows
        assert row.ranked and [(rk.rank, rk.position) for rk in row.ranks if rk.view == "all"] == [("1", 1)]


def _segments_corpus(sizes: dict[str, int]) -> Corpus:
    """Hand-made: ``sizes[segment]`` entries per segment, ids 1… in segment order, texts numbered."""
    entries, i = [], 0
    for seg, n in sizes.items():
        for _ in range(n):
            i += 1
            entries.append({"id": i, "source": f"Line {i}.", "reference": f"Línea {i}.", "segment": seg})
    return Corpus.model_validate({"dataset": {
        "id": "toy-rotate", "version": "2.3.1-rc.1", "language_pair": "EN→ES", "source_language": "en",
        "target_language": "es", "created": "2026-12-04", "license": "CC0-1.0", "provenance": ["hand-made"]},
        "entries": entries})


def test_rotation_rule_on_every_segment_and_its_cap():
    from mtboard.inputs.corpora.rotate import next_version, rank_key, rotate, swap_count, version_key

    assert [next_version(v) for v in ("1.0.0", "2.3", "1.2.3-rc.1", "0.9.12")] == ["1.1.0", "2.4", "1.3.0", "0.10.0"]
    # ⌊share × min + ½⌋, at least 1: 0.5 × 4 = 2; 0.5 × 6 = 3; 0.5 × 2 = 1; 0.1 × 4 + ½ = 0.9 → 0 → 1; 0.25 × 6 = 1.5 → 2
    assert [swap_count(0.5, 10, 4), swap_count(0.5, 10, 6), swap_count(0.5, 10, 2), swap_count(0.1, 10, 4),
            swap_count(0.25, 10, 6), swap_count(0.5, 0, 6)] == [2, 3, 1, 1, 2, 0]
    corpus = _segments_corpus({"development": 10, "diagnostic": 4, "gold_standard": 6, "held_out": 2})
    done = rotate(corpus, share=0.5, seed="k")
    assert done.corpus.dataset.version == "2.4.0" and done.count == 12
    assert {seg: (len(a), len(b)) for seg, (a, b) in done.moved.items()} == {
        "diagnostic": (2, 2), "gold_standard": (3, 3), "held_out": (1, 1)}
    sizes = lambda c: {s: sum(e.segment == s for e in c.entries) for s in  # noqa: E731
                       ("development", "diagnostic", "gold_standard", "held_out")}
    assert sizes(done.corpus) == sizes(corpus)
    # the moved entries are the best-ranked ones by SHA-256(seed, dataset id, entry id)
    diag = sorted((e.id for e in corpus.entries if e.segment == "diagnostic"),
                  key=lambda i: rank_key("k", "toy-rotate", "2.3.1-rc.1", i))
    assert done.moved["diagnostic"][0] == tuple(sorted(diag[:2]))
    # capped by the development entries left: 2 development entries all go to the first other segment
    small = rotate(_segments_corpus({"development": 2, "diagnostic": 5, "gold_standard": 5}), share=1.0, seed="k")
    assert {seg: (len(a), len(b)) for seg, (a, b) in small.moved.items()} == {"diagnostic": (2, 2)}
    from mtboard.core.errors import ConfigError

    with pytest.raises(ConfigError, match="only development entries"):
        rotate(_segments_corpus({"development": 3}), share=0.5, seed="k")
    with pytest.raises(ConfigError, match="the seed is empty"):
        rotate(corpus, share=0.5, seed="")
    # the version order: a pre-release sorts before its release, a missing patch counts as 0
    assert version_key("1.0.0-rc.1") < version_key("1.0.0") == version_key("1.0") < version_key("1.0.1") \
        < version_key("1.10.0")
    assert rotate(corpus, share=0.5, seed="k", version="2.3.1").corpus.dataset.version == "2.3.1"  # > 2.3.1-rc.1
    with pytest.raises(ConfigError, match="not greater than the current one 2.3.1-rc.1"):
        rotate(corpus, share=0.5, seed="k", version="2.3.0")


def test_corpus_check_refuses_a_variant_in_a_third_language(tmp_path):
    """An ES→EN corpus (hand-made) whose variants are French or German: the function-word heuristic of
    ``variant_other_language`` (variants of ≥ 3 words; a single foreign word is not detected, as docs say)."""
    from mtboard.score.variants import other_language

    rows = [("Elimine el archivo de la lista.", "Remove the file from the list.",
             ["Supprimer le fichier de la liste."]),  # French: le, de, la — 3 of 3 function words
            ("El archivo no se guarda.", "The file is not saved.",
             ["Die Datei wird nicht gespeichert."]),  # German: die, wird, nicht — 3 of 3
            ("Eliminar", "Delete", ["Supprimer"]),  # one French word: not detected (documented limit)
            ("Guarde los cambios en el archivo.", "Save the changes to the file.",
             ["Save your changes in the file."])]  # English: no problem
    path = tmp_path / "es-en.json"
    path.write_text(json.dumps({"dataset": {
        "id": "toy-es-en", "version": "1.0.0", "language_pair": "ES→EN", "source_language": "es",
        "target_language": "en", "created": "2026-12-04", "license": "CC0-1.0", "provenance": ["hand-made"]},
        "entries": [{"id": i, "source": s, "reference": r, "variants": v, "variant_class": "lexical"}
                    for i, (s, r, v) in enumerate(rows, 1)]}, ensure_ascii=False), encoding="utf-8")
    corpus, _ = load_corpus(path)
    assert [(p.rule, p.entry_id, p.problem) for p in corpus_variant_problems(corpus)] == [
        ("variant_other_language", 1, "3 of its 3 known function words are fr, not en (function-word heuristic)"),
        ("variant_other_language", 2, "3 of its 3 known function words are de, not en (function-word heuristic)")]
    res = invoke(["corpus", "check", str(path)])
    assert res.returncode == 1
    assert [ln for ln in res.stderr.splitlines() if ln.startswith("error:")] == [
        f"error: {path}: entries[0].variants[0] (id 1): variant_other_language: 3 of its 3 known function words are "
        "fr, not en (function-word heuristic) (fix: write the variant in en or remove it)",
        f"error: {path}: entries[1].variants[0] (id 2): variant_other_language: 3 of its 3 known function words are "
        "de, not en (function-word heuristic) (fix: write the variant in en or remove it)"]
    # the heuristic's edges, hand-checked: one-letter words never count ("o", "a": Spanish, and Portuguese too), one
    # foreign function word is not enough, and two must outnumber the target's own
    assert other_language("¿Abrir o cerrar la ventana a la derecha?", "es") is None  # la, la: Spanish
    assert other_language("Desa els canvis al fitxer.", "es") is None  # els (ca) 1 of 2: below the 2 needed
    assert other_language("Le fichier est supprimé.", "en") == ("fr", 2, 2)
    assert other_language("Le fichier", "en") is None  # 2 words: below the 3 looked at
    assert other_language("Die Datei wird nicht gespeichert.", "ja") is None  # no list for the target
