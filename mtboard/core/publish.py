"""Atomic publication of a folder (issue 34 item 1): build into a fresh sibling folder, swap it in only on success.

The published folder (``build/site``, ``build/docs``, a checkout's ``submissions/``) is never missing and never
half-written: a command builds the new tree into a *staging folder* beside it (same parent, so the same file system:
``PARENT/.NAME.mtboard-staging-TOKEN``, ``TOKEN`` 12 random hex digits) and :meth:`Stage.publish` swaps the two with one
``renameat2(2)`` call with ``RENAME_EXCHANGE`` (Linux ≥ 3.15 with glibc ≥ 2.28, called through ctypes; ext4, xfs,
btrfs, tmpfs, overlayfs …), then removes the old tree. Until that call the published folder is the previous one, byte
for byte; after it, the new one. A first publication (nothing at the path yet) is one ``renameat2`` with
``RENAME_NOREPLACE`` (a plain ``rename`` where that is missing).

Any failure, exception, ``KeyboardInterrupt`` or ``SystemExit`` before the swap (:func:`staged`) removes the staging
folder and leaves the published one untouched. A process killed outright (``SIGKILL``, an OOM kill, a power-cut job)
cannot clean up: its staging folder stays, hidden, beside the published one, harmless (nothing reads it; ``.gitignore``
lists the pattern) until the next :func:`staged` of the same path removes it. A staging folder is recognised by its
name *and* its lock file ``PARENT/.NAME.mtboard-staging-TOKEN.lock`` (content :data:`LOCK_TEXT`), which its owner holds
``flock(2)``-locked while it lives: only a folder whose lock file can be locked (its owner is dead) is removed, and only
when it is a real folder (never a symlink); anything else at such a name, and any folder without its lock file, is left
alone.

Fallback where ``RENAME_EXCHANGE`` is refused (``EINVAL``: a file system without it, e.g. some network file systems;
``ENOSYS``/no ``renameat2`` symbol: an old kernel or libc, or not Linux): two renames — the published folder to
``…-TOKEN.old``, then the staging folder to the published path. Between those two calls (microseconds) the published
path is missing; a kill exactly there leaves the previous tree at ``…-TOKEN.old``, and the next :func:`staged` of the
path (or this stage's own clean-up, on an exception) renames it back before anything else.

What this does not promise: durability across a power loss (files are not fsync'ed one by one; the file system's
journal orders the renames), and merging concurrent updates of one path unless ``seed=True`` (below).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mtboard.core.errors import ConfigError, MtboardError, storage_faults

TAG = "mtboard-staging"
"""The word in every staging name: ``.NAME.mtboard-staging-TOKEN`` (folder), ``…-TOKEN.lock``, ``…-TOKEN.old``."""
LOCK_TEXT = b"mtboard staging folder; removed by the next publication of the folder it is named after\n"
"""The first bytes of a staging folder's lock file: with the name, what marks a leftover as ours."""

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class _Unsupported(Exception):
    """``renameat2`` or the flag asked for is not available here."""


