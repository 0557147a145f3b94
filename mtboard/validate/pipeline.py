"""One card through every check of :data:`~mtboard.validate.report.CARD_CHECKS`, in order.

A check whose inputs are broken is reported as ``skip`` with the reason: nothing past ``json`` runs on bytes that are
not strict JSON (only the raw-text ``secrets`` scan), nothing past ``schema`` on a card the schema rejects (the
``sovereignty`` and ``secrets`` scans of the parsed value still run), and the recomputation checks only run on a
card whose dataset and entries match a published corpus and whose harness version is supported.
"""

from __future__ import annotations

import os
from pathlib import Path

from mtboard.core import safejson
from mtboard.core.errors import InputError
from mtboard.core.schema import RunCard
from mtboard.validate.binding import check_dataset, check_entries, check_texts
from mtboard.validate.context import Context, cached_context
from mtboard.validate.hygiene import (check_secret_text, check_secrets_text, check_secrets_value,
                                      check_sovereignty_card, check_timestamps)
from mtboard.validate.naming import check_names
from mtboard.validate.neural import check_neural
from mtboard.validate.recompute import check_recomputation
from mtboard.validate.report import RECOMPUTED_CHECKS, CardReport, CardRun, error_text, rel_path, safe_name
from mtboard.validate.variants import check_variants
from mtboard.validate.submission import check_submission
from mtboard.validate.structure import (MAX_CARD_BYTES, check_coaching_file, check_fingerprint, check_file_name,
                                        check_harness, check_hash, check_method, check_path, parse_card,
                                        read_card_bytes)


def validate_bytes(raw: bytes, where: str, ctx: Context, *, relpath: str | None = None,
                   tier: str | None = None) -> CardReport:
    """Run every content check on card bytes already read safely.

    Args:
        raw: the file content.
        where: name used in problems (path relative to the root when known).
        ctx: corpora, secrets and clock.
        relpath: POSIX path relative to the repository root, for the ``file_name`` check (None: not a submission)
            and the ``submission`` check (verification records beside it, its gold card under ``official/``).
        tier: verification tier the ``submission`` check holds the card to (None: the tier its evidence claims,
            :func:`mtboard.validate.submission.claimed_tier`).
    """
    run = CardRun(where)
    run.done("file")
    if len(raw) > MAX_CARD_BYTES:
        run.fail("size", f"file is {len(raw)} bytes, over the {MAX_CARD_BYTES}-byte limit")
        return run.report(where, None)
    run.done("size")
    return _validate_content(run, raw, where, ctx, relpath, tier)


def validate_card(path: str | os.PathLike[str], ctx: Context | None = None, *,
                  corpora_dir: str | os.PathLike[str] | None = None, tier: str | None = None) -> CardReport:
    """Validate one card file. Never raises for problems in the file (they are in the report).

    Args:
        path: the card file.
        ctx: shared context; default: :func:`make_context` with the current folder as root.
        corpora_dir: used only when ``ctx`` is None.
        tier: as :func:`validate_bytes`.

    Returns: :class:`CardReport` (``.problems`` empty when the card passes every check).
    """
    if ctx is None:
        ctx = cached_context(str(Path(".").absolute()), str(corpora_dir) if corpora_dir else None)
    p = Path(path)
    where = safe_name(rel_path(p, ctx.root))
    run = CardRun(where)
    if check_path(run, p, ctx) is None:
        return run.report(where, None)
    raw = read_card_bytes(run, p)
    if raw is None:
        return run.report(where, None)
    relpath = None
    try:
        relpath = p.absolute().relative_to(ctx.root.absolute()).as_posix()
    except ValueError:
        pass
    return _validate_content(run, raw, where, ctx, relpath, tier)


def _gate(run: CardRun, card: RunCard | None, ctx: Context, relpath: str | None, tier: str | None) -> None:
    """The ``submission`` check, last (its ``run-card`` rule reads every other check's status)."""
    path = ctx.root / relpath if relpath else None
    run.gate = check_submission(run, card, ctx, folder=path.parent if path else None,
                                stem=path.name[: -len(".json")] if path and path.name.endswith(".json") else None,
                                tier=tier)


def _validate_content(run: CardRun, raw: bytes, where: str, ctx: Context, relpath: str | None,
                      tier: str | None = None) -> CardReport:
    # json ------------------------------------------------------------------------------------------------------
    try:
        data = safejson.loads(raw, where=where, max_bytes=MAX_CARD_BYTES)
    except InputError as exc:
        run.fail("json", error_text(exc), field=exc.field)
        check_secrets_text(run, raw)
        run.done("secrets")
        return run.report(where, None)
    run.done("json")

    # secrets + sovereignty on the raw value: they run whatever the schema says --------------------------------------
    check_secrets_value(run, data, raw.decode("utf-8"))
    check_secret_text(run, data, ctx)

    # schema ----------------------------------------------------------------------------------------------------
    card = parse_card(run, raw)
    if card is None:
        _gate(run, None, ctx, relpath, tier)
        return run.report(where, None)

    check_harness(run, card)
    check_file_name(run, card, relpath)
    check_names(run, card)
    check_hash(run, card, data)
    check_fingerprint(run, card)
    check_method(run, card)
    check_coaching_file(run, card, ctx.root)
    check_timestamps(run, card, ctx)
    check_sovereignty_card(run, card)
    known = check_dataset(run, card, ctx)
    entries = check_entries(run, card, known) if known else None
    if entries is None:
        run.skip_all(("entries", "texts", *RECOMPUTED_CHECKS, "variants"), "dataset not matched")
    else:
        check_texts(run, card, entries)
        if run.failed("harness_version"):
            run.skip_all(RECOMPUTED_CHECKS, "harness version not supported: recomputation would not be comparable")
        elif run.failed("entries"):
            run.skip_all(RECOMPUTED_CHECKS, "entries do not match the corpus")
        elif not ctx.recompute:
            run.skip_all(RECOMPUTED_CHECKS, "recomputation switched off")
        else:
            check_recomputation(run, card, entries)
        if run.failed("entries"):
            run.skip("variants", "entries do not match the corpus")
        else:
            check_variants(run, card, known)
    from mtboard.validate.judging import check_judges  # noqa: PLC0415 - imports every judge: only when a card is
    # validated, so that `mtboard run` without --judge never loads them (issue 35 item 4)

    check_judges(run, card, entries if entries else None)
    check_neural(run, card)
    run.done("sovereignty", "secrets")
    _gate(run, card, ctx, relpath, tier)
    return run.report(where, card)
