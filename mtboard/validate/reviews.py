"""Review records through named checks (spec §7.3; issue 18): ``reviews/<dataset>/<run>.yaml``.

Submissions are untrusted: a record is read with the safe YAML loader (size, alias-expansion and duplicate-key limits,
symlinks refused) and the strict schema before anything looks at it. Checks, in order (a check whose inputs are
broken is skipped with the reason, as :mod:`mtboard.validate.pipeline` does for cards):

``file``       a regular file at ``reviews/<dataset>/<run>.yaml`` (allow-listed characters)
``yaml``       safe YAML within :data:`mtboard.review.community.MAX_REVIEW_BYTES`
``schema``     :class:`mtboard.core.schema.ReviewRecord`
``path``       the record's ``card`` is ``<dataset>/<run>.json`` of its own path
``card``       that card exists under ``submissions/``, reads, and its run_card_hash is the record's
``entries``    every rated id is a public entry of the card; no reviewer rates an entry twice or appears twice
``sample``     sample_size ≥ :data:`mtboard.review.community.MIN_REVIEWED`, the project's seed; each review rates exactly the seeded
               stratified sample (every drawn id, nothing else)
               (:func:`mtboard.review.community.sample_entries` redrawn with the record's seed and size) — no cherry-picking
``reviewers``  every reviewer is listed in ``reviews/reviewers.yaml`` for the card's target language
``dates``      no review is dated after the validation time (+ :data:`mtboard.validate.bounds.CLOCK_SKEW`) or before
               2024 (issue 32 item 3); such a reviewer is not accepted

Messages name paths, fields and numbers; they never echo a note or other text from the file.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mtboard.review import community as rv
from mtboard.core import safejson
from mtboard.core import paths
from mtboard.core.documents import loads_card, validate_model
from mtboard.core.errors import MtboardError
from mtboard.core.schema import ReviewersFile, ReviewRecord, RunCard
from mtboard.validate.bounds import date_problem
from mtboard.validate.naming import DATASET_DIR_RE, SUBMISSIONS_DIR
from mtboard.validate.report import CardRun, Problem, error_text, rel_path, safe_name

REVIEW_CHECKS = ("file", "yaml", "schema", "path", "card", "entries", "sample", "reviewers", "dates")
"""Every per-record check, in report order."""
RUN_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,79}__[a-z0-9][a-z0-9.-]{0,59}__[0-9a-f]{12}$")
"""A card file stem (:data:`mtboard.validate.naming.NAME_RE` without ``.json``)."""

Status = Literal["pass", "fail", "skip"]


class ReviewReport(BaseModel):
    """Result of every check on one review record."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    path: str
    checks: dict[str, Status]
    skipped: dict[str, str] = {}
    problems: list[Problem] = []
    accepted: list[str] = []
    """Reviewers whose ratings count (listed for the language, ratings consistent)."""

    @property
    def ok(self) -> bool:
        return not self.problems


class _Run(CardRun):
    """:class:`mtboard.validate.report.CardRun`'s collector over the review checks."""

    def skip_rest(self, why: str) -> None:
        for c in REVIEW_CHECKS:
            if c not in self.status:
                self.status[c] = "skip"
                self.skipped[c] = why

    def report(self, accepted: list[str] | None = None) -> ReviewReport:
        self.skip_rest("not reached")
        return ReviewReport(path=self.where, checks={c: self.status[c] for c in REVIEW_CHECKS},
                            skipped=self.skipped, problems=self.problems, accepted=accepted or [])


def review_paths(root: Path) -> list[Path]:
    """Every ``*.yaml`` under ``root/reviews/`` except the reviewers file (sorted; links not followed, hidden files
    skipped; a linked file is listed so that the ``file`` check refuses it)."""
    base = root / rv.REVIEWS_DIR
    out: list[Path] = []
    if not base.is_dir() or base.is_symlink():
        return out
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if name.endswith(".yaml") and not name.startswith(".") and p != base / rv.REVIEWERS_FILE:
                out.append(p)
    return sorted(out)


