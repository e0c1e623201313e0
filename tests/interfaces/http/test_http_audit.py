"""The audit trail over HTTP: each write through the API is one record of the request's key
(its id, "http"), read back at GET /v1/agents/{agent_id}/audit and through hippo.connect; a key of
another agent may not read it; a server without keys records its requests as "anonymous"."""

from __future__ import annotations

from datetime import datetime, timezone

import httpx
import pytest
from support import sql

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
from hippo.core.keys import create_key  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

NOW = datetime(2026, 11, 23, tzinfo=timezone.utc)


@pytest.fixture
def base(db_path, clock):
    return hippo.open(db_path, embedder=FakeEmbedder(), clock=clock, agent_id="alice")


def test_each_write_is_one_record_of_the_requests_key(base, db_path):
    token, key = create_key(base.store, ["alice"], now=NOW)
    other, _ = create_key(base.store, ["bob"], now=NOW)
    auth = {"Authorization": f"Bearer {token}"}
    with BackgroundServer(base) as url, httpx.Client(base_url=url, headers=auth, timeout=30) as client:
        stored = client.post("/v1/agents/alice/memories", json={"content": "Herons nest near the river"}).json()
        assert client.put("/v1/agents/alice/blocks/human", json={"value": "likes herons"}).status_code == 200
        assert client.post("/v1/agents/alice/memories/recall", json={"query": "herons"}).status_code == 200
        assert client.post("/v1/agents/alice/tools/store_memory", json={"content": "a tool's note"}).json()["ok"]
        assert client.delete(f"/v1/agents/alice/memories/{stored['id']}").status_code == 200
        page = client.get("/v1/agents/alice/audit").json()
        assert [(r["operation"], r["who"], r["surface"]) for r in page["items"]] == [
            ("delete_memory", key.id, "http"), ("store_memory", key.id, "http"),
            ("set_memory_block", key.id, "http"), ("store_memory", key.id, "http")]
        assert "Herons" not in str(page) and page["next_cursor"] is None
        touched = client.get("/v1/agents/alice/audit", params={"id": stored["id"], "limit": 1}).json()
        assert [r["operation"] for r in touched["items"]] == ["delete_memory"] and touched["next_cursor"]
        assert client.get("/v1/agents/alice/audit", params={"since": "not a date"}).status_code == 400
        refused = client.get("/v1/agents/alice/audit", headers={"Authorization": f"Bearer {other}"})
        assert refused.status_code == 403
        remote = hippo.connect(url, agent_id="alice", key=token)
        assert [r.operation for r in remote.audit(operation="store_memory").items] == ["store_memory"] * 2
        assert isinstance(remote.audit().items[0].at, datetime)
    # reading the trail changed nothing; the keys' creation is in the database's own chain
    assert sql(db_path, "SELECT agent_id, count(*) FROM audit_records GROUP BY agent_id ORDER BY 1") == \
        [("*", 2), ("alice", 4)]


def test_a_server_without_keys_records_anonymous_requests(base):
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.post("/v1/agents/alice/memories", json={"content": "a note"}).status_code == 201
        records = client.get("/v1/agents/alice/audit").json()["items"]
    assert [(r["who"], r["surface"]) for r in records] == [("anonymous", "http")]


def test_a_dashboard_edit_is_recorded_as_the_dashboards(base):
    import re

    stored = base.store_memory("Herons nest near the river")
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as client:
        page = client.get(f"/agents/alice/memories/{stored.id}")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        answer = client.post(f"/agents/alice/memories/{stored.id}/reinforce", data={"csrf": csrf})
        assert answer.status_code < 400
        records = client.get("/v1/agents/alice/audit").json()["items"]
    assert [(r["operation"], r["who"], r["surface"]) for r in records] == [
        ("reinforce_memory", "anonymous", "dashboard"), ("store_memory", "local", "python")]
