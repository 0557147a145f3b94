"""The check catalogue, report objects, the per-file problem collector, and rendering (text / JSON).

Modelled on MLPerf's submission checker and MkDocs strict mode: every problem carries its check's name and a location
(file + JSON path), all problems are collected, and the caller fails once at the end. Messages never echo untrusted
content: they name paths, fields and numbers; paths are ASCII-escaped and shortened (:func:`safe_name`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mtboard.core.errors import MtboardError
from mtboard.core.fmt import md_cell
from mtboard.core.schema import RunCard, binding_paths

# --------------------------------------------------------------------------------------------------------------------
# The check catalogue

CARD_CHECKS = ("file", "size", "json", "schema", "harness_version", "file_name", "names", "run_card_hash",
               "fingerprint", "method", "dataset", "entries", "texts", "metrics", "mechanical", "signatures", "variants",
               "judges", "neural", "timestamps", "sovereignty", "secrets", "submission")
"""Every per-card check, in report order; ``submission`` (the gate of spec §9.1–9.2, §9.5,
:mod:`mtboard.validate.submission`) comes last: its ``run-card`` rule reads every other check's status."""
WARNING_CHECKS = ("variants",)
"""Checks that warn instead of failing: ``variants`` (spec §9.3.1, :mod:`mtboard.validate.variants`) flags a card
whose matches on the entries with known variants are suspiciously perfect; a statistic, not proof, so the card still
validates and the flag is shown in CI, in the ledger row and on the run page."""
REPO_CHECKS = ("scope", "duplicates", "copies", "verification", "sovereignty", "files", "reviews", "floors")
"""Repository-level checks; ``files``: at least one run card was validated (nothing validated is a failure, as
pytest treats a run that collected no tests); ``reviews``: review records under ``reviews/`` (spec §7.3,
:mod:`mtboard.validate.reviews`)."""
RECOMPUTED_CHECKS = ("metrics", "mechanical", "signatures")
"""The checks that re-run scoring (:mod:`mtboard.validate.recompute`); they pass, fail or are skipped together."""


def declared_fields() -> tuple[str, ...]:
    """``DECLARED_FIELDS``: JSON paths of the card fields only a re-run can confirm (schema binding ``declared``,
    derived from the run-card JSON Schema by :func:`mtboard.core.schema.binding_paths`): model identity, raw outputs,
    date, sampling settings, measured latencies and usage, free labels. Every other field is recomputed or checked
    for consistency (issue 15 part 0; the site marks declared values of self-benchmarked cards; ``mtboard verify``
    confirms them). Computed on first use (the module attributes ``DECLARED_FIELDS`` and its former name
    ``UNBOUND_FIELDS`` read it): deriving it builds the run card's JSON Schema (~35 ms), which a run that imports
    this module never needs (issue 35 item 4, "modules a run does not use")."""
    global _DECLARED  # noqa: PLW0603 - computed once
    if _DECLARED is None:
        _DECLARED = tuple(p for p, b in binding_paths().items() if b == "declared")
    return _DECLARED


_DECLARED: tuple[str, ...] | None = None


def __getattr__(name: str) -> Any:
    """``DECLARED_FIELDS`` (and its former name ``UNBOUND_FIELDS``): :func:`declared_fields`, on first use."""
    if name in ("DECLARED_FIELDS", "UNBOUND_FIELDS"):
        return declared_fields()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

Status = Literal["pass", "fail", "skip", "warn"]
"""``warn``: only a check of :data:`WARNING_CHECKS`; the card still passes."""

TIER_NAMES = {"self-benchmarked": "self-benchmarked", "gds-verified": "GDS verified",
              "community-verified": "community verified (gold standard)"}
"""What the submission gate calls each verification tier (spec §9.4; :mod:`mtboard.validate.submission`), weakest
first."""


# --------------------------------------------------------------------------------------------------------------------
# Report objects


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Problem(_Out):
    """One failed expectation. ``str(problem)`` is one line: ``check: where: field: message``."""

    check: str
    """Name of the check (one of CARD_CHECKS or REPO_CHECKS)."""
    where: str
    """File (as given or relative to the root) or '<repository>'."""
    field: str | None = None
    """JSON path inside the file, e.g. ``$.scores.chrf_plus_plus`` or ``$.results[3].predicted``."""
    message: str
    """What is wrong and, where useful, how to fix it. Never quotes untrusted text."""

    def __str__(self) -> str:
        parts = [self.check, self.where] + ([self.field] if self.field else []) + [self.message]
        return ": ".join(parts)


