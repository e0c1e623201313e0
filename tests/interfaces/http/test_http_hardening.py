"""Defects found by probing the HTTP API, each against a real server on loopback: a `hippo serve`
process where the command's own behaviour matters, the in-process server elsewhere."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")
from test_mcp import HIPPO, env, free_port  # noqa: E402

import hippo  # noqa: E402
from hippo.core.keys import create_key  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.providers.fake import FakeEmbedder  # noqa: E402
from hippo.stores.sqlite import SQLiteStore  # noqa: E402


def new_key(db: Path, *agents: str, admin: bool = False) -> tuple[str, str]:
    store = SQLiteStore(db)
    try:
        token, record = create_key(store, list(agents), admin=admin, now=datetime.now(timezone.utc))
    finally:
        store.close()
    return token, record.id


def hippo_cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HIPPO, "--db", str(db), "--embedder", "fake", *args], env=env(), capture_output=True,
                          text=True, timeout=60)


class Served:
    """`hippo serve` in its own process on a free loopback port."""

    def __init__(self, db: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([HIPPO, "--db", str(db), "--embedder", "fake", "serve", "--port",
                                      str(self.port)], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            try:
                httpx.get(f"{self.url}/healthz", timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("hippo serve did not start")

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=20)
        return err.decode()


@pytest.fixture
def seeded_db(tmp_path) -> Path:
    db = tmp_path / "served.db"
    with hippo.open(db, agent_id="bob", embedder=FakeEmbedder()) as bob:
        bob.store_memory("Bob's salary is 91k")
    return db


def test_deleting_the_last_key_does_not_open_a_running_server(seeded_db):
    _, key_id = new_key(seeded_db, "alice")
    server = Served(seeded_db)
    try:
        bobs = f"{server.url}/v1/agents/bob/memories"
        assert httpx.get(bobs).status_code == 401
        deleted = hippo_cli(seeded_db, "keys", "delete", key_id)
        assert deleted.returncode == 0 and "last key" in deleted.stderr
        assert "keeps requiring" in hippo_cli(seeded_db, "keys", "list").stderr
        refused = httpx.get(bobs)
        assert refused.status_code == 401 and "91k" not in refused.text
        assert httpx.get(f"{server.url}/healthz").json()["auth"] is True
    finally:
        assert "Traceback" not in server.stop()


def test_a_keyless_server_that_saw_a_key_keeps_requiring_one(seeded_db):
    server = Served(seeded_db)
    try:
        bobs = f"{server.url}/v1/agents/bob/memories"
        assert httpx.get(bobs).status_code == 200
        token, key_id = new_key(seeded_db, "bob")
        assert httpx.get(bobs).status_code == 401
        assert httpx.get(bobs, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        hippo_cli(seeded_db, "keys", "delete", key_id)
        assert httpx.get(bobs).status_code == 401
    finally:
        server.stop()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.nip.io", "192.168.1.5"])
def test_a_loopback_server_refuses_other_host_names(seeded_db, host):
    server = Served(seeded_db)
    try:
        response = httpx.get(f"{server.url}/v1/agents/bob/memories", headers={"Host": host})
        assert response.status_code == 421 and response.json()["error"]["code"] == "misdirected_request"
        for good in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost", f"[::1]:{server.port}"):
            assert httpx.get(f"{server.url}/healthz", headers={"Host": good}).status_code == 200, good
    finally:
        server.stop()


@pytest.fixture
def mem(tmp_path):
    return hippo.open(tmp_path / "h.db", agent_id="alice", embedder=FakeEmbedder())


def test_stats_show_the_file_size_to_admins_only(mem, tmp_path):
    mem.store_memory("alice's note")
    with BackgroundServer(mem) as url:
        keyless = httpx.get(f"{url}/v1/agents/alice/stats").json()
        assert keyless["database_bytes"] > 0  # no key: whoever reaches loopback can read the file anyway
        alice_key, _ = new_key(tmp_path / "h.db", "alice")
        admin_key, _ = new_key(tmp_path / "h.db", admin=True)
        scoped = httpx.get(f"{url}/v1/agents/alice/stats", headers={"Authorization": f"Bearer {alice_key}"})
        assert scoped.status_code == 200 and scoped.json()["database_bytes"] is None
        assert scoped.json()["memories"] == 1
        admin = httpx.get(f"{url}/v1/agents/alice/stats", headers={"Authorization": f"Bearer {admin_key}"})
        assert admin.json()["database_bytes"] > 0


def test_small_http_defects(mem):
    with BackgroundServer(mem, max_body_bytes=2048) as url:
        memories = f"{url}/v1/agents/alice/memories"
        assert httpx.post(memories, json={"content": "twice"}).status_code == 201
        assert httpx.post(memories, json={"content": "twice"}).status_code == 200
        documented = httpx.get(f"{url}/openapi.json").json()["paths"]["/v1/agents/{agent_id}/memories"]["post"]
        assert {"200", "201"} <= set(documented["responses"])

        def chunks():
            for _ in range(10):
                yield b'{"content": "' + b"x" * 500 + b'"'
        streamed = httpx.post(memories, content=chunks(), headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "too_large"

        slash = httpx.get(f"{memories}/")
        assert slash.status_code == 404 and slash.json()["error"]["code"] == "not_found"


def test_a_database_deleted_under_a_running_server_fails_loudly(mem, tmp_path):
    db = tmp_path / "h.db"
    with BackgroundServer(mem) as url:
        memories = f"{url}/v1/agents/alice/memories"
        assert httpx.post(memories, json={"content": "before"}).status_code == 201
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{db}{suffix}"):
                os.unlink(f"{db}{suffix}")
        lost = httpx.post(memories, json={"content": "after"})
        assert lost.status_code == 503 and "deleted or replaced" in lost.json()["error"]["message"]
    assert not db.exists()  # nothing recreated a file nobody would find
