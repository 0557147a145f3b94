"""Evaluating a card's method on a secret segment (issue 17 items 1–2; spec §2.3 gold_standard ≥ 50 / held_out ≥ 10
entries, secret; §6.4 official scores come from gold_standard only and only scores are returned; §8 sovereignty).

``mtboard verify CARD --segment gold_standard --secret-corpus PATH`` re-runs the development card's method (the same
recorded configuration :mod:`mtboard.verify.rerun` re-runs) on the secret corpus's entries of that segment, in a temporary
folder that is deleted afterwards (the re-run's card and translations hold secret text), and writes only a
scores-only card (:mod:`mtboard.score.scores_card`) as ``<card stem>.<segment>.scores.json``.

Where the secret corpus comes from is the workflow's business (docs/maintainers.md "Secret segments"): a private
repository checked out with a read-only deploy key inside the protected ``verification`` environment; ``PATH`` is a
corpus file, or a folder whose corpus files are searched for one with the card's language pair and entries of the
segment.

held_out is spent sparingly: at most one held-out evaluation per method fingerprint (the development card's
``fingerprint.hash``). :func:`held_out_used` finds an earlier held-out scores card for the fingerprint in the
committed ``official/`` folder; the verify workflow runs ``mtboard official held-out-check`` before the re-run and
this module refuses too when given the folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mtboard.core import canonical, safejson
from mtboard.run import runner
from mtboard.run.plan import ProgressSink
from mtboard.backends.base import get_backend
from mtboard.core.documents import atomic_write, load_corpus
from mtboard.core.errors import ConfigError, MtboardError
from mtboard.inputs.corpora.minimums import BY_KEY as MINIMUMS_BY_KEY
from mtboard.inputs.runspec import RunSpec, facts_from_card
from mtboard.core.schema import SECRET_SEGMENTS, Corpus, RunCard, ScoresCard, Segment
from mtboard.score.scores_card import SCORES_SUFFIX, from_run_card
from mtboard.verify.rerun import NotVerifiable, check_verifiable, load_sealed_card, rerun_settings

MIN_ENTRIES: dict[Segment, int] = {Segment.gold_standard: MINIMUMS_BY_KEY["gold_standard"].need,
                                   Segment.held_out: 10}
"""Spec §2.3: the smallest secret segments (gold_standard: the §11.1 table, :mod:`mtboard.inputs.corpora.minimums`)."""


@dataclass
class SecretResult:
    card: ScoresCard
    path: Path


def scores_name(card_path: Path, segment: Segment) -> str:
    """``<card stem>.<segment>.scores.json``."""
    stem = card_path.name[: -len(".json")] if card_path.name.endswith(".json") else card_path.name
    return f"{stem}.{segment.value}{SCORES_SUFFIX}"


def find_secret_corpus(path: Path, card: RunCard, segment: Segment) -> tuple[Path, Corpus, str]:
    """The secret corpus file for ``card`` (its language pair) holding entries of ``segment``: ``path`` itself, or
    the first such ``*.json`` in the folder ``path`` (sorted). Raises ConfigError when none fits."""
    candidates = sorted(path.glob("*.json")) if path.is_dir() else [path]
    why: list[str] = []
    for p in candidates:
        try:
            corpus, sha = load_corpus(p)
        except MtboardError as exc:
            why.append(exc.one_line())
            continue
        d = corpus.dataset
        if (d.source_language, d.target_language) != (card.dataset.source_language, card.dataset.target_language):
            continue
        if any(e.segment == segment for e in corpus.entries):
            return p, corpus, sha
    raise ConfigError(f"no secret corpus in {path.name} has {segment.value} entries for "
                      f"{card.dataset.source_language}→{card.dataset.target_language}"
                      + (f" ({'; '.join(why[:2])})" if why else ""), field="--secret-corpus",
                      fix="pass the secret corpus file (or the folder of the checked-out secret repository)")


def held_out_used(official_dir: Path, fingerprint: str) -> list[Path]:
    """Held-out scores cards under ``official_dir`` whose ``card_fingerprint`` is ``fingerprint`` (read safely; an
    unreadable file is skipped — ``mtboard validate-scores`` reports it)."""
    found = []
    if not official_dir.is_dir():
        return found
    for p in sorted(official_dir.rglob(f"*.{Segment.held_out.value}{SCORES_SUFFIX}")):
        try:
            data = safejson.load_file(p, max_bytes=16 * 1024 * 1024)
        except MtboardError:
            continue
        if isinstance(data, dict) and data.get("card_fingerprint") == fingerprint:
            found.append(p)
    return found


def evaluate_secret(card_path: str | os.PathLike[str], secret_corpus: str | os.PathLike[str], segment: Segment, *,
                    salt: bytes | None = None, out_dir: str | os.PathLike[str] | None = None,
                    official_dir: str | os.PathLike[str] | None = None,
                    model_path: str | os.PathLike[str] | None = None,
                    base_url: str | None = None, min_entries: int | None = None,
                    progress: ProgressSink | None = None) -> SecretResult:
    """Re-run a card's method on a secret segment and write its scores-only card (module docstring).

    Args:
        card_path: the development card (sealed).
        secret_corpus: corpus file or folder (:func:`find_secret_corpus`).
        segment: gold_standard or held_out.
        salt: hypothesis salt, ≥ 32 bytes (``mtboard verify`` parses it from ``$MTBOARD_HYPOTHESIS_SALT`` with
            :func:`mtboard.score.scores_card.parse_salt`); None is refused.
        out_dir: where the scores-only card goes (default: beside the card).
        official_dir: the committed ``official/`` folder; for held_out, an earlier held-out card for the card's
            fingerprint there refuses the run.
        model_path, base_url: as :func:`mtboard.verify.rerun.verify_card`.
        min_entries: smallest segment accepted (default :data:`MIN_ENTRIES`, spec §2.3).

    Returns: :class:`SecretResult`. Raises: ConfigError (public segment, missing salt or corpus, too few entries,
        held_out already used), InputError (card), NotVerifiable, BackendError, IncompleteRunError (a run
        with failures publishes nothing).
    """
    if segment not in SECRET_SEGMENTS:
        raise ConfigError(f"--segment {segment.value} is public; use gold_standard or held_out", field="--segment")
    if salt is None:
        raise ConfigError("no hypothesis salt given", field="salt",
                          fix="set MTBOARD_HYPOTHESIS_SALT for mtboard verify (docs/maintainers.md), or pass salt")
    path = Path(card_path)
    card = load_sealed_card(path)
    check_verifiable(card)
    if segment == Segment.held_out and official_dir is not None:
        used = held_out_used(Path(official_dir), card.fingerprint.hash)
        if used:
            raise ConfigError(f"held_out was already used for fingerprint {card.fingerprint.hash[:12]}… "
                              f"({used[0].name}); one held-out evaluation per method fingerprint",
                              field="--segment", fix="evaluate on gold_standard instead")
    corpus_path, corpus, sha = find_secret_corpus(Path(secret_corpus), card, segment)
    n = sum(e.segment == segment for e in corpus.entries)
    need = MIN_ENTRIES[segment] if min_entries is None else min_entries
    if n < need:
        raise ConfigError(f"the secret corpus has {n} {segment.value} entries; spec §2.3 asks for at least {need}",
                          field="--secret-corpus")
    spec = RunSpec.from_card(card)
    how = get_backend(spec.method.backend).rerun(spec, facts_from_card(card),
                                                 model_path=Path(model_path) if model_path else None)
    temp = Path(tempfile.mkdtemp(prefix="mtboard-secret-"))
    try:
        settings = rerun_settings(card, spec, how, corpus_path, segment, None, temp / "work", base_url)
        run = runner.run(settings, progress).card
        if run is None:
            raise NotVerifiable("the secret-segment run produced no card")
        scores = from_run_card(run, card, salt=salt, segment=segment, corpus_sha256=sha,
                               corpus_version=corpus.dataset.version)
    finally:
        shutil.rmtree(temp, ignore_errors=True)  # the run's card and work folder hold secret text
    dest = (Path(out_dir) if out_dir is not None else path.parent) / scores_name(path, segment)
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dest, canonical.canonical_bytes(scores.model_dump(mode="json")) + b"\n")
    return SecretResult(scores, dest)


__all__ = ["MIN_ENTRIES", "SecretResult", "evaluate_secret", "find_secret_corpus", "held_out_used",
           "scores_name"]
