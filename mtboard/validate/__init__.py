"""Named checks over submitted run cards (issue 6; spec §3.8, §3.9, §8, §9.1–9.3).

Modelled on MLPerf's submission checker: every check has a name, every problem carries the check's name and a
location (file + JSON path), all problems are collected and the caller fails once at the end.

Per card, in order (a check whose inputs are broken is reported as ``skip`` with the reason):

=================== =================================================================================================
``file``            path is safe: no ``..`` component, not a symlink or special file (refused without reading), inside
                    the repository, not leaving it through a linked folder
``size``            file size under :data:`MAX_CARD_BYTES` (checked with ``lstat`` before reading)
``json``            strict JSON (:mod:`mtboard.core.safejson`): no NaN/Infinity, 1e400, duplicate keys, deep nesting, huge
                    integers, lone surrogates, invalid UTF-8, BOM
``schema``          the strict RunCard schema (:mod:`mtboard.core.schema`)
``harness_version`` made by a harness version this validator reads (older/newer cards are rejected with the reason)
``file_name``       under ``submissions/``: the path is exactly :func:`canonical_relpath` of the content
``run_card_hash``   spec §3.9 seal recomputed over the canonical card
``fingerprint``     components re-derived from the card's fields (:func:`mtboard.score.card.card_fingerprint_components`) and
                    the hash recomputed from them (fingerprint v3, :mod:`mtboard.core.canonical`)
``method``          method record consistent: spec = backend:model[:effort]; method_class, model_slug and
                    batch_size as the registered backend gives them; system_prompt_sha256 = SHA-256(system_prompt_used);
                    the prompt file, its format and rendered system prompt; method_config mirrors the card; no
                    coaching/tools; the local-model gate; table prices; fst_version = installed analyser; format
                    attempts (limit, per-entry count = 1 + kept failed answers, each re-decided; issue 39)
``dataset``         dataset id + version + sha256 (+ language pair) match a corpus file in ``corpora/``
``entries``         evaluated entry ids/count equal the corpus segment (or its first ``method.limit`` entries)
``texts``           each result's source/reference/segment/difficulty/domain/provenance equal the corpus entry
``metrics``         scores, totals and per-entry scores recomputed from the stored raw outputs with
                    :func:`mtboard.score.scoring.score_run` — **exact** equality, no slack — for run 0 and every replicate
                    run, and the replicate statistics
``mechanical``      the frozen compliance policy re-run on ``raw_predicted``: decisions, ``predicted``, counts, version
``signatures``      sacrebleu signatures (and the composite's, when the card has one) equal the recomputation and say
                    what the metric is (chrF++ ⇒ ``nw:2``)
``judges``          verdicts and summaries consistent with one another and the judge classes (judges cannot be
                    re-run here; :mod:`mtboard.validate.judging`); a recorded judge admission consistent with the
                    committed known-answer set (issue 39)
``timestamps``      ISO 8601 UTC, not in the future, not before 2024, elapsed time consistent with latencies
``sovereignty``     no gold_standard/held_out entries; no secret-segment text (when a secret file is given)
``secrets``         no API-key-like strings (sk-…, hf_…, AKIA…, Bearer …, ghp_…, private keys)
``submission``      the submission gate (spec §9.1, §9.2, §9.5): the rules of
                    :data:`mtboard.validate.submission.RULES` at the card's verification tier (last: its ``run-card``
                    rule reads every other check's status)
=================== =================================================================================================

Repository-level checks (``mtboard validate`` over ``submissions/``): ``scope`` (a pull request may only add or
modify files under ``submissions/``), ``duplicates`` (one card per run_card_hash / run_id), ``copies`` (no card
relabels another model's outputs, :mod:`mtboard.validate.copies`), ``verification``
(records beside cards name the card they verify), ``sovereignty`` (corpora/ holds no secret segment; no secret text
in any file under ``submissions/`` or ``corpora/``).

Messages never echo untrusted content: they name paths, fields and numbers; text is referred to, not quoted.

Modules (each imports only modules above it in this list):

* :mod:`~mtboard.validate.report` — check catalogue (CARD_CHECKS, DECLARED_FIELDS), Problem / CardReport /
  ValidationReport, the per-file collector, text, JSON and Markdown rendering
* :mod:`~mtboard.validate.naming` — canonical submission paths and allow-listed names
* :mod:`~mtboard.validate.context` — Context (corpora, secret strings, clock, backend registry)
* :mod:`~mtboard.validate.structure` — file, size, schema, harness_version, file_name, run_card_hash, fingerprint,
  method
* :mod:`~mtboard.validate.binding` — dataset, entries, texts
* :mod:`~mtboard.validate.recompute` — metrics, mechanical, signatures
* :mod:`~mtboard.validate.judging` — judges
* :mod:`~mtboard.validate.copies` — relabelled copies across cards
* :mod:`~mtboard.validate.hygiene` — timestamps, sovereignty, secrets
* :mod:`~mtboard.validate.submission` — submission (the gate's rule table, the tier a card claims)
* :mod:`~mtboard.validate.pipeline` — one card through every check (validate_card, validate_bytes)
* :mod:`~mtboard.validate.repository` — many files: scope, duplicates, verification, tree-wide sovereignty
  (validate_paths)
"""

