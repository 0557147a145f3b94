"""Drift canaries' inputs (issue 38 item 3): choosing a corpus's canary entries, the committed sets file
``canaries/sets.yaml`` and the canary history ``canaries/history/``.

**The selection rule** ``stratified-v1`` (:func:`select`), for one corpus: its development entries are grouped by
domain (an entry without one counts as domain ``""``); within a domain they are ordered by
SHA-256(``dataset id`` U+001F ``version`` U+001F ``entry id``); then the domains, in name order, give one entry
each in turn (round robin; a domain that runs out is skipped) until :data:`CANARY_SIZE` entries are taken or none is
left. The set is every domain's best-hashed entries, spread as evenly over the domains as 12 allows, and depends only
on the corpus's id, version, entry ids and domains.

**Fixed once chosen**: ``mtboard canary sets --write`` adds a set for each corpus that has none and keeps every set
already in the file as it is — a change to :func:`select` never changes a committed set. A set is bound to its
corpus file's SHA-256: a corpus whose file hashes otherwise (changed in place, same version) is refused by
:func:`check_sets` and by ``--write`` (a new corpus version gets a new set).

**History**: one JSON file per canary run (``canaries/history/<model slug>/<YYYYMMDDTHHMMSSZ>-<fingerprint 12>.json``,
:func:`history_path`): runs added by different pull requests never touch the same file, so they merge without
conflict (an appended JSONL would conflict on every pair of runs of one model).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from mtboard.core import canonical, fmt, safejson
from mtboard.core.documents import atomic_write
from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema import Corpus, Segment, describe_validation_error
from mtboard.core.schema.canary import CANARY_RULE, CanaryRun, CanarySet, CanarySets

CANARY_SIZE = 12
"""Entries the rule picks per corpus (fewer when the development segment has fewer)."""
SETS_FILE = "canaries/sets.yaml"
"""The committed sets, relative to the repository root."""
HISTORY_DIR = "canaries/history"
"""The canary history, relative to the repository root."""
MAX_SETS_BYTES = 256 * 1024
MAX_RUN_BYTES = 64 * 1024
"""Size limits of the sets file and of one history record (a record holds ids, hashes and numbers only)."""
MAX_HISTORY_FILES = 20_000
"""At most this many history records are read; the build warns about the rest."""


@dataclass(frozen=True)
class CorpusFile:
    """A corpus as the canary sets see it: its file (as named in messages), content and file SHA-256."""

    path: str
    corpus: Corpus
    sha256: str


def select(corpus: Corpus, size: int = CANARY_SIZE) -> list[int]:
    """The canary entry ids of ``corpus`` by the rule ``stratified-v1`` (module docstring), ascending."""
    ds = corpus.dataset
    by_domain: dict[str, list[tuple[str, int]]] = {}
    for e in corpus.segment(Segment.development):
        key = hashlib.sha256(f"{ds.id}\x1f{ds.version}\x1f{e.id}".encode()).hexdigest()
        domain = e.domain.value if e.domain is not None else ""
        by_domain.setdefault(domain, []).append((key, e.id))
    queues = [sorted(v) for _, v in sorted(by_domain.items())]
    picked: list[int] = []
    depth = 0
    while len(picked) < size and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(picked) < size:
                picked.append(q[depth][1])
        depth += 1
    return sorted(picked)


def make_set(cf: CorpusFile) -> CanarySet:
    """A new set for ``cf`` by :func:`select`."""
    ds = cf.corpus.dataset
    return CanarySet(dataset_id=ds.id, version=ds.version, sha256=cf.sha256, language_pair=ds.language_pair,
                     rule=CANARY_RULE, entry_ids=select(cf.corpus))


def read_sets(path: Path) -> CanarySets:
    """``canaries/sets.yaml`` through the safe YAML loader and the strict schema; two sets of one dataset id and
    version are refused. Raises: InputError (missing, unsafe, not the schema), one line naming the file and field."""
    where = str(path)
    if not path.is_file():
        raise InputError("no canary sets file", where=where, fix="run `mtboard canary sets --write`")
    data = safejson.load_yaml(path, max_bytes=MAX_SETS_BYTES)
    try:
        sets = CanarySets.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where).split(": ", 1)[1], where=where,
                         fix="see `mtboard schema canary-sets`") from None
    seen: set[tuple[str, str]] = set()
    for k, s in enumerate(sets.sets):
        if (s.dataset_id, s.version) in seen:
            raise InputError(f"a second set for {s.dataset_id} {s.version}", where=where, field=f"$.sets[{k}]",
                             fix="keep one set per dataset id and version")
        seen.add((s.dataset_id, s.version))
    return sets


def check_sets(sets: CanarySets, corpora: list[CorpusFile], where: str = SETS_FILE) -> list[str]:
    """One line per problem of ``sets`` against ``corpora``: a set whose corpus (dataset id + version) is missing, a
    corpus file that hashes otherwise than the set records (the corpus changed after the set was chosen), an entry
    id that is not a development entry of the corpus. Empty when every set holds."""
    by_key = {(c.corpus.dataset.id, c.corpus.dataset.version): c for c in corpora}
    out = []
    for k, s in enumerate(sets.sets):
        field = f"$.sets[{k}]"
        c = by_key.get((s.dataset_id, s.version))
        if c is None:
            out.append(f"{where}: {field}: no corpus {s.dataset_id} {s.version} under corpora/ (fix: restore the "
                       "corpus or remove its set)")
            continue
        if c.sha256 != s.sha256:
            out.append(f"{where}: {field}.sha256: {c.path} hashes {c.sha256[:12]}…, the set was chosen from "
                       f"{s.sha256[:12]}… (fix: a changed corpus is a new version: bump its version, then "
                       "`mtboard canary sets --write` chooses its set)")
            continue
        dev = {e.id for e in c.corpus.segment(Segment.development)}
        missing = [i for i in s.entry_ids if i not in dev]
        if missing:
            out.append(f"{where}: {field}.entry_ids: {', '.join(map(str, missing[:5]))} not development entries of "
                       f"{c.path} (fix: choose the set again from the corpus)")
    return out


def updated_sets(sets: CanarySets | None, corpora: list[CorpusFile], where: str = SETS_FILE
                 ) -> tuple[CanarySets, list[str]]:
    """``sets`` (None: no file yet) with a new set (:func:`make_set`) for each corpus that has none, every existing
    set kept byte for byte, ordered by dataset id then version; and the ``dataset@version`` of each set added.
    Raises: InputError when an existing set does not hold (:func:`check_sets`): its first problem."""
    current = list(sets.sets) if sets is not None else []
    problems = check_sets(CanarySets(sets=current), corpora, where)
    if problems:
        raise InputError(problems[0].split(": ", 1)[1], where=where)
    have = {(s.dataset_id, s.version) for s in current}
    added = []
    for c in sorted(corpora, key=lambda c: (c.corpus.dataset.id, c.corpus.dataset.version)):
        key = (c.corpus.dataset.id, c.corpus.dataset.version)
        if key not in have and c.corpus.segment(Segment.development):
            current.append(make_set(c))
            added.append(f"{key[0]}@{key[1]}")
    current.sort(key=lambda s: (s.dataset_id, s.version))
    return CanarySets(sets=current), added


def sets_yaml(sets: CanarySets) -> bytes:
    """The sets file's bytes: a header comment, then YAML (one set per block, entry ids on one line)."""
    class _Dumper(yaml.SafeDumper):
        pass

    def _ids(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
        flow = all(isinstance(x, int) for x in data)
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)

    _Dumper.add_representer(list, _ids)
    head = ("# Drift canaries (issue 38 item 3): each corpus's fixed canary entries, chosen once by the rule named\n"
            "# (mtboard.inputs.canaries) and kept: `mtboard canary sets --write` adds sets, never changes one;\n"
            "# `mtboard canary sets` checks them against corpora/.\n")
    body = yaml.dump(sets.model_dump(mode="json"), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
    return (head + body).encode("utf-8")


def write_sets(path: Path, sets: CanarySets) -> None:
    """Write ``sets`` to ``path`` atomically (:func:`sets_yaml`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, sets_yaml(sets))


def set_for(sets: CanarySets, dataset_id: str, version: str) -> CanarySet | None:
    """The set of a dataset id and version, or None."""
    return next((s for s in sets.sets if (s.dataset_id, s.version) == (dataset_id, version)), None)


def load_corpora(corpora_dir: Path) -> tuple[list[CorpusFile], list[str]]:
    """Every ``*.json`` corpus under ``corpora_dir`` (file order) and one warning per file that does not load."""
    from mtboard.core.documents import load_corpus  # noqa: PLC0415

    out, warnings = [], []
    for p in sorted(corpora_dir.glob("*.json")) if corpora_dir.is_dir() else []:
        try:
            corpus, sha = load_corpus(p)
        except MtboardError as exc:
            warnings.append(f"corpus skipped: {exc.one_line()}")
            continue
        out.append(CorpusFile(f"corpora/{p.name}" if corpora_dir.name == "corpora" else str(p), corpus, sha))
    return out, warnings


# ----------------------------------------------------------------------------------------------------------------
# history


def history_path(run: CanaryRun) -> str:
    """Where a run's record goes, relative to the repository root:
    ``canaries/history/<slugified model slug>/<YYYYMMDDTHHMMSSZ>-<card fingerprint 12>.json``."""
    stamp = run.date.replace("-", "").replace(":", "")
    return f"{HISTORY_DIR}/{fmt.slugify(run.model_slug)}/{stamp}-{run.card_fingerprint[:12]}.json"


def run_bytes(run: CanaryRun) -> bytes:
    """A record's bytes: canonical JSON (RFC 8785) and a newline."""
    return canonical.canonical_bytes(run.model_dump(mode="json")) + b"\n"


def read_run(path: Path, where: str | None = None) -> CanaryRun:
    """One history record through the safe loader and the strict schema. Raises: InputError."""
    where = where or str(path)
    raw = safejson.read_bytes(path, max_bytes=MAX_RUN_BYTES)
    safejson.loads(raw, where=where, max_bytes=MAX_RUN_BYTES)
    try:
        return CanaryRun.model_validate_json(raw)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, where).split(": ", 1)[1], where=where,
                         fix="see `mtboard schema canary-run`") from None


