"""Several stateless servers on one PostgreSQL database: three real `hippo serve` processes, started
from the README's own lines, clients spread over them. A write on one is visible on the others at
once, API keys live in the database, and 3 servers x 8 clients x 200 mixed writes lose nothing."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from support import sql
from test_mcp import free_port

HIPPO = str(Path(sys.executable).with_name("hippo"))
CLIENTS, WRITES = 8, 200
README = Path(__file__).resolve().parents[3] / "README.md"


def readme_commands() -> tuple[str, list[str], list[str]]:
    """The README's PostgreSQL block: its HIPPO_DB, and the argument lists of `hippo keys create`
    and `hippo serve` exactly as written there."""
    block = next(b for b in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
                 if "postgresql://" in b)
    lines = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    url = next(line.split("=", 1)[1] for line in lines if line.startswith("export HIPPO_DB="))
    keys = next(shlex.split(line)[1:] for line in lines if line.startswith("hippo keys create"))
    serve = next(shlex.split(line)[1:] for line in lines if line.startswith("hippo serve"))
    return url, keys, serve


@pytest.fixture
def database(postgres):
    url = postgres.new_database()
    yield url
    postgres.drop(url)


@pytest.fixture
def servers(database, tmp_path):
    """Three `hippo serve` processes on the database, as the README starts them (its URL replaced by
    the test's database, its port by a free one, and the fake embedder so that no model loads)."""
    written_url, keys_args, serve_args = readme_commands()
    assert written_url.startswith("postgresql://") and "--host" in serve_args and "--port" in serve_args
    base = {**os.environ, "HIPPO_DB": database, "HIPPO_EMBEDDER": "fake", "HIPPO_CONFIG": str(tmp_path / "none.toml")}
    made = subprocess.run([HIPPO, *keys_args], env=base, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    procs, urls = [], []
    for n in range(3):
        port = free_port()
        args = [str(port) if prev == "--port" else arg for prev, arg in zip(["", *serve_args], serve_args)]
        env = {**base, "HOME": str(tmp_path / f"home{n}")}
        procs.append(subprocess.Popen([HIPPO, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for proc, url in zip(procs, urls):
            _wait_ready(proc, url)
        yield urls, {"Authorization": f"Bearer {token}"}
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGINT)
        for proc in procs:
            _, err = proc.communicate(timeout=30)
            assert b"Traceback" not in err, err.decode()


def _wait_ready(proc: subprocess.Popen, url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not start")


def test_a_write_on_one_server_is_read_on_the_others_at_once(servers):
    urls, auth = servers
    assert httpx.get(f"{urls[1]}/v1/agents/alice/stats").status_code == 401  # the key lives in the database
    for i in range(20):
        writer, reader = urls[i % 3], urls[(i + 1) % 3]
        stored = httpx.post(f"{writer}/v1/agents/alice/memories", headers=auth,
                            json={"content": f"Deploy number {i} went to the blue cluster"})
        assert stored.status_code == 201
        got = httpx.get(f"{reader}/v1/agents/alice/memories/{stored.json()['id']}", headers=auth)
        assert got.status_code == 200 and got.json()["content"] == f"Deploy number {i} went to the blue cluster"
        block = httpx.post(f"{writer}/v1/agents/alice/blocks/deploys", headers=auth, json={"text": f"deploy {i}"})
        assert block.status_code == 200
        seen = httpx.get(f"{reader}/v1/agents/alice/blocks/deploys", headers=auth).json()["value"]
        assert seen.splitlines()[-1] == f"deploy {i}"
    forgotten = httpx.post(f"{urls[2]}/v1/agents/alice/forget", headers=auth, json={"description": "Deploy number 7"})
    assert forgotten.status_code == 200
    recall = httpx.get(f"{urls[0]}/v1/agents/alice/memories", headers=auth, params={"q": "Deploy number 7"})
    contents = [hit["chunk"]["content"] for hit in recall.json()["hits"]]
    assert contents and all("number 7 " not in c for c in contents)


@pytest.mark.timeout(600)
def test_three_servers_eight_clients_lose_no_write(servers, database):
    urls, auth = servers
    failures: list[str] = []

    def client_run(n: int) -> None:
        agent = f"/v1/agents/agent-{n % 4}"
        clients = [httpx.Client(base_url=url, headers=auth, timeout=60) for url in urls]
        try:
            for i in range(WRITES):
                client = clients[(n + i) % 3]  # every client writes through every server
                kind = i % 4
                if kind == 0:
                    r = client.post(f"{agent}/memories", json={"content": f"client {n} memory {i}"})
                elif kind == 1:  # one block per agent, appended by two clients through all servers
                    r = client.post(f"{agent}/blocks/log", json={"text": f"client {n} line {i}"})
                elif kind == 2:  # the memory of two writes ago, through another server: strengthened
                    r = client.post(f"{agent}/memories", json={"content": f"client {n} memory {i - 2}"})
                else:
                    r = client.post(f"{agent}/tools/store_memory", json={"content": f"client {n} tool {i}"})
                if r.status_code >= 300 or (kind == 3 and not r.json()["ok"]):
                    failures.append(f"{r.status_code} {r.text[:200]}")
        finally:
            for client in clients:
                client.close()

    threads = [threading.Thread(target=client_run, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    per_client = WRITES // 4
    assert sql(database, "SELECT count(*) FROM chunks") == [(CLIENTS * per_client * 2,)]
    assert sql(database, "SELECT min(encounter_count), max(encounter_count) FROM chunks "
                         "WHERE content LIKE '%memory%'") == [(2, 2)]
    for agent in range(4):
        [(value,)] = sql(database, "SELECT value FROM memory_blocks WHERE agent_id = ?", (f"agent-{agent}",))
        lines = value.splitlines()
        for n in (agent, agent + 4):  # each client's lines, all there, in its own order
            assert [line for line in lines if line.startswith(f"client {n} ")] == \
                [f"client {n} line {i}" for i in range(1, WRITES, 4)]


def test_servers_on_one_database_see_the_same_short_term_memory(servers):
    """Issue 19's must-show 3: the short-term buffer is in the database, so an experience recorded
    through one server is listed by the others at once, and consolidated through any of them once."""
    urls, auth = servers
    recorded = []
    for i in range(6):
        body = {"type": "observation", "content": f"Queue depth reading {i} on the blue cluster",
                "context": {"roomId": "ops"}}
        made = httpx.post(f"{urls[i % 3]}/v1/agents/alice/experiences", headers=auth, json=body)
        assert made.status_code == 201 and made.json()["tier"] == "short_term" and made.json()["durable"] is True
        recorded.append(made.json()["id"])
        for url in urls:  # every server lists it at once, newest first
            listed = httpx.get(f"{url}/v1/agents/alice/experiences/short-term", headers=auth).json()["items"]
            assert [e["id"] for e in listed] == recorded[::-1]
    related = httpx.get(f"{urls[1]}/v1/agents/alice/experiences/related", headers=auth, params={"room_id": "ops"})
    assert len(related.json()["items"]) == 6
    chat = httpx.post(f"{urls[0]}/v1/agents/alice/experiences", headers=auth,
                      json={"type": "chat", "content": "The user asked why the blue cluster is slow"}).json()
    done = httpx.post(f"{urls[2]}/v1/agents/alice/consolidate", headers=auth).json()
    assert (done["considered"], done["consolidated"], done["remaining"]) == (7, 1, 6)
    for url in urls:
        listed = httpx.get(f"{url}/v1/agents/alice/experiences/short-term", headers=auth).json()["items"]
        assert [e["id"] for e in listed] == recorded[::-1] and chat["id"] not in {e["id"] for e in listed}
        recalled = httpx.get(f"{url}/v1/agents/alice/experiences", headers=auth, params={"type": "chat"}).json()
        assert [(e["tier"], e["content"]) for e in recalled["items"]] == [("long_term", chat["content"])]
