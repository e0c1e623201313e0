"""What mem0's calls reach on hippo: a read or delete_all by part of a scope reaches every scope
it matches, as mem0's payload filters do; reset and delete_all remove only what the mem0 API
stored, never an agent (or a memory) of hippo's own API whose name looks like the mem0 API's; a
mem0 configuration is taken as mem0's users have it. Sync and async, SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import warnings

import pytest

import hippo
from hippo.compat.mem0 import Memory
from hippo.errors import InvalidInput


def texts(result: dict) -> set[str]:
    return {item["memory"] for item in result["results"]}


def native_counts(db: str, embedder, *agents: str) -> dict[str, int]:
    with hippo.open(db, embedder=embedder) as base:
        return {agent: base.for_agent(agent).stats().memories for agent in agents}


def test_reset_leaves_hippos_own_agents_whose_names_look_like_mem0s(open_mem0, db, embedder):
    with hippo.open(db, agent_id="agent:planner", embedder=embedder) as planner:
        planner.store_memory("Plan the sprint on Mondays")
        planner.for_agent("user:carol").store_memory("Carol's own note, through hippo")
        planner.for_agent("runs").store_memory("A native agent called runs")
    m = open_mem0()
    m.add("Keeps bees", user_id="bob", infer=False)
    m.add("Planner note from mem0", agent_id="planner", infer=False)
    m.add("Carol likes jazz", user_id="carol", infer=False)
    m.add("A run's note", run_id="r9", infer=False)
    assert m.reset() is None
    assert native_counts(db, embedder, "agent:planner", "user:carol", "runs", "user:bob") == \
        {"agent:planner": 1, "user:carol": 1, "runs": 1, "user:bob": 0}
    with hippo.open(db, agent_id="agent:planner", embedder=embedder) as planner:
        assert [c.content for c in planner.list_memories().items] == ["Plan the sprint on Mondays"]
    assert m.get_all(user_id="carol")["results"][0]["memory"] == "Carol's own note, through hippo"
    assert texts(m.get_all(user_id="bob")) == set() and texts(m.get_all(run_id="r9")) == set()


def test_delete_all_by_user_erases_every_scope_of_that_user_and_only_what_mem0_stored(open_mem0, db, embedder,
                                                                                      caplog):
    m = open_mem0()
    m.add("Alice alone", user_id="alice", infer=False)
    m.add("Alice with the bot", user_id="alice", agent_id="bot", infer=False)
    m.add("Alice in a run", user_id="alice", agent_id="bot", run_id="r1", infer=False)
    m.add("Alice with the scheduler", user_id="alice", agent_id="scheduler", infer=False)
    m.add("Bob with the bot", user_id="bob", agent_id="bot", infer=False)
    m.add("The bot alone", agent_id="bot", infer=False)
    with hippo.open(db, agent_id="user:alice:agent:bot", embedder=embedder) as native:
        native.store_memory("Stored through hippo's own API")
    everything = {"Alice alone", "Alice with the bot", "Alice in a run", "Alice with the scheduler",
                  "Stored through hippo's own API"}
    assert texts(m.get_all(user_id="alice")) == everything
    found = texts(m.search("Alice bot scheduler run", user_id="alice", limit=10))
    assert everything - {"Stored through hippo's own API"} <= found <= everything
    assert texts(m.get_all(agent_id="bot")) == {"Alice with the bot", "Alice in a run", "Bob with the bot",
                                               "The bot alone", "Stored through hippo's own API"}
    with caplog.at_level(logging.INFO, logger="hippo.compat.mem0"):
        assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert "removed 4 memories" in caplog.text and "user:alice:agent:bot (2)" in caplog.text
    assert texts(m.get_all(user_id="alice")) == {"Stored through hippo's own API"}
    assert texts(m.get_all(agent_id="bot")) == {"Bob with the bot", "The bot alone", "Stored through hippo's own API"}


def test_delete_all_by_agent_reaches_every_user_of_that_agent(open_mem0):
    m = open_mem0()
    m.add("Alice with the bot", user_id="alice", agent_id="bot", infer=False)
    m.add("Bob with the bot", user_id="bob", agent_id="bot", infer=False)
    m.add("Bob alone", user_id="bob", infer=False)
    m.add("Another bot", user_id="bob", agent_id="bot2", infer=False)
    m.delete_all(agent_id="bot")
    assert texts(m.get_all(user_id="bob")) == {"Bob alone", "Another bot"}
    assert texts(m.get_all(user_id="alice")) == set()


def test_a_mem0_configuration_is_taken_as_its_users_have_it(tmp_path):
    config = {
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "mem0", "path": "/tmp/qdrant"}},
        "embedder": {"provider": "huggingface", "config": {"model": "sentence-transformers/all-MiniLM-L6-v2",
                                                         "model_kwargs": {"device": "cpu"}}},
        "history_db_path": str(tmp_path / "history.db"),
        "version": "v1.1",
        "db": str(tmp_path / "m.db"),
    }
    with pytest.warns(UserWarning) as warned:
        m = Memory.from_config(config)
    [warning] = [w for w in warned if "hippo.compat.mem0" in str(w.message)]
    for name in ("vector_store", "history_db_path", "version", "embedder.config.model_kwargs"):
        assert name in str(warning.message)
    with m:
        assert m.memory.embedding.embedder.model_id.lower().endswith("all-minilm-l6-v2")
        assert m.add("Keeps bees", user_id="bob", infer=False)["results"][0]["event"] == "ADD"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out: no warning
        Memory.from_config({"db": str(tmp_path / "n.db"), "embedder": "fake"}).close()


@pytest.mark.parametrize("config, match", [
    ({"custom_fact_extraction_prompt": "Extract only names"}, "custom extraction prompt"),
    ({"custom_instructions": "Only food"}, "custom extraction instructions"),
    ({"reranker": {"provider": "cohere"}}, "reranker"),
    ({"embedder": {"provider": "huggingface", "config": {"model": "BAAI/bge-large-en"}}}, "bge-large-en"),
    ({"embedder": {"provider": "huggingface"}}, "name the model"),
    ({"llm": {"provider": "gemini", "config": {"model": "x"}}}, "provider 'gemini'"),
])
def test_what_would_change_results_silently_is_refused(tmp_path, config, match):
    with pytest.raises(InvalidInput, match=match):
        Memory.from_config({"db": str(tmp_path / "m.db"), **config})
    assert not (tmp_path / "m.db").exists()