def _check_file(run: _Run, path: Path, root: Path) -> tuple[str, str] | None:
    """``file``: the record lies at ``reviews/<dataset>/<card file stem>.yaml`` (allow-listed characters) and is a
    regular file with no symbolic link on the way (:func:`mtboard.core.paths.resolve_inside`: a linked
    ``reviews/<dataset>`` folder is refused too). Returns ``(dataset dir, file name)``, or None after a failure."""
    try:
        rel = path.absolute().relative_to((root / rv.REVIEWS_DIR).absolute()).parts
    except ValueError:
        rel = ()
    if (len(rel) != 2 or not DATASET_DIR_RE.match(rel[0]) or not rel[1].endswith(".yaml")
            or not RUN_RE.match(rel[1][:-5])):
        run.fail("file", "a review record lives at reviews/<dataset id>/<card file stem>.yaml (allow-listed "
                         "characters)")
        return None
    try:  # every component from the root down, the reviews/<dataset> folder included (issue 34 item 4)
        paths.resolve_inside(root, f"{rv.REVIEWS_DIR}/{rel[0]}/{rel[1]}", kind="file",
                             root_name="the repository root")
    except MtboardError as exc:
        run.fail("file", f"not a regular file (links are refused): {exc.problem}")
        return None
    run.done("file")
    return rel[0], rel[1]


def _read_record(run: _Run, path: Path, where: str) -> ReviewRecord | None:
    """``yaml`` (safe YAML within :data:`mtboard.review.community.MAX_REVIEW_BYTES`; messages name ``where``, not
    the absolute path) and ``schema`` (:class:`~mtboard.core.schema.ReviewRecord`). None after a failure."""
    try:
        data = safejson.load_yaml(path, max_bytes=rv.MAX_REVIEW_BYTES)
    except MtboardError as exc:
        run.fail("yaml", error_text(exc).replace(str(path), where))
        return None
    run.done("yaml")
    try:
        record = validate_model(ReviewRecord, data, where)
    except MtboardError as exc:
        run.fail("schema", exc.problem, exc.field)
        return None
    run.done("schema")
    return record


def _check_card(run: _Run, record: ReviewRecord, rel: tuple[str, str], root: Path) -> RunCard | None:
    """``path`` (the record's ``card`` is ``<dataset>/<run>.json`` of its own path) and ``card`` (that card exists
    under ``submissions/``, is read with :func:`mtboard.core.paths.read_inside` — no symbolic link at any level —, and its ``run_card_hash`` is the record's). Returns the card, or None when it is
    missing, unreadable or another card."""
    expected = f"{rel[0]}/{rel[1][:-5]}.json"
    if record.card != expected:
        run.fail("path", f"card names another run than the file's own path ({expected})", "$.card")
    run.done("path")
    card = None
    try:  # read through core.paths: no symbolic link at any level of submissions/<dataset>/<run>.json
        raw = paths.read_inside(root, f"{SUBMISSIONS_DIR}/{expected}", max_bytes=safejson.MAX_CARD_BYTES,
                                root_name="the repository root")
    except paths.PathMissing:
        run.fail("card", f"no card {SUBMISSIONS_DIR}/{expected} to review", "$.card")
    except paths.PathRefused as exc:
        run.fail("card", f"{SUBMISSIONS_DIR}/{expected} is refused: {exc.problem}", "$.card")
    except MtboardError:
        run.fail("card", f"{SUBMISSIONS_DIR}/{expected} does not read as a run card", "$.card")
    else:
        try:
            card = loads_card(raw, f"{SUBMISSIONS_DIR}/{expected}")
        except MtboardError:
            run.fail("card", f"{SUBMISSIONS_DIR}/{expected} does not read as a run card", "$.card")
    if card is not None and card.run_card_hash != record.run_card_hash:
        run.fail("card", f"run_card_hash is not the hash of {SUBMISSIONS_DIR}/{expected} (the card changed after the "
                         "review, or the record reviews another card)", "$.run_card_hash")
        card = None
    run.done("card")
    return card


def _check_entries(run: _Run, record: ReviewRecord, card: RunCard, bad_reviewers: set[str]) -> None:
    """``entries``: every rated id is a public entry of the card; no reviewer rates an entry twice or appears twice.
    Offending reviewers (lower-cased) are added to ``bad_reviewers``."""
    public = {r.entry_id for r in rv.reviewable(card)}
    seen_reviewers: Counter = Counter(r.reviewer.lower() for r in record.reviews)
    for i, review in enumerate(record.reviews):
        if seen_reviewers[review.reviewer.lower()] > 1:
            run.fail("entries", "reviewer appears more than once (one item per reviewer: merge the ratings)",
                     f"$.reviews[{i}].reviewer")
            bad_reviewers.add(review.reviewer.lower())
        ids = Counter(e.entry_id for e in review.ratings)
        for j, e in enumerate(review.ratings):
            if e.entry_id not in public:
                run.fail("entries", f"entry {e.entry_id} is not a public entry of the card",
                         f"$.reviews[{i}].ratings[{j}].entry_id")
                bad_reviewers.add(review.reviewer.lower())
            elif ids[e.entry_id] > 1:
                run.fail("entries", f"entry {e.entry_id} is rated more than once by the same reviewer",
                         f"$.reviews[{i}].ratings[{j}].entry_id")
                bad_reviewers.add(review.reviewer.lower())
    run.done("entries")


