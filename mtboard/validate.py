"""Named checks over submitted run cards (issue 6; spec §3.8, §3.9, §8, §9.1–9.3).

Modelled on MLPerf's submission checker: every check has a name, every problem carries the check's name and a
location (file + JSON path), all problems are collected and the caller fails once at the end.

Per card, in order (a check whose inputs are broken is reported as ``skip`` with the reason):

=================== =================================================================================================
``file``            path is safe: no ``..`` component, not a symlink or special file (refused without reading), inside
                    the repository, not leaving it through a linked folder
``size``            file size under :data:`MAX_CARD_BYTES` (checked with ``lstat`` before reading)
``json``            strict JSON (:mod:`mtboard.safejson`): no NaN/Infinity, 1e400, duplicate keys, deep nesting, huge
                    integers, lone surrogates, invalid UTF-8, BOM
``schema``          the strict RunCard schema (:mod:`mtboard.schema`)
``harness_version`` made by a harness version this validator reads (older/newer cards are rejected with the reason)
``file_name``       under ``submissions/``: the path is exactly :func:`canonical_relpath` of the content
``run_card_hash``   spec §3.9 seal recomputed over the canonical card
``fingerprint``     components re-derived from the card's fields (:func:`mtboard.card.fingerprint_components`) and
                    the hash recomputed from them (fingerprint v2, :mod:`mtboard.canonical`)
``method``          method record consistent: spec = backend:model[:effort], method_class = the registered
                    backend's, system_prompt_sha256 = SHA-256(system_prompt_used), method_config mirrors the card
                    (model, temperature, batchSize, qualityTier, promptContext), fst_version = installed analyser
``dataset``         dataset id + version + sha256 (+ language pair) match a corpus file in ``corpora/``
``entries``         evaluated entry ids/count equal the corpus segment (or its first ``method.limit`` entries)
``texts``           each result's source/reference/segment/difficulty/domain/provenance equal the corpus entry
``metrics``         scores, totals and per-entry scores recomputed from the stored raw outputs with
                    :func:`mtboard.scoring.score_run` — **exact** equality, no slack
``mechanical``      the frozen compliance policy re-run on ``raw_predicted``: decisions, ``predicted``, counts, version
``signatures``      sacrebleu signatures equal the recomputation and say what the metric is (chrF++ ⇒ ``nw:2``)
``judges``          judge summaries consistent with the per-entry verdicts (judges cannot be re-run here)
``timestamps``      ISO 8601 UTC, not in the future, not before 2024, elapsed time consistent with latencies
``sovereignty``     no gold_standard/held_out entries; no secret-segment text (when a secret file is given)
``secrets``         no API-key-like strings (sk-…, hf_…, AKIA…, Bearer …, ghp_…, private keys)
=================== =================================================================================================

Repository-level checks (``mtboard validate`` over ``submissions/``): ``scope`` (a pull request may only add or
modify files under ``submissions/``), ``duplicates`` (one card per run_card_hash / run_id), ``verification``
(records beside cards name the card they verify), ``sovereignty`` (corpora/ holds no secret segment; no secret text
in any file under ``submissions/`` or ``corpora/``).

Messages never echo untrusted content: they name paths, fields and numbers; text is referred to, not quoted.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from mtboard import __version__, canonical, safejson
from mtboard.card import fingerprint_components
from mtboard.documents import load_corpus, validate_model
from mtboard.errors import InputError, MtboardError
from mtboard.schema import SECRET_SEGMENTS, Corpus, Entry, RunCard, VerificationRecord

MAX_CARD_BYTES = safejson.MAX_CARD_BYTES
"""Largest card accepted (bytes); checked with lstat before the file is opened."""
MAX_SCAN_BYTES = 64 * 1024 * 1024
"""Largest file the repository-wide sovereignty scan reads."""
EARLIEST_TIMESTAMP = datetime(2024, 1, 1, tzinfo=UTC)
"""Cards dated before this are implausible (mtboard did not exist)."""
CLOCK_SKEW = timedelta(minutes=10)
"""Tolerated clock skew for 'not in the future'."""
OLDEST_SUPPORTED_HARNESS = "0.1.0"
"""Oldest card format this validator reads. No migration exists yet: older cards are rejected with the reason."""
SUBMISSIONS_DIR = "submissions"
VERIFICATION_SUFFIX = ".verification.json"
SECRET_SEGMENT_ENV = "MTBOARD_SECRET_SEGMENT"
"""Default environment variable naming a secret-segment corpus file for the sovereignty check."""
SECRET_MIN_SUBSTRING = 16
"""Secret strings at least this long are searched as substrings; shorter ones must not equal a whole text field."""

CARD_CHECKS = ("file", "size", "json", "schema", "harness_version", "file_name", "run_card_hash", "fingerprint",
               "method", "dataset", "entries", "texts", "metrics", "mechanical", "signatures", "judges", "timestamps",
               "sovereignty", "secrets")
"""Every per-card check, in report order."""
REPO_CHECKS = ("scope", "duplicates", "verification", "sovereignty")

UNBOUND_FIELDS: tuple[str, ...] = (
    "$.run_id", "$.notes", "$.model_id", "$.max_retries", "$.coaching_data_sha256", "$.method.concurrency",
    "$.method.streaming", "$.method.sampling", "$.method_config.register", "$.method_config.coachingFile",
    "$.method_config.coachingPrompt",
)
"""JSON paths whose value no check can bind once a card is re-sealed: free labels (run_id, notes, the provider's
model id, the coaching labels) and settings that enter no recomputation and no fingerprint component (retries,
concurrency, streaming, extra sampling parameters; also ``method.local``, the local-model gate record). Changing them
without re-sealing still breaks the seal; a careful cheater can relabel them — only a re-run (``mtboard verify``)
or review catches that. The tamper suite keeps this list exact."""

SLUG_RE = re.compile(r"[^a-z0-9.-]+")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,79}__[a-z0-9][a-z0-9.-]{0,59}__[0-9a-f]{12}\.json$")
"""Allow-listed canonical card file name: ``<model-slug>__<condition>__<12 hex>.json``."""
DATASET_DIR_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

Status = Literal["pass", "fail", "skip"]


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


class CardReport(_Out):
    """Result of every check on one file."""

    path: str
    checks: dict[str, Status]
    """check name → pass | fail | skip (every name of CARD_CHECKS)."""
    skipped: dict[str, str] = {}
    """check name → why it was skipped."""
    problems: list[Problem] = []
    run_card_hash: str | None = None
    run_id: str | None = None

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
# Context: corpora, secret strings, clock


@dataclass
class KnownCorpus:
    path: Path
    corpus: Corpus
    sha256: str


@dataclass
class Context:
    """What every check may consult. Build once per ``mtboard validate`` run (corpora are parsed once)."""

    root: Path
    """Repository root (the folder holding ``submissions/``)."""
    corpora_dir: Path
    """Trusted corpora folder (in CI: the base branch's ``corpora/``)."""
    secret_strings: frozenset[str] = frozenset()
    """Normalised source/reference/variant texts of secret-segment entries (sovereignty gate)."""
    secret_source: str | None = None
    """Where the secret strings came from (env var name), for messages."""
    now: datetime | None = None
    """Clock used for 'not in the future' (default: current UTC time)."""
    recompute: bool = True
    """False skips the recomputation checks (metrics, mechanical, signatures): a quick structural pass."""
    _corpora: list[KnownCorpus] | None = None
    _corpus_problems: list[Problem] = field(default_factory=list)
    _long_secrets: tuple[str, ...] | None = None

    def corpora(self) -> list[KnownCorpus]:
        if self._corpora is None:
            self._corpora = []
            if self.corpora_dir.is_dir():
                for p in sorted(self.corpora_dir.glob("*.json")):
                    try:
                        corpus, sha = load_corpus(p)
                    except MtboardError as exc:
                        self._corpus_problems.append(Problem(check="dataset", where=_rel(p, self.root),
                                                             message=f"corpus unreadable: {exc.problem}"))
                        continue
                    self._corpora.append(KnownCorpus(p, corpus, sha))
        return self._corpora

    def clock(self) -> datetime:
        return self.now or datetime.now(UTC)

    def long_secrets(self) -> tuple[str, ...]:
        if self._long_secrets is None:
            self._long_secrets = tuple(sorted(s for s in self.secret_strings if len(s) >= SECRET_MIN_SUBSTRING))
        return self._long_secrets


def make_context(root: str | os.PathLike[str] = ".", corpora_dir: str | os.PathLike[str] | None = None, *,
                 secret_segment_env: str | None = SECRET_SEGMENT_ENV, now: datetime | None = None) -> Context:
    """Build a :class:`Context`.

    Args:
        root: repository root (holds ``submissions/``).
        corpora_dir: trusted corpora folder; default ``<root>/corpora``.
        secret_segment_env: name of an environment variable that may hold the path of a secret-segment corpus
            file (every entry in that file counts as secret). Unset or empty variable: no secret-text scan.
        now: fixed clock for tests.

    Raises: InputError when the variable names a file that cannot be read as a corpus.
    """
    root_p = Path(root)
    ctx = Context(root=root_p, corpora_dir=Path(corpora_dir) if corpora_dir else root_p / "corpora", now=now)
    if secret_segment_env:
        path = os.environ.get(secret_segment_env, "")
        if path:
            try:
                corpus, _ = load_corpus(path)
            except MtboardError as exc:
                raise InputError(f"secret segment file named by ${secret_segment_env} is unusable: {exc.problem}",
                                 fix=f"point ${secret_segment_env} at a corpus JSON file") from None
            ctx.secret_strings = frozenset(secret_strings(corpus))
            ctx.secret_source = f"${secret_segment_env}"
    return ctx


_CONTEXTS: dict[tuple[str, str | None, str], Context] = {}


def _cached_context(root: str, corpora_dir: str | None) -> Context:
    """One context per (root, corpora, secret file) per process, so callers validating card by card (the site
    build) parse the corpora once."""
    key = (root, corpora_dir, os.environ.get(SECRET_SEGMENT_ENV, ""))
    if key not in _CONTEXTS:
        _CONTEXTS[key] = make_context(root, corpora_dir)
    return _CONTEXTS[key]


def normalise_text(text: str) -> str:
    """NFC + whitespace runs collapsed to one space + stripped (so re-wrapping a secret line does not hide it)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def secret_strings(corpus: Corpus) -> set[str]:
    """Normalised source, reference and variant texts of every entry of a secret-segment file (all entries count)."""
    out: set[str] = set()
    for e in corpus.entries:
        for t in (e.source, e.reference, *e.variants):
            n = normalise_text(t)
            if n:
                out.add(n)
    return out


# --------------------------------------------------------------------------------------------------------------------
# Helpers


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve(strict=False).relative_to(root.resolve()).as_posix() if path.is_absolute() else \
            path.as_posix()
    except ValueError:
        return path.as_posix()


def _safe_name(text: str, limit: int = 120) -> str:
    """A path shown in messages: ASCII-escaped and shortened (paths come from contributors)."""
    short = text[:limit] + ("…" if len(text) > limit else "")
    if short.isascii() and short.isprintable():
        return short
    return ascii(short)[1:-1]


def _jpath(parts: Iterable[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def slug(text: str, limit: int = 80) -> str:
    """File-name-safe slug: NFKD → ASCII, lower case, runs of characters outside ``[a-z0-9.-]`` → ``-``.

    ``google/gemini-2.5-flash`` → ``google-gemini-2.5-flash``; ``apertium/eng-spa`` → ``apertium-eng-spa``.
    Never empty (``x`` for text without any allowed character); never starts with ``.`` or ``-``.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    s = SLUG_RE.sub("-", ascii_text)
    s = re.sub(r"-{2,}", "-", s).strip("-.")
    s = s[:limit].rstrip("-.")
    return s or "x"


def canonical_name(card: RunCard) -> str:
    """``<model-slug>__<condition>__<first 12 hex of run_card_hash>.json`` (allow-listed characters only)."""
    return f"{slug(card.model_slug)}__{slug(card.condition, 60)}__{card.run_card_hash[:12]}.json"


def canonical_relpath(card: RunCard) -> str:
    """``submissions/<dataset id>/<canonical_name>`` (POSIX separators)."""
    return f"{SUBMISSIONS_DIR}/{card.dataset.id}/{canonical_name(card)}"


# --------------------------------------------------------------------------------------------------------------------
# The per-card run


class _Run:
    """Collects problems and statuses for one file."""

    def __init__(self, where: str):
        self.where = where
        self.problems: list[Problem] = []
        self.status: dict[str, Status] = {}
        self.skipped: dict[str, str] = {}

    def fail(self, check: str, message: str, field: str | None = None) -> None:
        self.problems.append(Problem(check=check, where=self.where, field=field, message=message))
        self.status[check] = "fail"

    def done(self, check: str) -> None:
        self.status.setdefault(check, "pass")

    def skip(self, check: str, why: str) -> None:
        if check not in self.status:
            self.status[check] = "skip"
            self.skipped[check] = why

    def failed(self, *checks: str) -> bool:
        return any(self.status.get(c) == "fail" for c in checks)

    def report(self, path: str, card: RunCard | None) -> CardReport:
        for c in CARD_CHECKS:
            self.skip(c, "not reached")
        return CardReport(path=path, checks={c: self.status[c] for c in CARD_CHECKS}, skipped=self.skipped,
                          problems=self.problems, run_card_hash=card.run_card_hash if card else None,
                          run_id=card.run_id if card else None)


def _check_path(run: _Run, path: Path, ctx: Context) -> os.stat_result | None:
    """``file`` and ``size``: refuse without opening. Returns the lstat result when the file may be read."""
    if any(part == ".." for part in path.parts):
        run.fail("file", "path has a '..' component; pass paths inside the repository (refused without reading)")
        return None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        run.fail("file", "file not found")
        return None
    except OSError as exc:
        run.fail("file", f"cannot stat the file ({exc.strerror})")
        return None
    if stat.S_ISLNK(st.st_mode):
        run.fail("file", "is a symbolic link; refused without reading it (commit the file itself)")
        return None
    if not stat.S_ISREG(st.st_mode):
        run.fail("file", "is not a regular file; refused without reading it")
        return None
    # Inside the repository, a parent folder must not be a link leading elsewhere.
    root = ctx.root.resolve()
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        absolute.relative_to(ctx.root.absolute())
        inside = True
    except ValueError:
        inside = False
    if inside:
        try:
            Path(os.path.realpath(absolute.parent)).relative_to(root)
        except ValueError:
            run.fail("file", "a folder on the path is a link leading outside the repository; refused without reading")
            return None
    run.done("file")
    if st.st_size > MAX_CARD_BYTES:
        run.fail("size", f"file is {st.st_size} bytes, over the {MAX_CARD_BYTES}-byte limit; refused without "
                         "reading (split the run or drop unneeded raw responses)")
        return None
    run.done("size")
    return st


def _read(run: _Run, path: Path) -> bytes | None:
    try:
        return safejson.read_bytes(path, max_bytes=MAX_CARD_BYTES)
    except InputError as exc:
        check = "size" if "limit" in exc.problem else "file"
        run.fail(check, exc.problem + (f" (fix: {exc.fix})" if exc.fix else ""))
        return None


def validate_bytes(raw: bytes, where: str, ctx: Context, *, relpath: str | None = None) -> CardReport:
    """Run every content check on card bytes already read safely.

    Args:
        raw: the file content.
        where: name used in problems (path relative to the root when known).
        ctx: corpora, secrets and clock.
        relpath: POSIX path relative to the repository root, for the ``file_name`` check (None: not a submission).
    """
    run = _Run(where)
    run.done("file")
    if len(raw) > MAX_CARD_BYTES:
        run.fail("size", f"file is {len(raw)} bytes, over the {MAX_CARD_BYTES}-byte limit")
        return run.report(where, None)
    run.done("size")
    return _validate_content(run, raw, where, ctx, relpath)


def validate_card(path: str | os.PathLike[str], ctx: Context | None = None, *,
                  corpora_dir: str | os.PathLike[str] | None = None) -> CardReport:
    """Validate one card file. Never raises for problems in the file (they are in the report).

    Args:
        path: the card file.
        ctx: shared context; default: :func:`make_context` with the current folder as root.
        corpora_dir: used only when ``ctx`` is None.

    Returns: :class:`CardReport` (``.problems`` empty when the card passes every check).
    """
    if ctx is None:
        ctx = _cached_context(str(Path(".").absolute()), str(corpora_dir) if corpora_dir else None)
    p = Path(path)
    where = _safe_name(_rel(p, ctx.root))
    run = _Run(where)
    if _check_path(run, p, ctx) is None:
        return run.report(where, None)
    raw = _read(run, p)
    if raw is None:
        return run.report(where, None)
    relpath = None
    try:
        relpath = p.absolute().relative_to(ctx.root.absolute()).as_posix()
    except ValueError:
        pass
    return _validate_content(run, raw, where, ctx, relpath)


def _validate_content(run: _Run, raw: bytes, where: str, ctx: Context, relpath: str | None) -> CardReport:
    # json ------------------------------------------------------------------------------------------------------
    try:
        data = safejson.loads(raw, where=where, max_bytes=MAX_CARD_BYTES)
    except InputError as exc:
        run.fail("json", exc.problem + (f" (fix: {exc.fix})" if exc.fix else ""), field=exc.field)
        _check_secrets_text(run, raw)
        run.done("secrets")
        return run.report(where, None)
    run.done("json")

    # secrets + sovereignty on the raw value: they run whatever the schema says --------------------------------------
    _check_secrets_value(run, data, raw.decode("utf-8"))
    _check_secret_text(run, data, ctx)

    # schema ----------------------------------------------------------------------------------------------------
    try:
        card = RunCard.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        for err in errors[:20]:
            msg = "unknown field (not in the schema)" if err["type"] == "extra_forbidden" else err["msg"]
            # custom validators may quote the offending value: keep messages short and escaped
            run.fail("schema", _safe_name(msg, 160) + " (see `mtboard schema run-card`)",
                     field=_safe_name(_jpath(err["loc"]), 160))
        if len(errors) > 20:
            run.fail("schema", f"... and {len(errors) - 20} more schema problems")
        return run.report(where, None)
    run.done("schema")

    _check_harness(run, card)
    _check_file_name(run, card, relpath)
    _check_hash(run, card, data)
    _check_fingerprint(run, card)
    _check_method(run, card)
    _check_timestamps(run, card, ctx)
    _check_sovereignty_card(run, card)
    known = _check_dataset(run, card, ctx)
    entries = _check_entries(run, card, known) if known else None
    if entries is not None:
        _check_texts(run, card, entries)
    if entries is None:
        for c in ("entries", "texts", "metrics", "mechanical", "signatures"):
            run.skip(c, "dataset not matched")
    elif run.failed("harness_version"):
        for c in ("metrics", "mechanical", "signatures"):
            run.skip(c, "harness version not supported: recomputation would not be comparable")
    elif run.failed("entries"):
        for c in ("metrics", "mechanical", "signatures"):
            run.skip(c, "entries do not match the corpus")
    elif not ctx.recompute:
        for c in ("metrics", "mechanical", "signatures"):
            run.skip(c, "recomputation switched off")
    else:
        _check_recomputation(run, card, entries, known)
    _check_judges(run, card)
    for c in ("sovereignty", "secrets"):
        run.done(c)
    return run.report(where, card)


# --------------------------------------------------------------------------------------------------------------------
# Individual checks


def _version_tuple(v: str) -> tuple[int, ...] | None:
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", v)
    if not m:
        return None
    return tuple(int(x or 0) for x in m.groups())


def _check_harness(run: _Run, card: RunCard) -> None:
    got = _version_tuple(card.harness_version)
    here = _version_tuple(__version__)
    oldest = _version_tuple(OLDEST_SUPPORTED_HARNESS)
    if got is None:
        run.fail("harness_version", "harness_version is not a version number (expected e.g. 0.1.0)",
                 "$.harness_version")
    elif got < oldest:
        run.fail("harness_version",
                 f"card made by mtboard {card.harness_version}, older than the oldest card format this validator "
                 f"reads ({OLDEST_SUPPORTED_HARNESS}); no migration exists because the sealed hash and the scores "
                 f"depend on that format: re-run the method with mtboard >= {OLDEST_SUPPORTED_HARNESS}",
                 "$.harness_version")
    elif got[:2] != here[:2] or got > here:
        which = "newer" if got > here else "older"
        fix = ("update the validator (pip install -U mtboard)" if got > here
               else f"re-run with mtboard {__version__} (scores from {card.harness_version} are not recomputable "
                    "bit-for-bit by this version)")
        run.fail("harness_version", f"card made by mtboard {card.harness_version}, {which} than this validator "
                                    f"({__version__}); {fix}", "$.harness_version")
    run.done("harness_version")


def _check_file_name(run: _Run, card: RunCard, relpath: str | None) -> None:
    if relpath is None or not relpath.startswith(SUBMISSIONS_DIR + "/"):
        run.skip("file_name", "not under submissions/")
        return
    expected = canonical_relpath(card)
    if relpath != expected:
        run.fail("file_name", f"file should be at {expected} (derived from dataset.id, model_slug, condition and "
                              "run_card_hash); `mtboard submit CARD` copies it there")
    run.done("file_name")


def _check_hash(run: _Run, card: RunCard, data: dict[str, Any]) -> None:
    if not card.run_card_hash:
        run.fail("run_card_hash", "card is not sealed (run_card_hash is empty)", "$.run_card_hash")
        return
    # Hash the parsed input, not a re-dump of the model: a field the model normalises (e.g. 1.0 vs 1) must not
    # change the verdict; the schema already rejected unknown fields.
    actual = canonical.run_card_hash(data)
    if actual != card.run_card_hash:
        run.fail("run_card_hash", f"stored seal {card.run_card_hash[:12]}… does not match the content "
                                  f"({actual[:12]}…): the card was changed after it was sealed", "$.run_card_hash")
    run.done("run_card_hash")


def _check_fingerprint(run: _Run, card: RunCard) -> None:
    fp = card.fingerprint
    try:
        derived = fingerprint_components(card)
    except MtboardError as exc:  # pragma: no cover - components derive from schema-valid fields
        run.fail("fingerprint", exc.problem, "$.fingerprint")
        return
    for key in sorted(set(derived) | set(fp.components)):
        if key not in fp.components:
            run.fail("fingerprint", "component missing", f"$.fingerprint.components.{key}")
        elif key not in derived:
            run.fail("fingerprint", "unknown component", f"$.fingerprint.components.{key}")
        elif canonical.canonical_bytes(fp.components[key]) != canonical.canonical_bytes(derived[key]):
            run.fail("fingerprint", "component does not match the card's own fields (re-derived with "
                                    "mtboard.card.fingerprint_components)", f"$.fingerprint.components.{key}")
    try:
        h = canonical.fingerprint_hash(dict(fp.components), fp.version)
    except MtboardError:
        h = None
    if h is not None and h != fp.hash:
        run.fail("fingerprint", "fingerprint hash does not match its components", "$.fingerprint.hash")
    run.done("fingerprint")


def _check_method(run: _Run, card: RunCard) -> None:
    m = card.method
    expected_spec = f"{m.backend}:{m.model}" + (f":{m.effort}" if m.effort else "")
    if m.spec != expected_spec:
        run.fail("method", "method.spec does not equal backend:model[:effort] of the same record", "$.method.spec")
    if canonical.sha256_hex(card.system_prompt_used) != card.system_prompt_sha256:
        run.fail("method", "system_prompt_sha256 is not the SHA-256 of system_prompt_used", "$.system_prompt_sha256")
    from mtboard.backends.base import REGISTRY, load_builtin_backends  # noqa: PLC0415

    load_builtin_backends()
    cls = REGISTRY.get(m.backend)
    if cls is not None:
        want = getattr(cls, "method_class", None)
        want = getattr(want, "value", want)
        if want is not None and card.method_class.value != want:
            run.fail("method", f"method_class {card.method_class.value} but backend {m.backend} is {want}",
                     "$.method_class")
    if cls is not None and getattr(cls, "prompt_format", None) == "raw":
        if m.prompt_format != "raw" or m.prompt_name is not None or card.system_prompt_used:
            run.fail("method", f"backend {m.backend} takes the raw source: prompt_format must be raw, with no prompt",
                     "$.method.prompt_format")
    mc = card.method_config
    pairs = (("model", mc.model, card.model_slug, "model_slug"), ("temperature", mc.temperature, card.temperature,
             "temperature"), ("batchSize", mc.batchSize, card.batch_size, "batch_size"),
             ("qualityTier", mc.qualityTier, card.scores.quality_tier.value, "scores.quality_tier"),
             ("promptContext", mc.promptContext, m.prompt_name, "method.prompt_name"))
    for name, got, want, src in pairs:
        if got != want:
            run.fail("method", f"method_config.{name} does not mirror {src}", f"$.method_config.{name}")
    if card.fst_version is not None:
        from mtboard import fst as fst_mod  # noqa: PLC0415

        analyser = fst_mod.find_analyser(card.dataset.target_language)
        if analyser is None or analyser.version != card.fst_version:
            run.fail("method", "fst_version names an analyser this validator does not have (install the same "
                               "Apertium package version to recompute FST acceptance)", "$.fst_version")
    run.done("method")


def _parse_ts(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _check_timestamps(run: _Run, card: RunCard, ctx: Context) -> None:
    ts = _parse_ts(card.timestamp)
    if ts is None:  # pragma: no cover - the schema already parsed it
        run.fail("timestamps", "timestamp is not ISO 8601", "$.timestamp")
        return
    if ts.tzinfo is None or ts.utcoffset() != timedelta(0):
        run.fail("timestamps", "timestamp must be UTC (end with Z or +00:00)", "$.timestamp")
    else:
        now = ctx.clock()
        end = ts + timedelta(seconds=card.elapsed_seconds)
        if ts < EARLIEST_TIMESTAMP:
            run.fail("timestamps", f"timestamp is before {EARLIEST_TIMESTAMP.date()}: implausible", "$.timestamp")
        if ts > now + CLOCK_SKEW:
            run.fail("timestamps", "timestamp is in the future", "$.timestamp")
        elif end > now + CLOCK_SKEW:
            run.fail("timestamps", "timestamp + elapsed_seconds ends in the future", "$.elapsed_seconds")
    lat = [r.latency_s for r in card.results if r.latency_s is not None]
    if lat:
        longest = max(lat)
        if card.elapsed_seconds + 1e-6 < longest:
            run.fail("timestamps", f"elapsed_seconds {card.elapsed_seconds} is shorter than the slowest entry "
                                   f"({longest} s)", "$.elapsed_seconds")
        lanes = max(1, card.method.concurrency) * max(1, card.batch_size)
        if card.elapsed_seconds * lanes * (1 + 1e-6) + 1.0 < sum(lat) / max(1, card.method.runs):
            run.fail("timestamps", f"elapsed_seconds {card.elapsed_seconds} cannot hold the summed entry latencies "
                                   f"({sum(lat):.3f} s over {lanes} concurrent lanes)", "$.elapsed_seconds")
    run.done("timestamps")


def _check_sovereignty_card(run: _Run, card: RunCard) -> None:
    if card.dataset.segment in SECRET_SEGMENTS:
        run.fail("sovereignty", f"dataset.segment is {card.dataset.segment.value}: secret segments are never "
                                "published (spec §8); submit development-segment runs only", "$.dataset.segment")
    for i, r in enumerate(card.results):
        if r.segment in SECRET_SEGMENTS:
            run.fail("sovereignty", f"result is from the secret {r.segment.value} segment (spec §8)",
                     f"$.results[{i}].segment")


def _strings(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """Every string (keys included) in a parsed JSON value with its path; iterative (depth already capped)."""
    stack: list[tuple[tuple, Any]] = [(path, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(v, str):
            yield p, v
        elif isinstance(v, dict):
            for k, x in v.items():
                yield p, k
                stack.append((p + (k,), x))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                stack.append((p + (i,), x))


def _check_secret_text(run: _Run, data: Any, ctx: Context) -> None:
    if not ctx.secret_strings:
        return
    for p, s in _strings(data):
        hit = find_secret_text(s, ctx)
        if hit:
            run.fail("sovereignty", f"contains text of a secret-segment entry ({hit}; source: {ctx.secret_source}); "
                                    "secret segments never appear in a public repository (spec §8)", _jpath(p))


def find_secret_text(text: str, ctx: Context) -> str | None:
    """Describe how ``text`` contains secret-segment text (``'equal'`` / ``'substring'``) or None."""
    n = normalise_text(text)
    if not n:
        return None
    if n in ctx.secret_strings:
        return "equal to a secret text"
    if len(n) >= SECRET_MIN_SUBSTRING:
        for s in ctx.long_secrets():
            if s in n:
                return "a secret text inside it"
    return None


# API-key-like patterns: provider prefixes with enough key material that ordinary prose does not match.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI/Anthropic-style key (sk-…)", re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}")),
    ("Hugging Face token (hf_…)", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),
    ("AWS access key id (AKIA…)", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("HTTP bearer credential (Bearer …)", re.compile(r"\b(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*")),
    ("GitHub token (ghp_…)", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("Google API key (AIza…)", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("Slack token (xox…)", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("private key block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)


_KEY_MARKERS: tuple[tuple[str, ...], ...] = (("sk-",), ("hf_",), ("AKIA", "ASIA"), ("bearer",),
                                            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ("AIza",),
                                            ("xox",), ("PRIVATE KEY",))
"""Literal text each pattern of SECRET_PATTERNS needs (same order; 'bearer' is matched case-insensitively): a fast
substring pre-filter so the regular expressions run only where they can match."""


def find_key_like(text: str) -> str | None:
    """Name of the first API-key-like pattern found in ``text`` (the match itself is never returned)."""
    lowered: str | None = None
    for (name, rx), markers in zip(SECRET_PATTERNS, _KEY_MARKERS):
        if markers == ("bearer",):
            lowered = text.lower() if lowered is None else lowered
            present = "bearer" in lowered
        else:
            present = any(m in text for m in markers)
        if present and rx.search(text):
            return name
    return None


def _check_secrets_value(run: _Run, data: Any, text: str | None = None) -> None:
    """Report every string of the parsed card that looks like an API key, by JSON path.

    Fast path: when the raw JSON text has no escape sequences (canonical cards escape only control characters, and
    key-like tokens are plain ASCII), one C-level scan of the raw text proves there is nothing to find.
    """
    if text is not None and "\\u" not in text and "\\/" not in text and find_key_like(text) is None:
        return
    for p, s in _strings(data):
        name = find_key_like(s)
        if name:
            run.fail("secrets", f"looks like an {name}; remove it, rotate the key, and re-run", _jpath(p))


def _check_secrets_text(run: _Run, raw: bytes) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    name = find_key_like(text)
    if name:
        run.fail("secrets", f"file contains what looks like an {name}; remove it and rotate the key")


def _check_dataset(run: _Run, card: RunCard, ctx: Context) -> KnownCorpus | None:
    d = card.dataset
    corpora = ctx.corpora()
    same_id = [k for k in corpora if k.corpus.dataset.id == d.id]
    if not same_id:
        known = sorted({k.corpus.dataset.id for k in corpora})
        shown = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        run.fail("dataset", f"no corpus with this dataset id in {ctx.corpora_dir.name}/ (known: {shown or 'none'}); "
                            "cards must evaluate a published corpus", "$.dataset.id")
        return None
    same_version = [k for k in same_id if k.corpus.dataset.version == d.version]
    if not same_version:
        have = ", ".join(sorted(k.corpus.dataset.version for k in same_id))
        run.fail("dataset", f"dataset version {d.version} is not published (have: {have})", "$.dataset.version")
        return None
    match = [k for k in same_version if k.sha256 == d.sha256]
    if not match:
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
    """The entries a card must have evaluated: its segment in corpus order, cut to ``method.limit`` when set."""
    seg = corpus.segment(card.dataset.segment)
    if card.method.limit is not None:
        seg = seg[: card.method.limit]
    return seg


def _check_entries(run: _Run, card: RunCard, known: KnownCorpus) -> list[Entry] | None:
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


_TEXT_FIELDS = (("source", "source"), ("expected", "reference"))
_META_FIELDS = ("segment", "difficulty", "domain", "provenance")


def _check_texts(run: _Run, card: RunCard, entries: list[Entry]) -> None:
    by_id = {e.id: e for e in entries}
    for i, r in enumerate(card.results):
        e = by_id.get(r.entry_id)
        if e is None:
            continue
        for mine, theirs in _TEXT_FIELDS:
            if getattr(r, mine) != getattr(e, theirs):
                run.fail("texts", f"differs from the corpus {theirs} of entry {e.id}", f"$.results[{i}].{mine}")
        for name in _META_FIELDS:
            if getattr(r, name) != getattr(e, name):
                run.fail("texts", f"differs from the corpus {name} of entry {e.id}", f"$.results[{i}].{name}")
    run.done("texts")


# --------------------------------------------------------------------------------------------------------------------
# Recomputation (metrics, mechanical, signatures)

# Where each recomputed field is reported. Anything not listed is "metrics".
_MECHANICAL_SCORE_KEYS = frozenset({"mechanical", "policy_version"})
_SIGNATURE_SCORE_KEYS = frozenset({"signatures"})
_MECHANICAL_ENTRY_KEYS = frozenset({"checks", "predicted"})
# Fields outside the recomputation: judge output (checked for consistency by the "judges" check) and replicate
# statistics of --runs N (the card carries only run 0's outputs).
_UNRECOMPUTED_SCORE_KEYS = frozenset({"replicates"})
_UNRECOMPUTED_ENTRY_KEYS = frozenset({"judgements"})


def _diff(a: Any, b: Any, path: tuple, out: list[tuple[tuple, Any, Any]], limit: int = 50) -> None:
    """Exact structural difference of two JSON values (stored ``a`` vs recomputed ``b``)."""
    # Fast path (C-level equality). Both sides are dumps of the same strict pydantic models, so the types of equal
    # values agree (no True-vs-1 ambiguity outside JsonValue fields).
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            _diff(a.get(k, _MISSING), b.get(k, _MISSING), path + (k,), out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, path + (i,), out, limit)
    elif type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                         and not isinstance(a, bool) and not isinstance(b, bool)):
        out.append((path, a, b))
    elif a != b:
        out.append((path, a, b))


_MISSING = object()


def _show(v: Any) -> str:
    """A value for a message: numbers, booleans and null as JSON; text never (only its length)."""
    if v is _MISSING:
        return "absent"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return f"a {len(v)}-character text"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    return "an object"


def _recompute(card: RunCard, entries: list[Entry]):
    """Re-run scoring exactly as the runner did (``mtboard.runner.finish``).

    Inputs rebuilt from the card: one TranslationRecord per result (raw output, error, attempts, latency, usage), the
    corpus entries, ``elapsed_seconds / runs`` (the per-replicate time the runner scores with), FST on exactly when
    the card has an FST acceptance rate, ``strip_unknown_marks`` from the registered backend, the recorded prices.

    Returns: (Scores, list[EntryResult], Totals | None). Totals are recomputed for single-run cards only (with
    ``--runs N`` they sum all replicates, whose outputs the card does not carry).
    """
    from mtboard import scoring  # noqa: PLC0415 - heavy import (sacrebleu) only when needed
    from mtboard.schema import TranslationRecord  # noqa: PLC0415

    records = [TranslationRecord(entry_id=r.entry_id, raw_predicted=r.raw_predicted, error=r.error,
                                 error_kind=r.error_kind, attempts=r.attempts, latency_s=r.latency_s, usage=r.usage)
               for r in card.results]
    m = card.method
    runs = max(1, m.runs)
    scores, results = scoring.score_run(
        entries, records, source_language=card.dataset.source_language, target_language=card.dataset.target_language,
        elapsed_seconds=card.elapsed_seconds / runs, fst=card.scores.fst_acceptance_rate is not None,
        strip_unknown_marks=_strip_unknown_marks(card), price_in_per_mtok=m.price_in_per_mtok,
        price_out_per_mtok=m.price_out_per_mtok)
    totals = None
    if runs == 1:
        from mtboard.runner import compute_totals  # noqa: PLC0415

        totals = compute_totals(records, entries, 1, m.price_in_per_mtok, m.price_out_per_mtok)
    return scores, results, totals


def _strip_unknown_marks(card: RunCard) -> bool:
    """The backend's ``strip_unknown_marks`` class attribute (what the runner passed to scoring)."""
    from mtboard.backends.base import REGISTRY, load_builtin_backends  # noqa: PLC0415

    load_builtin_backends()
    cls = REGISTRY.get(card.method.backend)
    return bool(getattr(cls, "strip_unknown_marks", False))


def _classify_score_key(key: str) -> str | None:
    if key in _UNRECOMPUTED_SCORE_KEYS:
        return None
    if key in _MECHANICAL_SCORE_KEYS:
        return "mechanical"
    if key in _SIGNATURE_SCORE_KEYS:
        return "signatures"
    return "metrics"


def _classify_entry_key(key: str) -> str | None:
    if key in _UNRECOMPUTED_ENTRY_KEYS:
        return None
    if key in _MECHANICAL_ENTRY_KEYS:
        return "mechanical"
    return "metrics"


def _check_recomputation(run: _Run, card: RunCard, entries: list[Entry], known: KnownCorpus) -> None:
    for i, r in enumerate(card.results):
        if (r.error is None) != (r.error_kind is None):
            run.fail("mechanical", "error and error_kind must be set together (a failure has a message and a kind)",
                     f"$.results[{i}].error")
    try:
        scores, results, totals = _recompute(card, entries)
    except MtboardError as exc:
        for c in ("metrics", "mechanical", "signatures"):
            run.fail(c, f"recomputation failed: {exc.problem}")
        return
    stored = card.scores.model_dump(mode="json")
    fresh = scores.model_dump(mode="json")
    diffs: list[tuple[tuple, Any, Any]] = []
    _diff(stored, fresh, (), diffs, limit=10_000)
    reported: dict[str, int] = {}
    for path, a, b in diffs:
        check = _classify_score_key(str(path[0]))
        if check is None:
            continue
        if reported.get(check, 0) >= 20:
            continue
        reported[check] = reported.get(check, 0) + 1
        run.fail(check, f"stored {_show(a)}, recomputed {_show(b)}", _jpath(("scores",) + path))
    if totals is not None:
        d2: list[tuple[tuple, Any, Any]] = []
        _diff(card.totals.model_dump(mode="json"), totals.model_dump(mode="json"), (), d2)
        for path, a, b in d2:
            if str(path[0]).startswith("judge_"):
                continue
            run.fail("metrics", f"stored {_show(a)}, recomputed {_show(b)}", _jpath(("totals",) + path))
    if len(results) != len(card.results):
        run.fail("metrics", f"recomputation produced {len(results)} results for {len(card.results)} stored",
                 "$.results")
    else:
        for i, (mine, theirs) in enumerate(zip(card.results, results)):
            d3: list[tuple[tuple, Any, Any]] = []
            _diff(mine.model_dump(mode="json"), theirs.model_dump(mode="json"), (), d3)
            for path, a, b in d3:
                check = _classify_entry_key(str(path[0]))
                if check is None:
                    continue
                if reported.get(check, 0) >= 20:
                    continue
                reported[check] = reported.get(check, 0) + 1
                run.fail(check, f"stored {_show(a)}, recomputed {_show(b)}", _jpath(("results", i) + path))
    _check_signature_semantics(run, card)
    for c in ("metrics", "mechanical", "signatures"):
        run.done(c)


def _sig_fields(sig: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in sig.split("|"):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k] = v
    return out


def _check_signature_semantics(run: _Run, card: RunCard) -> None:
    """A chrF++ score must carry a chrF++ signature (nc:6, nw:2), and every signature the installed sacrebleu."""
    import sacrebleu  # noqa: PLC0415

    sig = card.scores.signatures
    chrf = _sig_fields(sig.chrf)
    if chrf.get("nw") != "2":
        run.fail("signatures", f"chrf_plus_plus needs word n-grams (nw:2); signature says nw:{chrf.get('nw', '?')}",
                 "$.scores.signatures.chrf")
    if chrf.get("nc") != "6":
        run.fail("signatures", f"chrF++ uses character 6-grams (nc:6); signature says nc:{chrf.get('nc', '?')}",
                 "$.scores.signatures.chrf")
    for name in ("chrf", "bleu", "ter"):
        fields = _sig_fields(getattr(sig, name))
        if fields.get("nrefs") not in (None, "1"):
            run.fail("signatures", f"nrefs:{fields['nrefs']} but cards score against one reference",
                     f"$.scores.signatures.{name}")
        v = fields.get("version")
        if v is not None and v != sacrebleu.__version__:
            run.fail("signatures", f"scored with sacrebleu {v}; this validator has {sacrebleu.__version__}, so "
                                   "scores cannot be recomputed bit-for-bit (re-score with the pinned version)",
                     f"$.scores.signatures.{name}")


def _check_judges(run: _Run, card: RunCard) -> None:
    """Judge summaries must agree with the per-entry verdicts (the judge itself cannot be re-run here).

    Per judge: every result has a verdict; n_scored/n_failed/n_not_sent count the statuses; entry judges send exactly
    the usable outputs (others are ``not_sent``) and their mean is the mean of scores with unscored entries at
    ``worst_score`` (mtboard.judges.run); parse_failure_rate = unparsed / answers; a scored verdict has a score.
    Totals: judge token sums equal the summaries' sums. Without judges: no verdicts, judge totals zero.
    """
    import statistics  # noqa: PLC0415

    t = card.totals
    if not card.judges:
        kinds = {k for r in card.results for k in r.judgements}
        if kinds:
            run.fail("judges", f"results carry verdicts of {len(kinds)} judge(s) that have no summary in $.judges",
                     "$.judges")
        if t.judge_prompt_tokens or t.judge_completion_tokens or t.judge_cost_usd is not None:
            run.fail("judges", "judge totals are set but no judge ran", "$.totals")
        if not run.failed("judges"):
            run.skip("judges", "no judges ran")
        return
    for kind, summary in card.judges.items():
        where = f"$.judges.{kind}"
        if summary.kind != kind:
            run.fail("judges", "summary kind differs from its key", f"{where}.kind")
        verdicts = [r.judgements.get(kind) for r in card.results]
        present = [v for v in verdicts if v is not None]
        if len(present) != len(card.results):
            run.fail("judges", f"{len(card.results) - len(present)} results have no verdict of this judge", where)
            continue
        counts = {s: sum(1 for v in present if v.status == s) for s in ("scored", "judge_failed", "not_sent")}
        for name, key in (("n_scored", "scored"), ("n_failed", "judge_failed"), ("n_not_sent", "not_sent")):
            if getattr(summary, name) != counts[key]:
                run.fail("judges", f"{name} {getattr(summary, name)} but {counts[key]} verdicts say {key}",
                         f"{where}.{name}")
        if summary.n_answers is not None and summary.n_unparsed_answers is not None:
            rate = summary.n_unparsed_answers / summary.n_answers if summary.n_answers else 0.0
            if summary.parse_failure_rate != rate:
                run.fail("judges", f"parse_failure_rate {summary.parse_failure_rate} but n_unparsed_answers/"
                                   f"n_answers = {rate}", f"{where}.parse_failure_rate")
        for i, (r, v) in enumerate(zip(card.results, verdicts)):
            if v.status == "scored" and v.score is None:
                run.fail("judges", "a scored verdict has no score", f"$.results[{i}].judgements.{kind}.score")
            if kind != "checkpoints" and (v.status == "not_sent") != (r.checks.outcome.value != "usable"):
                run.fail("judges", "only entries without usable output may be not_sent, and all of them must be",
                         f"$.results[{i}].judgements.{kind}.status")
        if kind != "checkpoints" and summary.worst_score is not None:
            vals = [v.score if v.score is not None else summary.worst_score for v in verdicts]
            mean = statistics.fmean(vals) if vals else None
            if summary.mean != mean:
                run.fail("judges", f"mean {summary.mean} but the verdicts give {mean}", f"{where}.mean")
    sums = {"judge_prompt_tokens": sum(j.prompt_tokens or 0 for j in card.judges.values()),
            "judge_completion_tokens": sum(j.completion_tokens or 0 for j in card.judges.values())}
    for name, value in sums.items():
        if getattr(t, name) != value:
            run.fail("judges", f"{name} {getattr(t, name)} but the judge summaries sum to {value}", f"$.totals.{name}")
    costs = [j.cost_usd for j in card.judges.values()]
    cost = sum(costs) if costs and all(c is not None for c in costs) else None  # type: ignore[arg-type]
    if t.judge_cost_usd != cost:
        run.fail("judges", f"judge_cost_usd {t.judge_cost_usd} but the judge summaries sum to {cost}",
                 "$.totals.judge_cost_usd")
    run.done("judges")


# --------------------------------------------------------------------------------------------------------------------
# Verification records beside cards


def validate_record(path: Path, ctx: Context, cards_by_hash: dict[str, str]) -> list[Problem]:
    """A verification record must parse strictly and name a card present beside it (same folder, same stem)."""
    where = _safe_name(_rel(path, ctx.root))
    try:
        raw = safejson.read_bytes(path, max_bytes=4 * 1024 * 1024)
        data = safejson.loads(raw, where=where)
        rec = validate_model(VerificationRecord, raw, where)
    except InputError as exc:
        return [Problem(check="verification", where=where, field=exc.field, message=exc.problem)]
    del data
    problems: list[Problem] = []
    card_name = path.name[: -len(VERIFICATION_SUFFIX)] + ".json"
    card_rel = cards_by_hash.get(rec.run_card_hash)
    if card_rel is None or Path(card_rel).name != card_name:
        problems.append(Problem(check="verification", where=where, field="$.run_card_hash",
                                message=f"record does not verify the card beside it ({card_name})"))
    return problems


# --------------------------------------------------------------------------------------------------------------------
# Many files, the repository, pull-request scope


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


def check_scope(changes: list[tuple[str, str]], *, allow_outside: bool) -> tuple[list[Problem], list[str]]:
    """The pull-request gate: only additions/modifications of ``submissions/<dataset>/<name>.json`` are allowed.

    Returns: (problems, submission paths to validate). With ``allow_outside`` (the maintainer label) files outside
    ``submissions/`` and deletions are accepted, but every added/modified submission is still validated.
    """
    problems: list[Problem] = []
    todo: list[str] = []
    for status, path in changes:
        shown = _safe_name(path)
        parts = path.split("/")
        in_submissions = len(parts) >= 2 and parts[0] == SUBMISSIONS_DIR
        if not in_submissions:
            if not allow_outside:
                problems.append(Problem(check="scope", where=shown,
                                        message="pull request changes a file outside submissions/; only maintainers "
                                                "may (label `maintainer-change`)"))
            continue
        if status in ("D", "T"):
            if not allow_outside:
                what = "deletes" if status == "D" else "changes the type of"
                problems.append(Problem(check="scope", where=shown,
                                        message=f"pull request {what} a submission; only maintainers may (label "
                                                "`maintainer-change`)"))
            continue
        if path.endswith(VERIFICATION_SUFFIX):
            if not allow_outside:
                problems.append(Problem(check="scope", where=shown,
                                        message="verification records are added by maintainers only (label "
                                                "`maintainer-change`); contributors submit cards"))
            continue
        if len(parts) != 3 or not DATASET_DIR_RE.match(parts[1]) or not NAME_RE.match(parts[2]):
            problems.append(Problem(check="scope", where=shown,
                                    message="submissions hold only submissions/<dataset id>/<model-slug>__<condition>"
                                            "__<12 hex>.json files (allow-listed characters)"))
            continue
        todo.append(path)
    return problems, todo


def _scan_tree_for_secrets(ctx: Context) -> list[Problem]:
    """Repository-wide sovereignty gate: corpora hold no secret segment; no file holds secret text."""
    problems: list[Problem] = []
    corpora_root = ctx.root / "corpora"
    for p in iter_card_paths([corpora_root]) if corpora_root.is_dir() else []:
        where = _safe_name(_rel(p, ctx.root))
        try:
            data = safejson.load_file(p, max_bytes=MAX_SCAN_BYTES)
        except InputError as exc:
            problems.append(Problem(check="sovereignty", where=where, message=f"unreadable: {exc.problem}"))
            continue
        entries = data.get("entries") if isinstance(data, dict) else None
        if isinstance(entries, list):
            for i, e in enumerate(entries):
                if isinstance(e, dict) and e.get("segment") in {s.value for s in SECRET_SEGMENTS}:
                    problems.append(Problem(check="sovereignty", where=where, field=f"$.entries[{i}].segment",
                                            message="secret-segment entry in a public corpus file (spec §8: "
                                                    "gold_standard/held_out stay off the repository)"))
        if ctx.secret_strings:
            problems.extend(_secret_hits(data, where, ctx))
    if ctx.secret_strings:
        sub = ctx.root / SUBMISSIONS_DIR
        for p in iter_card_paths([sub]) if sub.is_dir() else []:
            where = _safe_name(_rel(p, ctx.root))
            try:
                data = safejson.load_file(p, max_bytes=MAX_SCAN_BYTES)
            except InputError:
                continue  # reported by the per-card checks
            problems.extend(_secret_hits(data, where, ctx))
    return problems


def _secret_hits(data: Any, where: str, ctx: Context) -> list[Problem]:
    out = []
    for p, s in _strings(data):
        hit = find_secret_text(s, ctx)
        if hit:
            out.append(Problem(check="sovereignty", where=where, field=_jpath(p),
                               message=f"contains text of a secret-segment entry ({hit}; source: "
                                       f"{ctx.secret_source})"))
    return out


def validate_paths(paths: list[str | os.PathLike[str]] | None, ctx: Context, *,
                   changes: list[tuple[str, str]] | None = None, allow_outside: bool = False,
                   repository_checks: bool = True) -> ValidationReport:
    """Validate many files and the repository.

    Args:
        paths: files or folders; None/empty means ``<root>/submissions`` (or, with ``changes``, the changed
            submissions).
        ctx: :func:`make_context`.
        changes: (status, path) pairs from :func:`parse_changes` — the pull-request scope gate.
        allow_outside: the maintainer label is present.
        repository_checks: run duplicates / verification / sovereignty over the whole tree.

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
        reports.append(validate_card(p, ctx))
    repo.extend(ctx._corpus_problems)
    if repository_checks:
        repo.extend(_duplicates(reports))
        cards_by_hash = {r.run_card_hash: r.path for r in reports if r.run_card_hash and r.ok}
        for rec in records:
            repo.extend(validate_record(rec, ctx, cards_by_hash))
        repo.extend(_scan_tree_for_secrets(ctx))
    ok = not repo and all(r.ok for r in reports)
    return ValidationReport(validator_version=__version__, files=reports, repository=repo, ok=ok)


def _duplicates(reports: list[CardReport]) -> list[Problem]:
    problems: list[Problem] = []
    for attr, label in (("run_card_hash", "run_card_hash"), ("run_id", "run_id")):
        first: dict[str, str] = {}
        for r in reports:
            v = getattr(r, attr)
            if not v:
                continue
            if v in first:
                problems.append(Problem(check="duplicates", where=r.path,
                                        message=f"same {label} as {first[v]}; one card per run"))
            else:
                first[v] = r.path
    return problems


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
        passed = [c for c in CARD_CHECKS if f.checks[c] == "pass"]
        if passed:
            lines.append(f"  pass {', '.join(passed)}")
    if report.repository:
        lines.append("FAIL repository")
        for p in report.repository:
            lines.append(f"  FAIL {p.check}: {p.where}: {p.field + ': ' if p.field else ''}{p.message}")
    n_bad = sum(1 for f in report.files if not f.ok)
    counts = report.failed_checks()
    summary = ", ".join(f"{k} ({v})" for k, v in sorted(counts.items()))
    if report.ok:
        lines.append(f"validation passed: {len(report.files)} file(s), {len(CARD_CHECKS)} checks each")
    else:
        lines.append(f"validation FAILED: {n_bad} of {len(report.files)} file(s) failed"
                     + (", repository checks failed" if report.repository else "")
                     + (f"; failing checks: {summary}" if summary else ""))
    return "\n".join(lines)


def render_json(report: ValidationReport) -> str:
    """The report as JSON (``mtboard validate --format json``)."""
    return report.model_dump_json(indent=1)
