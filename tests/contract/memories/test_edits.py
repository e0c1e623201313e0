"""update_memory (text changed in place, the old text gone from the files) and delete_all (one agent)."""

from __future__ import annotations

import pytest
from support import sql
from traces import FILLER, SECRET, occurrences, scrub, total

from hippo.errors import Conflict, InvalidInput, NotFound


def test_update_content_keeps_the_id_and_strength_and_leaves_no_trace(mem, db, clock):
    mem.store_memories(FILLER[:5])
    old = mem.store_memory(f"The door code is {SECRET}", intensity=0.8, metadata={"tags": ["home"]})
    assert mem.recall_memories(SECRET)[0].id == old.id
    assert total(occurrences(db)) > 0
    before = mem.get_memory(old.id)  # the recall above strengthened it
    clock.advance(hours=2)

    updated = mem.update_memory(old.id, content="The door code changed to 4711")

    assert updated.id == old.id and updated.content == "The door code changed to 4711"
    assert updated.running_intensity == before.running_intensity and updated.metadata == {"tags": ["home"]}
    assert updated.last_accessed_at == clock() and updated.has_vector
    scrub(mem)
    assert total(occurrences(db)) == 0  # the old text is in no file, the index included
    assert mem.recall_memories(SECRET, touch=False).hits == []
    hit = mem.recall_memories("door code 4711", touch=False)[0]
    assert hit.id == old.id and hit.keyword is not None and hit.similarity is not None
    assert mem.store_memory("The door code changed to 4711").action == "strengthened"  # rehashed
    mem.close()
    assert total(occurrences(db)) == 0


def test_update_metadata_alone_and_both_at_once(mem):
    chunk = mem.store_memory("Lisbon trip in May")
    assert mem.update_memory(chunk.id, metadata={"trip": "lisbon"}).metadata == {"trip": "lisbon"}
    both = mem.update_memory(chunk.id, content="Lisbon trip moved to June", metadata={"trip": "lisbon", "v": 2})
    assert (both.content, both.metadata) == ("Lisbon trip moved to June", {"trip": "lisbon", "v": 2})


def test_bad_updates_change_nothing(mem, db):
    chunk = mem.store_memory("Lisbon trip in May")
    other = mem.store_memory("Porto trip in July")
    before = sql(db, "SELECT * FROM chunks ORDER BY id")
    with pytest.raises(InvalidInput):
        mem.update_memory(chunk.id)
    with pytest.raises(InvalidInput):
        mem.update_memory(chunk.id, content="   ")
    with pytest.raises(InvalidInput):
        mem.update_memory(chunk.id, content="fine", metadata={"bad": object()})
    with pytest.raises(Conflict, match=other.id):
        mem.update_memory(chunk.id, content="Porto trip in July")
    with pytest.raises(NotFound):
        mem.update_memory("01J00000000000000000000000", content="x")
    assert sql(db, "SELECT * FROM chunks ORDER BY id") == before


def test_another_agent_cannot_update(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    chunk = alice.store_memory("Alice's secret plan")
    with pytest.raises(NotFound):
        bob.update_memory(chunk.id, content="hijacked")
    assert alice.get_memory(chunk.id).content == "Alice's secret plan"


def test_delete_all_erases_one_agent_and_only_that_agent(make_mem, db):
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.store_memories([f"{SECRET} note {i}" for i in range(5)])
    alice.remember_facts("I live in Lisbon.")
    alice.set_memory_block("persona", f"knows {SECRET}")
    bob.store_memories(FILLER[:3])
    bob.set_memory_block("persona", "Bob's assistant")

    erased = alice.delete_all()

    assert (erased.agent_id, erased.memories, erased.facts, erased.blocks) == ("alice", 5, 1, 1)
    scrub(alice, erased)
    assert total(occurrences(db)) == 0
    assert alice.stats().memories == alice.stats().facts == alice.stats().blocks == 0
    assert bob.stats().memories == 3 and bob.recall_memory_block("persona") == "Bob's assistant"
    assert len(bob.recall_memories("tomatoes", touch=False)) == 3
    assert alice.delete_all().memories == 0  # nothing left: a no-op, not an error
    alice.store_memory("a fresh start")
    assert alice.stats().memories == 1
