"""Merged wordings and split_fact through the agent tools and over HTTP (a real server on loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import hippo

A = "/v1/agents/default"


@pytest.fixture
def base(db_path, clock, local_embedder) -> Iterator[hippo.Memory]:
    """The served memory (the ``api`` fixture's) with the real MiniLM and the released defaults."""
    with hippo.open(db_path, agent_id="default", embedder=local_embedder, clock=clock) as mem:
        yield mem


def test_the_tools_show_a_merge_and_split_it_back(base):
    tools = base.tools()
    first = tools.call("remember_facts", {"text": "My daughter is named Mia."})["facts"][0]
    again = tools.call("remember_facts", {"text": "I have a daughter called Mia."})["facts"][0]
    assert again["action"] == "duplicate" and again["id"] == first["id"] and again["matched"] == first["fact"]

    split = tools.call("split_fact", {"id": again["id"], "wording": again["fact"]})
    assert split["ok"] is not False and split["fact"] == again["fact"] and split["split_from"] == first["id"]
    assert base.get_memory(split["id"]).kind == "fact"

    refused = tools.call("split_fact", {"id": again["id"], "wording": again["fact"]})
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_input"
    missing = tools.call("split_fact", {"id": "01J0000000000000000000000Z", "wording": "x"})
    assert missing["ok"] is False and missing["error"]["code"] == "not_found"


def test_http_history_and_split(api):
    first = api.post(f"{A}/facts", json={"text": "My daughter is named Mia."}).json()["facts"][0]
    again = api.post(f"{A}/facts", json={"text": "I have a daughter called Mia."}).json()["facts"][0]
    assert again["action"] == "duplicate" and again["id"] == first["id"]

    history = api.get(f"{A}/facts/{first['id']}/history").json()
    assert [(m["fact_id"], m["content"]) for m in history["merged"]] == [(first["id"], again["fact"])]
    assert history["merged"][0]["similarity"] == pytest.approx(again["similarity"])

    made = api.post(f"{A}/facts/{first['id']}/split", json={"wording": again["fact"]})
    assert made.status_code == 201, made.text
    assert made.json()["content"] == again["fact"] and made.json()["kind"] == "fact"
    assert api.get(f"{A}/facts/{first['id']}/history").json()["merged"] == []
    assert api.get(f"{A}/memories/{made.json()['id']}").json()["content"] == again["fact"]

    again_split = api.post(f"{A}/facts/{first['id']}/split", json={"wording": again["fact"]})
    assert again_split.status_code == 400 and again_split.json()["error"]["code"] == "invalid_input"
    unknown = api.post(f"{A}/facts/01J0000000000000000000000Z/split", json={"wording": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    empty = api.post(f"{A}/facts/{first['id']}/split", json={"wording": ""})
    assert empty.status_code in (400, 422)
    assert api.get(f"{A}/facts/not-an-id/history").status_code in (400, 404, 422)
