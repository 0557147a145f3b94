"""Apertium batching: segments/s of one ``apertium`` process over a blank-line-separated batch (the apertium
backend) against one process per segment, measured in the same run on the same real text.

Run: ``.venv/bin/python bench/apertium_batching.py [N] [MODE]`` (default 500 segments, eng-spa; the per-segment
baseline uses the first 40 of them). Prints both rates and their ratio.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time

from mtboard.backends.apertium import ApertiumBackend
from mtboard.backends.base import TranslateRequest, parse_method


def segments(n: int) -> list[str]:
    """Real English paragraphs (the Python documentation's pydoc topics, in the standard library)."""
    from pydoc_data.topics import topics

    paras = [p.strip() for k in sorted(topics) for p in re.split(r"\n\s*\n", topics[k]) if 20 < len(p.strip()) < 400]
    return paras[:n]


async def rate(backend: ApertiumBackend, sources: list[str]) -> float:
    t0 = time.perf_counter()
    recs = await backend.translate([TranslateRequest(entry_id=i, source=s) for i, s in enumerate(sources)])
    dt = time.perf_counter() - t0
    assert all(r.error is None for r in recs)
    return len(sources) / dt


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    mode = sys.argv[2] if len(sys.argv) > 2 else "eng-spa"
    srcs = segments(n)
    batched = ApertiumBackend(parse_method(f"apertium:{mode}"), apy_url="")
    batched.start()
    single = ApertiumBackend(parse_method(f"apertium:{mode}"), apy_url="", max_units=1)
    single.start()
    b = asyncio.run(rate(batched, srcs))
    s = asyncio.run(rate(single, srcs[:40]))
    print(f"batched: {b:.0f} segments/s ({len(srcs)} segments, {batched.process_calls} process call(s))")
    print(f"one process per paragraph: {s:.1f} segments/s (40 segments, {single.process_calls} process calls)")
    print(f"ratio batched / per-segment: {b / s:.0f}x")


if __name__ == "__main__":
    main()
