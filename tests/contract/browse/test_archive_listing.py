"""The archive listed without words (issue 22's dashboard): the latest archived first, a page at a
time; an archived memory read by id with when it was archived; browse shows archived memories on
request, marked, and filters by seed 001's experience types."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hippo.errors import InvalidInput, NotFound

pytestmark = pytest.mark.embedded_only("archives through the store (archiving is maintain's, database-wide)")


@pytest.fixture
def archived(make_mem, clock):
    """Five notes of alice archived one day apart (the first archived first), one live, and bob's."""
    mem = make_mem("alice")
    notes = [mem.store_memory(f"Archived note {i} about the heron").id for i in range(5)]
    mem.store_memory("A live note about the pond")
    bob = mem.for_agent("bob")
    bobs = bob.store_memory("Bob's archived secret: the vault code is 4711").id
    for chunk_id in notes:
        clock.advance(days=1)
        mem.store.archive_chunks("alice", [chunk_id], clock())
    mem.store.archive_chunks("bob", [bobs], clock())
    return mem, notes, bobs


def test_the_archive_is_listed_latest_archived_first_a_page_at_a_time(archived, clock):
    mem, notes, bobs = archived
    first = mem.store.list_archived("alice", limit=2)
    assert [a.id for a in first] == [notes[4], notes[3]]
    assert first[0].archived_at == clock() and first[1].archived_at == clock() - timedelta(days=1)
    assert not first[0].chunk.has_vector and first[0].chunk.content == "Archived note 4 about the heron"
    last = first[-1]
    rest = mem.store.list_archived("alice", limit=10, before=(last.archived_at, last.id))
    assert [a.id for a in rest] == [notes[2], notes[1], notes[0]]
    assert [a.id for a in mem.store.list_archived("alice", limit=10, ids=[notes[1], bobs])] == [notes[1]]
    assert mem.store.list_archived("alice", limit=10, ids=[]) == []
    assert [a.id for a in mem.store.list_archived("bob", limit=10)] == [bobs]


def test_archived_in_the_same_instant_page_by_id(make_mem, clock):
    mem = make_mem("alice")
    notes = [mem.store_memory(f"Note {i} of one pruning run").id for i in range(3)]
    mem.store.archive_chunks("alice", notes, clock())
    first = mem.store.list_archived("alice", limit=2)
    assert [a.id for a in first] == [notes[2], notes[1]]
    assert [a.id for a in mem.store.list_archived("alice", limit=2, before=(first[-1].archived_at, first[-1].id))] \
        == [notes[0]]


def test_an_archived_memory_is_read_by_id_with_when_it_was_archived(archived, clock):
    mem, notes, bobs = archived
    got = mem.get_archived(notes[0])
    assert got.chunk.content == "Archived note 0 about the heron" and got.archived_at == clock() - timedelta(days=4)
    with pytest.raises(NotFound):
        mem.get_archived(bobs)  # another agent's archive
    with pytest.raises(NotFound):
        mem.get_memory(notes[0])  # not live
    restored = mem.restore_memory(notes[0])
    assert restored.id == notes[0] and mem.get_memory(notes[0]).content == "Archived note 0 about the heron"
    with pytest.raises(NotFound):
        mem.get_archived(notes[0])


def test_browse_lists_the_archive_on_request_without_words(archived):
    mem, notes, bobs = archived
    plain = mem.browse_memories()
    assert plain.archived == frozenset() and not set(notes) & {c.id for c in plain.items}
    shown = mem.browse_memories(archived=True)
    live = plain.items[0].id
    assert [c.id for c in shown.items] == [live, *reversed(notes)]  # sorted with the live ones, newest first
    assert shown.archived == frozenset(notes) and shown.complete and bobs not in {c.id for c in shown.items}
    page = mem.browse_memories(archived=True, limit=2, offset=2)
    assert [c.id for c in page.items] == [notes[3], notes[2]] and page.next_offset == 4 and page.matched == 6
    with pytest.raises(InvalidInput, match="deep"):
        mem.browse_memories(archived=True, offset=19_990, limit=20)
    windowed = mem.browse_memories(archived=True, scan=3)
    assert windowed.archived == frozenset(notes[2:]) and not windowed.complete  # the latest archived 3 of 5
    both = mem.browse_memories(archived=True, archived_matching="heron", scan=2)
    assert set(notes[3:]) <= both.archived <= set(notes) and len(both.items) == len(both.archived) + 1
    assert len({c.id for c in both.items}) == len(both.items)  # once each


def test_browse_filters_by_experience_type_and_names_each_experiences_type(make_mem, clock):
    mem = make_mem("alice")
    error = mem.record_experience("error", "The deploy failed on the missing key", importance=0.9).id
    clock.advance(minutes=1)
    insight = mem.record_experience("insight", "Keys belong in the vault", importance=0.9).id
    clock.advance(minutes=1)
    tool = mem.record_experience("tool-use", "Ran the linter over the repo", importance=0.9).id
    mem.consolidate()
    note = mem.store_memory("A plain note, not an experience").id
    listing = mem.browse_memories()
    assert {c.id for c in listing.items} == {error, insight, tool, note}
    assert listing.types == {error: "error", insight: "insight", tool: "tool-use"}
    assert [c.id for c in mem.browse_memories(types="error").items] == [error]
    assert [c.id for c in mem.browse_memories(types=["insight", "tool_use"]).items] == [tool, insight]
    assert mem.browse_memories(types="chat").items == []
    mem.store.archive_chunks("alice", [error], clock())
    assert [c.id for c in mem.browse_memories(types="error").items] == []
    kept = mem.browse_memories(types="error", archived=True)
    assert [c.id for c in kept.items] == [error] and kept.archived == {error} and kept.types == {error: "error"}
    with pytest.raises(InvalidInput):
        mem.browse_memories(types="dream")
