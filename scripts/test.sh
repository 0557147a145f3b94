#!/usr/bin/env bash
# The whole test suite, from a clean clone: installs what the tests need, then runs the full lane of pytest (every
# test: fast, slow and browser; tests/conftest.py, docs/TESTING.md). This is the README's test command and what CI
# (.ci/run) calls; it prints the 40 slowest tests (for docs/TESTING.md's timings). Extra arguments go to pytest
# (e.g. -n 0 to run in one process).
# The fast lane alone, for the edit-test loop: .venv/bin/python -m pytest
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
set +e
.venv/bin/python -m pytest -p no:cacheprovider --full --durations=40 "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
