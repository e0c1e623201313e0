"""mem0's API on hippo, its behaviour: scopes (a user never sees another's memories, a run's stay
in the run), learning with infer=True (new, superseding, known), update, delete, history, reset,
filters, errors. Sync and async, on SQLite and PostgreSQL (conftest)."""

from __future__ import annotations

import inspect
import json

import pytest

import hippo
from hippo.compat.mem0 import AsyncMemory, Memory, MemoryNotFound
from hippo.errors import ConfigError, InvalidInput, NotFound
from hippo.providers.fake import FakeLLM


def facts(*texts: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.6} for text in texts]})


def decisions(*labels: str) -> str:
    return json.dumps({"decisions": [{"pair": n, "label": label} for n, label in enumerate(labels, start=1)]})


def texts(result: dict) -> set[str]:
    return {item["memory"] for item in result["results"]}


def test_a_user_never_sees_another_users_memories(open_mem0, db):
    m = open_mem0()
    m.add("Likes tennis", user_id="alice", infer=False)
    m.add("My name is Alice.", user_id="alice")
    bob = m.add("Keeps bees", user_id="bob", infer=False)["results"][0]
    m.add("Keeps goats", user_id="alice", agent_id="farm-bot", infer=False)
    # As in mem0, user_id alone reaches the user's memories with every agent.
    assert texts(m.get_all(user_id="alice")) == {"Likes tennis", "User's name is Alice", "Keeps goats"}
    assert texts(m.get_all(filters={"user_id": "bob"})) == {"Keeps bees"}
    assert texts(m.search("bees goats tennis", user_id="alice")) \
        <= {"Likes tennis", "User's name is Alice", "Keeps goats"}
    assert texts(m.search("bees", filters={"user_id": "alice"})).isdisjoint({"Keeps bees"})
    # An (user, agent) pair names that pair's memories only; agent_id alone, every user's with that agent.
    assert texts(m.get_all(user_id="alice", agent_id="farm-bot")) == {"Keeps goats"}
    assert texts(m.get_all(agent_id="farm-bot")) == {"Keeps goats"}
    assert m.get(bob["id"])["user_id"] == "bob"  # by id, as in mem0
    # The same memories are hippo's agents: user:<id>, user:<id>:agent:<id>.
    with hippo.open(db, agent_id="user:bob", embedder="fake") as native:
        assert [c.content for c in native.list_memories().items] == ["Keeps bees"]
        assert native.agent_ids("user:") == ["user:alice", "user:alice:agent:farm-bot", "user:bob"]


def test_a_runs_memories_stay_in_the_run(open_mem0):
    m = open_mem0()
    m.add("Booked the flight to Oslo", user_id="alice", run_id="trip-1", infer=False)
    m.add("Booked the hotel in Lima", user_id="alice", run_id="trip-2", infer=False)
    m.add("Prefers window seats", user_id="alice", infer=False)
    m.add("Run without user: the Oslo flight", run_id="trip-1", infer=False)
    assert texts(m.search("booked flight hotel", user_id="alice", run_id="trip-1")) == {"Booked the flight to Oslo"}
    assert texts(m.get_all(filters={"user_id": "alice", "run_id": "trip-2"})) == {"Booked the hotel in Lima"}
    assert len(m.get_all(user_id="alice")["results"]) == 3  # the user's scope holds every run
    only = m.get_all(run_id="trip-1")["results"]  # a run alone: that run's memories, whoever they were for
    assert sorted((r["memory"], r["run_id"]) for r in only) == [("Booked the flight to Oslo", "trip-1"),
                                                               ("Run without user: the Oslo flight", "trip-1")]
    m.delete_all(user_id="alice", run_id="trip-1")
    assert texts(m.get_all(user_id="alice")) == {"Booked the hotel in Lima", "Prefers window seats"}
    assert texts(m.get_all(run_id="trip-1")) == {"Run without user: the Oslo flight"}


def test_ids_hippo_cannot_name_an_agent_with_are_kept_apart(open_mem0, db):
    m = open_mem0()
    m.add("Slash user", user_id="team/a", infer=False)
    m.add("Colon user", user_id="team:a", run_id="run#1", infer=False)
    m.add("Number user", user_id=42, infer=False)
    m.add("Long user", user_id="u" * 200, infer=False)
    assert texts(m.get_all(user_id="team/a")) == {"Slash user"}
    colon = m.get_all(user_id="team:a", run_id="run#1")["results"]
    assert [(r["memory"], r["user_id"], r["run_id"]) for r in colon] == [("Colon user", "team:a", "run#1")]
    assert m.get_all(user_id="42")["results"][0]["user_id"] == "42"  # a number is its text, as in mem0
    assert texts(m.get_all(user_id="u" * 200)) == {"Long user"}
    with hippo.open(db, agent_id="user:42", embedder="fake") as native:
        agents = native.agent_ids("user:")
    assert "user:42" in agents and len(agents) == 4 and all(len(a) <= 128 for a in agents)
    for bad in ("two words", " ", ""):
        with pytest.raises(ValueError, match="user_id"):
            m.add("x", user_id=bad)


