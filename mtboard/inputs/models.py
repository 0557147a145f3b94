"""Model records and contamination claims as inputs (issue 37): reading ``models/*.yaml`` and
``contamination/*.yaml`` (safe YAML, strict schema: :mod:`mtboard.core.schema.model`) and linking a run card to its
record (:class:`ModelIndex`).

A card links to a record when its ``method.model_file_sha256`` is one of the record's ``files`` (bound: the weights
are the same bytes) or, failing that, when its ``model_slug`` is one of the record's ``model_slugs`` (declared).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.core import safejson
from pydantic import ValidationError

from mtboard.core.errors import InputError, MtboardError
from mtboard.core.schema.common import describe_validation_error
from mtboard.core.schema.model import MODEL_SLUG_RE, ContaminationClaim, ModelRecord

MODELS_DIR = "models"
"""Folder of model records, at the repository root."""
CONTAMINATION_DIR = "contamination"
"""Folder of contamination claims, at the repository root."""
MAX_RECORD_BYTES = 256 * 1024
"""Largest model record or claim file read (bytes)."""
MAX_RECORDS = 10_000
"""Most files read from each folder (the rest are reported, not read)."""

NO_RECORD = "no model record"
"""What a row without a record says (with a link to the contribute page's section on adding one)."""
REFUSED = "model record refused"
"""What a row says whose record was refused: a value read from the weights or the engine disagrees with the record
(:func:`mtboard.inputs.binding.check_record`); the record is treated as absent."""
BASELINE = "baseline (no model)"
"""What a baseline's row says instead of :data:`NO_RECORD`: a baseline is no model and needs no record."""
ADD_RECORD_PAGE = "contribute.md#add-a-model-record"
"""The contribute page's section on adding ``models/<slug>.yaml`` (linked from every "no model record")."""


def _validate(model: type, data: Any, where: str, schema: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        what = describe_validation_error(exc, where).split(": ", 1)[1]
        hint = (" (quote it: YAML reads 2025-08-14 as a date and 1.10 as a number)"
                if "valid string" in what else "")
        raise InputError(what, where=where, fix=f"see `mtboard schema {schema}`{hint}") from None


def _yaml_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and not p.name.startswith("."))


def read_record(path: Path) -> ModelRecord:
    """One ``models/<slug>.yaml`` through the safe loader and the strict schema; its ``slug`` must equal the file
    name's stem. Raises: InputError (one line: the file, the field, the fix)."""
    data = safejson.load_yaml(path, max_bytes=MAX_RECORD_BYTES)
    record = _validate(ModelRecord, data, str(path), "model-record")
    if record.slug != path.stem:
        own = re.fullmatch(MODEL_SLUG_RE, path.stem) is not None
        raise InputError(f"slug {record.slug!r} differs from the file name", where=str(path),
                         fix=f"rename the file to {record.slug}.yaml" + (f" or set slug: {path.stem}" if own else ""))
    return record


def read_claim(path: Path) -> ContaminationClaim:
    """One ``contamination/<name>.yaml`` through the safe loader and the strict schema. Raises: InputError."""
    return _validate(ContaminationClaim, safejson.load_yaml(path, max_bytes=MAX_RECORD_BYTES), str(path),
                     "contamination-claim")


def load_records(root: Path) -> tuple[list[ModelRecord], list[str]]:
    """Every record under ``root/models/`` (sorted by slug) and one warning per file that cannot be read (the file
    is left out), and per record of a link clash (:func:`link_clashes`: every record of the clash is left out)."""
    records: list[ModelRecord] = []
    warnings: list[str] = []
    files = _yaml_files(root / MODELS_DIR)
    if len(files) > MAX_RECORDS:
        warnings.append(f"{MODELS_DIR}/: {len(files)} files, only the first {MAX_RECORDS} read")
    for p in files[:MAX_RECORDS]:
        try:
            records.append(read_record(p))
        except MtboardError as exc:
            warnings.append(f"model record skipped: {exc.one_line()}")
    clashes = link_clashes(records)
    for slug, lines in sorted(clashes.items()):
        warnings.extend(f"model record skipped: {line}" for line in lines)
    return [r for r in records if r.slug not in clashes], warnings


def link_clashes(records: list[ModelRecord]) -> dict[str, list[str]]:
    """Records that link the same run card as another record (the same ``model_slugs`` value or weights file), by
    slug, each with one line per clash naming both files and the fix. **Every** record of a clash is refused, not
    the later one: which file sorts first must not decide which claims about a model count (a new record naming the
    committed Gemma cards would otherwise replace the committed record)."""
    owners: dict[str, list[str]] = {}
    for r in records:
        for key in {*(f"model_slug {s!r}" for s in r.model_slugs), *(f"weights file {f.sha256[:12]}…" for f in r.files)}:
            owners.setdefault(key, []).append(r.slug)
    out: dict[str, list[str]] = {}
    for key, slugs in sorted(owners.items()):
        if len(slugs) < 2:
            continue
        for s in slugs:
            others = ", ".join(f"{MODELS_DIR}/{o}.yaml" for o in slugs if o != s)
            out.setdefault(s, []).append(f"{MODELS_DIR}/{s}.yaml: {key} is also linked by {others} (fix: keep one "
                                         "record per model; every record of the clash is refused until then)")
    return out


def load_claims(root: Path) -> tuple[list[tuple[str, ContaminationClaim]], list[str]]:
    """Every claim under ``root/contamination/`` as ``(path relative to root, claim)``, and one warning per file
    that cannot be read."""
    claims: list[tuple[str, ContaminationClaim]] = []
    warnings: list[str] = []
    for p in _yaml_files(root / CONTAMINATION_DIR)[:MAX_RECORDS]:
        try:
            claims.append((f"{CONTAMINATION_DIR}/{p.name}", read_claim(p)))
        except MtboardError as exc:
            warnings.append(f"contamination claim skipped: {exc.one_line()}")
    return claims, warnings


@dataclass(frozen=True)
class ModelLink:
    """What a run card's model record is (:meth:`ModelIndex.link`): the one place the rows' "no model record" and
    "model record refused" are decided (issue 37)."""

    state: str
    """``record`` (a valid record), ``refused`` (a record whose bound values disagree with it), ``none``, or
    ``baseline`` (a card of method class ``baseline``, echo or empty: no model, so no record is asked for)."""
    record: ModelRecord | None = None
    """The record (also when refused: the page names it)."""
    check: Any = None
    """Its :class:`mtboard.inputs.binding.RecordCheck` (None when not bound)."""

    @property
    def text(self) -> str:
        """Empty for a valid record, else :data:`REFUSED` or :data:`NO_RECORD`."""
        return {"record": "", "refused": REFUSED, "baseline": BASELINE}.get(self.state, NO_RECORD)


@dataclass
class ModelIndex:
    """The records, and which record a run card links to. Refused records (``checks`` with conflicts) link no card
    through :meth:`record_for` (they are treated as absent) and are kept in :attr:`refused`."""

    records: list[ModelRecord] = field(default_factory=list)
    by_slug: dict[str, ModelRecord] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)
    """:class:`mtboard.inputs.binding.RecordCheck` by slug (empty when the records were not bound)."""
    refused: dict[str, ModelRecord] = field(default_factory=dict)
    """Records whose bound values disagree with their declared ones, by slug."""
    _by_file: dict[str, ModelRecord] = field(default_factory=dict)
    _by_card_slug: dict[str, ModelRecord] = field(default_factory=dict)

    @classmethod
    def of(cls, records: list[ModelRecord], checks: dict[str, Any] | None = None) -> ModelIndex:
        """The index of ``records``; ``checks`` (by slug, :func:`mtboard.inputs.binding.bind_records`) refuses the
        records that have conflicts."""
        checks = checks or {}
        idx = cls(checks=dict(checks))
        for r in records:
            c = checks.get(r.slug)
            if c is not None and c.conflicts:
                idx.refused[r.slug] = r
            else:
                idx.records.append(r)
                idx.by_slug[r.slug] = r
            idx._by_file.update({f.sha256: r for f in r.files})
            idx._by_card_slug.update({s: r for s in r.model_slugs})
        return idx

    def _any_record(self, card: Any) -> ModelRecord | None:
        sha = getattr(card.method, "model_file_sha256", None)
        if sha and sha in self._by_file:
            return self._by_file[sha]
        return self._by_card_slug.get(card.model_slug)

    def record_for(self, card: Any) -> ModelRecord | None:
        """The valid record a run card links to (its weights file first, then its ``model_slug``), or None (no
        record, or a refused one)."""
        rec = self._any_record(card)
        return None if rec is None or rec.slug in self.refused else rec

    def link(self, card: Any) -> ModelLink:
        """The card's :class:`ModelLink`: its record and whether it is valid, refused or absent."""
        rec = self._any_record(card)
        if rec is None:
            return ModelLink("baseline" if getattr(card, "method_class", None) == "baseline" else "none")
        return ModelLink("refused" if rec.slug in self.refused else "record", rec, self.checks.get(rec.slug))

    def model_key(self, card: Any) -> str:
        """What "the same model" means for counting tries: the record's slug, else the card's ``model_slug``."""
        rec = self.record_for(card)
        return rec.slug if rec is not None else card.model_slug


__all__ = ["link_clashes", "ADD_RECORD_PAGE", "BASELINE", "CONTAMINATION_DIR", "MAX_RECORD_BYTES", "MODELS_DIR", "NO_RECORD", "REFUSED",
           "ModelIndex", "ModelLink", "load_claims",
           "load_records", "read_claim", "read_record"]
