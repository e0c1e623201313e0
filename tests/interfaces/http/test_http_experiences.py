"""Experiences over HTTP (seed 001) on a real uvicorn server on loopback: record, recall, the
short-term buffer, recall by context, consolidation on demand and, in `hippo serve`, on a period
when configured (and not otherwise)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from test_http import error
from test_mcp import free_port

pytest.importorskip("fastapi")
from hippo.interfaces.http.schedule import ConsolidationSchedule  # noqa: E402
from hippo.interfaces.http.service import Service  # noqa: E402

A = "/v1/agents/alice"
HIPPO = str(Path(sys.executable).with_name("hippo"))


def test_the_routes_are_in_the_openapi_document(api):
    paths = api.get("/openapi.json").json()["paths"]
    routes = {"/experiences": {"get", "post"}, "/experiences/short-term": {"get"}, "/experiences/related": {"get"},
              "/experiences/recall": {"post"}, "/consolidate": {"post"}}
    for route, methods in routes.items():
        assert set(paths[f"/v1/agents/{{agent_id}}{route}"]) == methods


def test_record_recall_short_term_related_and_consolidate(api, clock):
    chat = api.post(f"{A}/experiences", json={"type": "chat", "content": "The user asked about Kafka retention",
                                              "context": {"userId": "u-1", "roomId": "ops"}, "tags": ["kafka"]})
    assert chat.status_code == 201
    body = chat.json()
    assert (body["type"], body["importance"], body["tier"], body["agent_id"]) == ("chat", 0.6, "short_term", "alice")
    clock.advance(minutes=1)
    error_ = api.post(f"{A}/experiences", json={"type": "error", "content": "Kafka broker 3 ran out of disk",
                                                "context": {"taskId": "t-9", "user_id": "u-1"},
                                                "observed_at": "2024-06-01T10:00:00Z", "source": "monitor"}).json()
    assert error_["tier"] == "long_term" and error_["importance"] == 0.9 and error_["durable"] is True
    assert error_["observed_at"].startswith("2024-06-01T10:00:00") and error_["source"] == "monitor"

    # 0.9 consolidated the buffer, the chat (0.6) with it; a low one stays short-term
    note = api.post(f"{A}/experiences", json={"type": "observation", "content": "The ops channel is quiet"}).json()
    short = api.get(f"{A}/experiences/short-term").json()["items"]
    assert [e["id"] for e in short] == [note["id"]] and short[0]["importance"] == 0.4

    found = api.get(f"{A}/experiences", params={"q": "Kafka disk broker", "limit": 5}).json()["items"]
    assert found[0]["content"] == "Kafka broker 3 ran out of disk" and found[0]["relevance"] > 0
    typed = api.get(f"{A}/experiences", params=[("type", "chat"), ("type", "observation")]).json()["items"]
    assert {e["type"] for e in typed} == {"chat", "observation"}
    assert [e["type"] for e in api.get(f"{A}/experiences", params={"tag": "kafka"}).json()["items"]] == ["chat"]
    assert [e["type"] for e in api.get(f"{A}/experiences", params={"min_importance": 0.8}).json()["items"]] == \
        ["error"]
    since = api.get(f"{A}/experiences", params={"since": "2024-12-01T00:00:00Z"}).json()["items"]
    assert "error" not in {e["type"] for e in since} and len(since) == 2

    by_user = api.get(f"{A}/experiences/related", params={"user_id": "u-1"}).json()["items"]
    assert {e["type"] for e in by_user} == {"chat", "error"}
    both = api.get(f"{A}/experiences/related", params={"user_id": "u-1", "task_id": "t-9"}).json()["items"]
    assert [e["type"] for e in both] == ["error"]

    clock.advance(hours=2)  # seed 001's pruning: an hour old and under 0.5
    done = api.post(f"{A}/consolidate").json()
    assert done == {"considered": 1, "consolidated": 0, "merged": 0, "pruned": 1, "remaining": 0, "ids": []}
    assert api.get(f"{A}/experiences/short-term").json() == {"items": []}
    stats = api.get(f"{A}/stats").json()
    assert stats["experiences"] == 2 and stats["short_term"] == 0 and stats["consolidation"]["pruned"] == 1
    assert api.get("/v1/agents/bob/experiences").json() == {"items": []}  # agents never mix


def test_a_get_recall_counts_nothing_and_a_post_recall_counts(api):
    kafka = api.post(f"{A}/experiences", json={"type": "error", "content": "Kafka broker 3 ran out of disk"}).json()
    assert kafka["tier"] == "long_term"
    start = api.get(f"{A}/memories/{kafka['id']}").json()["access_count"]
    for params in ({"q": "Kafka disk"}, {}):
        assert [e["id"] for e in api.get(f"{A}/experiences", params=params).json()["items"]] == [kafka["id"]]
    assert api.get(f"{A}/memories/{kafka['id']}").json()["access_count"] == start
    found = api.post(f"{A}/experiences/recall", json={"query": "Kafka disk", "types": ["error"], "limit": 3})
    assert found.status_code == 200 and [e["id"] for e in found.json()["items"]] == [kafka["id"]]
    latest = api.post(f"{A}/experiences/recall", json={}).json()["items"]  # no query: the latest first
    assert [e["id"] for e in latest] == [kafka["id"]]
    assert api.get(f"{A}/memories/{kafka['id']}").json()["access_count"] == start + 2
    error(api.post(f"{A}/experiences/recall", json={"type": "error"}), 422)  # the body names it types


def test_errors_come_through_the_one_table(api):
    error(api.post(f"{A}/experiences", json={"type": "dream", "content": "x"}), 400, "invalid_input")
    error(api.post(f"{A}/experiences", json={"type": "chat", "content": "x", "context": {"userId": [1]}}), 400,
          "invalid_input")
    error(api.post(f"{A}/experiences", json={"type": "chat", "content": "x", "colour": "red"}), 422,
          "invalid_request")
    error(api.post(f"{A}/experiences", json={"type": "chat", "content": "x", "importance": 1.5}), 422,
          "invalid_request")
    error(api.post(f"{A}/experiences", json={"type": "chat"}), 422, "invalid_request")
    error(api.get(f"{A}/experiences", params={"type": "dream"}), 400, "invalid_input")
    error(api.get(f"{A}/experiences", params={"limit": 0}), 422, "invalid_request")
    error(api.get(f"{A}/experiences/related"), 400, "invalid_input")
    error(api.get(f"{A}/experiences/related", params={"room_id": "x" * 300}), 422, "invalid_request")
    error(api.get("/v1/agents/bad%20agent/experiences/short-term"), 422, "invalid_request")
    assert api.get(f"{A}/experiences/short-term").json() == {"items": []}


def test_the_schedule_consolidates_agents_with_short_term_entries(base, clock):
    service = Service(base)
    alice, bob = service.memory("alice"), service.memory("bob")
    alice.record_experience("chat", "Alice asked for the release notes")
    bob.record_experience("observation", "Bob's build was slow")
    service.memory("carol")  # served, nothing short-term: not consolidated (its counters stay untouched)
    lines: list[str] = []
    schedule = ConsolidationSchedule(service, 0.1, lines.append)
    assert schedule.agents() == ["alice", "bob"]
    assert schedule.run_once() == \
        "consolidation: 2 agents with short-term entries; consolidated 1 (merged 0), pruned 0, 1 remain short-term"
    assert alice.short_term() == [] and alice.stats().experiences == 1 and len(bob.short_term()) == 1
    assert service.memory("carol").stats().consolidation["runs"] == 0
    schedule.start()
    deadline = time.monotonic() + 10
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    schedule.stop()
    assert lines[0] == "consolidation (consolidate_every 0.1 s): every agent with short-term entries"
    assert lines[1].startswith("consolidation: 1 agent with short-term entries; consolidated 0")
    service.close()


def serve(db: str, tmp_path: Path, **settings: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "HIPPO_DB": db, "HIPPO_EMBEDDER": "fake", "HIPPO_CONFIG": str(tmp_path / "none.toml"),
           **{f"HIPPO_{k.upper()}": v for k, v in settings.items()}}
    proc = subprocess.Popen([HIPPO, "serve", "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not start")


def stopped(proc: subprocess.Popen) -> str:
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    text = err.decode()
    assert "Traceback" not in text, text
    return text


@pytest.mark.timeout(120)
def test_hippo_serve_consolidates_on_its_period_only_when_configured(tmp_path):
    db = str(tmp_path / "served.db")
    proc, url = serve(db, tmp_path, consolidate_every="0.3")
    try:
        recorded = httpx.post(f"{url}{A}/experiences", json={"type": "chat", "content": "Asked about the VPN"})
        assert recorded.json()["tier"] == "short_term"
        deadline = time.monotonic() + 20
        while httpx.get(f"{url}{A}/experiences/short-term").json()["items"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert httpx.get(f"{url}{A}/experiences/short-term").json() == {"items": []}
        assert httpx.get(f"{url}{A}/experiences").json()["items"][0]["tier"] == "long_term"
    finally:
        said = stopped(proc)
    assert "consolidation (consolidate_every 0.3 s)" in said
    assert "consolidation: 1 agent with short-term entries; consolidated 1 (merged 0)" in said

    proc, url = serve(db, tmp_path)  # not configured: the entry waits for a trigger or a consolidate
    try:
        httpx.post(f"{url}{A}/experiences", json={"type": "chat", "content": "Asked about the proxy"})
        time.sleep(1)
        assert len(httpx.get(f"{url}{A}/experiences/short-term").json()["items"]) == 1
    finally:
        said = stopped(proc)
    assert "consolidation" not in said