class GateRule(_Out):
    """One rule of the submission gate decided for one card (:data:`mtboard.validate.submission.RULES`)."""

    id: str
    section: str
    """Spec section(s), e.g. ``§9.2.2``."""
    level: Literal["required", "warning", "-"]
    """The rule's level at the tier the card was checked at (``-``: not asked at that tier)."""
    met: bool | None
    """True met, False missed, None not evaluated (the card did not parse)."""
    detail: str
    """One line: why (names fields, files, entry ids and numbers; never the card's free text)."""
    levels: dict[str, Literal["required", "warning", "-"]]
    """The rule's level at every tier."""


class GateOutcome(_Out):
    """The submission gate's outcome for one card: the tier it was checked at, every rule, the tiers it could hold."""

    tier: str
    """self-benchmarked | gds-verified | community-verified."""
    rules: list[GateRule]
    eligible: dict[str, bool]
    """tier → every rule required at that tier is met."""

    def missed(self) -> list[GateRule]:
        return [r for r in self.rules if r.met is False]


class CardReport(_Out):
    """Result of every check on one file."""

    path: str
    checks: dict[str, Status]
    """check name → pass | fail | skip (every name of CARD_CHECKS)."""
    skipped: dict[str, str] = {}
    """check name → why it was skipped."""
    problems: list[Problem] = []
    warnings: list[Problem] = []
    """What the checks of :data:`WARNING_CHECKS` flagged; not problems (the card passes)."""
    run_card_hash: str | None = None
    run_id: str | None = None
    notes: list[str] = []
    """Warnings that are not problems (a ``--limit`` card validates but is listed unranked)."""
    gate: GateOutcome | None = None
    """The submission gate's rules met and missed (None when the check was not reached)."""
    rescored_from: list[str] = Field(default=[], exclude=True)
    """The ``run_card_hash`` of every card this one was re-scored from (``$.rescored_from``), for the repository's
    verification check; not part of the printed report."""

    @property
    def ok(self) -> bool:
        return not self.problems


class ValidationReport(_Out):
    """Result of ``mtboard validate``: per-file reports plus repository-level problems."""

    validator_version: str
    files: list[CardReport]
    repository: list[Problem] = []
    """Problems of repository-level checks (scope, duplicates, verification, sovereignty over all files)."""
    ok: bool

    def failed_checks(self) -> dict[str, int]:
        """check name → number of problems."""
        counts: dict[str, int] = {}
        for p in self.all_problems():
            counts[p.check] = counts.get(p.check, 0) + 1
        return counts

    def all_problems(self) -> Iterator[Problem]:
        yield from self.repository
        for f in self.files:
            yield from f.problems


# --------------------------------------------------------------------------------------------------------------------
# The per-file collector


class CardRun:
    """Collects problems and statuses for one file.

    A check calls :meth:`fail` for each problem and :meth:`done` when it finished (``pass`` unless it failed);
    :meth:`skip` records why a check could not run. :meth:`report` marks every check not reached as skipped.
    """

    def __init__(self, where: str):
        self.where = where
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.status: dict[str, Status] = {}
        self.skipped: dict[str, str] = {}
        self.notes: list[str] = []
        self.gate: GateOutcome | None = None

    def note(self, line: str) -> None:
        """A one-line remark that does not fail the card (the report's ``notes``)."""
        self.notes.append(line)

    def fail(self, check: str, message: str, field: str | None = None) -> None:
        self.problems.append(Problem(check=check, where=self.where, field=field, message=message))
        self.status[check] = "fail"

    def warn(self, check: str, message: str, field: str | None = None) -> None:
        """A flag of a check of :data:`WARNING_CHECKS` (status ``warn``; the card still passes)."""
        if check not in WARNING_CHECKS:
            raise ValueError(f"{check} is not a warning check")
        self.warnings.append(Problem(check=check, where=self.where, field=field, message=message))
        self.status[check] = "warn"

    def done(self, *checks: str) -> None:
        for check in checks:
            self.status.setdefault(check, "pass")

    def skip(self, check: str, why: str) -> None:
        if check not in self.status:
            self.status[check] = "skip"
            self.skipped[check] = why

    def skip_all(self, checks: Iterable[str], why: str) -> None:
        for check in checks:
            self.skip(check, why)

    def failed(self, *checks: str) -> bool:
        return any(self.status.get(c) == "fail" for c in checks)

    def report(self, path: str, card: RunCard | None) -> CardReport:
        self.skip_all(CARD_CHECKS, "not reached")
        notes = list(self.notes)
        if card is not None and card.method.limit is not None:
            notes.append(f"--limit {card.method.limit}: the card covers only the first {card.dataset.entry_count} "
                         "entries of its segment; the leaderboard lists it as unranked")
        return CardReport(path=path, checks={c: self.status[c] for c in CARD_CHECKS}, skipped=self.skipped,
                          problems=self.problems, warnings=self.warnings, run_card_hash=card.run_card_hash if card else None,
                          run_id=card.run_id if card else None, notes=notes, gate=self.gate,
                          rescored_from=[a.run_card_hash for a in card.rescored_from] if card else [])


