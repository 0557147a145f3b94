"""The official board's data: scores-only gold cards, their attestations, their ranks (issue 17 item 3; spec §6.4
"official leaderboard scores come only from gold_standard", §9.4 tiers, §2.3 segments).

Scores-only cards live in the committed ``official/`` folder as ``official/<development dataset id>/<development card
stem>.<segment>.scores.json`` (written by ``mtboard verify --segment …`` in the verify workflow), each with its
Sigstore bundle beside it (``….scores.json.sigstore``, the same attestation step as verification records). This
module reads them (every card through :func:`mtboard.validate.scores.validate_scores_card`: a card that fails is
rejected, never shown — impossible statistics, a date in the future, a repeated entry, and, where the build has the
secret corpus (``$MTBOARD_SECRET_SEGMENT``), entries other than its segment's or references that are not its;
issue 32 item 3), checks each bundle (:func:`mtboard.verify.attestation.verify_attestation`: its subject must be the
file's SHA-256 and its signer the expected verify workflow), and builds one board per secret corpus (language pair +
corpus identity) from the gold_standard cards, ranked like the development boards: composite, a paired bootstrap of
the composite over the segments (:func:`mtboard.score.metrics.bootstrap.composite_resamples` on the per-segment statistics
and facts) and the same rank clusters (:func:`mtboard.score.stats.rank_clusters`). held_out cards are read and validated
but not ranked (they are for future evaluation, spec §2.3).

Only attested rows are ranked (issue 17 item 4: a scores-only card anyone can write and seal is not an official
score): a row whose bundle does not verify is listed below the ranked ones, unranked, labelled
:data:`UNATTESTED_GOLD_LABEL`, and never counts as GDS or community verified. A gold card whose ``method_spec``,
``model_slug``, ``condition``, ``card_fingerprint``, ``card_dataset_id`` or languages differ from the development card
it names, or whose file name names another development card or segment (:func:`mtboard.validate.scores.
dev_link_problems`, the check ``mtboard validate-scores`` runs too: issue 34 item 6) is refused
(:func:`refuse_mislinked`): it would borrow another method's development row and its dev–gold gap.

:func:`attested_gold_row` / :func:`has_attested_gold_row` answer "has this development card an attested gold row?"
(for "community verified": an attested gold row plus a passing review).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mtboard.core import safejson
from mtboard.verify.attestation import AttestationError, ExpectedSigner, verify_attestation
from mtboard.core.errors import MtboardError
from mtboard.score.metrics import bootstrap
from mtboard.score.metrics.composite import COLUMN_UNITS
from mtboard.core.schema import Outcome, RunCard, ScoresCard, ScoresSegment, Segment
from mtboard.score.scores_card import SCORES_SUFFIX
from mtboard.validate.scores import SecretCorpus, dev_link_problems, validate_scores_card

OFFICIAL_DIR = "official"
BUNDLE_SUFFIX = ".sigstore"
"""A scores-only card's attestation bundle: ``<card file name>.sigstore`` beside it."""
UNATTESTED_GOLD_LABEL = "maintainer re-run (unattested) · not ranked"
"""How an unattested gold row is labelled: listed below the ranked rows, without a rank."""
UNRANKED = "unranked"
"""The rank cell of an unattested row."""


@dataclass
class GoldRow:
    """One scores-only card on the official board."""

    path: str
    """Path relative to the official folder."""
    card: ScoresCard
    attested: bool
    attestation_problems: list[str] = field(default_factory=list)
    boot: np.ndarray | None = None
    composite_ci: tuple[float, float] | None = None
    rank: str = ""
    position: int = 0

    @property
    def label(self) -> str:
        return "GDS verified" if self.attested else UNATTESTED_GOLD_LABEL

    @property
    def anchor(self) -> str:
        return f"gold-{self.card.card_run_card_hash[:16]}"


@dataclass
class OfficialBoard:
    source_language: str
    target_language: str
    language_pair: str
    dataset_id: str
    dataset_version: str
    sha256: str
    n_entries: int
    rows: list[GoldRow]
    """Attested rows first, ranked; then unattested rows (rank :data:`UNRANKED`)."""
    mdd: float | None = None

    @property
    def ranked(self) -> list[GoldRow]:
        return [r for r in self.rows if r.attested]

    @property
    def unranked(self) -> list[GoldRow]:
        return [r for r in self.rows if not r.attested]

    @property
    def page(self) -> str:
        return f"official/{self.dataset_id}-v{self.dataset_version}.md"


@dataclass
class OfficialInputs:
    rows: list[GoldRow] = field(default_factory=list)
    """Every valid scores-only card (gold_standard and held_out)."""
    rejected: list[tuple[str, list[str]]] = field(default_factory=list)


