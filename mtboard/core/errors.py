"""Errors that carry a one-line, actionable message.

Library code raises these; only ``mtboard.cli.main`` prints them and exits (exit code 1, no traceback).
"""

from __future__ import annotations


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
