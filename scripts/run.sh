#!/usr/bin/env bash
# Set up, then serve hippo's HTTP API on its embedded defaults: ./hippo.db, the
# local model, loopback only. Options go to `hippo serve` (--port, --host, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hippo serve "$@"