def _check_sample(run: _Run, record: ReviewRecord, card: RunCard, bad_reviewers: set[str]) -> None:
    """``sample``: sample_size ≥ :data:`~mtboard.review.community.MIN_REVIEWED`, the project's seed, and each review
    rates exactly the seeded stratified sample (:func:`mtboard.review.community.sample_entries` redrawn with the
    record's seed and size). Offending reviewers (lower-cased) are added to ``bad_reviewers``."""
    if record.sample_size < rv.MIN_REVIEWED:
        run.fail("sample", f"sample_size {record.sample_size} is under {rv.MIN_REVIEWED} (spec §7.3; "
                           f"`mtboard review sample` draws {rv.MIN_REVIEWED} by default)", "$.sample_size")
    if record.sample_seed != rv.DEFAULT_SEED:
        run.fail("sample", f"sample_seed {record.sample_seed} is not the project's seed {rv.DEFAULT_SEED} (one sample "
                           "per card, so nobody can shop for a seed that draws easy entries): rate the entries "
                           "`mtboard review sample` or the review page shows", "$.sample_seed")
    drawn = {r.entry_id for r in rv.sample_entries(card, record.sample_size, record.sample_seed)}
    for i, review in enumerate(record.reviews):
        unrated = sorted(drawn - {e.entry_id for e in review.ratings})
        if unrated:
            run.fail("sample", f"{len(unrated)} entr{'y' if len(unrated) == 1 else 'ies'} of the sample not rated "
                               f"(first: {unrated[0]}): a review rates every drawn entry (otherwise a reviewer "
                               "chooses which entries count; a larger sample_size means more to rate)",
                     f"$.reviews[{i}].ratings")
            bad_reviewers.add(review.reviewer.lower())
        outside = sorted({e.entry_id for e in review.ratings} - drawn)
        if outside:
            run.fail("sample", f"{len(outside)} rated entr{'y is' if len(outside) == 1 else 'ies are'} not in the "
                               f"seeded sample (seed {record.sample_seed}, size {record.sample_size}; first: "
                               f"{outside[0]}): rate the entries the review page or `mtboard review sample` shows",
                     f"$.reviews[{i}].ratings")
            bad_reviewers.add(review.reviewer.lower())
    run.done("sample")


def _check_reviewers(run: _Run, record: ReviewRecord, card: RunCard, reviewers: ReviewersFile | None, root: Path,
                     bad_reviewers: set[str]) -> bool:
    """``reviewers``: every reviewer is listed in ``reviews/reviewers.yaml`` for the card's target language (the
    list is read from ``root`` when ``reviewers`` is None). Unlisted reviewers (lower-cased) are added to
    ``bad_reviewers``. Returns False when the list does not read (the check failed; nobody is accepted)."""
    if reviewers is None:
        try:
            reviewers = rv.load_reviewers(root / rv.REVIEWS_DIR / rv.REVIEWERS_FILE,
                                          f"{rv.REVIEWS_DIR}/{rv.REVIEWERS_FILE}")
        except MtboardError as exc:
            run.fail("reviewers", f"{rv.REVIEWS_DIR}/{rv.REVIEWERS_FILE} does not read: {exc.problem}")
            return False
    lang = card.dataset.target_language
    for i, review in enumerate(record.reviews):
        if not rv.listed_for(reviewers, review.reviewer, lang):
            run.fail("reviewers", f"reviewer is not listed for {lang} in {rv.REVIEWS_DIR}/{rv.REVIEWERS_FILE} "
                                  "(a maintainer lists reviewers)", f"$.reviews[{i}].reviewer")
            bad_reviewers.add(review.reviewer.lower())
    run.done("reviewers")
    return True


def _check_dates(run: _Run, record: ReviewRecord, bad_reviewers: set[str], now: datetime | None) -> None:
    """``dates``: each review's ``date`` not after ``now`` (default: the clock) + the clock skew, nor before 2024
    (:func:`mtboard.validate.bounds.date_problem`). Offending reviewers (lower-cased) are added to
    ``bad_reviewers``."""
    clock = now or datetime.now(UTC)
    for i, review in enumerate(record.reviews):
        bad = date_problem(review.date, f"$.reviews[{i}].date", clock)
        if bad:
            run.fail("dates", bad, f"$.reviews[{i}].date")
            bad_reviewers.add(review.reviewer.lower())
    run.done("dates")


