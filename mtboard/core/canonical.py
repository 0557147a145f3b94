"""Canonical JSON (RFC 8785, JSON Canonicalization Scheme) and the hashes built on it.

* :func:`canonical_bytes` — the one serialisation used both to hash and to write run cards: keys sorted by UTF-16
  code units, no insignificant whitespace, UTF-8, numbers in ECMAScript shortest form (via the ``rfc8785`` library,
  so a verifier in any language reproduces the bytes).
* :func:`fingerprint` — reproducibility identity, version 3 (spec §3.8 plus the components listed in
  :data:`FINGERPRINT_COMPONENTS`).
* :func:`run_card_hash` — tamper-evident seal (spec §3.9): SHA-256 of the canonical card with ``run_card_hash`` = "".

Why fingerprint v1 (spec §3.8) is not enough: it hashes dataset, model_slug, condition, system-prompt hash,
temperature, harness version, batch size and tools only. The same ``model_slug`` served by two channels (OpenAI vs.
OpenRouter vs. a local llama.cpp quantisation), with different ``max_tokens``, a different user-prompt template, a
different GGUF file or Apertium release, or a 10-entry ``--limit`` subset of the corpus all collide on one v1
fingerprint although they are different experiments. v2 adds exactly those components; v3 adds the version of the
text normalisation applied before every metric (issue 14), which changes scores of the same outputs.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from mtboard.core.errors import InputError

FINGERPRINT_VERSION = 3
FINGERPRINT_V1_COMPONENTS = (
    "dataset_sha256", "model_slug", "condition", "system_prompt_sha256", "temperature", "harness_version",
    "batch_size", "tools_enabled",
)
"""Spec §3.8's eight components."""
FINGERPRINT_V2_COMPONENTS = FINGERPRINT_V1_COMPONENTS + (
    "api_provider", "endpoint_host_sha256", "max_tokens", "prompt_template_sha256", "model_revision",
    "model_file_sha256", "engine_version", "entry_ids_sha256", "judge_model", "judge_prompt_sha256",
)
"""v2 = v1 + channel (provider, hashed endpoint host), generation cap, user-prompt template, exact weights (revision
or GGUF file hash), engine build, the evaluated entry-id list, and the judge (model + prompt hash) when one ran."""
FINGERPRINT_COMPONENTS = FINGERPRINT_V2_COMPONENTS + ("text_normalisation",)
"""v3 (current) = v2 + the text normalisation version (:data:`mtboard.core.text.NORMALISATION_VERSION`)."""
OPTIONAL_FINGERPRINT_COMPONENTS = ("coaching_data_sha256", "fst_retries", "format_attempts", "prompt_choice", "arm",
                                   "history")
"""Components present only when the method uses them (issue 18): the coaching data's SHA-256 (spec §3.2), the
FST gate's retry limit (``method.fst_retries``, present exactly when ``tools_enabled`` holds ``fst-gate``) and the
format-attempt limit (``method.format_attempts``, present exactly when it is above 1; issue 39), how the prompt was
chosen from the served model's identity (``method.prompt_choice``: ``family/source/template``, present exactly when
the run got no ``--prompt`` and its backend could say what it serves; issue 40 item 4), the corpus view
and history length (``method.arm``, ``method.history``, present exactly when set; issue 40 item 2). A card without
coaching, tools and format attempts has exactly :data:`FINGERPRINT_COMPONENTS`, so every fingerprint made before
stays the same."""


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON-compatible value (dict/list/str/int/float/bool/None).

    Raises: InputError for values JCS cannot represent (NaN/Infinity, integers beyond ±2**53, lone surrogates).
    """
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:  # pragma: no cover - message path
        raise InputError(f"value cannot be canonicalised (RFC 8785): {exc}") from None


def sha256_hex(data: bytes | str) -> str:
    """Lowercase hex SHA-256 of bytes (str is UTF-8 encoded first). 64 characters."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


CHECKOUT_FIX = ("turn line-end conversion off and check the files out again: git config core.autocrlf false && "
                "git rm -r -q --cached . && git reset --hard (new clones are safe: .gitattributes marks hashed files "
                "-text)")
"""How to repair a checkout whose line ends git rewrote (the fix part of the messages of
:func:`line_end_mismatch`)."""


def line_end_mismatch(data: bytes, expected_sha256: str, what: str) -> str | None:
    """Why ``data`` (a file's bytes) misses ``expected_sha256``, when the only difference is end-of-line
    conversion; None when it is not that.

    Git with ``core.autocrlf=true`` (the default of many Windows installs) checks LF files out with CRLF line ends,
    which changes every SHA-256 taken of them (corpus files, prompt templates). Two cases are recognised:

    * ``data`` has CRLF line ends and its LF form matches: this checkout rewrote the file;
    * ``data`` has LF line ends and its CRLF form matches: the hash was taken in a checkout that rewrote it.

    Returns one sentence naming ``what`` (e.g. ``"corpora/x.json"``); :data:`CHECKOUT_FIX` says how to repair.
    """
    if b"\r\n" in data and sha256_hex(data.replace(b"\r\n", b"\n")) == expected_sha256:
        return (f"{what} has CRLF line ends and matches the recorded SHA-256 only with LF line ends: this checkout "
                "rewrote its line ends (git core.autocrlf=true)")
    if b"\n" in data and b"\r\n" not in data and sha256_hex(data.replace(b"\n", b"\r\n")) == expected_sha256:
        return (f"the recorded SHA-256 is that of {what} with CRLF line ends: it was computed in a checkout that "
                "rewrote line ends (git core.autocrlf=true); re-run from a checkout without line-end conversion")
    return None


def entry_ids_sha256(ids: list[int]) -> str:
    """SHA-256 of the canonical JSON array of evaluated entry ids, in evaluation (corpus) order."""
    return sha256_hex(canonical_bytes([int(i) for i in ids]))


def fingerprint_hash(components: dict[str, Any], version: int = FINGERPRINT_VERSION) -> str:
    """SHA-256 hex of ``canonical_bytes({"components": components, "version": version})``.

    ``components`` must have exactly the keys of :data:`FINGERPRINT_COMPONENTS`, plus any of
    :data:`OPTIONAL_FINGERPRINT_COMPONENTS` (values: str, int, float, bool, None or list of str). Raises InputError
    on a missing or unknown key.
    """
    expected = set(FINGERPRINT_COMPONENTS)
    got = set(components)
    if got - set(OPTIONAL_FINGERPRINT_COMPONENTS) != expected:
        got -= set(OPTIONAL_FINGERPRINT_COMPONENTS)
        missing = sorted(expected - got)
        extra = sorted(got - expected)
        raise InputError(f"fingerprint components wrong: missing {missing}, unknown {extra}",
                         field="fingerprint.components")
    return sha256_hex(canonical_bytes({"components": components, "version": version}))


def fingerprint_v1(components: dict[str, Any]) -> str:
    """Spec §3.8 v1 for reference only: SHA-256 of the sorted concatenation of the 8 components' string forms."""
    parts = sorted(str(canonical_bytes(components[k]), "utf-8") for k in FINGERPRINT_V1_COMPONENTS)
    return sha256_hex("".join(parts))


def run_card_hash(card_json: dict[str, Any]) -> str:
    """Spec §3.9: SHA-256 hex of the canonical card with ``run_card_hash`` set to "" (the input is not modified)."""
    sealed = dict(card_json)
    sealed["run_card_hash"] = ""
    return sha256_hex(canonical_bytes(sealed))
