"""HippoStore, hippo as a LangGraph BaseStore: the same answers as LangGraph's own InMemoryStore
for the key/value contract, hippo's recall for queries, and a real graph run that uses it.

langgraph ships no conformance suite for stores (only for checkpointers), so the contract is
checked differentially: one script of operations against InMemoryStore and against HippoStore.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition  # noqa: E402
from langgraph.store.base import BaseStore, InvalidNamespaceError  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

import hippo  # noqa: E402
from hippo.integrations.langgraph import HippoStore  # noqa: E402

SECRET = "Zyzzogeton-Quibblefrump"


def _traces(path) -> int:
    """Occurrences of the secret's words in the raw bytes of the database, its WAL and shared memory."""
    data = b"".join(p.read_bytes() for p in (path, path.with_name(path.name + "-wal"),
                                              path.with_name(path.name + "-shm")) if p.exists())
    return sum(data.count(w) for w in (b"Zyzzogeton", b"zyzzogeton", b"Quibblefrump", b"quibblefrump"))


ITEMS = [
    (("users", "alice", "prefs"), "food", {"text": "vegetarian", "level": 3, "meta": {"src": "chat"}}),
    (("users", "alice", "prefs"), "music", {"text": "jazz", "level": 1}),
    (("users", "alice", "facts"), "city", {"text": "Lisbon", "level": 2}),
    (("users", "bob", "prefs"), "food", {"text": "vegetarian", "level": 5}),
    (("teams", "core"), "lead", {"text": "Dana", "tags": ["x", "y"]}),
]


@pytest.fixture
def stores(tmp_path, embedder):
    ours = HippoStore(hippo.open(tmp_path / "lg.db", embedder=embedder))
    theirs = InMemoryStore()
    for store in (ours, theirs):
        for namespace, key, value in ITEMS:
            store.put(namespace, key, value)
    yield ours, theirs
    ours.memory.close()


def _triples(items: list) -> list[tuple]:
    return sorted((tuple(i.namespace), i.key, repr(i.value)) for i in items)


@pytest.mark.parametrize("prefix, filter, offset, limit", [
    (("users",), None, 0, 10),
    (("users", "alice"), None, 0, 10),
    (("user",), None, 0, 10),  # a label is matched whole: "user" is no prefix of "users"
    (("users",), {"text": "vegetarian"}, 0, 10),
    (("users",), {"level": {"$gte": 2}}, 0, 10),
    (("users",), {"level": {"$gt": 1, "$lt": 5}}, 0, 10),
    (("users",), {"level": {"$ne": 3}}, 0, 10),
    (("users",), {"meta": {"src": "chat"}}, 0, 10),
    (("teams",), {"tags": ["x", "y"]}, 0, 10),
    (("users",), {"missing": 1}, 0, 10),
    (("users",), None, 1, 2),
])
def test_search_without_query_matches_in_memory_store(stores, prefix, filter, offset, limit):
    ours, theirs = stores
    got = ours.search(prefix, filter=filter, offset=offset, limit=limit)
    want = theirs.search(prefix, filter=filter, offset=offset, limit=limit)
    assert len(got) == len(want)
    if offset == 0 and limit >= 10:  # pages differ only in order: ours is newest first, as PostgresStore
        assert _triples(got) == _triples(want)
    assert all(item.score is None for item in got)


@pytest.mark.parametrize("kwargs", [
    {}, {"prefix": ("users",)}, {"suffix": ("prefs",)}, {"prefix": ("users", "*", "prefs")},
    {"max_depth": 1}, {"max_depth": 2, "prefix": ("users",)}, {"limit": 2, "offset": 1},
])
def test_list_namespaces_matches_in_memory_store(stores, kwargs):
    ours, theirs = stores
    assert ours.list_namespaces(**kwargs) == theirs.list_namespaces(**kwargs)


def test_get_put_delete_match_in_memory_store(stores):
    ours, theirs = stores
    for store in (ours, theirs):
        store.put(("users", "alice", "prefs"), "music", {"text": "blues"})
        store.delete(("users", "bob", "prefs"), "food")
    for namespace, key, _ in ITEMS:
        a, b = ours.get(namespace, key), theirs.get(namespace, key)
        assert (a is None) == (b is None)
        if a is not None:
            assert (a.value, a.key, a.namespace) == (b.value, b.key, b.namespace)
            assert a.created_at <= a.updated_at
    assert ours.get(("users", "nobody"), "food") is None


def test_a_put_again_keeps_the_memory_and_its_creation_time(stores, clock):
    ours, _ = stores
    before = ours.get(("users", "alice", "prefs"), "food")
    clock.advance(hours=1)
    ours.put(("users", "alice", "prefs"), "food", {"text": "pescatarian"})
    after = ours.get(("users", "alice", "prefs"), "food")
    assert after.created_at == before.created_at and after.updated_at > before.updated_at
    assert ours.memory.for_agent("users.alice.prefs").stats().memories == 2


def test_namespaces_that_cannot_name_an_agent_are_refused(stores):
    ours, _ = stores
    for namespace in [("a b",), ("-x",), ("x" * 200,), ("ünïcode",)]:
        with pytest.raises(InvalidNamespaceError):
            ours.put(namespace, "k", {"text": "v"})
    with pytest.raises(InvalidNamespaceError):  # LangGraph's own rule, checked before us
        ours.put(("a.b",), "k", {"text": "v"})


