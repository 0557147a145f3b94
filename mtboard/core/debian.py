"""What the Debian package database says about an installed package: its version and the package owning a file
(``dpkg-query``, the dpkg manual's ``-W``/``-S`` queries), read once per process for each question (issue 35 item 4:
"engine versions read once per run").

One place for the rule, shared by the Apertium backend's ``engine_version`` (``apertium``, the mode's package), the
FST and morphology scorers' ``fst_version``/``morphology`` signatures (the analyser's package, ``lttoolbox``,
``apertium``) and the model records' engine facts (:func:`mtboard.inputs.binding.engine_facts`). Before, a run of
Apertium EN→ES with FST acceptance and morphology asked ``dpkg-query`` seven times, three of them for the same
package; now four times, one per question.

A package counts as installed only when its ``Status`` says so (``install ok installed``): a removed package whose
configuration files are kept (``rc``) still has a ``Version`` but no files. Answers are cached for the process
(:func:`functools.lru_cache`), so a package installed or upgraded while the process runs is not seen; tests call
``cache_clear`` on both functions.
"""

from __future__ import annotations

import functools
import re
import subprocess

PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]{0,100}")
"""A Debian package name (Debian Policy §5.6.1: lower-case letters, digits, ``+``, ``-``, ``.``; at least two
characters, starting alphanumeric; the length bound is ours). Anything else is never passed to ``dpkg-query``."""

TIMEOUT_S = 30
"""Seconds one ``dpkg-query`` may take (it reads the local database: milliseconds on a healthy machine)."""


@functools.lru_cache(maxsize=256)
def package_version(package: str) -> str | None:
    """The installed version of Debian package ``package`` (``dpkg-query -W -f '${Status}\\t${Version}'``), e.g.
    ``"0.8.1-2"`` for ``apertium-eng-spa``; None when the name is not a package name (:data:`PACKAGE_NAME`), the
    package is not installed (or only its configuration files are), or there is no ``dpkg-query`` (not Debian).
    Never raises."""
    if not PACKAGE_NAME.fullmatch(package):
        return None
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package], capture_output=True,
                             text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    status, _, version = out.stdout.partition("\t")
    if out.returncode != 0 or "installed" not in status.split() or not version.strip():
        return None
    return version.strip()


@functools.lru_cache(maxsize=256)
def owning_package(path: str) -> str | None:
    """The Debian package whose file list holds the absolute path ``path`` (``dpkg-query -S PATH``: the text before
    the first ``:``), e.g. ``apertium-eng-spa`` for ``/usr/share/apertium/modes/eng-spa.mode``; None when no
    package owns it, the answer is not one package name (a diversion or several owners) or there is no
    ``dpkg-query``. Never raises."""
    try:
        out = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True, timeout=TIMEOUT_S,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or ":" not in out.stdout:
        return None
    name = out.stdout.split(":", 1)[0].strip()
    return name if PACKAGE_NAME.fullmatch(name) else None


__all__ = ["PACKAGE_NAME", "TIMEOUT_S", "owning_package", "package_version"]
