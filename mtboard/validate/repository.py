"""Many files and the repository: ``mtboard validate`` over ``submissions/`` (spec §9.1, §9.4).

Repository-level checks: ``scope`` (a pull request may only add or modify files under ``submissions/`` and, issue 37,
add or modify ``models/<slug>.yaml`` and add ``contamination/<name>.yaml``, which ``mtboard models check`` validates;
changing a filed claim is a maintainer's decision),
``duplicates`` (one card per run_card_hash / run_id), ``copies`` (no card's outputs are another model's relabelled:
:mod:`mtboard.validate.copies`), ``verification`` (records beside cards name the card they verify), ``sovereignty``
(corpora/ holds no secret segment; no secret text in any file under ``submissions/`` or ``corpora/``), ``reviews``
(review records under ``reviews/``, spec §7.3: :mod:`mtboard.validate.reviews`; contributors may add or modify
``reviews/<dataset>/<run>.yaml``, the reviewers list is maintainer-only), ``floors`` (issue 38: a submitted card that
is not a baseline must score significantly above the ``copy-source`` and ``shuffled`` sentinels of its corpus on its
whole development view: :func:`check_floors`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from mtboard import __version__
from mtboard.core import safejson
from mtboard.core.documents import load_card, validate_model
from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema import SECRET_SEGMENTS, MethodClass, RunCard, VerificationRecord
from mtboard.core.schema.model import MODEL_SLUG_RE
from mtboard.inputs.models import CONTAMINATION_DIR, MODELS_DIR
from mtboard.validate.bounds import date_problem
from mtboard.validate.context import Context
from mtboard.validate.copies import OutputsOf, find_copies, outputs_of
from mtboard.validate.hygiene import secret_text_hits
from mtboard.validate.naming import DATASET_DIR_RE, NAME_RE, SUBMISSIONS_DIR, VERIFICATION_SUFFIX
from mtboard.validate.pipeline import validate_card
from mtboard.validate.report import CardReport, Problem, ValidationReport, rel_path, safe_name
from mtboard.review.community import REVIEWERS_FILE, REVIEWS_DIR
from mtboard.score import sentinels as sent

MAX_SCAN_BYTES = 64 * 1024 * 1024
"""Largest file the repository-wide sovereignty scan reads."""
MAX_RECORD_BYTES = 4 * 1024 * 1024
"""Largest verification record read."""


def iter_card_paths(paths: Iterable[Path]) -> Iterator[Path]:
    """Expand folders into their ``*.json`` files (sorted, not following links; hidden files skipped)."""
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            for dirpath, dirnames, filenames in os.walk(p, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for d in list(dirnames):  # a linked folder is not walked: report it (the file check refuses it)
                    if os.path.islink(os.path.join(dirpath, d)):
                        dirnames.remove(d)
                        yield Path(dirpath) / d
                for name in sorted(filenames):
                    if name.endswith(".json") and not name.startswith("."):
                        yield Path(dirpath) / name
        else:
            yield p


# --------------------------------------------------------------------------------------------------------------------
# Pull-request scope


def parse_changes(raw: bytes) -> list[tuple[str, str]]:
    """Parse ``git diff --no-renames --name-status -z`` output into (status letter, path) pairs.

    Raises: InputError when the list is malformed.
    """
    parts = raw.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    if len(parts) % 2:
        raise InputError("change list is malformed (expected status/path pairs from git diff --name-status -z)")
    out = []
    for status, path in zip(parts[::2], parts[1::2]):
        try:
            out.append((status.decode("ascii")[:1], path.decode("utf-8", "surrogateescape")))
        except UnicodeDecodeError:
            raise InputError("change list has a non-ASCII status") from None
    return out


def _maintainer_only(status: str, path: str) -> str | None:
    """Why only a maintainer may make this change (None: a contributor may)."""
    parts = path.split("/")
    if parts[0] == REVIEWS_DIR and status in ("A", "M") and len(parts) == 3 and parts[2] != REVIEWERS_FILE:
        return None  # a review record (spec §7.3): checked by the ``reviews`` repository check
    if parts[0] == CONTAMINATION_DIR and status == "M" and len(parts) == 2:
        # a filed claim's status (open → confirmed/rejected) and evidence are a maintainer's decision: a contributor
        # who disagrees files a new claim (issue 37)
        return ("pull request changes a filed contamination claim; only maintainers decide a claim (label "
                "`maintainer-change`); file a new claim under contamination/ instead")
    if parts[0] in (MODELS_DIR, CONTAMINATION_DIR) and status in ("A", "M") and len(parts) == 2:
        return None  # a model record or contamination claim (issue 37): checked by `mtboard models check`
    if not (len(parts) >= 2 and parts[0] == SUBMISSIONS_DIR):
        return "pull request changes a file outside submissions/; only maintainers may (label `maintainer-change`)"
    if status in ("D", "T"):
        what = "deletes" if status == "D" else "changes the type of"
        return f"pull request {what} a submission; only maintainers may (label `maintainer-change`)"
    if path.endswith((VERIFICATION_SUFFIX, VERIFICATION_SUFFIX + ".sigstore")):  # a record or its attestation
        return ("verification records are added by maintainers only (label `maintainer-change`); contributors "
                "submit cards")
    return None


def check_scope(changes: list[tuple[str, str]], *, allow_outside: bool) -> tuple[list[Problem], list[str]]:
    """The pull-request gate: only additions/modifications of ``submissions/<dataset>/<name>.json`` are allowed.

    Returns: (problems, submission paths to validate). With ``allow_outside`` (the maintainer label) files outside
    ``submissions/``, deletions and verification records are accepted, but every added/modified submission is still
    validated.
    """
    problems: list[Problem] = []
    todo: list[str] = []
    for status, path in changes:
        refusal = _maintainer_only(status, path)
        if refusal is not None:
            if not allow_outside:
                problems.append(Problem(check="scope", where=safe_name(path), message=refusal))
            continue
        parts = path.split("/")
        if parts[0] in (MODELS_DIR, CONTAMINATION_DIR):
            if not (parts[1].endswith(".yaml") and re.fullmatch(MODEL_SLUG_RE, parts[1][:-5])):
                problems.append(Problem(check="scope", where=safe_name(path),
                                        message=f"{parts[0]}/ holds only {parts[0]}/<name>.yaml files (lowercase "
                                                "letters, digits, '.', '_', '-'; issue 37)"))
            continue
        if parts[0] == REVIEWS_DIR:
            if not (DATASET_DIR_RE.match(parts[1]) and parts[2].endswith(".yaml")
                    and NAME_RE.match(parts[2][:-5] + ".json")):
                problems.append(Problem(check="scope", where=safe_name(path),
                                        message="reviews hold only reviews/<dataset id>/<card file stem>.yaml files "
                                                "(allow-listed characters)"))
            continue
        if len(parts) != 3 or not DATASET_DIR_RE.match(parts[1]) or not NAME_RE.match(parts[2]):
            problems.append(Problem(check="scope", where=safe_name(path),
                                    message="submissions hold only submissions/<dataset id>/<model-slug>__<condition>"
                                            "__<12 hex>.json files (allow-listed characters)"))
            continue
        todo.append(path)
    return problems, todo


# --------------------------------------------------------------------------------------------------------------------
# duplicates, verification, sovereignty over the tree


def _duplicates(reports: list[CardReport]) -> list[Problem]:
    """One card per run: the second card with an already seen run_card_hash (then run_id) is a problem."""
    problems: list[Problem] = []
    for attr in ("run_card_hash", "run_id"):
        first: dict[str, str] = {}
        for r in reports:
            v = getattr(r, attr)
            if not v:
                continue
            if v in first:
                problems.append(Problem(check="duplicates", where=r.path,
                                        message=f"same {attr} as {first[v]}; one card per run"))
            else:
                first[v] = r.path
    return problems


def validate_record(path: Path, ctx: Context, cards_by_hash: dict[str, str],
                    descendants: dict[str, list[str]] | None = None) -> list[Problem]:
    """A verification record must parse strictly, be dated no later than the validation time (+ the clock skew), and
    name a card present beside it (same folder, same stem), or a card that a card beside it was re-scored from
    (``descendants``: ancestor ``run_card_hash`` → paths of the cards whose ``rescored_from`` names it; issue 31: a
    re-scored card is filed in place of the old one and the record stays where it was, named after the card it
    verified)."""
    where = safe_name(rel_path(path, ctx.root))
    try:
        raw = safejson.read_bytes(path, max_bytes=MAX_RECORD_BYTES)
        safejson.loads(raw, where=where)  # strict JSON first (duplicate keys, NaN, depth), then the schema
        rec = validate_model(VerificationRecord, raw, where)
    except InputError as exc:
        return [Problem(check="verification", where=where, field=exc.field, message=exc.problem)]
    problems: list[Problem] = []
    for name in ("verified_at", "started_at"):  # issue 32 item 3: no date in the future
        value = getattr(rec, name)
        late = date_problem(value, f"$.{name}", ctx.clock()) if value is not None else None
        if late:
            problems.append(Problem(check="verification", where=where, field=f"$.{name}", message=late))
    card_name = path.name[: -len(VERIFICATION_SUFFIX)] + ".json"
    card_rel = cards_by_hash.get(rec.run_card_hash)
    beside = card_rel is not None and Path(card_rel).name == card_name
    if not beside and card_rel is None:
        beside = any(Path(d).parent == Path(where).parent
                     and card_name.endswith(f"__{rec.run_card_hash[:12]}.json")
                     and Path(d).name.rsplit("__", 1)[0] == card_name.rsplit("__", 1)[0]
                     for d in (descendants or {}).get(rec.run_card_hash, []))
    if not beside:
        problems.append(Problem(check="verification", where=where, field="$.run_card_hash",
                                message=f"record does not verify the card beside it ({card_name})"))
    return problems


def _secret_hits(data: object, where: str, ctx: Context) -> list[Problem]:
    return [Problem(check="sovereignty", where=where, field=field,
                    message=f"contains text of a secret-segment entry ({hit}; source: {ctx.secret_source})")
            for field, hit in secret_text_hits(data, ctx)]


def _scan_tree_for_secrets(ctx: Context) -> list[Problem]:
    """Repository-wide sovereignty gate: corpora hold no secret segment; no file holds secret text."""
    problems: list[Problem] = []
    secret_segments = {s.value for s in SECRET_SEGMENTS}
    corpora_root = ctx.root / "corpora"
    for p in iter_card_paths([corpora_root]) if corpora_root.is_dir() else []:
        where = safe_name(rel_path(p, ctx.root))
        try:
            data = safejson.load_file(p, max_bytes=MAX_SCAN_BYTES)
        except InputError as exc:
            problems.append(Problem(check="sovereignty", where=where, message=f"unreadable: {exc.problem}"))
            continue
        entries = data.get("entries") if isinstance(data, dict) else None
        if isinstance(entries, list):
            for i, e in enumerate(entries):
                if isinstance(e, dict) and e.get("segment") in secret_segments:
                    problems.append(Problem(check="sovereignty", where=where, field=f"$.entries[{i}].segment",
                                            message="secret-segment entry in a public corpus file (spec §8: "
                                                    "gold_standard/held_out stay off the repository)"))
        problems.extend(_secret_hits(data, where, ctx))
    if ctx.secret_strings:
        sub = ctx.root / SUBMISSIONS_DIR
        for p in iter_card_paths([sub]) if sub.is_dir() else []:
            where = safe_name(rel_path(p, ctx.root))
            try:
                data = safejson.load_file(p, max_bytes=MAX_SCAN_BYTES)
            except InputError:
                continue  # reported by the per-card checks
            problems.extend(_secret_hits(data, where, ctx))
    return problems


def _outputs(paths: Iterable[Path], ctx: Context) -> dict[str, OutputsOf]:
    out: dict[str, OutputsOf] = {}
    for p in paths:
        if p.name.endswith(VERIFICATION_SUFFIX) or p.is_symlink() or not p.is_file():
            continue
        where = safe_name(rel_path(p, ctx.root))
        try:
            out[where] = outputs_of(where, load_card(p))
        except MtboardError:
            continue  # unreadable cards are reported by their own checks
    return out


def check_copies(validated: list[Path], ctx: Context) -> list[Problem]:
    """``copies``: the validated cards against each other and against every card under ``submissions/``."""
    targets = _outputs(validated, ctx)
    sub = ctx.root / SUBMISSIONS_DIR
    others = _outputs([p for p in iter_card_paths([sub]) if safe_name(rel_path(p, ctx.root)) not in targets]
                      if sub.is_dir() else [], ctx)
    return find_copies([*targets.values(), *others.values()], set(targets))


def floor_problem(card: RunCard, where: str, ctx: Context) -> Problem | None:
    """``floors``: the card (not a baseline; a development-segment card of a known corpus covering the whole
    segment — a ``--limit`` run is skipped: it is not ranked while whole runs exist) against its corpus's floor
    sentinels (:data:`mtboard.score.sentinels.FLOORS`) on its whole development view — the card's entries, resampled
    with the board's shared draws (:func:`mtboard.score.sentinels.view_counts`), its composite (the replicate mean
    with ``--runs N``) and resampled composite as the ledger computes them. A problem naming the first floor the card
    is inside (:func:`mtboard.score.sentinels.inside_floor`), with both composites and the p-value; None otherwise."""
    d = card.dataset
    if card.method_class == MethodClass.baseline or d.segment.value != "development":
        return None
    known = next((k for k in ctx.corpora() if (k.corpus.dataset.id, k.corpus.dataset.version, k.sha256)
                  == (d.id, d.version, d.sha256)), None)
    if known is None:
        return None  # the dataset check reports an unknown corpus
    ids = [r.entry_id for r in card.results]
    if len(set(ids)) < sum(1 for e in known.corpus.entries if e.segment == d.segment):
        # a subset (--limit) run: never ranked while runs of the whole segment exist, so it has no rank cluster to
        # be refused for here; on a board of subsets only, the ledger marks a ranked row inside a floor's cluster
        return None
    found = {s.name: s for s in sent.floors(known.corpus, known.sha256, "development")}
    counts = sent.view_counts(d.id, d.version, d.sha256, len(ids))
    runs = [list(card.results)] + [list(rr.results) for rr in card.replicate_runs]
    has_equiv, has_fst = card.scores.equivalent_match_rate is not None, card.scores.fst_acceptance_rate is not None
    rep = card.scores.replicates
    composite = rep.composite_mean if rep is not None else card.scores.composite
    try:
        boot = sent.resampled_composite(runs, ids, counts, has_equiv=has_equiv, has_fst=has_fst)
    except KeyError:
        return None  # replicate runs over other entries: the results checks report it
    for name in sent.FLOORS:
        s = found.get(name)
        if s is None or composite is None:
            continue
        ones = np.ones((1, len(ids)), dtype=np.float64)
        s_has_equiv, s_has_fst = s.scores.equivalent_match_rate is not None, s.scores.fst_acceptance_rate is not None
        s_boot = sent.resampled_composite([s.results], ids, counts, has_equiv=s_has_equiv, has_fst=s_has_fst)
        s_comp = s.scores.composite if len(ids) == len(s.results) else \
            float(sent.resampled_composite([s.results], ids, ones, has_equiv=s_has_equiv, has_fst=s_has_fst)[0])
        p = sent.inside_floor(composite, boot, s_comp, s_boot)
        if p is not None:
            return Problem(check="floors", where=where, field="$.scores.composite",
                           message=f"inside the {name} sentinel's rank cluster on the development view: composite "
                                   f"{composite:.3f} vs the {name} sentinel's {s_comp:.3f}, paired bootstrap p = "
                                   f"{p:.3f} (≥ 0.05; a system must score significantly above {sent.LABELS[name]}: improve the "
                                   f"method, or run it on more entries if it is close)")
    return None


def check_floors(validated: list[Path], ctx: Context) -> list[Problem]:
    """``floors`` for every card in ``validated`` that passed its own checks (:func:`floor_problem`)."""
    problems = []
    for p in validated:
        where = safe_name(rel_path(p, ctx.root))
        try:
            card = load_card(p)
        except MtboardError:
            continue  # reported by the card's own checks
        found = floor_problem(card, where, ctx)
        if found is not None:
            problems.append(found)
    return problems


def check_reviews(ctx: Context) -> list[Problem]:
    """``reviews``: the reviewers file and every review record under ``reviews/`` (:mod:`mtboard.validate.reviews`;
    their per-record checks reported here as one repository check)."""
    from mtboard.validate.reviews import reviewers_problems, validate_reviews  # noqa: PLC0415

    problems = reviewers_problems(ctx.root)
    for rep in validate_reviews(ctx.root):
        problems.extend(Problem(check="reviews", where=p.where, field=p.field, message=f"{p.check}: {p.message}")
                        for p in rep.problems)
    return problems


# --------------------------------------------------------------------------------------------------------------------
# Everything


def validate_paths(paths: list[str | os.PathLike[str]] | None, ctx: Context, *,
                   changes: list[tuple[str, str]] | None = None, allow_outside: bool = False,
                   repository_checks: bool = True, tier: str | None = None) -> ValidationReport:
    """Validate many files and the repository.

    Args:
        paths: files or folders; None/empty means ``<root>/submissions`` (or, with ``changes``, the changed
            submissions).
        ctx: :func:`make_context`.
        changes: (status, path) pairs from :func:`parse_changes` — the pull-request scope gate.
        allow_outside: the maintainer label is present.
        repository_checks: run duplicates / verification / sovereignty over the whole tree.
        tier: verification tier every card's ``submission`` check holds it to (None: the tier each card's evidence
            claims; :mod:`mtboard.validate.submission`).

    Returns: :class:`ValidationReport`; ``ok`` is False when any problem was found.
    """
    repo: list[Problem] = []
    todo: list[Path] = []
    if changes is not None:
        scope_problems, changed = check_scope(changes, allow_outside=allow_outside)
        repo.extend(scope_problems)
        todo.extend(ctx.root / c for c in changed)
    if paths:
        todo.extend(Path(p) for p in paths)
    elif changes is None:
        sub = ctx.root / SUBMISSIONS_DIR
        todo.extend([sub] if sub.is_dir() else [])
    reports: list[CardReport] = []
    card_paths: list[Path] = []
    records: list[Path] = []
    seen: set[str] = set()
    for p in iter_card_paths(todo):
        key = os.path.abspath(p)
        if key in seen:
            continue
        seen.add(key)
        if p.name.endswith(VERIFICATION_SUFFIX):
            records.append(p)
            continue
        reports.append(validate_card(p, ctx, tier=tier))
        card_paths.append(p)
    if changes is None and not reports:
        given = ", ".join(safe_name(str(p)) for p in todo) or f"{SUBMISSIONS_DIR}/ (missing)"
        repo.append(Problem(check="files", where="<repository>",
                            message=f"no run card to validate in {given}: nothing validated is a failure "
                                    "(pass card files or folders that hold some)"))
    repo.extend(ctx.corpus_problems())
    if repository_checks:
        repo.extend(_duplicates(reports))
        repo.extend(check_copies(card_paths, ctx))
        repo.extend(check_floors([p for p, r in zip(card_paths, reports, strict=True) if r.ok], ctx))
        cards_by_hash = {r.run_card_hash: r.path for r in reports if r.run_card_hash and r.ok}
        descendants: dict[str, list[str]] = {}
        for r in reports:
            for ancestor in r.rescored_from if r.ok else []:
                descendants.setdefault(ancestor, []).append(r.path)
        for rec in records:
            repo.extend(validate_record(rec, ctx, cards_by_hash, descendants))
        repo.extend(_scan_tree_for_secrets(ctx))
        repo.extend(check_reviews(ctx))
    ok = not repo and all(r.ok for r in reports)
    return ValidationReport(validator_version=__version__, files=reports, repository=repo, ok=ok)
