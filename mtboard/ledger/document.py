"""The ledger as a published document (issue 31): :class:`mtboard.core.schema.ledger.Ledger`, written to the site as
``data/ledger.json`` and printed by ``mtboard ledger --json``; schema exported as ``schemas/ledger.schema.json``.

Every value comes from the :class:`~mtboard.ledger.build.BoardLedger` (standings from
:mod:`mtboard.ledger.standing`, ranks from :mod:`mtboard.ledger.methods`): nothing is decided here.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from mtboard.core.names import json_visible
from mtboard.core.schema.ledger import (LEDGER_SCHEMA, Ledger, LedgerBoard, LedgerCanaryRun, LedgerClaimMark,
                                        LedgerCleanSubset, LedgerContextSlices, LedgerDrift, LedgerLabelSlice, LedgerFlip, LedgerFloor, LedgerSentinel,
                                        LedgerCoverage, LedgerEvidence, LedgerMember, LedgerRank, LedgerReproduction,
                                        LedgerModel, LedgerRow, LedgerScorer, LedgerState, LedgerTries,
                                        LedgerScreenReady, LedgerVariants,
                                        LedgerDiagnostic, LedgerDiagnosticGroup, LedgerDiagnosticRow)
from mtboard.ledger.build import BoardLedger
from mtboard.ledger.diagnostic import PHENOMENON
from mtboard.ledger.methods import MethodRow
from mtboard.ledger.standing import BoardState, Standing, board_state, card_composite, earned
from mtboard.ledger.tables import Leaderboard, method_name, run_page


def build_id(boards: list[Leaderboard]) -> str:
    """12 hex of the SHA-256 over every shown card's run_card_hash (sorted): changes exactly when the cards do."""
    h = hashlib.sha256()
    for key in sorted(lc.card.run_card_hash or lc.page_id for lb in boards for lc in lb.cards):
        h.update(key.encode() + b"\n")
    return h.hexdigest()[:12]


