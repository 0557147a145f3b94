"""Splitting a scoring job over a process pool: contiguous chunks of segments, one per worker; results do not depend
on the split (docs/SCORING_SPEC.md §7).

The run-time configuration's ``scoring_workers`` (``MTBOARD_SCORING_WORKERS``, read by the CLI;
:mod:`mtboard.core.runtime`) overrides the worker count; the workers get the run-time configuration of the process
that starts them. Below :data:`POOL_MIN_SEGMENTS` segments (or :data:`POOL_MIN_SEGMENTS_SPAWN` when the pool would
have to spawn) everything runs in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

from mtboard.core.runtime import install, runtime

POOL_MIN_SEGMENTS = 2000
"""Below this many segments everything runs in-process. Measured on 2 CPUs (fork): 2,000 segments 1.13 s in-process,
0.81 s with a pool; at 1,000 the pool no longer pays for its pickling and page copies."""
POOL_MIN_SEGMENTS_SPAWN = 4000
"""The same threshold when the pool must spawn (this process has threads): each worker then re-imports mtboard and
sacrebleu (~0.3 s CPU), so 2,000 segments took as long as in-process."""
MAX_WORKERS = 8
"""Most worker processes one scoring job uses."""


def start_method() -> str:
    """``fork`` when this process has a single thread (and the platform forks), else ``spawn``."""
    return "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"


def worker_count(n: int) -> int:
    """Processes for ``n`` segments: the run-time configuration's ``scoring_workers`` when set
    (``MTBOARD_SCORING_WORKERS``; at least 1); 1 below the pool threshold; else the usable CPUs, at most
    :data:`MAX_WORKERS`."""
    chosen = runtime().scoring_workers
    if chosen is not None:
        return max(1, chosen)
    if n < (POOL_MIN_SEGMENTS if start_method() == "fork" else POOL_MIN_SEGMENTS_SPAWN):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (non-Linux)
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def plan_chunks(n: int, workers: int | None = None, *, first_share: float = 1.0) -> list[tuple[int, int]]:
    """Contiguous ``(start, end)`` slices of ``n`` segments, one per worker (one slice when not worth a pool).

    ``first_share`` weighs the first slice against the others (1.0: equal slices); :func:`map_chunks` runs the first
    slice in the calling process, which has work of its own to do afterwards, so callers may give it less.
    """
    k = workers if workers is not None else worker_count(n)
    if k <= 1 or n < 2 * k:
        return [(0, n)]
    if first_share == 1.0:
        bounds = [n * i // k for i in range(k + 1)]
    else:
        total = first_share + k - 1
        bounds = [0] + [min(n - 1, max(1, round(n * (first_share + i) / total))) for i in range(k - 1)] + [n]
    return list(zip(bounds, bounds[1:]))


def map_chunks(fn, args: list[tuple]) -> list:
    """``[fn(*a) for a in args]``; with more than one chunk, the first runs in this process while a process pool
    runs the others (fork when this process has a single thread, else spawn), each with this process's run-time
    configuration (:func:`mtboard.core.runtime.install`). ``fn`` must be a module-level function; results come back
    in order."""
    if len(args) <= 1:
        return [fn(*a) for a in args]
    ctx = multiprocessing.get_context(start_method())
    with ProcessPoolExecutor(max_workers=len(args) - 1, mp_context=ctx, initializer=install,
                             initargs=(runtime(),)) as pool:
        futures = [pool.submit(fn, *a) for a in args[1:]]
        first = fn(*args[0])  # this process works too instead of waiting (and its share is never pickled)
        return [first] + [f.result() for f in futures]
