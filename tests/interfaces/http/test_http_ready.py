"""``GET /healthz`` (alive) and ``GET /readyz`` (the store answers with the schema this hippo
knows, the embedding model has loaded) on a real loopback server: 200 when ready, 503 naming the
failed check otherwise, never loading the model itself, and cheap."""

from __future__ import annotations

import statistics
import time

import httpx
import pytest

pytest.importorskip("fastapi")
import hippo  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.interfaces.http.service import Service  # noqa: E402
from hippo.providers.fake import FakeEmbedder  # noqa: E402

A = "/v1/agents/alice"


def not_ready(answer: httpx.Response) -> dict:
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["error"]["code"] == "not_ready"
    return body


def test_ready_once_the_model_has_answered_and_never_loading_it_itself(base):
    calls: list[object] = []
    base.embedding.observers.append(calls.append)
    with BackgroundServer(base) as url:
        body = not_ready(httpx.get(f"{url}/readyz"))
        assert body["checks"] == {"store": True, "migrations": True, "model": False}
        assert "model: the embedding model fake" in body["error"]["message"]
        assert httpx.get(f"{url}/healthz").status_code == 200  # alive all along
        assert calls == []  # the probe did not call the model
        assert httpx.post(f"{url}{A}/memories", json={"content": "The first memory"}).status_code == 201
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "checks": {"store": True, "migrations": True, "model": True}}


def test_a_model_warmed_before_the_server_starts_is_ready_at_once(base):
    base.embedding.query("warm up")  # what hippo serve does before it binds
    with BackgroundServer(base) as url:
        assert httpx.get(f"{url}/readyz").status_code == 200


def test_a_keyword_only_memory_needs_no_model(db, clock):
    mem = hippo.open(db, agent_id="default", embedder="none", clock=clock)
    with BackgroundServer(mem) as url:
        assert httpx.get(f"{url}/readyz").json()["checks"]["model"] is True


@pytest.mark.sqlite_only
def test_a_closed_store_is_not_ready(db, clock):
    mem = hippo.open(db, agent_id="default", embedder=FakeEmbedder(), clock=clock)
    mem.embedding.query("warm up")
    server = BackgroundServer(mem)
    with server as url:
        assert httpx.get(f"{url}/readyz").status_code == 200
        mem.store.db.conn.close()  # the database stops answering under the running server
        body = not_ready(httpx.get(f"{url}/readyz"))
        assert body["checks"] == {"store": False, "migrations": False, "model": True}
        assert "store: the database did not answer" in body["error"]["message"]
        # a keyless server asks the database whether a key exists before it answers /metrics
        assert httpx.get(f"{url}/metrics").json()["error"]["code"] == "storage_error"


@pytest.mark.sqlite_only
def test_a_scrape_says_when_the_database_cannot_be_read(base, db, caplog):
    from support import sql

    with BackgroundServer(base) as url:
        assert 'hippo_store_up{backend="sqlite"} 1.0' in httpx.get(f"{url}/metrics").text
        sql(db, "ALTER TABLE observed_messages RENAME TO observed_elsewhere")  # the inbox cannot be read
        answer = httpx.get(f"{url}/metrics")
        assert answer.status_code == 200
        assert 'hippo_store_up{backend="sqlite"} 0.0' in answer.text and "hippo_chunks" not in answer.text
        assert "hippo_http_requests_total" in answer.text  # what is counted in process is still there
        sql(db, "ALTER TABLE observed_elsewhere RENAME TO observed_messages")
    assert "metrics: the database could not be read (" in caplog.text


def test_a_database_behind_this_hippo_s_schema_is_not_ready(base, db):
    from support import sql

    base.embedding.query("warm up")
    with BackgroundServer(base) as url:
        if db.startswith("postgresql://"):
            sql(db, "INSERT INTO hippo_migrations (number, name) VALUES (999, 'from a newer hippo')")
        else:
            version = sql(db, "PRAGMA user_version")[0][0]
            sql(db, f"PRAGMA user_version = {version + 1}")
        body = not_ready(httpx.get(f"{url}/readyz"))
        assert body["checks"] == {"store": True, "migrations": False, "model": True}
        assert "migrations: the database's schema is at migration" in body["error"]["message"]


def test_the_checks_are_cheap(base):
    base.embedding.query("warm up")
    service = Service(base)
    timings = []
    for _ in range(50):
        began = time.perf_counter()
        assert all(check.ok for check in service.readiness())
        timings.append(time.perf_counter() - began)
    assert statistics.median(timings) < 0.010, timings  # well under 10 ms: one trivial query
    with BackgroundServer(base) as url, httpx.Client(base_url=url) as client:
        client.get("/readyz")  # the first request builds the routes
        answers = []
        for _ in range(20):
            began = time.perf_counter()
            assert client.get("/readyz").status_code == 200
            assert client.get("/healthz").status_code == 200
            answers.append((time.perf_counter() - began) / 2)
    assert statistics.median(answers) < 0.010, answers