def git_commit(root: Path) -> str | None:
    """The commit checked out at ``root`` (``git rev-parse HEAD``), or None outside a git checkout."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and len(out) == 40 else None


def _rank(view_name: str, m: MethodRow) -> LedgerRank:
    floors = getattr(m, "floors", None)
    fm = floors[0] if floors else None
    f = getattr(m, "flip", None)  # set by mtboard.ledger.flip.attach_flips
    return LedgerRank(view=view_name, rank=m.rank, position=m.position or None, rank_lo=m.rank_lo,
                      rank_hi=m.rank_hi, cluster=None if m.reference else m.cluster, composite=m.composite,
                      composite_ci=m.composite_ci, chrf=m.chrf,
                      inside_floor=None if fm is None else LedgerFloor(sentinel=fm.sentinel,
                                                                       composite=fm.sentinel_composite, p=fm.p),
                      flip=None if f is None else LedgerFlip(below=f.below, segments=f.count, entries=list(f.entries),
                                                            method=f.method))


def _sentinels(lb: Leaderboard) -> list[LedgerSentinel]:
    return [LedgerSentinel(view=view.domain or "all", name=ln.name, floor=ln.floor, composite=ln.composite,
                           composite_ci=ln.composite_ci, chrf=ln.chrf, covered=ln.covered, entries=ln.entries)
            for view in lb.views for ln in getattr(view, "sentinels", [])]


def _tries(t) -> LedgerTries | None:
    if t is None:
        return None
    # no ``others`` (mtboard.ledger/2): they are the board's rows of the same model (issue 35, "bytes")
    return LedgerTries(model=t.model, count=t.count, subsets=t.subsets, best=t.best, text=t.text)


def _model(f) -> LedgerModel | None:
    if f is None:
        return None
    return LedgerModel(record=f.record, link=f.link, link_text=f.link_text, weights=f.weights, size=f.size,
                       licence=f.licence, organisation=f.organisation, quantization=f.quantization,
                       method_class=f.method_class)


def _scorer(lb: Leaderboard | None, fingerprint: str) -> LedgerScorer | None:
    bs = getattr(lb, "scorers", None)
    sc = bs.rows.get(fingerprint) if bs is not None else None
    if sc is None:
        return None
    return LedgerScorer(**sc.as_dict(), older=bs.mark(fingerprint))


def _row(s: Standing, ledger: BoardLedger, placed: dict[tuple[str, str], list[LedgerRank]],
         lb: Leaderboard | None = None) -> LedgerRow:
    rep = ledger.card(s.representative)
    cont = getattr(lb, "contamination", {}).get(s.fingerprint)
    marks = [LedgerClaimMark(anchor=m.anchor, text=m.text, status=m.status, path=m.path)
             for m in (cont.marks if cont else [])]
    clean = cont.clean if cont else None
    members = [ledger.card(p) for p in s.members]
    ranks = placed.get((s.fingerprint, s.representative), [])
    r, c = s.reproduction, s.coverage
    return LedgerRow(
        fingerprint=s.fingerprint, method=method_name(rep.card), model_slug=rep.card.model_slug,
        temperature=rep.card.temperature, tier=s.tier,
        tier_label=s.label,
        evidence=[LedgerEvidence(tier=e.tier, card=e.card, run_card_hash=e.run_card_hash, kind=e.kind,
                                 source=e.source, attested=e.attested, rescored_from=e.via) for e in s.evidence],
        representative=s.representative,
        members=[LedgerMember(card=lc.path, page=run_page(lc)[:-3] + ".html", run_card_hash=lc.card.run_card_hash or "",
                              timestamp=lc.card.timestamp, composite=card_composite(lc.card), earned=earned(lc))
                 for lc in members],
        reproduction=LedgerReproduction(count=r.count, agree=r.agree, spread=r.spread, text=r.text),
        coverage=LedgerCoverage(entries=c.entries, of=c.of, limit=c.limit, subset=c.subset, text=c.text),
        ranked=s.ranked, unranked_reason=s.unranked_reason, reference=s.reference, declared=s.declared, ranks=ranks,
        tries=_tries((getattr(lb, "tries", None) or {}).get(s.fingerprint)),
        model=_model((getattr(lb, "facts", None) or {}).get(s.fingerprint)),
        contamination=marks,
        scorer=_scorer(lb, s.fingerprint),
        rescored_from=[a.fingerprint_hash for a in getattr(rep.card, "rescored_from", [])],
        clean_subset=None if clean is None else LedgerCleanSubset(
            cutoff=clean.cutoff, entries=clean.entries, composite=clean.composite, composite_ci=clean.composite_ci,
            text=clean.text),
        drift=_drift((getattr(lb, "drift", None) or {}).get(s.fingerprint)),
        variants=_variants((getattr(lb, "variants", None) or {}).get(s.representative)),
        context_behaviour=_context((getattr(lb, "context_slices", None) or {}).get(s.representative)),
        screen_ready=_screen((getattr(lb, "screen", None) or {}).get(s.representative)))


def _context(c) -> LedgerContextSlices | None:
    """The shown card's :class:`mtboard.ledger.context_slices.ContextSlices` as published (issue 40 item 3); None
    without one."""
    if c is None:
        return None
    return LedgerContextSlices(
        judge=c.judge, with_history=c.with_history, judged=c.judged, parse_failed=c.parse_failed,
        call_failed=c.call_failed, not_sent=c.not_sent, excluded=c.excluded,
        labels=[LedgerLabelSlice(label=x.label, count=x.count, share=x.share, share_ci=x.share_ci,
                                 mean_penalty=x.mean_penalty, penalty_ci=x.penalty_ci) for x in c.labels])


def _screen(sr) -> LedgerScreenReady | None:
    """The shown card's :class:`mtboard.score.screen.ScreenReady` as published (issue 40 item 5); None without one."""
    if sr is None:
        return None
    return LedgerScreenReady.of(sr)


def _variants(v) -> LedgerVariants | None:
    """The shown card's :class:`mtboard.score.variants.VariantLint` as published (issue 39 item 2); None without
    one."""
    if v is None:
        return None
    return LedgerVariants(variant_entries=v.n_variant, variant_matched=v.k_variant, by_variant=v.k_by_variant,
                          other_entries=v.n_other, other_matched=v.k_other, p=v.p, flagged=v.flagged, text=v.text)


def _drift(d) -> LedgerDrift | None:
    """The row's :class:`mtboard.ledger.canaries.RowDrift` as published (issue 38 item 3); None without one."""
    if d is None:
        return None
    return LedgerDrift(entries=d.entries, card_composite=d.card_composite, card_composite_ci=d.card_ci,
                       runs=[LedgerCanaryRun(date=p.date, composite=p.composite, chrf_plus_plus=p.chrf_plus_plus,
                                             outside=p.outside, served=p.served, path=p.path) for p in d.runs],
                       drifted=d.drifted, text=d.text)