def test_infer_learns_facts_and_a_new_one_supersedes_the_old(open_mem0):
    llm = FakeLLM(script=[facts("User lives in Berlin"), facts("User lives in Lisbon"), decisions("supersedes"),
                          facts("User lives in Lisbon")])
    m = open_mem0(llm=llm)
    added = m.add([{"role": "user", "content": "I live in Berlin."},
                   {"role": "assistant", "content": "Noted, Berlin."}], user_id="alice")["results"]
    assert [(r["memory"], r["event"]) for r in added] == [("User lives in Berlin", "ADD")]
    assert "Noted, Berlin." not in llm.calls[0]["messages"][0].content  # the user's turns are what is learned
    moved = m.add("I moved to Lisbon.", user_id="alice")["results"]
    assert moved == [{"id": moved[0]["id"], "memory": "User lives in Lisbon", "event": "UPDATE",
                      "previous_memory": "User lives in Berlin"}]
    assert texts(m.search("where does alice live?", user_id="alice")) == {"User lives in Lisbon"}
    assert texts(m.get_all(user_id="alice")) == {"User lives in Lisbon"}
    again = m.add("I live in Lisbon.", user_id="alice")["results"]
    assert again == [{"id": moved[0]["id"], "memory": "User lives in Lisbon", "event": "NONE"}]
    history = m.history(moved[0]["id"])
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "User lives in Berlin"), ("UPDATE", "User lives in Berlin", "User lives in Lisbon")]
    assert history[0]["memory_id"] == added[0]["id"] and history[1]["memory_id"] == moved[0]["id"]
    assert m.history(added[0]["id"]) == history  # from any version of the fact
    assert m.add([{"role": "assistant", "content": "Hello!"}], user_id="alice") == {"results": []}


def test_update_changes_in_place_and_history_says_when(open_mem0, clock):
    m = open_mem0()
    first = m.add("Likes tennis", user_id="alice", infer=False, metadata={"topic": "sport"})["results"][0]
    clock.advance(hours=1)
    assert m.update(first["id"], "Likes tennis on weekends") == {"message": "Memory updated successfully!"}
    clock.advance(hours=1)
    m.update(first["id"], metadata={"level": 3, "user_id": "mallory"})  # ids are the call's, never metadata's
    got = m.get(first["id"])
    assert got["memory"] == "Likes tennis on weekends" and got["metadata"] == {"topic": "sport", "level": 3}
    assert got["user_id"] == "alice" and got["updated_at"] > got["created_at"]
    history = m.history(first["id"])
    assert [(h["event"], h["new_memory"]) for h in history] == [
        ("ADD", None), ("UPDATE", None), ("UPDATE", "Likes tennis on weekends")]
    assert texts(m.search("tennis weekends", user_id="alice")) == {"Likes tennis on weekends"}
    with pytest.raises(InvalidInput, match="At least one"):
        m.update(first["id"])


def test_delete_forgets_and_missing_ids_are_value_errors(open_mem0):
    m = open_mem0()
    kept = m.add("Keeps bees", user_id="bob", infer=False)["results"][0]
    gone = m.add("Keeps goats", user_id="bob", infer=False)["results"][0]
    assert m.delete(gone["id"]) == {"message": "Memory deleted successfully!"}
    assert m.get(gone["id"]) is None and m.history(gone["id"]) == []
    assert texts(m.get_all(user_id="bob")) == {"Keeps bees"}
    for call in (lambda: m.delete(gone["id"]), lambda: m.update(gone["id"], "x")):
        with pytest.raises(MemoryNotFound) as raised:
            call()
        assert isinstance(raised.value, ValueError) and isinstance(raised.value, NotFound)
    with pytest.raises(InvalidInput, match="ULID"):
        m.get("892db2ae-06d9-49e5-8b3e-585ef9b85b8e")
    assert m.get(kept["id"])["memory"] == "Keeps bees"