from typing import TYPE_CHECKING, Any

from mtboard.core.errors import InputError
from mtboard.core.lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (__getattr__ below), named here for type checkers
    from mtboard.validate.binding import expected_entries
    from mtboard.validate.context import (SECRET_MIN_SUBSTRING, Context, KnownCorpus, find_secret_text, make_context,
                                          normalise_text, secret_strings)
    from mtboard.validate.hygiene import CLOCK_SKEW, EARLIEST_TIMESTAMP, SECRET_PATTERNS, find_key_like
    from mtboard.validate.naming import (DATASET_DIR_RE, NAME_RE, SLUG_RE, SUBMISSIONS_DIR, VERIFICATION_SUFFIX,
                                         canonical_name, canonical_relpath, slug)
    from mtboard.validate.pipeline import validate_bytes, validate_card
    from mtboard.validate.report import (CARD_CHECKS, RECOMPUTED_CHECKS, REPO_CHECKS, CardReport, Problem, Status,
                                         ValidationReport, declared_fields, render_json, render_text)
    from mtboard.validate.repository import (MAX_SCAN_BYTES, check_scope, iter_card_paths, parse_changes,
                                             validate_paths, validate_record)
    from mtboard.validate.structure import MAX_CARD_BYTES, OLDEST_SUPPORTED_HARNESS

_EXPORTS = {
    "binding": ("expected_entries",),
    "context": ("SECRET_MIN_SUBSTRING", "Context", "KnownCorpus", "find_secret_text", "make_context",
                "normalise_text", "secret_strings"),
    "hygiene": ("CLOCK_SKEW", "EARLIEST_TIMESTAMP", "SECRET_PATTERNS", "find_key_like"),
    "naming": ("DATASET_DIR_RE", "NAME_RE", "SLUG_RE", "SUBMISSIONS_DIR", "VERIFICATION_SUFFIX", "canonical_name",
               "canonical_relpath", "slug"),
    "pipeline": ("validate_bytes", "validate_card"),
    "report": ("CARD_CHECKS", "RECOMPUTED_CHECKS", "REPO_CHECKS", "CardReport", "Problem", "Status",
               "ValidationReport", "declared_fields", "render_json", "render_text"),
    "repository": ("MAX_SCAN_BYTES", "check_scope", "iter_card_paths", "parse_changes", "validate_paths",
                   "validate_record"),
    "structure": ("MAX_CARD_BYTES", "OLDEST_SUPPORTED_HARNESS"),
}
"""The package's public names by the module that defines them. They are imported on first use (PEP 562
``__getattr__``; issue 35 item 4, "modules a run does not use are not imported"): ``mtboard run`` reads a few checks
(:mod:`~mtboard.validate.hygiene`, :mod:`~mtboard.validate.naming`, :mod:`~mtboard.validate.structure`) for its
preflight, and importing the package used to load every check, the repository walker and what they import (~35 ms
of the run's start)."""
_LAZY = LazyNames(__name__, globals(), _EXPORTS)

__all__ = ["DECLARED_FIELDS", "InputError", "UNBOUND_FIELDS", *_LAZY.where]


def __getattr__(name: str) -> Any:
    """``DECLARED_FIELDS`` and ``UNBOUND_FIELDS``: computed on first use (:func:`mtboard.validate.report.
    declared_fields`); any other public name of :data:`_EXPORTS`: imported from its module on first use and kept in
    the package (:class:`mtboard.core.lazy.LazyNames`). Raises AttributeError for any other name."""
    if name in ("DECLARED_FIELDS", "UNBOUND_FIELDS"):
        return _LAZY.load("declared_fields")()
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(__all__)
