"""A package's public names imported from their modules on first use (PEP 562 module ``__getattr__``; issue 35 item 4,
"modules a run does not use are not imported").

One mechanism for the packages whose namespace a run would otherwise load whole: :mod:`mtboard.core.schema` (the
documents a run never reads), :mod:`mtboard.validate` and :mod:`mtboard.inputs.corpora`. Each names its lazy names by
defining module and keeps its own module-level ``__getattr__`` (for its own computed names) that ends in
:meth:`LazyNames.load`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LazyNames:
    """``exports``: defining submodule (relative to ``package``) → the public names it gives; ``namespace``: the
    package's ``globals()``, where a loaded name is kept so that the next lookup never reaches ``__getattr__``."""

    package: str
    namespace: dict[str, Any]
    exports: dict[str, tuple[str, ...]]
    where: dict[str, str] = field(init=False)
    """Name → defining submodule (derived from ``exports``)."""

    def __post_init__(self) -> None:
        self.where = {name: module for module, names in self.exports.items() for name in names}

    def __contains__(self, name: str) -> bool:
        return name in self.where

    def load(self, name: str) -> Any:
        """The value of ``name``, imported from its submodule now and kept in the package's namespace. Raises
        AttributeError (as a module does) for a name no submodule gives."""
        module = self.where.get(name)
        if module is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.package}.{module}"), name)
        self.namespace[name] = value
        return value

    def dir(self, public: list[str]) -> list[str]:
        """The package's ``__dir__``: what it holds now and every public name, loaded or not."""
        return sorted({*self.namespace, *public})


__all__ = ["LazyNames"]
