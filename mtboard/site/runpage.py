"""The run page as data (issue 12 item 7; design note "Run page"): fold, verification sentence and table, entry
groups, breakdowns, "beats the best baseline by X" (spec §6.3). The entries themselves are in the run's data file
(:mod:`mtboard.site.rundata`, issue 35 item 1): the page holds each group's header and ``groups`` lists its entry ids.

Entry groups: every development entry appears once, in its domain's closed ``<details>`` (anchor ``seg-<id>``);
"Failures" (no usable output / source untranslated, first :data:`OPEN_FAILURES`) and "Largest losses" (the
:data:`LOSSES` entries furthest below the field median of sentence chrF++ over real systems, baselines excluded)
repeat entries as links to those anchors. Diagnostic-segment entries are reported apart (their own group and
summary), never mixed into the development figures.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from typing import Any

from mtboard.score.metrics.chrf import chrf_from_stats
from mtboard.review.community import MIN_REVIEWED, gated_tier
from mtboard.core.schema import EntryResult, MethodClass, Outcome, RunCard, SemanticVerdict
from mtboard.core import fmt, names
from mtboard.ledger.load import LoadedCard
from mtboard.score.screen import SCREEN_POLICY
from mtboard.ledger.tables import (Leaderboard, failed, fingerprint_diff, format_attempt_rows, method_name,
                                   sentence_chrf)

OPEN_FAILURES = 10
LOSSES = 20
NO_DOMAIN = "no domain"


def _flags(r: EntryResult) -> list[str]:
    return sorted({f.rule for f in r.checks.flags})


SEMANTIC_TAGS = {"meaning-mismatch": "meaning mismatch", "hallucination": "hallucination"}
"""The semantic verdicts an entry can carry beside its mechanical outcome (issue 36 item 4; docs/SCORING_SPEC.md
§2.3: ``semantic_verdict`` MISMATCH, ``hallucination_detected``), as filter tokens → what the page says
(followed by "(semantic)")."""


def semantic_tags(r: EntryResult) -> list[str]:
    """The entry's :data:`SEMANTIC_TAGS` tokens: empty when the embeddings judged it VALID or did not run, and for a
    failed entry (no usable output, source untranslated: it scores 0 on every metric by policy, the semantic score
    too, so its verdicts would only repeat the failure and bury the usable outputs that lost their meaning)."""
    if failed(r):
        return []
    tags = ["meaning-mismatch"] if r.semantic_verdict == SemanticVerdict.MISMATCH else []
    return tags + (["hallucination"] if r.hallucination_detected else [])


def entry_filters(card: RunCard, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run page's entry filter (issue 36 item 4): ``[{"value", "label", "count"}, …]`` — "failed", every
    mechanical outcome of the policy (:class:`~mtboard.core.schema.Outcome`, present or not), every flag the run's
    entries carry, and both semantic verdicts when the run has semantic scores (a pair the embedding model does not
    cover has none); counts are of ``entries`` (the development entries the page lists)."""
    tokens = Counter(t for e in entries for t in e["filter"].split())
    flags = sorted(t for t in tokens if t.startswith("flag:"))
    out = [{"value": "failed", "label": "failed (no usable output or source untranslated)"}]
    out += [{"value": o.value, "label": o.value.replace("_", " ")} for o in Outcome]
    out += [{"value": f, "label": "flag: " + f[5:].replace("_", " ")} for f in flags]
    if any(r.semantic_verdict is not None for r in card.results):
        out += [{"value": t, "label": f"{label} (semantic)"} for t, label in SEMANTIC_TAGS.items()]
    return [{**o, "count": tokens.get(o["value"], 0)} for o in out]


def entry_row(r: EntryResult, field_median: float | None) -> dict[str, Any]:
    """One entry as the run page shows it (texts rendered escaped by the template)."""
    s = sentence_chrf(r)
    return {"id": r.entry_id, "domain": r.domain.value if r.domain else None, "source": r.source,
            "reference": r.expected, "output": r.predicted,
            "raw": r.raw_predicted if r.raw_predicted is not None and r.raw_predicted != r.predicted else None,
            "error": r.error, "outcome": r.checks.outcome.value, "flags": _flags(r), "failed": failed(r),
            "chrf": s, "field": field_median, "delta": None if field_median is None else s - field_median,
            "semantic": ", ".join(SEMANTIC_TAGS[t] for t in semantic_tags(r)),
            "filter": " ".join(["failed" if failed(r) else "ok", r.checks.outcome.value]
                               + [f"flag:{f}" for f in _flags(r)] + semantic_tags(r))}


