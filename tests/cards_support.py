"""Committed development cards found by what they are, not by file name: a re-score (``mtboard rescore``) renames a
card (its fingerprint hash changes with the harness version), so tests that need "the full-corpus Apertium card" or
"a 20-entry echo baseline" look them up here."""

from __future__ import annotations

import functools
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"


@functools.cache
def facts(path: Path) -> tuple[str, int | None, int, float]:
    """What the lookups here select a committed card by — its dataset segment (the schema's default,
    "development", when absent), ``method.limit``, number of results and composite — read from its JSON (a whole ``load_card`` validates all its entries: ~0.09 s a 355-entry card,
    paid at collection by every test process)."""
    card = json.loads(path.read_bytes())
    return (card["dataset"].get("segment", "development"), card["method"].get("limit"), len(card["results"]),
            card["scores"]["composite"])


@functools.cache
def committed(prefix: str, entries: int | None = None, dataset: Path = ES) -> Path:
    """The committed card of ``dataset`` whose file name starts with ``prefix`` (``apertium-eng-spa__default__``)
    and that has ``entries`` results (None: the full-corpus card, without ``--limit``), on the development segment
    (the diagnostic cards of issue 40 are not meant); of several, the one with the highest composite (then the file
    name). Raises LookupError when none fits."""
    found = []
    for p in sorted(dataset.glob(f"{prefix}*.json")):
        if p.name.endswith(".verification.json"):
            continue
        segment, limit, n, composite = facts(p)
        if segment != "development":
            continue
        if (limit is None) if entries is None else n == entries:
            found.append((-composite, p.name, p))
    if not found:
        raise LookupError(f"no committed {prefix}* card with {entries or 'all'} entries in {dataset.name}")
    return min(found)[2]
