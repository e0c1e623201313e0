"""Keyed memories (Memory.put_item & co.): identity by key, update in place, the forget guarantee."""

from __future__ import annotations

import pytest
from support import sql
from traces import FILLER, SECRET, occurrences, scrub, total

from hippo.errors import InvalidInput


def test_a_key_holds_one_memory_and_two_keys_may_hold_the_same_text(mem):
    first = mem.put_item("food", "Alice is vegetarian", {"source": "chat"})
    same_text = mem.put_item("diet", "Alice is vegetarian")
    assert (first.action, same_text.action) == ("inserted", "inserted")
    assert first.chunk.id != same_text.chunk.id
    assert mem.get_item("food").metadata == {"source": "chat", "_item_key": "food"}
    # the text-deduplicated path is apart: the same text stored plainly is a third memory
    assert mem.store_memory("Alice is vegetarian").action == "inserted"
    assert mem.stats().memories == 3


def test_putting_a_key_again_changes_its_memory_in_place(mem, clock):
    first = mem.put_item("food", "Alice is vegetarian", intensity=0.8)
    clock.advance(hours=1)
    again = mem.put_item("food", "Alice eats fish now", {"v": 2})
    assert again.action == "updated" and again.chunk.id == first.chunk.id
    assert again.chunk.content == "Alice eats fish now" and again.chunk.running_intensity == 0.8
    assert again.chunk.metadata == {"v": 2, "_item_key": "food"}
    assert mem.recall_memories("fish", touch=False)[0].id == first.chunk.id
    # the metadata alone may change too, and update_memory keeps the key
    assert mem.put_item("food", "Alice eats fish now").chunk.metadata == {"_item_key": "food"}
    mem.update_memory(first.chunk.id, content="Alice is vegan", metadata={"x": 1})
    assert mem.get_item("food").content == "Alice is vegan"
    assert mem.get_item("food").metadata == {"x": 1, "_item_key": "food"}


def test_an_item_rewritten_or_deleted_leaves_no_trace_in_the_files(mem, db):
    mem.store_memories(FILLER[:5])
    mem.put_item("door", f"The door code is {SECRET}", {"note": SECRET})
    assert total(occurrences(db)) > 0
    mem.put_item("door", "The door code is 4711")
    scrub(mem)
    assert total(occurrences(db)) == 0
    mem.put_item("safe", f"The safe code is {SECRET}")
    gone = mem.delete_item("safe")
    assert gone is not None
    scrub(mem, gone)
    assert mem.get_item("safe") is None and mem.delete_item("safe") is None
    mem.close()
    assert total(occurrences(db)) == 0


def test_items_are_listed_newest_first_and_only_items(mem, clock):
    mem.store_memory("a plain memory")
    for i in range(5):
        clock.advance(seconds=1)
        mem.put_item(f"k{i}", f"item number {i}")
    page = mem.list_items(limit=3)
    assert [c.metadata["_item_key"] for c in page.items] == ["k4", "k3", "k2"]
    rest = mem.list_items(limit=3, cursor=page.next_cursor)
    assert [c.metadata["_item_key"] for c in rest.items] == ["k1", "k0"] and rest.next_cursor is None


@pytest.mark.embedded_only("lists the database's agents (agent_ids is database-wide)")
def test_items_belong_to_one_agent(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.put_item("food", "Alice is vegetarian")
    assert bob.get_item("food") is None and bob.delete_item("food") is None
    bob.put_item("food", "Bob eats everything")
    assert alice.get_item("food").content == "Alice is vegetarian"
    assert alice.agent_ids() == ["alice", "bob"] and alice.agent_ids("b") == ["bob"]


@pytest.mark.parametrize("call", [
    lambda m: m.put_item("", "text"),
    lambda m: m.put_item(3, "text"),
    lambda m: m.put_item("k" * 1025, "text"),
    lambda m: m.put_item("k\x00", "text"),
    lambda m: m.put_item("k", "   "),
    lambda m: m.put_item("k", "text", {"_item_key": "other"}),
    lambda m: m.put_item("k", "text", {"bad key": 1}),
    lambda m: m.put_item("k", "text", intensity=2),
    lambda m: m.get_item(None),
    pytest.param(lambda m: m.agent_ids(5),
                 marks=pytest.mark.embedded_only("agent_ids is database-wide: hippo.connect does not offer it")),
])
def test_bad_item_calls_change_nothing(mem, db, call):
    mem.put_item("k", "kept")
    before = sql(db, "SELECT * FROM chunks ORDER BY id")
    with pytest.raises(InvalidInput):
        call(mem)
    assert sql(db, "SELECT * FROM chunks ORDER BY id") == before
