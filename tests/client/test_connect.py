"""``hippo.connect``, the same ``Memory`` over HTTP, and the operations route it speaks: every
operation is offered or named with its reason, results come back as the types the embedded memory
returns, hippo's errors map back, keys reach only their agents, bad input changes nothing.

What each operation does over HTTP is the contract suite's: it runs through ``hippo.connect`` too
(its ``remote`` parameter, tests/conftest.py)."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import subprocess
import sys
from dataclasses import replace
from typing import Any, Iterator

import pytest
from support import sql

import hippo
from hippo.core.memory import OPERATIONS
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
from hippo.client import AsyncRemoteMemory, RemoteMemory, wire  # noqa: E402
from hippo.client.remote import AsyncRemote, Remote  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

A = "/v1/agents/alice/operations"


@pytest.fixture
def served(db_path, clock) -> Iterator[tuple[hippo.Memory, str]]:
    """The memory the server serves (agent ``alice``) and the server's URL."""
    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    with BackgroundServer(base) as url:
        yield base, url


@pytest.fixture
def raw(served) -> Iterator[Any]:
    with httpx.Client(base_url=served[1], timeout=30) as client:
        yield client


def rows(db_path) -> tuple[list[tuple], list[tuple]]:
    return sql(db_path, "SELECT * FROM chunks ORDER BY id"), sql(db_path, "SELECT * FROM memory_blocks ORDER BY key")


def envelope(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]["message"]


# -- the operations -----------------------------------------------------------------------------


def test_every_operation_of_memory_is_offered_or_named_with_its_reason():
    assert set(wire.REMOTE) | set(wire.NOT_REMOTE) == set(OPERATIONS)
    assert not set(wire.REMOTE) & set(wire.NOT_REMOTE)
    assert all(len(reason) > 20 for reason in wire.NOT_REMOTE.values())
    for name in wire.REMOTE:
        assert isinstance(vars(RemoteMemory)[name], Remote), name
        expected = inspect.signature(getattr(hippo.Memory, name).method)  # the capability's method
        expected = expected.replace(parameters=list(expected.parameters.values())[1:])  # without self
        client = RemoteMemory("http://127.0.0.1:9", agent_id="alice")
        assert inspect.signature(getattr(client, name)) == expected, name
        assert getattr(client, name).__doc__ == getattr(hippo.Memory, name).__doc__
        asynchronous = vars(AsyncRemoteMemory)[name]
        assert isinstance(asynchronous, AsyncRemote) or inspect.iscoroutinefunction(asynchronous), name
    for name in wire.NOT_REMOTE:
        assert not hasattr(RemoteMemory, name) and not hasattr(AsyncRemoteMemory, name), name


def test_results_come_back_as_the_types_the_embedded_memory_returns(served, clock):
    base, url = served
    mem = hippo.connect(url, agent_id="alice")
    stored = mem.store_memory("We chose SQLite for the prototype", {"tags": ["db"]}, observed_at=clock())
    assert isinstance(stored, hippo.StoreResult) and stored.chunk == base.get_memory(stored.id)
    assert stored.chunk.created_at == clock() and stored.chunk.observed_at == clock()
    fact = mem.remember_facts("I live in Berlin.").facts[0]
    mem.record_experience("decision", "We ship on Fridays", importance=0.9, context={"user_id": "kris"})
    mem.append_memory_block("human", "Name: Kris")
    mem.put_item("k", "A keyed memory")
    # Reads that change nothing answer what the embedded memory answers, type for type.
    for name, args in [("get_memory", (stored.id,)), ("fact_history", (fact.id,)), ("memory_blocks", ()),
                       ("memory_block", ("human",)), ("memory_block", ("nothing",)), ("get_item", ("k",)),
                       ("browse_memories", ()), ("list_memories", ()), ("memory_summary", ()), ("related", (fact.id,)),
                       ("recall", ()), ("short_term", ()), ("recall_related", ()), ("context", ()),
                       ("has_conversation", ()), ("recall_memory_block", ("human",))]:
        kwargs = {"user_id": "kris"} if name == "recall_related" else {"touch": False} if name == "recall" else {}
        assert getattr(mem, name)(*args, **kwargs) == getattr(base, name)(*args, **kwargs), name
    assert list(mem.export_records()) == list(base.export_records())
    hits = mem.recall_memories("which database did we pick?", touch=False)
    assert hits == base.recall_memories("which database did we pick?", touch=False)
    assert isinstance(hits[0], hippo.Hit) and hits[0].chunk.last_accessed_at.tzinfo is not None
    assert mem.stats() == replace(base.stats(), database=None)  # the server's path is its own
    mem.close()