# --------------------------------------------------------------------------------------------------------------------
# Locations and messages


def rel_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX) when it is an absolute path inside it; otherwise as given."""
    try:
        return path.resolve(strict=False).relative_to(root.resolve()).as_posix() if path.is_absolute() else \
            path.as_posix()
    except ValueError:
        return path.as_posix()


def safe_name(text: str, limit: int = 120) -> str:
    """A path shown in messages: ASCII-escaped and shortened (paths come from contributors)."""
    short = text[:limit] + ("…" if len(text) > limit else "")
    if short.isascii() and short.isprintable():
        return short
    return ascii(short)[1:-1]


def json_path(parts: Iterable[Any]) -> str:
    """``("results", 3, "predicted")`` → ``$.results[3].predicted``."""
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def error_text(exc: MtboardError) -> str:
    """An error's problem and fix, without its location (the Problem carries that)."""
    return exc.problem + (f" (fix: {exc.fix})" if exc.fix else "")


# --------------------------------------------------------------------------------------------------------------------
# Rendering


def render_text(report: ValidationReport) -> str:
    """Per-file, per-check text report and a summary line (MLPerf-checker style).

    Per file: ``ok``/``FAIL`` and the path, then each failing check with its problems (JSON path + message), the
    skipped checks with their reasons, and one line listing the checks that passed. Paths are ASCII-escaped.
    """
    lines: list[str] = []
    for f in report.files:
        lines.append(f"{'ok  ' if f.ok else 'FAIL'} {f.path}")
        by_check: dict[str, list[Problem]] = {}
        for p in f.problems:
            by_check.setdefault(p.check, []).append(p)
        for c in CARD_CHECKS:
            if f.checks[c] != "fail":
                continue
            probs = by_check.get(c, [])
            lines.append(f"  FAIL {c}: {len(probs)} problem(s)")
            for p in probs[:20]:
                lines.append(f"       {p.field + ': ' if p.field else ''}{p.message}")
            if len(probs) > 20:
                lines.append(f"       ... {len(probs) - 20} more")
        reasons: dict[str, list[str]] = {}
        for c in CARD_CHECKS:
            if f.checks[c] == "skip":
                reasons.setdefault(f.skipped.get(c, ""), []).append(c)
        for why, names in reasons.items():
            lines.append(f"  skip {', '.join(names)}: {why}")
        for w in f.warnings:
            lines.append(f"  warn {w.check}: {w.field + ': ' if w.field else ''}{w.message}")
        passed = [c for c in CARD_CHECKS if f.checks[c] == "pass"]
        if passed:
            lines.append(f"  pass {', '.join(passed)}")
        for note in f.notes:
            lines.append(f"  note {note}")
        if f.gate is not None:
            met = [r.id for r in f.gate.rules if r.met]
            missed = [f"{r.id} ({r.section})" for r in f.gate.rules if r.met is False]
            lines.append(f"  gate {f.gate.tier}: met {', '.join(met) or 'none'}"
                         + (f"; missed {', '.join(missed)}" if missed else ""))
    if report.repository:
        lines.append("FAIL repository")
        for p in report.repository:
            lines.append(f"  FAIL {p.check}: {p.where}: {p.field + ': ' if p.field else ''}{p.message}")
    n_bad = sum(1 for f in report.files if not f.ok)
    counts = report.failed_checks()
    summary = ", ".join(f"{k} ({v})" for k, v in sorted(counts.items()))
    warned = [f.path for f in report.files if f.warnings]
    kinds = ", ".join(sorted({w.check for f in report.files for w in f.warnings}))
    warn_note = f"; {len(warned)} file(s) with warnings ({kinds}): look at the warn lines above" if warned else ""
    if report.ok:
        lines.append(f"validation passed: {len(report.files)} file(s), {len(CARD_CHECKS)} checks each{warn_note}")
    else:
        lines.append(f"validation FAILED: {n_bad} of {len(report.files)} file(s) failed"
                     + (", repository checks failed" if report.repository else "")
                     + (f"; failing checks: {summary}" if summary else "") + warn_note)
    return "\n".join(lines)


