#!/usr/bin/env bash
# Set up, then run hippo on its embedded defaults against ./hippo.db.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m hippo "$@"
