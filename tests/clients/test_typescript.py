"""The TypeScript client (clients/typescript): its own tests, `npm test`, run with Node's test runner
against a real `hippo serve` that each test file starts on this checkout's code. Skipped only where
node is not installed; scripts/test.sh installs the package's dependencies (`npm ci`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"


@pytest.mark.timeout(900)
def test_the_typescript_clients_tests_pass():
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the TypeScript client is not tested")
    env = {**os.environ, "HIPPO_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    if not (PACKAGE / "node_modules" / ".package-lock.json").is_file():  # not installed by scripts/test.sh
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PACKAGE, env=env, check=True,
                       capture_output=True, timeout=600)
    done = subprocess.run([npm, "test"], cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=850)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-8000:]
    assert "# fail 0" in said and "# pass 0" not in said, said[-8000:]
