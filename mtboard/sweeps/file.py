"""Reading the sweep file ``sweeps/NAME.yaml`` (spec §6.2): :func:`load_sweep_file`. The pydantic models that validate
it are :class:`mtboard.core.schema.SweepFile` and its parts (exported as ``schemas/sweep.schema.json``, ``mtboard schema
sweep``). The format is described in :mod:`mtboard.sweeps.spec` and docs/sweeps.md; expansion into cells is :func:`mtboard.sweeps.cells.expand`.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from mtboard.core import canonical
from mtboard.core.errors import InputError
from mtboard.core.schema import SweepFile

def load_sweep_file(path: str | Path) -> tuple[SweepFile, str]:
    """Read and validate a sweep file. Returns (model, SHA-256 of its bytes).

    Raises: InputError naming the file, the field and the problem.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the sweep file: {exc.strerror or exc}", where=str(p),
                         fix="pass the path of a sweeps/NAME.yaml file") from None
    try:
        raw = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}", where=str(p), fix="fix the YAML syntax") \
            from None
    if not isinstance(raw, dict):
        raise InputError("a sweep file is a YAML mapping (name, datasets, methods, …)", where=str(p),
                         fix="see docs/sweeps.md for the format")
    try:
        model = SweepFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "(top)"
        raise InputError(f"{err['msg']}", where=str(p), field=loc,
                         fix="see docs/sweeps.md (schemas/sweep.schema.json) for the fields") from None
    return model, canonical.sha256_hex(data)


__all__ = ["load_sweep_file"]
