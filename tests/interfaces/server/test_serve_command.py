"""The README's first command: `bash scripts/run.sh` sets up and serves the API, printing its URL."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from test_mcp import free_port

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.install  # scripts/run.sh sets up .venv before it serves
@pytest.mark.timeout(600)
def test_run_script_serves_the_api(tmp_path):
    port = free_port()
    env = {**os.environ, "HIPPO_DB": str(tmp_path / "served.db"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "run.sh"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 540
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert health.json()["status"] == "ok"
        stored = httpx.post(f"http://127.0.0.1:{port}/v1/agents/default/memories",
                            json={"content": "Served by the README's first command"})
        assert stored.status_code == 201
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}" in err.decode() and "Traceback" not in err.decode()
    assert (tmp_path / "served.db").exists() and not (ROOT / "hippo.db").exists()