@pytest.mark.parametrize("name", ["store_memory", "recall_memories", "remember_facts", "browse_memories",
                                  "record_experience", "compact", "fact_history", "memory_summary", "stats",
                                  "put_item", "search_archive", "observe", "surface"])
def test_the_codec_gives_each_result_back_as_it_was(tmp_path, clock, name):
    mem = hippo.open(tmp_path / "m.db", agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    mem.store_memory("We chose SQLite for the prototype")
    talk = [{"role": "user", "content": "I moved to Lisbon last spring.", "id": "m1"}]
    calls = {"store_memory": lambda: mem.store_memory("A note", {"n": 1}, observed_at=clock()),
             "recall_memories": lambda: mem.recall_memories("SQLite"),
             "remember_facts": lambda: mem.remember_facts("I live in Berlin. I like tea."),
             "browse_memories": lambda: mem.browse_memories(), "memory_summary": lambda: mem.memory_summary(),
             "record_experience": lambda: mem.record_experience("error", "The deploy failed", context={"a": 1}),
             "compact": lambda: mem.compact([{"role": "user", "content": "Plan the trip."}] * 3, session_id="s"),
             "fact_history": lambda: mem.fact_history(mem.remember_facts("I like tea.").facts[0].id),
             "stats": lambda: mem.stats(), "put_item": lambda: mem.put_item("k", "v"),
             "search_archive": lambda: mem.search_archive("SQLite"),
             "observe": lambda: mem.observe(talk, session_id="s"), "surface": lambda: mem.surface(talk, session_id="s")}
    result = calls[name]()
    sent = json.loads(json.dumps(wire.encode(result)))
    if hasattr(result, "to_dict"):
        assert sent == result.to_dict()
    assert wire.decode(wire.result_type(name), sent) == result
    mem.close()


def test_a_listing_sends_its_set_of_archived_ids_as_a_list():
    listing = hippo.types.Listing(items=[], archived=frozenset({"b", "a"}))
    assert wire.encode(listing)["archived"] == ["a", "b"] == listing.to_dict()["archived"]
    assert wire.decode(hippo.types.Listing, wire.encode(listing)) == listing


# -- keys and agents ----------------------------------------------------------------------------


def test_a_key_reaches_only_its_agents_through_every_operation(db_path, clock):
    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    alice_key, _ = base.keys.create(["alice"])
    admin_key, _ = base.keys.create([], admin=True)
    bob = base.for_agent("bob")
    bob.store_memory("Bob's private note about his salary")
    bob.append_memory_block("human", "Bob")
    before = rows(db_path)
    with BackgroundServer(base) as url, httpx.Client(base_url=url) as client:
        for name in wire.REMOTE:
            for headers, status in (({"Authorization": f"Bearer {alice_key}"}, 403), ({}, 401)):
                response = client.post(f"/v1/agents/bob/operations/{name}", json={"arguments": {}}, headers=headers)
                envelope(response, status, "forbidden" if status == 403 else "unauthorized")
                assert "salary" not in response.text
        assert rows(db_path) == before
        with pytest.raises(hippo.Forbidden) as refused:
            hippo.connect(url, key=alice_key, agent_id="bob").recall_memories("salary")
        assert refused.value.code == "forbidden"
        with pytest.raises(hippo.Unauthorized) as anonymous:
            hippo.connect(url, agent_id="alice").stats()
        assert anonymous.value.code == "unauthorized"
        alice = hippo.connect(url, key=alice_key, agent_id="alice")
        assert alice.store_memory("Alice's note").action == "inserted"
        with pytest.raises(hippo.Forbidden):
            alice.for_agent("bob").memory_blocks()
        assert alice.stats().database_bytes is None and alice.stats().database is None  # the server's own
        admin = hippo.connect(url, key=admin_key, agent_id="alice").for_agent("bob")
        assert admin.recall_memories("salary")[0].content == "Bob's private note about his salary"
        assert admin.stats().database_bytes > 0
        assert rows(db_path)[1] == before[1]


def test_a_refused_key_has_its_own_error_class_keeping_its_code(db_path, clock):
    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    alice_key, _ = base.keys.create(["alice"])
    before = rows(db_path)
    with BackgroundServer(base) as url:
        refusals = [(hippo.Unauthorized, "unauthorized", None), (hippo.Unauthorized, "unauthorized", "hippo_nope"),
                    (hippo.Forbidden, "forbidden", alice_key)]
        for cls, code, key in refusals:
            with pytest.raises(hippo.HippoError) as refused:
                hippo.connect(url, key=key, agent_id="bob").store_memory("Bob's note")
            assert type(refused.value) is cls and refused.value.code == code, (key, refused.value)
            assert not isinstance(refused.value, hippo.ConfigError)  # nothing is misconfigured on the client

            async def refused_async(key: str | None = key) -> None:
                async with hippo.connect_async(url, key=key, agent_id="bob") as mem:
                    await mem.stats()

            with pytest.raises(cls) as refused_too:
                asyncio.run(refused_async())
            assert refused_too.value.code == code
    assert rows(db_path) == before


def test_the_key_and_agent_come_from_the_environment_as_hippo_open_finds_them(db_path, clock, monkeypatch):
    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    key, _ = base.keys.create(["carol"])
    monkeypatch.setenv("HIPPO_API_KEY", key)
    monkeypatch.setenv("HIPPO_AGENT_ID", "carol")
    with BackgroundServer(base) as url:
        mem = hippo.connect(url)
        assert mem.agent_id == "carol" and mem.store_memory("Carol's note").chunk.agent_id == "carol"


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, body, status, code", [
    ("store_memory", {"arguments": {"content": "x", "colour": "red"}}, 422, "invalid_request"),
    ("store_memory", {"arguments": {}}, 422, "invalid_request"),
    ("store_memory", {"arguments": {"content": 5}}, 400, "invalid_input"),
    ("store_memory", {"arguments": {"content": "x", "observed_at": "yesterday-ish"}}, 400, "invalid_input"),
    ("store_memory", {"arguments": {"content": "x"}, "extra": 1}, 422, "invalid_request"),
    ("store_memories", {"arguments": {"items": [{"content": "x", "colour": "red"}]}}, 400, "invalid_input"),
    ("store_memories", {"arguments": {"items": [{"metadata": {}}]}}, 400, "invalid_input"),
    ("reembed", {"arguments": {"progress": None}}, 422, "invalid_request"),
    ("set_memory_block", {"arguments": {"key": "bad key", "value": "x"}}, 400, "invalid_input"),
    ("no_such_operation", {"arguments": {}}, 404, "not_found"),
    ("maintain", {"arguments": {}}, 404, "not_found"),
    ("import_from", {"arguments": {"path": "/etc/passwd", "format": "markdown"}}, 404, "not_found"),
    ("__init__", {"arguments": {}}, 404, "not_found"),
])
def test_bad_requests_get_the_envelope_and_change_nothing(served, raw, db_path, name, body, status, code):
    served[0].store_memory("Already there")
    before = rows(db_path)
    envelope(raw.post(f"{A}/{name}", json=body), status, code)
    assert rows(db_path) == before


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"k": 1}
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize("call", [
    lambda m: m.store_memory(b"bytes"),
    lambda m: m.store_memory("x", {"tags": {"a", "b"}}),
    lambda m: m.store_memory("x", intensity=float("nan")),
    lambda m: m.store_memory("x", {1: "a number as a key"}),
    lambda m: m.store_memory("x", nested(5_000)),
    lambda m: m.store_memory("x", {"when": object()}),
    lambda m: m.reembed(progress=lambda done, total: None),
], ids=["bytes", "set", "nan", "int-key", "deep", "object", "progress"])
def test_what_json_cannot_carry_is_refused_before_it_is_sent(served, db_path, call):
    mem = hippo.connect(served[1], agent_id="alice")
    before = rows(db_path)
    with pytest.raises(hippo.InvalidInput):
        call(mem)
    assert rows(db_path) == before


