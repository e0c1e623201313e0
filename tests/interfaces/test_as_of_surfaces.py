"""Recall as of a date through the ways in other than Python: the HTTP API (a look and a recall,
both counting nothing), a fact's history with its intervals over HTTP, the recall tool, and
``hippo recall --as-of``. The history: a trip noted on day 0, another on day 10; the colour blue
on day 0, replaced by green on day 10. The clock stops at day 20."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
from support import START

import hippo
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
pytest.importorskip("typer")
from typer.testing import CliRunner  # noqa: E402

from hippo.interfaces.cli.app import app  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

A = "/v1/agents/alice"
DAY = timedelta(days=1)
SAILING, SKIING = "Trip notes: sailing on the lake", "Trip notes: skiing in the winter"


def _facts(text: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.5}]})


@pytest.fixture
def mem(db_path, clock):
    llm = FakeLLM(script=[_facts("User's favourite colour is blue"), _facts("User's favourite colour is green"),
                          json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), llm=llm, clock=clock) as mem:
        mem.store_memory(SAILING)
        mem.remember_facts("blue")
        clock.set(START + 10 * DAY)
        mem.store_memory(SKIING)
        mem.remember_facts("green")
        clock.set(START + 20 * DAY)
        yield mem


def _contents(body: dict) -> list[str]:
    return [h["chunk"]["content"] for h in body["hits"]]


def test_http_looks_and_recalls_as_of_a_date(mem):
    when = (START + 5 * DAY).isoformat()
    with BackgroundServer(mem) as url, httpx.Client(base_url=url, timeout=30) as api:
        looked = api.get(f"{A}/memories", params={"q": "Trip notes", "as_of": when})
        assert looked.status_code == 200, looked.text
        assert _contents(looked.json()) == [SAILING]
        recalled = api.post(f"{A}/memories/recall", json={"query": "favourite colour", "as_of": when, "kind": "fact"})
        assert _contents(recalled.json()) == ["User's favourite colour is blue"]
        fact_id = recalled.json()["hits"][0]["chunk"]["id"]
        assert api.get(f"{A}/memories/{fact_id}").json()["access_count"] == 0  # a look into the past
        today = api.post(f"{A}/memories/recall", json={"query": "favourite colour", "kind": "fact"})
        assert _contents(today.json()) == ["User's favourite colour is green"]
        history = api.get(f"{A}/facts/{fact_id}/history").json()
        assert [(s["valid_from"], s["valid_until"], s["current"]) for s in history["validity"]] == [
            ("2025-01-01T12:00:00Z", "2025-01-11T12:00:00Z", False), ("2025-01-11T12:00:00Z", None, True)]
        bad = api.post(f"{A}/memories/recall", json={"query": "x", "as_of": "last March"})
        assert bad.status_code == 422 and "as_of" in bad.text
        unsearched = api.get(f"{A}/memories", params={"as_of": when})
        assert unsearched.status_code == 400 and "give q too" in unsearched.json()["error"]["message"]


def test_the_recall_tool_takes_a_date(mem):
    found = mem.tools().call("recall_memories", {"query": "Trip notes", "as_of": (START + 5 * DAY).isoformat()})
    assert [m["content"] for m in found["memories"]] == [SAILING]
    bad = mem.tools().call("recall_memories", {"query": "Trip notes", "as_of": "last March"})
    assert bad["ok"] is False and "as_of" in bad["error"]["message"]


def test_the_cli_recalls_as_of_a_date(mem, db_path):
    mem.close()
    argv = ["--db", str(db_path), "--agent", "alice", "--embedder", "fake", "recall", "Trip notes", "--json"]
    result = CliRunner().invoke(app, [*argv, "--as-of", (START + 5 * DAY).isoformat()])
    assert result.exit_code == 0, result.output
    assert _contents(json.loads(result.stdout)) == [SAILING]
    result = CliRunner().invoke(app, [*argv, "--as-of", "2025-01-15"])
    assert sorted(_contents(json.loads(result.stdout))) == sorted([SAILING, SKIING])
    bad = CliRunner().invoke(app, [*argv, "--as-of", "last March"])
    assert bad.exit_code == 1 and "as_of" in bad.stderr