def verification_view(lc: LoadedCard) -> dict[str, Any] | None:
    """The verification record as a sentence and a table (None without a record)."""
    rec = lc.verification.record
    if not rec:
        return None
    deltas = rec.get("deltas") or []
    same = sum(1 for d in deltas if d.get("delta") == 0)
    within = sum(1 for d in deltas if d.get("within"))
    commit = rec.get("card_commit")
    tol = rec.get("tolerance")
    sentence = (f"Re-run by the account “{rec.get('verified_by')}” (as its verification record names it) at commit "
                f"{commit[:12] if commit else '(not recorded)'} on "
                f"{str(rec.get('verified_at', ''))[:10]} with mtboard {rec.get('rerun_harness_version')}"
                f"{' (' + rec['environment'] + ')' if rec.get('environment') else ''}: "
                f"{same} of {len(deltas)} metrics identical"
                + (f", {within} of {len(deltas)} within ±{tol * 100:g}%" if tol is not None and within != same
                   else "") + ("." if rec.get("passed") else " — not reproduced."))
    table = [{"metric": d.get("metric"), "stored": d.get("stored"), "rerun": d.get("rerun"), "delta": d.get("delta"),
              "relative": d.get("relative"), "within": d.get("within")} for d in deltas]
    v = lc.verification
    if v.attested:
        attestation = (f"Attested by the verify workflow: run {rec.get('run_id')} attempt {rec.get('run_attempt')} of "
                       f"{rec.get('repository')} at harness commit {str(rec.get('workflow_commit'))[:12]} "
                       f"(GitHub artifact attestation, checked offline; `mtboard verify-record {v.source}`).")
    else:
        attestation = "Not attested: " + ("; ".join(v.attestation_problems) or "no attestation") + "."
    return {"sentence": sentence, "table": table, "passed": bool(rec.get("passed")), "source": lc.verification.source,
            "label": v.label, "attested": v.attested, "attestation": attestation,
            "rerun_hash": rec.get("rerun_run_card_hash"), "method": rec.get("method_spec")}


def neural_view(lc: LoadedCard) -> list[dict[str, Any]]:
    """The card's neural metrics (docs/neural_metrics.md) as rows: key, model, commit, score, n, signature and a
    status — ``verified`` when an accepted verification record (tier ``gds-verified``) re-scored the metric within
    tolerance, else ``claimed`` (PR validation checks their shape and arithmetic, never re-runs the model) — or
    ``unpinned`` when the model commit is not a revision this project pins (:func:`mtboard.validate.neural.unpinned`,
    issue 32): then the score is None and the page shows the claim without a number."""
    from mtboard.score.metrics.neural import MODELS
    from mtboard.validate.neural import unpinned

    rec = lc.verification.record or {}
    # the card's own record only: a record inherited through a re-score (``via``) re-ran another card's neural scores
    confirmed = {d.get("metric") for d in rec.get("deltas") or [] if d.get("within")} \
        if lc.verification.tier == "gds-verified" and lc.verification.via is None else set()
    loose = unpinned(lc.card)
    return [{"key": key, "label": MODELS[key].label if key in MODELS else key, "model": m.model,
             "commit": m.commit[:12], "score": None if key in loose else m.score, "n": m.n, "signature": m.signature,
             "status": "unpinned" if key in loose else "verified" if f"neural_metrics.{key}" in confirmed
             else "claimed"}
            for key, m in sorted(lc.card.neural_metrics.items())]


REVIEW_PAGE = "review.md"
"""The one review page (issue 35: one page reading the run from ``?run=<page id>`` instead of one page per run)."""
REVIEW_STUB = "review/{id}.html"
"""Where each run's review page was before issue 35: a small redirect to ``review.html?run=<page id>``
(:func:`review_stub`), so old links keep working."""


def review_page(lc: LoadedCard) -> str | None:
    """The run's review link relative to the site root, ``review.html?run=<page id>`` (spec §7.3; the page reads
    the sample from the run's data file, :func:`mtboard.site.rundata.review_data`); None for reference baselines
    (nobody reviews an echo)."""
    return None if lc.card.method_class == MethodClass.baseline else f"review.html?run={lc.page_id}"


