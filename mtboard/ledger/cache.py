"""The build cache of ``mtboard build`` (issue 35 item 3, "build what changed"): a card whose bytes and whose
validator did not change since the last build is not validated again (:class:`ValidationCache`), and the bootstrap
resamples of a row-view or of a sentinel line (:mod:`mtboard.ledger.sentinels`) whose statistics and draws did not
change are not computed again (:class:`ResampleCache`), nor the flip distance of two adjacent rows whose rows and view
did not change (:class:`FlipCache`, at the end of this module).

A verdict (the one-line problems of :func:`mtboard.validate.validate_card`, empty when the card passed) is stored
under a *key*: the SHA-256 of

* the cache format (:data:`CACHE_FORMAT`) and the harness version (``mtboard.__version__``);
* the SHA-256 of every file of the installed ``mtboard`` package the validator can run (modules and the data files
  they read, e.g. a judge's admission set)
  (:func:`validator_code_hash`: the stages up to ``validate/`` in docs/ARCHITECTURE.md's import order — the
  validator, the scorer, the policy, the schema, the backends — and this verdict path, ``ledger/load.py`` and this
  module): any edit there, bumped version or not, is another validator; an edit of the ledger's tables, the runner,
  the site or the CLI is not;
* Python's version and the name and version of every installed distribution (sacrebleu, the embedding package,
  plugins …);
* the prompt folder in use (:func:`mtboard.inputs.prompts.prompts_dir`: templates and the price table) and the
  repository's ``coaching/``, ``plugins/`` (``approved.yaml``: the ``installable`` rule) and ``official/`` folders
  (the gold scores-only cards and their bundles: the ``governance`` rule and the tier a card claims), file by file;
* every corpus file of the corpora folder (name and SHA-256 of its bytes), and the secret-segment file (SHA-256 of its
  bytes) with the name messages give it;
* for the card: the SHA-256 of its bytes, its path relative to the repository root and to the submissions folder
  (the ``file_name`` check, the messages), and — only when the card needs them — the installed plugin record of its
  backend (:func:`mtboard.backends.base.plugin_record`) and the Apertium analyser of its target language
  (:func:`mtboard.score.fst.find_analyser`), and the Apertium analyser + tagger of its language pair when it has a
  morphological accuracy (:func:`mtboard.score.morphology.find_morph_analyser`); and the verification records in its
  folder (``*.verification.json`` and their bundles, name and SHA-256 each: the submission gate reads them to decide
  the tier the card claims, :func:`mtboard.validate.submission.claimed_tier`).

Review records are not validator inputs; ``load_inputs`` checks them and verification records (attestations) on
every build.
A verdict that depends on the clock is never stored: one with a ``timestamps`` problem ("in the future" ends), and
that of a card with a gold scores-only card under ``official/`` (the gate validates that card's timestamp too).

Storage: ``DIR/validation/KK/KEY.json`` (``KK`` = the key's first two hex digits), JSON written to a temporary file and
renamed into place (``os.replace``: a reader sees the old entry or the new one; no fsync, the cache only saves time): ``{"format": CACHE_FORMAT, "key": KEY, "problems": [str, …]}``. The folder
may come back from ``actions/cache``, so nothing in it is trusted: an entry is read with
:mod:`mtboard.core.safejson` (no symlinks, at most :data:`MAX_ENTRY_BYTES`), and used only when it is an object with
exactly those fields, the format and the key it is filed under, and a list of strings; anything else (unreadable,
truncated, a foreign file, a key that does not match) is a miss, recomputed and overwritten. Never pickle.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import stat
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath

import numpy as np

from mtboard.core import safejson
from mtboard.core.cachefiles import real_folders, regular_file, write_entry
from mtboard.core.errors import MtboardError

CACHE_FORMAT = "mtboard-validation-cache/1"
"""Written into every entry and hashed into every key; change it when the entry's meaning changes."""
MAX_ENTRY_BYTES = 4 * 1024 * 1024
"""An entry larger than this is not read (a verdict is a few lines)."""
DEFAULT_CACHE = ".mtboard-cache"
"""The default cache folder, relative to the project root (git-ignored)."""


