"""SIGTERM under load: `hippo serve` stops taking connections, answers every request it took, lets
its capture schedule finish, closes the database and ends as a SIGTERM ends a process; no acknowledged write is lost.

Each client request opens a connection of its own, so its outcome is one of three: answered (any
status), refused (the server no longer listens: never taken) or dropped (the connection closed
with no answer). A dropped request may only be one the server never read: a write dropped must be
absent from the database, or a request was left without an answer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from test_mcp import free_port

import hippo
from hippo.providers.fake import FakeEmbedder

HIPPO = str(Path(sys.executable).with_name("hippo"))
SLOW_MESSAGES = [{"role": "user" if i % 2 else "assistant", "content": f"Step {i}: we moved the build to stage {i}."}
                 for i in range(3_000)]


class Outcomes:
    """What each client saw, by request."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stored: dict[str, str] = {}  # content -> id, answered 201
        self.dropped: list[str] = []  # contents whose request got no answer
        self.observed: list[dict] = []  # messages acknowledged by observe (202)
        self.slow: list[tuple[float, float, int]] = []  # compactions: sent, answered (monotonic), status
        self.other: list[str] = []  # any answer a client did not expect


def _writer(url: str, n: int, out: Outcomes) -> None:
    for i in range(100_000):
        content = f"writer {n} wrote item {i}"
        try:
            answer = httpx.post(f"{url}/v1/agents/alice/memories", json={"content": content},
                                headers={"Connection": "close"}, timeout=30)
        except httpx.ConnectError:
            return  # the server stopped listening: this request was never taken
        except httpx.TransportError:
            with out.lock:
                out.dropped.append(content)
            continue
        with out.lock:
            if answer.status_code == 201:
                out.stored[content] = answer.json()["id"]
            else:
                out.other.append(f"store {answer.status_code}: {answer.text[:200]}")


def _observer(url: str, out: Outcomes) -> None:
    for i in range(100_000):
        message = {"id": f"m{i}", "role": "user", "content": f"I planted tomato number {i} in the garden."}
        try:
            answer = httpx.post(f"{url}/v1/agents/alice/sessions/garden/messages", json={"messages": [message]},
                                headers={"Connection": "close"}, timeout=30)
        except httpx.TransportError:
            return
        with out.lock:
            if answer.status_code == 202:
                out.observed.append(message)
            else:
                out.other.append(f"observe {answer.status_code}: {answer.text[:200]}")


def _compactor(url: str, out: Outcomes, sent: threading.Event) -> None:
    """Long requests, one after another: at least one is in flight when the signal comes."""
    while True:
        began = time.monotonic()
        sent.set()
        try:
            answer = httpx.post(f"{url}/v1/agents/alice/compact", json={"messages": SLOW_MESSAGES},
                                headers={"Connection": "close"}, timeout=60)
        except httpx.TransportError:
            return
        with out.lock:
            out.slow.append((began, time.monotonic(), answer.status_code))


def _start(db: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "HIPPO_DB": str(db), "HIPPO_EMBEDDER": "fake", "HIPPO_CONFIG": str(db.with_suffix(".toml")),
           "HIPPO_CAPTURE_EVERY": "0.2"}
    proc = subprocess.Popen([HIPPO, "serve", "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("hippo serve did not answer in 60 s")


@pytest.mark.timeout(180)
def test_sigterm_under_load_loses_no_acknowledged_write_and_answers_what_it_took(tmp_path):
    db, port = tmp_path / "served.db", free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _start(db, port)
    out, sent = Outcomes(), threading.Event()
    clients = [threading.Thread(target=_writer, args=(url, n, out)) for n in range(6)]
    clients += [threading.Thread(target=_observer, args=(url, out)),
                threading.Thread(target=_compactor, args=(url, out, sent))]
    for client in clients:
        client.start()
    try:
        time.sleep(3.0)  # a steady load, capture processing every 0.2 s
        assert sent.wait(10)
        while not out.slow:  # a compaction's length measured once, then one sent and signalled mid-way
            time.sleep(0.05)
        in_flight_since = time.monotonic()
        time.sleep(0.05)
        signalled = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        for client in clients:
            client.join(timeout=60)
    stderr = err.decode()
    # uvicorn shuts down, then lets the signal end the process as it would have: status 143 in a shell
    assert proc.returncode == -signal.SIGTERM, stderr[-2000:]
    assert not db.with_name(db.name + "-wal").exists()  # the database was closed: the log was checkpointed
    assert "Traceback" not in stderr, stderr[-2000:]
    assert out.other == []
    # a compaction was running when the signal came, and it was answered
    assert any(began < signalled < done and status == 200 for began, done, status in out.slow), \
        (in_flight_since, signalled, out.slow[-3:])
    assert len(out.stored) > 20 and len(out.observed) > 5

    with hippo.open(str(db), agent_id="alice", embedder=FakeEmbedder()) as mem:
        for content, memory_id in out.stored.items():
            assert mem.get_memory(memory_id).content == content  # every acknowledged write is there
        held = {chunk.content for chunk in _all_memories(mem)}
        assert not held & set(out.dropped)  # a request dropped was never taken: it wrote nothing
        again = mem.observe(out.observed, session_id="garden")
        assert again.duplicates == len(out.observed) and again.accepted == 0  # every observed message kept


def _all_memories(mem: hippo.Memory) -> list:
    found, cursor = [], None
    while True:
        page = mem.list_memories(limit=100, cursor=cursor)
        found += page.items
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