def review_stub(page_id: str) -> str:
    """The redirect left at ``review/<page id>.html`` (issue 35): a 16-hex page id only (no contributor text), about
    400 bytes of HTML that sends the visitor to ``../review.html?run=<page id>`` (script, then ``<meta refresh>``,
    then a plain link), keeping any ``#fragment``."""
    if not re.fullmatch(r"[0-9a-f]{16}", page_id):
        raise ValueError(f"not a page id: {page_id!r}")
    url = f"../review.html?run={page_id}"
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Review run ' + page_id[:8]
            + '</title><meta name="robots" content="noindex"><meta http-equiv="refresh" content="0; url=' + url
            + '"><script>location.replace("' + url + '"+location.hash)</script></head>\n<body><p>This review page moved: '
            '<a href="' + url + '">review run ' + page_id[:8] + '</a>.</p></body></html>\n')


def review_view(lc: LoadedCard) -> dict[str, Any]:
    """The community review of the run (spec §7.2–7.3) for the run page: the gated tier label, the pooled counts and
    shares, pairwise agreement, and the review page's path."""
    label, provisional = gated_tier(lc.card.scores.quality_tier, lc.review)
    s = lc.review
    return {"label": label, "provisional": provisional, "summary": s, "page": review_page(lc),
            "min_reviewed": MIN_REVIEWED,
            "counts": list(s.counts.items()) if s else [],
            "agreement": [{"a": a.a, "b": a.b, "n": a.n, "exact": a.exact, "within_one": a.within_one,
                           "kappa": a.kappa} for a in s.agreement] if s else []}


def details_data(lc: LoadedCard, score_pairs: list[tuple[str, Any]], method_pairs: list[tuple[str, Any]],
                 judge_sigs: list[tuple[str, str]] = (), near: RunCard | None = None) -> dict[str, Any]:
    """The run page's "Details" tables as data for the run's data file (issue 35: ~11 KB of HTML per run page;
    ``rundata.js`` builds the tables when the page opens, the page keeps their headings, the fingerprint hash and the
    closest run's link, and links the card). Keys:

    * ``identity`` (run id, run card hash, file, entries, errors, then ``score_pairs``) and ``method``
      (``method_pairs``): lists of ``[label, value]``;
    * ``components`` (the fingerprint's components, value as JSON text), ``closest`` (the components that differ
      from ``near``, the closest run of the same model, as ``[component, this run, other run]``; absent without one)
      and ``signatures`` (chrF++, BLEU, TER, composite when set, mechanical policy, then ``judge_sigs``): each
      ``{"head": column labels or null, "rows": [[label, value, …], …], "code": values in <code>, "cls": row
      class or null}``.

    A value is None (shown as a dash) or a string, every refused character replaced by its visible marker
    (:func:`mtboard.core.names.mark`); numbers and booleans as their Python text (``0.0``, ``False``), as the
    server-rendered tables showed them."""
    def cell(v: Any) -> str | None:
        return None if v is None else names.mark(v) if isinstance(v, str) else str(v)

    def js(v: Any) -> str:
        return names.mark(json.dumps(v, ensure_ascii=False, sort_keys=True))

    card = lc.card
    ident = [("run id", card.run_id), ("run card hash", card.run_card_hash or "(unsealed)"), ("file", lc.path),
             ("entries", len(card.results)), ("errors", card.scores.errors), *score_pairs]
    sig = card.scores.signatures
    sigs = [("chrF++", sig.chrf), ("BLEU", sig.bleu), ("TER", sig.ter)] + (
        [("composite", sig.composite)] if sig.composite else []) + (
        [("morphological accuracy (against Apertium machine analyses, not gold)", sig.morphology)]
        if sig.morphology else []) + [
        ("mechanical policy", card.scores.policy_version), *judge_sigs]
    out: dict[str, Any] = {
        "identity": [[names.mark(str(k)), cell(v)] for k, v in ident],
        "method": [[names.mark(str(k)), cell(v)] for k, v in method_pairs],
        "components": {"head": ["Component", "Value"], "code": True, "cls": None,
                       "rows": [[k, js(v)] for k, v in sorted(card.fingerprint.components.items())]},
        "signatures": {"head": None, "code": False, "cls": None, "rows": [[k, cell(v)] for k, v in sigs]}}
    if near is not None:
        out["closest"] = {"head": ["Component", "This run", "Other run"], "code": True, "cls": "diff",
                          "rows": [[k, js(a), js(b)] for k, a, b, d in fingerprint_diff(card, near) if d]}
    return out