def _renameat2_fn():
    """glibc's (≥ 2.28) ``renameat2`` from the symbols already loaded into this process (``dlopen(NULL)``: no
    library search, no subprocess), or None where there is none (an older libc, not Linux)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _renameat2_fn()


def rename2(src: Path, dst: Path, flags: int) -> None:
    """``renameat2(AT_FDCWD, src, AT_FDCWD, dst, flags)``. Raises: OSError with the call's errno (naming both paths);
    :class:`_Unsupported` when this system has no ``renameat2`` or refuses the flag (``EINVAL``, ``ENOSYS``)."""
    if _renameat2 is None:
        raise _Unsupported("no renameat2 in the C library")
    if _renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        raise _Unsupported(os.strerror(err))
    raise OSError(err, os.strerror(err), str(src), None, str(dst))


def _names(target: Path, token: str) -> tuple[Path, Path, Path]:
    """(staging folder, its lock file, the fallback's aside folder) of ``target`` for ``token``."""
    stage = target.parent / f".{target.name}.{TAG}-{token}"
    return stage, stage.with_name(stage.name + ".lock"), stage.with_name(stage.name + ".old")


def _is_real_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not path.is_symlink()
    except OSError:
        return False


def _remove_tree(path: Path) -> None:
    """Remove the real folder ``path`` (a symlink or a file there is left alone); errors are ignored — the lock file
    stays, so the next publication tries again."""
    if _is_real_dir(path):
        shutil.rmtree(path, ignore_errors=True)


def _recover(target: Path, stage: Path, lock: Path, aside: Path) -> None:
    """Put things right after a stage that ended without its clean-up (its owner killed, or an exception): the
    fallback's aside folder goes back to ``target`` when ``target`` is missing (else it is the old tree: removed);
    the staging folder (a new tree never swapped in, or the old tree after the swap) is removed; then the lock."""
    if _is_real_dir(aside):
        if not os.path.lexists(target):
            os.rename(aside, target)
        else:
            _remove_tree(aside)
    _remove_tree(stage)
    if not os.path.lexists(stage) and not os.path.lexists(aside):
        try:
            lock.unlink()
        except FileNotFoundError:
            pass


def clean_leftovers(target: str | os.PathLike[str]) -> list[Path]:
    """Remove what killed publications of ``target`` left beside it (module docstring): for every lock file
    ``.NAME.mtboard-staging-TOKEN.lock`` that is a regular file starting with :data:`LOCK_TEXT` and that no live process
    holds, its staging folder (and a fallback's aside folder, renamed back when ``target`` is missing). Returns the lock
    files whose leftovers were handled. Nothing that fails those tests is touched."""
    target = Path(os.path.abspath(target))
    pattern = re.compile(rf"\.{re.escape(target.name)}\.{TAG}-([0-9a-f]{{12}})\.lock")
    done: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except FileNotFoundError:
        return done
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or not entry.is_file(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if os.read(fd, len(LOCK_TEXT)) != LOCK_TEXT:
                continue  # not ours
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its owner is alive
            stage, lock, aside = _names(target, m.group(1))
            _recover(target, stage, lock, aside)
            done.append(lock)
        finally:
            os.close(fd)
    return done


def _link_or_copy(src: str, dst: str) -> None:
    """``shutil.copytree``'s copy function for a seeded stage: a hard link (no bytes copied; the old tree's link is
    removed after the swap, the new tree keeps the file), a copy where linking is refused."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


class Stage:
    """One staging folder for ``target`` (see :func:`staged`, the usual way in). ``path``: the folder to build into.
    Created by :meth:`begin`; ends with exactly one of :meth:`publish` or :meth:`discard` (both idempotent)."""

    def __init__(self, target: Path, token: str, lock_fd: int, parent_fd: int | None) -> None:
        self.target = target
        self.path, self._lock, self._aside = _names(target, token)
        self._lock_fd: int | None = lock_fd
        self._parent_fd = parent_fd
        self.published = False
        self.exchanged: bool | None = None
        """After :meth:`publish`: True when the swap was one ``RENAME_EXCHANGE``, False for the two-rename fallback,
        None for a first publication."""

    @classmethod
    def begin(cls, target: str | os.PathLike[str], *, seed: bool = False, marker: str | None = None) -> Stage:
        """Clean up leftovers of ``target`` (:func:`clean_leftovers`), then make a fresh, empty staging folder beside
        it — with ``seed``, a copy of ``target``'s current tree (hard links; symlinks copied as symlinks), for a command
        that adds to a folder rather than replacing it; then the parent folder is ``flock``-ed until the stage ends,
        so two seeded updates of one folder run one after another instead of one losing the other's files.

        Raises: ConfigError when ``target`` is a symlink, not a folder or a mount point (no rename can replace it), or
        (``marker``) a non-empty folder without the file ``marker`` (never made by this command: nothing is replaced);
        StorageError when the parent folder cannot be written."""
        target = Path(os.path.abspath(target))
        if os.path.lexists(target):
            if target.is_symlink() or not target.is_dir():
                raise ConfigError(f"{target} is not a folder", where=str(target),
                                  fix="remove it or choose another path")
            if os.path.ismount(target):
                raise ConfigError(f"{target} is a mount point: a folder there cannot be swapped by a rename",
                                  where=str(target), fix=f"choose a folder inside it, e.g. {target / 'site'}")
            if marker is not None and any(target.iterdir()) and not (target / marker).is_file():
                raise ConfigError(f"folder {target} is not empty and was not made by mtboard (no {marker} file)",
                                  where=str(target), fix="choose an empty folder or delete it first")
        with storage_faults(target.parent):
            target.parent.mkdir(parents=True, exist_ok=True)
        parent_fd = None
        if seed:
            parent_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            fcntl.flock(parent_fd, fcntl.LOCK_EX)
        try:
            clean_leftovers(target)
            while True:
                token = secrets.token_hex(6)
                path, lock, _ = _names(target, token)
                with storage_faults(lock):
                    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.fstat(fd).st_nlink == 0:  # a clean-up removed it between its creation and the lock: again
                    os.close(fd)
                    continue
                break
            stage = cls(target, token, fd, parent_fd)
        except BaseException:
            if parent_fd is not None:
                os.close(parent_fd)
            raise
        try:
            with storage_faults(lock):
                os.write(fd, LOCK_TEXT + f"pid {os.getpid()}\n".encode())
            with storage_faults(path):
                if seed and target.is_dir():
                    shutil.copytree(target, path, symlinks=True, copy_function=_link_or_copy)
                else:
                    path.mkdir()
        except BaseException:
            stage.discard()
            raise
        return stage

    def publish(self) -> None:
        """Swap the staging folder in (module docstring), then remove the old tree and the lock file.

        Raises: ConfigError when something other than a folder appeared at ``target``, or a folder appeared there
        during a first publication; StorageError when the file system refuses the rename (the stage is discarded,
        ``target`` untouched)."""
        if self.published:
            return
        if self._lock_fd is None:
            raise ConfigError("this staging folder was discarded", where=str(self.path), fix="start a new stage")
        try:
            if os.path.lexists(self.target):
                if self.target.is_symlink() or not self.target.is_dir():
                    raise ConfigError(f"{self.target} is not a folder", where=str(self.target),
                                      fix="remove it or choose another path")
                try:
                    with storage_faults(self.target):
                        rename2(self.path, self.target, _RENAME_EXCHANGE)
                    self.exchanged = True
                except _Unsupported:
                    with storage_faults(self.target):
                        os.rename(self.target, self._aside)  # the window: no folder at target until the next line
                        os.rename(self.path, self.target)
                    self.exchanged = False
            else:
                try:
                    with storage_faults(self.target):
                        rename2(self.path, self.target, _RENAME_NOREPLACE)
                except _Unsupported:
                    with storage_faults(self.target):
                        os.rename(self.path, self.target)
                except FileExistsError:
                    raise ConfigError(f"{self.target} appeared while it was being built", where=str(self.target),
                                      fix="run the command again (one at a time)") from None
        except BaseException:
            self.discard()
            raise
        self.published = True
        self._finish()

    def discard(self) -> None:
        """Remove the staging folder (and put a fallback's aside folder back); ``target`` is left as it was."""
        if self._lock_fd is None:
            return
        self._finish()

    def _finish(self) -> None:
        try:
            _recover(self.target, self.path, self._lock, self._aside)
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
            if self._parent_fd is not None:
                os.close(self._parent_fd)
                self._parent_fd = None


def shown_at_target(exc: BaseException, stage: Path, target: Path) -> None:
    """Make ``exc`` name ``target`` where it names a path under the staging folder ``stage`` (an error while the tree
    was built is about the folder the user asked for: ``build/site/x.html``, not
    ``build/.site.mtboard-staging-…/x.html``): an OSError's ``filename``/``filename2``, an
    :class:`~mtboard.core.errors.MtboardError`'s ``where`` and problem."""
    olds, new = {str(stage), os.path.realpath(stage)}, str(target)

    def swap(text):
        for old in olds:
            if isinstance(text, str) and old in text:
                text = text.replace(old, new)
        return text

    if isinstance(exc, MtboardError):
        exc.where, exc.problem = swap(exc.where), swap(exc.problem)
        exc.args = (exc.one_line(),)
    elif isinstance(exc, OSError):
        exc.filename, exc.filename2 = swap(exc.filename), swap(exc.filename2)


@contextmanager
def staged(target: str | os.PathLike[str], *, seed: bool = False, marker: str | None = None) -> Iterator[Stage]:
    """``with staged(target) as stage:`` build into ``stage.path``; when the block ends normally the stage is published
    (:meth:`Stage.publish`), when it raises (anything, ``KeyboardInterrupt`` included) or calls ``stage.discard()``,
    ``target`` stays as it was and the staging folder is removed. ``seed`` and ``marker``: :meth:`Stage.begin`.

    Example: ``with staged("build/site", marker=".mtboard-site") as s: (s.path / "index.html").write_text(...)``."""
    stage = Stage.begin(target, seed=seed, marker=marker)
    try:
        yield stage
    except BaseException as exc:
        stage.discard()
        shown_at_target(exc, stage.path, Path(target))  # as the caller gave it (relative stays relative)
        raise
    if stage._lock_fd is not None:
        stage.publish()


__all__ = ["LOCK_TEXT", "TAG", "Stage", "clean_leftovers", "rename2", "shown_at_target", "staged"]
