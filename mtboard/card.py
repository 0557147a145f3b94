"""Run-card assembly helpers shared by the runner (writing) and the validator (re-deriving).

:func:`fingerprint_components` derives every fingerprint v2 component from the card's own fields, so a validator can
recompute the fingerprint from the card alone (spec §3.8, extended: see :mod:`mtboard.canonical`).
"""

from __future__ import annotations

from typing import Any

from mtboard import canonical
from mtboard.schema import Fingerprint, RunCard


def _judges_component(card: RunCard) -> tuple[str | None, str | None]:
    if not card.judges:
        return None, None
    kinds = sorted(card.judges)
    model = ",".join(f"{k}={card.judges[k].backend}:{card.judges[k].model}" for k in kinds)
    prompt = canonical.sha256_hex(",".join(f"{k}={card.judges[k].prompt_sha256}" for k in kinds))
    return model, prompt


def fingerprint_components(card: RunCard) -> dict[str, Any]:
    """The 18 fingerprint v2 components of a card, derived only from its fields.

    Returns: dict with exactly the keys of :data:`mtboard.canonical.FINGERPRINT_V2_COMPONENTS`.
    """
    judge_model, judge_prompt = _judges_component(card)
    m = card.method
    return {
        "dataset_sha256": card.dataset.sha256,
        "model_slug": card.model_slug,
        "condition": card.condition,
        "system_prompt_sha256": card.system_prompt_sha256,
        "temperature": card.temperature,
        "harness_version": card.harness_version,
        "batch_size": card.batch_size,
        "tools_enabled": sorted(card.tools_enabled),
        "api_provider": m.api_provider,
        "endpoint_host_sha256": m.endpoint_host_sha256,
        "max_tokens": m.max_tokens,
        "prompt_template_sha256": m.prompt_template_sha256,
        "model_revision": m.model_revision,
        "model_file_sha256": m.model_file_sha256,
        "engine_version": m.engine_version,
        "entry_ids_sha256": canonical.entry_ids_sha256([r.entry_id for r in card.results]),
        "judge_model": judge_model,
        "judge_prompt_sha256": judge_prompt,
    }


def compute_fingerprint(card: RunCard) -> Fingerprint:
    """Fingerprint v2 object for a card (hash over the derived components)."""
    comps = fingerprint_components(card)
    return Fingerprint(version=canonical.FINGERPRINT_VERSION, hash=canonical.fingerprint_hash(comps),
                       components=comps)


def endpoint_host_sha256(base_url: str | None) -> str | None:
    """SHA-256 of the lower-cased host name of an endpoint URL (never the URL itself, which may hold tokens)."""
    if not base_url:
        return None
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    return canonical.sha256_hex(host) if host else None


def assemble_card(*, corpus: Any, corpus_sha256: str, segment: Any, spec: Any, method_class: Any,
                  description: dict[str, Any], prompt: Any, system_prompt: str, condition: str,
                  temperature: float | None, max_tokens: int | None, batch_size: int, max_retries: int,
                  concurrency: int, runs: int, limit: int | None, price_in: float | None, price_out: float | None,
                  scores: Any, results: list[Any], totals: Any, run_id: str, timestamp: str, elapsed_seconds: float,
                  judges: dict[str, Any] | None = None, notes: str | None = None, streaming: bool = False,
                  harness_version: str | None = None, fst_version: str | None = None) -> RunCard:
    """Assemble, fingerprint (v2) and seal a run card from the runner's stages (spec §3).

    Args:
        corpus: the :class:`~mtboard.schema.Corpus`; ``corpus_sha256`` the SHA-256 of its file bytes.
        spec: the parsed :class:`~mtboard.backends.base.MethodSpec`; ``description`` the backend's ``describe()``
            (MethodRecord keys are copied; ``model_id`` and ``model_slug`` go to the top level; never a URL or key).
        prompt: the :class:`~mtboard.prompts.Prompt` or None (raw engines); ``system_prompt`` its rendered system
            block ('' when none) — its SHA-256 is ``system_prompt_sha256``.
        scores / results / totals: from scoring (run 0) and the runner's totals (all replicates).
        fst_version: the analyser that scored FST acceptance (:func:`mtboard.scoring.fst_version` with the same
            ``fst`` argument scoring used); None when no FST acceptance ran. :mod:`mtboard.validate` checks it names
            the analyser installed where the card is validated.
    Returns: a sealed :class:`RunCard` (``run_card_hash`` set). Raises pydantic ValidationError on a contract bug.
    """
    from mtboard import HARNESS_VERSION
    from mtboard.documents import seal
    from mtboard.schema import DatasetRef, MethodConfig, MethodRecord

    record_fields = set(MethodRecord.model_fields) - {"spec", "backend", "model", "effort", "prompt_name",
                                                       "prompt_format", "prompt_template_sha256", "max_tokens",
                                                       "concurrency", "runs", "limit", "price_in_per_mtok",
                                                       "price_out_per_mtok", "streaming"}
    described = {k: v for k, v in description.items() if k in record_fields and v is not None}
    if described.get("local") is not None and not isinstance(described["local"], dict):
        described["local"] = described["local"].model_dump(mode="json")
    method = MethodRecord.model_validate({
        **described, "spec": spec.text, "backend": spec.backend, "model": spec.model, "effort": spec.effort,
        "prompt_name": prompt.name if prompt is not None else None,
        "prompt_format": prompt.format if prompt is not None else "raw",
        "prompt_template_sha256": prompt.template_sha256 if prompt is not None else None,
        "max_tokens": max_tokens, "streaming": bool(description.get("streaming", streaming)),
        "concurrency": concurrency, "runs": runs, "limit": limit,
        "price_in_per_mtok": price_in, "price_out_per_mtok": price_out,
    })
    model_slug = description.get("model_slug") or (f"{spec.backend}/{spec.model}" if spec.model else spec.backend)
    ds = corpus.dataset
    dataset = DatasetRef(id=ds.id, version=ds.version, language_pair=ds.language_pair,
                         source_language=ds.source_language, target_language=ds.target_language,
                         sha256=corpus_sha256, entry_count=len(results), segment=segment)
    tier = scores.quality_tier.value if hasattr(scores.quality_tier, "value") else str(scores.quality_tier)
    method_config = MethodConfig(model=model_slug, temperature=temperature, batchSize=batch_size,
                                 promptContext=prompt.name if prompt is not None else None, qualityTier=tier)
    placeholder = Fingerprint(version=canonical.FINGERPRINT_VERSION, hash="0" * 64, components={})
    card = RunCard(
        run_id=run_id, harness_version=harness_version or HARNESS_VERSION, timestamp=timestamp,
        elapsed_seconds=max(0.0, float(elapsed_seconds)), model_slug=model_slug,
        model_id=description.get("model_id"), condition=condition, temperature=temperature,
        system_prompt_sha256=canonical.sha256_hex(system_prompt), system_prompt_used=system_prompt,
        fst_version=fst_version, batch_size=batch_size, max_retries=max_retries, method_class=method_class,
        method_config=method_config, method=method, dataset=dataset, scores=scores, totals=totals,
        results=list(results), judges=dict(judges or {}), notes=notes, fingerprint=placeholder, run_card_hash="")
    card = card.model_copy(update={"fingerprint": compute_fingerprint(card)})
    return seal(card)