def _name(text: str) -> bytes:
    """``text`` (holding file names) as bytes for a hash: UTF-8, a name's undecodable bytes as they are on disk
    (``surrogateescape``, :func:`os.fsencode`'s error handler) — a file named ``b"\\xff"`` is a name, not a crash."""
    return text.encode("utf-8", "surrogateescape")


def _digest_files(h, label: str, folder: Path | None) -> None:
    """Feed ``label``, then every regular file under ``folder`` (path relative to it, SHA-256 of its bytes, sorted;
    links recorded as links, never followed) into ``h``; a missing folder is recorded as missing."""
    h.update(f"\0{label}\0".encode())
    if folder is None or not folder.exists():
        h.update(b"missing")
        return
    if folder.is_symlink():
        h.update(b"link")
        return
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            if p.is_symlink():
                h.update(_name(f"{rel}\0link\0"))
            elif p.is_file():
                h.update(_name(f"{rel}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\0"))
    for dirpath, dirnames, _ in os.walk(folder, followlinks=False):  # linked folders are recorded, not entered
        for d in sorted(dirnames):
            if (Path(dirpath) / d).is_symlink():
                h.update(_name(f"{(Path(dirpath) / d).relative_to(folder).as_posix()}\0dirlink\0"))


VALIDATOR_FREE = ("run", "verify", "sweeps", "ledger", "site", "cli", "__main__.py")
"""Sub-packages (and the entry point) no validator module can import: the stages after ``validate/`` in
docs/ARCHITECTURE.md's import order (the runner, re-runs, sweeps, the ledger, the site, the CLI), which
``tests/test_architecture.py`` forbids ``validate/`` and every stage before it to import, statically or inside a
function (the only dynamic imports below them are the backends' entry points, ``backends/``, the weights packages
of model records, and the own submodules ``core/lazy.py`` imports for ``core/schema/``, ``inputs/corpora/`` and
``validate/``, none in ``mtboard``'s upper stages). Left out of :func:`validator_code_hash` so that
editing a ledger table, the runner or a page template does not validate every card again (at 1,000 cards that is
~6 minutes of the site workflow per change); :data:`VALIDATOR_KEPT` names the files among them that a verdict does
run."""
VALIDATOR_KEPT = ("ledger/load.py", "ledger/cache.py")
"""The files of :data:`VALIDATOR_FREE`'s packages on the verdict path: ``ledger/load.py`` reads the card's bytes and
formats the validator's problems into the verdict (``_validator``), this module keys and stores it."""


def code_hash(without: tuple[str, ...] = (), keep: tuple[str, ...] = ()) -> str:
    """SHA-256 over every file of the imported ``mtboard`` package (relative path and bytes; the ``.py`` modules and
    the data files they read, e.g. a judge's admission set; not ``__pycache__``), hex; files under the sub-packages
    named in ``without`` are left out, except the files (paths relative to the package) in ``keep``."""
    import mtboard  # noqa: PLC0415

    h = hashlib.sha256()
    pkg = Path(mtboard.__file__).resolve().parent
    for p in sorted(pkg.rglob("*")):
        rel = p.relative_to(pkg)
        if "__pycache__" in rel.parts or p.suffix == ".pyc" or not p.is_file():
            continue
        if rel.parts[0] not in without or rel.as_posix() in keep:
            h.update(_name(f"{rel.as_posix()}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\0"))
    return h.hexdigest()


def installed_distributions() -> list[str]:
    """``name==version`` of every distribution Python can import from (``importlib.metadata``), sorted, duplicates
    once: the installed-software part of the verdict key and of the site's page and board keys
    (:func:`mtboard.site.incremental.global_hash`, :meth:`mtboard.site.reuse.BoardReuse.make`). Each METADATA file
    is parsed once (``Distribution.metadata`` parses it on every access; reading name and version apart took three
    parses: ~0.6 CPU-s a call with 150 distributions, 0.1 now)."""
    return sorted({f"{md['Name']}=={md['Version']}" for md in (d.metadata for d in metadata.distributions())
                   if md['Name']})


