"""Dataset binding checks: ``dataset``, ``entries``, ``texts`` (spec §3.8, §9.2).

A card must evaluate a published corpus (id + version + file SHA-256 + language pair), exactly its segment's entries
in corpus order (or the first ``method.limit``), with each result's texts and labels equal to the corpus entry's.
"""

from __future__ import annotations

from mtboard.core.canonical import CHECKOUT_FIX, line_end_mismatch
from mtboard.core.errors import ConfigError
from mtboard.core.schema import Corpus, Entry, RunCard
from mtboard.inputs.corpora.arms import arm_view
from mtboard.validate.context import Context, KnownCorpus
from mtboard.validate.report import CardRun, rel_path


def check_dataset(run: CardRun, card: RunCard, ctx: Context) -> KnownCorpus | None:
    """``dataset``: the corpus file in ``ctx.corpora_dir`` the card names, or None after reporting why none."""
    d = card.dataset
    corpora = ctx.corpora()
    same_id = [k for k in corpora if k.corpus.dataset.id == d.id]
    if not same_id:
        if not ctx.corpora_dir.is_dir():  # run outside a checkout: say so, not "known: none"
            run.fail("dataset", f"no corpora folder at {ctx.corpora_dir.absolute()} (not an mtboard checkout?) to find "
                                f"corpus {d.id!r} in; fix: run "
                                "from the root of an mtboard checkout, or pass --corpora DIR (the folder with the "
                                "published corpus files) or --root DIR", "$.dataset.id")
            return None
        known = sorted({k.corpus.dataset.id for k in corpora})
        shown = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        run.fail("dataset", f"no corpus with this dataset id in {ctx.corpora_dir.name}/ (known: {shown or 'none'}); "
                            "cards must evaluate a published corpus (fix: pass --corpora DIR when its file is "
                            "elsewhere)", "$.dataset.id")
        return None
    same_version = [k for k in same_id if k.corpus.dataset.version == d.version]
    if not same_version:
        have = ", ".join(sorted(k.corpus.dataset.version for k in same_id))
        run.fail("dataset", f"dataset version {d.version} is not published (have: {have})", "$.dataset.version")
        return None
    match = [k for k in same_version if k.sha256 == d.sha256]
    if not match:
        why = next((w for k in same_version
                    if (w := line_end_mismatch(k.path.read_bytes(), d.sha256, rel_path(k.path, ctx.root)))), None)
        if why:
            run.fail("dataset", f"dataset.sha256 does not match: {why}; fix: {CHECKOUT_FIX}", "$.dataset.sha256")
        else:
            run.fail("dataset", "dataset.sha256 does not match the published corpus file with this id and version",
                     "$.dataset.sha256")
        return None
    k = match[0]
    info = k.corpus.dataset
    for name in ("language_pair", "source_language", "target_language"):
        if getattr(d, name) != getattr(info, name):
            run.fail("dataset", f"{name} differs from the corpus envelope", f"$.dataset.{name}")
    run.done("dataset")
    return k


def expected_entries(card: RunCard, corpus: Corpus) -> list[Entry]:
    """The entries a card must have evaluated: its segment in corpus order, seen through the card's
    ``method.arm``/``method.history`` (:func:`mtboard.inputs.corpora.arms.arm_view`, the runner's function: lines or
    scene items, history cut), cut to ``method.limit`` when set. A view that cannot apply to the corpus (a scene arm
    on a corpus without scene ids) gives no entries (the ``entries`` check then fails)."""
    seg = corpus.segment(card.dataset.segment)
    try:
        seg = arm_view(seg, card.method.arm, card.method.history)
    except ConfigError:
        return []
    if card.method.limit is not None:
        seg = seg[: card.method.limit]
    return seg


def check_entries(run: CardRun, card: RunCard, known: KnownCorpus) -> list[Entry]:
    """``entries``: result ids equal the expected entries, in order.

    Returns: the expected entries when the check passed; otherwise the corpus entries the results name (in result
    order; empty when some id is not in the corpus), so ``texts`` can still compare what it can.
    """
    expected = expected_entries(card, known.corpus)
    got = [r.entry_id for r in card.results]
    want = [e.id for e in expected]
    if card.method.limit is not None and card.method.limit < 1:
        run.fail("entries", "method.limit must be at least 1", "$.method.limit")
    if card.dataset.entry_count != len(want):
        run.fail("entries", f"dataset.entry_count {card.dataset.entry_count} != {len(want)} entries in the "
                            f"{card.dataset.segment.value} segment"
                            + (f" (first {card.method.limit})" if card.method.limit is not None else ""),
                 "$.dataset.entry_count")
    if got != want:
        got_set, want_set = set(got), set(want)
        if len(got) != len(got_set):
            run.fail("entries", "results repeat an entry id", "$.results")
        missing = sorted(want_set - got_set)
        extra = sorted(got_set - want_set)
        if missing:
            run.fail("entries", f"{len(missing)} entries of the segment have no result (first id {missing[0]})",
                     "$.results")
        if extra:
            run.fail("entries", f"{len(extra)} results are not entries of the segment (first id {extra[0]})",
                     "$.results")
        if not missing and not extra and len(got) == len(got_set):
            run.fail("entries", "results are not in corpus order", "$.results")
    run.done("entries")
    if run.failed("entries"):
        by_id = {e.id: e for e in known.corpus.entries}
        return [by_id[i] for i in got if i in by_id] if set(got) <= set(by_id) else []
    return expected


_BOUND_FIELDS = (("source", "source"), ("expected", "reference"), ("segment", "segment"),
                 ("difficulty", "difficulty"), ("domain", "domain"), ("provenance", "provenance"))
"""(result field, corpus entry field) pairs that must be equal."""


def check_texts(run: CardRun, card: RunCard, entries: list[Entry]) -> None:
    """``texts``: each result's source/reference/segment/difficulty/domain/provenance equal the corpus entry's."""
    by_id = {e.id: e for e in entries}
    for i, r in enumerate(card.results):
        e = by_id.get(r.entry_id)
        if e is None:
            continue
        for mine, theirs in _BOUND_FIELDS:
            if getattr(r, mine) != getattr(e, theirs):
                run.fail("texts", f"differs from the corpus {theirs} of entry {e.id}", f"$.results[{i}].{mine}")
    run.done("texts")