def segment_columns(segments: list[ScoresSegment]) -> dict[str, np.ndarray]:
    """Per-segment values whose means are the composite's rates — :func:`mtboard.score.metrics.composite.entry_columns`
    for a scores-only card (the same columns, units and all-or-none rules)."""
    cols: dict[str, list] = {"exact_match_rate": [1.0 if s.exact_match else 0.0 for s in segments],
                             "code_switching_rate": [1.0 if s.code_switching else 0.0 for s in segments]}
    if all(s.equivalent_match is not None for s in segments):
        cols["equivalent_match_rate"] = [1.0 if s.equivalent_match else 0.0 for s in segments]
    if all(s.fst_checked_words is not None for s in segments):
        cols["fst_acceptance_rate"] = [
            (((s.fst_accepted_words or 0) / s.fst_checked_words) if s.fst_checked_words else 1.0)
            if s.outcome == Outcome.usable else 0.0 for s in segments]
    if segments and all(s.semantic_units is not None for s in segments):
        cols["semantic_score"] = [float(s.semantic_units) for s in segments]  # type: ignore[arg-type]
        assert COLUMN_UNITS["semantic_score"] == 10_000
    if segments and all(s.hallucination is not None for s in segments):
        cols["hallucination_rate"] = [1.0 if s.hallucination else 0.0 for s in segments]
    if any(s.glossary_terms for s in segments):
        cols["terminology_adherence"] = [[float(s.glossary_hits or 0) for s in segments],
                                         [float(s.glossary_terms or 0) for s in segments]]
    return {k: np.asarray(v, dtype=np.float64) for k, v in cols.items()}


def check_bundle(path: Path, signer: ExpectedSigner | None) -> list[str]:
    """Why the scores-only card at ``path`` is not attested ([] when its bundle verifies)."""
    if signer is None:
        return ["no expected repository configured, so no attestation can be checked"]
    bundle = path.with_name(path.name + BUNDLE_SUFFIX)
    try:
        data = safejson.read_bytes(bundle, max_bytes=1024 * 1024)
    except MtboardError:
        return [f"no attestation bundle {bundle.name} beside the card"]
    try:
        verify_attestation(data, hashlib.sha256(path.read_bytes()).hexdigest(), signer, where=bundle.name)
    except AttestationError as exc:
        return [exc.one_line()]
    return []


def load_official(official_dir: Path | None, signer: ExpectedSigner | None,
                  secret: SecretCorpus | None = None) -> OfficialInputs:
    """Every ``*.scores.json`` under ``official_dir``, validated and attestation-checked (module docstring).
    ``secret``: the secret corpus (the build's ``$MTBOARD_SECRET_SEGMENT``); cards of it must list exactly its entries
    of their segment with its references' statistics (:func:`mtboard.validate.scores.corpus_problems`)."""
    out = OfficialInputs()
    if official_dir is None or not official_dir.is_dir():
        return out
    for p in sorted(official_dir.rglob(f"*{SCORES_SUFFIX}")):
        if p.is_symlink() or not p.is_file():
            continue
        rel = p.relative_to(official_dir).as_posix()
        rep = validate_scores_card(p, secret=secret)
        if not rep.ok or rep.card is None:
            out.rejected.append((rel, rep.problems))
            continue
        problems = check_bundle(p, signer)
        out.rows.append(GoldRow(rel, rep.card, attested=not problems, attestation_problems=problems))
    return out


def build_official_boards(inputs: OfficialInputs, resamples: int = bootstrap.BOOTSTRAP_RESAMPLES,
                          seed_of=None) -> list[OfficialBoard]:
    """One board per secret corpus from the gold_standard rows, ranked (module docstring). ``seed_of``: board →
    bootstrap seed (default :func:`mtboard.score.stats.view_seed` of the corpus identity)."""
    from mtboard.score import stats  # noqa: PLC0415

    groups: dict[tuple, list[GoldRow]] = {}
    for row in inputs.rows:
        d = row.card.dataset
        if d.segment != Segment.gold_standard:
            continue
        groups.setdefault((d.source_language, d.target_language, d.id, d.version, d.sha256), []).append(row)
    boards = []
    for (src, tgt, did, ver, sha), rows in sorted(groups.items()):
        ids = sorted({s.entry_id for s in rows[0].card.segments})
        rows = [r for r in rows if sorted(s.entry_id for s in r.card.segments) == ids]
        seed = seed_of(did, ver, sha) if seed_of else stats.view_seed(did, ver, sha, "gold")
        counts = bootstrap.resample_counts(len(ids), resamples, seed)
        for r in rows:
            segs = sorted(r.card.segments, key=lambda s: s.entry_id)
            r.boot = bootstrap.composite_resamples([s.chrf for s in segs], segment_columns(segs), counts)
            r.composite_ci = bootstrap.percentile_interval(r.boot)
        def order(r: GoldRow) -> tuple:
            return (-r.card.scores.composite, -r.card.scores.chrf_plus_plus, r.card.method_spec,
                    r.card.card_run_card_hash)

        ranked = sorted((r for r in rows if r.attested), key=order)
        unranked = sorted((r for r in rows if not r.attested), key=order)
        clusters = stats.rank_clusters([stats.RankRow(r.card.card_run_card_hash, r.card.scores.composite, r.boot)
                                        for r in ranked])
        for pos, (r, label) in enumerate(zip(ranked, clusters.labels), start=1):
            r.position, r.rank = pos, label
        for r in unranked:
            r.position, r.rank = 0, UNRANKED
        rows = ranked + unranked
        boards.append(OfficialBoard(src, tgt, rows[0].card.dataset.language_pair, did, ver, sha, len(ids), rows,
                                    clusters.mdd if ranked else None))
    return boards


