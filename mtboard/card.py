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
