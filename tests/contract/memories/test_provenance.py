"""Provenance (seed 003): where each memory came from and in which session, kept and filterable."""

from __future__ import annotations

import pytest

from hippo.core.memory import MemoryInput
from hippo.errors import InvalidInput
from support import sql


def test_every_memory_has_a_source_and_recall_filters_by_it(mem):
    mine = mem.store_memory("The deploy runs at noon")
    imported = mem.store_memory("The deploy needs two approvals", source="migration", session_id="import-1")
    said = mem.store_memories([MemoryInput("The deploy was moved to Friday", source="conversation",
                                           session_id="chat-7")])[0]
    facts = mem.remember_facts("My name is Dana.")
    assert (mine.chunk.source, mine.chunk.session_id) == ("agent", None)
    assert (imported.chunk.source, imported.chunk.session_id) == ("migration", "import-1")
    assert mem.get_memory(facts.facts[0].id).source == "extraction"

    def found(**filters) -> set[str]:
        return {h.id for h in mem.recall_memories("deploy", touch=False, **filters)}

    assert found() == {mine.id, imported.id, said.id}
    assert found(source="migration") == {imported.id}
    assert found(source=["agent", "conversation"]) == {mine.id, said.id}
    assert found(session_id="chat-7") == {said.id}
    assert found(source="agent", session_id="chat-7") == set()
    hit = next(h for h in mem.recall_memories("deploy", source="conversation"))
    assert (hit.chunk.source, hit.chunk.session_id) == ("conversation", "chat-7")


def test_the_same_text_again_keeps_where_it_first_came_from(mem):
    first = mem.store_memory("The office wifi is hippo-5g", source="migration", session_id="a")
    again = mem.store_memory("The office wifi is hippo-5g", source="conversation", session_id="b")
    assert again.action == "strengthened" and again.id == first.id
    assert (mem.get_memory(first.id).source, mem.get_memory(first.id).session_id) == ("migration", "a")


@pytest.mark.parametrize("bad", [{"source": "Not A Word"}, {"source": ""}, {"source": 7},
                                 {"session_id": "has space"}, {"session_id": "x" * 200}])
def test_bad_provenance_is_refused_and_changes_nothing(mem, db, bad):
    with pytest.raises(InvalidInput):
        mem.store_memory("Anything at all", **bad)
    assert sql(db, "SELECT count(*) FROM chunks") == [(0,)]
    with pytest.raises(InvalidInput):
        mem.recall_memories("anything", **bad)


def test_export_and_import_keep_feedback_and_provenance(make_mem):
    alice = make_mem("alice")
    chunk_id = alice.store_memory("Backups run nightly", source="migration", session_id="s1").id
    alice.reinforce_memory(chunk_id)
    records = list(alice.export_records())
    bob = make_mem("bob")
    bob.import_records(records)
    (copied,) = [c for c in bob.list_memories().items]
    assert (copied.feedback, copied.source, copied.session_id) == (3, "migration", "s1")
    assert copied.reinforced_at is not None
