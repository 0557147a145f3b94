"""``mtboard rescore CARD``: re-score a card's stored outputs under this harness, without translating again.

A card holds everything its scores derive from — every replicate's raw outputs, errors, attempts, latencies and
usage (:func:`mtboard.score.card.card_records`) — and its recorded method, settings and backend facts
(:meth:`mtboard.inputs.runspec.RunSpec.from_card`, :func:`mtboard.inputs.runspec.facts_from_card`). Rescoring turns those back into
translation records and runs exactly what ``mtboard run`` runs after translating
(:func:`mtboard.score.card.score_and_assemble`): the mechanical policy, every metric, the replicate statistics, totals,
fingerprint and seal — under the current harness version. Run id, timestamp and elapsed time stay the card's: it is
the same run, scored again (e.g. after a harness change that alters what a card must contain). When anything moved, the
new card names the card it was re-scored from (``rescored_from``: its seal and fingerprint, after those it already named), so a
verification of the old card still counts for the new one where the ledger can check it (issue 31,
:func:`mtboard.ledger.load.lineage_problem`).

What rescoring cannot change is the evidence itself: outputs, latencies (a batch engine's per-entry latency is a
measurement the card either has or lacks — re-run such methods instead) and usage. Cards with judge verdicts are
refused (judges must see the re-scored outputs: ``mtboard judge`` after re-running), and so are cards with neural
metrics (``mtboard neural`` on the re-scored card).
"""

from __future__ import annotations

import os
from pathlib import Path

from mtboard.inputs.corpora.arms import arm_view
from mtboard.core import canonical, safejson
from mtboard.backends.base import get_backend
from mtboard.score.card import card_records
from mtboard.core.documents import load_card, load_corpus, seal
from mtboard.core.errors import InputError
from mtboard.inputs.prices import Rates
from mtboard.score.card import score_and_assemble
from mtboard.inputs.runspec import RunSpec, facts_from_card
from mtboard.core.schema import Ancestor, RunCard


def _corpus_for(card: RunCard, corpora_dir: Path):
    for p in sorted(corpora_dir.glob("*.json")):
        try:
            corpus, sha = load_corpus(p)
        except InputError:
            continue
        d = corpus.dataset
        if (d.id, d.version, sha) == (card.dataset.id, card.dataset.version, card.dataset.sha256):
            return corpus
    raise InputError(f"no corpus file in {corpora_dir} matches dataset {card.dataset.id} {card.dataset.version} "
                     f"(sha256 {card.dataset.sha256[:12]}…)", fix="pass --corpora with the corpus the card was run on")


def rescore_card(card_path: str | os.PathLike[str], *, corpora_dir: str | os.PathLike[str] = "corpora") -> RunCard:
    """The card at ``card_path`` re-scored and re-sealed under this harness (not written).

    Raises: InputError for an unreadable card, a broken seal, a card with judge verdicts, or no matching corpus;
    ConfigError when its backend is not registered here.
    """
    path = Path(card_path)
    card = load_card(path)
    data = safejson.loads(safejson.read_bytes(path), where=str(path))
    if not card.run_card_hash or canonical.run_card_hash(data) != card.run_card_hash:
        raise InputError("the card's run_card_hash does not match its content (changed after sealing)",
                         where=str(path), fix="rescore only sealed cards")
    if card.judges:
        raise InputError("the card carries judge verdicts; rescoring would leave them judging other scores",
                         where=str(path), fix="re-run the method and judge the new card (mtboard judge)")
    if card.neural_metrics:
        raise InputError("the card carries neural metrics; rescoring would leave them scoring other outputs",
                         where=str(path), fix="rescore a card without them, then add them again (mtboard neural)")
    corpus = _corpus_for(card, Path(corpora_dir))
    spec = RunSpec.from_card(card)
    seg = arm_view(corpus.segment(card.dataset.segment), card.method.arm, card.method.history)  # issue 40
    entries = seg[: card.method.limit] if card.method.limit is not None else seg
    m = card.method
    rates = Rates(m.price_in_per_mtok, m.price_out_per_mtok, m.price_cached_in_per_mtok, m.price_reasoning_per_mtok,
                  m.price_as_of, m.price_table_sha256) if m.price_in_per_mtok is not None and \
        m.price_out_per_mtok is not None else None
    cls = get_backend(m.backend)
    new = score_and_assemble(spec, facts_from_card(card), entries, card_records(card), rates=rates,
                             strip_unknown_marks=cls.strip_unknown_marks, elapsed_seconds=card.elapsed_seconds,
                             run_id=card.run_id, timestamp=card.timestamp, notes=card.notes,
                             fst=card.scores.fst_acceptance_rate is not None)
    same = seal(new.model_copy(update={"rescored_from": card.rescored_from}))
    if same.run_card_hash == card.run_card_hash:
        return same  # nothing moved: the same card, the same seal (a record that names it still does)
    fp = card.fingerprint
    lineage = [*card.rescored_from, Ancestor(run_card_hash=card.run_card_hash, fingerprint_hash=fp.hash,
                                             fingerprint_version=fp.version, fingerprint_components=fp.components)]
    return seal(new.model_copy(update={"rescored_from": lineage}))


__all__ = ["rescore_card"]
