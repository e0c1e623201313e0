"""Capture, surfacing and compaction over HTTP (seeds 002 and 004) on a real uvicorn server on
loopback: observe, process, surface, compact, errors through the one table, and `hippo serve`
processing what was observed every `capture_every` seconds when configured (and not otherwise)."""

from __future__ import annotations

import time

import httpx
import pytest
from test_http import error
from test_http_experiences import serve, stopped

pytest.importorskip("fastapi")
from hippo.interfaces.http.schedule import CaptureSchedule  # noqa: E402
from hippo.interfaces.http.service import Service  # noqa: E402

A = "/v1/agents/alice"
TALK = [
    {"role": "user", "id": "m1", "name": "Kris", "content": "We decided to ship billing on Fridays only.",
     "timestamp": "2026-11-01T10:00:00Z"},
    {"role": "assistant", "id": "m2", "content": "Noted: billing ships on Fridays."},
    {"role": "system", "content": "You are helpful."},
]


def test_the_routes_are_in_the_openapi_document(api):
    paths = api.get("/openapi.json").json()["paths"]
    for route in ("/sessions/{session_id}/messages", "/process", "/sessions/{session_id}/surface", "/compact"):
        assert set(paths[f"/v1/agents/{{agent_id}}{route}"]) == {"post"}


def test_observe_process_and_surface(api):
    seen = api.post(f"{A}/sessions/chat-1/messages", json={"messages": TALK})
    assert seen.status_code == 202
    assert seen.json() == {"session_id": "chat-1", "accepted": 2, "duplicates": 0, "skipped": 1,
                           "message_ids": ["m1", "m2"]}
    again = api.post(f"{A}/sessions/chat-1/messages", json={"messages": TALK[:2]}).json()
    assert (again["accepted"], again["duplicates"]) == (0, 2)

    done = api.post(f"{A}/process").json()
    assert done["sessions"] == 1 and done["messages"] == 2 and done["memories"] >= 1 and done["llm_calls"] == []
    assert api.post(f"{A}/process").json()["messages"] == 0  # nothing processed twice
    stored = api.get(f"{A}/memories").json()["items"]
    assert any(i["metadata"].get("_source_ids") == ["m1"] and i["session_id"] == "chat-1" for i in stored), stored

    ask = {"messages": [{"role": "user", "content": "We decided to ship billing on Fridays only."}]}
    shown = api.post(f"{A}/sessions/chat-2/surface", json=ask).json()
    assert shown["text"].startswith("Relevant memories (hippo):") and shown["hits"] and shown["tokens"] <= 500
    assert api.post(f"{A}/sessions/chat-2/surface", json=ask).json() == {"text": "", "tokens": 0, "hits": []}
    assert api.post("/v1/agents/bob/process").json()["messages"] == 0  # agents never mix


def test_compact_with_and_without_a_session(api):
    talk = [{"role": "user", "content": f"Step {n}: check the deploy log of service {n} for errors"}
            for n in range(40)]
    plain = api.post(f"{A}/compact", json={"messages": talk, "previous_summary": "Earlier: we set up CI."}).json()
    assert plain["summary"].startswith("# Session compaction (hippo)") and "Earlier: we set up CI." in plain["summary"]
    assert plain["stats"]["entries"] == 40 and len(plain["entries"]) == 40
    assert all(entry["memory_ids"] == [] for entry in plain["entries"])
    assert api.get(f"{A}/memories").json()["items"] == []

    stored = api.post(f"{A}/compact", json={"messages": talk, "session_id": "long-1"}).json()
    ids = [i for entry in stored["entries"] for i in entry["memory_ids"]]
    assert ids and all(f"[id:{i}]" in stored["summary"] for i in ids)
    kept = api.get(f"{A}/memories/{ids[0]}").json()
    assert kept["source"] == "compaction" and kept["session_id"] == "long-1"


def test_errors_come_through_the_one_table(api):
    error(api.post(f"{A}/sessions/s/messages", json={"messages": [{"role": "robot", "content": "x"}]}), 400,
          "invalid_input")
    error(api.post(f"{A}/sessions/s/messages", json={"messages": []}), 422, "invalid_request")
    error(api.post(f"{A}/sessions/s/messages", json={"messages": TALK, "colour": "red"}), 422, "invalid_request")
    error(api.post(f"{A}/sessions/{'x' * 300}/messages", json={"messages": TALK}), 422, "invalid_request")
    error(api.post(f"{A}/sessions/s/surface", json={"messages": TALK, "max_tokens": 0}), 422, "invalid_request")
    error(api.post(f"{A}/sessions/s/surface", json={"messages": [{"role": "user", "content": 5}]}), 400,
          "invalid_input")
    error(api.post(f"{A}/compact", json={"messages": TALK, "session_id": ""}), 400, "invalid_input")
    error(api.post(f"{A}/compact", json={"messages": TALK, "config": {"decayRates": "fast"}}), 400, "invalid_input")
    error(api.post("/v1/agents/bad%20agent/process"), 422, "invalid_request")


def test_the_schedule_processes_every_agent_with_observed_messages(base):
    service = Service(base)
    service.memory("alice").observe(TALK, session_id="a-1")
    service.memory("bob").observe([{"role": "user", "content": "Bob's build server is in Frankfurt"}],
                                  session_id="b-1")
    assert base.pending_agents() == ["alice", "bob"]
    lines: list[str] = []
    schedule = CaptureSchedule(service, 0.1, lines.append)
    said = schedule.run_once()
    assert said.startswith("capture: 2 agents with observed messages; processed 3 in 2 windows")
    assert base.pending_agents() == [] and schedule.run_once() == ""  # nothing left: nothing to say
    service.memory("carol").observe([{"role": "user", "content": "Carol moved the standup to 9:30"}],
                                    session_id="c-1")
    schedule.start()
    deadline = time.monotonic() + 10
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    schedule.stop()
    assert lines[0] == "capture (capture_every 0.1 s): every agent with observed messages"
    assert lines[1].startswith("capture: 1 agent with observed messages; processed 1 in 1 windows")
    assert service.memory("carol").stats().memories == 1
    service.close()


@pytest.mark.timeout(120)
def test_hippo_serve_processes_on_its_period_only_when_configured(tmp_path):
    db = str(tmp_path / "served.db")
    proc, url = serve(db, tmp_path, capture_every="0.3")
    try:
        assert httpx.post(f"{url}{A}/sessions/s-1/messages", json={"messages": TALK}).status_code == 202
        deadline = time.monotonic() + 20
        while not httpx.get(f"{url}{A}/memories").json()["items"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert httpx.get(f"{url}{A}/memories").json()["items"]
    finally:
        said = stopped(proc)
    assert "capture (capture_every 0.3 s)" in said and "capture: 1 agent with observed messages" in said

    proc, url = serve(db, tmp_path)  # not configured: what is observed waits for POST process
    try:
        httpx.post(f"{url}{A}/sessions/s-2/messages",
                   json={"messages": [{"role": "user", "content": "The VPN moved to wireguard"}]})
        time.sleep(1)
        assert httpx.post(f"{url}{A}/process").json()["messages"] == 1
    finally:
        said = stopped(proc)
    assert "capture" not in said