def best_baseline(lc: LoadedCard, lb: Leaderboard) -> dict[str, Any] | None:
    """spec §6.3: how far the run's composite is above (or below) the best reference baseline (method class
    ``baseline``) ranked on the same board. None for baselines themselves or boards without one."""
    if lc.card.method_class == MethodClass.baseline:
        return None
    rows = lb.views[0].rows if lb.views else []
    base = [r for r in rows if r.reference and r.composite is not None]
    mine = next((r for r in rows if r.lc is lc), None)
    if not base or mine is None or mine.composite is None:
        return None
    best = max(base, key=lambda r: (r.composite, r.lc.page_id))
    return {"by": mine.composite - best.composite, "name": method_name(best.lc.card), "composite": best.composite,
            "lc": best.lc}


def _segment_summary(results: list[EntryResult]) -> dict[str, Any]:
    """n, failures, corpus chrF++ (summed statistics) and exact matches of a segment reported apart."""
    return {"n": len(results), "failed": sum(failed(r) for r in results),
            "chrf": chrf_from_stats([r.stats.chrf for r in results]) if results else None,
            "exact": sum(r.exact_match for r in results)}


def context(lc: LoadedCard, lb: Leaderboard, compare_next: str | None, compare_label: str | None) -> dict[str, Any]:
    """Everything the run page template shows besides the card itself."""
    card = lc.card
    row = next((r for r in lb.views[0].rows if r.lc is lc), None) if lb.views else None
    dev = [r for r in card.results if r.segment == "development"]
    diag = [r for r in card.results if r.segment == "diagnostic"]
    other = len(card.results) - len(dev) - len(diag)
    entries = [entry_row(r, lb.field_entry_median.get(r.entry_id)) for r in dev]
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entries:
        by_domain[e["domain"] or NO_DOMAIN].append(e)
    fails = [e for e in entries if e["failed"]]
    losses = sorted((e for e in entries if e["delta"] is not None and e["delta"] < 0),
                    key=lambda e: (e["delta"], e["id"]))[:LOSSES]
    outcomes = Counter(e["outcome"] for e in entries)
    filters = entry_filters(card, entries)
    groups = {"failures": [e["id"] for e in fails[:OPEN_FAILURES]], "losses": [e["id"] for e in losses],
              **{f"dom:{d}": [e["id"] for e in rows] for d, rows in by_domain.items()},
              "diagnostic": [r.entry_id for r in diag]}
    return {
        "row": row, "rank": row.rank if row else None,
        "composite_ci": row.cells["composite_ci"].text if row else fmt.DASH,
        "verification": verification_view(lc), "baseline": best_baseline(lc, lb), "neural": neural_view(lc),
        "review": review_view(lc),
        "variants": lb.variants.get(lc.path),  # the ledger's variant-class lint of this card (issue 39 item 2)
        "context_slices": lb.context_slices.get(lc.path),  # the ledger's context-behaviour slices (issue 40 item 3)
        "screen": lb.screen.get(lc.path),  # the ledger's screen-ready score of this card (issue 40 item 5)
        "screen_policy": SCREEN_POLICY,
        "entries": entries, "domains": sorted(by_domain.items()), "failures": fails, "losses": losses,
        "open_failures": OPEN_FAILURES, "outcomes": sorted(outcomes.items()), "filters": filters,
        "diagnostic": [entry_row(r, None) for r in diag], "diagnostic_summary": _segment_summary(diag) if diag else None,
        "other_segments": other, "groups": {k: v for k, v in sorted(groups.items()) if v},
        "compare_next": compare_next, "compare_label": compare_label,
        "format_attempts": next((v for label, v, _ in format_attempt_rows(card) if label == "format attempts"),
                                None),  # issue 39: the extra attempts and their penalty, beside the composite
        "by_difficulty": sorted(card.scores.by_difficulty.items(), key=lambda kv: (len(kv[0]), kv[0])),
        "by_provenance": sorted(card.scores.by_provenance.items()),
        "domain_scores": dict(card.scores.by_domain),
    }