def validator_code_hash() -> str:
    """:func:`code_hash` of the code a verdict depends on: every module but :data:`VALIDATOR_FREE`'s, plus
    :data:`VALIDATOR_KEPT`. Also the salt of stored sentinel scores (:func:`mtboard.score.sentinels.sentinels`:
    ``score/`` and ``core/`` compute them)."""
    return code_hash(without=VALIDATOR_FREE, keep=VALIDATOR_KEPT)


def environment_hash(root: Path, corpora_dir: Path | None, secret_segment: Path | None,
                     secret_source: str | None) -> str:
    """SHA-256 (hex) of everything a verdict depends on besides the card (module docstring): format, harness,
    the validator's code, Python and installed distributions, prompts, ``root/coaching``, ``root/plugins``,
    ``root/official``, corpora, secret segment."""
    import mtboard  # noqa: PLC0415
    from mtboard.inputs.prompts import prompts_dir  # noqa: PLC0415

    h = hashlib.sha256()
    h.update(f"{CACHE_FORMAT}\0{mtboard.__version__}\0{validator_code_hash()}\0".encode())
    h.update(f"{sys.version}\0{platform.machine()}\0".encode())
    h.update("\0".join(installed_distributions()).encode())
    try:
        prompts = prompts_dir()
    except MtboardError:
        prompts = None
    _digest_files(h, "prompts", prompts)
    _digest_files(h, "coaching", root / "coaching")
    _digest_files(h, "plugins", root / "plugins")
    _digest_files(h, "official", root / "official")
    h.update(b"\0corpora\0")
    if corpora_dir is not None and corpora_dir.is_dir():
        for p in sorted(corpora_dir.glob("*.json")):
            kind = "link" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "?"
            h.update(_name(f"{p.name}\0{kind}\0"))
    else:
        h.update(b"missing")
    h.update(b"\0secret\0")
    if secret_segment is not None:
        try:
            h.update(hashlib.sha256(Path(secret_segment).read_bytes()).hexdigest().encode())
        except OSError:
            h.update(b"unreadable")
        h.update(_name(f"\0{secret_source or secret_segment}"))
    return h.hexdigest()


@dataclass
class ValidationCache:
    """Verdicts by key in ``folder`` (module docstring); ``folder`` None keeps nothing (every lookup a miss).
    ``hits``/``misses`` count :meth:`get` calls of this build; ``used`` holds the key of every verdict read or
    stored (what :func:`mtboard.core.cachefiles.prune_entries` keeps)."""

    folder: Path | None
    environment: str
    hits: int = 0
    misses: int = 0
    used: set[str] = field(default_factory=set)
    root: Path | None = None
    """The repository root (the folder holding ``submissions/``): a card's folder is ``root / rel_root``'s, whose
    verification records are part of its key (None: none are)."""
    _memo: dict[tuple[str, str], str] = field(default_factory=dict)

    def key(self, raw: bytes, rel_root: str, rel_submissions: str, card=None, digest: str | None = None) -> str:
        """The key of one card (hex SHA-256): this cache's environment, the card's bytes and paths, and its
        backend's plugin record and its analyser when the card names them (``card``: the parsed RunCard).
        ``digest``: the SHA-256 (hex) of ``raw`` when the caller made it already."""
        h = hashlib.sha256()
        digest = digest if digest is not None else hashlib.sha256(raw).hexdigest()
        h.update(_name(f"{self.environment}\0{digest}\0{rel_root}\0{rel_submissions}\0"))
        if self.root is not None:  # the folder by its path inside the repository: a checkout elsewhere (another
            # runner's workspace, a second clone) keys the same card the same (the absolute path did until 2026-12-06)
            folder = PurePosixPath(rel_root).parent.as_posix()
            h.update(_name(self._memoised("records", folder, lambda f: _records_text(self.root / f))))
        if card is not None:
            h.update(_name(self._extra(card)))
        return h.hexdigest()

    def _extra(self, card) -> str:
        from mtboard.backends.base import BUILTIN_BACKENDS  # noqa: PLC0415

        parts = []
        backend = card.method.backend
        if backend not in BUILTIN_BACKENDS:
            parts.append(self._memoised("plugin", backend, _plugin_text))
        if card.fst_version is not None:
            parts.append(self._memoised("fst", card.dataset.target_language, _analyser_text))
        if card.scores.morphological_accuracy is not None:
            pair = f"{card.dataset.source_language}>{card.dataset.target_language}"
            parts.append(self._memoised("morph", pair, _morph_analyser_text))
        return "\0".join(parts)

    def _memoised(self, kind: str, arg: str, fn) -> str:
        if (kind, arg) not in self._memo:
            self._memo[(kind, arg)] = fn(arg)
        return f"{kind}:{arg}:{self._memo[(kind, arg)]}"

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / "validation" / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[str] | None:
        """The stored problems for ``key`` (empty: the card passed), or None (a miss: absent, unreadable, foreign or
        filed under another key)."""
        found = self._read(key) if self.folder is not None else None
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return found

    def _read(self, key: str) -> list[str] | None:
        path = self._path(key)
        if not real_folders(self.folder, path) or not regular_file(path):
            return None
        try:
            data = safejson.loads(safejson.read_bytes(path, max_bytes=MAX_ENTRY_BYTES), where=str(path),
                                  max_bytes=MAX_ENTRY_BYTES)
        except (MtboardError, OSError):  # unreadable: recomputed (issue 35 review)
            return None
        if not isinstance(data, dict) or set(data) != {"format", "key", "problems"}:
            return None
        problems = data["problems"]
        if data["format"] != CACHE_FORMAT or data["key"] != key or not isinstance(problems, list) \
                or not all(isinstance(p, str) for p in problems):
            return None
        return problems

    def put(self, key: str, problems: list[str]) -> None:
        """Store a verdict; a cache that cannot be written is skipped (it only saves time)."""
        if self.folder is None:
            return
        import json  # noqa: PLC0415

        data = json.dumps({"format": CACHE_FORMAT, "key": key, "problems": problems}, ensure_ascii=True,
                          indent=1) + "\n"
        write_entry(self.folder, self._path(key), data.encode("ascii"))
        self.used.add(key)


