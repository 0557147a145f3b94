"""Translation backends behind one interface, in a registry keyed by the name users type (``backend:model``).

See :mod:`mtboard.backends.base` for the interface. Built-in backends register through the same
:func:`register` an outside plugin would use.
"""

from mtboard.backends.base import (REGISTRY, Backend, MethodSpec, get_backend, load_builtin_backends, parse_method,
                                   register)

# Built-in backends (openai, apertium, echo/empty, gguf) register on import.
load_builtin_backends()

__all__ = ["REGISTRY", "Backend", "MethodSpec", "get_backend", "parse_method", "register"]
