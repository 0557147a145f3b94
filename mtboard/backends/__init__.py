"""Translation backends behind one interface (:class:`Backend`), registered through the ``mtboard.backends``
entry-point group — built-ins and third-party packages alike — and looked up by the name users type
(``backend:model``). See :mod:`mtboard.backends.base`.
"""

from mtboard.backends.base import (ENTRY_POINT_GROUP, REGISTRY, Backend, NoOptions, Options, Rerun, TranslateRequest,
                                   get_backend, load_backends, parse_method, register)

__all__ = ["ENTRY_POINT_GROUP", "REGISTRY", "Backend", "NoOptions", "Options", "Rerun", "TranslateRequest",
           "get_backend", "load_backends", "parse_method", "register"]