def _records_text(folder: Path) -> str:
    """SHA-256 (hex) of the name and SHA-256 of every verification record and bundle in a card's ``folder``
    (``*.verification.json``, ``*.verification.json.sigstore``), sorted; a link or an unreadable file as such."""
    from mtboard.validate.naming import VERIFICATION_SUFFIX  # noqa: PLC0415

    parts = []
    try:
        names = sorted(p.name for p in folder.iterdir()
                       if p.name.endswith((VERIFICATION_SUFFIX, VERIFICATION_SUFFIX + ".sigstore")))
    except OSError:
        return "unlisted"
    for name in names:
        p = folder / name
        try:
            kind = "link" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest() if regular_file(p) else "?"
        except OSError:
            kind = "unreadable"
        parts.append(f"{name}\0{kind}")
    return hashlib.sha256(_name("\0".join(parts))).hexdigest()


def _plugin_text(backend: str) -> str:
    from mtboard.backends.base import plugin_record  # noqa: PLC0415

    try:
        rec = plugin_record(backend)
    except Exception as exc:  # noqa: BLE001 - any failure is part of the key, never an error here
        return f"error {type(exc).__name__}"
    return "none" if rec is None else repr(rec)


def _analyser_text(language: str) -> str:
    from mtboard.score import fst  # noqa: PLC0415

    try:
        return repr(fst.find_analyser(language))
    except Exception as exc:  # noqa: BLE001
        return f"error {type(exc).__name__}"


def _morph_analyser_text(pair: str) -> str:
    from mtboard.score import morphology  # noqa: PLC0415

    source, _, target = pair.partition(">")
    try:
        return repr(morphology.find_morph_analyser(source, target))
    except Exception as exc:  # noqa: BLE001
        return f"error {type(exc).__name__}"


# --------------------------------------------------------------------------------------------------------------------
# Bootstrap resamples by content (issue 35 item 3: a warm build recomputes no resampled chrF++)

