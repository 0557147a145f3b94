"""What the Debian package database says about an installed package: its version and the package owning a file
(``dpkg-query``, the dpkg manual's ``-W``/``-S`` queries), read once per process for each question (issue 35 item 4:
"engine versions read once per run").

One place for the rule, shared by the Apertium backend's ``engine_version`` (``apertium``, the mode's package), the
FST and morphology scorers' ``fst_version``/``morphology`` signatures (the analyser's package, ``lttoolbox``,
``apertium``) and the model records' engine facts (:func:`mtboard.inputs.binding.engine_facts`). Before, a run of
Apertium EN→ES with FST acceptance and morphology started eight ``dpkg-query`` processes, four of them repeating a
question; now four (``apertium``, the mode file's owner, ``apertium-eng-spa``, ``lttoolbox``), ~7 ms of CPU each.

A package has a version here when dpkg knows it and its files are on disk: every state but ``not-installed`` and
``config-files`` (a removed package whose configuration files are kept still prints a ``Version``). The signatures
read the printed ``Version`` in any state before, the engine facts only in ``installed``; an analyser or engine
whose package is in ``config-files`` has no files to run, so no card's string changes, while a model record's
engine facts now also read a package caught mid-upgrade (``unpacked``, ``half-configured``, ``triggers-pending``).
Answers are cached for the process (:func:`functools.lru_cache`): a package installed or upgraded while the process
runs is not seen; tests call ``cache_clear`` on both functions.
"""

from __future__ import annotations

import functools
import re
import subprocess

PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]{1,100}")
"""A Debian package name (Debian Policy §5.6.1: lower-case letters, digits, ``+``, ``-``, ``.``; at least two
characters, starting alphanumeric; the length bound is ours). Anything else is never passed to ``dpkg-query``."""

NO_FILES = frozenset({"not-installed", "config-files"})
"""The dpkg package states (the third word of ``Status``) in which none of the package's files are installed."""

TIMEOUT_S = 30
"""Seconds one ``dpkg-query`` may take (it reads the local database: milliseconds on a healthy machine)."""


@functools.lru_cache(maxsize=256)
def package_version(package: str) -> str | None:
    """The installed version of Debian package ``package`` (``dpkg-query -W -f '${Status}\\t${Version}\\n'``), e.g.
    ``"0.8.1-2"`` for ``apertium-eng-spa``; None when the name is not a package name (:data:`PACKAGE_NAME`), dpkg
    does not know it, its files are not installed (:data:`NO_FILES`), a Multi-Arch package installed for two
    architectures has two versions, or there is no ``dpkg-query`` (not Debian). Never raises."""
    if not PACKAGE_NAME.fullmatch(package):
        return None
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}\n", package], capture_output=True,
                             text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    versions = set()
    for line in out.stdout.splitlines():  # one line per installed architecture of a Multi-Arch: same package
        status, _, version = line.partition("\t")
        words = status.split()
        if len(words) != 3 or words[2] in NO_FILES or not version.strip():
            continue
        versions.add(version.strip())
    return versions.pop() if len(versions) == 1 else None


@functools.lru_cache(maxsize=256)
def owning_package(path: str) -> str | None:
    """The Debian package whose file list holds the absolute path ``path`` (``dpkg-query -S PATH``), e.g.
    ``apertium-eng-spa`` for ``/usr/share/apertium/modes/eng-spa.mode``: the owners on the line naming exactly
    ``path`` (``pkg: /path``, ``pkg:amd64, pkg:i386: /path``), architecture qualifiers dropped, diversion lines
    (``diversion by dash from: /bin/sh``) skipped. None when no package owns it, the owners are more than one
    package, or there is no ``dpkg-query``. Never raises."""
    try:
        out = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True, timeout=TIMEOUT_S,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    owners: set[str] = set()
    for line in out.stdout.splitlines():
        if line.startswith(("diversion by ", "local diversion ")):
            continue
        names, sep, listed = line.partition(": ")
        if not sep or listed != path:
            continue
        owners.update(name.strip().split(":", 1)[0] for name in names.split(","))
    if len(owners) != 1:
        return None
    name = owners.pop()
    return name if PACKAGE_NAME.fullmatch(name) else None


__all__ = ["NO_FILES", "PACKAGE_NAME", "TIMEOUT_S", "owning_package", "package_version"]