def test_delete_all_and_reset_reach_only_what_they_name(open_mem0, db, embedder):
    m = open_mem0()
    m.add("Keeps bees", user_id="bob", infer=False)
    m.add("Keeps goats", user_id="alice", infer=False)
    m.add("Helper note", agent_id="helper", infer=False)
    with hippo.open(db, agent_id="hooks", embedder=embedder) as other:
        other.store_memory("Not mem0's")
    assert m.delete_all(user_id="bob") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="bob")["results"] == [] and texts(m.get_all(user_id="alice")) == {"Keeps goats"}
    with pytest.raises(ValueError, match="reset"):
        m.delete_all()
    assert m.reset() is None
    assert m.get_all(user_id="alice")["results"] == [] and m.get_all(agent_id="helper")["results"] == []
    with hippo.open(db, agent_id="hooks", embedder=embedder) as other:
        assert [c.content for c in other.list_memories().items] == ["Not mem0's"]


def test_filters_limits_and_scopes_that_cannot_work(open_mem0):
    m = open_mem0()
    for n, topic in enumerate(["sport", "sport", "books"]):
        m.add(f"Note {n} about {topic}", user_id="alice", infer=False, metadata={"topic": topic, "level": n})
    assert texts(m.get_all(filters={"user_id": "alice", "topic": "books"})) == {"Note 2 about books"}
    assert texts(m.search("note", filters={"user_id": "alice", "level": {"gte": 1}, "topic": {"$in": ["sport"]}})) \
        == {"Note 1 about sport"}
    assert len(m.get_all(user_id="alice", filters={"topic": "*"})["results"]) == 3
    assert len(m.search("note about", user_id="alice", top_k=2)["results"]) == 2
    assert len(m.get_all(user_id="alice", limit=1)["results"]) == 1
    assert m.search("note", user_id="alice", threshold=1.5)["results"] == []
    for bad, match in [({"topic": {"nin": ["x"]}}, "nin"), ({"OR": []}, "OR"), ({"user_id": "bob"}, "twice")]:
        with pytest.raises(InvalidInput, match=match):
            m.search("note", user_id="alice", filters=bad)
    for call in (lambda: m.search("note"), lambda: m.get_all(), lambda: m.add("x")):
        with pytest.raises(ValueError, match="user_id"):
            call()
    with pytest.raises(InvalidInput, match="procedural"):
        m.add("x", user_id="alice", memory_type="procedural_memory")
    with pytest.raises(InvalidInput, match="hippo's own"):
        m.add("x", user_id="alice", metadata={"_mem0_edits": []})


def test_async_memory_has_every_method_as_a_coroutine_of_the_same_signature():
    sync, later = Memory(":memory:", embedder="fake"), AsyncMemory(":memory:", embedder="fake")
    public = [name for name in vars(Memory) if not name.startswith("_") and callable(getattr(Memory, name))]
    assert len(public) >= 10
    for name in set(public) - {"from_config", "close"}:
        assert inspect.iscoroutinefunction(getattr(later, name)), name
        assert inspect.signature(getattr(later, name)) == inspect.signature(getattr(sync, name)), name
    sync.close()
    later.close()


def test_configuration_and_databases_that_cannot_work(tmp_path):
    with Memory.from_config({"db": str(tmp_path / "m.db"), "embedder": "fake"}) as m:
        assert m.add("Keeps bees", user_id="bob", infer=False)["results"][0]["event"] == "ADD"
    with pytest.raises(InvalidInput, match="provider 'gemini'"):
        Memory.from_config({"llm": {"provider": "gemini", "config": {"model": "x"}}})
    with pytest.raises(ConfigError, match="one database"):
        Memory(str(tmp_path / "agents" / "{agent_id}.db"), embedder="fake")


@pytest.mark.model
def test_the_readme_shows_the_one_line_switch_and_it_runs(tmp_path, monkeypatch, capsys):
    """The README's section: mem0's import changed, then mem0's calls, on the real local model."""
    pytest.importorskip("onnxruntime")
    import re
    import runpy
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "hippo.compat.mem0" in b]
    assert block.startswith("from hippo.compat.mem0 import Memory  # was: from mem0 import Memory\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "switch.py").write_text(block, encoding="utf-8")
    runpy.run_path(str(tmp_path / "switch.py"), run_name="__main__")
    assert capsys.readouterr().out.splitlines() == ["UPDATE", "User lives in Lisbon now"]


def test_async_memory_in_an_event_loop(tmp_path):
    import asyncio

    async def session() -> list[str]:
        async with AsyncMemory(str(tmp_path / "m.db"), embedder="fake") as m:
            await asyncio.gather(*(m.add(f"Keeps {animal}", user_id="bob", infer=False)
                                   for animal in ("bees", "goats", "hens")))
            return sorted(texts(await m.get_all(user_id="bob")))

    assert asyncio.run(session()) == ["Keeps bees", "Keeps goats", "Keeps hens"]