def test_a_wrong_argument_is_a_type_error_as_in_process(served):
    mem = hippo.connect(served[1], agent_id="alice")
    with pytest.raises(TypeError):
        mem.store_memory("x", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        mem.get_memory()  # type: ignore[call-arg]


# -- errors -------------------------------------------------------------------------------------


def test_hippos_errors_come_back_typed(served):
    mem = hippo.connect(served[1], agent_id="alice")
    with pytest.raises(hippo.NotFound) as missing:
        mem.get_memory("01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert missing.value.code == "not_found" and "01ARZ3NDEKTSV4RRFFQ69G5FAV" in missing.value.message
    with pytest.raises(hippo.BlockNotFound):
        mem.replace_memory_block("persona", "old", "new")
    mem.set_memory_block("persona", "I am terse", char_limit=20)
    with pytest.raises(hippo.TextNotFound):
        mem.replace_memory_block("persona", "verbose", "short")
    with pytest.raises(hippo.LimitExceeded) as over:
        mem.append_memory_block("persona", "and I say a great deal more")
    assert isinstance(over.value, hippo.Conflict) and over.value.code == "limit_exceeded"
    with pytest.raises(hippo.InvalidInput):
        mem.get_memory("not an id")
    with pytest.raises(hippo.InvalidInput):
        hippo.connect(served[1], agent_id="not an agent id").stats()  # the server's path check


def test_a_provider_failure_on_the_server_is_a_provider_error(db_path, clock):
    down = FakeEmbedder(fail=True)
    with BackgroundServer(hippo.open(db_path, agent_id="alice", embedder=down, clock=clock)) as url:
        mem = hippo.connect(url, agent_id="alice")
        mem.store_memory("Stored while the embedder is down")
        with pytest.raises(hippo.ProviderError):
            mem.reembed()
        down.fail = False
        assert mem.reembed().embedded == 1


def test_an_unreachable_server_is_a_storage_error():
    with socket.socket() as probe:  # a loopback port nobody listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(hippo.StorageError) as down:
        hippo.connect(url, agent_id="alice").stats()
    assert url in down.value.message


@pytest.mark.parametrize("status, body, cls, code", [
    (404, {"error": {"code": "block_not_found", "message": "no block"}}, hippo.BlockNotFound, "block_not_found"),
    (503, {"error": {"code": "provider_error", "message": "down"}}, hippo.ProviderError, "provider_error"),
    (503, {"error": {"code": "missing_dependency", "message": "install it"}}, hippo.MissingDependency,
     "missing_dependency"),
    (413, {"error": {"code": "too_large", "message": "too big"}}, hippo.InvalidInput, "too_large"),
    (401, {"error": {"code": "unauthorized", "message": "a key"}}, hippo.Unauthorized, "unauthorized"),
    (403, {"error": {"code": "forbidden", "message": "not yours"}}, hippo.Forbidden, "forbidden"),
    (500, {"error": {"code": "internal", "message": "internal server error"}}, hippo.HippoError, "internal"),
    (502, "<html>Bad Gateway</html>", hippo.HippoError, "http_502"),
])
def test_an_error_envelope_is_read_back_as_its_class(status, body, cls, code):
    found = wire.error_from(status, body)
    assert type(found) is cls and found.code == code and found.message


# -- async, the document, what loads -------------------------------------------------------------


def test_the_async_client_has_the_same_operations_and_errors(served):
    async def run() -> None:
        async with hippo.connect_async(served[1], agent_id="alice") as mem:
            stored = await mem.store_memory("We chose SQLite")
            assert (await mem.get_memory(stored.id)) == served[0].get_memory(stored.id)
            records = await mem.export_records()
            assert isinstance(records, list) and records == list(served[0].export_records())
            with pytest.raises(hippo.BlockNotFound):
                await mem.replace_memory_block("persona", "a", "b")
            bob = mem.for_agent("bob")
            assert (await bob.store_memory("Bob's")).chunk.agent_id == "bob"
            assert [h.content for h in await mem.recall_memories("Bob")] == []

    asyncio.run(run())


def test_the_route_is_in_the_openapi_document_with_every_name(raw):
    document = raw.get("/openapi.json").json()
    route = document["paths"]["/v1/agents/{agent_id}/operations/{name}"]["post"]
    name = next(p for p in route["parameters"] if p["name"] == "name")
    assert name["schema"]["enum"] == list(wire.REMOTE)
    assert all(f"`{n}`" in name["description"] for n in wire.NOT_REMOTE)
    assert route["tags"] == ["operations"] and [t["name"] for t in document["tags"]][-1] == "operations"


def test_the_client_loads_no_web_framework(tmp_path):
    code = ("import sys, hippo\nmem = hippo.connect('http://127.0.0.1:9', agent_id='a')\n"
            "print([m for m in ('fastapi', 'starlette', 'uvicorn', 'onnxruntime') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.strip() == "[]"
