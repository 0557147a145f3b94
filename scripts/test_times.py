"""Where a test lane's time went: reads the JSON lines ``MTBOARD_TEST_TIMES=FILE pytest …`` wrote (tests/conftest.py
``_Timeline``: one line per test — worker, node id, start, wall and CPU seconds) and prints, per worker, its tests'
wall and CPU seconds and when it finished; the modules by wall time; the tests whose wall time most exceeds their CPU
time (they wait: on a server, a sleep, a child process not yet reaped); and the CPU seconds finished per minute
(docs/TESTING.md §1).

    MTBOARD_TEST_TIMES=/tmp/times.jsonl bash scripts/test.sh
    .venv/bin/python scripts/test_times.py /tmp/times.jsonl [--top N]

CPU counts a child process once it has been waited for (``os.times``), so a server killed without ``wait`` is not
counted; wall time is exact.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("times", type=Path, help="the file MTBOARD_TEST_TIMES named")
    parser.add_argument("--top", type=int, default=25, help="rows per table (default 25)")
    args = parser.parse_args(argv)
    try:
        rows = [json.loads(line) for line in args.times.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"test_times: cannot read {args.times}: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print(f"test_times: {args.times} holds no test", file=sys.stderr)
        return 2
    t0 = min(r["start"] for r in rows)
    span = max(r["start"] + r["wall"] for r in rows) - t0
    cpu = sum(r["cpu"] for r in rows)
    print(f"{len(rows)} tests in {span:.0f} s; CPU {cpu:.0f} s counted ({cpu / span:.2f} CPUs on average)")
    workers: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        workers[r["worker"]].append(r)
    print("\nworker   tests   wall s    CPU s   ends at s")
    for w, rs in sorted(workers.items()):
        print(f"{w:<7} {len(rs):>6} {sum(r['wall'] for r in rs):>8.0f} {sum(r['cpu'] for r in rs):>8.0f} "
              f"{max(r['start'] + r['wall'] for r in rs) - t0:>11.0f}")
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        m = modules[r["test"].split("::", 1)[0]]
        m[0] += r["wall"]
        m[1] += r["cpu"]
        m[2] += 1
    print("\n  wall s    CPU s  tests  module")
    for name, (wall, c, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{wall:>8.1f} {c:>8.1f} {n:>6}  {name}")
    print("\n  wall s    CPU s  test (wall far above CPU: it waits)")
    for r in sorted(rows, key=lambda r: r["cpu"] - r["wall"])[:args.top]:
        print(f"{r['wall']:>8.1f} {r['cpu']:>8.1f}  {r['test']}")
    minutes = collections.Counter()
    for r in rows:
        minutes[int((r["start"] + r["wall"] - t0) // 60)] += r["cpu"]
    print("\nCPU seconds of the tests that ended in each minute:")
    print(" ".join(f"{k}:{minutes[k]:.0f}" for k in range(int(span // 60) + 1)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