RESAMPLE_FORMAT = "mtboard-resample-cache/1"
"""First line of every resample entry and part of every resample key; change it when the entry's layout changes."""
RESAMPLE_CODE_VERSION = 1
"""Hashed into every resample key: bump it when the resampled chrF++ is computed differently (the source of the
metric modules, :data:`RESAMPLE_MODULES`, is hashed too, so an edit there needs no bump)."""
RESAMPLE_MODULES = ("bootstrap.py", "chrf.py", "sums.py", "composite.py")
"""Files of ``mtboard/score/metrics/`` whose bytes are part of every resample key."""


@functools.lru_cache(maxsize=1)
def _resample_environment() -> str:
    """What every resampled chrF++ depends on besides its statistics and draws: the format and code version, the
    harness and policy versions, the metric modules' bytes, and sacrebleu's and numpy's versions (hex SHA-256)."""
    import sacrebleu  # noqa: PLC0415

    import mtboard  # noqa: PLC0415
    from mtboard.score import metrics  # noqa: PLC0415
    from mtboard.score.checks import POLICY_VERSION  # noqa: PLC0415

    h = hashlib.sha256()
    h.update(f"{RESAMPLE_FORMAT}\0{RESAMPLE_CODE_VERSION}\0{mtboard.__version__}\0{POLICY_VERSION}\0"
             f"sacrebleu {sacrebleu.__version__}\0numpy {np.__version__}\0".encode())
    folder = Path(metrics.__file__).resolve().parent
    for name in RESAMPLE_MODULES:
        h.update(f"{name}\0{hashlib.sha256((folder / name).read_bytes()).hexdigest()}\0".encode())
    return h.hexdigest()


