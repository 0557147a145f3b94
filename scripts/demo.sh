#!/usr/bin/env bash
# The main job on the embedded default: set up, then `mtboard demo` (Apertium en→es on corpora/mtb-en-es-dev.json,
# score, validate the card, build the site; Gemma 270M too when the local extra is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "$@"
exec .venv/bin/mtboard demo
