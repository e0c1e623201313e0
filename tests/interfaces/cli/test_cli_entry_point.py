"""The installed ``hippo`` script: answers --help without loading anything heavy, and runs for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HIPPO = Path(sys.executable).with_name("hippo")
HEAVY = ["numpy", "onnxruntime", "tokenizers", "torch", "transformers", "httpx", "openai", "anthropic", "fastapi",
         "starlette", "uvicorn", "mcp", "hippo.core.memory", "hippo.stores.sqlite"]

pytestmark = pytest.mark.skipif(not HIPPO.exists(), reason="the hippo script is not installed (pip install -e .[cli])")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env["HIPPO_CONFIG"] = str(tmp_path / "no-such-hippo.toml")
    return env


def _hippo(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HIPPO), *args], cwd=tmp_path, env=_env(tmp_path), input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_help_runs_and_imports_nothing_heavy(tmp_path):
    started = time.perf_counter()
    result = _hippo(tmp_path, "--help")
    elapsed = time.perf_counter() - started
    print(f"hippo --help took {elapsed:.3f} s")  # measured, not asserted: timings do not belong in unit tests
    assert result.returncode == 0, result.stderr
    assert "memories" in result.stdout and "data" in result.stdout
    assert list(tmp_path.iterdir()) == []  # no database created

    code = (
        "import json, sys\n"
        "import hippo.interfaces.cli\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                            text=True, timeout=60, check=True)
    assert json.loads(loaded.stdout) == []


def test_a_real_session_through_the_script(tmp_path):
    base = ["--db", "mem.db", "--agent", "me", "--embedder", "fake"]
    stored = _hippo(tmp_path, *base, "store", "-", "--json", stdin="We chose SQLite\n")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]
    recalled = _hippo(tmp_path, *base, "recall", "SQLite", "--json")
    assert [h["chunk"]["id"] for h in json.loads(recalled.stdout)["hits"]] == [memory_id]

    failed = _hippo(tmp_path, *base, "show", "nope")
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr == "error: invalid memory id 'nope': expected a 26-character ULID\n"
    usage = _hippo(tmp_path, *base, "recall", "--no-such-option")
    assert usage.returncode == 2 and "Traceback" not in usage.stderr

    exported = _hippo(tmp_path, *base, "export")
    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 2
    piped = subprocess.run(f"'{HIPPO}' --db mem.db --agent me --embedder fake export | head -c 10", shell=True,
                           cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert "Traceback" not in piped.stderr