@pytest.fixture
def local_store(tmp_path, local_embedder):
    store = HippoStore(hippo.open(tmp_path / "lg.db", embedder=local_embedder))
    yield store
    store.memory.close()


def test_query_search_is_hippo_recall_by_meaning(local_store):
    ns = ("users", "alice")
    local_store.put(ns, "diet", {"text": "Alice does not eat meat or fish"})
    local_store.put(ns, "pet", {"text": "Alice has a cat called Tom"})
    local_store.put(ns, "work", {"text": "Alice works as a nurse in Porto"})
    local_store.put(ns, "quiet", {"text": "Alice is vegetarian"}, index=False)
    local_store.put(("users", "bob"), "diet", {"text": "Bob is vegetarian"})
    hits = local_store.search(ns, query="what food does she avoid?")
    assert hits[0].key == "diet" and hits[0].score is not None
    assert "quiet" not in [h.key for h in hits]  # index=False: kept, never found by a query
    everyone = local_store.search(("users",), query="vegetarian")  # across the agents under the prefix
    assert (everyone[0].namespace, everyone[0].key) == (("users", "bob"), "diet")
    assert ("users", "alice") in {h.namespace for h in everyone} and "quiet" not in [h.key for h in everyone]
    assert local_store.search(ns, query="her cat", limit=1)[0].key == "pet"
    not_the_cat = local_store.search(ns, query="her cat", filter={"text": {"$ne": "Alice has a cat called Tom"}})
    assert not_the_cat and "pet" not in [h.key for h in not_the_cat]
    # the hit counted as a retrieval: it is hippo's memory of the agent users.alice
    memory = local_store.memory.for_agent("users.alice")
    assert memory.get_item("pet").access_count >= 1
    assert memory.recall_memories("nurse")[0].chunk.content == "Alice works as a nurse in Porto"


def test_index_fields_choose_the_text(local_store):
    local_store.index_fields = ["summary"]
    local_store.put(("docs",), "a", {"summary": "Quarterly revenue grew", "body": "zebra zebra zebra"})
    local_store.put(("docs",), "b", {"summary": "zebra migration", "body": "finance"}, index=["body"])
    assert local_store.search(("docs",), query="zebra migration") == []  # in neither indexed text
    assert local_store.search(("docs",), query="finance")[0].key == "b"
    assert local_store.search(("docs",), query="revenue growth")[0].key == "a"
    assert local_store.memory.for_agent("docs").get_item("a").content == "Quarterly revenue grew"
    assert local_store.memory.for_agent("docs").get_item("b").content == "finance"


def test_delete_leaves_no_trace_in_the_files(tmp_path, embedder):
    path = tmp_path / "lg.db"
    store = HippoStore(hippo.open(path, embedder=embedder))
    store.put(("users", "alice"), "door", {"text": f"the door code is {SECRET}"})
    store.put(("users", "alice"), "other", {"text": "tomatoes need sun"})
    assert _traces(path) > 0
    store.delete(("users", "alice"), "door")
    assert _traces(path) == 0 and store.get(("users", "alice"), "door") is None
    store.memory.close()


def test_async_operations(stores):
    ours, theirs = stores

    async def run(store: BaseStore) -> tuple:
        await store.aput(("users", "carol"), "k", {"text": "hello"})
        got = await store.aget(("users", "carol"), "k")
        found = await store.asearch(("users", "carol"))
        await store.adelete(("users", "carol"), "k")
        return got.value, [i.key for i in found], await store.aget(("users", "carol"), "k")

    assert asyncio.run(run(ours)) == asyncio.run(run(theirs)) == ({"text": "hello"}, ["k"], None)


# -- inside a LangGraph graph, with a scripted model -------------------------------------------


@tool
def save_memory(text: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a fact about the user."""
    store.put(("users", config["configurable"]["user_id"]), str(uuid.uuid4()), {"text": text})
    return "saved"


@tool
def search_memory(query: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Search what is known about the user."""
    hits = store.search(("users", config["configurable"]["user_id"]), query=query, limit=2)
    return "\n".join(h.value["text"] for h in hits) or "nothing"


def _graph(store: BaseStore, script: list[AIMessage]) -> Any:
    """model -> tools -> model ..., where the model is a script of messages (no LLM reachable here)."""
    replies = iter(script)

    def model(state: MessagesState) -> dict:
        return {"messages": [next(replies)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([save_memory, search_memory]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(store=store)


def _call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}"}])


def test_a_graph_remembers_across_runs_through_hippo(local_store):
    config = {"configurable": {"user_id": "u1"}}
    first = _graph(local_store, [_call("save_memory", text="I am allergic to peanuts"), AIMessage("Noted.")])
    first.invoke({"messages": [("user", "Remember: I am allergic to peanuts")]}, config)
    other = _graph(local_store, [_call("save_memory", text="I love peanut butter"), AIMessage("Noted.")])
    other.invoke({"messages": [("user", "I love peanut butter")]}, {"configurable": {"user_id": "u2"}})

    second = _graph(local_store, [_call("search_memory", query="food allergies"), AIMessage("Avoid peanuts.")])
    out = second.invoke({"messages": [("user", "What should I not eat?")]}, config)
    tool_reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert tool_reply.content == "I am allergic to peanuts"  # u1's memory, not u2's
    # the same memory is hippo's, for its tools, API and CLI
    assert local_store.memory.for_agent("users.u1").recall_memories("peanuts")[0].chunk.content == \
        "I am allergic to peanuts"