def gold_rows_by_card(boards: list[OfficialBoard],
                      attested_only: bool = False) -> dict[str, tuple[OfficialBoard, GoldRow]]:
    """Development card run_card_hash → its gold row (and board); with ``attested_only``, attested rows only (an
    unattested row then neither appears nor shadows an attested row of the same card)."""
    return {r.card.card_run_card_hash: (b, r) for b in boards for r in b.rows if r.attested or not attested_only}


def attested_gold_row(run_card_hash: str, official_dir: str | os.PathLike[str] = OFFICIAL_DIR,
                      repository: str | None = None, dev_card: RunCard | None = None) -> GoldRow | None:
    """The development card's gold_standard row when it exists, validates and its attestation verifies against the
    verify workflow of ``repository`` (default: :func:`mtboard.verify.record.expected_signer`'s environment
    variables); None otherwise. With ``dev_card`` (the card ``run_card_hash`` names), a row whose method, model,
    condition or fingerprint differ from it, or whose file name names another card
    (:func:`mtboard.validate.scores.dev_link_problems`), does not count. This is the "attested gold row" half of
    community verified (spec §9.4)."""
    from mtboard.verify.record import expected_signer  # noqa: PLC0415

    inputs = load_official(Path(official_dir), expected_signer(repository))
    for row in inputs.rows:
        if (row.card.card_run_card_hash == run_card_hash and row.card.dataset.segment == Segment.gold_standard
                and row.attested
                and (dev_card is None or not dev_link_problems(row.card, {run_card_hash: dev_card}, row.path))):
            return row
    return None


def has_attested_gold_row(run_card_hash: str, official_dir: str | os.PathLike[str] = OFFICIAL_DIR,
                          repository: str | None = None, dev_card: RunCard | None = None) -> bool:
    """True when :func:`attested_gold_row` finds one."""
    return attested_gold_row(run_card_hash, official_dir, repository, dev_card) is not None


def refuse_mislinked(inputs: OfficialInputs, dev_cards: dict[str, RunCard]) -> None:
    """Move every row that fails :func:`mtboard.validate.scores.dev_link_problems` — its development card
    (``dev_cards``: run_card_hash → card, the cards the site shows) is present but does not match it, or its file name
    names another development card or segment — from ``inputs.rows`` to ``inputs.rejected``, with the reasons (the
    lines ``mtboard validate-scores`` prints) — shown on the official index page and as build warnings. A row whose
    development card is absent keeps no link anyway (the page says so)."""
    keep = []
    for row in inputs.rows:
        problems = dev_link_problems(row.card, dev_cards, row.path)
        if problems:
            inputs.rejected.append((row.path, problems))
        else:
            keep.append(row)
    inputs.rows = keep


def held_out_duplicates(inputs: OfficialInputs) -> list[str]:
    """One line per method fingerprint with more than one held_out card (spec §2.3: at most one)."""
    seen: dict[str, str] = {}
    out = []
    for r in inputs.rows:
        if r.card.dataset.segment != Segment.held_out:
            continue
        fp = r.card.card_fingerprint
        if fp in seen:
            out.append(f"{r.path}: held_out already evaluated for fingerprint {fp[:12]}… ({seen[fp]})")
        else:
            seen[fp] = r.path
    return out


__all__ = ["BUNDLE_SUFFIX", "OFFICIAL_DIR", "UNATTESTED_GOLD_LABEL", "UNRANKED", "GoldRow", "OfficialBoard",
           "OfficialInputs", "attested_gold_row",
           "build_official_boards", "check_bundle", "gold_rows_by_card", "has_attested_gold_row",
           "held_out_duplicates", "load_official", "refuse_mislinked", "segment_columns"]
