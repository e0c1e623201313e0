"""Starting a server (the HTTP API, MCP over HTTP): a port another program holds is one line on
stderr and exit code 1, before the server is announced; without the http extra, the server of
docs/guide/http.md names it."""

from __future__ import annotations

import os
import re
import runpy
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import hippo

ROOT = Path(__file__).resolve().parents[3]
HIPPO = Path(sys.executable).with_name("hippo")


def test_serve_on_a_busy_port_says_so_in_one_line_and_exits_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "HIPPO_CONFIG": str(tmp_path / "none.toml")}
        done = subprocess.run([str(HIPPO), "--db", str(tmp_path / "h.db"), "--embedder", "fake", "serve",
                               "--port", str(port)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: cannot serve at http://127.0.0.1:{port}: the address is already in use "
                           "(is another server running there?); choose another port\n")
    assert not (tmp_path / "h.db").exists()  # the database it would have served is not left behind


def test_mcp_over_http_on_a_busy_port_says_so_in_one_line_and_exits_1(tmp_path):
    pytest.importorskip("mcp")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "HIPPO_CONFIG": str(tmp_path / "none.toml")}
        done = subprocess.run([str(HIPPO), "--db", str(tmp_path / "h.db"), "--embedder", "fake", "mcp", "--http",
                               "--port", str(port)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
    assert (done.returncode, done.stdout) == (1, "")
    said = done.stderr.splitlines()
    assert said[-1] == (f"error: cannot serve at http://127.0.0.1:{port}: the address is already in use "
                        "(is another server running there?); choose another port")
    assert not any("MCP server on" in line or "Errno" in line for line in said), said


def test_serve_in_python_on_a_busy_port_announces_nothing(tmp_path):
    from hippo.interfaces.http.server import serve

    said: list[str] = []
    with socket.socket() as taken, hippo.open(tmp_path / "h.db", embedder="none") as mem:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(hippo.ConfigError, match="the address is already in use"):
            serve(mem, port=taken.getsockname()[1], announce=said.append)
    assert said == []


def test_the_background_server_of_the_guide_without_the_http_extra_names_it(tmp_path, monkeypatch):
    """What ``pip install '.[local]'`` alone lacks: the HTTP server and its framework."""
    guide = (ROOT / "docs" / "guide" / "http.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "BackgroundServer(" in b)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # an import of it now fails as if not installed
    monkeypatch.setitem(sys.modules, "fastapi", None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "example.py").write_text(example, encoding="utf-8")
    with pytest.raises(hippo.MissingDependency) as info:
        runpy.run_path(str(tmp_path / "example.py"))
    assert (info.value.package, info.value.extra) == ("uvicorn", "http")
    from hippo.installed import install_line

    assert info.value.message == f"uvicorn is not installed; install it with: {install_line('http')}"