def to_document(ledger: BoardLedger, built_at: str, commit: str | None = None) -> Ledger:
    """The :class:`~mtboard.core.schema.ledger.Ledger` of a computed board (``built_at``: ISO 8601 UTC; ``commit``:
    the git commit built from, when known)."""
    boards = []
    for lb, plan in zip(ledger.boards, ledger.plans, strict=True):
        order = {m.key: i for i, m in enumerate(lb.views[0].methods)}
        rows = sorted(plan.rows, key=lambda s: (not (s.ranked or s.reference), order.get(s.fingerprint, len(order)),
                                                s.members[0]))
        placed: dict[tuple[str, str], list[LedgerRank]] = {}  # (fingerprint, shown card) → its place on each view
        for view in lb.views:
            for m in view.methods:
                placed.setdefault((m.key, m.rep.lc.path), []).append(_rank(view.domain or "all", m))
        boards.append(LedgerBoard(key=plan.key, dataset_id=plan.dataset_id, version=plan.version,
                                  segment=plan.segment, sha256=plan.sha256, language_pair=plan.language_pair,
                                  ranked_entries=len(plan.ref_ids), rows=[_row(s, ledger, placed, lb) for s in rows],
                                  state=_state(plan.state or board_state(plan)),
                                  scorer_note=getattr(getattr(lb, "scorers", None), "note", None),
                                  sentinels=_sentinels(lb),
                                  inseparable=[v.domain or "all" for v in lb.views
                                               if getattr(v, "inseparable", False)],
                                  diagnostic=getattr(getattr(lb, "diagnostic", None), "key", None)))
    return Ledger(schema=LEDGER_SCHEMA, build=build_id(ledger.boards), built_at=built_at, commit=commit,
                  boards=boards, state=_state(ledger.state),
                  diagnostic=[_diagnostic(d) for d in getattr(ledger, "diagnostic", [])])


def _diagnostic(d) -> LedgerDiagnostic:
    """A :class:`mtboard.ledger.diagnostic.DiagnosticBoard` as published (issue 40 item 6)."""
    rows = [LedgerDiagnosticRow(
        fingerprint=r.standing.fingerprint, method=r.method, tier=r.standing.tier,
        representative=r.standing.representative, members=list(r.standing.members), listed=r.listed,
        reason=None if r.listed else (r.standing.unranked_reason or "not listed"), reference=r.standing.reference,
        entries=r.n, chrf=r.chrf, chrf_ci=r.chrf_ci, composite=r.composite, composite_ci=r.composite_ci,
        outcomes=r.outcomes, failures=r.failures, placeholder_flags=r.placeholder_flags,
        groups=[LedgerDiagnosticGroup(group=g, entries=v.n, chrf=v.chrf) for g, v in r.groups.items()])
        for r in d.rows]
    return LedgerDiagnostic(key=d.key, board=d.board, dataset_id=d.dataset_id, version=d.version, sha256=d.sha256,
                            language_pair=d.language_pair, entries=d.entries, phenomenon=PHENOMENON,
                            groups=dict(d.group_sizes), rows=rows)


def _state(state: BoardState) -> LedgerState:
    return LedgerState(kind=state.kind, sentence=state.sentence)


LAYERS = 4
"""How deep :func:`dumps` indents the ledger: the document, its boards and each board's lists one item per line
(issue 35: a row with every key on its own line cost ~40 % more bytes for the same value)."""


def layered(value: Any, depth: int) -> str:
    """``value`` as UTF-8 JSON (``ensure_ascii=False``, keys in their order) whose objects and arrays are indented by
    one space per level down to ``depth`` levels and written compactly (``,`` and ``:`` without spaces) below: with
    ``depth`` 2 an envelope whose ``rows`` list holds one row per line. ``depth`` 0 is one compact line. The parsed
    value is ``value`` for every depth (issue 35: downloads ~30–40 % smaller than ``indent=1``, the same for
    consumers). No trailing newline."""
    def enc(v: Any, level: int) -> str:
        if level >= depth or not isinstance(v, (dict, list)) or not v:
            return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        pad, inner = " " * level, " " * (level + 1)
        if isinstance(v, dict):
            items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {enc(x, level + 1)}" for k, x in v.items()]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        return "[\n" + ",\n".join(f"{inner}{enc(x, level + 1)}" for x in v) + f"\n{pad}]"
    return enc(value, 0)


def dumps(doc: Ledger) -> str:
    """The document as published: UTF-8 JSON, newline at the end, indented :data:`LAYERS` levels deep (each row of a
    board on one line, :func:`layered`); a character a name may not hold is written as a ``\\uXXXX`` escape
    (:func:`mtboard.core.names.json_visible`: the same parsed value)."""
    return json_visible(layered(doc.model_dump(mode="json", by_alias=True), LAYERS)) + "\n"


__all__ = ["build_id", "git_commit", "to_document", "layered", "LAYERS", "dumps"]
