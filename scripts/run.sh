#!/usr/bin/env bash
# Install what serving needs into .venv (the library, its local model, the hippo command, the
# HTTP server and dashboard, the MCP server: scripts/setup.sh serve), then serve hippo on its
# embedded defaults: ./hippo.db, the local model, loopback only. Options go to `hippo serve`
# (--port, --host, ...). The test tools and the other extras come with scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh serve
exec .venv/bin/hippo serve "$@"