def gate_markdown(gate: GateOutcome) -> str:
    """One card's gate as Markdown task-list lines: ``- [x]`` met, ``- [ ]`` missed, with the rule, its section, its
    level at the card's tier and why; then the tiers the card is eligible for. For the pull-request body and the CI
    job summary; the text comes from rule ids and numbers, never from the card's free text."""
    out = [f"Checked as a **{TIER_NAMES[gate.tier]}** submission (spec §9.4–9.5); rules met and missed:", ""]
    for r in gate.rules:
        box = "x" if r.met else " "
        state = {True: "met", False: "MISSED", None: "not evaluated"}[r.met]
        level = r.level if r.level != "-" else "not asked at this tier"
        out.append(f"- [{box}] `{r.id}` ({r.section}, {level}): {state} — {md_cell(r.detail)}")
    ok = [TIER_NAMES[t] for t in TIER_NAMES if gate.eligible.get(t)]
    out += ["", f"Eligible tiers: {', '.join(ok) if ok else 'none'}."]
    return "\n".join(out) + "\n"


def warnings_markdown(warnings: list[Problem]) -> str:
    """The flags of the checks of :data:`WARNING_CHECKS` (status ``warn``) as Markdown: a line saying the card still
    validates, then one item per flag with the check name, the field and the message (``md_cell``-escaped). For the
    CI job summary (:func:`render_markdown`) and the pull-request body (:func:`mtboard.run.submit.pr_body`).
    Empty string when there is none."""
    if not warnings:
        return ""
    out = [f"**Warnings (the card still validates)**: {len(warnings)} flag(s); a maintainer looks at them:", ""]
    for w in warnings:
        out.append(f"- warn `{w.check}`: {md_cell((w.field + ': ') if w.field else '')}{md_cell(w.message)}")
    return "\n".join(out) + "\n"


def render_markdown(report: ValidationReport) -> str:
    """The report as Markdown (``mtboard validate --format markdown``; CI appends it to the job summary): per card,
    ``ok``/``FAIL``, the failing checks, the warnings (:func:`warnings_markdown`), and the submission gate's rules met and missed
    (:func:`gate_markdown`); then the repository problems. Paths are ASCII-escaped and
    put in code spans; messages pass :func:`mtboard.core.fmt.md_cell`."""

    out = ["## mtboard validate", ""]
    for f in report.files:
        out.append(f"### {'ok' if f.ok else 'FAIL'} `{f.path.replace('`', '?')}`")
        out.append("")
        failing = [c for c in CARD_CHECKS if f.checks[c] == "fail"]
        if failing:
            out.append(f"Failing checks: {', '.join(failing)}.")
            out.append("")
            for p in f.problems[:20]:
                out.append(f"- {p.check}: {md_cell((p.field + ': ') if p.field else '')}{md_cell(p.message)}")
            out.append("")
        if f.warnings:
            out.append(warnings_markdown(f.warnings))
        if f.gate is not None:
            out.append(gate_markdown(f.gate))
    if report.repository:
        out.append("### FAIL repository")
        out.append("")
        out += [f"- {p.check}: {md_cell(p.where)}: {md_cell(p.message)}" for p in report.repository]
        out.append("")
    n_bad = sum(1 for f in report.files if not f.ok)
    out.append(f"**validation {'passed' if report.ok else 'FAILED'}**: {len(report.files)} file(s)"
               + (f", {n_bad} failed" if n_bad else ""))
    return "\n".join(out) + "\n"


def render_json(report: ValidationReport) -> str:
    """The report as JSON (``mtboard validate --format json``)."""
    return report.model_dump_json(indent=1)
