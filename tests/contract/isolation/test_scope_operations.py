"""The operations a caller answering for several agents needs (the mem0-compatible API): which
agent holds an id, facts learned in a session, and a browse filtered by metadata."""

from __future__ import annotations

import pytest

from hippo.errors import InvalidInput


@pytest.mark.embedded_only("agent_of is database-wide: hippo.connect does not offer it")
def test_agent_of_names_the_agent_that_holds_an_id_and_no_other(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    mine = alice.store_memory("Alice keeps bees")
    fact = bob.remember_facts("My name is Bob.").facts[0]
    assert alice.agent_of(mine.id) == bob.agent_of(mine.id) == "alice"
    assert alice.agent_of(fact.id) == "bob"
    assert alice.agent_of("01ARZ3NDEKTSV4RRFFQ69G5FAV") is None  # a well-formed id nobody holds
    with pytest.raises(InvalidInput, match="ULID"):
        alice.agent_of("892db2ae-06d9-49e5-8b3e-585ef9b85b8e")  # mem0's ids are not hippo's
    alice.delete_memory(mine.id)
    assert alice.agent_of(mine.id) is None


def test_facts_learned_in_a_session_are_recalled_by_it(mem):
    first = mem.remember_facts("My name is Dana.", session_id="run-1").facts[0]
    second = mem.remember_facts("I work at Acme.", session_id="run-2").facts[0]
    assert mem.get_memory(first.id).session_id == "run-1"
    assert [h.id for h in mem.recall_memories("Dana Acme", session_id="run-2", touch=False)] == [second.id]
    with pytest.raises(InvalidInput, match="session_id"):
        mem.remember_facts("I like tea.", session_id="no spaces allowed")


def test_a_browse_filters_by_metadata(mem):
    sport = mem.store_memory("Plays tennis on Sundays", {"topic": "sport", "level": 3})
    mem.store_memory("Reads Borges", {"topic": "books", "level": 1})
    assert [c.id for c in mem.browse_memories(metadata={"topic": "sport"}).items] == [sport.id]
    assert [c.id for c in mem.browse_memories(metadata={"level": {"$gte": 2}}).items] == [sport.id]
    assert mem.browse_memories(metadata={"topic": "music"}).items == []
    with pytest.raises(InvalidInput, match="archive"):
        mem.browse_memories(metadata={"topic": "sport"}, archived=True)
