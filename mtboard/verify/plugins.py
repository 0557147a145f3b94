"""Which plugin cards may be verified next to the API secrets (issue 18; spec §9.5 "GDS verified: submit the method
as an installable plugin; a maintainer re-runs it").

A backend plugin is contributor code. ``mtboard verify`` of a plugin card installs and runs it, so
``.github/workflows/verify.yml`` runs that verification in the protected environment (API secrets) only when a
maintainer has read the plugin and pinned that exact release in ``plugins/approved.yaml`` — distribution, version and
the SHA-256 over its installed files (:func:`mtboard.backends.base.plugin_record`, recorded in ``method.plugin``);
every other plugin card is verified in a job without secrets. :func:`gate` makes the decision from the card alone.

A card whose neural metrics name a model revision this project does not pin
(:func:`mtboard.validate.neural.unpinned`) is ``unapproved`` too, plugin or not: re-scoring it loads that model
checkpoint (a pickle), which nobody reviewed (issue 32 item 3).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from mtboard.core import safejson
from mtboard.core.documents import validate_model
from mtboard.core.schema import GITHUB_HANDLE_RE, Hex64, PluginRecord, RunCard, Strict, _check_iso_datetime, _date_text
from mtboard.validate.neural import unpinned

APPROVED_FILE = "plugins/approved.yaml"
"""The maintained list, relative to the repository root."""

Gate = Literal["builtin", "approved", "unapproved"]


class ApprovedPlugin(Strict):
    """One plugin release a maintainer approved."""

    distribution: str = Field(min_length=1, max_length=200)
    version: str = Field(min_length=1, max_length=100)
    files_sha256: Hex64
    """``method.plugin.files_sha256`` of the approved release."""
    approved_by: str = Field(pattern=GITHUB_HANDLE_RE, max_length=39)
    approved: str
    """ISO 8601 date of the approval."""

    _v0 = field_validator("approved", mode="before")(_date_text)
    _v1 = field_validator("approved")(_check_iso_datetime)


class ApprovedPlugins(Strict):
    """``plugins/approved.yaml``."""

    approved: list[ApprovedPlugin] = []


def load_approved(path: str | os.PathLike[str]) -> ApprovedPlugins:
    """The approved list (safe YAML, strict schema); an absent file approves nothing. Raises: InputError."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return ApprovedPlugins()
    data = safejson.load_yaml(p, max_bytes=1024 * 1024)
    return validate_model(ApprovedPlugins, data if data is not None else {}, str(path))


def is_approved(plugin: PluginRecord, approved: ApprovedPlugins) -> bool:
    """The exact release (distribution — compared case-insensitively, ``-``/``_`` alike, as pip does — version and
    files hash) is in the list."""
    def norm(name: str) -> str:
        return name.lower().replace("_", "-").replace(".", "-")

    return any(norm(a.distribution) == norm(plugin.distribution) and a.version == plugin.version
               and a.files_sha256 == plugin.files_sha256 for a in approved.approved)


def gate(card: RunCard, approved: ApprovedPlugins) -> Gate:
    """``builtin`` (no plugin: verify as before), ``approved`` (pinned release: may run next to the secrets) or
    ``unapproved`` (run only in a job without secrets; also any card with an unpinned neural-model revision)."""
    if unpinned(card):
        return "unapproved"
    if card.method.plugin is None:
        return "builtin"
    return "approved" if is_approved(card.method.plugin, approved) else "unapproved"


__all__ = ["APPROVED_FILE", "ApprovedPlugin", "ApprovedPlugins", "load_approved", "is_approved", "gate"]
