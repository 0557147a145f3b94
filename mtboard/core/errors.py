"""Errors that carry a one-line, actionable message.

Library code raises these; only the command line prints them and exits (:func:`mtboard.cli.app.guarded`: exit code
1, no traceback).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


class MtboardError(Exception):
    """Base error: ``where`` (file or object), ``field`` (JSON path), what is wrong, and ``fix`` (what to do).

    ``str(err)`` is a single line: ``"<where>: <field>: <problem> (fix: <fix>)"``; parts that are unknown are left out.
    Messages never echo untrusted content beyond a short, escaped excerpt.
    """

    def __init__(self, problem: str, *, where: str | None = None, field: str | None = None, fix: str | None = None):
        self.problem = problem
        self.where = where
        self.field = field
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = [p for p in (self.where, self.field) if p]
        msg = ": ".join(parts + [self.problem])
        if self.fix:
            msg += f" (fix: {self.fix})"
        return msg.replace("\n", " ")


class InputError(MtboardError):
    """Malformed or unsafe input: a file that is too big, not JSON, not the schema, a symlink, …"""


class ConfigError(MtboardError):
    """A command-line option, environment variable or method spec that cannot work."""


class BackendError(MtboardError):
    """A translation backend that cannot start or answer (missing binary, server not healthy, canary failed)."""


class DeferredError(BackendError):
    """A local model that does not fit in free memory: deferred, nothing downloaded (JA→EN write-up, fit check)."""


class StorageError(MtboardError):
    """The machine's storage refused a write, or the folder being written vanished: a full disk (``ENOSPC``), an
    exhausted quota (``EDQUOT``), a read-only file system (``EROFS``), no permission (``EACCES``/``EPERM``), a device
    error (``EIO``), too many open files (``EMFILE``/``ENFILE``), a name too long (``ENAMETOOLONG``), or a work
    directory deleted or unmounted mid-run. An environment fault, never a bug in mtboard: one line naming the path
    and the fix (the CLI adds the command that resumes a run, :meth:`with_resume`). ``errno``: the OSError's number
    (None for a vanished directory)."""

    def __init__(self, problem: str, *, where: str | None = None, field: str | None = None, fix: str | None = None,
                 errno: int | None = None):
        self.errno = errno
        super().__init__(problem, where=where, field=field, fix=fix)

    def with_resume(self, command: str) -> StorageError:
        """The same error with ``then resume with: COMMAND`` appended to its fix."""
        fix = f"{self.fix}; then resume with: {command}" if self.fix else f"resume with: {command}"
        return StorageError(self.problem, where=self.where, field=self.field, fix=fix, errno=self.errno)

    def with_rerun(self, command: str) -> StorageError:
        """The same error with ``then re-run: COMMAND`` appended to its fix (a command that writes its outputs
        atomically — rescore, corpus import, submit, build — starts over once the fault is fixed); unchanged when
        its fix already says how to resume or re-run (``mtboard run``/``judge`` name their own resume command)."""
        if self.fix and ("resume with: " in self.fix or "re-run: " in self.fix):
            return self
        fix = f"{self.fix}; then re-run: {command}" if self.fix else f"re-run: {command}"
        return StorageError(self.problem, where=self.where, field=self.field, fix=fix, errno=self.errno)


def _environment_faults() -> dict[int, tuple[str, str]]:
    import errno as e

    faults = {
        e.ENOSPC: ("no space left on the device (ENOSPC)",
                   "free space on that file system, or move the folder to a disk with room"),
        e.EROFS: ("the file system is read-only (EROFS)",
                  "remount it read-write, or use a folder on a writable file system"),
        e.EACCES: ("permission denied (EACCES)",
                   "make the folder writable for this user (chmod/chown), or use another folder"),
        e.EPERM: ("operation not permitted (EPERM)",
                  "make the folder writable for this user (chmod/chown; an immutable attribute: chattr -i), or use "
                  "another folder"),
        e.EIO: ("input/output error: the device failed (EIO)",
                "check the disk (dmesg, smartctl) and its mount, or use a folder on another disk"),
        e.EMFILE: ("too many open files for this process (EMFILE)", "raise the limit (ulimit -n 4096)"),
        e.ENFILE: ("too many open files on this system (ENFILE)", "close other programs or raise fs.file-max"),
        e.ENAMETOOLONG: ("file name too long (ENAMETOOLONG)", "use a shorter path (--work-dir / --out)"),
    }
    if hasattr(e, "EDQUOT"):
        faults[e.EDQUOT] = ("disk quota exceeded (EDQUOT)",
                            "free space within your quota (quota -s shows it), or use a folder on another disk")
    return faults


ENVIRONMENT_FAULTS: dict[int, tuple[str, str]] = _environment_faults()
"""errno → (problem, fix) of the OSErrors that are environment faults, not bugs (POSIX ``errno.h``; Linux
``open(2)``/``write(2)``/``fsync(2)``/``mkdir(2)`` list where each arises). An errno not here (``EINVAL``,
``EBADF``, ``ENOENT`` of a path the code itself computed, ``EISDIR`` …) is left to the caller: from mtboard's own
code it is a bug and stays an ``internal error``. ``ENOENT`` of a work directory that vanished mid-run is mapped
where the run writes (:mod:`mtboard.run.workdir`), which knows the folder existed."""


def os_error_path(exc: OSError) -> str | None:
    """The path(s) an OSError names: ``exc.filename``, and ``exc.filename2`` after " → " when the call had two
    (``os.replace``, ``os.link``, ``shutil.copyfile``'s ``open`` of either side); None when it names none (a failed
    ``write``/``fsync``/``close`` of an open file). Bytes paths are decoded with ``os.fsdecode``."""
    names = [os.fsdecode(n) if isinstance(n, bytes) else str(n)
             for n in (exc.filename, exc.filename2) if n is not None]
    return " → ".join(names) if names else None


def storage_error(exc: OSError, where: str | None = None) -> StorageError | None:
    """The :class:`StorageError` for an OSError whose errno is an environment fault (:data:`ENVIRONMENT_FAULTS`),
    naming ``where`` (default: the path(s) the error names, :func:`os_error_path`); None for any other errno.

    ``OSError(28, 'No space left on device', 'w/raw.jsonl')`` → ``w/raw.jsonl: no space left on the device
    (ENOSPC) (fix: free space on that file system, or move the folder to a disk with room)``."""
    if isinstance(exc, StorageError):
        return exc
    fault = ENVIRONMENT_FAULTS.get(exc.errno) if exc.errno is not None else None
    if fault is None:
        return None
    path = where if where is not None else os_error_path(exc)
    return StorageError(fault[0], where=None if path is None else str(path), fix=fault[1], errno=exc.errno)


@contextmanager
def storage_faults(path: str | os.PathLike[str], *, own_name_first: bool = False) -> Iterator[None]:
    """Inside the block, an OSError that is an environment fault (:func:`storage_error`) becomes a StorageError
    naming ``path`` — the file being written (a failed ``write``/``fsync`` names no file of its own); with
    ``own_name_first`` the path the OSError names itself comes first (a block that writes many files under the
    folder ``path``: MkDocs, ``shutil.copytree``) and ``path`` only when it names none. Any other exception passes
    unchanged."""
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        own = os_error_path(exc) if own_name_first else None
        fault = storage_error(exc, own if own is not None else os.fspath(path))
        if fault is None:
            raise
        raise fault from None


def check_writable(path: str | os.PathLike[str], option: str, *, folder: bool = False) -> None:
    """Before anything is sent (issue 33 review finding 6): can the command write ``path``? ``folder``: ``path`` is
    a folder the command writes into (a work directory), else a file written atomically into its parent folder (a
    card, ``--out``). The folder — or, when it does not exist yet, its nearest existing parent, where it will be
    made — gets a temporary file (``tempfile.mkstemp``) with one byte written and fsynced, then removed: a
    read-only file system, a missing permission or a disk already full is found with nothing sent.

    ``option`` names where the path came from (``--out``, ``--work-dir``, ``WORKDIR``) and becomes the error's field.
    Raises: StorageError naming ``path``, ``option`` and the fix (an :data:`ENVIRONMENT_FAULTS` errno); ConfigError
    when a file stands where a folder is needed, or ``path`` of a file is a folder. Other OSErrors pass unchanged.
    Source: ``mkstemp`` is ``open(2)`` with ``O_CREAT|O_EXCL``, which reports ``EROFS``/``EACCES``/``ENOSPC``/
    ``EDQUOT`` as a later write would (POSIX ``open``)."""
    import tempfile

    target = os.fspath(path)
    if not folder and os.path.isdir(target):
        raise ConfigError("this is a folder; the command writes a file here", where=target, field=option,
                          fix="give a file name (e.g. card.json in that folder)")
    place = os.path.abspath(target if folder else os.path.dirname(os.path.abspath(target)))
    while not os.path.lexists(place):
        parent = os.path.dirname(place)
        if parent == place:
            break
        place = parent
    if not os.path.isdir(place):
        raise ConfigError(f"{place} is a file, not a folder, so nothing can be written under it", where=target,
                          field=option, fix="remove that file or choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mtboard-write-check-", dir=place)
        try:
            os.write(fd, b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        fault = ENVIRONMENT_FAULTS.get(exc.errno) if exc.errno is not None else None
        if fault is None:
            raise
        where = "" if place == os.path.abspath(target) else f" (checked in {place}, where it will be written)"
        raise StorageError(f"cannot write here: {fault[0]}{where}; nothing was sent", where=target, field=option,
                           fix=fault[1], errno=exc.errno) from None
