"""The archive listed without words (issue 22's dashboard): the latest archived first, a page at a
time; an archived memory read by id with when it was archived; browse shows archived memories on
request, marked, and filters by seed 001's experience types."""

from __future__ import annotations

from datetime import timedelta

import pytest


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