def validate_review(path: Path, root: Path, reviewers: ReviewersFile | None = None, *,
                    now: datetime | None = None) -> tuple[ReviewReport, ReviewRecord | None, RunCard | None]:
    """Run every check of :data:`REVIEW_CHECKS` on one record, in order; a check whose inputs are broken is skipped
    with the reason. Never raises for problems in the file.

    Args:
        path: the record file.
        root: repository root (holding ``reviews/`` and ``submissions/``).
        reviewers: the reviewers list (default: read ``root/reviews/reviewers.yaml``; a broken list fails the
            ``reviewers`` check of every record).
        now: the validation time for the ``dates`` check (default: the clock).

    Returns: (report, the parsed record or None, the reviewed card or None). The report's ``accepted`` lists the
    reviewers no check faulted (empty when the reviewers list does not read).
    """
    where = safe_name(rel_path(path.absolute(), root.absolute()))
    run = _Run(where)
    rel = _check_file(run, path, root)
    if rel is None:
        return run.report(), None, None
    record = _read_record(run, path, where)
    if record is None:
        return run.report(), None, None
    card = _check_card(run, record, rel, root)
    if card is None:
        run.skip_rest("no matching card")
        return run.report(), record, None
    bad_reviewers: set[str] = set()
    _check_entries(run, record, card, bad_reviewers)
    _check_sample(run, record, card, bad_reviewers)
    _check_dates(run, record, bad_reviewers, now)
    if not _check_reviewers(run, record, card, reviewers, root, bad_reviewers):
        return run.report(), record, card
    accepted = [r.reviewer for r in record.reviews if r.reviewer.lower() not in bad_reviewers]
    return run.report(accepted), record, card


def validate_reviews(root: Path) -> list[ReviewReport]:
    """Every record under ``root/reviews/`` (the reviewers file read once)."""
    try:
        reviewers = rv.load_reviewers(root / rv.REVIEWS_DIR / rv.REVIEWERS_FILE, f"{rv.REVIEWS_DIR}/{rv.REVIEWERS_FILE}")
    except MtboardError:
        reviewers = None  # each record's ``reviewers`` check reports it
    return [validate_review(p, root, reviewers)[0] for p in review_paths(root)]


def reviewers_problems(root: Path) -> list[Problem]:
    """The reviewers file itself must read (safe YAML, strict schema) when present."""
    where = f"{rv.REVIEWS_DIR}/{rv.REVIEWERS_FILE}"
    try:
        rv.load_reviewers(root / rv.REVIEWS_DIR / rv.REVIEWERS_FILE, where)
    except MtboardError as exc:
        return [Problem(check="reviews", where=where, field=exc.field, message=exc.problem)]
    return []


def render_text(reports: list[ReviewReport]) -> str:
    """Per record: ok/FAIL, failing checks with their problems, skipped checks with reasons, passing checks."""
    lines: list[str] = []
    for f in reports:
        lines.append(f"{'ok  ' if f.ok else 'FAIL'} {f.path}")
        for c in REVIEW_CHECKS:
            if f.checks[c] == "fail":
                probs = [p for p in f.problems if p.check == c]
                lines.append(f"  FAIL {c}: {len(probs)} problem(s)")
                lines.extend(f"       {p.field + ': ' if p.field else ''}{p.message}" for p in probs[:20])
        reasons: dict[str, list[str]] = {}
        for c in REVIEW_CHECKS:
            if f.checks[c] == "skip":
                reasons.setdefault(f.skipped.get(c, ""), []).append(c)
        lines.extend(f"  skip {', '.join(n)}: {why}" for why, n in reasons.items())
        passed = [c for c in REVIEW_CHECKS if f.checks[c] == "pass"]
        if passed:
            lines.append(f"  pass {', '.join(passed)}")
    bad = sum(not f.ok for f in reports)
    lines.append(f"review validation {'passed' if not bad else 'FAILED'}: {len(reports)} record(s)"
                 + (f", {bad} failed" if bad else ""))
    return "\n".join(lines)


__all__ = ["REVIEW_CHECKS", "ReviewReport", "review_paths", "validate_review", "validate_reviews",
           "reviewers_problems", "render_text"]
