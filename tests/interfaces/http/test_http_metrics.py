"""``GET /metrics`` on a real loopback server, scraped after a scripted workload: every counter and
histogram there with the values the workload implies (requests by route template, operations'
latency, the embedder's calls and batch sizes, errors by code, the capture inbox, the store's size
and chunks by kind, maintenance runs), on both backends; admin keys only once keys exist."""

from __future__ import annotations

import httpx
import pytest
from support import sql
from test_http import error

pytest.importorskip("fastapi")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from hippo.interfaces.http.schedule import CaptureSchedule, ConsolidationSchedule, MaintenanceSchedule  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

A = "/v1/agents/alice"
RECALL = "/v1/agents/{agent_id}/memories/recall"
TALK = [{"role": "user", "id": "m1", "content": "We ship the billing service on Fridays."},
        {"role": "assistant", "id": "m2", "content": "Noted: billing ships on Fridays."}]


def scrape(client: httpx.Client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of one scrape: (sample name, sorted labels) -> value."""
    answer = client.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def stores_and_recalls(api: httpx.Client) -> None:
    """Two stores, a batch of three through the operations route, three recalls."""
    for text in ("The deploy key rotates monthly.", "Kris prefers tea to coffee."):
        assert api.post(f"{A}/memories", json={"content": text}).status_code == 201
    batch = {"arguments": {"items": ["Alpha runs on port 7001.", "Beta runs on port 7002.",
                                     "Gamma runs on port 7003."]}}
    assert api.post(f"{A}/operations/store_memories", json=batch).status_code == 200
    for query in ("deploy key", "tea or coffee", "which port"):
        assert api.post(f"{A}/memories/recall", json={"query": query}).status_code == 200


def the_rest(api: httpx.Client) -> None:
    """One of each other measured operation; one refused request (a block that is not there)."""
    assert api.post(f"{A}/facts", json={"text": "I live in Lisbon and I work at Acme."}).status_code == 200
    assert api.post(f"{A}/sessions/chat-1/messages", json={"messages": TALK}).status_code == 202
    surface = {"messages": [{"role": "user", "content": "When does billing ship?"}]}
    assert api.post(f"{A}/sessions/chat-2/surface", json=surface).status_code == 200
    assert api.post(f"{A}/compact", json={"messages": TALK}).status_code == 200
    assert api.post(f"{A}/tools/recall_memories", json={"query": "port of Beta"}).status_code == 200
    error(api.get(f"{A}/blocks/missing"), 404, "block_not_found")


def test_a_scrape_after_a_workload_counts_what_it_did(base, db):
    backend = "postgres" if db.startswith("postgresql://") else "sqlite"
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as api:
        stores_and_recalls(api)
        first = scrape(api)
        the_rest(api)
        seen = scrape(api)
    # the embedder: two stores of one text each and the batch of three; three queries
    assert value(first, "hippo_embedding_batch_size_count", purpose="documents") == 3
    assert value(first, "hippo_embedding_batch_size_sum", purpose="documents") == 5
    assert value(first, "hippo_embedding_batch_size_bucket", purpose="documents", le="1.0") == 2
    assert value(first, "hippo_embedding_batch_size_bucket", purpose="documents", le="2.0") == 2
    assert value(first, "hippo_embedding_batch_size_bucket", purpose="documents", le="4.0") == 3
    assert value(first, "hippo_embedding_batch_size_count", purpose="query") == 3
    assert value(first, "hippo_embedding_batch_size_sum", purpose="query") == 3
    assert value(first, "hippo_embedding_duration_seconds_count", purpose="documents") == 3
    assert value(first, "hippo_embedding_duration_seconds_sum", purpose="documents") > 0
    assert value(first, "hippo_operation_duration_seconds_count", operation="recall") == 3
    # requests by route template, method and status: the raw path never appears
    assert value(seen, "hippo_http_requests_total", route=RECALL, method="POST", status="200") == 3
    assert value(seen, "hippo_http_requests_total", route="/v1/agents/{agent_id}/memories", method="POST",
                 status="201") == 2
    assert value(seen, "hippo_http_requests_total", route="/v1/agents/{agent_id}/blocks/{key}", method="GET",
                 status="404") == 1
    assert not any("alice" in dict(labels).get("route", "") for _, labels in seen)
    assert value(seen, "hippo_http_request_duration_seconds_count", route=RECALL, method="POST") == 3
    # each operation's latency: the three recalls and the agent tool's recall, the two stores and the batch
    operations = {"recall": 4, "store": 3, "remember_facts": 1, "observe": 1, "surface": 1, "compact": 1}
    for operation, count in operations.items():
        assert value(seen, "hippo_operation_duration_seconds_count", operation=operation) == count, operation
        assert value(seen, "hippo_operation_duration_seconds_sum", operation=operation) > 0
    # errors by code: the one refused request, nothing else
    errors = {dict(labels)["code"]: v for (name, labels), v in seen.items() if name == "hippo_errors_total"}
    assert errors == {"block_not_found": 1}
    # the rest embedded more (facts, observed and surfaced messages, the tool's query): counted on
    assert value(seen, "hippo_embedding_batch_size_count", purpose="documents") > 3
    assert value(seen, "hippo_embedding_batch_size_count", purpose="query") >= 4
    assert not any(name == "hippo_embedding_failures_total" for name, _ in seen)
    # read when scraped: the inbox holds the two observed messages, the chunks are what was stored
    assert value(seen, "hippo_capture_pending_messages") == 2
    assert 0 <= value(seen, "hippo_capture_oldest_pending_age_seconds") < 600
    stored = dict(sql(db, "SELECT kind, count(*) FROM chunks GROUP BY kind"))
    assert stored["memory"] == 5 and stored["fact"] >= 1
    for kind in ("fact", "memory"):
        assert value(seen, "hippo_chunks", backend=backend, kind=kind) == stored[kind]
    assert value(seen, "hippo_store_size_bytes", backend=backend) > 0
    assert value(seen, "hippo_store_up", backend=backend) == 1


def test_runs_are_counted_by_task_trigger_and_outcome(base):
    server = BackgroundServer(base)
    with server as url, httpx.Client(base_url=url, timeout=30) as api:
        service = server.app.state.service
        api.post(f"{A}/sessions/chat-1/messages", json={"messages": TALK})
        assert scrape(api)[("hippo_capture_pending_messages", ())] == 2
        assert api.post(f"{A}/process").json()["messages"] == 2  # asked for: one capture run
        api.post(f"{A}/operations/consolidate", json={})  # one consolidation run, asked for
        assert CaptureSchedule(service, 60, print).run_once() == ""  # nothing waits: counted, says nothing
        ConsolidationSchedule(service, 60, print).run_once()
        MaintenanceSchedule(base, "0 4 * * *", print, on_run=service.ran).run_once()
        seen = scrape(api)
    runs = {tuple(dict(labels)[k] for k in ("task", "trigger", "outcome")): v
            for (name, labels), v in seen.items() if name == "hippo_maintenance_runs_total"}
    assert runs == {("capture", "request", "ok"): 1, ("consolidation", "request", "ok"): 1,
                    ("capture", "schedule", "ok"): 1, ("consolidation", "schedule", "ok"): 1,
                    ("maintenance", "schedule", "ok"): 1}
    assert seen[("hippo_archived_memories_total", ())] == 0  # no size cap: nothing archived
    assert seen[("hippo_capture_pending_messages", ())] == 0
    assert seen[("hippo_capture_oldest_pending_age_seconds", ())] == 0


def test_metrics_need_an_admin_key_once_keys_exist(base):
    agent_key, _ = base.keys.create(["alice"])
    admin_key, _ = base.keys.create([], admin=True)
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as api:
        refused = error(api.get("/metrics"), 401, "unauthorized")
        assert "API key" in refused["message"]
        error(api.get("/metrics", headers={"Authorization": f"Bearer {agent_key}"}), 403, "forbidden")
        error(api.get("/metrics", headers={"Authorization": "Bearer not-a-key"}), 401, "unauthorized")
        seen = scrape(api, Authorization=f"Bearer {admin_key}")
    # the refusals were counted too, by code
    assert seen[("hippo_errors_total", (("code", "unauthorized"),))] == 2
    assert seen[("hippo_errors_total", (("code", "forbidden"),))] == 1


def test_metrics_stay_out_of_the_api_reference(api):
    assert "/metrics" not in api.get("/openapi.json").json()["paths"]
    assert "/readyz" in api.get("/openapi.json").json()["paths"]


def test_each_app_counts_its_own_requests(db_path, clock):
    import hippo
    from hippo.providers.fake import FakeEmbedder

    first = hippo.open(db_path, agent_id="default", embedder=FakeEmbedder(), clock=clock)
    second = hippo.open(str(db_path) + "-2", agent_id="default", embedder=FakeEmbedder(), clock=clock)
    with BackgroundServer(first) as one, BackgroundServer(second) as two:
        httpx.get(f"{one}/healthz")
        httpx.get(f"{one}/healthz")
        with httpx.Client(base_url=two) as other:
            seen = scrape(other)
    assert ("hippo_http_requests_total", (("method", "GET"), ("route", "/healthz"), ("status", "200"))) not in seen
