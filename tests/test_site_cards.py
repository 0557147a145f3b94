"""Hand-made fixture run cards for the site tests (issue 7), and checks of the factory itself.

HAND-MADE FIXTURES: the toy corpus below (12 short EN→ES sentences written for these tests, not evaluation data) and
the "outputs" of each fake method are typed by hand. The cards are then made by the real pipeline —
mtboard.score.scoring.score_run (mechanical policy, sacrebleu metrics, composite, tiers) and mtboard.score.card.assemble_card
(fingerprint v2, seal) — so they pass `mtboard validate` and every number the site shows is a real number for these
strings. Costs come from made-up token prices.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np

from mtboard.core import canonical
from mtboard.score import scoring
from mtboard.backends.base import get_backend
from mtboard.inputs.prompts import load_prompt
from mtboard.inputs.runspec import DatasetIdentity, MethodSpec, RunSpec
from mtboard.score.card import assemble_card
from mtboard.core.documents import card_bytes, write_corpus
from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.inputs.prices import compute_totals
from mtboard.core.schema import BackendFacts, Corpus, RunCard, TranslationRecord, Usage
from mtboard.validate import canonical_relpath

# (id, domain, source, reference) — hand-written toy sentences
TOY = [
    (1, "tech", "Open the file.", "Abre el archivo."),
    (2, "tech", "Save your changes before closing.", "Guarda los cambios antes de cerrar."),
    (3, "tech", "The server is not responding.", "El servidor no responde."),
    (4, "tech", "Click the button to continue.", "Haz clic en el botón para continuar."),
    (5, "tech", "Delete the selected items?", "¿Eliminar los elementos seleccionados?"),
    (6, "legal", "The contract ends on the first of May.", "El contrato termina el primero de mayo."),
    (7, "legal", "Both parties must sign the agreement.", "Ambas partes deben firmar el acuerdo."),
    (8, "legal", "This licence grants no warranty.", "Esta licencia no otorga ninguna garantía."),
    (9, "legal", "The tenant shall pay the rent monthly.", "El inquilino pagará el alquiler mensualmente."),
    (10, "medical", "Take one tablet every eight hours.", "Tome una pastilla cada ocho horas."),
    (11, "medical", "Do you have a fever?", "¿Tiene fiebre?"),
    (12, "medical", "The doctor will see you now.", "El médico le atenderá ahora."),
]

# Hand-typed outputs per fake method (None = no output at all).
OUTPUTS: dict[str, dict[int, str | None]] = {
    "good": {1: "Abre el archivo.", 2: "Guarda los cambios antes de cerrar.", 3: "El servidor no está respondiendo.",
             4: "Haz clic en el botón para continuar.", 5: "¿Borrar los elementos seleccionados?",
             6: "El contrato termina el primero de mayo.", 7: "Ambas partes deben firmar el contrato.",
             8: "Esta licencia no concede ninguna garantía.", 9: "El inquilino pagará la renta cada mes.",
             10: "Tome una tableta cada ocho horas.", 11: "¿Tiene fiebre?", 12: "El doctor le verá ahora."},
    "mid": {1: "Abrir el archivo.", 2: "Salve sus cambios antes cerrando.", 3: "El servidor no es respondiendo.",
            4: "Clic el botón para continuar.", 5: "¿Borrar los artículos seleccionados?",
            6: "El contrato acaba en el primero de Mayo.", 7: "Ambos partidos deben firmar el acuerdo.",
            8: "Esta licencia concede ninguna garantía.", 9: "El arrendatario pagará el alquiler mensual.",
            10: "Toma una tableta cada ocho horas.", 11: "¿Tienes una fiebre?", 12: "El doctor te verá ahora."},
    "weak": {1: "Abierto el fichero.", 2: "Salvar tus cambios.", 3: None, 4: "Clic botón.",
             5: "Delete the selected items?", 6: "Contrato fin mayo.", 7: "Partes firmar.",
             8: "Licencia garantía.", 9: "Inquilino paga.", 10: "Una pastilla.", 11: "¿Fiebre?",
             12: "Doctor ahora."},
}


def toy_corpus(domains: bool = True) -> Corpus:
    entries = [{"id": i, "source": s, "reference": r, "segment": "development", "domain": d if domains else None,
                "difficulty": 1 + (i % 5)} for i, d, s, r in TOY]
    return Corpus.model_validate_json(json.dumps({
        "dataset": {"id": "toy-en-es", "version": "1.0.0", "language_pair": "EN→ES", "source_language": "en",
                    "target_language": "es", "created": "2026-11-29", "license": "CC0-1.0",
                    "provenance": ["hand-made test fixture", "https://example.org/toy"]},
        "entries": entries}))


def write_toy_corpus(folder: Path) -> tuple[Corpus, str]:
    corpus = toy_corpus()
    sha = write_corpus(corpus, folder / "toy-en-es.json")
    return corpus, sha


def make_card(corpus: Corpus, corpus_sha: str, *, model_slug: str, outputs: dict[int, str | None],
              method_class: str = "raw-llm", spec: str | None = None, condition: str = "baseline",
              cost_per_entry: float | None = None, latency: float = 0.5, run_seed: int = 1,
              notes: str | None = None, limit: int | None = None,
              timestamp: str = "2026-11-28T14:00:00Z") -> RunCard:
    """A sealed run card made by the real pipeline: :func:`mtboard.score.scoring.score_run` over hand-typed outputs,
    then :func:`mtboard.score.card.assemble_card` (fingerprint v2 + seal). Costs come from fake token prices."""
    entries = list(corpus.entries[:limit] if limit else corpus.entries)
    records = []
    for k, e in enumerate(entries):
        out = outputs.get(e.id)
        records.append(TranslationRecord(
            entry_id=e.id, raw_predicted=out, error=None if out else "empty output",
            error_kind=None if out else "empty", latency_s=round(latency * (1 + (k % 3) / 10), 4),
            usage=Usage(prompt_tokens=1000, completion_tokens=0) if cost_per_entry else Usage()))
    spec = spec or f"openai:{model_slug}"
    backend, _, model = spec.partition(":")
    cls = get_backend(backend)
    prompt = None if cls.prompt_format == "raw" else load_prompt(cls.default_prompt)  # as `mtboard run` does
    price_in = cost_per_entry * 1000 if cost_per_entry is not None else None  # USD per 1M prompt tokens
    price_out = 0.0 if cost_per_entry is not None else None
    elapsed = sum(r.latency_s for r in records) + 1.0
    scores, results = scoring.score_run(entries, records, source_language=corpus.dataset.source_language,
                                        target_language=corpus.dataset.target_language, elapsed_seconds=elapsed,
                                        fst=False, price_in_per_mtok=price_in, price_out_per_mtok=price_out)
    totals = compute_totals(records, entries, 1, price_in, price_out)  # what the runner stores
    ds = corpus.dataset
    method = MethodSpec(text=spec, backend=backend, model=model)
    run_spec = RunSpec(
        method=method, public_method=method, method_class=method_class,
        dataset=DatasetIdentity(id=ds.id, version=ds.version, sha256=corpus_sha, language_pair=ds.language_pair,
                                source_language=ds.source_language, target_language=ds.target_language,
                                limit=limit),
        prompt_name=prompt.name if prompt else None, prompt_format=prompt.format if prompt else "raw",
        prompt_template_sha256=prompt.template_sha256 if prompt else None,
        system_prompt=prompt.system_prompt(ds.source_language, ds.target_language) if prompt else "",
        condition=condition, temperature=None if prompt is None else 0.0, max_tokens=None if prompt is None else 512,
        batch_size=max(1, cls.preferred_batch_size), max_retries=0)
    assert model_slug == cls.model_slug_for(model), "fixture cards name their model as the backend does"
    return assemble_card(
        run_spec, BackendFacts(model_slug=model_slug, api_provider="local"), scores=scores, results=results,
        totals=totals, run_id=str(uuid.UUID(int=run_seed * 7919 + len(model_slug), version=4)),
        timestamp=timestamp, elapsed_seconds=elapsed, price_in=price_in, price_out=price_out, notes=notes)


XSS = '<script>alert(1)</script><img src=x onerror="alert(2)">[click](javascript:alert(3)) | a | b \n\n| c |'


def standard_cards(corpus: Corpus, sha: str, xss: bool = False) -> dict[str, RunCard]:
    """The fixture set: good/mid/weak methods, two prompts of one model, echo and empty baselines (+ XSS card)."""
    src = {e.id: e.source for e in corpus.entries}
    cards = {
        "apertium": make_card(corpus, sha, model_slug="apertium/eng-spa", outputs=OUTPUTS["good"],
                              method_class="pipeline", spec="apertium:eng-spa", cost_per_entry=0.0, latency=0.05,
                              run_seed=1),
        "gemma-chat": make_card(corpus, sha, model_slug="google/gemma-3-270m", outputs=OUTPUTS["mid"],
                                spec="openai:google/gemma-3-270m", condition="chat", cost_per_entry=None,
                                latency=0.8, run_seed=2),
        "gemma-fewshot": make_card(corpus, sha, model_slug="google/gemma-3-270m", outputs=OUTPUTS["weak"],
                                   spec="openai:google/gemma-3-270m", condition="few-shot",
                                   cost_per_entry=None, latency=0.9, run_seed=3),
        # nearly the gemma-chat outputs (one entry differs: identical outputs under another model would be a copy)
        "api": make_card(corpus, sha, model_slug="acme/translate-pro", outputs={**OUTPUTS["mid"], 11: "¿Tienes fiebre?"},
                         method_class="raw-llm",
                         spec="openai:acme/translate-pro", cost_per_entry=0.0021, latency=0.3, run_seed=4),
        "echo": make_card(corpus, sha, model_slug="baseline/echo", outputs=src, method_class="baseline",
                          spec="echo:source", cost_per_entry=0.0, latency=0.0, run_seed=5),
        "empty": make_card(corpus, sha, model_slug="baseline/empty", outputs={}, method_class="baseline",
                           spec="empty:none", cost_per_entry=0.0, latency=0.0, run_seed=6),
    }
    if xss:
        # a name holding a line break is refused by the validator's names check (issue 32 item 5: mtboard.core.names),
        # so the hostile model slug has its markup without the line breaks; notes and outputs keep them
        cards["xss"] = make_card(corpus, sha, model_slug=f"evil{XSS.replace(chr(10), ' ')}",
                                 outputs={i: XSS for i in src},
                                 condition="x" + XSS[:60], notes=XSS + " see javascript:alert(4)", run_seed=7,
                                 cost_per_entry=0.0005, latency=0.2)
    return cards


def write_fixture_tree(root: Path, xss: bool = False, bad: bool = True) -> dict[str, RunCard]:
    """corpora/ + submissions/ under ``root`` with the standard cards, one invalid card and one --limit card."""
    corpus, sha = write_toy_corpus(root / "corpora")
    cards = standard_cards(corpus, sha, xss=xss)
    sub = root / "submissions" / corpus.dataset.id
    sub.mkdir(parents=True, exist_ok=True)
    partial = make_card(corpus, sha, model_slug="acme/translate-pro", outputs=OUTPUTS["good"], method_class="raw-llm",
                        spec="openai:acme/translate-pro", cost_per_entry=0.002, run_seed=8, limit=4)
    cards["partial"] = partial
    for card in cards.values():
        path = root / canonical_relpath(card)
        path.write_bytes(card_bytes(card))
    if bad:
        (sub / "broken.json").write_bytes(b'{"run_id": "not a card", "scores": NaN}')
        data = json.loads(card_bytes(cards["apertium"]))
        data["scores"]["chrf_plus_plus"] = "55.5"
        (sub / "lax.json").write_text(json.dumps(data), encoding="utf-8")
        # a re-sealed card whose chrF++ was raised by 0.1: schema-valid, caught only by the validator's recomputation
        data = json.loads(card_bytes(cards["gemma-fewshot"]))
        data["scores"]["chrf_plus_plus"] += 0.1
        data["run_card_hash"] = canonical.run_card_hash(data)
        (sub / "inflated.json").write_bytes(canonical.canonical_bytes(data) + b"\n")
    return cards


# ----------------------------------------------------------------------------------------------------------------
# Checks of the factory (so the fixtures themselves cannot silently drift)


def test_fixture_stats_rederive_corpus_chrf():
    corpus = toy_corpus()
    card = standard_cards(corpus, "a" * 64)["gemma-chat"]
    from_stats = chrf_from_stats([r.stats.chrf for r in card.results])
    assert abs(from_stats - card.scores.chrf_plus_plus) < 1e-9
    assert card.run_card_hash == canonical.run_card_hash(json.loads(card_bytes(card)))


def test_fixture_methods_are_ordered_as_written():
    corpus = toy_corpus()
    c = standard_cards(corpus, "a" * 64)
    assert c["apertium"].scores.chrf_plus_plus > c["gemma-chat"].scores.chrf_plus_plus
    assert c["gemma-chat"].scores.chrf_plus_plus > c["gemma-fewshot"].scores.chrf_plus_plus
    assert c["empty"].scores.chrf_plus_plus == 0.0 and c["empty"].scores.composite == 0.0
    assert all(r.checks.outcome == "source_untranslated" for r in c["echo"].results)
    # one entry apart (entry 11 lost a word): close, but not the same outputs (that would be a copy)
    assert abs(c["gemma-chat"].scores.chrf_plus_plus - c["api"].scores.chrf_plus_plus) < 0.5
