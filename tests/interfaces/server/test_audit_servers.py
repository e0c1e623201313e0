"""Three `hippo serve` processes writing one agent's memory at once on one PostgreSQL database
leave one unbroken audit chain: a record per write, numbered without a gap or a fork, each with
the key that made it, and `hippo audit verify` holds (the servers: test_http_scaleout.py's)."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from support import sql
from test_http_scaleout import HIPPO, database, servers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
CLIENTS, WRITES = 6, 30


@pytest.mark.timeout(600)
def test_three_servers_writing_one_agent_leave_one_unbroken_chain(servers, database, tmp_path):  # noqa: F811
    urls, auth = servers
    failures: list[str] = []

    def client_run(n: int) -> None:
        clients = [httpx.Client(base_url=url, headers=auth, timeout=60) for url in urls]
        try:
            for i in range(WRITES):
                client = clients[(n + i) % 3]
                if i % 2:
                    r = client.post("/v1/agents/alice/memories", json={"content": f"client {n} memory {i}"})
                else:
                    r = client.post("/v1/agents/alice/blocks/log", json={"text": f"client {n} line {i}"})
                if r.status_code >= 300:
                    failures.append(f"{r.status_code} {r.text[:200]}")
        finally:
            for client in clients:
                client.close()

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client_run, range(CLIENTS)))
    assert failures == []
    key_id = auth["Authorization"].split("_")[1]
    rows = sql(database, "SELECT seq, who, surface, operation FROM audit_records WHERE agent_id = 'alice' ORDER BY seq")
    assert [r[0] for r in rows] == list(range(1, CLIENTS * WRITES + 1))  # one record a write, no gap, no fork
    assert {(r[1], r[2]) for r in rows} == {(key_id, "http")}
    assert {r[3] for r in rows} == {"store_memory", "append_memory_block"}
    env = {**os.environ, "HIPPO_DB": database, "HIPPO_EMBEDDER": "fake", "HIPPO_CONFIG": str(tmp_path / "none.toml")}
    verified = subprocess.run([HIPPO, "--agent", "alice", "audit", "verify", "--all", "--json"], env=env,
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stderr
    report = json.loads(verified.stdout)
    assert report["ok"] and report["records"] == CLIENTS * WRITES + 1  # and the key's creation, in "*"
    sql(database, "UPDATE audit_records SET who = 'someone' WHERE agent_id = 'alice' AND seq = 17")
    broken = subprocess.run([HIPPO, "--agent", "alice", "audit", "verify"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert broken.returncode == 1 and "record 17: the record was altered" in broken.stdout
