"""Paths a contributor chose, kept inside their root (issue 34 item 4): the one helper every reader of a path taken
from a contributor's file uses — a sweep's datasets (``sweeps/NAME.yaml`` ``datasets``, under the repository root),
the artifact folders ``sweep collect`` reads (``sweep-card-ID/card.json``, under the downloaded folder), coaching
files (``coaching/NAME``, under the repository root), prompt templates named by a sweep or a card (``NAME.j2``,
under the prompts folder) and a checkpoint benchmark's corpus and key (``bench.json``, under the benchmark folder).

The path is relative, written with ``/``, and is checked component by component from the root down, never by
resolving it first and comparing afterwards:

* refused before touching the disk: an empty path, an absolute one (``/etc/passwd``), one with a ``..`` component
  (``corpora/../../etc/passwd``), a backslash (a Windows separator that POSIX would keep in one name), a NUL or other
  control character;
* refused on the disk: a symbolic link at **any** level (the leaf, an intermediate folder, the root's child), each
  component looked at with :func:`os.lstat`, which never follows a link; an intermediate component that is not a
  folder; a leaf that is not the kind asked for (a regular file, a folder).

:func:`resolve_inside` returns the checked path (for a reader that needs a path, e.g. a folder it lists);
:func:`read_inside` reads a file's bytes through file descriptors opened one component at a time relative to the
folder above (``openat`` with ``O_NOFOLLOW``, and ``O_DIRECTORY`` for folders), so a link swapped in after the check
is refused too (no check-then-use race). The root itself is the caller's (``--root``, the prompts folder, the
downloaded folder given on the command line) and is trusted as given, link or not.

Errors are one line naming the contributor's file (``where``), its field and the path as written (a short ASCII
excerpt): :class:`PathRefused` (an :class:`~mtboard.core.errors.InputError`) for a path that may not be followed,
:class:`PathMissing` for one that does not exist.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from mtboard.core.errors import InputError

Kind = Literal["file", "dir", "any"]

_MAX_SHOWN = 120


class PathRefused(InputError):
    """A contributor's path that is not followed: ``reason`` is ``absolute``, ``dotdot``, ``character``, ``empty``,
    ``symlink``, ``not-a-folder`` or ``kind``; ``at`` the component (as a relative path) where it was refused
    (the whole path for the checks made before touching the disk)."""

    def __init__(self, problem: str, *, reason: str, at: str, where: str | None = None, field: str | None = None,
                 fix: str | None = None):
        self.reason = reason
        self.at = at
        super().__init__(problem, where=where, field=field, fix=fix)


class PathMissing(InputError):
    """A contributor's path (checked so far) with a component that does not exist: ``at`` the first missing one."""

    def __init__(self, problem: str, *, at: str, where: str | None = None, field: str | None = None,
                 fix: str | None = None):
        self.at = at
        super().__init__(problem, where=where, field=field, fix=fix)


def shown(text: str) -> str:
    """``text`` as a message shows a contributor's path: ASCII (``ascii()``: escapes, quotes), at most 120
    characters of it."""
    return ascii(text[:_MAX_SHOWN] + ("…" if len(text) > _MAX_SHOWN else ""))


def parts_of(rel: str, *, where: str | None = None, field: str | None = None, root_name: str = "the root"
             ) -> list[str]:
    """The components of the relative path ``rel`` (``a//b/./c`` → ``[a, b, c]``), checked without touching the disk.

    Raises: PathRefused for an empty, absolute, ``..``-holding path, a backslash or a control character."""
    fix = f"give a path relative to {root_name}, with / between folders and no '..'"
    if not isinstance(rel, str) or not rel.strip():
        raise PathRefused("the path is empty", reason="empty", at="", where=where, field=field, fix=fix)
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in rel):
        raise PathRefused(f"path {shown(rel)} holds a control character; refused", reason="character", at=rel,
                          where=where, field=field, fix=fix)
    if "\\" in rel:
        raise PathRefused(f"path {shown(rel)} holds a backslash; refused", reason="character", at=rel, where=where,
                          field=field, fix=fix)
    if rel.startswith("/"):
        raise PathRefused(f"path {shown(rel)} is absolute; refused (it must stay under {root_name})",
                          reason="absolute", at=rel, where=where, field=field, fix=fix)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused(f"path {shown(rel)} has a '..' component; refused (it could point outside {root_name})",
                          reason="dotdot", at=rel, where=where, field=field, fix=fix)
    if not parts:
        raise PathRefused(f"path {shown(rel)} names no file", reason="empty", at=rel, where=where, field=field,
                          fix=fix)
    return parts