@dataclass
class ResampleCache:
    """Resampled chrF++ of one run over one view, by content, in ``folder/resamples/`` (``folder`` None keeps
    nothing: every lookup computes). ``hits``/``misses`` count :meth:`chrf` calls.

    Key (hex SHA-256): :func:`_resample_environment`, the draw block, the view's resample identity ``(n, R, seed)``
    and the run's ``(n, 24)`` int64 chrF++ statistics over the view's entries, byte for byte — the exact inputs of
    :func:`mtboard.score.metrics.bootstrap.chrf_resamples`, so a changed card, entry set, seed or resample count is
    another key. Entry ``resamples/KK/KEY.f64``: the ASCII header ``RESAMPLE_FORMAT\\nKEY\\nR\\nSHA256(payload)\\n``,
    then the ``R`` scores as little-endian float64 (exact; 8 bytes each, ~8.2 KB at 1,000 resamples). Nothing read is
    trusted (the folder may come back from ``actions/cache``): an entry that is a link, not a regular file, of
    another size, header or key, or whose payload digest differs is a miss, recomputed and replaced — never an
    error. Writes go through an ``O_EXCL`` temporary file renamed into place (docs/SECURITY.md §6). ``used`` holds
    the key of every entry read or stored (what :func:`mtboard.core.cachefiles.prune_entries` keeps)."""

    folder: Path | None
    hits: int = 0
    misses: int = 0
    used: set[str] = field(default_factory=set)

    def key(self, stats: np.ndarray, n: int, resamples: int, seed: int) -> str:
        """The key of ``stats`` (an ``(n, 24)`` int64 array) on the view's resamples ``(n, resamples, seed)``."""
        from mtboard.score.metrics.bootstrap import DRAW_BLOCK  # noqa: PLC0415

        h = hashlib.sha256()
        h.update(f"{_resample_environment()}\0{DRAW_BLOCK}\0{n}\0{resamples}\0{seed}\0{stats.shape}\0".encode())
        h.update(stats.astype("<i8", copy=False).tobytes())
        return h.hexdigest()

    def chrf(self, stats: np.ndarray, resamples: int, seed: int, counts) -> np.ndarray:
        """:func:`mtboard.score.metrics.bootstrap.chrf_resamples` of ``stats`` (an ``(n, 24)`` int64 array) on
        ``counts()`` — the view's ``(resamples, n)`` count matrix drawn from ``seed``, called only on a miss — read
        from the folder when stored (bit-identical: the float64 bytes themselves), else computed and stored."""
        from mtboard.score.metrics.bootstrap import chrf_resamples  # noqa: PLC0415

        if self.folder is None:
            self.misses += 1
            return chrf_resamples(stats, counts())
        key = self.key(stats, stats.shape[0], resamples, seed)
        found = self._read(key, resamples)
        self.used.add(key)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        out = chrf_resamples(stats, counts())
        self._write(key, out)
        return out

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / "resamples" / key[:2] / f"{key}.f64"

    @staticmethod
    def _header(key: str, payload: bytes) -> bytes:
        return f"{RESAMPLE_FORMAT}\n{key}\n{len(payload) // 8}\n{hashlib.sha256(payload).hexdigest()}\n".encode()

    def _read(self, key: str, resamples: int) -> np.ndarray | None:
        want = len(self._header(key, b"\0" * (8 * resamples))) + 8 * resamples
        if not real_folders(self.folder, self._path(key)):
            return None
        try:
            fd = os.open(self._path(key), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size != want:
                return None
            with os.fdopen(fd, "rb", closefd=False) as fh:
                raw = fh.read(want + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(raw) != want:
            return None
        payload = raw[want - 8 * resamples:]
        if raw[:want - 8 * resamples] != self._header(key, payload):
            return None
        return np.frombuffer(payload, dtype="<f8").astype(np.float64)

    def _write(self, key: str, scores: np.ndarray) -> None:
        payload = scores.astype("<f8", copy=False).tobytes()
        assert self.folder is not None
        write_entry(self.folder, self._path(key), self._header(key, payload) + payload)


# --------------------------------------------------------------------------------------------------------------------
# Flip distances

FLIP_FORMAT = "mtboard-flip-cache/1"
"""Part of every flip entry and of every flip key; change it when the entry's layout changes."""
MAX_FLIP_ENTRY_BYTES = 1024 * 1024
"""A flip entry larger than this is not read (a count and at most a view's entry ids)."""


@functools.lru_cache(maxsize=1)
def _flip_environment() -> str:
    """What every flip distance depends on besides its two rows and the view: the resampled chrF++'s environment
    (:func:`_resample_environment`: versions, policy, the metric modules), the bytes of every module of
    ``mtboard/score/`` (the greedy search, the composite it recomputes, the per-entry columns) and of
    ``mtboard/ledger/flip.py`` (which search is called, with which arguments, and what is stored), hex SHA-256."""
    from mtboard import score  # noqa: PLC0415

    h = hashlib.sha256(f"{FLIP_FORMAT}\0{_resample_environment()}\0".encode())
    folder = Path(score.__file__).resolve().parent
    files = [(f"score/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*.py"))]
    # this package's flip.py by path, not by import: mtboard.ledger.flip imports this module
    for name, p in files + [("ledger/flip.py", Path(__file__).resolve().parent / "flip.py")]:
        h.update(f"{name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\0".encode())
    return h.hexdigest()


def flip_row_digest(row) -> str:  # noqa: ANN001 - a mtboard.score.flip.FlipRow
    """Hex SHA-256 of every array and flag of a :class:`mtboard.score.flip.FlipRow` (each run's chrF++ statistics,
    per-entry columns and availability masks by name, FST and variants flags): two rows with one digest are the same
    input to :func:`mtboard.score.flip.flip_greedy`."""
    h = hashlib.sha256()
    for run in row.runs:
        h.update(f"run\0{run.has_fst}\0{run.has_equiv}\0{run.stats.shape}\0".encode())
        h.update(np.ascontiguousarray(run.stats, dtype="<i8").tobytes())
        for kind, arrays in (("col", run.columns), ("avail", run.avail)):
            for name in sorted(arrays):
                arr = np.ascontiguousarray(arrays[name])
                h.update(f"{kind}\0{name}\0{arr.dtype.str}\0{arr.shape}\0".encode())
                h.update(arr.tobytes())
    return h.hexdigest()


@dataclass
class FlipCache:
    """Flip distances (:func:`mtboard.score.flip.flip_greedy`) by content, in ``folder/flips/`` (``folder`` None
    keeps nothing). Adding a card to a board leaves most adjacent pairs of its views as they were: their greedy search
    (the largest single cost of a warm rebuild's compute phase, ~8 s at 1,000 synthetic cards) is read back.
    ``hits``/``misses`` count :meth:`get` lookups.

    Key (hex SHA-256): the view's :meth:`view_key` (:func:`_flip_environment`, the board's whole entry-id order, the
    view's entry ids) and what names the two whole-board rows (the view's rows are those rows over the view's
    positions), the upper row first: a card read from a file by its bytes' SHA-256 and what parses them
    (:func:`mtboard.ledger.flip.parse_environment`; its row is made by ``score/``, in the view key), so a warm build
    makes no row; any other card by its row's :func:`flip_row_digest` (:class:`mtboard.ledger.flip._Rows`). Entry
    ``flips/KK/KEY.json``: ``{"format": FLIP_FORMAT, "key": KEY, "count": int or null, "entries": [entry id, …]}``.
    Nothing read is trusted (the folder may come back from ``actions/cache``): an entry is read with
    :mod:`mtboard.core.safejson` (no link, at most :data:`MAX_FLIP_ENTRY_BYTES`) through real folders only, and used
    only when it has exactly those fields, this format and key, a count in 0 … n − 1 (0: the lower row is not below
    at the composite's rounding; null, with no entries: no removal reverses the order) and that many distinct
    ascending ids of the view; anything else is a miss, recomputed and replaced — never an error. ``used`` holds the
    key of every entry read or stored (what :func:`mtboard.core.cachefiles.prune_entries` keeps)."""

    folder: Path | None
    hits: int = 0
    misses: int = 0
    used: set[str] = field(default_factory=set)

    @staticmethod
    def view_key(whole: list[int], view_ids: list[int]) -> str:
        """What every pair of a view shares in its key, made once per view: the environment, the board's entry ids
        (``whole``) and the view's (``view_ids``), in their order (hex SHA-256)."""
        h = hashlib.sha256(f"{_flip_environment()}\0".encode())
        h.update(np.asarray(whole, dtype="<i8").tobytes() + b"\0" + np.asarray(view_ids, dtype="<i8").tobytes())
        return h.hexdigest()

    @staticmethod
    def key(view_key: str, upper: str, lower: str) -> str:
        """The key of the pair (``upper``, ``lower``: what names each whole-board row,
        :meth:`mtboard.ledger.flip._Rows.digest`) on the view of :meth:`view_key` ``view_key``."""
        return hashlib.sha256(f"{view_key}\0{upper}\0{lower}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / "flips" / key[:2] / f"{key}.json"

    def get(self, key: str, view_ids: frozenset[int]) -> tuple[int | None, tuple[int, ...]] | None:
        """The stored ``(count, entry ids)`` of ``key`` when a valid entry holds it, else None (a miss).
        ``view_ids``: the view's entry ids (a set made once per view: every entry id must be one of them)."""
        found = None if self.folder is None else self._read(key, view_ids)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return found

    def _read(self, key: str, view_ids: frozenset[int]) -> tuple[int | None, tuple[int, ...]] | None:
        path = self._path(key)
        if not real_folders(self.folder, path):
            return None
        try:
            doc = safejson.load_file(path, max_bytes=MAX_FLIP_ENTRY_BYTES)
        except (MtboardError, OSError):  # unreadable (permissions, a vanished folder): a miss, as for the others
            return None
        if not isinstance(doc, dict) or set(doc) != {"format", "key", "count", "entries"} or \
                doc["format"] != FLIP_FORMAT or doc["key"] != key:
            return None
        count, entries = doc["count"], doc["entries"]
        if not isinstance(entries, list) or not all(type(e) is int for e in entries):
            return None
        if count is None:
            return (None, ()) if not entries else None
        if type(count) is not int or not 0 <= count < len(view_ids) or len(entries) != count or \
                entries != sorted(set(entries)) or not view_ids.issuperset(entries):
            return None
        return count, tuple(entries)

    def put(self, key: str, count: int | None, entries: tuple[int, ...]) -> None:
        """Store a computed flip distance (skipped without a folder; a failed write is skipped: see
        :func:`write_entry`)."""
        if self.folder is None:
            return
        text = json.dumps({"format": FLIP_FORMAT, "key": key, "count": count, "entries": list(entries)},
                          separators=(",", ":"))
        write_entry(self.folder, self._path(key), text.encode("ascii"))
        self.used.add(key)
