#!/usr/bin/env bash
# Set up, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The environment of bench/mem0_compare.py (mem0 is no dependency of hippo): its smoke test runs there.
bash bench/mem0-env.sh
exec .venv/bin/python -m pytest "$@"