def resolve_inside(root: str | os.PathLike[str], rel: str, *, where: str | None = None, field: str | None = None,
                   kind: Kind = "file", missing_ok: bool = False, root_name: str | None = None) -> Path:
    """``root / rel`` after checking every component (module docstring) with :func:`os.lstat`.

    Args:
        root: the trusted folder the path is relative to.
        rel: the contributor's relative path, as written in their file.
        where, field: the contributor's file and the field that holds ``rel`` (for the error).
        kind: what the leaf must be (``file``: a regular file; ``dir``: a folder; ``any``: either).
        missing_ok: return the path when a component does not exist (the components before it were checked)
            instead of raising :class:`PathMissing`.
        root_name: how errors name the root (default: the root's path).

    Returns: ``Path(root, *parts)``. Raises: PathRefused, PathMissing (both InputError, one line).
    """
    base = Path(root)
    label = root_name or str(base)
    parts = parts_of(rel, where=where, field=field, root_name=label)
    fix = f"commit the {'folder' if kind == 'dir' else 'file'} itself under {label}, with no symbolic link on the way"
    cur = base
    for i, part in enumerate(parts):
        cur = cur / part
        at = "/".join(parts[: i + 1])
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            if missing_ok:
                return base.joinpath(*parts)
            raise PathMissing(f"path {shown(rel)} does not exist under {label}" +
                              (f" ({shown(at)} is missing)" if at != "/".join(parts) else ""), at=at,
                              where=where, field=field, fix=f"give a path that exists under {label}") from None
        except NotADirectoryError:  # pragma: no cover - lstat below a non-folder (caught at the level above)
            raise PathRefused(f"path {shown(rel)}: {shown(at)} is not below a folder", reason="not-a-folder", at=at,
                              where=where, field=field, fix=fix) from None
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            problem = (f"path {shown(rel)} is a symbolic link; refused without following it" if last else
                       f"path {shown(rel)}: {shown(at)} is a symbolic link; refused without following it")
            raise PathRefused(problem, reason="symlink", at=at, where=where, field=field, fix=fix)
        if not last and not stat.S_ISDIR(st.st_mode):
            raise PathRefused(f"path {shown(rel)}: {shown(at)} is not a folder", reason="not-a-folder", at=at,
                              where=where, field=field, fix=fix)
        if last and kind == "file" and not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"path {shown(rel)} is not a regular file; refused without reading it", reason="kind",
                              at=at, where=where, field=field, fix=fix)
        if last and kind == "dir" and not stat.S_ISDIR(st.st_mode):
            raise PathRefused(f"path {shown(rel)} is not a folder", reason="kind", at=at, where=where, field=field,
                              fix=fix)
    return cur


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_inside(root: str | os.PathLike[str], rel: str, *, max_bytes: int, where: str | None = None,
                field: str | None = None, root_name: str | None = None) -> bytes:
    """The bytes of the regular file ``root / rel`` (at most ``max_bytes``), checked as :func:`resolve_inside` checks
    it and then opened one component at a time relative to the folder above (``O_NOFOLLOW``; module docstring), so a
    link put in place between the check and the read is refused too.

    Raises: PathRefused, PathMissing; InputError for a file over ``max_bytes`` (named by ``where``/``field``).
    """
    label = root_name or str(root)
    path = resolve_inside(root, rel, where=where, field=field, kind="file", root_name=label)
    parts = parts_of(rel, where=where, field=field, root_name=label)
    if not hasattr(os, "O_NOFOLLOW") or os.open not in os.supports_dir_fd:  # pragma: no cover - not POSIX
        return _read_fd(os.open(path, os.O_RDONLY), rel, max_bytes, where, field)
    fds: list[int] = []
    try:
        fds.append(os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)))
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1])
    except OSError as exc:  # ELOOP / ENOTDIR: a link or a file put in place after the check
        raise PathRefused(f"path {shown(rel)} changed while it was opened ({os.strerror(exc.errno or 0)}); refused",
                          reason="symlink", at=rel, where=where, field=field,
                          fix=f"commit the file itself under {label}, with no symbolic link on the way") from None
    finally:
        for d in fds:
            os.close(d)
    return _read_fd(fd, rel, max_bytes, where, field)


def _read_fd(fd: int, rel: str, max_bytes: int, where: str | None, field: str | None) -> bytes:
    """Read the open file ``fd`` (closed here): a regular file of at most ``max_bytes``. Raises: InputError."""
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"path {shown(rel)} is not a regular file; refused without reading it", reason="kind",
                              at=rel, where=where, field=field, fix="commit a regular file")
        if st.st_size > max_bytes:
            raise InputError(f"path {shown(rel)} is {st.st_size} bytes, over the {max_bytes}-byte limit",
                             where=where, field=field, fix="give a smaller file")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"path {shown(rel)} grew over the {max_bytes}-byte limit while it was read", where=where,
                         field=field, fix="give a smaller file")
    return data


__all__ = ["PathMissing", "PathRefused", "parts_of", "read_inside", "resolve_inside", "shown"]
