#!/usr/bin/env bash
# Set up, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The page tests drive Debian's chromium through Playwright (never `playwright install`).
if ! command -v chromium >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "hippo: installing chromium for the page tests" >&2
        { apt-get update -q && apt-get install -y -q chromium; } >/dev/null
    else
        echo "hippo: chromium is missing (apt-get install chromium); the page tests will be skipped" >&2
    fi
fi
# The environment of bench/mem0_compare.py (mem0 is no dependency of hippo): its smoke test runs there.
bash bench/mem0-env.sh
exec .venv/bin/python -m pytest "$@"
