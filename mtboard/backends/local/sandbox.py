"""The bubblewrap sandbox, under the name model-server code has always imported it by (issue 21).

The one implementation is :mod:`mtboard.core.sandbox`: it moved down to ``core/`` (issue 34 item 5) because the COMET
worker (:mod:`mtboard.score.metrics.neural`, a stage below the backends) runs in the same sandbox as model servers.
This module re-exports the same objects (``sandbox.status`` here *is* ``mtboard.core.sandbox.status``: clearing its
cache or calling it is the same thing), so ``from mtboard.backends.local import sandbox`` keeps working.
"""

from __future__ import annotations

from mtboard.core.sandbox import (BWRAP, BWRAP_ENV, ETC_FILES, FIX, GPU_DEVICES, MODEL_DIR, OFF_RECORD, PASSED_ENV,
                                  SOCKET_DIR, Sandbox, SandboxStatus, gpu_device_args, python_roots, require, status,
                                  system_args)

__all__ = ["BWRAP", "BWRAP_ENV", "ETC_FILES", "FIX", "GPU_DEVICES", "MODEL_DIR", "OFF_RECORD", "PASSED_ENV",
           "SOCKET_DIR", "Sandbox", "SandboxStatus", "gpu_device_args", "python_roots", "require", "status",
           "system_args"]