def load_history(root: Path) -> tuple[list[tuple[str, CanaryRun]], list[str]]:
    """Every record under ``root/canaries/history/`` as ``(path relative to root, run)``, by date then path, and one
    warning per file that cannot be read (left out) or beyond :data:`MAX_HISTORY_FILES`."""
    base = root / HISTORY_DIR
    if not base.is_dir():
        return [], []
    files = sorted(p for p in base.rglob("*.json") if not p.name.startswith("."))
    warnings = []
    if len(files) > MAX_HISTORY_FILES:
        warnings.append(f"{HISTORY_DIR}/: {len(files)} files, only the first {MAX_HISTORY_FILES} read")
    runs = []
    for p in files[:MAX_HISTORY_FILES]:
        rel = p.relative_to(root).as_posix()
        try:
            runs.append((rel, read_run(p, rel)))
        except MtboardError as exc:
            warnings.append(f"canary run skipped: {exc.one_line()}")
    runs.sort(key=lambda t: (t[1].date, t[0]))
    return runs, warnings


__all__ = ["CANARY_SIZE", "HISTORY_DIR", "MAX_HISTORY_FILES", "MAX_RUN_BYTES", "MAX_SETS_BYTES", "SETS_FILE",
           "CorpusFile", "check_sets", "history_path", "load_corpora", "load_history", "make_set", "read_run",
           "read_sets", "run_bytes", "select", "set_for", "sets_yaml", "updated_sets", "write_sets"]
